"""The Dirichlet distribution over the probability simplex (``jax.scipy.stats.dirichlet``).

Points run along the first axis of ``x``: shape ``(K, ...)`` for a batch of points, or
``(K - 1, ...)`` with the last coordinate implied.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.stats import dirichlet
>>> round(float(dirichlet.pdf(jnp.array([0.25, 0.75]), jnp.array([1.0, 2.0]))), 6)
1.5
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.numpy._core import promote_inexact
from funcgrad.scipy import special
from funcgrad.scipy.stats._args import check_dtype_known


def _is_simplex(x: Any) -> Any:
    return jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)


def logpdf(x: Any, alpha: Any) -> Any:
    """Log density at ``x`` (-inf off the open simplex).

    >>> round(float(logpdf(jnp.array([0.25]), jnp.array([1.0, 2.0]))), 6)
    0.405465
    """
    check_dtype_known(x, alpha)
    x, alpha = promote_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
    normalize = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    val = jnp.sum(special.xlogy(alpha - 1, x), axis=0) - normalize
    return jnp.where(_is_simplex(x), val, -np.inf)


def pdf(x: Any, alpha: Any) -> Any:
    """Density at ``x``.

    >>> float(pdf(jnp.array([1.5, -0.5]), jnp.array([1.0, 2.0])))
    0.0
    """
    return jnp.exp(logpdf(x, alpha))


__all__ = ["logpdf", "pdf"]
