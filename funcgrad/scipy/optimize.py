"""``jax.scipy.optimize``: ``minimize`` by BFGS (and JAX's experimental L-BFGS) with the
strong-Wolfe line search of Nocedal and Wright, all in ``lax.while_loop`` so that it
traces under ``jit``. The iteration is JAX's step for step (same branch selections by
masking, same counters), so ``x``, ``nit``, ``nfev`` and ``status`` agree with JAX's.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.optimize import minimize
>>> res = minimize(lambda x: jnp.sum((x - 1.0) ** 2), jnp.zeros(2), method="BFGS")
>>> res.x.round(4).tolist(), bool(res.success)
([1.0, 1.0], True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.numpy._core import promote_inexact
from funcgrad.transforms.vjp import value_and_grad

__all__ = ["OptimizeResults", "minimize"]

Array = Any

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_einsum = partial(jnp.einsum, precision=lax.Precision.HIGHEST)


class OptimizeResults(NamedTuple):
    """Object holding optimization results (JAX's fields and their meaning).

    ``status``: 0 converged, 1 max BFGS iterations reached, 3 zoom failed, 4 saddle point
    reached, 5 max line search iterations reached, -1 undefined.

    >>> OptimizeResults._fields[:3]
    ('x', 'success', 'status')
    """

    x: Array
    success: bool | Array
    status: int | Array
    fun: Array
    jac: Array
    hess_inv: Array | None
    nfev: int | Array
    njev: int | Array
    nit: int | Array


# ---------------------------------------------------------------- line search


def _cubicmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array, c: Array,
              fc: Array) -> Array:
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    C = fpa  # noqa: N806
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
    A, B = _dot(d1, d2) / denom  # noqa: N806
    radical = B * B - 3. * A * C
    return a + (-B + jnp.sqrt(radical)) / (3. * A)


def _quadmin(a: Array, fa: Array, fpa: Array, b: Array, fb: Array) -> Array:
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)  # noqa: N806
    return a - fpa / (2. * B)


def _binary_replace(bit: Array, original: dict[str, Any], new: dict[str, Any],
                    keys: Any = None) -> dict[str, Any]:
    keys = new.keys() if keys is None else keys
    return {k: jnp.where(bit, new[k], original[k]) for k in keys}


class _ZoomState(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(restricted: Callable[[Any], Any], wolfe_one: Callable[..., Any],
          wolfe_two: Callable[..., Any], a_lo: Any, phi_lo: Any, dphi_lo: Any, a_hi: Any,
          phi_hi: Any, dphi_hi: Any, g_0: Any, pass_through: Any) -> _ZoomState:
    # Algorithm 3.6 (Nocedal & Wright): cubic, then quadratic, then bisection steps. Both
    # zooms of a line-search step are always traced; `pass_through` skips the unused one.
    state = _ZoomState(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo,
                       dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
                       a_rec=(a_lo + a_hi) / 2., phi_rec=(phi_lo + phi_hi) / 2.,
                       a_star=1., phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
                       nfev=0, ngev=0)
    delta1, delta2 = 0.2, 0.1

    def body(state: _ZoomState) -> _ZoomState:
        dalpha = state.a_hi - state.a_lo
        a = jnp.minimum(state.a_hi, state.a_lo)
        b = jnp.maximum(state.a_hi, state.a_lo)
        cchk = delta1 * dalpha
        qchk = delta2 * dalpha
        # An interval this small stops the search unsatisfied, and so the minimization.
        threshold = jnp.where(jnp.finfo(jnp.asarray(dalpha).dtype).bits < 64, 1e-5, 1e-10)
        state = state._replace(failed=state.failed | (dalpha <= threshold))

        a_j_cubic = _cubicmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                              state.phi_hi, state.a_rec, state.phi_rec)
        use_cubic = (state.j > 0) & (a_j_cubic > a + cchk) & (a_j_cubic < b - cchk)
        a_j_quad = _quadmin(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                            state.phi_hi)
        use_quad = (~use_cubic) & (a_j_quad > a + qchk) & (a_j_quad < b - qchk)
        a_j_bisection = (state.a_lo + state.a_hi) / 2.
        use_bisection = (~use_cubic) & (~use_quad)

        a_j = jnp.where(use_cubic, a_j_cubic, state.a_rec)
        a_j = jnp.where(use_quad, a_j_quad, a_j)
        a_j = jnp.where(use_bisection, a_j_bisection, a_j)

        phi_j, dphi_j, g_j = restricted(a_j)
        phi_j = phi_j.astype(jnp.asarray(state.phi_lo).dtype)
        dphi_j = dphi_j.astype(jnp.asarray(state.dphi_lo).dtype)
        g_j = g_j.astype(jnp.asarray(state.g_star).dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= state.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (state.a_hi - state.a_lo) >= 0.) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)

        state = state._replace(**_binary_replace(
            hi_to_j, state._asdict(),
            dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=state.a_hi,
                 phi_rec=state.phi_hi)))
        state = state._replace(done=star_to_j | state.done, **_binary_replace(
            star_to_j, state._asdict(),
            dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)))
        state = state._replace(**_binary_replace(
            hi_to_lo, state._asdict(),
            dict(a_hi=state.a_lo, phi_hi=state.phi_lo, dphi_hi=state.dphi_lo,
                 a_rec=state.a_hi, phi_rec=state.phi_hi)))
        state = state._replace(**_binary_replace(
            lo_to_j & ~hi_to_lo, state._asdict(), dict(a_rec=state.a_lo,
                                                       phi_rec=state.phi_lo)))
        state = state._replace(**_binary_replace(
            lo_to_j, state._asdict(), dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)))
        state = state._replace(j=state.j + 1)
        # JAX's cutoff (higher than SciPy's 10).
        return state._replace(failed=state.failed | (state.j >= 30))

    return lax.while_loop(lambda s: (~s.done) & (~pass_through) & (~s.failed), body, state)


class _LineSearchState(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class _LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _line_search(f: Callable[[Any], Any], xk: Any, pk: Any, old_fval: Any = None,
                 old_old_fval: Any = None, gfk: Any = None, c1: float = 1e-4,
                 c2: float = 0.9, maxiter: int = 20) -> _LineSearchResults:
    # Algorithm 3.5 (Nocedal & Wright) for the strong Wolfe conditions; the step doubles
    # (no amax) as in SciPy.
    xk, pk = promote_inexact(xk, pk)

    def restricted(t: Any) -> tuple[Any, Any, Any]:
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(_dot(g, pk)), g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted(0)
    else:
        phi_0 = old_fval
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start_value: Any = jnp.where(candidate > 1, 1.0, candidate)
    else:
        start_value = 1

    def wolfe_one(a_i: Any, phi_i: Any) -> Any:
        return phi_i > phi_0 + c1 * a_i * dphi_0  # the negation of W1

    def wolfe_two(dphi_i: Any) -> Any:
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    fresh = old_fval is None or gfk is None
    state = _LineSearchState(
        done=jnp.array(False, dtype=bool), failed=jnp.array(False, dtype=bool),
        # Wright and Nocedal start at 1 (SciPy at 0, scipy/scipy#12157).
        i=1, a_i1=0., phi_i1=phi_0, dphi_i1=dphi_0, nfev=1 if fresh else 0,
        ngev=1 if fresh else 0, a_star=0., phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(state: _LineSearchState) -> _LineSearchState:
        a_i = jnp.where(state.i == 1, start_value, state.a_i1 * 2.)
        phi_i, dphi_i, g_i = restricted(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        star_to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        star_to_i = wolfe_two(dphi_i) & (~star_to_zoom1)
        star_to_zoom2 = (dphi_i >= 0.) & (~star_to_zoom1) & (~star_to_i)

        zoom1 = _zoom(restricted, wolfe_one, wolfe_two, state.a_i1, state.phi_i1,
                      state.dphi_i1, a_i, phi_i, dphi_i, gfk, ~star_to_zoom1)
        state = state._replace(nfev=state.nfev + zoom1.nfev, ngev=state.ngev + zoom1.ngev)
        zoom2 = _zoom(restricted, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, state.a_i1,
                      state.phi_i1, state.dphi_i1, gfk, ~star_to_zoom2)
        state = state._replace(nfev=state.nfev + zoom2.nfev, ngev=state.ngev + zoom2.ngev)

        star_keys = ["a_star", "phi_star", "dphi_star", "g_star"]
        state = state._replace(
            done=star_to_zoom1 | state.done,
            failed=(star_to_zoom1 & zoom1.failed) | state.failed,
            **_binary_replace(star_to_zoom1, state._asdict(), zoom1._asdict(), star_keys))
        state = state._replace(done=star_to_i | state.done, **_binary_replace(
            star_to_i, state._asdict(),
            dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)))
        state = state._replace(
            done=star_to_zoom2 | state.done,
            failed=(star_to_zoom2 & zoom2.failed) | state.failed,
            **_binary_replace(star_to_zoom2, state._asdict(), zoom2._asdict(), star_keys))
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), body,
                           state)
    status = jnp.where(state.failed, jnp.array(1),
                       jnp.where(state.i > maxiter, jnp.array(3), jnp.array(0)))
    # Below 64 bits a too small step would stall the optimizer on a zero direction.
    alpha_k = jnp.asarray(state.a_star)
    alpha_k = jnp.where((jnp.finfo(alpha_k.dtype).bits != 64) & (jnp.abs(alpha_k) < 1e-8),
                        jnp.sign(alpha_k) * 1e-8, alpha_k)
    return _LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1,
                              nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=alpha_k,
                              f_k=state.phi_star, g_k=state.g_star, status=status)


# ----------------------------------------------------------------------- BFGS


class _BFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any  # noqa: N815
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _minimize_bfgs(fun: Callable[[Any], Any], x0: Any, maxiter: int | None = None,
                   norm: Any = np.inf, gtol: float = 1e-5,
                   line_search_maxiter: int = 10) -> _BFGSResults:
    # Algorithm 6.1 (Nocedal & Wright).
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1, ngev=1,
        nhev=0, x_k=x0, f_k=f_0, g_k=g_0, H_k=jnp.eye(d, dtype=x0.dtype),
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0, line_search_status=0)

    def cond_fun(state: _BFGSResults) -> Any:
        return (jnp.logical_not(state.converged) & jnp.logical_not(state.failed)
                & (state.k < maxiter))

    def body_fun(state: _BFGSResults) -> _BFGSResults:
        p_k = -_dot(state.H_k, state.g_k)
        ls = _line_search(fun, state.x_k, p_k, old_fval=state.f_k,
                          old_old_fval=state.old_old_fval, gfk=state.g_k,
                          maxiter=line_search_maxiter)
        state = state._replace(nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
                               failed=ls.failed, line_search_status=ls.status)
        s_k = ls.a_k * p_k
        x_kp1 = state.x_k + s_k
        f_kp1, g_kp1 = ls.f_k, ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k = jnp.reciprocal(_dot(y_k, s_k))
        sy_k = s_k[:, np.newaxis] * y_k[np.newaxis, :]
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * sy_k
        h_kp1 = (_einsum("ij,jk,lk", w, state.H_k, w)
                 + rho_k * s_k[:, np.newaxis] * s_k[np.newaxis, :])
        h_kp1 = jnp.where(jnp.isfinite(rho_k), h_kp1, state.H_k)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(converged=converged, k=state.k + 1, x_k=x_kp1, f_k=f_kp1,
                              g_k=g_kp1, H_k=h_kp1, old_old_fval=state.f_k)

    state = lax.while_loop(cond_fun, body_fun, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)


# --------------------------------------------------------------------- L-BFGS


class _LBFGSResults(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _minimize_lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None,
                    norm: Any = np.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
                    gtol: float = 1e-05, maxfun: float | None = None,
                    maxgrad: float | None = None, maxls: int = 20) -> _LBFGSResults:
    # Algorithm 7.5 (Nocedal & Wright), for complex variables as Sorber et al. (2012).
    d = len(x0)
    dtype = jnp.asarray(x0).dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    state_initial = _LBFGSResults(
        converged=jnp.array(False, dtype=bool), failed=jnp.array(False, dtype=bool), k=0,
        nfev=1, ngev=1, x_k=x0, f_k=f_0, g_k=g_0,
        s_history=jnp.zeros((maxcor, d), dtype=dtype),
        y_history=jnp.zeros((maxcor, d), dtype=dtype),
        rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1., status=0, ls_status=0)

    def body_fun(state: _LBFGSResults) -> _LBFGSResults:
        p_k = _two_loop_recursion(state)
        ls = _line_search(f=fun, xk=state.x_k, pk=p_k, old_fval=state.f_k, gfk=state.g_k,
                          maxiter=maxls)
        s_k = jnp.asarray(ls.a_k).astype(p_k.dtype) * p_k
        x_kp1 = state.x_k + s_k
        f_kp1, g_kp1 = ls.f_k, ls.g_k
        y_k = g_kp1 - state.g_k
        rho_k_inv = jnp.real(_dot(y_k, s_k))
        rho_k = jnp.reciprocal(rho_k_inv).astype(y_k.dtype)
        gamma = rho_k_inv / jnp.real(_dot(jnp.conj(y_k), y_k))

        status = jnp.array(0)
        status = jnp.where(state.f_k - f_kp1 < ftol, 4, status)
        status = jnp.where(state.ngev >= maxgrad, 3, status)
        status = jnp.where(state.nfev >= maxfun, 2, status)
        status = jnp.where(state.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(g_kp1, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & (~converged), k=state.k + 1,
            nfev=state.nfev + ls.nfev, ngev=state.ngev + ls.ngev,
            x_k=x_kp1.astype(state.x_k.dtype), f_k=f_kp1.astype(state.f_k.dtype),
            g_k=g_kp1.astype(state.g_k.dtype),
            s_history=_roll_in(state.s_history, s_k),
            y_history=_roll_in(state.y_history, y_k),
            rho_history=_roll_in(state.rho_history, rho_k),
            gamma=gamma.astype(state.g_k.dtype),
            status=jnp.where(converged, 0, status), ls_status=ls.status)

    return lax.while_loop(lambda s: (~s.converged) & (~s.failed), body_fun, state_initial)


def _two_loop_recursion(state: _LBFGSResults) -> Any:
    dtype = state.rho_history.dtype
    his_size = len(state.rho_history)
    curr_size = jnp.where(state.k < his_size, state.k, his_size)
    q = -jnp.conj(state.g_k)
    a_his = jnp.zeros_like(state.rho_history)

    def body_fun1(j: Any, carry: Any) -> Any:
        i = his_size - 1 - j
        _q, _a_his = carry
        a_i = state.rho_history[i] * _dot(jnp.conj(state.s_history[i]), _q).real.astype(dtype)
        return _q - a_i * jnp.conj(state.y_history[i]), _a_his.at[i].set(a_i)

    q, a_his = lax.fori_loop(0, curr_size, body_fun1, (q, a_his))
    q = state.gamma * q

    def body_fun2(j: Any, _q: Any) -> Any:
        i = his_size - curr_size + j
        b_i = state.rho_history[i] * _dot(state.y_history[i], _q).real.astype(dtype)
        return _q + (a_his[i] - b_i) * state.s_history[i]

    return lax.fori_loop(0, curr_size, body_fun2, q)


def _roll_in(history: Any, new: Any) -> Any:
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


# ------------------------------------------------------------------- minimize


def minimize(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimize a scalar function of a 1-D array, as ``jax.scipy.optimize.minimize``.

    ``method`` is ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"``; gradients
    come from autodiff; ``options`` go to the solver (``maxiter``, ``gtol``, ``norm``,
    ``line_search_maxiter`` for BFGS). ``tol`` is accepted and, as in JAX, unused.

    >>> import funcgrad.numpy as jnp
    >>> res = minimize(lambda x, c: jnp.sum((x - c) ** 2), jnp.zeros(2), (3.0,),
    ...                method="BFGS")
    >>> [round(v, 3) for v in res.x.tolist()], int(res.nit)
    ([3.0, 3.0], 3)
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError("args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")

    def fun_with_args(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        r = _minimize_bfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & jnp.logical_not(r.failed),
                               status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=r.H_k,
                               nfev=r.nfev, njev=r.ngev, nit=r.k)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        lr = _minimize_lbfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=lr.x_k, success=lr.converged & jnp.logical_not(lr.failed),
                               status=lr.status, fun=lr.f_k, jac=lr.g_k, hess_inv=None,
                               nfev=lr.nfev, njev=lr.ngev, nit=lr.k)
    raise ValueError(f"Method {method} not recognized")
