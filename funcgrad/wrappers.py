"""Array wrappers (the Tensor facade's ``Tensor``) seen through by staging transformations.

A wrapper class registers how to take its array out and how to put an array back;
``jit`` then stages the arrays and rewraps inputs inside, and outputs after the call.

>>> import numpy as np
>>> class Box:
...     def __init__(self, a): self.a = a
>>> register_array_wrapper(Box, lambda b: b.a, Box)
>>> arrays, kinds = unwrap_leaves([Box(np.ones(2)), 3.0])
>>> [type(x).__name__ for x in rewrap(arrays, kinds)]
['Box', 'float']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

_wrappers: dict[type, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}


def register_array_wrapper(cls: type, unwrap: Callable[[Any], Any],
                           wrap: Callable[[Any], Any]) -> None:
    """Teach transformations that ``cls`` holds one array: ``unwrap(obj)`` / ``wrap(array)``."""
    _wrappers[cls] = (unwrap, wrap)


def is_wrapper(x: Any) -> bool:
    return type(x) in _wrappers


def unwrap_leaves(leaves: Sequence[Any]) -> tuple[list[Any], tuple[type | None, ...]]:
    """The arrays inside the wrappers among ``leaves``, and which leaves were wrappers."""
    kinds = tuple(type(x) if type(x) in _wrappers else None for x in leaves)
    return [(_wrappers[k][0](x) if k is not None else x) for x, k in zip(leaves, kinds)], kinds


def rewrap(values: Sequence[Any], kinds: Sequence[type | None]) -> list[Any]:
    return [(_wrappers[k][1](v) if k is not None else v) for v, k in zip(values, kinds)]
