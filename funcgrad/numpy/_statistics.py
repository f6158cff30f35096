"""Statistics of funcgrad.numpy: the NaN-ignoring reductions (``nansum``, ``nanmean``,
``nanargmax``...), ``quantile``/``percentile``/``median`` (and their nan forms, by
sorting), cumulative products and ``cumulative_sum``, ``cov`` and ``corrcoef``.

Everything is written with funcgrad.numpy's differentiable operations (``where`` masks NaNs
out, ``sort`` and ``take_along_axis`` select order statistics), so grad, jit and vmap apply.

>>> import funcgrad.numpy as fnp
>>> float(fnp.nanmean(fnp.array([1.0, fnp.nan, 3.0])))
2.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy._core import (
    asarray,
    canonical_axes,
    canonical_axis,
    cast,
    check_arraylike,
    is_array,
    promote_inexact,
    requested_dtype,
)
from funcgrad.numpy._creation import full_like
from funcgrad.numpy._indexing import take_along_axis
from funcgrad.numpy._linalg import diagonal
from funcgrad.numpy._reductions import (
    _accumulate_dtype,
    _given_mean,
    _int_var,
    _prepare,
    _var_dtype,
    _work_dtype,
    argmax,
    argmin,
    argsort,
    cumsum,
    prod,
    sort,
)
from funcgrad.numpy._reductions import (
    any as _any,
)
from funcgrad.numpy._reductions import (
    max as _max,
)
from funcgrad.numpy._reductions import (
    min as _min,
)
from funcgrad.numpy._reductions import (
    sum as _sum,
)
from funcgrad.numpy._shape import concatenate, expand_dims, reshape, squeeze
from funcgrad.numpy._ufuncs import (
    add,
    ceil,
    clip,
    conj,
    divide,
    equal,
    floor,
    isnan,
    less,
    less_equal,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    real,
    sqrt,
    subtract,
    true_divide,
)
from funcgrad.numpy._ufuncs import (
    where as _where,
)
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S


def _flat_if_none(a: Any, axis: Any) -> tuple[Any, int]:
    a = _prepare(a)
    if axis is None:
        return reshape(a, (-1,)), 0
    return a, canonical_axis(axis, get_aval(a).ndim)


def _scan(a: Any, axis: int, combine: Any, identity: Any) -> Any:
    """Inclusive scan along ``axis`` by doubling (Hillis-Steele): log2(n) combine steps of
    shifted copies, each a differentiable funcgrad operation."""
    shape = get_aval(a).shape
    n = shape[axis]
    shift = 1
    while shift < n:
        pad_shape = list(shape)
        pad_shape[axis] = shift
        fill = S.broadcast_in_dim(cast(identity, get_aval(a).dtype), tuple(pad_shape), ())
        lo = [0] * len(shape)
        hi = list(shape)
        hi[axis] = n - shift
        shifted = concatenate([fill, S.slice_(a, lo, hi)], axis=axis)
        a = combine(a, shifted)
        shift *= 2
    return a


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product along ``axis`` (of the flattened array when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cumprod(fnp.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 2.0, 6.0]
    """
    check_arraylike("cumprod", a)
    a, ax = _flat_if_none(a, axis)
    dt = get_aval(a).dtype
    # As JAX's cumulative reductions: booleans count in the default integer, other
    # integers keep their width (unlike prod).
    target = requested_dtype(dtype, "cumprod") if dtype is not None else (
        dtypes.default_int() if dt == dtypes.bool_ else dt)
    a = cast(a, target)
    if target == dtypes.bool_:
        return _scan(a, ax, E.and_p.bind, True)
    # lax.cumprod, as JAX: XLA's order of the products, and their rounding.
    from funcgrad.scans import cumprod as lax_cumprod  # noqa: PLC0415

    return lax_cumprod(a, ax)


