"""The added top-level torch functions against PyTorch 2.13: values, dtypes, printed text,
gradients (float64, hypothesis-drawn), warnings and errors."""

from __future__ import annotations

import array
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)


def _same(a: Any, b: Any, tol: float = 1e-6) -> None:
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q, tol)
        return
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)


def _raises_same(fn: Any) -> None:
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(type(want.value)) as got:
        fn(ft)
    assert str(got.value) == str(want.value).split("\n")[0].split(" (Triggered")[0]


# ------------------------------------------------------------------ print options


@pytest.fixture
def restore_printoptions():
    yield
    torch.set_printoptions(profile="default")
    ft.set_printoptions(profile="default")


PRINT_CASES = [
    dict(precision=2),
    dict(precision=6),
    dict(threshold=5),
    dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0),
    dict(linewidth=40),
    dict(profile="short"),
    dict(profile="full"),
    dict(sci_mode=True),
    dict(sci_mode=False),
    dict(sci_mode=True, precision=2),
]
VALUES = [
    lambda m: m.tensor([1.123456, 2.5, -3.25]),
    lambda m: m.arange(30.0).reshape(5, 6) / 7,
    lambda m: m.tensor([1e-6, 1.0, 1e5]),
    lambda m: m.arange(2000),
    lambda m: m.arange(1200.0).reshape(30, 40),
    lambda m: m.tensor([1.0, 2.0, 3.0]),
    lambda m: m.tensor([1 + 2j, -0.5j], dtype=m.complex64),
    lambda m: m.zeros(3),
    lambda m: m.tensor([[True, False]]),
    lambda m: m.arange(24.0).reshape(2, 3, 4) * 1000.5,
]


@pytest.mark.parametrize("opts", PRINT_CASES)
@pytest.mark.parametrize("make", VALUES)
def test_set_printoptions_matches_torch(opts, make, restore_printoptions):
    torch.set_printoptions(**opts)
    ft.set_printoptions(**opts)
    assert repr(make(ft)) == repr(make(torch))


def test_set_printoptions_resets_sci_mode(restore_printoptions):
    for m in (torch, ft):
        m.set_printoptions(sci_mode=True)
        m.set_printoptions(precision=3)
    assert repr(ft.tensor([1.5, 2.0])) == repr(torch.tensor([1.5, 2.0]))


# ------------------------------------------------------------------ default device


@pytest.fixture
def restore_device():
    yield
    ft.set_default_device(None)


def test_set_default_device_cpu(restore_device):
    ft.set_default_device("cpu")
    torch.set_default_device("cpu")
    try:
        assert repr(ft.get_default_device()) == repr(torch.get_default_device())
        assert ft.zeros(2).device == ft.device("cpu")
    finally:
        torch.set_default_device(None)
    ft.set_default_device(None)
    assert repr(ft.get_default_device()) == "device(type='cpu')"


def test_device_context_manager_restores(restore_device):
    with ft.device("cpu") as d:
        assert ft.get_default_device() == d
        with ft.device("cpu:0"):
            assert ft.get_default_device().index == 0
        assert ft.get_default_device() == d
    assert ft.get_default_device() == ft.device("cpu")


@pytest.mark.skipif(not ft.cuda.is_available(), reason="needs a CUDA device")
def test_set_default_device_cuda(restore_device):
    ft.set_default_device("cuda")
    for make in (lambda: ft.zeros(2), lambda: ft.tensor([1.0]), lambda: ft.arange(3),
                 lambda: ft.randn(2), lambda: ft.empty_strided((2,), (1,))):
        assert make().device.type == "cuda"
    assert ft.zeros_like(ft.zeros(2, device="cpu")).device.type == "cpu"
    assert ft.from_numpy(np.zeros(2)).device.type == "cpu"


# ------------------------------------------------------------------ random state


@pytest.fixture
def restore_rng():
    state = ft.get_rng_state()
    yield
    ft.set_rng_state(state)


def test_rng_state_round_trip(restore_rng):
    state = ft.get_rng_state()
    assert state.dtype == ft.uint8 and tuple(state.shape) == tuple(torch.get_rng_state().shape)
    a, b, c = ft.randn(4), ft.rand(3), ft.randint(0, 100, (5,))
    ft.set_rng_state(state)
    assert ft.equal(ft.randn(4), a) and ft.equal(ft.rand(3), b)
    assert ft.equal(ft.randint(0, 100, (5,)), c)


def test_initial_seed(restore_rng):
    ft.manual_seed(1234)
    assert ft.initial_seed() == 1234
    s = ft.seed()
    assert ft.initial_seed() == s


