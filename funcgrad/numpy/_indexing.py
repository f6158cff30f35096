"""Indexing with JAX's semantics: ``x[idx]`` (NumPy's basic and advanced rules; indices
out of range are clamped), functional updates ``x.at[idx].set/add/multiply/...(v,
mode=...)`` (updates out of range are dropped), ``take`` and ``take_along_axis``.

>>> import funcgrad.numpy as fnp
>>> x = fnp.zeros(3)
>>> x.at[fnp.array([0, 0, 2, 9])].add(1.0).tolist()
[2.0, 0.0, 1.0]
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl, wrap
from funcgrad.config import config
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import (
    IndexingError,
    IndexTypeError,
    NonConcreteBooleanIndexError,
    ShapeError,
)
from funcgrad.ir import ShapedArray
from funcgrad.numpy._core import (
    asarray,
    broadcast_shapes,
    broadcast_to_shape,
    cast,
    check_arraylike,
    promote_args,
)
from funcgrad.numpy._shape import _arr
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import indexing as I
from funcgrad.primitives import structural as S
from funcgrad.primitives.rules import place_like
from funcgrad.source_info import user_frame, user_stacklevel


def _is_int_scalar(i: Any) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _dynamic(i: Any) -> bool:
    """Whether an index is used where it is (a tracer, or an integer array on a GPU, which is
    not copied to the host: negative and out-of-range indices are handled on the device)."""
    return isinstance(i, Tracer) or (type(i) is ArrayImpl and type(i._value) is not np.ndarray
                                     and i._aval.dtype.kind in "iu")


def _concrete(i: Any) -> Any:
    """The NumPy value of a concrete Array (indices are read on the host)."""
    return np.asarray(i) if type(i) is ArrayImpl else i


def _as_index_array(i: Any) -> Any:
    """Advanced index → integer array or tracer (booleans become their nonzero positions)."""
    if _dynamic(i):
        dt = i.aval.dtype
        if dt.kind == "b":
            raise NonConcreteBooleanIndexError(
                f"Array boolean indices must be concrete; got {i.aval.str_short()}"
                "\n\nSee https://docs.jax.dev/en/latest/errors.html"
                "#jax.errors.NonConcreteBooleanIndexError"
            )
        if dt.kind not in "iu":
            raise IndexTypeError(f"Indexer must have integer or boolean type, got indexer "
                                 f"with type {dt}")
        return i
    if isinstance(i, str):
        raise IndexTypeError(f"JAX does not support string indexing; got idx={i!r}")
    arr = np.asarray(_concrete(i))
    if arr.dtype.kind not in "iub":
        raise IndexTypeError(f"Indexer must have integer or boolean type, got indexer with "
                             f"type {arr.dtype}")
    return arr


def _is_scalar_bool(i: Any) -> bool:
    """A concrete boolean scalar index (Python's, NumPy's or a 0-d Array)."""
    if isinstance(i, (bool, np.bool_)):
        return True
    return (isinstance(i, (np.ndarray, ArrayImpl)) and not _dynamic(i) and np.ndim(i) == 0
            and np.asarray(_concrete(i)).dtype.kind == "b")


def _expand_index(idx: Any, ndim: int) -> list[Any]:
    """Tuple of entries with Ellipsis expanded and boolean arrays split per axis."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    entries: list[Any] = []
    for position, i in enumerate(idx):
        if isinstance(i, slice) and any(isinstance(v, Tracer) for v in (i.start, i.stop, i.step)):
            # (JAX's text, and its IndexError: the slice's bounds shape the result)
            raise IndexingError(f"Slice entries must be static integers. Got {i} at position "
                                f"{position}")
        if type(i) is ArrayImpl and i.aval.ndim == 0 and i.aval.dtype.kind in "iu":
            i = int(i)
        elif _is_scalar_bool(i):
            # A new axis of length 1 (True) or 0 (False), indexed as NumPy and JAX do:
            # kept as a NumPy bool, which consumes no axis of x.
            entries.append(np.bool_(_concrete(i)))
            continue
        elif isinstance(i, (list, np.ndarray, ArrayImpl)) and not _dynamic(i):
            arr = np.asarray(_concrete(i))
            if arr.dtype.kind == "b":
                entries.extend(np.nonzero(arr))
                continue
            i = arr
        elif isinstance(i, Tracer) and i.aval.dtype.kind == "b":
            _as_index_array(i)
        entries.append(i)
    consumed = sum(1 for e in entries
                   if e is not None and e is not Ellipsis and not isinstance(e, np.bool_))
    n_ell = sum(1 for e in entries if e is Ellipsis)
    if n_ell > 1:
        raise IndexingError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexingError(
            f"Too many indices: array is {ndim}-dimensional, but {consumed} were indexed")
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
    new_axes = [k for k, e in enumerate(entries) if e is None or isinstance(e, np.bool_)]
    if new_axes:
        x = S.expand_dims(x, new_axes)
        # (a scalar boolean indexes its new axis with the positions it keeps: [0] or [])
        entries = [slice(None) if e is None else np.arange(int(e)) if isinstance(e, np.bool_)
                   else e for e in entries]
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
            if n == 0:
                raise IndexingError(f"index is out of bounds for axis {ax} with size 0")
            # JAX clamps an index out of range (after wrapping a negative one once).
            i = min(max(i + n if i < 0 else i, 0), n - 1)
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
    """Negative indices wrapped once (the gather clamps what is still out of range)."""
    if _dynamic(i):
        i = E.convert_element_type(i, _index_dtype(i))
        return E.select(E.lt(i, 0), E.add(i, n), i)
    arr = np.asarray(i).astype(np.int64)
    return np.where(arr < 0, arr + n, arr)


