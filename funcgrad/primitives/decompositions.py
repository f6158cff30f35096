"""Matrix decompositions as primitives: ``cholesky``, ``triangular_solve``, ``lu``, ``qr``,
``svd`` and ``eigh``, batched over leading axes, with JAX's derivative rules.

Each impl calls LAPACK through NumPy/SciPy on the CPU, or ``cupy.linalg`` where CuPy has
the routine; a routine an array module lacks falls back to a loop over the matrices or to
array code that any module runs. Outputs follow ``jax.lax.linalg``'s primitives: ``lu``
gives ``(lu, pivots, permutation)`` (int32), ``svd`` gives ``(s, u, vt)`` (or ``(s,)``)
and ``eigh`` gives ``(v, w)``. ``cholesky`` and ``eigh`` read one triangle of their
operand (the lower one for cholesky), as LAPACK does, and their derivatives are those of
that map: the other triangle gets a zero cotangent.

The rules follow jax/_src/lax/linalg.py; the reverse rules are the transposes of those
linear maps. As in JAX, repeated eigenvalues or singular values give infinite or NaN
derivatives of the vectors (the vectors are not differentiable there).

>>> import numpy as np
>>> from funcgrad.primitives.decompositions import cholesky
>>> np.asarray(cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))).tolist()
[[2.0, 0.0], [1.0, 2.0]]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import (
    DTypeError,
    NonDifferentiableError,
    ShapeError,
    UnsupportedDTypeError,
)
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import small_batches
from funcgrad.primitives import structural as S
from funcgrad.primitives.linalg import dot_general
from funcgrad.primitives.reductions import reduce_sum
from funcgrad.primitives.rules import (
    add_tangents,
    all_batched,
    move_to_front,
    place_like,
    zeros_like_aval,
)

# ------------------------------------------------------------ shape checks


_HALF = frozenset({np.dtype(np.float16), np.dtype(dtypes.bfloat16)})


def _float_matrix(name: str, x: ShapedArray, square: bool = False, lapack: bool = False
                  ) -> None:
    if dtypes.kind(x.dtype) not in "fc":
        raise DTypeError(f"{name} needs a floating point or complex operand, got {x.dtype}; "
                         "convert integers with .astype(float)")
    if lapack:
        _not_half(name, x)
    if x.ndim < 2:
        raise ShapeError(f"{name} needs a matrix (rank >= 2, batched over leading axes), "
                         f"got rank {x.ndim}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{name} needs square matrices, got {x.shape[-2]}x{x.shape[-1]}")


def _not_half(name: str, x: ShapedArray) -> None:
    # JAX raises NotImplementedError("Unsupported dtype ...") for these on the CPU: LAPACK
    # has no half-precision routines (and neither NumPy nor CuPy's solvers take them).
    if x.dtype in _HALF:
        raise UnsupportedDTypeError(
            f"Unsupported dtype {x.dtype} for {name} (its LAPACK/cuSOLVER routines have no "
            "half-precision form); cast to float32 first, e.g. x.astype(jnp.float32)")


# ------------------------------------------------- matrix helpers for the rules


def _nd(x: Any) -> int:
    return get_aval(x).ndim


def _mT(x: Any) -> Any:  # noqa: N802 - the matrix transpose, named as in NumPy
    nd = _nd(x)
    return S.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _is_complex(x: Any) -> bool:
    return dtypes.kind(get_aval(x).dtype) == "c"


def _H(x: Any) -> Any:  # noqa: N802 - the conjugate transpose, as JAX's _H
    """The conjugate transpose of the last two axes (the transpose of real matrices)."""
    return E.conj(_mT(x)) if _is_complex(x) else _mT(x)


def _cj(x: Any) -> Any:
    """The complex conjugate (real arrays as they are)."""
    return E.conj(x) if _is_complex(x) else x


def _as_dtype_of(x: Any, like: Any) -> Any:
    """``x`` (real) in ``like``'s dtype (complex where ``like`` is)."""
    return E.convert_element_type(x, get_aval(like).dtype)


def _mm(a: Any, b: Any) -> Any:
    """Matrix product over equal leading (batch) axes."""
    nd = _nd(a)
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const_like(mat: np.ndarray, x: Any) -> Any:
    """A constant (r, c) matrix broadcast over ``x``'s leading axes, in its dtype."""
    aval = get_aval(x)
    shape = (*aval.shape[:-2], *mat.shape)
    return S.broadcast_in_dim(place_like(np.asarray(mat, aval.dtype), x), shape,
                              (len(shape) - 2, len(shape) - 1))


def _tri(x: Any, lower: bool, k: int = 0) -> Any:
    """``tril(x, k)`` or ``triu(x, k)`` of the last two axes."""
    aval = get_aval(x)
    n, m = aval.shape[-2:]
    mask = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    # A selection, as JAX's tril/triu: the other triangle is +0 (not -0 or NaN * 0).
    nd = len(aval.shape)
    pred = S.broadcast_in_dim(place_like(mask, x), aval.shape, (nd - 2, nd - 1))
    return E.select(pred, x, 0)


def _eye_like(x: Any, n: int | None = None) -> Any:
    n = get_aval(x).shape[-1] if n is None else n
    return _const_like(np.eye(n), x)


def _diag_part(x: Any) -> Any:
    """The diagonal of square matrices, as a last axis."""
    return reduce_sum(E.mul(x, _eye_like(x)), (_nd(x) - 1,))


def _diag_embed(v: Any, like: Any = None) -> Any:
    """Square matrices with ``v`` on the diagonal; the identity mask is placed with ``like``
    (a primal: a cotangent such as a sum's seed can be a host constant)."""
    shape = get_aval(v).shape
    full = S.broadcast_in_dim(v, (*shape, shape[-1]), tuple(range(len(shape))))
    return E.mul(full, _const_like(np.eye(shape[-1]), full if like is None else like))


def _row(v: Any) -> Any:
    """A vector (..., k) as (..., 1, k), to scale columns by broadcasting against (..., r, k)."""
    return S.expand_dims(v, (_nd(v) - 1,))


def _scale_cols(x: Any, v: Any) -> Any:
    """``x * v[..., None, :]``."""
    shape = get_aval(x).shape
    nd = len(shape)
    return E.mul(x, S.broadcast_in_dim(v, shape, (*range(nd - 2), nd - 1)))


def _scale_rows(x: Any, v: Any) -> Any:
    """``x * v[..., :, None]``."""
    shape = get_aval(x).shape
    nd = len(shape)
    return E.mul(x, S.broadcast_in_dim(v, shape, tuple(range(nd - 1))))