@pytest.mark.parametrize("bad", [lambda m: m.zeros(3), lambda m: [1, 2],
                                 lambda m: m.zeros(3, dtype=m.uint8)])
def test_set_rng_state_errors(bad, restore_rng):
    _raises_same(lambda m: m.set_rng_state(bad(m)))


# ------------------------------------------------------------------ creation


@pytest.mark.parametrize("args,kw", [((1, 4), {}), ((0, 1, 0.1), {}), ((1, 4), {"dtype": "int64"}),
                                     ((5, 1, -1.5), {}), ((0, 2, 0.3), {"dtype": "float64"})])
def test_range(args, kw):
    outs = []
    for m in (torch, ft):
        k = {n: getattr(m, v) for n, v in kw.items()}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            outs.append(m.range(*args, **k))
        assert [str(x.message) for x in w] == [ft._creation._RANGE_DEPRECATED]
    _same(outs[1], outs[0], 0)


@pytest.mark.parametrize("args", [(0, 1, 0), (1, 0, 1), (0, float("inf"))])
def test_range_errors(args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(lambda m: m.range(*args))


def test_frombuffer_shares_memory():
    for m in (torch, ft):
        a = array.array("i", [1, 2, 3, 4])
        t = m.frombuffer(a, dtype=m.int32, count=2, offset=4)
        t += 1
        assert list(a) == [1, 3, 4, 4]
        assert repr(t) == "tensor([3, 4], dtype=torch.int32)"
    _same(ft.frombuffer(bytearray(b"abcd"), dtype=ft.float32),
          torch.frombuffer(bytearray(b"abcd"), dtype=torch.float32))


@pytest.mark.parametrize("kw", [dict(offset=20), dict(count=10), dict(dtype="int64", offset=3),
                                dict(count=0), dict(offset=-1)])
def test_frombuffer_errors(kw):
    def call(m):
        k = dict(kw)
        k["dtype"] = getattr(m, k.get("dtype", "int32"))
        return m.frombuffer(array.array("i", [1, 2, 3, 4]), **k)
    _raises_same(call)


def test_empty_strided():
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 0), (1, 1)), ((4,), (2,))]:
        a, b = ft.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert a.stride() == b.stride() and a.shape == b.shape and str(a.dtype) == str(b.dtype)
    _raises_same(lambda m: m.empty_strided((2, 3), (1,)))


def test_fill():
    for v in (2.5, 3):
        _same(ft.fill(ft.ones(2, 3, dtype=ft.int64), v),
              torch.fill(torch.ones(2, 3, dtype=torch.int64), v))
    x = ft.ones(3, requires_grad=True)
    assert repr(ft.fill(x, 2.0)) == repr(torch.fill(torch.ones(3, requires_grad=True), 2.0))
    v = ft.tensor(2.0, requires_grad=True)
    ft.fill(ft.ones(3), v).sum().backward()
    tv = torch.tensor(2.0, requires_grad=True)
    torch.fill(torch.ones(3), tv).sum().backward()
    _same(v.grad, tv.grad)
    _raises_same(lambda m: m.fill(m.ones(2), m.ones(2)))


def test_to_dlpack_interop():
    x = ft.arange(6.0).reshape(2, 3)
    t = torch.from_dlpack(ft.to_dlpack(x))
    np.testing.assert_array_equal(t.numpy(), x.numpy())
    g = torch.from_dlpack(ft.to_dlpack(ft.ones(2, requires_grad=True)))
    assert g.tolist() == [1.0, 1.0]


def test_is_distributed_and_device_module():
    assert ft.is_distributed(ft.ones(1)) is torch.is_distributed(torch.ones(1)) is False
    assert ft.get_device_module("cpu") is ft.cpu
    assert ft.get_device_module(ft.device("cpu")) is ft.cpu
    assert ft.get_device_module() is (ft.cuda if ft.cuda.is_available() else ft.cpu)
    _raises_same(lambda m: m.get_device_module(3))


# ------------------------------------------------------------------ vmap / cond


def test_vmap():
    x = np.arange(6.0).reshape(3, 2)
    _same(ft.vmap(lambda r: (r * r).sum())(ft.tensor(x)),
          torch.vmap(lambda r: (r * r).sum())(torch.tensor(x)))
    assert ft.vmap is ft.func.vmap


floats = st.floats(-3, 3, allow_nan=False, width=64)


@settings(max_examples=15, deadline=None)
@given(st.lists(floats, min_size=1, max_size=5))
def test_cond_values_and_grads(vals):
    outs = []
    for m in (torch, ft):
        x = m.tensor(vals, dtype=m.float64, requires_grad=True)
        y = m.cond(x.sum() > 0, lambda a: (a.sin() * a, a.exp()), lambda a: (a.cos(), a * 2),
                   (x,))
        (y[0].sum() + y[1].sum()).backward()
        outs.append((y, x.grad))
    _same(outs[1], outs[0], 1e-12)


