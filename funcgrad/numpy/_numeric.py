"""Numerical helpers of funcgrad.numpy: ``searchsorted``, ``digitize``, ``bincount``,
``histogram`` (1-d, 2-d, n-d, and its bin edges), ``interp``, ``convolve``/``correlate``,
``gradient``, ``trapezoid``, ``unwrap`` and ``ediff1d``, with JAX's definitions written on
funcgrad.numpy's differentiable operations.

>>> import funcgrad.numpy as fnp
>>> fnp.searchsorted(fnp.array([1.0, 2.0, 3.0]), 2.5).tolist()
2
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.numpy._core import (
    asarray,
    canonical_axis,
    cast,
    check_arraylike,
    promote_args,
    promote_inexact,
)
from funcgrad.numpy._creation import full, linspace, zeros
from funcgrad.numpy._reductions import cumsum
from funcgrad.numpy._reductions import max as _max
from funcgrad.numpy._reductions import min as _min
from funcgrad.numpy._reductions import sum as _sum
from funcgrad.numpy._setops import host_value
from funcgrad.numpy._shape import concatenate, diff, expand_dims, flip, moveaxis, ravel, reshape
from funcgrad.numpy._ufuncs import (
    abs,
    add,
    clip,
    conj,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    isnan,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    multiply,
    remainder,
    subtract,
    where,
)
from funcgrad.primitives.convolution import conv_general_dilated


def _ndim(x: Any) -> int:
    return get_aval(asarray(x)).ndim


def _lt_nan_last(x: Any, y: Any) -> Any:
    """``x < y`` in the total order that puts NaN after every number (NumPy's sort)."""
    if not dtypes.is_inexact(get_aval(x).dtype):
        return less(x, y)
    return logical_or(less(x, y), logical_and(logical_not(isnan(x)), isnan(y)))


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Indices where ``v`` would be inserted into sorted 1-d ``a`` to keep it sorted.

    >>> import funcgrad.numpy as fnp
    >>> fnp.searchsorted(fnp.array([1, 2, 2, 3]), fnp.array([2, 4]), side="right").tolist()
    [3, 4]
    """
    check_arraylike("searchsorted", a, v)
    a, v = promote_args(a, v)
    if get_aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        from funcgrad.numpy._indexing import take  # noqa: PLC0415

        a = take(a, sorter)
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"invalid argument {method=}, expected one of {list(_SEARCH_METHODS)}")
    if method.startswith("scan"):
        return _searchsorted_bisect(a, v, side)
    # "sort" and "compare_all" give the count of elements before each value (also when
    # ``a`` is not sorted).
    ae = a if get_aval(v).ndim == 0 else reshape(a, (*([1] * get_aval(v).ndim), -1))
    ve = expand_dims(v, -1)
    # Counting is exact and batchable; it reads len(a) * size(v) comparisons.
    before = _lt_nan_last(ae, ve) if side == "left" else logical_not(_lt_nan_last(ve, ae))
    return _sum(before, axis=-1, dtype=dtypes.int32)


_SEARCH_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")


def _searchsorted_bisect(a: Any, v: Any, side: str) -> Any:
    """JAX's ``method="scan"``: ceil(log2(n + 1)) halvings of [0, n] (a probe at ``n``
    reads the last element), in the sort's order (NaN last), so an unsorted ``a`` gives
    JAX's numbers."""
    n = get_aval(a).shape[0]
    if n == 0:
        return zeros(get_aval(v).shape, dtypes.int32)
    low = zeros(get_aval(v).shape, dtypes.int32)
    high = full(get_aval(v).shape, n, dtypes.int32)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = add(low, floor_divide(subtract(high, low), 2))
        probe = a[mid]
        go_left = logical_not(_lt_nan_last(probe, v)) if side == "left" else \
            _lt_nan_last(v, probe)
        low, high = where(go_left, low, mid), where(go_left, mid, high)
    return high


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """Index of the bin of each ``x`` (bins increasing or decreasing).

    >>> import funcgrad.numpy as fnp
    >>> fnp.digitize(fnp.array([0.5, 1.5, 3.0]), fnp.array([1.0, 2.0])).tolist()
    [0, 1, 2]
    """
    check_arraylike("digitize", x, bins)
    x, bins = promote_args(x, bins)
    if get_aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {bins}")
    n = get_aval(bins).shape[0]
    if n == 0:
        return zeros(get_aval(x).shape, dtypes.int32)
    side = "right" if not right else "left"
    inc = searchsorted(bins, x, side=side)
    dec = subtract(n, searchsorted(flip(bins), x, side=side))
    return where(greater_equal(bins[-1], bins[0]), inc, cast(dec, dtypes.int32))


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """Counts (or summed ``weights``) of each non-negative integer in ``x``; ``length=``
    fixes the output size for use under jit.

    >>> import funcgrad.numpy as fnp
    >>> fnp.bincount(fnp.array([0, 2, 2])).tolist()
    [1, 0, 2]
    """
    check_arraylike("bincount", x)
    x = asarray(x)
    if get_aval(x).dtype.kind not in "iub":
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if get_aval(x).ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    if length is None:
        host = host_value(x, "bincount (use length=)")
        length = max(int(minlength), int(host.max()) + 1 if host.size else 0)
    else:
        length = max(int(minlength), int(length))
    if weights is None:
        w: Any = asarray(np.ones((), dtypes.default_int()))
        w_dt = dtypes.default_int()
        w = cast(w, w_dt)
        from funcgrad.numpy._shape import broadcast_to  # noqa: PLC0415

        w = broadcast_to(w, get_aval(x).shape)
    else:
        (w,) = promote_args(weights)
        w_dt = get_aval(w).dtype
    return zeros(length, w_dt).at[clip(x, 0)].add(w, mode="drop")


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                        weights: Any = None) -> Any:
    """The edges ``histogram`` uses: ``bins + 1`` evenly spaced values over ``range``
    (default: the data's min and max), or ``bins`` itself when it is an array.

    >>> import funcgrad.numpy as fnp
    >>> fnp.histogram_bin_edges(fnp.array([0.0, 1.0]), bins=2).tolist()
    [0.0, 0.5, 1.0]
    """
    check_arraylike("histogram_bin_edges", a, bins)
    (a,) = promote_inexact(a)
    if not isinstance(bins, int) and _ndim(bins) == 1:
        # Given edges take the data's inexact dtype, as JAX's (not their own: int64 edges
        # of float32 data stay float32 in x64 mode).
        return cast(asarray(bins), get_aval(a).dtype)
    dt = get_aval(a).dtype
    if range is None:
        first, last = _min(a), _max(a)
    else:
        first, last = cast(asarray(range[0]), dt), cast(asarray(range[1]), dt)
    same = equal(first, last)
    first = where(same, subtract(first, 0.5), first)
    last = where(same, add(last, 0.5), last)
    # JAX's linspace (start * (1 - t) + stop * t): its rounding decides which bin a value
    # next to an edge falls in.
    return linspace(first, last, int(bins) + 1, dtype=dt)


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,  # noqa: A002
              density: bool | None = None) -> tuple[Any, Any]:
    """``(counts, bin_edges)`` of the values of ``a`` (the last bin includes its right
    edge); ``density`` normalizes to a probability density.

    >>> import funcgrad.numpy as fnp
    >>> fnp.histogram(fnp.array([0.0, 0.2, 1.0]), bins=2)[0].tolist()
    [2.0, 1.0]
    """
    check_arraylike("histogram", a, bins)
    # As JAX: weights promote together with the data (uint32 data with int32 weights
    # count in the default float, not float32).
    if weights is None:
        (a,) = promote_inexact(ravel(a))
    else:
        a, weights = promote_inexact(ravel(a), ravel(weights))
    edges = histogram_bin_edges(a, bins, range, weights)
    nedges = get_aval(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = where(equal(a, edges[-1]), nedges - 1, idx)
    w = weights if weights is not None else multiply(a, 0) + 1
    counts = zeros(nedges + 1, get_aval(w).dtype).at[idx].add(w)[1:-1]
    if density:
        widths = diff(edges)
        counts = divide(divide(counts, widths), _sum(counts))
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Any, list[Any]]:
    """Histogram of ``(N, D)`` samples on a D-dimensional grid of bins.

    >>> import funcgrad.numpy as fnp
    >>> fnp.histogramdd(fnp.array([[0.0, 0.0], [1.0, 1.0]]), bins=2)[0].tolist()
    [[1, 0], [0, 1]]
    """
    check_arraylike("histogramdd", sample)
    # As JAX: weights promote together with the sample (and set the edges' dtype too).
    if weights is None:
        (sample,) = promote_inexact(sample)
    else:
        sample, weights = promote_inexact(sample, weights)
    if get_aval(sample).ndim != 2:
        raise ValueError("histogramdd: sample must be a 2-d array of shape (N, D)")
    n, d = get_aval(sample).shape
    bins_list = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(bins_list) != d:
        raise ValueError(f"histogramdd: bins must have one entry per dimension ({d})")
    ranges = range if range is not None else [None] * d
    edges = [histogram_bin_edges(sample[:, i], bins_list[i], ranges[i]) for i in
             np.arange(d)]
    flat: Any = zeros(n, dtypes.int32)
    nbins = []
    for i, e in enumerate(edges):
        ne = get_aval(e).shape[0]
        col = sample[:, i]
        idx = searchsorted(e, col, side="right")
        idx = where(equal(col, e[-1]), ne - 1, idx)
        flat = add(multiply(flat, ne + 1), idx)
        nbins.append(ne + 1)
    if weights is None:
        # Unweighted counts are integers, as JAX's bincount gives them.
        w = cast(add(multiply(sample[:, 0], 0), 1), dtypes.default_int())
    else:
        (w,) = promote_inexact(weights)
    total = int(np.prod(nbins))
    counts = zeros(total, get_aval(w).dtype).at[flat].add(w)
    counts = reshape(counts, tuple(nbins))
    counts = counts[tuple(slice(1, -1) for _ in nbins)]
    if density:
        # Normalized in the sample's dtype, as JAX (not integer counts' default float).
        counts = cast(counts, get_aval(sample).dtype)
        counts = divide(counts, _sum(counts))
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = -1
            counts = divide(counts, reshape(diff(e), tuple(shape)))
    return counts, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
                weights: Any = None, density: bool | None = None) -> tuple[Any, Any, Any]:
    """Histogram of the points ``(x, y)``: ``(counts, xedges, yedges)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.histogram2d(fnp.array([0.0, 1.0]), fnp.array([0.0, 1.0]), bins=2)[0].tolist()
    [[1, 0], [0, 1]]
    """
    check_arraylike("histogram2d", x, y)
    from funcgrad.numpy._shape import stack  # noqa: PLC0415

    # Stacked with their common (not yet inexact) dtype: histogramdd promotes it together
    # with the weights, as JAX's does.
    x, y = promote_args(x, y)
    if not isinstance(bins, int) and _ndim(bins) == 1 and len(bins) != 2:
        bins = [asarray(bins)] * 2  # one array of edges for both (JAX takes a list here)
    counts, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return counts, edges[0], edges[1]


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise linear interpolation of the points ``(xp, fp)`` at ``x``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.interp(fnp.array([0.5, 3.0]), fnp.array([0.0, 1.0]), fnp.array([0.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    check_arraylike("interp", x, xp, fp)
    x, xp = promote_inexact(x, xp)
    (fp,) = promote_inexact(fp)
    if get_aval(xp).ndim != 1 or get_aval(fp).ndim != 1:
        raise ValueError("xp and fp must be one-dimensional")
    if get_aval(xp).shape[0] != get_aval(fp).shape[0]:
        raise ValueError("xp and fp must have the same length")
    if get_aval(xp).shape[0] == 0:
        raise ValueError("xp and fp must be non-empty")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right are not used with period")
        period = abs(asarray(period))
        x = remainder(x, period)
        xp = remainder(xp, period)
        from funcgrad.numpy._reductions import argsort  # noqa: PLC0415

        order = argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = concatenate([subtract(xp[-1:], period), xp, add(xp[:1], period)])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    n = get_aval(xp).shape[0]
    i = clip(searchsorted(xp, x, side="right"), 1, n - 1)
    df = subtract(fp[i], fp[i - 1])
    dx = subtract(xp[i], xp[i - 1])
    delta = subtract(x, xp[i - 1])
    eps = float(np.spacing(np.finfo(get_aval(xp).dtype).eps))
    dx0 = less_equal(abs(dx), eps)
    f = where(dx0, fp[i - 1], add(fp[i - 1], multiply(divide(delta, where(dx0, 1, dx)), df)))
    if period is None:
        f = where(less(x, xp[0]), fp[0] if left is None else left, f)
        f = where(greater(x, xp[-1]), fp[-1] if right is None else right, f)
    return f


def _conv(x: Any, y: Any, mode: str, op: str) -> Any:
    if get_aval(asarray(x)).ndim != 1 or get_aval(asarray(y)).ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    x, y = promote_inexact(x, y)
    nx, ny = get_aval(x).shape[0], get_aval(y).shape[0]
    if nx == 0 or ny == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {(nx,)} and {(ny,)}.")
    reverse = False
    if op == "correlate":
        y = conj(y)
        if nx < ny:
            x, y = y, x
            reverse = True
    else:
        if nx < ny:
            x, y = y, x
        y = flip(y)
    m = get_aval(y).shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(m // 2, m - m // 2 - 1)]
    elif mode == "full":
        padding = [(m - 1, m - 1)]
    else:
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    out = conv_general_dilated(reshape(x, (1, 1, -1)), reshape(y, (1, 1, -1)), (1,), padding)
    out = reshape(out, (-1,))
    return flip(out) if reverse else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """Discrete linear convolution of two 1-d arrays.

    >>> import funcgrad.numpy as fnp
    >>> fnp.convolve(fnp.array([1.0, 2.0]), fnp.array([1.0, 1.0])).tolist()
    [1.0, 3.0, 2.0]
    """
    check_arraylike("convolve", a, v)
    return _conv(a, v, mode, "convolve")


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Cross-correlation of two 1-d arrays.

    >>> import funcgrad.numpy as fnp
    >>> fnp.correlate(fnp.array([1.0, 2.0, 3.0]), fnp.array([1.0, 1.0])).tolist()
    [3.0, 5.0]
    """
    check_arraylike("correlate", a, v)
    return _conv(a, v, mode, "correlate")


def _slice(a: Any, axis: int, start: int | None, stop: int | None) -> Any:
    idx = [slice(None)] * get_aval(a).ndim
    idx[axis] = slice(start, stop)
    return a[tuple(idx)]


def _gradient_along(a: Any, h: Any, axis: int) -> Any:
    upper = subtract(_slice(a, axis, 1, 2), _slice(a, axis, 0, 1))
    lower = subtract(_slice(a, axis, -1, None), _slice(a, axis, -2, -1))
    if _ndim(h) == 0:
        inner = divide(multiply(subtract(_slice(a, axis, 2, None), _slice(a, axis, None, -2)),
                                0.5), h)
        return concatenate([divide(upper, h), inner, divide(lower, h)], axis=axis)
    if _ndim(h) != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if get_aval(h).shape[0] != get_aval(a).shape[axis]:
        raise ValueError("Spacing arrays must have the same length as the dimension along "
                         "which the gradient is calculated.")
    shape = [1] * get_aval(a).ndim
    shape[axis] = -1
    h = reshape(h, tuple(shape))
    upper = divide(upper, subtract(_slice(h, axis, 1, 2), _slice(h, axis, 0, 1)))
    lower = divide(lower, subtract(_slice(h, axis, -1, None), _slice(h, axis, -2, -1)))
    dx1 = subtract(_slice(h, axis, 1, -1), _slice(h, axis, 0, -2))
    dx2 = subtract(_slice(h, axis, 2, None), _slice(h, axis, 1, -1))
    ca = divide(-dx2, multiply(dx1, add(dx1, dx2)))
    cb = divide(subtract(dx2, dx1), multiply(dx1, dx2))
    cc = divide(dx1, multiply(dx2, add(dx1, dx2)))
    inner = add(add(multiply(ca, _slice(a, axis, 0, -2)), multiply(cb, _slice(a, axis, 1, -1))),
                multiply(cc, _slice(a, axis, 2, None)))
    return concatenate([upper, inner, lower], axis=axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int | None = None) -> Any:
    """Central differences inside, one-sided at the edges, per axis (``varargs``: one
    spacing for all axes, or one scalar or coordinate array per axis).

    >>> import funcgrad.numpy as fnp
    >>> fnp.gradient(fnp.array([1.0, 2.0, 4.0])).tolist()
    [1.0, 1.5, 2.0]
    """
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    # The spacings join the promotion, as JAX's (a float32 spacing makes float16 data
    # float32; a Python number's keeps the data's dtype).
    a, *spacing = promote_inexact(f, *varargs)
    nd = get_aval(a).ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(canonical_axis(ax, nd) for ax in axis)
    else:
        axes = (canonical_axis(axis, nd),)
    if not axes:
        return []
    if min(get_aval(a).shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required.")
    if len(spacing) == 0:
        dx: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axes)
    elif len(spacing) == len(axes):
        dx = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for "
                        f"axis={axis}")
    out = [_gradient_along(a, h, ax) for ax, h in zip(axes, dx)]
    return out[0] if len(axes) == 1 else out


def _check_trapezoid_args(*xs: Any) -> None:
    from funcgrad.numpy._core import is_array  # noqa: PLC0415

    for pos, x in enumerate(xs):
        if not (is_array(x) or isinstance(x, (np.ndarray, np.generic))
                or dtypes.python_scalar(x)):
            raise TypeError(f"trapezoid requires ndarray or scalar arguments, got {type(x)} "
                            f"at position {pos}.")


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    or spaced by ``dx`` (JAX's formula, with its shortcut for a constant spacing).

    >>> import funcgrad.numpy as fnp
    >>> fnp.trapezoid(fnp.array([1, 2, 3, 2, 3, 2, 1]), fnp.array([0, 2, 5, 7, 10, 15, 20]))
    Array(43., dtype=float32)
    """
    if x is None:
        _check_trapezoid_args(y)
        (ya,) = promote_inexact(y)
        d = asarray(dx)
        if get_aval(d).ndim > 0:
            d = expand_dims(d, tuple(range(get_aval(ya).ndim - get_aval(d).ndim)))
            d = moveaxis(d, axis, -1)
    else:
        _check_trapezoid_args(y, x)
        ya, xa = promote_inexact(y, x)
        d = diff(xa) if get_aval(xa).ndim == 1 else moveaxis(diff(xa, axis=axis), axis, -1)
    ya = moveaxis(ya, axis, -1)
    dshape = get_aval(d).shape
    if len(dshape) == 0 or dshape[-1] == 1:
        step = d if len(dshape) == 0 else d[..., 0]
        return step * (_sum(ya, -1) - 0.5 * (ya[..., 0] + ya[..., -1]))
    return 0.5 * _sum(d * (ya[..., 1:] + ya[..., :-1]), -1)


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """``p`` with jumps larger than ``discont`` replaced by their ``period`` complement.

    >>> import funcgrad.numpy as fnp
    >>> [round(v, 3) for v in fnp.unwrap(fnp.array([0.0, 6.0])).tolist()]
    [0.0, -0.283]
    """
    check_arraylike("unwrap", p)
    (p,) = promote_inexact(p)
    if get_aval(p).dtype.kind == "c":
        raise ValueError("unwrap does not support complex inputs.")
    ax = canonical_axis(axis, get_aval(p).ndim)
    if get_aval(p).shape[ax] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period / 2
    dd = diff(p, axis=ax)
    ddmod = subtract(remainder(add(dd, interval), period), interval)
    ddmod = where(logical_and(equal(ddmod, -interval), greater(dd, 0)), interval, ddmod)
    correct = where(less(abs(dd), discont), 0, subtract(ddmod, dd))
    return concatenate([_slice(p, ax, 0, 1),
                        add(_slice(p, ax, 1, None), cumsum(correct, axis=ax))], axis=ax)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive entries of the flattened array, with optional ends.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ediff1d(fnp.array([1, 4, 9]), to_begin=0).tolist()
    [0, 3, 5]
    """
    def arraylike(x: Any) -> Any:
        # JAX checks each argument on its own (a list is always "at position 0").
        check_arraylike("ediff1d", x)
        return asarray(x)

    arr = ravel(arraylike(ary))
    out = subtract(arr[1:], arr[:-1])
    dt = get_aval(out).dtype
    parts = [out]
    if to_begin is not None:
        parts.insert(0, cast(ravel(arraylike(to_begin)), dt))
    if to_end is not None:
        parts.append(cast(ravel(arraylike(to_end)), dt))
    return concatenate(parts) if len(parts) > 1 else out


__all__ = [
    "bincount", "convolve", "correlate", "digitize", "ediff1d", "gradient", "histogram",
    "histogram2d", "histogram_bin_edges", "histogramdd", "interp", "searchsorted",
    "trapezoid", "unwrap",
]
