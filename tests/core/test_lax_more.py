"""The lax compositions of funcgrad/lax/_more.py and _associative_scan.py against jax.lax
(64-bit mode on both): values, dtypes, errors; derivatives by finite differences; jit/vmap."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax_oracle import jax_x64 as _jax
from jax_oracle import same as _same

import funcgrad as fg
from funcgrad import lax
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
SETTINGS = settings(max_examples=4, deadline=None, database=None)
FLOATS = st.floats(-3, 3, allow_nan=False, width=64)


def arrays(min_dims: int = 1, max_dims: int = 3, dtype: Any = np.float64) -> Any:
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=min_dims, max_dims=max_dims,
                                              max_side=5), elements=FLOATS)


# ------------------------------------------------------------------ associative scans


@pytest.mark.parametrize("name", ["cumprod", "cummax", "cummin", "cumlogsumexp"])
@SETTINGS
@given(x=arrays(), data=st.data())
def test_cumulative_reductions_match_jax(name: str, x: np.ndarray, data: Any) -> None:
    axis = data.draw(st.integers(0, x.ndim - 1))
    reverse = data.draw(st.booleans())
    with pytest.raises(ValueError):
        getattr(lax, name)(x, axis=-1)
    got = getattr(lax, name)(x, axis=axis, reverse=reverse)
    _same(got, _jax(getattr(jax.lax, name), x, axis=axis, reverse=reverse))
    g = fg.grad(lambda v: (getattr(lax, name)(v, axis, reverse) ** 2).sum())(x)
    want = _jax(jax.grad(lambda v: (getattr(jax.lax, name)(v, axis, reverse) ** 2).sum()), x)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["cumprod", "cumlogsumexp"])
@SETTINGS
@given(x=arrays(max_dims=2))
def test_cumulative_reductions_grads(name: str, x: np.ndarray) -> None:
    check_grads(lambda v: getattr(lax, name)(v, axis=0), (x,), order=2)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_cumulative_integers_match_jax(dtype: Any) -> None:
    x = (np.arange(12) % 5 + 1).astype(dtype).reshape(3, 4)
    for name in ("cumprod", "cummax", "cummin"):
        _same(getattr(lax, name)(x, 1), _jax(getattr(jax.lax, name), x, 1), exact=True)
    with pytest.raises(DTypeError):
        lax.cumlogsumexp(x)
    with pytest.raises(DTypeError):
        lax.cummax(np.array([True, False]))


@SETTINGS
@given(x=arrays(max_dims=2), y=arrays(max_dims=2), reverse=st.booleans())
def test_associative_scan_pytree_matches_jax(x: np.ndarray, y: np.ndarray,
                                             reverse: bool) -> None:
    y = np.resize(y, x.shape)

    def fn(a: Any, b: Any, m: Any) -> Any:
        # An affine-map composition: associative, not commutative, on a pair of arrays.
        return (m.multiply(a[0], b[0]), m.add(m.multiply(b[0], a[1]), b[1]))

    got = lax.associative_scan(lambda a, b: fn(a, b, lax_np), (x, y), reverse=reverse)
    want = _jax(jax.lax.associative_scan, lambda a, b: fn(a, b, jax.numpy), (x, y),
                reverse=reverse)
    for g, w in zip(got, want):
        _same(g, w)


class lax_np:  # noqa: N801 - the funcgrad twin of jax.numpy's two functions used above
    multiply = staticmethod(lax.mul)
    add = staticmethod(lax.add)


def test_associative_scan_jit_vmap_and_errors() -> None:
    x = np.arange(1.0, 13.0).reshape(3, 4)
    want = np.cumsum(x, axis=1)
    np.testing.assert_allclose(fg.jit(lambda v: lax.associative_scan(lax.add, v, axis=1))(x),
                               want)
    np.testing.assert_allclose(fg.vmap(lambda v: lax.associative_scan(lax.add, v))(x), want)
    with pytest.raises(ShapeError):
        lax.associative_scan(lax.add, (np.ones(3), np.ones(4)))
    with pytest.raises(ShapeError):
        lax.associative_scan(lax.add, np.ones(3), axis=2)
    with pytest.raises(ShapeError):
        lax.associative_scan(lambda a, b: a[:1], np.ones(4))


# ------------------------------------------------------------- creation, broadcasting


def test_creation_and_broadcasting_match_jax() -> None:
    x = np.arange(6.0).reshape(2, 3)
    _same(lax.broadcast(x, (4, 1)), _jax(jax.lax.broadcast, x, (4, 1)))
    _same(lax.broadcast_to_rank(x, 4), _jax(jax.lax.broadcast_to_rank, x, 4))
    _same(lax.broadcasted_iota(np.int32, (2, 3), 0),
          _jax(jax.lax.broadcasted_iota, np.int32, (2, 3), 0))
    for s, e in [(0, None), (1, 3), (0, 2), (-2, None)]:
        z = np.zeros((2, 3, 4))
        _same(lax.collapse(z, s, e), _jax(jax.lax.collapse, z, s, e))
    _same(lax.full((2, 3), 1.5, np.float32), _jax(jax.lax.full, (2, 3), 1.5, np.float32))
    _same(lax.full((3,), 2), _jax(jax.lax.full, (3,), 2))
    _same(lax.full_like(x, 3), _jax(jax.lax.full_like, x, 3))
    _same(lax.full_like(x, 3, np.int8, (4,)), _jax(jax.lax.full_like, x, 3, np.int8, (4,)))
    _same(lax.empty((2,), np.float32), _jax(jax.lax.empty, (2,), np.float32))
    _same(lax.broadcast_like(np.ones((1, 3)), np.zeros((2, 2, 3))),
          _jax(jax.lax.broadcast_like, np.ones((1, 3)), np.zeros((2, 2, 3))))
    assert lax.broadcast_shapes((2, 1), (1, 3), (3,)) == jax.lax.broadcast_shapes(
        (2, 1), (1, 3), (3,))
    with pytest.raises(ValueError):
        lax.broadcast_shapes((2,), (3,))
    with pytest.raises(TypeError):
        lax.full((2,), np.ones(2))


@pytest.mark.x32
def test_full_dtypes_in_32_bit_mode() -> None:
    assert np.asarray(lax.full((2,), 1.0)).dtype == np.float32
    assert lax.full((2,), 1.0).weak_type
    assert not lax.full((2,), 1.0, np.float32).weak_type


# ---------------------------------------------------------------------- clamp, select_n


@SETTINGS
@given(x=arrays(max_dims=2), lo=st.floats(-2, 0), hi=st.floats(0, 2))
def test_clamp_values_and_grads_match_jax(x: np.ndarray, lo: float, hi: float) -> None:
    x = np.round(x, 1)  # hits the bounds exactly now and then
    lo_a, hi_a = np.float64(np.round(lo, 1)), np.float64(np.round(hi, 1))
    _same(lax.clamp(lo_a, x, hi_a), _jax(jax.lax.clamp, lo_a, x, hi_a))
    # Bounds of x's shape: JAX's clamp gradient fails on scalar bounds.
    lo_a, hi_a = np.full(x.shape, lo_a), np.full(x.shape, hi_a)
    got = fg.grad(lambda a, v, b: lax.clamp(a, v, b).sum(), argnums=(0, 1, 2))(lo_a, x, hi_a)
    want = _jax(jax.grad(lambda a, v, b: jax.lax.clamp(a, v, b).sum(), argnums=(0, 1, 2)),
                lo_a, x, hi_a)
    for g, w in zip(got, want):
        _same(g, w)


def test_clamp_integers_and_errors() -> None:
    x = np.array([-5, 0, 9], np.int32)
    _same(lax.clamp(np.int32(-1), x, np.int32(3)),
          _jax(jax.lax.clamp, np.int32(-1), x, np.int32(3)), exact=True)
    with pytest.raises(DTypeError):
        lax.clamp(np.float32(0), np.ones(2), np.float64(1))
    with pytest.raises(ShapeError):
        lax.clamp(np.zeros(3), np.ones(2), 1.0)


@SETTINGS
@given(data=st.data())
def test_select_n_matches_jax(data: Any) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    n = data.draw(st.integers(1, 5))
    cases = [data.draw(hnp.arrays(np.float64, shape, elements=FLOATS)) for _ in range(n)]
    which = data.draw(hnp.arrays(np.int32, data.draw(st.sampled_from([(), shape])),
                                 elements=st.integers(0, n - 1)))
    _same(lax.select_n(which, *cases), _jax(jax.lax.select_n, which, *cases), exact=True)
    if n <= 2:
        b = which.astype(bool) if n == 2 else np.zeros_like(which, bool)
        _same(lax.select_n(b, *cases), _jax(jax.lax.select_n, b, *cases), exact=True)
    check_grads(lambda *c: lax.select_n(which, *c), cases, order=2)


def test_select_n_errors() -> None:
    with pytest.raises(ValueError):
        lax.select_n(np.int32(0))
    with pytest.raises(DTypeError):
        lax.select_n(np.array(True), np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(ShapeError):
        lax.select_n(np.zeros(3, np.int32), np.ones(2), np.ones(2))
    with pytest.raises(DTypeError):
        lax.select_n(np.float32(0), np.ones(2))


# -------------------------------------------------------------------------- bits


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32,
                                   np.int64, np.uint64])
@SETTINGS
@given(data=st.data())
def test_mulhi_matches_jax(dtype: Any, data: Any) -> None:
    info = np.iinfo(dtype)
    ints = st.integers(int(info.min), int(info.max))
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    x = data.draw(hnp.arrays(dtype, shape, elements=ints))
    y = data.draw(hnp.arrays(dtype, shape, elements=ints))
    _same(lax.mulhi(x, y), _jax(jax.lax.mulhi, x, y), exact=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bits", [(5, 10), (8, 7), (5, 2), (4, 3), (11, 0), (2, 20)])
def test_reduce_precision_matches_jax(dtype: Any, bits: tuple[int, int]) -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(40) * 10.0 ** rng.integers(-40, 40, 40),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 65520.0, 6e-8]])
    x = x.astype(dtype)
    _same(lax.reduce_precision(x, *bits), _jax(jax.lax.reduce_precision, x, *bits),
          exact=True)
    t = np.linspace(-1, 1, x.size).astype(dtype)
    _, got = fg.jvp(lambda v: lax.reduce_precision(v, *bits), (x,), (t,))
    _, want = _jax(lambda v, tt: jax.jvp(lambda u: jax.lax.reduce_precision(u, *bits),
                                         (v,), (tt,)), x, t)
    _same(got, want, exact=True)
    with pytest.raises(DTypeError):
        lax.reduce_precision(np.ones(2, np.int32), 5, 10)


def test_optimization_barrier_is_identity() -> None:
    tree = {"a": np.ones(2), "b": (np.float64(3.0),)}
    out = lax.optimization_barrier(tree)
    np.testing.assert_array_equal(out["a"], tree["a"])
    assert fg.grad(lambda v: lax.optimization_barrier((v, v))[0].sum() * 2)(np.ones(2)
                                                                            ).tolist() == [2, 2]


# ------------------------------------------------------------------- one-axis slicing


@SETTINGS
@given(x=arrays(), data=st.data())
def test_in_dim_functions_match_jax(x: np.ndarray, data: Any) -> None:
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    i = data.draw(st.integers(-n, n - 1))
    keep = data.draw(st.booleans())
    _same(lax.index_in_dim(x, i, axis, keep), _jax(jax.lax.index_in_dim, x, i, axis, keep))
    j = np.int32(data.draw(st.integers(-n - 2, n + 2)))
    size = data.draw(st.integers(0, n))
    _same(lax.dynamic_slice_in_dim(x, j, size, axis),
          _jax(jax.lax.dynamic_slice_in_dim, x, j, size, axis))
    _same(lax.dynamic_index_in_dim(x, j, axis, keep),
          _jax(jax.lax.dynamic_index_in_dim, x, j, axis, keep))
    upd = np.full(x.shape[:axis % x.ndim] + (size,) + x.shape[axis % x.ndim + 1:], 7.0)
    _same(lax.dynamic_update_slice_in_dim(x, upd, j, axis),
          _jax(jax.lax.dynamic_update_slice_in_dim, x, upd, j, axis))
    row = np.delete(np.full(x.shape, 9.0), np.s_[1:], axis)
    _same(lax.dynamic_update_index_in_dim(x, row, j, axis),
          _jax(jax.lax.dynamic_update_index_in_dim, x, row, j, axis))
    check_grads(lambda v: lax.dynamic_slice_in_dim(v, j, size, axis), (x,), order=2)
    f = fg.jit(lambda v, k: lax.dynamic_index_in_dim(v, k, axis, keep))
    _same(f(x, j), _jax(jax.lax.dynamic_index_in_dim, x, j, axis, keep))


def test_in_dim_errors() -> None:
    with pytest.raises(IndexError):
        lax.index_in_dim(np.ones(3), 3)
    with pytest.raises(ShapeError):
        lax.dynamic_slice_in_dim(np.ones(3), 0, 1, axis=1)
    with pytest.raises(DTypeError):
        lax.dynamic_slice_in_dim(np.ones(3), 0.5, 1)


@SETTINGS
@given(data=st.data())
def test_index_take_matches_jax(data: Any) -> None:
    x = data.draw(arrays(min_dims=2, max_dims=3))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, x.ndim - 1), min_size=1))))  # JAX's need
    n = data.draw(st.integers(0, 4))
    idxs = [data.draw(hnp.arrays(np.int32, (n,), elements=st.integers(-7, 7))) for _ in axes]
    _same(lax.index_take(x, idxs, axes), _jax(jax.lax.index_take, x, idxs, axes))


@SETTINGS
@given(x=arrays(), data=st.data())
def test_split_stack_unstack_tile_match_jax(x: np.ndarray, data: Any) -> None:
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    cut = data.draw(st.integers(0, n))
    sizes = (cut, n - cut)
    for g, w in zip(lax.split(x, sizes, axis), _jax(jax.lax.split, x, sizes, axis)):
        _same(g, w)
    _same(lax.stack([x, x + 1], axis), _jax(jax.lax.stack, [x, x + 1], axis))
    for g, w in zip(lax.unstack(x, axis), _jax(jax.lax.unstack, x, axis)):
        _same(g, w)
    reps = tuple(data.draw(st.integers(0, 3)) for _ in range(x.ndim))
    _same(lax.tile(x, reps), _jax(jax.lax.tile, x, reps))
    check_grads(lambda v: lax.tile(v, reps), (x,), order=2)
    with pytest.raises(ShapeError):
        lax.split(x, (n + 1,), axis)
    with pytest.raises(TypeError):
        lax.tile(x, reps + (1,))


# --------------------------------------------------------------------------- dots


@SETTINGS
@given(data=st.data())
def test_dot_and_batch_matmul_match_jax(data: Any) -> None:
    m, k, n, b = (data.draw(st.integers(1, 4)) for _ in range(4))
    lhs_shape = data.draw(st.sampled_from([(k,), (m, k)]))
    rhs_shape = data.draw(st.sampled_from([(k,), (k, n)]))
    lhs = data.draw(hnp.arrays(np.float64, lhs_shape, elements=FLOATS))
    rhs = data.draw(hnp.arrays(np.float64, rhs_shape, elements=FLOATS))
    _same(lax.dot(lhs, rhs), _jax(jax.lax.dot, lhs, rhs))
    check_grads(lax.dot, (lhs, rhs), order=2)
    a = data.draw(hnp.arrays(np.float64, (b, m, k), elements=FLOATS))
    c = data.draw(hnp.arrays(np.float64, (b, k, n), elements=FLOATS))
    _same(lax.batch_matmul(a, c), _jax(jax.lax.batch_matmul, a, c))
    dn = (((2,), (1,)), ((0,), (0,)))
    _same(lax.dot(a, c, dimension_numbers=dn), _jax(jax.lax.dot, a, c, dimension_numbers=dn))
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    _same(lax.dot(ints, ints.T, preferred_element_type=np.float32),
          _jax(jax.lax.dot, ints, ints.T, preferred_element_type=np.float32))
    with pytest.raises(ShapeError):
        lax.dot(a, c)
    with pytest.raises(ShapeError):
        lax.batch_matmul(a, c[0])


@SETTINGS
@given(data=st.data())
def test_ragged_dot_matches_jax(data: Any) -> None:
    g, k, n = (data.draw(st.integers(1, 3)) for _ in range(3))
    sizes = np.array([data.draw(st.integers(0, 3)) for _ in range(g)], np.int32)
    m = int(sizes.sum()) + data.draw(st.integers(0, 2))
    lhs = data.draw(hnp.arrays(np.float64, (m, k), elements=FLOATS))
    rhs = data.draw(hnp.arrays(np.float64, (g, k, n), elements=FLOATS))
    if m:
        _same(lax.ragged_dot(lhs, rhs, sizes), _jax(jax.lax.ragged_dot, lhs, rhs, sizes))
        check_grads(lambda a, b: lax.ragged_dot(a, b, sizes), (lhs, rhs), order=2)
    with pytest.raises(ShapeError):
        lax.ragged_dot(lhs, rhs[0], sizes)


# --------------------------------------------------------------------------- reduce


@pytest.mark.parametrize("op,init", [("add", 0.0), ("mul", 1.0), ("max", -np.inf),
                                     ("min", np.inf), ("add", 1.5), ("max", 0.0)])
@SETTINGS
@given(x=arrays(), data=st.data())
def test_reduce_matches_jax(op: str, init: float, x: np.ndarray, data: Any) -> None:
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, x.ndim - 1)))))
    identity = {"add": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}[op]
    # XLA takes the init for an identity (JAX documents that it must be one) and drops it
    # where each result reduces a single element; funcgrad applies it once everywhere
    # (sharp_bits). Non-identity inits are compared where XLA applies them.
    assume(init == identity or math.prod(x.shape[d] for d in dims) > 1)
    got = lax.reduce(x, np.float64(init), getattr(lax, op), dims)
    want = _jax(jax.lax.reduce, x, np.float64(init), getattr(jax.lax, op), dims)
    _same(got, want)


@SETTINGS
@given(x=arrays(max_dims=2), data=st.data())
def test_reduce_general_body_pytree_and_grads(x: np.ndarray, data: Any) -> None:
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, x.ndim - 1), min_size=1))))
    y = np.arange(x.size, dtype=np.int32).reshape(x.shape)

    def argmax_body(a: Any, b: Any, m: Any) -> Any:
        pick = m.lt(a[0], b[0])
        return (m.select(pick, b[0], a[0]), m.select(pick, b[1], a[1]))

    got = lax.reduce((x, y), (np.float64(-np.inf), np.int32(0)),
                     lambda a, b: argmax_body(a, b, lax), dims)
    want = _jax(jax.lax.reduce, (x, y), (np.float64(-np.inf), np.int32(0)),
                lambda a, b: argmax_body(a, b, jax.lax), dims)
    _same(got[0], want[0])
    np.testing.assert_allclose(np.asarray(got[0]), x.max(axis=dims))

    def body(a: Any, b: Any) -> Any:
        return a * b + a + b  # associative: (1+a)(1+b) - 1

    check_grads(lambda v: lax.reduce(v * 0.1, np.float64(0.0), body, dims), (x,), order=2)
    f = fg.jit(lambda v: lax.reduce(v, np.float64(0.0), body, dims))
    # atol: XLA flushes the subnormals that x * 0.1 can make to zero; NumPy keeps them
    np.testing.assert_allclose(np.asarray(f(x * 0.1)),
                               _jax(jax.lax.reduce, x * 0.1, np.float64(0.0), body, dims),
                               rtol=1e-10, atol=np.finfo(np.float64).tiny)
    if x.ndim == 2:
        vm = fg.vmap(lambda v: lax.reduce(v, np.float64(0.0), body, (0,)))(x * 0.1)
        np.testing.assert_allclose(np.asarray(vm), np.prod(1 + x * 0.1, axis=1) - 1,
                                   rtol=1e-10, atol=1e-12)


def test_reduce_errors() -> None:
    with pytest.raises(ValueError):
        lax.reduce((np.ones(2), np.ones(2)), 0.0, lax.add, (0,))
    with pytest.raises(ShapeError):
        lax.reduce(np.ones(2), np.zeros(2), lax.add, (0,))
    with pytest.raises(ShapeError):
        lax.reduce(np.ones(2), np.float64(0), lax.add, (1,))


@pytest.mark.parametrize("name", ["reduce_and", "reduce_or", "reduce_xor"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8])
def test_bitwise_reductions_match_jax(name: str, dtype: Any) -> None:
    rng = np.random.default_rng(1)
    x = rng.integers(0, 255, (3, 4, 2)).astype(dtype)
    for axes in [(0,), (1, 2), (), (0, 1, 2)]:
        _same(getattr(lax, name)(x, axes), _jax(getattr(jax.lax, name), x, axes), exact=True)
    with pytest.raises(DTypeError):
        getattr(lax, name)(np.ones(2), (0,))


# ------------------------------------------------------------------------- top-k


@pytest.mark.parametrize("name", ["approx_max_k", "approx_min_k"])
@SETTINGS
@given(data=st.data())
def test_approx_k_matches_exact_jax(name: str, data: Any) -> None:
    x = data.draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, max_side=6),
                             elements=FLOATS, unique=True))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    k = data.draw(st.integers(1, x.shape[dim]))  # JAX refuses k = 0
    got = getattr(lax, name)(x, k, reduction_dimension=dim)
    want = _jax(getattr(jax.lax, name), x, k, reduction_dimension=dim)
    for g, w in zip(got, want):
        _same(g, w)
    with pytest.raises(ValueError):
        getattr(lax, name)(x, x.shape[dim] + 1, reduction_dimension=dim)


def test_platform_dependent() -> None:
    assert lax.platform_dependent(3, cpu=lambda v: v + 1, cuda=lambda v: v - 1) == 4
    assert lax.platform_dependent(3, default=lambda v: v * 2) == 6
    with pytest.raises(ValueError):
        lax.platform_dependent(3, tpu=lambda v: v)
