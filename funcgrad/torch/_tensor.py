"""``torch.Tensor``: a mutable array with PyTorch's autograd, on funcgrad's engine.

A Tensor holds a backend buffer (a NumPy or CuPy array; a tracer inside
``torch.func`` transforms). Every operation binds the engine's primitives, through the
same ``funcgrad.numpy``/``funcgrad.nn`` functions the JAX face uses, after deciding its
result dtype by PyTorch's rules; with a tensor that requires grad among its inputs it is
recorded on PyTorch's graph (``funcgrad.torch._graph``), and ``backward`` runs the
primitives' own vjp rules on the one reverse engine.

>>> import funcgrad.torch as torch
>>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> x.grad
tensor([[2., 4.],
        [6., 8.]])
"""

from __future__ import annotations

import builtins
import math
import operator
import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.array import Array, ArrayImpl, wrap
from funcgrad.conversion import register_input_converter
from funcgrad.core import (
    EvalTrace,
    MetaBuffer,
    Missing,
    Primitive,
    Tracer,
    apply_impl,
    current_trace,
    impl_buffers,
    ndarray_aval,
    set_current_trace,
)
from funcgrad.core import _ctx as _core_ctx
from funcgrad.dtypes import is_inexact
from funcgrad.errors import AxisError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.numpy import _ufuncs as _plain  # (the functions, not jnp's ufunc objects)
from funcgrad.primitives import elementwise as _E
from funcgrad.primitives import linalg as _L
from funcgrad.primitives import structural as _S
from funcgrad.primitives.rules import scalar_as
from funcgrad.torch import _device as _dev
from funcgrad.torch import (
    _division,
    _dual,
    _functionalize,
    _grad_mode,
    _half_math,
    _saved_hooks,
)
from funcgrad.torch import _dtypes as D
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch import _repr as _repr_module
from funcgrad.torch._autocast import CUDA as CUDA_POLICY
from funcgrad.torch._autocast import TENSOR as autocast_tensor_type
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._device import (
    Size,
    array_module,
    as_device,
    device,
    device_of_buffer,
    engine_device,
    to_device,
)
from funcgrad.torch._grad_mode import is_grad_enabled, is_recording
from funcgrad.torch._graph import (
    X64,
    AccumulateGrad,
    GradFn,
    OpNode,
    PostAccumulateHook,
    RemovableHandle,
    TapeTrace,
    TapeTracer,
    buffer_of,
    name_node,
    new_node,
    op_base,
    pack_saved,
    run_backward,
    signed_node,
    tensor_class,
    value_of,
)
from funcgrad.torch._index_write import write
from funcgrad.torch._mt_stream import MTStream
from funcgrad.torch._random import TENSOR as random_tensor_type
from funcgrad.torch._random import rng
from funcgrad.torch._repr import format_tensor_data
from funcgrad.torch._sign_bounds import clamp_tensors
from funcgrad.torch._std_sort import replayed_order, topk_order
from funcgrad.transforms.custom import custom_vjp
from funcgrad.transforms.reverse import Edge
from funcgrad.transforms.signatures import signature
from funcgrad.tree_util import tree_flatten, tree_unflatten
from funcgrad.wrappers import register_array_wrapper


def _is_buffer(x: Any) -> builtins.bool:
    return type(x) is np.ndarray or type(x).__module__.startswith("cupy") or \
        type(x) is MetaBuffer


# PyTorch's legacy constructor ``torch.Tensor(...)`` on anything but a buffer: the buffer
# of its arguments. funcgrad.torch._creation sets it when the face is imported (it builds on
# ``tensor``, which this module cannot import without a cycle).
def _legacy_data_unset(args: tuple[Any, ...]) -> Any:
    raise ImportError("torch.Tensor(...) of sizes or data needs funcgrad.torch fully imported "
                      "(funcgrad.torch._creation sets its constructor); import funcgrad.torch "
                      "first")


legacy_data: Callable[[tuple[Any, ...]], Any] = _legacy_data_unset


# PyTorch's in-place operators by the node names the face records them under (the rest
# follow the name: "AddcmulBackward" is addcmul_).
_ATEN_INPLACE = {"CopyBackwards": "copy_", "CopySlices": "copy_", "IndexPut": "index_put_",
                 "Add": "add_.Tensor", "Sub": "sub_.Tensor", "Mul": "mul_.Tensor",
                 "Div": "div_.Tensor"}


# In-place operations whose tensor operand broadcasts against the written tensor.
_BROADCAST_INPLACE = frozenset({"Add", "Sub", "Mul", "Div", "CopyBackwards"})


def _aten_inplace(op: str, others: tuple[Any, ...]) -> str:
    """The ATen name PyTorch's messages give an in-place operation (``aten::fill_.Scalar``)."""
    name = op_base(op)
    if name in _ATEN_INPLACE:
        return "aten::" + _ATEN_INPLACE[name]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_") + "_"
    if snake == "fill_":
        snake += ".Tensor" if others and isinstance(others[0], Tensor) else ".Scalar"
    return "aten::" + snake


def _unbatched_write(t: Tensor, op: str, batched: Any) -> None:
    """PyTorch's refusal, inside vmap, to write a per-example value into a tensor that is not
    mapped (made outside the function, or inside it without the batch axis)."""
    size = batched.val.shape[batched.bdim] if hasattr(batched, "bdim") and \
        batched.bdim is not None else None
    if op_base(op) in ("Add", "Sub") and size is not None:
        raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the broadcast "
                           f"shape {[size, *t.shape]}")
    raise RuntimeError(
        "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
        "Tensor `other` in extra_args that has more elements than `self`. This happened due "
        "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
        "try to use out-of-place operators instead of inplace arithmetic. If said operator "
        "is being called inside the PyTorch framework, please file a bug report instead.")


# A keyword argument's default that tells "not given" from any value (None included).
_UNSET: Any = object()


