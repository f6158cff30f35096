"""Tensors as the engine's values and back, through nested containers: what torch.func's
transforms and ``autograd.Function`` under them hand to the engine's transforms.

>>> import funcgrad.torch as torch
>>> type(values({"a": torch.ones(2)})["a"]).__name__
'ArrayImpl'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.array import Array
from funcgrad.core import Tracer
from funcgrad.torch._graph import buffer_of, value_of
from funcgrad.torch._tensor import Tensor
from funcgrad.tree_util import tree_flatten, tree_unflatten


def map_leaves(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``fn`` on every leaf of ``tree``, Tensors being leaves."""
    leaves, treedef = tree_flatten(tree, is_leaf=lambda x: isinstance(x, Tensor))
    return tree_unflatten(treedef, [fn(x) for x in leaves])


def values(tree: Any) -> Any:
    """Tensors (and NumPy arrays) as engine values: their data, no copy."""
    def leaf(x: Any) -> Any:
        if isinstance(x, Tensor):
            return value_of(x._data) if not isinstance(x._data, Tracer) else x._data
        if isinstance(x, np.ndarray):
            return value_of(x)
        return x

    return map_leaves(leaf, tree)


def tensors(tree: Any) -> Any:
    """Engine values (Arrays, tracers) as Tensors."""
    def leaf(x: Any) -> Any:
        return Tensor._from_data(buffer_of(x)) if isinstance(x, Array) else x

    return map_leaves(leaf, tree)
