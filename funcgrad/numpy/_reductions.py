"""Reductions of funcgrad.numpy: sum, mean, var, std, max, min, prod, arg*, all, any,
logsumexp, cumsum.

>>> import funcgrad.numpy as fnp
>>> fnp.sum(fnp.ones((2, 3)), axis=1, keepdims=True).shape
(2, 1)
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy._core import (
    asarray,
    canonical_axes,
    canonical_axis,
    cast,
    promote_args,
    promote_inexact,
)
from funcgrad.numpy._ufuncs import (
    _to_bool,
    add,
    divide,
    exp,
    isfinite,
    log,
    multiply,
    sqrt,
    square,
    subtract,
    where,
)
from funcgrad.primitives import reductions as R
from funcgrad.primitives import structural as S
from funcgrad.primitives.elementwise import stop_gradient


def _prepare(a: Any) -> Any:
    (a,) = promote_args(asarray(a))
    if dtypes.python_scalar(a):
        a = cast(a, get_aval(a).dtype)
    return a


def _keepdims(out: Any, in_ndim: int, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return out
    return S.expand_dims(out, axes)


def _accumulate_dtype(dt: np.dtype[Any], dtype: Any) -> np.dtype[Any]:
    # NumPy sums small integers and booleans in the platform integer.
    if dtype is not None:
        return dtypes.canonicalize(dtype)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 8):
        return dtypes.int64
    if dt.kind == "u" and dt.itemsize < 8:
        return dtypes.uint64
    return dt


def _reduce_arith(prim_fn: Any, a: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    a = cast(a, _accumulate_dtype(aval.dtype, dtype))
    return _keepdims(prim_fn(a, axes), aval.ndim, axes, keepdims)


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Sum over ``axis`` (all axes by default).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.sum(fnp.arange(4.0)))
    6.0
    """
    return _reduce_arith(R.reduce_sum, a, axis, dtype, keepdims)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Product over ``axis`` (all axes by default); exact gradients with zeros.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.prod(fnp.array([2.0, 3.0])))
    6.0
    """
    return _reduce_arith(R.reduce_prod, a, axis, dtype, keepdims)


def _count(aval_shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return int(np.prod([aval_shape[i] for i in axes], dtype=np.int64))


def mean(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.mean(fnp.array([1.0, 2.0, 6.0])))
    3.0
    """
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    out_dt = dtypes.canonicalize(dtype) if dtype is not None else (
        aval.dtype if dtypes.is_inexact(aval.dtype) else dtypes.default_float)
    total = R.reduce_sum(cast(a, out_dt), axes)
    return _keepdims(divide(total, float(_count(aval.shape, axes))), aval.ndim, axes,
                     keepdims)


def var(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.var(fnp.array([1.0, 3.0])))
    1.0
    """
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    centered = subtract(a, mean(a, axes, dtype, keepdims=True))
    n = _count(aval.shape, axes) - ddof
    total = R.reduce_sum(square(centered), axes)
    return _keepdims(divide(total, float(n)), aval.ndim, axes, keepdims)


def std(a: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    """Standard deviation over ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.std(fnp.array([1.0, 3.0])))
    1.0
    """
    return sqrt(var(a, axis, dtype, ddof, keepdims))


def _chooser(prim_fn: Any, name: str, a: Any, axis: Any, keepdims: bool) -> Any:
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    if builtins.any(aval.shape[i] == 0 for i in axes):
        raise ShapeError(f"zero-size array to reduction operation {name} which has no identity")
    return _keepdims(prim_fn(a, axes), aval.ndim, axes, keepdims)


def max(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Maximum over ``axis``; ties share the gradient equally.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.max(fnp.array([1.0, 5.0, 2.0])))
    5.0
    """
    return _chooser(R.reduce_max, "maximum", a, axis, keepdims)


def min(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Minimum over ``axis``; ties share the gradient equally.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.min(fnp.array([1.0, 5.0, 2.0])))
    1.0
    """
    return _chooser(R.reduce_min, "minimum", a, axis, keepdims)


amax, amin = max, min


def ptp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Peak to peak: max - min over ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.ptp(fnp.array([1.0, 5.0, 2.0])))
    4.0
    """
    return subtract(max(a, axis, keepdims), min(a, axis, keepdims))


