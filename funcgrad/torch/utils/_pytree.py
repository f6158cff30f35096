"""``torch.utils._pytree``: PyTorch's pytrees (nested lists, tuples, dicts, named tuples,
``OrderedDict``, ``defaultdict``, ``deque`` and registered classes; ``None`` is a leaf and
dicts keep their insertion order, unlike JAX's).

>>> tree_flatten({"a": [1, (2, None)], "b": 3})[0]
[1, 2, None, 3]
>>> tree_map(lambda x: x * 10, {"a": [1, 2]})
{'a': [10, 20]}
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict, defaultdict, deque
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = ["LeafSpec", "PyTree", "SUPPORTED_NODES", "TreeSpec", "keystr",
           "register_pytree_node", "tree_all", "tree_all_only", "tree_any", "tree_any_only",
           "tree_flatten", "tree_flatten_with_path", "tree_is_leaf", "tree_leaves",
           "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_structure",
           "tree_unflatten", "treespec_leaf"]

PyTree = Any


class NodeDef(NamedTuple):
    """How a node type comes apart: ``flatten_fn(node) -> (children, context)`` and
    ``unflatten_fn(children, context) -> node``."""

    type: type
    flatten_fn: Callable[[Any], tuple[list[Any], Any]]
    unflatten_fn: Callable[[Iterable[Any], Any], Any]
    flatten_with_keys_fn: Callable[[Any], tuple[list[tuple[Any, Any]], Any]] | None = None


SUPPORTED_NODES: dict[type, NodeDef] = {}


def register_pytree_node(cls: type, flatten_fn: Callable[[Any], tuple[list[Any], Any]],
                         unflatten_fn: Callable[[Iterable[Any], Any], Any], *,
                         serialized_type_name: str | None = None,
                         to_dumpable_context: Any = None, from_dumpable_context: Any = None,
                         flatten_with_keys_fn: Any = None) -> None:
    """Make ``cls`` a node type.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ([p.a, p.b], None),
    ...                      lambda xs, _: Pair(*xs))
    >>> tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
    """
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_type(node: Any) -> Any:
    return "namedtuple" if _is_namedtuple(node) else type(node)


def _namedtuple_def() -> NodeDef:
    return NodeDef(tuple, lambda t: (list(t), type(t)), lambda xs, cls: cls(*xs))


_NAMEDTUPLE = _namedtuple_def()

register_pytree_node(tuple, lambda t: (list(t), None), lambda xs, _: tuple(xs))
register_pytree_node(list, lambda t: (list(t), None), lambda xs, _: list(xs))
register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())),
                     lambda xs, keys: dict(zip(keys, xs)))
register_pytree_node(OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                     lambda xs, keys: OrderedDict(zip(keys, xs)))
register_pytree_node(defaultdict,
                     lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                     lambda xs, c: defaultdict(c[0], zip(c[1], xs)))
register_pytree_node(deque, lambda d: (list(d), d.maxlen),
                     lambda xs, maxlen: deque(xs, maxlen=maxlen))


def _def_of(node: Any) -> NodeDef | None:
    if _is_namedtuple(node):
        return _NAMEDTUPLE
    return SUPPORTED_NODES.get(type(node))


def tree_is_leaf(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    """Whether ``tree`` is a leaf (not a registered node; ``is_leaf`` may say so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _def_of(tree) is None


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class TreeSpec:
    """The structure of a pytree: its root's type and context, and its children's specs."""

    type: Any
    context: Any
    children_specs: list[TreeSpec]

    @property
    def num_children(self) -> int:
        return len(self.children_specs)

    @property
    def num_leaves(self) -> int:
        return 1 if self.is_leaf() else sum(c.num_leaves for c in self.children_specs)

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self) -> bool:
        return self.type is None

    def children(self) -> list[TreeSpec]:
        return list(self.children_specs)

    def child(self, index: int) -> TreeSpec:
        return self.children_specs[index]

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        """The pytree of this structure holding ``leaves``."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it: Any) -> Any:
        if self.is_leaf():
            return next(it)
        kids = [c._build(it) for c in self.children_specs]
        node = _NAMEDTUPLE if self.type == "namedtuple" else SUPPORTED_NODES[self.type]
        return node.unflatten_fn(kids, self.context)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self) -> int:
        return hash((str(self.type), self.num_leaves))

    def __repr__(self, indent: int = 0) -> str:
        if self.is_leaf():
            return "*"
        name = self.type if isinstance(self.type, str) else self.type.__name__
        inner = ""
        if self.children_specs:
            indent += 2
            inner = self.children_specs[0].__repr__(indent)
            inner += "," if len(self.children_specs) > 1 else ""
            inner += ",".join("\n" + " " * indent + c.__repr__(indent)
                              for c in self.children_specs[1:])
        return f"TreeSpec({name}, {self.context}, [{inner}])"


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed ``*``)."""

    def __init__(self) -> None:
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def treespec_leaf() -> LeafSpec:
    return _LEAF


