"""CPU fusion with numba: fused programs give the NumPy path's results.

Every check compiles the same jaxpr twice, with CPU fusion on and off, and compares:
bit for bit where the operations are exact (arithmetic, comparisons, select, NumPy's
SIMD ufuncs, which fused kernels call per block) and float sums over trailing axes
(NumPy's pairwise order), to a few ulp where numba computes a function with libm.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.backends import numba_fusion
from funcgrad.backends.compile_python import compile_jaxpr
from funcgrad.core import PRIMITIVES

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def _small_clusters_fuse():  # type: ignore[no-untyped-def]
    fg.config.update("funcgrad_cpu_fusion_min_size", 0)
    fg.config.update("funcgrad_cpu_fusion", None)
    yield
    fg.config.update("funcgrad_cpu_fusion_min_size", None)
    fg.config.update("funcgrad_cpu_fusion", None)


def _kernels(cj) -> str:  # type: ignore[no-untyped-def]
    """The names of the fused kernels ``compile_jaxpr`` would call for ``cj`` now."""
    return " ".join(e.primitive.name for e in numba_fusion.fuse_jaxpr(cj).eqns
                    if isinstance(e.primitive, numba_fusion.FusedCall))


def _both(f, *args):  # type: ignore[no-untyped-def]
    """(fused results, unfused results, the fused kernels' names) of ``f`` on ``args``."""
    cj = fg.make_jaxpr(f)(*args)
    fused = compile_jaxpr(cj, np)
    kernels = _kernels(cj)
    fg.config.update("funcgrad_cpu_fusion", False)
    try:
        plain = compile_jaxpr(cj, np)
        assert _kernels(cj) == ""
    finally:
        fg.config.update("funcgrad_cpu_fusion", None)
    return fused(*args), plain(*args), kernels


def _equal(got, want):  # type: ignore[no-untyped-def]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


# ------------------------------------------------------------------ elementwise

UNARY = {"tanh": fnp.tanh, "exp": fnp.exp, "sin": fnp.sin, "abs": fnp.abs,
         "square": lambda a: a * a, "neg": lambda a: -a, "half": lambda a: a * 0.5,
         "relu": lambda a: fnp.where(a > 0, a, 0.0), "sigmoid": fg.nn.sigmoid,
         "log1p_abs": lambda a: fnp.log1p(fnp.abs(a))}
BINARY = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b,
          "max": fnp.maximum, "min": fnp.minimum, "div": lambda a, b: a / (b * b + 1.0),
          "select": lambda a, b: fnp.where(a < b, a, b)}
EXACT = {"square", "neg", "half", "relu", "add", "mul", "sub", "max", "min", "select",
         "abs", "tanh", "exp", "sin", "log1p_abs"}  # the last four: NumPy's ufuncs per block


@st.composite
def _chains(draw):  # type: ignore[no-untyped-def]
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    # y broadcasts into x's shape: a suffix of it with some sizes set to 1.
    k = draw(st.integers(0, len(shape)))
    yshape = tuple(1 if draw(st.booleans()) else d for d in shape[len(shape) - k:])
    ops = draw(st.lists(st.sampled_from(sorted(UNARY) + sorted(BINARY)), min_size=2,
                        max_size=8))
    seed = draw(st.integers(0, 2**16))
    return shape, yshape, ops, seed


def _chain_fn(ops):  # type: ignore[no-untyped-def]
    def f(x, y):
        # Two operations the loop computes itself first: a cluster of fewer stays NumPy code
        # (NumPy's own passes are as fast), and every chain here must make a kernel.
        z = x * 0.5 - y
        for name in ops:
            z = UNARY[name](z) if name in UNARY else BINARY[name](z, y)
        return z
    return f


# Each example compiles kernels (0.1-1 s each): no shrinking, a failure is shown as drawn.
@settings(max_examples=15, deadline=None, phases=(Phase.explicit, Phase.generate))
@given(_chains())
def test_elementwise_chains_with_broadcasting(case) -> None:  # type: ignore[no-untyped-def]
    shape, yshape, ops, seed = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    y = rng.standard_normal(yshape).astype(np.float32)
    got, want, source = _both(_chain_fn(ops), x, y)
    assert "cpu_fused" in source
    if set(ops) <= EXACT:
        _equal(got, want)
    else:
        np.testing.assert_allclose(got[0], want[0], rtol=3e-6, atol=1e-7)


def test_transcendentals_run_as_numpy_ufuncs_per_block() -> None:
    """A cluster with NumPy SIMD functions alternates numba loops and those ufuncs over
    blocks: the results are NumPy's, bit for bit, also across block boundaries."""
    x = np.random.default_rng(0).standard_normal(numba_fusion.BLOCK * 2 + 37).astype(
        np.float32)
    got, want, source = _both(
        lambda a: fnp.tanh(a * 1.5 + 0.5) * fnp.exp(-(a * a)) + fnp.sin(a) * 0.25, x)
    fused = numba_fusion.fused_kernel_source(fg.make_jaxpr(
        lambda a: fnp.tanh(a * 1.5 + 0.5) * fnp.exp(-(a * a)) + fnp.sin(a) * 0.25)(x), 0)
    assert fused is not None and "for s in range(0," in fused
    _equal(got, want)


