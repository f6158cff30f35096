"""Student's t distribution (``jax.scipy.stats.t``).

>>> from funcgrad.scipy.stats import t
>>> round(float(t.pdf(0.0, 1.0)), 6)
0.31831
"""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` with ``df`` degrees of freedom.

    >>> round(float(logpdf(0.0, 1.0)), 6)
    -1.14473
    """
    x, df, loc, scale = args(x, df, loc, scale)
    z = (x - loc) / scale
    half = const(x, 0.5)
    return (special.gammaln(half * (df + 1.0)) - special.gammaln(half * df)
            - half * jnp.log(df * const(x, math.pi)) - jnp.log(scale)
            - half * (df + 1.0) * jnp.log1p(z * z / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> round(float(pdf(0.0, 1.0)), 6)
    0.31831
    """
    return jnp.exp(logpdf(x, df, loc, scale))


__all__ = ["logpdf", "pdf"]