def tree_flatten(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                 ) -> tuple[list[Any], TreeSpec]:
    """The leaves of ``tree`` (depth first, in the containers' order) and its structure."""
    leaves: list[Any] = []

    def walk(node: Any) -> TreeSpec:
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        kind = _def_of(node)
        assert kind is not None
        kids, context = kind.flatten_fn(node)
        return TreeSpec(_node_type(node), context, [walk(k) for k in kids])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be "
                        f"instance of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                   ) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``func`` on every leaf (and the matching leaves of ``rests``), same structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(spec, r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def _flatten_up_to(spec: TreeSpec, tree: PyTree) -> list[Any]:
    out: list[Any] = []

    def walk(s: TreeSpec, node: Any) -> None:
        if s.is_leaf():
            out.append(node)
            return
        if _node_type(node) != s.type:
            raise ValueError(f"Node type mismatch; expected {s.type}, but got "
                             f"{_node_type(node)}.")
        kind = _def_of(node)
        assert kind is not None
        kids, context = kind.flatten_fn(node)
        if len(kids) != s.num_children or (isinstance(node, dict) and context != s.context):
            raise ValueError(f"Node arity mismatch; expected {s.num_children}, but got "
                             f"{len(kids)}." if len(kids) != s.num_children else
                             f"Node keys mismatch; expected {s.context}, but got {context}.")
        for c, k in zip(s.children_specs, kids):
            walk(c, k)

    walk(spec, tree)
    return out


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``func`` on every leaf for its effect; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(spec, r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _types(type_or_types: Any) -> Any:
    """A type, or a tuple of types (from any iterable of them), for ``isinstance``."""
    return type_or_types if isinstance(type_or_types, (type, tuple)) else tuple(type_or_types)


def _only(types: Any, func: Callable[..., Any]) -> Callable[..., Any]:
    check = _types(types)
    return lambda x: func(x) if isinstance(x, check) else x


def tree_map_only(type_or_types: Any, func: Callable[..., Any], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    """``func`` on the leaves of the given type(s); the others stay."""
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types: Any, func: Callable[..., Any], tree: PyTree,
                   is_leaf: Callable[[PyTree], bool] | None = None) -> PyTree:
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred: Callable[[Any], bool], tree: PyTree,
             is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all_only(type_or_types: Any, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    types = _types(type_or_types)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


def tree_any_only(type_or_types: Any, pred: Callable[[Any], bool], tree: PyTree,
                  is_leaf: Callable[[PyTree], bool] | None = None) -> bool:
    types = _types(type_or_types)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def _keys(node: Any, kids: list[Any], context: Any) -> list[Any]:
    if _is_namedtuple(node):
        return [GetAttrKey(f) for f in type(node)._fields]
    if isinstance(node, dict):
        return [MappingKey(k) for k in (context[1] if isinstance(node, defaultdict)
                                        else context)]
    return [SequenceKey(i) for i in range(len(kids))]


def tree_flatten_with_path(tree: PyTree, is_leaf: Callable[[PyTree], bool] | None = None
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], TreeSpec]:
    """``((key path, leaf) ...), spec``: each leaf with the keys that lead to it."""
    out: list[tuple[tuple[Any, ...], Any]] = []

    def walk(path: tuple[Any, ...], node: Any) -> None:
        if tree_is_leaf(node, is_leaf):
            out.append((path, node))
            return
        kind = _def_of(node)
        assert kind is not None
        if kind.flatten_with_keys_fn is not None:
            pairs, _ = kind.flatten_with_keys_fn(node)
            for k, child in pairs:
                walk((*path, k), child)
            return
        kids, context = kind.flatten_fn(node)
        for k, child in zip(_keys(node, kids, context), kids):
            walk((*path, k), child)

    walk((), tree)
    return out, tree_structure(tree, is_leaf)


def keystr(kp: tuple[Any, ...]) -> str:
    """A key path as a string: ``"['a'][0]"``."""
    return "".join(str(k) for k in kp)
