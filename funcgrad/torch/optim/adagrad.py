"""Adagrad, with PyTorch's update (``torch.optim.Adagrad``).

For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``, plus
``weight_decay * p``), at step ``t``::

    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                                          # sum
    p = p - clr * g / (sqrt(s) + eps)

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.Adagrad([w], lr=0.5)
>>> (w * w).sum().backward(); _ = opt.step()
>>> w
tensor([ 0.5000, -1.5000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _advance_step,
    _bump,
    _by_real_parts,
    _check_differentiable,
    _check_fused,
    _mul_addcmul_arr,
    _new_step,
    _params_with_grad,
    _scalar,
    _signed_grad,
    _state_tensor,
    _sub_,
    _writable,
    _xp,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), as ``torch.optim.Adagrad``.

    State per parameter (made when the optimizer is built, as in PyTorch): ``"step"``
    and ``"sum"`` (starting at ``initial_accumulator_value``). A sparse gradient updates
    the sum and the parameter at its entries only, as PyTorch's.
    """

    _sparse_refusal = None

    def __init__(self, params: Any, lr: Any = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if group["fused"]:
                    _check_fused(p)
                state = self.state[p]
                state["step"] = _new_step()
                xp = _xp(p._data)
                init = group["initial_accumulator_value"]
                if p.dtype.is_complex:
                    # PyTorch's view_as_real update: both parts of the sum start there.
                    init = complex(init, init)
                state["sum"] = _state_tensor(xp.full_like(p._data, init))

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        for p in _params_with_grad(group):
            if p._grad is not None and getattr(p._grad, "is_sparse", False):
                state = self.state[p]
                step = _advance_step(state)
                _sparse_update(p, group, state["sum"], lr / (1 + (step - 1) * group["lr_decay"]))
                continue
            g = _signed_grad(p, group["maximize"], float(group["weight_decay"]))
            state = self.state[p]
            step = _advance_step(state)
            clr = lr / (1 + (step - 1) * group["lr_decay"])
            # A complex parameter is updated as PyTorch does, through its real view.
            update = _by_real_parts(_update, (g, _writable(state["sum"])), _xp(g),
                                    float(group["eps"]), clr)
            _bump(state["sum"])
            _sub_(p, update)


def _sparse_update(p: Any, group: dict[str, Any], state_sum: Any, clr: float) -> None:
    # PyTorch's step for a sparse gradient: coalesced, then the sum and the parameter
    # updated at its entries only.
    from funcgrad.torch._sparse import dense_add_, host_parts, masked_values  # noqa: PLC0415

    grad = -p._grad if group["maximize"] else p._grad
    if group["weight_decay"] != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    grad = grad.coalesce()
    idx, vals = host_parts(grad)
    dense_add_(state_sum, grad.pow(2) if vals.size else grad)
    std = np.sqrt(masked_values(state_sum, grad)) + vals.dtype.type(group["eps"])
    step = type(grad)._make(idx, Tensor(vals / std), tuple(grad.shape), True)
    dense_add_(p, step, -clr)


def _update(g: Any, s: Any, xp: Any, eps: float, clr: float) -> Any:
    """Adagrad's sum of real ``g`` updated in place, and the step to subtract."""
    _mul_addcmul_arr(s, 1.0, g, g, 1.0)
    std = xp.sqrt(s)
    std += eps
    return clr * g / std
