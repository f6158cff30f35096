"""The processes of a multi-process run, as the engine sees them.

One process runs per device. ``funcgrad.distributed.initialize()`` installs a
``Communicator`` (MPI today) here; ``pmap`` binds its axis name to it for the
duration of a call, and the collective primitives (``psum`` and friends), finding
their axis name bound here, reduce across the processes through it. The engine
knows only this interface; the MPI code lives with the faces that create it.

>>> from funcgrad import processes
>>> processes.process_count(), processes.process_index()
(1, 0)
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any


class Communicator(ABC):
    """What the collectives need from the processes: rank, size and the data movers.

    Every method takes and returns host or device arrays of the backend in use; all
    processes call the same methods in the same order (MPI's rule).
    """

    @property
    @abstractmethod
    def rank(self) -> int:
        """This process's index, 0 .. size - 1."""

    @property
    @abstractmethod
    def size(self) -> int:
        """How many processes take part."""

    @abstractmethod
    def allreduce(self, x: Any, op: str) -> Any:
        """Every process gets the elementwise reduction (``op`` in sum, max, min,
        prod) of all processes' ``x``."""

    def allreduce_inplace(self, buf: Any, op: str) -> None:
        """``allreduce`` written back into the writable array ``buf``."""
        buf[...] = self.allreduce(buf, op)

    @abstractmethod
    def allgather(self, x: Any) -> Any:
        """Every process gets all processes' ``x`` stacked on a new leading axis."""

    @abstractmethod
    def broadcast(self, x: Any, root: int) -> Any:
        """Every process gets ``root``'s ``x``."""

    @abstractmethod
    def reduce_scatter(self, x: Any, op: str) -> Any:
        """The reduction of all ``x`` (leading axis of length ``size``); process ``r``
        gets row ``r``."""

    @abstractmethod
    def alltoall(self, x: Any) -> Any:
        """Row ``j`` of process ``i``'s ``x`` (leading axis of length ``size``) becomes row
        ``i`` of process ``j``'s result."""

    @abstractmethod
    def permute(self, x: Any, perm: Sequence[tuple[int, int]]) -> Any:
        """Send ``x`` along each (source, destination) pair; a process that receives
        nothing gets zeros."""

    @abstractmethod
    def send(self, x: Any, dest: int, tag: int) -> None:
        """Send ``x`` to process ``dest`` (blocks until it may be reused)."""

    @abstractmethod
    def recv(self, like: Any, source: int | None, tag: int | None) -> tuple[Any, int]:
        """Receive an array shaped as ``like`` from ``source`` (any when None); gives the
        array and the sender's rank."""

    def reduce(self, x: Any, op: str, root: int) -> Any:
        """Process ``root`` gets the reduction of all processes' ``x``; what the others get
        is unspecified (NCCL leaves it so)."""
        return self.allreduce(x, op)

    @abstractmethod
    def split(self, color: int | None, key: int) -> Communicator | None:
        """The communicator of the processes that pass the same ``color``, ranked by
        ``key`` (ties by rank here); a process passing ``None`` joins none and gets None.
        Every process of this communicator calls it (MPI's ``Comm_split``)."""

    def close(self) -> None:
        """Release what the communicator holds (threads, device communicators); the
        processes stay up. A communicator holding nothing has nothing to do."""
        return None

    @abstractmethod
    def barrier(self) -> None:
        """Wait until every process gets here."""

    @abstractmethod
    def abort(self, code: int) -> None:
        """Stop every process of the run with exit status ``code``."""


# The communicator of this run (one slot, so set_communicator needs no global statement).
_STATE: dict[str, Communicator | None] = {"comm": None}
# Axis names that stand for the processes now (pmap binds its name while it runs).
_PROCESS_AXES: list[Any] = []
# Every named mapped axis in scope now, innermost last: (name, size). vmap(axis_name=)
# and pmap bind theirs while their function runs; collectives whose result shape depends
# on the axis size (all_gather, psum_scatter) read it here.
_AXIS_SIZES: list[tuple[Any, int]] = []


def set_communicator(comm: Communicator | None) -> None:
    """Install (or remove, with None) the communicator of this run."""
    _STATE["comm"] = comm


def communicator() -> Communicator | None:
    """The communicator of this run, or None in a single-process run."""
    return _STATE["comm"]


def process_count() -> int:
    """How many processes take part (1 without ``funcgrad.distributed.initialize()``)."""
    comm = _STATE["comm"]
    return 1 if comm is None else comm.size


def process_index() -> int:
    """This process's index among them (0 without ``initialize()``)."""
    comm = _STATE["comm"]
    return 0 if comm is None else comm.rank


@contextlib.contextmanager
def bind_process_axis(name: Any) -> Iterator[None]:
    """Within the block, collectives naming ``name`` act across the processes."""
    _PROCESS_AXES.append(name)
    _AXIS_SIZES.append((name, process_count()))
    try:
        yield
    finally:
        _AXIS_SIZES.pop()
        _PROCESS_AXES.pop()


@contextlib.contextmanager
def bind_axis(name: Any, size: int) -> Iterator[None]:
    """Within the block, the mapped axis ``name`` has ``size`` members (None: no name)."""
    if name is None:
        yield
        return
    _AXIS_SIZES.append((name, size))
    try:
        yield
    finally:
        _AXIS_SIZES.pop()


def axis_size(name: Any) -> int:
    """The number of members of the named mapped axis in scope (JAX's NameError if none).

    >>> from funcgrad import processes
    >>> with processes.bind_axis("i", 3):
    ...     processes.axis_size("i")
    3
    """
    names = name if isinstance(name, tuple) else (name,)
    size = 1
    for n in names:
        for bound, s in reversed(_AXIS_SIZES):
            if bound == n:
                size *= s
                break
        else:
            raise NameError(f"unbound axis name: {n}")
    return size


def is_process_axis(name: Any) -> bool:
    return name in _PROCESS_AXES


__all__ = ["Communicator", "axis_size", "bind_axis", "bind_process_axis", "communicator",
           "is_process_axis", "process_count", "process_index", "set_communicator"]
