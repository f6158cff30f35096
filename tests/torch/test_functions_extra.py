"""The top-level ``torch`` functions of funcgrad/torch/_functions_extra.py and
_rnn_functions.py, against PyTorch where it runs them (the SyncBatchNorm blocks are
CUDA-only in PyTorch: checked against ``nn.functional.batch_norm``'s math instead)."""

from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_grad as _fd_grad
from hypothesis import example, given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft


def _np(t):
    return t.detach().numpy()


def _both(f, *arrays):
    """``f`` applied to the arrays as funcgrad and as PyTorch tensors."""
    torch = pytest.importorskip("torch")
    return (f(ft, *[ft.tensor(a) for a in arrays]),
            f(torch, *[torch.tensor(a) for a in arrays]))


def _err(f):
    torch = pytest.importorskip("torch")
    got = []
    for lib in (ft, torch):
        try:
            f(lib)
        except Exception as e:  # noqa: BLE001
            got.append((type(e).__name__, str(e)))
        else:
            got.append(None)
    return got


# ---------------------------------------------------------------- batch norm blocks


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 4), c=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_sync_batch_norm_blocks_compose_to_batch_norm(n, c, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, c, 3))
    w, b, dy = rng.normal(size=c), rng.normal(size=c), rng.normal(size=x.shape)
    eps = 1e-5
    # Two "ranks": the halves of the batch.
    parts = [ft.tensor(x[:1]), ft.tensor(x[1:])]
    stats = [ft.batch_norm_stats(p, eps) for p in parts]
    means = ft.stack([s[0] for s in stats])
    invs = ft.stack([s[1] for s in stats])
    counts = ft.tensor([3.0, (n - 1) * 3.0], dtype=ft.float64)
    rm, rv = ft.zeros(c, dtype=ft.float64), ft.ones(c, dtype=ft.float64)
    mean, inv = ft.batch_norm_gather_stats_with_counts(ft.tensor(x), means, invs, rm, rv,
                                                       0.1, eps, counts)
    xt = ft.tensor(x, requires_grad=True)
    wt, bt = ft.tensor(w, requires_grad=True), ft.tensor(b, requires_grad=True)
    ref = ft.nn.functional.batch_norm(xt, None, None, wt, bt, True, 0.1, eps)
    out = ft.batch_norm_elemt(ft.tensor(x), ft.tensor(w), ft.tensor(b), mean, inv, eps)
    np.testing.assert_allclose(_np(out), _np(ref), atol=1e-10)
    np.testing.assert_allclose(_np(rm), 0.1 * x.mean(axis=(0, 2)), atol=1e-12)
    np.testing.assert_allclose(_np(rv), 0.9 + 0.1 * x.transpose(1, 0, 2).reshape(c, -1).var(
        axis=1, ddof=1), atol=1e-12)
    ref.backward(ft.tensor(dy))
    sum_dy, sum_dy_xmu, gw, gb = ft.batch_norm_backward_reduce(
        ft.tensor(dy), ft.tensor(x), mean, inv, ft.tensor(w), True, True, True)
    np.testing.assert_allclose(_np(gw), _np(wt.grad), atol=1e-10)
    np.testing.assert_allclose(_np(gb), _np(bt.grad), atol=1e-10)
    gx = ft.batch_norm_backward_elemt(ft.tensor(dy), ft.tensor(x), mean, inv, ft.tensor(w),
                                      sum_dy, sum_dy_xmu,
                                      ft.tensor([3, (n - 1) * 3], dtype=ft.int32))
    np.testing.assert_allclose(_np(gx), _np(xt.grad), atol=1e-9)
    g = ft.batch_norm_gather_stats(ft.tensor(x), means[:1], invs[:1], None, None, 0.1, eps, 3)
    np.testing.assert_allclose(_np(g[0]), _np(means[0]), atol=1e-12)


