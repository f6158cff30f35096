"""Run as ``python torch_spawn.py N PORT MODE``: N processes started by
torch.multiprocessing.spawn (no mpiexec) meet over TCP.

MODE "env": torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), then the
whole DDP-and-collectives check of torch_ddp.py. MODE "tutorial": PyTorch's DDP tutorial as
written (init_process_group("gloo", rank=, world_size=)), its result against one process.
MODE "jax": the JAX face's distributed.initialize(coordinator_address=...) and its
collectives. MODE "raises": process 1 raises; the parent's join must report it."""

import os
import runpy
import sys

import numpy as np

import funcgrad.torch.distributed as dist
import funcgrad.torch.multiprocessing as mp
from funcgrad import torch
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP

HERE = os.path.dirname(os.path.abspath(__file__))


class ToyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = torch.nn.Linear(10, 10)
        self.relu = torch.nn.ReLU()
        self.net2 = torch.nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def batches(n):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((4 * n, 10)).astype(np.float32),
            rng.standard_normal((4 * n, 5)).astype(np.float32))


def tutorial(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    ddp_model = DDP(ToyModel())
    loss_fn = torch.nn.MSELoss()
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.001)
    X, Y = batches(world_size)
    optimizer.zero_grad()
    outputs = ddp_model(torch.tensor(X[rank::world_size]))
    loss_fn(outputs, torch.tensor(Y[rank::world_size])).backward()
    optimizer.step()
    # One process, the whole batch: the same step.
    torch.manual_seed(0)
    ref = ToyModel()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.001)
    order = np.concatenate([np.arange(r, len(X), world_size) for r in range(world_size)])
    loss_fn(ref(torch.tensor(X[order])), torch.tensor(Y[order])).backward()
    ref_opt.step()
    for p, q in zip(ddp_model.module.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5,
                                   atol=1e-7)
    dist.destroy_process_group()
    print(f"TUTORIAL OK {rank}", flush=True)


def env_worker(rank, world_size, port):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port))
    runpy.run_path(os.path.join(HERE, "torch_ddp.py"), run_name="__main__")
    sys.stdout.flush()


def jax_face(rank, world_size, port):
    import funcgrad as jax
    from funcgrad import lax
    from funcgrad.experimental import multihost_utils

    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}",
                               num_processes=world_size, process_id=rank)
    assert (jax.process_index(), jax.process_count()) == (rank, world_size)
    x = np.arange(3.0) * (rank + 1)
    total = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x[None])
    np.testing.assert_array_equal(np.asarray(total)[0],
                                  np.arange(3.0) * sum(range(1, world_size + 1)))
    gathered = multihost_utils.process_allgather(np.array([rank, 10 + rank]))
    np.testing.assert_array_equal(np.asarray(gathered),
                                  [[r, 10 + r] for r in range(world_size)])
    print(f"JAX OK {rank}", flush=True)


def raises(rank, world_size, port):
    if rank == 1:
        raise ValueError("process 1 fails on purpose")


if __name__ == "__main__":
    n, port, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    fn = {"env": env_worker, "tutorial": tutorial, "raises": raises, "jax": jax_face}[mode]
    try:
        mp.spawn(fn, args=(n, port), nprocs=n, join=True)
    except mp.ProcessRaisedException as e:
        print("RAISED", e.error_index, repr(e.msg[-200:]), flush=True)
        sys.exit(3)
