"""Convolutions, as PyTorch's: ``F.conv1d/2d/3d``, ``F.conv_transpose1d/2d/3d``, ``F.pad``
and the modules ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``.

Each is the ``conv_general_dilated`` primitive (one graph node,
``ConvolutionBackward0``), its derivatives the primitive's rules.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> _ = torch.manual_seed(0)
>>> conv = nn.Conv2d(3, 16, 3)
>>> conv
Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1))
>>> y = conv(torch.randn(2, 3, 8, 8))
>>> y.shape, y.grad_fn.name()
(torch.Size([2, 16, 6, 6]), 'ConvolutionBackward0')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._creation import empty
from funcgrad.torch._half_math import in_float32
from funcgrad.torch._tensor import Tensor, apply_op
from funcgrad.torch.nn import init
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "pad",
]


def op(name: str, impl: Callable[..., Any], *args: Any) -> Any:
    """``impl(*args)`` as one Tensor operation named ``name`` (as ``F``'s functions are):
    NumPy arrays count as Tensors, funcgrad Arrays and tracers stay engine values."""
    from funcgrad.array import Array  # noqa: PLC0415

    if not any(isinstance(a, Tensor) for a in args) and any(isinstance(a, Array) for a in args):
        from funcgrad.torch._graph import X64  # noqa: PLC0415

        with X64:
            return impl(*args)
    return apply_op(name, impl, *(Tensor(a) if isinstance(a, np.ndarray) else a for a in args))


def ntuple(value: Any, n: int) -> tuple[int, ...]:
    """An int repeated ``n`` times, or a sequence of ``n`` ints, as a tuple."""
    if isinstance(value, (list, tuple)):
        if len(value) == 1 and n > 1:
            return tuple(int(value[0]) for _ in range(n))
        return tuple(int(v) for v in value)
    return (int(value),) * n


def check_input_rank(name: str, x: Any, nd: int) -> bool:
    """Whether ``x`` has a batch axis (rank nd + 2) or not (nd + 1); else PyTorch's error."""
    rank = len(x.shape)
    if rank not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(x.shape)}")
    return rank == nd + 2


def _dtype_name(x: Any) -> str:
    return str(x.dtype).removeprefix("torch.")


def _check_same_dtype(x: Any, w: Any, b: Any) -> None:
    if isinstance(x, Tensor) and isinstance(w, Tensor) and x.dtype != w.dtype:
        raise RuntimeError(f"Input type ({_dtype_name(x)}) and weight type ({_dtype_name(w)}) "
                           "should be the same")
    if isinstance(x, Tensor) and isinstance(b, Tensor) and x.dtype != b.dtype:
        raise RuntimeError(f"Input type ({_dtype_name(x)}) and bias type ({_dtype_name(b)}) "
                           "should be the same")


def _with_bias(out: Any, b: Any, nd: int) -> Any:
    return out + fnp.reshape(b, (-1,) + (1,) * nd)


def _run(name: str, nd: int, fn: Callable[[Any, Any], Any], x: Any, w: Any, b: Any,
         batched: bool) -> Any:
    def impl(x: Any, w: Any, *b: Any) -> Any:
        if not batched:
            x = fnp.expand_dims(x, 0)
        out = fn(x, w)
        if b:
            out = _with_bias(out, b[0], nd)
        return out if batched else fnp.squeeze(out, 0)

    # A half input: PyTorch's CPU convolution accumulates in float32 and adds the bias
    # there, rounding once (a rounded convolution plus a rounded bias can be many ulps off
    # where they cancel); in_float32 leaves other dtypes unchanged.
    run = in_float32(impl)
    # An unbatched call is PyTorch's unsqueeze, convolution, squeeze: the last is seen.
    node = "Convolution" if batched else "Squeeze:1"
    out = op(node, run, x, w) if b is None else op(node, run, x, w, b)
    return _layout.in_format(out, _layout.conv_format(x, w)) if batched else out


