"""W3: ``jit(grad)`` of a 12-operation elementwise chain on float32, CPU fusion on and off.

Rows: funcgrad ``jit(grad)`` with CPU fusion (numba), the same with fusion off (NumPy
code), the hand-written NumPy gradient (the floor), ``jax.jit(jax.grad)``. Ratios are to
the NumPy gradient (< 1: faster). Medians over interleaved repeats (benchmarks/timing.py),
one thread.

Run: python benchmarks/bench_cpu_fusion.py [--sizes 1e6,1e7] [--repeat 5] [--min-time 0.3]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import fmt_time, median_times, versions  # noqa: E402 - benchmarks/timing.py

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def chain(x: Any, m: Any) -> Any:
    return m.tanh(x * 1.5 + 0.5) * m.exp(-(x * x)) + m.sin(x) * 0.25 - x / (x * x + 1.0)


def numpy_grad(x: np.ndarray) -> np.ndarray:
    """d/dx sum(chain(x)), by hand, in float32."""
    f32 = np.float32
    t = np.tanh(x * f32(1.5) + f32(0.5))
    e = np.exp(-(x * x))
    d = x * x + f32(1.0)
    return ((f32(1.0) - t * t) * f32(1.5) * e - f32(2.0) * x * t * e + np.cos(x) * f32(0.25)
            - (f32(1.0) / d - f32(2.0) * x * x / (d * d)))


def jitted(fusion: bool, x: Any) -> Any:
    """``jit(grad)`` of the chain, compiled (by a first call) with fusion on or off."""
    fg.config.update("funcgrad_cpu_fusion", fusion)
    try:
        fn = fg.jit(fg.grad(lambda a: fnp.sum(chain(a, fnp))))
        fn(x)
        return fn
    finally:
        fg.config.update("funcgrad_cpu_fusion", None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.3)
    args = ap.parse_args()
    print(versions(), "(machine: 2 shared cores; one thread)")
    for n in (int(float(s)) for s in args.sizes.split(",")):
        measure(n, args.repeat, args.min_time)


def measure(n: int, repeat: int, min_time: float) -> None:
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    fx = fnp.asarray(x)
    ref = numpy_grad(x)
    t0 = time.perf_counter()
    fused = jitted(True, fx)
    np.testing.assert_allclose(np.asarray(fused(fx)), ref, rtol=1e-4, atol=1e-5)
    compile_s = time.perf_counter() - t0
    plain = jitted(False, fx)
    np.testing.assert_allclose(np.asarray(plain(fx)), ref, rtol=1e-4, atol=1e-5)
    impls: dict[str, Any] = {
        "funcgrad jit(grad), CPU fusion": lambda: fused(fx),
        "funcgrad jit(grad), NumPy code": lambda: plain(fx),
        "NumPy gradient by hand": lambda: numpy_grad(x)}
    try:
        import jax  # noqa: PLC0415

        jx = jax.device_put(x)
        jg = jax.jit(jax.grad(lambda a: jax.numpy.sum(chain(a, jax.numpy))))
        jg(jx).block_until_ready()
        impls["jax.jit(jax.grad)"] = lambda: jg(jx).block_until_ready()
    except ImportError:
        print("jax is not installed: no jax.jit row")
    times = median_times(impls, repeat, min_time)
    floor = times["NumPy gradient by hand"][0]
    print(f"\nW3 jit(grad), f32[{n:.0e}] (first call with fusion, compile included: "
          f"{compile_s:.2f} s)")
    print(f"| {'implementation':34} | {'median':>11} | ratio to NumPy |")
    print(f"| {'-' * 34} | {'-' * 11} | {'-' * 14} |")
    for name, (t, _) in times.items():
        print(f"| {name:34} | {fmt_time(t)} | {t / floor:13.2f}x |")


if __name__ == "__main__":
    main()
