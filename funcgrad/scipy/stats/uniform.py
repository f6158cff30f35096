"""The uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``).

>>> from funcgrad.scipy.stats import uniform
>>> float(uniform.pdf(0.5))
1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._util import args, const


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density at ``x`` (-inf outside the interval).

    >>> float(logpdf(2.0))
    -inf
    """
    x, loc, scale = args(x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return jnp.where(inside, -jnp.log(scale), const(x, -np.inf))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Density at ``x``.

    >>> float(pdf(0.25))
    1.0
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """``P(X <= x)``.

    >>> float(cdf(0.25))
    0.25
    """
    x, loc, scale = args(x, loc, scale)
    # JAX's select with strongly typed 0 and 1 (0 where no case holds: NaN in, 0 out).
    zero, one = jnp.array(0, x.dtype), jnp.array(1, x.dtype)
    conds = [x < loc, x > loc + scale, (x >= loc) & (x <= loc + scale)]
    return jnp.select(conds, [zero, one, (x - loc) / scale])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (NaN outside [0, 1]).

    >>> float(ppf(0.25))
    0.25
    """
    q, loc, scale = args(q, loc, scale)
    return jnp.where((q >= 0) & (q <= 1), loc + q * scale, const(q, np.nan))


__all__ = ["cdf", "logpdf", "pdf", "ppf"]
