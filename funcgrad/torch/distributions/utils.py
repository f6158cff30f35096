"""Helpers shared by the distributions: broadcasting parameters, logits and probabilities."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Number
from types import SimpleNamespace
from typing import Any

import numpy as np

from funcgrad.torch import (
    _creation,
    _dtypes,
    _functions,
    _grad_mode,
    _tensor,
    _tensor_math,
    linalg,
)
from funcgrad.torch._device import Size
from funcgrad.torch._nn_functions import binomial
from funcgrad.torch._type_info import finfo


# The Tensor face's functions, from the modules that define them (importing funcgrad.torch
# itself would make an import cycle with this subpackage).
class _TorchFace(SimpleNamespace):
    """The functions below; any other public name of the modules funcgrad.torch takes its
    creation functions, functions and dtypes from; and any Tensor method PyTorch also has
    as a function (``torch.cos``, ``torch.mvlgamma``...), made as funcgrad.torch makes it."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"the distributions' torch namespace has no {name!r}")
        found = _tensor_math.FUNCTIONS.get(name)
        for module in (_creation, _functions):
            obj = getattr(module, name, None)
            if found is None and getattr(obj, "__module__", None) == module.__name__:
                found = obj
        if found is None and isinstance(getattr(_dtypes, name, None), _dtypes.dtype):
            found = getattr(_dtypes, name)
        if found is None:
            if not hasattr(_tensor.Tensor, name):
                raise AttributeError(f"the distributions' torch namespace has no {name!r}")
            found = _functions._method_function(name)
        setattr(self, name, found)
        return found


torch: Any = _TorchFace(
    Size=Size, Tensor=_tensor.Tensor, where=_tensor.where, no_grad=_grad_mode.no_grad,
    is_grad_enabled=_grad_mode.is_grad_enabled, matmul=_tensor.matmul,
    broadcast_tensors=_tensor_math.broadcast_tensors, get_default_dtype=_dtypes.get_default_dtype,
    broadcast_shapes=_tensor_math.broadcast_shapes, binomial=binomial,
    long=_dtypes.int64, float64=_dtypes.float64, bool=_dtypes.bool, **{n: getattr(_creation, n)
    for n in ("tensor", "normal", "randn", "rand", "bernoulli", "multinomial", "full", "arange",
              "eye", "empty", "zeros_like", "ones_like", "full_like", "poisson")},
    stack=_functions.stack, linalg=linalg,
)

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant, as torch's


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
        # Computed with grad on, as PyTorch's: first read under no_grad (sample() reads
        # probs so), the cached value would otherwise carry no graph for later log_prob or
        # entropy calls.
        with _grad_mode.enable_grad():
            value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def sum_rightmost(value: Any, dim: int) -> Any:
    """``value`` summed over its ``dim`` rightmost dimensions (torch's ``_sum_rightmost``).

    >>> import funcgrad.torch as torch
    >>> sum_rightmost(torch.ones(2, 3), 1)
    tensor([3., 3.])
    """
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.dim() - dim], -1).sum(-1)


def _tril_positions(n: int, diag: int) -> np.ndarray:
    """Flat indices of an ``n x n`` matrix's entries on or below diagonal ``diag``, row by
    row."""
    arange = np.arange(n)
    return np.flatnonzero(arange < arange.reshape(-1, 1) + (diag + 1))


def tril_matrix_to_vec(mat: Any, diag: int = 0) -> Any:
    """The entries of ``mat`` on or below diagonal ``diag``, row by row (torch's helper).

    >>> import funcgrad.torch as torch
    >>> tril_matrix_to_vec(torch.arange(9.0).reshape(3, 3), diag=-1)
    tensor([3., 6., 7.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    index = torch.tensor(_tril_positions(n, diag), dtype=torch.long, device=mat.device)
    return mat.reshape(*mat.shape[:-2], n * n)[..., index]


def vec_to_tril_matrix(vec: Any, diag: int = 0) -> Any:
    """The lower-triangular matrices whose entries on or below diagonal ``diag`` are ``vec``
    row by row (torch's helper), built by a gather so gradients flow.

    >>> import funcgrad.torch as torch
    >>> vec_to_tril_matrix(torch.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 0.],
            [2., 3.]])
    """
    size = vec.shape[-1]
    n_float = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * size
                                  + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n_float) - n_float > finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {size} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix.")
    n = round(n_float)
    index = np.full(n * n, size)
    index[_tril_positions(n, diag)] = np.arange(size)
    padded = _functions.cat([vec, vec.new_zeros((*vec.shape[:-1], 1))], -1)
    gather = torch.tensor(index, dtype=torch.long, device=vec.device)
    return padded[..., gather].reshape(*vec.shape[:-1], n, n)


def set_count_and_probs(d: Any, total_count: Any, probs: Any, logits: Any) -> None:
    """A count distribution's parameters (Binomial, NegativeBinomial): ``total_count``
    broadcast with ``probs`` or with ``logits`` (exactly one given) and of its dtype; the
    given one is also ``d._param``."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        d.total_count, d.probs = broadcast_all(total_count, probs)
        d.total_count = d.total_count.type_as(d.probs)
    else:
        d.total_count, d.logits = broadcast_all(total_count, logits)
        d.total_count = d.total_count.type_as(d.logits)
    d._param = d.probs if probs is not None else d.logits


def expand_count_and_probs(d: Any, new: Any, batch_shape: Any) -> None:
    """``new`` made ``d`` expanded to ``batch_shape`` (the parameters it has computed so
    far included), without validating its arguments again."""
    from funcgrad.torch.distributions.distribution import Distribution  # noqa: PLC0415

    shape = torch.Size(batch_shape)
    new.total_count = d.total_count.expand(shape)
    for name in ("probs", "logits"):
        if name in d.__dict__:
            setattr(new, name, d.__dict__[name].expand(shape))
            new._param = getattr(new, name)
    Distribution.__init__(new, shape, validate_args=False)
    new._validate_args = d._validate_args
