"""Shape helpers, vector products, spacing and bit packing of ``jax.numpy`` that build on
funcgrad.numpy's other functions: ``hsplit``/``vsplit``/``dsplit``, ``resize``, ``rollaxis``,
``rot90``, ``unstack``, ``matrix_transpose``, ``matvec``/``vecmat``/``vecdot``, ``cross``,
``apply_along_axis``/``apply_over_axes`` (through vmap, as JAX), ``fromfunction``,
``geomspace``/``logspace``, ``packbits``/``unpackbits`` and ``einsum_path``.

>>> import funcgrad.numpy as fnp
>>> fnp.rot90(fnp.array([[1, 2], [3, 4]])).tolist()
[[2, 4], [1, 3]]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ConcretizationTypeError
from funcgrad.numpy._core import canonical_axis, check_arraylike, promote_args
from funcgrad.transforms.vmap import vmap


def _static_int(v: Any, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError as e:
        raise ConcretizationTypeError(f"{what} must be a static Python int, got {v!r}") from e


def _ndim(a: Any) -> int:
    return int(get_aval(fnp.asarray(a)).ndim)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split along the second axis (the first for 1-d arrays).

    >>> import funcgrad.numpy as fnp
    >>> [p.tolist() for p in fnp.hsplit(fnp.arange(4), 2)]
    [[0, 1], [2, 3]]
    """
    check_arraylike("hsplit", ary)
    a = fnp.asarray(ary)
    if _ndim(a) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return fnp.split(a, indices_or_sections, axis=1 if _ndim(a) > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split along the first axis (arrays of rank >= 1, as JAX's).

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.vsplit(fnp.zeros((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    check_arraylike("vsplit", ary)
    a = fnp.asarray(ary)
    if _ndim(a) < 1:
        raise ValueError("vsplit only works on arrays of 1 or more dimensions")
    return fnp.split(a, indices_or_sections, axis=0)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """Split along the third axis (arrays of rank >= 3).

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.dsplit(fnp.zeros((1, 1, 4)), [1])]
    [(1, 1, 1), (1, 1, 3)]
    """
    check_arraylike("dsplit", ary)
    a = fnp.asarray(ary)
    if _ndim(a) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return fnp.split(a, indices_or_sections, axis=2)


def resize(a: Any, new_shape: Any) -> Any:
    """``a`` flattened, repeated as often as needed and reshaped to ``new_shape``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.resize(fnp.array([1, 2, 3]), (2, 2)).tolist()
    [[1, 2], [3, 1]]
    """
    check_arraylike("resize", a)
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = fnp.ravel(a)
    size, new_size = get_aval(arr).shape[0], math.prod(shape)
    if size == 0 or new_size == 0:
        return fnp.zeros(shape, get_aval(arr).dtype)
    arr = fnp.tile(arr, -(-new_size // size))[:new_size]
    return fnp.reshape(arr, shape)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` so that it lies before position ``start`` (``moveaxis`` is clearer).

    >>> import funcgrad.numpy as fnp
    >>> fnp.rollaxis(fnp.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    check_arraylike("rollaxis", a)
    a = fnp.asarray(a)
    nd = _ndim(a)
    start = _static_int(start, "'start' argument of jnp.rollaxis()")
    ax = canonical_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > ax:
        start -= 1
    return fnp.moveaxis(a, ax, start)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (first towards second).

    >>> import funcgrad.numpy as fnp
    >>> fnp.rot90(fnp.array([[1, 2], [3, 4]]), 2).tolist()
    [[4, 3], [2, 1]]
    """
    check_arraylike("rot90", m)
    m = fnp.asarray(m)
    nd = _ndim(m)
    if nd < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but "
                         f"got first argument of shape {get_aval(m).shape}, which has ndim {nd}")
    ax1, ax2 = canonical_axis(axes[0], nd), canonical_axis(axes[1], nd)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = _static_int(k, "rot90's k") % 4
    if k == 0:
        return m
    if k == 2:
        return fnp.flip(fnp.flip(m, ax1), ax2)
    perm = list(range(nd))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return fnp.transpose(fnp.flip(m, ax2), perm)
    return fnp.flip(fnp.transpose(m, perm), ax2)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple.

    >>> import funcgrad.numpy as fnp
    >>> [v.tolist() for v in fnp.unstack(fnp.array([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    check_arraylike("unstack", x)
    x = fnp.asarray(x)
    if _ndim(x) == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    moved = fnp.moveaxis(x, canonical_axis(axis, _ndim(x)), 0)
    return tuple(moved[i] for i in range(get_aval(moved).shape[0]))


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.matrix_transpose(fnp.zeros((2, 3, 4))).shape
    (2, 4, 3)
    """
    check_arraylike("matrix_transpose", x)
    return fnp.linalg.matrix_transpose(x)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """``sum(conj(x1) * x2, axis)``, broadcast over the other axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.vecdot(fnp.array([1.0, 2.0]), fnp.array([3.0, 4.0])).tolist()
    11.0
    """
    check_arraylike("jnp.vecdot", x1, x2)
    return fnp.linalg.vecdot(x1, x2, axis=axis, precision=precision,
                             preferred_element_type=preferred_element_type)


def matvec(x1: Any, x2: Any, /) -> Any:
    """Batched matrix-vector product: (..., n, m) with (..., m) gives (..., n).

    >>> import funcgrad.numpy as fnp
    >>> fnp.matvec(fnp.eye(2) * 2, fnp.array([1.0, 3.0])).tolist()
    [2.0, 6.0]
    """
    check_arraylike("matvec", x1, x2)
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    if _ndim(x1) < 2 or _ndim(x2) < 1:
        raise ValueError("matvec needs a matrix (..., n, m) and a vector (..., m), got shapes "
                         f"{get_aval(x1).shape} and {get_aval(x2).shape}")
    return fnp.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Batched vector-matrix product of ``conj(x1)`` (..., n) with (..., n, m): (..., m).

    >>> import funcgrad.numpy as fnp
    >>> fnp.vecmat(fnp.array([1.0, 3.0]), fnp.eye(2) * 2).tolist()
    [2.0, 6.0]
    """
    check_arraylike("matvec", x1, x2)  # the name JAX's message gives
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    if _ndim(x1) < 1 or _ndim(x2) < 2:
        raise ValueError("vecmat needs a vector (..., n) and a matrix (..., n, m), got shapes "
                         f"{get_aval(x1).shape} and {get_aval(x2).shape}")
    return fnp.matmul(fnp.conj(x1)[..., None, :], x2)[..., 0, :]


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross product of 3-vectors (or 2-vectors, giving the z component).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cross(fnp.array([1.0, 0.0, 0.0]), fnp.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    check_arraylike("cross", a, b)
    a, b = promote_args(fnp.asarray(a), fnp.asarray(b))
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = fnp.moveaxis(a, axisa, -1), fnp.moveaxis(b, axisb, -1)
    na, nb = get_aval(a).shape[-1], get_aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if na == 2 and nb == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if na == 3 else fnp.zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if nb == 3 else fnp.zeros_like(b0)
    c = fnp.stack(fnp.broadcast_arrays(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2,
                                       a0 * b1 - a1 * b0))
    return fnp.moveaxis(c, 0, axisc)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d`` on every 1-d slice along ``axis`` (vectorised with vmap, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> fnp.apply_along_axis(fnp.sum, 1, fnp.array([[1, 2], [3, 4]])).tolist()
    [3, 7]
    """
    check_arraylike("apply_along_axis", arr)
    arr = fnp.asarray(arr)
    nd = _ndim(arr)
    axis = canonical_axis(axis, nd)

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)

    for i in range(1, nd - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """Apply ``func(a, axis)`` for each axis in turn, keeping the rank.

    >>> import funcgrad.numpy as fnp
    >>> fnp.apply_over_axes(fnp.sum, fnp.ones((2, 3)), [0, 1]).tolist()
    [[6.0]]
    """
    check_arraylike("apply_over_axes", a)
    arr = fnp.asarray(a)
    for ax in axes:
        b = fnp.asarray(func(arr, ax))
        if _ndim(b) == _ndim(arr):
            arr = b
        elif _ndim(b) == _ndim(arr) - 1:
            arr = fnp.expand_dims(b, ax)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return arr


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """``function`` of the index grids of ``shape`` (evaluated once, through vmap).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fromfunction(lambda i, j: i + j, (2, 2), dtype=int).tolist()
    [[0, 1], [1, 2]]
    """
    shape = tuple(_static_int(s, "shape argument of jnp.fromfunction()") for s in shape)
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(fnp.arange(s, dtype=dtype) for s in shape), **kwargs)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.logspace(0, 2, 3).tolist()
    [1.0, 10.0, 100.0]
    """
    num = _static_int(num, "'num' argument of jnp.logspace")
    out_dt = _inexact(fnp.result_type(start, stop)) if dtype is None else fnp.dtype(dtype)
    comp = _inexact(out_dt)
    lin = fnp.linspace(fnp.astype(fnp.asarray(start), comp), fnp.astype(fnp.asarray(stop), comp),
                       num, endpoint=endpoint, axis=axis)
    return fnp.astype(fnp.power(base, lin), out_dt)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """``num`` numbers from ``start`` to ``stop`` spaced evenly on a log scale.

    >>> import funcgrad.numpy as fnp
    >>> [round(v, 6) for v in fnp.geomspace(1, 100, 3).tolist()]
    [1.0, 10.0, 100.0]
    """
    num = _static_int(num, "'num' argument of jnp.geomspace")
    out_dt = _inexact(fnp.result_type(start, stop)) if dtype is None else fnp.dtype(dtype)
    comp = _inexact(out_dt)
    start, stop = fnp.astype(fnp.asarray(start), comp), fnp.astype(fnp.asarray(stop), comp)
    sign = fnp.sign(start)
    res = sign * logspace(fnp.log10(start / sign), fnp.log10(stop / sign), num,
                          endpoint=endpoint, base=10.0, dtype=comp, axis=0)
    res = fnp.moveaxis(res, 0, canonical_axis(axis, _ndim(res)))
    return fnp.astype(res, out_dt)


def _inexact(dt: Any) -> np.dtype[Any]:
    dt = np.dtype(dt)
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack the truth of each element into the bits of uint8 values.

    >>> import funcgrad.numpy as fnp
    >>> fnp.packbits(fnp.array([1, 0, 1])).tolist()
    [160]
    """
    check_arraylike("packbits", a)
    arr = fnp.asarray(a)
    if get_aval(arr).dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = fnp.astype(fnp.not_equal(arr, 0), np.uint8)
    bits = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = fnp.ravel(arr), 0
    arr = fnp.swapaxes(arr, axis, -1)
    rem = get_aval(arr).shape[-1] % 8
    if rem:
        arr = fnp.pad(arr, [(0, 0)] * (_ndim(arr) - 1) + [(0, 8 - rem)])
    shape = get_aval(arr).shape
    arr = fnp.reshape(arr, (*shape[:-1], shape[-1] // 8, 8))
    packed = fnp.astype(fnp.sum(fnp.left_shift(arr, bits), axis=-1), np.uint8)
    return fnp.swapaxes(packed, axis, -1)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of uint8 values as a uint8 array of 0s and 1s.

    >>> import funcgrad.numpy as fnp
    >>> import numpy as np
    >>> fnp.unpackbits(fnp.array([160], np.uint8)).tolist()
    [1, 0, 1, 0, 0, 0, 0, 0]
    """
    check_arraylike("unpackbits", a)
    arr = fnp.asarray(a)
    if get_aval(arr).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = (np.uint8(1) << np.arange(8, dtype=np.uint8)).astype(np.uint8)
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = fnp.ravel(arr), 0
    arr = fnp.swapaxes(arr, axis, -1)
    out = fnp.astype(fnp.greater(fnp.bitwise_and(arr[..., None], bits), 0), np.uint8)
    shape = get_aval(out).shape
    out = fnp.reshape(out, (*shape[:-2], shape[-2] * 8))
    if count is not None:
        n = get_aval(out).shape[-1]
        if count > n:
            out = fnp.pad(out, [(0, 0)] * (_ndim(out) - 1) + [(0, count - n)])
        else:
            out = out[..., :count]
    return fnp.swapaxes(out, axis, -1)


def einsum_path(subscripts: str, /, *operands: Any,
                optimize: bool | str | list[tuple[int, ...]] = "auto") -> tuple[list[Any], str]:
    """The contraction order ``einsum`` would use (NumPy's path search on the shapes) and
    a text report.

    >>> import funcgrad.numpy as fnp
    >>> fnp.einsum_path("ij,jk->ik", fnp.ones((2, 3)), fnp.ones((3, 4)))[0]
    [(0, 1)]
    """
    # Only the shapes matter: stand-ins that take no memory, so tracers work too.
    shaped = [np.broadcast_to(np.zeros((), get_aval(fnp.asarray(o)).dtype),
                              get_aval(fnp.asarray(o)).shape) for o in operands]
    how: Any = "greedy" if optimize in ("auto", True) else optimize
    if isinstance(how, list):
        how = ["einsum_path", *how]
    path, report = np.einsum_path(subscripts, *shaped, optimize=how)
    return [tuple(p) for p in path[1:]], report


__all__ = ["apply_along_axis", "apply_over_axes", "cross", "dsplit", "einsum_path",
           "fromfunction", "geomspace", "hsplit", "logspace", "matrix_transpose", "matvec",
           "packbits", "resize", "rollaxis", "rot90", "unpackbits", "unstack", "vecdot",
           "vecmat", "vsplit"]
