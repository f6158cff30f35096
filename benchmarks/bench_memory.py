"""Memory of an MLP forward+backward: funcgrad (both faces) against PyTorch and JAX.

The model: 784-256-10, ReLU, cross-entropy, batch 64, float32 (the PyTorch tutorial's
MLP, one hidden layer). Measured, one process:

- funcgrad.torch: with tracemalloc (NumPy reports its buffers to it), the bytes held
  after the forward beyond the parameters and the input (what the graph keeps for the
  backward, the loss included), and the peak over the whole forward+backward (gradients
  and temporaries included).
- PyTorch 2.13: the bytes of the tensors its graph saves (``saved_tensors_hooks``, each
  storage once), all of them and without the parameters and the input (which exist
  anyway). PyTorch's own allocator is invisible to tracemalloc, so this is the fair
  counterpart of "held after the forward".
- funcgrad's JAX face: the bytes held by ``vjp``'s function (tracemalloc), and, where
  JAX is installed, the residual arrays of ``jax.vjp``'s function (its pytree leaves).

Ratios are printed against PyTorch's saved activation bytes. Memory, unlike time, does
not depend on the load of the machine (2 shared cores here); one run suffices.

    python benchmarks/bench_memory.py [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import versions  # noqa: E402

import funcgrad as fg  # noqa: E402
import funcgrad.numpy as fnp  # noqa: E402
import funcgrad.torch as ft  # noqa: E402

SIZES = (784, 256, 10)
BATCH = 64


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.int64)
    weights = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(a)
        weights.append(rng.uniform(-bound, bound, (b, a)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, (b,)).astype(np.float32))
    return x, y, weights


def _traced(run: Callable[[], Any]) -> tuple[int, int, Any]:
    """(bytes held when ``run`` returns, peak bytes during it, its result), both over
    what was allocated before."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = run()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return held - base, peak - base, out


def funcgrad_torch(x: np.ndarray, y: np.ndarray, weights: list[np.ndarray]) -> dict[str, int]:
    model = ft.nn.Sequential(ft.nn.Linear(SIZES[0], SIZES[1]), ft.nn.ReLU(),
                             ft.nn.Linear(SIZES[1], SIZES[2]))
    with ft.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(ft.tensor(w))
    xt, yt = ft.tensor(x), ft.tensor(y)

    def forward() -> Any:
        return ft.nn.functional.cross_entropy(model(xt), yt)

    def step() -> None:
        loss = forward()
        loss.backward()

    for _ in range(2):  # warm caches (dispatch tables, compiled rules)
        step()
        model.zero_grad(set_to_none=True)
    held, _, loss = _traced(forward)
    del loss
    model.zero_grad(set_to_none=True)
    _, peak, _ = _traced(step)
    return {"held_after_forward": held, "peak_forward_backward": peak}


def pytorch(x: np.ndarray, y: np.ndarray, weights: list[np.ndarray]) -> dict[str, int] | None:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(),
                                torch.nn.Linear(SIZES[1], SIZES[2]))
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(torch.tensor(w))
    xt, yt = torch.tensor(x), torch.tensor(y)
    anyway = {p.untyped_storage().data_ptr() for p in model.parameters()}
    anyway.add(xt.untyped_storage().data_ptr())
    saved: dict[int, int] = {}

    def pack(t: Any) -> Any:
        s = t.untyped_storage()
        saved[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = torch.nn.functional.cross_entropy(model(xt), yt)
    loss.backward()
    activations = sum(n for ptr, n in saved.items() if ptr not in anyway)
    return {"saved_all": sum(saved.values()), "saved_activations": activations}


def funcgrad_vjp(x: np.ndarray, y: np.ndarray, weights: list[np.ndarray]) -> dict[str, int]:
    params = [fnp.asarray(w) for w in weights]
    xa, ya = fnp.asarray(x), fnp.asarray(y)

    def loss(params: list[Any], x: Any) -> Any:
        w1, b1, w2, b2 = params
        h = fg.nn.relu(x @ w1.T + b1)
        logits = h @ w2.T + b2
        logp = fg.nn.log_softmax(logits)
        return -fnp.take_along_axis(logp, ya[:, None], axis=1).mean()

    for _ in range(2):
        fg.vjp(loss, params, xa)[1](fnp.float32(1.0))

    def run() -> Any:
        out, vjp_fn = fg.vjp(loss, params, xa)
        return vjp_fn

    held, _, vjp_fn = _traced(run)
    del vjp_fn
    return {"vjp_held": held}


def jax_vjp(x: np.ndarray, y: np.ndarray, weights: list[np.ndarray]) -> dict[str, int] | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    params = [jnp.asarray(w) for w in weights]
    xa, ya = jnp.asarray(x), jnp.asarray(y)

    def loss(params: list[Any], x: Any) -> Any:
        w1, b1, w2, b2 = params
        h = jax.nn.relu(x @ w1.T + b1)
        logp = jax.nn.log_softmax(h @ w2.T + b2)
        return -jnp.take_along_axis(logp, ya[:, None], axis=1).mean()

    _, vjp_fn = jax.vjp(loss, params, xa)
    inputs = {a.unsafe_buffer_pointer() for a in [*params, xa]}
    leaves = [a for a in jax.tree_util.tree_leaves(vjp_fn) if hasattr(a, "nbytes")]
    seen: dict[int, int] = {}
    for a in leaves:
        seen[a.unsafe_buffer_pointer()] = int(a.nbytes)
    return {"residuals_all": sum(seen.values()),
            "residuals_activations": sum(n for p, n in seen.items() if p not in inputs)}


def _kib(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024:9.1f} KiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    x, y, weights = _data()
    ours = funcgrad_torch(x, y, weights)
    theirs = pytorch(x, y, weights)
    face = funcgrad_vjp(x, y, weights)
    jx = jax_vjp(x, y, weights)
    ref = theirs["saved_activations"] if theirs else None
    ref_all = theirs["saved_all"] if theirs else None

    def ratio(n: int | None, to: int | None) -> str:
        return "-" if n is None or not to else f"{n / to:6.2f}x"

    print(f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float32, forward+backward "
          f"({versions()}); machine: 2 shared cores; memory, one run")
    rows = [
        ("funcgrad.torch held after forward (tracemalloc)", ours["held_after_forward"], ref),
        ("funcgrad.torch peak forward+backward (tracemalloc)",
         ours["peak_forward_backward"], ref_all),
        ("funcgrad vjp function holds (tracemalloc)", face["vjp_held"], ref),
        ("PyTorch saved tensors, activations", ref, ref),
        ("PyTorch saved tensors, all (params, input too)", ref_all, ref_all),
        ("jax.vjp residuals, activations", jx["residuals_activations"] if jx else None, ref),
        ("jax.vjp residuals, all", jx["residuals_all"] if jx else None, ref_all),
    ]
    print(f"{'measure':55s} {'bytes':>13s}  {'ratio':>7s}  to")
    for name, n, to in rows:
        which = "PyTorch saved activations" if to is ref else "PyTorch saved, all"
        print(f"{name:55s} {_kib(n):>13s}  {ratio(n, to):>7s}  {which}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"funcgrad_torch": ours, "pytorch": theirs, "funcgrad_vjp": face,
                       "jax": jx}, fh, indent=1)


if __name__ == "__main__":
    main()
