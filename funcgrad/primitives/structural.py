"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims,
slice, rev, concatenate, pad and iota.

>>> import numpy as np
>>> from funcgrad.primitives.structural import transpose
>>> transpose(np.arange(6.0).reshape(2, 3), (1, 0)).shape
(3, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import (
    all_batched,
    batch_size,
    full,
    instantiate,
    linear,
    move_to_front,
    shifted_axes_batch,
    with_batch,
)

# ---------------------------------------------------------- broadcast_in_dim


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """Place ``x``'s axes at ``broadcast_dimensions`` of a result of ``shape``."""
    shape, dims = tuple(int(d) for d in shape), tuple(int(d) for d in broadcast_dimensions)
    aval = get_aval(x)
    if aval.shape == shape and dims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def _bid_abstract(x: ShapedArray, *, shape: tuple[int, ...],
                  broadcast_dimensions: tuple[int, ...]) -> ShapedArray:
    dims = broadcast_dimensions
    if len(dims) != x.ndim:
        raise ShapeError(
            f"broadcast_dimensions {dims} must name one result axis per operand axis "
            f"(operand rank {x.ndim})"
        )
    if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims) or \
            list(dims) != sorted(dims):
        raise ShapeError(f"broadcast_dimensions {dims} must be increasing axes of {shape}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise ShapeError(
                f"operand axis {i} of size {x.shape[i]} cannot broadcast to size "
                f"{shape[d]} of result axis {d}"
            )
    return ShapedArray(shape, x.dtype, x.weak_type)


def _bid_impl(xp: Any, x: Any, *, shape: tuple[int, ...],
              broadcast_dimensions: tuple[int, ...]) -> Any:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    r = x.reshape(expanded)
    if xp is np and type(r) is np.ndarray and r.dtype.isbuiltin and r.size and \
            r.flags.c_contiguous:
        # The same read-only view as np.broadcast_to, made directly (0.4 us, not 2.6: a
        # compiled program broadcasts at most of its steps).
        # (Size-1 axes get stride 0 too, as np.broadcast_to gives them: a broadcast
        # scalar then has no stride at all, which tells it from data.)
        out = np.ndarray(shape, r.dtype, r, 0,
                         tuple(st if e == n != 1 else 0 for st, e, n in zip(r.strides,
                                                                            expanded, shape)))
        out.flags.writeable = False
        return out
    return xp.broadcast_to(r, shape)


broadcast_in_dim_p = Primitive("broadcast_in_dim", abstract_eval=_bid_abstract,
                               impl=_bid_impl)


def _bid_transpose(ct: Any, primals: Sequence[Any], ans: Any, *, shape: tuple[int, ...],
                   broadcast_dimensions: tuple[int, ...]) -> list[Any]:
    from funcgrad.primitives.reductions import reduce_sum  # noqa: PLC0415

    in_shape = get_aval(primals[0]).shape
    new_axes = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    summed = reduce_sum(ct, tuple(sorted(new_axes + stretched)))
    return [reshape(summed, in_shape)]


linear(broadcast_in_dim_p, _bid_transpose)


def _bid_batch(args: Sequence[Any], dims: Sequence[int | None], *, shape: tuple[int, ...],
               broadcast_dimensions: tuple[int, ...]) -> Any:
    x = move_to_front(args[0], dims[0])
    size = get_aval(x).shape[0]
    return broadcast_in_dim(x, (size, *shape), (0, *(d + 1 for d in broadcast_dimensions))), 0


broadcast_in_dim_p.batch = _bid_batch

# ------------------------------------------------------------------ reshape


def reshape(x: Any, new_sizes: Sequence[int]) -> Any:
    new_sizes = tuple(int(d) for d in new_sizes)
    if get_aval(x).shape == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


def _reshape_abstract(x: ShapedArray, *, new_sizes: tuple[int, ...]) -> ShapedArray:
    if math.prod(new_sizes) != x.size or any(d < 0 for d in new_sizes):
        raise ShapeError(f"cannot reshape {x.shape} ({x.size} elements) to {new_sizes}")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = Primitive("reshape", abstract_eval=_reshape_abstract,
                      impl=lambda xp, x, new_sizes: xp.reshape(x, new_sizes))
