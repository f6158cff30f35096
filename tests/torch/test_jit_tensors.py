"""jit accepts functions over Tensors (DESIGN.md section 5)."""

from __future__ import annotations

import numpy as np

import funcgrad as fg
import funcgrad.torch as ft


def test_jit_of_a_tensor_function_returns_tensors() -> None:
    calls = []

    def f(t, a):
        calls.append(1)
        return (t * 2 + a).sum(), t.relu()

    jf = fg.jit(f)
    t = ft.tensor([[-1.0, 2.0], [3.0, -4.0]])
    for _ in range(3):
        total, r = jf(t, np.ones((2, 2), np.float32))
    assert isinstance(total, ft.Tensor) and isinstance(r, ft.Tensor)
    assert total.item() == 4.0 and r.tolist() == [[0.0, 2.0], [3.0, 0.0]]
    assert len(calls) == 1  # traced once, then cached


def test_jit_of_a_module_forward_matches_eager() -> None:
    ft.manual_seed(0)
    model = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.Tanh(), ft.nn.Linear(4, 2))
    x = ft.randn(5, 3)
    jitted = fg.jit(lambda inp: model(inp))
    out = jitted(x)
    assert isinstance(out, ft.Tensor) and out.shape == (5, 2)
    np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-6)
    text = jitted.lower(x).as_text()
    assert "p" in text and "run(" in text  # a compiled program, printable
