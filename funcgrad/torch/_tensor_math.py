"""More of PyTorch's Tensor methods and ``torch`` functions: indexing and scatter
(``index_select``, ``index_add``, ``scatter``/``scatter_add``/``scatter_reduce``,
``masked_scatter``, ``take``, ``put``), sorting and order statistics (``kthvalue``,
``median``, ``mode``, ``quantile``, ``unique``), cumulative ops, ``addmv``/``addr``/
``baddbmm``, splitting and flipping, special functions, complex parts, in-place ``_``
variants, and the array helpers (``atleast_*d``, ``block_diag``, ``cdist``,
``cartesian_prod``, ``searchsorted``, ``bucketize``, ``diff``, ``trapezoid``, ...).
Differentiable ones record the graph through the engine's functions.

>>> import funcgrad.torch as torch
>>> torch.tensor([3.0, 1.0, 2.0]).kthvalue(2)
torch.return_types.kthvalue(
values=tensor(2.),
indices=tensor(2))
>>> torch.tensor([[1, 2], [3, 4]]).index_select(0, torch.tensor([1]))
tensor([[3, 4]])
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.torch import _dtypes as D
from funcgrad.torch import _sign_bounds
from funcgrad.torch._autocast import autocast_namespace, autocast_op
from funcgrad.torch._functions import _tensor_list, cat, stack, vstack_as
from funcgrad.torch._graph import name_node
from funcgrad.torch._index_write import write
from funcgrad.torch._return_types import named_result
from funcgrad.torch._std_sort import (
    aten_quick_select,
    mode_row,
    rank_keys,
    replayed_order,
    std_sort,
    tied_rows,
)
from funcgrad.torch._tensor import (
    _CPP,
    Tensor,
    _byte_masks,
    _check_broadcast,
    _check_index_bounds,
    _check_put_dtype,
    _ddof,
    _dims,
    _float_input,
    _lift_scalar_bools,
    _no_dof,
    _returns,
    _std_value,
    _sum_dtype,
    _var_no_dof,
    _vector_norm,
    _view_op,
    _with_axes,
    apply_op,
    binary,
    check_int_argument,
    check_range,
    check_reducible,
    check_result_cast,
    check_scalar_fits,
    fma32,
    half_on_cpu,
    host_if_eager,
    minkowski,
    result_dtype,
    take_along,
)
from funcgrad.transforms.custom import custom_jvp

# ------------------------------------------------------------------ helpers


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(np.asarray(x))


def _dim(d: builtins.int, nd: builtins.int) -> builtins.int:
    n = builtins.max(nd, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _grid_index(index_shape: tuple[builtins.int, ...], dim: builtins.int, idx: Any
                ) -> tuple[Any, ...]:
    """The advanced index that addresses ``x[i_0, ..., idx[i], ..., i_n]`` for every
    position ``i`` of ``idx``: PyTorch's scatter/gather addressing."""
    grids = np.indices(index_shape, sparse=True)
    return tuple(idx if k == dim else g for k, g in enumerate(grids))


def _float_of(t: Tensor) -> Tensor:
    return _float_input(t)


# ---------------------------------------------------------- indexing methods


def index_select(self: Tensor, dim: builtins.int, index: Tensor) -> Tensor:
    """The entries at ``index`` along ``dim``."""
    d = _dim(dim, self.dim())
    idx = _t(index)
    if idx.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype.name not in ("int32", "int64"):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    n = self.shape[d] if self.dim() else 1
    if self.dim() > 1 and d != 0:
        # PyTorch's kernel for an inner dimension has its own check.
        check_range(idx, 0, n, RuntimeError,
                    f"INDICES element is out of DATA bounds, id={{}} axis_dim={n}")
    check_range(idx, 0, n, IndexError, "index out of range in self")
    # The index is no operand of PyTorch's node: next_functions lists ``self`` alone.
    return cast(Tensor, apply_op("IndexSelect", lambda x, i: fnp.take(
        x, fnp.reshape(i, (-1,)), axis=d) if x.ndim else fnp.reshape(x, ()), self, idx,
        shown=(self,)))


def _operands(self: Tensor, source: Any) -> tuple[Any, ...]:
    """What PyTorch's node for an indexed write lists: ``self`` and a tensor source (the
    index is no operand of it, nor a number written)."""
    return (self, source) if isinstance(source, Tensor) else (self,)


def _index_update(self: Tensor, dim: builtins.int, index: Any, source: Any, how: str,
                  alpha: Any = 1) -> Tensor:
    d = _dim(dim, self.dim())

    def run(x: Any, i: Any, s: Any) -> Any:
        where = (slice(None),) * d + (i,)
        if how == "add":
            return x.at[where].add(s * alpha if alpha != 1 else s)
        if how == "fill":
            # PyTorch sums the value's gradient over the unique indices: the engine's rule.
            return x.at[where].set(fnp.astype(s, x.dtype))
        # (the index is an operand: under a recording it is a tracer)
        return write(x, s, lambda z, s, i: z.at[(slice(None),) * d + (i,)].set(s),
                     lambda z, s, i: z.at[(slice(None),) * d + (i,)].add(s), i)

    op = {"add": "IndexAdd", "copy": "IndexCopy", "fill": "IndexFill"}[how]
    if how == "fill" and isinstance(source, Tensor):
        op = "IndexFill:1"  # PyTorch's second overload, index_fill.int_Tensor
    n = self.shape[d] if self.dim() else 1
    where = f"for dimension {d} with size {n}"
    # PyTorch's kernels differ in range and error: index_fill wraps negative indices, the
    # others take [0, n); index_add of a vector raises its own IndexError.
    if how == "add" and self.dim() <= 1:
        check_range(index, 0, n, IndexError, "index out of range in self")
    elif how == "add":
        check_range(index, 0, n, RuntimeError, "index {} is out of bounds " + where)
    else:
        check_range(index, -n if how == "fill" else 0, n, IndexError,
                    ("index_copy_(): " if how == "copy" else "") + "index {} is out of bounds "
                    + where)
    if isinstance(source, Tensor) and source.dtype is not self.dtype and how != "fill":
        a, b = D.cpp_name(self.dtype), D.cpp_name(source.dtype)
        raise RuntimeError(
            f"index_add_(): self ({a}) and source ({b}) must have the same scalar type"
            if how == "add" else "index_copy_(): self and source expected to have the same "
            f"dtype, but got (self) {a} and (source) {b}")
    if how == "fill" and not isinstance(source, Tensor):
        if isinstance(source, builtins.complex) and not self.dtype.is_complex:
            raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type "
                               "is not supported")
        check_scalar_fits(source, self.dtype)
    idx = _t(index)
    # A 0-d index is a vector of one index, as in PyTorch.
    # PyTorch's node lists ``self`` and a tensor source, not the index.
    return cast(Tensor, apply_op(op, run, self, idx.reshape(1) if idx.dim() == 0 else idx,
                                 source, shown=_operands(self, source)))


def index_add(self: Tensor, dim: builtins.int, index: Tensor, source: Tensor, *,
              alpha: Any = 1) -> Tensor:
    """``self`` with ``source`` slices added at ``index`` along ``dim``."""
    return _index_update(self, dim, index, source, "add", alpha)


def index_copy(self: Tensor, dim: builtins.int, index: Tensor, source: Tensor) -> Tensor:
    """``self`` with ``source`` slices written at ``index`` along ``dim``."""
    return _index_update(self, dim, index, source, "copy")


def index_fill(self: Tensor, dim: builtins.int, index: Tensor, value: Any) -> Tensor:
    """``self`` with ``value`` at ``index`` along ``dim``."""
    return _index_update(self, dim, index, value, "fill")


def index_put(self: Tensor, indices: Sequence[Any], values: Any,
              accumulate: builtins.bool = False) -> Tensor:
    """``self`` with ``values`` at ``self[indices]`` (added with ``accumulate``)."""
    if len(indices) > self.dim():
        # (Counted before a mask or a scalar bool is read for the dimensions it takes.)
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got "
                         f"{len(indices)})")
    idx = _byte_masks(tuple(_t(i) for i in indices), _t(values).dim() == 0)
    if not accumulate:
        _check_put_dtype(self, [i.dtype.np for i in idx], values)
    elif isinstance(values, Tensor) and values.dtype is not self.dtype:
        _check_put_dtype(self, [], values)
    lifted = _lift_scalar_bools(tuple(i._value_for_backward() for i in idx), self.dim())
    if lifted is not None:
        axes, where = lifted
        _check_index_bounds(self, where, _with_axes(tuple(self.shape), axes))

        def put_lifted(x: Any, v: Any) -> Any:
            ref = fnp.expand_dims(x, axes)
            out = ref.at[where].add(v) if accumulate else write(
                ref, fnp.astype(v, x.dtype), lambda z, v: z.at[where].set(v),
                lambda z, v: z.at[where].add(v))
            return fnp.reshape(out, x.shape)

        return cast(Tensor, apply_op("IndexPut", put_lifted, self, values))
    _check_index_bounds(self, tuple(i._data for i in idx))
    hosts = tuple(i._data for i in idx)
    if all(type(h) is np.ndarray for h in hosts):
        # The indexing result's shape, from a stand-in that holds no values.
        result = np.broadcast_to(np.zeros((), np.int8), tuple(self.shape))[hosts].shape
        vshape = tuple(values.shape) if isinstance(values, Tensor) else ()
        try:
            fits = np.broadcast_shapes(vshape, result) == result
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot "
                               f"be broadcast to indexing result of shape {list(result)}")

    def run(x: Any, v: Any, *ii: Any) -> Any:
        if accumulate:
            return x.at[tuple(ii)].add(v)
        return write(x, fnp.astype(v, x.dtype), lambda z, v, *ii: z.at[ii].set(v),
                     lambda z, v, *ii: z.at[ii].add(v), *ii)

    return cast(Tensor, apply_op("IndexPut", run, self, values, *idx,
                                 shown=_operands(self, values)))


def _reduce_identity(dt: np.dtype[Any], for_max: builtins.bool) -> Any:
    """The start of an amax (``for_max``) or amin that leaves any entry of ``dt`` alone."""
    if dt.kind == "b":
        return not for_max
    if dt.kind in "iu":
        return np.iinfo(dt).min if for_max else np.iinfo(dt).max
    return -np.inf if for_max else np.inf


def _scatter_shape_check(self: Tensor, d: builtins.int, idx: Tensor, src: Any) -> None:
    """PyTorch's ``scatter_shape_check``: the index has self's number of dimensions (a
    0-d tensor counting as 1-d), and is no larger than self (apart from ``d``) nor than a
    tensor ``src``; an empty index passes."""
    if idx.numel() == 0:
        return
    nd = builtins.max(self.dim(), 1)

    def size(t: Tensor, k: builtins.int) -> builtins.int:
        if t.dim() == 0:
            return 1
        if k >= t.dim():
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-t.dim()}, {t.dim() - 1}], but got {k})")
        return builtins.int(t.shape[k])

    if builtins.max(idx.dim(), 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    wrong = builtins.any(size(idx, k) > size(self, k) for k in range(nd) if k != d)
    if not wrong and isinstance(src, Tensor):
        wrong = builtins.any(size(idx, k) > size(src, k) for k in range(nd))
    where = (f"Expected index {list(idx.shape)} to be no larger than self "
             f"{list(self.shape)} apart from dimension {d}")
    if isinstance(src, Tensor):
        if builtins.max(src.dim(), 1) != nd:
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        if wrong:
            raise RuntimeError(f"{where} and to be no larger size than src {list(src.shape)}")
    elif wrong:
        raise RuntimeError(where)


def _scatter(self: Tensor, dim: builtins.int, index: Tensor, src: Any, reduce: str | None,
             op: str, include_self: builtins.bool = True) -> Tensor:
    d = _dim(dim, self.dim())
    idx = _t(index)
    if idx.dtype.name not in ("int32", "int64"):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src.dtype is not self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _scatter_shape_check(self, d, idx, src)
    # A 0-d index (or self) counts as 1-d with one element, as in PyTorch.
    shape = tuple(idx.shape) or (1,)
    self_shape = tuple(self.shape) or (1,)
    n = self.shape[d] if self.dim() else 1
    check_range(idx, 0, n, RuntimeError, f"index {{}} is out of bounds for dimension {d} with "
                f"size {n}")
    rounds = None
    if reduce == "prod" and isinstance(src, Tensor) and src.requires_grad and shape and \
            type(idx._data) is np.ndarray:
        from funcgrad.torch._grad_mode import is_grad_enabled  # noqa: PLC0415

        if is_grad_enabled():
            # The engine differentiates a scatter-multiply with respect to its factors
            # where one update's targets are unique: repeated targets are multiplied in
            # rounds (round r: each target's r-th factor).
            full = np.broadcast_arrays(*_grid_index(shape, d, np.asarray(idx._data)))
            found = _rounds(np.ravel_multi_index(full, self_shape).reshape(-1))
            rounds = found if len(found) > 1 else None

    def run(x: Any, i: Any, s: Any) -> Any:
        if 0 in shape:
            return x  # an empty index writes nothing (whatever its shape)
        if fnp.ndim(x) and fnp.ndim(i):
            return run_nd(x, i, s)
        out = run_nd(fnp.reshape(x, self_shape), fnp.reshape(i, shape), s)
        return fnp.reshape(out, fnp.shape(x))

    def run_nd(x: Any, i: Any, s: Any) -> Any:
        where = _grid_index(shape, d, i)
        if isinstance(s, (builtins.int, builtins.float, builtins.bool)) or fnp.ndim(s) == 0:
            vals = fnp.broadcast_to(fnp.astype(fnp.asarray(s), x.dtype), shape)
        else:
            vals = s[tuple(slice(0, n) for n in shape)]
        if reduce is None:
            return write(x, vals, lambda z, v, i: z.at[_grid_index(shape, d, i)].set(v),
                         lambda z, v, i: z.at[_grid_index(shape, d, i)].add(v), i)
        if reduce in ("add", "sum"):
            base = x if include_self else x.at[where].set(fnp.zeros_like(vals))
            return base.at[where].add(vals)
        if reduce in ("multiply", "prod"):
            base = x if include_self else x.at[where].set(fnp.ones_like(vals))
            if rounds is not None:
                flat = tuple(fnp.reshape(fnp.broadcast_to(w, shape), (-1,)) for w in where)
                factors = fnp.reshape(vals, (-1,))
                for k in rounds:
                    base = base.at[tuple(w[k] for w in flat)].multiply(factors[k],
                                                                       unique_indices=True)
                return base
            return base.at[where].multiply(vals)
        if reduce in ("amax", "amin"):
            fill = _reduce_identity(np.dtype(x.dtype), reduce == "amax")
            base = x if include_self else x.at[where].set(fnp.full_like(vals, fill))
            return base.at[where].max(vals) if reduce == "amax" else base.at[where].min(vals)
        if reduce == "mean":
            ones = fnp.ones_like(vals)
            count = fnp.ones_like(x) if include_self else fnp.zeros_like(x)
            count = count.at[where].add(ones)
            base = x if include_self else x.at[where].set(fnp.zeros_like(vals))
            total = base.at[where].add(vals)
            q = total / fnp.maximum(count, 1)
            if np.dtype(x.dtype).kind in "iub":
                q = fnp.floor_divide(total, fnp.maximum(count, 1))
            return fnp.astype(q, x.dtype)
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")

    return cast(Tensor, apply_op(op, run, self, idx, src, shown=_operands(self, src)))


_SCATTER_REDUCE_DEPRECATED = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
    "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction "
    "options. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:225.)")


def scatter(self: Tensor, dim: builtins.int, index: Tensor, src: Any = None, *,
            value: Any = None, reduce: str | None = None) -> Tensor:
    """``self`` with ``src`` (or ``value``) written at ``index`` along ``dim``."""
    s = value if src is None else src
    if reduce is not None and isinstance(s, Tensor):
        from funcgrad.torch._tensor import warn_once_at_caller  # noqa: PLC0415

        warn_once_at_caller(_SCATTER_REDUCE_DEPRECATED)
    # scatter.value (a number) is PyTorch's second overload.
    return _scatter(self, dim, index, s, reduce, "Scatter" if isinstance(s, Tensor)
                    else "Scatter:1")


