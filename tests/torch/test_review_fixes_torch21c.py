"""PyTorch-face fixes from a side-by-side review of CPU mixed precision, each compared with
torch 2.13: ``nn.LSTM`` in a bfloat16 autocast region runs oneDNN's ``mkldnn_rnn_layer``
in bfloat16 (its outputs and states bfloat16, their bits), float16 refused as oneDNN
refuses it without AVX512-FP16; ``nn.GRU``/``nn.RNN`` and the cells run PyTorch's CPU
composites with bfloat16 products (their dtypes and rounding); bidirectional layers end in
a ``cat`` (CatBackward0)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft

torch = pytest.importorskip("torch")


def _run(lib: Any, cls: str, kw: dict[str, Any], dt: str = "bfloat16",
         steps: int = 6) -> dict[str, Any]:
    torch.manual_seed(0)
    ref = getattr(torch.nn, cls)(3, 5, **kw)
    x0 = torch.randn(steps, 2, 3).numpy()
    m = getattr(lib.nn, cls)(3, 5, **kw)
    m.load_state_dict({k: lib.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    x = lib.tensor(x0, requires_grad=True)
    with lib.autocast("cpu", dtype=getattr(lib, dt)):
        out, h = m(x)
    hs = list(h) if isinstance(h, tuple) else [h]
    out.float().sum().backward()
    return {"out": out, "states": hs, "x_grad": x.grad,
            "w_grad": m.weight_ih_l0.grad}


def _compare(cls: str, kw: dict[str, Any]) -> None:
    theirs, ours = _run(torch, cls, kw), _run(ft, cls, kw)
    for a, b in [(theirs["out"], ours["out"]), *zip(theirs["states"], ours["states"])]:
        assert str(a.dtype) == str(b.dtype)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        # PyTorch's rounding points: the same bits but where float32 sums round apart.
        np.testing.assert_allclose(b.detach().float().numpy(), a.detach().float().numpy(),
                                   rtol=0, atol=1e-2)
    for k in ("x_grad", "w_grad"):
        assert str(theirs[k].dtype) == str(ours[k].dtype)
        np.testing.assert_allclose(ours[k].numpy(), theirs[k].numpy(), rtol=0.1, atol=5e-2)


@pytest.mark.parametrize("cls,kw", [
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "batch_first": True}),
    ("LSTM", {"bidirectional": True}), ("GRU", {}), ("GRU", {"bidirectional": True}),
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2})])
def test_recurrent_layers_under_cpu_autocast(cls, kw):
    _compare(cls, kw)


def test_lstm_bfloat16_forward_is_onednns_bits():
    theirs, ours = _run(torch, "LSTM", {}, steps=12), _run(ft, "LSTM", {}, steps=12)
    np.testing.assert_array_equal(ours["out"].detach().float().numpy(),
                                  theirs["out"].detach().float().numpy())
    np.testing.assert_array_equal(ours["states"][1].detach().float().numpy(),
                                  theirs["states"][1].detach().float().numpy())


def test_lstm_float16_autocast_refused_like_onednn():
    from funcgrad.torch.nn.rnn import _cpu_has_fp16

    if _cpu_has_fp16():
        pytest.skip("this CPU runs oneDNN's float16 RNNs")
    for lib in (torch, ft):
        m = lib.nn.LSTM(3, 4)
        with lib.autocast("cpu", dtype=lib.float16), pytest.raises(
                RuntimeError, match="could not create a primitive descriptor for the LSTM"):
            m(lib.randn(2, 1, 3))


@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "RNNCell"])
@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_cells_under_cpu_autocast(cls, dt):
    def run(lib: Any) -> Any:
        torch.manual_seed(0)
        ref = getattr(torch.nn, cls)(3, 4)
        x = lib.tensor(torch.randn(2, 3).numpy())
        m = getattr(lib.nn, cls)(3, 4)
        m.load_state_dict({k: lib.tensor(v.detach().numpy())
                           for k, v in ref.state_dict().items()})
        with lib.autocast("cpu", dtype=getattr(lib, dt)):
            r = m(x)
            r = m(x, r)
        return list(r) if isinstance(r, tuple) else [r]

    for a, b in zip(run(torch), run(ft)):
        assert str(a.dtype) == str(b.dtype)
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__
        np.testing.assert_allclose(b.detach().float().numpy(), a.detach().float().numpy(),
                                   rtol=0, atol=2e-6)


@pytest.mark.parametrize("cls", ["GRU", "RNN", "LSTM"])
def test_bidirectional_output_is_a_cat(cls):
    for lib in (torch, ft):
        out, _ = getattr(lib.nn, cls)(3, 4, bidirectional=True)(lib.randn(5, 2, 3))
        assert type(out.grad_fn).__name__ == "CatBackward0"
