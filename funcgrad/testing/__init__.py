"""Numerical checks of derivatives: ``check_grads`` (and hypothesis strategies in
``funcgrad.testing.strategies``).

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> from funcgrad.testing import check_grads
>>> check_grads(fnp.sin, (np.array([0.3, 1.2]),), order=2)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten

_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2,
                np.dtype(np.float64): 1e-5}
_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2,
                np.dtype(np.float64): 1e-4}


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in tree_flatten(tree)[0]]


def _inexact(x: Any) -> bool:
    return dtypes.is_inexact(np.asarray(x).dtype)


def _random_like(tree: Any, rng: np.random.RandomState) -> Any:
    def leaf(x: Any) -> Any:
        a = np.asarray(x)
        if not _inexact(a):
            return np.zeros(a.shape, a.dtype)
        return rng.standard_normal(a.shape).astype(a.dtype)

    return tree_map(leaf, tree)


def _axpy(a: float, x: Any, y: Any) -> Any:
    return tree_map(lambda xi, yi: np.asarray(yi) + a * np.asarray(xi)
                    if _inexact(yi) else yi, x, y)


def _vdot(x: Any, y: Any) -> float:
    return float(sum(np.vdot(np.asarray(a, np.float64), np.asarray(b, np.float64))
                     for a, b in zip(_leaves(x), _leaves(y)) if _inexact(a)))


def _tol(args: Any, given: float | None, table: dict[Any, float]) -> float:
    if given is not None:
        return given
    # The dtype the computation runs in: with 64-bit mode off, float64 inputs run in float32.
    floats = [dtypes.canonicalize_dtype(np.asarray(x).dtype) for x in _leaves(args)
              if _inexact(x)]
    return max((table.get(d, 1e-5) for d in floats), default=1e-5)


def _assert_close(name: str, actual: Any, expected: Any, atol: float, rtol: float) -> None:
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    if a_tree != e_tree:
        raise AssertionError(f"{name}: structures differ: {a_tree} vs {e_tree}")
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        a64 = np.asarray(a, np.float64) if _inexact(a) else np.asarray(a)
        e64 = np.asarray(e, np.float64) if _inexact(e) else np.asarray(e)
        if a64.shape != e64.shape:
            raise AssertionError(f"{name}: leaf {i} has shape {a64.shape}, expected {e64.shape}")
        if not np.allclose(a64, e64, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(a64 - e64)) if a64.size else 0.0
            raise AssertionError(
                f"{name}: leaf {i} differs (max abs error {err:.3g}, atol={atol}, "
                f"rtol={rtol}):\nactual   {a64!r}\nexpected {e64!r}"
            )


def check_jvp(f: Callable[..., Any], args: Sequence[Any], atol: float | None = None,
              rtol: float | None = None, eps: float | None = None, seed: int = 0) -> None:
    """jvp against central finite differences along a random direction."""
    from funcgrad.transforms.jvp import jvp_values as jvp  # noqa: PLC0415

    args = tuple(args)
    rng = np.random.RandomState(seed)
    atol_ = _tol(args, atol, _DEFAULT_TOL)
    rtol_ = _tol(args, rtol, _DEFAULT_TOL)
    eps_ = _tol(args, eps, _DEFAULT_EPS)
    v = _random_like(args, rng)
    _, t_out = jvp(f, args, v)
    plus = f(*_axpy(eps_, v, args))
    minus = f(*_axpy(-eps_, v, args))
    fd = tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64))
                  / (2 * eps_) if _inexact(p) else np.zeros(np.shape(p)), plus, minus)
    t_out = tree_map(lambda t: np.asarray(t) if _inexact(t) else np.zeros(np.shape(t)), t_out)
    _assert_close("jvp vs finite differences", t_out, fd, atol_, rtol_)


def check_vjp(f: Callable[..., Any], args: Sequence[Any], atol: float | None = None,
              rtol: float | None = None, eps: float | None = None, seed: int = 0,
              against_jvp: bool = True) -> None:
    """<vjp(u), v> against <u, finite-difference J v> (and against <u, jvp(v)>)."""
    from funcgrad.transforms.jvp import jvp_values as jvp  # noqa: PLC0415
    from funcgrad.transforms.vjp import vjp  # noqa: PLC0415

    args = tuple(args)
    rng = np.random.RandomState(seed + 1)
    atol_ = _tol(args, atol, _DEFAULT_TOL)
    rtol_ = _tol(args, rtol, _DEFAULT_TOL)
    eps_ = _tol(args, eps, _DEFAULT_EPS)
    out, f_vjp = vjp(f, *args)
    u = _random_like(out, rng)
    v = _random_like(args, rng)
    ct_in = f_vjp(u)
    lhs = _vdot(ct_in, v)
    plus = f(*_axpy(eps_, v, args))
    minus = f(*_axpy(-eps_, v, args))
    fd = tree_map(lambda p, m: (np.asarray(p, np.float64) - np.asarray(m, np.float64))
                  / (2 * eps_) if _inexact(p) else np.zeros(np.shape(p)), plus, minus)
    scale = max(1.0, abs(lhs))
    _assert_close("vjp vs finite differences <vjp(u), v> == <u, J v>", lhs, _vdot(u, fd),
                  atol_ * scale, rtol_)
    if not against_jvp:
        return
    _, t_out = jvp(f, args, v)
    _assert_close("vjp vs jvp <vjp(u), v> == <u, jvp(v)>", lhs, _vdot(u, t_out),
                  atol_ * scale, rtol_)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check ``f``'s derivatives up to ``order`` in the given modes against finite
    differences (raises ``AssertionError`` with the discrepancy).

    For order > 1 the same checks run on the derivative functions themselves:
    the jvp along a fixed direction (forward) and the vjp of a fixed cotangent (reverse).

    >>> import numpy as np
    >>> from funcgrad.testing import check_grads
    >>> check_grads(lambda x: x ** 3, (np.array([1.5]),), order=3)
    """
    from funcgrad.transforms.jvp import jvp_values as jvp  # noqa: PLC0415
    from funcgrad.transforms.vjp import vjp  # noqa: PLC0415

    args = tuple(args)
    modes = tuple(modes)
    bad = set(modes) - {"fwd", "rev"}
    if bad:
        raise ValueError(f"modes must be 'fwd' and/or 'rev', got {sorted(bad)}")
    if "fwd" in modes:
        check_jvp(f, args, atol, rtol, eps)
    if "rev" in modes:
        check_vjp(f, args, atol, rtol, eps, against_jvp="fwd" in modes)
    if order <= 1:
        return
    rng = np.random.RandomState(order)
    if "fwd" in modes:
        v = _random_like(args, rng)

        def f_jvp(*a: Any) -> Any:
            return jvp(f, a, _cast_like(v, a))[1]

        check_grads(f_jvp, args, order - 1, modes, atol, rtol, eps)
    if "rev" in modes:
        out = f(*args)
        u = _random_like(out, rng)

        def f_vjp(*a: Any) -> Any:
            return vjp(f, *a)[1](u)

        check_grads(f_vjp, args, order - 1, modes, atol, rtol, eps)


def _cast_like(v: Any, a: Any) -> Any:
    return tree_unflatten(tree_flatten(a)[1], tree_flatten(v)[0])


__all__ = ["check_grads", "check_jvp", "check_vjp"]


@contextlib.contextmanager
def jax_x64_mode(jax: Any, enabled: bool) -> Iterator[None]:
    """Run the oracle ``jax`` (the real library) in 64-bit mode or not, restoring its
    previous mode after: comparisons with JAX use the mode the test asks for.

    >>> import types
    >>> fake = types.SimpleNamespace(config=types.SimpleNamespace(jax_enable_x64=False))
    >>> fake.config.update = lambda k, v: setattr(fake.config, k, v)
    >>> with jax_x64_mode(fake, True):
    ...     fake.config.jax_enable_x64
    True
    >>> fake.config.jax_enable_x64
    False
    """
    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", prev)
