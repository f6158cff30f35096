"""``torch.utils``: ``data`` (datasets, samplers, ``DataLoader``).

>>> import funcgrad.torch as torch
>>> len(torch.utils.data.TensorDataset(torch.zeros(3, 2)))
3
"""

from funcgrad.torch.utils import data

__all__ = ["data"]
