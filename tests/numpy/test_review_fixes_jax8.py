"""funcgrad.numpy details compared with JAX 0.10.2: bfloat16 counted as a float (its NumPy
kind is 'V') by ``partition``/``argpartition`` (NaNs last), ``angle`` of a real scalar,
``nanvar``/``nanstd``'s result dtype, ``quantile``'s q, ``geomspace`` and the
``linear_ramp`` pad; ``var``/``std``/``nanvar``/``nanstd`` with an integer or bool
``dtype=`` and with ``mean=``, in 32- and 64-bit mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.numpy as fnp
from tests.numpy._compare import assert_same

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")

# Both modes: x32 runs funcgrad and JAX at the 32-bit default, x64 both in 64-bit mode.
MODES = [pytest.param(False, marks=pytest.mark.x32, id="x32"), pytest.param(True, id="x64")]
FLOATS = ["bfloat16", "float16", "float32"]


def _outcome(f: Any, mod: Any) -> Any:
    try:
        return f(mod), None
    except Exception as e:  # noqa: BLE001 - the error is part of the comparison
        return None, e


def _compare(f: Any, *, weak: bool = True, message: bool = False) -> None:
    """``f(jnp)`` and ``f(fnp)`` give the same leaves (dtype and weak type included), or
    errors of one type (and message, with ``message``)."""
    theirs, t_err = _outcome(f, jnp)
    ours, o_err = _outcome(f, fnp)
    if t_err is not None:
        assert o_err is not None and isinstance(o_err, type(t_err)), (t_err, o_err)
        if message:
            assert str(o_err) == str(t_err), (o_err, t_err)
        return
    assert o_err is None, o_err
    if getattr(theirs, "dtype", None) == jnp.bfloat16:
        # assert_same reads bfloat16 (kind 'V') as exact: compare it in float32, 2e-2 as
        # for float16.
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours, theirs)
        assert not weak or bool(ours.weak_type) == bool(theirs.weak_type), (ours, theirs)
        np.testing.assert_allclose(np.asarray(ours.astype("float32")),
                                   np.asarray(theirs.astype("float32")), rtol=2e-2,
                                   atol=2e-2, equal_nan=True)
        return
    assert_same(ours, theirs, weak=weak)


def _quarters(lo: int = -32, hi: int = 32) -> Any:
    # Multiples of 1/4 in [-8, 8]: exact in bfloat16 and float16, no subnormals.
    return st.integers(lo, hi).map(lambda k: k / 4)


def _shapes(min_dims: int = 1) -> Any:
    return hnp.array_shapes(min_dims=min_dims, max_dims=2, min_side=1, max_side=5)


# ------------------------------------------------------------------ bfloat16 as a float

@settings(max_examples=25, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(FLOATS), arg=st.booleans())
def test_partition_of_bfloat16_puts_nans_last_as_jax(data, dtype, arg):
    n = data.draw(st.integers(2, 7))
    vals = data.draw(st.lists(_quarters(), min_size=n, max_size=n, unique=True))
    nans = data.draw(st.lists(st.integers(0, n - 1), max_size=2))
    x = np.array(vals, np.float64)
    x[nans] = np.nan
    x = x.astype(jnp.dtype(dtype))
    k = data.draw(st.integers(0, n - 1))
    name = "argpartition" if arg else "partition"
    theirs = getattr(jnp, name)(jnp.asarray(x), k)
    ours = getattr(fnp, name)(fnp.asarray(x), k)
    if arg:
        # The kth entry and the sets on either side; the order within a side is free.
        t, o = np.asarray(theirs), np.asarray(ours)
        assert o.dtype == t.dtype
        assert o[k] == t[k] and set(o[:k]) == set(t[:k])
    else:
        t = np.asarray(theirs.astype("float32"))
        o = np.asarray(ours.astype("float32"))
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(o[k], t[k])
        np.testing.assert_array_equal(np.sort(o[:k]), np.sort(t[:k]))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=15, deadline=None)
@given(v=_quarters(), dtype=st.sampled_from(FLOATS), deg=st.booleans(),
       scalar=st.booleans())
def test_angle_of_real_bfloat16_scalar_is_default_float_as_jax(x64, v, dtype, deg, scalar):
    x = np.asarray(v, jnp.dtype(dtype))
    arg = x[()] if scalar else x  # a NumPy scalar, or a rank-0 array
    _compare(lambda m: m.angle(m.asarray(arg), deg=deg))
    _compare(lambda m: m.angle(arg, deg=deg))
    _compare(lambda m: m.angle(m.asarray([x, -x]), deg=deg))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=15, deadline=None)
@given(data=st.data(), name=st.sampled_from(["nanvar", "nanstd"]),
       dtype=st.sampled_from(FLOATS), axis=st.sampled_from([None, 0, -1]))
def test_nanvar_of_16_bit_floats_keeps_their_dtype_as_jax(x64, data, name, dtype, axis):
    x = data.draw(hnp.arrays(np.float64, _shapes(), elements=_quarters())).astype(
        jnp.dtype(dtype))
    if x.size > 1:
        x.flat[0] = np.nan
    _compare(lambda m: getattr(m, name)(m.asarray(x), axis=axis))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=10, deadline=None)
@given(q=st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), dtype=st.sampled_from(FLOATS),
       method=st.sampled_from(["linear", "lower", "nearest"]))
def test_quantile_takes_a_bfloat16_q_as_jax(x64, q, dtype, method):
    a = np.arange(9.0, dtype=np.float32)
    _compare(lambda m: m.quantile(m.asarray(a), m.asarray(q, dtype=dtype), method=method))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_geomspace_between_bfloat16_values_keeps_the_dtype_as_jax(x64, dtype):
    start, stop = (jnp.asarray(v, dtype) for v in (0.25, 4.0))
    _compare(lambda m: m.geomspace(m.asarray(np.asarray(start)), m.asarray(np.asarray(stop)),
                                   5))


@settings(max_examples=15, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(FLOATS))
def test_linear_ramp_pad_of_bfloat16_as_jax(data, dtype):
    x = data.draw(hnp.arrays(np.float64, _shapes(), elements=_quarters())).astype(
        jnp.dtype(dtype))
    widths = data.draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)),
                                min_size=x.ndim, max_size=x.ndim))
    ends = data.draw(st.lists(st.tuples(_quarters(-8, 8), _quarters(-8, 8)),
                              min_size=x.ndim, max_size=x.ndim))
    # Not bit for bit: XLA fuses the ramp's arithmetic (a bfloat16 ulp of difference).
    _compare(lambda m: m.pad(m.asarray(x), tuple(widths), mode="linear_ramp",
                             end_values=tuple(ends)))


# ------------------------------------------------------------------ integer dtype=

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint32"]


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=30, deadline=None)
@given(data=st.data(), name=st.sampled_from(["var", "nanvar"]),
       dtype=st.sampled_from(INT_DTYPES), axis=st.sampled_from([None, 0, -1]),
       ddof=st.integers(0, 3), keepdims=st.booleans(), floats=st.booleans())
def test_variance_with_an_integer_dtype_as_jax(x64, data, name, dtype, axis, ddof,
                                               keepdims, floats):
    # JAX computes in the integer dtype (a truncated integer mean); var's NaN for no
    # degrees of freedom makes a weakly typed float, nanvar divides in floats and casts.
    elements = _quarters(0 if dtype.startswith("u") else -32, 32) if floats else \
        st.integers(0 if dtype.startswith("u") else -20, 20)
    x = data.draw(hnp.arrays(np.float32 if floats else np.int32, _shapes(),
                             elements=elements))
    _compare(lambda m: getattr(m, name)(m.asarray(x), axis=axis, dtype=dtype, ddof=ddof,
                                        keepdims=keepdims))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=10, deadline=None)
@given(x=hnp.arrays(np.int32, _shapes(), elements=st.integers(-9, 9)),
       where=st.booleans())
def test_variance_with_an_integer_dtype_and_where_as_jax(x64, x, where):
    mask = np.arange(x.size).reshape(x.shape) % 2 == (1 if where else 0)
    for name in ("var", "nanvar"):
        _compare(lambda m: getattr(m, name)(m.asarray(x), axis=-1, dtype="int32",  # noqa: B023
                                            where=mask))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool", np.int16, int, bool])
def test_std_with_an_integer_dtype_raises_as_jax(x64, name, dtype):
    # std: JAX's ValueError; nanstd: lax.sqrt's TypeError on the integer nanvar; a bool
    # dtype: lax.div's TypeError in the mean.
    _compare(lambda m: getattr(m, name)(m.arange(5), dtype=dtype), message=True)
    _compare(lambda m: getattr(m, name)(m.asarray([[1.5, 2.0], [4.0, -3.0]]), axis=0,
                                        dtype=dtype), message=True)


# ------------------------------------------------------------------ mean=

@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), name=st.sampled_from(["var", "std", "nanvar", "nanstd"]),
       dtype=st.sampled_from([None, "float32", "bfloat16", "float16", "int32"]),
       in_dtype=st.sampled_from(["float32", "bfloat16", "int32"]),
       axis=st.sampled_from([None, 0, 1]), ddof=st.integers(0, 1))
def test_variance_with_a_given_mean_as_jax(x64, data, name, dtype, in_dtype, axis, ddof):
    x = data.draw(hnp.arrays(np.float64, data.draw(_shapes(min_dims=2)),
                             elements=_quarters())).astype(jnp.dtype(in_dtype))
    kind = data.draw(st.sampled_from(["keepdims", "scalar", "full"]))
    if kind == "keepdims":
        shape = tuple(1 if axis is None or i == axis else d for i, d in enumerate(x.shape))
    elif kind == "full":
        shape = x.shape
    else:
        shape = ()
    mean = data.draw(hnp.arrays(np.float32, shape, elements=_quarters()))
    _compare(lambda m: getattr(m, name)(m.asarray(x), axis=axis, dtype=dtype, ddof=ddof,
                                        mean=m.asarray(mean)), message=True)


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("mean", [np.ones(4), np.ones((2, 1)), np.ones((1, 3, 4)), [1.0, 2.0],
                                  2, 1.5j, np.float32(0.5)])
def test_variance_mean_shapes_and_errors_as_jax(x64, name, mean):
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    _compare(lambda m: getattr(m, name)(m.asarray(x), axis=1, mean=mean), message=True)