def test_batch_norm_blocks_dtypes_and_flags():
    x = ft.ones(2, 3, dtype=ft.float16)
    m, s = ft.batch_norm_stats(x, 0.0)
    assert m.dtype == s.dtype == ft.float32 and s.tolist() == [0.0] * 3
    r = ft.batch_norm_backward_reduce(x, x, m, s, None, False, False, True)
    assert r[0] is None and r[1] is None and r[2] is None and r[3].dtype == ft.float32
    xg = ft.ones(2, 3, requires_grad=True)
    assert ft.batch_norm_stats(xg, 1e-5)[0].grad_fn is None


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 4), seed=st.integers(0, 2**16),
       dt=st.sampled_from(["float32", "float64"]))
def test_batch_norm_update_stats_matches_torch(n, seed, dt):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(seed).normal(size=(n, 3, 2)).astype(dt)
    outs = []
    for lib in (ft, torch):
        rm, rv = lib.zeros(3, dtype=getattr(lib, dt)), lib.ones(3, dtype=getattr(lib, dt))
        m, v = lib.batch_norm_update_stats(lib.tensor(x), rm, rv, 0.1)
        outs.append([a.numpy() for a in (m, v, rm, rv)] + [str(m.dtype)])
    for a, b in zip(outs[0][:4], outs[1][:4]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert outs[0][4] == outs[1][4]


def test_batch_norm_update_stats_errors_match_torch():
    a, b = _err(lambda lib: lib.batch_norm_update_stats(lib.ones(2, 3, dtype=lib.int64),
                                                        None, None, 0.1))
    assert a == b
    a, b = _err(lambda lib: lib.batch_norm_update_stats(lib.ones(0, 3), None, None, 0.1))
    assert a == b


# ---------------------------------------------------------------- raw nn operations


def test_max_pool1d_with_indices_matches_torch():
    x = np.random.default_rng(0).normal(size=(2, 3, 7)).astype(np.float32)
    for args in [(2,), (3, 2, 1, 1, True), (2, [], 0)]:
        got, want = _both(lambda lib, t, a=args: lib.max_pool1d_with_indices(t, *a), x)
        np.testing.assert_allclose(_np(got[0]), want[0].numpy())
        assert got[1].tolist() == want[1].tolist()


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("pad", [None, 2])
@pytest.mark.parametrize("offsets,last", [([0, 2], False), ([0, 2, 2], False),
                                          ([0, 1, 3], True)])
def test_embedding_bag_matches_torch(mode, pad, offsets, last):
    torch = pytest.importorskip("torch")
    w = np.random.default_rng(1).normal(size=(5, 3))
    idx = np.array([0, 2, 4, 1, 3])
    res = []
    for lib in (ft, torch):
        wt = lib.tensor(w, requires_grad=True)
        out = lib.embedding_bag(wt, lib.tensor(idx), lib.tensor(offsets), False, mode, False,
                                None, last, pad)
        (out[0] * lib.arange(out[0].numel(), dtype=lib.float64).reshape(out[0].shape)
         ).sum().backward()
        res.append((out, wt.grad.numpy(), out[0].grad_fn.name()))
    (a, ga, na), (b, gb, nb) = res
    np.testing.assert_allclose(_np(a[0]), b[0].detach().numpy(), atol=1e-12)
    for k in (1, 2, 3):
        assert a[k].tolist() == b[k].tolist() and a[k].dtype == ft.int64
    np.testing.assert_allclose(ga, gb, atol=1e-12)
    assert na == nb


def test_embedding_bag_per_sample_weights_matches_torch():
    w = np.random.default_rng(2).normal(size=(5, 3))
    got, want = _both(lambda lib, wt, i, o, p: lib.embedding_bag(wt, i, o, False, 0, False, p),
                      w, np.array([0, 2, 4, 1]), np.array([0, 2]), np.array([0.5, 1, 2, 3]))
    np.testing.assert_allclose(_np(got[0]), want[0].numpy(), atol=1e-12)


def test_embedding_renorm_matches_torch():
    w = np.random.default_rng(3).normal(size=(5, 3)) * 3
    got, want = _both(lambda lib, t, i: (lib.embedding_renorm_(t, i, 1.0, 2.0), t)[1], w,
                      np.array([0, 1, 1, 3]))
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("interp", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_2d_3d_match_torch(interp, padding):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    x, g = rng.normal(size=(1, 2, 3, 4)), rng.uniform(-1.2, 1.2, size=(1, 2, 2, 2))
    res = []
    for lib in (ft, torch):
        xt = lib.tensor(x, requires_grad=True)
        out = lib.grid_sampler_2d(xt, lib.tensor(g), interp, padding, True)
        out.sum().backward()
        res.append((out.detach().numpy(), xt.grad.numpy(), out.grad_fn.name()))
    np.testing.assert_allclose(res[0][0], res[1][0], atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], atol=1e-10)
    assert res[0][2] == res[1][2]
    if interp == 2:
        a, b = _err(lambda lib: lib.grid_sampler_3d(lib.ones(1, 1, 2, 2, 2),
                                                    lib.zeros(1, 1, 1, 1, 3), 2, 0, True))
        assert a == b
        return
    x3, g3 = rng.normal(size=(1, 2, 2, 3, 4)), rng.uniform(-1, 1, size=(1, 2, 2, 2, 3))
    got, want = _both(lambda lib, a, b: lib.grid_sampler_3d(a, b, interp, padding, False),
                      x3, g3)
    np.testing.assert_allclose(_np(got), want.numpy(), atol=1e-10)


def test_grid_sampler_dimension_errors_match_torch():
    for f in [lambda lib: lib.grid_sampler_2d(lib.ones(1, 1, 1, 2, 2),
                                              lib.zeros(1, 1, 1, 2), 0, 0, True),
              lambda lib: lib.grid_sampler_3d(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2),
                                              0, 0, True)]:
        a, b = _err(f)
        assert a == b


