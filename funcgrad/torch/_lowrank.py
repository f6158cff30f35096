"""Randomized low-rank SVD and PCA (``torch.svd_lowrank``, ``torch.pca_lowrank``) and the
LOBPCG eigensolver (``torch.lobpcg``).

As in PyTorch these are plain Python over the Tensor operations (``matmul``,
``linalg.qr``, ``linalg.svd``, ``linalg.eigh``, ``linalg.cholesky``, ...), so
``svd_lowrank`` and ``pca_lowrank`` are differentiable through the engine's own rules.
``lobpcg`` runs its iteration without recording and, when ``A`` requires grad, records
one node (``LOBPCGAutogradFunctionBackward``) whose backward is PyTorch's: the
symmetric-eigenproblem derivative of the computed eigenpairs, with the part outside
their span found by solving a Sylvester equation (Hu and Cheng, 2006).

The random draws (the sketch of ``svd_lowrank``, the start of ``lobpcg``) come from
the default generator, so ``torch.manual_seed`` makes a run repeatable; the stream is
funcgrad's, not PyTorch's bits, so results agree with PyTorch's to the accuracy of the
method, not bit for bit.

>>> import funcgrad.torch as torch
>>> state = torch.get_rng_state()
>>> a = torch.tensor([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
>>> U, S, V = torch.svd_lowrank(a, q=1)
>>> U.shape, S.shape, V.shape
(torch.Size([3, 1]), torch.Size([1]), torch.Size([2, 1]))
>>> torch.allclose(U @ torch.diag(S) @ V.mH, a, atol=1e-5)
True
>>> torch.set_rng_state(state)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from funcgrad.torch import _dtypes as dt
from funcgrad.torch import linalg
from funcgrad.torch._creation import empty, eye, randn, zeros
from funcgrad.torch._functions import cat
from funcgrad.torch._random import Generator
from funcgrad.torch._tensor import Tensor, where
from funcgrad.torch.autograd.function import Function

__all__ = ["lobpcg", "pca_lowrank", "svd_lowrank"]


# -- helpers (PyTorch's torch/_linalg_utils.py) -------------------------------------------

def _floating_dtype(A: Any) -> Any:
    """A's dtype where it is float16/32/64; float32 for every other dtype."""
    if A.dtype in (dt.float16, dt.float32, dt.float64):
        return A.dtype
    return dt.float32


def _mm(A: Any, B: Any) -> Any:
    """``A @ B``, with ``A is None`` standing for the identity."""
    return B if A is None else A.matmul(B)


def _qform(A: Any, S: Any) -> Any:
    """The quadratic form ``S^T A S``."""
    return S.mT.matmul(_mm(A, S))


def _symeig(A: Any, largest: bool | None = False) -> tuple[Any, Any]:
    """Eigenpairs of the symmetric ``A``, ascending (descending when ``largest``)."""
    E, Z = linalg.eigh(A, UPLO="U")
    if largest:
        return E.flip(dims=(-1,)), Z.flip(dims=(-1,))
    return E, Z


# -- svd_lowrank and pca_lowrank -------------------------------------------------------

def _approximate_basis(A: Any, q: int, niter: int | None = 2,
                       M: Any = None) -> Any:
    """``Q`` with ``q`` orthonormal columns such that ``Q Q^H (A - M)`` approximates
    ``A - M`` (Halko, Martinsson and Tropp 2009, Algorithm 4.4: a Gaussian sketch
    followed by ``niter`` subspace iterations)."""
    niter = 2 if niter is None else niter
    dtype = A.dtype if A.is_complex() else _floating_dtype(A)
    if q < 0:  # the message of the random draw below, in PyTorch
        raise RuntimeError("Trying to create tensor with negative dimension "
                           f"{q}: [{A.shape[-1]}, {q}]")
    R = randn(A.shape[-1], q, dtype=dtype, device=A.device)

    def project(B: Any, N: Any, X: Any) -> Any:
        Y = B.matmul(X)
        return Y if N is None else Y - N.matmul(X)

    Q = linalg.qr(project(A, M, R)).Q
    for _ in range(niter):
        Q = linalg.qr(project(A.mH, None if M is None else M.mH, Q)).Q
        Q = linalg.qr(project(A, M, Q)).Q
    return Q