def _cumulative(fn: Any, x: Any, axis: Any, dtype: Any, include_initial: bool,
                identity: int) -> Any:
    x = _prepare(x)
    nd = get_aval(x).ndim
    if nd == 0:
        raise ShapeError("cumulative_sum/cumulative_prod need an array of rank >= 1")
    if axis is None:
        if nd > 1:
            raise ValueError("The array API spec requires an axis argument for arrays of "
                             f"rank > 1, got shape {get_aval(x).shape}")
        axis = 0
    ax = canonical_axis(axis, nd)
    # JAX promotes small integers in cumulative_sum but not in cumulative_prod.
    promote = identity == 0
    out = fn(x, axis=ax, dtype=_accumulate_dtype(get_aval(x).dtype, dtype) if promote else dtype)
    if include_initial:
        shape = list(get_aval(out).shape)
        shape[ax] = 1
        init = S.broadcast_in_dim(cast(identity, get_aval(out).dtype), tuple(shape), ())
        out = concatenate([init, out], axis=ax)
    return out


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """The array API's cumulative sum (``include_initial`` prepends the 0).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cumulative_sum(fnp.array([1, 2, 3]), include_initial=True).tolist()
    [0, 1, 3, 6]
    """
    check_arraylike("cumulative_sum", x)
    from funcgrad.numpy._reductions import cumsum  # noqa: PLC0415

    return _cumulative(cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """The array API's cumulative product (``include_initial`` prepends the 1).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cumulative_prod(fnp.array([2, 3])).tolist()
    [2, 6]
    """
    check_arraylike("cumulative_prod", x)
    return _cumulative(cumprod, x, axis, dtype, include_initial, 1)


# ------------------------------------------------------------ NaN-ignoring reductions


def _nan_to(a: Any, fill: Any) -> Any:
    a = _prepare(a)
    if not dtypes.is_inexact(get_aval(a).dtype):
        return a
    return _where(isnan(a), fill, a)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Sum treating NaN as 0.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nansum(fnp.array([1.0, fnp.nan, 2.0])))
    3.0
    """
    check_arraylike("nansum", a)
    return _sum(_nan_to(a, 0), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                where=where)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    """Product treating NaN as 1.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanprod(fnp.array([2.0, fnp.nan, 3.0])))
    6.0
    """
    check_arraylike("nanprod", a)
    return prod(_nan_to(a, 1), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                where=where)


def _nan_extreme(fn: Any, fill: float, a: Any, axis: Any, keepdims: bool, initial: Any,
                 where_: Any) -> Any:
    a = _prepare(a)
    if not dtypes.is_inexact(get_aval(a).dtype):
        return fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where_)
    nan = isnan(a)
    out = fn(_where(nan, fill, a), axis=axis, keepdims=keepdims, initial=initial,
             where=where_)
    all_nan = logical_not(_any(logical_not(nan), axis=axis, keepdims=keepdims))
    return _where(all_nan, np.nan, out) if initial is None else out


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Maximum ignoring NaNs (NaN where a slice is all NaN).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanmax(fnp.array([1.0, fnp.nan, 3.0])))
    3.0
    """
    check_arraylike("nanmax", a)
    return _nan_extreme(_max, -np.inf, a, axis, keepdims, initial, where)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """Minimum ignoring NaNs (NaN where a slice is all NaN).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanmin(fnp.array([1.0, fnp.nan, 3.0])))
    1.0
    """
    check_arraylike("nanmin", a)
    return _nan_extreme(_min, np.inf, a, axis, keepdims, initial, where)


def _nan_arg(fn: Any, fill: float, a: Any, axis: Any, keepdims: Any) -> Any:
    a = _prepare(a)
    if not dtypes.is_inexact(get_aval(a).dtype):
        return fn(a, axis=axis, keepdims=keepdims)
    nan = isnan(a)
    res = fn(_where(nan, fill, a), axis=axis, keepdims=keepdims)
    all_nan = logical_not(_any(logical_not(nan), axis=axis, keepdims=bool(keepdims)))
    return _where(all_nan, -1, res)


