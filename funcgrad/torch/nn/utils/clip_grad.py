"""Gradient clipping, as ``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn.utils import clip_grad_norm_
>>> w = torch.zeros(2, requires_grad=True)
>>> w.grad = torch.tensor([3.0, 4.0])
>>> clip_grad_norm_([w], max_norm=1.0)
tensor(5.)
>>> w.grad
tensor([0.6000, 0.8000])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of all ``tensors`` together (the norm of their norms).

    >>> import funcgrad.torch as torch
    >>> get_total_norm([torch.tensor([3.0]), torch.tensor([4.0])])
    tensor(5.)
    """
    from funcgrad.torch._creation import tensor  # noqa: PLC0415
    from funcgrad.torch._functions import stack  # noqa: PLC0415
    from funcgrad.torch.linalg import vector_norm  # noqa: PLC0415

    ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(ts) == 0:
        return tensor(0.0)
    if any(getattr(t, "is_sparse", False) for t in ts):
        from funcgrad.torch._sparse import not_on_sparse  # noqa: PLC0415

        raise not_on_sparse("linalg_vector_norm")
    with no_grad():
        total = vector_norm(stack([vector_norm(t.detach(), norm_type) for t in ts]), norm_type)
    if error_if_nonfinite and not math.isfinite(float(total.item())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients in place so that their total ``norm_type`` norm is at most
    ``max_norm``; returns the norm before clipping. ``foreach`` is accepted (one
    kernel path here)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = get_total_norm(_grads(params), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``: the
    second half of ``clip_grad_norm_``, with a norm computed beforehand.

    >>> import funcgrad.torch as torch
    >>> w = torch.zeros(2, requires_grad=True); w.grad = torch.tensor([3.0, 4.0])
    >>> clip_grads_with_norm_([w], 1.0, torch.tensor(5.0)); w.grad
    tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    if not grads:
        return
    norm: Any = total_norm
    with no_grad():
        # In the norm's dtype, as PyTorch computes the coefficient; the in-place multiply
        # rounds once (a float32 coefficient is not rounded to a half gradient's dtype first).
        coef = (float(max_norm) / (norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """Deprecated PyTorch alias of ``clip_grad_norm_``."""
    import warnings  # noqa: PLC0415

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient to ``[-clip_value, clip_value]`` in place.

    >>> import funcgrad.torch as torch
    >>> w = torch.zeros(3, requires_grad=True); w.grad = torch.tensor([-2.0, 0.5, 3.0])
    >>> clip_grad_value_(w, 1.0); w.grad
    tensor([-1.0000,  0.5000,  1.0000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


