"""The ``jax.lax`` functions that are compositions of primitives: broadcasting and
creation helpers, slicing along one axis, ``clamp``, ``select_n``, ``dot``/``batch_matmul``,
``reduce`` (with JAX's monoid detection), ``split``/``stack``/``unstack``/``tile``,
``mulhi``, ``reduce_precision``, ``index_take``, ``ragged_dot`` and ``approx_max_k``.

Being compositions, all of them differentiate, ``jit`` and ``vmap`` through the rules of
the primitives they are made of.

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0)
Array([0. , 0.5, 1. ], dtype=float32)
>>> lax.select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0))
Array([0., 2., 1.], dtype=float32)
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import PRIMITIVES, EvalTrace, get_aval, is_concrete, set_current_trace
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.primitives import elementwise as el
from funcgrad.primitives import indexing as ix
from funcgrad.primitives import linalg as la
from funcgrad.primitives import reductions as red
from funcgrad.primitives import sorting as srt
from funcgrad.primitives import structural as st
from funcgrad.primitives.bits import (
    bitcast_convert_type,
    shift_right_arithmetic,
    shift_right_logical,
)
from funcgrad.primitives.elementwise import as_operand
from funcgrad.primitives.precision import check_dot_precision


def _lax(name: str) -> Callable[..., Any]:
    """A lax function generated from its primitive (``bitwise_and`` is ``and``'s)."""
    fn = PRIMITIVES[name].lax_fn
    assert fn is not None
    return fn




def _const(like: Any, value: Any, shape: Sequence[int] | None = None) -> Any:
    aval = get_aval(like)
    return np.full(aval.shape if shape is None else tuple(shape), value, aval.dtype)


def _axis(axis: int, ndim: int, where: str) -> int:
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{where}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


# ------------------------------------------------------------- broadcasting, creation


def broadcast(operand: Any, sizes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """``operand`` with new leading axes of ``sizes``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.broadcast(np.array([1.0, 2.0]), (3,)).shape
    (3, 2)
    """
    operand = as_operand(operand)
    aval = get_aval(operand)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        return operand
    n = len(sizes)
    return st.broadcast_in_dim(operand, sizes + aval.shape, tuple(range(n, n + aval.ndim)))


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading axes of size 1 added up to ``rank``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.broadcast_to_rank(np.ones(3), 3).shape
    (1, 1, 3)
    """
    x = as_operand(x)
    nd = get_aval(x).ndim
    return x if nd >= rank else broadcast(x, (1,) * (rank - nd))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (NumPy's rules) to the shape of ``like_arr``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.broadcast_like(np.array(1.0), np.zeros((2, 2))).shape
    (2, 2)
    """
    arr = as_operand(arr)
    shape = get_aval(like_arr).shape
    a = get_aval(arr)
    if np.broadcast_shapes(a.shape, shape) != shape:
        raise ShapeError(f"broadcast_like: cannot broadcast shape {a.shape} to {shape}")
    lead = len(shape) - a.ndim
    squeezed = [i for i, d in enumerate(a.shape) if d == 1 and shape[lead + i] != 1]
    if squeezed:
        arr = st.squeeze(arr, squeezed)
    dims = tuple(lead + i for i in range(a.ndim) if i not in squeezed)
    return st.broadcast_in_dim(arr, shape, dims)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape NumPy's broadcasting gives ``shapes``.

    >>> from funcgrad import lax
    >>> lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ShapeError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, *,
                     out_sharding: Any = None) -> Any:
    """An array of ``shape`` counting 0, 1, ... along ``dimension``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.broadcasted_iota(np.int32, (2, 3), 1)
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
    """
    shape = tuple(int(d) for d in shape)
    _axis(dimension, len(shape), "broadcasted_iota")
    return st.iota(dtypes.canonicalize_dtype(dtype), shape, dimension % len(shape))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """``operand`` with axes ``start_dimension:stop_dimension`` merged into one.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.collapse(np.zeros((2, 3, 4)), 1).shape
    (2, 12)
    """
    shape = get_aval(operand).shape
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    size = math.prod(shape[lo:hi])
    return st.reshape(operand, (*shape[:lo], size, *shape[hi:]))


def full(shape: Sequence[int] | int, fill_value: Any, dtype: Any = None, *,
         sharding: Any = None) -> Any:
    """An array of ``shape`` holding ``fill_value`` (a scalar), of ``dtype`` or the value's.

    >>> from funcgrad import lax
    >>> lax.full((2,), 3.0)
    Array([3., 3.], dtype=float32, weak_type=True)
    """
    shape = (operator.index(shape),) if isinstance(shape, int) else tuple(int(d) for d in shape)
    if np.ndim(fill_value) != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if any(d < 0 for d in shape):
        raise ShapeError(f"full: negative dimension in shape {shape}")
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    dt = dtypes.canonicalize_dtype(dtypes.result_type(fill_value) if dtype is None else dtype)
    if type(fill_value) is int:
        # A Python int goes through NumPy's integer, as JAX converts it: wrapped into a
        # narrower integer type, any size for a float type.
        from funcgrad.conversion import from_buffer  # noqa: PLC0415

        value = from_buffer(np.asarray(fill_value).astype(dt), weak)
    elif is_concrete(fill_value) and not weak:
        # A known fill converted now: a traced program holds one scalar literal (JAX's
        # ``broadcast_in_dim 0.0:f32[]``), not the conversions of a constant.
        with set_current_trace(EvalTrace()):
            value = el.convert_element_type(as_operand(fill_value), dt)
    else:
        value = el.convert_element_type(as_operand(fill_value), dt, weak_type=weak)
    return st.broadcast_in_dim(value, shape, ()) if shape else value


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Any:
    """An array like ``x`` (its shape and dtype unless given) holding ``fill_value``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.full_like(np.zeros(2, np.int32), 7)
    Array([7, 7], dtype=int32)
    """
    aval = get_aval(as_operand(x))
    out = full(aval.shape if shape is None else shape, fill_value,
               aval.dtype if dtype is None else dtype)
    if dtype is None and aval.weak_type:
        out = el.convert_element_type(out, aval.dtype, weak_type=True)
    return out


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose values are unspecified (here: zeros).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.empty((2,), np.float32).shape
    (2,)
    """
    return full(shape, 0, dtype)


# -------------------------------------------------------------------- elementwise


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002 - JAX's argument names
    """``x`` clipped into ``[min, max]`` (``min``/``max`` scalars or of ``x``'s shape);
    its derivatives are JAX's: ``x`` gets the tangent only strictly inside the bounds.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.clamp(np.int32(0), np.array([-2, 5], np.int32), np.int32(3))
    Array([0, 3], dtype=int32)
    """
    x = as_operand(x)
    xa = get_aval(x)
    # A Python number is an array of its default dtype here, as in every lax function
    # (no promotion): 0.0 clamps float32 operands (float64 ones with x64 on), not bfloat16.
    lo, hi = as_operand(min), as_operand(max)
    if {get_aval(lo).dtype, get_aval(hi).dtype} != {xa.dtype}:
        raise DTypeError(f"lax.clamp requires arguments to have the same dtypes, got "
                         f"{get_aval(lo).dtype}, {xa.dtype}, {get_aval(hi).dtype}.")
    for name, b in (("min", lo), ("max", hi)):
        ba = get_aval(b)
        if ba.shape not in ((), xa.shape):
            raise ShapeError(f"clamp requires {name}.shape == operand.shape or "
                             f"{name}.shape == (), got {ba.shape} and {xa.shape}")
    if dtypes.is_bool(xa.dtype) or xa.dtype.kind == "c":
        raise DTypeError(f"clamp does not accept {xa.dtype} operands")
    lo = st.broadcast_in_dim(lo, xa.shape, ()) if get_aval(lo).shape != xa.shape else lo
    hi = st.broadcast_in_dim(hi, xa.shape, ()) if get_aval(hi).shape != xa.shape else hi
    value = el.stop_gradient(el.min_(el.max_(x, lo), hi))
    if not dtypes.is_inexact(xa.dtype):
        return el.min_(el.max_(x, lo), hi)
    land = _lax("and")
    inside = land(el.lt(lo, x), el.lt(x, hi))
    at_lo = land(el.gt(lo, x), el.lt(lo, hi))
    at_hi = el.lt(hi, x)
    # Selects route each tangent as JAX's clamp rule does; the values are those of clamp.
    return el.select(inside, x, el.select(at_lo, lo, el.select(at_hi, hi, value)))


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: ``which`` is boolean (two cases at most) or an integer
    array, scalar or of the cases' shape.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.select_n(np.array([True, False]), np.zeros(2), np.ones(2))
    Array([1., 0.], dtype=float32)
    """
    if not cases:
        raise ValueError("select_n() must have at least one case")
    which = as_operand(which)
    wa = get_aval(which)
    cases = tuple(as_operand(c) for c in cases)
    ca = get_aval(cases[0])
    # JAX's messages: shapes first, then dtypes.
    if any(get_aval(c).shape != ca.shape for c in cases[1:]):
        raise ShapeError("select cases must have the same shapes, got "
                         f"{[get_aval(c).shape for c in cases]}.")
    if wa.shape not in ((), ca.shape):
        raise ShapeError("select `which` must be scalar or have the same shape as cases, got "
                         f"`which` shape {wa.shape} but case shape {ca.shape}.")
    if any(get_aval(c).dtype != ca.dtype for c in cases[1:]):
        raise DTypeError("lax.select requires arguments to have the same dtypes, got "
                         f"{', '.join(get_aval(c).dtype.name for c in cases)}. (Tip: jnp.where "
                         "is a similar function that does automatic type promotion on inputs).")
    if wa.dtype.kind not in "biu":
        raise DTypeError(f"select `which` must be boolean or integer type, got {wa.dtype}.")
    if wa.dtype.kind == "b" and len(cases) > 2:
        raise DTypeError("select with boolean `which` cannot have > 2 cases.")
    if len(cases) == 1:
        return cases[0]
    if wa.shape != ca.shape:
        which = st.broadcast_in_dim(which, ca.shape, ())

    def pick(offset: int, cs: Sequence[Any]) -> Any:
        if len(cs) == 1:
            return cs[0]
        mid = len(cs) // 2
        if wa.dtype.kind == "b":
            pred = _lax("not")(which)
        else:
            pred = el.lt(which, np.full(ca.shape, offset + mid, wa.dtype))
        return el.select(pred, pick(offset, cs[:mid]), pick(offset + mid, cs[mid:]))

    return pick(0, cases)


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of the double-width product of the integers ``x`` and ``y``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.mulhi(np.uint32(3 << 30), np.uint32(4))
    Array(3, dtype=uint32)
    """
    x, y = as_operand(x), as_operand(y)
    xa, ya = get_aval(x), get_aval(y)
    if xa.dtype != ya.dtype or xa.shape != ya.shape:
        raise DTypeError(f"mulhi needs operands of one shape and dtype, got {xa} and {ya}")
    dt = xa.dtype
    if dt.kind not in "iu":
        raise DTypeError(f"mulhi needs integer operands, got {dt}")
    bits = dt.itemsize * 8
    if bits < 32:
        wide = np.dtype(f"{dt.kind}{2 * dt.itemsize}")
        p = el.mul(el.convert_element_type(x, wide), el.convert_element_type(y, wide))
        shift = shift_right_arithmetic if dt.kind == "i" else shift_right_logical
        return el.convert_element_type(shift(p, np.full(xa.shape, bits, wide)), dt)
    # 32 and 64 bits: no wider integer type may exist (32-bit mode has no int64), so
    # multiply the half-width halves in the unsigned type of the same width.
    u = np.dtype(f"u{dt.itemsize}")
    h = bits // 2
    ux = bitcast_convert_type(x, u) if dt.kind == "i" else x
    uy = bitcast_convert_type(y, u) if dt.kind == "i" else y
    ch, low = np.full(xa.shape, h, u), np.full(xa.shape, (1 << h) - 1, u)
    band = _lax("and")
    xl, xh = band(ux, low), shift_right_logical(ux, ch)
    yl, yh = band(uy, low), shift_right_logical(uy, ch)
    # Schoolbook multiplication; no partial sum overflows the full width.
    ll, hl, lh, hh = el.mul(xl, yl), el.mul(xh, yl), el.mul(xl, yh), el.mul(xh, yh)
    cross = el.add(el.add(shift_right_logical(ll, ch), band(hl, low)), lh)
    hi = el.add(el.add(hh, shift_right_logical(hl, ch)), shift_right_logical(cross, ch))
    if dt.kind == "u":
        return hi
    # Signed: subtract the wrapped-around contributions of negative operands (mod 2**bits).
    zero = np.zeros(xa.shape, u)
    neg_x = el.lt(x, np.zeros(xa.shape, dt))
    neg_y = el.lt(y, np.zeros(xa.shape, dt))
    hi = el.sub(hi, el.select(neg_x, uy, zero))
    hi = el.sub(hi, el.select(neg_y, ux, zero))
    return bitcast_convert_type(hi, dt)


def _reduce_precision_bits(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    # XLA's ReducePrecision: round the mantissa to nearest even, then flush values whose
    # exponent the smaller format cannot hold to signed zero / infinity; NaNs stay NaN.
    aval = get_aval(x)
    info = np.finfo(aval.dtype)
    src_m, src_e = int(info.nmant), int(info.nexp)
    nbits = aval.dtype.itemsize * 8
    u = np.dtype(f"u{aval.dtype.itemsize}")
    band, bor, bnot = _lax("and"), _lax("or"), _lax("not")

    def c(v: int) -> Any:
        return np.full(aval.shape, v, u)

    xi = bitcast_convert_type(x, u)
    if mantissa_bits < src_m:
        shift = src_m - mantissa_bits
        last_bit = 1 << shift
        last = shift_right_logical(band(xi, c(last_bit)), c(shift))
        bias = el.add(last, c((last_bit >> 1) - 1))
        xi = band(el.add(xi, bias), bnot(c(last_bit - 1)))
    if exponent_bits < src_e:
        sign_mask = 1 << (nbits - 1)
        exp_mask = ((1 << src_e) - 1) << src_m
        exp_bias = (1 << (src_e - 1)) - 1
        red_bias = (1 << (exponent_bits - 1)) - 1
        x_exp = band(xi, c(exp_mask))
        overflow = el.gt(x_exp, c((exp_bias + red_bias) << src_m))
        underflow = el.le(x_exp, c((exp_bias - red_bias) << src_m))
        signed_zero = band(xi, c(sign_mask))
        signed_inf = bor(signed_zero, c(exp_mask))
        xi = el.select(overflow, signed_inf, el.select(underflow, signed_zero, xi))
    return el.select(el.ne(x, x), x, bitcast_convert_type(xi, aval.dtype))


@functools.cache
def _reduce_precision_fn(exponent_bits: int, mantissa_bits: int) -> Any:
    from funcgrad.transforms.custom import custom_jvp, transposing_tangents

    f = custom_jvp(lambda x: _reduce_precision_bits(x, exponent_bits, mantissa_bits))

    @f.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        # As JAX: the tangent is rounded as the value (the map is linear); in reverse mode
        # by linear conversions, which transpose to the cotangent rounded the same way.
        t = tangents[0]
        return f(primals[0]), _round_tangent(t, exponent_bits, mantissa_bits) \
            if transposing_tangents() else f(t)

    return f


# The formats whose rounding is a pair of linear conversions (through the narrow type).
_NARROW = {(8, 7): dtypes.bfloat16, (5, 10): np.dtype(np.float16)}


def _round_tangent(t: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """reduce_precision's tangent rounded by linear operations, for reverse mode (JAX rounds
    the cotangent as the value): conversions to the narrow type and back where there is one
    (bfloat16, float16), the identity where the format holds every value of ``t``'s dtype;
    other formats pass the cotangent unrounded (docs/sharp_bits.md)."""
    dt = get_aval(t).dtype
    narrow = _NARROW.get((exponent_bits, mantissa_bits))
    if narrow is None or np.dtype(narrow).itemsize >= dt.itemsize:
        return t
    weak = get_aval(t).weak_type
    return el.convert_element_type(el.convert_element_type(t, narrow), dt, weak_type=weak)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``operand`` rounded to a float format with ``exponent_bits`` and ``mantissa_bits``
    (kept in its own dtype).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.reduce_precision(np.float32(1.1), exponent_bits=5, mantissa_bits=2)
    Array(1., dtype=float32)
    """
    operand = as_operand(operand)
    dt = get_aval(operand).dtype
    if not dtypes.is_float(dt):
        raise DTypeError(f"reduce_precision needs a floating-point operand, got {dt}")
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, "
                         f"got {exponent_bits} and {mantissa_bits}")
    return _reduce_precision_fn(exponent_bits, mantissa_bits)(operand)


