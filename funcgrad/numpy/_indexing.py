"""Indexing: ``x[idx]`` with NumPy's basic and advanced rules, functional updates
(``x.at[idx].set(v)``, ``index_update``, ``index_add``), ``take`` and ``take_along_axis``.

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> fnp.index_add(np.zeros(3), np.array([0, 0, 2]), 1.0).tolist()
[2.0, 0.0, 1.0]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import IndexingError
from funcgrad.numpy._core import asarray, broadcast_shapes, broadcast_to_shape, cast, promote_args
from funcgrad.numpy._shape import _arr
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import indexing as I
from funcgrad.primitives import structural as S
from funcgrad.source_info import user_frame


def _is_int_scalar(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _as_index_array(i: Any) -> Any:
    """Advanced index → integer array or tracer (booleans become their nonzero positions)."""
    if isinstance(i, Tracer):
        dt = i.aval.dtype
        if dt.kind == "b":
            raise IndexingError(
                f"a traced boolean mask as an index has a data-dependent shape (at "
                f"{user_frame()}); use funcgrad.numpy.where(mask, x, 0) instead"
            )
        if dt.kind not in "iu":
            raise IndexingError(f"indices must be integers, got {dt} (at {user_frame()})")
        return i
    arr = np.asarray(i)
    if arr.dtype.kind not in "iub":
        raise IndexingError(f"indices must be integers or booleans, got {arr.dtype} "
                            f"(at {user_frame()})")
    return arr


def _expand_index(idx: Any, ndim: int) -> list[Any]:
    """Tuple of entries with Ellipsis expanded and boolean arrays split per axis."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    entries: list[Any] = []
    for i in idx:
        if isinstance(i, (list, np.ndarray)) and not isinstance(i, Tracer):
            arr = np.asarray(i)
            if arr.dtype.kind == "b":
                entries.extend(np.nonzero(arr))
                continue
            i = arr
        entries.append(i)
    consumed = sum(1 for e in entries if e is not None and e is not Ellipsis)
    n_ell = sum(1 for e in entries if e is Ellipsis)
    if n_ell > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexingError(
            f"too many indices for an array of rank {ndim}: {consumed} were given "
            f"(at {user_frame()})"
        )
    out: list[Any] = []
    for e in entries:
        if e is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(e)
    if not n_ell:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def getitem(x: Any, idx: Any) -> Any:
    """``x[idx]`` with NumPy semantics (out-of-range traced indices are clamped).

    >>> import funcgrad.numpy as fnp
    >>> fnp.getitem(fnp.arange(10.0).reshape(2, 5), (1, slice(None, None, -2))).tolist()
    [9.0, 7.0, 5.0]
    """
    x = _arr(x)
    shape = get_aval(x).shape
    entries = _expand_index(idx, len(shape))
    # New axes first, so that every entry then indexes exactly one axis.
    new_axes = [k for k, e in enumerate(entries) if e is None]
    if new_axes:
        x = S.expand_dims(x, new_axes)
        entries = [slice(None) if e is None else e for e in entries]
        shape = get_aval(x).shape
    advanced = [k for k, e in enumerate(entries)
                if not isinstance(e, slice) and not _is_int_scalar(e)]
    if advanced:
        entries = [e if isinstance(e, slice) else _as_index_array(e) for e in entries]
        advanced = [k for k, e in enumerate(entries) if not isinstance(e, slice)]
    x = _apply_slices(x, entries)
    if not advanced:
        ints = [k for k, e in enumerate(entries) if not isinstance(e, slice)]
        return S.squeeze(x, ints)
    return _apply_advanced(x, [entries[k] for k in advanced], advanced)


def _apply_slices(x: Any, entries: list[Any]) -> Any:
    """Apply slices (and Python ints, as width-1 slices) axis by axis."""
    shape = get_aval(x).shape
    starts, limits, strides, flips = [], [], [], []
    for ax, e in enumerate(entries):
        n = shape[ax]
        if isinstance(e, slice):
            start, stop, step = e.indices(n)
            count = len(range(start, stop, step))
            if step < 0:
                flips.append(ax)
                start, step = n - 1 - start, -step
            starts.append(start)
            limits.append(start + (count - 1) * step + 1 if count else start)
            strides.append(step)
        elif _is_int_scalar(e):
            i = operator.index(e)
            if not -n <= i < n:
                raise IndexingError(
                    f"index {i} is out of bounds for axis {ax} with size {n} (at {user_frame()})"
                )
            i %= n
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(n)
            strides.append(1)
    x = S.rev(x, flips)
    return S.slice_(x, starts, limits, strides)


def _normalize_index(i: Any, n: int, axis: int) -> Any:
    if isinstance(i, Tracer):
        i = E.convert_element_type(i, dtypes.int64)
        return E.select(E.lt(i, 0), E.add(i, n), i)
    arr = np.asarray(i, dtype=np.int64)
    if arr.size and (arr.min() < -n or arr.max() >= n):
        bad = arr[(arr < -n) | (arr >= n)].flat[0]
        raise IndexingError(
            f"index {bad} is out of bounds for axis {axis} with size {n} (at {user_frame()})"
        )
    return np.where(arr < 0, arr + n, arr)


