"""rfft and its gradient at N = 2**20: funcgrad against jax.jit and PyTorch, side by side.

Workloads (float32, the same signal for every implementation):

- ``rfft``: ``rfft(x)`` of a real signal of N samples;
- ``grad``: the gradient of ``sum(|rfft(x) * w|**2)`` (w a fixed spectral weight), which
  runs rfft forward and its transpose (a weighted irfft of the cotangent) backward.

Rows: funcgrad ``jit`` and eager (NumPy's pocketfft underneath), ``jax.jit`` (XLA's
DUCC FFT), PyTorch eager (``torch.fft.rfft`` and autograd). Every result is checked
against NumPy before it is timed (the first call is also the warm-up and compile). Times
are medians over ``--repeat`` interleaved rounds; ratio = funcgrad jit time / peer time,
so > 1 means funcgrad is slower. Peers not installed show as "not installed".

Run: python benchmarks/bench_fft.py [--n 1048576] [--repeat 5] [--min-time 0.2]
     [--threads 1] [--no-peers] [--quick] [--json PATH] [--plot PATH]
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable
from typing import Any

# isort: off
# Thread settings (benchmarks/threads.py) before NumPy, JAX or torch start their pools.
from threads import THREADS as _THREADS
# isort: on
import numpy as np  # noqa: E402
from plotting import add_output_options, write_outputs  # noqa: E402 - benchmarks/plotting.py
from timing import fmt_time, median_times, versions  # noqa: E402 - benchmarks/timing.py

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402


def _reference(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """rfft(x) and the gradient of sum(|rfft(x) w|^2), from NumPy in float64."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    spec = np.fft.rfft(x64)
    n = x.size
    # d/dx sum(w^2 |X_k|^2) = 2 Re(sum_k w_k^2 conj(X_k) dX_k/dx): the transpose of rfft
    # applied to w^2 X, computed as a full FFT of the zero-padded half spectrum.
    ct = 2 * w64 ** 2 * np.conj(spec)
    padded = np.zeros(n, np.complex128)
    padded[:ct.size] = ct
    return spec, np.real(np.fft.fft(padded))


def _funcgrad_rows(x: np.ndarray, w: np.ndarray) -> dict[str, dict[str, Callable[[], Any]]]:
    xa, wa = fnp.asarray(x), fnp.asarray(w)

    def loss(v: Any) -> Any:
        return fnp.sum(fnp.abs(fnp.fft.rfft(v) * wa) ** 2)

    rfft_jit = fg.jit(fnp.fft.rfft)
    grad_jit = fg.jit(fg.grad(loss))
    grad_eager = fg.grad(loss)
    return {
        "funcgrad jit": {"rfft": lambda: rfft_jit(xa).block_until_ready(),
                         "grad": lambda: grad_jit(xa).block_until_ready()},
        "funcgrad eager": {"rfft": lambda: fnp.fft.rfft(xa).block_until_ready(),
                           "grad": lambda: grad_eager(xa).block_until_ready()},
    }


def _jax_rows(x: np.ndarray, w: np.ndarray) -> dict[str, dict[str, Callable[[], Any]]]:
    try:
        import jax  # noqa: PLC0415 - optional peer
    except ImportError:
        return {"jax.jit": {}}
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp  # noqa: PLC0415

    xj, wj = jax.device_put(x), jax.device_put(w)

    def loss(v: Any) -> Any:
        return jnp.sum(jnp.abs(jnp.fft.rfft(v) * wj) ** 2)

    rfft_jit, grad_jit = jax.jit(jnp.fft.rfft), jax.jit(jax.grad(loss))
    return {"jax.jit": {"rfft": lambda: rfft_jit(xj).block_until_ready(),
                        "grad": lambda: grad_jit(xj).block_until_ready()}}


def _torch_rows(x: np.ndarray, w: np.ndarray) -> dict[str, dict[str, Callable[[], Any]]]:
    try:
        import torch  # noqa: PLC0415 - optional peer
    except ImportError:
        return {"torch": {}}
    torch.set_num_threads(_THREADS)
    xt, wt = torch.from_numpy(x), torch.from_numpy(w)

    def grad() -> Any:
        v = xt.clone().requires_grad_(True)
        (torch.fft.rfft(v) * wt).abs().pow(2).sum().backward()
        return v.grad

    return {"torch": {"rfft": lambda: torch.fft.rfft(xt), "grad": grad}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2 ** 20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--quick", action="store_true", help="smoke run: N = 2**16, noisy numbers")
    add_output_options(p)
    args = p.parse_args()
    if args.quick:
        args.n, args.repeat, args.min_time = 2 ** 16, 3, 0.02

    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.n).astype(np.float32)
    w = rng.uniform(0.5, 1.5, args.n // 2 + 1).astype(np.float32)
    spec, g = _reference(x, w)

    rows = _funcgrad_rows(x, w)
    if not args.no_peers:
        rows.update(_jax_rows(x, w))
        rows.update(_torch_rows(x, w))
    for name, impls in rows.items():
        for what, fn in impls.items():
            got = np.asarray(fn())
            want = spec if what == "rfft" else g
            scale = np.max(np.abs(want))
            err = np.max(np.abs(got - want)) / scale
            if err > 1e-3:
                raise SystemExit(f"{name} {what}: relative error {err:.2g} against NumPy")

    print(f"rfft and its gradient, N = {args.n}, float32, {args.threads} thread(s)")
    machine = (f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, "
               f"{platform.system()}); {versions()}")
    print(machine)
    print(f"{'implementation':<16} {'rfft':>11} {'grad':>11} {'rfft ratio':>11} "
          f"{'grad ratio':>11}")
    times: dict[str, dict[str, float]] = {}
    for what in ("rfft", "grad"):
        impls = {name: fns[what] for name, fns in rows.items() if what in fns}
        for name, (t, _) in median_times(impls, args.repeat, args.min_time).items():
            times.setdefault(name, {})[what] = t
    ours = times["funcgrad jit"]
    for name in rows:
        t = times.get(name)
        if not t:
            print(f"{name:<16} not installed")
            continue
        ratios = [f"{ours[w_] / t[w_]:>10.2f}x" for w_ in ("rfft", "grad")]
        print(f"{name:<16} {fmt_time(t['rfft'])} {fmt_time(t['grad'])} {ratios[0]} "
              f"{ratios[1]}")
    plot_rows = [(f"{what} vs {name}", ours[what] / t[what]) for name, t in times.items()
                 if name != "funcgrad jit" for what in ("rfft", "grad")]
    write_outputs(args, {"benchmark": "bench_fft", "machine": machine, "n": args.n,
                         "threads": args.threads, "times_s": times,
                         "not_installed": [n for n in rows if not times.get(n)],
                         "ratio": "funcgrad jit time / this time (> 1: funcgrad is slower)"},
                  plot_rows, title=f"rfft and its gradient, N = {args.n} (CPU, float32)",
                  xlabel="funcgrad jit time / this time (> 1: funcgrad is slower)")


if __name__ == "__main__":
    main()
