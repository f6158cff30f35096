"""The normal distribution truncated to ``[a, b]`` in standard units
(``jax.scipy.stats.truncnorm``).

>>> from funcgrad.scipy.stats import truncnorm
>>> round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 4)
0.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats import norm
from funcgrad.scipy.stats._args import promote_args_inexact


def _log_diff(x: Any, y: Any) -> Any:
    """``log(exp(x) - exp(y))`` without overflow."""
    return special.logsumexp(jnp.stack([x, y]),
                             b=jnp.stack([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a: Any, b: Any) -> Any:
    """``log(ndtr(b) - ndtr(a))``, accurate in both tails and near mass 1."""
    a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    # The lower tail is the accurate one: mirror an upper-tail interval into it.
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(special.log_ndtr(b_tail), special.log_ndtr(a_tail))
    # Around mass 1 the difference of logs cancels; subtracting both tails from 1 does not.
    mass_central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (-inf outside the interval, NaN for ``a >= b``).

    >>> round(float(logpdf(0.0, -1.0, 1.0)), 4)
    -0.5372
    """
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    z = (x - loc) / scale
    val = jnp.where((z < a) | (z > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(2.0, -1.0, 1.0))
    0.0
    """
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X <= x)``.

    >>> round(float(logcdf(0.0, -1.0, 1.0)), 6)
    -0.693147
    """
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    lgm_ab = _log_gauss_mass(a, b)
    log_cdf = _log_gauss_mass(a, x) - lgm_ab
    log_sf = _log_gauss_mass(x, b) - lgm_ab
    # Near 1 the CDF is better had from the survival function (SciPy's choice).
    log_cdf = jnp.select([x >= b, x <= a, log_cdf > -0.1, x > a],
                         [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
    return jnp.where(a >= b, np.nan, log_cdf)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(1.0, -1.0, 1.0))
    1.0
    """
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``log P(X > x)``.

    >>> round(float(logsf(0.0, -1.0, 1.0)), 6)
    -0.693147
    """
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X > x)``.

    >>> float(sf(-1.0, -1.0, 1.0))
    1.0
    """
    return jnp.exp(logsf(x, a, b, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
