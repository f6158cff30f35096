"""Memory at the minimum on the JAX face: no reference cycles (every step's garbage is
freed by reference counting, checked with the collector off), compiled programs that do
not hold themselves, residuals only as the vjp rules read them, ``jit`` buffer donation
(JAX's semantics: jax is the oracle where installed), and checkpoint recomputation in
compiled code."""

from __future__ import annotations

import tracemalloc
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gc_checks import collector_off as _collector_off
from gc_checks import cyclic_garbage as _cyclic_garbage
from gc_checks import object_growth as _object_growth
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.ad_checkpoint import checkpoint_name, checkpoint_policies
from funcgrad.backends.compile_python import compile_jaxpr
from funcgrad.devices import get_backend
from funcgrad.experimental import enable_x64
from funcgrad.ir import live_equations
from funcgrad.testing import check_grads
from funcgrad.transforms.jit import _inlined
from funcgrad.transforms.vjp import vjp_flat

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)
W = np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2)


def _loss(w: Any, x: Any) -> Any:
    return jnp.tanh(x @ w).sum()


# ------------------------------------------------------------------ no reference cycles

_jitted_grad = fg.jit(fg.grad(_loss))

STEPS: dict[str, Callable[[], Any]] = {
    "grad": lambda: fg.grad(_loss)(W, X),
    "value_and_grad": lambda: fg.value_and_grad(_loss, argnums=(0, 1))(W, X),
    "jit_steady": lambda: _jitted_grad(W, X),
    "jit_first_compile": lambda: fg.jit(fg.grad(_loss))(W, X),
    "vmap": lambda: fg.vmap(lambda r: jnp.sin(r).sum())(X),
    "vjp": lambda: fg.vjp(_loss, W, X)[1](np.float32(1.0)),
    "jvp": lambda: fg.jvp(jnp.sin, (X,), (X,)),
    "checkpoint": lambda: fg.grad(lambda w: fg.checkpoint(_loss)(w, X))(W),
    "scan_grad": lambda: fg.grad(lambda c: lax.scan(
        lambda c, xi: (c * jnp.sin(xi), None), c, X)[0].sum())(np.ones(4, np.float32)),
    "fori_grad": lambda: fg.grad(lambda c: lax.fori_loop(
        0, 3, lambda i, c: jnp.sin(c) * c, c).sum())(np.ones(4, np.float32)),
    "jit_fori_first_compile": lambda: fg.jit(lambda c: lax.fori_loop(
        0, 3, lambda i, c: jnp.sin(c), c))(np.ones(4, np.float32)),
    "jit_cond_first_compile": lambda: fg.jit(lambda c: lax.cond(
        c.sum() > 0, jnp.sin, jnp.cos, c))(np.ones(4, np.float32)),
    "jit_scan_grad_first_compile": lambda: fg.jit(fg.grad(lambda c: lax.scan(
        lambda c, xi: (jnp.sin(c * xi), None), c, X)[0].sum()))(np.ones(4, np.float32)),
    "pytrees": lambda: fg.tree_util.tree_flatten(fg.tree_util.tree_map(
        lambda a: a * 2, {"a": [1.0, 2.0], "b": (X, None)})),
    "jit_donated": lambda: fg.jit(lambda a: a * 2.0, donate_argnums=0)(jnp.ones(3)),
}


@pytest.mark.parametrize("name", sorted(STEPS))
def test_steps_make_no_cyclic_garbage(name: str) -> None:
    assert _cyclic_garbage(STEPS[name]) == 0


@pytest.mark.parametrize("name", ["grad", "jit_steady", "vjp", "checkpoint", "scan_grad"])
def test_object_counts_are_flat_across_steps(name: str) -> None:
    # A small constant allows for interned objects made once (caches warm on step 1-3).
    assert _object_growth(STEPS[name]) <= 20


