"""The multinomial distribution (``jax.scipy.stats.multinomial``): counts ``x`` over the
last axis from ``n`` draws with probabilities ``p``.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.stats import multinomial
>>> float(multinomial.pmf(jnp.array([1, 1]), 2, jnp.array([0.5, 0.5])))
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact, promote_args_numeric


def logpmf(x: Any, n: Any, p: Any) -> Any:
    """``log P(X = x)``; ``x`` and ``n`` must be integers (-inf unless the counts sum
    to ``n``).

    >>> round(float(logpmf(jnp.array([2, 0]), 2, jnp.array([0.5, 0.5]))), 6)
    -1.386294
    """
    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                         f"n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    val = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1),
                                           axis=-1)
    # JAX totals every count of a batch, not each row, before comparing with n; kept so
    # the results agree.
    return jnp.where(jnp.equal(jnp.sum(x), n), val, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Any:
    """``P(X = x)``.

    >>> float(pmf(jnp.array([1, 0]), 2, jnp.array([0.5, 0.5])))
    0.0
    """
    return jnp.exp(logpmf(x, n, p))


__all__ = ["logpmf", "pmf"]
