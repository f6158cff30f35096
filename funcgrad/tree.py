"""``jax.tree``: the short names of :mod:`funcgrad.tree_util`.

>>> import funcgrad as jax
>>> jax.tree.map(lambda x: x + 1, {"a": 1, "b": (2, 3)})
{'a': 2, 'b': (3, 4)}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from funcgrad import tree_util
from funcgrad.tree_util import KeyPath, PyTreeDef, Unspecified

T = TypeVar("T")


def all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:  # noqa: A001
    """Whether every leaf of ``tree`` is truthy.

    >>> all([1, {"a": True}]), all([1, (0,)])
    (True, False)
    """
    return tree_util.tree_all(tree, is_leaf=is_leaf)


def map(f: Callable[..., Any], tree: Any, *rest: Any,  # noqa: A001 - JAX's name
        is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` to the leaves of ``tree`` (and the matching subtrees of ``rest``).

    >>> map(lambda x, y: x * y, [1, 2], [3, 4])
    [3, 8]
    """
    return tree_util.tree_map(f, tree, *rest, is_leaf=is_leaf)


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
            ) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` and its structure.

    >>> flatten({"b": 1, "a": (2, None)})
    ([2, 1], PyTreeDef({'a': (*, None), 'b': *}))
    """
    return tree_util.tree_flatten(tree, is_leaf)


def unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of structure ``treedef`` holding ``leaves``.

    >>> unflatten(structure([0, (0,)]), [1, 2])
    [1, (2,)]
    """
    return tree_util.tree_unflatten(treedef, leaves)


def leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order.

    >>> leaves([1, {"b": 3, "a": 2}])
    [1, 2, 3]
    """
    return tree_util.tree_leaves(tree, is_leaf)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree``.

    >>> structure((1, [2]))
    PyTreeDef((*, [*]))
    """
    return tree_util.tree_structure(tree, is_leaf)


def reduce(function: Callable[[T, Any], T], tree: Any,
           initializer: T | Unspecified = Unspecified(),  # noqa: B008 - JAX's default
           is_leaf: Callable[[Any], bool] | None = None) -> T:
    """``functools.reduce`` over the leaves of ``tree``.

    >>> reduce(lambda a, b: a + b, [1, (2, 3)], 10)
    16
    """
    return tree_util.tree_reduce(function, tree, initializer, is_leaf=is_leaf)


def reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                       identity: T | Unspecified = Unspecified(),  # noqa: B008
                       is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves with an associative ``operation``, as a balanced tree.

    >>> reduce_associative(lambda a, b: a * b, [2, (3, 4)])
    24
    """
    return tree_util.tree_reduce_associative(operation, tree, identity=identity,
                                             is_leaf=is_leaf)


def transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
              pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` inside out.

    >>> transpose(structure([0, 0]), structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    return tree_util.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                      is_leaf_takes_path: bool = False
                      ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``(key path, leaf)`` pairs of ``tree`` and its structure.

    >>> flatten_with_path({"a": 1})
    ([((DictKey(key='a'),), 1)], PyTreeDef({'a': *}))
    """
    return tree_util.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)


def leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                     is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> leaves_with_path((1,))
    [((SequenceKey(idx=0),), 1)]
    """
    return tree_util.tree_leaves_with_path(tree, is_leaf, is_leaf_takes_path)


def map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                  is_leaf: Callable[..., bool] | None = None,
                  is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`map`, with each leaf's key path as ``f``'s first argument.

    >>> from funcgrad.tree_util import keystr
    >>> map_with_path(lambda p, x: keystr(p), [1, {"k": 2}])
    ['[0]', {'k': "[1]['k']"}]
    """
    return tree_util.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf,
                                        is_leaf_takes_path=is_leaf_takes_path)


def broadcast(prefix_tree: Any, full_tree: Any,
              is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Repeat each leaf of ``prefix_tree`` over the matching subtree of ``full_tree``.

    >>> broadcast({"a": 1, "b": 2}, {"a": (0, 0), "b": [0]})
    {'a': (1, 1), 'b': [2]}
    """
    return tree_util.tree_broadcast(prefix_tree, full_tree, is_leaf=is_leaf)


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field`` marked static for :func:`~funcgrad.tree_util.register_dataclass`.

    >>> import dataclasses
    >>> from funcgrad.tree_util import register_dataclass
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: int
    ...     op: str = static(default="add")
    >>> flatten(Op(1))
    ([1], PyTreeDef(CustomNode(Op[('add',)], [*])))
    """
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
