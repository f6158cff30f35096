"""Run under mpiexec (2 or 3 processes): the list and uneven collectives of
torch.distributed (all_to_all, all_to_all_single with split sizes, reduce_scatter,
batch_isend_irecv, gather_object, scatter_object_list) against NumPy, and the gradients of
torch.distributed.nn.functional's collectives against the adjoint worked out in NumPy from
every rank's data (each rank draws all ranks' values from one seed)."""

import warnings
from datetime import timedelta

import numpy as np

import funcgrad.torch.distributed as dist
import funcgrad.torch.distributed.nn.functional as dnnf
from funcgrad import torch

dist.init_process_group("gloo")
rank, n = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(11)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


# all_to_all_single: equal blocks, then uneven ones (S[i, j] rows from rank i to rank j,
# zero-row blocks included).
rows = rng.standard_normal((n, 2 * n, 3))
out = torch.zeros(2 * n, 3, dtype=torch.float64)
dist.all_to_all_single(out, torch.tensor(rows[rank]))
close(out.numpy(), np.concatenate([rows[i][2 * rank:2 * rank + 2] for i in range(n)]))
S = rng.integers(0, 4, (n, n))
S[0, n - 1] = 0
data = [rng.standard_normal((S[i].sum(), 2)) for i in range(n)]
out = torch.zeros(int(S[:, rank].sum()), 2, dtype=torch.float64)
dist.all_to_all_single(out, torch.tensor(data[rank]), output_split_sizes=S[:, rank].tolist(),
                       input_split_sizes=S[rank].tolist())
want = [data[i][S[i, :rank].sum():S[i, :rank + 1].sum()] for i in range(n)]
close(out.numpy(), np.concatenate(want))
try:  # refused on every rank before anything is sent
    dist.all_to_all_single(out, torch.tensor(data[rank]),
                           input_split_sizes=[int(S[rank].sum()) + 1] + [0] * (n - 1),
                           output_split_sizes=S[:, rank].tolist())
except RuntimeError as e:
    assert "Split sizes doesn't match total dim 0 size" in str(e), e
else:
    raise AssertionError("bad split sizes did not raise")

# all_to_all of tensors whose sizes differ by pair: rank i sends (i + j + 1) values to j.
ins = [torch.arange(rank + j + 1, dtype=torch.float32) + 10 * rank for j in range(n)]
outs = [torch.zeros(i + rank + 1) for i in range(n)]
dist.all_to_all(outs, ins)
for i in range(n):
    close(outs[i].numpy(), np.arange(i + rank + 1) + 10 * i)

# reduce_scatter over lists, each op.
blocks = rng.standard_normal((n, n, 4))  # blocks[k][r]: rank k's contribution to rank r
for op, red in ((dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.MAX, np.max),
                (dist.ReduceOp.AVG, np.mean)):
    out = torch.zeros(4, dtype=torch.float64)
    dist.reduce_scatter(out, [torch.tensor(b) for b in blocks[rank]], op=op)
    close(out.numpy(), red(blocks[:, rank], axis=0))

# batch_isend_irecv around the ring, both ways at once.
right, left = (rank + 1) % n, (rank - 1) % n
got_l, got_r = torch.zeros(3), torch.zeros(3)
ops = [dist.P2POp(dist.isend, torch.full((3,), float(rank)), right),
       dist.P2POp(dist.irecv, got_l, left),
       dist.P2POp(dist.isend, torch.full((3,), 100.0 + rank), left),
       dist.P2POp(dist.irecv, got_r, right)]
for w in dist.batch_isend_irecv(ops):
    w.wait()
close(got_l.numpy(), [left] * 3)
close(got_r.numpy(), [100.0 + right] * 3)
try:
    dist.P2POp(dist.send, got_l, right)
except ValueError as e:
    assert "Invalid ``op``" in str(e)
else:
    raise AssertionError("P2POp(send) did not raise")

# Objects.
gathered = [None] * n if rank == n - 1 else None
dist.gather_object({"rank": rank, "sq": rank * rank}, gathered, dst=n - 1)
if rank == n - 1:
    assert gathered == [{"rank": r, "sq": r * r} for r in range(n)], gathered
