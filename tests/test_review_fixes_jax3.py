"""JAX-face behaviours found by a third side-by-side review, against JAX 0.10.2 in its 32-bit
default (``x32``) and in 64-bit mode (``jax_x64``): the LU primitive on float16/bfloat16
(it returned the unfactored matrix) and the half-precision refusals of ``jnp.linalg``,
``det``/``slogdet``'s closed forms, norms and ``vecdot`` of complex input, the derivatives
of ``sparse_sigmoid`` and of ``pow`` at 0, empty ``fori_loop`` carries, ``==`` with
non-arrays, ``custom_vjp`` bwd outputs with ``None`` leaves or wrong shapes, half-precision
``bernoulli``/``uniform`` bits, ``switch``'s index check and ``scan(_split_transpose=)``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from finite_differences import central_grad
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_oracle import same_error as _same_error

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives import decompositions as D

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")
X32 = pytest.mark.x32


def _same(ours, theirs, *, weak=True):
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.dtype == t.dtype
    assert o.shape == t.shape
    np.testing.assert_array_equal(o, t)
    if weak:
        assert getattr(ours, "weak_type", None) == getattr(theirs, "weak_type", None)


def _matrices(n_min=1, n_max=4):
    return st.integers(n_min, n_max).flatmap(lambda n: st.lists(
        st.integers(-8, 8), min_size=n * n, max_size=n * n).map(
            lambda v, n=n: np.array(v, np.float64).reshape(n, n) / 2))


# ------------------------------------------------------------------ 1. half-precision LU

@X32
@settings(max_examples=20, deadline=None)
@given(a=_matrices(), half=st.sampled_from(["float16", "bfloat16"]))
def test_lu_primitive_factors_half_precision(a, half):
    # JAX refuses lu in half precision, so the reference is its float32 LU of the same
    # (half-rounded) matrix, rounded to the half type once.
    dt = fnp.dtype(half)
    x = a.astype(dt)
    lu_, piv, perm = D.lu(fnp.asarray(x))
    ref_lu, ref_piv, ref_perm = jax.lax.linalg.lu(jnp.asarray(x.astype(np.float32)))
    assert lu_.dtype == dt
    np.testing.assert_array_equal(np.asarray(piv), np.asarray(ref_piv))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(ref_perm))
    np.testing.assert_array_equal(np.asarray(lu_), np.asarray(ref_lu).astype(dt))


@X32
@settings(max_examples=20, deadline=None)
@given(a=_matrices(1, 3), half=st.sampled_from(["float16", "bfloat16"]))
def test_small_det_and_slogdet_of_half_matrices_follow_jax(a, half):
    x = a.astype(fnp.dtype(half))
    if a.shape[0] > 1:  # (a 1x1 det is the entry itself: JAX's exp(log|a|) rounds)
        _same(fnp.linalg.det(x), jnp.linalg.det(x))
    if a.shape[0] <= 2:
        for ours, theirs in zip(fnp.linalg.slogdet(x), jnp.linalg.slogdet(x)):
            _same(ours, theirs)


@X32
@pytest.mark.parametrize("half", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", ["inv", "solve", "lu", "cholesky", "det4", "slogdet3",
                                  "matrix_power", "tensorsolve"])
def test_half_precision_linalg_refusals_follow_jax(half, case):
    def f(j, np_, half=half, case=case):
        a4 = np_.eye(4, dtype=half) * 2
        a2 = np_.eye(2, dtype=half) * 2
        return {
            "inv": lambda: np_.linalg.inv(a2), "solve": lambda: np_.linalg.solve(a2, a2[0]),
            "lu": lambda: j.lax.linalg.lu(a2), "cholesky": lambda: np_.linalg.cholesky(a2),
            "det4": lambda: np_.linalg.det(a4), "slogdet3": lambda: np_.linalg.slogdet(a4[:3, :3]),
            "matrix_power": lambda: np_.linalg.matrix_power(a2, -1),
            "tensorsolve": lambda: np_.linalg.tensorsolve(a2, a2[0]),
        }[case]()

    ours, theirs = _same_error(f)
    assert "Unsupported dtype" in ours and "Unsupported dtype" in theirs


@settings(max_examples=20, deadline=None)
@given(a=_matrices(1, 4))
def test_det_slogdet_values_and_gradients_follow_jax_x64(a):
    a = a + np.eye(a.shape[0]) * 0.25  # rarely singular, never by construction
    np.testing.assert_allclose(np.asarray(fnp.linalg.det(a)), np.asarray(jnp.linalg.det(a)),
                               rtol=1e-12, atol=1e-12)
    s, l_ = fnp.linalg.slogdet(a)
    js, jl = jnp.linalg.slogdet(a)
    _same(s, js)
    np.testing.assert_allclose(np.asarray(l_), np.asarray(jl), rtol=1e-12, atol=1e-12)
    if abs(np.linalg.det(a)) > 1e-3:
        np.testing.assert_allclose(np.asarray(fg.grad(fnp.linalg.det)(a)),
                                   np.asarray(jax.grad(jnp.linalg.det)(a)), rtol=1e-9,
                                   atol=1e-9)
        np.testing.assert_allclose(
            np.asarray(fg.grad(lambda m: fnp.linalg.slogdet(m)[1])(a)),
            np.asarray(jax.grad(lambda m: jnp.linalg.slogdet(m)[1])(a)), rtol=1e-9, atol=1e-9)


def _fd(f, x, h=1e-5):
    """Central differences of scalar f at array x (float64)."""
    return central_grad(f, x, h)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_small_det_slogdet_derivatives_match_finite_differences(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=(n, n)) + 2 * np.eye(n)
    for fun in (fnp.linalg.det, lambda m: fnp.linalg.slogdet(m)[1]):
        g = fg.grad(fun)
        np.testing.assert_allclose(np.asarray(g(a)), _fd(lambda m, f=fun: float(f(m)), a),
                                   rtol=1e-6, atol=1e-7)
        hess = np.asarray(fg.jacfwd(g)(a))
        fd2 = np.stack([_fd(lambda m, i=i, g=g: float(np.asarray(g(m))[i]), a)
                        for i in np.ndindex(a.shape)]).reshape(hess.shape)
        np.testing.assert_allclose(hess, fd2, rtol=1e-5, atol=1e-6)
    # 2x2 and 3x3 are JAX's closed forms: finite at a singular matrix, as JAX's
    if n > 1:
        s = np.ones((n, n))
        np.testing.assert_allclose(np.asarray(fg.grad(fnp.linalg.det)(s)),
                                   np.asarray(jax.grad(jnp.linalg.det)(s)))


# ------------------------------------------------------------------ 2./3. complex norms

_cplx = st.integers(1, 4).flatmap(lambda m: st.integers(1, 4).flatmap(lambda n: st.lists(
    st.tuples(st.integers(-5, 5), st.integers(-5, 5)), min_size=m * n, max_size=m * n).map(
        lambda v, m=m, n=n: np.array([complex(r, i) for r, i in v]).reshape(m, n) / 2)))


@X32
@settings(max_examples=10, deadline=None)
@given(z=_cplx, real=st.booleans(), keepdims=st.booleans(),
       vord=st.sampled_from([None, 1, 2, 3, 0, np.inf, -np.inf, -1, 0.5]),
       mord=st.sampled_from([None, "fro", 1, -1, np.inf, -np.inf]),
       axes=st.sampled_from([(0, 1), (1, 0), (-1, -2)]))
def test_norms_of_complex_and_axis_order_follow_jax(z, real, keepdims, vord, mord, axes):
    x = (z.real if real else z).astype(np.float32 if real else np.complex64)

    def close(ours, theirs):
        o, t = np.asarray(ours), np.asarray(theirs)
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=2e-6, atol=1e-6)

    close(fnp.linalg.norm(x), jnp.linalg.norm(x))
    close(fnp.linalg.norm(x, keepdims=keepdims), jnp.linalg.norm(x, keepdims=keepdims))
    close(fnp.linalg.norm(x, mord, axes, keepdims), jnp.linalg.norm(x, mord, axes, keepdims))
    if mord is not None:
        close(fnp.linalg.matrix_norm(x, ord=mord), jnp.linalg.matrix_norm(x, ord=mord))
    o = 2 if vord is None else vord
    close(fnp.linalg.vector_norm(x, ord=o), jnp.linalg.vector_norm(x, ord=o))
    close(fnp.linalg.vector_norm(x, ord=o, axis=1, keepdims=keepdims),
          jnp.linalg.vector_norm(x, ord=o, axis=1, keepdims=keepdims))
    close(fnp.linalg.norm(x, vord, 0), jnp.linalg.norm(x, vord, 0))


def test_norm_of_complex_vector_from_the_review():
    z = np.array([3 + 4j, 1j], np.complex64)
    np.testing.assert_allclose(float(fnp.linalg.norm(z)), float(jnp.linalg.norm(z)))
    assert fnp.linalg.norm(z).dtype == np.float32
    np.testing.assert_allclose(np.asarray(fg.grad(lambda v: fnp.linalg.norm(v))(z)),
                               np.asarray(jax.grad(lambda v: jnp.linalg.norm(v))(z)), rtol=1e-6)


@X32
@settings(max_examples=20, deadline=None)
@given(z=_cplx, w=_cplx)
def test_vecdot_conjugates_its_first_argument_as_jax(z, w):
    z = z.astype(np.complex64)
    w = np.resize(w, z.shape).astype(np.complex64)
    for ours, theirs in ((fnp.vecdot, jnp.vecdot), (fnp.linalg.vecdot, jnp.linalg.vecdot)):
        for axis in (-1, 0):
            o, t = ours(z, w, axis=axis), theirs(z, w, axis=axis)
            assert o.dtype == t.dtype
            np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6, atol=1e-6)
        o, t = ours(z, z.real), theirs(z, z.real)
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------ 4. sparse_sigmoid

@X32
@settings(max_examples=20, deadline=None)
@given(x=st.one_of(st.sampled_from([-1.0, 1.0, 0.0, -2.0, 2.0]), st.floats(-3, 3)))
def test_sparse_sigmoid_and_its_derivatives_follow_jax(x):
    f, jf = fg.nn.sparse_sigmoid, jax.nn.sparse_sigmoid
    _same(f(x), jf(x))
    _same(fg.grad(f)(x), jax.grad(jf)(x))
    _same(fg.grad(fg.grad(f))(x), jax.grad(jax.grad(jf))(x))
    _same(f(np.array([1, -3], np.int8)), jf(np.array([1, -3], np.int8)))


@pytest.mark.parametrize("x", [-1.7, -0.4, 0.3, 0.9, 1.6])
def test_sparse_sigmoid_derivatives_match_finite_differences(x):
    f = fg.nn.sparse_sigmoid
    assert float(fg.grad(f)(x)) == pytest.approx((float(f(x + 1e-6)) - float(f(x - 1e-6)))
                                                 / 2e-6, abs=1e-6)
    assert float(fg.grad(fg.grad(f))(x)) == 0.0


# ------------------------------------------------------------------ 5. pow at 0

_POWS = {
    "x**0.": lambda x: x ** 0.0, "x**1.": lambda x: x ** 1.0, "x**2.": lambda x: x ** 2.0,
    "x**0.5": lambda x: x ** 0.5, "x**1.5": lambda x: x ** 1.5, "x**-1.": lambda x: x ** -1.0,
    "x**0": lambda x: x ** 0, "x**1": lambda x: x ** 1, "x**2": lambda x: x ** 2,
    "x**x": lambda x: x ** x,
}


@X32
@pytest.mark.parametrize("name", sorted(_POWS))
@pytest.mark.parametrize("x", [0.0, 1.0, -2.0, 0.5])
def test_pow_derivatives_at_zero_follow_jax(name, x):
    f = _POWS[name]
    for ours, theirs in ((fg.grad(f), jax.grad(f)), (fg.grad(fg.grad(f)), jax.grad(jax.grad(f))),
                         (lambda v: fg.jvp(f, (v,), (1.0,))[1],
                          lambda v: jax.jvp(f, (v,), (1.0,))[1])):
        o, t = ours(x), theirs(x)
        assert isinstance(o, fg.Array)
        # (The weak type of the first derivative is the primal's in funcgrad; docs/sharp_bits.)
        _same(o, t, weak=False)


@X32
def test_pow_at_zero_from_the_review():
    g = fg.grad(lambda x: x ** 0.0)(0.0)
    assert np.isnan(np.asarray(g)) and np.isnan(np.asarray(jax.grad(lambda x: x ** 0.0)(0.0)))
    # lax.pow and integer_pow: the same rules
    np.testing.assert_array_equal(np.asarray(fg.grad(lambda x: fg.lax.pow(x, 0.0))(0.0)), np.nan)
    _same(fg.grad(fg.grad(lambda x: fg.lax.integer_pow(x, 1)))(0.0),
          jax.grad(jax.grad(lambda x: jax.lax.integer_pow(x, 1)))(0.0))


@settings(max_examples=20, deadline=None)
@given(x=st.floats(0.2, 3.0), y=st.floats(-2.0, 3.0).filter(lambda v: v == 0 or abs(v) > 1e-9))
def test_pow_derivatives_match_finite_differences(x, y):
    # (subnormal y aside: XLA flushes those to zero on the CPU)
    def f(a, b):
        return a ** b

    h = 1e-6
    gx, gy = (float(v) for v in fg.grad(f, argnums=(0, 1))(x, y))
    assert gx == pytest.approx((f(x + h, y) - f(x - h, y)) / (2 * h), rel=1e-5, abs=1e-6)
    assert gy == pytest.approx((f(x, y + h) - f(x, y - h)) / (2 * h), rel=1e-5, abs=1e-6)
    h = 1e-4
    hxx = float(fg.grad(fg.grad(f))(x, y))
    assert hxx == pytest.approx((f(x + h, y) - 2 * f(x, y) + f(x - h, y)) / h ** 2, rel=1e-3,
                                abs=1e-4)
    np.testing.assert_allclose(np.asarray(fg.hessian(f, argnums=(0, 1))(x, y)),
                               np.asarray(jax.hessian(f, argnums=(0, 1))(x, y)), rtol=1e-9)


# ------------------------------------------------------------------ 6. empty fori_loop

@X32
@settings(max_examples=20, deadline=None)
@given(lo=st.integers(-3, 5), hi=st.integers(-3, 5),
       init=st.sampled_from([0, 1.5, (0, 2.0), [1, 2.0], (np.float32(1.0), 3)]))
def test_fori_loop_carries_follow_jax(lo, hi, init):
    def body(i, c):
        if isinstance(c, (tuple, list)):
            return type(c)([c[0] + i, c[1]])  # the second leaf passes through
        return c + i

    ours = fg.lax.fori_loop(lo, hi, body, init)
    theirs = jax.lax.fori_loop(lo, hi, body, init)
    o_leaves, t_leaves = fg.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(o_leaves) == len(t_leaves)
    for o, t in zip(o_leaves, t_leaves):
        assert isinstance(o, fg.Array) == isinstance(t, jax.Array)
        assert type(o) is type(t) or isinstance(o, fg.Array)
        _same(o, t)


@X32
def test_scan_returns_untouched_carries_and_takes_split_transpose():
    def f(c, x):
        return (c[0] + x, c[1]), x

    for split in (False, True):
        ours = fg.lax.scan(f, (0, 2.0), fnp.arange(3), _split_transpose=split)
        theirs = jax.lax.scan(f, (0, 2.0), jnp.arange(3), _split_transpose=split)
        assert ours[0][1] == 2.0 and type(ours[0][1]) is type(theirs[0][1])
        _same(ours[0][0], theirs[0][0])
        _same(ours[1], theirs[1])
    g = fg.grad(lambda a: fg.lax.scan(lambda c, x: ((c[0] * x, c[1]), x), (a, 2.0),
                                      fnp.arange(1.0, 3.0))[0][0])(1.0)
    assert float(g) == 2.0


# ------------------------------------------------------------------ 7. == with non-arrays

class _Thing:
    pass


@X32
@pytest.mark.parametrize("other", ["x", "1", b"x", None, _Thing(), object()])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_eq_ne_with_non_arrays_follow_jax(other, shape):
    a, ja = fnp.ones(shape), jnp.ones(shape)
    assert (a == other) is (ja == other) is False
    assert (a != other) is (ja != other) is True
    assert (other == a) is (other == ja) is False
    with pytest.raises(TypeError):
        ja < other  # noqa: B015
    with pytest.raises(TypeError, match="not supported between"):
        a < other  # noqa: B015
    _same(fg.jit(lambda v: v == other)(a), jax.jit(lambda v: v == other)(ja))


@X32
@pytest.mark.parametrize("other", [[1.0, 2.0], (1.0, 2.0), {1: 2}, {1.0}])
def test_eq_with_containers_raises_as_jax(other):
    ours, theirs = _same_error(lambda j, np_, o: np_.ones(2) == o, other)
    assert ours == theirs
    ours, theirs = _same_error(lambda j, np_, o: np_.ones(2) != o, other)
    assert ours == theirs
    _same(fnp.ones(2) == np.ones(2), jnp.ones(2) == np.ones(2))
    _same(fnp.ones(2) == 1, jnp.ones(2) == 1)


# ------------------------------------------------------------------ 8. custom_vjp bwd

def _custom(j, bwd_out, nargs=2):
    @j.custom_vjp
    def f(x, d):
        return x * d["a"] + d["b"]

    f.defvjp(lambda x, d: (f(x, d), (x, d)), lambda res, g: bwd_out(res, g))
    return f


# No subnormal values or products (XLA flushes them to zero).
_NORMAL_PRODUCTS = st.floats(-3, 3, width=32).filter(lambda v: v == 0 or abs(v) > 1e-15)


@X32
@settings(max_examples=20, deadline=None)
@given(x=_NORMAL_PRODUCTS, a=_NORMAL_PRODUCTS, b=_NORMAL_PRODUCTS, which=st.integers(0, 3))
def test_custom_vjp_none_cotangent_leaves_follow_jax(x, a, b, which):
    outs = [lambda res, g: (g * res[1]["a"], {"a": g * res[0], "b": None}),
            lambda res, g: (None, {"a": g * res[0], "b": g}),
            lambda res, g: (g * res[1]["a"], None),
            lambda res, g: [None, {"a": None, "b": g}]][which]
    d = {"a": a, "b": b}
    ours = fg.grad(_custom(fg, outs), argnums=(0, 1))(x, d)
    theirs = jax.grad(_custom(jax, outs), argnums=(0, 1))(x, d)
    for o, t in zip(fg.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        _same(o, t, weak=False)
    ours = fg.jit(fg.grad(_custom(fg, outs), argnums=(0, 1)))(x, d)
    for o, t in zip(fg.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        _same(o, t, weak=False)


@X32
@pytest.mark.parametrize("case", ["shape", "scalar", "count", "struct", "kind"])
def test_custom_vjp_bad_bwd_outputs_raise_as_jax(case):
    def run(j, np_, case=case):
        @j.custom_vjp
        def f(x, y):
            return (x * y).sum()

        bad = {
            "shape": lambda res, g: (np_.ones(3), res[0]),
            "scalar": lambda res, g: (np_.ones(2), np_.ones((1,))),
            "count": lambda res, g: (np_.ones(2),),
            "struct": lambda res, g: ({"a": np_.ones(2)}, res[0]),
            "kind": lambda res, g: np_.ones(2),
        }[case]
        f.defvjp(lambda x, y: (f(x, y), (x, y)), bad)
        return j.grad(f)(np_.ones(2), np_.float32(1.0))

    ours, theirs = _same_error(run)
    assert ours == theirs


# ------------------------------------------------------------------ 9. half-precision draws

@X32
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), p=st.floats(0, 1), half=st.sampled_from(
    ["float16", "bfloat16"]), bounds=st.sampled_from([(0.0, 1.0), (-2.0, 3.0), (0.1, 0.7)]))
def test_half_precision_bernoulli_and_uniform_bits_follow_jax(seed, p, half, bounds):
    k, jk = fg.random.PRNGKey(seed), jax.random.PRNGKey(seed)
    dt = fnp.dtype(half)
    _same(fg.random.bernoulli(k, dt.type(p), (16,)), jax.random.bernoulli(jk, dt.type(p), (16,)))
    _same(fg.random.bernoulli(k, np.array([p, 1 - p], dt)),
          jax.random.bernoulli(jk, np.array([p, 1 - p], dt)))
    _same(fg.random.uniform(k, (32,), dt, *bounds), jax.random.uniform(jk, (32,), dt, *bounds))


# ------------------------------------------------------------------ 10. switch's index

@X32
@pytest.mark.parametrize("index", [1.0, np.float32(1.0), True, 1 + 0j, np.array([1]),
                                   "one"])
def test_switch_index_checks_follow_jax(index):
    ours, theirs = _same_error(
        lambda j, np_, i: j.lax.switch(i, [lambda x: x + 1, lambda x: x * 2], 3.0), index)
    assert ours == theirs


@X32
@pytest.mark.parametrize("index", [1, -4, 7, np.int8(1), np.uint32(0)])
def test_switch_integer_indices_still_work(index):
    branches = [lambda x: x + 1, lambda x: x * 2]
    _same(fg.lax.switch(index, branches, 3.0), jax.lax.switch(index, branches, 3.0))
    # cond's predicate is no switch index: floats stay accepted, as in JAX
    _same(fg.lax.cond(1.5, *branches, 3.0), jax.lax.cond(1.5, *branches, 3.0))
    assert math.isclose(float(fg.jit(lambda i: fg.lax.switch(i, branches, 3.0))(1)), 6.0)
