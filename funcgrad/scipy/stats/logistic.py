"""The logistic distribution (``jax.scipy.stats.logistic``).

>>> from funcgrad.scipy.stats import logistic
>>> float(logistic.cdf(0.0))
0.5
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as jnp
from funcgrad import nn
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import args


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x``.

    >>> round(float(logpdf(0.0)), 6)
    -1.386294
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    return -z - 2.0 * nn.softplus(-z) - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(0.0))
    0.25
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    return special.expit((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = args(x, loc, scale)
    return -nn.softplus(-(x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    return special.expit(-(x - loc) / scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = args(x, loc, scale)
    return -nn.softplus((x - loc) / scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function.

    >>> float(ppf(0.5))
    0.0
    """
    q, loc, scale = args(q, loc, scale)
    return special.logit(q) * scale + loc


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse of :func:`sf`.

    >>> float(isf(0.5))
    0.0
    """
    q, loc, scale = args(q, loc, scale)
    return -special.logit(q) * scale + loc


__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