def _svd_lowrank(A: Any, q: int | None = 6, niter: int | None = 2,
                 M: Any = None) -> tuple[Any, Any, Any]:
    # Halko et al. 2009, Algorithm 5.1, on the tall one of A and A^H.
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:
        A = A.mH
        M = None if M is None else M.mH
    Q = _approximate_basis(A, q, niter=niter, M=M)
    B = Q.mH.matmul(A)
    if M is not None:
        B = B - Q.mH.matmul(M)
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """A randomized SVD ``(U, S, V)`` of rank ``q`` with ``A ≈ U diag(S) V^H`` (of
    ``A - M`` when ``M`` is given; ``M`` broadcasts to ``A``), for a matrix or a batch of
    matrices, as ``torch.svd_lowrank``. ``niter`` subspace iterations refine the random
    sketch; seed the generator for repeatable results.

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state()
    >>> a = torch.tensor([[3.0, 0.0], [0.0, 4.0], [0.0, 0.0]])
    >>> U, S, V = torch.svd_lowrank(a, q=2)
    >>> [round(s, 4) for s in S.tolist()]
    [4.0, 3.0]
    >>> torch.allclose(U @ torch.diag(S) @ V.mT, a, atol=1e-6)
    True
    >>> torch.set_rng_state(state)
    """
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """Principal component analysis of the data matrix ``A`` (``m`` samples by ``n``
    features, or a batch of them), as ``torch.pca_lowrank``: ``svd_lowrank`` of ``A``
    with the column means taken out (``center=True``) or of ``A`` itself. The columns
    of ``V`` are the principal directions and ``S ** 2 / (m - 1)`` the variances along
    them; ``q`` defaults to ``min(6, m, n)``.

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state()
    >>> a = torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> U, S, V = torch.pca_lowrank(a, q=1)
    >>> torch.allclose(S ** 2 / 2, torch.tensor([2.0]))  # the variance along (1, 1)
    True
    >>> V.abs()
    tensor([[0.7071],
            [0.7071]])
    >>> torch.set_rng_state(state)
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    return _svd_lowrank(_centered(A), q, niter=niter, M=None)


def _centered(A: Any) -> Any:
    """A less its column means."""
    return A - A.mean(dim=(-2,), keepdim=True)


# -- lobpcg: the derivative ------------------------------------------------------------

def _eigenspace_grad(D_grad: Any, U_grad: Any, D: Any, U: Any) -> Any:
    """``U (diag(D_grad) + (U^T U_grad) * F) U^T`` with ``F_ij = 1 / (d_j - d_i)`` off
    the diagonal and 0 on it: A's gradient for a complete set of eigenpairs of A."""
    on_diagonal = eye(D.shape[-1], dtype=dt.bool, device=D.device)
    F = (D.unsqueeze(-2) - D.unsqueeze(-1)).masked_fill(on_diagonal, math.inf).reciprocal()
    Ut = U.mT
    return U.matmul((D_grad.diag_embed() + Ut.matmul(U_grad) * F).matmul(Ut))


def _monic_from_roots(roots: Any) -> Any:
    """The coefficients ``(a_0, ..., a_{k-1}, 1)`` (lowest power first) of
    ``prod_i (x - roots[..., i])``, built one factor at a time."""
    coeffs = roots.new_ones((*roots.shape[:-1], 1))
    for i in range(roots.shape[-1]):
        pad = roots.new_zeros((*roots.shape[:-1], 1))
        coeffs = cat([pad, coeffs], -1) - roots[..., i:i + 1] * cat([coeffs, pad], -1)
    return coeffs


def _monic_at_vector(poly: Any, x: Any) -> Any:
    """The monic polynomial ``poly`` (lowest power first) at each entry of ``x``, by
    Horner's rule."""
    value = x.new_ones(x.shape)
    for j in range(poly.shape[-1] - 2, -1, -1):
        value = poly[..., j:j + 1] + x * value
    return value


