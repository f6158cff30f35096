"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes.

The face of ``jax.tree_util``: the same leaves order (dicts by sorted key), the same
treedef printing, key paths and errors (a ``TreeStructureError``, which is a
``ValueError`` as JAX's are).

>>> from funcgrad.tree_util import tree_flatten, tree_unflatten, tree_map
>>> leaves, tree = tree_flatten({"a": 1, "b": (2, None)})
>>> leaves
[1, 2]
>>> tree
PyTreeDef({'a': *, 'b': (*, None)})
>>> tree_unflatten(tree, [10, 20])
{'a': 10, 'b': (20, None)}
>>> tree_map(lambda x: x * 2, [1, (2,)])
[2, (4,)]

The walks are plain module-level recursions over explicit arguments (no recursive
closures), so flattening or mapping never creates a reference cycle: arrays are freed as
soon as the last reference goes, without waiting for the garbage collector.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import itertools
import operator
import sys
import textwrap
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

from funcgrad.errors import TreeStructureError

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type[Any])
H = TypeVar("H", bound=Hashable)

FlattenFn = Callable[[Any], tuple[Iterable[Any], Hashable]]
UnflattenFn = Callable[[Hashable, Iterable[Any]], Any]
FlattenWithKeysFn = Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]]

KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[Any, ...]
Leaf = Any

# Node kinds (the walks dispatch on these small ints).
_K_LEAF, _K_NONE, _K_TUPLE, _K_LIST, _K_DICT, _K_NAMEDTUPLE, _K_CUSTOM, _K_DATACLASS = range(8)


class _NodeType(NamedTuple):
    flatten: FlattenFn
    unflatten: UnflattenFn
    flatten_with_keys: FlattenWithKeysFn | None = None
    kind: int = _K_CUSTOM


_registry: dict[type, _NodeType] = {}
_namedtuple_nodes: dict[type, _NodeType] = {}
# The registry user code sees: ``_registry`` less the internal nodes (typed PRNG key
# arrays), which are leaves to users, as JAX's are, but nodes over their key data to
# funcgrad's own transformations (which stage arrays only).
_user_registry: dict[type, _NodeType] = {}
_internal_nodes: set[type] = set()
# Modules whose calls are decided by their caller (the public faces of pytrees).
_PASS_THROUGH = frozenset({__name__, "funcgrad.tree"})


def _reg() -> dict[type, _NodeType]:
    """The registry for the caller of the public function that calls this: the full one
    for funcgrad's own modules, the user's one (internal nodes are leaves) otherwise."""
    if not _internal_nodes:
        return _registry
    f: Any = sys._getframe(2)
    while f is not None:
        name = f.f_globals.get("__name__")
        if name not in _PASS_THROUGH:
            if type(name) is str and name.startswith("funcgrad."):
                return _registry
            return _user_registry
        f = f.f_back
    return _user_registry


def register_internal_node(nodetype: type, flatten_func: FlattenFn,
                           unflatten_func: UnflattenFn) -> None:
    """A node type for funcgrad's transformations that is a leaf to user code (JAX's key
    arrays: leaves of ``jax.tree.leaves``, staged by ``jit``/``vmap``/``scan`` as the
    arrays they hold)."""
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)
    _internal_nodes.add(nodetype)


# ------------------------------------------------------------------ key entries


