"""The tangents of dual tensors (``torch.autograd.forward_ad``): which tensor carries which
tangent while a forward-AD level is open. Kept beside the tensors, not in them, so that
tensors pay nothing when forward AD is not used; ``forward_ad`` fills and clears it, the
tensor repr reads it."""

from __future__ import annotations

import weakref
from typing import Any


class _State:
    level: int | None = None
    # id(tensor) -> (a weak reference to the tensor, its tangent Tensor)
    tangents: dict[int, tuple[weakref.ref[Any], Any]] = {}


state = _State()


def tangent_of(t: Any) -> Any:
    """``t``'s tangent at the open level, or None."""
    if not state.tangents:
        return None
    entry = state.tangents.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    return entry[1]


def set_tangent(t: Any, tangent: Any) -> None:
    key = id(t)

    def gone(ref: weakref.ref[Any]) -> None:
        # (The entry goes with its tensor; a later tensor may have taken the id since.)
        entry = state.tangents.get(key)
        if entry is not None and entry[0] is ref:
            del state.tangents[key]

    state.tangents[key] = (weakref.ref(t, gone), tangent)


def drop_tangent(t: Any) -> None:
    if tangent_of(t) is not None:
        del state.tangents[id(t)]


def clear() -> None:
    state.tangents.clear()


def check_tangent(primal: Any, tangent: Any, dtype: bool = True) -> None:
    """PyTorch's errors for a tangent that is not floating point (``dtype``: a Tensor's
    dtype is checked) or has another size than its primal (``make_dual``,
    ``torch.func.jvp``)."""
    if dtype and not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(primal.shape) != tuple(tangent.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(primal.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
