"""The Laplace distribution (``jax.scipy.stats.laplace``).

>>> from funcgrad.scipy.stats import laplace
>>> float(laplace.pdf(0.0))
0.5
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x``.

    >>> round(float(logpdf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = args(x, loc, scale)
    return -jnp.abs((x - loc) / scale) - jnp.log(2.0 * scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(0.0))
    0.5
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.0))
    0.5
    """
    x, loc, scale = args(x, loc, scale)
    z = (x - loc) / scale
    half = const(x, 0.5)
    return jnp.where(z <= 0, half * jnp.exp(z), const(x, 1.0) - half * jnp.exp(-z))


__all__ = ["cdf", "logpdf", "pdf"]
