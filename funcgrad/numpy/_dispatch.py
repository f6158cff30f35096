"""Let funcgrad.numpy functions accept Tensors of the facade (and return Tensors).

The facade registers one hook; each public function checks its arguments for a
Tensor and, if it finds one, hands the call to the hook, which records it for
``backward``.

>>> from funcgrad.numpy._dispatch import tensor_aware
>>> tensor_aware(abs)(-1)
1
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_state: dict[str, Any] = {"type": None, "hook": None}


def register(tensor_type: type, hook: Callable[..., Any]) -> None:
    """Called by the Tensor facade: ``hook(fn, args, kwargs)`` handles calls with Tensors."""
    _state["type"], _state["hook"] = tensor_type, hook


def has_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    t = _state["type"]
    if t is None:
        return False
    for a in (*args, *kwargs.values()):
        if isinstance(a, t):
            return True
        if isinstance(a, (list, tuple)) and any(isinstance(e, t) for e in a):
            return True
    return False


def tensor_aware(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` that forwards calls with Tensor arguments to the facade's hook."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _state["type"] is not None and has_tensor(args, kwargs):
            return _state["hook"](fn, args, kwargs)
        return fn(*args, **kwargs)

    return wrapper
