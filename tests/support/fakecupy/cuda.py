"""``cupy.cuda`` as the emulator has it: devices, streams, the runtime's device count and
synchronisation, and the error types funcgrad may meet."""

from __future__ import annotations

import types
from typing import Any

from fakecupy import _array
from fakecupy._array import STATS, Device


class CUDARuntimeError(RuntimeError):
    __module__ = "cupy_backends.cuda.api.runtime"


class CUDADriverError(RuntimeError):
    __module__ = "cupy_backends.cuda.api.driver"


class CompileException(Exception):
    __module__ = "cupy.cuda.compiler"


def _count_sync() -> None:
    STATS.syncs += 1


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


class Stream:
    """A stream; work runs in order on the host, so only ``synchronize`` is observable."""

    __module__ = "cupy.cuda"
    null: Stream

    def __init__(self, null: bool = False, non_blocking: bool = False,
                 ptr: int = 0) -> None:
        self.ptr = ptr

    def synchronize(self) -> None:
        _count_sync()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def use(self) -> Stream:
        return self


Stream.null = Stream(null=True)


def get_current_stream(device_id: int = -1) -> Stream:
    return Stream.null


def is_available() -> bool:
    return _array.N_DEVICES > 0


def get_device_id() -> int:
    return _array.current_device_id()


def make_module() -> Any:
    mod = types.ModuleType("cupy.cuda")
    for name, value in {"Device": Device, "Stream": Stream, "runtime": runtime,
                        "driver": driver, "compiler": compiler,
                        "get_current_stream": get_current_stream,
                        "is_available": is_available, "get_device_id": get_device_id}.items():
        setattr(mod, name, value)
    return mod
