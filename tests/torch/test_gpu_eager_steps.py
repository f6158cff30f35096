"""Eager training steps of the PyTorch face on a GPU copy nothing between the host and the
device and wait for nothing (``gpu``-marked: the CuPy emulator's counters where no GPU is
found): an MLP with dropout and LayerNorm, a CNN with BatchNorm and max pooling, an LSTM
language model and a Transformer layer, with Adam/AdamW/SGD, clipping and a scheduler.
Each piece below was found doing a host round trip per step (a dropout mask drawn on the
host, an index check read back, a max-pool gradient checking for NaN on the host, a
gather's fill value uploaded) before it was fixed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu_values import host, need_device

from funcgrad import torch
from funcgrad.torch import nn
from funcgrad.torch.nn import functional as F

pytestmark = pytest.mark.gpu


class _LM(nn.Module):
    def __init__(self, transformer: bool) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.body = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True) \
            if transformer else nn.LSTM(16, 16, 2, dropout=0.2, batch_first=True)
        self.out = nn.Linear(16, 50)

    def forward(self, t: Any) -> Any:
        h = self.body(self.emb(t))
        return self.out(h if isinstance(h, torch.Tensor) else h[0])


def _models() -> dict[str, tuple[Callable[[], Any], Any, Any]]:
    """name -> (model maker, input maker, optimizer maker)."""
    return {
        "mlp_adam": (lambda: nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Dropout(0.1),
                                           nn.LayerNorm(64), nn.Linear(64, 10)),
                     lambda: torch.randn(16, 32, device="cuda"),
                     lambda p: torch.optim.Adam(p, lr=1e-3)),
        "cnn_adamw": (lambda: nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8),
                                            nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                            nn.Linear(8 * 4 * 4, 10)),
                      lambda: torch.randn(16, 3, 8, 8, device="cuda"),
                      lambda p: torch.optim.AdamW(p)),
        "lstm_sgd": (lambda: _LM(False), lambda: torch.randint(0, 50, (4, 7), device="cuda"),
                     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9)),
        "transformer_adam": (lambda: _LM(True),
                             lambda: torch.randint(0, 50, (4, 7), device="cuda"),
                             lambda p: torch.optim.Adam(p, lr=1e-3)),
    }


@pytest.mark.parametrize("name", sorted(_models()))
def test_gpu_eager_training_step_makes_no_host_round_trip(name: str) -> None:
    need_device()
    import fakecupy  # noqa: PLC0415

    make, make_input, make_opt = _models()[name]
    torch.manual_seed(0)
    net = make().cuda()
    x = make_input()
    opt = make_opt(net.parameters())
    sched = torch.optim.lr_scheduler.StepLR(opt, 10)

    def step() -> Any:
        opt.zero_grad()
        out = net(x)
        out = out.reshape(-1, out.shape[-1])
        target = torch.randint(1, out.shape[-1], (out.shape[0],), device="cuda")
        loss = F.cross_entropy(out, target, ignore_index=0, label_smoothing=0.1)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        sched.step()
        return loss

    first = step()
    step()  # kernels compiled, optimizer state made
    if fakecupy.installed():
        with fakecupy.counting() as c:
            last = step()
        assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), c
    else:
        last = step()
    assert np.isfinite(host(last)) and np.isfinite(host(first))


def test_gpu_embedding_of_out_of_range_cuda_indices_reads_nan_rows() -> None:
    """CUDA indices are not read back for PyTorch's bounds check (a device-side assert
    there): an out-of-range one reads a NaN row and passes no gradient; CPU indices still
    raise PyTorch's IndexError."""
    need_device()
    w = torch.randn(5, 3, device="cuda", requires_grad=True)
    out = F.embedding(torch.tensor([1, 7, -1], device="cuda"), w)
    vals = host(out.detach())
    np.testing.assert_array_equal(vals[0], host(w.detach())[1])
    assert np.isnan(vals[1:]).all()
    out[0].sum().backward()
    want = np.zeros((5, 3), np.float32)
    want[1] = 1.0
    np.testing.assert_array_equal(host(w.grad), want)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(torch.tensor([1, 7]), w.detach().cpu())
