"""Sparse COO tensors (``torch.sparse_coo_tensor``, ``Tensor.to_sparse``), as PyTorch's.

A sparse tensor is a ``Tensor`` of layout ``torch.sparse_coo`` that holds an int64
``indices`` tensor (``sparse_dim`` rows, one column per stored entry) and a ``values``
tensor (one row per entry, with ``dense_dim`` trailing dense dimensions). Every operation
is written with ordinary Tensor operations on ``values`` (gathers, ``index_add``,
products), so gradients flow through the one engine: to a ``values`` tensor that requires
grad, and, for a sparse leaf, into a sparse ``.grad`` with the leaf's coalesced pattern.
The positions (sorting, merging, duplicates) are worked out on the host with NumPy.
A 2-D CSR tensor (``torch.sparse_csr_tensor``, ``Tensor.to_sparse_csr``) is the same
object in row order, shown and indexed as PyTorch's CSR tensors are.

>>> import funcgrad.torch as torch
>>> s = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 0]], [3.0, 4.0, 5.0], (2, 3))
>>> s.coalesce()
tensor(indices=tensor([[0, 1],
                       [2, 0]]),
       values=tensor([3., 9.]),
       size=(2, 3), nnz=2, layout=torch.sparse_coo)
>>> s.to_dense()
tensor([[0., 0., 3.],
        [9., 0., 0.]])
"""

from __future__ import annotations

import builtins
import math
from typing import Any, cast

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch import _repr as _repr_module
from funcgrad.torch._device import Size
from funcgrad.torch._grad_mode import is_grad_enabled, no_grad
from funcgrad.torch._graph import GradFn, name_node
from funcgrad.torch._repr import format_tensor_data
from funcgrad.torch._tensor import Tensor, _add_suffixes

__all__ = ["SparseCsrTensor", "SparseTensor", "add_sparse_grad", "from_rows", "hspmm",
           "log_softmax", "not_on_sparse", "smm", "softmax", "sparse_coo_tensor",
           "sparse_csr_tensor", "sparse_mask", "sparse_mm", "sparse_sum", "to_sparse",
           "to_sparse_csr"]

_UNCOALESCED = "Cannot get {} on an uncoalesced tensor, please call .coalesce() first"


def not_on_sparse(op: str, backend: str = "SparseCPU") -> NotImplementedError:
    """PyTorch's error for the operator ``op`` without a kernel for ``backend``'s layout."""
    # (PyTorch goes on to list the backends its build registered the operator for)
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{backend}' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). If you are a Facebook "
        "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for "
        "possible resolutions.")


class _SparseNode:
    """The ``grad_fn`` a sparse result shows: PyTorch's node name. Gradients flow through
    the values' own graph, so the node only names the operation."""

    __slots__ = ("_name", "values_fn")

    def __init__(self, name: str, values_fn: Any) -> None:
        self._name = name
        self.values_fn = values_fn

    def name(self) -> str:
        return self._name

    @property
    def next_functions(self) -> tuple[Any, ...]:
        return ((self.values_fn, 0),) if self.values_fn is not None else ()

    def __repr__(self) -> str:
        return f"<{self._name} object at {id(self):#x}>"


