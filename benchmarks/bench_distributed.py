"""Multi-process costs, side by side in one run (start with 2 processes):

    python -m funcgrad.distributed.run --nproc 2 --no-prefix benchmarks/bench_distributed.py

1. all_reduce bandwidth: ``funcgrad.torch.distributed.all_reduce`` on a float32 Tensor
   against raw mpi4py ``Allreduce`` on a NumPy buffer, 1 KB .. 64 MB (ratio: time of
   funcgrad / time of mpi4py; goal <= 1.11, i.e. >= 0.9x the bandwidth).
2. DDP overhead: one training step of an MLP (compute-bound: 4 x Linear(1024, 1024), batch
   256 per process) under DistributedDataParallel at N processes, against the same step
   in a plain module in the same process (ratio; goal <= 1.3).

Rank 0 prints the table. Timings are medians of repeated runs (benchmarks/timing.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from plotting import add_output_options, write_outputs  # noqa: E402 - benchmarks/plotting.py

import funcgrad.torch as torch  # noqa: E402
import funcgrad.torch.distributed as dist  # noqa: E402
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def _median_time(fn, repeat: int) -> float:
    dist.barrier()
    fn()
    times = []
    for _ in range(repeat):
        dist.barrier()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def bandwidth_rows() -> list[tuple[str, float, float]]:
    from mpi4py import MPI

    rows = []
    for nbytes in (2 ** 10, 2 ** 14, 2 ** 18, 2 ** 22, 2 ** 26):
        n = nbytes // 4
        t = torch.ones(n)
        a = np.ones(n, np.float32)
        out = np.empty_like(a)
        repeat = 30 if nbytes <= 2 ** 22 else 8
        ours = _median_time(lambda: dist.all_reduce(t), repeat)
        raw = _median_time(lambda: MPI.COMM_WORLD.Allreduce(a, out), repeat)
        rows.append((f"{nbytes // 1024} KB", ours, raw))
    return rows


def ddp_rows() -> tuple[float, float]:
    torch.manual_seed(0)

    def make() -> torch.nn.Module:
        return torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(1024, 1024),
                                                                     torch.nn.ReLU())])

    x, y = torch.randn(256, 1024), torch.randn(256, 1024)
    plain = make()
    ddp = DDP(make())

    def step(model: torch.nn.Module) -> None:
        model.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()

    single = _median_time(lambda: step(plain), 10)
    data_parallel = _median_time(lambda: step(ddp), 10)
    return single, data_parallel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_output_options(parser)  # rank 0 writes them
    args = parser.parse_args()
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = bandwidth_rows()
    single, data_parallel = ddp_rows()
    if rank == 0:
        print(f"processes: {world}")
        print(f"{'all_reduce size':>16} {'funcgrad':>12} {'mpi4py':>12} {'ratio':>7} "
              f"{'GB/s (ours)':>12}")
        for label, ours, raw in rows:
            size = int(label.split()[0]) * 1024
            print(f"{label:>16} {ours * 1e6:10.1f}us {raw * 1e6:10.1f}us {ours / raw:7.2f} "
                  f"{size / ours / 1e9:12.2f}")
        print(f"DDP step (4x Linear(1024,1024), batch 256/process): single process "
              f"{single * 1e3:.1f} ms, DDP at {world} processes {data_parallel * 1e3:.1f} ms, "
              f"ratio {data_parallel / single:.2f}")
        ratios = [(f"all_reduce {label}", ours / raw) for label, ours, raw in rows]
        ratios.append((f"DDP step at {world} processes", data_parallel / single))
        write_outputs(args, {"benchmark": "bench_distributed", "processes": world,
                             "machine": f"machine: {os.cpu_count()} CPU cores",
                             "all_reduce": [{"size": label, "funcgrad_s": ours, "mpi4py_s": raw,
                                             "ratio": ours / raw} for label, ours, raw in rows],
                             "ddp": {"single_s": single, "ddp_s": data_parallel,
                                     "ratio": data_parallel / single}}, ratios,
                      title=f"funcgrad.torch.distributed at {world} processes",
                      xlabel="funcgrad / mpi4py time; DDP step / single-process step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
