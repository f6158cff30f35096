"""``torch.autograd.forward_ad``: dual tensors in eager code. Tangents are checked against
central finite differences (float64, hypothesis-drawn shapes and values) and against real
torch's forward AD where it is installed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.autograd.forward_ad as fwAD
from funcgrad.torch import _profiling

# Functions of one tensor, written as PyTorch programs (methods, operators, torch.*, F.*).
_PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "chain": lambda L, x: (x.sin() * x + 2.0 * x.exp()).sum(),
    "operators": lambda L, x: (-x) ** 2 / (1.5 + x.abs()) - 3 * x,
    "torch_functions": lambda L, x: L.tanh(L.cumsum(x, 0)) + L.where(x > 0, x, x * x),
    "functional": lambda L, x: L.nn.functional.softplus(x) * L.nn.functional.gelu(x),
    "softmax": lambda L, x: L.softmax(x.reshape(1, -1), dim=1).flatten() * x,
    "reductions": lambda L, x: L.stack([x.mean(), x.norm(), x.max(), x.logsumexp(0)]),
    "indexing": lambda L, x: x[1:] * x[:-1] + x.flip(0)[1:],
    "matmul": lambda L, x: (L.outer(x, x) @ x) / (1 + x @ x),
}


def _tangent(L: Any, fwd: Any, name: str, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    with fwd.dual_level():
        d = fwd.make_dual(L.tensor(x), L.tensor(v))
        out = _PROGRAMS[name](L, d)
        t = fwd.unpack_dual(out).tangent
        return np.asarray(t.numpy())


def _value(name: str, x: np.ndarray) -> np.ndarray:
    return np.asarray(_PROGRAMS[name](ft, ft.tensor(x)).numpy())


@settings(max_examples=10, deadline=None)
@given(name=st.sampled_from(sorted(_PROGRAMS)), n=st.integers(2, 6),
       seed=st.integers(0, 2 ** 31 - 1))
def test_tangents_match_finite_differences(name: str, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.3, 1.7, n) * rng.choice([-1.0, 1.0], n)
    v = rng.normal(size=n)
    got = _tangent(ft, fwAD, name, x, v)
    h = 1e-6
    fd = (_value(name, x + h * v) - _value(name, x - h * v)) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_tangents_match_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    rng = np.random.default_rng(3)
    x, v = rng.uniform(0.3, 1.7, 5) * np.array([1, -1, 1, -1, 1.0]), rng.normal(size=5)
    np.testing.assert_allclose(_tangent(ft, fwAD, name, x, v),
                               _tangent(torch, tfw, name, x, v), rtol=1e-12, atol=1e-14)


def test_printing_levels_and_errors_as_pytorch() -> None:
    x, v = ft.tensor([1.0, 2.0, 3.0]), ft.tensor([1.0, 0.5, -1.0])
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, v)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, v)
        assert repr(d) == "tensor([1., 2., 3.], tangent=tensor([ 1.0000,  0.5000, -1.0000]))"
        assert d._base is x and fwAD.unpack_dual(d).tangent is v
        s = (d * d).sum()
        assert repr(s) == "tensor(14., tangent=-2.0)"  # 2 * sum(x * v)
        primal, tangent = fwAD.unpack_dual(s)
        assert repr(primal) == "tensor(14.)" and repr(tangent) == "tensor(-2.)"
        assert fwAD.unpack_dual(x) == (x, None)
        assert fwAD.unpack_dual(d.detach()).tangent is None
        assert fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d.new_zeros(2)).tangent is None
        with pytest.raises(RuntimeError, match="Tensor is of size \\[3\\] while the given "
                                               "forward gradient is of size \\[2\\]"):
            fwAD.make_dual(x, ft.ones(2))
        with pytest.raises(ValueError, match="Expected primal to be floating point or "
                                             "complex, but got: torch.int64"):
            fwAD.make_dual(ft.tensor([1, 2]), ft.ones(2))
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass
    assert fwAD.unpack_dual(s).tangent is None  # the level's tangents are gone
    assert not _profiling._wrapped and _profiling.state.forward is None


def test_in_place_writes_and_setitem_carry_tangents() -> None:
    x, v = ft.tensor([1.0, 2.0, 3.0]), ft.tensor([1.0, 0.5, -1.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        w = ft.zeros(3)
        w.add_(d).mul_(2)
        assert fwAD.unpack_dual(w).tangent.tolist() == [2.0, 1.0, -2.0]
        assert w.tolist() == [2.0, 4.0, 6.0]
        buf = ft.zeros(4)
        buf[1:] = d * d
        assert fwAD.unpack_dual(buf).tangent.tolist() == [0.0, 2.0, 2.0, -6.0]
        assert buf.tolist() == [0.0, 1.0, 4.0, 9.0]
        e = d.clone()
        e.detach_()
        assert fwAD.unpack_dual(e).tangent is None


def test_modules_and_autograd_together() -> None:
    ft.manual_seed(0)
    model = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.Tanh(), ft.nn.Linear(4, 1))
    x = ft.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    v = ft.tensor([[1.0, 0.0, 0.0]])
    with fwAD.dual_level():
        out = model(fwAD.make_dual(x, v))
        jvp = fwAD.unpack_dual(out).tangent
        out.sum().backward()  # the primal keeps its graph
    (_, expected) = ft.func.jvp(model, (x.detach(),), (v,))
    np.testing.assert_allclose(jvp.numpy(), expected.detach().numpy(), rtol=1e-6)
    assert x.grad is not None and x.grad.shape == (1, 3)


def test_forward_ad_and_the_profiler_together() -> None:
    x = ft.tensor([1.0, 2.0])
    with ft.profiler.profile() as prof:
        with fwAD.dual_level():
            y = fwAD.make_dual(x, ft.ones(2)).exp()
            np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), np.exp([1.0, 2.0]),
                                       rtol=1e-6)
        assert _profiling._wrapped  # the profile still records
        x.sin()
    assert [e.key for e in prof.key_averages()].count("aten::exp") == 1
    assert "aten::sin" in [e.key for e in prof.key_averages()]
    assert not _profiling._wrapped


@pytest.mark.parametrize("name", ["linalg_norm", "fft", "det", "special_erf", "sort"])
def test_submodule_functions_carry_tangents(name: str) -> None:
    fns: dict[str, Callable[[Any, Any], Any]] = {
        "linalg_norm": lambda L, d: L.linalg.norm(d),
        "fft": lambda L, d: L.fft.fft(d).abs(),
        "det": lambda L, d: L.linalg.det(L.outer(d, d) + L.eye(3, dtype=L.float64)),
        "special_erf": lambda L, d: L.special.erf(d),
        "sort": lambda L, d: L.sort(d).values}

    def tangent(L: Any, fwd: Any) -> np.ndarray:
        x = L.tensor([3.0, 1.0, 2.0], dtype=L.float64)
        with fwd.dual_level():
            d = fwd.make_dual(x, L.tensor([1.0, 2.0, 3.0], dtype=L.float64))
            t = fwd.unpack_dual(fns[name](L, d)).tangent
            assert t is not None
            return np.asarray(t.numpy())

    ours = tangent(ft, fwAD)
    h = 1e-6
    v = np.array([1.0, 2.0, 3.0])

    def at(x: np.ndarray) -> np.ndarray:
        return np.asarray(fns[name](ft, ft.tensor(x, dtype=ft.float64)).numpy())

    x0 = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(ours, (at(x0 + h * v) - at(x0 - h * v)) / (2 * h), rtol=1e-6)
    torch = pytest.importorskip("torch")
    import torch.autograd.forward_ad as tfw

    np.testing.assert_allclose(ours, tangent(torch, tfw), rtol=1e-12)
