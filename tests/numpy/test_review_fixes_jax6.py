"""funcgrad.numpy details compared with JAX 0.10.2 in 32- and 64-bit mode: ``nanvar``/
``var``'s ``dtype=`` (and inf among the values); ``linspace``/``geomspace`` of one value;
``unique`` with ``size=`` on empty input and the array API's ``unique_*`` (NaNs kept apart);
``logsumexp``'s promotion with ``b`` and ``where`` and its real result beside a complex
sign; ``insert`` into and of empty arrays; ``quantile``/``percentile``'s q dtype, errors
and JAX's reciprocal in ``percentile``; the dtypes of ``tri``, ``sort_complex``, ``vecdot``
and the histograms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax_oracle import same_error

import funcgrad.nn as fnn
import funcgrad.numpy as fnp
import funcgrad.scipy.special as fss
from tests.numpy._compare import assert_same

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")

# Both modes: x32 runs funcgrad and JAX at the 32-bit default, x64 both in 64-bit mode.
MODES = [pytest.param(False, marks=pytest.mark.x32, id="x32"), pytest.param(True, id="x64")]


def _floats(lo: float = -5, hi: float = 5) -> Any:
    # Normal numbers only: XLA flushes subnormals to zero.
    return st.floats(lo, hi, allow_subnormal=False, width=32)


def _same(ours: Any, theirs: Any, rtol: float | None = None) -> None:
    assert_same(ours, theirs, weak=False, rtol=rtol)


def _outcome(f: Any, mod: Any) -> Any:
    try:
        return f(mod), None
    except Exception as e:  # noqa: BLE001 - the error is part of the comparison
        return None, e


def _compare(f: Any, rtol: float | None = None) -> None:
    """``f(jnp)`` and ``f(fnp)`` give the same leaves, or errors of one type."""
    theirs, t_err = _outcome(f, jnp)
    ours, o_err = _outcome(f, fnp)
    if t_err is not None:
        assert o_err is not None and isinstance(o_err, type(t_err)), (t_err, o_err)
        return
    assert o_err is None, o_err
    _same(ours, theirs, rtol)


# ------------------------------------------------------------------ nanvar / var

SPECIAL = st.sampled_from([np.nan, np.inf, -np.inf])


def _with_specials(shape: Any) -> Any:
    return hnp.arrays(np.float64, shape, elements=_floats() | SPECIAL)


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=25, deadline=None)
@given(x=_with_specials(hnp.array_shapes(min_dims=1, max_dims=2, max_side=4)),
       name=st.sampled_from(["nanvar", "nanstd", "var", "std"]), ddof=st.integers(0, 1),
       axis=st.sampled_from([None, 0, -1]), keepdims=st.booleans())
def test_variances_with_inf_and_nan_match_jax(x64, x, name, ddof, axis, keepdims):
    _compare(lambda m: getattr(m, name)(x, axis=axis, ddof=ddof, keepdims=keepdims))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("name", ["nanvar", "nanstd", "var", "std", "nanmean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, "float32", float, np.complex64,
                                   np.complex128])
@pytest.mark.parametrize("data", [np.array([1.0, np.inf, 2.5, np.nan], np.float32),
                                  np.array([1.0, 2.5, np.nan, 4.0], np.float16),
                                  np.array([1 + 2j, np.nan, 3j], np.complex64),
                                  np.array([1, 2, 4], np.int8)])
def test_variance_dtype_argument_as_jax(x64, name, dtype, data):
    # A NumPy scalar type (np.float64) was read as an array; a complex dtype keeps the real
    # variance in a complex array; a real one of complex data is JAX's ValueError.
    _compare(lambda m: getattr(m, name)(data, dtype=dtype))


# ------------------------------------------------------------------ linspace / geomspace

@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=20, deadline=None)
@given(start=_floats(0.5, 50), stop=_floats(-50, 50) | SPECIAL,
       name=st.sampled_from(["linspace", "geomspace", "logspace"]),
       endpoint=st.booleans(), dtype=st.sampled_from([None, int, np.float32]),
       as_array=st.booleans())
def test_one_value_is_start_as_jax(x64, start, stop, name, endpoint, dtype, as_array):
    # geomspace(1, -8, 1) is [1] in JAX: the one value never meets the (NaN) stop.
    # (10 ** 16.008 as an integer shows float64 pow's last bit, where libm and XLA differ.)
    assume(not (name == "logspace" and dtype is int and start > 15))
    s = np.array([start, 2 * start]) if as_array else start
    _compare(lambda m: getattr(m, name)(s, stop, 1, endpoint=endpoint, dtype=dtype))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize(("num", "endpoint"), [(0, True), (0, False), (1, True), (1, False),
                                               (2, True), (5, False)])
def test_linspace_step_is_nan_without_one(x64, num, endpoint):
    _compare(lambda m: m.linspace(1.0, 4.0, num, endpoint=endpoint, retstep=True))


# ------------------------------------------------------------------ unique

@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([(0,), (0, 2), (2, 0)]),
       dtype=st.sampled_from([np.float32, np.int32, np.bool_]), size=st.integers(0, 3),
       fill=st.sampled_from([None, 5, 0.5]), flags=st.tuples(st.booleans(), st.booleans(),
                                                             st.booleans()))
def test_unique_with_size_of_empty_input(x64, shape, dtype, size, fill, flags):
    x = np.zeros(shape, dtype)
    ri, rv, rc = flags
    _compare(lambda m: m.unique(x, return_index=ri, return_inverse=rv, return_counts=rc,
                                size=size, fill_value=fill))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=25, deadline=None)
@given(x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=4),
                    elements=st.sampled_from([0.0, 1.0, -1.0, np.nan, np.inf])),
       name=st.sampled_from(["unique_values", "unique_counts", "unique_inverse",
                             "unique_all"]),
       size=st.none() | st.integers(1, 6), fill=st.sampled_from([None, 3.0]))
def test_array_api_unique_keeps_nans_apart(x64, x, name, size, fill):
    _compare(lambda m: tuple(np.asarray(v) for v in np.atleast_1d(
        getattr(m, name)(x, size=size, fill_value=fill)) if name != "unique_values")
        if name != "unique_values" else getattr(m, name)(x, size=size, fill_value=fill))


# ------------------------------------------------------------------ logsumexp

def _lse_pairs() -> list[Any]:
    import jax.nn as jnn  # noqa: PLC0415
    import jax.scipy.special as jss  # noqa: PLC0415

    return [(jss.logsumexp, fss.logsumexp), (jnn.logsumexp, fnn.logsumexp)]


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("which", [0, 1], ids=["scipy.special", "nn"])
@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([(0,), (0, 3), (3, 0), (2, 3)]),
       dtype=st.sampled_from([np.float32, np.complex64, np.bool_, np.int32, np.float16]),
       axis=st.sampled_from([None, 0, -1]), keepdims=st.booleans(),
       return_sign=st.booleans(), use_where=st.booleans())
def test_logsumexp_without_b_matches_jax(x64, which, shape, dtype, axis, keepdims,
                                         return_sign, use_where):
    theirs_f, ours_f = _lse_pairs()[which]
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
    where = None if not use_where else (np.arange(x.size).reshape(shape) % 2 == 0)
    kw = dict(axis=axis, keepdims=keepdims, where=where)
    if return_sign:
        kw["return_sign"] = True
    theirs, t_err = _outcome(lambda _: theirs_f(x, **kw), None)
    ours, o_err = _outcome(lambda _: ours_f(x, **kw), None)
    if t_err is not None:
        assert isinstance(o_err, type(t_err)), (t_err, o_err)
        return
    _same(ours, theirs, rtol=1e-2 if dtype == np.float16 else 1e-5)


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("which", [0, 1], ids=["scipy.special", "nn"])
@settings(max_examples=25, deadline=None)
@given(x=hnp.arrays(np.int8, (2, 3), elements=st.integers(-3, 3)),
       # (No tiny nonzero scales: b * exp(x - max) would be subnormal, which XLA flushes.)
       b=hnp.arrays(np.float64, (2, 3), elements=st.one_of(
           st.just(0.0), _floats(2.0 ** -10, 2), _floats(-2, -(2.0 ** -10)))),
       b_dtype=st.sampled_from([np.float16, np.float32, np.float64, np.int32]),
       x_dtype=st.sampled_from([np.int8, np.int32, np.float32, np.complex64]),
       return_sign=st.booleans())
def test_logsumexp_promotes_a_with_b_as_jax(x64, which, x, b, b_dtype, x_dtype, return_sign):
    theirs_f, ours_f = _lse_pairs()[which]
    if which == 1 and return_sign:
        return
    a, bb = x.astype(x_dtype), b.astype(b_dtype)
    kw = dict(axis=1, b=bb, **({"return_sign": True} if return_sign else {}))
    _same(ours_f(a, **kw), theirs_f(a, **kw), rtol=2e-2 if b_dtype == np.float16 else 1e-4)


# ------------------------------------------------------------------ insert

@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=20, deadline=None)
@given(shape=st.sampled_from([(0,), (0, 3), (2, 0), (0, 0), (2, 3)]),
       obj=st.sampled_from([0, 1, -1, 5, "empty", "one", "two", "slice", "empty_slice"]),
       vshape=st.sampled_from([(), (2,), (0,), (1, 2), (0, 3), (1, 0), (3,)]),
       axis=st.sampled_from([None, 0, -1]))
def test_insert_into_or_of_empty_arrays(x64, shape, obj, vshape, axis):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    o = {"empty": np.array([], np.int32), "one": np.array([0]), "two": np.array([0, 1]),
         "slice": slice(None), "empty_slice": slice(0, 0)}.get(obj, obj)  # type: ignore
    v = np.full(vshape, 7.0)
    _compare(lambda m: m.insert(a, o, v, axis=axis))


# ------------------------------------------------------------------ quantiles

METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=20, deadline=None)
@given(x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
                    elements=_floats() | st.just(np.nan)),
       # (no subnormal q: XLA flushes it to 0, which moves 'higher' to the first element)
       q=st.lists(st.floats(-0.25, 1.25, width=32, allow_subnormal=False), min_size=1,
                  max_size=3),
       q_kind=st.sampled_from(["py", "f32", "f64", "scalar"]),
       method=st.sampled_from(METHODS), axis=st.sampled_from([None, 0, -1]),
       keepdims=st.booleans(), name=st.sampled_from(["quantile", "nanquantile"]),
       a_dtype=st.sampled_from([np.float32, np.float64]))
def test_quantiles_compute_in_q_dtype_as_jax(x64, x, q, q_kind, method, axis, keepdims,
                                             name, a_dtype):
    # q keeps its dtype (a float64 q interpolates float32 data in float64 in x64 mode),
    # inverted_cdf refuses a q of another dtype than the data, and q past [0, 1] only
    # clips the indices.
    qq = {"py": q[0], "f32": np.array(q, np.float32), "f64": np.array(q, np.float64),
          "scalar": np.float32(q[0])}[q_kind]
    xa = x.astype(a_dtype)
    _compare(lambda m: getattr(m, name)(xa, qq, axis=axis, method=method,
                                         keepdims=keepdims))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=20, deadline=None)
@given(x=hnp.arrays(np.float32, st.integers(1, 7), elements=_floats() | st.just(np.nan)),
       q=st.lists(st.integers(0, 100), min_size=1, max_size=3),
       as_float=st.booleans(), method=st.sampled_from(METHODS),
       name=st.sampled_from(["percentile", "nanpercentile"]))
def test_percentiles_use_jax_reciprocal(x64, x, q, as_float, method, name):
    # JAX's jitted q / 100 is q * 0.01 (XLA's reciprocal of the constant).
    qq = np.array(q, np.float32 if as_float else np.int32)
    _compare(lambda m: getattr(m, name)(x, qq, method=method))


@pytest.mark.x32
@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "midpoint", "linear"])
@pytest.mark.parametrize("name", ["percentile", "nanpercentile"])
def test_percentile_100_is_under_the_top_in_float32_as_jax(method, name):
    # JAX's jitted percentile computes q * (float32(0.01) * 5) here (XLA folds the
    # constants): 100 lands at 4.9999995, so "lower" picks the next to last value.
    x = np.array([4.0, 1.0, 3.0, 2.0, 8.0, 6.0], np.float32)
    q = np.array([30.0, 100.0], np.float32)
    ours, theirs = getattr(fnp, name)(x, q, method=method), getattr(jnp, name)(x, q,
                                                                               method=method)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("name", ["quantile", "nanquantile", "median", "nanmedian",
                                  "percentile"])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((2, 0), 1), ((0, 2), None),
                                             ((0, 2), 1), ((2, 0), (0, 1))])
def test_quantiles_of_empty_slices_raise_as_jax(x64, name, shape, axis):
    x = np.zeros(shape, np.float32)
    if name in ("median", "nanmedian"):
        _compare(lambda m: getattr(m, name)(x, axis=axis))
    else:
        _compare(lambda m: getattr(m, name)(x, np.float32(0.5), axis=axis))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("q", [1, np.array([0, 1]), True])
@pytest.mark.parametrize("method", METHODS)
def test_quantile_of_integer_q_raises_jax_type_error(x64, q, method):
    x = np.array([3.0, 1.0, 2.0], np.float32)
    same_error(lambda _, m, q: m.quantile(x, q, method=method), q)


# ------------------------------------------------------------------ dtypes

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint32, np.float16,
          np.float32, np.float64, np.complex64]


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("dtype", [None, int, float, bool, np.int8, np.float32, np.int64,
                                   np.complex64])
def test_tri_dtype_as_jax(x64, dtype):
    _compare(lambda m: m.tri(3, 4, 1, dtype=dtype))


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_complex_dtype_as_jax(x64, dtype):
    _compare(lambda m: m.sort_complex(np.array([3, 1, 2]).astype(dtype)))


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=30, deadline=None)
@given(a=st.sampled_from(DTYPES), b=st.sampled_from(DTYPES), linalg=st.booleans())
def test_vecdot_dtype_as_jax(x64, a, b, linalg):
    x, y = np.array([3, 1, 2]).astype(a), np.array([1, 2, 0]).astype(b)
    _compare(lambda m: (m.linalg if linalg else m).vecdot(x, y), rtol=1e-2)


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from(DTYPES[1:-1]), density=st.sampled_from([None, False, True]),
       w_dtype=st.sampled_from([None, np.float32, np.int32, np.float64]),
       bins=st.sampled_from(["int", "int_edges", "float_edges"]),
       name=st.sampled_from(["histogram", "histogram2d", "histogramdd"]))
def test_histogram_dtypes_as_jax(x64, dtype, density, w_dtype, bins, name):
    # Given edges take the data's dtype; weights promote together with the data.
    x = np.array([1, 2, 3, 3]).astype(dtype)
    w = None if w_dtype is None else np.array([1, 2, 3, 1]).astype(w_dtype)
    edges = {"int": 2, "int_edges": np.array([0, 2, 4]),
             "float_edges": np.array([0.0, 1.5, 4.0])}[bins]
    if name == "histogram":
        _compare(lambda m: m.histogram(x, bins=edges, density=density, weights=w))
    elif name == "histogram2d":
        _compare(lambda m: m.histogram2d(x, x[::-1], bins=edges, density=density, weights=w))
    else:
        b = edges if isinstance(edges, int) else [edges, edges]
        _compare(lambda m: m.histogramdd(np.stack([x, x[::-1]], 1), bins=b, density=density,
                                         weights=w))
