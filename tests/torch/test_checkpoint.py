"""``torch.utils.checkpoint``: a checkpointed segment gives the gradients of the plain one
(its dropout masks replayed in the recomputation, on the CPU and on a GPU), PyTorch's node,
warnings and errors, and PyTorch's numbers for the same weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.devices import get_backend
from funcgrad.torch.utils.checkpoint import checkpoint, checkpoint_sequential


def _net(L, width):
    return L.nn.Sequential(L.nn.Linear(4, width), L.nn.Dropout(0.5), L.nn.Tanh(),
                           L.nn.Linear(width, 2))


def _grads(net, x, run):
    net.zero_grad()
    x.grad = None
    ft.manual_seed(7)
    y = run(x)
    (y * ft.arange(float(y.numel())).reshape(y.shape)).sum().backward()
    return [y.detach().numpy(), x.grad.numpy()] + [p.grad.numpy() for p in net.parameters()]


@given(st.integers(1, 5), st.integers(2, 9), st.booleans())
@settings(deadline=None, max_examples=20)
def test_checkpointed_gradients_equal_the_plain_ones(batch, width, reentrant):
    net = _net(ft, width)
    x = ft.tensor(np.linspace(-1, 1, batch * 4).reshape(batch, 4), requires_grad=True,
                  dtype=ft.float32)
    plain = _grads(net, x, net)
    ckpt = _grads(net, x, lambda v: checkpoint(net, v, use_reentrant=reentrant))
    for a, b in zip(plain, ckpt, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.gpu
def test_dropout_masks_are_replayed_on_the_gpu():
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator (CuPy's wheel and g++ are needed)")
    net = _net(ft, 6).cuda()
    x = ft.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=ft.float32).cuda()
    x.requires_grad_()
    grads = []
    for run in (net, lambda v: checkpoint(net, v, use_reentrant=True)):
        net.zero_grad()
        x.grad = None
        ft.cuda.manual_seed(3)
        run(x).sum().backward()
        grads.append([x.grad.cpu().numpy()] + [p.grad.cpu().numpy() for p in net.parameters()])
    for a, b in zip(*grads, strict=True):
        np.testing.assert_array_equal(a, b)


def test_same_weights_give_torch_numbers_and_nodes():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.GELU(), torch.nn.Linear(5, 1))
    fnet = ft.nn.Sequential(ft.nn.Linear(3, 5), ft.nn.GELU(), ft.nn.Linear(5, 1))
    fnet.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tnet.state_dict().items()})
    got = []
    for L, net, ck in ((ft, fnet, checkpoint), (torch, tnet, torch.utils.checkpoint.checkpoint)):
        x = L.tensor(np.linspace(-2, 2, 12).reshape(4, 3), dtype=L.float32, requires_grad=True)
        for reentrant in (True, False):  # CheckpointFunctionBackward / the last op's node
            y = ck(net, x, use_reentrant=reentrant)
            y.sum().backward()
            got.append((reentrant, type(y.grad_fn).__name__, y.detach().numpy().copy(),
                        x.grad.numpy().copy(), net[0].weight.grad.numpy().copy()))
            x.grad = None
            net.zero_grad()
    for ours, theirs in zip(got[:2], got[2:], strict=True):
        assert ours[:2] == theirs[:2]
        for a, b in zip(ours[2:], theirs[2:], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _messages(L, ck):
    lin = L.nn.Linear(2, 2)
    x = L.ones(1, 2, requires_grad=True)
    found = []
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        ck(lin, x)
        ck(lin, L.ones(1, 2), use_reentrant=True)
    found += [str(w.message) for w in got]
    for call in (lambda: ck(lin, x, use_reentrant=True, extra=1),
                 lambda: ck(lin, x, use_reentrant=True, debug=True),
                 lambda: L.autograd.grad(ck(lin, x, use_reentrant=True).sum(), x)):
        try:
            call()
        except (ValueError, RuntimeError) as e:
            found.append(f"{type(e).__name__}: {e}")
    return found


def test_warnings_and_errors_as_torch():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    assert _messages(ft, checkpoint) == _messages(torch, torch.utils.checkpoint.checkpoint)


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_equals_the_plain_run(segments):
    net = ft.nn.Sequential(ft.nn.Linear(3, 4), ft.nn.ReLU(), ft.nn.Linear(4, 4), ft.nn.Tanh(),
                           ft.nn.Linear(4, 1))
    x = ft.tensor(np.linspace(-2, 2, 12).reshape(4, 3), dtype=ft.float32, requires_grad=True)
    plain = _grads(net, x, net)
    ckpt = _grads(net, x, lambda v: checkpoint_sequential(net, segments, v, use_reentrant=True))
    for a, b in zip(plain, ckpt, strict=True):
        np.testing.assert_array_equal(a, b)