def _conv(nd: int, input: Any, weight: Any, bias: Any, stride: Any,  # noqa: A002
          padding: Any, dilation: Any, groups: int) -> Any:
    name = f"conv{nd}d"
    batched = check_input_rank(name, input, nd)
    _check_same_dtype(input, weight, bias)
    if len(weight.shape) != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions; {name} expects a "
                           f"{nd + 2}D weight, got size {list(weight.shape)}")
    strides, dil = ntuple(stride, nd), ntuple(dilation, nd)
    k = tuple(weight.shape[2:])
    channels = input.shape[1 if batched else 0]
    if channels != weight.shape[1] * groups:
        shape = list(input.shape) if batched else [1, *input.shape]
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{shape} to have {weight.shape[1] * groups} channels, but got {channels} "
            "channels instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"{list(weight.shape)} instead")
    pads = conv_padding(padding, k, strides, dil)
    spatial = input.shape[-nd:]
    padded = [n + lo + hi for n, (lo, hi) in zip(spatial, pads, strict=True)]
    reach = [d * (kk - 1) + 1 for kk, d in zip(k, dil, strict=True)]
    if any(r > p for r, p in zip(reach, padded, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, reach))}). Kernel size can't be greater "
            "than actual input size")

    def fn(x: Any, w: Any) -> Any:
        return lax.conv_general_dilated(x, w, strides, pads, None, dil, None, groups)

    return _run(name, nd, fn, input, weight, bias, batched)


_SAME_PADDING_COPY = (
    "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
    "copy of the input be created (Triggered internally at "
    "/__w/pytorch/pytorch/aten/src/ATen/native/Convolution.cpp:1101.)")


