"""Devices and the abstract backend interface: ``devices()``, ``device_put()``.

Values are the backend's own arrays (``numpy.ndarray`` on the CPU,
``cupy.ndarray`` on CUDA devices); operations follow their inputs.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.devices()[0]
CpuDevice(id=0)
>>> fg.device_put(np.array([1.0, 2.0]), "cpu")
Array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.errors import BackendError, DeviceError
from funcgrad.ir import ClosedJaxpr


class Device:
    """A place where arrays live: ``cpu:0`` or ``cuda:N``."""

    __slots__ = ("platform", "id")

    def __init__(self, platform: str, id: int = 0) -> None:  # noqa: A002
        self.platform = platform
        self.id = id

    def __repr__(self) -> str:
        # As JAX writes its devices: CpuDevice(id=0), CudaDevice(id=1).
        return f"{self.platform.capitalize()}Device(id={self.id})"

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (self.platform, self.id) == (other.platform,
                                                                           other.id)

    def __hash__(self) -> int:
        return hash((self.platform, self.id))

    @property
    def process_index(self) -> int:
        """The index of the process this device belongs to (each process drives its own
        devices)."""
        from funcgrad import processes  # noqa: PLC0415 - a sibling at this layer

        return processes.process_index()

    host_id = task_id = process_index

    @property
    def local_hardware_id(self) -> int:
        """The device's index among this process's devices of its kind."""
        return self.id

    @property
    def device_kind(self) -> str:
        """``"cpu"``, or the GPU's model name as the driver reports it."""
        if self.platform == "cpu":
            return "cpu"
        import cupy  # noqa: PLC0415 - only for a CUDA device

        name = cupy.cuda.runtime.getDeviceProperties(self.id)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)


class Backend(ABC):
    """What a backend supplies: its array module, its devices, placement and a compiler."""

    name: str = ""
    platform: str = ""

    @property
    @abstractmethod
    def xp(self) -> Any:
        """The array module (numpy or cupy)."""

    @abstractmethod
    def available(self) -> bool:
        """Whether the backend can run here."""

    @abstractmethod
    def devices(self) -> list[Device]:
        """The devices of this backend."""

    @abstractmethod
    def device_put(self, x: Any, device: Device) -> Any:
        """Copy one array to ``device``."""

    def full(self, shape: tuple[int, ...], value: Any, dtype: Any, device: Device) -> Any:
        """A new array of ``shape`` holding ``value`` on ``device``: made there, where the
        backend can (nothing copied from the host but the value)."""
        return self.device_put(np.full(shape, value, dtype), device)

    @abstractmethod
    def owns(self, x: Any) -> bool:
        """Whether ``x`` is one of this backend's arrays."""

    @abstractmethod
    def device_of(self, x: Any) -> Device:
        """The device an array of this backend lives on."""

    @abstractmethod
    def compile(self, closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
        """An executable running ``closed_jaxpr`` on this backend's arrays."""


_BACKEND_MODULES = {"numpy": "funcgrad.backends.numpy_backend",
                    "cupy": "funcgrad.backends.cupy_backend"}
_PLATFORM_BACKEND = {"cpu": "numpy", "cuda": "cupy", "gpu": "cupy"}
_backends: dict[str, Backend] = {}


def get_backend(name: str = "numpy") -> Backend:
    """The backend called ``name`` (``"numpy"`` or ``"cupy"``; ``"cpu"``/``"cuda"`` too)."""
    name = _PLATFORM_BACKEND.get(name, name)
    if name not in _backends:
        mod = _BACKEND_MODULES.get(name)
        if mod is None:
            raise BackendError(f"unknown backend {name!r}; choose one of "
                               f"{sorted(_BACKEND_MODULES)}")
        _backends[name] = importlib.import_module(mod).BACKEND
    return _backends[name]


def devices(platform: str | None = None) -> list[Device]:
    """All devices funcgrad can use here (CPU first), or those of one platform.

    >>> import funcgrad as fg
    >>> fg.devices("cpu")
    [CpuDevice(id=0)]
    """
    names = [_PLATFORM_BACKEND[platform]] if platform else ["numpy", "cupy"]
    out: list[Device] = []
    for n in names:
        b = get_backend(n)
        if b.available():
            out.extend(b.devices())
    return out


def _parse_device(device: Any) -> Device:
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        plat, _, idx = device.partition(":")
        plat = {"gpu": "cuda"}.get(plat, plat)
        if plat not in ("cpu", "cuda") or (idx and not idx.isdigit()):
            raise DeviceError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'cuda:N'")
        return Device(plat, int(idx) if idx else 0)
    raise DeviceError(f"a device is a string like 'cuda:0' or a Device, got {device!r}")


def require_device(device: Any) -> tuple[Backend, Device]:
    """The backend of ``device`` and the device, or ``DeviceError`` saying why it is not
    usable here.

    >>> require_device("cpu")[1]
    CpuDevice(id=0)
    """
    dev = _parse_device(device)
    backend = get_backend(dev.platform)
    if not backend.available():
        raise DeviceError(
            f"device {dev} is not available here: the {backend.name} backend found no device. "
            "Install funcgrad[cuda] on a machine with an NVIDIA GPU, or use 'cpu'."
        )
    if dev not in backend.devices():
        raise DeviceError(f"device {dev} does not exist; available: {backend.devices()}")
    return backend, dev


def put_buffer(x: Any, device: Any) -> Any:
    """One backend buffer copied to ``device`` (the engine's placement)."""
    backend, dev = require_device(device)
    return backend.device_put(x, dev)


def device_of(x: Any) -> Device:
    """The device an array lives on.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> from funcgrad.devices import device_of
    >>> str(device_of(np.zeros(1)))
    'cpu:0'
    """
    for name in ("numpy", "cupy"):
        if name == "cupy" and not type(x).__module__.startswith("cupy"):
            continue
        b = get_backend(name)
        if b.owns(x):
            return b.device_of(x)
    return Device("cpu", 0)
