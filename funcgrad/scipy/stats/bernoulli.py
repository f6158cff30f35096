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
    val = special.xlogy(x, p) + special.xlog1py(const(x, 1.0) - x, -p)
    # As JAX: -inf outside [0, 1] only (a k in between gets the formula's value).
    return jnp.where((x < const(x, 0.0)) | (x > const(x, 1.0)), -np.inf, val)


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
    # JAX's select: NaN for a NaN k or p as for p outside [0, 1].
    conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one), k < zero,
             (k >= zero) & (k < one), k >= one]
    return jnp.select(conds, [np.nan, zero, one - p, one])


def ppf(q: Any, p: Any) -> Any:
    """The smallest k with ``cdf(k) >= q``.

    >>> float(ppf(0.8, 0.25))
    1.0
    """
    q, p = args(q, p)
    zero, one = const(q, 0.0), const(q, 1.0)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
    return jnp.where(bad, np.nan, jnp.where(q <= one - p, zero, one))


__all__ = ["cdf", "logpmf", "pmf", "ppf"]
