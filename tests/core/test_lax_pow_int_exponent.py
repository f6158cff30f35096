"""``lax.pow`` with an integer exponent beside a float or complex base, compared with
JAX 0.10.2: values, dtypes, weak types, first and second derivatives, jit and vmap, and
JAX's TypeErrors for the dtypes it refuses."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from tests.support.jax_oracle import same_error

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")

# Bases away from 0 (where the exponent may be negative) and normal numbers only: XLA
# flushes subnormals to zero.
_BASE = st.one_of(st.floats(-3, -0.25, allow_subnormal=False),
                  st.floats(0.25, 3, allow_subnormal=False))


def _cases(dtype):
    shape = st.shared(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4), key=dtype)
    return (hnp.arrays(dtype, shape, elements=_BASE),
            hnp.arrays(np.int32, shape, elements=st.integers(-4, 5)))


@settings(max_examples=12, deadline=None)
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_values_and_derivatives_match_jax(data, dtype):
    xs, ys = _cases(dtype)
    x, y = data.draw(xs), data.draw(ys)
    ours, theirs = fg.lax.pow(x, y), jax.lax.pow(x, y)
    assert ours.dtype == theirs.dtype == dtype
    tol = {"rtol": 2e-6} if dtype == np.float32 else {"rtol": 1e-13}
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), **tol)
    np.testing.assert_allclose(np.asarray(fg.jit(fg.lax.pow)(x, y)), np.asarray(theirs), **tol)

    def loss(lax):
        return lambda a: (lax.pow(a, y) * np.linspace(0.5, 1.5, y.size).reshape(y.shape)).sum()

    np.testing.assert_allclose(np.asarray(fg.grad(loss(fg.lax))(x)),
                               np.asarray(jax.grad(loss(jax.lax))(x)), **tol)
    hvp = lambda g, lax: g(lambda a: g(loss(lax))(a).sum())(x)  # noqa: E731
    np.testing.assert_allclose(np.asarray(hvp(fg.grad, fg.lax)),
                               np.asarray(hvp(jax.grad, jax.lax)), rtol=tol["rtol"] * 10)
    t = np.ones_like(x)
    _, ours_t = fg.jvp(lambda a: fg.lax.pow(a, y), (x,), (t,))
    _, theirs_t = jax.jvp(lambda a: jax.lax.pow(a, y), (x,), (t,))
    np.testing.assert_allclose(np.asarray(ours_t), np.asarray(theirs_t), **tol)


def test_finite_differences_in_float64():
    x = np.array([0.7, -1.3, 2.1, -0.4])
    y = np.array([3, -2, 0, 1], np.int32)
    fg.test_util.check_grads(lambda a: fg.lax.pow(a, y), (x,), order=2, modes=["fwd", "rev"])


def test_zero_exponent_gives_one_and_a_zero_derivative_at_zero():
    for lib in (fg, jax):
        assert float(lib.lax.pow(np.float32(np.nan), np.int32(0))) == 1.0
        assert float(lib.grad(lambda a, lib=lib: lib.lax.pow(a, 0))(0.0)) == 0.0
        assert float(lib.grad(lambda a, lib=lib: lib.lax.pow(a, 1))(0.0)) == 1.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex64])
def test_dtypes_weak_types_and_batching_follow_jax(dtype):
    x = np.asarray([1.5, -2.0, 0.5], dtype)
    y = np.array([2, 3, -1], np.int8)
    ours, theirs = fg.lax.pow(x, y), jax.lax.pow(x, y)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-3)
    vm = fg.vmap(fg.lax.pow)(x, y)
    np.testing.assert_allclose(np.asarray(vm), np.asarray(theirs), rtol=1e-3)
    # A Python float base stays weakly typed; a Python int exponent stays an integer.
    assert fg.lax.pow(2.0, 3).weak_type == jax.lax.pow(2.0, 3).weak_type
    # (XLA's complex pow goes through exp(y log x): an imaginary part of rounding size.)
    np.testing.assert_allclose(np.asarray(fg.lax.pow(x, 2)), np.asarray(jax.lax.pow(x, 2)),
                               rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("args", [
    (np.int32(2), np.int32(3)),
    (2, 2.0),
    (np.float32(2), np.float16(1)),
    (np.float32(2), np.complex64(1)),
])
def test_refused_dtypes_raise_jax_type_error(args):
    ours, theirs = same_error(lambda lib, np_, a, b: lib.lax.pow(a, b), *args)
    assert ours == theirs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_half_exponent_at_signed_zeros_and_infinities_as_xla(dtype):
    # NumPy computes x ** 0.5 as sqrt(x); XLA's pow (C's) gives +0 at -0 and +inf at -inf.
    x = np.array([-0.0, 0.0, -np.inf, np.inf, -1.0, 4.0], dtype)
    want = np.asarray(jnp.asarray(x) ** 0.5)
    for got in (fnp.asarray(x) ** 0.5, fnp.power(x, np.full_like(x, 0.5)),
                fg.lax.pow(x, dtype(0.5)), fg.jit(lambda a: a ** 0.5)(x),
                fg.jit(lambda a: (a * 1.0) ** 0.5 * 1.0)(x)):
        got = np.asarray(got)
        assert str(got.tolist()) == str(want.tolist())
        real = ~np.isnan(want)
        np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))