def _index_dtype(i: Any) -> Any:
    dt = get_aval(i).dtype
    return dt if dt.kind == "i" and dt.itemsize >= 4 else dtypes.int64


def _apply_advanced(x: Any, indices: list[Any], axes: list[int]) -> Any:
    shape = get_aval(x).shape
    norm = [_normalize_index(i, shape[a], a) for i, a in zip(indices, axes)]
    dyn = next((i for i in norm if _dynamic(i)), None)
    if dyn is not None:
        # Host index arrays join the dynamic ones where those are (a GPU's, eagerly).
        norm = [E.convert_element_type(place_like(i, dyn) if type(i) is np.ndarray else i,
                                       dtypes.int64) for i in norm]
    bshape = broadcast_shapes(*(get_aval(i).shape for i in norm))
    norm = [broadcast_to_shape(i, bshape) for i in norm]
    rest = [a for a in range(len(shape)) if a not in axes]
    x = S.transpose(x, axes + rest)
    stacked = S.concatenate([S.expand_dims(i, (len(bshape),)) for i in norm], len(bshape))
    if not 0 < len(norm):
        raise IndexingError(f"index is out of bounds for an axis of size 0 (at {user_frame()})")
    if any(shape[a] == 0 for a in axes):
        # An axis of size 0 can only be indexed by an empty index (JAX's gather refuses
        # any other): the result is empty too, of the shape the gather would have.
        if math.prod(bshape):
            raise IndexingError(f"index is out of bounds for an axis of size 0 (at "
                                f"{user_frame()})")
        out = S.reshape(x, (*bshape, *(shape[a] for a in rest)))
    else:
        out = I.gather(x, stacked, "clip")
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


# ------------------------------------------------------------------ updates

# The modes of ``.at[...]``: JAX's GatherScatterMode names.
_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


def _check_update_shape(v: Any, shape: tuple[int, ...]) -> Any:
    """``v`` if it broadcasts to ``shape`` (the updated elements'), else JAX's error."""
    av = get_aval(v)
    if len(av.shape) > len(shape):
        raise ShapeError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={av.shape} shape={shape}")
    if any(a not in (1, b) for a, b in zip(av.shape[::-1], shape[::-1])):
        dt = av.dtype.name
        raise ShapeError(f"Incompatible types for broadcasting: input type={dt}"
                         f"[{','.join(map(str, av.shape))}] and requested type={dt}"
                         f"[{','.join(map(str, shape))}]")
    return v


