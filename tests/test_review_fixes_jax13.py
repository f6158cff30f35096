"""JAX-face weak types compared with JAX 0.10.2: ``//`` and ``divmod`` (through
``lax.round``) keep them; an array made of a list is strongly typed, in the promotion of its
leaves (NumPy scalars strong, Python numbers weak); ``lax.fft`` results, ``hypot`` of
weakly typed arrays and ``lax.associative_scan`` of two or more elements are strong."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax

jax = pytest.importorskip("jax")
jnp = jax.numpy
jlax = jax.lax

pytestmark = pytest.mark.x32

_fast = settings(max_examples=10, deadline=None)


def _same(ours: Any, theirs: Any) -> None:
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type), (ours, theirs)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def _outcome(call: Any) -> Any:
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the error is part of the comparison
        return type(e), str(e)
    return out.dtype, out.weak_type, np.asarray(out).tolist()


# --- // and divmod ---------------------------------------------------------------------

_divisor = st.sampled_from([2, 3, -2, 2.0, 0.5, -1.5])


@_fast
@given(st.floats(-100, 100, width=32, allow_subnormal=False), _divisor)
def test_floor_divide_and_divmod_keep_the_weak_type(v, d):
    for xp in (fnp, jnp):
        assert xp.asarray(v).weak_type
    _same(fnp.asarray(v) // d, jnp.asarray(v) // d)
    _same(d // fnp.asarray(v + 200), d // jnp.asarray(v + 200))
    _same(fnp.divmod(fnp.asarray(v), d)[0], jnp.divmod(jnp.asarray(v), d)[0])
    _same(divmod(fnp.asarray(v), d)[0], divmod(jnp.asarray(v), d)[0])
    _same(fnp.array([1, 2], fnp.int16) // float(d), jnp.array([1, 2], jnp.int16) // float(d))
    _same(fnp.full(3, v) // d, jnp.full(3, v) // d)


@_fast
@given(st.floats(-100, 100, width=32, allow_subnormal=False))
def test_lax_round_keeps_the_weak_type(v):
    _same(flax.round(fnp.asarray(v)), jlax.round(jnp.asarray(v)))
    _same(flax.round(fnp.full(2, v)), jlax.round(jnp.full(2, v)))


# --- arrays made of lists ----------------------------------------------------------------

def test_a_list_of_weak_arrays_gives_a_strong_array():
    _same(fnp.array([fnp.log(0.3), fnp.log(0.1)]), jnp.array([jnp.log(0.3), jnp.log(0.1)]))
    _same(fnp.asarray([fnp.asarray(1), 2]), jnp.asarray([jnp.asarray(1), 2]))
    _same(fnp.asarray([fnp.asarray(1), np.int8(2)]), jnp.asarray([jnp.asarray(1), np.int8(2)]))
    _same(fnp.asarray([[fnp.asarray(1.5)], [2]]), jnp.asarray([[jnp.asarray(1.5)], [2]]))
    # jnp.stack keeps it.
    _same(fnp.stack([fnp.log(0.3), fnp.log(0.1)]), jnp.stack([jnp.log(0.3), jnp.log(0.1)]))
    # And under jit.
    _same(fg.jit(lambda a: fnp.array([a, 2.0]))(fnp.asarray(1.0)),
          jax.jit(lambda a: jnp.array([a, 2.0]))(jnp.asarray(1.0)))


_NP_TYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.float16,
             np.float32, np.complex64]
_leaf = st.one_of(
    st.tuples(st.sampled_from(_NP_TYPES), st.integers(0, 3)).map(lambda t: t[0](t[1])),
    st.sampled_from([0, 1, 2, 300, -1, 70000, 2.5, 1j, True]))


@_fast
@given(st.lists(_leaf, min_size=1, max_size=4), st.booleans())
def test_a_list_with_numpy_scalars_takes_jax_promotion(leaves, nested):
    obj: Any = [leaves, leaves] if nested else leaves
    assert _outcome(lambda: fnp.asarray(obj)) == _outcome(lambda: jnp.asarray(obj))
    assert _outcome(lambda: fnp.array(obj)) == _outcome(lambda: jnp.array(obj))


def test_numpy_scalars_in_lists_examples():
    _same(fnp.array([np.int8(1), 2]), jnp.array([np.int8(1), 2]))
    _same(fnp.array([np.float16(1), 2.0]), jnp.array([np.float16(1), 2.0]))
    _same(fnp.array([np.array([1, 2], np.int8), [3, 4]]),
          jnp.array([np.array([1, 2], np.int8), [3, 4]]))
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        fnp.asarray([np.uint8(1), 300])
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        jnp.asarray([np.uint8(1), 300])


def test_numpy_float32_in_a_list_with_x64():
    with fg.enable_x64(True):
        jax.config.update("jax_enable_x64", True)
        try:
            pairs = [(fnp.array([np.float32(1), 2.0]), jnp.array([np.float32(1), 2.0])),
                     (fnp.array([np.int8(1), 2]), jnp.array([np.int8(1), 2])),
                     (fnp.array([1, 2.0]), jnp.array([1, 2.0]))]
        finally:
            jax.config.update("jax_enable_x64", False)
    for ours, theirs in pairs:
        _same(ours, theirs)


# --- fft, hypot, associative_scan ----------------------------------------------------------

@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "ifftn", "rfftn", "irfftn", "rfft2", "irfft2", "fft2"])
def test_fft_results_are_strong(name):
    ours = getattr(fnp.fft, name)((fnp.arange(4) / 2.0).reshape(2, 2))
    theirs = getattr(jnp.fft, name)((jnp.arange(4) / 2.0).reshape(2, 2))
    assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)


def test_lax_fft_of_weak_operands_is_strong():
    c_ours = flax.broadcast(fnp.asarray(1j), (2,))
    c_theirs = jlax.broadcast(jnp.asarray(1j), (2,))
    for t in ("FFT", "IFFT", "IRFFT"):
        assert not flax.fft(c_ours, t, (2,)).weak_type
        assert not jlax.fft(c_theirs, t, (2,)).weak_type


@pytest.mark.parametrize("call", [
    lambda xp: xp.hypot(xp.ones(2, xp.int16), 2.0), lambda xp: xp.hypot(xp.ones((), xp.int16), 2.0),
    lambda xp: xp.hypot(xp.full(2, 1.0), 2.0), lambda xp: xp.hypot(xp.asarray(1.0), 2.0),
    lambda xp: xp.hypot(3, 4), lambda xp: xp.hypot(xp.full(2, 1), 2),
    lambda xp: xp.hypot(xp.ones(2), 2.0), lambda xp: xp.hypot(xp.asarray(np.inf), 2.0)])
def test_hypot_weak_types(call):
    _same(call(fnp), call(jnp))


@_fast
@given(st.integers(0, 6), st.booleans(), st.sampled_from([0.5, 2, True]))
def test_associative_scan_weak_types(n, reverse, fill):
    op = (lambda a, b: a | b) if fill is True else None
    ours = flax.associative_scan(op or fnp.multiply, fnp.full(n, fill), reverse=reverse)
    theirs = jlax.associative_scan(op or jnp.multiply, jnp.full(n, fill), reverse=reverse)
    _same(ours, theirs)
    if fill is not True:
        # The cumulative reductions keep it.
        for name in ("cumsum", "cumprod", "cummax"):
            if n:
                _same(getattr(flax, name)(fnp.full(n, fill), reverse=reverse),
                      getattr(jlax, name)(jnp.full(n, fill), reverse=reverse))
