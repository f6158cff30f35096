"""``jax.experimental.mesh_utils``: arrays of devices shaped for a ``Mesh``.

>>> import funcgrad as jax
>>> from funcgrad.experimental import mesh_utils
>>> mesh_utils.create_device_mesh((len(jax.devices()),)).shape == (len(jax.devices()),)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.devices import devices as _devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def _as_array(devs: Sequence[Any], shape: Sequence[int]) -> np.ndarray:
    if len(devs) != math.prod(shape):
        raise ValueError(f"Number of devices {len(devs)} must equal the product of mesh_shape "
                         f"{tuple(shape)}")
    out = np.empty(len(devs), dtype=object)
    out[:] = list(devs)
    return out.reshape(tuple(shape))


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """The devices (all by default) as an array of ``mesh_shape``, in device order (the
    devices funcgrad drives have no physical topology to follow).

    >>> create_device_mesh((1,)).dtype
    dtype('O')
    """
    return _as_array(list(_devices() if devices is None else devices), mesh_shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh of per-granule meshes: each granule (a process, with
    ``process_is_granule=True``) holds a ``mesh_shape`` block, and the blocks are laid out
    as ``dcn_mesh_shape``; the result's shape is their elementwise product.

    >>> create_hybrid_device_mesh((1,), (1,), process_is_granule=True).shape
    (1,)
    """
    devs = list(_devices() if devices is None else devices)
    if not process_is_granule:
        d = devs[0] if devs else None
        raise ValueError(f"Device {d} does not have attribute slice_index. See "
                         "`process_is_granule` option.")
    granules: dict[int, list[Any]] = {}
    for d in devs:
        granules.setdefault(int(d.process_index), []).append(d)
    keys = sorted(granules) if should_sort_granules_by_key else list(granules)
    blocks = [create_device_mesh(mesh_shape, granules[k]) for k in keys]
    grid = _as_array(blocks, dcn_mesh_shape) if blocks else np.empty(0, dtype=object)
    # Block (i, j, ...) of the grid goes at offset (i * mesh_shape[0], j * mesh_shape[1], ...).
    shape = [m * g for m, g in zip(mesh_shape, dcn_mesh_shape, strict=False)]
    out = np.empty(shape, dtype=object)
    for pos in np.ndindex(*grid.shape):
        at = tuple(slice(p * m, (p + 1) * m) for p, m in zip(pos, mesh_shape, strict=False))
        out[at] = grid[pos]
    return out