class Tensor:
    """An array with PyTorch's autograd semantics (leaf/non-leaf, ``.grad``, ``backward``)."""

    __slots__ = ("_data", "_requires_grad", "_grad", "grad_fn", "_out_index", "_vc",
                 "_hooks", "_accum", "_view_flag", "_view_base", "_inference", "_born",
                 "_function_view", "__weakref__")
    __array_priority__ = 2000
    __array_ufunc__ = None

    def __init__(self, *args: Any, requires_grad: builtins.bool = False) -> None:
        if len(args) == 1 and (_is_buffer(args[0]) or isinstance(args[0], Tracer)):
            data = args[0]  # a buffer: how the face makes its tensors
        else:
            data = legacy_data(args)
        self._data = data
        self._requires_grad = False
        self._grad: Tensor | None = None
        self.grad_fn: GradFn | None = None
        self._out_index = 0
        self._vc = [0]
        # Gradient hooks, and the post-accumulate ones (marked by their type): a list once
        # one is registered (_hook_list).
        self._hooks: list[Any] | tuple[()] = ()
        self._accum: weakref.ref[AccumulateGrad] | None = None
        self._view_flag = False
        self._view_base: Tensor | None = None
        self._inference = _grad_mode._mode.inference
        self._born = _grad_mode.EPOCH[0]
        if requires_grad:
            self._set_requires_grad(True, "Only Tensors of floating point and complex dtype")

    @classmethod
    def _from_data(cls, data: Any) -> Tensor:
        t = Tensor.__new__(Tensor)
        t._data = data
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        t._out_index = 0
        t._vc = [0]
        t._hooks = ()
        t._accum = None
        t._view_flag = False
        t._view_base = None
        t._inference = _grad_mode._mode.inference
        t._born = _grad_mode.EPOCH[0]
        return t

    # ------------------------------------------------------------- autograd state

    @property
    def _base(self) -> Tensor | None:
        """The tensor this one is a view of (the root of a chain of views), or None."""
        return self._view_base if self._view_flag else None

    def _is_view(self) -> builtins.bool:
        """Whether this tensor is a view of another (``_base`` is set)."""
        return self._view_flag

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by ``backward`` (leaves, and non-leaves that retain it)."""
        if self.grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            _check_grad_assignment(self, value)
        self._grad = value

    @property
    def requires_grad(self) -> builtins.bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None:
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype")

    def requires_grad_(self, requires_grad: builtins.bool = True) -> Tensor:
        """Set whether this leaf records operations for ``backward`` (in place)."""
        return self._set_requires_grad(requires_grad, "only Tensors of floating point dtype")

    def _set_requires_grad(self, requires_grad: builtins.bool, which: str) -> Tensor:
        # PyTorch words the dtype error differently at each of its three entry points.
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(f"{which} can require gradients")
        if requires_grad and self._inference and not _grad_mode._mode.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = builtins.bool(requires_grad)
        return self

    @property
    def _version(self) -> builtins.int:
        """How many in-place changes this tensor's memory has seen (shared with views)."""
        if self._inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    @property
    def is_leaf(self) -> builtins.bool:
        return self.grad_fn is None

    def _edge(self) -> Edge:
        """Where this tensor sits in the graph: its node's output, or its accumulator."""
        if self.grad_fn is not None:
            return (self.grad_fn, self._out_index)
        if self._requires_grad:
            # Held weakly, as PyTorch does: the graph's edges keep the accumulator (and
            # through it the leaf) alive; the leaf alone does not (no reference cycle).
            acc = None if self._accum is None else self._accum()
            if acc is None:
                acc = AccumulateGrad(self)
                self._accum = weakref.ref(acc)
            return acc
        return None

    def _value_for_backward(self) -> Any:
        return value_of(self._data)

    @classmethod
    def _wrap_grad(cls, ct: Any, detach: builtins.bool = True) -> Tensor:
        if isinstance(ct, Tensor):
            return ct.detach() if detach else ct
        if type(ct) is TapeTracer:
            return Tensor._from_tracer(ct, ct._trace)  # type: ignore[arg-type]
        return Tensor._from_data(_as_buffer(ct))

    @classmethod
    def _from_tracer(cls, tr: TapeTracer, tape: TapeTrace) -> Tensor:
        t = Tensor._from_data(_as_buffer(tr.primal))
        e = tr.edge
        if type(e) is tuple:
            t.grad_fn, t._out_index = e[0], e[1]  # type: ignore[assignment]
            t._requires_grad = True
        elif isinstance(e, AccumulateGrad):
            return e.variable
        return t

    def retain_grad(self) -> None:
        """Keep ``.grad`` of this non-leaf tensor after ``backward``."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn.retain(self._out_index, self)

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
            hooks = self._hook_list()
            hooks.append(hook)
            return RemovableHandle(hooks, hook)
        hooks = self.grad_fn.hook_list(self._out_index)
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> Any:
        """Call ``hook(self)`` after this leaf's ``.grad`` is updated by a backward pass."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        entry = PostAccumulateHook(hook)
        hooks = self._hook_list()
        hooks.append(entry)
        return RemovableHandle(hooks, entry)

    def _hook_list(self) -> list[Any]:
        # Most tensors never get a hook: an empty tuple until one is registered.
        if type(self._hooks) is not list:
            self._hooks = []
        return self._hooks

    def backward(self, gradient: Any = None, retain_graph: builtins.bool | None = None,
                 create_graph: builtins.bool = False,
                 inputs: Sequence[Tensor] | None = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad``."""
        _grad_mode.check_backward_outside_transforms()
        if create_graph:
            warn_once(CREATE_GRAPH_CYCLE)
        gs = root_grads([self], None if gradient is None else [gradient])
        retain = create_graph if retain_graph is None else retain_graph
        if inputs is not None:
            ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
            res = run_backward([self], gs, retain, create_graph, inputs=ins)
            assert res is not None
            for t, g in zip(ins, res):
                if g is not None:
                    t.grad = g if t.grad is None else t.grad + g
            return
        run_backward([self], gs, retain, create_graph)

    def detach(self) -> Tensor:
        """The same data (shared, with the version counter), cut from the graph."""
        d = self._data
        # Under a torch.func transform the data is the transform's value: cut it there too.
        t = Tensor._from_data(lax.stop_gradient(d) if isinstance(d, Tracer) else d)
        t._vc = self._vc
        t._inference = self._inference
        t._born = self._born  # (the same tensor to a torch.func transform)
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph, in place (it becomes a leaf); a view refuses, as
        in PyTorch."""
        if self._view_flag:
            raise RuntimeError(_DETACH_VIEW)
        self.grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> Tensor:
        """The same memory as a tensor outside the graph; changes through it are not
        seen by autograd."""
        return Tensor._from_data(self._data)

    @data.setter
    def data(self, value: Any) -> None:
        self._data = value._data if isinstance(value, Tensor) else value

    # ------------------------------------------------------------ array facts

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: builtins.int | None = None) -> Any:
        if dim is None:
            return self.shape
        if self._data.ndim == 0 and isinstance(dim, (builtins.int, np.integer)):
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        nd = builtins.max(self._data.ndim, 1)
        if isinstance(dim, (builtins.int, np.integer)) and not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-nd}, {nd - 1}], but got {dim})")
        return builtins.int(self._data.shape[dim])

    def __contains__(self, element: Any) -> builtins.bool:
        """``element in t``: whether any element of ``t`` equals it (PyTorch's)."""
        if not isinstance(element, (Tensor, builtins.int, builtins.float, builtins.complex,
                                    np.generic)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return builtins.bool(cast(Tensor, self == element).any().item())

    def dim(self) -> builtins.int:
        return builtins.int(self._data.ndim)

    ndimension = dim

    @property
    def ndim(self) -> builtins.int:
        return builtins.int(self._data.ndim)

    def numel(self) -> builtins.int:
        return math.prod(self._data.shape)

    nelement = numel

    def __len__(self) -> builtins.int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return builtins.int(self._data.shape[0])

    @property
    def dtype(self) -> D.dtype:
        return D.from_numpy(self._data.dtype)

    def element_size(self) -> builtins.int:
        return builtins.int(self._data.dtype.itemsize)

    def is_floating_point(self) -> builtins.bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> builtins.bool:
        return self.dtype.is_complex

    @property
    def device(self) -> device:
        return device_of_buffer(self._data)

    @property
    def is_cuda(self) -> builtins.bool:
        return self.device.type == "cuda"

    def _host(self) -> np.ndarray:
        d = self._data
        if isinstance(d, Tracer):
            d = d.concrete_value()
            if d is None:
                raise RuntimeError("a value of this tensor is needed, but it is being traced "
                                   "(inside torch.func / torch.compile) and has none yet")
            d = buffer_of(d)
        if type(d) is MetaBuffer:
            raise NotImplementedError(_dev.META_COPY_OUT)
        return d if type(d) is np.ndarray else d.get()

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        _refuse_batched(self, _VMAP_ITEM)
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        if type(self._data) is MetaBuffer:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._host().reshape(()).item()

    @property
    def is_meta(self) -> builtins.bool:
        """Whether this tensor is on the ``meta`` device (a shape and a dtype, no data)."""
        return type(self._data) is MetaBuffer

    def tolist(self) -> Any:
        _refuse_batched(self, "Cannot access data pointer of Tensor that doesn't have storage")
        return self._host().tolist()

    def numpy(self, force: builtins.bool = False) -> np.ndarray:
        """The data as a NumPy array sharing this tensor's memory (CPU tensors)."""
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if self.dtype.name == "bfloat16":
            # NumPy has no such dtype: PyTorch refuses it.
            raise TypeError(f"Got unsupported ScalarType {_CPP[self.dtype.name]}")
        return self._host()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.numpy(), dtype=dtype)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use "
                               "tensor.detach()")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def __float__(self) -> builtins.float:
        # PyTorch warns only while grad mode is on (LBFGS's line search converts so, under
        # no_grad).
        if self._requires_grad and is_grad_enabled():
            warn_once(SCALAR_REQUIRES_GRAD)
        return builtins.float(self._scalar())

    def __int__(self) -> builtins.int:
        return builtins.int(self._scalar())

    def _scalar(self) -> Any:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __complex__(self) -> builtins.complex:
        if self._requires_grad and is_grad_enabled():
            warn_once(SCALAR_REQUIRES_GRAD)
        return builtins.complex(self.item())

    def __bool__(self) -> builtins.bool:
        _refuse_batched(self, "vmap: It looks like you're attempting to use a Tensor in some "
                        "data-dependent control flow. We don't support that yet, please file an "
                        "issue at https://github.com/pytorch/pytorch/issues .")
        if self.numel() == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.item())

    def __index__(self) -> builtins.int:
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return operator.index(self.item())

    def __hash__(self) -> builtins.int:
        return id(self)

    def __iter__(self) -> Any:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return _repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self._host().copy(), self._requires_grad))

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        t = Tensor._from_data(self._data.copy())
        t._requires_grad = self._requires_grad
        if self.grad is not None:
            t.grad = Tensor._from_data(self.grad._data.copy())
        memo[id(self)] = t
        return t

    # ------------------------------------------------------------ devices & dtypes

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """Copy to a device and/or dtype: ``t.to("cuda")``, ``t.to(torch.float64)``,
        ``t.to(other)``; ``memory_format`` lays the copy out (the layout kept by default),
        ``copy=True`` copies even when nothing changes."""
        dev = kwargs.get("device")
        dt = kwargs.get("dtype")
        flags = [kwargs.get("non_blocking", False), kwargs.get("copy", False)]
        n_flags = 0
        for a in args:
            if isinstance(a, Tensor):
                dev, dt = a.device, a.dtype
            elif isinstance(a, builtins.bool):
                # to(dtype, non_blocking, copy): the flags follow positionally.
                flags[builtins.min(n_flags, 1)] = a
                n_flags += 1
            elif isinstance(a, (str, device)) or type(a).__name__ == "Device":
                dev = a
            elif a is not None:
                dt = a
        fmt = kwargs.get("memory_format")
        _dev.channels_last_order(fmt, self.dim())  # PyTorch's rank check
        out = self
        if dt is not None and D.to_torch(dt) is not self.dtype:
            out = out._astype(D.to_torch(dt))
        if dev is not None and not self.device._same_place(as_device(dev)):
            target = as_device(dev)
            if type(self._data) is MetaBuffer:
                raise NotImplementedError(_dev.META_COPY_OUT)
            out = apply_op("ToCopy", lambda x: _moved(x, target), out)
        if out is self:
            if not flags[1] and (fmt is None or fmt is _dev.preserve_format or
                                 fmt is self._suggested_format()):
                return self
            out = apply_op("ToCopy", lambda x: fnp.array(x), self)
            if out._data is self._data or (type(out._data) is np.ndarray and type(
                    self._data) is np.ndarray and np.shares_memory(out._data, self._data)):
                out._data = out._data.copy()
        return out._relaid(self, fmt)

    def _suggested_format(self) -> Any:
        """The layout PyTorch reads off this tensor's strides (``to`` keeps the tensor
        itself when asked for that one)."""
        return _layout.suggested_format(tuple(self.shape), cast(Any, self).stride())

    def _relaid(self, source: Tensor, memory_format: Any) -> Tensor:
        """This new tensor (a copy of ``source``'s values) with the layout PyTorch gives a
        copy of ``source`` made with ``memory_format``: its buffer rewritten in place. A
        staged value or a device buffer keeps its own."""
        src, made_buf = source._data, self._data
        if type(made_buf) is np.ndarray and type(src) is np.ndarray:
            if (memory_format is None or memory_format is _dev.preserve_format) and \
                    src.flags.c_contiguous and made_buf.flags.c_contiguous and \
                    builtins.all(a // src.itemsize == b // made_buf.itemsize
                                 for a, b in zip(src.strides, made_buf.strides)):
                return self  # the common case: a row-major copy of a row-major tensor
            shape = tuple(source.shape)
            given, made = cast(Any, source).stride(), cast(Any, self).stride()
            strides = _layout.kept_strides(shape, given, memory_format)
            if (strides or _layout.row_major(shape)) != made:
                self._data = _layout.laid_out(self._data, strides)
        return self

    def cuda(self, device: Any = None) -> Tensor:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def _astype(self, dt: D.dtype) -> Tensor:
        if dt.np.kind in "iu" and self.dtype.is_floating_point and not self.is_cuda:
            out = apply_op("ToCopy", lambda x: _x86_float_to_int(x, dt.np), self)
        elif dt in (D.float16, D.bfloat16) and self.dtype is D.float64:
            # PyTorch converts a double to a half type through float (rounding twice).
            out = apply_op("ToCopy", lambda x: fnp.astype(fnp.astype(x, np.float32), dt.np),
                           self)
        else:
            out = apply_op("ToCopy", lambda x: cast_values(x, dt.np), self)
        return out._relaid(self, None)

    def _converted(self, dt: D.dtype, memory_format: Any = None) -> Tensor:
        # As PyTorch's ``to``: a tensor already of that dtype is returned itself, not a
        # copy (``p.float() is p`` for a float32 Parameter, and no ToCopy node).
        if memory_format is not None:
            return self.to(dt, memory_format=memory_format)
        return self if dt is self.dtype else self._astype(dt)

    def type(self, dtype: Any = None) -> Any:
        if dtype is None:
            where = "cuda." if self.is_cuda else "meta." if self.is_meta else ""
            return f"torch.{where}{_TENSOR_TYPES.get(self.dtype.name, 'Tensor')}"
        return self._converted(D.to_torch(dtype))

    def type_as(self, other: Tensor) -> Tensor:
        return self._converted(other.dtype)

    def float(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.float32, memory_format)

    def double(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.float64, memory_format)

    def half(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.float16, memory_format)

    def bfloat16(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.bfloat16, memory_format)

    def long(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.int64, memory_format)

    def int(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.int32, memory_format)

    def short(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.int16, memory_format)

    def byte(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.uint8, memory_format)

    def char(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.int8, memory_format)

    def bool(self, memory_format: Any = None) -> Tensor:
        return self._converted(D.bool, memory_format)

    def clone(self, memory_format: Any = None) -> Tensor:
        out = apply_op("Clone", lambda x: fnp.array(x), self)
        # Arrays are immutable, so the engine's copy may be the same buffer; a Tensor's
        # memory is written in place, so the clone gets its own.
        if not isinstance(out._data, Tracer) and out._data is self._data or (
                type(out._data) is np.ndarray and type(self._data) is np.ndarray
                and np.shares_memory(out._data, self._data)):
            out._data = out._data.copy()
        return out._relaid(self, memory_format)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        if memory_format is _dev.preserve_format and not self.is_contiguous():
            raise RuntimeError("preserve memory format is unsupported by the contiguous "
                               "operator")
        if memory_format in (_dev.channels_last, _dev.channels_last_3d):
            _dev.channels_last_order(memory_format, self.dim())  # PyTorch's rank check
            return self if self.is_contiguous(memory_format=memory_format) else \
                self.clone(memory_format=memory_format)
        return self if self.is_contiguous() else self.clone(memory_format=_dev.contiguous_format)

    def is_contiguous(self, memory_format: Any = None) -> builtins.bool:
        flags = getattr(self._data, "flags", None)  # tracers: staged values have no layout
        if memory_format in (_dev.channels_last, _dev.channels_last_3d):
            # PyTorch's test: the strides of the channels-last order, size-1 axes skipped
            ndim = 4 if memory_format is _dev.channels_last else 5
            if self.dim() != ndim:
                return False
            shp, st = tuple(self.shape), cast(Any, self).stride()
            expected = 1
            for d in (1, *range(ndim - 1, 1, -1), 0):
                if shp[d] != 1:
                    if st[d] != expected:
                        return False
                    expected *= shp[d]
            return True
        return True if flags is None else builtins.bool(flags.c_contiguous)

    # --------------------------------------------------------------- in place

    def _check_inplace(self, through_view: builtins.bool = False) -> None:
        if self._inference and not _grad_mode._mode.inference:
            raise RuntimeError(_INFERENCE_INPLACE)
        if self._requires_grad and self.grad_fn is None and is_grad_enabled():
            what = "a view of a leaf Variable" if through_view else "a leaf Variable"
            raise RuntimeError(f"{what} that requires grad is being used in an in-place "
                               "operation.")

    def _inplace(self, op: str, fn: Callable[..., Any], *others: Any,
                 through_view: builtins.bool = False,
                 saves_result: builtins.bool = False) -> Tensor:
        """Write ``fn(self, *others)`` into this tensor's memory, recording it if needed.

        ``saves_result``: PyTorch's node for this op saves its result where funcgrad's rule
        keeps something else (relu_ a mask, elu_ its input...), so the written tensor's
        version is checked at backward as well."""
        # PyTorch refuses an inference tensor's in-place update only when bumping its
        # version, after its kernel wrote the values: the write happens, then the error.
        inference_write = self._inference and not _grad_mode._mode.inference
        base = self._view_base if self._view_flag else None
        if inference_write and base is not None and not base._inference:
            # A view made in inference mode of a normal tensor is a normal tensor to
            # PyTorch: written freely, unless grad is recorded for its base.
            if is_grad_enabled() and base._requires_grad:
                raise RuntimeError(_INFERENCE_VIEW)
            inference_write = False
        elif not inference_write:
            self._check_inplace(through_view)
        levels = _grad_mode.FUNCTORCH_LEVELS
        if levels and levels[-1][0] == "grad":
            self._check_captured_write(op, others, levels[-1][1])
        src = self
        grad_on = is_grad_enabled()
        tracked = grad_on and (self._requires_grad or builtins.any(
            isinstance(o, Tensor) and o._requires_grad for o in others))
        if tracked:
            _check_function_view(self)
        if tracked and self._view_flag:
            _check_multi_output_view(self)
        if grad_on and self._view_flag:
            rec = _functionalize.eager_record(self)
            if rec is not None and rec.no_grad and rec.root._requires_grad:
                raise RuntimeError(_NO_GRAD_VIEW)
            base = self._view_base
            if not self._requires_grad and not self._inference and base is not None and \
                    base._requires_grad:
                # A view made under no_grad of a tensor that requires grad (no record).
                raise RuntimeError(_NO_GRAD_VIEW)
        view_of: Any = None
        if tracked:
            if self._view_flag:
                view_of = _eager_view_root(self, op)
            # The recorded operation keeps the old values: its backward may need them.
            src = self._snapshot()
        # the kernel's overlap check comes after autograd's (a view of a leaf...), as PyTorch
        if op not in _OVERLAP_OK and not OVERLAP_WRITE_OK[0] and \
                _internal_overlap(self._data):
            raise RuntimeError(_functionalize.OVERLAP)
        if op_base(op) in _BROADCAST_INPLACE:
            for o in others:
                if isinstance(o, Tensor) and o._data.shape != self._data.shape:
                    _check_broadcast(tuple(self.shape), tuple(o.shape))  # PyTorch's text
        new = apply_op(op, fn, src, *others)
        if new._data.shape != self._data.shape:
            _check_inplace_shape(tuple(self.shape), tuple(new.shape))
        if new.dtype is not self.dtype:
            shown = _shown_result_type(new.dtype, self, others)
            check_result_cast(shown, self.dtype, "ComplexHalf" if shown.is_complex and
                              self.dtype is D.float16 and not builtins.any(
                                  isinstance(o, Tensor) and o.ndim and o.dtype.is_complex
                                  for o in others) else None)
            new = new._astype(self.dtype)
        if view_of is not None:
            _copy_slices(self, new, *view_of)
            return self
        buf = self._data
        if levels and levels[-1][0] == "vmap" and not isinstance(buf, Tracer) and \
                isinstance(new._data, Tracer):
            _unbatched_write(self, op, new._data)
        if isinstance(buf, Tracer) or isinstance(new._data, Tracer):
            self._data = new._data
        elif type(buf) is np.ndarray and not buf.flags.writeable:
            self._data = np.array(new._data, copy=True)
        elif type(buf) is not MetaBuffer:  # (a meta tensor has no values to write)
            buf[...] = new._data
        if inference_write:
            raise RuntimeError(_INFERENCE_INPLACE)
        self._vc[0] += 1
        if new.grad_fn is not None:
            if not _adopt_saved_output(new.grad_fn, new._vc, self._vc) and saves_result:
                new.grad_fn.keep_version(self._vc, _describe(self, new.grad_fn))
            self.grad_fn = new.grad_fn
            self._out_index = new._out_index
            self._requires_grad = True
            if _functionalize.EAGER.has_views(self) and not isinstance(self._data, Tracer):
                _refresh_views(self)
        tracker = _functionalize.active()
        if tracker is None and isinstance(self._data, Tracer):
            # Under a transform or torch.compile: the write must reach the view's base.
            tracker = _functionalize.default()
        if tracker is not None:
            tracker.mutated(self)
        return self

    def _check_captured_write(self, op: str, others: tuple[Any, ...],
                              epoch: builtins.int) -> None:
        """PyTorch's refusal to write, inside a grad transform (grad, vjp, jvp, jacrev...),
        into a tensor the function captured (made before the transform began): the write
        would leak the transform's values into it."""
        root = self._view_base if self._view_flag and self._view_base is not None else self
        if isinstance(self._data, Tracer) or getattr(root, "_born", 0) >= epoch:
            return
        raise RuntimeError(
            "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted "
            f"to call in-place operation ({_aten_inplace(op, others)}) that would mutate a "
            "captured Tensor. This is not supported; please rewrite the function being "
            "transformed to explicitly accept the mutated Tensor(s) as inputs.")

    def _snapshot(self) -> Tensor:
        """The current values at this tensor's place in the graph (for in-place ops)."""
        d = self._data
        t = Tensor._from_data(d if isinstance(d, Tracer) else d.copy())
        t.grad_fn, t._out_index = self.grad_fn, self._out_index
        t._requires_grad = self.grad_fn is not None
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
        if not (type(alpha) is builtins.int and alpha == 1):
            alpha = check_alpha(result_dtype(self, other), alpha)
        cplx = self.dtype.is_complex
        return self._inplace("Add", lambda a, b: _arith(_plain.add, a,
                                                        _scaled(b, alpha, cplx)), other)

    def sub_(self, other: Any, alpha: Any = 1) -> Tensor:
        check_bool_subtraction(self, other)
        if not (type(alpha) is builtins.int and alpha == 1):
            alpha = check_alpha(result_dtype(self, other), alpha)
        cplx = self.dtype.is_complex
        return self._inplace("Sub", lambda a, b: _arith(_plain.subtract, a,
                                                        _scaled(b, alpha, cplx)), other)

    def mul_(self, other: Any) -> Tensor:
        if _half_by_scalar(self, other):
            return self._inplace("Mul", _in_float32(_plain.multiply), other)
        return self._inplace("Mul", lambda a, b: _arith(_plain.multiply, a, b), other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is not None:
            return self.copy_(_div(self, other, rounding_mode=rounding_mode))
        if _half_by_scalar(self, other):
            return self._inplace("Div", _in_float32(fnp.divide), other)
        return self._inplace("Div", lambda a, b: _arith(fnp.divide, a, b), other)

    def pow_(self, other: Any) -> Tensor:
        _check_bool_pow(self, other)
        _check_integer_exponent(self, other)
        check_result_cast(result_dtype(self, other), self.dtype)
        return self._inplace(_overload("Pow", other), lambda a, b: _arith(_power, a, b),
                             other)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        tensors = _tensor_bounds("clamp_", min, max)
        res = result_dtype(self, *(b for b in (min, max) if b is not None))
        if tensors:
            check_result_cast(res, self.dtype)
            return self._inplace("Clamp", clamp_tensors, min, max)
        if D.category(res) > D.category(self.dtype):
            # The Scalar overload's check names the tensor's C++ type.
            raise RuntimeError(f"result type {_CPP[res.name]} can't be cast to the desired "
                               f"output type {cpp_type_name(self.dtype)}")
        _check_int_value(min, self.dtype)
        _check_int_value(max, self.dtype)
        return self._inplace("Clamp:1", lambda a: _clamp(a, min, max))

    clip_ = clamp_

    # A select rather than a * 0: inf and nan entries become 0 too, and the old values
    # still get their (zero) gradient, as in PyTorch.
    def zero_(self) -> Tensor:
        return self._inplace("Zero", lambda a: fnp.where(True, fnp.zeros_like(a), a))

    def fill_(self, value: Any) -> Tensor:
        if isinstance(value, Tensor) and value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        _check_int_value(value, self.dtype)
        return self._inplace("Fill", lambda a, v: fnp.where(True, cast_values(v, a.dtype), a),
                             value)

    def copy_(self, src: Any, non_blocking: builtins.bool = False) -> Tensor:
        if isinstance(src, Tensor) and src.device != self.device:
            src = src.to(self.device)
        return self._inplace("CopyBackwards", lambda a, s: fnp.broadcast_to(
            cast_values(s, a.dtype), a.shape), src)

    def uniform_(self, a: builtins.float = 0.0, b: builtins.float = 1.0, *,
                 generator: Any = None) -> Tensor:
        check_random_dtype("check_uniform_bounds", self.dtype)
        if type(self._data) is MetaBuffer:
            return self._fill_random(self._data)  # nothing drawn: no generator advances
        if self.device.type == "cuda":
            return self._fill_on_device("uniform", generator, a, b)
        return self._fill_random(_draws(generator).torch_uniform(
            self._data.shape, self._data.dtype, builtins.float(a), builtins.float(b)))

    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *,
                generator: Any = None) -> Tensor:
        check_normal_std(std)
        check_random_dtype("normal_kernel_cpu", self.dtype)
        if type(self._data) is MetaBuffer:
            return self._fill_random(self._data)
        if self.device.type == "cuda":
            return self._fill_on_device("normal", generator, mean, std)
        # PyTorch's kernel: the Box-Muller fill for 16+ contiguous elements, else per
        # element with the generator's cached sample (a view of a larger buffer is strided).
        return self._fill_random(_draws(generator).torch_normal(
            self._data.shape, self._data.dtype, builtins.float(mean), builtins.float(std),
            self.is_contiguous()))

    def _fill_random(self, values: Any) -> Tensor:
        if _internal_overlap(self._data):  # unlike fill_, a random fill refuses (PyTorch)
            raise RuntimeError(_functionalize.OVERLAP)
        values = values.astype(self._data.dtype)
        # A traced draw (torch.compile's, vmap's randomness="different") has no buffer to
        # move: it is already the engine's value.
        if not isinstance(values, Tracer):
            values = to_device(values, self.device)
        return self._inplace("Fill", lambda a, v: v, Tensor._from_data(values))

    def _fill_on_device(self, kind: str, generator: Any, *args: Any, **kwargs: Any
                        ) -> Tensor:
        """A random in-place fill of a CUDA tensor, drawn on its device (by ``generator``,
        a CUDA ``torch.Generator``, or the device's generator)."""
        from funcgrad.torch import _cuda_random  # noqa: PLC0415

        index = self.device.index or 0
        gen = generator.device_state(index) if generator is not None else None
        return self._fill_random(_cuda_random.sample(kind, tuple(self.shape), self._data.dtype,
                                                     index, gen, *args, **kwargs))

    def __setitem__(self, idx: Any, value: Any) -> None:
        scalar = not isinstance(value, Tensor) or value.dim() == 0
        idx = _unwrap_index(_check_vmap_masks(_byte_masks(
            _check_index_types(_sequence_as_tuple(idx)), scalar)))
        lifted = _lift_scalar_bools(idx, self.ndim)
        shape = tuple(self.shape)
        if lifted is not None:
            axes, idx = lifted
            shape = _with_axes(shape, axes)
        _check_index_bounds(self, idx, shape)
        # PyTorch: advanced indexing of a tensor that is not a view is index_put_ (a scalar
        # bool's goes through the unsqueezed view: CopySlices).
        op = "IndexPut" if _advanced(idx) and not self._view_flag and lifted is None \
            else "CopySlices"
        if _advanced(idx) and lifted is None:
            items = idx if isinstance(idx, tuple) else (idx,)
            try:
                _check_put_dtype(self, [getattr(i, "dtype", np.int64) for i in items
                                        if _advanced(i)], value)
            except RuntimeError:
                # PyTorch checks that the value fits the indexed part first.
                target, vshape = _indexed_shape(shape, idx), tuple(value.shape)
                while vshape and vshape[0] == 1:
                    vshape = vshape[1:]
                if target is not None and (len(vshape) > len(target) or builtins.any(
                        v not in (1, t) for v, t in zip(reversed(vshape), reversed(target)))):
                    _setitem_shape_error(shape, idx, tuple(value.shape), value.dtype)
                raise
        if isinstance(value, Tensor) and value.device != self.device and \
                (not _advanced(idx) or value.dim() == 0):
            # Basic indexing assigns through copy_, which copies across devices, and a CPU
            # scalar tensor goes anywhere (PyTorch's rules).
            value = value.to(self.device)
        if not _advanced(idx):
            if _internal_overlap(self._data) and _internal_overlap(self._data[idx]):
                raise RuntimeError(_functionalize.OVERLAP)  # copy_ into the indexed view
            if self._view_flag and is_grad_enabled() and (self._requires_grad or (
                    isinstance(value, Tensor) and value._requires_grad)):
                # The write goes into the indexed view of this one (select, slice...).
                _check_multi_output_view(self, _basic_index_name(idx, self.shape), 0)
        if isinstance(value, Tensor) and value.ndim and value.shape[0] == 1:
            # PyTorch drops the value's leading axes of length 1 first.
            lead = 0
            while lead < value.ndim and value.shape[lead] == 1:
                lead += 1
            value = value.reshape(tuple(value.shape)[lead:])
        if self.dtype is not D.float16 and self.dtype is not D.bfloat16:
            # (PyTorch writes a number into a half type unchecked: 1e5 becomes inf)
            _check_int_value(value, self.dtype)
        try:
            if lifted is None:
                self._inplace(op, lambda a, v: _put(a, idx, v), value, through_view=True)
            else:
                self._inplace(op, lambda a, v: fnp.reshape(
                    _put(fnp.expand_dims(a, lifted[0]), idx, v), a.shape), value,
                    through_view=True)
        except ShapeError:
            if not isinstance(value, Tensor):
                raise
            _setitem_shape_error(shape, idx, tuple(value.shape), value.dtype)
            raise

    # ------------------------------------------------------------- shape ops

    def view(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], D.dtype):
            return self._view_dtype(shape[0])
        if len(shape) == 1 and isinstance(shape[0], type):
            raise RuntimeError("view(dtype) is not supported; use .to(dtype) (a copy)")
        buf = self._data
        if hasattr(buf, "flags") and not buf.flags.c_contiguous:
            shp = tuple(shape[0]) if len(shape) == 1 and not isinstance(
                shape[0], (builtins.int, np.integer)) else shape
            self._check_shape(shp)  # the sizes are checked before the strides
            try:
                # Setting the shape of a view fails exactly when it would need a copy.
                buf.view().shape = tuple(builtins.int(d) for d in shp)
            except (AttributeError, ValueError):
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.") from None
        return self._reshape(shape, False)

    def _view_dtype(self, dtype: D.dtype) -> Tensor:
        """``view(dtype)``: the same memory read as ``dtype`` (PyTorch's checks where the
        element sizes differ: the last axis, contiguous, is split or merged). As PyTorch's,
        the result shares the version counter and requires no grad."""
        buf = self._data
        if not _is_buffer_value(buf):
            raise RuntimeError("view(dtype) of a value being traced is not supported; use "
                               ".to(dtype) (a copy)")
        old, new = self.dtype.itemsize, dtype.itemsize
        if old != new:
            what = (f"to view {_CPP[self.dtype.name]} as {_CPP[dtype.name]} (different "
                    "element sizes)")
            if self.dim() == 0:
                raise RuntimeError(f"self.dim() cannot be 0 {what}")
            st = cast(Any, self).stride()
            if st[-1] != 1:
                raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st[-1]}")
            if new > old:
                r = new // old
                if self.shape[-1] % r:
                    raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but "
                                       f"got {self.shape[-1]}")
                offset = cast(Any, self).storage_offset()
                if offset % r:
                    raise RuntimeError(f"self.storage_offset() must be divisible by {r} "
                                       f"{what}, but got {offset}")
                for k in range(self.dim() - 1):
                    if st[k] % r:
                        raise RuntimeError(f"self.stride({k}) must be divisible by {r} {what}, "
                                           f"but got {st[k]}")
        out = Tensor._from_data(buf.view(dtype.np))
        out._vc, out._inference = self._vc, self._inference
        return out

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def reshape(self, *shape: Any) -> Tensor:
        return self._reshape(shape, True)

    def _check_shape(self, shp: tuple[Any, ...]) -> None:
        """PyTorch's infer_size checks of a new shape for this tensor's elements."""
        inferred = False
        for k, d in enumerate(shp):
            # PyTorch's infer_size, dimension by dimension.
            if d == -1:
                if inferred:
                    raise RuntimeError("only one dimension can be inferred")
                inferred = True
            elif d < 0:
                raise RuntimeError(f"invalid shape dimension {builtins.int(d)} at index {k} of "
                                   f"shape {[builtins.int(e) for e in shp]}")
        n, known = self.numel(), [builtins.int(d) for d in shp if d != -1]
        if n == 0 and -1 in shp and math.prod(known) == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shp)} "
                               "because the unspecified dimension size -1 can be any value "
                               "and is ambiguous")
        if (-1 not in shp and math.prod(known) != n) or (
                -1 in shp and (math.prod(known) == 0 or n % math.prod(known))):
            raise RuntimeError(f"shape '{list(shp)}' is invalid for input of size {n}")

    def _reshape(self, shape: tuple[Any, ...], alias: builtins.bool) -> Tensor:
        """``reshape`` (``alias``: a view of a strided tensor is PyTorch's _reshape_alias,
        ReshapeAliasBackward0) or ``view`` (ViewBackward0), the view checked already."""
        shp = tuple(shape[0]) if len(shape) == 1 and not isinstance(
            shape[0], (builtins.int, np.integer)) else shape
        self._check_shape(shp)
        buf = self._data
        if hasattr(buf, "flags") and not buf.flags.c_contiguous:
            try:
                # Setting the shape of a view fails exactly when it would need a copy.
                buf.view().shape = tuple(builtins.int(d) for d in shp)
            except (AttributeError, ValueError):
                # As PyTorch: what no view can give is a contiguous clone viewed
                # (UnsafeViewBackward0 over CloneBackward0), and not a view of ``self``.
                return apply_op("UnsafeView", lambda x: fnp.reshape(x, shp),
                                self.clone(memory_format=_dev.contiguous_format))
            if alias:
                return _view_op("ReshapeAlias", lambda x: fnp.reshape(x, shp), self)
        return _view_op("View", lambda x: fnp.reshape(x, shp), self)

    def flatten(self, start_dim: builtins.int = 0, end_dim: builtins.int = -1) -> Tensor:
        nd = self.ndim
        if nd == 0:
            return self.reshape(1)
        for d in (start_dim, end_dim):
            if not -nd <= d < nd:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-nd}, {nd - 1}], but got {d})")
        s, e = start_dim % nd, end_dim % nd
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after "
                               "end_dim")
        if s == e:
            return self  # PyTorch's flatten of one dim is the tensor itself
        shp = self.shape
        new = (*shp[:s], math.prod(shp[s:e + 1]), *shp[e + 1:])
        return self.reshape(new)

    def unflatten(self, dim: builtins.int, sizes: Sequence[builtins.int]) -> Tensor:
        nd = builtins.max(self.ndim, 1)
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {dim})")
        d = dim % nd
        shp = self.shape
        sizes = [builtins.int(s) for s in sizes]
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        # PyTorch's infer_size of the sizes against that one dimension first.
        inferred, known = False, 1
        for s in sizes:
            if s == -1:
                if inferred:
                    raise RuntimeError("unflatten got an unexpected error:\nonly one dimension "
                                       "can be inferred")
                inferred = True
            elif s < 0:
                raise RuntimeError(f"unflatten got an unexpected error:\ninvalid shape "
                                   f"dimension {s}")
            else:
                known *= s
        n = builtins.int(shp[d])
        if not (n == known or (inferred and known > 0 and n % known == 0)):
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the "
                               f"size of dim {d} ({n}) in the input tensor")
        return self.view((*shp[:d], *sizes, *shp[d + 1:]))

    def permute(self, *dims: Any) -> Tensor:
        d = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], builtins.int) \
            else dims
        if len(d) != self.ndim:
            raise RuntimeError(
                "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = "
                f"{self.ndim} is not equal to len(dims) = {len(d)}")
        n = builtins.max(self.ndim, 1)
        for k in d:
            if not -n <= k < n:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-n}, {n - 1}], but got {k})")
        if len({k % n for k in d}) != len(d):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return _view_op("Permute", lambda x: fnp.transpose(x, d), self)

    def transpose(self, dim0: builtins.int, dim1: builtins.int) -> Tensor:
        return _view_op("Transpose", lambda x: fnp.swapaxes(x, dim0, dim1), self)

    def swapaxes(self, axis0: builtins.int, axis1: builtins.int) -> Tensor:
        return self.transpose(axis0, axis1)

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        if self.ndim != 2:
            warn_once_at_caller(_T_ZERO_D if self.ndim == 0 else _T_NOT_2D)
        return _view_op("Permute", lambda x: fnp.transpose(x), self)

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        return _view_op("Transpose", lambda x: fnp.swapaxes(x, -1, -2), self)

    def t(self) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return _view_op("T" if self.ndim == 2 else "Alias", lambda x: fnp.transpose(x), self)

    def unsqueeze(self, dim: builtins.int) -> Tensor:
        return _view_op("Unsqueeze", lambda x: fnp.expand_dims(x, dim), self)

    def squeeze(self, dim: Any = None) -> Tensor:
        if dim is not None:
            one = isinstance(dim, builtins.int)
            dims = (dim,) if one else tuple(dim)
            n = builtins.max(self.ndim, 1)
            for d in dims:
                if not -n <= d < n:
                    raise IndexError(f"Dimension out of range (expected to be in range of "
                                     f"[{-n}, {n - 1}], but got {d})")
            dims = tuple(d for d in dims if self.ndim and self.shape[d] == 1)
            return _view_op("Squeeze:1" if one else "Squeeze:2",
                            lambda x: fnp.squeeze(x, dims), self)
        return _view_op("Squeeze", lambda x: fnp.squeeze(x), self)

    def expand(self, *sizes: Any) -> Tensor:
        sz = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], builtins.int) \
            else sizes
        lead = len(sz) - self.ndim
        if lead < 0:
            raise RuntimeError(f"expand({self.type()}{{{list(self.shape)}}}, "
                               f"size={list(sz)}): the number of sizes provided ({len(sz)}) "
                               "must be greater or equal to the number of dimensions in the "
                               f"tensor ({self.ndim})")
        for i, s in enumerate(sz[:lead]):
            if s == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
        target = tuple(s if s != -1 else self.shape[i - lead] for i, s in enumerate(sz))
        check_expand(tuple(self.shape), target)
        return _view_op("Expand", lambda x: fnp.broadcast_to(x, target), self)

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def repeat(self, *sizes: Any) -> Tensor:
        if not sizes:
            raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
        sz = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], builtins.int) \
            else sizes
        if len(sz) < self.dim():  # (NumPy's tile would pad them with ones)
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        return apply_op("Repeat", lambda x: fnp.tile(x, sz), self)

    def __getitem__(self, idx: Any) -> Tensor:
        data = self._data
        if type(idx) is builtins.int and type(data) is np.ndarray and data.ndim and not (
                self._requires_grad and is_grad_enabled()) and -data.shape[0] <= idx < \
                data.shape[0]:
            # ``t[i]`` with nothing to record (what a Dataset does per sample): NumPy's view,
            # sharing the version counter as every view does.
            out = Tensor._from_data(data[idx, ...])
            out._vc, out._view_flag = self._vc, True
            out._view_base = self if self._view_base is None else self._view_base
            return out
        idx = _unwrap_index(_check_vmap_masks(_byte_masks(
            _check_index_types(_sequence_as_tuple(idx)))))
        lifted = _lift_scalar_bools(idx, self.ndim)
        if lifted is not None:
            axes, idx = lifted
            _check_index_bounds(self, idx, _with_axes(tuple(self.shape), axes))
            return _view_op("Index", lambda x: _get(fnp.expand_dims(x, axes), idx), self)
        _check_index_bounds(self, idx)
        return _view_op("Index" if _advanced(idx) else _basic_index_name(idx, self.shape),
                        lambda x: _get(x, idx), self)

    def _split_dim(self, which: str, dim: Any) -> builtins.int:
        """``dim`` wrapped as PyTorch's split/chunk do (a 0-d tensor refused first)."""
        if self.ndim == 0:
            raise RuntimeError(f"{which} expects at least a 1-dimensional tensor")
        n = self.ndim
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {dim})")
        return builtins.int(dim) % n

    def chunk(self, chunks: builtins.int, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        if not isinstance(chunks, builtins.int) or isinstance(chunks, builtins.bool):
            raise TypeError(f"chunk(): argument 'chunks' (position 1) must be int, not "
                            f"{type(chunks).__name__}")
        if self.ndim == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        dim = self._split_dim("chunk", dim)
        n = self.shape[dim]
        if n == 0:
            # PyTorch splits an empty axis into `chunks` empty pieces, with split_with_sizes.
            return self._pieces("SplitWithSizes", dim, [(0, 0)] * chunks)
        step = -(-n // chunks)
        return self._pieces("Split", dim, [(i, builtins.min(i + step, n))
                                           for i in range(0, n, step)])

    def split(self, split_size: Any, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        if isinstance(split_size, Tensor) and split_size.ndim == 0:
            split_size = builtins.int(split_size.item())
        if isinstance(split_size, builtins.int):
            if self.ndim == 0:
                raise RuntimeError("split expects at least a 1-dimensional tensor")
            if split_size < 0:
                raise RuntimeError(f"split expects split_size be non-negative, but got "
                                   f"split_size={split_size}")
            dim = self._split_dim("split", dim)
            n = self.shape[dim]
            if split_size == 0 and n:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                                   f"dimension size of {n}")
            # An empty axis still gives one (empty) piece.
            sizes = [split_size] * builtins.max(-(-n // split_size) if split_size else 0, 1)
            bounds, start = [], 0
            for s in sizes:
                stop = builtins.min(start + s, n)
                bounds.append((start, stop))
                start = stop
            return self._pieces("Split", dim, bounds)
        return self.split_with_sizes(split_size, dim, _position=2)

    def split_with_sizes(self, split_sizes: Any, dim: builtins.int = 0, *,
                         _position: builtins.int = 1) -> tuple[Tensor, ...]:
        head = "split_with_sizes(): argument 'split_sizes'"
        if not isinstance(split_sizes, (list, tuple)):
            raise TypeError(f"{head} (position {_position}) must be tuple of ints, not "
                            f"{type(split_sizes).__name__}")
        split_sizes = [s.item() if isinstance(s, Tensor) and s.ndim == 0 and not
                       s.is_floating_point() else s for s in split_sizes]
        for i, s in enumerate(split_sizes):
            if isinstance(s, builtins.bool):
                raise TypeError(f"{head} (position {_position}) must be tuple of ints, but "
                                f"found element of type bool at pos {i}")
            if not isinstance(s, builtins.int):
                raise TypeError(f"{head} failed to unpack the object at pos {i + 1} with "
                                f"error \"type must be tuple of ints,but got "
                                f"{type(s).__name__}\"")
        raw_dim, dim = dim, self._split_dim("split", dim)
        n = self.shape[dim]
        sizes = [builtins.int(s) for s in split_sizes]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {raw_dim}), but got "
                               f"split_sizes={sizes}")
        bounds, start = [], 0
        for s in sizes:
            bounds.append((start, start + s))
            start += s
        return self._pieces("SplitWithSizes", dim, bounds)

    def _pieces(self, op: str, dim: builtins.int, bounds: Sequence[tuple[builtins.int, ...]]
                ) -> tuple[Tensor, ...]:
        """Views of ``[start, stop)`` (or of one index) along ``dim``, each recorded under
        PyTorch's node for the whole split (``SplitBackward0``, ``UnbindBackward0``)."""
        lead = (slice(None),) * (dim % self.ndim)
        keys = [lead + ((b[0],) if len(b) == 1 else (slice(*b),)) for b in bounds]
        pieces = tuple(_view_op(op, lambda x, key=key: fnp.getitem(x, key), self)
                       for key in keys)
        if op != "Slice":
            # Outputs of one multi-output view function: PyTorch refuses in-place writes
            # into them (or views of them) while recording.
            for i, p in enumerate(pieces):
                rec = _functionalize.eager_record(p)
                if rec is not None:
                    rec.multi_output = i
        return pieces

    def unbind(self, dim: builtins.int = 0) -> tuple[Tensor, ...]:
        return self._pieces("Unbind", dim, [(i,) for i in range(self.shape[dim])])

    def select(self, dim: builtins.int, index: builtins.int) -> Tensor:
        nd = self.ndim
        if nd == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {dim})")
        n = self.shape[dim]
        if isinstance(index, (builtins.int, np.integer)) and not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self.shape)} at dimension {dim % nd}")
        return self[(slice(None),) * (dim % nd) + (index,)]

    def narrow(self, dim: builtins.int, start: builtins.int, length: builtins.int) -> Tensor:
        n = self.shape[dim]
        start = start + n if start < 0 else start
        if start + length > n:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                               f"({n}).")
        # Always PyTorch's SliceBackward0, even over the whole axis (x[:] is an alias).
        return self._pieces("Slice", dim, [(start, start + length)])[0]

    # ------------------------------------------------------------- reductions

    @autocast_op("sum")
    def sum(self, dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None) -> Tensor:
        dt = _sum_dtype(self.dtype, dtype)
        # numpy widens small integers while summing: an explicit dtype is the result's.
        acc = None if dtype is None else dt.np
        return apply_op(_with_dim("Sum", dim), lambda x: fnp.sum(
            fnp.astype(x, dt.np), _dims(dim), dtype=acc, keepdims=keepdim), self)

    def nansum(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Nansum", lambda x: fnp.sum(fnp.where(fnp.isnan(x), 0, x), _dims(dim),
                                                    keepdims=keepdim), self)

    def mean(self, dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None) -> Tensor:
        dt = self.dtype if dtype is None else D.to_torch(dtype)
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {_CPP[dt.name]}")
        return apply_op(_with_dim("Mean", dim), lambda x: fnp.mean(
            fnp.astype(x, dt.np), _dims(dim), keepdims=keepdim), self)

    @autocast_op("prod")
    def prod(self, dim: Any = None, keepdim: builtins.bool = False, dtype: Any = None
             ) -> Tensor:
        dt = _sum_dtype(self.dtype, dtype)
        acc = None if dtype is None else dt.np
        return apply_op(_with_dim("Prod", dim), lambda x: fnp.prod(
            fnp.astype(x, dt.np), dim, dtype=acc, keepdims=keepdim), self)

    def var(self, dim: Any = None, unbiased: Any = True, keepdim: builtins.bool = False,
            correction: Any = None) -> Tensor:
        _float_only_std_var(self)
        ddof = _ddof(unbiased, correction)
        if _no_dof(self.shape, dim, ddof, "var"):
            return apply_op("Var", lambda x: _var_no_dof(x, _dims(dim), keepdim), self)
        return apply_op("Var", lambda x: fnp.var(x, _dims(dim), ddof=ddof, keepdims=keepdim),
                        self)

    def std(self, dim: Any = None, unbiased: Any = True, keepdim: builtins.bool = False,
            correction: Any = None) -> Tensor:
        _float_only_std_var(self)
        ddof = _ddof(unbiased, correction)
        if _no_dof(self.shape, dim, ddof, "std"):
            return apply_op("Std", lambda x: _var_no_dof(x, _dims(dim), keepdim), self)
        return apply_op("Std", lambda x: _std_value(x, _dims(dim), ddof, keepdim), self)

    def max(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        if isinstance(dim, Tensor):
            return maximum(self, dim)
        check_reducible("max()", self, dim, _SPECIFY_DIM)
        return _minmax("Max", fnp.max, fnp.argmax, self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: builtins.bool = False) -> Any:
        if isinstance(dim, Tensor):
            return minimum(self, dim)
        check_reducible("min()", self, dim, _SPECIFY_DIM)
        return _minmax("Min", fnp.min, fnp.argmin, self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        check_reducible("amax()", self, dim, _SPECIFY_DIM, raw_dim=True)
        return apply_op("Amax", lambda x: fnp.max(x, _all_if_empty(dim), keepdims=keepdim),
                        self)

    def amin(self, dim: Any = (), keepdim: builtins.bool = False) -> Tensor:
        check_reducible("amin()", self, dim, _SPECIFY_DIM, raw_dim=True)
        return apply_op("Amin", lambda x: fnp.min(x, _all_if_empty(dim), keepdims=keepdim),
                        self)

    def argmax(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        _check_arg_extremum("argmax", self)
        check_reducible("argmax()", self, dim, "", IndexError)
        return apply_op("Argmax", lambda x: fnp.astype(
            fnp.argmax(x, dim, keepdims=keepdim), np.int64), self)

    def argmin(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        _check_arg_extremum("argmin", self)
        check_reducible("argmin()", self, dim, "", IndexError)
        return apply_op("Argmin", lambda x: fnp.astype(
            fnp.argmin(x, dim, keepdims=keepdim), np.int64), self)

    def all(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("All", _logical_reduction(fnp.all, dim, keepdim, self.dtype), self)

    def any(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        return apply_op("Any", _logical_reduction(fnp.any, dim, keepdim, self.dtype), self)

    @autocast_op("logsumexp")
    def logsumexp(self, dim: Any, keepdim: builtins.bool = False) -> Tensor:
        x = _float_input(self)
        return apply_op("Logsumexp", lambda v: _logsumexp(v, _dims(dim), keepdim), x)

    @autocast_op("cumsum")
    def cumsum(self, dim: builtins.int, dtype: Any = None) -> Tensor:
        dt = _sum_dtype(self.dtype, dtype)
        if dt in (D.float16, D.bfloat16):
            # PyTorch's kernel accumulates halves in float32 and rounds each sum once (the
            # engine's cumsum rounds every addition, as XLA's).
            return apply_op("Cumsum", lambda x: fnp.astype(
                fnp.cumsum(fnp.astype(x, np.float32), dim), dt.np), self)
        return apply_op("Cumsum", lambda x: fnp.cumsum(fnp.astype(x, dt.np), dim), self)

    @autocast_op("norm")
    def norm(self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        # PyTorch computes Tensor.norm as linalg.vector_norm (the Frobenius norm of a matrix
        # is the 2-norm of its entries); linalg extends it with the other matrix norms.
        return vector_norm_of(self, 2.0 if p == "fro" else builtins.float(p), dim, keepdim)

    def count_nonzero(self, dim: Any = None) -> Tensor:
        return apply_op("CountNonzero", lambda x: fnp.astype(
            fnp.count_nonzero(x, _dims(dim)), np.int64), self)

    # ------------------------------------------------------------- elementwise

    def matmul(self, other: Any) -> Tensor:
        return matmul(self, other)

    @autocast_op("mm")
    def mm(self, other: Any) -> Tensor:
        if self.ndim != 2 or getattr(other, "ndim", 0) != 2:
            raise RuntimeError(f"{'self' if self.ndim != 2 else 'mat2'} must be a matrix")
        return matmul(self, other)

    @autocast_op("bmm")
    def bmm(self, other: Any) -> Tensor:
        if self.ndim != 3:
            raise RuntimeError("batch1 must be a 3D tensor")
        if getattr(other, "ndim", 0) != 3:
            raise RuntimeError("batch2 must be a 3D tensor")
        b, _, m = self.shape
        if tuple(other.shape[:2]) != (b, m):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{b}, {m}] but got: [{other.shape[0]}, {other.shape[1]}].")
        if self.dtype is not other.dtype or self.dtype is D.bool:
            return matmul(self, other)  # its dtype error
        return apply_op("Bmm", fnp.matmul, self, other)

    @autocast_op("mv")
    def mv(self, other: Any) -> Tensor:
        if self.ndim != 2 or getattr(other, "ndim", 0) != 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got 1, {self.ndim}, "
                               f"{getattr(other, 'ndim', 0)}")
        return matmul(self, other)

    @autocast_op("dot")
    def dot(self, other: Any) -> Tensor:
        if self.ndim != 1 or getattr(other, "ndim", 0) != 1:
            raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and "
                               f"{getattr(other, 'ndim', 0)}D tensors")
        same_vector_dtypes(self, other)
        msg = _matmul_shape_error(tuple(self.shape), tuple(other.shape))
        if msg is not None:
            raise RuntimeError(msg)
        if self.dtype is D.bool:
            raise NotImplementedError("\"dot\" not implemented for 'Bool'")
        return apply_op("Dot", fnp.dot, self, other)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        # PyTorch's derivative is 1 on the closed interval, bounds included; the result
        # takes the promoted type of the input and the bounds (int clamped by 0.5: float).
        return self._clamp("Clamp", min, max)

    clip = clamp

    def clamp_min(self, min: Any) -> Tensor:  # noqa: A002
        return self._clamp("ClampMin", min, None)

    def clamp_max(self, max: Any) -> Tensor:  # noqa: A002
        return self._clamp("ClampMax", None, max)

    def _clamp(self, op: str, min: Any, max: Any) -> Tensor:  # noqa: A002
        tensors = _tensor_bounds(op.lower(), min, max)
        if tensors:
            broadcast_shapes_as_torch(tuple(self.shape), *(tuple(b.shape) for b in (min, max)
                                                           if b is not None))
        dt = result_dtype(self, *(b for b in (min, max) if b is not None))
        _check_int_value(min, dt)
        _check_int_value(max, dt)
        x = self if dt is self.dtype else self._astype(dt)
        if tensors:
            # PyTorch's Tensor overloads: clamp.Tensor is ClampBackward0, clamp_min.Tensor
            # ClampMinBackward1; the bounds get gradients too.
            return apply_op(op if op == "Clamp" else op + ":1", clamp_tensors, x, min, max)
        return apply_op("Clamp:1" if op == "Clamp" else op, lambda v: _clamp(v, min, max), x)

    def pow(self, exponent: Any) -> Tensor:
        return self ** exponent

    def relu(self) -> Tensor:
        if self.dtype is D.bool:
            raise RuntimeError("Boolean inputs not supported for relu")
        data = self._data
        if type(data) is np.ndarray and data.dtype.kind == "f" and is_grad_enabled() \
                and self._requires_grad:
            # funcgrad.nn.relu's computation, one primitive recorded directly: a select
            # between zeros and x on the mask x <= 0 (the mask is what backward keeps).
            zero = np.zeros((), data.dtype)
            mask = apply_impl(_E.le_p, np, (data, zero), (ndarray_aval(data),
                                                          ndarray_aval(zero)), {})._value
            out = apply_prim("Relu", _E.select_p, (mask, np.zeros_like(data), self),
                             shown=(self,))
            if out is not None:
                return out
        from funcgrad import nn  # noqa: PLC0415

        return apply_op("Relu", nn.relu, self)

    def relu_(self) -> Tensor:
        # One node, PyTorch's ReluBackward0, written in place (not relu then copy_): its
        # saved result's version is checked at backward.
        from funcgrad import nn  # noqa: PLC0415

        if self.dtype is D.bool:
            raise RuntimeError("Boolean inputs not supported for relu")
        return self._inplace("Relu", nn.relu, saves_result=True)

    @autocast_op("softmax")
    def softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:

        if softmax_input("softmax", self, dim, dtype):
            return self.clone()
        x = _float_input(self) if dtype is None else self._astype(D.to_torch(dtype))
        # (A half input: computed in float32 and rounded once, as PyTorch's kernel.)
        return apply_op("Softmax", _half_math.softmax(dim), x)

    @autocast_op("log_softmax")
    def log_softmax(self, dim: builtins.int, dtype: Any = None) -> Tensor:

        if softmax_input("log_softmax", self, dim, dtype):
            return self.clone()
        x = _float_input(self) if dtype is None else self._astype(D.to_torch(dtype))
        return apply_op("LogSoftmax", _half_math.log_softmax(dim), x)

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        _check_mask_dtype(mask)
        if isinstance(value, Tensor) and value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, "
                               f"but got tensor with {value.ndim} dimension(s).")
        _check_int_value(value, self.dtype)
        if isinstance(mask, Tensor):
            broadcast_shapes_as_torch(tuple(mask.shape), tuple(self.shape))
        out = apply_op(_masked_fill_name(value), lambda x, m, v: fnp.where(
            m, fnp.astype(v, x.dtype), x), self, mask, value)
        # PyTorch fills a row-major clone.
        return cast(Tensor, _layout.in_format(out, _dev.contiguous_format))

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        _check_mask_dtype(mask)
        _check_int_value(value, self.dtype)
        if isinstance(mask, Tensor):
            broadcast_shapes_as_torch(tuple(self.shape), tuple(mask.shape))
        return self._inplace(_masked_fill_name(value), lambda x, m, v: fnp.where(
            m, fnp.astype(v, x.dtype), x), mask, value)

    def where(self, condition: Any, other: Any) -> Tensor:
        return where(condition, self, other)

    def __neg__(self) -> Tensor:
        if self.dtype is D.bool:
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        return apply_op("Neg", _plain.negative, self)

    neg = negative = __neg__

    def __pos__(self) -> Tensor:
        if self.dtype is D.bool:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def __abs__(self) -> Tensor:
        return cast(Tensor, cast(Any, self).abs())

    def __invert__(self) -> Tensor:
        if self.dtype.is_floating_point or self.dtype.is_complex:
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return apply_op("BitwiseNot", fnp.invert, self)

    def logical_not(self) -> Tensor:
        return apply_op("LogicalNot", fnp.logical_not, self)

    def lerp(self, end: Any, weight: Any) -> Tensor:
        return self + (end - self) * weight

    @autocast_op("addmm")
    def addmm(self, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return self * beta + matmul(mat1, mat2) * alpha

    def outer(self, other: Any) -> Tensor:
        for name, t in (("self", self), ("vec2", other)):
            if t.dim() != 1:
                raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                                   f"{t.dim()}-D")
        # PyTorch's outer is ``self.reshape(-1, 1) * vec2`` (MulBackward0 over a view).
        return cast(Tensor, self.reshape(-1, 1) * other)

    ger = outer

    def diag(self, diagonal: builtins.int = 0) -> Tensor:
        if self.dim() not in (1, 2):
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")
        # PyTorch's diag is diag_embed of a vector, diagonal_copy of a matrix.
        return apply_op("DiagEmbed" if self.dim() == 1 else "Diagonal:0_copy",
                        lambda x: fnp.diag(x, diagonal), self, saves_tensors=False)

    def tril(self, diagonal: builtins.int = 0) -> Tensor:
        return apply_op("Tril", lambda x: fnp.tril(x, diagonal), self, saves_tensors=False)

    def triu(self, diagonal: builtins.int = 0) -> Tensor:
        return apply_op("Triu", lambda x: fnp.triu(x, diagonal), self, saves_tensors=False)

    def flip(self, dims: Any) -> Tensor:
        return apply_op("Flip", lambda x: fnp.flip(x, tuple(dims) if not isinstance(
            dims, builtins.int) else dims), self)

    def roll(self, shifts: Any, dims: Any = None) -> Tensor:
        return apply_op("Roll", lambda x: fnp.roll(x, shifts, dims), self)

    def gather(self, dim: builtins.int, index: Any) -> Tensor:
        d = dim % builtins.max(self.ndim, 1)
        if isinstance(index, Tensor) and index.dtype.name not in ("int32", "int64"):
            raise RuntimeError("gather(): Expected dtype int32/int64 for index")
        # (a 0-d tensor counts as 1-d here)
        if isinstance(index, Tensor) and builtins.max(index.ndim, 1) != builtins.max(
                self.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as input "
                               "tensor")
        if isinstance(index, Tensor) and (index.ndim != self.ndim or not self.ndim):
            # A 0-d tensor and a 1-d or 0-d one: gathered as 1-d, shaped as the index.
            if not -1 <= dim <= 0:
                raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], "
                                 f"but got {dim})")
            return self.reshape(-1).gather(0, index.reshape(-1)).reshape(index.shape)
        if isinstance(index, Tensor) and index.ndim == self.ndim:
            ishape, shape = tuple(index.shape), tuple(self.shape)
            for k, (m, n) in enumerate(zip(ishape, shape, strict=True)):
                if k != d and m > n:
                    raise RuntimeError(
                        f"Size does not match at dimension {k} expected index {list(ishape)} "
                        f"to be no larger than self {list(shape)} apart from dimension {d}")
            check_range(index, 0, shape[d] if shape else 1, RuntimeError,
                        f"index {{}} is out of bounds for dimension {d} with size "
                        f"{shape[d] if shape else 1}")
            if ishape != shape:
                # PyTorch gathers from the leading part of the other dimensions.
                part = tuple(slice(None) if k == d else slice(0, m)
                             for k, m in enumerate(ishape))
                return apply_op("Gather", lambda x, i: take_along(x[part], i, d), self, index)
        return apply_op("Gather", lambda x, i: take_along(x, i, dim), self, index)

    def sort(self, dim: builtins.int = -1, descending: builtins.bool = False, *,
             stable: Any = _UNSET) -> Any:
        check_sortable("Sort", self)
        # Passing ``stable`` (even None) picks PyTorch's sort.stable overload: SortBackward1.
        name = "Sort" if stable is _UNSET else "Sort:1"
        stable = builtins.bool(stable) if stable is not _UNSET else False
        if self.ndim == 0:
            _wrap_scalar_dim(dim)
            return _returns("sort", apply_op(name, lambda x: x, self),
                            Tensor._from_data(to_device(np.zeros((), np.int64), self.device)))
        host = None if stable or not self.numel() else host_if_eager(self)
        order = None if host is None else replayed_order(host, dim % self.ndim, descending)
        if order is None:
            # Stable (equal entries keep their order): what std::sort gives where no two
            # entries are equal, and under a trace.
            idx = apply_op("Sort", lambda x: fnp.astype(
                fnp.argsort(x, dim, descending=descending), np.int64), self)
        else:
            idx = Tensor._from_data(to_device(order, self.device))
        vals = apply_op(name, lambda x, i: take_along(x, i, dim), self, idx)
        return _returns("sort", vals, idx)

    def argsort(self, dim: builtins.int = -1, descending: builtins.bool = False, *,
                stable: builtins.bool = False) -> Tensor:
        return self.sort(dim, descending, stable=stable)[1]

    def topk(self, k: builtins.int, dim: builtins.int = -1, largest: builtins.bool = True,
             sorted: builtins.bool = True) -> Any:  # noqa: A002
        check_sortable("topk", self)
        check_int_argument("topk", "k", 1, k)
        if not 0 <= k <= (self.shape[dim] if self.ndim else 1):
            raise RuntimeError("selected index k out of range")
        if self.ndim == 0:
            _wrap_scalar_dim(dim)
            return _returns("topk", apply_op("Topk", lambda x: x, self),
                            Tensor._from_data(to_device(np.zeros((), np.int64), self.device)))
        host = host_if_eager(self) if k and self.numel() else None
        if host is None:
            idx = self.sort(dim, descending=largest, stable=True)[1].narrow(dim, 0, k)
        else:
            idx = Tensor._from_data(to_device(
                topk_order(host, dim % self.ndim, k, largest, sorted), self.device))
        vals = apply_op("Topk", lambda x, i: take_along(x, i, dim), self, idx)
        return _returns("topk", vals, idx)

    def _new(self, shape: Any, value: Any, dtype: Any, device: Any,
             requires_grad: builtins.bool) -> Tensor:
        dt = self.dtype if dtype is None else D.to_torch(dtype)
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        buf = np.full(tuple(builtins.int(d) for d in shape), value, dt.np)
        buf = to_device(buf, self.device if device is None else device)
        return Tensor(buf, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False) -> Tensor:
        return self._new(size, 0, dtype, device, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False) -> Tensor:
        return self._new(size, 1, dtype, device, requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False) -> Tensor:
        return self._new((size,), fill_value, dtype, device, requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False) -> Tensor:
        return self._new(size, 0, dtype, device, requires_grad)


def host_if_eager(t: Tensor) -> np.ndarray | None:
    """The tensor's values where they are not traced (the replays decide positions from
    the values, which a trace must not bake in; a meta tensor has none)."""
    return None if isinstance(t._data, (Tracer, MetaBuffer)) else t._host()

def _wrap_scalar_dim(dim: Any) -> None:
    """PyTorch's check of ``dim`` on a 0-d tensor (which counts as 1-d)."""
    if not -1 <= dim <= 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim})")


