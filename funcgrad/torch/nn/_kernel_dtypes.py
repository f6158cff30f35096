"""The dtypes PyTorch's CPU kernels of ``torch.nn.functional`` accept, and the errors for the
others (``NotImplementedError: "elu_cpu" not implemented for 'Long'``).

Most of these kernels are dispatched over the floating types only (some add ``Long``); an
integer or bool Tensor reaching one is refused there, where funcgrad would otherwise promote
it to a float and compute.

>>> import funcgrad.torch as torch
>>> check_kernel_dtype("elu_cpu", torch.tensor([1]))
Traceback (most recent call last):
...
NotImplementedError: "elu_cpu" not implemented for 'Long'
>>> check_kernel_dtype("avg_pool2d", torch.tensor([1]), also=("int64",))
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch._dtypes import cpp_name, promote_types
from funcgrad.torch._tensor import Tensor, check_bool_subtraction

__all__ = ["check_kernel_dtype", "check_pair_kernel_dtype", "is_float_tensor", "no_kernel",
           "refuse_bool_subtraction"]


def is_float_tensor(x: Any) -> bool:
    """Whether ``x`` is not a Tensor of an integer or bool dtype (anything else passes)."""
    if not isinstance(x, Tensor):
        return True
    return bool(x.dtype.is_floating_point or x.dtype.is_complex)


def no_kernel(kernel: str, x: Any) -> NotImplementedError:
    """PyTorch's error for a kernel without a version for ``x``'s dtype."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{cpp_name(x.dtype)}\'')


def check_kernel_dtype(kernel: str, *tensors: Any, also: tuple[str, ...] = ()) -> None:
    """Raise PyTorch's error for the first Tensor of ``tensors`` whose dtype is integral or
    bool (and not one of ``also``, NumPy names): ``kernel`` is only for floating types."""
    for x in tensors:
        if not is_float_tensor(x) and x.dtype.name not in also:
            raise no_kernel(kernel, x)


def check_pair_kernel_dtype(kernel: str, a: Any, b: Any) -> None:
    """A binary kernel (``mse_cpu``...) over the promoted dtype of two Tensors: refused
    where neither is floating (PyTorch names the promoted dtype)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and not (
            is_float_tensor(a) or is_float_tensor(b)):
        dt = promote_types(a.dtype, b.dtype)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{cpp_name(dt)}\'')


# PyTorch's errors for ``a - b`` with a bool Tensor (the Tensor operator's own check).
refuse_bool_subtraction = check_bool_subtraction
