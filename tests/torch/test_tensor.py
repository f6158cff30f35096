"""The Tensor facade as a PyTorch user sees it: creation, repr, operators, methods, dtype
rules, and the values and gradients of every operation.

Gradients are checked twice: against the functional engine (``fg.grad`` of the same
computation written with ``funcgrad.numpy`` over NumPy arrays: same primitives, same
rules, so they agree even at kinks and ties) and against PyTorch 2.13 as an oracle (on
inputs drawn away from kinks and ties). Tests that need torch skip cleanly without it.

Known bugs are ``xfail(strict=True)``: each reason starts with "bug:" and states what
PyTorch does; when a bug is fixed the strict xfail turns into a failure, so remove it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.torch as ft

HYP = settings(max_examples=5, deadline=None)


def _torch():
    """PyTorch, the reference oracle; skips the calling test when it is missing."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    return torch


def close(a, b, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def as_np(t) -> np.ndarray:
    """The values of a funcgrad or torch tensor as a NumPy array."""
    return np.asarray(t.detach().numpy())


# =============================================================================== creation


class TestTensorConstructor:
    def test_python_floats_give_float32(self):
        assert ft.tensor(1.5).dtype == ft.float32
        assert ft.tensor([1.0, 2.0]).dtype == ft.float32
        assert ft.tensor([[1.0], [2.0]]).dtype == ft.float32
        assert ft.tensor([1, 2.5]).dtype == ft.float32  # mixed int/float list

    def test_python_ints_give_int64(self):
        assert ft.tensor(3).dtype == ft.int64
        assert ft.tensor([1, 2, 3]).dtype == ft.int64
        assert ft.tensor([[1, -2]]).dtype == ft.int64

    def test_python_bools_give_bool(self):
        assert ft.tensor(True).dtype == ft.bool
        assert ft.tensor([True, False]).dtype == ft.bool

    @pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int32, np.int64,
                                       np.int8, np.uint8, np.bool_])
    def test_numpy_arrays_keep_their_dtype(self, dtype):
        arr = np.array([1, 0, 1], dtype=dtype)
        t = ft.tensor(arr)
        assert t.dtype.np == np.dtype(dtype)
        assert t.tolist() == arr.tolist()

    def test_numpy_float64_scalar_keeps_float64(self):
        assert ft.tensor(np.float64(1.5)).dtype == ft.float64

    def test_tensor_copies_its_numpy_source(self):
        arr = np.array([1.0, 2.0])
        t = ft.tensor(arr)
        arr[0] = 100.0
        assert t.tolist() == [1.0, 2.0]

    def test_dtype_argument(self):
        t = ft.tensor([1, 2], dtype=ft.float64)
        assert t.dtype == ft.float64 and t.tolist() == [1.0, 2.0]
        assert ft.tensor([1.7, -2.2], dtype=ft.int64).tolist() == [1, -2]
        assert ft.tensor([0.0, 2.0], dtype=ft.bool).tolist() == [False, True]
        assert ft.tensor(np.array([1.0]), dtype=ft.float32).dtype == ft.float32

    def test_float64_from_python_floats_is_exact(self):
        assert ft.tensor([0.3, 0.1], dtype=ft.float64).tolist() == [0.3, 0.1]
        assert ft.tensor(0.3, dtype=ft.float64).item() == 0.3

    def test_float64_from_numpy_is_exact(self):
        assert ft.tensor(np.array([0.3, 0.1])).tolist() == [0.3, 0.1]
        assert ft.full((2,), 0.3, dtype=ft.float64).tolist() == [0.3, 0.3]

    def test_device_argument(self):
        t = ft.tensor([1.0, 2.0], device="cpu")
        assert t.device.type == "cpu"
        assert t.tolist() == [1.0, 2.0]

    def test_requires_grad_argument(self):
        t = ft.tensor([1.0, 2.0], requires_grad=True)
        assert t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None
        assert not ft.tensor([1.0]).requires_grad

    def test_requires_grad_needs_a_float_dtype(self):
        with pytest.raises(RuntimeError, match="floating point and complex dtype can require "
                                               "gradients"):
            ft.tensor([1, 2], requires_grad=True)

    def test_tensor_of_tensor_is_a_detached_copy(self):
        x = ft.tensor([1.0, 2.0], requires_grad=True)
        with pytest.warns(UserWarning, match="To copy construct from a tensor"):
            t = ft.tensor(x)
        assert not t.requires_grad and t.is_leaf
        assert t.tolist() == [1.0, 2.0]

    def test_0d(self):
        t = ft.tensor(2.5)
        assert t.shape == () and t.dim() == 0 and t.item() == 2.5


class TestFactories:
    @pytest.mark.parametrize("fn", [ft.zeros, ft.ones])
    def test_zeros_ones(self, fn):
        for t in (fn(2, 3), fn((2, 3)), fn([2, 3]), fn(ft.Size([2, 3]))):
            assert t.shape == (2, 3) and t.dtype == ft.float32
        assert fn(4).shape == (4,)
        assert fn(()).shape == ()
        expected = 0.0 if fn is ft.zeros else 1.0
        assert fn(2, 2).tolist() == [[expected] * 2] * 2
        t = fn(2, dtype=ft.float64, device="cpu", requires_grad=True)
        assert t.dtype == ft.float64 and t.requires_grad and t.is_leaf
        assert fn(3, dtype=ft.int64).dtype == ft.int64

    def test_full(self):
        assert ft.full((2, 2), 3.5).tolist() == [[3.5, 3.5], [3.5, 3.5]]
        assert ft.full((2,), 3.5).dtype == ft.float32
        assert ft.full((2,), 3).dtype == ft.int64  # PyTorch infers from the fill value
        assert ft.full((2,), True).dtype == ft.bool
        assert ft.full((2,), 3, dtype=ft.float64).dtype == ft.float64
        assert ft.full((2,), 1.0, requires_grad=True).requires_grad

    def test_arange(self):
        assert ft.arange(5).tolist() == [0, 1, 2, 3, 4] and ft.arange(5).dtype == ft.int64
        assert ft.arange(2, 5).tolist() == [2, 3, 4]
        assert ft.arange(0, 10, 3).tolist() == [0, 3, 6, 9]
        t = ft.arange(0.0, 1.0, 0.25)
        assert t.dtype == ft.float32 and t.tolist() == [0.0, 0.25, 0.5, 0.75]
        assert ft.arange(1.0, 3).dtype == ft.float32
        assert ft.arange(3, dtype=ft.float64).dtype == ft.float64
        assert ft.arange(5, 0, -2).tolist() == [5, 3, 1]

    def test_linspace(self):
        t = ft.linspace(0, 1, 5)
        assert t.dtype == ft.float32 and t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
        assert ft.linspace(-1, 1, 3, dtype=ft.float64).dtype == ft.float64
        assert ft.linspace(0, 1, 1).tolist() == [0.0]

    def test_eye(self):
        assert ft.eye(3).tolist() == np.eye(3).tolist() and ft.eye(3).dtype == ft.float32
        assert ft.eye(2, 3).shape == (2, 3) and ft.eye(2, 3).tolist() == np.eye(2, 3).tolist()
        assert ft.eye(2, dtype=ft.int64).dtype == ft.int64

    def test_randn_rand(self):
        for fn in (ft.randn, ft.rand):
            assert fn(2, 3).shape == (2, 3) and fn(2, 3).dtype == ft.float32
            assert fn((4,)).shape == (4,)
            assert fn(2, dtype=ft.float64).dtype == ft.float64
            t = fn(3, requires_grad=True)
            assert t.requires_grad and t.is_leaf
        u = ft.rand(1000)
        assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
        n = ft.randn(4000, dtype=ft.float64)
        assert abs(float(n.mean())) < 0.1 and abs(float(n.std()) - 1.0) < 0.1

    def test_randint(self):
        t = ft.randint(0, 10, (3, 4))
        assert t.shape == (3, 4) and t.dtype == ft.int64
        assert int(t.min()) >= 0 and int(t.max()) < 10
        big = ft.randint(-3, 3, (500,))
        assert set(big.tolist()) == set(range(-3, 3))

    def test_randint_high_size_overload(self):
        t = ft.randint(5, (2, 2))
        assert t.shape == (2, 2) and int(t.max()) < 5

    def test_like_functions(self):
        x = ft.tensor([[1.0, 2.0]], dtype=ft.float64)
        i = ft.tensor([1, 2])
        assert ft.zeros_like(x).tolist() == [[0.0, 0.0]] and ft.zeros_like(x).dtype == ft.float64
        assert ft.ones_like(i).tolist() == [1, 1] and ft.ones_like(i).dtype == ft.int64
        assert ft.full_like(x, 7.0).tolist() == [[7.0, 7.0]]
        assert ft.zeros_like(i, dtype=ft.float32).dtype == ft.float32
        assert ft.randn_like(x).shape == (1, 2) and ft.randn_like(x).dtype == ft.float64
        assert ft.rand_like(x).shape == (1, 2)
        r = ft.ones_like(x, requires_grad=True)
        assert r.requires_grad and r.is_leaf
        # a *_like of a tensor that requires grad is a new leaf that does not
        assert not ft.zeros_like(ft.ones(2, requires_grad=True)).requires_grad

    def test_manual_seed_reproducibility(self):
        def draw():
            return (ft.randn(3, 2).tolist(), ft.rand(4).tolist(),
                    ft.randint(0, 100, (5,)).tolist(), ft.randn_like(ft.zeros(2)).tolist())

        ft.manual_seed(1234)
        first = draw()
        ft.manual_seed(1234)
        assert draw() == first
        ft.manual_seed(4321)
        assert draw() != first
        # without reseeding, successive draws differ
        ft.manual_seed(0)
        assert ft.randn(8).tolist() != ft.randn(8).tolist()

    def test_factories_match_torch(self):
        torch = _torch()
        for expr in ["L.zeros(2, 3)", "L.ones(4)", "L.full((2, 2), 3.5)", "L.full((2,), 3)",
                     "L.full((2,), True)", "L.arange(5)", "L.arange(1.0, 3)", "L.arange(0, 10, 3)",
                     "L.linspace(0, 1, 5)", "L.linspace(-2, 2, 4)", "L.eye(3)", "L.eye(2, 3)",
                     "L.zeros(2, dtype=L.int64)", "L.ones(2, 2, dtype=L.float64)"]:
            a = eval(expr, {"L": ft})
            b = eval(expr, {"L": torch})
            assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], expr
            assert a.shape == tuple(b.shape), expr
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, err_msg=expr)


