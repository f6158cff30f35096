"""``torch.distributed.nn``: collectives that autograd differentiates (``functional``).

>>> import funcgrad.torch.distributed.nn as dist_nn
>>> callable(dist_nn.functional.all_gather)
True
"""

from funcgrad.torch.distributed.nn import functional

__all__ = ["functional"]
