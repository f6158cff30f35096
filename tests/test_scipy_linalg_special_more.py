"""funcgrad.scipy.linalg's schur, sqrtm, funm, hessenberg, qr_multiply, rsf2csf and dft and
funcgrad.scipy.special's hyp1f1, hyp2f1, wofz, bessel_jn and sph_harm_y: values, dtypes,
errors and derivatives against jax 0.10.2 (where installed), and oracle-free properties
(reconstructions, finite differences)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as FL
from funcgrad.scipy import special as FS
from funcgrad.testing import check_grads

SET = settings(max_examples=10, deadline=None)


@contextlib.contextmanager
def jax_x64(on: bool = True) -> Iterator[Any]:
    jax = pytest.importorskip("jax")
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", old)


def matrices(n_lo: int = 1, n_hi: int = 4, batch: bool = False) -> st.SearchStrategy[Any]:
    @st.composite
    def draw(d: Any) -> np.ndarray:
        n = d(st.integers(n_lo, n_hi))
        shape = (2, n, n) if batch else (n, n)
        return d(hnp.arrays(np.float64, shape,
                            elements=st.floats(-2, 2, allow_subnormal=False)))

    return draw()


def close(got: Any, want: Any, tol: float = 1e-10) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ------------------------------------------------------------------ oracle-free


@SET
@given(matrices(batch=True), st.sampled_from(["real", "complex"]))
def test_schur_reconstructs(a: np.ndarray, output: str) -> None:
    t, z = FL.schur(a, output=output)
    t, z = np.asarray(t), np.asarray(z)
    np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=1e-9)
    if output == "complex":
        assert t.dtype == np.complex128
        np.testing.assert_array_equal(np.tril(t[0], -1), 0)


@SET
@given(matrices(1, 4))
def test_sqrtm_squares_back(a: np.ndarray) -> None:
    spd = a @ a.T + np.eye(len(a))
    r = np.asarray(FL.sqrtm(spd))
    np.testing.assert_allclose(r @ r, spd, atol=1e-8)


@SET
@given(matrices(2, 5, batch=True))
def test_hessenberg_form(a: np.ndarray) -> None:
    h, q = FL.hessenberg(a, calc_q=True)
    h, q = np.asarray(h), np.asarray(q)
    np.testing.assert_array_equal(np.tril(h, -2), 0)
    np.testing.assert_allclose(q @ h @ np.swapaxes(q, -1, -2), a, atol=1e-9)


def test_rsf2csf_funm_dft_and_transforms() -> None:
    a = np.array([[1.0, 2.0, 0.5], [-3.0, 1.0, 0.1], [0.2, 0.3, 2.0]])
    t, z = FL.rsf2csf(*FL.schur(a))
    t, z = np.asarray(t), np.asarray(z)
    np.testing.assert_array_equal(np.tril(t, -1), 0)
    np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-12)
    np.testing.assert_allclose(np.asarray(FL.funm(a, fnp.exp)), FL.expm(a), atol=1e-10)
    w = np.asarray(FL.dft(6))
    np.testing.assert_allclose(w @ np.arange(6.0), np.fft.fft(np.arange(6.0)), atol=1e-12)
    # jit and vmap of the LAPACK primitives
    batch = np.stack([a, 2 * a])
    close(fg.jit(lambda x: FL.schur(x)[0])(batch), FL.schur(batch)[0], 0)
    close(fg.vmap(lambda x: FL.hessenberg(x))(batch), FL.hessenberg(batch), 0)


@SET
@given(matrices(1, 3), st.integers(1, 3))
def test_qr_multiply_is_q_times_c(a: np.ndarray, p: int) -> None:
    b = np.vstack([a, np.ones((1, a.shape[1]))])            # tall: m > n
    m, n = b.shape
    q, r = np.asarray(FL.qr(b, mode="economic")[0]), FL.qr(b, mode="economic")[1]
    c = np.arange(p * m, dtype=float).reshape(p, m)
    cq, r2 = FL.qr_multiply(b, c)
    close(cq, c @ q, 1e-12)
    close(r2, r, 0)
    cl = np.arange(n * p, dtype=float).reshape(n, p)
    close(FL.qr_multiply(b, cl, mode="left")[0], q @ cl, 1e-12)


def test_special_functions_against_known_values() -> None:
    # 1F1(1; 2; x) = (e^x - 1) / x, 2F1(1, 1; 2; x) = -log(1 - x) / x, tabulated J_0.
    x = np.array([-2.0, 0.5, 3.0])
    close(FS.hyp1f1(1.0, 2.0, x), np.expm1(x) / x, 1e-13)
    close(FS.hyp2f1(1.0, 1.0, 2.0, x / 4), -np.log1p(-x / 4) / (x / 4), 1e-13)
    close(FS.bessel_jn(np.array([2.0, 1.0]), v=0)[0], np.array([0.22389077914123567,
                                                              0.7651976865579666]),
          1e-12)
    # w(iy) = erfcx(y) for real y
    import scipy.special as sp

    close(FS.wofz(1j * np.array([0.5, 2.0])), sp.erfcx(np.array([0.5, 2.0])) + 0j, 1e-13)
    y00 = FS.sph_harm_y(np.array([0, 1]), np.array([0, 0]), np.array([0.4, 0.0]),
                        np.array([1.0, 0.0]))
    close(y00, np.array([0.5 / np.sqrt(np.pi), np.sqrt(3 / (4 * np.pi))]) + 0j, 1e-13)


@settings(max_examples=6, deadline=None)
@given(st.floats(0.3, 3), st.floats(0.3, 3), st.floats(-3, 3))
def test_hyp1f1_grads_finite_differences(a: float, b: float, x: float) -> None:
    check_grads(lambda *v: FS.hyp1f1(*v), (a, b, x), order=1, modes=("fwd", "rev"))


@settings(max_examples=6, deadline=None)
@given(st.floats(0.3, 3), st.floats(0.3, 3), st.floats(0.5, 4), st.floats(-0.8, 0.8))
def test_hyp2f1_grads_finite_differences(a: float, b: float, c: float, x: float) -> None:
    check_grads(lambda *v: FS.hyp2f1(*v), (a, b, c, x), order=1, modes=("fwd", "rev"),
                atol=1e-5, rtol=1e-5)


@SET
@given(st.floats(0.2, 8), st.floats(0.1, 3))
def test_other_grads_finite_differences(z: float, theta: float) -> None:
    check_grads(lambda v: FS.bessel_jn(v, v=2), (z,), order=2)
    check_grads(lambda v: FS.wofz(v), (complex(z - 4, theta - 1.5),), order=1,
                modes=("fwd",))
    check_grads(lambda t, p: FS.sph_harm_y(np.array([2, 3]), np.array([1, -2]), t, p),
                (np.array([theta, theta / 2]), np.array([z, 0.5])), order=1)


def test_errors() -> None:
    with pytest.raises(ValueError, match="square matrix"):
        FL.schur(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape \[\.\.\., n, n\]"):
        FL.hessenberg(np.ones((2, 3)))
    with pytest.raises(ValueError, match="'real' or 'complex'"):
        FL.schur(np.eye(2), output="other")
    with pytest.raises(ValueError, match="expected square"):
        FL.funm(np.ones((2, 3)), fnp.exp)
    with pytest.raises(ValueError, match="scale must be"):
        FL.dft(3, scale="x")
    with pytest.raises(ValueError, match="complex floating"):
        FL.dft(3, dtype=np.float32)
    with pytest.raises(ValueError, match="must be square"):
        FL.rsf2csf(np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match="not compatible"):
        FL.qr_multiply(np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(TypeError):
        FS.bessel_jn(1.0, v=1.5)
    for f in (lambda a: FL.schur(a)[0], FL.sqrtm, FL.hessenberg):
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            fg.grad(lambda a, f=f: fnp.sum(fnp.real(f(a))))(np.eye(2))


# -------------------------------------------------------------------- against JAX


@settings(max_examples=6, deadline=None)
@given(st.sampled_from([1, 3]).flatmap(lambda n: matrices(n, n, batch=True)))
def test_linalg_matches_jax(a: np.ndarray) -> None:
    with jax_x64():
        import jax.scipy.linalg as JL

        for out in ("real", "complex"):
            for g, w in zip(FL.schur(a, output=out), JL.schur(a, output=out)):
                close(g, w, 1e-12)
        for g, w in zip(FL.hessenberg(a, calc_q=True), JL.hessenberg(a, calc_q=True)):
            close(g, w, 1e-12)
        for g, w in zip(FL.rsf2csf(*FL.schur(a)), JL.rsf2csf(*JL.schur(a))):
            close(g, w, 1e-9)
        spd = a[0] @ a[0].T + np.eye(a.shape[-1])
        close(FL.sqrtm(spd), JL.sqrtm(spd), 1e-9)
        close(FL.funm(spd, fnp.log), JL.funm(spd, __import__("jax").numpy.log), 1e-8)
        c = np.arange(2.0 * a.shape[-1]).reshape(2, -1)
        for mode, cc in (("right", c), ("left", c.T), ("right", c[0])):
            for g, w in zip(FL.qr_multiply(a, cc, mode=mode), JL.qr_multiply(a, cc, mode=mode)):
                close(g, w, 1e-10)
        for scale in (None, "sqrtn", "n"):
            close(FL.dft(a.shape[-1] + 2, scale), JL.dft(a.shape[-1] + 2, scale), 1e-13)


def test_linalg_errors_match_jax() -> None:
    with jax_x64() as jax:
        import jax.scipy.linalg as JL

        cases = [(lambda L: L.schur(np.ones((2, 3)))), (lambda L: L.schur(np.ones(3))),
                 (lambda L: L.schur(np.eye(2, dtype=np.int32))),
                 (lambda L: L.hessenberg(np.ones((2, 3)))),
                 (lambda L: L.rsf2csf(np.eye(2), np.eye(3))),
                 (lambda L: L.qr_multiply(np.ones((3, 2)), np.ones(2), mode="x")),
                 (lambda L: L.funm(np.ones(3), np.exp))]
        for case in cases:
            with pytest.raises(Exception) as want:
                case(JL)
            with pytest.raises(type(want.value), match=str(want.value)[:30].replace(
                    "(", r"\(").replace(")", r"\)").replace("[", r"\[").replace(".", r"\.")):
                case(FL)
        with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
            jax.grad(lambda a: JL.schur(a)[0].sum())(np.eye(2))


@pytest.mark.x32
def test_dtypes_in_32_bit_mode_match_jax() -> None:
    jax = pytest.importorskip("jax")
    import jax.scipy.linalg as JL
    import jax.scipy.special as JS

    a = np.array([[1.0, 2.0], [-3.0, 0.5]])
    pairs = [(FL.schur(a), JL.schur(a)), (FL.sqrtm(a), JL.sqrtm(a)),
             (FL.sqrtm(a.astype(int)), JL.sqrtm(a.astype(int))),
             (FL.hessenberg(a, calc_q=True), JL.hessenberg(a, calc_q=True)),
             (FL.rsf2csf(*FL.schur(a)), JL.rsf2csf(*JL.schur(a))),
             (FL.funm(a, fnp.sin), JL.funm(a, jax.numpy.sin)), (FL.dft(4), JL.dft(4)),
             (FL.qr_multiply(a, a[0]), JL.qr_multiply(a, a[0])),
             (FS.wofz(0.5), JS.wofz(0.5)), (FS.wofz(2), JS.wofz(2)),
             (FS.hyp1f1(1, 2, 0.5), JS.hyp1f1(1, 2, 0.5)),
             (FS.hyp2f1(1, 1, 2, 0.5), JS.hyp2f1(1, 1, 2, 0.5)),
             (FS.bessel_jn(np.array([1, 2]), v=2, n_iter=20),
              JS.bessel_jn(np.array([1, 2]), v=2, n_iter=20)),
             (FS.sph_harm_y(np.array([2]), np.array([1]), 0.3, np.array([0.2])),
              JS.sph_harm_y(np.array([2]), np.array([1]), 0.3, np.array([0.2])))]
    for got, want in pairs:
        got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
        assert len(got_l) == len(want_l)
        for g, w in zip(got_l, want_l):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype)
            assert np.isfinite(w).all()
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


# Fixed shapes: JAX compiles each function once.
@settings(max_examples=5, deadline=None)
@given(hnp.arrays(np.float64, 6, elements=st.floats(0.1, 4)),
       st.floats(-0.95, 0.95), st.floats(-12, 12))
def test_special_values_and_grads_match_jax(a: np.ndarray, x: float, xb: float) -> None:
    with jax_x64() as jax:
        import jax.scipy.special as JS

        b, c = a[::-1] + 0.5, a + 1.0
        close(FS.hyp1f1(a, b, xb), JS.hyp1f1(a, b, xb), 1e-9)
        close(FS.hyp2f1(a, b, c, x), JS.hyp2f1(a, b, c, x), 1e-9)
        z = a - 2 + 1j * (a[::-1] - 2)
        close(FS.wofz(z), JS.wofz(z), 1e-13)
        close(FS.bessel_jn(a * 3, v=3), JS.bessel_jn(a * 3, v=3), 1e-10)
        n = np.arange(len(a)) % 4
        m = (np.arange(len(a)) % 3) - 1
        m = np.where(np.abs(m) > n, 0, m)
        close(FS.sph_harm_y(n, m, a / 1.4, a), JS.sph_harm_y(n, m, a / 1.4, a), 1e-12)
        for argnums in ((0, 1, 2),):
            got = fg.grad(lambda *v: fnp.sum(FS.hyp1f1(*v)), argnums)(a, b, xb / 3)
            want = jax.grad(lambda *v: JS.hyp1f1(*v).sum(), argnums)(a, b, xb / 3)
            for g, w in zip(got, want):
                close(g, w, 1e-8)
        got = fg.grad(lambda *v: fnp.sum(FS.hyp2f1(*v)), (0, 2, 3))(a, b, c, np.full_like(a, x))
        want = jax.grad(lambda *v: JS.hyp2f1(*v).sum(), (0, 2, 3))(a, b, c, np.full_like(a, x))
        for g, w in zip(got, want):
            close(g, w, 1e-8)
        close(fg.grad(lambda v: fnp.sum(FS.bessel_jn(v, v=2)))(a),
              jax.grad(lambda v: JS.bessel_jn(v, v=2).sum())(a), 1e-9)
        close(fg.grad(lambda v: fnp.sum(fnp.abs(FS.wofz(v))))(a),
              jax.grad(lambda v: jax.numpy.abs(JS.wofz(v)).sum())(a), 1e-10)
        close(fg.jit(fg.vmap(lambda v: FS.hyp1f1(v, 1.5, 2.0)))(a), JS.hyp1f1(a, 1.5, 2.0),
              1e-10)


@settings(max_examples=6, deadline=None, database=None)
@given(n=st.integers(1, 5), seed=st.integers(0, 2 ** 16))
def test_lax_linalg_schur_and_hessenberg_match_jax(n: int, seed: int) -> None:
    jax = pytest.importorskip("jax")
    from jax_oracle import jax_x64, same  # noqa: PLC0415

    from funcgrad import lax as flax  # noqa: PLC0415

    a = np.random.default_rng(seed).standard_normal((2, n, n))
    for got, want in [
            (flax.linalg.schur(a), jax_x64(jax.lax.linalg.schur, a)),
            (flax.linalg.schur(a, compute_schur_vectors=False),
             jax_x64(lambda x: jax.lax.linalg.schur(x, compute_schur_vectors=False), a)),
            (flax.linalg.hessenberg(a), jax_x64(jax.lax.linalg.hessenberg, a))]:
        got_t = got if isinstance(got, tuple) else (got,)
        want_t = tuple(want) if isinstance(want, (tuple, list)) else (want,)
        assert len(got_t) == len(want_t)
        for g, w in zip(got_t, want_t):
            same(np.asarray(g), w)
