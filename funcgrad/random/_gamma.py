"""The gamma sampler (the ``random_gamma`` primitive: Marsaglia-Tsang per key, implicit
reparameterisation gradients) and the distributions JAX builds on it: loggamma, beta,
dirichlet, chisquare, f, t, generalized_normal, ball.

>>> from funcgrad import random
>>> bool((random.gamma(random.PRNGKey(0), 2.0, (4,)) > 0).all())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.primitives.random_gamma import random_gamma, random_gamma_p
from funcgrad.random._continuous import (
    check_all_safe_to_cast,
    check_shape,
    exponential,
    float_dtype,
    normal,
    param_shape,
    params_shape,
    shape_tuple,
)
from funcgrad.random._discrete import rademacher
from funcgrad.random._keys import check_key, split

__all__ = ["ball", "beta", "chisquare", "dirichlet", "f", "gamma", "generalized_normal",
           "loggamma", "random_gamma_p", "t"]


def _param(x: Any, dt: np.dtype[Any]) -> Any:
    return lax.convert_element_type(jnp.asarray(x), dt)


def _gamma(name: str, key: Any, a: Any, shape: Sequence[int] | None, dtype: Any,
           log_space: bool) -> Any:
    data, _ = check_key(name, key)
    dt = float_dtype(name, dtype)
    a_shape = param_shape(a)
    shp = a_shape if shape is None else shape_tuple(shape)
    check_shape("gamma", shp, a_shape)
    a = jnp.broadcast_to(_param(a, dt), shp)
    return random_gamma(data, a, log_space=log_space)


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) samples (Marsaglia and Tsang's method, JAX's draws), differentiable
    in ``a`` (implicit reparameterisation).

    >>> from funcgrad import random
    >>> random.gamma(random.PRNGKey(0), 1.0, (2, 3)).shape
    (2, 3)
    """
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """The logs of Gamma(a, 1) samples, computed in log space (accurate for tiny ``a``):
    ``exp(loggamma(k, a))`` is ``gamma(k, a)`` to rounding.

    >>> from funcgrad import random
    >>> bool(random.loggamma(random.PRNGKey(0), 1e-3, (3,)).max() < 0)
    True
    """
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None
         ) -> Any:
    """Beta(a, b) samples from two log-gamma draws, normalised without overflow.

    >>> from funcgrad import random
    >>> x = random.beta(random.PRNGKey(0), 2.0, 3.0, (10,))
    >>> bool(((x >= 0) & (x <= 1)).all())
    True
    """
    check_key("beta", key)
    dt = float_dtype("beta", dtype)
    check_all_safe_to_cast("beta", dt, a, b)
    shp = params_shape("beta", shape, a, b)
    key_a, key_b = split(key)
    a = jnp.broadcast_to(_param(a, dt), shp)
    b = jnp.broadcast_to(_param(b, dt), shp)
    log_gamma_a = loggamma(key_a, a, shp, dt)
    log_gamma_b = loggamma(key_b, b, shp, dt)
    log_max = jnp.maximum(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None
              ) -> Any:
    """Dirichlet samples: a softmax over the last axis of log-gamma draws.

    >>> from funcgrad import random
    >>> x = random.dirichlet(random.PRNGKey(0), __import__("numpy").ones(3))
    >>> round(float(x.sum()), 5)
    1.0
    """
    check_key("dirichlet", key)
    dt = float_dtype("dirichlet", dtype)
    a_shape = param_shape(alpha)
    if len(a_shape) < 1:
        raise ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0")
    shp = a_shape[:-1] if shape is None else shape_tuple(shape)
    check_shape("dirichlet", shp, a_shape[:-1])
    log_gamma_samples = loggamma(key, _param(alpha, dt), shp + a_shape[-1:], dt)
    # jax.nn.softmax: shift by the (constant) maximum, exponentiate, normalise.
    shifted = log_gamma_samples - lax.stop_gradient(
        jnp.max(log_gamma_samples, axis=-1, keepdims=True))
    unnormalized = jnp.exp(shifted)
    return unnormalized / jnp.sum(unnormalized, axis=-1, keepdims=True)


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None
              ) -> Any:
    """Chi-square samples with ``df`` degrees of freedom, ``2 * Gamma(df / 2)``.

    >>> from funcgrad import random
    >>> random.chisquare(random.PRNGKey(0), 3.0, (2,)).shape
    (2,)
    """
    check_key("chisquare", key)
    dt = float_dtype("chisquare", dtype)
    shp = params_shape("chisquare", shape, df)
    check_all_safe_to_cast("chisquare", dt, df)
    two = np.array(2, dt)
    log_g = loggamma(key, _param(df, dt) / two, shp, dt)
    return jnp.exp(log_g) * two


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None) -> Any:
    """F-distribution samples, the ratio of two scaled chi-squares.

    >>> from funcgrad import random
    >>> bool((random.f(random.PRNGKey(0), 2.0, 5.0, (3,)) > 0).all())
    True
    """
    check_key("f", key)
    dt = float_dtype("f", dtype)
    shp = params_shape("f", shape, dfnum, dfden)
    check_all_safe_to_cast("f", dt, dfnum, dfden)
    dfden, dfnum = _param(dfden, dt), _param(dfnum, dt)
    key_dfd, key_dfn = split(key)
    chi2_dfn = chisquare(key_dfn, dfnum, shp, dt)
    chi2_dfd = chisquare(key_dfd, dfden, shp, dt)
    return (chi2_dfn / dfnum) / (chi2_dfd / dfden)


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t samples, ``normal * sqrt(df / 2 / Gamma(df / 2))``.

    >>> from funcgrad import random
    >>> random.t(random.PRNGKey(0), 4.0, (2, 2)).shape
    (2, 2)
    """
    check_key("t", key)
    dt = float_dtype("t", dtype)
    shp = params_shape("t", shape, df)
    check_all_safe_to_cast("t", dt, df)
    key_n, key_g = split(key)
    n = normal(key_n, shp, dt)
    half_df = _param(df, dt) / np.array(2, dt)
    g = gamma(key_g, half_df, shp, dt)
    return n * jnp.sqrt(half_df / g)


def generalized_normal(key: Any, p: float, shape: Sequence[int] = (), dtype: Any = None
                       ) -> Any:
    """Generalized normal samples (density ``exp(-|x|**p)``): a random sign times
    ``Gamma(1 / p) ** (1 / p)``.

    >>> from funcgrad import random
    >>> random.generalized_normal(random.PRNGKey(0), 1.5, (3,)).shape
    (3,)
    """
    check_key("generalized_normal", key)
    dt = float_dtype("generalized_normal", dtype)
    shp = shape_tuple(shape)
    keys = split(key)
    g = gamma(keys[0], 1 / p, shp, dt)
    r = rademacher(keys[1], shp, dt)
    return r * g ** (1 / p)


def ball(key: Any, d: int, p: float = 2, shape: Sequence[int] = (), dtype: Any = None
         ) -> Any:
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball.

    >>> from funcgrad import random
    >>> x = random.ball(random.PRNGKey(0), 3, shape=(5,))
    >>> x.shape, bool(((x ** 2).sum(-1) <= 1).all())
    ((5, 3), True)
    """
    check_key("ball", key)
    dt = float_dtype("ball", dtype)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"ball: the dimension d must be a concrete integer, got {d!r}")
    shp = shape_tuple(shape)
    k1, k2 = split(key)
    g = generalized_normal(k1, p, (*shp, int(d)), dt)
    e = exponential(k2, shp, dt)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]
