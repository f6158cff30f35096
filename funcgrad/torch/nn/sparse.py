"""Lookup tables, as PyTorch's: ``Embedding`` and ``EmbeddingBag`` and their functional
forms ``embedding`` and ``embedding_bag`` (re-exported by ``nn.functional``).

The gradient of the table is dense, or with ``sparse=True`` a sparse COO tensor as
PyTorch's (the rows looked up, in order, uncoalesced); the row at ``padding_idx`` gets
none; ``max_norm`` renormalizes the rows it reads in place, as PyTorch does.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> emb = nn.Embedding.from_pretrained(torch.tensor([[0.0, 0.0], [1.0, 2.0]]), freeze=False,
...                                    padding_idx=0)
>>> emb
Embedding(2, 2, padding_idx=0)
>>> out = emb(torch.tensor([[1, 0, 1]]))
>>> out.grad_fn
<EmbeddingBackward0 object at 0x...>
>>> out.sum().backward(); emb.weight.grad
tensor([[0., 0.],
        [2., 2.]])
>>> emb.sparse = True; emb.weight.grad = None
>>> emb(torch.tensor([1, 0, 1])).sum().backward(); emb.weight.grad
tensor(indices=tensor([[1, 1]]),
       values=tensor([[1., 1.],
                      [1., 1.]]),
       size=(2, 2), nnz=2, layout=torch.sparse_coo)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.lax import stop_gradient
from funcgrad.primitives.indexing import gather
from funcgrad.torch._creation import empty
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import init
from funcgrad.torch.nn._apply import cuda_index, data, on_device_of, op, shape
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag", "embedding", "embedding_bag"]


def _check_index_dtype(indices: Any) -> None:
    buf = data(indices)
    if not hasattr(buf, "dtype") or np.dtype(buf.dtype).kind not in "iu":
        from funcgrad.torch._tensor import _TENSOR_TYPES  # noqa: PLC0415

        kind = getattr(getattr(indices, "dtype", None), "name", "")
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{_TENSOR_TYPES.get(kind, 'Tensor')} instead "
                           "(while checking arguments for embedding)")


def _host_indices(indices: Any, num: int, check_range: bool = True) -> np.ndarray:
    """The indices on the host, checked as PyTorch checks them."""
    _check_index_dtype(indices)
    host = indices._host() if isinstance(indices, Tensor) else np.asarray(data(indices))
    if check_range and host.size and (host.min() < 0 or host.max() >= num):
        raise IndexError("index out of range in self")
    return host


def _padding_index(padding_idx: int | None, num: int) -> int | None:
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _renorm_rows(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's ``embedding_renorm_``: rows read whose norm exceeds ``max_norm`` are
    scaled in place to ``max_norm`` (outside the graph)."""
    rows = np.unique(idx)
    if rows.size == 0:
        return
    with no_grad():
        w = weight._host()
        sel = w[rows].astype(np.float64)
        norms = np.sum(np.abs(sel) ** norm_type, axis=1) ** (1.0 / norm_type)
        scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        new = w.copy()
        new[rows] = (sel * scale[:, None]).astype(w.dtype)
        weight.copy_(Tensor(on_device_of(new, weight)))


def _freq_scaled(rows: Any, idx: np.ndarray, like: Any) -> Any:
    """``rows`` unchanged in value, its gradient divided by how often each index occurs."""
    _, inverse, counts = np.unique(idx.reshape(-1), return_inverse=True, return_counts=True)
    freq = on_device_of(counts[inverse].reshape(idx.shape + (1,)).astype(np.float64), like)
    frozen = stop_gradient(rows)
    return frozen + (rows - frozen) / fnp.astype(fnp.asarray(freq), rows.dtype)


