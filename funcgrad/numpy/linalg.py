"""``funcgrad.numpy.linalg``: ``jax.numpy.linalg``'s functions, built on the decomposition
primitives (``funcgrad.primitives.decompositions``) and differentiable like JAX's: ``det``
and ``slogdet`` through LU with the rule ``d log|det a| = tr(a^-1 da)``, ``solve`` with the
derivative ``solve(a, db - da x)`` (a solve, never an inverse), ``pinv`` with Golub and
Pereyra's rule.

>>> import funcgrad.numpy as fnp
>>> float(fnp.linalg.norm(fnp.array([3.0, 4.0])))
5.0
>>> fnp.linalg.solve(fnp.array([[2.0, 0.0], [0.0, 4.0]]), fnp.array([2.0, 2.0])).tolist()
[1.0, 0.5]
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy._core import (
    broadcast_shapes,
    canonical_axes,
    canonical_axis,
    check_arraylike,
    check_arraylike_seq,
    promote_inexact,
)
from funcgrad.numpy._creation import asarray, eye, zeros
from funcgrad.numpy._linalg import diagonal as _diagonal
from funcgrad.numpy._linalg import matmul as _matmul
from funcgrad.numpy._linalg import outer as _outer
from funcgrad.numpy._linalg import tensordot as _tensordot
from funcgrad.numpy._linalg import trace as _trace
from funcgrad.numpy._reductions import _prepare, any, max, min, prod, sum  # noqa: A004
from funcgrad.numpy._shape import (
    broadcast_to,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    stack,
    swapaxes,
)
from funcgrad.numpy._ufuncs import (
    absolute,
    conj,
    isnan,
    log,
    power,
    real,
    sign,
    sqrt,
    square,
    where,
)
from funcgrad.primitives import decompositions as D
from funcgrad.primitives.elementwise import power_by_squaring
from funcgrad.primitives.indexing import gather
from funcgrad.primitives.structural import squeeze
from funcgrad.transforms.custom import custom_jvp


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any  # noqa: N815 - JAX's field names
    R: Any  # noqa: N815


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    U: Any  # noqa: N815
    S: Any  # noqa: N815
    Vh: Any  # noqa: N815


# ------------------------------------------------------------------ helpers


# JAX's texts for arguments that are not square matrices.
_JAX_SQUARE_TEXT = {
    "inv": "Argument to inv must have shape [..., n, n], got {}.",
    "det": "Argument to _det() must have shape [..., n, n], got {}",
    "slogdet": "Argument to slogdet() must have shape [..., n, n], got {}",
}


def _matrix(name: str, a: Any, square: bool = False) -> Any:
    """``a`` as an inexact array of matrices (rank >= 2), square if asked."""
    (a,) = promote_inexact(a)
    shape = get_aval(a).shape
    if square and name in _JAX_SQUARE_TEXT and (len(shape) < 2 or shape[-1] != shape[-2]):
        raise ShapeError(_JAX_SQUARE_TEXT[name].format(shape))
    if len(shape) < 2:
        if name == "cond":
            raise ShapeError(f"jnp.linalg.cond: input array must be at least 2D; got "
                             f"arr.shape={shape}")
        raise ShapeError(f"{name} needs an array of matrices (rank >= 2), got shape "
                         f"{shape}")
    if square and shape[-1] != shape[-2]:
        raise ShapeError(f"{name} needs square matrices, got shape {shape}")
    return a


def _lapack_dtype(name: str, a: Any) -> None:
    """JAX refuses half precision wherever it calls a LAPACK factorization (lu, cholesky):
    the engine's primitives compute there, so the refusal is this face's."""
    D._not_half(name, get_aval(a))


def _mT(x: Any) -> Any:  # noqa: N802
    return swapaxes(x, -1, -2)


def _is_complex(x: Any) -> bool:
    return dtypes.kind(get_aval(x).dtype) == "c"


def _H(x: Any) -> Any:  # noqa: N802 - the conjugate transpose, as JAX's _H
    return conj(_mT(x)) if _is_complex(x) else _mT(x)


def _symmetrize(x: Any) -> Any:
    """The Hermitian (real: symmetric) part ``(x + x^H) / 2``, as JAX's symmetrize."""
    return (x + _H(x)) / 2


def _batch_eye(like: Any) -> Any:
    shape = get_aval(like).shape
    return broadcast_to(eye(shape[-1], dtype=get_aval(like).dtype), shape)


def _permute_rows(perm: Any, b: Any) -> Any:
    """``b[..., perm, :]`` for a batch of permutations: one gather of rows of the flattened
    batch (a scatter of distinct rows when transposed), 4x cheaper than the product with
    the one-hot permutation matrix at n = 256; below n = 64 that product (one batched
    BLAS call each way) measured faster."""
    shape = get_aval(b).shape
    n, k = shape[-2:]
    if n < 64:
        onehot = expand_dims(perm, -1) == D.place_like(np.arange(n, dtype=np.int32), perm)
        return _matmul(onehot.astype(get_aval(b).dtype), b)
    count = math.prod(shape[:-2])
    offsets = np.arange(count, dtype=np.int32).reshape((*shape[:-2], 1)) * n
    rows = reshape(perm + D.place_like(offsets, perm), (count * n, 1))
    return reshape(gather(reshape(b, (count * n, k)), rows, mode="clip"), shape)


