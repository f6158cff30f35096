"""Window reductions (``reduce_window_sum``, ``reduce_window_max``, ``reduce_window_min``)
and the two selections behind the derivatives of max and min pooling.

Params are JAX's: ``window_dimensions``, ``window_strides``, ``padding`` ((low, high) per
axis), ``base_dilation`` (spreads the operand) and ``window_dilation`` (spreads the
window). Padding and dilation holes hold the reduction's identity. The derivative of a
max (min) window goes to the first largest (smallest) element of the window, as XLA's
select-and-scatter does: ``select_and_gather_add`` picks a tangent per window,
``select_and_scatter_add`` adds a cotangent back to the picked element; each is the other's
transpose.

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.reduce_window(np.arange(6.0).reshape(2, 3), -np.inf, lax.max, (2, 2), (1, 1),
...                   "VALID")
Array([[4., 5.]], dtype=float64)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import structural as S
from funcgrad.primitives.convolution import (
    dilate_dim,
    dilate_pad,
    padtype_to_pads,
    placement,
    vjp_lhs_padding,
)
from funcgrad.primitives.rules import all_batched, linear, move_to_front

Ints = tuple[int, ...]
Pads = tuple[tuple[int, int], ...]
PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")


def _canon(operand: Any, window_dimensions: Sequence[int], window_strides: Sequence[int],
           padding: Any, base_dilation: Sequence[int] | None,
           window_dilation: Sequence[int] | None) -> dict[str, Any]:
    nd = len(get_aval(operand).shape)
    base = tuple(int(d) for d in base_dilation) if base_dilation is not None else (1,) * nd
    wdil = tuple(int(d) for d in window_dilation) if window_dilation is not None else (1,) * nd
    dims = tuple(int(d) for d in window_dimensions)
    strides = tuple(int(s) for s in window_strides)
    if isinstance(padding, str):
        shape = [dilate_dim(n, b) for n, b in zip(get_aval(operand).shape, base)]
        padding = padtype_to_pads(shape, [dilate_dim(w, d) for w, d in zip(dims, wdil)],
                                  strides, padding)
    pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    return {"window_dimensions": dims, "window_strides": strides, "padding": pads,
            "base_dilation": base, "window_dilation": wdil}


def _out_shape(shape: Sequence[int], window_dimensions: Ints, window_strides: Ints,
               padding: Pads, base_dilation: Ints, window_dilation: Ints) -> list[int]:
    out = []
    for ax, (n, w, s, (lo, hi), b, d) in enumerate(zip(shape, window_dimensions, window_strides,
                                                       padding, base_dilation,
                                                       window_dilation)):
        size = lo + dilate_dim(n, b) + hi
        if size < 0:
            raise ShapeError(f"padding {(lo, hi)} leaves a negative size on axis {ax}")
        ww = dilate_dim(w, d)
        out.append(0 if size < ww else (size - ww) // s + 1)
    return out


def _check_params(x: ShapedArray, window_dimensions: Ints, window_strides: Ints, padding: Pads,
                  base_dilation: Ints, window_dilation: Ints) -> list[int]:
    """The output shape, after JAX's checks (its TypeErrors and texts, in its order)."""
    for name, v, strict in (("window_dimensions", window_dimensions, True),
                            ("window_strides", window_strides, True),
                            ("base_dilation", base_dilation, False),
                            ("window_dilation", window_dilation, False)):
        if v and not all(a >= int(strict) for a in v):
            raise TypeError(f"reduce_window {name} must have every element be "
                            f"{'strictly positive' if strict else 'nonnegative'}, got {v}.")
    if x.ndim != len(window_dimensions):
        raise TypeError("reduce_window got the wrong number of window_dimensions for operand: "
                        f"got operand shape {x.shape} with window_dimensions "
                        f"{window_dimensions}.")
    for name, v in (("window_strides", window_strides), ("base_dilation", base_dilation),
                    ("window_dilation", window_dilation)):
        if len(v) != len(window_dimensions):
            raise TypeError(f"reduce_window got inconsistent {name} and window_dimensions: got "
                            f"{name} {v} and window_dimensions {window_dimensions}.")
    for v in (base_dilation, window_dilation):
        if not all(d > 0 for d in v):
            raise TypeError(f"All dilations must be positive, got {v}.")
    if len(padding) != x.ndim:
        raise ValueError(f"safe_zip() argument 1 has length {len(padding)} but argument 0 has "
                         f"length {x.ndim}. All lengths: ({x.ndim}, {len(padding)})")
    return _out_shape(x.shape, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation)


