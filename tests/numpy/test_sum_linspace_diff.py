"""``sum``/``prod(promote_integers=False)``, ``linspace`` to an integer dtype (floored) and
``diff`` of booleans or with ``prepend``/``append``, against JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad.numpy as fnp

pytestmark = pytest.mark.x32  # compared with JAX at its 32-bit default

CASES = [
    "L.sum(L.array([True, True]), promote_integers=False)",
    "L.prod(L.array([1, 2], L.int8), promote_integers=False)",
    "L.sum(L.array([1, 2], L.uint8), promote_integers=False)",
    "L.sum(L.array([100, 100], L.int8), promote_integers=False)",
    "L.linspace(-1, 1, 7, dtype=L.int32)", "L.linspace(0, 10, 4, dtype=L.int32)",
    "L.linspace(-2.5, 2.5, 5, dtype=L.int32)", "L.linspace(-3, 3, 4, dtype=L.uint8)",
    "L.diff(L.array([True, False, True]))",
    "L.diff(L.array([1, 5, 2]), n=2, prepend=0, append=L.array([9]))",
    "L.diff(L.array([[1, 2], [3, 5]]), axis=0, prepend=L.zeros((1, 2), int))",
    "L.diff(L.array([[1.0, 2.0], [3.0, 5.0]]), append=7.0)",
]


@pytest.mark.parametrize("expr", CASES)
def test_as_jax(expr):
    jax = pytest.importorskip("jax")

    def run(L):
        out = eval(expr, {"L": L})
        return np.asarray(out).tolist(), np.dtype(out.dtype).name

    assert run(fnp) == run(jax.numpy)


@pytest.mark.parametrize("expr", [
    "L.round(L.array([1.6 + 2.4j, -0.5 - 1.5j]))", "L.round(L.array([1.5 + 2.5j]), 0)",
    "L.meshgrid(L.arange(2), L.arange(3), sparse=True)",
    "L.meshgrid(L.arange(2), L.arange(3), L.arange(4), sparse=True, indexing='ij')",
    "L.einsum(L.ones((2, 3, 4)), [0, 1, 2], L.ones((4, 5)), [2, 3], [0, 1, 3])",
    "L.einsum(L.arange(6.0).reshape(2, 3), [0, 1])",
    "L.einsum(L.arange(4.0).reshape(2, 2), [0, 0])",
    "L.einsum(L.ones((2, 3)), [Ellipsis, 1], [1])",
])
def test_more_forms_as_jax(expr):
    jax = pytest.importorskip("jax")

    def run(L):
        out = eval(expr, {"L": L})
        outs = out if isinstance(out, list) else [out]
        return [(np.asarray(o).tolist(), np.dtype(o.dtype).name) for o in outs]

    assert run(fnp) == run(jax.numpy)