def _check_mode(mode: Any) -> str | None:
    m = getattr(mode, "name", mode)
    if isinstance(m, str):
        m = m.lower()
    if m not in _MODES:
        raise ValueError(f'Unknown gather mode "{mode}"')
    return m


def _coordinates(shape: tuple[int, ...], entries: list[Any], clip: bool) -> tuple[Any, bool]:
    """Flat positions in ``x`` of every element ``x[entries]`` addresses, shaped like
    ``x[entries]``; an out-of-range index gives the position ``x.size`` (one past the end)
    unless ``clip`` clamps it. Returns (positions, traced)."""
    nd = len(shape)
    size = math.prod(shape)
    padded = tuple(n + 1 for n in shape)
    fixed: list[Any] = []
    traced: Any = False  # a dynamic index (a tracer or a device array), if there is one
    ax = 0
    for e in entries:
        if e is None or isinstance(e, np.bool_):  # (NumPy indexes the padded zeros alike)
            fixed.append(e)
            continue
        n = shape[ax]
        if isinstance(e, slice):
            r = range(*e.indices(n))
            # Spelled with non-negative bounds: on the padded axis a negative bound would
            # count from the padding entry.
            if not r:
                fixed.append(slice(0, 0, 1))
            elif r.step > 0:
                fixed.append(slice(r[0], r[-1] + 1, r.step))
            else:
                fixed.append(slice(r[0], r[-1] - 1 if r[-1] > 0 else None, r.step))
        elif _is_int_scalar(e):
            i = operator.index(e)
            i = i + n if i < 0 else i
            fixed.append(min(max(i, 0), n - 1) if clip else (i if 0 <= i < n else n))
        elif _dynamic(e):
            traced = e
            i = E.convert_element_type(e, dtypes.int64)
            i = E.select(E.lt(i, 0), E.add(i, n), i)
            if clip:
                i = E.min_(E.max_(i, 0), max(n - 1, 0))
            else:
                bad = E.or_p.bind(E.lt(i, 0), E.ge(i, n))
                i = E.select(bad, I.full_like_index(i, n), i)
            fixed.append(i)
        else:
            a = _as_index_array(e).astype(np.int64)  # (refusing float and string indices)
            a = np.where(a < 0, a + n, a)
            a = np.clip(a, 0, max(n - 1, 0)) if clip else np.where((a < 0) | (a >= n), n, a)
            fixed.append(a)
        ax += 1
    strides = [math.prod(shape[k + 1:]) for k in range(nd)]
    # Indexing zeros of the padded shape gives the result's shape (new axes included).
    zeros = np.broadcast_to(np.zeros((), np.int64), padded)
    if traced is False:
        pos = zeros[tuple(fixed)]
        invalid = np.zeros(pos.shape, bool)
        for k in range(nd):
            view = np.broadcast_to(
                np.arange(padded[k]).reshape([-1 if j == k else 1 for j in range(nd)]), padded)
            ck = view[tuple(fixed)]
            pos = pos + ck * strides[k]
            invalid = invalid | (ck == shape[k])
        return np.where(invalid, size, pos), False
    # One small coordinate table per axis (its length, shaped to broadcast along it), never
    # a table of x's whole (padded) shape: that would be a constant of x's size in every
    # program indexing x with a traced index. For axis k, every other axis is addressed at
    # its first entry by an entry of the same kind (so NumPy's placement of the advanced
    # dimensions is kept), and the coordinates broadcast to the result's shape. The tables
    # go where the dynamic indices are (a GPU's, eagerly).
    placed = [_placed(e, traced) if type(e) is np.ndarray else e for e in fixed]
    stand_ins = [e if e is None or isinstance(e, (slice, int, np.bool_)) else
                 np.zeros(get_aval(e).shape, np.int8) for e in placed]
    out_shape = np.broadcast_to(np.zeros((), np.int8), padded)[tuple(stand_ins)].shape
    firsts = [e if e is None or isinstance(e, np.bool_) else slice(0, 1)
              if isinstance(e, slice) else 0 if isinstance(e, int) else E.mul(e, 0)
              for e in placed]
    axis_at = [j for j, e in enumerate(placed) if e is not None and not isinstance(e, np.bool_)]
    pos_t: Any = None
    bad_t: Any = None
    for k, j in enumerate(axis_at):
        axis_entries = (*firsts[:j], placed[j], *firsts[j + 1:])
        ck = broadcast_to_shape(getitem(_axis_table(padded[k], k, nd, traced), axis_entries),
                                out_shape)
        term = E.mul(ck, strides[k]) if strides[k] != 1 else ck
        pos_t = term if pos_t is None else E.add(pos_t, term)
        hit = E.eq(ck, shape[k])
        bad_t = hit if bad_t is None else E.or_p.bind(bad_t, hit)
    return E.select(bad_t, I.full_like_index(pos_t, size), pos_t), True