def softmax_input(name: str, t: Tensor, dim: builtins.int, dtype: Any) -> builtins.bool:
    """PyTorch's CPU softmax kernels take floating point only (no ``dtype`` given): other
    dtypes raise, except an empty tensor, which is returned as it is (True)."""
    if dtype is not None or t.dtype.is_floating_point or t.device.type != "cpu":
        return False
    if t.numel() == 0:
        return True
    last = t.dim() == 0 or dim in (-1, t.dim() - 1)
    kernel = f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl"
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP[t.dtype.name]}\'')


def _check_arg_extremum(name: str, t: Tensor) -> None:
    """PyTorch's argmax/argmin refuse bool and complex input (even empty)."""
    if t.dtype is D.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    if t.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")


def check_int_argument(fn: str, arg: str, position: builtins.int, value: Any) -> None:
    """PyTorch's argument parser: an ``int`` parameter refuses bools and floats."""
    if isinstance(value, (builtins.bool, builtins.float)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be int, not "
                        f"{type(value).__name__}")


def check_sortable(name: str, t: Tensor) -> None:
    """PyTorch's CPU sort and topk refuse complex tensors (topk also bool), even empty."""
    if t.device.type != "cpu":
        return
    if t.dtype.is_complex:
        raise RuntimeError(f" {name} does not support complex dtypes on CPU")
    if name == "topk" and t.dtype is D.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")


