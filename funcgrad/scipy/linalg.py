"""``jax.scipy.linalg``: SciPy's linear algebra over funcgrad arrays, differentiable, on the
decomposition primitives (``funcgrad.primitives.decompositions``) and
``funcgrad.numpy.linalg``. ``expm`` is Pade-13 scaling and squaring written in
differentiable operations (jit-safe: the squarings are selected, not branched on), and
``expm_frechet`` is the block-matrix identity expm([[A, E], [0, A]]) = [[e^A, L(A, E)],
[0, e^A]].

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import linalg
>>> round(float(linalg.expm(fnp.zeros((2, 2)))[0, 0]), 6)
1.0
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np
import scipy.linalg as _host

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy import linalg as _la
from funcgrad.numpy._core import promote_inexact
from funcgrad.numpy._creation import asarray, eye, zeros
from funcgrad.numpy._linalg import matmul, tril, triu
from funcgrad.numpy._reductions import max, sum  # noqa: A004
from funcgrad.numpy._shape import (
    broadcast_to,
    concatenate,
    expand_dims,
    flip,
    ravel,
    reshape,
    swapaxes,
)
from funcgrad.numpy._ufuncs import absolute, ceil, log2, where
from funcgrad.primitives import decompositions as D
from funcgrad.primitives.elementwise import stop_gradient
from funcgrad.scipy._linalg_more import dft, funm, hessenberg, qr_multiply, rsf2csf, schur, sqrtm

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu",
           "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur",
           "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]


def _mT(x: Any) -> Any:  # noqa: N802
    return swapaxes(x, -1, -2)


def _cx(x: Any) -> bool:
    return dtypes.kind(get_aval(x).dtype) == "c"


def _H(x: Any) -> Any:  # noqa: N802 - the conjugate transpose
    from funcgrad.numpy._ufuncs import conj  # noqa: PLC0415

    return conj(_mT(x)) if _cx(x) else _mT(x)


def _square(name: str, a: Any) -> Any:
    (a,) = promote_inexact(a)
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(f"{name} needs square matrices (..., n, n), got shape {shape}")
    return a


# ------------------------------------------------------------ decompositions


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor, upper by default as SciPy (NaN if not positive definite).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.cholesky(fnp.array([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    return _la.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """``(c, lower)`` for :func:`cho_solve` (the unused triangle of ``c`` is zero).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> c, low = linalg.cho_factor(fnp.array([[4.0, 2.0], [2.0, 2.0]]))
    >>> low
    False
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve ``a x = b`` from ``cho_factor(a)``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> a = fnp.array([[4.0, 2.0], [2.0, 2.0]])
    >>> linalg.cho_solve(linalg.cho_factor(a), fnp.array([6.0, 4.0])).tolist()
    [1.0, 1.0]
    """
    c, lower = c_and_lower
    c, b = promote_inexact(c, b)
    vec = get_aval(b).ndim == 1
    bm = expand_dims(b, -1) if vec else b
    low = c if lower else _H(c)
    y = D.triangular_solve(low, bm, left_side=True, lower=True)
    x = D.triangular_solve(low, y, left_side=True, lower=True, transpose_a=True,
                           conjugate_a=_cx(low))
    return x[..., 0] if vec else x


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     debug: Any = None, check_finite: bool = True) -> Any:
    """Solve ``op(a) x = b`` for triangular ``a`` (``trans`` 0/'N', 1/'T' or 2/'C').

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.solve_triangular(fnp.array([[2.0, 0.0], [1.0, 1.0]]), fnp.array([2.0, 3.0]),
    ...                         lower=True).tolist()
    [1.0, 2.0]
    """
    import warnings  # noqa: PLC0415

    from funcgrad.numpy._vectorize import vectorize  # noqa: PLC0415

    transpose = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}.get(trans)
    if transpose is None:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = promote_inexact(a, b)
    # As JAX's: a vector b (a 1-D one, or, deprecated, a batch of them beside a batch of
    # matrices) or a matrix b, each broadcast against a's batch by vectorize.
    na, nb = get_aval(a), get_aval(b)
    vec = nb.ndim == 1 or (na.ndim == nb.ndim + 1 and na.shape[-1] == nb.shape[-1])
    if vec and nb.ndim > 1:
        warnings.warn(
            "jax.scipy.linalg.solve_triangular: batched 1D solves with b.ndim > 1 are "
            "deprecated, and in the future will be treated as a batched 2D solve. Use "
            "solve_triangular(a, b[..., None]).squeeze(-1) to avoid this warning.",
            FutureWarning, stacklevel=2)

    def solve(a: Any, b: Any) -> Any:
        x = D.triangular_solve(a, expand_dims(b, -1) if vec else b, left_side=True,
                               lower=lower, transpose_a=transpose,
                               conjugate_a=trans in (2, "C"), unit_diagonal=unit_diagonal)
        return x[..., 0] if vec else x

    return vectorize(solve, signature="(n,n),(n)->(n)" if vec else "(n,n),(n,k)->(n,k)")(a, b)


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> Any:
    """``(p, l, u)`` with ``a = p @ l @ u`` (or ``(p @ l, u)`` with ``permute_l``).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> p, l, u = linalg.lu(fnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> p.tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    (a,) = promote_inexact(a)
    lu_, _, perm = D.lu(a)
    m, n = get_aval(a).shape[-2:]
    k = min(m, n)
    dt = get_aval(a).dtype
    low = tril(lu_[..., :, :k], -1) + eye(m, k, dtype=dt)
    up = triu(lu_[..., :k, :])
    # p[perm[i], i] = 1: a = p @ l @ u with a[perm] = l @ u.
    p = _mT((expand_dims(perm, -1) == np.arange(m, dtype=np.int32)).astype(dt))
    if permute_l:
        return matmul(p, low), up
    return p, low, up


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[Any, Any]:
    """``(lu, piv)`` as SciPy's (0-based row swaps, int32).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> lu, piv = linalg.lu_factor(fnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv.tolist()
    [1, 1]
    """
    (a,) = promote_inexact(a)
    lu_, pivots, _ = D.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """Solve ``a x = b`` (``trans=1``: ``a^T x = b``) from ``lu_factor(a)``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> a = fnp.array([[1.0, 2.0], [3.0, 4.0]])
    >>> linalg.lu_solve(linalg.lu_factor(a), fnp.array([5.0, 11.0])).tolist()
    [1.0, 2.0]
    """
    from funcgrad.lax.linalg import lu_pivots_to_permutation  # noqa: PLC0415

    lu_, piv = lu_and_piv
    lu_, b = promote_inexact(lu_, b)
    m = get_aval(lu_).shape[-1]
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    perm = lu_pivots_to_permutation(asarray(piv).astype(np.int32), m)
    vec = get_aval(b).ndim == 1
    bm = expand_dims(b, -1) if vec else b
    dt = get_aval(lu_).dtype
    pmat = (expand_dims(perm, -1) == np.arange(m, dtype=np.int32)).astype(dt)
    if trans == 0:
        y = D.triangular_solve(lu_, matmul(pmat, bm), left_side=True, lower=True,
                               unit_diagonal=True)
        x = D.triangular_solve(lu_, y, left_side=True, lower=False)
    else:
        # a^T = u^T l^T p: solve u^T, then l^T, then undo p (trans=2: a^H, conjugated).
        y = D.triangular_solve(lu_, bm, left_side=True, lower=False, transpose_a=True,
                               conjugate_a=trans == 2)
        y = D.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                               conjugate_a=trans == 2, unit_diagonal=True)
        x = matmul(_mT(pmat), y)
    return x[..., 0] if vec else x


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """``(q, r)`` (``mode`` "full" or "economic"), or ``(r,)`` with ``mode="r"``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> q, r = linalg.qr(fnp.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    """
    if pivoting:
        raise ValueError("qr(pivoting=True) is not supported by funcgrad; use "
                         "pivoting=False")
    if mode not in ("full", "economic", "r"):
        raise ValueError(f"qr mode={mode!r}: use 'full', 'economic' or 'r'")
    (a,) = promote_inexact(a)
    q, r = D.qr(a, mode == "full")
    return (r,) if mode == "r" else (q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    """``(u, s, vh)``, or ``s`` with ``compute_uv=False``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.svd(fnp.diag(fnp.array([1.0, 2.0])), compute_uv=False).tolist()
    [2.0, 1.0]
    """
    return _la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:  # noqa: A002
    """``(w, v)`` (or ``w``) of symmetric ``a``, or of the pencil ``a v = w b v`` for a
    positive definite ``b`` (through its Cholesky factor).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.eigh(fnp.array([[2.0, 0.0], [0.0, 1.0]]), eigvals_only=True).tolist()
    [1.0, 2.0]
    """
    if eigvals is not None:
        raise ValueError("eigh(eigvals=...) is not supported by funcgrad; slice the result")
    if type != 1:
        raise ValueError(f"eigh(type={type}) is not supported by funcgrad; use type=1")
    if b is None:
        w, v = _la.eigh(a, UPLO="L" if lower else "U")
    else:
        a, b = promote_inexact(a, b)
        low = _la.cholesky(b)
        c = D.triangular_solve(low, a, left_side=True, lower=True)
        c = D.triangular_solve(low, c, left_side=False, lower=True, transpose_a=True,
                               conjugate_a=_cx(low))
        w, y = _la.eigh(c)
        v = D.triangular_solve(low, y, left_side=True, lower=True, transpose_a=True,
                               conjugate_a=_cx(low))
    return w if eigvals_only else (w, v)


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: Any = None, tol: Any = None) -> Any:
    """Eigenvalues (and vectors) of the symmetric tridiagonal matrix with diagonal ``d`` and
    off-diagonal ``e``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> [round(v, 6) for v in linalg.eigh_tridiagonal(fnp.array([2.0, 2.0]),
    ...                                              fnp.array([1.0]), eigvals_only=True).tolist()]
    [1.0, 3.0]
    """
    if select != "a":
        raise ValueError("eigh_tridiagonal: only select='a' (all eigenvalues) is supported")
    d, e = promote_inexact(d, e)
    n = get_aval(d).shape[-1]
    if get_aval(e).shape[-1] != n - 1:
        raise ShapeError(f"eigh_tridiagonal: e needs {n - 1} entries for {n} diagonal "
                         f"entries, got {get_aval(e).shape[-1]}")
    dt = get_aval(d).dtype
    m = expand_dims(d, -1) * eye(n, dtype=dt)
    full = _pad_tri(m, e, n) if n > 1 else m
    w, v = _la.eigh(full)
    return w if eigvals_only else (w, v)


