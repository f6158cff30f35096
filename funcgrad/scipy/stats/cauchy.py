"""The Cauchy distribution (``jax.scipy.stats.cauchy``).

>>> from funcgrad.scipy.stats import cauchy
>>> float(cauchy.cdf(0.0))
0.5
"""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x``.

    >>> round(float(logpdf(0.0)), 6)
    -1.14473
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    return -jnp.log1p(z * z) - const(x, math.log(math.pi)) - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> round(float(pdf(0.0)), 6)
    0.31831
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    return const(x, 0.5) + jnp.arctan((x - loc) / scale) / const(x, math.pi)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(0.0)), 6)
    -0.693147
    """
    return jnp.log(cdf(x, loc, scale))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.0)), 6)
    -0.693147
    """
    return jnp.log(sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function.

    >>> float(ppf(0.5))
    0.0
    """
    q, loc, scale = args(q, loc, scale)
    # tan(pi q - pi/2) rounds as JAX's does (tan(pi (q - 1/2)) differs in the last bits,
    # and in sign near the poles at q = 0, 1, ...).
    unscaled = jnp.tan(const(q, math.pi) * q - const(q, math.pi / 2))
    return unscaled * scale + loc


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`.

    >>> float(isf(0.5))
    0.0
    """
    q, loc, scale = args(q, loc, scale)
    unscaled = jnp.tan(const(q, math.pi / 2) - const(q, math.pi) * q)
    return unscaled * scale + loc


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
