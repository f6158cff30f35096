"""The beta-binomial distribution (``jax.scipy.stats.betabinom``).

>>> from funcgrad.scipy.stats import betabinom
>>> round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 6)
0.333333
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact
from funcgrad.scipy.stats._util import const


def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``log P(X = k)``, ``k`` rounded down (-inf off the support, NaN for ``n < 0`` or
    non-positive ``a``, ``b``).

    >>> round(float(logpmf(0, 2, 1.0, 1.0)), 6)
    -1.098612
    """
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = jnp.floor(k) - loc
    one = const(y, 1.0)  # JAX's constant: the result is strongly typed
    comb = -(jnp.log1p(n) + special.betaln(n - y + one, y + one))
    val = comb + special.betaln(y + a, n - y + b) - special.betaln(a, b)
    val = jnp.where((y == 0) & (n == 0), 0.0, val)
    # JAX's support test compares y (already shifted by loc) with -loc; kept as is so
    # the two agree for every loc.
    off = (y < -loc) | (y > n) | (y + a <= 0)
    val = jnp.where(off, -np.inf, val)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, val)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    """``P(X = k)``.

    >>> round(float(pmf(2, 2, 1.0, 1.0)), 6)
    0.333333
    """
    return jnp.exp(logpmf(k, n, a, b, loc))


__all__ = ["logpmf", "pmf"]