# Axis tables already placed, by (length, axis, rank, device): an eager update indexed by a
# GPU array would otherwise upload them on every call. They are only ever read by a gather
# (never handed out, so never written).
_AXIS_TABLES: dict[tuple[Any, ...], Any] = {}


def _axis_table(n: int, k: int, nd: int, like: Any) -> Any:
    """``arange(n)`` along axis ``k`` of ``nd`` (size 1 on the others) where ``like`` is."""
    buf = like._value if type(like) is ArrayImpl else None
    where = None if buf is None or type(buf) is np.ndarray else \
        (type(buf), getattr(getattr(buf, "device", None), "id", None))
    key = (n, k, nd, where)
    table = _AXIS_TABLES.get(key)
    if table is None:
        if len(_AXIS_TABLES) >= 256:
            _AXIS_TABLES.clear()
        table = _placed(np.arange(n).reshape([-1 if a == k else 1 for a in range(nd)]), like)
        if where is not None or not isinstance(like, Tracer):
            _AXIS_TABLES[key] = table
    return table


def _placed(table: np.ndarray, like: Any) -> Any:
    """A host table as an Array on the device of ``like`` (the host, unless it is on a GPU)."""
    placed = place_like(np.ascontiguousarray(table), like)
    if type(placed) is np.ndarray:
        return wrap(table, ShapedArray.make(table.shape, table.dtype))
    return wrap(placed, ShapedArray.make(table.shape, table.dtype))


def _positions(x: Any, idx: Any, clip: bool) -> Any:
    shape = get_aval(x).shape
    return _coordinates(shape, _expand_index(idx, len(shape)), clip)[0]


def _warn_unsafe_cast(values: Any, dtype: Any) -> None:
    """JAX's FutureWarning for update values that its promotion would not cast to the
    array's ``dtype`` (``x.at[i].set(1.5)`` on integers): they are cast anyway, as in JAX."""
    vdt = dtypes.result_type(values)
    if vdt != dtype and dtypes.result_type(values, np.dtype(dtype)) != dtype:
        promotion = config.read("jax_numpy_dtype_promotion") or "standard"
        warnings.warn(
            "scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={vdt} to dtype={np.dtype(dtype)} with jax_numpy_dtype_promotion="
            f"{promotion}. In future JAX releases this will result in an error.",
            FutureWarning, stacklevel=user_stacklevel())


def _flat_update(x: Any, idx: Any, values: Any, mode: Any,
                 prim: Callable[..., Any], **params: Any) -> Any:
    """``x`` with ``prim`` (a scatter) applied at the elements ``x[idx]`` addresses."""
    x = _arr(x)
    m = _check_mode(mode)
    aval = get_aval(x)
    pos = _positions(x, idx, clip=m == "clip")
    pshape = get_aval(pos).shape
    (v,) = promote_args(values)
    _warn_unsafe_cast(v, aval.dtype)
    v = cast(v, aval.dtype)
    if dtypes.python_scalar(v) or get_aval(v).shape != pshape:
        v = broadcast_to_shape(_check_update_shape(cast(v, aval.dtype), pshape), pshape)
    count = math.prod(pshape)
    flat = S.reshape(x, (aval.size,))
    ids = I.indices_for(S.reshape(pos, (count, 1)), flat)
    upd = S.reshape(v, (count,))
    out = prim(flat, ids, upd, mode="clip" if m == "clip" else "drop", **params)
    return S.reshape(out, aval.shape)


