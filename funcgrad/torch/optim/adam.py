"""Adam and AdamW, with PyTorch's update (``torch.optim.Adam`` / ``torch.optim.AdamW``).

For each parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``), at step
``t`` (counted from 1)::

    p = p * (1 - lr * weight_decay)                   # AdamW (decoupled weight decay)
    g = g + weight_decay * p                          # Adam (L2 penalty in the gradient)
    m = beta1 * m + (1 - beta1) * g                   # exp_avg
    v = beta2 * v + (1 - beta2) * g * g               # exp_avg_sq
    v_max = max(v_max, v)                             # amsgrad: normalise by v_max, not v
    denom = sqrt(v) / sqrt(1 - beta2 ** t) + eps
    p = p - lr / (1 - beta1 ** t) * m / denom

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = optim.Adam([w], lr=0.1)
>>> (w * w).sum().backward()
>>> _ = opt.step()
>>> w                                  # the first Adam step moves each entry by ~lr
tensor([ 0.9000, -1.9000], requires_grad=True)
>>> sorted(opt.state[w])
['exp_avg', 'exp_avg_sq', 'step']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import Tracer
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _bump,
    _by_real_parts,
    _check_differentiable,
    _check_fused,
    _grad_data,
    _lerp_arr,
    _params_with_grad,
    _scalar,
    _scale_,
    _state_tensor,
    _sub_,
    _writable,
    _xp,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba), as ``torch.optim.Adam``; ``decoupled_weight_decay=True`` is AdamW.

    State per parameter: ``"step"`` (a float32 scalar Tensor, kept on the CPU as in
    PyTorch), ``"exp_avg"``, ``"exp_avg_sq"`` and, with ``amsgrad``,
    ``"max_exp_avg_sq"``.
    """

    _sparse_refusal = ("Adam does not support sparse gradients, please consider SparseAdam "
                       "instead")

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 maximize: bool = False, decoupled_weight_decay: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= _scalar(betas[0]) < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= _scalar(betas[1]) < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": (_scalar(betas[0]), _scalar(betas[1])), "eps": eps,
                    "weight_decay": weight_decay, "amsgrad": amsgrad, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused,
                    # last, as in PyTorch (state_dict() and printing follow the key order)
                    "decoupled_weight_decay": decoupled_weight_decay}
        _check_differentiable(differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                st = self.state.get(p)
                if st and "step" in st and not isinstance(st["step"], Tensor):
                    st["step"] = _state_tensor(np.asarray(float(st["step"]), np.float32))

    def _update_group(self, group: dict[str, Any]) -> None:
        lr = float(_scalar(group["lr"]))
        beta1, beta2 = (float(_scalar(b)) for b in group["betas"])
        eps = float(group["eps"])
        weight_decay = float(group["weight_decay"])
        amsgrad, maximize = group["amsgrad"], group["maximize"]
        decoupled = group.get("decoupled_weight_decay", False)
        if group.get("fused"):
            for p in _params_with_grad(group):
                if not self.state.get(p):
                    _check_fused(p)
        for p in _params_with_grad(group):
            pd = p._data
            xp = _xp(pd)
            g = _grad_data(p)
            if maximize:
                g = -g
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _state_tensor(np.zeros((), np.float32))
                state["exp_avg"] = _state_tensor(xp.zeros_like(pd))
                state["exp_avg_sq"] = _state_tensor(xp.zeros_like(pd))
                if amsgrad:
                    state["max_exp_avg_sq"] = _state_tensor(xp.zeros_like(pd))
            step_t = state["step"]
            s = _writable(step_t)
            s += 1
            _bump(step_t)
            if weight_decay != 0:
                if decoupled:
                    _scale_(p, 1 - lr * weight_decay)
                else:
                    g = g + weight_decay * p._data
            m_t, v_t = state["exp_avg"], state["exp_avg_sq"]
            m, v = _writable(m_t), _writable(v_t)
            if isinstance(step_t._data, Tracer):
                # (in the real dtype of a complex parameter: they scale its real view)
                step_size, bias_correction2_sqrt = _staged_corrections(
                    step_t._data, lr, beta1, beta2,
                    np.finfo(pd.dtype).dtype if pd.dtype.kind == "c" else pd.dtype)
            else:
                step = float(step_t.item())
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
            vmax = _writable(state["max_exp_avg_sq"]) if amsgrad else None
            # A complex parameter is updated as PyTorch does, through its real view.
            update = _by_real_parts(_update, (g, m, v, vmax), xp, beta1, beta2, eps,
                                    step_size, bias_correction2_sqrt)
            _bump(m_t)
            _bump(v_t)
            if amsgrad:
                _bump(state["max_exp_avg_sq"])
            _sub_(p, update)


def _update(g: Any, m: Any, v: Any, vmax: Any, xp: Any, beta1: float, beta2: float,
            eps: float, step_size: Any, bias_correction2_sqrt: Any) -> Any:
    """Adam's moments of real ``g`` updated in place (``m``, ``v``, ``vmax``: the state's
    arrays), and the step to subtract from the parameter."""
    # exp_avg.lerp_(g, 1 - beta1), with PyTorch's two-sided lerp formula.
    _lerp_arr(m, g, 1 - beta1)
    # exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    v *= beta2
    sq = g * (1 - beta2)
    sq *= g
    v += sq
    if vmax is not None:
        xp.maximum(vmax, v, out=vmax)
        v = vmax
    # denom = sqrt(v) / sqrt(bias_correction2) + eps; p -= step_size * (m / denom)
    denom = xp.sqrt(v, out=sq)
    denom /= bias_correction2_sqrt
    denom += eps
    update = xp.divide(m, denom, out=denom)
    update *= step_size
    return update


def _staged_corrections(step: Any, lr: float, beta1: float, beta2: float, dtype: Any
                        ) -> tuple[Any, Any]:
    """Adam's step size and sqrt(bias correction 2) when ``torch.compile`` stages the step:
    the count is a value of the program, so they are too (float64, as the Python floats
    of the eager step, then in the parameter's dtype, as NumPy uses those floats)."""
    import funcgrad.numpy as fnp  # noqa: PLC0415

    s = fnp.astype(step, np.float64)
    bias_correction1 = 1 - fnp.power(beta1, s)
    bias_correction2 = 1 - fnp.power(beta2, s)
    return (fnp.astype(lr / bias_correction1, dtype),
            fnp.astype(fnp.power(bias_correction2, 0.5), dtype))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as ``torch.optim.AdamW``.

    >>> import funcgrad.torch as torch
    >>> from funcgrad.torch import optim
    >>> w = torch.tensor([1.0], requires_grad=True)
    >>> opt = optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = torch.tensor([0.0])      # no gradient signal: only the decay acts
    >>> _ = opt.step(); w
    tensor([0.9500], requires_grad=True)
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True, foreach=foreach, capturable=capturable,
                         differentiable=differentiable, fused=fused)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
