"""Integer and boolean samplers, and sampling from arrays: randint, bernoulli,
rademacher, categorical, choice, permutation.

>>> from funcgrad import random
>>> random.randint(random.PRNGKey(0), (4,), 0, 10)
Array([9, 0, 2, 3], dtype=int32)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.conversion import requested_dtype
from funcgrad.core import get_aval
from funcgrad.random._continuous import (
    check_shape,
    float_dtype,
    gumbel_data,
    param_shape,
    shape_tuple,
    uniform_data,
)
from funcgrad.random._keys import check_key, random_bits, split_data


def _clip_to(val: Any, dt: np.dtype[Any]) -> Any:
    """``val`` (integers) in ``dt``, clipped to its range instead of wrapping."""
    src = val.dtype
    lo = max(np.iinfo(dt).min, np.iinfo(src).min)
    hi = min(np.iinfo(dt).max, np.iinfo(src).max)
    return jnp.clip(val, np.array(lo, src), np.array(hi, src)).astype(dt)


def _randint_data(data: Any, shape: tuple[int, ...], minval: Any, maxval: Any,
                  dt: np.dtype[Any]) -> Any:
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = minval.astype(dtypes.default_int())
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(dtypes.default_int())
    top = _clip_to(jnp.asarray(np.array(np.iinfo(dt).max, dt)), maxval.dtype)
    out_of_range = maxval > top
    minval, maxval = _clip_to(minval, dt), _clip_to(maxval, dt)
    nbits = np.iinfo(dt).bits
    keys = split_data(data, (2,))
    higher, lower = random_bits(keys[0], nbits, shape), random_bits(keys[1], nbits, shape)
    udt = np.dtype(f"uint{nbits}")
    span = lax.convert_element_type(maxval - minval, udt)
    one = np.array(1, udt)
    span = jnp.where(maxval <= minval, one, span)
    span = jnp.where(out_of_range & (maxval > minval), span + one, span)
    # 2**nbits % span, as (2**(nbits/2) % span)**2 % span (uint arithmetic wraps as JAX's).
    mult = lax.rem(jnp.broadcast_to(np.array(1 << (nbits // 2), udt), get_aval(span).shape),
                   span)
    mult = lax.rem(lax.mul(mult, mult), span)
    shape_b = np.broadcast_shapes(get_aval(span).shape, shape)
    span_b = jnp.broadcast_to(span, shape_b)
    mult_b = jnp.broadcast_to(mult, shape_b)
    offset = lax.add(lax.mul(lax.rem(jnp.broadcast_to(higher, shape_b), span_b), mult_b),
                     lax.rem(jnp.broadcast_to(lower, shape_b), span_b))
    offset = lax.rem(offset, span_b)
    return minval + lax.convert_element_type(offset, dt)


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None
            ) -> Any:
    """Uniform integers in ``[minval, maxval)``, bit for bit JAX's (its modulus scheme
    over twice the bits).

    >>> from funcgrad import random
    >>> random.randint(random.PRNGKey(3), (2, 2), -5, 5)
    Array([[ 0,  4],
           [ 0, -1]], dtype=int32)
    """
    data, _ = check_key("randint", key)
    check_shape("randint", shape_tuple(shape), param_shape(minval), param_shape(maxval))
    dt = dtypes.default_int() if dtype is None else requested_dtype(dtype, None)
    if dt.kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dt}")
    info = np.iinfo(dt)
    sample_dt = dt
    if info.bits < 32:
        sample_dt = np.dtype(np.int32)
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
    out = _randint_data(data, shape_tuple(shape), minval, maxval, sample_dt)
    return out.astype(dt)


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low"
              ) -> Any:
    """Booleans that are True with probability ``p`` (``uniform < p``).

    >>> from funcgrad import random
    >>> random.bernoulli(random.PRNGKey(0), 0.5, (4,))
    Array([False, False,  True,  True], dtype=bool)
    """
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_key("bernoulli", key)
    p = jnp.asarray(p)
    if dtypes.kind(p.dtype) != "f":  # (bfloat16's NumPy kind is "V")
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    dt = p.dtype
    shp = tuple(p.shape) if shape is None else shape_tuple(shape)
    check_shape("bernoulli", shp, tuple(p.shape))
    if mode == "high":
        both = uniform_data(data, (2, *shp), dt)
        u1, u2 = both[0], both[1] * np.array(2.0 ** -np.finfo(dt).nmant, dt)
        return u2 < p - u1
    return uniform_data(data, shp, dt) < p


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """-1 or 1 with equal probability.

    >>> from funcgrad import random
    >>> random.rademacher(random.PRNGKey(0), (4,))
    Array([-1, -1,  1,  1], dtype=int32)
    """
    dt = dtypes.default_int() if dtype is None else requested_dtype(dtype, None)
    b = bernoulli(key, 0.5, shape).astype(dt)
    return (2 * b - 1).astype(dt)


def _shuffle(data: Any, x: Any, axis: int) -> Any:
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    size = math.prod(get_aval(x).shape)
    rounds = int(np.ceil(exponent * np.log(max(1, size)) / np.log(uint32max)))
    for _ in range(rounds):
        keys = split_data(data, (2,))
        data, sub = keys[0], keys[1]
        sort_keys = random_bits(sub, 32, tuple(get_aval(x).shape))
        order = jnp.argsort(sort_keys, axis=axis, stable=True)
        x = jnp.take_along_axis(x, order, axis=axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` or of ``x`` along ``axis`` (JAX's sort by
    random 32-bit keys, so the same permutation as JAX).

    >>> from funcgrad import random
    >>> random.permutation(random.PRNGKey(0), 5)
    Array([0, 1, 4, 3, 2], dtype=int32)
    """
    data, _ = check_key("permutation", key)
    if not np.ndim(x) and not getattr(x, "ndim", 0):
        if dtypes.canonicalize_dtype(np.result_type(x)).kind not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(data, jnp.arange(int(x)), 0)
    x = jnp.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    ind = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis=axis)


