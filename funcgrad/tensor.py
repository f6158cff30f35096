"""The PyTorch-flavoured ``Tensor``: imperative autograd on funcgrad's primitives.

Every Tensor operation runs a ``funcgrad.numpy`` function; when an input
requires grad, the operation is recorded with ``funcgrad.transforms.vjp`` as a
graph node, so ``backward`` uses the primitives' own vjp rules.

>>> import funcgrad as fg
>>> x = fg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> x
tensor([[1., 2.],
        [3., 4.]], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([[2., 4.],
        [6., 8.]])
"""

from __future__ import annotations

import builtins
import operator
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.autograd import AccumulateGrad, Node, node_class, run_backward
from funcgrad.core import get_aval
from funcgrad.devices import Device, device_of, device_put
from funcgrad.errors import DTypeError
from funcgrad.grad_mode import is_grad_enabled
from funcgrad.numpy import _dispatch
from funcgrad.tensor_repr import format_tensor_data
from funcgrad.tree_util import tree_flatten, tree_unflatten
from funcgrad.wrappers import register_array_wrapper

float32, float64, float16 = dtypes.float32, dtypes.float64, dtypes.float16
int8, int16, int32, int64 = dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64
uint8, bool_ = dtypes.uint8, dtypes.bool_
float, double, half = float32, float64, float16  # noqa: A001 - PyTorch's aliases
long, int = int64, int32  # noqa: A001 - PyTorch's aliases

_DEFAULT_SHOWN = {dtypes.float32, dtypes.int64, dtypes.bool_}


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor lives, as PyTorch prints it: ``cpu`` or ``cuda:N``.

    >>> import funcgrad as fg
    >>> fg.zeros(1).device
    device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str, index: builtins.int | None = None) -> None:  # noqa: A002
        if ":" in type:
            type, idx = type.split(":", 1)  # noqa: A001
            index = builtins.int(idx)
        self.type = "cuda" if type == "gpu" else type
        self.index = index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __eq__(self, other: object) -> builtins.bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index or 0) == (
            other.type, other.index or 0)

    def __hash__(self) -> builtins.int:
        return hash((self.type, self.index or 0))


def _device_of_array(x: Any) -> device:
    d = device_of(x)
    return device("cpu") if d.platform == "cpu" else device(d.platform, d.id)


class Size(tuple):
    """A shape, as PyTorch's ``torch.Size``.

    >>> import funcgrad as fg
    >>> fg.zeros(2, 3).size()
    funcgrad.Size([2, 3])
    """

    def __repr__(self) -> str:
        return f"funcgrad.Size({list(self)})"

    def numel(self) -> builtins.int:
        return builtins.int(np.prod(self, dtype=np.int64))


def _is_tensor(x: Any) -> builtins.bool:
    return isinstance(x, Tensor)


def _inexact(dt: Any) -> builtins.bool:
    return np.dtype(dt).kind in "fc"


