"""More Tensor methods of PyTorch 2.13: storages (``untyped_storage``, ``storage``,
``storage_type``), ``set_`` (point a tensor at another's memory), ``as_subclass``, the
deprecated ``resize``/``resize_as`` (shape changes recorded as ``ResizeBackward``),
``slice_inverse``, ``hash_tensor``, ``map2_``, ``module_load``, what PyTorch answers for a
dense tensor (``to_dense``, ``dense_dim``, ``sparse_dim``, ``is_coalesced``), and the
removed methods and absent backends, which raise what PyTorch raises (``eig``,
``lstsq``, ``solve``, ``symeig``, ``reinforce``, ``xpu``, ``ipu``, ``mtia``).

A storage is a window on the memory a tensor lives in (``_tensor_storage``): the array at
the end of its buffer's ``.base`` chain, seen as bytes.

>>> import funcgrad.torch as torch
>>> x = torch.arange(4.0)
>>> x[1:].untyped_storage().nbytes(), x.dense_dim(), x.sparse_dim()
(16, 1, 0)
>>> y = torch.zeros(0).set_(x, 1, (2,), (2,))
>>> y.add_(10); x
tensor([11., 13.])
tensor([ 0., 11.,  2., 13.])
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
import warnings
from collections.abc import Callable
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _dtypes as D
from funcgrad.torch._device import array_module
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._tensor import _CPP, Tensor, apply_op
from funcgrad.torch._tensor_storage import (
    _check_geometry,
    _is_buffer,
    _offset_of,
    _root,
    _storage_size,
    _window,
)
from funcgrad.torch.autograd import Function
from funcgrad.transforms.custom import custom_vjp

# ------------------------------------------------------------------ storages


def _bytes_of(root: Any) -> Any:
    """The memory of an owning array as a flat uint8 array (a view: writes go through)."""
    flat = root.reshape(-1, order="F" if root.flags.f_contiguous and not
                        root.flags.c_contiguous else "C")
    return flat.view(array_module(root).uint8)


def _storage_root(t: Tensor) -> Any:
    d = t._data
    if not _is_buffer(d):
        raise RuntimeError("Cannot access storage of a tensor being traced (inside "
                           "torch.compile or a torch.func transform): it has no memory yet")
    return _root(d)


class UntypedStorage:
    """The bytes of a tensor's memory (``Tensor.untyped_storage()``): indexing reads and
    writes single bytes, which the tensors on it see.

    >>> import funcgrad.torch as torch
    >>> s = torch.tensor([1], dtype=torch.int16).untyped_storage()
    >>> s.nbytes(), s.tolist()
    (2, [1, 0])
    """

    def __init__(self, root: Any, device: Any) -> None:
        self._root = root
        self._bytes = _bytes_of(root)
        self.device = device

    def nbytes(self) -> builtins.int:
        return builtins.int(self._bytes.size)

    def size(self) -> builtins.int:
        return self.nbytes()

    def __len__(self) -> builtins.int:
        return self.nbytes()

    def element_size(self) -> builtins.int:
        return 1

    def data_ptr(self) -> builtins.int:
        if type(self._root) is np.ndarray:
            return builtins.int(self._root.__array_interface__["data"][0])
        return builtins.int(self._root.data.ptr)

    @property
    def is_cuda(self) -> builtins.bool:
        return builtins.bool(self.device.type == "cuda")

    is_sparse = False

    def untyped(self) -> UntypedStorage:
        return self

    def __getitem__(self, i: builtins.int) -> builtins.int:
        return builtins.int(self._bytes[i])

    def __setitem__(self, i: Any, value: Any) -> None:
        self._bytes[i] = value

    def tolist(self) -> list[builtins.int]:
        return [builtins.int(b) for b in array_module(self._bytes).asnumpy(self._bytes)] \
            if self.is_cuda else cast(list[builtins.int], self._bytes.tolist())

    def _info(self) -> str:
        return f"[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"

    def __str__(self) -> str:
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + self._info()

    __repr__ = __str__


class TypedStorage:
    """A storage seen as elements of one dtype (``Tensor.storage()``, deprecated in
    PyTorch). Indexing reads and writes Python numbers.

    >>> import funcgrad.torch as torch
    >>> torch.FloatStorage.dtype
    torch.float32
    """

    dtype: Any = None
    is_sparse = False

    def __init__(self, untyped: UntypedStorage, dtype: Any) -> None:
        self._untyped_storage = untyped
        self.dtype = dtype
        self._values = untyped._bytes[:untyped.nbytes() // dtype.itemsize * dtype.itemsize] \
            .view(dtype.np)

    @property
    def device(self) -> Any:
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> builtins.bool:
        return self._untyped_storage.is_cuda

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def size(self) -> builtins.int:
        return builtins.int(self._values.size)

    def __len__(self) -> builtins.int:
        return self.size()

    def element_size(self) -> builtins.int:
        return builtins.int(self.dtype.itemsize)

    def nbytes(self) -> builtins.int:
        return self._untyped_storage.nbytes()

    def data_ptr(self) -> builtins.int:
        return self._untyped_storage.data_ptr()

    def __getitem__(self, i: builtins.int) -> Any:
        return self._values[i].item()

    def __setitem__(self, i: Any, value: Any) -> None:
        self._values[i] = value

    def tolist(self) -> list[Any]:
        vals = self._values
        host = array_module(vals).asnumpy(vals) if self.is_cuda else vals
        return cast(list[Any], host.tolist())

    def __str__(self) -> str:
        info = (f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of "
                f"size {len(self)}]")
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __repr__ = __str__


# The legacy per-dtype storage classes that Tensor.storage_type() names (torch.FloatStorage...).
_LEGACY_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage",
                 "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
                 "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
                 "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
                 "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
LEGACY_STORAGES: dict[str, type[TypedStorage]] = {
    cls_name: type(cls_name, (TypedStorage,), {"dtype": getattr(D, dt), "__module__": "torch",
                                               "__qualname__": cls_name})
    for dt, cls_name in _LEGACY_NAMES.items()}

_TYPED_WARNING = ("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to "
                  "you if you are using storages directly.  To access UntypedStorage directly, "
                  "use tensor.untyped_storage() instead of tensor.storage()")
# PyTorch warns once per process (torch.storage._warn_typed_storage_removal).
_warned = [False]


def _warn_typed() -> None:
    if not _warned[0]:
        _warned[0] = True
        warnings.warn(_TYPED_WARNING, UserWarning, stacklevel=3)


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The memory the tensor lives in, as bytes (all of it: a view's storage is its
    base's).

    >>> import funcgrad.torch as torch
    >>> x = torch.zeros(4)
    >>> x[2:].untyped_storage().data_ptr() == x.data_ptr()
    True
    """
    return UntypedStorage(_storage_root(self), self.device)


