"""``torch.autograd.Variable``: the legacy name of a Tensor.

``Variable(data, requires_grad=False)`` gives a new leaf Tensor sharing ``data``'s memory
(``data.detach()``, then ``requires_grad``), and every Tensor is an instance of
``Variable``, as in PyTorch, while ``Variable`` is not a Tensor class.

>>> import funcgrad.torch as torch
>>> from funcgrad.torch.autograd import Variable
>>> v = Variable(torch.ones(2), requires_grad=True)
>>> v, isinstance(torch.zeros(1), Variable)
(tensor([1., 1.], requires_grad=True), True)
"""

from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch._graph import GradFn, queue_callback
from funcgrad.torch._tensor import Tensor


class VariableMeta(type):
    """Makes ``isinstance(t, Variable)`` true for every Tensor."""

    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class _ExecutionEngine:
    """``Variable._execution_engine``: what PyTorch's autograd engine lets Python code do."""

    @staticmethod
    def queue_callback(callback: Any) -> None:
        """Run ``callback()`` once the running backward pass is over."""
        queue_callback(callback)


class Variable(metaclass=VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False, _grad_fn=None)``: a
    Tensor (see the module docstring); ``volatile`` only warns, as in PyTorch."""

    _execution_engine = _ExecutionEngine()

    def __new__(cls, data: Any = None, requires_grad: bool = False,  # type: ignore[misc]
                volatile: bool = False, _grad_fn: Any = None) -> Tensor:
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if _grad_fn is not None and not isinstance(_grad_fn, GradFn):
            raise TypeError("_grad_fn has to be a Function object or None, but got "
                            f"{type(_grad_fn).__name__}")
        if data is None:
            from funcgrad.torch._creation import empty  # noqa: PLC0415

            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if _grad_fn is not None:
            out.grad_fn, out._out_index, out._requires_grad = _grad_fn, 0, True
        elif requires_grad:
            out._set_requires_grad(True, "Only Tensors of floating point and complex dtype")
        return out


__all__ = ["Variable", "VariableMeta"]
