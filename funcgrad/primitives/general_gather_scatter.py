"""XLA's general gather and scatter (``jax.lax.gather`` / ``jax.lax.scatter*`` with
``GatherDimensionNumbers`` / ``ScatterDimensionNumbers``), composed of funcgrad's own
primitives: the start indices become one full index tuple per element of the result (or of
the updates), and funcgrad's ``gather``/``scatter*`` primitives pick (or write) those.
Derivatives, batching and jit come from the primitives' rules.

Called without dimension numbers, ``lax.gather(operand, indices)`` and
``lax.scatter*(operand, indices, updates)`` keep funcgrad's short form (index tuples into
the leading axes, see ``funcgrad.primitives.indexing``).

>>> import numpy as np
>>> from funcgrad import lax
>>> x = np.array([10, 11, 12], np.int32)
>>> lax.gather(x, np.array([[0], [2], [2]]), lax.GatherDimensionNumbers(
...     offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), slice_sizes=(1,))
Array([10, 12, 12], dtype=int32)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import structural as S


class GatherDimensionNumbers(NamedTuple):
    """How the dimensions of a gather's operand, start indices and output relate (XLA's
    Gather): ``offset_dims`` (output dims of the slices), ``collapsed_slice_dims`` (size-1
    slice dims dropped), ``start_index_map`` (operand dim of each index vector entry),
    ``operand_batching_dims`` and ``start_indices_batching_dims`` (paired batch dims).

    >>> GatherDimensionNumbers((1,), (0,), (0,)).operand_batching_dims
    ()
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the dimensions of a scatter's operand, indices and updates relate (XLA's
    Scatter): ``update_window_dims`` (updates dims that are window dims),
    ``inserted_window_dims`` (size-1 operand window dims absent from the updates),
    ``scatter_dims_to_operand_dims`` (operand dim of each index vector entry),
    ``operand_batching_dims`` and ``scatter_indices_batching_dims`` (paired batch dims).

    >>> ScatterDimensionNumbers((), (0,), (0,)).inserted_window_dims
    (0,)
    """

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What an out-of-bounds gather or scatter index does: ``CLIP`` clamps the window into
    range, ``FILL_OR_DROP`` fills a gathered window / drops a scattered one,
    ``PROMISE_IN_BOUNDS`` clamps gathers and drops scatters (as XLA does), ``ONE_HOT``
    (funcgrad refuses it).

    >>> GatherScatterMode.from_any("drop")
    <GatherScatterMode.FILL_OR_DROP: 2>
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """The mode a string (``'clip'``, ``'fill'``, ``'drop'``, ``'promise_in_bounds'``,
        ``'one_hot'``) or None (``FILL_OR_DROP``) names."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in {"fill", "drop"}:
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


def _index_dtype() -> np.dtype[Any]:
    return dtypes.default_int()


def _starts(indices: Any, batch_shape: tuple[int, ...], operand_shape: tuple[int, ...],
            index_map: Sequence[int], operand_batching: Sequence[int],
            indices_batching: Sequence[int], sizes: Sequence[int], clip: bool
            ) -> tuple[list[Any], Any]:
    """Each operand dim's window start, shaped ``batch_shape`` (clamped into range with
    ``clip``), and whether every window lies in bounds (None when clipping)."""
    it = _index_dtype()
    idx = E.convert_element_type(indices, it)
    starts: list[Any] = []
    in_bounds = None
    for d, n in enumerate(operand_shape):
        if d in index_map:
            j = list(index_map).index(d)
            nb = len(batch_shape)
            s = S.reshape(S.slice_(idx, (0,) * nb + (j,), (*batch_shape, j + 1)), batch_shape)
            hi = np.asarray(n - sizes[d], it)
            if clip:
                s = E.max_(E.min_(s, hi), np.asarray(0, it))
            else:
                ok = E.and_p.bind(E.ge(s, np.asarray(0, it)), E.le(s, hi))
                in_bounds = ok if in_bounds is None else E.and_p.bind(in_bounds, ok)
        elif d in operand_batching:
            axis = indices_batching[list(operand_batching).index(d)]
            s = S.iota(it, batch_shape, axis)
        else:
            s = S.broadcast_in_dim(np.asarray(0, it), batch_shape, ())
        starts.append(s)
    return starts, in_bounds


