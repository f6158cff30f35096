"""``torch.compiler``: the compiler's controls (``reset``, ``is_compiling``, ``disable``).

>>> import funcgrad.torch as torch
>>> torch.compiler.is_compiling()
False
>>> torch.compiler.reset()   # every compiled function re-stages on its next call
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from funcgrad.torch._compile import compile, is_compiling, reset

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "reset"]


def is_dynamo_compiling() -> bool:
    """Whether a compiled function is being staged now (PyTorch's alias)."""
    return is_compiling()


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True) -> Any:
    """Run ``fn`` eagerly even when called from a compiled function: calling it while a
    compiled function is staged breaks the graph (that call of the compiled function
    runs eagerly, and ``fn`` runs on real values).

    >>> import funcgrad.torch as torch
    >>> @torch.compiler.disable
    ... def log_value(t):
    ...     return t.item()
    >>> log_value(torch.tensor(2.0))
    2.0
    """
    if fn is None:
        return functools.partial(disable, recursive=recursive)

    @functools.wraps(fn)
    def eager(*args: Any, **kwargs: Any) -> Any:
        if is_compiling():
            from funcgrad.torch._compile import _Break  # noqa: PLC0415

            raise _Break(f"{getattr(fn, '__qualname__', fn)} is marked "
                         "torch.compiler.disable")
        return fn(*args, **kwargs)

    return eager
