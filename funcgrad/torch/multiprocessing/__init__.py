"""``torch.multiprocessing``: Python's ``multiprocessing`` (its names are all here) and
``spawn``/``start_processes``, which start ``nprocs`` processes running ``fn(i, *args)``
and, on ``join``, raise the first failure with the child's traceback, as PyTorch's do.

A run of ``spawn``ed processes joins one distributed job with
``torch.distributed.init_process_group(rank=i, world_size=n)`` (``MASTER_ADDR`` and
``MASTER_PORT`` set): the processes meet over TCP.

>>> import funcgrad.torch.multiprocessing as mp
>>> mp.get_start_method(allow_none=True) in (None, "fork", "spawn", "forkserver")
True
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable
from multiprocessing import *  # noqa: F403 - torch.multiprocessing re-exports them all
from typing import Any

__all__ = [name for name in multiprocessing.__all__] + [  # noqa: PLE0604
    "ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException",
    "get_all_sharing_strategies", "get_sharing_strategy", "set_sharing_strategy", "spawn",
    "start_processes"]


class ProcessException(Exception):
    """A spawned process failed: which one (``error_index``) and its ``error_pid``."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited non-zero or was killed by a signal."""

    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _wrap(fn: Callable[..., Any], i: int, args: tuple[Any, ...], error_file: str) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # (stopped by the parent)
    except Exception:
        import traceback  # noqa: PLC0415

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes`` started; ``join`` waits for them."""

    def __init__(self, processes: list[Any], error_files: list[str]) -> None:
        self.processes = processes
        self.error_files = error_files
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for the processes; True when all are done. If one failed, stop the others
        and raise ``ProcessRaisedException`` (with its traceback) or
        ``ProcessExitedException``."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join(30 if grace_period is None else grace_period)
            if p.is_alive():
                p.kill()
                p.join()
        process = self.processes[failed]
        path = self.error_files[failed]
        if not os.access(path, os.R_OK):
            code = int(process.exitcode)
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {failed:d} terminated with signal "
                                             f"{name}", failed, process.pid, code, name)
            raise ProcessExitedException(f"process {failed:d} terminated with exit code "
                                         f"{code:d}", failed, process.pid, code)
        with open(path, "rb") as fh:
            trace = pickle.load(fh)
        raise ProcessRaisedException(f"\n\n-- Process {failed:d} terminated with the "
                                     f"following error:\n{trace}", failed, process.pid)


def start_processes(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
                    join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """Start ``nprocs`` processes running ``fn(i, *args)`` (``i``: 0 .. nprocs - 1) with the
    ``start_method`` of ``multiprocessing``; ``join``: wait for them (else return the
    ``ProcessContext``)."""
    ctx: Any = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="funcgrad-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)  # (the child writes it only if it fails)
        p = ctx.Process(target=_wrap, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
          join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """:func:`start_processes` with the "spawn" start method (PyTorch's ``mp.spawn``)."""
    if start_method != "spawn":
        import warnings  # noqa: PLC0415

        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      "torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")


_SHARING = ["file_descriptor"]


def get_all_sharing_strategies() -> set[str]:
    """How tensors can be shared between processes (they are pickled here)."""
    return {"file_descriptor", "file_system"}


def get_sharing_strategy() -> str:
    return _SHARING[0]


def set_sharing_strategy(new_strategy: str) -> None:
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"Invalid sharing strategy: {new_strategy}")
    _SHARING[0] = new_strategy
