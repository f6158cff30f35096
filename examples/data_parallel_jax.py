"""Data-parallel training on the JAX face: ``pmap`` over processes, gradients averaged
with ``lax.pmean``, as JAX's data-parallel examples do (one device per process).

Run on 2 processes:
    python -m funcgrad.distributed.run --nproc 2 examples/data_parallel_jax.py
or  mpiexec -n 2 python examples/data_parallel_jax.py
Alone it runs as a run of one process. Needs the ``distributed`` extra for more. Rank 0
draws a tqdm progress bar (on stderr) if tqdm is installed (``--no-bar``: none).
"""

from __future__ import annotations

import argparse

import numpy as np

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    tqdm = None


def init(key):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (8, 32)) * 0.3, "b1": jnp.zeros(32),
            "w2": jax.random.normal(k2, (32, 1)) * 0.3, "b2": jnp.zeros(1)}


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--no-bar", action="store_true", help="no tqdm progress bar")
    args = parser.parse_args()
    jax.distributed.initialize()
    rank, world = jax.process_index(), jax.process_count()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64 * world, 8)).astype(np.float32)
    y = np.sin(x.sum(1, keepdims=True)).astype(np.float32)
    mine = slice(64 * rank, 64 * (rank + 1))  # each process its shard of the batch

    def step(params, xb, yb):
        value, grads = jax.value_and_grad(loss)(params, xb, yb)
        grads = lax.pmean(grads, "batch")  # the gradient of the whole batch
        new = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
        return new, lax.pmean(value, "batch")

    # in_axes=0: the leading axis of the batch is this process's one device; the
    # parameters (None) are the same everywhere, and so are the averaged results.
    pstep = jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)
    params = init(jax.random.key(0))
    steps, say = range(args.steps), print
    if tqdm is not None and not args.no_bar and rank == 0:
        # tqdm.write prints the loss lines (to stdout) above the bar (on stderr).
        steps, say = tqdm(steps, desc="training", leave=False), tqdm.write
    for i in steps:
        params, value = pstep(params, x[None, mine], y[None, mine])
        if rank == 0 and i % 50 == 0:
            say(f"step {i:3d}  loss {float(value):.4f}")
    if rank == 0:
        print(f"world size {world}  final loss {float(loss(params, x, y)):.4f}")


if __name__ == "__main__":
    main()
