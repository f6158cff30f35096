"""Spatial transformers: ``F.affine_grid`` and ``F.grid_sample`` (2-D and 3-D), as
PyTorch's (``torch.affine_grid_generator``, ``torch.grid_sampler``).

Both are written with ``funcgrad.numpy`` and recorded as one graph node each
(``AffineGridGeneratorBackward0``, ``GridSampler2DBackward0``), so gradients with
respect to the input and to the grid come from the primitives' own rules. The source
index arithmetic (un-normalising, clipping for ``border``, reflecting for
``reflection``, rounding half to even for ``nearest``, the cubic convolution of
``bicubic``) follows ATen's ``GridSampler.h``, including where the clipping's gradient
is zero.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
>>> grid = F.affine_grid(theta, [1, 1, 2, 2], align_corners=False)
>>> img = torch.arange(4.0).reshape(1, 1, 2, 2)
>>> F.grid_sample(img, grid, align_corners=False)
tensor([[[[0., 1.],
          [2., 3.]]]])
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import op

__all__ = ["affine_grid", "affine_grid_generator", "grid_sample", "grid_sampler"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details.")
_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
# The cubic convolution's constant (ATen's, as Keys' kernel with a = -0.75).
_A = -0.75


# ------------------------------------------------------------------ affine_grid


def _base_coords(steps: int, align_corners: bool) -> np.ndarray:
    if steps <= 1:
        return np.zeros(1)
    r = np.linspace(-1.0, 1.0, steps)
    # Without align_corners the points are the pixel centres.
    return r if align_corners else r * (steps - 1) / steps


def affine_grid_generator(theta: Any, size: Sequence[int], align_corners: bool) -> Tensor:
    """``torch.affine_grid_generator``: the sampling grid of the affine maps ``theta``.

    >>> import funcgrad.torch as torch
    >>> theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> torch.affine_grid_generator(theta, [1, 1, 1, 2], True)[0, 0]
    tensor([[-1.,  0.],
            [ 1.,  0.]])
    """
    size = [int(s) for s in size]
    spatial = size[2:]
    # x varies along the last axis, then y, then z: (W, H[, D]) order in the last dim.
    axes = [_base_coords(s, align_corners) for s in reversed(spatial)]
    mesh = np.meshgrid(*axes[::-1], indexing="ij")  # each of shape spatial
    base = np.stack([*mesh[::-1], np.ones(spatial)], axis=-1).reshape(-1, len(spatial) + 1)
    n = size[0]

    def impl(th: Any) -> Any:
        b = fnp.asarray(base, dtype=th.dtype)
        out = fnp.matmul(b[None], fnp.swapaxes(th, 1, 2))
        return fnp.reshape(out, (n, *spatial, len(spatial)))

    # Linear in theta: PyTorch's node saves no tensor (a second backward is allowed).
    return op("AffineGridGenerator", impl, theta, saves_tensors=False)


def affine_grid(theta: Any, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    """The grid of sampling points (in [-1, 1]) of the affine maps ``theta``, for an
    output of ``size`` (N, C, H, W) or (N, C, D, H, W): the input of ``grid_sample``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.affine_grid(torch.eye(2, 3)[None], [1, 1, 1, 2], align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        # PyTorch's exception type for this case.
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, align_corners)


# ------------------------------------------------------------------ grid_sample


def _unnormalize(coord: Any, size: int, align_corners: bool) -> Any:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _clip(x: Any, size: int) -> Any:
    # ATen's clip_coordinates: the gradient is zero at and beyond the edges.
    hi = size - 1
    return fnp.where(x <= 0, fnp.zeros_like(x), fnp.where(x >= hi, fnp.full_like(x, hi), x))


def _reflect(x: Any, twice_low: int, twice_high: int) -> Any:
    if twice_low == twice_high:
        # Zero, still computed from x: the grid's gradient is a zero array, as PyTorch's.
        return x * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = fnp.abs(x - low)
    extra = fnp.fmod(x, span)
    flips = fnp.floor(x / span)
    return fnp.where(fnp.fmod(flips, 2) == 0, extra + low, span - extra + low)


def _pad_coords(x: Any, size: int, padding: int, align_corners: bool) -> Any:
    if padding == 1:
        return _clip(x, size)
    if padding == 2:
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        return _clip(x, size)
    return x


class _Gather:
    """Values of ``inp`` (N, C, *S) at integer points (each (N, *So)); points outside
    the input read zero."""

    def __init__(self, inp: Any, spatial: tuple[int, ...], out_spatial: tuple[int, ...]
                 ) -> None:
        self.n, self.c = inp.shape[0], inp.shape[1]
        self.spatial = spatial
        self.out_spatial = out_spatial
        self.flat = fnp.reshape(inp, (self.n, self.c, math.prod(spatial)))
        self.p = math.prod(out_spatial)

    def __call__(self, idx: Sequence[Any]) -> Any:
        # idx is in (x, y[, z]) order; the spatial axes are (..., H, W).
        sizes = self.spatial[::-1]
        valid = None
        lin = None
        stride = 1
        for i, s in zip(idx, sizes):
            ok = (i >= 0) & (i < s)
            valid = ok if valid is None else valid & ok
            term = fnp.clip(i, 0, s - 1) * stride
            lin = term if lin is None else lin + term
            stride *= s
        assert lin is not None and valid is not None
        lin = fnp.broadcast_to(fnp.reshape(lin, (self.n, 1, self.p)), (self.n, self.c, self.p))
        vals = fnp.take_along_axis(self.flat, lin, axis=2)
        vals = fnp.reshape(vals, (self.n, self.c, *self.out_spatial))
        return fnp.where(valid[:, None], vals, fnp.zeros_like(vals))


