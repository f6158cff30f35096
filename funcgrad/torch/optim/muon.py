"""Muon: momentum, then a Newton-Schulz orthogonalization of the update
(``torch.optim.Muon``; 2-D parameters only).

For a parameter ``p`` (a matrix of shape ``(A, B)``) with gradient ``g``::

    buf = lerp(buf, g, 1 - momentum)
    u = lerp(g, buf, momentum) if nesterov else buf
    o = NS(u)                                         # in bfloat16, as PyTorch computes it
    p = p * (1 - lr * weight_decay)
    p = p - adjusted_lr * o

with ``adjusted_lr = lr * sqrt(max(1, A / B))`` (``adjust_lr_fn="original"``, the default)
or ``lr * 0.2 * sqrt(max(A, B))`` (``"match_rms_adamw"``).

``NS`` scales ``u`` (transposed when ``A > B``) to unit Frobenius norm and runs ``ns_steps``
quintic iterations ``X = a X + (b G + c G @ G) @ X`` with ``G = X @ X.T``; every product
is summed in float32 and rounded to bfloat16 once, as PyTorch's bfloat16 ``addmm``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import optim
>>> w = torch.zeros(2, 3, requires_grad=True)
>>> opt = optim.Muon([w], lr=0.1)
>>> w.grad = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
>>> _ = opt.step()
>>> w                                  # about -lr times an orthogonal matrix
tensor([[-0.1117,  0.0000,  0.0000],
        [ 0.0000, -0.0691,  0.0000]], requires_grad=True)
"""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch._dtypes import bfloat16, float32
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.optim.optimizer import (
    Optimizer,
    _grad_data,
    _lerp_,
    _real_params_with_grad,
    _scalar,
    _scale_,
    _state_tensor,
    _sub_,
    _xp,
)

__all__ = ["Muon"]

# Keller Jordan's coefficients and step count (PyTorch's defaults).
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """Muon (Jordan et al.), as ``torch.optim.Muon``: for the 2-D weights of hidden layers
    (optimize biases and embeddings with another optimizer, such as AdamW).

    State per parameter: ``"momentum_buffer"``.
    """

    def __init__(self, params: Any, lr: Any = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _scalar(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        # Checked here only, as PyTorch does (not in add_param_group).
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _update_group(self, group: dict[str, Any]) -> None:
        params = _real_params_with_grad(group, "Muon")
        lr = float(_scalar(group["lr"]))
        weight_decay, momentum = float(group["weight_decay"]), float(group["momentum"])
        for p in params:
            g = _grad_data(p)
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = _state_tensor(_xp(g).zeros_like(g))
        for p in params:
            g = _grad_data(p)
            if g.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            buf = _lerp_(self.state[p]["momentum_buffer"], g, 1 - momentum)
            update = _lerp(g, buf, momentum) if group["nesterov"] else buf
            ortho = _zeropower_via_newtonschulz(
                Tensor._from_data(update), group["ns_coefficients"], group["ns_steps"],
                float(group["eps"]))
            adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
            _scale_(p, 1 - lr * weight_decay)
            _sub_(p, ortho.to(p.dtype)._data * adjusted_lr)


def _lerp(start: Any, end: Any, weight: float) -> Any:
    """``start.lerp(end, weight)`` (a new array), PyTorch's two-sided formula."""
    diff = end - start
    if abs(weight) < 0.5:
        diff *= weight
        return start + diff
    diff *= 1 - weight
    return end - diff


def _round(x: Any) -> Any:
    return x.to(bfloat16)


def _zeropower_via_newtonschulz(grad: Any, ns_coefficients: Any, ns_steps: int,
                                eps: float) -> Any:
    """The quintic Newton-Schulz iteration towards ``U V^T`` (``grad = U S V^T``), in
    bfloat16; each product and each ``addmm`` is computed in float32 and rounded once."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = (float(v) for v in ns_coefficients)
    x = _round(grad)
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    # Spectral norm at most 1: divide by the Frobenius norm (summed in float32, as
    # PyTorch's bfloat16 norm), each quotient rounded once.
    xf = x.to(float32)
    norm = _round(xf.square().sum().sqrt()).clamp(min=eps)
    x = _round(xf / norm.to(float32))
    for _ in range(ns_steps):
        xf = x.to(float32)
        gram = _round(xf @ xf.T).to(float32)
        gram_update = _round(gram @ gram * c + gram * b).to(float32)
        x = _round(gram_update @ xf + xf * a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    """The learning rate scaled for the shape of the matrix (PyTorch's two rules)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio
