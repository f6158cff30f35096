"""``nn.AdaptiveLogSoftmaxWithLoss``, ``nn.CrossMapLRN2d``, ``F.linear_cross_entropy`` /
``nn.LinearCrossEntropyLoss`` / ``nn.LinearCrossEntropyOptions`` and ``F.grouped_mm``
against PyTorch 2.13 (the same parameters in both: values, dtypes, shapes, reprs,
``grad_fn`` names, input and parameter gradients, errors) and, for the functional forms,
against central finite differences."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from finite_differences import central_grad
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
FEW = settings(max_examples=10, deadline=None)


def _np(t):
    t = t.detach()
    return (t.float() if str(t.dtype) in ("torch.bfloat16", "torch.float16") else t).numpy()


def _name(t):
    """The ``grad_fn`` class name (without PyTorch's ``torch.autograd.function.``)."""
    return None if t.grad_fn is None else repr(t.grad_fn).split()[0].lstrip("<").rsplit(
        ".", 1)[-1]


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return None


def _tol(dtype):
    return {"rtol": 1e-9, "atol": 1e-11} if dtype == "float64" else {"rtol": 2e-5,
                                                                       "atol": 2e-6}


def _close(a, b, **tol):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), equal_nan=True,
                               **tol)


def _pair(a, grad=False):
    """The same array as a PyTorch and a funcgrad tensor."""
    return torch.tensor(a, requires_grad=grad), ft.tensor(a, requires_grad=grad)


# ------------------------------------------------------------ AdaptiveLogSoftmaxWithLoss


def _asm_pair(in_features, n_classes, cutoffs, div_value, head_bias, dtype):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs,
                                             div_value=div_value, head_bias=head_bias,
                                             dtype=getattr(torch, dtype))
    fm = nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=div_value,
                                       head_bias=head_bias, dtype=getattr(ft, dtype))
    state = {k: v.detach().numpy() for k, v in tm.state_dict().items()}
    assert list(state) == list(fm.state_dict())
    assert [tuple(v.shape) for v in state.values()] == \
        [tuple(v.shape) for v in fm.state_dict().values()]
    fm.load_state_dict({k: ft.tensor(v) for k, v in state.items()})
    return tm, fm


@needs_torch
@SETTINGS
@given(data=st.data(), in_features=st.integers(2, 9), n_classes=st.integers(3, 12),
       div_value=st.sampled_from([1.0, 2.0, 4.0]), head_bias=st.booleans(),
       batch=st.integers(1, 6), unbatched=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_adaptive_log_softmax_matches_torch(data, in_features, n_classes, div_value,
                                            head_bias, batch, unbatched, dtype, seed):
    cutoffs = data.draw(st.lists(st.integers(1, n_classes - 1), min_size=1, max_size=3,
                                 unique=True).map(sorted))
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-sized tail projections warn in both
        tm, fm = _asm_pair(in_features, n_classes, cutoffs, div_value, head_bias, dtype)
    assert repr(fm) == repr(tm)
    x = rng.standard_normal((batch, in_features)).astype(dtype)
    target = rng.integers(0, n_classes, batch)
    if unbatched:
        x, target = x[0], target[0]
    tx, fx = _pair(x, grad=True)
    tout = tm(tx, torch.tensor(target))
    fout = fm(fx, ft.tensor(target))
    assert type(fout).__name__ == "_ASMoutput" and fout._fields == ("output", "loss")
    for a, b in ((fout.output, tout.output), (fout.loss, tout.loss)):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
        assert _name(a) == _name(b)
        _close(_np(a), _np(b), **_tol(dtype))
    w = rng.standard_normal(tuple(tout.output.shape)).astype(dtype)
    (tout.loss + (tout.output * torch.tensor(w)).sum()).backward()
    (fout.loss + (fout.output * ft.tensor(w)).sum()).backward()
    _close(fx.grad.numpy(), tx.grad.numpy(), **_tol(dtype))
    for (k, p), (k2, q) in zip(tm.named_parameters(), fm.named_parameters()):
        assert k == k2
        assert (q.grad is None) == (p.grad is None)  # a cluster no target is in
        if p.grad is not None:
            _close(q.grad.numpy(), p.grad.numpy(), **_tol(dtype))
    xs = (rng.standard_normal((7, in_features)) * 3).astype(dtype)
    tlp, flp = tm.log_prob(torch.tensor(xs)), fm.log_prob(ft.tensor(xs))
    assert _name(flp) == _name(tlp) == "CopySlices"
    _close(_np(flp), _np(tlp), **_tol(dtype))
    tp, fp = tm.predict(torch.tensor(xs)), fm.predict(ft.tensor(xs))
    assert str(fp.dtype) == str(tp.dtype)
    np.testing.assert_array_equal(fp.numpy(), tp.numpy())


ASM_ERRORS = [
    lambda T, m: m(T.ones(3, 6), T.tensor([0, 1])),
    lambda T, m: m(T.ones(3, 6, 1), T.tensor([0, 1, 2])),
    lambda T, m: m(T.ones(3, 6), T.tensor(1)),
    lambda T, m: m(T.ones(3, 6), T.tensor([[1]])),
    lambda T, m: m(T.ones(3, 6), T.tensor([0, 10, -1])),
    lambda T, m: m(T.ones(2, 6), T.tensor([3, 11])),
    lambda T, m: m(T.ones(6), T.tensor([1])),
    lambda T, m: m(T.ones(2, 6, dtype=T.float64), T.tensor([1, 2])),
    lambda T, m: T.nn.AdaptiveLogSoftmaxWithLoss(6, 10, []),
    lambda T, m: T.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [3, 3]),
    lambda T, m: T.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [10]),
    lambda T, m: T.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [5, 3]),
    lambda T, m: T.nn.AdaptiveLogSoftmaxWithLoss(6, 10, [0, 3]),
    lambda T, m: T.nn.AdaptiveLogSoftmaxWithLoss(6, 10, (2.5,)),
]