class SequenceKey:
    """The key of a list or tuple element in a key path.

    >>> SequenceKey(1), str(SequenceKey(1))
    (SequenceKey(idx=1), '[1]')
    """

    __slots__ = ("idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx: int) -> None:
        if not isinstance(idx, int):
            raise TypeError(f"SequenceKey's idx must be an int, got {type(idx).__name__}")
        self.idx = idx

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self.idx!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is SequenceKey and self.idx == other.idx

    def __hash__(self) -> int:
        return hash((SequenceKey, self.idx))


class DictKey:
    """The key of a dict entry in a key path.

    >>> DictKey("a"), str(DictKey("a"))
    (DictKey(key='a'), "['a']")
    """

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def __repr__(self) -> str:
        return f"DictKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is DictKey and bool(self.key == other.key)

    def __hash__(self) -> int:
        return hash(self.key)  # as JAX's (set orders in error messages follow it)


class GetAttrKey:
    """The attribute name of a namedtuple field or dataclass field in a key path.

    >>> GetAttrKey("x"), str(GetAttrKey("x"))
    (GetAttrKey(name='x'), '.x')
    """

    __slots__ = ("name",)
    __match_args__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __str__(self) -> str:
        return f".{self.name}"

    def __repr__(self) -> str:
        return f"GetAttrKey(name={self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is GetAttrKey and self.name == other.name

    def __hash__(self) -> int:
        return hash(self.name)


class FlattenedIndexKey:
    """The position of a child of a node registered without keys.

    >>> FlattenedIndexKey(0), str(FlattenedIndexKey(0))
    (FlattenedIndexKey(key=0), '[<flat index 0>]')
    """

    __slots__ = ("key",)
    __match_args__ = ("key",)

    def __init__(self, key: int) -> None:
        self.key = key

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self.key!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is FlattenedIndexKey and self.key == other.key

    def __hash__(self) -> int:
        return hash((FlattenedIndexKey, self.key))


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text.

    >>> path = (DictKey("a"), SequenceKey(0), GetAttrKey("x"))
    >>> keystr(path)
    "['a'][0].x"
    >>> keystr(path, simple=True, separator="/")
    'a/0/x'
    """
    if not simple:
        return separator.join(map(str, keys))
    return separator.join(map(_simple_entrystr, keys))


def _simple_entrystr(key: Any) -> str:
    if type(key) is SequenceKey:
        return str(key.idx)
    if type(key) in (DictKey, FlattenedIndexKey):
        return str(key.key)
    if type(key) is GetAttrKey:
        return str(key.name)
    return str(key)


# ------------------------------------------------------------------ registration


def register_pytree_node(nodetype: type, flatten_func: FlattenFn, unflatten_func: UnflattenFn,
                         flatten_with_keys_func: FlattenWithKeysFn | None = None) -> None:
    """Teach pytrees a container type.

    ``flatten_func(obj) -> (children, aux)`` and ``unflatten_func(aux, children) -> obj``;
    ``aux`` must be hashable and compare by value.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    >>> tree_leaves(Pair(1, [2]))
    [1, 2]
    >>> tree_structure(Pair(1, [2]))
    PyTreeDef(CustomNode(Pair[None], [*, [*]]))
    """
    _register(nodetype, _NodeType(flatten_func, unflatten_func, flatten_with_keys_func))


def _register(nodetype: type, node: _NodeType) -> None:
    if nodetype in _registry:
        raise TreeStructureError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = node
    _user_registry[nodetype] = node


def register_pytree_with_keys(nodetype: type, flatten_with_keys: FlattenWithKeysFn,
                              unflatten_func: UnflattenFn,
                              flatten_func: FlattenFn | None = None) -> None:
    """Like :func:`register_pytree_node`, with ``flatten_with_keys(obj) -> (((key, child),
    ...), aux)`` naming each child in key paths.

    >>> class Named:
    ...     def __init__(self, **kw): self.kw = kw
    >>> register_pytree_with_keys(
    ...     Named, lambda n: (tuple((GetAttrKey(k), v) for k, v in n.kw.items()),
    ...                       tuple(n.kw)),
    ...     lambda keys, c: Named(**dict(zip(keys, c))))
    >>> [keystr(p) for p, _ in tree_leaves_with_path(Named(w=1, b=2))]
    ['.w', '.b']
    """
    if flatten_func is None:
        flatten_func = functools.partial(_flatten_via_keys, flatten_with_keys)
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def _flatten_via_keys(flatten_with_keys: FlattenWithKeysFn, tree: Any
                      ) -> tuple[list[Any], Hashable]:
    key_children, aux = flatten_with_keys(tree)
    return [c for _, c in key_children], aux


def register_pytree_node_class(cls: Typ) -> Typ:
    """Register a class by its ``tree_flatten`` method and ``tree_unflatten`` classmethod.

    >>> @register_pytree_node_class
    ... class Box:
    ...     def __init__(self, x): self.x = x
    ...     def tree_flatten(self): return (self.x,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    >>> tree_map(lambda v: v + 1, Box(1)).x
    2
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                         cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Register a class by its ``tree_flatten_with_keys`` method and ``tree_unflatten``.

    >>> @register_pytree_with_keys_class
    ... class Box:
    ...     def __init__(self, x): self.x = x
    ...     def tree_flatten_with_keys(self): return ((GetAttrKey("x"), self.x),), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children): return cls(*children)
    >>> tree_flatten_with_path(Box(5))[0]
    [((GetAttrKey(name='x'),), 5)]
    """
    flatten_func = (operator.methodcaller("tree_flatten")
                    if hasattr(cls, "tree_flatten") else None)
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten_func)
    return cls


def register_dataclass(nodetype: Typ, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
    """Register a dataclass: its data fields are children, its meta fields static aux data.

    Without ``data_fields``/``meta_fields``, fields whose metadata has ``static=True``
    (``dataclasses.field(metadata={"static": True})`` or ``jax.tree.static()``) are meta.

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Op:
    ...     x: int
    ...     name: str = dataclasses.field(default="add", metadata={"static": True})
    >>> tree_flatten(Op(1))
    ([1], PyTreeDef(CustomNode(Op[('add',)], [*])))
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            "specified when either is specified. Got "
                            f"data_fields={data_fields!r} meta_fields={meta_fields!r}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got nodetype={nodetype!r}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    meta = tuple(meta_fields)
    data = tuple(data_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if {*meta, *data} != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with"
                   " ``init=True`` and only them.")
            if missing := init_fields - {*meta, *data}:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to suppress"
                        " this error.")
            if unexpected := {*meta, *data} - init_fields:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    if overlap := set(data) & set(meta):
        raise ValueError(f"data_fields and meta_fields must not overlap. Overlapping fields:"
                         f" {overlap}.")
    _register(nodetype, _NodeType(
        functools.partial(_dataclass_flatten, data, meta),
        functools.partial(_dataclass_unflatten, nodetype, data, meta),
        functools.partial(_dataclass_flatten_with_keys, data, meta),
        _K_DATACLASS))
    return nodetype


def _dataclass_flatten(data: tuple[str, ...], meta: tuple[str, ...], x: Any
                       ) -> tuple[tuple[Any, ...], Hashable]:
    return tuple(getattr(x, n) for n in data), tuple(getattr(x, n) for n in meta)


def _dataclass_flatten_with_keys(data: tuple[str, ...], meta: tuple[str, ...], x: Any
                                 ) -> tuple[tuple[Any, ...], Hashable]:
    return (tuple((GetAttrKey(n), getattr(x, n)) for n in data),
            tuple(getattr(x, n) for n in meta))


def _dataclass_unflatten(nodetype: type, data: tuple[str, ...], meta: tuple[str, ...],
                         aux: Any, children: Iterable[Any]) -> Any:
    kwargs = dict(zip(meta, aux))
    kwargs.update(zip(data, children))
    return nodetype(**kwargs)