# ------------------------------------------------------------------ reductions


@pytest.mark.parametrize("shape,axes", [((2100,), (0,)), ((3, 1000), (1,)), ((4, 7, 130), (1, 2)),
                                        ((5, 3), (0, 1)), ((6, 9), (1,)), ((257,), (0,))])
def test_sums_match_numpy_pairwise_order(shape, axes) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    got, want, source = _both(lambda a: fnp.sum(fnp.sin(a) * 3.0 + a * a, axis=axes), x)
    assert "cpu_fused_reduce" not in source  # sin: NumPy's SIMD loop wins, not fused
    got, want, source = _both(lambda a: fnp.sum(a * 3.0 + a * a, axis=axes), x)
    assert "cpu_fused_reduce" in source
    _equal(got, want)


@pytest.mark.parametrize("reduce", [fnp.max, fnp.min, fnp.sum])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_reductions_with_prologues(reduce, dtype) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((7, 45)) * 100).astype(dtype)
    y = (rng.standard_normal(45) * 100).astype(dtype)
    with fg.experimental.enable_x64():
        got, want, source = _both(lambda a, b: reduce(a * b - a, axis=1), x, y)
    assert "cpu_fused_reduce" in source
    _equal(got, want)


def test_reductions_over_leading_axes_stay_numpy() -> None:
    x = np.random.default_rng(4).standard_normal((30, 8)).astype(np.float32)
    got, want, source = _both(lambda a: fnp.sum(a * a + 1.0, axis=0), x)
    assert "cpu_fused_reduce" not in source
    _equal(got, want)


# ------------------------------------------------------------------ dtypes, NaN, inf


