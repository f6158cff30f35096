"""Shape manipulation, joining and splitting in funcgrad.numpy.

>>> import funcgrad.numpy as fnp
>>> fnp.stack([fnp.ones(2), fnp.zeros(2)], axis=1).shape
(2, 2)
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import ConcretizationTypeError, ShapeError
from funcgrad.numpy._core import (
    asarray,
    broadcast_shapes,
    broadcast_to_shape,
    canonical_axes,
    canonical_axis,
    cast,
    check_arraylike,
    check_arraylike_seq,
    promote_args,
)
from funcgrad.primitives import structural as S


def _arr(a: Any) -> Any:
    a = asarray(a)
    if not hasattr(a, "shape"):
        # A Python number: an Array of its default dtype that stays weakly typed, as JAX's
        # shape functions leave it (jnp.repeat(3, 2) + int8 is int8).
        aval = get_aval(a)
        return wrap(np.asarray(a, aval.dtype), aval)
    return a


def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.shape(fnp.ones((2, 3)))
    (2, 3)
    """
    return get_aval(asarray(a)).shape


def ndim(a: Any) -> int:
    """The number of axes of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ndim(fnp.ones((2, 3)))
    2
    """
    return len(shape(a))


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of ``a`` (along ``axis`` if given).

    >>> import funcgrad.numpy as fnp
    >>> fnp.size(fnp.ones((2, 3)))
    6
    """
    s = shape(a)
    return math.prod(s) if axis is None else s[canonical_axis(axis, len(s))]


def _resolve_shape(newshape: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    total = math.prod(shape)
    if isinstance(newshape, (int, np.integer)):
        newshape = (int(newshape),)
    elif getattr(newshape, "ndim", None) == 0:
        newshape = [newshape]  # (JAX shows a lone array shape as a list)
    if any(isinstance(d, Tracer) for d in newshape):
        shown = list(newshape) if isinstance(newshape, list) else tuple(newshape)
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got "
                        f"{shown}.\nIf using `jit`, try using `static_argnums` or applying "
                        "`jit` to smaller subfunctions."
                        + "".join(d._origin_msg() for d in newshape if isinstance(d, Tracer)))
    dims = [operator.index(d) for d in newshape]
    if dims.count(-1) > 1:
        raise ShapeError("can only specify one unknown axis size with a `-1` value, got "
                         f"{tuple(dims)}")
    if -1 in dims:
        known = math.prod([d for d in dims if d != -1])
        if known == 0 or total % known:
            raise ShapeError(
                f"cannot reshape array of shape {shape} (size {total}) into shape "
                f"{tuple(dims)} because the product of specified axis sizes ({known}) does "
                f"not evenly divide {total}")
        dims[dims.index(-1)] = total // known
    if math.prod(dims) != total:
        raise ShapeError(f"cannot reshape array of shape {shape} (size {total}) into shape "
                         f"{tuple(dims)} (size {math.prod(dims)})")
    return tuple(dims)


def reshape(a: Any, newshape: Any, order: str = "C") -> Any:
    """``a`` with a new shape (one entry may be -1).

    >>> import funcgrad.numpy as fnp
    >>> fnp.reshape(fnp.arange(6.0), (2, -1)).shape
    (2, 3)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("reshape", a)
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    if order not in ("C", "F"):
        raise ValueError(f"Unexpected value for 'order' argument: {order}.")
    a = _arr(a)
    shape = _resolve_shape(newshape, get_aval(a).shape)
    if order == "F":  # column-major: reverse the axes on both sides
        return transpose(S.reshape(transpose(a), shape[::-1]))
    return S.reshape(a, shape)


