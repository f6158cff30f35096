"""PyTorch-face fixes from a tenth side-by-side review, each compared with torch 2.13:
torch.func.jvp/vjp composing with the outer autograd graph; torch.testing (assert_close,
make_tensor); torch.nn.utils.fuse_*_bn_*; broadcast errors of the
regression losses; memory formats; the warn-once warnings of float() on a tensor requiring
grad and of backward(create_graph=True)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402


def _np(t):
    return np.asarray(t.detach().numpy())


def _outcome(fn):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            val = fn()
        return "ok", val, [str(x.message) for x in w]
    except Exception as e:  # noqa: BLE001 - the error type and message are compared
        return type(e).__name__, str(e), []


# ------------------------------------------------------- 1. func transforms + outer graph

def _grads_after(lib, seed, shape, which):
    lib.manual_seed(seed)
    lin = lib.nn.Linear(shape[-1], 3)
    x = lib.randn(*shape, requires_grad=True)
    v = lib.randn(*shape, requires_grad=True)

    def f(y):
        return lin(y).tanh()

    if which == "jvp":
        out, t = lib.func.jvp(f, (x,), (v,))
        loss = (t ** 2).sum() + out.sum()
    elif which == "vjp_out":
        loss = lib.func.vjp(f, x)[0].pow(2).sum()
    elif which == "vjp_fn":
        out, fn = lib.func.vjp(f, x)
        (g,) = fn(lib.ones_like(out))
        loss = (g ** 2).sum()
    elif which == "vjp_aux":
        out, fn, aux = lib.func.vjp(lambda y: (f(y), y.sin()), x, has_aux=True)
        loss = out.sum() + aux.sum()
    elif which == "jacrev":
        loss = lib.func.jacrev(f)(x[0]).pow(2).sum()
    elif which == "jacfwd":
        loss = lib.func.jacfwd(f)(x[0]).pow(2).sum()
    else:
        loss = lib.func.hessian(lambda y: f(y).sum())(x[0]).pow(2).sum()
    loss.backward()
    return [None if p.grad is None else _np(p.grad)
            for p in (lin.weight, lin.bias, x, v)]


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 3), cols=st.integers(1, 4),
       which=st.sampled_from(["jvp", "vjp_out", "vjp_fn", "vjp_aux", "jacrev", "jacfwd",
                              "hessian"]))
def test_func_transforms_reach_outer_graph(seed, rows, cols, which):
    got = _grads_after(ft, seed, (rows, cols), which)
    want = _grads_after(torch, seed, (rows, cols), which)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_vjp_without_grad_unchanged():
    x = ft.arange(3.0)
    out, fn = ft.func.vjp(lambda y: y * y, x)
    assert out.grad_fn is None and not fn(ft.ones(3))[0].requires_grad


# ---------------------------------------------------------------- 2. torch.testing

_CLOSE_CASES = [
    "ac(T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.1]))",
    "ac(T([[1.0, 2.0], [3., 4.]], dtype=t.float64), T([[1.0, 2.0], [3., 4.0000001]], "
    "dtype=t.float64))",
    "ac(T(1.0), T(2.0))", "ac(T([1, 2]), T([1, 3]))",
    "ac(T([1., 2.]), T([1., 2.]), rtol=0.1)", "ac(T([1., 2.]), T([1., 2.]), atol=0.1)",
    "ac(T([1., 2.]), T([1., 2.], dtype=t.float64))",
    "ac(T([1., 2.]), T([1., 2.], dtype=t.float64), check_dtype=False)",
    "ac(T([1., float('nan')]), T([1., float('nan')]))",
    "ac(T([1., float('nan')]), T([1., float('nan')]), equal_nan=True)",
    "ac(T([1., 2.]), T([1., 2., 3.]))", "ac([T([1.]), T([2.])], [T([1.]), T([3.])])",
    "ac({'a': T([1.])}, {'b': T([1.])})",
    "ac({'a': [T([1.]), T([2.])]}, {'a': [T([1.]), T([5.])]})",
    "ac(1.0, 1.1)", "ac(1, 1.0)", "ac(1, T(1))", "ac([1.0], (1.0,))",
    "ac(T([1., 2.]), T([1., 2.5]), msg='custom')",
    "ac(T([1., 2.]), T([1., 2.5]), msg=lambda m: 'X' + m)",
    "ac(T([1., 2.]), T([1., 2.5]), rtol=0, atol=0)", "ac(T([0., 2.]), T([1., 0.]))",
    "ac(T([1., 2.], dtype=t.float16), T([1., 2.001], dtype=t.float16))",
    "ac(T([1., 2.], dtype=t.bfloat16), T([1., 2.02], dtype=t.bfloat16))",
    "ac(T([1+1j]), T([1+2j]))", "ac(T([True]), T([False]))",
    "t.testing.assert_allclose(T([1., 2.]), T([1., 2.1]))",
]


@pytest.mark.parametrize("src", _CLOSE_CASES)
def test_assert_close_matches(src):
    def run(lib):
        env = {"t": lib, "T": lib.tensor, "ac": lib.testing.assert_close}
        kind, val, warns = _outcome(lambda: eval(src, env))  # noqa: S307
        return kind, str(val).replace("funcgrad.torch._tensor.Tensor", "torch.Tensor"), \
            warns

    got, want = run(ft), run(torch)
    assert got[:2] == want[:2], src
    assert len(got[2]) == len(want[2])


@settings(max_examples=12, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([1e-7, 1e-5, 1e-3, 0.1]),
       dtype=st.sampled_from(["float32", "float64"]))
def test_assert_close_drawn(shape, seed, scale, dtype):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    b = a + scale * rng.standard_normal(shape)

    def run(lib):
        dt = getattr(lib, dtype)
        return _outcome(lambda: lib.testing.assert_close(lib.tensor(a, dtype=dt),
                                                         lib.tensor(b, dtype=dt)))[:2]

    assert run(ft) == run(torch)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), shape=st.lists(st.integers(1, 4), max_size=3),
       dtype=st.sampled_from(["float32", "float64", "int64", "int32", "bool", "complex64",
                              "uint8"]),
       noncontig=st.booleans(), exclude_zero=st.booleans())
def test_make_tensor_same_draws(seed, shape, dtype, noncontig, exclude_zero):
    def run(lib):
        lib.manual_seed(seed)
        return lib.testing.make_tensor(*shape, dtype=getattr(lib, dtype), device="cpu",
                                       noncontiguous=noncontig, exclude_zero=exclude_zero)

    got, want = run(ft), run(torch)
    assert str(got.dtype) == str(want.dtype) and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(_np(got), _np(want))


@pytest.mark.parametrize("src", [
    "mt(2, dtype=t.float32, device='cpu', low=3, high=1)",
    "mt(2, dtype=t.int64, device='cpu', requires_grad=True)",
    "mt(2, dtype=t.float32, device='cpu', noncontiguous=True, memory_format=t.channels_last)",
    "mt(2, dtype=t.float32, device='cpu', low=float('nan'))",
    "mt((2, 3), dtype=t.float64, device='cpu', low=-1, high=1, requires_grad=True).requires_grad",
])
def test_make_tensor_checks(src):
    def run(lib):
        env = {"t": lib, "mt": lib.testing.make_tensor}
        kind, val, _ = _outcome(lambda: eval(src, env))  # noqa: S307
        return kind, val if kind != "ok" or not hasattr(val, "shape") else tuple(val.shape)

    assert run(ft) == run(torch)


# -------------------------------------------------------------------- 4. fusion

def _fused(lib, seed, transpose, linear):
    lib.manual_seed(seed)
    if linear:
        layer, bn = lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)
    elif transpose:
        layer, bn = lib.nn.ConvTranspose2d(3, 4, 2), lib.nn.BatchNorm2d(4)
    else:
        layer, bn = lib.nn.Conv2d(3, 4, 2, bias=seed % 2 == 0), lib.nn.BatchNorm2d(4)
    with lib.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-1, 1)
    layer.eval()
    bn.eval()
    f = lib.nn.utils.fuse_linear_bn_eval(layer, bn) if linear else \
        lib.nn.utils.fuse_conv_bn_eval(layer, bn, transpose=transpose)
    x = lib.randn(2, 3) if linear else lib.randn(1, 3, 4, 4)
    return [_np(f.weight), _np(f.bias), type(f.weight).__name__, f.weight.requires_grad,
            _np(f(x)), f is layer]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), kind=st.sampled_from(["conv", "convT", "linear"]))
def test_fuse_bn_same_numbers(seed, kind):
    args = (seed, kind == "convT", kind == "linear")
    got, want = _fused(ft, *args), _fused(torch, *args)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        else:
            assert g == w


@pytest.mark.parametrize("src", [
    "u.fuse_conv_bn_eval(t.nn.Conv2d(1, 2, 1), t.nn.BatchNorm2d(2))",
    "u.fuse_linear_bn_eval(t.nn.Linear(2, 3).eval(), t.nn.BatchNorm1d(2).eval())",
    "u.fuse_conv_bn_weights(t.ones(2, 1, 1, 1), None, t.zeros(2), t.ones(2), 1e-5, None, "
    "None)[1]",
])
def test_fuse_errors_and_defaults(src):
    def run(lib):
        kind, val, _ = _outcome(lambda: eval(src, {"t": lib, "u": lib.nn.utils}))  # noqa: S307
        return kind, str(val)

    assert run(ft) == run(torch)


# -------------------------------------------------------- 5. loss broadcast errors

@settings(max_examples=15, deadline=None)
@given(a=st.lists(st.integers(1, 5), max_size=3), b=st.lists(st.integers(1, 5), max_size=3),
       fn=st.sampled_from(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"]))
def test_loss_shape_mismatch(a, b, fn):
    def run(lib):
        kind, val, warns = _outcome(lambda: getattr(lib.nn.functional, fn)(
            lib.zeros(a), lib.zeros(b), reduction="none"))
        return kind, tuple(val.shape) if kind == "ok" else val, warns

    assert run(ft) == run(torch)


# ------------------------------------------------------------------ 6. memory formats

_FORMAT_CASES = [
    "(t.channels_last, t.contiguous_format, t.preserve_format, t.channels_last_3d, t.newaxis)",
    "x4.contiguous(memory_format=t.channels_last).stride()",
    "x4.contiguous(memory_format=t.channels_last).is_contiguous()",
    "x4.contiguous(memory_format=t.channels_last).is_contiguous(memory_format=t.channels_last)",
    "x4.is_contiguous(memory_format=t.channels_last)",
    "x4.is_contiguous(memory_format=t.preserve_format)",
    "x4.contiguous(memory_format=t.preserve_format).stride()",
    "x4.contiguous(memory_format=t.channels_last).contiguous(memory_format=t.preserve_format)",
    "x4.contiguous(memory_format=t.channels_last).contiguous().stride()",
    "x4.contiguous(memory_format=t.channels_last).clone().stride()",
    "(x4.contiguous(memory_format=t.channels_last) + 1).stride()",
    "x4.to(memory_format=t.channels_last).stride()",
    "x4.to(t.float64, memory_format=t.channels_last).stride()",
    "x4.clone(memory_format=t.channels_last).stride()",
    "x4.contiguous(memory_format=t.channels_last).eq(x4).all()",
    "x4.permute(0, 2, 3, 1).is_contiguous(memory_format=t.channels_last)",
    "t.ones(2, 3).contiguous(memory_format=t.channels_last)",
    "t.ones(2, 3, 4, 5).contiguous(memory_format=t.channels_last_3d)",
    "t.ones(2, 3).is_contiguous(memory_format=t.channels_last)",
    "t.ones(2, 3, 4, 5, 6).contiguous(memory_format=t.channels_last_3d).stride()",
    "t.ones(2, 3, 1, 1).contiguous(memory_format=t.channels_last).stride()",
    "t.empty_like(x4, memory_format=t.channels_last).shape",
    "t.zeros_like(x4, memory_format=t.contiguous_format).stride()",
    "x4[:, t.newaxis].shape",
]


@pytest.mark.parametrize("src", _FORMAT_CASES)
def test_memory_formats(src):
    def run(lib):
        x4 = lib.arange(24.0).reshape(1, 2, 3, 4)
        kind, val, _ = _outcome(lambda: eval(src, {"t": lib, "x4": x4}))  # noqa: S307
        return kind, str(val)

    assert run(ft) == run(torch)


def test_module_to_memory_format():
    m = ft.nn.Conv2d(2, 3, 2).to(memory_format=ft.channels_last)
    assert m.weight.shape == (3, 2, 2, 2)


# ------------------------------------------------------------------------ 7. warnings

_WARN_SCRIPT = """
import warnings, sys
warnings.simplefilter("always")
lib = __import__(sys.argv[1], fromlist=["x"])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    t = lib.tensor(2.0, requires_grad=True)
    int(t); t.item(); bool(t); t.tolist(); float(t.detach())
    print(len(w))
    float(t * 2); float(t); complex(t)
    print(len(w), [str(x.message) for x in w])
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x ** 2).sum().backward()
    print(len(w))
    (x ** 2).sum().backward(create_graph=True)
    x.grad = None
    (x ** 2).sum().backward(create_graph=True)
    print(len(w), [str(x.message) for x in w][1:])
"""


def test_warn_once_warnings():
    def run(mod):
        return subprocess.run([sys.executable, "-c", _WARN_SCRIPT, mod], capture_output=True,
                              text=True, check=True).stdout

    assert run("funcgrad.torch") == run("torch")