def _shown_result_type(computed: D.dtype, self: Tensor, others: Sequence[Any]) -> D.dtype:
    """The result type PyTorch names when an in-place result does not fit: the promoted
    type of the operands (a Python float or complex is of the default dtype, half
    precision with a complex scalar is ComplexHalf), or the default dtype where the
    operation makes floats of integers (div_)."""
    try:
        promoted = result_dtype(self, *others)
    except Exception:  # noqa: BLE001 - operands that are no tensors or scalars
        return computed
    if D.category(promoted) != D.category(computed):
        if D.category(promoted) > D.category(computed) or not (
                computed.is_floating_point or computed.is_complex):
            return computed
        return D.default_complex() if computed.is_complex else D.get_default_dtype()
    return promoted


def check_result_cast(result: D.dtype, out: D.dtype, name: str | None = None) -> None:
    """PyTorch's error for an in-place result of a higher kind than the tensor's dtype."""
    if D.category(result) > D.category(out):
        shown = name or _CPP[result.name]
        raise RuntimeError(f"result type {shown} can't be cast to the desired output type "
                           f"{_CPP[out.name]}")


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                 "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                 "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
                 "complex128": "ComplexDoubleTensor"}
_CPP = D._CPP_NAMES


def _check_mask_dtype(mask: Any) -> None:
    if isinstance(mask, Tensor) and mask.dtype is not D.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{cpp_type_name(mask.dtype)}")


def _check_grad_assignment(t: Tensor, value: Any) -> None:
    """PyTorch's checks on ``t.grad = value``, in its order: type, self, dtype, device,
    size."""
    if not isinstance(value, Tensor):
        raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(value).__name__}")
    if value is t:
        raise RuntimeError("can't assign Variable as its own grad")
    if value.dtype is not t.dtype:
        unsigned = {"uint16": "short unsigned int", "uint32": "unsigned int",
                    "uint64": "long unsigned int"}
        raise RuntimeError(
            "attempting to assign a gradient with dtype "
            f"'{unsigned.get(value.dtype.name) or cpp_type_name(value.dtype)}' to a tensor "
            f"with grad_dtype '{_CPP[t.dtype.name]}'. The gradient must match the tensor's "
            "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
            "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with "
            "caution. Diverging the dtypes of a tensor and its gradient may break downstream "
            "systems that assume they match.")
    if value.device.type != t.device.type:
        raise RuntimeError(
            f"attempting to assign a gradient with device type '{value.device.type}' to a "
            f"tensor with device type '{t.device.type}'. Please ensure that the gradient and "
            "the tensor are on the same device")
    if tuple(value.shape) != tuple(t.shape):
        raise RuntimeError(
            f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
            f"size '{list(t.shape)}'. Please ensure that the gradient and the tensor are the "
            "same size")


def cpp_type_name(dt: D.dtype) -> str:
    """The C++ name PyTorch's kernels print for ``dt`` (``float``, ``long int``,
    ``c10::BFloat16``)."""
    name = _CPP[dt.name]
    special = {"Long": "long int", "Short": "short int", "Char": "signed char",
               "Byte": "unsigned char", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
               "ComplexFloat": "c10::complex<float>",
               "ComplexDouble": "c10::complex<double>"}
    return special.get(name, name.lower())


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information. (Triggered "
    "internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)"
)


def _rebuild(arr: np.ndarray, requires_grad: builtins.bool) -> Tensor:
    return Tensor(arr, requires_grad=requires_grad)


def _as_buffer(v: Any) -> Any:
    if type(v) is ArrayImpl:
        return v._value
    if isinstance(v, (builtins.bool, builtins.int, builtins.float, builtins.complex,
                      np.generic)):
        return np.asarray(v)
    return v


def _moved(x: Any, target: device) -> Any:
    from funcgrad.array import wrap  # noqa: PLC0415
    from funcgrad.primitives.transfer import device_put  # noqa: PLC0415

    if target.type == "meta":
        # No data moves: the value's shape and dtype (recorded, its backward raises
        # PyTorch's error: a meta gradient cannot be copied back to the source's device).
        return _to_meta(x) if isinstance(x, Tracer) else _meta_of(x)
    if isinstance(x, Tracer):
        # Recorded (or under a transformation): the differentiable transfer primitive.
        return device_put(x, engine_device(target))
    buf = to_device(buffer_of(x), target)
    return wrap(buf, ShapedArray.make(tuple(buf.shape), buf.dtype))


def _meta_of(x: Any) -> Any:
    return wrap(MetaBuffer(x.shape, x.dtype), ShapedArray.make(tuple(x.shape), x.dtype))


@custom_vjp
def _to_meta(x: Any) -> Any:
    """``x`` moved to the meta device, its backward PyTorch's copy-out error.

    >>> _to_meta(np.ones(2))._value
    MetaBuffer(shape=(2,), dtype=float64)
    """
    return _meta_of(x)


def _to_meta_bwd(res: None, g: Any) -> Any:
    raise NotImplementedError(_dev.META_COPY_OUT)


_to_meta.defvjp(lambda x: (_meta_of(x), None), _to_meta_bwd)


def _device_views(a: Any, b: Any) -> builtins.bool:
    """Whether the GPU buffer ``a`` is a view into ``b``'s memory (CuPy's views share memory
    as NumPy's do, and in-place operations through them must rewrite the base's graph)."""
    if a is b or not _on_gpu(a) or not _on_gpu(b):
        return False
    import cupy  # noqa: PLC0415

    return builtins.bool(cupy.may_share_memory(a, b))


def _on_gpu(buf: Any) -> builtins.bool:
    return type(buf).__module__.startswith("cupy")


# In-place operations PyTorch allows on a tensor whose elements share memory (an expanded
# one): the fills, the index/mask fills and index_put_ (deprecated there), and __setitem__,
# which checks the indexed part itself.
_OVERLAP_OK = frozenset({"Zero", "Fill", "MaskedFill", "MaskedFill:1", "IndexFill",
                         "IndexFill:1", "IndexPut", "CopySlices"})
# Set while index_fill_/index_put_ (computed out of place, then copied in) write.
OVERLAP_WRITE_OK = [False]


def _internal_overlap(buf: Any) -> builtins.bool:
    """Whether several elements of ``buf`` are one memory location (a zero stride over an
    axis longer than 1, as ``expand`` makes): PyTorch's ``has_internal_overlap``."""
    strides = getattr(buf, "strides", None)
    return type(buf) is np.ndarray and buf.size > 1 and strides is not None and builtins.any(
        st == 0 and n > 1 for n, st in zip(buf.shape, strides))


_FUNCTION_VIEW = (
    "Output {} of {} is a view and is being modified inplace. This view was created inside a "
    "custom Function (or because an input was returned as-is) and the autograd logic to "
    "handle view+inplace would override the custom backward associated with the custom "
    "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this "
    "by cloning the output of the custom Function.")


def _is_buffer_value(d: Any) -> builtins.bool:
    """Whether ``d`` is a concrete array with memory (not a value being traced)."""
    return not isinstance(d, Tracer) and hasattr(d, "strides")


def _check_function_view(t: Tensor) -> None:
    """PyTorch refuses an in-place change (with autograd recording it) of an output of a
    custom Function that aliases one of its inputs (returned as-is, or a view made in
    ``forward``; marked ``_function_view`` by ``Function.apply``), or of a view of one."""
    index = getattr(t, "_function_view", None)
    if index is None:
        base = t._view_base if t._view_flag else None
        if base is None or getattr(base, "_function_view", None) is None:
            return
        index = 0
    name = t.grad_fn.name() if t.grad_fn is not None else "Function"
    raise RuntimeError(_FUNCTION_VIEW.format(index, name.rsplit("Backward", 1)[0]))


_MULTI_OUTPUT_VIEW = (
    "Output {} of {} is a view and is being modified inplace. This view is the output of a "
    "function that returns multiple views. Such functions do not allow the output views to "
    "be modified inplace. You should replace the inplace operation by an out-of-place one.")


def _check_multi_output_view(view: Tensor, name: str | None = None,
                             index: builtins.int | None = None) -> None:
    """PyTorch refuses an in-place operation (with autograd recording it) on an output of
    split, chunk or unbind, or on a view of one (``name`` and ``index``: the node and output
    number of the view written, when it is a new view of ``view``)."""
    own = rec = _functionalize.eager_record(view)
    while rec is not None:
        if rec.multi_output is not None:
            if name is None:
                name = view.grad_fn.name() if view.grad_fn is not None else rec.op
            if index is None:
                index = rec.multi_output if rec is own else view._out_index
            raise RuntimeError(_MULTI_OUTPUT_VIEW.format(index, name.split("Backward")[0]))
        rec = rec.parent


def _eager_view_root(view: Tensor, op: str) -> tuple[Tensor, np.ndarray]:
    """The root tensor an eager view aliases and where the view's elements sit in it, for
    an in-place operation on the view while recording; PyTorch's errors where it refuses."""
    rec = _functionalize.eager_record(view)
    pos = rec.positions() if rec is not None else None
    if rec is None or pos is None:
        # Views are remembered only when made with grad mode on (PyTorch's text).
        raise RuntimeError(_NO_GRAD_VIEW)
    root: Tensor = rec.root
    if root._requires_grad and root.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    flat = pos.reshape(-1)
    if np.unique(flat).size != flat.size:
        raise RuntimeError(_functionalize.OVERLAP)
    return root, pos


_INFERENCE_VIEW = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given "
    "that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the inference_mode "
    "block (if you don't want the inplace to be tracked) or both outside (if you want the "
    "inplace to be tracked).")
_DETACH_VIEW = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.")
_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked).")


def _copy_slices(view: Tensor, new: Tensor, root: Tensor, pos: np.ndarray) -> None:
    """An in-place operation on an eager view while recording, as PyTorch rewrites it: the
    root's new value is its old one with the view's elements replaced by ``new`` (a node
    named CopySlices), written into the root's memory (which the view shares), and the view
    becomes a view of that new value."""
    flat = pos.reshape(-1)

    def copy_slices(r: Any, v: Any) -> Any:
        return fnp.reshape(fnp.index_update(fnp.ravel(r), flat,
                                            fnp.astype(fnp.ravel(v), r.dtype)), r.shape)

    updated = apply_op("CopySlices", copy_slices, root._snapshot(), new)
    buf = root._data
    if (type(buf) is np.ndarray and buf.flags.writeable) or _on_gpu(buf):
        buf[...] = updated._data  # the view shares this memory
    else:
        root._data = updated._data
    root._vc[0] += 1
    if view._vc is not root._vc:
        view._vc[0] += 1
    root.grad_fn, root._out_index = updated.grad_fn, updated._out_index
    root._requires_grad = updated._requires_grad
    _refresh_views(root)


def _refresh_views(root: Tensor) -> None:
    """After ``root`` was changed in place while recording, its live eager views read the
    new value through the graph too (PyTorch regenerates a view's grad_fn when its base's
    version moved): each becomes a recorded view of the new ``root``."""
    for v, rec in _functionalize.EAGER.live_views(root):
        pos = rec.positions()
        if pos is None:
            continue
        flat, shape = pos.reshape(-1), pos.shape
        again = apply_op("AsStrided",
                         lambda r, f=flat, s=shape: fnp.reshape(fnp.take(fnp.ravel(r), f), s),
                         root)
        v.grad_fn, v._out_index = again.grad_fn, again._out_index
        v._requires_grad = again._requires_grad
        d = v._data
        if type(d) is np.ndarray and type(root._data) is np.ndarray and \
                not np.shares_memory(d, root._data):
            v._data = again._data  # a view in a buffer of its own (a recorded diagonal)


def _check_inplace_shape(own: tuple[builtins.int, ...], result: tuple[builtins.int, ...]
                         ) -> None:
    """PyTorch's error when an in-place result is larger than the tensor it goes into."""
    try:
        wide = tuple(np.broadcast_shapes(own, result))
    except ValueError:
        wide = result
    if wide != own:
        raise RuntimeError(f"output with shape {list(own)} doesn't match the broadcast shape "
                           f"{list(wide)}")


def check_expand(shape: tuple[builtins.int, ...], target: tuple[builtins.int, ...]) -> None:
    """PyTorch's error when ``shape`` cannot be expanded to ``target`` (the last axis that
    does not fit is named, as PyTorch's loop from the last axis does)."""
    lead = len(target) - len(shape)
    for i in range(len(target) - 1, lead - 1, -1):
        n = shape[i - lead]
        if n != 1 and n != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({n}) at non-singleton dimension {i}.  Target sizes: {list(target)}.  "
                f"Tensor sizes: {list(shape)}")


def _ddof(unbiased: Any, correction: Any) -> Any:
    if correction is not None:
        return correction
    if isinstance(unbiased, builtins.bool):
        return 1 if unbiased else 0
    return 1


def _no_dof(shape: Sequence[builtins.int], dim: Any, ddof: Any, name: str) -> builtins.bool:
    """Whether var/std reduce no entries or have ``n - correction <= 0`` degrees of freedom
    (PyTorch's NaN, or infinity; it warns in the second case)."""
    axes = _dims(dim)
    if axes is None:
        n = math.prod(shape)
    else:
        nd = builtins.max(len(shape), 1)
        for a in axes if isinstance(axes, tuple) else (axes,):
            if not -nd <= a < nd:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-nd}, {nd - 1}], but got {a})")
        if isinstance(axes, tuple):
            n = math.prod(shape[a] for a in axes) if shape else 1
        else:
            n = shape[axes] if shape else 1
    if n - ddof > 0 and n:
        return False
    if n - ddof <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return True


def _var_no_dof(x: Any, axes: Any, keepdims: builtins.bool) -> Any:
    """var/std with no degrees of freedom: a sum of squares over zero, so infinity where
    the entries differ and NaN where they agree (or none are reduced)."""
    v = (fnp.var(x, axes, keepdims=keepdims) if x.size
         else fnp.real(fnp.sum(x, axes, keepdims=keepdims)))
    return fnp.where(v > 0, fnp.full_like(v, math.inf), fnp.full_like(v, math.nan))


def _std_value(x: Any, axes: Any, ddof: Any, keepdims: builtins.bool) -> Any:
    """The standard deviation with PyTorch's derivative: 0 (not NaN) where all values are
    equal, as PyTorch's std_backward masks the zero deviations."""
    v = fnp.var(x, axes, ddof=ddof, keepdims=keepdims)
    zero = v == 0
    return fnp.where(zero, fnp.zeros_like(v), fnp.sqrt(fnp.where(zero, fnp.ones_like(v), v)))


def _sum_dtype(dt: D.dtype, dtype: Any) -> D.dtype:
    if dtype is not None:
        return D.to_torch(dtype)
    if D.category(dt) <= 1:
        return D.int64
    return dt


def _float_input(t: Tensor) -> Tensor:
    """Integer and boolean tensors enter floating point functions in the default dtype."""
    if t.dtype.is_floating_point or t.dtype.is_complex:
        return t
    return t._astype(D.get_default_dtype())


def _all_if_empty(dim: Any) -> Any:
    # amax/amin: ``dim=()`` (the default) reduces over every axis; 0 is an axis.
    return _dims(dim)


def _basic_index_name(idx: Any, shape: Sequence[builtins.int]) -> str:
    """PyTorch's node for basic indexing: its last effective step (select, slice,
    unsqueeze). A lone slice is always a slice; inside a tuple, a slice that covers its
    whole axis is no step at all (PyTorch skips it: ``AliasBackward0`` if nothing else)."""
    if not isinstance(idx, tuple):
        return {type(None): "Unsqueeze", type(Ellipsis): "Alias"}.get(
            type(idx), "Slice" if isinstance(idx, slice) else "Select")
    consumed = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis)
    name, dim = "Alias", 0
    for i in idx:
        if i is None:
            name = "Unsqueeze"
        elif i is Ellipsis:
            dim += len(shape) - consumed
        elif isinstance(i, slice):
            size = shape[dim] if dim < len(shape) else 0
            if i.indices(size) != (0, size, 1):
                name = "Slice"
            dim += 1
        else:
            name = "Select"
            dim += 1
    return name


def vector_norm_of(x: Tensor, p: builtins.float, dim: Any, keepdim: builtins.bool) -> Tensor:
    """``linalg.vector_norm`` (and ``Tensor.norm``): one node, PyTorch's name."""
    axes = _dims(dim)
    return cast(Tensor, apply_op("LinalgVectorNorm",
                                 lambda v: _vector_norm(v, p, axes, keepdim), x))


def _vector_norm(v: Any, p: builtins.float, axes: Any, keepdim: builtins.bool) -> Any:
    if v.dtype in (np.float16, fnp.bfloat16):
        # PyTorch accumulates a half norm in float32 (300**2 overflows float16) and rounds
        # only the result.
        return fnp.astype(_vector_norm(fnp.astype(v, np.float32), p, axes, keepdim), v.dtype)
    a = _abs_value(v)  # PyTorch's derivative sgn(v): 0 at 0
    if p == math.inf:
        return fnp.max(a, axis=axes, keepdims=keepdim)
    if p == -math.inf:
        return fnp.min(a, axis=axes, keepdims=keepdim)
    if p == 0:
        # The count is recorded with a zero derivative (PyTorch gives none): the sum of no
        # entries ties it to ``v``.
        return fnp.sum((a != 0).astype(a.dtype), axis=axes, keepdims=keepdim) + \
            fnp.real(fnp.sum(fnp.reshape(v, (-1,))[:0]))
    if p == 1:
        return fnp.sum(a, axis=axes, keepdims=keepdim)
    s = fnp.sum(a * a if p == 2 else _pow_nonzero(a, p), axis=axes, keepdims=keepdim)
    # PyTorch's gradient of a norm at zero is zero: the root is taken of a safe value.
    zero = s == 0
    safe = fnp.where(zero, 1.0, s)
    root = fnp.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return fnp.where(zero, 0.0, root)



def _pow_nonzero(a: Any, p: builtins.float) -> Any:
    """``a ** p`` of magnitudes; for p < 1 its derivative is 0 (not inf or NaN) where a is
    0, as PyTorch's norm and distance kernels mask it."""
    if p >= 1:
        return a ** p
    nz = a != 0  # NaN stays NaN
    return fnp.where(nz, fnp.where(nz, a, 1) ** p, math.inf if p < 0 else 0)


def minkowski(diff: Any, p: builtins.float) -> Any:
    """The ``p``-norm of ``diff`` along its last axis with the derivative of PyTorch's
    cdist/pdist kernels: 0 where the distance (or, for p < 1, an entry) is 0, and for p=inf
    the whole gradient to each entry that ties for the maximum."""
    a = _abs_value(diff)
    if p == 0:
        # PyTorch's count min(ceil(|d|), 1) (NaN stays NaN), with a zero derivative: the
        # sum of no entries ties it to ``diff``.
        return fnp.sum(fnp.minimum(fnp.ceil(lax.stop_gradient(a)), 1), -1) + \
            fnp.sum(diff[..., :0], -1)
    if p == 1 or not diff.shape[-1]:
        return fnp.sum(a, -1)
    if p == math.inf:
        # PyTorch's running max(m, |d|) from 0 skips NaN entries.
        top = lax.stop_gradient(fnp.max(fnp.where(fnp.isnan(a), 0, a), -1, keepdims=True))
        tied = fnp.where((a == top) & fnp.isfinite(a), a, 0)
        # the maximum's value, and the derivative of each tied entry (a zero-valued term)
        return top[..., 0] + fnp.sum(tied - lax.stop_gradient(tied), -1)
    total = fnp.sum(a * a if p == 2 else _pow_nonzero(a, p), -1)
    nz = total != 0
    safe = fnp.where(nz, total, 1)
    return fnp.where(nz, fnp.sqrt(safe) if p == 2 else safe ** (1.0 / p), 0)


def _with_dim(op: str, dim: Any) -> str:
    """PyTorch's node of a reduction over given dims is the op's second overload."""
    return op if dim is None else op + ":1"


def _float_only_std_var(t: Tensor) -> None:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise RuntimeError("std and var only support floating point and complex dtypes")


def _dims(dim: Any) -> Any:
    """A reduction's ``dim`` as numpy's axis: an empty list or tuple reduces over every
    dimension, as in PyTorch (``x.sum(dim=[])`` is the total)."""
    if isinstance(dim, (list, tuple)):
        for k, d in enumerate(dim):
            if d in dim[:k]:
                # (PyTorch's dim_list_to_bitset; a dimension named twice by opposite signs
                # reaches the engine's own error)
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return tuple(dim) or None
    return dim


