"""Eager backward stages a node's vjp rule once its signature has come back often
(funcgrad.transforms.staged_vjp). On the PyTorch face the staged rules must give the eager
rules' gradients bit for bit, and everything backward does around a rule (hooks,
retain_grad, version checks, freeing, create_graph, anomaly mode) must stay as it was."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft
from funcgrad.primitives import elementwise as E
from funcgrad.transforms import staged_vjp
from funcgrad.transforms.jit import clear_caches

# Unary and binary steps of a drawn program (t: the running tensor, x: the input).
STEPS: dict[str, Callable[[Any, Any], Any]] = {
    "mul_const": lambda t, x: t * 0.7,
    "add_const": lambda t, x: t + 0.25,
    "rsub_const": lambda t, x: 1.5 - t,
    "div_const": lambda t, x: t / 1.3,
    "tanh": lambda t, x: t.tanh(),
    "sigmoid": lambda t, x: t.sigmoid(),
    "exp_small": lambda t, x: (t * 0.1).exp(),
    "relu": lambda t, x: t.relu(),
    "square": lambda t, x: t * t,
    "mul_x": lambda t, x: t * x,
    "add_x": lambda t, x: t + x,
    "sub_x": lambda t, x: t - x,
    "sin": lambda t, x: t.sin(),
    "abs": lambda t, x: t.abs(),
    "pow2": lambda t, x: t ** 2,
    "clamp": lambda t, x: t.clamp(-0.5, 0.8),
    "where": lambda t, x: ft.where(x > 0, t, t * 2.0),
    "broadcast_row": lambda t, x: t * x[..., :1],
}
# stage_at sets the threshold afresh at each use, so one fixture serves every example.
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture()
def stage_at(monkeypatch: pytest.MonkeyPatch) -> Callable[[int], None]:
    def set_threshold(n: int) -> None:
        clear_caches()
        monkeypatch.setattr(staged_vjp, "STAGE_AFTER", n)
    yield set_threshold
    clear_caches()


def _grads(program: list[str], x0: np.ndarray, repeat: int) -> list[np.ndarray]:
    out = []
    for _ in range(repeat):
        x = ft.tensor(x0, requires_grad=True)
        t = x
        for name in program:
            t = STEPS[name](t, x)
        t.sum().backward()
        out.append(x.grad.numpy().copy())
    return out


@SETTINGS
@given(program=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=12),
       x0=hnp.arrays(st.sampled_from([np.float32, np.float64]),
                     hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                     elements=st.floats(-2, 2, width=32)))
def test_staged_gradients_equal_eager_bit_for_bit(program: list[str], x0: np.ndarray,
                                                  stage_at: Callable[[int], None]) -> None:
    stage_at(1 << 30)
    eager = _grads(program, x0, 1)[0]
    stage_at(1)
    staged = _grads(program, x0, 2)  # the first pass stages, the second runs staged
    for g in staged:
        assert g.dtype == eager.dtype == x0.dtype
        np.testing.assert_array_equal(g, eager, strict=True)


def test_rules_are_staged_after_their_threshold(stage_at: Callable[[int], None]) -> None:
    stage_at(3)
    x0 = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    _grads(["mul_const"], x0, 2)
    assert staged_vjp.staged_count(E.mul_p) == 0
    _grads(["mul_const"], x0, 1)
    assert staged_vjp.staged_count(E.mul_p) == 1
    _grads(["mul_const"], x0, 3)
    assert staged_vjp.staged_count(E.mul_p) == 1  # staged once, then reused


def test_hooks_retain_grad_and_version_checks_still_run(stage_at: Callable[[int], None]
                                                        ) -> None:
    stage_at(1)
    x0 = np.array([0.5, -1.0, 2.0], np.float32)
    for _ in range(2):
        x = ft.tensor(x0, requires_grad=True)
        h = x.tanh()
        h.retain_grad()
        seen: list[np.ndarray] = []
        h.register_hook(lambda g, seen=seen: seen.append(g.numpy().copy()))
        y = (h * 3.0).sum()
        y.backward()
        np.testing.assert_array_equal(h.grad.numpy(), np.full(3, 3.0, np.float32))
        np.testing.assert_array_equal(seen[0], np.full(3, 3.0, np.float32))
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
        x = ft.tensor(x0, requires_grad=True)
        h = x.tanh()
        z = (h * 2.0).sum()
        h.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward()


def test_create_graph_records_the_backward(stage_at: Callable[[int], None]) -> None:
    stage_at(1)
    for _ in range(3):
        x = ft.tensor(np.array([0.3, -0.7], np.float64), requires_grad=True)
        (g,) = ft.autograd.grad((x.tanh() * x).sum(), x, create_graph=True)
        (gg,) = ft.autograd.grad(g.sum(), x)
        # d/dx (tanh(x) + x sech^2(x)) = 2 sech^2(x) - 2 x tanh(x) sech^2(x)
        v = np.array([0.3, -0.7])
        t = np.tanh(v)
        s = 1 - t * t
        np.testing.assert_allclose(gg.numpy(), 2 * s - 2 * v * t * s, rtol=1e-12)


def test_matches_pytorch_when_staged(stage_at: Callable[[int], None]) -> None:
    torch = pytest.importorskip("torch")
    stage_at(1)
    x0 = np.random.default_rng(3).standard_normal((4, 4)).astype(np.float32)
    program = ["mul_const", "add_const", "tanh", "mul_x"] * 10
    ours = _grads(program, x0, 3)[-1]
    x = torch.tensor(x0, requires_grad=True)
    t = x
    for name in program:
        t = STEPS[name](t, x)
    t.sum().backward()
    np.testing.assert_allclose(ours, x.grad.numpy(), rtol=2e-5, atol=1e-6)
