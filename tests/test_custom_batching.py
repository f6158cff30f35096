"""funcgrad.custom_batching against jax.custom_batching: eager, jit, vmap (the rule), jvp
(through the body; under vmap through the rule), nested vmap, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

# JAX runs with its 32-bit default: so does funcgrad here.
pytestmark = pytest.mark.x32
SETTINGS = settings(max_examples=12, deadline=None)
shapes = st.lists(st.integers(1, 4), min_size=0, max_size=2).map(tuple)


def _pair(mod: Any, np_: Any) -> Any:
    """The same custom_vmap function in either library: body sin(x)*y, rule cos(x)*y
    (a different function, so the tests see which one ran)."""
    calls: list[tuple[int, list[bool]]] = []

    @mod.custom_batching.custom_vmap
    def f(x: Any, y: Any) -> Any:
        return np_.sin(x) * y

    @f.def_vmap
    def rule(axis_size: int, in_batched: list[bool], xs: Any, ys: Any) -> Any:
        calls.append((axis_size, list(in_batched)))
        return np_.cos(xs) * ys, True

    return f, calls


def _close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert np.asarray(a).dtype == np.asarray(b).dtype


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 99))
def test_eager_jit_and_jvp_run_the_body(shape: tuple[int, ...], seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=shape).astype(np.float32), rng.normal(size=shape).astype(np.float32)
    f, calls = _pair(fg, fnp)
    g, _ = _pair(jax, jnp)
    _close(f(x, y), g(x, y))
    _close(fg.jit(f)(x, y), jax.jit(g)(x, y))
    for a, b in zip(fg.jvp(f, (x, y), (y, x)), jax.jvp(g, (x, y), (y, x))):
        _close(a, b)
    assert calls == []


@SETTINGS
@given(shape=shapes, n=st.integers(1, 4), seed=st.integers(0, 99),
       axes=st.sampled_from([(0, 0), (0, None), (None, 0)]))
def test_vmap_calls_the_rule(shape: tuple[int, ...], n: int, seed: int,
                             axes: tuple[Any, Any]) -> None:
    rng = np.random.default_rng(seed)
    x, y = (rng.normal(size=(n, *shape) if a == 0 else shape).astype(np.float32)
            for a in axes)
    f, calls = _pair(fg, fnp)
    g, jcalls = _pair(jax, jnp)
    want = jax.vmap(g, in_axes=axes)(x, y)
    _close(fg.vmap(f, in_axes=axes)(x, y), want)
    _close(fg.jit(fg.vmap(f, in_axes=axes))(x, y), want)
    _close(fg.vmap(fg.jit(f), in_axes=axes)(x, y), want)
    assert calls[0] == jcalls[0] == (n, [a == 0 for a in axes])


def test_vmap_of_vmap_calls_the_rule_once_under_the_outer_vmap() -> None:
    x = np.linspace(0.1, 1.0, 6, dtype=np.float32).reshape(2, 3)
    f, calls = _pair(fg, fnp)
    g, jcalls = _pair(jax, jnp)
    _close(fg.vmap(fg.vmap(f))(x, x), jax.vmap(jax.vmap(g))(x, x))
    assert calls == jcalls == [(3, [True, True])]


def test_vmap_of_jvp_uses_the_rule_and_its_derivative() -> None:
    x = np.array([0.3, 1.0, 2.0], np.float32)
    f, _ = _pair(fg, fnp)
    g, _ = _pair(jax, jnp)
    got = fg.vmap(lambda v: fg.jvp(f, (v, 2.0), (1.0, 0.0)))(x)
    want = jax.vmap(lambda v: jax.jvp(g, (v, 2.0), (1.0, 0.0)))(x)
    for a, b in zip(got, want):
        _close(a, b)


def test_unbatched_output_and_pytrees() -> None:
    def make(mod: Any) -> Any:
        @mod.custom_batching.custom_vmap
        def h(d: Any) -> Any:
            return {"s": d["a"] + d["b"], "t": d["a"]}

        @h.def_vmap
        def rule(n: int, batched: Any, d: Any) -> Any:
            return {"s": d["a"] + 2.0 * d["b"], "t": d["a"]}, {"s": True, "t": False}

        return h

    a, b = np.float32(2.0), np.arange(3, dtype=np.float32)
    got = fg.vmap(make(fg), in_axes=({"a": None, "b": 0},))({"a": a, "b": b})
    want = jax.vmap(make(jax), in_axes=({"a": None, "b": 0},))({"a": a, "b": b})
    assert sorted(got) == sorted(want)
    for k in want:
        _close(got[k], want[k])


def test_sequential_vmap_matches_jax() -> None:
    def make(mod: Any, np_: Any) -> Any:
        return mod.custom_batching.sequential_vmap(lambda m, v: np_.sum(m @ v) + 1.0)

    m = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    v = np.array([1.0, -1.0], np.float32)
    _close(fg.vmap(make(fg, fnp), in_axes=(0, None))(m, v),
           jax.vmap(make(jax, jnp), in_axes=(0, None))(m, v))
    jaxpr = str(fg.make_jaxpr(fg.vmap(make(fg, fnp), in_axes=(0, None)))(m, v))
    assert "scan" in jaxpr  # a loop, not a batched body


def test_errors_as_jax() -> None:
    bare = fg.custom_batching.custom_vmap(lambda x: x)
    with pytest.raises(AttributeError, match="No batching rule defined"):
        bare(1.0)
    for bad in (lambda n, b, x: ((x, x), True), lambda n, b, x: (x, (True,))):
        f = fg.custom_batching.custom_vmap(lambda x: x)
        f.def_vmap(bad)
        with pytest.raises(ValueError, match="do not match"):
            fg.vmap(f)(np.ones(3))
    f = fg.custom_batching.custom_vmap(lambda x: x)
    f.def_vmap(lambda n, b, x: ((x,), (True,)))
    with pytest.raises(ValueError, match="original custom-vmapped function"):
        fg.vmap(f)(np.ones(3))
    # Reverse mode is not defined (JAX: ValueError at linearization).
    g, _ = _pair(fg, fnp)
    gj, _ = _pair(jax, jnp)
    with pytest.raises(ValueError):
        jax.grad(gj)(1.0, 2.0)
    with pytest.raises(ValueError, match="custom_vjp"):
        fg.grad(g)(1.0, 2.0)


def test_custom_vjp_around_custom_vmap_as_jax_documents() -> None:
    def make(mod: Any, np_: Any) -> Any:
        @mod.custom_vjp
        @mod.custom_batching.custom_vmap
        def f(x: Any, y: Any) -> Any:
            return np_.sin(x) * y

        @f.def_vmap
        def rule(n: int, b: Any, xs: Any, ys: Any) -> Any:
            return np_.cos(xs) * ys, True

        f.defvjp(lambda x, y: (f(x, y), (np_.cos(x), np_.sin(x), y)),
                 lambda res, g: (res[0] * g * res[2], res[1] * g))
        return f

    f, g = make(fg, fnp), make(jax, jnp)
    _close(fg.vmap(f)(np.zeros(3, np.float32), np.ones(3, np.float32)),
           jax.vmap(g)(jnp.zeros(3), jnp.ones(3)))
    _close(fg.grad(f)(np.float32(0.5), np.float32(2.0)),
           jax.grad(g)(np.float32(0.5), np.float32(2.0)))
