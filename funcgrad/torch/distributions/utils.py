"""Helpers shared by the distributions: broadcasting parameters, logits and probabilities."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from types import SimpleNamespace
from typing import Any

from funcgrad.torch import _creation, _dtypes, _grad_mode, _tensor, _tensor_math
from funcgrad.torch._device import Size
from funcgrad.torch._type_info import finfo

# The Tensor face's functions, from the modules that define them (importing funcgrad.torch
# itself would make an import cycle with this subpackage).
torch: Any = SimpleNamespace(
    Size=Size, Tensor=_tensor.Tensor, where=_tensor.where, no_grad=_grad_mode.no_grad,
    broadcast_tensors=_tensor_math.broadcast_tensors, get_default_dtype=_dtypes.get_default_dtype,
    long=_dtypes.int64, **{n: getattr(_creation, n) for n in (
        "tensor", "normal", "randn", "rand", "bernoulli", "multinomial", "full", "arange")},
)

def finfo_eps_min(dtype: Any) -> tuple[float, float]:
    """torch.finfo(dtype)'s eps and min."""
    info = finfo(dtype)
    return info.eps, info.min


def broadcast_all(*values: Any) -> tuple[Any, ...]:
    """Tensors broadcast together; numbers become tensors of the first tensor's dtype (or the
    default dtype).

    >>> import funcgrad.torch as torch
    >>> [t.shape for t in broadcast_all(torch.zeros(2), 1.0)]
    [torch.Size([2]), torch.Size([2])]
    """
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, torch.Tensor)), None)
    dtype = like.dtype if like is not None else torch.get_default_dtype()
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype, device=device)
               for v in values]
    return tuple(torch.broadcast_tensors(*tensors))


def clamp_probs(probs: Any) -> Any:
    eps = finfo_eps_min(probs.dtype)[0]
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    return logits.sigmoid() if is_binary else logits.softmax(dim=-1)


class lazy_property:  # noqa: N801 - torch's name
    """A property computed on first use and then stored on the instance."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value
