"""``torch.utils.dlpack``: tensors to and from DLPack capsules (zero-copy exchange with
NumPy, CuPy, JAX and other libraries).

>>> import numpy as np
>>> from funcgrad.torch.utils.dlpack import from_dlpack
>>> from_dlpack(np.arange(3.0))
tensor([0., 1., 2.], dtype=torch.float64)
>>> t = from_dlpack(to_dlpack(from_dlpack(np.zeros(2))))   # a capsule, as PyTorch's
>>> t
tensor([0., 0.], dtype=torch.float64)
"""

from __future__ import annotations

import enum
from typing import Any

from funcgrad.torch import _creation
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._utility_functions import to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """DLPack's device types."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


class _Capsule:
    """A DLPack capsule (the legacy exchange object) as an object that speaks DLPack."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (int(DLDeviceType.kDLCPU), 0)


def from_dlpack(ext: Any) -> Tensor:
    """A tensor sharing memory with ``ext``: an object that speaks DLPack (NumPy, CuPy,
    JAX, a funcgrad Array) or a DLPack capsule (``to_dlpack``'s)."""
    if type(ext).__name__ != "PyCapsule":
        return _creation.from_dlpack(ext)
    try:
        return _creation.from_dlpack(_Capsule(ext))
    except BufferError:
        import cupy  # noqa: PLC0415 - (a device capsule: only CuPy can take it)

        return Tensor(cupy.from_dlpack(ext))
