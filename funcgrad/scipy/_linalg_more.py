"""More of ``jax.scipy.linalg``: ``schur``, ``sqrtm``, ``funm``'s kin ``rsf2csf``,
``hessenberg``, ``qr_multiply`` and ``dft`` (re-exported by ``funcgrad.scipy.linalg``).

``schur`` and ``hessenberg`` are LAPACK's (the ``schur``/``hessenberg`` primitives, on the
host as JAX's run on the CPU only) and, as JAX's, not differentiable. ``sqrtm`` is the
Bjorck-Hammarling recurrence on the complex Schur form, one superdiagonal at a time;
``rsf2csf`` is JAX's Givens sweep written with array selects (no data-dependent
branches), so it runs under ``jit``/``vmap`` and differentiates as JAX's does.

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import linalg
>>> linalg.sqrtm(fnp.array([[4.0, 0.0], [0.0, 9.0]])).real.tolist()
[[2.0, 0.0], [0.0, 3.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy import linalg as _la
from funcgrad.numpy._core import promote_inexact
from funcgrad.numpy._creation import arange, asarray, eye, zeros, zeros_like
from funcgrad.numpy._linalg import matmul, triu
from funcgrad.numpy._shape import broadcast_to, concatenate, expand_dims, stack, swapaxes
from funcgrad.numpy._ufuncs import absolute, conj, exp, sqrt, where
from funcgrad.primitives import decompositions as D
from funcgrad.primitives import schur_forms as _schur_prims

__all__ = ["dft", "funm", "hessenberg", "qr_multiply", "rsf2csf", "schur", "sqrtm"]


def _mH(x: Any) -> Any:  # noqa: N802 - the conjugate transpose, named as in NumPy
    return conj(swapaxes(x, -1, -2))


def _to_complex(dt: np.dtype[Any]) -> np.dtype[Any]:
    """JAX's ``to_complex_dtype``: float64 -> complex128, other floats -> complex64,
    integers and booleans -> the default complex dtype."""
    if dt.kind == "c":
        return dt
    if dt.kind == "f":
        return np.dtype(np.complex128 if dt == np.float64 else np.complex64)
    return dtypes.default_complex()


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """``(t, z)`` with ``a == z @ t @ z^H``: ``t`` quasi upper triangular (``output="real"``,
    2x2 blocks for complex eigenvalue pairs) or upper triangular (``"complex"``).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> t, z = linalg.schur(fnp.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> t.tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    """
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    a = asarray(a)
    if output == "complex":
        a = a.astype(_to_complex(get_aval(a).dtype))
    t, z = _schur_prims.schur(a)
    return t, z


def _sqrtm_triu(t: Any) -> Any:
    """The upper triangular square root of upper triangular ``t`` (Bjorck & Hammarling
    1983): the entries of superdiagonal ``d`` need only those of the ones below it."""
    n = get_aval(t).shape[-1]
    diag = sqrt(_la.diagonal(t))
    u = _diag_embed(diag, 0, n)
    for d in range(1, n):
        # u holds superdiagonals 0..d-1, zeros above: (u @ u) on superdiagonal d is the sum
        # over k strictly between i and i + d of u[i, k] u[k, i + d].
        s = _la.diagonal(matmul(u, u), offset=d)
        tij = _la.diagonal(t, offset=d)
        zero = zeros((), get_aval(t).dtype)
        same = tij == s   # 0 there, as JAX (no 0/0 where the eigenvalues sum to zero)
        value = where(same, zero, (tij - s) / where(same, 1.0, diag[:n - d] + diag[d:]))
        u = u + _diag_embed(value, d, n)
    return u


def _diag_embed(v: Any, k: int, n: int) -> Any:
    """The n x n matrix with ``v`` on superdiagonal ``k``."""
    m = n - k
    rows = expand_dims(v, -1) * eye(m, dtype=get_aval(v).dtype)      # (m, m), v on the diagonal
    shift = eye(m, n, k, dtype=get_aval(v).dtype)                     # column j -> j + k
    full = matmul(rows, shift)                                        # (m, n)
    return concatenate([full, zeros((k, n), get_aval(v).dtype)], 0)


def sqrtm(A: Any, blocksize: int = 1) -> Any:  # noqa: N803 - SciPy's name
    """The principal matrix square root (complex), from the complex Schur form.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.sqrtm(fnp.array([[1.0, 0.0], [0.0, 4.0]])).dtype
    dtype('complex64')
    """
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    a = asarray(A)
    nd = get_aval(a).ndim
    if nd < 2:
        raise _schur_prims.RankError(f"Input 0 to schur must have rank at least 2, but got "
                                     f"shape={get_aval(a).shape}")
    if nd > 2:
        raise ShapeError(f"sqrtm takes one (N, N) matrix, got shape {get_aval(a).shape}")
    t, z = schur(a, output="complex")
    return matmul(matmul(z, _sqrtm_triu(t)), _mH(z))


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:  # noqa: N803
    """The complex Schur form ``(t, z)`` from the real one (``schur(a)``), upper triangular.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> t, z = linalg.rsf2csf(fnp.array([[0.0, -1.0], [1.0, 0.0]]), fnp.eye(2))
    >>> [round(v, 6) for v in fnp.diagonal(t).imag.tolist()]
    [1.0, -1.0]
    """
    t, z = asarray(T), asarray(Z)
    ts, zs = get_aval(t).shape, get_aval(z).shape
    if len(ts) < 2 or ts[-1] != ts[-2]:
        raise ValueError("Input 'T' must be square.")
    if len(zs) < 2 or zs[-1] != zs[-2]:
        raise ValueError("Input 'Z' must be square.")
    if ts[-1] != zs[-1]:
        raise ValueError(f"Input array shapes must match: Z: {zs} vs. T: {ts}")
    cdt = _to_complex(dtypes.result_type(t, z))
    t, z = t.astype(cdt), z.astype(cdt)
    batch = np.broadcast_shapes(ts[:-2], zs[:-2])
    n = ts[-1]
    t, z = broadcast_to(t, (*batch, n, n)), broadcast_to(z, (*batch, n, n))
    eps = float(np.finfo(cdt).eps)
    for m in range(n - 1, 0, -1):
        sub = t[..., m, m - 1]
        update = absolute(sub) > eps * (absolute(t[..., m - 1, m - 1]) + absolute(t[..., m, m]))
        t_new, z_new = _givens_step(t, z, m, update)
        keep = expand_dims(expand_dims(update, -1), -1)
        t, z = where(keep, t_new, t), where(keep, z_new, z)
        t = t.at[..., m, m - 1].set(0.0)
    return t, z


def _givens_step(t: Any, z: Any, m: int, update: Any) -> tuple[Any, Any]:
    """JAX's ``_update_T_Z``: the rotation of rows and columns m-1, m that zeroes
    ``t[m, m-1]`` (``update`` False: its result is not used, kept finite)."""
    n = get_aval(t).shape[-1]
    mu = _la.eigvals(t[..., m - 1:m + 1, m - 1:m + 1]) - t[..., m:m + 1, m]
    sub = t[..., m, m - 1]
    r = sqrt(absolute(mu[..., 0]) ** 2 + absolute(sub) ** 2).astype(get_aval(t).dtype)
    r = where(update, r, 1.0)
    c, s = mu[..., 0] / r, sub / r
    g = stack([stack([conj(c), s], -1), stack([-s, c], -1)], -2)      # (..., 2, 2)
    rows = t[..., m - 1:m + 1, :]
    col_mask = np.arange(n) >= m - 1
    rows_new = where(col_mask, matmul(g, where(col_mask, rows, 0.0)), rows)
    t = concatenate([t[..., :m - 1, :], rows_new, t[..., m + 1:, :]], -2)
    cols = t[..., :, m - 1:m + 1]
    row_mask = (np.arange(n) < m + 1)[:, None]
    cols_new = where(row_mask, matmul(where(row_mask, cols, 0.0), _mH(g)), cols)
    t = concatenate([t[..., :, :m - 1], cols_new, t[..., :, m + 1:]], -1)
    zc = matmul(z[..., :, m - 1:m + 1], _mH(g))
    z = concatenate([z[..., :, :m - 1], zc, z[..., :, m + 1:]], -1)
    return t, z


def funm(A: Any, func: Any, disp: bool = True) -> Any:  # noqa: N803 - SciPy's name
    """``func`` of a square matrix, ``func`` taking and giving arrays of scalars: applied to
    the eigenvalues on the complex Schur form's diagonal, the rest by Parlett's recurrence
    (Golub & Van Loan, algorithm 11.1.1); ``(f, err)`` with ``disp=False``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.funm(fnp.array([[1.0, 0.0], [0.0, 4.0]]), fnp.sqrt).real.tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    a = asarray(A)
    shape = get_aval(a).shape
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(a))
    n = shape[0]
    dt = get_aval(t).dtype
    f = _diag_embed(asarray(func(_la.diagonal(t))).astype(dt), 0, n)
    diag_t = _la.diagonal(t)
    minden = absolute(t[0, 0])
    # Superdiagonal p of f from those below it: the sums over k strictly between i and
    # j = i + p read only superdiagonals 1..p-1 of t and f (kept apart, so no large terms
    # cancel).
    t_band = zeros((n, n), dt)
    f_band = zeros((n, n), dt)
    for p in range(1, n):
        tij = _la.diagonal(t, offset=p)
        fd = _la.diagonal(f)
        s = tij * (fd[p:] - fd[:n - p])
        s = s + _la.diagonal(matmul(t_band, f_band) - matmul(f_band, t_band), offset=p)
        den = diag_t[p:] - diag_t[:n - p]
        s = where(den != 0, s / where(den != 0, den, 1.0), s)
        f = f + _diag_embed(s, p, n)
        minden = fnp.minimum(minden, fnp.min(absolute(den)))
        t_band = t_band + _diag_embed(tij, p, n)
        f_band = f_band + _diag_embed(s, p, n)
    f = matmul(matmul(z, f), _mH(z))
    if disp:
        return f
    tol = float(np.finfo(np.float32 if dt == np.complex64 else np.float64).eps)
    minden = where(minden == 0.0, tol, minden)
    norm1 = _la.norm(triu(t, 1), 1)
    err = where(fnp.any(fnp.isinf(f)), np.inf,
                fnp.minimum(1.0, fnp.maximum(tol, (tol / minden) * norm1)))
    return f, err


