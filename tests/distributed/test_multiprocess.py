"""Multi-process runs under mpiexec (2 and 3 processes, oversubscribed on a small machine;
3, the uneven count, where one suffices: each run starts an interpreter per rank):
data-parallel gradients equal full-batch ones, DDP steps equal single-process steps,
every collective against NumPy, and a failing rank takes the run down quickly.

Skips cleanly without mpi4py / mpiexec (the ``distributed`` extra).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("mpi4py")

from funcgrad.distributed.run import find_mpiexec  # noqa: E402

SCRIPTS = os.path.join(os.path.dirname(__file__), "scripts")


def _launch(script: str, nproc: int, timeout: float = 240.0
            ) -> subprocess.CompletedProcess[str]:
    try:
        find_mpiexec()
    except SystemExit:
        pytest.skip("no mpiexec")
    cmd = [sys.executable, "-m", "funcgrad.distributed.run", "--nproc", str(nproc),
           os.path.join(SCRIPTS, script)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("nproc", [2, 3])
def test_jax_face_collectives_and_data_parallel_gradient(nproc: int) -> None:
    res = _launch("jax_data_parallel.py", nproc)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(nproc):
        assert f"[rank {r}] OK {r}" in res.stdout, out[-4000:]


@pytest.mark.parametrize("nproc", [3])
def test_torch_face_ddp_equals_single_process_and_collectives(nproc: int) -> None:
    res = _launch("torch_ddp.py", nproc)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(nproc):
        assert f"[rank {r}] OK {r}" in res.stdout, out[-4000:]


def test_a_rank_that_raises_ends_the_run_nonzero_without_hanging() -> None:
    # Rank 0 waits in a collective that rank 1 never joins: without the abort on an
    # uncaught exception it would wait forever (the timeout turns a hang into a failure;
    # it allows for interpreter start-up on a loaded two-core machine).
    res = _launch("rank_raises.py", 2, timeout=60.0)
    assert res.returncode != 0
    err = res.stdout + res.stderr
    assert err.count("ValueError: rank 1 fails on purpose") == 1, err[-3000:]
    assert "unreachable" not in res.stdout


def test_debug_mode_names_a_shape_mismatch_on_every_rank(monkeypatch: Any) -> None:
    monkeypatch.setenv("FUNCGRAD_DISTRIBUTED_DEBUG", "1")
    res = _launch("mismatch.py", 2, timeout=60.0)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    for r in range(2):
        assert (f"[rank {r}] funcgrad.distributed.DistributedError: the processes disagree on "
                f"collective #1: rank 0: allreduce(sum) shape=(1, 2)") in out, out[-3000:]
    assert "unreachable" not in res.stdout


def test_a_collective_that_never_completes_times_out_naming_itself(monkeypatch: Any) -> None:
    monkeypatch.setenv("FUNCGRAD_COLLECTIVE_TIMEOUT", "2")
    res = _launch("hang.py", 2, timeout=90.0)
    assert res.returncode != 0
    assert "collective allreduce(sum) (number 1) did not complete within 2 s" in res.stderr


@pytest.mark.parametrize("nproc", [3])
def test_torch_face_subgroups(nproc: int) -> None:
    res = _launch("torch_groups.py", nproc)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(nproc):
        assert f"[rank {r}] OK {r}" in res.stdout, out[-4000:]


@pytest.mark.parametrize("nproc", [3])
def test_nccl_backend_on_the_emulator_moves_no_data_through_the_host(nproc: int) -> None:
    # The CuPy emulator stands in for CuPy; its cupy.cuda.nccl is carried by MPI, so the
    # NCCL code paths run here as they would on GPUs, and its counters see host copies.
    import fakecupy  # tests/support, on the path through tests/conftest.py

    if not fakecupy.available():
        pytest.skip("the CuPy emulator needs CuPy's wheel (NVRTC) and g++")
    res = _launch("nccl_emulated.py", nproc)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(nproc):
        assert f"[rank {r}] OK {r}" in res.stdout, out[-4000:]


def test_init_process_group_timeout_aborts_a_hung_collective() -> None:
    # init_process_group(timeout=2 s): the watchdog names the collective and aborts.
    res = _launch("torch_hang.py", 2, timeout=90.0)
    assert res.returncode != 0
    assert "collective allreduce(sum) (number 1) did not complete within 2 s" in res.stderr
    assert "unreachable" not in res.stdout


def test_torch_face_list_and_uneven_collectives_and_their_gradients() -> None:
    res = _launch("torch_collectives_more.py", 3)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for r in range(3):
        assert f"[rank {r}] OK {r}" in res.stdout, out[-4000:]