def nanargmax(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Any:
    """Index of the maximum ignoring NaNs (-1 where a slice is all NaN).

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.nanargmax(fnp.array([1.0, fnp.nan, 3.0])))
    2
    """
    check_arraylike("nanargmax", a)
    return _nan_arg(argmax, -np.inf, a, axis, keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Any:
    """Index of the minimum ignoring NaNs (-1 where a slice is all NaN).

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.nanargmin(fnp.array([4.0, fnp.nan, 3.0])))
    2
    """
    check_arraylike("nanargmin", a)
    return _nan_arg(argmin, np.inf, a, axis, keepdims)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaN as 0.

    >>> import funcgrad.numpy as fnp
    >>> fnp.nancumsum(fnp.array([1.0, fnp.nan, 2.0])).tolist()
    [1.0, 1.0, 3.0]
    """
    check_arraylike("nancumsum", a)
    from funcgrad.numpy._reductions import cumsum  # noqa: PLC0415

    return cumsum(_nan_to(a, 0), axis=axis, dtype=dtype)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaN as 1.

    >>> import funcgrad.numpy as fnp
    >>> fnp.nancumprod(fnp.array([2.0, fnp.nan, 3.0])).tolist()
    [2.0, 2.0, 6.0]
    """
    check_arraylike("nancumprod", a)
    return cumprod(_nan_to(a, 1), axis=axis, dtype=dtype)


def _nan_count(a: Any, axis: Any, keepdims: bool, where_: Any, dt: Any) -> Any:
    valid = logical_not(isnan(a)) if dtypes.is_inexact(get_aval(a).dtype) else \
        equal(a, a)
    return _sum(valid, axis=axis, dtype=dt, keepdims=keepdims, where=where_)


def _mean_dtype(a: Any, dtype: Any, name: str = "nanmean") -> Any:
    if dtype is not None:
        # A scalar type (np.float64) has a ``dtype`` attribute too: requested_dtype reads
        # every form, canonical for the x64 mode.
        return requested_dtype(dtype, name)
    dt = get_aval(a).dtype
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, where: Any = None) -> Any:
    """Mean of the non-NaN entries (NaN where a slice has none).

    >>> import funcgrad.numpy as fnp
    >>> fnp.nanmean(fnp.array([[1.0, fnp.nan], [2.0, 4.0]]), axis=1).tolist()
    [1.0, 3.0]
    """
    check_arraylike("nanmean", a)
    a = _prepare(a)
    dt = _mean_dtype(a, dtype)
    if not dtypes.is_inexact(get_aval(a).dtype):
        from funcgrad.numpy._reductions import mean  # noqa: PLC0415

        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    a = cast(a, dt)
    count = _nan_count(a, axis, keepdims, where, dt)
    return divide(nansum(a, axis=axis, keepdims=keepdims, where=where), count)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """Variance of the non-NaN entries (divisor: their count minus ``ddof``).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanvar(fnp.array([1.0, fnp.nan, 3.0])))
    1.0
    """
    check_arraylike("nanvar", a)
    a = _prepare(a)
    (a,) = promote_inexact(a)
    out_dt = _var_dtype(get_aval(a).dtype, dtype, "nanvar")
    if not dtypes.is_inexact(out_dt):
        return _int_var(a, canonical_axes(axis, get_aval(a).ndim), out_dt, ddof, keepdims,
                        where, mean, "nanvar")
    # JAX computes 16-bit floats in float32, and returns the asked dtype (a complex one
    # holds the real variance).
    a = cast(a, _work_dtype(out_dt))
    # NaN entries center to 0 (not NaN) so that they carry no derivative, as in JAX.
    a_mean = nanmean(a, axis=axis, keepdims=True, where=where) if mean is None else \
        _given_mean(a, mean, _work_dtype(out_dt), "nanvar")
    centered = _where(isnan(a), 0, subtract(a, a_mean))
    if get_aval(a).dtype.kind == "c":
        sq = real(multiply(centered, conj(centered)))
    else:
        sq = multiply(centered, centered)
    count = _nan_count(a, axis, keepdims, where, get_aval(sq).dtype)
    # A plain sum, as JAX's: inf - mean(inf) is NaN and must reach the result.
    total = _sum(sq, axis=axis, keepdims=keepdims, where=where)
    denom = subtract(count, cast(ddof, get_aval(count).dtype))
    # The divisor is 1 where the result is NaN anyway, so that no 0/0 reaches the gradient.
    empty = less_equal(denom, 0)
    res = divide(_where(empty, np.nan, total), _where(empty, 1, denom))
    return res if dtype is None and not dtypes.is_float(out_dt) else cast(res, out_dt)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None, mean: Any = None) -> Any:
    """Standard deviation of the non-NaN entries.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanstd(fnp.array([1.0, fnp.nan, 3.0])))
    1.0
    """
    check_arraylike("nanstd", a)
    res = nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                 mean=mean)
    res_dt = get_aval(res).dtype
    if not dtypes.is_inexact(res_dt):  # JAX's lax.sqrt of an integer nanvar
        raise TypeError(f"sqrt does not accept dtype {res_dt}. Accepted dtypes are subtypes "
                        "of floating, complexfloating.")
    return sqrt(res)


