"""jit's NumPy programs evaluate equations of constants once, at compile time (seeds,
zeros, masks of a gradient): same values, nothing the caller owns made read-only or shared
between calls."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.backends.compile_python import compile_jaxpr

FLOATS = st.floats(-10, 10, allow_subnormal=False, width=32)


def test_constant_equations_leave_the_program() -> None:
    closed = fg.make_jaxpr(lambda x: x * fnp.full((3,), 2.0) + fnp.ones(3) * 3.0)(np.ones(3))
    assert any(e.primitive.name == "broadcast_in_dim" for e in closed.jaxpr.eqns)
    prog = compile_jaxpr(closed, np)
    assert "broadcast" not in prog.source and "p0" not in prog.source.split("\n", 1)[1]
    np.testing.assert_array_equal(prog(np.arange(3.0, dtype=np.float32))[0], [3.0, 5.0, 7.0])


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(max_dims=2, max_side=4), elements=FLOATS))
def test_folded_gradients_equal_eager(x: np.ndarray) -> None:
    def f(v):  # the gradient's seed and the zeros of where's other branch are constants
        return fnp.sum(fnp.where(v > 0, v * v, 0.0) * fnp.arange(v.size).reshape(v.shape))

    want = fg.grad(f)(x)
    got = fg.jit(fg.grad(f))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_outputs_are_never_folded_into_one_shared_buffer() -> None:
    closed = fg.make_jaxpr(lambda x: (x + 1.0, fnp.zeros(4) + 1.0))(np.ones(2))
    prog = compile_jaxpr(closed, np)
    a, b = prog(np.ones(2, np.float32))[1], prog(np.ones(2, np.float32))[1]
    assert a is not b and not np.shares_memory(a, b)
    a[0] = 5.0  # the caller may write what it was given
    np.testing.assert_array_equal(prog(np.ones(2, np.float32))[1], np.ones(4))


def test_a_closed_over_array_stays_writable() -> None:
    table = np.arange(6.0).reshape(2, 3)
    f = fg.jit(lambda x: x + fnp.asarray(table).reshape(3, 2).T)
    np.testing.assert_array_equal(np.asarray(f(np.zeros((2, 3)))), table.reshape(3, 2).T)
    assert table.flags.writeable


def test_a_folded_constant_feeds_a_fused_cpu_kernel() -> None:
    # The gradient of sum(v @ w) is the seed (a constant) times w.T: a product of constants,
    # folded into a fresh array that the numba cluster of tanh's derivative then reads.
    w = np.linspace(-1.0, 1.0, 64 * 3, dtype=np.float32).reshape(64, 3)
    fg.config.update("funcgrad_cpu_fusion_min_size", 0)
    try:
        def f(v):
            return fnp.sum(fnp.tanh(v) * 2.0) + fnp.sum(v @ w)

        x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(fg.jit(fg.grad(f))(x)),
                                   2.0 / np.cosh(x) ** 2 + w.sum(1), rtol=1e-5, atol=1e-5)
    finally:
        fg.config.update("funcgrad_cpu_fusion_min_size", None)
