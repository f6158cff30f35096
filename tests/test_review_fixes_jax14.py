"""JAX-face fixes compared with JAX 0.10.2: ``integer_pow`` (``x ** n``) multiplies by
squaring as XLA does, bit for bit; ``lax.select`` takes a scalar predicate and gives JAX's
errors; ``segment_max``/``segment_min`` of booleans fill empty segments with JAX's
identities and ``segment_sum``/``segment_prod`` refuse them; ``categorical(replace=False)``
gives int32 indices; comparisons of weakly typed values are weakly typed; an effect's
equation (no results) prints without ``=``; ``jnp.bool_`` is the class JAX calls ``bool``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the error is part of the comparison
        return "error", str(e)
    return str(out.dtype), bool(out.weak_type), np.asarray(out).tolist()


def _callback_line(m: Any) -> str:
    def f(x: Any) -> Any:
        m.debug.callback(lambda v: None, x)
        return x

    text = str(m.make_jaxpr(f)(1.0))
    return next(ln.strip() for ln in text.splitlines() if "debug_callback" in ln)


def test_an_equation_without_results_prints_without_equals() -> None:
    ours, theirs = _callback_line(fg), _callback_line(jax)
    assert ours.startswith("debug_callback[") and theirs.startswith("debug_callback[")


def test_bool_scalar_type_name() -> None:
    assert fnp.bool_.__name__ == jnp.bool_.__name__ == "bool"
    assert repr(fnp.bool_).replace("funcgrad", "jax") == repr(jnp.bool_)


_finite32 = st.floats(-30, 30, width=32, allow_subnormal=False).filter(
    lambda v: v == 0 or abs(v) > 1e-3)


@settings(max_examples=25, deadline=None)
@given(st.lists(_finite32, min_size=1, max_size=40),
       st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 9, 12, -1, -2, -3, -5]),
       st.sampled_from(["float32", "float16", "bfloat16", "int32"]))
def test_integer_pow_matches_xla_bit_for_bit(xs: list[float], n: int, dt: str) -> None:
    """XLA multiplies by squaring (x ** 3 is x * (x * x)); libm's pow rounds once, which
    differs in ~30% of float32 cubes. Eager, jitted and ``**`` agree with JAX's bits."""
    if dt == "int32" and n < 0:
        return
    x = np.asarray(xs, np.float32).astype(jnp.dtype(dt))
    if dt == "int32":
        x = np.clip(x, -8, 8)
    want = np.asarray(jax.lax.integer_pow(jnp.asarray(x), n))
    for got in (fg.lax.integer_pow(fnp.asarray(x), n), fg.jit(lambda a: a ** n)(x),
                fnp.asarray(x) ** n):
        got = np.asarray(got)
        if dt == "int32" or n >= 0 or not np.any(x == 0):
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [3, 4, 5, -2, -3])
def test_integer_pow_derivatives_match_jax(n: int) -> None:
    x = np.linspace(1, 2, 257, dtype=np.float32)
    ours = fg.vmap(fg.grad(lambda a: a ** n))(x)
    theirs = jax.vmap(jax.grad(lambda a: a ** n))(x)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


_SELECTS: list[Callable[[Any], Any]] = [
    lambda m: m.lax.select(m.numpy.bool_(True), m.numpy.ones(3), m.numpy.zeros(3)),
    lambda m: m.lax.select(False, m.numpy.ones((2, 2)), m.numpy.zeros((2, 2))),
    lambda m: m.jit(m.lax.select)(True, m.numpy.ones(3), m.numpy.zeros(3)),
    lambda m: m.grad(lambda x: m.lax.select(x.sum() > 0, x * 2, x * 3).sum())(
        m.numpy.ones(3)),
    lambda m: m.vmap(lambda p, x: m.lax.select(p, x, -x))(m.numpy.array([True, False]),
                                                         m.numpy.ones((2, 3))),
    lambda m: m.lax.select(m.numpy.ones(2, bool), m.numpy.ones(3), m.numpy.zeros(3)),
    lambda m: m.lax.select(True, m.numpy.ones(3), m.numpy.zeros(2)),
    lambda m: m.lax.select(m.numpy.ones(3), m.numpy.ones(3), m.numpy.zeros(3)),
    lambda m: m.lax.select(True, m.numpy.ones(3), m.numpy.zeros(3, m.numpy.int32)),
    lambda m: m.lax.select(True, 1.0, m.numpy.zeros(3)),
]


@pytest.mark.parametrize("k", range(len(_SELECTS)))
def test_lax_select_as_jax(k: int) -> None:
    assert _outcome(lambda: _SELECTS[k](fg)) == _outcome(lambda: _SELECTS[k](jax))


@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max",
                                  "segment_min"])
@pytest.mark.parametrize("data", [[True, False], [False, False, True]])
def test_boolean_segments_as_jax(name: str, data: list[bool]) -> None:
    def run(m: Any) -> Any:
        return _outcome(lambda: getattr(m.ops, name)(
            m.numpy.array(data), m.numpy.array(list(range(len(data)))), num_segments=4))

    ours, theirs = run(fg), run(jax)
    assert ours[0] == theirs[0] and ours[-1] == theirs[-1]