def test_cond_python_pred_and_nested_operands():
    for pred in (True, False):
        ops = lambda m: (m.ones(2), {"k": m.arange(2.0)})  # noqa: E731
        got = ft.cond(pred, lambda a, d: a + d["k"], lambda a, d: a - d["k"], ops(ft))
        want = torch.cond(pred, lambda a, d: a + d["k"], lambda a, d: a - d["k"], ops(torch))
        _same(got, want)


def test_cond_under_func_transforms_and_compile():
    f = lambda a: ft.cond(a.sum() > 0, lambda b: (b ** 2).sum(), lambda b: b.sum(), (a,))  # noqa: E731
    _same(ft.func.grad(f)(ft.tensor([1.0, 2.0])), torch.tensor([2.0, 4.0]))
    _same(ft.func.grad(f)(ft.tensor([-1.0, -2.0])), torch.tensor([1.0, 1.0]))
    g = lambda a: ft.cond(a.sum() > 2, lambda b: b * 2, lambda b: b * 0, (a,))  # noqa: E731
    _same(ft.vmap(g)(ft.tensor([[1.0, 2.0], [0.0, 1.0]])), torch.tensor([[2.0, 4.0], [0.0, 0.0]]))
    _same(ft.compile(g)(ft.tensor([1.0, 2.0])), torch.tensor([2.0, 4.0]))
    _same(ft.compile(g)(ft.tensor([0.0, 1.0])), torch.tensor([0.0, 0.0]))


@pytest.mark.parametrize("bad", [
    lambda m: m.cond(m.tensor([True, False]), lambda a: a, lambda a: a, (m.ones(1),)),
    lambda m: m.cond("yes", lambda a: a, lambda a: a, (m.ones(1),)),
    lambda m: m.cond(m.tensor(True), 1, lambda a: a, (m.ones(1),)),
])
def test_cond_errors(bad):
    _raises_same(bad)


# ------------------------------------------------------------------ *_copy


x3 = np.random.default_rng(0).standard_normal((2, 3, 4))
COPY_CASES = [
    ("alias_copy", ()), ("diagonal_copy", ()), ("diagonal_copy", (1, 0, 2)),
    ("expand_copy", ((3, 2, 3, 4),)), ("permute_copy", ((2, 0, 1),)), ("select_copy", (1, 0)),
    ("slice_copy", (1, 0, 2)), ("slice_copy", (2, 1, None, 2)), ("split_copy", (2, 2)),
    ("split_with_sizes_copy", ([1, 3], 2)), ("squeeze_copy", ()), ("transpose_copy", (0, 2)),
    ("unbind_copy", (1,)), ("unfold_copy", (2, 2, 1)), ("unsqueeze_copy", (0,)),
    ("view_copy", ((6, 4),)),
]


@pytest.mark.parametrize("name,args", COPY_CASES)
def test_copy_functions(name, args):
    outs, grads, names = [], [], []
    for m in (torch, ft):
        x = m.tensor(x3, requires_grad=True)
        y = getattr(m, name)(x, *args)
        ys = list(y) if isinstance(y, (tuple, list)) else [y]
        assert all(t.is_contiguous() for t in ys)
        names.append([type(t.grad_fn).__name__ for t in ys])
        sum(((t * t).sum() for t in ys), m.tensor(0.0, dtype=m.float64)).backward()
        outs.append(tuple(ys))
        grads.append(x.grad)
    _same(outs[1], outs[0], 0)
    _same(grads[1], grads[0], 1e-12)
    assert names[0] == names[1]


def test_copy_functions_do_not_alias():
    x = ft.arange(6.0).reshape(2, 3)
    y = ft.t_copy(x)
    y[0, 0] = 9.0
    assert x[0, 0].item() == 0.0
    _same(ft.view_as_real_copy(ft.tensor([1 + 2j])),
          torch.view_as_real_copy(torch.tensor([1 + 2j])))
    c = np.arange(4.0).reshape(2, 2)
    _same(ft.view_as_complex_copy(ft.tensor(c)), torch.view_as_complex_copy(torch.tensor(c)))
    d = ft.ones(2, requires_grad=True)
    assert not ft.detach_copy(d).requires_grad
    _same(ft.detach_copy(d), torch.detach_copy(torch.ones(2, requires_grad=True)))


