"""``jax.scipy.interpolate``: ``RegularGridInterpolator`` (linear and nearest), written in
array operations so that it traces under ``jit``, ``grad`` and ``vmap``; the interpolator
is a pytree (its grid, values and fill value are leaves).

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy.interpolate import RegularGridInterpolator
>>> f = RegularGridInterpolator((jnp.array([0.0, 1.0]),), jnp.array([0.0, 10.0]))
>>> f(jnp.array([0.25])).tolist()
[2.5]
"""

from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad.numpy._core import promote_inexact
from funcgrad.scipy.stats._args import check_arraylike
from funcgrad.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _ndim_coords_from_arrays(points: Any, ndim: int | None = None) -> Any:
    # A tuple of coordinate arrays becomes one (..., ndim) array.
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        p = jnp.broadcast_arrays(*points)
        for p_other in p[1:]:
            if p_other.shape != p[0].shape:
                raise ValueError("coordinate arrays do not have the same shape")
        out = jnp.empty(p[0].shape + (len(points),), dtype=float)
        for j, item in enumerate(p):
            out = out.at[..., j].set(item)
        return out
    check_arraylike("_ndim_coords_from_arrays", points)
    points = jnp.asarray(points)
    if points.ndim == 1:
        points = points.reshape(-1, 1) if ndim is None else points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolate on a regular grid in any number of dimensions, as
    ``jax.scipy.interpolate.RegularGridInterpolator``: ``method`` is ``"linear"`` or
    ``"nearest"``; points outside the grid give ``fill_value`` (NaN by default), or are
    extrapolated when ``fill_value`` is None. Each grid axis must be strictly increasing;
    ``bounds_error=True`` raises NotImplementedError, as in JAX (it cannot act under jit).

    >>> import funcgrad.numpy as jnp
    >>> points = (jnp.array([1, 2, 3]), jnp.array([4, 5, 6]))
    >>> values = jnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]])
    >>> interpolate = RegularGridInterpolator(points, values, method="linear")
    >>> interpolate(jnp.array([[1.5, 4.5], [2.2, 5.8]]))
    Array([30., 64.], dtype=float32)
    """

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        (values,) = promote_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """Interpolated values at ``xi`` (shape ``(..., ndim)``, or a tuple of
        coordinate arrays), with the trailing dimensions of ``values`` after.

        >>> import funcgrad.numpy as jnp
        >>> f = RegularGridInterpolator((jnp.array([0.0, 1.0]),), jnp.array([0.0, 1.0]))
        >>> f(jnp.array([0.4, 2.0]), method="nearest").tolist()
        [0.0, nan]
        """
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim=ndim)
        if xi.shape[-1] != len(self.grid):
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        xi_shape = xi.shape
        xi = xi.reshape(-1, xi_shape[-1])
        indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
        if method == "linear":
            result = self._evaluate_linear(indices, norm_distances)
        else:
            result = self._evaluate_nearest(indices, norm_distances)
        if not self.bounds_error and self.fill_value is not None:
            bc_shp = result.shape[:1] + (1,) * (result.ndim - 1)
            result = jnp.where(out_of_bounds.reshape(bc_shp), self.fill_value, result)
        return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

    def _evaluate_linear(self, indices: list[Any], norm_distances: list[Any]) -> Any:
        # Broadcast the weights over the trailing dimensions of the values.
        vslice = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        values: Any = jnp.asarray(0.)
        # Each corner of the cell: index i or i + 1 along every axis.
        for edge_indices in product(*[[i, i + 1] for i in indices]):
            weight: Any = jnp.asarray(1.)
            for ei, i, yi in zip(edge_indices, indices, norm_distances):
                weight *= jnp.where(ei is i, 1 - yi, yi)
            values += self.values[edge_indices] * weight[vslice]
        return values

    def _evaluate_nearest(self, indices: list[Any], norm_distances: list[Any]) -> Any:
        idx_res = [jnp.where(yi <= .5, i, i + 1) for i, yi in zip(indices, norm_distances)]
        return self.values[tuple(idx_res)]

    def _find_indices(self, xi: Any) -> tuple[list[Any], list[Any], Any]:
        indices, norm_distances = [], []
        out_of_bounds = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.searchsorted(g, x) - 1
            i = jnp.where(i < 0, 0, i)
            i = jnp.where(i > g.size - 2, g.size - 2, i)
            indices.append(i)
            norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
            if not self.bounds_error:
                out_of_bounds += x < g[0]
                out_of_bounds += x > g[-1]
        return indices, norm_distances, out_of_bounds


def _flatten(obj: RegularGridInterpolator) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux: Any, children: Any) -> RegularGridInterpolator:
    return RegularGridInterpolator(*children[:2], *aux, *children[2:])


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