@needs_torch
@pytest.mark.parametrize("case", range(len(ASM_ERRORS)))
def test_adaptive_log_softmax_errors_match_torch(case):
    tm, fm = _asm_pair(6, 10, [2, 5], 2.0, False, "float32")
    expected = _error(lambda: ASM_ERRORS[case](torch, tm))
    assert expected is not None
    assert _error(lambda: ASM_ERRORS[case](ft, fm)) == expected


@needs_torch
def test_adaptive_log_softmax_empty_batch_and_reset():
    tm, fm = _asm_pair(6, 10, [2, 5], 2.0, True, "float64")
    tout = tm(torch.ones(0, 6, dtype=torch.float64), torch.ones(0, dtype=torch.long))
    with np.errstate(invalid="ignore"):  # the mean of nothing (NaN, as PyTorch's)
        fout = fm(ft.ones(0, 6, dtype=ft.float64), ft.ones(0, dtype=ft.long))
    assert repr(fout) == repr(tout)
    before = [p.detach().clone() for p in fm.parameters()]
    fm.reset_parameters()
    assert all(not np.array_equal(a.numpy(), b.detach().numpy())
               for a, b in zip(before, fm.parameters()))


def test_adaptive_log_softmax_input_gradient_against_finite_differences():
    fm = nn.AdaptiveLogSoftmaxWithLoss(4, 7, [2, 4], div_value=1.0, head_bias=True,
                                       dtype=ft.float64)
    target = ft.tensor([0, 3, 6, 2, 5])
    x0 = np.random.default_rng(1).standard_normal((5, 4))

    def loss(x):
        out = fm(ft.tensor(x), target)
        return float((out.loss + out.output[1] * 0.5).item())

    x = ft.tensor(x0, requires_grad=True)
    out = fm(x, target)
    (out.loss + out.output[1] * 0.5).backward()
    _close(x.grad.numpy(), central_grad(loss, x0), rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------- CrossMapLRN2d


@needs_torch
@SETTINGS
@given(n=st.integers(0, 2), c=st.integers(1, 7), h=st.integers(1, 3), w=st.integers(1, 3),
       size=st.integers(2, 8), alpha=st.sampled_from([1e-4, 0.3, 2.0]),
       beta=st.sampled_from([0.75, 0.5, 1.3]), k=st.sampled_from([1, 2.0, 0.5]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_cross_map_lrn2d_matches_torch(n, c, h, w, size, alpha, beta, k, dtype, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    tm = torch.nn.CrossMapLRN2d(size, alpha, beta, k)
    fm = nn.CrossMapLRN2d(size, alpha, beta, k)
    assert repr(fm) == repr(tm)
    tx, fx = _pair(x, grad=True)
    ty, fy = tm(tx), fm(fx)
    assert str(fy.dtype) == str(ty.dtype) and tuple(fy.shape) == tuple(ty.shape)
    assert _name(fy) == _name(ty) == "CrossMapLRN2dBackward"
    _close(_np(fy), _np(ty), **_tol(dtype))
    g = rng.standard_normal(x.shape).astype(dtype)
    ty.backward(torch.tensor(g))
    fy.backward(ft.tensor(g))
    _close(fx.grad.numpy(), tx.grad.numpy(), **_tol(dtype))
    with ft.no_grad():
        assert fm(fx).grad_fn is None


@needs_torch
@pytest.mark.parametrize(("size", "shape", "dtype"), [
    (1, (1, 3, 2, 2), "float32"), (1, (2, 1, 1, 2), "float32"), (0, (1, 3, 2, 2), "float32"),
    (-1, (1, 1, 2, 2), "float32"), (-1, (1, 3, 2, 2), "float32"), (-2, (1, 5, 2, 2), "float32"),
    (-3, (1, 3, 2, 2), "float32"), (3, (1, 0, 2, 2), "float32"), (3, (1, 3, 2), "float32"),
    (3, (1, 3, 2, 2), "int64"), (2, (1, 3, 2, 2, 1), "float64"),
])
def test_cross_map_lrn2d_errors_match_torch(size, shape, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)

    def run(T, mod):
        t = T.tensor(x, requires_grad=dtype != "int64")
        y = mod.CrossMapLRN2d(size, 0.1, 0.5, 1.0)(t)
        y.backward(T.ones_like(y))
        return y

    expected = _error(lambda: run(torch, torch.nn))
    assert expected is not None
    assert _error(lambda: run(ft, nn)) == expected


@needs_torch
def test_cross_map_lrn2d_odd_sizes_forward_matches_torch():
    """Sizes PyTorch's forward accepts but its backward refuses: the forward values."""
    x = np.random.default_rng(3).standard_normal((2, 4, 2, 3))
    for size in (1, -1, -2):
        ty = torch.nn.CrossMapLRN2d(size, 0.2, 0.6, 1.5)(torch.tensor(x))
        fy = nn.CrossMapLRN2d(size, 0.2, 0.6, 1.5)(ft.tensor(x))
        _close(fy.numpy(), ty.numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------- linear_cross_entropy


def _lce_case(rng, n, f, c, out_features, bias, use_weight, ignore_mode, probs, unbatched,
              dtype):
    """Arrays and keyword arguments of one linear_cross_entropy call."""
    x = rng.standard_normal((f,) if unbatched else (n, f)).astype(dtype)
    lw = rng.standard_normal((c, *out_features, f)).astype(dtype)
    b = rng.standard_normal((c, *out_features)).astype(dtype) if bias else None
    w = rng.uniform(0.5, 2.0, c).astype(dtype) if use_weight else None
    batch = () if unbatched else (n,)
    ignore_index = None
    if probs:
        t = rng.dirichlet(np.ones(c), (*batch, *out_features)).astype(dtype)
        t = np.moveaxis(t, -1, len(batch))
    else:
        t = rng.integers(0, c, (*batch, *out_features))
        if ignore_mode == "default" and t.size:
            t.reshape(-1)[0] = -100
        elif ignore_mode == "class":
            ignore_index = int(rng.integers(0, c))
    return x, lw, b, w, t, ignore_index


def _lce_run(T, mod_f, arrays, grad=True, **kw):
    x, lw, b, w, t, ignore_index = arrays
    tx, tlw = T.tensor(x, requires_grad=grad), T.tensor(lw, requires_grad=grad)
    tb = None if b is None else T.tensor(b, requires_grad=grad)
    tw = None if w is None else T.tensor(w)
    out = mod_f.linear_cross_entropy(tx, tlw, T.tensor(t), linear_bias=tb, weight=tw,
                                     ignore_index=ignore_index, **kw)
    return out, [v for v in (tx, tlw, tb) if v is not None]


def _compare_lce(rng, arrays, dtype, check_name=True, grads=True, **kw):
    tout, tleaves = _lce_run(torch, torch.nn.functional, arrays, **kw)
    with np.errstate(divide="ignore", invalid="ignore"):  # (funcgrad warns on 0 / 0)
        fout, fleaves = _lce_run(ft, F, arrays, **kw)
    assert tuple(fout.shape) == tuple(tout.shape) and str(fout.dtype) == str(tout.dtype)
    if check_name:
        assert _name(fout) == _name(tout)
    _close(_np(fout), _np(tout), **_tol(dtype))
    if not grads:
        return
    g = rng.standard_normal(tuple(tout.shape)).astype(dtype)
    (tout * torch.tensor(g)).sum().backward()
    (fout * ft.tensor(g)).sum().backward()
    for a, b in zip(fleaves, tleaves):
        assert str(a.grad.dtype) == str(b.grad.dtype)
        _close(a.grad.numpy(), b.grad.numpy(), **_tol(dtype))


@needs_torch
@SETTINGS
@given(n=st.integers(1, 4), f=st.integers(1, 4), c=st.integers(2, 5),
       out_features=st.sampled_from([(), (), (2,), (1, 2)]), bias=st.booleans(),
       use_weight=st.booleans(), ignore_mode=st.sampled_from(["none", "default", "class"]),
       smoothing=st.sampled_from([0.0, 0.0, 0.3, 1.0, -0.2]), probs=st.booleans(),
       unbatched=st.booleans(), reduction=st.sampled_from(["mean", "sum", "none"]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_linear_cross_entropy_reference_matches_torch(n, f, c, out_features, bias,
                                                      use_weight, ignore_mode, smoothing,
                                                      probs, unbatched, reduction, dtype,
                                                      seed):
    rng = np.random.default_rng(seed)
    unbatched = unbatched and not out_features
    arrays = _lce_case(rng, n, f, c, out_features, bias, use_weight, ignore_mode, probs,
                       unbatched, dtype)
    t, ignore_index = arrays[4], arrays[5]
    all_ignored = not probs and np.all(t == (-100 if ignore_index is None else ignore_index))
    # funcgrad's F.cross_entropy names the K-dimensional and probability nodes
    # differently from PyTorch (NllLossBackward0 for NllLoss2DBackward0...), and its
    # "mean" gradient over all-ignored targets is NaN where PyTorch's is 0: the values
    # are compared there, the names and gradients elsewhere.
    _compare_lce(rng, arrays, dtype, check_name=not (probs or out_features),
                 grads=not (all_ignored and reduction == "mean"), reduction=reduction,
                 label_smoothing=smoothing)


@needs_torch
@SETTINGS
@given(n=st.integers(0, 6), f=st.integers(1, 4), c=st.integers(2, 6), bias=st.booleans(),
       use_weight=st.booleans(), ignore_mode=st.sampled_from(["none", "default", "class"]),
       unbatched=st.booleans(), reduction=st.sampled_from(["mean", "sum", "none"]),
       chunk=st.integers(0, 6), retain=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**16))
def test_linear_cross_entropy_chunked_matches_torch(n, f, c, bias, use_weight, ignore_mode,
                                                    unbatched, reduction, chunk, retain,
                                                    dtype, seed):
    rng = np.random.default_rng(seed)
    unbatched = unbatched and n > 0
    arrays = _lce_case(rng, n, f, c, (), bias, use_weight, ignore_mode, False, unbatched,
                       dtype)
    kw = {"batch_chunk_size": chunk} if chunk else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the chunked path takes these: no fallback warning
        topt = torch.nn.LinearCrossEntropyOptions(allow_retain_graph=retain, **kw)
        fopt = nn.LinearCrossEntropyOptions(allow_retain_graph=retain, **kw)
        tout, tleaves = _lce_run(torch, torch.nn.functional, arrays, reduction=reduction,
                                 options=topt)
        fout, fleaves = _lce_run(ft, F, arrays, reduction=reduction, options=fopt)
    assert tuple(fout.shape) == tuple(tout.shape) and str(fout.dtype) == str(tout.dtype)
    assert _name(fout) == _name(tout)
    _close(_np(fout), _np(tout), **_tol(dtype))
    g = rng.standard_normal(tuple(tout.shape)).astype(dtype)
    (tout * torch.tensor(g)).sum().backward()
    (fout * ft.tensor(g)).sum().backward()
    for a, b in zip(fleaves, tleaves):
        _close(a.grad.numpy(), b.grad.numpy(), **_tol(dtype))


@needs_torch
@FEW
@given(dtype=st.sampled_from(["bfloat16", "float16"]), reduction=st.sampled_from(
    ["mean", "sum", "none"]), bias=st.booleans(), seed=st.integers(0, 2**16))
def test_linear_cross_entropy_chunked_half_precision_matches_torch(dtype, reduction, bias,
                                                                   seed):
    rng = np.random.default_rng(seed)
    x, lw, b = (rng.standard_normal(s).astype(np.float32) for s in ((6, 5), (7, 5), (7,)))
    t = rng.integers(0, 7, 6)
    outs = []
    for T, mod_f in ((torch, torch.nn.functional), (ft, F)):
        half = getattr(T, dtype)
        tx, tlw = T.tensor(x).to(half).requires_grad_(), T.tensor(lw).to(half).requires_grad_()
        tb = T.tensor(b).to(half).requires_grad_() if bias else None
        out = mod_f.linear_cross_entropy(tx, tlw, T.tensor(t), linear_bias=tb,
                                         reduction=reduction,
                                         options=T.nn.LinearCrossEntropyOptions())
        out.float().sum().backward()
        outs.append((out, [v for v in (tx, tlw, tb) if v is not None]))
    (tout, tleaves), (fout, fleaves) = outs
    assert str(fout.dtype) == str(tout.dtype) == f"torch.{dtype}"
    _close(_np(fout), _np(tout), rtol=2e-2, atol=2e-2)
    for a, b in zip(fleaves, tleaves):
        assert str(a.grad.dtype) == str(b.grad.dtype)
        _close(_np(a.grad), _np(b.grad), rtol=3e-2, atol=1e-2)


def _lce(T, *args, **kw):
    return T.nn.functional.linear_cross_entropy(*args, **kw)


def _opts(T, **kw):
    return T.nn.LinearCrossEntropyOptions(**kw)


def _ix(T, *v, dtype="int64"):
    return T.tensor(list(v), dtype=getattr(T, dtype))


LCE_ERRORS = {
    "input 3-d": lambda T, x, W, b: _lce(T, x[None], W, _ix(T, 0, 1, 2)),
    "weight 1-d": lambda T, x, W, b: _lce(T, x, W[0], _ix(T, 0, 1, 2)),
    "in_features": lambda T, x, W, b: _lce(T, x, W[:, :2], _ix(T, 0, 1, 2)),
    "bias shape": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2), linear_bias=b[:2]),
    "K unbatched": lambda T, x, W, b: _lce(T, x[0], W.reshape(2, 2, 3), _ix(T, 0, 1)),
    "probs ignore": lambda T, x, W, b: _lce(T, x, W, T.ones(3, 4) / 4, ignore_index=1),
    "smoothing > 1": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2), label_smoothing=1.5),
    "weight size": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2), weight=T.ones(3)),
    "weight size probs": lambda T, x, W, b: _lce(T, x, W, T.ones(3, 4) / 4,
                                                 weight=T.ones(5)),
    "batch": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1), weight=T.ones(3)),
    "target oob": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 4, 2)),
    "reduction": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2), reduction="avg"),
    "int32 target": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2, dtype="int32")),
    "int16 target weight": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2, dtype="int16"),
                                                   weight=T.ones(2)),
    "int32 target batch": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, dtype="int32")),
    "smoothing weight": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2), weight=T.ones(2),
                                                label_smoothing=2.0),
    "smoothing weight probs": lambda T, x, W, b: _lce(T, x, W, T.ones(3, 4) / 4,
                                                      weight=T.ones(2), label_smoothing=2.0),
    "bool target": lambda T, x, W, b: _lce(T, x, W, _ix(T, 1, 0, 1, dtype="bool")),
    "dtypes": lambda T, x, W, b: _lce(T, x.double(), W, _ix(T, 0, 1, 2)),
    "dtypes bias": lambda T, x, W, b: _lce(T, x.double(), W, _ix(T, 0, 1, 2), linear_bias=b),
    # the chunked path's own checks, met where PyTorch's chunk loop meets them
    "chunk oob": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 4), options=_opts(T)),
    "chunk negative": lambda T, x, W, b: _lce(T, x, W, _ix(T, -1, 1, 2), options=_opts(T)),
    "chunk weight index": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 3, 2), weight=T.ones(3),
                                                  options=_opts(T)),
    "chunk short target": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1),
                                                  options=_opts(T, batch_chunk_size=1)),
    "chunk 0-d target": lambda T, x, W, b: _lce(T, x, W, T.tensor(1), options=_opts(T)),
    "chunk dtypes": lambda T, x, W, b: _lce(T, x.double(), W, _ix(T, 0, 1, 2),
                                            options=_opts(T)),
    "chunk acc dtype": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2),
                                               options=_opts(T, acc_dtype=T.float16)),
    "chunk conflict": lambda T, x, W, b: _lce(T, x, W, _ix(T, 0, 1, 2), options=_opts(
        T, batch_chunk_size=1, chunking_method="aspect_ratio")),
    "options policy": lambda T, x, W, b: _opts(T, acc_policy="fast"),
    "options method": lambda T, x, W, b: _opts(T, chunking_method="aspect_ratio:0"),
    "options method name": lambda T, x, W, b: _opts(T, chunking_method="square"),
    "options chunk": lambda T, x, W, b: _opts(T, batch_chunk_size=0),
    "options acc": lambda T, x, W, b: _opts(T, acc_dtype=T.int32),
    "module weight": lambda T, x, W, b: T.nn.LinearCrossEntropyLoss(3, 4, weight=T.ones(3)),
    "module smoothing": lambda T, x, W, b: T.nn.LinearCrossEntropyLoss(3, 4,
                                                                       label_smoothing=-0.5),
}


