"""``funcgrad.numpy.linalg``: norms built from differentiable primitives.

>>> import funcgrad.numpy as fnp
>>> float(fnp.linalg.norm(fnp.array([3.0, 4.0])))
5.0
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.errors import ShapeError
from funcgrad.numpy._core import canonical_axes
from funcgrad.numpy._reductions import _prepare, max, min, sum  # noqa: A004
from funcgrad.numpy._shape import ravel
from funcgrad.numpy._ufuncs import absolute, power, sqrt, square
from funcgrad.primitives.structural import squeeze


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector norms (``ord`` None/2, 1, inf, -inf, 0 or any p) and the matrix norms
    ``"fro"``, 1, -1, inf, -inf, as ``numpy.linalg.norm``.

    >>> import funcgrad.numpy as fnp
    >>> print(f'{float(fnp.linalg.norm(fnp.eye(2), "fro")) ** 2:.6f}')
    2.000000
    """
    x = _prepare(x)
    nd = np.ndim(x) if not hasattr(x, "ndim") else x.ndim
    if axis is None:
        if ord is None or (ord == "fro" and nd == 2):
            out = sqrt(sum(square(ravel(x))))
            return out if not keepdims else _keep_all(out, nd)
        if nd == 1:
            axis = 0
        elif nd == 2:
            axis = (0, 1)
        else:
            raise ShapeError(f"norm with ord={ord!r} of a rank-{nd} array needs axis=")
    axes = canonical_axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ShapeError(f"norm takes one axis (vector norm) or two (matrix norm), got {axis!r}")


def _keep_all(out: Any, nd: int) -> Any:
    from funcgrad.numpy._shape import reshape  # noqa: PLC0415

    return reshape(out, (1,) * nd)


def _vector_norm(x: Any, ord: Any, axis: int, keepdims: bool) -> Any:  # noqa: A002
    if ord is None or ord == 2:
        return sqrt(sum(square(x), axis, keepdims=keepdims))
    if ord == np.inf:
        return max(absolute(x), axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(absolute(x), axis, keepdims=keepdims)
    if ord == 0:
        return sum(absolute(x) != 0, axis, keepdims=keepdims) * 1.0
    if ord == 1:
        return sum(absolute(x), axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ShapeError(f"norm ord={ord!r} is a matrix norm; give two axes")
    return power(sum(power(absolute(x), ord), axis, keepdims=keepdims), 1.0 / ord)


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, ...], keepdims: bool) -> Any:  # noqa: A002
    r, c = axes
    if ord is None or ord == "fro":
        return sqrt(sum(square(x), axes, keepdims=keepdims))
    if ord in (1, -1):
        col = sum(absolute(x), r, keepdims=True)
        out = (max if ord == 1 else min)(col, c, keepdims=True)
    elif ord in (np.inf, -np.inf):
        row = sum(absolute(x), c, keepdims=True)
        out = (max if ord == np.inf else min)(row, r, keepdims=True)
    else:
        raise ShapeError(f"matrix norm ord={ord!r} needs singular values, which funcgrad does "
                         "not provide; use 'fro', 1, -1, inf or -inf")
    return out if keepdims else squeeze(out, axes)


__all__ = ["norm"]
