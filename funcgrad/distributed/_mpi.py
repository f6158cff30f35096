"""The MPI communicator (mpi4py): what ``funcgrad.processes.Communicator`` asks, on
host buffers.

Arrays travel as contiguous NumPy buffers; a CuPy array goes through the host (NCCL,
for device-to-device transfers, is the GPU communicator's business). Dtypes MPI has no
type for (float16, bfloat16, bool) travel as float32 / uint8 and come back in their
own dtype.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.processes import Communicator

# Collectives wait without a limit unless one is given (initialize(collective_timeout=),
# init_process_group(timeout=) or FUNCGRAD_COLLECTIVE_TIMEOUT): watching the clock means
# polling, which costs bandwidth.

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


class MPICommunicator(Communicator):
    """``funcgrad.processes.Communicator`` over an mpi4py communicator (COMM_WORLD by
    default)."""

    def __init__(self, comm: Any = None, timeout: float | None = None,
                 debug: bool | None = None) -> None:
        from mpi4py import MPI  # noqa: PLC0415

        self._mpi = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD,
                     "band": MPI.BAND, "bor": MPI.BOR, "bxor": MPI.BXOR}
        env = os.environ.get("FUNCGRAD_COLLECTIVE_TIMEOUT")
        limit = timeout if timeout is not None else env
        self.timeout: float | None = None if limit in (None, "") else float(limit)
        # Debug mode: before each collective the ranks compare what they are about to do
        # (operation, shape, dtype, count), so a mismatch is named instead of hanging or
        # mixing up data.
        self.debug = (os.environ.get("FUNCGRAD_DISTRIBUTED_DEBUG", "") not in ("", "0")
                      if debug is None else debug)
        self._count = 0

    def _run(self, what: str, blocking: Any, nonblocking: Any) -> None:
        """One collective: MPI's blocking call (its tuned algorithms, the fastest), or,
        under a time limit, the non-blocking one watched by ``_wait``."""
        if self.timeout is None:
            blocking()
        else:
            self._wait(nonblocking(), what)

    def _wait(self, request: Any, what: str) -> None:
        """Wait for a non-blocking collective, at most ``timeout`` seconds; past it, say
        which collective hung and stop the whole run (the others cannot finish it)."""
        if self.timeout is None:
            request.Wait()
            return
        if request.Test():
            return
        start = time.monotonic()
        deadline = start + self.timeout
        pause = 1e-5
        while not request.Test():
            now = time.monotonic()
            if now - start < 2e-3:
                continue  # short collectives finish within microseconds: poll, don't sleep
            if now > deadline:
                sys.stderr.write(
                    f"[funcgrad process {self.rank}] collective {what} (number {self._count}) "
                    f"did not complete within {self.timeout:g} s: another process is not "
                    f"taking part (it failed, or called a different collective); aborting "
                    f"the run\n")
                sys.stderr.flush()
                self.comm.Abort(1)
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)

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
        return int(self.comm.Get_rank())

    @property
    def size(self) -> int:
        return int(self.comm.Get_size())

    def allreduce(self, x: Any, op: str) -> Any:
        a, dtype, xp = _host(x)
        out = np.empty_like(a)
        if dtype == np.bool_ and op in ("sum", "max"):
            op = "bor"
        elif dtype == np.bool_ and op in ("min", "prod"):
            op = "band"
        self._agree(f"allreduce({op})", a)
        self._run(f"allreduce({op})", lambda: self.comm.Allreduce(a, out, op=self._ops[op]),
                  lambda: self.comm.Iallreduce(a, out, op=self._ops[op]))
        return _back(out, dtype, xp)

    def allreduce_inplace(self, buf: Any, op: str) -> None:
        if (type(buf) is not np.ndarray or not buf.flags.c_contiguous
                or buf.dtype in _WIDEN or buf.dtype == np.bool_ or buf.dtype.kind == "V"):
            buf[...] = self.allreduce(buf, op)
            return
        self._agree(f"allreduce({op})", buf)
        inplace = self._mpi.IN_PLACE
        self._run(f"allreduce({op})",
                  lambda: self.comm.Allreduce(inplace, buf, op=self._ops[op]),
                  lambda: self.comm.Iallreduce(inplace, buf, op=self._ops[op]))

    def allgather(self, x: Any) -> Any:
        a, dtype, xp = _host(x)
        out = np.empty((self.size, *a.shape), a.dtype)
        self._agree("allgather", a)
        self._run("allgather", lambda: self.comm.Allgather(a, out),
                  lambda: self.comm.Iallgather(a, out))
        return _back(out, dtype, xp)

    def broadcast(self, x: Any, root: int) -> Any:
        a, dtype, xp = _host(x)
        buf = np.array(a, copy=True)
        self._agree(f"broadcast(root={root})", a)
        self._run("broadcast", lambda: self.comm.Bcast(buf, root=root),
                  lambda: self.comm.Ibcast(buf, root=root))
        return _back(buf, dtype, xp)

    def reduce_scatter(self, x: Any, op: str) -> Any:
        a, dtype, xp = _host(x)
        if a.shape[:1] != (self.size,):
            raise ValueError(f"reduce_scatter needs a leading axis of {self.size} (one row per "
                             f"process), got shape {a.shape}")
        out = np.empty(a.shape[1:], a.dtype)
        self._agree(f"reduce_scatter({op})", a)
        self._run("reduce_scatter",
                  lambda: self.comm.Reduce_scatter_block(a, out, op=self._ops[op]),
                  lambda: self.comm.Ireduce_scatter_block(a, out, op=self._ops[op]))
        return _back(out, dtype, xp)

    def alltoall(self, x: Any) -> Any:
        a, dtype, xp = _host(x)
        out = np.empty_like(a)
        self._agree("alltoall", a)
        self._run("alltoall", lambda: self.comm.Alltoall(a, out),
                  lambda: self.comm.Ialltoall(a, out))
        return _back(out, dtype, xp)

    def permute(self, x: Any, perm: Sequence[tuple[int, int]]) -> Any:
        a, dtype, xp = _host(x)
        out = np.zeros_like(a)
        me = self.rank
        self._agree("ppermute", a)
        reqs = [self.comm.Isend(a, dest=dst, tag=7) for src, dst in perm if src == me]
        reqs += [self.comm.Irecv(out, source=src, tag=7) for src, dst in perm if dst == me]
        for r in reqs:
            self._wait(r, "ppermute")
        return _back(out, dtype, xp)

    def send(self, x: Any, dest: int, tag: int) -> None:
        a, _, _ = _host(x)
        self.comm.Send(a, dest=dest, tag=tag)

    def recv(self, like: Any, source: int | None, tag: int | None) -> tuple[Any, int]:
        a, dtype, xp = _host(like)
        buf = np.empty_like(a)
        status = self._mpi.Status()
        self.comm.Recv(buf, source=self._mpi.ANY_SOURCE if source is None else source,
                       tag=self._mpi.ANY_TAG if tag is None else tag, status=status)
        return _back(buf, dtype, xp), int(status.Get_source())

    def isend(self, x: Any, dest: int, tag: int) -> Any:
        """Start sending ``x``; the request's ``Wait()`` finishes it."""
        a, _, _ = _host(x)
        return _Pending(self.comm.Isend(a, dest=dest, tag=tag), a)

    def irecv(self, buf: np.ndarray, source: int | None, tag: int | None) -> Any:
        """Start receiving into the host buffer ``buf``."""
        return self.comm.Irecv(buf, source=self._mpi.ANY_SOURCE if source is None else source,
                               tag=self._mpi.ANY_TAG if tag is None else tag)

    def barrier(self) -> None:
        self._agree("barrier", None)
        self._run("barrier", self.comm.Barrier, self.comm.Ibarrier)

    def abort(self, code: int) -> None:
        self.comm.Abort(code)


__all__ = ["MPICommunicator"]
