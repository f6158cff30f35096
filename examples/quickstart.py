"""A tour of funcgrad: JAX code run unchanged, its jaxpr, its derivatives, and the same
engine behind the PyTorch face.

Run: python examples/quickstart.py
"""

import numpy as np

import funcgrad as jax
import funcgrad.numpy as jnp
import funcgrad.torch as torch


def loss(w, x, y):
    """Mean squared error of a tiny two-layer network."""
    h = jnp.tanh(x @ w["w1"] + w["b1"])
    pred = h @ w["w2"]
    return jnp.mean((pred - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((32, 3)), dtype=jnp.float32)
    y = jnp.sin(x.sum(axis=1, keepdims=True))
    w = {"w1": 0.5 * jnp.asarray(rng.standard_normal((3, 8)), dtype=jnp.float32),
         "b1": jnp.zeros(8),
         "w2": 0.5 * jnp.asarray(rng.standard_normal((8, 1)), dtype=jnp.float32)}

    print("The program funcgrad traces (a jaxpr):")
    print(jax.make_jaxpr(lambda a, b: jnp.sum((a + b) @ a.T))(jnp.ones((2, 2)), jnp.ones((2, 2))))

    step_fn = jax.jit(jax.value_and_grad(loss))
    for step in range(201):
        value, g = step_fn(w, x, y)
        w = jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, w, g)
        if step % 50 == 0:
            print(f"step {step:3d}  loss {float(value):.5f}")

    def f(t):
        return jnp.sin(t) * t ** 2

    print("d/dt   sin(t) t^2 at 0.7:", jax.grad(f)(0.7))
    print("d2/dt2 sin(t) t^2 at 0.7:", jax.grad(jax.grad(f))(0.7))
    print("Hessian of sum(x^3):\n", jax.hessian(lambda v: jnp.sum(v ** 3))(jnp.array([1.0, 2.0])))
    print("per-example gradients:", jax.vmap(jax.grad(f))(jnp.arange(3.0)))
    jax.config.update("jax_enable_x64", True)
    w64 = jax.tree_util.tree_map(lambda p: jnp.asarray(p, dtype=jnp.float64), w)
    jax.test_util.check_grads(loss, (w64, x.astype(jnp.float64), y.astype(jnp.float64)), order=2)
    jax.config.update("jax_enable_x64", False)
    print("check_grads: first and second derivatives agree with finite differences")

    print("The same engine behind the PyTorch face:")
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = (a @ a.T).relu().mean()
    print(out)
    out.backward()
    print(a.grad)


if __name__ == "__main__":
    main()