def storage(self: Tensor) -> TypedStorage:
    """The memory the tensor lives in, as elements of its dtype (PyTorch's deprecated
    ``TypedStorage``; warns once, as PyTorch does)."""
    _warn_typed()
    return TypedStorage(untyped_storage(self), self.dtype)


def storage_type(self: Tensor) -> Any:
    """The legacy storage class of the tensor's dtype (``torch.FloatStorage``...; None for
    dtypes that have none); warns once, as PyTorch does."""
    _warn_typed()
    return LEGACY_STORAGES.get(_LEGACY_NAMES.get(self.dtype.name, ""))


# ------------------------------------------------------------------ set_

# C++'s names of the element types, which set_'s dtype error prints.
_TYPE_META = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
              "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t"}


@custom_vjp
def _no_derivative(x: Any) -> Any:
    return x


def _no_derivative_fwd(x: Any) -> tuple[Any, None]:
    return x, None


def _no_derivative_bwd(res: None, g: Any) -> Any:
    raise RuntimeError("derivative for set_ is not implemented")


_no_derivative.defvjp(_no_derivative_fwd, _no_derivative_bwd)


def set_(self: Tensor, source: Any = None, storage_offset: Any = None, size: Any = None,
         stride: Any = None) -> Tensor:
    """Point this tensor at other memory: ``set_()`` empties it, ``set_(t)`` makes it look
    at ``t``'s memory as ``t`` does, ``set_(t_or_storage, offset, size, stride)`` at a
    window of that memory (sizes/strides in elements; contiguous strides by default).
    Writes through either tensor are seen by the other.

    funcgrad cannot grow the shared memory: a window past its end is an error (PyTorch
    reallocates the storage there).

    >>> import funcgrad.torch as torch
    >>> x = torch.arange(4.0)
    >>> torch.zeros(1).set_(x, 0, (2, 2))
    tensor([[0., 1.],
            [2., 3.]])
    """
    self._check_inplace()
    if source is None:
        if storage_offset is not None or size is not None:
            raise TypeError("set_() missing required argument 'source'")
        xp = array_module(self._data) if _is_buffer(self._data) else np
        self._data = xp.zeros((0,), self.dtype.np)
        self._vc[0] += 1
        return self
    if isinstance(source, TypedStorage):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {_TYPE_META[self.dtype.name]} or "
                               f"an UntypedStorage, but got type {_CPP[source.dtype.name]} "
                               "for argument 1 'storage'")
        source = source.untyped()
    if isinstance(source, UntypedStorage):
        root = source._root
        n = source.nbytes() // self.dtype.itemsize
        src_data = _window(root, (n,), (1,), 0) if root.dtype == self.dtype.np else \
            source._bytes[:n * self.dtype.itemsize].view(self.dtype.np)
        geometry: tuple[tuple[builtins.int, ...], tuple[builtins.int, ...], builtins.int] = (
            (n,), (1,), 0)
        src_tensor = None
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {_TYPE_META[source.dtype.name]} "
                               f"to a tensor of type {_TYPE_META[self.dtype.name]}")
        src_data = source._data
        geometry = (tuple(source.shape), tuple(cast(Any, source).stride()), _offset_of(source))
        src_tensor = source
    else:
        raise TypeError(
            f"set_() received an invalid combination of arguments - got "
            f"({type(source).__name__}), but expected one of:\n * ()\n * (torch.Storage "
            "source)\n * (torch.Storage source, int storage_offset, tuple of ints size, tuple "
            "of ints stride = None)\n * (Tensor source)\n * (Tensor source, int "
            "storage_offset, tuple of ints size, tuple of ints stride = None)\n")
    if size is not None:
        shape = tuple(builtins.int(s) for s in size)
        if stride is None:
            stride = tuple(math.prod(shape[k + 1:]) for k in range(len(shape)))
        geometry = (shape, tuple(builtins.int(s) for s in stride),
                    builtins.int(storage_offset or 0))
    shape, strides, offset = geometry
    if not _is_buffer(src_data):
        # A traced source has no memory to share: take its values.
        self._data = src_data if size is None else fnp.reshape(src_data, shape)
    else:
        _check_geometry(self, shape, strides, offset, _storage_size(src_data))
        self._data = _window(src_data, shape, strides, offset)
    self._vc[0] += 1
    recorded = is_grad_enabled() and (self._requires_grad or (
        src_tensor is not None and src_tensor._requires_grad))
    if recorded:
        # As in PyTorch, the result takes part in the graph but has no derivative.
        held = src_tensor if src_tensor is not None and src_tensor._requires_grad else \
            self._snapshot()
        node = cast(Tensor, apply_op("NotImplemented", _no_derivative, held))
        self.grad_fn, self._out_index = node.grad_fn, node._out_index
        self._requires_grad = True
    return self


