"""funcgrad's PyTorch face (``funcgrad.torch``: eager Tensor autograd and
``funcgrad.torch.optim``) against PyTorch, side by side.

Workloads, each run by ``import funcgrad.torch as torch`` and by PyTorch (when installed)
on the same data:

- ``chain``: 100 chained small elementwise ops (``* c``, ``+ c``, ``tanh``, ``* x``,
  cycled) on a (32,) and on a (64, 64) tensor, then ``.sum().backward()``; also the
  forward alone, recording the graph and under ``no_grad``. This measures the
  per-operation overhead of the PyTorch face (dispatch, graph recording, backward engine).
- ``mlp``: one training step of a 784-256-10 MLP (ReLU, softmax cross-entropy
  written as ``-(onehot * log_softmax(logits)).sum() / batch``) on a batch of 64,
  float32: zero_grad, forward, backward, optimizer step, with SGD (momentum 0.9)
  and with Adam. Built from raw Tensors (matmul + relu), so it does not depend on
  funcgrad.torch.nn. Also the optimizer step alone (Adam, 4 parameters, fixed gradients).

Results are checked before timing: the chain's gradient and the MLP's losses over
a few steps agree between funcgrad and PyTorch. Each time is the median over
``--repeat`` interleaved timeit repeats (each about ``--min-time`` seconds) of the
mean time of one call. ratio = funcgrad time / torch time (> 1: funcgrad is slower).
Both libraries run single-threaded by default (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
MKL_NUM_THREADS default to 1, and torch.set_num_threads follows OMP_NUM_THREADS): a
multi-threaded torch slows down badly when the machine's cores are busy. Set
OMP_NUM_THREADS=N (and the other two) in the environment to compare with N threads.

``--profile`` runs cProfile on funcgrad's chain workload ((64, 64), forward +
backward) and prints the top entries by own time and by cumulative time.

Run: python benchmarks/bench_facade.py [--repeat 7] [--min-time 0.2] [--quick]
     [--no-torch | --no-peers] [--profile] [--profile-only]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy / torch load their thread pools

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from plotting import add_output_options, write_outputs  # noqa: E402 - benchmarks/plotting.py
from timing import (  # noqa: E402 - benchmarks/timing.py
    chained_ops,
    fmt_time,
    median_times,
    versions,
)

import funcgrad.torch as ft  # noqa: E402 - the PyTorch face

N_OPS = 100
MLP_SIZES = (784, 256, 10)
BATCH = 64


# ------------------------------------------------------------------ chain of small ops


def chain(x: Any, n: int = N_OPS) -> Any:
    """``n`` elementwise ops on ``x``: ``* 0.9``, ``+ 0.1``, ``tanh``, ``* x``, cycled.

    The same code runs on funcgrad and torch tensors (both have ``*``, ``+``, ``.tanh()``).
    """
    return chained_ops(x, lambda y: y.tanh(), n)


def chain_runs(lib: str, x0: np.ndarray) -> dict[str, Callable[[], Any]]:
    if lib == "funcgrad":
        x = ft.tensor(x0, requires_grad=True)
        no_grad: Any = ft.no_grad
    else:
        import torch  # noqa: PLC0415 - optional peer

        x = torch.tensor(x0, requires_grad=True)
        no_grad = torch.no_grad

    def fwd_bwd() -> Any:
        x.grad = None
        chain(x).sum().backward()
        return x.grad

    def fwd() -> Any:
        return chain(x)

    def fwd_no_grad() -> Any:
        with no_grad():
            return chain(x)

    shape = "x".join(map(str, x0.shape)) if x0.ndim > 1 else f"{x0.shape[0]}"
    return {
        f"chain {shape}: forward + backward": fwd_bwd,
        f"chain {shape}: forward (recording)": fwd,
        f"chain {shape}: forward (no_grad)": fwd_no_grad,
    }


# --------------------------------------------------------------------------- the MLP


def mlp_data(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n_in, n_hidden, n_out = MLP_SIZES
    labels = rng.integers(0, n_out, BATCH)
    return {
        "W1": (rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in)).astype(np.float32),
        "b1": np.zeros(n_hidden, np.float32),
        "W2": (rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden)).astype(np.float32),
        "b2": np.zeros(n_out, np.float32),
        "x": rng.standard_normal((BATCH, n_in)).astype(np.float32),
        "onehot": np.eye(n_out, dtype=np.float32)[labels],
    }


def mlp_loss(params: list[Any], x: Any, onehot: Any) -> Any:
    W1, b1, W2, b2 = params
    h = (x @ W1 + b1).relu()
    logits = h @ W2 + b2
    return -(onehot * logits.log_softmax(1)).sum() / BATCH


def mlp_setup(lib: str, opt_name: str, data: dict[str, np.ndarray]
              ) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """(one training step returning the loss, the optimizer step alone)."""
    kwargs: dict[str, Any] = {"lr": 0.05, "momentum": 0.9} if opt_name == "SGD" else \
        {"lr": 1e-3}
    if lib == "funcgrad":
        params = [ft.tensor(data[k], requires_grad=True) for k in ("W1", "b1", "W2", "b2")]
        x, onehot = ft.tensor(data["x"]), ft.tensor(data["onehot"])
        opt: Any = getattr(ft.optim, opt_name)(params, **kwargs)
    else:
        import torch  # noqa: PLC0415 - optional peer

        params = [torch.tensor(data[k], requires_grad=True) for k in ("W1", "b1", "W2", "b2")]
        x, onehot = torch.tensor(data["x"]), torch.tensor(data["onehot"])
        opt = getattr(torch.optim, opt_name)(params, **kwargs)

    def train_step() -> Any:
        opt.zero_grad()
        loss = mlp_loss(params, x, onehot)
        loss.backward()
        opt.step()
        return loss

    return train_step, opt.step


# ------------------------------------------------------------------------- measuring


def to_numpy(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "cpu") else t.detach().numpy())


def check(have_torch: bool) -> None:
    """funcgrad and torch agree on the chain's gradient and on the MLP losses."""
    if not have_torch:
        return
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(32).astype(np.float32)
    g_fg = to_numpy(chain_runs("funcgrad", x0)["chain 32: forward + backward"]())
    g_t = to_numpy(chain_runs("torch", x0)["chain 32: forward + backward"]())
    np.testing.assert_allclose(g_fg, g_t, rtol=1e-4, atol=1e-5, err_msg="chain gradient")
    data = mlp_data()
    for opt_name in ("SGD", "Adam"):
        step_fg, _ = mlp_setup("funcgrad", opt_name, data)
        step_t, _ = mlp_setup("torch", opt_name, data)
        for i in range(3):
            a, b = step_fg().item(), step_t().item()
            assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (opt_name, i, a, b)


