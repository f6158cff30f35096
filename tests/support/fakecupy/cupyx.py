"""``cupyx`` as the emulator has it: the scatter functions, ``cupyx.scipy.special`` and
``cupyx.scipy.linalg`` (``_linalg``)."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import scipy.special

from fakecupy._array import ndarray, unwrap
from fakecupy._linalg import install_overrides
from fakecupy._module import submodule


def _scatter(u: np.ufunc, name: str) -> Any:
    def f(a: Any, slices: Any, value: Any) -> None:
        if not isinstance(a, ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        u.at(a._a, unwrap(slices, name), unwrap(value, name))

    f.__name__ = name
    return f


class PinnedMemoryPointer(bytearray):
    """Page-locked host memory (host bytes here): CuPy's pinned arrays are NumPy arrays
    over one of these, their ``base``."""

    __module__ = "cupy.cuda.pinned_memory"


def empty_pinned(shape: Any, dtype: Any = float, order: str = "C") -> np.ndarray:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dt = np.dtype(dtype)
    mem = PinnedMemoryPointer(max(int(np.prod(shape)) * dt.itemsize, 1))
    return np.ndarray(shape, dt, buffer=mem, order=order)


def empty_like_pinned(a: Any, dtype: Any = None, order: str = "K", subok: Any = None,
                      shape: Any = None) -> np.ndarray:
    return empty_pinned(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def zeros_like_pinned(a: Any, dtype: Any = None, order: str = "K", subok: Any = None,
                      shape: Any = None) -> np.ndarray:
    out = empty_like_pinned(a, dtype, order, subok, shape)
    out[...] = 0
    return out


def make_modules() -> dict[str, types.ModuleType]:
    cupyx = types.ModuleType("cupyx")
    cupyx.empty_pinned = empty_pinned  # type: ignore[attr-defined]
    cupyx.empty_like_pinned = empty_like_pinned  # type: ignore[attr-defined]
    cupyx.zeros_like_pinned = zeros_like_pinned  # type: ignore[attr-defined]
    cupyx.scatter_add = _scatter(np.add, "scatter_add")  # type: ignore[attr-defined]
    cupyx.scatter_max = _scatter(np.maximum, "scatter_max")  # type: ignore[attr-defined]
    cupyx.scatter_min = _scatter(np.minimum, "scatter_min")  # type: ignore[attr-defined]
    scipy_mod = types.ModuleType("cupyx.scipy")
    special = submodule("cupyx.scipy.special", scipy.special)
    scipy_mod.special = special  # type: ignore[attr-defined]
    linalg = install_overrides()
    scipy_mod.linalg = linalg  # type: ignore[attr-defined]
    cupyx.scipy = scipy_mod  # type: ignore[attr-defined]
    return {"cupyx": cupyx, "cupyx.scipy": scipy_mod, "cupyx.scipy.special": special,
            "cupyx.scipy.linalg": linalg}
