"""JAX-face behaviours found by a fourth side-by-side review against JAX 0.10.2: ``gelu``'s
strong result type on Python floats, ``softmax``/``log_softmax`` rows holding an infinity
(JAX keeps the infinite max, so such rows are NaN), ``standardize``'s ``algorithm=`` (JAX's
default ``"fast"`` one-pass variance), ``loggamma`` at x <= 0 (NaN as JAX, whatever the
sign of Gamma), ``ndtri``'s dtype refusals and ``pinv``'s ``rcond`` alias."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from jax_oracle import same_error as _same_error

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")
X32 = pytest.mark.x32


def _close(ours, theirs, *, rtol=1e-12, atol=1e-300, weak=True):
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype
    assert o.shape == t.shape
    np.testing.assert_allclose(o, t, rtol=rtol, atol=atol, equal_nan=True)
    if weak:
        assert getattr(ours, "weak_type", None) == getattr(theirs, "weak_type", None)


_finite = st.floats(-30, 30, allow_nan=False, width=64)


# ------------------------------------------------------------------ 1. gelu's result type

@settings(max_examples=25, deadline=None)
@given(x=_finite, approximate=st.booleans())
def test_gelu_of_python_float_is_strongly_typed_as_jax(x, approximate):
    # (rtol: below -4 the tanh form cancels, and XLA's tanh is not NumPy's in the last bit)
    _close(fg.nn.gelu(x, approximate=approximate), jax.nn.gelu(x, approximate=approximate),
           rtol=1e-8, atol=1e-14)
    ours = fg.grad(lambda t: fg.nn.gelu(t, approximate=approximate))(x)
    theirs = jax.grad(lambda t: jax.nn.gelu(t, approximate=approximate))(x)
    _close(ours, theirs, rtol=1e-8, atol=1e-14, weak=False)


@X32
def test_gelu_float32_array_keeps_dtype():
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    # (near -4 the tanh form cancels: XLA's float32 tanh and NumPy's differ by an ulp)
    for approximate in (True, False):
        _close(fg.nn.gelu(x, approximate=approximate),
               jax.nn.gelu(x, approximate=approximate), rtol=2e-6, atol=1e-6)


# ------------------------------------------------------------------ 2. softmax with infinities

_entries = st.one_of(_finite, st.sampled_from([np.inf, -np.inf]))


@contextlib.contextmanager
def _softmax_rule(custom):
    saved = jax.config.jax_softmax_custom_jvp
    jax.config.update("jax_softmax_custom_jvp", custom)
    fg.config.update("jax_softmax_custom_jvp", custom)
    try:
        yield
    finally:
        jax.config.update("jax_softmax_custom_jvp", saved)
        fg.config.update("jax_softmax_custom_jvp", False)


@settings(max_examples=40, deadline=None)
@given(row=st.lists(_entries, min_size=1, max_size=4),
       mask=st.lists(st.booleans(), min_size=4, max_size=4), custom=st.booleans())
def test_softmax_rows_with_infinities_follow_jax(row, mask, custom):
    with _softmax_rule(custom):
        _check_softmax_rows(np.array(row), np.array(mask[:len(row)]))


def _check_softmax_rows(x, where):
    _close(fg.nn.softmax(x), jax.nn.softmax(x))
    _close(fg.nn.log_softmax(x), jax.nn.log_softmax(x))
    _close(fg.nn.softmax(x, where=where), jax.nn.softmax(x, where=where))
    _close(fg.nn.log_softmax(x, where=where), jax.nn.log_softmax(x, where=where))
    _close(fg.scipy.special.softmax(x), jax.scipy.special.softmax(x))


@settings(max_examples=30, deadline=None)
@given(row=st.lists(_finite, min_size=2, max_size=4),
       mask=st.lists(st.booleans(), min_size=4, max_size=4), custom=st.booleans())
def test_softmax_gradients_with_masks_follow_jax(row, mask, custom):
    with _softmax_rule(custom):
        _check_softmax_grads(np.array(row), np.array(mask[:len(row)]))


def _check_softmax_grads(x, where):
    w = np.arange(1.0, x.size + 1)
    for f_ours, f_theirs in ((fg.nn.softmax, jax.nn.softmax),
                             (fg.nn.log_softmax, jax.nn.log_softmax)):
        ours = fg.grad(lambda t, f=f_ours: fnp.sum(
            fnp.where(where, f(t, where=where), 0.0) * w))(x)
        theirs = jax.grad(lambda t, f=f_theirs: jnp.sum(
            jnp.where(where, f(t, where=where), 0.0) * w))(x)
        _close(ours, theirs, rtol=1e-9, atol=1e-14, weak=False)


# ------------------------------------------------------------------ 3. standardize

_rows = st.integers(2, 5).flatmap(lambda n: st.lists(
    st.floats(-4, 4, allow_nan=False, width=64), min_size=n, max_size=n)).map(np.array)


@settings(max_examples=30, deadline=None)
@given(x=_rows, offset=st.sampled_from([0.0, 3.0, 1e3]),
       algorithm=st.sampled_from([None, "fast", "stable"]))
@example(x=np.array([1.75, 1.75, 1.8125]), offset=1e3, algorithm=None)  # a random run's
def test_standardize_variance_algorithms_follow_jax(x, offset, algorithm):
    x = x + offset
    kw = {} if algorithm is None else {"algorithm": algorithm}
    # (atol: the one-pass variance cancels, and the sums' order is the backend's)
    _close(fg.nn.standardize(x, **kw), jax.nn.standardize(x, **kw), rtol=1e-7, atol=1e-6)
    w = np.arange(x.size, dtype=np.float64)
    ours = fg.grad(lambda t: fnp.sum(fg.nn.standardize(t, **kw) * w))(x)
    theirs = jax.grad(lambda t: jnp.sum(jax.nn.standardize(t, **kw) * w))(x)
    # (the one-pass variance cancels: its relative error is about offset**2 * eps / var,
    # and the derivative carries it, e.g. 2e-5 relative for rows 1000 + [1.75, 1.75,
    # 1.8125], where the sums' order is the backend's)
    theirs = np.asarray(theirs)
    cancel = offset ** 2 * np.finfo(np.float64).eps / max(float(np.var(x)), 1e-300)
    np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-6,
                               atol=1e-9 + 50 * cancel * float(np.abs(theirs).max()))


def test_standardize_constant_rows_and_bad_algorithm():
    x = np.ones((2, 4))
    _close(fg.nn.standardize(x), jax.nn.standardize(x))
    _same_error(lambda J, N: J.nn.standardize(N.ones(3), algorithm="twopass"))


# ------------------------------------------------------------------ 4. loggamma

@settings(max_examples=40, deadline=None)
@given(x=st.one_of(st.floats(-12, 12, allow_nan=False, width=64, allow_subnormal=False),
                   st.sampled_from([0.0, -0.0, -1.0, -1.5, -2.5, np.inf, -np.inf])))
def test_loggamma_is_nan_for_nonpositive_arguments_as_jax(x):
    # (atol: near 1 and 2 the value is tiny, and XLA's lgamma is not libm's)
    _close(fg.scipy.special.loggamma(x), jax.scipy.special.loggamma(x), rtol=1e-12,
           atol=1e-15)
    if np.isfinite(x) and x != 0:
        ours = fg.grad(fg.scipy.special.loggamma)(x)
        theirs = jax.grad(jax.scipy.special.loggamma)(x)
        _close(ours, theirs, rtol=1e-10, weak=False)


# ------------------------------------------------------------------ 5. ndtri's dtypes

@pytest.mark.parametrize("make", [
    lambda N: N.array([1, 2]), lambda N: 1, lambda N: N.array([0.5], N.float16),
    lambda N: [0.3, 0.4], lambda N: True])
def test_ndtri_refuses_what_jax_refuses(make):
    ours, theirs = _same_error(lambda J, N: J.scipy.special.ndtri(make(N)))
    assert ours == theirs


@settings(max_examples=20, deadline=None)
@given(p=st.floats(0, 1, width=64, allow_subnormal=False))  # (XLA flushes subnormals)
def test_ndtri_accepts_floats_as_jax(p):
    _close(fg.scipy.special.ndtri(p), jax.scipy.special.ndtri(p), rtol=1e-9)
    x = np.array([p, 0.5])
    _close(fg.scipy.special.ndtri(x), jax.scipy.special.ndtri(x), rtol=1e-9)


# ------------------------------------------------------------------ 6. pinv's rcond alias

@settings(max_examples=20, deadline=None)
@given(v=st.lists(st.integers(-4, 4), min_size=4, max_size=4),
       rcond=st.sampled_from([1e-3, 0.1, 0.5]))
def test_pinv_rcond_is_rtol(v, rcond):
    a = np.array(v, np.float64).reshape(2, 2) / 2
    _close(fnp.linalg.pinv(a, rcond=rcond), jnp.linalg.pinv(a, rcond=rcond), rtol=1e-10,
           atol=1e-12)
    ours, theirs = _same_error(lambda J, N: N.linalg.pinv(a, 0.1, rcond=rcond))
    assert ours == theirs