@needs_torch
@pytest.mark.parametrize("case", sorted(LCE_ERRORS))
def test_linear_cross_entropy_errors_match_torch(case):
    fn = LCE_ERRORS[case]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((3, 3), (4, 3), (4,))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _error(lambda: fn(torch, *map(torch.tensor, arrays)))
        got = _error(lambda: fn(ft, *map(ft.tensor, arrays)))
    assert expected is not None
    assert got == expected


@needs_torch
@pytest.mark.parametrize("kw", [{"label_smoothing": 0.1}, {"reduction": "avg"},
                                {"probs": True}, {"out_features": (2,)},
                                {"target_dtype": "uint8"}])
def test_linear_cross_entropy_options_fallback_warns_as_torch(kw):
    kw = dict(kw)
    probs, out_features = kw.pop("probs", False), kw.pop("out_features", ())
    target_dtype = kw.pop("target_dtype", "int64")
    rng = np.random.default_rng(2)
    x, lw = rng.standard_normal((3, 2)), rng.standard_normal((4, *out_features, 2))
    t = rng.dirichlet(np.ones(4), 3) if probs else \
        rng.integers(0, 4, (3, *out_features)).astype(target_dtype)
    results = []
    for T, mod_f in ((torch, torch.nn.functional), (ft, F)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            err = _error(lambda: mod_f.linear_cross_entropy(  # noqa: B023
                T.tensor(x), T.tensor(lw), T.tensor(t),  # noqa: B023
                options=T.nn.LinearCrossEntropyOptions(), **kw))  # noqa: B023
        results.append((err, [(w.category.__name__, str(w.message)) for w in caught]))
    assert results[1] == results[0]
    assert results[0][1]


@needs_torch
@pytest.mark.parametrize("retain", [False, True])
def test_linear_cross_entropy_chunked_second_backward_as_torch(retain):
    rng = np.random.default_rng(4)
    x, lw = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    t = np.array([0, 4, 2, 1])
    results = []
    for T, mod_f in ((torch, torch.nn.functional), (ft, F)):
        tx = T.tensor(x, requires_grad=True)
        out = mod_f.linear_cross_entropy(
            tx, T.tensor(lw), T.tensor(t),
            options=T.nn.LinearCrossEntropyOptions(allow_retain_graph=retain))
        out.backward(retain_graph=True)
        results.append((_error(lambda: out.backward()), tx.grad.numpy()))  # noqa: B023
    assert results[1][0] == results[0][0]
    _close(results[1][1], results[0][1], rtol=1e-9, atol=1e-12)


@needs_torch
def test_linear_cross_entropy_options_repr_and_resolution():
    for kw in ({}, {"batch_chunk_size": 8, "chunking_method": None},
               {"acc_dtype": "float32", "acc_policy": "balanced", "allow_retain_graph": True}):
        tkw = {k: getattr(torch, v) if k == "acc_dtype" else v for k, v in kw.items()}
        fkw = {k: getattr(ft, v) if k == "acc_dtype" else v for k, v in kw.items()}
        topt, fopt = torch.nn.LinearCrossEntropyOptions(**tkw), nn.LinearCrossEntropyOptions(
            **fkw)
        assert repr(fopt) == repr(topt)
        for dtype in ("float32", "bfloat16", "float64"):
            for shape in ((1000, 64, 32000), (5, 3, 4), (17, 8, 8)):
                ta = topt._adjust(*shape, getattr(torch, dtype), torch.device("cpu"))
                fa = fopt._adjust(*shape, getattr(ft, dtype), ft.device("cpu"))
                assert repr(fa) == repr(ta)
    with pytest.raises(AttributeError):
        nn.LinearCrossEntropyOptions().acc_policy = "compact"  # frozen, as PyTorch's


@needs_torch
@SETTINGS
@given(out_features=st.sampled_from([(), (2,), (2, 1)]), bias=st.booleans(),
       use_weight=st.booleans(), smoothing=st.sampled_from([0.0, 0.2]),
       chunked=st.booleans(), reduction=st.sampled_from(["mean", "sum", "none"]),
       ignore_index=st.sampled_from([None, 1]), seed=st.integers(0, 2**16))
def test_linear_cross_entropy_loss_module_matches_torch(out_features, bias, use_weight,
                                                        smoothing, chunked, reduction,
                                                        ignore_index, seed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 2, 4) if use_weight else None
    mods = []
    for T, mod in ((torch, torch.nn), (ft, nn)):
        mods.append(mod.LinearCrossEntropyLoss(
            3, 4, out_features=out_features, bias=bias, dtype=T.float64, reduction=reduction,
            weight=None if w is None else T.tensor(w), ignore_index=ignore_index,
            label_smoothing=smoothing,
            options=mod.LinearCrossEntropyOptions() if chunked else None))
    tm, fm = mods
    assert repr(fm) == repr(tm)
    state = {k: v.detach().numpy() for k, v in tm.state_dict().items()}
    assert list(state) == list(fm.state_dict())
    fm.load_state_dict({k: ft.tensor(v) for k, v in state.items()})
    x = rng.standard_normal((5, 3))
    t = rng.integers(0, 4, (5, *out_features))
    tx, fx = _pair(x, grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout, fout = tm(tx, torch.tensor(t)), fm(fx, ft.tensor(t))
    assert tuple(fout.shape) == tuple(tout.shape)
    if not out_features:
        assert _name(fout) == _name(tout)
    _close(_np(fout), _np(tout), rtol=1e-9, atol=1e-11)
    g = rng.standard_normal(tuple(tout.shape))
    (tout * torch.tensor(g)).sum().backward()
    (fout * ft.tensor(g)).sum().backward()
    _close(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (k, p), (k2, q) in zip(tm.named_parameters(), fm.named_parameters()):
        assert k == k2
        _close(q.grad.numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_linear_cross_entropy_gradients_against_finite_differences(chunked, reduction):
    rng = np.random.default_rng(5)
    x0, w0, b0 = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), \
        rng.standard_normal(5)
    t = ft.tensor([0, 4, 2, -100])
    cw = ft.tensor(rng.uniform(0.5, 2, 5))
    g = rng.standard_normal(4) if reduction == "none" else 1.0
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=3) if chunked else None

    def value(x, w, b):
        out = F.linear_cross_entropy(x, w, t, linear_bias=b, weight=cw, reduction=reduction,
                                     options=opts)
        return (out * ft.tensor(g)).sum()

    leaves = [ft.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
    value(*leaves).backward()
    arrays = [x0, w0, b0]
    for i, leaf in enumerate(leaves):
        def f(a, i=i):
            args = [ft.tensor(a if j == i else arrays[j]) for j in range(3)]
            return float(value(*args).item())

        _close(leaf.grad.numpy(), central_grad(f, arrays[i]), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------------ grouped_mm


def _offsets(rng, groups, total, full):
    cuts = np.sort(rng.integers(0, total + 1, groups))
    if full:
        cuts[-1] = total
    return cuts.astype(np.int32)


@needs_torch
@SETTINGS
@given(kind=st.sampled_from(["3x3", "2x3", "3x2", "2x2"]),
       dtype=st.sampled_from(["float32", "float32", "bfloat16"]), groups=st.integers(1, 3),
       m=st.integers(1, 2), k=st.integers(1, 2), n=st.integers(1, 2),
       col_major_b=st.booleans(), full=st.booleans(), seed=st.integers(0, 2**16))
def test_grouped_mm_matches_torch(kind, dtype, groups, m, k, n, col_major_b, full, seed):
    rng = np.random.default_rng(seed)
    align = 4 if dtype == "float32" else 8
    m, k, n = m * align, k * align, n * align
    total = {"2x3": m * groups, "3x2": n * groups, "2x2": k * groups}.get(kind, 0)
    a_shape = {"3x3": (groups, m, k), "2x3": (total, k), "3x2": (groups, m, k),
               "2x2": (m, total)}[kind]
    b_shape = {"3x3": (groups, k, n), "2x3": (groups, k, n), "3x2": (k, total),
               "2x2": (total, n)}[kind]
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    # a column-major mat_b (its transpose stored row-major)
    b_stored = np.ascontiguousarray(np.swapaxes(b, -1, -2)) if col_major_b else b
    offs = None if kind == "3x3" else _offsets(rng, groups, total, full)
    outs = []
    for T, mod_f in ((torch, torch.nn.functional), (ft, F)):
        ta = T.tensor(a).to(getattr(T, dtype)).requires_grad_()
        tbs = T.tensor(b_stored).to(getattr(T, dtype)).requires_grad_()
        tb = tbs.transpose(-1, -2) if col_major_b else tbs
        to = None if offs is None else T.tensor(offs, dtype=T.int32)
        outs.append((mod_f.grouped_mm(ta, tb, offs=to), ta, tbs))
    (tout, ta, tb), (fout, fa, fb) = outs
    assert tuple(fout.shape) == tuple(tout.shape) and str(fout.dtype) == str(tout.dtype)
    assert _name(fout) == _name(tout) == "GroupedMmBackward0"
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 2e-2, "atol": 5e-2}
    # PyTorch leaves what no group writes (past offs[-1]) uninitialized: compared where
    # written, and the gradients when every index is.
    covered = (slice(None),) if offs is None or kind == "2x2" else \
        (slice(0, int(offs.max(initial=0))),) if kind == "2x3" else \
        (slice(None), slice(0, int(offs.max(initial=0))))
    _close(_np(fout)[covered], _np(tout)[covered], **tol)
    if offs is None or full and np.all(np.diff(offs) >= 0):
        g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
        tout.backward(torch.tensor(g).to(tout.dtype))
        fout.backward(ft.tensor(g).to(fout.dtype))
        _close(_np(fa.grad), _np(ta.grad), **tol)
        _close(_np(fb.grad), _np(tb.grad), **tol)


GMM_ERRORS = [
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16, dtype=T.float64), T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(2, 16, 8, dtype=T.int64)),
    lambda T: T.nn.functional.grouped_mm(T.ones(16), T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(1, 2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 12), T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(2, 16, 5)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(2, 16, 16)[:, :, ::2]),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 18)[:, :, :16], T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(2, 16, 8),
                                         offs=T.tensor([1, 2], dtype=T.int32)),
    lambda T: T.nn.functional.grouped_mm(T.ones(8, 16), T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(8, 16), T.ones(2, 16, 8),
                                         offs=T.tensor([4, 8])),
    lambda T: T.nn.functional.grouped_mm(T.ones(8, 16), T.ones(2, 16, 8),
                                         offs=T.tensor([[4, 8]], dtype=T.int32)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(2, 16, 8),
                                         bias=T.zeros(8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16), T.ones(2, 16, 8),
                                         out_dtype=T.bfloat16),
    lambda T: T.nn.functional.grouped_mm(T.ones(8, 16), T.ones(3, 16, 8),
                                         offs=T.tensor([4, 8], dtype=T.int32)),
    lambda T: T.nn.functional.grouped_mm(T.ones(3, 8, 16), T.ones(16, 8),
                                         offs=T.tensor([4, 8], dtype=T.int32)),
    lambda T: T.nn.functional.grouped_mm(T.ones(3, 8, 16), T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 16, dtype=T.bfloat16),
                                         T.ones(2, 16, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(8, 16), T.ones(2, 16, 8, dtype=T.float16),
                                         offs=T.tensor([4, 8], dtype=T.int32)),
    lambda T: T.nn.functional.grouped_mm(T.ones(8, 16), T.ones(12, 8),
                                         offs=T.tensor([8, 16], dtype=T.int32)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 8, 0), T.ones(2, 0, 8)),
    lambda T: T.nn.functional.grouped_mm(T.ones(2, 1, 16), T.ones(2, 16, 1)),
]


