"""Division by a broadcast divisor gives JAX's numbers: XLA rewrites ``a / broadcast(b)``
as ``a * broadcast(1 / b)`` (two roundings: about a third of float32 quotients differ from
true division in the last bit), and funcgrad's JAX face computes it so, eagerly, jitted and
in fused kernels. The PyTorch face divides truly, as PyTorch does. Checked bit for bit
against JAX and torch 2.13 on drawn values and shapes.
"""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.testing import jax_x64_mode

SETTINGS = settings(max_examples=15, deadline=None)
DTYPES = ["float32", "float64", "float16"]


@st.composite
def operands(draw: Any) -> tuple[np.ndarray, Any, str]:
    """(x, divisor, kind): a 1-2-d ``x`` and a divisor that is a Python float, a 0-d
    array, a row, a column or a full array (the last divides truly in XLA too)."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=9))
    # (Quotients stay normal: XLA's CPU code flushes subnormal results to zero, a separate
    # difference.)
    width = 16 if dtype == np.float16 else 32
    floats = st.just(0.0) | st.floats(2 ** -6, 1e3, width=width) | st.floats(-1e3, -2 ** -6,
                                                                          width=width)
    x = draw(hnp.arrays(dtype, shape, elements=floats))
    kind = draw(st.sampled_from(["python", "0-d", "row", "column", "full"]))
    away = st.floats(0.5, 50.0, width=16 if dtype == np.float16 else 32)
    d: Any
    if kind == "python":
        d = draw(away)
    elif kind == "0-d":
        d = np.asarray(draw(away), dtype)
    else:
        dshape = {"row": shape[1:], "column": (shape[0], 1), "full": shape}[kind]
        d = draw(hnp.arrays(dtype, dshape, elements=away))
    return x, d, kind


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@SETTINGS
@given(operands())
def test_division_matches_jax_bit_for_bit(case: Any) -> None:
    jax = pytest.importorskip("jax")
    x, d, _ = case
    array = isinstance(d, np.ndarray)
    with jax_x64_mode(jax, True):
        want = jax.numpy.asarray(x) / (jax.numpy.asarray(d) if array else d)
        want_jit = jax.jit(lambda a, b: a / b)(x, d) if array else \
            jax.jit(lambda a: a / d)(x)
    with fg.enable_x64():
        _same(fnp.asarray(x) / (fnp.asarray(d) if array else d), want)
        _same(fnp.divide(x, d), want)
        if array:
            _same(fg.jit(lambda a, b: a / b)(x, d), want_jit)
        elif x.size > 1:
            # (XLA multiplies by a constant's reciprocal even where the result has one
            # element; funcgrad's jit divides that one truly: docs/sharp_bits.md.)
            _same(fg.jit(lambda a: a / d)(x), want_jit)


@SETTINGS
@given(operands())
def test_a_fused_chain_divides_as_the_eager_program(case: Any) -> None:
    """A jitted elementwise chain (fused on the CPU when numba is installed) divides by a
    0-d divisor as eager evaluation does."""
    x, d, _ = case
    with fg.enable_x64():
        def f(a: Any) -> Any:
            return (a * 2 - 1) / d + a

        _same(fg.jit(f)(x), f(fnp.asarray(x)))


@SETTINGS
@given(operands())
def test_the_pytorch_face_divides_truly(case: Any) -> None:
    torch = pytest.importorskip("torch")
    import funcgrad.torch as ft

    x, d, _ = case
    if isinstance(d, np.ndarray):
        want = (torch.tensor(x) / torch.tensor(d)).numpy()
        got = ft.tensor(x) / ft.tensor(d)
        tracked = ft.tensor(x, requires_grad=True) / ft.tensor(d)
    else:
        want = (torch.tensor(x) / d).numpy()
        got = ft.tensor(x) / d
        tracked = ft.tensor(x, requires_grad=True) / d
    _same(got.numpy(), want)
    _same(tracked.detach().numpy(), want)


def test_mean_over_an_axis_is_the_sum_times_the_reciprocal_count() -> None:
    """JAX's mean divides a row sum by the count: the reciprocal's product."""
    x = np.arange(1.0, 301.0, dtype=np.float32).reshape(3, 100) / np.float32(7)
    s = np.asarray(fnp.sum(fnp.asarray(x), axis=1))
    _same(fnp.mean(fnp.asarray(x), axis=1), s * (np.float32(1) / np.float32(100)))


def test_empty_operands_keep_their_shape() -> None:
    """An empty array has stride 0 on every axis: no broadcast for all that."""
    x = fnp.ones((3, 0, 1))
    assert (x / fnp.ones((3, 0, 1))).shape == (3, 0, 1)
    assert (x / fnp.ones((1, 0, 1))).shape == (3, 0, 1)
    assert fg.vmap(lambda v: x[0] / v)(fnp.ones((3, 0, 1))).shape == (3, 0, 1)