def test_integer_and_boolean_clusters() -> None:
    rng = np.random.default_rng(5)
    with fg.experimental.enable_x64():
        for dtype in (np.int8, np.int32, np.int64, np.uint16):
            x = rng.integers(-50, 50, 64).astype(dtype)
            y = rng.integers(-3, 4, 64).astype(dtype)  # zeros: JAX's x // 0, fused or not
            got, want, source = _both(
                lambda a, b: fnp.maximum(a * 77 + b, b) // b - a % (b * b + 1), x, y)
            assert "cpu_fused" in source
            _equal(got, want)
    p = rng.random(50) > 0.5
    q = rng.random(50) > 0.3
    got, want, source = _both(lambda a, b: fnp.logical_xor(a & ~b, a | b) == (a != b), p, q)
    assert "cpu_fused" in source
    _equal(got, want)


def test_nan_and_inf_propagate_as_in_numpy() -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 3e38], np.float32)
    y = np.array([1.0, np.nan, 2.0, -0.0, np.inf, np.nan, -np.inf, 3e38], np.float32)
    for f in (lambda a, b: fnp.maximum(a, b) * 2.0 - fnp.minimum(a, b),
              lambda a, b: fnp.where(a > b, a / b, b * a) + 1.0,
              lambda a, b: fnp.max(a * b + a), lambda a, b: fnp.sum(a + b * 0.5)):
        got, want, source = _both(f, x, y)
        assert "cpu_fused" in source
        _equal(got, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN outside a function's domain
def test_every_cpu_fusable_primitive_compiles_and_agrees() -> None:
    """Each elementwise primitive whose definition gives ``py_scalar`` compiles with numba
    and gives NumPy's values (to a few ulp: numba calls libm for some)."""
    rng = np.random.default_rng(6)
    checked = []
    for name, prim in sorted(PRIMITIVES.items()):
        arity = getattr(prim, "arity", None)
        if prim.fusion != "elementwise" or prim.py_scalar is None or arity is None:
            continue
        kinds = prim.operand_kinds  # type: ignore[attr-defined]
        dtype = np.float32 if "f" in kinds else np.int32 if "i" in kinds else np.bool_
        x = (rng.standard_normal(40) * 2).astype(dtype) if dtype != np.bool_ else \
            rng.random(40) > 0.5
        y = (rng.standard_normal(40) * 2 + 0.5).astype(dtype) if dtype != np.bool_ else \
            rng.random(40) > 0.5

        params = {"y": 3} if name == "integer_pow" else {}

        def f(a, b, _prim=prim, _arity=arity, _params=params):  # type: ignore[no-untyped-def]
            # Two operations the loop computes itself, so that the cluster is worth a kernel
            # even when the primitive is one NumPy runs as a SIMD ufunc.
            z = lax.max(lax.max(a, b), a)
            return _prim.bind(z, **_params) if _arity == 1 else _prim.bind(z, b)

        got, want, source = _both(f, x, y)
        assert "cpu_fused" in source, name
        np.testing.assert_allclose(got[0], want[0], rtol=4e-6, atol=1e-6, err_msg=name)
        checked.append(name)
    assert {"tanh", "add", "select", "max", "logistic", "erf", "div"} - {"select"} <= \
        set(checked)


# ------------------------------------------------------------------ fallback, switches, cache


def test_a_primitive_without_a_scalar_expression_splits_the_cluster() -> None:
    x = np.linspace(0.5, 3.0, 50, dtype=np.float32)
    f = lambda a: fg.scipy.special.gammaln(a * 2.0 + 1.0) * 3.0 - a  # noqa: E731
    assert PRIMITIVES["lgamma"].py_scalar is None
    got, want, source = _both(f, x)
    assert source == "cpu_fused_elementwise cpu_fused_elementwise"
    _equal(got, want)


def test_small_or_single_operation_clusters_stay_numpy() -> None:
    x = np.ones(10, np.float32)
    assert numba_fusion.fused_kernel_source(fg.make_jaxpr(lambda a: a * 2.0)(x), 0) is None
    cj = fg.make_jaxpr(lambda a: a * 2.0 + 1.0)(x)
    assert numba_fusion.fused_kernel_source(cj, 0) is not None
    assert numba_fusion.fused_kernel_source(cj, 11) is None
    fg.config.update("funcgrad_cpu_fusion_min_size", None)
    assert _kernels(cj) == ""  # the default threshold


def test_switches_turn_fusion_off(monkeypatch: pytest.MonkeyPatch) -> None:
    cj = fg.make_jaxpr(lambda a: a * 2.0 + 1.0)(np.ones(4, np.float32))
    assert _kernels(cj) == "cpu_fused_elementwise"
    monkeypatch.setenv("FUNCGRAD_CPU_FUSION", "0")
    assert not numba_fusion.enabled()
    assert _kernels(cj) == ""
    fg.config.update("funcgrad_cpu_fusion", True)  # the config wins over the environment
    assert _kernels(cj) == "cpu_fused_elementwise"
    monkeypatch.delenv("FUNCGRAD_CPU_FUSION")
    fg.config.update("funcgrad_cpu_fusion", False)
    assert _kernels(cj) == ""


def test_kernels_are_cached_by_source() -> None:
    f = lambda a, b: fnp.tanh(a * b + 3.25) - b  # noqa: E731
    x = np.ones((3, 5), np.float32)
    compile_jaxpr(fg.make_jaxpr(f)(x, x), np)
    before = dict(numba_fusion.STATS)
    compile_jaxpr(fg.make_jaxpr(f)(x + 1, x), np)
    assert numba_fusion.STATS["reused"] == before["reused"] + 1
    assert numba_fusion.STATS["compiled"] == before["compiled"]


def test_non_contiguous_and_rank0_inputs() -> None:
    x = np.random.default_rng(7).standard_normal((6, 8)).astype(np.float32)
    s = np.float32(1.5)
    got, want, _ = _both(lambda a, c: a * c + a * a, x.T, np.asarray(s))
    _equal(got, want)


# ------------------------------------------------------------------ jit(grad)


def _w3(x, m):  # type: ignore[no-untyped-def]
    return m.tanh(x * 1.5 + 0.5) * m.exp(-(x * x)) + m.sin(x) * 0.25 - x / (x * x + 1.0)


def _w3_grad_numpy(x):  # type: ignore[no-untyped-def]
    t = np.tanh(x * 1.5 + 0.5)
    e = np.exp(-(x * x))
    d = x * x + 1.0
    return (1 - t * t) * 1.5 * e - 2 * x * t * e + np.cos(x) * 0.25 - (1 / d - 2 * x * x / d**2)


@settings(max_examples=6, deadline=None, phases=(Phase.explicit, Phase.generate))
@given(st.integers(1, 3000), st.integers(0, 2**16))
def test_jit_grad_of_an_elementwise_chain(n, seed) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    g = fg.jit(fg.grad(lambda a: fnp.sum(_w3(a, fnp))))
    got = np.asarray(g(x))
    fg.config.update("funcgrad_cpu_fusion", False)
    want = np.asarray(fg.jit(fg.grad(lambda a: fnp.sum(_w3(a, fnp))))(x))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, _w3_grad_numpy(x.astype(np.float64)), rtol=1e-4,
                               atol=1e-5)


def test_jit_grad_matches_jax() -> None:
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(8).standard_normal(5000).astype(np.float32)
    got = np.asarray(fg.jit(fg.grad(lambda a: fnp.sum(_w3(a, fnp))))(x))
    want = np.asarray(jax.jit(jax.grad(lambda a: jax.numpy.sum(_w3(a, jax.numpy))))(x))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
