"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``).

>>> from funcgrad.scipy.stats import bernoulli
>>> float(bernoulli.pmf(1, 0.25))
0.25
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import args, const


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log P(X = k)`` (-inf off {0, 1}).

    >>> round(float(logpmf(0, 0.5)), 6)
    -0.693147
    """
    k, p, loc = args(k, p, loc)
    x = k - loc
    val = special.xlogy(x, p) + special.xlog1py(1.0 - x, -p)
    return jnp.where((x == 0) | (x == 1), val, const(p, -np.inf))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``P(X = k)``.

    >>> float(pmf(0, 0.25))
    0.75
    """
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    """``P(X <= k)`` (NaN for p outside [0, 1]).

    >>> float(cdf(0, 0.25))
    0.75
    """
    k, p = args(k, p)
    zero, one = const(k, 0.0), const(k, 1.0)
    out = jnp.where(k < 0, zero, jnp.where(k >= 1, one, one - p))
    return jnp.where((p < 0) | (p > 1), const(p, np.nan), out)


def ppf(q: Any, p: Any) -> Any:
    """The smallest k with ``cdf(k) >= q``.

    >>> float(ppf(0.8, 0.25))
    1.0
    """
    q, p = args(q, p)
    out = jnp.where(q > 1.0 - p, const(q, 1.0), const(q, 0.0))
    bad = (q < 0) | (q > 1) | (p < 0) | (p > 1)
    return jnp.where(bad, const(q, np.nan), out)


__all__ = ["cdf", "logpmf", "pmf", "ppf"]
