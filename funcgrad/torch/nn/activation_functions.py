"""The activations of ``torch.nn.functional`` beyond relu/gelu/silu/elu/softplus: hardtanh,
relu6, mish, hardswish, hardsigmoid, selu, celu, softsign, tanhshrink, softshrink,
hardshrink, logsigmoid, threshold, glu, softmin, prelu, rrelu; PyTorch's values, node
names and derivatives (at the kinks, the one-sided derivative PyTorch's kernels give).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn.activation_functions import hardtanh
>>> hardtanh(torch.tensor([-2.0, 0.5, 3.0]))
tensor([-1.0000,  0.5000,  1.0000])
"""

from __future__ import annotations

from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad import nn as jnn
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import floating, in_float32, in_float32_at_result, op, uniform_noise

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _const(x: Any, v: float) -> Any:
    return fnp.full_like(x, v)


def _written(name: str, *args: Any) -> Any:
    """``inplace=True``: the function's in-place form (``F.elu_``...), PyTorch's node."""
    from funcgrad.torch.nn import functional_extras  # noqa: PLC0415 - it imports this module

    return getattr(functional_extras, name)(*args)


def _written_as(op_name: str, impl: Any, input: Any) -> Any:  # noqa: A002
    """``inplace=True`` of a function without an in-place form of its own."""
    from funcgrad.torch.nn import functional_extras  # noqa: PLC0415 - it imports this module

    return functional_extras._inplace(op_name, impl, floating(input))


def _hardtanh(x: Any, lo: float, hi: float) -> Any:
    # The gradient is 1 strictly inside (lo, hi) and 0 elsewhere, as PyTorch's.
    return fnp.where((x > lo) & (x < hi), x, fnp.where(x <= lo, _const(x, lo), _const(x, hi)))


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Any:
    """``x`` clipped to ``[min_val, max_val]``."""
    if inplace:
        return _written("hardtanh_", input, min_val, max_val)
    return op("Hardtanh", lambda x: _hardtanh(x, min_val, max_val), floating(input))