def test_copy_function_errors():
    _raises_same(lambda m: m.permute_copy(m.ones(2, 3), (0,)))
    _raises_same(lambda m: m.transpose_copy(m.ones(2, 3), 0, 4))


# ------------------------------------------------------------------ nn functions


@settings(max_examples=10, deadline=None)
@given(st.lists(floats, min_size=2, max_size=6))
def test_inplace_activations(vals):
    for name, args in [("celu_", (0.7,)), ("selu_", ()), ("threshold_", (0.3, -2.0)),
                       ("rrelu_", (0.1, 0.4))]:
        outs = []
        for m in (torch, ft):
            x = m.tensor(vals, dtype=m.float64)
            y = getattr(m, name)(x, *args)
            assert y is x
            outs.append(x)
        _same(outs[1], outs[0], 1e-12)


def test_dropout_inplace_eval_is_identity():
    for name in ("dropout_", "alpha_dropout_", "feature_alpha_dropout_", "feature_dropout_"):
        for m in (torch, ft):
            x = m.arange(6.0).reshape(2, 3)
            assert getattr(m, name)(x, 0.5, False) is x
            assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    _same(ft.feature_dropout(ft.ones(2, 3), 0.5, False),
          torch.feature_dropout(torch.ones(2, 3), 0.5, False))


def test_dropout_training_statistics():
    ft.manual_seed(0)
    x = ft.ones(400, 8, 2)
    y = ft.feature_dropout(x, 0.25, True)
    vals = sorted({round(v, 5) for v in y.unique().tolist()})
    assert vals == [0.0, round(1 / 0.75, 5)]
    per_channel = y.reshape(400 * 8, 2)
    assert bool((per_channel[:, 0] == per_channel[:, 1]).all())
    out, mask = ft.native_dropout(ft.ones(1000), 0.3, True)
    assert mask.dtype == ft.bool and 600 < int(mask.sum()) < 800
    _same(out, torch.tensor(mask.numpy().astype(np.float32) / 0.7))
    d = ft.ones(5)
    ft.dropout_(d, 1.0, True)
    assert d.tolist() == [0.0] * 5


def test_native_dropout_eval():
    got = ft.native_dropout(ft.ones(3), 0.5, False)
    want = torch.native_dropout(torch.ones(3), 0.5, False)
    _same(got, want)


def test_constant_pad_nd_and_convolution():
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 5))
    w = np.random.default_rng(2).standard_normal((4, 3, 3, 3))
    wt = np.random.default_rng(3).standard_normal((3, 2, 3, 3))
    b = np.arange(4.0)
    outs, grads = [], []
    for m in (torch, ft):
        xt = m.tensor(x, requires_grad=True)
        p = m.constant_pad_nd(xt, [1, 2, 0, 1], 0.5)
        c = m.convolution(p, m.tensor(w), m.tensor(b), [2, 1], [1, 0], [1, 1], False, [0, 0], 1)
        t = m.convolution(xt, m.tensor(wt), None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1)
        (c.sum() + (t ** 2).sum()).backward()
        outs.append((p, c, t))
        grads.append(xt.grad)
        assert type(p.grad_fn).__name__ == "ConstantPadNdBackward0"
    _same(outs[1], outs[0], 1e-10)
    _same(grads[1], grads[0], 1e-10)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(2, 5))
