"""``cupy.cuda.nccl`` for the emulator: NCCL's calls on "device" pointers, carried out by
MPI (mpi4py) between the processes of an ``mpiexec`` run, so that funcgrad's NCCL code runs
in CI without a GPU.

The names, signatures and constants are those of the pinned CuPy's
``cupy_backends.cuda.libs.nccl`` (CuPy 14: ``get_unique_id()`` gives 128 bytes). Device
memory is the emulator's NumPy buffers, reached through the pointer NCCL is given; no call
counts as a host transfer, since NCCL moves data device to device. ``CALLS`` counts the
calls made, by name.

What the emulator cannot do as NCCL does: the unique id names the process that made it,
and that process must join the communicator (real NCCL serves the id from a bootstrap
thread, member or not); work runs when it is called (stream order is program order).
"""

from __future__ import annotations

import collections
import ctypes
import os
from typing import Any

import numpy as np

available = True

NCCL_INT8 = NCCL_CHAR = 0
NCCL_UINT8 = 1
NCCL_INT32 = NCCL_INT = 2
NCCL_UINT32 = 3
NCCL_INT64 = 4
NCCL_UINT64 = 5
NCCL_FLOAT16 = NCCL_HALF = 6
NCCL_FLOAT32 = NCCL_FLOAT = 7
NCCL_FLOAT64 = NCCL_DOUBLE = 8
NCCL_BFLOAT16 = 9
NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4

_DTYPES: dict[int, Any] = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64,
                           5: np.uint64, 6: np.float16, 7: np.float32, 8: np.float64}
_ERRORS = {2: "NCCL_ERROR_SYSTEM_ERROR", 4: "NCCL_ERROR_INVALID_ARGUMENT",
           5: "NCCL_ERROR_INVALID_USAGE"}
_VERSION = 23206  # the nvidia-nccl-cu13 wheel the `cuda` extra installs (2.32.6)

CALLS: collections.Counter[str] = collections.Counter()
# Point-to-point calls made between groupStart() and groupEnd(), posted together at the end.
_GROUP: dict[str, Any] = {"depth": 0, "ops": []}

try:  # bfloat16, where ml_dtypes (a JAX dependency) is installed
    import ml_dtypes

    _DTYPES[9] = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - the dev environment has it
    pass


class NcclError(RuntimeError):
    """What NCCL reports, with its status code."""

    __module__ = "cupy_backends.cuda.libs.nccl"

    def __init__(self, status: int, detail: str = "") -> None:
        self.status = status
        name = _ERRORS.get(status, "NCCL_ERROR")
        super().__init__(f"{name}: {detail}" if detail else name)


class NcclConfig:
    """``NcclConfig(split_share=0)``: accepted, as NCCL's defaults."""

    def __init__(self, split_share: int = 0) -> None:
        self.split_share = split_share


def get_version() -> int:
    return _VERSION


def get_build_version() -> int:
    return _VERSION


def _mpi() -> Any:
    from mpi4py import MPI  # noqa: PLC0415

    return MPI


def get_unique_id() -> bytes:
    """128 bytes: this process's MPI rank, a rendezvous tag, and random bytes."""
    world = _mpi().COMM_WORLD.Get_rank()
    tag = 1000 + int.from_bytes(os.urandom(2), "little") % 20000
    return (world.to_bytes(4, "little") + tag.to_bytes(4, "little") + os.urandom(120))


def groupStart() -> None:  # noqa: N802 - NCCL's name
    _GROUP["depth"] += 1


def groupEnd() -> None:  # noqa: N802
    if _GROUP["depth"] == 0:
        raise NcclError(5, "groupEnd without groupStart")
    _GROUP["depth"] -= 1
    if _GROUP["depth"]:
        return
    ops, _GROUP["ops"] = _GROUP["ops"], []
    requests = [op() for op in ops]
    _mpi().Request.Waitall(requests)


