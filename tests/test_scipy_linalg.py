"""funcgrad.scipy.linalg against SciPy (values) and jax.scipy.linalg (values, gradients)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg as S

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.scipy import linalg as FL
from funcgrad.testing import check_grads

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 3))
B = RNG.standard_normal((3, 2))
SPD = A @ A.T + np.eye(3)
TRI = np.tril(A) + 3 * np.eye(3)

CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...], bool]] = {
    # name: (call with a linalg module, operands, differentiable)
    "solve_triangular": (lambda L, a, b: L.solve_triangular(a, b, lower=True, trans=1),
                         (TRI, B), True),
    "cho_solve": (lambda L, a, b: L.cho_solve(L.cho_factor(a), b), (SPD, B), True),
    "cholesky": (lambda L, a: L.cholesky(a), (SPD,), True),
    "lu[l]": (lambda L, a: L.lu(a)[1], (A,), True),
    "lu[u]": (lambda L, a: L.lu(a)[2], (A,), True),
    "lu[p]": (lambda L, a: L.lu(a)[0], (A,), False),
    "lu_factor": (lambda L, a: L.lu_factor(a)[0], (A,), True),
    "lu_solve": (lambda L, a, b: L.lu_solve(L.lu_factor(a), b), (A, B), True),
    "lu_solve[trans]": (lambda L, a, b: L.lu_solve(L.lu_factor(a), b, trans=1), (A, B), True),
    "qr": (lambda L, a: L.qr(a, mode="economic")[1], (B,), True),
    "svd": (lambda L, a: L.svd(a, compute_uv=False), (A,), True),
    "eigh": (lambda L, a: L.eigh(a, eigvals_only=True), (SPD,), True),
    "inv": (lambda L, a: L.inv(a), (A,), True),
    "det": (lambda L, a: L.det(a), (A,), True),
    "solve": (lambda L, a, b: L.solve(a, b), (A, B), True),
    "solve[pos]": (lambda L, a, b: L.solve(a, b, assume_a="pos"), (SPD, B), True),
    "expm": (lambda L, a: L.expm(a), (A,), True),
    "expm[large]": (lambda L, a: L.expm(5 * a), (A,), True),
    "expm_frechet": (lambda L, a, b: L.expm_frechet(a, b @ b.T)[1], (A, B), True),
    "polar": (lambda L, a: L.polar(a)[1], (A,), True),
    "solve_sylvester": (lambda L, a, b: L.solve_sylvester(a, SPD, b @ b.T), (A, B), False),
    "block_diag": (lambda L, a, b: L.block_diag(a, b, 2.0), (A, B), True),
    "toeplitz": (lambda L, a: L.toeplitz(a[0], a[1]), (A,), True),
    "hankel": (lambda L, a: L.hankel(a[0], a[1]), (A,), True),
    "circulant": (lambda L, a: L.circulant(a[0]), (A,), True),
    "companion": (lambda L, a: L.companion(a[0]), (A,), True),
    "fiedler": (lambda L, a: L.fiedler(a[0]), (A,), True),
    "fiedler_companion": (lambda L, a: L.fiedler_companion(a.ravel()[:6]),
                          (A,), True),
    "convolution_matrix": (lambda L, a: L.convolution_matrix(a[0], 4, "same"), (A,), True),
    "convolution_matrix[valid]": (lambda L, a: L.convolution_matrix(a[0], 2, "valid"), (A,),
                                  True),
    "leslie": (lambda L, a: L.leslie(a[0], a[1, :2]), (A,), True),
    "eigh_tridiagonal": (lambda L, a: L.eigh_tridiagonal(a[0], a[1, :2], eigvals_only=True),
                         (A,), False),
}
NO_JAX = {"polar", "solve[pos]"}  # JAX's qdwh polar and sym-solve differ in form, not value
CONSTANT = {"hilbert": lambda L: L.hilbert(4), "invhilbert": lambda L: L.invhilbert(4),
            "pascal": lambda L: L.pascal(4, "lower"), "invpascal": lambda L: L.invpascal(4),
            "helmert": lambda L: L.helmert(4, full=True), "hadamard": lambda L: L.hadamard(4)}


@pytest.fixture(autouse=True)
def _x64() -> Any:
    fg.config.update("jax_enable_x64", True)
    yield
    fg.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_scipy(name: str) -> None:
    fn, ops, _ = CASES[name]
    if name == "expm_frechet":
        want = S.expm_frechet(A, B @ B.T)[1]
    elif name == "eigh_tridiagonal":
        want = S.eigh_tridiagonal(A[0], A[1, :2], eigvals_only=True)
    else:
        want = fn(S, *ops)
    np.testing.assert_allclose(np.asarray(fn(FL, *ops)), want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", sorted(CONSTANT))
def test_constant_matrices(name: str) -> None:
    np.testing.assert_allclose(np.asarray(CONSTANT[name](FL)), CONSTANT[name](S), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in NO_JAX))
def test_values_and_grads_match_jax(name: str) -> None:
    jax = pytest.importorskip("jax")
    jsl = pytest.importorskip("jax.scipy.linalg")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    fn, ops, diff = CASES[name]
    np.testing.assert_allclose(np.asarray(fn(FL, *ops)), np.asarray(fn(jsl, *ops)),
                               rtol=1e-9, atol=1e-10)
    if not diff:
        return
    argnums = tuple(range(len(ops)))
    got = fg.grad(lambda *xs: fnp.sum(fn(FL, *xs) ** 2), argnums)(*ops)
    want = jax.grad(lambda *xs: jnp.sum(fn(jsl, *xs) ** 2), argnums)(*ops)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        if name in SYMMETRIC_INPUT and g.shape == SPD.shape:
            # JAX's scipy cholesky does not symmetrize its input, so its gradient splits
            # between the triangles differently: the symmetric parts agree.
            g, w = (g + g.T) / 2, (w + w.T) / 2
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-8)


SYMMETRIC_INPUT = {"cholesky", "cho_solve"}


def test_expm_second_order_grads_and_jit() -> None:
    check_grads(FL.expm, (A,), order=2)
    check_grads(lambda a: FL.expm(4 * a), (A,), order=1)
    np.testing.assert_allclose(np.asarray(fg.jit(FL.expm)(5 * A)), S.expm(5 * A), rtol=1e-10)
    batch = np.stack([A, 3 * A])
    np.testing.assert_allclose(np.asarray(fg.vmap(FL.expm)(batch)),
                               np.stack([S.expm(A), S.expm(3 * A)]), rtol=1e-10)


def test_generalized_eigh_and_polar_left() -> None:
    w, v = FL.eigh(SPD, A @ A.T + 2 * np.eye(3))
    np.testing.assert_allclose(np.asarray(w), S.eigh(SPD, A @ A.T + 2 * np.eye(3))[0],
                               rtol=1e-10)
    u, p = FL.polar(A, side="left")
    wu, wp = S.polar(A, side="left")
    np.testing.assert_allclose(np.asarray(p), wp, atol=1e-10)
    np.testing.assert_allclose(np.asarray(u), wu, atol=1e-10)


def test_errors() -> None:
    with pytest.raises(ValueError, match="power of 2"):
        FL.hadamard(3)
    with pytest.raises(ValueError, match="trans"):
        FL.solve_triangular(TRI, B, trans=5)