def _top_k_indices(x: Any, k: int) -> Any:
    """Indices of the ``k`` largest entries along the last axis (ties: lower index)."""
    order = jnp.argsort(-x, axis=-1, stable=True)
    return order[..., :k]


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True,
           p: Any = None, axis: int = 0, mode: str | None = None) -> Any:
    """A random sample of ``a`` (or ``arange(a)``), with or without replacement,
    optionally weighted by ``p``.

    >>> from funcgrad import random
    >>> random.choice(random.PRNGKey(0), 10, (3,), replace=False)
    Array([0, 1, 8], dtype=int32)
    """
    data, _ = check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    shape = tuple(int(s) for s in shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = _randint_data(data, shape, 0, n_inputs, dtypes.default_int())
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis=axis)
        else:
            src = jnp.arange(n_inputs) if arr.ndim == 0 else arr
            perm = permutation(key, src, axis)
            result = jnp.take(perm, jnp.arange(n_draws), axis=axis if arr.ndim else 0)
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.default_float())
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            u = uniform_data(data, shape, p_cuml.dtype)
            r = p_cuml[-1] * (1 - u)
            # searchsorted (side='left'): how many cumulative sums lie below r.
            ind = jnp.sum(p_cuml < r[..., None], axis=-1).astype(dtypes.default_int())
        else:
            g = gumbel_data(data, (n_inputs,), p_arr.dtype, mode) + jnp.log(p_arr)
            ind = _top_k_indices(g, n_draws).astype(dtypes.default_int())
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis=axis)
    return result.reshape(shape if arr.ndim == 0 else
                          (*arr.shape[:axis], *shape, *arr.shape[axis + 1:]))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Category indices drawn with log-probabilities ``logits`` (the Gumbel-max trick).

    >>> from funcgrad import random
    >>> import numpy as np
    >>> random.categorical(random.PRNGKey(0), np.log(np.array([0.1, 0.9])), shape=(3,))
    Array([1, 1, 1], dtype=int32)
    """
    data, _ = check_key("categorical", key)
    logits = jnp.asarray(logits)
    axis = axis % logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    shp = batch_shape if shape is None else shape_tuple(shape)
    check_shape("categorical", shp, batch_shape)
    prefix = shp[:len(shp) - len(batch_shape)]
    dt = float_dtype("categorical", logits.dtype)
    if replace:
        neg_axis = axis - logits.ndim
        logits_shape = list(shp[len(shp) - len(batch_shape):])
        logits_shape.insert(neg_axis % logits.ndim, logits.shape[axis])
        g = gumbel_data(data, (*prefix, *logits_shape), dt, mode)
        expanded = lax.expand_dims(logits, tuple(range(len(prefix)))) if prefix else logits
        return jnp.argmax(g + expanded, axis=neg_axis)
    noisy = logits + gumbel_data(data, tuple(logits.shape), dt, mode)
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits.shape[axis]}).")
    idx = _top_k_indices(jnp.moveaxis(noisy, axis, -1), k)
    return jnp.moveaxis(idx, -1, 0).reshape(shp).astype(np.int32)  # top_k's, as JAX
