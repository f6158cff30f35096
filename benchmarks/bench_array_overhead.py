"""The per-operation cost of funcgrad's Array wrapper, eager, on small arrays.

Each row is one operation on 10-element arrays (float32, then float64 with 64-bit mode
on, as JAX users would turn it on), timed alone in a loop: at this size the arithmetic
is a few nanoseconds and the time is the library's per-call overhead.

- the floor: ``np.multiply(a, b)`` on NumPy arrays;
- the JAX face (``import funcgrad.numpy as jnp``; ``x = jnp.asarray(a)``):
  ``jnp.multiply(x, y)``, ``x * y``, ``jnp.sin(x)``, ``x.sum()``, ``x[0]``;
- the PyTorch face (``import funcgrad.torch as torch``; ``t = torch.tensor(a)``):
  ``t * u``, ``t * u`` with ``requires_grad=True`` (the op is recorded for backward),
  ``t.sin()``, ``t.sum()``, ``t[0]``;
- the peers, when installed: JAX (the same JAX-face ops on ``jax.numpy`` arrays, each
  result waited for with ``block_until_ready``) and PyTorch (the same PyTorch-face ops).

Every time is in microseconds per op (the median over ``--repeat`` interleaved timeit
repeats of about ``--min-time`` seconds each); "/floor" is the time divided by the
NumPy floor measured in the same process.

Before vs after: with ``--before DIR`` (default ``/tmp/fg_before``, made with
``git worktree add /tmp/fg_before 242e1b6``, the commit before ``funcgrad.Array``) the
same script runs again in a subprocess on that checkout and its times fill the "before"
columns. There, ``funcgrad.numpy`` returns NumPy arrays (so ``x * y``, ``x.sum()`` and
``x[0]`` are NumPy's own) and the PyTorch-style facade is ``funcgrad.tensor``. The
editable install maps ``funcgrad.transforms`` and ``funcgrad.backends`` to this
checkout's ``transforms/`` and ``backends/`` through an import hook, which PYTHONPATH
alone does not override (the old ``funcgrad`` would import the new transforms); so the
subprocess puts a finder first on ``sys.meta_path`` that maps the three packages to the
other checkout's folders. The two processes run one after the other (``--rounds`` times,
alternating; the median of the rounds is shown), so load on the machine can move one
column and not the other: compare the "/floor" columns too.

Run: python benchmarks/bench_array_overhead.py [--quick] [--no-peers] [--no-before]
     [--before /tmp/fg_before] [--repeat 7] [--min-time 0.1] [--rounds 2]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy / torch load their thread pools

import argparse  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
from timing import median_times, versions  # noqa: E402 - benchmarks/timing.py

# funcgrad is imported inside functions: with --as-checkout, only after the import shim.

N = 10
DTYPES = ("float32", "float64")
FLOOR = ("NumPy (floor)", "np.multiply(a, b)")
DEFAULT_BEFORE = "/tmp/fg_before"
BEFORE_COMMIT = "242e1b6"


# ------------------------------------------------------------------ importing another checkout


class _CheckoutFinder(importlib.abc.MetaPathFinder):
    """Maps funcgrad, funcgrad.transforms and funcgrad.backends to a checkout's folders.

    A ``funcgrad.*`` module the checkout does not have is an ImportError here: without
    that, the editable install's finder (later on ``sys.meta_path``) would find it in
    the installed checkout (``import funcgrad.torch`` would load the new PyTorch face).
    """

    def __init__(self, root: str) -> None:
        self.dirs = {"funcgrad": os.path.join(root, "funcgrad"),
                     "funcgrad.transforms": os.path.join(root, "transforms"),
                     "funcgrad.backends": os.path.join(root, "backends")}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> importlib.machinery.ModuleSpec | None:
        folder = self.dirs.get(fullname)
        if folder is not None:
            return importlib.util.spec_from_file_location(
                fullname, os.path.join(folder, "__init__.py"),
                submodule_search_locations=[folder])
        if not fullname.startswith("funcgrad."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            raise ModuleNotFoundError(f"No module named {fullname!r} in {self.dirs['funcgrad']}",
                                      name=fullname)
        return spec


def use_checkout(root: str) -> None:
    """Import funcgrad (all three packages) from ``root`` instead of the installed one."""
    assert "funcgrad" not in sys.modules, "funcgrad was imported before the shim"
    sys.meta_path.insert(0, _CheckoutFinder(os.path.abspath(root)))


# ------------------------------------------------------------------ the rows


def data(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal(N).astype(dtype), rng.standard_normal(N).astype(dtype))


def funcgrad_rows(dtype: str) -> dict[tuple[str, str], Callable[[], Any]]:
    """The floor and funcgrad's rows, for whichever API the imported funcgrad has."""
    import funcgrad as fg
    import funcgrad.numpy as jnp

    if hasattr(fg, "config"):  # the x64 switch (funcgrad.Array and later)
        fg.config.update("jax_enable_x64", dtype == "float64")
    try:
        import funcgrad.torch as ftorch  # the PyTorch face (funcgrad.Array and later)

        tensor = ftorch.tensor
    except ImportError:
        tensor = fg.tensor  # the facade at top level (before funcgrad.Array)
    a, b = data(dtype)
    x, y = jnp.asarray(a), jnp.asarray(b)
    assert str(x.dtype) == dtype, (x.dtype, dtype)
    t, u = tensor(a), tensor(b)
    tg, ug = tensor(a, requires_grad=True), tensor(b, requires_grad=True)
    jax_face = "funcgrad (JAX face)"
    torch_face = "funcgrad.torch" if tensor is not getattr(fg, "tensor", None) \
        else "funcgrad.tensor"
    return {
        FLOOR: lambda: np.multiply(a, b),
        (jax_face, "jnp.multiply(x, y)"): lambda: jnp.multiply(x, y),
        (jax_face, "x * y"): lambda: x * y,
        (jax_face, "jnp.sin(x)"): lambda: jnp.sin(x),
        (jax_face, "x.sum()"): lambda: x.sum(),
        (jax_face, "x[0]"): lambda: x[0],
        (torch_face, "t * u"): lambda: t * u,
        (torch_face, "t * u, requires_grad"): lambda: tg * ug,
        (torch_face, "t.sin()"): lambda: t.sin(),
        (torch_face, "t.sum()"): lambda: t.sum(),
        (torch_face, "t[0]"): lambda: t[0],
    }