def _half_triangle(x: Any, lower: bool) -> Any:
    """One triangle of ``x`` with its diagonal halved."""
    n = get_aval(x).shape[-1]
    tri = np.tri(n) if lower else np.tri(n).T
    return E.mul(x, _const_like(tri - 0.5 * np.eye(n), x))


def _reflect(x: Any, lower: bool) -> Any:
    """The symmetric (complex: Hermitian) matrix that one triangle of ``x`` stands for.
    LAPACK takes a Hermitian matrix's diagonal as real (its imaginary part unread): the
    complex map is ``T + T^H`` with ``T`` the triangle whose diagonal is halved."""
    if _is_complex(x):
        t = _half_triangle(x, lower)
        return E.add(t, _H(t))
    t = _tri(x, lower)
    return E.add(t, _mT(_tri(x, lower, -1 if lower else 1)))


def _reflect_transpose(g: Any, lower: bool) -> Any:
    """The transpose of :func:`_reflect` (a real-linear map; the complex one under JAX's
    cotangent convention, where conj is its own transpose)."""
    if _is_complex(g):
        return _half_triangle(E.add(g, _H(g)), lower)
    return E.add(_tri(g, lower), _tri(_mT(g), lower, -1 if lower else 1))


def _front_batch(prim: Primitive) -> Callable[..., Any]:
    """Batch rule of a one-operand primitive batched over leading axes: move the mapped axis
    to the front."""

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        out = prim.bind(move_to_front(args[0], dims[0]), **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)

    return rule


def _flat_batch(xp: Any, fn: Callable[..., Any], a: Any, n_out: int) -> list[Any]:
    """``fn`` on each matrix of ``a`` (batched over its leading axes), results stacked."""
    batch = a.shape[:-2]
    flat = a.reshape((math.prod(a.shape[:-2]), *a.shape[-2:]))
    outs: list[list[Any]] = [[] for _ in range(n_out)]
    for i in range(flat.shape[0]):
        res = fn(flat[i])
        for j in range(n_out):
            outs[j].append(res[j])
    if flat.shape[0] == 0:
        probe = fn(xp.zeros(a.shape[-2:], a.dtype) + xp.eye(*a.shape[-2:], dtype=a.dtype))
        return [xp.zeros((*batch, *p.shape), p.dtype) for p in probe]
    return [xp.stack(o).reshape((*batch, *o[0].shape)) for o in outs]


def _count(batch: Sequence[int]) -> int:
    return int(np.prod(batch, dtype=np.int64))


def _linalg(xp: Any, name: str) -> Callable[..., Any] | None:
    return getattr(getattr(xp, "linalg", None), name, None)


# ---------------------------------------------------------------- cholesky


def cholesky(x: Any) -> Any:
    """The lower Cholesky factor of each symmetric positive definite matrix of ``x``
    (from its lower triangle). Where a matrix is not positive definite its factor is NaN on
    and below the diagonal and 0 above, as JAX's."""
    return cholesky_p.bind(x)


def _cholesky_abstract(x: ShapedArray) -> ShapedArray:
    _float_matrix("cholesky", x, square=True)
    return ShapedArray(x.shape, x.dtype)


def _potrf_host(x: Any) -> Any:
    """The lower Cholesky factor of each matrix of ``x`` (reading its lower triangle)
    through LAPACK's potrf, JAX's NaN factor where one is not positive definite.

    SciPy's potrf is 3.5x faster than ``np.linalg.cholesky`` at n = 256 (no copies into
    and out of Fortran order, a blocked factorization): the transpose of a C-ordered
    matrix is the Fortran-ordered operand whose upper triangle is our lower one, and the
    factor ``U`` it returns transposes to the C-ordered ``L``.
    """
    from scipy.linalg import get_lapack_funcs  # noqa: PLC0415

    x = np.ascontiguousarray(x)
    potrf = get_lapack_funcs("potrf", (x,))

    def one(m: Any) -> Any:
        u, info = potrf(m.T, lower=0, clean=1)
        if info > 0:  # not positive definite: NaN on and below the diagonal, as JAX
            return np.tril(np.full(m.shape, np.nan, m.dtype))
        return u.T

    if x.ndim == 2:
        return one(x)
    flat = x.reshape((math.prod(x.shape[:-2]), *x.shape[-2:]))
    out = np.empty(flat.shape, x.dtype)
    for i in range(flat.shape[0]):
        out[i] = one(flat[i])
    return out.reshape(x.shape)


def _cholesky_impl(xp: Any, x: Any) -> Any:
    if xp is np:
        # (the compiled loops are real: complex matrices go to LAPACK's potrf)
        if x.dtype.kind != "c" and small_batches.use_loops("cholesky", _count(x.shape[:-2]),
                                                           x.shape[-1]):
            out = small_batches.cholesky_batch(x)  # reads the lower triangle only
            if out is not None:
                return out
        return np.asarray(_potrf_host(x), dtype=x.dtype)
    lower = xp.tril(x)
    sym = lower + xp.conj(xp.swapaxes(xp.tril(x, -1), -1, -2))
    # cuSOLVER's potrf (batched in CuPy) reports a matrix that is not positive definite
    # only in devInfo, which CuPy does not read by default (reading it would be a
    # device->host copy): the failed pivot is left non-positive or NaN on the diagonal, so
    # the check that gives JAX's NaN factor stays on the device.
    low = xp.linalg.cholesky(sym)
    ok = xp.all(xp.diagonal(low, 0, -2, -1).real > 0, axis=-1)
    failed = xp.tril(xp.full(low.shape[-2:], np.nan, low.dtype))
    return xp.where(ok[..., None, None], low, failed).astype(x.dtype, copy=False)


cholesky_p = Primitive("cholesky", abstract_eval=_cholesky_abstract, impl=_cholesky_impl)


def _phi(x: Any) -> Any:
    """The lower triangle with a halved diagonal (Murray 2016, arXiv:1602.07527)."""
    n = get_aval(x).shape[-1]
    return E.mul(x, _const_like(np.tril(np.ones((n, n))) - 0.5 * np.eye(n), x))


def _cholesky_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    (x,), (t,) = primals, tangents
    L = cholesky_p.bind(x)  # noqa: N806
    if t is None:
        return L, None
    # dL = L phi(L^-1 sigma L^-H) (complex: the Hermitian sigma, L^-H a conjugate solve)
    sigma = _reflect(t, True)
    cx = _is_complex(x)
    tmp = triangular_solve(L, sigma, left_side=False, lower=True, transpose_a=True,
                           conjugate_a=cx)
    inner = triangular_solve(L, tmp, left_side=True, lower=True)
    return L, _mm(L, _phi(inner))


