"""``jax.experimental.ode``: ``odeint``, an adaptive Dormand-Prince (RK45) integrator whose
reverse-mode derivative solves the adjoint system backwards in time (constant memory in the
number of steps), with JAX's step-size control, so its steps and values are JAX's.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.experimental.ode import odeint
>>> ys = odeint(lambda y, t: -y, jnp.array(1.0), jnp.array([0.0, 1.0]))
>>> round(float(ys[1]), 5)
0.36788
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.api_extras import default_matmul_precision
from funcgrad.custom_derivatives import closure_convert
from funcgrad.flatten_util import ravel_pytree
from funcgrad.transforms.custom import custom_vjp
from funcgrad.transforms.jit import jit
from funcgrad.transforms.vjp import vjp
from funcgrad.transforms.vmap import vmap
from funcgrad.tree_util import tree_leaves, tree_map

# The Dormand-Prince 5(4) pair: the stage times, the stage weights, the 5th-order solution
# (whose last stage is the next step's first: FSAL) and its difference from the 4th-order
# one (the error estimate).
_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0)
_STAGES = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
_SOLUTION = (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0)
_ERROR = (35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 - -12231 / 42400, 11 / 84 - 649 / 6300, -1.0 / 60.0)
# Shampine's weights for the solution at the step's midpoint (dense output).
_MIDPOINT = (6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
             -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
             -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """The solution of ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` at the times
    ``t`` (increasing floats): ``y0``'s pytree with a leading axis of ``len(t)``.
    ``rtol``/``atol`` bound the local error of each step, ``mxstep`` the steps between two
    output times, ``hmax`` the step size. Differentiable in ``y0``, ``t`` and ``args``.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> f = lambda k: odeint(lambda y, t, k: -k * y, 1.0, jnp.array([0.0, 2.0]), k)[1]
    >>> round(float(jax.grad(f)(0.5)), 5)  # d/dk exp(-2k) = -2 exp(-2k)
    -0.73576
    """
    for leaf in tree_leaves(args):
        if not _is_array_like(leaf):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {leaf}.")
    t = jnp.asarray(t)
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    # What ``func`` closes over becomes explicit arguments: the adjoint differentiates them.
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _solve_tree(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _is_array_like(x: Any) -> bool:
    return isinstance(x, (int, float, complex, bool, np.ndarray, np.generic)) or \
        hasattr(x, "aval") or hasattr(x, "__jax_array__") or type(x).__name__ == "ArrayImpl"


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _solve_tree(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                hmax: float, y0: Any, ts: Any, *args: Any) -> Any:
    flat_y0, unravel = ravel_pytree(y0)

    def flat_func(y: Any, t: Any, *a: Any) -> Any:
        return ravel_pytree(func(unravel(y), t, *a))[0]

    with default_matmul_precision("highest"):
        ys = _solve(_Hashable(flat_func, func), rtol, atol, mxstep, hmax, flat_y0, ts, *args)
    return vmap(unravel)(ys)


class _Hashable:
    """The raveled dynamics, equal for equal user functions (custom_vjp's static argument
    and jit's cache key)."""

    def __init__(self, fn: Callable[..., Any], key: Any) -> None:
        self.fn, self.key = fn, key

    def __call__(self, *a: Any) -> Any:
        return self.fn(*a)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Hashable) and other.key == self.key


def _solve_impl(func: Callable[..., Any], rtol: float, atol: float, mxstep: float,
                hmax: float, y0: Any, ts: Any, *args: Any) -> Any:
    def f(y: Any, t: Any) -> Any:
        return func(y, t, *args)

    def to_next_output(carry: list[Any], target: Any) -> tuple[list[Any], Any]:
        def going(state: list[Any]) -> Any:
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def attempt(state: list[Any]) -> list[Any]:
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, k = _rk_step(f, y, fy, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeffs = _dense_output(y, y1, k, dt)
            dt_next = jnp.clip(_next_step(dt, ratio), min=0.0, max=hmax)
            accept = ratio <= 1.0
            taken = [i + 1, y1, f1, t + dt, dt_next, t, new_coeffs]
            kept = [i + 1, y, fy, t, dt_next, last_t, coeffs]
            return [jnp.where(accept, a, b) for a, b in zip(taken, kept)]

        _, *carry = lax.while_loop(going, attempt, [0, *carry])
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        return carry, jnp.polyval(coeffs, s.astype(coeffs.dtype))

    f0 = f(y0, ts[0])
    dt = jnp.clip(_first_step(f, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    coeffs = jnp.array([y0] * 5)
    _, ys = lax.scan(to_next_output, [y0, f0, ts[0], dt, ts[0], coeffs], ts[1:])
    return jnp.concatenate((y0[None], ys))


def _rk_step(f: Callable[[Any, Any], Any], y0: Any, f0: Any, t0: Any, dt: Any) -> Any:
    """One Dormand-Prince step: the new state, its derivative, the error estimate and the
    seven stage derivatives."""
    nodes = jnp.array(_NODES, dt.dtype)
    stages = jnp.array(_STAGES, f0.dtype)
    h = dt.astype(f0.dtype)

    def stage(i: Any, k: Any) -> Any:
        yi = y0 + h * jnp.dot(stages[i - 1, :], k)
        return k.at[i, :].set(f(yi, t0 + dt * nodes[i - 1]))

    k = lax.fori_loop(1, 7, stage, jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0))
    y1 = h * jnp.dot(jnp.array(_SOLUTION, f0.dtype), k) + y0
    err = h * jnp.dot(jnp.array(_ERROR, f0.dtype), k)
    return y1, k[-1], err, k


def _dense_output(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The coefficients of the quartic through the step (in the step's fraction, highest
    power first): it matches the values and slopes at both ends and the midpoint value."""
    h = dt.astype(y0.dtype)
    y_mid = y0 + h * jnp.dot(jnp.array(_MIDPOINT, y0.dtype), k)
    dy0, dy1 = k[0], k[-1]
    a = -2.0 * h * dy0 + 2.0 * h * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * h * dy0 - 3.0 * h * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * h * dy0 + h * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return jnp.asarray([a, b, c, h * dy0, y0])


def _first_step(f: Callable[[Any, Any], Any], t0: Any, y0: Any, order: int, rtol: float,
                atol: float, f0: Any) -> Any:
    """The first step size (Hairer, Norsett and Wanner, Solving ODEs I, II.4)."""
    dtype = jnp.result_type(y0, f0, float)
    y0, f0 = y0.astype(dtype), f0.astype(dtype)
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0.astype(dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def _error_ratio(err: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    """The root mean square of the error over its tolerance (<= 1: the step is taken)."""
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    r = err / tol.astype(err.dtype)
    squared = r.real ** 2 + r.imag ** 2 if jnp.iscomplexobj(r) else r ** 2
    return jnp.sqrt(jnp.mean(squared))


def _next_step(dt: Any, ratio: Any, safety: float = 0.9, grow: float = 10.0,
               shrink: float = 0.2, order: float = 5.0) -> Any:
    # A taken step may not shrink the next one; a rejected one shrinks it at most 5x.
    floor = jnp.where(ratio < 1, 1.0, shrink)
    factor = jnp.minimum(grow, jnp.maximum(ratio ** (-1.0 / order) * safety, floor))
    return jnp.where(ratio == 0, dt * grow, dt * factor)


_solve = custom_vjp(_solve_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _solve_fwd(func: Any, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any,
               ts: Any, *args: Any) -> Any:
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(func: Any, rtol: float, atol: float, mxstep: float, hmax: float,
               res: Any, g: Any) -> Any:
    """The adjoint method: from the last output time back to the first, the state, its
    cotangent and the cotangents of time and ``args`` are integrated backwards (in negated
    time); each output time adds its cotangent on the way."""
    ys, ts, args = res

    def augmented(state: Any, minus_t: Any, *a: Any) -> Any:
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -minus_t, *a)
        return (-y_dot, *pullback(y_bar))

    def back_one_interval(carry: Any, i: Any) -> Any:
        y_bar, t0_bar, args_bar = carry
        # Moving output time i moves the solution along func there.
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            augmented, (ys[i], y_bar, t0_bar, args_bar), jnp.array([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_map(operator.itemgetter(1), (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    start = (g[-1], 0.0, tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        back_one_interval, start, jnp.arange(len(ts) - 1, 0, -1))
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_solve.defvjp(_solve_fwd, _solve_bwd)

__all__ = ["odeint"]
