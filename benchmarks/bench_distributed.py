"""Multi-process costs, side by side in one run (start with 2 processes):

    python -m funcgrad.distributed.run --nproc 2 --no-prefix benchmarks/bench_distributed.py

1. all_reduce bandwidth: ``funcgrad.torch.distributed.all_reduce`` on a float32 Tensor
   against raw mpi4py ``Allreduce`` on a NumPy buffer, 1 KB .. 64 MB (ratio: time of
   funcgrad / time of mpi4py; goal <= 1.11, i.e. >= 0.9x the bandwidth).
2. DDP overhead: one training step of an MLP (compute-bound: 4 x Linear(1024, 1024), batch
   256 per process) under DistributedDataParallel at N processes, against the same step
   in a plain module in the same process (ratio; goal <= 1.3).

Rank 0 prints the table (with mpi4py's in-place Allreduce, which funcgrad uses, for
reference). Timings are the fastest of many short interleaved runs: a collective needs all
its processes on a core at once, so on a shared machine the scheduler stretches most runs
and only the fastest show the cost of the collective itself.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from plotting import add_output_options, write_outputs  # noqa: E402 - benchmarks/plotting.py

import funcgrad.torch.distributed as dist  # noqa: E402
from funcgrad import torch  # noqa: E402
from funcgrad.torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def _best_time(fn, repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn``, the processes starting each together."""
    dist.barrier()
    fn()
    times = []
    for _ in range(repeat):
        dist.barrier()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.min(times))


def _batch_time(fn, calls: int) -> float:
    """Seconds per call over a short batch of back-to-back calls started together (the
    barrier's exit skew and the timer's cost spread over ``calls``)."""
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def bandwidth_rows(rounds: int) -> list[tuple[str, float, float, float]]:
    """Per size: funcgrad's all_reduce, mpi4py's Allreduce(a, out) and mpi4py's in-place
    Allreduce, interleaved round by round; each one's fastest batch. Batches are short
    (about 0.2 ms where the machine is quiet) and the minimum is taken, because a
    collective needs every process on a core at once: on a shared machine most batches
    are stretched by the scheduler and only the fastest show the collective's own cost."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rows = []
    for nbytes in (2 ** 10, 2 ** 14, 2 ** 18, 2 ** 22, 2 ** 26):
        n = nbytes // 4
        t = torch.ones(n)
        a = np.ones(n, np.float32)
        out = np.empty_like(a)
        b = np.ones(n, np.float32)
        calls = max(1, 2 ** 17 // nbytes)
        ours_fn = lambda t=t: dist.all_reduce(t)  # noqa: E731
        raw_fn = lambda a=a, out=out: comm.Allreduce(a, out)  # noqa: E731
        inplace_fn = lambda b=b: comm.Allreduce(MPI.IN_PLACE, b)  # noqa: E731
        for fn in (ours_fn, raw_fn, inplace_fn):
            _batch_time(fn, calls)  # warm-up
        ours, raw, inplace = [], [], []
        for _ in range(rounds if nbytes <= 2 ** 18 else max(5, rounds // 20)):
            ours.append(_batch_time(ours_fn, calls))
            raw.append(_batch_time(raw_fn, calls))
            inplace.append(_batch_time(inplace_fn, calls))
        rows.append((f"{nbytes // 1024} KB", min(ours), min(raw), min(inplace)))
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

    single = _best_time(lambda: step(plain), 10)
    data_parallel = _best_time(lambda: step(ddp), 10)
    return single, data_parallel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300,
                        help="interleaved timing rounds per message size (the fastest "
                             "counts; a twentieth of them from 4 MB up)")
    add_output_options(parser)  # rank 0 writes them
    args = parser.parse_args()
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = bandwidth_rows(args.rounds)
    single, data_parallel = ddp_rows()
    if rank == 0:
        print(f"processes: {world}")
        print(f"{'all_reduce size':>16} {'funcgrad':>12} {'mpi4py':>12} {'ratio':>7} "
              f"{'in place':>12} {'GB/s (ours)':>12}")
        for label, ours, raw, inplace in rows:
            size = int(label.split()[0]) * 1024
            print(f"{label:>16} {ours * 1e6:10.2f}us {raw * 1e6:10.2f}us {ours / raw:7.2f} "
                  f"{inplace * 1e6:10.2f}us {size / ours / 1e9:12.2f}")
        print(f"DDP step (4x Linear(1024,1024), batch 256/process): single process "
              f"{single * 1e3:.1f} ms, DDP at {world} processes {data_parallel * 1e3:.1f} ms, "
              f"ratio {data_parallel / single:.2f}")
        ratios = [(f"all_reduce {label}", ours / raw) for label, ours, raw, _ in rows]
        ratios.append((f"DDP step at {world} processes", data_parallel / single))
        write_outputs(args, {"benchmark": "bench_distributed", "processes": world,
                             "machine": f"machine: {os.cpu_count()} CPU cores",
                             "all_reduce": [{"size": label, "funcgrad_s": ours, "mpi4py_s": raw,
                                             "mpi4py_in_place_s": inplace,
                                             "ratio": ours / raw}
                                            for label, ours, raw, inplace in rows],
                             "ddp": {"single_s": single, "ddp_s": data_parallel,
                                     "ratio": data_parallel / single}}, ratios,
                      title=f"funcgrad.torch.distributed at {world} processes",
                      xlabel="funcgrad / mpi4py time; DDP step / single-process step")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