def _monic_at_matrix(poly: Any, x: Any) -> Any:
    """The monic polynomial ``poly`` at the square matrix ``x``, by Horner's rule."""
    identity = eye(x.shape[-1], dtype=x.dtype, device=x.device)
    value = identity
    for j in range(poly.shape[-1] - 2, -1, -1):
        value = x.matmul(value) + poly[..., j].unsqueeze(-1).unsqueeze(-1) * identity
    return value


def _partial_eigenspace_grad(D_grad: Any, U_grad: Any, A: Any, D: Any,
                             U: Any, largest: bool) -> Any:
    """A's gradient for ``k < m`` eigenpairs ``(D, U)``: the part in ``span(U)`` as for a
    complete set, plus the solution of the Sylvester equation
    ``U_o^T A U_o dX - dX D = -U_o^T A U`` on an orthogonal complement ``U_o`` of U
    (Hu and Cheng 2006, through the characteristic polynomial of D)."""
    m, k = A.shape[-1], D.shape[-1]
    Ut = U.mT
    complement = eye(m, dtype=A.dtype, device=A.device) - U.matmul(Ut)
    # Any basis of the complement gives the same gradient; a fixed generator keeps the
    # default stream untouched and the result repeatable, as in PyTorch.
    draw = randn((*A.shape[:-1], m - k), dtype=A.dtype, device=A.device,
                 generator=Generator(A.device))
    U_o = complement.matmul(draw)
    U_o_t = U_o.mT
    chr_poly = _monic_from_roots(D)
    series = U_grad.new_zeros(U_grad.shape)
    power = U_grad
    for j in range(1, chr_poly.shape[-1]):
        series = series + power * _monic_at_vector(chr_poly[..., j:], D).unsqueeze(-2)
        power = A.matmul(power)
    restricted = U_o_t.matmul(_monic_at_matrix(chr_poly, A).matmul(U_o))
    # chr_poly(A) on the complement is definite: negative for an odd number of largest
    # eigenvalues, positive otherwise (distinct eigenvalues assumed).
    sign = -1 if largest and k % 2 == 1 else 1
    chol = linalg.cholesky(sign * restricted)
    solved = U_o_t.matmul(series).cholesky_solve(chol)
    return _eigenspace_grad(D_grad, U_grad, D, U) - U_o.matmul(sign * solved).matmul(Ut)


