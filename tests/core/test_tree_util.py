"""Pytrees: containers, ordering, registration, round trips, tree_map and treedefs."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad.errors import TreeStructureError
from funcgrad.tree_util import (
    PyTreeDef,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)

Point = namedtuple("Point", "x y")
Other = namedtuple("Other", "x y")


class Box:
    """A registered custom node: one child, a hashable name as aux data."""

    def __init__(self, value, name):
        self.value, self.name = value, name

    def __eq__(self, other):
        return isinstance(other, Box) and (self.value, self.name) == (other.value, other.name)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"Box({self.value!r}, {self.name!r})"


register_pytree_node(Box, lambda b: ((b.value,), b.name), lambda name, c: Box(c[0], name))


class Pair:
    """A registered node with two children and no aux data."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return isinstance(other, Pair) and (self.a, self.b) == (other.a, other.b)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"Pair({self.a!r}, {self.b!r})"


register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))


def round_trip(tree):
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, leaves)


# ------------------------------------------------------------------ containers


def test_tuple_list_leaves_in_order() -> None:
    leaves, td = tree_flatten((1, [2, 3], (4,)))
    assert leaves == [1, 2, 3, 4]
    assert td.num_leaves == 4
    assert round_trip((1, [2, 3], (4,))) == (1, [2, 3], (4,))
    assert type(round_trip([1, (2,)])) is list
    assert type(round_trip((1, [2]))[1]) is list


def test_dict_leaves_in_sorted_key_order() -> None:
    tree = {"b": 2, "c": 3, "a": 1}
    leaves, td = tree_flatten(tree)
    assert leaves == [1, 2, 3]
    out = tree_unflatten(td, [10, 20, 30])
    assert out == {"a": 10, "b": 20, "c": 30}
    assert list(out) == ["a", "b", "c"]
    # insertion order does not matter for the structure
    assert td == tree_structure({"a": 0, "c": 0, "b": 0})
    assert hash(td) == hash(tree_structure({"c": 0, "a": 0, "b": 0}))


def test_dict_with_int_keys_sorted() -> None:
    assert tree_leaves({3: "c", 1: "a", 2: "b"}) == ["a", "b", "c"]


def test_none_is_an_empty_subtree() -> None:
    leaves, td = tree_flatten(None)
    assert leaves == [] and td.num_leaves == 0
    assert tree_unflatten(td, []) is None
    assert tree_leaves([None, 1, (None, 2)]) == [1, 2]
    assert round_trip([None, 1, (None, 2)]) == [None, 1, (None, 2)]
    assert tree_map(lambda x: x * 10, {"a": None, "b": 1}) == {"a": None, "b": 10}


def test_empty_containers() -> None:
    for tree in ((), [], {}):
        leaves, td = tree_flatten(tree)
        assert leaves == []
        assert tree_unflatten(td, []) == tree
        assert type(tree_unflatten(td, [])) is type(tree)
    assert tree_structure(()) != tree_structure([])
    assert tree_structure([]) != tree_structure({})
    assert tree_structure(()) != tree_structure(None)


def test_namedtuple_keeps_type_and_field_order() -> None:
    p = Point(x=2, y=1)
    leaves, td = tree_flatten(p)
    assert leaves == [2, 1]
    out = tree_unflatten(td, [5, 6])
    assert type(out) is Point and out == Point(5, 6)
    assert td != tree_structure((2, 1))
    assert td != tree_structure(Other(2, 1))
    assert tree_structure(Point(1, 2)) == tree_structure(Point(3, 4))


def test_ordered_dict_keeps_insertion_order() -> None:
    od = OrderedDict([("z", 1), ("a", 2)])
    leaves, td = tree_flatten(od)
    assert leaves == [1, 2]
    out = tree_unflatten(td, [7, 8])
    assert type(out) is OrderedDict and list(out.items()) == [("z", 7), ("a", 8)]
    assert td != tree_structure(OrderedDict([("a", 1), ("z", 2)]))
    assert td != tree_structure({"z": 1, "a": 2})