linear(reshape_p, lambda ct, primals, ans, new_sizes: [reshape(ct, get_aval(primals[0]).shape)])


def _reshape_batch(args: Sequence[Any], dims: Sequence[int | None], *,
                   new_sizes: tuple[int, ...]) -> Any:
    x = move_to_front(args[0], dims[0])
    return reshape(x, (get_aval(x).shape[0], *new_sizes)), 0


reshape_p.batch = _reshape_batch

# ---------------------------------------------------------------- transpose


def transpose(x: Any, permutation: Sequence[int]) -> Any:
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(len(perm))):
        return x
    return transpose_p.bind(x, permutation=perm)


def _transpose_abstract(x: ShapedArray, *, permutation: tuple[int, ...]) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"permutation {permutation} is not a permutation of {x.ndim} axes")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = Primitive("transpose", abstract_eval=_transpose_abstract,
                        impl=lambda xp, x, permutation: xp.transpose(x, permutation))
linear(transpose_p, lambda ct, primals, ans, permutation: [
    transpose(ct, tuple(int(i) for i in np.argsort(permutation)))])
transpose_p.batch = lambda args, dims, permutation: (
    transpose(move_to_front(args[0], dims[0]), (0, *(p + 1 for p in permutation))), 0)

# ------------------------------------------------------ squeeze / expand_dims


def squeeze(x: Any, dimensions: Sequence[int]) -> Any:
    dims = tuple(sorted(int(d) for d in dimensions))
    return x if not dims else squeeze_p.bind(x, dimensions=dims)


def _squeeze_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ShapeError(f"cannot squeeze axis {d} of shape {x.shape}: it must have size 1")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                       x.dtype, x.weak_type)


squeeze_p = Primitive("squeeze", abstract_eval=_squeeze_abstract,
                      impl=lambda xp, x, dimensions: xp.squeeze(x, axis=dimensions))
linear(squeeze_p, lambda ct, primals, ans, dimensions: [
    reshape(ct, get_aval(primals[0]).shape)])
squeeze_p.batch = shifted_axes_batch(squeeze_p, "dimensions")


def expand_dims(x: Any, dimensions: Sequence[int]) -> Any:
    # Negative dimensions count from the end of the result, as in JAX.
    out_rank = get_aval(x).ndim + len(dimensions)
    dims = tuple(sorted(int(d) + out_rank if -out_rank <= int(d) < 0 else int(d)
                        for d in dimensions))
    return x if not dims else expand_dims_p.bind(x, dimensions=dims)


def _expand_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    out_rank = x.ndim + len(dimensions)
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < out_rank
                                                      for d in dimensions):
        raise ShapeError(f"bad expand_dims dimensions {dimensions} for rank {x.ndim}")
    shape = list(x.shape)
    for d in dimensions:
        shape.insert(d, 1)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _expand_impl(xp: Any, x: Any, *, dimensions: tuple[int, ...]) -> Any:
    shape = list(x.shape)
    for d in dimensions:  # sorted, non-negative (the abstract rule checked them)
        shape.insert(d, 1)
    return x.reshape(shape)


expand_dims_p = Primitive("expand_dims", abstract_eval=_expand_abstract, impl=_expand_impl)
linear(expand_dims_p, lambda ct, primals, ans, dimensions: [squeeze(ct, dimensions)])
expand_dims_p.batch = shifted_axes_batch(expand_dims_p, "dimensions")

# -------------------------------------------------------------------- slice


def slice_(x: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
           strides: Sequence[int] | None = None) -> Any:
    aval = get_aval(x)
    start = tuple(int(s) for s in start_indices)
    limit = tuple(int(s) for s in limit_indices)
    st = tuple(int(s) for s in strides) if strides is not None else (1,) * len(start)
    if start == (0,) * aval.ndim and limit == aval.shape and st == (1,) * aval.ndim:
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=st)


