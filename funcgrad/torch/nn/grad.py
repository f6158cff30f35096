"""``torch.nn.grad``: the gradients of a convolution with respect to its input and to its
weight, given the gradient of its output (what a hand-written backward pass calls).

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.nn.grad import conv1d_input
>>> conv1d_input((1, 1, 3), torch.ones(1, 1, 2), torch.ones(1, 1, 2))
tensor([[[1., 2., 1.]]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _conv(n: int) -> Callable[..., Any]:
    from funcgrad.torch.nn import functional as F  # noqa: PLC0415

    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]


def _vjp(n: int, input: Any, weight: Any, grad_output: Any, wrt: int, stride: Any,
         padding: Any, dilation: Any, groups: int) -> Any:
    """The gradient of ``conv{n}d(input, weight)`` with respect to operand ``wrt`` (0:
    input, 1: weight), as the vjp of the convolution itself (it is linear in each)."""
    from funcgrad.torch._grad_mode import enable_grad  # noqa: PLC0415
    from funcgrad.torch._tensor import Tensor  # noqa: PLC0415
    from funcgrad.torch.autograd import grad  # noqa: PLC0415

    operands = [input, weight]
    free = operands[wrt].detach().requires_grad_(True)
    operands[wrt] = free
    create = any(isinstance(t, Tensor) and t.requires_grad
                 for t in (input, weight, grad_output))
    with enable_grad():
        out = _conv(n)(operands[0], operands[1], None, stride, padding, dilation, groups)
        (g,) = grad(out, free, grad_output, create_graph=create)
    return g


def _zeros(size: Sequence[int], like: Any) -> Any:
    from funcgrad.torch._creation import zeros  # noqa: PLC0415

    return zeros(tuple(size), dtype=like.dtype, device=like.device)


def _shape(n: int, side: int) -> tuple[int, ...]:
    return (1, 1) + (side,) * n


def _doc(n: int, wrt: str, call: str, shape: tuple[int, ...]) -> str:
    """A docstring with an example that runs (the six functions are made by two builders)."""
    return (f"The gradient of ``conv{n}d`` with respect to its {wrt}, of shape "
            f"``{wrt}_size``.\n\n    >>> import funcgrad.torch as torch\n    >>> from "
            f"funcgrad.torch.nn.grad import conv{n}d_{wrt}\n    >>> {call}\n    "
            f"torch.Size({list(shape)})\n    ")


def _input_fn(n: int) -> Callable[..., Any]:
    def conv_input(input_size: Sequence[int], weight: Any, grad_output: Any, stride: Any = 1,
                   padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
        return _vjp(n, _zeros(input_size, grad_output), weight, grad_output, 0, stride,
                    padding, dilation, groups)

    conv_input.__name__ = conv_input.__qualname__ = f"conv{n}d_input"
    conv_input.__doc__ = _doc(n, "input", f"conv{n}d_input({_shape(n, 3)}, torch.ones"
                              f"{_shape(n, 2)}, torch.ones{_shape(n, 2)}).shape",
                              _shape(n, 3))
    return conv_input


def _weight_fn(n: int) -> Callable[..., Any]:
    def conv_weight(input: Any, weight_size: Sequence[int], grad_output: Any, stride: Any = 1,
                    padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Any:
        return _vjp(n, input, _zeros(weight_size, grad_output), grad_output, 1, stride,
                    padding, dilation, groups)

    conv_weight.__name__ = conv_weight.__qualname__ = f"conv{n}d_weight"
    conv_weight.__doc__ = _doc(n, "weight", f"conv{n}d_weight(torch.ones{_shape(n, 3)}, "
                               f"{_shape(n, 2)}, torch.ones{_shape(n, 2)}).shape",
                               _shape(n, 2))
    return conv_weight


conv1d_input, conv2d_input, conv3d_input = (_input_fn(n) for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_fn(n) for n in (1, 2, 3))