def test_compiled_program_is_not_in_its_own_globals() -> None:
    cj = fg.make_jaxpr(lambda x: lax.fori_loop(0, 2, lambda i, c: c * 2.0, x) + 1.0)(
        np.ones(3, np.float32))
    prog = compile_jaxpr(cj, np)
    assert all(v is not prog.fn for v in prog.fn.__globals__.values())
    for _, body in prog.bodies.values():
        assert all(v is not body.fn for v in body.fn.__globals__.values())
    ref = weakref.ref(prog.fn)
    with _collector_off():
        del prog
        assert ref() is None  # freed by reference counting alone
    np.testing.assert_array_equal(compile_jaxpr(cj, np)(np.ones(3, np.float32))[0],
                                  np.full(3, 5.0, np.float32))


def test_dropped_jit_function_frees_its_program() -> None:
    f = fg.jit(lambda x: jnp.sin(x) * 2.0)
    f(np.ones(3, np.float32))
    ref = weakref.ref(f.lower(np.ones(3, np.float32)).compile()._exe)
    with _collector_off():
        del f
        assert ref() is None


# ------------------------------------------------------------------ residuals


N = 100_000


def _kept(f: Callable[..., Any], make_args: Callable[[], tuple[Any, ...]]
          ) -> tuple[list[bool], bool, Any]:
    """Build ``vjp(f, *make_args())``, drop every reference but the vjp function's: which
    argument buffers it keeps, whether it keeps the output's buffer, and the function."""
    args = make_args()
    refs = [weakref.ref(a._value) for a in args]
    (out,), _, vjp_fn = vjp_flat(f, args)
    out_ref = weakref.ref(out._value)
    del out, args
    return [r() is not None for r in refs], out_ref() is not None, vjp_fn


def _big(seed: int) -> Any:
    return jnp.asarray(np.random.default_rng(seed).standard_normal(N))


def test_add_keeps_nothing() -> None:
    with _collector_off():
        kept, out_kept, _ = _kept(lambda a, b: a + b, lambda: (_big(0), _big(1)))
    assert kept == [False, False] and not out_kept


def test_multiply_by_constant_keeps_the_constant_not_the_input() -> None:
    box = [_big(2)]
    c_ref = weakref.ref(box[0]._value)
    with _collector_off():
        kept, out_kept, vjp_fn = _kept(lambda a: a * box[0], lambda: (_big(3),))
        box.clear()
        assert c_ref() is not None  # the rule reads c
    assert kept == [False] and not out_kept
    del vjp_fn
    assert c_ref() is None


def test_tanh_keeps_its_output_only() -> None:
    with _collector_off():
        kept, out_kept, vjp_fn = _kept(jnp.tanh, lambda: (_big(4),))
    assert kept == [False] and out_kept
    x = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(np.asarray(fg.vjp(jnp.tanh, x)[1](np.ones(7))[0]),
                               1 - np.tanh(x) ** 2, rtol=1e-6)


def test_relu_keeps_at_most_one_array() -> None:
    x = _big(5)
    with _collector_off():
        tracemalloc.start()
        try:
            (out,), _, vjp_fn = vjp_flat(fg.nn.relu, [x])
            del out
            held = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
    # A mask (1 byte per element) or the output (8) may be kept.
    assert held <= x.nbytes + 64_000
    assert vjp_fn is not None


def test_public_vjp_function_keeps_only_residuals() -> None:
    args = (_big(8), _big(9))
    refs = [weakref.ref(a._value) for a in args]
    with _collector_off():
        _, vjp_fn = fg.vjp(lambda a, b: a + b, *args)
        del args
        assert not any(r() is not None for r in refs)
    assert vjp_fn is not None


def test_vjp_residuals_are_freed_with_the_function() -> None:
    def f(w: Any, x: Any) -> Any:
        return jnp.tanh(jnp.sin(x * w) * 2.0).sum()

    with _collector_off():
        tracemalloc.start()
        try:
            w, x = _big(6), _big(7)
            base = tracemalloc.get_traced_memory()[0]
            _, _, vjp_fn = vjp_flat(f, [w, x])
            during = tracemalloc.get_traced_memory()[0] - base
            vjp_fn([np.float64(1.0)])
            del vjp_fn
            after = tracemalloc.get_traced_memory()[0] - base
        finally:
            tracemalloc.stop()
    assert during >= 8 * N  # something is kept for the backward pass (sanity check)
    assert after < 64_000


# ------------------------------------------------------------------ donation


