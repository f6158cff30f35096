"""SparseAdam (``torch.optim.SparseAdam``): Adam for sparse gradients.

funcgrad has no sparse tensors, so every gradient is dense (``nn.Embedding(sparse=True)``
included, see ``docs/sharp_bits.md``), and ``step`` refuses it with PyTorch's error for a
dense gradient. The constructor checks its arguments as PyTorch's does.

>>> import funcgrad.torch as torch
>>> w = torch.nn.Parameter(torch.ones(2))
>>> opt = torch.optim.SparseAdam([w], lr=0.1)
>>> opt.defaults
{'lr': 0.1, 'betas': (0.9, 0.999), 'eps': 1e-08, 'maximize': False}
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for sparse gradients; with funcgrad's (always dense) gradients ``step`` raises
    PyTorch's error for a dense gradient.

    >>> import funcgrad.torch as torch
    >>> w = torch.nn.Parameter(torch.ones(2)); w.grad = torch.ones(2)
    >>> torch.optim.SparseAdam([w]).step()
    Traceback (most recent call last):
    ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def _update_group(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            if p.grad is not None:
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
