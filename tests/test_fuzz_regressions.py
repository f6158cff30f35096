"""Regression tests for what the differential fuzzer (scripts/fuzz.py) found, one per bug,
each the fuzzer's shrunk repro made into a fixed check against JAX (or NumPy's values)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fuzz_programs import Prog, check
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.testing import check_grads, jax_x64_mode


def _jax():
    return pytest.importorskip("jax")


def test_slice_in_dim_with_stride() -> None:
    # lax.slice_in_dim called the module's lax.slice where it meant the builtin slice
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(fg.lax.slice_in_dim(x, 0, 4, 2, axis=1), x[:, 0:4:2])
    np.testing.assert_array_equal(fg.lax.slice_in_dim(x, 1, None, axis=0), x[1:])


def test_custom_jvp_defjvps() -> None:
    f = fg.custom_jvp(lambda x, y: x * y)
    f.defjvps(lambda t, ans, x, y: 2.0 * t, lambda t, ans, x, y: ans * t)
    gx, gy = fg.grad(f, argnums=(0, 1))(1.5, 5.0)
    assert (float(gx), float(gy)) == (2.0, 7.5)
    _, tangent = fg.jvp(f, (1.5, 5.0), (1.0, 1.0))
    assert float(tangent) == 9.5


@settings(max_examples=15, deadline=None)
@given(mode=st.sampled_from(["reflect", "symmetric", "wrap"]),
       shape=st.lists(st.integers(2, 4), min_size=1, max_size=2),
       data=st.data())
def test_pad_reflect_symmetric_wrap(mode: str, shape: list[int], data: st.DataObject) -> None:
    widths = [(data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5))) for _ in shape]
    x = np.random.default_rng(0).uniform(-1, 1, shape)
    want = np.pad(x, widths, mode=mode)  # type: ignore[call-overload]
    np.testing.assert_array_equal(fnp.pad(x, widths, mode=mode), want)
    check_grads(lambda a: fnp.pad(a, widths, mode=mode), (x,), order=2)


def test_repeat_per_element_counts() -> None:
    x = np.arange(6.0).reshape(2, 3)
    # (Counts as arrays: a list is JAX's TypeError, as jnp.repeat's.)
    for reps in (np.array([1, 0, 2]), np.array([2, 1, 1])):
        np.testing.assert_array_equal(fnp.repeat(x, reps, axis=1), np.repeat(x, reps, axis=1))
    check_grads(lambda a: fnp.repeat(a, np.array([1, 0, 2]), axis=1), (x,), order=1)


def test_repeat_total_repeat_length_matches_jax() -> None:
    jax = _jax()
    x = np.arange(6.0).reshape(2, 3)
    for reps, total in (([1, 0, 2], 5), ([2, 2, 2], 4)):
        want = jax.numpy.repeat(x, np.asarray(reps), axis=1, total_repeat_length=total)
        got = fnp.repeat(x, np.asarray(reps), axis=1, total_repeat_length=total)
        np.testing.assert_array_equal(got, np.asarray(want))


def test_at_multiply_with_a_basic_index_is_differentiable() -> None:
    # JAX marks ints and slices unique, so d/dv of x.at[::2].multiply(v) exists
    for idx in (np.s_[0::2], 1, np.s_[1:, 0]):
        def f(v: object, idx: object = idx) -> object:
            return fnp.sum(fnp.ones((3, 2)).at[idx].multiply(v))
        n = np.ones((3, 2))[idx].size
        assert float(fg.grad(f)(2.0)) == float(n)


def test_float_power_keeps_float32() -> None:
    x = np.array([2.0, 3.0], dtype=np.float32)
    assert fnp.float_power(x, x).dtype == np.float32
    assert fnp.float_power(2, 3).dtype == np.float64


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint32", "bool",
                                   "int64"])
def test_small_integers_become_float32_as_in_jax(dtype: str) -> None:
    # JAX 0.10's table: integers of up to 32 bits (and bool) go to float32, even in x64
    jax = _jax()
    a = np.array([1, 2], dtype=dtype)
    with jax_x64_mode(jax, True):
        for name in ("sqrt", "exp", "divide", "float_power", "mean", "var", "arctan2"):
            args = (a, a) if name in ("divide", "float_power", "arctan2") else (a,)
            want = getattr(jax.numpy, name)(*args).dtype
            assert getattr(fnp, name)(*args).dtype == want, name


def test_relu6_tangent_is_selected() -> None:
    # relu6(std(x)) with one element: std's tangent is NaN at 0; JAX's rule selects 0
    _, t = fg.jvp(lambda a: fg.nn.relu6(fnp.std(a)), (np.ones(1),), (np.ones(1),))
    assert float(t) == 0.0
    g = fg.grad(lambda a: fnp.sum(fg.nn.relu6(a)))(np.array([0.0, 6.0, 3.0, -1.0, 7.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0, 0.0, 0.0])


def test_take_clip_mode_clamps_negative_indices() -> None:
    x = np.arange(6.0).reshape(2, 3)
    got = fnp.take(x, np.array([-1, 0, 7, 2]), axis=1, mode="clip")
    np.testing.assert_array_equal(got, x[:, [0, 0, 2, 2]])
    traced = fg.jit(lambda i: fnp.take(np.arange(5.0), i, mode="clip"))(np.array([-2, 9]))
    np.testing.assert_array_equal(traced, [0.0, 4.0])


# The shrunk programs themselves, under every transform against JAX.
SHRUNK = [
    Prog(((1, 1, 1),), (("at_multiply", "multiply", "slice", (0, None, 2),
                         "promise_in_bounds", False),), None, 1646683327),
    Prog(((1, 1, 1), (1, 1, 1)), (("float_power_pos", 0),), None, 2061528653, "float32"),
    Prog(((1, 1, 2),), (("take_clip", 2),), None, 983706307),
    Prog(((1,), (), ()), (("std", None, True), ("relu6",)), None, 1635191014),
    Prog(((2, 3),), (("triu",), ("divide_abs1", 0), ("custom_jvp_scaled",),
                     ("where_scalar",)), "scan", 779428907),
    Prog(((1, 1), (1, 1)), (("take_along_axis", 1), ("repeat_array", -2), ("exp2_tanh",)),
         "custom_jvp", 566360606),
    Prog(((2, 3),), (("pad", "reflect", ((1, 1), (1, 0))),), None, 3),
    Prog(((2, 3),), (("slice_in_dim", 1),), "jit", 4),
    # reverse mode through a custom_jvp rule that calls jvp of a custom_vjp function
    Prog(((3,),), (("custom_vjp_op",), ("sin",)), "custom_jvp", 5),
    # hessian/jvp_grad through jit of x.at[repeated].multiply(constant)
    Prog(((3,),), (("at_multiply", "multiply", "array", (0, 2, 0), None, True),), "jit", 6),
    # float32: a derivative that is 0 exactly, JAX's float32 noise 1e-4 (JAX's float64: 0)
    Prog(((2,), (), ()), (("logaddexp", 0), ("standardize", -1)), None, 1306382886,
         "float32"),
    # 0 * NaN at a kink: XLA's jit simplifies it to 0, JAX op by op and funcgrad keep NaN
    Prog(((1,), (2,)), (("min", -1, True), ("std_method", 0, False)), None, 1633974721),
    # lax.dynamic_(update_)slice with a negative Python-int start counts from the end (JAX)
    Prog(((1, 1, 2),), (("dynamic_update_slice", (("traced", 0), ("traced", 0), ("int", -1)),
                         (2, 3, 1)),), None, 1758524599),
    Prog(((1, 3, 1), (), (3, 1)), (("lax_select_gt", 0), ("dynamic_update_slice", (
        ("traced", 0), ("int", -1), ("int", 2)), (1, 2, 2))), None, 441809871),
    Prog(((3, 2),), (("dynamic_slice", (("int", -1), ("traced", 0)), (2, 1)),), None, 5),
]


@pytest.mark.parametrize("prog", SHRUNK, ids=lambda p: "-".join(op[0] for op in p.ops))
def test_shrunk_program_matches_jax(prog: Prog) -> None:
    _jax()
    bad = check(prog)
    assert not bad, bad


def test_torch_rsub_of_two_tensors_records_rsub() -> None:
    torch = pytest.importorskip("torch")
    import funcgrad.torch as ft

    for t in (torch, ft):
        x = t.tensor([1.0, 2.0], dtype=t.float64, requires_grad=True)
        y = t.tensor([[0.5], [3.0]], dtype=t.float64, requires_grad=True)
        z = t.rsub(x, y)
        assert type(z.grad_fn).__name__ == "RsubBackward0"
        (z * t.tensor([[1.0, 2.0]], dtype=t.float64)).sum().backward()
        np.testing.assert_array_equal(z.detach().numpy(), [[-0.5, -1.5], [2.0, 1.0]])
        np.testing.assert_array_equal(x.grad.numpy(), [-2.0, -4.0])
        np.testing.assert_array_equal(y.grad.numpy().ravel(), [3.0, 3.0])


def test_numpy_shape_ndim_size_of_a_tracer_read_its_aval() -> None:
    # JAX's tracers answer np.shape/np.ndim/np.size; other NumPy functions on a tracer raise
    # JAX's TracerArrayConversionError (the text of __array__, as NumPy converts them).
    def f(a):  # type: ignore[no-untyped-def]
        return a * np.shape(a)[0] + np.ndim(a) + np.size(a) + np.size(a, 1)

    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(fg.jit(f)(x), np.full((2, 3), 13.0, np.float32))
    np.testing.assert_array_equal(fg.grad(lambda a: f(a).sum())(x), np.full((2, 3), 2.0))
    with pytest.raises(fg.errors.TracerArrayConversionError,
                       match=r"^The numpy\.ndarray conversion method __array__\(\) was called "
                             r"on traced array with shape float32\[2,3\]\n"):
        fg.jit(lambda a: np.linalg.norm(a))(x)


# ---------------------------------------------------------------- symbolic zeros (JAX face)


def _sin_times_three_vjp(m):  # type: ignore[no-untyped-def]
    """A custom_vjp function whose rule is not sin's derivative (3 cos): the rule is used."""
    @m.custom_vjp
    def s(x):  # type: ignore[no-untyped-def]
        return m.numpy.sin(x)

    s.defvjp(lambda x: (m.numpy.sin(x), m.numpy.cos(x)), lambda c, g: (3.0 * c * g,))
    return s