def _cholesky_vjp(ct: Any, primals: Sequence[Any], L: Any) -> list[Any]:  # noqa: N803
    # The transpose of the jvp's map: L^T, phi, L^-T and conj(L)^-1 (the transpose of
    # the right solve with L^H), then the reflection's transpose.
    p = _phi(_mm(_mT(L), ct))
    if _is_complex(L):
        g = triangular_solve(L, p, left_side=True, lower=True, transpose_a=True)
        g = triangular_solve(L, g, left_side=False, lower=True, conjugate_a=True)
        return [_reflect_transpose(g, True)]
    g = triangular_solve(L, p, left_side=False, lower=True)
    g = triangular_solve(L, g, left_side=True, lower=True, transpose_a=True)
    sym = E.mul(E.add(g, _mT(g)), 0.5)
    return [_reflect_transpose(sym, True)]


cholesky_p.jvp, cholesky_p.vjp, cholesky_p.vjp_reads = _cholesky_jvp, _cholesky_vjp, "y0"
cholesky_p.batch = _front_batch(cholesky_p)


# -------------------------------------------------------- triangular_solve


def triangular_solve(a: Any, b: Any, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """``op(a)^-1 b`` (``left_side``) or ``b op(a)^-1`` with ``a`` triangular, as
    ``jax.lax.linalg.triangular_solve`` (the other triangle of ``a`` is not read)."""
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def _trsolve_abstract(a: ShapedArray, b: ShapedArray, *, left_side: bool, lower: bool,
                      transpose_a: bool, conjugate_a: bool, unit_diagonal: bool
                      ) -> ShapedArray:
    _float_matrix("triangular_solve", a, square=True)
    _float_matrix("triangular_solve", b)
    if a.dtype != b.dtype:
        raise DTypeError(f"a and b must have one dtype, got {a.dtype} and {b.dtype}")
    if a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"a and b must have equal batch axes, got {a.shape[:-2]} and "
                         f"{b.shape[:-2]}")
    side = -2 if left_side else -1
    if b.shape[side] != a.shape[-1]:
        raise ShapeError(f"a is {a.shape[-1]}x{a.shape[-1]} but b's "
                         f"{'rows' if left_side else 'columns'} number {b.shape[side]} "
                         f"(left_side={left_side})")
    return ShapedArray(b.shape, b.dtype)


def _trsm_host(a: Any, b: Any, lower: bool, trans: bool, unit: bool,
               left: bool = True) -> Any:
    """``op(a)^-1 b`` for stacks of triangular NumPy matrices, through BLAS trsm.

    trsm reads one triangle and never checks the diagonal (a zero gives inf/NaN, as
    XLA's); unlike SciPy's solve_triangular it has no per-call validation, which dominates
    on batches of small matrices. The system is posed transposed, as the right-side solve
    ``x^T op(a)^T = b^T``: the transposes of C-ordered matrices are the Fortran-ordered
    operands BLAS takes, so nothing is copied into Fortran order and the result's
    transpose is C-ordered again. A right-side solve ``x op(a) = b`` (``left=False``,
    matrices only) is likewise BLAS's left-side one, ``op(a)^T x^T = b^T``.
    """
    from scipy.linalg import get_blas_funcs  # noqa: PLC0415

    a = np.ascontiguousarray(a)
    b = np.ascontiguousarray(b)
    trsm = get_blas_funcs("trsm", (a, b))
    # side (1: right, as a left solve is posed), lower, trans_a, diag: positional (f2py
    # parses keywords slower, which shows on batches of small matrices, one call each)
    flags = (int(left), int(not lower), int(trans), int(unit))
    if a.ndim == 2:
        return trsm(1.0, a.T, b.T, *flags).T
    if a.dtype.kind != "c" and small_batches.use_loops("trsm", _count(a.shape[:-2]),
                                                       *b.shape[-2:]):
        out = small_batches.trsm_batch(a, b, lower, trans, unit)
        if out is not None:
            return out
    batch = a.shape[:-2]
    fa = a.reshape((math.prod(a.shape[:-2]), *a.shape[-2:]))
    fb = b.reshape((math.prod(b.shape[:-2]), *b.shape[-2:]))
    out = np.empty(fb.shape, b.dtype)
    for i in range(fa.shape[0]):
        out[i] = trsm(1.0, fa[i].T, fb[i].T, *flags).T
    return out.reshape((*batch, *b.shape[-2:]))


def _solve_left(xp: Any, a: Any, b: Any, lower: bool, trans: bool, unit: bool) -> Any:
    """``op(a)^-1 b`` for stacks of triangular ``a``."""
    if xp is np:
        return _trsm_host(a, b, lower, trans, unit)
    # CuPy: cupyx.scipy.linalg.solve_triangular takes the whole batch in one cuBLAS
    # trsmBatched call (the other triangle unread, the diagonal unchecked: inf/NaN at a
    # zero, as XLA's).
    from cupyx.scipy.linalg import solve_triangular  # noqa: PLC0415

    return solve_triangular(a, b, trans=1 if trans else 0, lower=lower,
                            unit_diagonal=unit)


