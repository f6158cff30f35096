"""The summary statistics of ``jax.scipy.stats``: :func:`mode`, :func:`rankdata` and
:func:`sem`, written to trace under ``jit`` and ``vmap`` (fixed output sizes, no
data-dependent shapes).

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy import stats
>>> stats.rankdata(jnp.array([10, 30, 20])).tolist()
[1.0, 3.0, 2.0]
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.scipy.stats._args import check_arraylike, promote_args_inexact
from funcgrad.transforms.vmap import vmap


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _check_nan_policy(nan_policy: str, name: str) -> None:
    if nan_policy not in ["propagate", "omit", "raise"]:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    # JAX's own answers: skipping NaNs needs data-dependent sizes, and raising needs the
    # values on the host, neither of which a traced function has.
    if nan_policy == "omit":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains "
            f"nans. Please check if nans exist in `x` outside of the `{name}` function.")


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most common value along ``axis`` (the smallest on a tie) and how often it occurs.

    >>> m = mode(jnp.array([1, 3, 3, 2, 1, 3]))
    >>> int(m.mode), int(m.count)
    (3, 3)
    """
    check_arraylike("mode", a)
    x = jnp.atleast_1d(a)
    _check_nan_policy(nan_policy, "mode")
    if axis is not None:
        axis = _canonical_axis(axis, x.ndim)
    shape = x.shape
    if axis is None:
        out_shape = tuple(1 for _ in shape) if keepdims else ()
        x = x.ravel()
        axis = 0
    elif keepdims:
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(shape))
    else:
        out_shape = tuple(s for i, s in enumerate(shape) if i != axis)

    def one(v: Any) -> tuple[Any, Any]:
        if v.size == 0:
            return (jnp.array(np.nan, dtype=dtypes.default_float()),
                    jnp.array(0, dtype=dtypes.default_float()))
        vals, counts = jnp.unique(v, return_counts=True, size=v.size)
        return vals[jnp.argmax(counts)], counts.max()

    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    vals, counts = vmap(one, in_axes=1)(x)
    return ModeResult(vals.reshape(out_shape), counts.reshape(out_shape))


def _invert_permutation(i: Any) -> Any:
    return jnp.empty_like(i).at[i].set(jnp.arange(i.size, dtype=i.dtype))


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks from 1, ties resolved by ``method`` ("average", "min", "max", "dense" or
    "ordinal"); all NaN if any value is NaN.

    >>> rankdata(jnp.array([2.0, 1.0, 2.0]), "min").tolist()
    [2.0, 1.0, 2.0]
    """
    check_arraylike("rankdata", a)
    _check_nan_policy(nan_policy, "rankdata")
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return jnp.apply_along_axis(rankdata, axis, a, method)
    a = jnp.ravel(a)
    out_dtype = dtypes.default_float()

    def ranks(a: Any) -> Any:
        arr, sorter = lax.sort_key_val(a, jnp.arange(a.size))
        inv = _invert_permutation(sorter)
        if method == "ordinal":
            return (inv + 1).astype(out_dtype)
        starts = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
        dense = starts.cumsum()[inv]
        if method == "dense":
            return dense.astype(out_dtype)
        # count[j]: how many values sort before the j-th group of ties (the last entry,
        # the fill, is the total).
        count = jnp.nonzero(starts, size=arr.size + 1, fill_value=starts.size)[0]
        count = count.astype(out_dtype)
        if method == "max":
            return count[dense]
        if method == "min":
            return count[dense - 1] + 1
        return 0.5 * (count[dense] + count[dense - 1] + 1)

    return lax.cond(jnp.any(jnp.isnan(a)), lambda a: jnp.full_like(a, jnp.nan, out_dtype),
                    ranks, a)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean along ``axis``.

    >>> float(sem(jnp.array([1.0, 2.0, 3.0, 4.0, 5.0])))
    0.7071067690849304
    """
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        return (jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
                / jnp.sqrt(count).astype(b.dtype))
    raise ValueError(f"{nan_policy} is not supported")


__all__ = ["ModeResult", "mode", "rankdata", "sem"]