class LOBPCGAutogradFunction(Function):
    """``lobpcg`` on an ``A`` that requires grad: one node, PyTorch's backward."""

    @staticmethod
    def forward(ctx: Any, A: Any, k: int | None = None, B: Any = None,
                X: Any = None, n: int | None = None, iK: Any = None,
                niter: int | None = None, tol: float | None = None,
                largest: bool | None = None, method: str | None = None,
                tracker: Callable[[Any], Any] | None = None,
                ortho_iparams: dict[str, int] | None = None,
                ortho_fparams: dict[str, float] | None = None,
                ortho_bparams: dict[str, bool] | None = None) -> tuple[Any, Any]:
        E, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                       ortho_iparams, ortho_fparams, ortho_bparams)
        ctx.save_for_backward(A, B, E, U)
        ctx.largest = largest
        return E, U

    @staticmethod
    def backward(ctx: Any, E_grad: Any, U_grad: Any) -> tuple[Any, ...]:
        A, B, E, U = ctx.saved_tensors
        if A.is_complex() or (B is not None and B.is_complex()):
            raise ValueError("lobpcg.backward does not support complex input yet. "
                             "Note that lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        if U.shape[-1] == U.shape[-2]:
            A_grad = _eigenspace_grad(E_grad, U_grad, E, U)
        else:
            A_grad = _partial_eigenspace_grad(E_grad, U_grad, A, E, U, largest)
        return (A_grad,) + (None,) * 13


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None,
           X: Tensor | None = None, n: int | None = None, iK: Tensor | None = None,
           niter: int | None = None, tol: float | None = None,
           largest: bool | None = None, method: str | None = None,
           tracker: Callable[[Any], Any] | None = None,
           ortho_iparams: dict[str, int] | None = None,
           ortho_fparams: dict[str, float] | None = None,
           ortho_bparams: dict[str, bool] | None = None) -> tuple[Tensor, Tensor]:
    """The ``k`` largest (``largest=False``: smallest) eigenpairs ``(E, X)`` of the
    symmetric positive definite problem ``A x = λ B x`` (``B`` the identity by default)
    by LOBPCG, as ``torch.lobpcg``: ``method="ortho"`` (the default, Stathopoulos and Wu's
    orthogonal basis) or ``"basic"`` (Knyazev's), a start ``X`` of ``n >= k`` columns
    (random by default), a preconditioner ``iK``, at most ``niter`` steps (``-1``: until
    converged) to the residual tolerance ``tol``, and a ``tracker`` called with the
    worker after each step. ``A`` needs ``m >= 3 n`` rows. Differentiable in ``A`` (with
    ``B`` not given); ``A`` is symmetrized first when it requires grad.

    >>> import funcgrad.torch as torch
    >>> state = torch.get_rng_state()
    >>> A = torch.diag(torch.arange(1.0, 10.0, dtype=torch.float64))
    >>> E, X = torch.lobpcg(A, k=2)
    >>> [round(e, 6) for e in E.tolist()]
    [9.0, 8.0]
    >>> X.abs().argmax(dim=0)
    tensor([8, 7])
    >>> E, X = torch.lobpcg(A, k=2, largest=False)
    >>> [round(e, 6) for e in E.tolist()]
    [1.0, 2.0]
    >>> torch.set_rng_state(state)
    """
    if A.requires_grad or (B is not None and B.requires_grad):
        # A symmetric A's gradient should be symmetric too (so that a gradient step
        # keeps A symmetric): the map A -> (A + A^T) / 2 makes it so.
        A_sym = _symmetrized(A)
        B_sym = _symmetrized(B) if B is not None else None
        result: tuple[Any, Any] = LOBPCGAutogradFunction.apply(
            A_sym, k, B_sym, X, n, iK, niter, tol, largest, method, tracker,
            ortho_iparams, ortho_fparams, ortho_bparams)
        return result
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker,
                   ortho_iparams, ortho_fparams, ortho_bparams)


def _symmetrized(A: Any) -> Any:
    return (A + A.mT) / 2


# -- lobpcg: the iteration ---------------------------------------------------------------

_FEPS = {dt.float32: 1.2e-07, dt.float64: 2.23e-16}