def ravel(a: Any, order: str = "C") -> Any:
    """``a`` flattened to one axis (``order="F"`` reads it column by column).

    >>> import funcgrad.numpy as fnp
    >>> fnp.ravel(fnp.ones((2, 3))).shape
    (6,)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("ravel", a)
    a = _arr(a)
    if order == "F":
        a = transpose(a)
    elif order not in ("C", "A", "K"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    return S.reshape(a, (get_aval(a).size,))


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute axes (reverse them by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.transpose(fnp.ones((2, 3, 4))).shape
    (4, 3, 2)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("transpose", a)
    a = _arr(a)
    nd = get_aval(a).ndim
    if axes is None:
        perm = tuple(reversed(range(nd)))
    else:
        perm = tuple(canonical_axis(x, nd) for x in axes)
        if sorted(perm) != list(range(nd)):
            raise ShapeError("transpose permutation isn't a permutation of operand dimensions, "
                             f"got permutation {tuple(axes)} for operand shape "
                             f"{get_aval(a).shape}.")
    return S.transpose(a, perm)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.swapaxes(fnp.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = _arr(a)
    nd = get_aval(a).ndim
    perm = list(range(nd))
    i, j = canonical_axis(axis1, nd), canonical_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return S.transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    """Move axes to new positions, keeping the order of the others.

    >>> import funcgrad.numpy as fnp
    >>> fnp.moveaxis(fnp.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("moveaxis", a)
    a = _arr(a)
    nd = get_aval(a).ndim
    src = [canonical_axis(s, nd) for s in np.atleast_1d(source)]
    dst = [canonical_axis(d, nd) for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ShapeError("source and destination must have the same number of axes")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return S.transpose(a, order)


def squeeze(a: Any, axis: Any = None) -> Any:
    """Remove axes of size 1 (all of them, or those named).

    >>> import funcgrad.numpy as fnp
    >>> fnp.squeeze(fnp.ones((1, 3, 1))).shape
    (3,)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("squeeze", a)
    a = _arr(a)
    shp = get_aval(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(shp) if d == 1)
    else:
        axes = canonical_axes(axis, len(shp))
        bad = [i for i in axes if shp[i] != 1]
        if bad:
            raise ShapeError("cannot select an axis to squeeze out which has size not equal "
                             f"to one, got shape={shp} and dimensions={axes}")
    return S.squeeze(a, axes)


def expand_dims(a: Any, axis: Any) -> Any:
    """Insert axes of size 1 at ``axis`` (an int or a tuple).

    >>> import funcgrad.numpy as fnp
    >>> fnp.expand_dims(fnp.ones(3), 0).shape
    (1, 3)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("expand_dims", a)
    a = _arr(a)
    out_nd = get_aval(a).ndim + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    if isinstance(axis, (tuple, list)):
        axes = [canonical_axis(x, out_nd) for x in axis]
        if len(set(axes)) != len(axes):
            raise ShapeError(f"repeated axis in lax.expand_dims: {tuple(axis)}")
    return S.expand_dims(a, canonical_axes(axis, out_nd))


def broadcast_to(a: Any, shape: Sequence[int]) -> Any:
    """``a`` broadcast to ``shape``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.broadcast_to(fnp.ones(3), (2, 3)).shape
    (2, 3)
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("broadcast_to", a)
    return broadcast_to_shape(_arr(a), tuple(shape) if not isinstance(shape, int) else (shape,))


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments broadcast to one shape.

    >>> import funcgrad.numpy as fnp
    >>> [x.shape for x in fnp.broadcast_arrays(fnp.ones(3), fnp.ones((2, 1)))]
    [(2, 3), (2, 3)]
    """
    check_arraylike("broadcast_arrays", *args)
    arrs = [_arr(a) for a in args]
    shp = broadcast_shapes(*(get_aval(a).shape for a in arrs))
    return [broadcast_to_shape(a, shp) for a in arrs]


def atleast_1d(*arys: Any) -> Any:
    """``a`` with at least one axis.

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_1d(1.0).shape
    (1,)
    """
    if len(arys) != 1:  # (several: a list, one each, as JAX's)
        return [atleast_1d(a) for a in arys]
    a = arys[0]
    check_arraylike("atleast_1d", a)
    a = _arr(a)
    return S.reshape(a, (1,)) if get_aval(a).ndim == 0 else a


def atleast_2d(*arys: Any) -> Any:
    """``a`` with at least two axes (new ones in front).

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_2d(fnp.ones(3)).shape
    (1, 3)
    """
    if len(arys) != 1:  # (several: a list, one each, as JAX's)
        return [atleast_2d(a) for a in arys]
    a = arys[0]
    check_arraylike("atleast_2d", a)
    a = _arr(a)
    shp = get_aval(a).shape
    return S.reshape(a, (1,) * (2 - len(shp)) + shp) if len(shp) < 2 else a


def atleast_3d(*arys: Any) -> Any:
    """``a`` with at least three axes (as NumPy places them).

    >>> import funcgrad.numpy as fnp
    >>> fnp.atleast_3d(fnp.ones(3)).shape
    (1, 3, 1)
    """
    if len(arys) != 1:  # (several: a list, one each, as JAX's)
        return [atleast_3d(a) for a in arys]
    a = arys[0]
    check_arraylike("atleast_3d", a)
    a = _arr(a)
    shp = get_aval(a).shape
    new = {0: (1, 1, 1), 1: (1, *shp, 1), 2: (*shp, 1)}.get(len(shp), shp)
    return S.reshape(a, new)


def flip(a: Any, axis: Any = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.flip(fnp.arange(3.0)).tolist()
    [2.0, 1.0, 0.0]
    """
    check_arraylike("flip", a)
    a = _arr(a)
    return S.rev(a, canonical_axes(axis, get_aval(a).ndim))


def fliplr(a: Any) -> Any:
    """Flip along axis 1.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fliplr(fnp.eye(2)).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    check_arraylike("fliplr", a)
    return flip(a, 1)


def flipud(a: Any) -> Any:
    """Flip along axis 0.

    >>> import funcgrad.numpy as fnp
    >>> fnp.flipud(fnp.arange(2.0)).tolist()
    [1.0, 0.0]
    """
    check_arraylike("flipud", a)
    return flip(a, 0)


def _slice_axis(a: Any, axis: int, start: int, stop: int) -> Any:
    shp = get_aval(a).shape
    lo = [0] * len(shp)
    hi = list(shp)
    lo[axis], hi[axis] = start, stop
    return S.slice_(a, lo, hi)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Shift elements cyclically along ``axis`` (of the flattened array by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.roll(fnp.arange(4.0), 1).tolist()
    [3.0, 0.0, 1.0, 2.0]
    """
    check_arraylike("roll", a)
    a = _arr(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), get_aval(a).shape)
    shifts = np.atleast_1d(shift)
    axes = np.atleast_1d(axis)
    shifts, axes = np.broadcast_arrays(shifts, axes)
    out = a
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        ax = canonical_axis(ax, get_aval(out).ndim)
        n = get_aval(out).shape[ax]
        if n == 0:
            continue
        k = int(s) % n
        if k:
            out = S.concatenate([_slice_axis(out, ax, n - k, n), _slice_axis(out, ax, 0, n - k)],
                                ax)
    return out


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    """Join arrays along an existing axis (flattening them first when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.concatenate([fnp.ones(2), fnp.zeros(3)]).shape
    (5,)
    """
    check_arraylike_seq("concatenate", arrays)
    if not len(arrays):
        raise ShapeError("need at least one array to concatenate")
    arrs = promote_args(*arrays)
    arrs = [_arr(a) for a in arrs]
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    nd = get_aval(arrs[0]).ndim
    if nd == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    for a in arrs:
        if get_aval(a).ndim != nd:
            raise ShapeError(
                "Cannot concatenate arrays with different numbers of dimensions: got "
                + ", ".join(str(get_aval(x).shape) for x in arrs) + ".")
    ax = canonical_axis(axis, nd)
    shapes = [get_aval(x).shape for x in arrs]
    if any(s[:ax] + s[ax + 1:] != shapes[0][:ax] + shapes[0][ax + 1:] for s in shapes):
        raise ShapeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the "
            f"one being concatenated: concatenating along dimension {ax} for shapes "
            + ", ".join(map(str, shapes)) + ".")
    return S.concatenate(arrs, ax)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    """Join arrays of one shape along a new axis.

    >>> import funcgrad.numpy as fnp
    >>> fnp.stack([fnp.ones(2), fnp.ones(2)]).shape
    (2, 2)
    """
    check_arraylike_seq("stack", arrays)
    if not len(arrays):
        raise ShapeError("need at least one array to stack")
    arrs = [_arr(a) for a in promote_args(*arrays)]
    shapes = {get_aval(a).shape for a in arrs}
    if len(shapes) != 1:
        raise ShapeError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(get_aval(a).shape) for a in arrs)}.")
    nd = get_aval(arrs[0]).ndim + 1
    ax = canonical_axis(axis, nd)
    return S.concatenate([S.expand_dims(a, (ax,)) for a in arrs], ax)


def hstack(arrays: Sequence[Any]) -> Any:
    """Join along axis 1 (axis 0 for 1-D arrays).

    >>> import funcgrad.numpy as fnp
    >>> fnp.hstack([fnp.ones(2), fnp.ones(3)]).shape
    (5,)
    """
    check_arraylike_seq("hstack", arrays)
    arrs = [atleast_1d(a) for a in arrays]
    return concatenate(arrs, 0 if get_aval(arrs[0]).ndim == 1 else 1)


def vstack(arrays: Sequence[Any]) -> Any:
    """Join along axis 0 (1-D arrays become rows).

    >>> import funcgrad.numpy as fnp
    >>> fnp.vstack([fnp.ones(2), fnp.ones(2)]).shape
    (2, 2)
    """
    check_arraylike_seq("vstack", arrays)
    return concatenate([atleast_2d(a) for a in arrays], 0)


row_stack = vstack


def dstack(arrays: Sequence[Any]) -> Any:
    """Join along axis 2.

    >>> import funcgrad.numpy as fnp
    >>> fnp.dstack([fnp.ones(2), fnp.ones(2)]).shape
    (1, 2, 2)
    """
    check_arraylike_seq("dstack", arrays)
    return concatenate([atleast_3d(a) for a in arrays], 2)


def column_stack(arrays: Sequence[Any]) -> Any:
    """1-D arrays as columns of a 2-D array.

    >>> import funcgrad.numpy as fnp
    >>> fnp.column_stack([fnp.ones(3), fnp.zeros(3)]).shape
    (3, 2)
    """
    check_arraylike_seq("column_stack", arrays)
    cols = []
    for a in arrays:
        a = _arr(a)
        cols.append(S.reshape(a, (get_aval(a).size, 1)) if get_aval(a).ndim < 2 else a)
    return concatenate(cols, 1)


def _split_points(n: int, indices_or_sections: Any, even: bool) -> list[int]:
    if np.ndim(indices_or_sections) == 0:  # a count (a float one truncated, as JAX)
        k = int(indices_or_sections)
        if k <= 0:
            raise ShapeError("number of sections must be larger than 0")
        if even and n % k:
            raise ShapeError(f"array split does not result in an equal division: rest is {n % k}")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        return list(np.cumsum([0] + sizes))
    pts = [int(i) for i in indices_or_sections]
    return [0] + [builtins.min(builtins.max(p if p >= 0 else p + n, 0), n) for p in pts] + [n]


def split(a: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Split into equal sections, or at the given indices, along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.split(fnp.arange(6.0), 3)]
    [(2,), (2,), (2,)]
    """
    check_arraylike("split", a)
    return _split(a, indices_or_sections, axis, even=True)


def array_split(a: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """Like :func:`split`, allowing unequal sections.

    >>> import funcgrad.numpy as fnp
    >>> [p.shape for p in fnp.array_split(fnp.arange(5.0), 2)]
    [(3,), (2,)]
    """
    check_arraylike("array_split", a)
    return _split(a, indices_or_sections, axis, even=False)


def _split(a: Any, indices_or_sections: Any, axis: int, even: bool) -> list[Any]:
    a = _arr(a)
    shp = get_aval(a).shape
    ax = canonical_axis(axis, len(shp))
    pts = _split_points(shp[ax], indices_or_sections, even)
    if all(lo <= hi for lo, hi in zip(pts[:-1], pts[1:])) and len(pts) > 2:
        # Consecutive pieces: one split equation, as JAX's (one concatenate when transposed)
        return S.split(a, [hi - lo for lo, hi in zip(pts[:-1], pts[1:])], ax)
    return [_slice_axis(a, ax, lo, builtins.max(lo, hi)) for lo, hi in zip(pts[:-1], pts[1:])]


def tile(a: Any, reps: Any) -> Any:
    """Repeat the whole array ``reps`` times along each axis.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tile(fnp.arange(2.0), 2).tolist()
    [0.0, 1.0, 0.0, 1.0]
    """
    check_arraylike("tile", a)
    a = _arr(a)
    reps_t = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    shp = get_aval(a).shape
    nd = builtins.max(len(shp), len(reps_t))
    shp = (1,) * (nd - len(shp)) + shp
    reps_t = (1,) * (nd - len(reps_t)) + reps_t
    a = S.reshape(a, shp)
    # Broadcast against a new axis in front of each axis, then merge the pairs.
    expanded = tuple(x for r, d in zip(reps_t, shp) for x in (r, d))
    b = S.broadcast_in_dim(a, expanded, tuple(range(1, 2 * nd, 2)))
    return S.reshape(b, tuple(r * d for r, d in zip(reps_t, shp)))


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Repeat each element ``repeats`` times along ``axis`` (flattened by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.repeat(fnp.arange(2.0), 2).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    check_arraylike("repeat", a, repeats)
    a = _arr(a)
    if axis is None:
        a, axis = ravel(a), 0
    shp = get_aval(a).shape
    ax = canonical_axis(axis, len(shp))
    if not isinstance(repeats, (int, np.integer)):
        return _repeat_counts(a, repeats, ax, total_repeat_length)
    r = int(repeats)
    if total_repeat_length is not None and total_repeat_length != shp[ax] * r and r >= 0:
        # JAX's rule for counts: cut at, or pad with the last element up to, the length.
        return _repeat_counts(a, np.full(shp[ax], r), ax, total_repeat_length)
    if total_repeat_length is not None and total_repeat_length != shp[ax] * r:
        raise ShapeError(f"total_repeat_length={total_repeat_length} does not match "
                         f"{shp[ax]} elements repeated {r} times")
    expanded = shp[:ax + 1] + (r,) + shp[ax + 1:]
    b = S.broadcast_in_dim(a, expanded, tuple(i for i in range(len(expanded)) if i != ax + 1))
    return S.reshape(b, shp[:ax] + (shp[ax] * r,) + shp[ax + 1:])


def _pad_with_function(array: Any, pad_width: Any, func: Callable[..., Any],
                       kwargs: dict[str, Any]) -> Any:
    # NumPy's (and JAX's) callable mode: zeros first, then each axis's vectors are handed
    # to ``func(vector, (before, after), axis, kwargs)``, which returns them filled in.
    from funcgrad.numpy._array_extras import apply_along_axis  # noqa: PLC0415

    padded = pad(array, pad_width)
    nd = get_aval(padded).ndim
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2)
                             if np.ndim(pad_width) else np.full((1, 2), pad_width), (nd, 2))
    for axis in range(nd):
        padded = apply_along_axis(func, axis, padded, tuple(int(w) for w in widths[axis]),
                                  axis, kwargs)
    return padded


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad with a constant (``mode="constant"``, one value or one per axis side), the edge
    values (``"edge"``), the array's own values (``"reflect"``, ``"symmetric"``, ``"wrap"``;
    ``reflect_type="odd"`` too), a statistic of the edge (``"maximum"``, ``"minimum"``,
    ``"mean"``, ``"median"`` over ``stat_length`` values), a ramp to ``end_values``
    (``"linear_ramp"``) or zeros (``"empty"``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.pad(fnp.ones(2), 1).tolist()
    [0.0, 1.0, 1.0, 0.0]
    >>> fnp.pad(fnp.arange(4.0), 2, mode="linear_ramp", end_values=(5, -1)).tolist()
    [5.0, 2.5, 0.0, 1.0, 2.0, 3.0, 1.0, -1.0]
    """
    check_arraylike("pad", array)
    if callable(mode):
        return _pad_with_function(array, pad_width, mode, kwargs)
    allowed = {"constant": {"constant_values"}, "edge": set(), "empty": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}, "wrap": set(),
               "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
               "minimum": {"stat_length"}, "mean": {"stat_length"}, "median": {"stat_length"}}
    if mode not in allowed:
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unexpected = set(kwargs) - allowed[mode]
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unexpected}")
    a = _arr(array)
    nd = get_aval(a).ndim
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2)
                             if np.ndim(pad_width) else np.full((1, 2), pad_width), (nd, 2))
    if (widths < 0).any():
        raise ShapeError(f"pad widths must be non-negative, got {pad_width}")
    dtype = get_aval(a).dtype
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0)
        if mode == "empty" or np.ndim(values) == 0:
            (val,) = promote_args(values if mode == "constant" else 0)
            return S.pad(a, cast(val, dtype), tuple((int(lo), int(hi), 0) for lo, hi in widths))
        per_side = np.broadcast_to(np.asarray(values).reshape(-1, 2)
                                   if np.ndim(values) > 1 else np.asarray(values), (nd, 2))
        return _pad_axes(a, widths, lambda out, ax, n, lo, hi: (
            _full_slab(out, ax, lo, per_side[ax][0], dtype),
            _full_slab(out, ax, hi, per_side[ax][1], dtype)))
    if mode == "edge":
        return _pad_axes(a, widths, lambda out, ax, n, lo, hi: (
            repeat(_slice_axis(out, ax, 0, 1), lo, ax),
            repeat(_slice_axis(out, ax, n - 1, n), hi, ax)))
    if mode in ("reflect", "symmetric", "wrap"):
        from funcgrad.numpy._indexing import take  # noqa: PLC0415 - _indexing imports us

        odd = kwargs.get("reflect_type", "even") == "odd"
        out = a
        for ax, (lo, hi) in enumerate(widths.tolist()):
            if lo or hi:  # NumPy's own index pattern, gathered: exact for any width
                n = get_aval(out).shape[ax]
                if odd and mode != "wrap":
                    # The odd reflection is linear in the values (2 * edge - v, repeated as
                    # NumPy extends it): NumPy's own map, applied along the axis.
                    from funcgrad.numpy._linalg import tensordot  # noqa: PLC0415

                    m = np.pad(np.eye(n), ((lo, hi), (0, 0)), mode=mode,  # type: ignore[call-overload]
                               reflect_type="odd")
                    moved = tensordot(m.astype(dtype), moveaxis(out, ax, 0), axes=1)
                    out = moveaxis(moved, 0, ax)
                    continue
                idx = np.pad(np.arange(n), (lo, hi), mode=mode)  # type: ignore[call-overload]
                out = take(out, idx, axis=ax)
        return out
    if mode == "linear_ramp":
        ends = np.broadcast_to(np.asarray(kwargs.get("end_values", 0)).reshape(-1, 2)
                               if np.ndim(kwargs.get("end_values", 0)) > 1
                               else np.asarray(kwargs.get("end_values", 0)), (nd, 2))
        return _pad_axes(a, widths, lambda out, ax, n, lo, hi: (
            _ramp(_slice_axis(out, ax, 0, 1), ends[ax][0], lo, ax, True, dtype),
            _ramp(_slice_axis(out, ax, n - 1, n), ends[ax][1], hi, ax, False, dtype)))
    stat_length = kwargs.get("stat_length")
    lengths = None if stat_length is None else np.broadcast_to(
        np.asarray(stat_length).reshape(-1, 2) if np.ndim(stat_length) > 1
        else np.asarray(stat_length), (nd, 2))
    return _pad_axes(a, widths, lambda out, ax, n, lo, hi: (
        repeat(_edge_stat(out, ax, n, mode, None if lengths is None else lengths[ax][0],
                          True, dtype), lo, ax),
        repeat(_edge_stat(out, ax, n, mode, None if lengths is None else lengths[ax][1],
                          False, dtype), hi, ax)))


def _pad_axes(a: Any, widths: Any, sides: Any) -> Any:
    """Pad axis by axis (later axes cover the corners, as NumPy's) with the two slabs
    ``sides(out, axis, length, lo, hi)`` gives."""
    out = a
    for ax, (lo, hi) in enumerate(widths.tolist()):
        if lo or hi:
            n = get_aval(out).shape[ax]
            before, after = sides(out, ax, n, lo, hi)
            out = S.concatenate([p for p, w in ((before, lo), (out, 1), (after, hi)) if w],
                                ax)
    return out


def _full_slab(out: Any, ax: int, width: int, value: Any, dtype: Any) -> Any:
    shape = list(get_aval(out).shape)
    shape[ax] = width
    return broadcast_to(cast(np.asarray(value).astype(dtype)[()], dtype), tuple(shape))


def _ramp(edge: Any, end: Any, width: int, ax: int, before: bool, dtype: Any) -> Any:
    """NumPy's linear_ramp: ``width`` values from the end value to the edge (excluded).
    Computed in the array's inexact dtype (bfloat16 included), as JAX's linspace is."""
    shape = [1] * get_aval(edge).ndim
    shape[ax] = width
    k = np.arange(width, dtype=np.float64)
    # before the array: end + (edge - end) k / w; after it: edge + (end - edge) (k + 1) / w
    frac = np.reshape(k / width if before else 1 - (k + 1) / width, shape)
    end_value = float(np.asarray(end))
    work = dtype if dtypes.is_inexact(np.dtype(dtype)) else dtypes.default_float()
    ramp = end_value + (edge.astype(work) - end_value) * frac.astype(work)
    if np.dtype(dtype).kind in "iu":
        from funcgrad.numpy._ufuncs import floor  # noqa: PLC0415

        ramp = floor(ramp)
    return ramp.astype(dtype)


def _edge_stat(out: Any, ax: int, n: int, mode: str, length: Any, before: bool,
               dtype: Any) -> Any:
    from funcgrad.numpy import _reductions as R  # noqa: PLC0415

    k = n if length is None else max(1, min(int(length), n))
    part = _slice_axis(out, ax, 0, k) if before else _slice_axis(out, ax, n - k, n)
    if mode == "maximum":
        return R.max(part, axis=ax, keepdims=True)
    if mode == "minimum":
        return R.min(part, axis=ax, keepdims=True)
    from funcgrad.numpy._statistics import median  # noqa: PLC0415

    stat = R.mean(part, axis=ax, keepdims=True) if mode == "mean" else \
        median(part, axis=ax, keepdims=True)
    if np.dtype(dtype).kind in "iu":
        from funcgrad.numpy._ufuncs import round as round_  # noqa: PLC0415

        stat = round_(stat)
    return stat.astype(dtype)


def _repeat_counts(a: Any, repeats: Any, ax: int, total: int | None) -> Any:
    # Per-element counts: concrete counts give a static index pattern; with
    # total_repeat_length, JAX's scatter-and-cumsum pattern (truncated, or padded with
    # the axis' last element), which also takes traced counts.
    from funcgrad.numpy._indexing import take  # noqa: PLC0415 - _indexing imports us

    n = get_aval(a).shape[ax]
    if isinstance(repeats, Tracer):
        if repeats.concrete_value() is None and total is not None:
            return take(a, _repeat_pattern_traced(repeats, n, total), axis=ax)
        repeats = repeats._concrete(_REPEAT_STATIC, ConcretizationTypeError)
    # (NumPy's broadcast error for counts of another length, as JAX's.)
    counts = np.broadcast_to(np.ravel(np.asarray(repeats)).astype(np.int64), (n,))
    if total is None:
        total = int(counts.sum())
    # JAX's pattern: a mark at each element's start (negative starts index from the end,
    # as ``.at[]``; those past the end dropped), cumulated.
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    starts = np.where(starts < 0, starts + total, starts)
    marks = np.zeros(max(total, 0), np.int64)
    np.add.at(marks, starts[(starts >= 0) & (starts < total)], 1)
    idx = np.cumsum(marks) - 1
    return take(a, idx.astype(np.int64), axis=ax)


_REPEAT_STATIC = ("When jit-compiling jnp.repeat, the total number of repeats must be static. "
                  "To fix this, either specify a static value for `repeats`, or pass a static "
                  "value to `total_repeat_length`.")


def _repeat_pattern_traced(repeats: Any, n: int, total: int) -> Any:
    from funcgrad.numpy._reductions import cumsum  # noqa: PLC0415
    from funcgrad.numpy._ufuncs import subtract  # noqa: PLC0415

    counts = broadcast_to(_arr(repeats).astype(np.int32), (n,))
    starts = concatenate([np.zeros(1, np.int32), cumsum(counts)[:-1]])
    marks = _zeros_i32(total).at[starts].add(1, mode="drop")
    return subtract(cumsum(marks), 1)


def _zeros_i32(n: int) -> Any:
    from funcgrad.numpy._creation import zeros  # noqa: PLC0415

    return zeros(n, np.int32)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """n-th discrete difference along ``axis`` (booleans differ by ``!=``), with values
    ``prepend``-ed and ``append``-ed first.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diff(fnp.array([1.0, 4.0, 9.0])).tolist()
    [3.0, 5.0]
    >>> fnp.diff(fnp.array([1, 5, 2]), n=2, prepend=0, append=fnp.array([9])).tolist()
    [3, -7, 10]
    """
    check_arraylike("diff", a)
    from funcgrad.numpy._ufuncs import not_equal, subtract  # noqa: PLC0415

    out = _arr(a)
    ax = canonical_axis(axis, get_aval(out).ndim)
    if prepend is not None or append is not None:
        shape = list(get_aval(out).shape)
        parts = [p for p in (_arr(prepend) if prepend is not None else None, out,
                             _arr(append) if append is not None else None) if p is not None]
        # A scalar stands for one slice along the axis, as in NumPy.
        parts = [broadcast_to(p, tuple(shape[:ax] + [1] + shape[ax + 1:]))
                 if get_aval(p).ndim == 0 else p for p in parts]
        out = concatenate(parts, axis=ax)
    boolean = np.dtype(get_aval(out).dtype).kind == "b"
    for _ in range(n):
        m = get_aval(out).shape[ax]
        if m <= 1:
            return _slice_axis(out, ax, 0, 0)
        hi, lo = _slice_axis(out, ax, 1, m), _slice_axis(out, ax, 0, m - 1)
        out = not_equal(hi, lo) if boolean else subtract(hi, lo)
    return out
