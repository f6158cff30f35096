"""Numerics that were wrong once: each checked against JAX where installed, and against a
closed form always (float64)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

FLOATS = st.floats(-50, 50, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(x=FLOATS, y=FLOATS)
def test_logaddexp_is_accurate_and_its_derivatives_are_softmax(x: float, y: float) -> None:
    want = max(x, y) + math.log1p(math.exp(-abs(x - y)))
    np.testing.assert_allclose(float(fnp.logaddexp(x, y)), want, rtol=1e-15, atol=0)
    gx, gy = fg.grad(fnp.logaddexp, argnums=(0, 1))(x, y)
    sx = 1.0 / (1.0 + math.exp(y - x))
    sy = 1.0 / (1.0 + math.exp(x - y))
    np.testing.assert_allclose([float(gx), float(gy)], [sx, sy], rtol=1e-12, atol=1e-300)
    h = fg.hessian(lambda v: fnp.logaddexp(v[0], v[1]))(fnp.array([x, y]))
    d = sx * (1.0 - sx)
    # 1 - w cancels when w is near 1: an absolute error of a few ulps of 1.
    np.testing.assert_allclose(np.asarray(h), [[d, -d], [-d, d]], rtol=1e-6, atol=1e-14)


def test_logaddexp_keeps_tiny_terms() -> None:
    assert float(fnp.logaddexp(0.0, -40.0)) == pytest.approx(math.exp(-40.0), rel=1e-12)
    assert float(fnp.logaddexp2(0.0, -40.0)) == pytest.approx(2.0 ** -40 / math.log(2),
                                                               rel=1e-9)
    assert float(fnp.logaddexp(-np.inf, -np.inf)) == -np.inf
    assert float(fnp.logaddexp(np.inf, 1.0)) == np.inf


def test_hypot_derivative_at_the_origin_splits_evenly() -> None:
    gx, gy = fg.grad(fnp.hypot, argnums=(0, 1))(0.0, 0.0)
    assert (float(gx), float(gy)) == (0.5, 0.5)
    assert float(fnp.hypot(1e300, 1e300)) == pytest.approx(math.sqrt(2) * 1e300)


def test_abs_derivative_at_zero_is_jaxs() -> None:
    assert float(fg.grad(fnp.abs)(0.0)) == 1.0
    assert float(fg.grad(fnp.abs)(-2.0)) == -1.0


@pytest.mark.parametrize("sa,sb", [((2,), (2, 2)), ((2, 3), (3,)), ((), (3,)), ((2, 1, 2), (3,))])
def test_kron_of_different_ranks(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a = np.arange(1.0, 1.0 + math.prod(sa)).reshape(sa)
    b = np.arange(2.0, 2.0 + math.prod(sb)).reshape(sb)
    np.testing.assert_array_equal(np.asarray(fnp.kron(a, b)), np.kron(a, b))


def test_against_jax() -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp  # noqa: PLC0415

    from funcgrad.testing import jax_x64_mode  # noqa: PLC0415

    with jax_x64_mode(jax, True):
        for x, y in [(0.0, -40.0), (1.0, 2.0), (3.0, 3.0), (0.0, 0.0)]:
            np.testing.assert_allclose(float(fnp.logaddexp(x, y)), float(jnp.logaddexp(x, y)),
                                       rtol=1e-15)
            np.testing.assert_allclose(
                np.asarray(fg.grad(fnp.hypot, argnums=(0, 1))(x, y)),
                np.asarray(jax.grad(jnp.hypot, argnums=(0, 1))(x, y)), rtol=1e-15)
        assert float(fg.grad(fnp.abs)(0.0)) == float(jax.grad(jnp.abs)(0.0))
