"""The Tensor methods about memory, layout and kind: ``as_strided`` (a view into the same
memory where nothing is recorded), ``storage_offset``, ``resize_``/``resize_as_``,
``new_empty_strided``, ``is_set_to``, ``const_data_ptr``, ``output_nr``,
``share_memory_``/``is_shared``, ``record_stream``, ``layout`` (``torch.strided``) and the
kind flags PyTorch programs test (``is_sparse``, ``is_quantized``, ``is_meta``, ...; all
False: a funcgrad tensor is always a dense, strided tensor on the CPU or a CUDA device).

A tensor's "storage" is the memory its buffer lives in: the NumPy (or CuPy) array that
owns it, found through the buffer's ``.base`` chain; views made by basic indexing,
``diagonal``, ``as_strided`` and friends share it, as PyTorch's views share a storage.

>>> import funcgrad.torch as torch
>>> x = torch.arange(6.0)
>>> x[2:].storage_offset(), x.layout
(2, torch.strided)
>>> w = x.as_strided((2, 2), (1, 2))
>>> w
tensor([[0., 2.],
        [1., 3.]])
>>> w.add_(10); x
tensor([[10., 12.],
        [11., 13.]])
tensor([10., 11., 12., 13.,  4.,  5.])
"""

from __future__ import annotations

import builtins
import math
import mmap
import weakref
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.torch import _grad_mode
from funcgrad.torch._device import array_module
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._tensor import _INFERENCE_INPLACE, Tensor, apply_op
from funcgrad.torch._tensor_math import shape_inplace

# ------------------------------------------------------------------ layout


class layout:  # noqa: N801 - PyTorch's name
    """A tensor layout: ``torch.strided`` (the only one funcgrad's tensors have) and the
    sparse layouts' names, so that code comparing or passing them runs.

    >>> import funcgrad.torch as torch
    >>> torch.ones(2).layout
    torch.strided
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")
# pickle finds a layout by its name in this module (``__reduce__``).
LAYOUTS = {"layout": layout, "strided": strided, "sparse_coo": sparse_coo,
           "sparse_csr": sparse_csr, "sparse_csc": sparse_csc, "sparse_bsr": sparse_bsr,
           "sparse_bsc": sparse_bsc, "_mkldnn": _mkldnn, "jagged": jagged}


# ------------------------------------------------------------------ storage


def _is_buffer(d: Any) -> builtins.bool:
    return not isinstance(d, Tracer) and hasattr(d, "strides")


def _root(buf: Any) -> Any:
    """The array that owns ``buf``'s memory (the end of its ``.base`` chain)."""
    while type(getattr(buf, "base", None)) is type(buf):
        buf = cast(Any, buf).base
    return buf


def _address(buf: Any) -> builtins.int:
    if type(buf) is np.ndarray:
        return builtins.int(buf.__array_interface__["data"][0])
    return builtins.int(buf.data.ptr)


def storage_offset(self: Tensor) -> builtins.int:
    """Where the tensor starts in its storage, in elements.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(3, 4)[1:, 2:].storage_offset()
    6
    """
    return _offset_of(self)


def _offset_of(self: Tensor) -> builtins.int:
    d = self._data
    if not _is_buffer(d):
        return 0
    return (_address(d) - _address(_root(d))) // d.itemsize


def _storage_size(d: Any) -> builtins.int:
    """The storage's length in elements of ``d``'s dtype."""
    root = _root(d)
    return builtins.int(root.size * root.itemsize // d.itemsize)


def _window(d: Any, size: tuple[builtins.int, ...], stride: tuple[builtins.int, ...],
            offset: builtins.int) -> Any:
    """The array of ``size`` and ``stride`` (in elements) over the storage of ``d``, from
    ``offset`` elements in: a view whose ``.base`` is the storage's owner."""
    root = _root(d)
    byte_strides = tuple(s * d.itemsize for s in stride)
    if not root.flags.c_contiguous:
        root = _memory_order(root)
    if type(root) is np.ndarray and root.flags.c_contiguous:
        view = np.ndarray(size, d.dtype, buffer=root, offset=offset * d.itemsize,
                          strides=byte_strides)
        if not root.flags.writeable:
            view.flags.writeable = False
        return view
    flat = root.reshape(-1).view(d.dtype)[offset:]
    return array_module(d).lib.stride_tricks.as_strided(flat, size, byte_strides)


def _memory_order(root: Any) -> Any:
    """The owner ``root`` with its axes in the order its memory runs (a Fortran-ordered
    LAPACK result, a transposed copy), so that its flat view reads the storage in
    address order rather than copying it in row-major order."""
    order = sorted(range(root.ndim), key=lambda k: -builtins.abs(root.strides[k]))
    return root.transpose(order)


def _sizes(size: Any) -> tuple[builtins.int, ...]:
    return tuple(builtins.int(s) for s in size)


def _check_geometry(self: Tensor, size: tuple[builtins.int, ...], stride: tuple[builtins.int, ...],
                    offset: builtins.int, storage: builtins.int) -> None:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + builtins.sum((n - 1) * s for n, s in
                                                         zip(size, stride))
    item = self.element_size()
    if need > storage:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size "
                           f"{storage * item}")


