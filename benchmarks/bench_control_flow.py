"""Compiled control flow: a jitted loop of 100 small steps against the same body unrolled.

Rows (float32, a (8,) array, the body ``v = sin(v) * 0.5 + v * 0.9``, the same four
equations in every row):

- ``fori unrolled``: ``jit`` of a Python ``for`` loop of 100 steps (one straight-line program
  of 400 equations): the floor a compiled loop is measured against.
- ``fori_loop``: ``jit`` of ``lax.fori_loop(0, 100, ...)`` (a ``scan`` with a static trip
  count): the body compiled once and called 100 times.
- ``while_loop``: ``jit`` of the same loop as a ``lax.while_loop`` on ``(i, v)``.
- ``scan``: ``jit`` of ``lax.scan`` over 100 rows, stacking each step's value.
- ``grad fori_loop`` / ``grad unrolled``: ``jit(grad)`` of the sum of the loop's result.
- ``jax.jit fori_loop`` (when JAX is installed): the same fori_loop under jax.jit.

Ratios: time / ``fori unrolled`` (and / jax.jit when installed); the goal of issue 14 is
``fori_loop`` within 2x of the unrolled program. Each time is the median over ``--repeat``
interleaved rounds (every row once per round).

``--interpreted`` measures the state before compiled control flow: the code generator
calls the control-flow primitives' impls, which interpret their bodies equation by
equation (the "before" column of the issue's table).

Run: python benchmarks/bench_control_flow.py [--repeat 7] [--min-time 0.2] [--steps 100]
     [--interpreted]
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from timing import fmt_time, median_times, versions  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def _body(np_mod: Any) -> Any:
    def body(i: Any, v: Any) -> Any:
        return np_mod.sin(v) * 0.5 + v * 0.9

    return body


def _funcgrad_rows(steps: int, x: Any) -> dict[str, Any]:
    body = _body(fnp)

    def unrolled(v: Any) -> Any:
        for i in range(steps):
            v = body(i, v)
        return v

    def fori(v: Any) -> Any:
        return fg.lax.fori_loop(0, steps, body, v)

    def while_(v: Any) -> Any:
        def step(s: Any) -> Any:
            i, w = s
            return i + 1, body(i, w)

        return fg.lax.while_loop(lambda s: s[0] < steps, step, (fnp.int32(0), v))[1]

    def scan(v: Any) -> Any:
        def step(w: Any, i: Any) -> Any:
            w = body(i, w)
            return w, w

        return fg.lax.scan(step, v, fnp.arange(steps))[1]

    fns = {"fori unrolled": unrolled, "fori_loop": fori, "while_loop": while_,
           "scan": scan,
           "grad unrolled": fg.grad(lambda v: fnp.sum(unrolled(v))),
           "grad fori_loop": fg.grad(lambda v: fnp.sum(fori(v)))}
    rows = {}
    for name, fn in fns.items():
        jf = fg.jit(fn)
        np.asarray(jf(x))  # compile
        rows[name] = (lambda jf=jf: jf(x))
    # The loop forms agree with the unrolled program before anything is timed.
    ref = np.asarray(rows["fori unrolled"]())
    for name in ("fori_loop", "while_loop"):
        np.testing.assert_allclose(np.asarray(rows[name]()), ref, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(rows["scan"]())[-1], ref, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(rows["grad fori_loop"]()),
                               np.asarray(rows["grad unrolled"]()), rtol=1e-5)
    return rows


def _jax_rows(steps: int, xh: np.ndarray) -> dict[str, Any]:
    try:
        import jax  # noqa: PLC0415
        import jax.numpy as jnp  # noqa: PLC0415
    except ImportError:
        return {}
    body = _body(jnp)
    x = jax.device_put(xh)
    f = jax.jit(lambda v: jax.lax.fori_loop(0, steps, body, v))
    f(x).block_until_ready()
    return {"jax.jit fori_loop": lambda: f(x).block_until_ready()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--interpreted", action="store_true",
                    help="bodies interpreted by the primitives' impls (before issue 14)")
    args = ap.parse_args()
    if args.interpreted:
        from funcgrad.backends import compile_python  # noqa: PLC0415

        compile_python._STRUCTURED.clear()
    xh = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    rows = {**_funcgrad_rows(args.steps, fnp.asarray(xh)), **_jax_rows(args.steps, xh)}
    times = median_times(rows, args.repeat, args.min_time)
    print(versions() + (", interpreted bodies" if args.interpreted else ""))
    floor = times["fori unrolled"][0]
    peer = times.get("jax.jit fori_loop", (None, 0))[0]
    print(f"{'row':<20} {'time':>11} {'/ unrolled':>11} {'/ jax.jit':>10}")
    for name, (t, _) in times.items():
        vs_jax = f"{t / peer:10.2f}" if peer else f"{'-':>10}"
        print(f"{name:<20} {fmt_time(t)} {t / floor:11.2f} {vs_jax}")
    g = times["grad fori_loop"][0] / times["grad unrolled"][0]
    print(f"grad fori_loop / grad unrolled: {g:.2f}")


if __name__ == "__main__":
    main()
