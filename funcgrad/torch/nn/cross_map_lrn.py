"""``nn.CrossMapLRN2d``: the legacy (Lua Torch) local response normalization across
channels, with PyTorch's custom autograd Function and its hand-written backward.

PyTorch 2.13 builds the per-channel normalizer with a running window (add the channel
entering, subtract the one leaving) whose bookkeeping never takes channel 0 back out, and
its backward sums the gradient ratios over a window shifted by one channel from the
forward's. Neither is the textbook LRN (that is ``nn.LocalResponseNorm``); both are
reproduced here, as window matrices over the channels, so that values and gradients
equal PyTorch's. So are its errors: a non-4-D input (``ValueError``), ``size=0``
(``ZeroDivisionError``), and ``size=1`` (its backward fails).

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> lrn = nn.CrossMapLRN2d(3, alpha=1.0, beta=0.5, k=1.0)
>>> lrn
CrossMapLRN2d(3, alpha=1.0, beta=0.5, k=1.0)
>>> x = torch.tensor([3.0, 0.0, 0.0]).reshape(1, 3, 1, 1).requires_grad_()
>>> y = lrn(x)
>>> y.flatten()
tensor([1.5000, 0.0000, 0.0000], grad_fn=<ViewBackward0>)
>>> y.grad_fn
<torch.autograd.function.CrossMapLRN2dBackward object at 0x...>
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.torch._tensor import _CPP, Tensor
from funcgrad.torch.autograd.function import Function
from funcgrad.torch.nn.module import Module

__all__ = ["CrossMapLRN2d"]


def _forward_window(shape: tuple[int, ...], size: int) -> np.ndarray:
    """``W[c, j]``: how many times channel ``j``'s square is in channel ``c``'s sum, as
    PyTorch's running window builds it (its ``select`` errors included)."""
    channels = shape[1]

    def at(i: int) -> int:
        if not -channels <= i < channels:
            raise IndexError(f"select(): index {i} out of range for tensor of size "
                             f"{list(shape)} at dimension 1")
        return i % channels

    pre_pad = int((size - 1) / 2 + 1)
    at(0)  # the first channel's normalizer
    win = np.zeros((max(channels, 0), max(channels, 0)))
    for c in range(min(pre_pad, channels)):
        win[0, at(c)] += 1
    for c in range(1, channels):
        win[c] = win[c - 1]
        if c < channels - pre_pad + 1:
            win[c, at(c + pre_pad - 1)] += 1
        if c > pre_pad:
            win[c, at(c - pre_pad)] -= 1
    return win


def _backward_window(shape: tuple[int, ...], size: int) -> np.ndarray:
    """``B[c, j]``: whether channel ``j``'s ratio is in channel ``c``'s accumulated sum in
    PyTorch's backward (a padded buffer of ``channels + size - 1`` ratios, centred at
    ``size - (size - 1) / 2``), with its errors for the sizes it cannot pad."""
    channels, height, width = shape[1], shape[2], shape[3]
    padded = channels + size - 1
    if padded < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {padded}: "
                           f"[{padded}, {height}, {width}]")
    centre = int(size - (size - 1) / 2)
    if centre < 0 or centre + channels > padded:
        raise RuntimeError(f"start ({centre}) + length ({channels}) exceeds dimension size "
                           f"({padded}).")
    c = np.arange(channels)[:, None]
    pos = centre + np.arange(channels)[None, :]
    return ((pos >= c) & (pos <= c + size - 1)).astype(np.float64)


def _mix(window: np.ndarray, x: Any) -> Any:
    """``sum_j window[c, j] * x[:, j]`` for every channel ``c`` of an NCHW tensor."""
    n, c, h, w = x.shape
    mat = x.new_tensor(window)
    return (mat @ x.reshape(n, c, h * w)).reshape(n, c, h, w)


class _CrossMapLRN2dFunction(Function):
    """PyTorch's ``torch.nn._functions.CrossMapLRN2d`` (named so below, for its node)."""

    @staticmethod
    def forward(ctx: Any, input: Any, size: int, alpha: float = 1e-4,  # noqa: A002
                beta: float = 0.75, k: float = 1) -> Any:
        if input.dim() != 4:
            raise ValueError(
                f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        window = _forward_window(tuple(input.shape), size)
        scale_factor = alpha / size
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            name = _CPP.get(input.dtype.name, input.dtype.name)
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{name}")
        scale = _mix(window, input * input) * scale_factor + k
        output = scale.pow(-beta) * input
        ctx.scale = scale
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        input, output = ctx.saved_tensors  # noqa: A001
        window = _backward_window(tuple(input.shape), ctx.size)
        scale = ctx.scale
        ratio = grad_output * output / scale
        coef = 2 * ctx.alpha * ctx.beta / ctx.size
        grad_input = scale.pow(-ctx.beta) * grad_output - coef * input * _mix(window, ratio)
        return grad_input, None, None, None, None


_CrossMapLRN2dFunction.__name__ = "CrossMapLRN2d"
_CrossMapLRN2dFunction.__qualname__ = "CrossMapLRN2d"


class CrossMapLRN2d(Module):
    """Legacy cross-channel local response normalization of an ``(N, C, H, W)`` input:
    ``x / (k + alpha / size * s) ** beta`` with ``s`` PyTorch's running sum of squares
    over about ``size`` neighbouring channels; its backward is PyTorch's own.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> nn.CrossMapLRN2d(5)
    CrossMapLRN2d(5, alpha=0.0001, beta=0.75, k=1)
    >>> nn.CrossMapLRN2d(2, alpha=3.0, beta=1.0)(torch.ones(1, 2, 1, 1)).flatten()
    tensor([0.4000, 0.2500])
    """

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta,
                                            self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
