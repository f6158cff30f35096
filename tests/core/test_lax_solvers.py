"""lax.custom_linear_solve and lax.custom_root against JAX's: values, first and second
derivatives (implicit: the solvers are never differentiated, so a solver that cannot be
differentiated still gives gradients), jit and vmap; and numerically with check_grads."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import lax
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

# JAX compiles each new shape's programs: few examples keep this file quick.
SETTINGS = settings(max_examples=4, deadline=None)


def _spd(n: int, seed: int, dtype: Any = np.float32) -> np.ndarray:
    r = np.random.default_rng(seed).normal(size=(n, n))
    return (r @ r.T + n * np.eye(n)).astype(dtype)


def _linear(mod: Any, np_: Any, lax_: Any, symmetric: bool) -> Any:
    def f(a: Any, b: Any) -> Any:
        # The solver is a stopped-gradient direct solve: differentiating it would give
        # zero, so a right answer proves the implicit rule ran.
        def solve(mv: Any, r: Any) -> Any:
            return mod.lax.stop_gradient(np_.linalg.solve(a, r))

        def tsolve(vm: Any, r: Any) -> Any:
            return mod.lax.stop_gradient(np_.linalg.solve(a.T, r))

        m = a if symmetric else a + np_.triu(a, 1)
        if symmetric:
            return lax_.custom_linear_solve(lambda x: m @ x, b, solve, symmetric=True)

        def solve_m(mv: Any, r: Any) -> Any:
            return mod.lax.stop_gradient(np_.linalg.solve(m, r))

        def tsolve_m(vm: Any, r: Any) -> Any:
            return mod.lax.stop_gradient(np_.linalg.solve(m.T, r))

        del tsolve
        return lax_.custom_linear_solve(lambda x: m @ x, b, solve_m, tsolve_m)

    return f


def _close(a: Any, b: Any, tol: float = 2e-4) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)
    assert np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.x32
@SETTINGS
@given(n=st.integers(1, 4), seed=st.integers(0, 99), symmetric=st.booleans())
def test_linear_solve_values_and_derivatives_match_jax(n: int, seed: int,
                                                       symmetric: bool) -> None:
    a = _spd(n, seed)
    b = np.random.default_rng(seed + 1).normal(size=n).astype(np.float32)
    f, g = _linear(fg, fg.numpy, lax, symmetric), _linear(jax, jnp, jax.lax, symmetric)
    _close(f(a, b), g(a, b))
    loss_f = lambda a, b: (f(a, b) ** 2).sum()  # noqa: E731
    loss_g = lambda a, b: (g(a, b) ** 2).sum()  # noqa: E731
    for x, y in zip(fg.grad(loss_f, (0, 1))(a, b), jax.grad(loss_g, (0, 1))(a, b)):
        _close(x, y)
    for x, y in zip(fg.jvp(f, (a, b), (a, b)), jax.jvp(g, (a, b), (a, b))):
        _close(x, y)
    _close(fg.jit(f)(a, b), jax.jit(g)(a, b))
    bs = np.stack([b, 2 * b + 1])
    _close(fg.vmap(f, (None, 0))(a, bs), jax.vmap(g, (None, 0))(a, bs))
    _close(fg.vmap(fg.grad(loss_f), (None, 0))(a, bs), jax.vmap(jax.grad(loss_g), (None, 0))(a, bs))
    # Second order, through the implicit rules only.
    h_f = fg.hessian(lambda b: loss_f(a, b))(b)
    h_g = jax.hessian(lambda b: loss_g(a, b))(b)
    _close(h_f, h_g, 2e-3)


@settings(max_examples=5, deadline=None)
@given(n=st.integers(1, 3), seed=st.integers(0, 99))
def test_linear_solve_grads_numerically(n: int, seed: int) -> None:
    a = _spd(n, seed, np.float64)
    b = np.random.default_rng(seed).normal(size=n)
    f = _linear(fg, fg.numpy, lax, symmetric=False)
    check_grads(f, (a, b), order=2)


@pytest.mark.x32
def test_linear_solve_pytrees_aux_and_errors() -> None:
    def solve(mod: Any) -> Any:
        def run(mv: Any, rhs: Any) -> Any:
            return {"u": rhs["u"] / 2.0, "v": rhs["v"] / 3.0}, rhs["u"].sum()
        return run

    def f(mod: Any) -> Any:
        return lambda b: mod.lax.custom_linear_solve(
            lambda x: {"u": 2.0 * x["u"], "v": 3.0 * x["v"]}, b, solve(mod), symmetric=True,
            has_aux=True)

    b = {"u": np.ones(2, np.float32), "v": np.arange(3, dtype=np.float32)}
    (xf, af), (xg, ag) = f(fg)(b), f(jax)(b)
    for k in ("u", "v"):
        _close(xf[k], xg[k])
    _close(af, ag)
    no_transpose = lambda b: lax.custom_linear_solve(lambda x: 2.0 * x, b,  # noqa: E731
                                                     lambda mv, r: r / 2.0)
    _close(fg.jvp(no_transpose, (np.ones(2, np.float32),), (np.ones(2, np.float32),))[1],
           np.full(2, 0.5, np.float32))
    with pytest.raises(fg.errors.NonDifferentiableError, match="transpose_solve"):
        fg.grad(lambda b: no_transpose(b).sum())(np.ones(2, np.float32))


def _root(mod: Any, lax_: Any) -> Any:
    def cube_root(a: Any, c: Any) -> Any:
        # The root of x^3 + c x - a, by Newton steps in a loop that reverse mode could not
        # differentiate (a while_loop): the gradient comes from the implicit rule.
        def newton(f: Any, x0: Any) -> Any:
            def step(state: Any) -> Any:
                i, x = state
                return i + 1, x - f(x) / (3 * x * x + c)
            return lax_.while_loop(lambda s: s[0] < 30, step, (0, x0))[1]

        return lax_.custom_root(lambda x: x ** 3 + c * x - a, mod.numpy.ones_like(a), newton,
                                lambda g, y: y / g(mod.numpy.ones_like(y)))

    return cube_root


@pytest.mark.x32
@SETTINGS
@given(a=st.floats(0.5, 8.0), c=st.floats(0.5, 3.0))
def test_custom_root_matches_jax(a: float, c: float) -> None:
    f, g = _root(fg, lax), _root(jax, jax.lax)
    av, cv = np.float32(a), np.float32(c)
    _close(f(av, cv), g(av, cv))
    for x, y in zip(fg.grad(f, (0, 1))(av, cv), jax.grad(g, (0, 1))(av, cv)):
        _close(x, y)
    _close(fg.grad(fg.grad(f))(av, cv), jax.grad(jax.grad(g))(av, cv), 2e-3)
    _close(fg.jvp(f, (av, cv), (np.float32(1), np.float32(0)))[1],
           jax.jvp(g, (av, cv), (np.float32(1), np.float32(0)))[1])
    avs = np.array([a, a + 1], np.float32)
    _close(fg.vmap(fg.grad(f), (0, None))(avs, cv), jax.vmap(jax.grad(g), (0, None))(avs, cv))
    _close(fg.jit(f)(av, cv), jax.jit(g)(av, cv))


def test_custom_root_grads_numerically() -> None:
    check_grads(_root(fg, lax), (np.array([2.0, 5.0]), np.array(1.5)), order=2,
                modes=("rev",))


@pytest.mark.usefixtures("jax_x64")
@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_transpose_solve_gets_the_transposed_map_as_jax(seed: int) -> None:
    """A solver that uses the map it is given (as iterative solvers do): reverse mode must
    hand transpose_solve A^T, or the gradient of a nonsymmetric system is transposed."""
    r = np.random.default_rng(seed)
    a = r.normal(size=(3, 3)) + 3 * np.eye(3)
    b, w = r.normal(size=3), r.normal(size=3)

    def run(J: Any, L: Any) -> Any:
        def dense_solve(mv: Any, rhs: Any) -> Any:
            return J.numpy.linalg.solve(J.jacfwd(mv)(rhs), rhs)

        def f(m: Any, rhs: Any) -> Any:
            x = L.custom_linear_solve(lambda v: m @ v, rhs, dense_solve, dense_solve)
            return (x * w).sum()

        return J.grad(f, argnums=(0, 1))(a, b)

    want = run(jax, jax.lax)
    for g, t in zip(run(fg, lax), want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(t), rtol=1e-9, atol=1e-12)
