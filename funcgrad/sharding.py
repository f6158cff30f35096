"""JAX's ``jax.sharding`` on the devices funcgrad has: meshes, partition specs and shardings.

funcgrad runs each process on one device, so every mesh axis has size 1, a sharded
array is its only shard, and collectives over mesh axes (inside :func:`funcgrad.shard_map`)
act on one participant. Programs written for a mesh run unchanged and give the values a
one-device JAX gives.

>>> import funcgrad as jax
>>> from funcgrad.sharding import NamedSharding, PartitionSpec as P
>>> mesh = jax.make_mesh((1,), ("x",))
>>> s = NamedSharding(mesh, P("x"))
>>> s.shard_shape((4, 3))
(4, 3)
>>> jax.make_array_from_callback((2,), s, lambda idx: [1.0, 2.0][idx[0]])
Array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import contextlib
import enum
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad.devices import Device, device_of


class AxisType(enum.Enum):
    """How a mesh axis is used (JAX's names; on one device they all behave alike)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec:
    """How each dimension of an array is split over mesh axes: a name, a tuple of names,
    or None (not split) per dimension.

    >>> PartitionSpec("x", None)
    P('x', None)
    >>> len(PartitionSpec(("x", "y")))
    1
    """

    UNCONSTRAINED = _Unconstrained()
    __slots__ = ("_parts",)

    def __init__(self, *partitions: Any) -> None:
        parts = []
        for p in partitions:
            if isinstance(p, list):
                p = tuple(p)
            if isinstance(p, tuple) and len(p) == 1:
                p = p[0]
            if not (p is None or isinstance(p, (str, tuple)) or p is self.UNCONSTRAINED):
                raise TypeError(f"PartitionSpec entries must be None, an axis name or a tuple "
                                f"of axis names, got {p!r}")
            parts.append(p)
        self._parts = tuple(parts)

    def __repr__(self) -> str:
        return f"P({', '.join(map(repr, self._parts))}{',' if len(self._parts) == 1 else ''})"

    def __len__(self) -> int:
        return len(self._parts)

    def __getitem__(self, i: Any) -> Any:
        return self._parts[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._parts)

    def __eq__(self, other: object) -> bool:
        # As JAX: entry by entry (P('x') differs from P('x', None)), never equal to tuples.
        return isinstance(other, PartitionSpec) and self._parts == other._parts

    def __hash__(self) -> int:
        return hash(self._parts)

    def axis_names(self) -> list[str]:
        """Every mesh axis name the spec uses, in order."""
        out: list[str] = []
        for p in self._parts:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, tuple):
                out.extend(p)
        return out


P = PartitionSpec


class Mesh:
    """An array of devices with named axes.

    >>> import funcgrad as jax
    >>> m = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("data", "model"))
    >>> m.shape
    OrderedDict([('data', 1), ('model', 1)])
    """

    def __init__(self, devices: Any, axis_names: str | Sequence[str],
                 axis_types: Any = None) -> None:
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        devs = np.asarray(devices, dtype=object)
        if devs.ndim != len(names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length "
                f"of its second argument (`axis_names`), but got devices.ndim == {devs.ndim} "
                f"and len(axis_names) == {len(names)}.")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh axis names must be unique, got {names}")
        types = (AxisType.Explicit,) * len(names) if axis_types is None else (
            (axis_types,) * len(names) if isinstance(axis_types, AxisType)
            else tuple(axis_types))
        if len(types) != len(names):
            raise ValueError(f"Number of axis names {len(names)} should match the number of "
                             f"axis types {len(types)}")
        self.devices = devs
        self.axis_names = names
        self.axis_types = types
        self._stack: list[Any] = []

    @property
    def shape(self) -> OrderedDict[str, int]:
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def device_ids(self) -> Any:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list[Device]:
        return list(self.devices.flat)

    @property
    def abstract_mesh(self) -> Mesh:
        return self

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types
                and self.devices.shape == other.devices.shape
                and list(self.devices.flat) == list(other.devices.flat))

    def __hash__(self) -> int:
        return hash((self.axis_names, self.axis_types, self.devices.shape,
                     tuple(self.devices.flat)))

    def __repr__(self) -> str:
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={self.axis_types})")

    def __str__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({axes}, axis_types={self.axis_types})"

    def __enter__(self) -> Mesh:
        self._stack.append(set_mesh(self))
        self._stack[-1].__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.pop().__exit__(*exc)


class Sharding:
    """How an array's data is laid out over devices (base class)."""

    memory_kind: str | None = "device"

    @property
    def device_set(self) -> set[Device]:
        raise TypeError(f"{type(self).__name__} does not say its devices")

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each shard of an array of ``global_shape``."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Device, Any]:
        """Each device and the index of the array it holds (all of it, on one device)."""
        idx = tuple(slice(None) for _ in global_shape)
        return {d: idx for d in self.device_set}

    addressable_devices_indices_map = devices_indices_map

    def _device(self) -> Device:
        return next(iter(self.device_set))


class SingleDeviceSharding(Sharding):
    """All of an array on one device.

    >>> import funcgrad as jax
    >>> SingleDeviceSharding(jax.devices()[0])
    SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """

    def __init__(self, device: Device, *, memory_kind: str | None = None) -> None:
        self._dev = device
        self.memory_kind = memory_kind or "device"

    @property
    def device_set(self) -> set[Device]:
        return {self._dev}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and self._dev == other._dev

    def __hash__(self) -> int:
        return hash(self._dev)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._dev!r}, memory_kind={self.memory_kind})"


class DuplicateSpecError(ValueError):
    """A mesh axis used for more than one dimension of a PartitionSpec."""