def _trsolve_impl(xp: Any, a: Any, b: Any, *, left_side: bool, lower: bool,
                  transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> Any:
    if b.size == 0 or a.shape[-1] == 0:
        return xp.zeros(b.shape, b.dtype)
    if conjugate_a and a.dtype.kind == "c":
        a = xp.conj(a)  # op(a) = conj(a) or a^H: the solve with the conjugated matrix
    if left_side:
        out = _solve_left(xp, a, b, lower, transpose_a, unit_diagonal)
    elif xp is np and a.ndim == 2:
        out = _trsm_host(a, b, lower, transpose_a, unit_diagonal, left=False)
    else:
        # x op(a) = b  <=>  op(a)^T x^T = b^T
        bt = xp.swapaxes(b, -1, -2)
        out = xp.swapaxes(_solve_left(xp, a, bt, lower, not transpose_a, unit_diagonal),
                          -1, -2)
    return xp.asarray(out, dtype=b.dtype)


triangular_solve_p = Primitive("triangular_solve", abstract_eval=_trsolve_abstract,
                               impl=_trsolve_impl)


def _tri_part(g: Any, lower: bool, unit_diagonal: bool) -> Any:
    """The entries of ``a`` that triangular_solve reads."""
    k = 1 if unit_diagonal else 0
    return _tri(g, lower, -k if lower else k)


def _trsolve_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    a, b = primals
    ta, tb = tangents
    ans = triangular_solve_p.bind(a, b, **params)
    out = None if tb is None else triangular_solve_p.bind(a, tb, **params)
    if ta is not None:
        g = E.neg(_tri_part(ta, params["lower"], params["unit_diagonal"]))
        g = _mT(g) if params["transpose_a"] else g
        g = _cj(g) if params["conjugate_a"] else g
        if params["left_side"]:
            # -op(a)^-1 op(da) x
            da_term = triangular_solve_p.bind(a, _mm(g, ans), **params)
        else:
            # -x op(da) op(a)^-1
            da_term = triangular_solve_p.bind(a, _mm(ans, g), **params)
        out = add_tangents(out, da_term)
    return ans, out


def _trsolve_vjp(ct: Any, primals: Sequence[Any], ans: Any, **params: Any) -> list[Any]:
    a = primals[0]
    flipped = dict(params, transpose_a=not params["transpose_a"])
    ct_b = triangular_solve_p.bind(a, ct, **flipped)
    if params["left_side"]:
        g = E.neg(_mm(ct_b, _mT(ans)))   # cotangent of op(a)
    else:
        g = E.neg(_mm(_mT(ans), ct_b))
    g = _mT(g) if params["transpose_a"] else g
    g = _cj(g) if params["conjugate_a"] else g
    return [_tri_part(g, params["lower"], params["unit_diagonal"]), ct_b]


def _trsolve_batch(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
    a, b = all_batched(args, dims)
    return triangular_solve_p.bind(a, b, **params), 0


triangular_solve_p.jvp, triangular_solve_p.vjp = _trsolve_jvp, _trsolve_vjp
triangular_solve_p.vjp_reads = "x0,y0"
triangular_solve_p.batch = _trsolve_batch


# ---------------------------------------------------------------------- lu


def lu(x: Any) -> list[Any]:
    """LU decomposition with partial pivoting, as ``jax.lax.linalg.lu``: ``lu`` (unit lower
    L below the diagonal, U on and above it), ``pivots`` and ``permutation`` (int32), with
    ``x[..., permutation, :] == L @ U``."""
    return lu_p.bind(x)


def _lu_abstract(x: ShapedArray) -> tuple[ShapedArray, ...]:
    _float_matrix("lu", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    i32 = dtypes.to_dtype(np.int32)
    return (ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), i32),
            ShapedArray((*batch, m), i32))


def _pivots_to_perm(xp: Any, pivots: Any, m: int) -> Any:
    batch = pivots.shape[:-1]
    k = pivots.shape[-1]
    if xp is np:
        # Row swaps on Python lists: cheaper than k vectorized passes for the usual sizes.
        flat_piv = pivots.reshape(math.prod(batch), k).tolist()
        rows = []
        for piv in flat_piv:
            row = list(range(m))
            for i, p in enumerate(piv):
                row[i], row[p] = row[p], row[i]
            rows.append(row)
        return np.asarray(rows, np.int32).reshape((*batch, m))
    # On a device: the same swaps as k batched passes, so the pivots stay there.
    flat_piv = pivots.reshape(math.prod(batch), k)
    nb = flat_piv.shape[0]
    perm = xp.broadcast_to(xp.arange(m, dtype=np.int32), (nb, m)).copy()
    rows_ = xp.arange(nb)
    for i in range(k):
        p = flat_piv[:, i]
        top = perm[:, i].copy()
        perm[:, i] = perm[rows_, p]
        perm[rows_, p] = top
    return perm.reshape((*batch, m))


def lu_generic(xp: Any, x: Any) -> list[Any]:
    """LU with partial pivoting in array code (any array module, batched), for array
    modules without a batched getrf."""
    *batch, m, n = x.shape
    k = min(m, n)
    a = x.reshape((math.prod(batch), m, n)).copy()  # (-1 is ambiguous for 0x0 matrices)
    nb = a.shape[0]
    rows = xp.arange(nb)
    piv = xp.zeros((nb, k), np.int32)
    for j in range(k):
        p = j + xp.argmax(xp.abs(a[:, j:, j]), axis=1)
        piv[:, j] = p
        top = a[rows, j].copy()
        a[rows, j] = a[rows, p]
        a[rows, p] = top
        d = a[:, j, j]
        # A zero pivot means a zero column below it (the pivot is the largest): leave it.
        a[:, j + 1:, j] /= xp.where(d == 0, 1, d)[:, None]
        a[:, j + 1:, j + 1:] -= a[:, j + 1:, j:j + 1] * a[:, j:j + 1, j + 1:]
    pivots = piv.reshape((*batch, k))
    return [a.reshape(x.shape), pivots, _pivots_to_perm(xp, pivots, m)]


def _lu_impl(xp: Any, x: Any) -> list[Any]:
    m, n = x.shape[-2:]
    if xp is np and x.dtype in _HALF:
        # getrf has no half form: f2py would factor a float32 copy and leave x untouched
        # (the unfactored matrix came back as "lu"). Factor in float32, round once.
        lu_, pivots, perm = _lu_impl(xp, x.astype(np.float32))
        return [lu_.astype(x.dtype), pivots, perm]
    if xp is not np or x.size == 0:
        return lu_generic(xp, x)
    if x.dtype.kind != "c" and small_batches.use_loops("lu", _count(x.shape[:-2]), m, n):
        out = small_batches.lu_batch(x)
        if out is not None:
            return list(out)
    from scipy.linalg import get_lapack_funcs  # noqa: PLC0415

    getrf = get_lapack_funcs("getrf", (x,))
    # One copy of the whole stack into column-major matrices, then getrf factors each in
    # place (f2py passes a Fortran-ordered float array through without copying it again).
    fortran = np.swapaxes(x.reshape((-1, m, n)), -1, -2).copy()
    pivots = np.empty((fortran.shape[0], min(m, n)), np.int32)
    for i in range(fortran.shape[0]):
        # info > 0 (a zero pivot) is a valid factorization, as in JAX
        _, pivots[i], _ = getrf(fortran[i].T, overwrite_a=1)
    lu_ = np.swapaxes(fortran, -1, -2).reshape(x.shape)
    pivots = pivots.reshape((*x.shape[:-2], min(m, n)))
    return [lu_, pivots, _pivots_to_perm(xp, pivots, m)]


lu_p = Primitive("lu", abstract_eval=_lu_abstract, impl=_lu_impl, multiple_results=True)


def _lu_factors(lu_: Any) -> tuple[Any, Any]:
    """(l, u): m x m unit lower and n x n upper, padded with identity (JAX's padding)."""
    m, n = get_aval(lu_).shape[-2:]
    k = min(m, n)
    nd = _nd(lu_)
    zero = np.zeros((), get_aval(lu_).dtype)
    lk = S.slice_(lu_, [0] * nd, [*get_aval(lu_).shape[:-1], k])
    pad_l = [(0, 0, 0)] * (nd - 1) + [(0, m - k, 0)]
    l_ = E.add(S.pad(_tri(lk, True, -1), zero, pad_l), _eye_like(lu_, m))
    uk = S.slice_(lu_, [0] * nd, [*get_aval(lu_).shape[:-2], k, n])
    pad_u = [(0, 0, 0)] * (nd - 2) + [(0, n - k, 0), (0, 0, 0)]
    u_eye = np.pad(np.eye(n - k), ((k, 0), (k, 0)))
    u = E.add(S.pad(_tri(uk, False), zero, pad_u), _const_like(u_eye, lu_))
    return l_, u


def _perm_matrix(perm: Any, like: Any) -> Any:
    """P with P[i, j] = (perm[i] == j), in ``like``'s dtype: P @ a == a[perm]."""
    shape = get_aval(perm).shape
    full = (*shape, shape[-1])
    nd = len(full)
    p = S.broadcast_in_dim(perm, full, tuple(range(nd - 1)))
    cols = S.broadcast_in_dim(place_like(np.arange(shape[-1], dtype=np.int32), perm), full,
                              (nd - 1,))
    return E.convert_element_type(E.eq(p, cols), get_aval(like).dtype)


def _lu_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    (x,), (t,) = primals, tangents
    lu_, pivots, perm = lu_p.bind(x)
    if t is None:
        return [lu_, pivots, perm], [None, None, None]
    l_, u = _lu_factors(lu_)
    px = _mm(_perm_matrix(perm, x), t)
    la = triangular_solve(l_, px, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u, la, left_side=False, lower=False)
    dlu = E.add(_mm(l_, _tri(lau, True, -1)), _mm(_tri(lau, False), u))
    return [lu_, pivots, perm], [dlu, None, None]


def _lu_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any]) -> list[Any]:
    ct = cts[0]
    if ct is None:
        return [None]
    lu_, _, perm = outs
    l_, u = _lu_factors(lu_)
    xb = E.add(_tri(_mm(_mT(l_), ct), True, -1), _tri(_mm(ct, _mT(u)), False))
    xb = triangular_solve(u, xb, left_side=False, lower=False, transpose_a=True)
    xb = triangular_solve(l_, xb, left_side=True, lower=True, transpose_a=True,
                          unit_diagonal=True)
    return [_mm(_mT(_perm_matrix(perm, lu_)), xb)]


