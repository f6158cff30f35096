"""NAdam and RAdam, with PyTorch's updates (``torch.optim.NAdam`` / ``torch.optim.RAdam``).

Both keep Adam's moments (``exp_avg = lerp(exp_avg, g, 1 - beta1)``, ``exp_avg_sq =
beta2 * exp_avg_sq + (1 - beta2) * g * g``) and apply weight decay as Adam (L2) or,
with ``decoupled_weight_decay``, as AdamW. NAdam adds Nesterov momentum with the
``momentum_decay`` schedule ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``;
RAdam rectifies the adaptive step while the variance estimate is unreliable
(``rho_t <= 5``: plain momentum SGD).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.RAdam([w], lr=0.1)
>>> (w * w).sum().backward(); _ = opt.step()
>>> w                                  # step 1 is un-rectified: p -= lr * g
tensor([ 0.8000, -1.6000], requires_grad=True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _advance_step,
    _bump,
    _by_real_parts,
    _check_differentiable,
    _grad_data,
    _lerp_arr,
    _mul_addcmul_arr,
    _new_step,
    _params_with_grad,
    _scalar,
    _scalar_state,
    _scale_,
    _state_tensor,
    _sub_,
    _writable,
    _xp,
)

__all__ = ["NAdam", "RAdam"]


def _check_adam_args(lr: Any, betas: tuple[float, float], eps: float,
                     weight_decay: float) -> None:
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


class _AdamFamily(Optimizer):
    """The moment updates NAdam and RAdam share with Adam."""

    def _moments(self, group: dict[str, Any], p: Any, lr: float) -> tuple[Any, float]:
        """Weight decay and step count of ``p``: (g, step)."""
        g = _grad_data(p)
        if group["maximize"]:
            g = -g
        xp = _xp(p._data)
        state = self.state[p]
        if len(state) == 0:
            self._init_state(state, p)
            state["exp_avg"] = _state_tensor(xp.zeros_like(p._data))
            state["exp_avg_sq"] = _state_tensor(xp.zeros_like(p._data))
        step = _advance_step(state)
        wd = float(group["weight_decay"])
        if wd != 0:
            if group["decoupled_weight_decay"]:
                _scale_(p, 1 - lr * wd)
            else:
                g = g + wd * p._data
        return g, step

    def _apply(self, p: Any, g: Any, rule: Callable[..., Any], *args: Any) -> None:
        """``rule(g, m, v, *args)`` on ``p``'s moments (updated in place: see
        ``_adam_moments``) and the step or steps it returns subtracted from ``p``; a
        complex parameter through its real view, as in PyTorch."""
        state = self.state[p]
        m_t, v_t = state["exp_avg"], state["exp_avg_sq"]
        updates = _by_real_parts(rule, (g, _writable(m_t), _writable(v_t)), *args)
        _bump(m_t)
        _bump(v_t)
        for update in updates if isinstance(updates, tuple) else (updates,):
            _sub_(p, update)

    def _init_state(self, state: dict[str, Any], p: Any) -> None:
        state["step"] = _new_step()


def _adam_moments(g: Any, m: Any, v: Any, beta1: float, beta2: float) -> None:
    """Adam's moments of real ``g``, in place: ``m`` (exp_avg), ``v`` (exp_avg_sq)."""
    _lerp_arr(m, g, 1 - beta1)
    _mul_addcmul_arr(v, beta2, g, g, 1 - beta2)


class NAdam(_AdamFamily):
    """Adam with Nesterov momentum (Dozat), as ``torch.optim.NAdam``.

    State per parameter: ``"step"``, ``"mu_product"``, ``"exp_avg"``, ``"exp_avg_sq"``.
    """

    def __init__(self, params: Any, lr: Any = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, state: dict[str, Any], p: Any) -> None:
        state["step"] = _new_step()
        state["mu_product"] = _scalar_state(1.0)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        beta1, beta2 = (float(b) for b in group["betas"])
        decay = float(group["momentum_decay"])
        for p in _params_with_grad(group):
            g, step = self._moments(group, p, lr)
            xp = _xp(p._data)
            state = self.state[p]
            mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
            mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
            mp = _writable(state["mu_product"])
            mp *= mu
            _bump(state["mu_product"])
            mu_product = float(mp)
            self._apply(p, g, _nadam_update, xp, beta1, beta2, 1 - beta2 ** step,
                        float(group["eps"]), lr * (1.0 - mu) / (1.0 - mu_product),
                        lr * mu_next / (1.0 - mu_product * mu_next))


def _nadam_update(g: Any, m: Any, v: Any, xp: Any, beta1: float, beta2: float,
                  bias_correction2: float, eps: float, grad_scale: float, avg_scale: float
                  ) -> tuple[Any, Any]:
    """NAdam's moments of real ``g`` updated in place, and its two steps to subtract."""
    _adam_moments(g, m, v, beta1, beta2)
    denom = xp.sqrt(v / bias_correction2)
    denom += eps
    return grad_scale * g / denom, avg_scale * m / denom


class RAdam(_AdamFamily):
    """Rectified Adam (Liu et al.), as ``torch.optim.RAdam``.

    State per parameter: ``"step"``, ``"exp_avg"``, ``"exp_avg_sq"``.
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_args(lr, betas, eps, weight_decay)
        _check_differentiable(differentiable)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        beta1, beta2 = (float(b) for b in group["betas"])
        for p in _params_with_grad(group):
            g, step = self._moments(group, p, lr)
            xp = _xp(p._data)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
            rect = None
            if rho_t > 5.0:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                 / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            self._apply(p, g, _radam_update, xp, beta1, beta2, bias_correction1,
                        bias_correction2, lr, float(group["eps"]), rect)


def _radam_update(g: Any, m: Any, v: Any, xp: Any, beta1: float, beta2: float,
                  bias_correction1: float, bias_correction2: float, lr: float, eps: float,
                  rect: float | None) -> Any:
    """RAdam's moments of real ``g`` updated in place, and the step to subtract (``rect``:
    the rectification term, None while the variance estimate is unreliable)."""
    _adam_moments(g, m, v, beta1, beta2)
    corrected = m / bias_correction1
    if rect is None:
        return corrected * lr
    adaptive = xp.sqrt(v)
    adaptive += eps
    adaptive = bias_correction2 ** 0.5 / adaptive
    return corrected * lr * adaptive * rect