def register_static(cls: type[H]) -> type[H]:
    """Register a hashable class as a pytree with no leaves (its value is the aux data).

    >>> @register_static
    ... class Tag(str):
    ...     pass
    >>> tree_flatten([1, Tag("add")])
    ([1], PyTreeDef([*, CustomNode(Tag[add], [])]))
    """
    register_pytree_with_keys(cls, _static_flatten_with_keys, _static_unflatten,
                              _static_flatten)
    return cls


def _static_flatten(obj: Any) -> tuple[tuple[()], Hashable]:
    return (), obj


def _static_flatten_with_keys(obj: Any) -> tuple[tuple[()], Hashable]:
    return (), obj


def _static_unflatten(obj: Any, children: Iterable[Any]) -> Any:
    return obj


def _dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], Hashable]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _sorted_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(d))
    except Exception:
        raise TreeStructureError(
            "Comparator raised exception while sorting pytree dictionary keys.") from None


def _keyed(keys: Hashable) -> tuple[Any, ...]:
    assert isinstance(keys, tuple)
    return keys


def _seq_flatten(t: Any) -> tuple[Any, Hashable]:
    return t, None


def _none_flatten(n: None) -> tuple[tuple[()], Hashable]:
    return (), None


_registry[tuple] = _NodeType(_seq_flatten, lambda _, c: tuple(c), None, _K_TUPLE)
_registry[list] = _NodeType(_seq_flatten, lambda _, c: list(c), None, _K_LIST)
_registry[dict] = _NodeType(_dict_flatten, lambda keys, c: dict(zip(_keyed(keys), c)),
                            None, _K_DICT)
_registry[type(None)] = _NodeType(_none_flatten, lambda _, c: None, None, _K_NONE)
_user_registry.update(_registry)


def _ordered_dict_flatten_with_keys(d: OrderedDict[Any, Any]
                                    ) -> tuple[tuple[tuple[Any, Any], ...], Hashable]:
    return tuple((DictKey(k), d[k]) for k in d), tuple(d)


def _ordered_dict_flatten(d: OrderedDict[Any, Any]) -> tuple[list[Any], Hashable]:
    return list(d.values()), tuple(d)


def _defaultdict_flatten_with_keys(d: defaultdict[Any, Any]
                                   ) -> tuple[tuple[tuple[Any, Any], ...], Hashable]:
    keys = _sorted_keys(d)
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _defaultdict_flatten(d: defaultdict[Any, Any]) -> tuple[list[Any], Hashable]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _defaultdict_unflatten(aux: Any, children: Iterable[Any]) -> defaultdict[Any, Any]:
    return defaultdict(aux[0], zip(aux[1], children))


register_pytree_node(OrderedDict, _ordered_dict_flatten,
                     lambda keys, c: OrderedDict(zip(_keyed(keys), c)),
                     _ordered_dict_flatten_with_keys)
register_pytree_node(defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
                     _defaultdict_flatten_with_keys)


def _namedtuple_node(t: type) -> _NodeType:
    node = _namedtuple_nodes.get(t)
    if node is None:
        node = _namedtuple_nodes[t] = _NodeType(_seq_flatten, lambda _, c: t(*c), None,
                                                _K_NAMEDTUPLE)
    return node


def _node_for_type(t: type, reg: dict[type, _NodeType] = _registry) -> _NodeType | None:
    node = reg.get(t)
    if node is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        return _namedtuple_node(t)
    return node


def is_tree_node(typ: type) -> bool:
    """Whether ``typ`` is a pytree node type (built in, registered or a namedtuple).

    >>> is_tree_node(dict), is_tree_node(type(None)), is_tree_node(int)
    (True, True, False)
    """
    return _node_for_type(typ, _reg()) is not None


# ------------------------------------------------------------------ PyTreeDef


class _Children:
    """``treedef.children()`` as JAX has it, which also reads as the sequence of children."""

    __slots__ = ("_kids",)

    def __init__(self, kids: tuple[PyTreeDef, ...]) -> None:
        self._kids = kids

    def __call__(self) -> list[PyTreeDef]:
        return list(self._kids)

    def __len__(self) -> int:
        return len(self._kids)

    def __iter__(self) -> Iterator[PyTreeDef]:
        return iter(self._kids)

    def __getitem__(self, i: int) -> PyTreeDef:
        return self._kids[i]

    def __repr__(self) -> str:
        return repr(list(self._kids))