def test_categorical_without_replacement_gives_int32_in_x64() -> None:
    with fg.enable_x64(True):
        jax.config.update("jax_enable_x64", True)
        try:
            def run(m: Any) -> Any:
                return _outcome(lambda: m.random.categorical(
                    m.random.key(3), m.numpy.array([0.0, 1.0, 2.0, 0.5]), replace=False,
                    shape=(3,)))

            assert run(fg) == run(jax)
        finally:
            jax.config.update("jax_enable_x64", False)


_WEAK: list[Callable[[Any, Any], Any]] = [
    lambda m, w: w == 0, lambda m, w: w < w + 1, lambda m, w: m.numpy.isnan(w),
    lambda m, w: m.numpy.isfinite(w), lambda m, w: m.numpy.isinf(w),
    lambda m, w: m.numpy.isposinf(w), lambda m, w: m.numpy.isneginf(w),
    lambda m, w: m.lax.eq(w, w), lambda m, w: ~(w == 0), lambda m, w: (w == 0) & (w == 1),
    lambda m, w: m.numpy.logical_not(w), lambda m, w: m.numpy.logical_and(w, w),
    lambda m, w: m.numpy.logical_or(w, 0.0), lambda m, w: m.numpy.logical_xor(w, w),
    lambda m, w: m.numpy.any(w == 0), lambda m, w: m.numpy.all(w), lambda m, w: w != 1,
    lambda m, w: m.jit(lambda x: x == 0)(1.0), lambda m, w: m.numpy.asarray(1) == 1,
    lambda m, w: m.numpy.float32(1.0) == 0, lambda m, w: m.numpy.isclose(w, 1.0),
    lambda m, w: m.numpy.signbit(w), lambda m, w: m.numpy.greater(w, 0.5),
    lambda m, w: m.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[0] == 2),
                                  (0, False))[1],
]


@pytest.mark.parametrize("k", range(len(_WEAK)))
def test_comparisons_of_weak_values_are_weak_as_in_jax(k: int) -> None:
    assert _outcome(lambda: _WEAK[k](fg, fnp.asarray(1.0))) == \
        _outcome(lambda: _WEAK[k](jax, jnp.asarray(1.0)))


_CLAMPS: list[Callable[[Any], Any]] = [
    lambda m: m.lax.clamp(0.0, m.numpy.ones(2, m.numpy.bfloat16), 1.0),
    lambda m: m.lax.clamp(0, m.numpy.ones(2, m.numpy.int8), 5),
    lambda m: m.lax.clamp(0.0, m.numpy.linspace(-1, 2, 4), 1.0),
    lambda m: m.lax.clamp(0, m.numpy.ones(2), 1),
    lambda m: m.lax.clamp(m.numpy.float32(0), m.numpy.ones(2, m.numpy.bfloat16), 1.0),
    lambda m: m.lax.clamp(m.numpy.int8(0), m.numpy.arange(4, dtype=m.numpy.int8),
                          m.numpy.int8(2)),
    lambda m: m.lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=1.0),
    lambda m: m.lax.cond(False, lambda x: x + 1, lambda x: x - 1, 2.0, operand=1.0),
]


@pytest.mark.parametrize("k", range(len(_CLAMPS)))
def test_clamp_dtypes_and_cond_operand_keyword_as_jax(k: int) -> None:
    assert _outcome(lambda: _CLAMPS[k](fg)) == _outcome(lambda: _CLAMPS[k](jax))


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse"])
def test_unique_result_types_are_named_as_jax(name: str) -> None:
    x = [3, 1, 3, 2]
    ours, theirs = getattr(fnp, name)(fnp.array(x)), getattr(jnp, name)(jnp.array(x))
    assert type(ours).__name__ == type(theirs).__name__
    assert ours._fields == theirs._fields


def _custom_with_array_methods(m: Any) -> Any:
    @m.custom_jvp
    def f(x: Any, y: Any) -> Any:
        return x * y.sum()

    @f.defjvp
    def rule(p: Any, t: Any) -> Any:
        # The tangent of an operand not differentiated is a zero Array: it has ``.at``.
        return f(*p), t[0] * p[1].sum() + p[0] * t[1].at[0].set(0.0).sum()

    return [m.grad(f)(2.0, m.numpy.ones(3)), m.jit(m.grad(f))(2.0, m.numpy.ones(3)),
            m.grad(lambda x: f(x, 3.0 * m.numpy.ones(2)))(2.0)]


def test_custom_jvp_rules_get_zero_tangents_as_arrays() -> None:
    ours, theirs = _custom_with_array_methods(fg), _custom_with_array_methods(jax)
    assert [_outcome(lambda o=o: o) for o in ours] == [_outcome(lambda o=o: o) for o in theirs]
