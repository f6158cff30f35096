"""The chi-squared distribution (``jax.scipy.stats.chi2``): gamma with shape ``df / 2``
and scale 2.

>>> from funcgrad.scipy.stats import chi2
>>> round(float(chi2.pdf(1.0, 2.0)), 6)
0.303265
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats import gamma as _gamma
from funcgrad.scipy.stats._util import args, const


def _shape(x: Any, df: Any, loc: Any, scale: Any) -> list[Any]:
    x, df, loc, scale = args(x, df, loc, scale)
    return [x, df * 0.5, loc, scale * 2.0]


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x``.

    >>> round(float(logpdf(1.0, 2.0)), 6)
    -1.193147
    """
    return _gamma.logpdf(*_shape(x, df, loc, scale))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> round(float(pdf(1.0, 2.0)), 6)
    0.303265
    """
    return _gamma.pdf(*_shape(x, df, loc, scale))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> round(float(cdf(2.0, 2.0)), 6)
    0.632121
    """
    return _gamma.cdf(*_shape(x, df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(2.0, 2.0)), 6)
    -0.458675
    """
    return _gamma.logcdf(*_shape(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> round(float(sf(2.0, 2.0)), 6)
    0.367879
    """
    x, df, loc, scale = args(x, df, loc, scale)
    two = const(scale, 2.0)  # JAX's constants: the result is strongly typed
    y = jnp.clip((x - loc) / (scale * two), const(x, 0.0), const(x, np.inf))
    return special.gammaincc(df / two, y)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(2.0, 2.0)), 6)
    -1.0
    """
    return jnp.log(sf(x, df, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