def check_alpha(dt: D.dtype, alpha: Any) -> Any:
    """PyTorch's alpha_check of add's and sub's ``alpha`` for the result dtype ``dt``;
    returns alpha as that dtype's arithmetic takes it (a bool for a bool result)."""
    a = alpha.item() if isinstance(alpha, Tensor) else alpha
    if isinstance(a, (builtins.bool, np.bool_)) and dt is not D.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (dt.is_floating_point or dt.is_complex) and not isinstance(
            a, (builtins.int, np.integer, np.bool_)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if not dt.is_complex and isinstance(a, (builtins.complex, np.complexfloating)):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    return builtins.bool(a) if dt is D.bool else alpha


def _scaled(b: Any, alpha: Any, cplx: builtins.bool = False) -> Any:
    """``alpha * b`` as PyTorch's add and sub take it: for a complex result the complex
    product, even by alpha 1 (so an infinite part of ``b`` makes the other part NaN)."""
    if cplx:
        return b * builtins.complex(alpha)
    return b if isinstance(alpha, builtins.int) and alpha == 1 else b * alpha


def _masked_fill_name(value: Any) -> str:
    # masked_fill.Tensor (a 0-d tensor value) is PyTorch's second overload.
    return "MaskedFill:1" if isinstance(value, Tensor) else "MaskedFill"


def _tensor_bounds(name: str, lo: Any, hi: Any) -> builtins.bool:
    """Whether clamp's bounds take PyTorch's Tensor overload (a number with a Tensor is
    neither overload: PyTorch's TypeError)."""
    if lo is None and hi is None and name in ("clamp", "clamp_"):
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    tensors = [isinstance(b, Tensor) for b in (lo, hi) if b is not None]
    if builtins.any(tensors) and not builtins.all(tensors):
        raise TypeError(f"{name}() received an invalid combination of arguments: min and max "
                        "must both be Tensors or both be numbers")
    return builtins.any(tensors)


def _clamp(x: Any, lo: Any, hi: Any) -> Any:
    # A NaN bound makes every entry NaN, as PyTorch's NaN-propagating min and max do; a NaN
    # entry stays NaN, with no gradient (PyTorch's mask, min <= x <= max, is false there).
    x = fnp.where(fnp.isnan(x), lax.stop_gradient(x), x)
    if lo is not None:
        x = fnp.where(fnp.less(x, lo) | fnp.isnan(lo), fnp.astype(lo, x.dtype), x)
    if hi is not None:
        x = fnp.where(fnp.greater(x, hi) | fnp.isnan(hi), fnp.astype(hi, x.dtype), x)
    return x


_T_NOT_2D = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
    "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
    "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
    "dimensions of a tensor. (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)")
_T_ZERO_D = (
    "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. "
    "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)")
_SEQUENCE_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
    "error or a different result (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/python_variable_indexing.cpp:349.)")


def _sequence_as_tuple(idx: Any) -> Any:
    """A short list holding a tensor, a sequence, a slice, ``...`` or None is one index
    per dimension (NumPy's old heuristic, which PyTorch keeps with a warning):
    ``x[[i, j]]`` is ``x[i, j]``."""
    if type(idx) is not list or len(idx) >= 32:
        return idx
    for i in idx:
        if isinstance(i, (Tensor, slice, Sequence, np.ndarray)) or i is None or \
                i is Ellipsis:
            warnings.warn(_SEQUENCE_INDEX, UserWarning, stacklevel=_caller_level() + 1)
            return tuple(idx)
    return idx


_INDEX_DTYPES = frozenset({"int64", "int32", "uint8", "bool"})
_VMAP_MASK = ("vmap: We do not support batching operators that can support dynamic shape. "
              "Attempting to batch over indexing with a boolean mask.")


def batched_in_vmap(t: Any) -> builtins.bool:
    """Whether ``t`` holds a value batched by a torch.func vmap (no concrete value), where
    an operation whose result's shape depends on the values cannot be batched."""
    from funcgrad.transforms.vmap import BatchTrace  # noqa: PLC0415

    d = t._data if isinstance(t, Tensor) else None
    if not isinstance(d, Tracer) or d.concrete_value() is not None:
        return False
    trace: Any = current_trace()
    while trace is not None:
        if isinstance(trace, BatchTrace):
            return True
        trace = trace.parent
    return False


def _check_vmap_masks(idx: Any) -> Any:
    """PyTorch's vmap error for a boolean-mask index batched by vmap; returns ``idx``."""
    for i in idx if isinstance(idx, (tuple, list)) else (idx,):
        if isinstance(i, Tensor) and i.dtype.name == "bool" and batched_in_vmap(i):
            raise RuntimeError(_VMAP_MASK)
    return idx


def _check_index_types(idx: Any) -> Any:
    """PyTorch's IndexErrors for a float (or other) tensor or a Python float as an index;
    returns ``idx``."""
    for i in idx if isinstance(idx, (tuple, list)) else (idx,):
        if isinstance(i, Tensor):
            if i.dtype.name not in _INDEX_DTYPES:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
        elif isinstance(i, builtins.float) and not isinstance(idx, list):
            # (a list of numbers is one integer tensor index to PyTorch)
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(i).__name__})")
        elif isinstance(i, slice) and isinstance(i.step, (builtins.int, np.integer)):
            if i.step == 0:
                raise ValueError("slice step cannot be zero")
            if i.step < 0:  # (PyTorch's views have no negative strides)
                raise ValueError("step must be greater than zero")
    return idx


_BYTE_INDEX = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
               "instead. (Triggered internally at "
               "/__w/pytorch/pytorch/aten/src/ATen/native/IndexingUtils.h:37.)")


def _byte_masks(idx: Any, scalar_write: builtins.bool = False) -> Any:
    """``idx`` with its uint8 tensors read as boolean masks, PyTorch's deprecated reading
    (with its warning); writing a number through one is PyTorch's masked_fill_ error."""
    many = isinstance(idx, tuple)
    items = idx if many else (idx,)
    if not builtins.any(isinstance(i, Tensor) and i.dtype is D.uint8 for i in items):
        return idx
    if scalar_write:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")
    out = []
    for i in items:
        if isinstance(i, Tensor) and i.dtype is D.uint8:
            warnings.warn(_BYTE_INDEX, UserWarning, stacklevel=3)
            i = i.bool()
        out.append(i)
    return tuple(out) if many else out[0]


def _unwrap_index(idx: Any, top: builtins.bool = True) -> Any:
    if isinstance(idx, Tensor):
        data = idx._data
        if top and type(data) is np.ndarray and data.ndim == 0 and data.dtype.kind in "iu":
            # PyTorch reads a 0-d integer tensor (not inside a list) as an integer: a
            # select (SelectBackward0, a view), not advanced indexing.
            return builtins.int(data)
        return idx._value_for_backward() if not isinstance(data, Tracer) else data
    if isinstance(idx, tuple):
        return tuple(_unwrap_index(i, top) for i in idx)
    if isinstance(idx, list) and builtins.any(type(i) is builtins.float for i in idx) and \
            builtins.all(type(i) in (builtins.int, builtins.float, builtins.bool) for i in idx):
        # PyTorch's indexing_tensor_from_data: a list of numbers that holds a float is a
        # double tensor, converted to long (truncated).
        return np.asarray(idx, np.float64).astype(np.int64)
    if isinstance(idx, list):
        return [_unwrap_index(i, False) for i in idx]
    return idx


def check_range(index: Any, lo: builtins.int, hi: builtins.int, error: type[Exception],
                message: str) -> None:
    """PyTorch's error for an index outside ``[lo, hi)`` (``message`` formats the first
    one). Indices on the host only: a GPU check would wait for the device."""
    data = index._data if isinstance(index, Tensor) else index
    if type(data) is not np.ndarray or data.dtype.kind not in "iu" or not data.size:
        return
    bad = data[(data < lo) | (data >= hi)]
    if bad.size:
        raise error(message.format(builtins.int(bad.flat[0])))


def _int_like(i: Any) -> builtins.bool:
    if isinstance(i, builtins.int):
        return not isinstance(i, builtins.bool)
    return getattr(i, "ndim", None) == 0 and np.dtype(i.dtype).kind in "iu"


def _ints_first(idx: Any) -> tuple[Any, Any] | None:
    """PyTorch applies integer indices before advanced ones (an integer is not an advanced
    index there, as it is in NumPy): ``a[0, :, [0, 3]]`` keeps the list's dimension in place.
    Returns the basic index with the integers and the rest applied after it, when both kinds
    are present (else None: one NumPy index means the same thing)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not builtins.any(_int_like(i) for i in items) or not builtins.any(
            not _int_like(i) and not isinstance(i, (slice, type(None), type(Ellipsis)))
            for i in items):
        return None
    first: list[Any] = []
    second: list[Any] = []
    for i in items:
        if _int_like(i):
            first.append(i)
        elif i is Ellipsis:
            first.append(i)
            second.append(i)
        elif isinstance(i, (slice, type(None))):
            first.append(i)
            second.append(slice(None))
        else:
            mask = np.asarray(i) if isinstance(i, list) else i
            first.extend([slice(None)] * (mask.ndim if np.dtype(mask.dtype).kind == "b" else 1))
            second.append(i)
    return tuple(first), tuple(second)


def _get(x: Any, idx: Any) -> Any:
    split = _ints_first(idx)
    if split is None:
        return fnp.getitem(x, idx)
    return fnp.getitem(fnp.getitem(x, split[0]), split[1])


def _put(x: Any, idx: Any, v: Any) -> Any:
    v = cast_values(v, x.dtype)
    return write(x, v, lambda z, v: _update(z, idx, v, fnp.index_update),
                 lambda z, v: _update(z, idx, v, fnp.index_add))


_COMPLEX_TO_REAL = ("Casting complex values to real discards the imaginary part (Triggered "
                    "internally at /__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)")


def cast_values(v: Any, dt: Any) -> Any:
    """``v`` in the NumPy dtype ``dt`` as PyTorch's copy kernel writes it: a complex tensor
    into a real dtype keeps its real part, with PyTorch's warning (once); a Python number
    (already checked to fit) converts silently."""
    if isinstance(v, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        if isinstance(v, builtins.complex) and np.dtype(dt).kind != "c":
            v = builtins.bool(v) if np.dtype(dt).kind == "b" else v.real
        with np.errstate(over="ignore"):  # (a float beyond a half type's range is inf)
            return fnp.astype(v, dt)
    if np.dtype(fnp.result_type(v)) == np.dtype(dt):
        return v
    if np.dtype(fnp.result_type(v)).kind == "c" and np.dtype(dt).kind != "c":
        warn_once_at_caller(_COMPLEX_TO_REAL)
        v = fnp.real(v)
    return fnp.astype(v, dt)


def _update(x: Any, idx: Any, v: Any, how: Callable[[Any, Any, Any], Any]) -> Any:
    split = _ints_first(idx)
    if split is None:
        return how(x, idx, v)
    return fnp.index_update(x, split[0], how(fnp.getitem(x, split[0]), split[1], v))


def _advanced(idx: Any) -> builtins.bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return builtins.any(not isinstance(i, (builtins.int, slice, type(None), type(Ellipsis)))
                        for i in items)


def _check_put_dtype(t: Tensor, index_dtypes: Sequence[Any], value: Any) -> None:
    """PyTorch's ``index_put_`` (``t[indices] = value`` with tensor indices) refuses a source
    of another dtype, except where it hands the write to ``masked_fill_``: one boolean mask
    (``index_dtypes``: the index arrays' dtypes) and a one-element value."""
    if not isinstance(value, Tensor) or value.dtype is t.dtype:
        return
    if len(index_dtypes) == 1 and np.dtype(index_dtypes[0]) == np.bool_ and value.numel() == 1:
        return
    raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                       f"{D.cpp_name(t.dtype)} for the destination and "
                       f"{D.cpp_name(value.dtype)} for the source.")


def _is_scalar_bool(i: Any) -> builtins.bool:
    if type(i) is builtins.bool or isinstance(i, np.bool_):
        return True
    return (type(i) is ArrayImpl or isinstance(i, np.ndarray)) and i.ndim == 0 and \
        i.dtype == np.bool_


def _lift_scalar_bools(idx: Any, ndim: builtins.int
                       ) -> tuple[tuple[builtins.int, ...], Any] | None:
    """PyTorch reads a scalar bool index (``True``, a 0-d bool tensor) as a new axis of
    length 1 indexed by ``[0]`` (True) or ``[]`` (False): an advanced index that consumes
    no dimension. Returns the new axes' positions and the index of the tensor with those
    axes, or None when the index has no scalar bool (a traced one is left alone).

    >>> _lift_scalar_bools((slice(None), True), 2)
    ((1,), (slice(None, None, None), array([0])))
    """
    items = idx if isinstance(idx, tuple) else (idx,)
    if not builtins.any(_is_scalar_bool(i) for i in items):
        return None

    def consumed(i: Any) -> builtins.int:
        if i is None or i is Ellipsis or _is_scalar_bool(i):
            return 0
        if isinstance(i, (np.ndarray, ArrayImpl)) and i.dtype == np.bool_:
            return builtins.int(i.ndim)
        return 1

    span = ndim - builtins.sum(consumed(i) for i in items)
    axes: list[builtins.int] = []
    out: list[Any] = []
    pos = 0
    for i in items:
        if _is_scalar_bool(i):
            axes.append(pos)
            out.append(np.zeros(1 if builtins.bool(i) else 0, np.int64))
            pos += 1
            continue
        out.append(i)
        pos += span if i is Ellipsis else consumed(i)
    return tuple(axes), tuple(out)


def _with_axes(shape: tuple[builtins.int, ...], axes: tuple[builtins.int, ...]
               ) -> tuple[builtins.int, ...]:
    """``shape`` with axes of length 1 inserted at ``axes`` (positions in the result)."""
    out = list(shape)
    for a in axes:
        out.insert(a, 1)
    return tuple(out)


def _check_index_bounds(t: Tensor, idx: Any,
                        shape: tuple[builtins.int, ...] | None = None) -> None:
    """PyTorch raises IndexError for an integer index out of range (JAX would clamp);
    ``shape``: the shape indexed, when not ``t``'s."""
    items = idx if isinstance(idx, tuple) else (idx,)
    dim = 0
    if shape is None:
        shape = tuple(t.shape)
    n_ell = builtins.sum(1 for i in items if i is Ellipsis)
    consumed = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    for i in items:
        if i is Ellipsis:
            dim += len(shape) - consumed + n_ell - 1
            continue
        if i is None:
            continue
        if dim >= len(shape):
            raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
        if isinstance(i, builtins.int) and not isinstance(i, builtins.bool):
            n = shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
        elif type(i) is ArrayImpl and type(i._value) is MetaBuffer:
            # No values to check: a meta index is taken as in range; a meta mask's
            # selection count is unknown (PyTorch's nonzero has no meta kernel).
            if i.dtype.kind == "b":
                raise NotImplementedError(_META_NONZERO)
        elif type(i) is ArrayImpl or isinstance(i, (np.ndarray, list)):
            arr = np.asarray(i)
            if arr.dtype.kind in "iu" and arr.size:
                n = shape[dim]
                bad = arr[(arr < -n) | (arr >= n)]
                if bad.size:
                    raise IndexError(f"index {builtins.int(bad.flat[0])} is out of bounds for "
                                     f"dimension {dim} with size {n}")
            elif arr.dtype.kind == "b":
                _check_mask(arr.shape, tuple(shape), dim)
                dim += arr.ndim - 1
        dim += 1


_META_NONZERO = (
    "The register_meta function for torch.nonzero() raises unimplemented by default, as a "
    "correct data-independent implementation does not exist. This implementation returns a "
    "fake value, assuming all elements of the tensor are non-zero. To enable this "
    "registration, please set 'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero'"
    " to True.")


def _check_mask(mask: tuple[builtins.int, ...], shape: tuple[builtins.int, ...],
                dim: builtins.int) -> None:
    """A boolean mask must match the dimensions it indexes (PyTorch's IndexError)."""
    for k, m in enumerate(mask):
        if dim + k >= len(shape) or m != shape[dim + k]:
            raise IndexError(f"The shape of the mask {list(mask)} at index {k} does not match "
                             f"the shape of the indexed tensor {list(shape)} at index {dim + k}")


class _ValuesIndices(tuple):
    """``(values, indices)``, as PyTorch's ``torch.return_types.<name>`` (the subclass)."""

    @property
    def values(self) -> Tensor:
        return cast(Tensor, self[0])

    @property
    def indices(self) -> Tensor:
        return cast(Tensor, self[1])

    def __repr__(self) -> str:
        return (f"torch.return_types.{type(self).__name__}(\nvalues={self[0]!r},\n"
                f"indices={self[1]!r})")


_RETURN_TYPES: dict[str, type] = {}


def _returns(name: str, values: Tensor, indices: Tensor) -> Any:
    cls = _RETURN_TYPES.get(name)
    if cls is None:
        from funcgrad.torch._return_types import as_pytree  # noqa: PLC0415

        cls = _RETURN_TYPES[name] = as_pytree(type(name, (_ValuesIndices,), {
            "__slots__": (), "__module__": "torch.return_types"}))
    return cls((values, indices))


_SPECIFY_DIM = " Specify the reduction dim with the 'dim' argument."


def check_reducible(name: str, t: Tensor, dim: Any, hint: str = "",
                    whole_error: type[Exception] = RuntimeError,
                    raw_dim: builtins.bool = False) -> None:
    """PyTorch's errors for a reduction with no identity (max, argmin, kthvalue...) over
    an empty axis, or over all of an empty tensor (``dim`` None or ``()``).

    >>> check_reducible("max()", Tensor(np.zeros((2, 0))), 1)
    Traceback (most recent call last):
    IndexError: max(): Expected reduction dim 1 to have non-zero size.
    """
    shape = tuple(t.shape)
    if 0 not in shape:
        return
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        raise whole_error(f"{name}: Expected reduction dim to be specified for "
                          f"input.numel() == 0.{hint}")
    for d in dim if isinstance(dim, (tuple, list)) else (dim,):
        if shape[d % len(shape)] == 0:
            raise IndexError(f"{name}: Expected reduction dim {d if raw_dim else d % len(shape)}"
                             f" to have non-zero size.")


def _minmax(op: str, red: Any, arg: Any, t: Tensor, dim: Any, keepdim: builtins.bool) -> Any:
    if dim is None:
        return apply_op(op + ":1", lambda x: red(x), t)
    indices = apply_op(op, lambda x: fnp.astype(arg(x, dim, keepdims=keepdim), np.int64), t)
    # The values are read at the returned indices, so ties send the gradient there only.
    values = apply_op(op, lambda x, i: _take_at(x, i, dim, keepdim), t, indices)
    return _returns(op.lower(), values, indices)


def _take_at(x: Any, idx: Any, dim: builtins.int, keepdim: builtins.bool) -> Any:
    i = idx if keepdim else fnp.expand_dims(idx, dim)
    out = take_along(x, i, dim)
    return out if keepdim else fnp.squeeze(out, dim)


def _logsumexp(v: Any, dims: Any, keepdim: builtins.bool) -> Any:
    if v.size == 0:
        # Nothing can overflow; funcgrad.numpy's stable form has no maximum to shift by.
        return fnp.log(fnp.sum(fnp.exp(v), dims, keepdims=keepdim))
    return fnp.logsumexp(v, dims, keepdim)


def take_along(x: Any, i: Any, dim: builtins.int) -> Any:
    """``take_along_axis(x, i, dim, mode="clip")``: the gather behind sort, gather, topk...
    (an empty index into an empty axis gives an empty result, recorded as any other).

    >>> take_along(fnp.zeros((2, 0)), fnp.zeros((2, 0), np.int64), 1).shape
    (2, 0)
    """
    return fnp.take_along_axis(x, i, dim, mode="clip")


# The modules below this one that meet Tensors at run time (they cannot import this one).
autocast_tensor_type.append(Tensor)
random_tensor_type.append(Tensor)

# --------------------------------------------------------------------- recording

_SCALARS = (builtins.int, builtins.float, builtins.bool, builtins.complex, type(None))


def _describe(t: Tensor, made_by: GradFn | None = None) -> Callable[[], str]:
    """The tensor's description for the in-place error, formatted only if it is raised.
    PyTorch names the operation that made a saved output (``made_by``), and for a saved
    input the operation that last wrote it (its grad_fn then)."""
    # The buffer's dtype and shape now (made PyTorch's only if the error is raised).
    data = t._data
    np_dtype, shape, index = data.dtype, data.shape, t._out_index
    ref = weakref.ref(t)
    # Weakly: the description is kept by the node that made the tensor (no cycle).
    made_ref = None if made_by is None else weakref.ref(made_by)

    def text() -> str:
        now = ref()
        maker = None if made_ref is None else made_ref()
        node = maker if made_ref is not None else (now.grad_fn if now is not None else None)
        k = index if made_ref is not None or now is None else now._out_index
        # PyTorch names the node without "Backward0" but keeps an overload's number
        # ("Elu1" for EluBackward1, the node of elu_).
        where = f", which is output {k} of {node.op.replace(':', '')}," if node else ""
        name = D.from_numpy(np_dtype).name
        return f"[torch.{_TENSOR_TYPES.get(name, 'Tensor')} {list(shape)}]{where}"

    return text


# While a torch.func transform runs: the tensors that require grad its function uses without
# receiving them (closed over), which the transform then takes as inputs (func.py).
CLOSURE_SINKS: list[list[Tensor]] = []

# PyTorch's TORCH_WARN_ONCE warnings (the first in the process warns, later ones do not),
# with the text PyTorch gives them.
SCALAR_REQUIRES_GRAD = (
    "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior."
    "\nConsider using tensor.detach() first. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:822.)")
CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak. (Triggered internally at "
    "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")
_WARNED_ONCE: set[str] = set()


def check_random_dtype(kernel: str, dt: Any) -> None:
    """PyTorch's uniform and normal kernels exist for floating (and complex) dtypes only."""
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_CPP[dt.name]}\'')


