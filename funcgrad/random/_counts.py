"""Counting distributions by JAX's algorithms: poisson (Knuth's product of uniforms for
small rates, Hormann's transformed rejection for large), binomial (geometric inversion
for small means, BTRS rejection otherwise) and multinomial (binomials over a scan).
The loops are ``lax.while_loop``s whose conditions look at the whole sample, as JAX's,
so the same key draws the same uniforms in the same rounds.

>>> from funcgrad import random
>>> random.poisson(random.PRNGKey(0), 3.0, (4,)).dtype
dtype('int32')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.conversion import requested_dtype
from funcgrad.random._continuous import (
    float_dtype,
    param_shape,
    params_shape,
    shape_tuple,
    uniform,
)
from funcgrad.random._keys import check_key, split

# XLA's Lanczos approximation of lgamma (g = 7, nine terms).
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


def lgamma_at_least_half(x: Any) -> Any:
    """``log(Gamma(x))`` for ``x >= 0.5`` by XLA's Lanczos sum (no reflection: the
    samplers only evaluate it at ``k + 1`` for counts ``k >= 0``; other values are
    rejected whatever it gives).

    >>> import numpy as np
    >>> round(float(lgamma_at_least_half(np.float32(5.0))), 4)  # log(24)
    3.1781
    """
    x = jnp.asarray(x)
    dt = x.dtype

    def c(v: float) -> Any:
        return np.array(v, dt)

    z = x - c(1.0)
    acc = c(_LANCZOS_BASE)
    for i, coeff in enumerate(_LANCZOS):
        acc = acc + c(coeff) / (z + c(float(i)) + c(1.0))
    t = c(_LANCZOS_G + 0.5) + z
    log_t = c(math.log(_LANCZOS_G + 0.5)) + jnp.log1p(z / c(_LANCZOS_G + 0.5))
    log_sqrt_two_pi = c((math.log(2.0) + math.log(math.pi)) / 2.0)
    return log_sqrt_two_pi + (z + c(0.5) - t / log_t) * log_t + jnp.log(acc)


# ------------------------------------------------------------------- poisson


def _poisson_knuth(key: Any, lam: Any, shape: tuple[int, ...], dt: np.dtype[Any],
                   max_iters: Any) -> Any:
    def body(carry: Any) -> Any:
        i, k, rng, log_prod = carry
        rng, subkey = split(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = uniform(subkey, shape, np.float32)
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond(carry: Any) -> Any:
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)

    init = (jnp.asarray(0, max_iters.dtype), jnp.zeros(shape, dt), key,
            jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dt)


def _poisson_rejection(key: Any, lam: Any, shape: tuple[int, ...], dt: np.dtype[Any],
                       max_iters: Any) -> Any:
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry: Any) -> Any:
        i, k_out, accepted, rng = carry
        keys = split(rng, 3)
        rng, subkey_0, subkey_1 = keys[0], keys[1], keys[2]
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = jnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lgamma_at_least_half(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, rng

    def cond(carry: Any) -> Any:
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)

    init = (jnp.asarray(0, max_iters.dtype), jnp.full(shape, -1, lam.dtype),
            jnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[1].astype(dt)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None
            ) -> Any:
    """Poisson samples with rate ``lam`` (computed in float32, as JAX does).

    >>> from funcgrad import random
    >>> bool((random.poisson(random.PRNGKey(0), 20.0, (5,)) >= 0).all())
    True
    """
    data, _ = check_key("poisson", key)
    dt = dtypes.default_int() if dtype is None else requested_dtype(dtype, None)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to `poisson` must be an int dtype, got {dt}")
    shp = param_shape(lam) if shape is None else shape_tuple(shape)
    lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shp), np.float32)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, np.float32(0.0))
    # The rejection sampler's acceptance rate tends to 89% as lam grows: a large dummy
    # rate for the elements Knuth handles keeps them from slowing its loop.
    lam_rejection = jnp.where(use_knuth, np.float32(1e5), lam)
    max_iters = np.array(np.iinfo(dt).max, dt)
    result = jnp.where(use_knuth, _poisson_knuth(data, lam_knuth, shp, dt, max_iters),
                       _poisson_rejection(data, lam_rejection, shp, dt, max_iters))
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


# ------------------------------------------------------------------ binomial


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k: Any) -> Any:
    """``log(k!) - `` Stirling's formula: a table below 10, its series above."""
    table = jnp.asarray(np.array(_STIRLING_TAIL, k.dtype))
    use_table = k <= 9
    k = jnp.clip(k, 0.0, 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return jnp.where(use_table, table[jnp.floor(k).astype(np.int32)], approx)


def _binomial_inversion(key: Any, count: Any, prob: Any, shape: tuple[int, ...],
                        dt: np.dtype[Any], max_iters: Any) -> Any:
    log1minusprob = jnp.log1p(-prob)

    def body(carry: Any) -> Any:
        i, num_geom, geom_sum, rng = carry
        keys = split(rng)
        subkey, rng = keys[0], keys[1]
        num_geom_out = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, rng

    def cond(carry: Any) -> Any:
        i, geom_sum = carry[0], carry[2]
        return jnp.any(geom_sum <= count) & (i < max_iters)

    init = (jnp.asarray(0, max_iters.dtype), jnp.zeros(shape, prob.dtype),
            jnp.zeros(shape, prob.dtype), key)
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dt)


