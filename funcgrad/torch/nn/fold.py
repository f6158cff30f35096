"""Sliding blocks, as PyTorch's: ``F.unfold`` (im2col), ``F.fold`` (col2im) and the
``Unfold`` / ``Fold`` layers.

Both are linear maps that act on each spatial axis separately: a 0/1 table
``A[h, k, o]`` says that kernel offset ``k`` of block ``o`` reads input row ``h``
(padding rows are simply absent). ``unfold`` contracts the input with the two tables and
``fold`` contracts the columns with them the other way; both are ``tensordot`` in engine
operations, so each one's gradient is the other, as PyTorch's ``Im2ColBackward0`` /
``Col2ImBackward0``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> x = torch.arange(9.0).reshape(1, 1, 3, 3)
>>> F.unfold(x, 2)
tensor([[[0., 1., 3., 4.],
         [1., 2., 4., 5.],
         [3., 4., 6., 7.],
         [4., 5., 7., 8.]]])
>>> F.fold(F.unfold(x, 2), (3, 3), 2)
tensor([[[[ 0.,  2.,  2.],
          [ 6., 16., 10.],
          [ 6., 14.,  8.]]]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch.nn._apply import op
from funcgrad.torch.nn.conv import ntuple
from funcgrad.torch.nn.module import Module

__all__ = ["Fold", "Unfold", "fold", "unfold"]


def _pair(name: str, v: Any) -> tuple[int, int]:
    t = ntuple(v, 2)
    if len(t) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(t)}")
    return t[0], t[1]


class _Blocks:
    """Kernel, dilation, padding and stride of one call; the number of blocks per axis."""

    def __init__(self, spatial: tuple[int, int], kernel_size: Any, dilation: Any,
                 padding: Any, stride: Any) -> None:
        self.k = _pair("kernel_size", kernel_size)
        self.d = _pair("dilation", dilation)
        self.p = _pair("padding", padding)
        self.s = _pair("stride", stride)
        if min(self.k) <= 0:
            raise RuntimeError("kernel size should be greater than zero, but got kernel_height: "
                               f"{self.k[0]} kernel_width: {self.k[1]}")
        if min(self.s) <= 0:
            raise RuntimeError("stride should be greater than zero, but got stride_height: "
                               f"{self.s[0]} stride_width: {self.s[1]}")
        if min(self.d) <= 0:
            raise RuntimeError("dilation should be greater than zero, but got dilation_height: "
                               f"{self.d[0]} dilation_width: {self.d[1]}")
        if min(self.p) < 0:
            raise RuntimeError("padding should be non-negative, but got pad_height: "
                               f"{self.p[0]} pad_width: {self.p[1]}")
        self.spatial = spatial
        self.blocks = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                            for n, k, d, p, s in zip(spatial, self.k, self.d, self.p, self.s))

    def describe(self) -> str:
        return (f"kernel_size={self.k}, dilation={self.d}, padding={self.p}")

    def tables(self) -> list[np.ndarray]:
        """Per axis, ``A[h, k, o] = 1`` where offset ``k`` of block ``o`` is input row ``h``."""
        out = []
        for n, k, d, p, s, b in zip(self.spatial, self.k, self.d, self.p, self.s, self.blocks):
            rows = np.arange(b)[None, :] * s + np.arange(k)[:, None] * d - p  # (k, o)
            out.append((np.arange(n)[:, None, None] == rows[None]).astype(np.float64))
        return out


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
           stride: Any = 1) -> Any:
    """The sliding blocks of (N, C, H, W) (or (C, H, W)) as columns:
    (N, C * kh * kw, L).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.unfold(torch.ones(2, 3, 4, 5), (2, 3)).shape
    torch.Size([2, 18, 9])
    """
    rank = len(input.shape)
    if rank < 3:
        # PyTorch's im2col reads the size of dimension ``rank`` before its checks.
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(rank, 1)}, {max(rank, 1) - 1}], but got {rank})")
    if rank not in (3, 4) or any(int(n) == 0 for n in input.shape[1:]):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
            f"non-zero dimensions for input, but got: {list(input.shape)}")
    spatial = (int(input.shape[-2]), int(input.shape[-1]))
    geo = _Blocks(spatial, kernel_size, dilation, padding, stride)
    if min(geo.blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {spatial}, {geo.describe()}, calculated shape of "
            f"the array of sliding blocks as {geo.blocks}, but its components must be at "
            "least one.")
    th, tw = geo.tables()
    kh, kw = geo.k

    def impl(x: Any) -> Any:
        dt = fnp.result_type(x)
        # (..., C, H, W) x (W, kw, ow) -> (..., C, H, kw, ow); then H against (H, kh, oh).
        y = fnp.tensordot(x, fnp.asarray(tw, dtype=dt), axes=([-1], [0]))
        y = fnp.tensordot(y, fnp.asarray(th, dtype=dt), axes=([-3], [0]))
        # y: (..., C, kw, ow, kh, oh) -> (..., C, kh, kw, oh, ow)
        nb = len(y.shape) - 5
        y = fnp.transpose(y, [*range(nb), nb, nb + 3, nb + 1, nb + 4, nb + 2])
        rows = y.shape[nb] * kh * kw  # (not -1: an empty batch has no size to infer from)
        return fnp.reshape(y, (*y.shape[:nb], rows, geo.blocks[0] * geo.blocks[1]))

    return op("Im2Col", impl, input)


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1,  # noqa: A002
         padding: Any = 0, stride: Any = 1) -> Any:
    """The columns of (N, C * kh * kw, L) (or (C * kh * kw, L)) summed back into
    (N, C, H, W): the adjoint of ``unfold``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.fold(torch.ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    rank = len(input.shape)
    if rank not in (2, 3) or any(int(n) == 0 for n in input.shape[-2:]):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}")
    out_hw = _pair("output_size", output_size)
    geo = _Blocks(out_hw, kernel_size, dilation, padding, stride)
    kh, kw = geo.k
    rows, cols = int(input.shape[-2]), int(input.shape[-1])
    if rows % (kh * kw):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={rows} and kernel_size={geo.k}.")
    if cols != geo.blocks[0] * geo.blocks[1] or min(geo.blocks) < 1:
        raise RuntimeError(
            f"Given output_size={out_hw}, {geo.describe()}, stride={geo.s}, expected size of "
            "input's dimension 2 to match the calculated number of sliding blocks "
            f"{geo.blocks[0]} * {geo.blocks[1]} = {geo.blocks[0] * geo.blocks[1]}, but got "
            f"input.size(2)={cols}.")
    th, tw = geo.tables()
    channels = rows // (kh * kw)

    def impl(x: Any) -> Any:
        dt = fnp.result_type(x)
        lead = x.shape[:-2]
        y = fnp.reshape(x, (*lead, channels, kh, kw, geo.blocks[0], geo.blocks[1]))
        # Contract (kw, ow) with the width table, then (kh, oh) with the height table.
        y = fnp.tensordot(y, fnp.asarray(tw, dtype=dt), axes=([-3, -1], [1, 2]))
        # y: (..., C, kh, oh, W)
        y = fnp.tensordot(y, fnp.asarray(th, dtype=dt), axes=([-3, -2], [1, 2]))
        # y: (..., C, W, H)
        return fnp.swapaxes(y, -1, -2)

    return op("Col2Im", impl, input)


class Unfold(Module):
    """``unfold`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Unfold(2, padding=1)
    Unfold(kernel_size=2, dilation=1, padding=1, stride=1)
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """``fold`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Fold((3, 4), 2)
    Fold(output_size=(3, 4), kernel_size=2, dilation=1, padding=0, stride=1)
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
