"""``torch.device`` and ``torch.Size`` as PyTorch prints them.

>>> import funcgrad.torch as torch
>>> torch.device("cuda:1")
device(type='cuda', index=1)
>>> torch.Size([2, 3])
torch.Size([2, 3])
"""

from __future__ import annotations

import builtins
import math
import re
from typing import Any

import numpy as np

from funcgrad.core import MetaBuffer
from funcgrad.devices import Device, device_of, put_buffer
from funcgrad.torch._compile_trace import CompileTracer


class memory_format:  # noqa: N801 - PyTorch's name
    """A memory layout (``torch.channels_last``...), printed as PyTorch prints it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
newaxis = None  # torch.newaxis: None, as in indexing


def channels_last_order(fmt: Any, ndim: builtins.int) -> tuple[builtins.int, ...] | None:
    """The axes of a ``fmt`` layout from outermost to innermost (None: row-major), with
    PyTorch's error for a tensor of the wrong rank."""
    if fmt is channels_last:
        if ndim != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    if fmt is channels_last_3d:
        if ndim != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return (0, 2, 3, 4, 1)
    return None


# PyTorch's device strings: a type, then optionally ":" and an index without leading zeros.
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?\Z")
_TORCH_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                       "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu",
                       "mtia", "privateuseone")


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor lives: ``cpu``, ``cuda:N`` or ``meta`` (shapes and dtypes, no data)."""

    __slots__ = ("type", "index")
    type: str
    index: builtins.int | None

    def __init__(self, type: Any, index: builtins.int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            index = type.index
            type = type.type  # noqa: A001
        elif isinstance(type, builtins.int):
            type, index = "cuda", type  # noqa: A001
        elif isinstance(type, str):
            match = _DEVICE_STRING.match(type)
            if match is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            if match.group(2) is not None:
                index = builtins.int(match.group(2))
            type = match.group(1)  # noqa: A001
        if type not in _TORCH_DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TORCH_DEVICE_TYPES)} device type "
                               f"at start of device string: {type}")
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"funcgrad has no '{type}' devices: use cpu, cuda or meta")
        self.type = type
        self.index = index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __eq__(self, other: object) -> builtins.bool:
        # As PyTorch: type and index exactly ("cpu" is not "cpu:0"), never equal to a string.
        return isinstance(other, device) and (self.type, self.index) == (
            other.type, other.index)

    def __hash__(self) -> builtins.int:
        return hash((self.type, self.index))

    def _same_place(self, other: device) -> builtins.bool:
        """Whether ``to(other)`` keeps a tensor that is here: a CUDA device without an index
        is device 0; ``cpu:0`` is another device to PyTorch's ``to`` (it copies)."""
        if self.type == "cpu":
            return self == other
        return (self.type, self.index or 0) == (other.type, other.index or 0)

    def __enter__(self) -> device:
        """``with torch.device(d):`` makes ``d`` the default device inside the block."""
        _DEFAULT_STACK.append(_DEFAULT[0])
        _DEFAULT[0] = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _DEFAULT[0] = _DEFAULT_STACK.pop()


CPU = device("cpu")
META = device("meta")

# The device that the factory functions use when given none (``set_default_device``):
# None is the CPU, left untouched; the stack holds the values ``with device`` replaced.
_DEFAULT: list[device | None] = [None]
_DEFAULT_STACK: list[device | None] = []


def set_default_device(device: Any) -> None:  # noqa: A002 - PyTorch's name
    """Make the factory functions (``zeros``, ``tensor``, ``arange``, ``randn``...) allocate
    on ``device`` when called without one; None restores the CPU. The ``*_like``
    functions, ``from_numpy`` and ``frombuffer`` are unaffected, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> torch.set_default_device("cpu")
    >>> torch.get_default_device()
    device(type='cpu')
    >>> torch.set_default_device(None)
    """
    _DEFAULT[0] = None if device is None else as_device(device)


def get_default_device() -> device:
    """The device new tensors are made on (``set_default_device``; the CPU by default).

    >>> import funcgrad.torch as torch
    >>> torch.get_default_device()
    device(type='cpu')
    """
    d = _DEFAULT[0]
    if d is None:
        return CPU
    if d.type == "cuda" and d.index is None:
        import cupy  # noqa: PLC0415 - only where a CUDA default is set

        return device("cuda", cupy.cuda.Device().id)
    return d


def default_device() -> device | None:
    """The device a factory function given ``device=None`` uses (None: the CPU)."""
    return _DEFAULT[0]


def cuda_available() -> bool:
    """``torch.cuda.is_available()``: CuPy finds a CUDA device."""
    from funcgrad.devices import get_backend  # noqa: PLC0415

    return bool(get_backend("cupy").available())


def device_of_buffer(buf: Any) -> device:
    if type(buf) is np.ndarray:
        return CPU
    if type(buf) is MetaBuffer:
        return META
    if isinstance(buf, CompileTracer):
        # Staged by torch.compile: the device the value stands for.
        name = buf._trace.device_of(buf)  # type: ignore[attr-defined]
        return CPU if name == "cpu" else as_device(name)
    d = device_of(buf)
    return CPU if d.platform == "cpu" else device(d.platform, d.id)


def as_device(d: Any) -> device:
    if isinstance(d, device):
        return d
    if isinstance(d, Device):
        return device(d.platform, None if d.platform == "cpu" else d.id)
    return device(d)


def engine_device(d: Any) -> str:
    """The engine's name for a device: ``"cpu"`` or ``"cuda:N"``."""
    dev = as_device(d)
    if dev.type == "cpu":
        return "cpu"
    if dev.type != "cuda":
        # Meta buffers are made by to_device, never placed by the engine.
        raise RuntimeError(f"the engine places no data on the '{dev.type}' device")
    return f"cuda:{dev.index or 0}"


META_COPY_OUT = "Cannot copy out of meta tensor; no data!"


def is_meta(d: Any) -> builtins.bool:
    """Whether ``d`` (a device, a name, None) is the meta device.

    >>> is_meta("meta"), is_meta(None)
    (True, False)
    """
    return d is not None and as_device(d).type == "meta"


def array_module(buf: Any) -> Any:
    """The array module of a tensor's buffer: NumPy, or CuPy for CUDA tensors.

    >>> array_module(np.zeros(2)) is np
    True
    """
    if type(buf).__module__.split(".")[0] == "cupy":
        import cupy  # noqa: PLC0415 - only where CUDA buffers exist

        return cupy
    return np


def to_device(buf: Any, d: Any) -> Any:
    """``buf`` on device ``d`` (a copy when it moves; on ``meta``, its shape and dtype)."""
    if as_device(d).type == "meta":
        return buf if type(buf) is MetaBuffer else MetaBuffer(buf.shape, buf.dtype)
    if type(buf) is MetaBuffer:
        raise NotImplementedError(META_COPY_OUT)
    target = engine_device(d)
    if target == "cpu" and type(buf) is np.ndarray:
        return buf
    return put_buffer(buf, target)


class Size(tuple):
    """A shape: ``torch.Size``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    def numel(self) -> builtins.int:
        return math.prod(self)

    def __getitem__(self, item: Any) -> Any:
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    # Concatenated or repeated, a Size stays a Size (as PyTorch's, from either side).
    def __add__(self, other: Any) -> Size:
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n: Any) -> Size:
        return Size(tuple(self) * n)

    __rmul__ = __mul__