def _offset_slices(window_dimensions: Ints, window_strides: Ints, window_dilation: Ints,
                   out: Sequence[int]) -> list[tuple[slice, ...]]:
    """For each position in the window (row-major), the strided slice of the padded operand
    that it reads across all windows."""
    return [tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                  for o, d, s, n in zip(offs, window_dilation, window_strides, out))
            for offs in itertools.product(*(range(w) for w in window_dimensions))]


def identity(kind: str, dtype: Any) -> Any:
    """The identity of ``kind`` ("sum", "max", "min") in ``dtype``."""
    dt = np.dtype(dtype)
    if kind == "sum":
        return dt.type(0)
    if dt.kind == "b":
        return np.bool_(kind == "min")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return dt.type(info.min if kind == "max" else info.max)
    return dt.type(-np.inf if kind == "max" else np.inf)


# ----------------------------------------------------------- the reductions


def _reduce_prim(kind: str, kinds: str) -> Primitive:
    def abstract_eval(x: ShapedArray, **params: Any) -> ShapedArray:
        if dtypes.kind(x.dtype) not in kinds:
            if kind == "sum":  # JAX's text (max and min take booleans)
                raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                                f"{x.dtype.name}")
            raise DTypeError(f"reduce_window_{kind} needs a numeric operand, got {x.dtype}")
        return ShapedArray(_check_params(x, **params), x.dtype, x.weak_type)

    def impl(xp: Any, x: Any, *, window_dimensions: Ints, window_strides: Ints, padding: Pads,
             base_dilation: Ints, window_dilation: Ints) -> Any:
        init = identity(kind, x.dtype)
        out = _out_shape(x.shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
        if math.prod(out) == 0:
            return xp.full(out, init, dtype=x.dtype)
        xpad = dilate_pad(xp, x, 0, base_dilation, padding, init)
        # One strided slice per window position, combined in place: faster than a
        # reduction over the trailing axes of a window view for pooling-sized windows.
        acc = None
        for sl in _offset_slices(window_dimensions, window_strides, window_dilation, out):
            if acc is None:
                acc = xp.array(xpad[sl], copy=True)
            elif kind == "sum":
                acc += xpad[sl]
            else:
                (xp.maximum if kind == "max" else xp.minimum)(acc, xpad[sl], out=acc)
        return acc

    return Primitive(f"reduce_window_{kind}", abstract_eval=abstract_eval, impl=impl)


reduce_window_sum_p = _reduce_prim("sum", "iufc")
reduce_window_max_p = _reduce_prim("max", "biuf")
reduce_window_min_p = _reduce_prim("min", "biuf")


def _reduce_window_sum(operand: Any, window_dimensions: Sequence[int],
                       window_strides: Sequence[int], padding: Any,
                       base_dilation: Sequence[int] | None = None,
                       window_dilation: Sequence[int] | None = None) -> Any:
    """The sum over each window (padding counts as 0).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.reduce_window_sum(np.arange(4.0), (2,), (1,), [(0, 0)])
    Array([1., 3., 5.], dtype=float32)
    """
    return reduce_window_sum_p.bind(operand, **_canon(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _reduce_window_max(operand: Any, window_dimensions: Sequence[int],
                       window_strides: Sequence[int], padding: Any,
                       base_dilation: Sequence[int] | None = None,
                       window_dilation: Sequence[int] | None = None) -> Any:
    """The largest element of each window (padding counts as -inf).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.reduce_window_max(np.array([1.0, 3.0, 2.0]), (2,), (1,), [(0, 1)])
    Array([3., 3., 2.], dtype=float32)
    """
    return reduce_window_max_p.bind(operand, **_canon(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))


def _reduce_window_min(operand: Any, window_dimensions: Sequence[int],
                       window_strides: Sequence[int], padding: Any,
                       base_dilation: Sequence[int] | None = None,
                       window_dilation: Sequence[int] | None = None) -> Any:
    """The smallest element of each window (padding counts as +inf).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.reduce_window_min(np.array([1.0, 3.0, 2.0]), (2,), (1,), "VALID")
    Array([1., 2.], dtype=float32)
    """
    return reduce_window_min_p.bind(operand, **_canon(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))


# ---------------------------------------------------------------- selections


def _select_order(select_prim: str) -> str:
    if select_prim not in ("ge", "le"):
        raise ShapeError(f"select_prim must be 'ge' (max) or 'le' (min), got {select_prim!r}")
    return "max" if select_prim == "ge" else "min"


def _selected(xp: Any, x: Any, select_prim: str, params: dict[str, Any], out: Sequence[int]
              ) -> tuple[Any, list[tuple[slice, ...]]]:
    """For each window, the position (row-major, in the window) of its first largest
    (``ge``) or smallest (``le``) element; NaN counts as the most extreme."""
    kind = _select_order(select_prim)
    xpad = dilate_pad(xp, x, 0, params["base_dilation"], params["padding"],
                      identity(kind, x.dtype))
    slices = _offset_slices(params["window_dimensions"], params["window_strides"],
                            params["window_dilation"], out)
    best = xp.array(xpad[slices[0]], copy=True)
    arg = xp.zeros(best.shape, dtype=np.int32)
    nan = dtypes.kind(x.dtype) in "fc"
    for k, sl in enumerate(slices[1:], 1):
        v = xpad[sl]
        take = v > best if kind == "max" else v < best
        if nan:
            take |= xp.isnan(v) & ~xp.isnan(best)
        best = xp.where(take, v, best)
        arg = xp.where(take, np.int32(k), arg)
    return arg, slices


def _tiling(x: Any, params: dict[str, Any], out: Sequence[int]) -> tuple[int, ...] | None:
    """The window sizes when the windows tile ``x`` without overlap, gaps, padding or
    dilation (pooling's usual case), else None. Trailing elements that no window reaches
    are allowed."""
    w, st = params["window_dimensions"], params["window_strides"]
    if (tuple(w) != tuple(st) or any(d != 1 for d in params["window_dilation"])
            or any(d != 1 for d in params["base_dilation"])
            or any(p != (0, 0) for p in params["padding"])):
        return None
    return tuple(w)


def _tiles(xp: Any, x: Any, w: Sequence[int], out: Sequence[int]) -> Any:
    """``x``'s windows as a (*out, prod(w)) array (one copy)."""
    nd = len(w)
    crop = x[tuple(slice(0, o * k) for o, k in zip(out, w))]
    split = crop.reshape([v for o, k in zip(out, w) for v in (o, k)])
    order = [2 * i for i in range(nd)] + [2 * i + 1 for i in range(nd)]
    return xp.transpose(split, order).reshape(*out, math.prod(w))


def _tile_arg(xp: Any, tiles: Any, select_prim: str) -> Any:
    # argmax/argmin take the first extreme element, and NaN as the most extreme: the
    # selection rule of _selected.
    return (xp.argmax if _select_order(select_prim) == "max" else xp.argmin)(tiles, axis=-1)


def _sas_tiled(xp: Any, s: Any, x: Any, w: Sequence[int], out: Sequence[int], kind: str
               ) -> Any:
    """select_and_scatter_add on tiling windows: each element is in at most one window, so
    each window's source goes to its pick. Computed with the window offsets as the leading
    axis (K, *out), where every step is a whole-array operation on contiguous rows (an
    argmax over a short trailing axis is slow in NumPy)."""
    nd = len(w)
    k_all = math.prod(w)
    crop = x[tuple(slice(0, o * k) for o, k in zip(out, w))]
    split = crop.reshape([v for o, k in zip(out, w) for v in (o, k)])
    tk = xp.transpose(split, [2 * i + 1 for i in range(nd)] + [2 * i for i in range(nd)]
                      ).reshape(k_all, *out)
    best = (xp.maximum if kind == "max" else xp.minimum).reduce(tk, axis=0)
    # NaN is the most extreme value (maximum/minimum propagate it): the first NaN wins.
    # The two checks below only pick faster NumPy steps; on a device they would be host
    # reads (a sync per call), so the general steps run there.
    on_host = xp is np
    nan = dtypes.kind(x.dtype) in "fc" and (not on_host or bool(xp.isnan(best).any()))
    finite = on_host and (bool(xp.isfinite(s).all()) if dtypes.kind(s.dtype) in "fc"
                          else True)
    remaining = xp.ones(tuple(out), dtype=bool)
    res = xp.empty((k_all, *out), dtype=s.dtype)
    zero = s.dtype.type(0)
    for k in range(k_all):
        hit = tk[k] == best
        if nan:
            hit |= xp.isnan(tk[k]) & xp.isnan(best)
        hit &= remaining
        remaining &= ~hit
        if finite:
            xp.multiply(s, hit, out=res[k])
        else:
            res[k] = xp.where(hit, s, zero)
    back = xp.transpose(res.reshape(*w, *out), [v for i in range(nd) for v in (nd + i, i)])
    body = back.reshape([o * k for o, k in zip(out, w)])
    if tuple(body.shape) == tuple(x.shape):
        return body
    full = xp.zeros(x.shape, dtype=s.dtype)
    full[tuple(slice(0, n) for n in body.shape)] = body
    return full


def _sga_abstract(t: ShapedArray, x: ShapedArray, *, select_prim: str, **params: Any
                  ) -> ShapedArray:
    _select_order(select_prim)
    if t.shape != x.shape:
        raise ShapeError(f"tangents {t.shape} and operand {x.shape} must have equal shapes")
    if t.dtype != x.dtype:
        raise DTypeError(f"tangents ({t.dtype}) and operand ({x.dtype}) dtypes differ")
    return ShapedArray(_check_params(x, **params), t.dtype, t.weak_type)


def _sga_impl(xp: Any, t: Any, x: Any, *, select_prim: str, **params: Any) -> Any:
    out = _out_shape(x.shape, **params)
    res = xp.zeros(out, dtype=t.dtype)
    if math.prod(out) == 0:
        return res
    w = _tiling(x, params, out)
    if w is not None:
        arg = _tile_arg(xp, _tiles(xp, x, w, out), select_prim)[..., None]
        return xp.take_along_axis(_tiles(xp, t, w, out), arg, axis=-1)[..., 0]
    arg, slices = _selected(xp, x, select_prim, params, out)
    tpad = dilate_pad(xp, t, 0, params["base_dilation"], params["padding"], 0)
    for k, sl in enumerate(slices):
        res = xp.where(arg == k, tpad[sl], res)
    return res


def _sas_abstract(s: ShapedArray, x: ShapedArray, *, select_prim: str, **params: Any
                  ) -> ShapedArray:
    _select_order(select_prim)
    out = _check_params(x, **params)
    if s.shape != tuple(out):
        raise ShapeError(f"source {s.shape} must have the shape of the windows {tuple(out)}")
    if s.dtype != x.dtype:
        raise DTypeError(f"source ({s.dtype}) and operand ({x.dtype}) dtypes differ")
    return ShapedArray(x.shape, s.dtype, s.weak_type)


def _sas_impl(xp: Any, s: Any, x: Any, *, select_prim: str, **params: Any) -> Any:
    out = _out_shape(x.shape, **params)
    if math.prod(out) == 0 or x.size == 0:
        return xp.zeros(x.shape, dtype=s.dtype)
    w = _tiling(x, params, out)
    if w is not None:
        return _sas_tiled(xp, s, x, w, out, _select_order(select_prim))
    arg, slices = _selected(xp, x, select_prim, params, out)
    padded_shape, src, dst = placement(x.shape, 0, params["base_dilation"], params["padding"])
    buf = xp.zeros(padded_shape, dtype=s.dtype)
    zero = s.dtype.type(0)
    # Within one window position the windows read distinct places, so += is safe.
    for k, sl in enumerate(slices):
        buf[sl] += xp.where(arg == k, s, zero)
    res = xp.zeros(x.shape, dtype=s.dtype)
    res[src] = buf[dst]
    return res


select_and_gather_add_p = Primitive("select_and_gather_add", abstract_eval=_sga_abstract,
                                    impl=_sga_impl)
select_and_scatter_add_p = Primitive("select_and_scatter_add", abstract_eval=_sas_abstract,
                                     impl=_sas_impl)


def select_and_gather_add(tangents: Any, operand: Any, select_prim: str,
                          window_dimensions: Sequence[int], window_strides: Sequence[int],
                          padding: Any, base_dilation: Sequence[int] | None = None,
                          window_dilation: Sequence[int] | None = None) -> Any:
    """For each window of ``operand``, the tangent at its first largest (``'ge'``) or
    smallest (``'le'``) element.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.select_and_gather_add(np.array([10.0, 20.0, 30.0]), np.array([1.0, 3.0, 2.0]),
    ...                           "ge", (2,), (1,), "VALID")
    Array([20., 20.], dtype=float32)
    """
    return select_and_gather_add_p.bind(tangents, operand, select_prim=select_prim, **_canon(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))


def select_and_scatter_add(source: Any, operand: Any, select_prim: str,
                           window_dimensions: Sequence[int], window_strides: Sequence[int],
                           padding: Any, base_dilation: Sequence[int] | None = None,
                           window_dilation: Sequence[int] | None = None) -> Any:
    """Each window's ``source`` value added at the first largest (``'ge'``) or smallest
    (``'le'``) element of that window of ``operand``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.select_and_scatter_add(np.array([1.0, 1.0]), np.array([1.0, 3.0, 2.0]),
    ...                            "ge", (2,), (1,), "VALID")
    Array([0., 2., 0.], dtype=float32)
    """
    return select_and_scatter_add_p.bind(source, operand, select_prim=select_prim, **_canon(
        operand, window_dimensions, window_strides, padding, base_dilation, window_dilation))


# ----------------------------------------------------------------- derivatives


def _sum_transpose(ct: Any, primals: Sequence[Any], ans: Any, *, window_dimensions: Ints,
                   window_strides: Ints, padding: Pads, base_dilation: Ints,
                   window_dilation: Ints) -> list[Any]:
    """JAX's rule: spread the cotangent by the strides, pad it, and sum it over the same
    windows with strides of the base dilation."""
    in_shape = get_aval(primals[0]).shape
    ct_aval = get_aval(ct)
    pads = vjp_lhs_padding(in_shape, window_dimensions, window_strides, ct_aval.shape, padding,
                           base_dilation, window_dilation)
    config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)]
    padded = S.pad(ct, np.zeros((), ct_aval.dtype), config)
    ones = (1,) * len(in_shape)
    return [reduce_window_sum_p.bind(padded, window_dimensions=window_dimensions,
                                     window_strides=base_dilation,
                                     padding=((0, 0),) * len(in_shape), base_dilation=ones,
                                     window_dilation=window_dilation)]


linear(reduce_window_sum_p, _sum_transpose)


def _chooser_rules(prim: Primitive, select_prim: str) -> None:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, **params)
        if t is None:
            return ans, None
        return ans, select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)

    def vjp(ct: Any, primals: Sequence[Any], ans: Any, **params: Any) -> list[Any]:
        return [select_and_scatter_add_p.bind(ct, primals[0], select_prim=select_prim,
                                              **params)]

    prim.jvp, prim.vjp = jvp, vjp
    prim.vjp_reads = "x0"


