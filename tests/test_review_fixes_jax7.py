"""bfloat16 taken for a float everywhere (initializers, samplers, segment and cumulative
reductions, ``lax.pow``/``rem``, grouped collectives, ``jax_debug_nans``), samplers'
TypePromotionError, and ``jit``'s donation and static-argument errors, compared with
JAX 0.10.2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
BF16 = jnp.bfloat16

pytestmark = pytest.mark.usefixtures("jax_x64")


def _floats(lo, hi):
    # Normal numbers only: XLA flushes subnormals to zero.
    return st.floats(lo, hi, allow_subnormal=False)


def _same(ours, theirs):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.astype(np.float64), theirs.astype(np.float64))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1),
       name=st.sampled_from(["glorot_uniform", "he_uniform", "lecun_uniform"]))
def test_bfloat16_variance_scaling_is_real_as_jax(seed, name):
    ours = getattr(fg.nn.initializers, name)()(fg.random.PRNGKey(seed), (2, 3), BF16)
    theirs = getattr(jax.nn.initializers, name)()(jax.random.PRNGKey(seed), (2, 3), BF16)
    _same(ours, theirs)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1),
       p=hnp.arrays(np.float32, 3, elements=_floats(0.05, 0.95).map(np.float32)))
def test_bfloat16_probabilities_sample_as_jax(seed, p):
    ours_k, theirs_k = fg.random.PRNGKey(seed), jax.random.PRNGKey(seed)
    pb = p.astype(BF16)
    _same(fg.random.geometric(ours_k, fnp.asarray(pb)),
          jax.random.geometric(theirs_k, jnp.asarray(pb)))
    _same(fg.random.binomial(ours_k, 10.0, fnp.asarray(pb)),
          jax.random.binomial(theirs_k, 10.0, jnp.asarray(pb)))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1),
       p=hnp.arrays(np.float32, 3, elements=st.integers(1, 15).map(lambda k: k / 16)))
def test_bfloat16_choice_probabilities_as_jax(seed, p):
    # Sixteenths: exact cumulative sums (funcgrad's bfloat16 cumsum may round in another
    # order than XLA's; see the report).
    pb = p.astype(BF16)
    _same(fg.random.choice(fg.random.PRNGKey(seed), 3, (6,), p=fnp.asarray(pb)),
          jax.random.choice(jax.random.PRNGKey(seed), 3, (6,), p=jnp.asarray(pb)))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), a=_floats(0.2, 8.0), b=_floats(0.2, 8.0))
def test_bfloat16_gamma_and_beta_sample_as_jax(seed, a, b):
    ours_k, theirs_k = fg.random.PRNGKey(seed), jax.random.PRNGKey(seed)
    _same(fg.random.gamma(ours_k, a, (3,), dtype=BF16),
          jax.random.gamma(theirs_k, a, (3,), dtype=BF16))
    _same(fg.random.beta(ours_k, a, b, (3,), dtype=BF16),
          jax.random.beta(theirs_k, a, b, (3,), dtype=BF16))


@pytest.mark.parametrize(("name", "call"), [
    ("lognormal", lambda r, k: r.lognormal(k, dtype=BF16)),
    ("lognormal", lambda r, k: r.lognormal(k, np.float32(0.5), (2,), dtype=BF16)),
    ("pareto", lambda r, k: r.pareto(k, np.float32(2.0), dtype=BF16)),
    ("beta", lambda r, k: r.beta(k, np.float32(2.0), 3.0, dtype=BF16)),
    ("t", lambda r, k: r.t(k, np.float32(2.0), dtype=BF16)),
    ("triangular", lambda r, k: r.triangular(k, 0.0, np.float32(0.5), 1.0, dtype=BF16)),
])
def test_unsafe_parameter_casts_raise_jax_type_promotion_error(name, call):
    with pytest.raises(jax.dtypes.TypePromotionError) as theirs:
        call(jax.random, jax.random.PRNGKey(0))
    with pytest.raises(fg.dtypes.TypePromotionError) as ours:
        call(fg.random, fg.random.PRNGKey(0))
    assert str(ours.value) == str(theirs.value)


def test_safe_parameter_casts_still_sample():
    # A Python float (weakly typed) casts to any float dtype.
    assert fg.random.lognormal(fg.random.PRNGKey(1), 0.5, (3,), dtype=BF16).dtype == \
        jax.random.lognormal(jax.random.PRNGKey(1), 0.5, (3,), dtype=BF16).dtype == BF16


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float32, st.integers(1, 6), elements=_floats(-8, 8)),
       data=st.data(), name=st.sampled_from(["segment_max", "segment_min"]))
def test_bfloat16_segment_max_min_as_jax(x, data, name):
    ids = data.draw(hnp.arrays(np.int32, x.shape, elements=st.integers(0, 3)))
    xb = x.astype(BF16)
    _same(getattr(fg.ops, name)(xb, ids, 4), getattr(jax.ops, name)(xb, ids, 4))


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float32, 4, elements=_floats(0.25, 8)),
       y=hnp.arrays(np.float32, 4, elements=_floats(-3, 3).filter(lambda v: abs(v) > 1e-3)))
def test_bfloat16_pow_as_jax(x, y):
    xb, yb = x.astype(BF16), y.astype(BF16)
    _same(fg.lax.pow(xb, yb), jax.lax.pow(xb, yb))


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.int8, 4, elements=st.integers(-8, 8)),
       y=hnp.arrays(np.int8, 4, elements=st.sampled_from([-4, -2, -1, 1, 2, 4])))
def test_bfloat16_rem_takes_the_dividends_sign_as_jax(x, y):
    # Exactly representable quotients and remainders (see the report on rounding).
    xb, yb = x.astype(BF16), y.astype(BF16)
    _same(fg.lax.rem(xb, yb), jax.lax.rem(xb, yb))


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float32, st.integers(1, 6),
                    elements=_floats(-5, 5) | st.just(np.float32(np.nan))),
       name=st.sampled_from(["cummax", "cummin"]), reverse=st.booleans())
def test_bfloat16_cumulative_as_jax(x, name, reverse):
    xb = x.astype(BF16)
    _same(getattr(fg.lax, name)(xb, reverse=reverse),
          getattr(jax.lax, name)(xb, reverse=reverse))


@settings(max_examples=10, deadline=None)
@given(x=hnp.arrays(np.float32, 3, elements=_floats(-5, -0.5)),
       init=st.sampled_from([0.0, 1.0, -10.0]), op=st.sampled_from(["max", "min"]))
def test_bfloat16_reduce_keeps_a_non_identity_init_as_jax(x, init, op):
    xb = (x if op == "max" else -x).astype(BF16)
    ours = fg.lax.reduce(xb, fnp.array(init, BF16), getattr(fg.lax, op), (0,))
    theirs = jax.lax.reduce(xb, jnp.array(init, BF16), getattr(jax.lax, op), (0,))
    _same(ours, theirs)


def test_bfloat16_grouped_pmax_pmin_under_vmap():
    # JAX refuses axis_index_groups under vmap; funcgrad's (documented) answer is the
    # per-group reduction, in bfloat16 as in float32.
    x = np.array([1.0, 2.0, 3.0, 4.0], BF16)
    groups = [[0, 1], [2, 3]]
    for fn, want in ((fg.lax.pmax, [2, 2, 4, 4]), (fg.lax.pmin, [1, 1, 3, 3])):
        out = fg.vmap(lambda v, fn=fn: fn(v, "i", axis_index_groups=groups), axis_name="i")(x)
        assert out.dtype == BF16
        np.testing.assert_array_equal(np.asarray(out, np.float32), want)


@pytest.mark.parametrize("jit", [False, True])
def test_bfloat16_debug_nans_raises_as_jax(jit):
    x = np.array([-1.0], BF16)
    with jax.debug_nans(True), pytest.raises(FloatingPointError):
        (jax.jit(jnp.log) if jit else jnp.log)(x)
    with fg.debug_nans(True), pytest.raises(FloatingPointError):
        (fg.jit(fnp.log) if jit else fnp.log)(x)


# ------------------------------------------------------------------------------- jit


def _f(x, y):
    return x * 2 + y


def _donate(mod, fn, kwargs, make, **jit_kw):
    """(result, is_deleted of each made Array, warning texts)."""
    made = {k: make(mod) if v is None else v for k, v in kwargs.items()}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = mod.jit(fn, **jit_kw)(**made)
    deleted = {k: made[k].is_deleted() for k, v in kwargs.items() if v is None}
    return out, deleted, [str(m.message).split("\n")[0] for m in w
                          if "donated" in str(m.message)]


@pytest.mark.parametrize(("fn", "kwargs", "jit_kw"), [
    (_f, {"x": None, "y": 1.0}, {"donate_argnums": 0}),
    (_f, {"x": 1.0, "y": None}, {"donate_argnums": 1}),
    (_f, {"x": None, "y": None}, {"donate_argnums": -1}),
    (lambda *args, **kw: kw["x"] * 2, {"x": None}, {"donate_argnums": 0}),
])
def test_donate_argnums_reach_keyword_arguments_as_jax(fn, kwargs, jit_kw):
    ours = _donate(fg, fn, kwargs, lambda m: m.numpy.arange(3.0), **jit_kw)
    theirs = _donate(jax, fn, kwargs, lambda m: m.numpy.arange(3.0), **jit_kw)
    _same(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize(("fn", "nums"), [(_f, 2), (_f, -3), (lambda **kw: kw, 0)])
def test_donate_argnums_past_the_signature_raise_when_jitted_as_jax(fn, nums):
    with pytest.raises(ValueError, match="positional arguments") as theirs:
        jax.jit(fn, donate_argnums=nums)
    with pytest.raises(ValueError) as ours:
        fg.jit(fn, donate_argnums=nums)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fn", [
    lambda x: (x * 2, x.sum()),
    lambda x: x.astype(np.float32),
    lambda x: x.sum(),
    lambda x: x.reshape(2, 3) * 2,
    lambda x: x,
    lambda x: (x * 2).sum(),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_donation_deletes_and_warns_as_jax(fn, dtype):
    ours = _donate(fg, fn, {"x": None}, lambda m: m.numpy.arange(6, dtype=dtype),
                   donate_argnums=0)
    theirs = _donate(jax, fn, {"x": None}, lambda m: m.numpy.arange(6, dtype=dtype),
                     donate_argnums=0)
    for o, t in zip(fg.tree_util.tree_leaves(ours[0]), jax.tree_util.tree_leaves(theirs[0])):
        _same(o, t)
    assert ours[1:] == theirs[1:]


def test_unused_donated_argument_is_kept_and_reported_as_jax():
    def g(x, y):
        return y * 2

    ours = _donate(fg, g, {"x": None, "y": None}, lambda m: m.numpy.ones(3),
                   donate_argnums=0)
    theirs = _donate(jax, g, {"x": None, "y": None}, lambda m: m.numpy.ones(3),
                     donate_argnums=0)
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("static", [[1], {"a": 1}, np.ones(2)])
def test_non_hashable_static_argument_raises_jax_value_error(static):
    def g(x, n):
        return x

    with pytest.raises(ValueError) as theirs:
        jax.jit(g, static_argnums=1)(jnp.ones(2), static)
    with pytest.raises(ValueError) as ours:
        fg.jit(g, static_argnums=1)(fnp.ones(2), static)
    assert str(ours.value) == str(theirs.value)


def test_jvp_with_a_numpy_float0_tangent_as_jax():
    t = np.zeros((), jax.dtypes.float0)
    out, tan = fg.jvp(lambda x: x * 2, (3,), (t,))
    want, want_tan = jax.jvp(lambda x: x * 2, (3,), (t,))
    assert int(out) == int(want) == 6
    assert np.asarray(tan).dtype == np.asarray(want_tan).dtype == jax.dtypes.float0


@pytest.mark.parametrize("make", [
    lambda np_, f0: np_.zeros((), f0), lambda np_, f0: np_.ones((2,), f0),
    lambda np_, f0: np_.empty((2, 1), f0), lambda np_, f0: np_.full((3,), 0, f0),
    lambda np_, f0: np_.zeros_like(np.arange(3), dtype=f0),
    lambda np_, f0: np_.ones_like(np.arange(3), dtype=f0, shape=(1, 2)),
])
def test_float0_creation_gives_numpy_float0_as_jax(make):
    ours, theirs = make(fnp, fg.dtypes.float0), make(jnp, jax.dtypes.float0)
    assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype
    assert ours.shape == theirs.shape
    primal, tangent = fg.jvp(lambda x: x * 2, (3,), (fnp.zeros((), fg.dtypes.float0),))
    assert int(primal) == 6 and tangent.dtype == fg.dtypes.float0
