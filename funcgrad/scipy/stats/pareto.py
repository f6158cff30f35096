"""The Pareto distribution with shape ``b`` (``jax.scipy.stats.pareto``).

>>> from funcgrad.scipy.stats import pareto
>>> float(pareto.cdf(2.0, 1.0))
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._args import promote_args_inexact
from funcgrad.scipy.stats._util import const


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (-inf below ``loc + scale``).

    >>> round(float(logpdf(2.0, 1.0)), 6)
    -1.386294
    """
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    val = -(jnp.log(scale / b) + (b + const(x, 1.0)) * jnp.log(y))  # JAX's constant
    return jnp.where(x < loc + scale, -np.inf, val)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(2.0, 1.0))
    0.25
    """
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.5, 1.0))
    0.0
    """
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    y = (x - loc) / scale
    return jnp.where(x < loc + scale, const(x, 0.0), const(x, 1.0) - y ** -b)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(2.0, 1.0)), 6)
    -0.693147
    """
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    y = (x - loc) / scale
    return jnp.where(x < loc + scale, -np.inf, jnp.log1p(-(y ** -b)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(4.0, 1.0))
    0.25
    """
    return jnp.exp(logsf(x, b, loc, scale))


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(2.0, 1.0)), 6)
    -0.693147
    """
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    return jnp.where(x < loc + scale, const(x, 0.0), -(b * jnp.log(y)))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (NaN for ``q`` outside [0, 1]).

    >>> float(ppf(0.5, 1.0))
    2.0
    """
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = const(q, 1.0)  # JAX's constant: the result is strongly typed
    val = loc + scale * (one - q) ** -(one / b)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, val)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
