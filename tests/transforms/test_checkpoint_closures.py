"""``checkpoint``/``remat`` of a function that closes over a value being differentiated
(``checkpoint(partial(cell, params))`` inside a loop, the usual way to remat an RNN
step): the closed-over value is an input of the checkpoint, so its gradient flows, eagerly
and under ``jit``, with every saving policy; compared with JAX 0.10.2 on drawn weights."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.ad_checkpoint
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax_ad_checkpoint = pytest.importorskip("jax.ad_checkpoint")

pytestmark = pytest.mark.usefixtures("jax_x64")

LIBS = {"funcgrad": (fg, fnp), "jax": (jax, jnp)}

_weights = hnp.arrays(np.float64, (3, 3), elements=st.floats(-1, 1, allow_subnormal=False))


def _policy(J, name):
    if name is None:
        return None
    if name == "names":
        return J.checkpoint_policies.save_only_these_names("pre")
    return getattr(J.checkpoint_policies, name)


def _losses(lib, policy_name):
    J, np_ = LIBS[lib]
    policy = _policy(J, policy_name)

    def cell(W, h, x):
        name = (jax_ad_checkpoint if J is jax else funcgrad.ad_checkpoint).checkpoint_name
        pre = name(h @ W + x, "pre")
        return np_.tanh(pre) * np_.sin(h)

    def scan_loss(W):
        step = J.checkpoint(functools.partial(cell, W), policy=policy)
        h, _ = J.lax.scan(lambda h, x: (step(h, x), None), np_.ones(3) * 0.5,
                          np_.linspace(-1.0, 1.0, 12).reshape(4, 3))
        return (h ** 2).sum()

    def fori_loss(W):
        f = J.checkpoint(lambda h: np_.tanh(h @ W), policy=policy)
        return J.lax.fori_loop(0, 3, lambda i, h: f(h), np_.ones(3)).sum()

    def cond_loss(W):
        f = J.checkpoint(lambda h: np_.sin(h @ W).sum(), policy=policy)
        return J.lax.cond(W[0, 0] > 0, f, lambda h: (h * W[1]).sum(), np_.ones(3))

    def plain_loss(W):
        return J.checkpoint(lambda h: (np_.exp(h @ W) * W[0]).sum(), policy=policy)(
            np_.arange(3.0))

    return {"scan": scan_loss, "fori": fori_loss, "cond": cond_loss, "plain": plain_loss}


@settings(max_examples=8, deadline=None)
@given(W=_weights,
       policy=st.sampled_from([None, "nothing_saveable", "dots_saveable",
                               "dots_with_no_batch_dims_saveable", "names"]),
       program=st.sampled_from(["scan", "fori", "cond", "plain"]))
def test_gradients_through_a_closure_match_jax(W, policy, program):
    ours_f = _losses("funcgrad", policy)[program]
    theirs_f = _losses("jax", policy)[program]
    want = np.asarray(jax.grad(theirs_f)(W))
    for got in (fg.grad(ours_f)(W), fg.jit(fg.grad(ours_f))(W)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-12)


@settings(max_examples=8, deadline=None)
@given(W=_weights)
def test_vmap_and_second_order_through_a_closure_match_jax(W):
    def per_scale(J, np_):
        def g(W, s):
            return J.checkpoint(lambda h: np_.sin(h @ W * s).sum())(np_.ones(3))
        return J.vmap(J.grad(g), (None, 0))(W, np_.array([0.5, -1.0]))

    np.testing.assert_allclose(np.asarray(per_scale(fg, fnp)), np.asarray(per_scale(jax, jnp)),
                               rtol=1e-10, atol=1e-12)

    def second(J, np_):
        f = lambda W: J.checkpoint(lambda h: np_.tanh(h @ W).sum())(np_.ones(3))  # noqa: E731
        return J.hessian(f)(W)

    np.testing.assert_allclose(np.asarray(second(fg, fnp)), np.asarray(second(jax, jnp)),
                               rtol=1e-9, atol=1e-12)


def test_finite_differences_of_a_rematerialised_scan():
    W = np.array([[0.3, -0.2, 0.1], [0.05, 0.4, -0.3], [0.2, 0.1, 0.25]])
    fg.test_util.check_grads(_losses("funcgrad", None)["scan"], (W,), order=2,
                             modes=["fwd", "rev"])
