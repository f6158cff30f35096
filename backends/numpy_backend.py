"""The NumPy backend (CPU, the default).

>>> from funcgrad.devices import get_backend
>>> get_backend("numpy").devices()
[CpuDevice(id=0)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.backends.compile_python import compile_jaxpr
from funcgrad.devices import Backend, Device
from funcgrad.ir import ClosedJaxpr

CPU = Device("cpu", 0)


class NumpyBackend(Backend):
    name = "numpy"
    platform = "cpu"

    @property
    def xp(self) -> Any:
        return np

    def available(self) -> bool:
        return True

    def devices(self) -> list[Device]:
        return [CPU]

    def owns(self, x: Any) -> bool:
        return isinstance(x, (np.ndarray, np.generic))

    def device_of(self, x: Any) -> Device:
        return CPU

    def device_put(self, x: Any, device: Device) -> Any:
        if type(x).__module__.startswith("cupy"):
            return x.get()
        return np.asarray(x)

    def compile(self, closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
        return compile_jaxpr(closed_jaxpr, np)


BACKEND = NumpyBackend()