def _slice_abstract(x: ShapedArray, *, start_indices: tuple[int, ...],
                    limit_indices: tuple[int, ...], strides: tuple[int, ...]) -> ShapedArray:
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(
            f"slice needs one start, limit and stride per axis of a rank-{x.ndim} operand"
        )
    shape = []
    for d, (lo, hi, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if not 0 <= lo <= hi <= x.shape[d] or st < 1:
            raise ShapeError(
                f"slice {lo}:{hi}:{st} is out of bounds for axis {d} of size {x.shape[d]}"
            )
        shape.append(max(0, -(-(hi - lo) // st)))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(xp: Any, x: Any, *, start_indices: tuple[int, ...],
                limit_indices: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    return x[tuple(slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, strides))]


slice_p = Primitive("slice", abstract_eval=_slice_abstract, impl=_slice_impl)


def _slice_transpose(ct: Any, primals: Sequence[Any], ans: Any, *,
                     start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                     strides: tuple[int, ...]) -> list[Any]:
    in_shape = get_aval(primals[0]).shape
    out_shape = get_aval(ct).shape
    config = []
    for d, (lo, st) in enumerate(zip(start_indices, strides)):
        n = out_shape[d]
        used = lo + (n - 1) * st + 1 if n else lo
        config.append((lo, in_shape[d] - used, st - 1 if n else 0))
    zero = np.zeros((), get_aval(ct).dtype)
    return [pad(ct, zero, tuple(config))]


linear(slice_p, _slice_transpose)


def _slice_batch(args: Sequence[Any], dims: Sequence[int | None], *,
                 start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                 strides: tuple[int, ...]) -> Any:
    x = move_to_front(args[0], dims[0])
    size = get_aval(x).shape[0]
    return slice_p.bind(x, start_indices=(0, *start_indices), limit_indices=(size, *limit_indices),
                        strides=(1, *strides)), 0


slice_p.batch = _slice_batch

# ---------------------------------------------------------------------- rev


def rev(x: Any, dimensions: Sequence[int]) -> Any:
    dims = tuple(sorted(int(d) for d in dimensions))
    return x if not dims else rev_p.bind(x, dimensions=dims)


def _rev_abstract(x: ShapedArray, *, dimensions: tuple[int, ...]) -> ShapedArray:
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise ShapeError(f"rev dimensions {dimensions} out of range for rank {x.ndim}")
    return x


rev_p = Primitive("rev", abstract_eval=_rev_abstract,
                  impl=lambda xp, x, dimensions: xp.flip(x, dimensions))
linear(rev_p, lambda ct, primals, ans, dimensions: [rev(ct, dimensions)])
rev_p.batch = shifted_axes_batch(rev_p, "dimensions")

# -------------------------------------------------------------- concatenate


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concat_abstract(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise ShapeError("concatenate needs at least one operand")
    first = xs[0]
    if not 0 <= dimension < first.ndim:
        raise ShapeError(f"axis {dimension} is out of range for rank {first.ndim}")
    for x in xs[1:]:
        if x.dtype != first.dtype:
            raise DTypeError(f"operands have different dtypes {[str(a.dtype) for a in xs]}")
        if x.ndim != first.ndim or any(a != b for i, (a, b) in
                                       enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise ShapeError(
                f"shapes {[a.shape for a in xs]} differ outside axis {dimension}"
            )
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


concatenate_p = Primitive("concatenate", abstract_eval=_concat_abstract,
                          impl=lambda xp, *xs, dimension: xp.concatenate(xs, axis=dimension))


def _concat_transpose(ct: Any, primals: Sequence[Any], ans: Any, *, dimension: int
                      ) -> list[Any]:
    shape = get_aval(ct).shape
    outs, start = [], 0
    for p in primals:
        n = get_aval(p).shape[dimension]
        lo = [0] * len(shape)
        hi = list(shape)
        lo[dimension], hi[dimension] = start, start + n
        outs.append(slice_(ct, lo, hi))
        start += n
    return outs


def _concat_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int) -> Any:
    from funcgrad.primitives.rules import instantiate  # noqa: PLC0415

    ans = concatenate_p.bind(*primals, dimension=dimension)
    if all(t is None for t in tangents):
        return ans, None
    ts = [instantiate(t, get_aval(p)) for p, t in zip(primals, tangents)]
    return ans, concatenate_p.bind(*ts, dimension=dimension)


concatenate_p.jvp = _concat_jvp
concatenate_p.vjp = _concat_transpose
concatenate_p.vjp_reads = ""
concatenate_p.batch = lambda args, dims, dimension: (
    concatenate_p.bind(*all_batched(args, dims), dimension=dimension + 1), 0)

# -------------------------------------------------------------------- split


def split(x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
    """``x`` cut along ``axis`` into consecutive pieces of ``sizes``, as ``lax.split``.

    One equation (JAX's ``split``) whose transpose is one ``concatenate`` of the pieces'
    cotangents, where slices would transpose into a padded copy per piece plus the adds.
    """
    return split_p.bind(x, sizes=tuple(int(n) for n in sizes), axis=int(axis))


def _split_abstract(x: ShapedArray, *, sizes: tuple[int, ...], axis: int
                    ) -> list[ShapedArray]:
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"axis {axis} is out of range for rank {x.ndim}")
    if any(n < 0 for n in sizes) or sum(sizes) != x.shape[axis]:
        raise ShapeError(f"Sum of sizes {sum(sizes)} must be equal to dimension "
                         f"{x.shape[axis]} of the operand shape {x.shape} (and every size "
                         f">= 0), got {sizes}")
    return [ShapedArray(x.shape[:axis] + (n,) + x.shape[axis + 1:], x.dtype, x.weak_type)
            for n in sizes]


def _split_impl(xp: Any, x: Any, *, sizes: tuple[int, ...], axis: int) -> list[Any]:
    # Basic slices (views): np.split goes through array_split's Python loop, 6x slower.
    lead = (slice(None),) * axis
    out, at = [], 0
    for n in sizes:
        out.append(x[lead + (slice(at, at + n),)])
        at += n
    return out


split_p = Primitive("split", abstract_eval=_split_abstract, impl=_split_impl,
                    multiple_results=True)


def _split_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, sizes: tuple[int, ...],
               axis: int) -> Any:
    ans = split_p.bind(primals[0], sizes=sizes, axis=axis)
    if tangents[0] is None:
        return ans, [None] * len(sizes)
    return ans, split_p.bind(tangents[0], sizes=sizes, axis=axis)


def _split_transpose(cts: Sequence[Any], primals: Sequence[Any], ans: Any, *,
                     sizes: tuple[int, ...], axis: int) -> list[Any]:
    if all(ct is None for ct in cts):
        return [None]
    pieces = [instantiate(ct, get_aval(a)) for ct, a in zip(cts, ans)]
    return [concatenate(pieces, axis) if pieces else
            full(get_aval(primals[0]).shape, 0, get_aval(primals[0]).dtype)]


def _split_batch(args: Sequence[Any], dims: Sequence[int | None], *, sizes: tuple[int, ...],
                 axis: int) -> Any:
    x = move_to_front(args[0], dims[0])
    return split_p.bind(x, sizes=sizes, axis=axis + 1), [0] * len(sizes)


split_p.jvp, split_p.vjp, split_p.vjp_reads = _split_jvp, _split_transpose, ""
split_p.batch = _split_batch

# ---------------------------------------------------------------------- pad


def pad(x: Any, padding_value: Any, padding_config: Sequence[Sequence[int]]) -> Any:
    """Pad with ``(low, high, interior)`` per axis (``low``/``high`` may be negative)."""
    config = tuple((int(a), int(b), int(c)) for a, b, c in padding_config)
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_abstract(x: ShapedArray, v: ShapedArray, *,
                  padding_config: tuple[tuple[int, int, int], ...]) -> ShapedArray:
    if v.shape != ():
        raise ShapeError(f"padding value must be a scalar, got shape {v.shape}")
    if v.dtype != x.dtype:
        raise DTypeError(f"padding value dtype {v.dtype} differs from operand dtype {x.dtype}")
    if len(padding_config) != x.ndim:
        raise ShapeError(f"padding_config has {len(padding_config)} entries for rank {x.ndim}")
    shape = []
    for d, (lo, hi, interior) in enumerate(padding_config):
        if interior < 0:
            raise ShapeError(f"interior padding must be >= 0, got {interior} on axis {d}")
        n = x.shape[d]
        size = lo + hi + n + max(0, n - 1) * interior
        if size < 0:
            raise ShapeError(f"padding {padding_config[d]} leaves a negative size on axis {d}")
        shape.append(size)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _pad_impl(xp: Any, x: Any, v: Any, *, padding_config: tuple[tuple[int, int, int], ...]
              ) -> Any:
    if x.ndim == 0:
        return xp.array(x, copy=True)
    # One allocation filled with the padding value, then x's elements placed with strides
    # (interior padding) where they land inside it (negative edges crop them).
    out_shape = []
    dst, src = [], []
    for n, (lo, hi, c) in zip(x.shape, padding_config):
        size = lo + hi + n + max(0, n - 1) * c
        out_shape.append(size)
        step = c + 1
        first = -(lo // step) if lo < 0 else 0  # the first element not cropped on the left
        stop = min(n, -((lo - size) // step)) if n else 0  # one past the last inside
        if first >= stop:
            return _filled(xp, x, v, padding_config)
        dst.append(slice(lo + first * step, lo + (stop - 1) * step + 1, step))
        src.append(slice(first, stop))
    out = xp.full(out_shape, v, dtype=x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


def _filled(xp: Any, x: Any, v: Any, padding_config: tuple[tuple[int, int, int], ...]) -> Any:
    """The padded shape with no element of ``x`` inside it: all padding value."""
    shape = [lo + hi + n + max(0, n - 1) * c
             for n, (lo, hi, c) in zip(x.shape, padding_config)]
    return xp.full(shape, v, dtype=x.dtype)


pad_p = Primitive("pad", abstract_eval=_pad_abstract, impl=_pad_impl)


def _pad_transpose(ct: Any, primals: Sequence[Any], ans: Any, *,
                   padding_config: tuple[tuple[int, int, int], ...]) -> list[Any]:
    from funcgrad.primitives.reductions import reduce_sum  # noqa: PLC0415

    x = primals[0]
    in_shape = get_aval(x).shape
    # Undo negative edges by padding with zeros, then take the strided interior.
    zero = np.zeros((), get_aval(ct).dtype)
    grown = pad(ct, zero, tuple((max(-lo, 0), max(-hi, 0), 0) for lo, hi, _ in padding_config))
    shape = get_aval(grown).shape
    starts = [max(lo, 0) for lo, _, _ in padding_config]
    limits = [s - max(hi, 0) for s, (_, hi, _) in zip(shape, padding_config)]
    ct_x = slice_(grown, starts, limits, [c + 1 for _, _, c in padding_config])
    ct_x = reshape(ct_x, in_shape)
    total = reduce_sum(ct, tuple(range(get_aval(ct).ndim)))
    inside = reduce_sum(ct_x, tuple(range(len(in_shape))))
    from funcgrad.primitives.elementwise import sub  # noqa: PLC0415

    return [ct_x, sub(total, inside)]


linear(pad_p, _pad_transpose, linear_args=(0, 1))


def _pad_batch(args: Sequence[Any], dims: Sequence[int | None], *,
               padding_config: tuple[tuple[int, int, int], ...]) -> Any:
    from funcgrad.primitives.elementwise import select  # noqa: PLC0415

    x, v = args
    size = batch_size(args, dims)
    config = ((0, 0, 0), *padding_config)
    if dims[1] is None:
        return pad(with_batch(x, dims[0], size), v, config), 0
    # A per-member padding value: pad with zero, then fill the padding from a mask.
    x = with_batch(x, dims[0], size)
    aval = get_aval(x)
    zero = np.zeros((), aval.dtype)
    padded = pad(x, zero, config)
    mask = pad(full(aval.shape, True, np.bool_), np.zeros((), np.bool_), config)
    out_shape = get_aval(padded).shape
    fill = broadcast_in_dim(move_to_front(v, dims[1]), out_shape, (0,))
    return select(mask, padded, fill), 0


pad_p.batch = _pad_batch

# --------------------------------------------------------------------- iota


def iota(dtype: Any, shape: Sequence[int], dimension: int = 0) -> Any:
    """Counting along ``dimension``: ``iota(int, (2, 3), 1)`` is ``[[0,1,2],[0,1,2]]``."""
    return iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=tuple(int(s) for s in shape),
                       dimension=int(dimension))


def _iota_abstract(*, dtype: np.dtype[Any], shape: tuple[int, ...], dimension: int
                   ) -> ShapedArray:
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"iota dimension {dimension} out of range for shape {shape}")
    return ShapedArray(shape, dtype)


def _iota_impl(xp: Any, *, dtype: np.dtype[Any], shape: tuple[int, ...], dimension: int
               ) -> Any:
    ar = xp.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return xp.broadcast_to(ar.reshape(expanded), shape)


iota_p = Primitive("iota", abstract_eval=_iota_abstract, impl=_iota_impl)
iota_p.jvp = lambda primals, tangents, **p: (iota_p.bind(**p), None)
iota_p.vjp = lambda ct, primals, ans, **p: []
iota_p.vjp_reads = ""


def zeros(shape: Sequence[int], dtype: Any) -> Any:
    return full(shape, 0, dtypes.canonicalize(dtype))



# What the backends and faces need of these (none is an elementwise kernel of its own;
# broadcast_in_dim is folded into the reads of the kernel that consumes it).
broadcast_in_dim_p.describe(lax="broadcast_in_dim", fusion="broadcast", cuda=None, ufunc=None,
                            torch_method=None, torch_node="Expand", lax_fn=broadcast_in_dim)
for _p, _lax, _node, _fn in (
        (reshape_p, "reshape", "View", reshape), (transpose_p, "transpose", "Permute", transpose),
        (squeeze_p, "squeeze", "Squeeze", squeeze),
        (expand_dims_p, "expand_dims", "Unsqueeze", expand_dims),
        (slice_p, "slice", "Slice", slice_), (rev_p, "rev", "Flip", rev),
        (concatenate_p, "concatenate", "Cat", concatenate),
        (pad_p, "pad", "ConstantPadNd", pad), (iota_p, "iota", "Arange", None)):
    _p.describe(lax=_lax, fusion=None, cuda=None, ufunc=None, torch_method=None,
                torch_node=_node, lax_fn=_fn)


def lax_iota(dtype: Any, size: int, *, sharding: Any = None) -> Any:
    """``0, 1, ..., size - 1`` (``jax.lax.iota``; ``broadcasted_iota`` for more axes).

    >>> import numpy as np
    >>> lax_iota(np.int32, 3).tolist()
    [0, 1, 2]
    """
    if not isinstance(size, (int, np.integer)):
        raise TypeError(f"lax.iota takes an integer size, got {size!r}; use "
                        "lax.broadcasted_iota(dtype, shape, dimension) for a shape")
    return iota(dtype, (int(size),), 0)


lax_iota.__name__ = lax_iota.__qualname__ = "iota"
iota_p.lax_fn = lax_iota
# lax.split is funcgrad/lax/_more.py's (JAX's signature: axis=0 by default, negative axes).
split_p.describe(lax="split", fusion=None, cuda=None, ufunc=None, torch_method=None,
                 torch_node="Split", lax_fn=None)

__all__ = [
    "broadcast_in_dim", "broadcast_in_dim_p", "reshape", "reshape_p", "transpose",
    "transpose_p", "squeeze", "squeeze_p", "expand_dims", "expand_dims_p", "slice_",
    "slice_p", "rev", "rev_p", "concatenate", "concatenate_p", "split", "split_p", "pad",
    "pad_p", "iota",
    "iota_p", "zeros",
]
