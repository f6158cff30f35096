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

from funcgrad.random import _key_ops  # noqa: F401 - key arrays under jnp functions
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
from funcgrad.random._counts import binomial, multinomial, poisson
from funcgrad.random._derived import (
    double_sided_maxwell,
    geometric,
    lognormal,
    maxwell,
    pareto,
    rayleigh,
    triangular,
    wald,
    weibull_min,
)
from funcgrad.random._discrete import (
    bernoulli,
    categorical,
    choice,
    permutation,
    rademacher,
    randint,
)
from funcgrad.random._gamma import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    random_gamma_p,
    t,
)
from funcgrad.random._keys import (
    KeyArray,
    PRNGKey,
    bits,
    clone,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from funcgrad.random._matrices import multivariate_normal, orthogonal

__all__ = [
    "KeyArray", "PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical",
    "cauchy", "chisquare", "choice", "clone", "dirichlet", "double_sided_maxwell",
    "exponential", "f", "fold_in", "gamma", "generalized_normal", "geometric", "gumbel",
    "key", "key_data", "key_dtype", "key_impl", "laplace", "loggamma", "logistic",
    "lognormal", "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal",
    "pareto", "permutation", "poisson", "rademacher", "randint", "random_gamma_p",
    "rayleigh", "split", "t", "triangular", "truncated_normal", "uniform", "wald",
    "weibull_min", "wrap_key_data",
]
