"""``nn.softmax`` with JAX's custom derivative rule (``jax_softmax_custom_jvp``).

The rule ``y * (dx - sum(y * dx))`` uses only the output ``y``: JAX's newer form, which
keeps less for reverse mode than differentiating exp and the division.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> with jax.softmax_custom_jvp(True):
...     jax.nn.softmax(jnp.array([0.0, 0.0]))
Array([0.5, 0.5], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.transforms.custom import custom_jvp


def _forward(x: Any, axis: Any, where: Any) -> Any:
    x_max = jnp.max(x if where is None else jnp.where(where, x, -np.inf), axis,
                    keepdims=True, initial=-np.inf)
    # An infinite max stays, as in JAX: a +inf (or a row of -inf) gives a NaN row.
    unnormalized = jnp.exp((x if where is None else jnp.where(where, x, -np.inf)) - x_max)
    if where is None:
        return unnormalized / jnp.sum(unnormalized, axis, keepdims=True)
    unnormalized = jnp.where(where, unnormalized, 0.0)
    # A row masked out entirely is zeros, as JAX gives (not 0 / 0).
    return jnp.where(where, unnormalized / jnp.sum(unnormalized, axis, keepdims=True), 0.0)


def _plain(x: Any, axis: Any) -> Any:
    return _forward(x, axis, None)


def _masked(x: Any, where: Any, axis: Any) -> Any:
    return _forward(x, axis, where)


_plain_jvp = custom_jvp(_plain, nondiff_argnums=(1,))
_masked_jvp = custom_jvp(_masked, nondiff_argnums=(2,))


@_plain_jvp.defjvp
def _plain_rule(axis: Any, primals: Any, tangents: Any) -> Any:
    (x,), (x_dot,) = primals, tangents
    y = _plain_jvp(x, axis)
    return y, y * (x_dot - jnp.sum(y * x_dot, axis, keepdims=True))


@_masked_jvp.defjvp
def _masked_rule(axis: Any, primals: Any, tangents: Any) -> Any:
    (x, where), (x_dot, _) = primals, tangents
    y = _masked_jvp(x, where, axis)
    return y, y * (x_dot - jnp.sum(jnp.where(where, y * x_dot, 0.0), axis, keepdims=True))


def softmax_custom_jvp(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """softmax along ``axis`` whose derivative is JAX's custom rule (see the module)."""
    axis = tuple(axis) if isinstance(axis, list) else axis
    if where is None:
        return _plain_jvp(x, axis)
    return _masked_jvp(x, jnp.asarray(where), axis)
