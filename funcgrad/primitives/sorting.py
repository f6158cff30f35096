"""``top_k`` as a primitive, and ``sort_key_val`` (a stable argsort of the keys applied to
both operands).

>>> import numpy as np
>>> from funcgrad.primitives.sorting import top_k
>>> values, indices = top_k(np.array([9.0, 3.0, 6.0, 4.0, 10.0]), 3)
>>> values, indices
(Array([10.,  9.,  6.], dtype=float64), Array([4, 0, 2], dtype=int32))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import AxisError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import move_to_front, require_kind, zeros_like_aval


def _top_k_abstract(x: ShapedArray, *, k: int, axis: int) -> tuple[ShapedArray, ShapedArray]:
    require_kind("top_k", x, "biuf", "real")
    if not 0 <= axis < x.ndim:
        raise AxisError(f"top_k axis {axis} is out of range for an operand of rank {x.ndim}")
    if not 0 <= k <= x.shape[axis]:
        raise ShapeError(f"top_k needs 0 <= k <= {x.shape[axis]} (the size of axis {axis}), "
                         f"got k={k}")
    shape = (*x.shape[:axis], k, *x.shape[axis + 1:])
    return ShapedArray(shape, x.dtype), ShapedArray(shape, dtypes.int32)


def _descending_key(xp: Any, x: Any) -> Any:
    # A stable ascending sort of this key is a descending sort of x with ties in index
    # order (JAX's rule); NaN counts as the largest, as in XLA's total order.
    if dtypes.kind(x.dtype) == "f":  # bfloat16 included (NumPy's kind "V")
        return xp.where(xp.isnan(x), -np.inf, -x.astype(np.float64))
    if x.dtype.kind == "b":
        return ~x
    return ~x  # bitwise not reverses the order of signed and unsigned integers alike


def _top_k_impl(xp: Any, x: Any, *, k: int, axis: int) -> list[Any]:
    order = xp.argsort(_descending_key(xp, x), axis=axis, kind="stable")
    idx = xp.take(order, xp.arange(k), axis=axis)
    return [xp.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]


top_k_p = Primitive("top_k", abstract_eval=_top_k_abstract, impl=_top_k_impl,
                    multiple_results=True)


def _grid(idx: Any, axis: int) -> Any:
    """Full index tuples (for gather/scatter) of ``idx`` along ``axis``, others by position."""
    from funcgrad.primitives.structural import concatenate, expand_dims, iota  # noqa: PLC0415

    a = get_aval(idx)
    cols = [idx if d == axis else iota(a.dtype, a.shape, d) for d in range(a.ndim)]
    return concatenate([expand_dims(c, (a.ndim,)) for c in cols], a.ndim)


def _top_k_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, k: int, axis: int) -> Any:
    from funcgrad.primitives.indexing import gather  # noqa: PLC0415

    (x,), (t,) = primals, tangents
    values, idx = top_k_p.bind(x, k=k, axis=axis)
    if t is None or not dtypes.is_inexact(get_aval(x).dtype):
        return [values, idx], [None, None]
    return [values, idx], [gather(t, _grid(idx, axis), "clip"), None]


def _top_k_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *, k: int,
               axis: int) -> list[Any]:
    from funcgrad.primitives.indexing import scatter_add  # noqa: PLC0415

    ct = cts[0]
    if ct is None:
        return [None]
    aval = get_aval(primals[0])
    return [scatter_add(zeros_like_aval(aval), _grid(outs[1], axis), ct, "drop")]


def _top_k_batch(args: Sequence[Any], dims: Sequence[int | None], *, k: int, axis: int
                 ) -> Any:
    x = move_to_front(args[0], dims[0])
    return top_k_p.bind(x, k=k, axis=axis + 1), [0, 0]


top_k_p.jvp, top_k_p.vjp, top_k_p.batch = _top_k_jvp, _top_k_vjp, _top_k_batch
top_k_p.vjp_reads = "y1"


def top_k(operand: Any, k: int, *, axis: int = -1) -> list[Any]:
    """The ``k`` largest entries along ``axis`` and their int32 indices, largest first
    (equal entries in index order), as a list (as JAX's).

    >>> import numpy as np
    >>> top_k(np.array([[1, 5, 5]]), 2)[1]
    Array([[1, 2]], dtype=int32)
    """
    nd = get_aval(operand).ndim
    ax = int(axis) + nd if int(axis) < 0 else int(axis)
    if not 0 <= ax < max(nd, 1):
        raise AxisError(f"top_k axis {axis} is out of range for an operand of rank {nd}")
    values, idx = top_k_p.bind(operand, k=int(k), axis=ax)
    return [values, idx]


top_k_p.describe(lax="top_k", fusion=None, cuda=None, ufunc=None, torch_method=None,
                 torch_node="Topk", lax_fn=top_k)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension``, and ``values`` permuted the same way (a stable
    sort: equal keys keep their order). Differentiable in both.

    >>> import numpy as np
    >>> sort_key_val(np.array([3, 1, 2]), np.array([10.0, 20.0, 30.0]))
    (Array([1, 2, 3], dtype=int64), Array([20., 30., 10.], dtype=float64))
    """
    from funcgrad.primitives.indexing import gather  # noqa: PLC0415
    from funcgrad.primitives.reductions import argsort  # noqa: PLC0415

    ka, va = get_aval(keys), get_aval(values)
    if ka.shape != va.shape:
        raise ShapeError(f"sort_key_val needs keys and values of one shape, got {ka.shape} "
                         f"and {va.shape}")
    nd = ka.ndim
    d = int(dimension) + nd if int(dimension) < 0 else int(dimension)
    if not 0 <= d < nd:
        raise AxisError(f"sort_key_val dimension {dimension} is out of range for rank {nd}")
    grid = _grid(argsort(keys, d), d)
    return gather(keys, grid, "clip"), gather(values, grid, "clip")


__all__ = ["top_k", "top_k_p", "sort_key_val"]
