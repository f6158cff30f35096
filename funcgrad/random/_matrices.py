"""Samplers built on matrix factorisations: multivariate_normal (a Cholesky, SVD or
eigendecomposition factor of the covariance times standard normals) and orthogonal
(the Q of a QR factorisation of a normal matrix, signs fixed so that it is Haar).

>>> from funcgrad import random
>>> import numpy as np
>>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (3,)).shape
(3, 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes
from funcgrad.conversion import requested_dtype
from funcgrad.random._continuous import check_shape, float_dtype, normal, shape_tuple
from funcgrad.random._keys import check_key


def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Any:
    """Normal vectors with ``mean`` (``(..., n)``) and covariance ``cov``
    (``(..., n, n)``); ``method`` picks the factor of ``cov``: 'cholesky' (default),
    'svd' or 'eigh' (the last two accept semi-definite covariances).

    >>> from funcgrad import random
    >>> import numpy as np
    >>> x = random.multivariate_normal(random.PRNGKey(1), np.ones(3), np.eye(3) * 1e-12)
    >>> bool(np.allclose(x, 1.0))
    True
    """
    check_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    inexact = dtypes.canonicalize_dtype(np.result_type(
        *(a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float() for a in (mean, cov))))
    mean, cov = mean.astype(inexact), cov.astype(inexact)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, "
                         f"got {dt}")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    batch = (tuple(np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2])))
             if shape is None else shape_tuple(shape))
    check_shape("normal", batch, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    samples = normal(key, (*batch, n), dt)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Haar-random ``n x m`` matrices with orthonormal columns (rows when ``n < m``);
    ``m`` defaults to ``n`` (orthogonal matrices).

    >>> from funcgrad import random
    >>> import numpy as np
    >>> q = np.asarray(random.orthogonal(random.PRNGKey(0), 3))
    >>> bool(np.allclose(q @ q.T, np.eye(3), atol=1e-5))
    True
    """
    check_key("orthogonal", key)
    # As JAX: complex dtypes too (normal checks the dtype).
    dt = dtypes.default_float() if dtype is None else requested_dtype(dtype, None)
    for name, v in (("n", n), ("m", m)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
            raise TypeError(f"orthogonal: {name} must be a concrete integer, got {v!r}")
    rows, cols = int(n), int(n if m is None else m)
    z = normal(key, (*shape_tuple(shape), max(rows, cols), min(rows, cols)), dt)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if rows < cols else x
