"""Normalization layers (BatchNorm, InstanceNorm, LayerNorm, GroupNorm, RMSNorm,
LocalResponseNorm) and their functional forms against PyTorch 2.13 (values, input and
parameter gradients, running statistics, reprs, state-dict keys), and the functional
forms' derivatives against finite differences in float64."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
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
SETTINGS = settings(max_examples=12, deadline=None)


def _np(t):
    return t.detach().numpy()


def load_from_torch(tm, fm):
    fm.load_state_dict({k: ft.tensor(_np(v)) for k, v in tm.state_dict().items()})


def run_both(tm, fm, x, train=True):
    """Forward and backward (of a fixed random projection) through both modules."""
    tm.train(train)
    fm.train(train)
    tx = torch.tensor(x, requires_grad=True)
    fx = ft.tensor(x, requires_grad=True)
    ty, fy = tm(tx), fm(fx)
    w = np.random.default_rng(1).standard_normal(ty.shape)
    (ty * torch.tensor(w)).sum().backward()
    (fy * ft.tensor(w)).sum().backward()
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-8, atol=1e-9)
    for (name, tp), (fname, fp) in zip(tm.named_parameters(), fm.named_parameters()):
        assert name == fname
        np.testing.assert_allclose(fp.grad.numpy(), tp.grad.numpy(), rtol=1e-8, atol=1e-9)
    for (name, tb), (fname, fb) in zip(tm.named_buffers(), fm.named_buffers()):
        assert name == fname
        np.testing.assert_allclose(fb.numpy(), tb.numpy(), rtol=1e-10, atol=1e-12)
    return fy


@needs_torch
@SETTINGS
@given(kind=st.sampled_from([1, 2, 3]), n=st.integers(2, 4), c=st.integers(1, 3),
       affine=st.booleans(), track=st.booleans(), momentum=st.sampled_from([0.1, 0.5, None]),
       seed=st.integers(0, 2**16))
def test_batch_norm_matches_torch(kind, n, c, affine, track, momentum, seed):
    rng = np.random.default_rng(seed)
    shape = {1: (n, c, 3), 2: (n, c, 2, 3), 3: (n, c, 2, 2, 2)}[kind]
    kw = {"affine": affine, "track_running_stats": track, "momentum": momentum}
    tm = getattr(torch.nn, f"BatchNorm{kind}d")(c, **kw).double()
    fm = getattr(nn, f"BatchNorm{kind}d")(c, **kw).double()
    if affine:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-1, 1)
    load_from_torch(tm, fm)
    for _ in range(2):  # two steps: the running statistics follow PyTorch's rule
        y = run_both(tm, fm, rng.standard_normal(shape) * 2 + 1, train=True)
        tm.zero_grad()
        fm.zero_grad()
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
    run_both(tm, fm, rng.standard_normal(shape), train=False)


@needs_torch
@SETTINGS
@given(kind=st.sampled_from([1, 2, 3]), n=st.integers(1, 3), c=st.integers(1, 3),
       affine=st.booleans(), track=st.booleans(), batched=st.booleans(),
       seed=st.integers(0, 2**16))
def test_instance_norm_matches_torch(kind, n, c, affine, track, batched, seed):
    rng = np.random.default_rng(seed)
    shape = (n, c) + (3,) * kind if batched else (c,) + (3,) * kind
    kw = {"affine": affine, "track_running_stats": track}
    tm = getattr(torch.nn, f"InstanceNorm{kind}d")(c, **kw).double()
    fm = getattr(nn, f"InstanceNorm{kind}d")(c, **kw).double()
    load_from_torch(tm, fm)
    run_both(tm, fm, rng.standard_normal(shape), train=True)
    tm.zero_grad()
    fm.zero_grad()
    run_both(tm, fm, rng.standard_normal(shape), train=False)


@needs_torch
@SETTINGS
@given(lead=st.lists(st.integers(1, 3), min_size=0, max_size=2),
       norm=st.lists(st.integers(1, 4), min_size=1, max_size=2), affine=st.booleans(),
       bias=st.booleans(), seed=st.integers(0, 2**16))
def test_layer_norm_and_rms_norm_match_torch(lead, norm, affine, bias, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(tuple(lead) + tuple(norm))
    tm = torch.nn.LayerNorm(norm, elementwise_affine=affine, bias=bias).double()
    fm = nn.LayerNorm(norm, elementwise_affine=affine, bias=bias).double()
    if affine:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
    load_from_torch(tm, fm)
    assert run_both(tm, fm, x).grad_fn.name() == "NativeLayerNormBackward0"
    for eps in (None, 1e-3):
        tm = torch.nn.RMSNorm(norm, eps=eps, elementwise_affine=affine).double()
        fm = nn.RMSNorm(norm, eps=eps, elementwise_affine=affine).double()
        load_from_torch(tm, fm)
        run_both(tm, fm, x)


@needs_torch
@SETTINGS
@given(groups=st.sampled_from([1, 2, 3]), per=st.integers(1, 2), n=st.integers(1, 3),
       spatial=st.lists(st.integers(1, 3), max_size=2), affine=st.booleans(),
       seed=st.integers(0, 2**16))
def test_group_norm_matches_torch(groups, per, n, spatial, affine, seed):
    c = groups * per
    assume(n * per * int(np.prod(spatial)) > 1)  # else PyTorch refuses (tested below)
    x = np.random.default_rng(seed).standard_normal((n, c) + tuple(spatial))
    tm = torch.nn.GroupNorm(groups, c, affine=affine).double()
    fm = nn.GroupNorm(groups, c, affine=affine).double()
    load_from_torch(tm, fm)
    assert run_both(tm, fm, x).grad_fn.name() == "NativeGroupNormBackward0"


@needs_torch
@SETTINGS
@given(size=st.integers(1, 5), c=st.integers(1, 6), rank=st.sampled_from([3, 4, 5]),
       alpha=st.sampled_from([1e-4, 0.5]), beta=st.sampled_from([0.75, 1.0]),
       seed=st.integers(0, 2**16))
def test_local_response_norm_matches_torch(size, c, rank, alpha, beta, seed):
    x = np.random.default_rng(seed).standard_normal((2, c) + (2,) * (rank - 2))
    run_both(torch.nn.LocalResponseNorm(size, alpha, beta, 2.0),
             nn.LocalResponseNorm(size, alpha, beta, 2.0), x)


@needs_torch
@SETTINGS
@given(p=st.sampled_from([1.0, 2.0, 3.0, float("inf")]), dim=st.sampled_from([0, 1, -1]),
       seed=st.integers(0, 2**16))
def test_normalize_matches_torch(p, dim, seed):
    x = np.random.default_rng(seed).standard_normal((3, 4))
    tx, fx = torch.tensor(x, requires_grad=True), ft.tensor(x, requires_grad=True)
    ty, fy = torch.nn.functional.normalize(tx, p, dim), F.normalize(fx, p, dim)
    np.testing.assert_allclose(_np(fy), _np(ty), rtol=1e-12)
    (ty * ty.detach()).sum().backward()
    (fy * fy.detach()).sum().backward()
    np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


@needs_torch
def test_reprs_state_dicts_and_initialisation_match_torch():
    pairs = [
        (torch.nn.BatchNorm1d(3), nn.BatchNorm1d(3)),
        (torch.nn.BatchNorm2d(3, affine=False, momentum=None),
         nn.BatchNorm2d(3, affine=False, momentum=None)),
        (torch.nn.BatchNorm3d(2, bias=False, track_running_stats=False),
         nn.BatchNorm3d(2, bias=False, track_running_stats=False)),
        (torch.nn.InstanceNorm1d(3, affine=True), nn.InstanceNorm1d(3, affine=True)),
        (torch.nn.LayerNorm([2, 3], eps=1e-3, bias=False), nn.LayerNorm([2, 3], eps=1e-3,
                                                                        bias=False)),
        (torch.nn.GroupNorm(2, 4), nn.GroupNorm(2, 4)),
        (torch.nn.RMSNorm(4, eps=1e-6), nn.RMSNorm(4, eps=1e-6)),
        (torch.nn.LocalResponseNorm(3), nn.LocalResponseNorm(3)),
    ]
    for tm, fm in pairs:
        assert repr(fm) == repr(tm)
        tsd, fsd = tm.state_dict(), fm.state_dict()
        assert list(fsd) == list(tsd)
        for k in tsd:
            assert tuple(fsd[k].shape) == tuple(tsd[k].shape)
            assert str(fsd[k].dtype) == str(tsd[k].dtype)
            np.testing.assert_array_equal(fsd[k].numpy(), tsd[k].numpy())


@needs_torch
def test_errors_match_torch():
    for fn in (
        lambda t, f: f.batch_norm(t.zeros(1, 3), None, None, training=True),
        lambda t, f: f.layer_norm(t.zeros(4, 3, 6), (5,)),
        lambda t, f: f.group_norm(t.zeros(2, 3, 4), 2),
        lambda t, f: f.group_norm(t.zeros(1, 2), 2),
        lambda t, f: f.instance_norm(t.zeros(2, 3, 1)),
        lambda t, f: f.local_response_norm(t.zeros(2, 3), 2),
    ):
        with pytest.raises(Exception) as te:
            fn(torch, torch.nn.functional)
        with pytest.raises(type(te.value)) as fe:
            fn(ft, F)
        # (PyTorch's local_response_norm message has a run of spaces inside; words compared)
        assert str(fe.value).split() == str(te.value).split()
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(ft.zeros(2, 3, 4, 5))


def test_running_stats_momentum_none_is_a_cumulative_average():
    bn = nn.BatchNorm1d(1, momentum=None, affine=False)
    batches = [np.array([[1.0], [3.0]]), np.array([[5.0], [9.0]]), np.array([[0.0], [2.0]])]
    for b in batches:
        bn(ft.tensor(b))
    np.testing.assert_allclose(bn.running_mean.numpy(), [np.mean([2.0, 7.0, 1.0])], rtol=1e-6)
    # The running variance is the average of the unbiased batch variances (start value 1
    # is replaced by the first batch when momentum is None).
    np.testing.assert_allclose(bn.running_var.numpy(), [np.mean([2.0, 8.0, 2.0])], rtol=1e-6)
    assert int(bn.num_batches_tracked) == 3
    bn.eval()
    y = bn(ft.tensor([[bn.running_mean.item()]]))
    np.testing.assert_allclose(y.numpy(), [[0.0]], atol=1e-6)


@SETTINGS
@given(seed=st.integers(0, 2**16), n=st.integers(2, 3), c=st.integers(1, 3))
def test_functional_forms_have_correct_derivatives(seed, n, c):
    rng = np.random.default_rng(seed)
    # Every row of 3 keeps a spread and no entry comes near 0 (a scaled [-1, 0.6, 1] plus
    # bounded noise): normalizing nearly equal values, or a p-norm of nearly zero values, is
    # ill-conditioned, and finite differences could not follow it.
    x = (rng.uniform(1.0, 2.0, (n, c * 2, 1)) * np.array([-1.0, 0.6, 1.0])
         + rng.uniform(-0.3, 0.3, (n, c * 2, 3)))
    w = rng.uniform(0.5, 1.5, c * 2)
    b = rng.standard_normal(c * 2)
    rm, rv = rng.standard_normal(c * 2), rng.uniform(0.5, 2, c * 2)
    lw = rng.uniform(0.5, 1.5, 3)
    fns = [
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        lambda x, w, b: F.batch_norm(x, fg.numpy.asarray(rm), fg.numpy.asarray(rv), w, b),
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        lambda x, w, b: F.group_norm(x, 2, w, b),
        lambda x, w, b: F.layer_norm(x, (3,), fg.numpy.asarray(lw)) * b[:, None],
        lambda x, w, b: F.rms_norm(x, (3,), fg.numpy.asarray(lw), eps=1e-3) * w[:, None],
        lambda x, w, b: F.local_response_norm(x, 2, alpha=0.3, k=1.5) * w[:, None],
        lambda x, w, b: F.normalize(x, p=3.0, dim=1) * b[:, None],
    ]
    with fg.enable_x64():
        for fn in fns:
            # Second differences of a normalization over few samples lose ~5 digits.
            check_grads(fn, (x, w, b), order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


def test_functional_forms_on_arrays_and_numpy():
    x = np.random.default_rng(0).standard_normal((2, 4, 3))
    with fg.enable_x64():
        out = F.group_norm(fg.numpy.asarray(x), 2)
        assert isinstance(out, fg.Array) and not isinstance(out, ft.Tensor)
    t = F.layer_norm(x, (3,))
    assert isinstance(t, ft.Tensor) and t.dtype == ft.float64
    m = x.mean(-1, keepdims=True)
    np.testing.assert_allclose(t.numpy(), (x - m) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
                               rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.BatchNorm2d(4).eval()(ft.zeros(1, 4, 1, 1))  # eval needs no batch statistics


@pytest.mark.parametrize("version", [None, 1, 2])
def test_checkpoint_without_num_batches_tracked_loads_as_torch(version):
    """Checkpoints from before BatchNorm counted batches (state-dict version < 2, or no
    ``_metadata``, as a dict comprehension leaves) load; a version-2 one reports the key."""
    import collections  # noqa: PLC0415

    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        m = L.nn.Sequential(L.nn.Linear(3, 3), L.nn.BatchNorm1d(3))
        sd = collections.OrderedDict(
            (k, v) for k, v in m.state_dict().items() if "num_batches" not in k)
        if version is not None:
            sd._metadata = collections.OrderedDict([("", {"version": 1}),
                                                    ("1", {"version": version})])
        try:
            return str(m.load_state_dict(sd)), str(m.load_state_dict(sd, strict=False))
        except RuntimeError as e:
            return str(e)

    assert run(ft) == run(torch)