# ------------------------------------------------------------------ resize


class Resize(Function):
    """PyTorch's ``torch.autograd._functions.Resize``: the deprecated out-of-place resize
    (same number of elements; memory shared when the input is contiguous)."""

    @staticmethod
    def forward(ctx: Any, tensor: Tensor, sizes: Any) -> Tensor:
        ctx.sizes = sizes
        # PyTorch multiplies the sizes as given: resize((2, 3)) makes a tuple, and fails.
        ctx.numel = functools.reduce(operator.mul, sizes, 1)
        if tensor.numel() != ctx.numel:
            raise RuntimeError(
                "requested resize to {} ({} elements in total), but the given tensor has a "
                "size of {} ({} elements). autograd's resize can only change the shape of a "
                "given tensor, while preserving the number of elements. ".format(
                    "x".join(map(str, sizes)), ctx.numel, "x".join(map(str, tensor.size())),
                    tensor.numel()))
        ctx.input_sizes = tensor.size()
        return tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx: Any, grad_output: Tensor) -> Any:
        return grad_output.contiguous().view(ctx.input_sizes), None


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """``self`` viewed with the shape ``sizes`` (same number of elements; deprecated in
    PyTorch, which warns).

    >>> import funcgrad.torch as torch, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.arange(4.0).resize(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return cast(Tensor, Resize.apply(self, sizes))


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """``resize`` to the shape of ``tensor`` (deprecated in PyTorch, which warns)."""
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return cast(Tensor, Resize.apply(self, tensor.size()))


# ------------------------------------------------------------------ subclasses, dense


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """The same tensor (memory, version counter, graph) as an instance of the Tensor
    subclass ``cls``.

    >>> import funcgrad.torch as torch
    >>> class Mine(torch.Tensor):
    ...     pass
    >>> m = torch.ones(2).as_subclass(Mine)
    >>> type(m).__name__, m.sum()
    ('Mine', tensor(2.))
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    base = self
    if self._requires_grad and is_grad_enabled():
        base = cast(Tensor, apply_op("Alias", lambda x: x, self))
        base._data = self._data
    out: Tensor = object.__new__(cls)
    for slot in Tensor.__slots__:
        # (a slot set only on some tensors, such as _function_view, is copied where set)
        if slot != "__weakref__" and hasattr(base, slot):
            object.__setattr__(out, slot, getattr(base, slot))
    out._vc, out._grad, out._hooks, out._accum = self._vc, None, (), None
    if base is self:
        out.grad_fn = self.grad_fn
    return out


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """The tensor itself (a strided tensor is dense), converted to ``dtype`` if given.

    >>> import funcgrad.torch as torch
    >>> x = torch.ones(2)
    >>> x.to_dense() is x
    True
    """
    if dtype is None or D.to_torch(dtype) is self.dtype:
        return self
    return self.to(dtype)