def run_profile(n_iter: int = 200, top: int = 25) -> str:
    """cProfile of funcgrad's chain (64x64) forward + backward; the top entries."""
    x0 = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    fn = chain_runs("funcgrad", x0)["chain 64x64: forward + backward"]
    fn()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n_iter):
        fn()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs()
    out.write(f"cProfile: {n_iter} iterations of chain 64x64 forward + backward "
              f"({N_OPS} ops each)\n")
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timeit repeats (median)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each timeit repeat should at least take")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 3 repeats of ~10 ms (numbers are noisy)")
    parser.add_argument("--no-torch", "--no-peers", dest="no_torch", action="store_true",
                        help="funcgrad only")
    parser.add_argument("--profile", action="store_true",
                        help="also print a cProfile of funcgrad's chain workload")
    parser.add_argument("--profile-only", action="store_true", help="only the profile")
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.min_time = 3, 0.01
    if args.profile_only:
        print(run_profile())
        return

    have_torch = False
    torch_note = "skipped (--no-torch/--no-peers)"
    if not args.no_torch:
        try:
            import torch  # noqa: PLC0415 - optional peer

            torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
            have_torch = True
        except ImportError:
            torch_note = "not installed"
    check(have_torch)

    libs = ["funcgrad"] + (["torch"] if have_torch else [])
    rng = np.random.default_rng(0)
    impls: dict[tuple[str, str], Callable[[], Any]] = {}
    for shape in [(32,), (64, 64)]:
        x0 = rng.standard_normal(shape).astype(np.float32)
        for lib in libs:
            for name, fn in chain_runs(lib, x0).items():
                impls[(name, lib)] = fn
    data = mlp_data()
    for opt_name in ("SGD", "Adam"):
        for lib in libs:
            train_step, opt_step = mlp_setup(lib, opt_name, data)
            train_step()  # warm up, and give every parameter a gradient for opt_step
            impls[(f"MLP 784-256-10 b64 train step, {opt_name}", lib)] = train_step
            if opt_name == "Adam":
                impls[("Adam step alone (4 params, 203k floats)", lib)] = opt_step

    flat = {f"{lib}|{name}": fn for (name, lib), fn in impls.items()}
    times = {k: t for k, (t, _) in median_times(flat, args.repeat, args.min_time).items()}
    rows: list[str] = []
    for name, _lib in impls:
        if name not in rows:
            rows.append(name)

    print("PyTorch face: funcgrad.torch vs PyTorch (float32, CPU)")
    machine = (f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, "
               f"{platform.system()}); {versions()}")
    print(machine)
    print(f"time: median of {args.repeat} interleaved timeit repeats of the mean time per call;"
          " ratio = funcgrad / torch (> 1: funcgrad is slower)")
    if have_torch:
        print("checked first: chain gradients and MLP losses agree with torch")
    print()
    width = max(len(r) for r in rows)
    tw = 11 if have_torch else max(11, len(torch_note))
    print(f"| {'workload':<{width}} | {'funcgrad':>11} | {'torch':>{tw}} | {'ratio':>8} |")
    print(f"| {'-' * width} | {'-' * 11}:| {'-' * tw}:| {'-' * 8}:|")
    for name in rows:
        t_fg = times[f"funcgrad|{name}"]
        t_t = times.get(f"torch|{name}")
        ratio = f"{t_fg / t_t:7.1f}x" if t_t else "-"
        t_t_s = fmt_time(t_t) if t_t else torch_note if not have_torch else "-"
        print(f"| {name:<{width}} | {fmt_time(t_fg):>11} | {t_t_s:>{tw}} | {ratio:>8} |")
    table = [{"workload": n, "funcgrad_s": times[f"funcgrad|{n}"],
              "torch_s": times.get(f"torch|{n}"),
              "ratio": times[f"funcgrad|{n}"] / times[f"torch|{n}"] if have_torch else None}
             for n in rows]
    write_outputs(args, {"benchmark": "bench_facade", "machine": machine, "quick": args.quick,
                         "ratio": "funcgrad time / torch time (> 1: funcgrad is slower)",
                         "rows": table},
                  [(r["workload"], r["ratio"]) for r in table],
                  title="funcgrad.torch vs PyTorch (CPU, float32)",
                  xlabel="funcgrad time / torch time (> 1: funcgrad is slower)")
    if args.profile:
        print()
        print(run_profile())


if __name__ == "__main__":
    main()