def _tensor(x: Any, dtype: D.dtype | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype is dtype else x.to(dtype)
    from funcgrad.torch._creation import tensor  # noqa: PLC0415

    return tensor(x, dtype=dtype)


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout=torch.sparse_coo``); made by ``sparse_coo_tensor`` or
    ``Tensor.to_sparse``. Operations PyTorch has no sparse kernel for raise its
    ``NotImplementedError``.

    >>> import funcgrad.torch as torch
    >>> s = torch.tensor([[0.0, 2.0], [0.0, 0.0]]).to_sparse()
    >>> s.is_sparse, s.layout, s._nnz(), s.shape
    (True, torch.sparse_coo, 1, torch.Size([2, 2]))
    """

    __slots__ = ("_sidx", "_svals", "_ssize", "_scoal", "_sgrad")
    _sidx: np.ndarray
    _svals: Any  # the values Tensor (Any: its operators are attached at import)
    _ssize: tuple[builtins.int, ...]
    _scoal: builtins.bool
    _sgrad: Any
    is_sparse = True
    # (what a strided operation checks to hand a sparse operand over; both layouts)
    _sparse_kind = True
    _backend = "SparseCPU"

    @classmethod
    def _make(cls, indices: np.ndarray, values: Any, size: tuple[builtins.int, ...],
              coalesced: bool, node: str | None = None) -> SparseTensor:
        s = Tensor.__new__(cls)
        Tensor.__init__(s, values._data)
        s._sidx = np.ascontiguousarray(indices, dtype=np.int64)
        s._svals = values
        s._ssize = tuple(builtins.int(n) for n in size)
        s._scoal = coalesced
        s._sgrad = None
        if values.requires_grad:
            s._requires_grad = True
            s.grad_fn = cast(Any, _SparseNode(node or "SparseCooTensorWithDimsAndTensorsBackward0",
                                              values.grad_fn))
        return s

    def __getattribute__(self, name: str) -> Any:
        if name[0] == "_" or name in _SPARSE_NAMES:
            return object.__getattribute__(self, name)
        try:
            found = object.__getattribute__(self, name)
        except AttributeError:
            raise
        if callable(found) and hasattr(Tensor, name):
            def refuse(*args: Any, **kwargs: Any) -> Any:
                raise not_on_sparse(name, object.__getattribute__(self, "_backend"))
            return refuse
        return found

    # ---------------------------------------------------------------- facts

    @property
    def shape(self) -> Size:
        return Size(self._ssize)

    def size(self, dim: builtins.int | None = None) -> Any:
        return self.shape if dim is None else self._ssize[dim]

    def dim(self) -> int:
        return len(self._ssize)

    @property
    def ndim(self) -> int:
        return len(self._ssize)

    def numel(self) -> int:
        return math.prod(self._ssize)

    def __len__(self) -> int:
        if not self._ssize:
            raise TypeError("len() of a 0-d tensor")
        return self._ssize[0]

    def is_contiguous(self, memory_format: Any = None) -> bool:
        return False

    def stride(self, dim: builtins.int | None = None) -> Any:
        return (0,) * len(self._ssize) if dim is None else 0

    def sparse_dim(self) -> int:
        """The number of sparse dimensions (rows of ``indices``)."""
        return builtins.int(self._sidx.shape[0])

    def dense_dim(self) -> int:
        """The number of dense dimensions of each stored value."""
        return len(self._ssize) - self.sparse_dim()

    def _nnz(self) -> int:
        return builtins.int(self._sidx.shape[1])

    def is_coalesced(self) -> bool:
        """Whether the indices are sorted and unique (``coalesce`` makes them so)."""
        return self._scoal

    def _indices(self) -> Tensor:
        return Tensor(self._sidx)

    def _values(self) -> Tensor:
        return self._svals

    def indices(self) -> Tensor:
        """The indices of a coalesced tensor (PyTorch refuses an uncoalesced one)."""
        if not self._scoal:
            raise RuntimeError(_UNCOALESCED.format("indices"))
        return Tensor(self._sidx)

    def values(self) -> Tensor:
        """The values of a coalesced tensor (PyTorch refuses an uncoalesced one)."""
        if not self._scoal:
            raise RuntimeError(_UNCOALESCED.format("values"))
        return self._svals

    def _host(self) -> np.ndarray:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force: bool = False) -> Any:  # type: ignore[override]
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def tolist(self) -> Any:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def storage(self) -> Any:
        raise NotImplementedError("Cannot access storage of SparseTensorImpl")

    untyped_storage = storage

    def contiguous(self, memory_format: Any = None) -> Tensor:
        raise RuntimeError("unsupported memory format option Contiguous")

    def reshape(self, *shape: Any) -> Tensor:
        raise RuntimeError("reshape is not implemented for sparse tensors")

    flatten = reshape  # type: ignore[assignment]

    def item(self) -> Any:
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted "
                               "to Scalar")
        return self.to_dense().item()

    # ---------------------------------------------------------------- autograd

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        """Make this sparse leaf record operations; its ``.grad`` is then sparse."""
        if self.grad_fn is not None:
            return cast(SparseTensor, Tensor.requires_grad_(self, requires_grad))
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._svals = self._svals.detach().requires_grad_(requires_grad)
        self._requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Any:
        if self._sgrad is not None or self.grad_fn is not None:
            return self._sgrad
        g = self._svals.grad
        if g is None:
            return None
        # PyTorch's gradient of a sparse leaf is the dense gradient masked to the leaf's
        # coalesced pattern; every duplicate entry received that same gradient.
        _, first, _ = _unique(self._sidx, self._ssize)
        order = np.argsort(_linear(self._sidx, self._ssize)[first], kind="stable")
        pick = first[order]
        self._sgrad = SparseTensor._make(self._sidx[:, pick], g.detach()[Tensor(pick)],
                                         self._ssize, True)
        self._svals.grad = None
        return self._sgrad

    @grad.setter
    def grad(self, value: Any) -> None:
        self._sgrad = value
        if value is None and self._svals.grad_fn is None:
            self._svals.grad = None

    def detach(self) -> SparseTensor:
        return type(self)._make(self._sidx, self._svals.detach(), self._ssize, self._scoal)

    def clone(self, *, memory_format: Any = None) -> SparseTensor:  # type: ignore[override]
        return type(self)._make(self._sidx.copy(), self._svals.clone(), self._ssize,
                                  self._scoal, "CloneBackward0")

    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        vals = self._svals.to(*args, **kwargs)
        if vals is self._svals:
            return self
        return type(self)._make(self._sidx, vals, self._ssize, self._scoal, "ToCopyBackward0")

    def double(self) -> SparseTensor:  # type: ignore[override]
        return self.to(D.float64)

    def float(self) -> SparseTensor:  # type: ignore[override]
        return self.to(D.float32)

    def half(self) -> SparseTensor:  # type: ignore[override]
        return self.to(D.float16)

    def long(self) -> SparseTensor:  # type: ignore[override]
        return self.to(D.int64)

    def int(self) -> SparseTensor:  # type: ignore[override]
        return self.to(D.int32)

    def cpu(self) -> SparseTensor:
        return self

    def type(self, dtype: Any = None, non_blocking: bool = False,
             **kwargs: Any) -> Any:
        """The legacy type name (``torch.sparse.FloatTensor``), or a copy as ``dtype``."""
        if dtype is None:
            name: str = self._svals.type()
            return name.replace("torch.", "torch.sparse.", 1) if name.count(".") == 1 else \
                name.replace("cuda.", "cuda.sparse.", 1)
        return self.to(dtype)

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> SparseTensor:
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        out = SparseTensor._make(self._sidx.copy(), self._svals.detach().clone(), self._ssize,
                                 self._scoal)
        if self._requires_grad:
            out.requires_grad_(True)
        memo[id(self)] = out
        return out

    # ---------------------------------------------------------------- conversions

    def to_dense(self, dtype: Any = None, *, masked_grad: bool = True) -> Tensor:
        """The strided tensor this one stands for (duplicates summed)."""
        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        return _named(_scatter_dense(self._sidx, self._svals, self._ssize), "ToDense")

    def coalesce(self) -> SparseTensor:
        """Indices sorted and unique, the values of duplicates summed."""
        if self._scoal:
            return self
        uniq, _, inverse = _unique(self._sidx, self._ssize)
        vals = self._svals
        out = _zeros_like_rows(vals, uniq.shape[1]).index_add(0, Tensor(inverse), vals)
        return SparseTensor._make(uniq, out, self._ssize, True, "CoalesceBackward0")

    def to_sparse(self, sparse_dim: builtins.int | None = None, *, layout: Any = None,
                  blocksize: Any = None, dense_dim: Any = None) -> SparseTensor:
        return self

    to_sparse_coo = to_sparse

    # ---------------------------------------------------------------- arithmetic

    def __neg__(self) -> SparseTensor:
        return type(self)._make(self._sidx, -self._svals, self._ssize, self._scoal,
                                  "NegBackward0")

    neg = __neg__

    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        if not isinstance(other, SparseTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        return _add(self, other, alpha)

    __add__ = add

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, Tensor):
            return cast(Any, other) + self.to_dense()
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")

    def sub(self, other: Any, *, alpha: Any = 1) -> Any:
        return _renamed(self.add(other, alpha=-alpha), "SubBackward0")

    __sub__ = sub

    def __rsub__(self, other: Any) -> Any:
        if isinstance(other, Tensor):
            return cast(Any, other) - self.to_dense()
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")

    def mul(self, other: Any) -> SparseTensor:
        if isinstance(other, SparseTensor):
            return _mul_sparse(self, other)
        if isinstance(other, Tensor) and other.ndim > 0:
            # A strided operand is read at the stored positions only.
            full = other.expand(self._ssize) if tuple(other.shape) != self._ssize else other
            sd = self.sparse_dim()
            picked = full[tuple(Tensor(self._sidx[k]) for k in range(sd))]
            return SparseTensor._make(self._sidx, self._svals * picked, self._ssize,
                                      self._scoal, "MulBackward0")
        return SparseTensor._make(self._sidx, self._svals * other, self._ssize, self._scoal,
                                  "MulBackward0")

    __mul__ = __rmul__ = mul

    def _become(self, other: SparseTensor) -> SparseTensor:
        if self._requires_grad and self.grad_fn is None and is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        self._sidx, self._svals, self._scoal = other._sidx, other._svals, other._scoal
        self._data = other._svals._data
        return self

    def add_(self, other: Any, *, alpha: Any = 1) -> SparseTensor:  # type: ignore[override]
        return self._become(self.add(other, alpha=alpha))

    def mul_(self, other: Any) -> SparseTensor:
        return self._become(self.mul(other))

    def zero_(self) -> SparseTensor:
        vals = _zeros_like_rows(self._svals, 0)
        return self._become(SparseTensor._make(np.zeros((self.sparse_dim(), 0), np.int64),
                                               vals, self._ssize, True))

    def div(self, other: Any) -> SparseTensor:
        if isinstance(other, Tensor) and other.ndim > 0:
            raise RuntimeError("Sparse division requires a scalar or zero-dim dense tensor "
                               "divisor (got shape " + str(list(other.shape)) +
                               " for divisor)")
        return type(self)._make(self._sidx, self._svals / other, self._ssize, self._scoal,
                                  "DivBackward0")

    __truediv__ = div

    def t(self) -> SparseTensor:
        if self.sparse_dim() > 2 or self.dense_dim() != 0:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense "
                               f"dimensions, but got {self.sparse_dim()} sparse and "
                               f"{self.dense_dim()} dense dimensions")
        return _renamed(self.transpose(0, 1), "TBackward0") if self.ndim == 2 else self

    @property
    def T(self) -> SparseTensor:  # noqa: N802 - PyTorch's name
        return self.permute(*range(self.ndim - 1, -1, -1)) if self.ndim >= 2 else self

    def permute(self, *dims: Any) -> SparseTensor:
        """The dimensions reordered (sparse among sparse, dense among dense)."""
        order = [d % self.ndim for d in (dims[0] if len(dims) == 1 and
                                         not isinstance(dims[0], builtins.int) else dims)]
        sd = self.sparse_dim()
        if sorted(order[:sd]) != list(range(sd)):
            raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                               "dimensions are not allowed. Only transpositions within "
                               "sparse and within dense dimensions are allowed.")
        vals = self._svals.permute(0, *(d - sd + 1 for d in order[sd:]))
        return SparseTensor._make(self._sidx[order[:sd]], vals,
                                  tuple(self._ssize[d] for d in order), False,
                                  "PermuteBackward0")

    @property  # type: ignore[misc]
    def data(self) -> SparseTensor:  # type: ignore[override]
        return self.detach()

    @property
    def nbytes(self) -> builtins.int:
        raise RuntimeError(
            "nbytes is not defined for sparse tensors.  If you want the size of the "
            "constituent tensors, add the nbytes of the indices and values.  If you want the "
            "size of the  equivalent dense tensor, multiply numel() by element_size()")

    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> SparseTensor:
        n, sd = len(self._ssize), self.sparse_dim()
        d0, d1 = dim0 % n if n else 0, dim1 % n if n else 0
        if d0 >= sd or d1 >= sd:
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                               f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
        idx = self._sidx.copy()
        idx[[d0, d1]] = idx[[d1, d0]]
        size = list(self._ssize)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseTensor._make(idx, self._svals, tuple(size), self._scoal and d0 == d1,
                                  "TransposeBackward0")

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # type: ignore[override]
        return sparse_sum(self, dim, dtype=dtype)

    def mm(self, mat2: Any) -> Tensor:
        return sparse_mm(self, mat2, "Mm")

    def matmul(self, other: Any) -> Tensor:
        if isinstance(other, Tensor) and other.ndim == 1:
            return cast(Any, sparse_mm(self, other.unsqueeze(1))).squeeze(1)
        return sparse_mm(self, other, "Mm")

    def _addmm(self, mat: Any, mat2: Any, beta: Any, alpha: Any, node: str) -> Tensor:
        """``beta * mat + alpha * (self @ mat2)`` (``torch.addmm`` with a sparse ``mat1``)."""
        prod: Any = sparse_mm(self, mat2)
        out = mat * beta + prod * alpha if (beta, alpha) != (1, 1) else mat + prod
        return cast(Tensor, _named(out, node))

    __matmul__ = matmul

    def pow(self, exponent: Any) -> SparseTensor:
        if exponent == 0:
            raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would "
                               "make the result tensor dense")
        c = self if self._scoal else self.coalesce()
        return type(self)._make(c._sidx, c._svals.pow(exponent), self._ssize, True,
                                  "PowBackward0")

    __pow__ = pow

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Tensor:
        """The norm of all entries (duplicates summed first)."""
        if dim is not None:
            raise not_on_sparse("norm.ScalarOpt_dim", self._backend)
        return cast(Tensor, self.coalesce()._svals.norm(2 if p == "fro" else p))

    def unsqueeze(self, dim: builtins.int) -> SparseTensor:
        """A new dimension of size 1 at ``dim`` (sparse when among the sparse ones)."""
        n, sd = self.ndim, self.sparse_dim()
        d = dim + n + 1 if dim < 0 else dim
        if not 0 <= d <= n:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-n - 1}, {n}], but got {dim})")
        size = self._ssize[:d] + (1,) + self._ssize[d:]
        if d <= sd:
            idx = np.insert(self._sidx, d, 0, axis=0)
            return SparseTensor._make(idx, self._svals, size, self._scoal,
                                      "UnsqueezeBackward0")
        return SparseTensor._make(self._sidx, self._svals.unsqueeze(d - sd + 1), size,
                                  self._scoal, "UnsqueezeBackward0")

    def select(self, dim: builtins.int, index: builtins.int) -> SparseTensor:
        """The slice at ``index`` of a sparse dimension ``dim`` (entries kept in order)."""
        n, sd = self.ndim, self.sparse_dim()
        d = dim % n
        if d >= sd:
            return SparseTensor._make(self._sidx, self._svals.select(d - sd + 1, index),
                                      self._ssize[:d] + self._ssize[d + 1:], self._scoal,
                                      "SelectBackward0")
        i = index + self._ssize[d] if index < 0 else index
        if not 0 <= i < self._ssize[d]:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self._ssize)} at dimension {dim}")
        keep = np.nonzero(self._sidx[d] == i)[0]
        idx = np.delete(self._sidx[:, keep], d, axis=0)
        return SparseTensor._make(idx, self._svals[Tensor(keep)],
                                  self._ssize[:d] + self._ssize[d + 1:],
                                  self._scoal or keep.size <= 1, "SelectBackward0")

    def __eq__(self, other: Any) -> Any:
        raise not_on_sparse("eq.Tensor" if isinstance(other, Tensor) else "eq.Scalar",
                            self._backend)

    __hash__ = Tensor.__hash__

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, builtins.int) and not isinstance(item, builtins.bool):
            return self.select(0, item)
        raise not_on_sparse("index.Tensor", self._backend)

    def __repr__(self) -> str:
        return _sparse_repr(self)


# PyTorch's node for the products it has no derivative for (hspmm, smm), and its two
# to_sparse nodes (with and without sparse_dim).
_NOT_IMPLEMENTED = "torch::autograd::NotImplemented"
_TO_SPARSE = ("ToSparseBackward0", "ToSparseBackward1")


def _named(t: Any, op: str) -> Any:
    """``t`` with its node named as PyTorch names the operation's (``{op}Backward0``)."""
    if isinstance(t.grad_fn, GradFn):
        name_node(t.grad_fn, op)
    return t


