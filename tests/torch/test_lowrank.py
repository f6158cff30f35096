"""``torch.svd_lowrank``, ``torch.pca_lowrank`` and ``torch.lobpcg`` (funcgrad/torch/_lowrank.py).

funcgrad's random stream is not PyTorch's, so the randomized results are checked for what
they must be, not bit for bit: exact recovery of matrices of low rank, the centering of PCA,
LOBPCG's eigenpairs against a dense eigensolver, and gradients against central finite
differences (with the random draws fixed by reseeding). Against PyTorch 2.13 (where it is
installed): shapes, dtypes and ``grad_fn`` names of the same calls, the deterministic
results (full-rank PCA, converged eigenvalues and their gradients), and the errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from finite_differences import central_grad
from hypothesis import given, reject, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

SEEDS = st.integers(0, 2**16)
BATCHES = st.sampled_from([(), (2,)])
DTYPES = st.sampled_from(["float32", "float64"])
# Reconstruction / orthonormality tolerance (relative to the matrix's scale) per dtype.
TOL = {"float32": 2e-4, "float64": 1e-10}


@pytest.fixture(autouse=True)
def _keep_rng_state():
    """The tests reseed the default generator; the next test finds it as it was."""
    state = ft.get_rng_state()
    yield
    ft.set_rng_state(state)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _low_rank(rng: np.random.Generator, batch: tuple[int, ...], m: int, n: int,
              k: int) -> np.ndarray:
    """A (batch of) ``m x n`` matrix of rank ``k`` exactly (in float64)."""
    return rng.standard_normal((*batch, m, k)) @ rng.standard_normal((*batch, k, n))


def _separated(rng: np.random.Generator, batch: tuple[int, ...], m: int,
               n: int) -> np.ndarray:
    """A full-rank ``m x n`` matrix with singular values 2^r (r = rank..1), jittered: far
    apart, so that the SVD is smooth there."""
    r = min(m, n)
    u = np.linalg.qr(rng.standard_normal((*batch, m, r)))[0]
    v = np.linalg.qr(rng.standard_normal((*batch, n, r)))[0]
    s = 2.0 ** np.arange(r, 0, -1) * (1 + 0.1 * rng.random((*batch, r)))
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def _spd(rng: np.random.Generator, batch: tuple[int, ...], m: int) -> np.ndarray:
    """A symmetric positive definite ``m x m`` matrix with eigenvalues about 1, 2, ..., m."""
    q = np.linalg.qr(rng.standard_normal((*batch, m, m)))[0]
    w = 1.0 + np.arange(m) + 0.5 * rng.random((*batch, m))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _check_svd(U: Any, S: Any, V: Any, target: np.ndarray, dtype: str) -> None:
    """``U diag(S) V^H`` reproduces ``target``; U and V have orthonormal columns; S is
    descending and matches the leading singular values of ``target``."""
    u, s, v = _np(U).astype(np.float64), _np(S).astype(np.float64), _np(V).astype(np.float64)
    assert U.dtype == S.dtype == V.dtype == getattr(ft, dtype)
    r = s.shape[-1]
    assert u.shape[-1] == v.shape[-1] == r
    scale = 1.0 + np.abs(target).max(initial=0.0)
    tol = TOL[dtype] * scale
    np.testing.assert_allclose((u * s[..., None, :]) @ np.swapaxes(v, -1, -2), target,
                               atol=tol)
    for w in (u, v):
        gram = np.swapaxes(w, -1, -2) @ w
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(r), gram.shape),
                                   atol=TOL[dtype] * 10)
    assert (np.diff(s, axis=-1) <= tol).all() and (s >= 0).all()
    exact = np.linalg.svd(target, compute_uv=False)
    np.testing.assert_allclose(s, exact[..., :r], atol=tol)


# ---------------------------------------------------------------- svd_lowrank


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, batch=BATCHES, m=st.integers(1, 6), n=st.integers(1, 6), dtype=DTYPES,
       niter=st.integers(0, 2), data=st.data())
def test_svd_lowrank_recovers_matrices_of_low_rank(seed, batch, m, n, dtype, niter, data):
    k = data.draw(st.integers(0, min(m, n)), label="rank")
    q = data.draw(st.integers(k, min(m, n) + 1), label="q")
    a = _low_rank(np.random.default_rng(seed), batch, m, n, k).astype(dtype)
    U, S, V = ft.svd_lowrank(ft.tensor(a), q=q, niter=niter)
    assert S.shape[-1] <= q
    assert tuple(U.shape) == (*batch, m, S.shape[-1])
    assert tuple(V.shape) == (*batch, n, S.shape[-1])
    _check_svd(U, S, V, a.astype(np.float64), dtype)


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, m=st.integers(2, 6), n=st.integers(2, 6), k=st.integers(1, 2),
       mean_shape=st.sampled_from(["row", "full", "batched-row"]))
def test_svd_lowrank_of_a_difference(seed, m, n, k, mean_shape):
    """With ``M``, the SVD is of ``A - M``; ``M`` broadcasts to ``A``."""
    rng = np.random.default_rng(seed)
    k = min(k, m, n)
    batch = (2,) if mean_shape == "batched-row" else ()
    mean = rng.standard_normal({"row": (n,), "full": (m, n), "batched-row": (2, 1, n)}[
        mean_shape])
    a = _low_rank(rng, batch, m, n, k) + mean
    U, S, V = ft.svd_lowrank(ft.tensor(a), q=k, M=ft.tensor(mean))
    _check_svd(U, S, V, a - mean, "float64")


def test_svd_lowrank_defaults_and_reproducibility():
    a = _low_rank(np.random.default_rng(0), (), 9, 8, 3)
    ft.manual_seed(3)
    U, S, V = ft.svd_lowrank(ft.tensor(a))  # q=6, niter=2
    assert tuple(U.shape) == (9, 6) and tuple(S.shape) == (6,) and tuple(V.shape) == (8, 6)
    _check_svd(U, S, V, a, "float64")
    ft.manual_seed(3)
    again = ft.svd_lowrank(ft.tensor(a), q=None, niter=None)
    for x, y in zip((U, S, V), again):
        assert np.array_equal(_np(x), _np(y))
    # Another seed draws another sketch (the results agree only to rounding).
    ft.manual_seed(4)
    other = ft.svd_lowrank(ft.tensor(a))
    assert not np.array_equal(_np(U), _np(other[0]))


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, batch=BATCHES, m=st.integers(1, 5), n=st.integers(1, 5), dtype=DTYPES,
       niter=st.integers(0, 2), data=st.data())
def test_svd_lowrank_like_torch(seed, batch, m, n, dtype, niter, data):
    """The same call's shapes, dtypes and grad_fn names as PyTorch's, and singular values
    those of ``torch.linalg.svdvals`` (the matrix is of rank k <= q)."""
    torch = pytest.importorskip("torch")
    k = data.draw(st.integers(0, min(m, n)), label="rank")
    q = data.draw(st.integers(k, min(m, n) + 2), label="q")
    a = _low_rank(np.random.default_rng(seed), batch, m, n, k).astype(dtype)
    x, xt = ft.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got, want = ft.svd_lowrank(x, q=q, niter=niter), torch.svd_lowrank(xt, q=q, niter=niter)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        assert type(g.grad_fn).__name__ == type(w.grad_fn).__name__
    svdvals = torch.linalg.svdvals(torch.tensor(a)).numpy()
    scale = 1.0 + np.abs(a).max(initial=0.0)
    np.testing.assert_allclose(_np(got[1]), svdvals[..., :got[1].shape[-1]],
                               atol=TOL[dtype] * scale)


# ---------------------------------------------------------------- pca_lowrank


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, batch=BATCHES, m=st.integers(1, 6), n=st.integers(1, 6), dtype=DTYPES,
       center=st.booleans())
def test_pca_lowrank_centers_or_not(seed, batch, m, n, dtype, center):
    """With q = min(m, n) the result is an exact SVD: of A less its column means
    (``center=True``), or of A itself."""
    a = np.random.default_rng(seed).standard_normal((*batch, m, n)).astype(dtype)
    U, S, V = ft.pca_lowrank(ft.tensor(a), q=min(m, n), center=center)
    a64 = a.astype(np.float64)
    _check_svd(U, S, V, a64 - a64.mean(axis=-2, keepdims=True) if center else a64, dtype)
    # The default q is min(6, m, n).
    U, S, V = ft.pca_lowrank(ft.tensor(a), center=center)
    assert tuple(S.shape) == (*batch, min(6, m, n))


def test_pca_lowrank_principal_directions():
    """Samples spread along (3, 4)/5 with a little noise: V's first column is that
    direction, and S**2 / (m - 1) the variances."""
    rng = np.random.default_rng(1)
    t = rng.standard_normal(200)
    a = np.outer(t * 5, [0.6, 0.8]) + 0.01 * rng.standard_normal((200, 2)) + [7.0, -3.0]
    U, S, V = ft.pca_lowrank(ft.tensor(a), q=2)
    np.testing.assert_allclose(np.abs(_np(V)[:, 0]), [0.6, 0.8], atol=1e-3)
    cov = np.cov(a, rowvar=False)
    np.testing.assert_allclose(_np(S) ** 2 / 199, np.linalg.eigvalsh(cov)[::-1], rtol=1e-10)


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, batch=BATCHES, m=st.integers(1, 6), n=st.integers(1, 6), dtype=DTYPES,
       center=st.booleans())
def test_pca_lowrank_like_torch(seed, batch, m, n, dtype, center):
    """Full-rank PCA is deterministic: PyTorch's singular values, shapes, dtypes, grad_fn
    names, and the gradient of the sum of the nonzero singular values."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(seed).standard_normal((*batch, m, n)).astype(dtype)
    x, xt = ft.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    q = min(m, n)
    got = ft.pca_lowrank(x, q=q, center=center)
    want = torch.pca_lowrank(xt, q=q, center=center)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        assert type(g.grad_fn).__name__ == type(w.grad_fn).__name__
    np.testing.assert_allclose(_np(got[1]), want[1].detach().numpy(), atol=TOL[dtype] * 10)
    # Centering takes one from the rank: that singular value is 0, where S has no
    # derivative (nor has the QR factorization of the rank-deficient sketch): the
    # gradient is compared at q = the rank, where the result is still exact.
    rank = min(m - 1 if center else m, n)
    if dtype == "float64" and rank > 0:
        ft.pca_lowrank(x, q=rank, center=center)[1].sum().backward()
        torch.pca_lowrank(xt, q=rank, center=center)[1].sum().backward()
        np.testing.assert_allclose(_np(x.grad), xt.grad.numpy(), atol=1e-8)
    assert tuple(ft.pca_lowrank(ft.tensor(a))[1].shape) == tuple(
        torch.pca_lowrank(torch.tensor(a))[1].shape)


