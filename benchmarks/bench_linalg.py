"""value+grad of slogdet, cholesky+solve, svd and eigh: funcgrad against jax.jit and PyTorch.

Each workload is a scalar loss of a matrix ``a`` whose value and gradient are computed in
one call, at two sizes: one n x n matrix (``--n``, 256) and a batch of ``--batch`` (64)
matrices of ``--small`` (16):

- ``slogdet``: ``sum(slogdet(a).logabsdet)`` (LU; the gradient is ``inv(a)^T``);
- ``cholesky+solve``: ``sum(cho_solve(cholesky(a), b))`` for a symmetric positive definite
  ``a`` and a fixed right-hand side ``b`` (n x 4);
- ``svd``: ``sum(s) + sum(c * u**2) + sum(c * vh**2)`` of the reduced SVD (squares keep
  the loss independent of the vectors' signs, which LAPACK drivers choose freely);
- ``eigh``: ``sum(c0 * w) + sum(c * v**2)`` of a symmetric ``a``.

Rows: funcgrad ``jit(value_and_grad)`` and eager ``value_and_grad`` (NumPy/SciPy LAPACK
underneath), ``jax.jit(jax.value_and_grad)`` (XLA's LAPACK calls) and PyTorch eager
autograd (``torch.linalg``). Every gradient is checked before it is timed against a
central finite difference of the loss along a random direction, in float64 NumPy (the
first call is also the warm-up and compile). Times are medians over ``--repeat``
interleaved rounds; ratio = funcgrad jit time / the faster peer's time, so > 1 means
funcgrad is slower (the issue's goal: <= 1.5). Everything runs on ``--threads`` (1)
threads. Peers not installed show as "not installed".

Run: python benchmarks/bench_linalg.py [--n 256] [--batch 64] [--small 16] [--repeat 5]
     [--min-time 0.2] [--threads 1] [--dtype float64] [--no-peers] [--quick] [--tiny]
     [--json PATH] [--plot PATH] [--markdown PATH]
"""

from __future__ import annotations

import argparse
import os
import pathlib
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
import funcgrad.scipy.linalg as fsl  # noqa: E402

WORKLOADS = ("slogdet", "cholesky+solve", "svd", "eigh")
IMPLS = ("funcgrad jit", "funcgrad eager", "jax.jit", "torch")


