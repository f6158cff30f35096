"""The scatter-into-a-copy Tensor methods PyTorch has for its views and reductions:
``select_scatter``, ``slice_scatter``, ``diagonal_scatter`` (the inverse of ``select``,
slicing and ``diagonal``: a copy of ``self`` with ``src`` written where the view would
look), ``index_reduce``/``index_reduce_`` (``prod``, ``mean``, ``amax``, ``amin``, with or
without the old values) and ``nonzero_static``. Each records PyTorch's node through the
engine's indexed updates (``x.at[idx].set/add/multiply/max/min``).

>>> import funcgrad.torch as torch
>>> torch.zeros(2, 3).select_scatter(torch.ones(3), 0, 1)
tensor([[0., 0., 0.],
        [1., 1., 1.]])
>>> torch.tensor([[0, 3], [1, 0]]).nonzero_static(size=3)
tensor([[ 0,  1],
        [ 1,  0],
        [-1, -1]])
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _dtypes as D
from funcgrad.torch._tensor import _CPP, Tensor, apply_op
from funcgrad.torch._tensor_math import _dim, _on_device_of, _rounds, _t


def _mismatch(src: Tensor, want: tuple[builtins.int, ...]) -> None:
    if tuple(src.shape) != want:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(want)}")


def _scatter_into(op: str, self: Tensor, src: Any, key: Any,
                  move: Callable[[Any], Any] | None = None,
                  back: Callable[[Any], Any] | None = None) -> Tensor:
    """A copy of ``self`` with ``src`` (cast to ``self``'s dtype) at ``key`` (of
    ``move(self)``, moved back by ``back``)."""
    def run(x: Any, s: Any) -> Any:
        y = x if move is None else move(x)
        y = y.at[key].set(fnp.astype(s, x.dtype))
        return y if back is None else back(y)

    return cast(Tensor, apply_op(op, run, self, src))


def select_scatter(self: Tensor, src: Tensor, dim: builtins.int, index: builtins.int) -> Tensor:
    """A copy of ``self`` with ``src`` written at ``self.select(dim, index)``.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2, 2).select_scatter(torch.tensor([1.0, 2.0]), 1, -1)
    tensor([[0., 1.],
            [0., 2.]])
    """
    src = _t(src)
    d = _dim(dim, self.dim())
    n = self.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self.shape)} at dimension {d}")
    _mismatch(src, tuple(self.shape[:d]) + tuple(self.shape[d + 1:]))
    return _scatter_into("SelectScatter", self, src, (slice(None),) * d + (index % n,))


def slice_scatter(self: Tensor, src: Tensor, dim: builtins.int = 0,
                  start: builtins.int | None = None, end: builtins.int | None = None,
                  step: builtins.int = 1) -> Tensor:
    """A copy of ``self`` with ``src`` written at ``self[..., start:end:step, ...]`` (axis
    ``dim``).

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2, 4).slice_scatter(torch.ones(2, 2), 1, 0, None, 2)
    tensor([[1., 0., 1., 0.],
            [1., 0., 1., 0.]])
    """
    src = _t(src)
    d = _dim(dim, self.dim())
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    sl = slice(start, end, step)
    count = len(range(*sl.indices(self.shape[d])))
    _mismatch(src, tuple(self.shape[:d]) + (count,) + tuple(self.shape[d + 1:]))
    return _scatter_into("SliceScatter", self, src, (slice(None),) * d + (sl,))


def diagonal_scatter(self: Tensor, src: Tensor, offset: builtins.int = 0,
                     dim1: builtins.int = 0, dim2: builtins.int = 1) -> Tensor:
    """A copy of ``self`` with ``src`` written on ``self.diagonal(offset, dim1, dim2)``
    (the diagonal is ``src``'s last axis, as ``diagonal`` returns it).

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2, 3).diagonal_scatter(torch.tensor([1.0, 2.0]), 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.]])
    """
    src = _t(src)
    nd = self.dim()
    d1, d2 = _dim(dim1, nd), _dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rows, cols = self.shape[d1], self.shape[d2]
    n = builtins.max(0, builtins.min(rows + builtins.min(offset, 0),
                                     cols - builtins.max(offset, 0)))
    rest = [k for k in range(nd) if k not in (d1, d2)]
    _mismatch(src, tuple(self.shape[k] for k in rest) + (n,))
    i = np.arange(n)
    key = (Ellipsis, i + builtins.max(-offset, 0), i + builtins.max(offset, 0))
    perm = (*rest, d1, d2)
    inv = tuple(builtins.int(k) for k in np.argsort(perm))
    return _scatter_into("DiagonalScatter", self, src, key,
                         lambda x: fnp.transpose(x, perm), lambda y: fnp.transpose(y, inv))


# ------------------------------------------------------------------ index_reduce

_REDUCES = ("prod", "mean", "amax", "amin")
_warned = [False]


def _extreme(dt: D.dtype, high: builtins.bool) -> Any:
    if dt.is_floating_point:
        return np.inf if high else -np.inf
    info = np.iinfo(dt.np)
    return info.max if high else info.min


def _index_reduce_fn(self: Tensor, dim: builtins.int, index: Any, source: Any, reduce: str,
                     include_self: builtins.bool, name: str
                     ) -> tuple[Callable[[Any, Any], Any], Tensor]:
    if not _warned[0]:
        _warned[0] = True
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    if reduce not in _REDUCES:
        raise RuntimeError(f"{name}(): Expected reduce to be one of prod, mean, amax or amin "
                           f"but got {reduce}.")
    index, source = _t(index), _t(source)
    d = _dim(dim, self.dim())
    if index.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_CPP[index.dtype.name]}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_CPP[self.dtype.name]}) and source "
                           f"({_CPP[source.dtype.name]}) must have the same scalar type")
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    idx = np.asarray(index._host(), np.int64).reshape(-1)
    want = tuple(self.shape[:d]) + (len(idx),) + tuple(self.shape[d + 1:])
    if self.dim() and tuple(source.shape) != want:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self.shape)} "
                           f"source.shape = {list(source.shape)}")
    n = self.shape[d] if self.dim() else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range in self")
    idx = idx % builtins.max(n, 1)
    lead = (slice(None),) * d
    hit = np.zeros(n, bool)
    hit[idx] = True
    hit_shape = (1,) * d + (n,) + (1,) * (self.dim() - d - 1)
    hit_b = hit.reshape(hit_shape) if self.dim() else hit.reshape(())
    dt = self.dtype

    def at(k: np.ndarray) -> Any:
        return lead + (k,) if self.dim() else ()

    def take(s: Any, k: np.ndarray) -> Any:
        return s[lead + (k,)] if self.dim() else s

    def run(x: Any, s: Any) -> Any:
        if reduce == "mean":
            acc = x if include_self else fnp.where(hit_b, fnp.zeros_like(x), x)
            acc = acc.at[at(idx)].add(s)
            counts = np.bincount(idx, minlength=n) + (1 if include_self else 0)
            counts = np.maximum(counts, 1).reshape(hit_shape if self.dim() else ())
            c = counts.astype(x.dtype)
            if dt.is_floating_point or dt.is_complex:
                return acc / c
            return fnp.floor_divide(acc, c)
        start = {"prod": 1, "amax": _extreme(dt, False), "amin": _extreme(dt, True)}[reduce]
        acc = x if include_self else fnp.where(hit_b, fnp.full_like(x, start), x)
        for k in _rounds(idx):
            upd = acc.at[at(idx[k])]
            piece = take(s, k)
            if reduce == "prod":
                acc = upd.multiply(piece, unique_indices=True)
            elif reduce == "amax":
                acc = upd.max(piece, unique_indices=True)
            else:
                acc = upd.min(piece, unique_indices=True)
        return acc

    return run, source


def index_reduce(self: Tensor, dim: builtins.int, index: Tensor, source: Tensor, reduce: str,
                 *, include_self: builtins.bool = True) -> Tensor:
    """A copy of ``self`` whose slices ``index[i]`` along ``dim`` are reduced (``prod``,
    ``mean``, ``amax``, ``amin``) with ``source``'s slices ``i`` (and with their old values
    when ``include_self``).

    >>> import funcgrad.torch as torch
    >>> import warnings; warnings.simplefilter("ignore")
    >>> torch.ones(3).index_reduce(0, torch.tensor([0, 0, 2]),
    ...                            torch.tensor([2.0, 3.0, 4.0]), "prod")
    tensor([6., 1., 4.])
    >>> warnings.resetwarnings()
    """
    run, source = _index_reduce_fn(self, dim, index, source, reduce, include_self,
                                   "index_reduce")
    return cast(Tensor, apply_op("IndexReduce", run, self, source))


def index_reduce_(self: Tensor, dim: builtins.int, index: Tensor, source: Tensor, reduce: str,
                  *, include_self: builtins.bool = True) -> Tensor:
    """``index_reduce`` written into this tensor (recorded as ``IndexReduceBackward0``).

    >>> import funcgrad.torch as torch
    >>> import warnings; warnings.simplefilter("ignore")
    >>> t = torch.zeros(2)
    >>> t.index_reduce_(0, torch.tensor([1, 1]), torch.tensor([2.0, 4.0]), "mean",
    ...                 include_self=False)
    tensor([0., 3.])
    >>> warnings.resetwarnings()
    """
    run, source = _index_reduce_fn(self, dim, index, source, reduce, include_self,
                                   "index_reduce_")
    return self._inplace("IndexReduce", run, source)


# ------------------------------------------------------------------ nonzero_static


def nonzero_static(self: Tensor, *, size: builtins.int, fill_value: builtins.int = -1
                   ) -> Tensor:
    """``nonzero()`` cut or padded (with ``fill_value``) to exactly ``size`` rows: a shape
    known before the data is (what ``torch.compile`` and ``torch.func`` need).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([0.0, 2.0, 0.0, 5.0, 7.0]).nonzero_static(size=2)
    tensor([[1],
            [3]])
    """
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"size: {size}")
    host = np.asarray(self._host())
    nz = np.stack(np.nonzero(host), -1).astype(np.int64) if host.ndim else \
        np.zeros((builtins.int(host != 0), 0), np.int64)
    out = np.full((size, host.ndim), fill_value, np.int64)
    k = builtins.min(size, len(nz))
    out[:k] = nz[:k]
    return _on_device_of(self, out)


METHODS: dict[str, Any] = {
    "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "index_reduce": index_reduce,
    "index_reduce_": index_reduce_, "nonzero_static": nonzero_static,
}
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)

__all__ = ["METHODS"]