def _custom_jvp_over_custom_vjp(m):  # type: ignore[no-untyped-def]
    s = _sin_times_three_vjp(m)

    def body(x, y):  # type: ignore[no-untyped-def]
        return m.numpy.sum(s(x) * y + x)

    f = m.custom_jvp(body)
    f.defjvp(lambda p, t: m.jvp(body, p, t))
    return f


@settings(max_examples=10, deadline=None)
@given(x=st.lists(st.floats(-2, 2, allow_subnormal=False), min_size=1, max_size=3))
def test_reverse_mode_of_a_custom_jvp_rule_calling_jvp_of_a_custom_vjp(x: list[float]) -> None:
    # The custom_vjp's jvp is linear but known only by its transpose (JAX's custom_lin):
    # reverse mode through the custom_jvp rule transposes it, running the custom_vjp's bwd.
    jax = _jax()
    a, b = np.asarray(x), np.linspace(0.5, 1.5, len(x))
    with jax_x64_mode(jax, True):
        jf = _custom_jvp_over_custom_vjp(jax)
        want = [jax.grad(jf, argnums=(0, 1))(a, b),
                jax.vmap(jax.grad(jf), (0, None))(np.stack([a, -a]), b)]
    f = _custom_jvp_over_custom_vjp(fg)
    # 3 cos(x) y + 1 (the rule's), not cos(x) y + 1 (sin's)
    np.testing.assert_allclose(fg.grad(f)(a, b), 3.0 * np.cos(a) * b + 1.0, rtol=1e-12)
    for got in (fg.grad(f, argnums=(0, 1))(a, b), fg.jit(fg.grad(f, argnums=(0, 1)))(a, b),
                fg.grad(fg.jit(f), argnums=(0, 1))(a, b)):
        for g, w in zip(got, want[0]):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
    np.testing.assert_allclose(fg.vmap(fg.grad(f), (0, None))(np.stack([a, -a]), b),
                               np.asarray(want[1]), rtol=1e-12)


