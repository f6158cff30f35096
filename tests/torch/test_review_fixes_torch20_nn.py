"""PyTorch-face fixes from a twentieth side-by-side review of ``torch.nn.functional``, each
compared with torch 2.13: uint8 images resized by bilinear/bicubic (PyTorch's integer
kernels, rounded per axis), the dtypes the pooling, resizing, activation, normalization
and loss kernels accept (and their NotImplementedError for the others), max and average
pooling of integer tensors (int64 averages truncated), the pooling argument errors, the
pixel-shuffle errors, ``kl_div`` of a negative target, and InstanceNorm's warning for a
channel count that is not ``num_features``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome, same_outcome, shown

torch = pytest.importorskip("torch")

INT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64"]


def _ints(t: Any, values: Any, shape: Any, dtype: str) -> Any:
    return t.tensor(np.asarray(values).reshape(shape)).to(getattr(t, dtype))


# ------------------------------------------------------------------ interpolate

UINT8_RESIZES = [
    ((1, 2, 3, 4), {"scale_factor": 1.5}),
    ((2, 3, 5, 7), {"scale_factor": (0.5, 1.3)}),
    ((1, 4, 6, 6), {"size": (9, 4)}),
    ((1, 1, 8, 5), {"size": (3, 11)}),
    ((1, 6, 4, 5), {"scale_factor": (2.5, 0.7)}),
    ((1, 3, 7, 2), {"size": (7, 5)}),
    ((2, 1, 9, 9), {"scale_factor": 0.3}),
]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("options", [{}, {"align_corners": True}, {"antialias": True}],
                         ids=["plain", "align_corners", "antialias"])
@pytest.mark.parametrize("case", range(len(UINT8_RESIZES)))
@pytest.mark.parametrize("values", ["random", "extremes"])
def test_uint8_bilinear_and_bicubic_resizes_are_torchs(mode: str, options: dict[str, Any],
                                                       case: int, values: str) -> None:
    shape, size = UINT8_RESIZES[case]
    rs = np.random.RandomState(case)
    x = rs.randint(0, 256, shape) if values == "random" else rs.choice([0, 255], shape)

    def run(t: Any) -> Any:
        out = t.nn.functional.interpolate(t.tensor(x.astype(np.uint8)), mode=mode,
                                          **size, **options)
        return str(out.dtype), out.numpy().tolist()
    same_outcome(run)


def test_the_reviewed_uint8_bilinear_example() -> None:
    same_outcome(lambda t: t.nn.functional.interpolate(
        t.arange(24.).reshape(1, 2, 3, 4).to(t.uint8), scale_factor=1.5, mode="bilinear"))


RESIZE_MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
                ("nearest-exact", 2), ("nearest-exact", 3), ("linear", 1), ("bilinear", 2),
                ("bicubic", 2), ("trilinear", 3), ("area", 1), ("area", 2), ("area", 3)]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize(("mode", "nd"), RESIZE_MODES)
def test_integer_resizes_are_torchs_or_its_errors(dtype: str, mode: str, nd: int) -> None:
    shape = {1: (1, 2, 6), 2: (1, 2, 3, 4), 3: (1, 1, 2, 2, 3)}[nd]

    def run(t: Any) -> Any:
        x = _ints(t, np.arange(int(np.prod(shape))) % 7, shape, dtype)
        return t.nn.functional.interpolate(x, scale_factor=1.5, mode=mode)
    same_outcome(run)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_integer_antialiased_resizes_are_refused_as_torch(dtype: str, mode: str) -> None:
    same_outcome(lambda t: t.nn.functional.interpolate(
        _ints(t, range(24), (1, 2, 3, 4), dtype), scale_factor=0.5, mode=mode,
        antialias=True))


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "nearest-exact", "trilinear"])
@pytest.mark.parametrize("layout", ["contiguous", "large", "channels_last"])
def test_the_refusing_kernel_follows_torchs_dispatch(mode: str, layout: str) -> None:
    def run(t: Any) -> Any:
        nd = 3 if mode == "trilinear" else 2
        x = t.ones((1, 5, 3, 4, 2)[:2 + nd], dtype=t.int64)
        if layout == "channels_last":
            x = x.contiguous(memory_format=t.channels_last if nd == 2 else
                             t.channels_last_3d)
        size = (100, 40, 2)[:nd] if layout != "contiguous" else (4, 6, 2)[:nd]
        return t.nn.functional.interpolate(x, size=size, mode=mode)
    same_outcome(run)


# ------------------------------------------------------------------ pooling

POOLS = {
    "max1d": lambda F, x1, x2, x3: F.max_pool1d(x1, 2),
    "max1d_padded": lambda F, x1, x2, x3: F.max_pool1d(x1, 3, 1, 1),
    "max1d_indices": lambda F, x1, x2, x3: F.max_pool1d(x1, 2, return_indices=True),
    "max1d_unbatched": lambda F, x1, x2, x3: F.max_pool1d(x1[0], 2),
    "max2d": lambda F, x1, x2, x3: F.max_pool2d(x2, 2),
    "max2d_padded": lambda F, x1, x2, x3: F.max_pool2d(x2, 3, 1, 1),
    "max2d_indices": lambda F, x1, x2, x3: F.max_pool2d(x2, 2, return_indices=True),
    "max2d_ceil": lambda F, x1, x2, x3: F.max_pool2d(x2, 3, 2, 1, ceil_mode=True),
    "max3d": lambda F, x1, x2, x3: F.max_pool3d(x3, 2),
    "max3d_indices": lambda F, x1, x2, x3: F.max_pool3d(x3, 2, 1, 1, return_indices=True),
    "adaptive_max1d": lambda F, x1, x2, x3: F.adaptive_max_pool1d(x1, 3),
    "adaptive_max2d": lambda F, x1, x2, x3: F.adaptive_max_pool2d(x2, 3, True),
    "adaptive_max3d": lambda F, x1, x2, x3: F.adaptive_max_pool3d(x3, 2),
    "avg1d": lambda F, x1, x2, x3: F.avg_pool1d(x1, 3),
    "avg1d_padded": lambda F, x1, x2, x3: F.avg_pool1d(x1, 3, 2, 1),
    "avg1d_exclusive": lambda F, x1, x2, x3: F.avg_pool1d(x1, 3, 2, 1,
                                                          count_include_pad=False),
    "avg1d_ceil": lambda F, x1, x2, x3: F.avg_pool1d(x1, 3, 2, 1, ceil_mode=True),
    "avg2d": lambda F, x1, x2, x3: F.avg_pool2d(x2, 3, 1),
    "avg2d_padded": lambda F, x1, x2, x3: F.avg_pool2d(x2, 3, 2, 1),
    "avg2d_exclusive": lambda F, x1, x2, x3: F.avg_pool2d(x2, 3, 2, 1,
                                                          count_include_pad=False),
    "avg2d_divisor": lambda F, x1, x2, x3: F.avg_pool2d(x2, 2, divisor_override=3),
    "avg2d_ceil": lambda F, x1, x2, x3: F.avg_pool2d(x2, 3, 2, 1, ceil_mode=True),
    "avg3d": lambda F, x1, x2, x3: F.avg_pool3d(x3, 2),
    "avg3d_padded": lambda F, x1, x2, x3: F.avg_pool3d(x3, 2, 1, 1),
    "avg3d_divisor": lambda F, x1, x2, x3: F.avg_pool3d(x3, 2, divisor_override=3),
    "avg3d_exclusive": lambda F, x1, x2, x3: F.avg_pool3d(x3, 2, 1, 1,
                                                          count_include_pad=False),
    "adaptive_avg1d": lambda F, x1, x2, x3: F.adaptive_avg_pool1d(x1, 3),
    "adaptive_avg1d_one": lambda F, x1, x2, x3: F.adaptive_avg_pool1d(x1, 1),
    "adaptive_avg2d": lambda F, x1, x2, x3: F.adaptive_avg_pool2d(x2, 3),
    "adaptive_avg2d_one": lambda F, x1, x2, x3: F.adaptive_avg_pool2d(x2, 1),
    "adaptive_avg3d": lambda F, x1, x2, x3: F.adaptive_avg_pool3d(x3, 2),
    "adaptive_avg3d_one": lambda F, x1, x2, x3: F.adaptive_avg_pool3d(x3, 1),
    "local_response_norm3d": lambda F, x1, x2, x3: F.local_response_norm(x1, 2),
    "local_response_norm4d": lambda F, x1, x2, x3: F.local_response_norm(x2, 3),
}
VALUES = [-5, 3, -2, 7, 1, -1, 4, 2, -3, 6, 0, 5, -4, 8, 2, -6]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", sorted(POOLS))
def test_integer_pooling_is_torchs(dtype: str, name: str) -> None:
    def run(t: Any) -> Any:
        x = _ints(t, VALUES, (16,), dtype)
        return POOLS[name](t.nn.functional, x.reshape(1, 2, 8), x.reshape(1, 1, 4, 4),
                           x.reshape(1, 1, 2, 2, 4))
    same_outcome(run)


@pytest.mark.parametrize("module", ["MaxPool1d", "MaxPool2d", "MaxPool3d"])
def test_max_pool_modules_take_int64_as_torch(module: str) -> None:
    def run(t: Any) -> Any:
        nd = int(module[-2])
        x = _ints(t, VALUES * 2, (1, 1, *(2, 4, 4)[3 - nd:]), "int64").reshape(
            1, -1, *(2, 4, 4)[3 - nd:])
        return getattr(t.nn, module)(2)(x)
    same_outcome(run)


def test_int64_max_pool_past_float64_precision() -> None:
    # Values 1 apart near the int64 bounds: equal as float64, not as int64. (The index of a
    # padded window whose only value is int64's minimum is not compared: funcgrad's
    # padding ties with it there.)
    big = np.iinfo(np.int64)
    same_outcome(lambda t: t.nn.functional.max_pool2d(
        t.tensor([[[[big.min + 2, big.min + 3, big.max - 1], [big.min + 1, big.max, big.max - 1],
                    [big.max - 2, big.min + 3, big.max - 1]]]]), 2, 1, 1,
        return_indices=True))


def test_float_pooling_gradients_still_flow() -> None:
    def run(t: Any) -> Any:
        x = t.tensor(np.arange(16.0).reshape(1, 1, 4, 4) % 5, requires_grad=True)
        F = t.nn.functional
        (F.max_pool2d(x, 2).sum() + F.avg_pool2d(x, 3, 1, 1).sum()
         + F.max_pool1d(x[0], 2).sum()).backward()
        return x.grad
    same_outcome(run)


POOL_ERRORS = {
    "max1d_pad": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 2, padding=2),
    "max1d_pad_negative": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 2, padding=-1),
    "max1d_kernel": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), -1),
    "max1d_stride": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 2, 0),
    "max1d_dilation": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 2, dilation=0),
    "max1d_small": lambda F, t: F.max_pool1d(t.ones(1, 1, 2), 3),
    "max1d_small_requires_grad": lambda F, t: F.max_pool1d(
        t.ones(1, 1, 2, requires_grad=True), 5),
    "max1d_indices_pad": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 2, padding=2,
                                                   return_indices=True),
    "max1d_indices_small": lambda F, t: F.max_pool1d(t.ones(1, 1, 2), 3,
                                                     return_indices=True),
    "max1d_indices_kernel": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 0, 1,
                                                      return_indices=True),
    "max1d_indices_dilated": lambda F, t: F.max_pool1d(t.ones(1, 2, 5), 2, padding=2,
                                                       dilation=3, return_indices=True),
    "max2d_pad": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2, padding=2),
    "max2d_pad_dilated": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2, padding=2,
                                                   dilation=2),
    "max2d_pad_dilated_ok": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2, padding=1,
                                                      dilation=2),
    "max2d_pad_past_the_kernel": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2,
                                                           padding=2, dilation=3),
    "max2d_pad_tuple": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), (2, 4),
                                                 padding=(1, 3)),
    "max2d_pad_negative": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2, padding=-1),
    "max2d_kernel_zero": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 0),
    "max2d_kernel_zero_strided": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), (2, 0), 1),
    "max2d_stride_negative": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2, -1),
    "max2d_dilation": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), 2, dilation=0),
    "max2d_kernel_length": lambda F, t: F.max_pool2d(t.ones(1, 2, 5, 5), (1, 2, 3)),
    "max2d_small": lambda F, t: t.nn.MaxPool2d(3)(t.ones(1, 1, 2, 2)),
    "max2d_small_unbatched": lambda F, t: t.nn.MaxPool2d(3)(t.ones(1, 2, 2)),
    "max2d_small_one_side": lambda F, t: F.max_pool2d(t.ones(2, 3, 4, 2), (1, 3)),
    "max2d_small_dilated": lambda F, t: F.max_pool2d(t.ones(1, 1, 4, 4), 3, dilation=2),
    "max2d_small_ceil": lambda F, t: F.max_pool2d(t.ones(1, 1, 2, 2), 3, ceil_mode=True),
    "max2d_no_channels": lambda F, t: F.max_pool2d(t.ones(1, 0, 4, 4), 2),
    "max3d_pad": lambda F, t: F.max_pool3d(t.ones(1, 2, 5, 5, 5), 2, padding=2),
    "max3d_pad_past_the_kernel": lambda F, t: F.max_pool3d(t.ones(1, 2, 5, 5, 5), 2,
                                                           padding=2, dilation=3),
    "max3d_kernel_zero": lambda F, t: F.max_pool3d(t.ones(1, 2, 5, 5, 5), 0, 1),
    "max3d_dilation": lambda F, t: F.max_pool3d(t.ones(1, 2, 5, 5, 5), 2, dilation=0),
    "max3d_small": lambda F, t: t.nn.MaxPool3d(3)(t.ones(1, 1, 2, 2, 2)),
    "avg1d_pad": lambda F, t: F.avg_pool1d(t.ones(1, 2, 5), 2, padding=2),
    "avg1d_kernel": lambda F, t: F.avg_pool1d(t.ones(1, 2, 5), 0, 1),
    "avg1d_stride": lambda F, t: F.avg_pool1d(t.ones(1, 2, 5), 2, 0),
    "avg1d_small": lambda F, t: F.avg_pool1d(t.ones(1, 1, 2), 3),
    "avg2d_pad": lambda F, t: F.avg_pool2d(t.ones(1, 2, 5, 5), 2, padding=2),
    "avg2d_stride_negative": lambda F, t: F.avg_pool2d(t.ones(1, 2, 5, 5), 2, -1),
    "avg2d_small": lambda F, t: F.avg_pool2d(t.ones(1, 1, 2, 2), 3),
    "avg2d_small_unbatched": lambda F, t: F.avg_pool2d(t.ones(3, 4, 2), (1, 3)),
    "avg2d_divisor": lambda F, t: F.avg_pool2d(t.ones(1, 2, 5, 5), 2, padding=3,
                                               divisor_override=0),
    "avg2d_no_channels": lambda F, t: F.avg_pool2d(t.ones(1, 0, 4, 4), 2),
    "avg3d_pad": lambda F, t: F.avg_pool3d(t.ones(1, 2, 5, 5, 5), 2, padding=2),
    "avg3d_pad_small": lambda F, t: F.avg_pool3d(t.ones(1, 1, 2, 2, 2), 3, padding=2),
    "avg3d_small": lambda F, t: F.avg_pool3d(t.ones(1, 1, 2, 2, 2), 3, padding=1),
    "avg3d_kernel_zero": lambda F, t: F.avg_pool3d(t.ones(1, 2, 5, 5, 5), 0, 1),
    "avg3d_stride": lambda F, t: F.avg_pool3d(t.ones(1, 2, 5, 5, 5), 2, 0),
}


@pytest.mark.parametrize("name", sorted(POOL_ERRORS))
def test_pooling_argument_errors_are_torchs(name: str) -> None:
    same_outcome(lambda t: tuple(POOL_ERRORS[name](t.nn.functional, t).shape))


# ------------------------------------------------------------------ pixel shuffle

SHUFFLES = {
    "shuffle_channels": lambda t: t.nn.PixelShuffle(3)(t.ones(2, 8, 2, 3)),
    "shuffle_rank": lambda t: t.nn.PixelShuffle(2)(t.ones(4, 3)),
    "shuffle_factor": lambda t: t.nn.PixelShuffle(0)(t.ones(1, 4, 2, 2)),
    "shuffle_negative": lambda t: t.nn.functional.pixel_shuffle(t.ones(1, 4, 2, 2), -1),
    "shuffle_int": lambda t: t.nn.PixelShuffle(2)(t.arange(16).reshape(1, 4, 2, 2)),
    "unshuffle_height": lambda t: t.nn.PixelUnshuffle(2)(t.ones(1, 1, 3, 4)),
    "unshuffle_width": lambda t: t.nn.PixelUnshuffle(2)(t.ones(1, 1, 4, 3)),
    "unshuffle_rank": lambda t: t.nn.PixelUnshuffle(2)(t.ones(4, 3)),
    "unshuffle_factor": lambda t: t.nn.functional.pixel_unshuffle(t.ones(1, 4, 2, 2), 0),
    "unshuffle": lambda t: t.nn.PixelUnshuffle(2)(t.arange(16.0).reshape(1, 1, 4, 4)),
}


@pytest.mark.parametrize("name", sorted(SHUFFLES))
def test_pixel_shuffle_errors_are_torchs(name: str) -> None:
    same_outcome(SHUFFLES[name])


# ------------------------------------------------------------------ kl_div


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["none", "sum", "batchmean"])
def test_kl_div_of_negative_and_nan_targets_is_torchs(log_target: bool,
                                                      reduction: str) -> None:
    same_outcome(lambda t: t.nn.functional.kl_div(
        t.tensor([0.5, 0.5, 0.1, -0.2]), t.tensor([-0.5, 0.3, 0.0, float("nan")]),
        reduction=reduction, log_target=log_target))


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_gradients_are_torchs(log_target: bool) -> None:
    def run(t: Any) -> Any:
        x = t.tensor([0.2, -0.3, 0.4, 0.1], requires_grad=True)
        y = t.tensor([0.0, 0.3, 0.7, 1.5], requires_grad=True)
        t.nn.functional.kl_div(x, y, reduction="sum", log_target=log_target).backward()
        return x.grad, y.grad
    same_outcome(run)


# ------------------------------------------------------------------ dtypes of F

FLOAT_ONLY = {
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "elu": lambda F, x: F.elu(x),
    "elu_inplace": lambda F, x: F.elu(x.clone(), inplace=True),
    "leaky_relu": lambda F, x: F.leaky_relu(x),
    "leaky_relu_inplace": lambda F, x: F.leaky_relu(x.clone(), inplace=True),
    "hardtanh": lambda F, x: F.hardtanh(x),
    "hardtanh_limits": lambda F, x: F.hardtanh(x, -0.5, 1.5),
    "hardtanh_positive": lambda F, x: F.hardtanh(x, 0, 2),
    "hardtanh_inplace": lambda F, x: F.hardtanh(x.clone(), inplace=True),
    "relu6": lambda F, x: F.relu6(x),
    "relu6_inplace": lambda F, x: F.relu6(x.clone(), inplace=True),
    "silu": lambda F, x: F.silu(x),
    "silu_inplace": lambda F, x: F.silu(x.clone(), inplace=True),
    "softplus": lambda F, x: F.softplus(x),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "hardswish_inplace": lambda F, x: F.hardswish(x.clone(), inplace=True),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "mish": lambda F, x: F.mish(x),
    "selu": lambda F, x: F.selu(x),
    "selu_inplace": lambda F, x: F.selu(x.clone(), inplace=True),
    "celu": lambda F, x: F.celu(x),
    "softmax": lambda F, x: F.softmax(x, 0),
    "log_softmax": lambda F, x: F.log_softmax(x, 0),
    "softmin": lambda F, x: F.softmin(x, 0),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "hardshrink": lambda F, x: F.hardshrink(x),
    "softshrink": lambda F, x: F.softshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0, 1),
    "rrelu": lambda F, x: F.rrelu(x),
    "rrelu_training": lambda F, x: F.rrelu(x, training=True),
    "glu": lambda F, x: F.glu(x, 0),
    "prelu_float_weight": lambda F, x: F.prelu(x, x.new_tensor([0.25], dtype=None)
                                               .float()),
    "prelu_same_dtype": lambda F, x: F.prelu(x, x[:1]),
    "layer_norm": lambda F, x: F.layer_norm(x, (4,)),
    "rms_norm": lambda F, x: F.rms_norm(x, (4,)),
    "group_norm": lambda F, x: F.group_norm(x.reshape(1, 2, 2), 1),
    "batch_norm": lambda F, x: F.batch_norm(x.reshape(2, 2), None, None, training=True),
    "instance_norm": lambda F, x: F.instance_norm(x.reshape(1, 2, 2)),
    "normalize": lambda F, x: F.normalize(x, dim=0),
}


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", sorted(FLOAT_ONLY))
def test_integer_activations_and_norms_are_torchs(dtype: str, name: str) -> None:
    same_outcome(lambda t: FLOAT_ONLY[name](t.nn.functional, _ints(t, [-2, 0, 1, 3], (4,), dtype)))


LOSSES = {
    "mse": lambda F, x, y: F.mse_loss(x, y),
    "mse_none": lambda F, x, y: F.mse_loss(x, y, reduction="none"),
    "l1": lambda F, x, y: F.l1_loss(x, y),
    "l1_none": lambda F, x, y: F.l1_loss(x, y, reduction="none"),
    "l1_sum": lambda F, x, y: F.l1_loss(x, y, reduction="sum"),
    "smooth_l1": lambda F, x, y: F.smooth_l1_loss(x, y),
    "huber": lambda F, x, y: F.huber_loss(x, y),
    "bce": lambda F, x, y: F.binary_cross_entropy(x, y),
    "bce_with_logits": lambda F, x, y: F.binary_cross_entropy_with_logits(x, y),
    "kl_div": lambda F, x, y: F.kl_div(x, y, reduction="sum"),
}


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
@pytest.mark.parametrize("pair", ["int_int", "float_int", "int_float", "int_int16"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_integer_losses_are_torchs(dtype: str, pair: str, name: str) -> None:
    def run(t: Any) -> Any:
        i = _ints(t, [0, 1, 3], (3,), dtype)
        f = t.tensor([0.2, 0.7, 0.4])
        x, y = {"int_int": (i, i), "float_int": (f, i), "int_float": (i, f),
                "int_int16": (i, i.to(t.int16))}[pair]
        return LOSSES[name](t.nn.functional, x, y)
    same_outcome(run)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
@pytest.mark.parametrize("rank", [1, 2, 3, 4])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_integer_class_scores_are_refused_as_torch(dtype: str, rank: int, loss: str) -> None:
    def run(t: Any) -> Any:
        shape = {1: (3,), 2: (2, 3), 3: (2, 3, 2), 4: (2, 3, 2, 2)}[rank]
        target = t.zeros(shape[:1] + shape[2:] if rank > 1 else (), dtype=t.long)
        x = _ints(t, np.arange(int(np.prod(shape))) % 4, shape, dtype)
        return getattr(t.nn.functional, loss)(x, target)
    same_outcome(run)


def test_cross_entropy_with_probabilities_of_integer_logits() -> None:
    same_outcome(lambda t: t.nn.functional.cross_entropy(t.tensor([[0, 1, 3]]),
                                                  t.tensor([[0.2, 0.3, 0.5]])))


def test_float_losses_keep_their_gradients() -> None:
    def run(t: Any) -> Any:
        F = t.nn.functional
        x = t.tensor([0.2, 0.7, 0.4], requires_grad=True)
        y = t.tensor([0.0, 1.0, 3.0])
        (F.mse_loss(x, y) + F.l1_loss(x, y) + F.smooth_l1_loss(x, y) + F.huber_loss(x, y)
         + F.hardtanh(x * 3).sum() + F.gelu(x).sum()).backward()
        return x.grad
    same_outcome(run)


# ------------------------------------------------------------------ InstanceNorm


def _warned(call: Any) -> Any:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = outcome(lambda: shown(call()))
    return result, [(w.category.__name__, str(w.message)) for w in seen]


@pytest.mark.parametrize(("module", "shape"), [
    ("InstanceNorm1d", (2, 4, 5)), ("InstanceNorm1d", (4, 5)), ("InstanceNorm1d", (2, 3, 5)),
    ("InstanceNorm2d", (2, 4, 3, 3)), ("InstanceNorm2d", (4, 3, 3)),
    ("InstanceNorm3d", (1, 4, 2, 2, 2)), ("InstanceNorm3d", (4, 2, 2, 2))])
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_warns_of_another_channel_count_as_torch(module: str, shape: Any,
                                                               affine: bool) -> None:
    def run(t: Any) -> Any:
        x = t.tensor(np.arange(float(np.prod(shape))).reshape(shape) % 3, dtype=t.float32)
        return getattr(t.nn, module)(3, affine=affine)(x)
    assert _warned(lambda: run(ft)) == _warned(lambda: run(torch))
