"""``jax.lax.linalg``: the matrix decompositions, batched over leading axes, with JAX's
signatures and output orders.

>>> import numpy as np
>>> from funcgrad.lax import linalg
>>> v, w = linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
>>> np.round(np.asarray(w), 6).tolist()
[1.0, 3.0]
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.primitives import decompositions as D
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.primitives.reductions import reduce_sum

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky",
           "cholesky_p", "cholesky_update", "eig", "eig_p", "eigh", "eigh_p", "hessenberg",
           "hessenberg_p", "householder_product", "lu", "lu_p", "lu_pivots_to_permutation",
           "ormqr", "qr", "qr_p", "schur", "schur_p", "svd", "svd_p", "symmetric_product",
           "symmetrize", "triangular_solve", "triangular_solve_p", "tridiagonal_solve"]


class EigImplementation(enum.Enum):
    """Which library computes ``eig`` (funcgrad uses LAPACK, or cuSOLVER on a GPU)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which algorithm computes ``eigh`` (funcgrad's is the backend's own)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which algorithm computes ``svd`` (funcgrad's is the backend's own)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


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
         sort_eigenvalues: bool = True, subset_by_index: Any = None,
         implementation: EighImplementation | None = None) -> tuple[Any, Any]:
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


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return S.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: EigImplementation | None = None,
        use_magma: bool | None = None) -> list[Any]:
    """``[w, vl, vr]`` of a general square matrix: the complex eigenvalues in LAPACK's order,
    then the unit-norm left and right eigenvectors that were asked for. Only the
    eigenvalues are differentiable (funcgrad has no eigenvector derivatives, whatever
    ``enable_eigvec_derivs`` says).

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> w, = linalg.eig(np.diag([2.0, 1.0]), compute_left_eigenvectors=False,
    ...                 compute_right_eigenvectors=False)
    >>> np.asarray(w).real.tolist()
    [2.0, 1.0]
    """
    return list(D.eig(x, compute_left_eigenvectors, compute_right_eigenvectors))


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False) -> Any:
    """``alpha * a @ a^T + beta * c``; ``symmetrize_output=True`` copies the lower triangle
    into the upper one.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.symmetric_product(np.array([[1.0], [2.0]]), np.eye(2),
    ...                                     beta=1.0)).tolist()
    [[2.0, 2.0], [2.0, 5.0]]
    """
    import funcgrad.numpy as jnp  # noqa: PLC0415

    a = jnp.asarray(a_matrix)
    out = alpha * jnp.matmul(a, jnp.swapaxes(a, -1, -2)) + beta * jnp.asarray(c_matrix)
    if symmetrize_output:
        out = jnp.tril(out) + jnp.swapaxes(jnp.tril(out, -1), -1, -2)
    return out


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of ``r^T r + w w^T``, given the upper factor ``r``.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.cholesky_update(np.diag([3.0, 4.0]), np.array([4.0, 0.0]))).tolist()
    [[5.0, 0.0], [0.0, 4.0]]
    """
    import funcgrad.numpy as jnp  # noqa: PLC0415

    r, w = jnp.asarray(r_matrix), jnp.asarray(w_vector)
    a = jnp.matmul(jnp.swapaxes(r, -1, -2), r) + w[..., :, None] * w[..., None, :]
    return jnp.swapaxes(D.cholesky(a), -1, -2)


def _householder_q(a: Any, taus: Any, m: int) -> Any:
    """The ``m x m`` product ``H_1 ... H_k`` of the reflectors in the columns of ``a``
    (``H_i = I - tau_i v_i v_i^H``, ``v_i`` is 1 at row ``i`` and ``a[i+1:, i]`` below)."""
    import funcgrad.numpy as jnp  # noqa: PLC0415

    a, taus = jnp.asarray(a), jnp.asarray(taus)
    dt = jnp.result_type(a, taus)
    rows = jnp.arange(m)
    q = jnp.broadcast_to(jnp.eye(m, dtype=dt), (*a.shape[:-2], m, m))
    for i in range(taus.shape[-1]):
        v = jnp.where(rows == i, jnp.ones((), dt), jnp.where(rows > i, a[..., :, i], 0))
        qv = jnp.einsum("...ij,...j->...i", q, v)
        q = q - taus[..., i, None, None] * qv[..., :, None] * jnp.conj(v)[..., None, :]
    return q


def householder_product(a: Any, taus: Any) -> Any:
    """The first ``n`` columns of the product of the Householder reflectors stored below
    the diagonal of ``a`` (``[..., m, n]``) with scale factors ``taus`` (LAPACK's orgqr).

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.householder_product(np.array([[1.0], [1.0]]),
    ...                                       np.array([1.0]))).tolist()
    [[0.0], [-1.0]]
    """
    m, n = get_aval(a).shape[-2:]
    return _householder_q(a, taus, m)[..., :n]


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q @ c`` (``left=False``: ``c @ Q``) for the ``Q`` of the Householder reflectors in
    ``a`` and ``taus``; ``transpose=True`` uses ``Q^H`` (LAPACK's ormqr).

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.ormqr(np.array([[1.0], [1.0]]), np.array([1.0]),
    ...                         np.eye(2))).tolist()
    [[0.0, -1.0], [-1.0, 0.0]]
    """
    from funcgrad.numpy import conj, matmul  # noqa: PLC0415

    q = _householder_q(a, taus, get_aval(a).shape[-2])
    if transpose:
        q = conj(_mT(q))
    return matmul(q, c) if left else matmul(c, q)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Any:
    """Solve ``A x = b`` for the tridiagonal ``A`` with sub-, main and super-diagonals
    ``dl`` (``dl[0]`` unused), ``d`` and ``du`` (``du[-1]`` unused), each ``[..., m]``;
    ``b`` is ``[..., m, n]``.

    >>> import numpy as np
    >>> from funcgrad.lax import linalg
    >>> np.asarray(linalg.tridiagonal_solve(np.array([0.0, 1.0]), np.array([2.0, 2.0]),
    ...                                     np.array([1.0, 0.0]), np.array([[3.0], [3.0]]))
    ...            ).tolist()
    [[1.0], [1.0]]
    """
    import funcgrad.numpy as jnp  # noqa: PLC0415

    dl, d, du, b = map(jnp.asarray, (dl, d, du, b))
    if not dl.ndim == d.ndim == du.ndim == b.ndim - 1 or not \
            dl.shape == d.shape == du.shape == b.shape[:-1]:
        raise ShapeError("tridiagonal_solve needs dl, d and du of one shape [..., m] and b "
                         f"of shape [..., m, n]; got {dl.shape}, {d.shape}, {du.shape} and "
                         f"{b.shape}")
    m = d.shape[-1]
    dt = jnp.result_type(dl, d, du)
    a = (d[..., :, None] * jnp.eye(m, dtype=dt) + dl[..., :, None] * jnp.eye(m, k=-1, dtype=dt)
         + du[..., :, None] * jnp.eye(m, k=1, dtype=dt))
    return jnp.linalg.solve(a, b)


def _primitive(name: str) -> Any:
    from funcgrad.core import PRIMITIVES  # noqa: PLC0415

    return PRIMITIVES[name]


cholesky_p, eig_p, eigh_p, hessenberg_p, lu_p, qr_p, schur_p, svd_p, triangular_solve_p = map(
    _primitive, ("cholesky", "eig", "eigh", "hessenberg", "lu", "qr", "schur", "svd",
                 "triangular_solve"))
