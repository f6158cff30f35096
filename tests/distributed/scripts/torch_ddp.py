"""Run under mpiexec: DDP steps equal single-process steps on the whole batch, and
torch.distributed's collectives against NumPy."""

import numpy as np

import funcgrad.torch.distributed as dist
from funcgrad import torch
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP
from funcgrad.torch.utils.data import DataLoader, TensorDataset
from funcgrad.torch.utils.data.distributed import DistributedSampler

dist.init_process_group("gloo")
rank, n = dist.get_rank(), dist.get_world_size()


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 2)).double()


rng = np.random.default_rng(1)
X, Y = rng.standard_normal((6 * n, 3)), rng.standard_normal((6 * n, 2))

# The reference: one process, the whole batch, 5 SGD steps with momentum.
ref = make_model(0)
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
for _ in range(5):
    ref_opt.zero_grad()
    torch.nn.functional.mse_loss(ref(torch.tensor(X)), torch.tensor(Y)).backward()
    ref_opt.step()

# DDP: different initial weights per rank (rank 0's are broadcast), small buckets, each
# rank its shard through DistributedSampler.
model = DDP(make_model(rank * 0 if rank == 0 else 100 + rank), bucket_cap_mb=1e-4)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
sampler = DistributedSampler(TensorDataset(torch.tensor(X), torch.tensor(Y)), shuffle=False)
loader = DataLoader(TensorDataset(torch.tensor(X), torch.tensor(Y)), batch_size=6,
                    sampler=sampler)
for _ in range(5):
    for xb, yb in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()
for p, q in zip(model.module.parameters(), ref.parameters()):
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)

# no_sync: two accumulated micro-steps reduce to the same gradient as one big step.
model.zero_grad()
with model.no_sync():
    torch.nn.functional.mse_loss(model(torch.tensor(X[rank::n][:3])),
                                 torch.tensor(Y[rank::n][:3]), reduction="sum").backward()
torch.nn.functional.mse_loss(model(torch.tensor(X[rank::n][3:6])),
                             torch.tensor(Y[rank::n][3:6]), reduction="sum").backward()
synced = [p.grad.numpy().copy() for p in model.module.parameters()]
model.zero_grad()
torch.nn.functional.mse_loss(model(torch.tensor(X[rank::n][:6])),
                             torch.tensor(Y[rank::n][:6]), reduction="sum").backward()
for a, p in zip(synced, model.module.parameters()):
    np.testing.assert_allclose(a, p.grad.numpy(), rtol=1e-10)

# Collectives on tensors, every op and a few dtypes.
allv = np.stack([np.arange(4) * (r + 1) - 3 for r in range(n)])
for dtype in (torch.float32, torch.float64, torch.int64):
    ops = {dist.ReduceOp.SUM: allv.sum(0), dist.ReduceOp.MAX: allv.max(0),
           dist.ReduceOp.MIN: allv.min(0), dist.ReduceOp.PRODUCT: allv.prod(0)}
    if dtype != torch.int64:
        ops[dist.ReduceOp.AVG] = allv.mean(0)
    for op, want in ops.items():
        t = torch.tensor(allv[rank], dtype=dtype)
        dist.all_reduce(t, op=op)
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-6)
        assert t.dtype == dtype
t = torch.tensor([float(rank)] * 3)
dist.broadcast(t, src=n - 1)
np.testing.assert_array_equal(t.numpy(), [n - 1.0] * 3)
outs = [torch.zeros(2) for _ in range(n)]
dist.all_gather(outs, torch.tensor([rank, rank + 0.5]))
np.testing.assert_array_equal(np.stack([o.numpy() for o in outs])[:, 0], np.arange(n))
big = torch.zeros(2 * n)
dist.all_gather_into_tensor(big, torch.tensor([rank, rank + 0.5]))
np.testing.assert_array_equal(big.numpy()[::2], np.arange(n))
out = torch.zeros(2)
dist.reduce_scatter_tensor(out, torch.arange(2.0 * n) + rank)
np.testing.assert_allclose(out.numpy(), (np.arange(2.0 * n).reshape(n, 2) * n
                                         + sum(range(n)))[rank])
t = torch.tensor([rank * 1.0])
dist.reduce(t, dst=0)
assert t.item() == (sum(range(n)) if rank == 0 else rank)
if rank == 0:
    dist.send(torch.tensor([42.0]), dst=1)
elif rank == 1:
    r = torch.zeros(1)
    assert dist.recv(r, src=0) == 0 and r.item() == 42.0
w = dist.isend(torch.tensor([float(rank)]), dst=(rank + 1) % n)
r = torch.zeros(1)
dist.irecv(r, src=(rank - 1) % n).wait()
w.wait()
assert r.item() == (rank - 1) % n
objs = [None] * n
dist.all_gather_object(objs, {"rank": rank})
assert [o["rank"] for o in objs] == list(range(n))
lst = [rank, "x"] if rank == 0 else [None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, "x"]
dist.barrier()
dist.destroy_process_group()
print(f"OK {rank}", flush=True)  # (one write: the processes share the output)
