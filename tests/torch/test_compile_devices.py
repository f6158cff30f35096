"""Devices inside a ``torch.compile``d function on a GPU (``gpu``-marked: the CuPy emulator
where no GPU is found): a staged Tensor reports the device its value stands for, so code
that asks (``x.device``, ``x.is_cuda``, ``torch.arange(..., device=x.device)``) takes the
eager path, and results staged on another device than the program's (``.cpu()``, a new
CPU tensor) come back there, with gradients flowing across."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device

from funcgrad import torch

pytestmark = pytest.mark.gpu


def _both(fn: Any, *args: Any) -> tuple[Any, Any]:
    return torch.compile(fn)(*args), fn(*args)


def test_staged_tensors_report_their_device_and_results_come_back_there() -> None:
    need_device()
    x = torch.randn(4, device="cuda")

    def f(x: Any) -> Any:
        z = torch.arange(4, device=x.device)
        return ((x * z).sum().cpu(), x.is_cuda, str(x.device), torch.zeros(2),
                (x.cpu() + 1).cuda(), x.cpu().device.type)

    compiled = torch.compile(f)
    for _ in range(2):
        got, want = compiled(x), f(x)
        for g, w in zip(got, want):
            if isinstance(w, torch.Tensor):
                assert g.device == w.device, (g.device, w.device)
                np.testing.assert_allclose(host(g), host(w), rtol=1e-6)
            else:
                assert g == w
    assert compiled.explain().graph_break_count == 0


def test_gradients_flow_back_across_a_device_move_in_a_compiled_function() -> None:
    need_device()
    w1 = torch.randn(3, device="cuda", dtype=torch.float64, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_()

    def f(w: Any) -> Any:
        return (w.sin() * 2).cpu()

    compiled = torch.compile(f)
    out, ref = compiled(w1), f(w2)
    assert out.device.type == "cpu" and out.requires_grad
    (out * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum().backward()
    (ref * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum().backward()
    assert w1.grad.device == w1.device
    np.testing.assert_allclose(host(w1.grad), host(w2.grad), rtol=1e-12)