def _full_indices(starts: Sequence[Any], batch_shape: tuple[int, ...],
                  window: Sequence[int], window_sizes: Sequence[int]) -> Any:
    """Index tuples of shape ``(*batch_shape, *window_sizes, rank)``: each operand dim's
    start plus the position in the window (``window`` lists the operand dims the window
    spans, in order)."""
    it = _index_dtype()
    nb = len(batch_shape)
    shape = (*batch_shape, *window_sizes)
    cols = []
    for d, s in enumerate(starts):
        col = S.broadcast_in_dim(s, shape, tuple(range(nb)))
        if d in window:
            col = E.add(col, S.iota(it, shape, nb + list(window).index(d)))
        cols.append(S.expand_dims(col, (len(shape),)))
    if not cols:
        return S.broadcast_in_dim(np.zeros((), it), (*shape, 0), ())
    return S.concatenate(cols, len(shape))


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _check_indices(indices: Any) -> Any:
    if not dtypes.is_integer(get_aval(indices).dtype):
        raise ValueError("indices must have an integer type")
    return indices


def general_gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
                   slice_sizes: Sequence[int], *, mode: Any = None,
                   fill_value: Any = None) -> Any:
    """XLA's Gather (see the module docstring); ``mode=None`` clamps, as JAX's gather."""
    dn = dimension_numbers
    parsed = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    if parsed is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("gather mode ONE_HOT is not supported by funcgrad")
    oshape = tuple(get_aval(operand).shape)
    start_indices = _check_indices(start_indices)
    ishape = tuple(get_aval(start_indices).shape)
    offset, collapsed, index_map = (_ints(dn.offset_dims), _ints(dn.collapsed_slice_dims),
                                    _ints(dn.start_index_map))
    op_batch, idx_batch = _ints(dn.operand_batching_dims), _ints(dn.start_indices_batching_dims)
    sizes = _ints(slice_sizes)
    if len(sizes) != len(oshape):
        raise TypeError("Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(sizes)}, input_shape.rank={len(oshape)}")
    for i, (sz, n) in enumerate(zip(sizes, oshape)):
        if not 0 <= sz <= n:
            raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                            f"within [0, {n} + 1), got {sz}.")
    for pos, d in enumerate(collapsed + op_batch):
        if not 0 <= d < len(oshape):
            raise TypeError(f"Invalid collapsed/batching dim {d} for an operand of rank "
                            f"{len(oshape)}.")
        if sizes[d] != 1:
            raise TypeError("Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {sizes[d]} for index {d} at position {pos}.")
    if not ishape:
        raise TypeError("Gather op needs start indices of rank >= 1 (the last dim is the "
                        "index vector).")
    if len(index_map) != ishape[-1]:
        raise TypeError(f"Gather op has {len(index_map)} elements in start_index_map and the "
                        f"bound of dimension index_vector_dim={len(ishape) - 1} of indices is "
                        f"{ishape[-1]}. These two numbers must be equal.")
    window = tuple(d for d in range(len(oshape)) if d not in collapsed and d not in op_batch)
    batch_shape = ishape[:-1]
    out_rank = len(batch_shape) + len(offset)
    if len(offset) != len(window) or list(offset) != sorted(set(offset)) or \
            any(not 0 <= o < out_rank for o in offset):
        raise TypeError(f"Gather op offset_dims {offset} must be {len(window)} distinct, "
                        f"sorted dimensions of the output (rank {out_rank}).")
    clip = parsed is not GatherScatterMode.FILL_OR_DROP
    starts, in_bounds = _starts(start_indices, batch_shape, oshape, index_map, op_batch,
                                idx_batch, sizes, clip)
    wsizes = [sizes[d] for d in window]
    idx = _full_indices(starts, batch_shape, window, wsizes)
    out = ix.gather(operand, idx, "clip")
    if in_bounds is not None:
        dt = get_aval(out).dtype
        fill = ix.default_fill_value(dt) if fill_value is None else fill_value
        mask = S.broadcast_in_dim(in_bounds, get_aval(out).shape, tuple(range(len(batch_shape))))
        out = E.select(mask, out, S.broadcast_in_dim(np.asarray(fill, dt),
                                                     get_aval(out).shape, ()))
    # Canonical order: batch dims, then window dims; the output puts the window dims at
    # offset_dims and the batch dims, in order, in the rest.
    batch_pos = [p for p in range(out_rank) if p not in offset]
    perm = [0] * out_rank
    for i, p in enumerate(batch_pos):
        perm[p] = i
    for i, p in enumerate(offset):
        perm[p] = len(batch_shape) + i
    return S.transpose(out, tuple(perm)) if perm != list(range(out_rank)) else out