def _lu_solve_raw(lu_: Any, perm: Any, b: Any) -> Any:
    """``a^-1 b`` from ``a``'s LU factors (b: (..., n, k), batch axes equal)."""
    y = D.triangular_solve(lu_, _permute_rows(perm, b), left_side=True, lower=True,
                           unit_diagonal=True)
    return D.triangular_solve(lu_, y, left_side=True, lower=False)


def _broadcast_batch(a: Any, b: Any) -> tuple[Any, Any]:
    sa, sb = get_aval(a).shape, get_aval(b).shape
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    return broadcast_to(a, (*batch, *sa[-2:])), broadcast_to(b, (*batch, *sb[-2:]))


@custom_jvp
def _solve(a: Any, b: Any) -> Any:
    lu_, _, perm = D.lu(a)
    return _lu_solve_raw(lu_, perm, b)


@_solve.defjvp
def _solve_jvp(primals: Any, tangents: Any) -> Any:
    a, b = primals
    da, db = tangents
    lu_, _, perm = D.lu(a)
    x = _lu_solve_raw(lu_, perm, b)
    # d(a^-1 b) = a^-1 (db - da x): triangular solves with the same factors, linear in the
    # tangents, so reverse mode transposes them into solves with a^T (JAX's
    # custom_linear_solve); not a call of _solve, whose transposition would recurse.
    return x, _lu_solve_raw(lu_, perm, db - _matmul(da, x))


