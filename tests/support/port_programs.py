"""JAX programs of the kinds JAX's documentation teaches (the autodiff cookbook, custom
derivatives, pytrees, control flow, random numbers, a training loop, per-example
gradients), each a function of the modules ``(jax, jnp, lax)`` returning a flat dict of
arrays. scripts/gen_jax_port_results.py runs them under JAX (32-bit mode) and stores the
results in tests/data/jax_port_results.json; tests/test_port_jax.py runs them with
``import funcgrad as jax`` and compares.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np


def _data(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def autodiff_cookbook(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    def predict(w: Any, b: Any, x: Any) -> Any:
        return jax.nn.sigmoid(jnp.dot(x, w) + b)

    def loss(w: Any, b: Any, x: Any, y: Any) -> Any:
        p = predict(w, b, x)
        return -jnp.sum(y * jnp.log(p) + (1 - y) * jnp.log(1 - p))

    x, w = _data(0, 6, 3), _data(1, 3)
    y = (np.arange(6) % 2).astype(np.float32)
    b = np.float32(0.1)
    gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, x, y)
    f = lambda v: jnp.sum(jnp.tanh(v) ** 2 * v)  # noqa: E731
    v = _data(2, 3)
    hvp = jax.jvp(jax.grad(f), (v,), (jnp.ones(3),))[1]
    out, vjp_fn = jax.vjp(lambda a: jnp.sin(a) * a, v)
    return {"grad_w": gw, "grad_b": gb, "value_and_grad": jax.value_and_grad(loss)(w, b, x, y)[0],
            "jacfwd": jax.jacfwd(lambda a: jnp.tanh(x @ a))(w),
            "jacrev": jax.jacrev(lambda a: jnp.tanh(x @ a))(w),
            "hessian": jax.hessian(f)(v), "hvp": hvp, "vjp_out": out,
            "vjp": vjp_fn(jnp.ones(3))[0]}


def custom_derivatives(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    @jax.custom_jvp
    def log1pexp(x: Any) -> Any:
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def clip_gradient(limit: float, x: Any) -> Any:
        return x

    clip_gradient.defvjp(lambda limit, x: (x, None),
                         lambda limit, _, g: (jnp.clip(g, -limit, limit),))
    xs = jnp.array([-3.0, 0.0, 10.0, 100.0])
    return {"log1pexp_grad": jax.vmap(jax.grad(log1pexp))(xs),
            "log1pexp_grad2": jax.vmap(jax.grad(jax.grad(log1pexp)))(xs[:3]),
            "clipped": jax.grad(lambda x: jnp.sum(clip_gradient(0.5, x) ** 2))(xs),
            "jit_value": jax.jit(log1pexp)(xs[:3])}


def pytrees(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    tree = {"a": [1.0, 2.0, (3.0, 4.0)], "b": {"c": np.arange(3, dtype=np.float32)},
            "d": None}
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    doubled = jax.tree_util.tree_map(lambda v: v * 2, tree)
    back = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(v) + 1 for v in leaves])
    total = jax.tree_util.tree_reduce(lambda a, v: a + jnp.sum(v), tree, 0.0)
    grads = jax.grad(lambda t: sum(jnp.sum(v ** 2) for v in jax.tree_util.tree_leaves(t)))(
        {"x": jnp.ones(2), "y": (jnp.arange(3.0), 2.0)})
    paths = [jax.tree_util.keystr(p) for p, _ in
             jax.tree_util.tree_flatten_with_path(tree)[0]]
    return {"num_leaves": np.int32(len(leaves)), "doubled_c": doubled["b"]["c"],
            "doubled_a2": jnp.asarray(doubled["a"][2][1]), "back_c": back["b"]["c"],
            "total": total, "grad_x": grads["x"], "grad_y0": grads["y"][0],
            "grad_y1": jnp.asarray(grads["y"][1]),
            "paths": np.array([len(p) for p in paths], np.int32)}


def control_flow(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    x = _data(3, 5)

    def cumsum_scan(c: Any, v: Any) -> Any:
        c = c + v
        return c, c * c

    final, ys = lax.scan(cumsum_scan, 0.0, x)
    collatz = lax.while_loop(lambda s: s[0] != 1,
                             lambda s: (jnp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1),
                                        s[1] + 1), (27, 0))[1]
    power = lax.fori_loop(0, 5, lambda i, v: v * x, jnp.ones(5))
    branch = jax.vmap(lambda v: lax.cond(v > 0, jnp.sin, jnp.cos, v))(x)
    sw = jax.vmap(lambda i, v: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], v))(
        jnp.array([0, 1, 2, 1, 0]), x)
    g = jax.grad(lambda v: lax.scan(cumsum_scan, 0.0, v)[1].sum())(x)
    return {"scan_final": final, "scan_ys": ys, "collatz_steps": collatz, "fori": power,
            "cond": branch, "switch": sw, "grad_scan": g,
            "jit_fori": jax.jit(lambda v: lax.fori_loop(0, 3, lambda i, a: jnp.sin(a), v))(x)}


def random_numbers(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    key = jax.random.PRNGKey(1701)
    k1, k2, k3 = jax.random.split(key, 3)
    return {"keys": jax.random.split(k1, 4), "uniform": jax.random.uniform(k2, (3, 2)),
            "normal": jax.random.normal(k3, (5,)),
            "randint": jax.random.randint(k1, (6,), 0, 50),
            "permutation": jax.random.permutation(k2, 8),
            "fold_in": jax.random.fold_in(key, 3),
            "vmapped": jax.vmap(lambda k: jax.random.uniform(k, (2,)))(
                jax.random.split(k3, 3)),
            "bernoulli": jax.random.bernoulli(k1, 0.4, (7,))}


def training_loop(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.3).astype(np.float32)
    params = {"w1": jnp.asarray(rng.standard_normal((4, 8)).astype(np.float32) * 0.5),
              "b1": jnp.zeros(8), "w2": jnp.asarray(rng.standard_normal((8, 1))
                                                    .astype(np.float32) * 0.5),
              "b2": jnp.zeros(1)}

    def loss(p: Any, xb: Any, yb: Any) -> Any:
        h = jax.nn.gelu(xb @ p["w1"] + p["b1"])
        return jnp.mean(((h @ p["w2"] + p["b2"])[:, 0] - yb) ** 2)

    @jax.jit
    def update(p: Any, xb: Any, yb: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(p, xb, yb)
        return jax.tree_util.tree_map(lambda a, g: a - 0.05 * g, p, grads), value

    history = []
    for _epoch in range(15):
        for i in range(0, 64, 16):
            params, value = update(params, x[i:i + 16], y[i:i + 16])
        history.append(value)
    return {"loss_history": jnp.stack(history), "w2": params["w2"], "b1": params["b1"]}


def per_example_gradients(jax: Any, jnp: Any, lax: Any) -> dict[str, Any]:
    w = _data(10, 3)
    xs, ys = _data(11, 8, 3), _data(12, 8)

    def loss(w_: Any, x: Any, y: Any) -> Any:
        return (jnp.tanh(x @ w_) - y) ** 2

    per_ex = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    jitted = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(w, xs, ys)
    norms = jnp.linalg.norm(per_ex, axis=1)
    clipped = per_ex / jnp.maximum(1.0, norms / 0.5)[:, None]
    return {"per_example": per_ex, "jitted": jitted, "clipped_mean": clipped.mean(0),
            "mean_equals_grad": jax.grad(lambda w_: loss(w_, xs, ys).mean())(w)}


PROGRAMS = [autodiff_cookbook, custom_derivatives, pytrees, control_flow, random_numbers,
            training_loop, per_example_gradients]


def run(program: Any, jax: Any, jnp: Any, lax: Any) -> dict[str, dict[str, Any]]:
    """The program's results as ``{name: {"dtype", "shape", "values"}}`` (JSON-ready)."""
    out = {}
    for name, value in program(jax, jnp, lax).items():
        a = np.asarray(value)
        out[name] = {"dtype": str(a.dtype), "shape": list(a.shape),
                     "values": a.ravel().tolist()}
    return out
