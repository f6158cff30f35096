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
from funcgrad.torch._dtypes import cpp_name
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import floating, in_float32, in_float32_at_result, op, rrelu_noise
from funcgrad.torch.nn._kernel_dtypes import (
    check_kernel_dtype,
    is_float_tensor,
    no_kernel,
    refuse_bool_subtraction,
)
from funcgrad.transforms.custom import custom_jvp

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
    # The gradient is 1 strictly inside (lo, hi) and 0 at and beyond the bounds, as
    # PyTorch's; NaN passes through (with its gradient), as PyTorch's clamp.
    return fnp.where(x <= lo, _const(x, lo), fnp.where(x >= hi, _const(x, hi), x))


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Any:
    """``x`` clipped to ``[min_val, max_val]``."""
    integral = _hardtanh_integral(input, min_val, max_val)
    if inplace:
        return _written("hardtanh_", input, min_val, max_val)
    if integral is not None:
        return integral
    return op("Hardtanh", lambda x: _hardtanh(x, min_val, max_val), floating(input))


def _hardtanh_integral(input: Any, min_val: float, max_val: float) -> Any:  # noqa: A002
    """PyTorch's hardtanh of an integer Tensor: its limits truncated to integers, the
    clamp in its dtype (None for other inputs); a bool input, or a uint8 one with a
    negative limit, is refused."""
    if is_float_tensor(input):
        return None
    if input.dtype.name == "bool":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    lo, hi = int(min_val), int(max_val)
    if input.dtype.name == "uint8" and (lo < 0 or hi < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    info = np.iinfo(input.dtype.np)
    # (Limits past the dtype's range clamp nothing more than its bounds do.)
    lo, hi = (min(max(v, int(info.min)), int(info.max)) for v in (lo, hi))
    return op("Hardtanh", lambda x: fnp.minimum(fnp.maximum(x, lo), hi), input)


def relu6(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``min(max(x, 0), 6)``."""
    integral = _hardtanh_integral(input, 0.0, 6.0)
    if inplace:
        return _written("hardtanh_", input, 0.0, 6.0)
    if integral is not None:
        return integral
    return op("Hardtanh", lambda x: _hardtanh(x, 0.0, 6.0), floating(input))


def mish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    check_kernel_dtype("mish_cpu", input)
    impl = in_float32(lambda x: x * fnp.tanh(jnn.softplus(x)))
    return _written_as("Mish", impl, input) if inplace else op("Mish", impl, floating(input))


def hardswish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``x * relu6(x + 3) / 6``."""
    check_kernel_dtype("hardswish_cpu", input)
    impl = in_float32(lambda x: x * _hardtanh(x + 3.0, 0.0, 6.0) / 6.0)
    return _written_as("Hardswish", impl, input) if inplace else \
        op("Hardswish", impl, floating(input))


# PyTorch's hardsigmoid backward multiplies by the float32 constant 1/6, in every dtype.
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))


@custom_jvp
def _hardsigmoid(x: Any) -> Any:
    return _hardtanh(x + 3.0, 0.0, 6.0) / 6.0


def _hardsigmoid_jvp(primals: Any, tangents: Any) -> Any:
    # PyTorch's derivative: float32(1/6) strictly inside (-3, 3), else 0 (NaN included).
    (x,), (t,) = primals, tangents
    slope = fnp.where((x > -3.0) & (x < 3.0), _const(x, _ONE_SIXTH_F32), _const(x, 0.0))
    return _hardsigmoid(x), t * slope


_hardsigmoid.defjvp(_hardsigmoid_jvp)


def hardsigmoid(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``relu6(x + 3) / 6``."""
    check_kernel_dtype("hardsigmoid_cpu", input)
    impl = in_float32(_hardsigmoid)
    return _written_as("Hardsigmoid", impl, input) if inplace else \
        op("Hardsigmoid", impl, floating(input))


@custom_jvp
def _expm1_of_input(x: Any) -> Any:
    return fnp.expm1(x)


def _expm1_of_input_jvp(primals: Any, tangents: Any) -> Any:
    # exp(x) from the input: PyTorch's elu backward (is_result=False) reads the input, so
    # its derivative keeps its precision where expm1(x) rounds to -1.
    (x,), (t,) = primals, tangents
    return fnp.expm1(x), t * fnp.exp(x)


_expm1_of_input.defjvp(_expm1_of_input_jvp)


def _elu(x: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0,
         from_input: bool = False) -> Any:
    """``from_input``: the derivative of the out-of-place function (from the input); without
    it, the in-place one's (from the result, as PyTorch's ``elu_``)."""
    # The negative branch holds at 0 too (PyTorch's derivative there is alpha * scale); NaN
    # takes the positive branch, as in PyTorch's kernels.
    expm1 = _expm1_of_input if from_input else fnp.expm1
    neg = alpha * expm1(fnp.where(x <= 0, x, _const(x, 0.0)) * input_scale)
    return scale * fnp.where(x <= 0, neg, x)


def selu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``scale * elu(x, alpha)`` with SELU's constants."""
    check_kernel_dtype("elu_cpu", input)
    if inplace:
        return _written("selu_", input)
    return op("Elu", in_float32(lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE, from_input=True)),
              floating(input))