def test_forward_mode_of_a_custom_vjp_is_still_refused() -> None:
    # Evaluating the deferred linear part (jvp, jit of jvp, linearize) raises, as in JAX.
    s = _sin_times_three_vjp(fg)
    x = np.array([0.3, 0.7])
    for run in (lambda: fg.jvp(s, (x,), (x,)), lambda: fg.jit(lambda v: fg.jvp(s, (v,), (v,)))(x),
                lambda: fg.vmap(lambda v: fg.jvp(s, (v,), (v,)))(x),
                lambda: fg.linearize(s, x)[1](x)):
        with pytest.raises(fg.errors.NonDifferentiableError, match="custom_vjp"):
            run()


@settings(max_examples=10, deadline=None)
@given(x=st.lists(st.floats(-2, 2, allow_subnormal=False), min_size=3, max_size=3))
def test_jit_jvp_keeps_zero_tangents_symbolic(x: list[float]) -> None:
    # jvp(grad(jit(f))): the multiplier 0.6 of a scatter-multiply with repeated indices is a
    # residual of jit's forward; its tangent must stay a symbolic zero (scatter_mul's jvp
    # refuses a tangent for the multipliers when indices repeat, in JAX as here).
    jax = _jax()
    a = np.asarray(x)

    def f(m):  # type: ignore[no-untyped-def]
        return lambda v: (m.numpy.sin(v).at[np.array([0, 2, 0])].multiply(0.6) ** 2).sum()

    with jax_x64_mode(jax, True):
        want = jax.hessian(jax.jit(f(jax)))(a)
    np.testing.assert_allclose(fg.hessian(fg.jit(f(fg)))(a), np.asarray(want), rtol=1e-10,
                               atol=1e-14)
    _, t = fg.jvp(fg.grad(fg.jit(f(fg))), (a,), (np.ones(3),))
    np.testing.assert_allclose(t, np.asarray(want).sum(axis=1), rtol=1e-10, atol=1e-14)


