"""What a compiled or vmapped function returns, as PyTorch returns it: ``torch.return_types``
tuples (``max(dim)``, ``sort``, ``slogdet``) hold real tensors, and dicts keep their key
order."""

from __future__ import annotations

import pytest

import funcgrad.torch as ft

CASES = [
    "L.compile(lambda a: a.max(dim=0))(A)", "L.compile(lambda a: a.max(dim=0))(A).values + 1",
    "L.compile(lambda a: L.linalg.slogdet(a))(L.eye(2) * 2)",
    "L.func.vmap(lambda a: a.max(0))(A)", "L.compile(lambda a: a.sort(dim=1))(A)",
    "L.func.vmap(lambda a: L.linalg.slogdet(a))(L.eye(2).expand(3, 2, 2) * 2)",
    "L.compile(lambda a: {'z': a, 'a': a + 1, 'n': {'y': a, 'b': a}})(L.ones(1))",
    "L.compile(lambda a: [{'q': a}, ({'k': a, 'c': a},)])(L.ones(1))",
]


@pytest.mark.parametrize("expr", CASES)
def test_outputs_as_torch(expr):
    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        return repr(eval(expr, {"L": L, "A": L.tensor([[1.0, 5.0], [3.0, 2.0]])}))

    assert run(ft) == run(torch)