@pytest.mark.parametrize("p,dim", [(2, 0), (2, 1), (3, -1), (1, 1), (2, 2), (2, -3)])
def test_norm_except_dim_matches_torch(p, dim):
    x = np.random.default_rng(5).normal(size=(2, 3, 4))
    got, want = _both(lambda lib, t: lib.norm_except_dim(t, p, dim), x)
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-12)
    assert tuple(got.shape) == tuple(want.shape)


def test_norm_except_dim_gradient_and_errors():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(6).normal(size=(3, 4))
    xs = [ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)]
    for lib, t in zip((ft, torch), xs):
        out = lib.norm_except_dim(t, 2, 0)
        assert out.grad_fn.name() == "ViewBackward0"
        out.sum().backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-12)
    a, b = _err(lambda lib: lib.norm_except_dim(lib.ones(2, 3), 2, 5))
    assert a == b
    a, b = _err(lambda lib: lib.norm_except_dim(lib.ones(2, 3), 1.5, 0))
    assert a == b


def test_native_channel_shuffle_matches_torch():
    x = np.arange(24.0).reshape(2, 6, 2)
    got, want = _both(lambda lib, t: lib.native_channel_shuffle(t, 3), x)
    assert got.tolist() == want.tolist()
    for f in [lambda lib: lib.native_channel_shuffle(lib.ones(1, 4, 2), 3),
              lambda lib: lib.native_channel_shuffle(lib.ones(1, 4, 2), 0),
              lambda lib: lib.native_channel_shuffle(lib.ones(4, 2), 2)]:
        a, b = _err(f)
        assert a == b


