"""funcgrad.tree_util / funcgrad.tree against jax.tree_util / jax.tree (jax 0.10.2).

Hypothesis draws nested trees of lists, tuples, dicts, None, namedtuples, OrderedDicts,
defaultdicts, registered classes and dataclasses; both libraries must give the same leaves,
printed structures, key paths, transposes and errors. The JAX-free tests at the end run
without jax.
"""

from __future__ import annotations

import dataclasses
import gc
import weakref
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.tree as ftree
import funcgrad.tree_util as ftu
from funcgrad.errors import TreeStructureError

Point = namedtuple("Point", "x y")
Single = namedtuple("Single", "v")


class Pair:
    """Registered without keys: children get FlattenedIndexKey paths."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b) == (other.a, other.b)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"Pair({self.a!r}, {self.b!r})"


class Tagged:
    """Registered with keys and aux data (its tag)."""

    def __init__(self, value, tag):
        self.value, self.tag = value, tag

    def __eq__(self, other):
        return type(other) is Tagged and (self.value, self.tag) == (other.value, other.tag)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"Tagged({self.value!r}, {self.tag!r})"


@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata={"static": True})


def _register_all(tu) -> None:
    tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
    tu.register_pytree_with_keys(
        Tagged, lambda t: (((tu.GetAttrKey("value"), t.value),), t.tag),
        lambda tag, c: Tagged(c[0], tag))
    tu.register_dataclass(Params)


_register_all(ftu)
_JAX_REGISTERED = False


@pytest.fixture(scope="module")
def jtu():
    global _JAX_REGISTERED  # noqa: PLW0603 - register the test classes with jax once
    jax = pytest.importorskip("jax")
    if not _JAX_REGISTERED:
        _register_all(jax.tree_util)
        _JAX_REGISTERED = True
    return jax.tree_util


# ------------------------------------------------------------------ strategies

leaves = st.integers(-9, 9)


def _extend(children):
    keys = st.text("abcd", min_size=1, max_size=2)
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3),
        st.tuples(children, children).map(lambda t: Point(*t)),
        children.map(Single),
        st.dictionaries(keys, children, max_size=3).map(
            lambda d: OrderedDict(sorted(d.items(), reverse=True))),
        st.dictionaries(keys, children, max_size=2).map(lambda d: defaultdict(int, d)),
        st.tuples(children, children).map(lambda t: Pair(*t)),
        st.tuples(children, st.sampled_from(["p", "q"])).map(lambda t: Tagged(*t)),
        st.tuples(children, children, st.sampled_from(["u", "v"])).map(
            lambda t: Params(*t)),
    )


trees = st.recursive(st.one_of(leaves, st.none()), _extend, max_leaves=10)


@st.composite
def tree_pairs(draw):
    """Two trees that often differ in one place only (so errors are deep, not at the root)."""
    t1 = draw(trees)
    if draw(st.booleans()):
        return t1, draw(trees)
    n = len(ftu.tree_leaves(t1, is_leaf=lambda x: x is None))
    if n == 0:
        return t1, draw(trees)
    target = draw(st.integers(0, n - 1))
    replacement = draw(trees)
    counter = iter(range(n))
    t2 = ftu.tree_map(lambda x: replacement if next(counter) == target else x, t1,
                      is_leaf=lambda x: x is None)
    return (t1, t2) if draw(st.booleans()) else (t2, t1)


HYP = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - compared with the other library's outcome
        return type(e), str(e)


def _jax_namedtuple_path_bug(message: str) -> str:
    # jax 0.10.2's flatten_one_level_with_keys names every namedtuple child after the first
    # field (GetAttrKey('x') twice for Point(x, y)), so its prefix errors print ``.x`` where
    # the mismatch is under ``.y``; funcgrad prints the right field.
    head, sep, rest = message.partition("\n    ")
    path, sep2, tail = rest.partition("\n")
    return head + sep + path.replace(".y", ".x") + sep2 + tail


def _same_outcome(ours, theirs) -> None:
    assert ours[0] == theirs[0] or (
        isinstance(ours[0], type) and isinstance(theirs[0], type)
        and issubclass(ours[0], theirs[0])), (ours, theirs)
    if ours[0] != "ok" and ours[1] != theirs[1] and ours[1].startswith("pytree structure"):
        assert _jax_namedtuple_path_bug(ours[1]) == theirs[1], (ours, theirs)
        return
    assert ours[1] == theirs[1], (ours, theirs)


# ------------------------------------------------------------------ against jax


@HYP
@given(trees)
def test_flatten_structure_and_paths_match_jax(jtu, tree) -> None:
    leaves_f, td_f = ftu.tree_flatten(tree)
    leaves_j, td_j = jtu.tree_flatten(tree)
    assert leaves_f == leaves_j
    assert repr(td_f) == repr(td_j) and str(td_f) == str(td_j)
    assert (td_f.num_leaves, td_f.num_nodes) == (td_j.num_leaves, td_j.num_nodes)
    assert ftu.treedef_is_leaf(td_f) == jtu.treedef_is_leaf(td_j)
    assert [repr(c) for c in ftu.treedef_children(td_f)] == [
        repr(c) for c in jtu.treedef_children(td_j)]
    assert ftu.tree_unflatten(td_f, leaves_f) == jtu.tree_unflatten(td_j, leaves_j)
    paths_f = ftu.tree_leaves_with_path(tree)
    paths_j = jtu.tree_leaves_with_path(tree)
    assert [(ftu.keystr(p), x) for p, x in paths_f] == [(jtu.keystr(p), x) for p, x in paths_j]
    assert [ftu.keystr(p, simple=True, separator="/") for p, _ in paths_f] == [
        jtu.keystr(p, simple=True, separator="/") for p, _ in paths_j]
    assert repr(paths_f) == repr(paths_j)
    assert ftu.tree_map_with_path(lambda p, x: ftu.keystr(p), tree) == \
        jtu.tree_map_with_path(lambda p, x: jtu.keystr(p), tree)
    none_leaf = lambda x: x is None
    assert ftu.tree_leaves(tree, is_leaf=none_leaf) == jtu.tree_leaves(tree, is_leaf=none_leaf)
    assert repr(ftu.tree_structure(tree, is_leaf=none_leaf)) == repr(
        jtu.tree_structure(tree, is_leaf=none_leaf))
    assert ftu.all_leaves(leaves_f) and jtu.all_leaves(leaves_j)
    assert ftu.tree_reduce(lambda a, b: a + b, tree, 0) == jtu.tree_reduce(
        lambda a, b: a + b, tree, 0)
    assert ftu.tree_all(tree) == jtu.tree_all(tree)


@HYP
@given(tree_pairs())
def test_tree_map_results_and_errors_match_jax(jtu, pair) -> None:
    t1, t2 = pair
    ours = _outcome(lambda: repr(ftu.tree_map(lambda a, b: (a, b), t1, t2)))
    theirs = _outcome(lambda: repr(jtu.tree_map(lambda a, b: (a, b), t1, t2)))
    _same_outcome(ours, theirs)
    if ours[0] != "ok":
        assert isinstance(ours[0], type) and issubclass(ours[0], TreeStructureError)
    _same_outcome(_outcome(lambda: ftu.tree_structure(t1).flatten_up_to(t2)),
                  _outcome(lambda: jtu.tree_structure(t1).flatten_up_to(t2)))
    _same_outcome(_outcome(lambda: repr(ftu.tree_broadcast(t1, t2))),
                  _outcome(lambda: repr(jtu.tree_broadcast(t1, t2))))
    td1f, td2f = ftu.tree_structure(t1), ftu.tree_structure(t2)
    td1j, td2j = jtu.tree_structure(t1), jtu.tree_structure(t2)
    assert (td1f == td2f) == (td1j == td2j)
    if td1f == td2f:
        assert hash(td1f) == hash(td2f)
    _same_outcome(_outcome(lambda: ftu.tree_unflatten(td1f, list(range(td2f.num_leaves)))),
                  _outcome(lambda: jtu.tree_unflatten(td1j, list(range(td2j.num_leaves)))))


@HYP
@given(trees, st.sampled_from([(0, 0), [0, 0, 0], {"a": 0, "b": (0,)}, Point(0, None)]))
def test_transpose_matches_jax(jtu, tree, inner_proto) -> None:
    leaves_f, outer_f = ftu.tree_flatten(tree)
    inner_f = ftu.tree_structure(inner_proto)
    nested = ftu.tree_unflatten(outer_f, [inner_proto] * len(leaves_f))
    numbered = ftu.tree_unflatten(ftu.tree_structure(nested),
                                  range(outer_f.num_leaves * inner_f.num_leaves))
    outer_j, inner_j = jtu.tree_structure(tree), jtu.tree_structure(inner_proto)
    _same_outcome(_outcome(lambda: ftu.tree_transpose(outer_f, inner_f, numbered)),
                  _outcome(lambda: jtu.tree_transpose(outer_j, inner_j, numbered)))
    if outer_f.num_leaves:
        assert ftu.tree_transpose(outer_f, None, numbered) == jtu.tree_transpose(
            outer_j, None, numbered)
    assert repr(outer_f.compose(inner_f)) == repr(outer_j.compose(inner_j))
    _same_outcome(_outcome(lambda: ftu.tree_transpose(outer_f, inner_f, [numbered, 1])),
                  _outcome(lambda: jtu.tree_transpose(outer_j, inner_j, [numbered, 1])))


def test_fixed_errors_match_jax(jtu) -> None:
    cases = [
        lambda tu: tu.tree_unflatten(tu.tree_structure((1, 2, 3)), [1, 2]),
        lambda tu: tu.tree_unflatten(tu.tree_structure((1, 2, 3)), iter([1, 2, 3, 4])),
        lambda tu: tu.tree_flatten({1: 2, "a": 3}),
        lambda tu: tu.tree_map(lambda a, b: a, {"a": 1}, {"a": 1, "b": 2}),
        lambda tu: tu.tree_map(lambda a, b: a, [None, 1], [2, 1]),
        lambda tu: tu.tree_map_with_path(lambda p, a, b: a, [1], (1,)),
        lambda tu: tu.tree_structure([None]).flatten_up_to([1]),
        lambda tu: tu.tree_structure(Pair(1, 2)).flatten_up_to(5),
        lambda tu: tu.tree_structure(Params(1, 2)).flatten_up_to(Params(1, 2, "q")),
        lambda tu: tu.tree_structure(Point(1, 2)).flatten_up_to((1, 2)),
        lambda tu: tu.tree_reduce(lambda a, b: a + b, []),
        lambda tu: tu.tree_reduce_associative(lambda a, b: a + b, []),
        lambda tu: tu.tree_transpose(tu.tree_structure([0, 0]), tu.tree_structure((0, 0)),
                                     [(1, 2, 3), (4, 5, 6)]),
        lambda tu: tu.flatten_one_level(1),
        lambda tu: tu.register_pytree_node(list, lambda x: (x, None), lambda a, c: c),
        lambda tu: tu.tree_broadcast([1, 2], [3]),
    ]
    for case in cases:
        _same_outcome(_outcome(lambda c=case: c(ftu)), _outcome(lambda c=case: c(jtu)))


def test_misc_values_match_jax(jtu) -> None:
    for tu_f, tu_j in [(ftu, jtu)]:
        for fn in [
            lambda tu: repr(tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, None])])),
            lambda tu: repr(tu.tree_structure({1: 2, 3: (4,)})),
            lambda tu: tu.tree_structure({"b": 1, "a": 2}).node_data(),
            lambda tu: tu.tree_structure(Point(1, 2)).node_data(),
            lambda tu: tu.tree_structure(Params(1, 2)).node_data(),
            lambda tu: tu.tree_structure(1).node_data(),
            lambda tu: repr(tu.tree_structure(None)),
            lambda tu: tu.treedef_is_leaf(tu.tree_structure(None)),
            lambda tu: tu.tree_structure([1, 2]).flatten_up_to([[3], {"a": 4}]),
            lambda tu: tu.all_leaves([1, None]),
            lambda tu: tu.all_leaves([1, None], is_leaf=lambda x: x is None),
            lambda tu: tu.is_tree_node(Point), lambda tu: tu.is_tree_node(int),
            lambda tu: tu.flatten_one_level({"b": 1, "a": [2]}),
            lambda tu: repr(tu.flatten_one_level_with_keys({"b": 1, "a": [2]})),
            lambda tu: tu.tree_leaves_with_path(
                [1, [2]], is_leaf=lambda p, x: isinstance(x, list) and len(p) > 0,
                is_leaf_takes_path=True).__repr__(),
            lambda tu: tu.tree_reduce_associative(lambda a, b: a * b, [2, (3, 4)]),
            lambda tu: tu.tree_broadcast([1, {"a": 2}], [(3, 4), {"a": [5, 6]}]),
            lambda tu: [repr(k) + str(k) for k in (tu.SequenceKey(1), tu.DictKey("a"),
                                                   tu.GetAttrKey("x"),
                                                   tu.FlattenedIndexKey(2))],
            lambda tu: tu.keystr((tu.DictKey("a"), "x", 1)),
            lambda tu: tu.tree_leaves(tu.Partial(max, 1, key=None)),
            lambda tu: tu.tree_structure(Tagged(1, "t")) == tu.tree_structure(Tagged(2, "t")),
        ]:
            assert fn(tu_f) == fn(tu_j)


def test_tree_namespace_matches_jax() -> None:
    jax = pytest.importorskip("jax")
    t = {"a": [1, 2], "b": (3, None)}
    assert ftree.leaves(t) == jax.tree.leaves(t)
    assert repr(ftree.structure(t)) == repr(jax.tree.structure(t))
    assert ftree.map(lambda x: x + 1, t) == jax.tree.map(lambda x: x + 1, t)
    assert ftree.reduce(lambda a, b: a + b, t) == jax.tree.reduce(lambda a, b: a + b, t)
    assert ftree.all(t) == jax.tree.all(t)
    assert repr(ftree.leaves_with_path(t)) == repr(jax.tree.leaves_with_path(t))
    assert ftree.broadcast(1, t) == jax.tree.broadcast(1, t)
    f = ftree.static(default=3)
    assert f.metadata["static"] and f.default == 3
    assert dict(jax.tree.static(default=3).metadata) == dict(f.metadata)


# ------------------------------------------------------------------ JAX-free


def test_tree_map_frees_outputs_without_gc() -> None:
    """No reference cycle holds arrays: outputs die as soon as the result is dropped."""
    big = {"w": [np.ones(3) for _ in range(40)], "b": (np.ones(2), {"c": np.ones(4)}),
           "p": Point(np.ones(1), None), "pair": Pair(np.ones(2), [np.ones(2)])}
    gc.collect()
    gc.disable()
    try:
        out = ftu.tree_map(lambda x: x * 2, big)
        refs = [weakref.ref(x) for x in ftu.tree_leaves(out)]
        leaves, td = ftu.tree_flatten(out)
        back = ftu.tree_unflatten(td, leaves)
        paths = ftu.tree_leaves_with_path(out)
        other = ftu.tree_map(lambda a, b: a + b, big, out)
        ref_other = weakref.ref(ftu.tree_leaves(other)[0])
        assert all(r() is not None for r in refs)
        del out, leaves, back, paths, other
        assert all(r() is None for r in refs)
        assert ref_other() is None
    finally:
        gc.enable()


def test_children_is_a_method_and_a_sequence() -> None:
    td = ftu.tree_structure((1, [2, 3], None))
    assert td.children() == [ftu.tree_structure(1), ftu.tree_structure([2, 3]),
                             ftu.tree_structure(None)]
    assert len(td.children) == 3 and td.children[1].num_leaves == 2
    assert list(td.children) == td.children()


def test_prefix_tree_map_and_none() -> None:
    assert ftu.tree_map(lambda x, y: (x, y), 5, [1, 2]) == (5, [1, 2])
    assert ftu.tree_map(lambda x, y: y, {"a": 0}, {"a": (1, 2)}) == {"a": (1, 2)}
    assert ftu.tree_map(lambda x, y: x, [None, 1], [None, 2]) == [None, 1]
    with pytest.raises(TreeStructureError, match="different types at key path") as e:
        ftu.tree_map(lambda x, y: x, [None, 1], [2, 1])
    assert isinstance(e.value, ValueError)
    assert "tree_map tree[0]" in str(e.value)


def test_key_paths_for_every_node_kind() -> None:
    tree = {"l": [1], "t": (2,), "p": Point(3, 4), "o": OrderedDict(z=5),
            "d": defaultdict(list, k=6), "pair": Pair(7, 8), "tag": Tagged(9, "t"),
            "dc": Params(10, 11), "none": None}
    got = {ftu.keystr(p): x for p, x in ftu.tree_leaves_with_path(tree)}
    assert got == {"['d']['k']": 6, "['dc'].w": 10, "['dc'].b": 11, "['l'][0]": 1,
                   "['o']['z']": 5, "['p'].x": 3, "['p'].y": 4,
                   "['pair'][<flat index 0>]": 7, "['pair'][<flat index 1>]": 8,
                   "['t'][0]": 2, "['tag'].value": 9}
    assert ftu.tree_map_with_path(lambda p, x: len(p), tree)["p"] == Point(2, 2)


def test_registration_helpers() -> None:
    @ftu.register_pytree_node_class
    class Box:
        def __init__(self, x, name):
            self.x, self.name = x, name

        def tree_flatten(self):
            return (self.x,), self.name

        @classmethod
        def tree_unflatten(cls, name, children):
            return cls(children[0], name)

    @ftu.register_static
    class Mode(str):
        pass

    @ftu.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        kind: str = ftree.static(default="add")

    tree = [Box(1, "n"), Mode("train"), Op(2)]
    leaves, td = ftu.tree_flatten(tree)
    assert leaves == [1, 2]
    assert repr(td) == ("PyTreeDef([CustomNode(Box[n], [*]), CustomNode(Mode[train], []), "
                        "CustomNode(Op[('add',)], [*])])")
    back = ftu.tree_unflatten(td, [10, 20])
    assert back[0].x == 10 and back[0].name == "n" and back[1] == "train"
    assert back[2] == Op(20)
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        ftu.register_static(Mode)
    with pytest.raises(TypeError, match="must both be specified"):
        ftu.register_dataclass(Params, data_fields=["w"])


def test_partial_is_a_pytree_through_transforms() -> None:
    scale = ftu.Partial(lambda s, x: s * x, 3.0)
    assert ftu.tree_leaves(scale) == [3.0]
    inner = ftu.Partial(ftu.Partial(lambda a, b, c: a + b + c, 1), 2)
    assert inner(3) == 6 and ftu.tree_leaves(inner) == [2]

    def f(p, x):
        return p(x)

    g = fg.grad(f)(scale, 2.0)
    assert isinstance(g, ftu.Partial) and float(g.args[0]) == 2.0


def test_treedef_hash_eq_and_unhashable_aux() -> None:
    a = ftu.tree_structure(Tagged(1, ["list", "aux"]))
    b = ftu.tree_structure(Tagged(2, ["list", "aux"]))
    assert a == b and hash(a) == hash(b)
    assert a != ftu.tree_structure(Tagged(1, ["other"]))
    assert ftu.tree_structure([1]) != [1]
    assert len({ftu.tree_structure((1, 2)), ftu.tree_structure(("a", "b"))}) == 1


def test_unflatten_accepts_iterators_and_rejects_bad_counts() -> None:
    td = ftu.tree_structure({"a": (0, 0)})
    assert td.unflatten(iter([1, 2])) == {"a": (1, 2)}
    assert td.unflatten(x for x in [1, 2]) == {"a": (1, 2)}
    with pytest.raises(TreeStructureError, match="Too few leaves for PyTreeDef; expected 2"):
        td.unflatten([1])
    with pytest.raises(TreeStructureError, match="Too many leaves"):
        td.unflatten(iter(range(10**9)))


def test_is_leaf_everywhere() -> None:
    tree = {"a": [1, 2], "b": [3, [4, 5]]}
    pair = lambda x: isinstance(x, list) and len(x) == 2 and not isinstance(x[1], list)
    assert ftu.tree_leaves(tree, is_leaf=pair) == [[1, 2], 3, [4, 5]]
    assert ftu.tree_structure((1, 2), is_leaf=lambda x: isinstance(x, tuple)).num_leaves == 1
    assert ftu.tree_all([0], is_leaf=lambda x: isinstance(x, list))
    assert ftu.tree_reduce(lambda a, b: a + [b], tree, [], is_leaf=pair) == [[1, 2], 3, [4, 5]]
    paths = ftu.tree_leaves_with_path(tree, is_leaf=pair)
    assert [ftu.keystr(p) for p, _ in paths] == ["['a']", "['b'][0]", "['b'][1]"]


def test_tree_namespace_covers_jax_tree() -> None:
    names = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
             "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
             "transpose", "unflatten"]
    assert [n for n in names if not hasattr(ftree, n)] == []
    assert ftree.transpose(ftree.structure([0, 0]), None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert ftree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    assert ftree.map_with_path(lambda p, x: x, [1]) == [1]
    assert ftree.flatten_with_path([1])[1] == ftree.structure([0])
    assert ftree.unflatten(ftree.structure((0,)), [7]) == (7,)
