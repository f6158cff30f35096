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
import os
import pickle
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import numpy as np

from funcgrad import processes
from funcgrad.distributed._mpi import _MPI_CHARS
from funcgrad.torch._device import array_module as _xp
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


# Reading an enum member off its class runs a Python-level descriptor in 3.11 (~0.3 us):
# the fast path compares against this module-level name instead.
_SUM = ReduceOp.SUM


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
    """A group of processes with its own communicator: the world, or one ``new_group``
    made (MPI ``Comm_split``; NCCL communicators of its own under the nccl backend)."""

    def __init__(self, backend: str, comm: Any, ranks: Sequence[int]) -> None:
        self._backend = backend
        self._comm = comm
        self._ranks = list(ranks)
        self._index = {g: i for i, g in enumerate(self._ranks)}

    def rank(self) -> int:
        return int(self._comm.rank)

    def size(self) -> int:
        return len(self._ranks)

    def name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return (f"<funcgrad.torch.distributed.ProcessGroup {self._backend} "
                f"ranks={self._ranks}>")


class group:  # noqa: N801 - PyTorch's name
    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


GroupMember = group
_STATE: dict[str, Any] = {"backend": None, "groups": []}
# The world's in-place SUM all-reduce of a NumPy buffer, when MPI carries it (the fast path).
_FAST: dict[str, Any] = {"sum": None}


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
    """Whether CuPy's NCCL binding and library load (the ``cuda`` extra)."""
    from funcgrad.distributed._nccl import nccl_available  # noqa: PLC0415

    return nccl_available()


