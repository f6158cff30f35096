"""The losses of ``nn.loss`` / ``loss_functions`` against PyTorch 2.13 (values and input
gradients for every reduction and option; module reprs) and against finite differences
in float64."""

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
SETTINGS = settings(max_examples=15, deadline=None)


def _np(t):
    return t.detach().numpy()


def inputs(name, rng, n, c):
    """Differentiable inputs, then the fixed ones, for loss ``name``."""
    x = rng.standard_normal((n, c))
    sign = np.where(rng.random(n) > 0.5, 1.0, -1.0)
    return {
        "binary_cross_entropy": ([rng.uniform(0.05, 0.95, (n, c))], [rng.random((n, c))]),
        "smooth_l1_loss": ([x], [rng.standard_normal((n, c))]),
        "huber_loss": ([x], [rng.standard_normal((n, c))]),
        "kl_div": ([np.log(rng.dirichlet(np.ones(c), n))], [rng.dirichlet(np.ones(c), n)]),
        "poisson_nll_loss": ([x], [rng.poisson(2.0, (n, c)).astype(float)]),
        "gaussian_nll_loss": ([x], [rng.standard_normal((n, c)), rng.uniform(0.1, 2, (n, c))]),
        "cosine_embedding_loss": ([x, rng.standard_normal((n, c))], [sign]),
        "margin_ranking_loss": ([x[:, 0], rng.standard_normal(n)], [sign]),
        "triplet_margin_loss": ([x, rng.standard_normal((n, c)), rng.standard_normal((n, c))],
                                []),
        "multilabel_soft_margin_loss": ([x], [(rng.random((n, c)) > 0.5).astype(float)]),
        "multi_margin_loss": ([x], [rng.integers(0, c, n)]),
        "soft_margin_loss": ([x], [np.where(rng.random((n, c)) > 0.5, 1.0, -1.0)]),
        "hinge_embedding_loss": ([x], [np.where(rng.random((n, c)) > 0.5, 1.0, -1.0)]),
    }[name]


OPTIONS = {
    "binary_cross_entropy": [{}],
    "smooth_l1_loss": [{"beta": 0.5}, {"beta": 0.0}],
    "huber_loss": [{"delta": 0.7}],
    "kl_div": [{}, {"log_target": True}],
    "poisson_nll_loss": [{}, {"full": True}],
    "gaussian_nll_loss": [{}, {"full": True}],
    "cosine_embedding_loss": [{"margin": 0.2}],
    "margin_ranking_loss": [{"margin": 0.3}],
    "triplet_margin_loss": [{}, {"p": 1, "swap": True, "margin": 0.5}],
    "multilabel_soft_margin_loss": [{}],
    "multi_margin_loss": [{}, {"p": 2, "margin": 0.5}],
    "soft_margin_loss": [{}],
    "hinge_embedding_loss": [{"margin": 0.5}],
}


@needs_torch
@SETTINGS
@given(name=st.sampled_from(sorted(OPTIONS)), option=st.integers(0, 1),
       reduction=st.sampled_from(["mean", "sum", "none"]), n=st.integers(1, 4),
       c=st.integers(2, 4), seed=st.integers(0, 2**16))
def test_losses_match_torch(name, option, reduction, n, c, seed):
    rng = np.random.default_rng(seed)
    diff, fixed = inputs(name, rng, n, c)
    kw = dict(OPTIONS[name][option % len(OPTIONS[name])], reduction=reduction)
    if name == "kl_div" and reduction == "mean":
        kw["reduction"] = "batchmean"
    if name == "poisson_nll_loss" and option:
        kw["log_input"] = False
        diff = [np.abs(diff[0]) + 0.1]
    td = [torch.tensor(a, requires_grad=True) for a in diff]
    fd = [ft.tensor(a, requires_grad=True) for a in diff]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout = getattr(torch.nn.functional, name)(*td, *map(torch.tensor, fixed), **kw)
        fout = getattr(F, name)(*fd, *map(ft.tensor, fixed), **kw)
    np.testing.assert_allclose(_np(fout), _np(tout), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(tout.shape))
    (tout * torch.tensor(w)).sum().backward()
    (fout * ft.tensor(w)).sum().backward()
    for a, b in zip(fd, td):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-11)