class Tensor:
    """An array with PyTorch's autograd semantics (leaf/non-leaf, ``.grad``, ``backward``)."""

    __slots__ = ("data", "_requires_grad", "grad", "grad_fn", "_out_index", "_vc",
                 "_hooks", "_accum", "_is_view", "__weakref__")
    __array_priority__ = 2000
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: builtins.bool = False) -> None:
        if requires_grad and not _inexact(getattr(data, "dtype", np.float32)):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.data = data
        self._requires_grad = False
        self.grad: Tensor | None = None
        self.grad_fn: Node | None = None
        self._out_index = 0
        self._vc = [0]
        self._hooks: list[Callable[[Any], Any]] = []
        self._accum: AccumulateGrad | None = None
        self._is_view = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _from_data(cls, data: Any) -> Tensor:
        t = cls.__new__(cls)
        t.data = data
        t._requires_grad = False
        t.grad = None
        t.grad_fn = None
        t._out_index = 0
        t._vc = [0]
        t._hooks = []
        t._accum = None
        t._is_view = False
        return t

    # ------------------------------------------------------------- autograd state

    @property
    def requires_grad(self) -> builtins.bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        """Set whether this leaf records operations for ``backward`` (in place)."""
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not _inexact(self.data.dtype):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def _version(self) -> builtins.int:
        """How many in-place changes this tensor's memory has seen (shared with views)."""
        return self._vc[0]

    @property
    def is_leaf(self) -> builtins.bool:
        return self.grad_fn is None

    def _accumulator(self) -> AccumulateGrad:
        if self._accum is None:
            self._accum = AccumulateGrad(self)
        return self._accum

    def retain_grad(self) -> None:
        """Keep ``.grad`` of this non-leaf tensor after ``backward``."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn.retained[self._out_index] = weakref.ref(self)

    @property
    def retains_grad(self) -> builtins.bool:
        return self.grad_fn is not None and self._out_index in self.grad_fn.retained

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; it may return a
        replacement."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is None:
            self._hooks.append(hook)
            hooks = self._hooks
        else:
            hooks = self.grad_fn.hooks.setdefault(self._out_index, [])
            hooks.append(hook)
        return _HookHandle(hooks, hook)

    def backward(self, gradient: Any = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False,
                 inputs: Sequence[Tensor] | None = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``."""
        gs = _root_grads([self], None if gradient is None else [gradient])
        retain = create_graph if retain_graph is None else retain_graph
        if inputs is not None:
            from funcgrad.autograd import grad as _grad  # noqa: PLC0415

            for t, g in zip(inputs, _grad([self], list(inputs), gs, retain, create_graph,
                                          allow_unused=True)):
                if g is not None:
                    t.grad = g if t.grad is None else t.grad + g
            return
        run_backward([self], gs, retain, create_graph)

    def detach(self) -> Tensor:
        """The same data (shared), cut from the graph."""
        t = Tensor._from_data(self.data)
        t._vc = self._vc
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph, in place (it becomes a leaf)."""
        self.grad_fn = None
        self._requires_grad = False
        return self

    # ------------------------------------------------------------ array facts

    @property
    def shape(self) -> Size:
        return Size(self.data.shape)

    def size(self, dim: builtins.int | None = None) -> Any:
        return self.shape if dim is None else self.data.shape[dim]

    def dim(self) -> builtins.int:
        return builtins.int(self.data.ndim)

    @property
    def ndim(self) -> builtins.int:
        return builtins.int(self.data.ndim)

    def numel(self) -> builtins.int:
        return builtins.int(self.data.size)

    def __len__(self) -> builtins.int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return builtins.int(self.data.shape[0])

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.data.dtype

    @property
    def device(self) -> device:
        return _device_of_array(self.data)

    @property
    def is_cuda(self) -> builtins.bool:
        return self.device.type == "cuda"

    def item(self) -> Any:
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted to "
                               "Scalar")
        return self.data.reshape(()).item()

    def tolist(self) -> Any:
        return self.data.tolist()

    def numpy(self) -> np.ndarray:
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        return self.data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.numpy(), dtype=dtype)

    def __float__(self) -> builtins.float:
        return builtins.float(self.item())

    def __int__(self) -> builtins.int:
        return builtins.int(self.item())

    def __bool__(self) -> builtins.bool:
        if self.data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __index__(self) -> builtins.int:
        return operator.index(self.item())

    def __hash__(self) -> builtins.int:
        return id(self)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return _repr(self)

    # ------------------------------------------------------------ devices & dtypes

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Copy to a device and/or dtype: ``t.to("cuda")``, ``t.to(fg.float64)``."""
        device = kwargs.get("device")
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, (str, Device, _DeviceType)):
                device = a
            else:
                dtype = a
        out = self
        if dtype is not None and np.dtype(dtype) != self.dtype:
            out = out._astype(dtypes.canonicalize(dtype))
        if device is not None and _device_of_array(out.data) != _as_device(device):
            target = _canon_device(device)
            out = apply_op("ToCopy", lambda x: device_put(x, target), out)
        return out

    def cuda(self, device: Any = None) -> Tensor:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def _astype(self, dtype: Any) -> Tensor:
        return apply_op("ToCopy", lambda x: fnp.astype(x, dtype), self, keep_float64=True)

    def type(self, dtype: Any) -> Tensor:
        return self._astype(dtypes.canonicalize(dtype))

    def float(self) -> Tensor:
        return self._astype(dtypes.float32)

    def double(self) -> Tensor:
        return self._astype(dtypes.float64)

    def half(self) -> Tensor:
        return self._astype(dtypes.float16)

    def long(self) -> Tensor:
        return self._astype(dtypes.int64)

    def int(self) -> Tensor:
        return self._astype(dtypes.int32)

    def bool(self) -> Tensor:
        return self._astype(dtypes.bool_)

    def clone(self) -> Tensor:
        return apply_op("Clone", fnp.copy, self)

    def contiguous(self) -> Tensor:
        return self

    # --------------------------------------------------------------- in place

    def _check_inplace(self, through_view: builtins.bool = False) -> None:
        if self._requires_grad and self.grad_fn is None and is_grad_enabled():
            what = "a view of a leaf Variable" if through_view else "a leaf Variable"
            raise RuntimeError(f"{what} that requires grad is being used in an in-place "
                               "operation.")

    def _inplace(self, op: str, fn: Callable[..., Any], *others: Any,
                 through_view: builtins.bool = False) -> Tensor:
        """Write ``fn(self, *others)`` into this tensor's memory, recording it if needed."""
        self._check_inplace(through_view)
        src = self
        if is_grad_enabled() and (self._requires_grad or builtins.any(
                isinstance(o, Tensor) and o._requires_grad for o in others)):
            if self._is_view:
                # PyTorch rewrites the base's graph here (CopySlices); funcgrad does not, and
                # a silently wrong gradient is worse than an error.
                raise RuntimeError(
                    f"an in-place operation ({op.lower()}_) on a view of another tensor is not "
                    "supported while recording gradients: the base tensor's graph would not "
                    "see it. Modify the base tensor itself (e.g. base[idx] = value), or use "
                    "an out-of-place operation on a .clone() of the view."
                )
            # The recorded operation keeps the old values: its backward may need them.
            src = self._snapshot()
        new = apply_op(op, fn, src, *others)
        if new.dtype != self.dtype:
            new = new._astype(self.dtype)
        buf = self.data
        if isinstance(buf, np.ndarray) and not buf.flags.writeable:
            self.data = np.array(new.data, copy=True)
        else:
            buf[...] = new.data
        self._vc[0] += 1
        if new.grad_fn is not None:
            self.grad_fn = new.grad_fn
            self._out_index = new._out_index
            self._requires_grad = True
        return self

    def _snapshot(self) -> Tensor:
        """The current values at this tensor's place in the graph (for in-place ops)."""
        data = self.data
        t = Tensor._from_data(data.copy() if hasattr(data, "copy") else data)
        t.grad_fn, t._out_index = self.grad_fn, self._out_index
        t._requires_grad = self._requires_grad
        return t

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def add_(self, other: Any, alpha: Any = 1) -> Tensor:
        return self._inplace("Add", lambda a, b: a + b * alpha if alpha != 1 else a + b, other)

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        return self._inplace("Sub", lambda a, b: a - b * alpha if alpha != 1 else a - b, other)

    def mul_(self, other: Any) -> Tensor:
        return self._inplace("Mul", lambda a, b: a * b, other)

    def div_(self, other: Any) -> Tensor:
        return self._inplace("Div", lambda a, b: a / b, other)

    def pow_(self, other: Any) -> Tensor:
        return self._inplace("Pow", lambda a, b: a ** b, other)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return self._inplace("Clamp", lambda a: fnp.clip(a, min, max))

    # A select rather than a * 0: inf and nan entries become 0 too, and the old values
    # still get their (zero) gradient, as in PyTorch.
    def zero_(self) -> Tensor:
        return self._inplace("Zero", lambda a: fnp.where(True, 0, a))

    def fill_(self, value: Any) -> Tensor:
        return self._inplace("Fill", lambda a, v: fnp.where(True, fnp.astype(v, a.dtype), a),
                             value)

    def copy_(self, src: Any) -> Tensor:
        return self._inplace("Copy", lambda a, s: fnp.broadcast_to(fnp.astype(s, a.dtype),
                                                                   a.shape), src)

    def uniform_(self, a: builtins.float = 0.0, b: builtins.float = 1.0) -> Tensor:
        return self._fill_random(_rng().uniform(a, b, self.data.shape))

    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0) -> Tensor:
        return self._fill_random(_rng().normal(mean, std, self.data.shape))

    def _fill_random(self, values: np.ndarray) -> Tensor:
        return self._inplace("Fill", lambda a, v: v, Tensor._from_data(
            _to_device(values.astype(self.dtype), self.device)))

    def __setitem__(self, idx: Any, value: Any) -> None:
        idx = _unwrap_index(idx)
        self._inplace("CopySlices", lambda a, v: fnp.index_update(a, idx, v), value,
                      through_view=True)

    # ------------------------------------------------------------- shape ops

    def view(self, *shape: Any) -> Tensor:
        return self.reshape(*shape)

    def view_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    def reshape(self, *shape: Any) -> Tensor:
        shp = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], (builtins.int,
                                                                               np.integer)) \
            else shape
        return _view_op("View", lambda x: fnp.reshape(x, shp), self)

    def flatten(self, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        nd = self.ndim
        if nd == 0:
            return self.reshape(1)
        s, e = start_dim % nd, end_dim % nd
        shp = self.shape
        new = (*shp[:s], builtins.int(np.prod(shp[s:e + 1], dtype=np.int64)), *shp[e + 1:])
        return self.reshape(new)

    def permute(self, *dims: Any) -> Tensor:
        d = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], builtins.int) \
            else dims
        return _view_op("Permute", lambda x: fnp.transpose(x, d), self)

    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return _view_op("Transpose", lambda x: fnp.swapaxes(x, dim0, dim1), self)

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        return _view_op("T", lambda x: fnp.transpose(x), self)

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        return _view_op("Transpose", lambda x: fnp.swapaxes(x, -1, -2), self)

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return self.T

    def unsqueeze(self, dim: builtins.int) -> Tensor:
        return _view_op("Unsqueeze", lambda x: fnp.expand_dims(x, dim), self)

    def squeeze(self, dim: builtins.int | None = None) -> Tensor:
        if dim is not None and self.shape[dim] != 1:
            return self
        return _view_op("Squeeze", lambda x: fnp.squeeze(x, dim), self)

    def expand(self, *sizes: Any) -> Tensor:
        sz = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], builtins.int) \
            else sizes
        lead = len(sz) - self.ndim
        target = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(sz))
        return _view_op("Expand", lambda x: fnp.broadcast_to(x, target), self)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def __getitem__(self, idx: Any) -> Tensor:
        idx = _unwrap_index(idx)
        return _view_op("Index", lambda x: fnp.getitem(x, idx), self)

    def chunk(self, chunks: builtins.int, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        n = self.shape[dim]
        step = -(-n // chunks)
        return tuple(self[(slice(None),) * (dim % self.ndim) + (slice(i, i + step),)]
                     for i in range(0, n, step))

    def split(self, split_size: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        n = self.shape[dim]
        sizes = [split_size] * (-(-n // split_size)) if isinstance(split_size, builtins.int) \
            else list(split_size)
        out, start = [], 0
        for s in sizes:
            stop = builtins.min(start + s, n)
            out.append(self[(slice(None),) * (dim % self.ndim) + (slice(start, stop),)])
            start = stop
        return tuple(out)

    # ------------------------------------------------------------- reductions

    def sum(self, dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None) -> Tensor:
        return apply_op("Sum", lambda x: fnp.sum(x, _dims(dim), dtype, keepdim), self,
                        keep_float64=dtype is not None)

    def mean(self, dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None) -> Tensor:
        return apply_op("Mean", lambda x: fnp.mean(x, _dims(dim), dtype, keepdim), self,
                        keep_float64=dtype is not None)

    def prod(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Prod", lambda x: fnp.prod(x, dim, keepdims=keepdim), self)

    def var(self, dim: Any = None, unbiased: builtins.bool = True, keepdim: builtins.bool = False,
            correction: Any = None) -> Tensor:
        ddof = (1 if unbiased else 0) if correction is None else correction
        return apply_op("Var", lambda x: fnp.var(x, _dims(dim), ddof=ddof, keepdims=keepdim),
                        self)

    def std(self, dim: Any = None, unbiased: builtins.bool = True, keepdim: builtins.bool = False,
            correction: Any = None) -> Tensor:
        ddof = (1 if unbiased else 0) if correction is None else correction
        return apply_op("Std", lambda x: fnp.std(x, _dims(dim), ddof=ddof, keepdims=keepdim),
                        self)

    def max(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        if isinstance(dim, Tensor):
            return maximum(self, dim)
        return _minmax("Max", fnp.max, fnp.argmax, self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        if isinstance(dim, Tensor):
            return minimum(self, dim)
        return _minmax("Min", fnp.min, fnp.argmin, self, dim, keepdim)

    def amax(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Amax", lambda x: fnp.max(x, _dims(dim), keepdim), self)

    def amin(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Amin", lambda x: fnp.min(x, _dims(dim), keepdim), self)

    def argmax(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Argmax", lambda x: fnp.argmax(x, dim, keepdims=keepdim), self)

    def argmin(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Argmin", lambda x: fnp.argmin(x, dim, keepdims=keepdim), self)

    def all(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("All", lambda x: fnp.all(x, dim, keepdim), self)

    def any(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Any", lambda x: fnp.any(x, dim, keepdim), self)

    def logsumexp(self, dim: Any, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Logsumexp", lambda x: fnp.logsumexp(x, _dims(dim), keepdim), self)

    def cumsum(self, dim: builtins.int) -> Tensor:
        return apply_op("Cumsum", lambda x: fnp.cumsum(x, dim), self)

    def norm(self, p: Any = 2, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        if p == 2:
            return apply_op("Norm", lambda x: fnp.sqrt(fnp.sum(x * x, _dims(dim),
                                                               keepdims=keepdim)), self)
        return apply_op("Norm", lambda x: fnp.sum(fnp.abs(x) ** p, _dims(dim),
                                                  keepdims=keepdim) ** (1.0 / p), self)

    # ------------------------------------------------------------- elementwise

    def matmul(self, other: Any) -> Tensor:
        return matmul(self, other)

    def mm(self, other: Any) -> Tensor:
        return matmul(self, other)

    def dot(self, other: Any) -> Tensor:
        return apply_op("Dot", fnp.dot, self, other)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        # PyTorch's derivative is 1 on the closed interval, bounds included.
        return apply_op("Clamp", _clamp, self, min, max)

    clip = clamp

    def pow(self, exponent: Any) -> Tensor:
        return self ** exponent

    def relu(self) -> Tensor:
        return apply_op("Relu", _relu, self)

    def sigmoid(self) -> Tensor:
        return apply_op("Sigmoid", _sigmoid, self, saves="output")

    def softmax(self, dim: builtins.int) -> Tensor:
        return apply_op("Softmax", lambda x: _softmax(x, dim), self, saves="output")

    def log_softmax(self, dim: builtins.int) -> Tensor:
        return apply_op("LogSoftmax", lambda x: x - fnp.logsumexp(x, dim, keepdims=True),
                        self)

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        return apply_op("MaskedFill", lambda x, m: fnp.where(m, value, x), self, mask)

    def where(self, condition: Any, other: Any) -> Tensor:
        return apply_op("Where", lambda x, c, o: fnp.where(c, x, o), self, condition, other)

    def abs(self) -> Tensor:
        return apply_op("Abs", fnp.abs, self)

    def __neg__(self) -> Tensor:
        return apply_op("Neg", fnp.negative, self, saves="none")

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return self.abs()

    def __invert__(self) -> Tensor:
        return apply_op("BitwiseNot", fnp.invert, self)


_HookHandleList = list


class _HookHandle:
    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)


def _relu(x: Any) -> Any:
    # PyTorch's relu has derivative 0 at 0.
    return fnp.where(fnp.greater(x, 0), x, 0)


def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    if lo is not None:
        x = fnp.where(fnp.less(x, lo), lo, x)
    if hi is not None:
        x = fnp.where(fnp.greater(x, hi), hi, x)
    return x


def _sigmoid(x: Any) -> Any:
    from funcgrad.primitives.elementwise import logistic_p  # noqa: PLC0415

    (x,) = _as_inexact(x)
    return logistic_p.bind(x)


def _softmax(x: Any, dim: builtins.int) -> Any:
    z = x - fnp.max(x, dim, keepdims=True)
    e = fnp.exp(z)
    return e / fnp.sum(e, dim, keepdims=True)


def _as_inexact(x: Any) -> list[Any]:
    from funcgrad.numpy._core import promote_inexact  # noqa: PLC0415

    return promote_inexact(x)


def _dims(dim: Any) -> Any:
    if isinstance(dim, list):
        return tuple(dim)
    return dim


def _unwrap_index(idx: Any) -> Any:
    if isinstance(idx, Tensor):
        return idx.data
    if isinstance(idx, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in idx)
    if isinstance(idx, list):
        return [i.data if isinstance(i, Tensor) else i for i in idx]
    return idx


class _MinMax(tuple):
    """``(values, indices)`` as PyTorch's ``torch.return_types.max``."""

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]


def _minmax(op: str, red: Any, arg: Any, t: Tensor, dim: Any, keepdim: builtins.bool) -> Any:
    if dim is None:
        return apply_op(op, lambda x: red(x), t)
    indices = apply_op(op, lambda x: arg(x, dim, keepdims=keepdim), t)
    # The values are read at the returned indices, so ties send the gradient there only.
    values = apply_op(op, lambda x, i: _take_at(x, i, dim, keepdim), t, indices)
    return _MinMax((values, indices))


def _take_at(x: Any, idx: Any, dim: builtins.int, keepdim: builtins.bool) -> Any:
    i = idx if keepdim else fnp.expand_dims(idx, dim)
    out = fnp.take_along_axis(x, i, dim)
    return out if keepdim else fnp.squeeze(out, dim)


# --------------------------------------------------------------------- recording

_LINEAR_OPS = {"Add", "Sub", "Neg", "View", "Permute", "Transpose", "T", "Unsqueeze", "Squeeze",
               "Expand", "Index", "Sum", "Mean", "Cat", "Stack", "Clone", "ToCopy", "Zero",
               "Fill", "Copy", "CopySlices"}


def apply_op(op: str, fn: Callable[..., Any], *args: Any, saves: str | None = None,
             keep_float64: builtins.bool = False, promote_0d: builtins.bool = False,
             **kwargs: Any) -> Any:
    """Run ``fn`` on the data of the Tensor arguments; record it when grad is needed.

    ``saves`` says which values ``backward`` needs (checked against in-place
    changes): ``"inputs"`` (the default for non-linear ops), ``"output"``,
    ``"none"``; ``"mul"`` saves each operand only when the other requires grad.
    """
    # Most calls pass Tensors and numbers positionally: no pytree work for those.
    flat_call = not kwargs and all(type(a) is Tensor or type(a) in _SCALARS for a in args)
    if flat_call:
        leaves, tree = list(args), None
    else:
        leaves, tree = tree_flatten((args, kwargs), is_leaf=_is_tensor)
    tpos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    base = list(leaves)
    any_f64 = keep_float64
    for i in tpos:
        base[i] = leaves[i].data
        any_f64 = any_f64 or leaves[i].data.dtype == np.float64
    record = is_grad_enabled() and builtins.any(leaves[i]._requires_grad for i in tpos)
    diff = [i for i in tpos if leaves[i]._requires_grad] if record else []
    casts = _zero_dim_casts([leaves[i] for i in tpos], tpos) if promote_0d else {}
    if casts:
        any_f64 = keep_float64 or builtins.any(
            leaves[i].data.dtype == np.float64 for i in tpos if i not in casts)

    def flat_fn(*vals: Any) -> Any:
        full = list(base)
        for i, v in zip(diff, vals):
            full[i] = v
        for i, dt in casts.items():
            full[i] = fnp.astype(full[i], dt)
        if tree is None:
            out = fn(*full)
        else:
            a, k = tree_unflatten(tree, full)
            out = fn(*a, **k)
        return out if any_f64 else _no_float64(out)

    if not record:
        return _wrap_outputs(flat_fn(), None, [])
    from funcgrad.transforms.vjp import vjp_flat  # noqa: PLC0415

    outs, out_tree, backward = vjp_flat(flat_fn, [base[i] for i in diff])
    policy = saves or ("none" if op in _LINEAR_OPS else "mul" if op == "Mul" else "inputs")
    saved = _saved(policy, [leaves[i] for i in tpos])
    node = node_class(op)(op, flat_fn, [leaves[i] for i in diff], backward, saved,
                          [get_aval(o) for o in outs])
    # PyTorch lists one edge per operand, (None, 0) for constants (numbers included in
    # arithmetic).
    operands = list(range(len(leaves))) if promote_0d and tree is None else tpos
    if len(diff) != len(operands):
        node.constant_inputs = tuple(k for k, i in enumerate(operands) if i not in diff)
    result = _wrap_outputs(tree_unflatten(out_tree, outs), node, saved if policy == "output"
                           else None)
    return result


_SCALARS = (builtins.int, builtins.float, builtins.bool, type(None))
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _zero_dim_casts(tensors: list[Tensor], positions: list[builtins.int]
                    ) -> dict[builtins.int, Any]:
    """PyTorch's rule: a 0-d tensor decides the dtype only when its category (bool <
    int < float < complex) is higher than every dimensioned tensor's; otherwise it
    takes theirs. Returns the casts to apply, by argument position."""
    dims = [t.data.dtype for t in tensors if t.data.ndim > 0]
    if not dims or len(dims) == len(tensors):
        return {}
    d_dtype = np.result_type(*dims)
    casts: dict[builtins.int, Any] = {}
    for t, i in zip(tensors, positions):
        if t.data.ndim > 0 or t.data.dtype == d_dtype:
            continue
        if _CATEGORY[t.data.dtype.kind] <= _CATEGORY[d_dtype.kind]:
            casts[i] = d_dtype
    return casts


def _saved(policy: str, tensors: list[Tensor]) -> list[tuple[list[builtins.int],
                                                               builtins.int, Any]]:
    def entry(t: Tensor) -> tuple[list[builtins.int], builtins.int, Any]:
        return (t._vc, t._vc[0], _describe(t))

    if policy == "inputs":
        return [entry(t) for t in tensors]
    if policy == "mul" and len(tensors) == 2:
        a, b = tensors
        return [entry(x) for x, other in ((a, b), (b, a)) if other._requires_grad]
    return []


def _describe(t: Tensor) -> Callable[[], str]:
    """The tensor's description for the in-place error, formatted only if it is raised."""
    dtype, shape, node, index = t.dtype, t.data.shape, t.grad_fn, t._out_index

    def text() -> str:
        where = f", which is output {index} of {node.name()}" if node else ""
        return f"funcgrad.{dtype} {list(shape)}{where}"

    return text


def _no_float64(out: Any) -> Any:
    """PyTorch's default dtype: float64 appears only when a float64 tensor went in."""
    dt = getattr(out, "dtype", None)
    if dt is not None and dt != np.float64 and hasattr(out, "shape"):
        return out
    def fix(x: Any) -> Any:
        dt = getattr(x, "dtype", None)
        if dt is not None and np.dtype(dt) == np.float64:
            return fnp.astype(x, np.float32)
        if dtypes.python_scalar(x) and isinstance(x, builtins.float):
            return np.asarray(x, np.float32)
        return x

    leaves, tree = tree_flatten(out)
    return tree_unflatten(tree, [fix(x) for x in leaves])


def _wrap_outputs(out: Any, node: Node | None, saved_out: list[Any] | None) -> Any:
    single = hasattr(out, "dtype") and hasattr(out, "shape")
    leaves, tree = ([out], None) if single else tree_flatten(out)
    wrapped = []
    for k, x in enumerate(leaves):
        arr = x if hasattr(x, "dtype") and hasattr(x, "shape") else np.asarray(x)
        t = Tensor._from_data(arr)
        if node is not None and _inexact(arr.dtype):
            t.grad_fn = node
            t._out_index = k
            t._requires_grad = True
            if saved_out is not None:
                node.saved.append((t._vc, t._vc[0], _describe(t)))
        wrapped.append(t)
    return wrapped[0] if tree is None else tree_unflatten(tree, wrapped)


def _view_op(op: str, fn: Callable[..., Any], t: Tensor) -> Tensor:
    """A shape operation whose result shares memory (and the version counter) with ``t``."""
    out = apply_op(op, fn, t)
    if isinstance(out.data, np.ndarray) and np.shares_memory(out.data, t.data):
        out._vc = t._vc
        out._is_view = True
    return out


def _root_grads(outs: Sequence[Tensor], grads: Any) -> list[Any]:
    if grads is None:
        grads = [None] * len(outs)
    elif isinstance(grads, Tensor) or not isinstance(grads, (list, tuple)):
        grads = [grads]
    result: list[Any] = []
    for t, g in zip(outs, grads):
        if not t._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a "
                               "grad_fn")
        if g is None:
            if t.data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            result.append(np.ones(t.data.shape, t.data.dtype))
        else:
            gd = g if isinstance(g, Tensor) else Tensor._from_data(np.asarray(g, t.dtype))
            if tuple(gd.shape) != tuple(t.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{gd.shape} and output[0] has a shape of {t.shape}.")
            result.append(gd)
    return result


def _dispatch_hook(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
                   ) -> Any:
    name = getattr(fn, "__name__", "Op")
    return apply_op(name[:1].upper() + name[1:], fn, *args, **kwargs)


_dispatch.register(Tensor, _dispatch_hook)
# jit stages a Tensor as the array it holds, and returns Tensors for Tensor outputs.
register_array_wrapper(Tensor, lambda t: t.data, lambda a: Tensor._from_data(a))


# ------------------------------------------------------------------ operators


def _binary_method(op: str, fn: Callable[[Any, Any], Any], saves: str | None = None) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return apply_op(op, fn, self, other, saves=saves, promote_0d=True)

    def rmethod(self: Tensor, other: Any) -> Tensor:
        return apply_op(op, lambda a, b: fn(b, a), self, other, saves=saves, promote_0d=True)

    return method, rmethod


for _name, _op, _fn in [
    ("add", "Add", fnp.add), ("sub", "Sub", fnp.subtract), ("mul", "Mul", fnp.multiply),
    ("truediv", "Div", fnp.divide), ("floordiv", "FloorDivide", fnp.floor_divide),
    ("mod", "Remainder", fnp.remainder), ("pow", "Pow", fnp.power),
    ("matmul", "Mm", fnp.matmul), ("and", "BitwiseAnd", fnp.bitwise_and),
    ("or", "BitwiseOr", fnp.bitwise_or), ("xor", "BitwiseXor", fnp.bitwise_xor),
]:
    _m, _r = _binary_method(_op, _fn)
    setattr(Tensor, f"__{_name}__", _m)
    setattr(Tensor, f"__r{_name}__", _r)

for _name, _fn in [("eq", fnp.equal), ("ne", fnp.not_equal), ("lt", fnp.less),
                   ("le", fnp.less_equal), ("gt", fnp.greater), ("ge", fnp.greater_equal)]:
    setattr(Tensor, f"__{_name}__", _binary_method(_name.capitalize(), _fn)[0])
    setattr(Tensor, _name, _binary_method(_name.capitalize(), _fn)[0])

for _name, _op, _fn in [("add", "Add", fnp.add), ("sub", "Sub", fnp.subtract),
                        ("mul", "Mul", fnp.multiply), ("div", "Div", fnp.divide),
                        ("maximum", "Maximum", fnp.maximum), ("minimum", "Minimum", fnp.minimum)]:
    setattr(Tensor, _name, _binary_method(_op, _fn)[0])

_UNARY = {"exp": fnp.exp, "log": fnp.log, "log1p": fnp.log1p, "expm1": fnp.expm1,
          "sin": fnp.sin, "cos": fnp.cos, "tan": fnp.tan, "tanh": fnp.tanh, "sqrt": fnp.sqrt,
          "rsqrt": lambda x: 1.0 / fnp.sqrt(x), "square": fnp.square, "sign": fnp.sign,
          "floor": fnp.floor, "ceil": fnp.ceil, "round": fnp.round, "neg": fnp.negative,
          "reciprocal": fnp.reciprocal, "asin": fnp.arcsin, "acos": fnp.arccos,
          "atan": fnp.arctan, "sinh": fnp.sinh, "cosh": fnp.cosh, "log2": fnp.log2,
          "log10": fnp.log10, "isnan": fnp.isnan, "isfinite": fnp.isfinite}
_SAVES_OUTPUT = {"exp", "tanh", "sqrt", "rsqrt", "expm1"}


def _unary_method(name: str, fn: Callable[[Any], Any]) -> Any:
    op = name[:1].upper() + name[1:]
    saves = "output" if name in _SAVES_OUTPUT else None

    def method(self: Tensor) -> Tensor:
        return apply_op(op, fn, self, saves=saves)

    method.__name__ = name
    return method


for _uname, _ufn in _UNARY.items():
    setattr(Tensor, _uname, _unary_method(_uname, _ufn))


# ----------------------------------------------------------------- repr


_DeviceType = device


def _as_device(d: Any) -> device:
    if isinstance(d, device):
        return d
    if isinstance(d, Device):
        return device(d.platform, None if d.platform == "cpu" else d.id)
    return device(str(d))


def _canon_device(d: Any) -> str:
    dev = _as_device(d)
    return "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"


def _to_device(arr: Any, d: Any) -> Any:
    return arr if _as_device(d).type == "cpu" else device_put(arr, _canon_device(d))


def _repr(t: Tensor) -> str:
    data = t.data
    arr = data.get() if hasattr(data, "get") and not isinstance(data, np.ndarray) else \
        np.asarray(data)
    extras = []
    if arr.size == 0:
        body = "[]"
        if arr.shape != (0,):
            extras.append(f"size={tuple(arr.shape)}")
    else:
        body = format_tensor_data(arr, len("tensor("))
    if t.device.type != "cpu":
        extras.append(f"device='{t.device}'")
    if arr.dtype not in _DEFAULT_SHOWN or (arr.size == 0 and arr.dtype != np.float32):
        extras.append(f"dtype=funcgrad.{arr.dtype}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


# ----------------------------------------------------------------- creation

_generator: list[np.random.Generator] = [np.random.default_rng()]


def _rng() -> np.random.Generator:
    return _generator[0]


def manual_seed(seed: builtins.int) -> None:
    """Seed the random number generator of ``randn``, ``rand``, ``randint`` and inits.

    >>> import funcgrad as fg
    >>> fg.manual_seed(0); a = fg.rand(2); fg.manual_seed(0); bool((fg.rand(2) == a).all())
    True
    """
    _generator[0] = np.random.default_rng(seed)


def _shape_args(size: tuple[Any, ...]) -> tuple[builtins.int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        return tuple(size[0])
    return tuple(size)


def _make(arr: np.ndarray, dtype: Any, device: Any, requires_grad: builtins.bool) -> Tensor:
    if dtype is not None:
        arr = arr.astype(dtypes.canonicalize(dtype))
    if device is not None and _canon_device(device) != "cpu":
        arr = device_put(arr, _canon_device(device))
    return Tensor(arr, requires_grad=requires_grad)


def tensor(data: Any, dtype: Any = None, device: Any = None,
           requires_grad: builtins.bool = False) -> Tensor:
    """A new leaf tensor from data (Python floats give float32, ints int64).

    >>> import funcgrad as fg
    >>> fg.tensor([1.5, 2.0])
    tensor([1.5000, 2.0000])
    """
    if isinstance(data, Tensor):
        data = data.detach().data
    if isinstance(data, np.ndarray) or type(data).__module__.startswith("cupy"):
        arr = data.copy()
    else:
        arr = np.array(data, dtype=dtypes.canonicalize(dtype) if dtype is not None else None)
        if arr.dtype == np.float64 and dtype is None and not isinstance(data, np.generic):
            arr = arr.astype(np.float32)
    if arr.dtype.kind not in "biufc":
        raise DTypeError(f"could not make a tensor from {type(data).__name__}")
    return _make(arr, dtype, device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like :func:`tensor`, sharing memory with a NumPy array where possible."""
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and dtype is None and device is None:
        return Tensor(data)
    return tensor(data, dtype, device)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``arr``."""
    return Tensor(arr)


def _filled(value: Any, size: tuple[Any, ...], dtype: Any, device: Any,
            requires_grad: builtins.bool) -> Tensor:
    dt = dtypes.canonicalize(dtype) if dtype is not None else (
        np.dtype(np.float32) if isinstance(value, builtins.float) else
        np.dtype(np.bool_) if isinstance(value, bool) else
        np.dtype(np.int64) if isinstance(value, builtins.int) else np.dtype(np.float32))
    return _make(np.full(_shape_args(size), value, dt), None, device, requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
          ) -> Tensor:
    """Zeros (float32 by default)."""
    return _filled(0.0, size, dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
         ) -> Tensor:
    """Ones (float32 by default)."""
    return _filled(1.0, size, dtype, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
          ) -> Tensor:
    """A tensor of the given size (zero-filled)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: builtins.bool = False) -> Tensor:
    """``size`` filled with ``fill_value``."""
    return _filled(fill_value, (size,), dtype, device, requires_grad)


def _like(t: Any, dtype: Any, device: Any) -> tuple[tuple[builtins.int, ...], Any, Any]:
    t = t if isinstance(t, Tensor) else tensor(t)
    return tuple(t.shape), dtype or t.dtype, device or (str(t.device) if t.is_cuda else None)


def zeros_like(t: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
               ) -> Tensor:
    shp, dt, dev = _like(t, dtype, device)
    return zeros(shp, dtype=dt, device=dev, requires_grad=requires_grad)


def ones_like(t: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
              ) -> Tensor:
    shp, dt, dev = _like(t, dtype, device)
    return ones(shp, dtype=dt, device=dev, requires_grad=requires_grad)


def full_like(t: Any, fill_value: Any, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False) -> Tensor:
    shp, dt, dev = _like(t, dtype, device)
    return full(shp, fill_value, dtype=dt, device=dev, requires_grad=requires_grad)


def randn_like(t: Any, dtype: Any = None, device: Any = None) -> Tensor:
    shp, dt, dev = _like(t, dtype, device)
    return randn(shp, dtype=dt, device=dev)


def rand_like(t: Any, dtype: Any = None, device: Any = None) -> Tensor:
    shp, dt, dev = _like(t, dtype, device)
    return rand(shp, dtype=dt, device=dev)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: builtins.bool = False) -> Tensor:
    """Values in ``[start, end)``; float32 if any bound is a float, else int64."""
    if end is None:
        start, end = 0, start
    is_float = builtins.any(isinstance(v, builtins.float) for v in (start, end, step))
    dt = dtype or (np.float32 if is_float else np.int64)
    return _make(np.arange(start, end, step).astype(dt), None, device, requires_grad)


def linspace(start: Any, end: Any, steps: builtins.int, dtype: Any = None, device: Any = None,
             requires_grad: builtins.bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (float32)."""
    return _make(np.linspace(start, end, steps).astype(dtype or np.float32), None, device,
                 requires_grad)


def eye(n: builtins.int, m: builtins.int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: builtins.bool = False) -> Tensor:
    """The identity matrix (float32)."""
    return _make(np.eye(n, m, dtype=dtype or np.float32), None, device, requires_grad)


def randn(*size: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
          ) -> Tensor:
    """Standard normal samples (float32)."""
    arr = _rng().standard_normal(_shape_args(size)).astype(dtype or np.float32)
    return _make(arr, None, device, requires_grad)


def rand(*size: Any, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False
         ) -> Tensor:
    """Uniform samples in [0, 1) (float32)."""
    arr = _rng().random(_shape_args(size)).astype(dtype or np.float32)
    return _make(arr, None, device, requires_grad)


def randint(low: builtins.int, high: builtins.int | None = None, size: Any = (),
            dtype: Any = None, device: Any = None) -> Tensor:
    """Random integers in ``[low, high)`` (int64)."""
    if high is None:
        low, high = 0, low
    elif isinstance(high, (tuple, list, Size)):
        # randint(high, size), as PyTorch allows.
        low, high, size = 0, low, high
    arr = _rng().integers(low, high, size=tuple(size)).astype(dtype or np.int64)
    return _make(arr, None, device, False)


# ------------------------------------------------------- free functions over Tensors


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product of tensors."""
    return apply_op("Mm", fnp.matmul, a, b)


def maximum(a: Any, b: Any) -> Tensor:
    return apply_op("Maximum", fnp.maximum, a, b)


def minimum(a: Any, b: Any) -> Tensor:
    return apply_op("Minimum", fnp.minimum, a, b)


def cat(tensors: Sequence[Any], dim: builtins.int = 0) -> Tensor:
    """Concatenate along ``dim``."""
    return apply_op("Cat", lambda *xs: fnp.concatenate(xs, dim),
                    *tensors)


def stack(tensors: Sequence[Any], dim: builtins.int = 0) -> Tensor:
    """Stack along a new axis ``dim``."""
    return apply_op("Stack", lambda *xs: fnp.stack(xs, dim),
                    *tensors)


def is_tensor(obj: Any) -> builtins.bool:
    return isinstance(obj, Tensor)


_DIM_ARG = ("softmax", "log_softmax", "unsqueeze")


def _method_function(name: str) -> Callable[..., Any]:
    def fn(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002 - PyTorch's name
        t = input if isinstance(input, Tensor) else as_tensor(input)
        return getattr(t, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    call = f"fg.{name}(fg.tensor([[0.5, -1.0]]){', 0' if name in _DIM_ARG else ''})"
    fn.__doc__ = (f"``fg.{name}(t, ...)`` is ``t.{name}(...)``, as in PyTorch.\n\n"
                  f"    >>> import funcgrad as fg\n    >>> {call}.dim() > 0\n    True\n")
    return fn


# PyTorch's free functions that funcgrad.numpy has no namesake for.
relu = _method_function("relu")
sigmoid = _method_function("sigmoid")
softmax = _method_function("softmax")
log_softmax = _method_function("log_softmax")
clamp = _method_function("clamp")
flatten = _method_function("flatten")
unsqueeze = _method_function("unsqueeze")