class Data:
    """The inputs of one size: the matrix per workload and the loss constants."""

    def __init__(self, batch: tuple[int, ...], n: int, dtype: Any, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        shape = (*batch, n, n)
        g = rng.standard_normal(shape)
        # Random orthogonal bases around evenly spaced singular values and eigenvalues:
        # well conditioned, with gaps of 1/n between values, so that every gradient exists
        # and a finite difference can check it.
        q1 = np.linalg.qr(rng.standard_normal(shape))[0]
        q2 = np.linalg.qr(rng.standard_normal(shape))[0]
        values = np.linspace(1.0, 2.0, n)
        general = (q1 * values[..., None, :]) @ np.swapaxes(q2, -1, -2)
        sym = (q1 * (values - 1.5)[..., None, :]) @ np.swapaxes(q1, -1, -2)
        spd = g @ np.swapaxes(g, -1, -2) / n + np.eye(n)
        self.a = {"slogdet": general, "cholesky+solve": spd, "svd": general, "eigh": sym}
        self.b = rng.standard_normal((*batch, n, 4))
        self.c = rng.uniform(0.5, 1.5, (n, n))
        self.c0 = rng.uniform(0.5, 1.5, (n,))
        self.dtype = np.dtype(dtype)
        self.label = f"{n}x{n}" if not batch else f"{batch[0]} x {n}x{n}"

    def cast(self, x: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(x, self.dtype)


# ----------------------------------------------------------------- reference


def _np_loss(name: str, a: np.ndarray, d: Data) -> float:
    """The loss in float64 NumPy (the finite-difference reference)."""
    if name == "slogdet":
        return float(np.sum(np.linalg.slogdet(a)[1]))
    if name == "cholesky+solve":
        sym = (a + np.swapaxes(a, -1, -2)) / 2
        return float(np.sum(np.linalg.solve(sym, d.b)))
    if name == "svd":
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return float(np.sum(s) + np.sum(d.c * u ** 2) + np.sum(d.c * vh ** 2))
    sym = (a + np.swapaxes(a, -1, -2)) / 2
    w, v = np.linalg.eigh(sym)
    return float(np.sum(d.c0 * w) + np.sum(d.c * v ** 2))


def _richardson(f: Callable[[np.ndarray], float], a: np.ndarray, direction: np.ndarray,
                h: float = 1e-5) -> float:
    """The directional derivative by central differences at h and h/2, extrapolated (the
    h^2 error term cancels: the svd and eigh losses curve steeply where values are close)."""
    def central(step: float) -> float:
        return (f(a + step * direction) - f(a - step * direction)) / (2 * step)

    return (4 * central(h / 2) - central(h)) / 3


def check(name: str, d: Data, value: Any, grad: Any, what: str) -> None:
    """The value against NumPy, the gradient along two random directions against central
    finite differences of NumPy's loss; exits with a message on a mismatch."""
    a = d.a[name]
    want = _np_loss(name, a, d)
    tol = 1e-6 if d.dtype == np.float64 else 5e-3
    if abs(float(value) - want) > tol * max(1.0, abs(want)) * 10:
        raise SystemExit(f"{what} {name} ({d.label}): value {float(value)} != NumPy {want}")
    g = np.asarray(grad, np.float64)
    rng = np.random.default_rng(1)
    for _ in range(2):
        direction = rng.standard_normal(a.shape)
        if name in ("cholesky+solve", "eigh"):
            direction = direction + np.swapaxes(direction, -1, -2)  # stay symmetric
        fd = _richardson(lambda x: _np_loss(name, x, d), a, direction)
        got = float(np.sum(g * direction))
        if abs(got - fd) > tol * max(1.0, abs(fd)) * 10:
            raise SystemExit(f"{what} {name} ({d.label}): directional derivative {got} != "
                             f"finite difference {fd}")


# ------------------------------------------------------------------ the rows


def _funcgrad_rows(d: Data) -> dict[str, dict[str, tuple[Callable[[], Any], Any]]]:
    if d.dtype == np.float64:
        fg.config.update("jax_enable_x64", True)
    b, c, c0 = (fnp.asarray(d.cast(v)) for v in (d.b, d.c, d.c0))

    def slogdet(a: Any) -> Any:
        return fnp.sum(fnp.linalg.slogdet(a).logabsdet)

    def chol_solve(a: Any) -> Any:
        return fnp.sum(fsl.cho_solve((fnp.linalg.cholesky(a), True), b))

    def svd(a: Any) -> Any:
        u, s, vh = fnp.linalg.svd(a, full_matrices=False)
        return fnp.sum(s) + fnp.sum(c * u ** 2) + fnp.sum(c * vh ** 2)

    def eigh(a: Any) -> Any:
        w, v = fnp.linalg.eigh(a)
        return fnp.sum(c0 * w) + fnp.sum(c * v ** 2)

    losses = {"slogdet": slogdet, "cholesky+solve": chol_solve, "svd": svd, "eigh": eigh}
    rows: dict[str, dict[str, tuple[Callable[[], Any], Any]]] = {"funcgrad jit": {},
                                                                  "funcgrad eager": {}}
    for name, loss in losses.items():
        a = fnp.asarray(d.cast(d.a[name]))
        jitted, eager = fg.jit(fg.value_and_grad(loss)), fg.value_and_grad(loss)
        rows["funcgrad jit"][name] = (lambda f=jitted, x=a: fg.block_until_ready(f(x)),
                                      None)
        rows["funcgrad eager"][name] = (lambda f=eager, x=a: fg.block_until_ready(f(x)),
                                        None)
    return rows


def _jax_rows(d: Data) -> dict[str, dict[str, tuple[Callable[[], Any], Any]]]:
    try:
        import jax  # noqa: PLC0415 - optional peer
    except ImportError:
        return {"jax.jit": {}}
    jax.config.update("jax_platforms", "cpu")
    if d.dtype == np.float64:
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: PLC0415
    import jax.scipy.linalg as jsl  # noqa: PLC0415

    b, c, c0 = (jax.device_put(d.cast(v)) for v in (d.b, d.c, d.c0))

    def slogdet(a: Any) -> Any:
        return jnp.sum(jnp.linalg.slogdet(a)[1])

    def chol_solve(a: Any) -> Any:
        return jnp.sum(jsl.cho_solve((jnp.linalg.cholesky(a), True), b))

    def svd(a: Any) -> Any:
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.sum(s) + jnp.sum(c * u ** 2) + jnp.sum(c * vh ** 2)

    def eigh(a: Any) -> Any:
        w, v = jnp.linalg.eigh(a)
        return jnp.sum(c0 * w) + jnp.sum(c * v ** 2)

    losses = {"slogdet": slogdet, "cholesky+solve": chol_solve, "svd": svd, "eigh": eigh}
    rows = {}
    for name, loss in losses.items():
        a = jax.device_put(d.cast(d.a[name]))
        f = jax.jit(jax.value_and_grad(loss))
        rows[name] = (lambda f=f, x=a: jax.block_until_ready(f(x)), None)
    return {"jax.jit": rows}


def _torch_rows(d: Data) -> dict[str, dict[str, tuple[Callable[[], Any], Any]]]:
    try:
        import torch  # noqa: PLC0415 - optional peer
    except ImportError:
        return {"torch": {}}
    torch.set_num_threads(_THREADS)
    b, c, c0 = (torch.from_numpy(d.cast(v)) for v in (d.b, d.c, d.c0))

    def slogdet(a: Any) -> Any:
        return torch.linalg.slogdet(a)[1].sum()

    def chol_solve(a: Any) -> Any:
        # torch.linalg.cholesky reads the lower triangle; symmetrize as JAX and funcgrad
        # do by default, so that the three gradients are the same matrix.
        return torch.cholesky_solve(b, torch.linalg.cholesky((a + a.mT) / 2)).sum()

    def svd(a: Any) -> Any:
        u, s, vh = torch.linalg.svd(a, full_matrices=False)
        return s.sum() + (c * u ** 2).sum() + (c * vh ** 2).sum()

    def eigh(a: Any) -> Any:
        w, v = torch.linalg.eigh((a + a.mT) / 2)
        return (c0 * w).sum() + (c * v ** 2).sum()

    losses = {"slogdet": slogdet, "cholesky+solve": chol_solve, "svd": svd, "eigh": eigh}
    rows = {}
    for name, loss in losses.items():
        a0 = torch.from_numpy(d.cast(d.a[name]))

        def step(loss: Callable[[Any], Any] = loss, a0: Any = a0) -> Any:
            a = a0.detach().requires_grad_(True)
            value = loss(a)
            value.backward()
            return value.detach(), a.grad

        rows[name] = (step, None)
    return {"torch": rows}


# --------------------------------------------------------------------- output


def markdown(times: dict[str, dict[str, float]], sizes: list[str], workloads: list[str],
             machine: str, threads: int, dtype: str) -> str:
    """The table: one row per (workload, size), times of each implementation and the ratio
    of funcgrad jit to the faster peer."""
    head = ("| workload | size | " + " | ".join(IMPLS) + " | funcgrad jit / faster peer |"
            "\n|---|---|" + "---:|" * (len(IMPLS) + 1) + "\n")
    lines = []
    for size in sizes:
        for name in workloads:
            key = f"{name} @ {size}"
            cells = []
            for impl in IMPLS:
                t = times.get(impl, {}).get(key)
                cells.append(fmt_time(t).strip() if t is not None else "-")
            ratio = _ratio(times, key)
            cells.append(f"{ratio:.2f}x" if ratio is not None else "-")
            lines.append(f"| {name} | {size} | " + " | ".join(cells) + " |")
    return (f"value+grad, {dtype}, {threads} thread(s)\n\n{machine}\n\n" + head
            + "\n".join(lines) + "\n")


def _ratio(times: dict[str, dict[str, float]], key: str) -> float | None:
    ours = times.get("funcgrad jit", {}).get(key)
    peers = [times[p][key] for p in ("jax.jit", "torch") if key in times.get(p, {})]
    if ours is None or not peers:
        return None
    return ours / min(peers)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--small", type=int, default=16)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--quick", action="store_true", help="smoke run: noisy numbers")
    p.add_argument("--tiny", action="store_true", help="n = 8, a batch of 4 of 4x4 (tests)")
    p.add_argument("--workloads", default=",".join(WORKLOADS),
                   help="comma-separated subset of " + ", ".join(WORKLOADS))
    p.add_argument("--markdown", type=pathlib.Path, default=None,
                   help="also write the Markdown table to this file")
    add_output_options(p)
    args = p.parse_args()
    if args.quick or args.tiny:
        args.repeat, args.min_time = 3, 0.02
    if args.tiny:
        args.n, args.batch, args.small = 8, 4, 4
    chosen = [w for w in args.workloads.split(",") if w]
    unknown = set(chosen) - set(WORKLOADS)
    if unknown:
        raise SystemExit(f"unknown workloads {sorted(unknown)}; choose from {WORKLOADS}")

    sizes = [Data((), args.n, args.dtype), Data((args.batch,), args.small, args.dtype, 1)]
    times: dict[str, dict[str, float]] = {}
    not_installed: set[str] = set()
    for d in sizes:
        rows = _funcgrad_rows(d)
        if not args.no_peers:
            rows.update(_jax_rows(d))
            rows.update(_torch_rows(d))
        not_installed |= {impl for impl, fns in rows.items() if not fns}
        for impl, fns in rows.items():
            for name in chosen:
                value, grad = fns[name][0]()
                check(name, d, value, grad, impl)
        for name in chosen:
            impls = {impl: fns[name][0] for impl, fns in rows.items() if fns}
            for impl, (t, _) in median_times(impls, args.repeat, args.min_time).items():
                times.setdefault(impl, {})[f"{name} @ {d.label}"] = t

    machine = (f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, "
               f"{platform.system()}); {versions()}")
    labels = [d.label for d in sizes]
    table = markdown(times, labels, chosen, machine, args.threads, args.dtype)
    print(table)
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table)
        print(f"wrote {args.markdown}")
    keys = [f"{name} @ {label}" for label in labels for name in chosen]
    ratios = {k: _ratio(times, k) for k in keys}
    write_outputs(args, {"benchmark": "bench_linalg", "machine": machine,
                         "dtype": args.dtype, "threads": args.threads,
                         "sizes": labels, "workloads": chosen, "times_s": times,
                         "ratio_to_faster_peer": ratios,
                         "not_installed": sorted(not_installed),
                         "ratio": "funcgrad jit time / the faster peer's time "
                                  "(> 1: funcgrad is slower; goal <= 1.5)"},
                  [(k, r) for k, r in ratios.items()],
                  title=f"value+grad of linalg workloads (CPU, {args.dtype})",
                  xlabel="funcgrad jit time / faster peer time (> 1: funcgrad is slower)")


if __name__ == "__main__":
    main()
