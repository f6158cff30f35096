"""Recurrent layers (RNN, LSTM, GRU and their cells) and ``nn.utils.rnn`` against
PyTorch 2.13: parameter names, shapes and initialisation bounds, reprs, outputs, final
states and gradients of inputs, initial states and parameters, packed sequences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import nn
from funcgrad.torch.nn.utils import rnn as U

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
SETTINGS = settings(max_examples=10, deadline=None)


def _np(t):
    return t.detach().numpy()


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def load_from_torch(tm, fm):
    fm.load_state_dict({k: ft.tensor(_np(v)) for k, v in tm.state_dict().items()})


def flat(out):
    """The tensors of an RNN's result, in order."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    if hasattr(out, "batch_sizes"):
        return [out.data]
    return [out]


def check_against_torch(tm, fm, x, h=None):
    load_from_torch(tm, fm)
    tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
    targs, fargs = [tx], [fx]
    if h is not None:
        th = tuple(torch.tensor(a, requires_grad=True) for a in h)
        fh = tuple(ft.tensor(a, requires_grad=True) for a in h)
        targs.append(th if len(th) > 1 else th[0])
        fargs.append(fh if len(fh) > 1 else fh[0])
    touts, fouts = flat(tm(*targs)), flat(fm(*fargs))
    assert len(touts) == len(fouts)
    rng = np.random.default_rng(7)
    tloss = floss = 0
    for t, f in zip(touts, fouts):
        close(f, t)
        w = rng.standard_normal(tuple(t.shape))
        tloss = tloss + (t * torch.tensor(w)).sum()
        floss = floss + (f * ft.tensor(w)).sum()
    tloss.backward()
    floss.backward()
    close(fx.grad, tx.grad)
    if h is not None:
        for a, b in zip(flat(fargs[1]), flat(targs[1])):
            close(a.grad, b.grad)
    for (n1, p1), (n2, p2) in zip(tm.named_parameters(), fm.named_parameters()):
        assert n1 == n2
        close(p2.grad, p1.grad)