def _cubic1(t: Any) -> Any:
    return ((_A + 2) * t - (_A + 3)) * t * t + 1


def _cubic2(t: Any) -> Any:
    return ((_A * t - 5 * _A) * t + 8 * _A) * t - 4 * _A


def _cubic_coeffs(t: Any) -> list[Any]:
    return [_cubic2(t + 1), _cubic1(t), _cubic1(1 - t), _cubic2(2 - t)]


def _sampler(mode: int, padding: int, align_corners: bool, spatial: tuple[int, ...],
             out_spatial: tuple[int, ...]) -> Any:
    d = len(spatial)
    sizes = spatial[::-1]  # (W, H[, D]): the order of the grid's last axis

    def impl(inp: Any, grid: Any) -> Any:
        gather = _Gather(inp, spatial, out_spatial)
        coords = [grid[..., k] for k in range(d)]
        if mode == 2:
            return _bicubic(gather, coords, sizes, padding, align_corners)
        src = [_pad_coords(_unnormalize(c, s, align_corners), s, padding, align_corners)
               for c, s in zip(coords, sizes)]
        if mode == 1:
            # nearbyint: half to even, as ATen's. The zero term keeps the grid on the
            # graph: its gradient is a zero array (PyTorch's), not absent.
            zero = sum(src) * 0
            return gather([fnp.astype(fnp.round(x), np.int64) for x in src]) \
                + zero[:, None]
        lo = [fnp.floor(x) for x in src]
        lo_i = [fnp.astype(v, np.int64) for v in lo]
        out = None
        for corner in itertools.product((0, 1), repeat=d):
            weight = None
            for x, f, o in zip(src, lo, corner):
                w = (x - f) if o else (f + 1 - x)
                weight = w if weight is None else weight * w
            assert weight is not None
            vals = gather([i + o for i, o in zip(lo_i, corner)]) * weight[:, None]
            out = vals if out is None else out + vals
        return out

    return impl


def _bicubic(gather: _Gather, coords: list[Any], sizes: tuple[int, ...], padding: int,
             align_corners: bool) -> Any:
    # ATen's grid_sampler_2d bicubic: the taps are padded one by one (no clipping of the
    # point itself), so the weights see the unclipped position.
    ix = _unnormalize(coords[0], sizes[0], align_corners)
    iy = _unnormalize(coords[1], sizes[1], align_corners)
    fx, fy = fnp.floor(ix), fnp.floor(iy)
    cx, cy = _cubic_coeffs(ix - fx), _cubic_coeffs(iy - fy)

    def tap(base: Any, k: int, size: int) -> Any:
        pos = _pad_coords(base + (k - 1), size, padding, align_corners)
        return fnp.astype(pos, np.int64)

    out = None
    for i in range(4):
        yi = tap(fy, i, sizes[1])
        for j in range(4):
            xj = tap(fx, j, sizes[0])
            vals = gather([xj, yi]) * (cx[j] * cy[i])[:, None]
            out = vals if out is None else out + vals
    return out


def grid_sampler(input: Any, grid: Any, interpolation_mode: int,  # noqa: A002
                 padding_mode: int, align_corners: bool) -> Tensor:
    """``torch.grid_sampler``: ``grid_sample`` with the modes as integers (interpolation
    0 bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection).

    >>> import funcgrad.torch as torch
    >>> torch.grid_sampler(torch.ones(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.]]]])
    """
    ishape, gshape = list(input.shape), list(grid.shape)
    nd = input.dim()
    if nd not in (4, 5) or grid.dim() != nd:
        if grid.shape[-1] != nd - 2:
            raise RuntimeError(f"grid_sampler(): expected grid to have size {nd - 2} in last "
                               f"dimension, but got grid with sizes {gshape}")
        raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number "
                           f"of dimensions, but got input with sizes {ishape} and grid with "
                           f"sizes {gshape}")
    if ishape[0] != gshape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {ishape} and grid with sizes {gshape}")
    if gshape[-1] != nd - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd - 2} in last "
                           f"dimension, but got grid with sizes {gshape}")
    if interpolation_mode == 2 and nd != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"grid_sampler_{nd - 2}d_cpu_kernel_impl\" not implemented "
                                  f"for '{_scalar_name(input)}'")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_scalar_name(input)} but found "
                           f"{_scalar_name(grid)}")
    spatial = tuple(ishape[2:])
    out_spatial = tuple(gshape[1:-1])
    impl = _sampler(int(interpolation_mode), int(padding_mode), bool(align_corners), spatial,
                    out_spatial)
    return op(f"GridSampler{nd - 2}D", impl, input, grid)


def _scalar_name(t: Any) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
            "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
            "uint8": "Byte", "bool": "Bool"}.get(str(t.dtype).replace("torch.", ""),
                                                 str(t.dtype))


@autocast_op("grid_sample")
def grid_sample(input: Any, grid: Any, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the points of ``grid``
    ((N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), coordinates in [-1, 1]).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> img = torch.arange(4.0).reshape(1, 1, 2, 2)
    >>> F.grid_sample(img, torch.zeros(1, 1, 1, 2), align_corners=True)
    tensor([[[[1.5000]]]])
    """
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)