def scatter_add(self: Tensor, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
    """``self`` with ``src`` added at ``index`` along ``dim``."""
    return _scatter(self, dim, index, src, "add", "ScatterAdd")


def scatter_reduce(self: Tensor, dim: builtins.int, index: Tensor, src: Tensor, reduce: str,
                   *, include_self: builtins.bool = True) -> Tensor:
    """``self`` with ``src`` reduced (sum, prod, mean, amax, amin) at ``index``."""
    if reduce in ("max", "min"):
        # PyTorch's old names of amax/amin: computed, with no derivative.
        from funcgrad.torch._grad_mode import no_grad  # noqa: PLC0415

        with no_grad():
            values = _scatter(self, dim, index, src, "a" + reduce, "ScatterReduce",
                              include_self)
        return _undifferentiable(
            "ScatterReduce", "scatter_reduce", self, values, src, error=RuntimeError(
                "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
                f"{reduce}."))
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if reduce == "mean" and self.dtype is D.bool:
        # An empty index skips PyTorch's scatter kernel; its mean's floor division refuses.
        kernel = "div_floor_cpu" if _t(index).numel() == 0 else \
            "scatter_gather_tensor_cpu_reduce_mean"
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    return _scatter(self, dim, index, src, reduce, "ScatterReduce", include_self)


def masked_scatter(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``self`` with the leading entries of ``source`` written where ``mask`` is true."""
    if _t(mask).dtype is not D.bool:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {D.cpp_name(_t(mask).dtype)}")
    if isinstance(source, Tensor) and source.dtype is not self.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{D.cpp_name(self.dtype)} and {D.cpp_name(source.dtype)}")
    m = np.broadcast_to(np.asarray(_t(mask)._host(), bool), tuple(self.shape))
    pos = np.nonzero(m)
    count = len(pos[0]) if pos else 0
    if count > _t(source).numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")

    def run(x: Any, s: Any) -> Any:
        x = fnp.broadcast_to(x, m.shape)
        return x.at[pos].set(fnp.reshape(s, (-1,))[:count])

    return cast(Tensor, apply_op("MaskedScatter", run, self, source))


def masked_select(self: Tensor, mask: Any) -> Tensor:
    """The entries where ``mask`` is true, as a vector."""
    from funcgrad.torch._functions import masked_select as ms  # noqa: PLC0415
    from funcgrad.torch._tensor import batched_in_vmap  # noqa: PLC0415

    if batched_in_vmap(mask):
        raise RuntimeError(
            "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot "
            "support this because for each batch this would return a differently shaped "
            "Tensor. Please file an issue at https://github.com/pytorch/pytorch/issues if you "
            "need this feature.")
    return ms(self, mask)


def take(self: Tensor, index: Tensor) -> Tensor:
    """The entries of the flattened tensor at ``index``."""
    n = self.numel()
    check_range(index, -n, n, IndexError,
                f"out of range: tried to access index {{}} on a tensor of {n} elements.")
    return cast(Tensor, apply_op("Take", lambda x, i: fnp.take(fnp.reshape(x, (-1,)), i),
                                 self, _t(index)))


def take_along_dim(self: Tensor, indices: Tensor, dim: builtins.int | None = None) -> Tensor:
    """The entries at ``indices`` along ``dim`` (indices broadcast against ``self``)."""
    if dim is None:
        # PyTorch gathers from the flattened tensor: GatherBackward0 either way.
        return cast(Tensor, apply_op("Gather", lambda x, i: fnp.take(x, i, mode="clip"),
                                     self.reshape(-1), _t(indices).reshape(-1)))
    d = _dim(dim, self.dim())

    def run(x: Any, i: Any) -> Any:
        shp = list(np.broadcast_shapes(tuple(x.shape[:d] + (1,) + x.shape[d + 1:]),
                                       tuple(i.shape[:d] + (1,) + i.shape[d + 1:])))
        xs, is_ = list(shp), list(shp)
        xs[d], is_[d] = x.shape[d], i.shape[d]
        return take_along(fnp.broadcast_to(x, tuple(xs)), fnp.broadcast_to(i, tuple(is_)), d)

    return cast(Tensor, apply_op("Gather", run, self, _t(indices)))


def put(self: Tensor, index: Tensor, source: Tensor, accumulate: builtins.bool = False
        ) -> Tensor:
    """``self`` with ``source`` at the flat positions ``index``."""
    def run(x: Any, i: Any, s: Any) -> Any:
        flat = fnp.reshape(x, (-1,))
        at = fnp.reshape(i, (-1,))
        v = fnp.reshape(s, (-1,))
        return fnp.reshape(flat.at[at].add(v) if accumulate else write(
            flat, v, lambda z, v, at: z.at[at].set(v), lambda z, v, at: z.at[at].add(v), at),
            x.shape)

    return cast(Tensor, apply_op("Put", run, self, _t(index), source,
                                 shown=_operands(self, source)))


def _on_device_of(like: Any, data: Any) -> Tensor:
    """A result computed on the host, as a tensor on ``like``'s device (PyTorch keeps the
    results of a CUDA tensor's operations on the GPU)."""
    t = Tensor._from_data(data)
    return t.to(like.device) if isinstance(like, Tensor) and like.is_cuda else t


def _vmap_dynamic(op: str) -> str:
    return (f"vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over aten::{op}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")


def nonzero(self: Tensor, *, as_tuple: builtins.bool = False) -> Any:
    """The indices of the nonzero entries (one row each, or one tensor per axis)."""
    from funcgrad.torch._tensor import batched_in_vmap  # noqa: PLC0415

    if batched_in_vmap(self):
        raise RuntimeError("Batching rule not implemented for aten::nonzero_numpy. We could "
                           "not generate a fallback." if as_tuple else _vmap_dynamic("nonzero"))
    nz = np.nonzero(np.atleast_1d(self._host()))
    if as_tuple:
        return tuple(_on_device_of(self, np.asarray(a, np.int64)) for a in nz)
    return _on_device_of(self, np.stack(nz, -1).astype(np.int64) if self.dim() else
                         np.zeros((len(nz[0]), 0), np.int64))


def argwhere(self: Tensor) -> Tensor:
    return cast(Tensor, nonzero(self))


# ------------------------------------------------------------------- sorting


def msort(self: Tensor) -> Tensor:
    """Sorted along the first axis."""
    return cast(Tensor, cast(Any, self).sort(0)[0])


def kthvalue(self: Tensor, k: builtins.int, dim: builtins.int = -1,
             keepdim: builtins.bool = False) -> Any:
    """``(values, indices)`` of the ``k``-th smallest entry along ``dim``."""
    check_int_argument("kthvalue", "k", 1, k)
    d = _dim(dim, self.dim())
    check_reducible("kthvalue()", self, d)
    n = self.shape[d] if self.dim() else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _no_cpu_kernel("kthvalue_cpu", self, self.dtype is D.bool or self.dtype.is_complex)
    host = host_if_eager(self) if self.dim() else None
    if host is None:
        return _kth(self, k, d, keepdim, "kthvalue", "Kthvalue")
    # ATen's quickselect decides which of equal entries is reported.
    keys = rank_keys(host, d)
    order = np.argsort(keys, axis=-1, kind="stable")[:, k - 1]
    for r in np.flatnonzero(tied_rows(keys)):
        key, ix = keys[r].tolist(), list(range(keys.shape[-1]))
        aten_quick_select(key, ix, k - 1)
        order[r] = ix[k - 1]
    moved = np.moveaxis(host, d, -1).shape
    it = _on_device_of(self, np.moveaxis(order.reshape((*moved[:-1], 1)), -1, d))
    return _returns("kthvalue", *_pick("Kthvalue", self, it, d, keepdim))


def _kth(self: Tensor, k: builtins.int, d: builtins.int, keepdim: builtins.bool, name: str,
         op: str) -> Any:
    if not self.dim():
        return _returns(name, apply_op(op, lambda x: x, self),
                        Tensor._from_data(np.zeros((), np.int64)))
    i = cast(Any, self).sort(d)[1].narrow(d, k - 1, 1)
    return _returns(name, *_pick(op, self, i, d, keepdim))


def _pick(op: str, self: Tensor, idx: Tensor, d: builtins.int, keepdim: builtins.bool
          ) -> tuple[Tensor, Tensor]:
    """``self`` at ``idx`` along ``d`` (``idx`` keeps the axis) as one node named ``op``, as
    PyTorch records kthvalue/median/mode/cummax (the gradient goes to those positions)."""
    def run(x: Any, i: Any) -> Any:
        v = take_along(x, i, d)
        return v if keepdim else fnp.squeeze(v, d)

    v = cast(Tensor, apply_op(op, run, self, idx))
    return v, (idx if keepdim else cast(Any, idx).squeeze(d))


def _evenly(op: str, self: Tensor, m: Any) -> Tensor:
    """The value ``m`` (found without recording) with PyTorch's gradient for median() and
    nanmedian(): shared evenly by the entries equal to it (NaN ones when it is NaN)."""
    def run(x: Any) -> Any:
        c = fnp.asarray(m, x.dtype)
        hit = (x == c) | (fnp.isnan(x) & fnp.isnan(c))
        # x - c is exactly 0 at the hits (NaN when c is): the value is c, to the bit.
        total = fnp.sum(fnp.where(hit, x - c, fnp.zeros_like(x)))
        return c + total / fnp.maximum(fnp.sum(hit), 1)

    return cast(Tensor, apply_op(op, run, self))


def _median_pos(n: builtins.int) -> builtins.int:
    return (n - 1) // 2


def median(self: Tensor, dim: builtins.int | None = None, keepdim: builtins.bool = False
           ) -> Any:
    """The lower median (of all entries, or ``(values, indices)`` along ``dim``)."""
    if self.dtype is D.bool:
        raise RuntimeError(f'"{"median_cpu" if dim is None else "median_out"}" not '
                           "implemented for 'Bool'")
    if dim is None:
        flat = self.reshape(-1)
        if flat.numel() == 0:
            # NaN, cast to an integer dtype as PyTorch casts it.
            return (cast(Any, flat).sum() * np.nan).to(self.dtype)
        host = np.sort(np.asarray(flat._host()))  # NaN sorts last: a NaN gives NaN
        m = host[-1] if np.isnan(host[-1]) else host[_median_pos(flat.numel())]
        if not (self.dtype.is_floating_point or self.dtype.is_complex):
            # Integers keep their dtype (and have no gradient to share).
            return apply_op("Median", lambda x: fnp.asarray(m, x.dtype), self)
        return _evenly("Median", self, m)
    d = _dim(dim, self.dim())
    check_reducible("median()", self, d)
    k = _median_pos(self.shape[d] if self.dim() else 1) + 1
    if self.dim() and (self.dtype.is_floating_point or self.dtype.is_complex):
        host = np.asarray(self._host())
        nan = np.isnan(host)
        if nan.any():
            # PyTorch: a slice holding NaN has median NaN, at its first NaN.
            i = cast(Any, self).sort(d)[1].narrow(d, k - 1, 1)._host()
            first = np.expand_dims(np.argmax(nan, axis=d), d)
            i = np.where(np.any(nan, axis=d, keepdims=True), first, i)
            it = Tensor._from_data(np.asarray(i, np.int64))
            return _returns("median", *_pick("Median:1", self, it, d, keepdim))
    return _kth(self, k, d, keepdim, "median", "Median:1")


def nanmedian(self: Tensor, dim: builtins.int | None = None, keepdim: builtins.bool = False
              ) -> Any:
    """The lower median ignoring NaN."""
    host = np.asarray(self._host())
    if dim is None:
        vals = host[~np.isnan(host)].reshape(-1)
        if vals.size == 0:
            return Tensor._from_data(np.asarray(np.nan, host.dtype))
        return _evenly("Nanmedian", self, np.sort(vals)[_median_pos(vals.size)])
    d = _dim(dim, self.dim())
    check_reducible("median()", self, d)  # PyTorch's nanmedian names median
    order = np.argsort(host, axis=d, kind="stable")  # NaNs sort last
    counts = (~np.isnan(host)).sum(axis=d, keepdims=True)
    k = np.maximum(counts - 1, 0) // 2
    i = np.take_along_axis(order, k, axis=d)
    it = Tensor._from_data(i.astype(np.int64))
    return _returns("nanmedian", *_pick("Nanmedian:1", self, it, d, keepdim))


def mode(self: Tensor, dim: builtins.int = -1, keepdim: builtins.bool = False) -> Any:
    """``(values, indices)``: the most frequent entry along ``dim`` (the smallest of ties)
    and its last position."""
    d = _dim(dim, self.dim())
    check_reducible("mode()", self, d)
    host = np.moveaxis(np.atleast_1d(np.asarray(self._host())), d, -1)
    flat = host.reshape(-1, host.shape[-1])
    idx = np.zeros(len(flat), np.int64)
    n = flat.shape[-1]
    nan = np.isnan(flat) if flat.dtype.kind in "fc" else np.zeros(flat.shape, bool)
    for r, row in enumerate(flat):
        if n > 16 or nan[r].any():
            # PyTorch's unstable std::sort decides the index (and, with NaN, the value).
            idx[r] = mode_row(row.tolist())[1]
            continue
        vals, counts = np.unique(row, return_counts=True)
        best = vals[np.argmax(counts)]
        idx[r] = np.flatnonzero(row == best)[-1]
    it = Tensor._from_data(idx.reshape((*host.shape[:-1], 1)))
    it = Tensor._from_data(np.moveaxis(it._data, -1, d)) if self.dim() else it.reshape(())
    if not self.dim():
        return _returns("mode", apply_op("Mode", lambda x: x, self), it)
    return _returns("mode", *_pick("Mode", self, it, d, keepdim))


def _quantile(self: Tensor, q: Any, dim: Any, keepdim: builtins.bool, interpolation: str,
              nan: builtins.bool) -> Tensor:
    if not self.dtype.is_floating_point:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    qs = q._host() if isinstance(q, Tensor) else np.asarray(q, dtype=np.float64)
    qs = np.asarray(qs, np.float64)
    if np.any((qs < 0) | (qs > 1)):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    x = self.reshape(-1) if dim is None else self
    d = 0 if dim is None else _dim(dim, self.dim())
    host = np.asarray(x._host())
    srt, idx = cast(Any, x).sort(d)
    n = x.shape[d] if x.dim() else 1
    valid = (~np.isnan(host)).sum(axis=d, keepdims=True) if nan else \
        np.full(np.sum(host, axis=d, keepdims=True).shape, n)
    has_nan = np.isnan(host).any(axis=d, keepdims=True)
    outs = []
    for qv in qs.reshape(-1):
        pos = qv * (np.maximum(valid, 1) - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.ceil(pos).astype(np.int64)
        frac = pos - lo
        if interpolation == "lower":
            hi, frac = lo, np.zeros_like(frac)
        elif interpolation == "higher":
            lo, frac = hi, np.zeros_like(frac)
        elif interpolation == "nearest":
            near = np.where((frac == 0.5) & (lo % 2 == 0), lo, np.round(pos).astype(np.int64))
            lo = hi = near
            frac = np.zeros_like(frac)
        elif interpolation == "midpoint":
            frac = np.where(hi > lo, 0.5, 0.0)
        elif interpolation != "linear":
            raise RuntimeError("quantile() interpolation must be one of linear, lower, "
                               f"higher, midpoint or nearest. Got {interpolation}")
        a = srt.gather(d, Tensor._from_data(lo))
        b = srt.gather(d, Tensor._from_data(hi))
        fr = Tensor._from_data(np.asarray(frac, host.dtype))
        val = a + (b - a) * fr
        bad = (valid == 0) if nan else has_nan
        val = cast(Any, val).masked_fill(Tensor._from_data(bad), np.nan)
        if not keepdim:
            val = val.squeeze(d) if x.dim() else val
        elif dim is None:
            val = val.reshape([1] * self.dim())
        outs.append(val)
    out = cast(Tensor, outs[0]) if qs.ndim == 0 else stack(outs, 0)
    # PyTorch computes with a trailing axis that it squeezes in place last: its node is
    # SqueezeBackward4.
    return cast(Tensor, cast(Any, out.unsqueeze(-1)).squeeze_(-1)) if out.requires_grad else out


def quantile(self: Tensor, q: Any, dim: Any = None, keepdim: builtins.bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles (NaN where a NaN is present)."""
    return _quantile(self, q, dim, keepdim, interpolation, False)


def nanquantile(self: Tensor, q: Any, dim: Any = None, keepdim: builtins.bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles ignoring NaN."""
    return _quantile(self, q, dim, keepdim, interpolation, True)


def unique(self: Tensor, sorted: builtins.bool = True, return_inverse: builtins.bool = False,  # noqa: A002
           return_counts: builtins.bool = False, dim: builtins.int | None = None) -> Any:
    """The distinct entries, sorted (with the inverse map and counts when asked)."""
    from funcgrad.torch._tensor import batched_in_vmap  # noqa: PLC0415

    if batched_in_vmap(self):
        raise RuntimeError(_vmap_dynamic("_unique2" if dim is None else "unique_dim"))
    host = np.asarray(self._host())
    has_nan = host.dtype.kind in "fc" and builtins.bool(np.isnan(host).any())
    if dim is None and has_nan:
        vals, inv, counts = _unique_nan_apart(host.reshape(-1))
        inv = inv.reshape(host.shape)
    elif dim is None:
        vals, inv, counts = np.unique(host.reshape(-1), return_inverse=True,
                                      return_counts=True)
        inv = inv.reshape(host.shape)
    elif has_nan:
        vals, inv, counts = _unique_rows_nan(host, _dim(dim, self.dim()))
    else:
        vals, inv, counts = np.unique(host, return_inverse=True, return_counts=True,
                                      axis=_dim(dim, self.dim()))
        inv = inv.reshape(-1)
    out: list[Tensor] = [_undifferentiable(
        "Unique2" if dim is None else "UniqueDim", "_unique2" if dim is None else "unique_dim",
        self, _on_device_of(self, np.asarray(vals, host.dtype)))]
    if return_inverse:
        out.append(_on_device_of(self, inv.astype(np.int64)))
    if return_counts:
        out.append(_on_device_of(self, counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def _undifferentiable(op: str, kernel: str, src: Tensor, values: Tensor,
                      *others: Any, error: Exception | None = None) -> Tensor:
    """``values`` (computed from ``src`` and ``others``) as PyTorch's output of ``kernel``: a
    node named for ``op`` whose backward raises ``error`` (PyTorch's NotImplementedError)."""
    from funcgrad.core import Tracer  # noqa: PLC0415
    from funcgrad.torch._grad_mode import is_grad_enabled  # noqa: PLC0415
    from funcgrad.transforms.custom import custom_vjp  # noqa: PLC0415

    ins = (src, *(o for o in others if isinstance(o, Tensor)))
    # (torch.func's transforms differentiate too: a traced operand)
    traced = builtins.any(isinstance(t._data, Tracer) for t in ins)
    if not ((traced or builtins.any(t.requires_grad for t in ins) and is_grad_enabled())
            and values.dtype.is_floating_point):
        return values
    held = values._data
    refusal = error or NotImplementedError(
        f"the derivative for '{kernel}' is not implemented.")

    def run(*xs: Any) -> Any:
        return held

    def bwd(res: Any, g: Any) -> Any:
        raise refusal

    rule = custom_vjp(run)
    rule.defvjp(lambda *xs: (held, None), bwd)
    return cast(Tensor, apply_op(op, rule, *ins))


def _unique_nan_apart(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch sorts NaN last and then merges neighbours that compare ``==``, so no two
    NaNs are ever merged (``np.unique`` merges them). Its sort is the unstable one, so
    the NaNs are numbered in the order that sort leaves them."""
    order = replayed_order(flat, 0, False)
    if order is None:
        order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    starts = np.ones(ordered.size, bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    inv = np.empty(flat.size, np.int64)
    inv[order] = np.cumsum(starts) - 1
    return ordered[starts], inv, np.diff(np.append(np.flatnonzero(starts), flat.size))


class _RowKey:
    """A slice compared as ATen's unique(dim=) compares them: the first element where one
    is ``<`` or ``>`` the other decides, NaN deciding nothing."""

    __slots__ = ("row",)

    def __init__(self, row: np.ndarray) -> None:
        self.row = row

    def __lt__(self, other: _RowKey) -> builtins.bool:
        for a, b in zip(self.row.tolist(), other.row.tolist()):
            if a < b:
                return True
            if a > b:
                return False
        return False


def _unique_rows_nan(host: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """unique(dim=) with NaNs: ATen orders the slices with ``std::sort`` under a comparator
    that NaN leaves inconsistent, so the order is replayed; slices holding a NaN are never
    equal to another."""
    moved = np.moveaxis(host, d, 0)
    flat = moved.reshape(moved.shape[0], -1)
    keys = [_RowKey(r) for r in flat]
    ix = list(range(len(keys)))
    try:
        std_sort(keys, ix, 0, len(keys))
    except IndexError:  # the comparator ran a scan off the end, undefined in C++ too
        ix = list(range(len(keys)))
    order = np.asarray(ix, np.int64)
    ordered = flat[order]
    starts = np.ones(len(order), bool)
    if len(order) > 1:
        starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inv = np.empty(len(order), np.int64)
    inv[order] = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), len(order)))
    vals = np.moveaxis(moved[order[starts]], 0, d)
    return np.ascontiguousarray(vals), inv, counts


def unique_consecutive(self: Tensor, return_inverse: builtins.bool = False,
                       return_counts: builtins.bool = False, dim: builtins.int | None = None
                       ) -> Any:
    """The entries with consecutive repeats collapsed."""
    host = np.asarray(self._host())
    if dim is None:
        flat = host.reshape(-1)
        starts = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else \
            np.zeros(0, bool)
        vals = flat[starts]
        inv = (np.cumsum(starts) - 1).reshape(host.shape)
    else:
        d = _dim(dim, self.dim())
        moved = np.moveaxis(host, d, 0).reshape(host.shape[d], -1)
        starts = np.concatenate([[True], np.any(moved[1:] != moved[:-1], axis=1)])
        vals = np.take(host, np.flatnonzero(starts), axis=d)
        inv = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), len(starts)))
    out: list[Tensor] = [_undifferentiable("UniqueConsecutive", "unique_consecutive", self,
                                           _on_device_of(self, np.ascontiguousarray(vals)))]
    if return_inverse:
        out.append(_on_device_of(self, inv.astype(np.int64)))
    if return_counts:
        out.append(_on_device_of(self, counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


# ---------------------------------------------------------------- cumulative


def cumprod(self: Tensor, dim: builtins.int, *, dtype: Any = None) -> Tensor:
    """The running product along ``dim``."""
    d = _dim(dim, self.dim())
    dt = _sum_dtype(self.dtype, dtype)

    def run(x: Any) -> Any:
        x = fnp.astype(x, dt.np)
        n = x.shape[d] if x.ndim else 1
        if x.ndim == 0 or n == 0:
            return x
        parts = [fnp.take(x, np.array([0]), axis=d)]
        for k in range(1, n):
            parts.append(parts[-1] * fnp.take(x, np.array([k]), axis=d))
        return fnp.concatenate(parts, d) if parts else x

    return cast(Tensor, apply_op("Cumprod", run, self))


def _no_cpu_kernel(kernel: str, t: Tensor, refused: builtins.bool) -> None:
    """PyTorch's error where its CPU kernel has no version for the tensor's dtype."""
    if refused and t.device.type == "cpu":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP[t.dtype.name]}\'')


def _cum_extreme(self: Tensor, dim: builtins.int, name: str) -> Any:
    d = _dim(dim, self.dim())
    _no_cpu_kernel(f"{name}_cpu", self, self.dtype.is_complex and self.numel() > 0)
    host = np.asarray(self._host())
    if self.dim() == 0:
        return _returns(name, self.clone(), Tensor._from_data(np.zeros((), np.int64)))
    moved = np.moveaxis(host, d, -1)
    idx = np.zeros(moved.shape, np.int64)
    best = np.zeros(moved.shape[:-1], moved.dtype)  # any start: step 0 takes the entry
    bi = np.zeros(moved.shape[:-1], np.int64)
    better = np.greater_equal if name == "cummax" else np.less_equal
    for k in range(moved.shape[-1]):
        v = moved[..., k]
        take = better(v, best) | np.isnan(v) | (k == 0)
        take &= ~np.isnan(best) | (k == 0) | np.isnan(v)
        best = np.where(take, v, best)
        bi = np.where(take, k, bi)
        idx[..., k] = bi
    it = Tensor._from_data(np.ascontiguousarray(np.moveaxis(idx, -1, d)))
    return _returns(name, _pick(name.capitalize(), self, it, d, True)[0], it)


def cummax(self: Tensor, dim: builtins.int) -> Any:
    """``(values, indices)`` of the running maximum along ``dim``."""
    return _cum_extreme(self, dim, "cummax")


def cummin(self: Tensor, dim: builtins.int) -> Any:
    """``(values, indices)`` of the running minimum along ``dim``."""
    return _cum_extreme(self, dim, "cummin")


def logcumsumexp(self: Tensor, dim: builtins.int) -> Tensor:
    """``log(cumsum(exp(self)))`` along ``dim``, computed stably."""
    d = _dim(dim, self.dim())
    _no_cpu_kernel("logcumsumexp_out_cpu", self,
                   not (self.dtype.is_floating_point or self.dtype.is_complex))

    def run(x: Any) -> Any:
        if x.size == 0:
            return x  # an empty running sum: no maximum to shift by
        m = lax.stop_gradient(fnp.max(x, axis=d, keepdims=True)) if x.ndim else \
            lax.stop_gradient(x)
        m = fnp.where(fnp.isfinite(m), m, 0)
        return fnp.log(fnp.cumsum(fnp.exp(x - m), axis=d if x.ndim else None)) + m

    return cast(Tensor, apply_op("Logcumsumexp", run, _float_of(self)))


# ------------------------------------------------------------- matrix products


def _cpp_of(t: Tensor) -> str:
    return _CPP[t.dtype.name]


def _coef(c: Any, dt: D.dtype) -> Any:
    """A Python coefficient (``alpha``, ``beta``, ``value``) as PyTorch's kernels take it:
    truncated to an integer for an integer result."""
    if isinstance(c, (builtins.bool, builtins.int, builtins.float)) and not (
            dt.is_floating_point or dt.is_complex):
        return builtins.int(c)
    return c


def _as(x: Any, dt: D.dtype) -> Any:
    return x if x.dtype == dt.np else fnp.astype(x, dt.np)


def _no_bool(kernel: str, t: Tensor) -> None:
    if t.dtype is D.bool:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _same_size_inplace(self: Tensor, out: tuple[builtins.int, ...]) -> None:
    if tuple(self.shape) != out:
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output "
                           f"tensor size {list(out)} should match")


def _ba(b: Any, p: Any, beta: Any, alpha: Any) -> Any:
    """``beta * b + alpha * p``; ``b`` is not read when ``beta`` is 0 (its NaNs vanish)."""
    scaled = p if builtins.isinstance(alpha, (builtins.int, builtins.float)) and alpha == 1 \
        else p * alpha
    if builtins.isinstance(beta, (builtins.int, builtins.float)) and beta == 0:
        # A select, not 0 * b: NaNs of b vanish, and b still gets its (zero) gradient.
        shape = np.broadcast_shapes(b.shape, p.shape)
        return fnp.where(True, fnp.broadcast_to(scaled, shape), fnp.broadcast_to(b, shape))
    return (b if builtins.isinstance(beta, (builtins.int, builtins.float)) and beta == 1
            else b * beta) + scaled


def _product(op: str, self: Tensor, a: Tensor, b: Tensor, beta: Any, alpha: Any,
             dt: D.dtype, out: tuple[builtins.int, ...], inplace: builtins.bool,
             prod: Callable[[Any, Any], Any]) -> Tensor:
    """``beta * self + alpha * prod(a, b)`` in dtype ``dt``: out of place, or written into
    ``self`` through the in-place mechanism (``Tensor._inplace``), recorded as PyTorch's
    node ``op`` either way."""
    beta, alpha = _coef(beta, dt), _coef(alpha, dt)
    # PyTorch's CPU BLAS for a half type (bfloat16, float16) accumulates the product and
    # adds ``beta * self`` in float32, rounding once (``addr`` is elementwise: not so).
    wide = D.float32 if dt in (D.bfloat16, D.float16) and op != "Addr" else dt

    def run(s: Any, x: Any, y: Any) -> Any:
        r = _ba(_as(s, wide), prod(_as(x, wide), _as(y, wide)), beta, alpha)
        return r if wide is dt else fnp.astype(r, dt.np)

    if inplace:
        return self._inplace(op, run, a, b)
    from funcgrad.torch._tensor import check_expand  # noqa: PLC0415

    check_expand(tuple(self.shape), out)
    return cast(Tensor, apply_op(op, run, self, a, b))


def _addmm_checks(self: Tensor, mat1: Any, mat2: Any, names: tuple[str, str] = ("mat1", "mat2")
                  ) -> None:
    """PyTorch's checks of ``addmm`` (and of ``addbmm``'s summed product), in its order."""
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_cpp_of(mat1)} and "
                           f"{_cpp_of(mat2)}")
    if self.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_cpp_of(self)} and "
                           f"{_cpp_of(mat2)}")


def _addmm(self: Tensor, mat1: Tensor, mat2: Tensor, beta: Any, alpha: Any,
           inplace: builtins.bool) -> Tensor:
    mat1, mat2 = _t(mat1), _t(mat2)
    _addmm_checks(self, mat1, mat2)
    for nm, m in (("mat1", mat1), ("mat2", mat2)):
        if m.dim() != 2:
            raise RuntimeError(f"{nm} must be a matrix, got {m.dim()}-D tensor")
    (n, k), (k2, p) = mat1.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{p})")
    _no_bool("addmm_impl_cpu_", self)
    if inplace:
        _same_size_inplace(self, (n, p))
    return _product("Addmm", self, mat1, mat2, beta, alpha, self.dtype, (n, p), inplace,
                    fnp.matmul)


def addmm(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
          ) -> Tensor:
    """``beta * self + alpha * (mat1 @ mat2)``.

    >>> import funcgrad.torch as torch
    >>> torch.ones(2, 2).addmm(torch.eye(2), torch.full((2, 2), 3.0), beta=0.5)
    tensor([[3.5000, 3.5000],
            [3.5000, 3.5000]])
    """
    if getattr(mat1, "_sparse_kind", False):  # (funcgrad.torch._sparse)
        return cast(Tensor, cast(Any, mat1)._addmm(self, mat2, beta, alpha, "Addmm"))
    return _addmm(self, mat1, mat2, beta, alpha, False)


def addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1
           ) -> Tensor:
    """``addmm`` written into this tensor (recorded as ``AddmmBackward0``).

    >>> import funcgrad.torch as torch
    >>> b = torch.ones(2, 2)
    >>> b.addmm_(torch.eye(2), torch.eye(2), alpha=2)
    tensor([[3., 1.],
            [1., 3.]])
    """
    return _addmm(self, mat1, mat2, beta, alpha, True)


def _addmv(self: Tensor, mat: Tensor, vec: Tensor, beta: Any, alpha: Any,
           inplace: builtins.bool) -> Tensor:
    mat, vec = _t(mat), _t(vec)
    if mat.dim() != 2 or vec.dim() != 1 or self.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, "
                           f"{vec.dim()}")
    n, k = mat.shape
    if k != vec.shape[0] or (self.dim() == 1 and self.shape[0] not in (1, n)):
        got = "x".join(str(d) for d in self.shape)
        raise RuntimeError(f"size mismatch, got input ({got}), mat ({n}x{k}), vec "
                           f"({vec.shape[0]})")
    if not (self.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_cpp_of(self)}, {_cpp_of(mat)}, and {_cpp_of(vec)}")
    _no_bool("addmv_impl_cpu", self)
    if inplace:
        _same_size_inplace(self, (n,))
    return _product("Addmv", self, mat, vec, beta, alpha, self.dtype, (n,), inplace,
                    fnp.matmul)


def addmv(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * self + alpha * (mat @ vec)``.

    >>> import funcgrad.torch as torch
    >>> torch.ones(2).addmv(torch.eye(2), torch.tensor([1.0, 2.0]), alpha=3)
    tensor([4., 7.])
    """
    return _addmv(self, mat, vec, beta, alpha, False)


def addmv_(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addmv`` written into this tensor (recorded as ``AddmvBackward0``).

    >>> import funcgrad.torch as torch
    >>> v = torch.ones(2)
    >>> v.addmv_(torch.eye(2), torch.tensor([1.0, 2.0]), beta=0)
    tensor([1., 2.])
    """
    return _addmv(self, mat, vec, beta, alpha, True)


def _addr(self: Tensor, vec1: Tensor, vec2: Tensor, beta: Any, alpha: Any,
          inplace: builtins.bool) -> Tensor:
    vec1, vec2 = _t(vec1), _t(vec2)
    for nm, v in (("vec1", vec1), ("vec2", vec2)):
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {nm}, but got {v.dim()}-D")
    out = (vec1.shape[0], vec2.shape[0])
    if inplace and tuple(self.shape) != out:
        raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: {list(vec1.shape)}, "
                           f"v2: {list(vec2.shape)}")
    dt = result_dtype(self, vec1, vec2)
    return _product("Addr", self, vec1, vec2, beta, alpha, dt, out, inplace, fnp.outer)


def addr(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * self + alpha * outer(vec1, vec2)``.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2, 2).addr(torch.tensor([1.0, 2.0]), torch.tensor([1.0, -1.0]))
    tensor([[ 1., -1.],
            [ 2., -2.]])
    """
    return _addr(self, vec1, vec2, beta, alpha, False)


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``addr`` written into this tensor (recorded as ``AddrBackward0``).

    >>> import funcgrad.torch as torch
    >>> m = torch.eye(2)
    >>> m.addr_(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0]), alpha=5)
    tensor([[1., 5.],
            [0., 1.]])
    """
    return _addr(self, vec1, vec2, beta, alpha, True)


def _batch_checks(batch1: Tensor, batch2: Tensor) -> None:
    if batch2.dim() < 3:
        n = builtins.max(batch2.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got 2)")
    for nm, b in (("batch1", batch1), ("batch2", batch2)):
        if b.dim() != 3:
            raise RuntimeError(f"{nm} must be a 3D tensor")


def _baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any,
             inplace: builtins.bool) -> Tensor:
    from funcgrad.torch._tensor import cpp_type_name  # noqa: PLC0415

    batch1, batch2 = _t(batch1), _t(batch2)
    _batch_checks(batch1, batch2)
    bs, n, k = batch1.shape
    if tuple(batch2.shape[:2]) != (bs, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {k}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    if self.dtype is batch1.dtype and batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {_cpp_of(batch1)} but found "
                           f"{_cpp_of(batch2)}")
    if not (self.dtype is batch1.dtype is batch2.dtype):
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{cpp_type_name(self.dtype)}, batch1: {cpp_type_name(batch1.dtype)}, "
                           f"batch2: {cpp_type_name(batch2.dtype)}")
    _no_bool("baddbmm_cpu", self)
    out = (bs, n, batch2.shape[2])
    if inplace:
        _same_size_inplace(self, out)
    return _product("Baddbmm", self, batch1, batch2, beta, alpha, self.dtype, out, inplace,
                    fnp.matmul)


def baddbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
            ) -> Tensor:
    """``beta * self + alpha * (batch1 @ batch2)``, matrix by matrix.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(1, 2, 2).baddbmm(torch.ones(1, 2, 3), torch.ones(1, 3, 2))
    tensor([[[3., 3.],
             [3., 3.]]])
    """
    return _baddbmm(self, batch1, batch2, beta, alpha, False)


def baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
             ) -> Tensor:
    """``baddbmm`` written into this tensor (recorded as ``BaddbmmBackward0``).

    >>> import funcgrad.torch as torch
    >>> b = torch.ones(1, 2, 2)
    >>> b.baddbmm_(torch.ones(1, 2, 3), torch.ones(1, 3, 2), beta=2, alpha=-1)
    tensor([[[-1., -1.],
             [-1., -1.]]])
    """
    return _baddbmm(self, batch1, batch2, beta, alpha, True)


def _addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, beta: Any, alpha: Any,
            inplace: builtins.bool) -> Tensor:
    batch1, batch2 = _t(batch1), _t(batch2)
    _batch_checks(batch1, batch2)
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    (_, n, k), (_, k2, p) = batch1.shape, batch2.shape
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{p})")
    _addmm_checks(self, batch1, batch2)
    _no_bool("addbmm_cpu", self)
    if inplace:
        _same_size_inplace(self, (n, p))
    return _product("Addbmm", self, batch1, batch2, beta, alpha, self.dtype, (n, p), inplace,
                    lambda x, y: fnp.sum(fnp.matmul(x, y), 0))


def addbmm(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
           ) -> Tensor:
    """``beta * self + alpha * sum_i batch1[i] @ batch2[i]``.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2, 2).addbmm(torch.ones(3, 2, 1), torch.ones(3, 1, 2))
    tensor([[3., 3.],
            [3., 3.]])
    """
    return _addbmm(self, batch1, batch2, beta, alpha, False)


def addbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
            ) -> Tensor:
    """``addbmm`` written into this tensor (recorded as ``AddbmmBackward0``).

    >>> import funcgrad.torch as torch
    >>> s = torch.ones(2, 2)
    >>> s.addbmm_(torch.ones(3, 2, 1), torch.ones(3, 1, 2), beta=-1)
    tensor([[2., 2.],
            [2., 2.]])
    """
    return _addbmm(self, batch1, batch2, beta, alpha, True)


def _addc(op: str, self: Tensor, tensor1: Any, tensor2: Any, value: Any,
          inplace: builtins.bool) -> Tensor:
    t1, t2 = _t(tensor1), _t(tensor2)
    if op == "Addcdiv" and not (t1.dtype.is_floating_point or t1.dtype.is_complex) and not (
            t2.dtype.is_floating_point or t2.dtype.is_complex):
        raise RuntimeError(_ADDCDIV_INTEGER)
    if op == "Addcmul":
        _no_bool("addcmul_cpu_out", self)
    shape = tuple(self.shape)
    for t in (t1, t2):
        _check_broadcast(shape, tuple(t.shape))
        shape = tuple(np.broadcast_shapes(shape, tuple(t.shape)))
    dt = result_dtype(self, t1, t2)
    v = _coef(value, dt)
    combine = fnp.multiply if op == "Addcmul" else fnp.divide

    def run(a: Any, x: Any, y: Any) -> Any:
        return _as(a, dt) + v * combine(_as(x, dt), _as(y, dt))

    if half_on_cpu(dt, self, t1, t2):
        # PyTorch's CPU kernels: float32 throughout, rounded once; addcmul's last step a
        # fused multiply-add (value * tensor1) * tensor2 + self.
        v32 = np.float32(value)

        def run(a: Any, x: Any, y: Any) -> Any:
            a, x, y = (fnp.astype(z, np.float32) for z in (a, x, y))
            wide = fma32(v32 * x, y, a) if op == "Addcmul" else a + (v32 * x) / y
            return fnp.astype(wide, dt.np)

    if inplace:
        return self._inplace(op, run, t1, t2)
    return cast(Tensor, apply_op(op, run, self, t1, t2))


_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
    "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


def addcmul(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """``self + value * tensor1 * tensor2``.

    >>> import funcgrad.torch as torch
    >>> torch.ones(2).addcmul(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]), value=0.5)
    tensor([2.5000, 5.0000])
    """
    return _addc("Addcmul", self, tensor1, tensor2, value, False)


def addcmul_(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """``addcmul`` written into this tensor (Adam's second moment:
    ``v.mul_(b2).addcmul_(g, g, value=1 - b2)``).

    >>> import funcgrad.torch as torch
    >>> v = torch.ones(2)
    >>> v.addcmul_(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]), value=0.1)
    tensor([1.1000, 1.4000])
    """
    return _addc("Addcmul", self, tensor1, tensor2, value, True)


def addcdiv(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """``self + value * tensor1 / tensor2``.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2).addcdiv(torch.tensor([1.0, 2.0]), torch.tensor([4.0, 4.0]), value=2)
    tensor([0.5000, 1.0000])
    """
    return _addc("Addcdiv", self, tensor1, tensor2, value, False)


def addcdiv_(self: Tensor, tensor1: Any, tensor2: Any, *, value: Any = 1) -> Tensor:
    """``addcdiv`` written into this tensor (Adam's step:
    ``p.addcdiv_(m, v.sqrt().add_(eps), value=-lr)``).

    >>> import funcgrad.torch as torch
    >>> p = torch.ones(2)
    >>> p.addcdiv_(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 2.0]), value=-1)
    tensor([0.5000, 0.0000])
    """
    return _addc("Addcdiv", self, tensor1, tensor2, value, True)


# ------------------------------------------------------------------- shapes


def ravel(self: Tensor) -> Tensor:
    # PyTorch's ``contiguous().view(-1)``: ViewBackward0 (over CloneBackward0 for a copy).
    return self.contiguous().view(-1)


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return self.reshape(*other.shape)


def movedim(self: Tensor, source: Any, destination: Any) -> Tensor:
    """Axes ``source`` moved to positions ``destination``."""
    return cast(Tensor, apply_op("Permute", lambda x: fnp.moveaxis(x, source, destination),
                                 self))


def swapdims(self: Tensor, dim0: builtins.int, dim1: builtins.int) -> Tensor:
    return self.transpose(dim0, dim1)


def tile(self: Tensor, dims: Any) -> Tensor:
    """Repeated ``dims`` times along each axis (missing leading counts are 1)."""
    reps = (dims,) if isinstance(dims, builtins.int) else tuple(dims)
    if len(reps) < self.dim():
        reps = (1,) * (self.dim() - len(reps)) + reps
    return self.repeat(*reps)


def tensor_split(self: Tensor, indices_or_sections: Any = None, dim: builtins.int = 0, *,
                 tensor_indices_or_sections: Any = None, sections: Any = None,
                 indices: Any = None) -> tuple[Tensor, ...]:
    """Split into ``n`` near-equal parts, or at the given indices."""
    spec = next((v for v in (indices_or_sections, tensor_indices_or_sections, sections,
                             indices) if v is not None), None)
    if self.dim() == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a "
                           f"tensor with {self.dim()} dims")
    d = _dim(dim, self.dim())
    n = self.shape[d]
    if isinstance(spec, Tensor):
        if spec.dim() > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec.dim()} dims")
        if spec.dtype.name != "int64":
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                               f"dtype of long, but got {_CPP[spec.dtype.name]}")
        spec = spec.tolist()
    if isinstance(spec, builtins.bool) or not isinstance(spec, (builtins.int, list, tuple)) \
            or (not isinstance(spec, builtins.int) and not all(
                isinstance(c, builtins.int) and not isinstance(c, builtins.bool)
                for c in spec)):
        raise TypeError(f"tensor_split() received an invalid combination of arguments - got "
                        f"({type(spec).__name__}), but expected one of:\n"
                        f" * (tuple of ints indices, int dim = 0)\n"
                        f" * (Tensor tensor_indices_or_sections, int dim = 0)\n"
                        f" * (int sections, int dim = 0)\n")
    if isinstance(spec, builtins.int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(n, spec)
        sizes = [q + 1] * r + [q] * (spec - r)
        bounds = list(np.cumsum([0, *sizes]))
    else:
        cuts = [builtins.min(builtins.max(c if c >= 0 else c + n, 0), n) for c in spec]
        bounds = [0, *cuts, n]
    return tuple(self.narrow(d, builtins.int(a), builtins.max(builtins.int(b) - builtins.int(a),
                                                              0))
                 for a, b in zip(bounds[:-1], bounds[1:]))


def _hvdsplit(which: str, axis: Callable[[Tensor], builtins.int]
              ) -> Callable[[Tensor, Any], tuple[Tensor, ...]]:
    least = {"hsplit": 1, "vsplit": 2, "dsplit": 3}[which]

    def method(self: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
        if self.dim() < least:
            raise RuntimeError(f"torch.{which} requires a tensor with at least {least} "
                               f"dimension, but got a tensor with {self.dim()} dimensions!")
        d = axis(self)
        if isinstance(indices_or_sections, builtins.int) and self.shape[d] % \
                indices_or_sections:
            raise RuntimeError(f"torch.{which} attempted to split along dimension {d}, but "
                               f"the size of the dimension {self.shape[d]} is not divisible "
                               f"by the split_size {indices_or_sections}!")
        return tensor_split(self, indices_or_sections, d)

    method.__name__ = which
    return method


def fliplr(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip([1])


def flipud(self: Tensor) -> Tensor:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip([0])


def rot90(self: Tensor, k: builtins.int = 1, dims: Sequence[builtins.int] = (0, 1)) -> Tensor:
    """Rotated by 90 degrees ``k`` times in the plane of ``dims``."""
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = dims
    return cast(Tensor, apply_op("Rot90", lambda x: fnp.flip(fnp.swapaxes(x, d0, d1), d0)
                                 if k % 4 == 1 else fnp.flip(fnp.flip(x, d0), d1) if k % 4 == 2
                                 else fnp.swapaxes(fnp.flip(x, d0), d0, d1) if k % 4 == 3
                                 else x + 0, self))


def repeat_interleave(self: Tensor, repeats: Any = None, dim: builtins.int | None = None, *,
                      output_size: builtins.int | None = None) -> Tensor:
    """Each entry repeated ``repeats`` times (a number, or one count per entry).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    """
    if repeats is None:
        # The method has no overload without ``repeats`` (the function has).
        raise TypeError(_repeat_interleave_args((), dim, output_size, _RI_METHOD))
    return _repeat_interleave(self, repeats, dim, output_size=output_size)


_RI_METHOD = (" * (Tensor repeats, int dim = None, *, int output_size = None)\n"
              " * (int repeats, int dim = None, *, int output_size = None)\n")
_RI_FUNCTION = (" * (Tensor input, Tensor repeats, int dim = None, *, int output_size = None)\n"
                " * (Tensor repeats, *, int output_size = None)\n"
                " * (Tensor input, int repeats, int dim = None, *, int output_size = None)\n")


def _repeat_interleave_args(args: Sequence[Any], dim: Any, output_size: Any, sigs: str
                            ) -> str:
    got = [type(a).__name__ for a in args]
    named = [f"{k}={type(v).__name__}" for k, v in (("dim", dim), ("output_size",
                                                                    output_size))
             if v is not None]
    # PyTorch's parser ends keywords with ", " when no positional argument came first.
    text = ", ".join(got + named) if got else "".join(n + ", " for n in named)
    return (f"repeat_interleave() received an invalid combination of arguments - got "
            f"({text}), but expected one of:\n{sigs}")


def repeat_interleave_function(input: Tensor, repeats: Any = None,  # noqa: A002
                               dim: builtins.int | None = None, *,
                               output_size: builtins.int | None = None) -> Tensor:
    """``torch.repeat_interleave``: as the method, and without ``repeats`` the positions
    ``0..n-1`` each repeated as many times as ``input`` says.

    >>> import funcgrad.torch as torch
    >>> torch.repeat_interleave(torch.tensor([1, 0, 2]))
    tensor([0, 2, 2])
    """
    if repeats is None and not isinstance(input, Tensor):
        raise TypeError(f"repeat_interleave(): argument 'repeats' (position 1) must be "
                        f"Tensor, not {type(input).__name__}")
    if not isinstance(input, Tensor) or (repeats is None and dim is not None):
        args = (input,) if repeats is None else (input, repeats)
        raise TypeError(_repeat_interleave_args(args, dim, output_size, _RI_FUNCTION))
    return _repeat_interleave(input, repeats, dim, output_size=output_size)


def _repeat_interleave(self: Tensor, repeats: Any, dim: builtins.int | None, *,
                       output_size: builtins.int | None) -> Tensor:
    if repeats is None:
        # torch.repeat_interleave(repeats): the indices 0..n-1, each repeated.
        if self.dim() != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return _repeat_interleave(_on_device_of(self, np.arange(self.numel())), self, None,
                                  output_size=output_size)
    x: Any = self.flatten() if dim is None else self
    d = 0 if dim is None else _dim(dim, self.dim())
    if not isinstance(repeats, Tensor):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        # PyTorch's int overload: an expanded new axis, cloned and flattened back
        # (ViewBackward0 over CloneBackward0 over ExpandBackward0).
        shape = list(x.shape)
        if output_size is not None and output_size != shape[d] * repeats:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                               f"{shape[d] * repeats} but got {output_size}")
        shape.insert(d + 1, repeats)
        return cast(Tensor, x.unsqueeze(d + 1).expand(*shape).clone().flatten(d, d + 1))
    if repeats.dtype not in (D.int32, D.int64):
        raise NotImplementedError(
            f'"repeat_interleave_cpu" not implemented for \'{_CPP[repeats.dtype.name]}\'')
    reps = np.asarray(repeats._host()).reshape(-1)
    n = x.shape[d]
    if reps.size == 1:
        reps = np.broadcast_to(reps, (n,))
    elif reps.size != n:
        raise RuntimeError("repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {reps.size} and input.size({d}) = {n}")
    if (reps < 0).any():
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != builtins.int(reps.sum()):
        raise RuntimeError("allocated size does not match required size")
    # PyTorch's Tensor overload: an index_select of the repeated positions.
    idx = Tensor(np.repeat(np.arange(n), reps).astype(np.int64))
    return cast(Tensor, x.index_select(d, idx))


def narrow_copy(self: Tensor, dim: builtins.int, start: builtins.int, length: builtins.int
                ) -> Tensor:
    return self.narrow(dim, start, length).clone()


def unfold(self: Tensor, dimension: builtins.int, size: builtins.int, step: builtins.int
           ) -> Tensor:
    """Windows of ``size`` entries every ``step`` along ``dimension`` (a new last axis)."""
    d = _dim(dimension, builtins.max(self.dim(), 1))
    n = self.shape[d] if self.dim() else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if not self.dim():
        return _view_op("Unfold", lambda x: fnp.reshape(x, (1,)), self, saves_tensors=False)
    starts = np.arange(0, n - size + 1, step)
    idx = starts[:, None] + np.arange(size)[None, :]

    def run(x: Any) -> Any:
        g = fnp.take(x, idx.reshape(-1), axis=d)
        g = fnp.reshape(g, (*x.shape[:d], len(starts), size, *x.shape[d + 1:]))
        return fnp.moveaxis(g, d + 1, -1)

    buf = self._data
    if type(buf) is not np.ndarray or not self.dim():
        return cast(Tensor, apply_op("Unfold", run, self, saves_tensors=False))
    # PyTorch's unfold is a view: the windows read the tensor's own memory (the unfolded
    # axis steps ``step`` elements, the new last axis one), computed as a gather for
    # autograd and its data replaced by the strided view.
    out = _view_op("Unfold", run, self, saves_tensors=False, copied=True)
    st = buf.strides
    shape = (*buf.shape[:d], len(starts), *buf.shape[d + 1:], size)
    strides = (*st[:d], st[d] * step, *st[d + 1:], st[d])
    root = buf  # the array owning the memory (a storage offset is measured from it)
    while type(root.base) is np.ndarray:
        root = root.base
    start = buf.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if root.flags.c_contiguous and builtins.min(strides, default=0) >= 0:
        view = np.ndarray(shape, buf.dtype, buffer=root, offset=start, strides=strides)
        view.flags.writeable = buf.flags.writeable
    else:  # no flat window of the storage: NumPy's strided view of the tensor itself
        view = np.lib.stride_tricks.as_strided(buf, shape, strides,
                                               writeable=buf.flags.writeable)
    out._data = view
    return out


def aminmax(self: Tensor, *, dim: builtins.int | None = None, keepdim: builtins.bool = False
            ) -> Any:
    """``(min, max)``, both from one node (PyTorch's AminmaxBackward0)."""
    axes = None if dim is None else _dim(dim, self.dim())
    if dim is None and not self.numel():
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    check_reducible("aminmax", self, axes)
    mn, mx = apply_op("Aminmax", lambda x: (fnp.min(x, axes, keepdims=keepdim),
                                            fnp.max(x, axes, keepdims=keepdim)), self)
    return named_result("aminmax", ("min", "max"), (mn, mx))


def diff(self: Tensor, n: builtins.int = 1, dim: builtins.int = -1, prepend: Any = None,
         append: Any = None) -> Tensor:
    """The ``n``-th forward difference along ``dim``."""
    x: Any = self
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = cat([_t(p) for p in parts], dim)
    d = _dim(dim, x.dim())
    for _ in range(n):
        if x.dtype is D.bool:
            x = cast(Tensor, apply_op("Ne", lambda v: fnp.not_equal(
                fnp.take(v, np.arange(1, v.shape[d]), axis=d),
                fnp.take(v, np.arange(0, v.shape[d] - 1), axis=d)), x))
        else:
            x = x.narrow(d, 1, x.shape[d] - 1) - x.narrow(d, 0, x.shape[d] - 1)
    return x


def dist(self: Tensor, other: Tensor, p: Any = 2) -> Tensor:
    """``norm(self - other, p)``, one node (PyTorch's DistBackward0)."""
    dt = result_dtype(self, other)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_CPP[dt.name]} instead.")
    if self.shape != other.shape:
        _check_broadcast(tuple(self.shape), tuple(other.shape))
    order = builtins.float(p)
    return cast(Tensor, apply_op("Dist", lambda a, b: _vector_norm(
        fnp.astype(a, dt.np) - fnp.astype(b, dt.np), order, None, False), self, other))