def _apply_advanced(x: Any, indices: list[Any], axes: list[int]) -> Any:
    shape = get_aval(x).shape
    norm = [_normalize_index(i, shape[a], a) for i, a in zip(indices, axes)]
    bshape = broadcast_shapes(*(get_aval(i).shape for i in norm))
    norm = [broadcast_to_shape(i, bshape) for i in norm]
    rest = [a for a in range(len(shape)) if a not in axes]
    x = S.transpose(x, axes + rest)
    stacked = S.concatenate([S.expand_dims(i, (len(bshape),)) for i in norm], len(bshape))
    out = I.gather(x, stacked)
    # NumPy puts the broadcast index axes where the advanced indices were when they are
    # adjacent, and in front otherwise.
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    if adjacent and axes[0] > 0:
        nb = len(bshape)
        n_rest = len(rest)
        before = axes[0]
        perm = list(range(nb, nb + before)) + list(range(nb)) + list(range(nb + before,
                                                                           nb + n_rest))
        out = S.transpose(out, perm)
    return out


def _scatter(x: Any, idx: Any, values: Any, prim: Any) -> Any:
    x = _arr(x)
    aval = get_aval(x)
    # The positions idx selects, found by indexing a counting array of x's shape.
    positions = getitem(np.arange(aval.size, dtype=np.int64).reshape(aval.shape), idx)
    pshape = get_aval(positions).shape
    (v,) = promote_args(values)
    v = cast(v, aval.dtype)
    if dtypes.python_scalar(v) or get_aval(v).shape != pshape:
        v = broadcast_to_shape(cast(v, aval.dtype), pshape)
    flat = S.reshape(x, (aval.size,))
    count = int(np.prod(pshape))
    ids = S.reshape(positions, (count, 1))
    upd = S.reshape(v, (count,))
    return S.reshape(prim(flat, ids, upd), aval.shape)


def index_update(x: Any, idx: Any, values: Any) -> Any:
    """A copy of ``x`` with ``x[idx] = values`` (functional; duplicates: one value wins).

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.index_update(np.zeros(3), 1, 5.0).tolist()
    [0.0, 5.0, 0.0]
    """
    return _scatter(x, idx, values, I.scatter)


def index_add(x: Any, idx: Any, values: Any) -> Any:
    """A copy of ``x`` with ``x[idx] += values``, accumulating repeated indices.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.index_add(np.zeros(2), [0, 0], 1.0).tolist()
    [2.0, 0.0]
    """
    return _scatter(x, idx, values, I.scatter_add)


class _IndexedRef:
    __slots__ = ("x", "idx")

    def __init__(self, x: Any, idx: Any) -> None:
        self.x, self.idx = x, idx

    def get(self) -> Any:
        """``x[idx]``."""
        return getitem(self.x, self.idx)

    def set(self, values: Any) -> Any:
        """A copy of ``x`` with ``x[idx] = values``."""
        return index_update(self.x, self.idx, values)

    def add(self, values: Any) -> Any:
        """A copy of ``x`` with ``x[idx] += values``."""
        return index_add(self.x, self.idx, values)

    def multiply(self, values: Any) -> Any:
        """A copy of ``x`` with ``x[idx] *= values``."""
        from funcgrad.numpy._ufuncs import multiply  # noqa: PLC0415

        return index_update(self.x, self.idx, multiply(self.get(), values))


class AtIndexer:
    """``x.at[idx].set(v)`` / ``.add(v)`` / ``.get()``: functional updates.

    >>> import numpy as np
    >>> from funcgrad.numpy import at
    >>> at(np.zeros(2))[0].set(1.0).tolist()
    [1.0, 0.0]
    """

    __slots__ = ("x",)

    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, idx: Any) -> _IndexedRef:
        return _IndexedRef(self.x, idx)


def at(x: Any) -> AtIndexer:
    """The ``.at`` helper of any array (NumPy arrays have no ``.at`` of their own)."""
    return AtIndexer(asarray(x))


def take(a: Any, indices: Any, axis: int | None = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.take(fnp.arange(5.0), [4, 0]).tolist()
    [4.0, 0.0]
    """
    a = _arr(a)
    if axis is None:
        a = S.reshape(a, (get_aval(a).size,))
        axis = 0
    nd = get_aval(a).ndim
    from funcgrad.numpy._core import canonical_axis  # noqa: PLC0415

    ax = canonical_axis(axis, nd)
    idx = asarray(indices)
    if not isinstance(idx, Tracer):
        idx = np.asarray(idx)
        if idx.dtype.kind not in "iu":
            raise IndexingError(f"take indices must be integers, got {idx.dtype}")
    return getitem(a, (slice(None),) * ax + (idx,))


def take_along_axis(arr: Any, indices: Any, axis: int) -> Any:
    """Pick values along ``axis`` with an index array of the same rank.

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.take_along_axis(np.array([[1.0, 2.0]]), np.array([[1]]), 1).tolist()
    [[2.0]]
    """
    arr = _arr(arr)
    shape = get_aval(arr).shape
    from funcgrad.numpy._core import canonical_axis  # noqa: PLC0415

    ax = canonical_axis(axis, len(shape))
    idx = asarray(indices)
    ishape = get_aval(idx).shape
    if len(ishape) != len(shape):
        raise IndexingError(f"indices of rank {len(ishape)} for an array of rank {len(shape)}; "
                            "they must have the same rank")
    full_idx: list[Any] = []
    for d in range(len(shape)):
        if d == ax:
            full_idx.append(idx)
        else:
            r = [1] * len(shape)
            r[d] = shape[d]
            full_idx.append(np.arange(shape[d]).reshape(r))
    return getitem(arr, tuple(full_idx))
