"""``tril`` / ``triu`` against JAX on drawn shapes and diagonals, their gradients, and the
program they stage: two index vectors (lengths n and m), never a mask of the matrix's
shape (it made every jitted ``tril`` of a 4096x4096 matrix carry a 16 MB constant, and
every eager one on a GPU copy it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
J = pytest.importorskip("jax.numpy")

MATRICES = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=4, min_side=0,
                                                    max_side=5),
                      elements=st.floats(-3, 3, allow_nan=False))


@settings(max_examples=40, deadline=None, database=None)
@given(MATRICES, st.integers(-6, 6), st.sampled_from(["tril", "triu"]))
def test_triangles_match_jax(x: np.ndarray, k: int, name: str) -> None:
    ours, theirs = getattr(jnp, name), getattr(J, name)
    with jax.enable_x64(True):
        want = np.asarray(theirs(x, k))
    np.testing.assert_array_equal(np.asarray(ours(x, k)), want)
    np.testing.assert_array_equal(np.asarray(fg.jit(lambda v: ours(v, k))(x)), want)
    if x.size:
        check_grads(lambda v: ours(v, k) * v, (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_triangles_stage_index_vectors_not_a_mask(name: str) -> None:
    closed = fg.make_jaxpr(lambda v: getattr(jnp, name)(v, 1))(np.ones((300, 200)))
    assert sum(np.size(c) for c in closed.consts) <= 300 + 200


@pytest.mark.parametrize("name", ["tril", "triu"])
def test_a_vector_is_refused_as_jax_refuses_it(name: str) -> None:
    with pytest.raises(ValueError) as theirs:
        getattr(J, name)(J.ones(3))
    with pytest.raises(ValueError) as ours:
        getattr(jnp, name)(jnp.ones(3))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.x32
def test_make_jaxpr_and_eval_shape_see_arguments_at_the_dtypes_in_use() -> None:
    """In 32-bit mode a float64 or int64 NumPy argument is staged as float32/int32, as jit
    and JAX stage it (make_jaxpr and eval_shape staged them as float64/int64)."""
    def f(v: Any, n: Any) -> Any:
        return v * 2, n + 1

    args = (np.ones(3, np.float64), np.int64(3))
    ours = fg.make_jaxpr(f)(*args)
    theirs = jax.make_jaxpr(f)(*args)
    assert [str(a) for a in ours.in_avals] == [str(a) for a in theirs.in_avals]
    assert [str(a) for a in ours.out_avals] == [str(a) for a in theirs.out_avals]
    # The abstract values print as JAX's: float32[3], ~float32[], ShapedArray(int32[]).
    assert [repr(a) for a in ours.in_avals] == [repr(a) for a in theirs.in_avals]
    weak = fg.make_jaxpr(lambda v: v)(2.0).in_avals[0]
    assert (str(weak), repr(weak)) == (str(jax.make_jaxpr(lambda v: v)(2.0).in_avals[0]),
                                       repr(jax.make_jaxpr(lambda v: v)(2.0).in_avals[0]))
    got = fg.eval_shape(f, *args)
    want = jax.eval_shape(f, *args)
    assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want]
