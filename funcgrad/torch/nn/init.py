"""Parameter initialisation, as ``torch.nn.init``: fill a tensor in place, without
recording a graph, from funcgrad's global random generator (``torch.manual_seed``).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn import init
>>> w = torch.empty(3, 5)
>>> init.calculate_fan_in_and_fan_out(w)
(5, 3)
>>> _ = torch.manual_seed(0); a = init.kaiming_uniform_(w, a=5 ** 0.5).clone()
>>> bool((a.abs() <= 5 ** -0.5).all())
True
>>> _ = torch.manual_seed(0); bool((init.kaiming_uniform_(w, a=5 ** 0.5) == a).all())
True
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._mt_stream import MTStream
from funcgrad.torch._random import rng
from funcgrad.torch._tensor import Tensor

__all__ = [
    "calculate_fan_in_and_fan_out", "calculate_gain", "constant", "constant_", "dirac",
    "dirac_", "eye", "eye_", "kaiming_normal", "kaiming_normal_", "kaiming_uniform",
    "kaiming_uniform_", "normal", "normal_", "ones_", "orthogonal", "orthogonal_", "sparse",
    "sparse_", "trunc_normal_", "uniform", "uniform_", "xavier_normal", "xavier_normal_",
    "xavier_uniform", "xavier_uniform_", "zeros_",
]


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for an activation (PyTorch's table).

    >>> from funcgrad.torch.nn.init import calculate_gain
    >>> calculate_gain("relu"), calculate_gain("tanh")
    (1.4142135623730951, 1.6666666666666667)
    """
    linear = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d"]
    if nonlinearity in linear or nonlinearity == "sigmoid":
        return 1  # PyTorch's int
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight: ``(in * receptive field, out * receptive field)``."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:]) if tensor.dim() > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


_calculate_fan_in_and_fan_out = calculate_fan_in_and_fan_out  # PyTorch's (private) name


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of "
                         f"{['fan_in', 'fan_out']}")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


_calculate_correct_fan = _fan  # PyTorch's (private) name


def _draws(generator: Any) -> MTStream:
    return rng() if generator is None else generator._rng


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        return tensor._fill_random(np.asarray(values))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with samples of U(a, b)."""
    # Tensor.uniform_'s kernel: PyTorch's numbers after the same manual_seed.
    if tensor.is_meta:
        return tensor  # no values to draw (and no generator advances, as in PyTorch)
    return _fill(tensor, _draws(generator).torch_uniform(tuple(tensor.shape),
                                                         tensor._data.dtype, a, b))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
            ) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    if tensor.is_meta:
        return tensor
    return _fill(tensor, _draws(generator).torch_normal(tuple(tensor.shape), tensor._data.dtype,
                                                        mean, std, tensor.is_contiguous()))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill with samples of N(mean, std^2) truncated to ``[a, b]``, by PyTorch's rejection
    sampling: normal_ redrawn outside the bounds when most of the mass lies inside, else
    uniform candidates in ``[a, b]`` accepted by a uniform's log against the density.

    >>> import funcgrad.torch as torch
    >>> w = torch.nn.init.trunc_normal_(torch.empty(100), a=-0.5, b=0.5)
    >>> bool(((w >= -0.5) & (w <= 0.5)).all())
    True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    g = _draws(generator)
    dt = tensor._data.dtype
    shape = tuple(tensor.shape)
    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        lo, hi = np.asarray(a).astype(dt), np.asarray(b).astype(dt)
        result = np.asarray(g.torch_normal(shape, dt, mean, std, tensor.is_contiguous()))
        while True:
            outside = (result < lo) | (result > hi)
            if not outside.any():
                return _fill(tensor, result)
            result = np.where(outside, g.torch_normal(shape, dt, mean, std), result)
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_density(x: np.ndarray) -> np.ndarray:  # each step in the dtype, as PyTorch's
        z = (x - np.asarray(mean).astype(dt)) / np.asarray(std).astype(dt)
        return np.asarray((z * z * np.asarray(-0.5).astype(dt) - np.asarray(log_peak)
                           .astype(dt)).astype(dt))

    def accept_draw() -> np.ndarray:  # log's last bit may differ from PyTorch's vector log
        with np.errstate(divide="ignore"):
            return np.asarray(np.log(g.torch_uniform(shape, dt)))

    result = np.asarray(g.torch_uniform(shape, dt, a, b))
    pending = accept_draw() > log_density(result)
    while pending.any():
        cand = np.asarray(g.torch_uniform(shape, dt, a, b))
        result = np.where(pending, cand, result)
        pending = np.where(pending, accept_draw() > log_density(cand), pending)
    return _fill(tensor, result)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-b, b) with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    # PyTorch's order of operations, so the bound rounds as there.
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``.

    ``a = sqrt(5)`` (what ``Linear`` uses) gives ``b = 1 / sqrt(fan_in)``.
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std  # PyTorch's order of operations, so the bound rounds as there
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He normal: N(0, std^2) with ``std = gain / sqrt(fan)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a matrix with the identity (ones on the main diagonal).

    >>> import funcgrad.torch as torch
    >>> torch.nn.init.eye_(torch.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-5 dimensional convolution weight with the Dirac delta (identity maps,
    one per group).

    >>> import funcgrad.torch as torch
    >>> torch.nn.init.dirac_(torch.empty(1, 1, 3))
    tensor([[[0., 1., 0.]]])
    """
    nd = tensor.dim()
    if nd not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    vals = np.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            vals[(g * out_per_group + d, d) + centre] = 1
    return _fill(tensor, vals)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix: the QR factor of a Gaussian matrix, its signs
    fixed by R's diagonal (trailing axes are flattened), times ``gain``.

    >>> import funcgrad.torch as torch
    >>> w = torch.nn.init.orthogonal_(torch.empty(3, 3))
    >>> bool(torch.allclose(w @ w.T, torch.eye(3), atol=1e-5))
    True
    """
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from funcgrad.torch import linalg  # noqa: PLC0415

    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    # PyTorch: new_empty((rows, cols)).normal_(0, 1), then a QR (whose rounding differs).
    flat = _draws(generator).torch_normal((rows, cols), tensor._data.dtype)
    if rows < cols:
        flat = flat.T
    with no_grad():
        q, r = linalg.qr(Tensor._from_data(flat))
    qv = np.asarray(q._host()) * np.sign(np.diag(np.asarray(r._host())))
    if rows < cols:
        qv = qv.T
    return _fill(tensor, (gain * qv).reshape(tuple(tensor.shape)))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None
            ) -> Tensor:
    """Fill a matrix with N(0, std^2) samples and zero ``ceil(sparsity * rows)`` random
    entries of each column.

    >>> import funcgrad.torch as torch
    >>> w = torch.nn.init.sparse_(torch.empty(4, 3), sparsity=0.5)
    >>> int((w == 0).sum())
    6
    """
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    g = _draws(generator)
    # PyTorch: normal_(0, std), then per column a randperm(rows) whose first entries zero.
    vals = np.array(g.torch_normal((rows, cols), tensor._data.dtype, 0.0, std))
    for c in range(cols):
        vals[g.torch_randperm(rows)[:num_zeros], c] = 0
    return _fill(tensor, vals)


def _deprecated(new: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """PyTorch's old names without the underscore: a warning, then the in-place one."""
    name = new.__name__[:-1]

    def old(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    old.__name__ = old.__qualname__ = name
    old.__doc__ = f"Deprecated alias of ``{new.__name__}``."
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