def _householder_product(v: Any, taus: Any) -> Any:
    """``H_1 H_2 ... H_k`` with ``H_i = I - tau_i w_i w_i^H``, ``w_i`` column ``i`` of ``v``
    below the diagonal with a unit on it (LAPACK's ``orgqr`` for square ``v``)."""
    m = get_aval(v).shape[-1]
    dt = get_aval(v).dtype
    batch = get_aval(v).shape[:-2]
    q = broadcast_to(eye(m, dtype=dt), (*batch, m, m))
    for i in range(get_aval(taus).shape[-1]):
        w = concatenate([zeros((*batch, i), dt), asarray(np.ones((*batch, 1)), dt),
                         v[..., i + 1:, i]], -1)
        qw = matmul(q, expand_dims(w, -1))                                     # (..., m, 1)
        tau = expand_dims(expand_dims(taus[..., i], -1), -1)
        q = q - tau * matmul(qw, expand_dims(conj(w), -2))
    return q


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """The Hessenberg form ``h`` (zero below the first subdiagonal), with ``q`` such that
    ``a == q @ h @ q^H`` if ``calc_q``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> linalg.hessenberg(fnp.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    a = asarray(a)
    n = get_aval(a).shape[-1] if get_aval(a).ndim else 0
    if n == 0 and get_aval(a).ndim >= 2:
        return (zeros_like(a), zeros_like(a)) if calc_q else zeros_like(a)
    a_out, taus = _schur_prims.hessenberg(a)
    h = triu(a_out, -1)
    if not calc_q:
        return h
    dt = get_aval(a_out).dtype
    batch = get_aval(a_out).shape[:-2]
    sub = _householder_product(a_out[..., 1:, :-1], taus)
    top = concatenate([asarray(np.ones((*batch, 1, 1)), dt), zeros((*batch, 1, n - 1), dt)],
                      -1)
    bottom = concatenate([zeros((*batch, n - 1, 1), dt), sub], -1)
    return h, concatenate([top, bottom], -2)


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, Any]:
    """``(q @ c, r)`` (``mode="left"``) or ``(c @ q, r)`` (``"right"``) with ``q`` the
    economic QR factor of ``a``; a 1-D ``c`` is a column (left) or a row (right).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy import linalg
    >>> cq, r = linalg.qr_multiply(fnp.array([[3.0], [4.0]]), fnp.array([1.0, 0.0]))
    >>> [round(v, 6) for v in cq.tolist()], [round(v, 6) for v in r.ravel().tolist()]
    ([-0.6], [-5.0])
    """
    if pivoting:
        raise ValueError("qr_multiply(pivoting=True) is not supported by funcgrad (no "
                         "column-pivoted QR primitive); use pivoting=False")
    a, c = promote_inexact(asarray(a), asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = get_aval(c).ndim == 1
    if onedim:
        c = expand_dims(c, -1) if mode == "left" else expand_dims(c, 0)
    ashape, cshape = get_aval(a).shape, get_aval(c).shape
    m, n = ashape[-2:]
    k = min(m, n)
    if mode == "left":
        if cshape[-2] != k:
            raise ValueError(
                f"Array shapes are not compatible for Q @ c operation: a has shape "
                f"{tuple(ashape)} so Q has {k} columns, but c has {cshape[-2]} rows "
                f"(expected {k}).")
    elif cshape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape "
            f"{tuple(ashape)} so Q has {m} rows, but c has {cshape[-1]} columns "
            f"(expected {m}).")
    batch = np.broadcast_shapes(ashape[:-2], cshape[:-2])
    a = broadcast_to(a, (*batch, m, n))
    c = broadcast_to(c, (*batch, *cshape[-2:]))
    q, r = D.qr(a, False)
    if conjugate:
        q = conj(q)
    out = matmul(q, c) if mode == "left" else matmul(c, q)
    if onedim:
        out = out.ravel()
    return out, triu(r)


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The n x n discrete Fourier transform matrix ``exp(-2 pi i j k / n)`` (scaled by
    ``1/sqrt(n)`` with ``scale="sqrtn"``, ``1/n`` with ``"n"``).

    >>> from funcgrad.scipy import linalg
    >>> linalg.dft(2).real.tolist()
    [[1.0, 1.0], [1.0, -1.0]]
    """
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dt = dtypes.default_complex()
    else:
        dt = dtypes.canonicalize_dtype(dtype)
        if dt.kind != "c":
            raise ValueError(f"dtype must be a complex floating-point type; got {dt}.")
    idx = arange(n, dtype=dt)
    omegas = exp(-2j * np.pi * idx[:, None] * idx[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / math.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas
