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

from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import linear, zeros_like


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


gather_p = Primitive("gather", abstract_eval=_gather_abstract,
                     impl=lambda xp, op, idx: op[_index_tuple(xp, op, idx)])
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
    out = op.copy()
    where = _index_tuple(xp, op, idx)
    if xp.__name__ == "numpy":
        xp.add.at(out, where, upd)
    else:
        import cupyx  # noqa: PLC0415

        cupyx.scatter_add(out, where, upd)
    return out


def _scatter_impl(xp: Any, op: Any, idx: Any, upd: Any) -> Any:
    out = op.copy()
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
    out = operand.copy()
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

__all__ = [
    "gather", "gather_p", "scatter_add", "scatter_add_p", "scatter", "scatter_p",
    "dynamic_slice", "dynamic_slice_p", "dynamic_update_slice", "dynamic_update_slice_p",
]
