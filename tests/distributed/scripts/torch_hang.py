"""Run under mpiexec: init_process_group(timeout=2 s); rank 1 never joins the all_reduce
rank 0 waits in, so rank 0's watchdog names it and aborts the run."""

import time
from datetime import timedelta

import funcgrad.torch.distributed as dist
from funcgrad import torch

dist.init_process_group("gloo", timeout=timedelta(seconds=2))
if dist.get_rank() == 1:
    time.sleep(120)  # alive, but not taking part
else:
    dist.all_reduce(torch.ones(3))
print("unreachable")