def peer_rows(dtype: str) -> tuple[dict[tuple[str, str], Callable[[], Any]], list[str]]:
    """JAX's and PyTorch's rows (those installed), and notes on the ones that are not."""
    rows: dict[tuple[str, str], Callable[[], Any]] = {}
    notes = []
    a, b = data(dtype)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        notes.append("jax: not installed")
    else:
        jax.config.update("jax_enable_x64", dtype == "float64")
        x, y = jnp.asarray(a), jnp.asarray(b)
        assert str(x.dtype) == dtype, (x.dtype, dtype)
        lib = "jax"
        rows[(lib, "jnp.multiply(x, y)")] = lambda: jnp.multiply(x, y).block_until_ready()
        rows[(lib, "x * y")] = lambda: (x * y).block_until_ready()
        rows[(lib, "jnp.sin(x)")] = lambda: jnp.sin(x).block_until_ready()
        rows[(lib, "x.sum()")] = lambda: x.sum().block_until_ready()
        rows[(lib, "x[0]")] = lambda: x[0].block_until_ready()
    try:
        import torch
    except ImportError:
        notes.append("torch: not installed")
    else:
        torch.set_num_threads(1)
        t, u = torch.tensor(a), torch.tensor(b)
        tg, ug = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        lib = "torch"
        rows[(lib, "t * u")] = lambda: t * u
        rows[(lib, "t * u, requires_grad")] = lambda: tg * ug
        rows[(lib, "t.sin()")] = lambda: t.sin()
        rows[(lib, "t.sum()")] = lambda: t.sum()
        rows[(lib, "t[0]")] = lambda: t[0]
    return rows, notes


