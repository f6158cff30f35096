"""``jax.scipy.cluster.vq``: vector quantization, ``vq``.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.cluster.vq import vq
>>> vq(jnp.array([0.1, 2.9]), jnp.array([0.0, 1.0, 3.0]))[0].tolist()
[0, 2]
"""

from __future__ import annotations

import operator
from typing import Any

import funcgrad.numpy as jnp
from funcgrad.scipy.stats._args import promote_args_inexact
from funcgrad.transforms.vmap import vmap

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The index of the nearest code (Euclidean) for each observation, and its distance.
    ``obs`` is ``(M, N)`` and ``code_book`` ``(K, N)``, or both 1-D (length-1 vectors);
    ``check_finite`` is unused, as in JAX.

    >>> import funcgrad.numpy as jnp
    >>> obs = jnp.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2]])
    >>> code_book = jnp.array([[1., 2., 3.], [2., 3., 4.], [3., 4., 5.], [4., 5., 6.]])
    >>> codes, distances = vq(obs, code_book)
    >>> codes.tolist(), distances.round(4)
    ([0, 3], Array([0.1732, 1.9209], dtype=float32))
    """
    del check_finite
    obs_arr, cb_arr = promote_args_inexact("scipy.cluster.vq.vq", obs, code_book)
    if obs_arr.ndim != cb_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, cb_arr = obs_arr[..., None], cb_arr[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp.linalg.norm(ob[None] - cb_arr, axis=-1))(obs_arr)
    code = jnp.argmin(dist, axis=-1)
    return code, vmap(operator.getitem)(dist, code)
