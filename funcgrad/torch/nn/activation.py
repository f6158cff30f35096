"""The activation modules of ``torch.nn`` beyond ReLU/Tanh/Sigmoid/GELU/Softmax, the padding
modules, and the small reshaping layers (Unflatten, PixelShuffle, PixelUnshuffle,
ChannelShuffle, CosineSimilarity, PairwiseDistance), with PyTorch's reprs.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch import nn
>>> nn.Hardtanh(-2.0, 2.0)
Hardtanh(min_val=-2.0, max_val=2.0)
>>> nn.ZeroPad2d((1, 1, 2, 0))(torch.ones(1, 1, 1, 1)).shape
torch.Size([1, 1, 3, 3])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.torch.nn import activation_functions as A
from funcgrad.torch.nn import functional as F
from funcgrad.torch.nn._apply import op
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter


class _Pointwise(Module):
    """An activation: ``fn(input, *[getattr(self, f) for f in fields])``; the repr lists the
    fields as PyTorch's (``inplace`` only when set)."""

    _fn: Callable[..., Any] = staticmethod(lambda x: x)
    _fields: tuple[str, ...] = ()
    _positional_repr = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        names = (*self._fields, "inplace")
        defaults = self._defaults()
        values = dict(zip(names, args))
        values.update(kwargs)
        for name in names:
            setattr(self, name, values.get(name, defaults.get(name, False)))

    def _defaults(self) -> dict[str, Any]:
        return {}

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, *(getattr(self, f) for f in self._fields))

    def extra_repr(self) -> str:
        if self._positional_repr:
            parts = [str(getattr(self, f)) for f in self._fields]
        else:
            parts = [f"{f}={getattr(self, f)}" for f in self._fields]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)


def _pointwise(name: str, fn: Callable[..., Any], fields: dict[str, Any] | None = None,
               positional: bool = False, doc: str = "") -> type[_Pointwise]:
    defaults = dict(fields or {})
    cls = type(name, (_Pointwise,), {
        "_fn": staticmethod(fn), "_fields": tuple(defaults), "_positional_repr": positional,
        "_defaults": lambda self: defaults, "__doc__": doc or f"``torch.nn.{name}``.",
        "__module__": __name__})
    return cls


Hardtanh = _pointwise("Hardtanh", A.hardtanh, {"min_val": -1.0, "max_val": 1.0},
                      doc="``x`` clipped to ``[min_val, max_val]``.")
ReLU6 = _pointwise("ReLU6", A.relu6, doc="``min(max(x, 0), 6)``.")
Mish = _pointwise("Mish", A.mish, doc="``x * tanh(softplus(x))``.")
Hardswish = _pointwise("Hardswish", A.hardswish, doc="``x * relu6(x + 3) / 6``.")
Hardsigmoid = _pointwise("Hardsigmoid", A.hardsigmoid, doc="``relu6(x + 3) / 6``.")
SELU = _pointwise("SELU", A.selu, doc="Scaled ELU.")
CELU = _pointwise("CELU", A.celu, {"alpha": 1.0}, doc="Continuously differentiable ELU.")
ELU = _pointwise("ELU", F.elu, {"alpha": 1.0}, doc="``x`` above 0, else ``alpha*(e^x-1)``.")
LeakyReLU = _pointwise("LeakyReLU", F.leaky_relu, {"negative_slope": 0.01},
                       doc="``x`` above 0, else ``negative_slope * x``.")
SiLU = _pointwise("SiLU", F.silu, doc="``x * sigmoid(x)``.")
Softsign = _pointwise("Softsign", A.softsign, doc="``x / (1 + |x|)``.")
Tanhshrink = _pointwise("Tanhshrink", A.tanhshrink, doc="``x - tanh(x)``.")
Softshrink = _pointwise("Softshrink", A.softshrink, {"lambd": 0.5}, positional=True,
                        doc="Soft thresholding by ``lambd``.")
Hardshrink = _pointwise("Hardshrink", A.hardshrink, {"lambd": 0.5}, positional=True,
                        doc="``x`` where ``|x| > lambd``, else 0.")
LogSigmoid = _pointwise("LogSigmoid", A.logsigmoid, doc="``log(sigmoid(x))``.")
Threshold = _pointwise("Threshold", A.threshold, {"threshold": 0.0, "value": 0.0},
                       doc="``x`` above ``threshold``, else ``value``.")
GLU = _pointwise("GLU", A.glu, {"dim": -1}, doc="Gated linear unit over ``dim``.")
Softmin = _pointwise("Softmin", A.softmin, {"dim": None}, doc="``softmax(-x, dim)``.")
# (mypy cannot type the decorated F.softplus through the import cycle with nn.functional)
Softplus = _pointwise("Softplus", F.softplus,  # type: ignore[has-type]
                      {"beta": 1.0, "threshold": 20.0},
                      doc="``log(1 + exp(beta x)) / beta``.")


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn in ``[lower, upper]`` while training."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return A.rrelu(input, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else "")


class PReLU(Module):
    """``x`` above 0, else ``weight * x`` with a learned slope (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from funcgrad.torch._creation import full  # noqa: PLC0415

        self.num_parameters = num_parameters
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype, device=device))

    def forward(self, input: Any) -> Any:  # noqa: A002
        return A.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels of each position (dim -3)."""

    def forward(self, input: Any) -> Any:  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3)