def _lobpcg(A: Any, k: int | None, B: Any, X: Any, n: int | None,
            iK: Any, niter: int | None, tol: float | None, largest: bool | None,
            method: str | None, tracker: Callable[[Any], Any] | None,
            ortho_iparams: dict[str, int] | None, ortho_fparams: dict[str, float] | None,
            ortho_bparams: dict[str, bool] | None) -> tuple[Any, Any]:
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating_dtype(A)
    device = A.device
    if tol is None:
        tol = _FEPS[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is "
            f"smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def start(X_: Any, name: str) -> Any:
        X_ = randn((m, n), dtype=dtype, device=device) if X_ is None else X_
        if not (len(X_.shape) == 2 and X_.shape == (m, n)):
            raise AssertionError(f"{name} shape mismatch: got {X_.shape}, expected {(m, n)}")
        return X_

    if len(A.shape) == 2:
        worker = LOBPCG(A, B, start(X, "X"), iK, iparams, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    batch = A.shape[:-2]
    N = math.prod(batch)
    bA = A.reshape((N, m, m))
    bB = B.reshape((N, m, m)) if B is not None else None
    bX = X.reshape((N, *X.shape[-2:])) if X is not None else None
    bE = empty((N, k), dtype=dtype, device=device)
    bU = empty((N, m, k), dtype=dtype, device=device)
    for i in range(N):
        iparams["batch_index"] = i
        worker = LOBPCG(bA[i], None if bB is None else bB[i],
                        start(None if bX is None else bX[i], "X_"), iK, iparams, fparams,
                        bparams, method, tracker)
        worker.run()
        bE[i] = worker.E[:k]
        bU[i] = worker.X[:, :k]
    return bE.reshape((*batch, k)), bU.reshape((*batch, m, k))


class LOBPCG:
    """The state of one LOBPCG run (what a ``tracker`` sees): the parameters
    ``iparams``, ``fparams``, ``bparams``; the variables ``ivars``, ``fvars``, ``bvars``,
    ``tvars``; the inputs ``A``, ``B``, ``iK``; and the iterates ``E`` (eigenvalues),
    ``X`` (eigenvectors), ``S`` (search basis) and ``R`` (residual). A tracker that sets
    ``bvars["force_stop"] = True`` stops the iteration."""

    def __init__(self, A: Any, B: Any, X: Any, iK: Any,
                 iparams: dict[str, int], fparams: dict[str, float],
                 bparams: dict[str, bool], method: str,
                 tracker: Callable[[Any], Any] | None) -> None:
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method = method
        self.tracker = tracker
        m, n = iparams["m"], iparams["n"]
        self.X: Any = X
        self.E: Any = zeros((n,), dtype=X.dtype, device=X.device)
        self.R: Any = zeros((m, n), dtype=X.dtype, device=X.device)
        self.S: Any = zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars: dict[str, Any] = {}
        self.ivars: dict[str, int] = {"istep": 0}
        self.fvars: dict[str, float] = {"_": 0.0}
        self.bvars: dict[str, bool] = {"_": False}

    def __str__(self) -> str:
        lines = ["LOBPCG:"] + [f"  {name}={getattr(self, name)}" for name in (
            "iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B",
            "iK", "X", "E")]
        return "".join(line + "\n" for line in lines)

    def run(self) -> None:
        """Step until ``k`` eigenpairs converge, ``niter`` steps are done or the tracker
        stops the run."""
        self.update()
        self.call_tracker()
        while not self.stop_iteration():
            self.update()
            self.call_tracker()

    def call_tracker(self) -> None:
        if self.tracker is not None:
            self.tracker(self)

    def update(self) -> None:
        """One step (the first also records the norms the convergence test uses)."""
        if self.ivars["istep"] == 0:
            X_norm = float(self.X.norm())
            iX_norm = X_norm ** -1
            A_norm = float(_mm(self.A, self.X).norm()) * iX_norm
            B_norm = float(_mm(self.B, self.X).norm()) * iX_norm
            self.fvars.update(X_norm=X_norm, A_norm=A_norm, B_norm=B_norm)
            self.ivars.update(iterations_left=self.iparams["niter"], converged_count=0,
                              converged_end=0)
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self) -> None:
        """``R = A X - B X diag(E)``."""
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self) -> int:
        """The number of leading eigenpairs whose backward-stable relative residual is
        below ``tol`` (Duersch et al. 2018, section 4.3); it never decreases."""
        prev_count = self.ivars["converged_count"]
        A_norm, B_norm = self.fvars["A_norm"], self.fvars["B_norm"]
        X = self.X
        rerr = self.R.norm(2, (0,)) / (
            X.norm(2, (0,)) * (A_norm + self.E[:X.shape[-1]].abs() * B_norm))
        count = 0
        for converged in (rerr < self.fparams["tol"]).tolist():
            if not converged:  # later pairs wait, to keep the pairs in order
                break
            count += 1
        if count < prev_count:
            raise AssertionError(f"the number of converged eigenpairs (was {prev_count}, "
                                 f"got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self) -> bool:
        return (self.bvars.get("force_stop", False)
                or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def _update_basic(self) -> None:
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._rayleigh_ritz_transform(self.X)
            E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X[:] = self.X.matmul(Ri.matmul(Z))
            self.E[:] = E
            np_ = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            W = _mm(self.iK, self.R)
        else:
            S_ = self.S[:, nc:ns]
            Ri = self._rayleigh_ritz_transform(S_)
            E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
            self.X[:, nc:] = S_.matmul(Ri.matmul(Z[:, :n - nc]))
            self.E[nc:] = E_[:n - nc]
            P = S_.matmul(Ri.matmul(Z[:, n:2 * n - nc]))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[..., :n] = self.X
            self.S[:, n:n + np_] = P
            W = _mm(self.iK, self.R[:, nc:])
        ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _update_ortho(self) -> None:
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._rayleigh_ritz_transform(self.X)
            _, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = self.X.matmul(Ri.matmul(Z))
            self.update_residual()
            np_ = 0
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = self._get_ortho(self.R, self.X)
        else:
            S_ = self.S[:, nc:ns]
            E_, Z = _symeig(_qform(self.A, S_), largest)  # Rayleigh-Ritz
            self.X[:, nc:] = S_.matmul(Z[:, :n - nc])
            self.E[nc:] = E_[:n - nc]
            P = S_.matmul(Z[:, n - nc:].matmul(linalg.qr(Z[:n - nc, n - nc:].mT).Q))
            np_ = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n:n + np_] = P
            W = self._get_ortho(self.R[:, nc:], self.S[:, :n + np_])
        ns = self.ivars["converged_end"] = n + np_ + W.shape[-1]
        self.S[:, n + np_:ns] = W

    def _rayleigh_ritz_transform(self, S: Any) -> Any:
        """The upper-triangular ``Ri`` that turns ``(S^T A S) C = (S^T B S) C E`` into the
        standard problem ``(Ri^T S^T A S Ri) Z = Z E`` with ``C = Ri Z`` (the
        diagonal of ``S^T B S`` scaled out before its Cholesky factorization)."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg.cholesky((SBS * d_row) * d_col, upper=True)
        return linalg.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U: Any, drop: bool, tau: float) -> Any:
        """U made B-orthonormal (Duersch's thesis 2015, Algorithm 4); with ``drop`` the
        columns that add little to ``span(U)`` are dropped, otherwise their small
        eigenvalues are raised to ``tau`` times the largest."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        # Exact zero columns are dropped first (d ** -0.5 below would be infinite).
        nonzero = where(d.abs() != 0.0)[0]
        if len(nonzero) < len(d):
            U = U[:, nonzero]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        E, Z = _symeig((UBU * d_col) * d_col.mT)
        t = tau * E.abs().max()
        if drop:
            keep = where(E > t)[0]
            E, Z, d_col = E[keep], Z[:, keep], d_col[keep]
        else:
            E[where(E < t)[0]] = t
        return (U * d_col.mT).matmul(Z * E ** -0.5)

    def _get_ortho(self, U: Any, V: Any) -> Any:
        """U made B-orthonormal and B-orthogonal to the B-orthonormal V (Duersch's thesis,
        Algorithm 3; Algorithm 6 with ``ortho_use_drop``): empty when all of U is
        B-collinear with V."""
        m = self.iparams["m"]
        tau_ortho = self.fparams["ortho_tol"]
        tau_drop = self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [key for key in self.fvars
                    if key.startswith("ortho_") and key.endswith("_rerr")]:
            del self.fvars[key]
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)

        BV_norm = _mm(self.B, V).norm()
        BU = _mm(self.B, U)
        VBU = V.mT.matmul(BU)
        i = j = 0
        for i in range(i_max):
            U = U - V.matmul(VBU)
            drop = False
            tau_svqb = tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop = True
                    tau_svqb = tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _mm(self.B, U)
                UBU = U.mT.matmul(BU)
                residual = UBU - eye(UBU.shape[-1], dtype=UBU.dtype, device=UBU.device)
                rerr = float(residual.norm()) * float(BU.norm() * U.norm()) ** -1
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = V.mT.matmul(BU)
            rerr = float(VBU.norm()) * float(BV_norm * U.norm()) ** -1
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                if self.B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(
                    f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= "
                    f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U
