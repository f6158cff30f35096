"""The lax names added with bits.py and sorting.py: shifts, population_count, clz,
bitcast_convert_type, top_k and sort_key_val, against jax.lax (64-bit mode on both)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
from funcgrad import lax
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, database=None)
INT_TYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("name", ["shift_left", "shift_right_logical",
                                  "shift_right_arithmetic"])
@pytest.mark.parametrize("dtype", INT_TYPES)
@SETTINGS
@given(data=st.data())
def test_shifts_match_jax(name: str, dtype: Any, data: Any) -> None:
    info = np.iinfo(dtype)
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    x = data.draw(hnp.arrays(dtype, shape, elements=st.integers(int(info.min), int(info.max))))
    y = data.draw(hnp.arrays(dtype, shape, elements=st.integers(
        max(int(info.min), -2), min(int(info.max), 70))))
    got = np.asarray(getattr(lax, name)(x, y))
    with jax.enable_x64(True):
        want = np.asarray(getattr(jax.lax, name)(x, y))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["population_count", "clz"])
@pytest.mark.parametrize("dtype", INT_TYPES)
@SETTINGS
@given(data=st.data())
def test_bit_counts_match_jax(name: str, dtype: Any, data: Any) -> None:
    info = np.iinfo(dtype)
    x = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                             elements=st.integers(int(info.min), int(info.max))))
    got = np.asarray(getattr(lax, name)(x))
    with jax.enable_x64(True):
        want = np.asarray(getattr(jax.lax, name)(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src", ["int8", "int32", "float32", "float64", "uint16"])
@pytest.mark.parametrize("dst", ["int8", "int32", "float32", "float64", "uint16", "int64"])
def test_bitcast_matches_jax(src: str, dst: str) -> None:
    x = np.arange(24).astype(src).reshape(3, 8)
    with jax.enable_x64(True):
        try:
            want = np.asarray(jax.lax.bitcast_convert_type(x, dst))
        except (TypeError, ValueError):
            with pytest.raises((TypeError, ValueError)):
                lax.bitcast_convert_type(x, dst)
            return
    got = np.asarray(lax.bitcast_convert_type(x, dst))
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@SETTINGS
@given(data=st.data())
def test_top_k_matches_jax(data: Any) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=5))
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from(
        [-1.0, 0.0, 0.5, 2.0, 3.0])))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[axis]))
    v, i = lax.top_k(x, k, axis=axis)
    with jax.enable_x64(True):
        jv, ji = jax.lax.top_k(x, k, axis=axis)
    np.testing.assert_array_equal(v, jv)
    np.testing.assert_array_equal(i, ji)
    assert np.asarray(i).dtype == np.int32


@SETTINGS
@given(data=st.data())
def test_top_k_derivatives(data: Any) -> None:
    # well-separated entries: finite differences must not reorder them
    x = np.array(data.draw(st.permutations(list(range(10))))).reshape(2, 5) * 0.3 - 1.0
    check_grads(lambda v: lax.top_k(v, 3)[0], (x,), order=2, modes=("fwd", "rev"))
    g = fg.grad(lambda v: lax.top_k(v, 2)[0].sum())(x)
    with jax.enable_x64(True):
        jg = jax.grad(lambda v: jax.lax.top_k(v, 2)[0].sum())(x)
    np.testing.assert_array_equal(g, jg)


@SETTINGS
@given(data=st.data())
def test_sort_key_val_matches_jax_and_differentiates(data: Any) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=5))
    keys = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-3, 3)))
    vals = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3)))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k, v = lax.sort_key_val(keys, vals, dim)
    with jax.enable_x64(True):
        jk, jv = jax.lax.sort_key_val(keys, vals, dim)
    np.testing.assert_array_equal(k, jk)
    np.testing.assert_array_equal(v, jv)
    check_grads(lambda w: lax.sort_key_val(keys, w, dim)[1], (vals,), order=2,
                modes=("fwd", "rev"))


def test_vmap_and_jit_of_the_gaps() -> None:
    x = np.array([[5, -3, 8], [1, 1, 0]], np.int32)
    y = np.array([[1, 2, 40], [0, 31, 3]], np.int32)
    f = lambda a, b: (lax.shift_right_arithmetic(a, b), lax.population_count(a),  # noqa: E731
                      lax.top_k(a.astype(np.float64), 2)[1])
    eager = f(x, y)
    for got in (fg.jit(f)(x, y), fg.vmap(f)(x, y)):
        for g, e in zip(got, eager):
            np.testing.assert_array_equal(g, e)


@pytest.mark.x32
@pytest.mark.parametrize("name", ["sort", "median", "quantile"])
def test_sort_gradients_of_matrices_in_32_bit_mode(name: str) -> None:
    """argsort gives int64 indices even in 32-bit mode, where iota gives int32: the
    gradient's gather grid takes one of them (it used to fail on 2-d operands)."""
    import funcgrad.numpy as fnp

    x = np.array([[3.0, 1.0, 2.0, 0.0], [0.0, 1.0, 2.0, 3.0], [2.0, 2.5, -1.0, 4.0]],
                 np.float32)
    w = np.arange(4.0, dtype=np.float32)
    f = {"sort": lambda a: fnp.sum(fnp.sort(a, axis=1) * w),
         "median": lambda a: fnp.sum(fnp.median(a, axis=1)),
         "quantile": lambda a: fnp.sum(fnp.quantile(a, 0.3, axis=1))}[name]
    g = np.asarray(fg.grad(f)(x))
    assert g.dtype == np.float32 and g.shape == x.shape
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    ref = {"sort": lambda a: jnp.sum(jnp.sort(a, axis=1) * w),
           "median": lambda a: jnp.sum(jnp.median(a, axis=1)),
           "quantile": lambda a: jnp.sum(jnp.quantile(a, 0.3, axis=1))}[name]
    np.testing.assert_allclose(g, np.asarray(jax.grad(ref)(x)), rtol=1e-6)


