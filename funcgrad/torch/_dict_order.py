"""Dicts in PyTorch-face results keep their insertion order.

The engine's pytrees sort dict keys (JAX's rule); PyTorch's keep insertion order, which
code zipping gradients with ``named_parameters()`` relies on. ``record_orders`` notes the
key order of each dict of an argument or output; ``reorder`` rebuilds a result's dicts in
those orders.

>>> orders = {}
>>> record_orders({"z": 1, "a": 2}, orders)
>>> reorder({"a": 20, "z": 10}, orders)
{'z': 10, 'a': 20}
"""

from __future__ import annotations

from typing import Any


def record_orders(tree: Any, orders: dict[frozenset[Any], list[Any]]) -> None:
    """Record the key order of each dict in ``tree`` (the first order seen per key set)."""
    if isinstance(tree, dict):
        orders.setdefault(frozenset(tree), list(tree))
        for v in tree.values():
            record_orders(v, orders)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            record_orders(v, orders)


def reorder(tree: Any, orders: dict[frozenset[Any], list[Any]]) -> Any:
    """``tree`` with its dicts in the key orders recorded: the engine's pytrees sort dict
    keys (JAX's rule) and PyTorch's keep insertion order, which code zipping gradients with
    ``named_parameters()`` relies on."""
    if isinstance(tree, dict):
        keys = orders.get(frozenset(tree), list(tree))
        return type(tree)((k, reorder(tree[k], orders)) for k in keys) \
            if type(tree) is dict else tree
    if type(tree) in (list, tuple):
        return type(tree)(reorder(v, orders) for v in tree)
    return tree