class PyTreeDef:
    """The structure of a pytree without its leaves; hashable, comparable.

    >>> td = tree_structure((1, {"a": [2, 3]}, None))
    >>> td
    PyTreeDef((*, {'a': [*, *]}, None))
    >>> td.num_leaves, td.num_nodes
    (3, 7)
    >>> td.children()
    [PyTreeDef(*), PyTreeDef({'a': [*, *]}), PyTreeDef(None)]
    >>> td.unflatten([4, 5, 6])
    (4, {'a': [5, 6]}, None)
    >>> td.flatten_up_to((1, {"a": [(2,), 3]}, None))
    [1, (2,), 3]
    """

    __slots__ = ("node_type", "aux", "_children", "num_leaves", "num_nodes", "_kind", "_node",
                 "_hash", "__weakref__")

    node_type: type | None
    aux: Hashable
    _children: tuple[PyTreeDef, ...]
    num_leaves: int
    num_nodes: int
    _kind: int
    _node: _NodeType | None
    _hash: int | None

    def __init__(self, node_type: type | None, aux: Hashable,
                 children: Iterable[PyTreeDef]) -> None:
        kids = tuple(children)
        node = None if node_type is None else _node_for_type(node_type)
        if node_type is not None and node is None:
            raise TypeError(f"{node_type} is not a pytree node type")
        self._init(node_type, aux, kids, node)

    def _init(self, node_type: type | None, aux: Hashable, kids: tuple[PyTreeDef, ...],
              node: _NodeType | None) -> None:
        self.node_type = node_type
        self.aux = aux
        self._children = kids
        self._node = node
        self._hash = None
        if node is None:
            self._kind = _K_LEAF
            self.num_leaves = self.num_nodes = 1
            return
        self._kind = node.kind
        nl = 0
        nn = 1
        for c in kids:
            nl += c.num_leaves
            nn += c.num_nodes
        self.num_leaves = nl
        self.num_nodes = nn

    @property
    def children(self) -> _Children:
        """The child treedefs: ``td.children()`` is a list (``len(td.children)`` works too)."""
        return _Children(self._children)

    def node_data(self) -> tuple[type, Any] | None:
        """``(type, data)`` of the root node, ``None`` for a leaf.

        >>> tree_structure({"b": 1, "a": 2}).node_data()
        (<class 'dict'>, ['a', 'b'])
        """
        if self.node_type is None:
            return None
        if self._kind == _K_DICT:
            return dict, list(_keyed(self.aux))
        return self.node_type, self.aux

    @staticmethod
    def from_node_data_and_children(registry: Any, node_data: tuple[type, Any] | None,
                                    children: Iterable[PyTreeDef]) -> PyTreeDef:
        """The treedef of root ``node_data`` over ``children`` (``registry`` is unused).

        >>> PyTreeDef.from_node_data_and_children(None, (list, None), [tree_structure(1)] * 2)
        PyTreeDef([*, *])
        """
        if node_data is None:
            return _LEAF
        t, data = node_data
        if t is dict:
            data = tuple(data)
        return PyTreeDef(t, data, children)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """The tree of this structure holding ``leaves``.

        >>> tree_structure([0, (0,)]).unflatten("ab")
        ['a', ('b',)]
        """
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(itertools.islice(leaves, self.num_leaves + 1))
        n = len(leaves)
        if n != self.num_leaves:
            if n < self.num_leaves:
                raise TreeStructureError(
                    f"Too few leaves for PyTreeDef; expected {self.num_leaves}, got {n}")
            raise TreeStructureError(f"Too many leaves for PyTreeDef; expected {self.num_leaves}.")
        return _unflatten(self, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this structure's leaves (``tree`` may be deeper).

        >>> tree_structure([0, 0]).flatten_up_to([(1, 2), {"a": 3}])
        [(1, 2), {'a': 3}]
        """
        out: list[Any] = []
        _flatten_up_to(self, tree, out)
        out.reverse()
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with each leaf replaced by ``inner``.

        >>> tree_structure([0, 0]).compose(tree_structure((0, 0)))
        PyTreeDef([(*, *), (*, *)])
        """
        if self._kind == _K_LEAF:
            return inner
        td = PyTreeDef.__new__(PyTreeDef)
        td._init(self.node_type, self.aux, tuple(c.compose(inner) for c in self._children),
                 self._node)
        return td

    def _key(self) -> tuple[Any, ...]:
        return (self.node_type, self.aux, self._children)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return False
        if (self.node_type is not other.node_type or self.num_nodes != other.num_nodes
                or self.num_leaves != other.num_leaves):
            return False
        return bool(self.aux == other.aux) and self._children == other._children

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        # Treedefs are cache keys on every jitted call: hash once. Unhashable aux data
        # (JAX allows it) hashes as its type only.
        h = self._hash
        if h is None:
            try:
                aux_hash = hash(self.aux)
            except TypeError:
                aux_hash = hash(type(self.aux))
            h = self._hash = hash((self.node_type, aux_hash, self._children))
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({self._pp()})"

    def _pp(self) -> str:
        kind = self._kind
        if kind == _K_LEAF:
            return "*"
        if kind == _K_NONE:
            return "None"
        inner = ", ".join(c._pp() for c in self._children)
        if kind == _K_TUPLE:
            return f"({inner}{',' if len(self._children) == 1 else ''})"
        if kind == _K_LIST:
            return f"[{inner}]"
        if kind == _K_DICT:
            return "{" + ", ".join(f"{k!r}: {c._pp()}" for k, c in
                                   zip(_keyed(self.aux), self._children)) + "}"
        assert self.node_type is not None
        if kind == _K_NAMEDTUPLE:
            return f"CustomNode(namedtuple[{self.node_type.__name__}], [{inner}])"
        return f"CustomNode({self.node_type.__name__}[{self.aux}], [{inner}])"

    def __reduce__(self) -> tuple[Any, ...]:
        return (PyTreeDef, (self.node_type, self.aux, self._children))


_LEAF = PyTreeDef(None, None, ())
_NONE = PyTreeDef(type(None), None, ())


def _new_treedef(t: type, aux: Hashable, kids: tuple[PyTreeDef, ...],
                 node: _NodeType) -> PyTreeDef:
    td = PyTreeDef.__new__(PyTreeDef)
    td._init(t, aux, kids, node)
    return td


# ------------------------------------------------------------------ the walks
# Module-level recursions with explicit arguments: no closure refers to itself, so no
# reference cycle keeps leaves (arrays) alive after a call.


def _flatten(x: Any, leaves: list[Any], reg: dict[type, _NodeType]) -> PyTreeDef:
    t = type(x)
    node = reg.get(t)
    if node is None:
        if isinstance(x, tuple) and hasattr(t, "_fields"):
            node = _namedtuple_node(t)
        else:
            leaves.append(x)
            return _LEAF
    kind = node.kind
    aux: Hashable
    if kind <= _K_LIST:  # None, tuple, list
        if kind == _K_NONE:
            return _NONE
        children: Iterable[Any] = x
        aux = None
    elif kind == _K_DICT:
        keys = _sorted_keys(x)
        aux = keys
        children = [x[k] for k in keys]
    elif kind == _K_NAMEDTUPLE:
        children = x
        aux = None
    else:
        children, aux = node.flatten(x)
    return _new_treedef(t, aux, tuple([_flatten(c, leaves, reg) for c in children]), node)


def _flatten_is_leaf(x: Any, leaves: list[Any], is_leaf: Callable[[Any], bool],
                     reg: dict[type, _NodeType]) -> PyTreeDef:
    if is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    node = _node_for_type(t, reg)
    if node is None:
        leaves.append(x)
        return _LEAF
    kind = node.kind
    if kind == _K_NONE:
        return _NONE
    if kind == _K_DICT:
        keys = _sorted_keys(x)
        aux: Hashable = keys
        children: Iterable[Any] = [x[k] for k in keys]
    else:
        children, aux = node.flatten(x)
    return _new_treedef(t, aux, tuple([_flatten_is_leaf(c, leaves, is_leaf, reg)
                                       for c in children]), node)


def _unflatten(td: PyTreeDef, it: Iterator[Any]) -> Any:
    kind = td._kind
    if kind == _K_LEAF:
        return next(it)
    kids = [next(it) if c._kind == _K_LEAF else _unflatten(c, it) for c in td._children]
    if kind == _K_TUPLE:
        return tuple(kids)
    if kind == _K_LIST:
        return kids
    if kind == _K_DICT:
        return dict(zip(td.aux, kids))  # type: ignore[call-overload]
    if kind == _K_NONE:
        return None
    node = td._node
    assert node is not None
    if kind == _K_NAMEDTUPLE:
        return node.unflatten(td.aux, kids)
    return node.unflatten(td.aux, tuple(kids))


_NONE_PREFIX_NOTE = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be a tree-prefix "
    "of non-None values. To obtain the previous behavior, you can usually write:\n"
    "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
    "is_leaf=lambda x: x is None)")