def dense_dim(self: Tensor) -> builtins.int:
    """The number of dense dimensions: all of them for a strided tensor."""
    return self.dim()


def sparse_dim(self: Tensor) -> builtins.int:
    """The number of sparse dimensions: none for a strided tensor."""
    return 0


def is_coalesced(self: Tensor) -> builtins.bool:
    """Only sparse COO tensors are coalesced or not; a strided tensor raises, as in
    PyTorch."""
    raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")


def _volatile_get(self: Tensor) -> builtins.bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


def _volatile_set(self: Tensor, value: Any) -> None:
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", stacklevel=2)


def _grad_dtype(self: Tensor) -> Any:
    """The dtype a leaf's ``.grad`` gets: its own (funcgrad cannot set another)."""
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self.dtype


# ------------------------------------------------------------------ slice_inverse


def slice_inverse(self: Tensor, src: Tensor, dim: builtins.int = 0, start: Any = None,
                  end: Any = None, step: builtins.int = 1) -> Tensor:
    """The tensor that ``self`` is ``src.slice(dim, start, end, step)`` of: a view of
    ``self``'s memory with ``src``'s sizes, strides and offset. Its gradient flows to
    ``self`` through the slice (``SliceInverseBackward0``).

    >>> import funcgrad.torch as torch
    >>> x = torch.arange(6.0).view(2, 3)
    >>> torch.slice_inverse(x[:, 1:], x, 1, 1)
    tensor([[0., 1., 2.],
            [3., 4., 5.]])
    """
    d = self._data
    shape, strides = tuple(src.shape), tuple(cast(Any, src).stride())
    offset = _offset_of(src)
    if _is_buffer(d):
        _check_geometry(self, shape, strides, offset, _storage_size(d))
        window = _window(d, shape, strides, offset)
    else:
        window = None
    if not (self._requires_grad and is_grad_enabled()) and window is not None:
        out = Tensor._from_data(window)
        out._vc, out._view_flag, out._inference = self._vc, True, self._inference
        out._view_base = self if self._view_base is None else self._view_base
        return out
    dim = dim % builtins.max(src.dim(), 1)
    idx = (slice(None),) * dim + (slice(start, end, step),)
    if window is None:
        raise RuntimeError("slice_inverse of a traced tensor: funcgrad has no memory to look "
                           "at outside the slice")
    held = np.array(window) if type(window) is np.ndarray else window.copy()
    return cast(Tensor, apply_op("SliceInverse",
                                 lambda x: fnp.asarray(held).at[idx].set(x), self))