def _basic_index(idx: Any) -> bool:
    parts = idx if isinstance(idx, tuple) else (idx,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, np.integer, slice))
               and not isinstance(p, bool) for p in parts)


def _flat_get(x: Any, idx: Any, mode: Any, fill_value: Any) -> Any:
    m = _check_mode(mode)
    if m in (None, "promise_in_bounds", "clip"):
        return getitem(x, idx)
    x = _arr(x)
    aval = get_aval(x)
    pos = _positions(x, idx, clip=False)
    pshape = get_aval(pos).shape
    flat = S.reshape(x, (aval.size,))
    fill = None if fill_value is None else _fill_scalar(fill_value, aval.dtype)
    out = I.gather(flat, S.expand_dims(pos, (len(pshape),)), "fill", fill)
    return out


def _fill_scalar(v: Any, dt: Any) -> Any:
    return np.asarray(v, dtype=dt).item()


def index_update(x: Any, idx: Any, values: Any) -> Any:
    """A copy of ``x`` with ``x[idx] = values`` (functional; duplicates: the last one wins).

    >>> import funcgrad.numpy as fnp
    >>> fnp.index_update(fnp.zeros(3), 1, 5.0).tolist()
    [0.0, 5.0, 0.0]
    """
    return _flat_update(x, idx, values, None, I.scatter_p.bind)


def index_add(x: Any, idx: Any, values: Any) -> Any:
    """A copy of ``x`` with ``x[idx] += values``, accumulating repeated indices.

    >>> import funcgrad.numpy as fnp
    >>> fnp.index_add(fnp.zeros(2), [0, 0], 1.0).tolist()
    [2.0, 0.0]
    """
    return _flat_update(x, idx, values, None, I.scatter_add_p.bind)


class _IndexedRef:
    """``x.at[idx]``: the update methods, each with JAX's ``mode`` (and ``fill_value``)."""

    __slots__ = ("x", "idx")

    def __init__(self, x: Any, idx: Any) -> None:
        self.x, self.idx = x, idx

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.x!r}, {self.idx!r})"  # JAX's class name

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None) -> Any:
        """``x[idx]``; out-of-range indices clamp, or read ``fill_value`` with
        ``mode="fill"`` (NaN by default for floats)."""
        return _flat_get(self.x, self.idx, mode, fill_value)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] = values``."""
        return _flat_update(self.x, self.idx, values, mode, I.scatter_p.bind)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] += values`` (repeats accumulate)."""
        return _flat_update(self.x, self.idx, values, mode, I.scatter_add_p.bind)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] -= values``."""
        from funcgrad.numpy._ufuncs import negative  # noqa: PLC0415

        return self.add(negative(values), mode=mode)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] *= values`` (once per occurrence of an index)."""
        # A basic index (ints, slices) addresses each element once: JAX's indexer marks it
        # unique, which makes the multipliers differentiable.
        return _flat_update(self.x, self.idx, values, mode, I.scatter_mul_p.bind,
                            unique_indices=bool(unique_indices) or _basic_index(self.idx))

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] /= values``."""
        from funcgrad.numpy._ufuncs import divide  # noqa: PLC0415

        x = _arr(self.x)
        xdt = get_aval(x).dtype
        if not dtypes.is_inexact(xdt):
            # As JAX: the values are cast to x's integer type (with its FutureWarning), then
            # x and they are divided in the floating type integer division gives.
            fdt = get_aval(divide(np.zeros((), xdt), np.zeros((), xdt))).dtype
            values = _arr(values)
            vaval = get_aval(values)
            # (a weak value casts safely within its kind: a Python int to any integer type)
            if not (np.can_cast(vaval.dtype, xdt, "safe") or vaval.weak_type and (
                    vaval.dtype.kind in "iu") == (xdt.kind in "iu")):
                warnings.warn(
                    f"scatter inputs have incompatible types: cannot safely cast value from "
                    f"dtype={vaval.dtype} to dtype={xdt} with jax_numpy_dtype_promotion="
                    "standard. In future JAX releases this will result in an error.",
                    FutureWarning, stacklevel=2)
            values = values.astype(xdt).astype(fdt)
            x = x.astype(fdt)
        return _IndexedRef(x, self.idx).multiply(divide(1, values), unique_indices=unique_indices,
                                              mode=mode)

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] **= values`` (in turn for each occurrence of an
        index, as JAX: ``(x ** v1) ** v2``)."""
        from funcgrad.numpy._ufuncs import power  # noqa: PLC0415

        return _apply(self.x, self.idx, power, mode, values)

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] = minimum(x[idx], values)``."""
        return _flat_update(self.x, self.idx, values, mode, I.scatter_min_p.bind)

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``x[idx] = maximum(x[idx], values)``."""
        return _flat_update(self.x, self.idx, values, mode, I.scatter_max_p.bind)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None) -> Any:
        """A copy of ``x`` with ``func`` applied at ``idx`` (once per occurrence)."""
        return _apply(self.x, self.idx, lambda t, _: func(t), mode, None)