class NamedSharding(Sharding):
    """An array split over a mesh as a PartitionSpec says.

    >>> import funcgrad as jax
    >>> mesh = jax.make_mesh((1,), ("x",))
    >>> NamedSharding(mesh, P("x")).spec
    P('x',)
    """

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None
                 ) -> None:
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding's spec must be a PartitionSpec, got {spec!r}")
        _check_spec(spec, mesh)
        self.mesh = mesh
        self.spec = spec
        self.memory_kind = memory_kind or "device"

    @property
    def device_set(self) -> set[Device]:
        return set(self.mesh.devices.flat)

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        if len(self.spec) > len(global_shape):
            raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank "
                             f"{len(global_shape)}")
        sizes = self.mesh.shape
        out = list(global_shape)
        for i, p in enumerate(self.spec):
            names = (p,) if isinstance(p, str) else p if isinstance(p, tuple) else ()
            n = math.prod(sizes[a] for a in names)
            if out[i] % n:
                raise ValueError(f"dimension {i} of size {out[i]} does not divide into {n} "
                                 f"shards ({self.spec})")
            out[i] //= n
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec and self.memory_kind == other.memory_kind)

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec, self.memory_kind))

    def __repr__(self) -> str:
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec}, "
                f"memory_kind={self.memory_kind})")


def _check_spec(spec: PartitionSpec, mesh: Mesh, what: str = "") -> None:
    seen: set[str] = set()
    for name in spec.axis_names():
        if name not in mesh.axis_names:
            raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: "
                             f"{mesh.axis_names}.")
        if name in seen:
            raise DuplicateSpecError(
                "A single NamedSharding spec specification can map every mesh axis to at most "
                f"one positional dimension, but {spec} has duplicate entries for `{name}`")
        seen.add(name)


class Shard:
    """One shard of an array: its device, the index it covers and its data.

    >>> import funcgrad.numpy as jnp
    >>> jnp.arange(3.0).addressable_shards[0].index
    (slice(None, None, None),)
    """

    def __init__(self, device: Device, sharding: Sharding, global_shape: Sequence[int],
                 data: Any = None) -> None:
        self.device = device
        self._sharding = sharding
        self._global_shape = tuple(global_shape)
        self.data = data

    @property
    def index(self) -> tuple[slice, ...]:
        return self._sharding.devices_indices_map(self._global_shape)[self.device]

    @property
    def replica_id(self) -> int:
        return 0

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


def sharding_of(x: Any) -> SingleDeviceSharding:
    """The sharding of a concrete array: its device, whole (``Array.sharding``)."""
    return SingleDeviceSharding(device_of(x._value))


def shards_of(x: Any) -> list[Shard]:
    """``Array.addressable_shards``: the one shard of an array."""
    s = sharding_of(x)
    return [Shard(s._device(), s, x.shape, x)]


# ------------------------------------------------------------------------ the mesh context


class _MeshContext(threading.local):
    def __init__(self) -> None:
        self.stack: list[Mesh] = []


_context = _MeshContext()


def get_mesh() -> Mesh | None:
    """The mesh set by :func:`set_mesh` (None outside one)."""
    return _context.stack[-1] if _context.stack else None


get_abstract_mesh = get_mesh


class set_mesh:  # noqa: N801 - JAX's name, a context manager and a setter in one
    """Make ``mesh`` the context mesh: for the rest of the program, or inside a ``with``.

    >>> import funcgrad as jax
    >>> mesh = jax.make_mesh((1,), ("x",))
    >>> with jax.set_mesh(mesh):
    ...     jax.sharding.get_mesh() is mesh
    True
    """

    def __init__(self, mesh: Mesh) -> None:
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh, got {type(mesh).__name__}")
        self.mesh = mesh
        self._prev = list(_context.stack)
        # Called alone, it sets the mesh for good; a ``with`` restores the previous one.
        _context.stack[:] = [*self._prev, mesh]

    def __enter__(self) -> Mesh:
        return self.mesh

    def __exit__(self, *exc: Any) -> None:
        _context.stack[:] = self._prev


@contextlib.contextmanager
def use_mesh(mesh: Mesh) -> Iterator[None]:
    """``set_mesh`` as a context manager only."""
    with set_mesh(mesh):
        yield


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None,
              *, devices: Sequence[Device] | None = None) -> Mesh:
    """A mesh of the given axis sizes over the devices (their product must be the number
    of devices used).

    >>> import funcgrad as jax
    >>> jax.make_mesh((1, 1), ("data", "model")).axis_names
    ('data', 'model')
    """
    from funcgrad.devices import devices as all_devices  # noqa: PLC0415

    devs = list(devices) if devices is not None else all_devices()[:1]
    shape = tuple(int(s) for s in axis_shapes)
    if len(shape) != len(tuple(axis_names)):
        raise ValueError(
            "Mesh requires the ndim of its first argument (`devices`) to equal the length of "
            f"its second argument (`axis_names`), but got devices.ndim == {len(shape)} and "
            f"len(axis_names) == {len(tuple(axis_names))}.")
    n = math.prod(shape)
    if len(devs) < n:
        raise ValueError(f"Number of devices {len(devs)} must be >= the product of "
                         f"mesh_shape {shape}")
    arr = np.empty(n, dtype=object)
    arr[:] = devs[:n]
    return Mesh(arr.reshape(shape), tuple(axis_names), axis_types)


def make_single_device_sharding(device: Device) -> SingleDeviceSharding:
    return SingleDeviceSharding(device)


__all__ = ["AxisType", "DuplicateSpecError", "Mesh", "NamedSharding", "P", "PartitionSpec",
           "Shard", "Sharding", "SingleDeviceSharding", "get_abstract_mesh", "get_mesh",
           "make_mesh", "make_single_device_sharding", "set_mesh", "use_mesh"]