# ================================================================================== repr

# (expression over L = funcgrad or torch, PyTorch 2.13's repr with "torch." -> "funcgrad.")
REPR_CASES = [
    ("L.tensor(3.0)", "tensor(3.)"),
    ("L.tensor(-0.5)", "tensor(-0.5000)"),
    ("L.tensor(3)", "tensor(3)"),
    ("L.tensor(True)", "tensor(True)"),
    ("L.tensor(2.5, dtype=L.float64)", "tensor(2.5000, dtype=torch.float64)"),
    ("L.tensor([1.0, 2.0, 3.0])", "tensor([1., 2., 3.])"),
    ("L.tensor([1, 2, 3])", "tensor([1, 2, 3])"),
    ("L.tensor([-1, 20, -300])", "tensor([  -1,   20, -300])"),
    ("L.tensor([True, False])", "tensor([ True, False])"),
    ("L.tensor([-1.5, 2.25, 3.0])", "tensor([-1.5000,  2.2500,  3.0000])"),
    ("L.tensor([0.1, 0.2])", "tensor([0.1000, 0.2000])"),
    ("L.tensor([1.0, 2.0, 3.5])", "tensor([1.0000, 2.0000, 3.5000])"),
    ("L.tensor([123.456])", "tensor([123.4560])"),
    ("L.tensor([1.23456789])", "tensor([1.2346])"),
    ("L.tensor([[1.0, 2.0], [3.0, 4.0]])", "tensor([[1., 2.],\n        [3., 4.]])"),
    ("L.tensor([[1.5, 2.0], [3.0, -4.25]])",
     "tensor([[ 1.5000,  2.0000],\n        [ 3.0000, -4.2500]])"),
    ("L.tensor([[-1, 20], [300, -4]])", "tensor([[ -1,  20],\n        [300,  -4]])"),
    ("L.tensor([[True], [False]])", "tensor([[ True],\n        [False]])"),
    ("L.tensor([[[1., 2.], [3., 4.]], [[5., 6.], [7., 8.]]])",
     "tensor([[[1., 2.],\n         [3., 4.]],\n\n        [[5., 6.],\n         [7., 8.]]])"),
    ("L.ones(2, 2, 2, 2)",
     "tensor([[[[1., 1.],\n          [1., 1.]],\n\n         [[1., 1.],\n          [1., 1.]]],"
     "\n\n\n        [[[1., 1.],\n          [1., 1.]],\n\n         [[1., 1.],\n          "
     "[1., 1.]]]])"),
    ("L.tensor([1.0, 2.0], dtype=L.float64)", "tensor([1., 2.], dtype=torch.float64)"),
    ("L.tensor([[1e-5, 1.0], [2.0, 3.0]], dtype=L.float64)",
     "tensor([[1.0000e-05, 1.0000e+00],\n        [2.0000e+00, 3.0000e+00]], "
     "dtype=torch.float64)"),
    ("L.tensor([1, 2], dtype=L.int32)", "tensor([1, 2], dtype=torch.int32)"),
    ("L.tensor([1, 2], dtype=L.int8)", "tensor([1, 2], dtype=torch.int8)"),
    ("L.tensor([1.0, 2.0], dtype=L.float16)", "tensor([1., 2.], dtype=torch.float16)"),
    ("L.tensor([1e10, 1.0])", "tensor([1.0000e+10, 1.0000e+00])"),
    ("L.tensor([1e-5, 1.0])", "tensor([1.0000e-05, 1.0000e+00])"),
    ("L.tensor(1e-8)", "tensor(1.0000e-08)"),
    ("L.tensor(1e20)", "tensor(1.0000e+20)"),
    ("L.tensor([1e9, 2e9])", "tensor([1.0000e+09, 2.0000e+09])"),
    ("L.tensor([2.5e8, 1.5])", "tensor([2.5000e+08, 1.5000e+00])"),
    ("L.tensor(12345678.0)", "tensor(12345678.)"),
    ("L.tensor([5e-5])", "tensor([5.0000e-05])"),
    ("L.tensor([0.001, 0.5])", "tensor([0.0010, 0.5000])"),
    ("L.tensor([10000.5, 100.0])", "tensor([10000.5000,   100.0000])"),
    ("L.tensor([1.0, 1000.0])", "tensor([   1., 1000.])"),
    ("L.tensor([-5.5, 3.25, 1000.125])", "tensor([  -5.5000,    3.2500, 1000.1250])"),
    ("L.tensor([float('nan')])", "tensor([nan])"),
    ("L.tensor([float('-inf'), 2.5])", "tensor([  -inf, 2.5000])"),
    ("L.tensor([])", "tensor([])"),
    ("L.zeros(0, 3)", "tensor([], size=(0, 3))"),
    ("L.zeros(2, 3)", "tensor([[0., 0., 0.],\n        [0., 0., 0.]])"),
    ("L.tensor([0., 0.])", "tensor([0., 0.])"),
    ("L.tensor(0.)", "tensor(0.)"),
    ("L.arange(5)", "tensor([0, 1, 2, 3, 4])"),
    ("L.arange(0., 1., 0.25)", "tensor([0.0000, 0.2500, 0.5000, 0.7500])"),
    ("L.linspace(0, 1, 5)", "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])"),
    ("L.eye(2)", "tensor([[1., 0.],\n        [0., 1.]])"),
    ("L.arange(12).reshape(3, 4) * 1.5",
     "tensor([[ 0.0000,  1.5000,  3.0000,  4.5000],\n        [ 6.0000,  7.5000,  9.0000, "
     "10.5000],\n        [12.0000, 13.5000, 15.0000, 16.5000]])"),
    ("L.tensor([1.0, 2.0], requires_grad=True)", "tensor([1., 2.], requires_grad=True)"),
    ("L.tensor([1.5, -2.0], dtype=L.float64, requires_grad=True)",
     "tensor([ 1.5000, -2.0000], dtype=torch.float64, requires_grad=True)"),
    ("L.zeros(2, requires_grad=True)", "tensor([0., 0.], requires_grad=True)"),
    ("L.tensor(3.0, requires_grad=True)", "tensor(3., requires_grad=True)"),
    ("L.tensor([0.1, -0.2], requires_grad=True) * 2",
     "tensor([ 0.2000, -0.4000], grad_fn=<MulBackward0>)"),
    ("L.tensor([1.5], dtype=L.float64, requires_grad=True) * 2",
     "tensor([3.], dtype=torch.float64, grad_fn=<MulBackward0>)"),
    ("L.tensor([[1., 2.], [3., 4.]], requires_grad=True).exp()",
     "tensor([[ 2.7183,  7.3891],\n        [20.0855, 54.5981]], grad_fn=<ExpBackward0>)"),
]


REPR_BUGS = [
    pytest.param("L.tensor([1.0, 2000.0])", "tensor([1.0000e+00, 2.0000e+03])",
                 id="ratio-int"),
    pytest.param("L.tensor([123456.789, 1.0])", "tensor([1.2346e+05, 1.0000e+00])",
                 id="ratio-float"),
    pytest.param("L.tensor([100.5, -0.001])", "tensor([ 1.0050e+02, -1.0000e-03])",
                 id="ratio-small"),
    pytest.param("L.tensor([float('nan'), 1.0])", "tensor([nan, 1.])",
                 id="nan-width"),
    pytest.param("L.tensor([-0.0, 1.0])", "tensor([-0., 1.])",
                 id="negzero-width"),
    pytest.param("L.arange(20)",
                 "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, "
                 "17,\n        18, 19])",
                 id="wrap"),
    pytest.param("L.zeros(2000)", "tensor([0., 0., 0.,  ..., 0., 0., 0.])",
                 id="summarize"),
    pytest.param("L.zeros(2, 0)", "tensor([], size=(2, 0))",
                 id="empty-2d"),
    pytest.param("L.tensor([1e8])", "tensor([100000000.])",
                 id="1e8"),
    pytest.param("L.tensor([1e-4])", "tensor([1.0000e-04])",
                 id="1e-4"),
]


