"""The geometric distribution on 1, 2, ... (``jax.scipy.stats.geom``).

>>> from funcgrad.scipy.stats import geom
>>> float(geom.pmf(2, 0.5))
0.25
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import promote_args_inexact
from funcgrad.scipy.stats._util import const


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``log P(X = k)``: the first success on trial ``k - loc`` (-inf for ``k <= loc``).

    >>> round(float(logpmf(1, 0.5)), 6)
    -0.693147
    """
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    val = special.xlog1py(x - const(k, 1.0), -p) + jnp.log(p)  # JAX's constant
    return jnp.where(x <= 0, -np.inf, val)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``P(X = k)``.

    >>> float(pmf(0, 0.5))
    0.0
    """
    return jnp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]