# ------------------------------------------------------------ decompositions


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor (lower, or upper with ``upper=True``); NaN where ``a`` is not
    positive definite.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.cholesky(fnp.array([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    check_arraylike("jnp.linalg.cholesky", a)
    a = _matrix("cholesky", a, square=True)
    _lapack_dtype("cholesky", a)
    low = D.cholesky(_symmetrize(a) if symmetrize_input else a)
    return _H(low) if upper else low


def qr(a: Any, mode: str = "reduced") -> Any:
    """``QRResult(Q, R)`` (``mode`` "reduced" or "complete"), or ``R`` alone (``mode="r"``).

    >>> import funcgrad.numpy as fnp
    >>> q, r = fnp.linalg.qr(fnp.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    """
    check_arraylike("jnp.linalg.qr", a)
    a = _matrix("qr", a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"qr mode={mode!r}: use 'reduced', 'complete' or 'r'")
    if mode == "raw":
        raise ValueError("qr mode='raw' (LAPACK's Householder reflectors) is not supported "
                         "by funcgrad; use 'reduced', 'complete' or 'r'")
    q, r = D.qr(a, mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False, subset_by_index: Any = None) -> Any:
    """``SVDResult(U, S, Vh)`` with ``a = U @ diag(S) @ Vh`` (S descending), or ``S``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.svd(fnp.diag(fnp.array([1.0, 3.0])), compute_uv=False).tolist()
    [3.0, 1.0]
    """
    check_arraylike("jnp.linalg.svd", a)
    a = _matrix("svd", a)
    if subset_by_index is not None:
        k = builtins.min(get_aval(a).shape[-2:])
        if tuple(subset_by_index) != (0, k):
            raise ValueError("svd(subset_by_index=...) is not supported by funcgrad; slice "
                             "the result instead")
    if hermitian:
        a = _symmetrize(a)
    out = D.svd(a, full_matrices, compute_uv)
    if not compute_uv:
        return out[0]
    s, u, vt = out
    return SVDResult(u, s, vt)


def svdvals(x: Any, /) -> Any:
    """The singular values, descending.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.svdvals(fnp.array([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    check_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:  # noqa: N803
    """``EighResult(eigenvalues, eigenvectors)`` of symmetric matrices (ascending).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigh(fnp.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    check_arraylike("jnp.linalg.eigh", a)
    a = _matrix("eigh", a, square=True)
    uplo = "L" if UPLO is None else UPLO
    if uplo not in ("L", "U"):
        raise ValueError(f"UPLO must be 'L' or 'U', got {UPLO!r}")
    v, w = D.eigh(_symmetrize(a) if symmetrize_input else a, uplo == "L")
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:  # noqa: N803
    """The eigenvalues of symmetric matrices, ascending.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigvalsh(fnp.array([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    check_arraylike("jnp.linalg.eigvalsh", a)
    return eigh(a, UPLO, symmetrize_input).eigenvalues


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def _general_square(name: str, a: Any) -> Any:
    a = asarray(a)
    (a,) = promote_inexact(a)
    aval = get_aval(a)
    if aval.ndim < 2:
        raise ShapeError(f"Input 0 to eig must have rank at least 2, but got "
                         f"shape={aval.shape}")
    if aval.shape[-1] != aval.shape[-2]:
        raise ShapeError(f"The input to eig must be a square matrix. Got shape {aval.shape}.")
    return a


def eig(a: Any) -> EigResult:
    """``EigResult(eigenvalues, eigenvectors)`` of general square matrices (complex, in
    LAPACK's order). Only the eigenvalues are differentiable, as in JAX.

    >>> import funcgrad.numpy as fnp
    >>> sorted(fnp.linalg.eig(fnp.array([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.real.tolist())
    [1.0, 2.0]
    """
    check_arraylike("jnp.linalg.eig", a)
    w, v = D.eig(_general_square("eig", a))
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """The (complex) eigenvalues of general square matrices, differentiable.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.eigvals(fnp.array([[0.0, -1.0], [1.0, 0.0]])).imag.tolist()
    [1.0, -1.0]
    """
    check_arraylike("jnp.linalg.eigvals", a)
    return D.eig(_general_square("eigvals", a), compute_right_eigenvectors=False)[0]


# ------------------------------------------------------- solves and inverses


def solve(a: Any, b: Any) -> Any:
    """The solution ``x`` of ``a @ x = b`` (``b`` a vector when 1-D, else (..., n, k)
    with batch axes broadcast), through LU with partial pivoting.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.solve(fnp.array([[1.0, 1.0], [0.0, 2.0]]), fnp.array([3.0, 2.0])).tolist()
    [2.0, 1.0]
    """
    check_arraylike("jnp.linalg.solve", a, b)
    a, b = promote_inexact(a, b)
    if get_aval(a).ndim < 2:
        raise ShapeError("left hand array must be at least two dimensional; got "
                         f"a.shape={get_aval(a).shape}")
    # JAX's messages: its solve is np.vectorize'd with these signatures.
    sig = "on vectorized function with excluded=frozenset() and signature="
    ashape, bshape = get_aval(a).shape, get_aval(b).shape
    if len(bshape) > 1 and len(ashape) == len(bshape) + 1 and ashape[-1] == bshape[-1] and \
            ashape[-1] != bshape[-2]:
        raise ShapeError(f"Invalid shapes for solve: {ashape}, {bshape}. Prior to JAX v0.5.0, "
                         "this would have been treated as a batched 1-dimensional solve. To "
                         "recover this behavior, use solve(a, b[..., None]).squeeze(-1).")
    if ashape[-1] != ashape[-2]:
        form = "(m,m),(m)->(m)" if len(bshape) == 1 else "(m,m),(m,n)->(m,n)"
        raise ShapeError(f"inconsistent size for core dimension 'm': {ashape[-1]} vs "
                         f"{ashape[-2]} {sig}{form!r}")
    a = _matrix("solve", a, square=True)
    n = get_aval(a).shape[-1]
    if len(bshape) == 0:
        raise ShapeError("input with shape () does not have enough dimensions for all core "
                         f"dimensions ('m', 'n') {sig}'(m,m),(m,n)->(m,n)'")
    if len(bshape) == 1:
        if bshape[0] != n:
            raise ShapeError(f"inconsistent size for core dimension 'm': {bshape[0]} vs {n} "
                             f"{sig}'(m,m),(m)->(m)'")
        _lapack_dtype("lu", a)
        bb = broadcast_to(reshape(b, (n, 1)), (*get_aval(a).shape[:-2], n, 1))
        return squeeze(_solve(a, bb), (len(get_aval(a).shape) - 1,))
    if bshape[-2] != n:
        raise ShapeError(f"inconsistent size for core dimension 'm': {bshape[-2]} vs {n} "
                         f"{sig}'(m,m),(m,n)->(m,n)'")
    _lapack_dtype("lu", a)
    if len(bshape) > 2:
        try:
            np.broadcast_shapes(ashape[:-2], bshape[:-2])
        except ValueError:
            raise ShapeError("Incompatible shapes for broadcasting: shapes="
                             f"{[ashape[:-2], bshape[:-2]]}") from None
    a, b = _broadcast_batch(a, b)
    return _solve(a, b)


def inv(a: Any) -> Any:
    """The inverse of each square matrix (a solve against the identity).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.inv(fnp.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    check_arraylike("jnp.linalg.inv", a)
    a = _matrix("inv", a, square=True)
    _lapack_dtype("lu", a)
    return _solve(a, _batch_eye(a))


def _slogdet_from_lu(lu_: Any, pivots: Any) -> tuple[Any, Any]:
    n = get_aval(lu_).shape[-1]
    diag = _diagonal(lu_, 0, -2, -1)
    is_zero = any(diag == 0, axis=-1)
    swaps = sum(pivots != D.place_like(np.arange(n, dtype=np.int32), pivots), axis=-1)
    dt = get_aval(lu_).dtype
    mag = absolute(diag)
    if _is_complex(lu_):
        # the sign is a unit complex number: the product of the pivots' phases (JAX's)
        parity = swaps % 2
        phase = prod(diag / where(mag == 0, np.ones((), mag.dtype), mag).astype(dt), axis=-1)
        sgn = where(is_zero, np.zeros((), dt), phase * (1 - 2 * parity).astype(dt))
    else:
        negs = sum(diag < 0, axis=-1)
        parity = (swaps + negs) % 2
        sgn = where(is_zero, np.zeros((), dt), (1 - 2 * parity).astype(dt))
    rdt = get_aval(mag).dtype
    logdet = where(is_zero, np.array(-np.inf, rdt), sum(log(mag), axis=-1))
    return sgn, logdet


def _slogdet_tangents(sgn: Any, ans_dot: Any) -> tuple[Any, Any]:
    """(sign_dot, logabsdet_dot) from ``ans_dot = tr(a^-1 da)``: the sign of a complex
    determinant turns by the imaginary part (JAX's rule); a real one is constant."""
    if _is_complex(ans_dot):
        re = real(ans_dot)
        return (ans_dot - re.astype(get_aval(ans_dot).dtype)) * sgn, re
    return zeros(get_aval(sgn).shape, get_aval(sgn).dtype), ans_dot


@custom_jvp
def _slogdet(a: Any) -> tuple[Any, Any]:
    lu_, pivots, _ = D.lu(a)
    return _slogdet_from_lu(lu_, pivots)


@_slogdet.defjvp
def _slogdet_jvp(primals: Any, tangents: Any) -> Any:
    (a,), (da,) = primals, tangents
    # One LU serves the value and the tangent trace(a^-1 da); reverse mode transposes the
    # (linear) triangular solves against the same factors instead of factoring again.
    lu_, pivots, perm = D.lu(a)
    sgn, logdet = _slogdet_from_lu(lu_, pivots)
    return (sgn, logdet), _slogdet_tangents(sgn, _trace(_lu_solve_raw(lu_, perm, da), 0,
                                                        -2, -1))


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """``SlogdetResult(sign, logabsdet)`` of the determinant, through LU.

    >>> import funcgrad.numpy as fnp
    >>> s, l = fnp.linalg.slogdet(fnp.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> float(s), round(float(l), 6)
    (-1.0, 1.791759)
    """
    check_arraylike("jnp.linalg.slogdet", a)
    a = _matrix("slogdet", a, square=True)
    if method not in (None, "lu", "qr"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`), and 'qr'.")
    if method == "qr":
        # As JAX's: the product over R's diagonal (its rounding, and its derivative), times
        # det(Q) = +-1 (LAPACK's Householder Q; its LU sign is exact, Q being orthogonal).
        _lapack_dtype("qr", a)
        if get_aval(a).dtype.kind == "c":
            raise NotImplementedError("slogdet method='qr' not implemented for complex "
                                      "inputs")  # (JAX's refusal)
        q, r = qr(a)
        diag = _diagonal(r, axis1=-2, axis2=-1)
        logdet = sum(log(absolute(diag)), axis=-1)
        return SlogdetResult(prod(sign(diag), axis=-1) * slogdet(q).sign, logdet)
    if get_aval(a).shape[-1] in (1, 2):
        sgn, logdet = _slogdet_small(a)
    else:
        _lapack_dtype("lu", a)
        sgn, logdet = _slogdet(a)
    return SlogdetResult(sgn, logdet)


def _det_small(a: Any) -> Any:
    # JAX's closed forms for 2x2 and 3x3 (no LU: they work in half precision, and their
    # derivative, plain autodiff, stays finite at singular matrices).
    if get_aval(a).shape[-1] == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2]
            + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
            + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1]
            - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
            - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1]
            - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _slogdet_small(a: Any) -> tuple[Any, Any]:
    # JAX's closed forms for 1x1 and 2x2 (no LU).
    d = a[..., 0, 0] if get_aval(a).shape[-1] == 1 else _det_small(a)
    return _unit(d), log(absolute(d))


def _unit(d: Any) -> Any:
    """``sign(d)``: ``d / |d|`` for complex ``d`` (0 at 0)."""
    if not _is_complex(d):
        return sign(d)
    mag = absolute(d)
    return where(mag == 0, np.zeros((), get_aval(d).dtype),
                 d / where(mag == 0, np.ones((), get_aval(mag).dtype), mag).astype(
                     get_aval(d).dtype))


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (g,) = primals, tangents
    sgn, ans = _slogdet_small(x)
    if get_aval(x).shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        ans_dot = ((g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
                    - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0])
                   / _det_small(x))
    return (sgn, ans), _slogdet_tangents(sgn, ans_dot)


@custom_jvp
def _det(a: Any) -> Any:
    sgn, logdet = _slogdet(a)
    lu_, _, _ = D.lu(a)
    # The product of the pivots keeps exact values for small integer matrices, where
    # exp(logdet) would round.
    return sgn * absolute(prod(_diagonal(lu_, 0, -2, -1), axis=-1))


@_det.defjvp
def _det_jvp(primals: Any, tangents: Any) -> Any:
    (a,), (da,) = primals, tangents
    d = _det(a)
    return d, d * _trace(solve(a, da), 0, -2, -1)


def det(a: Any) -> Any:
    """The determinant, through LU.

    >>> import funcgrad.numpy as fnp
    >>> round(float(fnp.linalg.det(fnp.array([[1.0, 2.0], [3.0, 4.0]]))), 4)
    -2.0
    """
    check_arraylike("jnp.linalg.det", a)
    a = _matrix("det", a, square=True)
    n = get_aval(a).shape[-1]
    if n in (2, 3):
        return _det_small(a)
    if n > 3:
        _lapack_dtype("lu", a)
    return _det(a)


def _pinv_impl(a: Any, rtol: Any) -> Any:
    m, n = get_aval(a).shape[-2:]
    dt = get_aval(a).dtype
    if rtol is None:
        rtol = 10.0 * builtins.max(m, n) * float(np.finfo(dt).eps)
    u, s, vt = svd(a, full_matrices=False)
    sdt = get_aval(s).dtype
    cutoff = expand_dims(asarray(rtol, dtype=sdt), -1) * s[..., 0:1]
    s = where(s > cutoff, s, np.array(np.inf, sdt))
    return _matmul(_H(vt), _H(u) / expand_dims(s, -1).astype(dt))


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse (singular values at most ``rtol`` times the
    largest count as zero), with Golub and Pereyra's derivative as JAX; ``rcond`` is
    JAX's backward-compatible alias of ``rtol``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.pinv(fnp.array([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    check_arraylike("jnp.linalg.pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    a = _matrix("pinv", a)
    if hermitian:
        a = _symmetrize(a)
    m, n = get_aval(a).shape[-2:]
    if m == 0 or n == 0:
        return zeros((*get_aval(a).shape[:-2], n, m), get_aval(a).dtype)

    @custom_jvp
    def p_of(x: Any) -> Any:
        return _pinv_impl(x, rtol)

    @p_of.defjvp
    def p_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (dx,) = primals, tangents
        p = p_of(x)
        if m >= n:
            s = _matmul(_matmul(p, _H(p)), _H(dx))
            t = _matmul(_matmul(_H(dx), _H(p)), p)
            dp = (-_matmul(_matmul(p, dx), p) + s - _matmul(_matmul(s, x), p) + t
                  - _matmul(_matmul(p, x), t))
        else:
            s = _matmul(p, _matmul(_H(p), _H(dx)))
            t = _matmul(_H(dx), _matmul(_H(p), p))
            dp = (-_matmul(p, _matmul(dx, p)) + s - _matmul(s, _matmul(x, p)) + t
                  - _matmul(p, _matmul(x, t)))
        return p, dp

    return p_of(a)


def lstsq(a: Any, b: Any, rcond: float | None = None, *,
          numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """``(x, residuals, rank, s)``: the least-squares solution of ``a @ x = b`` through the
    SVD, as ``jax.numpy.linalg.lstsq`` (residuals always computed unless ``numpy_resid``).

    >>> import funcgrad.numpy as fnp
    >>> x, res, rank, s = fnp.linalg.lstsq(fnp.array([[1.0], [1.0]]), fnp.array([1.0, 3.0]))
    >>> round(float(x[0]), 4), int(rank)
    (2.0, 1)
    """
    check_arraylike("jnp.linalg.lstsq", a, b)
    a, b = promote_inexact(a, b)
    a = _matrix("lstsq", a)
    if get_aval(a).ndim != 2:
        raise ShapeError(f"lstsq needs a 2-D a, got shape {get_aval(a).shape}")
    b_ndim = get_aval(b).ndim
    if b_ndim not in (1, 2):
        raise ShapeError(f"lstsq needs a 1-D or 2-D b, got shape {get_aval(b).shape}")
    m, n = get_aval(a).shape
    if get_aval(b).shape[0] != m:
        raise ShapeError(f"lstsq: a has {m} rows but b has {get_aval(b).shape[0]}")
    if b_ndim == 1:
        b = reshape(b, (m, 1))
    dt = get_aval(a).dtype
    if rcond is None:
        rcond_v: Any = float(np.finfo(dt).eps) * builtins.max(n, m)
    else:
        rcond_v = where(asarray(rcond) < 0, float(np.finfo(dt).eps), rcond)
    u, s, vt = svd(a, full_matrices=False)
    sdt = get_aval(s).dtype
    mask = (s > 0) & (s >= asarray(rcond_v, dtype=sdt) * s[0])
    rank = sum(mask)
    safe = where(mask, s, np.ones((), sdt)).astype(dt)
    s_inv = expand_dims(where(mask, 1 / safe, np.zeros((), dt)), -1)
    x = _matmul(_H(vt), s_inv * _matmul(_H(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = zeros((0,), sdt)
    else:
        resid = sum(_abs2(b - _matmul(a, x)), axis=0)
    if b_ndim == 1:
        x = ravel(x)
        if not (numpy_resid and resid.shape == (0,)):
            resid = reshape(resid, (1,))
    return x, resid, rank, s


def matrix_power(a: Any, n: int) -> Any:
    """``a`` multiplied by itself ``n`` times (``n`` < 0: of its inverse), by squaring.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matrix_power(fnp.array([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    check_arraylike("jnp.linalg.matrix_power", a)
    if int(n) != n:
        raise TypeError(f"exponent must be an integer, got {n!r}")
    a = asarray(a)
    shape = get_aval(a).shape
    if len(shape) < 2:
        raise ShapeError(f"{len(shape)}-dimensional array given. Array must be at least "
                         "two-dimensional")
    if shape[-1] != shape[-2]:
        raise ShapeError("Last 2 dimensions of the array must be square")
    n = int(n)
    if n == 0:
        return broadcast_to(eye(shape[-1], dtype=get_aval(a).dtype), shape)
    if n < 0:
        a, n = inv(a), -n
    return power_by_squaring(a, n, _matmul)


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False,  # noqa: N803
                tol: Any = None) -> Any:
    """The number of singular values above ``rtol`` (default: eps * max(m, n) times the
    largest).

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(fnp.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    check_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be given")
        rtol = tol
    (M,) = promote_inexact(M)  # noqa: N806
    if get_aval(M).ndim < 2:
        return any(M != 0).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    dt = get_aval(s).dtype
    if rtol is None:
        rtol = max(s, -1) * (builtins.max(get_aval(M).shape[-2:]) * float(np.finfo(dt).eps))
    rtol = expand_dims(asarray(rtol), -1)
    return sum(s > rtol, axis=-1)


def cond(x: Any, p: Any = None) -> Any:
    """The condition number in the norm ``p`` (None or 2: ratio of extreme singular
    values); inf for a singular matrix, as JAX.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.linalg.cond(fnp.array([[1.0, 2.0], [2.0, 1.0]])))
    3.0
    """
    check_arraylike("cond", x)
    x = _matrix("cond", x)
    shape = get_aval(x).shape
    if shape[-1] == 0 or shape[-2] == 0:
        raise ShapeError(f"cond needs non-empty matrices, got shape {shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if shape[-1] != shape[-2]:
            raise ShapeError(f"cond with p={p!r} needs square matrices, got shape {shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & ~any(isnan(x), axis=(-2, -1)), np.inf, r)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` seen as a map from its last axes to its first ``ind`` axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.tensorinv(fnp.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    check_arraylike("tensorinv", a)
    a = asarray(a)
    shape = get_aval(a).shape
    if ind <= 0:
        raise ValueError(f"tensorinv needs ind > 0, got {ind}")
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise ShapeError("tensorinv is only possible when the product of the first `ind` "
                         "dimensions equals that of the remaining dimensions. got "
                         f"arr.shape={shape} with ind={ind}.")
    return reshape(inv(reshape(a, (rows, cols))), (*shape[ind:], *shape[:ind]))


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """``x`` with ``tensordot(a, x, x.ndim) == b``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.tensorsolve(2 * fnp.eye(4).reshape(2, 2, 4), fnp.ones((2, 2))).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    check_arraylike("tensorsolve", a, b)
    a, b = promote_inexact(a, b)
    if axes is not None:
        nd = get_aval(a).ndim
        ax = [canonical_axis(i, nd) for i in axes]
        a = moveaxis(a, ax, list(range(nd - len(ax), nd)))
    ashape, bshape = get_aval(a).shape, get_aval(b).shape
    out_shape = ashape[len(bshape):]
    rows, cols = math.prod(bshape), math.prod(out_shape)
    if rows != cols or ashape[:len(bshape)] != bshape:
        raise ShapeError(f"tensorsolve: a's leading axes {ashape[:len(bshape)]} must be b's "
                         f"shape {bshape}, and the rest square with them")
    return reshape(solve(reshape(a, (rows, cols)), ravel(b)), out_shape)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices (1-D ends as vectors), in the cheapest order.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.multi_dot([fnp.ones(2), fnp.eye(2), fnp.ones(2)]).tolist()
    2.0
    """
    check_arraylike_seq("jnp.linalg.multi_dot", arrays)
    arrs = [asarray(x) for x in arrays]
    if len(arrs) < 2:
        raise ValueError("multi_dot needs at least two arrays")
    first_vec = get_aval(arrs[0]).ndim == 1
    last_vec = get_aval(arrs[-1]).ndim == 1
    if first_vec:
        arrs[0] = expand_dims(arrs[0], 0)
    if last_vec:
        arrs[-1] = expand_dims(arrs[-1], -1)
    for x in arrs:
        if get_aval(x).ndim != 2:
            raise ShapeError(f"multi_dot needs 2-D arrays (1-D at the ends), got shape "
                             f"{get_aval(x).shape}")
    dims = [get_aval(arrs[0]).shape[0]] + [get_aval(x).shape[1] for x in arrs]
    order = _chain_order(dims)
    out = _chain(arrs, order, 0, len(arrs) - 1)
    if first_vec:
        out = squeeze(out, (0,))
    if last_vec:
        out = squeeze(out, (get_aval(out).ndim - 1,))
    return out


def _chain_order(dims: list[int]) -> list[list[int]]:
    """The split points of the cheapest parenthesization (the classic dynamic program)."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = -1
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _chain(arrs: list[Any], split: list[list[int]], i: int, j: int) -> Any:
    if i == j:
        return arrs[i]
    s = split[i][j]
    return _matmul(_chain(arrs, split, i, s), _chain(arrs, split, s + 1, j))


# ---------------------------------------------------- array-API style names


def matmul(x1: Any, x2: Any, /, *, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The matrix product (``funcgrad.numpy.matmul``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matmul(fnp.eye(2), fnp.ones(2)).tolist()
    [1.0, 1.0]
    """
    check_arraylike("jnp.linalg.matmul", x1, x2)
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def matrix_transpose(x: Any, /) -> Any:
    """The last two axes swapped.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.matrix_transpose(fnp.ones((2, 3, 4))).shape
    (2, 4, 3)
    """
    check_arraylike("jnp.linalg.matrix_transpose", x)
    x = asarray(x)
    if get_aval(x).ndim < 2:
        raise ShapeError(f"matrix_transpose needs rank >= 2, got shape {get_aval(x).shape}")
    return _mT(x)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.outer(fnp.ones(2), fnp.arange(3.0)).shape
    (2, 3)
    """
    check_arraylike("jnp.linalg.outer", x1, x2)
    for x in (x1, x2):
        if get_aval(asarray(x)).ndim != 1:
            raise ShapeError(f"linalg.outer needs 1-D inputs, got shape "
                             f"{get_aval(asarray(x)).shape}")
    return _outer(x1, x2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """``funcgrad.numpy.tensordot`` with the array API's keyword ``axes``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.linalg.tensordot(fnp.ones((2, 3)), fnp.ones((2, 3))))
    6.0
    """
    check_arraylike("jnp.linalg.tensordot", x1, x2)
    return _tensordot(x1, x2, axes, precision=precision,
                      preferred_element_type=preferred_element_type)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The dot product ``sum(conj(x1) * x2)`` of vectors along ``axis`` (batch axes
    broadcast).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.vecdot(fnp.ones((2, 3)), fnp.arange(3.0)).tolist()
    [3.0, 3.0]
    """
    check_arraylike("jnp.linalg.vecdot", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    n1, n2 = get_aval(x1).ndim, get_aval(x2).ndim
    a1, a2 = canonical_axis(axis, n1), canonical_axis(axis, n2)
    if get_aval(x1).shape[a1] != get_aval(x2).shape[a2]:
        raise ShapeError(f"vecdot: axis {axis} has sizes {get_aval(x1).shape[a1]} and "
                         f"{get_aval(x2).shape[a2]}")
    if dtypes.kind(get_aval(x1).dtype) == "c":
        x1 = conj(x1)  # the Array API's vecdot conjugates its first argument
    if preferred_element_type is not None:
        # The products accumulate in that type (bools then count, not any-of-and).
        x1, x2 = x1.astype(preferred_element_type), x2.astype(preferred_element_type)
    prod = moveaxis(x1, a1, -1) * moveaxis(x2, a2, -1)
    # A dot product keeps its operands' promoted type (int8 stays int8, bool is any-of-and),
    # not a sum's widened accumulator.
    return sum(prod, axis=-1, dtype=prod.dtype)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-vectors along ``axis`` (batch axes broadcast).

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.cross(fnp.array([1.0, 0.0, 0.0]), fnp.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    check_arraylike("jnp.linalg.outer", x1, x2)  # the name JAX's message gives
    x1, x2 = asarray(x1), asarray(x2)
    s1, s2 = get_aval(x1).shape, get_aval(x2).shape
    if not s1 or not s2 or s1[axis] != 3 or s2[axis] != 3:
        raise ShapeError(f"linalg.cross needs 3-vectors along axis {axis}, got shapes {s1} "
                         f"and {s2}")
    a = moveaxis(x1, canonical_axis(axis, len(s1)), -1)
    b = moveaxis(x2, canonical_axis(axis, len(s2)), -1)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, canonical_axis(axis, get_aval(out).ndim))


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonals of the matrices over the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linalg.diagonal(fnp.eye(2)).tolist()
    [1.0, 1.0]
    """
    check_arraylike("jnp.linalg.diagonal", x)
    return _diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The traces of the matrices over the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.linalg.trace(fnp.eye(3)))
    3.0
    """
    check_arraylike("jnp.linalg.trace", x)
    return _trace(x, offset, -2, -1, dtype)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """The vector norm over ``axis`` (all axes, flattened, by default).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.linalg.vector_norm(fnp.ones((2, 2))))
    2.0
    """
    check_arraylike("jnp.linalg.vector_norm", x)
    # As JAX's: no promotion to an inexact type (integer p-norms stay integers).
    x = _prepare(x)
    if axis is None:
        out = _vector_norm(ravel(x), ord, 0, False)
        if keepdims:
            out = reshape(out, (1,) * get_aval(x).ndim)
        return out
    axes = canonical_axes(axis, get_aval(x).ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    rest = [i for i in range(get_aval(x).ndim) if i not in axes]
    moved = moveaxis(x, list(axes), list(range(len(rest), len(rest) + len(axes))))
    flat = reshape(moved, (*[get_aval(x).shape[i] for i in rest], -1))
    out = _vector_norm(flat, ord, len(rest), False)
    if keepdims:
        out = expand_dims(out, axes)
    return out


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The matrix norm over the last two axes.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.linalg.matrix_norm(fnp.eye(2), ord=1))
    1.0
    """
    check_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector norms (``ord`` None/2, 1, inf, -inf, 0 or any p) and the matrix norms
    ``"fro"``, 1, -1, inf, -inf, as ``numpy.linalg.norm``.

    >>> import funcgrad.numpy as fnp
    >>> print(f'{float(fnp.linalg.norm(fnp.eye(2), "fro")) ** 2:.6f}')
    2.000000
    """
    check_arraylike("jnp.linalg.norm", x)
    # Integers are measured in the inexact type JAX gives them (int32: float32).
    (x,) = promote_inexact(_prepare(x))
    nd = np.ndim(x) if not hasattr(x, "ndim") else x.ndim
    if axis is None:
        if ord is None:
            out = sqrt(sum(_abs2(ravel(x))))
            return out if not keepdims else _keep_all(out, nd)
        axis = tuple(range(nd))
    if isinstance(axis, (tuple, list)):
        # (row, col) as given: ord 1 and inf tell rows from columns
        axes = tuple(canonical_axis(a, nd) for a in axis)
    else:
        axes = canonical_axes(axis, nd)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axes}. Pass one axis to compute "
                     "a vector-norm, or two axes to compute a matrix-norm.")


def _abs2(x: Any) -> Any:
    # |x|^2: the square of a complex number is not its squared modulus.
    if dtypes.kind(get_aval(x).dtype) == "c":
        return real(x * conj(x))
    return square(x)


def _keep_all(out: Any, nd: int) -> Any:
    from funcgrad.numpy._shape import reshape  # noqa: PLC0415

    return reshape(out, (1,) * nd)


def _vector_norm(x: Any, ord: Any, axis: int, keepdims: bool) -> Any:  # noqa: A002
    if ord is None or ord == 2:
        return sqrt(sum(_abs2(x), axis, keepdims=keepdims))
    if ord == np.inf:
        return max(absolute(x), axis, keepdims=keepdims)
    if ord == -np.inf:
        return min(absolute(x), axis, keepdims=keepdims)
    if ord == 0:
        # The count in x's real inexact type (JAX's finfo of an integer dtype refuses).
        from funcgrad.numpy._dtype_info import finfo  # noqa: PLC0415

        return sum(x != 0, axis, dtype=finfo(get_aval(x).dtype).dtype, keepdims=keepdims)
    if ord == 1:
        return sum(absolute(x), axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord in ("inf", "-inf"):
            msg += f"Use '{ord[:-3]}jax.numpy.inf' instead."
        raise ValueError(msg)
    # JAX's constants: ord and 1/ord in |x|'s dtype (integer norms keep integer powers).
    abs_x = absolute(x)
    dt = get_aval(abs_x).dtype
    ord_arr = np.asarray(ord, dt)
    ord_inv = np.asarray(1.0 / ord_arr, dt)
    return power(sum(power(abs_x, ord_arr), axis, keepdims=keepdims), ord_inv)


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, ...], keepdims: bool) -> Any:  # noqa: A002
    r, c = axes
    if ord is None or ord in ("f", "fro"):
        return sqrt(sum(_abs2(x), axes, keepdims=keepdims))
    if ord in (1, -1):
        col = sum(absolute(x), r, keepdims=True)
        out = (max if ord == 1 else min)(col, c, keepdims=True)
    elif ord in (np.inf, -np.inf):
        row = sum(absolute(x), c, keepdims=True)
        out = (max if ord == np.inf else min)(row, r, keepdims=True)
    elif ord in (2, -2, "nuc"):
        moved = moveaxis(x, (r, c), (-2, -1))
        s = svdvals(moved)
        red = sum(s, -1) if ord == "nuc" else (max if ord == 2 else min)(s, -1)
        out = expand_dims(expand_dims(red, -1), -1)
        out = moveaxis(out, (-2, -1), (r, c))
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    return out if keepdims else squeeze(out, axes)


__all__ = ["EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond",
           "eig", "eigvals",
           "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot",
           "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
           "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]
