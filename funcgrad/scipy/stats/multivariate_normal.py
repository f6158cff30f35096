"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``): points
along the last axis, ``cov`` a scalar (isotropic) or a batch of positive definite
matrices.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.stats import multivariate_normal
>>> round(float(multivariate_normal.logpdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2))), 6)
-1.837877
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import lax
from funcgrad.numpy._core import promote_inexact
from funcgrad.scipy.stats._args import check_dtype_known


def _solve_lower(chol: Any, y: Any) -> Any:
    return lax.linalg.triangular_solve(chol, y[:, None], left_side=True, lower=True)[:, 0]


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """Log density at ``x``.

    >>> round(float(logpdf(jnp.ones(2), jnp.zeros(2), 1.0)), 6)
    -2.837877
    """
    if allow_singular is not None:
        # JAX's own answer for this SciPy argument: the Cholesky route needs a
        # positive definite covariance.
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    check_dtype_known(x, mean, cov)
    x, mean, cov = promote_inexact(x, mean, cov)
    if not mean.shape:
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (jnp.log(2 * np.pi)
                                                              + jnp.log(cov))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = lax.linalg.cholesky(cov)
    y = jnp.vectorize(_solve_lower, signature="(n,n),(n)->(n)")(chol, x - mean)
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
            - jnp.log(jnp.diagonal(chol, axis1=-1, axis2=-2)).sum(-1))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """Density at ``x``.

    >>> round(float(pdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2))), 6)
    0.159155
    """
    return jnp.exp(logpdf(x, mean, cov))


__all__ = ["logpdf", "pdf"]