def test_empty_permuted_matches_torch():
    torch = pytest.importorskip("torch")
    for size, perm in [((2, 3, 4), (0, 2, 1)), ((2, 3, 4), (2, 0, 1)), ((5,), (0,)),
                       ((2, 0, 3), (1, 2, 0))]:
        a, b = ft.empty_permuted(size, perm), torch.empty_permuted(size, perm)
        assert a.stride() == b.stride() and tuple(a.shape) == tuple(b.shape)
        assert a.is_contiguous() == b.is_contiguous()
    x = ft.empty_permuted((2, 3), (1, 0), dtype=ft.int64, requires_grad=False)
    assert x.dtype == ft.int64
    for f in [lambda lib: lib.empty_permuted((2, 3, 4), (0, 1)),
              lambda lib: lib.empty_permuted((2, 3), (0, 0))]:
        a, b = _err(f)
        assert a == b


@settings(max_examples=10, deadline=None)
@given(t=st.integers(2, 6), k=st.integers(1, 3), pad=st.integers(0, 2),
       seed=st.integers(0, 2**16))
def test_conv_tbc_matches_torch_with_gradients(t, k, pad, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    x, w, b = rng.normal(size=(t, 2, 3)), rng.normal(size=(k, 3, 4)), rng.normal(size=4)
    res = []
    for lib in (ft, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = lib.conv_tbc(*ts, pad)
        if out.numel():
            (out * out).sum().backward()
        res.append([out.detach().numpy(), out.grad_fn.name()] +
                   [None if a.grad is None else a.grad.numpy() for a in ts])
    np.testing.assert_allclose(res[0][0], res[1][0], atol=1e-10)
    assert res[0][1] == res[1][1]
    for a, b_ in zip(res[0][2:], res[1][2:]):
        if b_ is not None:
            np.testing.assert_allclose(a, b_, atol=1e-9)
    fd = _fd_grad(lambda v: float(np.sum(_np(ft.conv_tbc(ft.tensor(v), ft.tensor(w),
                                                          ft.tensor(b), pad)) ** 2)), x)
    if res[0][2] is not None:
        np.testing.assert_allclose(res[0][2], fd, rtol=1e-5, atol=1e-6)


def test_conv_tbc_errors_match_torch():
    for shapes in [((5, 2), (3, 2, 4), (4,)), ((5, 2, 2), (3, 2), (4,)),
                   ((5, 2, 2), (3, 2, 4), (4, 1)), ((5, 2, 3), (3, 2, 4), (4,)),
                   ((5, 2, 2), (3, 2, 4), (3,))]:
        a, b = _err(lambda lib, s=shapes: lib.conv_tbc(*[lib.ones(*z) for z in s]))
        assert a == b


# ----------------------------------------------------------------- segment_reduce


@settings(max_examples=15, deadline=None)
# Empty data (a randomized run found max of it raising instead of giving -inf).
@example(lengths=[0], reduce="max", initial=None, use_offsets=False, seed=0)
@example(lengths=[0, 2], reduce="min", initial=None, use_offsets=True, seed=1)
@given(lengths=st.lists(st.integers(0, 3), min_size=1, max_size=4),
       reduce=st.sampled_from(["sum", "mean", "max", "min", "prod", "amax"]),
       initial=st.sampled_from([None, 1.5]), use_offsets=st.booleans(),
       seed=st.integers(0, 2**16))
def test_segment_reduce_matches_torch_with_gradients(lengths, reduce, initial, use_offsets,
                                                     seed):
    torch = pytest.importorskip("torch")
    n = sum(lengths)
    x = np.random.default_rng(seed).normal(size=(n, 2))
    res = []
    for lib in (ft, torch):
        xt = lib.tensor(x, requires_grad=True)
        kw = {"offsets": lib.tensor(np.concatenate([[0], np.cumsum(lengths)]))} \
            if use_offsets else {"lengths": lib.tensor(lengths)}
        out = lib.segment_reduce(xt, reduce, initial=initial, **kw)
        finite = lib.where(out.isfinite(), out, lib.zeros_like(out))
        if n:
            (finite * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)
             ).sum().backward()
        res.append((out.detach().numpy(), None if xt.grad is None else xt.grad.numpy(),
                    out.grad_fn.name()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    if res[1][1] is not None:
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)
    assert res[0][2] == res[1][2]


def test_segment_reduce_axis_and_gradient_by_finite_differences():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(7).normal(size=(2, 5, 3))
    lengths = np.array([[2, 3], [1, 4]])
    got, want = _both(lambda lib, t, ln: lib.segment_reduce(t, "prod", lengths=ln, axis=1),
                      x, lengths)
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-12)
    xt = ft.tensor(x, requires_grad=True)
    ft.segment_reduce(xt, "prod", lengths=ft.tensor(lengths), axis=1).sum().backward()
    fd = _fd_grad(lambda v: float(_np(ft.segment_reduce(
        ft.tensor(v), "prod", lengths=ft.tensor(lengths), axis=1)).sum()), x)
    np.testing.assert_allclose(xt.grad.numpy(), fd, rtol=1e-6, atol=1e-8)
    del torch


def test_segment_reduce_errors_match_torch():
    d = [1.0, 2.0, 3.0, 4.0, 5.0]
    for f in [lambda lib: lib.segment_reduce(lib.tensor(d), "sum",
                                             lengths=lib.tensor([2, 2])),
              lambda lib: lib.segment_reduce(lib.tensor(d), "foo", lengths=lib.tensor([5])),
              lambda lib: lib.segment_reduce(lib.tensor(d), "sum"),
              lambda lib: lib.segment_reduce(lib.tensor(d), "sum",
                                             indices=lib.tensor([0, 0, 1, 1, 1])),
              lambda lib: lib.segment_reduce(lib.tensor(d), "sum",
                                             lengths=lib.tensor([-1, 6])),
              lambda lib: lib.segment_reduce(lib.ones(2, 3), "sum", lengths=lib.tensor([1, 2]),
                                             axis=1),
              lambda lib: lib.segment_reduce(lib.tensor(d), "sum",
                                             lengths=lib.tensor([2.0, 3.0]))]:
        a, b = _err(f)
        assert a == b


# --------------------------------------------------------------------- while_loop


def test_while_loop_matches_torch_with_gradient():
    torch = pytest.importorskip("torch")
    x = np.array([0.3, -1.2])
    res = []
    for lib in (ft, torch):
        xt = lib.tensor(x, requires_grad=True)
        i, y = lib.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v.sin() * 2),
                              (lib.tensor(0), xt))
        y.sum().backward()
        res.append((i.item(), y.detach().numpy(), xt.grad.numpy(), y.grad_fn.name()))
    assert res[0][0] == res[1][0] == 3 and res[0][3] == res[1][3]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)
    np.testing.assert_allclose(res[0][2], res[1][2], rtol=1e-12)


