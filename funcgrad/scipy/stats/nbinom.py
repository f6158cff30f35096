"""The negative binomial distribution (``jax.scipy.stats.nbinom``): failures before the
``n``-th success.

>>> from funcgrad.scipy.stats import nbinom
>>> float(nbinom.pmf(0, 1, 0.5))
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact
from funcgrad.scipy.stats._util import const


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``log P(X = k)`` (-inf below ``loc``).

    >>> round(float(logpmf(1, 1, 0.5)), 6)
    -1.386294
    """
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1.0)  # JAX's constant: the result is strongly typed
    y = k - loc
    comb = special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + one)
    linear = special.xlogy(n, p) + special.xlogy(y, one - p)
    return jnp.where(k < loc, -np.inf, comb + linear)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    """``P(X = k)``.

    >>> float(pmf(1, 1, 0.5))
    0.25
    """
    return jnp.exp(logpmf(k, n, p, loc))


__all__ = ["logpmf", "pmf"]
