"""Per-example gradients of logistic regression: funcgrad vs hand-written NumPy, JAX, PyTorch.

Every implementation computes the same (batch, features) array of per-example
gradients of the binary cross-entropy ``softplus(x.w) - y * (x.w)`` (labels
``y`` in {0, 1}), whose closed form is ``x * (sigmoid(x.w) - y)``:

- funcgrad ``vmap(grad(loss), in_axes=(None, 0, 0))`` (the reference row),
- funcgrad ``jit(vmap(grad(loss)))`` (when funcgrad has ``jit``),
- funcgrad, a Python loop of ``grad(loss)`` over the examples,
- hand-written NumPy: ``X * (sigmoid(X @ w) - y)[:, None]``,
- ``jax.jit(jax.vmap(jax.grad(loss)))`` and ``jax.vmap(jax.grad(loss))`` without jit,
- ``torch.func.vmap(torch.func.grad(loss))``.

Peers that are not installed are reported as "not installed" and skipped. All
results are checked against the closed form before timing. Everything runs in
one process; each time is the median over ``--repeat`` timeit repeats (of about
``--min-time`` seconds each) of the mean time of one call, the repeats of all
implementations interleaved round by round. The ratio column is
time / time of funcgrad vmap(grad): below 1 is faster than funcgrad vmap(grad).

Run: python benchmarks/bench_per_example_grads.py [--batch 128] [--features 100]
     [--dtype float64] [--repeat 7] [--quick] [--no-peers]
"""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Callable
from typing import Any

import numpy as np
from plotting import add_output_options, write_outputs  # benchmarks/plotting.py
from timing import fmt_time, median_times, versions  # benchmarks/timing.py

import funcgrad as fg
import funcgrad.numpy as fnp

REFERENCE = "funcgrad vmap(grad)"


# ------------------------------------------------------------------ the implementations


def fg_loss(w: Any, x: Any, y: Any) -> Any:
    z = fnp.dot(x, w)
    return fnp.logaddexp(0.0, z) - y * z


