"""The ufuncs of ``jax.numpy`` (``add``, ``multiply``, ``maximum``, ``logical_and``, ...):
the element-wise functions as :class:`ufunc` objects, whose ``reduce``, ``accumulate`` and
``at`` are the dedicated reductions (``jnp.add.reduce`` is ``sum``, ``jnp.add.at`` is
``.at[].add``) where JAX has them, and a loop over the function elsewhere.

>>> import funcgrad.numpy as fnp
>>> fnp.add.outer(fnp.arange(2), fnp.arange(3)).tolist()
[[0, 1, 2], [1, 2, 3]]
>>> fnp.add.at(fnp.zeros(3), fnp.array([0, 0]), 1.0, inplace=False).tolist()
[2.0, 0.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.numpy import _ufuncs as U
from funcgrad.numpy._core import canonical_axes, to_inexact_dtype
from funcgrad.numpy._vectorize import ufunc
from funcgrad.primitives.elementwise import stop_gradient

__all__ = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2",
           "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
           "negative", "subtract"]


def _bool_as_int_at(method: str) -> Callable[..., Any]:
    """``a.at[indices].<method>(b)``; booleans counted in int32 and cast back, as JAX."""
    def at(a: Any, indices: Any, b: Any) -> Any:
        arr = fnp.asarray(a)
        if get_aval(arr).dtype == np.bool_:
            ints = fnp.astype(arr, np.int32)
            vals = fnp.astype(fnp.astype(fnp.asarray(b), np.bool_), np.int32)
            return fnp.astype(getattr(ints.at[indices], method)(vals), np.bool_)
        return getattr(arr.at[indices], method)(b)
    return at


def _subtract_at(a: Any, indices: Any, b: Any) -> Any:
    return fnp.asarray(a).at[indices].subtract(b)


def _tree_reduce(op: Callable[[Any, Any], Any], identity: Any, cast_bool: bool
                 ) -> Callable[..., Any]:
    """A reduction by ``op`` (associative and commutative: and, or, xor) as a balanced
    tree of ``op`` over the reduced axes, the entries ``where`` masks out set to the
    identity; integers only (booleans for the logical ones, which cast first), as JAX."""
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        arr = fnp.asarray(a)
        if cast_bool:
            arr = fnp.astype(arr, np.bool_)
        elif get_aval(arr).dtype.kind not in "biu":
            raise ValueError(f"integer argument required; got dtype={get_aval(arr).dtype}")
        if dtype is not None:
            arr = fnp.astype(arr, dtype)
        dt = get_aval(arr).dtype
        if dt.kind not in "biu":
            raise TypeError(f"{op.__name__.removeprefix('logical_').removeprefix('bitwise_')} "
                            f"does not accept dtype {dt} at position 0. Accepted dtypes at "
                            "position 0 are subtypes of integer, bool.")
        ident = fnp.astype(fnp.asarray(np.array(identity).astype(dt)), dt)
        if where is not None:
            arr = fnp.where(where, arr, ident)
        nd = get_aval(arr).ndim
        axes = canonical_axes(axis, nd)
        kept = [i for i in range(nd) if i not in axes]
        shape = get_aval(arr).shape
        flat = fnp.reshape(fnp.transpose(arr, (*axes, *kept)),
                         (math.prod(shape[i] for i in axes), *(shape[i] for i in kept)))
        if get_aval(flat).shape[0] == 0:
            out = fnp.broadcast_to(ident, tuple(shape[i] for i in kept))
        while get_aval(flat).shape[0] > 1:
            n = get_aval(flat).shape[0]
            if n % 2:
                pad = fnp.broadcast_to(ident, (1, *get_aval(flat).shape[1:]))
                flat = fnp.concatenate([flat, pad])
            flat = op(flat[0::2], flat[1::2])
        if get_aval(flat).shape[0] == 1:
            out = flat[0]
        if initial is not None:
            out = op(out, fnp.astype(fnp.asarray(initial), dt))
        if keepdims:
            out = fnp.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))
        return out
    return reduce


def _logsumexp(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
    """``logaddexp.reduce``: log(sum(exp(a))) with the max shifted out (JAX ignores
    ``dtype`` here too)."""
    arr = fnp.asarray(a)
    if not dtypes.is_inexact(get_aval(arr).dtype):
        arr = fnp.astype(arr, to_inexact_dtype(get_aval(arr).dtype))
    nd = get_aval(arr).ndim
    axes = canonical_axes(axis, nd)
    amax = fnp.max(fnp.real(arr), axis=axes, keepdims=True, where=where, initial=-np.inf)
    amax = stop_gradient(fnp.where(fnp.isfinite(amax), amax, fnp.zeros_like(amax)))
    total = fnp.sum(fnp.exp(fnp.subtract(arr, fnp.astype(amax, get_aval(arr).dtype))), axis=axes,
                   keepdims=keepdims, where=where)
    shift = amax if keepdims else fnp.reshape(amax, get_aval(total).shape)
    out = fnp.add(fnp.log(total), fnp.astype(shift, get_aval(total).dtype))
    return out if initial is None else fnp.logaddexp(initial, out)


def _logsumexp2(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
                initial: Any = None, where: Any = None) -> Any:
    ln2 = float(np.log(2))
    return fnp.divide(_logsumexp(fnp.multiply(fnp.asarray(a), ln2), axis=axis, keepdims=keepdims,
                               where=where, initial=None if initial is None else
                               fnp.multiply(initial, ln2)), ln2)


def _reduction(fn: Callable[..., Any], takes_dtype: bool) -> Callable[..., Any]:
    """A ``jnp`` reduction as a ufunc's ``reduce`` (keywords as ``ufunc.reduce`` passes them)."""
    def reduce(a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        if takes_dtype:
            return fn(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                      where=where)
        out = fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        return out if dtype is None else fnp.astype(out, dtype)
    return reduce


def _cumulative(fn: Callable[..., Any]) -> Callable[..., Any]:
    def accumulate(a: Any, axis: int = 0, dtype: Any = None) -> Any:
        return fn(a, axis=axis, dtype=dtype)
    return accumulate


def _binary(func: Callable[..., Any], identity: Any, **fast: Any) -> ufunc:
    return ufunc(func, 2, 1, name=func.__name__, identity=identity, call=func, **fast)


add = _binary(U.add, 0, reduce=_reduction(fnp.sum, True), accumulate=_cumulative(fnp.cumsum),
              at=_bool_as_int_at("add"))
multiply = _binary(U.multiply, 1, reduce=_reduction(fnp.prod, True),
                   accumulate=_cumulative(fnp.cumprod), at=_bool_as_int_at("multiply"))
subtract = _binary(U.subtract, None, at=_subtract_at)
maximum = _binary(U.maximum, None, reduce=_reduction(fnp.max, False))
minimum = _binary(U.minimum, None, reduce=_reduction(fnp.min, False))
bitwise_and = _binary(U.bitwise_and, -1, reduce=_tree_reduce(U.bitwise_and, -1, False))
bitwise_or = _binary(U.bitwise_or, 0, reduce=_tree_reduce(U.bitwise_or, 0, False))
bitwise_xor = _binary(U.bitwise_xor, 0, reduce=_tree_reduce(U.bitwise_xor, 0, False))
logical_and = _binary(U.logical_and, True, reduce=_tree_reduce(U.logical_and, True, True))
logical_or = _binary(U.logical_or, False, reduce=_tree_reduce(U.logical_or, False, True))
logical_xor = _binary(U.logical_xor, False, reduce=_tree_reduce(U.logical_xor, False, True))
logaddexp = _binary(U.logaddexp, -np.inf, reduce=_logsumexp)
logaddexp2 = _binary(U.logaddexp2, -np.inf, reduce=_logsumexp2)
negative = ufunc(U.negative, 1, 1, name="negative", call=U.negative)
