"""Memory at the minimum on the PyTorch face: training steps leave no cyclic garbage
(checked with the collector off), object counts stay flat, saved tensors are exactly
what each derivative reads and are freed right after ``backward()`` (kept with
``retain_graph=True`` until the graph is dropped), and ``torch.compile``'d steps write
the new state into the old buffers when nothing else sees them."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gc_checks import collector_off as _collector_off
from gc_checks import cyclic_garbage as _cyclic_garbage
from gc_checks import object_growth as _object_growth

from funcgrad import torch
from funcgrad.torch import nn

N = 10_000


# ------------------------------------------------------------------ training steps


class _ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 3)

    def forward(self, x: Any) -> Any:
        h = torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 1)
        return self.fc(h.flatten(1))


class _LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 5, batch_first=True)
        self.fc = nn.Linear(5, 3)

    def forward(self, x: Any) -> Any:
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


def _step(model_name: str, optim: str, compiled: bool = False) -> Callable[[], Any]:
    torch.manual_seed(0)
    if model_name == "mlp":
        model: nn.Module = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        x = torch.randn(5, 4)
    elif model_name == "conv":
        model, x = _ConvNet(), torch.randn(2, 1, 8, 8)
    else:
        model, x = _LSTMNet(), torch.randn(2, 4, 3)
    y = torch.tensor([0, 1, 2, 0, 1][: x.shape[0]])
    opt = (torch.optim.Adam(model.parameters(), lr=0.01) if optim == "adam"
           else torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))

    def step() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return torch.compile(step) if compiled else step


CASES = [("mlp", "sgd", False), ("mlp", "adam", False), ("conv", "sgd", False),
         ("lstm", "adam", False), ("mlp", "sgd", True), ("mlp", "adam", True),
         ("conv", "adam", True)]


@pytest.mark.parametrize("case", CASES, ids=["-".join(map(str, c)) for c in CASES])
def test_training_steps_make_no_cyclic_garbage(case: tuple[str, str, bool]) -> None:
    assert _cyclic_garbage(_step(*case)) == 0


@pytest.mark.parametrize("case", [("mlp", "adam", False), ("mlp", "sgd", True)],
                         ids=["eager", "compiled"])
def test_object_counts_are_flat_across_steps(case: tuple[str, str, bool]) -> None:
    assert _object_growth(_step(*case)) <= 20


def test_first_compile_makes_no_cyclic_garbage() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])

    def step() -> None:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    # A new compiled function each time: staging, compiling and the first run.
    assert _cyclic_garbage(lambda: torch.compile(step)(), steps=3) == 0


def test_a_fresh_model_and_its_first_step_make_no_cyclic_garbage() -> None:
    assert _cyclic_garbage(_step("mlp", "sgd"), steps=3) == 0
    assert _cyclic_garbage(lambda: _step("mlp", "sgd")(), steps=3) == 0


def test_matches_pytorch_step_results() -> None:
    real = pytest.importorskip("torch")
    for lib in (real, torch):
        lib.manual_seed(0)
    ours = nn.Linear(3, 2)
    theirs = real.nn.Linear(3, 2)
    with real.no_grad():
        theirs.weight.copy_(real.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(real.tensor(ours.bias.detach().numpy()))
    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    for lib, m in ((torch, ours), (real, theirs)):
        opt = lib.optim.SGD(m.parameters(), lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            m(lib.tensor(x)).tanh().sum().backward()
            opt.step()
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ saved tensors


def _leaf(seed: int) -> Any:
    return torch.tensor(np.random.default_rng(seed).standard_normal(N), requires_grad=True)


def test_residuals_are_freed_right_after_backward() -> None:
    x = _leaf(0)
    with _collector_off():
        t = (x * 2.0).tanh()
        ref = weakref.ref(t._data)
        loss = t.sum()
        del t
        assert ref() is not None  # tanh's derivative reads its output
        loss.backward()
        assert ref() is None
    np.testing.assert_allclose(x.grad.numpy(), 2 * (1 - np.tanh(2 * x.detach().numpy()) ** 2))


def test_retain_graph_keeps_residuals_until_the_last_backward() -> None:
    x = _leaf(1)
    with _collector_off():
        t = (x * 2.0).tanh()
        ref = weakref.ref(t._data)
        loss = t.sum()
        del t
        loss.backward(retain_graph=True)
        assert ref() is not None
        loss.backward()  # the retained graph runs again, then lets go
        assert ref() is None
    np.testing.assert_allclose(x.grad.numpy(), 4 * (1 - np.tanh(2 * x.detach().numpy()) ** 2))


def test_a_retained_graph_is_freed_when_dropped() -> None:
    x = _leaf(1)
    with _collector_off():
        t = (x * 3.0).tanh()
        ref = weakref.ref(t._data)
        loss = t.sum()
        del t
        loss.backward(retain_graph=True)
        assert ref() is not None
        del loss
        assert ref() is None


def test_create_graph_keeps_what_the_second_derivative_needs() -> None:
    x = _leaf(2)
    with _collector_off():
        t = (x * 2.0).tanh()
        ref = weakref.ref(t._data)
        loss = t.sum()
        del t
        (g,) = torch.autograd.grad(loss, x, create_graph=True)
        g.sum().backward()
        del loss, g
        x.grad = None
        assert ref() is None
    xs = x.detach().numpy()
    assert np.isfinite(xs).all()


def test_add_keeps_nothing() -> None:
    x = _leaf(3)
    with _collector_off():
        a, b = x * 2.0, x * 3.0
        refs = [weakref.ref(a._data), weakref.ref(b._data)]
        s = (a + b).sum()
        del a, b
        assert [r() for r in refs] == [None, None]
        s.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(N, 5.0))


def test_multiply_by_constant_keeps_the_constant_not_the_input() -> None:
    x = _leaf(4)
    with _collector_off():
        h = x * 2.0
        c = torch.tensor(np.full(N, 3.0))
        refs = weakref.ref(h._data), weakref.ref(c._data)
        s = (h * c).sum()
        del h, c
        assert refs[0]() is None and refs[1]() is not None
        s.backward()
        assert refs[1]() is None
    np.testing.assert_allclose(x.grad.numpy(), np.full(N, 6.0))


def test_relu_keeps_a_mask_or_its_output_not_its_input() -> None:
    x = _leaf(5)
    with _collector_off():
        h = x * 2.0
        r = torch.relu(h)
        refs = weakref.ref(h._data), weakref.ref(r._data)
        s = r.sum()
        del h, r
        assert sum(ref() is not None for ref in refs) <= 1
        s.backward()
        assert all(ref() is None for ref in refs)
    np.testing.assert_array_equal(x.grad.numpy(), np.where(x.detach().numpy() > 0, 2.0, 0.0))


def test_saved_tensor_bytes_match_pytorch_for_an_mlp() -> None:
    real = pytest.importorskip("torch")
    x = np.random.default_rng(6).standard_normal((16, 20)).astype(np.float32)
    theirs = real.nn.Sequential(real.nn.Linear(20, 30), real.nn.ReLU(), real.nn.Linear(30, 5))
    saved: list[int] = []

    def pack(t: Any) -> Any:
        if not isinstance(t, real.nn.Parameter) and t.data_ptr() not in saved:
            saved.append(t.data_ptr())
        return t

    with real.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = theirs(real.tensor(x)).sum()
    del out
    ours = nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 5))
    xt = torch.tensor(x)
    with _collector_off():
        h = ours[0](xt)
        a = ours[1](h)
        out = ours[2](a).sum()
        refs = {"linear1_out": weakref.ref(h._data), "relu_out": weakref.ref(a._data)}
        del h, a
        alive = sorted(k for k, r in refs.items() if r() is not None)
    # PyTorch saves the input (ours: held by the caller anyway), the ReLU result and
    # nothing of the first Linear's output: funcgrad keeps no more activations.
    assert len(alive) <= len(saved) - 1
    assert "linear1_out" not in alive
    out.backward()


# ------------------------------------------------------------------ compiled: donation


def test_compiled_step_writes_new_parameters_into_the_old_buffers() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
    twin = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    twin.load_state_dict(model.state_dict())
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)

    def make(m: Any, o: Any) -> Callable[[], Any]:
        def step() -> Any:
            o.zero_grad()
            loss = torch.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            return loss
        return step

    compiled, eager = torch.compile(make(model, opt)), make(twin, twin_opt)
    for _ in range(2):
        compiled()
        eager()
    where = [p._data.ctypes.data for p in model.parameters()]
    for _ in range(3):
        assert compiled().item() == eager().item()
    assert [p._data.ctypes.data for p in model.parameters()] == where
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_compiled_step_never_writes_buffers_others_hold() -> None:
    torch.manual_seed(1)
    lin = nn.Linear(3, 2)
    opt = torch.optim.SGD(lin.parameters(), lr=0.5)
    x = torch.randn(4, 3)

    @torch.compile
    def step() -> Any:
        opt.zero_grad()
        loss = lin(x).square().sum()
        loss.backward()
        opt.step()
        return loss

    step()
    held = lin.weight.detach().numpy()  # someone else now sees the weight's buffer
    before = held.copy()
    step()
    np.testing.assert_array_equal(held, before)
    assert not np.array_equal(lin.weight.detach().numpy(), before)


def test_a_linear_layer_keeps_and_computes_only_what_its_tracked_operands_need(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An input that needs no gradient: the weight is not kept for the input's cotangent,
    and the product that would make it (a first layer's costliest backward product) never
    runs."""
    from funcgrad.primitives import linalg

    rng = np.random.default_rng(2)
    x0, w0, g0 = (rng.standard_normal(s) for s in ((5, 7), (3, 7), (5, 3)))
    x = torch.tensor(x0)
    w = torch.tensor(w0, requires_grad=True)
    out = torch.nn.functional.linear(x, w)
    products: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    impl = linalg.dot_general_p.impl

    def counting(xp: Any, lhs: Any, rhs: Any, **params: Any) -> Any:
        products.append((lhs.shape, rhs.shape))
        return impl(xp, lhs, rhs, **params)

    kept = [p for p in out.grad_fn.primals if type(p).__name__ != "Missing"]
    assert len(kept) == 1 and kept[0]._value is x._data
    monkeypatch.setattr(linalg.dot_general_p, "impl", counting)
    (out * torch.tensor(g0)).sum().backward()
    assert len(products) == 1  # the weight's cotangent g.T @ x, nothing for x
    np.testing.assert_allclose(w.grad.numpy(), g0.T @ x0, rtol=1e-12)
