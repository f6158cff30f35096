"""``lax.associative_scan`` (JAX's parallel prefix algorithm) and the cumulative reductions
built on it: ``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``.

The scan is a composition of slices, pads and concatenations, so it is differentiable, and
runs under ``jit`` and ``vmap`` like any other traced code. JAX differentiates its
cumulative reductions through the same algorithm, so the derivatives (at ties of
``cummax``/``cummin`` too) are JAX's; their values are XLA's reduce_window (see
:func:`_xla_scan`).

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.associative_scan(lax.add, np.arange(5.0))
Array([ 0.,  1.,  3.,  6., 10.], dtype=float32)
>>> lax.cummax(np.array([1.0, 3.0, 2.0, 5.0]))
Array([1., 3., 3., 5.], dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import PRIMITIVES, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.primitives import elementwise as el
from funcgrad.primitives import structural as st


def _slice_axis(x: Any, start: int | None, stop: int | None, stride: int, axis: int) -> Any:
    shape = get_aval(x).shape
    s, e, k = slice(start, stop, stride).indices(shape[axis])
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = s, max(e, s), k
    return st.slice_(x, starts, limits, strides)


def _interleave(a: Any, b: Any, axis: int) -> Any:
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` has as many or one more)."""
    na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
    nd = get_aval(a).ndim
    pad_a = [(0, 0, 0)] * nd
    pad_b = [(0, 0, 0)] * nd
    pad_a[axis] = (0, 1 if na == nb else 0, 1)
    pad_b[axis] = (1, 0 if na == nb else 1, 1)
    dt = get_aval(a).dtype
    # Pad with zeros and add: padding is linear, so the interleave differentiates.
    combine = PRIMITIVES["or"].lax_fn if dtypes.is_bool(dt) else el.add
    assert combine is not None
    zero = np.zeros((), dt)
    return combine(st.pad(a, zero, pad_a), st.pad(b, zero, pad_b))


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """The inclusive scan of ``elems`` (a pytree of arrays of one length along ``axis``)
    with the associative ``fn``: ``out[i] = fn(... fn(elems[0], elems[1]) ..., elems[i])``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.associative_scan(lax.mul, np.array([1, 2, 3, 4]), reverse=True)
    Array([24, 24, 12,  4], dtype=int32)
    """
    return _associative_scan(fn, elems, reverse, axis, keep_weak=False)


