"""JAX-face behaviours found by side-by-side review, each against JAX 0.10.2: jnp.clip's
keywords, allow_int, lax.iota's size, jnp.repeat's total_repeat_length, float0
cotangents of integer inputs, and the exception types JAX raises."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax

jax = pytest.importorskip("jax")
jnp, jlax = jax.numpy, jax.lax
pytestmark = pytest.mark.x32  # both libraries at JAX's default, 32-bit


def _same(ours, theirs):
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("kw", [{"min": 1, "max": 3}, {"max": 2.5}, {"min": -1}, {}])
def test_clip_takes_min_and_max(kw):
    x = np.arange(5)
    _same(fnp.clip(x, **kw), jnp.clip(x, **kw))
    _same(fg.jit(lambda v: fnp.clip(v, **kw))(x), jnp.clip(x, **kw))
    with pytest.raises(TypeError):
        fnp.clip(x, a_min=1)


def test_grad_allow_int_gives_float0_zeros():
    def f(x, n):
        return x ** n

    g = fg.grad(f, argnums=(0, 1), allow_int=True)(2.0, 3)
    jg = jax.grad(f, argnums=(0, 1), allow_int=True)(2.0, 3)
    _same(g[0], jg[0])
    assert g[1].dtype == jg[1].dtype == fg.dtypes.float0 and g[1].shape == jg[1].shape
    v, gv = fg.value_and_grad(lambda x, n: (x * n).sum(), argnums=1, allow_int=True)(
        2.0, fnp.arange(3))
    jv, jgv = jax.value_and_grad(lambda x, n: (x * n).sum(), argnums=1, allow_int=True)(
        2.0, jnp.arange(3))
    assert gv.dtype == jgv.dtype and gv.shape == jgv.shape
    _same(v, jv)
    with pytest.raises(TypeError):
        fg.grad(f, argnums=1)(2.0, 3)
    _, f_vjp = fg.vjp(f, 2.0, 3)
    _, j_vjp = jax.vjp(f, 2.0, 3)
    assert f_vjp(1.0)[1].dtype == j_vjp(1.0)[1].dtype


def test_jacrev_allow_int_blocks_are_zeros_of_the_input_type():
    def f(x, n):
        return x * n

    ours = fg.jacrev(f, argnums=(0, 1), allow_int=True)(fnp.ones(2), 3)
    theirs = jax.jacrev(f, argnums=(0, 1), allow_int=True)(jnp.ones(2), 3)
    for o, t in zip(ours, theirs):
        _same(o, t)


@pytest.mark.parametrize("dtype", ["int32", "float32", "uint8"])
@pytest.mark.parametrize("size", [0, 1, 5])
def test_lax_iota_takes_a_size(dtype, size):
    _same(flax.iota(dtype, size), jlax.iota(dtype, size))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=5), st.integers(0, 12),
       st.booleans())
def test_repeat_with_total_repeat_length_as_jax(counts, total, scalar):
    x = np.arange(len(counts), dtype=np.float32) + 1
    reps = counts[0] if scalar else np.array(counts)
    want = jnp.repeat(x, reps, total_repeat_length=total)
    _same(fnp.repeat(x, reps, total_repeat_length=total), want)
    if not scalar:
        traced = fg.jit(lambda r: fnp.repeat(x, r, total_repeat_length=total))(reps)
        _same(traced, want)


@pytest.mark.parametrize(("expr", "error"), [
    ("L.cond(True, lambda x: x, lambda x: x.astype(N.int32), N.ones(2))", TypeError),
    ("N.power(N.array([2, 3]), -1)", TypeError),
    ("N.array([2, 3]) ** -1", TypeError),
    ("N.arange(3)[1.0]", TypeError),
    ("N.arange(3)[N.array([0.0])]", TypeError),
    ("N.arange(5.)[[1, 2]]", TypeError),
    ("N.arange(5.).at[[1, 2]].set(0.)", TypeError),
    ("N.round(N.array([15, 25]), -1)", NotImplementedError),
    ("N.clip()", ValueError),
])
def test_errors_have_jaxs_types(expr, error):
    for lib in ((flax, fnp), (jlax, jnp)):
        with pytest.raises(error):
            eval(expr, {"L": lib[0], "N": lib[1]})


def test_list_inside_a_tuple_index_still_works():
    x = np.arange(6.0).reshape(2, 3)
    _same(fnp.asarray(x)[0, [1, 2]], jnp.asarray(x)[0, [1, 2]])
    _same(fnp.asarray(x)[([0, 1],)], jnp.asarray(x)[([0, 1],)])


def _complex_draw(seed, shape):
    r = np.random.default_rng(seed)
    # Few distinct parts, so that ties in the real part are common.
    return (r.integers(-2, 3, shape) + 1j * r.integers(-2, 3, shape)).astype(np.complex64)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans())
def test_complex_order_as_jax(seed, descending):
    x, y = _complex_draw(seed, (3, 5)), _complex_draw(seed + 1, (3, 5))
    for name in ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum"):
        _same(getattr(fnp, name)(x, y), getattr(jnp, name)(x, y))
    _same(fnp.greater(x, 1 + 0j), jnp.greater(x, 1 + 0j))
    for axis in (0, 1, None):
        _same(fnp.sort(x, axis=axis, descending=descending),
              jnp.sort(x, axis=axis, descending=descending))
        _same(fnp.argsort(x, axis=axis, descending=descending),
              jnp.argsort(x, axis=axis, descending=descending))


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 5), st.sampled_from(["scalar", "array",
                                                                       "x", "x2d"]))
def test_trapezoid_as_jax(seed, n, how):
    r = np.random.default_rng(seed)
    y = r.normal(size=(3, n)).astype(np.float32)
    kw = {"scalar": {"dx": 0.25}, "array": {"dx": r.uniform(0.1, 1, (3, 1)).astype(np.float32)},
          "x": {"x": np.sort(r.normal(size=n)).astype(np.float32)},
          "x2d": {"x": np.sort(r.normal(size=(3, n)), axis=1).astype(np.float32)}}[how]
    want = jnp.trapezoid(y, **kw)
    got = fnp.trapezoid(y, **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("expr", ["N.fft.irfft(N.ones(1))", "N.fft.irfft(N.ones((2, 1)), axis=1)",
                                  "N.fft.fft(N.ones(0))", "N.fft.ifft(N.ones((0, 3)), axis=0)",
                                  "N.fft.irfftn(N.ones((2, 1)))"])
def test_empty_transforms_as_jax(expr):
    ours, theirs = eval(expr, {"N": fnp}), eval(expr, {"N": jnp})
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype


@pytest.mark.parametrize("dims", [(-1,), (0, -1), (-3,), (1, -2)])
def test_lax_expand_dims_takes_negative_dimensions(dims):
    _same(flax.expand_dims(fnp.ones((2, 3)), dims), jlax.expand_dims(jnp.ones((2, 3)), dims))


@pytest.mark.parametrize("expr", [
    "N.partition(N.array([1., N.nan, 3., 0., 2.]), 2)",
    "N.partition(N.array([1., N.nan, 3., 0., 2.]), 1)",
    "N.partition(N.array([[N.nan, 1., 0.], [2., N.nan, N.nan]]), 1, axis=1)",
    "N.argpartition(N.array([1., N.nan, 3., 0., 2.]), 2)",
    "N.isclose(N.array([3, 4]), N.array([5, 2]), rtol=0.5)",
    "N.isclose(N.array([3, 4]), 5, atol=2)",
    "N.isclose(N.array([1., N.inf, N.nan]), N.array([1., N.inf, N.nan]), equal_nan=True)",
    "N.isclose(N.array([N.inf, 1.]), N.array([1., N.inf]))",
    "N.reciprocal(N.array([2, 4]))",
    "N.insert(N.zeros((3, 2)), N.array([0, 2]), N.array([9, 8]), axis=0)",
    "N.insert(N.zeros((3, 2)), N.array([0, 2]), N.array([9, 8]), axis=1)",
    "N.insert(N.arange(5.), N.array([1, 3]), N.array([9., 8.]))",
    "N.linalg.norm(N.ones((2, 2), N.int32), ord=1)",
    "N.linalg.norm(N.ones((2, 2), N.int32), ord=N.inf)",
    "N.linalg.norm(N.arange(3), ord=3)",
    "N.linspace(0, 1, 5, retstep=True)[1]",
    "N.square(N.array([True, False]))",
    "N.array([1, 2], ndmin=3)",
    "N.array(3.0, ndmin=1)",
    "N.var(N.arange(5.), ddof=6)", "N.var(N.arange(5.), ddof=5)",
    "N.std(N.zeros((0, 3)), axis=0, ddof=1)",
    "N.var(N.arange(5.), where=N.arange(5) > 3, ddof=1)",
    "N.cov(N.ones((1, 3)), rowvar=False)", "N.cov(N.arange(6.).reshape(2, 3), rowvar=False)",
])
def test_review_values_as_jax(expr):
    ours, theirs = eval(expr, {"N": fnp}), eval(expr, {"N": jnp})
    _same_type(ours, theirs)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def _same_type(ours, theirs):
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert np.shape(ours) == np.shape(theirs)
    assert getattr(ours, "weak_type", False) == getattr(theirs, "weak_type", False)


@pytest.mark.parametrize("expr", [
    "N.nonzero(N.zeros((0, 3)), size=2)", "N.flatnonzero(N.zeros(0), size=2)",
    "N.argwhere(N.zeros((0, 2)), size=2)", "N.nonzero(N.zeros((2, 0, 3)), size=1)",
    "NN.softmax(N.zeros((0, 3)), axis=0)", "NN.log_softmax(N.zeros((0, 3)), axis=0)",
    "NN.logsumexp(N.zeros(0), b=0.0)",
])
def test_empty_inputs_as_jax(expr):
    import funcgrad.nn as fnn  # noqa: PLC0415

    ours = eval(expr, {"N": fnp, "NN": fnn})
    theirs = eval(expr, {"N": jnp, "NN": jax.nn})
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        _same(o, t)


@pytest.mark.parametrize("name", ["normal", "uniform", "gumbel", "exponential", "laplace"])
def test_bfloat16_draws_have_the_dtype(name):
    import funcgrad.random as frandom  # noqa: PLC0415

    out = getattr(frandom, name)(frandom.key(0), (4,), dtype=fnp.bfloat16)
    assert out.dtype == getattr(jax.random, name)(jax.random.key(0), (4,),
                                                   dtype=jnp.bfloat16).dtype
    assert np.all(np.isfinite(np.asarray(out, np.float32)))