def _repr_of(expr: str, lib: Any) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return repr(eval(expr, {"L": lib}))


@pytest.mark.parametrize("expr,expected", REPR_CASES + REPR_BUGS)
def test_repr_text(expr, expected):
    assert _repr_of(expr, ft) == expected


@pytest.mark.parametrize("expr,expected", REPR_CASES + REPR_BUGS)
def test_repr_matches_torch(expr, expected):
    """Keeps the literal table honest and compares against the live oracle."""
    torch = _torch()
    theirs = _repr_of(expr, torch)
    assert theirs == expected  # the table itself is PyTorch's text
    assert _repr_of(expr, ft) == theirs


# grad_fn names in reprs: the ops whose names must match PyTorch's.
GRAD_FN_CASES = [
    ("x + y", "AddBackward0"), ("x - y", "SubBackward0"), ("x * y", "MulBackward0"),
    ("x / y", "DivBackward0"), ("x.mean()", "MeanBackward0"), ("x.sum()", "SumBackward0"),
    ("x ** 2", "PowBackward0"), ("x.pow(3)", "PowBackward0"), ("x.exp()", "ExpBackward0"),
    ("x + 1", "AddBackward0"), ("x * 2", "MulBackward0"), ("-x", "NegBackward0"),
    ("x.log()", "LogBackward0"), ("x.sin()", "SinBackward0"), ("x.tanh()", "TanhBackward0"),
    ("x.sigmoid()", "SigmoidBackward0"), ("x.relu()", "ReluBackward0"),
    ("x.sqrt()", "SqrtBackward0"), ("x.abs()", "AbsBackward0"),
    ("x.softmax(0)", "SoftmaxBackward0"), ("x.log_softmax(0)", "LogSoftmaxBackward0"),
    ("m @ m", "MmBackward0"), ("m.view(4)", "ViewBackward0"),
    ("m.reshape(4)", "ViewBackward0"), ("m.transpose(0, 1)", "TransposeBackward0"),
    ("m.permute(1, 0)", "PermuteBackward0"), ("x.unsqueeze(0)", "UnsqueezeBackward0"),
    ("x.expand(2, 2)", "ExpandBackward0"), ("x.clone()", "CloneBackward0"),
    ("x.prod()", "ProdBackward0"), ("x.std()", "StdBackward0"), ("x.var()", "VarBackward0"),
    ("m.t()", "TBackward0"), ("x.to(L.float64)", "ToCopyBackward0"),
    ("m.squeeze()", "SqueezeBackward0"), ("m[None].squeeze(0)", "SqueezeBackward1"),
    ("m[None].squeeze((0, 1))", "SqueezeBackward2"),
    # In-place shape changes are overloads of their own in PyTorch.
    ("m.clone().t_()", "TBackward1"), ("m.clone().transpose_(0, 1)", "TransposeBackward1"),
    ("m.clone().swapdims_(0, 1)", "TransposeBackward1"),
    ("m[None].clone().squeeze_()", "SqueezeBackward3"),
    ("m[None].clone().squeeze_(0)", "SqueezeBackward4"),
    ("m[None].clone().squeeze_((0,))", "SqueezeBackward5"),
    ("x.clone().unsqueeze_(0)", "UnsqueezeBackward1"),
    ("m.clone().as_strided_((2,), (1,))", "AsStridedBackward1"),
    ("L.bmm(m[None], m[None])", "BmmBackward0"), ("L.quantile(x, 0.5)", "SqueezeBackward4"),
    ("L.quantile(m, L.tensor([0.25, 0.5]), dim=0)", "SqueezeBackward4"),
    ("L.nn.functional.pairwise_distance(m, m + 1)", "NormBackward1"),
    ("L.nn.functional.cross_entropy(m, m.detach().softmax(1))", "DivBackward1"),
    ("L.nn.functional.cross_entropy(m, m.detach().softmax(1), reduction='sum')",
     "NegBackward0"),
]


@pytest.mark.parametrize("expr,name", GRAD_FN_CASES)
def test_grad_fn_names(expr, name):
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        m = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        return eval(expr, {"L": lib, "x": x, "y": y, "m": m})

    out = run(ft)
    assert out.grad_fn.name() == name
    assert repr(out).endswith(f"grad_fn=<{name}>)")
    torch = pytest.importorskip("torch", exc_type=ImportError)
    theirs = run(torch)
    assert theirs.grad_fn.name() == name
    assert repr(out) == repr(theirs)


# ======================================================= array facts and conversions