@pytest.mark.x32
def test_shift_operators_on_arrays_match_jax() -> None:
    import funcgrad.numpy as fnp

    x = fnp.array([1, 2, -8, 5])
    got = [x << 1, x >> 1, 2 << fnp.arange(3), x >> fnp.array([0, 1, 2, 1])]
    want = [np.left_shift(np.array([1, 2, -8, 5]), 1), np.right_shift([1, 2, -8, 5], 1),
            np.left_shift(2, np.arange(3)), np.right_shift([1, 2, -8, 5], [0, 1, 2, 1])]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    jnp = pytest.importorskip("jax.numpy")
    j = jnp.array([1, 2, -8, 5])
    assert (x << 1).dtype == (j << 1).dtype


@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(1, 5),
       st.sampled_from(["bfloat16", "float16"]), st.integers(0, 2 ** 16))
def test_half_precision_products_match_jax(m: int, k: int, n: int, dtype: str,
                                           seed: int) -> None:
    """Matrix products and convolutions of bfloat16/float16 operands stay in that dtype
    (NumPy's bfloat16 matmul returns float32) and round JAX's float32-accumulated result."""
    import jax.numpy as jnp  # noqa: PLC0415

    import funcgrad.numpy as fnp  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    img = rng.standard_normal((1, 2, m + 2, n + 2)).astype(np.float32)
    ker = rng.standard_normal((3, 2, 2, 2)).astype(np.float32)
    for ours, theirs in [
        (fnp.matmul(fnp.asarray(a, dtype), fnp.asarray(b, dtype)),
         jnp.matmul(jnp.asarray(a, dtype), jnp.asarray(b, dtype))),
        (fnp.einsum("ij,jk->ik", fnp.asarray(a, dtype), fnp.asarray(b, dtype)),
         jnp.einsum("ij,jk->ik", jnp.asarray(a, dtype), jnp.asarray(b, dtype))),
        (lax.conv(fnp.asarray(img, dtype), fnp.asarray(ker, dtype), (1, 1), "VALID"),
         jax.lax.conv(jnp.asarray(img, dtype), jnp.asarray(ker, dtype), (1, 1), "VALID")),
    ]:
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(ours, np.float32), np.asarray(theirs, np.float32),
                                   rtol=1e-2, atol=1e-2)


@pytest.mark.x32
def test_lax_functions_take_numpy_values_in_the_default_dtypes() -> None:
    """NumPy float64/int64 operands of lax functions become float32/int32 unless x64 is
    on (JAX puts them on a device first), scalars included."""
    jlax = jax.lax
    cases = [lambda L, f: L.mul(f(np.float32(2)), np.float64(3)),
             lambda L, f: L.mul(f(np.ones(2, np.float32)), np.float64(3)),
             lambda L, f: L.sin(np.ones(2)), lambda L, f: L.add(np.ones(2), np.ones(2)),
             lambda L, f: L.reduce_sum(np.arange(3), (0,)),
             lambda L, f: L.concatenate([np.ones(2), np.zeros(1)], 0)]
    for case in cases:
        ours, theirs = case(lax, fg.numpy.asarray), case(jlax, jax.numpy.asarray)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    with fg.enable_x64():
        assert lax.add(np.ones(2), np.ones(2)).dtype == np.float64


@settings(max_examples=15, deadline=None, derandomize=True, database=None)
@given(st.integers(1, 3), st.integers(1, 6), st.integers(0, 2 ** 16), st.integers(1, 3),
       st.booleans())
def test_lax_sort_with_several_keys_matches_jax(rows: int, n: int, seed: int, num_keys: int,
                                                along_rows: bool) -> None:
    rng = np.random.default_rng(seed)
    ops = (rng.integers(0, 3, (rows, n)).astype(np.int32),
           rng.integers(0, 2, (rows, n)).astype(np.float32),
           rng.standard_normal((rows, n)).astype(np.float32))
    dim = 0 if along_rows else -1
    ours = lax.sort(ops, dimension=dim, num_keys=num_keys)
    theirs = jax.lax.sort(ops, dimension=dim, num_keys=num_keys)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # Differentiable in the values it permutes: JAX's gradient.
    def f(L: Any, v: Any) -> Any:
        return (L.sort((ops[0], v), dimension=dim, num_keys=1)[1] * np.arange(n)).sum()

    np.testing.assert_array_equal(np.asarray(fg.grad(lambda v: f(lax, v))(ops[2])),
                                  np.asarray(jax.grad(lambda v: f(jax.lax, v))(ops[2])))


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2 ** 16), st.sampled_from([None, 0, 1, -1, (0, 2), (2, 1)]),
       st.sampled_from(["none", "full", "axis"]), st.booleans(), st.booleans())
def test_average_matches_jax(seed: int, axis: Any, weights: str, returned: bool,
                             keepdims: bool) -> None:
    import funcgrad.numpy as fnp  # noqa: PLC0415

    jnp = jax.numpy
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    if weights == "axis" and axis is None:
        weights = "full"
    if weights == "none":
        w = None
    elif weights == "full":
        w = rng.uniform(0.5, 2, a.shape).astype(np.float32)
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        w = rng.uniform(0.5, 2, tuple(a.shape[x] for x in axes)).astype(np.float32)
    ours = fnp.average(a, axis, w, returned=returned, keepdims=keepdims)
    theirs = jnp.average(a, axis, w, returned=returned, keepdims=keepdims)
    for o, t in zip(ours if returned else [ours], theirs if returned else [theirs]):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-5, atol=1e-6)
