"""``torch.nn.parallel``: data-parallel training over processes.

>>> from funcgrad.torch.nn.parallel import DistributedDataParallel
>>> DistributedDataParallel.__name__
'DistributedDataParallel'
"""

from funcgrad.torch.nn.parallel.data_parallel import DataParallel, data_parallel
from funcgrad.torch.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
