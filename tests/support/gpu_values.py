"""Helpers of the GPU tests: values as host NumPy arrays, through CuPy's explicit copy
(``.get()``), and the skip where no device (nor the emulator) is found."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def host(x: Any) -> np.ndarray:
    """An Array, a tensor or a CuPy array (real or emulated) as a NumPy array."""
    v = getattr(x, "_value", None)
    if v is None and hasattr(x, "_data"):
        v = x._data
    v = x if v is None else v
    return v.get() if type(v).__module__.startswith("cupy") else np.asarray(v)


def need_device() -> None:
    """Skip unless CuPy finds a device (the emulator stands in for one in the suite)."""
    from funcgrad.devices import get_backend  # noqa: PLC0415

    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator (CuPy's wheel and g++ are needed)")
