"""The von Mises distribution on the circle with concentration ``kappa``
(``jax.scipy.stats.vonmises``).

>>> from funcgrad.scipy.stats import vonmises
>>> round(float(vonmises.pdf(0.0, 1.0)), 6)
0.34171
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.scipy.stats._args import promote_args_inexact


def logpdf(x: Any, kappa: Any) -> Any:
    """Log density at angle ``x`` (NaN for ``kappa <= 0``).

    >>> round(float(logpdf(0.0, 1.0)), 6)
    -1.073792
    """
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    # The scaled Bessel function keeps large kappa from overflowing I0.
    val = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
    return jnp.where(kappa > 0, val, np.nan)


def pdf(x: Any, kappa: Any) -> Any:
    """Density at angle ``x``.

    >>> float(pdf(0.0, -1.0))
    nan
    """
    return jnp.exp(logpdf(x, kappa))


__all__ = ["logpdf", "pdf"]
