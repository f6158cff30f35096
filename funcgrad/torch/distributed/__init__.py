"""``torch.distributed`` over MPI: process groups, collectives on Tensors, point-to-point.

Start the processes with ``mpiexec -n N python train.py`` (or
``python -m funcgrad.distributed.run --nproc N train.py``); each calls
``init_process_group("mpi")`` (``"gloo"`` is accepted and runs on MPI as well;
``"nccl"`` needs CUDA devices). Collectives change their tensors in place, as
PyTorch's do, and return a ``Work`` when ``async_op=True``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.distributed as dist
>>> dist.is_available()
True
"""

from __future__ import annotations

import enum
import pickle
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np

from funcgrad import processes
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor


class ReduceOp(enum.Enum):
    """How ``all_reduce`` and friends combine the processes' tensors."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "prod"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"


class Backend(str):
    """The names of the communication backends (``Backend.MPI == "mpi"``)."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str) -> Backend:
        low = name.lower()
        if low not in ("mpi", "gloo", "nccl", "undefined"):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, low)


class Work:
    """The handle of an asynchronous operation: ``wait()`` finishes it."""

    def __init__(self, request: Any = None, on_done: Any = None) -> None:
        self._request = request
        self._on_done = on_done
        self._done = request is None

    def wait(self, timeout: timedelta | None = None) -> bool:
        """Block until the operation is done."""
        if not self._done:
            self._request.Wait()
            self._done = True
            if self._on_done is not None:
                self._on_done()
        return True

    def is_completed(self) -> bool:
        if not self._done and self._request.Test():
            self._done = True
            if self._on_done is not None:
                self._on_done()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()


class ProcessGroup:
    """The group of all processes (funcgrad has the world group only)."""

    def __init__(self, backend: str) -> None:
        self._backend = backend

    def rank(self) -> int:
        return processes.process_index()

    def size(self) -> int:
        return processes.process_count()

    def name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return f"<funcgrad.torch.distributed.ProcessGroup {self._backend} size={self.size()}>"


class group:  # noqa: N801 - PyTorch's name
    WORLD: ProcessGroup | None = None


GroupMember = group
_STATE: dict[str, Any] = {"backend": None}


def is_available() -> bool:
    """Whether distributed support is built in (it always is; MPI comes with the
    ``distributed`` extra)."""
    return True


def is_mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


is_gloo_available = is_mpi_available


def is_nccl_available() -> bool:
    try:
        from cupy.cuda import nccl  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def is_torchelastic_launched() -> bool:
    return False


def is_initialized() -> bool:
    """Whether ``init_process_group`` was called (and not destroyed)."""
    return _STATE["backend"] is not None


def _comm() -> Any:
    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return processes.communicator()


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the run started by ``mpiexec``; ``world_size``/``rank`` are checked against
    it. ``backend``: "mpi" (default), "gloo" (runs on MPI) or "nccl" (CUDA devices)."""
    from funcgrad import distributed  # noqa: PLC0415

    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or "mpi")
    if name == "nccl":
        from funcgrad.torch import cuda  # noqa: PLC0415

        if not cuda.is_available():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
    if processes.communicator() is None:
        distributed.initialize(num_processes=None if world_size in (-1, None) else world_size,
                               process_id=None if rank in (-1, None) else rank,
                               collective_timeout=None if timeout is None
                               else timeout.total_seconds())
    if processes.communicator() is None:
        # No MPI here: a run of one process still works (as with world_size=1 in torch).
        from funcgrad.distributed._local import LocalCommunicator  # noqa: PLC0415

        processes.set_communicator(LocalCommunicator())
    _STATE["backend"] = str(name)
    group.WORLD = ProcessGroup(str(name))


def destroy_process_group(group: Any = None) -> None:
    """Leave the run; collectives fail afterwards until ``init_process_group``."""
    from funcgrad import distributed  # noqa: PLC0415

    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    distributed.shutdown()
    _STATE["backend"] = None
    globals()["group"].WORLD = None


def get_rank(group: Any = None) -> int:
    """This process's rank in the run (0 .. world size - 1)."""
    _comm()
    return processes.process_index()