def _view(ptr: int, count: int, datatype: int) -> np.ndarray:
    """The "device" memory at ``ptr``: ``count`` elements of ``datatype``."""
    if datatype not in _DTYPES:
        raise NcclError(4, f"unknown datatype {datatype}")
    dtype = np.dtype(_DTYPES[datatype])
    if count == 0:
        return np.empty(0, dtype)
    if not ptr:
        raise NcclError(4, "null buffer")
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype)


def _combine(parts: np.ndarray, op: int, n: int) -> np.ndarray:
    """The reduction of the processes' rows, in rank order."""
    if op == NCCL_SUM:
        return parts.sum(0, dtype=parts.dtype)  # type: ignore[no-any-return]
    if op == NCCL_PROD:
        return parts.prod(0, dtype=parts.dtype)  # type: ignore[no-any-return]
    if op == NCCL_MAX:
        return parts.max(0)  # type: ignore[no-any-return]
    if op == NCCL_MIN:
        return parts.min(0)  # type: ignore[no-any-return]
    if op == NCCL_AVG:
        total = parts.sum(0, dtype=parts.dtype)
        if parts.dtype.kind in "iu":
            return (total // n).astype(parts.dtype)  # type: ignore[no-any-return]
        return (total / n).astype(parts.dtype)  # type: ignore[no-any-return]
    raise NcclError(4, f"unknown reduction {op}")


class NcclCommunicator:
    """``NcclCommunicator(ndev, commId, rank, config=None)``: this process's member of the
    communicator of ``ndev`` processes that share ``commId``."""

    __module__ = "cupy_backends.cuda.libs.nccl"

    def __init__(self, ndev: int, commId: bytes, rank: int,  # noqa: N803 - CuPy's name
                 config: NcclConfig | None = None) -> None:
        from fakecupy._array import current_device_id  # noqa: PLC0415

        if not isinstance(commId, bytes) or len(commId) != 128:
            raise TypeError("commId must be the 128 bytes of get_unique_id()")
        if not 0 <= rank < ndev:
            raise NcclError(4, f"rank {rank} out of range for {ndev} ranks")
        mpi = _mpi()
        self._device = current_device_id()
        self._closed = False
        if ndev == 1:
            self._mpi = mpi.COMM_SELF.Dup()
            return
        world = mpi.COMM_WORLD
        creator = int.from_bytes(commId[:4], "little")
        tag = int.from_bytes(commId[4:8], "little")
        me = world.Get_rank()
        # Rendezvous at the id's maker: it learns every member's world rank and tells them
        # all the order (NCCL's bootstrap does the same over sockets).
        if me == creator:
            members = {rank: me}
            for _ in range(ndev - 1):
                peer_rank, peer_world, peer_id = world.recv(source=mpi.ANY_SOURCE, tag=tag)
                if peer_id != commId:
                    raise NcclError(5, "a process joined with another unique id")
                members[peer_rank] = peer_world
            if sorted(members) != list(range(ndev)):
                raise NcclError(5, f"ranks {sorted(members)} for {ndev} processes")
            order = [members[r] for r in range(ndev)]
            for peer in order:
                if peer != me:
                    world.send(order, dest=peer, tag=tag)
        else:
            world.send((rank, me, commId), dest=creator, tag=tag)
            order = world.recv(source=creator, tag=tag)
        self._mpi = world.Create_group(world.Get_group().Incl(order), tag)

    # --------------------------------------------------------------- queries
    def size(self) -> int:
        return int(self._mpi.Get_size())

    def rank_id(self) -> int:
        return int(self._mpi.Get_rank())

    def device_id(self) -> int:
        return self._device

    def check_async_error(self) -> None:
        return None

    def destroy(self) -> None:
        if not self._closed:
            self._closed = True
            self._mpi.Free()

    def abort(self) -> None:
        self.destroy()

    def _live(self, name: str) -> Any:
        if self._closed:
            raise NcclError(5, f"{name} on a destroyed communicator")
        CALLS[name] += 1
        return self._mpi

    # ----------------------------------------------------------- collectives
    def _gather(self, comm: Any, data: np.ndarray) -> np.ndarray:
        n = comm.Get_size()
        parts = np.empty((n, data.size), data.dtype)
        comm.Allgather(data.view(np.uint8), parts.view(np.uint8))
        return parts

    def allReduce(self, sendbuf: int, recvbuf: int, count: int, datatype: int,  # noqa: N802
                  op: int, stream: int) -> None:
        comm = self._live("allReduce")
        parts = self._gather(comm, _view(sendbuf, count, datatype).copy())
        _view(recvbuf, count, datatype)[...] = _combine(parts, op, comm.Get_size())

    def reduce(self, sendbuf: int, recvbuf: int, count: int, datatype: int, op: int,
               root: int, stream: int) -> None:
        comm = self._live("reduce")
        parts = self._gather(comm, _view(sendbuf, count, datatype).copy())
        if comm.Get_rank() == root:
            _view(recvbuf, count, datatype)[...] = _combine(parts, op, comm.Get_size())

    def broadcast(self, sendbuff: int, recvbuff: int, count: int, datatype: int,
                  root: int, stream: int) -> None:
        comm = self._live("broadcast")
        data = (_view(sendbuff, count, datatype).copy() if comm.Get_rank() == root
                else np.empty(count, _DTYPES[datatype]))
        comm.Bcast(data.view(np.uint8), root=root)
        _view(recvbuff, count, datatype)[...] = data

    def bcast(self, buff: int, count: int, datatype: int, root: int, stream: int) -> None:
        self.broadcast(buff, buff, count, datatype, root, stream)

    def allGather(self, sendbuf: int, recvbuf: int, count: int, datatype: int,  # noqa: N802
                  stream: int) -> None:
        comm = self._live("allGather")
        parts = self._gather(comm, _view(sendbuf, count, datatype).copy())
        _view(recvbuf, count * comm.Get_size(), datatype)[...] = parts.reshape(-1)

    def reduceScatter(self, sendbuf: int, recvbuf: int, recvcount: int,  # noqa: N802
                      datatype: int, op: int, stream: int) -> None:
        comm = self._live("reduceScatter")
        n = comm.Get_size()
        parts = self._gather(comm, _view(sendbuf, recvcount * n, datatype).copy())
        total = _combine(parts, op, n).reshape(n, recvcount)
        _view(recvbuf, recvcount, datatype)[...] = total[comm.Get_rank()]

    # -------------------------------------------------------- point to point
    def send(self, sendbuf: int, count: int, datatype: int, peer: int, stream: int) -> None:
        comm = self._live("send")
        data = _view(sendbuf, count, datatype).copy()
        if _GROUP["depth"]:
            _GROUP["ops"].append(lambda: comm.Isend(data.view(np.uint8), dest=peer, tag=11))
        else:
            comm.Send(data.view(np.uint8), dest=peer, tag=11)

    def recv(self, recvbuf: int, count: int, datatype: int, peer: int, stream: int) -> None:
        comm = self._live("recv")
        target = _view(recvbuf, count, datatype)
        if _GROUP["depth"]:
            _GROUP["ops"].append(lambda: comm.Irecv(target.view(np.uint8), source=peer,
                                                    tag=11))
        else:
            comm.Recv(target.view(np.uint8), source=peer, tag=11)

    def commSplit(self, color: int, key: int,  # noqa: N802
                  config: NcclConfig | None = None) -> NcclCommunicator | None:
        """The communicator of the members passing ``color`` (-1: none), ranked by ``key``."""
        comm = self._live("commSplit")
        mpi = _mpi()
        sub = comm.Split(mpi.UNDEFINED if color == -1 else color, key)
        if sub == mpi.COMM_NULL:
            return None
        child = object.__new__(NcclCommunicator)
        child._device = self._device
        child._closed = False
        child._mpi = sub
        return child


__all__ = ["CALLS", "NcclCommunicator", "NcclConfig", "NcclError", "available",
           "get_build_version", "get_unique_id", "get_version", "groupEnd", "groupStart"]
