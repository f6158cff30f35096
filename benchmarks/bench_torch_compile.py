"""``funcgrad.torch.compile`` on a whole training step: eager vs compiled vs PyTorch.

One step of the PyTorch tutorial's MLP (784-512-512-10, ReLU, cross-entropy, batch 64,
SGD with momentum; a smaller 784-256-10 variant, and the tutorial's MLP with dropout 0.2
after each hidden layer, in training mode): zero_grad, forward, backward, optimizer step,
the loss returned as a Tensor. Four implementations side by side:
funcgrad.torch eager, funcgrad.torch.compile, PyTorch eager and torch.compile (when
its compiler works on this machine). Before timing, the compiled step is checked to
give the eager step's losses bit for bit (with dropout too: the compiled step draws its
masks from the same generator, in the same order). Timings are medians over interleaved rounds
(see timing.py), one thread; ratios are to PyTorch eager.

    python benchmarks/bench_torch_compile.py [--repeat 7] [--min-time 0.2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import fmt_time, median_times, versions  # noqa: E402

import funcgrad.torch as ft  # noqa: E402

# label -> (layer sizes, dropout probability after each hidden layer; 0: none)
SIZES = {"tutorial 784-512-512-10": ((784, 512, 512, 10), 0.0),
         "784-256-10": ((784, 256, 10), 0.0),
         "tutorial + dropout 0.2": ((784, 512, 512, 10), 0.2)}
BATCH = 64


def _data(sizes: tuple[int, ...], seed: int = 0) -> tuple[np.ndarray, np.ndarray,
                                                          list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], BATCH).astype(np.int64)
    weights = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(a)
        weights.append(rng.uniform(-bound, bound, (b, a)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, (b,)).astype(np.float32))
    return x, y, weights


def _model(lib: Any, sizes: tuple[int, ...], weights: list[np.ndarray], p: float) -> Any:
    layers: list[Any] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [lib.nn.Linear(a, b), lib.nn.ReLU()] + ([lib.nn.Dropout(p)] if p else [])
    model = lib.nn.Sequential(*layers[:-2 if p else -1])
    with lib.no_grad():
        for param, w in zip(model.parameters(), weights):
            param.copy_(lib.tensor(w))
    return model


def setup(lib: Any, spec: tuple[tuple[int, ...], float], compiled: bool
          ) -> Callable[[], Any]:
    sizes, p = spec
    x_np, y_np, weights = _data(sizes)
    model = _model(lib, sizes, weights, p)
    opt = lib.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()
    x, y = lib.tensor(x_np), lib.tensor(y_np)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    run = lib.compile(step) if compiled else step
    return lambda: run(x, y)


def _torch_compile_works(torch: Any) -> bool:
    try:
        setup(torch, SIZES["784-256-10"], True)()
        return True
    except Exception as e:  # noqa: BLE001 - any compiler failure: leave the column out
        print(f"torch.compile unavailable here ({type(e).__name__}: {str(e)[:80]})")
        return False


def check(spec: tuple[tuple[int, ...], float]) -> None:
    """The compiled step gives the eager step's losses bit for bit (20 steps from one
    seed)."""
    eager, comp = setup(ft, spec, False), setup(ft, spec, True)
    ft.manual_seed(0)
    want = [eager().item() for _ in range(20)]
    ft.manual_seed(0)
    got = [comp().item() for _ in range(20)]
    if got != want:
        raise AssertionError(f"compiled losses {got!r} != eager losses {want!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    tc_ok = torch is not None and _torch_compile_works(torch)
    rows: dict[str, dict[str, float]] = {}
    for label, sizes in SIZES.items():
        check(sizes)
        impls = {"funcgrad eager": setup(ft, sizes, False),
                 "funcgrad.torch.compile": setup(ft, sizes, True)}
        if torch is not None:
            impls["torch eager"] = setup(torch, sizes, False)
            if tc_ok:
                impls["torch.compile"] = setup(torch, sizes, True)
        for fn in impls.values():
            fn()
            fn()  # compiled steps stage twice (no gradients, then gradients)
        times = median_times(impls, args.repeat, args.min_time)
        rows[label] = {k: v[0] for k, v in times.items()}
    print(f"MLP train step, batch {BATCH}, SGD momentum ({versions()}); "
          "machine: 2 shared cores, medians of interleaved rounds")
    print(f"{'model':26s} {'implementation':24s} {'time':>11s}  vs torch eager")
    for label, times in rows.items():
        ref = times.get("torch eager")
        for name, t in times.items():
            ratio = f"{t / ref:6.2f}x" if ref else "-"
            print(f"{label:26s} {name:24s} {fmt_time(t)}  {ratio}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
