"""Shared helpers of the jax.numpy comparison tests: run one function on funcgrad.numpy and
on jax.numpy and compare values, dtypes and weak types (leaf by leaf)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.config import config
from funcgrad.tree_util import tree_leaves


def jax_modules(x64: bool) -> tuple[Any, Any]:
    """jax and jax.numpy with 64-bit mode set to ``x64`` (funcgrad set the same way)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", x64)
    config.update("jax_enable_x64", x64)
    import jax.numpy as jnp  # noqa: PLC0415

    return jax, jnp


def _tol(dt: np.dtype[Any]) -> float:
    # By the width of the real components (complex64 is float32's precision).
    width = dt.itemsize // 2 if dt.kind == "c" else dt.itemsize
    return {2: 2e-2, 4: 2e-5, 8: 1e-9}.get(width, 1e-5) if dt.kind in "fc" else 0.0


def assert_same(ours: Any, theirs: Any, *, weak: bool = True, rtol: float | None = None,
                atol: float | None = None) -> None:
    """Leaves equal in value (NaNs equal, float tolerance by dtype), dtype and weak type."""
    lo, lt = tree_leaves(ours), tree_leaves(theirs)
    assert len(lo) == len(lt), (ours, theirs)
    for o, t in zip(lo, lt):
        if isinstance(t, (bool, int, float, tuple)) and not hasattr(t, "dtype"):
            assert o == t, (o, t)
            continue
        to, tt = np.asarray(o), np.asarray(t)
        assert to.dtype == tt.dtype, (to.dtype, tt.dtype, o, t)
        assert to.shape == tt.shape, (to.shape, tt.shape)
        if weak and hasattr(t, "weak_type") and hasattr(o, "weak_type"):
            assert bool(o.weak_type) == bool(t.weak_type), ("weak_type", o, t)
        r = _tol(tt.dtype) if rtol is None else rtol
        a = r if atol is None else atol
        if tt.dtype.kind in "fc":
            np.testing.assert_allclose(to.astype(tt.dtype), tt, rtol=r, atol=a,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(to, tt)


_JITTED: dict[tuple[int, str], tuple[Callable[..., Any], Callable[..., Any]]] = {}


def _jitted(jax: Any, jnp: Any, fn: Callable[..., Any], kind: str) -> Callable[..., Any]:
    """One jitted JAX function per test function (kept with ``fn`` so the id stays unique):
    XLA compiles a whole function once per shape, much faster than op-by-op dispatch."""
    key = (id(fn), kind)
    if key not in _JITTED:
        if kind == "value":
            jitted = jax.jit(lambda *a: fn(jnp, *a))
        else:
            jitted = jax.jit(jax.grad(lambda x, *rest: jnp.sum(jnp.real(fn(jnp, x, *rest)))))
        _JITTED[key] = (fn, jitted)
    return _JITTED[key][1]


def _oracle(jax: Any, jnp: Any, fn: Callable[..., Any], kind: str, *args: Any) -> Any:
    try:
        return _jitted(jax, jnp, fn, kind)(*args)
    except Exception:  # noqa: BLE001 - static-shape limits of jit: JAX eager decides
        if kind == "value":
            return fn(jnp, *args)
        return jax.grad(lambda x, *rest: jnp.sum(jnp.real(fn(jnp, x, *rest))))(*args)


def compare(fn: Callable[..., Any], *args: Any, x64: bool = True, grad: bool = False,
            weak: bool = True, rtol: float | None = None, atol: float | None = None) -> None:
    """``fn(module, *args)`` on funcgrad.numpy and jax.numpy give the same leaves; with
    ``grad``, so do the gradients of the real part of their sum w.r.t. the first arg."""
    jax, jnp = jax_modules(x64)
    theirs_exc: Exception | None = None
    try:
        theirs = _oracle(jax, jnp, fn, "value", *args)
    except Exception as e:  # noqa: BLE001 - the oracle's error is part of the comparison
        theirs_exc = e
    if theirs_exc is not None:
        with pytest.raises(Exception):  # noqa: B017, PT011 - JAX raised; so must we
            fn(fnp, *args)
        return
    ours = fn(fnp, *args)
    assert_same(ours, theirs, weak=weak, rtol=rtol, atol=atol)
    if grad:
        g_t = _oracle(jax, jnp, fn, "grad", *args)
        g_o = funcgrad.grad(lambda x, *rest: fnp.sum(fnp.real(fn(fnp, x, *rest))))(*args)
        assert_same(g_o, g_t, weak=False, rtol=rtol, atol=atol)