def _to_numpy(v: Any) -> np.ndarray:
    if hasattr(v, "detach"):
        v = v.detach()
        v = v.cpu().numpy() if hasattr(v, "cpu") else v.numpy()
    return np.asarray(v, np.float64)


# What each op computes, in NumPy (the check before timing).
EXPECTED: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "np.multiply(a, b)": np.multiply, "jnp.multiply(x, y)": np.multiply,
    "x * y": np.multiply, "t * u": np.multiply, "t * u, requires_grad": np.multiply,
    "jnp.sin(x)": lambda a, b: np.sin(a), "t.sin()": lambda a, b: np.sin(a),
    "x.sum()": lambda a, b: a.sum(), "t.sum()": lambda a, b: a.sum(),
    "x[0]": lambda a, b: a[0], "t[0]": lambda a, b: a[0],
}


def check(rows: dict[tuple[str, str], Callable[[], Any]], dtype: str) -> None:
    """Every row computes what NumPy does (this is also the warm-up)."""
    a, b = data(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for (lib, op), fn in rows.items():
        want = EXPECTED[op](a, b)
        np.testing.assert_allclose(_to_numpy(fn()), np.asarray(want, np.float64),
                                   rtol=tol, atol=tol, err_msg=f"{lib}: {op}")


def measure(repeat: int, min_time: float, peers: bool
            ) -> tuple[dict[str, dict[str, float]], list[str]]:
    """``{dtype: {"lib|op": seconds}}`` and notes, in this process."""
    out: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    for dtype in DTYPES:
        rows = funcgrad_rows(dtype)
        if peers:
            more, notes = peer_rows(dtype)
            rows.update(more)
        check(rows, dtype)
        times = median_times({f"{lib}|{op}": fn for (lib, op), fn in rows.items()},
                             repeat, min_time)
        out[dtype] = {k: t for k, (t, _) in times.items()}
    return out, notes


# ------------------------------------------------------------------ before vs after


def run_before(root: str, repeat: int, min_time: float) -> tuple[dict[str, Any] | None, str]:
    """The same measurement on the checkout at ``root``, in a subprocess: (JSON, why not)."""
    if not os.path.isdir(os.path.join(root, "funcgrad")):
        return None, (f"no checkout at {root} (make one with "
                      f"`git worktree add {root} {BEFORE_COMMIT}`)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    cmd = [sys.executable, os.path.abspath(__file__), "--as-checkout", root, "--json",
           "--no-peers", "--repeat", str(repeat), "--min-time", str(min_time)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"the run on {root} failed: {tail}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def git_head(root: str) -> str:
    try:
        return subprocess.run(["git", "-C", root, "log", "-1", "--format=%h %s"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def median_of(rounds: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    return {dtype: {k: statistics.median(r[dtype][k] for r in rounds) for k in rounds[0][dtype]}
            for dtype in rounds[0]}


def print_table(after: dict[str, dict[str, float]], before: dict[str, dict[str, float]] | None,
                before_note: str) -> None:
    us = 1e6
    floor_key = "|".join(FLOOR)
    for dtype in DTYPES:
        a = after[dtype]
        b = before[dtype] if before else {}
        x64 = "x64 on" if dtype == "float64" else "x64 off"
        print(f"== {dtype}[{N}] ({x64}): microseconds per op; /floor = time / np.multiply")
        keys = list(a)
        lw = max(len(k.split("|")[0]) for k in keys)
        ow = max(len(k.split("|")[1]) for k in keys)
        head = (f"{'library':<{lw}}  {'op':<{ow}}  {'after':>8}  {'/floor':>7}  "
                f"{'before':>8}  {'/floor':>7}  {'after/before':>12}")
        print(head)
        print("  ".join("-" * len(c) for c in (
            "x" * lw, "x" * ow, "x" * 8, "x" * 7, "x" * 8, "x" * 7, "x" * 12)))
        # the before run names its PyTorch-style facade funcgrad.tensor
        b_by_op = {k.replace("funcgrad.tensor|", "funcgrad.torch|"): v for k, v in b.items()}
        for k in keys:
            lib, op = k.split("|")
            t_a, t_b = a[k], b_by_op.get(k)
            cols = [f"{lib:<{lw}}", f"{op:<{ow}}", f"{t_a * us:8.2f}",
                    f"{t_a / a[floor_key]:6.1f}x"]
            if t_b is not None:
                cols += [f"{t_b * us:8.2f}", f"{t_b / b[floor_key]:6.1f}x",
                         f"{t_a / t_b:11.2f}x"]
            else:
                cols += [f"{'-':>8}", f"{'-':>7}", f"{'-':>12}"]
            print("  ".join(cols))
        print()
    if before_note:
        print(f"before: {before_note}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="timeit repeats (median)")
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds each timeit repeat should at least take")
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating after/before measurements (median of the rounds)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 3 repeats of ~10 ms, one round (noisy numbers)")
    parser.add_argument("--no-peers", action="store_true", help="skip JAX and PyTorch")
    parser.add_argument("--no-before", action="store_true", help="skip the before column")
    parser.add_argument("--before", default=DEFAULT_BEFORE, metavar="DIR",
                        help=f"checkout of the commit before funcgrad.Array ({BEFORE_COMMIT})")
    parser.add_argument("--as-checkout", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeat, args.min_time, args.rounds = 3, 0.01, 1
    if args.as_checkout:
        use_checkout(args.as_checkout)

    if args.json:  # the subprocess of the before column
        times, notes = measure(args.repeat, args.min_time, peers=not args.no_peers)
        import funcgrad.transforms

        if args.as_checkout:  # every funcgrad module came from that checkout
            root = os.path.abspath(args.as_checkout)
            stray = [name for name, mod in sys.modules.items()
                     if name.split(".")[0] == "funcgrad" and getattr(mod, "__file__", None)
                     and not os.path.abspath(mod.__file__).startswith(root + os.sep)]
            assert not stray, f"imported from outside {root}: {stray}"
        print(json.dumps({"times": times, "versions": versions(), "notes": notes,
                          "files": [sys.modules["funcgrad"].__file__,
                                    funcgrad.transforms.__file__]}))
        return

    afters, befores = [], []
    before_note = "skipped (--no-before)" if args.no_before else ""
    notes: list[str] = []
    for _ in range(args.rounds):
        times, notes = measure(args.repeat, args.min_time, peers=not args.no_peers)
        afters.append(times)
        if not args.no_before and not before_note:
            got, why = run_before(args.before, args.repeat, args.min_time)
            if got is None:
                before_note = why
            else:
                befores.append(got["times"])
                before_note = (f"{args.before} at {git_head(args.before)} "
                               f"({got['versions']}; imported from "
                               f"{', '.join(got['files'])})")
    import funcgrad as fg

    print("Array overhead: eager per-op cost on small arrays, funcgrad's two faces and peers")
    print(f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, {platform.system()}); "
          f"{versions()}")
    if hasattr(os, "getloadavg"):
        print("load average after the run: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    print(f"after: this checkout (funcgrad from {fg.__file__})")
    print(f"time: median of {args.repeat} interleaved timeit repeats (~{args.min_time} s each)"
          f" of the mean time per op; median of {len(afters)} round(s)")
    if notes:
        print("peers: " + "; ".join(notes))
    print()
    print_table(median_of(afters), median_of(befores) if befores else None, before_note)


if __name__ == "__main__":
    main()