def test_while_loop_structures_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ft, torch):
        n, y = lib.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2),
                              (0, lib.tensor([1.0])))
        assert n == 3 and type(n) is int and y.tolist() == [8.0]
        d = lib.while_loop(lambda d: d["a"] < 3, lambda d: {"a": d["a"] + 1},
                           ({"a": lib.tensor(0)},))
        assert list(d) == ["a"] and d["a"].item() == 3
        z = lib.while_loop(lambda v: v.sum() > 10, lambda v: (v * 2,), (lib.tensor([1.0]),))
        assert isinstance(z, tuple) and z[0].tolist() == [1.0]
    a, b = _err(lambda lib: lib.while_loop(1, lambda i: i, (lib.tensor(0),)))
    assert a == b


def test_while_loop_rejects_mismatched_body_and_works_under_compile():
    with pytest.raises(RuntimeError, match="same metadata"):
        ft.while_loop(lambda v: v.sum() < 10, lambda v: (ft.cat([v, v]),),
                      (ft.tensor([1.0, 2.0]),))
    f = ft.compile(lambda v: ft.while_loop(lambda v: v.sum() < 10, lambda v: (v * 2,), (v,)))
    assert f(ft.tensor([1.0, 2.0]))[0].tolist() == [4.0, 8.0]