def _renamed(s: SparseTensor, node: str) -> SparseTensor:
    if isinstance(s.grad_fn, _SparseNode):
        s.grad_fn._name = node
    return s


def _zero_preserving(name: str, node: str) -> Any:
    def method(self: SparseTensor) -> SparseTensor:
        # f(0) = 0: f applies to the stored values, duplicates summed first.
        c = self if self._scoal else self.coalesce()
        return type(self)._make(c._sidx, getattr(c._svals, name)(), self._ssize, True, node)

    method.__name__ = name
    method.__doc__ = f"``{name}`` of the stored values (coalesced first), as PyTorch."
    return method


# The elementwise operations PyTorch has sparse kernels for: those that map 0 to 0.
_ZERO_PRESERVING = ("abs", "sqrt", "sin", "tan", "tanh", "relu", "sign", "sgn", "asin",
                    "atan", "sinh", "asinh", "atanh", "expm1", "log1p", "trunc", "floor",
                    "ceil", "round", "square", "frac", "deg2rad", "rad2deg", "erf",
                    "erfinv")
for _name in _ZERO_PRESERVING:
    setattr(SparseTensor, _name, _zero_preserving(
        _name, ("Sgn" if _name == "sgn" else _name.capitalize().replace("2r", "2R")) +
        "Backward0"))