def _positions(self: Tensor, size: tuple[builtins.int, ...], stride: tuple[builtins.int, ...],
               offset: builtins.int) -> np.ndarray:
    """For each element of the strided window, the (row-major) position in ``self`` of the
    storage element it reads; an error where the window reads memory outside ``self``."""
    own_stride = cast(Any, self).stride()
    own = _offset_of(self) + builtins.sum(
        (np.arange(n).reshape((-1,) + (1,) * (self.dim() - k - 1)) * s)
        for k, (n, s) in enumerate(zip(self.shape, own_stride))) if self.dim() else \
        np.asarray(_offset_of(self))
    own = np.broadcast_to(np.asarray(own), tuple(self.shape)).reshape(-1)
    want = offset + builtins.sum(
        (np.arange(n).reshape((-1,) + (1,) * (len(size) - k - 1)) * s)
        for k, (n, s) in enumerate(zip(size, stride))) if size else np.asarray(offset)
    want = np.broadcast_to(np.asarray(want), size).reshape(-1)
    top = builtins.int(builtins.max(own.max(initial=0), want.max(initial=0))) + 1
    where = np.full(top, -1, np.int64)
    where[own] = np.arange(own.size)
    pos = where[want]
    if (pos < 0).any():
        raise RuntimeError(
            "as_strided: the strided window reads memory outside this tensor, which funcgrad "
            "does not record for autograd; call it on the base tensor, or under "
            "torch.no_grad()")
    return pos.reshape(size)