_chooser_rules(reduce_window_max_p, "ge")
_chooser_rules(reduce_window_min_p, "le")

linear(select_and_gather_add_p, lambda ct, primals, ans, **params: [
    select_and_scatter_add_p.bind(ct, primals[1], **params), None])
linear(select_and_scatter_add_p, lambda ct, primals, ans, **params: [
    select_and_gather_add_p.bind(ct, primals[1], **params), None])


# --------------------------------------------------------------------- batching


def _with_unit_window(params: dict[str, Any]) -> dict[str, Any]:
    """The params with a leading axis that each window covers once (the batch axis)."""
    new = dict(params)
    for name, unit in (("window_dimensions", 1), ("window_strides", 1), ("padding", (0, 0)),
                       ("base_dilation", 1), ("window_dilation", 1)):
        new[name] = (unit, *params[name])
    return new


def _unary_batch(prim: Primitive) -> Callable[..., Any]:
    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        return prim.bind(move_to_front(args[0], dims[0]), **_with_unit_window(params)), 0

    return rule


def _binary_batch(prim: Primitive) -> Callable[..., Any]:
    def rule(args: Sequence[Any], dims: Sequence[int | None], *, select_prim: str,
             **params: Any) -> Any:
        return prim.bind(*all_batched(args, dims), select_prim=select_prim,
                         **_with_unit_window(params)), 0

    return rule


_FNS: tuple[tuple[Primitive, Callable[..., Any], Callable[..., Any]], ...] = (
    (reduce_window_sum_p, _reduce_window_sum, _unary_batch(reduce_window_sum_p)),
    (reduce_window_max_p, _reduce_window_max, _unary_batch(reduce_window_max_p)),
    (reduce_window_min_p, _reduce_window_min, _unary_batch(reduce_window_min_p)),
    (select_and_gather_add_p, select_and_gather_add, _binary_batch(select_and_gather_add_p)),
    (select_and_scatter_add_p, select_and_scatter_add,
     _binary_batch(select_and_scatter_add_p)))
for _p, _fn, _rule in _FNS:
    _p.batch = _rule
    _p.describe(lax=_p.name, fusion=None, cuda=None, ufunc=None, torch_method=None,
                lax_fn=_fn)


__all__ = [
    "reduce_window_max_p", "reduce_window_min_p", "reduce_window_sum_p",
    "select_and_gather_add", "select_and_gather_add_p", "select_and_scatter_add",
    "select_and_scatter_add_p",
]
