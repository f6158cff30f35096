"""lax.div and lax.rem against JAX 0.10.2: integer division rounds toward zero and the
remainder takes the dividend's sign (XLA's), unlike jnp's // and %; by zero, XLA's -1 and
the dividend; float remainders and their derivatives; under jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import lax as flax

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.usefixtures("jax_x64")  # compared with JAX in float64
jlax = jax.lax



INTS = ["int8", "int16", "int32", "int64", "uint8", "uint32"]


def _operands(seed, dtype, n=40):
    r = np.random.default_rng(seed)
    x, y = r.integers(-30, 30, n), r.integers(-7, 7, n)
    if dtype.startswith("uint"):
        x, y = np.abs(x), np.abs(y)
    return x.astype(dtype), y.astype(dtype)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", ["div", "rem"])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_integer_division_as_xla(dtype, name, seed):
    x, y = _operands(seed, dtype)
    want = np.asarray(getattr(jlax, name)(x, y))
    for f in (getattr(flax, name), fg.jit(getattr(flax, name)), fg.vmap(getattr(flax, name))):
        got = f(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_float_remainder_values_and_derivatives_as_jax(seed):
    r = np.random.default_rng(seed)
    x, y = r.normal(size=30) * 5, r.normal(size=30) * 2
    np.testing.assert_allclose(np.asarray(flax.rem(x, y)), np.asarray(jlax.rem(x, y)),
                               rtol=1e-12, atol=1e-12)

    def grads(L, J):
        return J.vmap(J.grad(lambda a, b: L.rem(a, b), argnums=(0, 1)))(x, y)

    want = grads(jlax, jax)
    got = grads(flax, fg)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)



@pytest.mark.parametrize(("x", "y"), [(np.arange(-5, 5), 3), (-7, np.arange(1, 5)),
                                      (np.arange(-4.0, 4.0), 1.5), (np.array(-9), 4)])
def test_a_python_number_operand_as_jax(x, y):
    for name in ("div", "rem"):
        want = getattr(jlax, name)(x, y)
        got = getattr(flax, name)(x, y)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@settings(max_examples=10, deadline=None)
@given(x=st.lists(st.floats(-8192.0, 8192.0, allow_subnormal=False, width=16), min_size=1,
                  max_size=8),
       y=st.floats(2.0 ** -10, 1024.0, allow_subnormal=False, width=16), flip=st.booleans())
def test_float_remainder_is_exact_as_c_fmod(dtype, x, y, flip):
    # (rem(-1e-3, 1) was -0.0009999871: the floor remainder adjusted by y rounds.)
    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    xs = np.array(x).astype(dt)
    ys = np.full(xs.shape, -y if flip else y).astype(dt)
    want = np.asarray(jlax.rem(xs, ys)).astype(np.float64)
    for f in (flax.rem, fg.jit(flax.rem)):
        got = np.asarray(f(xs, ys)).astype(np.float64)
        # (The sign of an exact zero differs: a sharp_bits row.)
        np.testing.assert_array_equal(got + 0.0, want + 0.0)
