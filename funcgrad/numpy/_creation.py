"""Array creation in funcgrad.numpy (results are concrete NumPy arrays).

>>> import funcgrad.numpy as fnp
>>> fnp.linspace(0.0, 1.0, 3).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Tracer, get_aval
from funcgrad.numpy._core import asarray as _asarray
from funcgrad.numpy._core import cast, promote_args


def _dt(dtype: Any, default: Any = None) -> Any:
    return dtypes.canonicalize(dtype) if dtype is not None else default


def array(obj: Any, dtype: Any = None, copy: bool = True) -> Any:
    """An array from data (a traced value stays traced).

    >>> import funcgrad.numpy as fnp
    >>> fnp.array([[1, 2]]).dtype
    dtype('int64')
    """
    x = _asarray(obj)
    if isinstance(x, Tracer):
        return cast(x, dtypes.canonicalize(dtype)) if dtype is not None else x
    if dtypes.python_scalar(x):
        return np.array(x, dtype=_dt(dtype))
    if isinstance(x, np.ndarray):
        out = np.array(x, dtype=_dt(dtype)) if copy else np.asarray(x, dtype=_dt(dtype))
    else:
        out = x
    if isinstance(out, np.ndarray) and out.dtype.kind in "fc" and dtype is None:
        dtypes.canonicalize(out.dtype)
    return out


def asarray(obj: Any, dtype: Any = None) -> Any:
    """Like :func:`array` but without copying when possible.

    >>> import funcgrad.numpy as fnp
    >>> fnp.asarray(1.5).shape
    ()
    """
    return array(obj, dtype, copy=False)


def zeros(shape: Any, dtype: Any = None) -> Any:
    """Zeros of ``shape`` (float64 unless ``dtype`` is given).

    >>> import funcgrad.numpy as fnp
    >>> fnp.zeros((2,)).tolist()
    [0.0, 0.0]
    """
    return np.zeros(shape, dtype=_dt(dtype, dtypes.default_float))


def ones(shape: Any, dtype: Any = None) -> Any:
    """Ones of ``shape``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ones(2).tolist()
    [1.0, 1.0]
    """
    return np.ones(shape, dtype=_dt(dtype, dtypes.default_float))


def empty(shape: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` (zero-filled: funcgrad never exposes uninitialised memory).

    >>> import funcgrad.numpy as fnp
    >>> fnp.empty(2).shape
    (2,)
    """
    return zeros(shape, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """``shape`` filled with ``fill_value`` (which may be traced).

    >>> import funcgrad.numpy as fnp
    >>> fnp.full(2, 7.0).tolist()
    [7.0, 7.0]
    """
    shp = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    v = _asarray(fill_value)
    if isinstance(v, Tracer):
        from funcgrad.numpy._shape import broadcast_to  # noqa: PLC0415

        v = cast(v, dtypes.canonicalize(dtype)) if dtype is not None else v
        return broadcast_to(v, shp)
    return np.full(shp, fill_value, dtype=_dt(dtype))


def _like(a: Any, dtype: Any, shape: Any) -> tuple[tuple[int, ...], Any]:
    aval = get_aval(_asarray(a))
    return (aval.shape if shape is None else tuple(np.atleast_1d(shape)),
            _dt(dtype, aval.dtype))


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.zeros_like(fnp.ones(2)).tolist()
    [0.0, 0.0]
    """
    shp, dt = _like(a, dtype, shape)
    return np.zeros(shp, dt)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Ones with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ones_like(fnp.zeros(2)).tolist()
    [1.0, 1.0]
    """
    shp, dt = _like(a, dtype, shape)
    return np.ones(shp, dt)


def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.empty_like(fnp.ones(2)).shape
    (2,)
    """
    return zeros_like(a, dtype, shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """``fill_value`` with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.full_like(fnp.ones(2), 3.0).tolist()
    [3.0, 3.0]
    """
    shp, dt = _like(a, dtype, shape)
    v = _asarray(fill_value)
    if isinstance(v, Tracer):
        (v,) = promote_args(v)
        return _broadcast_value(cast(v, dt), shp)
    return np.full(shp, fill_value, dt)


def _broadcast_value(v: Any, shape: tuple[int, ...]) -> Any:
    from funcgrad.numpy._shape import broadcast_to  # noqa: PLC0415

    return broadcast_to(v, shape)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in ``[start, stop)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.arange(3).tolist()
    [0, 1, 2]
    """
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise TypeError(
                "arange needs concrete bounds (the length would depend on a traced value); "
                "mark the argument static with jit(f, static_argnums=...)"
            )
    return np.arange(start, stop, step, dtype=_dt(dtype))


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             dtype: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linspace(0, 1, 2).tolist()
    [0.0, 1.0]
    """
    if isinstance(start, Tracer) or isinstance(stop, Tracer):
        from funcgrad.numpy._core import promote_inexact  # noqa: PLC0415
        from funcgrad.numpy._ufuncs import add, multiply, subtract  # noqa: PLC0415

        div = (num - 1) if endpoint else num
        s, e = promote_inexact(start, stop, small_int_floats=False)
        dt = get_aval(s).dtype
        steps = (np.arange(num, dtype=np.float64) / max(div, 1)).astype(dt)
        out = add(s, multiply(subtract(e, s), steps))
        return cast(out, dtypes.canonicalize(dtype)) if dtype is not None else out
    return np.linspace(start, stop, num, endpoint=endpoint, dtype=_dt(dtype))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    """Ones on the k-th diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return np.eye(N, M, k, dtype=_dt(dtype, dtypes.default_float))


def identity(n: int, dtype: Any = None) -> Any:
    """The n-by-n identity.

    >>> import funcgrad.numpy as fnp
    >>> fnp.identity(1).tolist()
    [[1.0]]
    """
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    """Ones at and below the k-th diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tri(2).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return np.tri(N, M, k, dtype=_dt(dtype, dtypes.default_float))


def meshgrid(*xi: Any, indexing: str = "xy") -> list[Any]:
    """Coordinate matrices from coordinate vectors.

    >>> import funcgrad.numpy as fnp
    >>> [g.shape for g in fnp.meshgrid(fnp.arange(2), fnp.arange(3))]
    [(3, 2), (3, 2)]
    """
    from funcgrad.numpy._shape import broadcast_to, reshape  # noqa: PLC0415

    arrs = [_asarray(x) for x in xi]
    n = len(arrs)
    sizes = [get_aval(a).size for a in arrs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrs):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        shp = [1] * n
        shp[pos] = get_aval(a).size
        out.append(broadcast_to(reshape(a, shp), sizes))
    return out


def copy(a: Any) -> Any:
    """A copy of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.copy(fnp.ones(1)).tolist()
    [1.0]
    """
    x = _asarray(a)
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, Tracer):
        from funcgrad.numpy._ufuncs import positive  # noqa: PLC0415

        return positive(x)
    return np.array(x)


__all__ = [
    "array", "asarray", "copy", "empty", "empty_like", "eye", "full", "full_like",
    "identity", "linspace", "meshgrid", "ones", "ones_like", "tri", "zeros", "zeros_like",
    "arange",
]