def _linear(idx: np.ndarray, size: tuple[int, ...]) -> np.ndarray:
    """Each entry's position in the sparse dimensions, row-major."""
    sd = idx.shape[0]
    strides = np.ones(sd, np.int64)
    for k in range(sd - 2, -1, -1):
        strides[k] = strides[k + 1] * size[k + 1]
    return cast(np.ndarray, (idx * strides[:, None]).sum(axis=0)) if sd else \
        np.zeros(idx.shape[1], np.int64)


def _unique(idx: np.ndarray, size: tuple[int, ...]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted unique indices, each one's first entry, and each entry's slot among them."""
    lin = _linear(idx, size)
    _, first, inverse = np.unique(lin, return_index=True, return_inverse=True)
    return idx[:, first], first, inverse.reshape(-1).astype(np.int64)


def _zeros_like_rows(vals: Any, n: int) -> Any:
    from funcgrad.torch._creation import zeros  # noqa: PLC0415

    return zeros((n, *vals.shape[1:]), dtype=vals.dtype, device=vals.device)


def _scatter_dense(idx: np.ndarray, vals: Any, size: tuple[int, ...]) -> Any:
    sd = idx.shape[0]
    rows = math.prod(size[:sd])
    flat = _zeros_like_rows(vals, rows).index_add(0, Tensor(_linear(idx, size)), vals)
    return flat.reshape(size)


def _add(a: SparseTensor, b: SparseTensor, alpha: Any) -> SparseTensor:
    if a._ssize != b._ssize:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a._ssize)} != {list(b._ssize)}")
    sb = b._svals if alpha == 1 else b._svals * alpha
    # PyTorch's kernel adds alpha * b as a fused multiply-add (alpha in b's dtype): in
    # float64, rounded once, for the narrower float dtypes.
    fused = alpha != 1 and b._svals.dtype in (D.float32, D.float16, D.bfloat16) and \
        a._svals.dtype is b._svals.dtype
    if fused:
        sb = b._svals.double() * builtins.float(b._svals.dtype.np.type(alpha))
    if a._nnz() == 0:
        return SparseTensor._make(b._sidx, sb, a._ssize, b._scoal, "AddBackward0")
    if b._nnz() == 0:
        return SparseTensor._make(a._sidx, a._svals, a._ssize, a._scoal, "AddBackward0")
    # PyTorch's CPU kernel merges the two entry lists as they lie, summing entries whose
    # indices are equal when they meet (coalesced operands give a coalesced sum).
    la, lb = _linear(a._sidx, a._ssize), _linear(b._sidx, b._ssize)
    pos_a, pos_b = np.empty(la.size, np.int64), np.empty(lb.size, np.int64)
    i = j = n = 0
    out: list[int] = []
    while i < la.size and j < lb.size:
        if la[i] == lb[j]:
            pos_a[i] = pos_b[j] = n
            out.append(i)
            i, j = i + 1, j + 1
        elif la[i] < lb[j]:
            pos_a[i] = n
            out.append(i)
            i += 1
        else:
            pos_b[j] = n
            out.append(-1 - j)
            j += 1
        n += 1
    for k in range(i, la.size):
        pos_a[k] = n
        out.append(k)
        n += 1
    for k in range(j, lb.size):
        pos_b[k] = n
        out.append(-1 - k)
        n += 1
    idx = np.stack([a._sidx[:, o] if o >= 0 else b._sidx[:, -1 - o] for o in out], axis=1)
    dt = _promote(a, b)
    sa = a._svals.double() if fused else a._svals.to(dt)
    vals = _zeros_like_rows(sa, n)
    vals = vals.index_add(0, Tensor(pos_a), sa).index_add(0, Tensor(pos_b), sb.to(sa.dtype))
    if fused:
        vals = vals.to(dt)
    return SparseTensor._make(idx, vals, a._ssize, a._scoal and b._scoal, "AddBackward0")


def _promote(a: Tensor, b: Tensor) -> D.dtype:
    from funcgrad.torch._dtypes import promote_types  # noqa: PLC0415

    return promote_types(a.dtype, b.dtype)


def _mul_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    if a._ssize != b._ssize:
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with "
                           "equal dimensionality, number of sparse dimensions, and shape of "
                           "sparse dimensions")
    if a._nnz() == 0 or b._nnz() == 0:
        empty = a if a._nnz() == 0 else b
        vals = _zeros_like_rows(a._svals.to(_promote(a, b)), 0)
        return SparseTensor._make(empty._sidx, vals, a._ssize, True, "MulBackward0")
    # PyTorch's intersection kernel walks one operand (the uncoalesced one; of two, the one
    # with fewer entries, the second at a tie; of two coalesced ones, their common entries)
    # and adds, for each entry, its products with the other's entries at that position, in
    # their order: an entry the other lacks is kept with a zero.
    if a._scoal != b._scoal:
        src, probe = (b, a) if a._scoal else (a, b)
    else:
        src, probe = (b, a) if b._nnz() <= a._nnz() else (a, b)
    ls, lp = _linear(src._sidx, src._ssize), _linear(probe._sidx, probe._ssize)
    order = np.argsort(lp, kind="stable")
    lo = np.searchsorted(lp[order], ls, side="left")
    hi = np.searchsorted(lp[order], ls, side="right")
    both_coalesced = a._scoal and b._scoal
    keep = np.nonzero(hi > lo)[0] if both_coalesced else np.arange(ls.size)
    pair_src = np.repeat(np.arange(keep.size), (hi - lo)[keep])
    pair_probe = np.concatenate([order[lo[j]:hi[j]] for j in keep]) if keep.size else \
        np.zeros(0, np.int64)
    sv = src._svals[Tensor(keep[pair_src])]
    pv = probe._svals[Tensor(pair_probe.astype(np.int64))]
    prods = sv * pv if src is a else pv * sv
    vals = _zeros_like_rows(prods, keep.size).index_add(0, Tensor(pair_src), prods)
    return SparseTensor._make(src._sidx[:, keep], vals, a._ssize, both_coalesced,
                              "MulBackward0")



def _suffixes(s: Any, layout: str) -> list[str]:
    """The ``size=..., nnz=..., [dtype=...,] layout=..., [grad_fn|requires_grad]`` parts
    PyTorch prints after a sparse tensor's members."""
    extras = [f"size={s._ssize}", f"nnz={s._nnz()}"]
    dt = s.dtype
    if not (dt is D.get_default_dtype() or dt.name in ("int64", "bool")):
        extras.append(f"dtype={dt}")
    extras.append(f"layout=torch.{layout}")
    if s.grad_fn is not None:
        extras.append(f"grad_fn=<{s.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif s._requires_grad:
        extras.append("requires_grad=True")
    return extras

def _sparse_repr(s: SparseTensor) -> str:
    ind = "tensor(indices="
    val = "       values="
    istr = _data_str(s._sidx, len(ind) + len("tensor("))
    vstr = _data_str(s._svals.detach()._host(), len(val) + len("tensor("))
    text = f"{ind}tensor({istr}),\n{val}tensor({vstr})"
    # PyTorch starts the size on a line of its own; the other suffixes wrap at the width.
    extras = _suffixes(s, "sparse_coo")
    width = _repr_module.PRINT_OPTS.linewidth
    line = len("tensor(")
    parts = [text]
    for k, suffix in enumerate(extras):
        if k == 0 or line + len(suffix) + 2 > width:
            parts.append(",\n" + " " * len("tensor(") + suffix)
            line = len("tensor(") + len(suffix)
        else:
            parts.append(", " + suffix)
            line += len(suffix) + 2
    return "".join(parts) + ")"


def _data_str(arr: np.ndarray, indent: int) -> str:
    # PyTorch prints the indices and values at the column they start at, without their own
    # dtype; an empty one shows its size.
    if arr.size == 0:
        return f"[], size={tuple(arr.shape)}"
    return format_tensor_data(arr.astype(np.float32) if arr.dtype.name == "bfloat16" else arr,
                              indent)


# ---------------------------------------------------------------------- functions


def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, *, dtype: Any = None,
                      device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False, check_invariants: Any = None,
                      is_coalesced: Any = None) -> SparseTensor:
    """A sparse COO tensor with the entries ``values`` at the columns of ``indices``.

    >>> import funcgrad.torch as torch
    >>> torch.sparse_coo_tensor([[0, 2]], [1.0, 5.0], (4,)).to_dense()
    tensor([1., 0., 5., 0.])
    """
    idx_t = _tensor(indices)
    vals = _tensor(values, dtype)
    if device is not None:
        vals = vals.to(device)
    # (PyTorch converts the indices to int64, and reads 1-D indices as one column and a
    # 0-d value as one entry)
    idx = np.asarray(idx_t._host()).astype(np.int64)
    if idx.ndim == 1:
        idx = idx.reshape(-1, 1)
    if idx.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(idx.shape)}")
    if vals.ndim == 0:
        vals = vals.reshape(1)
    sd = idx.shape[0]
    if size is None:
        if idx.shape[1] == 0:
            shape = (0,) * sd + tuple(vals.shape[1:])
        else:
            shape = tuple(builtins.int(m) + 1 for m in idx.max(axis=1)) + tuple(vals.shape[1:])
        if idx.size and idx.min() < 0:
            raise RuntimeError(f"found negative index {idx.min()} for dim 0")
    else:
        shape = tuple(builtins.int(n) for n in size)
        if len(shape) != sd + vals.ndim - 1:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(shape)}, sparse_dim = {sd}, dense_dim = "
                               f"{vals.ndim - 1}")
        if check_invariants and idx.size:
            for k in range(sd):
                if idx[k].min() < 0 or idx[k].max() >= shape[k]:
                    if idx[k].min() < 0:
                        raise RuntimeError(f"found negative index {idx[k].min()} for dim {k}")
                    raise RuntimeError(f"size is inconsistent with indices: for dim {k}, size "
                                       f"is {shape[k]} but found index {idx[k].max()}")
    if idx.shape[1] != vals.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{idx.shape[1]}, nnz from values: {vals.shape[0]}")
    coal = bool(is_coalesced) if is_coalesced is not None else idx.shape[1] <= 1
    s = SparseTensor._make(idx, vals, shape, coal)
    if requires_grad:
        s.requires_grad_(True)
    return s


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None,
              blocksize: Any = None, dense_dim: Any = None) -> SparseTensor:
    """The nonzero entries of a strided tensor as a coalesced sparse COO tensor
    (``sparse_dim`` leading dimensions sparse, the rest dense).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([0.0, 3.0]).to_sparse()
    tensor(indices=tensor([[1]]),
           values=tensor([3.]),
           size=(2,), nnz=1, layout=torch.sparse_coo)
    """
    if isinstance(self, SparseTensor):
        return self
    if layout is not None and repr(layout) == "torch.sparse_csr":
        return to_sparse_csr(self)
    if layout is not None and repr(layout) != "torch.sparse_coo":
        raise RuntimeError(f"to_sparse: conversion to {layout} is not implemented")
    n = self.ndim
    sd = n if sparse_dim is None else sparse_dim
    if not 0 <= sd <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, "
                           f"but {sd} is given")
    host = self.detach()._host()
    if n == 0:
        return SparseTensor._make(np.zeros((0, 1), np.int64), self.reshape(1), (), True,
                                  _TO_SPARSE[sparse_dim is None])
    lead = host.reshape(host.shape[:sd] + (-1,)) if sd < n else host[..., None]
    nz = np.nonzero(np.any(lead != 0, axis=-1))
    idx = np.stack(nz).astype(np.int64) if sd else np.zeros((0, 1 if host.size else 0),
                                                             np.int64)
    vals = self[tuple(Tensor(k) for k in nz)] if sd else self.unsqueeze(0)
    return SparseTensor._make(idx.reshape(sd, -1), vals, tuple(self.shape), True,
                              _TO_SPARSE[sparse_dim is None])


