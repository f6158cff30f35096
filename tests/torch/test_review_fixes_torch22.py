"""PyTorch-face fixes checked side by side with torch 2.13: ``Tensor._is_view()`` as a
method; batch norm on a float16/bfloat16 input bit for bit as PyTorch's CPU kernel (its
statistics, output and running statistics); ``F.kl_div``'s ``'mean'`` warning at its direct
caller (``nn.KLDivLoss``'s forward inside the library); the functional ``torch.lstm``/
``gru``/``rnn_tanh``/``rnn_relu`` under CPU autocast (and a packed ``nn.LSTM`` there); a
custom Function's output that is its input returned as it is: a view of it."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome, same_outcome, shown

torch = pytest.importorskip("torch")


def _bits(t: Any) -> np.ndarray:
    return np.asarray(t.detach().float().numpy()).view(np.uint32)


# ------------------------------------------------------------------ Tensor._is_view()

_VIEWS = [
    lambda L: L.ones(4)._is_view(),
    lambda L: L.ones(4)[1:]._is_view(),
    lambda L: L.ones(4).view(2, 2)._is_view(),
    lambda L: L.ones(4, requires_grad=True).detach()._is_view(),
    lambda L: (L.ones(4) * 2)._is_view(),
    lambda L: L.zeros(3, 4).t()._is_view(),
    lambda L: L.zeros(3, 4).t().reshape(12)._is_view(),
    lambda L: L.zeros(3, 4)[[0, 1]]._is_view(),
]


@pytest.mark.parametrize("k", range(len(_VIEWS)))
def test_is_view_is_a_method(k):
    same_outcome(_VIEWS[k])


# ------------------------------------------------------------------ half batch norm


@pytest.fixture
def _same_threads() -> Iterator[None]:
    """PyTorch's channels-last statistics split the batch by thread: both libraries alike."""
    before = ft.get_num_threads(), torch.get_num_threads()
    ft.set_num_threads(2)
    torch.set_num_threads(2)
    yield
    ft.set_num_threads(before[0])
    torch.set_num_threads(before[1])


def _batch_norm_case(L: Any, seed: int) -> tuple[Any, ...]:
    rs = np.random.RandomState(seed)
    shapes = [(rs.randint(2, 9), rs.randint(1, 20)),
              (rs.randint(1, 5), rs.randint(1, 4), int(rs.choice([2, 5, 33, 64]))),
              (rs.randint(1, 4), rs.randint(1, 3), rs.randint(1, 9), rs.randint(2, 9))]
    shape = shapes[seed % 3]
    half = L.float16 if seed % 5 == 4 else L.bfloat16
    x = L.tensor(rs.randn(*shape).astype(np.float32) * rs.uniform(0.1, 5)
                 + rs.uniform(-10, 10)).to(half)
    c = shape[1]
    # float32 parameters ("mixed") only where the input has more than one value per
    # sample and channel (see docs/sharp_bits.md)
    mixed = seed % 4 == 0 and len(shape) > 2
    dt = L.float32 if mixed else half
    w = L.tensor(rs.randn(c).astype(np.float32)).to(dt)
    b = L.tensor(rs.randn(c).astype(np.float32)).to(dt)
    rm = L.tensor(rs.randn(c).astype(np.float32)).to(dt)
    rv = L.tensor(rs.rand(c).astype(np.float32) + 0.5).to(dt)
    F = L.nn.functional
    mode = seed % 5
    if mode == 0:
        y = F.batch_norm(x, rm, rv, w, b, training=False)
    elif mode == 1:
        y = F.batch_norm(x, None, None, w, b, training=True)
    elif mode == 2:
        y = F.batch_norm(x.clone().requires_grad_(True), rm, rv, w, b, training=True)
    elif mode == 3 and len(shape) > 2:
        y = F.instance_norm(x, weight=w, bias=b)
    else:
        y = F.batch_norm(x, rm, rv, None, None, training=True, momentum=0.3)
    return y, rm, rv


@pytest.mark.usefixtures("_same_threads")
def test_half_batch_norm_bit_for_bit():
    for seed in range(90):
        mine, theirs = _batch_norm_case(ft, seed), _batch_norm_case(torch, seed)
        for a, b in zip(mine, theirs):
            assert str(a.dtype) == str(b.dtype)
            np.testing.assert_array_equal(_bits(a), _bits(b), err_msg=f"seed {seed}")


@pytest.mark.usefixtures("_same_threads")
def test_half_instance_norm_running_statistics():
    def run(L: Any, seed: int) -> tuple[Any, ...]:
        rs = np.random.RandomState(seed)
        shape = (rs.randint(1, 5), rs.randint(1, 4), rs.randint(2, 40))
        half = L.float16 if seed % 3 == 0 else L.bfloat16
        x = L.tensor(rs.randn(*shape).astype(np.float32) * rs.uniform(0.1, 5)
                     + rs.uniform(-5, 5)).to(half)
        rm = L.tensor(rs.randn(shape[1]).astype(np.float32)).to(half)
        rv = L.tensor(rs.rand(shape[1]).astype(np.float32) + 0.5).to(half)
        w = L.tensor(rs.randn(shape[1]).astype(np.float32))  # float32: "mixed"
        y = L.nn.functional.instance_norm(x, rm, rv, momentum=0.2)
        return y, rm, rv, L.nn.functional.instance_norm(x, weight=w)

    for seed in range(20):
        for a, b in zip(run(ft, seed), run(torch, seed)):
            np.testing.assert_array_equal(_bits(a), _bits(b), err_msg=f"seed {seed}")


