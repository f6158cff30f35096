"""JAX-face fixes compared with JAX 0.10.2 (twenty-first side-by-side review): elementwise
functions of lone Python numbers give weakly typed Arrays, the weak types of the logical
functions, ``isfinite``, ``signbit``, ``rint``, ``heaviside``, ``logaddexp2`` and the set
operations, boolean inputs of ``abs``, ``isfinite``/``isinf``/``isnan``, ``bitwise_count``
and the shifts, ``isposinf``/``isneginf`` of Python numbers, ``setdiff1d`` keeping ar1's
dtype, ``round`` of booleans, integer powers with negative exponents and ``fmod`` of
booleans."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from jax_oracle import side_by_side

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _same(make: Callable[[Any, Any], Callable[[], Any]], x64: bool = False) -> None:
    ours, theirs = side_by_side(make, x64=x64)
    assert ours == theirs


def _b(n: Any) -> Any:
    return n.array([True, False])


CASES: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    # 1. Lone Python numbers give weakly typed Arrays.
    "floor_int": lambda j, n: lambda: n.floor(3),
    "ceil_int": lambda j, n: lambda: n.ceil(3),
    "round_int": lambda j, n: lambda: n.round(3),
    "around_int": lambda j, n: lambda: n.around(3),
    "real_float": lambda j, n: lambda: n.real(2.5),
    "conj_float": lambda j, n: lambda: n.conj(2.5),
    "conjugate_int": lambda j, n: lambda: n.conjugate(3),
    "positive_int": lambda j, n: lambda: n.positive(3),
    "positive_bool": lambda j, n: lambda: n.positive(True),
    "floor_bool": lambda j, n: lambda: n.floor(True),
    "nan_to_num_int": lambda j, n: lambda: n.nan_to_num(3),
    "clip_float": lambda j, n: lambda: n.clip(2.5),
    "clip_float_min": lambda j, n: lambda: n.clip(2.5, 3),
    "floor_float": lambda j, n: lambda: n.floor(2.5),
    "imag_float": lambda j, n: lambda: n.imag(2.5),
    # 2. Weak types.
    "logical_not_float": lambda j, n: lambda: n.logical_not(2.5),
    "logical_not_int": lambda j, n: lambda: n.logical_not(0),
    "logical_not_bool": lambda j, n: lambda: n.logical_not(True),
    "logical_not_jit": lambda j, n: lambda: j.jit(n.logical_not)(2.5),
    "logical_and_array": lambda j, n: lambda: n.logical_and(n.arange(3), 2.5),
    "logical_or_array": lambda j, n: lambda: n.logical_or(n.arange(3), 2.5),
    "logical_xor_array": lambda j, n: lambda: n.logical_xor(n.arange(3), 2.5),
    "logical_and_scalars": lambda j, n: lambda: n.logical_and(1, 2.5),
    "logical_and_weak_ints": lambda j, n: lambda: n.logical_and(n.arange(3), 2),
    "isfinite_int": lambda j, n: lambda: n.isfinite(3),
    "isinf_int": lambda j, n: lambda: n.isinf(3),
    "isnan_int": lambda j, n: lambda: n.isnan(3),
    "signbit_int": lambda j, n: lambda: n.signbit(3),
    "signbit_bool": lambda j, n: lambda: n.signbit(_b(n)),
    "iscomplex_bool": lambda j, n: lambda: n.iscomplex(n.array([True])),
    "isreal_bool": lambda j, n: lambda: n.isreal(n.array([True])),
    "isreal_int": lambda j, n: lambda: n.isreal(3),
    "iscomplex_float": lambda j, n: lambda: n.iscomplex(2.5),
    "rint_int": lambda j, n: lambda: n.rint(3),
    "rint_bool": lambda j, n: lambda: n.rint(_b(n)),
    "rint_float": lambda j, n: lambda: n.rint(2.5),
    "rint_complex": lambda j, n: lambda: n.rint(n.array([1.5 + 2.5j])),
    "heaviside_array": lambda j, n: lambda: n.heaviside(n.arange(-1, 2), 0.5),
    "heaviside_scalars": lambda j, n: lambda: n.heaviside(1, 0.5),
    "logaddexp2_array": lambda j, n: lambda: n.logaddexp2(n.arange(3), 2.5),
    "logaddexp2_scalars": lambda j, n: lambda: n.logaddexp2(1, 2.5),
    "setxor1d_weak": lambda j, n: lambda: n.setxor1d(n.arange(4), 2.5),
    "intersect1d_weak": lambda j, n: lambda: n.intersect1d(n.arange(4), 2.5),
    "setxor1d_sized": lambda j, n: lambda: n.setxor1d(n.arange(4), 2.5, size=2),
    "intersect1d_sized": lambda j, n: lambda: n.intersect1d(n.arange(4), 2.5, size=2),
    # 3. Boolean inputs.
    "abs_bool": lambda j, n: lambda: n.abs(_b(n)),
    "abs_python_bool": lambda j, n: lambda: n.abs(True),
    "abs_uint": lambda j, n: lambda: n.abs(n.array([1, 200], n.uint8)),
    "abs_jit_bool": lambda j, n: lambda: j.jit(n.abs)(_b(n)),
    "isfinite_bool": lambda j, n: lambda: n.isfinite(_b(n)),
    "isfinite_python_bool": lambda j, n: lambda: n.isfinite(True),
    "isinf_bool": lambda j, n: lambda: n.isinf(_b(n)),
    "isinf_jit_bool": lambda j, n: lambda: j.jit(n.isinf)(_b(n)),
    "isfinite_jit_int": lambda j, n: lambda: j.jit(n.isfinite)(n.arange(3)),
    "isnan_bool": lambda j, n: lambda: n.isnan(_b(n)),
    "bitwise_count_bool": lambda j, n: lambda: n.bitwise_count(_b(n)),
    "bitwise_count_python_bool": lambda j, n: lambda: n.bitwise_count(True),
    "left_shift_bool": lambda j, n: lambda: n.left_shift(_b(n), _b(n)),
    "right_shift_bool": lambda j, n: lambda: n.right_shift(_b(n), _b(n)),
    "left_shift_bool_int": lambda j, n: lambda: n.left_shift(_b(n), 1),
    "right_shift_jit_bool": lambda j, n: lambda: j.jit(n.right_shift)(True, _b(n)),
    "square_bool": lambda j, n: lambda: n.square(_b(n)),
    "remainder_bool": lambda j, n: lambda: n.remainder(_b(n), _b(n)),
    "floor_divide_bool": lambda j, n: lambda: n.floor_divide(True, _b(n)),
    # 4. isposinf / isneginf of Python numbers.
    "isneginf_int": lambda j, n: lambda: n.isneginf(3),
    "isposinf_int": lambda j, n: lambda: n.isposinf(3),
    "isposinf_bool": lambda j, n: lambda: n.isposinf(True),
    "isneginf_float": lambda j, n: lambda: n.isneginf(2.5),
    "isposinf_bool_array": lambda j, n: lambda: n.isposinf(n.array([True])),
    # 5. The set operations' dtypes.
    "setdiff1d_keeps_ar1": lambda j, n: lambda: n.setdiff1d(n.arange(4), n.array([1.5, 2.0])),
    "setdiff1d_python_float": lambda j, n: lambda: n.setdiff1d(n.arange(4), 2.5),
    "setdiff1d_sized": lambda j, n: lambda: n.setdiff1d(n.arange(4), n.array([1.5, 2.0]),
                                                        size=5),
    "setdiff1d_weak_ar1": lambda j, n: lambda: n.setdiff1d(2.5, n.arange(3)),
    "setdiff1d_uint": lambda j, n: lambda: n.setdiff1d(n.arange(4, dtype=n.uint8),
                                                       n.array([-1, 2], n.int8)),
    "setdiff1d_jit": lambda j, n: lambda: j.jit(
        lambda a, b: n.setdiff1d(a, b, size=5))(n.arange(4), n.array([1.5, 2.0])),
    "union1d_mixed": lambda j, n: lambda: n.union1d(n.arange(4), n.array([1.5, 2.0])),
    "intersect1d_mixed": lambda j, n: lambda: n.intersect1d(n.arange(4), n.array([1.5, 2.0])),
    "setxor1d_mixed": lambda j, n: lambda: n.setxor1d(n.arange(4), n.array([1.5, 2.0])),
    # 6. round of booleans, integer powers, fmod of booleans.
    "round_bool": lambda j, n: lambda: n.round(n.array([True])),
    "around_bool": lambda j, n: lambda: n.around(n.array([True])),
    "round_python_bool": lambda j, n: lambda: n.round(True),
    "power_negative": lambda j, n: lambda: n.power(n.array([2, 3]), n.array([-1, 2])),
    "power_negatives": lambda j, n: lambda: n.power(
        n.array([-3, -2, -1, 0, 1, 2, 3, 5] * 3), n.array([-1] * 8 + [-2] * 8 + [-3] * 8)),
    "power_high_bits": lambda j, n: lambda: n.power(n.array([2, 3, 3]), n.array([64, 65, 33])),
    "power_zero_zero": lambda j, n: lambda: n.power(n.array([0, 0]), n.array([0, -1])),
    "power_jit": lambda j, n: lambda: j.jit(n.power)(
        n.array([-2, -1, 0, 1, 2, 3]), n.array([-1, -1, -1, -1, -1, -3])),
    "power_int8": lambda j, n: lambda: n.power(n.array([2, -1, 1, 0], n.int8),
                                               n.array([-1, -3, -5, -1], n.int8)),
    "power_uint8": lambda j, n: lambda: n.power(n.array([2, 3], n.uint8),
                                                n.array([3, 9], n.uint8)),
    "power_weak_base": lambda j, n: lambda: n.power(2, n.array([-1, 3])),
    "power_operator": lambda j, n: lambda: n.array([2, -1, 1, 0]) ** n.array([-1, -2, -1, -2]),
    "power_bools": lambda j, n: lambda: n.power(True, True),
    "power_bool_scalar": lambda j, n: lambda: n.power(_b(n), 2),
    "power_scalar_exponent": lambda j, n: lambda: n.power(n.array([2, 3]), 3),
    "fmod_bool": lambda j, n: lambda: n.fmod(n.array([True, False]), n.array([False, True])),
    "fmod_python_bools": lambda j, n: lambda: n.fmod(True, False),
    "fmod_jit_bool": lambda j, n: lambda: j.jit(n.fmod)(_b(n), n.array([False, True])),
    "fmod_int_zero": lambda j, n: lambda: n.fmod(n.array([5, -5]), n.array([0, 3])),
    "fmod_bool_int": lambda j, n: lambda: n.fmod(n.array([True]), 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    _same(CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_x64(name: str) -> None:
    _same(CASES[name], x64=True)


def test_gradients_still_flow() -> None:
    for f in (lambda n: n.floor, lambda n: n.real, lambda n: n.positive, lambda n: n.abs,
              lambda n: lambda x: n.clip(x, 0.0, 1.0), lambda n: lambda x: n.power(x, 3.0)):
        ours = fg.grad(lambda x, f=f: f(fnp)(x) * 2.0)(0.5)
        theirs = jax.grad(lambda x, f=f: f(jnp)(x) * 2.0)(0.5)
        assert float(ours) == pytest.approx(float(theirs))
