"""``conv_general_dilated``: N-d convolution with strides, padding, dilations and groups.

JAX's primitive and its ``lax`` wrappers (``conv``, ``conv_with_general_padding``,
``conv_transpose``, ``conv_dimension_numbers``). ``dimension_numbers`` is a
:class:`ConvDimensionNumbers` of three permutations: ``lhs_spec`` lists lhs's (batch,
feature, spatial...) axes, ``rhs_spec`` the kernel's (out feature, in feature,
spatial...) axes, ``out_spec`` the result's (batch, feature, spatial...) axes. Like JAX
(and XLA) it is a cross-correlation: the kernel is not flipped.

>>> import numpy as np
>>> from funcgrad import lax
>>> x = np.arange(5.0).reshape(1, 1, 5)
>>> lax.conv_general_dilated(x, np.ones((1, 1, 2)), (1,), "VALID")
Array([[[1., 3., 5., 7.]]], dtype=float32)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import structural as S
from funcgrad.primitives.linalg import device_matmul_precision
from funcgrad.primitives.precision import check_dot_precision
from funcgrad.primitives.rules import add_tangents, wanted, zeros_like_aval

Pads = tuple[tuple[int, int], ...]


class ConvDimensionNumbers(NamedTuple):
    """Where the batch, feature and spatial axes of a convolution's operands lie.

    ``lhs_spec``: (batch axis, feature axis, spatial axes...) of lhs; ``rhs_spec``: (out
    feature axis, in feature axis, spatial axes...) of the kernel; ``out_spec``: (batch,
    feature, spatial...) of the result.

    >>> ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)).rhs_spec
    (0, 1, 2)
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


ConvGeneralDilatedDimensionNumbers = Any  # None, (str, str, str) or ConvDimensionNumbers


def conv_general_permutations(dimension_numbers: Sequence[str]
                              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The axis permutations of the string form ``('NCHW', 'OIHW', 'NCHW')``.

    Spatial axes are ordered as the kernel spec lists them (JAX's rule).

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec}.")
    if not (set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"}
            == set(out_spec) - {"N", "C"}):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}.")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return (perm(lhs_spec, pairs[0]), perm(rhs_spec, pairs[1]), perm(out_spec, pairs[2]))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, three spec strings, or ConvDimensionNumbers) as
    ConvDimensionNumbers; None means ('NC...', 'OI...', 'NC...').

    >>> conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(i) for i in s) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, (list, tuple)):
        if len(dimension_numbers) != 3:
            raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                            f"{len(dimension_numbers)}.")
        if not all(isinstance(s, str) for s in dimension_numbers):
            if all(isinstance(s, (list, tuple)) for s in dimension_numbers):
                return ConvDimensionNumbers(*(tuple(int(i) for i in s)
                                              for s in dimension_numbers))
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(type(s).__name__ for s in dimension_numbers)}.")
        for i, s in enumerate(dimension_numbers):
            if len(s) != len(lhs_shape):
                raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to "
                                f"the ndim of lhs and rhs, got {len(s)} for lhs and rhs "
                                f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers).__name__}.")