@needs_torch
@pytest.mark.parametrize("case", range(len(GMM_ERRORS)))
def test_grouped_mm_errors_match_torch(case):
    expected = _error(lambda: GMM_ERRORS[case](torch))
    assert expected is not None
    assert _error(lambda: GMM_ERRORS[case](ft)) == expected


@needs_torch
def test_grouped_mm_accepted_oddities_match_torch():
    """Cases PyTorch's CPU path accepts: offsets past the end, decreasing, negative or
    none at all, a 2-D x 2-D product whose operands' inner sizes differ, and a mixed
    dtype with no group to compute."""
    rng = np.random.default_rng(6)
    cases = [
        ((12, 8), (3, 8, 4), [3, 9, 14]), ((12, 8), (3, 8, 4), [3, 9, 7]),
        ((12, 8), (3, 8, 4), [-4, 9, 12]), ((12, 8), (0, 8, 4), []),
        ((3, 4, 8), (8, 12), [4, 2, 12]), ((4, 16), (12, 8), [8, 12]),
        ((4, 12), (12, 8), [5, 3, 12]),
    ]
    for a_shape, b_shape, offs in cases:
        a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
        # (an empty tensor made by torch.tensor has zero strides, which grouped_mm
        # refuses; torch.zeros makes row-major ones)
        tb = torch.tensor(b, dtype=torch.float32) if b.size else torch.zeros(b_shape)
        tout = torch.nn.functional.grouped_mm(torch.tensor(a, dtype=torch.float32), tb,
                                              offs=torch.tensor(offs, dtype=torch.int32))
        fout = F.grouped_mm(ft.tensor(a, dtype=ft.float32), ft.tensor(b, dtype=ft.float32),
                            offs=ft.tensor(offs, dtype=ft.int32))
        assert tuple(fout.shape) == tuple(tout.shape)
        # what the groups write (the rest is uninitialized memory in PyTorch)
        written = np.zeros(tuple(tout.shape), bool)
        ax, size = (0, a_shape[0]) if len(a_shape) == 2 and len(b_shape) == 3 else \
            (1, b_shape[1]) if len(a_shape) == 3 else (None, 0)
        if ax is None:
            written[:] = True
        else:
            start = 0
            for end in offs:
                s, e, _ = slice(start, end).indices(size)
                idx = [slice(None)] * 2
                idx[ax] = slice(s, max(s, e))
                written[tuple(idx)] = True
                start = end
        _close(fout.numpy()[written], tout.numpy()[written], rtol=1e-5, atol=1e-5)
    mixed = (ft.ones(8, 16), ft.ones(0, 16, 8, dtype=ft.bfloat16))
    assert tuple(F.grouped_mm(*mixed, offs=ft.tensor([], dtype=ft.int32)).shape) == (8, 8)


