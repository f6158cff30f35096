"""Arrays laid out by a sharding: ``reshard`` and the ``make_array_from_*`` constructors
(one device: the layout is the device; the values are unchanged). The sharding types
themselves are in :mod:`funcgrad.sharding`.

>>> import numpy as np
>>> import funcgrad as jax
>>> s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
>>> jax.make_array_from_callback((2,), s, lambda idx: np.arange(2.0)[idx])
Array([0., 1.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.sharding import (
    NamedSharding,
    P,  # noqa: F401 - the examples below spell PartitionSpec so
    PartitionSpec,
    Sharding,
    get_mesh,
)


def _resolve(sharding: Any, what: str) -> Sharding:
    if isinstance(sharding, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(
                f"Using PartitionSpec when you are not under a mesh context is not allowed. "
                f"Please pass a NamedSharding instance or enter into a mesh context via "
                f"`jax.set_mesh`. Got {sharding}")
        return NamedSharding(mesh, sharding)
    if not isinstance(sharding, Sharding):
        raise TypeError(f"{what} expects a Sharding or PartitionSpec, got {sharding!r}")
    return sharding


def _place(x: Any, sharding: Sharding) -> Any:
    from funcgrad.api import device_put  # noqa: PLC0415

    return device_put(x, sharding._device())


def reshard(xs: Any, out_shardings: Any) -> Any:
    """The arrays of ``xs`` laid out as ``out_shardings`` says (a Sharding or, inside
    :func:`set_mesh`, a PartitionSpec; one per leaf or one for all). On one device the
    values are unchanged.

    >>> import funcgrad as jax
    >>> mesh = jax.make_mesh((1,), ("x",))
    >>> jax.reshard(jax.numpy.ones(2), NamedSharding(mesh, P("x")))
    Array([1., 1.], dtype=float32)
    """
    from funcgrad.tree_util import tree_flatten, tree_unflatten  # noqa: PLC0415

    leaves, tree = tree_flatten(xs)
    if isinstance(out_shardings, (Sharding, PartitionSpec)):
        specs = [out_shardings] * len(leaves)
    else:
        specs, stree = tree_flatten(out_shardings,
                                    is_leaf=lambda s: isinstance(s, (Sharding, PartitionSpec)))
        if stree.num_leaves != tree.num_leaves:
            raise ValueError(f"reshard: {stree.num_leaves} shardings for {tree.num_leaves} "
                             "arrays")
    out = []
    for x, s in zip(leaves, specs):
        sh = _resolve(s, "reshard")
        rank = len(np.shape(x)) if not hasattr(x, "aval") else len(x.aval.shape)
        if isinstance(sh, NamedSharding) and len(sh.spec) > rank:
            raise ValueError(f"Sharding {sh} is only valid for values of rank at least "
                             f"{len(sh.spec)}, but was applied to a value of rank {rank}")
        from funcgrad.core import Tracer  # noqa: PLC0415

        out.append(x if isinstance(x, Tracer) else _place(x, sh))
    return tree_unflatten(tree, out)


def _check_shard(shape: tuple[int, ...], sharding: Sharding, data_shape: tuple[int, ...],
                 dtype: Any) -> None:
    want = sharding.shard_shape(shape)
    if tuple(data_shape) != want:
        raise ValueError(f"Expected shard shape {want} doesn't match the single device array "
                         f"shape {tuple(data_shape)}. Shape of Array is "
                         f"{np.dtype(dtype).name}{list(shape)} with sharding {sharding}")


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[Any], Any], dtype: Any = None) -> Any:
    """An array of ``shape`` built from ``data_callback(index)`` for each device's index.

    (See the module example.)
    """
    from funcgrad.numpy import asarray  # noqa: PLC0415

    shape = tuple(int(s) for s in shape)
    sh = _resolve(sharding, "make_array_from_callback")
    index = sh.devices_indices_map(shape)[sh._device()]
    data = asarray(data_callback(index), dtype=dtype)
    _check_shard(shape, sh, data.shape, data.dtype)
    return _place(data, sh)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Any], *, dtype: Any = None) -> Any:
    """An array of ``shape`` assembled from one array per device of ``sharding``.

    >>> import funcgrad as jax
    >>> s = NamedSharding(jax.make_mesh((1,), ("x",)), P("x"))
    >>> jax.make_array_from_single_device_arrays((2,), s, [jax.numpy.ones(2)])
    Array([1., 1.], dtype=float32)
    """
    from funcgrad.numpy import asarray  # noqa: PLC0415

    shape = tuple(int(s) for s in shape)
    sh = _resolve(sharding, "make_array_from_single_device_arrays")
    arrays = list(arrays)
    if len(arrays) != sh.num_devices:
        raise ValueError(f"Expected {sh.num_devices} per-device arrays (this is how many "
                         f"devices are addressable by the sharding), but got {len(arrays)}")
    data = asarray(arrays[0], dtype=dtype)
    _check_shard(shape, sh, data.shape, data.dtype)
    return _place(data, sh)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Any:
    """The global array whose part on this process is ``local_data`` (one process: all).

    >>> import funcgrad as jax
    >>> s = NamedSharding(jax.make_mesh((1,), ("x",)), P("x"))
    >>> jax.make_array_from_process_local_data(s, np.arange(2.0))
    Array([0., 1.], dtype=float32)
    """
    from funcgrad.numpy import asarray  # noqa: PLC0415

    sh = _resolve(sharding, "make_array_from_process_local_data")
    data = asarray(local_data)
    if global_shape is not None and tuple(global_shape) != tuple(data.shape):
        raise ValueError(
            "When calling `make_array_from_process_local_data` on a single process, "
            "global_shape should be None or equal to local_data.shape."
            f"Got global_shape={tuple(global_shape)} and local_data.shape={tuple(data.shape)}.")
    return _place(data, sh)


__all__ = ["make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "reshard"]
