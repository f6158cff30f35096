"""Fused CUDA kernels of ``jit(f, backend="cupy")`` against eager CuPy, and against the
memory roofline.

The workload is the elementwise chain of ``bench_jit.py`` (12 operations:
``tanh(1.5 x + 0.5) * exp(-x*x) + 0.25 sin(x) - x / (1 + x*x)``) on float32 vectors of
1e7 (and, by default, also 1e8) elements. Rows:

- ``funcgrad jit(backend="cupy")``: the fusion planner turns the chain into ONE generated
  kernel (its plan is printed), which reads x once and writes the result once. Its
  argument is a ``funcgrad.Array`` on the GPU made once with ``fg.device_put(x, "cuda")``
  (as JAX users pass device arrays): a CuPy array passed to a jitted function is copied
  into a new Array on every call, which would add a copy to the timed kernel;
- ``CuPy eager``: the same expression on CuPy arrays, one kernel (and one temporary
  array) per operation;
- ``cupy.fuse`` (when it works): CuPy's own elementwise fusion, for comparison.

Roofline: the least memory traffic of the chain is one read and one write per element
(8 bytes per element in float32). The peak bandwidth is measured on this device with a
large device-to-device copy (``dst[...] = src`` of ``--copy-gib`` GiB: bytes read + bytes
written per second). roofline time = bytes moved / peak bandwidth; the "of roofline"
column is roofline time / measured time (1.0 = as fast as memory allows).

Times are medians over ``--repeat`` calls measured with CUDA events around each call
(host dispatch included: a call that is dispatch-bound shows it), after warm-up calls
(the first call also compiles the kernels). Results are checked against NumPy first.

Without a CUDA device (or without CuPy) the script prints "no CUDA device; skipped" and
exits with status 0.

Run: python benchmarks/bench_gpu_fusion.py [--sizes 1e7,1e8] [--repeat 20] [--copy-gib 2]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import fmt_time  # benchmarks/timing.py

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.devices import get_backend


def chain_fn(x: Any, m: Any) -> Any:
    return m.tanh(x * 1.5 + 0.5) * m.exp(-(x * x)) + m.sin(x) * 0.25 - x / (x * x + 1.0)


def gpu_time(cp: Any, fn: Callable[[], Any], repeat: int, warmup: int = 3) -> float:
    """Median seconds per call, CUDA events around each call."""
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times)


def peak_bandwidth(cp: Any, gib: float, repeat: int) -> float:
    """Bytes per second of a large device-to-device copy (read + write)."""
    n = int(gib * 2 ** 30 / 4)
    src = cp.ones(n, cp.float32)
    dst = cp.empty_like(src)

    def copy() -> None:
        dst[...] = src

    return 2 * n * 4 / gpu_time(cp, copy, repeat)


def to_host(cp: Any, v: Any) -> np.ndarray:
    """A CuPy array or a funcgrad Array (on any device) as a NumPy array."""
    return cp.asnumpy(v) if isinstance(v, cp.ndarray) else np.asarray(v)


def run_size(cp: Any, n: int, jf: Any, fused: Any, bw: float, repeat: int
             ) -> list[tuple[str, str, float | None, str]]:
    x_host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    ref = chain_fn(x_host, np)
    x = cp.asarray(x_host)  # for the CuPy rows
    x_fg = fg.device_put(x_host, "cuda")  # a funcgrad Array on the GPU
    kernels = jf.lower(x_fg).kernels()  # the plan of the timed program
    impls: dict[str, Callable[[], Any]] = {
        f"funcgrad jit(backend='cupy') [{len(kernels)} kernel(s)]": lambda: jf(x_fg),
        "CuPy eager (one kernel per op)": lambda: chain_fn(x, cp),
    }
    if fused is not None:
        impls["cupy.fuse"] = lambda: fused(x)
    roofline = 8 * n / bw
    n_text = f"{n:.0e}".replace("+0", "")
    rows: list[tuple[str, str, float | None, str]] = []
    for label, fn in impls.items():
        try:
            got = to_host(cp, fn())
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5, err_msg=label)
            t = gpu_time(cp, fn, repeat)
        except Exception as e:  # noqa: BLE001 - report and go on
            rows.append((n_text, label, None, f"failed: {type(e).__name__}: {e}"[:80]))
            continue
        rows.append((n_text, label, t,
                     f"{roofline / t:6.1%} of roofline ({fmt_time(roofline).strip()}); "
                     f"{8 * n / t / 1e9:.0f} GB/s effective"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1e7,1e8", help="comma-separated element counts")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--copy-gib", type=float, default=2.0,
                        help="size of the copy that measures peak bandwidth")
    args = parser.parse_args(argv)

    if not get_backend("cupy").available():
        print("no CUDA device; skipped (funcgrad.devices.get_backend('cupy').available() "
              "is False)")
        return 0
    import cupy as cp

    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"GPU fusion: {name}; CUDA runtime {cp.cuda.runtime.runtimeGetVersion()}, "
          f"cupy {cp.__version__}, numpy {np.__version__}, Python "
          f"{platform.python_version()}")
    bw = peak_bandwidth(cp, args.copy_gib, args.repeat)
    cp.get_default_memory_pool().free_all_blocks()
    print(f"peak bandwidth (device copy of {args.copy_gib:g} GiB, read + write): "
          f"{bw / 1e9:.0f} GB/s")
    print(f"time: median of {args.repeat} calls (CUDA events, dispatch included); "
          "roofline = 8 bytes/element (one f32 read, one f32 write) / peak bandwidth")
    print()

    jf = fg.jit(lambda a: chain_fn(a, fnp), backend="cupy")
    try:
        fused = cp.fuse(lambda a: chain_fn(a, cp))
    except Exception:  # noqa: BLE001 - optional row
        fused = None

    rows: list[tuple[str, str, float | None, str]] = []
    for size_text in args.sizes.split(","):
        rows += run_size(cp, int(float(size_text)), jf, fused, bw, args.repeat)
        cp.get_default_memory_pool().free_all_blocks()

    width = max(len(r[1]) for r in rows)
    print(f"{'n':>5}  {'implementation':<{width}}  {'time/call':>11}  notes")
    print(f"{'-' * 5}  {'-' * width}  {'-' * 11}  {'-' * 40}")
    for n_text, label, t, note in rows:
        print(f"{n_text:>5}  {label:<{width}}  {fmt_time(t) if t else '-':>11}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
