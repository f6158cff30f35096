"""``funcgrad.experimental.ode.odeint`` against ``jax.experimental.ode.odeint`` (0.10.2) in
float64: solutions, adjoint gradients to the initial state, the times, the arguments and
closed-over values, pytree states, ``jit``; gradients also against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.experimental.ode import odeint
from funcgrad.flatten_util import ravel_pytree

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax_ode = pytest.importorskip("jax.experimental.ode")
jax_flatten = pytest.importorskip("jax.flatten_util")

pytestmark = pytest.mark.usefixtures("jax_x64")

LIBS = {"funcgrad": (fg, fnp, odeint), "jax": (jax, jnp, jax_ode.odeint)}


def _pendulum(lib):
    J, np_, solve = LIBS[lib]

    def dyn(y, t, k, damping):
        return np_.stack([y[1], -k * np_.sin(y[0]) - damping * y[1] + 0.3 * np_.cos(t)])

    def loss(y0, k, ts):
        ys = solve(dyn, y0, ts, k, 0.1, rtol=1e-9, atol=1e-9)
        return (ys ** 2 * np_.arange(1.0, 1.0 + ys.shape[0])[:, None]).sum()

    return J, solve, dyn, loss


_floats = st.floats(-1.5, 1.5, allow_subnormal=False)


@settings(max_examples=4, deadline=None)
@given(y=st.tuples(_floats, _floats), k=st.floats(0.5, 3.0), end=st.floats(0.5, 4.0),
       n=st.integers(2, 5))
def test_solution_and_adjoint_gradients_match_jax(y, k, end, n):
    y0, ts = np.array(y), np.linspace(0.0, end, n)
    out = {}
    for lib in LIBS:
        J, solve, dyn, loss = _pendulum(lib)
        ys = solve(dyn, y0, ts, k, 0.1, rtol=1e-9, atol=1e-9)
        out[lib] = (ys, *J.grad(loss, (0, 1, 2))(y0, k, ts))
    for ours, theirs in zip(out["funcgrad"], out["jax"]):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-8,
                                   atol=1e-10)
    jitted = fg.jit(fg.grad(_pendulum("funcgrad")[3], (0, 1, 2)))(y0, k, ts)
    for ours, theirs in zip(jitted, out["jax"][1:]):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-8,
                                   atol=1e-10)


def test_closed_over_values_and_pytree_states_match_jax():
    res = {}
    for lib, (J, np_, solve) in LIBS.items():
        w = np_.array(0.7)
        ts = np_.array([0.0, 0.5, 2.0])
        closed = J.grad(lambda w, solve=solve, ts=ts: solve(
            lambda y, t: -w * y * (1 + t), 1.0, ts)[-1])(w)
        tree = solve(lambda s, t: {"a": -s["b"][0], "b": (s["a"], 0.5 * s["b"][1])},
                     {"a": np_.ones(2), "b": (np_.zeros(2), np_.array(1.0))}, ts)
        res[lib] = [closed, *J.tree_util.tree_leaves(tree)]
    for ours, theirs in zip(res["funcgrad"], res["jax"]):
        assert np.asarray(ours).shape == np.asarray(theirs).shape
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-9,
                                   atol=1e-12)


def test_gradients_against_finite_differences():
    _, _, _, loss = _pendulum("funcgrad")
    fg.test_util.check_grads(lambda y0, k: loss(y0, k, np.linspace(0.0, 1.5, 3)),
                             (np.array([0.4, -0.2]), 1.3), order=1, modes=["rev"],
                             atol=1e-5, rtol=1e-5)


def test_mxstep_and_hmax_limit_the_steps_as_jax():
    for kw in ({"mxstep": 3}, {"hmax": 0.05}):
        got = odeint(lambda y, t: y * fnp.cos(t), 1.0, np.array([0.0, 3.0]), **kw)
        want = jax_ode.odeint(lambda y, t: y * jnp.cos(t), 1.0, jnp.array([0.0, 3.0]), **kw)
        # (Stopped early, the result is extrapolated: rounding grows to 1e-10.)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-8)


@pytest.mark.parametrize("call", [
    lambda solve, np_: solve(lambda y, t, a: y, 1.0, np_.array([0.0, 1.0]), "not an array"),
    lambda solve, np_: solve(lambda y, t: y, 1.0, np_.array([0, 1])),
])
def test_errors_as_jax(call):
    with pytest.raises(TypeError) as theirs:
        call(jax_ode.odeint, jnp)
    with pytest.raises(TypeError) as ours:
        call(odeint, fnp)
    assert str(ours.value) == str(theirs.value)


def test_ravel_pytree_as_jax():
    tree = {"w": np.ones((2, 3), np.float32), "b": (np.arange(3, dtype=np.int32), 2.0)}
    flat, unravel = ravel_pytree(tree)
    jflat, junravel = jax_flatten.ravel_pytree(tree)
    assert flat.dtype == jflat.dtype and flat.tolist() == np.asarray(jflat).tolist()
    back, jback = unravel(flat * 2), junravel(jflat * 2)
    for a, b in zip(fg.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jback)):
        assert a.dtype == b.dtype and np.asarray(a).tolist() == np.asarray(b).tolist()
    with pytest.raises(TypeError, match="unravel function given array of dtype float16"):
        unravel(flat.astype(np.float16))
    empty, _ = ravel_pytree([])
    assert empty.shape == (0,) and empty.dtype == np.float32
    g = fg.grad(lambda v: (unravel(v)["w"] ** 2).sum())(flat)
    jg = jax.grad(lambda v: (junravel(v)["w"] ** 2).sum())(jflat)
    assert g.tolist() == np.asarray(jg).tolist()
