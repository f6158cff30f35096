"""``torch.func`` transforms keep dicts in insertion order, as PyTorch's pytrees do (the
engine's pytrees sort keys, JAX's rule): gradients zip with ``named_parameters()``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

_names = st.lists(st.sampled_from(["z", "a", "weight", "bias", "m", "b0"]), min_size=1,
                  max_size=4, unique=True)


def _run(L, keys):
    params = {k: L.ones(i + 1) * (i + 1) for i, k in enumerate(keys)}
    g = L.func.grad(lambda p: sum((v ** 2).sum() for v in p.values()))(params)
    v = L.func.vmap(lambda x: {k: x * (i + 1) for i, k in enumerate(reversed(keys))})(
        L.ones(2))
    # (an output dict with the input's keys in another order takes the input's order: the
    # documented difference; these outputs name their keys apart)
    j = L.func.jacrev(lambda p: {k + "_": p[k].sum() for k in reversed(keys)})(params)
    ga, aux = L.func.grad(lambda p: (p[keys[0]].sum(),
                                     {k + "_": p[k] for k in reversed(keys)}),
                          has_aux=True)(params)
    m = L.nn.Linear(2, 1)
    gm = L.func.grad(lambda p: L.func.functional_call(m, p, (L.ones(1, 2),)).sum())(
        dict(m.named_parameters()))
    return [list(g), list(v), list(j), [list(x) for x in j.values()], list(ga), list(aux),
            list(gm)]


@given(_names)
@settings(deadline=None, max_examples=20)
def test_dict_orders_as_torch(keys):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    assert _run(ft, keys) == _run(torch, keys)
