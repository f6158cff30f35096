"""funcgrad.random against JAX's jax.random (threefry2x32, partitionable, its default), and
JAX-free checks: statistics, determinism, jit == eager, vmap == loop, reparameterised grads.

Keys, splits, fold_in, bits, uniform, randint, bernoulli, rademacher, permutation and choice
(no p) are compared bit for bit. The samplers that apply transcendental functions (normal's
erf_inv, exponential's log1p, ...) to those bit-exact uniforms are compared to a few ulps:
funcgrad's log/tan/erf are NumPy's libm, XLA's CPU kernels are its own polynomials.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.testing import jax_x64_mode

SEEDS = st.integers(-(2 ** 63), 2 ** 63 - 1)
SHAPES = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)
FEW = settings(max_examples=3, deadline=None, derandomize=True, database=None)
X64 = pytest.mark.parametrize("x64", [pytest.param(False, marks=pytest.mark.x32), True],
                              ids=["x32", "x64"])


def _jax() -> Any:
    return pytest.importorskip("jax")


def _same(a: Any, b: Any) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b)


def _close(a: Any, b: Any) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    tol = 5e-6 if a.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _seed(x64: bool, seed: int) -> int:
    return seed if x64 else int(np.int64(seed).astype(np.int32))


# -------------------------------------------------------------- bit for bit


@X64
@FEW
@given(seed=SEEDS, shape=SHAPES, n=st.integers(1, 4), data=st.integers(0, 2 ** 32 - 1))
def test_keys_split_fold_in_bits(x64: bool, seed: int, shape: tuple[int, ...], n: int,
                                 data: int) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        _same(k, jk)
        _same(random.key_data(random.key(seed)), jax.random.key_data(jax.random.key(seed)))
        _same(random.split(k, n), jax.random.split(jk, n))
        _same(random.split(k, (n, 2)), jax.random.split(jk, (n, 2)))
        _same(random.fold_in(k, data), jax.random.fold_in(jk, data))
        for dt in ("uint8", "uint16", "uint32") + (("uint64",) if x64 else ()):
            _same(random.bits(k, shape, dt), jax.random.bits(jk, shape, dt))
        _same(random.bits(k, shape), jax.random.bits(jk, shape))


@X64
@FEW
@given(seed=st.integers(0, 2 ** 31), shape=SHAPES, lo=st.floats(-5, 0), width=st.floats(0, 9))
def test_uniform_is_bit_exact(x64: bool, seed: int, shape: tuple[int, ...], lo: float,
                              width: float) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        _same(random.uniform(k, shape), jax.random.uniform(jk, shape))
        _same(random.uniform(k, shape, "float32", lo, lo + width),
              jax.random.uniform(jk, shape, "float32", lo, lo + width))
        if x64:
            _same(random.uniform(k, shape, "float64", lo, lo + width),
                  jax.random.uniform(jk, shape, "float64", lo, lo + width))


@X64
@FEW
@given(seed=st.integers(0, 2 ** 31), shape=SHAPES, lo=st.integers(-300, 300),
       width=st.integers(-3, 2 ** 20), dt=st.sampled_from(["int32", "int8", "uint8", "int16"]))
def test_randint_is_bit_exact(x64: bool, seed: int, shape: tuple[int, ...], lo: int,
                              width: int, dt: str) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        _same(random.randint(k, shape, lo, lo + width),
              jax.random.randint(jk, shape, lo, lo + width))
        _same(random.randint(k, shape, lo, lo + width, dt),
              jax.random.randint(jk, shape, lo, lo + width, dt))
        _same(random.randint(k, shape, 0, 256, "uint8"),
              jax.random.randint(jk, shape, 0, 256, "uint8"))


@X64
@FEW
@given(seed=st.integers(0, 2 ** 31), shape=SHAPES, p=st.floats(0, 1))
def test_bernoulli_rademacher_are_bit_exact(x64: bool, seed: int, shape: tuple[int, ...],
                                            p: float) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        _same(random.bernoulli(k, p, shape), jax.random.bernoulli(jk, p, shape))
        _same(random.bernoulli(k, p, shape, mode="high"),
              jax.random.bernoulli(jk, p, shape, mode="high"))
        _same(random.rademacher(k, shape), jax.random.rademacher(jk, shape))


@X64
@FEW
@given(seed=st.integers(0, 2 ** 31), n=st.integers(1, 30), m=st.integers(1, 4))
def test_permutation_choice_are_bit_exact(x64: bool, seed: int, n: int, m: int) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        x = np.arange(n * m).reshape(n, m) * 1.5
        _same(random.permutation(k, n), jax.random.permutation(jk, n))
        _same(random.permutation(k, x), jax.random.permutation(jk, x))
        _same(random.permutation(k, x, 1, independent=True),
              jax.random.permutation(jk, x, 1, independent=True))
        _same(random.choice(k, n, (m, 2)), jax.random.choice(jk, n, (m, 2)))
        _same(random.choice(k, x, (min(n, m),), replace=False),
              jax.random.choice(jk, x, (min(n, m),), replace=False))


# ---------------------------------------------- through transcendental functions


@X64
@FEW
@given(seed=st.integers(0, 2 ** 31), shape=SHAPES)
def test_real_samplers_match_jax(x64: bool, seed: int, shape: tuple[int, ...]) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        for name in ("normal", "exponential", "laplace", "logistic", "gumbel", "cauchy"):
            _close(getattr(random, name)(k, shape), getattr(jax.random, name)(jk, shape))
        _close(random.truncated_normal(k, -1.5, 0.5, shape),
               jax.random.truncated_normal(jk, -1.5, 0.5, shape))
        _close(random.gumbel(k, shape, mode="high"), jax.random.gumbel(jk, shape, mode="high"))


@X64
@FEW
@given(seed=st.integers(0, 2 ** 31), n=st.integers(2, 6), m=st.integers(1, 3))
def test_categorical_and_weighted_choice_match_jax(x64: bool, seed: int, n: int,
                                                   m: int) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        jk, k = jax.random.PRNGKey(seed), random.PRNGKey(seed)
        logits = np.linspace(-1.0, 2.0, n * m).reshape(m, n).astype(np.float32)
        _same(random.categorical(k, logits), jax.random.categorical(jk, logits))
        _same(random.categorical(k, logits, axis=0, shape=(2, n)),
              jax.random.categorical(jk, logits, axis=0, shape=(2, n)))
        p = np.arange(1.0, n + 1.0) / (n * (n + 1) / 2)
        _same(random.choice(k, n, (3,), p=p), jax.random.choice(jk, n, (3,), p=p))


# ------------------------------------------------------------------ JAX-free


def test_statistics() -> None:
    k = random.PRNGKey(0)
    u = np.asarray(random.uniform(k, (20000,)))
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    z = np.asarray(random.normal(k, (20000,)))
    assert abs(z.mean()) < 0.03 and abs(z.var() - 1) < 0.05
    e = np.asarray(random.exponential(k, (20000,)))
    assert abs(e.mean() - 1) < 0.03
    r = np.asarray(random.randint(k, (20000,), 0, 10))
    assert set(np.unique(r)) == set(range(10))
    assert abs(np.asarray(random.bernoulli(k, 0.3, (20000,))).mean() - 0.3) < 0.02


def test_determinism_and_split_independence() -> None:
    k = random.PRNGKey(5)
    _same(random.normal(k, (4,)), random.normal(k, (4,)))
    k1, k2 = random.split(k)
    a, b = np.asarray(random.normal(k1, (1000,))), np.asarray(random.normal(k2, (1000,)))
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.1
    assert not np.array_equal(a, b)


def test_typed_keys() -> None:
    k = random.key(3)
    assert str(k.dtype) == "key<fry>" and k.shape == ()
    ks = random.split(k, 4)
    assert isinstance(ks, random.KeyArray) and ks.shape == (4,)
    _same(random.key_data(ks), random.split(random.PRNGKey(3), 4))
    _same(random.uniform(ks[1], (3,)), random.uniform(random.key_data(ks)[1], (3,)))
    assert bool(random.wrap_key_data(random.key_data(k)) == k)


def test_jit_equals_eager() -> None:
    k = random.PRNGKey(1)

    def f(key: Any) -> Any:
        k1, k2 = random.split(key)
        return (random.normal(k1, (3,)), random.randint(k2, (2,), 0, 9),
                random.permutation(k2, 6), random.fold_in(key, 7))

    for a, b in zip(fg.jit(f)(k), f(k)):
        _same(a, b)
    _same(fg.jit(lambda s: random.PRNGKey(s))(np.int32(-4)), random.PRNGKey(np.int32(-4)))


def test_vmap_over_keys_equals_loop() -> None:
    keys = random.split(random.PRNGKey(2), 5)
    got = fg.vmap(lambda key: random.uniform(key, (3,)))(keys)
    _same(got, np.stack([np.asarray(random.uniform(keys[i], (3,))) for i in range(5)]))
    got = fg.vmap(lambda key: random.split(key, 3))(keys)
    _same(got, np.stack([np.asarray(random.split(keys[i], 3)) for i in range(5)]))
    got = fg.vmap(lambda key: random.fold_in(key, 3))(keys)
    _same(got, np.stack([np.asarray(random.fold_in(keys[i], 3)) for i in range(5)]))


def test_grad_of_reparameterised_samples() -> None:
    k = random.PRNGKey(0)
    z = np.asarray(random.normal(k, (4,)))

    def loss(mu: Any, sigma: Any) -> Any:
        return fnp.sum(mu + sigma * random.normal(k, (4,)))

    dmu, dsigma = fg.grad(loss, argnums=(0, 1))(1.0, 2.0)
    np.testing.assert_allclose(dmu, 4.0)
    np.testing.assert_allclose(dsigma, z.sum(), rtol=1e-6)
    g = fg.grad(lambda lo: fnp.sum(random.uniform(k, (3,), minval=lo, maxval=lo + 2.0)))(0.5)
    np.testing.assert_allclose(g, 3.0, rtol=1e-6)


def test_errors() -> None:
    with pytest.raises(TypeError):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError):
        random.PRNGKey(np.arange(2))
    with pytest.raises(ValueError, match="single key"):
        random.uniform(random.split(random.PRNGKey(0)), (2,))
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(random.PRNGKey(0), (2,), dtype="int32")
    with pytest.raises(ValueError, match="replace=False"):
        random.choice(random.PRNGKey(0), 3, (4,), replace=False)
