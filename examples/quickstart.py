"""A tour of funcgrad: numpy code, its jaxpr, and its derivatives.

Run: python examples/quickstart.py
"""

import numpy as np

import funcgrad as fg
import funcgrad.numpy as fnp


def loss(w, x, y):
    """Mean squared error of a tiny two-layer network."""
    h = fnp.tanh(x @ w["w1"] + w["b1"])
    pred = h @ w["w2"]
    return fnp.mean((pred - y) ** 2)


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 3))
    y = np.sin(x.sum(axis=1, keepdims=True))
    w = {"w1": 0.5 * rng.standard_normal((3, 8)), "b1": np.zeros(8),
         "w2": 0.5 * rng.standard_normal((8, 1))}

    print("The program funcgrad traces (a jaxpr):")
    print(fg.make_jaxpr(lambda a, b: fnp.sum((a + b) @ a.T))(np.ones((2, 2), np.float32),
                                                            np.ones((2, 2), np.float32)))

    value_and_grad = fg.value_and_grad(loss)
    for step in range(201):
        value, g = value_and_grad(w, x, y)
        w = fg.tree_util.tree_map(lambda p, d: p - 0.1 * d, w, g)
        if step % 50 == 0:
            print(f"step {step:3d}  loss {float(value):.5f}")

    f = lambda t: fnp.sin(t) * t ** 2  # noqa: E731
    t = np.array(0.7)
    print("d/dt   sin(t) t^2 at 0.7:", float(fg.grad(f)(t)))
    print("d2/dt2 sin(t) t^2 at 0.7:", float(fg.grad(fg.grad(f))(t)))
    print("Hessian of sum(x^3):\n", fg.hessian(lambda v: fnp.sum(v ** 3))(np.array([1.0, 2.0])))
    fg.testing.check_grads(loss, (w, x, y), order=2)
    print("check_grads: first and second derivatives agree with finite differences")


if __name__ == "__main__":
    main()
