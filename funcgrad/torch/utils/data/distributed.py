"""``DistributedSampler``: each rank visits its own share of a dataset's indices.

The shuffled order is PyTorch's exactly: a ``torch.Generator`` seeded with
``seed + epoch`` draws ``randperm`` (``funcgrad.torch._random.mt_randperm``), the list
is padded (or cut, with ``drop_last``) to a multiple of the world size, and rank ``r``
takes every ``num_replicas``-th index from ``r``.

>>> from funcgrad.torch.utils.data.distributed import DistributedSampler
>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
[1, 3, 0]
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

import numpy as np

from funcgrad.torch._random import mt_randperm
from funcgrad.torch.utils.data.sampler import Sampler


def torch_randperm(n: int, seed: int) -> list[int]:
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()``.

    >>> torch_randperm(5, 0)
    [4, 0, 1, 3, 2]
    """
    return mt_randperm(n, np.random.RandomState(seed & 0xFFFFFFFF))


class DistributedSampler(Sampler[int]):
    """Restrict a DataLoader to this rank's share of ``dataset`` (PyTorch's partition)."""

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from funcgrad.torch import distributed as dist  # noqa: PLC0415

            if not dist.is_initialized():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle \
            else list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Reshuffle differently in each epoch (all ranks must pass the same ``epoch``)."""
        self.epoch = epoch


__all__ = ["DistributedSampler", "torch_randperm"]