def relu6(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``min(max(x, 0), 6)``."""
    if inplace:
        return _written("hardtanh_", input, 0.0, 6.0)
    return op("Hardtanh", lambda x: _hardtanh(x, 0.0, 6.0), floating(input))


def mish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    impl = in_float32(lambda x: x * fnp.tanh(jnn.softplus(x)))
    return _written_as("Mish", impl, input) if inplace else op("Mish", impl, floating(input))


def hardswish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``x * relu6(x + 3) / 6``."""
    impl = in_float32(lambda x: x * _hardtanh(x + 3.0, 0.0, 6.0) / 6.0)
    return _written_as("Hardswish", impl, input) if inplace else \
        op("Hardswish", impl, floating(input))


# PyTorch's hardsigmoid backward multiplies by the float32 constant 1/6, in every dtype.
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


def _hardsigmoid(x: Any) -> Any:
    inside = fnp.where((x > -3.0) & (x < 3.0), x, _const(x, 0.0)) * _ONE_SIXTH_F32
    exact = _hardtanh(x + 3.0, 0.0, 6.0) / 6.0
    return lax.stop_gradient(exact - inside) + inside


def hardsigmoid(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``relu6(x + 3) / 6``."""
    impl = in_float32(_hardsigmoid)
    return _written_as("Hardsigmoid", impl, input) if inplace else \
        op("Hardsigmoid", impl, floating(input))


def _elu(x: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Any:
    # The negative branch holds at 0 too (PyTorch's derivative there is alpha * scale).
    neg = alpha * fnp.expm1(fnp.where(x > 0, _const(x, 0.0), x) * input_scale)
    return scale * fnp.where(x > 0, x, neg)


def selu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``scale * elu(x, alpha)`` with SELU's constants."""
    if inplace:
        return _written("selu_", input)
    return op("Elu", in_float32(lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE)), floating(input))


def _celu(x: Any, alpha: float) -> Any:
    # PyTorch's celu backward scales by 1 / float32(alpha) (its derivative formula converts
    # alpha with toFloat()); the values use the exact 1/alpha.
    exact = _elu(x, alpha, 1.0, 1.0 / alpha)
    surrogate = _elu(x, alpha, 1.0, 1.0 / float(np.float32(alpha)))
    return lax.stop_gradient(exact - surrogate) + surrogate


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if inplace:
        return _written("celu_", input, alpha)
    return op("Celu", in_float32(lambda x: _celu(x, alpha)), floating(input))


def softsign(input: Any) -> Any:  # noqa: A002
    """``x / (1 + |x|)``."""
    return op("Div", lambda x: x / (1.0 + fnp.abs(x)), floating(input))


def tanhshrink(input: Any) -> Any:  # noqa: A002
    """``x - tanh(x)``."""
    return op("Sub", lambda x: x - fnp.tanh(x), floating(input))


def softshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    return op("Softshrink", lambda x: fnp.where(
        x > lambd, x - lambd, fnp.where(x < -lambd, x + lambd, _const(x, 0.0))),
        floating(input))


def hardshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0."""
    return op("Hardshrink", lambda x: fnp.where(fnp.abs(x) > lambd, x, _const(x, 0.0)),
              floating(input))


def logsigmoid(input: Any) -> Any:  # noqa: A002
    """``log(sigmoid(x))``, computed stably."""
    return op("LogSigmoid", in_float32(lambda x: -jnn.softplus(-x)), floating(input))


def threshold(input: Any, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Any:
    """``x`` where ``x > threshold``, else ``value``."""
    if inplace:
        return _written("threshold_", input, threshold, value)
    return op("Threshold", lambda x: fnp.where(x > threshold, x, _const(x, value)), input)


def glu(input: Any, dim: int = -1) -> Any:  # noqa: A002
    """``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``."""
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.ndim} is size {n}")

    def impl(x: Any) -> Any:
        a, b = fnp.split(x, 2, axis=dim)
        return a * jnn.sigmoid(b)

    return op("Glu", in_float32(impl), floating(input))


def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Any:
    """``softmax(-x, dim)``."""
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if isinstance(input, Tensor) and (dtype is not None or not input.dtype.is_floating_point):
        # PyTorch's (-input).softmax(dim, dtype): its dtype, and its errors for bool and
        # integer tensors.
        return (-input).softmax(dim, dtype=dtype)
    # PyTorch's softmin is softmax(-x): its backward reads the rounded result.
    impl = in_float32_at_result(
        lambda x: jnn.softmax(-x, axis=dim),
        lambda y, dx: -y * (dx - fnp.sum(y * dx, axis=dim, keepdims=True)))
    return op("Softmax", impl, floating(input))


@autocast_op("prelu")
def prelu(input: Any, weight: Any) -> Any:  # noqa: A002
    """``x`` where ``x >= 0``, else ``weight * x`` (one weight, or one per channel: dim 1)."""
    def impl(x: Any, w: Any) -> Any:
        if w.size > 1 and x.ndim >= 2:
            w = fnp.reshape(w, (1, -1) + (1,) * (x.ndim - 2))
        return fnp.where(x > 0, x, w * x)  # at 0 the slope side, as PyTorch

    return op("PreluKernel", impl, floating(input), weight)


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Any:
    """Leaky relu with slope ``(lower + upper) / 2``, or, when ``training``, a slope drawn
    uniformly from ``[lower, upper]`` for each negative element."""
    if inplace:
        return _written("rrelu_", input, lower, upper, training)
    if not training:
        slope: Any = (lower + upper) / 2
    else:
        slope = Tensor(uniform_noise(tuple(input.shape), lower, upper, input).astype(
            input.dtype.np if hasattr(input.dtype, "np") else "float32"))
    return op("RreluWithNoise", lambda x, s: fnp.where(x > 0, x, x * s), floating(input),
              slope)


__all__ = ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
           "mish", "prelu", "relu6", "rrelu", "selu", "softmin", "softshrink", "softsign",
           "tanhshrink", "threshold"]

