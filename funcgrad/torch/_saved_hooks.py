"""The state of PyTorch's saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``).

While a pair ``(pack_hook, unpack_hook)`` is active, every value a new graph node keeps for
its backward goes through ``pack_hook`` when the node is made; what the hook returns is
kept instead (a :class:`Packed`), and ``unpack_hook`` gives the value back when backward
reads it. ``funcgrad.torch._graph`` packs and unpacks; ``torch.autograd.graph`` holds the
user-facing context managers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.ir import ShapedArray
from funcgrad.torch._grad_mode import set_grad_enabled

HookPair = tuple[Callable[[Any], Any], Callable[[Any], Any]]


class _State:
    # Innermost last; a list so that nested contexts restore the outer pair.
    stack: list[HookPair] = []
    # disable_saved_tensors_hooks' message (innermost last).
    disabled: list[str] = []


state = _State()


class Packed:
    """What ``pack_hook`` returned for one kept value, with what is needed to read it back:
    the hook to unpack it, the value's type, and whether the node kept it as an Array
    (``wrapped``) or as a raw buffer."""

    __slots__ = ("obj", "unpack", "aval", "wrapped")

    def __init__(self, obj: Any, unpack: Callable[[Any], Any], aval: ShapedArray,
                 wrapped: bool) -> None:
        self.obj = obj
        self.unpack = unpack
        self.aval = aval
        self.wrapped = wrapped


def active() -> HookPair | None:
    """The innermost pair of hooks, or None."""
    return state.stack[-1] if state.stack else None


def run_pack(hooks: HookPair, tensor: Any) -> Any:
    """``pack_hook(tensor)``, run with grad mode off as PyTorch runs it."""
    with set_grad_enabled(False):
        return hooks[0](tensor)


def run_unpack(unpack: Callable[[Any], Any], obj: Any, tensor_cls: type) -> Any:
    """``unpack_hook(obj)``, which must give a Tensor back (PyTorch's TypeError otherwise)."""
    t = unpack(obj)
    if not isinstance(t, tensor_cls):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(t).__name__}")
    return t


def push(hooks: HookPair) -> None:
    """Make ``hooks`` the innermost pair (PyTorch's error under
    ``disable_saved_tensors_hooks``)."""
    if state.disabled:
        raise RuntimeError(state.disabled[-1])
    state.stack.append(hooks)


def pop() -> None:
    state.stack.pop()
