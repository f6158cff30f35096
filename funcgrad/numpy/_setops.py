"""Set operations, searches and selections with data-dependent sizes: ``unique`` (and the
array API's ``unique_*``), ``intersect1d``/``setdiff1d``/``setxor1d``/``union1d``, ``isin``,
``nonzero``/``argwhere``/``flatnonzero``, ``extract``/``compress``, ``lexsort``,
``partition``/``argpartition``, ``sort_complex`` and ``trim_zeros``.

As in JAX, a result whose length depends on the values needs those values: eagerly (and
under grad) they are read on the host; under jit or vmap pass ``size=`` (and optionally
``fill_value=``), otherwise a ConcretizationTypeError says so.

>>> import funcgrad.numpy as fnp
>>> fnp.unique(fnp.array([3, 1, 3, 2])).tolist()
[1, 2, 3]
>>> fnp.nonzero(fnp.array([0, 5, 0, 7]), size=3)[0].tolist()
[1, 3, 0]
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import ConcretizationTypeError, ShapeError
from funcgrad.numpy._core import (
    asarray,
    canonical_axis,
    cast,
    check_arraylike,
    check_arraylike_seq,
    promote_args,
    typed,
)
from funcgrad.numpy._creation import arange, full, zeros
from funcgrad.numpy._indexing import take, take_along_axis
from funcgrad.numpy._reductions import any as _any
from funcgrad.numpy._reductions import argsort, cumsum, sort
from funcgrad.numpy._reductions import sum as _sum
from funcgrad.numpy._shape import (
    concatenate,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    stack,
    swapaxes,
)
from funcgrad.numpy._ufuncs import (
    equal,
    floor_divide,
    greater_equal,
    imag,
    isnan,
    less,
    logical_and,
    logical_not,
    negative,
    not_equal,
    real,
    remainder,
    subtract,
    where,
)
from funcgrad.primitives.sorting import top_k


def host_value(x: Any, name: str) -> np.ndarray:
    """The NumPy value of ``x`` when it is known (eagerly, or under grad/jvp), else the
    error JAX gives for a data-dependent shape."""
    if isinstance(x, Tracer):
        val = x.concrete_value()
        if val is None and name == "nonzero":
            # JAX asks for the count of nonzero elements (an int32[] tracer).
            count = _sum(not_equal(x, 0), dtype=_index_dtype())
            raise count._abstract_error(
                ConcretizationTypeError, "The size argument of jnp.nonzero must be statically "
                "specified to use jnp.nonzero within JAX transformations.")
        if val is None and name in _JAX_CONTEXTS:
            raise x._abstract_error(ConcretizationTypeError, _JAX_CONTEXTS[name])
        if val is None:
            raise ConcretizationTypeError(
                f"{name}: the size of the result depends on the values of a traced array "
                f"{x.aval.str_short()}, which are not known under {x._trace.describe()}. "
                f"Pass a static size=... (and optionally fill_value=...) to {name}.")
        return np.asarray(val if type(val) is not ArrayImpl else np.asarray(val))
    return np.asarray(x)


# What JAX's ConcretizationTypeError says for the traced argument of these functions.
_JAX_CONTEXTS = {
    "unique": "The error arose for the first argument of jnp.unique(). To make jnp.unique() "
              "compatible with JIT and other transforms, you can specify a concrete value for "
              "the size argument, which will determine the output size.",
    "bincount (use length=)": "The error occurred because of argument 'x' of jnp.bincount. "
                              "To avoid this error, pass a static `length` argument.",
    "union1d": "The error arose in union1d()",
    "setdiff1d": "The error arose in setdiff1d()",
}


def _index_dtype() -> np.dtype[Any]:
    return dtypes.default_int()


def _compact(values: Any, mask: Any, size: int, fill: Any) -> Any:
    """The first ``size`` entries of 1-d ``values`` where ``mask`` holds, padded with
    ``fill``: a stable argsort of ``~mask`` brings the selected entries to the front."""
    n = get_aval(values).shape[0]
    order = argsort(logical_not(mask), stable=True)
    if size <= n:
        order = order[:size]
    else:
        order = concatenate([order, zeros(size - n, get_aval(order).dtype)])
    count = _sum(mask)
    picked = take(values, order, mode="clip") if n else full((size,), 0,
                                                            get_aval(values).dtype)
    valid = less(arange(size), count)
    if fill is None:
        return picked, valid
    return where(valid, picked, cast(asarray(fill), get_aval(picked).dtype)), valid


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the nonzero entries, one array per axis; ``size=`` fixes their length
    (padding with ``fill_value``, default 0) so that it works under jit.

    >>> import funcgrad.numpy as fnp
    >>> [i.tolist() for i in fnp.nonzero(fnp.array([[0, 1], [2, 0]]))]
    [[0, 1], [1, 0]]
    """
    check_arraylike("nonzero", a)
    a = asarray(a)
    shape = get_aval(a).shape
    if len(shape) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    it = _index_dtype()
    if size is None:
        host = host_value(a, "nonzero")
        return tuple(asarray(i.astype(it)) for i in np.nonzero(host))
    mask = not_equal(ravel(a), 0) if get_aval(a).dtype.kind != "b" else ravel(a)
    flat, valid = _compact(arange(get_aval(mask).shape[0], dtype=it), mask, size, None)
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
    if len(fills) != len(shape):
        raise ValueError(f"fill_value must be a scalar or a tuple of length {len(shape)}")
    out = []
    for k, (d, f) in enumerate(zip(shape, fills)):
        stride = int(np.prod(shape[k + 1:]))
        # (An empty array has no nonzero entry: every index is the fill value.)
        coord = remainder(floor_divide(flat, stride), d) if d and stride else flat
        out.append(where(valid, coord, cast(asarray(0 if f is None else f), it)))
    return tuple(out)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero entries of the flattened array.

    >>> import funcgrad.numpy as fnp
    >>> fnp.flatnonzero(fnp.array([[0, 1], [2, 0]])).tolist()
    [1, 2]
    """
    check_arraylike("ravel", a)  # the name JAX's message gives
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero entries as rows of a ``(count, ndim)`` array.

    >>> import funcgrad.numpy as fnp
    >>> fnp.argwhere(fnp.array([[0, 1], [2, 0]])).tolist()
    [[0, 1], [1, 0]]
    """
    check_arraylike("argwhere", a)
    a = asarray(a)
    if get_aval(a).ndim == 0:
        return argwhere(reshape(a, (1,)), size=size, fill_value=fill_value)[:, :0]
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: Any = None) -> Any:
    """The slices of ``a`` along ``axis`` where the 1-d ``condition`` is true.

    >>> import funcgrad.numpy as fnp
    >>> fnp.compress(fnp.array([True, False, True]), fnp.arange(3.0)).tolist()
    [0.0, 2.0]
    """
    check_arraylike("compress", condition, a)
    cond = asarray(condition)
    if get_aval(cond).ndim != 1:
        raise ValueError("condition must be a 1D array")
    a = asarray(a)
    if axis is None:
        a, ax = ravel(a), 0
    else:
        ax = canonical_axis(axis, get_aval(a).ndim)
    a = moveaxis(a, ax, 0)
    n = get_aval(a).shape[0]
    m = get_aval(cond).shape[0]
    if m > n:
        extra = host_value(cond, "compress")[n:] if size is None else None
        if extra is not None and extra.any():
            raise ShapeError(f"compress: condition has a true entry past the length {n} "
                             "of the axis")
        cond = cond[:n]
    elif m < n:
        a = a[:m]
    if size is None:
        idx = np.nonzero(host_value(cond, "compress"))[0]
        res = take(a, asarray(idx.astype(_index_dtype())), axis=0)
    else:
        mask = not_equal(cond, 0) if get_aval(cond).dtype.kind != "b" else cond
        pos, valid = _compact(arange(get_aval(mask).shape[0], dtype=_index_dtype()), mask,
                              size, None)
        res = take(a, pos, axis=0, mode="clip")
        vshape = (size,) + (1,) * (get_aval(res).ndim - 1)
        res = where(reshape(valid, vshape), res, cast(asarray(fill_value),
                                                      get_aval(res).dtype))
    return moveaxis(res, 0, ax)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The entries of ``arr`` where ``condition`` is nonzero, flattened.

    >>> import funcgrad.numpy as fnp
    >>> fnp.extract(fnp.array([1, 0, 1]), fnp.array([4.0, 5.0, 6.0])).tolist()
    [4.0, 6.0]
    """
    check_arraylike("extreact", condition, arr)  # sic: JAX's message
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


# ------------------------------------------------------------------------- unique


def _neq_adjacent(aux: Any, equal_nan: bool) -> Any:
    """True at the first entry of each run of equal values of sorted 1-d ``aux``."""
    prev, cur = aux[:-1], aux[1:]
    diff = not_equal(cur, prev)
    if equal_nan and dtypes.is_inexact(get_aval(aux).dtype):
        diff = logical_and(diff, logical_not(logical_and(isnan(cur), isnan(prev))))
    return concatenate([asarray(np.ones(1, bool)), diff])


class _UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class _UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class _UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _unique_host(ar: Any, axis: int | None, equal_nan: bool) -> tuple[Any, ...]:
    host = host_value(ar, "unique")
    _, index, inverse, counts = np.unique(host, return_index=True, return_inverse=True,
                                          return_counts=True, axis=axis,
                                          equal_nan=equal_nan)
    it = _index_dtype()
    if axis is None:
        values = take(ravel(ar), asarray(index.astype(it)))
    else:
        values = take(ar, asarray(index.astype(it)), axis=axis)
    return (values, asarray(index.astype(it)), asarray(inverse.astype(it).reshape(-1)),
            asarray(counts.astype(it)))


def _unique_sized(ar: Any, equal_nan: bool, size: int, fill_value: Any) -> tuple[Any, ...]:
    flat = ravel(ar)
    n = get_aval(flat).shape[0]
    it = _index_dtype()
    perm = cast(argsort(flat, stable=True), it)
    aux = take(flat, perm)
    if n == 0:
        # Nothing to pad from: JAX fills with fill_value (which it then requires), and the
        # index, inverse and counts stay empty.
        if size and fill_value is None:
            raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                             "fill_value must be specified")
        dt = get_aval(flat).dtype
        values = full((size,), cast(asarray(fill_value), dt), dt) if size else flat
        return values, perm, zeros(0, it), zeros(0, it)
    first = _neq_adjacent(aux, equal_nan)
    if fill_value is None:
        fill_value = aux[0]
    values, valid = _compact(aux, first, size, fill_value)
    index, _ = _compact(perm, first, size, 0)
    index = where(valid, index, perm[0])
    group = subtract(cumsum(cast(first, it)), 1)
    inverse = zeros(n, it).at[perm].set(group)
    # One start more than kept: when size cuts the values short, the last kept group ends
    # where the next (dropped) one starts, not at the end of the array.
    starts, _ = _compact(arange(n, dtype=it), first, size + 1, None)
    n_unique = _sum(cast(first, it))
    ends = where(greater_equal(arange(size, dtype=it), subtract(n_unique, 1)), n, starts[1:])
    counts = where(valid, subtract(ends, starts[:size]), cast(asarray(0), it))
    return values, index, inverse, counts


def _unique_sized_axis(ar: Any, ax: int, equal_nan: bool, size: int,
                       fill_value: Any) -> tuple[Any, ...]:
    """Unique slices along ``ax`` with a static count, as JAX's ``_unique``: the slices
    sorted lexicographically (first element first), the first of each run kept, padded
    with the smallest slice (or ``fill_value``); counts end at the next kept slice."""
    aux0 = moveaxis(ar, ax, 0)
    shp = get_aval(aux0).shape
    n, m = shp[0], math.prod(shp[1:])
    if n == 0 or m == 0:
        raise ValueError("unique: size= with axis= needs slices with elements")
    it = _index_dtype()
    rows = reshape(aux0, (n, m))
    perm = lexsort([rows[:, j] for j in reversed(range(m))])
    aux = take(aux0, perm, axis=0)
    srt = take(rows, perm, axis=0)
    neq = not_equal(srt[1:], srt[:-1])
    if equal_nan and dtypes.is_inexact(get_aval(srt).dtype):
        neq = logical_and(neq, logical_not(logical_and(isnan(srt[1:]), isnan(srt[:-1]))))
    first = concatenate([asarray(np.ones(1, bool)), _any(neq, axis=1)])
    ind, valid = _compact(arange(n, dtype=it), first, size, 0)
    values = take(aux, ind, axis=0)
    if fill_value is not None:
        keep = reshape(valid, (size,) + (1,) * (len(shp) - 1))
        values = where(keep, values, cast(asarray(fill_value), get_aval(values).dtype))
    inverse = zeros(n, it).at[perm].set(subtract(cumsum(cast(first, it)), 1))
    ends, _ = _compact(arange(n, dtype=it), first, size + 1, 0)
    ends = where(not_equal(ends[1:], 0), ends[1:], n)
    counts = subtract(ends, concatenate([asarray(np.zeros(1, it)), ends[:-1]]))
    return moveaxis(values, 0, ax), take(perm, ind), inverse, counts


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:  # noqa: A002
    """Sorted unique values (with first indices, inverse and counts on request); ``size=``
    makes it work under jit, padding with ``fill_value`` (default: the smallest value).

    >>> import funcgrad.numpy as fnp
    >>> v, c = fnp.unique(fnp.array([2, 1, 2]), return_counts=True)
    >>> v.tolist(), c.tolist()
    ([1, 2], [1, 2])
    """
    check_arraylike("unique", ar)
    ar = asarray(ar)
    if size is None:
        ax = None if axis is None else canonical_axis(axis, get_aval(ar).ndim)
        values, index, inverse, counts = _unique_host(ar, ax, equal_nan)
    else:
        size = operator.index(size)
        if axis is None:
            values, index, inverse, counts = _unique_sized(ar, equal_nan, size, fill_value)
        else:
            ax = canonical_axis(axis, get_aval(ar).ndim)
            values, index, inverse, counts = _unique_sized_axis(ar, ax, equal_nan, size,
                                                                fill_value)
    if axis is None and get_aval(ar).ndim and return_inverse:
        inverse = reshape(inverse, get_aval(ar).shape)
    extra = [x for flag, x in ((return_index, index), (return_inverse, inverse),
                               (return_counts, counts)) if flag]
    return (values, *extra) if extra else values


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The array API's sorted unique values.

    >>> import funcgrad.numpy as fnp
    >>> fnp.unique_values(fnp.array([2, 1, 2])).tolist()
    [1, 2]
    """
    check_arraylike("unique_values", x)
    # The array API's functions keep each NaN apart (equal_nan=False), as JAX's do.
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """``(values, counts)`` of the unique values.

    >>> import funcgrad.numpy as fnp
    >>> fnp.unique_counts(fnp.array([2, 1, 2])).counts.tolist()
    [1, 2]
    """
    check_arraylike("unique_counts", x)
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                 fill_value=fill_value))


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """``(values, inverse_indices)``: ``values[inverse_indices]`` rebuilds ``x``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.unique_inverse(fnp.array([2, 1, 2])).inverse_indices.tolist()
    [1, 0, 1]
    """
    check_arraylike("unique_inverse", x)
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                  fill_value=fill_value))


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """``(values, indices, inverse_indices, counts)`` of the unique values.

    >>> import funcgrad.numpy as fnp
    >>> fnp.unique_all(fnp.array([2, 1, 2])).indices.tolist()
    [1, 0]
    """
    check_arraylike("unique_all", x)
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                              return_counts=True, equal_nan=False, size=size,
                              fill_value=fill_value))


