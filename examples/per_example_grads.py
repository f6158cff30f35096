"""Per-example gradients with vmap(grad(loss)): one vectorised program, no Python loop.

A small two-layer MLP (tanh hidden layer, softmax cross-entropy) on synthetic
data. ``jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))`` maps the gradient over
the examples while the parameters are shared (``None``). The result is checked
against a plain Python loop of ``jax.grad`` over the examples, and the norms of
the per-example gradients (what DP-SGD clips, or what importance sampling
weighs by) are summarised.

Run: python examples/per_example_grads.py
"""

import numpy as np

import funcgrad as jax
import funcgrad.numpy as jnp

# The checks below compare to 1e-10: float64, as JAX does with this switch.
jax.config.update("jax_enable_x64", True)

N_EXAMPLES, N_FEATURES, N_HIDDEN, N_CLASSES = 64, 10, 16, 3


def init_params(rng):
    return {
        "w1": rng.standard_normal((N_FEATURES, N_HIDDEN)) / np.sqrt(N_FEATURES),
        "b1": np.zeros(N_HIDDEN),
        "w2": rng.standard_normal((N_HIDDEN, N_CLASSES)) / np.sqrt(N_HIDDEN),
        "b2": np.zeros(N_CLASSES),
    }


def loss(params, x, y):
    """Cross-entropy of ONE example: x has shape (features,), y is a one-hot (classes,)."""
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return jax.nn.logsumexp(logits) - jnp.sum(logits * y)


def flat_norms(grads):
    """Euclidean norm per example of all parameter gradients together."""
    leaves = jax.tree_util.tree_leaves(grads)
    squares = sum(np.sum(np.reshape(g, (g.shape[0], -1)) ** 2, axis=1) for g in leaves)
    return np.sqrt(squares)


def main() -> None:
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x = rng.standard_normal((N_EXAMPLES, N_FEATURES))
    labels = rng.integers(0, N_CLASSES, N_EXAMPLES)
    y = np.eye(N_CLASSES)[labels]

    per_example_grad = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    grads = per_example_grad(params, x, y)
    for name, g in sorted(grads.items()):
        print(f"per-example gradient of {name}: shape {g.shape}")

    # The same thing, one example at a time.
    loop = [jax.grad(loss)(params, x[i], y[i]) for i in range(N_EXAMPLES)]
    for name in params:
        np.testing.assert_allclose(grads[name], np.stack([g[name] for g in loop]),
                                   rtol=1e-10, atol=1e-12)

    # The per-example gradients sum to the gradient of the summed loss.
    total = jax.grad(lambda p: jnp.sum(jax.vmap(loss, in_axes=(None, 0, 0))(p, x, y)))(params)
    for name in params:
        np.testing.assert_allclose(grads[name].sum(axis=0), total[name], rtol=1e-10,
                                   atol=1e-12)

    norms = flat_norms(grads)
    loop_norms = flat_norms({k: np.stack([g[k] for g in loop]) for k in params})
    np.testing.assert_allclose(norms, loop_norms, rtol=1e-10)
    print(f"per-example gradient norms over {N_EXAMPLES} examples:")
    print(f"  min {norms.min():.4f}  median {np.median(norms):.4f}  mean {norms.mean():.4f}"
          f"  max {norms.max():.4f}")
    print(f"  largest: example {int(norms.argmax())} (label {int(labels[norms.argmax()])})")
    clip = np.median(norms)
    print(f"  {int((norms > clip).sum())} of {N_EXAMPLES} examples would be clipped at the "
          f"median norm {clip:.4f}")
    print("vmap(grad(loss)) matches the per-example loop")


if __name__ == "__main__":
    main()
