"""The compiled loops for batches of small matrices (funcgrad.primitives.small_batches, numba)
against the per-matrix LAPACK/BLAS path they replace and against NumPy/SciPy/JAX, on
hypothesis-drawn batches in float32 and float64, with the edge cases whose conventions are
JAX's: a singular matrix's LU (a zero pivot is kept) and a Cholesky factor that fails (NaN)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl
from funcgrad.primitives import decompositions as D
from funcgrad.primitives import small_batches as SB
from funcgrad.testing import check_grads

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None)
NO_LOOPS = {k: -1 for k in SB.MAX_N}

# seed, batch size (at least MIN_BATCH: the loops' range), order, dtype
BATCHES = st.tuples(st.integers(0, 2**16), st.integers(SB.MIN_BATCH, 9), st.integers(1, 12),
                    st.sampled_from([np.float32, np.float64]))


def _need_loops() -> None:
    pytest.importorskip("numba")
    if not SB.use_loops("lu", SB.MIN_BATCH, 2):
        pytest.skip("CPU fusion switched off (FUNCGRAD_CPU_FUSION=0)")


@pytest.fixture
def lapack(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The LAPACK/BLAS path, as without numba."""
    monkeypatch.setattr(SB, "MAX_N", NO_LOOPS)
    yield


def _tol(dtype: Any) -> dict[str, float]:
    return {"rtol": 2e-4, "atol": 2e-4} if dtype == np.float32 else {"rtol": 1e-11,
                                                                      "atol": 1e-11}


def _both(fn: Any, *args: Any, **kw: Any) -> tuple[Any, Any]:
    """fn through the loops, then through LAPACK."""
    fast = fn(*args, **kw)
    keep = SB.MAX_N
    SB.MAX_N = NO_LOOPS
    try:
        slow = fn(*args, **kw)
    finally:
        SB.MAX_N = keep
    return fast, slow


@SETTINGS
@given(BATCHES, st.booleans())
def test_lu_loops_match_lapack_and_scipy(case: Any, singular: bool) -> None:
    _need_loops()
    seed, nb, n, dt = case
    rng = np.random.default_rng(seed)
    m, k = (n + seed % 3, n) if seed % 2 else (n, n + seed % 3)  # tall, square, wide
    x = rng.standard_normal((nb, m, k)).astype(dt)
    if singular:
        x[0, :, 0] = 0  # a zero pivot: kept, no scaling under it (LAPACK's, JAX's)
        # (not a rank-deficient matrix with rounding-level pivots: their L is arbitrary,
        # and LAPACK's blocked code and the loop round differently there)
    fast, slow = _both(D._lu_impl, np, x)
    assert fast[0].dtype == x.dtype and fast[1].dtype == fast[2].dtype == np.int32
    np.testing.assert_array_equal(fast[1], slow[1])
    np.testing.assert_array_equal(fast[2], slow[2])
    np.testing.assert_allclose(fast[0], slow[0], **_tol(dt))
    for i in range(nb):
        p, low, up = scipy.linalg.lu(x[i].astype(np.float64))
        r = min(m, k)
        np.testing.assert_allclose(x[i][fast[2][i]],
                                   (np.tril(fast[0][i][:, :r], -1) + np.eye(m, r)) @
                                   np.triu(fast[0][i][:r]), **_tol(dt))
        np.testing.assert_allclose(np.abs(np.diag(np.triu(fast[0][i]))),
                                   np.abs(np.diag(up)), **_tol(dt))


@SETTINGS
@given(BATCHES, st.booleans(), st.booleans(), st.booleans(), st.integers(1, 5))
def test_triangular_solve_loops_match_blas_and_scipy(case: Any, lower: bool,
                                                     trans: bool, unit: bool, r: int) -> None:
    _need_loops()
    seed, nb, n, dt = case
    rng = np.random.default_rng(seed)
    # Off-diagonal entries of size 1/n keep unit-diagonal solves well conditioned.
    a = (rng.standard_normal((nb, n, n)) / n + 2 * np.eye(n)).astype(dt)
    b = rng.standard_normal((nb, n, r)).astype(dt)
    fast, slow = _both(D._trsm_host, a, b, lower, trans, unit)
    assert fast.dtype == dt
    np.testing.assert_allclose(fast, slow, **_tol(dt))
    for i in range(nb):
        ref = scipy.linalg.solve_triangular(a[i].astype(np.float64), b[i], lower=lower,
                                            trans=int(trans), unit_diagonal=unit)
        np.testing.assert_allclose(fast[i], ref, **_tol(dt))