def is_torchelastic_launched() -> bool:
    """Whether torchrun (``funcgrad.torch.distributed.run``) started this process."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    """Whether ``init_process_group`` was called (and not destroyed)."""
    return _STATE["backend"] is not None


def _comm() -> Any:
    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return group.WORLD._comm  # type: ignore[union-attr]


def _pg(grp: Any, warn: bool = True) -> ProcessGroup | None:
    """The group a collective acts on (the world when None), or None when this process
    is not a member (PyTorch then skips the call with a warning)."""
    if grp is None or grp is group.WORLD:
        _comm()
        return group.WORLD
    if isinstance(grp, int) and grp == group.NON_GROUP_MEMBER:
        if warn:
            import warnings  # noqa: PLC0415

            warnings.warn("Running a collective on a group this rank is not a member of; "
                          "it does nothing here.", stacklevel=3)
        return None
    if not isinstance(grp, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(grp).__name__}")
    if grp._comm is None:
        raise ValueError("the process group was destroyed")
    return grp


def _default_timeout(backend: str) -> float:
    from funcgrad.distributed._mpi import DEFAULT_NCCL_TIMEOUT_S, DEFAULT_TIMEOUT_S  # noqa: PLC0415

    return DEFAULT_NCCL_TIMEOUT_S if backend == "nccl" else DEFAULT_TIMEOUT_S


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the run started by ``mpiexec`` (``world_size``/``rank`` are checked against
    it), or, for processes started otherwise (``torch.multiprocessing.spawn``,
    ``torchrun``), meet the others over TCP at ``init_method`` ("tcp://host:port", or
    "env://": ``MASTER_ADDR``/``MASTER_PORT``, with ``RANK``/``WORLD_SIZE`` when ``rank``
    and ``world_size`` are not given). ``backend``: "mpi" (default) or "gloo" (both on
    MPI, or TCP; CUDA tensors go through host memory), or "nccl" (CUDA tensors device
    to device through NCCL, the current device per process). A collective running longer
    than ``timeout`` (default 10 minutes for nccl, 30 for the others, as PyTorch's;
    ``FUNCGRAD_COLLECTIVE_TIMEOUT`` in seconds when no timeout is given) aborts the whole
    run (over TCP: raises in the process that waits), naming it.

    >>> import funcgrad.torch.distributed as dist
    >>> dist.init_process_group("gloo")
    >>> dist.get_world_size(), dist.get_rank()
    (1, 0)
    >>> dist.destroy_process_group()
    """
    from funcgrad import distributed  # noqa: PLC0415
    from funcgrad.distributed._mpi import timeout_from  # noqa: PLC0415

    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or "mpi")
    if name == "nccl":
        from funcgrad.torch import cuda  # noqa: PLC0415

        if not cuda.is_available():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
        if not is_nccl_available():
            raise RuntimeError("the nccl backend needs NCCL: pip install 'funcgrad[cuda]' "
                               "(CuPy and the nvidia-nccl wheel)")
    seconds = timeout_from(None if timeout is None else timeout.total_seconds(),
                           _default_timeout(str(name)))
    if processes.communicator() is None:
        size = None if world_size in (-1, None) else world_size
        me = None if rank in (-1, None) else rank
        address = None
        if not distributed._launched_by_mpi():
            # Started by torch.multiprocessing.spawn or torchrun: PyTorch's rendezvous.
            size = size if size is not None else _env_int("WORLD_SIZE")
            me = me if me is not None else _env_int("RANK")
            if (size or 1) > 1:
                address = _rendezvous_address(init_method)
        distributed.initialize(coordinator_address=address, num_processes=size,
                               process_id=me,
                               collective_timeout=0 if seconds is None else seconds)
    comm = processes.communicator()
    if comm is None:
        # No MPI here: a run of one process still works (as with world_size=1 in torch).
        from funcgrad.distributed._local import LocalCommunicator  # noqa: PLC0415

        comm = LocalCommunicator()
        processes.set_communicator(comm)
    if hasattr(comm, "set_timeout"):
        comm.set_timeout(seconds)
    from funcgrad.distributed._nccl import NcclCommunicator  # noqa: PLC0415

    if name == "nccl":
        host = comm.host if isinstance(comm, NcclCommunicator) else comm
        comm = NcclCommunicator(host)
        if hasattr(host, "device_collectives"):
            host.device_collectives = False
        # The JAX face's collectives and DDP reach the processes through it too.
        processes.set_communicator(comm)
    elif hasattr(comm, "device_collectives"):
        # gloo and mpi carry CUDA tensors through host memory, as PyTorch's gloo does.
        comm.device_collectives = False
    _STATE["backend"] = str(name)
    _STATE["groups"] = []
    group.WORLD = ProcessGroup(str(name), comm, range(comm.size))
    make = getattr(comm, "inplace_allreduce", None)
    _FAST["sum"] = make("sum") if make is not None else None


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    return None if value is None else int(value)


def _rendezvous_address(init_method: str | None) -> str:
    """``host:port`` of rank 0 from ``init_method`` ("tcp://host:port", or "env://", the
    default: ``MASTER_ADDR`` and ``MASTER_PORT``), with PyTorch's errors."""
    method = init_method or "env://"
    if method.startswith("tcp://"):
        return method[len("tcp://"):].split("?")[0]
    if method.startswith("env://"):
        for var in ("MASTER_ADDR", "MASTER_PORT"):
            if var not in os.environ:
                raise ValueError("Error initializing torch.distributed using env:// "
                                 f"rendezvous: environment variable {var} expected, but not "
                                 "set")
        return f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    raise ValueError(f"init_method {method!r}: only tcp:// and env:// rendezvous are "
                     "supported (or start the processes with mpiexec)")


def destroy_process_group(group: Any = None) -> None:
    """Leave the run (``group`` None: every group; collectives fail afterwards until
    ``init_process_group``), or release one group made by ``new_group``."""
    from funcgrad import distributed  # noqa: PLC0415

    world = globals()["group"]
    if not is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    if group is not None and group is not world.WORLD:
        if isinstance(group, ProcessGroup) and group._comm is not None:
            group._comm.close()
            group._comm = None
        return
    for g in _STATE["groups"]:
        if g._comm is not None:
            g._comm.close()
            g._comm = None
    distributed.shutdown()
    _FAST["sum"] = None
    _STATE["backend"] = None
    _STATE["groups"] = []
    world.WORLD = None


