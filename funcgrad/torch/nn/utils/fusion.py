"""PyTorch's ``torch.nn.utils.fusion``: a convolution or linear layer and the batch norm after
it (both in eval mode) folded into one layer, with PyTorch's formulas.

>>> import funcgrad.torch as torch
>>> conv, bn = torch.nn.Conv2d(1, 2, 1).eval(), torch.nn.BatchNorm2d(2).eval()
>>> fused = torch.nn.utils.fuse_conv_bn_eval(conv, bn)
>>> x = torch.ones(1, 1, 2, 2)
>>> bool(torch.allclose(fused(x), bn(conv(x))))
True
"""
from __future__ import annotations

import copy
from typing import Any

from funcgrad.torch._creation import ones_like, zeros_like
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, transpose)
    return fused_conv


def _fold(w: Tensor, b: Any, mean: Tensor, var: Any, eps: float, gamma: Tensor | None,
          beta: Tensor | None, scale_shape: list[int]) -> tuple[Parameter, Parameter]:
    """``w`` and ``b`` with the batch norm's affine map folded in: ``w * s`` (``s``
    reshaped to ``scale_shape``) and ``(b - mean) * rsqrt(var + eps) * gamma + beta``, in
    PyTorch's order of operations (its bits), each in the layer's own dtype."""
    w_dtype = w.dtype
    b_dtype = b.dtype if b is not None else w_dtype
    bias: Any = zeros_like(mean) if b is None else b
    gamma = ones_like(mean) if gamma is None else gamma
    beta = zeros_like(mean) if beta is None else beta
    inv_std = (var + eps).rsqrt()
    new_w = (w * (gamma * inv_std).reshape(scale_shape)).to(dtype=w_dtype)
    new_b = ((bias - mean) * inv_std * gamma + beta).to(dtype=b_dtype)
    return Parameter(new_w, w.requires_grad), Parameter(new_b, bias.requires_grad)


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Any, bn_rm: Tensor, bn_rv: Any,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The fused convolution's weight and bias, as Parameters (the output channels are the
    weight's axis 0, or axis 1 for a transposed convolution)."""
    spatial = [1] * (len(conv_w.shape) - 2)
    shape = [1, -1, *spatial] if transpose else [-1, 1, *spatial]
    return _fold(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, shape)


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    if bn.num_features not in (linear.out_features, 1):
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Any, bn_rm: Tensor,
                           bn_rv: Any, bn_eps: float, bn_w: Tensor, bn_b: Tensor
                           ) -> tuple[Parameter, Parameter]:
    """The fused linear layer's weight and bias, as Parameters."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    bias: Any = zeros_like(bn_rm) if linear_b is None else linear_b
    # PyTorch folds gamma into the scale first here (unlike the convolution's order).
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    new_w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    new_b = ((bias - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(new_w, linear_w.requires_grad), Parameter(new_b, bias.requires_grad)