lu_p.jvp, lu_p.vjp, lu_p.vjp_reads = _lu_jvp, _lu_vjp, "y0,y2"
lu_p.batch = _front_batch(lu_p)


# ---------------------------------------------------------------------- qr


def qr(x: Any, full_matrices: bool = True) -> list[Any]:
    """``[q, r]`` with ``x == q @ r``, as ``jax.lax.linalg.qr`` (LAPACK's signs)."""
    return qr_p.bind(x, full_matrices=bool(full_matrices))


def _qr_abstract(x: ShapedArray, *, full_matrices: bool) -> tuple[ShapedArray, ShapedArray]:
    _float_matrix("qr", x, lapack=True)
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    batch = x.shape[:-2]
    return ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)


def _qr_impl(xp: Any, x: Any, *, full_matrices: bool) -> list[Any]:
    mode = "complete" if full_matrices else "reduced"
    try:
        q, r = xp.linalg.qr(x, mode=mode)
    except Exception:  # noqa: BLE001 - array modules whose qr takes one matrix
        q, r = _flat_batch(xp, lambda a: xp.linalg.qr(a, mode=mode), x, 2)
    return [xp.asarray(q, dtype=x.dtype), xp.asarray(r, dtype=x.dtype)]


qr_p = Primitive("qr", abstract_eval=_qr_abstract, impl=_qr_impl, multiple_results=True)


def _check_qr_differentiable(x: Any, full_matrices: bool) -> None:
    m, n = get_aval(x).shape[-2:]
    if full_matrices and m > n:
        raise NonDifferentiableError(
            f"qr(full_matrices=True) of a {m}x{n} matrix (more rows than columns) is not "
            "differentiable: its last m - n columns of q are not unique; use "
            "full_matrices=False")


def _split_wide(x: Any) -> tuple[Any, Any]:
    """(x[..., :, :m], x[..., :, m:]) of an m x n matrix with m < n."""
    shape = get_aval(x).shape
    m, nd = shape[-2], len(shape)
    left = S.slice_(x, [0] * nd, [*shape[:-1], m])
    right = S.slice_(x, [0] * (nd - 1) + [m], list(shape))
    return left, right


def _qr_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool) -> Any:
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    if dx is None:
        return [q, r], [None, None]
    _check_qr_differentiable(x, full_matrices)
    m, n = get_aval(x).shape[-2:]
    if m < n:
        # x = [a | b], a = q u square: r = [u | q^T b].
        _, b = _split_wide(x)
        da, db = _split_wide(dx)
        u, _ = _split_wide(r)
        dq, du = _qr_jvp_tall(q, u, da)
        dv = E.add(_mm(_H(dq), b), _mm(_H(q), db))
        return [q, r], [dq, S.concatenate([du, dv], _nd(x) - 1)]
    return [q, r], list(_qr_jvp_tall(q, r, dx))


