"""Neural-network building blocks, as ``torch.nn``: ``Module``, ``Parameter``, layers,
activations, losses, ``functional`` and ``init``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> _ = torch.manual_seed(0)
>>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
>>> loss = nn.CrossEntropyLoss()(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 1, 0]))
>>> loss.backward()
>>> [tuple(p.grad.shape) for p in model.parameters()]
[(8, 4), (8,), (3, 8), (3,)]
"""

from funcgrad.torch.nn import functional, init
from funcgrad.torch.nn.module import Module, ModuleList, RemovableHandle, Sequential
from funcgrad.torch.nn.modules import (
    GELU,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    Dropout,
    Flatten,
    Identity,
    L1Loss,
    Linear,
    LogSoftmax,
    MSELoss,
    NLLLoss,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from funcgrad.torch.nn.parameter import Parameter

__all__ = [
    "GELU", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Flatten", "Identity",
    "L1Loss", "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleList", "NLLLoss", "Parameter",
    "ReLU", "RemovableHandle", "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init",
]
