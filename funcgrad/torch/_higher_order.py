"""PyTorch's higher-order functions at the top level: ``torch.vmap`` (``torch.func.vmap``)
and ``torch.cond``, built on the engine's ``vmap`` and ``lax.cond``.

>>> import funcgrad.torch as torch
>>> x = torch.tensor([1.0, -2.0])
>>> torch.cond(x.sum() > 0, lambda a: a * 2, lambda a: a * 0, (x,))
tensor([0., -0.])
"""

from __future__ import annotations

import builtins
from typing import Any

from funcgrad.core import Tracer
from funcgrad.torch._engine_values import tensors as _tensors
from funcgrad.torch._engine_values import values as _values
from funcgrad.torch._tensor import Tensor, apply_op
from funcgrad.torch.func import vmap
from funcgrad.tree_util import tree_flatten, tree_unflatten

__all__ = ["cond", "vmap"]


def _is_tensor(x: Any) -> builtins.bool:
    return isinstance(x, Tensor)


def cond(pred: Any, true_fn: Any, false_fn: Any, operands: Any = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, as ONE operation
    when ``pred`` is a tensor: both branches are traced (their outputs must agree in
    structure, shape and dtype), the chosen one runs, and gradients flow through it, under
    autograd, ``torch.func`` transforms and ``torch.compile`` alike. A Python ``bool``
    predicate just calls its branch, as in PyTorch.

    >>> import funcgrad.torch as torch
    >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
    >>> y = torch.cond(torch.tensor(True), lambda a: a.exp(), lambda a: a, (x,))
    >>> y.sum().backward(); x.grad
    tensor([1.0000, 2.7183])
    """
    if isinstance(pred, (builtins.bool, builtins.int, builtins.float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"{pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    leaves, tree = tree_flatten(operands, is_leaf=_is_tensor)
    if not isinstance(operands, (tuple, list)) or not builtins.all(
            isinstance(t, Tensor) for t in leaves):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    from funcgrad import lax  # noqa: PLC0415
    from funcgrad import numpy as fnp  # noqa: PLC0415

    def branch(fn: Any) -> Any:
        def run(*vals: Any) -> Any:
            return _values(fn(*tree_unflatten(tree, list(_tensors(list(vals))))))
        return run

    def both(p: Any, *vals: Any) -> Any:
        return lax.cond(fnp.reshape(p, ()) != 0, branch(true_fn), branch(false_fn), *vals)

    if isinstance(pred._data, Tracer) or builtins.any(isinstance(t._data, Tracer)
                                                      for t in leaves):
        return _tensors(both(_values(pred), *_values(leaves)))
    return apply_op("CondAutogradOpBackward", both, pred, *leaves)