def optimization_barrier(operand: Any, /) -> Any:
    """``operand`` (a pytree) unchanged: funcgrad's compiler does not move computations
    across function boundaries, so the barrier is the identity, as JAX's is in value and
    derivative.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.optimization_barrier((np.ones(1), 2.0))[1]
    Array(2., dtype=float32, weak_type=True)
    """
    from funcgrad.tree_util import tree_map

    return tree_map(as_operand, operand)


# ----------------------------------------------------------------- one-axis slicing


def _start(index: Any, size: int, allow_negative: bool) -> Any:
    index = as_operand(index)
    ia = get_aval(index)
    if ia.ndim != 0 or ia.dtype.kind not in "iu":
        raise DTypeError(f"a start index must be an integer scalar, got {ia}")
    if allow_negative and ia.dtype.kind == "i":
        zero = np.zeros((), ia.dtype)
        index = el.select(el.lt(index, zero), el.add(index, np.asarray(size, ia.dtype)), index)
    return index


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """``operand[..., index, ...]`` at the static ``index`` of ``axis`` (negative wraps).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.index_in_dim(np.arange(6.0).reshape(2, 3), -1, axis=1, keepdims=False)
    Array([2., 5.], dtype=float32)
    """
    operand = as_operand(operand)
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "index_in_dim")
    index = operator.index(index)
    wrapped = index + shape[axis] if index < 0 else index
    if not 0 <= wrapped < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size "
                         f"{shape[axis]}")
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = wrapped, wrapped + 1
    out = st.slice_(operand, start, limit)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """``slice_size`` entries of ``axis`` from the traced ``start_index`` (clamped in range).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.dynamic_slice_in_dim(np.arange(5.0), 3, 2)
    Array([3., 4.], dtype=float32)
    """
    operand = as_operand(operand)
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "dynamic_slice_in_dim")
    start = _start(start_index, shape[axis], allow_negative_indices)
    starts = [np.zeros((), get_aval(start).dtype)] * len(shape)
    starts[axis] = start
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return ix.dynamic_slice(operand, starts, sizes, allow_negative_indices=False)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """Entry ``index`` (traced) of ``axis``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.dynamic_index_in_dim(np.arange(5.0), 2, keepdims=False)
    Array(2., dtype=float32)
    """
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else st.squeeze(out, (axis % get_aval(operand).ndim,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with ``update`` written from ``start_index`` along ``axis``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.dynamic_update_slice_in_dim(np.zeros(4), np.ones(2), 1, axis=0)
    Array([0., 1., 1., 0.], dtype=float32)
    """
    operand = as_operand(operand)
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "dynamic_update_slice_in_dim")
    start = _start(start_index, shape[axis], allow_negative_indices)
    starts = [np.zeros((), get_aval(start).dtype)] * len(shape)
    starts[axis] = start
    return ix.dynamic_update_slice(operand, as_operand(update), starts,
                                   allow_negative_indices=False)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``operand`` with entry ``index`` of ``axis`` replaced by ``update``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.dynamic_update_index_in_dim(np.zeros((2, 2)), np.ones(2), 1, 0)
    Array([[0., 0.],
           [1., 1.]], dtype=float32)
    """
    operand = as_operand(operand)
    nd = get_aval(operand).ndim
    axis = _axis(axis, nd, "dynamic_update_index_in_dim")
    update = as_operand(update)
    if get_aval(update).ndim != nd:
        if get_aval(update).ndim + 1 != nd:
            raise ShapeError(f"dynamic_update_index_in_dim: update of rank "
                             f"{get_aval(update).ndim} for an operand of rank {nd}")
        update = st.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` at the index arrays ``idxs`` (one per axis of ``axes``, wrapped modulo the
    axis size); the result's first axis runs over the indices, the untouched axes follow.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.index_take(np.arange(6.0).reshape(2, 3), [np.array([1, 0]), np.array([2, -1])],
    ...                (0, 1))
    Array([5., 2.], dtype=float32)
    """
    src = as_operand(src)
    shape = get_aval(src).shape
    axes = tuple(_axis(a, len(shape), "index_take") for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take needs one index array per axis, got {len(idxs)} for "
                         f"axes {axes}")
    cols = []
    for i, a in zip(idxs, axes):
        i = as_operand(i)
        ia = get_aval(i)
        n = np.full(ia.shape, shape[a], ia.dtype)
        r = el.convert_element_type(_lax("rem")(i, n), ia.dtype)
        if ia.dtype.kind == "i":  # floor modulo, as ``%`` on JAX arrays
            r = el.select(el.lt(r, np.zeros(ia.shape, ia.dtype)), el.add(r, n), r)
        cols.append(st.expand_dims(r, (1,)))
    indices = st.concatenate(cols, 1) if len(cols) > 1 else cols[0]
    rest = [d for d in range(len(shape)) if d not in axes]
    moved = st.transpose(src, (*axes, *rest)) if list(axes) + rest != list(range(len(shape))) \
        else src
    return ix.gather(moved, indices)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """``operand`` cut along ``axis`` into pieces of ``sizes`` (which sum to its length).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> [p.shape for p in lax.split(np.zeros((5, 2)), (2, 3))]
    [(2, 2), (3, 2)]
    """
    operand = as_operand(operand)
    shape = get_aval(operand).shape
    axis = _axis(axis, len(shape), "split")
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise ShapeError(f"Sum of sizes {sum(sizes)} must be equal to dimension {shape[axis]} "
                         f"of the operand shape {shape} (and every size >= 0), got {sizes}")
    return list(st.split(operand, sizes, axis))


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """``operands`` (one shape and dtype) stacked along a new ``axis``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.stack([np.zeros(2), np.ones(2)], axis=1).shape
    (2, 2)
    """
    arrays = [as_operand(o) for o in operands]
    if not arrays:
        raise ValueError("stack needs at least one array")
    first = get_aval(arrays[0])
    if any((get_aval(a).shape, get_aval(a).dtype) != (first.shape, first.dtype)
           for a in arrays):
        raise ShapeError("stack operands must have one shape and dtype, got "
                         f"{[(get_aval(a).shape, str(get_aval(a).dtype)) for a in arrays]}")
    axis = _axis(axis, first.ndim + 1, "stack")
    return st.concatenate([st.expand_dims(a, (axis,)) for a in arrays], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, that axis removed.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> len(lax.unstack(np.zeros((3, 2))))
    3
    """
    x = as_operand(x)
    shape = get_aval(x).shape
    axis = _axis(axis, len(shape), "unstack")
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each axis ``i``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.tile(np.array([1, 2]), (2,))
    Array([1, 2, 1, 2], dtype=int32)
    """
    operand = as_operand(operand)
    shape = get_aval(operand).shape
    reps = tuple(int(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)="
                        f"{len(reps)} and x.ndim={len(shape)}.")
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile: negative repetitions {reps}")
    wide = tuple(d for pair in zip(reps, shape) for d in pair)
    out = st.broadcast_in_dim(operand, wide, tuple(range(1, 2 * len(shape), 2)))
    return st.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


# --------------------------------------------------------------------------- dots


def _preferred(x: Any, preferred_element_type: Any) -> Any:
    if preferred_element_type is None:
        return x
    return el.convert_element_type(x, dtypes.canonicalize_dtype(preferred_element_type))


def dot(lhs: Any, rhs: Any, *, dimension_numbers: Any = None, precision: Any = None,
        preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """The vector/matrix product of ``lhs`` and ``rhs`` (rank 1 or 2), or ``dot_general``
    with ``dimension_numbers``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.dot(np.ones((2, 3)), np.ones(3))
    Array([3., 3.], dtype=float32)
    """
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    if dimension_numbers is None:
        if 1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]:
            dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
        else:
            raise ShapeError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple"
                " un-batched matrix-matrix, matrix-vector, or vector-vector products;"
                f" got lhs_shape={ls} rhs_shape={rs}")
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    return la.dot_general(lhs, rhs, dn, precision, preferred_element_type)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) axes of two arrays of one rank >= 2.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.batch_matmul(np.ones((4, 2, 3)), np.ones((4, 3, 5))).shape
    (4, 2, 5)
    """
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    if len(ls) != len(rs) or len(ls) < 2:
        raise ShapeError(f"batch_matmul requires arguments of one rank >= 2, got shapes {ls} "
                         f"and {rs}")
    if ls[:-2] != rs[:-2]:
        raise ShapeError(f"batch_matmul requires equal batch dimensions, got {ls} and {rs}")
    n = len(ls)
    batch = tuple(range(n - 2))
    return la.dot_general(lhs, rhs, (((n - 1,), (n - 2,)), (batch, batch)), precision)


def ragged_dot(lhs: Any, rhs: Any, group_sizes: Any, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Any = None,
               out_sharding: Any = None) -> Any:
    """``lhs[m, k]`` times one of the ``g`` matrices ``rhs[g, k, n]`` per row: the rows come
    in consecutive groups of ``group_sizes[g]``; rows past their sum give zeros.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.ragged_dot(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]),
    ...                np.array([1, 2], np.int32))
    Array([[1., 1.],
           [2., 2.],
           [2., 2.]], dtype=float32)
    """
    if precision is not None:
        check_dot_precision(precision)
    if group_offset is not None:
        raise ValueError("ragged_dot: group_offset is not supported (as in JAX); pass None")
    lhs, rhs, group_sizes = as_operand(lhs), as_operand(rhs), as_operand(group_sizes)
    la_, ra, ga = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    if la_.ndim != 2 or ra.ndim != 3 or ga.ndim != 1:
        raise ShapeError(f"ragged_dot expects lhs [m, k], rhs [g, k, n], group_sizes [g], "
                         f"got {la_.shape}, {ra.shape}, {ga.shape}")
    m, k = la_.shape
    g, k2, n = ra.shape
    if k != k2 or ga.shape[0] != g:
        raise ShapeError(f"ragged_dot: contracting sizes {k} and {k2} / group counts "
                         f"{ga.shape[0]} and {g} must match")
    if ga.dtype.kind not in "iu":
        raise DTypeError(f"ragged_dot group_sizes must be integers, got {ga.dtype}")
    lhs, rhs = _preferred(lhs, preferred_element_type), _preferred(rhs, preferred_element_type)
    ends = red.cumsum(group_sizes, 0)
    starts = el.sub(ends, group_sizes)
    rows = st.iota(ga.dtype, (g, m), 1)
    band = _lax("and")
    member = band(el.ge(rows, st.broadcast_in_dim(starts, (g, m), (0,))),
                  el.lt(rows, st.broadcast_in_dim(ends, (g, m), (0,))))
    prods = la.dot_general(rhs, lhs, (((1,), (1,)), ((), ())))  # [g, n, m]
    prods = st.transpose(prods, (0, 2, 1))  # [g, m, n]
    out_dt = get_aval(prods).dtype
    mask = st.broadcast_in_dim(el.convert_element_type(member, out_dt), (g, m, n), (0, 1))
    zero = np.zeros((g, m, n), out_dt)
    # A select keeps NaN/inf of other groups' products out of each row.
    return red.reduce_sum(el.select(el.ne(mask, zero), prods, zero), (0,))


# ------------------------------------------------------------------------ reductions


def _identity_of(op: str, dt: np.dtype[Any]) -> Any:
    if op in {"add", "or", "xor"}:
        return np.zeros((), dt)
    if op == "mul":
        return np.ones((), dt)
    if op == "and":
        return np.asarray(True) if dt.kind == "b" else np.asarray(-1).astype(dt)
    big = np.inf if dtypes.is_inexact(dt) else (np.iinfo(dt).max if dt.kind in "iu" else True)
    small = -np.inf if dtypes.is_inexact(dt) else (
        np.iinfo(dt).min if dt.kind in "iu" else False)
    return np.asarray(small if op == "max" else big, dt)


def _fold(xs: list[Any], combine: Callable[[list[Any], list[Any]], list[Any]]) -> list[Any]:
    """Pairwise (tree) reduction along axis 0 of every array of ``xs``."""
    while get_aval(xs[0]).shape[0] > 1:
        n = get_aval(xs[0]).shape[0]
        half = n // 2

        def part(x: Any, a: int, b: int) -> Any:
            shape = get_aval(x).shape
            return st.slice_(x, (a,) + (0,) * (len(shape) - 1), (b, *shape[1:]))

        paired = combine([part(x, 0, half) for x in xs], [part(x, half, 2 * half) for x in xs])
        if n % 2:
            paired = [st.concatenate([p, part(x, 2 * half, n)], 0) for p, x in zip(paired, xs)]
        xs = paired
    return [st.squeeze(x, (0,)) for x in xs]


def _bitwise_reduce(name: str, op: str) -> Callable[..., Any]:
    def fn(operand: Any, axes: Sequence[int]) -> Any:
        operand = as_operand(operand)
        aval = get_aval(operand)
        if aval.dtype.kind not in "biu":
            raise DTypeError(f"{name} needs a boolean or integer operand, got {aval.dtype}")
        combine = _lax(op)
        return _reduce_general([operand], [_identity_of(op, aval.dtype)],
                               lambda a, b: [combine(a[0], b[0])], axes, name)[0]

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The bitwise {op} of ``operand`` over ``axes`` (logical for booleans).\n\n"
                  "    >>> import numpy as np\n    >>> from funcgrad import lax\n"
                  f"    >>> lax.{name}(np.array([True, False]), (0,)).dtype\n"
                  "    dtype('bool')\n")
    return fn


def _reduce_general(operands: list[Any], inits: list[Any],
                    combine: Callable[[list[Any], list[Any]], list[Any]],
                    dimensions: Sequence[int], where: str) -> list[Any]:
    shape = get_aval(operands[0]).shape
    dims = sorted({_axis(d, len(shape), where) for d in dimensions})
    if len(dims) != len(tuple(dimensions)):
        raise ValueError(f"{where}: repeated dimensions {tuple(dimensions)}")
    keep = [d for d in range(len(shape)) if d not in dims]
    out_shape = tuple(shape[d] for d in keep)
    if not dims:
        return list(operands)  # as XLA: nothing is reduced, the init is not applied
    size = math.prod(shape[d] for d in dims)
    inits_b = [st.broadcast_in_dim(as_operand(i), out_shape, ()) if out_shape else as_operand(i)
               for i in inits]
    if size == 0:
        return inits_b
    flat = [st.reshape(st.transpose(x, (*dims, *keep)), (size, *out_shape)) for x in operands]
    folded = _fold(flat, combine)
    return combine(inits_b, folded)


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int], out_sharding: Any = None) -> Any:
    """Reduce ``operands`` (a pytree of arrays of one shape) over ``dimensions`` with
    ``computation`` starting from ``init_values``. ``lax.add``/``mul``/``max``/``min`` (and
    ``bitwise_and``/``or``/``xor`` on booleans) with their identity as the initial value
    become the dedicated reductions, as in JAX; any other associative ``computation`` is
    applied as a balanced tree.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.reduce(np.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))
    Array([ 3., 12.], dtype=float32)
    """
    from funcgrad.tree_util import tree_flatten, tree_unflatten

    flat_ops, op_tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if op_tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: "
                         f"{op_tree} vs. {init_tree}")
    if len(flat_ops) != len(flat_init) or not flat_ops:
        raise ValueError("reduce needs as many init_values as operands (at least one)")
    flat_ops = [as_operand(x) for x in flat_ops]
    shape = get_aval(flat_ops[0]).shape
    if any(get_aval(x).shape != shape for x in flat_ops):
        raise ShapeError(f"reduce operands must have one shape, got "
                         f"{[get_aval(x).shape for x in flat_ops]}")
    for i in flat_init:
        ia = get_aval(as_operand(i))
        if ia.ndim != 0:
            raise ShapeError(f"reduce init values must be scalars, got shape {ia.shape}")
    dims = tuple(int(d) for d in dimensions)
    fast = _monoid_reducer(computation, flat_ops, flat_init)
    if fast is not None:
        return tree_unflatten(op_tree, [fast(flat_ops[0], dims)])
    inits = [el.convert_element_type(as_operand(i), get_aval(x).dtype)
             if dtypes.python_scalar(i) else i for x, i in zip(flat_ops, flat_init)]
    for x, i in zip(flat_ops, inits):
        if get_aval(i).dtype != get_aval(x).dtype:
            raise DTypeError(f"reduce init value dtype {get_aval(i).dtype} differs from the "
                             f"operand dtype {get_aval(x).dtype}")

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, tree = tree_flatten(computation(tree_unflatten(op_tree, a),
                                             tree_unflatten(op_tree, b)))
        if tree != op_tree:
            raise TypeError(f"reduce: computation returned the structure {tree}, not that "
                            f"of the operands ({op_tree})")
        for x, y in zip(a, out):
            if (get_aval(x).shape, get_aval(x).dtype) != (get_aval(y).shape,
                                                          get_aval(y).dtype):
                raise DTypeError("reduce: computation must keep the shapes and dtypes of its "
                                 f"arguments, got {get_aval(y)} for {get_aval(x)}")
        return out

    return tree_unflatten(op_tree, _reduce_general(flat_ops, inits, combine, dims, "reduce"))


def _monoid_reducer(computation: Any, ops: list[Any], inits: list[Any]
                    ) -> Callable[[Any, Sequence[int]], Any] | None:
    if len(ops) != 1:
        return None
    init = inits[0]
    if not (dtypes.python_scalar(init) or is_concrete(init)) or np.ndim(init) != 0:
        return None
    dt = get_aval(ops[0]).dtype
    table = {"add": red.reduce_sum, "mul": red.reduce_prod, "max": red.reduce_max,
             "min": red.reduce_min}
    if dt.kind == "b":
        table = {"and": reduce_and, "or": reduce_or, "xor": reduce_xor}
    for op, fn in table.items():
        if computation is PRIMITIVES[op].lax_fn:
            try:
                value = np.asarray(init)
            except TypeError:
                return None
            if value.dtype != np.dtype(object) and bool(np.equal(value, _identity_of(op, dt))):
                return fn
    return None


reduce_and = _bitwise_reduce("reduce_and", "and")
reduce_or = _bitwise_reduce("reduce_or", "or")
reduce_xor = _bitwise_reduce("reduce_xor", "xor")


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` largest entries along ``reduction_dimension`` and their indices. The exact
    top-k is returned (a recall of 1, what JAX does on the CPU).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.approx_max_k(np.array([1.0, 5.0, 3.0]), 2)[0]
    Array([5., 3.], dtype=float32)
    """
    return _approx_k(operand, k, reduction_dimension, recall_target, largest=True)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` smallest entries along ``reduction_dimension`` and their indices (exact).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.approx_min_k(np.array([1.0, 5.0, 3.0]), 2)[1]
    Array([0, 2], dtype=int32)
    """
    return _approx_k(operand, k, reduction_dimension, recall_target, largest=False)


def _approx_k(operand: Any, k: int, axis: int, recall_target: float, largest: bool
              ) -> list[Any]:
    operand = as_operand(operand)
    aval = get_aval(operand)
    axis = _axis(axis, aval.ndim, "approx_max_k" if largest else "approx_min_k")
    k = operator.index(k)
    if not 0 <= k <= aval.shape[axis]:
        raise ValueError(f"k must be in [0, {aval.shape[axis]}] for the reduction dimension "
                         f"of shape {aval.shape}, got {k}")
    if not 0 < recall_target <= 1:
        raise ValueError(f"recall_target must be in (0, 1], got {recall_target}")
    if not dtypes.is_float(aval.dtype):
        raise DTypeError(f"approx_max_k/approx_min_k need a floating-point operand, got "
                         f"{aval.dtype}")
    if largest:
        return srt.top_k(operand, k, axis=axis)
    vals, idx = srt.top_k(el.neg(operand), k, axis=axis)
    return [el.neg(vals), idx]


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """The branch of ``per_platform`` for the backend running it (``cpu``, or ``cuda``/
    ``gpu`` on CuPy), else ``default``, applied to ``args``.

    >>> from funcgrad import lax
    >>> lax.platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x)
    20.0
    """
    from funcgrad.api import default_backend

    backend = default_backend()
    names = ("cuda", "gpu") if backend in ("gpu", "cuda") else (backend,)
    for name in names:
        if name in per_platform:
            return per_platform[name](*args)
    if default is None:
        raise ValueError(f"platform_dependent: no branch for the platform {backend!r} and no "
                         "default given")
    return default(*args)
