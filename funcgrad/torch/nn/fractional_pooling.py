"""Fractional max pooling (Graham, 2014), as PyTorch's: ``F.fractional_max_pool2d/3d``
(``_with_indices``) and ``FractionalMaxPool2d/3d``.

Each (batch, channel) plane draws one sample ``u`` in [0, 1) per axis (PyTorch's
``_random_samples``); window ``i`` then starts at ``int((i + u) a) - int(u a)`` with
``a = (in - k) / (out - 1)``, the last one at ``in - k``. The windows are computed here
from the samples; the maximum is a gather and an argmax in engine operations, so the
gradient reaches each window's first largest element, as PyTorch's.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> x = torch.arange(16.0).reshape(1, 1, 4, 4)
>>> F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=torch.zeros(1, 1, 2))
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
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

__all__ = ["FractionalMaxPool2d", "FractionalMaxPool3d", "fractional_max_pool2d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]

_AXIS_WORD = ("time", "height", "width")


def _starts(u: np.ndarray, n: int, o: int, k: int) -> np.ndarray:
    """Window starts for samples ``u`` (any shape) -> (*u.shape, o), in u's precision."""
    seq = np.zeros((*u.shape, o), np.int64)
    if o > 1:
        alpha = u.dtype.type(n - k) / u.dtype.type(o - 1)
        i = np.arange(o - 1, dtype=u.dtype)
        seq[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - \
            (u[..., None] * alpha).astype(np.int64)
    if o > 0:
        seq[..., -1] = n - k
    return seq


def _samples_of(samples: Any, dtype: Any) -> np.ndarray:
    if isinstance(samples, Tensor):
        return np.asarray(samples.detach().cpu().numpy())
    return np.asarray(samples, dtype=dtype)


def _fractional(nd: int, input: Any, kernel_size: Any, output_size: Any,  # noqa: A002
                output_ratio: Any, return_indices: bool, _random_samples: Any) -> Any:
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    rank = len(input.shape)
    if rank not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    batched = rank == nd + 2
    spatial = [int(n) for n in input.shape[-nd:]]
    if output_size is None:
        ratio = tuple(float(r) for r in output_ratio) \
            if isinstance(output_ratio, (list, tuple)) else (float(output_ratio),) * nd
        out = [int(n * r) for n, r in zip(spatial, ratio)]
    else:
        out = list(ntuple(output_size, nd))
    k = ntuple(kernel_size, nd)
    suffix = "" if nd == 2 else "_out"
    for ax, (n, o, kk) in enumerate(zip(spatial, out, k)):
        word = _AXIS_WORD[ax + 3 - nd]
        # PyTorch's 3-d kernel also refuses windows that end exactly at the border.
        if o + kk - 1 > n or (nd == 3 and o + kk - 1 == n):
            raise RuntimeError(f"{name}{suffix}(): pool {word} {kk} too large relative to "
                               f"input {word} {n}")
    n_batch = int(input.shape[0]) if batched else 1
    channels = int(input.shape[-nd - 1])
    np_dtype = np.float64 if str(input.dtype).endswith("float64") else np.float32
    if _random_samples is None:
        from funcgrad.torch._creation import rand  # noqa: PLC0415

        _random_samples = rand(n_batch, channels, nd, dtype=input.dtype)
    u = _samples_of(_random_samples, np_dtype)
    if u.shape != (n_batch, channels, nd):
        raise RuntimeError(f"Expect _random_samples to be of shape {[n_batch, channels, nd]}, "
                           f"but got {list(u.shape)}")
    u = u.astype(np_dtype)
    # As PyTorch's kernels: in 2-d sample 0 drives the width, in 3-d the time (first) axis.
    starts = [_starts(u[..., nd - 1 - ax if nd == 2 else ax], n, o, kk)
              for ax, (n, o, kk) in enumerate(zip(spatial, out, k))]
    # Flat in-plane positions of every window element: (N, C, *out, prod(k)).
    flat = np.zeros((n_batch, channels, *out, *k), np.int64)
    for ax in range(nd):
        shape = [n_batch, channels] + [1] * (2 * nd)
        shape[2 + ax] = out[ax]
        pos = starts[ax].reshape(shape)
        kshape = [1] * (2 + 2 * nd)
        kshape[2 + nd + ax] = k[ax]
        pos = pos + np.arange(k[ax]).reshape(kshape)
        flat = flat + pos * math.prod(spatial[ax + 1:])
    flat = flat.reshape(n_batch, channels, *out, math.prod(k))
    if not batched:
        flat = flat[0]

    def impl(x: Any) -> Any:
        lead = x.shape[:len(x.shape) - nd]
        planes = fnp.reshape(x, (*lead, 1, math.prod(spatial)))
        windows = fnp.take_along_axis(
            planes, fnp.reshape(flat, (*lead, 1, -1)), axis=-1)
        windows = fnp.reshape(windows, (*lead, *out, math.prod(k)))
        pick = fnp.argmax(lax.stop_gradient(windows), axis=-1)
        values = fnp.squeeze(fnp.take_along_axis(windows, pick[..., None], axis=-1), -1)
        if not return_indices:
            return values
        idx = fnp.take_along_axis(flat, pick[..., None], axis=-1)
        return values, fnp.asarray(fnp.squeeze(idx, -1), dtype=np.int64)

    return op(f"FractionalMaxPool{nd}D", impl, input)


def fractional_max_pool2d(input: Any, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """2-d fractional max pooling over (N, C, H, W) (or (C, H, W))."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool3d(input: Any, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """3-d fractional max pooling over (N, C, D, H, W) (or (C, D, H, W))."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


def fractional_max_pool2d_with_indices(*args: Any, **kwargs: Any) -> Any:
    """``fractional_max_pool2d`` with ``return_indices=True``."""
    return fractional_max_pool2d(*args, **{**kwargs, "return_indices": True})


def fractional_max_pool3d_with_indices(*args: Any, **kwargs: Any) -> Any:
    """``fractional_max_pool3d`` with ``return_indices=True``."""
    return fractional_max_pool3d(*args, **{**kwargs, "return_indices": True})


class _FractionalMaxPoolNd(Module):
    nd = 0

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, self.nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = ntuple(output_size, self.nd) if output_size is not None else None
        self.output_ratio: Any = None
        if output_ratio is not None:
            ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else \
                (output_ratio,) * self.nd
            self.output_ratio = tuple(ratio)
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return _fractional(self.nd, input, self.kernel_size, self.output_size,
                           self.output_ratio, self.return_indices, self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """``fractional_max_pool2d`` as a layer.

    >>> import funcgrad.torch.nn as nn
    >>> nn.FractionalMaxPool2d(3, output_ratio=0.5)
    FractionalMaxPool2d()
    """

    nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """``fractional_max_pool3d`` as a layer."""

    nd = 3
