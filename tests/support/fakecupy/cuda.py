"""``cupy.cuda`` as the emulator has it: devices, streams and events (with the ordering
checks of ``_streams``), the runtime's device count and synchronisation, and the error types
funcgrad may meet."""

from __future__ import annotations

import types
from typing import Any

from fakecupy import _array
from fakecupy._array import STATS, Device
from fakecupy._streams import (
    Event,
    Stream,
    current_stream,
    device_synchronized,
    get_elapsed_time,
    live_bytes,
)


class CUDARuntimeError(RuntimeError):
    __module__ = "cupy_backends.cuda.api.runtime"


class CUDADriverError(RuntimeError):
    __module__ = "cupy_backends.cuda.api.driver"


class CompileException(Exception):
    __module__ = "cupy.cuda.compiler"


def _count_sync() -> None:
    STATS.syncs += 1
    device_synchronized()


runtime = types.ModuleType("cupy.cuda.runtime")
runtime.CUDARuntimeError = CUDARuntimeError  # type: ignore[attr-defined]
runtime.getDeviceCount = lambda: _array.N_DEVICES  # type: ignore[attr-defined]
runtime.getDevice = _array.current_device_id  # type: ignore[attr-defined]
runtime.deviceSynchronize = _count_sync  # type: ignore[attr-defined]
runtime.is_hip = False  # type: ignore[attr-defined]

driver = types.ModuleType("cupy.cuda.driver")
driver.CUDADriverError = CUDADriverError  # type: ignore[attr-defined]

compiler = types.ModuleType("cupy.cuda.compiler")
compiler.CompileException = CompileException  # type: ignore[attr-defined]


# The emulated device, as the H200 the GPU sessions are lent reports itself.
TOTAL_MEMORY = 150_121_545_728


def _device_properties(device: int) -> dict[str, Any]:
    return {"name": b"NVIDIA H200", "totalGlobalMem": TOTAL_MEMORY, "major": 9, "minor": 0,
            "multiProcessorCount": 132, "warpSize": 32, "maxThreadsPerBlock": 1024}


def _mem_get_info() -> tuple[int, int]:
    return TOTAL_MEMORY - live_bytes(), TOTAL_MEMORY


runtime.getDeviceProperties = _device_properties  # type: ignore[attr-defined]
runtime.memGetInfo = _mem_get_info  # type: ignore[attr-defined]


class MemoryPool:
    """``cupy.cuda.MemoryPool``: used bytes are those of live arrays; freed blocks stay
    held (counted in ``total_bytes``) until ``free_all_blocks``."""

    __module__ = "cupy.cuda.memory"

    def __init__(self) -> None:
        self._held = 0

    def used_bytes(self) -> int:
        return live_bytes()

    def total_bytes(self) -> int:
        self._held = max(self._held, live_bytes())
        return self._held

    def free_bytes(self) -> int:
        return self.total_bytes() - self.used_bytes()

    def free_all_blocks(self, stream: Any = None) -> None:
        self._held = live_bytes()

    def malloc(self, size: int) -> Any:
        """A block of ``size`` bytes (accounting only: the memory is the array's own)."""
        return MemoryPointer(int(size), _array.current_device_id())


class MemoryPointer:
    """What an allocator returns (``cupy.cuda.MemoryPointer``): a size and a device."""

    __module__ = "cupy.cuda.memory"

    def __init__(self, size: int, device_id: int) -> None:
        self.size, self.device_id, self.ptr = size, device_id, 0


DEFAULT_MEMORY_POOL = MemoryPool()
# cupy.cuda.set_allocator: called with the size of each new device array (before the array
# counts as live, as CuPy's allocator runs before the array exists).
ALLOCATOR: list[Any] = [None]


def set_allocator(allocator: Any = None) -> None:
    ALLOCATOR[0] = allocator


def get_allocator() -> Any:
    return ALLOCATOR[0] if ALLOCATOR[0] is not None else DEFAULT_MEMORY_POOL.malloc


def get_current_stream(device_id: int = -1) -> Stream:
    return current_stream()


def is_available() -> bool:
    return _array.N_DEVICES > 0


def get_device_id() -> int:
    return _array.current_device_id()


def make_module() -> Any:
    mod = types.ModuleType("cupy.cuda")
    for name, value in {"Device": Device, "Stream": Stream, "Event": Event,
                        "MemoryPool": MemoryPool,
                        "get_elapsed_time": get_elapsed_time, "runtime": runtime,
                        "driver": driver, "compiler": compiler,
                        "get_current_stream": get_current_stream,
                        "set_allocator": set_allocator, "get_allocator": get_allocator,
                        "MemoryPointer": MemoryPointer,
                        "is_available": is_available, "get_device_id": get_device_id}.items():
        setattr(mod, name, value)
    return mod
