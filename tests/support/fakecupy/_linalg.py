"""The emulator's linear algebra where CuPy's rules differ from NumPy's, and
``cupyx.scipy.linalg``.

``cupy.linalg`` otherwise wraps ``numpy.linalg`` (see ``_module.submodule``). What differs:

- ``cholesky`` never raises: cuSOLVER's potrf reports a matrix that is not positive definite
  only in its ``devInfo``, which CuPy reads solely under ``cupyx.errstate(linalg="raise")``
  (default "ignore"). The factor is then LAPACK's partial one: the columns before the
  failing pivot are factored, that pivot holds its non-positive (or NaN) reduced value, and
  the rest of the lower triangle is the input's.
- ``eig`` (cusolverDnXgeev) always returns complex eigenvalues and vectors, where NumPy
  returns real ones when every eigenvalue of a real matrix is real.

``cupyx.scipy.linalg.solve_triangular`` takes batches (one cuBLAS trsmBatched call), reads one
triangle and never checks the diagonal (a zero gives inf/NaN, no LinAlgError);
``lu_factor`` takes one matrix and gives 0-based int32 pivots. Other names of the pinned
``cupyx.scipy.linalg`` raise "not emulated" until they are added here.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import scipy.linalg

from fakecupy import _module


def _potrf_lower(a: np.ndarray) -> np.ndarray:
    """LAPACK's potf2 on one matrix (lower), stopping at the first non-positive pivot."""
    out = np.tril(a).astype(a.dtype, copy=True)
    n = out.shape[-1]
    for j in range(n):
        ajj = out[j, j] - out[j, :j] @ out[j, :j]
        if not ajj > 0:
            out[j, j] = ajj
            return out
        out[j, j] = np.sqrt(ajj)
        out[j + 1:, j] = (out[j + 1:, j] - out[j + 1:, :j] @ out[j, :j]) / out[j, j]
    return out


def cholesky(a: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        flat = a.reshape((-1, *a.shape[-2:]))
        return np.stack([_potrf_lower(m) for m in flat]).reshape(a.shape)


def eig(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    w, v = np.linalg.eig(a)
    cdt = np.result_type(a.dtype, np.complex64)
    return w.astype(cdt), v.astype(cdt)


def eigvals(a: np.ndarray) -> np.ndarray:
    return eig(a)[0]


_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


def solve_triangular(a: np.ndarray, b: np.ndarray, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = False) -> np.ndarray:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("expected one square matrix or a batch of square matrices")
    if a.ndim > 2 and a.shape[:-2] != b.shape[:a.ndim - 2]:
        raise ValueError("incompatible batch count")
    t = _TRANS[trans]
    tri = np.tril(a) if lower else np.triu(a)
    n = a.shape[-1]
    if unit_diagonal:
        tri = tri * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    op = np.swapaxes(tri, -1, -2) if t else tri
    if t == 2:
        op = np.conj(op)
    vec = b.ndim == a.ndim - 1
    bm = b[..., None] if vec else b
    # trsm does not check the diagonal: substitution with IEEE arithmetic (inf/NaN at a
    # zero pivot), as cuBLAS computes it.
    low = bool(lower) != bool(t)
    x = np.array(bm, dtype=np.result_type(op, bm), copy=True)
    order = range(n) if low else range(n - 1, -1, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in order:
            others = slice(0, i) if low else slice(i + 1, n)
            r = x[..., i, :] - np.einsum("...j,...jk->...k", op[..., i, others],
                                          x[..., others, :])
            x[..., i, :] = r / op[..., i, i][..., None]
    return x[..., 0] if vec else x


def lu_factor(a: np.ndarray, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[np.ndarray, np.ndarray]:
    if a.ndim != 2:
        raise np.linalg.LinAlgError(f"{a.ndim}-dimensional array given. Array must be "
                                    "two-dimensional")
    lu, piv = scipy.linalg.lu_factor(a, check_finite=False)
    return lu, piv.astype(np.int32)


def lu_solve(lu_and_piv: tuple[np.ndarray, np.ndarray], b: np.ndarray, trans: int = 0,
             overwrite_b: bool = False, check_finite: bool = True) -> np.ndarray:
    return scipy.linalg.lu_solve(lu_and_piv, b, trans=trans, check_finite=False)


def install_overrides() -> types.ModuleType:
    """Put the CuPy-rule functions on the emulated ``cupy.linalg``; returns the emulated
    ``cupyx.scipy.linalg``."""
    linalg_ns = types.SimpleNamespace(cholesky=cholesky, eig=eig, eigvals=eigvals)
    for name in ("cholesky", "eig", "eigvals"):
        setattr(_module.linalg, name, _module._make_attr("cupy.linalg", name, linalg_ns))
    ns = types.SimpleNamespace(solve_triangular=solve_triangular, lu_factor=lu_factor,
                               lu_solve=lu_solve)
    return _module.submodule("cupyx.scipy.linalg", ns)
