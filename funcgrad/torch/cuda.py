"""``torch.cuda``: whether a CUDA device is usable, and how many.

>>> import funcgrad.torch as torch
>>> isinstance(torch.cuda.is_available(), bool)
True
"""

from __future__ import annotations

from funcgrad.devices import get_backend


def is_available() -> bool:
    """True when CuPy finds a CUDA device."""
    return bool(get_backend("cupy").available())


def device_count() -> int:
    """The number of CUDA devices (0 without one)."""
    return len(get_backend("cupy").devices()) if is_available() else 0


def current_device() -> int:
    return 0


def synchronize() -> None:
    """Wait for the device's queued work."""
    if is_available():
        import cupy  # noqa: PLC0415

        cupy.cuda.get_current_stream().synchronize()


def manual_seed(seed: int) -> None:
    from funcgrad.torch._creation import manual_seed as _seed  # noqa: PLC0415

    _seed(seed)


manual_seed_all = manual_seed
