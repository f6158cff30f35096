"""Run under mpiexec (2 or 3 processes): torch.distributed subgroups on MPI
sub-communicators, against NumPy; the group ranks and the rank translations as PyTorch
defines them; non-members skip a group's collectives; the default collective timeout."""

import warnings

import numpy as np

import funcgrad.torch.distributed as dist
from funcgrad import processes, torch

dist.init_process_group("gloo")
rank, n = dist.get_rank(), dist.get_world_size()
# PyTorch's default for gloo: 30 minutes (the watchdog aborts past it).
assert processes.communicator().timeout == 1800.0
rng = np.random.default_rng(3)
allv = rng.standard_normal((n, 4))

# Every subset of two or more ranks, given unsorted: group rank = position in sorted ranks.
subsets = [[n - 1, 0], list(range(n))[::-1], [1, 0]] + ([[2, 1]] if n > 2 else [])
for members in subsets:
    g = dist.new_group(members)
    ordered = sorted(members)
    if rank not in members:
        assert g == dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(g) == -1 and dist.get_world_size(g) == -1
        t = torch.tensor(allv[rank])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert dist.all_reduce(t, group=g) is None
        assert caught and "not a member" in str(caught[0].message)
        np.testing.assert_array_equal(t.numpy(), allv[rank])  # untouched
        continue
    me = ordered.index(rank)
    assert dist.get_rank(g) == me and dist.get_world_size(g) == len(ordered)
    assert dist.get_process_group_ranks(g) == ordered
    assert [dist.get_global_rank(g, i) for i in range(len(ordered))] == ordered
    assert [dist.get_group_rank(g, r) for r in ordered] == list(range(len(ordered)))
    outsider = next((r for r in range(n) if r not in ordered), None)
    if outsider is not None:
        try:
            dist.get_group_rank(g, outsider)
        except ValueError as e:
            assert "is not part of group" in str(e)
        else:
            raise AssertionError("get_group_rank of a non-member did not raise")
    sub = allv[ordered]
    for op, want in ((dist.ReduceOp.SUM, sub.sum(0)), (dist.ReduceOp.MAX, sub.max(0)),
                     (dist.ReduceOp.AVG, sub.mean(0)), (dist.ReduceOp.PRODUCT, sub.prod(0))):
        t = torch.tensor(allv[rank])
        dist.all_reduce(t, op=op, group=g)
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-12)
    root = ordered[-1]  # src is a world rank
    t = torch.tensor(allv[rank])
    dist.broadcast(t, src=root, group=g)
    np.testing.assert_array_equal(t.numpy(), allv[root])
    t = torch.tensor(allv[rank])
    dist.broadcast(t, group=g, group_src=0)
    np.testing.assert_array_equal(t.numpy(), allv[ordered[0]])
    outs = [torch.zeros(4, dtype=torch.float64) for _ in ordered]
    dist.all_gather(outs, torch.tensor(allv[rank]), group=g)
    np.testing.assert_array_equal(np.stack([o.numpy() for o in outs]), sub)
    t = torch.tensor(allv[rank])
    dist.reduce(t, dst=root, group=g)
    np.testing.assert_allclose(t.numpy(), sub.sum(0) if rank == root else allv[rank])
    gl = [torch.zeros(4, dtype=torch.float64) for _ in ordered] if rank == root else None
    dist.gather(torch.tensor(allv[rank]), gl, dst=root, group=g)
    if rank == root:
        np.testing.assert_array_equal(np.stack([o.numpy() for o in gl]), sub)
    # Point to point inside the group: the first member sends to the last (world ranks),
    # and recv gives the sender's world rank.
    if rank == ordered[0]:
        dist.send(torch.tensor([float(rank)]), dst=root, group=g)
    elif rank == root:
        got = torch.zeros(1)
        assert dist.recv(got, src=ordered[0], group=g) == ordered[0]
        assert got.item() == ordered[0]
    objs = [None] * len(ordered)
    dist.all_gather_object(objs, {"r": rank}, group=g)
    assert [o["r"] for o in objs] == ordered
    dist.barrier(group=g)
    dist.destroy_process_group(g)

# A group's collectives run alongside the world's, each on its own communicator.
evens = dist.new_group([r for r in range(n) if r % 2 == 0])
t = torch.tensor([1.0])
if rank % 2 == 0:
    dist.all_reduce(t, group=evens)
    assert t.item() == len(range(0, n, 2))
w = torch.tensor([1.0])
dist.all_reduce(w)
assert w.item() == n
dist.destroy_process_group()
print("OK", rank)
