"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay.

The update is PyTorch's (``torch.optim.SGD``), for each parameter ``p`` with a
gradient ``g`` (``-g`` when ``maximize``)::

    g = g + weight_decay * p                          # if weight_decay != 0
    buf = g                                           # first step (if momentum != 0)
    buf = momentum * buf + (1 - dampening) * g        # later steps
    g = g + momentum * buf if nesterov else buf
    p = p - lr * g

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.SGD([w], lr=0.1, momentum=0.9)
>>> for _ in range(2):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     _ = opt.step()
>>> w
tensor([ 0.4600, -0.9200], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _check_fused,
    _grad_data,
    _params_with_grad,
    _scalar,
    _state_tensor,
    _sub_,
    _writable,
    required,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    State per parameter: ``"momentum_buffer"`` (only when ``momentum != 0``).
    """

    def __init__(self, params: Any, lr: Any = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr is not required and _scalar(lr) < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        momentum = float(group["momentum"])
        dampening = float(group["dampening"])
        weight_decay = float(_scalar(group["weight_decay"]))
        nesterov, maximize = group["nesterov"], group["maximize"]
        if group.get("fused"):
            for p in _params_with_grad(group):
                _check_fused(p)
        for p in _params_with_grad(group):
            if p._grad is not None and getattr(p._grad, "is_sparse", False):
                self._sparse_step(p, lr, momentum, dampening, weight_decay, nesterov, maximize)
                continue
            g = _grad_data(p)
            if maximize:
                g = -g
            if weight_decay != 0:
                g = g + weight_decay * p._data
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = _state_tensor(g.copy())
                else:
                    b = _writable(buf)
                    b *= momentum
                    b += (1 - dampening) * g
                    _bump(buf)
                g = g + momentum * buf._data if nesterov else buf._data
            _sub_(p, lr * g)

    _sparse_refusal = None

    def _sparse_step(self, p: Tensor, lr: float, momentum: float, dampening: float,
                     weight_decay: float, nesterov: bool, maximize: bool) -> None:
        # PyTorch's single-tensor step with a sparse gradient: the momentum buffer is
        # sparse too (merged, never coalesced), and weight decay meets add(sparse, dense).
        from funcgrad.torch._sparse import dense_add_  # noqa: PLC0415

        g: Any = -p._grad if maximize else p._grad  # type: ignore[operator]
        if weight_decay != 0:
            g = g.add(p, alpha=weight_decay)
        if momentum != 0:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = g.clone().detach()
            else:
                buf.mul_(momentum).add_(g, alpha=1 - dampening)
            g = g.add(buf, alpha=momentum) if nesterov else buf
        dense_add_(p, g, -lr)