def test_donated_buffer_is_reused_and_the_array_deleted() -> None:
    f = fg.jit(lambda x, y: x * 2.0 + y, donate_argnums=0)
    x, y = jnp.arange(4.0, dtype=np.float32), jnp.ones(4, np.float32)
    where = x.unsafe_buffer_pointer()
    out = f(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.arange(4.0, dtype=np.float32) * 2 + 1)
    assert out.unsafe_buffer_pointer() == where
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[4\]"):
        x + 1
    with pytest.raises(RuntimeError, match="deleted"):
        f(x, y)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
    assert x.shape == (4,) and x.dtype == np.float32  # as JAX: the type survives


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
       seed=st.integers(0, 2**16), argnum=st.integers(0, 1))
def test_donation_gives_the_same_results(shape: list[int], seed: int, argnum: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))

    def f(x: Any, y: Any) -> Any:
        return jnp.tanh(x * y) - jnp.exp(y) * 0.5, (x - y).sum()

    expect = fg.jit(f)(a, b)
    got = fg.jit(f, donate_argnums=argnum)(jnp.asarray(a), jnp.asarray(b))
    for e, g in zip(expect, got):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_donation_matches_jax_semantics() -> None:
    jax = pytest.importorskip("jax")
    for lib in (jax, fg):
        x = lib.numpy.ones(3, np.float32)
        y = lib.jit(lambda a: a * 2, donate_argnums=0)(x)
        assert x.is_deleted() and np.asarray(y).tolist() == [2.0, 2.0, 2.0]
        deleted = r"^Array has been deleted with shape=float32\[3\]\."
        with pytest.raises(RuntimeError, match=deleted):
            x + 1
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            z = lib.numpy.ones(3, np.float32)
            lib.jit(lambda a: a.sum(), donate_argnums=0)(z)
        assert not z.is_deleted()
        assert any("Some donated buffers were not usable: float32[3]." in str(w.message)
                   for w in got)
        with pytest.raises(ValueError, match="donate_argnums"):
            lib.jit(lambda a: a, donate_argnums=3)(lib.numpy.ones(2))
        z = lib.numpy.ones(2)
        z.delete()
        z.delete()  # twice is fine
        assert z.is_deleted()


def test_donating_user_data_never_writes_it() -> None:
    f = fg.jit(lambda x: x * 3.0, donate_argnums=0)
    user = np.ones(5, np.float32)
    out = f(user)  # a NumPy argument: funcgrad's own copy is donated
    np.testing.assert_array_equal(user, np.ones(5, np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.full(5, 3.0, np.float32))
    x = jnp.arange(5.0, dtype=np.float32)
    view = np.asarray(x)  # someone else sees x's buffer: it must be copied, not written
    out = f(x)
    np.testing.assert_array_equal(view, np.arange(5.0, dtype=np.float32))
    assert not np.shares_memory(view, np.asarray(out))
    assert x.is_deleted()
    shared = jnp.arange(5.0, dtype=np.float32)
    # The same buffer passed twice: the other argument reads it after the donated use.
    out = fg.jit(lambda a, b: a * 2.0 + b, donate_argnums=0)(shared, shared)
    np.testing.assert_array_equal(np.asarray(out), np.arange(5.0, dtype=np.float32) * 3)


def test_donate_argnames_and_pytrees() -> None:
    f = fg.jit(lambda params, g: {k: v - 0.5 * g[k] for k, v in params.items()},
               donate_argnames="params")
    params = {"w": jnp.ones((2, 3), np.float32), "b": jnp.zeros(3, np.float32)}
    grads = {"w": jnp.ones((2, 3), np.float32), "b": jnp.ones(3, np.float32)}
    where = {k: v.unsafe_buffer_pointer() for k, v in params.items()}
    new = f(params, grads)
    assert all(v.is_deleted() for v in params.values())
    assert not any(v.is_deleted() for v in grads.values())
    assert {k: v.unsafe_buffer_pointer() for k, v in new.items()} == where
    np.testing.assert_array_equal(np.asarray(new["w"]), np.full((2, 3), 0.5, np.float32))
    again = f(params=new, g=grads)  # by keyword too
    assert all(v.is_deleted() for v in new.values())
    np.testing.assert_array_equal(np.asarray(again["b"]), np.full(3, -1.0, np.float32))


def test_fused_cpu_kernels_write_into_donated_buffers() -> None:
    from funcgrad.backends import numba_fusion

    if not numba_fusion.enabled():
        pytest.skip("CPU fusion (numba) is off or not installed")

    def sgd(p: Any, b: Any, g: Any) -> Any:
        new_b = 0.9 * b + g
        return p - 0.1 * new_b, new_b

    n = 2 * numba_fusion.DEFAULT_MIN_SIZE
    rng = np.random.default_rng(0)
    ps, bs, gs = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    expect = fg.jit(sgd)(ps, bs, gs)
    p, b = jnp.asarray(ps), jnp.asarray(bs)
    where = {p.unsafe_buffer_pointer(), b.unsafe_buffer_pointer()}
    lowered = fg.jit(sgd, donate_argnums=(0, 1)).lower(p, b, gs)
    assert "outs=(" in lowered.as_text()  # one fused kernel, writing into the inputs
    got = fg.jit(sgd, donate_argnums=(0, 1))(p, b, gs)
    assert {o.unsafe_buffer_pointer() for o in got} == where
    assert p.is_deleted() and b.is_deleted()
    for e, o in zip(expect, got):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(e))