def _qr_jvp_tall(q: Any, r: Any, dx: Any) -> tuple[Any, Any]:
    """JAX's rule (j-towns.github.io/papers/qr-derivative.pdf) for m >= n, reduced; for
    complex matrices ``do`` (skew-Hermitian) also takes the imaginary part of the
    diagonal of ``q^H dx r^-1`` (r's diagonal stays real)."""
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    low = _tri(qt_dx_rinv, True, -1)
    do = E.sub(low, _H(low))
    if _is_complex(dx):
        do = E.add(do, _imag_diag(qt_dx_rinv))
    dq = E.add(_mm(q, E.sub(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(E.sub(qt_dx_rinv, do), r)
    return dq, dr


def _imag_diag(z: Any) -> Any:
    """``i imag(diag(z))`` as a diagonal matrix: ``(z - conj(z)) / 2`` on the diagonal,
    a real-linear map that is its own transpose under JAX's convention."""
    return E.mul(E.mul(E.sub(z, E.conj(z)), 0.5), _eye_like(z))


def _qr_vjp_tall(q: Any, r: Any, qb: Any, rb: Any) -> Any:
    """The transpose of :func:`_qr_jvp_tall` in dx."""
    w = _mm(rb, _mT(r))                 # from dr = (z - do) r
    v = _mm(_mT(q), qb)                 # from dq = q (do - z) + y
    zb = E.sub(w, v)
    dob = E.sub(v, w)
    zb = E.add(zb, _tri(E.sub(dob, _H(dob)), True, -1))   # do = low - low^H
    if _is_complex(q):
        zb = E.add(zb, _imag_diag(dob))
    yb = E.add(qb, _mm(_cj(q), zb))     # z = q^H y, and y itself in dq
    return triangular_solve(r, yb, left_side=False, lower=False, transpose_a=True)


def _qr_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
            full_matrices: bool) -> list[Any]:
    q, r = outs
    (x,) = primals
    _check_qr_differentiable(r, full_matrices)
    qb = cts[0] if cts[0] is not None else zeros_like_aval(get_aval(q))
    rb = cts[1] if cts[1] is not None else zeros_like_aval(get_aval(r))
    m, n = get_aval(r).shape[-2], get_aval(r).shape[-1]
    if get_aval(q).shape[-1] == m and m < n:
        u, v = _split_wide(r)
        ub, vb = _split_wide(rb)
        b = _mm(q, v)
        qb = E.add(qb, _mm(_cj(b), _H(vb)))    # from dv = dq^H b + q^H db
        da = _qr_vjp_tall(q, u, qb, ub)
        return [S.concatenate([da, _mm(_cj(q), vb)], _nd(r) - 1)]
    return [_qr_vjp_tall(q, r, qb, rb)]


qr_p.jvp, qr_p.vjp, qr_p.vjp_reads = _qr_jvp, _qr_vjp, "y"
qr_p.batch = _front_batch(qr_p)


# --------------------------------------------------------------------- svd


def svd(x: Any, full_matrices: bool = True, compute_uv: bool = True) -> list[Any]:
    """``[s, u, vt]`` (or ``[s]``) with ``x == u @ diag(s) @ vt``, singular values in
    descending order (the output order of JAX's ``svd_p``)."""
    return svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def _svd_abstract(x: ShapedArray, *, full_matrices: bool, compute_uv: bool
                  ) -> tuple[ShapedArray, ...]:
    _float_matrix("svd", x, lapack=True)
    m, n = x.shape[-2:]
    k = min(m, n)
    batch = x.shape[:-2]
    s = ShapedArray((*batch, k), _real_dtype(x.dtype))
    if not compute_uv:
        return (s,)
    ku, kv = (m, n) if full_matrices else (k, k)
    return s, ShapedArray((*batch, m, ku), x.dtype), ShapedArray((*batch, kv, n), x.dtype)


def _real_dtype(dt: Any) -> Any:
    """The dtype of a complex dtype's parts (real dtypes as they are)."""
    return np.finfo(dt).dtype if np.dtype(dt).kind == "c" else np.dtype(dt)


def _svd_impl(xp: Any, x: Any, *, full_matrices: bool, compute_uv: bool) -> list[Any]:
    if x.size == 0:
        outs = [xp.zeros(a.shape, a.dtype) for a in _svd_abstract(
            ShapedArray(x.shape, x.dtype), full_matrices=full_matrices,
            compute_uv=compute_uv)]
        if compute_uv and full_matrices:
            m, n = x.shape[-2:]
            outs[1] = outs[1] + xp.eye(m, dtype=x.dtype)
            outs[2] = outs[2] + xp.eye(n, dtype=x.dtype)
        return outs
    rdt = _real_dtype(x.dtype)
    if not compute_uv:
        return [xp.asarray(xp.linalg.svd(x, compute_uv=False), dtype=rdt)]
    u, s, vt = xp.linalg.svd(x, full_matrices=full_matrices)
    return [xp.asarray(s, dtype=rdt), xp.asarray(u, dtype=x.dtype),
            xp.asarray(vt, dtype=x.dtype)]


svd_p = Primitive("svd", abstract_eval=_svd_abstract, impl=_svd_impl, multiple_results=True)


def _svd_parts(x: Any) -> tuple[Any, Any, Any, Any]:
    """(s, u, v, F) of the reduced SVD, F[i, j] = 1 / (s_j^2 - s_i^2) off the diagonal."""
    s, u, vt = svd_p.bind(x, full_matrices=False, compute_uv=True)
    k = get_aval(s).shape[-1]
    shape = (*get_aval(s).shape, k)
    nd = len(shape)
    sj = S.broadcast_in_dim(s, shape, (*range(nd - 2), nd - 1))
    si = S.broadcast_in_dim(s, shape, tuple(range(nd - 1)))
    eye = _const_like(np.eye(k), sj)
    diffs = E.mul(E.add(sj, si), E.sub(sj, si))
    f = E.sub(E.reciprocal(E.add(diffs, eye)), eye)
    return s, u, _H(vt), f


def _check_svd_differentiable(x: Any, full_matrices: bool, compute_uv: bool) -> None:
    m, n = get_aval(x).shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NonDifferentiableError(
            f"svd(full_matrices=True) of a {m}x{n} matrix is not differentiable: the "
            "singular vectors beyond min(m, n) are not unique; use full_matrices=False")


def _svd_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, full_matrices: bool,
             compute_uv: bool) -> Any:
    (x,), (dx,) = primals, tangents
    outs = svd_p.bind(x, full_matrices=full_matrices, compute_uv=compute_uv)
    if dx is None:
        return outs, [None] * len(outs)
    _check_svd_differentiable(x, full_matrices, compute_uv)
    s, u, v, f = _svd_parts(x)
    cx = _is_complex(x)
    ds_mat = _mm(_mm(_H(u), dx), v)
    ds = _diag_part(ds_mat)
    if cx:
        ds = E.real(ds)
    if not compute_uv:
        return outs, [ds]
    if cx:  # the real s and F meet the complex matrices in their dtype
        s, f = _as_dtype_of(s, x), _as_dtype_of(f, x)
    dss = _scale_cols(ds_mat, s)       # dS diag(s)
    sds = _scale_rows(ds_mat, s)       # diag(s) dS
    inner_u = E.mul(f, E.add(dss, _H(dss)))
    if cx:
        # JAX's dUdV_diag: i imag(dS_ii) / s_i on the diagonal (the phase that keeps
        # U diag(s) V^H = A; zero for real matrices)
        inner_u = E.add(inner_u, _scale_cols(_imag_diag(ds_mat), _safe_inverse(s)))
    du = _mm(u, inner_u)
    dv = _mm(v, E.mul(f, E.add(sds, _H(sds))))
    m, n = get_aval(x).shape[-2:]
    inv_s = E.reciprocal(s)
    if m > n:
        dav = _mm(dx, v)
        du = E.add(du, _scale_cols(E.sub(dav, _mm(u, _mm(_H(u), dav))), inv_s))
    if n > m:
        dahu = _mm(_H(dx), u)
        dv = E.add(dv, _scale_cols(E.sub(dahu, _mm(v, _mm(_H(v), dahu))), inv_s))
    return outs, [ds, du, _H(dv)]


def _safe_inverse(s: Any) -> Any:
    """1 / s, 0 where s is 0 (JAX's s_inv)."""
    zero = E.convert_element_type(E.eq(s, place_like(np.zeros((), get_aval(s).dtype), s)),
                                  get_aval(s).dtype)
    return E.sub(E.reciprocal(E.add(s, zero)), zero)


def _svd_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
             full_matrices: bool, compute_uv: bool) -> list[Any]:
    (x,) = primals
    _check_svd_differentiable(x, full_matrices, compute_uv)
    s, u, v, f = _svd_parts(x)
    cx = _is_complex(x)
    sb = cts[0]
    if cx:
        # The transpose of the jvp's complex map (JAX's convention: conj is its own
        # transpose, products transpose without conjugating): dS = U^H dA V gives
        # dA_bar = conj(U) dS_bar V^T.
        s, f = _as_dtype_of(s, x), _as_dtype_of(f, x)
        if sb is not None:
            sb = _as_dtype_of(sb, x)
    dsb = None if sb is None else _diag_embed(sb, u)
    m, n = get_aval(x).shape[-2:]
    inv_s = E.reciprocal(s)
    extra = None
    if compute_uv and cts[1] is not None:
        ub = cts[1]
        kb = _mm(_mT(u), ub)
        h = E.mul(f, kb)
        dsb = add_tangents(dsb, _scale_cols(E.add(h, _H(h)), s))
        if cx:
            dsb = add_tangents(dsb, _scale_cols(_imag_diag(kb), _safe_inverse(s)))
        if m > n:
            proj = E.sub(ub, _mm(_cj(u), _mm(_mT(u), ub)))
            extra = _mm(_scale_cols(proj, inv_s), _mT(v))
    if compute_uv and cts[2] is not None:
        vb = _H(cts[2])
        h2 = E.mul(f, _mm(_mT(v), vb))
        dsb = add_tangents(dsb, _scale_rows(E.add(h2, _H(h2)), s))
        if n > m:
            proj = E.sub(vb, _mm(_cj(v), _mm(_mT(v), vb)))
            extra = add_tangents(extra, _H(_mm(_scale_cols(proj, inv_s), _mT(u))))
    out = None if dsb is None else _mm(_mm(_cj(u), dsb), _mT(v))
    return [add_tangents(out, extra)]


