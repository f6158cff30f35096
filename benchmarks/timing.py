"""Timing helpers shared by the benchmark scripts (run them from the repository root).

Timings are medians over interleaved rounds (every implementation once per round), so
a change of load on the machine during a run moves all rows alike instead of skewing
the ratios.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any


def calls_per_repeat(fn: Callable[[], Any], min_time: float) -> int:
    """How many calls make one timeit repeat last about ``min_time`` seconds."""
    timer = timeit.Timer(fn)
    per_call = timer.timeit(number=1)
    if per_call < min_time / 100:
        pilot = max(1, int(min_time / 100 / max(per_call, 1e-9)))
        per_call = timer.timeit(number=pilot) / pilot
    return max(1, round(min_time / max(per_call, 1e-9)))


def median_times(impls: dict[str, Callable[[], Any]], repeat: int, min_time: float
                 ) -> dict[str, tuple[float, int]]:
    """``{name: (median seconds per call, calls per repeat)}`` over ``repeat`` rounds."""
    numbers = {name: calls_per_repeat(fn, min_time) for name, fn in impls.items()}
    samples: dict[str, list[float]] = {name: [] for name in impls}
    for _ in range(repeat):
        for name, fn in impls.items():
            samples[name].append(timeit.Timer(fn).timeit(number=numbers[name]) / numbers[name])
    return {name: (statistics.median(samples[name]), numbers[name]) for name in impls}


def fmt_time(seconds: float | None, width: int = 8) -> str:
    """``12.34 ms``-style text ("-" for a missing time)."""
    if seconds is None:
        return "-".rjust(width + 3)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:{width}.2f} {unit}"
    return f"{seconds / 1e-9:{width}.1f} ns"


def versions() -> str:
    """The versions (and thread settings) that a benchmark table was measured with."""
    import numpy as np  # noqa: PLC0415

    import funcgrad  # noqa: PLC0415

    out = [f"Python {platform.python_version()}", f"numpy {np.__version__}",
           f"funcgrad {funcgrad.__version__}"]
    for name in ("jax", "torch"):
        mod = sys.modules.get(name)
        if mod is not None:
            out.append(f"{name} {mod.__version__}")
    if "torch" in sys.modules:
        out.append(f"torch threads {sys.modules['torch'].get_num_threads()}")
    threads = [os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                           "MKL_NUM_THREADS")]
    if any(threads):
        out.append("OMP/OPENBLAS/MKL threads " + "/".join(t or "-" for t in threads))
    return ", ".join(out)


def chained_ops(x: Any, tanh: Callable[[Any], Any], n: int) -> Any:
    """W1's program: ``n`` elementwise ops on ``x`` (``* 0.9``, ``+ 0.1``, ``tanh``, ``* x``,
    cycled); ``tanh`` is the library's (a function or ``lambda y: y.tanh()``)."""
    y = x
    for i in range(n):
        k = i % 4
        if k == 0:
            y = y * 0.9
        elif k == 1:
            y = y + 0.1
        elif k == 2:
            y = tanh(y)
        else:
            y = y * x
    return y