def test_triangular_solve_loops_with_a_zero_pivot_give_inf_or_nan_as_blas() -> None:
    _need_loops()
    a = np.tile(np.tril(np.ones((3, 3))), (SB.MIN_BATCH, 1, 1))
    a[1, 1, 1] = 0
    b = np.ones((SB.MIN_BATCH, 3, 2))
    fast, slow = _both(D._trsm_host, a, b, True, False, False)
    np.testing.assert_array_equal(fast, slow)
    assert not np.isfinite(fast[1]).all() and np.isfinite(fast[0]).all()


@SETTINGS
@given(BATCHES, st.lists(st.booleans(), min_size=9, max_size=9))
def test_cholesky_loops_match_lapack_numpy_and_jax_nan(case: Any,
                                                       fails: list[bool]) -> None:
    jax = pytest.importorskip("jax")  # the oracle of the failure convention
    _need_loops()
    seed, nb, n, dt = case
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((nb, n, n))
    x = g @ np.swapaxes(g, -1, -2) + n * np.eye(n)
    for i in range(nb):
        if fails[i]:
            x[i, n - 1, n - 1] = -1.0  # not positive definite at the last pivot
    x = x.astype(dt)
    x_upper_garbage = x + np.triu(np.full((n, n), 7.0, dt), 1)  # the upper triangle unread
    fast, slow = _both(D._cholesky_impl, np, x_upper_garbage)
    assert fast.dtype == dt
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(slow))
    np.testing.assert_allclose(fast, slow, **_tol(dt))
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        ref = np.asarray(jax.lax.linalg.cholesky(x, symmetrize_input=False))
    finally:
        jax.config.update("jax_enable_x64", was)
    # JAX's failed factor: NaN on and below the diagonal, 0 above it (both paths)
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    np.testing.assert_allclose(fast, ref, **_tol(dt))
    ok = ~np.array(fails[:nb])
    np.testing.assert_allclose(fast[ok], np.linalg.cholesky(x[ok]), **_tol(dt))


def _slogdet_loss(a: Any) -> Any:
    return fnp.sum(fnp.linalg.slogdet(a)[1])


def _cho_loss(a: Any) -> Any:
    spd = a @ fnp.swapaxes(a, -1, -2) + 3.0 * fnp.eye(a.shape[-1])
    c = fsl.cho_factor(spd, lower=True)
    return fnp.sum(fsl.cho_solve(c, fnp.ones((*a.shape[:-1], 2))) ** 2)


@settings(max_examples=4, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**16), st.integers(SB.MIN_BATCH, 6), st.integers(2, 6))
def test_gradients_through_the_loops(seed: int, nb: int, n: int) -> None:
    _need_loops()
    fg.config.update("jax_enable_x64", True)
    try:
        _check_gradients(seed, nb, n)
    finally:
        fg.config.update("jax_enable_x64", False)


def _check_gradients(seed: int, nb: int, n: int) -> None:
    # entries below 1/2 off a diagonal of 3: well conditioned, so differences are accurate
    a = np.random.default_rng(seed).uniform(-0.5, 0.5, (nb, n, n)) / n + 3 * np.eye(n)
    for loss in (_slogdet_loss, _cho_loss):
        check_grads(loss, (a,), order=2, modes=("fwd", "rev"))
        (v1, g1), (v2, g2) = _both(lambda x, f=loss: fg.jit(fg.value_and_grad(f))(x), a)
        np.testing.assert_allclose(np.asarray(v1), np.asarray(v2), rtol=1e-11)
        np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-9, atol=1e-11)


def test_without_the_loops_the_lapack_path_runs(lapack: None) -> None:
    x = np.random.default_rng(0).standard_normal((SB.MIN_BATCH, 5, 5))
    assert not SB.use_loops("lu", SB.MIN_BATCH, 5)
    lu_, piv, perm = D._lu_impl(np, x)
    for i in range(SB.MIN_BATCH):
        ref_lu, ref_piv = scipy.linalg.lu_factor(x[i])
        np.testing.assert_allclose(lu_[i], ref_lu, rtol=1e-12)
        np.testing.assert_array_equal(piv[i], ref_piv)


def test_single_matrices_and_large_orders_stay_on_lapack() -> None:
    assert not SB.use_loops("lu", 1, 4)
    assert not SB.use_loops("trsm", 64, SB.MAX_N["trsm"] + 1, 2)