def sparse_mask(self: Tensor, mask: Any) -> SparseTensor:
    """The entries of this strided tensor at the stored positions of the sparse ``mask``
    (its pattern, as it is), as PyTorch's ``Tensor.sparse_mask``.

    >>> import funcgrad.torch as torch
    >>> m = torch.sparse_coo_tensor([[1]], [9.0], (3,))
    >>> torch.tensor([1.0, 2.0, 3.0]).sparse_mask(m).values()
    tensor([2.])
    """
    if not isinstance(mask, SparseTensor):
        raise RuntimeError("sparse_mask expects mask to be sparse COO, but got Strided")
    if tuple(self.shape) != mask._ssize:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask._ssize)}")
    sd = mask.sparse_dim()
    picked = self[tuple(Tensor(mask._sidx[k]) for k in range(sd))] if mask._nnz() else \
        _zeros_like_rows(self.reshape((-1, *self.shape[sd:]))[:0], 0)
    return SparseTensor._make(mask._sidx, picked, mask._ssize, mask._scoal,
                              "SparseMaskBackward0")


def softmax(s: Any, dim: int, *, dtype: Any = None) -> SparseTensor:
    """Softmax along ``dim`` over the stored entries (missing ones count as minus
    infinity), as ``torch.sparse.softmax``.

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[0, 0], [0, 2]], [1.0, 1.0], (1, 3))
    >>> torch.sparse.softmax(s, 1).values()
    tensor([0.5000, 0.5000])
    """
    return _softmax(s, dim, dtype, False)


