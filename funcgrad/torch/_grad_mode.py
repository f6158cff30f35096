"""Grad mode of the Tensor facade: ``no_grad``, ``enable_grad``, ``set_grad_enabled``.

Each works as a context manager and as a decorator, as in PyTorch.

>>> import funcgrad.torch as torch
>>> with torch.no_grad():
...     torch.is_grad_enabled()
False
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])



def _decorated(fn: F, context: Callable[[], Any]) -> F:
    """``fn`` run under ``context()``; a generator function's body runs under it at each
    resumption (and the caller's mode is back between them), as PyTorch's decorators do."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args: Any, **kwargs: Any) -> Any:
            gen = fn(*args, **kwargs)
            try:
                with context():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with context():
                            gen.close()
                        raise
                    except BaseException as e:  # noqa: BLE001 - handed to the generator
                        with context():
                            response = gen.throw(e)
                    else:
                        with context():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator  # type: ignore[return-value]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with context():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

class _Mode(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        # Inside inference_mode: new tensors are inference tensors, and nothing records.
        self.inference = False


_mode = _Mode()


def is_grad_enabled() -> bool:
    """Whether Tensor operations record a graph for ``backward``."""
    return _mode.enabled


class set_grad_enabled:  # noqa: N801 - PyTorch's name
    """Turn graph recording on or off (a context manager, a decorator, or a plain call)."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = _mode.enabled
        _mode.enabled = self.mode

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _mode.enabled = self.prev

    def __call__(self, fn: F) -> F:
        mode = self.mode
        _mode.enabled = self.prev
        return _decorated(fn, lambda: set_grad_enabled(mode))


class _FixedMode:
    mode = True

    def __new__(cls, func: Callable[..., Any] | None = None) -> Any:
        # Bare ``@no_grad`` (without parentheses) decorates right away.
        self = super().__new__(cls)
        if func is not None:
            return self(func)
        return self

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        self.prev = True

    def __enter__(self) -> None:
        self.prev = _mode.enabled
        _mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _mode.enabled = self.prev

    def __call__(self, fn: F) -> F:
        mode = self.mode
        return _decorated(fn, lambda: set_grad_enabled(mode))


class no_grad(_FixedMode):  # noqa: N801 - PyTorch's name
    """Disable graph recording inside the block or the decorated function.

    >>> import funcgrad.torch as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with torch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    mode = False


class enable_grad(_FixedMode):  # noqa: N801 - PyTorch's name
    """Enable graph recording (inside ``no_grad``, for instance).

    >>> import funcgrad.torch as torch
    >>> with torch.no_grad(), torch.enable_grad():
    ...     torch.is_grad_enabled()
    True
    """

    mode = True


class inference_mode:  # noqa: N801 - PyTorch's name
    """No graph is recorded inside, and the tensors made inside are inference tensors
    (``is_inference()``): they cannot be saved for backward later, nor updated in place
    outside inference mode. ``inference_mode(False)`` turns it off (grad mode on) inside.
    A context manager or a decorator (with or without parentheses).

    >>> import funcgrad.torch as torch
    >>> with torch.inference_mode():
    ...     x = torch.ones(2)
    ...     torch.is_grad_enabled(), x.is_inference()
    (False, True)
    """

    def __new__(cls, mode: Any = True) -> Any:
        self = super().__new__(cls)
        if callable(mode):
            self.mode = True
            return self(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        self.mode = True if callable(mode) else bool(mode)
        self.prev = (True, False)

    def __enter__(self) -> None:
        self.prev = (_mode.enabled, _mode.inference)
        # As PyTorch's InferenceMode(enabled): grad mode is the opposite of the mode.
        _mode.enabled = not self.mode
        _mode.inference = self.mode

    def __exit__(self, *exc: object) -> None:
        _mode.enabled, _mode.inference = self.prev

    def __call__(self, fn: F) -> F:
        on = self.mode
        return _decorated(fn, lambda: inference_mode(on))


def is_inference_mode_enabled() -> bool:
    """Whether ``inference_mode`` is on.

    >>> import funcgrad.torch as torch
    >>> torch.is_inference_mode_enabled()
    False
    """
    return _mode.inference


def is_recording() -> bool:
    """Whether Tensor operations record the graph now: grad mode on, inference mode off
    (``enable_grad`` inside ``inference_mode`` records nothing, as in PyTorch)."""
    return _mode.enabled and not _mode.inference


# How many torch.func transforms (grad, vmap, jacrev...) are running the user's function
# now: PyTorch refuses backward() there.
FUNCTORCH_DEPTH = [0]
# How many reverse-mode torch.func transforms (grad, grad_and_value, vjp, jacrev) are
# running the user's function now. They run it with grad mode on, as PyTorch's do (a
# no_grad around the transform does not reach inside), so grad mode off there is a no_grad
# of the function's own, which reverse transforms respect (forward mode ignores it, as
# PyTorch's jvp and jacfwd do): the operations under it see their inputs as constants.
REVERSE_DEPTH = [0]
# The torch.func transforms running now, innermost last: their kind ("grad" for grad, vjp,
# jvp, jacrev..., or "vmap") and the epoch they began. Every Tensor records the epoch it
# was made in (``_born``), so those made before a grad transform began are the ones it
# captured, which PyTorch forbids it to write in place.
FUNCTORCH_LEVELS: list[tuple[str, int]] = []
EPOCH = [0]
_BACKWARD_IN_TRANSFORM = (
    "backward() called inside a functorch transform. This is not supported, please use "
    "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
    "transforms.")


def check_backward_outside_transforms() -> None:
    """PyTorch's refusal of ``backward()`` inside a ``torch.func`` transform."""
    if FUNCTORCH_DEPTH[0]:
        raise RuntimeError(_BACKWARD_IN_TRANSFORM)
