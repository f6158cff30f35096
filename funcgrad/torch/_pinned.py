"""Page-locked ("pinned") host memory and raw addresses: ``Tensor.pin_memory``,
``is_pinned``, ``data_ptr``, and the pinning of a ``DataLoader(pin_memory=True)``'s batches.
Pinned buffers come from CuPy (``cupyx.empty_pinned``): copies from them to the GPU can run
asynchronously, as in PyTorch.

>>> import funcgrad.torch as torch
>>> t = torch.arange(4.0)
>>> t.is_pinned(), t[1:].data_ptr() - t.data_ptr()
(False, 4)
"""

from __future__ import annotations

from typing import Any

import numpy as np

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def _buffer_is_pinned(buf: Any) -> bool:
    # CuPy's pinned arrays are NumPy arrays over a PinnedMemoryPointer (their base).
    while isinstance(buf, np.ndarray):
        buf = buf.base
    return type(buf).__name__ == "PinnedMemoryPointer"


def is_pinned(self: Any, device: Any = None) -> bool:
    """Whether the tensor's memory is pinned host memory."""
    return type(self._data) is np.ndarray and _buffer_is_pinned(self._data)


def pin_memory(self: Any, device: Any = None) -> Any:
    """A copy of this CPU tensor in pinned memory (itself if it is pinned already)."""
    from funcgrad.torch._device import cuda_available  # noqa: PLC0415
    from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

    if not cuda_available():
        raise RuntimeError(_NO_ACCELERATOR)
    if type(self._data) is not np.ndarray:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    import cupyx  # noqa: PLC0415

    src = self._data
    buf = cupyx.empty_pinned(src.shape, src.dtype)
    buf[...] = src
    if not self.requires_grad:
        return Tensor._from_data(buf)
    # Differentiable like a copy: the graph's node, then the pinned buffer (equal values).
    out = self.clone()
    out._data = buf
    return out


def data_ptr(self: Any) -> int:
    """The address of the tensor's first element (host or device memory)."""
    buf = self._data
    if type(buf) is np.ndarray:
        return int(buf.__array_interface__["data"][0])
    if self.is_meta:
        return 0  # no memory, as PyTorch's meta tensors
    return int(buf.data.ptr)


def pin_batch(batch: Any) -> Any:
    """``batch`` (tensors in lists, tuples, dicts, namedtuples) with its tensors pinned."""
    from funcgrad.torch._tensor import Tensor  # noqa: PLC0415

    if isinstance(batch, Tensor):
        return pin_memory(batch)
    if isinstance(batch, dict):
        return type(batch)({k: pin_batch(v) for k, v in batch.items()})
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return type(batch)(*(pin_batch(v) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(pin_batch(v) for v in batch)
    return batch


METHODS = {"pin_memory": pin_memory, "is_pinned": is_pinned, "data_ptr": data_ptr}
