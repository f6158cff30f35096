"""Tutorial-style programs (a DCGAN step with a WGAN-GP gradient penalty, an LSTM with
projections over packed sequences, a checkpointed MLP under CPU autocast, BatchNorm under
autocast) run on funcgrad's PyTorch face and on PyTorch, printing the same things.

Each program takes the library as an argument and returns what it prints; the side-by-side
tests need torch and skip without it."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome, shown, values


def _torch() -> Any:
    return pytest.importorskip("torch", exc_type=ImportError)


# ------------------------------------------------------------- DCGAN + gradient penalty


def _gan_program(t: Any) -> list[str]:
    """The DCGAN tutorial's discriminator/generator steps with a WGAN-GP penalty, which
    calls ``autograd.grad(..., only_inputs=True)`` as the published examples do."""
    nn, optim = t.nn, t.optim
    t.manual_seed(5)
    netG = nn.Sequential(nn.ConvTranspose2d(4, 8, 4, 1, 0, bias=False), nn.BatchNorm2d(8),
                         nn.ReLU(True), nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False),
                         nn.Tanh())
    netD = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(4, 1, 4, 1, 0, bias=False), nn.Flatten(0))
    criterion = nn.BCEWithLogitsLoss()
    optD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = t.tanh(t.randn(8, 1, 8, 8))
    printed = []
    for i in range(2):
        batch = real[i * 4:(i + 1) * 4]
        netD.zero_grad()
        label = t.full((4,), 1.0)
        err_real = criterion(netD(batch), label)
        err_real.backward()
        fake = netG(t.randn(4, 4, 1, 1))
        label.fill_(0.0)
        err_fake = criterion(netD(fake.detach()), label)
        err_fake.backward()
        alpha = t.rand(4, 1, 1, 1)
        interp = (alpha * batch + (1 - alpha) * fake.detach()).requires_grad_(True)
        d_interp = netD(interp)
        grads = t.autograd.grad(outputs=d_interp, inputs=interp,
                                grad_outputs=t.ones_like(d_interp), create_graph=True,
                                retain_graph=True, only_inputs=True)[0]
        gp = ((grads.view(4, -1).norm(2, dim=1) - 1) ** 2).mean() * 10
        gp.backward()
        optD.step()
        netG.zero_grad()
        label.fill_(1.0)
        err_g = criterion(netD(fake), label)
        err_g.backward()
        optG.step()
        printed.append(f"{i} D {(err_real + err_fake).item():.4f} G {err_g.item():.4f} "
                       f"GP {gp.item():.4f}")
    printed.append(repr(netD[0].weight.grad[0, 0, 0]))
    return printed


def test_gan_with_gradient_penalty_prints_as_pytorch():
    torch = _torch()
    assert _gan_program(ft) == _gan_program(torch)


def _grad_calls(t: Any) -> list[Any]:
    x = t.tensor([1.0, 2.0], requires_grad=True)
    y = t.tensor(3.0, requires_grad=True)
    return [
        lambda: t.autograd.grad((x ** 2).sum(), x, only_inputs=True),
        lambda: t.autograd.grad((x ** 2).sum(), x, only_inputs=False),
        # only_inputs is the sixth parameter, allow_unused the seventh
        lambda: t.autograd.grad((x ** 2).sum(), [x, y], None, False, False, True, True),
        lambda: sorted((k, shown(v)) for k, v in t.autograd.grad(
            (x ** 2).sum() * y, {"b": y, "a": x}).items()),
        lambda: list(t.autograd.grad((x ** 2).sum(), {"a": x, "b": y}, allow_unused=True)),
        lambda: t.autograd.grad((x ** 2).sum(), [x, y], materialize_grads=True,
                                allow_unused=False),
        lambda: t.autograd.grad((x ** 2).sum(), [x, y], materialize_grads=True,
                                create_graph=True)[1].requires_grad,
        lambda: t.autograd.grad((x ** 2).sum(), [x, y], materialize_grads=True)[1].requires_grad,
    ]


def test_autograd_grad_signature_as_pytorch():
    torch = _torch()
    for mine, theirs in zip(_grad_calls(ft), _grad_calls(torch), strict=True):
        assert outcome(lambda m=mine: shown(m())) == outcome(lambda th=theirs: shown(th()))


def test_autograd_grad_only_inputs_false_warns():
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        ft.autograd.grad((x ** 2).sum(), x, only_inputs=False)


# ------------------------------------------------------- LSTM with projections, packed


def test_packed_lstm_with_projections_does_not_warn():
    """PyTorch's packed-input LSTM kernel has no oneDNN path, so it never warns that
    oneDNN lacks projections (the padded call does, once per process)."""
    from funcgrad.torch.nn import rnn as fg_rnn

    def packed_warnings(t: Any) -> int:
        t.manual_seed(0)
        lstm = t.nn.LSTM(3, 4, proj_size=2, bidirectional=True)
        x = t.nn.utils.rnn.pack_padded_sequence(t.randn(5, 2, 3), t.tensor([5, 3]))
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out, (h, _) = lstm(x)
        assert tuple(h.shape) == (2, 2, 2)
        return len(got)

    saved = list(fg_rnn._WARNED_PROJ)
    fg_rnn._WARNED_PROJ.clear()
    try:
        assert packed_warnings(ft) == 0
    finally:
        fg_rnn._WARNED_PROJ[:] = saved
    try:
        import torch
    except ImportError:
        return
    assert packed_warnings(torch) == 0


# ----------------------------------------------------- checkpoint under CPU autocast


def _checkpoint_autocast_program(t: Any, reentrant: bool, ckpt: bool) -> list[np.ndarray]:
    from importlib import import_module

    checkpoint = import_module(f"{t.__name__}.utils.checkpoint").checkpoint
    t.manual_seed(12)
    blocks = [t.nn.Sequential(t.nn.Linear(8, 8), t.nn.SiLU()) for _ in range(2)]
    head = t.nn.Linear(8, 2)
    x = t.randn(8, 8)
    y = (x.sum(1) > 0).long()
    x.requires_grad_()  # (the reentrant variant gives no parameter gradients without it)
    with t.autocast("cpu", dtype=t.bfloat16):
        h = x
        for b in blocks:
            h = checkpoint(b, h, use_reentrant=reentrant) if ckpt else b(h)
        out = head(h)
        loss = t.nn.functional.cross_entropy(out, y)
    loss.backward()  # the recomputation runs outside the region: it must recast
    params = [p for b in blocks for p in b.parameters()] + list(head.parameters())
    return [values(out.float()), values(loss), values(x.grad)] + [values(p.grad)
                                                                   for p in params]


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_recomputes_in_the_forward_autocast_state(reentrant):
    got = _checkpoint_autocast_program(ft, reentrant, ckpt=True)
    plain = _checkpoint_autocast_program(ft, reentrant, ckpt=False)
    for a, b in zip(got, plain, strict=True):
        np.testing.assert_array_equal(a, b)
    try:
        import torch
    except ImportError:
        return
    theirs = _checkpoint_autocast_program(torch, reentrant, ckpt=True)
    for a, b in zip(got, theirs, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-3)


# --------------------------------------------- BatchNorm's running statistics, bf16 input


def _bn_running(t: Any) -> tuple[np.ndarray, np.ndarray, str]:
    t.manual_seed(0)
    bn = t.nn.BatchNorm1d(8)
    x = t.randn(8, 8).bfloat16()
    with t.autocast("cpu", dtype=t.bfloat16):
        out = bn(x)
    return values(bn.running_mean), values(bn.running_var), str(out.dtype)


def test_batchnorm_running_stats_of_a_half_input_are_float32_statistics():
    """A bfloat16 batch's mean goes into float32 running statistics unrounded, as
    PyTorch's CPU kernel accumulates and stores it."""
    mean, var, dtype = _bn_running(ft)
    assert dtype == "torch.bfloat16"
    x = values(ft.manual_seed(0) and ft.randn(8, 8).bfloat16().float()).astype(np.float64)
    np.testing.assert_allclose(mean, 0.1 * x.mean(0), rtol=1e-6)
    torch = pytest.importorskip("torch", exc_type=ImportError)
    t_mean, t_var, t_dtype = _bn_running(torch)
    assert dtype == t_dtype
    np.testing.assert_array_equal(mean, t_mean)
    np.testing.assert_allclose(var, t_var, rtol=1e-6)
