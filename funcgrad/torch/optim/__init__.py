"""Optimizers for the Tensor facade, with PyTorch's names, defaults and update formulas.

``SGD`` (momentum, Nesterov, weight decay), ``Adam`` and ``AdamW`` (bias
correction, AMSGrad), on the ``Optimizer`` base class (parameter groups,
per-parameter state, ``state_dict`` / ``load_state_dict`` in PyTorch's format).
Updates are made in place on the parameter Tensors, under ``no_grad``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([3.0], requires_grad=True)
>>> opt = optim.SGD([w], lr=0.25)
>>> for _ in range(3):
...     opt.zero_grad()
...     loss = ((w - 1.0) ** 2).sum()
...     loss.backward()
...     _ = opt.step()
>>> w                                  # (w - 1) halves at each step: 2 -> 1 -> 0.5 -> 0.25
tensor([1.2500], requires_grad=True)
"""

from funcgrad.torch.optim.adam import Adam, AdamW
from funcgrad.torch.optim.optimizer import Optimizer, required
from funcgrad.torch.optim.sgd import SGD

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "required"]
