"""Max unpooling, as PyTorch's: ``F.max_unpool1d/2d/3d`` and ``MaxUnpool1d/2d/3d``, the
partial inverse of ``max_pool*(..., return_indices=True)``: each value goes back to the
flat position its index names in its (zero-filled) output plane.

The write is the engine's scatter (``index_update``), so the gradient is the gather of
PyTorch's ``MaxUnpool2DBackward0``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> out, idx = F.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
>>> F.max_unpool2d(out, idx, 2)
tensor([[[[ 0.,  0.,  0.,  0.],
          [ 0.,  5.,  0.,  7.],
          [ 0.,  0.,  0.,  0.],
          [ 0., 13.,  0., 15.]]]])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import op
from funcgrad.torch.nn.conv import ntuple
from funcgrad.torch.nn.module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]


def _output_size(spatial: list[int], kernel: tuple[int, ...], stride: tuple[int, ...],
                 padding: tuple[int, ...], output_size: Any) -> list[int]:
    """PyTorch's ``_unpool_output_size``: the pooled input's size, or a checked
    ``output_size`` (one stride either way of it)."""
    nd = len(kernel)
    default = [(n - 1) * s + k - 2 * p for n, k, s, p in zip(spatial, kernel, stride, padding)]
    if output_size is None:
        return default
    sizes = list(output_size)
    if len(sizes) == nd + 2:
        sizes = sizes[2:]
    if len(sizes) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(sizes)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < sizes[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f"{lo} and {hi})")
    return [int(v) for v in sizes]


def _host_indices(indices: Any) -> np.ndarray | None:
    """The indices' values when they are known now (eager), to check them as PyTorch."""
    if isinstance(indices, Tensor):
        try:
            return np.asarray(indices.detach().cpu().numpy())
        except Exception:  # noqa: BLE001 - a traced value: checked by nobody, as in JAX
            return None
    if isinstance(indices, np.ndarray):
        return indices
    return None


def _unpool(nd: int, input: Any, indices: Any, kernel_size: Any, stride: Any,  # noqa: A002
            padding: Any, output_size: Any) -> Any:
    k = ntuple(kernel_size, nd)
    s = ntuple(stride, nd) if stride is not None else k
    p = ntuple(padding, nd)
    rank = len(input.shape)
    if rank not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {rank} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    spatial = [int(n) for n in input.shape[rank - nd:]]
    out = _output_size(spatial, k, s, p, output_size)
    plane = math.prod(out)
    host = _host_indices(indices)
    invalid = None if host is None else (host < 0) | (host >= plane)
    if host is not None and invalid is not None and invalid.any():
        bad = int(host.ravel()[np.argmax(invalid.ravel())])  # the first, as PyTorch reports
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out))})")
    lead = tuple(int(n) for n in input.shape[:rank - nd])

    def impl(x: Any, idx: Any) -> Any:
        rows = math.prod(lead)
        flat_idx = fnp.reshape(fnp.asarray(idx, dtype=np.int64), (rows, -1))
        base = fnp.asarray(np.arange(rows, dtype=np.int64)[:, None] * plane)
        zeros = fnp.zeros(rows * plane, dtype=fnp.result_type(x))
        pos, vals = fnp.reshape(flat_idx + base, (-1,)), fnp.reshape(x, (-1,))
        written = fnp.index_update(zeros, pos, lax.stop_gradient(vals))
        # PyTorch's backward gathers the gradient for every input, also when two share an
        # index (overlapping windows): the gradient of a scatter-add, whose value is removed.
        summed = fnp.index_add(zeros, pos, vals)
        filled = written + (summed - lax.stop_gradient(summed))
        return fnp.reshape(filled, (*lead, *out))

    node = "Squeeze:1" if nd == 1 else f"MaxUnpool{nd}D"
    return op(node, impl, input, indices)


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,  # noqa: A002
                 padding: Any = 0, output_size: Any = None) -> Any:
    """The inverse of ``max_pool1d``: values at their indices, zeros elsewhere.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.max_unpool1d(torch.tensor([[[3.0]]]), torch.tensor([[[1]]]), 2)
    tensor([[[0., 3.]]])
    """
    return _unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,  # noqa: A002
                 padding: Any = 0, output_size: Any = None) -> Any:
    """The inverse of ``max_pool2d`` over (N, C, H, W) (or (C, H, W))."""
    return _unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None,  # noqa: A002
                 padding: Any = 0, output_size: Any = None) -> Any:
    """The inverse of ``max_pool3d`` over (N, C, D, H, W) (or (C, D, H, W))."""
    return _unpool(3, input, indices, kernel_size, stride, padding, output_size)


class _MaxUnpoolNd(Module):
    nd = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, self.nd)
        self.stride = ntuple(stride if stride is not None else kernel_size, self.nd)
        self.padding = ntuple(padding, self.nd)

    def forward(self, input: Any, indices: Any,  # noqa: A002 - PyTorch's name
                output_size: Any = None) -> Any:
        return _unpool(self.nd, input, indices, self.kernel_size, self.stride, self.padding,
                       output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """``max_unpool1d`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.MaxUnpool1d(3, stride=2, padding=1)
    MaxUnpool1d(kernel_size=(3,), stride=(2,), padding=(1,))
    """

    nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """``max_unpool2d`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """``max_unpool3d`` as a layer."""

    nd = 3
