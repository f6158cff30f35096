"""The Poisson distribution (``jax.scipy.stats.poisson``).

>>> from funcgrad.scipy.stats import poisson
>>> round(float(poisson.pmf(0, 1.0)), 6)
0.367879
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import args, const


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``log P(X = k)`` (-inf off the non-negative integers).

    >>> float(logpmf(0, 1.0))
    -1.0
    """
    k, mu, loc = args(k, mu, loc)
    x = k - loc
    val = special.xlogy(x, mu) - special.gammaln(x + 1.0) - mu
    ok = (x >= 0) & (x == jnp.round(x))
    return jnp.where(ok, val, -np.inf)  # a Python -inf, as JAX: the weak type stays


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P(X = k)``.

    >>> round(float(pmf(1, 1.0)), 6)
    0.367879
    """
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """``P(X <= k)``.

    >>> round(float(cdf(0, 1.0)), 6)
    0.367879
    """
    k, mu, loc = args(k, mu, loc)
    x = jnp.floor(k - loc)
    return jnp.where(x < 0, const(k, 0.0),
                     special.gammaincc(jnp.maximum(x + 1.0, const(x, 1.0)), mu))


__all__ = ["cdf", "logpmf", "pmf"]