def embedding(input: Any, weight: Any, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """The rows of ``weight`` at the integer ``input`` (any shape; a new last axis).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.embedding(torch.tensor([2, 0]), torch.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
    tensor([[4., 5.],
            [0., 1.]])
    """
    num = shape(weight)[0]
    pad = _padding_index(padding_idx, num)
    # CUDA indices are not read back to check them (a sync every step): PyTorch checks
    # them with a device-side assert; here out-of-range ones read NaN rows (sharp_bits).
    on_device = cuda_index(input) is not None and max_norm is None and \
        not scale_grad_by_freq
    if on_device:
        _check_index_dtype(input)
    else:
        idx = _host_indices(input, num)
        if max_norm is not None:
            _renorm_rows(weight, idx, max_norm, norm_type)

    # (the sparse gradient's path: an eager host table; CUDA tables and torch.func's
    # transforms keep the dense gradient)
    if sparse and isinstance(weight, Tensor) and weight.requires_grad and not on_device \
            and weight.device.type == "cpu" and type(data(weight)) is np.ndarray:
        return _sparse_grad_embedding(weight, idx, pad, scale_grad_by_freq)

    def impl(w: Any, i: Any) -> Any:
        # Host indices are checked above (PyTorch's IndexError): one gather of rows, without
        # the masking of out-of-range indices that the "fill" mode does.
        rows = gather(w, fnp.expand_dims(i, -1), "fill" if on_device else "clip")
        if scale_grad_by_freq:
            rows = _freq_scaled(rows, idx, w)
        if pad is not None:
            rows = fnp.where(fnp.expand_dims(i == pad, -1), stop_gradient(rows), rows)
        return rows

    return op("Embedding", impl, weight, input)


def _sparse_grad_embedding(weight: Tensor, idx: np.ndarray, pad: int | None,
                           by_freq: bool) -> Any:
    """The rows of ``weight`` at ``idx``, whose gradient reaches ``weight.grad`` as
    PyTorch's sparse one: the rows looked up, in order, the padding row left out."""
    from funcgrad.torch._sparse import sparse_grad_rows  # noqa: PLC0415

    flat = idx.reshape(-1).astype(np.int64)
    keep = None if pad is None else flat != pad
    rows = sparse_grad_rows(weight, flat, (*idx.shape, *weight.shape[1:]), keep,
                            "embedding_backward: scale_grad_by_freq not supported with "
                            "sparse gradients" if by_freq else None)
    # (the node PyTorch shows; its gradient goes to the rows, and from them to weight.grad)
    return op("Embedding", lambda r: r * 1, rows)


# How PyTorch's messages print the Tensor class.
_TENSOR_CLASS = "<class 'torch.Tensor'>"


def _bags(idx: np.ndarray, offsets: Any, include_last_offset: bool) -> tuple[np.ndarray, int]:
    """The bag of each flattened index, and the number of bags."""
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is "
                             "treated is a mini-batch of fixed length sequences. However, "
                             "found offsets of type "
                             f"{_TENSOR_CLASS if isinstance(offsets, Tensor) else type(offsets)}")
        return np.repeat(np.arange(idx.shape[0]), idx.shape[1]), idx.shape[0]
    if idx.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{idx.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    off = offsets._host() if isinstance(offsets, Tensor) else np.asarray(offsets)
    if off.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    starts = off[:-1] if include_last_offset else off
    n_bags = len(starts)
    if n_bags and (starts[0] != 0):
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got "
                           f"{int(starts[0])}")
    bag = np.searchsorted(starts, np.arange(idx.size), side="right") - 1
    if include_last_offset and off.size:
        bag = np.where(np.arange(idx.size) < off[-1], bag, -1)
    return bag, n_bags


def _check_bag_indices(flat: np.ndarray, bag: np.ndarray, num: int, generic: bool) -> None:
    """PyTorch's range check of embedding_bag's indices. Its generic CPU kernel (max mode,
    a padding_idx, float64 weights) checks every index; the fbgemm one of the other cases
    checks those inside a bag and names the index by its place in the bag."""
    bad = (flat < 0) | (flat >= num)
    if not generic:
        bad &= bag >= 0
    if not bad.any():
        return
    p = int(np.argmax(bad))
    if generic:
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {int(flat[p])}")
    place = int(np.count_nonzero(bag[:p] == bag[p]))
    raise RuntimeError(f"Index {place} of input takes value {int(flat[p])} which is not in "
                       f"the valid range [0, {num})")


