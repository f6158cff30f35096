"""Adamax, with PyTorch's update (``torch.optim.Adamax``).

For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``, plus
``weight_decay * p``), at step ``t``::

    m = lerp(m, g, 1 - beta1)                              # exp_avg
    u = max(beta2 * u, |g| + eps)                          # exp_inf
    p = p - lr / (1 - beta1 ** t) * m / u

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.Adamax([w], lr=0.1)
>>> (w * w).sum().backward(); _ = opt.step()
>>> w
tensor([ 0.9000, -1.9000], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _advance_step,
    _bump,
    _by_real_parts,
    _check_differentiable,
    _lerp_arr,
    _new_step,
    _params_with_grad,
    _scalar,
    _signed_grad,
    _state_tensor,
    _sub_,
    _writable,
    _xp,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (the infinity-norm Adam), as ``torch.optim.Adamax``.

    State per parameter: ``"step"``, ``"exp_avg"``, ``"exp_inf"``.
    """

    def __init__(self, params: Any, lr: Any = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        beta1, beta2 = (float(b) for b in group["betas"])
        for p in _params_with_grad(group):
            g = _signed_grad(p, group["maximize"], float(group["weight_decay"]))
            xp = _xp(p._data)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_step()
                state["exp_avg"] = _state_tensor(xp.zeros_like(p._data))
                state["exp_inf"] = _state_tensor(xp.zeros_like(p._data))
            step = _advance_step(state)
            clr = lr / (1 - beta1 ** step)
            # A complex parameter is updated as PyTorch does, through its real view.
            update = _by_real_parts(
                _update, (g, _writable(state["exp_avg"]), _writable(state["exp_inf"])), xp,
                beta1, beta2, float(group["eps"]), clr)
            _bump(state["exp_avg"])
            _bump(state["exp_inf"])
            _sub_(p, update)


def _update(g: Any, m: Any, u: Any, xp: Any, beta1: float, beta2: float, eps: float,
            clr: float) -> Any:
    """Adamax's exp_avg ``m`` and exp_inf ``u`` of real ``g`` updated in place, and the
    step to subtract."""
    _lerp_arr(m, g, 1 - beta1)
    u *= beta2
    xp.maximum(u, xp.abs(g) + eps, out=u)
    return clr * m / u
