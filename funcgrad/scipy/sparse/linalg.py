"""``jax.scipy.sparse.linalg``: the Krylov solvers ``cg``, ``gmres`` and ``bicgstab`` for a
linear operator given as a matrix or a function, on right-hand sides that are arrays or
pytrees of arrays. Each solve is a ``lax.while_loop`` (so it runs under ``jit``) wrapped
in ``lax.custom_linear_solve``: derivatives are implicit (one more solve), never through
the iterations, as in JAX.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.sparse.linalg import cg
>>> x, info = cg(jnp.array([[4.0, 1.0], [1.0, 3.0]]), jnp.array([1.0, 2.0]))
>>> x.round(4), info
(Array([0.0909, 0.6364], dtype=float32), None)
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.array import Array
from funcgrad.lax._solvers import custom_linear_solve
from funcgrad.numpy._core import cast, typed
from funcgrad.scipy import linalg as _sla
from funcgrad.tree_util import (
    Partial,
    tree_leaves,
    tree_map,
    tree_reduce,
    tree_structure,
)

__all__ = ["bicgstab", "cg", "gmres"]

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_vdot = partial(jnp.vdot, precision=lax.Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=lax.Precision.HIGHEST)


def _vdot_real_part(x: Any, y: Any) -> Any:
    # Every use computes z^H M z with M Hermitian positive definite: a real number, so
    # the real-imaginary cross terms are dropped.
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x: Any) -> Any:
    xs = tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar: Any, tree: Any) -> Any:
    return tree_map(partial(operator.mul, scalar), tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


@Partial
def _identity(x: Any) -> Any:
    return x


def _lattice(tree: Any) -> tuple[Any, bool]:
    return dtypes.lattice_result(*(typed(leaf) for leaf in tree_leaves(tree)))


def _normalize_matvec(f: Any) -> Callable[[Any], Any]:
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _cg_solve(A: Any, b: Any, x0: Any = None, *, maxiter: int, tol: float = 1e-5,  # noqa: N803
              atol: float = 0.0, M: Any = _identity) -> Any:  # noqa: N803
    # SciPy's non-legacy tolerance: ||r|| <= max(tol * ||b||, atol).
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value: Any) -> Any:
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value: Any) -> Any:
        x, r, gamma, p, k = value
        Ap = A(p)  # noqa: N806
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(A: Any, b: Any, x0: Any = None, *, maxiter: int,  # noqa: N803
                    tol: float = 1e-5, atol: float = 0.0, M: Any = _identity) -> Any:  # noqa: N803
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value: Any) -> Any:
        _, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        # k < 0 marks a breakdown.
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value: Any) -> Any:
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(partial(jnp.where, exit_early), _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    rho0 = alpha0 = omega0 = cast(1, *_lattice(b))
    x_final, *_ = lax.while_loop(cond_fun, body_fun,
                                 (x0, r0, r0, alpha0, omega0, rho0, r0, r0, 0))
    return x_final


def _shapes(tree: Any) -> list[tuple[int, ...]]:
    return [np.shape(leaf) for leaf in tree_leaves(tree)]


def _isolve(solver: Callable[..., Any], A: Any, b: Any, x0: Any = None, *,  # noqa: N803
            tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
            M: Any = None, check_symmetric: bool = False) -> tuple[Any, None]:  # noqa: N803
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = tree_map(jnp.asarray, (b, x0))
    if maxiter is None:
        maxiter = 10 * sum(leaf.size for leaf in tree_leaves(b))  # as SciPy
    if M is None:
        M = _identity  # noqa: N806
    A = _normalize_matvec(A)  # noqa: N806
    M = _normalize_matvec(M)  # noqa: N806
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")
    isolve_solve = partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # A real positive-definite operator is symmetric.
    symmetric = (all(not np.issubdtype(leaf.dtype, np.complexfloating)
                     for leaf in tree_leaves(b)) if check_symmetric else False)
    x = custom_linear_solve(A, b, solve=isolve_solve,
                            transpose_solve=isolve_solve,
                            symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:  # noqa: N803
    """Solve ``A x = b`` by (preconditioned) conjugate gradients, ``A`` Hermitian positive
    definite: a matrix, a matmul-capable object or a function ``x -> A x``. Stops when
    ``norm(residual) <= max(tol * norm(b), atol)`` or after ``maxiter`` steps (default
    ``10 * size``). Returns ``(x, None)``; derivatives solve with ``cg`` again.

    >>> import funcgrad.numpy as jnp
    >>> x, _ = cg(lambda t: {"a": 2.0 * t["a"]}, {"a": jnp.ones(2)})
    >>> x["a"].tolist()
    [0.5, 0.5]
    """
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def _safe_normalize(x: Any, thresh: Any = None) -> tuple[Any, Any]:
    # A norm at or below `thresh` (default: machine epsilon) counts as zero.
    norm = _norm(x)
    dtype, weak = _lattice(x)
    if thresh is None:
        thresh = jnp.finfo(norm.dtype).eps
    thresh = thresh.astype(dtype).real
    use_norm = norm > thresh
    norm_cast = cast(norm, dtype, weak)
    normalized_x = tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized_x, jnp.where(use_norm, norm, 0.0)


def _project_on_columns(A: Any, v: Any) -> Any:  # noqa: N803
    v_proj = tree_map(lambda X, y: _einsum("...n,...->n", X.conj(), y), A, v)  # noqa: N803
    return tree_reduce(operator.add, v_proj)


def _iterative_classical_gram_schmidt(Q: Any, x: Any, xnorm: Any,  # noqa: N803
                                      max_iterations: int = 2) -> tuple[Any, Any]:
    # "Twice is enough" (Giraud et al.): repeat while ||r|| < ||x|| / sqrt(2).
    Q0 = tree_leaves(Q)[0]  # noqa: N806
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    q = x
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body_function(carry: Any) -> Any:
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        Qh = tree_map(lambda X: _dot(X, h), Q)  # noqa: N806, N803
        q = _sub(q, Qh)
        r = _add(r, h)

        def qnorm_cond(carry: Any) -> Any:
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry: Any) -> Any:
            k, _, q, qnorm_scaled = carry
            _, qn = _safe_normalize(q)
            return (k, False, q, qn / jnp.sqrt(2.0))

        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm,
                                               (k, True, q, qnorm_scaled))
        return (k + 1, q, r, qnorm_scaled)

    def cond_function(carry: Any) -> Any:
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body_function((0, q, r, xnorm_scaled))
    k, q, r, _ = lax.while_loop(cond_function, body_function, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(k: Any, A: Any, M: Any, V: Any, H: Any  # noqa: N803
                           ) -> tuple[Any, Any, Any]:
    # The k'th Arnoldi step: A(M(V[:, k])) orthonormalized into V[:, k+1], its overlaps
    # into H[k, :]; a new vector within eps of the span is an invariant subspace (zero).
    dtype, _ = _lattice(V)
    eps = jnp.finfo(dtype).eps
    v = tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)  # noqa: N806, N803
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)  # noqa: N806
    return V, H, v_norm_1 == 0.


def _rotate_vectors(H: Any, i: Any, cs: Any, sn: Any) -> Any:  # noqa: N803
    x1, y1 = H[i], H[i + 1]
    x2 = cs.conj() * x1 - sn.conj() * y1
    y2 = sn * x1 + cs * y1
    return H.at[i].set(x2).at[i + 1].set(y2)


def _givens_rotation(a: Any, b: Any) -> tuple[Any, Any]:
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row: Any, givens: Any, k: Any) -> tuple[Any, Any]:  # noqa: N803
    # The stored rotations givens[:k], then a new one that zeroes H_row[k + 1].
    def apply_ith_rotation(i: Any, row: Any) -> Any:
        return _rotate_vectors(row, i, *givens[i, :])

    R_row = lax.fori_loop(0, k, apply_ith_rotation, H_row)  # noqa: N806
    factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(jnp.stack(factors))
    return _rotate_vectors(R_row, k, *factors), givens


def _gmres_incremental(A: Any, b: Any, x0: Any, unit_residual: Any,  # noqa: N803
                       residual_norm: Any, ptol: Any, restart: int, M: Any  # noqa: N803
                       ) -> tuple[Any, Any, Any]:
    # One restart, building the QR factorization of the Hessenberg matrix by Givens
    # rotations during the Arnoldi process (early exit on the free residual estimate).
    V = tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),  # noqa: N806
                 unit_residual)
    dtype = dtypes.result_type(*tree_leaves(b))
    # eye, not zeros: an early exit leaves a nonsingular triangle.
    R = jnp.eye(restart, restart + 1, dtype=dtype)  # noqa: N806
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = jnp.zeros((restart + 1), dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry: Any) -> Any:
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry: Any) -> Any:
        k, _, V, R, beta_vec, givens = carry  # noqa: N806
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)  # noqa: N806
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)  # noqa: N806
        R = R.at[k, :].set(R_row)  # noqa: N806
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        return k + 1, abs(beta_vec[k + 1]), V, R, beta_vec, givens

    carry = lax.while_loop(loop_cond, arnoldi_qr_step,
                           (0, residual_norm, V, R, beta_vec, givens))
    _, residual_norm, V, R, beta_vec, _ = carry  # noqa: N806
    y = _sla.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)  # noqa: N803
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _lstsq(a: Any, b: Any) -> Any:
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return _sla.solve(a2, b2, assume_a="pos")


def _gmres_batched(A: Any, b: Any, x0: Any, unit_residual: Any,  # noqa: N803
                   residual_norm: Any, ptol: Any, restart: int, M: Any  # noqa: N803
                   ) -> tuple[Any, Any, Any]:
    # One restart: the whole Arnoldi basis, then one dense least-squares solve.
    del ptol
    V = tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),  # noqa: N806
                 unit_residual)
    dtype, weak = _lattice(b)
    H = cast(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak)  # noqa: N806

    def loop_cond(carry: Any) -> Any:
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry: Any) -> Any:
        V, H, _, k = carry  # noqa: N806
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)  # noqa: N806
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, (V, H, False, 0))  # noqa: N806
    beta_vec = jnp.zeros((restart + 1,), dtype=H.dtype).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)  # noqa: N803
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _gmres_solve(A: Any, b: Any, x0: Any, atol: Any, ptol: Any, restart: int,  # noqa: N803
                 maxiter: int, M: Any, gmres_func: Callable[..., Any]) -> Any:  # noqa: N803
    # Restarts until norm(M(b - A x)) <= atol (between restarts) or maxiter restarts.
    residual = M(_sub(b, A(x0)))
    unit_residual, residual_norm = _safe_normalize(residual)

    def cond_fun(value: Any) -> Any:
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value: Any) -> Any:
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm,
                                                     ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    x_final, _, _, _ = lax.while_loop(cond_fun, body_fun,
                                      (x0, 0, unit_residual, residual_norm))
    return x_final


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
          restart: int = 20, maxiter: int | None = None, M: Any = None,  # noqa: N803
          solve_method: str = "batched") -> tuple[Any, Any]:
    """Solve ``A x = b`` by restarted GMRES, for any (nonsymmetric) operator ``A``: a
    matrix, a matmul-capable object or a function. ``restart`` is the Krylov dimension
    per restart, ``maxiter`` the number of restarts (default ``10 * size``);
    ``solve_method`` is ``"batched"`` (one least-squares solve per restart) or
    ``"incremental"`` (Givens QR as it goes, exiting early). Returns ``(x, info)``, info
    ``-1`` where ``x`` is NaN and ``0`` otherwise.

    >>> import funcgrad.numpy as jnp
    >>> x, info = gmres(jnp.array([[2.0, 1.0], [0.0, 3.0]]), jnp.array([3.0, 3.0]))
    >>> x.round(4).tolist(), int(info)
    ([1.0, 1.0], 0)
    """
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    if M is None:
        M = _identity  # noqa: N806
    A = _normalize_matvec(A)  # noqa: N806
    M = _normalize_matvec(M)  # noqa: N806
    b, x0 = tree_map(jnp.asarray, (b, x0))
    size = sum(leaf.size for leaf in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # as SciPy
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError("x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    b_norm = _norm(b)
    atol_ = jnp.maximum(tol * b_norm, atol)
    Mb_norm = _norm(M(b))  # noqa: N806
    ptol = Mb_norm * jnp.minimum(1.0, atol_ / b_norm)
    if solve_method == "incremental":
        gmres_func = _gmres_incremental
    elif solve_method == "batched":
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")

    def _solve(A: Any, b: Any) -> Any:  # noqa: N803
        return _gmres_solve(A, b, x0, atol_, ptol, restart, maxiter, M, gmres_func)

    x = custom_linear_solve(A, b, solve=_solve, transpose_solve=_solve)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,  # noqa: N803
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:  # noqa: N803
    """Solve ``A x = b`` by BiCGSTAB, for any (nonsymmetric) operator ``A``: a matrix, a
    matmul-capable object or a function. Tolerances and ``maxiter`` as ``cg``; returns
    ``(x, None)``; derivatives solve with ``bicgstab`` again.

    >>> import funcgrad.numpy as jnp
    >>> x, _ = bicgstab(jnp.array([[2.0, 1.0], [0.0, 3.0]]), jnp.array([3.0, 3.0]))
    >>> x.round(4).tolist()
    [1.0, 1.0]
    """
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter,
                   M=M)
