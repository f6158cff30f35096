"""A Python number given to a lax binary function is an operand of its default dtype (weakly
typed), never promoted toward the other operand, so mixed dtypes raise JAX's TypeError with
its text. Before, ``lax.add(bf16_array, 1.0)`` computed in bfloat16 and
``lax.add(f32_array, 1.0)`` with x64 on computed in float32, where JAX raises."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.numpy as fnp
from funcgrad import lax as flax
from funcgrad.config import enable_x64


def _cases(jnp, lax):
    return {
        "bf16_plus_float": lambda: lax.add(jnp.ones(3, jnp.bfloat16), 1.0),
        "f32_plus_float": lambda: lax.add(jnp.ones(3, jnp.float32), 1.0),
        "i32_plus_int": lambda: lax.add(jnp.ones(3, jnp.int32), 1),
        "i8_plus_int": lambda: lax.add(jnp.ones(3, jnp.int8), 1),
        "f16_times_int": lambda: lax.mul(jnp.ones(3, jnp.float16), 2),
        "two_floats": lambda: lax.add(1.0, 2.0),
        "i32_plus_float": lambda: lax.add(jnp.ones(3, jnp.int32), 1.0),
        "u8_max_int": lambda: lax.max(jnp.ones(3, jnp.uint8), 0),
        "pow_float": lambda: lax.pow(jnp.ones(3, jnp.float32), 2.0),
        "pow_int": lambda: lax.pow(jnp.ones(3, jnp.float16), 2),
        "f16_minus_f32": lambda: lax.sub(jnp.ones(3, jnp.float16), jnp.float32(1)),
        "int_div": lambda: lax.div(jnp.ones(3, jnp.int32), 2),
        "i8_rem": lambda: lax.rem(jnp.ones(3, jnp.int8), 2),
        "bf16_atan2": lambda: lax.atan2(jnp.ones(3, jnp.bfloat16), 1.0),
        "i16_eq": lambda: lax.eq(jnp.ones(3, jnp.int16), 1),
        "i8_gt": lambda: lax.gt(jnp.ones(3, jnp.int8), 1),
        "u8_shift": lambda: lax.shift_left(jnp.ones(3, jnp.uint8), 1),
        "i8_and": lambda: lax.bitwise_and(jnp.ones(3, jnp.int8), 1),
        "i8_xor": lambda: lax.bitwise_xor(jnp.ones(3, jnp.int8), 1),
        "bf16_nextafter": lambda: lax.nextafter(jnp.ones(3, jnp.bfloat16), 2.0),
        "real_times_complex": lambda: lax.mul(jnp.ones(2), 1j),
        "complex_times_float": lambda: lax.mul(jnp.ones(2, jnp.complex64), 2.0),
        "same_dtype_scalar": lambda: lax.add(jnp.ones(3, jnp.bfloat16), jnp.bfloat16(1)),
    }


def _outcome(fn):
    try:
        r = fn()
    except TypeError as e:  # funcgrad's DTypeError is a TypeError, as JAX raises
        return f"TypeError: {e}"
    return (str(r.dtype), bool(getattr(r, "weak_type", False)), np.asarray(r).tolist())


@pytest.mark.x32
@pytest.mark.parametrize("case", sorted(_cases(fnp, flax)))
def test_matches_jax_32_bit(case):
    jax = pytest.importorskip("jax")
    mine = _outcome(_cases(fnp, flax)[case])
    theirs = _outcome(_cases(jax.numpy, jax.lax)[case])
    assert mine == theirs


@pytest.mark.parametrize("case", sorted(_cases(fnp, flax)))
def test_matches_jax_64_bit(case):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    try:
        theirs = _outcome(_cases(jax.numpy, jax.lax)[case])
    finally:
        jax.config.update("jax_enable_x64", False)
    assert _outcome(_cases(fnp, flax)[case]) == theirs


@pytest.mark.x32
def test_known_outcomes_without_jax():
    with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, "
                       r"got bfloat16, float32. \(Tip: jnp.add is"):
        flax.add(fnp.ones(3, fnp.bfloat16), 1.0)
    with pytest.raises(TypeError, match=r"^lax.and requires .* got int8, int32.$"):
        flax.bitwise_and(fnp.ones(3, fnp.int8), 1)
    r = flax.add(1.0, 2.0)
    assert r.dtype == np.float32 and r.weak_type
    with enable_x64(True):
        with pytest.raises(TypeError, match="got float32, float64"):
            flax.add(fnp.ones(3, fnp.float32), 1.0)