@needs_torch
def test_weighted_forms_and_modules_match_torch():
    rng = np.random.default_rng(0)
    x, t = rng.uniform(0.1, 0.9, (3, 4)), rng.random((3, 4))
    w = rng.uniform(0.5, 2, 4)
    pairs = [
        ("BCELoss", {"weight": w}, [x, t]),
        ("MultiLabelSoftMarginLoss", {"weight": w}, [x, (t > 0.5) * 1.0]),
        ("MultiMarginLoss", {"weight": w, "p": 2}, [x, np.array([0, 3, 1])]),
        ("HuberLoss", {"delta": 0.5}, [x, t]),
        ("GaussianNLLLoss", {"eps": 0.2}, [x, t, np.full((3, 1), 0.1)]),
        ("GaussianNLLLoss", {}, [x, t, rng.uniform(0.5, 1, 3)]),
        ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, [np.log(t), np.log(x)]),
        ("TripletMarginLoss", {"margin": 2.0}, [x, t, t[::-1].copy()]),
    ]
    for cls, kw, args in pairs:
        tk = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        fk = {k: ft.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        tm, fm = getattr(torch.nn, cls)(**tk), getattr(nn, cls)(**fk)
        assert repr(fm) == repr(tm)
        ta = [torch.tensor(args[0], requires_grad=True)] + [torch.tensor(a) for a in args[1:]]
        fa = [ft.tensor(args[0], requires_grad=True)] + [ft.tensor(a) for a in args[1:]]
        tout, fout = tm(*ta), fm(*fa)
        np.testing.assert_allclose(_np(fout), _np(tout), rtol=1e-10)
        tout.backward()
        fout.backward()
        np.testing.assert_allclose(fa[0].grad.numpy(), ta[0].grad.numpy(), rtol=1e-9,
                                   atol=1e-12)


@needs_torch
def test_grad_fn_names_and_errors_match_torch():
    x = np.random.default_rng(1).uniform(0.1, 0.9, (2, 3))
    for name in ("binary_cross_entropy", "smooth_l1_loss", "huber_loss", "soft_margin_loss"):
        tout = getattr(torch.nn.functional, name)(torch.tensor(x, requires_grad=True),
                                                  torch.tensor(x))
        fout = getattr(F, name)(ft.tensor(x, requires_grad=True), ft.tensor(x))
        assert fout.grad_fn.name() == tout.grad_fn.name()
    with pytest.raises(ValueError, match="is deprecated. Please ensure they have the same"):
        F.binary_cross_entropy(ft.tensor(x), ft.tensor(x[0]))
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ft.tensor(x), ft.tensor(x), ft.ones(3, 2))
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(ft.tensor(x), ft.tensor(x))


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 3))
def test_loss_functions_have_correct_derivatives(seed, n):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    p = rng.uniform(0.3, 0.7, (n, 3))  # log's high derivatives stay small for the FD check
    # Away from the kinks (|x - y| = beta or delta, margins) where finite differences fail.
    y = np.where(np.abs(np.abs(x - y) - 0.8) < 0.05, y + 0.2, y)
    sign = np.where(rng.random((n, 3)) > 0.5, 1.0, -1.0)
    cases = [
        (lambda p: F.binary_cross_entropy(p, fg.numpy.asarray(1 - p)), (p,)),
        (lambda x: F.smooth_l1_loss(x, fg.numpy.asarray(y), beta=0.8), (x,)),
        (lambda x: F.huber_loss(x, fg.numpy.asarray(y), delta=0.8), (x,)),
        (lambda x: F.kl_div(x, fg.numpy.asarray(p), reduction="sum"), (x,)),
        (lambda x: F.poisson_nll_loss(x, fg.numpy.asarray(p), full=True), (x,)),
        (lambda x, v: F.gaussian_nll_loss(x, fg.numpy.asarray(y), v), (x, p)),
        # (norms kept from 0, where the second derivative outgrows finite differences' step)
        (lambda a, b: F.cosine_similarity(a, b), (x + 2 * sign, y - 2 * sign)),
        (lambda a, b: F.pairwise_distance(a, b, p=3.0), (x, y)),
        (lambda x: F.multilabel_soft_margin_loss(x, fg.numpy.asarray(p)), (x,)),
        (lambda x: F.soft_margin_loss(x, fg.numpy.asarray(sign)), (x,)),
    ]
    with fg.enable_x64():
        for fn, args in cases:
            check_grads(fn, args, order=2, modes=("fwd", "rev"))