def get_world_size(group: Any = None) -> int:
    _comm()
    return processes.process_count()


def get_backend(group: Any = None) -> str:
    _comm()
    return str(_STATE["backend"])


def get_process_group_ranks(group: Any = None) -> list[int]:
    return list(range(get_world_size()))


def new_group(ranks: Sequence[int] | None = None, timeout: Any = None, backend: Any = None,
              pg_options: Any = None, **_: Any) -> ProcessGroup:
    """A group of every process (subgroups are not supported: a clear error otherwise)."""
    if ranks is not None and sorted(ranks) != list(range(get_world_size())):
        raise ValueError("funcgrad.torch.distributed supports the group of all ranks only; "
                         f"got ranks {list(ranks)}")
    return ProcessGroup(get_backend())


def _check(tensor: Any, what: str) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{what}(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor


def _write(t: Tensor, value: Any) -> None:
    with no_grad():
        t.copy_(Tensor._from_data(value))


def _done(async_op: bool) -> Work | None:
    return Work() if async_op else None


def _reduce(comm: Any, data: Any, op: ReduceOp) -> Any:
    if op is ReduceOp.AVG:
        out = comm.allreduce(data, "sum")
        return out / comm.size if np.issubdtype(out.dtype, np.inexact) else out // comm.size
    return comm.allreduce(data, op.value)


def _op(op: Any) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    raise TypeError(f"op must be a torch.distributed.ReduceOp, got {op!r}")


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Replace ``tensor`` on every rank by the reduction over all ranks."""
    comm = _comm()
    _check(tensor, "all_reduce")
    kind = _op(op)
    data = tensor._data
    if kind is not ReduceOp.AVG and type(data) is np.ndarray and data.flags.writeable \
            and data.flags.c_contiguous:
        # Straight into the tensor's own buffer (no copy), then count the in-place change
        # as any in-place Tensor operation does.
        comm.allreduce_inplace(data, kind.value)
        tensor._vc[0] += 1
        return _done(async_op)
    _write(tensor, _reduce(comm, data, kind))
    return _done(async_op)


def broadcast(tensor: Tensor, src: int = 0, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    """Replace ``tensor`` on every rank by rank ``src``'s."""
    comm = _comm()
    _check(tensor, "broadcast")
    _write(tensor, comm.broadcast(tensor._data, src if group_src is None else group_src))
    return _done(async_op)


def reduce(tensor: Tensor, dst: int = 0, op: Any = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Rank ``dst``'s ``tensor`` becomes the reduction over all ranks (others unchanged)."""
    comm = _comm()
    out = _reduce(comm, _check(tensor, "reduce")._data, _op(op))
    if comm.rank == (dst if group_dst is None else group_dst):
        _write(tensor, out)
    return _done(async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Fill ``tensor_list`` (one tensor per rank) with every rank's ``tensor``."""
    comm = _comm()
    if len(tensor_list) != comm.size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for a world "
                         f"of {comm.size}")
    gathered = comm.allgather(_check(tensor, "all_gather")._data)
    for i, t in enumerate(tensor_list):
        _write(t, gathered[i])
    return _done(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """``output_tensor`` becomes the ranks' ``input_tensor`` concatenated along dim 0 (or
    stacked, when its shape says so)."""
    comm = _comm()
    gathered = comm.allgather(_check(input_tensor, "all_gather_into_tensor")._data)
    _write(output_tensor, gathered.reshape(tuple(output_tensor.shape)))
    return _done(async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,  # noqa: A002
                          group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce ``input`` over the ranks; rank ``r`` keeps its block ``r`` of dim 0."""
    comm = _comm()
    data = _check(input, "reduce_scatter_tensor")._data
    blocks = data.reshape((comm.size, -1) + tuple(data.shape[1:])) if data.ndim else data
    kind = _op(op)
    out = comm.reduce_scatter(blocks, "sum" if kind is ReduceOp.AVG else kind.value)
    if kind is ReduceOp.AVG:
        out = out / comm.size
    _write(output, out.reshape(tuple(output.shape)))
    return _done(async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int = 0,
           group: Any = None, async_op: bool = False) -> Work | None:
    """Rank ``dst`` receives every rank's ``tensor`` into ``gather_list``."""
    comm = _comm()
    gathered = comm.allgather(_check(tensor, "gather")._data)
    if comm.rank == dst:
        if gather_list is None or len(gather_list) != comm.size:
            raise ValueError("gather: the destination rank needs a gather_list of "
                             f"{comm.size} tensors")
        for i, t in enumerate(gather_list):
            _write(t, gathered[i])
    return _done(async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int = 0,
            group: Any = None, async_op: bool = False) -> Work | None:
    """Rank ``r``'s ``tensor`` becomes ``scatter_list[r]`` of rank ``src``."""
    comm = _comm()
    _check(tensor, "scatter")
    if comm.rank == src:
        if scatter_list is None or len(scatter_list) != comm.size:
            raise ValueError(f"scatter: the source rank needs a scatter_list of {comm.size} "
                             f"tensors")
        stacked = np.stack([np.asarray(t._data) for t in scatter_list])
    else:
        stacked = np.zeros((comm.size, *tensor.shape), np.asarray(tensor._data).dtype)
    _write(tensor, comm.broadcast(stacked, src)[comm.rank])
    return _done(async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: Any = None,  # noqa: A002
                      input_split_sizes: Any = None, group: Any = None,
                      async_op: bool = False) -> Work | None:
    """Block ``j`` of rank ``i``'s ``input`` (dim 0, equal blocks) becomes block ``i`` of
    rank ``j``'s ``output``."""
    comm = _comm()
    if output_split_sizes is not None or input_split_sizes is not None:
        raise ValueError("all_to_all_single with uneven split sizes is not supported by "
                         "funcgrad; pad the blocks to one size")
    data = np.asarray(_check(input, "all_to_all_single")._data)
    blocks = data.reshape((comm.size, -1) + data.shape[1:])
    _write(output, comm.alltoall(blocks).reshape(tuple(output.shape)))
    return _done(async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None
            ) -> Work | None:
    """Wait until every rank gets here."""
    _comm().barrier()
    return _done(async_op)


def send(tensor: Tensor, dst: int, group: Any = None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst`` (blocks until it may be reused)."""
    _comm().send(_check(tensor, "send")._data, dst, tag)


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); gives the sender."""
    data, sender = _comm().recv(_check(tensor, "recv")._data, src, tag)
    _write(tensor, data)
    return sender


def isend(tensor: Tensor, dst: int, group: Any = None, tag: int = 0) -> Work:
    """Start sending ``tensor`` to ``dst``; ``wait()`` on the result finishes it."""
    return Work(_comm().isend(_check(tensor, "isend")._data, dst, tag))


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> Work:
    """Start receiving into ``tensor``; it holds the data after ``wait()``."""
    buf = np.empty_like(np.asarray(_check(tensor, "irecv")._data))
    return Work(_comm().irecv(buf, src, tag), on_done=lambda: _write(tensor, buf))


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Fill ``object_list`` with every rank's picklable ``obj``."""
    comm = _comm()
    payload = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = comm.allgather(np.array([payload.size], np.int64))[:, 0]
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[:payload.size] = payload
    gathered = comm.allgather(padded)
    for i in range(comm.size):
        object_list[i] = pickle.loads(gathered[i, :int(sizes[i])].tobytes())


def broadcast_object_list(object_list: list[Any], src: int = 0, group: Any = None,
                          device: Any = None) -> None:
    """Every rank's ``object_list`` becomes rank ``src``'s (picklable objects)."""
    comm = _comm()
    payload = np.frombuffer(pickle.dumps(list(object_list)), np.uint8)
    size = int(comm.broadcast(np.array([payload.size], np.int64), src)[0])
    buf = np.zeros(size, np.uint8)
    if comm.rank == src:
        buf[:] = payload
    received = pickle.loads(comm.broadcast(buf, src).tobytes())
    object_list[:] = received


__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all_single",
    "barrier", "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
    "get_backend", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "isend", "new_group",
    "recv", "reduce", "reduce_scatter_tensor", "scatter", "send",
]
