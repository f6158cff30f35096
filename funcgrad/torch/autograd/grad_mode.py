"""``torch.autograd.grad_mode``: the context managers that switch autograd's modes.

``no_grad``, ``enable_grad``, ``set_grad_enabled`` and ``inference_mode`` are the ones
``funcgrad.torch`` exports; ``set_multithreading_enabled`` is PyTorch's switch for running
backward on device worker threads. funcgrad's backward always runs on the calling thread
(what ``mode=False`` asks for), so the switch is kept, per thread, for programs that set
it, and changes no result.

>>> import funcgrad.torch as torch
>>> with torch.autograd.grad_mode.no_grad():
...     torch.is_grad_enabled()
False
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from funcgrad.torch._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

F = TypeVar("F", bound=Callable[..., Any])


class _Threads(threading.local):
    def __init__(self) -> None:
        self.enabled = True


_threads = _Threads()


def _is_multithreading_enabled() -> bool:
    """Whether backward may use worker threads (PyTorch's ``torch._C`` query)."""
    return _threads.enabled


class set_multithreading_enabled:  # noqa: N801 - PyTorch's name
    """Enable or disable multithreaded backward; as in PyTorch the switch takes effect
    when made (a plain call), and a ``with`` block or a decorated call restores it after.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch.autograd.grad_mode import _is_multithreading_enabled
    >>> with torch.autograd.set_multithreading_enabled(False):
    ...     _is_multithreading_enabled()
    False
    >>> _is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _threads.enabled
        _threads.enabled = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _threads.enabled = self.prev

    def clone(self) -> set_multithreading_enabled:
        """A new switch with the same mode (it takes effect at once, as this one did)."""
        return self.__class__(self.mode)

    def __call__(self, fn: F) -> F:
        # As PyTorch's decorator: each call runs in a fresh switch (no reset here).
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


__all__ = ["enable_grad", "inference_mode", "no_grad", "set_grad_enabled",
           "set_multithreading_enabled"]
