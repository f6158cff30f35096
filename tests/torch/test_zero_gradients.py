"""A leaf reached only through operations whose derivative is zero (floor, ceil, round,
sign, trunc) gets a zero ``.grad`` as in PyTorch, not None; an unused input stays None."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.torch as ft

OPS = ["floor", "ceil", "round", "sign", "trunc"]


@pytest.mark.parametrize("name", OPS)
def test_zero_derivative_ops_give_zero_grads(name: str) -> None:
    x = ft.tensor([1.5, -2.5, 0.25], requires_grad=True)
    getattr(x, name)().sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))
    assert x.grad.dtype == x.dtype


@pytest.mark.parametrize("name", OPS)
def test_matches_torch(name: str) -> None:
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -2.5], requires_grad=True)
    f = ft.tensor([1.5, -2.5], requires_grad=True)
    (getattr(t, name)() * 3.0 + t.detach()).sum().backward()
    (getattr(f, name)() * 3.0 + f.detach()).sum().backward()
    np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())


def test_an_unused_input_still_gets_none() -> None:
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    y = ft.tensor([1.0, 2.0], requires_grad=True)
    (x.floor() * 2.0).sum().backward()
    assert y.grad is None
    (gx, gy) = ft.autograd.grad((x * 2.0).sum(), (x, y), allow_unused=True)
    assert gy is None and gx.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("name", ["remainder", "pow", "add", "sub", "mul", "div"])
def test_a_python_number_first_as_in_torch(name: str) -> None:
    x = ft.tensor([1.5, -2.5])
    want = {"remainder": [0.5, -0.5], "pow": [2 ** 1.5, 2 ** -2.5], "add": [3.5, -0.5],
            "sub": [0.5, 4.5], "mul": [3.0, -5.0], "div": [2 / 1.5, 2 / -2.5]}[name]
    np.testing.assert_allclose(getattr(ft, name)(2, x).numpy(), want, rtol=1e-6)