# ------------------------------------------------------------------------ quantiles

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, squash_nans: bool,
              name: str, weights: Any = None, percent: bool = False) -> Any:
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if weights is not None:
        weights = asarray(weights)
        if get_aval(weights).dtype.kind == "c":
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      "'inverted_cdf' supports weights.")
        a, weights = promote_inexact(a, weights)
        a_shape = get_aval(asarray(a)).shape
        w_shape = get_aval(weights).shape
        if w_shape != a_shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            w_axes = tuple(canonical_axis(ax, len(a_shape)) for ax in
                           (axis if isinstance(axis, tuple) else (axis,)))
            if w_shape != tuple(a_shape[ax] for ax in w_axes):
                raise ValueError(f"Weights shape {w_shape} must match reduction axes "
                                 f"{tuple(a_shape[ax] for ax in w_axes)}")
            weights = S.broadcast_in_dim(weights, a_shape, w_axes)
    else:
        (a,) = promote_inexact(a)
    if dtypes.python_scalar(a):
        a = cast(a, get_aval(a).dtype)
    # q keeps its own dtype, as in JAX: the positions and the linear interpolation are
    # computed in it (a float64 q of float32 data in x64 mode), the result cast back.
    q = asarray(q)
    if get_aval(a).dtype.kind == "c":
        raise ValueError(f"{name} does not support complex input")
    q_nd = get_aval(q).ndim
    if q_nd > 1:
        raise ValueError(f"{name}: q must be a scalar or 1-d, got shape {get_aval(q).shape}")
    qdt = get_aval(q).dtype
    if not dtypes.is_float(qdt):
        raise TypeError(f"floor does not accept dtype {qdt}. Accepted dtypes are subtypes "
                        "of floating.")
    c01 = np.asarray(1, qdt) / np.asarray(100, qdt)
    if percent:
        # JAX's jitted q / 100 is q * 0.01 (XLA's reciprocal of the constant), and XLA
        # moves that 0.01 onto the n - 1 of the positions below: q * (0.01 * (n - 1)).
        q_percent, q = q, multiply(q, cast(c01, qdt))
    if method == "inverted_cdf" and qdt != get_aval(a).dtype:
        # JAX multiplies q by the total weight (of a's dtype) without promotion.
        raise TypeError(f"lax.mul requires arguments to have the same dtypes, got {qdt}, "
                        f"{get_aval(a).dtype}. (Tip: jnp.multiply is a similar function "
                        "that does automatic type promotion on inputs).")
    nd = get_aval(a).ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = canonical_axes(axis, nd)
    keep_shape = [1 if i in axes else s for i, s in enumerate(get_aval(a).shape)]
    if nd == 0:
        keep_shape = [1]  # JAX ravels a 0-d input: keepdims gives shape (1,), not NumPy's ()
    # Gather the reduced axes into one trailing axis.
    rest = [i for i in range(nd) if i not in axes]
    a = S.transpose(a, (*rest, *axes)) if nd else a
    rest_shape = tuple(get_aval(a).shape[:len(rest)])
    n = math.prod(get_aval(a).shape[len(rest):])
    a = reshape(a, (*rest_shape, n))
    if n == 0:
        # JAX's error: its gather of one entry from an empty axis (nanquantile of a 1-d
        # slice indexes it instead).
        jax_axis = 0 if axis is None else (len(rest) if isinstance(axis, tuple) else axes[0])
        if squash_nans and not rest:
            raise IndexError(f"index is out of bounds for axis {jax_axis} with size 0")
        raise TypeError(f"Slice size at index {jax_axis} in gather op is out of range, must "
                        "be within [0, 0 + 1), got 1.")
    if weights is not None:
        weights = reshape(S.transpose(weights, (*rest, *axes)) if nd else weights,
                          (*rest_shape, n))
        order = argsort(a, axis=-1)  # NaNs sort last; each weight goes with its value
        a = take_along_axis(a, order, axis=-1)
        weights = take_along_axis(weights, order, axis=-1)
    else:
        a = sort(a, axis=-1)  # NaNs sort last
    nan_any = _any(isnan(a), axis=-1, keepdims=True)
    qv = reshape(q, (-1,)) if q_nd else reshape(q, (1,))
    nq = get_aval(qv).shape[0]
    a_dt = get_aval(a).dtype
    dt = qdt
    if squash_nans:
        count = cast(_sum(logical_not(isnan(a)), axis=-1, keepdims=True), dt)
    else:
        count = cast(n, dt)
    # q on a new leading axis of the output: positions of shape (nq, *rest, 1).
    qb = reshape(qv, (nq, *([1] * (len(rest_shape) + 1))))
    last = subtract(count, cast(1, dt))
    if percent:
        pos = multiply(reshape(q_percent, get_aval(qb).shape), multiply(cast(c01, dt), last))
    else:
        pos = multiply(qb, last)
    low = floor(pos)
    high = ceil(pos)
    # The weights come from the unclipped position and only the indices are clipped, as
    # JAX's (a q past [0, 1] interpolates a value with itself); max(0, min(i, count - 1))
    # makes a slice of NaNs only read its first entry.
    high_weight = subtract(pos, low)
    low_weight = subtract(cast(1, dt), high_weight)
    low = maximum(cast(0, dt), minimum(low, last))
    high = maximum(cast(0, dt), minimum(high, last))
    big = (nq, *rest_shape, 1)
    low_i = clip(cast(low, dtypes.default_int()), 0, n - 1)
    high_i = clip(cast(high, dtypes.default_int()), 0, n - 1)
    ab = S.broadcast_in_dim(a, (nq, *rest_shape, n), tuple(range(1, len(rest_shape) + 2)))
    lo_v = take_along_axis(ab, S.broadcast_in_dim(low_i, big, tuple(range(len(big)))) if
                           get_aval(low_i).shape != big else low_i, axis=-1)
    hi_v = take_along_axis(ab, S.broadcast_in_dim(high_i, big, tuple(range(len(big)))) if
                           get_aval(high_i).shape != big else high_i, axis=-1)
    if method == "inverted_cdf":
        res = _inverted_cdf(a, ab, qb, weights, squash_nans)
    elif method == "linear":
        res = add(multiply(cast(lo_v, dt), low_weight), multiply(cast(hi_v, dt), high_weight))
    elif method == "lower":
        res = lo_v
    elif method == "higher":
        res = hi_v
    elif method == "nearest":
        res = _where(less_equal(high_weight, 0.5), lo_v, hi_v)
    else:
        res = multiply(add(lo_v, hi_v), 0.5)
    if not squash_nans and method != "inverted_cdf":
        res = _where(nan_any, np.nan, res)
    res = squeeze(res, axis=-1)
    if keepdims:
        res = reshape(res, (nq, *keep_shape))
    if not q_nd:
        res = squeeze(res, axis=0)
    return cast(res, a_dt)