# ------------------------------------------------------------------ hash_tensor


def _hash_words(x: np.ndarray) -> np.ndarray:
    """Each element widened to 64 bits (float64 or int64) and read as uint64."""
    kind = x.dtype.kind
    if kind == "c" or x.dtype == np.uint64:
        name = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(
            x.dtype.name, "UInt64")
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{name}'")
    floating = kind == "f" or x.dtype.name == "bfloat16"
    return np.asarray(x.astype(np.float64 if floating else np.int64)).view(np.uint64)


def hash_tensor(self: Tensor, dim: Any = None, *, keepdim: builtins.bool = False,
                mode: builtins.int = 0) -> Tensor:
    """The xor of the tensor's elements (over ``dim``), each widened to 64 bits (float64
    or int64) and read as a ``uint64``; mode 0 is the only mode, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> torch.hash_tensor(torch.tensor([3, 5]))
    tensor(6, dtype=torch.uint64)
    """
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    nd = self.dim()
    if dim is None or (isinstance(dim, (list, tuple)) and not dim):
        axes: tuple[builtins.int, ...] = tuple(range(nd))
        if self.numel() == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
    else:
        dims = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
        lo, hi = (-nd, nd - 1) if nd else (-1, 0)
        for a in dims:
            if not lo <= a <= hi:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{lo}, {hi}], but got {a})")
        axes = tuple(a % builtins.max(nd, 1) for a in dims) if nd else ()
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
        for a in axes:
            if self.shape[a] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero "
                                 "size.")

    words = _hash_words(np.asarray(self._host()))
    out = words
    if axes:
        out = np.bitwise_xor.reduce(words, axis=axes)
        if keepdim:
            out = np.expand_dims(out, axes)
    return Tensor._from_data(np.asarray(out, np.uint64)).to(self.device)


# ------------------------------------------------------------------ map2_, module_load


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[..., Any]) -> Tensor:  # noqa: A002
    """Each entry replaced by ``callable(entry, x's entry, y's entry)`` (``x`` and ``y``
    broadcast to this tensor), in place; for tensors that do not require grad.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(2).map2_(torch.ones(2), torch.tensor([1.0, 2.0]), lambda a, b, c: b + c)
    tensor([2., 3.])
    """
    if builtins.any(t._requires_grad for t in (self, x, y)):
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use "
                           "var.detach().map2_() instead.")
    a = np.asarray(self._host()).reshape(-1)
    b = np.broadcast_to(np.asarray(x._host()), tuple(self.shape)).reshape(-1)
    c = np.broadcast_to(np.asarray(y._host()), tuple(self.shape)).reshape(-1)
    kind = self.dtype
    want: type = builtins.complex if kind.is_complex else builtins.float if \
        kind.is_floating_point else builtins.bool if kind.name == "bool" else builtins.int
    vals = []
    for p, q, r in zip(a, b, c):
        v = callable(p.item(), q.item(), r.item())
        if isinstance(v, (str, bytes)) or not isinstance(v, (builtins.int, builtins.float,
                                                              builtins.complex, np.generic)):
            noun = "real number" if want is builtins.float else want.__name__
            raise TypeError(f"must be {noun}, not {type(v).__name__}")
        vals.append(v)
    new = np.asarray(vals, a.dtype).reshape(tuple(self.shape))
    d = self._data
    if type(d) is np.ndarray and d.flags.writeable:
        d[...] = new
    else:
        self._data = array_module(d).asarray(new) if _is_buffer(d) else new
    return self


def module_load(self: Tensor, other: Tensor, assign: builtins.bool = False) -> Tensor:
    """How ``load_state_dict`` turns ``other`` into this parameter's new value when
    swapping: ``other.detach()`` with ``assign``, else ``self.copy_(other).detach()``."""
    if assign:
        return other.detach()
    return cast(Tensor, cast(Any, self).copy_(other)).detach()


# ------------------------------------------------------------------ removed / absent

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_EIG = (_REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
        "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)")
