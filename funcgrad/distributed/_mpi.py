"""The MPI communicator (mpi4py): what ``funcgrad.processes.Communicator`` asks, on
host buffers.

Arrays travel as contiguous NumPy buffers. A CuPy array goes to the NCCL communicator
(``funcgrad.distributed._nccl``, device to device) when CuPy has NCCL and ``device_collectives``
is on, through the host otherwise. Dtypes MPI has no type for (float16, bfloat16, bool)
travel as float32 / uint8 and come back in their own dtype.

Timeouts: every collective runs MPI's blocking call (its tuned algorithms, the fastest)
after writing what it is and when it started into one slot; a watchdog thread (started
when the run has more than one process and a timeout is set) reads that slot a few times
per timeout and, when a collective has run past the limit, names it and aborts the run,
as PyTorch's NCCL watchdog does. The collective itself pays two attribute stores.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.processes import Communicator

# PyTorch's defaults: 30 minutes (gloo, mpi), 10 minutes for NCCL (torch.distributed's
# default_pg_timeout / default_pg_nccl_timeout).
DEFAULT_TIMEOUT_S = 1800.0
DEFAULT_NCCL_TIMEOUT_S = 600.0
# Element types MPI reduces natively (the fast path takes only these).
_MPI_CHARS = frozenset("fdbBhHiIlLqQ")


def timeout_from(value: float | None, default: float) -> float | None:
    """The collective timeout in seconds: ``value`` when given, else
    ``FUNCGRAD_COLLECTIVE_TIMEOUT``, else ``default``; 0 (or "none") means no limit.

    >>> timeout_from(5, 1800.0)
    5.0
    >>> timeout_from(0, 1800.0) is None
    True
    """
    env = os.environ.get("FUNCGRAD_COLLECTIVE_TIMEOUT", "")
    raw: Any = value if value is not None else (env if env.strip() else default)
    if isinstance(raw, str) and raw.strip().lower() in ("none", "inf", "off"):
        return None
    seconds = float(raw)
    if seconds < 0:
        raise ValueError(f"a collective timeout must be >= 0 seconds, got {seconds:g}")
    return None if seconds == 0 else seconds


_WIDEN = {np.dtype(np.float16): np.dtype(np.float32)}


def _host(x: Any) -> tuple[np.ndarray, Any, Any]:
    """``x`` as a contiguous host array MPI can type, its dtype, and its module."""
    module = type(x).__module__.split(".")[0]
    xp: Any = np
    if module == "cupy":
        import cupy  # noqa: PLC0415

        xp, x = cupy, cupy.asnumpy(x)
    a = np.ascontiguousarray(np.asarray(x))
    dtype = a.dtype
    if dtype in _WIDEN:
        a = a.astype(_WIDEN[dtype])
    elif dtype == np.bool_:
        a = a.astype(np.uint8)
    elif dtype.kind == "V" or dtype.name == "bfloat16":
        a = a.astype(np.float32)
    return a, dtype, xp


def _back(a: np.ndarray, dtype: Any, xp: Any) -> Any:
    out = a.astype(dtype, copy=False) if a.dtype != dtype else a
    return out if xp is np else xp.asarray(out)


class _Pending:
    """An MPI request and the buffer it reads, kept alive until the request is done."""

    def __init__(self, request: Any, buffer: np.ndarray) -> None:
        self.request = request
        self.buffer = buffer

    def Wait(self) -> None:  # noqa: N802 - mpi4py's request API
        self.request.Wait()

    def Test(self) -> bool:  # noqa: N802
        return bool(self.request.Test())


class _Watchdog(threading.Thread):
    """Aborts the run when one collective of the communicator has run past its timeout.

    The collectives only write their name into ``busy`` (and count themselves); this
    thread samples (busy, count) every ``timeout / 8`` (at most 1 s, at least 10 ms) and
    times a pair from when it first saw it, so the limit is kept within one sample."""

    def __init__(self, comm: MPICommunicator) -> None:
        super().__init__(name="funcgrad-collective-watchdog", daemon=True)
        self.comm = comm
        self.stop = threading.Event()

    def run(self) -> None:
        comm = self.comm
        seen: tuple[str, int] | None = None
        since = 0.0
        while True:
            limit = comm.timeout
            if self.stop.wait(1.0 if limit is None else min(1.0, max(limit / 8, 0.01))):
                return
            what, number = comm.busy, comm._count
            if limit is None or what is None:
                seen = None
                continue
            now = time.monotonic()
            if seen != (what, number):
                seen, since = (what, number), now
                continue
            if now - since > limit:
                sys.stderr.write(
                    f"[funcgrad process {comm.rank}] collective {what} (number {number}) "
                    f"did not complete within {limit:g} s: another process is not taking "
                    f"part (it failed, or called a different collective); aborting the "
                    f"run\n")
                sys.stderr.flush()
                try:
                    comm.comm.Abort(1)
                finally:
                    os._exit(1)


class MPICommunicator(Communicator):
    """``funcgrad.processes.Communicator`` over an mpi4py communicator (COMM_WORLD by
    default). ``timeout``: seconds a collective may take before the run is aborted (None:
    ``FUNCGRAD_COLLECTIVE_TIMEOUT`` or 30 minutes; 0: no limit)."""

    def __init__(self, comm: Any = None, timeout: float | None = None,
                 debug: bool | None = None, device_collectives: bool = True) -> None:
        from mpi4py import MPI  # noqa: PLC0415

        self._mpi = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD,
                     "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR}
        self._rank = int(self.comm.Get_rank())
        self._size = int(self.comm.Get_size())
        self.timeout: float | None = timeout_from(timeout, DEFAULT_TIMEOUT_S)
        # Debug mode: before each collective the ranks compare what they are about to do
        # (operation, shape, dtype, count), so a mismatch is named instead of hanging or
        # mixing up data.
        self.debug = (os.environ.get("FUNCGRAD_DISTRIBUTED_DEBUG", "") not in ("", "0")
                      if debug is None else debug)
        # CuPy arrays go device to device through NCCL when CuPy has it (created at the
        # first such collective, which every process reaches together).
        self.device_collectives = device_collectives
        self._device: Any = None
        self._count = 0
        # The name of the collective running now (its number is _count); read by the
        # watchdog.
        self.busy: str | None = None
        self._watchdog: _Watchdog | None = None
        if self._size > 1:
            self._watchdog = _Watchdog(self)
            self._watchdog.start()

    def set_timeout(self, seconds: float | None) -> None:
        """Change the collective timeout (None or 0: no limit)."""
        self.timeout = None if not seconds else float(seconds)

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.stop.set()
            self._watchdog = None
        if self._device is not None:
            self._device.close_device()
            self._device = None

    def _run(self, what: str, blocking: Callable[[], Any]) -> None:
        """One collective, watched: MPI's blocking call with its name in ``busy``."""
        self.busy = what
        try:
            blocking()
        finally:
            self.busy = None

    def _wait(self, requests: Sequence[Any], what: str) -> None:
        self._run(what, lambda: self._mpi.Request.Waitall(list(requests)))

    def inplace_allreduce(self, op: str) -> tuple[Any, ...] | None:
        """What a face needs to all-reduce a C-contiguous, writable NumPy buffer of a type
        MPI reduces natively, in place, with the fewest Python steps: ``(self,
        comm.Allreduce, MPI.IN_PLACE, the MPI op, the collective's name)``. The caller
        counts the collective (``_count += 1``), names it in ``busy`` for the watchdog,
        calls ``Allreduce(IN_PLACE, buf, op)`` and clears ``busy`` (mpi4py refuses a
        buffer that is not so, with BufferError or ValueError, before communicating).
        None in debug mode, where every collective is compared first. The torch face's
        ``all_reduce`` is the example.
        """
        if self.debug:
            return None
        return (self, self.comm.Allreduce, self._mpi.IN_PLACE, self._ops[op],
                f"allreduce({op})")

    def _nccl(self, x: Any) -> Any:
        """The NCCL communicator for the CuPy array ``x``, or None (host path)."""
        if not self.device_collectives or type(x).__module__.split(".")[0] != "cupy":
            return None
        if self._device is None:
            from funcgrad.distributed._nccl import NcclCommunicator, nccl_available  # noqa: PLC0415

            if not nccl_available():
                self.device_collectives = False
                return None
            self._device = NcclCommunicator(self)
        return self._device

    def _agree(self, what: str, a: np.ndarray | None) -> None:
        """Debug mode: every rank must be calling the same collective on the same shape and
        dtype; the first difference is named on every rank."""
        self._count += 1
        if not self.debug:
            return
        mine = (what, None if a is None else tuple(a.shape),
                None if a is None else str(a.dtype), self._count)
        everyone = self.comm.allgather(mine)
        if any(o != mine for o in everyone):
            from funcgrad.distributed import DistributedError  # noqa: PLC0415

            table = "; ".join(f"rank {r}: {o[0]} shape={o[1]} dtype={o[2]} call #{o[3]}"
                              for r, o in enumerate(everyone))
            raise DistributedError(f"the processes disagree on collective #{self._count}: "
                                   f"{table}")

    @property
    def rank(self) -> int:
        return self._rank

    @property
    def size(self) -> int:
        return self._size

    def allreduce(self, x: Any, op: str) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.allreduce(x, op)
        a, dtype, xp = _host(x)
        out = np.empty_like(a)
        if dtype == np.bool_ and op in ("sum", "max"):
            op = "bor"
        elif dtype == np.bool_ and op in ("min", "prod"):
            op = "band"
        self._agree(f"allreduce({op})", a)
        self._run(f"allreduce({op})", lambda: self.comm.Allreduce(a, out, self._ops[op]))
        return _back(out, dtype, xp)

    def allreduce_inplace(self, buf: Any, op: str) -> None:
        device = self._nccl(buf)
        if device is not None:
            device.allreduce_inplace(buf, op)
            return
        if (type(buf) is not np.ndarray or not buf.flags.c_contiguous
                or not buf.flags.writeable or buf.dtype.char not in _MPI_CHARS):
            buf[...] = self.allreduce(buf, op)
            return
        self._agree(f"allreduce({op})", buf)
        inplace = self._mpi.IN_PLACE
        self._run(f"allreduce({op})", lambda: self.comm.Allreduce(inplace, buf, self._ops[op]))

    def reduce(self, x: Any, op: str, root: int) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.reduce(x, op, root)
        return self.allreduce(x, op)

    def allgather(self, x: Any) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.allgather(x)
        a, dtype, xp = _host(x)
        out = np.empty((self.size, *a.shape), a.dtype)
        self._agree("allgather", a)
        self._run("allgather", lambda: self.comm.Allgather(a, out))
        return _back(out, dtype, xp)

    def broadcast(self, x: Any, root: int) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.broadcast(x, root)
        a, dtype, xp = _host(x)
        buf = np.array(a, copy=True)
        self._agree(f"broadcast(root={root})", a)
        self._run("broadcast", lambda: self.comm.Bcast(buf, root=root))
        return _back(buf, dtype, xp)

    def reduce_scatter(self, x: Any, op: str) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.reduce_scatter(x, op)
        a, dtype, xp = _host(x)
        if a.shape[:1] != (self.size,):
            raise ValueError(f"reduce_scatter needs a leading axis of {self.size} (one row per "
                             f"process), got shape {a.shape}")
        out = np.empty(a.shape[1:], a.dtype)
        self._agree(f"reduce_scatter({op})", a)
        self._run("reduce_scatter",
                  lambda: self.comm.Reduce_scatter_block(a, out, op=self._ops[op]))
        return _back(out, dtype, xp)

    def alltoall(self, x: Any) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.alltoall(x)
        a, dtype, xp = _host(x)
        out = np.empty_like(a)
        self._agree("alltoall", a)
        self._run("alltoall", lambda: self.comm.Alltoall(a, out))
        return _back(out, dtype, xp)

    def permute(self, x: Any, perm: Sequence[tuple[int, int]]) -> Any:
        device = self._nccl(x)
        if device is not None:
            return device.permute(x, perm)
        a, dtype, xp = _host(x)
        out = np.zeros_like(a)
        me = self.rank
        self._agree("ppermute", a)
        reqs = [self.comm.Isend(a, dest=dst, tag=7) for src, dst in perm if src == me]
        reqs += [self.comm.Irecv(out, source=src, tag=7) for src, dst in perm if dst == me]
        self._wait(reqs, "ppermute")
        return _back(out, dtype, xp)

    def send(self, x: Any, dest: int, tag: int) -> None:
        device = self._nccl(x)
        if device is not None:
            device.send(x, dest, tag)
            return
        a, _, _ = _host(x)
        self.comm.Send(a, dest=dest, tag=tag)

    def recv(self, like: Any, source: int | None, tag: int | None) -> tuple[Any, int]:
        device = self._nccl(like)
        if device is not None:
            return device.recv(like, source, tag)
        a, dtype, xp = _host(like)
        buf = np.empty_like(a)
        status = self._mpi.Status()
        self.comm.Recv(buf, source=self._mpi.ANY_SOURCE if source is None else source,
                       tag=self._mpi.ANY_TAG if tag is None else tag, status=status)
        return _back(buf, dtype, xp), int(status.Get_source())

    def isend(self, x: Any, dest: int, tag: int) -> Any:
        """Start sending ``x``; the request's ``Wait()`` finishes it."""
        device = self._nccl(x)
        if device is not None:
            return device.isend(x, dest, tag)
        a, _, _ = _host(x)
        return _Pending(self.comm.Isend(a, dest=dest, tag=tag), a)

    def recv_buffer(self, like: Any) -> Any:
        """An empty array that ``irecv`` can receive ``like``'s data into (a device array
        when the NCCL communicator carries ``like``)."""
        if self._nccl(like) is not None:
            return like.copy()
        return np.empty_like(_host(like)[0])

    def irecv(self, buf: Any, source: int | None, tag: int | None) -> Any:
        """Start receiving into ``buf`` (from ``recv_buffer``)."""
        device = self._nccl(buf)
        if device is not None:
            return device.irecv(buf, source, tag)
        return self.comm.Irecv(buf, source=self._mpi.ANY_SOURCE if source is None else source,
                               tag=self._mpi.ANY_TAG if tag is None else tag)

    def split(self, color: int | None, key: int) -> MPICommunicator | None:
        """The communicator of the processes passing the same ``color`` (MPI
        ``Comm.Split``), with this one's timeout and debug mode."""
        self._agree("split", None)
        undefined = self._mpi.UNDEFINED
        holder: list[Any] = []
        self._run("new_group", lambda: holder.append(
            self.comm.Split(undefined if color is None else int(color), int(key))))
        sub = holder[0]
        if sub == self._mpi.COMM_NULL:
            return None
        child = MPICommunicator(sub, timeout=self.timeout or 0, debug=self.debug,
                                device_collectives=self.device_collectives)
        return child

    def barrier(self) -> None:
        self._agree("barrier", None)
        self._run("barrier", self.comm.Barrier)

    def abort(self, code: int) -> None:
        self.comm.Abort(code)


__all__ = ["MPICommunicator"]
