"""More of JAX's top level against JAX: ensure_compile_time_eval, closure_convert,
checkpoint's static_argnums and policies, config context managers, jax.ops segment
reductions (values and gradients), make_jaxpr(return_shape=True), float0."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.errors import ConcretizationTypeError
from funcgrad.testing import check_grads, jax_x64_mode


def test_ensure_compile_time_eval_gives_concrete_values_inside_jit() -> None:
    @fg.jit
    def f(x: Any) -> Any:
        with fg.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            positive = bool(jnp.sin(y) > 0)
        return jnp.sin(x) if positive else jnp.cos(x)

    np.testing.assert_allclose(float(f(0.5)), np.sin(0.5), rtol=1e-6)
    with pytest.raises(ConcretizationTypeError, match="depends on the traced"):
        def g(x: Any) -> Any:
            with fg.ensure_compile_time_eval():
                return jnp.sin(x)
        fg.jit(g)(1.0)


def test_closure_convert_hoists_traced_values_for_custom_vjp() -> None:
    # JAX's documented use: a custom_vjp whose function closes over a traced value.
    def apply(fn: Any, x: Any) -> Any:
        converted, consts = fg.closure_convert(fn, x)

        @fg.custom_vjp
        def call(x: Any, *consts: Any) -> Any:
            return converted(x, *consts)

        def fwd(x: Any, *consts: Any) -> Any:
            return call(x, *consts), (x, consts)

        def bwd(res: Any, g: Any) -> Any:
            x, consts = res
            _, vjp = fg.vjp(converted, x, *consts)
            return vjp(g)

        call.defvjp(fwd, bwd)
        return call(x, *consts)

    def loss(w: Any) -> Any:
        return apply(lambda x: jnp.sin(x * w), 0.7)

    np.testing.assert_allclose(float(fg.grad(loss)(1.3)), 0.7 * np.cos(0.7 * 1.3), rtol=1e-6)
    np.testing.assert_allclose(float(fg.jit(fg.grad(loss))(1.3)), 0.7 * np.cos(0.91),
                               rtol=1e-6)


def test_checkpoint_static_argnums_and_policies() -> None:
    def f(x: Any, n: int) -> Any:
        return jnp.sin(x) ** n

    plain = fg.grad(f)(0.4, 3)
    for policy in (None, fg.checkpoint_policies.everything_saveable,
                   fg.checkpoint_policies.nothing_saveable,
                   fg.checkpoint_policies.dots_saveable,
                   fg.checkpoint_policies.save_only_these_names("a")):
        g = fg.checkpoint(f, static_argnums=(1,), policy=policy)
        np.testing.assert_allclose(float(fg.grad(g)(0.4, 3)), float(plain), rtol=1e-6)
    deco = fg.checkpoint(policy=fg.checkpoint_policies.nothing_saveable)(lambda x: x * x)
    assert float(fg.grad(deco)(3.0)) == 6.0


def test_config_contexts_set_and_restore() -> None:
    assert not fg.config.read("jax_debug_nans")
    with fg.debug_nans(True):
        assert fg.config.read("jax_debug_nans")
        with pytest.raises(FloatingPointError):
            jnp.log(jnp.asarray(-1.0))
    assert not fg.config.read("jax_debug_nans")
    with fg.default_matmul_precision("highest"), fg.numpy_rank_promotion("raise"), \
            fg.transfer_guard("disallow"), fg.checking_leaks():
        assert float(jnp.ones(2) @ jnp.ones(2)) == 2.0


SEGMENT = ("segment_sum", "segment_max", "segment_min", "segment_prod")


@pytest.mark.parametrize("name", SEGMENT)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_segment_reductions_match_jax(name: str, data: Any) -> None:
    n = data.draw(st.integers(1, 8))
    k = data.draw(st.integers(1, 5))
    x = np.asarray(data.draw(st.lists(st.floats(-2, 2), min_size=n, max_size=n)))
    ids = np.asarray(data.draw(st.lists(st.integers(-1, k), min_size=n, max_size=n)))
    ours = getattr(fg.ops, name)(x, ids, num_segments=k)
    jax = pytest.importorskip("jax")
    with jax_x64_mode(jax, True):
        theirs = getattr(jax.ops, name)(x, ids, num_segments=k)
        # atol: XLA flushes denormal results to zero on the CPU.
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12,
                                   atol=1e-300)
        if name == "segment_prod":
            return  # both refuse its gradient for possibly repeated ids
        w = np.linspace(0.5, 1.5, k)
        g_ours = fg.grad(lambda d: jnp.sum(jnp.where(jnp.isfinite(
            getattr(fg.ops, name)(d, ids, k)), getattr(fg.ops, name)(d, ids, k), 0) * w))(x)
        jnp_ = jax.numpy
        g_theirs = jax.grad(lambda d: jnp_.sum(jnp_.where(jnp_.isfinite(
            getattr(jax.ops, name)(d, ids, k)), getattr(jax.ops, name)(d, ids, k), 0) * w))(x)
        np.testing.assert_allclose(np.asarray(g_ours), np.asarray(g_theirs), rtol=1e-10,
                                   atol=1e-12)


def test_segment_sum_derivatives_and_errors() -> None:
    ids = np.array([0, 2, 2, 1])
    check_grads(lambda d: fg.ops.segment_sum(d, ids, 3) ** 2, (np.array([0.3, -1.0, 2.0, 0.5]),),
                order=2)
    with pytest.raises(ConcretizationTypeError, match="num_segments"):
        fg.jit(lambda d, i: fg.ops.segment_sum(d, i))(np.ones(3), np.array([0, 1, 1]))
    np.testing.assert_array_equal(np.asarray(fg.ops.segment_sum(np.ones(3), ids[:3])),
                                  [1.0, 0.0, 2.0])


def test_make_jaxpr_return_shape_and_float0() -> None:
    closed, shape = fg.make_jaxpr(lambda x: (x, x.sum()), return_shape=True)(jnp.ones((2, 3)))
    assert [s.shape for s in shape] == [(2, 3), ()]
    assert str(closed).count("reduce_sum") == 1
    jax = pytest.importorskip("jax")
    assert fg.float0 == jax.dtypes.float0
    assert "numpy" in fg.print_environment_info(return_string=True)
