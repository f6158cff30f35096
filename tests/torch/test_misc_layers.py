"""Embedding, EmbeddingBag and the channel-wise and alpha dropouts against PyTorch 2.13
(values, gradients, padding_idx, max_norm, reprs) and against their defining properties
(dropout masks are random: their structure and moments are checked)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F
from funcgrad.torch import nn

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
SETTINGS = settings(max_examples=15, deadline=None)


def _np(t):
    return t.detach().numpy()


@needs_torch
@SETTINGS
@given(num=st.integers(2, 6), dim=st.integers(1, 3), shape=st.lists(st.integers(1, 3),
                                                                     max_size=2),
       padding=st.sampled_from([None, 0, -1]), max_norm=st.sampled_from([None, 0.8]),
       freq=st.booleans(), seed=st.integers(0, 2**16))
def test_embedding_matches_torch(num, dim, shape, padding, max_norm, freq, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((num, dim))
    idx = rng.integers(0, num, tuple(shape))
    kw = {"padding_idx": padding, "max_norm": max_norm, "scale_grad_by_freq": freq}
    tm = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, **kw)
    fm = nn.Embedding.from_pretrained(ft.tensor(w), freeze=False, **kw)
    assert repr(fm) == repr(tm)
    tout, fout = tm(torch.tensor(idx)), fm(ft.tensor(idx))
    np.testing.assert_allclose(_np(fout), _np(tout), rtol=1e-12)
    np.testing.assert_allclose(_np(fm.weight), _np(tm.weight), rtol=1e-12)  # renormed rows
    g = rng.standard_normal(tuple(tout.shape))
    (tout * torch.tensor(g)).sum().backward()
    (fout * ft.tensor(g)).sum().backward()
    np.testing.assert_allclose(fm.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-12,
                               atol=1e-14)
    assert fout.grad_fn.name() == "EmbeddingBackward0"


@needs_torch
@SETTINGS
@given(mode=st.sampled_from(["sum", "mean", "max"]), two_d=st.booleans(),
       include_last=st.booleans(), padding=st.sampled_from([None, 1]),
       weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_embedding_bag_matches_torch(mode, two_d, include_last, padding, weighted, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((6, 3))
    weighted = weighted and mode == "sum"
    if two_d:
        idx, offsets = rng.integers(0, 6, (3, 4)), None
        include_last = False
    else:
        idx = rng.integers(0, 6, 7)
        offsets = np.array([0, 2, 2, 5] + ([7] if include_last else []))
    psw = rng.standard_normal(idx.shape) if weighted else None
    kw = {"mode": mode, "padding_idx": padding, "include_last_offset": include_last}
    tm = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(w), freeze=False, **kw)
    fm = nn.EmbeddingBag.from_pretrained(ft.tensor(w), freeze=False, **kw)
    assert repr(fm) == repr(tm)
    targs = [torch.tensor(idx), None if offsets is None else torch.tensor(offsets)]
    fargs = [ft.tensor(idx), None if offsets is None else ft.tensor(offsets)]
    tout = tm(*targs, per_sample_weights=None if psw is None else torch.tensor(psw))
    fout = fm(*fargs, per_sample_weights=None if psw is None else ft.tensor(psw))
    np.testing.assert_allclose(_np(fout), _np(tout), rtol=1e-12, atol=1e-14)
    g = rng.standard_normal(tuple(tout.shape))
    (tout * torch.tensor(g)).sum().backward()
    (fout * ft.tensor(g)).sum().backward()
    np.testing.assert_allclose(fm.weight.grad.numpy(), tm.weight.grad.numpy(), rtol=1e-12,
                               atol=1e-14)


@needs_torch
def test_embedding_init_errors_and_reprs():
    e = nn.Embedding(50, 8, padding_idx=3)
    w = _np(e.weight)
    assert np.all(w[3] == 0) and abs(w.std() - 1) < 0.2  # N(0, 1) with the padding row zero
    assert repr(nn.Embedding(5, 2, max_norm=1.0, sparse=True)) == \
        repr(torch.nn.Embedding(5, 2, max_norm=1.0, sparse=True))
    assert repr(nn.EmbeddingBag(5, 2)) == repr(torch.nn.EmbeddingBag(5, 2))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ft.tensor([5]), ft.zeros(5, 2))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)
    with pytest.raises(RuntimeError, match="Long, Int; but got torch.FloatTensor"):
        F.embedding(ft.tensor([1.0]), ft.zeros(5, 2))
    assert nn.Embedding.from_pretrained(ft.ones(2, 2)).weight.requires_grad is False


@SETTINGS
@given(kind=st.sampled_from(["1d", "2d", "3d", "feature_alpha"]), p=st.sampled_from([0.2, 0.6]),
       batched=st.booleans(), seed=st.integers(0, 1000))
def test_channel_dropout_zeroes_whole_channels(kind, p, batched, seed):
    ft.manual_seed(seed)
    spatial = {"1d": (5,), "2d": (3, 3), "3d": (2, 2, 2), "feature_alpha": (4,)}[kind]
    if kind in ("2d", "feature_alpha"):
        batched = True  # these read axis 0 as the batch whatever the rank, as PyTorch
    shape = ((4,) if batched else ()) + (16,) + spatial
    x = ft.ones(*shape, requires_grad=True)
    fn = {"1d": F.dropout1d, "2d": F.dropout2d, "3d": F.dropout3d,
          "feature_alpha": lambda x, p: F.feature_alpha_dropout(x, p, training=True)}[kind]
    y = fn(x, p)
    flat = _np(y).reshape(-1, int(np.prod(spatial)))
    assert np.all(flat == flat[:, :1])  # each channel kept or dropped as a whole
    kept = set(np.round(np.unique(flat), 6))
    assert len(kept) <= 2
    if kind != "feature_alpha":
        assert kept <= {0.0, round(1 / (1 - p), 6)}
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad).reshape(flat.shape)[:, 0] != 0,
                                  flat[:, 0] != (0.0 if kind != "feature_alpha" else flat.min()))
    np.testing.assert_array_equal(_np(fn(x, 0.0)), _np(x))


def test_alpha_dropout_keeps_zero_mean_unit_variance():
    ft.manual_seed(0)
    x = ft.randn(200_000)
    y = F.alpha_dropout(x, 0.3, training=True)
    assert abs(y.mean().item()) < 0.02 and abs(y.std().item() - 1) < 0.02
    assert F.alpha_dropout(x, 0.3) is x  # training=False by default, as PyTorch
    m = nn.AlphaDropout(0.3)
    assert repr(m) == "AlphaDropout(p=0.3, inplace=False)"
    m.eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout1d(1.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input"):
        F.dropout1d(ft.ones(2, 2, 2, 2))
    assert np.all(_np(F.dropout2d(ft.ones(2, 3, 2, 2), 1.0)) == 0)
