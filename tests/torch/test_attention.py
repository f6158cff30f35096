"""Attention against PyTorch 2.13: ``F.scaled_dot_product_attention`` (masks, causal,
scale, grouped-query), ``MultiheadAttention`` (all its options), the Transformer layers and
``nn.Transformer`` (state dicts load; outputs and gradients agree), and the functional
forms' derivatives against finite differences."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F
from funcgrad.testing import check_grads
from funcgrad.torch import nn

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


def both(arrays):
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [ft.tensor(a, requires_grad=True) for a in arrays])


def backward_both(tout, fout):
    w = np.random.default_rng(3).standard_normal(tuple(tout.shape))
    (tout * torch.tensor(w)).sum().backward()
    (fout * ft.tensor(w)).sum().backward()


@needs_torch
@SETTINGS
@given(batch=st.lists(st.integers(1, 2), max_size=2), heads_kv=st.sampled_from([(2, 2), (4, 2)]),
       lq=st.integers(1, 4), lk=st.integers(1, 4), mask=st.sampled_from([None, "bool", "float"]),
       causal=st.booleans(), scale=st.sampled_from([None, 0.5]), seed=st.integers(0, 2**16))
def test_scaled_dot_product_attention_matches_torch(batch, heads_kv, lq, lk, mask, causal, scale,
                                                    seed):
    rng = np.random.default_rng(seed)
    hq, hk = heads_kv
    b = tuple(batch)
    q, k, v = (rng.standard_normal(b + (hq, lq, 3)), rng.standard_normal(b + (hk, lk, 3)),
               rng.standard_normal(b + (hk, lk, 2)))
    m = None
    if causal:
        mask = None
        lk = lq = min(lq, lk)
        q, k, v = q[..., :lq, :], k[..., :lk, :], v[..., :lk, :]
    if mask == "bool":
        m = rng.random((lq, lk)) > 0.4
        m[:, 0] = True  # every query may attend somewhere (else PyTorch's rows are NaN)
    elif mask == "float":
        m = rng.standard_normal((lq, lk))
    ts, fs = both([q, k, v])
    kw = {"is_causal": causal, "scale": scale, "enable_gqa": hq != hk}
    tout = torch.nn.functional.scaled_dot_product_attention(
        *ts, attn_mask=None if m is None else torch.tensor(m), **kw)
    fout = F.scaled_dot_product_attention(*fs, attn_mask=None if m is None else ft.tensor(m),
                                          **kw)
    close(fout, tout)
    backward_both(tout, fout)
    for a, c in zip(fs, ts):
        close(a.grad, c.grad)


@needs_torch
@SETTINGS
@given(batch_first=st.booleans(), bias=st.booleans(), bias_kv=st.booleans(),
       zero_attn=st.booleans(), kvdim=st.sampled_from([None, (3, 5)]), batched=st.booleans(),
       kpm=st.booleans(), mask=st.sampled_from([None, "bool", "float", "3d"]),
       need_weights=st.booleans(), average=st.booleans(), seed=st.integers(0, 2**16))
def test_multihead_attention_matches_torch(batch_first, bias, bias_kv, zero_attn, kvdim,
                                           batched, kpm, mask, need_weights, average, seed):
    rng = np.random.default_rng(seed)
    e, h, n, lq, lk = 4, 2, 2, 3, 4
    kd, vd = kvdim or (e, e)
    kw = {"bias": bias, "add_bias_kv": bias_kv, "add_zero_attn": zero_attn,
          "batch_first": batch_first}
    if kvdim:
        kw.update(kdim=kd, vdim=vd)
    tm, fm = torch.nn.MultiheadAttention(e, h, **kw).double(), nn.MultiheadAttention(e, h, **kw)
    fm.double()
    load_from_torch(tm, fm)

    def shaped(length, dim):
        if not batched:
            return rng.standard_normal((length, dim))
        return rng.standard_normal((n, length, dim) if batch_first else (length, n, dim))

    ins = [shaped(lq, e), shaped(lk, kd), shaped(lk, vd)]
    extra_t, extra_f = {}, {}
    if kpm:
        pm = rng.random((n, lk) if batched else (lk,)) > 0.6
        pm[..., 0] = False
        extra_t["key_padding_mask"], extra_f["key_padding_mask"] = torch.tensor(pm), \
            ft.tensor(pm)
    if mask is not None:
        src = lk  # masks cover the given keys (the added bias/zero keys are padded in)
        am = (rng.random((lq, src)) > 0.6 if mask == "bool" else
              rng.standard_normal((n * h if batched else h, lq, src) if mask == "3d"
                                  else (lq, src)))
        if mask == "bool":
            am[:, 0] = False
        extra_t["attn_mask"], extra_f["attn_mask"] = torch.tensor(am), ft.tensor(am)
    ts, fs = both(ins)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's notes on mixed mask types
        tout, tw = tm(*ts, need_weights=need_weights, average_attn_weights=average, **extra_t)
    fout, fw = fm(*fs, need_weights=need_weights, average_attn_weights=average, **extra_f)
    close(fout, tout)
    if need_weights:
        close(fw, tw)
    else:
        assert fw is None
    backward_both(tout, fout)
    for a, c in zip(fs, ts):
        close(a.grad, c.grad)
    for (n1, p1), (n2, p2) in zip(tm.named_parameters(), fm.named_parameters()):
        assert n1 == n2
        close(p2.grad, p1.grad)


@needs_torch
@SETTINGS
@given(norm_first=st.booleans(), activation=st.sampled_from(["relu", "gelu"]),
       batch_first=st.booleans(), bias=st.booleans(), masks=st.booleans(),
       seed=st.integers(0, 2**16))
def test_transformer_matches_torch(norm_first, activation, batch_first, bias, masks, seed):
    rng = np.random.default_rng(seed)
    kw = {"dropout": 0.0, "norm_first": norm_first, "activation": activation,
          "batch_first": batch_first, "bias": bias}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on nested tensors
        tm = torch.nn.Transformer(8, 2, 2, 1, 16, **kw).double()
    fm = nn.Transformer(8, 2, 2, 1, 16, **kw).double()
    assert list(fm.state_dict()) == list(tm.state_dict())
    load_from_torch(tm, fm)
    n, ls, lt = 2, 5, 4
    src = rng.standard_normal((n, ls, 8) if batch_first else (ls, n, 8))
    tgt = rng.standard_normal((n, lt, 8) if batch_first else (lt, n, 8))
    ts, fs = both([src, tgt])
    extra_t, extra_f = {}, {}
    if masks:
        cm = torch.nn.Transformer.generate_square_subsequent_mask(lt, dtype=torch.float64)
        fcm = nn.Transformer.generate_square_subsequent_mask(lt, dtype=ft.float64)
        close(fcm, cm)
        pm = np.zeros((n, ls), bool)
        pm[0, -2:] = True
        extra_t = {"tgt_mask": cm, "src_key_padding_mask": torch.tensor(pm),
                   "memory_key_padding_mask": torch.tensor(pm)}
        extra_f = {"tgt_mask": fcm, "src_key_padding_mask": ft.tensor(pm),
                   "memory_key_padding_mask": ft.tensor(pm)}
    tout, fout = tm(*ts, **extra_t), fm(*fs, **extra_f)
    close(fout, tout, 1e-8)
    backward_both(tout, fout)
    for a, c in zip(fs, ts):
        close(a.grad, c.grad, 1e-8)
    for (n1, p1), (n2, p2) in zip(tm.named_parameters(), fm.named_parameters()):
        assert n1 == n2
        close(p2.grad, p1.grad, 1e-8)


@needs_torch
def test_reprs_and_state_dict_layout_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [(torch.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True),
                  nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True)),
                 (torch.nn.TransformerEncoderLayer(4, 2, 8), nn.TransformerEncoderLayer(4, 2, 8)),
                 (torch.nn.TransformerDecoderLayer(4, 2, 8, norm_first=True),
                  nn.TransformerDecoderLayer(4, 2, 8, norm_first=True)),
                 (torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, 8), 2),
                  nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 2))]
    for tm, fm in pairs:
        assert repr(fm) == repr(tm)
        tsd, fsd = tm.state_dict(), fm.state_dict()
        assert list(fsd) == list(tsd)
        assert [tuple(v.shape) for v in fsd.values()] == [tuple(v.shape) for v in tsd.values()]
    mha = nn.MultiheadAttention(6, 3)
    assert np.all(_np(mha.in_proj_bias) == 0) and np.all(_np(mha.out_proj.bias) == 0)
    bound = np.sqrt(6 / (6 + 18))  # xavier_uniform_ of the (18, 6) in_proj_weight
    w = mha.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and w.std() > bound / 4


def test_errors():
    q = ft.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ft.ones(3, 3), is_causal=True)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        nn.MultiheadAttention(4, 2)(q, q, q, is_causal=True)


def test_attention_dropout_is_active_only_in_training():
    mha = nn.MultiheadAttention(4, 2, dropout=0.5)
    x = ft.randn(3, 2, 4)
    _ = ft.manual_seed(1)
    a, b = mha(x, x, x)[1], mha(x, x, x)[1]
    # PyTorch returns the weights after the dropout: two draws differ
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    o1, o2 = mha(x, x, x)[0], mha(x, x, x)[0]
    assert not np.allclose(o1.detach().numpy(), o2.detach().numpy())
    mha.eval()
    np.testing.assert_array_equal(mha(x, x, x)[0].detach().numpy(),
                                  mha(x, x, x)[0].detach().numpy())


@SETTINGS
@given(seed=st.integers(0, 2**16), lq=st.integers(1, 3), lk=st.integers(1, 3))
def test_attention_functions_have_correct_derivatives(seed, lq, lk):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((2, lq, 3)), rng.standard_normal((2, lk, 3)),
               rng.standard_normal((2, lk, 2)))
    bias = rng.standard_normal((lq, lk))
    w_in, w_out = rng.standard_normal((6, 2)), rng.standard_normal((2, 2))
    x = rng.standard_normal((lq, 2, 2))
    with fg.enable_x64():
        check_grads(lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, attn_mask=fg.numpy.asarray(bias), scale=0.7), (q, k, v), order=2)
        check_grads(lambda x, w_in, w_out: F.multi_head_attention_forward(
            x, x, x, 2, 2, w_in, None, None, None, False, 0.0, w_out, None)[0],
            (x, w_in, w_out), order=2)
