"""Smaller names of the JAX face: linear_transpose, custom_gradient, named_call,
named_scope and the process/device queries, against JAX where installed."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp


def _linear(m):  # type: ignore[no-untyped-def]
    return lambda x, y: (m.sum(x * 2.0, axis=0) + y, x.T)


def test_linear_transpose_is_the_transpose() -> None:
    a = np.arange(6.0).reshape(2, 3)
    f_t = fg.linear_transpose(_linear(fnp), fnp.ones((2, 3)), fnp.ones(3))
    ct = (fnp.array([1.0, -2.0, 0.5]), fnp.asarray(a.T))
    gx, gy = f_t(ct)
    # <f(x, y), ct> = <x, gx> + <y, gy> for any x, y (linearity).
    x, y = np.random.default_rng(0).standard_normal((2, 3)), np.ones(3)
    fx = _linear(np)(x, y)
    lhs = np.sum(fx[0] * np.asarray(ct[0])) + np.sum(fx[1] * np.asarray(ct[1]))
    rhs = np.sum(x * np.asarray(gx)) + np.sum(y * np.asarray(gy))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


def test_custom_gradient_uses_the_given_vjp() -> None:
    @fg.custom_gradient
    def f(x, y):  # type: ignore[no-untyped-def]
        return x * y, lambda g: (g * y, fnp.sum(g * x) * 10.0 if fnp.ndim(x) else g * x * 10.0)

    assert float(f(2.0, 3.0)) == 6.0
    gx, gy = fg.grad(f, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 20.0)
    g = fg.jit(fg.grad(lambda v: fnp.sum(f(v, 2.0))))(fnp.ones(3))
    np.testing.assert_array_equal(np.asarray(g), [2.0, 2.0, 2.0])

    @fg.custom_gradient
    def bad(x, y):  # type: ignore[no-untyped-def]
        return x * y, lambda g: (g * y, g * x)  # y's cotangent has x's shape, not y's

    with pytest.raises(ValueError, match="must produce an output with the same type"):
        fg.grad(lambda v: fnp.sum(bad(v, 2.0)))(fnp.ones(3))  # refused, as by JAX


def test_names_and_processes() -> None:
    assert fg.named_call(lambda x: x + 1, name="inc")(1) == 2
    with fg.named_scope("block"):
        assert float(fnp.sum(fnp.ones(2))) == 2.0
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        fg.named_scope(3)  # type: ignore[arg-type]
    assert fg.process_indices() == [0] and fg.host_ids() == [0]
    assert fg.host_count() == 1 and fg.host_id() == 0
    assert fg.local_devices() == fg.devices()


def test_against_jax() -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp  # noqa: PLC0415

    from funcgrad.testing import jax_x64_mode  # noqa: PLC0415

    with jax_x64_mode(jax, True):
        ct = (np.array([1.0, -2.0, 0.5]), np.arange(6.0).reshape(3, 2))
        want = jax.linear_transpose(_linear(jnp), jnp.ones((2, 3)), jnp.ones(3))(ct)
        got = fg.linear_transpose(_linear(fnp), fnp.ones((2, 3)), fnp.ones(3))(ct)
        for w, g in zip(want, got):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-15)

        def body(m):  # type: ignore[no-untyped-def]
            @m.custom_gradient
            def f(x):  # type: ignore[no-untyped-def]
                return m.numpy.sin(x), lambda g: (g * 3.0,)
            return m.grad(f)(0.4), f(0.4)

        for w, g in zip(body(jax), body(fg)):
            assert float(g) == pytest.approx(float(w), rel=1e-15)
        assert fg.process_indices() == jax.process_indices()