def _celu(x: Any, alpha: float, from_input: bool = False) -> Any:
    # PyTorch's celu backward scales by 1 / float32(alpha) (its derivative formula converts
    # alpha with toFloat()); the values use the exact 1/alpha. Only the negative branch is
    # corrected (an infinite x would give inf - inf).
    expm1 = _expm1_of_input if from_input else fnp.expm1
    xn = fnp.where(x <= 0, x, _const(x, 0.0))
    exact = alpha * expm1(xn * (1.0 / alpha))
    surrogate = alpha * expm1(xn * (1.0 / float(np.float32(alpha))))
    neg = lax.stop_gradient(exact - surrogate) + surrogate
    return fnp.where(x <= 0, neg, x)


def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    check_kernel_dtype("elu_cpu", input)
    if inplace:
        return _written("celu_", input, alpha)
    return op("Celu", in_float32(lambda x: _celu(x, alpha, from_input=True)), floating(input))


def softsign(input: Any) -> Any:  # noqa: A002
    """``x / (1 + |x|)``."""
    if isinstance(input, Tensor) and input.dtype.name == "bool":
        raise no_kernel("abs_cpu", input)  # PyTorch's x / (1 + x.abs())
    return op("Div", lambda x: x / (1.0 + fnp.abs(x)), floating(input))


def tanhshrink(input: Any) -> Any:  # noqa: A002
    """``x - tanh(x)``."""
    refuse_bool_subtraction(input, None)  # PyTorch's x - x.tanh()
    return op("Sub", lambda x: x - fnp.tanh(x), floating(input))


def softshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    check_kernel_dtype("softshrink_check", input)
    # As PyTorch's kernels: ``x * 0`` inside (-0 for a negative x), NaN passed through
    # (with its gradient) as outside.
    def impl(x: Any) -> Any:
        inside = (x >= -lambd) & (x <= lambd)
        return fnp.where(inside, x * 0, fnp.where(x > lambd, x - lambd, x + lambd))

    return op("Softshrink", impl, floating(input))


def hardshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``x`` where ``|x| > lambd``, else 0."""
    check_kernel_dtype("hardshrink_cpu", input)
    return op("Hardshrink", lambda x: fnp.where((x >= -lambd) & (x <= lambd), _const(x, 0.0),
                                                x), floating(input))


def logsigmoid(input: Any) -> Any:  # noqa: A002
    """``log(sigmoid(x))``, computed stably."""
    check_kernel_dtype("log_sigmoid_cpu", input)
    return op("LogSigmoid", in_float32(lambda x: -jnn.softplus(-x)), floating(input))


def threshold(input: Any, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Any:
    """``x`` where ``x > threshold``, else ``value``."""
    if isinstance(input, Tensor) and input.dtype.name == "bool":
        raise no_kernel("threshold_cpu", input)
    if inplace:
        return _written("threshold_", input, threshold, value)
    # NaN passes through, as PyTorch's ``x <= threshold ? value : x``.
    return op("Threshold", lambda x: fnp.where(x <= threshold, _const(x, value), x), input)


def glu(input: Any, dim: int = -1) -> Any:  # noqa: A002
    """``a * sigmoid(b)`` for the two halves ``a, b`` of ``dim``."""
    check_kernel_dtype("glu_cpu", input)
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
    if isinstance(input, Tensor) and isinstance(weight, Tensor) and input.dtype != weight.dtype:
        raise RuntimeError("prelu: Type promoting not supported. Got "
                           f"{cpp_name(input.dtype)} and {cpp_name(weight.dtype)}")
    check_kernel_dtype("prelu_cpu", input)
    def impl(x: Any, w: Any) -> Any:
        if w.size > 1 and x.ndim >= 2:
            w = fnp.reshape(w, (1, -1) + (1,) * (x.ndim - 2))
        return fnp.where(x > 0, x, w * x)  # at 0 the slope side, as PyTorch

    return op("PreluKernel", impl, floating(input), weight)


def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Any:
    """Leaky relu with slope ``(lower + upper) / 2``, or, when ``training``, a slope drawn
    uniformly from ``[lower, upper]`` for each negative element."""
    check_kernel_dtype("rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu", input)
    if inplace:
        return _written("rrelu_", input, lower, upper, training)
    if not training:
        slope: Any = (lower + upper) / 2
    else:
        slope = Tensor(rrelu_noise(input, lower, upper).astype(
            input.dtype.np if hasattr(input.dtype, "np") else "float32"))
    return op("RreluWithNoise", lambda x, s: fnp.where(x > 0, x, x * s), floating(input),
              slope)


__all__ = ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
           "mish", "prelu", "relu6", "rrelu", "selu", "softmin", "softshrink", "softsign",
           "tanhshrink", "threshold"]

