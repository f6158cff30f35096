"""The exponential distribution (``jax.scipy.stats.expon``).

>>> from funcgrad.scipy.stats import expon
>>> float(expon.pdf(0.0))
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (-inf below ``loc``).

    >>> float(logpdf(1.0))
    -1.0
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, const(x, -np.inf), -z - jnp.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(-1.0))
    0.0
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.0))
    0.0
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, const(x, 0.0), -jnp.expm1(-z))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> float(logcdf(-1.0))
    -inf
    """
    return jnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(0.0))
    1.0
    """
    return jnp.exp(logsf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> float(logsf(2.0))
    -2.0
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(z < 0, const(x, 0.0), -z)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function.

    >>> float(ppf(0.0))
    0.0
    """
    q, loc, scale = args(q, loc, scale)
    return -jnp.log1p(-q) * scale + loc


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
