"""NumPy 2 / NEP 50 type promotion: funcgrad.dtypes.promote, funcgrad.numpy, make_jaxpr.

NumPy 2 itself is the oracle: every case compares with what NumPy computes on the
same inputs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.errors import DTypeError

assert np.__version__.split(".")[0] >= "2", "these tests compare with NumPy 2 (NEP 50)"

ALL = [np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)]
NUMERIC = [d for d in ALL if d.kind != "b"]
REAL = [d for d in NUMERIC if d.kind != "c"]
SCALARS = [True, 1, 1.0, 1j]

dtype_st = st.sampled_from(ALL)
scalar_st = st.sampled_from(SCALARS)


def np_result(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args).dtype


def weak(value):
    return (dtypes.scalar_kind_dtype(value), True)


# ------------------------------------------------------------------ the brief's table


@pytest.mark.parametrize(("array_dtype", "scalar", "expected"), [
    (np.float32, 2.0, np.float32),
    (np.int8, 1, np.int8),
    (np.int32, 2.0, np.float64),
    (np.bool_, 1, np.int64),
    (np.float16, 1.0, np.float16),
    (np.float32, 1j, np.complex64),
    (np.float64, 1j, np.complex128),
    (np.uint8, 3, np.uint8),
    (np.int16, True, np.int16),
    (np.float32, True, np.float32),
    (np.complex64, 2.0, np.complex64),
    (np.uint64, 1.0, np.float64),
    (np.float16, 1j, np.complex64),
    (np.int64, 1j, np.complex128),
])
def test_array_with_python_scalar(array_dtype, scalar, expected) -> None:
    x = np.ones(3, array_dtype)
    expected = np.dtype(expected)
    assert np_result(np.multiply, x, scalar) == expected  # the oracle agrees
    assert dtypes.promote((np.dtype(array_dtype), False), weak(scalar)) == (expected, False)
    assert dtypes.promote(weak(scalar), (np.dtype(array_dtype), False)) == (expected, False)
    assert fnp.multiply(x, scalar).dtype == expected
    assert fnp.multiply(scalar, x).dtype == expected
    assert fnp.result_type(x, scalar) == expected
    cj = fg.make_jaxpr(lambda a: a * scalar)(x)
    assert cj.out_avals[0].dtype == expected
    assert not cj.out_avals[0].weak_type


@pytest.mark.parametrize(("a", "b", "expected"), [
    (np.uint8, np.int8, np.int16),
    (np.uint16, np.int16, np.int32),
    (np.uint32, np.int32, np.int64),
    (np.uint64, np.int64, np.float64),
    (np.int8, np.float16, np.float16),
    (np.int16, np.float16, np.float32),
    (np.int32, np.float32, np.float64),
    (np.float32, np.complex64, np.complex64),
    (np.float64, np.complex64, np.complex128),
    (np.bool_, np.int8, np.int8),
    (np.bool_, np.float16, np.float16),
])
def test_array_array(a, b, expected) -> None:
    x, y = np.ones(2, a), np.ones(2, b)
    assert np_result(np.add, x, y) == np.dtype(expected)
    assert dtypes.promote((np.dtype(a), False), (np.dtype(b), False)) == (np.dtype(expected), False)
    assert fnp.add(x, y).dtype == np.dtype(expected)
    assert fnp.result_type(x, y) == np.dtype(expected)


@pytest.mark.parametrize(("s1", "s2", "expected"), [
    (1, 1, np.int64), (1, 2.0, np.float64), (2.0, 3.0, np.float64), (1, 1j, np.complex128),
    (1.0, 1j, np.complex128), (True, 1, np.int64), (True, 2.5, np.float64),
    (True, True, np.bool_),
])
def test_python_scalars_only_give_default_dtypes(s1, s2, expected) -> None:
    expected = np.dtype(expected)
    dt, is_weak = dtypes.promote(weak(s1), weak(s2))
    assert dt == expected and is_weak
    assert fnp.result_type(s1, s2) == expected
    assert np.result_type(s1, s2) == expected
    if expected != np.bool_:
        assert fnp.add(s1, s2).dtype == expected
        assert np.asarray(fnp.add(s1, s2)) == np.add(s1, s2)


@pytest.mark.parametrize(("value", "expected"), [
    (True, np.bool_), (3, np.int64), (3.0, np.float64), (3j, np.complex128)])
def test_scalar_kind_dtype_and_weak_aval(value, expected) -> None:
    assert dtypes.scalar_kind_dtype(value) == np.dtype(expected)
    cj = fg.make_jaxpr(lambda x: x)(value)
    assert cj.in_avals[0].dtype == np.dtype(expected)
    assert cj.in_avals[0].weak_type


def test_numpy_scalars_and_zero_d_arrays_are_strong() -> None:
    x = np.ones(2, np.float32)
    for other in (np.float64(2.0), np.array(2.0)):
        assert np_result(np.add, x, other) == np.float64
        assert fnp.add(x, other).dtype == np.float64
        assert fg.make_jaxpr(lambda a, o=other: a + o)(x).out_avals[0].dtype == np.float64
    assert fnp.add(x, np.float32(2.0)).dtype == np.float32
    assert fnp.add(np.float32(1.0), 2.0).dtype == np.float32


def test_weak_operand_only_raises_the_kind() -> None:
    # the example of the dtypes module docstring
    assert dtypes.promote((np.dtype("float32"), False), (np.dtype("float64"), True)) == (
        np.dtype("float32"), False)
    assert dtypes.promote((dtypes.int8, False), (dtypes.int64, True)) == (dtypes.int8, False)
    assert dtypes.promote((dtypes.int8, False), (dtypes.float64, True)) == (
        dtypes.float64, False)


def test_promote_needs_an_operand() -> None:
    with pytest.raises(DTypeError):
        dtypes.promote()


def test_python_int_out_of_range_raises_like_numpy() -> None:
    x = np.ones(2, np.int8)
    with pytest.raises(OverflowError):
        _ = x + 1000
    with pytest.raises(OverflowError):
        fnp.add(x, 1000)


def test_true_divide_of_ints_is_float64() -> None:
    x = np.arange(1, 4, dtype=np.int8)
    assert np_result(np.true_divide, x, x) == fnp.divide(x, x).dtype == np.float64
    assert fnp.divide(np.ones(2, np.float16), 2).dtype == np.float16


def test_result_is_computed_in_the_promoted_dtype() -> None:
    # int8 stays int8 and wraps like NumPy
    x = np.array([127, -128], np.int8)
    np.testing.assert_array_equal(fnp.add(x, 1), x + 1)
    # float16 keeps float16 rounding
    h = np.array([1.0, 2049.0], np.float16)
    np.testing.assert_array_equal(fnp.add(h, 1.0), h + 1.0)


# ------------------------------------------------------------------ hypothesis vs NumPy


@settings(max_examples=60, deadline=None)
@given(dtype_st, dtype_st)
def test_promote_strong_pairs_equals_np_result_type(a, b) -> None:
    assert dtypes.promote((a, False), (b, False)) == (np.result_type(a, b), False)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NUMERIC), dtype_st)
def test_fnp_add_on_drawn_array_pair_matches_numpy(a, b) -> None:
    x = np.arange(3).astype(a)
    y = np.arange(3).astype(b)
    expected = np_result(np.add, x, y)
    assert expected == np.result_type(a, b)
    got = fnp.add(x, y)
    assert got.dtype == expected
    assert fnp.add(y, x).dtype == expected
    assert fnp.result_type(x, y) == expected
    np.testing.assert_array_equal(got, x + y)


@settings(max_examples=60, deadline=None)
@given(dtype_st, dtype_st)
def test_staged_pair_matches_numpy_and_converts_explicitly(a, b) -> None:
    if a.kind == "b" and b.kind == "b":
        return  # bool + bool: see test_bool_arithmetic_like_numpy
    x, y = np.ones(2, a), np.ones(2, b)
    expected = np.result_type(a, b)
    cj = fg.make_jaxpr(fnp.multiply)(x, y)
    assert cj.out_avals[0].dtype == expected
    converts = [e for e in cj.eqns if e.primitive.name == "convert_element_type"]
    assert len(converts) == (a != expected) + (b != expected)
    for e in converts:
        assert e.params["new_dtype"] == expected
        assert e.outputs[0].aval.dtype == expected
    mul = [e for e in cj.eqns if e.primitive.name == "mul"]
    assert len(mul) == 1
    assert all(v.aval.dtype == expected for v in mul[0].inputs)


@settings(max_examples=60, deadline=None)
@given(dtype_st, scalar_st)
def test_drawn_array_with_weak_scalar_matches_numpy(a, s) -> None:
    if a.kind == "b" and isinstance(s, bool):
        return  # bool + bool: see test_bool_arithmetic_like_numpy
    x = np.ones(3, a)
    expected = np_result(np.multiply, x, s)
    assert dtypes.promote((a, False), weak(s)) == (expected, False)
    assert fnp.multiply(x, s).dtype == expected
    assert fnp.multiply(s, x).dtype == expected
    assert fnp.result_type(x, s) == expected
    assert fg.make_jaxpr(lambda v: v * s)(x).out_avals[0].dtype == expected


@settings(max_examples=30, deadline=None)
@given(dtype_st, dtype_st, scalar_st)
def test_three_operands(a, b, s) -> None:
    expected = np.result_type(np.ones(1, a), np.ones(1, b), s)
    assert dtypes.promote((a, False), (b, False), weak(s))[0] == expected
    assert fnp.result_type(np.ones(1, a), np.ones(1, b), s) == expected


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(REAL), st.sampled_from(REAL))
def test_comparisons_give_bool_and_compare_in_promoted_dtype(a, b) -> None:
    x = np.array([0, 1, 2]).astype(a)
    y = np.array([2, 1, 0]).astype(b)
    got = fnp.less(x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, x < y)


# ------------------------------------------------------------------ make_jaxpr shows it


def test_make_jaxpr_int32_times_float_scalar() -> None:
    cj = fg.make_jaxpr(lambda x: x * 2.0)(np.ones(3, np.int32))
    assert str(cj) == (
        "{ lambda ; a:i32[3]. let\n"
        "    b:f64[3] = convert_element_type[new_dtype=float64 weak_type=False] a\n"
        "    c:f64[3] = mul b 2.0:f64[]\n"
        "  in (c,) }"
    )


def test_make_jaxpr_uint8_plus_int8() -> None:
    cj = fg.make_jaxpr(lambda x, y: x + y)(np.ones(3, np.uint8), np.ones(3, np.int8))
    assert str(cj) == (
        "{ lambda ; a:u8[3] b:i8[3]. let\n"
        "    c:i16[3] = convert_element_type[new_dtype=int16 weak_type=False] a\n"
        "    d:i16[3] = convert_element_type[new_dtype=int16 weak_type=False] b\n"
        "    e:i16[3] = add c d\n"
        "  in (e,) }"
    )


def test_make_jaxpr_bool_plus_int_and_complex() -> None:
    cj = fg.make_jaxpr(lambda x: x + 1)(np.ones(3, np.bool_))
    names = [e.primitive.name for e in cj.eqns]
    assert names == ["convert_element_type", "add"]
    assert cj.eqns[0].params["new_dtype"] == np.int64
    cj = fg.make_jaxpr(lambda x: x * 1j)(np.ones(3, np.float32))
    assert "convert_element_type[new_dtype=complex64 weak_type=False] a" in str(cj)
    assert "mul b 1j:c64[]" in str(cj)


def test_make_jaxpr_no_conversion_when_weak_scalar_fits() -> None:
    for dt, scalar, lit in ((np.float32, 2.0, "2.0:f32[]"), (np.float16, 2.0, "2.0:f16[]"),
                            (np.int8, 2, "2:i8[]")):
        x = np.ones(2, dt)
        cj = fg.make_jaxpr(lambda v, s=scalar: v * s)(x)
        assert [e.primitive.name for e in cj.eqns] == ["mul"]
        assert lit in str(cj)


def test_make_jaxpr_where_promotes_branches() -> None:
    cj = fg.make_jaxpr(lambda c, a, b: fnp.where(c, a, b))(
        np.ones(2, bool), np.ones(2, np.float32), np.ones(2, np.int32))
    assert cj.out_avals[0].dtype == np.result_type(np.float32, np.int32)
    assert any(e.primitive.name == "convert_element_type" for e in cj.eqns)


# ------------------------------------------------------------------ fnp.result_type


def test_result_type_arrays_and_scalars() -> None:
    assert fnp.result_type(np.ones(1, np.float32), 2.0) == np.float32
    assert fnp.result_type(np.ones(1, np.int32), 2.0) == np.float64
    assert fnp.result_type(np.ones(1, np.uint8), np.ones(1, np.int8)) == np.int16
    assert fnp.result_type(1, 2) == np.int64
    assert fnp.result_type(np.ones(1, np.int8)) == np.int8


@pytest.mark.parametrize("spec", [np.int8, np.dtype("int8"), "int8"])
def test_result_type_accepts_dtypes(spec) -> None:
    assert np.result_type(spec, 1) == np.int8
    assert fnp.result_type(spec, 1) == np.int8


# ------------------------------------------------------------------ divergences from NumPy


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum"])
def test_bool_arithmetic_like_numpy(name) -> None:
    x = np.array([True, False, True])
    y = np.array([True, True, False])
    expected = getattr(np, name)(x, y)
    got = getattr(fnp, name)(x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, expected)


def test_bool_array_plus_python_bool() -> None:
    x = np.array([True, False])
    assert fnp.add(x, True).dtype == (x + True).dtype == np.bool_


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16])
def test_unary_float_function_of_small_ints_like_numpy(dt) -> None:
    x = np.ones(2, dt)
    assert fnp.sin(x).dtype == np.sin(x).dtype


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint32, np.uint64])
def test_unary_float_function_of_wide_ints_like_numpy(dt) -> None:
    x = np.ones(2, dt)
    assert fnp.sin(x).dtype == np.sin(x).dtype == np.float64
    assert fnp.exp(x).dtype == np.exp(x).dtype == np.float64
