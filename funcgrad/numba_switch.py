"""Whether funcgrad may compile CPU loops with numba (jit's fused clusters, the batched
small-matrix loops of the decompositions, threefry): numba is installed (the
``cpu-fusion`` extra) and neither ``FUNCGRAD_CPU_FUSION=0`` in the environment nor
``funcgrad.config.update("funcgrad_cpu_fusion", False)`` turned it off.

>>> enabled() in (True, False)
True
"""

from __future__ import annotations

import os
from typing import Any

from funcgrad.config import config


def numba_module() -> Any:
    """The numba module, or None where it is not installed."""
    try:
        import numba  # noqa: PLC0415 - optional (the cpu-fusion extra), loaded on first use
    except ImportError:
        return None
    return numba


def switched_on() -> bool:
    """Whether the switches allow numba (it may still be missing)."""
    on = config.read("funcgrad_cpu_fusion")
    if on is None:
        on = os.environ.get("FUNCGRAD_CPU_FUSION", "1").strip().lower() not in (
            "0", "false", "no", "off")
    return bool(on)


def enabled() -> bool:
    """Whether numba is installed and switched on.

    >>> enabled() in (True, False)
    True
    """
    return switched_on() and numba_module() is not None


__all__ = ["enabled", "numba_module", "switched_on"]