def _loop_cases(m):  # type: ignore[no-untyped-def]
    """Programs whose while_loop only non-differentiated values reach (JAX: a symbolic zero
    tangent, so reverse mode never transposes the loop)."""
    jnp, lax = m.numpy, m.lax

    def wl(c0):  # type: ignore[no-untyped-def]
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, 0.5 * c[1] + 0.1),
                              (0, c0))[1]

    sg = lax.stop_gradient
    return {
        "stop_gradient": lambda x: x * wl(sg(x)),
        "round": lambda x: x * wl(jnp.round(x)),
        "constant": lambda x: x * wl(jnp.ones(())),
        "jit_constant_arg": lambda x: m.jit(lambda a, c: a * wl(c))(x, 2.0),
        "jit_stopped_arg": lambda x: m.jit(lambda a, c: a * wl(c))(x, sg(x)),
        "cond_stopped_operand": lambda x: lax.cond(x > 0, lambda a, c: a * wl(c),
                                                   lambda a, c: a, x, sg(x)),
        "fori_stopped_carry": lambda x: lax.fori_loop(
            0, 2, lambda i, c: (c[0] * wl(c[1]), c[1]), (x, sg(x) * 2.0))[0],
        "scan_stopped_const": lambda x: lax.scan(
            lambda cr, s: (cr * wl(sg(x) + s), None), x, jnp.array([0.1, 0.2]))[0],
        "checkpoint_stopped_arg": lambda x: m.checkpoint(lambda a, c: a * wl(c))(x, sg(x)),
        "custom_jvp_stopped_arg": lambda x: _cj(m, wl)(x, sg(x)),
    }


def _cj(m, wl):  # type: ignore[no-untyped-def]
    def body(a, c):  # type: ignore[no-untyped-def]
        return a * wl(c)

    f = m.custom_jvp(body)
    f.defjvp(lambda p, t: m.jvp(body, p, t))
    return f


@settings(max_examples=5, deadline=None)
@given(x=st.floats(-2, 2, allow_subnormal=False).filter(
    lambda v: abs(v) > 1e-3 and abs(v % 1 - 0.5) > 1e-3))  # away from round's kinks
