"""Small top-level functions of ``torch``: ``fill``, ``to_dlpack``, ``is_distributed``,
``get_device_module``.

>>> import funcgrad.torch as torch
>>> torch.fill(torch.zeros(2), 3.0)
tensor([3., 3.])
"""

from __future__ import annotations

import builtins
from typing import Any

from funcgrad.torch._tensor import Tensor, apply_op

__all__ = ["fill", "get_device_module", "is_distributed", "to_dlpack"]


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A new tensor shaped like ``input`` (same dtype) holding ``value`` everywhere; the
    gradient of ``value`` (a 0-d tensor) is the sum of the output's.

    >>> import funcgrad.torch as torch
    >>> torch.fill(torch.ones(2, dtype=torch.int64), 2.5)
    tensor([2, 2])
    """
    import funcgrad.numpy as fnp  # noqa: PLC0415

    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return apply_op("Fill", lambda a, v: fnp.where(True, fnp.broadcast_to(
            fnp.astype(v, a.dtype), a.shape), a), input, value)
    # where(True, ...) keeps ``input`` in the graph (PyTorch's FillBackward0, zero gradient).
    return apply_op("Fill", lambda a: fnp.where(True, fnp.full(a.shape, value, a.dtype), a),
                    input)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over ``tensor``'s memory (``from_dlpack`` of it, here or in another
    library, shares that memory).

    >>> import funcgrad.torch as torch
    >>> type(torch.to_dlpack(torch.ones(1))).__name__
    'PyCapsule'
    """
    return tensor.detach().__dlpack__()


def is_distributed(input: Tensor) -> builtins.bool:  # noqa: A002
    """Always False: funcgrad has no distributed tensors (as PyTorch's ordinary ones).

    >>> import funcgrad.torch as torch
    >>> torch.is_distributed(torch.ones(1))
    False
    """
    return False


def get_device_module(device: Any = None) -> Any:
    """The module of a device type: ``torch.cuda`` for ``"cuda"``, ``torch.cpu`` for
    ``"cpu"``; with no device, the accelerator's (CUDA when available) or the CPU's.

    >>> import funcgrad.torch as torch
    >>> torch.get_device_module("cpu") is torch.cpu
    True
    """
    import importlib  # noqa: PLC0415

    from funcgrad.torch._device import cuda_available  # noqa: PLC0415
    from funcgrad.torch._device import device as make

    if isinstance(device, make):
        name = device.type
    elif isinstance(device, str):
        name = make(device).type
    elif device is None:
        name = "cuda" if cuda_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    try:  # by name: the package imports this module (a static import would be a cycle)
        module = importlib.import_module(f"funcgrad.torch.{name}")
    except ImportError:
        module = None
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return module