def _arg(prim_fn: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    a = _prepare(a)
    aval = get_aval(a)
    if axis is None:
        flat = S.reshape(a, (aval.size,))
        out = prim_fn(flat, 0)
        return S.reshape(out, (1,) * aval.ndim) if keepdims else out
    ax = canonical_axis(axis, aval.ndim)
    out = prim_fn(a, ax)
    return S.expand_dims(out, (ax,)) if keepdims else out


def argmax(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Index of the maximum (first on ties), over the flattened array by default.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.argmax(fnp.array([1.0, 5.0, 2.0])))
    1
    """
    return _arg(R.argmax, a, axis, keepdims)


def argmin(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Index of the minimum (first on ties), over the flattened array by default.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.argmin(fnp.array([1.0, 5.0, 2.0])))
    0
    """
    return _arg(R.argmin, a, axis, keepdims)


def all(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """True where every element along ``axis`` is true.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.all(fnp.array([1.0, 0.0])))
    False
    """
    b = _to_bool(a)
    aval = get_aval(b)
    axes = canonical_axes(axis, aval.ndim)
    if builtins.any(aval.shape[i] == 0 for i in axes):
        return _empty_logical(aval.shape, axes, keepdims, True)
    return _keepdims(R.reduce_min(b, axes), aval.ndim, axes, keepdims)


def any(a: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    """True where some element along ``axis`` is true.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.any(fnp.array([1.0, 0.0])))
    True
    """
    b = _to_bool(a)
    aval = get_aval(b)
    axes = canonical_axes(axis, aval.ndim)
    if any_empty(aval.shape, axes):
        return _empty_logical(aval.shape, axes, keepdims, False)
    return _keepdims(R.reduce_max(b, axes), aval.ndim, axes, keepdims)


def any_empty(shape: tuple[int, ...], axes: tuple[int, ...]) -> bool:
    return 0 in [shape[i] for i in axes]


def _empty_logical(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool,
                   value: bool) -> Any:
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or
                      i not in axes)
    return np.full(out_shape, value)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.count_nonzero(fnp.array([1.0, 0.0, 3.0])))
    2
    """
    return sum(_to_bool(a), axis=axis, keepdims=keepdims)


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """log(sum(exp(a))) over ``axis``, computed without overflow.

    >>> import funcgrad.numpy as fnp
    >>> round(float(fnp.logsumexp(fnp.array([0.0, 0.0]))), 4)
    0.6931
    """
    a = _prepare(a)
    if not dtypes.is_inexact(get_aval(a).dtype):
        a = cast(a, dtypes.default_float)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    amax = stop_gradient(R.reduce_max(a, axes)) if aval.size else np.zeros(())
    amax = where(isfinite(amax), amax, 0.0)
    shifted = subtract(a, S.broadcast_in_dim(
        amax, aval.shape, tuple(i for i in range(aval.ndim) if i not in axes)))
    out = log(R.reduce_sum(exp(shifted), axes))
    out = add(out, amax)
    return _keepdims(out, aval.ndim, axes, keepdims)


def cumsum(a: Any, axis: Any = None, dtype: Any = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cumsum(fnp.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0, 6.0]
    """
    a = _prepare(a)
    aval = get_aval(a)
    if axis is None:
        a = S.reshape(a, (aval.size,))
        axis = 0
    ax = canonical_axis(axis, get_aval(a).ndim)
    a = cast(a, _accumulate_dtype(aval.dtype, dtype))
    return R.cumsum(a, ax)


def average(a: Any, axis: Any = None, weights: Any = None) -> Any:
    """Weighted average along ``axis`` (the plain mean without weights).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.average(fnp.array([1.0, 3.0]), weights=fnp.array([3.0, 1.0])))
    1.5
    """
    if weights is None:
        return mean(a, axis)
    a, w = promote_inexact(a, weights)
    if get_aval(a).shape != get_aval(w).shape:
        raise ShapeError(
            f"weights of shape {get_aval(w).shape} must have the shape of a, "
            f"{get_aval(a).shape}"
        )
    return divide(sum(multiply(a, w), axis), sum(w, axis))


def _along_axis(a: Any, axis: Any) -> tuple[Any, int]:
    """The operand and a non-negative axis; ``axis=None`` means the flattened array."""
    a = _prepare(a)
    if axis is None:
        a, axis = S.reshape(a, (get_aval(a).size,)), 0
    return a, canonical_axis(axis, get_aval(a).ndim)


def sort(a: Any, axis: Any = -1) -> Any:
    """Sorted copy along ``axis`` (of the flattened array when ``axis`` is None); stable,
    and differentiable (the derivative follows the sorting permutation).

    >>> import funcgrad.numpy as fnp
    >>> fnp.sort(fnp.array([3.0, 1.0, 2.0])).tolist()
    [1.0, 2.0, 3.0]
    """
    return R.sort(*_along_axis(a, axis))


def argsort(a: Any, axis: Any = -1) -> Any:
    """Indices that sort ``a`` along ``axis`` (stable; flattened when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.argsort(fnp.array([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    return R.argsort(*_along_axis(a, axis))