# ------------------------------------------------------------------ padding


def _pad_class(name: str, mode: str, dims: int, with_value: bool) -> type[Module]:
    def __init__(self: Any, padding: Any, *value: float) -> None:
        Module.__init__(self)
        if with_value and len(value) != 1:
            raise TypeError(f"{name}.__init__() missing 1 required positional argument: "
                            f"'value'")
        self.padding = (padding,) * (2 * dims) if isinstance(padding, int) else tuple(padding)
        self.value = value[0] if with_value else 0.0

    def forward(self: Any, input: Any) -> Any:  # noqa: A002
        return F.pad(input, self.padding, mode=mode,
                     value=self.value if mode == "constant" else None)

    def extra_repr(self: Any) -> str:
        return f"padding={self.padding}, value={self.value}" if with_value \
            else f"{self.padding}"

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__module__": __name__,
                                  "__doc__": f"``torch.nn.{name}``: pad {dims}-d inputs "
                                             f"({mode})."})


ZeroPad1d, ZeroPad2d, ZeroPad3d = (_pad_class(f"ZeroPad{d}d", "constant", d, False)
                                   for d in (1, 2, 3))
ConstantPad1d, ConstantPad2d, ConstantPad3d = (
    _pad_class(f"ConstantPad{d}d", "constant", d, True) for d in (1, 2, 3))
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = (
    _pad_class(f"ReflectionPad{d}d", "reflect", d, False) for d in (1, 2, 3))
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = (
    _pad_class(f"ReplicationPad{d}d", "replicate", d, False) for d in (1, 2, 3))
CircularPad1d, CircularPad2d, CircularPad3d = (
    _pad_class(f"CircularPad{d}d", "circular", d, False) for d in (1, 2, 3))


# ------------------------------------------------------------------ reshaping layers


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _check_pixel_shuffle(name: str, factor: str, input: Any, r: int) -> None:  # noqa: A002
    """PyTorch's checks of the rank and the factor (before the divisibility checks)."""
    if len(input.shape) < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got "
                           f"input with {len(input.shape)} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {factor}, but got {r}")


def pixel_shuffle(input: Any, upscale_factor: int) -> Any:  # noqa: A002
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``."""
    r = upscale_factor
    _check_pixel_shuffle("pixel_shuffle", "upscale_factor", input, r)
    if input.shape[-3] % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           "divisible by the square of upscale_factor, but "
                           f"input.size(-3)={input.shape[-3]} is not divisible by {r * r}")

    def impl(x: Any) -> Any:
        *b, c, h, w = x.shape
        y = fnp.reshape(x, (*b, c // (r * r), r, r, h, w))
        n = len(b)
        y = fnp.transpose(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
        return fnp.reshape(y, (*b, c // (r * r), h * r, w * r))

    return op("PixelShuffle", impl, input)


def pixel_unshuffle(input: Any, downscale_factor: int) -> Any:  # noqa: A002
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``."""
    r = downscale_factor
    _check_pixel_shuffle("pixel_unshuffle", "downscale_factor", input, r)
    for side, axis in (("height", -2), ("width", -1)):
        if input.shape[axis] % r:
            raise RuntimeError(f"pixel_unshuffle expects {side} to be divisible by "
                               f"downscale_factor, but input.size({axis})="
                               f"{input.shape[axis]} is not divisible by {r}")

    def impl(x: Any) -> Any:
        *b, c, hr, wr = x.shape
        n = len(b)
        y = fnp.reshape(x, (*b, c, hr // r, r, wr // r, r))
        y = fnp.transpose(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
        return fnp.reshape(y, (*b, c * r * r, hr // r, wr // r))

    return op("PixelUnshuffle", impl, input)


def channel_shuffle(input: Any, groups: int) -> Any:  # noqa: A002
    """Interleave the channels (dim 1) of ``groups`` groups."""
    def impl(x: Any) -> Any:
        b, c, *rest = x.shape
        y = fnp.reshape(x, (b, groups, c // groups, *rest))
        return fnp.reshape(fnp.swapaxes(y, 1, 2), x.shape)

    return op("ChannelShuffle", impl, input)


class PixelShuffle(Module):
    """Rearrange channels into an ``upscale_factor`` larger picture."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Any) -> Any:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """The inverse of PixelShuffle."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Any) -> Any:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Any) -> Any:  # noqa: A002
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class CosineSimilarity(Module):
    """``F.cosine_similarity`` along ``dim``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``F.pairwise_distance``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Any, x2: Any) -> Any:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = [
    "CELU", "ELU", "GLU", "SELU", "ChannelShuffle", "CircularPad1d", "CircularPad2d",
    "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "CosineSimilarity",
    "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "Mish",
    "PReLU", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle", "RReLU", "ReLU6",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "SiLU", "Softmax2d", "Softmin", "Softplus",
    "Softshrink", "Softsign", "Tanhshrink", "Threshold", "Unflatten", "ZeroPad1d",
    "ZeroPad2d", "ZeroPad3d", "channel_shuffle", "pixel_shuffle", "pixel_unshuffle",
]

