"""PyTorch's refusal of a Python number where an operation has no Scalar overload.

``torch.maximum(t, 1.5)`` and ``t.atan2(2.0)`` are TypeErrors in PyTorch (its argument
parser types those arguments as Tensor alone), while ``torch.add(t, 1.5)`` is fine. The
face's implementations accept numbers everywhere; this table names the operations whose
arguments PyTorch takes as Tensors only, and :func:`install` guards their methods and
functions with PyTorch's texts.

>>> import funcgrad.torch as torch
>>> torch.maximum(torch.tensor([1.0]), 0.5)
Traceback (most recent call last):
  ...
TypeError: maximum(): argument 'other' (position 2) must be Tensor, not float
>>> torch.tensor([1.0]).atan2(2.0)
Traceback (most recent call last):
  ...
TypeError: atan2(): argument 'other' (position 1) must be Tensor, not float
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

# name: (the first argument's name, the second's), both Tensor-only in PyTorch.
_TENSOR_ONLY: dict[str, tuple[str, str]] = {
    **{n: ("input", "other") for n in (
        "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot", "nextafter",
        "logaddexp", "logaddexp2", "igamma", "igammac", "ldexp", "gcd", "lcm", "dist",
        "isclose", "kron", "inner", "cross", "matmul")},
    "heaviside": ("input", "values"),
    "dot": ("input", "tensor"),
    "mm": ("input", "mat2"),
    "bmm": ("input", "mat2"),
    "mv": ("input", "vec"),
    "outer": ("input", "vec2"),
    "masked_select": ("input", "mask"),
    "take": ("input", "index"),
    "polar": ("abs", "angle"),
    "complex": ("real", "imag"),
    "cdist": ("x1", "x2"),
}


def _is_number(x: Any) -> bool:
    return isinstance(x, (numbers.Number, np.generic)) and not hasattr(x, "_data")


def _refuse(name: str, arg: str, position: int | None, value: Any) -> None:
    """PyTorch's text; a keyword argument has no position in it."""
    t = type(value)
    shown = t.__name__ if t.__module__ == "builtins" else \
        f"{t.__module__.split('.')[0]}.{t.__name__}"
    where = "" if position is None else f" (position {position})"
    raise TypeError(f"{name}(): argument '{arg}'{where} must be Tensor, not {shown}")


def _guard_method(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    arg = _TENSOR_ONLY[name][1]

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        other = args[0] if args else kwargs.get(arg)
        if _is_number(other):
            _refuse(name, arg, 1 if args else None, other)
        return method(self, *args, **kwargs)

    checked.__wrapped_tensor_only__ = True  # type: ignore[attr-defined]
    return checked


def _guard_function(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    first, second = _TENSOR_ONLY[name]

    @functools.wraps(fn)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for position, arg in ((1, first), (2, second)):
            given = len(args) >= position
            value = args[position - 1] if given else kwargs.get(arg)
            if _is_number(value):
                _refuse(name, arg, position if given else None, value)
        return fn(*args, **kwargs)

    checked.__wrapped_tensor_only__ = True  # type: ignore[attr-defined]
    return checked


def install(tensor_cls: type, namespace: Any) -> None:
    """Guard the Tensor methods and ``namespace``'s functions named in the table."""
    for name in _TENSOR_ONLY:
        for owner, guard in ((tensor_cls, _guard_method), (namespace, _guard_function)):
            fn = getattr(owner, name, None)
            if fn is None or getattr(fn, "__wrapped_tensor_only__", False):
                continue
            setattr(owner, name, guard(name, fn))


__all__ = ["install"]
