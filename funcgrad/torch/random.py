"""``torch.random``: the default CPU generator's seed and state, and ``fork_rng``.

>>> import funcgrad.torch as torch
>>> with torch.random.fork_rng():
...     _ = torch.rand(3)
>>> torch.random.default_generator is torch.default_generator
True
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from funcgrad.torch._random import (
    Generator,
    _default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

default_generator = _default_generator()

_fork_rng_warned: list[bool] = []  # once per process, as PyTorch warns


@contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Restore the CPU generator's state (``get_rng_state``) when the block ends, as
    PyTorch's ``fork_rng``. GPU generators (CuPy's cuRAND) have no state to save:
    ``devices`` is checked and listed as PyTorch lists it, but their draws are not rolled
    back."""
    if device_type == "meta" or not enabled:
        yield
        return
    from funcgrad.torch import cuda  # noqa: PLC0415

    kind = (device_type or "cuda").upper()
    if devices is None:
        count = cuda.device_count() if kind == "CUDA" else 0
        if count > 1 and not _fork_rng_warned:
            warnings.warn(
                f"{kind} reports that you have {count} available devices, and you have used "
                f"{_caller} without explicitly specifying which devices are being used. For "
                f"safety, we initialize *every* {kind} device by default, which can be quite "
                f"slow if you have a lot of {kind}s. If you know that you are only making use "
                f"of a few {kind} devices, set the environment variable {kind}_VISIBLE_DEVICES "
                f"or the '{_devices_kw}' keyword argument of {_caller} with the set of devices "
                "you are actually using.", stacklevel=3)
            _fork_rng_warned.append(True)
    else:
        list(devices)
    cpu_rng_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)


__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]
