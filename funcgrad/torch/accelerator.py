"""``torch.accelerator``: the device-neutral front of ``torch.cuda``.

The only accelerator funcgrad drives is CUDA (through CuPy); without one every call that
needs a device raises PyTorch's ``RuntimeError``.

>>> import funcgrad.torch as torch
>>> torch.accelerator.current_accelerator() is None or torch.accelerator.is_available()
True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from funcgrad.torch import _dtypes, cuda
from funcgrad.torch._device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "current_stream", "device_count", "device_index", "empty_cache",
           "get_device_capability", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream",
           "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError(_NONE)


def is_available() -> bool:
    """True when an accelerator (a CUDA device CuPy can use) is present.

    >>> import funcgrad.torch as torch
    >>> isinstance(torch.accelerator.is_available(), bool)
    True
    """
    return cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device("cuda")`` when one is present, else None (``check_available`` changes
    nothing: CUDA is the only accelerator, and it is either usable or absent).

    >>> import funcgrad.torch as torch
    >>> torch.accelerator.current_accelerator() in (None, torch.device("cuda"))
    True
    """
    return _device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """How many accelerator devices there are (0 without one).

    >>> import funcgrad.torch as torch
    >>> torch.accelerator.device_count() >= 0
    True
    """
    return cuda.device_count()


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device: Any, /) -> None:
    """Make ``device`` (an index, ``"cuda:N"`` or a device) the current one."""
    _require()
    cuda.set_device(device)


set_device_idx = set_device_index


@contextmanager
def device_index(device: int | None, /) -> Iterator[None]:
    """Make ``device`` current inside a ``with`` block (None: no change)."""
    if device is None:
        yield
        return
    _require()
    with cuda.device(device):
        yield


def synchronize(device: Any = None, /) -> None:
    """Wait for everything queued on the accelerator."""
    _require()
    cuda.synchronize(device)


def current_stream(device: Any = None, /) -> Any:
    """The stream that accelerator work goes to now."""
    _require()
    return cuda.current_stream(device)


def set_stream(stream: Any) -> None:
    """Make ``stream`` the current one."""
    _require()
    cuda.set_stream(stream)


def empty_cache() -> None:
    """Give the memory pool's free blocks back to the driver."""
    _require()
    cuda.empty_cache()


def memory_allocated(device_index: Any = None, /) -> int:
    """Bytes held by live tensors on the device."""
    _require()
    return cuda.memory_allocated(device_index)


def max_memory_allocated(device_index: Any = None, /) -> int:
    """The peak of ``memory_allocated`` since the last reset."""
    _require()
    return cuda.max_memory_allocated(device_index)


def memory_reserved(device_index: Any = None, /) -> int:
    """Bytes the memory pool holds from the driver."""
    _require()
    return cuda.memory_reserved(device_index)


def max_memory_reserved(device_index: Any = None, /) -> int:
    """The peak of ``memory_reserved`` since the last reset."""
    _require()
    return cuda.max_memory_reserved(device_index)


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """Restart the peaks at the current values."""
    _require()
    cuda.reset_peak_memory_stats(device_index)


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    """Restart the accumulated counters (the peaks, the only ones kept)."""
    _require()
    cuda.reset_peak_memory_stats(device_index)


def memory_stats(device_index: Any = None, /) -> dict[str, int]:
    """PyTorch's memory statistics that the memory pool can give."""
    _require()
    return cuda.memory_stats(device_index)


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """``(free, total)`` device memory in bytes."""
    _require()
    return cuda.mem_get_info(device_index)


def get_device_capability(device: Any = None, /) -> dict[str, Any]:
    """The device's capabilities: the dtypes it supports.

    PyTorch reports ``{"supported_dtypes": [...]}``; funcgrad's CUDA kernels take every
    floating, integer, bool and complex dtype.
    """
    _require()
    names = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64", "complex64", "complex128")
    return {"supported_dtypes": [getattr(_dtypes, n) for n in names]}