def test_lowered_text_shows_the_donated_buffer_written() -> None:
    f = fg.jit(lambda x, y: jnp.exp(x) * y, donate_argnums=1)
    text = f.lower(np.ones(3, np.float32), np.ones(3, np.float32)).as_text()
    assert "out=a1" in text and "out=a0" not in text
    assert "out=a" not in fg.jit(lambda x, y: jnp.exp(x) * y).lower(
        np.ones(3, np.float32), np.ones(3, np.float32)).as_text()


def test_donation_is_part_of_the_cache_key() -> None:
    def f(x: Any) -> Any:
        return x + 1.0

    plain, donating = fg.jit(f), fg.jit(f, donate_argnums=0)
    x = jnp.ones(3)
    plain(x)
    assert not x.is_deleted()
    donating(x)
    assert x.is_deleted()
    y = jnp.ones(3)
    plain(y)
    assert not y.is_deleted()


def test_donation_under_a_transformation_is_ignored() -> None:
    f = fg.jit(lambda x: jnp.sin(x) * 2.0, donate_argnums=0)
    x = jnp.ones(3)
    g = fg.grad(lambda a: f(a).sum())(x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(np.ones(3)), rtol=1e-6)
    assert not x.is_deleted()


@pytest.mark.gpu
def test_donation_on_the_gpu_path_runs() -> None:
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator")
    x = fg.device_put(np.arange(4.0, dtype=np.float32), "cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fg.jit(lambda a: a * 2.0 + 1.0, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(4.0, dtype=np.float32) * 2 + 1)


# ------------------------------------------------------------------ checkpoint, compiled


def _ops(source: str, name: str) -> int:
    return source.count(f"u_{name}(")


def _block(x: Any) -> Any:
    return jnp.sin(jnp.sin(x) * 2.0)


def _compiled_value_and_grad(policy: Any) -> str:
    def f(x: Any) -> Any:
        y = fg.checkpoint(_block, policy=policy)(x)
        return (y * y).sum()

    return fg.jit(fg.value_and_grad(f)).lower(np.ones(8, np.float32)).as_text()


@pytest.mark.parametrize("policy", [None, checkpoint_policies.nothing_saveable])
def test_compiled_checkpoint_recomputes_with_nothing_saveable(policy: Any) -> None:
    src = _compiled_value_and_grad(policy)
    main = src.split("\n\n# s")[0]
    # The forward's two sines, and the inner one again in the backward (the outer one's
    # derivative reads its input), from the input passed through a call that the
    # compiler cannot merge away (no common subexpression with the forward's).
    assert _ops(main, "sin") == 3
    call = next(line for line in main.splitlines() if "= s" in line)
    barrier = call.split("=")[0].strip().rstrip(",")
    assert call.strip().endswith("(a0)")
    assert f"u_sin({barrier})" in main and "u_sin(a0)" in main


def test_compiled_checkpoint_saves_with_everything_saveable() -> None:
    src = _compiled_value_and_grad(checkpoint_policies.everything_saveable)
    assert _ops(src, "sin") == 2


def _layers(x: Any, w: Any) -> Any:
    h = checkpoint_name(jnp.sin(x @ w), "h")
    return jnp.tanh(h @ w)


def _live_ops(policy: Any) -> dict[str, int]:
    """Operations the compiled value_and_grad of a checkpointed two-layer block runs."""
    def f(x: Any, w: Any) -> Any:
        return (fg.checkpoint(_layers, policy=policy)(x, w) ** 2).sum()

    x, w = np.ones((3, 4), np.float32), np.ones((4, 4), np.float32)
    closed = fg.jit(fg.value_and_grad(f, argnums=(0, 1))).lower(x, w).jaxpr
    counts: dict[str, int] = {}
    for eqn in live_equations(_inlined(closed).jaxpr):
        counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
    return counts


def test_compiled_checkpoint_policies_choose_what_is_recomputed() -> None:
    # Forward: 2 dots, sin, tanh. Backward: 4 dots, and whatever is not saved again.
    nothing = _live_ops(None)
    assert (nothing["dot_general"], nothing["sin"], nothing["tanh"]) == (8, 2, 2)
    dots = _live_ops(checkpoint_policies.dots_saveable)
    assert (dots["dot_general"], dots["sin"], dots["tanh"]) == (6, 2, 2)
    named = _live_ops(checkpoint_policies.save_only_these_names("h"))
    # h saved: sin is not recomputed; both dots are (sin's derivative reads the first's
    # result, tanh's its own output, made from the second's), and tanh.
    assert (named["dot_general"], named["sin"], named["tanh"]) == (8, 1, 2)
    other = _live_ops(checkpoint_policies.save_only_these_names("other"))
    assert other == nothing
    everything = _live_ops(checkpoint_policies.everything_saveable)
    assert (everything["dot_general"], everything["sin"], everything["tanh"]) == (6, 1, 1)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2**16))
