"""``nn.SyncBatchNorm`` in one process (it is ``BatchNorm``), ``convert_sync_batchnorm``,
``nn.DataParallel`` on one device and ``nn.Buffer``, against PyTorch 2.13 (skipped
cleanly without it). The multi-process path of SyncBatchNorm is in
tests/distributed/test_syncbn.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft


def _torch():
    return pytest.importorskip("torch", exc_type=ImportError)


def _run_bn(m, x, kwargs, steps, train):
    bn = m.nn.SyncBatchNorm(x.shape[1], **kwargs).double()
    if bn.weight is not None:
        with m.no_grad():
            bn.weight.copy_(m.tensor(np.linspace(0.5, 1.5, x.shape[1])))
    bn.train(train)
    out = []
    for k in range(steps):
        xi = m.tensor(x * (k + 1), requires_grad=True)
        y = bn(xi)
        (y * m.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
        out.append((y.detach().numpy(), xi.grad.numpy(),
                    None if bn.weight is None else bn.weight.grad.numpy().copy()))
    stats = [None if b is None else b.numpy().copy() for b in
             (bn.running_mean, bn.running_var, bn.num_batches_tracked)]
    return out, stats, repr(bn), type(y.grad_fn).__name__


@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"affine": False},
                                    {"track_running_stats": False}, {"bias": False}])
@pytest.mark.parametrize("train", [True, False])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31), ndim=st.integers(2, 5))
def test_syncbn_without_a_process_group_is_batchnorm(kwargs, train, seed, ndim):
    torch = _torch()
    shape = (3, 2) + (2,) * (ndim - 2)
    x = np.random.default_rng(seed).standard_normal(shape)
    got = _run_bn(ft, x, kwargs, 2, train)
    want = _run_bn(torch, x, kwargs, 2, train)
    for (y, gx, gw), (ty, tgx, tgw) in zip(got[0], want[0]):
        np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(gx, tgx, rtol=1e-9, atol=1e-10)
        if tgw is not None:
            np.testing.assert_allclose(gw, tgw, rtol=1e-9, atol=1e-10)
    for a, b in zip(got[1], want[1]):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10)
    assert got[2:] == want[2:]


def test_syncbn_input_checks_as_pytorch():
    torch = _torch()
    out = []
    for m in (ft, torch):
        res = []
        for bn, x in ((m.nn.SyncBatchNorm(3), m.ones(3)),
                      (m.nn.SyncBatchNorm(3).eval(), m.ones(3)),
                      (m.nn.SyncBatchNorm(3), m.ones(1, 3))):
            try:
                bn(x)
                res.append(None)
            except ValueError as e:
                res.append(str(e))
        out.append(res)
    assert out[0] == out[1]


def _convert(m):
    net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4),
                          m.nn.Sequential(m.nn.BatchNorm1d(4, momentum=0.3).eval()),
                          m.nn.InstanceNorm2d(4))
    old = net[1]
    s = m.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    inner = s[2][0]
    return (repr(s), s[1].weight is old.weight, s[1].running_mean is old.running_mean,
            inner.training, inner.momentum, list(s.state_dict()))


def test_convert_sync_batchnorm_as_pytorch():
    torch = _torch()
    assert _convert(ft) == _convert(torch)


# ------------------------------------------------------------------- DataParallel


def _outcome(fn):
    try:
        return type(fn()).__name__
    except RuntimeError as e:
        return str(e)


def test_data_parallel_wraps_and_forwards():
    torch = _torch()
    results = []
    for m in (ft, torch):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4))
        with m.no_grad():
            for i, p in enumerate(net.parameters()):
                p.copy_(m.tensor(np.sin(np.arange(p.numel()) + i).reshape(tuple(p.shape)),
                                 dtype=m.float32))
        dp = m.nn.DataParallel(net)
        x = m.tensor(np.linspace(-1, 1, 15).reshape(5, 3), dtype=m.float32)
        y = dp(x)
        y.sum().backward()
        results.append((dp.module is net, dp.device_ids, list(dp.state_dict()),
                        [n for n, _ in dp.named_parameters()], repr(dp),
                        y.detach().numpy().round(5).tolist(),
                        net[0].weight.grad.numpy().round(5).tolist(),
                        _outcome(lambda m=m, net=net, x=x: m.nn.parallel.data_parallel(net, x))))
    assert results[0] == results[1]


def test_data_parallel_state_dict_loads_into_the_bare_module_after_stripping():
    net = ft.nn.Linear(2, 2)
    sd = ft.nn.DataParallel(net).state_dict()
    other = ft.nn.Linear(2, 2)
    other.load_state_dict({k.removeprefix("module."): v for k, v in sd.items()})
    np.testing.assert_array_equal(other.weight.detach().numpy(), net.weight.detach().numpy())


# ------------------------------------------------------------------------- Buffer


def _buffers(m):
    class M(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = m.nn.Buffer(m.zeros(3))
            self.b = m.nn.Buffer(m.ones(1), persistent=False)
            self.lin = m.nn.Linear(2, 2)

    mod = M()
    src = m.ones(2, requires_grad=True)
    buf = m.nn.Buffer(src)
    mod.a.add_(1)
    mod.c = m.nn.Buffer(m.full((2,), 3.0))
    return (list(mod.state_dict()), [n for n, _ in mod.named_buffers()],
            isinstance(buf, m.Tensor), isinstance(buf, m.nn.Buffer),
            isinstance(m.ones(1), m.nn.Buffer), buf.requires_grad, buf.is_leaf,
            buf.persistent, repr(m.nn.Buffer()), mod.a.tolist(), [p for p, _ in
                                                                  mod.named_parameters()])


def test_buffer_as_pytorch():
    torch = _torch()
    assert _buffers(ft) == _buffers(torch)


def test_buffer_shares_memory_and_survives_deepcopy_and_pickle():
    import copy
    import pickle

    t = ft.zeros(2)
    b = ft.nn.Buffer(t, persistent=False)
    t.add_(1)
    assert b.tolist() == [1.0, 1.0]
    for c in (copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
        assert isinstance(c, ft.nn.Buffer) and c.persistent is False
        assert c.tolist() == [1.0, 1.0]