def check_normal_std(std: Any) -> None:
    """PyTorch's normal refuses a negative (or NaN) standard deviation."""
    if isinstance(std, Tensor):
        if isinstance(std._data, Tracer) or not std.numel() or type(std._data) is MetaBuffer:
            return
        if not builtins.bool((std._host() >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {builtins.float(std):g}")


def warn_once(message: str, stacklevel: builtins.int = 3) -> None:
    """PyTorch's TORCH_WARN_ONCE: a UserWarning the first time in the process."""
    if message not in _WARNED_ONCE:
        _WARNED_ONCE.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel)


def _caller_level() -> builtins.int:
    """The stack level, seen from this function's caller's caller, of the first frame
    outside funcgrad (the user's line, however many of funcgrad's wrappers lie between)."""
    frame: Any = sys._getframe(2)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("funcgrad."):
        frame, level = frame.f_back, level + 1
    return level


def warn_at_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` at the first frame outside funcgrad (PyTorch's Python warnings
    point at the user's line; funcgrad's wrappers would otherwise be named)."""
    warnings.warn(message, category, stacklevel=_caller_level() + 1)


def warn_once_at_caller(message: str) -> None:
    """:func:`warn_once` at the first frame outside funcgrad."""
    if message not in _WARNED_ONCE:
        warn_once(message, _caller_level() + 2)


def apply_op(op: str, fn: Callable[..., Any], *args: Any, shown: Sequence[Any] | None = None,
             saves_tensors: builtins.bool = True, **kwargs: Any) -> Any:
    """Run ``fn`` on the values of the Tensor arguments; record it when grad is needed.

    Tensors may appear as positional arguments, keyword arguments, or inside a list or
    tuple argument (``cat``). ``shown`` (the operands, numbers included) sets what
    ``grad_fn.next_functions`` lists, as PyTorch does for arithmetic. ``saves_tensors=False``:
    PyTorch's node for ``op`` saves no tensor (what its rule reads here, masks or indices,
    PyTorch rebuilds from shapes), so a second backward through it is allowed.
    """
    flat_call = not kwargs and builtins.all(type(a) is Tensor or type(a) in _SCALARS
                                            for a in args)
    if flat_call:
        leaves, tree = list(args), None
    else:
        leaves, tree = tree_flatten((args, kwargs), is_leaf=_is_tensor)
    tpos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    if len(tpos) > 1:
        _one_device([leaves[i] for i in tpos])
    if CLOSURE_SINKS:
        CLOSURE_SINKS[-1].extend(leaves[i] for i in tpos if leaves[i]._requires_grad
                                 and not isinstance(leaves[i]._data, Tracer))
    record = is_recording() and builtins.any(leaves[i]._requires_grad for i in tpos)
    vals = list(leaves)
    tape: TapeTrace | None = None
    if record:
        tape = TapeTrace(current_trace())
        for i in tpos:
            t = leaves[i]
            vals[i] = TapeTracer(tape, value_of(t._data), t._edge(), t._vc, _describe(t))
    else:
        # under a no_grad inside a reverse torch.func transform (_grad_mode.REVERSE_DEPTH)
        stop = _grad_mode.REVERSE_DEPTH[0] and not is_grad_enabled()
        for i in tpos:
            v = value_of(leaves[i]._data)
            vals[i] = lax.stop_gradient(v) if stop and isinstance(v, Tracer) else v
    with X64:
        if tape is not None:
            with set_current_trace(tape):
                out = _call(fn, vals, tree)
        else:
            out = _call(fn, vals, tree)
    single = not isinstance(out, (tuple, list, dict))
    outs, out_tree = ([out], None) if single else tree_flatten(out)
    if tape is None or not tape.created:
        wrapped = [_plain_output(o, tape) for o in outs]
        _fresh_contiguous(wrapped, leaves, tpos)
        if tape is not None:
            wrapped = _identity_outputs(op, outs, wrapped, leaves, tpos, shown)
        return wrapped[0] if out_tree is None else tree_unflatten(out_tree, wrapped)
    edges = [o.edge if type(o) is TapeTracer and o._trace is tape else None for o in outs]
    values = [o.primal if type(o) is TapeTracer and o._trace is tape else o for o in outs]
    created = tape.created
    for i in tpos:
        if leaves[i]._inference:
            _check_inference_saved(created, [leaves[i]._data])
    node: GradFn
    if len(created) == 1 and builtins.all(e is None or (type(e) is tuple and e[0] is created[0])
                                          for e in edges):
        node = created[0]
        name_node(node, op)
        index = [e[1] if type(e) is tuple else -1 for e in edges]
    else:
        node = OpNode(op, [leaves[i]._edge() for i in tpos], edges, values, created)
        name_node(node, op)
        index = list(range(len(edges)))
    if shown is not None:
        node.shown_parents = tuple(a._edge() if isinstance(a, Tensor) else None
                                   for a in shown)
    node.shapes_only = not saves_tensors
    wrapped = []
    for v, e, k in zip(values, edges, index):
        t = Tensor._from_data(_as_buffer(v))
        if e is not None:
            t.grad_fn, t._out_index, t._requires_grad = node, k, True
            _register_saved_output(node, e, t, op)
        wrapped.append(t)
    if _saved_hooks.state.stack:
        pack_saved(_saved_hooks.state.stack[-1], created, [*_users(shown, leaves), *wrapped])
    _fresh_contiguous(wrapped, leaves, tpos)
    return wrapped[0] if out_tree is None else tree_unflatten(out_tree, wrapped)


def _fresh_contiguous(outs: list[Tensor], leaves: list[Any], tpos: list[builtins.int]) -> None:
    """PyTorch's layout rule: an operation's results are contiguous, or laid out as its
    operands are (elementwise operations on a transposed tensor), or views of an operand
    (transpose, expand, slices). An engine result laid out otherwise (a gather between two
    transposes, a reversed view for ``flip``) is copied to C order, so ``view`` and
    ``stride()`` behave as in PyTorch."""
    for t in outs:
        buf = t._data
        if getattr(buf, "flags", None) is None or buf.flags.c_contiguous or buf.ndim < 2:
            continue
        order = _stride_order(buf)
        if order is not None and builtins.any(
                type(leaves[i]._data) is type(buf) and (
                    _stride_order(leaves[i]._data) == order
                    or array_module(buf).may_share_memory(buf, leaves[i]._data))
                for i in tpos):
            continue
        t._data = array_module(buf).ascontiguousarray(buf)


def _stride_order(buf: Any) -> tuple[builtins.int, ...] | None:
    """The axes (of size > 1) from the largest stride to the smallest; None where a stride
    is negative (PyTorch has no reversed layouts: its flip copies)."""
    axes = [(s, k) for k, (s, n) in enumerate(zip(buf.strides, buf.shape)) if n > 1]
    if builtins.any(s < 0 for s, _ in axes):
        return None
    return tuple(k for _, k in sorted(axes, key=lambda a: -a[0]))


def _one_device(tensors: Sequence[Tensor]) -> None:
    """PyTorch's rule: the tensors of one operation share a device, except CPU scalars
    (0-d tensors), which go anywhere, and CPU index tensors (integer or bool), which
    PyTorch takes for indexing and ``index_put_``. (The engine would move host data to
    the GPU.)"""
    first = type(tensors[0]._data)
    if builtins.all(type(t._data) is first for t in tensors):
        return
    if builtins.any(type(t._data) is MetaBuffer for t in tensors):
        # Meta tensors meet only meta tensors and CPU scalars, as in PyTorch (whose message
        # names the first tensor's device, CPU scalars aside, as the expected one).
        others = [t for t in tensors if not (type(t._data) is np.ndarray and t._data.ndim == 0)]
        for t in others[1:]:
            if t.device != others[0].device:
                raise RuntimeError(f"Tensor on device {t.device} is not on the expected "
                                   f"device {others[0].device}!")
        return
    cuda = [t for t in tensors if type(t._data).__module__.startswith("cupy")]
    if cuda and builtins.any(type(t._data) is np.ndarray and t._data.ndim
                             and t._data.dtype.kind not in "biu" for t in tensors):
        raise RuntimeError("Expected all tensors to be on the same device, but found at "
                           f"least two devices, {cuda[0].device} and cpu!")


def apply_prim(op: str, prim: Primitive, args: Sequence[Any], shown: Sequence[Any] | None = None,
               **params: Any) -> Tensor | None:
    """``prim`` alone on Tensors and NumPy arrays: :func:`apply_op`'s work without its
    per-operation trace (no tracer objects, no nested trace contexts), for the operations
    that are one primitive. The same impl, the same node, the same rule.

    Returns None (the caller then takes :func:`apply_op`) where the general path is
    needed: under a transformation, or for a buffer that is not a NumPy array.
    """
    if prim is not _E.div_p:
        return _apply_prim(op, prim, args, shown, params)
    # PyTorch divides truly (the engine's division by a broadcast divisor is XLA's, the
    # JAX face's): under X64, the face's numerics, as apply_op's operations run.
    with X64:
        return _apply_prim(op, prim, args, shown, params)


def _apply_prim(op: str, prim: Primitive, args: Sequence[Any], shown: Sequence[Any] | None,
                params: dict[str, Any]) -> Tensor | None:
    if type(_core_ctx.trace) is not EvalTrace:
        return None
    mode = _grad_mode._mode
    grad_on = mode.enabled and not mode.inference
    bufs: list[Any] = []
    avals: list[ShapedArray] = []
    parents: list[Edge] = []
    tracked: list[builtins.bool] = []
    inference = False
    # One pass over the operands (this runs once per recorded operation).
    for a in args:
        if isinstance(a, Tensor):
            d = a._data
            if grad_on and a._requires_grad:
                parents.append(a._edge())
                tracked.append(True)
            else:
                parents.append(None)
                tracked.append(False)
            if a._inference:
                inference = True
        else:
            d = a
            parents.append(None)
            tracked.append(False)
        if type(d) is not np.ndarray:
            return None
        bufs.append(d)
        avals.append(ndarray_aval(d))
    if True not in tracked:
        outs, _ = impl_buffers(prim, np, bufs, avals, params)
        if prim.multiple_results:
            return cast(Tensor, [Tensor._from_data(o) for o in outs])
        return Tensor._from_data(outs[0])
    sig = signature(prim, params, avals, tracked)
    node: GradFn
    if sig is not None and not prim.multiple_results and not inference:
        # The common case, without the general loop: one result, one node.
        out = sig.impl(bufs)[0]
        node = signed_node(op, sig, bufs, (out,), parents, args)
        _show(node, shown, args)
        t = Tensor._from_data(out)
        if sig.inexact_out[0]:
            t.grad_fn = node
            t._requires_grad = True
            if sig.keep_out or op in _SAVES_RESULT:
                # The node keeps its output for backward: in-place changes must be caught.
                node.keep_version(t._vc, _describe(t, node))
        if _saved_hooks.state.stack:
            pack_saved(_saved_hooks.state.stack[-1], [node], [*_users(shown, args), t])
        return t
    if sig is not None:
        outs = sig.impl(bufs)
        node = signed_node(op, sig, bufs, outs, parents, args)
        inexact = sig.inexact_out
    else:
        versions = [(a._vc, a) if e is not None else None for a, e in zip(args, parents)]
        outs, out_avals = impl_buffers(prim, np, bufs, avals, params)
        # The rules compute on Arrays: the operands and results they read are kept as Arrays.
        node = new_node(prim, params, bufs, outs, parents, versions, None, avals, out_avals,
                        wrap)
        name_node(node, op)
        inexact = tuple([is_inexact(av.dtype) for av in out_avals])
    if inference:
        _check_inference_saved([node], [b for a, b in zip(args, bufs) if _is_inference(a)])
    _show(node, shown, args)
    wrapped = []
    for k, o in enumerate(outs):
        t = Tensor._from_data(o)
        if inexact[k]:
            t.grad_fn, t._out_index, t._requires_grad = node, k, True
            _register_saved_output(node, (node, k), t, op)
        wrapped.append(t)
    if _saved_hooks.state.stack:
        pack_saved(_saved_hooks.state.stack[-1], [node], [*_users(shown, args), *wrapped])
    return cast(Tensor, wrapped) if prim.multiple_results else wrapped[0]


def _users(shown: Sequence[Any] | None, args: Sequence[Any]) -> Sequence[Any]:
    """The operands the user gave (``shown``, where a number was made a Tensor on the way
    to the primitive): what ``saved_tensors_hooks``' pack_hook may be shown."""
    return args if shown is None else shown


def _show(node: GradFn, shown: Sequence[Any] | None, args: Sequence[Any]) -> None:
    """``next_functions`` of the node: its parents, unless a tensor operand was replaced
    (broadcast, cast) on its way to the primitive; then the operands ``shown``."""
    if shown is None:
        return
    differs = len(shown) != len(args)
    for s, a in zip(shown, args):
        if s is not a and isinstance(s, Tensor):
            differs = True
            break
    if differs:
        node.shown_parents = tuple([a._edge() if isinstance(a, Tensor) else None
                                    for a in shown])


def _call(fn: Callable[..., Any], vals: list[Any], tree: Any) -> Any:
    try:
        if tree is None:
            return fn(*vals)
        a, k = tree_unflatten(tree, vals)
        return fn(*a, **k)
    except AxisError as e:
        # PyTorch's words for a dim outside the tensor's rank (a 0-d tensor counts as 1-d).
        n = max(e.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                         f"{n - 1}], but got {e.axis})") from None


def _plain_output(o: Any, tape: TapeTrace | None) -> Tensor:
    if type(o) is TapeTracer:
        o = o.primal
    return Tensor._from_data(_as_buffer(o))


def _identity_outputs(op: str, outs: list[Any], wrapped: list[Tensor], leaves: list[Any],
                      tpos: list[builtins.int], shown: Sequence[Any] | None) -> list[Tensor]:
    """An operation that passed a tracked input through unchanged still gets its node."""
    edges = [o.edge if type(o) is TapeTracer else None for o in outs]
    if builtins.all(e is None for e in edges):
        return wrapped
    node = OpNode(op, [leaves[i]._edge() for i in tpos], edges,
                  [o.primal if type(o) is TapeTracer else o for o in outs], [])
    name_node(node, op)
    for k, (t, e) in enumerate(zip(wrapped, edges)):
        if e is not None:
            t.grad_fn, t._out_index, t._requires_grad = node, k, True
    return wrapped


def _is_inference(a: Any) -> builtins.bool:
    return type(a) is Tensor and a._inference


_INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")
_INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _check_inference_saved(nodes: Sequence[GradFn], bufs: Sequence[Any]) -> None:
    """PyTorch's error when a node keeps an inference tensor's data for its backward.
    (Only reached when an inference tensor meets a recorded operation: rare.)"""
    def base(b: Any) -> Any:
        while getattr(b, "base", None) is not None:
            b = b.base
        return b

    roots = {id(base(b)) for b in bufs}
    for node in nodes:
        for p in node.primals:
            if type(p) is Missing:
                continue
            buf = buffer_of(p.primal if type(p) is TapeTracer else p)
            if id(base(buf)) in roots:
                raise RuntimeError(_INFERENCE_SAVED)


def _adopt_saved_output(node: Any, old: list[int], new: list[int]) -> builtins.bool:
    """An in-place op's node that keeps its result (exp_, sigmoid_...) checks the written
    tensor's version, not the temporary's it was computed into: a later in-place change
    of the tensor (``y.exp_(); y.add_(1)``) must fail its backward, as PyTorch. True when
    the node kept that result."""
    saved = getattr(node, "saved", ())
    if not any(c is old for c, _, _ in saved):
        return False
    node.saved = tuple((new, new[0], what) if c is old else (c, v, what)
                       for c, v, what in saved)
    return True


# Operations whose PyTorch node saves its result though funcgrad's rule keeps something
# else (relu's mask, softmax's input): an in-place change of the result must fail their
# backward, as PyTorch's. (The converse, ``x ** 0.5`` whose rule reads its result where
# PyTorch's PowBackward0 keeps only x, stays an error: the in-place write would change
# the value the rule reads.)
# ``x ** tensor`` (``Pow:1``) saves its result even where only the base needs a gradient.
_SAVES_RESULT = frozenset({"Relu", "Softmax", "LogSoftmax", "Reciprocal", "Cumprod", "Pow:1"})


def _register_saved_output(node: GradFn, edge: Any, t: Tensor, op: str = "") -> None:
    """If the node that made this output keeps it for backward, in-place changes to the
    output must be caught."""
    inner, k = edge
    if not isinstance(inner, GradFn):
        return
    if op in _SAVES_RESULT or (k < len(inner.outs) and type(inner.outs[k]) is not Missing):
        inner.keep_version(t._vc, _describe(t, t.grad_fn))


def _view_op(op: str, fn: Callable[..., Any], t: Tensor,
             saves_tensors: builtins.bool = True, copied: builtins.bool = False) -> Tensor:
    """A shape operation whose result shares memory (and the version counter) with ``t``
    (``saves_tensors``: as :func:`apply_op`'s; ``copied``: the engine computes the view
    into a new buffer, a view all the same: writes reach ``t`` through the view's record,
    as a device view's do)."""
    if t._inference and t._requires_grad and not _grad_mode._mode.inference and \
            is_grad_enabled():
        # PyTorch: a view of an inference tensor made outside inference mode is an inference
        # leaf that does not require grad (nothing flows back to its base).
        with _grad_mode.no_grad():
            return _view_op(op, fn, t, saves_tensors, copied)
    out = apply_op(op, fn, t, saves_tensors=saves_tensors)
    a, b = out._data, t._data
    if (type(a) is np.ndarray and type(b) is np.ndarray and (copied or np.shares_memory(a, b))) \
            or _device_views(a, b):
        out._vc = t._vc
        out._view_flag = True
        # PyTorch's ``_base``: the tensor at the root of a chain of views.
        out._view_base = t if t._view_base is None else t._view_base
        # A view is an inference tensor exactly when its base is.
        out._inference = t._inference
        if getattr(t, "_function_view", None) is not None:
            # A view of a custom Function's output that aliases its input is one too
            # (PyTorch's creation meta passes on to views of views).
            out._function_view = 0
        recording = is_grad_enabled()
        if op != "Index" and (recording or t._requires_grad):
            # Kept for an in-place operation on the view while recording (CopySlices).
            _functionalize.EAGER.view(op, fn, out, t)
            if not recording:
                rec = _functionalize.eager_record(out)
                if rec is not None:
                    rec.no_grad = True
    tracker = _functionalize.active()
    if tracker is None and isinstance(a, Tracer):
        # Under a transform or torch.compile a view is a new value: remember its base, for
        # writes through it (torch.func.functionalize has its own tracker).
        tracker = _functionalize.default()
    if tracker is not None:
        tracker.view(op, fn, out, t)
    return out


def _is_tensor(x: Any) -> builtins.bool:
    return isinstance(x, Tensor)


def root_grads(outs: Sequence[Tensor], grads: Any) -> list[Any]:
    if grads is None:
        grads = [None] * len(outs)
    elif isinstance(grads, Tensor) or not isinstance(grads, (list, tuple)):
        grads = [grads]
    result: list[Any] = []
    for i, (t, g) in enumerate(zip(outs, grads)):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t.dtype.is_complex:
                # A complex output has no gradient of its own: PyTorch wants the seed given.
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   f"outputs but got {t.dtype}")
            # Made where the output lives (a fill on a GPU, not an upload; on meta, none).
            d = t._data
            result.append(Tensor._from_data(d.copy() if type(d) is MetaBuffer else
                                            array_module(d).ones(t.shape, d.dtype)))
        else:
            gd = g if isinstance(g, Tensor) else Tensor._from_data(
                np.asarray(g, t._data.dtype))
            if tuple(gd.shape) != tuple(t.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{gd.shape} and output[{i}] has a shape of {t.shape}.")
            if gd.dtype != t.dtype:
                if gd.dtype.is_complex != t.dtype.is_complex:
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to "
                        f"have the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype "
                        f"of {gd.dtype} and output[{i}] has a dtype of {t.dtype}.")
                # PyTorch's engine casts a real gradient to its output's dtype (the engine's
                # rules want one dtype).
                gd = gd.to(t.dtype)
            result.append(gd)
    return result


tensor_class.cls = Tensor
tensor_class.describe = _describe
# jit stages a Tensor as the array it holds, and returns Tensors for Tensor outputs.
register_array_wrapper(Tensor, lambda t: t._data, lambda a: Tensor._from_data(_as_buffer(a)))
def _tensor_as_input(x: Any) -> Any:
    """The JAX face reads a Tensor as its data (a copy: Arrays are immutable, Tensors are
    not), as NumPy reads it: a tensor that requires grad is refused, not silently cut
    from its graph."""
    if not isinstance(x, Tensor):
        return None
    if x.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    return x._data


register_input_converter(_tensor_as_input)


# ------------------------------------------------------------------ operators


def _operand(x: Any) -> tuple[D.dtype, builtins.int]:
    if isinstance(x, Tensor):
        return x.dtype, x.ndim
    if isinstance(x, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return D.scalar_dtype(x), -1
    if isinstance(x, np.generic):
        return D.from_numpy(x.dtype), -1
    raise TypeError(f"unsupported operand type: '{type(x).__name__}'")


def result_dtype(*xs: Any) -> D.dtype:
    return D.result_dtype([_operand(x) for x in xs])


def _x86_float_to_int(x: Any, dt: np.dtype[Any]) -> Any:
    """Float to integer as PyTorch's CPU kernels give it on x86: a value out of range of
    int32 (int64 for 64-bit targets) or NaN becomes that type's minimum ("integer
    indefinite"), and narrower types keep the low bits (uint8 of 300.7 is 44). The engine's
    conversion saturates as XLA's and a GPU's do (which PyTorch's CUDA tensors match)."""
    wide = np.dtype(np.int64 if dt.itemsize >= 4 and (dt.itemsize == 8 or dt.kind == "u")
                    else np.int32)
    limit = 2.0 ** (8 * wide.itemsize - 1)
    bad = fnp.isnan(x) | (x >= limit) | (x < -limit)
    t = fnp.astype(fnp.where(bad, fnp.zeros_like(x), x), wide)
    t = fnp.where(bad, fnp.full_like(t, np.iinfo(wide).min), t)
    return t if wide == dt else fnp.astype(t, dt)


def _cast_to(v: Any, dt: D.dtype) -> Any:
    if isinstance(v, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return v
    return v if v.dtype == dt.np else fnp.astype(v, dt.np)


def _check_integer_exponent(base: Tensor, exponent: Any) -> None:
    """PyTorch refuses a negative Python integer exponent of an integer (or bool) tensor;
    a negative exponent tensor is computed (see _power)."""
    if type(exponent) is builtins.int and exponent < 0 and base.dtype.np.kind in "biu":
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _power(x: Any, y: Any) -> Any:
    """``x ** y`` as PyTorch computes it: an integer to a negative integer power is 0, or
    +-1 for the bases 1 and -1 (NumPy refuses such powers)."""
    dy: Any = getattr(y, "dtype", None)
    dx: Any = getattr(x, "dtype", dy)
    if type(y) is builtins.float and y in (0.5, -0.5) and dx is not None and dx.kind == "f":
        return fnp.sqrt(x) if y > 0 else lax.rsqrt(x)  # as Tensor.__pow__ (_checked_pow)
    if dy is None or dy.kind != "i" or dx.kind not in "biu":
        return fnp.power(x, y)
    negative = fnp.less(y, 0)
    out = fnp.power(x, fnp.where(negative, fnp.zeros_like(y), y))
    odd = fnp.equal(_plain.bitwise_and(y, 1), 1)
    small = fnp.where(fnp.equal(x, 1), 1, fnp.where(fnp.equal(x, -1), fnp.where(odd, -1, 1), 0)) \
        if dx.kind == "i" else fnp.where(fnp.equal(x, 1), 1, 0)
    return fnp.where(negative, fnp.astype(small, out.dtype), out)


def _arith(f: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """``f`` on engine values whose dtypes are already PyTorch's (numbers are weak)."""
    return f(a, b)


_SUBTRACTIONS = frozenset({"Sub", "Rsub", "Rsub:1"})


def _is_bool(x: Any) -> builtins.bool:
    return isinstance(x, builtins.bool) or (isinstance(x, Tensor) and x.dtype is D.bool)


def check_bool_subtraction(a: Any, b: Any) -> None:
    """PyTorch's errors for ``a - b`` where either is a bool (``~`` or ``^`` is meant)."""
    if _is_bool(a) and _is_bool(b):  # (a Python bool is a bool tensor to PyTorch)
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


# The ops whose number operand is a Scalar argument of PyTorch's overload, not a wrapped
# tensor: their nodes list the tensor alone (PowBackward0 of ``x ** 2``).
_SCALAR_OVERLOADS = frozenset({"Pow", "Remainder", "Fmod", "Rsub"})


def _shown_operands(op: str, a: Any, b: Any) -> tuple[Any, ...]:
    if op_base(op) in _SCALAR_OVERLOADS:
        return tuple(x for x in (a, b) if isinstance(x, Tensor))
    return (a, b)


# PyTorch's kernels of the bitwise ops, which have no floating point version.
_BITWISE_KERNELS = {"BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or",
                    "BitwiseXor": "bitwise_xor", "BitwiseLeftShift": "lshift",
                    "BitwiseRightShift": "rshift"}


def _half_by_scalar(t: Any, s: Any) -> builtins.bool:
    """Whether ``t`` is a bfloat16/float16 CPU tensor and ``s`` a scalar to PyTorch's
    multiplication and division kernels there: a number, or a 0-d floating point tensor
    that leaves ``t``'s dtype as the result's."""
    if not isinstance(t, Tensor) or t.dtype.name not in ("bfloat16", "float16") or \
            t.device.type != "cpu":
        return False
    ts = type(s)
    if ts is builtins.float or ts is builtins.int:
        return True
    return isinstance(s, Tensor) and s.ndim == 0 and s.dtype.is_floating_point and \
        s.device.type == "cpu" and result_dtype(t, s) is t.dtype


def _in_float32(f: Callable[[Any, Any], Any], reciprocal: builtins.bool = False
                ) -> Callable[[Any, Any], Any]:
    """``f(x, s)`` of a half-precision ``x`` and a scalar ``s`` as PyTorch's CPU kernels
    compute it: in float32, with the scalar's float32 value, rounded once to ``x``'s dtype
    (the engine's promotion would round the scalar to that dtype first: ``bf16(2.25) * 3.3``
    is 7.4375 in PyTorch, 7.40625 in bfloat16 arithmetic). ``reciprocal``: ``s / x``, which
    PyTorch computes as ``x.reciprocal() * s``."""
    def run(x: Any, s: Any) -> Any:
        dt = x.dtype
        wide = fnp.astype(fnp.reciprocal(x) if reciprocal else x, np.float32)
        return fnp.astype(f(wide, fnp.astype(s, np.float32)), dt)

    return run


def half_on_cpu(dt: D.dtype, *tensors: Any) -> builtins.bool:
    """Whether a result of dtype ``dt`` is bfloat16/float16 computed on the CPU, where
    PyTorch's kernels compute in float32 (``opmath``) and round once."""
    return dt.name in ("bfloat16", "float16") and builtins.all(
        t.device.type == "cpu" for t in tensors if isinstance(t, Tensor))


def fma32(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` on float32 values rounded once, as a fused multiply-add (the product
    of two float32 values is exact in float64)."""
    wide = fnp.astype(a, np.float64) * fnp.astype(b, np.float64) + fnp.astype(c, np.float64)
    return fnp.astype(wide, np.float32)


def binary(op: str, f: Callable[[Any, Any], Any], a: Any, b: Any, *,
           true_div: builtins.bool = False, shown: builtins.bool = True,
           alpha: Any = 1) -> Tensor:
    """A binary elementwise operation with PyTorch's promotion; ``alpha`` scales ``b``
    (add's and sub's)."""
    if op in _SUBTRACTIONS:
        check_bool_subtraction(a, b)
    if (f is _plain.multiply or f is fnp.divide) and type(alpha) is builtins.int and \
            alpha == 1:
        if _half_by_scalar(a, b):
            return apply_op(op, _in_float32(f), a, b,
                            shown=_shown_operands(op, a, b) if shown else None)
        if f is fnp.divide and _half_by_scalar(b, a) and not isinstance(a, Tensor):
            return apply_op(op, _in_float32(_plain.multiply, reciprocal=True), b, a,
                            shown=_shown_operands(op, a, b) if shown else None)
    prim = _BINARY_PRIM.get(f) if type(alpha) is builtins.int and alpha == 1 else None
    if prim is not None and isinstance(a, Tensor) and is_grad_enabled() and (
            a._requires_grad or getattr(b, "_requires_grad", False)):
        # The common case of recording first: a floating point tensor with a number, or
        # with a tensor of its dtype; PyTorch's promotion then keeps the tensor's dtype.
        da = a._data
        if type(da) is np.ndarray and da.dtype.kind == "f":
            tb = type(b)
            if tb is builtins.float or tb is builtins.int or tb is builtins.bool:
                vb: Any = np.asarray(b, da.dtype)
            elif isinstance(b, Tensor) and type(b._data) is np.ndarray \
                    and b._data.dtype == da.dtype:
                vb = b
            else:
                vb = None
            if vb is not None:
                sb = vb._data.shape if vb is b else ()
                # Same shapes (or a number): no operand to broadcast first.
                listed = _shown_operands(op, a, b) if shown else None
                out = apply_prim(op, prim, (a, vb), shown=listed) \
                    if sb == da.shape or not sb else \
                    apply_binary_prim(op, prim, a, vb, listed)
                if out is not None:
                    return out
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.shape != b.shape:
        _check_broadcast(tuple(a.shape), tuple(b.shape))
    dt = result_dtype(a, b)
    kernel = _BITWISE_KERNELS.get(op)
    where = a if isinstance(a, Tensor) else b
    if kernel is not None and (dt.is_floating_point or dt.is_complex or (
            dt is D.bool and op in ("BitwiseLeftShift", "BitwiseRightShift"))):
        raise NotImplementedError(f'"{kernel}_{where.device.type}" not implemented for '
                                  f"'{_CPP[dt.name]}'")
    if dt is D.bool and op == "Pow":
        if not isinstance(b, builtins.bool):  # (PyTorch has no Bool pow kernel)
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        # pow(Tensor, Scalar) copies for an exponent of 1 and fills ones for 0, any dtype.
        return apply_op("Pow", lambda x: x if b else fnp.ones_like(x), a)
    if true_div and D.category(dt) <= 1:
        dt = D.get_default_dtype()
    if not (type(alpha) is builtins.int and alpha == 1):
        alpha = check_alpha(dt, alpha)
    cplx = D.category(dt) == 3
    if cplx and op_base(op) in _ALPHA_OPS or not (
            type(alpha) is builtins.int and alpha == 1):
        f = _with_alpha(f, alpha, cplx)
    host = _HOST_BINARY.get(f)
    if host is not None and dt.name != "bool" and not (is_grad_enabled() and (
            getattr(a, "_requires_grad", False) or getattr(b, "_requires_grad", False))):
        va, vb = _host_operand(a, dt), _host_operand(b, dt)
        if va is not None and vb is not None:
            # Nothing to record: the NumPy ufunc the primitive's impl calls, directly
            # (0-d operands give a NumPy scalar: kept an array).
            out = host(va, vb)
            return Tensor._from_data(out if type(out) is np.ndarray else np.asarray(out))
    kernel = _ROUNDING_KERNELS.get(f if op == "Div:2" else op_base(op))
    if kernel is not None:
        if dt.name == "bool" or D.category(dt) > 2:
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                      f"'{_CPP[dt.name]}'")
        if D.category(dt) <= 1 and isinstance(b, (Tensor, builtins.int)):
            _check_integer_divisor(b)
    fa, fb = _fixed_scalar(a, dt), _fixed_scalar(b, dt)
    direct = _PRIM_BINARY.get(f)
    sa, sb = getattr(fa, "shape", ()), getattr(fb, "shape", ())
    if direct is not None and (sa == sb or not sa or not sb):
        # Same shapes (or a rank-0 side) and one dtype: the primitive itself, without
        # funcgrad.numpy's promotion and broadcasting (PyTorch's were applied above).
        va, vb = _prim_operand(fa, dt), _prim_operand(fb, dt)
        if va is not None and vb is not None:
            out = apply_prim(op, _BINARY_PRIM[f], (va, vb),
                             shown=_shown_operands(op, a, b) if shown else None)
            if out is not None:
                return out
        g = direct
        return apply_op(op, lambda x, y: g(_cast_to(x, dt), _cast_to(y, dt)), fa, fb,
                        shown=_shown_operands(op, a, b) if shown else None)
    return apply_op(op, lambda x, y: f(_cast_to(x, dt), _cast_to(y, dt)), fa, fb,
                    shown=_shown_operands(op, a, b) if shown else None)


# PyTorch's kernels of the rounding divisions (named by their errors), which have no bool
# or complex version; an integer divisor 0 raises. By node (``div``'s rounding modes share
# one, Div:2: by function).
_ROUNDING_KERNELS: dict[Any, str] = {
    "FloorDivide": "div_floor", "Remainder": "remainder", "Fmod": "fmod",
    _division.floor_divide: "div_floor", _division.trunc_divide: "div_trunc"}

# Binary operations that are one primitive on operands of one dtype and shape (or rank 0).
_PRIM_BINARY: dict[Any, Callable[[Any, Any], Any]] = {
    _plain.add: _E.add, _plain.subtract: _E.sub, _plain.multiply: _E.mul}

def apply_binary_prim(op: str, prim: Primitive, a: Tensor, b: Any,
                      shown: Sequence[Any] | None) -> Tensor | None:
    """A binary primitive on operands of one dtype with NumPy broadcasting: each operand
    that must grow is first broadcast (its own graph node, which sums the gradient back),
    then the primitive's node is the operation's (shown with the original operands, as
    PyTorch shows ``AddBackward0``). None where the general path is needed."""
    sa = a._data.shape
    sb = b._data.shape if isinstance(b, Tensor) else b.shape
    if sa != sb and sa and sb:
        try:
            shape = np.broadcast_shapes(sa, sb)
        except ValueError:
            return None  # the general path raises PyTorch's error
        a = _broadcast_operand(a, shape)
        b = _broadcast_operand(b, shape)
        if a is None or b is None:
            return None
    return apply_prim(op, prim, (a, b), shown=shown)


def _broadcast_operand(x: Any, shape: tuple[builtins.int, ...]) -> Any:
    s = x.shape
    if s == shape or not s:
        return x
    dims = tuple(range(len(shape) - len(s), len(shape)))
    return apply_prim("Expand", _S.broadcast_in_dim_p, (x,), shape=shape,
                      broadcast_dimensions=dims)


_BINARY_PRIM: dict[Any, Primitive] = {
    _plain.add: _E.add_p, _plain.subtract: _E.sub_p, _plain.multiply: _E.mul_p}


def _prim_operand(x: Any, dt: D.dtype) -> Any:
    """``x`` as an operand of a primitive of dtype ``dt`` (a Tensor already of that dtype,
    or a number made a 0-d array of it, as the engine's wrappers make it), else None."""
    if isinstance(x, Tensor):
        return x if x._data.dtype == dt.np else None
    if type(x) in _PRIM_SCALARS:
        return scalar_as(x, dt.np, ())
    return None


_PRIM_SCALARS = (builtins.bool, builtins.int, builtins.float)

# PyTorch's add, sub and rsub compute ``a + alpha * b``: for complex numbers the product
# with alpha (1 + 0j by default) is a complex one, so an infinite part of ``b`` turns the
# other part into NaN (``(1+1j) + (-inf+0j)`` is -inf+nanj).
_ALPHA_OPS = frozenset({"Add", "Sub", "Rsub"})


def _with_alpha(f: Callable[[Any, Any], Any], alpha: Any, cplx: builtins.bool
                ) -> Callable[[Any, Any], Any]:
    return lambda x, y: f(x, _scaled(y, alpha, cplx))


# Binary operations whose primitive's impl is this NumPy ufunc (on operands of one dtype).
_HOST_BINARY: dict[Any, Callable[[Any, Any], Any]] = {
    _plain.add: np.add, _plain.subtract: np.subtract, _plain.multiply: np.multiply}


def _host_operand(x: Any, dt: D.dtype) -> Any:
    """``x`` as a NumPy array of ``dt`` when that needs no conversion, else None."""
    if type(x) is Tensor:
        data = x._data
        return data if type(data) is np.ndarray and data.dtype == dt.np else None
    if type(x) is builtins.float and dt.np.kind in "fc" or type(x) is builtins.int and (
            dt.np.kind in "fc" or dt is D.int64):
        return np.asarray(x, dt.np)
    return None


def _setitem_shape_error(shape: tuple[builtins.int, ...], idx: Any,
                         vshape: tuple[builtins.int, ...], vdtype: D.dtype) -> None:
    """PyTorch's error for ``t[idx] = value`` (``t`` of ``shape``) whose value does not fit
    the indexed part: index_put_'s for advanced indexing, else expand's."""
    target = _indexed_shape(shape, idx)
    if target is None:
        return
    if _advanced(idx):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(target)}") from None
    if len(vshape) > len(target):
        name = _TENSOR_TYPES.get(vdtype.name, "Tensor")
        raise RuntimeError(f"expand(torch.{name}{{{list(vshape)}}}, size={list(target)}): the "
                           f"number of sizes provided ({len(target)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({len(vshape)})"
                           ) from None
    check_expand(vshape, target)


def _indexed_shape(shape: tuple[builtins.int, ...], idx: Any
                   ) -> tuple[builtins.int, ...] | None:
    """The shape of ``t[idx]`` for ``t`` of ``shape`` (None: an index NumPy reads otherwise,
    left to the engine)."""
    try:
        probe = np.broadcast_to(np.zeros((), np.bool_), shape)[
            idx if not isinstance(idx, tuple) else tuple(
                np.asarray(i._host()) if isinstance(i, Tensor) else i for i in idx)]
    except Exception:  # noqa: BLE001 - an index NumPy reads otherwise: the engine's error
        return None
    return tuple(probe.shape)


def broadcast_shapes_as_torch(*shapes: tuple[builtins.int, ...]) -> tuple[builtins.int, ...]:
    """The shapes broadcast one after the other as PyTorch's TensorIterator does, with its
    error naming the first pair that clashes."""
    out: tuple[builtins.int, ...] = ()
    for s in shapes:
        _check_broadcast(out, s)
        out = tuple(np.broadcast_shapes(out, s))
    return out


def _check_broadcast(sa: tuple[builtins.int, ...], sb: tuple[builtins.int, ...]) -> None:
    """PyTorch's error for shapes that do not broadcast (the last clash is named)."""
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b "
                               f"({pb[i]}) at non-singleton dimension {i}")