def test_checkpoint_policies_give_the_same_gradients(rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, 4))
    w = rng.standard_normal((4, 4)) * 0.5

    def loss(policy: Any) -> Callable[..., Any]:
        return lambda x, w: (fg.checkpoint(_layers, policy=policy)(x, w) ** 2).sum()

    expect = fg.grad(lambda x, w: (_layers(x, w) ** 2).sum(), argnums=(0, 1))(x, w)
    for p in (checkpoint_policies.dots_saveable, checkpoint_policies.save_only_these_names(
            "h"), checkpoint_policies.save_any_names_but_these("h")):
        for run in (fg.grad(loss(p), argnums=(0, 1)),
                    fg.jit(fg.grad(loss(p), argnums=(0, 1)))):
            for e, g in zip(expect, run(x, w)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5,
                                           atol=1e-6)


def test_checkpoint_policy_gradients_check_numerically() -> None:
    with enable_x64():
        x = np.linspace(-1.0, 1.0, 8).reshape(2, 4)
        w = np.linspace(0.4, -0.3, 16).reshape(4, 4)
        f = fg.checkpoint(_layers, policy=checkpoint_policies.save_only_these_names("h"))
        check_grads(lambda a: f(a, w), (x,), order=2, modes=("fwd", "rev"))
        g = fg.checkpoint(_layers, policy=checkpoint_policies.dots_saveable)
        check_grads(lambda b: g(x, b), (w,), order=2, modes=("fwd", "rev"))


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=6))
def test_compiled_checkpoint_gradients_are_right(xs: list[float]) -> None:
    x = np.asarray(xs, np.float32)

    def f(policy: Any) -> Callable[[Any], Any]:
        return lambda a: (fg.checkpoint(_block, policy=policy)(a) ** 2).sum()

    expect = fg.value_and_grad(lambda a: (_block(a) ** 2).sum())(x)
    for p in (None, checkpoint_policies.nothing_saveable, checkpoint_policies.dots_saveable,
              checkpoint_policies.save_only_these_names("s")):
        got = fg.jit(fg.value_and_grad(f(p)))(x)
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(expect[0]), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(expect[1]), rtol=1e-5,
                                   atol=1e-6)


def test_checkpoint_name_is_the_value() -> None:
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(checkpoint_name(x, "a")), np.asarray(x))
