"""The jax.lax names added by funcgrad/lax/_names_more.py, funcgrad/primitives/precision.py and
funcgrad/primitives/general_gather_scatter.py against jax.lax (64-bit mode on both): values,
dtypes, errors; derivatives against jax.grad."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_oracle import jax_x64 as _jax
from jax_oracle import same as _same

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
SETTINGS = settings(max_examples=5, deadline=None, database=None)


def _error(fn: Any, jfn: Any) -> None:
    """fn raises what jfn (JAX) raises: the same exception type."""
    with pytest.raises(Exception) as want:
        _jax(jfn)
    with pytest.raises(want.type):
        fn()


# ------------------------------------------------------------------ precision


PRECISIONS = [None, "highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default",
              "bfloat16", "fastest", ("highest", "default")]


@pytest.mark.parametrize("value", ["highest", "float32", "high", "tensorfloat32", "default",
                                   "bfloat16", "fastest", None, 0, 1, 2])
def test_precision_enum_matches_jax(value: Any) -> None:
    got = lax.Precision(value)
    want = jax.lax.Precision(value)
    assert (got.name, got.value, repr(got), str(got)) == (want.name, want.value, repr(want),
                                                          str(want))


def test_precision_bad_value_is_a_value_error_as_in_jax() -> None:
    _error(lambda: lax.Precision("foo"), lambda: jax.lax.Precision("foo"))
    assert [p.name for p in lax.DotAlgorithmPreset] == \
        [p.name for p in jax.lax.DotAlgorithmPreset]
    assert lax.DotAlgorithm._fields == jax.lax.DotAlgorithm._fields
    assert [m.name for m in lax.AccuracyMode] == [m.name for m in jax.lax.AccuracyMode]


@pytest.mark.parametrize("precision", [*PRECISIONS, ("high", "highest")])
@SETTINGS
@given(m=st.integers(1, 4), k=st.integers(1, 4), n=st.integers(1, 4), seed=st.integers(0, 99))
def test_products_take_precision_as_jax(precision: Any, m: int, k: int, n: int,
                                        seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
    dn = (((1,), (0,)), ((), ()))
    p = precision
    _same(lax.dot_general(a, b, dn, p), _jax(jax.lax.dot_general, a, b, dn, p))
    _same(lax.dot(a, b, precision=p), _jax(jax.lax.dot, a, b, precision=p))
    _same(fnp.dot(a, b, precision=p), _jax(jnp.dot, a, b, precision=p))
    _same(fnp.matmul(a, b, precision=p), _jax(jnp.matmul, a, b, precision=p))
    _same(fnp.einsum("ij,jk->ik", a, b, precision=p),
          _jax(jnp.einsum, "ij,jk->ik", a, b, precision=p))
    _same(fnp.tensordot(a, b, 1, precision=p), _jax(jnp.tensordot, a, b, 1, precision=p))
    x, w = rng.normal(size=(1, 2, 5)), rng.normal(size=(3, 2, 2))
    _same(lax.conv_general_dilated(x, w, (1,), "SAME", precision=p),
          _jax(jax.lax.conv_general_dilated, x, w, (1,), "SAME", precision=p))


@pytest.mark.parametrize("preset", ["F32_F32_F32", "BF16_BF16_F32", "BF16_BF16_F32_X3",
                                    "BF16_BF16_F32_X6", "F64_F64_F64", "F16_F16_F16", "DEFAULT"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@SETTINGS
@given(m=st.integers(2, 5), k=st.integers(2, 5), n=st.integers(2, 5), seed=st.integers(0, 99))
def test_algorithm_presets_round_as_jax(preset: str, dtype: str, m: int, k: int, n: int,
                                        seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, k)).astype(dtype), rng.normal(size=(k, n)).astype(dtype)
    dn = (((1,), (0,)), ((), ()))
    try:
        want = _jax(jax.lax.dot_general, a, b, dn, preset)
    except jax.errors.JaxRuntimeError:  # XLA's CPU emitter refuses some shapes
        return
    tol = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-12}[dtype]
    got = lax.dot_general(a, b, dn, lax.DotAlgorithmPreset[preset])
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
    got = fnp.matmul(a, b, precision=preset)
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)
    if dtype == "float64" and preset not in {"F64_F64_F64", "DEFAULT"}:
        # rounded through a narrower type, as JAX does: not the float64 product
        assert not np.allclose(np.asarray(got), a @ b, rtol=1e-12, atol=0)


@pytest.mark.parametrize("precision", ["foo", 3, ("highest", 1), (jax.lax.Precision.HIGH,),
                                       "TF32_TF32_F32", "F16_F16_F32",
                                       ("highest", "F32_F32_F32")])
def test_bad_precision_is_refused_as_in_jax(precision: Any) -> None:
    a = np.ones((2, 2), np.float32)
    p = precision
    if isinstance(precision, tuple) and isinstance(precision[0], jax.lax.Precision):
        p = (lax.Precision[precision[0].name],)
    for fn, jfn in ((lambda: lax.dot(a, a, precision=p),
                     lambda: jax.lax.dot(a, a, precision=precision)),
                    (lambda: fnp.dot(a, a, precision=p),
                     lambda: jnp.dot(a, a, precision=precision)),
                    (lambda: fnp.einsum("ij,jk", a, a, precision=p),
                     lambda: jnp.einsum("ij,jk", a, a, precision=precision))):
        _error(fn, jfn)


@pytest.mark.parametrize("pet", ["int32", "int64", "float32", "float64"])
def test_preferred_element_type_accumulates_as_jax(pet: str) -> None:
    i = (np.arange(12, dtype=np.int8).reshape(3, 4) * 23).astype(np.int8)
    dn = (((1,), (1,)), ((), ()))
    _same(lax.dot_general(i, i, dn, preferred_element_type=pet),
          _jax(jax.lax.dot_general, i, i, dn, preferred_element_type=pet), exact=True)
    _same(fnp.matmul(i, i.T, preferred_element_type=pet),
          _jax(jnp.matmul, i, i.T, preferred_element_type=pet), exact=True)
    _same(fnp.einsum("ij,kj->ik", i, i, preferred_element_type=pet),
          _jax(jnp.einsum, "ij,kj->ik", i, i, preferred_element_type=pet), exact=True)


def test_mixed_operand_dtypes_meet_as_in_jax() -> None:
    a, b = np.ones((2, 3), np.float32), np.full((3, 2), 0.5, np.float16)
    dn = (((1,), (0,)), ((), ()))
    _same(lax.dot_general(a, b, dn), _jax(jax.lax.dot_general, a, b, dn))


def test_accuracy_is_taken_by_exp_as_in_jax() -> None:
    x = np.linspace(-2, 2, 5)
    _same(lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST),
          _jax(jax.lax.exp, x, accuracy=jax.lax.AccuracyMode.HIGHEST))
    _error(lambda: lax.Tolerance(atol=-1.0), lambda: jax.lax.Tolerance(atol=-1.0))
    _error(lambda: lax.Tolerance(), lambda: jax.lax.Tolerance())


# ------------------------------------------------------------------ round


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("method", [None, 0, 1, "enum"])
def test_round_matches_jax(dtype: str, method: Any) -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -0.3, -0.0, 0.0, 0.49999997, 2.7, -2.7,
                  np.nan, np.inf, -np.inf, 1000.5], dtype)
    args: tuple[Any, ...] = ()
    jargs: tuple[Any, ...] = ()
    if method == "enum":
        args, jargs = (lax.RoundingMethod.TO_NEAREST_EVEN,), \
            (jax.lax.RoundingMethod.TO_NEAREST_EVEN,)
    elif method is not None:
        args = jargs = (method,)
    got, want = np.asarray(lax.round(x, *args)), _jax(jax.lax.round, x, *jargs)
    _same(got, want, exact=True)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    _same(fg.jit(lambda v: lax.round(v, *args))(x), want, exact=True)
    _same(fg.grad(lambda v: lax.round(v * 3.0, *args).sum())(np.array([0.2, 1.7])),
          _jax(jax.grad(lambda v: jax.lax.round(v * 3.0, *jargs).sum()), np.array([0.2, 1.7])))


def test_round_refuses_what_jax_refuses() -> None:
    _error(lambda: lax.round(np.arange(3)), lambda: jax.lax.round(np.arange(3)))
    _error(lambda: lax.round(np.ones(3), 7), lambda: jax.lax.round(np.ones(3), 7))


# ------------------------------------------------------------------ gather / scatter


def _gather_case(draw: Any) -> tuple[np.ndarray, np.ndarray, Any, tuple[int, ...]]:
    """A random XLA gather: an operand, start indices (some out of bounds), dimension numbers
    and slice sizes."""
    r = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(r))
    k = draw(st.integers(1, r))
    index_map = tuple(sorted(draw(st.permutations(range(r)))[:k]))
    collapsed = tuple(d for d in index_map if draw(st.booleans()))
    sizes = tuple(1 if d in collapsed else draw(st.integers(0 if d not in index_map else 1,
                                                            shape[d])) for d in range(r))
    nb = draw(st.integers(0, 2))
    batch = tuple(draw(st.integers(1, 3)) for _ in range(nb))
    n_off = r - len(collapsed)
    out_rank = nb + n_off
    offset = tuple(sorted(draw(st.permutations(range(out_rank)))[:n_off]))
    seed = draw(st.integers(0, 999))
    rng = np.random.default_rng(seed)
    idx = rng.integers(-2, max(shape) + 2, size=(*batch, k))
    x = rng.normal(size=shape)
    return x, idx, (offset, collapsed, index_map), sizes


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
@SETTINGS
@given(data=st.data())
def test_general_gather_matches_jax(mode: Any, data: Any) -> None:
    x, idx, dn, sizes = _gather_case(data.draw)
    if mode is None or mode == "promise_in_bounds":
        # out of bounds is implementation-defined there: keep the windows in range
        hi = np.array([x.shape[d] - sizes[d] for d in dn[2]])
        idx = np.clip(idx, 0, hi)
    got = lax.gather(x, idx, lax.GatherDimensionNumbers(*dn), sizes, mode=mode)
    want = _jax(jax.lax.gather, x, idx, jax.lax.GatherDimensionNumbers(*dn), sizes, mode=mode)
    _same(got, want, exact=True)
    ct = np.random.default_rng(0).normal(size=np.shape(want))

    def loss(lib: Any, v: Any, dnums: Any) -> Any:
        return (lib.gather(v, idx, dnums, sizes, mode=mode) * ct).sum() if ct.size else \
            v.sum() * 0.0

    g = fg.grad(lambda v: loss(lax, v, lax.GatherDimensionNumbers(*dn)))(x)
    gw = _jax(jax.grad(lambda v: loss(jax.lax, v, jax.lax.GatherDimensionNumbers(*dn))), x)
    _same(g, gw)


def test_gather_with_batching_dims_matches_jax() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[[1], [2]], [[0], [5]]])
    args = ((2,), (1,), (1,), (0,), (0,))
    got = lax.gather(x, idx, lax.GatherDimensionNumbers(*args), (1, 1, 4), mode="fill")
    want = _jax(jax.lax.gather, x, idx, jax.lax.GatherDimensionNumbers(*args), (1, 1, 4),
                mode="fill")
    _same(got, want, exact=True)


SCATTERS = ["scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
            "scatter_max"]


@pytest.mark.parametrize("name", SCATTERS)
@pytest.mark.parametrize("mode", [None, "clip", "drop"])
@SETTINGS
@given(seed=st.integers(0, 999), window=st.booleans())
def test_general_scatter_matches_jax(name: str, mode: Any, seed: int, window: bool) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 3))
    if window:  # rows as windows: updates (n, 3), one index per row
        n = 4
        idx = rng.permutation(8)[:n].reshape(n, 1) - 1
        upd = rng.normal(size=(3, n))  # window dim first: update_window_dims=(0,)
        dn = ((0,), (0,), (0,))
    else:  # single elements: updates (n,), index pairs
        n = 6
        flat = rng.permutation(21)[:n]
        idx = np.stack([flat // 3 - 1, flat % 3], axis=-1)
        upd = rng.normal(size=(n,))
        dn = ((), (0, 1), (0, 1))
    got = getattr(lax, name)(x, idx, upd, lax.ScatterDimensionNumbers(*dn), mode=mode)
    want = _jax(getattr(jax.lax, name), x, idx, upd, jax.lax.ScatterDimensionNumbers(*dn),
                mode=mode)
    _same(got, want)
    if name in ("scatter_add", "scatter_sub", "scatter"):
        def loss(lib: Any, v: Any, u: Any, dnums: Any) -> Any:
            return (getattr(lib, name)(v, idx, u, dnums, mode=mode) ** 2).sum()

        g = fg.grad(lambda v, u: loss(lax, v, u, lax.ScatterDimensionNumbers(*dn)),
                    argnums=(0, 1))(x, upd)
        gw = _jax(jax.grad(lambda v, u: loss(jax.lax, v, u, jax.lax.ScatterDimensionNumbers(*dn)),
                           argnums=(0, 1)), x, upd)
        _same(g[0], gw[0])
        _same(g[1], gw[1])


def test_scatter_apply_matches_jax() -> None:
    x = np.arange(5.0)
    idx = np.array([[0], [0], [3], [9]])
    dn = ((), (0,), (0,))
    got = lax.scatter_apply(x, idx, lambda v: v * 2 + 1, lax.ScatterDimensionNumbers(*dn),
                            update_shape=(4,))
    want = _jax(jax.lax.scatter_apply, x, idx, lambda v: v * 2 + 1,
                jax.lax.ScatterDimensionNumbers(*dn), update_shape=(4,))
    _same(got, want)
    _same(fg.jit(lambda v: lax.scatter_apply(v, idx, fg.numpy.sin,
                                             lax.ScatterDimensionNumbers(*dn),
                                             update_shape=(4,)))(x),
          _jax(jax.lax.scatter_apply, x, idx, jnp.sin, jax.lax.ScatterDimensionNumbers(*dn),
               update_shape=(4,)))


def test_gather_scatter_errors_match_jax() -> None:
    x, i = np.arange(12.0).reshape(3, 4), np.array([[0], [2]])
    g, jg = lax.GatherDimensionNumbers, jax.lax.GatherDimensionNumbers
    s, js = lax.ScatterDimensionNumbers, jax.lax.ScatterDimensionNumbers
    for args, sizes in ((((1,), (0,), (0,)), (1,)), (((1,), (0,), (0,)), (1, 5)),
                        (((1,), (0,), (0,)), (2, 4)), (((1,), (0,), (0, 1)), (1, 4))):
        _error(lambda a=args, z=sizes: lax.gather(x, i, g(*a), z),
               lambda a=args, z=sizes: jax.lax.gather(x, i, jg(*a), z))
    _error(lambda: lax.gather(x, i * 1.0, g((1,), (0,), (0,)), (1, 4)),
           lambda: jax.lax.gather(x, i * 1.0, jg((1,), (0,), (0,)), (1, 4)))
    _error(lambda: lax.gather(x, i, g((1,), (0,), (0,)), (1, 4), mode="foo"),
           lambda: jax.lax.gather(x, i, jg((1,), (0,), (0,)), (1, 4), mode="foo"))
    _error(lambda: lax.scatter_add(x, i, np.ones((2, 4), np.int32), s((1,), (0,), (0,))),
           lambda: jax.lax.scatter_add(x, i, np.ones((2, 4), np.int32), js((1,), (0,), (0,))))
    _error(lambda: lax.scatter_add(x, i, np.ones((2, 5)), s((1,), (0,), (0,))),
           lambda: jax.lax.scatter_add(x, i, np.ones((2, 5)), js((1,), (0,), (0,))))
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP
    assert [m.name for m in lax.GatherScatterMode] == [m.name for m in jax.lax.GatherScatterMode]
    assert lax.GatherDimensionNumbers._fields == jax.lax.GatherDimensionNumbers._fields
    assert lax.ScatterDimensionNumbers._fields == jax.lax.ScatterDimensionNumbers._fields


# ------------------------------------------------------------------ shapes, patches, misc


@SETTINGS
@given(n=st.integers(1, 9), k=st.integers(1, 4), s=st.integers(1, 3),
       pad=st.sampled_from(["SAME", "VALID", ((1, 0),), ((0, 2),)]))
def test_shape_tuples_match_jax(n: int, k: int, s: int, pad: Any) -> None:
    assert lax.conv_shape_tuple((2, 3, n), (4, 3, k), (s,), pad) == \
        tuple(jax.lax.conv_shape_tuple((2, 3, n), (4, 3, k), (s,), pad))
    dn = ("NWC", "WIO", "NWC")
    assert lax.conv_general_shape_tuple((2, n, 3), (k, 3, 4), (s,), pad, dn) == \
        tuple(jax.lax.conv_general_shape_tuple((2, n, 3), (k, 3, 4), (s,), pad, dn))
    assert lax.conv_transpose_shape_tuple((2, n, 3), (k, 3, 4), (s,), pad, dn) == \
        tuple(jax.lax.conv_transpose_shape_tuple((2, n, 3), (k, 3, 4), (s,), pad, dn))
    pads = ((1, 0), (0, 2))
    assert lax.reduce_window_shape_tuple((n, 5), (k, 2), (s, 1), pads, (1, 2), (2, 1)) == \
        tuple(jax.lax.reduce_window_shape_tuple((n, 5), (k, 2), (s, 1), pads, (1, 2), (2, 1)))


@pytest.mark.parametrize("dn", [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "CNHW")])
@SETTINGS
@given(seed=st.integers(0, 99), stride=st.integers(1, 2), pad=st.sampled_from(["SAME",
                                                                               "VALID"]))
def test_conv_patches_match_jax(dn: Any, seed: int, stride: int, pad: str) -> None:
    rng = np.random.default_rng(seed)
    shape = (2, 5, 4, 3) if dn and dn[0] == "NHWC" else (2, 3, 5, 4)
    x = rng.normal(size=shape)
    got = lax.conv_general_dilated_patches(x, (2, 3), (stride, 1), pad,
                                           dimension_numbers=dn)
    want = _jax(jax.lax.conv_general_dilated_patches, x, (2, 3), (stride, 1), pad,
                dimension_numbers=dn)
    _same(got, want)
    ct = rng.normal(size=want.shape)
    g = fg.grad(lambda v: (lax.conv_general_dilated_patches(
        v, (2, 3), (stride, 1), pad, dimension_numbers=dn) * ct).sum())(x)
    gw = _jax(jax.grad(lambda v: (jax.lax.conv_general_dilated_patches(
        v, (2, 3), (stride, 1), pad, dimension_numbers=dn) * ct).sum()), x)
    _same(g, gw)


def _local_kernel_shape(x_shape: tuple[int, ...], window: tuple[int, ...], strides: Any,
                        pad: str, dn: Any, features: int) -> list[int]:
    """rhs's shape for conv_general_dilated_local: O, I = C * prod(window) and the output's
    spatial sizes, laid out by rhs_spec (JAX's own shape helpers)."""
    lhs_spec, rhs_spec, out_spec = jax.lax.conv_dimension_numbers(x_shape, (1, 1, *window),
                                                                  dn)
    out = jax.eval_shape(lambda v: jax.lax.conv_general_dilated_patches(
        v, window, strides, pad, dimension_numbers=dn),
        jax.ShapeDtypeStruct(x_shape, np.float32)).shape
    shape = [0] * len(x_shape)
    shape[rhs_spec[0]], shape[rhs_spec[1]] = features, out[out_spec[1]]
    for k, d in enumerate(rhs_spec[2:]):
        shape[d] = out[out_spec[2 + k]]
    return shape


@pytest.mark.parametrize("dn", [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NHWC"),
                                ("NHWC", "WHOI", "CNHW")])
@SETTINGS
@given(seed=st.integers(0, 99), stride=st.integers(1, 2), pad=st.sampled_from(["SAME",
                                                                               "VALID"]))
def test_conv_local_matches_jax(dn: Any, seed: int, stride: int, pad: str) -> None:
    """Values and both gradients of the unshared convolution, against JAX's."""
    rng = np.random.default_rng(seed)
    shape = (2, 5, 4, 3) if dn and dn[0] == "NHWC" else (2, 3, 5, 4)
    x = rng.normal(size=shape)
    args = ((stride, 1), pad, (2, 3))
    w = rng.normal(size=_local_kernel_shape(shape, (2, 3), (stride, 1), pad, dn, 4))
    got = lax.conv_general_dilated_local(x, w, *args, dimension_numbers=dn)
    want = _jax(jax.lax.conv_general_dilated_local, x, w, *args, dimension_numbers=dn)
    _same(got, want)
    ct = rng.normal(size=want.shape)
    g = fg.grad(lambda v, k: (lax.conv_general_dilated_local(
        v, k, *args, dimension_numbers=dn) * ct).sum(), (0, 1))(x, w)
    gw = _jax(jax.grad(lambda v, k: (jax.lax.conv_general_dilated_local(
        v, k, *args, dimension_numbers=dn) * ct).sum(), (0, 1)), x, w)
    _same(g[0], gw[0])
    _same(g[1], gw[1])


DTYPE_VALUES = [1, 1.0, True, 1j, np.float32(2), np.ones(2, np.int16), "float32", np.uint8,
                np.ones(2)]


@pytest.mark.parametrize("value", DTYPE_VALUES)
def test_dtype_matches_jax(value: Any) -> None:
    with jax.enable_x64(True):
        want = jax.lax.dtype(value)
    assert lax.dtype(value) == want
    _error(lambda: lax.dtype([1, 2]), lambda: jax.lax.dtype([1, 2]))


@pytest.mark.x32
@pytest.mark.parametrize("value", DTYPE_VALUES)
def test_dtype_canonicalizes_as_jax_in_32_bit(value: Any) -> None:
    assert lax.dtype(value) == jax.lax.dtype(value)


def test_composite_and_sharding_constraint_are_their_functions() -> None:
    def f(x: Any, *, k: float) -> Any:
        return fnp.sin(x) * k

    def jf(x: Any, *, k: float) -> Any:
        return jnp.sin(x) * k

    c, jc = lax.composite(f, "my.f"), jax.lax.composite(jf, "my.f")
    x = np.linspace(0, 1, 4)
    _same(c(x, k=2.0), _jax(jc, x, k=2.0))
    _same(fg.jit(lambda v: c(v, k=2.0))(x), _jax(jax.jit(lambda v: jc(v, k=2.0)), x))
    # JAX has no derivative rule for composite; funcgrad differentiates the decomposition.
    _same(fg.grad(lambda v: c(v, k=2.0).sum())(x), _jax(jax.grad(lambda v: jf(v, k=2.0).sum()),
                                                        x))
    tree = {"a": np.ones(2), "b": (np.arange(3),)}
    out = lax.with_sharding_constraint(tree, fg.sharding.SingleDeviceSharding(fg.devices()[0]))
    assert out["a"] is tree["a"] and out["b"][0] is tree["b"][0]
    assert [a.name for a in lax.RandomAlgorithm] == [a.name for a in jax.lax.RandomAlgorithm]
    assert [a.value for a in lax.RandomAlgorithm] == [a.value for a in jax.lax.RandomAlgorithm]


@pytest.mark.parametrize("precision", [None, "highest", "high", "float32"])
def test_patches_and_local_conv_take_precision_as_jax_does(precision: Any) -> None:
    """A ``Precision`` goes to the patches' product paired with DEFAULT (a string alone is
    refused there, as in JAX), also when it comes from ``jax_default_matmul_precision``."""
    x = np.ones((1, 2, 4, 4))
    w = np.ones((3, 8, 3, 3))
    with fg.default_matmul_precision(precision), jax.default_matmul_precision(precision):
        _same(lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)),
              _jax(jax.lax.conv_general_dilated_local, x, w, (1, 1), "VALID", (2, 2)))
    if precision is None:
        return
    _same(lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID",
                                           precision=lax.Precision(precision)),
          _jax(jax.lax.conv_general_dilated_patches, x, (2, 2), (1, 1), "VALID",
               precision=jax.lax.Precision(precision)))
    with pytest.raises(ValueError):
        jax.lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", precision=precision)
    with pytest.raises(ValueError):
        lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", precision=precision)
