"""``jax.experimental.multihost_utils``: host-side helpers of a multi-process run.

>>> import numpy as np
>>> from funcgrad.experimental import multihost_utils
>>> multihost_utils.process_allgather(np.ones(2)).shape
(1, 2)
"""

from funcgrad.distributed import broadcast_one_to_all, process_allgather, sync_global_devices

__all__ = ["broadcast_one_to_all", "process_allgather", "sync_global_devices"]
