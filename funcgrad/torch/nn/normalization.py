"""Normalization layers and their functional forms, as PyTorch's: ``BatchNorm1d/2d/3d``,
``InstanceNorm1d/2d/3d``, ``LayerNorm``, ``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm``;
``batch_norm``, ``instance_norm``, ``layer_norm``, ``group_norm``, ``rms_norm``,
``local_response_norm`` and ``normalize`` (re-exported by ``nn.functional``).

Each functional form is one graph node named as PyTorch names it
(``NativeBatchNormBackward0``, ``NativeLayerNormBackward0``...); running statistics are
updated in place, outside the graph, with PyTorch's momentum rule and its unbiased
running variance.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> bn = nn.BatchNorm1d(2)
>>> bn
BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
>>> y = bn(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))
>>> y
tensor([[-1.0000, -1.0000],
        [ 1.0000,  1.0000]], grad_fn=<NativeBatchNormBackward0>)
>>> bn.running_mean, bn.running_var
(tensor([0.2000, 0.4000]), tensor([1.1000, 1.7000]))
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.source_info import user_stacklevel
from funcgrad.torch import _dtypes as D
from funcgrad.torch import _half_math as half_math
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._creation import empty, ones, tensor, zeros
from funcgrad.torch._device import Size
from funcgrad.torch._grad_mode import FUNCTORCH_LEVELS, no_grad
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn import _half_batch_norm as _half_bn
from funcgrad.torch.nn import init
from funcgrad.torch.nn._apply import (
    data,
    floating,
    half_dtype,
    op,
    rounded_to,
    shape,
)
from funcgrad.torch.nn._kernel_dtypes import check_kernel_dtype, is_float_tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter
from funcgrad.transforms.custom import custom_jvp
from funcgrad.transforms.jvp import jvp

__all__ = [
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
    "InstanceNorm2d", "InstanceNorm3d", "LayerNorm", "LocalResponseNorm", "RMSNorm",
    "batch_norm", "group_norm", "instance_norm", "layer_norm", "local_response_norm",
    "normalize", "rms_norm",
]


def _channel_shape(ndim: int) -> tuple[int, ...]:
    """Reshape of a per-channel vector to broadcast along axis 1 of an ``ndim`` input."""
    return (1, -1) + (1,) * (ndim - 2)


def _affine(y: Any, w: Any, b: Any, ndim: int) -> Any:
    if w is not None:
        y = y * fnp.reshape(w, _channel_shape(ndim))
    if b is not None:
        y = y + fnp.reshape(b, _channel_shape(ndim))
    return y


def _update_running(running: Tensor, stat: Tensor, momentum: float) -> None:
    with no_grad():
        running.mul_(1.0 - momentum).add_(stat.to(running.dtype), alpha=momentum)


def _mixed(x: Any, *params: Any) -> bool:
    """Whether a half ``x`` meets a float32 parameter or running statistic: PyTorch's CPU
    kernel then keeps its statistics in float32."""
    def dtype(t: Any) -> Any:
        return getattr(getattr(t, "_data", t), "dtype", None)

    return half_dtype(getattr(x, "_data", x)) is not None and any(
        t is not None and dtype(t) == np.float32 for t in params)


def _threads() -> int:
    """``torch.get_num_threads()``: PyTorch's kernel splits some sums by thread. (Read from
    the loaded module: ``nn`` is imported below it.)"""
    mod = sys.modules.get("funcgrad.torch._tensor_math")
    return 1 if mod is None else int(mod.get_num_threads())


def _half_running_update(x: Any, running_mean: Any, running_var: Any, momentum: float,
                         mixed: bool, per_instance: bool = False) -> bool:
    """The running statistics after a training step on a concrete half ``x``, as PyTorch's
    CPU kernel computes them; False (nothing done) for another input. ``per_instance``:
    instance norm's, batch norm's of the ``(1, N * C, ...)`` view with the statistics
    repeated per sample, then their mean over the samples."""
    xd = x.detach() if isinstance(x, Tensor) else x
    running = [t for t in (running_mean, running_var) if t is not None]
    # (instance norm's float32 running statistics of a half input: not matched yet, see
    # docs/sharp_bits.md)
    if half_dtype(getattr(xd, "_data", None)) is None or (per_instance and mixed) or any(
            not isinstance(t, Tensor) or isinstance(t._data, Tracer) for t in [xd, *running]):
        return False
    def value(t: Any) -> Any:
        return None if t is None else np.asarray(t.detach()._data, np.float32)

    xv = np.asarray(xd._data)
    rm, rv = value(running_mean), value(running_var)
    n = xv.shape[0]
    if per_instance:
        xv = xv.reshape((1, n * xv.shape[1]) + xv.shape[2:])
        rm, rv = (None if v is None else np.tile(v, n) for v in (rm, rv))
    new: list[Any] = list(_half_bn.update_running(xv, rm, rv, momentum, mixed, _threads()))
    if per_instance:
        # the mean over the samples, in float32 one by one, rounded to the stats' dtype
        new = [None if v is None else np.add.accumulate(
            v.reshape(n, -1), axis=0, dtype=np.float32)[-1] / np.float32(n) for v in new]
    with no_grad():
        for t, v in zip((running_mean, running_var), new):
            if t is not None:
                t.copy_(tensor(v, dtype=t.dtype))
    return True


def _batch_stats(x: Any, axes: tuple[int, ...]) -> tuple[Tensor, Tensor]:
    """Mean and unbiased variance over ``axes``, outside any graph; a half input's in
    float32 (PyTorch's CPU kernel accumulates them in float and stores them in the running
    statistics' dtype, so float32 running statistics get the unrounded values)."""
    xd = x.detach() if isinstance(x, Tensor) else x

    def wide(v: Any) -> Any:
        return v if half_dtype(v) is None else fnp.astype(v, np.float32)

    with no_grad():
        mean = op("Mean", lambda v: fnp.mean(wide(v), axis=axes), xd)
        var = op("Var", lambda v: fnp.var(wide(v), axis=axes, ddof=1), xd)
    return mean, var


def _check_vmapped_stats(input: Any, running_mean: Any, running_var: Any) -> None:  # noqa: A002
    """PyTorch's refusal, inside vmap, to update unmapped running statistics from a mapped
    input (each example would write its own statistics into one tensor)."""
    levels = FUNCTORCH_LEVELS
    if not (levels and levels[-1][0] == "vmap" and
            isinstance(getattr(input, "_data", None), Tracer)):
        return
    if any(t is not None and not isinstance(t._data, Tracer)
           for t in (running_mean, running_var)):
        raise RuntimeError(
            "Batch norm got a batched tensor as input while the running_mean or running_var, "
            "which will be updated in place, were not batched.\nIf you are using a module "
            "and do not need eval mode, please set `track_running_stats` to be False.If you "
            "are using a prebuilt module and do not need eval mode, please see the functorch "
            "website for resources on how to patch your module to work with vmap")


def batch_norm(input: Any, running_mean: Any, running_var: Any,  # noqa: A002
               weight: Any = None, bias: Any = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalize each channel (axis 1) by the batch's statistics when ``training`` (and
    update ``running_mean``/``running_var`` in place: ``(1 - momentum) * running +
    momentum * batch``, the variance unbiased), by the running ones otherwise.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.batch_norm(torch.tensor([[0.0], [2.0]]), None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    shp = shape(input)
    ndim = len(shp)
    if ndim < 2:
        raise ValueError(f"Expected 2D or higher input to batch_norm (got {ndim}D input)")
    check_kernel_dtype("batch_norm", input)
    axes = (0,) + tuple(range(2, ndim))
    use_batch = training or running_mean is None or running_var is None
    if training:
        count = math.prod(shp) // shp[1] if shp[1] else 0
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {Size(shp)!r}")
    for what, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        n = None if t is None else math.prod(shape(t))
        if n is not None and n != shp[1]:
            raise RuntimeError(f"{what} should contain {shp[1]} elements not {n}")
    mixed = _mixed(input, running_mean, running_var, weight, bias)
    if training and (running_mean is not None or running_var is not None):
        _check_vmapped_stats(input, running_mean, running_var)
        if not _half_running_update(input, running_mean, running_var, momentum, mixed):
            mean, var = _batch_stats(input, axes)
            if running_mean is not None:
                _update_running(running_mean, mean, momentum)
            if running_var is not None:
                _update_running(running_var, var, momentum)

    impl = _normalizer(use_batch, axes, ndim, eps, mixed)
    return op("NativeBatchNorm", impl, floating(input), None if use_batch else running_mean,
              None if use_batch else running_var, weight, bias)


def _normalizer(use_stats: bool, axes: tuple[int, ...], ndim: int, eps: float,
                mixed: bool = False) -> Any:
    """``(x - mean) / sqrt(var + eps)`` then the affine map, with the statistics of ``x``
    over ``axes`` (biased variance) or with the given running ones: batch and instance
    norm differ only in their axes. A half input's values are PyTorch's CPU kernel's, bit
    for bit (``mixed``: a parameter or running statistic is float32)."""
    def impl(x: Any, rm: Any, rv: Any, w: Any, b: Any) -> Any:
        if use_stats:
            mean = fnp.mean(x, axis=axes, keepdims=True)
            var = fnp.mean(fnp.square(x - mean), axis=axes, keepdims=True)
        else:
            mean = fnp.astype(fnp.reshape(rm, _channel_shape(ndim)), x.dtype)
            var = fnp.astype(fnp.reshape(rv, _channel_shape(ndim)), x.dtype)
        return _affine((x - mean) / fnp.sqrt(var + eps), w, b, ndim)

    def half_impl(x: Any, rm: Any, rv: Any, w: Any, b: Any) -> Any:
        # PyTorch's CPU kernel for a half input: statistics in float32, stored (and read
        # back) as the half type, then the normalization and the affine map in float32,
        # rounded once.
        half = x.dtype
        x = fnp.astype(x, np.float32)
        if use_stats:
            mean = fnp.mean(x, axis=axes, keepdims=True)
            var = fnp.mean(fnp.square(x - mean), axis=axes, keepdims=True)
            mean, inv = rounded_to(mean, half), rounded_to(1.0 / fnp.sqrt(var + eps), half)
        else:
            mean = fnp.astype(fnp.reshape(rm, _channel_shape(ndim)), np.float32)
            inv = 1.0 / fnp.sqrt(fnp.astype(fnp.reshape(rv, _channel_shape(ndim)),
                                            np.float32) + eps)
        w32, b32 = (None if v is None else fnp.astype(v, np.float32) for v in (w, b))
        return fnp.astype(_affine((x - mean) * inv, w32, b32, ndim), half)

    def kernel(x: Any, rm: Any, rv: Any, w: Any, b: Any) -> Any:
        # The kernel's exact values where they are concrete (eager, or the primal of a
        # derivative); half_impl's inside a traced transform.
        args = (x, rm, rv, w, b)
        if any(isinstance(v, Tracer) for v in args):
            return half_impl(*args)
        vals = [None if v is None else np.asarray(v) for v in args[1:]]
        out = _half_bn.forward(np.asarray(x), vals[0], vals[1], vals[2], vals[3], use_stats,
                               axes == tuple(range(2, ndim)), eps, mixed, _threads())
        return fnp.asarray(out)

    exact = custom_jvp(kernel)
    # The derivative is half_impl's: the kernel's rounding steps have derivative 1.
    exact.defjvp(lambda p, t: (exact(*p), jvp(half_impl, p, t)[1]))

    def run(x: Any, rm: Any, rv: Any, w: Any, b: Any) -> Any:
        return (impl if half_dtype(x) is None else exact)(x, rm, rv, w, b)

    return run


@_layout.result_format("row_major")
def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None,  # noqa: A002
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalize each channel of each sample over its spatial axes; running statistics
    (when given) follow the batch average of the per-instance ones.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.instance_norm(torch.tensor([[[0.0, 2.0], [1.0, 5.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    shp = shape(input)
    ndim = len(shp)
    if ndim < 3:
        raise ValueError(f"Expected 3D or higher input to instance_norm (got {ndim}D input)")
    check_kernel_dtype("batch_norm", input)  # PyTorch's instance_norm is a batch_norm
    axes = tuple(range(2, ndim))
    if use_input_stats:
        if math.prod(shp[2:]) <= 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {Size(shp)!r}")
        if (running_mean is not None or running_var is not None) and \
                not _half_running_update(input, running_mean, running_var, momentum,
                                         _mixed(input, running_mean, running_var, weight,
                                                bias), per_instance=True):
            mean, var = _batch_stats(input, axes)
            with no_grad():
                mean, var = mean.mean(0), var.mean(0)
            if running_mean is not None:
                _update_running(running_mean, mean, momentum)
            if running_var is not None:
                _update_running(running_var, var, momentum)

    # (PyTorch's output follows the parameters' dtype here, not the running statistics')
    impl = _normalizer(use_input_stats, axes, ndim, eps, _mixed(input, weight, bias))
    return op("View", impl, floating(input), None if use_input_stats else running_mean,
              None if use_input_stats else running_var, weight, bias)


def _normalized_shape(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _check_normalized(shp: tuple[int, ...], norm: tuple[int, ...]) -> None:
    if len(norm) > len(shp) or shp[len(shp) - len(norm):] != norm:
        raise RuntimeError(f"Given normalized_shape={list(norm)}, expected input with shape "
                           f"[*, {', '.join(map(str, norm))}], but got input of size"
                           f"{list(shp)}")


@autocast_op("layer_norm")
@_layout.result_format("row_major")
def layer_norm(input: Any, normalized_shape: Any, weight: Any = None,  # noqa: A002
               bias: Any = None, eps: float = 1e-5) -> Any:
    """Normalize over the trailing ``normalized_shape`` axes, then ``* weight + bias``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.layer_norm(torch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    norm = _normalized_shape(normalized_shape)
    shp = shape(input)
    _check_normalized(shp, norm)
    check_kernel_dtype("LayerNormKernelImpl", input)
    axes = tuple(range(len(shp) - len(norm), len(shp)))

    def impl(x: Any, w: Any, b: Any) -> Any:
        mean = fnp.mean(x, axis=axes, keepdims=True)
        var = fnp.mean(fnp.square(x - mean), axis=axes, keepdims=True)
        y = (x - mean) / fnp.sqrt(var + eps)
        if w is not None:
            y = y * w
        if b is not None:
            y = y + b
        return y

    def affine(y: Any, w: Any, b: Any) -> Any:
        y = y if w is None else y * w
        return y if b is None else y + b

    # As PyTorch's CPU kernel (and its backward): half inputs computed in float32.
    half_impl = half_math.normalization(lambda v: v, lambda v: v, axes, eps, affine)

    def run(x: Any, w: Any, b: Any) -> Any:
        return (impl if half_dtype(x) is None else half_impl)(x, w, b)

    return op("NativeLayerNorm", run, floating(input), weight, bias)


def rms_norm(input: Any, normalized_shape: Any, weight: Any = None,  # noqa: A002
             eps: float | None = None) -> Any:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` axes;
    ``eps=None`` is the machine epsilon of the input's dtype.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.rms_norm(torch.tensor([[3.0, 4.0]]), (2,))
    tensor([[0.8485, 1.1314]])
    """
    norm = _normalized_shape(normalized_shape)
    shp = shape(input)
    _check_normalized(shp, norm)
    check_kernel_dtype("rms_norm", input)
    axes = tuple(range(len(shp) - len(norm), len(shp)))
    x_in = floating(input)
    # PyTorch's default is the machine epsilon of the type it computes in (float32 for a
    # half input).
    wide = np.float64 if data(x_in).dtype == np.float64 else np.float32
    e = float(np.finfo(wide).eps) if eps is None else eps

    def normalized(x: Any, w: Any) -> Any:
        y = x * (1.0 / fnp.sqrt(fnp.mean(fnp.square(x), axis=axes, keepdims=True) + e))
        return y if w is None else y * w

    def impl(x: Any, w: Any) -> Any:
        # PyTorch's composite: a half input (and its weight) widened to float32, the
        # normalization and the scaling computed there and rounded once; its autograd
        # graph in float32 likewise.
        half = half_dtype(x)
        if half is None:
            return normalized(x, w)
        return fnp.astype(normalized(fnp.astype(x, np.float32),
                                     None if w is None else fnp.astype(w, np.float32)), half)

    return op("Mul", impl, x_in, weight)


@autocast_op("group_norm")
@_layout.result_format("input")
def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None,  # noqa: A002
               eps: float = 1e-5) -> Any:
    """Split the channels (axis 1) into ``num_groups`` groups and normalize each group of
    each sample; then a per-channel ``* weight + bias``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.group_norm(torch.tensor([[0.0, 2.0, 1.0, 5.0]]), 2)
    tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
    """
    shp = shape(input)
    if len(shp) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{len(shp)}")
    if shp[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(shp)} and "
                           f"num_groups={num_groups}")
    check_kernel_dtype("GroupNormKernelImpl", input)
    size = [shp[0] * shp[1] // num_groups, num_groups, *shp[2:]]
    if size[0] * math.prod(shp[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")

    def impl(x: Any, w: Any, b: Any) -> Any:
        g = fnp.reshape(x, (shp[0], num_groups, -1))
        mean = fnp.mean(g, axis=2, keepdims=True)
        var = fnp.mean(fnp.square(g - mean), axis=2, keepdims=True)
        y = fnp.reshape((g - mean) / fnp.sqrt(var + eps), shp)
        return _affine(y, w, b, len(shp))

    # As PyTorch's CPU kernel (and its backward): half inputs computed in float32.
    half_impl = half_math.normalization(
        lambda v: fnp.reshape(v, (shp[0], num_groups, -1)), lambda v: fnp.reshape(v, shp),
        (2,), eps, lambda y, w, b: _affine(y, w, b, len(shp)))

    def run(x: Any, w: Any, b: Any) -> Any:
        return (impl if half_dtype(x) is None else half_impl)(x, w, b)

    return op("NativeGroupNorm", run, floating(input), weight, bias)


def local_response_norm(input: Any, size: int, alpha: float = 1e-4,  # noqa: A002
                        beta: float = 0.75, k: float = 1.0) -> Any:
    """Divide each element by ``(k + alpha * mean of x**2 over a window of `size`
    neighbouring channels) ** beta`` (the window zero-padded at the edges).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.local_response_norm(torch.tensor([[[2.0], [2.0]]]), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6667],
             [0.4000]]])
    """
    shp = shape(input)
    if len(shp) < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {len(shp)} "
                         "dimensions)")
    channels = shp[1]
    before, after = size // 2, (size - 1) // 2
    # PyTorch averages the squares with avg_pool2d (3-d input) or avg_pool3d: its dtypes.
    check_kernel_dtype("avg_pool2d" if len(shp) == 3 else "avg_pool3d_out_frame", input,
                       also=("int64",))
    integral = not is_float_tensor(input)
    default = D.get_default_dtype().np

    def impl(x: Any) -> Any:
        sq = fnp.square(x)
        widths = [(0, 0)] * len(shp)
        widths[1] = (before, after)
        padded = fnp.pad(sq, widths)
        window = sum(padded[:, j:j + channels] for j in range(size))
        if integral:
            # int64: the pool's mean truncated, then scaled in the default float dtype.
            mean = fnp.astype(window // size, default)
            return fnp.astype(x, default) / fnp.power(mean * alpha + k, beta)
        return x / fnp.power(window * (alpha / size) + k, beta)

    return op("Div", impl, input if integral else floating(input))


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Any = None) -> Any:
    """``x / max(||x||_p, eps)`` along ``dim``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.normalize(torch.tensor([[3.0, 4.0]]))
    tensor([[0.6000, 0.8000]])
    """
    if not is_float_tensor(input):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {D.cpp_name(input.dtype)}")
    def impl(x: Any) -> Any:
        a = fnp.abs(x)
        if p == math.inf:
            n = fnp.max(a, axis=dim, keepdims=True)
        elif p == 2:
            n = fnp.sqrt(fnp.sum(fnp.square(a), axis=dim, keepdims=True))
        else:
            n = fnp.power(fnp.sum(fnp.power(a, p), axis=dim, keepdims=True), 1.0 / p)
        return x / fnp.maximum(n, eps)

    result = op("Div", impl, floating(input))
    if out is not None:
        with no_grad():
            out.copy_(result)
        return out
    return result


# ------------------------------------------------------------------------ modules


class _NormBase(Module):
    """Per-channel affine parameters and running statistics (PyTorch's ``_NormBase``)."""

    _version = 2
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype,
                                                       device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=np.int64,
                                                               device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Any) -> None:  # noqa: A002
        if input.dim() not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.dim()}D input)")

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def _step_statistics(self) -> tuple[float, bool, Any, Any]:
        """PyTorch's bookkeeping before a batch-norm step (counts the batch): the momentum
        factor, whether batch statistics are used, and the running buffers to update."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = (1.0 / float(self.num_batches_tracked.item()) if self.momentum is None
                      else self.momentum)
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return (factor, bn_training, self.running_mean if keep else None,
                self.running_var if keep else None)

    def forward(self, input: Any) -> Any:  # noqa: A002
        self._check_input_dim(input)
        factor, bn_training, running_mean, running_var = self._step_statistics()
        return batch_norm(input, running_mean, running_var, self.weight, self.bias,
                          bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over a ``(N, C)`` or ``(N, C, L)`` input.

    >>> import funcgrad.torch.nn as nn
    >>> [name for name, _ in nn.BatchNorm1d(3).state_dict().items()]
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    """

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization over a ``(N, C, H, W)`` input."""

    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization over a ``(N, C, D, H, W)`` input."""

    _dims = (5,)


class _InstanceNorm(_NormBase):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        self._check_input_dim(input)
        feature_dim = input.dim() - self._dims[0]
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", UserWarning,
                          stacklevel=user_stacklevel())
        unbatched = input.dim() == self._dims[0]
        if unbatched:
            input = input.unsqueeze(0)  # noqa: A001
        out = instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over a ``(N, C, L)`` (or unbatched ``(C, L)``) input."""

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over a ``(N, C, H, W)`` (or ``(C, H, W)``) input."""

    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over a ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) input."""

    _dims = (4, 5)


class LayerNorm(Module):
    """Layer normalization over the trailing ``normalized_shape`` axes.

    >>> import funcgrad.torch.nn as nn
    >>> nn.LayerNorm(8)
    LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` axes.

    >>> import funcgrad.torch.nn as nn
    >>> nn.RMSNorm([4, 2])
    RMSNorm((4, 2), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Any) -> Any:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Group normalization: ``num_channels`` split into ``num_groups`` groups.

    >>> import funcgrad.torch.nn as nn
    >>> nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(empty(num_channels, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(empty(num_channels, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LocalResponseNorm(Module):
    """Local response normalization across neighbouring channels.

    >>> import funcgrad.torch.nn as nn
    >>> nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Any) -> Any:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