def as_strided(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view of the tensor's storage with the given sizes and strides (in elements),
    starting ``storage_offset`` elements in (this tensor's own offset by default).

    Where nothing is recorded it is a view into the same memory (writes go through, the
    version counter is shared); a tensor that requires grad (or a traced one) gets a gather
    of the same elements, recorded as ``AsStridedBackward0`` (overlapping windows sum their
    gradients, as in PyTorch).

    >>> import funcgrad.torch as torch
    >>> torch.arange(4.0).as_strided((3, 2), (1, 1))
    tensor([[0., 1.],
            [1., 2.],
            [2., 3.]])
    """
    size, stride = _sizes(size), _sizes(stride)
    offset = _offset_of(self) if storage_offset is None else builtins.int(storage_offset)
    d = self._data
    buffer = _is_buffer(d)
    _check_geometry(self, size, stride, offset, _storage_size(d) if buffer else self.numel())
    if buffer and not (self._requires_grad and is_grad_enabled()):
        out = Tensor._from_data(_window(d, size, stride, offset))
        out._vc, out._view_flag, out._inference = self._vc, True, self._inference
        out._view_base = self if self._view_base is None else self._view_base
        return out
    pos = _positions(self, size, stride, offset)
    return cast(Tensor, apply_op("AsStrided", lambda x: fnp.ravel(x)[pos], self))


_AS_STRIDED_INPLACE = shape_inplace("as_strided")


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """This tensor becomes ``as_strided(size, stride, storage_offset)`` of its storage.

    >>> import funcgrad.torch as torch
    >>> torch.arange(4.0).as_strided_((2,), (2,))
    tensor([0., 2.])
    """
    return _AS_STRIDED_INPLACE(self, size, stride, storage_offset)


def as_strided_scatter(self: Tensor, src: Tensor, size: Any, stride: Any,
                       storage_offset: Any = None) -> Tensor:
    """A copy of ``self`` with ``src`` written where ``as_strided(size, stride,
    storage_offset)`` would look.

    >>> import funcgrad.torch as torch
    >>> torch.ones(2, 3).as_strided_scatter(torch.zeros(2), (2,), (4,))
    tensor([[0., 1., 1.],
            [1., 0., 1.]])
    """
    size, stride = _sizes(size), _sizes(stride)
    offset = _offset_of(self) if storage_offset is None else builtins.int(storage_offset)
    d = self._data
    _check_geometry(self, size, stride, offset,
                    _storage_size(d) if _is_buffer(d) else self.numel())
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    pos = _positions(self, size, stride, offset).reshape(-1)
    return cast(Tensor, apply_op("AsStridedScatter", lambda x, s: fnp.reshape(
        fnp.ravel(x).at[pos].set(fnp.ravel(fnp.astype(s, x.dtype))), x.shape), self, src))


def resize_(self: Tensor, *sizes: Any, memory_format: Any = None) -> Tensor:
    """This tensor reshaped to ``sizes`` in row-major order over its storage: the first
    elements are kept, and a larger size gets new memory whose extra elements are
    unspecified (zeros here). A tensor that requires grad cannot be resized.

    >>> import funcgrad.torch as torch
    >>> torch.arange(6.0).resize_(2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    shape = _sizes(sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], (builtins.int,
                                                                             np.integer))
                   else sizes)
    if builtins.any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    # PyTorch refuses an inference tensor's resize (outside inference mode) when bumping
    # its version, after resizing it; to the same shape it bumps nothing.
    inference_write = self._inference and not _grad_mode._mode.inference
    if not inference_write:
        self._check_inplace()
    n = math.prod(shape)
    d = self._data
    if not _is_buffer(d):
        if n != self.numel():
            raise RuntimeError("resize_ of a traced tensor can only keep its number of "
                               "elements (funcgrad stages shapes)")
        self._data = fnp.reshape(d, shape)
    elif tuple(self.shape) != shape:
        xp = array_module(d)
        offset = _offset_of(self)
        if self.is_contiguous() and offset + n <= _storage_size(d):
            # Fits the storage: a view of it (other views see the same memory).
            row_major = tuple(math.prod(shape[k + 1:]) for k in range(len(shape)))
            self._data = _window(d, shape, row_major, offset)
        else:
            new = xp.zeros(n, d.dtype)
            keep = builtins.min(n, d.size)
            new[:keep] = d.reshape(-1)[:keep]
            self._data = new.reshape(shape)
    elif inference_write:
        return self
    if inference_write:
        raise RuntimeError(_INFERENCE_INPLACE)
    self._vc[0] += 1
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``resize_`` to the shape of ``the_template``.

    >>> import funcgrad.torch as torch
    >>> torch.zeros(4).resize_as_(torch.ones(2, 2)).shape
    torch.Size([2, 2])
    """
    return resize_(self, tuple(the_template.shape))


def new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                      device: Any = None, requires_grad: builtins.bool = False,
                      layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    """A tensor with the given sizes and strides over fresh memory (this tensor's dtype
    and device by default; the values are unspecified: zeros here).

    >>> import funcgrad.torch as torch
    >>> torch.ones(1).new_empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    size, stride = _sizes(size), _sizes(stride)
    like = cast(Any, self).new_zeros((0,), dtype=dtype, device=device)
    need = 0 if 0 in size else 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    base = cast(Any, like).new_zeros((need,))
    out = as_strided(base, size, stride, 0)
    out._vc = [0]
    if requires_grad:
        out.requires_grad_(True)
    return out


def is_set_to(self: Tensor, tensor: Tensor) -> builtins.bool:
    """Whether both tensors look at the same memory the same way (storage, offset, sizes
    and strides).

    >>> import funcgrad.torch as torch
    >>> x = torch.zeros(2, 3)
    >>> x.is_set_to(x[:]), x.is_set_to(x.view(6))
    (True, False)
    """
    a, b = self._data, tensor._data
    if not (_is_buffer(a) and _is_buffer(b)):
        return self is tensor
    return (type(a) is type(b) and _root(a) is _root(b) and a.dtype == b.dtype
            and _offset_of(self) == _offset_of(tensor)
            and tuple(self.shape) == tuple(tensor.shape)
            and cast(Any, self).stride() == cast(Any, tensor).stride())


def output_nr(self: Tensor) -> builtins.int:
    """Which output of its ``grad_fn`` this tensor is (0 for a leaf)."""
    return self._out_index if self.grad_fn is not None else 0


def const_data_ptr(self: Tensor) -> builtins.int:
    """The address of the first element (``data_ptr()``, for reading).

    >>> import funcgrad.torch as torch
    >>> t = torch.zeros(3)
    >>> t.const_data_ptr() == t.data_ptr()
    True
    """
    return cast(builtins.int, cast(Any, self).data_ptr())


# ------------------------------------------------------------------ shared memory

# The shared-memory arrays made by share_memory_, by id (NumPy arrays are not hashable).
_SHARED: dict[builtins.int, weakref.ref[Any]] = {}


def share_memory_(self: Tensor) -> Tensor:
    """Move a CPU tensor's data to shared memory (an anonymous shared mapping that
    processes forked afterwards see and write); a no-op on CUDA tensors or when already
    shared. Views made before the move keep the old memory.

    >>> import funcgrad.torch as torch
    >>> t = torch.ones(2)
    >>> t.is_shared(), t.share_memory_().is_shared(), t
    (False, True, tensor([1., 1.]))
    """
    d = self._data
    if self.is_cuda or not _is_buffer(d) or is_shared(self):
        return self
    root = _root(d)
    mem = mmap.mmap(-1, builtins.max(root.nbytes, 1))
    moved = np.frombuffer(mem, root.dtype, root.size).reshape(root.shape)
    moved[...] = root
    stride = tuple(cast(Any, self).stride())
    self._data = _window(moved, tuple(d.shape), stride, _offset_of(self))
    owner = _root(self._data)
    key = id(owner)
    _SHARED[key] = weakref.ref(owner, lambda _: _SHARED.pop(key, None))
    return self


def is_shared(self: Tensor) -> builtins.bool:
    """Whether the tensor's memory is shared between processes (after ``share_memory_``;
    always for CUDA tensors, as in PyTorch)."""
    d = self._data
    if self.is_cuda:
        return True
    if not _is_buffer(d):
        return False
    b = d
    while True:
        ref = _SHARED.get(id(b))
        if ref is not None and ref() is b:
            return True
        if type(getattr(b, "base", None)) is not np.ndarray:
            return False
        b = b.base


# ------------------------------------------------------------------ record_stream

# Memory whose tensor died while work on another stream may still read it: kept (so
# CuPy's pool cannot hand it out again) until an event recorded at that moment completes.
_PENDING: list[tuple[Any, Any]] = []


def _release_finished() -> None:
    _PENDING[:] = [(ev, mem) for ev, mem in _PENDING if not ev.done]


def _on_free(mem: Any, stream: Any) -> None:
    import cupy  # noqa: PLC0415 - only reached for CUDA tensors

    ev = cupy.cuda.Event(disable_timing=True)
    ev.record(stream)
    _PENDING.append((ev, mem))
    _release_finished()


def record_stream(self: Tensor, stream: Any) -> None:
    """Mark this CUDA tensor's memory as used by work queued on ``stream`` (a
    ``torch.cuda.Stream``): when the tensor is freed, the memory goes back to CuPy's pool
    only after the work queued on ``stream`` by then has finished, so a stream that
    allocates next cannot overwrite data ``stream`` still reads.

    >>> import funcgrad.torch as torch
    >>> torch.ones(1).record_stream(None)
    Traceback (most recent call last):
    ...
    RuntimeError: unknown parameter type
    """
    from funcgrad.torch.cuda import Stream  # noqa: PLC0415

    if not isinstance(stream, Stream):
        raise RuntimeError("unknown parameter type")
    if not self.is_cuda:
        raise NotImplementedError(
            "Could not run 'aten::record_stream' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build).")
    _release_finished()
    weakref.finalize(self, _on_free, self._data.data.mem, stream._cp)


# ------------------------------------------------------------------ kinds

# (``is_meta`` is the Tensor's own property: funcgrad has meta tensors.)
_KIND_FLAGS = ("is_sparse", "is_sparse_csr", "is_quantized", "is_mps", "is_xpu",
               "is_nested", "is_mkldnn", "is_vulkan", "is_ipu", "is_maia", "is_mtia",
               "is_xla")


def is_distributed(self: Tensor) -> builtins.bool:
    """False: a tensor is never a distributed one (``torch.distributed`` works on plain
    tensors)."""
    return False


METHODS: dict[str, Any] = {
    "as_strided": as_strided, "as_strided_": as_strided_,
    "as_strided_scatter": as_strided_scatter, "storage_offset": storage_offset,
    "resize_": resize_, "resize_as_": resize_as_, "new_empty_strided": new_empty_strided,
    "is_set_to": is_set_to, "const_data_ptr": const_data_ptr,
    "share_memory_": share_memory_, "is_shared": is_shared, "record_stream": record_stream,
    "is_distributed": is_distributed,
}
for _name, _fn in METHODS.items():
    setattr(Tensor, _name, _fn)
Tensor.output_nr = property(output_nr)  # type: ignore[attr-defined]
Tensor.layout = property(lambda self: strided)  # type: ignore[attr-defined]
for _flag in _KIND_FLAGS:
    setattr(Tensor, _flag, property(lambda self: False))

__all__ = ["LAYOUTS", "METHODS", "layout", "strided"]
