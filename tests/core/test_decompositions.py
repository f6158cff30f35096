"""The decomposition primitives (cholesky, triangular_solve, lu, qr, svd, eigh) beyond the
table's columns: reconstruction identities, derivatives of batched and degenerate inputs,
jit against eager, vmap of gradients, the array-code LU against SciPy, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError, NonDifferentiableError, ShapeError
from funcgrad.lax import linalg as L
from funcgrad.primitives import decompositions as D
from funcgrad.testing import check_grads

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None)


@pytest.fixture(autouse=True)
def _x64() -> Any:
    fg.config.update("jax_enable_x64", True)
    yield
    fg.config.update("jax_enable_x64", False)


def _mats(seed: int, batch: tuple[int, ...], m: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((*batch, m, n))


def _spread(seed: int, batch: tuple[int, ...], m: int, n: int) -> np.ndarray:
    """No zero entries and well-separated singular values/eigenvalues."""
    x = np.random.default_rng(seed).uniform(0.1, 0.5, (*batch, m, n))
    return x + np.eye(m, n) * 4.0 * np.arange(1, n + 1)


DIMS = st.tuples(st.integers(0, 2**16), st.sampled_from([(), (2,), (2, 1)]),
                 st.integers(1, 4), st.integers(1, 4))


@SETTINGS
@given(DIMS)
def test_reconstructions(dims: tuple[int, Any, int, int]) -> None:
    seed, batch, m, n = dims
    x = _mats(seed, batch, m, n)
    q, r = L.qr(x, full_matrices=False)
    np.testing.assert_allclose(np.asarray(q @ r), x, atol=1e-12)
    np.testing.assert_allclose(np.asarray(fnp.swapaxes(q, -1, -2) @ q),
                               np.broadcast_to(np.eye(min(m, n)), q.shape[:-2] + (min(m, n),) * 2),
                               atol=1e-12)
    u, s, vt = L.svd(x, full_matrices=False)
    np.testing.assert_allclose(np.asarray((u * s[..., None, :]) @ vt), x, atol=1e-12)
    lu, piv, perm = L.lu(x)
    k = min(m, n)
    low = np.tril(np.asarray(lu)[..., :, :k], -1) + np.eye(m, k)
    up = np.triu(np.asarray(lu)[..., :k, :])
    np.testing.assert_allclose(low @ up, np.take_along_axis(x, np.asarray(perm)[..., None],
                                                            axis=-2), atol=1e-12)
    np.testing.assert_array_equal(np.asarray(L.lu_pivots_to_permutation(piv, m)),
                                  np.asarray(perm))


@SETTINGS
@given(DIMS)
def test_lu_in_array_code_matches_scipy(dims: tuple[int, Any, int, int]) -> None:
    """The LU for array modules without getrf (CuPy) runs here on NumPy against SciPy."""
    seed, batch, m, n = dims
    x = _mats(seed, batch, m, n)
    lu, piv, perm = D.lu_generic(np, x)
    for idx in np.ndindex(batch):
        p, low, up = scipy.linalg.lu(x[idx])
        k = min(m, n)
        np.testing.assert_allclose(np.tril(lu[idx][:, :k], -1), np.tril(low, -1), atol=1e-12)
        np.testing.assert_allclose(np.triu(lu[idx][:k]), up, atol=1e-12)
        np.testing.assert_array_equal(perm[idx], np.argmax(p, axis=0))


@SETTINGS
@given(DIMS)
def test_grads_batched(dims: tuple[int, Any, int, int]) -> None:
    seed, batch, m, n = dims
    x = _spread(seed, batch, m, n)
    check_grads(lambda a: L.qr(a, full_matrices=False), (x,), order=2)
    check_grads(lambda a: L.svd(a, full_matrices=False), (x,), order=2)
    check_grads(lambda a: L.lu(a)[0], (x,), order=2)
    sq = _spread(seed, batch, n, n)
    check_grads(lambda a: L.eigh(a), (sq,), order=2)
    check_grads(lambda a: L.cholesky(a @ fnp.swapaxes(a, -1, -2)), (sq,), order=2)


@SETTINGS
@given(DIMS, st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_triangular_solve_grads(dims: tuple[int, Any, int, int], left: bool, lower: bool,
                                trans: bool, unit: bool) -> None:
    seed, batch, n, k = dims
    a = _mats(seed, batch, n, n) + 4 * np.eye(n)
    b = _mats(seed + 1, batch, *((n, k) if left else (k, n)))
    check_grads(lambda a_, b_: L.triangular_solve(a_, b_, left_side=left, lower=lower,
                                                  transpose_a=trans, unit_diagonal=unit),
                (a, b), order=2)


def test_symmetrized_grads_match_jax() -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = _spread(3, (2,), 3, 3)
    spd = x @ np.swapaxes(x, -1, -2)
    fns = [
        (lambda a: fnp.sum(L.cholesky(a) ** 2), lambda a: (jax.lax.linalg.cholesky(a) ** 2).sum(),
         spd),
        (lambda a: fnp.sum(L.eigh(a)[1] ** 3) + fnp.sum(L.eigh(a)[0][..., 0] ** 3),
         lambda a: (jax.lax.linalg.eigh(a)[1] ** 3).sum()
         + (jax.lax.linalg.eigh(a)[0][..., 0] ** 3).sum(), x),
        (lambda a: fnp.sum(L.svd(a, full_matrices=False)[1] ** 2),
         lambda a: (jax.lax.linalg.svd(a, full_matrices=False)[1] ** 2).sum(), x),
        (lambda a: fnp.sum(L.qr(a, full_matrices=False)[1] ** 2),
         lambda a: (jax.lax.linalg.qr(a, full_matrices=False)[1] ** 2).sum(), x),
        (lambda a: fnp.sum(L.lu(a)[0] ** 2), lambda a: (jax.lax.linalg.lu(a)[0] ** 2).sum(), x),
    ]
    for f, g, arg in fns:
        np.testing.assert_allclose(np.asarray(fg.grad(f)(arg)), np.asarray(jax.grad(g)(arg)),
                                   rtol=1e-8, atol=1e-10)


def test_jit_matches_eager_and_vmap_of_grad_matches_loop() -> None:
    x = _spread(7, (3,), 3, 3)

    def f(a: Any) -> Any:
        q, r = L.qr(a)
        v, w = L.eigh(a)
        return fnp.sum(r ** 2) + fnp.sum(w) + fnp.sum(L.svd(a, compute_uv=False))

    np.testing.assert_allclose(np.asarray(fg.jit(f)(x)), np.asarray(f(x)), rtol=1e-12)
    g = fg.vmap(fg.grad(f))(x)
    loop = np.stack([np.asarray(fg.grad(f)(x[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(g), loop, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(fg.jit(fg.grad(f))(x[0])), loop[0], rtol=1e-10)


def test_not_positive_definite_gives_nan_as_jax() -> None:
    x = np.array([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]])
    out = np.asarray(L.cholesky(x))
    # JAX's failed factor: NaN on and below the diagonal, 0 above.
    np.testing.assert_array_equal(out[0], [[np.nan, 0.0], [np.nan, np.nan]])
    np.testing.assert_allclose(out[1], np.sqrt(2) * np.eye(2))
    jax = pytest.importorskip("jax")
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        np.testing.assert_array_equal(out, np.asarray(jax.lax.linalg.cholesky(x)))
    finally:
        jax.config.update("jax_enable_x64", was)


def test_repeated_eigenvalues_give_nonfinite_vector_derivatives_as_jax() -> None:
    g = fg.jacfwd(lambda a: L.eigh(a)[0])(np.eye(2))
    assert not np.isfinite(np.asarray(g)).all()
    # The eigenvalues themselves stay differentiable.
    np.testing.assert_allclose(np.asarray(fg.grad(lambda a: fnp.sum(L.eigh(a)[1]))(np.eye(2))),
                               np.eye(2), atol=1e-12)


def test_errors() -> None:
    with pytest.raises(ShapeError, match="cholesky.*square"):
        D.cholesky(np.ones((2, 3)))
    with pytest.raises(DTypeError, match="qr.*floating"):
        D.qr(np.ones((2, 2), np.int32))
    with pytest.raises(NonDifferentiableError, match="full_matrices=False"):
        fg.grad(lambda a: fnp.sum(L.qr(a)[0]))(np.ones((3, 2)))
    with pytest.raises(NonDifferentiableError, match="full_matrices=False"):
        fg.jvp(lambda a: L.svd(a)[0], (np.ones((3, 2)),), (np.ones((3, 2)),))
    with pytest.raises(ValueError, match="pivoting"):
        L.qr(np.eye(2), pivoting=True)
