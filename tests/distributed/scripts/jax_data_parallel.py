"""Run under mpiexec: the JAX face's collectives across processes, against NumPy."""

import numpy as np

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad import lax

jax.config.update("jax_enable_x64", True)
jax.distributed.initialize()
rank, n = jax.process_index(), jax.process_count()
rng = np.random.default_rng(0)
# Every rank draws the same data and takes its rows: the full batch is known everywhere.
X, Y = rng.standard_normal((4 * n, 3)), rng.standard_normal((4 * n, 2))
params = {"w1": rng.standard_normal((3, 5)), "b1": rng.standard_normal(5),
          "w2": rng.standard_normal((5, 2))}


def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)


mine = slice(4 * rank, 4 * (rank + 1))
step = jax.pmap(lambda p, x, y: lax.pmean(jax.grad(loss)(p, x, y), "batch"),
                axis_name="batch", in_axes=(None, 0, 0))
dp = step(params, X[None, mine], Y[None, mine])
full = jax.grad(loss)(params, jnp.asarray(X), jnp.asarray(Y))
for k in params:
    np.testing.assert_allclose(np.asarray(dp[k])[0], np.asarray(full[k]), rtol=1e-10,
                               atol=1e-12)

# Every collective and dtype against NumPy on the gathered per-rank values.
per_rank = [np.arange(6).reshape(2, 3) * (r + 1) - 4 for r in range(n)]
for dtype in (np.float32, np.float64, np.int32, np.int64):
    x = jnp.asarray(per_rank[rank].astype(dtype))[None]
    allx = np.stack([v.astype(dtype) for v in per_rank])
    for fn, ref in ((lax.psum, allx.sum(0)), (lax.pmax, allx.max(0)), (lax.pmin, allx.min(0))):
        got = jax.pmap(lambda v, fn=fn: fn(v, "i"), axis_name="i")(x)
        np.testing.assert_array_equal(np.asarray(got)[0], ref)
        assert got.dtype == dtype, (got.dtype, dtype)
    g = jax.pmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(g)[0], allx)
    g = jax.pmap(lambda v: lax.all_gather(v, "i", axis=1, tiled=True), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(g)[0], np.concatenate(list(allx), axis=1))
    perm = [(r, (r + 1) % n) for r in range(n)]
    got = jax.pmap(lambda v, perm=perm: lax.ppermute(v, "i", perm), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got)[0], allx[(rank - 1) % n])
    idx = jax.pmap(lambda v: lax.axis_index("i") + 0 * v.sum(), axis_name="i")(x)
    assert int(np.asarray(idx)[0]) == rank

# psum_scatter: a dimension of size n, and tiled blocks.
x = np.arange(n * 2.0).reshape(n, 2) + rank
allx = np.stack([np.arange(n * 2.0).reshape(n, 2) + r for r in range(n)])
got = jax.pmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(jnp.asarray(x)[None])
np.testing.assert_allclose(np.asarray(got)[0], allx.sum(0)[rank])
got = jax.pmap(lambda v: lax.psum_scatter(v, "i", tiled=True), axis_name="i")(
    jnp.asarray(x.reshape(-1))[None])
np.testing.assert_allclose(np.asarray(got)[0], allx.sum(0).reshape(n, 2)[rank])

# all_to_all: block j of process i goes to process j, stacked in process order.
blocks = np.arange(n * 3.0).reshape(n, 3) + 10 * rank
got = jax.pmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(jnp.asarray(blocks)[None])
want = np.stack([np.arange(n * 3.0).reshape(n, 3)[rank] + 10 * r for r in range(n)])
np.testing.assert_allclose(np.asarray(got)[0], want)

# Derivatives across processes: grad of a psum-ed loss, and jvp of all_gather.
g = jax.pmap(jax.grad(lambda v: lax.psum(jnp.sum(v ** 2), "i")), axis_name="i")(
    jnp.asarray([[1.0 + rank]]))
np.testing.assert_allclose(np.asarray(g), [[2.0 * (1 + rank) * n]])
t = jax.pmap(lambda v: jax.jvp(lambda u: lax.all_gather(u, "i"), (v,), (v * 2,))[1],
             axis_name="i")(jnp.asarray([[1.0 + rank]]))
np.testing.assert_allclose(np.asarray(t)[0, :, 0], 2.0 * (1 + np.arange(n)))

# Host helpers.
gathered = jax.distributed.process_allgather(np.array([rank]))
np.testing.assert_array_equal(gathered[:, 0], np.arange(n))
np.testing.assert_array_equal(jax.distributed.broadcast_one_to_all(np.array([rank + 7])), [7])
print("OK", rank)