@pytest.mark.parametrize("name", sorted(_loop_cases(fg)))
def test_reverse_mode_skips_a_while_loop_the_inputs_do_not_reach(name: str, x: float) -> None:
    jax = _jax()
    a = np.asarray(x)
    f = _loop_cases(fg)[name]
    with jax_x64_mode(jax, True):
        jf = _loop_cases(jax)[name]
        want = {"grad": jax.grad(jf)(a), "jit_grad": jax.jit(jax.grad(jf))(a),
                "hessian": jax.hessian(jf)(a), "vmap_grad": jax.vmap(jax.grad(jf))(a[None])}
    got = {"grad": fg.grad(f)(a), "jit_grad": fg.jit(fg.grad(f))(a),
           "hessian": fg.hessian(f)(a), "vmap_grad": fg.vmap(fg.grad(f))(a[None])}
    for k, w in want.items():
        np.testing.assert_allclose(got[k], np.asarray(w), rtol=1e-12, err_msg=k)


@pytest.mark.parametrize("wrap", ["plain", "jit", "cond", "scan", "checkpoint"])
def test_reverse_mode_through_a_while_loop_the_input_reaches_still_raises(wrap: str) -> None:
    # JAX: "Reverse-mode differentiation does not work for lax.while_loop"
    def wl(c0):  # type: ignore[no-untyped-def]
        return fg.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, 0.5 * c[1]),
                                 (0, c0))[1]

    f = {"plain": wl, "jit": fg.jit(wl),
         "cond": lambda x: fg.lax.cond(x > 0, wl, lambda v: v, x),
         "scan": lambda x: fg.lax.scan(lambda c, s: (wl(c + s), None), x, fnp.ones(2))[0],
         "checkpoint": fg.checkpoint(wl)}[wrap]
    # JAX's error: a ValueError with JAX's text (and funcgrad's NonDifferentiableError)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                       "lax.while_loop") as info:
        fg.grad(f)(np.array(0.7))
    assert isinstance(info.value, fg.errors.NonDifferentiableError)
    # forward mode works, and matches the derivative 0.125
    assert float(fg.jvp(wl, (np.array(0.7),), (np.array(1.0),))[1]) == 0.125


def test_batched_scatter_with_an_int64_index_array_outside_x64() -> None:
    # jacfwd (vmap of jvp) of x.at[idx].min/max/multiply with a NumPy int64 index: the batch
    # positions (iota, int32 without x64) were concatenated with the int64 indices
    # (DTypeError). jacfwd == jacrev, and both equal JAX's, repeated indices included.
    jax = _jax()
    import jax.numpy as jnp

    idx = np.array([0, 2, 0, 0])
    x = np.array([1.0, -2.0, 3.0], np.float32)
    v = np.array([1.0, 2.0, 1.0, -1.5], np.float32)
    for op, argnums in (("min", 1), ("max", 1), ("multiply", 0), ("add", 1)):
        def f(a, b, op=op):  # type: ignore[no-untyped-def]
            return getattr(fnp.asarray(a).at[idx], op)(b) * 1.5

        def g(a, b, op=op):  # type: ignore[no-untyped-def]
            return getattr(jnp.asarray(a).at[idx], op)(b) * 1.5

        want = np.asarray(jax.jacrev(g, argnums)(x, v))
        np.testing.assert_allclose(np.asarray(fg.jacfwd(f, argnums)(x, v)), want, atol=1e-6)
        np.testing.assert_allclose(np.asarray(fg.jacrev(f, argnums)(x, v)), want, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(x=st.floats(-1.5, 1.5, allow_subnormal=False), method=st.sampled_from(["min", "max"]))
def test_scatter_extreme_with_clipped_indices_has_the_finite_difference_derivative(
        x: float, method: str) -> None:
    # Indices 1, 1 clip onto element 0 of a length-1 array; JAX gives inf here (sharp bits).
    const = np.array([[0.9], [2.1]]) * (1.0 if method == "min" else -1.0)

    def f(a):  # type: ignore[no-untyped-def]
        a = fnp.asarray(a)
        v = 0.7 * fnp.sin(a.ravel()[0]) + const
        return fnp.sum(getattr(a.at[np.array([1, 1])], method)(v, mode="clip"))

    a = np.array([[x]])
    if np.min(np.abs(x - (0.7 * np.sin(x) + const))) < 1e-3:
        return  # at a tie the derivative is split: finite differences see a kink
    eps = 1e-6
    fd = (float(f(a + eps)) - float(f(a - eps))) / (2 * eps)
    np.testing.assert_allclose(float(fg.grad(f)(a)[0, 0]), fd, rtol=1e-6, atol=1e-8)
    check_grads(f, (a,), order=1, modes=("fwd", "rev"))


def _zero_ct_cases(m):  # type: ignore[no-untyped-def]
    """A while_loop the input reaches, in an output whose cotangent is a symbolic zero."""
    def wl(c0):  # type: ignore[no-untyped-def]
        return m.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, 0.5 * c[1]),
                                (0, c0))[1]

    return {
        "jit": m.jit(lambda x: (x * 2.0, wl(x))),
        "cond": lambda x: m.lax.cond(x > 0, lambda v: (v * 2.0, wl(v)), lambda v: (v, v), x),
        "scan": lambda x: m.lax.scan(lambda c, _: ((c[0] * 2.0, wl(c[1])), None), (x, x),
                                     None, length=2)[0],
        "checkpoint": m.checkpoint(lambda x: (x * 2.0, wl(x))),
    }