def _check_integer_divisor(b: Any) -> None:
    """Integer division by zero raises in PyTorch (NumPy would give 0 with a warning)."""
    if isinstance(b, builtins.int):
        zero = b == 0
    elif isinstance(b._data, Tracer):
        return
    else:
        zero = builtins.bool((b._host() == 0).any())
    if zero:
        raise RuntimeError("ZeroDivisionError")


def _fixed_scalar(x: Any, dt: D.dtype) -> Any:
    """A Python number becomes a 0-d tensor of the result dtype (so the engine's weak
    promotion can never pick another dtype)."""
    if isinstance(x, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        if D.category(dt) < D.category(D.scalar_dtype(x)):
            return x
        try:
            return Tensor._from_data(np.asarray(x, dt.np))
        except OverflowError:
            return Tensor._from_data(_wrapped(x, dt))
    return x


def _wrapped(x: Any, dt: D.dtype) -> np.ndarray:
    """An integer outside ``dt``'s range, converted as PyTorch's C++ does: modulo the
    type's width (anything from -2**63 to 2**64 - 1); larger ones are refused."""
    if dt.np.kind not in "iu" or not isinstance(x, builtins.int):
        raise OverflowError(f"Python integer {x} out of bounds for {dt.np.name}")
    if x >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if x < -2 ** 63:
        raise OverflowError("can't convert negative int to unsigned")
    bits = 8 * dt.np.itemsize
    v = x % 2 ** bits
    if dt.np.kind == "i" and v >= 2 ** (bits - 1):
        v -= 2 ** bits
    return np.asarray(v, dt.np)


def _array_operand(self: Tensor, other: Any) -> Any:
    """A NumPy array or a funcgrad Array on the right of a Tensor operator is taken as a
    constant tensor of its dtype, as PyTorch takes a NumPy array (through NumPy, which
    refuses a tensor that requires grad)."""
    if isinstance(other, np.ndarray) and self.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if isinstance(other, (np.ndarray, Array)):
        return Tensor._from_data(_as_buffer(other))
    return other


def _compare(op: str, f: Callable[[Any, Any], Any]) -> Callable[[Tensor, Any], Tensor]:
    def method(self: Tensor, other: Any) -> Tensor:
        other = _array_operand(self, other)
        if other is None or not isinstance(other, (Tensor, builtins.bool, builtins.int,
                                                   builtins.float, builtins.complex,
                                                   np.generic)):
            return NotImplemented
        dt = result_dtype(self, other)
        return apply_op(op, lambda x, y: f(_cast_to(x, dt), _cast_to(y, dt)), self,
                        _fixed_scalar(other, dt))

    return method


def _method(op: str, f: Callable[[Any, Any], Any], reverse: builtins.bool = False,
            reflected: builtins.bool = False, **kw: Any) -> Callable[[Tensor, Any], Tensor]:
    def method(self: Tensor, other: Any) -> Tensor:
        t = type(other)
        if t is not builtins.float and t is not Tensor and t is not builtins.int:
            if reflected and isinstance(other, np.ndarray):
                # ``array * tensor``: NumPy defers to the tensor, which refuses (PyTorch 2.13).
                return NotImplemented
            other = _array_operand(self, other)
            if not isinstance(other, (Tensor, builtins.bool, builtins.int, builtins.float,
                                      builtins.complex, np.generic)):
                return NotImplemented
        if reverse:
            return binary(_reversed_name(op, other), f, other, self, **kw)
        return binary(_overload(op, other), f, self, other, **kw)

    return method


def _zero_power(x: Any, y: Any) -> Any:
    return fnp.power(x, 0)  # integer_pow's 0: ones, and a zero derivative


def _masked_power(x: Any, y: Any) -> Any:
    if getattr(y, "dtype", np.dtype(np.int64)).kind in "fc":
        x = fnp.where(fnp.equal(y, 0), _E.stop_gradient(x), x)
    return _power(x, y)


def _logical_reduction(fn: Callable[..., Any], dim: Any, keepdim: builtins.bool,
                       dt: Any) -> Callable[[Any], Any]:
    """``all``/``any``: a bool result, but a uint8 one for a uint8 tensor (PyTorch keeps
    that dtype, a legacy of masks stored as bytes)."""
    if dt is D.uint8:
        return lambda x: fnp.astype(fn(x, dim, keepdims=keepdim), np.uint8)
    return lambda x: fn(x, dim, keepdims=keepdim)


def _check_bool_pow(x: Tensor, exponent: Any) -> None:
    """PyTorch has no pow kernel for Bool (a bool exponent number is the Scalar overload's
    copy or ones)."""
    if x.dtype is D.bool and isinstance(exponent, Tensor) and exponent.dtype is D.bool:
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")


def _checked_pow(method: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    """``Tensor.__pow__``. PyTorch's pow_backward gives the base a zero gradient where the
    exponent is 0; JAX's rule, the engine's, gives 0 * inf = nan at a zero base there. So
    a number 0 is integer_pow's 0, and a tensor exponent keeps the base out of the
    derivative where it is 0 (other numbers need neither)."""
    zero, masked = _method("Pow", _zero_power), _method("Pow", _masked_power)
    roots = {0.5: _method("Pow", lambda x, y: fnp.sqrt(x)),
             -0.5: _method("Pow", lambda x, y: lax.rsqrt(x))}
    # PyTorch's kernel multiplies for these exponents (x * x * x, 1 / (x * x)), as
    # integer_pow does; others go to pow.
    products = {3: _method("Pow", lambda x, y: fnp.power(x, 3)),
                -2: _method("Pow", lambda x, y: fnp.power(x, -2))}

    def pow_(self: Tensor, other: Any) -> Tensor:
        _check_bool_pow(self, other)
        _check_integer_exponent(self, other)
        if isinstance(other, Tensor):
            # (Only where a 0 can be there: the masked base is not the saved input that
            # in-place writes are checked against.)
            d = other._data
            if isinstance(d, Tracer) or builtins.bool((d == 0).any()):
                return masked(self, other)
            return method(self, other)
        if type(other) in (builtins.int, builtins.float) and other == 0 and \
                self.dtype.is_floating_point:
            return zero(self, other)
        if type(other) in (builtins.int, builtins.float) and other in products and \
                self.dtype in (D.float32, D.float64, D.bfloat16):
            # (float16's is computed in float and rounded once, as measured against
            # PyTorch 2.13's CPU kernel.)
            return products[other](self, other)
        if type(other) is builtins.float and other in roots and self.dtype.is_floating_point:
            # PyTorch's kernel takes these exponents as sqrt and rsqrt: (-0.) ** 0.5 is -0,
            # (-0.) ** -0.5 is -inf and (-inf) ** 0.5 NaN (C's pow: +0, +inf and +inf).
            return roots[other](self, other)
        return method(self, other)

    return pow_


def _overload(op: str, other: Any) -> str:
    """PyTorch's node for ``tensor <op> other``: pow, remainder and fmod have a Tensor
    overload of their own (``PowBackward1``), apart from the Scalar one."""
    return op + ":1" if op in ("Pow", "Remainder", "Fmod") and isinstance(other, Tensor) \
        else op


def _reversed_name(op: str, other: Any) -> str:
    """PyTorch's node for ``number <op> tensor``: another overload, or another op."""
    if isinstance(other, Tensor):
        return op
    return {"Rsub": "Rsub:1", "Div": "Mul", "Pow": "Pow:2"}.get(op, op)


for _name, _op, _rop, _fn, _kw in [
    ("add", "Add", "Add", _plain.add, {}), ("sub", "Sub", "Rsub", _plain.subtract, {}),
    ("mul", "Mul", "Mul", _plain.multiply, {}),
    ("truediv", "Div", "Div", fnp.divide, {"true_div": True}),
    ("floordiv", "FloorDivide", "FloorDivide", _division.floor_divide, {}),
    ("mod", "Remainder", "Remainder", _division.remainder, {}),
    ("pow", "Pow", "Pow", _power, {}),
    ("and", "BitwiseAnd", "BitwiseAnd", _plain.bitwise_and, {}),
    ("or", "BitwiseOr", "BitwiseOr", _plain.bitwise_or, {}),
    ("xor", "BitwiseXor", "BitwiseXor", _plain.bitwise_xor, {}),
    ("lshift", "BitwiseLeftShift", "BitwiseLeftShift", fnp.left_shift, {}),
    ("rshift", "BitwiseRightShift", "BitwiseRightShift", fnp.right_shift, {}),
]:
    setattr(Tensor, f"__{_name}__", _checked_pow(_method(_op, _fn, **_kw)) if _name == "pow"
            else _method(_op, _fn, **_kw))
    # PyTorch computes ``2 * x`` as ``x.mul(2)``: commutative ops keep the tensor first.
    if _name in ("add", "mul", "and", "or", "xor"):
        setattr(Tensor, f"__r{_name}__", _method(_rop, _fn, reflected=True, **_kw))
    else:
        setattr(Tensor, f"__r{_name}__", _method(_rop, _fn, reverse=True, reflected=True,
                                                 **_kw))
_rmod_plain = Tensor.__rmod__  # type: ignore[attr-defined]


def _number_remainder(y: Any, *, number: Any) -> Any:
    return _division.remainder_without_derivative(scalar_as(number, y.dtype, ()), y)


def _rmod(self: Tensor, other: Any) -> Tensor:
    """``number % tensor``. PyTorch's remainder(Scalar, Tensor) has no derivative formula:
    the result's node is NotImplemented (the tensor its one input), whose backward
    raises."""
    if isinstance(other, Tensor) or type(other) not in _PRIM_SCALARS or \
            not (self._requires_grad and is_recording()):
        return _rmod_plain(self, other)
    y = self.to(result_dtype(other, self))
    return apply_op("NotImplemented", _number_remainder, y, number=other, shown=(self,))


Tensor.__rmod__ = _rmod  # type: ignore[attr-defined]
# The other augmented assignments write in place too, as PyTorch's (``y = x; y //= 2``
# changes x): without them Python would rebind ``y`` to a new tensor.
for _name, _inplace in (("floordiv", "floor_divide_"), ("mod", "remainder_"), ("pow", "pow_"),
                        ("and", "bitwise_and_"), ("or", "bitwise_or_"), ("xor", "bitwise_xor_"),
                        ("lshift", "bitwise_left_shift_"), ("rshift", "bitwise_right_shift_")):
    setattr(Tensor, f"__i{_name}__",
            lambda self, other, _m=_inplace: getattr(self, _m)(other))
# Autocast: ``x ** y`` is pow; ``2 / x`` is PyTorch's ``x.reciprocal() * 2``.
for _name, _aten in (("__pow__", "pow"), ("__rpow__", "pow"), ("__rtruediv__", "reciprocal")):
    setattr(Tensor, _name, autocast_op(_aten)(getattr(Tensor, _name)))

for _name, _fn in [("eq", fnp.equal), ("ne", fnp.not_equal), ("lt", fnp.less),
                   ("le", fnp.less_equal), ("gt", fnp.greater), ("ge", fnp.greater_equal)]:
    setattr(Tensor, f"__{_name}__", _compare(_name.capitalize(), _fn))
    setattr(Tensor, _name, _compare(_name.capitalize(), _fn))
Tensor.greater, Tensor.less = Tensor.gt, Tensor.lt  # type: ignore[attr-defined]
Tensor.greater_equal, Tensor.less_equal = Tensor.ge, Tensor.le  # type: ignore[attr-defined]
Tensor.not_equal = Tensor.ne  # type: ignore[attr-defined]


def _named_binary(op: str, f: Callable[[Any, Any], Any], **kw: Any
                  ) -> Callable[..., Tensor]:
    def method(self: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
        return binary(_overload(op, other), f, self, other, alpha=alpha,
                      **kw)

    return method


def _div(self: Tensor, other: Any, *, rounding_mode: str | None = None) -> Tensor:
    """``self / other``; ``rounding_mode="floor"`` or ``"trunc"`` rounds the quotient (and
    keeps integer operands integer), as PyTorch's ``div``."""
    if rounding_mode is None:
        return binary("Div", fnp.divide, self, other, true_div=True)
    # div.Tensor_mode is PyTorch's third overload (DivBackward2), numbers included.
    if rounding_mode == "floor":
        return binary("Div:2", _division.floor_divide, self, other)
    if rounding_mode == "trunc":
        return binary("Div:2", _division.trunc_divide, self, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                       f"but found '{rounding_mode}'")


for _name, _op, _fn, _kw in [
    ("add", "Add", _plain.add, {}), ("sub", "Sub", _plain.subtract, {}),
    ("subtract", "Sub", _plain.subtract, {}), ("mul", "Mul", _plain.multiply, {}),
    ("multiply", "Mul", _plain.multiply, {}), ("div", "Div", fnp.divide, {"true_div": True}),
    ("divide", "Div", fnp.divide, {"true_div": True}),
    ("true_divide", "Div", fnp.divide, {"true_div": True}),
    ("floor_divide", "FloorDivide", _division.floor_divide, {}),
    ("remainder", "Remainder", _division.remainder, {}),
    ("fmod", "Fmod", _division.fmod, {}),
    ("maximum", "Maximum", _plain.maximum, {}), ("minimum", "Minimum", _plain.minimum, {}),
    ("atan2", "Atan2", fnp.arctan2, {"true_div": True}),
    ("hypot", "Hypot", fnp.hypot, {}), ("logaddexp", "Logaddexp", _plain.logaddexp, {}),
    ("bitwise_and", "BitwiseAnd", _plain.bitwise_and, {}),
    ("bitwise_or", "BitwiseOr", _plain.bitwise_or, {}),
    ("bitwise_xor", "BitwiseXor", _plain.bitwise_xor, {}),
    ("logical_and", "LogicalAnd", _plain.logical_and, {}),
    ("logical_or", "LogicalOr", _plain.logical_or, {}),
    ("logical_xor", "LogicalXor", _plain.logical_xor, {}),
]:
    setattr(Tensor, _name, _named_binary(_op, _fn, **_kw))
Tensor.atan2 = autocast_op("atan2")(Tensor.atan2)  # type: ignore[attr-defined]
Tensor.div = Tensor.divide = _div  # type: ignore[attr-defined]


def _primitive_unary() -> list[tuple[str, str, Callable[[Any], Any], builtins.bool]]:
    """The unary Tensor methods that are one primitive each: the primitives' definitions
    name the method (``torch_method``) and the node (``torch_node``)."""
    from funcgrad.core import PRIMITIVES  # noqa: PLC0415

    out = []
    for prim in PRIMITIVES.values():
        if prim.torch_method and getattr(prim, "arity", 0) == 1:
            float_only = getattr(prim, "operand_kinds", "") == "fc"
            out.append((prim.torch_method, prim.torch_node, prim.bind, float_only))
    return out


# Unary functions: (method name, PyTorch node name, function, float_only): the primitives'
# own, then aliases and the composite ones.
# Unary methods whose primitive's impl is this NumPy ufunc on floating point arrays: the
# no-grad path calls it without the engine's bookkeeping (same function, same numbers).
_HOST_UNARY: dict[str, Callable[[Any], Any]] = {
    n: getattr(np, n) for n in ("exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh",
                                "sqrt", "log1p", "expm1", "floor", "ceil", "square")}

_UNARY: list[tuple[str, str, Callable[[Any], Any], builtins.bool]] = [
    *_primitive_unary(),
    ("arcsin", "Asin", fnp.arcsin, True), ("arccos", "Acos", fnp.arccos, True),
    ("arctan", "Atan", fnp.arctan, True),
    ("log2", "Log2", fnp.log2, True), ("log10", "Log10", fnp.log10, True),
    ("square", "Pow", fnp.square, False), ("sgn", "Sgn", fnp.sign, False),
    ("trunc", "Trunc", fnp.trunc, False), ("frac", "Frac", lambda x: x - fnp.trunc(x), False),
    ("reciprocal", "Reciprocal", lambda x: 1.0 / x, True),
    ("isnan", "Isnan", fnp.isnan, False), ("isinf", "Isinf", fnp.isinf, False),
    ("sinc", "Sinc", fnp.sinc, True),
    ("deg2rad", "Deg2Rad", fnp.deg2rad, True), ("rad2deg", "Rad2Deg", fnp.rad2deg, True),
]

# PyTorch's ReciprocalBackward saves the result; funcgrad's rule for 1 / x keeps x.
_UNARY_SAVING_RESULT = frozenset({"reciprocal"})


_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
             "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _no_kernel(kernel: str) -> Callable[[Tensor], Tensor]:
    def refuse(t: Tensor) -> Tensor:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_TYPE_NAMES.get(t.dtype.name, t.dtype.name)}'")
    return refuse


def _refuse_bool(message: str) -> Callable[[Tensor], Tensor]:
    def refuse(t: Tensor) -> Tensor:
        raise RuntimeError(message)
    return refuse


def _float_input_then(name: str) -> Callable[[Tensor], Tensor]:
    return lambda t: cast(Tensor, getattr(Tensor, name)(_float_input(t)))


def _long_input_then(name: str) -> Callable[[Tensor], Tensor]:
    # PyTorch's square of a bool tensor is pow(x, 2): bool promotes to int64.
    return lambda t: cast(Tensor, getattr(Tensor, name)(cast(Any, t).to(D.int64)))


def _constant_bool(value: builtins.bool) -> Callable[[Tensor], Tensor]:
    return lambda t: Tensor._from_data(np.full(tuple(t.shape), value)).to(t.device)


# PyTorch's unary rules for integer and bool tensors where the primitive's operand kinds
# differ: (for bool, for the other integers); None leaves the primitive's own behaviour.
_INTEGER_UNARY: dict[str, tuple[Callable[[Tensor], Tensor] | None,
                                Callable[[Tensor], Tensor] | None]] = {
    **{n: (_no_kernel(f"{n}_vml_cpu"), Tensor.clone) for n in ("floor", "ceil", "trunc")},
    "frac": (_no_kernel("frac_cpu"), _no_kernel("frac_cpu")),
    "erf": (_float_input_then("erf"), _float_input_then("erf")),
    "erfc": (_float_input_then("erfc"), _float_input_then("erfc")),
    "sign": (Tensor.clone, None), "sgn": (Tensor.clone, None),
    "abs": (_no_kernel("abs_cpu"), None), "neg": (_refuse_bool(_NEG_BOOL), None),
    "isfinite": (_constant_bool(True), None), "isinf": (_constant_bool(False), None),
    "square": (_long_input_then("square"), None),
}


# The unary methods whose PyTorch kernel has integer and bool types only.
_INTEGER_ONLY_UNARY = frozenset({"bitwise_not"})


def _refuse_inexact(name: str, t: Tensor) -> None:
    if t.dtype.is_floating_point or t.dtype.is_complex:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_CPP[t.dtype.name]}\'')