# ------------------------------------------------------------------ RNN functions


def _rnn_case(torch, mode, layers, bidirectional, proj=0):
    torch.manual_seed(0)
    kw = {"num_layers": layers, "bidirectional": bidirectional, "dtype": torch.float64}
    if mode == "lstm":
        return torch.nn.LSTM(3, 4, proj_size=proj, **kw)
    if mode == "gru":
        return torch.nn.GRU(3, 4, **kw)
    return torch.nn.RNN(3, 4, nonlinearity=mode.split("_")[1], **kw)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers,bidirectional,batch_first",
                         [(1, False, False), (2, True, False), (1, True, True)])
def test_rnn_functions_match_torch(mode, layers, bidirectional, batch_first):
    torch = pytest.importorskip("torch")
    m = _rnn_case(torch, mode, layers, bidirectional)
    params = [p.detach().numpy() for p in m._flat_weights]
    rng = np.random.default_rng(8)
    x = rng.normal(size=(5, 2, 3))
    if batch_first:
        x = x.transpose(1, 0, 2).copy()
    h = rng.normal(size=(layers * (2 if bidirectional else 1), 2, 4))
    res = []
    for lib in (ft, torch):
        xt = lib.tensor(x, requires_grad=True)
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        hx = (lib.tensor(h), lib.tensor(h * 0.5)) if mode == "lstm" else lib.tensor(h)
        outs = getattr(lib, mode)(xt, hx, ps, True, layers, 0.0, False, bidirectional,
                                  batch_first)
        sum(o.sum() for o in outs).backward()
        res.append(([o.detach().numpy() for o in outs], [o.grad_fn.name() for o in outs],
                    xt.grad.numpy(), [p.grad.numpy() for p in ps]))
    (oa, na, ga, pa), (ob, nb, gb, pb) = res
    for a, b in zip(oa, ob):
        np.testing.assert_allclose(a, b, atol=1e-10)
    assert na == nb
    np.testing.assert_allclose(ga, gb, atol=1e-10)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(a, b, atol=1e-10)


def test_lstm_with_projection_and_no_biases_match_torch():
    torch = pytest.importorskip("torch")
    m = _rnn_case(torch, "lstm", 1, False, proj=2)
    x = np.random.default_rng(9).normal(size=(4, 2, 3))
    got, want = [], []
    g = torch.nn.GRU(3, 4, bias=False, dtype=torch.float64)
    for lib, sink in ((ft, got), (torch, want)):
        ps = [lib.tensor(p.detach().numpy()) for p in m._flat_weights]
        hx = (lib.zeros(1, 2, 2, dtype=lib.float64), lib.zeros(1, 2, 4, dtype=lib.float64))
        sink.extend(lib.lstm(lib.tensor(x), hx, ps, True, 1, 0.0, False, False, False))
        ps = [lib.tensor(p.detach().numpy()) for p in g._flat_weights]
        sink.extend(lib.gru(lib.tensor(x), lib.zeros(1, 2, 4, dtype=lib.float64), ps, False,
                            1, 0.0, False, False, False))
    for a, b in zip(got, want):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), atol=1e-10)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_rnn_functions_packed_match_torch(mode):
    torch = pytest.importorskip("torch")
    m = _rnn_case(torch, mode, 1, False)
    x = np.random.default_rng(10).normal(size=(5, 2, 3))
    pk = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), torch.tensor([5, 3]))
    res = []
    for lib in (ft, torch):
        data = lib.tensor(pk.data.numpy(), requires_grad=True)
        ps = [lib.tensor(p.detach().numpy()) for p in m._flat_weights]
        h = lib.zeros(1, 2, 4, dtype=lib.float64)
        hx = (h, h) if mode == "lstm" else h
        outs = getattr(lib, mode)(data, lib.tensor(pk.batch_sizes.numpy()), hx, ps, True, 1,
                                  0.0, False, False)
        outs[0].sum().backward()
        res.append(([o.detach().numpy() for o in outs], outs[0].grad_fn.name(),
                    data.grad.numpy()))
    for a, b in zip(res[0][0], res[1][0]):
        np.testing.assert_allclose(a, b, atol=1e-10)
    assert res[0][1] == res[1][1]
    np.testing.assert_allclose(res[0][2], res[1][2], atol=1e-10)


