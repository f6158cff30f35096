"""Averaged SGD and Rprop, with PyTorch's updates (``torch.optim.ASGD`` /
``torch.optim.Rprop``).

ASGD, for each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``, plus
``weight_decay * p``), at step ``t``::

    p = p * (1 - lambd * eta) - eta * g
    ax = ax + mu * (p - ax)        (ax = p while mu == 1)
    eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

Rprop adapts a per-entry step size from the sign of ``g * g_prev`` (grow by
``etas[1]`` on agreement, shrink by ``etas[0]`` and skip the entry on a sign change)
and moves ``p`` by ``-sign(g) * step_size``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.Rprop([w], lr=0.1)
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
    _new_step,
    _params_with_grad,
    _scalar,
    _scalar_state,
    _scale_,
    _signed_grad,
    _state_tensor,
    _sub_,
    _writable,
    _xp,
)

__all__ = ["ASGD", "Rprop"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (Polyak & Juditsky), as ``torch.optim.ASGD``.

    State per parameter: ``"step"``, ``"eta"``, ``"mu"`` (scalar Tensors) and ``"ax"``
    (the running average of the parameter).
    """

    def __init__(self, params: Any, lr: Any = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        lambd, alpha, t0 = float(group["lambd"]), float(group["alpha"]), float(group["t0"])
        for p in _params_with_grad(group):
            g = _signed_grad(p, group["maximize"], float(group["weight_decay"]))
            xp = _xp(p._data)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_step()
                state["eta"] = _scalar_state(lr)
                state["mu"] = _scalar_state(1.0)
                state["ax"] = _state_tensor(xp.zeros_like(p._data))
            step = _advance_step(state)
            eta = float(state["eta"]._data)
            _scale_(p, 1 - lambd * eta)
            _sub_(p, eta * g)
            ax = _writable(state["ax"])
            mu = float(state["mu"]._data)
            if mu != 1:
                ax += (p._data - ax) * mu
            else:
                ax[...] = p._data
            _bump(state["ax"])
            for key, value in (("eta", lr / ((1 + lambd * lr * step) ** alpha)),
                               ("mu", 1 / max(1, step - t0))):
                s = _writable(state[key])
                s[...] = value
                _bump(state[key])


class Rprop(Optimizer):
    """Resilient backpropagation, as ``torch.optim.Rprop``.

    State per parameter: ``"step"``, ``"prev"`` (the last gradient used) and
    ``"step_size"`` (per entry, starting at ``lr``).
    """

    def __init__(self, params: Any, lr: Any = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        etaminus, etaplus = (float(e) for e in group["etas"])
        lo, hi = (float(s) for s in group["step_sizes"])
        for p in _params_with_grad(group):
            g = _signed_grad(p, group["maximize"], 0.0)
            xp = _xp(p._data)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _new_step()
                state["prev"] = _state_tensor(xp.zeros_like(p._data))
                lr = float(_scalar(group["lr"]))
                # PyTorch's view_as_real update: both parts of a complex step size start at lr.
                state["step_size"] = _state_tensor(xp.full_like(
                    g, complex(lr, lr) if g.dtype.kind == "c" else lr))
            _advance_step(state)
            prev_t, size_t = state["prev"], state["step_size"]
            # A complex parameter is updated as PyTorch does, through its real view.
            update = _by_real_parts(_rprop_update, (g, _writable(prev_t), _writable(size_t)),
                                    xp, etaminus, etaplus, lo, hi)
            _bump(size_t)
            _sub_(p, update)
            _bump(prev_t)


def _rprop_update(g: Any, prev: Any, size: Any, xp: Any, etaminus: float, etaplus: float,
                  lo: float, hi: float) -> Any:
    """Rprop's step sizes and last gradient of real ``g`` updated in place (``size``,
    ``prev``), and the step to subtract."""
    sign = xp.sign(g * prev)
    factor = xp.where(sign > 0, etaplus, xp.where(sign < 0, etaminus, 1.0)).astype(g.dtype)
    size *= factor
    xp.clip(size, lo, hi, out=size)
    g = xp.where(sign < 0, xp.zeros_like(g), g)
    prev[...] = g
    return xp.sign(g) * size
