"""XLA's CPU float32 log, log1p and erf_inv rebuilt bit for bit (funcgrad.primitives.
xla_cpu_math), and what rests on them: lax.erf_inv and JAX's float32/float16/bfloat16
normals. The oracle is JAX itself; the fused multiply-add is checked against exact rational
arithmetic."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives.fused_multiply_add import fma32
from funcgrad.primitives.xla_cpu_math import erf_inv_f32, log1p_f32, log_f32

# JAX's default 32-bit mode on both sides (the suite's default is funcgrad in 64-bit).
pytestmark = pytest.mark.x32

F32 = np.float32

finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
any32 = st.floats(width=32)


def _round_to_f32(q: Fraction) -> np.float32:
    """The float32 nearest to the rational ``q`` (ties to even)."""
    guess = F32(float(q))
    below = np.nextafter(guess, F32(-np.inf))
    above = np.nextafter(guess, F32(np.inf))
    best = None
    for c in (below, guess, above):
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        key = (d, int(np.asarray(c).view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    assert best is not None
    return F32(best[1])


@settings(max_examples=150, deadline=None)
@given(finite32, finite32, finite32)
def test_fma32_rounds_once(a: float, b: float, c: float) -> None:
    a32, b32, c32 = F32(a), F32(b), F32(c)
    exact = Fraction(float(a32)) * Fraction(float(b32)) + Fraction(float(c32))
    if abs(exact) >= Fraction(float(np.finfo(F32).max)):
        return  # overflow: not the rounding under test
    got = fma32(np, a32, b32, c32)
    assert got.dtype == F32
    assert float(got) == float(_round_to_f32(exact))


@settings(max_examples=150, deadline=None)
@given(st.integers(-2**22, 2**22), st.integers(-2**22, 2**22), st.integers(-40, 40))
def test_fma32_halfway_sums(ma: int, mb: int, e: int) -> None:
    # Products of wide mantissas plus a float near them: many float64 sums land on or near
    # a float32 halfway point, where a second rounding would go wrong.
    a32 = F32(np.ldexp(F32(ma | 1), -11))
    b32 = F32(np.ldexp(F32(mb | 1), -11))
    c32 = F32(-F32(float(a32) * float(b32) * (1 + 2.0 ** -25)))
    c32 = F32(np.ldexp(c32, e % 3))
    exact = Fraction(float(a32)) * Fraction(float(b32)) + Fraction(float(c32))
    assert float(fma32(np, a32, b32, c32)) == float(_round_to_f32(exact))


try:
    import jax
    import jax.numpy as jnp
except ImportError:  # the oracle is optional: its tests skip
    jax = jnp = None
needs_jax = pytest.mark.skipif(jax is None, reason="needs jax (the compat extra)")


def _same(got: np.ndarray, want: np.ndarray) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    both_nan = np.isnan(got) & np.isnan(want)
    bad = ~((got.view(np.uint32) == want.view(np.uint32)) | both_nan)
    assert not bad.any(), (got[bad][:5], want[bad][:5])


arrays32 = hnp.arrays(F32, hnp.array_shapes(max_dims=2, max_side=64), elements=any32)


@needs_jax
@settings(max_examples=30, deadline=None)
@given(arrays32)
def test_log_is_xlas(x: np.ndarray) -> None:
    _same(log_f32(np, x), jnp.log(x))


@needs_jax
@settings(max_examples=30, deadline=None)
@given(arrays32)
def test_log1p_is_xlas(x: np.ndarray) -> None:
    _same(log1p_f32(np, x), jnp.log1p(x))


unit32 = hnp.arrays(F32, hnp.array_shapes(max_dims=2, max_side=64),
                    elements=st.floats(-1, 1, width=32))


@needs_jax
@settings(max_examples=30, deadline=None)
@given(unit32)
def test_erf_inv_is_xlas(x: np.ndarray) -> None:
    _same(erf_inv_f32(np, x), jax.lax.erf_inv(x))
    _same(np.asarray(fg.lax.erf_inv(fnp.asarray(x))), jax.lax.erf_inv(x))
    _same(np.asarray(fg.jit(fg.lax.erf_inv)(fnp.asarray(x))), jax.lax.erf_inv(x))


@needs_jax
def test_large_arrays_go_through_blocks() -> None:
    x = np.random.default_rng(0).random(100_003, dtype=F32) * 2 - 1
    _same(erf_inv_f32(np, x.reshape(-1, 1)).ravel(), jax.lax.erf_inv(x))


@needs_jax
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["float32", "float16", "bfloat16"]),
       hnp.array_shapes(max_dims=2, max_side=40))
def test_normal_has_jaxs_bits(seed: int, dtype: str, shape: tuple[int, ...]) -> None:
    want = np.asarray(jax.random.normal(jax.random.PRNGKey(seed), shape, dtype))
    key = fg.random.PRNGKey(seed)
    got = np.asarray(fg.random.normal(key, shape, dtype))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(F32), want.astype(F32))
    jitted = np.asarray(fg.jit(lambda k: fg.random.normal(k, shape, dtype))(key))
    np.testing.assert_array_equal(jitted.astype(F32), want.astype(F32))


@needs_jax
@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_vmapped_normals_have_jaxs_bits(seed: int) -> None:
    want = jax.vmap(lambda k: jax.random.normal(k, (7,)))(
        jax.random.split(jax.random.PRNGKey(seed), 3))
    got = fg.vmap(lambda k: fg.random.normal(k, (7,)))(
        fg.random.split(fg.random.PRNGKey(seed), 3))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
