"""torch.linalg's norms and products: values against NumPy, gradients against finite
differences (float64, drawn shapes and values), and both against PyTorch where installed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

VECTOR_ORDS = [2, 1, math.inf, -math.inf, 3, 0.5]
MATRIX_ORDS = ["fro", 1, -1, math.inf, -math.inf]
SETTINGS = settings(max_examples=25, deadline=None)


def _matrix(draw: st.DrawFn, rows: int, cols: int) -> np.ndarray:
    vals = draw(st.lists(st.floats(-3, 3).filter(lambda v: abs(v) > 0.05),
                         min_size=rows * cols, max_size=rows * cols))
    return np.array(vals, np.float64).reshape(rows, cols)


@st.composite
def matrices(draw: st.DrawFn) -> np.ndarray:
    return _matrix(draw, draw(st.integers(1, 4)), draw(st.integers(1, 4)))


def _clear_extreme(v: np.ndarray, largest: bool) -> bool:
    """The extreme entry wins by a margin (finite differences cross no tie)."""
    s = np.sort(v)[::-1] if largest else np.sort(v)
    return len(s) == 1 or abs(s[0] - s[1]) > 1e-3


def _numeric_grad(f, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


def _value_and_grad(fn, a: np.ndarray) -> tuple[float, np.ndarray]:
    t = ft.tensor(a, requires_grad=True)
    out = fn(t)
    out.backward()
    return float(out.item()), t.grad.numpy()


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@SETTINGS
@given(a=matrices())
def test_vector_norm(ord: float, a: np.ndarray) -> None:
    want = np.linalg.norm(a.ravel(), ord)
    val, grad = _value_and_grad(lambda t: ft.linalg.vector_norm(t, ord=ord), a)
    np.testing.assert_allclose(val, want, rtol=1e-12)
    if abs(ord) != math.inf or _clear_extreme(np.abs(a).ravel(), ord > 0):
        num = _numeric_grad(lambda v: np.linalg.norm(v.ravel(), ord), a)
        np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@SETTINGS
@given(a=matrices())
def test_matrix_norm(ord: object, a: np.ndarray) -> None:
    want = np.linalg.norm(a, ord)
    val, grad = _value_and_grad(lambda t: ft.linalg.matrix_norm(t, ord=ord), a)
    np.testing.assert_allclose(val, want, rtol=1e-12)
    num = _numeric_grad(lambda v: np.linalg.norm(v, ord), a)
    sums = np.abs(a).sum(axis=0 if ord in (1, -1) else 1) if ord != "fro" else None
    if sums is None or _clear_extreme(sums, ord in (1, math.inf)):
        np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-6)


def test_norm_at_zero_has_zero_gradient() -> None:
    # PyTorch's convention (a subgradient), not NaN.
    t = ft.zeros(3, dtype=ft.float64, requires_grad=True)
    ft.linalg.vector_norm(t).backward()
    assert t.grad.tolist() == [0.0, 0.0, 0.0]


def test_norm_chooses_as_pytorch() -> None:
    a = ft.tensor([[3.0, 0.0], [0.0, 4.0]])
    assert ft.linalg.norm(a).item() == pytest.approx(5.0)
    assert ft.linalg.norm(a, ord=1).item() == pytest.approx(4.0)       # matrix 1-norm
    assert ft.linalg.norm(a, dim=1).tolist() == [3.0, 4.0]            # vector norms
    assert ft.linalg.norm(a.reshape(-1), ord=math.inf).item() == 4.0


def test_products() -> None:
    x, y = ft.tensor([1.0, 2.0, 3.0]), ft.tensor([4.0, 5.0, 6.0])
    assert ft.linalg.vecdot(x, y).item() == 32.0
    assert ft.linalg.cross(x, y).tolist() == np.cross([1, 2, 3], [4, 5, 6]).tolist()
    m = ft.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(ft.linalg.multi_dot([m, m, m]).numpy(),
                               np.linalg.multi_dot([m.numpy()] * 3))


def test_errors_are_pytorchs() -> None:
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long"):
        ft.linalg.vector_norm(ft.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        ft.linalg.matrix_norm(ft.ones(3))


def test_matches_pytorch() -> None:
    torch = pytest.importorskip("torch", exc_type=ImportError)
    a = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])
    for lib_fn, ords in ((lambda L: L.linalg.vector_norm, VECTOR_ORDS),
                         (lambda L: L.linalg.matrix_norm, MATRIX_ORDS)):
        for o in ords:
            got = []
            for L in (ft, torch):
                t = L.tensor(a, requires_grad=True)
                out = lib_fn(L)(t, ord=o)
                out.backward()
                got.append((out.item(), t.grad.numpy().copy()))
            np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-12)
            np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)