def renorm(self: Tensor, p: Any, dim: builtins.int, maxnorm: Any) -> Tensor:
    """Each slice along ``dim`` scaled down to ``p``-norm at most ``maxnorm``."""
    if self.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} "
                           "dimensions")
    d = _dim(dim, self.dim())
    others = tuple(i for i in range(self.dim()) if i != d)
    norms = cast(Any, self).norm(p, dim=others, keepdim=True).detach()
    scale = cast(Any, norms > maxnorm).to(self.dtype) * (maxnorm / (norms + 1e-7) - 1) + 1
    return cast(Tensor, self * scale)


def cov(self: Tensor, *, correction: builtins.int = 1, fweights: Any = None,
        aweights: Any = None) -> Tensor:
    """The covariance matrix of the rows (variables) over the columns (observations)."""
    x: Any = self if self.dim() == 2 else self.reshape(1, -1)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        mean = x.mean(1, keepdim=True)
        xc = x - mean
        c = (xc @ xc.T) / (n - correction)
    else:
        ws = w.sum()
        mean = (x * w).sum(1, keepdim=True) / ws
        xc = x - mean
        norm_f = ws - correction * ((w * aweights).sum() / ws if aweights is not None else 1)
        c = (xc * w) @ xc.T / norm_f
    return c if self.dim() == 2 else c.reshape(())