# ---------------------------------------------------------------- gradients


def _svd_objective(U: Any, S: Any, V: Any, w: np.ndarray) -> Any:
    """A smooth function of the outputs that does not see the singular vectors' signs."""
    recon = U.matmul(S.diag_embed()).matmul(V.mH)
    return (S.sum() + (recon * ft.tensor(w)).sum() + (U[..., 0] ** 2).sum()
            + (V[..., 0] ** 2 * ft.arange(V.shape[-2], dtype=V.dtype)).sum())


@settings(max_examples=8, deadline=None)
@given(seed=SEEDS, batch=BATCHES, m=st.integers(2, 4), n=st.integers(2, 4),
       niter=st.integers(0, 2), fn=st.sampled_from(["svd", "pca", "pca-uncentered"]),
       data=st.data())
def test_lowrank_gradients_match_finite_differences(seed, batch, m, n, niter, fn, data):
    """Backward through the randomized factorization (its draw fixed by reseeding)
    against central finite differences, in float64, at matrices whose singular values are
    far apart."""
    q = data.draw(st.integers(1, min(m, n) - (fn == "pca")), label="q")
    rng = np.random.default_rng(seed)
    a = _separated(rng, batch, m, n)
    w = rng.standard_normal((*batch, m, n))

    def run(x: Any) -> Any:
        ft.manual_seed(seed)
        if fn == "svd":
            out = ft.svd_lowrank(x, q=q, niter=niter)
        else:
            out = ft.pca_lowrank(x, q=q, niter=niter, center=fn == "pca")
        return _svd_objective(*out, w)

    x = ft.tensor(a, requires_grad=True)
    run(x).backward()
    expected = central_grad(lambda v: float(run(ft.tensor(v))), a)
    np.testing.assert_allclose(_np(x.grad), expected, atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------- lobpcg


def _generalized_eigh(a: np.ndarray, b: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Ascending eigenpairs of ``a x = w b x`` with ``x^T b x = 1``."""
    if b is None:
        return np.linalg.eigh(a)
    li = np.linalg.inv(np.linalg.cholesky(b))
    w, y = np.linalg.eigh(li @ a @ li.T)
    return w, li.T @ y


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, k=st.integers(1, 2), dtype=DTYPES, largest=st.booleans(),
       method=st.sampled_from(["ortho", "basic"]), generalized=st.booleans(),
       start=st.sampled_from(["random", "n", "X"]), data=st.data())
def test_lobpcg_eigenpairs(seed, k, dtype, largest, method, generalized, start, data):
    """The k largest (smallest) eigenpairs of ``A x = w B x``, as a dense eigensolver
    finds them. (The basic method is given m >= 3n + 3 rows and B = I: with fewer rows
    its Cholesky factorizations break down, with a B it misses the pairs, in PyTorch
    too.)"""
    generalized = generalized and method == "ortho"
    n = k if start == "random" else k + 1
    m = data.draw(st.integers(3 * n + (3 if method == "basic" else 0), 3 * n + 6), label="m")
    rng = np.random.default_rng(seed)
    a = _spd(rng, (), m)
    b = None
    if generalized:
        g = rng.standard_normal((m, m))
        b = np.eye(m) + 0.1 * g @ g.T / m
    kwargs: dict[str, Any] = {"k": k, "largest": largest, "method": method}
    if b is not None:
        kwargs["B"] = ft.tensor(b.astype(dtype))
    if start == "n":
        kwargs["n"] = n
    elif start == "X":
        kwargs["X"] = ft.tensor(rng.standard_normal((m, n)).astype(dtype))
    ft.manual_seed(seed)
    try:
        E, X = ft.lobpcg(ft.tensor(a.astype(dtype)), **kwargs)
    except ft.linalg.LinAlgError:
        # The basic method's float32 Gram matrices can break down where MKL's last bits
        # let PyTorch's run go on (sharp_bits); the other cases must converge.
        if method == "basic" and dtype == "float32":
            reject()
        raise
    assert E.dtype == X.dtype == getattr(ft, dtype)
    assert tuple(E.shape) == (k,) and tuple(X.shape) == (m, k)
    w, v = _generalized_eigh(a, b)
    pick = slice(None, -k - 1, -1) if largest else slice(0, k)
    vals_tol, vecs_tol = (1e-4, 5e-3) if dtype == "float32" else (1e-9, 1e-6)
    np.testing.assert_allclose(_np(E), w[pick], atol=vals_tol * m)
    bm = np.eye(m) if b is None else b
    overlap = np.abs(_np(X).astype(np.float64).T @ bm @ v[:, pick])
    np.testing.assert_allclose(overlap, np.eye(k), atol=vecs_tol * m)


@settings(max_examples=5, deadline=None)
@given(seed=SEEDS, k=st.integers(1, 2), largest=st.booleans())
def test_lobpcg_batched(seed, k, largest):
    rng = np.random.default_rng(seed)
    m = 3 * k + 2
    a = _spd(rng, (2, 1), m)
    E, X = ft.lobpcg(ft.tensor(a), k=k, largest=largest)
    assert tuple(E.shape) == (2, 1, k) and tuple(X.shape) == (2, 1, m, k)
    w, v = np.linalg.eigh(a)
    pick = slice(None, -k - 1, -1) if largest else slice(0, k)
    np.testing.assert_allclose(_np(E), w[..., pick], atol=1e-9 * m)
    overlap = np.abs(np.swapaxes(_np(X), -1, -2) @ v[..., pick])
    np.testing.assert_allclose(overlap, np.broadcast_to(np.eye(k), overlap.shape),
                               atol=1e-6 * m)


def test_lobpcg_tracker_sees_the_worker_and_can_stop_it():
    a = _spd(np.random.default_rng(2), (), 12)
    steps: list[int] = []

    def tracker(worker: Any) -> None:
        steps.append(worker.ivars["istep"])
        assert tuple(worker.X.shape) == (12, 2) and tuple(worker.tvars["rerr"].shape) == (2,)
        assert worker.iparams["k"] == 2 and worker.bparams["largest"] is True

    ft.lobpcg(ft.tensor(a), k=2, tracker=tracker)
    assert steps == list(range(1, len(steps) + 1)) and len(steps) > 1

    def stop(worker: Any) -> None:
        steps.append(worker.ivars["istep"])
        worker.bvars["force_stop"] = True

    steps.clear()
    ft.lobpcg(ft.tensor(a), k=2, tracker=stop)
    assert steps == [1]
    steps.clear()
    ft.lobpcg(ft.tensor(a), k=2, niter=3, tracker=lambda w: steps.append(0))
    assert len(steps) <= 3


def _lobpcg_objective(E: Any, X: Any, c: np.ndarray) -> Any:
    """Smooth in the eigenpairs and blind to the eigenvectors' signs."""
    return (E * ft.arange(1, E.shape[-1] + 1, dtype=E.dtype)).sum() + (
        X ** 2 * ft.tensor(c)).sum()


@settings(max_examples=6, deadline=None)
@given(seed=SEEDS, k=st.integers(1, 2), largest=st.booleans(), extra=st.integers(0, 2))
def test_lobpcg_gradient_matches_finite_differences(seed, k, largest, extra):
    """lobpcg's backward (PyTorch's, Sylvester equation included) against central
    differences along a few symmetric directions, converged tightly (tol=1e-12)."""
    rng = np.random.default_rng(seed)
    m = 3 * k + extra
    a = _spd(rng, (), m)
    c = rng.standard_normal((m, k))
    dirs = rng.standard_normal((3, m, m))
    dirs = dirs + np.swapaxes(dirs, -1, -2)
    dirs /= np.linalg.norm(dirs, axis=(1, 2), keepdims=True)

    def run(x: Any) -> Any:
        return _lobpcg_objective(*ft.lobpcg(x, k=k, largest=largest, tol=1e-12), c)

    x = ft.tensor(a, requires_grad=True)
    out = run(x)
    assert type(out.grad_fn).__name__ == "AddBackward0"
    out.backward()
    grad = _np(x.grad)
    np.testing.assert_allclose(grad, grad.T, atol=1e-12)  # A is symmetrized first
    along = central_grad(lambda t: float(run(ft.tensor(a + np.tensordot(t, dirs, 1)))),
                         np.zeros(3), eps=1e-5)
    np.testing.assert_allclose(np.tensordot(dirs, grad, ((1, 2), (0, 1))), along,
                               atol=1e-6, rtol=1e-6)


@settings(max_examples=6, deadline=None)
@given(seed=SEEDS, k=st.integers(1, 2), largest=st.booleans(), batch=BATCHES,
       dtype=DTYPES)
def test_lobpcg_like_torch(seed, k, largest, batch, dtype):
    """PyTorch's eigenvalues, shapes, dtypes and grad_fn names; in float64 its gradient."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    m = 3 * k + 2
    a = _spd(rng, batch, m).astype(dtype)
    c = rng.standard_normal((m, k))
    tol = 1e-12 if dtype == "float64" else None
    x, xt = ft.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    E, X = ft.lobpcg(x, k=k, largest=largest, tol=tol)
    Et, Xt = torch.lobpcg(xt, k=k, largest=largest, tol=tol)
    for g, w in ((E, Et), (X, Xt)):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype) == str(w.dtype)
        assert type(g.grad_fn).__name__ == type(w.grad_fn).__name__
    np.testing.assert_allclose(_np(E), Et.detach().numpy(),
                               atol=1e-9 if dtype == "float64" else 1e-3)
    if dtype == "float64" and not batch:
        _lobpcg_objective(E, X, c).backward()
        ((Et * torch.arange(1, k + 1, dtype=Et.dtype)).sum()
         + (Xt ** 2 * torch.tensor(c)).sum()).backward()
        np.testing.assert_allclose(_np(x.grad), xt.grad.numpy(), atol=1e-7)
    # Without grad: no node, same shapes.
    E, X = ft.lobpcg(ft.tensor(a), k=k, largest=largest)
    assert E.grad_fn is None and tuple(X.shape) == tuple(Xt.shape)


# ---------------------------------------------------------------- errors


def _errors(call: Callable[[Any], Any]) -> list[tuple[str, str] | None]:
    torch = pytest.importorskip("torch")
    got: list[tuple[str, str] | None] = []
    for lib in (ft, torch):
        lib.manual_seed(0)
        try:
            call(lib)
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            got.append((type(e).__name__, str(e)))
        else:
            got.append(None)
    return got


def _mat(lib: Any, *shape: int, dtype: str = "float64") -> Any:
    rng = np.random.default_rng(0)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return lib.tensor(_spd(rng, shape[:-2], shape[-1]).astype(dtype))
    return lib.tensor(rng.standard_normal(shape).astype(dtype))


def _lobpcg_backward_with_b(lib: Any) -> None:
    A = _mat(lib, 9, 9).requires_grad_()
    E, _ = lib.lobpcg(A, k=1, B=lib.eye(9, dtype=lib.float64))
    E.sum().backward()


ERRORS: dict[str, Callable[[Any], Any]] = {
    "svd q < 0": lambda lib: lib.svd_lowrank(_mat(lib, 5, 4), q=-1),
    "svd wide q < 0": lambda lib: lib.svd_lowrank(_mat(lib, 3, 7), q=-2),
    "svd vector": lambda lib: lib.svd_lowrank(_mat(lib, 4), q=2),
    "svd M mismatch": lambda lib: lib.svd_lowrank(_mat(lib, 5, 4), q=2, M=_mat(lib, 3)),
    "svd M dtype": lambda lib: lib.svd_lowrank(_mat(lib, 5, 4), q=2,
                                               M=_mat(lib, 4, dtype="float32")),
    "svd int": lambda lib: lib.svd_lowrank(_mat(lib, 5, 4).int(), q=2),
    "pca q > min(m, n)": lambda lib: lib.pca_lowrank(_mat(lib, 5, 4), q=5),
    "pca q < 0": lambda lib: lib.pca_lowrank(_mat(lib, 3, 6), q=-1),
    "pca niter < 0": lambda lib: lib.pca_lowrank(_mat(lib, 5, 4), q=2, niter=-1),
    "pca int": lambda lib: lib.pca_lowrank(_mat(lib, 5, 4).int(), q=2),
    "pca int uncentered": lambda lib: lib.pca_lowrank(_mat(lib, 5, 4).int(), q=2,
                                                      center=False),
    "lobpcg k too large": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=5),
    "lobpcg n too large": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=2, n=5),
    "lobpcg X too wide": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=2, X=_mat(lib, 12, 5)),
    "lobpcg X rows": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=2, X=_mat(lib, 11, 3)),
    "lobpcg batched X rows": lambda lib: lib.lobpcg(_mat(lib, 2, 9, 9), k=1,
                                                    X=_mat(lib, 2, 8, 2)),
    "lobpcg not square": lambda lib: lib.lobpcg(_mat(lib, 12, 11), k=2),
    "lobpcg B shape": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=2, B=_mat(lib, 11, 11)),
    "lobpcg k = 0": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=0),
    "lobpcg float16": lambda lib: lib.lobpcg(_mat(lib, 12, 12, dtype="float16"), k=2),
    "lobpcg int": lambda lib: lib.lobpcg(_mat(lib, 12, 12).int(), k=2),
    "lobpcg X dtype": lambda lib: lib.lobpcg(_mat(lib, 12, 12), k=2,
                                             X=_mat(lib, 12, 3, dtype="float32")),
    "lobpcg backward with B": _lobpcg_backward_with_b,
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_like_torch(case):
    got, want = _errors(ERRORS[case])
    assert want is not None, "PyTorch raises here"
    assert got == want
