"""Samplers that are closed-form transforms of uniform, normal and exponential draws:
lognormal, maxwell, double_sided_maxwell, pareto, rayleigh, weibull_min, wald,
triangular, geometric. Each applies JAX's operations in JAX's order to the same draws.

>>> from funcgrad import random
>>> random.rayleigh(random.PRNGKey(0), 1.0, (3,)).shape
(3,)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.conversion import requested_dtype
from funcgrad.random._continuous import (
    check_all_safe_to_cast,
    exponential,
    float_dtype,
    normal,
    param_shape,
    params_shape,
    shape_tuple,
    uniform,
)
from funcgrad.random._discrete import rademacher
from funcgrad.random._keys import check_key, split


def _param(x: Any, dt: np.dtype[Any]) -> Any:
    return lax.convert_element_type(jnp.asarray(x), dt)


_UNIT_SIGMA = np.float32(1)


def lognormal(key: Any, sigma: Any = _UNIT_SIGMA, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """Log-normal samples, ``exp(sigma * normal)``.

    >>> from funcgrad import random
    >>> bool((random.lognormal(random.PRNGKey(0), 0.5, (4,)) > 0).all())
    True
    """
    check_key("lognormal", key)
    dt = dtypes.default_float() if dtype is None else requested_dtype(dtype, None)
    if not dtypes.is_inexact(dt):
        raise ValueError("dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dt}")
    shp = params_shape("lognormal", shape, sigma)
    check_all_safe_to_cast("lognormal", dt, sigma)
    return jnp.exp(normal(key, shp, dt) * _param(sigma, dt))


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell samples: the length of a standard normal 3-vector.

    >>> from funcgrad import random
    >>> random.maxwell(random.PRNGKey(0), (2,)).shape
    (2,)
    """
    check_key("maxwell", key)
    dt = float_dtype("maxwell", dtype)
    rvs = normal(key, (*shape_tuple(shape), 3), dt)
    return jnp.linalg.norm(rvs, axis=-1)


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell samples, ``loc + scale * sign * maxwell``; as in JAX the
    result's shape is ``shape`` followed by the parameters' broadcast shape.

    >>> from funcgrad import random
    >>> random.double_sided_maxwell(random.PRNGKey(0), 0.0, 1.0, (3,)).shape
    (3,)
    """
    check_key("double_sided_maxwell", key)
    dt = float_dtype("double_sided_maxwell", dtype)
    params = tuple(np.broadcast_shapes(param_shape(loc), param_shape(scale)))
    shp = shape_tuple(shape) or params
    shp = shp + params
    maxwell_key, rademacher_key = split(key)
    rvs = maxwell(maxwell_key, shp, dt)
    sign = rademacher(rademacher_key, shp, dt)
    return sign * rvs * _param(scale, dt) + _param(loc, dt)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Any:
    """Weibull samples by the inverse CDF, ``scale * (-log1p(-u)) ** (1 / concentration)``.

    >>> from funcgrad import random
    >>> random.weibull_min(random.PRNGKey(0), 1.0, 2.0, (2,)).shape
    (2,)
    """
    check_key("weibull_min", key)
    dt = float_dtype("weibull_min", dtype)
    u = uniform(key, shape_tuple(shape), dt)
    return jnp.power(-jnp.log1p(-u), 1.0 / jnp.asarray(concentration)) * scale


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto samples with shape ``b``, ``exp(exponential / b)``.

    >>> from funcgrad import random
    >>> bool((random.pareto(random.PRNGKey(0), 3.0, (4,)) >= 1).all())
    True
    """
    check_key("pareto", key)
    dt = float_dtype("pareto", dtype)
    shp = params_shape("pareto", shape, b)
    check_all_safe_to_cast("pareto", dt, b)
    return jnp.exp(exponential(key, shp, dt) / _param(b, dt))


def rayleigh(key: Any, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None
             ) -> Any:
    """Rayleigh samples, ``scale * sqrt(-2 log u)``.

    >>> from funcgrad import random
    >>> random.rayleigh(random.PRNGKey(0), 2.0, (2, 2)).shape
    (2, 2)
    """
    check_key("rayleigh", key)
    dt = float_dtype("rayleigh", dtype)
    shp = params_shape("rayleigh", shape, scale)
    check_all_safe_to_cast("rayleigh", dt, scale)
    u = uniform(key, shp, dt)
    s = jnp.broadcast_to(_param(scale, dt), shp)
    return s * jnp.sqrt(jnp.log(u) * np.array(-2, dt))


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) samples by Michael, Schucany and Haas' transformation.

    >>> from funcgrad import random
    >>> bool((random.wald(random.PRNGKey(0), 1.0, (4,)) > 0).all())
    True
    """
    check_key("wald", key)
    dt = float_dtype("wald", dtype)
    shp = params_shape("wald", shape, mean)
    check_all_safe_to_cast("wald", dt, mean)
    k1, k2 = split(key, 2)
    mu = jnp.broadcast_to(_param(mean, dt), shp)
    v = normal(k1, shp, dt)
    z = uniform(k2, shp, dt)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mu_sq = lax.integer_pow(mu, 2)
    sqrt_term = jnp.sqrt(4 * mu * y + mu_sq * y_sq)
    x = mu + mu_sq * y / 2 - mu / 2 * sqrt_term
    return jnp.where(z <= mu / (mu + x), x, mu_sq / x)


def triangular(key: Any, left: Any, mode: Any, right: Any,
               shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Triangular samples on ``[left, right]`` peaking at ``mode``, by the inverse CDF.

    >>> from funcgrad import random
    >>> x = random.triangular(random.PRNGKey(0), 0.0, 0.5, 1.0, (50,))
    >>> bool(((x >= 0) & (x <= 1)).all())
    True
    """
    check_key("triangular", key)
    dt = float_dtype("triangular", dtype)
    shp = params_shape("triangular", shape, left, mode, right)
    check_all_safe_to_cast("triangular", dt, left, mode, right)
    lo, md, hi = (jnp.broadcast_to(_param(v, dt), shp) for v in (left, mode, right))
    fc = (md - lo) / (hi - lo)
    u = uniform(key, shp, dt)
    out1 = lo + jnp.sqrt(u * (hi - lo) * (md - lo))
    out2 = hi - jnp.sqrt((1 - u) * (hi - lo) * (hi - md))
    return jnp.where(u < fc, out1, out2)


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None
              ) -> Any:
    """Geometric samples (trials up to the first success, so >= 1),
    ``floor(log u / log1p(-p)) + 1``.

    >>> from funcgrad import random
    >>> bool((random.geometric(random.PRNGKey(0), 0.3, (5,)) >= 1).all())
    True
    """
    check_key("geometric", key)
    dt = dtypes.default_int() if dtype is None else requested_dtype(dtype, None)
    if dt.kind not in "iu":
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dt}")
    shp = params_shape("geometric", shape, p)
    p = jnp.asarray(p)
    if not dtypes.is_inexact(p.dtype):
        p = p.astype(dtypes.default_float())
    u = uniform(key, shp, p.dtype)
    # JAX maps u == 0 to 1 (not log1p(u - 1)), keeping its samples for a given key.
    u = jnp.where(u == 0, np.array(1, p.dtype), u)
    log_one_minus_p = jnp.broadcast_to(jnp.log1p(-p), shp)
    return (jnp.floor(jnp.log(u) / log_one_minus_p) + 1).astype(dt)
