"""The CuPy backend (NVIDIA GPUs): array module and device placement.

CuPy is optional (``pip install funcgrad[cuda]``); without it, or without a
device, ``available()`` is False and ``device_put(x, "cuda")`` says so.

>>> from funcgrad.devices import get_backend
>>> isinstance(get_backend("cupy").available(), bool)
True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.backends.compile_python import compile_jaxpr
from funcgrad.devices import Backend, Device
from funcgrad.errors import BackendError
from funcgrad.ir import ClosedJaxpr


def _cupy() -> Any:
    try:
        import cupy  # noqa: PLC0415
    except ImportError as e:
        raise BackendError(
            "the cupy backend needs CuPy: pip install 'funcgrad[cuda]' on a machine with an "
            f"NVIDIA GPU ({e})"
        ) from None
    return cupy


class CupyBackend(Backend):
    name = "cupy"
    platform = "cuda"

    @property
    def xp(self) -> Any:
        return _cupy()

    def available(self) -> bool:
        try:
            return int(_cupy().cuda.runtime.getDeviceCount()) > 0
        except Exception:  # noqa: BLE001 - no CuPy, no driver or no device all mean "no"
            return False

    def devices(self) -> list[Device]:
        if not self.available():
            return []
        return [Device("cuda", i) for i in range(int(_cupy().cuda.runtime.getDeviceCount()))]

    def owns(self, x: Any) -> bool:
        return type(x).__module__.startswith("cupy")

    def device_of(self, x: Any) -> Device:
        return Device("cuda", int(x.device.id))

    def device_put(self, x: Any, device: Device) -> Any:
        cp = _cupy()
        with cp.cuda.Device(device.id):
            return cp.asarray(x)

    def compile(self, closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
        # Straight-line calls of each primitive's impl with CuPy as the array module.
        return compile_jaxpr(closed_jaxpr, _cupy())


BACKEND = CupyBackend()
