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


def make_modules() -> dict[str, types.ModuleType]:
    cupyx = types.ModuleType("cupyx")
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
