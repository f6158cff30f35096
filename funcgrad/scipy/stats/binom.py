"""The binomial distribution (``jax.scipy.stats.binom``).

>>> from funcgrad.scipy.stats import binom
>>> round(float(binom.pmf(1, 2, 0.5)), 6)
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log P(X = k)`` for ``n`` trials of success probability ``p`` (-inf off
    ``[loc, loc + n]``).

    >>> round(float(logpmf(0, 2, 0.5)), 6)
    -1.386294
    """
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb = special.gammaln(n + 1) - (special.gammaln(y + 1) + special.gammaln(n - y + 1))
    linear = special.xlogy(y, p) + special.xlog1py(n - y, -p)
    val = comb + linear
    # Exactly 0 where the outcome is certain (n == 0, or p at 0 or 1 on the matching
    # end), where the gammaln terms would otherwise leave rounding behind.
    certain = ((y == 0) & (n == 0)) | (linear == 0)
    val = jnp.where(certain, 0.0, val)
    return jnp.where((k >= loc) & (k < loc + n + 1), val, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``P(X = k)``.

    >>> round(float(pmf(2, 2, 0.5)), 6)
    0.25
    """
    return jnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