def test_half_batch_norm_module_and_gradient():
    def run(L: Any) -> tuple[Any, ...]:
        rs = np.random.RandomState(3)
        m = L.nn.BatchNorm2d(3).bfloat16()
        x = L.tensor(rs.randn(4, 3, 5, 5).astype(np.float32) * 3 + 1).bfloat16()
        x.requires_grad_(True)
        y = m(x)
        (y.float() * L.tensor(rs.randn(4, 3, 5, 5).astype(np.float32))).sum().backward()
        return y, m.running_mean, m.running_var, x.grad

    mine, theirs = run(ft), run(torch)
    for a, b in zip(mine[:3], theirs[:3]):
        np.testing.assert_array_equal(_bits(a), _bits(b))
    # the gradient: float32 arithmetic rounded to bfloat16 (not bit for bit)
    np.testing.assert_allclose(mine[3].float().numpy(), theirs[3].float().numpy(),
                               rtol=2e-2, atol=2e-2)


# ------------------------------------------------------------------ kl_div's warning


def _kl_warnings(L: Any) -> list[str]:
    a = L.tensor([[0.2, 0.8]]).log()
    b = L.tensor([[0.5, 0.5]])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("default")
        m = L.nn.KLDivLoss()
        m(a, b)
        m(a, b)
        L.nn.functional.kl_div(a, b)
        L.nn.functional.kl_div(a, b)
    return ["here" if r.filename == __file__ else "library" for r in w]


def test_kl_div_mean_warning_at_its_caller():
    assert _kl_warnings(ft) == _kl_warnings(torch) == ["library", "here", "here"]


# ------------------------------------------------------------------ RNNs under autocast


def _rnn_case(L: Any, name: str, packed: bool) -> list[Any]:
    rs = np.random.RandomState(1)
    cls = {"lstm": L.nn.LSTM, "gru": L.nn.GRU}.get(name, L.nn.RNN)
    kw = {"nonlinearity": "relu"} if name == "rnn_relu" else {}
    mod = cls(3, 4, num_layers=2, **kw)
    for p in mod.parameters():
        p.data.copy_(L.tensor(rs.randn(*p.shape).astype(np.float32) * 0.5))
    params = list(mod._flat_weights)
    h0 = L.zeros(2, 2, 4)
    hx = (h0, h0) if name == "lstm" else h0
    fn = getattr(L, name)
    with L.autocast("cpu", dtype=L.bfloat16):
        if packed:
            x = L.tensor(rs.randn(5, 3).astype(np.float32))
            out = fn(x, L.tensor([2, 2, 1]), hx, params, True, 2, 0.0, False, False)
        else:
            x = L.tensor(rs.randn(5, 2, 3).astype(np.float32))
            out = fn(x, hx, params, True, 2, 0.0, False, False, False)
    return list(out)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_functional_rnn_under_cpu_autocast(name, packed):
    mine, theirs = _rnn_case(ft, name, packed), _rnn_case(torch, name, packed)
    assert [str(t.dtype) for t in mine] == [str(t.dtype) for t in theirs]
    for a, b in zip(mine, theirs):
        # float32 results may differ by float32's tanh/sigmoid ulps
        np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(),
                                   rtol=1e-6, atol=1e-6)


def test_packed_lstm_module_under_cpu_autocast():
    def run(L: Any) -> list[str]:
        mod = L.nn.LSTM(3, 4, num_layers=2)
        x = L.nn.utils.rnn.PackedSequence(L.ones(5, 3), L.tensor([2, 2, 1]))
        with L.autocast("cpu", dtype=L.bfloat16):
            out, (h, c) = mod(x)
        return [str(t.dtype) for t in (out.data, h, c)]

    assert run(ft) == run(torch) == ["torch.float32"] * 3


# ------------------------------------------------------------------ Functions' aliases


def _id_class(L: Any) -> Any:
    class Id(L.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    return Id


def _as_is(L: Any, kind: str) -> Any:
    Id = _id_class(L)
    x = L.ones(2, requires_grad=kind != "plain")
    base = x * 1 if kind == "nonleaf" else x
    if kind == "no_grad":
        with L.no_grad():
            y = Id.apply(base)
    else:
        y = Id.apply(base)
    facts = [y is base, y._base is base, y._is_view(), y.requires_grad, y.is_leaf]
    if kind in ("plain", "no_grad"):
        with L.no_grad():
            y.add_(1)
        facts += [base._version, y._version, shown(base)]
    return facts


@pytest.mark.parametrize("kind", ["plain", "no_grad", "leaf", "nonleaf"])
def test_function_returning_its_input(kind):
    same_outcome(lambda L: _as_is(L, kind))


def _write_view_of_alias(L: Any, whole: bool) -> Any:
    y = _id_class(L).apply(L.ones(2, requires_grad=True) * 1)
    (y if whole else y[0]).mul_(2)
    return y


@pytest.mark.parametrize("whole", [True, False])
def test_function_alias_written_in_place(whole):
    mine = outcome(lambda: _write_view_of_alias(ft, whole))
    theirs = outcome(lambda: _write_view_of_alias(torch, whole))
    assert mine == theirs and mine[0] == "RuntimeError"


# ------------------------------------------------------------------ RNN neighbours

_RNN_CTORS = [
    lambda L: L.nn.GRU(2, 4, proj_size=2),
    lambda L: L.nn.RNN(2, 4, proj_size=0),
    lambda L: L.nn.GRU(2, 4, foo=1),
    lambda L: L.nn.LSTM(2, 4, proj_size=2),
]


@pytest.mark.parametrize("k", range(len(_RNN_CTORS)))
def test_rnn_constructor_keywords(k):
    same_outcome(lambda L: repr(_RNN_CTORS[k](L)))
