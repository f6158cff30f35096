"""In one process: the nccl backend on the CuPy emulator (CUDA tensors reduced device to
device through ``cupy.cuda.nccl``, no host copy), subgroups' checks, the default collective
timeouts and how they are set, the all_reduce fast path's fallbacks, and the emulated
NCCL's calls against NumPy. The same paths across processes run in test_multiprocess.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch.distributed as dist
from funcgrad import processes, torch
from funcgrad.distributed._mpi import timeout_from

pytest.importorskip("mpi4py")


@pytest.fixture
def world() -> Iterator[None]:
    dist.init_process_group("gloo")
    try:
        yield
    finally:
        dist.destroy_process_group()


@pytest.fixture
def nccl_world(fake_cupy: Any) -> Iterator[Any]:
    dist.init_process_group("nccl")
    try:
        yield fake_cupy
    finally:
        dist.destroy_process_group()


# ------------------------------------------------------------------------- timeouts


@pytest.mark.parametrize(("backend", "seconds"), [("gloo", 1800.0), ("mpi", 1800.0)])
def test_default_timeouts_are_pytorchs(backend: str, seconds: float,
                                       monkeypatch: Any) -> None:
    monkeypatch.delenv("FUNCGRAD_COLLECTIVE_TIMEOUT", raising=False)
    dist.init_process_group(backend)
    try:
        assert processes.communicator().timeout == seconds  # type: ignore[union-attr]
    finally:
        dist.destroy_process_group()


def test_nccl_default_timeout_is_ten_minutes(fake_cupy: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("FUNCGRAD_COLLECTIVE_TIMEOUT", raising=False)
    dist.init_process_group("nccl")
    try:
        assert dist.group.WORLD._comm.host.timeout == 600.0  # type: ignore[union-attr]
    finally:
        dist.destroy_process_group()


def test_timeout_argument_and_environment(monkeypatch: Any) -> None:
    monkeypatch.setenv("FUNCGRAD_COLLECTIVE_TIMEOUT", "7")
    assert timeout_from(None, 1800.0) == 7.0
    assert timeout_from(3.5, 1800.0) == 3.5  # the argument wins
    dist.init_process_group("gloo", timeout=timedelta(seconds=42))
    try:
        assert processes.communicator().timeout == 42.0  # type: ignore[union-attr]
    finally:
        dist.destroy_process_group()
    monkeypatch.setenv("FUNCGRAD_COLLECTIVE_TIMEOUT", "none")
    assert timeout_from(None, 1800.0) is None
    monkeypatch.delenv("FUNCGRAD_COLLECTIVE_TIMEOUT")
    assert timeout_from(0, 1800.0) is None  # 0: no limit
    with pytest.raises(ValueError, match="must be >= 0"):
        timeout_from(-1.0, 1800.0)


# -------------------------------------------------------------------------- groups


def test_groups_in_a_world_of_one(world: None) -> None:
    g = dist.new_group([0])
    assert dist.get_rank(g) == 0 and dist.get_world_size(g) == 1
    assert dist.get_process_group_ranks(g) == [0]
    assert dist.get_global_rank(g, 0) == 0 and dist.get_group_rank(g, 0) == 0
    t = torch.tensor([2.0, 3.0])
    dist.all_reduce(t, op=dist.ReduceOp.PRODUCT, group=g)
    np.testing.assert_array_equal(t.numpy(), [2.0, 3.0])
    with pytest.raises(ValueError, match="Group rank 1 is not part of group"):
        dist.get_global_rank(g, 1)
    with pytest.raises(ValueError, match="Global rank 5 is not part of group"):
        dist.get_group_rank(g, 5)
    with pytest.raises(ValueError, match="rank 1 is not a rank of the world of 1"):
        dist.new_group([0, 1])
    with pytest.raises(ValueError, match="duplicate ranks"):
        dist.new_group([0, 0])
    with pytest.raises(ValueError, match="Global rank 3 is not part of group"):
        dist.broadcast(t, src=3, group=g)
    dist.destroy_process_group(g)
    with pytest.raises(ValueError, match="destroyed"):
        dist.all_reduce(t, group=g)
    with pytest.raises(TypeError, match="must be a ProcessGroup"):
        dist.all_reduce(t, group="everyone")


def test_non_member_skips_collectives_with_a_warning(world: None) -> None:
    t = torch.tensor([1.0])
    with pytest.warns(UserWarning, match="not a member"):
        assert dist.all_reduce(t, group=dist.GroupMember.NON_GROUP_MEMBER) is None
    assert dist.get_rank(dist.GroupMember.NON_GROUP_MEMBER) == -1


# ----------------------------------------------------------------- the fast path


def test_fast_path_falls_back_for_strided_and_read_only_buffers(world: None) -> None:
    base = torch.arange(6.0).reshape(2, 3)
    col = base[:, 1]  # not contiguous
    dist.all_reduce(col)
    np.testing.assert_array_equal(col.numpy(), [1.0, 4.0])
    ro = np.arange(3.0)
    ro.flags.writeable = False
    t = torch.tensor([0.0, 0.0, 0.0])
    t._data = ro  # a read-only buffer: mpi4py refuses it, the general path copies
    dist.all_reduce(t)
    np.testing.assert_array_equal(t.numpy(), [0.0, 1.0, 2.0])
    version = t._version
    dist.all_reduce(t)
    assert t._version > version  # an in-place change, counted


# -------------------------------------------------------------------- nccl backend


def test_nccl_needs_cuda() -> None:
    from funcgrad.torch import cuda

    if cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError, match="only supported with GPUs"):
        dist.init_process_group("nccl")


def test_nccl_backend_reduces_cuda_tensors_without_host_copies(nccl_world: Any) -> None:
    import fakecupy
    from fakecupy import nccl

    t = torch.tensor([1.0, -2.0, 3.0], device="cuda")
    flags = torch.tensor([True, False], device="cuda")
    halves = torch.tensor([1.5, 2.5], dtype=torch.float16, device="cuda")
    before = nccl.CALLS["allReduce"]
    with fakecupy.counting() as moved:
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
            dist.all_reduce(t, op=op)
        dist.all_reduce(flags, op=dist.ReduceOp.MIN)
        dist.all_reduce(halves)
        dist.broadcast(t, src=0)
    assert moved.h2d == 0 and moved.d2h == 0
    assert nccl.CALLS["allReduce"] - before == 5
    assert t.is_cuda and halves.dtype == torch.float16
    np.testing.assert_array_equal(t.cpu().numpy(), [1.0, -2.0, 3.0])
    np.testing.assert_array_equal(flags.cpu().numpy(), [True, False])
    np.testing.assert_array_equal(halves.cpu().numpy(), [1.5, 2.5])


def test_gloo_backend_copies_cuda_tensors_through_the_host(fake_cupy: Any) -> None:
    import fakecupy

    dist.init_process_group("gloo")
    try:
        t = torch.tensor([1.0, 2.0], device="cuda")
        with fakecupy.counting() as moved:
            dist.all_reduce(t)
        assert moved.d2h > 0 and moved.h2d > 0
    finally:
        dist.destroy_process_group()


def test_nccl_recv_from_any_source_is_refused(nccl_world: Any) -> None:
    with pytest.raises(RuntimeError, match="does not support receiving from any source"):
        dist.recv(torch.zeros(2, device="cuda"))


_NCCL_TYPES = [("float32", 7), ("float64", 8), ("int32", 2), ("int64", 4), ("uint8", 1),
               ("float16", 6)]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_emulated_nccl_calls_against_numpy(data: Any) -> None:
    from fakecupy import nccl

    name, code = data.draw(st.sampled_from(_NCCL_TYPES))
    n = data.draw(st.integers(0, 9))
    low = 0 if name == "uint8" else -9
    values = np.asarray(data.draw(st.lists(st.integers(low, 9), min_size=n, max_size=n)),
                        name)
    comm = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
    try:
        assert comm.size() == 1 and comm.rank_id() == 0
        for op, want in ((nccl.NCCL_SUM, values), (nccl.NCCL_MAX, values),
                         (nccl.NCCL_PROD, values), (nccl.NCCL_AVG, values)):
            out = np.full(n, 99, name)
            comm.allReduce(values.ctypes.data, out.ctypes.data, n, code, op, 0)
            np.testing.assert_array_equal(out, want)
        gathered = np.zeros(n, name)
        comm.allGather(values.ctypes.data, gathered.ctypes.data, n, code, 0)
        np.testing.assert_array_equal(gathered, values)
        inplace = values.copy()
        comm.bcast(inplace.ctypes.data, n, code, 0, 0)
        np.testing.assert_array_equal(inplace, values)
    finally:
        comm.destroy()
    with pytest.raises(nccl.NcclError, match="destroyed"):
        comm.allReduce(values.ctypes.data, values.ctypes.data, n, code, nccl.NCCL_SUM, 0)
    with pytest.raises(TypeError, match="128 bytes"):
        nccl.NcclCommunicator(1, b"short", 0)