def _pad_tri(m: Any, e: Any, n: int) -> Any:
    """``m`` (diagonal, plus the superdiagonal rows) completed into the full symmetric
    tridiagonal matrix."""
    dt = get_aval(m).dtype
    d = m * eye(n, dtype=dt)
    sup = matmul(expand_dims(e, -1) * eye(n - 1, dtype=dt), eye(n - 1, n, 1, dtype=dt))
    sup = concatenate([sup, zeros((*get_aval(sup).shape[:-2], 1, n), dt)], -2)
    return d + sup + _mT(sup)


# ------------------------------------------------------- solves and functions


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of each square matrix.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.inv(fnp.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return _la.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> round(float(linalg.det(fnp.array([[1.0, 2.0], [3.0, 4.0]]))), 4)
    -2.0
    """
    return _la.det(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """The solution of ``a x = b`` (``assume_a``: "gen", "sym", "her" or "pos").

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.solve(fnp.array([[2.0, 0.0], [0.0, 4.0]]), fnp.array([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    if assume_a not in ("gen", "sym", "her", "pos", "general", "symmetric", "hermitian",
                        "positive definite"):
        raise ValueError(f"solve: unknown assume_a={assume_a!r}")
    if assume_a in ("pos", "positive definite"):
        a = _square("solve", a)
        full = a if lower else _H(a)
        return cho_solve((_la.cholesky(full, symmetrize_input=False), True), b)
    (a, b) = promote_inexact(a, b)
    vec = get_aval(b).ndim == get_aval(a).ndim - 1
    x = _la.solve(a, expand_dims(b, -1) if vec else b)
    return x[..., 0] if vec else x


_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:  # noqa: N803
    """The matrix exponential (Pade-13 with scaling and squaring, Higham 2005).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> round(float(linalg.expm(fnp.array([[0.0, 1.0], [0.0, 0.0]]))[0, 1]), 6)
    1.0
    """
    a = _square("expm", A)
    dt = get_aval(a).dtype
    n = get_aval(a).shape[-1]
    ident = broadcast_to(eye(n, dtype=dt), get_aval(a).shape)
    # The number of squarings: a piecewise constant of a (no derivative flows through it).
    norm1 = max(sum(absolute(stop_gradient(a)), axis=-2), axis=-1)
    s = where(norm1 > _THETA13, ceil(log2(norm1 / _THETA13)), 0.0)
    s = where(s > max_squarings, float(max_squarings), s)
    s = expand_dims(expand_dims(s, -1), -1)
    x = a / (2.0 ** s)
    b = _PADE13
    x2 = matmul(x, x)
    x4 = matmul(x2, x2)
    x6 = matmul(x4, x2)
    u = matmul(x, matmul(x6, b[13] * x6 + b[11] * x4 + b[9] * x2)
               + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * ident)
    v = (matmul(x6, b[12] * x6 + b[10] * x4 + b[8] * x2)
         + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * ident)
    r = _la.solve(v - u, v + u)
    for i in range(max_squarings):
        r = where(s > i, matmul(r, r), r)
    return r


def expm_frechet(A: Any, E: Any, *, method: str | None = None,  # noqa: N803
                 compute_expm: bool = True) -> Any:
    """The Frechet derivative ``L(A, E)`` of expm at ``A`` in direction ``E`` (and
    ``expm(A)`` first, with ``compute_expm``), from the exponential of [[A, E], [0, A]].

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> e, l = linalg.expm_frechet(fnp.zeros((1, 1)), fnp.ones((1, 1)))
    >>> float(l[0, 0])
    1.0
    """
    a, e = promote_inexact(A, E)
    a, e = _square("expm_frechet", a), _square("expm_frechet", e)
    if get_aval(a).shape != get_aval(e).shape:
        raise ShapeError(f"expm_frechet: A and E must have one shape, got "
                         f"{get_aval(a).shape} and {get_aval(e).shape}")
    n = get_aval(a).shape[-1]
    top = concatenate([a, e], -1)
    bottom = concatenate([zeros(get_aval(a).shape, get_aval(a).dtype), a], -1)
    big = expm(concatenate([top, bottom], -2))
    ea, lae = big[..., :n, :n], big[..., :n, n:]
    return (ea, lae) if compute_expm else lae


def polar(a: Any, side: str = "right", *, method: str = "svd", eps: Any = None,
          max_iterations: Any = None) -> tuple[Any, Any]:
    """``(u, p)``: ``a = u @ p`` (``side="right"``) or ``p @ u`` with ``u`` orthonormal and
    ``p`` symmetric positive semidefinite, from the SVD.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> u, p = linalg.polar(fnp.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> u.tolist(), p.tolist()
    ([[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]])
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    (a,) = promote_inexact(a)
    uu, s, vh = _la.svd(a, full_matrices=False)
    u = matmul(uu, vh)
    if side == "right":
        p = matmul(_H(vh) * expand_dims(s, -2), vh)
    else:
        p = matmul(uu * expand_dims(s, -2), _H(uu))
    return u, p


def solve_sylvester(a: Any, b: Any, c: Any, *, method: str = "kron", tol: float = 1e-8
                    ) -> Any:
    """``x`` with ``a x + x b = c``, from the Kronecker form (n*m unknowns: for small
    matrices).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.solve_sylvester(fnp.eye(2), fnp.eye(2), 2 * fnp.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    a, b, c = promote_inexact(a, b, c)
    n, m = get_aval(c).shape[-2:]
    if get_aval(a).shape != (n, n) or get_aval(b).shape != (m, m):
        raise ShapeError(f"solve_sylvester: a {get_aval(a).shape} and b {get_aval(b).shape} "
                         f"must be square and match c {get_aval(c).shape}")
    dt = get_aval(a).dtype
    # vec by rows: (a kron I_m + I_n kron b^T) vec(x) = vec(c).
    from funcgrad.numpy._linalg import kron  # noqa: PLC0415

    big = kron(a, eye(m, dtype=dt)) + kron(eye(n, dtype=dt), _mT(b))
    return reshape(_la.solve(big, ravel(c)), (n, m))


# ---------------------------------------------------------- special matrices


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the given matrices (scalars and vectors as rows).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.block_diag(fnp.ones((1, 1)), 2 * fnp.ones((1, 2))).tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 2.0]]
    """
    if not arrs:
        return zeros((1, 0))
    mats = [asarray(x) for x in arrs]
    mats = promote_inexact(*mats) if not all(
        dtypes.kind(get_aval(x).dtype) in "iub" for x in mats) else mats
    mats = [reshape(x, (1, -1)) if get_aval(x).ndim < 2 else x for x in mats]
    for x in mats:
        if get_aval(x).ndim != 2:
            raise ShapeError(f"block_diag takes arrays of rank <= 2, got shape "
                             f"{get_aval(x).shape}")
    total = sum_cols = 0
    for x in mats:
        total += get_aval(x).shape[1]
    rows = []
    for x in mats:
        r, c = get_aval(x).shape
        dt = get_aval(x).dtype
        left = zeros((r, sum_cols), dt)
        right = zeros((r, total - sum_cols - c), dt)
        rows.append(concatenate([left, x, right], 1))
        sum_cols += c
    return concatenate(rows, 0)


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``c`` by default,
    its first entry taken from ``c``).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.toeplitz(fnp.array([1.0, 2.0]), fnp.array([1.0, 3.0, 4.0])).tolist()
    [[1.0, 3.0, 4.0], [2.0, 1.0, 3.0]]
    """
    c = ravel(asarray(c))
    r = c if r is None else ravel(asarray(r))
    c, r = promote_inexact(c, r) if dtypes.kind(get_aval(c).dtype) == "f" or dtypes.kind(
        get_aval(r).dtype) == "f" else (c, r)
    n, m = get_aval(c).shape[0], get_aval(r).shape[0]
    vals = concatenate([flip(c, 0), r[1:]], 0)   # index n - 1 - i + j
    idx = (n - 1) - np.arange(n)[:, None] + np.arange(m)[None, :]
    return vals[idx]


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r`` (zeros by default).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.hankel(fnp.array([1.0, 2.0])).tolist()
    [[1.0, 2.0], [2.0, 0.0]]
    """
    c = ravel(asarray(c))
    r = zeros(get_aval(c).shape, get_aval(c).dtype) if r is None else ravel(asarray(r))
    n, m = get_aval(c).shape[0], get_aval(r).shape[0]
    c, r = promote_inexact(c, r) if dtypes.kind(get_aval(c).dtype) == "f" or dtypes.kind(
        get_aval(r).dtype) == "f" else (c, r)
    vals = concatenate([c, r[1:]], 0)
    idx = np.arange(n)[:, None] + np.arange(m)[None, :]
    return vals[idx]


def circulant(c: Any) -> Any:
    """The circulant matrix with first column ``c``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.circulant(fnp.array([1.0, 2.0, 3.0])).tolist()
    [[1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [3.0, 2.0, 1.0]]
    """
    c = asarray(c)
    n = get_aval(c).shape[-1]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
    return c[..., idx]


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a`` (highest first).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.companion(fnp.array([1.0, -3.0, 2.0])).tolist()
    [[3.0, -2.0], [1.0, 0.0]]
    """
    (a,) = promote_inexact(a)
    n = get_aval(a).shape[-1]
    if n < 2:
        raise ShapeError("companion needs at least two coefficients")
    first = -a[..., 1:] / a[..., 0:1]
    dt = get_aval(a).dtype
    rest = broadcast_to(eye(n - 2, n - 1, dtype=dt), (*get_aval(a).shape[:-1], n - 2, n - 1))
    return concatenate([expand_dims(first, -2), rest], -2)


def fiedler(a: Any) -> Any:
    """The symmetric matrix ``|a_i - a_j|``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.fiedler(fnp.array([1.0, 4.0])).tolist()
    [[0.0, 3.0], [3.0, 0.0]]
    """
    a = asarray(a)
    return absolute(a[..., :, None] - a[..., None, :])


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a`` (highest first).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.fiedler_companion(fnp.array([1.0, -3.0, 2.0])).tolist()
    [[3.0, -2.0], [1.0, 0.0]]
    """
    (a,) = promote_inexact(a)
    n = get_aval(a).shape[-1]
    if get_aval(a).ndim != 1 or n < 2:
        raise ShapeError("fiedler_companion needs a 1-D array of at least two coefficients")
    a = a / a[0]
    k = n - 1
    # SciPy's layout, with entries as indices into [0, a[1], ..., a[k], 1] and signs.
    pos = np.zeros((k, k), np.int64)
    sgn = np.ones((k, k))
    pos[range(3, k, 2), range(1, k - 2, 2)] = k + 1
    pos[range(2, k, 2), range(1, k - 1, 2)] = range(3, k + 1, 2)
    sgn[range(2, k, 2), range(1, k - 1, 2)] = -1.0
    pos[range(0, k - 2, 2), range(2, k, 2)] = k + 1
    pos[range(0, k - 1, 2), range(1, k, 2)] = range(2, k + 1, 2)
    sgn[range(0, k - 1, 2), range(1, k, 2)] = -1.0
    pos[0, 0], sgn[0, 0] = 1, -1.0
    if k > 1:
        pos[1, 0] = k + 1
    dt = get_aval(a).dtype
    coeffs = concatenate([zeros((1,), dt), a[1:], asarray([1.0]).astype(dt)], 0)
    return coeffs[pos] * sgn.astype(dt)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``len(v) == n``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.convolution_matrix(fnp.array([1.0, 2.0]), 2).tolist()
    [[1.0, 0.0], [2.0, 1.0], [0.0, 2.0]]
    """
    a = ravel(asarray(a))
    m = get_aval(a).shape[0]
    if n <= 0 or m == 0:
        raise ValueError("convolution_matrix needs n > 0 and a non-empty a")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolution_matrix: mode must be 'full', 'same' or 'valid', got "
                         f"{mode!r}")
    dt = get_aval(a).dtype
    padded = concatenate([zeros((n - 1,), dt), a, zeros((n - 1,), dt)], 0)
    rows = m + n - 1
    idx = np.arange(rows)[:, None] - np.arange(n)[None, :] + (n - 1)
    full = padded[idx]
    if mode == "full":
        return full
    if mode == "valid":
        lo, size = min(m, n) - 1, builtins.max(m, n) - min(m, n) + 1
    else:
        size = builtins.max(m, n)
        lo = (rows - size) // 2
    return full[lo:lo + size]


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix of fecundities ``f`` and survival rates ``s``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.leslie(fnp.array([1.0, 2.0]), fnp.array([0.5])).tolist()
    [[1.0, 2.0], [0.5, 0.0]]
    """
    f, s = promote_inexact(f, s)
    n = get_aval(f).shape[-1]
    if get_aval(s).shape[-1] != n - 1:
        raise ShapeError(f"leslie: s needs {n - 1} entries for {n} fecundities")
    dt = get_aval(f).dtype
    sub = s[..., :, None] * eye(n - 1, n, dtype=dt)
    return concatenate([expand_dims(f, -2), sub], -2)


def _host_matrix(values: np.ndarray, dtype: Any = None) -> Any:
    dt = dtypes.default_float() if dtype is None else dtype
    return asarray(np.asarray(values, dtype=np.float64)).astype(dt)


def hilbert(n: int) -> Any:
    """The Hilbert matrix ``1 / (i + j + 1)``.

    >>> from funcgrad.scipy import linalg
    >>> linalg.hilbert(2).tolist()
    [[1.0, 0.5], [0.5, 0.3333333432674408]]
    """
    return _host_matrix(_host.hilbert(n))


def invhilbert(n: int) -> Any:
    """The inverse of the Hilbert matrix (in floating point).

    >>> from funcgrad.scipy import linalg
    >>> linalg.invhilbert(2).tolist()
    [[4.0, -6.0], [-6.0, 12.0]]
    """
    return _host_matrix(_host.invhilbert(n))


def pascal(n: int, kind: str | None = None) -> Any:
    """The Pascal matrix of binomial coefficients ("symmetric", "lower" or "upper").

    >>> from funcgrad.scipy import linalg
    >>> linalg.pascal(3).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [1.0, 3.0, 6.0]]
    """
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"pascal: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}")
    return _host_matrix(_host.pascal(n, kind=kind, exact=False))


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of :func:`pascal`.

    >>> from funcgrad.scipy import linalg
    >>> linalg.invpascal(2).tolist()
    [[2.0, -1.0], [-1.0, 1.0]]
    """
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"invpascal: kind must be 'symmetric', 'lower' or 'upper', got "
                         f"{kind!r}")
    return _host_matrix(_host.invpascal(n, kind=kind, exact=False))


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of orthonormal contrasts (with the 1/sqrt(n) row if ``full``).

    >>> from funcgrad.scipy import linalg
    >>> linalg.helmert(2).shape
    (1, 2)
    """
    if n < 1:
        raise ValueError(f"helmert needs n >= 1, got {n}")
    return _host_matrix(_host.helmert(n, full=full))


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Sylvester Hadamard matrix of order ``n`` (a power of 2).

    >>> from funcgrad.scipy import linalg
    >>> linalg.hadamard(2).tolist()
    [[1, 1], [1, -1]]
    """
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"hadamard needs n a positive power of 2, got {n}")
    dt = dtypes.default_int() if dtype is int else dtypes.canonicalize_dtype(dtype)
    return asarray(_host.hadamard(n)).astype(dt)
