"""The beta distribution (``jax.scipy.stats.beta``).

>>> from funcgrad.scipy.stats import beta
>>> float(beta.pdf(0.5, 1.0, 1.0))
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (-inf outside [loc, loc + scale]).

    >>> round(float(logpdf(0.5, 2.0, 2.0)), 6)
    0.405465
    """
    x, a, b, loc, scale = args(x, a, b, loc, scale)
    y = (x - loc) / scale
    inside = (y >= 0) & (y <= 1)
    safe = jnp.where(inside, y, const(y, 0.5))
    val = (special.xlogy(a - 1.0, safe) + special.xlog1py(b - 1.0, -safe)
           - special.betaln(a, b) - jnp.log(scale))
    return jnp.where(inside, val, const(x, -np.inf))


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(0.5, 2.0, 2.0))
    1.5
    """
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.5, 2.0, 2.0))
    0.5
    """
    x, a, b, loc, scale = args(x, a, b, loc, scale)
    y = jnp.clip((x - loc) / scale, const(x, 0.0), const(x, 1.0))  # JAX's constants
    return special.betainc(a, b, y)


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(0.5, 2.0, 2.0)), 6)
    -0.693147
    """
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(0.5, 2.0, 2.0))
    0.5
    """
    x, a, b, loc, scale = args(x, a, b, loc, scale)
    y = jnp.clip((x - loc) / scale, const(x, 0.0), const(x, 1.0))  # JAX's constants
    return special.betainc(b, a, 1.0 - y)


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.5, 2.0, 2.0)), 6)
    -0.693147
    """
    return jnp.log(sf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
