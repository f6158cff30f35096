"""The normal distribution (``jax.scipy.stats.norm``).

>>> from funcgrad.scipy.stats import norm
>>> round(float(norm.logpdf(0.0)), 6)
-0.918939
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import LOG_SQRT_2PI, args, const


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density of N(loc, scale**2) at ``x``.

    >>> round(float(logpdf(1.0, 1.0, 1.0)), 6)
    -0.918939
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    return -0.5 * z * z - const(x, LOG_SQRT_2PI) - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> round(float(pdf(0.0)), 6)
    0.398942
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``, accurate in the lower tail.

    >>> round(float(logcdf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = args(x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    return special.ndtr(-(x - loc) / scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = args(x, loc, scale)
    return special.log_ndtr(-(x - loc) / scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (inverse of :func:`cdf`).

    >>> float(ppf(0.5))
    0.0
    """
    # As in JAX, q goes to ndtri unpromoted (so an integer q is ndtri's TypeError) and
    # the result is cast to the default float type, strongly typed.
    return jnp.asarray(special.ndtri(q) * scale + loc, dtype=float)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`.

    >>> float(isf(0.5))
    0.0
    """
    # ppf(1 - q) in q's own dtype, as JAX; a list goes on as it is for ndtri's error.
    return ppf(q if isinstance(q, (list, tuple)) else 1 - q, loc, scale)


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
