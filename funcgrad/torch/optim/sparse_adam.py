"""SparseAdam (``torch.optim.SparseAdam``): Adam for sparse gradients.

The gradients are sparse COO tensors (``nn.Embedding(sparse=True)``'s): ``step`` coalesces
each one and updates the moments and the parameter at its rows only, with PyTorch's
arithmetic (float32 results bit-equal to PyTorch 2.13's). A dense gradient raises
PyTorch's error. The constructor checks its arguments as PyTorch's does.

>>> import funcgrad.torch as torch
>>> w = torch.nn.Parameter(torch.ones(2))
>>> opt = torch.optim.SparseAdam([w], lr=0.1)
>>> opt.defaults
{'lr': 0.1, 'betas': (0.9, 0.999), 'eps': 1e-08, 'maximize': False}
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import Optimizer, _bump, _writable

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for sparse gradients, updated at the gradient's rows only; a dense gradient
    raises PyTorch's error.

    >>> import funcgrad.torch as torch
    >>> emb = torch.nn.Embedding.from_pretrained(torch.zeros(3, 2), freeze=False, sparse=True)
    >>> opt = torch.optim.SparseAdam(emb.parameters(), lr=0.5)
    >>> emb(torch.tensor([1, 1])).sum().backward(); opt.step()
    >>> emb.weight
    Parameter containing:
    tensor([[ 0.0000,  0.0000],
            [-0.5000, -0.5000],
            [ 0.0000,  0.0000]], requires_grad=True)
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

    _sparse_refusal = None

    def _update_group(self, group: dict[str, Any]) -> None:
        from funcgrad.torch._sparse import host_parts  # noqa: PLC0415

        beta1, beta2 = group["betas"]
        lr, eps = float(group["lr"]), group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            if not p.grad.is_sparse:
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = torch_zeros_like(p)
                state["exp_avg_sq"] = torch_zeros_like(p)
            state["step"] += 1
            grad = p.grad if not group["maximize"] else -p.grad
            idx, g = host_parts(grad.coalesce())
            if g.size == 0:
                continue
            _update(p, state["exp_avg"], state["exp_avg_sq"], tuple(idx), g,
                    float(beta1), float(beta2), float(eps), lr, state["step"])


def torch_zeros_like(p: Tensor) -> Tensor:
    """A zero moment for ``p`` (PyTorch's ``zeros_like(p, memory_format=preserve)``)."""
    return Tensor(p._host() * 0)


def _update(p: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, at: tuple[Any, ...], g: Any,
            beta1: float, beta2: float, eps: float, lr: float, step: int) -> None:
    # PyTorch's _functional.sparse_adam step by step, in the parameter's dtype (a Python
    # scalar meets a float32 tensor as a float32).
    dt = g.dtype.type
    m, v, w = (_writable(t) for t in (exp_avg, exp_avg_sq, p))
    old_m = m[at]
    upd_m = (g - old_m) * dt(1 - beta1)
    m[at] += upd_m
    old_v = v[at]
    upd_v = (g ** 2 - old_v) * dt(1 - beta2)
    v[at] += upd_v
    numer = upd_m + old_m
    denom = np.sqrt(upd_v + old_v) + dt(eps)
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    w[at] += dt(-step_size) * (numer / denom)
    for t in (exp_avg, exp_avg_sq, p):
        _bump(t)
