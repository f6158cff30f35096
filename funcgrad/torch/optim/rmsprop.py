"""RMSprop, with PyTorch's update (``torch.optim.RMSprop``).

For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``, plus
``weight_decay * p``)::

    v = alpha * v + (1 - alpha) * g * g                    # square_avg
    gbar = lerp(gbar, g, 1 - alpha)                        # grad_avg (centered)
    avg = sqrt(v - gbar * gbar if centered else v) + eps
    buf = momentum * buf + g / avg; p -= lr * buf          # momentum > 0
    p -= lr * g / avg                                      # otherwise

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.RMSprop([w], lr=0.01)
>>> (w * w).sum().backward(); _ = opt.step()
>>> w                                  # first step: lr / sqrt(1 - alpha) = 0.1 per entry
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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton), as ``torch.optim.RMSprop``.

    State per parameter: ``"step"``, ``"square_avg"``, and ``"momentum_buffer"``
    (momentum > 0) and ``"grad_avg"`` (centered).
    """

    def __init__(self, params: Any, lr: Any = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        alpha, eps = float(group["alpha"]), float(group["eps"])
        momentum = float(group["momentum"])
        for p in _params_with_grad(group):
            g = _signed_grad(p, group["maximize"], float(group["weight_decay"]))
            xp = _xp(p._data)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_step()
                state["square_avg"] = _state_tensor(xp.zeros_like(p._data))
                if momentum > 0:
                    state["momentum_buffer"] = _state_tensor(xp.zeros_like(p._data))
                if group["centered"]:
                    state["grad_avg"] = _state_tensor(xp.zeros_like(p._data))
            _advance_step(state)
            bufs = [state["square_avg"], state["grad_avg"] if group["centered"] else None,
                    state["momentum_buffer"] if momentum > 0 else None]
            arrays = [None if b is None else _writable(b) for b in bufs]
            # A complex parameter is updated as PyTorch does, through its real view.
            update = _by_real_parts(_update, (g, *arrays), xp, alpha, eps, momentum, lr)
            for b in bufs:
                if b is not None:
                    _bump(b)
            _sub_(p, update)


def _update(g: Any, v: Any, gbar: Any, buf: Any, xp: Any, alpha: float, eps: float,
            momentum: float, lr: float) -> Any:
    """RMSprop's state of real ``g`` updated in place (``v``: square_avg; ``gbar``:
    grad_avg, or None; ``buf``: momentum_buffer, or None), and the step to subtract."""
    _mul_addcmul_arr(v, alpha, g, g, 1 - alpha)
    if gbar is not None:
        _lerp_arr(gbar, g, 1 - alpha)
        avg = xp.sqrt(v - gbar * gbar)
    else:
        avg = xp.sqrt(v)
    avg += eps
    if buf is not None:
        buf *= momentum
        buf += g / avg
        return lr * buf
    return lr * g / avg
