"""Adadelta, with PyTorch's update (``torch.optim.Adadelta``).

For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``, plus
``weight_decay * p``)::

    v = rho * v + (1 - rho) * g * g                        # square_avg
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta                # acc_delta
    p = p - lr * delta

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0], requires_grad=True)
>>> opt = optim.Adadelta([w], eps=0.0)
>>> (w * w).sum().backward(); _ = opt.step()
>>> w                                  # acc_delta starts at zero: no move without eps
tensor([1.], requires_grad=True)
"""

from __future__ import annotations

from typing import Any

from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _advance_step,
    _bump,
    _by_real_parts,
    _check_differentiable,
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

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler), as ``torch.optim.Adadelta``.

    State per parameter: ``"step"``, ``"square_avg"``, ``"acc_delta"``.
    """

    def __init__(self, params: Any, lr: Any = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        rho, eps = float(group["rho"]), float(group["eps"])
        for p in _params_with_grad(group):
            g = _signed_grad(p, group["maximize"], float(group["weight_decay"]))
            xp = _xp(p._data)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_step()
                state["square_avg"] = _state_tensor(xp.zeros_like(p._data))
                state["acc_delta"] = _state_tensor(xp.zeros_like(p._data))
            _advance_step(state)
            # A complex parameter is updated as PyTorch does, through its real view.
            update = _by_real_parts(
                _update, (g, _writable(state["square_avg"]), _writable(state["acc_delta"])),
                xp, rho, eps, lr)
            _bump(state["square_avg"])
            _bump(state["acc_delta"])
            _sub_(p, update)


def _update(g: Any, v: Any, u: Any, xp: Any, rho: float, eps: float, lr: float) -> Any:
    """Adadelta's square_avg ``v`` and acc_delta ``u`` of real ``g`` updated in place, and
    the step to subtract."""
    _mul_addcmul_arr(v, rho, g, g, 1 - rho)
    std = xp.sqrt(v + eps)
    delta = xp.sqrt(u + eps)
    delta /= std
    delta *= g
    _mul_addcmul_arr(u, rho, delta, delta, 1 - rho)
    return lr * delta