def get_rank(group: Any = None) -> int:
    """This process's rank in ``group`` (the world when None; -1 outside the group)."""
    pg = _pg(group, warn=False)
    return -1 if pg is None else pg.rank()


def get_world_size(group: Any = None) -> int:
    """The number of processes in ``group`` (the world when None; -1 outside it)."""
    pg = _pg(group, warn=False)
    return -1 if pg is None else pg.size()


def get_backend(group: Any = None) -> str:
    pg = _pg(group, warn=False)
    return str(_STATE["backend"]) if pg is None else pg.name()


def get_process_group_ranks(group: Any) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = _pg(group)
    if pg is None:
        raise ValueError("this rank is not a member of the group")
    return list(pg._ranks)


def get_group_rank(group: Any, global_rank: int) -> int:
    """The rank in ``group`` of the process with world rank ``global_rank``.

    >>> import funcgrad.torch.distributed as dist
    >>> dist.init_process_group("gloo")
    >>> dist.get_group_rank(dist.group.WORLD, 0)
    0
    >>> dist.destroy_process_group()
    """
    pg = _pg(group)
    if pg is None or global_rank not in pg._index:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return pg._index[global_rank]


def get_global_rank(group: Any, group_rank: int) -> int:
    """The world rank of the process with rank ``group_rank`` in ``group``."""
    pg = _pg(group)
    if pg is None or not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return pg._ranks[group_rank]


def new_group(ranks: Sequence[int] | None = None, timeout: Any = None, backend: Any = None,
              pg_options: Any = None, use_local_synchronization: bool = False,
              group_desc: str | None = None, device_id: Any = None) -> Any:
    """A group of the processes ``ranks`` (world ranks; all of them when None) with its
    own communicator. Every process of the world calls it, members or not (PyTorch's
    rule); a non-member gets ``GroupMember.NON_GROUP_MEMBER``. Group ranks follow the
    sorted world ranks.

    >>> import funcgrad.torch.distributed as dist
    >>> dist.init_process_group("gloo")
    >>> g = dist.new_group([0])
    >>> dist.get_rank(g), dist.get_world_size(g)
    (0, 1)
    >>> dist.destroy_process_group()
    """
    world = _comm()
    size = world.size
    members = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: duplicate ranks in {list(ranks or [])}")
    for r in members:
        if not 0 <= r < size:
            raise ValueError(f"new_group: rank {r} is not a rank of the world of {size} "
                             f"processes")
    if backend is not None and Backend(str(backend)) != _STATE["backend"]:
        raise ValueError(f"new_group(backend={backend!r}): funcgrad's groups use the default "
                         f"group's backend ({_STATE['backend']})")
    me = world.rank
    sub = world.split(0 if me in members else None, me)
    if sub is None:
        return group.NON_GROUP_MEMBER
    if timeout is not None and hasattr(sub, "set_timeout"):
        sub.set_timeout(timeout.total_seconds())
    pg = ProcessGroup(str(_STATE["backend"]), sub, members)
    _STATE["groups"].append(pg)
    return pg


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


def _reduce_scatter(comm: Any, blocks: Any, op: Any) -> Any:
    """Block ``r`` of ``blocks`` reduced over the ranks, on rank ``r`` (AVG: the sum over
    the group's size)."""
    kind = _op(op)
    out = comm.reduce_scatter(blocks, "sum" if kind is ReduceOp.AVG else kind.value)
    return out / comm.size if kind is ReduceOp.AVG else out


def _op(op: Any) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    raise TypeError(f"op must be a torch.distributed.ReduceOp, got {op!r}")