def _occurrence_rank(pos: np.ndarray) -> np.ndarray:
    """For each update, how many earlier updates name the same element."""
    order = np.argsort(pos, kind="stable")
    ranked = pos[order]
    first = np.ones(ranked.shape, bool)
    first[1:] = ranked[1:] != ranked[:-1]
    group_start = np.maximum.accumulate(np.where(first, np.arange(ranked.size), 0))
    rank = np.empty(pos.shape, np.int64)
    rank[order] = np.arange(ranked.size) - group_start
    return rank


def _apply(x: Any, idx: Any, func: Callable[[Any, Any], Any], mode: Any, values: Any) -> Any:
    """``x`` with ``x[p] = func(x[p], v)`` for each addressed element ``p`` and its update
    ``v``, in turn for repeated elements (so ``power`` gives ``(x ** v1) ** v2``)."""
    x = _arr(x)
    m = _check_mode(mode)
    aval = get_aval(x)
    pos = _positions(x, idx, clip=m == "clip")
    pshape = get_aval(pos).shape
    count = math.prod(pshape)
    flat = S.reshape(x, (aval.size,))
    smode = "clip" if m == "clip" else "drop"
    vflat = None
    if values is not None:
        (v,) = promote_args(values)
        _warn_unsafe_cast(v, aval.dtype)
        v = cast(v, aval.dtype)
        if dtypes.python_scalar(v) or get_aval(v).shape != pshape:
            v = broadcast_to_shape(_check_update_shape(v, pshape), pshape)
        vflat = S.reshape(v, (count,))
    if _dynamic(pos):
        # Which updates repeat is only known at run time: one round per update, in order.
        groups = [np.array([j]) for j in range(count)]
        ids_all = S.reshape(pos, (count, 1))
    else:
        # One round per multiplicity: round k applies every k-th occurrence at once.
        rank = _occurrence_rank(np.asarray(pos).reshape(count))
        groups = [np.nonzero(rank == k)[0] for k in range(int(rank.max(initial=-1)) + 1)]
        ids_all = np.asarray(pos).reshape(count, 1)
    for sel in groups:
        if _dynamic(ids_all):
            ids = I.gather(ids_all, sel.reshape(-1, 1), "clip", None)
        else:
            ids = ids_all[sel]
        cur = I.gather(flat, ids, "fill", 0)
        val = None if vflat is None else I.gather(vflat, sel.reshape(-1, 1), "clip", None)
        new = cast(asarray(func(cur, val)), aval.dtype)
        flat = I.scatter(flat, ids, new, smode)
    return S.reshape(flat, aval.shape)


class AtIndexer:
    """``x.at[idx].set(v)`` / ``.add(v)`` / ``.get()`` / ...: functional updates.

    >>> import numpy as np
    >>> from funcgrad.numpy import at
    >>> at(np.zeros(2))[0].set(1.0).tolist()
    [1.0, 0.0]
    """

    __slots__ = ("x",)

    def __init__(self, x: Any) -> None:
        self.x = x

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.x!r})"  # JAX's class name

    def __getitem__(self, idx: Any) -> _IndexedRef:
        if type(idx) is list:
            refuse_list_index(idx)
        return _IndexedRef(self.x, idx)