svd_p.jvp, svd_p.vjp, svd_p.vjp_reads = _svd_jvp, _svd_vjp, "x0"
svd_p.batch = _front_batch(svd_p)


# -------------------------------------------------------------------- eigh


def eigh(x: Any, lower: bool = True) -> list[Any]:
    """``[v, w]``: eigenvectors (columns) and ascending eigenvalues of the symmetric
    matrices that the ``lower`` (or upper) triangle of ``x`` stands for."""
    return eigh_p.bind(x, lower=bool(lower))


def _eigh_abstract(x: ShapedArray, *, lower: bool) -> tuple[ShapedArray, ShapedArray]:
    _float_matrix("eigh", x, square=True, lapack=True)
    return ShapedArray(x.shape, x.dtype), ShapedArray(x.shape[:-1], _real_dtype(x.dtype))


def _eigh_impl(xp: Any, x: Any, *, lower: bool) -> list[Any]:
    rdt = _real_dtype(x.dtype)
    if x.size == 0:
        return [xp.zeros(x.shape, x.dtype), xp.zeros(x.shape[:-1], rdt)]
    w, v = xp.linalg.eigh(x, UPLO="L" if lower else "U")
    return [xp.asarray(v, dtype=x.dtype), xp.asarray(w, dtype=rdt)]


eigh_p = Primitive("eigh", abstract_eval=_eigh_abstract, impl=_eigh_impl,
                   multiple_results=True)


def _eigh_f(w: Any) -> Any:
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (JAX's Fmat)."""
    n = get_aval(w).shape[-1]
    shape = (*get_aval(w).shape, n)
    nd = len(shape)
    wj = S.broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1))
    wi = S.broadcast_in_dim(w, shape, tuple(range(nd - 1)))
    eye = _const_like(np.eye(n), wj)
    return E.sub(E.reciprocal(E.add(eye, E.sub(wj, wi))), eye)


def _eigh_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, lower: bool) -> Any:
    (x,), (t,) = primals, tangents
    v, w = eigh_p.bind(x, lower=lower)
    if t is None:
        return [v, w], [None, None]
    # V^H dA V: its real diagonal is dw, and V (F * it) is dv (F's zero diagonal keeps
    # diag(V^H dV) = 0, JAX's choice of the eigenvectors' phases)
    vt_a_v = _mm(_mm(_H(v), _reflect(t, lower)), v)
    dv = _mm(v, E.mul(_as_dtype_of(_eigh_f(w), v), vt_a_v))
    dw = _diag_part(vt_a_v)
    return [v, w], [dv, E.real(dw) if _is_complex(dw) else dw]


def _eigh_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
              lower: bool) -> list[Any]:
    v, w = outs
    vb, wb = cts
    inner = None if wb is None else _diag_embed(_as_dtype_of(wb, v), v)
    if vb is not None:
        inner = add_tangents(inner, E.mul(_as_dtype_of(_eigh_f(w), v), _mm(_mT(v), vb)))
    # the transpose of dA -> V^H dA V is conj(V) (.) V^T
    g = _mm(_mm(_cj(v), inner), _mT(v))
    return [_reflect_transpose(g, lower)]