def test_grouped_mm_gradients_against_finite_differences():
    """grouped_mm is linear in each operand, so a large central difference is exact up
    to float32 rounding (PyTorch's grouped_mm takes no float64)."""
    rng = np.random.default_rng(7)
    a0 = rng.standard_normal((12, 8)).astype(np.float32)
    b0 = rng.standard_normal((3, 8, 4)).astype(np.float32)
    offs = ft.tensor([3, 3, 12], dtype=ft.int32)
    g = rng.standard_normal((12, 4))
    a, b = ft.tensor(a0, requires_grad=True), ft.tensor(b0, requires_grad=True)
    (F.grouped_mm(a, b, offs=offs) * ft.tensor(g, dtype=ft.float32)).sum().backward()

    def value(x, y):
        out = F.grouped_mm(ft.tensor(x.astype(np.float32)), ft.tensor(y.astype(np.float32)),
                           offs=offs)
        return float((out.double() * ft.tensor(g)).sum().item())

    _close(a.grad.numpy(), central_grad(lambda x: value(x, b0), a0.astype(float), eps=0.5),
           rtol=1e-4, atol=1e-4)
    _close(b.grad.numpy(), central_grad(lambda y: value(a0, y), b0.astype(float), eps=0.5),
           rtol=1e-4, atol=1e-4)
