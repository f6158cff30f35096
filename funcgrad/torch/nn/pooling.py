"""Pooling, as PyTorch's: ``F.max_pool*``, ``F.avg_pool*``, ``F.adaptive_avg_pool*``,
``F.adaptive_max_pool*`` and their modules.

Max and average pooling are the ``reduce_window_max`` / ``reduce_window_sum`` primitives
(the gradient of a max window goes to its first largest element, as PyTorch's);
``return_indices`` gives PyTorch's flat indices into each (H, W) plane.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> x = torch.arange(16.0).reshape(1, 1, 4, 4)
>>> nn.MaxPool2d(2)(x)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
>>> nn.AvgPool2d(2)(x).grad_fn is None
True
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.torch import _half_math as half_math
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._dtypes import cpp_name
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import data
from funcgrad.torch.nn._kernel_dtypes import check_kernel_dtype, is_float_tensor, no_kernel
from funcgrad.torch.nn.conv import check_input_rank, ntuple, op
from funcgrad.torch.nn.module import Module
from funcgrad.transforms.custom import custom_jvp

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
    "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices",
    "max_pool3d", "max_pool3d_with_indices",
]


def pool_output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooled length: with ``ceil_mode`` the last window must still start inside
    the input or its left padding."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return max(out, 0)


def _half_trunc(v: int) -> int:
    """C++'s ``v / 2`` (truncated toward zero)."""
    return -((-v) // 2) if v < 0 else v // 2


def _torch_output_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape, with its checks of the stride and padding."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > _half_trunc((k - 1) * d + 1):
        raise RuntimeError("pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k} and dilation={d}")
    return pool_output_size(n, k, s, p, d, ceil_mode)


_COUNT = {2: "two", 3: "three"}


def _sized(name: str, nd: int, value: Any, what: str, optional: bool = False) -> Any:
    """``value`` checked for PyTorch's lengths (one int or ``nd`` of them)."""
    if nd > 1 and isinstance(value, (list, tuple)) and len(value) not in (1, nd) and not (
            optional and len(value) == 0):
        n = _COUNT[nd]
        raise RuntimeError({
            "kernel_size": f"{name}: kernel_size must either be a single int, or a tuple of "
                           f"{n} ints",
            "stride": f"{name}: stride must either be omitted, a single int, or a tuple of "
                      f"{n} ints",
            "padding": f"{name}: padding must either be a single int, or a tuple of {n} ints",
            "dilation": f"{name}: dilation must be either a single int, or a tuple of {n} ints",
        }[what])
    return value


class _Geometry:
    """Kernel, stride, padding and dilation of one pooling call, its output size, and
    PyTorch's checks of them in its order: ``max_pool1d`` without indices has checks of its
    own; the other 1-d pools are 2-d pools of a (C, 1, L) input; ``average``: avg_pool3d's
    check that the input holds a kernel."""

    def __init__(self, name: str, nd: int, input: Any, kernel_size: Any,  # noqa: A002
                 stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
                 own_1d_checks: bool = False, average: bool = False) -> None:
        spatial = [int(n) for n in input.shape[-nd:]]
        self.k = ntuple(_sized(name, nd, kernel_size, "kernel_size"), nd)
        self.s = ntuple(_sized(name, nd, stride, "stride", True), nd) \
            if stride is not None and stride not in ([], ()) else self.k
        self.p = ntuple(_sized(name, nd, padding, "padding"), nd)
        self.d = ntuple(_sized(name, nd, dilation, "dilation"), nd)
        if own_1d_checks:
            self.out = [self._check_max_pool1d(spatial[0], ceil_mode)]
        else:
            self.out = self._check(nd, input, spatial, ceil_mode, average)
        # The high side grows when ceil_mode lets the last window run past the padding.
        self.pads = [(p, max(p, (o - 1) * s + d * (k - 1) + 1 - n - p))
                     for n, o, k, s, p, d in zip(spatial, self.out, self.k, self.s, self.p,
                                                 self.d)]

    def _check_max_pool1d(self, n: int, ceil_mode: bool) -> int:
        (k,), (s,), (p,), (d,) = self.k, self.s, self.p, self.d
        for bad, text in ((k <= 0, f"kernel_size must be greater than zero, but got {k}"),
                          (s <= 0, f"stride must be greater than zero, but got {s}"),
                          (p < 0, f"padding must be non-negative, but got {p}"),
                          (p > k // 2, "padding should be at most half of kernel size, but "
                                       f"got padding={p} and kernel_size={k}"),
                          (d <= 0, f"dilation must be greater than zero, but got {d}")):
            if bad:
                raise RuntimeError(f"max_pool1d() {text}")
        out = pool_output_size(n, k, s, p, d, ceil_mode)
        if out <= 0:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
        return out

    def _check(self, nd: int, input: Any, spatial: list[int], ceil_mode: bool,  # noqa: A002
               average: bool) -> list[int]:
        # A 1-d pool is PyTorch's 2-d pool of a (C, 1, L) input.
        lift = (1,) if nd == 1 else ()
        k, s, d = lift + self.k, lift + self.s, lift + self.d
        p, n = (0,) * len(lift) + self.p, [*lift, *spatial]
        out = [_torch_output_size(*a, ceil_mode) for a in zip(n, k, s, p, d)]
        axes = "TH W" if len(k) == 3 else "H W"
        axes = axes.replace(" ", "")

        def said(prefix: str, values: Sequence[int]) -> str:
            return " ".join(f"{prefix}{a}: {v}" for a, v in zip(axes, values))

        if any(v <= 0 for v in k):
            raise RuntimeError(f"kernel size should be greater than zero, but got {said('k', k)}")
        if any(v <= 0 for v in s):
            raise RuntimeError(f"stride should be greater than zero, but got {said('d', s)}")
        if any(v <= 0 for v in d):
            raise RuntimeError("dilation should be greater than zero, but got "
                               f"{said('dilation', d)}")
        shape = list(input.shape)
        if len(k) == 2 and nd == 2 and 0 in shape[-3:]:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        if average and len(k) == 3 and any(a < b for a, b in zip(n, k)):
            raise RuntimeError(f"input image (T: {n[0]} H: {n[1]} W: {n[2]}) smaller than kernel "
                               f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
        if any(b // 2 < a for a, b in zip(p, k)):
            if len(k) == 2:
                raise RuntimeError("pad should be smaller than or equal to half of kernel size, "
                                   f"but got padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, "
                                   f"kH = {k[0]}")
            raise RuntimeError("pad should be smaller than or equal to half of kernel size, but "
                               f"got kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                               f"padH: {p[1]}")
        if any(o < 1 for o in out):
            c = shape[-nd - 1] if len(shape) > nd else 1
            raise RuntimeError(
                f"Given input size: ({'x'.join(map(str, [c, *n]))}). Calculated output size: "
                f"({'x'.join(map(str, [c, *out]))}). Output size is too small")
        return out[len(lift):]

    def window(self, lead: int) -> dict[str, Any]:
        return {"window_dimensions": (1,) * lead + self.k,
                "window_strides": (1,) * lead + self.s,
                "padding": ((0, 0),) * lead + tuple(self.pads),
                "base_dilation": None, "window_dilation": (1,) * lead + self.d}


def _batched(x: Any, batched: bool) -> Any:
    return x if batched else fnp.expand_dims(x, 0)


def _unbatched(x: Any, batched: bool) -> Any:
    return x if batched else fnp.squeeze(x, 0)


def _flat_indices(x: Any, nd: int, params: dict[str, Any]) -> Any:
    """PyTorch's indices: each window's first largest element as a flat position in its
    plane, found by the same selection that routes the gradient."""
    spatial = x.shape[-nd:]
    # float64 holds every position exactly and orders x's values as x's own dtype does;
    # integers (int64 past 2**53 too) are compared as int64.
    kind = np.int64 if np.dtype(x.dtype).kind in "iu" else np.float64
    plane = np.arange(math.prod(spatial), dtype=kind).reshape(spatial)
    xf = lax.stop_gradient(fnp.asarray(x, dtype=kind))
    ids = fnp.broadcast_to(plane, xf.shape)
    picked = lax.select_and_gather_add(ids, xf, "ge", params["window_dimensions"],
                                       params["window_strides"], params["padding"], None,
                                       params["window_dilation"])
    return fnp.asarray(picked, dtype=np.int64)


def _max_pool(nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,  # noqa: A002
              dilation: Any, ceil_mode: bool, return_indices: bool) -> Any:
    name = f"max_pool{nd}d"
    batched = check_input_rank(name, input, nd)
    # Without indices, max_pool1d is a kernel of its own (checks, dtypes); with them it is
    # max_pool2d's.
    own_1d = nd == 1 and not return_indices
    geo = _Geometry(name, nd, input, kernel_size, stride, padding, dilation, ceil_mode,
                    own_1d_checks=own_1d)
    if own_1d:
        check_kernel_dtype("max_pool1d_impl", input)
    elif isinstance(input, Tensor) and input.dtype.name == "bool":
        raise no_kernel(f"max_pool{max(nd, 2)}d", input)
    params = geo.window(2)

    def window_max(xb: Any) -> Any:
        # The padding (and the start of each window) is the dtype's lowest value.
        kind = np.dtype(xb.dtype)
        low = np.iinfo(kind).min if kind.kind in "iu" else -np.inf
        return lax.reduce_window(xb, low, lax.max, **params)

    def make_half_max() -> Any:
        # (Made for half inputs only: the rule and the function refer to each other, a
        # reference cycle per call.)
        @custom_jvp
        def half_max(xb: Any) -> Any:
            return window_max(xb)

        def half_max_jvp(primals: Any, tangents: Any) -> Any:
            # PyTorch's backward kernel for a half input adds each window's gradient into the
            # half gradient buffer at its maximum, output by output (row-major), each sum
            # rounded: an element receives its windows' gradients from the last kernel offset
            # to the first. The tangent sums the offsets in the opposite order, rounding
            # between: transposed, the same sums. The maximum: the first largest element of
            # the window, or its last NaN, as PyTorch's forward loop picks it.
            (xb,), (tb,) = primals, tangents
            half = xb.dtype
            lead = len(xb.shape) - nd
            widths = [(0, 0)] * lead + [tuple(p) for p in geo.pads]
            xp = lax.stop_gradient(fnp.pad(fnp.astype(xb, np.float32), widths,
                                           constant_values=-np.inf))
            tp = fnp.pad(fnp.astype(tb, np.float32), widths)
            offsets = list(itertools.product(*(range(k) for k in geo.k)))

            def at(v: Any, j: tuple[int, ...]) -> Any:
                return v[(Ellipsis,) + tuple(slice(a * d, a * d + (o - 1) * s + 1, s)
                                             for a, d, o, s in zip(j, geo.d, geo.out, geo.s))]

            best, pick = None, None
            for i, j in enumerate(offsets):
                v = at(xp, j)
                if best is None:
                    best, pick = v, fnp.zeros(v.shape, dtype=np.int32)
                else:
                    take = (v > best) | fnp.isnan(v)
                    best = fnp.where(take, v, best)
                    pick = fnp.where(take, np.int32(i), pick)
            total = None
            for i, j in enumerate(offsets):
                part = fnp.where(pick == i, at(tp, j), np.float32(0))
                total = part if total is None else total + part
                tp = half_math.round_trip(tp, half)
            return half_max(xb), fnp.astype(total, half)

        half_max.defjvp(half_max_jvp)
        return half_max

    def impl(x: Any) -> Any:
        xb = _batched(x, batched)
        pooled = make_half_max() if half_math.half_dtype(x) is not None else window_max
        out = _unbatched(pooled(xb), batched)
        if not return_indices:
            return out
        return out, _unbatched(_flat_indices(xb, nd, params), batched)

    node = f"MaxPool{max(nd, 2)}DWithIndices" if nd > 1 else "Squeeze:1"
    return op(node, impl, input)


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-d max pooling over (N, C, L) (or (C, L)).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.max_pool1d(torch.tensor([[[1.0, 3.0, 2.0, 0.0, 5.0]]]), 2, ceil_mode=True)
    tensor([[[3., 2., 5.]]])
    """
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-d max pooling over (N, C, H, W) (or (C, H, W)).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> out, idx = F.max_pool2d(torch.arange(9.0).reshape(1, 1, 3, 3), 2, 1,
    ...                         return_indices=True)
    >>> idx
    tensor([[[[4, 5],
              [7, 8]]]])
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


@autocast_op("max_pool3d")
def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-d max pooling over (N, C, D, H, W) (or (C, D, H, W)).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.max_pool3d(torch.arange(8.0).reshape(1, 1, 2, 2, 2), 2).flatten()
    tensor([7.])
    """
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool1d_with_indices(*args: Any, **kwargs: Any) -> Any:
    """``max_pool1d`` with ``return_indices=True``."""
    return max_pool1d(*args, **{**kwargs, "return_indices": True})


def max_pool2d_with_indices(*args: Any, **kwargs: Any) -> Any:
    """``max_pool2d`` with ``return_indices=True``."""
    return max_pool2d(*args, **{**kwargs, "return_indices": True})


def max_pool3d_with_indices(*args: Any, **kwargs: Any) -> Any:
    """``max_pool3d`` with ``return_indices=True``."""
    return max_pool3d(*args, **{**kwargs, "return_indices": True})


_HALF_NAMES = {"torch.bfloat16": "BFloat16", "torch.float16": "Half"}


def _avg_divisor(spatial: Sequence[int], geo: _Geometry, count_include_pad: bool
                 ) -> np.ndarray:
    """PyTorch's divisor of each window: its size clipped to the padded input, or to the
    input alone without ``count_include_pad``."""
    sizes = []
    for n, o, k, s, p in zip(spatial, geo.out, geo.k, geo.s, geo.p):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        size = end - start
        if not count_include_pad:
            size = np.minimum(end, n) - np.maximum(start, 0)
        sizes.append(size)
    div = sizes[0]
    for size in sizes[1:]:
        div = np.multiply.outer(div, size)
    return np.asarray(div)


def _avg_pool(nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,  # noqa: A002
              ceil_mode: bool, count_include_pad: bool, divisor_override: Any) -> Any:
    name = f"avg_pool{nd}d"
    batched = check_input_rank(name, input, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    spatial = input.shape[-nd:]
    geo = _Geometry(name, nd, input, kernel_size, stride, padding, 1, ceil_mode, average=True)
    # PyTorch's kernels: the floating types and int64 (its sums divided with truncation).
    check_kernel_dtype("avg_pool3d_out_frame" if nd == 3 else "avg_pool2d", input,
                       also=("int64",))
    params = geo.window(2)
    if divisor_override is not None:
        div = np.asarray(float(divisor_override))
    else:
        div = _avg_divisor(spatial, geo, count_include_pad).astype(np.float64)

    if nd == 3 and half_math.half_dtype(data(input)) is not None:
        raise NotImplementedError('"avg_pool3d_out_frame" not implemented for '
                                  f"'{_HALF_NAMES[str(input.dtype)]}'")

    def window_sum(xb: Any) -> Any:
        zero = 0 if np.dtype(xb.dtype).kind in "iu" else 0.0
        return lax.reduce_window(xb, zero, lax.add, **params)

    div32 = np.asarray(div, dtype=np.float32)

    def half_tangent(t: Any, half: Any) -> Any:
        # PyTorch's backward kernel: delta = grad / divisor rounded to the half type, then
        # added into the half gradient buffer output by output (row-major), each sum
        # rounded: an input element receives its windows' deltas from the last kernel
        # offset to the first. Transposed, this chain of rounded tangents does the same.
        rounding = half_math.round_trip
        lead = len(t.shape) - nd
        tp = fnp.pad(t, [(0, 0)] * lead + [tuple(p) for p in geo.pads])
        total = None
        for j in itertools.product(*(range(k) for k in geo.k)):
            part = tp[(Ellipsis,) + tuple(slice(a, a + (o - 1) * s + 1, s)
                                          for a, o, s in zip(j, geo.out, geo.s))]
            total = part if total is None else total + part
            tp = rounding(tp, half)
        return rounding(total, half) / div32

    # PyTorch's CPU kernel for a half input: each window summed in float32, divided and
    # rounded once.
    half_impl = half_math.linear(lambda v, _: window_sum(v) / div32, half_tangent)

    def impl(x: Any) -> Any:
        xb = _batched(x, batched)
        if half_math.half_dtype(x) is not None:
            return _unbatched(half_impl(xb), batched)
        total = window_sum(xb)
        if np.dtype(total.dtype).kind in "iu":
            # int64: the window's sum divided by its (integer) divisor, truncated.
            whole = fnp.broadcast_to(fnp.asarray(div.astype(np.int64)), total.shape)
            return _unbatched(lax.div(total, whole), batched)
        return _unbatched(total / fnp.asarray(div, dtype=fnp.result_type(x)), batched)

    node = f"AvgPool{nd}D" if nd > 1 else "Squeeze:1"
    return op(node, impl, input)


def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Any:
    """1-d average pooling over (N, C, L).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.avg_pool1d(torch.tensor([[[1.0, 3.0, 2.0]]]), 2, padding=1)
    tensor([[[0.5000, 2.5000]]])
    """
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Any:
    """2-d average pooling over (N, C, H, W).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.avg_pool2d(torch.ones(1, 1, 2, 2), 2, padding=1, count_include_pad=False)[0, 0]
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@autocast_op("avg_pool3d")
def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Any:
    """3-d average pooling over (N, C, D, H, W).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.avg_pool3d(torch.ones(1, 1, 2, 2, 2), 2, divisor_override=4).flatten()
    tensor([2.])
    """
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# ------------------------------------------------------------------- adaptive


def _adaptive_sizes(name: str, nd: int, input: Any, output_size: Any  # noqa: A002
                    ) -> tuple[bool, list[int], list[int]]:
    batched = check_input_rank(name, input, nd)
    spatial = [int(n) for n in input.shape[-nd:]]
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            raise ValueError(f"{name}: output_size must be {nd} elements, got {output_size}")
        out = [n if o is None else int(o) for o, n in zip(output_size, spatial)]
    else:
        out = [int(output_size)] * nd
    if any(n == 0 for n in (input.shape[1:] if batched else input.shape)):
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(input.shape)} with "
                           "dimension 1 being empty")
    return batched, spatial, out


def _bounds(n: int, o: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive windows: [floor(i n / o), ceil((i + 1) n / o))."""
    i = np.arange(o)
    return (i * n) // o, -(-((i + 1) * n) // o)


def _adaptive_avg(nd: int, input: Any, output_size: Any) -> Any:  # noqa: A002
    batched, spatial, out = _adaptive_sizes(f"adaptive_avg_pool{nd}d", nd, input, output_size)
    if not is_float_tensor(input):
        if all(o == 1 for o in out):
            # PyTorch takes the mean over the planes, which has no integer result dtype.
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{cpp_name(input.dtype)}")
        raise no_kernel("adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d", input)
    mats = []
    for n, o in zip(spatial, out):
        start, end = _bounds(n, o)
        pos = np.arange(n)[:, None]
        inside = (pos >= start[None, :]) & (pos < end[None, :])
        mats.append(inside / (end - start)[None, :])

    def along(x: Any, ms: Sequence[np.ndarray]) -> Any:
        rank = len(x.shape)
        for i, m in enumerate(ms):
            ax = rank - nd + i
            x = fnp.moveaxis(fnp.matmul(fnp.moveaxis(x, ax, -1),
                                        fnp.asarray(m, dtype=fnp.result_type(x))), -1, ax)
        return x

    # A half input, as PyTorch's CPU kernel: each box summed in float32, divided by its
    # height then its width (float32) and rounded once. Its backward computes
    # grad / kh / kw in the half type (each division rounded), then adds it into the half
    # gradient buffer output by output (row-major), each sum rounded; the windows that
    # hold an input element come in order of their rank among that element's windows
    # (its "slot"), so the tangent below sums the slots last to first, rounding between.
    sizes = [(end - start).astype(np.float32) for start, end in map(_bounds, spatial, out)]
    counts = [np.ones_like(m) * (m > 0) for m in mats]
    slots = []
    for n, o in zip(spatial, out):
        start, end = _bounds(n, o)
        pos = np.arange(n)
        inside = (pos[:, None] >= start[None, :]) & (pos[:, None] < end[None, :])
        first = inside.argmax(axis=1)
        rank = np.arange(o)[None, :] - first[:, None]
        slots.append([(inside & (rank == r)).astype(np.float32)
                      for r in range(int(inside.sum(axis=1).max()))])

    def divided(v: Any) -> Any:
        for i, d in enumerate(sizes):
            v = v / np.reshape(d, (-1,) + (1,) * (nd - 1 - i))
        return v

    def half_tangent(t: Any, half: Any) -> Any:
        total = None
        for ranks in reversed(list(itertools.product(*(range(len(m)) for m in slots)))):
            part = along(t, [m[r] for m, r in zip(slots, ranks)])
            total = part if total is None else total + part
            t = half_math.round_trip(t, half)
        for i in reversed(range(nd)):
            total = half_math.round_trip(total, half) / np.reshape(
                sizes[i], (-1,) + (1,) * (nd - 1 - i))
        return total

    def half_forward(v: Any, half: Any) -> Any:
        if nd < 3:
            return divided(along(v, counts))
        # adaptive_avg_pool3d's kernel sums and divides in the half type itself: each
        # box's elements added in row-major order, each sum rounded, then / kd / kh / kw,
        # each rounded.
        picks = []
        for n, o in zip(spatial, out):
            start, end = _bounds(n, o)
            picks.append([((np.arange(n)[:, None] == start[None, :] + a)
                           & (a < end - start)[None, :]).astype(np.float32)
                          for a in range(int((end - start).max()))])
        total = None
        for offsets in itertools.product(*(range(len(p)) for p in picks)):
            part = along(v, [p[a] for p, a in zip(picks, offsets)])
            total = part if total is None else half_math.round_trip(total + part, half)
        for i, d in enumerate(sizes):
            total = half_math.round_trip(
                total / np.reshape(d, (-1,) + (1,) * (nd - 1 - i)), half)
        return total

    half_impl = half_math.linear(half_forward, half_tangent)

    def impl(x: Any) -> Any:
        if half_math.half_dtype(x) is not None:
            return half_impl(x)
        # The mean over a box is the product of the means along each axis.
        return along(x, mats)

    if nd > 1 and all(o == 1 for o in out):
        node = "Mean:1"  # PyTorch takes the mean over the planes
    else:
        node = f"AdaptiveAvgPool{nd}D" if nd > 1 else "Squeeze:1"
    return op(node, impl, input)


@_layout.result_format("input")
def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """Average pooling to ``output_size`` positions (PyTorch's uneven windows).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.adaptive_avg_pool1d(torch.tensor([[[1.0, 2.0, 3.0]]]), 2)
    tensor([[[1.5000, 2.5000]]])
    """
    return _adaptive_avg(1, input, output_size)


@_layout.result_format("input")
def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """2-d average pooling to ``output_size`` (an int, or a pair whose None keeps a size).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.adaptive_avg_pool2d(torch.arange(4.0).reshape(1, 1, 2, 2), 1).flatten()
    tensor([1.5000])
    """
    return _adaptive_avg(2, input, output_size)


@autocast_op("adaptive_avg_pool3d")
@_layout.result_format("input")
def adaptive_avg_pool3d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """3-d average pooling to ``output_size``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.adaptive_avg_pool3d(torch.ones(1, 1, 3, 3, 3), 2).shape
    torch.Size([1, 1, 2, 2, 2])
    """
    return _adaptive_avg(3, input, output_size)


def _adaptive_max(nd: int, input: Any, output_size: Any,  # noqa: A002
                  return_indices: bool) -> Any:
    batched, spatial, out = _adaptive_sizes(f"adaptive_max_pool{nd}d", nd, input, output_size)
    check_kernel_dtype("adaptive_max_pool3d_cpu" if nd == 3 else "adaptive_max_pool2d", input)
    # Each axis: a (out, K) table of source positions, short windows repeating their last
    # position (a repeat cannot change a maximum, and comes after the original).
    tables = []
    for n, o in zip(spatial, out):
        start, end = _bounds(n, o)
        width = int((end - start).max())
        tables.append(np.minimum(start[:, None] + np.arange(width)[None, :], end[:, None] - 1))
    widths = [t.shape[1] for t in tables]
    flat = np.zeros([*out, *widths], dtype=np.int64)
    for i, t in enumerate(tables):
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = t.shape
        stride = math.prod(spatial[i + 1:])
        flat = flat + t.reshape(shape) * stride
    flat = flat.reshape(*out, math.prod(widths))

    def impl(x: Any) -> Any:
        lead = x.shape[:len(x.shape) - nd]
        planes = fnp.reshape(x, (*lead, math.prod(spatial)))
        windows = fnp.take(planes, flat, axis=-1)  # (*lead, *out, K)
        pick = fnp.argmax(lax.stop_gradient(windows), axis=-1)
        values = fnp.squeeze(fnp.take_along_axis(windows, pick[..., None], axis=-1), -1)
        if not return_indices:
            return values
        idx = fnp.take_along_axis(fnp.broadcast_to(flat, windows.shape), pick[..., None],
                                  axis=-1)
        return values, fnp.asarray(fnp.squeeze(idx, -1), dtype=np.int64)

    node = f"AdaptiveMaxPool{nd}D" if nd > 1 else "Squeeze:1"
    return op(node, impl, input)


@_layout.result_format("input")
def adaptive_max_pool1d(input: Any, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Max pooling to ``output_size`` positions.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.adaptive_max_pool1d(torch.tensor([[[1.0, 3.0, 2.0]]]), 2)
    tensor([[[3., 3.]]])
    """
    return _adaptive_max(1, input, output_size, return_indices)


@_layout.result_format("input")
def adaptive_max_pool2d(input: Any, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """2-d max pooling to ``output_size``; ``return_indices`` as ``max_pool2d``'s.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.adaptive_max_pool2d(torch.arange(9.0).reshape(1, 1, 3, 3), 2)[0, 0]
    tensor([[4., 5.],
            [7., 8.]])
    """
    return _adaptive_max(2, input, output_size, return_indices)


@autocast_op("adaptive_max_pool3d")
@_layout.result_format("input")
def adaptive_max_pool3d(input: Any, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """3-d max pooling to ``output_size``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.adaptive_max_pool3d(torch.arange(8.0).reshape(1, 1, 2, 2, 2), 1).flatten()
    tensor([7.])
    """
    return _adaptive_max(3, input, output_size, return_indices)


@_layout.result_format("input")
def adaptive_max_pool1d_with_indices(input: Any, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> Any:
    """``adaptive_max_pool1d`` with its indices."""
    return _adaptive_max(1, input, output_size, True)


@_layout.result_format("input")
def adaptive_max_pool2d_with_indices(input: Any, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> Any:
    """``adaptive_max_pool2d`` with its indices."""
    return _adaptive_max(2, input, output_size, True)


@_layout.result_format("input")
def adaptive_max_pool3d_with_indices(input: Any, output_size: Any,  # noqa: A002
                                     return_indices: bool = True) -> Any:
    """``adaptive_max_pool3d`` with its indices."""
    return _adaptive_max(3, input, output_size, True)


# --------------------------------------------------------------------- modules


class _MaxPoolNd(Module):
    nd = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's name
        return _max_pool(self.nd, input, self.kernel_size, self.stride, self.padding,
                         self.dilation, self.ceil_mode, self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """1-d max pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.MaxPool1d(3, stride=2)
    MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    nd = 1


class MaxPool2d(_MaxPoolNd):
    """2-d max pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    nd = 2


class MaxPool3d(_MaxPoolNd):
    """3-d max pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.MaxPool3d((1, 2, 2), ceil_mode=True)
    MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2), padding=0, dilation=1, ceil_mode=True)
    """

    nd = 3


class AvgPool1d(Module):
    """1-d average pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AvgPool1d(3, stride=2)
    AvgPool1d(kernel_size=(3,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = ntuple(kernel_size, 1)
        self.stride = ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Any) -> Any:  # noqa: A002
        return _avg_pool(1, input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                         self.count_include_pad, None)


class _AvgPoolNd(Module):
    nd = 0

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Any) -> Any:  # noqa: A002
        return _avg_pool(self.nd, input, self.kernel_size, self.stride, self.padding,
                         self.ceil_mode, self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPoolNd):
    """2-d average pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AvgPool2d(2, padding=1)
    AvgPool2d(kernel_size=2, stride=2, padding=1)
    """

    nd = 2


class AvgPool3d(_AvgPoolNd):
    """3-d average pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AvgPool3d(2)
    AvgPool3d(kernel_size=2, stride=2, padding=0)
    """

    nd = 3


class _AdaptivePool(Module):
    nd = 0

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptivePool):
    def forward(self, input: Any) -> Any:  # noqa: A002
        return _adaptive_avg(self.nd, input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-d adaptive average pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveAvgPool1d(5)
    AdaptiveAvgPool1d(output_size=5)
    """

    nd = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-d adaptive average pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveAvgPool2d((5, None))
    AdaptiveAvgPool2d(output_size=(5, None))
    """

    nd = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-d adaptive average pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveAvgPool3d(1)
    AdaptiveAvgPool3d(output_size=1)
    """

    nd = 3


class _AdaptiveMaxPoolNd(_AdaptivePool):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Any) -> Any:  # noqa: A002
        return _adaptive_max(self.nd, input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-d adaptive max pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveMaxPool1d(3)
    AdaptiveMaxPool1d(output_size=3)
    """

    nd = 1


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-d adaptive max pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
    AdaptiveMaxPool2d(output_size=(2, 3))
    """

    nd = 2


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-d adaptive max pooling.

    >>> import funcgrad.torch.nn as nn
    >>> nn.AdaptiveMaxPool3d(2)
    AdaptiveMaxPool3d(output_size=2)
    """

    nd = 3