def test_registered_custom_classes() -> None:
    tree = [Box({"q": 1, "p": 2}, "n"), Pair(3, (4, None))]
    leaves, td = tree_flatten(tree)
    assert leaves == [2, 1, 3, 4]
    assert tree_unflatten(td, leaves) == tree
    assert tree_structure(Box(1, "n")) != tree_structure(Box(1, "m"))  # aux is compared
    assert tree_structure(Box(1, "n")) == tree_structure(Box(2, "n"))
    assert tree_structure(Pair(1, 2)) != tree_structure((1, 2))


def test_register_twice_is_an_error() -> None:
    with pytest.raises(TreeStructureError, match="Duplicate custom PyTreeDef type registration"):
        register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, c: Box(c[0], ""))


def test_unregistered_objects_and_arrays_are_leaves() -> None:
    class Thing:
        pass

    t = Thing()
    a = np.ones(3)
    leaves, td = tree_flatten([t, a, 1.5, "s"])
    assert leaves[0] is t and leaves[1] is a and leaves[2:] == [1.5, "s"]
    assert treedef_is_leaf(tree_structure(a))
    assert treedef_is_leaf(tree_structure(t))
    assert not treedef_is_leaf(tree_structure([a]))
    assert tree_structure(5).num_leaves == 1


def test_nested_mixed() -> None:
    tree = {"b": [1, (2, None)], "a": Point(3, OrderedDict([("z", 4), ("y", 5)]))}
    leaves, td = tree_flatten(tree)
    assert leaves == [3, 4, 5, 1, 2]
    assert td.num_leaves == 5
    assert tree_unflatten(td, leaves) == tree
    assert "Point" in repr(td) and "PyTreeDef" in repr(td)


def test_pytrees_pass_through_transforms() -> None:
    def f(tree):
        return tree["w"].value * tree["p"].a + fg.numpy.sum(tree["p"].b[0])

    tree = {"w": Box(2.0, "w"), "p": Pair(3.0, (np.array([1.0, 2.0]), None))}
    g = fg.grad(f)(tree)
    assert tree_structure(g) == tree_structure(tree)
    assert float(g["w"].value) == 3.0 and float(g["p"].a) == 2.0
    np.testing.assert_array_equal(g["p"].b[0], [1.0, 1.0])


# ------------------------------------------------------------------ unflatten errors


def test_unflatten_with_wrong_number_of_leaves() -> None:
    td = tree_structure({"a": (1, 2), "b": [3]})
    with pytest.raises(TreeStructureError, match="Too few leaves"):
        tree_unflatten(td, [1, 2])
    with pytest.raises(TreeStructureError, match="Too many leaves"):
        tree_unflatten(td, [1, 2, 3, 4])
    assert tree_unflatten(td, iter([7, 8, 9])) == {"a": (7, 8), "b": [9]}


def test_tree_structure_error_is_a_value_error() -> None:
    assert issubclass(TreeStructureError, ValueError)
    assert issubclass(TreeStructureError, fg.errors.FuncgradError)


# ------------------------------------------------------------------ tree_map


def test_tree_map_single_and_multiple_trees() -> None:
    assert tree_map(lambda x: x * 2, [1, (2,)]) == [2, (4,)]
    a = [1, {"k": 2, "j": Point(3, 4)}]
    b = [10, {"j": Point(30, 40), "k": 20}]
    c = [100, {"k": 200, "j": Point(300, 400)}]
    assert tree_map(lambda x, y, z: x + y + z, a, b, c) == [
        111, {"k": 222, "j": Point(333, 444)}]


@pytest.mark.parametrize(("t1", "t2"), [
    ([1, 2], (1, 2)),
    ({"a": 1}, {"b": 1}),
    ([1, 2], [1, 2, 3]),
    ([1, [2]], [1, 2]),
    (Point(1, 2), Other(1, 2)),
    (Point(1, 2), (1, 2)),
    (OrderedDict(a=1, b=2), OrderedDict(b=1, a=2)),
    (Box(1, "a"), Box(1, "b")),
    ([None, 1], [2, 1]),
])
def test_tree_map_structure_mismatch(t1, t2) -> None:
    with pytest.raises(TreeStructureError, match="pytree structure error"):
        tree_map(lambda x, y: x, t1, t2)