def refuse_list_index(seq: list[Any]) -> None:
    """JAX's TypeError for ``x[[0, 1]]`` (NumPy once read it as a tuple of indices): it
    suggests an array of the list's integers, or a tuple where the list holds slices,
    ``None``, ``...`` or sequences."""
    as_tuple = any(i is None or i is Ellipsis or isinstance(i, (slice, list, tuple))
                   for i in seq)
    raise IndexTypeError(
        "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
        f"`arr[{'tuple' if as_tuple else 'array'}(seq)]` instead of `arr[seq]`. See "
        "https://github.com/jax-ml/jax/issues/4564 for more information."
    )


def at(x: Any) -> AtIndexer:
    """The ``.at`` helper of any array value (NumPy arrays have no ``.at`` of their own)."""
    return AtIndexer(asarray(x))


def take(a: Any, indices: Any, axis: int | None = None, out: Any = None, mode: Any = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by default).
    As in JAX, indices out of range read ``fill_value`` (NaN for floats) unless ``mode`` is
    ``"clip"`` or ``"wrap"``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.take(fnp.arange(5.0), fnp.array([4, 0])).tolist()
    [4.0, 0.0]
    """
    if isinstance(a, (list, tuple)) or isinstance(indices, (list, tuple)):
        check_arraylike("take", a, indices)
    from funcgrad.numpy._core import canonical_axis  # noqa: PLC0415

    if out is not None:
        raise NotImplementedError("The 'out' argument to take is not supported.")
    a = _arr(a)
    if axis is None:
        a = S.reshape(a, (get_aval(a).size,))
        axis = 0
    ax = canonical_axis(axis, get_aval(a).ndim)
    idx = _index_operand(indices, "take")
    m = "fill" if mode is None else mode
    if m == "wrap":
        from funcgrad.numpy._ufuncs import remainder  # noqa: PLC0415

        idx = remainder(idx, get_aval(a).shape[ax])
        m = "clip"
    elif m == "clip":  # JAX clamps to [0, n - 1]: a negative index reads the first element
        from funcgrad.numpy._ufuncs import maximum, minimum  # noqa: PLC0415

        last = get_aval(a).shape[ax] - 1
        idx = (np.clip(idx, 0, last) if not _dynamic(idx)
               else minimum(maximum(idx, 0), last))
    if m == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if _check_mode(m) == "fill":
        return _take_filled(a, idx, ax, fill_value)
    return _flat_get(a, (slice(None),) * ax + (idx,), m, fill_value)


def _take_filled(a: Any, idx: Any, ax: int, fill_value: Any) -> Any:
    """``take`` in "fill" mode as one gather of whole slices along ``ax`` (JAX's form):
    negative indices count from the end, others out of range read ``fill_value``. Its
    transpose scatters whole rows (an embedding's gradient), not single elements."""
    shape = get_aval(a).shape
    n = shape[ax]
    if _dynamic(idx):
        i = E.convert_element_type(idx, dtypes.int64)
        i = E.select(E.lt(i, 0), E.add(i, n), i)
    else:
        i = np.where(idx < 0, idx.astype(np.int64) + n, idx)
    front = a if ax == 0 else S.transpose(a, (ax, *range(ax), *range(ax + 1, len(shape))))
    fill = None if fill_value is None else _fill_scalar(fill_value, get_aval(a).dtype)
    k = get_aval(i).ndim
    out = I.gather(front, S.expand_dims(i, (k,)), "fill", fill)
    if ax == 0:
        return out
    # (idx..., a's axes before ax, after ax) -> (before, idx..., after)
    perm = (*range(k, k + ax), *range(k), *range(k + ax, k + len(shape) - 1))
    return S.transpose(out, perm)


def _index_operand(indices: Any, where: str) -> Any:
    idx = asarray(indices)
    if not _dynamic(idx):
        idx = np.asarray(idx)
    dt = idx.dtype if isinstance(idx, np.ndarray) else idx.aval.dtype
    if dt.kind not in "iu":  # JAX's texts and types
        if where == "take":
            raise ValueError("indices must have an integer type")
        raise IndexTypeError(f"{where} indices must be of integer type, got {dt}")
    return idx


def take_along_axis(arr: Any, indices: Any, axis: int | None = -1, mode: Any = None,
                    fill_value: Any = None) -> Any:
    """Pick values along ``axis`` with an index array of the same rank (out-of-range
    indices read ``fill_value``, NaN for floats, unless ``mode="clip"``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.take_along_axis(fnp.array([[1.0, 2.0]]), fnp.array([[1]]), 1).tolist()
    [[2.0]]
    """
    check_arraylike("take_along_axis", arr, indices)
    from funcgrad.numpy._core import canonical_axis  # noqa: PLC0415

    arr = _arr(arr)
    if axis is None:
        arr = S.reshape(arr, (get_aval(arr).size,))
        axis = 0
    shape = get_aval(arr).shape
    ax = canonical_axis(axis, len(shape))
    idx = _index_operand(indices, "take_along_axis")
    ishape = get_aval(idx).shape
    if len(ishape) != len(shape):
        raise IndexingError(f"indices of rank {len(ishape)} for an array of rank {len(shape)}; "
                            "they must have the same rank")
    checked = _check_mode("fill" if mode is None else mode)
    if checked == "fill" or (checked == "clip" and shape[ax] > 0):
        return _take_along_filled(arr, idx, ax, fill_value, clip=checked == "clip")
    full_idx: list[Any] = []
    for d in range(len(shape)):
        if d == ax:
            full_idx.append(idx)
        else:
            r = [1] * len(shape)
            r[d] = shape[d]
            full_idx.append(np.arange(shape[d]).reshape(r))
    return _flat_get(arr, tuple(full_idx), "fill" if mode is None else mode, fill_value)


def _take_along_filled(arr: Any, idx: Any, ax: int, fill_value: Any,
                       clip: bool = False) -> Any:
    """``take_along_axis`` in "fill" mode as one gather from the flattened array: each
    result element's flat position is its index along ``ax`` (negative ones counted from
    the end; out of range: one past the end, which reads ``fill_value``) plus its
    coordinates on the other axes, a constant. ``clip``: "clip" mode instead (out of
    range: the nearest end of the axis)."""
    from funcgrad.numpy import _ufuncs as U  # noqa: PLC0415 - _ufuncs imports this module

    shape = get_aval(arr).shape
    ishape = get_aval(idx).shape
    nd = len(shape)
    out_shape = broadcast_shapes(tuple(1 if d == ax else shape[d] for d in range(nd)), ishape)
    strides = [math.prod(shape[d + 1:]) for d in range(nd)]
    size, n = math.prod(shape), shape[ax]
    other = np.zeros((1,) * nd, np.int64)
    for d in range(nd):
        if d != ax and shape[d] != 1:
            other = other + (np.arange(shape[d], dtype=np.int64) * strides[d]).reshape(
                [-1 if j == d else 1 for j in range(nd)])
    if _dynamic(idx):
        other = place_like(other, idx)  # the constant offsets go where the indices are
        i = E.convert_element_type(idx, dtypes.int64)
        i = E.select(E.lt(i, 0), E.add(i, n), i)
        if clip:
            pos = U.add(U.multiply(U.clip(i, 0, max(n - 1, 0)), np.int64(strides[ax])), other)
        else:
            bad = U.bitwise_or(U.less(i, 0), U.greater_equal(i, n))
            pos = U.where(bad, np.int64(size),
                          U.add(U.multiply(i, np.int64(strides[ax])), other))
        pos = broadcast_to_shape(pos, out_shape)
    else:
        i = np.asarray(idx).astype(np.int64)
        i = np.where(i < 0, i + n, i)
        if clip:
            pos = np.broadcast_to(np.clip(i, 0, max(n - 1, 0)) * strides[ax] + other,
                                  out_shape)
        else:
            pos = np.broadcast_to(np.where((i < 0) | (i >= n), size, i * strides[ax] + other),
                                  out_shape)
    fill = None if fill_value is None else _fill_scalar(fill_value, get_aval(arr).dtype)
    flat = S.reshape(arr, (size,))
    return I.gather(flat, S.expand_dims(pos, (len(out_shape),)), "clip" if clip else "fill",
                    fill)