def _inverted_cdf(a: Any, ab: Any, qb: Any, weights: Any, squash_nans: bool) -> Any:
    """JAX's inverted_cdf on sorted slices ``a`` (``ab``: broadcast over the nq quantiles on
    a leading axis, ``qb``: the quantiles): the first value whose cumulative weight reaches
    q times the total, NaN where a weight is negative or NaN, or the slice has a NaN
    (``quantile``) or only NaNs (``nanquantile``)."""
    dt = get_aval(a).dtype
    n = get_aval(a).shape[-1]
    w = full_like(a, 1.0) if weights is None else weights
    bad = logical_or(less(w, 0), isnan(w))
    nan_data = isnan(a)
    cum = cumsum(_where(logical_or(bad, nan_data), cast(0, dt), w), axis=-1)
    target = multiply(qb, cum[..., -1:])
    idx = _sum(cast(less(cum, target), dtypes.default_int()), axis=-1, keepdims=True)
    if squash_nans:
        valid = _sum(logical_not(nan_data), axis=-1, keepdims=True)
    else:
        valid = full_like(cum[..., -1:], n, dtype=dtypes.default_int())
    idx = maximum(0, minimum(idx, subtract(cast(valid, dtypes.default_int()), 1)))
    res = take_along_axis(ab, idx, axis=-1)
    force = _any(bad, axis=-1, keepdims=True)
    force = logical_or(force, equal(valid, 0) if squash_nans else
                       _any(nan_data, axis=-1, keepdims=True))
    return _where(force, np.nan, res)