def test_rnn_function_errors_match_torch():
    torch = pytest.importorskip("torch")
    r = torch.nn.RNN(3, 4)
    ws = [p.detach().numpy() for p in r._flat_weights]
    for f in [lambda lib: lib.lstm(lib.ones(5, 2, 3), (lib.zeros(1, 2, 4),),
                                   [lib.tensor(w) for w in ws], True, 1, 0.0, False, False,
                                   False),
              lambda lib: lib.rnn_relu(lib.ones(5, 2, 3), lib.zeros(2, 2, 4),
                                       [lib.tensor(w) for w in ws], True, 1, 0.0, False, False,
                                       False),
              lambda lib: lib.rnn_tanh(lib.ones(5, 2, 7), lib.zeros(1, 2, 4),
                                       [lib.tensor(w) for w in ws], True, 1, 0.0, False, False,
                                       False),
              lambda lib: lib.gru(lib.ones(5, 2, 3), lib.zeros(1, 2, 4),
                                  [lib.tensor(w) for w in ws[:3]], True, 1, 0.0, False, False,
                                  False)]:
        a, b = _err(f)
        assert a == b


def test_rnn_functions_unbatched_and_float32_lstm_match_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    r, m = torch.nn.RNN(3, 4), torch.nn.LSTM(3, 4)
    x = np.random.default_rng(11).normal(size=(5, 3)).astype(np.float32)
    for hshape in [(1, 4), (1, 1, 4), (1, 3, 4)]:
        got, want = [], []
        for lib, sink in ((ft, got), (torch, want)):
            ps = [lib.tensor(p.detach().numpy()) for p in r._flat_weights]
            sink.extend(lib.rnn_tanh(lib.tensor(x), lib.zeros(*hshape), ps, True, 1, 0.0,
                                     False, False, False))
        for a, b in zip(got, want):
            assert tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(_np(a), b.detach().numpy(), atol=1e-6)
    names = []
    for lib in (ft, torch):
        ps = [lib.tensor(p.detach().numpy(), requires_grad=True) for p in m._flat_weights]
        h = lib.zeros(1, 5, 4)
        for bf in (False, True):
            outs = lib.lstm(lib.tensor(x[None].repeat(5, 0)), (h, h), ps, True, 1, 0.0, False,
                            False, bf) if bf else \
                lib.lstm(lib.tensor(x[:, None].repeat(5, 1)), (h, h), ps, True, 1, 0.0,
                         False, False, bf)
            names.append([o.grad_fn.name() for o in outs])
    assert names[:2] == names[2:]


def test_rnn_dropout_in_training_keeps_shapes():
    ws = [ft.randn(4, 3), ft.randn(4, 4), ft.randn(4, 4), ft.randn(4, 4)]
    out, h = ft.rnn_tanh(ft.randn(5, 2, 3), ft.zeros(2, 2, 4), ws, False, 2, 0.5, True, False,
                         False)
    assert tuple(out.shape) == (5, 2, 4) and tuple(h.shape) == (2, 2, 4)


# ------------------------------------------------- removed functions and settings


@pytest.mark.parametrize("name,args", [("eig", 1), ("lstsq", 2), ("solve", 2),
                                       ("symeig", 1), ("matrix_rank", 1)])