def log_softmax(s: Any, dim: int, *, dtype: Any = None) -> SparseTensor:
    """Log-softmax along ``dim`` over the stored entries, as ``torch.sparse.log_softmax``.

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[0, 0], [0, 2]], [1.0, 1.0], (1, 3))
    >>> torch.sparse.log_softmax(s, 1).values()
    tensor([-0.6931, -0.6931])
    """
    return _softmax(s, dim, dtype, True)


def _softmax(s: SparseTensor, dim: int, dtype: Any, log: bool) -> SparseTensor:
    c = s.coalesce()
    vals = c._svals if dtype is None else c._svals.to(dtype)
    n, sd = c.ndim, c.sparse_dim()
    d = dim % n
    if d >= sd:
        out = vals.log_softmax(d - sd + 1) if log else vals.softmax(d - sd + 1)
        return SparseTensor._make(c._sidx, out, c._ssize, True,
                                  "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0")
    # The entries that share every index but dim's form one group.
    others = np.delete(c._sidx, d, axis=0)
    sub = tuple(sz for k, sz in enumerate(c._ssize[:sd]) if k != d)
    _, _, group = _unique(others, sub) if others.shape[0] else \
        (None, None, np.zeros(c._nnz(), np.int64))
    n_groups = builtins.int(group.max()) + 1 if group.size else 0
    host = vals.detach()._host()
    top = np.full((n_groups, *host.shape[1:]), -np.inf, host.dtype)
    np.maximum.at(top, group, host)
    g = Tensor(group)
    shifted = vals - Tensor(top)[g]
    sums = _zeros_like_rows(vals, n_groups).index_add(0, g, shifted.exp())
    out = shifted - sums.log()[g] if log else shifted.exp() / sums[g]
    return SparseTensor._make(c._sidx, out, c._ssize, True,
                              "SparseLogSoftmaxBackward0" if log else "SparseSoftmaxBackward0")


def sparse_mm(s: Any, d: Any, node: str = "SparseAddmm") -> Tensor:
    """The matrix product of a 2-D sparse tensor and a strided matrix (strided result).

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> torch.sparse.mm(s, torch.tensor([[1.0], [10.0]]))
    tensor([[20.],
            [ 3.]])
    """
    if not isinstance(s, SparseTensor):
        return cast(Tensor, s.mm(d))
    if isinstance(d, SparseTensor):
        return cast(Any, sparse_mm(s, d.to_dense())).to_sparse()
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(f"addmm: matrices expected, got {s.sparse_dim()}D tensor")
    if d.ndim != 2:
        raise RuntimeError(f"addmm: matrices expected, got {d.ndim}D tensor")
    if s._ssize[1] != d.shape[0]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._ssize[1]}, "
                           f"got {d.shape[0]}")
    if s.dtype is not d.dtype:
        raise RuntimeError(f"expected scalar type {_cpp(s.dtype)} but found {_cpp(d.dtype)}")
    rows, cols = Tensor(s._sidx[0]), Tensor(s._sidx[1])
    contrib = s._svals.unsqueeze(1) * d[cols]
    from funcgrad.torch._creation import zeros  # noqa: PLC0415

    out = cast(Any, zeros((s._ssize[0], d.shape[1]), dtype=d.dtype)).index_add(0, rows, contrib)
    return cast(Tensor, _named(out, node))


