"""The hook-based weight normalization, as ``torch.nn.utils.weight_norm`` (deprecated in
PyTorch in favour of ``torch.nn.utils.parametrizations.weight_norm``).

``weight_norm(module)`` replaces the parameter ``weight`` by ``weight_g`` (its norm over
every dim but ``dim``) and ``weight_v`` (its direction), and a forward pre-hook recomputes
``module.weight = weight_v * weight_g / ||weight_v||`` before each call.

>>> import warnings
>>> import funcgrad.torch.nn as nn
>>> from funcgrad.torch.nn.utils import weight_norm, remove_weight_norm
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", FutureWarning)
...     lin = weight_norm(nn.Linear(3, 2))
>>> list(lin.state_dict())
['bias', 'weight_g', 'weight_v']
>>> list(remove_weight_norm(lin).state_dict())
['bias', 'weight']
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import funcgrad.numpy as fnp
from funcgrad.torch._tensor import Tensor, apply_op
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _norm_except_dim(v: Any, pow: int = 2, dim: int = 0) -> Any:  # noqa: A002
    """``torch.norm_except_dim``: the norm over every dim but ``dim`` (kept; the others
    size 1), or of all of ``v`` for ``dim=-1``. (funcgrad.torch's own lives in a module
    that imports nn, so nn.utils cannot import it.)"""
    if dim == -1:
        return v.norm(pow)
    nd = v.dim()
    dim %= nd
    if dim == 0:
        return v.reshape(v.shape[0], -1).norm(pow, 1).reshape([v.shape[0]] + [1] * (nd - 1))
    if dim == nd - 1:
        return v.reshape(-1, v.shape[-1]).norm(pow, 0).reshape([1] * (nd - 1) + [v.shape[-1]])
    return _norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _weight_norm(v: Any, g: Any, dim: int) -> Any:
    """``torch._weight_norm``: ``v`` rescaled to the norm ``g`` over every dim but
    ``dim``: for the first or the last dim PyTorch's fused kernel (one node,
    ``WeightNormInterfaceBackward0``), otherwise its composite."""
    if isinstance(v, Tensor) and isinstance(g, Tensor) and v.dim() and (
            dim == 0 or dim == v.dim() - 1):
        axes = tuple(k for k in range(v.dim()) if k != dim)

        def fused(a: Any, b: Any) -> Any:
            norm = fnp.sqrt(fnp.sum(a * a, axis=axes, keepdims=True))
            return a * (b / norm)

        return apply_op("WeightNormInterface", fused, v, g)
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that ``weight_norm`` registers: it sets ``module.<name>``
    from ``<name>_g`` and ``<name>_v``.

    >>> WeightNorm("weight", None).dim
    -1
    """

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=2)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        from funcgrad.torch.nn.lazy import UninitializedParameter

        if isinstance(weight, UninitializedParameter):
            raise ValueError(
                "The module passed to `WeightNorm` can't have uninitialized parameters. "
                "Make sure to run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        # A plain attribute, recomputed by the hook before every forward.
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Reparametrize ``module.<name>`` as ``<name>_g * <name>_v / ||<name>_v||`` (norm over
    every dim but ``dim``; ``dim=None``: the whole tensor), recomputed before each forward.
    Warns that it is deprecated, as PyTorch does.

    >>> import warnings
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import weight_norm
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     lin = weight_norm(nn.Linear(4, 3), dim=None)
    >>> lin.weight_g.shape
    torch.Size([])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``weight_norm``: ``<name>`` is a plain parameter again, with its current value.

    >>> import warnings
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import weight_norm, remove_weight_norm
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     lin = remove_weight_norm(weight_norm(nn.Linear(4, 3)))
    >>> [name for name, _ in lin.named_parameters()]
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