def test_removed_linalg_functions_raise_torch_text(name, args):
    a, b = _err(lambda lib: getattr(lib, name)(*[lib.eye(2)] * args))
    assert a == b and a[0] == "RuntimeError"


def test_process_settings_match_torch():
    torch = pytest.importorskip("torch")
    # PyTorch flushes on this CPU; funcgrad cannot, and says so as PyTorch does on a CPU
    # without the flag (docs/sharp_bits.md).
    assert torch.set_flush_denormal(False) is True
    assert ft.set_flush_denormal(True) is False and ft.set_flush_denormal(False) is False
    for lib in (ft, torch):
        with pytest.raises(RuntimeError, match="flush_denormal expects a bool, but got int"):
            lib.set_flush_denormal(1)
    assert ft.init_num_threads() is None
    ft.set_num_interop_threads(2)
    assert ft.get_num_interop_threads() == 2
    ft.set_num_interop_threads(1)
    try:
        for mode, level in [("warn", 1), (2, 2), ("default", 0), (1, 1)]:
            ft.set_deterministic_debug_mode(mode)
            assert ft.get_deterministic_debug_mode() == level
        assert ft.are_deterministic_algorithms_enabled()
        assert ft.is_deterministic_algorithms_warn_only_enabled()
    finally:
        ft.set_deterministic_debug_mode(0)
    state = torch.get_deterministic_debug_mode()
    try:
        for bad in ["x", 3, 1.0]:
            a, b = _err(lambda lib, m=bad: lib.set_deterministic_debug_mode(m))
            assert a == b
    finally:
        torch.set_deterministic_debug_mode(state)
    assert ft.get_deterministic_debug_mode() == 0


_SYM_CASES = [
    ("sym_int", (2.7,)), ("sym_int", (-2.7,)), ("sym_int", (True,)), ("sym_int", ("T27",)),
    ("sym_int", (float("inf"),)), ("sym_float", (3,)), ("sym_float", ("T3",)),
    ("sym_max", (2, 3.0)), ("sym_max", (3, 2)), ("sym_min", (2, 3.5)), ("sym_min", (True, 2)),
    ("sym_max", ("T1", 2)), ("sym_not", (True,)), ("sym_not", (0,)), ("sym_not", ("Tb",)),
    ("sym_sqrt", (4,)), ("sym_sqrt", ("T4",)), ("sym_sqrt", (-1.0,)), ("sym_sum", ([1, 2],)),
    ("sym_sum", ([1.5, 2],)), ("sym_sum", ([],)), ("sym_sum", ((1, 2),)), ("sym_ite", (True, 1, 2)),
    ("sym_ite", (False, 1, 2)), ("sym_ite", (1, 1, 2)), ("sym_ite", (True, 1, 2.0)),
]


@pytest.mark.parametrize("name,args", _SYM_CASES)
def test_sym_helpers_match_torch(name, args):
    torch = pytest.importorskip("torch")
    made = {"T27": lambda lib: lib.tensor(2.7), "T3": lambda lib: lib.tensor(3),
            "T1": lambda lib: lib.tensor(1.0), "Tb": lambda lib: lib.tensor(True),
            "T4": lambda lib: lib.tensor(4.0)}
    got = []
    for lib in (ft, torch):
        a = [made[v](lib) if isinstance(v, str) else v for v in args]
        try:
            r = getattr(lib, name)(*a)
        except Exception as e:  # noqa: BLE001
            msg = str(e).replace("funcgrad.torch._tensor.Tensor", "torch.Tensor")
            got.append((type(e).__name__, msg))
        else:
            got.append((type(r).__name__, r))
    assert got[0] == got[1]


def test_sym_sum_of_tensors():
    out = ft.sym_sum([ft.tensor([1.0, 2.0]), ft.tensor([3.0, 4.0])])
    assert out.tolist() == [4.0, 6.0]
