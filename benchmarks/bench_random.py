"""funcgrad.random against jax.random, side by side in one run (CPU).

Workloads (JAX's default threefry2x32 keys, partitionable, as funcgrad's):

- ``normal``: ``random.normal(key, (N,))``, float32 (N = 1e7 by default);
- ``uniform``: ``random.uniform(key, (N,))``, float32;
- ``split``: ``random.split(key, S)`` (S = 1e4 by default): S new keys.

Rows: funcgrad ``jit`` (the sampler compiled; the key an argument) and eager, and
``jax.jit`` of the same function. Every funcgrad result is checked against JAX's before it
is timed: the bits of ``uniform`` and ``split`` are equal, ``normal`` within a few ulps
(XLA's erf_inv polynomial differs from funcgrad's). The first call is the warm-up and
compile. Times are medians over ``--repeat`` interleaved rounds; ratio = funcgrad time /
``jax.jit`` time, so > 1 means funcgrad is slower. The goal (issue 12) is funcgrad jit within
1.5x of ``jax.jit``.

Run: python benchmarks/bench_random.py [--n 10000000] [--splits 10000] [--repeat 5]
     [--min-time 0.2] [--threads 1] [--no-peers] [--tiny] [--json PATH] [--plot PATH]
     [--markdown PATH]
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
import threads  # noqa: F401 - sets the thread counts
# isort: on
import numpy as np  # noqa: E402
from plotting import add_output_options, write_outputs  # noqa: E402 - benchmarks/plotting.py
from timing import fmt_time, median_times, versions  # noqa: E402 - benchmarks/timing.py

import funcgrad as fg  # noqa: E402
from funcgrad import random  # noqa: E402

WORKLOADS = ("normal", "uniform", "split")
GOAL = 1.5


def _funcgrad_rows(n: int, s: int) -> dict[str, dict[str, Callable[[], Any]]]:
    key = random.PRNGKey(0)
    normal = fg.jit(lambda k: random.normal(k, (n,)))
    uniform = fg.jit(lambda k: random.uniform(k, (n,)))
    split = fg.jit(lambda k: random.split(k, s))
    return {
        "funcgrad jit": {"normal": lambda: normal(key).block_until_ready(),
                         "uniform": lambda: uniform(key).block_until_ready(),
                         "split": lambda: split(key).block_until_ready()},
        "funcgrad eager": {"normal": lambda: random.normal(key, (n,)).block_until_ready(),
                           "uniform": lambda: random.uniform(key, (n,)).block_until_ready(),
                           "split": lambda: random.split(key, s).block_until_ready()},
    }


def _jax_rows(n: int, s: int) -> dict[str, dict[str, Callable[[], Any]]]:
    try:
        import jax  # noqa: PLC0415 - optional peer
    except ImportError:
        return {}
    jax.config.update("jax_platforms", "cpu")
    key = jax.random.PRNGKey(0)
    normal = jax.jit(lambda k: jax.random.normal(k, (n,)))
    uniform = jax.jit(lambda k: jax.random.uniform(k, (n,)))
    split = jax.jit(lambda k: jax.random.split(k, s))
    return {"jax.jit": {"normal": lambda: normal(key).block_until_ready(),
                        "uniform": lambda: uniform(key).block_until_ready(),
                        "split": lambda: split(key).block_until_ready()}}


def _check(rows: dict[str, dict[str, Callable[[], Any]]]) -> None:
    """Every funcgrad row against JAX (bits equal; normal within a few ulps), or, without
    JAX, jit against eager and the moments of the samples."""
    ref = rows.get("jax.jit")
    for name, impls in rows.items():
        for what, fn in impls.items():
            got = np.asarray(fn())
            if ref is not None:
                want = np.asarray(ref[what]())
                if what == "normal":
                    ok = got.dtype == want.dtype and np.allclose(got, want, rtol=1e-5,
                                                                 atol=1e-5)
                else:
                    ok = got.dtype == want.dtype and np.array_equal(got, want)
                if not ok:
                    raise SystemExit(f"{name} {what}: differs from jax.random")
            elif name != "funcgrad jit":
                if not np.array_equal(got, np.asarray(rows["funcgrad jit"][what]())):
                    raise SystemExit(f"{name} {what}: differs from funcgrad jit")
            if what == "normal" and got.size >= 1000 and (abs(got.mean()) > 0.1
                                                          or abs(got.std() - 1) > 0.1):
                raise SystemExit(f"{name} normal: moments {got.mean()}, {got.std()}")


def markdown(times: dict[str, dict[str, float]], n: int, s: int, machine: str) -> str:
    """The table as Markdown (times, and each row's ratio to jax.jit)."""
    peer = times.get("jax.jit")
    head = (f"random: normal and uniform of N = {n:.0e} float32, split into S = {s:.0e} keys "
            "(CPU)\n\n" + machine + "\n\n| implementation | " +
            " | ".join(WORKLOADS) + " | " + " | ".join(f"{w} / jax.jit" for w in WORKLOADS)
            + " |\n|---|" + "---:|" * (2 * len(WORKLOADS)) + "\n")
    lines = []
    for name, t in times.items():
        cells = [fmt_time(t[w]).strip() for w in WORKLOADS]
        ratios = [f"{t[w] / peer[w]:.2f}x" if peer else "-" for w in WORKLOADS]
        lines.append(f"| {name} | " + " | ".join(cells + ratios) + " |")
    return head + "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--splits", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--no-peers", action="store_true")
    p.add_argument("--tiny", action="store_true", help="smoke run: N = 1000, S = 10")
    p.add_argument("--markdown", type=pathlib.Path, default=None,
                   help="also write the table as Markdown")
    add_output_options(p)
    args = p.parse_args()
    if args.tiny:
        args.n, args.splits, args.repeat, args.min_time = 1000, 10, 2, 0.005

    rows = _funcgrad_rows(args.n, args.splits)
    if not args.no_peers:
        rows.update(_jax_rows(args.n, args.splits))
    _check(rows)

    machine = (f"machine: {os.cpu_count()} CPU cores ({platform.machine()}, "
               f"{platform.system()}); {versions()}; {args.threads} thread(s)")
    times: dict[str, dict[str, float]] = {name: {} for name in rows}
    for what in WORKLOADS:
        impls = {name: fns[what] for name, fns in rows.items()}
        for name, (t, _) in median_times(impls, args.repeat, args.min_time).items():
            times[name][what] = t
    table = markdown(times, args.n, args.splits, machine)
    print(table)
    peer = times.get("jax.jit")
    goals = []
    for w in WORKLOADS:
        ratio = times["funcgrad jit"][w] / peer[w] if peer else None
        verdict = "not measured" if ratio is None else ("met" if ratio <= GOAL else "not met")
        goals.append({"workload": w, "ratio": ratio, "goal": GOAL, "verdict": verdict})
        print(f"goal {w}: funcgrad jit within {GOAL}x of jax.jit: {verdict}"
              + ("" if ratio is None else f" ({ratio:.2f}x)"))
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table)
        print(f"wrote {args.markdown}")
    plot_rows = [(f"{w} vs jax.jit", times["funcgrad jit"][w] / peer[w]) for w in WORKLOADS
                 ] if peer else []
    write_outputs(args, {"benchmark": "bench_random", "machine": machine, "n": args.n,
                         "splits": args.splits, "threads": args.threads, "times_s": times,
                         "goals": goals,
                         "ratio": "funcgrad time / jax.jit time (> 1: funcgrad is slower)"},
                  plot_rows, title=f"random, N = {args.n} (CPU, float32)",
                  xlabel="funcgrad jit time / jax.jit time (> 1: funcgrad is slower)")


if __name__ == "__main__":
    main()
