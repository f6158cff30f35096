"""debug.print, debug.callback and pure_callback: run-time host callbacks, compared with JAX."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.primitives.callbacks import CallbackDifferentiationError
from funcgrad.testing import jax_x64_mode


def _program(jax: Any, jnp: Any) -> dict[str, Callable[[], Any]]:
    def f(x):
        jax.debug.print("x={}", x)
        jax.debug.print("s={s:.2f} {t}", s=jnp.sum(x), t=3)
        return x * 2

    g = jax.jit(f)

    def jit_twice():
        g(jnp.ones(2))
        g(jnp.arange(2.0))

    return {
        "eager": lambda: f(jnp.arange(3.0)),
        "jit": jit_twice,
        "vmap": lambda: jax.vmap(f)(jnp.arange(6.0).reshape(3, 2)),
        "vmap_unbatched": lambda: jax.vmap(
            lambda x, y: (jax.debug.print("{} {}", x, y), x)[1], in_axes=(0, None))(
                jnp.arange(2.0), jnp.ones(2)),
        "grad": lambda: jax.grad(lambda x: jnp.sum(f(x)))(jnp.ones(2)),
        "jvp": lambda: jax.jvp(f, (jnp.ones(2),), (jnp.ones(2),)),
        "grad_of_jit": lambda: jax.grad(lambda x: jnp.sum(g(x)))(jnp.ones(2)),
        "jit_of_grad": lambda: jax.jit(jax.grad(lambda x: jnp.sum(f(x))))(jnp.ones(2)),
        "vmap_of_jit": lambda: jax.vmap(g)(jnp.ones((2, 2))),
        "ints": lambda: jax.jit(lambda i: jax.debug.print("{i}", i=i * 2))(jnp.arange(3)),
    }


@pytest.mark.parametrize("case", sorted(_program(fg, fnp)))
@pytest.mark.parametrize("x64", [False, True])
def test_print_output_equals_jax(case: str, x64: bool, capsys: Any) -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp  # noqa: PLC0415

    with jax_x64_mode(jax, x64):
        _program(jax, jnp)[case]()
        jax.effects_barrier()
        expected = capsys.readouterr().out
    with fg.enable_x64(x64):
        _program(fg, fnp)[case]()
    assert capsys.readouterr().out == expected
    assert expected


def test_jit_prints_at_run_time_not_at_trace_time(capsys: Any) -> None:
    f = fg.jit(lambda x: (fg.debug.print("v {}", x), x + 1)[1])
    lowered = f.lower(np.float32(1.0))
    assert capsys.readouterr().out == ""
    assert "debug_callback" in str(lowered.jaxpr)
    for v in (1.0, 2.0, 3.0):
        f(np.float32(v))
    assert capsys.readouterr().out == "v 1.0\nv 2.0\nv 3.0\n"


def test_effect_without_used_outputs_is_kept_and_not_merged() -> None:
    seen: list[Any] = []

    def cb(v: Any) -> None:
        seen.append(float(v))

    @fg.jit
    def f(x):
        fg.debug.callback(cb, x)
        fg.debug.callback(cb, x)  # equal equations: both run
        fg.jit(lambda y: fg.debug.callback(cb, y * 10))(x)  # inner jit, no used outputs
        return x

    f(1.0)
    f(2.0)
    assert seen == [1.0, 1.0, 10.0, 2.0, 2.0, 20.0]


def test_callbacks_run_in_program_order_with_arrays() -> None:
    log: list[Any] = []

    @fg.jit
    def f(x):
        fg.debug.callback(lambda a, k: log.append(("a", type(a), a.tolist(), k.tolist())),
                          x, k=x.sum())
        y = x * 2
        fg.debug.callback(lambda b: log.append(("b", b.tolist())), y)
        return y

    assert fg.debug.callback(lambda: log.append("eager")) is None
    f(np.arange(2.0, dtype=np.float32))
    assert log == ["eager", ("a", type(fg.numpy.ones(1)), [0.0, 1.0], 1.0), ("b", [0.0, 2.0])]


def test_debug_callback_weak_types_as_jax() -> None:
    got: list[Any] = []
    fg.debug.callback(lambda a, b: got.extend([a, b]), 1, fnp.int32(3))
    assert got[0].weak_type and not got[1].weak_type


def test_pure_callback_values_under_jit_and_vmap() -> None:
    def host(x: Any) -> Any:
        return np.cos(np.asarray(x)) + 1

    sd = fg.ShapeDtypeStruct((3,), np.float32)
    x = np.linspace(0, 1, 3).astype(np.float32)
    f = fg.jit(lambda v: fg.pure_callback(host, sd, v) * 2)
    np.testing.assert_allclose(f(x), (np.cos(x) + 1) * 2, rtol=1e-6)
    np.testing.assert_allclose(f(x + 1), (np.cos(x + 1) + 1) * 2, rtol=1e-6)
    xs = np.stack([x, x + 1])
    for method in ("sequential", "expand_dims", "broadcast_all"):
        out = fg.vmap(lambda v, m=method: fg.pure_callback(host, sd, v, vmap_method=m))(xs)
        np.testing.assert_allclose(out, np.cos(xs) + 1, rtol=1e-6)
    tree = fg.pure_callback(lambda v: {"a": v, "b": [v * 2]}, {"a": sd, "b": [sd]}, x)
    np.testing.assert_allclose(tree["b"][0], x * 2)


def test_pure_callback_vmap_shapes_as_jax() -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp  # noqa: PLC0415

    def run(lib: Any, np_: Any, method: str) -> list[Any]:
        shapes: list[Any] = []

        def cb(x: Any, y: Any) -> Any:
            shapes.append((x.shape, y.shape))
            return (np.asarray(x) + np.asarray(y)).astype(np.float32)

        sd = lib.ShapeDtypeStruct((2,), np.float32)
        out = lib.vmap(lambda x, y: lib.pure_callback(cb, sd, x, y, vmap_method=method),
                       in_axes=(0, None))(np_.ones((3, 2)), np_.ones(2))
        return [shapes, np.asarray(out).tolist()]

    with jax_x64_mode(jax, True):  # as this suite runs funcgrad
        for method in ("sequential", "expand_dims", "broadcast_all"):
            assert run(fg, fnp, method) == run(jax, jnp, method)


def test_pure_callback_errors() -> None:
    sd = fg.ShapeDtypeStruct((2,), np.float32)
    with pytest.raises(CallbackDifferentiationError, match="do not support JVP"):
        fg.grad(lambda x: fg.pure_callback(np.sin, fg.ShapeDtypeStruct((), np.float32), x))(
            1.0)
    with pytest.raises(ValueError, match="do not support JVP"):
        fg.jvp(lambda x: fg.pure_callback(np.sin, sd, x), (np.ones(2),), (np.ones(2),))
    with pytest.raises(NotImplementedError, match="vmap_method"):
        fg.vmap(lambda x: fg.pure_callback(np.sin, sd, x))(np.ones((3, 2)))
    with pytest.raises(ValueError, match="vmap_method"):
        fg.pure_callback(np.sin, sd, np.ones(2), vmap_method="foo")
    with pytest.raises(RuntimeError, match="Incorrect output shape"):
        fg.pure_callback(lambda x: np.ones(3), sd, np.ones(2))


def test_jit_on_methods_and_jax_keywords() -> None:
    class Model:
        def __init__(self, w: float) -> None:
            self.w = w

        def __hash__(self) -> int:
            return hash(self.w)

        @fg.jit
        def plain(self, x):
            return x

        @fg.jit(static_argnums=0, donate_argnums=1, keep_unused=True, inline=True)
        def scale(self, x):
            return x * self.w

    m = Model(3.0)
    np.testing.assert_allclose(m.scale(np.ones(2)), [3.0, 3.0])
    assert Model.__dict__["scale"].__get__(None, Model) is Model.__dict__["scale"]
    with pytest.raises(Exception):  # noqa: B017 - self is no array, as in JAX
        m.plain(np.ones(2))
    f = fg.jit(lambda x, y: x + y, donate_argnames="y")
    np.testing.assert_allclose(f(1.0, y=2.0), 3.0)
    with pytest.raises(ValueError, match="invalid argnames"):
        fg.jit(lambda x, y: x + y, static_argnames="z")
    with pytest.raises(ValueError, match="invalid argnames"):
        fg.jit(lambda x, y: x + y, donate_argnames=("z",))
    fg.jit(lambda x, **kw: x, static_argnames="anything")  # **kwargs: not checked


def test_pure_callback_result_dtype_must_match_as_in_jax() -> None:
    sd = fg.ShapeDtypeStruct((2,), np.float32)
    with pytest.raises(RuntimeError, match=r"Incorrect output dtype for return value #0: "
                                           r"Expected: float32, Actual: float64"):
        fg.pure_callback(lambda x: np.ones(2, np.float64), sd, np.ones(2, np.float32))
