"""The generalized normal distribution with shape ``beta`` (``jax.scipy.stats.gennorm``):
density proportional to ``exp(-|x| ** beta)``.

>>> from funcgrad.scipy.stats import gennorm
>>> float(gennorm.cdf(0.0, 2.0))
0.5
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact


def logpdf(x: Any, beta: Any) -> Any:
    """Log density at ``x``.

    >>> round(float(logpdf(0.0, 1.0)), 6)
    -0.693147
    """
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x: Any, beta: Any) -> Any:
    """Density at ``x``.

    >>> float(pdf(0.0, 1.0))
    0.5
    """
    return jnp.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Any:
    """``P(X <= x)``.

    >>> round(float(cdf(1.0, 1.0)), 6)
    0.81606
    """
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + jnp.sign(x) * special.gammainc(1 / beta, jnp.abs(x) ** beta))


__all__ = ["cdf", "logpdf", "pdf"]