def _btrs(key: Any, count: Any, prob: Any, shape: tuple[int, ...], dt: np.dtype[Any],
          max_iters: Any) -> Any:
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry: Any) -> Any:
        i, k_out, accepted, rng = carry
        keys = split(rng, 3)
        rng, subkey_0, subkey_1 = keys[0], keys[1], keys[2]
        u = uniform(subkey_0, shape, prob.dtype)
        v = uniform(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, rng

    def cond(carry: Any) -> Any:
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)

    init = (jnp.asarray(0, max_iters.dtype), jnp.full(shape, -1, prob.dtype),
            jnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[1].astype(dt)


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float())


def _binomial(data: Any, n: Any, p: Any, shape: Sequence[int] | None, dt: np.dtype[Any]
              ) -> Any:
    shp = params_shape("binomial", shape, n, p)
    prob = _inexact(p)
    count = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(n), prob.dtype), shp)
    prob = jnp.broadcast_to(prob, shp)
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = jnp.where(use_inversion, count, jnp.zeros_like(count))
    count_btrs = jnp.where(use_inversion, jnp.full_like(count, 1e4), count)
    q_btrs = jnp.where(use_inversion, jnp.full_like(q, 0.5), q)
    # JAX bounds the loops by the float dtype's max: in effect, no bound.
    max_iters = np.array(np.finfo(dt).max, dt)
    samples = jnp.where(use_inversion,
                        _binomial_inversion(data, count_inv, q, shp, dt, max_iters),
                        _btrs(data, count_btrs, q_btrs, shp, dt, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan), samples)
    samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    return jnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dt) - samples)


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Binomial(n, p) counts, as floats (JAX's convention).

    >>> from funcgrad import random
    >>> x = random.binomial(random.PRNGKey(0), 10.0, 0.3, (4,))
    >>> bool(((x >= 0) & (x <= 10)).all())
    True
    """
    data, _ = check_key("binomial", key)
    return _binomial(data, n, p, shape, float_dtype("binomial", dtype))


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: Any = None, unroll: int | bool = 1) -> Any:
    """Counts of ``n`` trials over the outcomes of ``p`` (last axis): one binomial per
    outcome on what the earlier outcomes left. ``unroll`` is accepted for JAX's
    signature (funcgrad's scan does not unroll).

    >>> from funcgrad import random
    >>> import numpy as np
    >>> x = random.multinomial(random.PRNGKey(0), 10.0, np.array([0.2, 0.3, 0.5]))
    >>> float(x.sum())
    10.0
    """
    data, _ = check_key("multinomial", key)
    n_arr, p_arr = _inexact(n), _inexact(p)
    common = np.result_type(n_arr.dtype, p_arr.dtype)
    n_arr, p_arr = n_arr.astype(common), p_arr.astype(common)
    dt = common if dtype is None else float_dtype("multinomial", dtype)
    shp = tuple(p_arr.shape) if shape is None else shape_tuple(shape)
    n_arr = jnp.broadcast_to(n_arr, shp[:-1])
    p_arr = jnp.moveaxis(jnp.broadcast_to(p_arr, shp), -1, 0)
    remaining = jnp.flip(jnp.cumsum(jnp.flip(p_arr, 0), axis=0), 0)
    ratios = p_arr / jnp.where(remaining == 0, 1, remaining)
    keys = split(data, ratios.shape[0])

    def step(remainder: Any, ratio_key: Any) -> Any:
        ratio, k = ratio_key
        count = _binomial(k, remainder, jnp.clip(ratio, 0, 1), None, remainder.dtype)
        return remainder - count, count

    _, counts = lax.scan(step, n_arr, (ratios, keys))
    return jnp.moveaxis(counts, 0, -1).astype(dt)
