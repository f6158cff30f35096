"""Convolution, padding and pooling layers of funcgrad.torch against PyTorch 2.13: values,
gradients of input, weight and bias, node names, reprs, output shapes, init, errors.

Each case runs the same call on the same float64 data in both libraries; hypothesis draws
the geometry (sizes, kernels, strides, paddings, dilations, groups, ceil_mode...).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F
from funcgrad.torch import nn
from funcgrad.torch.nn.pooling import pool_output_size

torch = pytest.importorskip("torch")
TF = torch.nn.functional

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def both(x: np.ndarray, grad: bool = True) -> tuple[Any, Any]:
    return (ft.tensor(x, requires_grad=grad),
            torch.tensor(x, requires_grad=grad))


def close(a: Any, b: Any, tol: float = 1e-10) -> None:
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy()
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def run_both(fn_ft: Any, fn_t: Any, arrays: list[np.ndarray], node: str | None = None
             ) -> None:
    """Same function in both libraries: outputs, node name, and the gradients of every
    input for a random cotangent."""
    ours = [ft.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_f, out_t = fn_ft(*ours), fn_t(*theirs)
    close(out_f, out_t)
    if node is not None:
        assert type(out_f.grad_fn).__name__ == type(out_t.grad_fn).__name__ == node
    ct = np.random.default_rng(0).normal(size=tuple(out_t.shape))
    out_f.backward(ft.tensor(ct))
    out_t.backward(torch.tensor(ct))
    for a, b in zip(ours, theirs):
        close(a.grad, b.grad)


# ---------------------------------------------------------------- convolution


@st.composite
def conv_case(draw: Any, transposed: bool = False) -> dict[str, Any]:
    nd = draw(st.integers(1, 3))
    groups = draw(st.sampled_from([1, 1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k = [draw(st.integers(1, 3)) for _ in range(nd)]
    stride = [draw(st.integers(1, 2)) for _ in range(nd)]
    dil = [draw(st.integers(1, 2)) for _ in range(nd)]
    pad = [draw(st.integers(0, 2)) for _ in range(nd)]
    size = [draw(st.integers(d * (kk - 1) + 1, 6)) for kk, d in zip(k, dil)]
    out_pad = [draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dil)]
    if transposed:
        pad = [min(p, d * (kk - 1)) for p, kk, d in zip(pad, k, dil)]
    return {"nd": nd, "groups": groups, "cin": cin, "cout": cout, "k": k, "stride": stride,
            "dilation": dil, "padding": pad, "size": size, "output_padding": out_pad,
            "batch": draw(st.integers(1, 2)), "bias": draw(st.booleans()),
            "seed": draw(st.integers(0, 1000))}


@SETTINGS
@given(case=conv_case())
def test_conv_matches_torch(case: dict[str, Any]) -> None:
    rng = np.random.default_rng(case["seed"])
    nd, g = case["nd"], case["groups"]
    x = rng.normal(size=[case["batch"], case["cin"], *case["size"]])
    w = rng.normal(size=[case["cout"], case["cin"] // g, *case["k"]])
    b = rng.normal(size=case["cout"])
    kw = {"stride": case["stride"], "padding": case["padding"], "dilation": case["dilation"],
          "groups": g}
    ours, theirs = getattr(F, f"conv{nd}d"), getattr(TF, f"conv{nd}d")
    if case["bias"]:
        run_both(lambda a, c, d: ours(a, c, d, **kw), lambda a, c, d: theirs(a, c, d, **kw),
                 [x, w, b], "ConvolutionBackward0")
    else:
        run_both(lambda a, c: ours(a, c, **kw), lambda a, c: theirs(a, c, **kw), [x, w],
                 "ConvolutionBackward0")


@SETTINGS
@given(case=conv_case(transposed=True))
def test_conv_transpose_matches_torch(case: dict[str, Any]) -> None:
    rng = np.random.default_rng(case["seed"])
    nd, g = case["nd"], case["groups"]
    x = rng.normal(size=[case["batch"], case["cin"], *case["size"]])
    w = rng.normal(size=[case["cin"], case["cout"] // g, *case["k"]])
    b = rng.normal(size=case["cout"])
    kw = {"stride": case["stride"], "padding": case["padding"], "dilation": case["dilation"],
          "groups": g, "output_padding": case["output_padding"]}
    ours, theirs = getattr(F, f"conv_transpose{nd}d"), getattr(TF, f"conv_transpose{nd}d")
    run_both(lambda a, c, d: ours(a, c, d, **kw), lambda a, c, d: theirs(a, c, d, **kw),
             [x, w, b], "ConvolutionBackward0")


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, "same", (2, 1)])
def test_conv2d_module_padding_modes(mode: str, padding: Any) -> None:
    rng = np.random.default_rng(3)
    ft.manual_seed(0)
    ours = nn.Conv2d(2, 3, (3, 2), padding=padding, padding_mode=mode, dtype=ft.float64)
    theirs = torch.nn.Conv2d(2, 3, (3, 2), padding=padding, padding_mode=mode,
                             dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    assert repr(ours) == repr(theirs)
    x = rng.normal(size=(2, 2, 5, 6))
    xf, xt = both(x)
    yf, yt = ours(xf), theirs(xt)
    close(yf, yt)
    ct = rng.normal(size=tuple(yt.shape))
    yf.backward(ft.tensor(ct))
    yt.backward(torch.tensor(ct))
    close(xf.grad, xt.grad)
    close(ours.weight.grad, theirs.weight.grad)
    close(ours.bias.grad, theirs.bias.grad)


@pytest.mark.parametrize("make", [
    lambda m: m.Conv1d(4, 8, 3), lambda m: m.Conv2d(3, 16, 3),
    lambda m: m.Conv2d(3, 16, (3, 5), stride=2, padding=(1, 2), dilation=2, groups=1,
                       bias=False),
    lambda m: m.Conv2d(4, 8, 3, groups=2, padding="same", padding_mode="reflect"),
    lambda m: m.Conv3d(2, 4, (1, 3, 3), padding="valid"),
    lambda m: m.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1),
    lambda m: m.ConvTranspose2d(16, 3, 4, stride=2, padding=1, groups=1, dilation=2),
    lambda m: m.ConvTranspose3d(2, 4, 2, groups=2, bias=False),
    lambda m: m.MaxPool1d(3, stride=2), lambda m: m.MaxPool2d(2),
    lambda m: m.MaxPool2d((3, 2), stride=1, padding=1, dilation=2, ceil_mode=True),
    lambda m: m.MaxPool3d(2, return_indices=True), lambda m: m.AvgPool1d(3, 2, 1),
    lambda m: m.AvgPool2d(2), lambda m: m.AvgPool2d((3, 2), padding=1, ceil_mode=True),
    lambda m: m.AvgPool3d(2, divisor_override=3), lambda m: m.AdaptiveAvgPool1d(5),
    lambda m: m.AdaptiveAvgPool2d((5, None)), lambda m: m.AdaptiveAvgPool3d(1),
    lambda m: m.AdaptiveMaxPool1d(3), lambda m: m.AdaptiveMaxPool2d((2, 3), True),
])
def test_reprs_match_torch(make: Any) -> None:
    assert repr(make(nn)) == repr(make(torch.nn))


def test_conv_init_bounds_and_shapes() -> None:
    ft.manual_seed(0)
    conv = nn.Conv2d(6, 8, (3, 5), groups=2)
    t = torch.nn.Conv2d(6, 8, (3, 5), groups=2)
    assert tuple(conv.weight.shape) == tuple(t.weight.shape)
    assert tuple(conv.bias.shape) == tuple(t.bias.shape)
    fan_in = 3 * 3 * 5
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform(a=sqrt(5)) and the bias bound agree
    w = conv.weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    tr = nn.ConvTranspose2d(4, 6, 3, groups=2)
    assert tuple(tr.weight.shape) == tuple(torch.nn.ConvTranspose2d(4, 6, 3, groups=2)
                                           .weight.shape)
    assert [n for n, _ in conv.named_parameters()] == ["weight", "bias"]


def test_conv_transpose_output_size_argument() -> None:
    ft.manual_seed(0)
    ours = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=ft.float64)
    theirs = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dtype=torch.float64)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(ours.weight.detach().numpy()))
        theirs.bias.copy_(torch.tensor(ours.bias.detach().numpy()))
    x = np.random.default_rng(0).normal(size=(1, 2, 4, 4))
    close(ours(ft.tensor(x), output_size=[8, 8]), theirs(torch.tensor(x), output_size=[8, 8]))


def test_unbatched_conv_and_pool() -> None:
    x = np.random.default_rng(1).normal(size=(3, 5, 5))
    w = np.random.default_rng(2).normal(size=(4, 3, 2, 2))
    run_both(lambda a, c: F.conv2d(a, c, padding=1), lambda a, c: TF.conv2d(a, c, padding=1),
             [x, w], "SqueezeBackward1")
    run_both(lambda a: F.max_pool2d(a, 2), lambda a: TF.max_pool2d(a, 2), [x])


def test_conv_errors_are_torchs() -> None:
    x = ft.ones(1, 4, 5, 5)
    with pytest.raises(RuntimeError, match="expected input.*to have 3 channels, but got 4"):
        F.conv2d(x, ft.ones(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D"):
        F.conv2d(ft.ones(5, 5), ft.ones(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="should be the same"):
        F.conv2d(x, ft.ones(2, 4, 3, 3, dtype=ft.float64))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose2d(x, ft.ones(4, 2, 3, 3), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(x, 2, padding=2)


# --------------------------------------------------------------------------- pad


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads", [(1, 2), (2, 0, 1, 1), (1, 1, 0, 2, 1, 0)])
def test_pad_modes_match_torch(mode: str, pads: tuple[int, ...]) -> None:
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 5, 3))
    if mode != "constant" and len(pads) == 2:
        x = x[:, :, 0, 0]
    elif mode != "constant" and len(pads) == 4:
        x = x[:, :, 0]
    node = {"constant": "ConstantPadNdBackward0", "circular": "CopySlices"}.get(
        mode, f"{'Reflection' if mode == 'reflect' else 'Replication'}Pad{len(pads) // 2}D"
              "Backward0")
    run_both(lambda a: F.pad(a, pads, mode=mode), lambda a: TF.pad(a, pads, mode=mode), [x],
             node)


def test_constant_pad_negative_crops_and_value() -> None:
    x = np.arange(12.0).reshape(3, 4)
    run_both(lambda a: F.pad(a, (-1, 2, 1, -2), value=7.0),
             lambda a: TF.pad(a, (-1, 2, 1, -2), value=7.0), [x])


# ------------------------------------------------------------------------ pooling


@st.composite
def pool_case(draw: Any, dilation: bool = True) -> dict[str, Any]:
    nd = draw(st.integers(1, 3))
    k = [draw(st.integers(1, 3)) for _ in range(nd)]
    d = [draw(st.integers(1, 2)) if dilation else 1 for _ in range(nd)]
    s = [draw(st.integers(1, 3)) for _ in range(nd)]
    p = [draw(st.integers(0, kk // 2)) for kk in k]
    size = [draw(st.integers(max(1, dd * (kk - 1) + 1 - 2 * pp), 7))
            for kk, dd, pp in zip(k, d, p)]
    ceil = draw(st.booleans())
    # A window of padding alone gives -inf, and PyTorch then routes its gradient to an
    # arbitrary input element: a degenerate case left out (see the sharp bits).
    for n, kk, ss, pp, dd in zip(size, k, s, p, d):
        for o in range(pool_output_size(n, kk, ss, pp, dd, ceil)):
            assume(any(0 <= o * ss - pp + j * dd < n for j in range(kk)))
    return {"nd": nd, "kernel_size": k, "stride": s, "padding": p, "dilation": d,
            "size": size, "ceil_mode": ceil, "seed": draw(st.integers(0, 99)),
            "ties": draw(st.booleans())}


def _pool_input(case: dict[str, Any]) -> np.ndarray:
    rng = np.random.default_rng(case["seed"])
    x = rng.normal(size=[2, 2, *case["size"]])
    return np.round(x) if case["ties"] else x  # rounded values tie often


@SETTINGS
@given(case=pool_case())
def test_max_pool_matches_torch(case: dict[str, Any]) -> None:
    nd = case["nd"]
    kw = {k: case[k] for k in ("kernel_size", "stride", "padding", "dilation", "ceil_mode")}
    x = _pool_input(case)
    node = "SqueezeBackward1" if nd == 1 else f"MaxPool{nd}DWithIndicesBackward0"
    ours, theirs = getattr(F, f"max_pool{nd}d"), getattr(TF, f"max_pool{nd}d")
    run_both(lambda a: ours(a, **kw), lambda a: theirs(a, **kw), [x], node)
    (vf, i_f), (vt, it) = (ours(ft.tensor(x), **kw, return_indices=True),
                           theirs(torch.tensor(x), **kw, return_indices=True))
    close(vf, vt)
    assert i_f.dtype == ft.int64
    np.testing.assert_array_equal(i_f.numpy(), it.numpy())


@SETTINGS
@given(case=pool_case(dilation=False), include=st.booleans(),
       divisor=st.sampled_from([None, None, 3]))
def test_avg_pool_matches_torch(case: dict[str, Any], include: bool, divisor: Any) -> None:
    nd = case["nd"]
    # avg_pool3d wants the input at least as large as the kernel, padding aside.
    assume(nd < 3 or all(n >= k for n, k in zip(case["size"], case["kernel_size"])))
    kw = {k: case[k] for k in ("kernel_size", "stride", "padding", "ceil_mode")}
    kw["count_include_pad"] = include
    if nd > 1:
        kw["divisor_override"] = divisor
    node = "SqueezeBackward1" if nd == 1 else f"AvgPool{nd}DBackward0"
    ours, theirs = getattr(F, f"avg_pool{nd}d"), getattr(TF, f"avg_pool{nd}d")
    run_both(lambda a: ours(a, **kw), lambda a: theirs(a, **kw), [_pool_input(case)], node)


@SETTINGS
@given(nd=st.integers(1, 3), data=st.data())
def test_adaptive_pools_match_torch(nd: int, data: Any) -> None:
    size = [data.draw(st.integers(1, 7)) for _ in range(nd)]
    out = [data.draw(st.integers(1, 8)) for _ in range(nd)]
    x = np.round(np.random.default_rng(data.draw(st.integers(0, 99))).normal(
        size=[2, 3, *size]) * 2)
    osize: Any = out[0] if nd == 1 else tuple(out)
    run_both(lambda a: getattr(F, f"adaptive_avg_pool{nd}d")(a, osize),
             lambda a: getattr(TF, f"adaptive_avg_pool{nd}d")(a, osize), [x])
    run_both(lambda a: getattr(F, f"adaptive_max_pool{nd}d")(a, osize),
             lambda a: getattr(TF, f"adaptive_max_pool{nd}d")(a, osize), [x])
    _, i_f = getattr(F, f"adaptive_max_pool{nd}d")(ft.tensor(x), osize, return_indices=True)
    _, it = getattr(TF, f"adaptive_max_pool{nd}d")(torch.tensor(x), osize, return_indices=True)
    np.testing.assert_array_equal(i_f.numpy(), it.numpy())


@pytest.mark.parametrize("fn,args,node", [
    ("max_pool2d", (2,), "MaxPool2DWithIndicesBackward0"),
    ("max_pool3d", (2,), "MaxPool3DWithIndicesBackward0"),
    ("avg_pool2d", (2,), "AvgPool2DBackward0"),
    ("avg_pool3d", (2,), "AvgPool3DBackward0"),
    ("adaptive_avg_pool2d", (3,), "AdaptiveAvgPool2DBackward0"),
    ("adaptive_avg_pool2d", (1,), "MeanBackward1"),
    ("adaptive_max_pool2d", (3,), "AdaptiveMaxPool2DBackward0"),
    ("adaptive_max_pool3d", (3,), "AdaptiveMaxPool3DBackward0"),
    ("adaptive_avg_pool3d", (3,), "AdaptiveAvgPool3DBackward0"),
])
def test_pool_node_names(fn: str, args: tuple[Any, ...], node: str) -> None:
    shape = (1, 2, 4, 4, 4) if "3d" in fn else (1, 2, 4, 4)
    x = np.random.default_rng(0).normal(size=shape)
    yf = getattr(F, fn)(ft.tensor(x, requires_grad=True), *args)
    yt = getattr(TF, fn)(torch.tensor(x, requires_grad=True), *args)
    assert type(yf.grad_fn).__name__ == type(yt.grad_fn).__name__ == node


@pytest.mark.parametrize("kw", [
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True},
    {"kernel_size": 3, "stride": 3, "padding": 1, "ceil_mode": False},
    {"kernel_size": 2, "stride": 3, "dilation": 2, "ceil_mode": True},
])
@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_pool_output_shapes(kw: dict[str, Any], n: int) -> None:
    x = np.zeros((1, 1, n, n))
    assert tuple(F.max_pool2d(ft.tensor(x), **kw).shape) == tuple(
        TF.max_pool2d(torch.tensor(x), **kw).shape)
    kw = {k: v for k, v in kw.items() if k != "dilation"}
    assert tuple(F.avg_pool2d(ft.tensor(x), **kw).shape) == tuple(
        TF.avg_pool2d(torch.tensor(x), **kw).shape)


def test_small_cnn_trains_like_torch() -> None:
    """Conv2d + ReLU + MaxPool2d + AvgPool + Linear: one SGD step, all gradients."""
    ft.manual_seed(0)
    torch.manual_seed(0)
    ours = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 4, 3, groups=2), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(4, 2))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                                 torch.nn.MaxPool2d(2), torch.nn.Conv2d(4, 4, 3, groups=2),
                                 torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                 torch.nn.Linear(4, 2))
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    x = np.random.default_rng(0).normal(size=(2, 3, 8, 8)).astype(np.float32)
    lf = ours(ft.tensor(x)).pow(2).sum()
    lt = theirs(torch.tensor(x)).pow(2).sum()
    np.testing.assert_allclose(lf.item(), lt.item(), rtol=1e-5)
    lf.backward()
    lt.backward()
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("expr", [
    "F.conv2d(L.ones(1, 3, 2, 2), L.ones(4, 3, 3, 3))",
    "F.conv2d(L.ones(1, 3, 4, 4), L.ones(4, 3, 3, 3), dilation=2)",
    "F.conv1d(L.ones(1, 3, 2), L.ones(4, 3, 3))",
    "F.conv3d(L.ones(1, 3, 2, 5, 5), L.ones(4, 3, 3, 3, 3))",
    "F.conv2d(L.ones(3, 2, 2), L.ones(4, 3, 3, 3))",
    "F.conv2d(L.ones(1, 3, 2, 2), L.ones(4, 3, 3, 3), padding=1).shape",
    "F.conv2d(L.ones(1, 3, 2, 2), L.ones(4, 3, 3, 3), padding='same').shape",
])
def test_kernel_larger_than_padded_input_raises_as_torch(expr):
    """A kernel reaching past the padded input is PyTorch's error, not an empty result."""
    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        try:
            return str(eval(expr, {"L": L, "F": L.nn.functional}))
        except RuntimeError as e:
            return f"RuntimeError: {e}"

    assert run(ft) == run(torch)
