"""Optimizers for the Tensor facade, with PyTorch's names, defaults and update formulas.

``SGD`` (momentum, Nesterov, weight decay), ``Adam`` and ``AdamW`` (bias
correction, AMSGrad), the other optimizers of ``torch.optim`` (Adafactor, Muon,
RMSprop, ...), ``lr_scheduler`` and ``swa_utils``, on the ``Optimizer`` base class
(parameter groups, per-parameter state, ``state_dict`` / ``load_state_dict`` in PyTorch's format).
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

from funcgrad.torch.optim import lr_scheduler, swa_utils
from funcgrad.torch.optim._stateless import swap_in_optimizer_params_and_state
from funcgrad.torch.optim.adadelta import Adadelta
from funcgrad.torch.optim.adafactor import Adafactor
from funcgrad.torch.optim.adagrad import Adagrad
from funcgrad.torch.optim.adam import Adam, AdamW
from funcgrad.torch.optim.adamax import Adamax
from funcgrad.torch.optim.asgd import ASGD, Rprop
from funcgrad.torch.optim.lbfgs import LBFGS
from funcgrad.torch.optim.muon import Muon
from funcgrad.torch.optim.nadam import NAdam, RAdam
from funcgrad.torch.optim.optimizer import Optimizer, required
from funcgrad.torch.optim.rmsprop import RMSprop
from funcgrad.torch.optim.sgd import SGD
from funcgrad.torch.optim.sparse_adam import SparseAdam

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam",
           "lr_scheduler", "required", "swa_utils", "swap_in_optimizer_params_and_state"]
