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