_LSTSQ = (_REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
          "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
          "decomposition in the returned tuple (although it returns other information about "
          "the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
          "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
          "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
          "residuals are in the field 'residuals' of the returned named tuple.\n\nThe "
          "unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
          "should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SOLVE = (_REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
          "`torch.linalg.solve` has its arguments reversed and does not return the LU "
          "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used "
          "with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should "
          "be replaced with:\nX = torch.linalg.solve(A, B)")
_SYMEIG = (_REMOVED + "The default behavior has changed from using the upper triangular "
           "portion of the matrix by default to using the lower triangular portion.\n\nL, _ = "
           "torch.symeig(A, upper=upper) should be replaced with:\nL = "
           "torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
           "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
           "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_REINFORCE = (
    "reinforce() was removed.\nUse torch.distributions instead.\nSee "
    "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\nprobs = "
    "policy_network(state)\naction = probs.multinomial()\nnext_state, reward = "
    "env.step(action)\naction.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = "
    "policy_network(state)\n# NOTE: categorical is equivalent to what used to be called "
    "multinomial\nm = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")


def eig(self: Tensor, eigenvectors: builtins.bool = False) -> Any:
    """Removed in PyTorch 1.9: raises PyTorch's message (use ``torch.linalg.eig``)."""
    raise RuntimeError(_EIG)


def lstsq(self: Tensor, other: Tensor) -> Any:
    """Removed in PyTorch 1.9: raises PyTorch's message (use ``torch.linalg.lstsq``)."""
    raise RuntimeError(_LSTSQ)


def solve(self: Tensor, other: Tensor) -> Any:
    """Removed in PyTorch 1.9: raises PyTorch's message (use ``torch.linalg.solve``)."""
    raise RuntimeError(_SOLVE)


def symeig(self: Tensor, eigenvectors: builtins.bool = False) -> Any:
    """Removed in PyTorch 1.9: raises PyTorch's message (use ``torch.linalg.eigh``)."""
    raise RuntimeError(_SYMEIG)


def reinforce(self: Tensor, reward: Any) -> Any:
    """Removed from PyTorch: raises its message (use ``torch.distributions``)."""
    raise RuntimeError(_REINFORCE)


def xpu(self: Tensor, device: Any = None, non_blocking: builtins.bool = False,
        memory_format: Any = None) -> Tensor:
    """Intel GPUs: not built in, as in the PyTorch builds without XPU."""
    raise AssertionError("Torch not compiled with XPU enabled")


def ipu(self: Tensor, device: Any = None, non_blocking: builtins.bool = False,
        memory_format: Any = None) -> Tensor:
    """Graphcore IPUs: not linked in, as in PyTorch's usual builds."""
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


def mtia(self: Tensor, device: Any = None, non_blocking: builtins.bool = False,
         memory_format: Any = None) -> Tensor:
    """Meta's MTIA accelerators: not built in, as in PyTorch's usual builds."""
    raise AssertionError(
        "Torch not compiled with MTIA enabled. Ensure you have `import "
        "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
        "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")


METHODS: dict[str, Any] = {
    "untyped_storage": untyped_storage, "storage": storage, "storage_type": storage_type,
    "set_": set_, "resize": resize, "resize_as": resize_as, "as_subclass": as_subclass,
    "to_dense": to_dense, "dense_dim": dense_dim, "sparse_dim": sparse_dim,
    "is_coalesced": is_coalesced, "slice_inverse": slice_inverse, "hash_tensor": hash_tensor,
    "map2_": map2_, "module_load": module_load, "eig": eig, "lstsq": lstsq, "solve": solve,
    "symeig": symeig, "reinforce": reinforce, "xpu": xpu, "ipu": ipu, "mtia": mtia,
}
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.volatile = property(_volatile_get, _volatile_set)  # type: ignore[attr-defined]
Tensor.grad_dtype = property(_grad_dtype)  # type: ignore[attr-defined]

# torch.<name> for the two that PyTorch also has as functions.
FUNCTIONS: dict[str, Any] = {"hash_tensor": hash_tensor, "slice_inverse": slice_inverse,
                             "UntypedStorage": UntypedStorage, "TypedStorage": TypedStorage,
                             **LEGACY_STORAGES}

__all__ = ["FUNCTIONS", "LEGACY_STORAGES", "METHODS", "TypedStorage", "UntypedStorage"]