@needs_torch
@SETTINGS
@given(mode=st.sampled_from(["RNN_TANH", "RNN_RELU", "LSTM", "GRU", "LSTM_PROJ"]),
       layers=st.integers(1, 2), bidirectional=st.booleans(), batch_first=st.booleans(),
       bias=st.booleans(), batched=st.booleans(), with_h0=st.booleans(),
       steps=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_recurrent_layers_match_torch(mode, layers, bidirectional, batch_first, bias, batched,
                                      with_h0, steps, seed):
    rng = np.random.default_rng(seed)
    n_in, hidden, batch = 3, 4, 2
    kw = {"num_layers": layers, "bidirectional": bidirectional, "batch_first": batch_first,
          "bias": bias}
    if mode.startswith("RNN"):
        kw["nonlinearity"] = "tanh" if mode == "RNN_TANH" else "relu"
        cls = "RNN"
    else:
        cls = mode.split("_")[0]
    if mode == "LSTM_PROJ":
        kw["proj_size"] = 2
    tm = getattr(torch.nn, cls)(n_in, hidden, **kw).double()
    fm = getattr(nn, cls)(n_in, hidden, **kw).double()
    shape = ((batch, steps) if batch_first else (steps, batch)) if batched else (steps,)
    x = rng.standard_normal(shape + (n_in,))
    h = None
    if with_h0:
        dirs = 2 if bidirectional else 1
        hb = (batch,) if batched else ()
        h = [rng.standard_normal((layers * dirs,) + hb + (kw.get("proj_size") or hidden,))]
        if cls == "LSTM":
            h.append(rng.standard_normal((layers * dirs,) + hb + (hidden,)))
    check_against_torch(tm, fm, x, h)


@needs_torch
@SETTINGS
@given(cls=st.sampled_from(["RNNCell", "LSTMCell", "GRUCell"]), bias=st.booleans(),
       batched=st.booleans(), with_h=st.booleans(), seed=st.integers(0, 2**16))
def test_cells_match_torch(cls, bias, batched, with_h, seed):
    rng = np.random.default_rng(seed)
    tm, fm = getattr(torch.nn, cls)(3, 5, bias=bias).double(), getattr(nn, cls)(3, 5,
                                                                                  bias=bias)
    fm.double()
    b = (2,) if batched else ()
    h = None
    if with_h:
        h = [rng.standard_normal(b + (5,))] * (2 if cls == "LSTMCell" else 1)
    check_against_torch(tm, fm, rng.standard_normal(b + (3,)), h)


@needs_torch
@SETTINGS
@given(cls=st.sampled_from(["RNN", "LSTM", "GRU"]), bidirectional=st.booleans(),
       lengths=st.lists(st.integers(1, 5), min_size=1, max_size=4, unique=True),
       enforce_sorted=st.booleans(), with_h0=st.booleans(), seed=st.integers(0, 2**16))
def test_packed_sequences_match_torch(cls, bidirectional, lengths, enforce_sorted, with_h0,
                                      seed):
    rng = np.random.default_rng(seed)
    if enforce_sorted:
        lengths = sorted(lengths, reverse=True)
    x = rng.standard_normal((max(lengths), len(lengths), 3))
    tm = getattr(torch.nn, cls)(3, 4, bidirectional=bidirectional, num_layers=2).double()
    fm = getattr(nn, cls)(3, 4, bidirectional=bidirectional, num_layers=2).double()
    load_from_torch(tm, fm)
    tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
    tp = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    fp = U.pack_padded_sequence(fx, lengths, enforce_sorted=enforce_sorted)
    close(fp.data, tp.data)
    np.testing.assert_array_equal(fp.batch_sizes.numpy(), tp.batch_sizes.numpy())
    args_t, args_f = [tp], [fp]
    if with_h0:
        dirs = 2 if bidirectional else 1
        h = rng.standard_normal((2 * dirs, len(lengths), 4))
        hs = [h, h * 0.5] if cls == "LSTM" else [h]
        args_t.append(tuple(torch.tensor(a) for a in hs) if cls == "LSTM" else
                      torch.tensor(h))
        args_f.append(tuple(ft.tensor(a) for a in hs) if cls == "LSTM" else ft.tensor(h))
    tout, fout = tm(*args_t), fm(*args_f)
    tpad, tlen = torch.nn.utils.rnn.pad_packed_sequence(tout[0], batch_first=True)
    fpad, flen = U.pad_packed_sequence(fout[0], batch_first=True)
    close(fpad, tpad)
    np.testing.assert_array_equal(flen.numpy(), tlen.numpy())
    for a, b in zip(flat(fout[1]), flat(tout[1])):
        close(a, b)
    (tpad.sum() + sum(t.sum() for t in flat(tout[1]))).backward()
    (fpad.sum() + sum(t.sum() for t in flat(fout[1]))).backward()
    close(fx.grad, tx.grad)
    for p1, p2 in zip(tm.parameters(), fm.parameters()):
        close(p2.grad, p1.grad)


@needs_torch
@SETTINGS
@given(lengths=st.lists(st.integers(1, 4), min_size=1, max_size=4),
       batch_first=st.booleans(), side=st.sampled_from(["left", "right"]),
       value=st.sampled_from([0.0, -1.5]), seed=st.integers(0, 2**16))
def test_pad_and_pack_utilities_match_torch(lengths, batch_first, side, value, seed):
    rng = np.random.default_rng(seed)
    seqs = [rng.standard_normal((n, 2)) for n in lengths]
    ts = [torch.tensor(s, requires_grad=True) for s in seqs]
    fs = [ft.tensor(s, requires_grad=True) for s in seqs]
    tpad = torch.nn.utils.rnn.pad_sequence(ts, batch_first, value, side)
    fpad = U.pad_sequence(fs, batch_first, value, side)
    close(fpad, tpad)
    (tpad * torch.tensor(np.arange(tpad.numel()).reshape(tpad.shape) * 1.0)).sum().backward()
    (fpad * ft.tensor(np.arange(fpad.numel()).reshape(tuple(fpad.shape)) * 1.0)).sum().backward()
    for a, b in zip(fs, ts):
        close(a.grad, b.grad)
    tpk = torch.nn.utils.rnn.pack_sequence([t.detach() for t in ts], enforce_sorted=False)
    fpk = U.pack_sequence([f.detach() for f in fs], enforce_sorted=False)
    close(fpk.data, tpk.data)
    for a, b in zip(fpk[1:], tpk[1:]):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(U.unpack_sequence(fpk), torch.nn.utils.rnn.unpack_sequence(tpk)):
        close(a, b)
    tpp, tl = torch.nn.utils.rnn.pad_packed_sequence(tpk, padding_value=value,
                                                     total_length=max(lengths) + 1)
    fpp, fl = U.pad_packed_sequence(fpk, padding_value=value, total_length=max(lengths) + 1)
    close(fpp, tpp)
    np.testing.assert_array_equal(fl.numpy(), tl.numpy())


@needs_torch
def test_names_shapes_reprs_and_init_match_torch():
    configs = [("RNN", {"nonlinearity": "relu", "batch_first": True}),
               ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 3}),
               ("GRU", {"num_layers": 3, "bias": False, "dropout": 0.25}),
               ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
               ("GRUCell", {"bias": False})]
    for cls, kw in configs:
        tm, fm = getattr(torch.nn, cls)(5, 8, **kw), getattr(nn, cls)(5, 8, **kw)
        assert repr(fm) == repr(tm)
        tsd, fsd = tm.state_dict(), fm.state_dict()
        assert list(fsd) == list(tsd)
        bound = 1 / math.sqrt(8)
        for k in tsd:
            assert tuple(fsd[k].shape) == tuple(tsd[k].shape)
            v = fsd[k].numpy()
            assert np.all(np.abs(v) <= bound) and v.std() > bound / 4  # U(-b, b)


def test_errors_and_dropout_between_layers():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.RNNBase("GRU", 3, 4, proj_size=2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        nn.LSTM(3, 4)(ft.zeros(2, 1, 5))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        nn.GRU(3, 4)(ft.zeros(2, 1, 3), ft.zeros(2, 1, 4))
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        U.pack_padded_sequence(ft.zeros(3, 2, 1), [1, 3])
    m = nn.LSTM(3, 4, num_layers=2, dropout=0.9)
    x = ft.randn(6, 2, 3)
    _ = ft.manual_seed(0)
    a = m(x)[0]
    b = m(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())  # masks differ per call
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())