def test_native_norms(n, c, length):
    rng = np.random.default_rng(n * 100 + c * 10 + length)
    x = rng.standard_normal((n, 2 * c, length))
    w, b = rng.standard_normal(2 * c), rng.standard_normal(2 * c)
    lw = rng.standard_normal(length)
    res, grads, stats = [], [], []
    for m in (torch, ft):
        xt = m.tensor(x, requires_grad=True)
        rm, rv = m.zeros(2 * c, dtype=m.float64), m.ones(2 * c, dtype=m.float64)
        ln = m.native_layer_norm(xt, [length], m.tensor(lw), None, 1e-5)
        bn = m.native_batch_norm(xt, m.tensor(w), m.tensor(b), rm, rv, True, 0.1, 1e-5)
        bne = m.native_batch_norm(xt, None, None, rm, rv, False, 0.1, 1e-5)
        gn = m.native_group_norm(xt, m.tensor(w), m.tensor(b), n, 2 * c, length, 2, 1e-5)
        (ln[0].sin().sum() + bn[0].cos().sum() + (gn[0] ** 3).sum() + bne[0].sum()).backward()
        res.append((ln, bn, bne, gn))
        stats.append((rm, rv))
        grads.append(xt.grad)
    _same(res[1], res[0], 1e-9)
    _same(stats[1], stats[0], 1e-9)
    _same(grads[1], grads[0], 1e-9)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_cells(batch, nin, hidden):
    rng = np.random.default_rng(batch * 100 + nin * 10 + hidden)

    def arrs(k):
        return (rng.standard_normal((batch, nin)), rng.standard_normal((batch, hidden)),
                rng.standard_normal((k * hidden, nin)), rng.standard_normal((k * hidden, hidden)),
                rng.standard_normal(k * hidden), rng.standard_normal(k * hidden))

    for name, k in [("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3), ("lstm_cell", 4)]:
        data = arrs(k)
        c0 = rng.standard_normal((batch, hidden))
        outs, grads = [], []
        for m in (torch, ft):
            ts = [m.tensor(a, requires_grad=True) for a in data]
            hx: Any = (ts[1], m.tensor(c0)) if name == "lstm_cell" else ts[1]
            out = getattr(m, name)(ts[0], hx, *ts[2:])
            flat = list(out) if isinstance(out, tuple) else [out]
            sum((o.tanh().sum() for o in flat), m.tensor(0.0, dtype=m.float64)).backward()
            outs.append(tuple(flat))
            grads.append(tuple(t.grad for t in ts))
        _same(outs[1], outs[0], 1e-10)
        _same(grads[1], grads[0], 1e-10)


def test_frobenius_and_nuclear_norm():
    x = np.random.default_rng(4).standard_normal((2, 3, 4))
    for call in (lambda m, t: m.frobenius_norm(t, [0, 1]),
                 lambda m, t: m.frobenius_norm(t, [1], True),
                 lambda m, t: m.nuclear_norm(t), lambda m, t: m.nuclear_norm(t, [0, 2], True),
                 lambda m, t: m.nuclear_norm(t, True)):
        outs, grads = [], []
        for m in (torch, ft):
            t = m.tensor(x, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = call(m, t)
            y.sum().backward()
            outs.append(y)
            grads.append(t.grad)
        _same(outs[1], outs[0], 1e-10)
        _same(grads[1], grads[0], 1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(lambda m: m.frobenius_norm(m.ones(2, 2, 2), [0, 1, 2]))
        _raises_same(lambda m: m.nuclear_norm(m.ones(2, 2, 2), [0]))


def test_binomial():
    ft.manual_seed(0)
    _same(ft.binomial(ft.tensor([4.0, 0.0, 7.0]), ft.tensor([1.0, 0.5, 0.0])),
          torch.tensor([4.0, 0.0, 0.0]))
    draws = ft.binomial(ft.full((4000,), 10.0, dtype=ft.float64),
                        ft.full((4000,), 0.3, dtype=ft.float64))
    assert draws.dtype == ft.float64 and abs(draws.mean().item() - 3.0) < 0.1
    _raises_same(lambda m: m.binomial(m.tensor([3, 4]), m.tensor([0.5, 0.5])))


@pytest.mark.parametrize("kw", [dict(bins=[3, 3]), dict(bins=2, density=True),
                                dict(bins=[2, 4], range=[0.0, 1.0, -1.0, 3.0]),
                                dict(bins=3, weight=True)])
def test_histogramdd(kw):
    pts = np.random.default_rng(5).random((20, 2)) * 2
    wts = np.arange(20.0)
    outs = []
    for m in (torch, ft):
        k = dict(kw)
        if k.get("weight"):
            k["weight"] = m.tensor(wts, dtype=m.float32)
        outs.append(m.histogramdd(m.tensor(pts, dtype=m.float32), **k))
    _same(outs[1].hist, outs[0].hist, 1e-5)
    _same(tuple(outs[1].bin_edges), tuple(outs[0].bin_edges), 1e-6)
    assert repr(outs[1]) == repr(outs[0])


@pytest.mark.parametrize("name,args,text", [
    ("frobenius_norm", ([0, 1],), "at::frobenius_norm is deprecated and it is just left for JIT "
     "compatibility. It will be removed in a future PyTorch release. Please use "
     "`linalg.vector_norm(A, 2., dim, keepdim)` instead"),
    ("nuclear_norm", (), "at::nuclear_norm is deprecated and it is just left for JIT "
     "compatibility. It will be removed in a future PyTorch release. Please use "
     "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead"),
])
def test_deprecated_norms_warn_once(name, args, text, monkeypatch):
    from funcgrad.torch import _nn_functions

    monkeypatch.setattr(_nn_functions, "_warned", set())
    for expected in ([text], []):  # PyTorch's TORCH_WARN_ONCE: the first call only
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(ft, name)(ft.ones(2, 2), *args)
        assert [str(q.message) for q in w] == expected
        assert all(q.category is UserWarning for q in w)
