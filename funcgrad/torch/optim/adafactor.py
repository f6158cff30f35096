"""Adafactor, with PyTorch's update (``torch.optim.Adafactor``).

For a parameter ``p`` with gradient ``g`` (``-g`` when ``maximize``), at step ``t``
(counted from 1), with ``eps1`` defaulting to the machine epsilon of ``p``'s dtype::

    beta2_t = 1 - t ** beta2_decay
    rho_t = min(lr, 1 / sqrt(t))
    alpha = max(eps2, rms(p)) * rho_t                 # rms before the weight decay
    p = p * (1 - lr * weight_decay)
    if p.dim() > 1:                                   # factored over the last two axes
        row = lerp(row, mean(g * g, -1), 1 - beta2_t)
        col = lerp(col, mean(g * g, -2), 1 - beta2_t)
        v = row * col / max(mean(row, -2), eps1)
    else:
        v = lerp(v, g * g, 1 - beta2_t)
    u = g / sqrt(max(v, eps1 ** 2))
    p = p - alpha / max(1, rms(u) / d) * u

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
>>> opt = optim.Adafactor([w], lr=0.01)
>>> (w * w).sum().backward(); _ = opt.step()
>>> {k: tuple(v.shape) for k, v in opt.state[w].items()}
{'step': (), 'row_var': (2, 1), 'col_var': (1, 2)}
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.core import Tracer
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _bump,
    _grad_data,
    _lerp_,
    _real_params_with_grad,
    _scalar,
    _scalar_state,
    _scale_,
    _state_tensor,
    _sub_,
    _writable,
    _xp,
)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern), as ``torch.optim.Adafactor``: ``lr`` caps the relative
    step size and scales the decoupled weight decay.

    State per parameter: ``"step"`` (a scalar Tensor in PyTorch's scalar dtype, on the
    CPU) and, for a parameter of two or more dimensions, ``"row_var"`` and ``"col_var"``
    (the factored second moment), else ``"variance"``.
    """

    def __init__(self, params: Any, lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                st = self.state.get(p)
                if st and not isinstance(st["step"], Tensor):
                    st["step"] = _scalar_state(float(st["step"]))

    def _update_group(self, group: dict[str, Any]) -> None:
        params = _real_params_with_grad(group, "Adafactor")
        lr = float(_scalar(group["lr"]))
        beta2_decay, d = float(group["beta2_decay"]), float(group["d"])
        weight_decay, maximize = float(group["weight_decay"]), group["maximize"]
        eps1, eps2 = group["eps"]
        for p in params:
            pd = p._data
            xp = _xp(pd)
            g = _grad_data(p)
            if maximize:
                g = -g
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(0.0)
                if g.ndim > 1:
                    # zeros_like (not zeros): under torch.compile the state is then a value
                    # of the staged program, as the gradient is.
                    state["row_var"] = _state_tensor(
                        xp.zeros_like(g, shape=g.shape[:-1] + (1,)))
                    state["col_var"] = _state_tensor(
                        xp.zeros_like(g, shape=g.shape[:-2] + (1,) + g.shape[-1:]))
                else:
                    state["variance"] = _state_tensor(xp.zeros_like(g))
            if eps1 is None:
                # As PyTorch: the first parameter's dtype sets eps1 for the whole group.
                eps1 = float(np.finfo(pd.dtype).eps)
            step_t = state["step"]
            s = _writable(step_t)
            s += 1
            _bump(step_t)
            sc = _Scalars(step_t._data, pd)
            one_minus_beta2_t = sc.power(sc.step, beta2_decay)
            rho_t = sc.minimum(lr, 1 / sc.power(sc.step, 0.5))
            alpha = sc.maximum(eps2, sc.value(_norm(pd)) / pd.size ** 0.5) * rho_t
            if weight_decay != 0:
                _scale_(p, 1 - lr * weight_decay)
            grad: Any = Tensor._from_data(g)
            if g.ndim > 1:
                # mean(g * g, axis) as PyTorch takes it: the norm along the axis, squared.
                row_mean = grad.norm(dim=-1, keepdim=True).square() / g.shape[-1]
                col_mean = grad.norm(dim=-2, keepdim=True).square() / g.shape[-2]
                row = sc.lerp_(state["row_var"], row_mean._data, one_minus_beta2_t)
                col = sc.lerp_(state["col_var"], col_mean._data, one_minus_beta2_t)
                row_t: Any = Tensor._from_data(row)
                var_estimate = (row_t * Tensor._from_data(col)) \
                    / row_t.mean(dim=-2, keepdim=True).clamp(min=eps1)
            else:
                v = sc.lerp_(state["variance"], g * g, one_minus_beta2_t)
                var_estimate = Tensor._from_data(v)
            update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * grad
            denom = sc.maximum(1.0, sc.value(_norm(update._data))
                               / (update.numel() ** 0.5 * d))
            _sub_(p, update._data * sc.operand(alpha / denom, pd.dtype))


def _norm(data: Any) -> Any:
    """The 2-norm of all of ``data`` (in its dtype)."""
    return Tensor._from_data(data).norm()._data


class _Scalars:
    """The step's scalar arithmetic: Python floats in an eager step; float64 values of the
    program when ``torch.compile`` stages the step (the count is then a value of the
    program, and so is everything computed from it)."""

    def __init__(self, step: Any, param: Any) -> None:
        # The first staged step makes the count (concrete) while the parameter is traced.
        self.staged = isinstance(step, Tracer) or isinstance(param, Tracer)
        if self.staged:
            import funcgrad.numpy as fnp  # noqa: PLC0415

            self.fnp: Any = fnp
            self.step: Any = fnp.astype(step, np.float64)
        else:
            self.step = float(step)

    def value(self, x: Any) -> Any:
        """A 0-d array as a float64 scalar (``.item()`` in PyTorch's code)."""
        return self.fnp.astype(x, np.float64) if self.staged else float(x)

    def power(self, x: Any, y: float) -> Any:
        return self.fnp.power(x, y) if self.staged else x ** y

    def minimum(self, x: Any, y: Any) -> Any:
        return self.fnp.minimum(x, y) if self.staged else min(x, y)

    def maximum(self, x: Any, y: Any) -> Any:
        return self.fnp.maximum(x, y) if self.staged else max(x, y)

    def operand(self, x: Any, dtype: Any) -> Any:
        """A scalar as NumPy combines a Python float with an array of ``dtype``."""
        return self.fnp.astype(x, dtype) if self.staged else x

    def lerp_(self, buf: Tensor, end: Any, weight: Any) -> Any:
        """``buf.lerp_(end, weight)``, PyTorch's two-sided formula; returns the array."""
        if not self.staged:
            return _lerp_(buf, end, weight)
        fnp = self.fnp
        b = _writable(buf)
        diff = end - b
        near = b + diff * fnp.astype(weight, b.dtype)
        far = end - diff * fnp.astype(1 - weight, b.dtype)
        b[...] = fnp.where(fnp.abs(weight) < 0.5, near, far)
        _bump(buf)
        return b
