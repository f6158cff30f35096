"""``torch.utils``: ``data`` (datasets, samplers, ``DataLoader``) and ``checkpoint``.

>>> import funcgrad.torch as torch
>>> len(torch.utils.data.TensorDataset(torch.zeros(3, 2)))
3
"""

from funcgrad.torch.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