def _associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool, axis: int,
                      keep_weak: bool) -> Any:
    """:func:`associative_scan`; ``keep_weak`` (for the cumulative reductions, primitives
    of their own in JAX) keeps weak types."""
    from funcgrad.tree_util import tree_flatten, tree_unflatten

    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    flat, tree = tree_flatten(elems)
    flat = [el.as_operand(x) for x in flat]
    if not flat:
        raise ValueError("associative_scan: elems has no arrays")
    ndims = {get_aval(x).ndim for x in flat}
    nd = get_aval(flat[0]).ndim
    if len(ndims) != 1 or nd == 0:
        raise ShapeError("associative_scan: every array of elems needs the same rank >= 1, got "
                         f"shapes {[get_aval(x).shape for x in flat]}")
    if reverse and not 0 <= axis < nd:
        # (JAX reverses before it normalizes the axis: lax.rev's errors)
        if axis < 0:
            raise ShapeError("rev dimensions must have every element be nonnegative, got "
                             f"{(axis,)}.")
        raise ShapeError(f"rev dimensions must all be less than operand ndim, got dimensions "
                         f"{(axis,)} for operand ndim {nd}.")
    if not -nd <= axis < nd:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    lengths = {get_aval(x).shape[axis] for x in flat}
    if len(lengths) != 1:
        # (JAX's words, whatever the axis)
        raise ShapeError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in flat]})")
    if reverse:
        flat = [st.rev(x, (axis,)) for x in flat]

    def combine(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
        out, _ = tree_flatten(fn(tree_unflatten(tree, list(a)),
                                 tree_unflatten(tree, list(b))))
        # As JAX, only the number of leaves matters (its tree_unflatten's words).
        if len(out) > len(a):
            raise ValueError(f"Too many leaves for PyTreeDef; expected {len(a)}.")
        if len(out) < len(a):
            raise ValueError(f"Too few leaves for PyTreeDef; expected {len(a)}, got "
                             f"{len(out)}")
        for x, y in zip(a, out):
            if get_aval(x).shape != get_aval(y).shape:
                raise ShapeError(f"associative_scan: fn changed a shape from "
                                 f"{get_aval(x).shape} to {get_aval(y).shape}; it must keep "
                                 "the shapes of its arguments")
        return out

    def scan(xs: list[Any]) -> list[Any]:
        n = get_aval(xs[0]).shape[axis]
        if n < 2:
            return xs
        # Combine adjacent pairs, scan the half-length result, then fill in the evens.
        reduced = combine([_slice_axis(x, 0, -1, 2, axis) for x in xs],
                          [_slice_axis(x, 1, None, 2, axis) for x in xs])
        odd = scan(reduced)
        if n % 2 == 0:
            even = combine([_slice_axis(x, 0, -1, 1, axis) for x in odd],
                           [_slice_axis(x, 2, None, 2, axis) for x in xs])
        else:
            even = combine(odd, [_slice_axis(x, 2, None, 2, axis) for x in xs])
        even = [st.concatenate([_slice_axis(x, 0, 1, 1, axis), r], axis)
                for x, r in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(list(flat))
    if reverse:
        out = [st.rev(x, (axis,)) for x in out]
    if not keep_weak and get_aval(out[0]).shape[axis] >= 2:
        # As JAX: its interleave pads with a strongly typed zero, so the scan of a weakly
        # typed array of two or more elements is strong (its cumulative reductions,
        # primitives of their own there, keep the weak type).
        out = [el.convert_element_type(x, get_aval(x).dtype) for x in out]
    return tree_unflatten(tree, out)


@functools.cache
def _logaddexp() -> Any:
    from funcgrad.transforms.custom import custom_jvp

    lax_fn = {n: PRIMITIVES[n].lax_fn for n in ("log1p", "abs", "ne")}

    def raw(x1: Any, x2: Any) -> Any:
        amax = el.max_(x1, x2)
        delta = el.sub(x1, x2)
        isnan = lax_fn["ne"](delta, delta)  # type: ignore[misc]
        soft = el.add(amax, lax_fn["log1p"](el.exp(el.neg(lax_fn["abs"](delta)))))  # type: ignore[misc]
        return el.select(isnan, el.add(x1, x2), soft)

    f = custom_jvp(raw)

    def finite(x: Any) -> Any:
        # As JAX: infinities are replaced by 0 in the tangent so inf - inf gives no NaN.
        inf = lax_fn["abs"](x)  # type: ignore[misc]
        dt = get_aval(x).dtype
        big = el.eq(inf, np.full(get_aval(x).shape, np.inf, dt))
        return el.select(big, np.zeros(get_aval(x).shape, dt), x)

    @f.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        x1, x2 = primals
        t1, t2 = tangents
        out = f(x1, x2)
        t = el.add(el.mul(t1, el.exp(el.sub(finite(x1), finite(out)))),
                   el.mul(t2, el.exp(el.sub(finite(x2), finite(out)))))
        return out, t

    return f


def logaddexp(x1: Any, x2: Any) -> Any:
    """``log(exp(x1) + exp(x2))`` without overflow (real floats, equal dtypes)."""
    for x in (x1, x2):
        if not dtypes.is_float(get_aval(x).dtype):
            raise DTypeError(f"logaddexp needs real floating-point inputs, got "
                             f"{get_aval(x).dtype}")
    return _logaddexp()(x1, x2)


# XLA's CPU scan of a length over 16 (its ReduceWindowRewriter's base length) is a tree.
_XLA_SCAN_BASE = 16


def _xla_window_fold(x: Any, combine: Callable[[Any, Any], Any], init: Any, reverse: bool
                     ) -> Any:
    """The inclusive scan along the last axis (of length <= 16) as XLA's CPU reduce_window
    computes it: ``out[i] = combine(...combine(init, x[lo]), ..., x[hi])`` over the window
    (``x[:i+1]``, or ``x[i:]`` when ``reverse``) in index order."""
    shape = get_aval(x).shape
    n, nd = shape[-1], len(shape)
    acc = st.broadcast_in_dim(init, shape, ())
    for k in range(n):
        xk = st.broadcast_in_dim(_slice_axis(x, k, k + 1, 1, nd - 1), shape,
                                 tuple(range(nd)))
        col = np.arange(n)
        inside = np.broadcast_to(col >= k if not reverse else col <= k, shape)
        acc = el.select(inside, combine(acc, xk), acc)
    return acc


def _xla_scan(x: Any, combine: Callable[[Any, Any], Any], init: Any, reverse: bool) -> Any:
    """XLA's CPU cumulative reduction along the last axis (``lax.cummax`` and friends lower
    to a reduce_window, which XLA rewrites into rows of 16 scanned in place, an exclusive
    scan of the rows' ends, and a combine of the two). Its order sets the rounding of
    floating products and log-sum-exps, and which complex number max/min picks."""
    shape = get_aval(x).shape
    n, nd = shape[-1], len(shape)
    if n <= _XLA_SCAN_BASE:
        return _xla_window_fold(x, combine, init, reverse)
    b = _XLA_SCAN_BASE
    cols = -(-n // b)
    config = [(0, 0, 0)] * (nd - 1) + [(0, cols * b - n, 0)]
    tiles = st.reshape(st.pad(x, init, config), (*shape[:-1], cols, b))
    outer = _xla_window_fold(tiles, combine, init, reverse)
    edge = st.reshape(_slice_axis(outer, 0, 1, 1, nd) if reverse else
                      _slice_axis(outer, b - 1, b, 1, nd), (*shape[:-1], cols))
    inner = _xla_scan(edge, combine, init, reverse)
    pad1 = [(0, 0, 0)] * (nd - 1) + [((0, 1, 0) if reverse else (1, 0, 0))]
    shifted = st.pad(inner, init, pad1)
    excl = _slice_axis(shifted, 1, None, 1, nd - 1) if reverse else \
        _slice_axis(shifted, 0, cols, 1, nd - 1)
    spread = st.broadcast_in_dim(excl, (*shape[:-1], cols, b), tuple(range(nd)))
    out = st.reshape(combine(outer, spread), (*shape[:-1], cols * b))
    return _slice_axis(out, 0, n, 1, nd - 1)


# The combine and identity of the cumulative reductions computed in XLA's order.
_XLA_ORDERED: dict[str, tuple[Callable[[Any, Any], Any], float]] = {
    "cumprod": (el.mul, 1.0), "cumlogsumexp": (logaddexp, -np.inf),
    "cummax": (el.max_, -np.inf), "cummin": (el.min_, np.inf)}


@functools.cache
def _xla_cumulative(name: str, axis: int, reverse: bool) -> Any:
    """``name`` (see ``_XLA_ORDERED``) with XLA's values (see :func:`_xla_scan`): those of
    floating ``cumprod``/``cumlogsumexp``, whose rounding depends on the order, and of
    complex ``cummax``/``cummin``; and JAX's derivative, that of the associative scan."""
    from funcgrad.transforms.custom import custom_jvp
    from funcgrad.transforms.jvp import jvp

    combine, identity = _XLA_ORDERED[name]

    def raw(x: Any) -> Any:
        nd = get_aval(x).ndim
        perm = [i for i in range(nd) if i != axis] + [axis]
        back = list(np.argsort(perm))
        init = np.array(identity, get_aval(x).dtype)
        out = st.transpose(_xla_scan(st.transpose(x, perm), combine, init, reverse), back)
        if get_aval(x).weak_type:  # kept, as by JAX's cumulative primitives
            out = el.convert_element_type(out, get_aval(x).dtype, weak_type=True)
        return out

    f = custom_jvp(raw)

    @f.defjvp
    def _jvp(primals: Any, tangents: Any) -> Any:
        # As JAX: the associative scan differentiated (its values included).
        return jvp(lambda v: _associative_scan(combine, v, reverse, axis, keep_weak=True),
                   primals, tangents)

    return f


def _cumulative(name: str, combine: Callable[[Any, Any], Any], kinds: str
                ) -> Callable[..., Any]:
    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        operand = el.as_operand(operand)
        aval = get_aval(operand)
        if dtypes.kind(aval.dtype) not in kinds:
            raise DTypeError(f"{name} does not accept {aval.dtype} operands")
        if aval.ndim == 0:
            raise ShapeError(f"{name} needs an array of rank >= 1, got a scalar")
        if not 0 <= axis < aval.ndim:
            # As JAX's: its cumulative reductions take no negative axes.
            raise ShapeError(f"{name}: axis {axis} is out of range for rank {aval.ndim} (XLA "
                             "operations do not allow negative axes)")
        # XLA's CPU reduce_window order: it matters to the rounding of floating products
        # and log-sum-exps, and to which complex number max/min picks.
        if (aval.dtype.kind == "c" if name in ("cummax", "cummin")
                else dtypes.kind(aval.dtype) in "fc"):
            return _xla_cumulative(name, axis, bool(reverse))(operand)
        return _associative_scan(combine, operand, bool(reverse), axis, keep_weak=True)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The cumulative {name[3:]} of ``operand`` along ``axis`` (from the end "
                  "with ``reverse=True``).")
    return fn


cumprod = _cumulative("cumprod", el.mul, "iufc")
cummax = _cumulative("cummax", el.max_, "iufc")
cummin = _cumulative("cummin", el.min_, "iufc")
cumlogsumexp = _cumulative("cumlogsumexp", logaddexp, "f")
