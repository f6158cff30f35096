"""A CuPy emulator for machines without a GPU: CuPy's rules, NumPy's arithmetic.

``install()`` puts it in ``sys.modules`` as ``cupy`` (and ``cupyx``), so every lazy
``import cupy`` in funcgrad gets it; ``uninstall()`` restores what was there. Device arrays
are a distinct type that refuses NumPy arrays and implicit host conversion, fresh memory is
garbage, raw kernels are compiled by the real NVRTC with CuPy's options and run by
funcgrad's host harness with their real grid and block, and ``STATS`` counts transfers,
synchronisations, kernel launches and compiles (``counting()`` gives the increase over a
block of code).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from fakecupy import _array, _kernels, _module
from fakecupy import nccl as _nccl
from fakecupy._array import STATS, Stats, counting, ndarray
from fakecupy.cupyx import make_modules

# The modules install() replaced ("saved" is None while the emulator is not installed).
_state: dict[str, dict[str, Any] | None] = {"saved": None}
_CUPYX = make_modules()


def _stand_ins() -> dict[str, types.ModuleType]:
    cp: Any = _module
    cp.cuda.nccl = _nccl  # cupy.cuda.nccl, backed by MPI (fakecupy/nccl.py)
    return {"cupy": cp, "cupy.cuda": cp.cuda, "cupy.cuda.runtime": cp.cuda.runtime,
            "cupy.cuda.nccl": _nccl, "cupy._core": cp._core,
            "cupy._core._routines_linalg": cp._core._routines_linalg,
            "cupy.linalg": cp.linalg, "cupy.fft": cp.fft, "cupy.random": cp.random,
            **_CUPYX}


def _prepare_real_cupy() -> None:
    """Take what is needed from the real CuPy before hiding it: its NVRTC option tuple
    (include directories around the user's options) and an initialised NVRTC."""
    if _kernels.CUPY_OPTION_PARTS is not None:
        return
    from cupy_backends.cuda.libs import nvrtc  # noqa: PLC0415

    from funcgrad.backends.cuda_codegen import cupy_options  # noqa: PLC0415

    nvrtc.getVersion()
    marker = "-DFAKECUPY_USER_OPTIONS"
    full = cupy_options((marker,))
    i = full.index(marker)
    _kernels.CUPY_OPTION_PARTS = (full[:i], full[i + 1:])


def available() -> bool:
    """Whether the emulator can run here: CuPy's wheel (NVRTC, headers) and g++."""
    import importlib.util  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    return importlib.util.find_spec("cupy_backends") is not None and \
        shutil.which("g++") is not None


def install(n_devices: int = 1) -> Any:
    """Make ``import cupy`` give the emulator; returns it. Counters start from zero."""
    if _state["saved"] is not None:
        return _module
    _prepare_real_cupy()
    saved = _state["saved"] = {k: v for k, v in sys.modules.items()
                               if k in ("cupy", "cupyx") or k.startswith(("cupy.", "cupyx."))}
    for k in saved:
        del sys.modules[k]
    sys.modules.update(_stand_ins())
    _array.N_DEVICES = n_devices
    STATS.reset()
    return _module


def uninstall() -> None:
    """Put back the modules ``install`` replaced."""
    saved = _state["saved"]
    if saved is None:
        return
    for k in _stand_ins():
        sys.modules.pop(k, None)
    sys.modules.update(saved)
    _state["saved"] = None


def installed() -> bool:
    return _state["saved"] is not None


__all__ = ["STATS", "Stats", "available", "counting", "install", "installed", "ndarray",
           "uninstall"]
