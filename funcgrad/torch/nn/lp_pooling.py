"""Power-average pooling, as PyTorch's: ``F.lp_pool1d/2d/3d`` and ``LPPool1d/2d/3d``:
``(sum over the window of x ** p) ** (1 / p)``, computed as PyTorch does (an average pool
of ``x ** p`` times the window size), so values, NaNs and gradients agree with it.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> F.lp_pool1d(torch.tensor([[[3.0, 4.0, 1.0, 1.0]]]), 2, 2)
tensor([[[5.0000, 1.4142]]])
"""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad import nn as jnn
from funcgrad.torch import _half_math as half_math
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import data, floating, half_dtype, op
from funcgrad.torch.nn.conv import ntuple
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.pooling import avg_pool1d, avg_pool2d, avg_pool3d

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"]

_AVG = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}


def _lp_pool(nd: int, input: Any, norm_type: float, kernel_size: Any,  # noqa: A002
             stride: Any, ceil_mode: bool) -> Any:
    count = math.prod(ntuple(kernel_size, nd))
    integral = isinstance(input, Tensor) and not (input.dtype.is_floating_point
                                                  or input.dtype.is_complex)
    if integral and isinstance(norm_type, int) and not isinstance(norm_type, bool):
        # PyTorch's composite on an integer tensor with an integer power: the powers, their
        # (truncated) integer averages and the scaled sums stay integers; only the root is
        # taken in the default float dtype.
        powered = input.pow(norm_type)
        avg = _AVG[nd](powered, kernel_size, stride, 0, ceil_mode) if stride is not None \
            else _AVG[nd](powered, kernel_size, padding=0, ceil_mode=ceil_mode)
        return (avg.sign() * avg.abs().relu()).mul(count).pow(1.0 / norm_type)
    x = floating(input)
    half = half_dtype(data(x)) is not None
    # A half input: PyTorch's composite, each operation rounding to the half type (and
    # each backward formula too).
    powered = op("Pow", half_math.pow_scalar(norm_type) if half else lambda x: x ** norm_type, x)
    if stride is not None:
        avg = _AVG[nd](powered, kernel_size, stride, 0, ceil_mode)
    else:
        avg = _AVG[nd](powered, kernel_size, padding=0, ceil_mode=ceil_mode)

    def finish(a: Any) -> Any:
        # PyTorch's sign(a) * relu(|a|): negative averages (odd p) become 0.
        return (fnp.sign(a) * jnn.relu(fnp.abs(a)) * count) ** (1.0 / norm_type)

    if half:
        kept = (avg.sign() * avg.abs().relu()).mul(count)
        return op("Pow", half_math.pow_scalar(1.0 / norm_type), kept)
    return op("Pow", finish, avg)


def lp_pool1d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """1-d power-average pooling over (N, C, L)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """2-d power-average pooling over (N, C, H, W).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.lp_pool2d(torch.ones(1, 1, 2, 2), 1, 2)
    tensor([[[[4.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """3-d power-average pooling over (N, C, D, H, W)."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


class _LPPoolNd(Module):
    nd = 0

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return _lp_pool(self.nd, input, self.norm_type, self.kernel_size, self.stride,
                        self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """``lp_pool1d`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.LPPool1d(1.5, 3, 2)
    LPPool1d(norm_type=1.5, kernel_size=3, stride=2, ceil_mode=False)
    """

    nd = 1


class LPPool2d(_LPPoolNd):
    """``lp_pool2d`` as a layer."""

    nd = 2


class LPPool3d(_LPPoolNd):
    """``lp_pool3d`` as a layer."""

    nd = 3