_SCATTERS = {"scatter": ix.scatter, "scatter_add": ix.scatter_add,
             "scatter_mul": ix.scatter_mul, "scatter_min": ix.scatter_min,
             "scatter_max": ix.scatter_max}


def general_scatter(kind: str, operand: Any, scatter_indices: Any, updates: Any,
                    dimension_numbers: ScatterDimensionNumbers, *, mode: Any = None) -> Any:
    """XLA's Scatter combining with ``kind`` (``scatter``, ``scatter_add``, ...);
    ``mode=None`` drops out-of-bounds windows, as JAX's scatters."""
    dn = dimension_numbers
    parsed = GatherScatterMode.from_any(mode)
    if parsed is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("scatter mode ONE_HOT is not supported by funcgrad")
    oa, ua = get_aval(operand), get_aval(updates)
    if oa.dtype != ua.dtype:
        raise TypeError("lax.scatter requires arguments to have the same dtypes, got "
                        f"{oa.dtype}, {ua.dtype}.")
    scatter_indices = _check_indices(scatter_indices)
    oshape, ushape = tuple(oa.shape), tuple(ua.shape)
    ishape = tuple(get_aval(scatter_indices).shape)
    uwin, inserted, index_map = (_ints(dn.update_window_dims), _ints(dn.inserted_window_dims),
                                 _ints(dn.scatter_dims_to_operand_dims))
    op_batch = _ints(dn.operand_batching_dims)
    idx_batch = _ints(dn.scatter_indices_batching_dims)
    if not ishape or len(index_map) != ishape[-1]:
        raise TypeError(f"Scatter op has {len(index_map)} elements in "
                        "scatter_dims_to_operand_dims and the bound of the index vector "
                        f"dimension of indices ({ishape[-1:] or 'none'}) differs.")
    window = tuple(d for d in range(len(oshape)) if d not in inserted and d not in op_batch)
    batch_shape = ishape[:-1]
    if len(uwin) != len(window) or len(ushape) != len(batch_shape) + len(uwin) or \
            any(not 0 <= u < len(ushape) for u in uwin):
        raise TypeError(f"Scatter op update_window_dims {uwin} do not fit updates of shape "
                        f"{ushape}, indices of shape {ishape} and operand of shape {oshape}.")
    wsizes = [ushape[u] for u in uwin]
    for d, w in zip(window, wsizes):
        if w > oshape[d]:
            raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                            "bounds of the corresponding dimensions of operand. For dimension "
                            f"{d}, updates bound is {w}, operand bound is {oshape[d]}.")
    upd_batch = [p for p in range(len(ushape)) if p not in uwin]
    if tuple(ushape[p] for p in upd_batch) != batch_shape:
        raise TypeError(f"Scatter op updates of shape {ushape} do not match the scatter "
                        f"indices' batch shape {batch_shape}.")
    sizes = [1] * len(oshape)
    for d, w in zip(window, wsizes):
        sizes[d] = w
    clip = parsed is GatherScatterMode.CLIP
    starts, in_bounds = _starts(scatter_indices, batch_shape, oshape, index_map, op_batch,
                                idx_batch, sizes, clip)
    if in_bounds is not None and oshape:
        # A window out of bounds is dropped whole: its first index goes past the operand.
        it = _index_dtype()
        starts[0] = E.select(in_bounds, starts[0], S.broadcast_in_dim(
            np.asarray(oshape[0], it), batch_shape, ()))
    idx = _full_indices(starts, batch_shape, window, wsizes)
    canon = (*upd_batch, *uwin)
    upd = S.transpose(updates, canon) if list(canon) != list(range(len(ushape))) else updates
    return _SCATTERS[kind](operand, idx, upd, "drop")


__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers",
           "general_gather", "general_scatter"]
