"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes.

>>> from funcgrad.tree_util import tree_flatten, tree_unflatten, tree_map
>>> leaves, tree = tree_flatten({"a": 1, "b": (2, None)})
>>> leaves
[1, 2]
>>> tree_unflatten(tree, [10, 20])
{'a': 10, 'b': (20, None)}
>>> tree_map(lambda x: x * 2, [1, (2,)])
[2, (4,)]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any, NamedTuple

from funcgrad.errors import TreeStructureError

FlattenFn = Callable[[Any], tuple[Iterable[Any], Hashable]]
UnflattenFn = Callable[[Hashable, Iterable[Any]], Any]


class _NodeType(NamedTuple):
    flatten: FlattenFn
    unflatten: UnflattenFn


_registry: dict[type, _NodeType] = {}


def register_pytree_node(cls: type, flatten: FlattenFn, unflatten: UnflattenFn) -> None:
    """Teach pytrees a container type.

    ``flatten(obj) -> (children, aux)`` and ``unflatten(aux, children) -> obj``;
    ``aux`` must be hashable and compare by value.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1, [2]))
    [1, 2]
    """
    if cls in _registry:
        raise TreeStructureError(f"{cls.__name__} is already registered as a pytree node")
    _registry[cls] = _NodeType(flatten, unflatten)


def _dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], Hashable]:
    keys = sorted(d)
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
def _keyed(keys: Hashable) -> tuple[Any, ...]:
    assert isinstance(keys, tuple)
    return keys


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(_keyed(keys), c)))
register_pytree_node(
    OrderedDict,
    lambda d: (list(d.values()), tuple(d.keys())),
    lambda keys, c: OrderedDict(zip(_keyed(keys), c)),
)
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields") and type(x) is not tuple


class PyTreeDef:
    """The structure of a pytree without its leaves; hashable, comparable."""

    __slots__ = ("node_type", "aux", "children", "num_leaves", "_hash")

    def __init__(self, node_type: type | None, aux: Hashable,
                 children: tuple[PyTreeDef, ...]) -> None:
        self.node_type = node_type
        self.aux = aux
        self.children = children
        self.num_leaves: int = 1 if node_type is None else sum(c.num_leaves for c in children)
        self._hash: int | None = None

    def _key(self) -> tuple[Any, ...]:
        return (self.node_type, self.aux, self.children)

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, PyTreeDef) and self._key() == other._key())

    def __hash__(self) -> int:
        # Treedefs are cache keys on every jitted call: hash once.
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self) -> str:
        return f"PyTreeDef({self._pp()})"

    def _pp(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(c._pp() for c in self.children)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c._pp()}" for k, c in
                                   zip(self.aux, self.children)) + "}"  # type: ignore
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def _node_of(x: Any) -> tuple[type, _NodeType] | None:
    t = type(x)
    node = _registry.get(t)
    if node is not None:
        return t, node
    if _is_namedtuple(x):
        return t, _NodeType(lambda nt: (tuple(nt), None), lambda _, c: t(*c))
    return None


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """Leaves in a fixed order (dicts by sorted key) and the structure."""
    leaves: list[Any] = []

    def rec(x: Any) -> PyTreeDef:
        if is_leaf is not None and is_leaf(x):
            leaves.append(x)
            return _LEAF
        found = _node_of(x)
        if found is None:
            leaves.append(x)
            return _LEAF
        t, node = found
        children, aux = node.flatten(x)
        return PyTreeDef(t, aux, tuple(rec(c) for c in children))

    treedef = rec(tree)
    return leaves, treedef


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of ``treedef``'s structure from ``leaves``."""
    it = iter(leaves)

    def rec(td: PyTreeDef) -> Any:
        if td.node_type is None:
            try:
                return next(it)
            except StopIteration:
                raise TreeStructureError(
                    f"too few leaves for {treedef}: it needs {treedef.num_leaves}"
                ) from None
        found = _registry.get(td.node_type)
        children = [rec(c) for c in td.children]
        if found is None:  # a namedtuple
            return td.node_type(*children)
        return found.unflatten(td.aux, children)

    out = rec(treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise TreeStructureError(f"too many leaves for {treedef}: it needs {treedef.num_leaves}")
    return out


_SENTINEL = object()


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; ``rest`` must have ``tree``'s structure."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise TreeStructureError(
                f"tree_map got trees of different structures: {treedef} and {r_def}"
            )
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


__all__ = [
    "PyTreeDef", "register_pytree_node", "tree_flatten", "tree_leaves", "tree_map",
    "tree_structure", "tree_unflatten", "treedef_is_leaf",
]
