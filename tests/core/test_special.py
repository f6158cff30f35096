"""Special-function primitives (funcgrad/primitives/special.py): values against SciPy and
jax.lax on drawn inputs (edges included), JAX's derivatives checked by finite differences,
jit against eager, float32, the errors where JAX defines no derivative, and the CUDA
expressions compiled with NVRTC."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
from funcgrad import lax
from funcgrad.errors import NonDifferentiableError
from funcgrad.testing import check_grads

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None)


def arr(lo: float, hi: float) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
                      elements=st.floats(lo, hi, allow_nan=False))


# name -> (lax function, SciPy reference, operand ranges)
UNARY = {
    "lgamma": (lax.lgamma, ss.gammaln, (0.1, 8.0)),
    "digamma": (lax.digamma, ss.digamma, (0.1, 8.0)),
    "erf_inv": (lax.erf_inv, ss.erfinv, (-0.99, 0.99)),
    "bessel_i0e": (lax.bessel_i0e, ss.i0e, (-30.0, 30.0)),
    "bessel_i1e": (lax.bessel_i1e, ss.i1e, (-30.0, 30.0)),
}
BINARY = {
    "igamma": (lax.igamma, ss.gammainc, (0.1, 20.0), (0.0, 30.0)),
    "igammac": (lax.igammac, ss.gammaincc, (0.1, 20.0), (0.0, 30.0)),
    "zeta": (lax.zeta, ss.zeta, (1.1, 6.0), (0.2, 5.0)),
    "nextafter": (lax.nextafter, np.nextafter, (-3.0, 3.0), (-3.0, 3.0)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary_values_match_scipy_and_jax(name: str, data: Any) -> None:
    fn, ref, (lo, hi) = UNARY[name]
    x = data.draw(arr(lo, hi))
    np.testing.assert_allclose(fn(x), ref(x), rtol=1e-12, atol=1e-14)
    x32 = x.astype(np.float32)
    out32 = fn(x32)
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, ref(x32.astype(np.float64)), rtol=2e-6, atol=1e-6)
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        np.testing.assert_allclose(fn(x), getattr(jax.lax, name)(x), rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_values_match_scipy_and_jax(name: str, data: Any) -> None:
    fn, ref, ra, rx = BINARY[name]
    a = data.draw(arr(*ra))
    x = data.draw(hnp.arrays(np.float64, a.shape, elements=st.floats(*rx)))
    np.testing.assert_allclose(fn(a, x), ref(a, x), rtol=1e-12, atol=1e-14)
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        np.testing.assert_allclose(fn(a, x), getattr(jax.lax, name)(a, x), rtol=1e-10,
                                   atol=1e-13)


@SETTINGS
@given(a=arr(0.2, 15.0), data=st.data())
def test_igamma_grad_a_matches_jax(a: np.ndarray, data: Any) -> None:
    x = data.draw(hnp.arrays(np.float64, a.shape, elements=st.floats(0.01, 30.0)))
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        np.testing.assert_allclose(lax.igamma_grad_a(a, x), jax.lax.igamma_grad_a(a, x),
                                   rtol=1e-9, atol=1e-13)


@SETTINGS
@given(m=st.integers(0, 4), x=arr(0.2, 6.0))
def test_polygamma_matches_scipy_and_jax(m: int, x: np.ndarray) -> None:
    mm = np.full(x.shape, float(m))
    np.testing.assert_allclose(lax.polygamma(mm, x), ss.polygamma(m, x), rtol=1e-11)
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        np.testing.assert_allclose(lax.polygamma(mm, x), jax.lax.polygamma(mm, x), rtol=1e-9)


@SETTINGS
@given(a=arr(0.2, 5.0), data=st.data())
def test_betainc_matches_scipy_and_jax(a: np.ndarray, data: Any) -> None:
    b = data.draw(hnp.arrays(np.float64, a.shape, elements=st.floats(0.2, 5.0)))
    x = data.draw(hnp.arrays(np.float64, a.shape, elements=st.floats(0.0, 1.0)))
    np.testing.assert_allclose(lax.betainc(a, b, x), ss.betainc(a, b, x), rtol=1e-12,
                               atol=1e-14)
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        np.testing.assert_allclose(lax.betainc(a, b, x), jax.lax.betainc(a, b, x),
                                   rtol=1e-9, atol=1e-12)


def test_edges_match_jax() -> None:
    jax = pytest.importorskip("jax")
    xs = np.array([0.0, -0.0, 1.0, -1.0, -2.5, np.inf, -np.inf, np.nan, 1e-300, 1e300])
    with jax.enable_x64(True):
        for name in ("lgamma", "bessel_i0e", "bessel_i1e"):
            np.testing.assert_allclose(getattr(lax, name)(xs), getattr(jax.lax, name)(xs),
                                       rtol=1e-12, err_msg=name)
        u = np.array([-1.0, 1.0, 0.0, 2.0, np.nan])
        np.testing.assert_allclose(lax.erf_inv(u), jax.lax.erf_inv(u), rtol=1e-12)
        a = np.array([0.0, 1.0, -1.0, 1.0, np.inf, 2.0])
        x = np.array([0.0, 0.0, 1.0, np.inf, 1.0, -1.0])
        for name in ("igamma", "igammac"):
            np.testing.assert_allclose(getattr(lax, name)(a, x), getattr(jax.lax, name)(a, x),
                                       err_msg=name)


# ---------------------------------------------------------------- derivatives

GRAD = settings(max_examples=4, deadline=None, derandomize=True, database=None)


@pytest.mark.parametrize("name,lo,hi", [("lgamma", 0.3, 6.0), ("digamma", 0.3, 6.0),
                                        ("erf_inv", -0.9, 0.9), ("bessel_i0e", 0.2, 5.0),
                                        ("bessel_i1e", 0.2, 5.0), ("erfcx", -2.0, 3.0),
                                        ("dawsn", -3.0, 3.0), ("exp1", 0.3, 4.0),
                                        ("expi", 0.3, 4.0), ("spence", 0.2, 0.9)])
@GRAD
@given(data=st.data())
def test_unary_derivatives_order_2(name: str, lo: float, hi: float, data: Any) -> None:
    x = data.draw(arr(lo, hi))
    check_grads(getattr(lax, name), (x,), order=2, modes=("fwd", "rev"))


@GRAD
@given(a=arr(0.5, 4.0), data=st.data())
def test_igamma_derivatives(a: np.ndarray, data: Any) -> None:
    x = data.draw(hnp.arrays(np.float64, a.shape, elements=st.floats(0.3, 6.0)))
    for fn in (lax.igamma, lax.igammac):
        check_grads(lambda x_, fn=fn: fn(a, x_), (x,), order=2, modes=("fwd", "rev"))
        check_grads(lambda a_, fn=fn: fn(a_, x), (a,), order=1, modes=("fwd", "rev"), atol=1e-4,
                    rtol=1e-4)


@GRAD
@given(x=arr(0.3, 4.0), data=st.data())
def test_polygamma_zeta_betainc_derivatives_in_x(x: np.ndarray, data: Any) -> None:
    m = np.full(x.shape, float(data.draw(st.integers(0, 2))))
    check_grads(lambda v: lax.polygamma(m, v), (x,), order=2, modes=("fwd", "rev"))
    s = np.full(x.shape, 2.5)
    check_grads(lambda q: lax.zeta(s, q), (x,), order=2, modes=("fwd", "rev"))
    u = x / 4.5
    check_grads(lambda v: lax.betainc(s, s, v), (u,), order=2, modes=("fwd", "rev"))


def test_derivatives_match_jax() -> None:
    jax = pytest.importorskip("jax")
    x = np.array([0.4, 1.3, 3.7])
    a = np.array([0.7, 2.0, 5.0])
    with jax.enable_x64(True):
        for name in ("lgamma", "digamma", "bessel_i0e", "bessel_i1e"):
            got = fg.grad(lambda v, n=name: getattr(lax, n)(v).sum())(x)
            want = jax.grad(lambda v, n=name: getattr(jax.lax, n)(v).sum())(x)
            np.testing.assert_allclose(got, want, rtol=1e-10, err_msg=name)
        for name in ("igamma", "igammac"):
            got = fg.grad(lambda p, q, n=name: getattr(lax, n)(p, q).sum(), (0, 1))(a, x)
            want = jax.grad(lambda p, q, n=name: getattr(jax.lax, n)(p, q).sum(), (0, 1))(a, x)
            np.testing.assert_allclose(got, want, rtol=1e-9, err_msg=name)


def test_no_derivative_where_jax_has_none() -> None:
    x = np.array([0.5, 1.5])
    with pytest.raises(NonDifferentiableError, match="polygamma"):
        fg.grad(lambda m: lax.polygamma(m, x).sum())(np.array([1.0, 2.0]))
    with pytest.raises(NonDifferentiableError, match="betainc"):
        fg.grad(lambda a: lax.betainc(a, x, x / 2).sum())(x)
    with pytest.raises(NonDifferentiableError, match="zeta"):
        fg.jvp(lambda s: lax.zeta(s, x), (x + 2,), (x,))
    with pytest.raises(NonDifferentiableError, match="igamma_grad_a"):
        fg.grad(lambda a: lax.igamma_grad_a(a, x).sum())(x)
    with pytest.raises(NonDifferentiableError, match="nextafter"):
        fg.grad(lambda v: lax.nextafter(v, x).sum())(x)
    # the other operand alone stays differentiable
    m = np.array([1.0, 2.0])
    assert np.all(np.isfinite(fg.grad(lambda v: lax.polygamma(m, v).sum())(x)))


def test_integer_operands_are_refused() -> None:
    from funcgrad.errors import DTypeError  # noqa: PLC0415

    with pytest.raises(DTypeError, match="lgamma"):
        lax.lgamma(np.arange(3))


def test_jit_equals_eager_and_vmap() -> None:
    a = np.array([[0.5, 2.0], [3.0, 7.0]])
    x = np.array([[0.3, 1.0], [4.0, 9.0]])

    def f(a: Any, x: Any) -> Any:
        return (lax.igamma(a, x) + lax.lgamma(a) * lax.digamma(x) + lax.bessel_i1e(x)
                + lax.igamma_grad_a(a, x))

    np.testing.assert_allclose(fg.jit(f)(a, x), f(a, x), rtol=1e-14)
    np.testing.assert_allclose(fg.vmap(f)(a, x), np.stack([f(a[i], x[i]) for i in range(2)]),
                               rtol=1e-14)


HAVE_NVRTC = importlib.util.find_spec("cupy_backends") is not None


@pytest.mark.skipif(not HAVE_NVRTC, reason="cupy_backends (NVRTC) not installed")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cuda_expressions_compile_with_nvrtc(dtype: Any) -> None:
    from funcgrad.backends.cuda_codegen import nvrtc_compile  # noqa: PLC0415

    x = np.linspace(0.1, 0.9, 6).astype(dtype)

    def f(v: Any) -> Any:
        return lax.lgamma(v) + lax.erf_inv(v) + lax.nextafter(v, v * 2) + lax.erf(v)

    kernels = fg.jit(f, backend="cupy").lower(x).kernels()
    assert len(kernels) == 1
    src = kernels[0]["source"]
    assert ("lgammaf" if dtype == np.float32 else "lgamma(") in src
    ptx = nvrtc_compile(src)
    assert b".entry" in ptx or b".visible" in ptx
