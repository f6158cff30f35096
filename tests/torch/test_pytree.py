"""``torch.utils._pytree`` against real torch's on hypothesis-drawn nested containers:
leaves, printed specs, unflatten, tree_map over several trees, key paths and errors."""

from __future__ import annotations

import collections
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch.utils._pytree as P

NT = collections.namedtuple("NT", "x y")

_leaf = st.one_of(st.integers(-5, 5), st.none(), st.text(max_size=2), st.floats(-2, 2))


def _containers(children: Any) -> Any:
    keys = st.text("abc", min_size=1, max_size=2)
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3),
        st.dictionaries(keys, children, max_size=3).map(collections.OrderedDict),
        st.tuples(children, children).map(lambda t: NT(*t)),
        st.lists(children, max_size=3).map(lambda xs: collections.deque(xs, maxlen=5)),
        st.dictionaries(keys, children, max_size=2).map(
            lambda d: collections.defaultdict(list, d)))


_trees = st.recursive(_leaf, _containers, max_leaves=10)


@settings(max_examples=60, deadline=None)
@given(tree=_trees)
def test_matches_pytorchs_pytree(tree: Any) -> None:
    tp = pytest.importorskip("torch.utils._pytree")
    leaves, spec = P.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert leaves == t_leaves
    assert repr(spec) == repr(t_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children) == \
        (t_spec.num_leaves, t_spec.num_nodes, t_spec.num_children)
    numbered = list(range(len(leaves)))
    assert repr(P.tree_unflatten(numbered, spec)) == repr(tp.tree_unflatten(numbered, t_spec))
    mapped = P.tree_map(lambda a, b: (a, b), tree, P.tree_unflatten(numbered, spec))
    assert repr(mapped) == repr(tp.tree_map(lambda a, b: (a, b), tree,
                                            tp.tree_unflatten(numbered, t_spec)))
    paths, _ = P.tree_flatten_with_path(tree)
    t_paths, _ = tp.tree_flatten_with_path(tree)
    assert [P.keystr(k) for k, _ in paths] == [tp.keystr(k) for k, _ in t_paths]
    assert P.tree_map_only(int, lambda x: -x, tree) == tp.tree_map_only(int, lambda x: -x,
                                                                        tree)


def test_registered_nodes_and_errors() -> None:
    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    P.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"), lambda xs, c: Pair(*xs))
    try:
        leaves, spec = P.tree_flatten([Pair(1, [2]), 3])
        assert leaves == [1, 2, 3]
        rebuilt = spec.unflatten([7, 8, 9])
        assert isinstance(rebuilt[0], Pair) and rebuilt[0].b == [8] and rebuilt[1] == 9
        with pytest.raises(ValueError, match="is already registered as pytree node"):
            P.register_pytree_node(Pair, lambda p: ([], None), lambda xs, c: Pair(0, 0))
    finally:
        del P.SUPPORTED_NODES[Pair]
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers to a "
                                         "pytree that holds 2 items"):
        P.tree_unflatten([1], P.tree_structure([1, 2]))
    with pytest.raises(ValueError, match="Node arity mismatch; expected 2, but got 1."):
        P.tree_map(lambda a, b: a, [1, 2], [1])
    with pytest.raises(TypeError, match="Expected `treespec` to be instance of TreeSpec"):
        P.tree_unflatten([1], [1])  # type: ignore[arg-type]