def _flatten_up_to(td: PyTreeDef, x: Any, out: list[Any]) -> None:
    kind = td._kind
    if kind == _K_LEAF:
        out.append(x)
        return
    kids = td._children
    n = len(kids)
    if kind == _K_NONE:
        if x is not None:
            raise TreeStructureError(f"Expected None, got {x!r}.{_NONE_PREFIX_NOTE}")
        return
    children: Sequence[Any]
    if kind == _K_TUPLE:
        if type(x) is not tuple:
            raise TreeStructureError(f"Expected tuple, got {x!r}.")
        if len(x) != n:
            raise TreeStructureError(f"Tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
        children = x
    elif kind == _K_LIST:
        if type(x) is not list:
            raise TreeStructureError(f"Expected list, got {x!r}.")
        if len(x) != n:
            raise TreeStructureError(f"List arity mismatch: {len(x)} != {n}; list: {x!r}.")
        children = x
    elif kind == _K_DICT:
        if type(x) is not dict:
            raise TreeStructureError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if keys != td.aux:
            raise TreeStructureError(f"Dict key mismatch; expected keys: {list(_keyed(td.aux))!r};"
                                     f" present keys: {list(keys)!r}.")
        children = [x[k] for k in keys]
    elif kind == _K_NAMEDTUPLE:
        if not (isinstance(x, tuple) and hasattr(type(x), "_fields")):
            raise TreeStructureError(f"Expected named tuple, got {x!r}.")
        if len(x) != n:
            raise TreeStructureError(
                f"Named tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
        if type(x) is not td.node_type:
            raise TreeStructureError(f"Named tuple type mismatch: expected type: "
                                     f"{td.node_type!r}, tuple: {x!r}.")
        children = x
    else:
        what = "dataclass node" if kind == _K_DATACLASS else "node"
        if type(x) is not td.node_type:
            raise TreeStructureError(f"Custom {what} type mismatch: expected type: "
                                     f"{td.node_type!r}, value: {x!r}.")
        assert td._node is not None
        kids_iter, aux = td._node.flatten(x)
        children = list(kids_iter)
        if aux != td.aux:
            raise TreeStructureError(f"Mismatch custom {what} data: {td.aux!r} != {aux!r}; "
                                     f"value: {x!r}.")
        if len(children) != n:
            raise TreeStructureError(
                f"Custom type arity mismatch: {len(children)} != {n}; value: {x!r}.")
    # Children last to first (``out`` is reversed by the caller), as JAX's walk goes: when
    # several subtrees mismatch, the error names the same one as JAX's.
    for i in range(n - 1, -1, -1):
        c = kids[i]
        if c._kind == _K_LEAF:
            out.append(children[i])
        else:
            _flatten_up_to(c, children[i], out)


def _default_keys(kind: int, node_type: type, children: Sequence[Any], aux: Any) -> list[Any]:
    if kind in (_K_TUPLE, _K_LIST):
        return [SequenceKey(i) for i in range(len(children))]
    if kind == _K_DICT:
        return [DictKey(k) for k in aux]
    if kind == _K_NAMEDTUPLE:
        return [GetAttrKey(f) for f in node_type._fields]  # type: ignore[attr-defined]
    return [FlattenedIndexKey(i) for i in range(len(children))]


def _flatten_one_with_keys(x: Any, node: _NodeType
                           ) -> tuple[list[Any], list[Any], Hashable]:
    """(keys, children, aux) of one node."""
    kind = node.kind
    if node.flatten_with_keys is not None:
        pairs, aux = node.flatten_with_keys(x)
        keys: list[Any] = []
        children: list[Any] = []
        for k, c in pairs:
            keys.append(k)
            children.append(c)
        return keys, children, aux
    if kind == _K_DICT:
        dict_keys = _sorted_keys(x)
        aux = dict_keys
        children = [x[k] for k in dict_keys]
    else:
        kids_iter, aux = node.flatten(x)
        children = list(kids_iter)
    return _default_keys(kind, type(x), children, aux), children, aux


def _flatten_with_path(x: Any, path: KeyPath, out: list[tuple[KeyPath, Any]],
                       is_leaf: Callable[[Any, Any], bool] | None,
                       reg: dict[type, _NodeType]) -> PyTreeDef:
    if is_leaf is not None and is_leaf(path, x):
        out.append((path, x))
        return _LEAF
    t = type(x)
    node = _node_for_type(t, reg)
    if node is None:
        out.append((path, x))
        return _LEAF
    if node.kind == _K_NONE:
        return _NONE
    keys, children, aux = _flatten_one_with_keys(x, node)
    return _new_treedef(t, aux, tuple([_flatten_with_path(c, (*path, k), out, is_leaf, reg)
                                       for k, c in zip(keys, children)]), node)


# ------------------------------------------------------------------ the public API


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """Leaves in a fixed order (dicts by sorted key) and the structure.

    >>> tree_flatten({"b": [1, None], "a": (2,)})
    ([2, 1], PyTreeDef({'a': (*,), 'b': [*, None]}))
    >>> tree_flatten([None, 1], is_leaf=lambda x: x is None)
    ([None, 1], PyTreeDef([*, *]))
    """
    leaves: list[Any] = []
    if is_leaf is None:
        return leaves, _flatten(tree, leaves, _reg())
    return leaves, _flatten_is_leaf(tree, leaves, is_leaf, _reg())


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree of ``treedef``'s structure from ``leaves``.

    >>> tree_unflatten(tree_structure({"a": 0, "b": (0, 0)}), [1, 2, 3])
    {'a': 1, 'b': (2, 3)}
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in order.

    >>> tree_leaves([1, {"b": 3, "a": 2}, None])
    [1, 2, 3]
    """
    leaves: list[Any] = []
    if is_leaf is None:
        _flatten(tree, leaves, _reg())
    else:
        _flatten_is_leaf(tree, leaves, is_leaf, _reg())
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure of ``tree``.

    >>> tree_structure([1, (2, 3)])
    PyTreeDef([*, (*, *)])
    """
    return tree_flatten(tree, is_leaf)[1]


def _mismatch_error(name: str, tree: Any, other: Any, is_leaf: Callable[..., bool] | None,
                    original: Exception) -> Exception:
    err = next(_prefix_error((), tree, other, is_leaf), None)
    return err(name) if err is not None else original


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; each of ``rest`` has ``tree``'s structure or a deeper one
    (``tree``'s leaves then take whole subtrees of ``rest``).

    >>> tree_map(lambda x, y: x + y, {"a": 1, "b": [2]}, {"a": 10, "b": [20]})
    {'a': 11, 'b': [22]}
    >>> tree_map(lambda x, y: (x, y), [1, 2], [(3, 4), {"k": 5}])
    [(1, (3, 4)), (2, {'k': 5})]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return _unflatten(treedef, iter([f(x) for x in leaves]))
    all_leaves = [leaves]
    for r in rest:
        try:
            all_leaves.append(treedef.flatten_up_to(r))
        except Exception as e:
            raise _mismatch_error("tree_map tree", tree, r, is_leaf, e) from None
    return _unflatten(treedef, iter([f(*xs) for xs in zip(*all_leaves)]))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """``(key path, leaf)`` pairs and the structure.

    >>> pairs, td = tree_flatten_with_path({"a": [1, 2]})
    >>> [(keystr(p), x) for p, x in pairs]
    [("['a'][0]", 1), ("['a'][1]", 2)]
    """
    out: list[tuple[KeyPath, Any]] = []
    kp_is_leaf: Callable[[Any, Any], bool] | None = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        kp_is_leaf = functools.partial(_drop_path, is_leaf)
    return out, _flatten_with_path(tree, (), out, kp_is_leaf, _reg())


def _drop_path(is_leaf: Callable[[Any], bool], path: Any, x: Any) -> bool:
    return is_leaf(x)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key path, leaf)`` pairs of ``tree``.

    >>> tree_leaves_with_path([1, {"k": 2}])
    [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='k')), 2)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`tree_map`, with each leaf's key path as ``f``'s first argument.

    >>> tree_map_with_path(lambda p, x: f"{keystr(p)}={x}", {"a": [1], "b": 2})
    {'a': ["['a'][0]=1"], 'b': "['b']=2"}
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    all_leaves: list[list[Any]] = [[p for p, _ in pairs], [x for _, x in pairs]]
    for r in rest:
        try:
            all_leaves.append(treedef.flatten_up_to(r))
        except Exception as e:
            raise _mismatch_error("tree_map_with_path tree", tree, r, is_leaf, e) from None
    return _unflatten(treedef, iter([f(*xs) for xs in zip(*all_leaves)]))


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether ``treedef`` is a single node (a leaf, or an empty node such as ``None``).

    >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure([1]))
    (True, False)
    """
    return treedef.num_nodes == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's children.

    >>> treedef_children(tree_structure([(1, 2), 3]))
    [PyTreeDef((*, *)), PyTreeDef(*)]
    """
    return list(treedef._children)


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose children have structures ``treedefs``.

    >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
    PyTreeDef((*, [*, *]))
    """
    return _new_treedef(tuple, None, tuple(treedefs), _registry[tuple])


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element of ``iterable`` is a leaf.

    >>> all_leaves([1, "a", 2.0]), all_leaves([1, [2]]), all_leaves([None])
    (True, False, False)
    """
    items = list(iterable)
    if is_leaf is None:
        reg = _reg()
        return all(_node_for_type(type(x), reg) is None for x in items)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


