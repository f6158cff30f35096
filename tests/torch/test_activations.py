"""The remaining activations, padding modules and reshaping layers of torch.nn against
PyTorch 2.13: values, input gradients, grad_fn names and reprs on drawn inputs, and
second derivatives of the smooth ones against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.testing import check_grads
from funcgrad.torch.nn import functional as F

FUNCTIONS = ["hardtanh", "relu6", "mish", "hardswish", "hardsigmoid", "selu", "celu",
             "softsign", "tanhshrink", "softshrink", "hardshrink", "logsigmoid", "glu",
             "softmin", "threshold", "prelu", "rrelu"]
SMOOTH = ["mish", "selu", "celu", "softsign", "tanhshrink", "logsigmoid", "glu", "softmin"]
MODULES = ["Hardtanh()", "Hardtanh(-2.0, 0.5)", "ReLU6(True)", "Mish()", "Hardswish()",
           "Hardsigmoid()", "SELU()", "CELU(0.7)", "ELU(inplace=True)", "LeakyReLU(0.2, True)",
           "SiLU()", "Softsign()", "Tanhshrink()", "Softshrink(0.3)", "Hardshrink()",
           "LogSigmoid()", "Threshold(0.1, 20.0)", "GLU(1)", "Softmin(1)", "Softmax2d()",
           "Softplus(2.0, 10.0)", "PReLU()", "PReLU(4, 0.1)", "RReLU()", "ZeroPad2d(1)",
           "ZeroPad2d((1, 0, 2, 1))", "ConstantPad1d(2, 3.5)", "ConstantPad2d((1, 0, 0, 2), -1.0)",
           "ReflectionPad1d(1)", "ReflectionPad2d((1, 1, 0, 1))", "ReplicationPad2d(1)",
           "CircularPad1d(1)", "CircularPad2d((1, 0, 1, 1))", "Unflatten(1, (2, 2))",
           "PixelShuffle(2)", "PixelUnshuffle(2)", "ChannelShuffle(2)"]


def _call(lib: Any, name: str, x: Any) -> Any:
    f = getattr(lib.nn.functional, name)
    if name == "softmin":
        return f(x, dim=1)
    if name == "threshold":
        return f(x, 0.2, -3.0)
    if name == "prelu":
        return f(x, lib.tensor(np.array([0.1, -0.2, 0.3, 0.25]), dtype=x.dtype))
    if name == "glu":
        return f(x, dim=1)
    return f(x)


@pytest.mark.parametrize("name", FUNCTIONS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_functions_match_torch(name: str, data: Any) -> None:
    torch = pytest.importorskip("torch")
    rows = data.draw(st.integers(1, 3))
    x = np.asarray(data.draw(st.lists(st.floats(-4, 4), min_size=rows * 4,
                                      max_size=rows * 4))).reshape(rows, 4)
    a, b = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = _call(ft, name, a), _call(torch, name, b)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12,
                               atol=1e-14)
    assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__
    w = np.linspace(0.3, 1.3, ya.numel()).reshape(tuple(ya.shape))
    (ya * ft.tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", SMOOTH)
def test_smooth_second_derivatives(name: str) -> None:
    x = np.array([[0.3, -1.1, 0.7, 2.0], [-0.4, 0.9, -2.2, 0.1]])
    # On funcgrad Arrays the layer functions compute on the JAX face: the same rules.
    check_grads(lambda a: _call(ft, name, a), (x,), order=2)


@pytest.mark.parametrize("spec", MODULES)
def test_modules_match_torch(spec: str) -> None:
    torch = pytest.importorskip("torch")
    ours = eval(f"nn.{spec}", {"nn": ft.nn})  # noqa: S307
    theirs = eval(f"nn.{spec}", {"nn": torch.nn})  # noqa: S307
    assert repr(ours) == repr(theirs)
    if isinstance(theirs, torch.nn.RReLU):
        ours.eval()
        theirs.eval()
    x = np.random.default_rng(0).standard_normal((2, 4, 4, 4))
    if spec.startswith(("ReflectionPad1d", "CircularPad1d", "ConstantPad1d")):
        x = x[:, :, 0]
    if spec.startswith("PReLU"):
        theirs = theirs.double()
        ours = ours.double()
        ours.load_state_dict({"weight": ft.tensor(theirs.weight.detach().numpy())})
    a, b = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    # Through an intermediate: in-place modules may not write into a leaf (both refuse).
    ya, yb = ours(a * 1.0), theirs(b * 1.0)
    np.testing.assert_allclose(ya.detach().numpy(), yb.detach().numpy(), rtol=1e-12)
    if "inplace" not in spec and "True" not in spec:
        assert type(ya.grad_fn).__name__ == type(yb.grad_fn).__name__
    w = np.linspace(0.2, 1.2, ya.numel()).reshape(tuple(ya.shape))
    (ya * ft.tensor(w)).sum().backward()
    (yb * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_glu_needs_an_even_dimension() -> None:
    with pytest.raises(RuntimeError, match="Halving dimension must be even"):
        F.glu(ft.ones(2, 3), dim=1)
