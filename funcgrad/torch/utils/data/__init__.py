"""``torch.utils.data``: datasets, samplers, collation and ``DataLoader``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(5.0), torch.arange(5))
>>> [x.tolist() for x, _ in DataLoader(ds, batch_size=2)]
[[0.0, 1.0], [2.0, 3.0], [4.0]]
"""

from funcgrad.torch.utils.data._collate import default_collate, default_convert
from funcgrad.torch.utils.data.dataloader import DataLoader, get_worker_info
from funcgrad.torch.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from funcgrad.torch.utils.data.distributed import DistributedSampler
from funcgrad.torch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
    "DistributedSampler", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "StackDataset", "Subset",
    "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "get_worker_info", "random_split",
]