@settings(max_examples=5, deadline=None)
@given(x=st.floats(0.1, 2.0))
@pytest.mark.parametrize("name", ["jit", "cond", "scan", "checkpoint"])
def test_zero_cotangent_does_not_transpose_a_while_loop(name: str, x: float) -> None:
    jax = _jax()
    a = np.asarray(x)
    f = _zero_ct_cases(fg)[name]
    with jax_x64_mode(jax, True):
        jf = _zero_ct_cases(jax)[name]
        want = [jax.grad(lambda v: jf(v)[0])(a), jax.jit(jax.grad(lambda v: jf(v)[0]))(a)]
        with pytest.raises(ValueError, match="Reverse-mode"):
            jax.grad(lambda v: jf(v)[1])(a)
    got = [fg.grad(lambda v: f(v)[0])(a), fg.jit(fg.grad(lambda v: f(v)[0]))(a)]
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-12)
    with pytest.raises(ValueError, match="Reverse-mode"):
        fg.grad(lambda v: f(v)[1])(a)


def test_erf_inv_second_order_tail_is_the_documented_difference() -> None:
    # Program 5983 of seed 0: a Hessian entry of -1.5262e-11 (mpmath) is -1.5345e-11 in
    # funcgrad and -1.6990e-11 in JAX (XLA's erf_inv polynomial in the tail): counted as
    # the sharp_bits row, while a real error in that program would still count.
    from fuzz_programs import skip_reason

    jax = _jax()
    prog = Prog(((3,),), (("logaddexp_scalar",), ("erf_inv",)), None, 1870189123)
    with jax_x64_mode(jax, True), fg.enable_x64():
        bad = check(prog, ["hessian"])
    assert bad and all(skip_reason(prog, b) is not None for b in bad)
    wrong = {**bad[0], "got": [{**bad[0]["got"][0],
                                "values": [v * 1.01 for v in bad[0]["got"][0]["values"]]}]}
    assert skip_reason(prog, wrong) is None
    # mpmath's value of that entry (the reference both are measured against)
    with fg.enable_x64():
        h = np.asarray(fg.hessian(lambda v: fg.lax.erf_inv(
            0.9 * fnp.tanh(fnp.logaddexp(0.0, 20.0 * v))).sum())(
            np.random.default_rng(1870189123).uniform(-1.5, 1.5, 3)))
    assert abs(h[2, 2] - (-1.52618639277146e-11)) < 2e-13


def test_jax_jit_in_place_update_reading_its_operand_is_not_a_finding() -> None:
    # Program 6629 of seed 0: jax.jit's in-place dynamic_update_slice reads operand values
    # it already overwrote (JAX op by op and NumPy agree with funcgrad): the oracle is JAX
    # op by op where JAX's compiled program disagrees with it.
    jax = _jax()
    x = np.array([-1.4389, 0.5446, -1.0648, 1.2035, 1.3555, -0.9736, -1.4024, 0.3144])
    mask = np.arange(8) >= 3

    def f(m: Any, v: Any) -> Any:
        y = v[mask]
        return m.lax.dynamic_update_slice(y, 2.0 * m.numpy.sin(y[0:3]), (2,))

    y = x[mask].copy()
    y[2:5] = 2.0 * np.sin(x[mask][0:3])
    np.testing.assert_allclose(np.asarray(f(fg, fnp.asarray(x))), y, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fg.jit(lambda v: f(fg, v))(x)), y, rtol=1e-12)
    prog = Prog(((1, 1, 1), (1, 1, 1), (2, 2, 2)),
                (("bool_mask",), ("dynamic_update_slice", (("int", 2),), (3,))), None, 539250076)
    with jax_x64_mode(jax, True), fg.enable_x64():
        assert check(prog) == []


