"""``funcgrad.scipy.stats.gaussian_kde`` against ``jax.scipy.stats.gaussian_kde`` (0.10.2)
in float64 on drawn data: densities, log densities, integrals, resampling bits, bandwidth
rules, weights, jit and grad, errors; gradients also against finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.scipy.stats import gaussian_kde

jax = pytest.importorskip("jax")
jax_stats = pytest.importorskip("jax.scipy.stats")

pytestmark = pytest.mark.usefixtures("jax_x64")


def _close(a, b, rtol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-13)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), d=st.integers(1, 3), n=st.integers(5, 30),
       bw=st.sampled_from([None, "scott", "silverman", 0.4]), weighted=st.booleans())
def test_estimates_match_jax(seed, d, n, bw, weighted):
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(d, n)) * rng.uniform(0.5, 2.0, size=(d, 1))
    w = rng.uniform(0.2, 2.0, n) if weighted else None
    pts = rng.normal(size=(d, 4))
    ours, theirs = gaussian_kde(data, bw, w), jax_stats.gaussian_kde(data, bw, w)
    _close(ours.neff, theirs.neff)
    _close(ours.covariance, theirs.covariance)
    _close(ours(pts), theirs(pts))
    _close(ours.logpdf(pts), theirs.logpdf(pts))
    _close(ours.integrate_gaussian(np.zeros(d), np.eye(d)),
           theirs.integrate_gaussian(np.zeros(d), np.eye(d)))
    other = data[:, : max(2, n // 3)] + 0.5
    _close(ours.integrate_kde(gaussian_kde(other)),
           theirs.integrate_kde(jax_stats.gaussian_kde(other)))
    if d == 1:
        _close(ours.integrate_box_1d(-0.5, 1.0), theirs.integrate_box_1d(-0.5, 1.0))
    key = int(rng.integers(0, 2**31))
    _close(ours.resample(fg.random.PRNGKey(key), (3,)),
           theirs.resample(jax.random.PRNGKey(key), (3,)), rtol=1e-9)
    _close(fg.jit(lambda k: k.pdf(pts))(ours), jax.jit(lambda k: k.pdf(pts))(theirs))
    _close(fg.grad(lambda x: gaussian_kde(data, bw, w).logpdf(x).sum())(pts),
           jax.grad(lambda x: jax_stats.gaussian_kde(data, bw, w).logpdf(x).sum())(pts),
           rtol=1e-9)


def test_gradients_in_the_data_against_finite_differences():
    data = np.array([[0.3, -1.2, 0.8, 2.0, -0.4], [1.0, 0.2, -0.6, 0.1, 0.9]])
    pts = np.array([[0.1, -0.5], [0.4, 0.3]])
    fg.test_util.check_grads(lambda x: gaussian_kde(x).logpdf(pts), (data,), order=1,
                             modes=["rev"], atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda K: K(np.array([1.0])),
    lambda K: K(np.ones((2, 5))).integrate_box_1d(0.0, 1.0),
    lambda K: K(np.arange(5.0), bw_method="wide"),
    lambda K: K(np.arange(5.0) + 1j),
    lambda K: K(np.arange(5.0), weights=np.ones(4)),
    lambda K: K(np.arange(5.0)).set_bandwidth(0.3),
    lambda K: K(np.arange(6.0).reshape(2, 3))(np.ones((3, 2))),
])
def test_errors_as_jax(call):
    with pytest.raises(Exception) as theirs:
        call(jax_stats.gaussian_kde)
    with pytest.raises(type(theirs.value)) as ours:
        call(gaussian_kde)
    assert str(ours.value) == str(theirs.value)
