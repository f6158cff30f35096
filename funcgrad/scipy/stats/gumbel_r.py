"""The right-skewed Gumbel distribution (``jax.scipy.stats.gumbel_r``): the maximum
extreme value distribution.

>>> from funcgrad.scipy.stats import gumbel_r
>>> round(float(gumbel_r.cdf(0.0)), 6)
0.367879
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import nn
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (NaN for ``scale <= 0``).

    >>> float(logpdf(0.0))
    -1.0
    """
    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    z = (x - loc) / scale
    val = special.xlogy(-1, scale) + -(z + jnp.exp(-z))
    return jnp.where(scale > 0, val, np.nan)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> round(float(pdf(0.0)), 6)
    0.367879
    """
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> float(logcdf(0.0))
    -1.0
    """
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, -jnp.exp(-z), np.nan)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> round(float(cdf(1.0)), 6)
    0.692201
    """
    return jnp.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (NaN unless ``0 < p < 1``).

    >>> round(float(ppf(0.5)), 6)
    0.366513
    """
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    val = loc - scale * jnp.log(special.xlogy(-1, p))
    return jnp.where((p > 0) & (p < 1), val, np.nan)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> round(float(sf(0.0)), 6)
    0.632121
    """
    x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
    val = 1 - jnp.exp(-jnp.exp((loc - x) / scale))
    return jnp.where(scale > 0, val, np.nan)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.0)), 6)
    -0.458675
    """
    x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    val = nn.log1mexp(jnp.exp((loc - x) / scale))
    return jnp.where(scale > 0, val, np.nan)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
