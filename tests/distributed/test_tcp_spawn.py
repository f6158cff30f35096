"""Runs whose processes ``torch.multiprocessing.spawn`` starts (no mpiexec): they meet over
TCP (``env://`` and ``init_process_group(rank=, world_size=)``), DDP steps equal
single-process steps, every collective against NumPy, and a failing process is reported
with its traceback by ``join``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "scripts", "torch_spawn.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _no_mpi_env() -> dict[str, str]:
    # (No MPI variables: the children must not take the MPI path.)
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("OMPI_", "PMI", "PMIX", "MPI_"))}


def _run(n: int, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, SCRIPT, str(n), str(_free_port()), mode],
                          capture_output=True, text=True, timeout=300, env=_no_mpi_env(),
                          check=False)


# (3 processes: the communicator's own tests run 3 ranks; here each process costs a start.)
@pytest.mark.parametrize("n", [2])
def test_spawned_processes_run_ddp_and_every_collective_over_env_rendezvous(n: int) -> None:
    res = _run(n, "env")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(n):
        assert f"OK {r}" in res.stdout, out[-4000:]


def test_pytorchs_ddp_tutorial_runs_as_written() -> None:
    res = _run(2, "tutorial")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    assert "TUTORIAL OK 0" in res.stdout and "TUTORIAL OK 1" in res.stdout, out[-4000:]


def test_the_jax_face_meets_at_a_coordinator_address() -> None:
    res = _run(2, "jax")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    assert "JAX OK 0" in res.stdout and "JAX OK 1" in res.stdout, out[-4000:]


def test_a_failing_process_is_reported_with_its_traceback() -> None:
    res = _run(2, "raises")
    assert res.returncode == 3, (res.stdout + res.stderr)[-3000:]
    assert "RAISED 1" in res.stdout and "process 1 fails on purpose" in res.stdout


def test_torchrun_starts_a_script_that_initializes_from_the_environment() -> None:
    script = os.path.join(os.path.dirname(__file__), "scripts", "torchrun_script.py")
    res = subprocess.run([sys.executable, "-m", "funcgrad.torch.distributed.run",
                          "--nproc-per-node", "2", script], capture_output=True, text=True,
                         timeout=300, env=_no_mpi_env(), check=False)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    assert "OK 0" in res.stdout and "OK 1" in res.stdout, out[-4000:]
    res = subprocess.run([sys.executable, "-m", "funcgrad.torch.distributed.run",
                          "--nproc_per_node=2", script, "--fail"], capture_output=True,
                         text=True, timeout=300, env=_no_mpi_env(), check=False)
    assert res.returncode == 1
    assert "FAILED: rank 1 (local_rank 1) exited with code 7" in res.stderr, res.stderr[-3000:]
