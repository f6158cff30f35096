"""``torch.nn.attention``: which kernels ``scaled_dot_product_attention`` may use.

funcgrad has one implementation of attention (PyTorch's "math" formulation, fused by the
compiler on a GPU); the switches still decide, as in PyTorch, whether a call is allowed: on
the CPU the math or flash switch must be on, on a GPU any of the four kernels'.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> from funcgrad.torch.nn.attention import SDPBackend, sdpa_kernel
>>> q = torch.ones(1, 1, 2, 4)
>>> with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
...     F.scaled_dot_product_attention(q, q, q).shape
torch.Size([1, 1, 2, 4])
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterator
from typing import Any

from funcgrad.torch._sdp_switches import SDP as _SDP

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class _SDPBackend(enum.IntEnum):
    """The kernels of scaled-dot-product attention (PyTorch's ``SDPBackend``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self) -> str:
        return f"SDPBackend.{self.name}"

    def __repr__(self) -> str:
        return f"<SDPBackend.{self.name}: {self.value}>"


_SDPBackend.__name__ = "SDPBackend"  # PyTorch's: the class prints as _SDPBackend, is named so
SDPBackend = _SDPBackend

# The switch of each backend, in PyTorch's order (backends.cuda's names).
_SWITCHES = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
             "mem_efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH,
             "overrideable": SDPBackend.OVERRIDEABLE}
_PRIORITY = [1, 2, 0, 3, 4]  # PyTorch's default order: flash, efficient, math, cudnn, ...


def _current(with_priority: bool = False) -> list[_SDPBackend]:
    on = [b for name, b in _SWITCHES.items() if _SDP[name]]
    if with_priority:
        on.sort(key=lambda b: _PRIORITY.index(int(b)))
    return on


def _select(backends: list[_SDPBackend], set_priority: bool) -> None:
    for name, b in _SWITCHES.items():
        _SDP[name] = b in backends
    if set_priority:
        order = [int(b) for b in backends]
        _PRIORITY[:] = order + [p for p in _PRIORITY if p not in order]


@contextlib.contextmanager
def sdpa_kernel(backends: list[_SDPBackend] | _SDPBackend, set_priority: bool = False
                ) -> Iterator[dict[str, Any]]:
    """Allow only ``backends`` inside the block (the switches are restored after it).

    >>> from funcgrad.torch.nn.attention import SDPBackend, sdpa_kernel
    >>> from funcgrad.torch.backends.cuda import flash_sdp_enabled
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     flash_sdp_enabled()
    False
    """
    if not isinstance(backends, (list, _SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, _SDPBackend) else list(dict.fromkeys(backends))
    previous = _current(with_priority=set_priority)
    saved_priority = list(_PRIORITY)
    try:
        _select(chosen, set_priority)
        yield {}
    finally:
        _select(previous, False)
        _PRIORITY[:] = saved_priority


def check_enabled(on_gpu: bool) -> None:
    """PyTorch's error when no kernel that can run on the query's device is switched on."""
    allowed = ("flash", "mem_efficient", "math", "cudnn") if on_gpu else ("math", "flash")
    if not any(_SDP[name] for name in allowed):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This "
                           "is likely due to turning off both the math kernel and the fused "
                           "kernels.")