def test_tree_map_is_leaf() -> None:
    tree = {"a": [1, 2], "b": [3, [4, 5]]}
    out = tree_map(lambda x: ("leaf", x), tree,
                   is_leaf=lambda x: isinstance(x, list) and len(x) == 2
                   and not isinstance(x[1], list))
    assert out["a"] == ("leaf", [1, 2])
    assert out["b"] == [("leaf", 3), ("leaf", [4, 5])]


def test_is_leaf_makes_none_a_leaf() -> None:
    tree = [None, 1]
    assert tree_leaves(tree) == [1]
    assert tree_leaves(tree, is_leaf=lambda x: x is None) == [None, 1]
    assert tree_map(lambda x: "N" if x is None else x, tree,
                    is_leaf=lambda x: x is None) == ["N", 1]


def test_is_leaf_on_root() -> None:
    leaves, td = tree_flatten((1, 2), is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2)] and treedef_is_leaf(td)


# ------------------------------------------------------------------ treedefs


def test_treedef_equality_and_hash() -> None:
    t1 = tree_structure({"a": [1, (2,)], "b": None})
    t2 = tree_structure({"b": None, "a": ["x", ("y",)]})
    t3 = tree_structure({"a": [1, [2]], "b": None})
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != t3
    assert t1 != "not a treedef"
    d = {t1: "first"}
    assert d[t2] == "first"
    assert len({t1, t2, t3}) == 2
    assert isinstance(t1, PyTreeDef)


def test_treedef_repr() -> None:
    assert repr(tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tree_structure([1, None])) == "PyTreeDef([*, None])"
    assert repr(tree_structure({"b": 1, "a": 2})) == "PyTreeDef({'a': *, 'b': *})"
    assert repr(tree_structure(1)) == "PyTreeDef(*)"


# ------------------------------------------------------------------ hypothesis

leaf_values = st.one_of(st.integers(-5, 5), st.text(max_size=2), st.booleans())


def _extend(children):
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text("abcde", min_size=1, max_size=2), children, max_size=3),
        st.tuples(children, children).map(lambda t: Point(*t)),
        st.dictionaries(st.text("xyz", min_size=1, max_size=2), children, max_size=3)
        .map(lambda d: OrderedDict(sorted(d.items(), reverse=True))),
        st.tuples(children, children).map(lambda t: Pair(*t)),
        children.map(lambda c: Box(c, "b")),
    )


trees = st.recursive(st.one_of(leaf_values, st.none()), _extend, max_leaves=12)


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, OrderedDict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, Pair):
        return _same(a.a, b.a) and _same(a.b, b.b)
    if isinstance(a, Box):
        return a.name == b.name and _same(a.value, b.value)
    return a == b


@settings(max_examples=60, deadline=None)
@given(trees)
def test_flatten_unflatten_round_trip(tree) -> None:
    leaves, td = tree_flatten(tree)
    assert td.num_leaves == len(leaves)
    back = tree_unflatten(td, leaves)
    assert _same(back, tree)
    assert tree_structure(back) == td
    assert tree_flatten(back)[0] == leaves


@settings(max_examples=40, deadline=None)
@given(trees)
def test_tree_map_identity_and_relabel(tree) -> None:
    assert _same(tree_map(lambda x: x, tree), tree)
    leaves, td = tree_flatten(tree)
    numbered = tree_unflatten(td, list(range(len(leaves))))
    assert tree_leaves(numbered) == list(range(len(leaves)))
    assert tree_structure(numbered) == td
    # two-tree map over the same structure pairs leaves positionally
    pairs = tree_map(lambda a, b: (a, b), numbered, tree, is_leaf=None)
    assert tree_leaves(pairs) == [x for ab in zip(range(len(leaves)), leaves) for x in ab]


@settings(max_examples=40, deadline=None)
@given(trees, trees)
def test_treedef_equality_matches_structure(t1, t2) -> None:
    d1, d2 = tree_structure(t1), tree_structure(t2)
    if d1 == d2:
        assert hash(d1) == hash(d2)
        assert d1.num_leaves == d2.num_leaves
        tree_map(lambda a, b: None, t1, t2)
    else:  # JAX's tree_map takes deeper later trees: one of the two directions fails
        with pytest.raises(TreeStructureError):
            tree_map(lambda a, b: None, t1, t2)
            tree_map(lambda a, b: None, t2, t1)
