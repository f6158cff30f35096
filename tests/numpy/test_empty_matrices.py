"""0x0 matrices (and batches of them) in linear algebra, as JAX and PyTorch give them:
``det`` 1, ``slogdet`` (1, 0), ``inv`` empty; and ``lax.cumsum``'s default axis."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as jnp
import funcgrad.torch as ft
from funcgrad import lax

SHAPES = [(0, 0), (2, 0, 0), (0, 3, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["det", "slogdet", "inv"])
def test_jax_face(shape, name):
    got = getattr(jnp.linalg, name)(jnp.ones(shape, np.float32))
    jax = pytest.importorskip("jax")
    want = getattr(jax.numpy.linalg, name)(jax.numpy.ones(shape, np.float32))
    for g, w in zip(fg.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want),
                    strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("expr", [
    "L.linalg.det(L.ones(0, 0))", "L.linalg.inv(L.ones(0, 0))", "L.linalg.slogdet(L.ones(0, 0))",
    "L.linalg.det(L.ones(2, 0, 0))", "L.linalg.cholesky(L.ones(0, 0))",
    "L.linalg.solve(L.ones(0, 0), L.ones(0, 2))", "L.linalg.eigh(L.ones(0, 0))",
    "L.linalg.qr(L.ones(0, 0))", "L.linalg.svd(L.ones(0, 0))",
])
def test_torch_face(expr):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    assert repr(eval(expr, {"L": ft})) == repr(eval(expr, {"L": torch}))


def test_lax_cumsum_default_axis_and_reverse():
    assert lax.cumsum(jnp.arange(4), reverse=True).tolist() == [6, 6, 5, 3]
    assert lax.cumsum(jnp.ones((2, 2))).tolist() == [[1.0, 1.0], [2.0, 2.0]]