# ---------------------------------------------------------------- set operations


def isin(element: Any, test_elements: Any, assume_unique: bool = False,
         invert: bool = False, *, method: str = "auto") -> Any:
    """True where ``element`` occurs in ``test_elements`` (compared all against all).

    >>> import funcgrad.numpy as fnp
    >>> fnp.isin(fnp.array([1, 2, 3]), fnp.array([3, 1])).tolist()
    [True, False, True]
    """
    check_arraylike("isin", element, test_elements)
    element, test = promote_args(element, test_elements)
    test = ravel(test)
    hit = _any(equal(expand_dims(element, -1), test), axis=-1)
    return logical_not(hit) if invert else hit


def _set_result(values: np.ndarray, dt: np.dtype[Any], size: int | None,
                fill_value: Any, weak: bool = False) -> Any:
    if size is not None:
        fill = (values.min() if values.size else 0) if fill_value is None else fill_value
        values = np.concatenate([values[:size],
                                 np.full(max(size - values.size, 0), fill, dt)])
    out = asarray(values.astype(dt))
    return cast(out, dt, True) if weak else out


def _sized_set(vals: Any, mask: Any, size: int, fill_value: Any) -> Any:
    if fill_value is None:
        # JAX pads with the smallest value of the result, or 0 when the result is empty.
        big = where(mask, vals, vals.max() if get_aval(vals).dtype.kind != "b" else vals)
        fill_value = where(_any(mask), big.min(), zeros((), get_aval(vals).dtype))
    return _compact(vals, mask, size, fill_value)[0]


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, Tracer) and x.concrete_value() is None for x in xs)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Sorted unique values in either array.

    >>> import funcgrad.numpy as fnp
    >>> fnp.union1d(fnp.array([3, 1]), fnp.array([2, 1])).tolist()
    [1, 2, 3]
    """
    check_arraylike("union1d", ar1, ar2)
    ar1, ar2 = promote_args(ar1, ar2)
    if size is None:
        for a in (ar1, ar2):
            if isinstance(a, Tracer):
                host_value(a, "union1d")  # (JAX's error names union1d and the argument)
    return unique(concatenate([ravel(ar1), ravel(ar2)]), size=size, fill_value=fill_value)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """Sorted unique values of ``ar1`` that are not in ``ar2``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.setdiff1d(fnp.array([3, 1, 2]), fnp.array([2])).tolist()
    [1, 3]
    """
    check_arraylike("setdiff1d", ar1, ar2)
    # As JAX: the result keeps ar1's dtype (ar2 only masks it; the comparison promotes).
    (ar1,) = promote_args(ar1)
    ar1 = cast(ar1, *typed(ar1))
    ar2 = asarray(ar2)
    dt, weak = typed(ar1)
    # Unlike the other set operations, JAX pads setdiff1d's result with 0 by default.
    fill_value = 0 if fill_value is None else fill_value
    if not _traced(ar1, ar2):
        res = np.setdiff1d(host_value(ar1, "setdiff1d"), host_value(ar2, "setdiff1d"),
                           assume_unique)
        return _set_result(res, dt, size, fill_value, weak)
    if size is None:
        host_value(ar1 if isinstance(ar1, Tracer) else ar2, "setdiff1d")
    flat = ravel(ar1)
    aux = sort(flat)
    mask = logical_and(_neq_adjacent(aux, True), logical_not(isin(aux, ar2)))
    return _sized_set(aux, mask, int(size), fill_value)  # type: ignore[arg-type]


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False, *, size: int | None = None,
                fill_value: Any = None) -> Any:
    """Sorted unique values in both arrays (with their first indices on request).

    >>> import funcgrad.numpy as fnp
    >>> fnp.intersect1d(fnp.array([3, 1, 2]), fnp.array([2, 3, 5])).tolist()
    [2, 3]
    """
    check_arraylike("intersect1d", ar1, ar2)
    ar1, ar2 = promote_args(ar1, ar2)
    dt = get_aval(ar1).dtype
    if not _traced(ar1, ar2):
        res = np.intersect1d(host_value(ar1, "intersect1d"), host_value(ar2, "intersect1d"),
                             assume_unique, return_indices=True)
        vals = _set_result(res[0], dt, size, fill_value,
                           get_aval(ar1).weak_type and size is None)
        if not return_indices:
            return vals
        it = _index_dtype()
        i1, i2 = (_set_result(r, it, size, 0) for r in res[1:])
        return vals, i1, i2
    if size is None or return_indices:
        host_value(ar1 if isinstance(ar1, Tracer) else ar2, "intersect1d")
    aux = sort(ravel(ar1))
    mask = logical_and(_neq_adjacent(aux, True), isin(aux, ar2))
    return _sized_set(aux, mask, int(size), fill_value)  # type: ignore[arg-type]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """Sorted unique values in exactly one of the arrays.

    >>> import funcgrad.numpy as fnp
    >>> fnp.setxor1d(fnp.array([1, 2, 3]), fnp.array([2, 4])).tolist()
    [1, 3, 4]
    """
    check_arraylike("setxor1d", ar1, ar2)
    ar1, ar2 = promote_args(ar1, ar2)
    dt = get_aval(ar1).dtype
    if not _traced(ar1, ar2):
        res = np.setxor1d(host_value(ar1, "setxor1d"), host_value(ar2, "setxor1d"),
                          assume_unique)
        # (JAX's sized result is strong: its padding is a strong constant.)
        return _set_result(res, dt, size, fill_value, get_aval(ar1).weak_type and size is None)
    if size is None:
        host_value(ar1 if isinstance(ar1, Tracer) else ar2, "setxor1d")
    a1, a2 = ravel(ar1), ravel(ar2)
    u1 = logical_and(logical_not(isin(a1, a2)), True)
    u2 = logical_not(isin(a2, a1))
    vals = concatenate([a1, a2])
    order = argsort(vals, stable=True)
    aux = take(vals, order)
    keep = take(concatenate([u1, u2]), order)
    mask = logical_and(_neq_adjacent(aux, True), keep)
    return _sized_set(aux, mask, int(size), fill_value)  # type: ignore[arg-type]


# ------------------------------------------------------------------- sorting extras


def lexsort(keys: Any, axis: int = -1) -> Any:
    """Indices that sort by the last key, then the one before it, and so on (stable).

    >>> import funcgrad.numpy as fnp
    >>> fnp.lexsort([fnp.array([2, 1, 2]), fnp.array([1, 1, 0])]).tolist()
    [2, 1, 0]
    """
    check_arraylike_seq("lexsort", keys)
    key_list = [asarray(k) for k in keys] if not hasattr(keys, "shape") else \
        [asarray(keys)[i] for i in range(get_aval(asarray(keys)).shape[0])]
    if not key_list:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {get_aval(k).shape for k in key_list}
    if len(shapes) > 1:
        raise ValueError("all keys need to be the same shape")
    nd = get_aval(key_list[0]).ndim
    if nd == 0:
        return asarray(np.asarray(0, _index_dtype()))
    ax = canonical_axis(axis, nd)
    perm = None
    for k in key_list:
        kk = k if perm is None else take_along_axis(k, perm, axis=ax)
        step = argsort(kk, axis=ax, stable=True)
        perm = step if perm is None else take_along_axis(perm, step, axis=ax)
    return cast(perm, _index_dtype())


def sort_complex(a: Any) -> Any:
    """Sort along the last axis, real part first, and return a complex array.

    >>> import funcgrad.numpy as fnp
    >>> fnp.sort_complex(fnp.array([3.0, 1.0])).tolist()
    [(1+0j), (3+0j)]
    """
    check_arraylike("sort_complex", a)
    a = asarray(a)
    dt = get_aval(a).dtype
    if dt.kind == "c":
        # The sort primitive is real: order by (real, imag) through a lexsort.
        a = take_along_axis(a, lexsort((imag(a), real(a)), axis=-1), axis=-1)
    else:
        a = sort(a, axis=-1)
    if dt.kind != "c":
        # JAX's to_complex_dtype, whatever the x64 mode: 64-bit integers and float64 give
        # complex128, everything narrower complex64.
        wide = dt == dtypes.float64 or (dt.kind in "iu" and dt.itemsize == 8)
        dt = dtypes.complex128 if wide else dtypes.complex64
    return cast(a, dt)


def _partition_operand(a: Any, kth: int, axis: int, name: str
                       ) -> tuple[Any, Any, int, int, int]:
    """``a`` with ``axis`` moved last, its dtype, the axis, its length and ``kth`` (checked)."""
    arr = asarray(a)
    dt = get_aval(arr).dtype
    if dt.kind == "c":
        raise TypeError(f"{name} for complex dtype is not supported")
    ax = canonical_axis(axis, get_aval(arr).ndim)
    n = get_aval(arr).shape[ax]
    k = canonical_axis(kth, n, "kth")
    return swapaxes(arr, ax, -1), dt, ax, n, k


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """The array with its ``kth`` smallest value at index ``kth`` along ``axis``, smaller
    ones before it and larger ones after (JAX's order within each side).

    >>> import funcgrad.numpy as fnp
    >>> fnp.partition(fnp.array([3.0, 1.0, 2.0, 0.0]), 1)[:2].tolist()
    [0.0, 1.0]
    """
    check_arraylike("partition", a)
    arr, dt, ax, n, k = _partition_operand(a, kth, axis, "partition")
    if dt.kind == "u":
        bottom = subtract(negative(top_k(negative(arr + 1), k + 1)[0]), 1)
    elif dtypes.is_float(dt):
        from funcgrad.numpy._indexing import take_along_axis  # noqa: PLC0415

        bottom = take_along_axis(arr, top_k(_negated_nan_last(arr), k + 1)[1], -1)
    else:
        bottom = negative(top_k(negative(arr), k + 1)[0])
    top = top_k(arr, n - k - 1)[0]
    return swapaxes(concatenate([bottom, top], axis=-1), -1, ax)


def _negated_nan_last(arr: Any) -> Any:
    """``-arr`` for choosing the smallest values with top_k, NaN least likely to be chosen
    (XLA's total order puts NaN above everything: it belongs to the upper side)."""
    from funcgrad.numpy._ufuncs import isnan  # noqa: PLC0415

    return where(isnan(arr), -np.inf, negative(arr))


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """Indices that :func:`partition` ``a`` (JAX's order within each side).

    >>> import funcgrad.numpy as fnp
    >>> fnp.argpartition(fnp.array([3.0, 1.0, 2.0, 0.0]), 1)[:2].tolist()
    [3, 1]
    """
    check_arraylike("partition", a)  # the name JAX's message gives
    arr, dt, ax, n, k = _partition_operand(a, kth, axis, "argpartition")
    bottom_ind = top_k(negative(arr + 1) if dt.kind == "u" else _negated_nan_last(arr)
                       if dtypes.is_float(dt) else negative(arr), k + 1)[1]
    # The rest in index order: the indices not in bottom_ind, found through a 0/1 proxy.
    hit = _any(equal(expand_dims(bottom_ind, -1), arange(n, dtype=get_aval(bottom_ind).dtype)),
               axis=-2)
    proxy = where(hit, 0.0, 1.0)
    top_ind = top_k(proxy, n - k - 1)[1]
    out = concatenate([bottom_ind, cast(top_ind, get_aval(bottom_ind).dtype)], axis=-1)
    return swapaxes(out, -1, ax)


def trim_zeros(filt: Any, trim: str = "fb") -> Any:
    """``filt`` (1-d) without its leading ('f') and/or trailing ('b') zeros.

    >>> import funcgrad.numpy as fnp
    >>> fnp.trim_zeros(fnp.array([0, 1, 2, 0])).tolist()
    [1, 2]
    """
    check_arraylike("trim_zeros", filt)
    filt = asarray(filt)
    if get_aval(filt).ndim != 1:
        raise ValueError("trim_zeros requires a 1-d array")
    nz = np.nonzero(host_value(filt, "trim_zeros"))[0]
    if nz.size == 0:
        return filt[:0]
    start = int(nz[0]) if "f" in trim.lower() else 0
    stop = int(nz[-1]) + 1 if "b" in trim.lower() else get_aval(filt).shape[0]
    return filt[start:stop]


__all__ = [
    "argpartition", "argwhere", "compress", "extract", "flatnonzero", "intersect1d", "isin",
    "lexsort", "nonzero", "partition", "setdiff1d", "setxor1d", "sort_complex", "trim_zeros",
    "union1d", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
]
