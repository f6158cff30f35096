"""The GPU benchmarks of the GPU issue, for a lent NVIDIA device (``scripts/gpu_check.sh``).

Each row is measured against a peer in the same run and the report gives ratios:

- ``copy``: the device's copy rate (``dst[...] = src``, bytes read + written per second), next
  to the nominal 4.3 TB/s of an H200;
- ``chain``: the 12-operation elementwise chain of ``bench_jit.py`` as one fused kernel of
  ``jit(backend="cupy")``, at 2^24..2^28 float32 elements: its share of 4.3 TB/s (and of the
  measured copy rate) for its 8 bytes per element (and that of a cheap ``1.5 * x + 0.5``,
  bound by memory alone), and its speedup over CuPy eager (one
  kernel per operation) against the modelled speedup, the ratio of the bytes eager moves
  (every operation reads its array operands and writes its result) to the fused bytes;
- ``reductions``: full, row (axis 1) and column (axis 0) sums of the same sizes, 4 bytes
  per element, against 4.3 TB/s and against ``cupy.sum``;
- ``dispatch``: a jitted ``x * 2 + 1`` on 1024 elements against one CuPy elementwise call
  (``x * 2``), host time per call including the launch;
- ``compile``: the first call of programs whose kernels are new (a fresh CuPy kernel cache),
  minus a steady call, per kernel launched;
- ``steps``: a jitted MLP training step and a CNN training step on the device;
- ``mixed_precision`` (informative): the PyTorch face's eager step in float32 and under
  autocast float16, and a float32 product exact and in TF32;
- ``eager_steps`` (informative): the PyTorch face's eager step of an MLP with dropout and
  LayerNorm under Adam, and the same step under ``torch.compile``.

The goals of the issue are checked at the end (``goals`` in the JSON report). Times are
medians of ``--repeat`` calls, each followed by a stream synchronisation (CUDA events where
CuPy has them).

``--emulate`` runs everything on the CuPy emulator of the test suite with tiny sizes: it
checks the script on a machine without a GPU; its times mean nothing.

Run: python benchmarks/bench_gpu.py [--sizes 2**24,2**26,2**28] [--repeat 10] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

NOMINAL_BANDWIDTH = 4.3e12
"""Bytes per second an H200 copies (read + write), as measured on a lent device."""


def chain_fn(x: Any, m: Any) -> Any:
    return m.tanh(1.5 * x + 0.5) * m.exp(-x * x) + 0.25 * m.sin(x) - x / (1.0 + x * x)


class Timer:
    """Median seconds per call of ``fn`` on the device (synchronised after each call)."""

    def __init__(self, cp: Any, repeat: int) -> None:
        self.cp, self.repeat = cp, repeat
        self.events = hasattr(cp.cuda, "Event")

    def __call__(self, fn: Callable[[], Any], warmup: int = 2) -> float:
        cp = self.cp
        for _ in range(warmup):
            fn()
        cp.cuda.get_current_stream().synchronize()
        times = []
        for _ in range(self.repeat):
            if self.events:
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(cp.cuda.get_elapsed_time(start, end) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                cp.cuda.get_current_stream().synchronize()
                times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def per_call(self, fn: Callable[[], Any], calls: int) -> float:
        """Host time per call of ``calls`` back-to-back calls (dispatch-bound work)."""
        fn()
        self.cp.cuda.get_current_stream().synchronize()
        best = float("inf")
        for _ in range(max(3, self.repeat // 3)):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            self.cp.cuda.get_current_stream().synchronize()
            best = min(best, (time.perf_counter() - t0) / calls)
        return best


def free_memory(cp: Any) -> None:
    try:
        cp.get_default_memory_pool().free_all_blocks()
    except AttributeError:  # the emulator has no memory pool
        pass


def eager_bytes(fg: Any, fnp: Any, n: int) -> int:
    """Bytes CuPy eager moves for the chain: each operation on arrays reads its array
    operands and writes its result (the jaxpr has one equation per eager operation)."""
    cj = fg.make_jaxpr(lambda a: chain_fn(a, fnp))(np.ones(n, np.float32))
    total = 0
    for e in cj.jaxpr.eqns:
        if e.outputs[0].aval.shape != (n,):
            continue
        reads = sum(1 for a in e.inputs if getattr(a.aval, "shape", ()) == (n,))
        total += (reads + 1) * 4 * n
    return total


def bench_chain(cp: Any, fg: Any, fnp: Any, timer: Timer, sizes: list[int], copy_rate: float
                ) -> list[dict[str, Any]]:
    rows = []
    jf = fg.jit(lambda a: chain_fn(a, fnp), backend="cupy")
    # Two cheap operations: bound by memory alone (the chain's transcendentals may make it
    # bound by arithmetic), so it shows what the flat kernel's loads reach.
    cheap = fg.jit(lambda a: 1.5 * a + 0.5, backend="cupy")
    for n in sizes:
        x_host = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        x, x_fg = cp.asarray(x_host), fg.device_put(x_host, "cuda")
        got = np.asarray(fg.device_get(jf(x_fg)))
        np.testing.assert_allclose(got, chain_fn(x_host, np), rtol=1e-4, atol=1e-5)
        fused = timer(lambda a=x_fg: jf(a))
        eager = timer(lambda a=x: chain_fn(a, cp))
        t_cheap = timer(lambda a=x_fg: cheap(a))
        modelled = eager_bytes(fg, fnp, n) / (8 * n)
        rows.append({"n": n, "kernels": len(jf.lower(x_fg).kernels()), "fused_s": fused,
                     "cupy_eager_s": eager,
                     "of_nominal_bandwidth": 8 * n / fused / NOMINAL_BANDWIDTH,
                     "cheap_of_nominal_bandwidth": 8 * n / t_cheap / NOMINAL_BANDWIDTH,
                     "of_copy_rate": 8 * n / fused / copy_rate,
                     "speedup": eager / fused, "modelled_speedup": modelled,
                     "speedup_of_model": eager / fused / modelled})
        free_memory(cp)
    return rows


def bench_reductions(cp: Any, fg: Any, fnp: Any, timer: Timer, sizes: list[int]
                     ) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        side = 4096 if n >= 4096 * 16 else 16
        x_host = np.random.default_rng(1).standard_normal(n).astype(np.float32)
        cases = [("full", x_host, None), ("row", x_host.reshape(-1, side), 1),
                 ("column", x_host.reshape(side, -1), 0)]
        for name, host, axis in cases:
            jf = fg.jit(lambda a, ax=axis: fnp.sum(a, axis=ax), backend="cupy")
            xd, xc = fg.device_put(host, "cuda"), cp.asarray(host)
            got = np.asarray(fg.device_get(jf(xd)))
            np.testing.assert_allclose(got, host.astype(np.float64).sum(axis=axis),
                                       rtol=1e-3, atol=1e-3 * np.sqrt(n))
            t = timer(lambda f=jf, a=xd: f(a))
            t_cp = timer(lambda a=xc, ax=axis: cp.sum(a, axis=ax))
            rows.append({"n": n, "kind": name, "fused_s": t, "cupy_sum_s": t_cp,
                         "of_nominal_bandwidth": 4 * n / t / NOMINAL_BANDWIDTH,
                         "vs_cupy_sum": t / t_cp})
        free_memory(cp)
    return rows


def bench_dispatch(cp: Any, fg: Any, timer: Timer) -> dict[str, Any]:
    x_host = np.ones(1024, np.float32)
    xd, xc = fg.device_put(x_host, "cuda"), cp.asarray(x_host)
    jf = fg.jit(lambda a: a * 2.0 + 1.0, backend="cupy")
    t_jit = timer.per_call(lambda: jf(xd), 200)
    t_cp = timer.per_call(lambda: xc * 2.0, 200)
    return {"jit_call_s": t_jit, "cupy_elementwise_call_s": t_cp, "ratio": t_jit / t_cp}


def bench_compile(cp: Any, fg: Any, fnp: Any, timer: Timer, rounds: int = 4
                  ) -> dict[str, Any]:
    """First call of programs with new kernel texts (distinct constants) minus a steady
    call, per kernel launched by the first call."""
    x = fg.device_put(np.ones((512, 64), np.float32), "cuda")
    per_kernel = []
    for i in range(rounds):
        c = 1.0 + i / 7.0 + time.time() % 1.0 / 1e3  # a text no cache has seen
        f = fg.jit(lambda a, c=c: fnp.sum(fnp.tanh(a * c) - c, axis=1) * c, backend="cupy")
        t0 = time.perf_counter()
        f(x)
        cp.cuda.get_current_stream().synchronize()
        first = time.perf_counter() - t0
        steady = timer(lambda f=f: f(x))
        kernels = sum(1 for k in f.lower(x).kernels())
        per_kernel.append((first - steady) / max(kernels, 1))
    return {"per_kernel_s": per_kernel, "median_per_kernel_s": statistics.median(per_kernel)}


def bench_steps(cp: Any, fg: Any, fnp: Any, timer: Timer, scale: int) -> dict[str, Any]:
    rng = np.random.default_rng(2)
    d = 1024 // scale

    def put(*shape: int) -> Any:
        return fg.device_put((rng.standard_normal(shape) * 0.05).astype(np.float32), "cuda")

    mlp = {"w1": put(d, d), "b1": put(d), "w2": put(d, 10), "b2": put(10)}

    def mlp_loss(p: Any, x: Any, y: Any) -> Any:
        h = fnp.tanh(x @ p["w1"] + p["b1"])
        return fnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    def sgd(loss: Callable[..., Any]) -> Any:
        def step(p: Any, x: Any, y: Any) -> Any:
            g = fg.grad(loss)(p, x, y)
            return fg.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g)
        return fg.jit(step, backend="cupy")

    x, y = put(256, d), put(256, 10)
    mlp_step = sgd(mlp_loss)
    t_mlp = timer(lambda: mlp_step(mlp, x, y))
    c = 16 // min(scale, 8)
    cnn = {"k": put(c, 3, 3, 3), "w": put(c, 10)}

    def cnn_loss(p: Any, img: Any, y: Any) -> Any:
        h = fg.lax.conv_general_dilated(img, p["k"], (1, 1), "SAME")
        h = fnp.mean(fg.nn.relu(h), axis=(2, 3))
        return fnp.mean((h @ p["w"] - y) ** 2)

    img = put(64 // min(scale, 8), 3, 32 // min(scale, 4), 32 // min(scale, 4))
    cnn_step = sgd(cnn_loss)
    t_cnn = timer(lambda: cnn_step(cnn, img, put(img.shape[0], 10)))
    return {"mlp_step_s": t_mlp, "mlp_width": d, "cnn_step_s": t_cnn,
            "cnn_input": list(img.shape)}


def bench_mixed_precision(cp: Any, timer: Timer, scale: int) -> dict[str, Any]:
    """The PyTorch face's eager training step on the device in float32 and under
    ``torch.autocast`` (float16 products) with a GradScaler, and one float32 matrix product
    exact and in TF32 (``allow_tf32``): what the tensor cores give."""
    import funcgrad.torch as torch  # noqa: PLC0415, PLR0402 - the PyTorch spelling

    d = 2048 // scale
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(),
                                torch.nn.Linear(d, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(512 // min(scale, 8), d, device="cuda")
    y = torch.randint(0, 10, (x.shape[0],), device="cuda")

    def step(amp: bool) -> None:
        opt.zero_grad()
        with torch.autocast("cuda", enabled=amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        if amp:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()

    t32 = timer(lambda: step(False))
    t16 = timer(lambda: step(True))
    n = 4096 // scale
    a, b = torch.randn(n, n, device="cuda"), torch.randn(n, n, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    exact = timer(lambda: a @ b)
    torch.backends.cuda.matmul.allow_tf32 = True
    tf32 = timer(lambda: a @ b)
    torch.backends.cuda.matmul.allow_tf32 = False
    return {"mlp_width": d, "step_float32_s": t32, "step_autocast_float16_s": t16,
            "autocast_speedup": t32 / t16, "matmul_n": n, "matmul_float32_s": exact,
            "matmul_tf32_s": tf32, "tf32_speedup": exact / tf32}


def bench_eager_steps(cp: Any, timer: Timer, scale: int) -> dict[str, Any]:
    """The PyTorch face's eager training step on the device (an MLP with dropout and
    LayerNorm, Adam): its time. That it copies nothing and waits for nothing is held by
    tests/torch/test_gpu_eager_steps.py under the emulator's counters."""
    import funcgrad.torch as torch  # noqa: PLC0415, PLR0402 - the PyTorch spelling

    d = 1024 // scale
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Dropout(0.1), nn.LayerNorm(d),
                          nn.Linear(d, 10)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(256 // min(scale, 8), d, device="cuda")
    y = torch.randint(0, 10, (x.shape[0],), device="cuda")

    def step() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    eager_s = timer(step)
    # The same step under torch.compile: one program, its dropout masks drawn on the
    # device before each call (tests/torch/test_compile_random.py holds it to no copies).
    compiled = torch.compile(step)
    compiled()
    compiled()  # staged twice: without, then with gradients
    compiled_s = timer(compiled)
    return {"mlp_width": d, "batch": x.shape[0], "dropout_adam_step_s": eager_s,
            "compiled_dropout_adam_step_s": compiled_s,
            "compiled_speedup": eager_s / compiled_s,
            "compiled_graph_breaks": compiled.explain().graph_break_count}


def measure_copy_rate(cp: Any, timer: Timer, n: int) -> float:
    """Bytes per second of a device-to-device copy of ``n`` float32 (read + write)."""
    src = cp.ones(n, cp.float32)
    dst = cp.empty_like(src)

    def copy() -> None:
        dst[...] = src

    rate = 8 * n / timer(copy)
    free_memory(cp)
    return rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2**24,2**26,2**28",
                        help="comma-separated element counts (Python expressions)")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--copy-gib", type=float, default=2.0)
    parser.add_argument("--json", default=None, help="write the report here")
    parser.add_argument("--emulate", action="store_true",
                        help="run on the test suite's CuPy emulator, tiny sizes")
    args = parser.parse_args(argv)
    if args.emulate:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "tests", "support"))
        import fakecupy  # noqa: PLC0415

        fakecupy.install()
        sizes, copy_gib, scale = [2 ** 12], 2 ** -16, 32
    else:
        # A private kernel cache: the compile row sees cold compiles.
        os.environ.setdefault("CUPY_CACHE_DIR", tempfile.mkdtemp(prefix="fg-cupy-cache-"))
        sizes = [int(eval(s, {})) for s in args.sizes.split(",")]  # noqa: S307 - 2**24
        copy_gib, scale = args.copy_gib, 1

    import funcgrad as fg  # noqa: PLC0415
    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.devices import get_backend  # noqa: PLC0415

    if not get_backend("cupy").available():
        print("no CUDA device; skipped (funcgrad.devices.get_backend('cupy').available() "
              "is False)")
        return 0
    import cupy as cp  # noqa: PLC0415

    timer = Timer(cp, args.repeat)
    copy_rate = measure_copy_rate(cp, timer, max(int(copy_gib * 2 ** 30 / 4), 1024))
    report: dict[str, Any] = {
        "emulated": args.emulate, "python": platform.python_version(),
        "cupy": getattr(cp, "__version__", "?"), "copy_rate_Bps": copy_rate,
        "nominal_bandwidth_Bps": NOMINAL_BANDWIDTH}
    print(f"copy rate: {copy_rate / 1e9:.0f} GB/s (nominal {NOMINAL_BANDWIDTH / 1e12} TB/s)")
    report["chain"] = bench_chain(cp, fg, fnp, timer, sizes, copy_rate)
    report["reductions"] = bench_reductions(cp, fg, fnp, timer, sizes)
    report["dispatch"] = bench_dispatch(cp, fg, timer)
    # On the emulator each compile also builds the host harness (seconds): one round shows
    # the row works.
    report["compile"] = bench_compile(cp, fg, fnp, timer, 1 if args.emulate else 4)
    report["steps"] = bench_steps(cp, fg, fnp, timer, scale)
    try:
        report["mixed_precision"] = bench_mixed_precision(cp, timer, scale)
    except Exception as e:  # noqa: BLE001 - an informative row: the goals do not need it
        report["mixed_precision"] = {"error": f"{type(e).__name__}: {e}"}
    try:
        report["eager_steps"] = bench_eager_steps(cp, timer, scale)
    except Exception as e:  # noqa: BLE001 - an informative row: the goals do not need it
        report["eager_steps"] = {"error": f"{type(e).__name__}: {e}"}
    big = [r for r in report["chain"] if r["n"] >= 2 ** 24] or report["chain"]
    big_red = [r for r in report["reductions"] if r["n"] >= 2 ** 24] or report["reductions"]
    goals = {
        "fused chain >= 80% of 4.3 TB/s (N >= 2^24)":
            (min(r["of_nominal_bandwidth"] for r in big), 0.8),
        "reductions >= 80% of 4.3 TB/s (N >= 2^24)":
            (min(r["of_nominal_bandwidth"] for r in big_red), 0.8),
        "fused chain >= 0.8x the modelled speedup over CuPy eager":
            (min(r["speedup_of_model"] for r in big), 0.8),
        "jitted call on a small array <= 2x one CuPy elementwise call":
            (report["dispatch"]["ratio"], 2.0),
        "cold compile <= 100 ms per kernel": (report["compile"]["median_per_kernel_s"], 0.1),
    }
    report["goals"] = {name: {"value": v, "goal": g,
                              "met": v <= g if "<=" in name else v >= g}
                       for name, (v, g) in goals.items()}
    for section in ("chain", "reductions"):
        for row in report[section]:
            print(section, {k: (f"{v:.3g}" if isinstance(v, float) else v)
                            for k, v in row.items()})
    for section in ("dispatch", "compile", "steps", "mixed_precision", "eager_steps"):
        print(section, report[section])
    for name, g in report["goals"].items():
        print(f"{'met' if g['met'] else 'NOT met'}: {name}: {g['value']:.3g} "
              f"(goal {g['goal']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