class TestArrayFacts:
    def test_shape_size_dim(self):
        t = ft.zeros(2, 3, 4)
        assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
        assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
        assert repr(t.size()) == "torch.Size([2, 3, 4])"
        assert t.dim() == 3 and t.ndim == 3 and t.numel() == 24
        assert ft.tensor(1.0).dim() == 0 and ft.tensor(1.0).shape == ()
        assert len(t) == 2

    def test_dtype_and_device(self):
        assert ft.zeros(2).dtype == ft.float32
        assert ft.zeros(2, dtype=ft.float64).dtype == ft.float64
        assert ft.tensor([1]).dtype == ft.int64 == ft.long
        assert ft.float == ft.float32 and ft.double == ft.float64
        assert ft.zeros(2).device.type == "cpu"
        assert not ft.zeros(2).is_cuda

    def test_device_reads_like_torch(self):
        d = ft.zeros(2).device
        assert str(d) == "cpu"
        assert d.type == "cpu"

    def test_item(self):
        assert ft.tensor([3.5]).item() == 3.5 and isinstance(ft.tensor(3.5).item(), float)
        assert ft.tensor(3).item() == 3 and isinstance(ft.tensor(3).item(), int)
        assert ft.tensor([[True]]).item() is True
        x = ft.tensor([1.0, 2.0], requires_grad=True)
        assert x.sum().item() == 3.0  # item() works on tensors that require grad
        with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted "
                                               "to Scalar"):
            x.item()
        assert float(ft.tensor(2.5)) == 2.5 and int(ft.tensor(7)) == 7

    def test_tolist(self):
        assert ft.tensor(2.0).tolist() == 2.0
        assert ft.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
        assert ft.tensor([True, False]).tolist() == [True, False]
        assert ft.tensor([1.5], requires_grad=True).tolist() == [1.5]

    def test_numpy(self):
        t = ft.tensor([1.0, 2.0])
        a = t.numpy()
        assert isinstance(a, np.ndarray) and a.dtype == np.float32
        assert a.tolist() == [1.0, 2.0]
        a[0] = 10.0  # PyTorch: numpy() shares memory with the tensor
        assert t.tolist() == [10.0, 2.0]
        assert np.asarray(ft.tensor([1, 2])).dtype == np.int64

    def test_numpy_on_requires_grad_raises_pytorch_text(self):
        x = ft.tensor([1.0], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            x.numpy()
        assert str(e.value) == ("Can't call numpy() on Tensor that requires grad. Use "
                                "tensor.detach().numpy() instead.")
        assert x.detach().numpy().tolist() == [1.0]
        with pytest.raises(RuntimeError, match="Can't call numpy"):
            (x * 2).numpy()

    def test_to_and_cpu(self):
        t = ft.tensor([1.0, 2.0])
        for moved in (t.to("cpu"), t.cpu(), t.to(device="cpu")):
            assert moved.device.type == "cpu" and moved.tolist() == [1.0, 2.0]
        d = t.to(ft.float64)
        assert d.dtype == ft.float64 and d.tolist() == [1.0, 2.0]
        assert t.to("cpu", ft.float64).dtype == ft.float64
        assert t.to(dtype=ft.int64).tolist() == [1, 2]
        assert t.double().dtype == ft.float64 and t.long().dtype == ft.int64
        assert t.float().dtype == ft.float32 and t.int().dtype == ft.int32
        assert t.bool().dtype == ft.bool

    def test_to_float64_is_differentiable(self):
        x = ft.tensor([1.0, 2.0], requires_grad=True)
        y = x.to(ft.float64)
        (y * y).sum().backward()
        assert x.grad.dtype == ft.float32 and x.grad.tolist() == [2.0, 4.0]

    def test_to_same_device_returns_self(self):
        x = ft.tensor([1.0, 2.0], requires_grad=True)
        assert x.to("cpu") is x
        assert x.cpu() is x
        assert x.cpu().is_leaf


# ===================================================================== dtype rules


DTYPE_CASES = [
    ("L.tensor([1, 2]) * 2.5", "float32"),
    ("L.tensor([1, 2]) / L.tensor([2, 2])", "float32"),
    ("L.tensor([1, 2]) / 2", "float32"),
    ("L.tensor(3) / 2", "float32"),
    ("L.tensor([1., 2.]) + 1.5", "float32"),
    ("L.tensor([1., 2.]) * 1e10", "float32"),
    ("L.tensor([1, 2]) + 1", "int64"),
    ("L.tensor([1, 2], dtype=L.int32) + 5", "int32"),
    ("L.tensor([1, 2], dtype=L.int32) + L.tensor([1, 2])", "int64"),
    ("L.tensor([1., 2.]) + L.tensor([1.], dtype=L.float64)", "float64"),
    ("L.tensor([1, 2]) + L.tensor([1.5])", "float32"),
    ("L.tensor([1, 2]) + L.tensor(1.5, dtype=L.float64)", "float64"),
    ("L.tensor([1, 2]) * L.tensor(2.5)", "float32"),
    ("L.tensor([True]) + 1", "int64"),
    ("L.tensor([True]) + 1.5", "float32"),
    ("L.tensor([1, 2], dtype=L.float16) + 1.5", "float16"),
    ("L.tensor([1, 2], dtype=L.float16) + L.tensor([1.])", "float32"),
    ("L.tensor([1, 2], dtype=L.float64) * 2", "float64"),
    ("L.tensor([1, 2], dtype=L.uint8) + L.tensor([1], dtype=L.int8)", "int16"),
    ("L.tensor([1, 2]) // 2", "int64"),
    ("L.tensor([1, 2]) % 3", "int64"),
    ("L.tensor([1, 2]) ** 2", "int64"),
    ("L.tensor([1, 2]) ** 2.0", "float32"),
    ("2.0 ** L.tensor([1, 2])", "float32"),
    ("-L.tensor([1, 2])", "int64"),
    ("L.tensor([1, 2]) > 1", "bool"),
    ("L.tensor([1., 2.]) == 1.0", "bool"),
    ("L.tensor([1, 2]).sum()", "int64"),
    ("L.tensor([True, False]).sum()", "int64"),
    ("L.tensor([1, 2]).prod()", "int64"),
    ("L.tensor([1, 2]).max()", "int64"),
    ("L.tensor([1, 2]).argmax()", "int64"),
    ("L.tensor([1, 2]).exp()", "float32"),
    ("L.tensor([1, 2]).sqrt()", "float32"),
    ("L.tensor([1, 2]).sigmoid()", "float32"),
    ("L.tensor([1, 2]).abs()", "int64"),
    ("L.tensor([1, 2]).clamp(0, 1)", "int64"),
    ("L.tensor([1, 2]).clamp(0.5, 1)", "float32"),
    ("L.zeros(2, dtype=L.int64) + 0.5", "float32"),
    ("L.arange(3) * 0.5", "float32"),
    ("L.tensor([1., 2.]).mean()", "float32"),
    ("L.tensor([1., 2.]).softmax(0)", "float32"),
    ("L.tensor(np.array([1., 2.], dtype=np.float32)) * np.float64(2.0)", "float32"),
    ("L.tensor([1.], dtype=L.float64, requires_grad=True) * 2", "float64"),
    ("(L.tensor([1.], dtype=L.float64, requires_grad=True) * 2).sum()", "float64"),
    ("L.tensor([1.], requires_grad=True).exp()", "float32"),
]

DTYPE_BUGS = [
    pytest.param("L.tensor([1., 2.]) + L.tensor(1., dtype=L.float64)", "float32",
                 id="0d-float64"),
    pytest.param("L.tensor([1, 2], dtype=L.int32) + L.tensor(5)", "int32", id="0d-int64"),
]


def _dtype_name(dt) -> str:
    return str(dt).split(".")[-1]


@pytest.mark.parametrize("expr,expected", DTYPE_CASES + DTYPE_BUGS)
def test_dtype_rules(expr, expected):
    assert _dtype_name(eval(expr, {"L": ft, "np": np}).dtype) == expected


@pytest.mark.parametrize("expr,expected", DTYPE_CASES + DTYPE_BUGS)
def test_dtype_rules_match_torch(expr, expected):
    torch = _torch()
    assert _dtype_name(eval(expr, {"L": torch, "np": np}).dtype) == expected
    assert _dtype_name(eval(expr, {"L": ft, "np": np}).dtype) == expected


def test_int_true_division_values():
    assert (ft.tensor([1, 3]) / ft.tensor([2, 2])).tolist() == [0.5, 1.5]
    assert (ft.tensor([7]) // 2).tolist() == [3]


# ================================================================ operators and methods


class TestOperators:
    def test_arithmetic_with_python_scalars(self):
        t = ft.tensor([1.0, 2.0, 4.0])
        assert (t + 1).tolist() == [2.0, 3.0, 5.0]
        assert (t - 1).tolist() == [0.0, 1.0, 3.0]
        assert (t * 2).tolist() == [2.0, 4.0, 8.0]
        assert (t / 2).tolist() == [0.5, 1.0, 2.0]
        assert (t ** 2).tolist() == [1.0, 4.0, 16.0]
        assert (t // 3).tolist() == [0.0, 0.0, 1.0]
        assert (t % 3).tolist() == [1.0, 2.0, 1.0]

    def test_reflected_operators(self):
        t = ft.tensor([1.0, 2.0, 4.0])
        assert (1 + t).tolist() == [2.0, 3.0, 5.0]
        assert (10 - t).tolist() == [9.0, 8.0, 6.0]
        assert (3 * t).tolist() == [3.0, 6.0, 12.0]
        assert (8 / t).tolist() == [8.0, 4.0, 2.0]
        assert (2 ** t).tolist() == [2.0, 4.0, 16.0]
        for r in (1 + t, 10 - t, 3 * t, 8 / t, 2 ** t):
            assert isinstance(r, ft.Tensor) and r.dtype == ft.float32

    def test_numpy_array_on_the_left_is_refused_as_in_pytorch(self):
        # PyTorch 2.13 (NumPy 2): NumPy's operator defers to the tensor, whose reflected
        # operator does not take arrays, so ``array * tensor`` is a TypeError.
        t = ft.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(TypeError, match="unsupported operand"):
            np.array([2.0, 3.0]) * t

    def test_broadcasting(self):
        a = ft.ones(3, 1)
        b = ft.arange(4.0)
        assert (a + b).shape == (3, 4)
        assert (ft.ones(2, 3, 4) * ft.ones(4)).shape == (2, 3, 4)
        assert (ft.ones(2, 1, 4) - ft.ones(3, 1)).shape == (2, 3, 4)
        with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size "
                                               r"of tensor b \(4\) at non-singleton dimension 0"):
            ft.ones(3) + ft.ones(4)

    def test_matmul_operator_and_functions(self):
        a = ft.tensor([[1.0, 2.0], [3.0, 4.0]])
        x = ft.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
        assert (a @ a).tolist() == [[7.0, 10.0], [15.0, 22.0]]
        r = ft.matmul(a, x.T)
        assert isinstance(r, ft.Tensor) and r.tolist() == [[1.0, 4.0, 3.0], [3.0, 8.0, 7.0]]
        assert a.matmul(a).tolist() == a.mm(a).tolist() == (a @ a).tolist()
        v = ft.tensor([1.0, 1.0])
        assert (a @ v).tolist() == [3.0, 7.0] and (v @ v).shape == ()
        assert (ft.ones(5, 2, 3) @ ft.ones(3, 4)).shape == (5, 2, 4)
        assert v.dot(v).item() == 2.0

    def test_comparisons(self):
        t = ft.tensor([1.0, 2.0, 3.0])
        u = ft.tensor([3.0, 2.0, 1.0])
        assert (t < 2).tolist() == [True, False, False]
        assert (t <= 2).tolist() == [True, True, False]
        assert (t > u).tolist() == [False, False, True]
        assert (t >= u).tolist() == [False, True, True]
        assert (t == u).tolist() == [False, True, False]
        assert (t != u).tolist() == [True, False, True]
        assert (2 < t).tolist() == [False, False, True]  # reflected through __gt__
        assert t.eq(u).tolist() == [False, True, False]
        x = ft.tensor([1.0], requires_grad=True)
        c = x > 0
        assert c.dtype == ft.bool and not c.requires_grad and c.grad_fn is None

    def test_top_level_functions_take_and_return_tensors(self):
        t = ft.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        s = ft.sum(t, dim=1)
        assert isinstance(s, ft.Tensor) and s.tolist() == [3.0, 7.0] and s.requires_grad
        assert ft.sum(t, dim=0, keepdim=True).shape == (1, 2)
        e = ft.exp(t)
        assert isinstance(e, ft.Tensor) and e.requires_grad
        close(e.detach().numpy(), np.exp([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)
        assert isinstance(ft.mean(t, dim=0), ft.Tensor)
        assert isinstance(ft.tanh(t), ft.Tensor)
        (ft.sum(ft.exp(t), dim=1).sum()).backward()
        close(t.grad.numpy(), np.exp([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)


class TestShapeOps:
    def test_T_and_mT(self):
        m = ft.arange(6.0).reshape(2, 3)
        assert m.T.shape == (3, 2) and m.T.tolist() == np.arange(6.0).reshape(2, 3).T.tolist()
        b = ft.arange(24.0).reshape(2, 3, 4)
        assert b.mT.shape == (2, 4, 3)
        assert b.mT.tolist() == np.swapaxes(np.arange(24.0).reshape(2, 3, 4), -1, -2).tolist()
        assert m.t().shape == (3, 2)
        with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions, "
                                               "but self is 3D"):
            b.t()

    def test_view_reshape_flatten(self):
        t = ft.arange(24.0)
        assert t.view(2, 3, 4).shape == (2, 3, 4)
        assert t.view(-1, 4).shape == (6, 4)
        assert t.view((4, 6)).shape == (4, 6)
        assert t.reshape(2, -1).shape == (2, 12)
        assert t.reshape((3, 8)).shape == (3, 8)
        b = t.view(2, 3, 4)
        assert b.flatten().shape == (24,)
        assert b.flatten(1).shape == (2, 12)
        assert b.flatten(0, 1).shape == (6, 4)
        assert b.flatten(-2).shape == (2, 12)
        assert ft.tensor(3.0).flatten().shape == (1,)
        assert b.view_as(ft.zeros(6, 4)).shape == (6, 4)

    def test_permute_transpose(self):
        b = ft.zeros(2, 3, 4)
        assert b.permute(2, 0, 1).shape == (4, 2, 3)
        assert b.permute((1, 2, 0)).shape == (3, 4, 2)
        assert b.transpose(0, 2).shape == (4, 3, 2)
        assert b.transpose(-1, -2).shape == (2, 4, 3)

    def test_unsqueeze_squeeze(self):
        t = ft.zeros(3, 4)
        assert t.unsqueeze(0).shape == (1, 3, 4)
        assert t.unsqueeze(1).shape == (3, 1, 4)
        assert t.unsqueeze(-1).shape == (3, 4, 1)
        s = ft.zeros(1, 3, 1, 4)
        assert s.squeeze().shape == (3, 4)
        assert s.squeeze(0).shape == (3, 1, 4)
        assert s.squeeze(2).shape == (1, 3, 4)
        assert s.squeeze(1).shape == (1, 3, 1, 4)  # PyTorch: no-op on a non-1 dim

    def test_expand_contiguous(self):
        v = ft.tensor([1.0, 2.0, 3.0])
        e = v.expand(2, 3)
        assert e.shape == (2, 3) and e.tolist() == [[1.0, 2.0, 3.0]] * 2
        assert v.expand(4, -1).shape == (4, 3)
        assert ft.zeros(3, 1).expand(3, 5).shape == (3, 5)
        assert v.expand_as(ft.zeros(2, 3)).shape == (2, 3)
        c = ft.zeros(2, 3).T.contiguous()
        assert c.shape == (3, 2)

    def test_views_share_memory(self):
        t = ft.zeros(2, 3)
        v = t.view(6)
        tt = t.T
        row = t[1]
        t[1, 2] = 5.0
        assert v.tolist()[5] == 5.0
        assert tt.tolist()[2][1] == 5.0
        assert row.tolist() == [0.0, 0.0, 5.0]


class TestIndexing:
    def setup_method(self):
        self.a = np.arange(12.0).reshape(3, 4)
        self.t = ft.tensor(self.a)

    def test_basic(self):
        t, a = self.t, self.a
        assert t[1].tolist() == a[1].tolist()
        assert t[1, 2].item() == a[1, 2] and t[1, 2].shape == ()
        assert t[:, 1].tolist() == a[:, 1].tolist()
        assert t[1:, ::2].tolist() == a[1:, ::2].tolist()
        assert t[-1, -2:].tolist() == a[-1, -2:].tolist()
        assert t[..., 0].tolist() == a[..., 0].tolist()
        assert t[None, 0].shape == (1, 4)
        assert t[:, None].shape == (3, 1, 4)

    def test_advanced(self):
        t, a = self.t, self.a
        assert t[[0, 2, 2]].tolist() == a[[0, 2, 2]].tolist()
        assert t[[0, 2], [1, 3]].tolist() == a[[0, 2], [1, 3]].tolist()
        idx = ft.tensor([2, 0])
        assert t[idx].tolist() == a[[2, 0]].tolist()
        assert t[idx, idx].tolist() == a[[2, 0], [2, 0]].tolist()
        assert t[1, ft.tensor([3, 0])].tolist() == a[1, [3, 0]].tolist()

    def test_boolean_mask(self):
        t, a = self.t, self.a
        assert t[t > 5].tolist() == a[a > 5].tolist()
        rows = ft.tensor([True, False, True])
        assert t[rows].tolist() == a[[True, False, True]].tolist()
        assert t[t > 100].shape == (0,)

    def test_tensor_scalar_index(self):
        assert self.t[ft.tensor(1)].tolist() == self.a[1].tolist()


class TestSetItem:
    def test_setitem_is_in_place(self):
        t = ft.zeros(2, 3)
        alias = t
        before = id(t)
        t[0, 1] = 5.0
        assert id(t) == before and alias.tolist() == [[0.0, 5.0, 0.0], [0.0, 0.0, 0.0]]

    def test_setitem_forms(self):
        t = ft.zeros(3, 4)
        t[0] = 1.0
        t[1, 1:3] = ft.tensor([2.0, 3.0])
        t[:, -1] = ft.tensor([7.0, 8.0, 9.0])
        t[2, [0, 2]] = ft.tensor([4.0, 5.0])
        expected = np.zeros((3, 4))
        expected[0] = 1.0
        expected[1, 1:3] = [2.0, 3.0]
        expected[:, -1] = [7.0, 8.0, 9.0]
        expected[2, [0, 2]] = [4.0, 5.0]
        assert t.tolist() == expected.tolist()
        t[t > 4] = 0.0
        expected[expected > 4] = 0.0
        assert t.tolist() == expected.tolist()
        t[ft.tensor([0, 2])] = ft.tensor([[-1.0], [-2.0]])  # broadcast value
        expected[[0, 2]] = [[-1.0], [-2.0]]
        assert t.tolist() == expected.tolist()

    def test_setitem_keeps_dtype(self):
        t = ft.zeros(3, dtype=ft.int64)
        t[0] = 2.7
        assert t.dtype == ft.int64 and t.tolist() == [2, 0, 0]
        f = ft.zeros(2)
        f[1] = ft.tensor(3, dtype=ft.int64)
        assert f.dtype == ft.float32 and f.tolist() == [0.0, 3.0]

    def test_setitem_gradient(self):
        x = ft.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = ft.tensor([5.0], requires_grad=True)
        y = x * 2
        y[1] = w[0] * 3
        assert y.grad_fn is not None and not y.is_leaf
        (y * ft.tensor([1.0, 10.0, 100.0])).sum().backward()
        assert x.grad.tolist() == [2.0, 0.0, 200.0]
        assert w.grad.tolist() == [30.0]

    def test_setitem_gradient_matches_torch(self):
        torch = _torch()

        def run(L):
            x = L.tensor(np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]), requires_grad=True)
            v = L.tensor(np.array([0.3, 0.7]), requires_grad=True)
            y = x * 3.0 + 1.0  # (exp's output would be saved: writing into it is an error)
            y[:, 1] = v * v
            y[y > 5] = 0.0
            (y.sin() * L.arange(6, dtype=L.float64).reshape(2, 3)).sum().backward()
            return as_np(y), x.grad.numpy(), v.grad.numpy()

        for a, b in zip(run(ft), run(torch)):
            close(a, b)


class TestReductions:
    A = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])

    def test_sum_mean(self):
        t, a = ft.tensor(self.A), self.A
        assert t.sum().item() == a.sum()
        assert t.sum(0).tolist() == a.sum(0).tolist()
        assert t.sum(dim=1).tolist() == a.sum(1).tolist()
        assert t.sum(1, keepdim=True).shape == (2, 1)
        assert t.sum(dim=(0, 1)).item() == a.sum()
        assert t.sum([0, 1]).item() == a.sum()
        assert t.sum(-1).tolist() == a.sum(-1).tolist()
        close(t.mean().item(), a.mean())
        close(t.mean(1).numpy(), a.mean(1))
        assert t.mean(dim=0, keepdim=True).shape == (1, 3)

    def test_sum_mean_dtype_argument(self):
        assert ft.tensor([1, 2]).sum(dtype=ft.float64).dtype == ft.float64
        assert ft.tensor([1.0, 2.0]).mean(dtype=ft.float64).dtype == ft.float64

    def test_max_min_with_dim(self):
        t, a = ft.tensor(self.A), self.A
        assert t.max().item() == 6.0 and t.min().item() == 1.0
        values, indices = t.max(dim=1)
        assert values.tolist() == a.max(1).tolist()
        assert indices.tolist() == a.argmax(1).tolist() and indices.dtype == ft.int64
        r = t.min(0)
        assert r.values.tolist() == a.min(0).tolist()
        assert r.indices.tolist() == a.argmin(0).tolist()
        assert r[0].tolist() == r.values.tolist()
        k = t.max(1, keepdim=True)
        assert k.values.shape == (2, 1) and k.indices.shape == (2, 1)
        assert t.max(ft.tensor([[3.0, 3.0, 3.0]] * 2)).tolist() == np.maximum(a, 3).tolist()
        x = ft.tensor(self.A, requires_grad=True)
        v, i = x.max(1)
        assert v.requires_grad and not i.requires_grad and i.grad_fn is None

    def test_argmax(self):
        t, a = ft.tensor(self.A), self.A
        assert t.argmax().item() == a.argmax() and t.argmax().dtype == ft.int64
        assert t.argmax(1).tolist() == a.argmax(1).tolist()
        assert t.argmax(dim=0, keepdim=True).shape == (1, 3)
        assert t.argmin(1).tolist() == a.argmin(1).tolist()

    def test_prod(self):
        t, a = ft.tensor(self.A), self.A
        assert t.prod().item() == a.prod()
        assert t.prod(1).tolist() == a.prod(1).tolist()
        assert t.prod(0, keepdim=True).shape == (1, 3)

    def test_std_var_unbiased_by_default(self):
        t, a = ft.tensor(self.A, dtype=ft.float64), self.A
        close(t.var().item(), a.var(ddof=1))
        close(t.std().item(), a.std(ddof=1))
        close(t.var(1).numpy(), a.var(1, ddof=1))
        close(t.std(0).numpy(), a.std(0, ddof=1))
        close(t.var(1, unbiased=False).numpy(), a.var(1))
        close(t.std(dim=1, keepdim=True).numpy(), a.std(1, ddof=1, keepdims=True))
        close(t.var(1, correction=0).numpy(), a.var(1))

    def test_reductions_match_torch(self):
        torch = _torch()
        for expr in ["t.sum()", "t.sum(0)", "t.sum(dim=1, keepdim=True)", "t.mean()",
                     "t.mean(1)", "t.max()", "t.max(1).values", "t.max(1).indices",
                     "t.min(dim=0, keepdim=True)[0]", "t.min(0)[1]", "t.argmax()",
                     "t.argmax(1)", "t.argmin(0)", "t.prod(1)", "t.std()", "t.var(1)",
                     "t.std(0, keepdim=True)", "t.var(unbiased=False)", "t.amax(1)",
                     "t.logsumexp(1)", "t.norm()", "t.cumsum(1)"]:
            mine = eval(expr, {"t": ft.tensor(self.A)})
            theirs = eval(expr, {"t": torch.tensor(self.A)})
            assert mine.shape == tuple(theirs.shape), expr
            assert _dtype_name(mine.dtype) == _dtype_name(theirs.dtype), expr
            close(mine.numpy(), theirs.numpy(), rtol=1e-12)


class TestElementwise:
    @pytest.mark.filterwarnings("ignore::RuntimeWarning")
    def test_values_match_numpy(self):
        a = np.array([[-1.5, -0.2, 0.0], [0.3, 1.0, 2.5]])
        t = ft.tensor(a, dtype=ft.float64)
        close(t.exp().numpy(), np.exp(a))
        close(t.abs().log().numpy()[a != 0], np.log(np.abs(a[a != 0])))
        close(t.sin().numpy(), np.sin(a))
        close(t.tanh().numpy(), np.tanh(a))
        close(t.sigmoid().numpy(), 1 / (1 + np.exp(-a)))
        close(t.relu().numpy(), np.maximum(a, 0))
        e = np.exp(a - a.max(1, keepdims=True))
        close(t.softmax(1).numpy(), e / e.sum(1, keepdims=True))
        close(t.softmax(dim=1).sum(1).numpy(), np.ones(2))
        close(t.log_softmax(1).numpy(), np.log(e / e.sum(1, keepdims=True)))
        close(t.clamp(-1, 1).numpy(), np.clip(a, -1, 1))
        close(t.clamp(min=0.1).numpy(), np.maximum(a, 0.1))
        close(t.clamp(max=0.1).numpy(), np.minimum(a, 0.1))
        close(t.abs().numpy(), np.abs(a))
        close(t.abs().sqrt().numpy(), np.sqrt(np.abs(a)))
        close(t.pow(2).numpy(), a ** 2)
        close(t.abs().pow(0.5).numpy(), np.abs(a) ** 0.5)
        close(abs(t).numpy(), np.abs(a))

    def test_int_inputs_of_float_functions(self):
        i = ft.tensor([0, 1, 2])
        assert i.exp().dtype == ft.float32
        assert i.relu().dtype == ft.int64
        assert i.clamp(0, 1).tolist() == [0, 1, 1]


# ============================ every op: values and gradients vs fg.grad and vs torch


@dataclass(frozen=True)
class Op:
    name: str
    inputs: tuple[tuple[str, tuple[int, ...]], ...]  # (domain, shape) per input
    facade: Callable[..., Any]  # (L, *tensors) with L = funcgrad or torch
    functional: Callable[..., Any]  # (*arrays/tracers) written with funcgrad.numpy


def A(shape):
    return ("any", shape)


def P(shape):
    return ("pos", shape)


M, M2, V, C, B, BB = A((3, 4)), A((4, 2)), A((4,)), A((3, 1)), A((2, 3, 4)), A((2, 4, 2))


def _softmax(a, axis):
    e = fnp.exp(a - fnp.max(a, axis, keepdims=True))
    return e / fnp.sum(e, axis, keepdims=True)


def _torch_std(a, axis):
    """The standard deviation with PyTorch's derivative: 0 where all values are equal
    (PyTorch's std_backward masks them; the engine's sqrt alone would give NaN)."""
    v = fnp.var(a, axis, ddof=1)
    flat = v == 0
    return fnp.where(flat, 0.0, fnp.sqrt(fnp.where(flat, 1.0, v)))


OPS = [
    # arithmetic, scalars, reflected ops, broadcasting
    Op("add", (M, M), lambda L, a, b: a + b, lambda a, b: a + b),
    Op("sub", (M, M), lambda L, a, b: a - b, lambda a, b: a - b),
    Op("mul", (M, M), lambda L, a, b: a * b, lambda a, b: a * b),
    Op("div", (M, P((3, 4))), lambda L, a, b: a / b, lambda a, b: a / b),
    Op("scalars", (M,), lambda L, a: a * 2.5 + 1.5 - a / 4.0, lambda a: a * 2.5 + 1.5 - a / 4.0),
    Op("radd", (M,), lambda L, a: 1.5 + a, lambda a: 1.5 + a),
    Op("rsub", (M,), lambda L, a: 2.5 - a, lambda a: 2.5 - a),
    Op("rmul", (M,), lambda L, a: 2.5 * a, lambda a: 2.5 * a),
    Op("rdiv", (P((3, 4)),), lambda L, a: 3.0 / a, lambda a: 3.0 / a),
    Op("rpow", (M,), lambda L, a: 2.0 ** a, lambda a: 2.0 ** a),
    Op("pow_int", (M,), lambda L, a: a ** 3, lambda a: a ** 3),
    Op("pow_float", (P((3, 4)),), lambda L, a: a ** 2.5, lambda a: a ** 2.5),
    Op("pow_tensor", (P((3, 4)), M), lambda L, a, b: a ** b, lambda a, b: a ** b),
    Op("neg", (M,), lambda L, a: -a, lambda a: -a),
    Op("bcast_row", (M, V), lambda L, a, v: a * v + v, lambda a, v: a * v + v),
    Op("bcast_col", (M, C), lambda L, a, c: a - c, lambda a, c: a - c),
    Op("bcast_outer", (C, V), lambda L, c, v: c * v, lambda c, v: c * v),
    Op("bcast_self", (P((3, 4)),), lambda L, a: a / a.sum(1, keepdim=True),
       lambda a: a / fnp.sum(a, 1, keepdims=True)),
    # matmul
    Op("mm", (M, M2), lambda L, a, b: a @ b, lambda a, b: a @ b),
    Op("mv", (M, V), lambda L, a, v: a @ v, lambda a, v: a @ v),
    Op("vm", (V, M2), lambda L, v, b: v @ b, lambda v, b: v @ b),
    Op("dot", (V, V), lambda L, v, w: v @ w, lambda v, w: v @ w),
    Op("matmul_batched", (B, M2), lambda L, a, b: a @ b, lambda a, b: a @ b),
    Op("bmm", (B, BB), lambda L, a, b: a @ b, lambda a, b: a @ b),
    Op("ft.matmul(a, x.T)", (M, M), lambda L, a, x: L.matmul(a, x.T),
       lambda a, x: fnp.matmul(a, fnp.transpose(x))),
    Op("method_matmul", (M, M2), lambda L, a, b: a.matmul(b), lambda a, b: fnp.matmul(a, b)),
    # shapes and views
    Op("T", (M,), lambda L, a: a.T, lambda a: fnp.transpose(a)),
    Op("mT", (B,), lambda L, a: a.mT, lambda a: fnp.swapaxes(a, -1, -2)),
    Op("view", (M,), lambda L, a: a.view(4, 3), lambda a: fnp.reshape(a, (4, 3))),
    Op("view_infer", (M,), lambda L, a: a.view(-1, 2), lambda a: fnp.reshape(a, (6, 2))),
    Op("reshape", (M,), lambda L, a: a.reshape((2, 6)), lambda a: fnp.reshape(a, (2, 6))),
    Op("flatten", (B,), lambda L, a: a.flatten(), lambda a: fnp.reshape(a, (24,))),
    Op("flatten_1", (B,), lambda L, a: a.flatten(1), lambda a: fnp.reshape(a, (2, 12))),
    Op("flatten_0_1", (B,), lambda L, a: a.flatten(0, 1), lambda a: fnp.reshape(a, (6, 4))),
    Op("permute", (B,), lambda L, a: a.permute(2, 0, 1), lambda a: fnp.transpose(a, (2, 0, 1))),
    Op("transpose", (B,), lambda L, a: a.transpose(0, 2), lambda a: fnp.swapaxes(a, 0, 2)),
    Op("unsqueeze", (M,), lambda L, a: a.unsqueeze(1), lambda a: fnp.expand_dims(a, 1)),
    Op("unsqueeze_neg", (M,), lambda L, a: a.unsqueeze(-1), lambda a: fnp.expand_dims(a, -1)),
    Op("squeeze", (A((3, 1, 4)),), lambda L, a: a.squeeze(), lambda a: fnp.squeeze(a)),
    Op("squeeze_dim", (A((3, 1, 4)),), lambda L, a: a.squeeze(1), lambda a: fnp.squeeze(a, 1)),
    Op("expand", (C,), lambda L, a: a.expand(3, 4), lambda a: fnp.broadcast_to(a, (3, 4))),
    Op("expand_new", (V,), lambda L, a: a.expand(2, -1), lambda a: fnp.broadcast_to(a, (2, 4))),
    Op("contiguous", (M,), lambda L, a: a.T.contiguous(), lambda a: fnp.transpose(a)),
    Op("view_chain", (B,), lambda L, a: a.permute(1, 0, 2).reshape(3, 8).T.unsqueeze(0),
       lambda a: fnp.expand_dims(fnp.transpose(fnp.reshape(fnp.transpose(a, (1, 0, 2)),
                                                           (3, 8))), 0)),
    # indexing
    Op("idx_int", (M,), lambda L, a: a[1], lambda a: a[1]),
    Op("idx_scalar", (M,), lambda L, a: a[1, 2] * a, lambda a: a[1, 2] * a),
    Op("idx_slice", (M,), lambda L, a: a[1:, ::2], lambda a: a[1:, ::2]),
    Op("idx_neg", (M,), lambda L, a: a[-1, -2:], lambda a: a[-1, -2:]),
    Op("idx_ellipsis_none", (B,), lambda L, a: a[..., None, 1], lambda a: a[..., None, 1]),
    Op("idx_adv", (M,), lambda L, a: a[[0, 2, 2], [1, 1, 3]],
       lambda a: a[np.array([0, 2, 2]), np.array([1, 1, 3])]),
    Op("idx_adv_rows", (M,), lambda L, a: a[[2, 0, 2]], lambda a: a[np.array([2, 0, 2])]),
    Op("idx_tensor", (M,), lambda L, a: a[L.tensor([2, 0, 2])], lambda a: a[np.array([2, 0, 2])]),
    Op("idx_bool", (M, M), lambda L, a, b: a[b > 0], lambda a, b: a[b > 0]),
    # reductions
    Op("sum", (M,), lambda L, a: a.sum(), lambda a: fnp.sum(a)),
    Op("sum_0", (M,), lambda L, a: a.sum(0), lambda a: fnp.sum(a, 0)),
    Op("sum_keepdim", (M,), lambda L, a: a.sum(dim=1, keepdim=True),
       lambda a: fnp.sum(a, 1, keepdims=True)),
    Op("sum_dims", (B,), lambda L, a: a.sum(dim=(0, 2)), lambda a: fnp.sum(a, (0, 2))),
    Op("ft.sum(t, dim=1)", (M,), lambda L, a: L.sum(a, dim=1), lambda a: fnp.sum(a, axis=1)),
    Op("mean", (M,), lambda L, a: a.mean(), lambda a: fnp.mean(a)),
    Op("mean_1", (M,), lambda L, a: a.mean(1), lambda a: fnp.mean(a, 1)),
    Op("mean_keepdim", (B,), lambda L, a: a.mean(0, keepdim=True),
       lambda a: fnp.mean(a, 0, keepdims=True)),
    Op("max", (M,), lambda L, a: a.max(), lambda a: fnp.max(a)),
    Op("min", (M,), lambda L, a: a.min(), lambda a: fnp.min(a)),
    # PyTorch's max/min over a dim send a tie's gradient to the returned index.
    Op("max_dim", (M,), lambda L, a: a.max(1).values,
       lambda a: fnp.take_along_axis(a, fnp.argmax(a, 1, keepdims=True), 1)[:, 0]),
    Op("max_dim_keepdim", (M,), lambda L, a: a.max(dim=0, keepdim=True)[0],
       lambda a: fnp.take_along_axis(a, fnp.argmax(a, 0, keepdims=True), 0)),
    Op("min_dim", (M,), lambda L, a: a.min(1)[0],
       lambda a: fnp.take_along_axis(a, fnp.argmin(a, 1, keepdims=True), 1)[:, 0]),
    Op("amax", (M,), lambda L, a: a.amax(1), lambda a: fnp.max(a, 1)),
    Op("prod", (M,), lambda L, a: a.prod(), lambda a: fnp.prod(a)),
    Op("prod_dim", (M,), lambda L, a: a.prod(1), lambda a: fnp.prod(a, 1)),
    Op("std", (M,), lambda L, a: a.std(), lambda a: _torch_std(a, None)),
    Op("std_dim", (M,), lambda L, a: a.std(1), lambda a: _torch_std(a, 1)),
    Op("var", (M,), lambda L, a: a.var(), lambda a: fnp.var(a, ddof=1)),
    Op("var_keepdim", (M,), lambda L, a: a.var(0, keepdim=True),
       lambda a: fnp.var(a, 0, ddof=1, keepdims=True)),
    Op("var_biased", (M,), lambda L, a: a.var(1, unbiased=False), lambda a: fnp.var(a, 1)),
    # elementwise math
    Op("exp", (M,), lambda L, a: a.exp(), lambda a: fnp.exp(a)),
    Op("ft.exp(t)", (M,), lambda L, a: L.exp(a), lambda a: fnp.exp(a)),
    Op("log", (P((3, 4)),), lambda L, a: a.log(), lambda a: fnp.log(a)),
    Op("sin", (M,), lambda L, a: a.sin(), lambda a: fnp.sin(a)),
    Op("cos", (M,), lambda L, a: a.cos(), lambda a: fnp.cos(a)),
    Op("tanh", (M,), lambda L, a: a.tanh(), lambda a: fnp.tanh(a)),
    Op("ft.tanh(t)", (M,), lambda L, a: L.tanh(a), lambda a: fnp.tanh(a)),
    Op("sigmoid", (M,), lambda L, a: a.sigmoid(), lambda a: 1.0 / (1.0 + fnp.exp(-a))),
    Op("relu", (M,), lambda L, a: a.relu(), lambda a: fnp.where(a > 0, a, 0.0)),
    Op("softmax", (M,), lambda L, a: a.softmax(1), lambda a: _softmax(a, 1)),
    Op("softmax_0", (M,), lambda L, a: a.softmax(dim=0), lambda a: _softmax(a, 0)),
    Op("log_softmax", (M,), lambda L, a: a.log_softmax(-1),
       lambda a: a - fnp.logsumexp(a, -1, keepdims=True)),
    # PyTorch's clamp has derivative 1 at the bounds.
    Op("clamp", (M,), lambda L, a: a.clamp(-0.5, 0.5),
       lambda a: fnp.where(a < -0.5, -0.5, fnp.where(a > 0.5, 0.5, a))),
    Op("clamp_min", (M,), lambda L, a: a.clamp(min=0.1), lambda a: fnp.where(a < 0.1, 0.1, a)),
    Op("clamp_max", (M,), lambda L, a: a.clamp(max=0.1), lambda a: fnp.where(a > 0.1, 0.1, a)),
    # PyTorch's |x| has derivative sign(x) (0 at 0); the JAX face's has 1 there (sharp bits).
    Op("abs", (M,), lambda L, a: a.abs(), lambda a: a * fnp.sign(a) + 0),
    Op("sqrt", (P((3, 4)),), lambda L, a: a.sqrt(), lambda a: fnp.sqrt(a)),
    Op("pow_method", (M,), lambda L, a: a.pow(3), lambda a: a ** 3),
    Op("pow_method_float", (P((3, 4)),), lambda L, a: a.pow(0.5), lambda a: a ** 0.5),
    Op("maximum", (M, M), lambda L, a, b: L.maximum(a, b), lambda a, b: fnp.maximum(a, b)),
    # a small composite (an MLP layer with a loss)
    Op("mlp", (M, M2, A((2,))),
       lambda L, x, w, b: ((x @ w + b).tanh().log_softmax(1) * -1.0).mean(),
       lambda x, w, b: fnp.mean(-(fnp.tanh(x @ w + b)
                                  - fnp.logsumexp(fnp.tanh(x @ w + b), 1, keepdims=True)))),
]

KINKS = (0.0, 0.5, -0.5, 0.1)


def _elements(domain: str, smooth: bool):
    if domain == "pos":
        return st.floats(0.2, 3.0, allow_nan=False, allow_infinity=False)
    el = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)
    if smooth:  # away from the kinks of relu/abs/clamp (torch's subgradients differ there)
        el = el.filter(lambda v: min(abs(v - k) for k in KINKS) > 1e-3)
    return el


