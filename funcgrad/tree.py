"""``jax.tree``: the short names of :mod:`funcgrad.tree_util`.

>>> import funcgrad as jax
>>> jax.tree.map(lambda x: x + 1, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (3, 4)}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)


def map(f: Callable[..., Any], tree: Any, *rest: Any,  # noqa: A001 - JAX's name
        is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` to the leaves of ``tree`` (and the matching leaves of ``rest``)."""
    return tree_map(f, tree, *rest, is_leaf=is_leaf)


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
            ) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` and its structure."""
    return tree_flatten(tree, is_leaf)


def unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """The tree of structure ``treedef`` holding ``leaves``."""
    return tree_unflatten(treedef, leaves)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order."""
    return tree_leaves(tree, is_leaf)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree``."""
    return tree_structure(tree, is_leaf)


__all__ = ["flatten", "leaves", "map", "structure", "unflatten"]
