"""Resizing, as PyTorch's: ``F.interpolate`` (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear, area; ``align_corners``, ``scale_factor``/``size``,
``recompute_scale_factor``, ``antialias`` for bilinear/bicubic), the deprecated
``F.upsample*`` and the ``Upsample`` modules.

Every mode but ``area`` is separable: along each spatial axis an output position is a
weighted sum of a few input positions (1 for nearest, 2 for linear, 4 for bicubic, a
window for antialiasing). Those positions and weights are computed here with NumPy as
PyTorch's kernels compute them; the resize itself is ``take`` and multiply-add in engine
operations, so its gradient (the scatter-add of PyTorch's backward kernels) comes from the
engine.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> F.interpolate(torch.tensor([[[1.0, 2.0]]]), scale_factor=2, mode="linear")
tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch.nn._apply import floating, op
from funcgrad.torch.nn._kernel_dtypes import is_float_tensor, no_kernel
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "interpolate",
           "upsample", "upsample_bilinear", "upsample_nearest"]

_LINEAR_RANK = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
_MODES = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
          "nearest-exact")

# A table of taps: (positions, weights), both (taps, out).
Taps = tuple[np.ndarray, np.ndarray]


def _scale_value(opt_scale: float | None, n_in: int, n_out: int, acc: Any) -> Any:
    """PyTorch's ``compute_scales_value``: 1/scale_factor when one was given, else in/out."""
    if opt_scale is not None and opt_scale > 0:
        return acc(1.0 / opt_scale)
    return acc(n_in) / acc(n_out)


def _area_scale(n_in: int, n_out: int, align_corners: bool, opt_scale: float | None,
                acc: Any) -> Any:
    if align_corners:
        return acc(n_in - 1) / acc(n_out - 1) if n_out > 1 else acc(0)
    return _scale_value(opt_scale, n_in, n_out, acc)


def _nearest_taps(n_in: int, n_out: int, opt_scale: float | None, exact: bool) -> Taps:
    dst = np.arange(n_out)
    # float32 arithmetic, as PyTorch's nearest kernels (it decides which pixel ties go to).
    scale = _scale_value(opt_scale, n_in, n_out, np.float32)
    pos = (dst.astype(np.float64) + 0.5) * np.float64(scale) if exact else \
        dst.astype(np.float32) * scale
    idx = np.minimum(np.floor(pos.astype(np.float32)).astype(np.int64), n_in - 1)
    return idx[None, :], np.ones((1, n_out))


def _linear_taps(n_in: int, n_out: int, align_corners: bool, opt_scale: float | None,
                 acc: Any) -> Taps:
    scale = _area_scale(n_in, n_out, align_corners, opt_scale, acc)
    dst = np.arange(n_out).astype(acc)
    src = scale * dst if align_corners else np.maximum(scale * (dst + acc(0.5)) - acc(0.5), 0)
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam1 = np.minimum(np.maximum(src - i0.astype(acc), 0), 1)
    return np.stack([i0, i1]), np.stack([1 - lam1, lam1]).astype(np.float64)


def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter ``a``."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _lanczos(t: np.ndarray) -> np.ndarray:
    """Lanczos-3: ``sinc(t) sinc(t / 3)`` inside (-3, 3)."""
    return np.where(np.abs(t) < 3.0, np.sinc(t) * np.sinc(t / 3.0), 0.0)


def _bicubic_taps(n_in: int, n_out: int, align_corners: bool, opt_scale: float | None,
                  acc: Any) -> Taps:
    scale = _area_scale(n_in, n_out, align_corners, opt_scale, acc)
    dst = np.arange(n_out).astype(acc)
    src = scale * dst if align_corners else scale * (dst + acc(0.5)) - acc(0.5)
    base = np.floor(src)
    t = (src - base).astype(np.float64)
    offsets = np.arange(-1, 3)
    idx = np.clip(base.astype(np.int64)[None, :] + offsets[:, None], 0, n_in - 1)
    w = _cubic(t[None, :] - offsets[:, None], -0.75)
    return idx, w


