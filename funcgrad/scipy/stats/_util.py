"""Shared pieces of the distributions: argument promotion and support masks.

>>> from funcgrad.scipy.stats._util import args
>>> [a.dtype.name for a in args(1, 2.0)]
['float32', 'float32']
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.numpy._core import promote_inexact

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def args(*xs: Any) -> list[Any]:
    """The arguments in one inexact dtype, broadcast to one shape."""
    out = promote_inexact(*xs)
    return list(jnp.broadcast_arrays(*out)) if len(out) > 1 else out


def const(x: Any, v: float) -> Any:
    """``v`` in ``x``'s dtype, weakly typed when ``x`` is a weakly typed scalar (JAX's
    ``lax._const``: a constant leaves the weak type of a Python-scalar argument's result
    alone, and makes an array's result strongly typed)."""
    from funcgrad.core import get_aval  # noqa: PLC0415
    from funcgrad.primitives.elementwise import convert_element_type  # noqa: PLC0415

    c = jnp.asarray(v, dtype=x.dtype)
    a = get_aval(x)
    return convert_element_type(c, x.dtype, True) if a.weak_type and a.ndim == 0 else c


def outside(x: Any, mask: Any, fill: float) -> Any:
    """``x`` where ``mask`` is False, ``fill`` where it is True."""
    return jnp.where(mask, const(x, fill), x)


def log_of(p: Any) -> Any:
    return jnp.log(p)


__all__ = ["LOG_SQRT_2PI", "args", "const", "outside", "log_of", "np"]