def setup_funcgrad(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> dict[str, Callable[[], Any]]:
    per_example = fg.vmap(fg.grad(fg_loss), in_axes=(None, 0, 0))
    grad = fg.grad(fg_loss)
    runs: dict[str, Callable[[], Any]] = {
        REFERENCE: lambda: per_example(w, X, y),
    }
    if hasattr(fg, "jit"):
        jitted = fg.jit(per_example)
        runs["funcgrad jit(vmap(grad))"] = lambda: jitted(w, X, y)
    runs["funcgrad Python loop of grad"] = lambda: np.stack(
        [grad(w, X[i], y[i]) for i in range(X.shape[0])])
    return runs


def setup_numpy(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> dict[str, Callable[[], Any]]:
    def closed_form() -> np.ndarray:
        z = X @ w
        # sigmoid via tanh: no overflow warning for large |z|.
        return X * (0.5 * (np.tanh(0.5 * z) + 1.0) - y)[:, None]

    return {"NumPy by hand (closed form)": closed_form}


def setup_jax(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> dict[str, Callable[[], Any]]:
    import jax  # noqa: PLC0415 - optional peer

    if X.dtype == np.float64:
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: PLC0415

    def loss(w_: Any, x: Any, y_: Any) -> Any:
        z = jnp.dot(x, w_)
        return jnp.logaddexp(0.0, z) - y_ * z

    wj, Xj, yj = (jax.device_put(a) for a in (w, X, y))
    eager = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    jitted = jax.jit(eager)
    return {
        "jax.jit(jax.vmap(jax.grad))": lambda: jitted(wj, Xj, yj).block_until_ready(),
        "jax.vmap(jax.grad), no jit": lambda: eager(wj, Xj, yj).block_until_ready(),
    }


def setup_torch(w: np.ndarray, X: np.ndarray, y: np.ndarray) -> dict[str, Callable[[], Any]]:
    import torch  # noqa: PLC0415 - optional peer
    import torch.func  # noqa: PLC0415

    def loss(w_: Any, x: Any, y_: Any) -> Any:
        z = torch.dot(x, w_)
        return torch.logaddexp(torch.zeros_like(z), z) - y_ * z

    wt, Xt, yt = (torch.from_numpy(np.ascontiguousarray(a)) for a in (w, X, y))
    per_example = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    return {"torch.func.vmap(torch.func.grad)": lambda: per_example(wt, Xt, yt)}


PEERS: list[tuple[str, tuple[str, ...], Callable[..., dict[str, Callable[[], Any]]]]] = [
    ("jax", ("jax.jit(jax.vmap(jax.grad))", "jax.vmap(jax.grad), no jit"), setup_jax),
    ("torch", ("torch.func.vmap(torch.func.grad)",), setup_torch),
]


# ------------------------------------------------------------------------- measuring


def to_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x)








def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--repeat", type=int, default=7, help="timeit repeats (median)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds each timeit repeat should at least take")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 3 repeats of ~10 ms (numbers are noisy)")
    parser.add_argument("--no-peers", action="store_true", help="skip JAX and PyTorch")
    add_output_options(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.min_time = 3, 0.01

    dtype = np.dtype(args.dtype)
    # funcgrad follows JAX: float64 needs the x64 switch (else arrays become float32).
    fg.config.update("jax_enable_x64", dtype == np.float64)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.batch, args.features)).astype(dtype)
    w = (rng.standard_normal(args.features) / np.sqrt(args.features)).astype(dtype)
    y = (rng.random(args.batch) < 0.5).astype(dtype)
    expected = X * (1.0 / (1.0 + np.exp(-(X @ w))) - y)[:, None]
    tol = 1e-9 if dtype == np.float64 else 1e-4

    rows: list[tuple[str, float | None, str]] = []
    impls: dict[str, Callable[[], Any]] = {}
    impls.update(setup_funcgrad(w, X, y))
    impls.update(setup_numpy(w, X, y))
    skipped: list[tuple[str, str]] = []
    for module, labels, setup in PEERS:
        if args.no_peers:
            skipped.extend((label, "skipped (--no-peers)") for label in labels)
            continue
        try:
            __import__(module)
        except ImportError:
            skipped.extend((label, f"not installed ({module})") for label in labels)
            continue
        impls.update(setup(w, X, y))

    for name, fn in impls.items():
        got = to_numpy(fn())  # also the warm-up (and the compile, for jit)
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=name)
    for name, (t, number) in median_times(impls, args.repeat, args.min_time).items():
        rows.append((name, t, f"{number} calls/repeat"))
    rows.extend((label, None, why) for label, why in skipped)

    ref = next(t for name, t, _ in rows if name == REFERENCE)
    print(f"Per-example gradients of logistic regression: batch {args.batch}, "
          f"{args.features} features, {dtype.name}")
    machine = (f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, "
               f"{platform.system()}); {versions()}")
    print(machine)
    print(f"time: median of {args.repeat} interleaved timeit repeats of the mean time per call; "
          f"ratio = time / time of {REFERENCE} (< 1 is faster)")
    print("all results checked against the closed form X * (sigmoid(X w) - y)[:, None]")
    print()
    width = max(len(r[0]) for r in rows)
    print(f"{'implementation':<{width}}  {'time/call':>11}  {'ratio':>8}  notes")
    print(f"{'-' * width}  {'-' * 11}  {'-' * 8}  {'-' * 20}")
    for name, t, note in rows:
        if t is None:
            print(f"{name:<{width}}  {'-':>11}  {'-':>8}  {note}")
        else:
            print(f"{name:<{width}}  {fmt_time(t):>11}  {t / ref:7.3f}x  {note}")
    title = (f"Per-example gradients, batch {args.batch}, {args.features} features, "
             f"{dtype.name}")
    write_outputs(args, {"benchmark": "bench_per_example_grads", "title": title,
                         "machine": machine, "quick": args.quick, "reference": REFERENCE,
                         "ratio": f"time / time of {REFERENCE} (< 1 is faster)",
                         "rows": [{"implementation": n, "time_s": t, "note": note,
                                   "ratio": None if t is None else t / ref}
                                  for n, t, note in rows]},
                  [(n, None if t is None else t / ref) for n, t, _ in rows if n != REFERENCE],
                  title=title, xlabel=f"time / time of {REFERENCE} (< 1: faster)")


if __name__ == "__main__":
    main()