def _draw_inputs(data, op: Op, smooth: bool) -> list[np.ndarray]:
    # ``smooth`` also draws unique values: no ties for max/min (torch routes to one index)
    return [data.draw(hnp.arrays(np.float64, shape, elements=_elements(dom, smooth),
                                 unique=smooth), label=f"x{i}")
            for i, (dom, shape) in enumerate(op.inputs)]


def _cotangent(shape) -> np.ndarray:
    return np.random.default_rng(7).standard_normal(tuple(shape))


def _facade_value_and_grads(lib: Any, op: Op, arrays: list[np.ndarray]):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = op.facade(lib, *ts)
    w = _cotangent(out.shape)
    (out * lib.tensor(w)).sum().backward()
    grads = [np.zeros_like(a) if t.grad is None else t.grad.numpy() for t, a in zip(ts, arrays)]
    return out, grads


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # std of equal values: nan grads
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
@HYP
@given(data=st.data())
def test_op_matches_functional_engine(op, data):
    arrays = _draw_inputs(data, op, smooth=False)
    out, grads = _facade_value_and_grads(ft, op, arrays)
    assert isinstance(out, ft.Tensor) and out.dtype == ft.float64
    assert out.requires_grad and not out.is_leaf
    expected = np.asarray(op.functional(*arrays))
    assert tuple(out.shape) == expected.shape
    close(out.detach().numpy(), expected)
    w = _cotangent(expected.shape)
    argnums = tuple(range(len(arrays)))
    want = fg.grad(lambda *xs: fnp.sum(op.functional(*xs) * w), argnums=argnums)(*arrays)
    for g, e in zip(grads, want):
        assert g.shape == np.shape(e)
        close(g, e)


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
@HYP
@given(data=st.data())
def test_op_matches_torch(op, data):
    torch = _torch()
    arrays = _draw_inputs(data, op, smooth=True)
    out, grads = _facade_value_and_grads(ft, op, arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tout, tgrads = _facade_value_and_grads(torch, op, arrays)
    assert tuple(out.shape) == tuple(tout.shape)
    assert _dtype_name(out.dtype) == _dtype_name(tout.dtype)
    close(out.detach().numpy(), as_np(tout), rtol=1e-7, atol=1e-10)
    for g, tg in zip(grads, tgrads):
        close(g, tg, rtol=1e-7, atol=1e-10)


def test_float32_op_values_match_torch():
    """The default dtype path (float32 in, float32 out) agrees with PyTorch too."""
    torch = _torch()
    rng = np.random.default_rng(3)
    for name in ("mm", "softmax", "log_softmax", "std", "sigmoid", "mlp"):
        op = next(o for o in OPS if o.name == name)
        ins = [rng.standard_normal(shape).astype(np.float32) for _, shape in op.inputs]
        out, grads = _facade_value_and_grads(ft, op, ins)
        tout, tgrads = _facade_value_and_grads(torch, op, ins)
        assert out.dtype == ft.float32, name
        close(out.detach().numpy(), as_np(tout), rtol=1e-5, atol=1e-6)
        for g, tg in zip(grads, tgrads):
            assert g.dtype == np.float32
            close(g, tg, rtol=1e-4, atol=1e-5)


# Gradients at kinks and ties, where PyTorch picks a particular subgradient.

KINK_CASES = [
    ("max_all_tie", [1.0, 3.0, 3.0], lambda a: a.max(), None),
    ("min_all_tie", [1.0, 1.0, 3.0], lambda a: a.min(), None),
    ("amax_tie", [[1.0, 3.0, 3.0]], lambda a: a.amax(1).sum(), None),
    ("abs_0", [0.0, -1.0, 2.0], lambda a: a.abs().sum(), None),
    ("prod_one_zero", [0.0, 2.0, 3.0], lambda a: a.prod(), None),
    ("prod_two_zeros", [0.0, 0.0, 3.0], lambda a: a.prod(), None),
    ("pow0_at_0", [0.0, 2.0], lambda a: (a ** 0).sum(), None),
    ("pow2_at_0", [0.0, 2.0], lambda a: (a ** 2).sum(), None),
    ("sqrt_0", [0.0, 4.0], lambda a: a.sqrt().sum(), None),
    ("max_dim_tie", [[1.0, 3.0, 3.0]], lambda a: a.max(1)[0].sum(), None),
    ("relu_0", [0.0, -1.0, 2.0], lambda a: a.relu().sum(), None),
    ("clamp_boundary", [0.0, 1.0, 0.5, -1.0], lambda a: a.clamp(0.0, 1.0).sum(), None),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "values,fn", [pytest.param(v, f, id=n, marks=[] if r is None else
                               pytest.mark.xfail(strict=True, reason="bug: " + r))
                  for n, v, f, r in KINK_CASES])
def test_gradients_at_kinks_match_torch(values, fn):
    torch = _torch()
    x = ft.tensor(values, dtype=ft.float64, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    fn(x).backward()
    fn(tx).backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


# ================================================================== interop (section 4)


def _mlp_facade(x, w1, b1, w2, labels_onehot):
    h = (x @ w1 + b1).tanh()
    logits = h @ w2
    return -(logits.log_softmax(1) * labels_onehot).sum(1).mean() + 0.01 * (w1 * w1).sum()


def _mlp_functional(x, w1, b1, w2, labels_onehot):
    h = fnp.tanh(x @ w1 + b1)
    logits = h @ w2
    logp = logits - fnp.logsumexp(logits, 1, keepdims=True)
    return -fnp.mean(fnp.sum(logp * labels_onehot, 1)) + 0.01 * fnp.sum(w1 * w1)


@HYP
@given(seed=st.integers(0, 2 ** 16))
def test_facade_gradient_equals_functional_grad(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 3))
    w1, b1, w2 = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((4, 2))
    y = np.eye(2)[rng.integers(0, 2, 5)]
    params = [ft.tensor(p, requires_grad=True) for p in (w1, b1, w2)]
    loss = _mlp_facade(ft.tensor(x), *params, ft.tensor(y))
    loss.backward()
    value, grads = fg.value_and_grad(_mlp_functional, argnums=(1, 2, 3))(x, w1, b1, w2, y)
    close(loss.item(), value, rtol=1e-12)
    for p, g in zip(params, grads):
        close(p.grad.numpy(), g, rtol=1e-10, atol=1e-13)


def test_funcgrad_numpy_reads_tensors_as_numpy_does():
    """The JAX face reads a Tensor as NumPy does: its data, copied; a tensor that requires
    grad is refused with PyTorch's numpy() error rather than cut from its graph."""
    a = np.array([[0.5, -1.0], [2.0, 0.25]])
    t = ft.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                                           r"grad. Use tensor.detach\(\).numpy\(\) instead."):
        fnp.tanh(t)
    d = t.detach()
    out = fnp.tanh(d)
    assert isinstance(out, fg.Array) and not isinstance(out, ft.Tensor)
    d.add_(1.0)  # the Array read a copy: later in-place changes do not reach it
    close(np.asarray(out), np.tanh(a))


