"""``torch.utils``: ``data`` (datasets, samplers, ``DataLoader``), ``checkpoint`` and
``hooks``.

>>> import funcgrad.torch as torch
>>> len(torch.utils.data.TensorDataset(torch.zeros(3, 2)))
3
"""

from funcgrad.torch.utils import checkpoint, data, hooks

__all__ = ["checkpoint", "data", "hooks"]