got = [None]
dist.scatter_object_list(got, [("obj", r) for r in range(n)] if rank == 0 else None, src=0)
assert got == [("obj", rank)], got
dist.monitored_barrier(timeout=timedelta(seconds=60))
assert dist.get_node_local_rank(fallback_rank=rank) in (rank, int(
    __import__("os").environ.get("LOCAL_RANK", rank)))

# torch.distributed.nn.functional: gradients through the collectives.
X = rng.standard_normal((n, 5))  # rank k's input
W = rng.standard_normal((n, n, 5))  # rank r's weights on output j
A = rng.standard_normal(n)


def leaf():
    return torch.tensor(X[rank], requires_grad=True)


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    x = leaf()
    outs = dnnf.all_gather(x)
    close(torch.stack(outs).detach().numpy(), X)
    sum((o * torch.tensor(W[rank, j])).sum() for j, o in enumerate(outs)).backward()
    close(x.grad.numpy(), W[:, rank].sum(0))
assert any(issubclass(c.category, FutureWarning) and "all_gather is deprecated" in
           str(c.message) for c in caught), [str(c.message) for c in caught]
warnings.simplefilter("ignore", FutureWarning)

x = leaf()
y = dnnf.all_reduce(x * A[rank])
close(y.detach().numpy(), (X * A[:, None]).sum(0))
(y * torch.tensor(W[rank, 0])).sum().backward()
close(x.grad.numpy(), A[rank] * W[:, 0].sum(0))

src = n - 1
x = leaf()
y = dnnf.broadcast(x, src)
close(y.detach().numpy(), X[src])
(y * torch.tensor(W[rank, 1])).sum().backward()
close(x.grad.numpy(), W[:, 1].sum(0) if rank == src else np.zeros(5))

C = rng.standard_normal((n, n))  # rank k's input j is x_k * C[k, j]
x = leaf()
y = dnnf.reduce_scatter(torch.zeros(5, dtype=torch.float64), [x * C[rank, j] for j in range(n)])
close(y.detach().numpy(), (X * C[:, rank][:, None]).sum(0))
(y * torch.tensor(W[rank, 0])).sum().backward()
close(x.grad.numpy(), (C[rank][:, None] * W[:, 0]).sum(0))

x = leaf()
gs = dnnf.gather(x, dst=0)
if rank == 0:
    close(torch.stack(gs).detach().numpy(), X)
sum((g * torch.tensor(W[rank, j])).sum() for j, g in enumerate(gs)).backward()
close(x.grad.numpy(), W[0, rank])

x = leaf()
parts = [x * float(j + 1) for j in range(n)]
y = dnnf.scatter(parts, src=1 % n)
close(y.detach().numpy(), X[1 % n] * (rank + 1))
(y * torch.tensor(W[rank, 0])).sum().backward()
close(x.grad.numpy(), sum((j + 1) * W[j, 0] for j in range(n)) if rank == 1 % n
      else np.zeros(5))

x = leaf()
y = dnnf.reduce(x, dst=0)
(y * torch.tensor(W[rank, 0])).sum().backward()
close(x.grad.numpy(), W[0, 0])

# all_to_all_single with split sizes: rank i's rows [S[i, :j].sum(), S[i, :j+1].sum()) go to
# j; each received row r of rank j gets weight V[j][r], which flows back to its sender.
Y = [rng.standard_normal((S[i].sum(), 2)) for i in range(n)]
V = [rng.standard_normal((S[:, j].sum(), 2)) for j in range(n)]
x = torch.tensor(Y[rank], requires_grad=True)
y = dnnf.all_to_all_single(torch.zeros(int(S[:, rank].sum()), 2, dtype=torch.float64), x,
                           S[:, rank].tolist(), S[rank].tolist())
(y * torch.tensor(V[rank])).sum().backward()
want = np.concatenate([V[j][S[:rank, j].sum():S[:rank + 1, j].sum()] for j in range(n)])
close(x.grad.numpy(), want)

x = leaf()
outs = dnnf.all_to_all([torch.zeros(5, dtype=torch.float64) for _ in range(n)],
                       [x * float(j + 1) for j in range(n)])
close(torch.stack(outs).detach().numpy(), X * (rank + 1))
sum((o * torch.tensor(W[rank, i])).sum() for i, o in enumerate(outs)).backward()
close(x.grad.numpy(), sum((j + 1) * W[j, rank] for j in range(n)))

dist.barrier()
print(f"[rank {rank}] OK {rank}", flush=True)
dist.destroy_process_group()