def conv_padding(padding: Any, kernel: Sequence[int], strides: Sequence[int],
                 dilation: Sequence[int]) -> list[tuple[int, int]]:
    """PyTorch's ``padding`` (int, tuple, 'valid' or 'same') as (low, high) pairs; 'same'
    puts the odd element on the high side."""
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * nd
        if padding != "same":
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
        if any(s != 1 for s in strides):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        out = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            out.append((total // 2, total - total // 2))
        if any(lo != hi for lo, hi in out):
            from funcgrad.torch._tensor import warn_once_at_caller  # noqa: PLC0415

            warn_once_at_caller(_SAME_PADDING_COPY)
        return out
    return [(p, p) for p in ntuple(padding, nd)]


@autocast_op("conv1d")
def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
    """1-d convolution (cross-correlation) of (N, C, L) with (O, C/groups, K).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv1d(torch.ones(1, 1, 4), torch.ones(1, 1, 2))
    tensor([[[2., 2., 2.]]])
    """
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv2d")
def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
    """2-d convolution (cross-correlation) of (N, C, H, W) with (O, C/groups, kH, kW).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv2d(torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), padding=1)[0, 0]
    tensor([[1., 2., 2., 1.],
            [2., 4., 4., 2.],
            [2., 4., 4., 2.],
            [1., 2., 2., 1.]])
    """
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@autocast_op("conv3d")
def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
    """3-d convolution (cross-correlation) of (N, C, D, H, W) with (O, C/groups, kD, kH, kW).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv3d(torch.ones(1, 1, 2, 2, 2), torch.ones(1, 1, 2, 2, 2)).flatten()
    tensor([8.])
    """
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(nd: int, input: Any, weight: Any, bias: Any, stride: Any,  # noqa: A002
                    padding: Any, output_padding: Any, groups: int, dilation: Any) -> Any:
    name = f"conv_transpose{nd}d"
    batched = check_input_rank(name, input, nd)
    _check_same_dtype(input, weight, bias)
    strides, dil = ntuple(stride, nd), ntuple(dilation, nd)
    pads, out_pad = ntuple(padding, nd), ntuple(output_padding, nd)
    channels = input.shape[1 if batched else 0]
    if channels != weight.shape[0]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(input.shape)} to have {weight.shape[0]} channels, but got {channels} "
            "channels instead")
    for op_, s, d in zip(out_pad, strides, dil):
        if op_ >= s and op_ >= d:
            raise RuntimeError("output padding must be smaller than either stride or dilation,"
                               f" but got output_padding: {out_pad}, stride: {strides}, "
                               f"dilation: {dil}")
    k = tuple(weight.shape[2:])
    # The transpose of a convolution: the input spread by the stride, the kernel flipped
    # with its two feature axes swapped per group, padded by d (k - 1) - p.
    conv_pads = [(d * (kk - 1) - p, d * (kk - 1) - p + o)
                 for kk, d, p, o in zip(k, dil, pads, out_pad)]
    c_in, c_out_g = weight.shape[0], weight.shape[1]

    def fn(x: Any, w: Any) -> Any:
        w = fnp.reshape(w, (groups, c_in // groups, c_out_g, *k))
        w = fnp.swapaxes(w, 1, 2)
        w = fnp.reshape(w, (groups * c_out_g, c_in // groups, *k))
        w = fnp.flip(w, tuple(range(2, 2 + nd)))
        return lax.conv_general_dilated(x, w, (1,) * nd, conv_pads, strides, dil, None, groups)

    return _run(name, nd, fn, input, weight, bias, batched)


@autocast_op("conv_transpose1d")
def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Any:
    """1-d transposed convolution of (N, C, L) with (C, O/groups, K).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv_transpose1d(torch.ones(1, 1, 2), torch.ones(1, 1, 2), stride=2)
    tensor([[[1., 1., 1., 1.]]])
    """
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@autocast_op("conv_transpose2d")
def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Any:
    """2-d transposed convolution of (N, C, H, W) with (C, O/groups, kH, kW).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv_transpose2d(torch.ones(1, 1, 2, 2), torch.ones(1, 1, 2, 2)).shape
    torch.Size([1, 1, 3, 3])
    """
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


@autocast_op("conv_transpose3d")
def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Any:
    """3-d transposed convolution of (N, C, D, H, W) with (C, O/groups, kD, kH, kW).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.conv_transpose3d(torch.ones(1, 1, 1, 1, 1), torch.ones(1, 2, 2, 2, 2)).shape
    torch.Size([1, 2, 2, 2, 2])
    """
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


# ------------------------------------------------------------------------- pad

_PAD_NODES = {"reflect": "ReflectionPad{}D", "replicate": "ReplicationPad{}D",
              "circular": "CopySlices"}


def _gather_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """The source index of each place of an axis of ``n`` padded by (lo, hi) in ``mode``."""
    pos = np.arange(-lo, n + hi)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if mode == "circular":
        return np.mod(pos, n)
    period = 2 * (n - 1)
    r = np.mod(pos, period) if period else np.zeros_like(pos)
    return np.where(r < n, r, period - r)


@_layout.result_format("input")
def pad(input: Any, pad: Sequence[int], mode: str = "constant",  # noqa: A002
        value: float | None = None) -> Any:
    """Pad the last ``len(pad) // 2`` axes, the last axis first: ``(left, right, top,
    bottom, ...)``. Modes: 'constant' (negative pads crop), 'reflect', 'replicate',
    'circular'.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.pad(torch.tensor([[[1.0, 2.0, 3.0]]]), (2, 1), mode="reflect")
    tensor([[[3., 2., 1., 2., 3., 2.]]])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n_axes = len(pad) // 2
    rank = len(input.shape)
    if n_axes > rank:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {rank}")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(n_axes)]  # last axis first
    if mode == "constant":
        def impl(x: Any) -> Any:
            config = [(0, 0, 0)] * (rank - n_axes) + [(lo, hi, 0) for lo, hi in pairs[::-1]]
            fill = np.zeros((), fnp.result_type(x)) if value is None else np.asarray(
                value, fnp.result_type(x))
            return lax.pad(x, fill, config)

        return op("ConstantPadNd", impl, input)
    if mode not in _PAD_NODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if rank not in (n_axes + 1, n_axes + 2) or n_axes > 3:
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {rank}D input "
                                  "tensor.\nSupported combinations for non-constant padding:\n"
                                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                                  "  - 3D or 4D input: padding size = 4 (pads last 2 "
                                  "dimensions)\n"
                                  "  - 4D or 5D input: padding size = 6 (pads last 3 "
                                  "dimensions)")
    for i, (lo, hi) in enumerate(pairs):
        n = input.shape[rank - 1 - i]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi})"
                               f" at dimension {rank - 1 - i} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")

    def gather(x: Any) -> Any:
        for i, (lo, hi) in enumerate(pairs):
            ax = rank - 1 - i
            x = fnp.take(x, _gather_index(x.shape[ax], lo, hi, mode), axis=ax)
        return x

    return op(_PAD_NODES[mode].format(n_axes), gather, input)


# --------------------------------------------------------------------- modules


class _ConvNd(Module):
    nd = 0
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        nd = self.nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in ntuple(stride, nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError("padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                             f"'circular'], but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = ntuple(kernel_size, nd)
        self.stride = ntuple(stride, nd)
        self.padding = padding if isinstance(padding, str) else ntuple(padding, nd)
        self.dilation = ntuple(dilation, nd)
        self.output_padding = ntuple(output_padding, nd)
        self.groups = groups
        self.padding_mode = padding_mode
        pads = conv_padding(self.padding, self.kernel_size, (1,) * nd, self.dilation)
        self._reversed_padding_repeated_twice = [p for pair in pads[::-1] for p in pair]
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty(shape, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        # PyTorch's: kaiming_uniform(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def _conv_forward(self, input: Any, weight: Any, bias: Any) -> Any:  # noqa: A002
        """The convolution with ``weight`` and ``bias`` (PyTorch's hook for subclasses that
        transform the weight, weight standardization...), through ``F.conv<n>d`` as
        PyTorch's modules go, so its autocast cast applies.

        >>> import funcgrad.torch as torch
        >>> c = torch.nn.Conv1d(1, 1, 2, bias=False)
        >>> c._conv_forward(torch.ones(1, 1, 3), torch.ones(1, 1, 2), None)
        tensor([[[2., 2.]]])
        """
        conv = (conv1d, conv2d, conv3d)[self.nd - 1]
        if self.padding_mode != "zeros":
            x = pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(x, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-d convolution over (N, C, L) inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Conv1d(4, 8, 3, padding="same", bias=False)
    Conv1d(4, 8, kernel_size=(3,), stride=(1,), padding=same, bias=False)
    """

    nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-d convolution over (N, C, H, W) inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Conv2d(3, 16, 3, stride=2, padding=1, groups=1)
    Conv2d(3, 16, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))
    """

    nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)


class Conv3d(_ConvNd):
    """3-d convolution over (N, C, D, H, W) inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Conv3d(2, 4, (1, 3, 3))
    Conv3d(2, 4, kernel_size=(1, 3, 3), stride=(1, 1, 1))
    """

    nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Any, output_size: Any) -> tuple[int, ...]:  # noqa: A002
        if output_size is None:
            return self.output_padding
        from funcgrad.torch._device import Size  # noqa: PLC0415

        # PyTorch's checks and texts (``output_size`` shown as given, less its batch and
        # channel entries).
        nd = self.nd
        lead = 2 if len(input.shape) == nd + 2 else 1
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {len(input.shape)}D input, output_size "
                             f"must have {nd} or {lead + nd} elements (got "
                             f"{len(output_size)})")
        pads = cast(tuple[int, ...], self.padding)  # never a string for a transposed conv
        smallest = [(int(input.shape[lead + i]) - 1) * self.stride[i] - 2 * pads[i]
                    + self.dilation[i] * (self.kernel_size[i] - 1) + 1 for i in range(nd)]
        largest = [smallest[i] + self.stride[i] - 1 for i in range(nd)]
        for i in range(nd):
            if not smallest[i] <= int(output_size[i]) <= largest[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to {largest} (for an input of "
                                 f"{Size(input.shape[2:])})")
        return tuple(int(output_size[i]) - smallest[i] for i in range(nd))

    def forward(self, input: Any, output_size: Any = None) -> Any:  # noqa: A002
        # Through F.conv_transpose<n>d, as PyTorch's modules: its autocast cast applies.
        conv = (conv_transpose1d, conv_transpose2d, conv_transpose3d)[self.nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-d transposed convolution over (N, C, L) inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1)
    ConvTranspose1d(4, 2, kernel_size=(3,), stride=(2,), output_padding=(1,))
    """

    nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-d transposed convolution over (N, C, H, W) inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.ConvTranspose2d(16, 3, 4, stride=2, padding=1)
    ConvTranspose2d(16, 3, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1))
    """

    nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-d transposed convolution over (N, C, D, H, W) inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.ConvTranspose3d(2, 2, 2, bias=False)
    ConvTranspose3d(2, 2, kernel_size=(2, 2, 2), stride=(1, 1, 1), bias=False)
    """

    nd = 3
