"""``jax.experimental.io_callback``: a host side effect that jit keeps even when its results
are unused, called once per element under vmap, refused by vmap when ordered and by
differentiation; compared with JAX where it is installed."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.experimental import io_callback


def _faces() -> list[tuple[Any, Any, Any]]:
    faces = [(fg, fnp, io_callback)]
    try:
        import jax  # noqa: PLC0415
        import jax.numpy as jnp  # noqa: PLC0415
        from jax.experimental import io_callback as jio  # noqa: PLC0415
    except ImportError:
        return faces
    return [*faces, (jax, jnp, jio)]


def _program(jax: Any, jnp: Any, cb_io: Any, log: list[Any]) -> Any:
    def record(x: Any, k: Any) -> Any:
        log.append(("used", int(k), np.asarray(x).tolist()))
        return np.asarray(x) * 2 + int(k)

    def f(x: Any, k: Any) -> Any:
        y = cb_io(record, jax.ShapeDtypeStruct(x.shape, x.dtype), jnp.sin(x), k)
        cb_io(lambda v: log.append(("unused", 0, np.asarray(v).tolist())), None, x)
        return y.sum() + 1.0

    return f


_PROGRAMS: dict[int, tuple[Any, Any, Any, list[Any]]] = {}


def _runs(i: int, jax: Any, jnp: Any, cb_io: Any) -> tuple[Any, Any, Any, list[Any]]:
    """One program (and its compiled forms) per face for the whole test, so that the
    drawn examples reuse the compiled code."""
    if i not in _PROGRAMS:
        log: list[Any] = []
        f = _program(jax, jnp, cb_io, log)
        _PROGRAMS[i] = (f, jax.jit(f), jax.vmap(f, in_axes=(0, None)), log)
    return _PROGRAMS[i]


def _sorted(log: list[Any]) -> list[Any]:
    # Unordered callbacks may run in any order under jit (XLA schedules them freely).
    return sorted(log, key=lambda e: (e[0], e[1], [round(v, 3) for v in e[2]]))


@settings(max_examples=25, deadline=None)
@given(xs=st.lists(st.floats(-3, 3, width=32, allow_subnormal=False), min_size=3, max_size=3),
       k=st.integers(0, 5))
def test_io_callback_runs_as_jax_does(xs: list[float], k: int) -> None:
    results = []
    x0 = np.array(xs, np.float32)
    xb0 = np.stack([x0, 2 * x0])
    for i, (jax, jnp, cb_io) in enumerate(_faces()):
        f, jf, vf, log = _runs(i, jax, jnp, cb_io)
        log.clear()
        x, xb = jnp.asarray(x0), jnp.asarray(xb0)
        vals = [np.asarray(v) for v in (f(x, k), jf(x, k), jf(x, k), vf(xb, k))]
        results.append((vals, _sorted(log)))
    want = (np.sin(x0) * 2 + k).sum() + 1.0
    vals, log = results[0]
    np.testing.assert_allclose(vals[0], want, rtol=1e-5, atol=1e-5)
    # eager, two jitted calls and one call per batch element, each with both callbacks
    assert len(log) == 2 * (3 + 2)
    if len(results) == 2:
        (ours, our_log), (theirs, their_log) = results
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        assert [e[:2] for e in our_log] == [e[:2] for e in their_log]
        for a, b in zip(our_log, their_log, strict=True):
            np.testing.assert_allclose(a[2], b[2], rtol=1e-5, atol=1e-6)


def test_io_callback_errors_as_jax() -> None:
    s = fg.ShapeDtypeStruct((), fnp.float32)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        fg.vmap(lambda x: io_callback(lambda v: v, s, x, ordered=True))(fnp.arange(3.0))
    for transform in (fg.grad, lambda f: fg.jacfwd(f)):
        with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
            transform(lambda x: io_callback(lambda v: v, s, x))(1.0)


def test_ordered_callbacks_run_in_program_order_under_jit() -> None:
    log: list[int] = []

    def f(x: Any) -> Any:
        for i in range(4):
            io_callback(lambda v, i=i: log.append(i), None, x, ordered=True)
        return x

    fg.jit(f)(1.0)
    fg.jit(f)(2.0)
    assert log == [0, 1, 2, 3] * 2
    text = str(fg.make_jaxpr(f)(1.0))
    assert text.count("io_callback[") == 4 and "ordered=True" in text