def test_mixing_methods_and_functions_same_as_functional():
    a = np.array([1.0, -2.0, 0.5])
    t = ft.tensor(a, requires_grad=True)
    y = ft.exp(t).sum() + ft.dot(t, t) * t.sin().mean()
    y.backward()
    want = fg.grad(lambda z: fnp.sum(fnp.exp(z)) + fnp.dot(z, z) * fnp.mean(fnp.sin(z)))(a)
    close(t.grad.numpy(), want)


def test_op_names_are_unique():
    names = [op.name for op in OPS]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("name", ["log", "exp", "sqrt", "sin", "cos", "tanh", "sigmoid",
                                  "abs", "neg", "log1p", "expm1", "rsqrt", "reciprocal",
                                  "erf", "floor", "ceil", "round", "trunc", "relu", "sign"])
def test_zero_dim_unary_results_print_as_torch(name):
    """A 0-d input gives a 0-d Tensor that prints (a NumPy scalar inside broke repr)."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    ours = getattr(ft.tensor(0.75), name)()
    theirs = getattr(torch.tensor(0.75), name)()
    assert repr(ours) == repr(theirs) and ours.shape == theirs.shape


def test_finfo_iinfo_and_size_arithmetic_as_torch():
    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        out = []
        for d in (L.float32, L.float64, L.float16, L.bfloat16, L.complex64):
            f = L.finfo(d)
            out.append((repr(f), f.bits, f.eps, f.max, f.min, f.tiny, f.resolution, f.dtype))
        for d in (L.int8, L.uint8, L.int16, L.int32, L.int64):
            i = L.iinfo(d)
            out.append((repr(i), i.bits, i.min, i.max, i.dtype))
        out.append(repr(L.finfo()))
        for bad in (lambda: L.finfo(L.int32), lambda: L.iinfo(L.float32),
                    lambda: L.iinfo(L.bool)):
            with pytest.raises(TypeError) as info:
                bad()
            out.append(str(info.value))
        out += [repr(L.Size([2]) + (3,)), repr((3,) + L.Size([2])), repr(L.Size([2]) * 2),
                repr(L.Size([2]) + L.Size([3]))]
        return out

    assert run(ft) == run(torch)