def _antialias_taps(n_in: int, n_out: int, align_corners: bool, opt_scale: float | None,
                    support_half: float, kernel: Callable[[np.ndarray], np.ndarray]) -> Taps:
    """PyTorch's antialiased weights (PIL's): the kernel stretched by the scale when
    shrinking, normalised to sum 1 over the positions each output covers."""
    scale = float(_area_scale(n_in, n_out, align_corners, opt_scale, np.float64))
    support = support_half * scale if scale >= 1.0 else support_half
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    width = int(math.ceil(support)) * 2 + 1
    idx = np.zeros((width, n_out), np.int64)
    w = np.zeros((width, n_out))
    for i in range(n_out):
        # Centred on the output pixel also with align_corners (only the scale changes).
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        size = min(int(center + support + 0.5), n_in) - lo
        ws = kernel((np.arange(size) + lo - center + 0.5) * inv)
        total = ws.sum()
        idx[:size, i] = np.arange(size) + lo
        w[:size, i] = ws / total if total != 0 else ws
        idx[size:, i] = lo
    return idx, w


def _uint8_taps(mode: str, n_in: int, n_out: int, align_corners: bool,
                opt_scale: float | None, antialias: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """PyTorch's uint8 bilinear/bicubic weights (``compute_index_ranges_int16_weights``):
    computed in float64 (the antialiasing windows, or the kernel's taps with those past an
    edge added to the edge's), then scaled to int16 with the most bits that keep the
    largest below 2**15. Returns the positions, the integer weights and that number of
    bits."""
    interp = 2 if mode == "bilinear" else 4

    def kernel(t: np.ndarray) -> np.ndarray:
        if mode == "bilinear":
            return np.maximum(1.0 - np.abs(t), 0.0)
        # Keys' a = -0.5 when antialiasing (PIL's), else -0.75 (OpenCV's).
        return np.asarray(_cubic(t, -0.5 if antialias else -0.75))

    scale = float(_area_scale(n_in, n_out, align_corners, opt_scale, np.float64))
    if antialias:
        support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
        width = int(math.ceil(support)) * 2 + 1
        inv = 1.0 / scale if scale >= 1.0 else 1.0
    else:
        width = interp
    idx = np.zeros((width, n_out), np.int64)
    w = np.zeros((width, n_out))
    for i in range(n_out):
        if antialias:
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            size = min(max(min(int(center + support + 0.5), n_in) - lo, 0), width)
            ws = kernel((np.arange(size) + lo - center + 0.5) * inv)
            total = ws.sum()
            w[:size, i] = ws / total if total != 0.0 else ws
        else:
            src = scale * i if align_corners else scale * (i + 0.5) - 0.5
            if mode == "bilinear" and src < 0:
                src = 0.0
            base = min(int(np.floor(np.float32(src))), n_in - 1)
            lam = min(max(src - base, 0.0), 1.0)
            half = interp // 2
            first = base - half + 1
            lo = max(first, 0)
            size = min(max(min(base + half + 1, n_in) - lo, 0), width)
            slot = 0
            for j in range(interp):
                if first + j <= 0:
                    slot = 0
                elif first + j >= n_in - 1:
                    slot = size - 1
                w[slot, i] += float(kernel(np.asarray(float(j + 1 - half) - lam)))
                slot += 1
        idx[:, i] = lo
        idx[:size, i] = np.arange(size) + lo
    top = float(w.max()) if w.size else 0.0
    bits = 0
    while bits < 22 and int(0.5 + top * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    scaled = w * (1 << bits)
    # C's (int) cast of v -/+ 0.5: rounding half away from zero.
    weights = np.where(scaled < 0, np.trunc(scaled - 0.5), np.trunc(scaled + 0.5))
    return idx, weights.astype(np.int64), bits


def _resize_uint8(x: Any, out: list[int], scales: list[float] | None, mode: str,
                  align_corners: bool, antialias: bool) -> Any:
    """A uint8 image resized as PyTorch's CPU kernel does: one axis at a time (the last
    first), each pass in integer arithmetic rounded and clamped to 0..255."""
    spatial = [int(n) for n in x.shape[2:]]
    nd = len(spatial)
    passes = []
    for axis in [nd - 1, *range(nd - 2, -1, -1)]:
        if spatial[axis] != out[axis]:
            idx, w, bits = _uint8_taps(mode, spatial[axis], out[axis], align_corners,
                                       None if scales is None else scales[axis], antialias)
            passes.append((2 + axis, idx, w, bits))

    def impl(v: Any) -> Any:
        for axis, idx, w, bits in passes:
            shape = [1] * len(v.shape)
            shape[axis] = idx.shape[1]
            total = fnp.full((), 1 << (bits - 1), dtype=np.int64)
            for k in range(idx.shape[0]):
                term = fnp.astype(fnp.take(v, idx[k], axis=axis), np.int64)
                total = total + term * fnp.asarray(w[k].reshape(shape))
            v = fnp.astype(fnp.clip(total // (1 << bits), 0, 255), np.uint8)
        return v

    return op(_node(mode, nd, antialias), impl, x)


def _check_resize_dtype(x: Any, mode: str, out: list[int], antialias: bool) -> None:
    """PyTorch's kernels: the floating types; uint8 also for nearest, nearest-exact,
    bilinear and bicubic. The error names the kernel that refuses the rest: the
    channels-last one where PyTorch picks it (a channels-last input of over 3 channels,
    or, in 2-d, an output of at most 128 rows plus columns), else the index computation
    of the generic kernel."""
    if is_float_tensor(x) or (x.dtype.name == "uint8" and mode in (
            "nearest", "nearest-exact", "bilinear", "bicubic")):
        return
    nd = len(out)
    last = str(_layout.host_format(x)).startswith("torch.channels_last") and x.shape[1] > 3
    vectorized = last or (nd == 2 and sum(out) <= 128)
    nearest = mode in ("nearest", "nearest-exact")
    if antialias:
        kernel = "compute_index_ranges_weights"
    elif mode == "bicubic":
        kernel = "compute_indices_weights_cubic"
    elif vectorized and nd > 1 and (nearest or mode in ("bilinear", "trilinear")):
        kernel = f"upsample_{'nearest' if nearest else mode}{nd}d_channels_last"
    else:
        kernel = "compute_indices_weights_" + ("nearest" if nearest else "linear")
    raise no_kernel(kernel, x)


def _taps(mode: str, n_in: int, n_out: int, align_corners: bool, opt_scale: float | None,
          antialias: bool, acc: Any) -> Taps:
    if mode in ("nearest", "nearest-exact"):
        return _nearest_taps(n_in, n_out, opt_scale, mode == "nearest-exact")
    if mode == "lanczos":
        return _antialias_taps(n_in, n_out, align_corners, opt_scale, 3.0, _lanczos)
    if antialias and mode == "bilinear":
        return _antialias_taps(n_in, n_out, align_corners, opt_scale, 1.0,
                               lambda t: np.maximum(1.0 - np.abs(t), 0.0))
    if antialias:
        return _antialias_taps(n_in, n_out, align_corners, opt_scale, 2.0,
                               lambda t: _cubic(t, -0.5))
    if mode == "bicubic":
        return _bicubic_taps(n_in, n_out, align_corners, opt_scale, acc)
    return _linear_taps(n_in, n_out, align_corners, opt_scale, acc)


def _resize_axis(x: Any, axis: int, taps: Taps) -> Any:
    idx, w = taps
    shape = [1] * len(x.shape)
    shape[axis] = idx.shape[1]
    out = None
    for k in range(idx.shape[0]):
        term = fnp.take(x, idx[k], axis=axis)
        if not np.all(w[k] == 1.0):
            term = term * fnp.asarray(w[k].reshape(shape), dtype=fnp.result_type(x))
        out = term if out is None else out + term
    return out


def _node(mode: str, nd: int, antialias: bool) -> str:
    name = {"nearest": "Nearest", "nearest-exact": "NearestExact", "linear": "Linear",
            "bilinear": "Bilinear", "trilinear": "Trilinear", "bicubic": "Bicubic",
            "lanczos": "Lanczos"}[mode]
    return f"Upsample{name}{nd}D" + ("Aa" if antialias else "")


def _is_integer(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) or (
        hasattr(v, "dtype") and getattr(v, "ndim", 1) == 0 and "int" in str(v.dtype))


def _sizes(input: Any, size: Any, scale_factor: Any,  # noqa: A002
           recompute_scale_factor: bool | None, mode: str
           ) -> tuple[list[int], list[float] | None]:
    """PyTorch's output size and the scales its kernels get (None after recomputation)."""
    spatial = [int(n) for n in input.shape[2:]]
    dim = len(spatial)
    scales: list[float] | None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {spatial} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(v) for v in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    "Tuple[int, int, int], but got size with types "
                    f"{[type(v) for v in size]}")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * dim
        scales = None
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
                    "...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out = [math.floor(n * s) for n, s in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    if any(o <= 0 for o in out):
        names = "DHW"[3 - dim:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input ("
            + ", ".join(f"{a}: {n}" for a, n in zip(names, spatial))
            + (") and output (" if dim == 1 else ") output (")
            + ", ".join(f"{a}: {n}" for a, n in zip(names, out)) + ")")
    return out, scales


@autocast_op("interpolate")
@_layout.result_format("input")
def interpolate(input: Any, size: Any = None, scale_factor: Any = None,  # noqa: A002
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Any:
    """Resize the spatial axes of (N, C, d1, ...) to ``size`` or by ``scale_factor``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> x = torch.arange(4.0).reshape(1, 1, 2, 2)
    >>> F.interpolate(x, size=3, mode="bilinear", align_corners=True)
    tensor([[[[0.0000, 0.5000, 1.0000],
              [1.0000, 1.5000, 2.0000],
              [2.0000, 2.5000, 3.0000]]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    rank = len(input.shape)
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and rank == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "area" and 3 <= rank <= 5:
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[rank - 3]
        return pool(input, out)
    if mode == "lanczos" and rank == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode in _LINEAR_RANK and 3 <= rank <= 5 and _LINEAR_RANK[mode] != rank:
        raise NotImplementedError(f"Got {rank}D input, but {mode} mode needs "
                                  f"{_LINEAR_RANK[mode]}D input")
    if mode not in ("nearest", "nearest-exact", *_LINEAR_RANK) and not (
            mode == "lanczos" and rank == 4) or not 3 <= rank <= 5:
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {rank}D) for the modes: {_MODES} (got {mode})")
    return _resize(input, out, scales, mode, bool(align_corners), antialias)


def _resize(input: Any, out: list[int], scales: list[float] | None,  # noqa: A002
            mode: str, align_corners: bool, antialias: bool) -> Any:
    nd = len(out)
    spatial = [int(n) for n in input.shape[2:]]
    _check_resize_dtype(input, mode, out, antialias)
    if mode in ("bilinear", "bicubic") and not is_float_tensor(input):
        return _resize_uint8(input, out, scales, mode, align_corners, antialias)
    x = floating(input) if mode not in ("nearest", "nearest-exact") else input
    acc = np.float64 if str(x.dtype).endswith("float64") else np.float32
    if out == spatial and (antialias or mode in ("linear", "bilinear", "trilinear")):
        # PyTorch's linear kernels copy the input when no size changes, whatever the scales.
        tables = [(np.arange(n)[None, :], np.ones((1, n))) for n in out]
    else:
        tables = [_taps(mode, n, o, align_corners, None if scales is None else scales[i],
                    antialias, acc)
                  for i, (n, o) in enumerate(zip(spatial, out))]

    def impl(v: Any) -> Any:
        for i, taps in enumerate(tables):
            v = _resize_axis(v, 2 + i, taps)
        return v

    return op(_node(mode, nd, antialias), impl, x)


def upsample(input: Any, size: Any = None, scale_factor: Any = None,  # noqa: A002
             mode: str = "nearest", align_corners: bool | None = None) -> Any:
    """Deprecated: ``interpolate``.

    >>> import warnings
    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(torch.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Any:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Any:  # noqa: A002
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _float_factor(scale_factor: Any) -> Any:
    if isinstance(scale_factor, (list, tuple)):
        return tuple(float(f) for f in scale_factor)
    return float(scale_factor) if scale_factor else None


class Upsample(Module):
    """``interpolate`` as a layer.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> up = nn.Upsample(scale_factor=2, mode="nearest")
    >>> up
    Upsample(scale_factor=2.0, mode='nearest')
    >>> up(torch.tensor([[[1.0, 2.0]]]))
    tensor([[[1., 1., 2., 2.]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        self.scale_factor = _float_factor(scale_factor)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """2-d nearest-neighbour upsampling (``Upsample(mode='nearest')``)."""

    def __init__(self, size: Sequence[int] | int | None = None,
                 scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-d bilinear upsampling with ``align_corners=True``."""

    def __init__(self, size: Sequence[int] | int | None = None,
                 scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
