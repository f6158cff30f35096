"""Run under mpiexec with the CuPy emulator as ``cupy`` (its ``cupy.cuda.nccl`` carried by
MPI): the nccl backend's collectives on CUDA tensors against NumPy, every one device to
device (the emulator's host-transfer counters stay at zero while NCCL's call counters
move); subgroups on NCCL; the JAX face's pmap collectives on device arrays through NCCL;
and, as the control, the gloo backend copying the same tensors through the host."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "support"))

import fakecupy  # noqa: E402

cp = fakecupy.install()

import numpy as np  # noqa: E402
from fakecupy import nccl  # noqa: E402

import funcgrad as jax  # noqa: E402
import funcgrad.torch.distributed as dist  # noqa: E402
from funcgrad import torch  # noqa: E402

dist.init_process_group("nccl")
rank, n = dist.get_rank(), dist.get_world_size()
assert dist.get_backend() == "nccl"
rng = np.random.default_rng(7)
allv = rng.integers(-3, 4, size=(n, 5))


def cuda(a, dtype):
    return torch.tensor(a, dtype=dtype, device="cuda")


def host(t):
    return t.cpu().numpy()


moved = {"h2d": 0, "d2h": 0}


def coll(fn, *args, **kwargs):
    """A collective, with the host transfers it makes counted (the inputs are made
    outside: making a CUDA tensor from host data is a transfer of its own)."""
    with fakecupy.counting() as c:
        out = fn(*args, **kwargs)
    moved["h2d"] += c.h2d
    moved["d2h"] += c.d2h
    return out


before = dict(nccl.CALLS)
results = []
for dtype, npt in ((torch.float32, np.float32), (torch.float64, np.float64),
                   (torch.int64, np.int64), (torch.int32, np.int32),
                   (torch.float16, np.float16), (torch.int16, np.int16),
                   (torch.uint8, np.uint8)):
    vals = np.abs(allv) if npt == np.uint8 else allv
    ops = {dist.ReduceOp.SUM: vals.sum(0), dist.ReduceOp.MAX: vals.max(0),
           dist.ReduceOp.MIN: vals.min(0), dist.ReduceOp.PRODUCT: vals.prod(0)}
    if np.issubdtype(npt, np.floating):
        ops[dist.ReduceOp.AVG] = vals.mean(0)
    for op, want in ops.items():
        t = cuda(vals[rank], dtype)
        coll(dist.all_reduce, t, op=op)
        assert t.is_cuda and t.dtype == dtype
        results.append((t, want.astype(npt), (dtype, op)))
flags = cuda(allv[rank] > 0, torch.bool)
coll(dist.all_reduce, flags, op=dist.ReduceOp.MAX)
results.append((flags, (allv > 0).any(0), "bool max"))
strided = cuda(np.stack([allv[rank], allv[rank]], 1), torch.float64)[:, 0]
coll(dist.all_reduce, strided)
results.append((strided, allv.sum(0).astype(np.float64), "strided"))

t = cuda(allv[rank], torch.float32)
coll(dist.broadcast, t, src=n - 1)
results.append((t, allv[n - 1].astype(np.float32), "broadcast"))
outs = [torch.zeros(5, device="cuda") for _ in range(n)]
coll(dist.all_gather, outs, cuda(allv[rank], torch.float32))
for r, o in enumerate(outs):
    results.append((o, allv[r].astype(np.float32), f"all_gather {r}"))
big = torch.zeros(5 * n, device="cuda", dtype=torch.float64)
coll(dist.all_gather_into_tensor, big, cuda(allv[rank], torch.float64))
results.append((big, allv.reshape(-1).astype(np.float64), "all_gather_into_tensor"))
full = rng.standard_normal((n, 2 * n, 3))
out = torch.zeros(2, 3, device="cuda", dtype=torch.float64)
coll(dist.reduce_scatter_tensor, out, cuda(full[rank], torch.float64))
results.append((out, full.sum(0)[2 * rank:2 * rank + 2], "reduce_scatter_tensor"))
t = cuda(allv[rank], torch.float64)
coll(dist.reduce, t, dst=0, op=dist.ReduceOp.MAX)
results.append((t, allv.max(0) if rank == 0 else allv[rank], "reduce"))
blocks = np.arange(n * n * 2.0).reshape(n, n, 2)  # blocks[i, j]: from rank i to rank j
a2a = torch.zeros(2 * n, device="cuda", dtype=torch.float64)
coll(dist.all_to_all_single, a2a, cuda(blocks[rank].reshape(-1), torch.float64))
results.append((a2a, blocks[:, rank].reshape(-1), "all_to_all_single"))
# Uneven blocks (S[i, j] rows from rank i to rank j), the list forms and reduce_scatter of a
# list: device to device as well (only the block sizes cross the host).
S = (np.arange(n * n).reshape(n, n) % 3)
rows = [np.arange(S[i].sum() * 2.0).reshape(-1, 2) + 100 * i for i in range(n)]
got = torch.zeros(int(S[:, rank].sum()), 2, device="cuda", dtype=torch.float64)
coll(dist.all_to_all_single, got, cuda(rows[rank], torch.float64), S[:, rank].tolist(),
     S[rank].tolist())
want = [rows[i][S[i, :rank].sum():S[i, :rank + 1].sum()] for i in range(n)]
results.append((got, np.concatenate(want), "uneven all_to_all_single"))
outs = [torch.zeros(i + rank + 1, device="cuda") for i in range(n)]
coll(dist.all_to_all, outs, [cuda(np.arange(rank + j + 1.0) + 10 * rank, torch.float32)
                             for j in range(n)])
for i, o in enumerate(outs):
    results.append((o, (np.arange(i + rank + 1.0) + 10 * i).astype(np.float32),
                    f"all_to_all {i}"))
out = torch.zeros(3, device="cuda", dtype=torch.float64)
coll(dist.reduce_scatter, out, [cuda(full[rank][j, :3], torch.float64) for j in range(n)])
results.append((out, full[:, rank, :3].sum(0), "reduce_scatter"))
if rank == 0:
    coll(dist.send, cuda([42.0, 43.0], torch.float64), dst=n - 1)
elif rank == n - 1:
    got = torch.zeros(2, device="cuda", dtype=torch.float64)
    assert coll(dist.recv, got, src=0) == 0
    results.append((got, np.array([42.0, 43.0]), "send/recv"))
coll(dist.barrier)

# A subgroup of the first and last ranks, with NCCL communicators of its own.
pair = coll(dist.new_group, [n - 1, 0])
if rank in (0, n - 1):
    assert dist.get_world_size(pair) == 2
    assert dist.get_rank(pair) == (0 if rank == 0 else 1)
    assert dist.get_global_rank(pair, 1) == n - 1 and dist.get_group_rank(pair, 0) == 0
    t = cuda(allv[rank], torch.float64)
    coll(dist.all_reduce, t, group=pair)
    results.append((t, (allv[0] + allv[n - 1]).astype(np.float64), "pair all_reduce"))
    t = cuda(allv[rank], torch.float64)
    coll(dist.broadcast, t, src=n - 1, group=pair)
    results.append((t, allv[n - 1].astype(np.float64), "pair broadcast"))
else:
    assert pair == dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(pair) == -1

# The JAX face: pmap's collectives on device arrays go through NCCL too.
x = jax.device_put(allv[rank][None].astype(np.float64), "cuda")
summed = coll(jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i"), x)
gathered = coll(jax.pmap(lambda v: jax.lax.all_gather(v, "i"), axis_name="i"), x)
assert summed.device.platform == "cuda"

assert moved == {"h2d": 0, "d2h": 0}, moved
calls = {k: v - before.get(k, 0) for k, v in nccl.CALLS.items()}
for name in ("allReduce", "broadcast", "allGather", "reduceScatter", "reduce", "send", "recv"):
    assert calls.get(name, 0) > 0, (name, calls)

for got, want, what in results:
    np.testing.assert_allclose(host(got).astype(np.float64), np.asarray(want, np.float64),
                               rtol=1e-3 if "float16" in str(what) else 1e-12,
                               err_msg=str(what))
np.testing.assert_allclose(np.asarray(summed)[0], allv.sum(0))
np.testing.assert_allclose(np.asarray(gathered)[0], allv)
dist.destroy_process_group(pair)

# DDP with CUDA parameters: gradient buckets are averaged on the device through NCCL.
model = torch.nn.Linear(3, 2).to("cuda")
ddp = torch.nn.parallel.DistributedDataParallel(model)
xs = rng.standard_normal((n, 4, 3))
reduces = nccl.CALLS.get("allReduce", 0)
ddp(cuda(xs[rank], torch.float32)).sum().backward()
assert nccl.CALLS.get("allReduce", 0) > reduces
assert model.weight.grad.is_cuda and model.bias.grad.is_cuda
# d/dW of sum(x W^T + b) is x's column sums, averaged over the ranks; d/db is the batch size.
np.testing.assert_allclose(host(model.weight.grad), np.tile(xs.sum(1).mean(0), (2, 1)),
                           rtol=1e-5)
np.testing.assert_allclose(host(model.bias.grad), np.full(2, 4.0), rtol=1e-6)

# The control: gloo carries the same CUDA tensor through host memory.
dist.destroy_process_group()
dist.init_process_group("gloo")
t = cuda(allv[rank], torch.float64)
with fakecupy.counting() as moved:
    dist.all_reduce(t)
assert moved.d2h > 0 and moved.h2d > 0, moved
np.testing.assert_allclose(host(t), allv.sum(0))
dist.destroy_process_group()
print("OK", rank)