def corrcoef(self: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the rows."""
    c: Any = cov(self)
    if c.dim() == 0:
        return cast(Tensor, c / c)
    dv = cast(Any, c).diagonal().sqrt()
    return cast(Tensor, (c / dv[:, None] / dv[None, :]).clamp(-1, 1))


def histc(self: Tensor, bins: builtins.int = 100, min: Any = 0, max: Any = 0) -> Tensor:  # noqa: A002
    """A histogram of ``bins`` equal bins over ``[min, max]`` (the data's range if equal)."""
    if not self.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{_CPP[self.dtype.name]}'")
    h = np.asarray(self._host()).reshape(-1)
    lo, hi = builtins.float(min), builtins.float(max)
    if lo == hi and h.size:
        lo, hi = builtins.float(h.min()), builtins.float(h.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    counts, _ = np.histogram(h[(h >= lo) & (h <= hi)], bins=bins, range=(lo, hi))
    return Tensor._from_data(counts.astype(h.dtype))


def bincount(self: Tensor, weights: Any = None, minlength: builtins.int = 0) -> Tensor:
    """How often each non-negative integer occurs (weighted by ``weights``)."""
    if self.dim() != 1 or self.dtype.is_floating_point:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    h = np.asarray(self._host())
    if h.size and h.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    wv = None if weights is None else np.asarray(_t(weights)._host())
    out = np.bincount(h, wv, minlength)
    dt = np.int64 if wv is None else (wv.dtype if wv.dtype.kind == "f" else np.float64)
    if wv is not None and wv.dtype == np.float32:
        dt = np.float32
    return Tensor._from_data(out.astype(dt))


def histogram(self: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None,  # noqa: A002
              density: builtins.bool = False) -> Any:
    """``(hist, bin_edges)``."""
    h = np.asarray(self._host()).reshape(-1)
    b = bins._host() if isinstance(bins, Tensor) else bins
    w = None if weight is None else np.asarray(weight._host()).reshape(-1)
    hist, edges = np.histogram(h, bins=b, range=range, weights=w, density=density)
    return named_result("histogram", ("hist", "bin_edges"), (
        Tensor._from_data(hist.astype(h.dtype)), Tensor._from_data(edges.astype(h.dtype))))


def nanmean(self: Tensor, dim: Any = None, keepdim: builtins.bool = False, *,
            dtype: Any = None) -> Tensor:
    """The mean over entries that are not NaN."""
    x = _float_of(self) if dtype is None else self.to(dtype)
    notnan = cast(Any, x).isnan().logical_not()
    return cast(Tensor, cast(Any, x).nansum(dim, keepdim) / notnan.sum(dim, keepdim))


# ------------------------------------------------------------ elementwise math


def _unary(op: str, fn: Callable[[Any], Any], float_only: builtins.bool = True
           ) -> Callable[[Tensor], Tensor]:
    def method(self: Tensor) -> Tensor:
        return cast(Tensor, apply_op(op, fn, _float_of(self) if float_only else self))

    return method


def _special(name: str) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        from funcgrad.scipy import special  # noqa: PLC0415

        return getattr(special, name)(x)

    return fn


def logit(self: Tensor, eps: Any = None) -> Tensor:
    """``log(p / (1 - p))`` (``p`` clamped to ``[eps, 1 - eps]`` when given)."""
    x = _float_of(self)
    return cast(Tensor, apply_op("Logit", lambda v: _logit(v, eps), x))


def _logit(v: Any, eps: Any) -> Any:
    if eps is not None:
        v = fnp.clip(v, eps, 1 - eps)
    return fnp.log(v / (1 - v))


def polygamma(self: Tensor, n: builtins.int) -> Tensor:
    """The ``n``-th derivative of digamma (``torch.polygamma(n, input)``)."""
    from funcgrad.scipy import special  # noqa: PLC0415

    return cast(Tensor, apply_op("Polygamma", lambda v: special.polygamma(n, v),
                                 _float_of(self)))


def mvlgamma(self: Tensor, p: builtins.int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p``."""
    from funcgrad.scipy import special  # noqa: PLC0415

    return cast(Tensor, apply_op("Mvlgamma", lambda v: special.multigammaln(v, p),
                                 _float_of(self)))


def nan_to_num(self: Tensor, nan: builtins.float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Tensor:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest/smallest finite values)."""
    return cast(Tensor, apply_op("NanToNum", lambda v: fnp.nan_to_num(v, nan, posinf, neginf),
                                 self))


def _binary(op: str, f: Callable[[Any, Any], Any], true_div: builtins.bool = False
            ) -> Callable[[Tensor, Any], Tensor]:
    def method(self: Tensor, other: Any) -> Tensor:
        return binary(op, f, self, other, true_div=true_div, shown=False)

    return method


def _x_log(log: Callable[[Any], Any], shift: builtins.float) -> Any:
    """``x * log(y + shift)``, 0 where ``x == 0`` (NaN ``y`` stays NaN), with PyTorch's
    derivatives: ``log(y + shift)`` for x (0 where ``x == 0`` and ``y + shift <= 0``) and
    ``x / (y + shift)`` for y (NaN at ``x == y + shift == 0``)."""
    @custom_jvp
    def f(x: Any, y: Any) -> Any:
        return fnp.where((x == 0) & ~fnp.isnan(y), fnp.zeros_like(x * y), x * log(y))

    def jvp(primals: Any, tangents: Any) -> Any:
        x, y = primals
        tx, ty = tangents
        dx = fnp.where((x == 0) & (y <= -shift), fnp.zeros_like(x * y), log(y))
        # y + 0.0 would turn -0.0 into 0.0 (and 1 / y's sign with it).
        return f(x, y), tx * dx + ty * (x / (y + shift if shift else y))

    f.defjvp(jvp)
    return f


_xlogy = _x_log(fnp.log, 0.0)
_xlog1py = _x_log(fnp.log1p, 1.0)


def _xlogy_method(self: Tensor, other: Any) -> Tensor:
    # A number ``other`` is PyTorch's third overload, xlogy.Scalar_Other (XlogyBackward2).
    return binary("Xlogy" if isinstance(other, Tensor) else "Xlogy:2", _xlogy, self, other,
                  true_div=True, shown=False)


def xlogy(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input * log(other)``, 0 where ``input == 0``; either may be a number.

    >>> import funcgrad.torch as torch
    >>> torch.xlogy(0.0, torch.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    if isinstance(input, Tensor):
        result = _xlogy_method(input, other)
    elif isinstance(other, Tensor):
        # xlogy.Scalar_Self, PyTorch's second overload (XlogyBackward1)
        result = binary("Xlogy:1", _xlogy, input, other, true_div=True, shown=False)
    else:
        raise TypeError(
            f"xlogy() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
            f" * (Number self, Tensor other, *, Tensor out = None)\n"
            f" * (Tensor input, Number other, *, Tensor out = None)\n")
    return result if out is None else out.copy_(result)


def _heaviside(x: Any, v: Any) -> Any:
    return fnp.where(x == 0, v, fnp.astype(x > 0, x.dtype))


def copysign(self: Tensor, other: Any) -> Tensor:
    """``|self|`` with the sign of ``other`` (its sign bit: ``-0.0`` counts as negative).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([1.0, 2.0]).copysign(torch.tensor([-0.0, 1.0]))
    tensor([-1.,  2.])
    """
    tensor_other = isinstance(other, Tensor)
    # PyTorch gives a tensor ``other`` a zero gradient (``.grad`` is zeros, not None).
    to_y = tensor_other and other.requires_grad
    return binary("Copysign" if tensor_other else "Copysign:1",
                  lambda x, y: _sign_bounds.copysign(x, y, to_y), self, other, true_div=True,
                  shown=False)


def _gcd(a: Any, b: Any) -> Any:
    return fnp.asarray(np.gcd(np.asarray(a), np.asarray(b)))


def _lcm(a: Any, b: Any) -> Any:
    return fnp.asarray(np.lcm(np.asarray(a), np.asarray(b)))


def float_power(self: Tensor, exponent: Any) -> Tensor:
    """``self ** exponent`` in double precision."""
    cplx = self.dtype.is_complex or (isinstance(exponent, Tensor) and exponent.dtype.is_complex)
    dt = D.complex128 if cplx else D.float64
    e = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    return cast(Tensor, cast(Any, self.to(dt)) ** e)


def ldexp(self: Tensor, other: Any) -> Tensor:
    """``self * 2 ** other``."""
    return cast(Tensor, self * cast(Any, 2.0) ** _t(other))


def frexp(self: Tensor) -> Any:
    """``(mantissa, exponent)`` with ``self = mantissa * 2 ** exponent``."""
    m, e = np.frexp(np.asarray(self._host()))
    return named_result("frexp", ("mantissa", "exponent"), (
        Tensor._from_data(m), Tensor._from_data(e.astype(np.int32))))


def signbit(self: Tensor) -> Tensor:
    return Tensor._from_data(np.signbit(np.asarray(self._host())))


def _positive(self: Tensor) -> Tensor:
    if self.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


def isposinf(self: Tensor) -> Tensor:
    if self.dtype is D.bool:
        return cast(Tensor, cast(Any, self).new_zeros(*self.shape, dtype=D.bool))
    return cast(Tensor, apply_op("Isposinf", lambda v: fnp.isinf(v) & (v > 0), self))


def isneginf(self: Tensor) -> Tensor:
    if self.dtype is D.bool:
        return cast(Tensor, cast(Any, self).new_zeros(*self.shape, dtype=D.bool))
    return cast(Tensor, apply_op("Isneginf", lambda v: fnp.isinf(v) & (v < 0), self))


def isreal(self: Tensor) -> Tensor:
    if not self.dtype.is_complex:
        return cast(Tensor, cast(Any, self).new_ones(*self.shape, dtype=D.bool))
    return cast(Tensor, apply_op("Isreal", lambda v: fnp.imag(v) == 0, self))


def isclose(self: Tensor, other: Any, rtol: builtins.float = 1e-05,
            atol: builtins.float = 1e-08, equal_nan: builtins.bool = False) -> Tensor:
    """Elementwise ``|self - other| <= atol + rtol * |other|``."""
    if isinstance(other, Tensor) and other.dtype is not self.dtype:
        raise RuntimeError(f"{D.cpp_name(self.dtype)} did not match {D.cpp_name(other.dtype)}")
    a, b = np.asarray(self._host()), np.asarray(_t(other)._host())
    return _on_device_of(self, np.asarray(np.isclose(a, b, rtol, atol, equal_nan)))


def allclose(self: Tensor, other: Tensor, rtol: builtins.float = 1e-05,
             atol: builtins.float = 1e-08, equal_nan: builtins.bool = False) -> builtins.bool:
    return builtins.bool(isclose(self, other, rtol, atol, equal_nan)._host().all())


def equal(self: Tensor, other: Tensor) -> builtins.bool:
    return tuple(self.shape) == tuple(other.shape) and builtins.bool(
        np.array_equal(self._host(), other._host()))


def lerp(self: Tensor, end: Any, weight: Any) -> Tensor:
    """``self + weight * (end - self)``."""
    # lerp.Tensor (a tensor weight) is PyTorch's second overload (LerpBackward1).
    op = "Lerp:1" if isinstance(weight, Tensor) else "Lerp"
    if half_on_cpu(self.dtype, self, end, weight):
        return cast(Tensor, apply_op(op, _lerp_in_float32, self, end, weight))
    return cast(Tensor, apply_op(op, lambda s, e, w: s + w * (e - s), self, end, weight))


def _lerp_in_float32(s: Any, e: Any, w: Any) -> Any:
    """PyTorch's CPU lerp of half-precision values: in float32, from the nearer end (a
    fused multiply-add), rounded once."""
    dt = s.dtype
    s, e = fnp.astype(s, np.float32), fnp.astype(e, np.float32)
    w = fnp.astype(w, dt) if hasattr(w, "dtype") else np.float32(w)
    w = fnp.astype(w, np.float32)
    diff = e - s
    near_start = fma32(w, diff, s)
    near_end = fma32(-diff, 1 - w, e)
    return fnp.astype(fnp.where(fnp.abs(w) < 0.5, near_start, near_end), dt)


# ------------------------------------------------------------------ complex


def _real(self: Tensor) -> Tensor:
    if not self.dtype.is_complex:
        return self
    return cast(Tensor, apply_op("Real", fnp.real, self))


def _imag(self: Tensor) -> Tensor:
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return cast(Tensor, apply_op("Imag", fnp.imag, self))


def conj(self: Tensor) -> Tensor:
    """The complex conjugate (the tensor itself when real)."""
    if not self.dtype.is_complex:
        return self
    return cast(Tensor, apply_op("Conj", fnp.conj, self))


def angle(self: Tensor) -> Tensor:
    """The argument of each complex entry (0 or pi for real ones)."""
    x = self if self.dtype.is_complex else _float_of(self)
    if x.dtype.is_complex:
        return cast(Tensor, apply_op("Angle", fnp.angle, x))
    return cast(Tensor, apply_op("Angle", lambda v: fnp.where(
        fnp.isnan(v), v, fnp.where(v < 0, np.pi, 0.0 * v)), x))


# ---------------------------------------------------------------- in place


def _int_split(self: Tensor, split_size: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
    if not isinstance(split_size, builtins.int) or isinstance(split_size, builtins.bool):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 1) must be int, not "
                        f"{type(split_size).__name__}")
    return self.split(split_size, dim)


def _unsafe(split: Callable[..., tuple[Tensor, ...]]) -> Callable[..., tuple[Tensor, ...]]:
    """``unsafe_split``/``unsafe_chunk``: the same views, which PyTorch lets in-place
    operations write into (``split``'s outputs it refuses)."""
    import functools  # noqa: PLC0415

    from funcgrad.torch import _functionalize  # noqa: PLC0415

    @functools.wraps(split)
    def method(self: Tensor, *args: Any, **kwargs: Any) -> tuple[Tensor, ...]:
        pieces = split(self, *args, **kwargs)
        for p in pieces:
            rec = _functionalize.eager_record(p)
            if rec is not None:
                rec.multi_output = None
        return pieces

    return method


_BITWISE_NAMES = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                            "bitwise_right_shift"})


def _inplace_of(name: str) -> Callable[..., Tensor]:
    """``name_``: the out-of-place result written into this tensor's memory."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if name in _BITWISE_NAMES and len(args) == 1:
            # PyTorch checks the cast into self before it looks for a kernel.
            check_result_cast(result_dtype(self, args[0]), self.dtype)
        out = getattr(Tensor, name)(self, *args, **kwargs)
        if isinstance(out, Tensor):
            if name == "float_power" and out.dtype is not self.dtype:
                raise RuntimeError(
                    f"the base given to float_power_ has dtype {_CPP[self.dtype.name]} but "
                    f"the operation's result requires dtype {_CPP[out.dtype.name]}")
            check_result_cast(out.dtype, self.dtype)  # copy_ would cast float into int
        if name not in ("index_fill", "index_put"):
            return self.copy_(out)
        # PyTorch still lets these two write into an expanded tensor (deprecated there).
        from funcgrad.torch._tensor import OVERLAP_WRITE_OK  # noqa: PLC0415

        OVERLAP_WRITE_OK[0] = True
        try:
            return self.copy_(out)
        finally:
            OVERLAP_WRITE_OK[0] = False

    method.__name__ = name + "_"
    return method


# PyTorch's in-place shape changes are overloads of their own (``transpose_`` records
# TransposeBackward1, ``squeeze_(0)`` SqueezeBackward4): the out-of-place overload plus this.
_INPLACE_OVERLOAD = {"T": 1, "Transpose": 1, "Unsqueeze": 1, "AsStrided": 1, "Squeeze": 3}


def shape_inplace(name: str) -> Callable[..., Tensor]:
    """``t_``, ``squeeze_``...: the tensor takes the new shape (a fresh view of its data)."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        self._check_inplace()
        new = getattr(Tensor, name)(self, *args, **kwargs)
        self._data = new._data
        if new.grad_fn is not None:
            op, _, overload = new.grad_fn.op.partition(":")
            shift = _INPLACE_OVERLOAD.get(op)
            if shift is not None:
                name_node(new.grad_fn, f"{op}:{builtins.int(overload or 0) + shift}")
            self.grad_fn, self._out_index = new.grad_fn, new._out_index
        self._vc[0] += 1
        return self

    method.__name__ = name + "_"
    return method


# ---------------------------------------------------------------- misc methods


def _nbytes(self: Tensor) -> builtins.int:
    return builtins.int(self.numel() * self.element_size())


def _itemsize(self: Tensor) -> builtins.int:
    return builtins.int(self.element_size())


def is_signed(self: Tensor) -> builtins.bool:
    return self.dtype.name not in ("uint8", "uint16", "uint32", "uint64", "bool")


def is_same_size(self: Tensor, other: Tensor) -> builtins.bool:
    return tuple(self.shape) == tuple(other.shape)


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False) -> Tensor:
    """A new leaf tensor of ``data`` (the dtype and device of ``self`` by default)."""
    from funcgrad.torch._creation import _COPY_CONSTRUCT, tensor  # noqa: PLC0415
    from funcgrad.torch._tensor import warn_at_caller  # noqa: PLC0415

    if isinstance(data, Tensor):
        warn_at_caller(_COPY_CONSTRUCT.format("tensor.new_tensor"))
    return tensor(data._host() if isinstance(data, Tensor) else data,
                  dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device,
                  requires_grad=requires_grad)


def stride(self: Tensor, dim: builtins.int | None = None) -> Any:
    """The step, in elements, between neighbours along each axis (the buffer's layout:
    row-major, or a view's; row-major for a value being traced)."""
    shp = tuple(self.shape)
    buf = self._data
    # An empty tensor made by NumPy has zero strides: PyTorch's are row-major there (one
    # laid out with empty_strided keeps its own).
    if hasattr(buf, "strides") and hasattr(buf, "itemsize") and (
            0 not in shp or builtins.any(buf.strides)):
        st = [builtins.int(s) // buf.itemsize for s in buf.strides]
    else:
        st = [1] * len(shp)
        for k in range(len(shp) - 2, -1, -1):
            st[k] = st[k + 1] * builtins.max(shp[k + 1], 1)
    return tuple(st) if dim is None else st[_dim(dim, len(shp))]


def sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Summed over broadcast axes down to ``size``."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    lead = self.dim() - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and self.shape[lead + i] != 1)
    out = cast(Any, self).sum(axes, keepdim=True) if axes else self
    return cast(Tensor, out.reshape(*shape))


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: builtins.bool = False) -> Tensor:
    """The main diagonal set to ``fill_value`` (in place)."""
    n = builtins.min(self.shape)
    idx = tuple(np.arange(n) for _ in range(self.dim()))
    if wrap and self.dim() == 2 and self.shape[0] > self.shape[1] + 1:
        step = self.shape[1] + 1
        flat = np.arange(0, self.numel(), step)
        idx = (flat // self.shape[1], flat % self.shape[1])
    return self._inplace("FillDiagonal", lambda a: a.at[idx].set(
        fnp.astype(fnp.asarray(fill_value), a.dtype)))


def _random_fill(draw: Callable[..., np.ndarray], kind: str) -> Callable[..., Tensor]:
    """The in-place fill ``Tensor.<kind>_``: ``draw`` makes a CPU tensor's values on the
    host (with PyTorch's kernel for the tensor's dtype); a CUDA tensor's are drawn on its
    device."""
    def method(self: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
        from funcgrad.torch._random import rng  # noqa: PLC0415

        if self.device.type == "cuda":
            return self._fill_on_device(kind, generator, *args, **kwargs)
        g = generator._rng if generator is not None else rng()
        return self._fill_random(draw(g, tuple(self.shape), self._data.dtype, *args,
                                      **kwargs))

    return method


def _exponential(g: Any, shape: Any, dtype: Any, lambd: builtins.float = 1.0) -> np.ndarray:
    return cast(np.ndarray, g.torch_exponential(shape, dtype, builtins.float(lambd)))


def _geometric(g: Any, shape: Any, dtype: Any, p: builtins.float) -> np.ndarray:
    return cast(np.ndarray, g.torch_geometric(shape, dtype, builtins.float(p)))


def _log_normal(g: Any, shape: Any, dtype: Any, mean: builtins.float = 1.0,
                std: builtins.float = 2.0) -> np.ndarray:
    return cast(np.ndarray, g.torch_log_normal(shape, dtype, builtins.float(mean),
                                               builtins.float(std)))


def _cauchy(g: Any, shape: Any, dtype: Any, median: builtins.float = 0.0,
            sigma: builtins.float = 1.0) -> np.ndarray:
    return cast(np.ndarray, g.torch_cauchy(shape, dtype, builtins.float(median),
                                           builtins.float(sigma)))


def _random_ints(g: Any, shape: Any, dtype: Any, low: Any = None, high: Any = None,
                 **kwargs: Any) -> np.ndarray:
    # random_() / random_(to) / random_(from, to), as PyTorch's overloads.
    if "from" in kwargs or "to" in kwargs:
        low, high = kwargs.get("from", 0 if low is None else low), kwargs.get("to", high)
    elif low is not None and high is None:
        low, high = 0, low
    if low is None:
        return cast(np.ndarray, g.torch_random(shape, dtype))
    if high is None and builtins.int(low) == -2 ** 63:
        return cast(np.ndarray, g.torch_random_full(shape, dtype))
    return cast(np.ndarray, g.torch_random(shape, dtype, builtins.int(low),
                                           None if high is None else builtins.int(high)))


def _bernoulli_draw(g: Any, shape: Any, dtype: Any, p: Any = 0.5) -> np.ndarray:
    if isinstance(p, Tensor):  # u < p, u in p's precision (double or float)
        return (_bernoulli_uniforms(g, shape, p) < p._data).astype(dtype)
    return cast(np.ndarray, g.torch_bernoulli_scalar(shape, dtype, builtins.float(p)))


def _bernoulli_uniforms(g: Any, shape: Any, p: Tensor) -> Any:
    """PyTorch's bernoulli draws: a double uniform per element for double ``p``, a float
    one otherwise."""
    return g.torch_uniform(shape, np.float64 if p._data.dtype == np.float64 else np.float32)


def bernoulli(self: Tensor, p: Any = None, *, generator: Any = None) -> Tensor:
    """0/1 samples with probability ``self`` (or ``p``) of a 1."""
    from funcgrad.torch._random import rng  # noqa: PLC0415

    if self.device.type == "cuda":  # drawn on the device, p read there
        out_d = Tensor._from_data(self._data.copy())
        return out_d._fill_on_device("bernoulli", generator, self if p is None else p)
    g = generator._rng if generator is not None else rng()
    shape, dtype = tuple(self.shape), self._data.dtype
    if p is None or isinstance(p, Tensor):
        probs = self if p is None else p
        out = (_bernoulli_uniforms(g, shape, probs) < probs._host()).astype(dtype)
    else:
        out = g.torch_bernoulli_scalar(shape, dtype, builtins.float(p))
    return Tensor._from_data(out)


def multinomial(self: Tensor, num_samples: builtins.int, replacement: builtins.bool = False,
                *, generator: Any = None) -> Tensor:
    from funcgrad.torch._creation import multinomial as mn  # noqa: PLC0415

    return mn(self, num_samples, replacement, generator=generator)


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:  # noqa: A002
    """Each entry replaced by ``callable(entry)`` (in place, no graph; CPU only)."""
    flat = np.asarray(self._host()).reshape(-1)
    vals = np.asarray([callable(v.item()) for v in flat], flat.dtype).reshape(self.shape)
    return self._fill_random(vals)


def map_(self: Tensor, tensor: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:  # noqa: A002
    """Each entry replaced by ``callable(entry, other's entry)`` (in place, no graph)."""
    a = np.asarray(self._host()).reshape(-1)
    b = np.broadcast_to(np.asarray(tensor._host()), tuple(self.shape)).reshape(-1)
    vals = np.asarray([callable(x.item(), y.item()) for x, y in zip(a, b)], a.dtype)
    return self._fill_random(vals.reshape(self.shape))


def broadcast_to(self: Tensor, *size: Any) -> Tensor:
    """The tensor expanded to ``size`` (a view, as ``expand``).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([1, 2]).broadcast_to((2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return self.expand(*size)


def _float_kernel(kernel: str, t: Tensor) -> None:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP[t.dtype.name]}\'')


def hardshrink(self: Tensor, lambd: Any = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0 (``torch.nn.functional.hardshrink``).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([-1.0, 0.25, 0.75]).hardshrink()
    tensor([-1.0000,  0.0000,  0.7500])
    """
    from funcgrad.torch.nn import activation_functions as A  # noqa: PLC0415

    _float_kernel("hardshrink_cpu", self)
    return cast(Tensor, A.hardshrink(self, lambd))


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """``x`` where ``x >= 0``, else ``weight * x``: one weight, or one per channel (dim 1).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([[-1.0, 2.0], [-3.0, -4.0]]).prelu(torch.tensor([0.5, 0.25]))
    tensor([[-0.5000,  2.0000],
            [-1.5000, -1.0000]])
    """
    from funcgrad.torch.nn import activation_functions as A  # noqa: PLC0415

    weight = _t(weight)
    _float_kernel("prelu_cpu", self)
    channels = self.shape[1] if self.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    return cast(Tensor, A.prelu(self, weight))


def chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    """``self.to(torch.complex32)``: not available in funcgrad (NumPy and CuPy have no
    complex half type), so it raises; ``cfloat()`` is the nearest.

    >>> import funcgrad.torch as torch
    >>> torch.ones(1).chalf()
    Traceback (most recent call last):
    ...
    TypeError: complex32 (ComplexHalf, torch.chalf) is not supported by funcgrad: ...
    """
    raise TypeError("complex32 (ComplexHalf, torch.chalf) is not supported by funcgrad: NumPy "
                    "and CuPy have no complex half type; use .cfloat() (complex64)")


def _new_signature_error(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    got = ", ".join([type(a).__name__ for a in args] +
                    [f"{k}={'torch.dtype' if k == 'dtype' else type(v).__name__}"
                     for k, v in kwargs.items()])
    return TypeError(
        f"new() received an invalid combination of arguments - got ({got}), but expected one "
        "of:\n * (*, torch.device device = None)\n      didn't match because some of the "
        "keywords were incorrect: " + ", ".join(kwargs) + "\n * (torch.Storage storage)\n"
        " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
        " * (object data, *, torch.device device = None)\n")


def new(self: Tensor, *args: Any, device: Any = None, **kwargs: Any) -> Tensor:
    """The legacy constructor: ``t.new()`` (empty), ``t.new(2, 3)`` or ``t.new(size)``
    (unspecified values: zeros here), ``t.new(data)`` (a list, tuple or array, in this
    tensor's dtype), ``t.new(other)`` (an alias of a tensor of the same dtype). Only
    ``device=`` is taken, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> t = torch.ones(1, dtype=torch.int32)
    >>> t.new([1, 2]), t.new(2, 1).shape, t.new()
    (tensor([1, 2], dtype=torch.int32), torch.Size([2, 1]), tensor([], dtype=torch.int32))
    """
    from funcgrad.torch._device import Size  # noqa: PLC0415

    if kwargs:
        raise _new_signature_error(args, kwargs)
    if not args:
        return cast(Any, self).new_zeros((0,), device=device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other.dtype is not self.dtype:
            raise TypeError(f"expected {_options(self)} (got {_options(other)})")
        return other.detach()
    if builtins.all(isinstance(a, (builtins.int, np.integer)) and not isinstance(a, builtins.bool)
                    for a in args):
        return cast(Any, self).new_zeros(tuple(args), device=device)
    if len(args) == 1 and isinstance(args[0], Size):
        return cast(Any, self).new_zeros(tuple(args[0]), device=device)
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        return new_tensor(self, args[0], device=device)
    if len(args) == 1:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    raise _new_signature_error(args, {})


def _options(t: Tensor) -> str:
    from funcgrad.torch._tensor import cpp_type_name  # noqa: PLC0415

    dev = "cpu" if t.device.type == "cpu" else str(t.device)
    return (f"TensorOptions(dtype={cpp_type_name(t.dtype)}, device={dev}, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def is_nonzero(self: Tensor) -> builtins.bool:
    """Whether the one element of the tensor is not zero (an error for any other size).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([0.5]).is_nonzero(), torch.tensor(0).is_nonzero()
    (True, False)
    """
    n = self.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(self._host().reshape(()) != 0)


def _to_complex(dt: D.dtype) -> Callable[[Tensor], Tensor]:
    def method(self: Tensor, memory_format: Any = None) -> Tensor:
        return self.to(dt, memory_format=memory_format)

    return method


_METHODS: dict[str, Any] = {
    "index_select": index_select, "index_add": index_add, "index_copy": index_copy,
    "index_fill": index_fill, "index_put": index_put, "scatter": scatter,
    "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
    "masked_scatter": masked_scatter, "masked_select": masked_select, "take": take,
    "take_along_dim": take_along_dim, "put": put, "nonzero": nonzero, "argwhere": argwhere,
    "msort": msort, "kthvalue": kthvalue, "median": median, "nanmedian": nanmedian,
    "mode": mode, "quantile": quantile, "nanquantile": nanquantile, "unique": unique,
    "unique_consecutive": unique_consecutive, "cumprod": cumprod, "cummax": cummax,
    "cummin": cummin, "logcumsumexp": logcumsumexp, "addmv": addmv, "addr": addr,
    "addbmm": addbmm, "baddbmm": baddbmm, "addmm": addmm, "addcmul": addcmul,
    "addcdiv": addcdiv, "addmm_": addmm_, "addmv_": addmv_, "addr_": addr_,
    "addbmm_": addbmm_, "baddbmm_": baddbmm_, "addcmul_": addcmul_, "addcdiv_": addcdiv_,
    "broadcast_to": broadcast_to, "hardshrink": hardshrink, "prelu": prelu, "chalf": chalf,
    "new": new, "is_nonzero": is_nonzero,
    "ravel": ravel, "reshape_as": reshape_as, "movedim": movedim,
    "moveaxis": movedim, "swapdims": swapdims, "tile": tile, "tensor_split": tensor_split,
    "unsafe_split_with_sizes": _unsafe(Tensor.split_with_sizes),
    "hsplit": _hvdsplit("hsplit", lambda t: 0 if t.dim() == 1 else 1),
    "vsplit": _hvdsplit("vsplit", lambda t: 0),
    "dsplit": _hvdsplit("dsplit", lambda t: 2),
    "unsafe_chunk": _unsafe(Tensor.chunk), "unsafe_split": _unsafe(_int_split),
    "fliplr": fliplr, "flipud": flipud, "rot90": rot90,
    "repeat_interleave": repeat_interleave, "narrow_copy": narrow_copy, "unfold": unfold,
    "aminmax": aminmax, "diff": diff, "dist": dist, "renorm": renorm, "cov": cov,
    "corrcoef": corrcoef, "histc": histc, "bincount": bincount, "histogram": histogram,
    "nanmean": nanmean,
    "arccosh": _unary("Acosh", fnp.arccosh), "arcsinh": _unary("Asinh", fnp.arcsinh),
    "arctanh": _unary("Atanh", fnp.arctanh), "fix": lambda self: cast(Any, self).trunc(),
    "lgamma": _unary("Lgamma", _special("gammaln")),
    "digamma": _unary("Digamma", _special("digamma")),
    "erfinv": _unary("Erfinv", _special("erfinv")), "i0": _unary("I0", fnp.i0),
    "logit": logit, "polygamma": polygamma, "mvlgamma": mvlgamma, "nan_to_num": nan_to_num,
    "positive": _positive,
    "xlogy": _xlogy_method, "heaviside": _binary("Heaviside", _heaviside),
    "copysign": copysign,
    "fmax": _binary("Fmax", lambda a, b: fnp.where(fnp.isnan(b) | (a >= b), a, b)),
    "fmin": _binary("Fmin", lambda a, b: fnp.where(fnp.isnan(b) | (a <= b), a, b)),
    "logaddexp2": _binary("Logaddexp2", fnp.logaddexp2, True),
    "nextafter": _binary("Nextafter", lambda a, b: lax.nextafter(a, b)),
    "gcd": _binary("Gcd", _gcd), "lcm": _binary("Lcm", _lcm),
    "igamma": _binary("Igamma", lambda a, x: lax.igamma(a, x), True),
    "igammac": _binary("Igammac", lambda a, x: lax.igammac(a, x), True),
    "arctan2": Tensor.atan2,  # type: ignore[attr-defined]
    "bitwise_left_shift": _binary("BitwiseLeftShift", lambda a, b: lax.shift_left(a, b)),
    "bitwise_right_shift": _binary("BitwiseRightShift",
                                   lambda a, b: lax.shift_right_arithmetic(a, b)),
    "float_power": float_power, "ldexp": ldexp, "frexp": frexp, "signbit": signbit,
    "isposinf": isposinf, "isneginf": isneginf, "isreal": isreal, "isclose": isclose,
    "allclose": allclose, "equal": equal, "lerp": lerp, "conj": conj,
    "conj_physical": conj, "resolve_conj": lambda self: self,
    "resolve_neg": lambda self: self, "is_conj": lambda self: False,
    "is_neg": lambda self: False, "angle": angle, "is_signed": is_signed,
    "is_same_size": is_same_size, "new_tensor": new_tensor, "stride": stride,
    "sum_to_size": sum_to_size, "fill_diagonal_": fill_diagonal_,
    "exponential_": _random_fill(_exponential, "exponential"),
    "geometric_": _random_fill(_geometric, "geometric"),
    "log_normal_": _random_fill(_log_normal, "log_normal"),
    "cauchy_": _random_fill(_cauchy, "cauchy"), "random_": _random_fill(_random_ints, "random"),
    "bernoulli_": _random_fill(_bernoulli_draw, "bernoulli"),
    "bernoulli": bernoulli, "multinomial": multinomial, "apply_": apply_, "map_": map_,
    "cfloat": _to_complex(D.complex64), "cdouble": _to_complex(D.complex128),
    "is_inference": lambda self: self._inference, "get_device": lambda self: (
        -1 if self.device.type in ("cpu", "meta") else self.device.index or 0),
    "storage_offset": lambda self: 0, "dim_order": lambda self: tuple(range(self.dim())),
}

_PROPERTIES = {
    "real": property(_real), "imag": property(_imag), "nbytes": property(_nbytes),
    "itemsize": property(_itemsize), "is_cpu": property(lambda self: self.device.type == "cpu"),
    "mH": property(lambda self: conj(self.transpose(-2, -1))),
    "H": property(lambda self: conj(self.transpose(0, 1)) if self.dim() == 2 else self),
}

autocast_namespace(_METHODS)
for _name, _fn in _METHODS.items():
    if _fn is not None:
        setattr(Tensor, _name, _fn)
for _name, _prop in _PROPERTIES.items():
    setattr(Tensor, _name, _prop)
Tensor.adjoint = lambda self: conj(self.transpose(-2, -1))  # type: ignore[attr-defined]

# In-place variants: the out-of-place result written into the tensor's memory.
_INPLACE = [
    "absolute", "arccosh", "arcsinh", "arctanh", "arctan2", "atan2", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "clamp_max",
    "clamp_min", "copysign", "cumprod", "cumsum", "digamma", "divide", "eq", "erfinv", "fix",
    "float_power", "floor_divide", "fmod", "gcd", "ge", "greater", "greater_equal", "gt",
    "heaviside", "hypot", "i0", "igamma", "igammac", "index_add", "index_copy", "index_fill",
    "index_put", "lcm", "ldexp", "le", "lerp", "less", "less_equal", "lgamma", "logical_and",
    "logical_not", "logical_or", "logical_xor", "logit", "lt", "masked_scatter", "multiply",
    "mvlgamma", "nan_to_num", "ne", "negative", "nextafter", "not_equal", "polygamma", "put",
    "relu", "remainder", "renorm", "scatter", "scatter_add", "scatter_reduce", "subtract",
    "tril", "triu", "true_divide", "xlogy", "conj_physical",
]
for _name in _INPLACE:
    if hasattr(Tensor, _name) and not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", _inplace_of(_name))
for _name in ("t", "transpose", "squeeze", "unsqueeze", "swapaxes", "swapdims"):
    if not hasattr(Tensor, _name + "_"):
        setattr(Tensor, _name + "_", shape_inplace(_name))


# ------------------------------------------------------------ free functions


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one axis.

    >>> import funcgrad.torch as torch
    >>> torch.atleast_1d(torch.tensor(1.0))
    tensor([1.])
    """
    return _atleast(tensors, 1)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two axes.

    >>> import funcgrad.torch as torch
    >>> torch.atleast_2d(torch.tensor([1.0, 2.0])).shape
    torch.Size([1, 2])
    """
    return _atleast(tensors, 2)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three axes.

    >>> import funcgrad.torch as torch
    >>> torch.atleast_3d(torch.tensor([1.0, 2.0])).shape
    torch.Size([1, 2, 1])
    """
    return _atleast(tensors, 3)


def _atleast(tensors: Sequence[Any], n: builtins.int) -> Any:
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) \
        else list(tensors)

    def one(t: Tensor) -> Tensor:
        if t.dim() >= n:
            return t
        if n == 1:
            return t.reshape(1)
        if n == 2:
            return t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1)
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        return t.reshape(1, -1, 1) if t.dim() == 1 else t.unsqueeze(-1)

    out = tuple(one(t) for t in ts)
    return out[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else out


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors as blocks on the diagonal of one matrix.

    >>> import funcgrad.torch as torch
    >>> torch.block_diag(torch.ones(1, 1), 2 * torch.ones(1, 1))
    tensor([[1., 0.],
            [0., 2.]])
    """
    mats = [t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1) if t.dim() == 0 else t
            for t in tensors]
    dt = result_dtype(*mats) if mats else D.get_default_dtype()
    rows = builtins.sum(m.shape[0] for m in mats)
    cols = builtins.sum(m.shape[1] for m in mats)

    def run(*ms: Any) -> Any:
        out = fnp.zeros((rows, cols), dt.np)
        r = c = 0
        for m in ms:
            out = out.at[r:r + m.shape[0], c:c + m.shape[1]].set(fnp.astype(m, dt.np))
            r, c = r + m.shape[0], c + m.shape[1]
        return out

    return cast(Tensor, apply_op("BlockDiag", run, *mats))


def broadcast_shapes(*shapes: Any) -> Any:
    """The shape the given shapes broadcast to.

    >>> import funcgrad.torch as torch
    >>> torch.broadcast_shapes((2, 1), (3,))
    torch.Size([2, 3])
    """
    from funcgrad.torch._device import Size  # noqa: PLC0415

    try:
        return Size(np.broadcast_shapes(*[(s,) if isinstance(s, builtins.int) else tuple(s)
                                          for s in shapes]))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: "
                           f"{list(shapes)}") from None


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to one broadcast shape.

    >>> import funcgrad.torch as torch
    >>> [t.shape for t in torch.broadcast_tensors(torch.ones(2, 1), torch.ones(3))]
    [torch.Size([2, 3]), torch.Size([2, 3])]
    """
    shape = tuple(broadcast_shapes(*[tuple(t.shape) for t in tensors]))
    # PyTorch's expand_size returns a tensor that already has the shape itself (no view)
    return tuple(t if tuple(t.shape) == shape else t.expand(*shape) for t in tensors)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """All combinations of one entry from each vector, as rows.

    >>> import funcgrad.torch as torch
    >>> torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Tensor, r: builtins.int = 2,  # noqa: A002
                 with_replacement: builtins.bool = False) -> Tensor:
    """The length-``r`` combinations of the entries of a vector, as rows.

    >>> import funcgrad.torch as torch
    >>> torch.combinations(torch.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    n = input.shape[0]
    # PyTorch's composition: a meshgrid of ``r`` copies, each masked to the increasing
    # index tuples, stacked (StackBackward0 over MaskedSelectBackward0 per copy).
    grid = np.indices((n,) * r)
    keep = np.ones((n,) * r, bool)
    for i in range(r - 1):
        keep &= grid[i] <= grid[i + 1] if with_replacement else grid[i] < grid[i + 1]
    mask = Tensor(keep)
    return stack([masked_select(g, mask) for g in meshgrid(*[input] * r, indexing="ij")], 1)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of the vectors (``indexing="ij"`` by default, as PyTorch).

    >>> import funcgrad.torch as torch
    >>> [g.shape for g in torch.meshgrid(torch.ones(2), torch.ones(3), indexing="ij")]
    [torch.Size([2, 3]), torch.Size([2, 3])]
    """
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) \
        else list(tensors)
    ij = indexing in (None, "ij")
    if indexing is None:
        from funcgrad.torch._tensor import warn_once_at_caller  # noqa: PLC0415

        warn_once_at_caller(
            "torch.meshgrid: in an upcoming release, it will be required to pass the indexing "
            "argument. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4215.)")
    if indexing not in (None, "ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    sizes = [t.numel() for t in ts]
    if not ij and len(ts) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for k, t in enumerate(ts):
        pos = k if ij or len(ts) < 2 else {0: 1, 1: 0}.get(k, k)
        shape = [1] * len(ts)
        shape[pos] = t.numel()
        out.append(t.reshape(*shape).expand(*sizes))
    return tuple(out)


@autocast_op("cdist")
def cdist(x1: Tensor, x2: Tensor, p: builtins.float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2``.

    >>> import funcgrad.torch as torch
    >>> torch.cdist(torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """
    if x1.dim() < 2 or x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    _cdist_dtype_checks(x1, x2, p, compute_mode)

    def run(a: Any, b: Any) -> Any:
        return minkowski(a[..., :, None, :] - b[..., None, :, :], p)

    return cast(Tensor, apply_op("Cdist", run, x1, x2))


def _cdist_dtype_checks(x1: Tensor, x2: Tensor, p: builtins.float, mode: str) -> None:
    """PyTorch's refusals of cdist's dtypes and ``p``, in its order."""
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_CPP[t.dtype.name]}")
    if not p >= 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype.name in ("float16", "bfloat16"):
        raise NotImplementedError(f'"cdist" not implemented for \'{_CPP[x1.dtype.name]}\'')
    if x1.dtype is not x2.dtype:
        from funcgrad.torch._tensor import cpp_type_name  # noqa: PLC0415

        # p = 2 may go through a matrix product, whose own check speaks first.
        rows = max(x1.shape[-2], x2.shape[-2])
        if p == 2 and (mode == "use_mm_for_euclid_dist" or
                       mode == "use_mm_for_euclid_dist_if_necessary" and rows > 25):
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{cpp_type_name(x1.dtype)} != {cpp_type_name(x2.dtype)}")
        raise RuntimeError(f"expected scalar type {_CPP[x1.dtype.name]} but found "
                           f"{_CPP[x2.dtype.name]}")


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: builtins.bool = False,  # noqa: A002
                 right: builtins.bool = False, side: str | None = None, sorter: Any = None
                 ) -> Tensor:
    """The insertion positions of ``input`` in the last axis of ``sorted_sequence``.

    >>> import funcgrad.torch as torch
    >>> torch.searchsorted(torch.tensor([1, 3, 5]), torch.tensor([3, 6]))
    tensor([1, 3])
    """
    _searchsorted_checks(sorted_sequence, input, right, side)
    s = np.asarray(sorted_sequence._host())
    if sorter is not None:
        s = np.take_along_axis(s, np.asarray(sorter._host()), -1)
    v = np.asarray(input._host() if isinstance(input, Tensor) else input)
    sd = side if side is not None else ("right" if right else "left")
    search: Any = np.searchsorted
    if s.ndim == 1:
        res = search(s, v, side=sd)
    else:
        res = np.stack([search(row, vals, side=sd) for row, vals in zip(
            s.reshape(-1, s.shape[-1]), v.reshape(-1, v.shape[-1]))]).reshape(v.shape)
    return _on_device_of(sorted_sequence, np.asarray(res, np.int32 if out_int32 else np.int64))


def _searchsorted_checks(bounds: Tensor, values: Any, right: builtins.bool,
                         side: str | None) -> None:
    """PyTorch's checks of searchsorted's arguments, in its order and words."""
    name = "torch.searchsorted(): "
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}side and right can't be set to opposites, got side of "
                               "left while right was True")
    if bounds.dim() == 0:
        raise RuntimeError(f"{name}boundaries tensor should have positive dimension, but got "
                           "0 dimension")
    vshape = tuple(values.shape) if isinstance(values, Tensor) else ()
    if bounds.dim() != 1 and not vshape:
        raise RuntimeError(
            f"{name}input value can be a scalar only when boundaries tensor dimension is 1, "
            f"but we got boundaries tensor dim({bounds.dim()}) and input value's dim(0) "
            "numel(1)")
    if bounds.dim() != 1 and (len(vshape) != bounds.dim()
                              or vshape[:-1] != tuple(bounds.shape)[:-1]):
        raise RuntimeError(
            f"{name}boundaries tensor should be 1 dimension or the first N-1 dimensions of "
            "boundaries tensor and input value tensor must match, but we got boundaries "
            f"tensor {list(bounds.shape)} and input value tensor {list(vshape)}")


def bucketize(input: Any, boundaries: Tensor, *, out_int32: builtins.bool = False,  # noqa: A002
              right: builtins.bool = False) -> Tensor:
    """The bucket of each entry of ``input`` among the sorted ``boundaries``.

    >>> import funcgrad.torch as torch
    >>> torch.bucketize(torch.tensor([1, 4, 9]), torch.tensor([2, 4, 8]))
    tensor([0, 1, 3])
    """
    if boundaries.dim() != 1:
        raise RuntimeError("boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries.dim()})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors as columns (vectors) or blocks of columns, side by side.

    >>> import funcgrad.torch as torch
    >>> torch.column_stack([torch.tensor([1, 2]), torch.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    ts = _tensor_list("column_stack", tensors)
    return cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in ts], 1)


def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    """``vstack`` (PyTorch's alias; its type errors name ``row_stack``).

    >>> import funcgrad.torch as torch
    >>> torch.row_stack([torch.ones(2), torch.zeros(2)]).shape
    torch.Size([2, 2])
    """
    return vstack_as("row_stack", tensors)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors stacked along the third axis.

    >>> import funcgrad.torch as torch
    >>> torch.dstack([torch.ones(2), torch.zeros(2)]).shape
    torch.Size([1, 2, 2])
    """
    ts = _tensor_list("dstack", tensors)
    return cat(list(atleast_3d(*ts)) if len(ts) > 1 else [atleast_3d(ts[0])], 2)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """The complex tensor ``real + i * imag``.

    >>> import funcgrad.torch as torch
    >>> torch.complex(torch.tensor([1.0]), torch.tensor([2.0]))
    tensor([1.+2.j])
    """
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_CPP[real.dtype.name]} but got "
                           f"scalar type {_CPP[imag.dtype.name]} for second argument")
    if not real.dtype.is_floating_point:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_CPP[real.dtype.name]} and {_CPP[imag.dtype.name]}")
    return cast(Tensor, apply_op("Complex", lambda a, b: lax.complex(a, b), real, imag))


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor with modulus ``abs`` and argument ``angle``.

    >>> import funcgrad.torch as torch
    >>> torch.polar(torch.tensor([2.0]), torch.tensor([0.0]))
    tensor([2.+0.j])
    """
    return cast(Tensor, apply_op("Polar", lambda r, t: lax.complex(r * fnp.cos(t),
                                                                    r * fnp.sin(t)),
                                 abs, angle))


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A complex tensor as real pairs along a new last axis.

    >>> import funcgrad.torch as torch
    >>> torch.view_as_real(torch.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return cast(Tensor, apply_op("ViewAsReal", lambda z: fnp.stack(
        [fnp.real(z), fnp.imag(z)], -1), input))


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """Real pairs along the last axis as a complex tensor.

    >>> import funcgrad.torch as torch
    >>> torch.view_as_complex(torch.tensor([[1.0, 2.0]]))
    tensor([1.+2.j])
    """
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError("view_as_complex is only supported for float, double and half "
                           "tensors")
    return cast(Tensor, apply_op("ViewAsComplex", lambda x: lax.complex(x[..., 0], x[..., 1]),
                                 input))


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = True,  # noqa: A002
             keepdim: builtins.bool = False, *, correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)``.

    >>> import funcgrad.torch as torch
    >>> torch.std_mean(torch.tensor([1.0, 3.0]))
    (tensor(1.4142), tensor(2.))
    """
    return _with_mean("StdMean", input, dim, unbiased, keepdim, correction)


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = True,  # noqa: A002
             keepdim: builtins.bool = False, *, correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)``.

    >>> import funcgrad.torch as torch
    >>> torch.var_mean(torch.tensor([1.0, 3.0]))
    (tensor(2.), tensor(2.))
    """
    return _with_mean("VarMean", input, dim, unbiased, keepdim, correction)


def _with_mean(op: str, input: Tensor, dim: Any, unbiased: Any,  # noqa: A002
               keepdim: builtins.bool, correction: Any) -> tuple[Tensor, Tensor]:
    """std_mean / var_mean: both results from one node, as PyTorch's (``StdMeanBackward0``)."""
    name = "std_mean" if op == "StdMean" else "var_mean"
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    ddof = _ddof(unbiased, correction)
    axes = _dims(dim)
    no_dof = _no_dof(input.shape, dim, ddof, name)

    def run(x: Any) -> tuple[Any, Any]:
        if no_dof:
            spread = _var_no_dof(x, axes, keepdim)
        elif op == "StdMean":
            spread = _std_value(x, axes, ddof, keepdim)
        else:
            spread = fnp.var(x, axes, ddof=ddof, keepdims=keepdim)
        return spread, fnp.mean(x, axes, keepdims=keepdim)

    spread, mean = apply_op(op, run, input)
    return spread, mean


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: builtins.int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoid rule.

    >>> import funcgrad.torch as torch
    >>> torch.trapezoid(torch.tensor([1.0, 2.0, 3.0]))
    tensor(4.)
    """
    d = _dim(dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return cast(Tensor, cast(Any, y).sum(d))
    mid = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2
    if x is not None:
        spacing = diff(x, dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[d] = n - 1
            spacing = spacing.reshape(*shape)
        return cast(Tensor, cast(Any, mid * spacing).sum(d))
    total = cast(Any, mid).sum(d)
    return cast(Tensor, total if dx is None else total * dx)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: builtins.int = -1
                         ) -> Tensor:
    """The running trapezoid-rule integral of ``y`` along ``dim``.

    >>> import funcgrad.torch as torch
    >>> torch.cumulative_trapezoid(torch.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    d = _dim(dim, y.dim())
    n = y.shape[d]
    mid = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2
    if x is not None:
        spacing = diff(x, dim=-1 if x.dim() == 1 else d)
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[d] = n - 1
            spacing = spacing.reshape(*shape)
        mid = mid * spacing
    elif dx is not None:
        mid = mid * dx
    return cast(Tensor, cast(Any, mid).cumsum(d))


def gradient(input: Any, *, spacing: Any = 1, dim: Any = None,  # noqa: A002
             edge_order: builtins.int = 1) -> tuple[Tensor, ...]:
    """Central differences in the interior and one-sided ones at the edges, per axis.

    >>> import funcgrad.torch as torch
    >>> torch.gradient(torch.tensor([1.0, 4.0, 9.0]))
    (tensor([3., 4., 5.]),)
    """
    dims = list(range(input.dim())) if dim is None else (
        [dim] if isinstance(dim, builtins.int) else list(dim))
    sp = spacing if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    outs = []
    for d, h in zip(dims, sp):
        d = _dim(d, input.dim())
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
        hv = builtins.float(h.item()) if isinstance(h, Tensor) and h.dim() == 0 else h
        interior = (input.narrow(d, 2, n - 2) - input.narrow(d, 0, n - 2)) / (2 * hv)
        if edge_order == 1:
            first = (input.narrow(d, 1, 1) - input.narrow(d, 0, 1)) / hv
            last = (input.narrow(d, n - 1, 1) - input.narrow(d, n - 2, 1)) / hv
        else:
            first = (-1.5 * input.narrow(d, 0, 1) + 2 * input.narrow(d, 1, 1)
                     - 0.5 * input.narrow(d, 2, 1)) / hv
            last = (0.5 * input.narrow(d, n - 3, 1) - 2 * input.narrow(d, n - 2, 1)
                    + 1.5 * input.narrow(d, n - 1, 1)) / hv
        outs.append(cat([first, interior, last], d))
    return tuple(outs)


def _triangle_indices(rc: tuple[np.ndarray, np.ndarray], dtype: Any, device: Any) -> Tensor:
    dt = D.int64 if dtype is None else D.to_torch(dtype)
    t = Tensor._from_data(np.stack(rc).astype(dt.np))
    return t if device is None else t.to(device)


def tril_indices(row: builtins.int, col: builtins.int, offset: builtins.int = 0, *,
                 dtype: Any = None, device: Any = None, layout: Any = None) -> Tensor:
    """The (row, column) indices of the lower triangle, as a 2 x N tensor.

    >>> import funcgrad.torch as torch
    >>> torch.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices(np.tril_indices(row, offset, col), dtype, device)


def triu_indices(row: builtins.int, col: builtins.int, offset: builtins.int = 0, *,
                 dtype: Any = None, device: Any = None, layout: Any = None) -> Tensor:
    """The (row, column) indices of the upper triangle, as a 2 x N tensor.

    >>> import funcgrad.torch as torch
    >>> torch.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _triangle_indices(np.triu_indices(row, offset, col), dtype, device)


def isin(elements: Any, test_elements: Any, *, assume_unique: builtins.bool = False,
         invert: builtins.bool = False) -> Tensor:
    """Whether each entry of ``elements`` occurs in ``test_elements``.

    >>> import funcgrad.torch as torch
    >>> torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]))
    tensor([False,  True, False])
    """
    a = np.asarray(_t(elements)._host())
    b = np.asarray(_t(test_elements)._host())
    return _on_device_of(elements, np.asarray(np.isin(a, b, invert=invert)))


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates of flat ``indices`` in an array of ``shape``.

    >>> import funcgrad.torch as torch
    >>> torch.unravel_index(torch.tensor(5), (2, 3))
    (tensor(1), tensor(2))
    """
    shp = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
    v = np.asarray(_t(indices)._host())
    if v.dtype.kind not in "iu":
        raise TypeError("expected 'indices' to be integer dtype, but got "
                        f"{_t(indices).dtype}")
    size = math.prod(shp)
    if np.any((v < -size) | (v >= size)):
        raise RuntimeError("'indices' must be in range [-size, size - 1]")
    coords = np.unravel_index(v % size if size else v, shp)
    return tuple(Tensor._from_data(np.asarray(c, np.int64)) for c in coords)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False) -> Tensor:
    """A 0-d tensor of ``s`` (the default float dtype unless ``dtype``).

    >>> import funcgrad.torch as torch
    >>> torch.scalar_tensor(3)
    tensor(3.)
    """
    dt = D.get_default_dtype() if dtype is None else D.to_torch(dtype)
    t = Tensor(np.asarray(s, dt.np))
    t = t if device is None else t.to(device)
    return t.requires_grad_() if requires_grad else t


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``other - alpha * input``.

    >>> import funcgrad.torch as torch
    >>> torch.rsub(torch.tensor([1.0]), 3)
    tensor([2.])
    """
    if (alpha == 1 and isinstance(other, Tensor) and isinstance(input, Tensor)
            and other.dtype is input.dtype and other.dtype.is_floating_point):
        # PyTorch records its own node for the tensor-tensor overload: RsubBackward0
        return cast(Tensor, apply_op("Rsub", lambda a, b: fnp.subtract(b, a), input, other))
    return cast(Tensor, other - input * alpha if alpha != 1 else other - input)


def typename(obj: Any) -> str:
    """The type name PyTorch prints (``torch.FloatTensor`` for a float32 tensor).

    >>> import funcgrad.torch as torch
    >>> torch.typename(torch.zeros(1))
    'torch.FloatTensor'
    """
    if isinstance(obj, Tensor):
        return cast(str, obj.type())
    t = type(obj)
    return t.__name__ if t.__module__ in ("builtins", "__builtin__") else \
        f"{t.__module__}.{t.__qualname__}"


def can_cast(from_: Any, to: Any) -> builtins.bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in type promotion.

    >>> import funcgrad.torch as torch
    >>> torch.can_cast(torch.float64, torch.int32)
    False
    """
    return D.category(D.to_torch(from_)) <= D.category(D.to_torch(to))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: builtins.int = 1,
                      eps: builtins.float = 1e-8) -> Tensor:
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim``.

    >>> import funcgrad.torch as torch
    >>> torch.cosine_similarity(torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 0.0]]))
    tensor([1.])
    """
    from funcgrad.torch.nn import functional as F  # noqa: PLC0415

    return cast(Tensor, F.cosine_similarity(x1, x2, dim, eps))


_FN_ONLY = {
    "atleast_1d": atleast_1d, "atleast_2d": atleast_2d, "atleast_3d": atleast_3d,
    "block_diag": block_diag, "broadcast_shapes": broadcast_shapes,
    "broadcast_tensors": broadcast_tensors, "cartesian_prod": cartesian_prod,
    "combinations": combinations, "meshgrid": meshgrid, "cdist": cdist, "xlogy": xlogy,
    "searchsorted": searchsorted, "bucketize": bucketize, "column_stack": column_stack,
    "row_stack": row_stack, "dstack": dstack, "complex": complex,
    "polar": polar, "view_as_real": view_as_real, "view_as_complex": view_as_complex,
    "std_mean": std_mean, "var_mean": var_mean, "trapezoid": trapezoid, "trapz": trapezoid,
    "cumulative_trapezoid": cumulative_trapezoid, "gradient": gradient,
    "tril_indices": tril_indices, "triu_indices": triu_indices, "isin": isin,
    "unravel_index": unravel_index, "scalar_tensor": scalar_tensor, "rsub": rsub,
    "typename": typename, "can_cast": can_cast, "cosine_similarity": cosine_similarity,
    "polygamma": lambda n, input: polygamma(input, n),
    "masked_select": masked_select, "real": _real, "imag": _imag,
}


# ------------------------------------------------- windows and process settings


def _cos(w: np.ndarray) -> np.ndarray:
    """``cos`` rounded from float64 for float32 (the value SLEEF's float kernel gives,
    closer than NumPy's float32 ``cos``)."""
    if w.dtype == np.float32:
        return np.cos(w.astype(np.float64)).astype(np.float32)
    return np.cos(w)


def _hamming_formula(alpha: builtins.float, beta: builtins.float
                     ) -> Callable[[np.ndarray, builtins.int], np.ndarray]:
    # (PyTorch's window kernels: every operation in the window's dtype, each number
    # rounded to it first, half types included: NumPy does the same with t(...).)
    def formula(w: np.ndarray, m: builtins.int) -> np.ndarray:
        t = w.dtype.type
        return _cos(w * t(math.pi * 2.0 / (m - 1))) * t(-beta) + t(alpha)
    return formula


def _blackman_formula(w: np.ndarray, m: builtins.int) -> np.ndarray:
    t = w.dtype.type
    w = w * t(math.pi / (m - 1))
    return _cos(w * t(4)) * t(0.08) - _cos(w * t(2)) * t(0.5) + t(0.42)


def _bartlett_formula(w: np.ndarray, m: builtins.int) -> np.ndarray:
    t = w.dtype.type
    w = w * t(2.0 / (m - 1))
    half = ((m - 1) >> 1) + 1
    w[half:] = w[half:] * t(-1) + t(2)
    return w


# The windows PyTorch computes from an arange, in the window's dtype (TensorFactories.cpp).
_WINDOW_FORMULAS: dict[str, Callable[[np.ndarray, builtins.int], np.ndarray]] = {
    "hann_window": _hamming_formula(0.5, 0.5), "hamming_window": _hamming_formula(0.54, 0.46),
    "blackman_window": _blackman_formula, "bartlett_window": _bartlett_formula}


def _window(name: str, sym: Callable[[builtins.int], np.ndarray],
            formula: Callable[[np.ndarray, builtins.int], np.ndarray] | None = None
            ) -> Callable[..., Tensor]:
    formula = formula or _WINDOW_FORMULAS.get(name)

    def fn(window_length: builtins.int, periodic: builtins.bool = True, *, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: builtins.bool = False
           ) -> Tensor:
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={window_length}")
        dt = D.get_default_dtype() if dtype is None else D.to_torch(dtype)
        n = window_length
        if n > 1 and formula is not None and dt.is_floating_point:
            # PyTorch's formula, operation by operation in the result's dtype.
            m = n + 1 if periodic else n
            vals = formula(np.arange(m).astype(dt.np), m)[:n]
        else:
            vals = np.ones(n) if n == 1 else (sym(n + 1)[:-1] if periodic else sym(n))
        out = Tensor(np.asarray(vals[:n], dt.np))
        if device is not None:
            out = out.to(device)
        return out.requires_grad_(requires_grad) if requires_grad else out

    fn.__name__ = fn.__qualname__ = name
    title = name.split("_", maxsplit=1)[0].capitalize()
    fn.__doc__ = (f"The {title} window (periodic by default, as "
                  f"for spectral analysis).\n\n    >>> import funcgrad.torch as torch\n"
                  f"    >>> torch.{name}(1)\n    tensor([1.])\n")
    return fn


_WINDOW_OPTIONS = ("*, torch.dtype dtype = None, torch.layout layout = None, torch.device "
                   "device = None, bool pin_memory = False, bool requires_grad = False")


def _window_overload(name: str, window_length: Any, tail: Sequence[tuple[str, str, Any]],
                     options: dict[str, Any]) -> None:
    """PyTorch's window functions are overloads ``(n)``, ``(n, periodic)``,
    ``(n, periodic, p1)``...: a later parameter (``beta=``) needs every one before it.
    ``tail``: (type, name, value or None) of the parameters after ``window_length``."""
    given = [v is not None for _, _, v in tail]
    if given == sorted(given, reverse=True):
        return
    # Only keywords can follow a missing parameter; those before it read as positional.
    gap = given.index(False)
    got = [type(window_length).__name__] + [type(v).__name__ for _, _, v in tail[:gap]]
    got += [f"{k}={_type_label(v)}" for k, v in options.items() if v is not None]
    got += [f"{n}={type(v).__name__}" for _, n, v in tail[gap:] if v is not None]
    sigs = [", ".join(["int window_length", *(f"{t} {n}" for t, n, _ in tail[:k]),
                       _WINDOW_OPTIONS]) for k in range(len(tail) + 1)]
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(got)}), but expected one of:\n"
                    + "".join(f" * ({s})\n" for s in sigs))


def _type_label(v: Any) -> str:
    if isinstance(v, D.dtype):
        return "torch.dtype"
    return "torch.layout" if type(v).__name__ == "layout" else type(v).__name__


def hamming_window(window_length: builtins.int, periodic: builtins.bool | None = None,
                   alpha: builtins.float | None = None, beta: builtins.float | None = None,
                   *, dtype: Any = None, layout: Any = None, device: Any = None,
                   requires_grad: builtins.bool = False) -> Tensor:
    """The generalized Hamming window ``alpha - beta cos(2 pi n / (N - 1))``.

    >>> import funcgrad.torch as torch
    >>> torch.hamming_window(1)
    tensor([1.])
    """
    _window_overload("hamming_window", window_length, (
        ("bool", "periodic", periodic), ("float", "alpha", alpha), ("float", "beta", beta)),
        {"dtype": dtype, "layout": layout, "device": device,
         "requires_grad": requires_grad or None})
    a = 0.54 if alpha is None else alpha
    b = 0.46 if beta is None else beta
    return _window("hamming_window", np.hamming, _hamming_formula(a, b))(
        window_length, True if periodic is None else periodic, dtype=dtype, device=device,
        requires_grad=requires_grad)


def kaiser_window(window_length: builtins.int, periodic: builtins.bool | None = None,
                  beta: builtins.float | None = None, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: builtins.bool = False
                  ) -> Tensor:
    """The Kaiser window with shape parameter ``beta`` (12 unless given after ``periodic``).

    >>> import funcgrad.torch as torch
    >>> torch.kaiser_window(1)
    tensor([1.])
    """
    _window_overload("kaiser_window", window_length, (
        ("bool", "periodic", periodic), ("float", "beta", beta)),
        {"dtype": dtype, "layout": layout, "device": device,
         "requires_grad": requires_grad or None})
    b = 12.0 if beta is None else beta
    return _window("kaiser_window", lambda n: np.kaiser(n, b))(
        window_length, True if periodic is None else periodic, dtype=dtype, device=device,
        requires_grad=requires_grad)


_SETTINGS: dict[str, Any] = {"threads": 1, "interop": 1, "deterministic": False,
                             "warn_only": False, "matmul": "highest", "warn_always": False}


def get_num_threads() -> builtins.int:
    """The number of threads for intra-op parallelism (funcgrad: NumPy's BLAS decides).

    >>> import funcgrad.torch as torch
    >>> torch.get_num_threads() >= 1
    True
    """
    return cast(builtins.int, _SETTINGS["threads"])


def set_num_threads(n: builtins.int) -> None:
    """Record the intra-op thread count (read back by ``get_num_threads``).

    >>> import funcgrad.torch as torch
    >>> torch.set_num_threads(1)
    """
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _SETTINGS["threads"] = builtins.int(n)


def get_num_interop_threads() -> builtins.int:
    """The number of inter-op threads.

    >>> import funcgrad.torch as torch
    >>> torch.get_num_interop_threads() >= 1
    True
    """
    return cast(builtins.int, _SETTINGS["interop"])


def use_deterministic_algorithms(mode: builtins.bool, *, warn_only: builtins.bool = False
                                 ) -> None:
    """Ask for deterministic algorithms (funcgrad's CPU kernels always are).

    >>> import funcgrad.torch as torch
    >>> torch.use_deterministic_algorithms(False)
    """
    _SETTINGS["deterministic"], _SETTINGS["warn_only"] = builtins.bool(mode), warn_only


def are_deterministic_algorithms_enabled() -> builtins.bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect.

    >>> import funcgrad.torch as torch
    >>> torch.are_deterministic_algorithms_enabled()
    False
    """
    return cast(builtins.bool, _SETTINGS["deterministic"])


def is_deterministic_algorithms_warn_only_enabled() -> builtins.bool:
    """Whether deterministic mode only warns.

    >>> import funcgrad.torch as torch
    >>> torch.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return cast(builtins.bool, _SETTINGS["warn_only"])


def get_deterministic_debug_mode() -> builtins.int:
    """0 (off), 1 (warn) or 2 (error), from ``use_deterministic_algorithms``.

    >>> import funcgrad.torch as torch
    >>> torch.get_deterministic_debug_mode()
    0
    """
    if not _SETTINGS["deterministic"]:
        return 0
    return 1 if _SETTINGS["warn_only"] else 2


def set_float32_matmul_precision(precision: str) -> None:
    """The float32 matmul precision: "highest" (exact float32), or "high"/"medium", which
    allow TF32 products on a GPU.

    >>> import funcgrad.torch as torch
    >>> torch.set_float32_matmul_precision("highest")
    """
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision: {precision}")
    _SETTINGS["matmul"] = precision
    # The engine's setting (JAX's option): TF32 for float32 products on a GPU unless
    # "highest", which is the option's default (unset: exact float32); the CPU computes in
    # float32 either way.
    from funcgrad.config import config  # noqa: PLC0415

    config.update("jax_default_matmul_precision",
                  None if precision == "highest" else "tensorfloat32")


def get_float32_matmul_precision() -> str:
    """The float32 matmul precision.

    >>> import funcgrad.torch as torch
    >>> torch.get_float32_matmul_precision()
    'highest'
    """
    return cast(str, _SETTINGS["matmul"])


def set_warn_always(b: builtins.bool) -> None:
    """Warn every time (not once) for warnings PyTorch emits once.

    >>> import funcgrad.torch as torch
    >>> torch.set_warn_always(False)
    """
    _SETTINGS["warn_always"] = builtins.bool(b)


def is_warn_always_enabled() -> builtins.bool:
    """Whether ``set_warn_always(True)`` is in effect.

    >>> import funcgrad.torch as torch
    >>> torch.is_warn_always_enabled()
    False
    """
    return cast(builtins.bool, _SETTINGS["warn_always"])


def is_storage(obj: Any) -> builtins.bool:
    """Whether ``obj`` is a storage object (funcgrad has none).

    >>> import funcgrad.torch as torch
    >>> torch.is_storage(torch.zeros(1))
    False
    """
    return False


_FN_ONLY.update({
    "hann_window": _window("hann_window", np.hanning),
    "hamming_window": hamming_window, "repeat_interleave": repeat_interleave_function,
    "bartlett_window": _window("bartlett_window", np.bartlett),
    "blackman_window": _window("blackman_window", np.blackman),
    "kaiser_window": kaiser_window, "get_num_threads": get_num_threads,
    "set_num_threads": set_num_threads, "get_num_interop_threads": get_num_interop_threads,
    "use_deterministic_algorithms": use_deterministic_algorithms,
    "are_deterministic_algorithms_enabled": are_deterministic_algorithms_enabled,
    "is_deterministic_algorithms_warn_only_enabled":
        is_deterministic_algorithms_warn_only_enabled,
    "get_deterministic_debug_mode": get_deterministic_debug_mode,
    "set_float32_matmul_precision": set_float32_matmul_precision,
    "get_float32_matmul_precision": get_float32_matmul_precision,
    "set_warn_always": set_warn_always, "is_warn_always_enabled": is_warn_always_enabled,
    "is_storage": is_storage,
})



def _functions() -> dict[str, Any]:
    out = dict(_FN_ONLY)
    # ``torch.conv2d``, ``torch.dropout``...: the nn.functional ones PyTorch also exports.
    from funcgrad.torch.nn import functional as F  # noqa: PLC0415

    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                 "conv_transpose3d", "dropout", "alpha_dropout", "feature_alpha_dropout",
                 "batch_norm", "layer_norm", "group_norm", "instance_norm", "embedding",
                 "pixel_shuffle", "pixel_unshuffle", "celu", "selu", "threshold", "rrelu",
                 "hardshrink", "prelu", "pairwise_distance", "pdist", "kl_div",
                 "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
                 "triplet_margin_loss", "poisson_nll_loss", "ctc_loss", "rms_norm",
                 "bilinear", "channel_shuffle", "max_pool1d", "max_pool2d", "max_pool3d",
                 "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
                 "binary_cross_entropy_with_logits", "grid_sampler", "affine_grid_generator"):
        if hasattr(F, name):
            out[name] = getattr(F, name)
    return out


FUNCTIONS: dict[str, Any] = _functions()
autocast_namespace(FUNCTIONS)

__all__ = ["FUNCTIONS"]


def _rounds(idx: np.ndarray) -> list[np.ndarray]:
    """The positions of ``idx`` split so that no round repeats an index: round ``r`` holds
    each index's ``r``-th occurrence (the engine differentiates a product or a max exactly
    when the indices of one update are unique)."""
    order = np.argsort(idx, kind="stable")
    sorted_idx = idx[order]
    first = np.searchsorted(sorted_idx, sorted_idx, side="left")
    rank = np.empty_like(idx)
    rank[order] = np.arange(len(idx)) - first
    return [np.nonzero(rank == r)[0] for r in range(builtins.int(rank.max(initial=-1)) + 1)]
