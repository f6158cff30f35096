"""Values of GPU tests as host NumPy arrays, through CuPy's explicit copy (``.get()``)."""

from __future__ import annotations

from typing import Any

import numpy as np


def host(x: Any) -> np.ndarray:
    """An Array, a tensor or a CuPy array (real or emulated) as a NumPy array."""
    v = getattr(x, "_value", None)
    if v is None and hasattr(x, "_data"):
        v = x._data
    v = x if v is None else v
    return v.get() if type(v).__module__.startswith("cupy") else np.asarray(v)
