"""Run by funcgrad.torch.distributed.run (torchrun): init_process_group() from the
environment, then the DDP-and-collectives check of torch_ddp.py."""

import os
import runpy
import sys

import funcgrad.torch.distributed as dist

assert dist.is_torchelastic_launched()
assert os.environ["LOCAL_RANK"] == os.environ["RANK"]
if os.environ["RANK"] == "1" and "--fail" in sys.argv:
    sys.exit(7)
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_ddp.py"),
               run_name="__main__")