class Unspecified:
    """The "no initializer given" default of :func:`tree_reduce`."""


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: T | Unspecified = Unspecified(),  # noqa: B008 - JAX's default
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """``functools.reduce`` over the leaves.

    >>> tree_reduce(lambda a, b: a + b, {"x": 1, "y": [2, 3]})
    6
    >>> tree_reduce(max, [], initializer=-1)
    -1
    """
    leaves = tree_leaves(tree, is_leaf=is_leaf)
    if isinstance(initializer, Unspecified):
        out: T = functools.reduce(function, leaves)
        return out
    return functools.reduce(function, leaves, initializer)


def _parallel_reduce(sequence: list[T], operation: Callable[[T, T], T],
                     identity: T | Unspecified) -> T:
    length = len(sequence)
    if length == 0:
        if isinstance(identity, Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if length == 1:
        return sequence[0]
    index = length // 2
    a = _parallel_reduce(sequence[:index], operation, identity)
    b = _parallel_reduce(sequence[index:], operation, identity)
    return operation(a, b)


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: T | Unspecified = Unspecified(),  # noqa: B008
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves with an associative ``operation`` as a balanced tree.

    >>> tree_reduce_associative(lambda a, b: a + b, [1, (2, 3), {"k": 4}])
    10
    """
    leaves: list[T] = tree_leaves(tree, is_leaf=is_leaf)
    return _parallel_reduce(leaves, operation, identity)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy.

    >>> tree_all([True, {"a": 1}]), tree_all([True, (0,)])
    (True, False)
    """
    return all(tree_leaves(tree, is_leaf=is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` inside out.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    >>> tree_transpose(tree_structure([0, 0]), None, [{"a": 1}, {"a": 2}])
    {'a': [1, 2]}
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    lol = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    subtrees = [outer_treedef.unflatten(col) for col in zip(*lol)]
    return inner_treedef.unflatten(subtrees)


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Repeat each leaf of ``prefix_tree`` over the matching subtree of ``full_tree``.

    >>> tree_broadcast([1, {"a": 2}], [(0, 0), {"a": [0, 0]}])
    [(1, 1), {'a': [2, 2]}]
    """
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except ValueError:
        errs = list(_prefix_error((), prefix_tree, full_tree, is_leaf))
        if not errs:
            raise
        raise errs[0]("broadcast_prefix prefix_tree") from None
    result: list[Any] = []
    for x, sub in zip(prefix_leaves, subtrees):
        result.extend([x] * tree_structure(sub).num_leaves)
    return tree_structure(full_tree).unflatten(result)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children and aux data of the root node (a ``ValueError`` for a leaf).

    >>> flatten_one_level({"b": [1], "a": 2})
    ((2, [1]), ('a', 'b'))
    >>> flatten_one_level((1, 2))
    ((1, 2), None)
    """
    node = _node_for_type(type(tree), _reg())
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    kind = node.kind
    if kind == _K_DICT:
        keys = _sorted_keys(tree)
        return tuple(tree[k] for k in keys), keys
    if kind == _K_NAMEDTUPLE:
        return list(tree), _as_hashable(type(tree))
    if kind == _K_NONE:
        return (), None
    return node.flatten(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """The ``(key, child)`` pairs and aux data of the root node.

    >>> flatten_one_level_with_keys({"b": 1, "a": 2})
    (((DictKey(key='a'), 2), (DictKey(key='b'), 1)), ('a', 'b'))
    """
    node = _node_for_type(type(tree), _reg())
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    keys, children, aux = _flatten_one_with_keys(tree, node)
    pairs = tuple(zip(keys, children))
    if node.kind == _K_NAMEDTUPLE:
        return list(pairs), _as_hashable(type(tree))
    if node.kind in (_K_TUPLE, _K_LIST, _K_CUSTOM) and node.flatten_with_keys is None:
        return list(pairs), aux
    return pairs, aux


def _as_hashable(x: Any) -> Hashable:
    return x  # type: ignore[no-any-return]


def _child_keys(tree: Any) -> KeyPath:
    return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def _is_strict_leaf(tree: Any, is_leaf: Callable[..., bool] | None) -> bool:
    td = tree_structure(tree, is_leaf=is_leaf)
    return td.num_nodes == 1 and td.num_leaves == 1


def _prefix_error(key_path: KeyPath, prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[..., bool] | None = None
                  ) -> Iterator[Callable[[str], TreeStructureError]]:
    """JAX's explanations of why ``prefix_tree`` is not a prefix of ``full_tree``."""
    if _is_strict_leaf(prefix_tree, is_leaf):
        return
    if type(prefix_tree) is not type(full_tree):
        yield functools.partial(_different_types, key_path, type(prefix_tree), type(full_tree))
        return
    p_children = tuple(flatten_one_level(prefix_tree)[0])
    p_meta = flatten_one_level(prefix_tree)[1]
    f_children = tuple(flatten_one_level(full_tree)[0])
    f_meta = flatten_one_level(full_tree)[1]
    p_keys = _child_keys(prefix_tree)
    f_keys = _child_keys(full_tree)
    if isinstance(prefix_tree, (list, tuple)):
        if len(prefix_tree) != len(full_tree):
            yield functools.partial(_different_lengths, key_path, type(prefix_tree),
                                    len(prefix_tree), len(full_tree))
            return
    elif len(p_children) != len(f_children):
        try:
            diff: set[Any] | None = set(p_keys).symmetric_difference(set(f_keys))
        except Exception:
            diff = None
        yield functools.partial(_different_numbers, key_path, type(prefix_tree), p_keys,
                                f_keys, diff)
        return
    if p_meta != f_meta:
        yield functools.partial(_different_metadata, key_path, type(prefix_tree), str(p_meta),
                                str(f_meta))
        return
    for k, t1, t2 in zip(p_keys, p_children, f_children):
        yield from _prefix_error((*key_path, k), t1, t2)


def _different_types(key_path: KeyPath, t1: type, t2: type, name: str) -> TreeStructureError:
    return TreeStructureError(
        "pytree structure error: different types at key path\n"
        f"    {name}{keystr(key_path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {t1}\n"
        f"but at the same key path the full pytree has a subtree of different type\n"
        f"    {t2}.")


def _different_lengths(key_path: KeyPath, ty: type, n1: int, n2: int,
                       name: str) -> TreeStructureError:
    return TreeStructureError(
        f"pytree structure error: different lengths of {ty.__name__} at key path\n"
        f"    {name}{keystr(key_path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type "
        f"{ty.__name__} of length {n1}, but the full pytree "
        f"has a subtree of the same type but of length {n2}.")


def _key_text(k: Any) -> str:
    return str(k.key) if hasattr(k, "key") else str(k)


def _different_numbers(key_path: KeyPath, ty: type, k1: KeyPath, k2: KeyPath,
                       diff: set[Any] | None, name: str) -> TreeStructureError:
    return TreeStructureError(
        "pytree structure error: different numbers of pytree children at key path\n"
        f"    {name}{keystr(key_path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {ty}\n"
        f"with {len(k1)} child keys\n"
        f"    {' '.join(_key_text(k) for k in k1)}\n"
        f"but at the same key path the full pytree has a subtree of the same "
        f"type but with {len(k2)} child keys\n"
        f"    {' '.join(_key_text(k) for k in k2)}\n"
        + ("" if diff is None else
           f"so the symmetric difference on key sets is\n"
           f"    {' '.join(_key_text(k) for k in diff)}"))


def _different_metadata(key_path: KeyPath, ty: type, m1: str, m2: str,
                        name: str) -> TreeStructureError:
    metadata_diff = textwrap.indent("\n".join(difflib.ndiff(m1.splitlines(), m2.splitlines())),
                                    prefix="    ")
    return TreeStructureError(
        "pytree structure error: different pytree metadata at key path\n"
        f"    {name}{keystr(key_path)}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {ty}\n"
        f"with metadata\n"
        f"    {m1}\n"
        f"but at the same key path the full pytree has a subtree of the same "
        f"type but with metadata\n"
        f"    {m2}\n"
        f"so the diff in the metadata at these pytree nodes is\n"
        f"{metadata_diff}")


# ------------------------------------------------------------------ Partial


class _HashableCallableShim:
    """Delegates ``__call__``, ``__hash__`` and ``__eq__`` to a wrapped callable."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun

    def __call__(self, *args: Any, **kw: Any) -> Any:
        return self.fun(*args, **kw)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return bool(self.fun == other.fun)
        return bool(self.fun == other)

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial[Any]):
    """A ``functools.partial`` that is a pytree: its bound arguments are the leaves.

    >>> add = Partial(lambda a, b: a + b, 1)
    >>> add(2)
    3
    >>> tree_leaves(add)
    [1]
    >>> tree_map(lambda x: x * 10, add)(2)
    12
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **kw: Any) -> Partial:
        # A functools.partial func would have its arguments merged into this one's; box it
        # so that exactly the arguments given here are the pytree's children.
        if isinstance(func, functools.partial):
            original = func
            shim = _HashableCallableShim(original)
            out = super().__new__(cls, shim, *args, **kw)
            shim.func = original.func  # type: ignore[attr-defined]
            shim.args = original.args  # type: ignore[attr-defined]
            shim.keywords = original.keywords  # type: ignore[attr-defined]
            return out
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),  # type: ignore[arg-type, index]
)


# ------------------------------------------------------------------ the registry object


class PyTreeRegistry:
    """The registry of pytree node types, as ``jax.tree_util.default_registry``.

    >>> default_registry.flatten([1, (2,)])
    ([1, 2], PyTreeDef([*, (*,)]))
    """

    def flatten(self, tree: Any, is_leaf: Callable[[Any], bool] | None = None
                ) -> tuple[list[Any], PyTreeDef]:
        return tree_flatten(tree, is_leaf)

    def flatten_with_path(self, tree: Any, is_leaf: Callable[[Any, Any], bool] | None = None
                          ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
        return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path=True)

    def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Hashable] | None:
        return flatten_one_level(tree) if is_tree_node(type(tree)) else None

    def flatten_one_level_with_keys(self, tree: Any
                                    ) -> tuple[Iterable[tuple[Any, Any]], Hashable] | None:
        return flatten_one_level_with_keys(tree) if is_tree_node(type(tree)) else None

    def is_node(self, typ: type) -> bool:
        return is_tree_node(typ)

    def register_node(self, nodetype: type, flatten_func: FlattenFn,
                      unflatten_func: UnflattenFn,
                      flatten_with_keys_func: FlattenWithKeysFn | None = None) -> None:
        register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


default_registry = PyTreeRegistry()


__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial", "PyTreeDef",
    "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
    "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass",
    "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
    "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
    "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
    "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
    "treedef_is_leaf", "treedef_tuple",
]


def __dir__() -> list[str]:
    """What ``dir()`` lists, as JAX's module: the public names and the module's own
    attributes, not the imports and helpers this file uses."""
    return sorted({*__all__, *(n for n in globals() if n in _MODULE_ATTRS)})


_MODULE_ATTRS = frozenset({"__builtins__", "__cached__", "__doc__", "__file__", "__loader__",
                           "__name__", "__package__", "__spec__"})
