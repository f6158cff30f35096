"""``symbolic_zeros=True`` on custom_jvp and custom_vjp rules: which tangents and
cotangents a rule sees as ``SymbolicZero``, which fwd arguments are ``perturbed``, and the
helpers ``zero_from_primal`` / ``custom_vjp_primal_tree_values``. Each program runs on
funcgrad and, where installed, on jax 0.10.2; derivatives are also checked by finite
differences in float64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import custom_derivatives as fcd


def _kind(t, cd):
    if type(t) is cd.SymbolicZero:
        return f"zero{tuple(t.shape)}"
    return "value"


def _jvp_program(jax, cd, x, y, how):
    """A custom_jvp product whose rule skips a symbolic zero; returns (seen, result)."""
    jnp = jax.numpy
    seen = []

    @jax.custom_jvp
    def f(a, b):
        return jnp.sin(a) * b

    def f_jvp(p, t):
        a, b = p
        ta, tb = t
        seen.append((_kind(ta, cd), _kind(tb, cd)))
        out = jnp.zeros_like(a * b)
        if type(ta) is not cd.SymbolicZero:
            out = out + jnp.cos(a) * ta * b
        if type(tb) is not cd.SymbolicZero:
            out = out + jnp.sin(a) * tb
        return f(a, b), out

    f.defjvp(f_jvp, symbolic_zeros=True)
    x, y = jnp.asarray(x), jnp.asarray(y)
    if how == "grad_x":
        r = jax.grad(lambda a: f(a, y).sum())(x)
    elif how == "grad_y":
        r = jax.grad(lambda b: f(x, b).sum())(y)
    elif how == "grad_both":
        r = jax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y)
    elif how == "jvp_closed":
        r = jax.jvp(lambda a: f(a, y), (x,), (jnp.ones_like(x),))
    elif how == "jit_grad":
        r = jax.jit(jax.grad(lambda a: f(a, y).sum()))(x)
    elif how == "vmap_grad":
        r = jax.vmap(jax.grad(lambda a, b: f(a, b).sum()))(x[:, None], y[:, None])
    elif how == "jacfwd":
        r = jax.jacfwd(lambda b: f(x, b))(y)
    else:
        raise AssertionError(how)
    return seen, jax.tree_util.tree_map(np.asarray, r)


HOWS = ["grad_x", "grad_y", "grad_both", "jvp_closed", "jit_grad", "vmap_grad", "jacfwd"]

values = st.lists(st.floats(-3, 3, allow_subnormal=False), min_size=1, max_size=4)


@settings(max_examples=10, deadline=None)
@given(values, st.data())
def test_custom_jvp_rule_sees_symbolic_zeros_and_is_right(xs, data):
    ys = data.draw(st.lists(st.floats(-3, 3, allow_subnormal=False), min_size=len(xs),
                            max_size=len(xs)))
    how = data.draw(st.sampled_from(HOWS))
    # (tests run in 64-bit mode unless marked x32)
    x, y = np.array(xs), np.array(ys)
    seen, r = _jvp_program(fg, fcd, x, y, how)
    expect_grad = {"grad_x": np.cos(x) * y, "grad_y": np.sin(x)}
    if how in expect_grad:
        np.testing.assert_allclose(r, expect_grad[how], rtol=1e-12, atol=1e-12)
    if how == "grad_y":
        eps = 1e-6
        fd = [(np.sum(np.sin(x) * (y + eps * e)) - np.sum(np.sin(x) * (y - eps * e)))
              / (2 * eps) for e in np.eye(len(y))]
        np.testing.assert_allclose(r, fd, rtol=1e-6, atol=1e-6)
    assert all(s in {("value", f"zero{np.shape(x)}"), (f"zero{np.shape(x)}", "value"),
                     ("value", "value"), ("value", "zero(1,)")} for s in seen)


@pytest.mark.x32
@pytest.mark.parametrize("how", HOWS)
def test_custom_jvp_matches_jax(how):
    jax = pytest.importorskip("jax")
    import jax.custom_derivatives as jcd

    x, y = np.array([0.5, -1.25, 2.0], np.float32), np.array([3.0, 0.75, -2.0], np.float32)
    s1, r1 = _jvp_program(fg, fcd, x, y, how)
    s2, r2 = _jvp_program(jax, jcd, x, y, how)
    assert s1 == s2
    # (float32 sin/cos may differ from XLA's in the last bit)
    fg.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6), r1, r2)


def _vjp_program(jax, cd, x, y, how):
    jnp = jax.numpy
    seen = []

    @jax.custom_vjp
    def h(a, b):
        return a * b, a + b

    def h_fwd(a, b):
        seen.append(("fwd", type(a).__name__, a.perturbed, b.perturbed))
        a, b = cd.custom_vjp_primal_tree_values((a, b))
        return h(a, b), (a, b)

    def h_bwd(res, cts):
        a, b = res
        c1, c2 = cts
        seen.append(("bwd", _kind(c1, cd), _kind(c2, cd)))
        g1 = jnp.zeros_like(a) if type(c1) is cd.SymbolicZero else c1
        g2 = jnp.zeros_like(a) if type(c2) is cd.SymbolicZero else c2
        return g1 * b + g2, g1 * a + g2

    h.defvjp(h_fwd, h_bwd, symbolic_zeros=True)
    x, y = jnp.asarray(x), jnp.asarray(y)
    if how == "first_out":
        r = jax.grad(lambda a: h(a, y)[0].sum())(x)
    elif how == "second_out_both":
        r = jax.grad(lambda a, b: h(a, b)[1].sum(), argnums=(0, 1))(x, y)
    elif how == "jit":
        r = jax.jit(jax.grad(lambda a: (h(a, y)[1] * 2).sum()))(x)
    elif how == "vmap":
        r = jax.vmap(jax.grad(lambda a, b: h(a, b)[0].sum()))(x[:, None], y[:, None])
    elif how == "primal":
        r = h(x, y)
    else:
        raise AssertionError(how)
    return seen, jax.tree_util.tree_map(np.asarray, r)


@pytest.mark.x32
@pytest.mark.parametrize("how", ["first_out", "second_out_both", "jit", "vmap", "primal"])
def test_custom_vjp_symbolic_zeros(how):
    x, y = np.array([0.5, -1.25, 2.0], np.float32), np.array([3.0, 0.75, -2.0], np.float32)
    seen, r = _vjp_program(fg, fcd, x, y, how)
    if how == "first_out":
        assert seen == [("fwd", "CustomVJPPrimal", True, False), ("bwd", "value", "zero(3,)")]
        np.testing.assert_array_equal(r, y)
    if how == "primal":
        assert seen == []
    try:
        jax = pytest.importorskip("jax")
    except pytest.skip.Exception:
        return
    import jax.custom_derivatives as jcd

    s2, r2 = _vjp_program(jax, jcd, x, y, how)
    assert seen == s2
    fg.tree_util.tree_map(np.testing.assert_array_equal, r, r2)


def test_helpers_and_refusals():
    z = fcd.SymbolicZero.from_primal_value(fnp.arange(3))
    assert repr(z) == "SymbolicZero" and z.shape == (3,) and z.dtype == fg.dtypes.float0
    assert fcd.SymbolicZero.from_primal_value(fnp.ones((2, 1), fnp.float32)).dtype == np.float32
    zs = fcd.zero_from_primal({"a": fnp.ones(2), "b": 3}, symbolic_zeros=True)
    assert {k: type(v).__name__ for k, v in zs.items()} == {"a": "SymbolicZero",
                                                           "b": "SymbolicZero"}
    np.testing.assert_array_equal(fcd.zero_from_primal(fnp.ones(2)), [0.0, 0.0])
    assert fcd.zero_from_primal(fnp.arange(3)).dtype == fg.dtypes.float0
    with pytest.raises(TypeError, match="unexpected leaf type"):
        fcd.custom_vjp_primal_tree_values((1.0,))

    @fg.custom_jvp
    def g(x):
        return fnp.floor(x)

    g.defjvp(lambda p, t: (g(p[0]), fcd.SymbolicZero.from_primal_value(p[0])),
             symbolic_zeros=True)
    with pytest.raises(TypeError, match="'SymbolicZero' .* is not a valid JAX type"):
        fg.grad(lambda x: g(x).sum())(fnp.ones(2))
