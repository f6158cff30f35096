"""The distributed APIs in one process: DistributedSampler's partition against PyTorch's,
torch.distributed's collectives as a world of one, DDP's buckets and errors, the launcher's
command line, and funcgrad.distributed's host helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.torch.distributed as dist
from funcgrad import torch
from funcgrad.distributed.run import mpiexec_command
from funcgrad.torch.utils.data.distributed import DistributedSampler, torch_randperm


@pytest.fixture
def world() -> Iterator[None]:
    dist.init_process_group("gloo")
    try:
        yield
    finally:
        dist.destroy_process_group()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 60), world_size=st.integers(1, 5), seed=st.integers(0, 2 ** 31),
       drop_last=st.booleans(), shuffle=st.booleans(), epoch=st.integers(0, 3))
def test_distributed_sampler_partitions_as_pytorch(n: int, world_size: int, seed: int,
                                                   drop_last: bool, shuffle: bool,
                                                   epoch: int) -> None:
    real = pytest.importorskip("torch.utils.data.distributed")
    if n == 0 and not drop_last:
        return  # PyTorch pads an empty list forever (division by zero): nothing to compare
    for rank in range(world_size):
        ours = DistributedSampler(range(n), world_size, rank, shuffle, seed, drop_last)
        theirs = real.DistributedSampler(range(n), world_size, rank, shuffle, seed, drop_last)
        ours.set_epoch(epoch)
        theirs.set_epoch(epoch)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 2 ** 32 - 1))
def test_randperm_is_pytorchs(n: int, seed: int) -> None:
    real = pytest.importorskip("torch")
    g = real.Generator()
    g.manual_seed(seed)
    assert torch_randperm(n, seed) == real.randperm(n, generator=g).tolist()


def test_randperm_without_pytorch_is_a_permutation() -> None:
    p = torch_randperm(50, 3)
    assert sorted(p) == list(range(50)) and p != list(range(50))


def test_sampler_errors_as_pytorch() -> None:
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        DistributedSampler(range(4))


def test_collectives_in_a_world_of_one(world: None) -> None:
    assert dist.is_initialized() and dist.get_rank() == 0 and dist.get_world_size() == 1
    assert dist.get_backend() == "gloo"
    t = torch.tensor([1.0, -2.0])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX, dist.ReduceOp.PRODUCT):
        dist.all_reduce(t, op=op)
        np.testing.assert_array_equal(t.numpy(), [1.0, -2.0])
    work = dist.all_reduce(t, async_op=True)
    assert work is not None and work.wait() and work.is_completed()
    outs = [torch.zeros(2)]
    dist.all_gather(outs, t)
    np.testing.assert_array_equal(outs[0].numpy(), [1.0, -2.0])
    dist.broadcast(t, 0)
    dist.barrier()
    objs: list[Any] = [None]
    dist.all_gather_object(objs, {"a": 1})
    assert objs == [{"a": 1}]
    with pytest.raises(TypeError, match="must be Tensor"):
        dist.all_reduce(np.ones(2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("gloo")


def test_list_and_object_collectives_in_a_world_of_one(world: None) -> None:
    x = torch.arange(6.0).reshape(3, 2)
    out = torch.zeros(3, 2)
    dist.all_to_all_single(out, x, [3], [3])
    np.testing.assert_array_equal(out.numpy(), x.numpy())
    with pytest.raises(RuntimeError, match="Split sizes doesn't match total dim 0 size"):
        dist.all_to_all_single(out, x, [3], [2])
    outs = [torch.zeros(3)]
    dist.all_to_all(outs, [torch.tensor([1.0, 2.0, 3.0])])
    np.testing.assert_array_equal(outs[0].numpy(), [1.0, 2.0, 3.0])
    r = torch.zeros(2)
    dist.reduce_scatter(r, [torch.tensor([4.0, 5.0])], op=dist.ReduceOp.AVG)
    np.testing.assert_array_equal(r.numpy(), [4.0, 5.0])
    got: list[Any] = [None]
    dist.gather_object("a", got)
    assert got == ["a"]
    dist.scatter_object_list(got, ["b"])
    assert got == ["b"]
    with pytest.raises(ValueError, match="Must provide object_gather_list on dst rank."):
        dist.gather_object("a")
    dist.monitored_barrier()
    with pytest.raises(ValueError, match="Invalid ``p2p_op_list``"):
        dist.batch_isend_irecv([])
    assert dist.get_node_local_rank(fallback_rank=0) == int(os.environ.get("LOCAL_RANK", "0"))


def test_node_local_rank_as_pytorch(monkeypatch: Any) -> None:
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    assert dist.get_node_local_rank(fallback_rank=2) == 2
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert dist.get_node_local_rank(fallback_rank=2) == 3


def test_differentiable_collectives_in_a_world_of_one(world: None) -> None:
    import funcgrad.torch.distributed.nn.functional as dnnf  # noqa: PLC0415

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(FutureWarning, match="all_reduce is deprecated"):
        y = dnnf.all_reduce(x * 3.0)
    (y * torch.tensor([1.0, -1.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, -3.0])


def test_collectives_before_init_raise_as_pytorch() -> None:
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")


def test_all_reduce_of_a_leaf_keeps_its_graph_flags(world: None) -> None:
    w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    dist.all_reduce(w.data)
    assert w.requires_grad and w.grad_fn is None


def test_ddp_in_a_world_of_one_equals_the_module(world: None) -> None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    ddp = torch.nn.parallel.DistributedDataParallel(net, bucket_cap_mb=1e-5)
    assert len(ddp._buckets) == 4  # tiny buckets: one parameter each
    x = torch.randn(5, 3)
    ddp(x).sum().backward()
    grads = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    net(x).sum().backward()
    for a, p in zip(grads, net.parameters()):
        np.testing.assert_array_equal(a, p.grad.numpy())
    assert list(ddp.state_dict())[0].startswith("module.")


def test_ddp_with_an_unused_parameter(world: None) -> None:
    class TwoHeads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Linear(2, 1)
            self.b = torch.nn.Linear(2, 1)

        def forward(self, x: Any) -> Any:
            return self.a(x)

    x = torch.ones(3, 2)
    strict = torch.nn.parallel.DistributedDataParallel(TwoHeads())
    strict(x).sum().backward()
    with pytest.raises(RuntimeError, match="Expected to have finished reduction"):
        strict(x)
    loose = torch.nn.parallel.DistributedDataParallel(TwoHeads(), find_unused_parameters=True)
    for _ in range(2):
        loose(x).sum().backward()
    assert loose.module.b.weight.grad is None


def test_post_accumulate_grad_hook_runs_after_the_grad_is_set() -> None:
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    seen: list[Any] = []
    handle = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.numpy().copy()))
    (w * 3).sum().backward()
    (w * 2).sum().backward()
    np.testing.assert_array_equal(seen[0], [3.0, 3.0])
    np.testing.assert_array_equal(seen[1], [5.0, 5.0])
    handle.remove()
    (w * 1).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="non-leaf"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_launcher_command_line() -> None:
    cmd = mpiexec_command(3, ["train.py", "--lr", "0.1"], mpiexec="/x/mpiexec", as_root=True,
                          cores=2)
    assert cmd[:5] == ["/x/mpiexec", "-n", "3", "--allow-run-as-root", "--oversubscribe"]
    assert cmd[-4:] == ["--child", "train.py", "--lr", "0.1"]
    plain = mpiexec_command(2, ["t.py"], mpiexec="mpiexec", as_root=False, cores=8,
                            prefix=False)
    assert "--oversubscribe" not in plain and "--allow-run-as-root" not in plain
    assert plain[-1] == "t.py" and "--child" not in plain


def test_jax_face_host_helpers_in_one_process() -> None:
    assert fg.process_count() == 1 and fg.process_index() == 0
    g = fg.distributed.process_allgather({"a": np.arange(3)})
    assert g["a"].shape == (1, 3)
    np.testing.assert_array_equal(fg.distributed.process_allgather(np.ones((2, 2)), tiled=True),
                                  np.ones((2, 2)))
    from funcgrad.experimental import multihost_utils

    multihost_utils.sync_global_devices("x")
    np.testing.assert_array_equal(multihost_utils.broadcast_one_to_all(np.arange(2)), [0, 1])