def _group_peer(pg: ProcessGroup, global_rank: int | None, group_rank: int | None,
                what: str) -> int:
    """A peer given as a world rank (``src``/``dst``) or a group rank (``group_src``/
    ``group_dst``), as a rank of ``pg``."""
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{what}: group rank {group_rank} is not part of the group")
        return group_rank
    if global_rank is None or global_rank not in pg._index:
        raise ValueError(f"{what}: Global rank {global_rank} is not part of group {pg}")
    return pg._index[global_rank]


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Replace ``tensor`` on every rank by the reduction over all ranks."""
    fast = _FAST["sum"]
    if fast is not None and op is _SUM and group is None and isinstance(tensor, Tensor):
        # The fast path (MPI's in-place Allreduce on the tensor's own buffer, watched as
        # MPICommunicator._run watches; see MPICommunicator.inplace_allreduce): a few
        # hundred nanoseconds of Python, which is what small messages pay.
        data = tensor._data
        if type(data) is np.ndarray and data.dtype.char in _MPI_CHARS:
            comm, mpi_allreduce, inplace, mpi_op, what = fast
            comm._count += 1
            comm.busy = what
            try:
                mpi_allreduce(inplace, data, mpi_op)
                tensor._vc[0] += 1
                return Work() if async_op else None
            except (BufferError, ValueError):
                pass  # not contiguous or read-only: mpi4py refused it before communicating
            finally:
                comm.busy = None
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    _check(tensor, "all_reduce")
    kind = _op(op)
    data = tensor._data
    if kind is not ReduceOp.AVG and data.flags.c_contiguous and (
            type(data) is not np.ndarray or data.flags.writeable):
        # Straight into the tensor's own buffer (no copy; device to device under NCCL),
        # then count the in-place change as any in-place Tensor operation does.
        comm.allreduce_inplace(data, kind.value)
        tensor._vc[0] += 1
        return _done(async_op)
    _write(tensor, _reduce(comm, data, kind))
    return _done(async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: Any = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Replace ``tensor`` on every rank by rank ``src``'s (a world rank; ``group_src``:
    a rank of ``group``)."""
    pg = _pg(group)
    if pg is None:
        return None
    _check(tensor, "broadcast")
    root = _group_peer(pg, 0 if src is None and group_src is None else src, group_src,
                       "broadcast")
    _write(tensor, pg._comm.broadcast(tensor._data, root))
    return _done(async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Rank ``dst``'s ``tensor`` becomes the reduction over all ranks (others unchanged)."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    root = _group_peer(pg, 0 if dst is None and group_dst is None else dst, group_dst,
                       "reduce")
    kind = _op(op)
    data = _check(tensor, "reduce")._data
    if kind is ReduceOp.AVG:
        out = _reduce(comm, data, kind)
    else:
        out = comm.reduce(data, kind.value, root)
    if comm.rank == root:
        _write(tensor, out)
    return _done(async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Fill ``tensor_list`` (one tensor per rank) with every rank's ``tensor``."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    if len(tensor_list) != comm.size:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for a group "
                         f"of {comm.size}")
    gathered = comm.allgather(_check(tensor, "all_gather")._data)
    for i, t in enumerate(tensor_list):
        _write(t, gathered[i])
    return _done(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """``output_tensor`` becomes the ranks' ``input_tensor`` concatenated along dim 0 (or
    stacked, when its shape says so)."""
    pg = _pg(group)
    if pg is None:
        return None
    gathered = pg._comm.allgather(_check(input_tensor, "all_gather_into_tensor")._data)
    _write(output_tensor, gathered.reshape(tuple(output_tensor.shape)))
    return _done(async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,  # noqa: A002
                          group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce ``input`` over the ranks; rank ``r`` keeps its block ``r`` of dim 0."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    data = _check(input, "reduce_scatter_tensor")._data
    blocks = data.reshape((comm.size, -1) + tuple(data.shape[1:])) if data.ndim else data
    _write(output, _reduce_scatter(comm, blocks, op).reshape(tuple(output.shape)))
    return _done(async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Rank ``dst`` receives every rank's ``tensor`` into ``gather_list``."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    root = _group_peer(pg, 0 if dst is None and group_dst is None else dst, group_dst,
                       "gather")
    gathered = comm.allgather(_check(tensor, "gather")._data)
    if comm.rank == root:
        if gather_list is None or len(gather_list) != comm.size:
            raise ValueError("gather: the destination rank needs a gather_list of "
                             f"{comm.size} tensors")
        for i, t in enumerate(gather_list):
            _write(t, gathered[i])
    return _done(async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """Rank ``r``'s ``tensor`` becomes ``scatter_list[r]`` of rank ``src``."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    root = _group_peer(pg, 0 if src is None and group_src is None else src, group_src,
                       "scatter")
    data = _check(tensor, "scatter")._data
    xp = _xp(data)
    if comm.rank == root:
        if scatter_list is None or len(scatter_list) != comm.size:
            raise ValueError(f"scatter: the source rank needs a scatter_list of {comm.size} "
                             f"tensors")
        stacked = xp.stack([xp.asarray(t._data) for t in scatter_list])
    else:
        stacked = xp.zeros((comm.size, *tensor.shape), data.dtype)
    _write(tensor, comm.broadcast(stacked, root)[comm.rank])
    return _done(async_op)


def _splits(given: Any, total: int, n: int, what: str) -> list[int]:
    """Block sizes along dim 0: as given, or ``total`` cut into ``n`` equal blocks."""
    if given is None or len(given) == 0:
        if total % n:
            raise RuntimeError(f"{what}: dim 0 of size {total} does not divide equally by the "
                               f"world size {n}; pass split sizes")
        return [total // n] * n
    sizes = [int(v) for v in given]
    if len(sizes) != n:
        raise RuntimeError(f"{what}: {len(sizes)} split sizes for a group of {n}")
    if sum(sizes) != total or min(sizes) < 0:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return sizes


def _uneven_alltoall(comm: Any, data: Any, send: list[int], receive: list[int]) -> Any:
    """Rows ``send[j]`` of ``data`` (in order along dim 0) go to rank ``j``; the rows from
    every rank, ``receive[i]`` from rank ``i``, come back concatenated. Blocks are padded to
    the largest block of any rank, so one equal-block all-to-all carries them."""
    xp = _xp(data)
    host = comm.host if hasattr(comm, "host") else comm  # NCCL's sizes travel on the host
    widest = int(host.allreduce(np.array([max(send)], np.int64), "max")[0])
    padded = xp.zeros((comm.size, widest) + tuple(data.shape[1:]), data.dtype)
    start = 0
    for j, k in enumerate(send):
        padded[j, :k] = data[start:start + k]
        start += k
    got = comm.alltoall(padded)
    return xp.concatenate([got[i, :k] for i, k in enumerate(receive)], axis=0)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: Any = None,  # noqa: A002
                      input_split_sizes: Any = None, group: Any = None,
                      async_op: bool = False) -> Work | None:
    """Block ``j`` of rank ``i``'s ``input`` (dim 0) becomes block ``i`` of rank ``j``'s
    ``output``: equal blocks, or the sizes ``input_split_sizes``/``output_split_sizes``
    give (a mixture of experts' token routing)."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    data = _check(input, "all_to_all_single")._data
    if not data.ndim:
        raise RuntimeError("all_to_all_single: input must have at least one dimension")
    send = _splits(input_split_sizes, int(data.shape[0]), comm.size, "all_to_all_single")
    receive = _splits(output_split_sizes, int(output.shape[0]), comm.size,
                      "all_to_all_single")
    if len(set(send)) == 1 and len(set(receive)) == 1 and send[0] == receive[0]:
        blocks = data.reshape((comm.size, -1) + tuple(data.shape[1:]))
        out = comm.alltoall(blocks)
    else:
        out = _uneven_alltoall(comm, data, send, receive)
    _write(output, out.reshape(tuple(output.shape)))
    return _done(async_op)


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: Any = None, async_op: bool = False) -> Work | None:
    """``input_tensor_list[j]`` of rank ``i`` becomes ``output_tensor_list[i]`` of rank
    ``j`` (the tensors may differ in size; each output has the size of what it receives).
    """
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    if len(input_tensor_list) != comm.size or len(output_tensor_list) != comm.size:
        raise ValueError(f"all_to_all: needs {comm.size} input and output tensors, got "
                         f"{len(input_tensor_list)} and {len(output_tensor_list)}")
    flat = [_check(t, "all_to_all")._data.reshape(-1) for t in input_tensor_list]
    xp = _xp(flat[0])
    out = _uneven_alltoall(comm, xp.concatenate(flat), [f.size for f in flat],
                           [t.numel() for t in output_tensor_list])
    start = 0
    for t in output_tensor_list:
        _write(t, out[start:start + t.numel()].reshape(tuple(t.shape)))
        start += t.numel()
    return _done(async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: Any = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[r]`` over the ranks into rank ``r``'s ``output``."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    if len(input_list) != comm.size:
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors for a "
                         f"group of {comm.size}")
    datas = [_check(t, "reduce_scatter")._data for t in input_list]
    out = _reduce_scatter(comm, _xp(datas[0]).stack(datas), op)
    _write(output, out.reshape(tuple(output.shape)))
    return _done(async_op)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None
            ) -> Work | None:
    """Wait until every rank of ``group`` gets here."""
    pg = _pg(group)
    if pg is None:
        return None
    pg._comm.barrier()
    return _done(async_op)


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (blocks until it may be reused)."""
    pg = _pg(group)
    if pg is None:
        return
    pg._comm.send(_check(tensor, "send")._data, _group_peer(pg, dst, group_dst, "send"), tag)


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); gives the sender's
    world rank."""
    pg = _pg(group)
    if pg is None:
        return -1
    peer = None if src is None and group_src is None else _group_peer(pg, src, group_src,
                                                                      "recv")
    data, sender = pg._comm.recv(_check(tensor, "recv")._data, peer, tag)
    _write(tensor, data)
    return pg._ranks[sender]


def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to ``dst``; ``wait()`` on the result finishes it."""
    pg = _pg(group)
    if pg is None:
        return None
    return Work(pg._comm.isend(_check(tensor, "isend")._data,
                               _group_peer(pg, dst, group_dst, "isend"), tag))


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor``; it holds the data after ``wait()``."""
    pg = _pg(group)
    if pg is None:
        return None
    comm = pg._comm
    peer = None if src is None and group_src is None else _group_peer(pg, src, group_src,
                                                                      "irecv")
    buf = comm.recv_buffer(_check(tensor, "irecv")._data)
    return Work(comm.irecv(buf, peer, tag), on_done=lambda: _write(tensor, buf))


def all_gather_object(object_list: list[Any], obj: Any, group: Any = None) -> None:
    """Fill ``object_list`` with every rank's picklable ``obj``."""
    pg = _pg(group)
    if pg is None:
        return
    comm = pg._comm.host if hasattr(pg._comm, "host") else pg._comm
    payload = np.frombuffer(pickle.dumps(obj), np.uint8)
    sizes = comm.allgather(np.array([payload.size], np.int64))[:, 0]
    padded = np.zeros(int(sizes.max()), np.uint8)
    padded[:payload.size] = payload
    gathered = comm.allgather(padded)
    for i in range(comm.size):
        object_list[i] = pickle.loads(gathered[i, :int(sizes[i])].tobytes())


def broadcast_object_list(object_list: list[Any], src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Every rank's ``object_list`` becomes rank ``src``'s (picklable objects)."""
    pg = _pg(group)
    if pg is None:
        return
    comm = pg._comm.host if hasattr(pg._comm, "host") else pg._comm
    root = _group_peer(pg, 0 if src is None and group_src is None else src, group_src,
                       "broadcast_object_list")
    payload = np.frombuffer(pickle.dumps(list(object_list)), np.uint8)
    size = int(comm.broadcast(np.array([payload.size], np.int64), root)[0])
    buf = np.zeros(size, np.uint8)
    if comm.rank == root:
        buf[:] = payload
    received = pickle.loads(comm.broadcast(buf, root).tobytes())
    object_list[:] = received


def gather_object(obj: Any, object_gather_list: list[Any] | None = None,
                  dst: int | None = None, group: Any = None,
                  group_dst: int | None = None) -> None:
    """Rank ``dst`` receives every rank's picklable ``obj`` into ``object_gather_list``
    (None on the other ranks)."""
    pg = _pg(group)
    if pg is None:
        return
    root = _group_peer(pg, 0 if dst is None and group_dst is None else dst, group_dst,
                       "gather_object")
    gathered: list[Any] = [None] * pg.size()
    all_gather_object(gathered, obj, group)
    if pg._comm.rank == root:
        if object_gather_list is None:
            raise ValueError("Must provide object_gather_list on dst rank.")
        object_gather_list[:len(gathered)] = gathered


def scatter_object_list(scatter_object_output_list: list[Any],
                        scatter_object_input_list: list[Any] | None = None,
                        src: int | None = None, group: Any = None,
                        group_src: int | None = None) -> None:
    """``scatter_object_output_list[0]`` becomes element ``rank`` of rank ``src``'s
    ``scatter_object_input_list``."""
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size "
                         "at least 1.")
    pg = _pg(group)
    if pg is None:
        return
    root = _group_peer(pg, 0 if src is None and group_src is None else src, group_src,
                       "scatter_object_list")
    objs = list(scatter_object_input_list or []) if pg._comm.rank == root else []
    if pg._comm.rank == root and len(objs) != pg.size():
        raise ValueError(f"scatter_object_list: the source rank needs {pg.size()} objects, "
                         f"got {len(objs)}")
    broadcast_object_list(objs, group=group, group_src=root)
    scatter_object_output_list[0] = objs[pg._comm.rank]


class P2POp:
    """One send or receive for ``batch_isend_irecv``: ``op`` is ``isend`` or ``irecv``."""

    def __init__(self, op: Any, tensor: Tensor, peer: int | None = None, group: Any = None,
                 tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group = op, tensor, peer, group
        self.tag, self.group_peer = tag, group_peer


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every send and receive of the list; ``wait()`` on each result finishes it."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        kw = ({"group_dst": p.group_peer} if p.op is isend else {"group_src": p.group_peer})
        w = p.op(p.tensor, p.peer, p.group, p.tag, **kw)
        if w is not None:
            works.append(w)
    return works


def monitored_barrier(group: Any = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that fails after ``timeout`` (default: the group's) instead of hanging."""
    pg = _pg(group)
    if pg is None:
        return
    comm = pg._comm
    if timeout is not None and hasattr(comm, "set_timeout"):
        before = comm.timeout
        comm.set_timeout(timeout.total_seconds())
        try:
            comm.barrier()
        finally:
            comm.set_timeout(before)
        return
    comm.barrier()


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine (``LOCAL_RANK``, which launchers set)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


__all__ = [
    "Backend", "GroupMember", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast",
    "broadcast_object_list", "destroy_process_group", "gather", "gather_object",
    "get_backend", "get_global_rank", "get_group_rank", "get_node_local_rank",
    "get_process_group_ranks", "get_rank", "get_world_size", "group", "monitored_barrier",
    "init_process_group", "irecv", "is_available", "is_gloo_available", "is_initialized",
    "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "isend", "new_group",
    "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send",
]
