"""The NCCL communicator (CuPy's ``cupy.cuda.nccl``): collectives between the GPUs of a
run, device buffer to device buffer, on the current CUDA stream, with no host copy.

One NCCL communicator per process (one GPU each, the current device). Process 0 makes the
unique id, the host communicator (MPI) broadcasts it, and every process joins; that
happens at the first device collective, which every process reaches together. Host
(NumPy) arrays keep going through the host communicator.

>>> from funcgrad.distributed._nccl import nccl_available
>>> nccl_available() in (True, False)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.processes import Communicator

# NCCL's element types (ncclDataType_t) by NumPy type character; bool and complex travel
# as a view (uint8, pairs of reals), int16/uint16 widened on the device.
_TYPES = {"b": "NCCL_INT8", "B": "NCCL_UINT8", "i": "NCCL_INT32", "I": "NCCL_UINT32",
          "l": "NCCL_INT64", "L": "NCCL_UINT64", "q": "NCCL_INT64", "Q": "NCCL_UINT64",
          "e": "NCCL_FLOAT16", "f": "NCCL_FLOAT32", "d": "NCCL_FLOAT64"}
_OPS = {"sum": "NCCL_SUM", "prod": "NCCL_PROD", "max": "NCCL_MAX", "min": "NCCL_MIN",
        "avg": "NCCL_AVG"}


def nccl_available() -> bool:
    """Whether CuPy's NCCL binding and the NCCL library load here (``pip install
    'funcgrad[cuda]'`` brings both)."""
    try:
        from cupy.cuda import nccl  # noqa: PLC0415
    except ImportError:
        return False
    return bool(getattr(nccl, "available", True)) and hasattr(nccl, "NcclCommunicator")


class _Done:
    """A request that is complete when made (NCCL orders its work on the stream)."""

    def Wait(self) -> None:  # noqa: N802 - the MPI request API the faces call
        return None

    def Test(self) -> bool:  # noqa: N802
        return True


class NcclCommunicator(Communicator):
    """``funcgrad.processes.Communicator`` for CuPy arrays over NCCL; NumPy arrays, the
    barrier and the abort go through ``host`` (an MPI communicator, or a world of one).

    >>> from funcgrad.distributed._local import LocalCommunicator
    >>> NcclCommunicator(LocalCommunicator()).size
    1
    """

    def __init__(self, host: Communicator, eager: bool = False) -> None:
        self.host = host
        self._comm: Any = None
        if eager:
            self._device_comm()

    @property
    def rank(self) -> int:
        return self.host.rank

    @property
    def size(self) -> int:
        return self.host.size

    # ---------------------------------------------------------------- plumbing
    def _device_comm(self) -> Any:
        if self._comm is None:
            from cupy.cuda import nccl  # noqa: PLC0415

            uid = nccl.get_unique_id() if self.host.rank == 0 else bytes(128)
            shared = self.host.broadcast(np.frombuffer(uid, np.uint8).copy(), 0)
            self._comm = nccl.NcclCommunicator(self.host.size, np.asarray(shared).tobytes(),
                                               self.host.rank)
        return self._comm

    def close_device(self) -> None:
        """Destroy the NCCL communicator (the host one stays)."""
        if self._comm is not None:
            self._comm.destroy()
            self._comm = None

    def close(self) -> None:
        self.close_device()
        self.host.close()

    def _watch(self, what: str, call: Any) -> None:
        """Run the NCCL call watched by the host communicator's timeout, if it has one."""
        run = getattr(self.host, "_run", None)
        if run is None:
            call()
        else:
            run(f"nccl {what}", call)

    @staticmethod
    def _stream() -> int:
        import cupy  # noqa: PLC0415

        return int(cupy.cuda.get_current_stream().ptr)

    @staticmethod
    def _prepare(x: Any, op: str | None) -> tuple[Any, int, str | None, Any]:
        """``x`` as a flat, C-contiguous device buffer NCCL can type, its NCCL type, the NCCL
        reduction, and a function that turns a result buffer back into ``x``'s dtype."""
        import cupy  # noqa: PLC0415
        from cupy.cuda import nccl  # noqa: PLC0415

        # Flat, so that views to another item size work for 0-d arrays too.
        a = (x if x.flags.c_contiguous else cupy.ascontiguousarray(x)).reshape(-1)
        dtype = a.dtype
        char = dtype.char

        def same(out: Any) -> Any:
            return out

        back = same
        if dtype == np.bool_:
            a = a.view(np.uint8)
            char = "B"
            op = {"sum": "max", "prod": "min", None: None}.get(op, op)

            def back(out: Any) -> Any:
                return out.view(np.bool_)
        elif dtype.kind == "c":
            if op not in (None, "sum", "avg"):
                raise TypeError(f"{op} is not defined for complex tensors")
            real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
            a = a.view(real)
            char = real.char

            def back(out: Any) -> Any:
                return out.view(dtype)
        elif char in ("h", "H"):
            wide = np.dtype(np.int32 if char == "h" else np.uint32)
            a = a.astype(wide)
            char = wide.char

            def back(out: Any) -> Any:
                return out.astype(dtype)
        elif dtype.name == "bfloat16":
            return a, int(nccl.NCCL_BFLOAT16), None if op is None else _OPS[op], same
        if char not in _TYPES:
            raise TypeError(f"NCCL has no element type for {dtype}")
        return (a, int(getattr(nccl, _TYPES[char])),
                None if op is None else _OPS[op], back)

    @staticmethod
    def _op(name: str) -> int:
        from cupy.cuda import nccl  # noqa: PLC0415

        return int(getattr(nccl, name))

    # ------------------------------------------------------------- collectives
    def allreduce(self, x: Any, op: str) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.allreduce(x, op)
        import cupy  # noqa: PLC0415

        a, dt, nop, back = self._prepare(x, op)
        out = cupy.empty_like(a)
        comm, stream = self._device_comm(), self._stream()
        self._watch(f"allreduce({op})", lambda: comm.allReduce(
            a.data.ptr, out.data.ptr, a.size, dt, self._op(nop or "NCCL_SUM"), stream))
        return back(out).reshape(x.shape)

    def allreduce_inplace(self, buf: Any, op: str) -> None:
        if (type(buf).__module__.split(".")[0] != "cupy" or not buf.flags.c_contiguous
                or buf.dtype.char not in _TYPES):
            buf[...] = self.allreduce(buf, op)
            return
        dt = self._prepare(buf, op)[1]
        comm, stream = self._device_comm(), self._stream()
        self._watch(f"allreduce({op})", lambda: comm.allReduce(
            buf.data.ptr, buf.data.ptr, buf.size, dt, self._op(_OPS[op]), stream))

    def reduce(self, x: Any, op: str, root: int) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.reduce(x, op, root)
        import cupy  # noqa: PLC0415

        a, dt, nop, back = self._prepare(x, op)
        out = cupy.empty_like(a)
        comm, stream = self._device_comm(), self._stream()
        self._watch(f"reduce({op})", lambda: comm.reduce(
            a.data.ptr, out.data.ptr, a.size, dt, self._op(nop or "NCCL_SUM"), root, stream))
        return back(out).reshape(x.shape)

    def allgather(self, x: Any) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.allgather(x)
        import cupy  # noqa: PLC0415

        a, dt, _, back = self._prepare(x, None)
        out = cupy.empty(self.size * a.size, a.dtype)
        comm, stream = self._device_comm(), self._stream()
        self._watch("allgather", lambda: comm.allGather(
            a.data.ptr, out.data.ptr, a.size, dt, stream))
        return back(out).reshape((self.size, *x.shape))

    def broadcast(self, x: Any, root: int) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.broadcast(x, root)
        import cupy  # noqa: PLC0415

        a, dt, _, back = self._prepare(x, None)
        out = cupy.empty_like(a)
        comm, stream = self._device_comm(), self._stream()
        self._watch(f"broadcast(root={root})", lambda: comm.broadcast(
            a.data.ptr, out.data.ptr, a.size, dt, root, stream))
        return back(out).reshape(x.shape)

    def reduce_scatter(self, x: Any, op: str) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.reduce_scatter(x, op)
        if x.shape[:1] != (self.size,):
            raise ValueError(f"reduce_scatter needs a leading axis of {self.size} (one row per "
                             f"process), got shape {x.shape}")
        import cupy  # noqa: PLC0415

        a, dt, nop, back = self._prepare(x, op)
        out = cupy.empty(a.size // self.size, a.dtype)
        comm, stream = self._device_comm(), self._stream()
        self._watch(f"reduce_scatter({op})", lambda: comm.reduceScatter(
            a.data.ptr, out.data.ptr, out.size, dt, self._op(nop or "NCCL_SUM"), stream))
        return back(out).reshape(x.shape[1:])

    def _exchange(self, what: str, a: Any, out: Any, dt: int, count: int,
                  sends: Sequence[tuple[int, int]], recvs: Sequence[tuple[int, int]]) -> None:
        """Grouped point-to-point on flat buffers: (block, peer) pairs, blocks of ``count``
        elements, of ``a`` to send and of ``out`` to receive, issued together so that no
        pair waits on another."""
        from cupy.cuda import nccl  # noqa: PLC0415

        comm, stream = self._device_comm(), self._stream()
        step = count * a.itemsize

        def run() -> None:
            nccl.groupStart()
            try:
                for block, peer in sends:
                    comm.send(a.data.ptr + block * step, count, dt, peer, stream)
                for block, peer in recvs:
                    comm.recv(out.data.ptr + block * step, count, dt, peer, stream)
            finally:
                nccl.groupEnd()

        self._watch(what, run)

    def alltoall(self, x: Any) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.alltoall(x)
        import cupy  # noqa: PLC0415

        if x.shape[:1] != (self.size,):
            raise ValueError(f"alltoall needs a leading axis of {self.size} (one row per "
                             f"process), got shape {x.shape}")
        a, dt, _, back = self._prepare(x, None)
        out = cupy.empty_like(a)
        peers = [(j, j) for j in range(self.size)]
        self._exchange("alltoall", a, out, dt, a.size // self.size, peers, peers)
        return back(out).reshape(x.shape)

    def permute(self, x: Any, perm: Sequence[tuple[int, int]]) -> Any:
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.permute(x, perm)
        import cupy  # noqa: PLC0415

        a, dt, _, back = self._prepare(x, None)
        out = cupy.zeros_like(a)
        me = self.rank
        self._exchange("ppermute", a, out, dt, a.size, [(0, d) for s, d in perm if s == me],
                       [(0, s) for s, d in perm if d == me])
        return back(out).reshape(x.shape)

    def send(self, x: Any, dest: int, tag: int) -> None:
        """Send ``x`` to ``dest`` (NCCL has no tags: ``tag`` is ignored, as in PyTorch)."""
        if type(x).__module__.split(".")[0] != "cupy":
            self.host.send(x, dest, tag)
            return
        a, dt, _, _ = self._prepare(x, None)
        self._exchange("send", a, a, dt, a.size, [(0, dest)], [])

    def recv(self, like: Any, source: int | None, tag: int | None) -> tuple[Any, int]:
        if type(like).__module__.split(".")[0] != "cupy":
            return self.host.recv(like, source, tag)
        if source is None:
            raise RuntimeError("the NCCL backend does not support receiving from any source: "
                               "give src")
        import cupy  # noqa: PLC0415

        a, dt, _, back = self._prepare(like, None)
        out = cupy.empty_like(a)
        self._exchange("recv", a, out, dt, a.size, [], [(0, source)])
        return back(out).reshape(like.shape), source

    def isend(self, x: Any, dest: int, tag: int) -> Any:
        """Send ``x`` on the stream; the request is complete (stream order does the rest)."""
        if type(x).__module__.split(".")[0] != "cupy":
            return self.host.isend(x, dest, tag)  # type: ignore[attr-defined]
        self.send(x, dest, tag)
        return _Done()

    def recv_buffer(self, like: Any) -> Any:
        """An array ``irecv`` can receive ``like``'s data into."""
        if type(like).__module__.split(".")[0] != "cupy":
            return self.host.recv_buffer(like)  # type: ignore[attr-defined]
        return like.copy()

    def irecv(self, buf: Any, source: int | None, tag: int | None) -> Any:
        """Receive into the device array ``buf`` on the stream (complete when made)."""
        if type(buf).__module__.split(".")[0] != "cupy":
            return self.host.irecv(buf, source, tag)  # type: ignore[attr-defined]
        data, _ = self.recv(buf, source, tag)
        buf[...] = data
        return _Done()

    def split(self, color: int | None, key: int) -> NcclCommunicator | None:
        """The NCCL communicator of a subgroup: the host communicator splits, and the
        members make their own NCCL communicator at their first device collective."""
        child = self.host.split(color, key)
        return None if child is None else NcclCommunicator(child)

    def barrier(self) -> None:
        if self._comm is not None:
            import cupy  # noqa: PLC0415

            cupy.cuda.get_current_stream().synchronize()
        self.host.barrier()

    def abort(self, code: int) -> None:
        if self._comm is not None:
            self._comm.abort()
        self.host.abort(code)


__all__ = ["NcclCommunicator", "nccl_available"]
