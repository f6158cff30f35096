"""Regression tests for what the differential fuzzer (scripts/fuzz.py) found, one per bug,
each the fuzzer's shrunk repro made into a fixed check against JAX (or NumPy's values)."""

from __future__ import annotations

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
    for reps in ([1, 0, 2], np.array([2, 1, 1])):
        np.testing.assert_array_equal(fnp.repeat(x, reps, axis=1), np.repeat(x, reps, axis=1))
    check_grads(lambda a: fnp.repeat(a, [1, 0, 2], axis=1), (x,), order=1)


def test_repeat_total_repeat_length_matches_jax() -> None:
    jax = _jax()
    x = np.arange(6.0).reshape(2, 3)
    for reps, total in (([1, 0, 2], 5), ([2, 2, 2], 4)):
        want = jax.numpy.repeat(x, np.asarray(reps), axis=1, total_repeat_length=total)
        got = fnp.repeat(x, reps, axis=1, total_repeat_length=total)
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
    # with the funcgrad function to use (np.linalg.norm -> funcgrad.numpy.linalg.norm).
    def f(a):  # type: ignore[no-untyped-def]
        return a * np.shape(a)[0] + np.ndim(a) + np.size(a) + np.size(a, 1)

    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(fg.jit(f)(x), np.full((2, 3), 13.0, np.float32))
    np.testing.assert_array_equal(fg.grad(lambda a: f(a).sum())(x), np.full((2, 3), 2.0))
    with pytest.raises(fg.errors.TracerArrayConversionError,
                       match=r"funcgrad\.numpy\.linalg\.norm"):
        fg.jit(lambda a: np.linalg.norm(a))(x)