def _quantile_args(name: str, out: Any, overwrite_input: bool, interpolation: Any,
                   method: str, weights: Any = None) -> str:
    if weights is not None and not (is_array(weights) or np.isscalar(weights) or
                                    isinstance(weights, (np.ndarray, np.generic))):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(weights)} "
                        "at position 0.")
    if out is not None:
        raise ValueError(f"{name}: the 'out' argument is not supported")
    if interpolation is not None:
        raise TypeError(f"{name}: 'interpolation' was removed; use method={interpolation!r}")
    return method


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
             *, weights: Any = None, interpolation: Any = None) -> Any:
    """The ``q``-th quantiles (q in [0, 1]) along ``axis``; NaN if a slice has a NaN.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.quantile(fnp.array([1.0, 2.0, 3.0, 4.0]), 0.5))
    2.5
    """
    check_arraylike("quantile", a, q)
    method = _quantile_args("quantile", out, overwrite_input, interpolation, method, weights)
    return _quantile(a, q, axis, method, keepdims, False, "quantile", weights)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: Any = None,
                interpolation: Any = None) -> Any:
    """Like :func:`quantile`, ignoring NaNs.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanquantile(fnp.array([1.0, fnp.nan, 3.0]), 0.5))
    2.0
    """
    check_arraylike("nanquantile", a, q)
    method = _quantile_args("nanquantile", out, overwrite_input, interpolation, method,
                            weights)
    return _quantile(a, q, axis, method, keepdims, True, "nanquantile", weights)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Any:
    """The ``q``-th percentiles (q in [0, 100]) along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.percentile(fnp.array([1.0, 2.0, 3.0]), 50))
    2.0
    """
    check_arraylike("percentile", a, q)
    method = _quantile_args("percentile", out, overwrite_input, interpolation, method,
                            weights)
    (q,) = promote_inexact(q)
    return _quantile(a, q, axis, method, keepdims, False, "percentile", weights, True)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """Like :func:`percentile`, ignoring NaNs.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanpercentile(fnp.array([1.0, fnp.nan, 3.0]), 50))
    2.0
    """
    check_arraylike("nanpercentile", a, q)
    method = _quantile_args("nanpercentile", out, overwrite_input, interpolation, method,
                            weights)
    (q,) = promote_inexact(q)
    return _quantile(a, q, axis, method, keepdims, True, "nanpercentile", weights, True)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The median along ``axis`` (the mean of the two middle values for even lengths).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.median(fnp.array([3.0, 1.0, 2.0, 10.0])))
    2.5
    """
    check_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """The median ignoring NaNs.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nanmedian(fnp.array([3.0, fnp.nan, 1.0])))
    2.0
    """
    check_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


# ---------------------------------------------------------------- cov and corrcoef


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None) -> Any:
    """Covariance matrix of the variables in the rows (``rowvar``) of ``m`` (and ``y``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cov(fnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    check_arraylike("cov", m, y)
    if y is not None:
        m, y = promote_inexact(m, y)
        if get_aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_inexact(m)
    if get_aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = reshape(m, (1, -1)) if get_aval(m).ndim < 2 else m
    if not rowvar and get_aval(m).ndim != 1:  # JAX's test (a 1-row m is transposed too)
        x = S.transpose(x, (1, 0))
    if get_aval(x).shape[0] == 0:
        return asarray(np.empty((0, 0), get_aval(x).dtype))
    if y is not None:
        yy = reshape(y, (1, -1)) if get_aval(y).ndim < 2 else y
        if not rowvar and get_aval(yy).shape[0] != 1:
            yy = S.transpose(yy, (1, 0))
        x = concatenate([x, yy], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    dt = get_aval(x).dtype
    w: Any = None
    if fweights is not None:
        fw = asarray(fweights)
        if get_aval(fw).ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        w = cast(fw, dt if dt.kind != "c" else np.dtype(np.finfo(dt).dtype))
    if aweights is not None:
        aw = asarray(aweights)
        if get_aval(aw).ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        aw = cast(aw, dt if dt.kind != "c" else np.dtype(np.finfo(dt).dtype))
        w = aw if w is None else multiply(w, aw)
    nobs = get_aval(x).shape[1]
    if w is None:
        avg = _sum(x, axis=1, keepdims=True)
        avg = divide(avg, nobs)
        w_sum: Any = cast(nobs, dt)
        fact: Any = subtract(w_sum, cast(ddof, dt))
    else:
        w_sum = _sum(w)
        avg = divide(_sum(multiply(x, w), axis=1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = subtract(w_sum, cast(ddof, get_aval(w_sum).dtype))
        else:
            fact = subtract(w_sum, divide(multiply(ddof, _sum(multiply(w, aweights))), w_sum))
    xc = subtract(x, avg)
    xw = xc if w is None else multiply(xc, w)
    from funcgrad.numpy._linalg import dot  # noqa: PLC0415

    c = dot(xw, conj(S.transpose(xc, (1, 0))))
    return squeeze(true_divide(c, fact)) if get_aval(c).shape == (1, 1) else \
        true_divide(c, fact)


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients (``cov`` normalized by the standard deviations).

    >>> import funcgrad.numpy as fnp
    >>> fnp.corrcoef(fnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar)
    if get_aval(c).ndim == 0:
        return divide(c, c)
    d = diagonal(c)
    stddev = sqrt(real(d))
    c = divide(divide(c, expand_dims(stddev, 1)), expand_dims(stddev, 0))
    if get_aval(c).dtype.kind == "c":
        from funcgrad.numpy._ufuncs import imag  # noqa: PLC0415

        re = clip(real(c), -1, 1)
        im = clip(imag(c), -1, 1)
        return add(cast(re, get_aval(c).dtype), multiply(cast(im, get_aval(c).dtype), 1j))
    return clip(c, -1, 1)


__all__ = [
    "corrcoef", "cov", "cumprod", "cumulative_prod", "cumulative_sum", "median",
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian",
    "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
    "percentile", "quantile",
]
