"""``jax.lax.linalg``: the matrix decompositions, batched over leading axes, with JAX's
signatures and output orders.

>>> import numpy as np
>>> from funcgrad.lax import linalg
>>> v, w = linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
>>> np.round(np.asarray(w), 6).tolist()
[1.0, 3.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.primitives import decompositions as D
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.primitives.reductions import reduce_sum

__all__ = ["cholesky", "eigh", "hessenberg", "lu", "lu_pivots_to_permutation", "qr", "schur",
           "svd", "symmetrize", "triangular_solve"]


def symmetrize(x: Any) -> Any:
    """``(x + x^T) / 2`` over the last two axes.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.symmetrize(np.array([[1.0, 2.0], [0.0, 1.0]]))).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    nd = get_aval(x).ndim
    xt = S.transpose(x, (*range(nd - 2), nd - 1, nd - 2))
    return E.mul(E.add(x, xt), 0.5)


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor (NaN for a matrix that is not positive definite).

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    D._not_half("cholesky", get_aval(x))  # JAX refuses (LAPACK); the primitive computes
    return D.cholesky(symmetrize(x) if symmetrize_input else x)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """Solve ``op(a) @ x = b`` (``left_side=True``) or ``x @ op(a) = b`` for triangular
    ``a``, as ``jax.lax.linalg.triangular_solve``.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> a = np.array([[2.0, 0.0], [1.0, 1.0]])
    >>> np.asarray(linalg.triangular_solve(a, np.array([[2.0], [3.0]]), left_side=True,
    ...                                    lower=True)).tolist()
    [[1.0], [2.0]]
    """
    return D.triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal)


def lu(x: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, permutation)`` of the LU decomposition with partial pivoting.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> lu, piv, perm = linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> np.asarray(perm).tolist()
    [1, 0]
    """
    D._not_half("lu", get_aval(x))  # JAX refuses (LAPACK); the primitive computes
    out = D.lu(x)
    return out[0], out[1], out[2]


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, Any]:
    """``(q, r)`` with ``x = q @ r``; ``full_matrices=False`` gives the reduced form.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> q, r = linalg.qr(np.eye(3)[:, :2], full_matrices=False)
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    """
    if pivoting:
        raise ValueError("funcgrad's qr has no column pivoting (pivoting=True); use "
                         "pivoting=False, or scipy.linalg.qr on the host")
    q, r = D.qr(x, full_matrices)
    return q, r


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: Any = None, algorithm: Any = None) -> Any:
    """``(u, s, vh)``, or ``s`` alone when ``compute_uv=False`` (descending).

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.svd(np.diag([1.0, 3.0]), compute_uv=False)).tolist()
    [3.0, 1.0]
    """
    _only_all("svd", subset_by_index, get_aval(x).shape[-2:])
    out = D.svd(x, full_matrices, compute_uv)
    if not compute_uv:
        return out[0]
    s, u, vt = out
    return u, s, vt


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: Any = None) -> tuple[Any, Any]:
    """``(v, w)``: eigenvectors as columns and ascending eigenvalues of symmetric ``x``.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> v, w = linalg.eigh(np.diag([3.0, 1.0]))
    >>> np.asarray(w).tolist()
    [1.0, 3.0]
    """
    _only_all("eigh", subset_by_index, get_aval(x).shape[-1:])
    v, w = D.eigh(symmetrize(x) if symmetrize_input else x, lower)
    return v, w


def _only_all(name: str, subset: Any, shape: tuple[int, ...]) -> None:
    k = min(shape) if shape else 0
    if subset is not None and tuple(subset) != (0, k):
        raise ValueError(f"{name}(subset_by_index={subset!r}): funcgrad computes all "
                         f"{k} values; slice the result instead")


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that the row swaps ``pivots`` (LAPACK's, 0-based) make of
    ``range(permutation_size)``.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 3)).tolist()
    [2, 0, 1]
    """
    aval = get_aval(pivots)
    if dtypes.kind(aval.dtype) not in "iu":
        raise DTypeError(f"lu_pivots_to_permutation needs integer pivots, got {aval.dtype}")
    if aval.ndim < 1 or aval.shape[-1] > permutation_size:
        raise ShapeError(f"pivots of shape {aval.shape} need a last axis of at most "
                         f"permutation_size={permutation_size}")
    batch, k, m = aval.shape[:-1], aval.shape[-1], permutation_size
    shape = (*batch, m)
    nd = len(shape)
    dt = aval.dtype
    idx = S.iota(dt, shape, nd - 1)
    perm = idx
    zero = np.zeros((), dt)
    for i in range(k):
        p = S.slice_(pivots, [0] * (nd - 1) + [i], [*batch, i + 1])
        p = S.broadcast_in_dim(S.reshape(p, batch), shape, tuple(range(nd - 1)))
        at_i = E.eq(idx, np.asarray(i, dt))
        at_p = E.eq(idx, p)
        here = S.broadcast_in_dim(reduce_sum(E.select(at_i, perm, S.broadcast_in_dim(
            zero, shape, ())), (nd - 1,)), shape, tuple(range(nd - 1)))
        there = S.broadcast_in_dim(reduce_sum(E.select(at_p, perm, S.broadcast_in_dim(
            zero, shape, ())), (nd - 1,)), shape, tuple(range(nd - 1)))
        perm = E.select(at_i, there, E.select(at_p, here, perm))
    return perm


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> Any:
    """``(t, q)`` with ``x == q @ t @ q^H`` (only ``t`` without the vectors); JAX ignores
    ``sort_eig_vals`` and ``select_callable``, and so does funcgrad.

    >>> import funcgrad.numpy as fnp
    >>> t, q = schur(fnp.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> t.tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    """
    from funcgrad.primitives.schur_forms import schur as schur_form  # noqa: PLC0415

    out = schur_form(x, compute_schur_vectors)
    return (out[0], out[1]) if compute_schur_vectors else out[0]


def hessenberg(a: Any) -> tuple[Any, Any]:
    """``(a, taus)``: LAPACK's packed Hessenberg reduction (the upper Hessenberg matrix in
    the upper triangle and first subdiagonal, the reflectors below and in ``taus``).

    >>> import funcgrad.numpy as fnp
    >>> h, taus = hessenberg(fnp.eye(3))
    >>> h.shape, taus.shape
    ((3, 3), (2,))
    """
    from funcgrad.primitives.schur_forms import hessenberg as hessenberg_form  # noqa: PLC0415

    out = hessenberg_form(a)
    return out[0], out[1]
