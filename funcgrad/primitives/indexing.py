"""Indexing primitives: gather, scatter_add, scatter, dynamic_slice, dynamic_update_slice.

``gather(operand, indices)`` with integer ``indices`` of shape ``(*B, k)`` picks
``operand[tuple(indices[b])]`` for every batch position ``b``: the result has
shape ``(*B, *operand.shape[k:])``. Out-of-range indices are clamped (the
``funcgrad.numpy`` layer reports them eagerly and wraps negative ones).
``scatter_add``/``scatter`` are the matching updates.

>>> import numpy as np
>>> from funcgrad.primitives.indexing import gather
>>> gather(np.arange(5.0), np.array([[3], [1]]))
array([3., 1.])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import (
    all_batched,
    batch_size,
    linear,
    move_to_front,
    with_batch,
    zeros_like,
)


def _check_indices(name: str, operand: ShapedArray, indices: ShapedArray) -> int:
    if indices.dtype.kind not in "iu":
        raise DTypeError(f"{name} indices must be integers, got {indices.dtype}")
    if indices.ndim < 1:
        raise ShapeError(f"{name} indices need a last axis of index tuples, got a scalar")
    k = indices.shape[-1]
    if k > operand.ndim:
        raise ShapeError(
            f"{name} index tuples of length {k} are longer than the operand rank {operand.ndim}"
        )
    return k


def _index_tuple(xp: Any, operand: Any, indices: Any) -> tuple[Any, ...]:
    k = indices.shape[-1]
    return tuple(xp.clip(indices[..., i], 0, max(operand.shape[i] - 1, 0)) for i in range(k))


# ------------------------------------------------------------------- gather


def gather(operand: Any, indices: Any) -> Any:
    return gather_p.bind(operand, indices)


def _gather_abstract(operand: ShapedArray, indices: ShapedArray) -> ShapedArray:
    k = _check_indices("gather", operand, indices)
    if any(operand.shape[i] == 0 for i in range(k)) and indices.size:
        raise ShapeError(f"gather from an empty axis of shape {operand.shape}")
    return ShapedArray(indices.shape[:-1] + operand.shape[k:], operand.dtype, operand.weak_type)


def _gather_impl(xp: Any, op: Any, idx: Any) -> Any:
    if idx.shape[-1] == 0:
        # Empty index tuples pick the whole operand for every batch position.
        return xp.broadcast_to(op, idx.shape[:-1] + op.shape)
    return op[_index_tuple(xp, op, idx)]


gather_p = Primitive("gather", abstract_eval=_gather_abstract, impl=_gather_impl)
linear(gather_p, lambda ct, primals, ans: [
    scatter_add(zeros_like(primals[0]), primals[1], ct), None])

# -------------------------------------------------------------- scatter(_add)


def scatter_add(operand: Any, indices: Any, updates: Any) -> Any:
    return scatter_add_p.bind(operand, indices, updates)


def scatter(operand: Any, indices: Any, updates: Any) -> Any:
    return scatter_p.bind(operand, indices, updates)


def _scatter_abstract(name: str) -> Any:
    def rule(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray) -> ShapedArray:
        k = _check_indices(name, operand, indices)
        want = indices.shape[:-1] + operand.shape[k:]
        if updates.shape != want:
            raise ShapeError(
                f"{name} updates of shape {updates.shape} do not fit: indices {indices.shape} "
                f"into operand {operand.shape} need updates of shape {want}"
            )
        if updates.dtype != operand.dtype:
            raise DTypeError(f"{name} updates dtype {updates.dtype} differs from operand "
                             f"dtype {operand.dtype}")
        return operand

    return rule


def _scatter_add_impl(xp: Any, op: Any, idx: Any, upd: Any) -> Any:
    if idx.shape[-1] == 0:
        # Empty index tuples address the whole operand for every batch position.
        lead = tuple(range(idx.ndim - 1))
        return op + xp.sum(upd, axis=lead, dtype=op.dtype) if lead else op + upd
    out = xp.array(op, copy=True)
    where = _index_tuple(xp, op, idx)
    if xp.__name__ == "numpy":
        xp.add.at(out, where, upd)
    else:
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(out, where, upd)
    return out


def _scatter_impl(xp: Any, op: Any, idx: Any, upd: Any) -> Any:
    if idx.shape[-1] == 0:
        n = int(np.prod(idx.shape[:-1]))
        return xp.array(op, copy=True) if n == 0 else \
            xp.array(upd.reshape((n, *op.shape))[-1], copy=True)
    out = xp.array(op, copy=True)
    out[_index_tuple(xp, op, idx)] = upd
    return out


scatter_add_p = Primitive("scatter_add", abstract_eval=_scatter_abstract("scatter_add"),
                          impl=_scatter_add_impl)
linear(scatter_add_p, lambda ct, primals, ans: [ct, None, gather(ct, primals[1])],
       linear_args=(0, 2))

scatter_p = Primitive("scatter", abstract_eval=_scatter_abstract("scatter"),
                      impl=_scatter_impl)
linear(scatter_p, lambda ct, primals, ans: [
    scatter(ct, primals[1], zeros_like(primals[2])), None, gather(ct, primals[1])],
    linear_args=(0, 2))

# ------------------------------------------------------------ dynamic slices


def _clamped_starts(operand_shape: Sequence[int], sizes: Sequence[int], starts: Sequence[Any]
                    ) -> tuple[int, ...]:
    return tuple(min(max(int(s), 0), n - k) for s, n, k in zip(starts, operand_shape, sizes))


def _check_starts(name: str, operand: ShapedArray, starts: Sequence[ShapedArray]) -> None:
    if len(starts) != operand.ndim:
        raise ShapeError(f"{name} needs {operand.ndim} start indices, got {len(starts)}")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise DTypeError(f"{name} start indices must be integer scalars, got {s.str_short()}")


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int]
                  ) -> Any:
    """``operand[s0:s0+k0, ...]`` with traced starts (clamped to stay in bounds)."""
    return dynamic_slice_p.bind(operand, *start_indices,
                                slice_sizes=tuple(int(k) for k in slice_sizes))


def _ds_abstract(operand: ShapedArray, *starts: ShapedArray, slice_sizes: tuple[int, ...]
                 ) -> ShapedArray:
    _check_starts("dynamic_slice", operand, starts)
    if len(slice_sizes) != operand.ndim or any(
            not 0 <= k <= n for k, n in zip(slice_sizes, operand.shape)):
        raise ShapeError(f"slice_sizes {slice_sizes} do not fit operand shape {operand.shape}")
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _ds_impl(xp: Any, operand: Any, *starts: Any, slice_sizes: tuple[int, ...]) -> Any:
    st = _clamped_starts(operand.shape, slice_sizes, starts)
    return operand[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))]


dynamic_slice_p = Primitive("dynamic_slice", abstract_eval=_ds_abstract, impl=_ds_impl)
linear(dynamic_slice_p, lambda ct, primals, ans, slice_sizes: [
    dynamic_update_slice(zeros_like(primals[0]), ct, primals[1:]),
    *([None] * (len(primals) - 1))])


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """``operand`` with ``update`` written at ``start_indices`` (clamped to stay in bounds)."""
    return dynamic_update_slice_p.bind(operand, update, *start_indices)


def _dus_abstract(operand: ShapedArray, update: ShapedArray, *starts: ShapedArray
                  ) -> ShapedArray:
    _check_starts("dynamic_update_slice", operand, starts)
    if update.ndim != operand.ndim or any(u > n for u, n in zip(update.shape, operand.shape)):
        raise ShapeError(f"update of shape {update.shape} does not fit in {operand.shape}")
    if update.dtype != operand.dtype:
        raise DTypeError(f"update dtype {update.dtype} differs from operand dtype {operand.dtype}")
    return operand


def _dus_impl(xp: Any, operand: Any, update: Any, *starts: Any) -> Any:
    st = _clamped_starts(operand.shape, update.shape, starts)
    out = xp.array(operand, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(st, update.shape))] = update
    return out


dynamic_update_slice_p = Primitive("dynamic_update_slice", abstract_eval=_dus_abstract,
                                   impl=_dus_impl)


def _dus_transpose(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    update = primals[1]
    starts = primals[2:]
    ct_operand = dynamic_update_slice(ct, zeros_like(update), starts)
    ct_update = dynamic_slice(ct, starts, get_aval(update).shape)
    return [ct_operand, ct_update, *([None] * len(starts))]


linear(dynamic_update_slice_p, _dus_transpose, linear_args=(0, 1))

# ------------------------------------------------------------------ batching


def _with_batch_index(idx: Any) -> Any:
    """Prefix each index tuple of a (B, ..., k) index array with its batch position."""
    from funcgrad.primitives.structural import concatenate, iota  # noqa: PLC0415

    aval = get_aval(idx)
    b = iota(aval.dtype, (*aval.shape[:-1], 1), 0)
    return concatenate([b, idx], aval.ndim - 1)


def _gather_batch(args: Sequence[Any], dims: Sequence[int | None]) -> Any:
    from funcgrad.primitives.structural import transpose  # noqa: PLC0415

    op, idx = args
    od, idd = dims
    if idd is None:
        op = move_to_front(op, od)
        k = get_aval(idx).shape[-1]
        perm = (*range(1, k + 1), 0, *range(k + 1, get_aval(op).ndim))
        return gather(transpose(op, perm), idx), get_aval(idx).ndim - 1
    if od is None:
        return gather(op, move_to_front(idx, idd)), 0
    op, idx = move_to_front(op, od), move_to_front(idx, idd)
    return gather(op, _with_batch_index(idx)), 0


def _scatter_batch(prim: Primitive) -> Any:
    def rule(args: Sequence[Any], dims: Sequence[int | None]) -> Any:
        op, idx, upd = all_batched(args, dims)
        return prim.bind(op, _with_batch_index(idx), upd), 0

    return rule


gather_p.batch = _gather_batch
scatter_add_p.batch = _scatter_batch(scatter_add_p)
scatter_p.batch = _scatter_batch(scatter_p)


def _window_indices(starts: Sequence[Any], operand_shape: Sequence[int],
                    sizes: Sequence[int]) -> Any:
    """(B, *sizes, 1 + rank) indices of per-member windows starting at (B,) ``starts``."""
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives.structural import broadcast_in_dim, concatenate, iota  # noqa: PLC0415

    size = get_aval(starts[0]).shape[0]
    grid = (size, *sizes)
    cols = [iota(np.int64, (*grid, 1), 0)]
    for d, (s, n, k) in enumerate(zip(starts, operand_shape, sizes)):
        s = E.convert_element_type(s, np.int64)
        s = E.min_(E.max_(s, 0), n - k)
        pos = E.add(broadcast_in_dim(s, (*grid, 1), (0,)), iota(np.int64, (*grid, 1), d + 1))
        cols.append(pos)
    return concatenate(cols, len(grid))


def _ds_batch(args: Sequence[Any], dims: Sequence[int | None], *,
              slice_sizes: tuple[int, ...]) -> Any:
    size = batch_size(args, dims)
    op = with_batch(args[0], dims[0], size)
    starts = args[1:]
    if all(d is None for d in dims[1:]):
        zero = np.zeros((), get_aval(starts[0]).dtype if starts else np.int64)
        return dynamic_slice(op, (zero, *starts), (size, *slice_sizes)), 0
    starts_b = [with_batch(s, d, size) for s, d in zip(starts, dims[1:])]
    idx = _window_indices(starts_b, get_aval(op).shape[1:], slice_sizes)
    return gather(op, idx), 0


def _dus_batch(args: Sequence[Any], dims: Sequence[int | None]) -> Any:
    size = batch_size(args, dims)
    op = with_batch(args[0], dims[0], size)
    upd = with_batch(args[1], dims[1], size)
    starts = args[2:]
    if all(d is None for d in dims[2:]):
        zero = np.zeros((), get_aval(starts[0]).dtype if starts else np.int64)
        return dynamic_update_slice(op, upd, (zero, *starts)), 0
    starts_b = [with_batch(s, d, size) for s, d in zip(starts, dims[2:])]
    idx = _window_indices(starts_b, get_aval(op).shape[1:], get_aval(upd).shape[1:])
    return scatter(op, idx, upd), 0


dynamic_slice_p.batch = _ds_batch
dynamic_update_slice_p.batch = _dus_batch

__all__ = [
    "gather", "gather_p", "scatter_add", "scatter_add_p", "scatter", "scatter_p",
    "dynamic_slice", "dynamic_slice_p", "dynamic_update_slice", "dynamic_update_slice_p",
]