def _unary_method(name: str, op: str, fn: Callable[[Any], Any], float_only: builtins.bool,
                  saves_result: builtins.bool
                  ) -> tuple[Callable[[Tensor], Tensor], Callable[[Tensor], Tensor]]:
    host = _HOST_UNARY.get(name)
    integer_rules = _INTEGER_UNARY.get(name)

    prim = getattr(fn, "__self__", None)
    prim = prim if isinstance(prim, Primitive) else None

    def method(self: Tensor) -> Tensor:
        if name in _INTEGER_ONLY_UNARY:
            _refuse_inexact(name, self)
        if integer_rules is not None and not (self.dtype.is_floating_point
                                              or self.dtype.is_complex):
            rule = integer_rules[0 if self.dtype is D.bool else 1]
            if rule is not None:
                return rule(self)
        x = _float_input(self) if float_only else self
        data = x._data
        if host is not None and type(data) is np.ndarray and data.dtype.kind == "f" and not (
                x._requires_grad and is_grad_enabled()):
            # Nothing to record: the NumPy ufunc the primitive's impl calls, directly (a 0-d
            # input gives a NumPy scalar: kept as a 0-d array, which the Tensor holds).
            out = host(data)
            return Tensor._from_data(out if type(out) is np.ndarray else np.asarray(out))
        if prim is not None:
            out = apply_prim(op, prim, (x,))
            if out is not None:
                return out
        return apply_op(op, fn, x)

    def inplace(self: Tensor) -> Tensor:
        if name in _INTEGER_ONLY_UNARY:
            _refuse_inexact(name, self)
        if (float_only or integer_rules is not None) and not (
                self.dtype.is_floating_point or self.dtype.is_complex):
            # PyTorch's integer kernel: it refuses, or its result (floor_ keeps the values,
            # erf_ computes in float) is written back if its dtype fits.
            out = method(self)
            check_result_cast(out.dtype, self.dtype)
            return self.copy_(out)
        return self._inplace(op, fn, saves_result=saves_result)

    method.__name__ = name
    inplace.__name__ = name + "_"
    return method, inplace


# The unary methods autocast runs in float32 on CUDA, under PyTorch's operator names.
_AUTOCAST_UNARY = {"arccos": "acos", "arcsin": "asin"}

for _uname, _uop, _ufn, _ufloat in _UNARY:
    _m, _i = _unary_method(_uname, _uop, _ufn, _ufloat, _uname in _UNARY_SAVING_RESULT)
    _aten = _AUTOCAST_UNARY.get(_uname, _uname)
    if _aten in CUDA_POLICY:
        _m = autocast_op(_aten)(_m)
    setattr(Tensor, _uname, _m)
    if not _uname.startswith("is"):
        setattr(Tensor, _uname + "_", _i)

_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
               "uint8": "Byte", "bool": "Bool"}


def _round_to(decimals: builtins.int) -> Callable[[Any], Any]:
    # PyTorch's formula: the power of ten in the tensor's type, rint, then back.
    scale = 10.0 ** builtins.abs(decimals)
    if decimals >= 0:
        return lambda x: fnp.round(x * scale) / scale
    return lambda x: fnp.round(x / scale) * scale


def _rounding(plain: Callable[..., Tensor], inplace: builtins.bool) -> Callable[..., Tensor]:
    def method(self: Tensor, *, decimals: builtins.int | None = None) -> Tensor:
        if decimals is None:
            if self.dtype.is_floating_point or self.dtype.is_complex:
                return plain(self)
            if self.dtype is D.bool:
                raise NotImplementedError('"round_vml_cpu" not implemented for \'Bool\'')
            return self if inplace else self.clone()  # integers are already round
        if not self.dtype.is_floating_point:
            raise NotImplementedError(f'"round_cpu" not implemented for '
                                      f"'{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}'")
        fn = _round_to(decimals)
        # round.decimals is PyTorch's second overload (RoundBackward1)
        return self._inplace("Round:1", fn) if inplace else apply_op("Round:1", fn, self)

    method.__name__ = plain.__name__
    return method


setattr(Tensor, "round", _rounding(getattr(Tensor, "round"), False))  # noqa: B009, B010
setattr(Tensor, "round_", _rounding(getattr(Tensor, "round_"), True))  # noqa: B009, B010


def _abs_value(v: Any) -> Any:
    if np.issubdtype(v.dtype, np.complexfloating):
        return fnp.abs(v)  # a real modulus; its derivative is the same on both faces
    # x * sign(x) has PyTorch's derivative; adding 0 turns -0.0 into 0.0, as |x| gives.
    return v * fnp.sign(v) + 0


def _abs(self: Tensor) -> Tensor:
    """``|x|`` with PyTorch's derivative, sign(x) (0 at 0; the engine's abs has JAX's, 1)."""
    if self.dtype is D.bool:
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')
    return apply_op("Abs", _abs_value, self)


def _abs_(self: Tensor) -> Tensor:
    if self.dtype is D.bool:
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')
    return self._inplace("Abs", _abs_value)


Tensor.abs = _abs  # type: ignore[attr-defined]
Tensor.abs_ = _abs_  # type: ignore[attr-defined]
Tensor.absolute = _abs  # type: ignore[attr-defined]


def same_vector_dtypes(a: Any, b: Any) -> None:
    """PyTorch's dtype check of dot and vdot (their kernel is dot's)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is not b.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{_CPP[a.dtype.name]} and {_CPP[b.dtype.name]}")


def _matmul_shape_error(sa: tuple[builtins.int, ...], sb: tuple[builtins.int, ...]
                        ) -> str | None:
    """PyTorch's message for operands ``@`` cannot multiply (None when they fit)."""
    na, nb = len(sa), len(sb)
    k_b = sb[0] if nb == 1 else sb[-2]
    if sa[-1] == k_b:
        return None
    if na == 1 and nb == 1:
        return (f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have "
                f"the same number of elements, but got {sa[0]} and {sb[0]} elements "
                "respectively")
    if nb == 1:
        rows = math.prod(sa[:-1])
        return f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})"
    if na <= 2 and nb == 2:
        rows = sa[0] if na == 2 else 1
        return (f"mat1 and mat2 shapes cannot be multiplied ({rows}x{sa[-1]} and "
                f"{sb[0]}x{sb[1]})")
    batch = math.prod(np.broadcast_shapes(sa[:-2], sb[:-2]))
    return (f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, "
            f"{sa[-1]}] but got: [{batch}, {k_b}].")


@autocast_op("matmul")
def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product (PyTorch's ``@``): both operands must have one dtype."""
    if getattr(a, "_sparse_kind", False) or getattr(b, "_sparse_kind", False):
        # (funcgrad.torch._sparse: a sparse operand's product; a strided one times a
        # sparse one through the transposes)
        if getattr(a, "_sparse_kind", False):
            return cast(Tensor, a.matmul(b))
        out = b.t().matmul(a.t()).t()
        if isinstance(out.grad_fn, GradFn):
            name_node(out.grad_fn, "Mm")
        return cast(Tensor, out)
    if isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is not b.dtype:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{_CPP[a.dtype.name]} and {_CPP[b.dtype.name]}")
        if a.ndim == 2 and b.ndim == 1:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{_CPP[b.dtype.name]}, {_CPP[a.dtype.name]}, and "
                               f"{_CPP[b.dtype.name]}")
        if a.ndim == 2 and b.ndim == 2:
            raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                               f"{cpp_type_name(a.dtype)} != {cpp_type_name(b.dtype)}")
        raise RuntimeError(f"expected scalar type {_CPP[a.dtype.name]} but found "
                           f"{_CPP[b.dtype.name]}")
    na, nb = getattr(a, "ndim", 0), getattr(b, "ndim", 0)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na >= 3 and nb >= 3:
        # PyTorch's matmul broadcasts the batch dimensions (infer_size) before the product.
        _check_broadcast(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    msg = _matmul_shape_error(tuple(a.shape), tuple(b.shape))
    if msg is not None:
        raise RuntimeError(msg)
    if getattr(a, "dtype", None) is D.bool:
        # PyTorch has no Bool product kernel: the error names the one matmul reaches.
        kernel = "bmm" if nb >= 3 else ("dot" if na == 1 else "addmv_impl_cpu") if nb == 1 \
            else "addmm_impl_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    # The node PyTorch's matmul ends with: its 1-D and 2-D kernels, else the view of the
    # folded or batched product (a clone when a 2-D left side that requires grad meets a
    # batch on the right).
    op = {(2, 2): "Mm", (1, 1): "Dot", (2, 1): "Mv", (1, 2): "Squeeze:4"}.get((na, nb))
    if op in {"Mm", "Mv"} and isinstance(a, Tensor) and isinstance(b, Tensor) \
            and a._data.dtype.kind == "f":
        # One dot_general (fnp.matmul's whole work for these ranks), recorded directly.
        out = apply_prim(op, _DOT_GENERAL, (a, b), dimension_numbers=_MATRIX_PRODUCT)
        if out is not None:
            return out
    if op is None:
        op = "Clone" if na == 2 and getattr(a, "requires_grad", False) else "UnsafeView"
    return apply_op(op, fnp.matmul, a, b)


_DOT_GENERAL = _L.dot_general_p
_MATRIX_PRODUCT = (((1,), (0,)), ((), ()))

Tensor.__matmul__ = lambda self, other: matmul(self, other)  # type: ignore[operator]
Tensor.__rmatmul__ = lambda self, other: matmul(other, self)  # type: ignore[attr-defined]


def maximum(a: Any, b: Any) -> Tensor:
    return binary("Maximum", _plain.maximum, a, b, shown=False)


def minimum(a: Any, b: Any) -> Tensor:
    return binary("Minimum", _plain.minimum, a, b, shown=False)


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``x`` where ``condition`` else ``y`` (broadcast, PyTorch's promotion); with the
    condition alone, the indices of its nonzero entries (``nonzero(as_tuple=True)``)."""
    if x is None and y is None:
        return condition.nonzero(as_tuple=True)
    if x is None or y is None:
        raise TypeError("where() takes the condition alone, or the condition, input and "
                        "other")
    if isinstance(condition, Tensor) and condition.dtype is not D.bool:
        if condition.dtype is not D.uint8:
            raise RuntimeError("where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {_CPP[condition.dtype.name]}")
        warn_once("where received a uint8 condition tensor. This behavior is deprecated and "
                  "will be removed in a future version of PyTorch. Use a boolean condition "
                  "instead.")
    broadcast_shapes_as_torch(*(tuple(v.shape) for v in (condition, x, y)
                                if isinstance(v, Tensor)))
    dt = result_dtype(x, y)
    if dt.np.kind in "iu":
        for v in (x, y):
            if type(v) is builtins.int:
                _check_converts(v, dt)
    return apply_op("Where", lambda c, a, b: fnp.where(c, _cast_to(a, dt), _cast_to(b, dt)),
                    condition, _fixed_scalar(x, dt), _fixed_scalar(y, dt))


# The C++ type names PyTorch's checked conversion of a number prints.
_CPP_INTEGER = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
                "uint64": "uint64_t", "float32": "float", "float16": "c10::Half",
                "bfloat16": "c10::BFloat16", "float64": "double"}
_F32_MAX = builtins.float(np.finfo(np.float32).max)


def check_scalar_fits(v: Any, dt: D.dtype) -> None:
    """A Python number written into a tensor (``full``, ``fill_``, ``masked_fill``, clamp
    bounds) must fit its dtype, as PyTorch's checked conversion requires: an int into an
    integer dtype; a finite float into an integer dtype or beyond float32's range, or into
    a half type within float32's range but beyond the half type's (a float beyond float32's
    becomes inf there first, which is no overflow)."""
    if type(v) is builtins.complex and dt.np.kind not in "cb":
        # A complex number fits a real dtype only with no imaginary part.
        if v.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_CPP_INTEGER[dt.name]} "
                               "without overflow")
        v = v.real
    if type(v) is builtins.int and dt.np.kind in "iu":
        _check_converts(v, dt)
    elif type(v) is builtins.float and (math.isfinite(v) or dt.np.kind in "iu"):
        if dt.np.kind in "iu":
            # c10's overflows<integer>(double): NaN and the infinities never fit, nor does a
            # negative float an unsigned type (unlike a negative int).
            info = np.iinfo(dt.np)
            fits = info.min <= v <= info.max
        elif dt is D.float32:
            fits = abs(v) <= _F32_MAX
        elif dt is D.float16 or dt is D.bfloat16:
            fits = abs(v) > _F32_MAX or abs(v) <= builtins.float(
                np.finfo(dt.np).max)
        else:
            fits = True
        if not fits:
            raise RuntimeError(f"value cannot be converted to type {_CPP_INTEGER[dt.name]} "
                               "without overflow")


_check_int_value = check_scalar_fits


def _check_converts(v: builtins.int, dt: D.dtype) -> None:
    """PyTorch's checked conversion of a Python integer to the integer dtype ``dt`` (a
    negative value fits an unsigned type down to minus its largest value, as in C++)."""
    if v >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if v < -2 ** 63:
        raise OverflowError("can't convert negative int to unsigned")
    info = np.iinfo(dt.np)
    if v > info.max or v < (info.min if info.min else -builtins.int(info.max)):
        raise RuntimeError(f"value cannot be converted to type {_CPP_INTEGER[dt.name]} "
                           "without overflow")


def _draws(generator: Any) -> MTStream:
    """The host stream a CPU tensor's random fill draws from."""
    return rng() if generator is None else cast(MTStream, generator._rng)


# ----------------------------------------------------------------- repr


_DEFAULT_SHOWN = ("int64", "bool")


_VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
              "over calling .item() on a Tensor, please try to rewrite what you're doing with "
              "other operations. If error is occurring somewhere inside PyTorch internals, "
              "please file a bug report.")


def _refuse_batched(t: Tensor, message: str) -> None:
    """PyTorch's vmap refuses to read a batched tensor's values (one per batch element)
    as Python values: its error, instead of the traced-value one."""
    d = t._data
    if isinstance(d, Tracer) and type(d).__name__ == "BatchTracer":
        raise RuntimeError(message)


def _repr(t: Tensor) -> str:
    if type(t._data) is MetaBuffer:
        return _meta_repr(t)
    try:
        arr = t._host()
    except RuntimeError:
        return f"tensor(<traced {t.dtype} {list(t.shape)}>)"
    # PyTorch's order: the device, then the size, then the dtype and the graph.
    extras = [f"device='{t.device}'"] if t.device.type != "cpu" else []
    if arr.size == 0:
        body = "[]"
        if arr.shape != (0,):
            extras.append(f"size={tuple(arr.shape)}")
    else:
        shown = arr.astype(np.float32) if t.dtype is D.bfloat16 else arr
        body = format_tensor_data(shown, len("tensor("))
        if not _repr_module.PRINT_OPTS.edgeitems:
            extras.append(f"size={tuple(arr.shape)}")
    dt = t.dtype
    default = dt is D.get_default_dtype() or dt is D.default_complex()
    if arr.size == 0:
        # An empty tensor has no values to tell its dtype by: PyTorch names every dtype
        # but the default float one (complex64 and int64 included).
        if dt is not D.get_default_dtype():
            extras.append(f"dtype={dt}")
    elif not (default or dt.name in _DEFAULT_SHOWN):
        extras.append(f"dtype={dt}")
    if t.grad_fn is not None:
        # The C++ nodes' names come without their namespace (``<CopySlices>``).
        extras.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    tangent = _dual.tangent_of(t)
    if tangent is not None:  # (torch.autograd.forward_ad: a 0-d tangent shows as a number)
        extras.append(f"tangent={tangent.item() if tangent.ndim == 0 else tangent}")
    return _add_suffixes("tensor(" + body, extras, len("tensor("))


def _meta_repr(t: Tensor) -> str:
    """PyTorch's repr of a meta tensor: no values, its size, and its dtype unless the
    default one (int64 included, unlike a CPU tensor's)."""
    extras = ["device='meta'", f"size={tuple(t.shape)}"]
    if t.dtype is not D.get_default_dtype():
        extras.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return _add_suffixes("tensor(...", extras, len("tensor("))


def _add_suffixes(text: str, suffixes: list[str], indent: builtins.int) -> str:
    # PyTorch's rule: a suffix that would pass the line width starts a new line.
    width = _repr_module.PRINT_OPTS.linewidth
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > width:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
