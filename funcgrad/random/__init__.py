"""JAX's ``jax.random``: counter-based threefry2x32 keys and samplers, bit for bit JAX's.

Keys are data (``PRNGKey``: raw ``uint32[2]``; ``key``: typed, dtype ``key<fry>``);
every sampler is a pure function of its key, so it works under jit, vmap (over keys)
and grad (reparameterised samples).

>>> import funcgrad as jax
>>> key = jax.random.PRNGKey(0)
>>> k1, k2 = jax.random.split(key)
>>> jax.random.uniform(k1, (2,))
Array([0.8423141 , 0.18237865], dtype=float32)
"""

from funcgrad.random._continuous import (
    cauchy,
    exponential,
    gumbel,
    laplace,
    logistic,
    normal,
    truncated_normal,
    uniform,
)
from funcgrad.random._discrete import (
    bernoulli,
    categorical,
    choice,
    permutation,
    rademacher,
    randint,
    shuffle,
)
from funcgrad.random._keys import (
    KeyArray,
    PRNGKey,
    bits,
    clone,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    wrap_key_data,
)

__all__ = [
    "KeyArray", "PRNGKey", "bernoulli", "bits", "categorical", "cauchy", "choice", "clone",
    "exponential", "fold_in", "gumbel", "key", "key_data", "key_impl", "laplace", "logistic",
    "normal", "permutation", "rademacher", "randint", "shuffle", "split", "truncated_normal",
    "uniform", "wrap_key_data",
]
