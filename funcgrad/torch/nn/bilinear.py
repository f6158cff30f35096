"""The bilinear layer, as PyTorch's ``F.bilinear`` and ``Bilinear``:
``y[k] = x1 @ weight[k] @ x2 + bias[k]``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn.functional as F
>>> F.bilinear(torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0]]), torch.ones(1, 2, 1))
tensor([[9.]])
"""

from __future__ import annotations

import math
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.torch._autocast import autocast_op
from funcgrad.torch._creation import empty
from funcgrad.torch.nn import init
from funcgrad.torch.nn._apply import op, shape
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.parameter import Parameter

__all__ = ["Bilinear", "bilinear"]


@autocast_op("bilinear")
def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    """``x1 @ weight[k] @ x2 + bias[k]`` for each output ``k``, over any leading axes."""
    s1, s2, sw = shape(input1), shape(input2), shape(weight)
    if s1[:-1] != s2[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {s1[0]} and "
                           f"{s2[0]}")
    if len(sw) != 3 or s1[-1] != sw[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{s1[-1]} but expected {sw[1] if len(sw) > 1 else None}")
    if s2[-1] != sw[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{s2[-1]} but expected {sw[2]}")
    if bias is not None and shape(bias) != (sw[0],):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{shape(bias)[0] if shape(bias) else None} but expected {sw[0]}")

    def impl(x1: Any, x2: Any, w: Any, *b: Any) -> Any:
        y = fnp.einsum("...i,kij,...j->...k", x1, w, x2)
        return y + b[0] if b else y

    # PyTorch flattens the leading axes, reshapes back (a view), then adds the bias.
    if bias is None:
        return op("View", impl, input1, input2, weight)
    return op("Add", impl, input1, input2, weight, bias)


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``A`` of shape (out, in1, in2); both drawn from
    U(-1/sqrt(in1), 1/sqrt(in1)), as PyTorch.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Bilinear(2, 3, 4)
    Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype=dtype,
                                      device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Any, input2: Any) -> Any:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
