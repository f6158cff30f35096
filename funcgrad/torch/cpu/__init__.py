"""``torch.cpu``: the CPU's device functions and its deprecated ``amp`` spellings.

>>> import funcgrad.torch as torch
>>> torch.cpu.is_available(), torch.cpu.device_count()
(True, 1)
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch.cpu import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device: Any = None) -> None:
    """Nothing to wait for: CPU operations finish before they return."""
