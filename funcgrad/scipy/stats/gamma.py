"""The gamma distribution with shape ``a`` (``jax.scipy.stats.gamma``).

>>> from funcgrad.scipy.stats import gamma
>>> round(float(gamma.pdf(1.0, 1.0)), 6)
0.367879
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (-inf below ``loc``).

    >>> float(logpdf(1.0, 1.0))
    -1.0
    """
    x, a, loc, scale = args(x, a, loc, scale)
    y = (x - loc) / scale
    safe_y = jnp.where(y < 0, const(y, 1.0), y)
    val = special.xlogy(a - 1.0, safe_y) - safe_y - special.gammaln(a) - jnp.log(scale)
    return jnp.where(y < 0, const(x, -np.inf), val)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(-1.0, 2.0))
    0.0
    """
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> round(float(cdf(1.0, 1.0)), 6)
    0.632121
    """
    x, a, loc, scale = args(x, a, loc, scale)
    y = jnp.maximum((x - loc) / scale, const(x, 0.0))
    return special.gammainc(a, y)


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(1.0, 1.0)), 6)
    -0.458675
    """
    return jnp.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> round(float(sf(1.0, 1.0)), 6)
    0.367879
    """
    x, a, loc, scale = args(x, a, loc, scale)
    y = (x - loc) / scale
    # As JAX: the constant only in the comparison, a Python 1 as the fill.
    return jnp.where(y < const(y, 0.0), 1, special.gammaincc(a, jnp.maximum(y, 0.0)))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(1.0, 1.0)), 6)
    -1.0
    """
    return jnp.log(sf(x, a, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
