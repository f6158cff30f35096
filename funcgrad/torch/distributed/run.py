"""``torchrun`` for the PyTorch face: ``python -m funcgrad.torch.distributed.run
--nproc-per-node 4 train.py --lr 0.1`` starts the script on 4 processes with torchrun's
environment (``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``,
``MASTER_ADDR``, ``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``), so a script that calls
``init_process_group()`` (``env://``) joins the run over TCP. Several machines: the same
command on each with ``--nnodes``, ``--node-rank`` and ``--master-addr``/``--master-port``.

If a process fails, the others are stopped and the exit status is non-zero, with the
failed rank's exit code named, as torchrun reports it.

>>> env = worker_env(rank=1, local_rank=1, world_size=2, local_world_size=2,
...                  node_rank=0, master_addr="127.0.0.1", master_port=29500, run_id="r")
>>> env["RANK"], env["WORLD_SIZE"], env["MASTER_PORT"]
('1', '2', '29500')
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence


def worker_env(*, rank: int, local_rank: int, world_size: int, local_world_size: int,
               node_rank: int, master_addr: str, master_port: int,
               run_id: str) -> dict[str, str]:
    """The environment variables torchrun gives one worker."""
    return {"RANK": str(rank), "LOCAL_RANK": str(local_rank), "WORLD_SIZE": str(world_size),
            "LOCAL_WORLD_SIZE": str(local_world_size), "GROUP_RANK": str(node_rank),
            "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(world_size),
            "MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port),
            "TORCHELASTIC_RUN_ID": run_id}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m funcgrad.torch.distributed.run",
        description="Start a training script on several processes (PyTorch's torchrun).")
    for name in ("--nproc-per-node", "--nproc_per_node"):
        p.add_argument(name, dest="nproc_per_node", default="1")
    for name in ("--nnodes",):
        p.add_argument(name, dest="nnodes", default="1")
    for name in ("--node-rank", "--node_rank"):
        p.add_argument(name, dest="node_rank", type=int, default=0)
    for name in ("--master-addr", "--master_addr"):
        p.add_argument(name, dest="master_addr", default="127.0.0.1")
    for name in ("--master-port", "--master_port"):
        p.add_argument(name, dest="master_port", type=int, default=None)
    for name in ("--rdzv-endpoint", "--rdzv_endpoint"):
        p.add_argument(name, dest="rdzv_endpoint", default=None)
    for name in ("--rdzv-id", "--rdzv_id"):
        p.add_argument(name, dest="rdzv_id", default=None)
    p.add_argument("--standalone", action="store_true")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module (python -m)")
    for name in ("--no-python", "--no_python"):
        p.add_argument(name, dest="no_python", action="store_true")
    p.add_argument("script")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _parser().parse_args(argv)
    nproc = os.cpu_count() or 1 if args.nproc_per_node in ("auto", "cpu") \
        else int(args.nproc_per_node)
    nnodes = int(str(args.nnodes).split(":")[-1])
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        addr, _, p = args.rdzv_endpoint.rpartition(":")
        port = int(p)
    if port is None:
        if nnodes > 1:
            raise SystemExit("--master-port (or --rdzv-endpoint) is needed with --nnodes > 1")
        port = _free_port()
    run_id = args.rdzv_id or uuid.uuid4().hex[:12]
    world = nproc * nnodes
    if args.no_python:
        cmd = [args.script]
    elif args.module:
        cmd = [sys.executable, "-u", "-m", args.script]
    else:
        cmd = [sys.executable, "-u", args.script]
    procs = []
    for local in range(nproc):
        env = dict(os.environ)
        env.update(worker_env(rank=args.node_rank * nproc + local, local_rank=local,
                              world_size=world, local_world_size=nproc,
                              node_rank=args.node_rank, master_addr=addr, master_port=port,
                              run_id=run_id))
        procs.append(subprocess.Popen([*cmd, *args.script_args], env=env))
    failed: tuple[int, int] | None = None
    while failed is None and any(p.poll() is None for p in procs):
        for local, p in enumerate(procs):
            code = p.poll()
            if code not in (None, 0):
                failed = (local, int(code))
                break
        time.sleep(0.05)
    if failed is None:
        failed = next(((i, int(p.returncode)) for i, p in enumerate(procs)
                       if p.returncode != 0), None)
    if failed is None:
        return 0
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
    local, code = failed
    sys.stderr.write(f"funcgrad.torch.distributed.run: {args.script} FAILED: rank "
                     f"{args.node_rank * nproc + local} (local_rank {local}) exited with code "
                     f"{code}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