def embedding_bag(input: Any, weight: Any, offsets: Any = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Any = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Any:
    """Sums, means or maxima of bags of embedding rows: the rows of a 2-D ``input``, or the
    runs of a 1-D ``input`` that start at ``offsets``. An empty bag gives zeros;
    ``padding_idx`` entries are left out of their bag.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> w = torch.tensor([[1.0, 1.0], [2.0, 4.0], [3.0, 0.0]])
    >>> F.embedding_bag(torch.tensor([0, 1, 2]), w, torch.tensor([0, 2]), mode="sum")
    tensor([[3., 5.],
            [3., 0.]])
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    num, dim = shape(weight)
    idx = _host_indices(input, num, check_range=False)
    pad = _padding_index(padding_idx, num)
    if per_sample_weights is not None and shape(per_sample_weights) != idx.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({shape(per_sample_weights)}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({idx.shape})")
    bag, n_bags = _bags(idx, offsets, include_last_offset)
    flat = idx.reshape(-1)
    _check_bag_indices(flat, bag, num, mode == "max" or pad is not None or
                       str(weight.dtype) == "torch.float64")
    if max_norm is not None:
        _renorm_rows(weight, flat, max_norm, norm_type)
    member = (bag[None, :] == np.arange(n_bags)[:, None])
    if pad is not None:
        member &= (flat != pad)[None, :]
    counts = member.sum(axis=1)
    longest = int(counts.max()) if n_bags and counts.size else 0
    # For max: the positions of each bag's members, padded with position 0 and masked.
    slots = np.zeros((n_bags, max(longest, 1)), np.int64)
    valid = np.zeros((n_bags, max(longest, 1)), bool)
    for b in range(n_bags):
        pos = np.nonzero(member[b])[0]
        slots[b, :pos.size], valid[b, :pos.size] = pos, True
    # (An index outside every bag is not checked, nor read: row 0 stands in for it.)
    safe = np.where((flat < 0) | (flat >= num), 0, flat)
    member_d, slots_d, valid_d, flat_d = (on_device_of(a, weight) for a in
                                          (member, slots, valid, safe))
    denom = on_device_of(np.maximum(counts, 1).astype(np.float64)[:, None], weight)

    def impl(w: Any, psw: Any) -> Any:
        return reduce(fnp.take(w, fnp.asarray(flat_d), axis=0), psw)

    def reduce(rows: Any, psw: Any) -> Any:
        if scale_grad_by_freq and mode != "max":
            rows = _freq_scaled(rows, flat, rows)
        if psw is not None:
            rows = rows * fnp.reshape(fnp.astype(psw, rows.dtype), (-1, 1))
        if mode == "max":
            picked = fnp.take(rows, fnp.asarray(slots_d), axis=0)
            mask = fnp.expand_dims(fnp.asarray(valid_d), -1)
            best = fnp.max(fnp.where(mask, picked, -fnp.inf), axis=1)
            return fnp.where(fnp.any(mask, axis=1), best, 0.0)
        summed = fnp.matmul(fnp.astype(fnp.asarray(member_d), rows.dtype), rows)
        if mode == "mean":
            return summed / fnp.astype(fnp.asarray(denom), rows.dtype)
        return summed

    if sparse and isinstance(weight, Tensor) and weight.requires_grad and \
            weight.device.type == "cpu" and type(data(weight)) is np.ndarray:
        from funcgrad.torch._sparse import sparse_grad_rows  # noqa: PLC0415

        # PyTorch's sparse gradient: the rows looked up, in order, without the padding ones.
        rows = sparse_grad_rows(weight, safe.astype(np.int64), (flat.size, dim),
                                None if pad is None else flat != pad)
        return op("EmbeddingBag", reduce, rows, per_sample_weights)
    return op("EmbeddingBag", impl, weight, per_sample_weights)


# ------------------------------------------------------------------------ modules


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, initialised from
    N(0, 1) (the ``padding_idx`` row zero), looked up by integer indices."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight: Any = None,
                 _freeze: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype=dtype,
                                          device=device), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(shape(_weight)) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input: Any) -> Any:  # noqa: A002
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is ``embeddings`` (shared; frozen unless ``freeze=False``).

        >>> import funcgrad.torch as torch
        >>> import funcgrad.torch.nn as nn
        >>> nn.Embedding.from_pretrained(torch.ones(4, 2)).weight.requires_grad
        False
        """
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, _weight=embeddings, _freeze=freeze, padding_idx=padding_idx,
                   max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings, without materialising the rows of each
    bag separately (``mode`` is ``'sum'``, ``'mean'`` or ``'max'``)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Any = None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_index(padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype=dtype,
                                          device=device))
            self.reset_parameters()
        else:
            if list(shape(_weight)) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input: Any, offsets: Any = None,  # noqa: A002
                per_sample_weights: Any = None) -> Any:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings`` (frozen unless ``freeze=False``)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, _weight=embeddings, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