eigh_p.jvp, eigh_p.vjp, eigh_p.vjp_reads = _eigh_jvp, _eigh_vjp, "y"
eigh_p.batch = _front_batch(eigh_p)


# --------------------------------------------------------------------- eig


def eig(x: Any, compute_left_eigenvectors: bool = False,
        compute_right_eigenvectors: bool = True) -> list[Any]:
    """``[w, vl?, vr?]``: the (complex) eigenvalues, unordered as LAPACK's geev gives them,
    then the left and right eigenvectors (unit-norm columns) that were asked for."""
    return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                      compute_right_eigenvectors=bool(compute_right_eigenvectors))


def _eig_abstract(x: ShapedArray, *, compute_left_eigenvectors: bool,
                  compute_right_eigenvectors: bool) -> tuple[ShapedArray, ...]:
    if dtypes.kind(x.dtype) not in "fc":
        raise DTypeError(f"eig needs a floating point or complex operand, got {x.dtype}; "
                         "convert integers with .astype(float)")
    _not_half("eig", x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"The input to eig must be a square matrix. Got shape {x.shape}.")
    cdt = np.result_type(x.dtype, np.complex64)
    n_vec = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return (ShapedArray(x.shape[:-1], cdt), *[ShapedArray(x.shape, cdt)] * n_vec)


def _eig_impl(xp: Any, x: Any, *, compute_left_eigenvectors: bool,
              compute_right_eigenvectors: bool) -> list[Any]:
    if xp is not np and x.size:
        try:
            return _eig_device(xp, x, compute_left_eigenvectors, compute_right_eigenvectors)
        except (RuntimeError, NotImplementedError):
            pass  # a CUDA without cusolverDnXgeev (before 12.6), or ROCm: LAPACK on the host
    host = np.asarray(x.get() if hasattr(x, "get") else x)
    cdt = np.result_type(host.dtype, np.complex64)
    if host.size == 0:
        w, vr = np.zeros(host.shape[:-1], cdt), np.zeros(host.shape, cdt)
        vl = vr
    else:
        w, vr = np.linalg.eig(host)
        # Left eigenvectors are the conjugated rows of vr's inverse, scaled to unit norm.
        vl = np.conj(np.swapaxes(np.linalg.inv(vr), -1, -2)) if compute_left_eigenvectors \
            else vr
        vl = vl / np.linalg.norm(vl, axis=-2, keepdims=True)
    outs = [w] + [vl] * compute_left_eigenvectors + [vr] * compute_right_eigenvectors
    return [xp.asarray(o.astype(cdt)) for o in outs]


def _eig_device(xp: Any, x: Any, left: bool, right: bool) -> list[Any]:
    """eig on the device: cupy.linalg.eig (cusolverDnXgeev, always complex), the left
    eigenvectors from the inverse of the right ones, as on the host."""
    cdt = np.result_type(x.dtype, np.complex64)
    w, vr = xp.linalg.eig(x)
    w, vr = w.astype(cdt, copy=False), vr.astype(cdt, copy=False)
    outs = [w]
    if left:
        vl = xp.conj(xp.swapaxes(xp.linalg.inv(vr), -1, -2))
        outs.append(vl / xp.linalg.norm(vl, axis=-2, keepdims=True))
    if right:
        outs.append(vr)
    return outs


eig_p = Primitive("eig", abstract_eval=_eig_abstract, impl=_eig_impl, multiple_results=True)

_EIGVEC_DERIVS = ("Derivatives of non-symmetric eigenvectors are only valid under assumptions "
                  "on the input that cannot be checked (see jax issue 2748), so eig's "
                  "eigenvectors have none; differentiate jnp.linalg.eigvals instead, or use "
                  "eigh for symmetric matrices.")


def _eigvals_linear_parts(x: Any) -> tuple[Any, Any, Any]:
    """``(vl^H, vr, 1 / diag(vl^H vr))`` at ``x``, constants of the eigenvalues' derivative
    dw_i = (vl^H dx vr)_ii / (vl^H vr)_ii."""
    # Not stop_gradient'ed: a second derivative goes through the eigenvectors and raises,
    # as in JAX, rather than silently dropping their terms.
    _, vl, vr = eig_p.bind(x, compute_left_eigenvectors=True,
                           compute_right_eigenvectors=True)
    vlh = E.conj(_mT(vl))
    return vlh, vr, E.reciprocal(_diag_part(_mm(vlh, vr)))


def _eig_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    (x,), (t,) = primals, tangents
    outs = eig_p.bind(x, **params)
    if t is None:
        return outs, [None] * len(outs)
    if len(outs) > 1:
        raise NonDifferentiableError(_EIGVEC_DERIVS)
    vlh, vr, scale = _eigvals_linear_parts(x)
    cdt = get_aval(vr).dtype
    dw = E.mul(_diag_part(_mm(_mm(vlh, E.convert_element_type(t, cdt)), vr)), scale)
    return outs, [dw]


def _eig_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any],
             **params: Any) -> list[Any]:
    if any(ct is not None for ct in cts[1:]):
        raise NonDifferentiableError(_EIGVEC_DERIVS)
    # The transpose of the eigenvalues' linear jvp (JAX reaches the same by linearizing).
    (x,) = primals
    vlh, vr, scale = _eigvals_linear_parts(x)
    g = _mm(_mm(_mT(vlh), _diag_embed(E.mul(cts[0], scale))), _mT(vr))
    return [g if dtypes.kind(get_aval(x).dtype) == "c" else E.real(g)]


eig_p.jvp, eig_p.vjp, eig_p.vjp_reads = _eig_jvp, _eig_vjp, "x0"
eig_p.batch = _front_batch(eig_p)


# ------------------------------------------------------- backend descriptions

for _p, _node, _fn in ((cholesky_p, "LinalgCholeskyEx", cholesky),
                       (triangular_solve_p, "LinalgSolveTriangular", triangular_solve),
                       (lu_p, "LinalgLuFactorEx", lu), (qr_p, "LinalgQr", qr),
                       (svd_p, "LinalgSvd", svd), (eigh_p, "LinalgEigh", eigh),
                       (eig_p, "LinalgEig", eig)):
    _p.describe(lax=_p.name, fusion=None, cuda=None, ufunc=None, torch_method=None,
                torch_node=_node, lax_fn=_fn)

__all__ = ["place_like", "cholesky", "cholesky_p", "triangular_solve", "triangular_solve_p",
           "lu", "lu_p", "lu_generic", "qr", "qr_p", "svd", "svd_p", "eigh", "eigh_p", "eig",
           "eig_p"]
