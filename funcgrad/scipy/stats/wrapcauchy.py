"""The wrapped Cauchy distribution on [0, 2 pi] (``jax.scipy.stats.wrapcauchy``).

>>> from funcgrad.scipy.stats import wrapcauchy
>>> round(float(wrapcauchy.pdf(0.0, 0.5)), 6)
0.477465
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._args import promote_args_inexact


def logpdf(x: Any, c: Any) -> Any:
    """Log density at angle ``x`` (-inf outside [0, 2 pi], NaN unless ``0 < c < 1``).

    >>> round(float(logpdf(0.0, 0.5)), 6)
    -0.739265
    """
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    val = jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    inside = jnp.where((x >= 0) & (x <= np.pi * 2), val, -np.inf)
    return jnp.where((c > 0) & (c < 1), inside, np.nan)


def pdf(x: Any, c: Any) -> Any:
    """Density at angle ``x``.

    >>> float(pdf(-1.0, 0.5))
    0.0
    """
    return jnp.exp(logpdf(x, c))


__all__ = ["logpdf", "pdf"]
