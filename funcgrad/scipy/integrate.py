"""``jax.scipy.integrate``: the composite trapezoidal rule.

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import integrate
>>> float(integrate.trapezoid(fnp.array([1.0, 2.0, 3.0])))
4.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.numpy._core import is_array, promote_inexact
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._numeric import diff
from funcgrad.numpy._reductions import sum  # noqa: A004
from funcgrad.numpy._shape import expand_dims, moveaxis

__all__ = ["trapezoid"]


def _check(*xs: Any) -> None:
    for pos, x in enumerate(xs):
        if not (is_array(x) or isinstance(x, (np.ndarray, np.generic))
                or dtypes.python_scalar(x)):
            raise TypeError(f"trapezoid requires ndarray or scalar arguments, got {type(x)} "
                            f"at position {pos}.")


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    or spaced by ``dx``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.integrate import trapezoid
    >>> trapezoid(fnp.array([1, 2, 3, 2, 3, 2, 1]), fnp.array([0, 2, 5, 7, 10, 15, 20]))
    Array(43., dtype=float32)
    """
    if x is None:
        _check(y)
        (ya,) = promote_inexact(y)
        d = asarray(dx)
        if get_aval(d).ndim > 0:
            d = expand_dims(d, tuple(range(get_aval(ya).ndim - get_aval(d).ndim)))
            d = moveaxis(d, axis, -1)
    else:
        _check(y, x)
        ya, xa = promote_inexact(y, x)
        d = diff(xa) if get_aval(xa).ndim == 1 else moveaxis(diff(xa, axis=axis), axis, -1)
    ya = moveaxis(ya, axis, -1)
    dshape = get_aval(d).shape
    # A spacing constant along the axis needs no per-interval products (as JAX).
    if len(dshape) == 0 or dshape[-1] == 1:
        step = d if len(dshape) == 0 else d[..., 0]
        return step * (sum(ya, -1) - 0.5 * (ya[..., 0] + ya[..., -1]))
    return 0.5 * sum(d * (ya[..., 1:] + ya[..., :-1]), -1)
