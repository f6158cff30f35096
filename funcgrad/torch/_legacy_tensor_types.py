"""PyTorch's legacy tensor types: ``torch.FloatTensor``, ``torch.LongTensor``...,
``torch.cuda.FloatTensor``..., and ``set_default_tensor_type``.

Each is a class that makes tensors of its dtype and device (``FloatTensor(2, 3)`` is an
uninitialised 2x3 float32 tensor, ``LongTensor([1, 2])`` converts data) and matches, with
``isinstance``, the tensors of that dtype and device; tensors themselves stay of class
``Tensor``, as in PyTorch.

>>> import funcgrad.torch as torch
>>> torch.LongTensor([1, 2])
tensor([1, 2])
>>> isinstance(torch.ones(2), torch.FloatTensor), isinstance(torch.ones(2), torch.DoubleTensor)
(True, False)
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from funcgrad.torch import _dtypes as D
from funcgrad.torch._device import Size, cuda_available, set_default_device
from funcgrad.torch._tensor import Tensor

__all__ = ["CUDA_TYPES", "TYPES", "set_default_tensor_type", "tensor_type", "tensortype"]

_SIGNATURES = (" * (*, torch.device device = None)\n"
               "      didn't match because some of the keywords were incorrect: {keys}\n"
               " * (torch.Storage storage)\n * (Tensor other)\n"
               " * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")


def _options(d: D.dtype, cuda: builtins.bool) -> str:
    """How PyTorch's C++ prints a tensor's dtype and device in the legacy constructor's error."""
    names = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool"}
    return (f"TensorOptions(dtype={names.get(d.name, d.name)}, "
            f"device={'cuda:0' if cuda else 'cpu'}, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


class tensortype(type):  # noqa: N801 - PyTorch's name for the types' metaclass
    """The class of ``torch.FloatTensor`` and its kin."""

    dtype: D.dtype
    is_cuda: builtins.bool
    is_sparse = False

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and \
            builtins.bool(obj.is_cuda) == cls.is_cuda

    def __repr__(cls) -> str:
        return f"<class '{cls._torch_name}'>"

    @property
    def _torch_name(cls) -> str:
        return f"torch.{'cuda.' if cls.is_cuda else ''}{cls.__name__}"

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        from funcgrad.torch._creation import empty, tensor  # noqa: PLC0415

        if cls.is_cuda and not cuda_available():
            raise TypeError(f"type {cls._torch_name} not available. Torch not compiled with "
                            "CUDA enabled.")
        device = kwargs.pop("device", "cuda" if cls.is_cuda else None)
        if kwargs:
            given = ", ".join([type(a).__name__ for a in args] +
                              [f"{k}={_kind(v)}" for k, v in kwargs.items()])
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({given}), but expected one of:\n"
                            + _SIGNATURES.format(keys=", ".join(kwargs)))
        if not args:
            return empty(0, dtype=cls.dtype, device=device)
        if isinstance(args[0], Size) or builtins.all(
                isinstance(a, (builtins.int, np.integer)) and not isinstance(a, builtins.bool)
                for a in args):
            size = tuple(args[0]) if isinstance(args[0], Size) else args
            return empty(*size, dtype=cls.dtype, device=device)
        (data,) = args
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype or builtins.bool(data.is_cuda) != cls.is_cuda:
                raise TypeError(f"expected {_options(cls.dtype, cls.is_cuda)} (got "
                                f"{_options(data.dtype, builtins.bool(data.is_cuda))})")
            return data.view(data.shape)
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(data, (builtins.float, builtins.complex, builtins.bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=cls.dtype, device=device)


def _kind(v: Any) -> str:
    return "torch.dtype" if isinstance(v, D.dtype) else type(v).__name__


_NAMES = {"FloatTensor": D.float32, "DoubleTensor": D.float64, "HalfTensor": D.float16,
          "BFloat16Tensor": D.bfloat16, "LongTensor": D.int64, "IntTensor": D.int32,
          "ShortTensor": D.int16, "CharTensor": D.int8, "ByteTensor": D.uint8,
          "BoolTensor": D.bool}


def _make(name: str, d: D.dtype, cuda: builtins.bool) -> tensortype:
    doc = f"Tensors of dtype {d}{' on a GPU' if cuda else ''} (a legacy PyTorch type)."
    return tensortype(name, (), {"dtype": d, "is_cuda": cuda, "__doc__": doc,
                                 "__module__": "funcgrad.torch.cuda" if cuda
                                 else "funcgrad.torch"})


TYPES = {name: _make(name, d, False) for name, d in _NAMES.items()}
CUDA_TYPES = {name: _make(name, d, True) for name, d in _NAMES.items()}


def resolve(t: Any) -> tensortype | None:
    """The legacy type named by ``t`` (a type, or ``"torch.FloatTensor"``,
    ``"torch.cuda.LongTensor"``), or None when ``t`` names none."""
    if isinstance(t, tensortype):
        return t
    if isinstance(t, str):
        name = t.removeprefix("torch.")
        if name.startswith("cuda."):
            return CUDA_TYPES.get(name.removeprefix("cuda."))
        return TYPES.get(name)
    return None


_dtype_type = Tensor.type


def tensor_type(self: Tensor, dtype: Any = None) -> Any:
    """``Tensor.type``: the legacy type's name (``'torch.FloatTensor'``) without an
    argument; else the tensor converted to a dtype or a legacy type (a type or its name).

    >>> import funcgrad.torch as torch
    >>> torch.ones(2).type(torch.LongTensor)
    tensor([1, 1])
    """
    legacy = resolve(dtype)
    if legacy is not None:
        moved = self.to("cuda" if legacy.is_cuda else "cpu") \
            if builtins.bool(self.is_cuda) != legacy.is_cuda else self
        return _dtype_type(moved, legacy.dtype)
    if isinstance(dtype, str):  # (a string names a legacy type, never a dtype)
        raise ValueError(f"invalid type: '{dtype}'")
    return _dtype_type(self, dtype)


def set_default_tensor_type(t: Any) -> None:
    """Make ``t``'s dtype (and, for a ``torch.cuda`` type, the GPU) the default of new
    tensors (deprecated in PyTorch 2.1: ``set_default_dtype``/``set_default_device``).

    >>> import warnings
    >>> import funcgrad.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.set_default_tensor_type(torch.DoubleTensor)
    >>> torch.tensor([1.0]).dtype
    torch.float64
    >>> torch.set_default_dtype(torch.float32)
    """
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    kind = resolve(t)
    if kind is None:
        if isinstance(t, str):
            first, _, rest = t.partition(".")
            if first != "torch":
                raise ModuleNotFoundError(f"No module named '{first}'")
            raise AttributeError(f"module 'torch' has no attribute '{rest}'")
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if kind.is_cuda and not cuda_available():
        raise TypeError(f"type {kind._torch_name} not available. Torch not compiled with CUDA "
                        "enabled.")
    if not kind.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(kind.dtype)
    set_default_device("cuda" if kind.is_cuda else None)