def test_std_at_zero_spread_matches_jax() -> None:
    # Program 2417 of seed 0: std of equal elements, whose derivative is NaN (0/0). It was
    # a documented difference while funcgrad's mean divided truly: its deviations from
    # the mean were not all zero where JAX's (the sum times the reciprocal count) were.
    jax = _jax()
    prog = Prog(((1,),), (("take_repeated", -1), ("ellipsis_reverse",), ("std", 0, False)),
                None, 154577572)
    with jax_x64_mode(jax, True), fg.enable_x64():
        bad = check(prog, ["vmap_grad"])
        g = fg.grad(lambda v: fnp.std(fnp.stack([v[0], v[0]])))(np.array([0.3]))
    assert not bad
    assert np.isnan(np.asarray(g)).all()


@pytest.mark.parametrize("name", ["median", "quantile", "percentile", "nanmedian",
                                  "nanquantile", "nanpercentile"])
def test_quantiles_of_a_0d_array_with_keepdims_have_jaxs_shape(name: str) -> None:
    # Program 7137 of seed 0: JAX ravels a 0-d input, so keepdims gives shape (1,) (NumPy: ())
    jax = _jax()
    x = np.float64(0.3)
    for q in (0.5, np.array([0.5, 0.7])):
        args = (x,) if "median" in name else (x, q)
        for keepdims in (True, False):
            want = getattr(jax.numpy, name)(*args, axis=None, keepdims=keepdims)
            got = getattr(fnp, name)(*args, axis=None, keepdims=keepdims)
            assert got.shape == want.shape
            np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def test_clipped_at_min_deciding_the_result_has_a_zero_derivative() -> None:
    # Program 7998 of seed 0: x.at[[0, 1, 2]].min(0.6, mode="clip") on a 1-element x > 0.6
    # is the constant 0.6 near x: derivative 0 (finite differences); JAX's jvp gives -0.197
    # (a sharp_bits row, counted by the fuzzer as documented).
    from fuzz_programs import skip_reason

    def f(v: Any) -> Any:
        return v.at[np.array([0, 1, 2])].min(0.6, mode="clip")

    x = fnp.array([0.64])
    _, t = fg.jvp(f, (x,), (fnp.array([1.0]),))
    fd = (np.asarray(f(x + 1e-6)) - np.asarray(f(x - 1e-6))) / 2e-6
    assert float(np.asarray(t)[0]) == 0.0 == float(fd[0])
    jax = _jax()
    prog = Prog(((2,), (3,)), (("std", -1, True), ("at_min", "min", "array", (0, 1, 2), "clip",
                                                   True)), None, 2005719520)
    with jax_x64_mode(jax, True), fg.enable_x64():
        bad = check(prog, ["jvp"])
    assert bad and all(skip_reason(prog, b) is not None for b in bad)


def test_std_of_an_unread_input_jacfwd_and_jacrev_differ_as_in_jax() -> None:
    # Found by the README's randomized run (test_fuzz_jax.test_self_consistent): with an
    # input std does not read, jacfwd gives NaN (std's 0/0 meets the zero tangent) and
    # jacrev 0, in JAX as here; the self-consistency test accepts exactly that.
    jax = _jax()
    f_fg = lambda a, b: fnp.std(b)  # noqa: E731
    f_jax = lambda a, b: jax.numpy.std(b)  # noqa: E731
    with jax_x64_mode(jax, True):
        x = np.asarray(0.7)
        for t_fg, t_jax in ((fg.jacfwd, jax.jacfwd), (fg.jacrev, jax.jacrev)):
            ours = [float(v) for v in t_fg(f_fg, argnums=(0, 1))(x, x)]
            theirs = [float(v) for v in t_jax(f_jax, argnums=(0, 1))(x, x)]
            np.testing.assert_array_equal(ours, theirs)