def dilate_dim(d: int, dilation: int) -> int:
    """The size of ``d`` elements spread ``dilation`` apart."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                     window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """(low, high) pads of 'SAME', 'SAME_LOWER' or 'VALID' (JAX's rule).

    >>> padtype_to_pads((5,), (3,), (2,), "SAME")
    [(1, 1)]
    """
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding type: {padding!r}; use 'SAME', 'SAME_LOWER', "
                         "'VALID' or a sequence of (low, high) pairs")
    out = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out_size = -(-n // s)
        total = max((out_size - 1) * s + w - n, 0)
        lo = total // 2 if kind == "SAME" else -(-total // 2)
        out.append((lo, total - lo))
    return out


# ------------------------------------------------------------------ the kernel


def placement(shape: Sequence[int], first: int, dilation: Sequence[int], pads: Sequence[Any]
              ) -> tuple[list[int], tuple[slice, ...], tuple[slice, ...]]:
    """Where an array of ``shape`` lands when its axes ``first...`` are spread ``dilation``
    apart and padded by ``(lo, hi)`` (negative pads crop): the new shape, and the slices
    of the source and of the destination that correspond."""
    new = list(shape)
    src: list[slice] = [slice(None)] * len(shape)
    dst: list[slice] = [slice(None)] * len(shape)
    for i, (d, (lo, hi)) in enumerate(zip(dilation, pads)):
        ax = first + i
        n = shape[ax]
        size = lo + dilate_dim(n, d) + hi
        if size < 0:
            raise ShapeError(f"padding {(lo, hi)} leaves a negative size on axis {ax}")
        # Element j lands at lo + j * d; keep the j whose place is inside [0, size).
        j0 = max(0, -(lo // d))
        j1 = max(j0, min(n, (size - 1 - lo) // d + 1) if size > 0 else 0)
        new[ax] = size
        src[ax] = slice(j0, j1)
        start = lo + j0 * d
        dst[ax] = slice(start, start + (j1 - j0 - 1) * d + 1 if j1 > j0 else start, d)
    return new, tuple(src), tuple(dst)


def dilate_pad(xp: Any, x: Any, first: int, dilation: Sequence[int], pads: Sequence[Any],
               value: Any) -> Any:
    """``x`` with its axes ``first...`` spread ``dilation`` apart and padded by ``(lo, hi)``
    (negative pads crop), the new places holding ``value``."""
    if all(d == 1 for d in dilation) and all(lo == hi == 0 for lo, hi in pads):
        return x
    shape, src, dst = placement(x.shape, first, dilation, pads)
    out = xp.full(shape, value, dtype=x.dtype)
    out[dst] = x[src]
    return out


def window_view(xp: Any, x: Any, first: int, window: Sequence[int], strides: Sequence[int],
                dilation: Sequence[int]) -> Any:
    """A strided view of shape ``x.shape[:first] + out + window``: every window of the axes
    ``first...`` (no copy)."""
    out = [max(0, (n - dilate_dim(w, d)) // s + 1) if n >= dilate_dim(w, d) else 0
           for n, w, s, d in zip(x.shape[first:], window, strides, dilation)]
    shape = (*x.shape[:first], *out, *window)
    if math.prod(shape) == 0:
        return xp.zeros(shape, dtype=x.dtype)
    st = x.strides
    strides_ = (*st[:first], *(st[first + i] * s for i, s in enumerate(strides)),
                *(st[first + i] * d for i, d in enumerate(dilation)))
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides_)


def _conv_canonical(xp: Any, x: Any, w: Any, strides: Sequence[int], pads: Pads,
                    lhs_dil: Sequence[int], rhs_dil: Sequence[int], groups: int,
                    batch_groups: int) -> Any:
    """Convolution of ``x`` (N, C, *S) with ``w`` (O, C/groups, *K) to (N/batch_groups, O,
    *S'): one im2col copy and one batched matrix product over the groups.

    Two layouts of the product. With many output positions per image (the forward and
    input-gradient convolutions of a CNN), the columns are (C*K, positions) per image and
    the kernel multiplies them from the left: the copy reads whole rows of the image and
    the product lands in (N, O, positions) order, with no transpose after it. With few
    output positions (the weight gradient, whose "kernel" is the output gradient) the
    columns are (positions, C*K) per image... stacked over the batch, so that one large
    product replaces many thin ones."""
    x = xp.ascontiguousarray(dilate_pad(xp, x, 2, lhs_dil, pads, 0))
    k = tuple(w.shape[2:])
    patches = window_view(xp, x, 2, k, strides, rhs_dil)  # (N, C, *out, *k)
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = tuple(patches.shape[2:2 + len(k)])
    nd = len(k)
    gb, gf = batch_groups, groups
    nb, cg, og = n // gb, c // gf, o // (gb * gf)
    npos, nk = math.prod(out_sp), cg * math.prod(k)
    p = patches.reshape(gb, nb, gf, cg, *out_sp, *k)
    wm = w.reshape(gb * gf, og, nk)
    if npos >= _ROWS_LAYOUT_MIN_POSITIONS:
        # (G, nb, C*K, positions): positions innermost, as they lie in the image.
        order = (0, 2, 1, 3, *range(4 + nd, 4 + 2 * nd), *range(4, 4 + nd))
        cols = xp.transpose(p, order).reshape(gb * gf, nb, nk, npos)
        res = xp.matmul(wm[:, None], cols)  # (G, nb, og, positions)
        if gb * gf > 1:
            res = xp.transpose(res, (1, 0, 2, 3))
        return res.reshape(nb, o, *out_sp)
    order = (0, 2, 1, *range(4, 4 + nd), 3, *range(4 + nd, 4 + 2 * nd))
    cols = xp.transpose(p, order).reshape(gb * gf, nb * npos, nk)
    res = xp.matmul(cols, xp.transpose(wm, (0, 2, 1))).reshape(gb, gf, nb, *out_sp, og)
    res = xp.transpose(res, (2, 0, 1, 2 + nd + 1, *range(3, 3 + nd)))
    return res.reshape(nb, o, *out_sp)


# Output positions per image from which the (C*K, positions) layout is the faster one
# (measured on the CNN workloads' shapes, NumPy + OpenBLAS; either layout is correct).
_ROWS_LAYOUT_MIN_POSITIONS = 64


def _conv_impl(xp: Any, lhs: Any, rhs: Any, *, window_strides: tuple[int, ...], padding: Pads,
               lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...],
               dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
               batch_group_count: int) -> Any:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    device_matmul_precision(xp, lhs.dtype)
    out = _conv_canonical(xp, xp.transpose(lhs, lhs_spec), xp.transpose(rhs, rhs_spec),
                          window_strides, padding, lhs_dilation, rhs_dilation,
                          feature_group_count, batch_group_count)
    out = xp.ascontiguousarray(xp.transpose(out, tuple(np.argsort(out_spec))))
    # Products of bfloat16 operands come back float32 from NumPy's matmul (ml_dtypes):
    # rounded back to the operands' type, as XLA and PyTorch do.
    return out if out.dtype == lhs.dtype else out.astype(lhs.dtype)


# -------------------------------------------------------------- the shape rule


def _feature_group_error(lhs_features: int, rhs_out: int, rhs_in: int,
                         g: int) -> ShapeError | None:
    """JAX's error for feature sizes that ``feature_group_count`` does not fit (None when
    they fit)."""
    if lhs_features % g:
        return ShapeError("conv_general_dilated feature_group_count must divide lhs feature "
                          f"dimension size, but {g} does not divide {lhs_features}.")
    if lhs_features // g != rhs_in:
        return ShapeError("conv_general_dilated lhs feature dimension size divided by "
                          "feature_group_count must equal the rhs input feature dimension "
                          f"size, but {lhs_features} // {g} != {rhs_in}.")
    if g > 1 and rhs_out % g:
        return ShapeError("conv_general_dilated rhs output feature dimension size must be a "
                          f"multiple of feature_group_count, but {rhs_out} is not a multiple "
                          f"of {g}.")
    return None


def _conv_abstract(lhs: ShapedArray, rhs: ShapedArray, *, window_strides: tuple[int, ...],
                   padding: Pads, lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...],
                   dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                   batch_group_count: int) -> ShapedArray:
    if lhs.dtype != rhs.dtype:
        raise DTypeError(f"lhs and rhs have different dtypes {lhs.dtype} and {rhs.dtype}; "
                         "convert one of them first")
    if dtypes.kind(lhs.dtype) not in "iufc":
        raise DTypeError(f"convolution needs numeric operands, got {lhs.dtype}")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"lhs and rhs must have the same rank (at least 2), got ranks "
                         f"{lhs.ndim} and {rhs.ndim}")
    nd = lhs.ndim - 2
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dimension_numbers):
        if sorted(spec) != list(range(lhs.ndim)):
            raise ShapeError(f"dimension_numbers.{name} {spec} is not a permutation of the "
                             f"{lhs.ndim} axes")
    for name, v in (("window_strides", window_strides), ("padding", padding),
                    ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(v) != nd:
            raise ShapeError(f"{name} has {len(v)} entries for {nd} spatial dimensions")
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if any(s < 1 for s in v):
            raise ShapeError(f"{name} must be positive, got {v}")
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1:
        raise ShapeError(f"feature_group_count ({g}) and batch_group_count ({b}) must be "
                         "positive")
    if g > 1 and b > 1:
        raise ShapeError(f"at most one of batch_group_count ({b}) and feature_group_count "
                         f"({g}) may be > 1")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    ls = [lhs.shape[i] for i in lhs_spec]
    rs = [rhs.shape[i] for i in rhs_spec]
    # Bound directly, the primitive's error names it and its operands (core.abstract_eval);
    # lax.conv_general_dilated raises JAX's text as it is before binding.
    err = _feature_group_error(ls[1], rs[0], rs[1], g)
    if err is not None:
        raise err
    if rs[0] % (g * b):
        raise ShapeError(f"the kernel's output feature size {rs[0]} is not a multiple of the "
                         f"group count {g * b}")
    if ls[0] % b:
        raise ShapeError(f"batch_group_count {b} does not divide the lhs batch size {ls[0]}")
    out = [ls[0] // b, rs[0]]
    for n, k, s, (lo, hi), ld, rd in zip(ls[2:], rs[2:], window_strides, padding, lhs_dilation,
                                         rhs_dilation):
        size = dilate_dim(n, ld) + lo + hi
        if size < 0:
            raise ShapeError(f"padding {(lo, hi)} is larger than the dilated input size "
                             f"{dilate_dim(n, ld)}")
        kk = dilate_dim(k, rd)
        out.append(0 if size < kk or kk == 0 else (size - kk) // s + 1)
    shape = [0] * lhs.ndim
    for pos, size in zip(out_spec, out):
        shape[pos] = size
    return ShapedArray(shape, lhs.dtype, lhs.weak_type and rhs.weak_type)


conv_general_dilated_p = Primitive("conv_general_dilated", abstract_eval=_conv_abstract,
                                   impl=_conv_impl)


def _bind(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Sequence[Any],
          lhs_dilation: Sequence[int], rhs_dilation: Sequence[int],
          dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
          batch_group_count: int) -> Any:
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(int(s) for s in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=tuple(int(d) for d in lhs_dilation),
        rhs_dilation=tuple(int(d) for d in rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(*(tuple(int(i) for i in s)
                                                 for s in dimension_numbers)),
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count))


# --------------------------------------------------------------------- wrappers


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """General N-d convolution (a cross-correlation), as ``jax.lax.conv_general_dilated``.

    ``padding`` is 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs; ``lhs_dilation``
    spreads the input (transposed convolution), ``rhs_dilation`` the kernel (atrous).
    ``precision`` is checked as JAX checks it and otherwise ignored (NumPy and CuPy compute
    at the operands' own precision); ``preferred_element_type`` converts the operands first.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> x, k = np.ones((1, 4, 4, 1)), np.ones((3, 3, 1, 2))
    >>> lax.conv_general_dilated(x, k, (1, 1), "SAME",
    ...                          dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (1, 4, 4, 2)
    """
    if precision is not None:
        check_dot_precision(precision)
    lshape, rshape = get_aval(lhs).shape, get_aval(rhs).shape
    dnums = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    nd = len(lshape) - 2
    if lhs_dilation is None:
        lhs_dilation = (1,) * nd
    elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("String padding is not implemented for transposed convolution using "
                         "this op. Please either exactly specify the required padding or use "
                         "conv_transpose.")
    if rhs_dilation is None:
        rhs_dilation = (1,) * nd
    if isinstance(padding, str):
        in_sp = [lshape[i] for i in dnums.lhs_spec[2:]]
        k_sp = [dilate_dim(rshape[i], d) for i, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads(in_sp, k_sp, window_strides, padding)
    else:
        try:
            padding = [(operator.index(lo), operator.index(hi)) for lo, hi in padding]
        except (ValueError, TypeError) as e:
            raise ValueError("padding argument to conv_general_dilated should be a string or "
                             f"a sequence of (low, high) pairs, got {padding}") from e
    if preferred_element_type is not None:
        from funcgrad.primitives.elementwise import convert_element_type  # noqa: PLC0415

        target = dtypes.to_dtype(preferred_element_type)
        lhs, rhs = (convert_element_type(a, target) if get_aval(a).dtype != target else a
                    for a in (lhs, rhs))
    if len(lshape) == len(rshape) >= 2 and feature_group_count >= 1:
        err = _feature_group_error(lshape[dnums.lhs_spec[1]], rshape[dnums.rhs_spec[0]],
                                   rshape[dnums.rhs_spec[1]], feature_group_count)
        if err is not None:
            raise err
    return _bind(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dnums,
                 feature_group_count, batch_group_count)


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Convolution of NC... inputs with OI... kernels (``conv_general_dilated``'s defaults).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.conv(np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2)), (1, 1), "VALID")[0, 0]
    Array([[4., 4.],
           [4., 4.]], dtype=float64)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """``conv`` with explicit padding pairs and dilations.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.conv_with_general_padding(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,),
    ...                               [(1, 1)], None, None)
    Array([[[1., 2., 2., 1.]]], dtype=float64)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """The fractionally strided convolution, as ``jax.lax.conv_transpose`` (NHWC/HWIO
    defaults; ``transpose_kernel`` flips the kernel and swaps its feature axes).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.conv_transpose(np.ones((1, 2, 1)), np.ones((2, 1, 1)), (2,), "VALID")[0, :, 0]
    Array([1., 1., 1., 1.], dtype=float64)
    """
    lshape, rshape = get_aval(lhs).shape, get_aval(rhs).shape
    ndims = len(lshape)
    if dimension_numbers is None:
        defaults = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                    4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
        if ndims not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[ndims]
    dn = conv_dimension_numbers(lshape, rshape, dimension_numbers)
    k_sdims = [rshape[i] for i in dn.rhs_spec[2:]]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndims - 2)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        eff = [dilate_dim(k, r) for k, r in zip(k_sdims, rhs_dilation)]
        rep = [padding] * len(strides) if isinstance(padding, str) else list(padding)
        pads: Any = [_conv_transpose_padding(k, s, tuple(p) if not isinstance(p, str) else p)
                     for k, s, p in zip(eff, strides, rep)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = S.rev(rhs, dn.rhs_spec[2:])
        perm = list(range(ndims))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = S.transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * (ndims - 2), pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# ----------------------------------------------------------------- derivatives


def _reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """Merge axis ``src`` into axis ``dst`` (of the array without ``src``) as its major
    part."""
    shape = get_aval(x).shape
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new_shape = [d for i, d in enumerate(shape) if i != src]
    new_shape[dst] *= shape[src]
    return S.reshape(S.transpose(x, perm), new_shape)


def _reshape_axis_out_of(src: int, size1: int, x: Any) -> Any:
    """Split axis ``src`` into (size1, rest)."""
    shape = list(get_aval(x).shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return S.reshape(x, shape)


def _dilate_shape(shape: Sequence[int], dilation: Sequence[int]) -> list[int]:
    return [dilate_dim(d, r) for d, r in zip(shape, dilation)]


def vjp_lhs_padding(in_shape: Sequence[int], window: Sequence[int], strides: Sequence[int],
                     out_shape: Sequence[int], padding: Pads, lhs_dilation: Sequence[int],
                     rhs_dilation: Sequence[int]) -> list[tuple[int, int]]:
    lhs_d = _dilate_shape(in_shape, lhs_dilation)
    rhs_d = _dilate_shape(window, rhs_dilation)
    out_d = _dilate_shape(out_shape, strides)
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, padding)]
    after = [ld + r - 1 - od - b for ld, r, od, b in zip(lhs_d, rhs_d, out_d, before)]
    return list(zip(before, after))


def _vjp_rhs_padding(in_shape: Sequence[int], window: Sequence[int], strides: Sequence[int],
                     out_shape: Sequence[int], padding: Pads, lhs_dilation: Sequence[int],
                     rhs_dilation: Sequence[int]) -> list[tuple[int, int]]:
    if not in_shape:
        return []
    lhs_d = _dilate_shape(in_shape, lhs_dilation)
    rhs_d = _dilate_shape(window, rhs_dilation)
    out_d = _dilate_shape(out_shape, strides)
    los = [lo for lo, _ in padding]
    his = [(od - ld) + (rd - lo - 1) for od, ld, rd, lo in zip(out_d, lhs_d, rhs_d, los)]
    return list(zip(los, his))


def _transpose_lhs(g: Any, lhs_aval: ShapedArray, rhs: Any, *, window_strides: tuple[int, ...],
                   padding: Pads, lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...],
                   dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                   batch_group_count: int) -> Any:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rhs_shape = get_aval(rhs).shape
    t_rhs_spec = (rhs_spec[1], rhs_spec[0], *rhs_spec[2:])
    groups = feature_group_count
    if feature_group_count > 1 or batch_group_count > 1:
        count = max(feature_group_count, batch_group_count)
        rhs = _reshape_axis_out_of(rhs_spec[0], count, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        groups = count
    pads = vjp_lhs_padding([lhs_aval.shape[i] for i in lhs_spec[2:]],
                            [rhs_shape[i] for i in rhs_spec[2:]], window_strides,
                            [get_aval(g).shape[i] for i in out_spec[2:]], padding,
                            lhs_dilation, rhs_dilation)
    out = _bind(g, S.rev(rhs, rhs_spec[2:]), lhs_dilation, pads, window_strides, rhs_dilation,
                ConvDimensionNumbers(out_spec, t_rhs_spec, lhs_spec), groups, 1)
    if batch_group_count > 1:
        out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _transpose_rhs(g: Any, lhs: Any, rhs_aval: ShapedArray, *, window_strides: tuple[int, ...],
                   padding: Pads, lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...],
                   dimension_numbers: ConvDimensionNumbers, feature_group_count: int,
                   batch_group_count: int) -> Any:
    if math.prod(get_aval(g).shape) == 0:
        return zeros_like_aval(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    swap = lambda s: (s[1], s[0], *s[2:])  # noqa: E731
    # Feature groups of the forward pass are batch groups here, and the other way round.
    groups, batch_groups = batch_group_count, feature_group_count
    pads = _vjp_rhs_padding([get_aval(lhs).shape[i] for i in lhs_spec[2:]],
                            [rhs_aval.shape[i] for i in rhs_spec[2:]], window_strides,
                            [get_aval(g).shape[i] for i in out_spec[2:]], padding,
                            lhs_dilation, rhs_dilation)
    return _bind(lhs, g, rhs_dilation, pads, lhs_dilation, window_strides,
                 ConvDimensionNumbers(swap(lhs_spec), swap(out_spec), swap(rhs_spec)),
                 groups, batch_groups)


def _conv_vjp(ct: Any, primals: Sequence[Any], ans: Any, **params: Any) -> list[Any]:
    lhs, rhs = primals
    return [_transpose_lhs(ct, get_aval(lhs), rhs, **params) if wanted(0) else None,
            _transpose_rhs(ct, lhs, get_aval(rhs), **params) if wanted(1) else None]


def _conv_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    lhs, rhs = primals
    tl, tr = tangents
    ans = conv_general_dilated_p.bind(lhs, rhs, **params)
    out = None
    if tl is not None:
        out = conv_general_dilated_p.bind(tl, rhs, **params)
    if tr is not None:
        out = add_tangents(out, conv_general_dilated_p.bind(lhs, tr, **params))
    return ans, out


conv_general_dilated_p.jvp, conv_general_dilated_p.vjp = _conv_jvp, _conv_vjp
conv_general_dilated_p.vjp_reads = "x0,x1"
conv_general_dilated_p.vjp_reads_for = ("x1", "x0")


# --------------------------------------------------------------------- batching


def _conv_batch(args: Sequence[Any], dims: Sequence[int | None], *,
                window_strides: tuple[int, ...], padding: Pads, lhs_dilation: tuple[int, ...],
                rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
                feature_group_count: int, batch_group_count: int) -> Any:
    """JAX's rule: the mapped axis joins lhs's batch or feature axis, or the kernel's output
    feature axis, with the group counts scaled to keep members apart."""
    lhs, rhs = args
    lb, rb = dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    fgc, bgc = feature_group_count, batch_group_count

    def run(new_lhs: Any, new_rhs: Any, f: int, b: int) -> Any:
        return _bind(new_lhs, new_rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                     dimension_numbers, f, b)

    if lb is not None and rb is not None:
        size = get_aval(lhs).shape[lb]
        if bgc > 1:
            new_lhs = _reshape_axis_into(lb, lhs_spec[0], lhs)
            bgc *= size
        else:
            new_lhs = _reshape_axis_into(lb, lhs_spec[1], lhs)
            fgc *= size
        new_rhs = _reshape_axis_into(rb, rhs_spec[0], rhs)
        out = run(new_lhs, new_rhs, fgc, bgc)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lb is not None:
        size = get_aval(lhs).shape[lb]
        if bgc == 1:
            new_lhs = _reshape_axis_into(lb, lhs_spec[0], lhs)
        else:
            new_lhs = _reshape_axis_out_of(lhs_spec[0] + int(lb <= lhs_spec[0]), bgc, lhs)
            new_lhs = _reshape_axis_into(lb + int(lhs_spec[0] < lb), lhs_spec[0] + 1, new_lhs)
            new_lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = run(new_lhs, rhs, fgc, bgc)
        return _reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    assert rb is not None
    size = get_aval(rhs).shape[rb]
    if fgc == 1 and bgc == 1:
        new_rhs = _reshape_axis_into(rb, rhs_spec[0], rhs)
        out = run(lhs, new_rhs, fgc, bgc)
        return _reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    count = fgc if fgc > 1 else bgc
    new_rhs = _reshape_axis_out_of(rhs_spec[0] + int(rb <= rhs_spec[0]), count, rhs)
    new_rhs = _reshape_axis_into(rb + int(rhs_spec[0] < rb), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = run(lhs, new_rhs, fgc, bgc)
    out = _reshape_axis_out_of(out_spec[1], count, out)
    out = _reshape_axis_out_of(out_spec[1] + 1, size, out)
    return _reshape_axis_into(out_spec[1], out_spec[1] + 1, out), out_spec[1]


conv_general_dilated_p.batch = _conv_batch
conv_general_dilated_p.describe(lax="conv_general_dilated", fusion=None, cuda=None, ufunc=None,
                                torch_method=None, torch_node="Convolution",
                                lax_fn=conv_general_dilated)


__all__ = [
    "ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "conv",
    "conv_dimension_numbers", "conv_general_dilated", "conv_general_dilated_p",
    "conv_general_permutations", "conv_transpose", "conv_with_general_padding",
    "padtype_to_pads",
]