def _cpp(dt: D.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int"}.get(dt.name, dt.name)


def smm(s: Any, d: Any) -> SparseTensor:
    """``s @ d`` as a sparse tensor: every entry of the rows of ``s`` that hold one, zeros
    included (PyTorch's ``torch.smm``).

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[1], [0]], [2.0], (3, 2))
    >>> torch.smm(s, torch.tensor([[1.0, 0.0], [0.0, 1.0]]))._indices()
    tensor([[1, 1],
            [0, 1]])
    """
    h = hspmm(s, d)
    rows, cols = h._sidx[0], h._ssize[1]
    idx = np.stack([np.repeat(rows, cols), np.tile(np.arange(cols), rows.size)])
    return SparseTensor._make(idx, h._svals.reshape(-1), h._ssize, True, _NOT_IMPLEMENTED)


def hspmm(s: Any, d: Any) -> SparseTensor:
    """``s @ d`` as a hybrid sparse tensor whose rows are the rows of ``s`` that hold an
    entry (PyTorch's ``torch.hspmm``).

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[1], [0]], [2.0], (3, 2))
    >>> torch.hspmm(s, torch.ones(2, 2)).to_dense()
    tensor([[0., 0.],
            [2., 2.],
            [0., 0.]])
    """
    prod = sparse_mm(s, d)
    rows = np.unique(s._sidx[0])
    return SparseTensor._make(rows[None, :], prod[Tensor(rows)], tuple(prod.shape), True,
                              _NOT_IMPLEMENTED)


def sparse_sum(s: Any, dim: Any = None, *, dtype: Any = None) -> Tensor:
    """Sum of a sparse tensor over all or some dimensions: strided when every sparse
    dimension is summed, sparse (coalesced) otherwise.

    >>> import funcgrad.torch as torch
    >>> s = torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 0]], [3.0, 4.0, 5.0], (2, 3))
    >>> torch.sparse.sum(s), torch.sparse.sum(s, 1).to_dense()
    (tensor(12.), tensor([3., 9.]))
    """
    if not isinstance(s, SparseTensor):
        return cast(Tensor, s.sum(dim, dtype=dtype))
    vals = s._svals if dtype is None else s._svals.to(dtype)
    n, sd = s.ndim, s.sparse_dim()
    if dim is None:
        return vals.sum()
    dims = sorted({d % n for d in ((dim,) if isinstance(dim, builtins.int) else dim)})
    sparse_dims = [d for d in dims if d < sd]
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        vals = vals.sum(dense_dims)
    kept = [k for k in range(sd) if k not in sparse_dims]
    if not kept:
        return vals.sum(0)
    size = tuple(s._ssize[k] for k in kept) + tuple(
        s._ssize[d] for d in range(sd, n) if d not in dims)
    sub = SparseTensor._make(s._sidx[kept], vals, size, False, "SumBackward0")
    out = sub.coalesce()
    return SparseTensor._make(out._sidx, out._svals, size, True, "SparseSumBackward0")


# ---------------------------------------------------------------------- sparse gradients


def from_rows(rows: np.ndarray, values: Any, num: int) -> SparseTensor:
    """The sparse gradient of a table whose rows ``rows`` (in order, repeats kept) got the
    gradients ``values``: PyTorch's uncoalesced gradient of ``Embedding(sparse=True)``."""
    size = (num, *values.shape[1:])
    return SparseTensor._make(rows.reshape(1, -1), values, size, False)


def add_sparse_grad(leaf: Tensor, g: SparseTensor) -> None:
    """Accumulate the sparse gradient ``g`` into ``leaf.grad`` as PyTorch's AccumulateGrad
    does: kept as it is, merged into a sparse ``.grad``, or added into a strided one."""
    old = leaf._grad
    with no_grad():
        if old is None:
            leaf._grad = g
        elif isinstance(old, SparseTensor):
            leaf._grad = _add(old, g, 1)
        else:
            old.add_(g.to_dense())


def sparse_grad_rows(weight: Tensor, rows: np.ndarray, shape: tuple[int, ...],
                     keep: np.ndarray | None, refusal: str | None = None) -> Tensor:
    """A leaf holding ``weight``'s rows ``rows`` whose gradient lands in ``weight.grad`` as
    a sparse tensor (entries where ``keep`` is False are left out, as PyTorch leaves out
    the padding row; ``refusal``: the error its backward raises instead)."""
    leaf = weight.detach()[Tensor(rows)].reshape(shape)
    if not (weight.requires_grad and is_grad_enabled()):
        return leaf
    leaf.requires_grad_(True)
    num = builtins.int(weight.shape[0])

    def hook(g: Tensor) -> None:
        if refusal is not None:
            raise RuntimeError(refusal)
        flat = g.detach().reshape((rows.size, *weight.shape[1:]))
        if keep is not None:
            flat = flat[Tensor(np.nonzero(keep)[0])]
            add_sparse_grad(weight, from_rows(rows[keep], flat.clone(), num))
        else:
            add_sparse_grad(weight, from_rows(rows, flat.clone(), num))

    leaf.register_hook(hook)
    # (the rows' own dense gradient is not kept: weight.grad holds it, sparse)
    leaf.register_post_accumulate_grad_hook(_drop_grad)
    return leaf


def _drop_grad(t: Tensor) -> None:
    t.grad = None


# What a sparse tensor answers itself; other Tensor methods raise PyTorch's
# NotImplementedError for an operator without a sparse kernel.
_SPARSE_NAMES = frozenset(
    name for name, v in vars(SparseTensor).items() if not name.startswith("_")) | frozenset(
        _ZERO_PRESERVING) | frozenset((
        "dtype", "device", "is_leaf", "grad_fn", "is_cuda", "is_cpu", "is_floating_point",
        "is_complex", "element_size", "retains_grad", "itemsize", "is_sparse_csr",
        "is_quantized", "is_meta", "is_mkldnn", "is_nested",
        "requires_grad", "get_device", "names", "output_nr", "is_inference",
        "layout", "to_sparse_csr", "crow_indices", "col_indices"))


def dense_add_(dense: Tensor, s: SparseTensor, alpha: Any = 1) -> None:
    """``dense.add_(s, alpha=alpha)`` outside the graph, as PyTorch's CPU kernel: each
    stored entry in order, added as one fused multiply-add with ``alpha`` in the tensor's
    dtype (repeated positions in turn)."""
    buf = dense._data
    if not buf.flags.writeable:
        buf = dense._data = buf.copy()
    vals = s._svals.detach()._host().astype(np.float64)
    al = np.float64(buf.dtype.type(alpha))
    lin = _linear(s._sidx, tuple(dense.shape))
    # Each entry's rank among the entries at its position: one round per rank.
    order = np.argsort(lin, kind="stable")
    ranks = np.empty(lin.size, np.int64)
    sorted_lin = lin[order]
    starts = np.r_[0, np.nonzero(np.diff(sorted_lin))[0] + 1] if lin.size else np.zeros(0, int)
    run_start = np.repeat(starts, np.diff(np.r_[starts, lin.size]))
    ranks[order] = np.arange(lin.size) - run_start
    for r in range(builtins.int(ranks.max()) + 1 if lin.size else 0):
        sel = np.nonzero(ranks == r)[0]
        at = tuple(s._sidx[:, sel])
        buf[at] = (buf[at].astype(np.float64) + al * vals[sel]).astype(buf.dtype)
    dense._vc[0] += 1


def masked_values(dense: Tensor, s: SparseTensor) -> np.ndarray:
    """The entries of ``dense`` at the stored positions of ``s`` (``dense.sparse_mask(s)``'s
    values)."""
    return cast(np.ndarray, dense._host()[tuple(s._sidx)])


def host_parts(s: SparseTensor) -> tuple[np.ndarray, np.ndarray]:
    """The indices and (host) values of ``s``."""
    return s._sidx, s._svals.detach()._host()


# ---------------------------------------------------------------------- CSR


class SparseCsrTensor(SparseTensor):
    """A 2-D sparse CSR tensor (``layout=torch.sparse_csr``): ``crow_indices``,
    ``col_indices`` and ``values``; made by ``sparse_csr_tensor`` or
    ``Tensor.to_sparse_csr``. It keeps its entries in row order as a COO tensor does, so
    products, ``to_dense`` and their gradients are the COO ones.

    >>> import funcgrad.torch as torch
    >>> c = torch.tensor([[0.0, 2.0], [3.0, 4.0]]).to_sparse_csr()
    >>> c.crow_indices(), c.col_indices(), c.is_sparse_csr
    (tensor([0, 1, 3]), tensor([1, 0, 1]), True)
    """

    __slots__ = ()
    is_sparse = False
    is_sparse_csr = True
    _backend = "SparseCsrCPU"

    def crow_indices(self) -> Tensor:
        """Where each row's entries start in ``col_indices`` (one more than the rows)."""
        counts = np.bincount(self._sidx[0], minlength=self._ssize[0])
        return Tensor(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    def col_indices(self) -> Tensor:
        """The column of each entry."""
        return Tensor(self._sidx[1].copy())

    def values(self) -> Tensor:
        return self._svals

    def indices(self) -> Tensor:
        raise RuntimeError("indices expected sparse coordinate tensor layout but got "
                           "SparseCsr")

    def is_coalesced(self) -> builtins.bool:
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "SparseCsr")

    def to_sparse(self, sparse_dim: builtins.int | None = None, *, layout: Any = None,
                  blocksize: Any = None, dense_dim: Any = None) -> SparseTensor:
        if layout is not None and repr(layout) == "torch.sparse_csr":
            return self
        return SparseTensor._make(self._sidx, self._svals, self._ssize, True)

    to_sparse_coo = to_sparse

    def to_sparse_csr(self, dense_dim: Any = None) -> SparseCsrTensor:
        return self

    def coalesce(self) -> SparseTensor:
        raise not_on_sparse("coalesce", self._backend)

    def t(self) -> SparseTensor:
        # (PyTorch gives a CSC tensor, a layout funcgrad has not)
        raise not_on_sparse("t", self._backend)

    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        return _as_csr(cast(SparseTensor, SparseTensor.add(self.to_sparse(), other.to_sparse()
                                                          if isinstance(other, SparseTensor)
                                                          else other, alpha=alpha)),
                       "AddBackward0")

    __add__ = add

    def pow(self, exponent: Any) -> SparseTensor:
        raise RuntimeError("unsupported tensor layout: SparseCsr")

    __pow__ = pow

    def mul(self, other: Any) -> SparseTensor:
        if isinstance(other, Tensor):
            raise not_on_sparse("mul.Tensor", self._backend)
        return SparseCsrTensor._make(self._sidx, self._svals * other, self._ssize, True,
                                     "MulBackward0")

    __mul__ = __rmul__ = mul

    def __repr__(self) -> str:
        vals = self._svals.detach()._host()
        parts = [("tensor(crow_indices=", self.crow_indices()._host()),
                 ("       col_indices=", self._sidx[1]), ("       values=", vals)]
        text = ",\n".join(f"{p}tensor({_data_str(a, len(p) + len('tensor('))})"
                          for p, a in parts)
        return _add_suffixes(text, _suffixes(self, "sparse_csr"), len("tensor("))


def _as_csr(s: SparseTensor, node: str | None = None) -> SparseCsrTensor:
    """``s`` (2-D, no dense dimension) as a CSR tensor: its entries coalesced."""
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(f"to_sparse_csr: expected a 2-D tensor without dense dimensions, "
                           f"got {s.sparse_dim()} sparse and {s.dense_dim()} dense")
    c = s.coalesce()
    return cast(SparseCsrTensor, SparseCsrTensor._make(
        c._sidx, c._svals, c._ssize, True, node or "SparseCompressedTensorBackward0"))


def to_sparse_csr(self: Tensor, dense_dim: Any = None) -> SparseCsrTensor:
    """This 2-D tensor's nonzero entries as a sparse CSR tensor.

    >>> import funcgrad.torch as torch
    >>> torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()
    tensor(crow_indices=tensor([0, 1, 2]),
           col_indices=tensor([1, 0]),
           values=tensor([2., 3.]), size=(2, 2), nnz=2, layout=torch.sparse_csr)
    """
    if isinstance(self, SparseCsrTensor):
        return self
    return _as_csr(self if isinstance(self, SparseTensor) else to_sparse(self))


def sparse_csr_tensor(crow_indices: Any, col_indices: Any, values: Any, size: Any = None, *,
                      dtype: Any = None, device: Any = None, pin_memory: bool = False,
                      requires_grad: bool = False,
                      check_invariants: Any = None) -> SparseCsrTensor:
    """A 2-D sparse CSR tensor: row ``i``'s entries are ``col_indices[crow_indices[i]:
    crow_indices[i + 1]]`` with their ``values``.

    >>> import funcgrad.torch as torch
    >>> torch.sparse_csr_tensor([0, 1, 2], [1, 0], [5.0, 6.0], (2, 2)).to_dense()
    tensor([[0., 5.],
            [6., 0.]])
    """
    crow = np.asarray(_tensor(crow_indices)._host()).astype(np.int64)
    col = np.asarray(_tensor(col_indices)._host()).astype(np.int64)
    vals = _tensor(values, dtype)
    if device is not None:
        vals = vals.to(device)
    if crow.ndim != 1 or col.ndim != 1 or vals.ndim != 1:
        raise RuntimeError("sparse_csr_tensor: funcgrad's CSR tensors are 2-D, with 1-D "
                           "crow_indices, col_indices and values")
    if col.size != vals.shape[0]:
        raise RuntimeError(f"col_indices and values must have the same number of elements, "
                           f"but got col_indices.numel() = {col.size} and values.numel() = "
                           f"{vals.shape[0]}")
    rows = np.repeat(np.arange(max(crow.size - 1, 0)), np.diff(crow))
    shape = (crow.size - 1, builtins.int(col.max()) + 1 if col.size else 0) if size is None \
        else tuple(builtins.int(n) for n in size)
    c = cast(SparseCsrTensor, SparseCsrTensor._make(np.stack([rows, col]), vals, shape, True,
                                                    "SparseCompressedTensorBackward0"))
    if requires_grad:
        c.requires_grad_(True)
    return c
