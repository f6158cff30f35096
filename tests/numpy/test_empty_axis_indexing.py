"""Advanced indexing into an axis of size 0: an empty index gives an empty result (JAX's
gather), a non-empty one is refused; eagerly, under jit, grad and vmap, against JAX."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytestmark = pytest.mark.x32


@given(rest=st.lists(st.integers(0, 3), min_size=0, max_size=2),
       index_shape=st.lists(st.integers(0, 2), min_size=1, max_size=2).filter(
           lambda s: 0 in s),
       at=st.integers(0, 2), as_mask=st.booleans())
@settings(max_examples=30, deadline=None)
def test_empty_index_into_an_empty_axis_as_jax(rest, index_shape, at, as_mask):
    shape = list(rest)
    at = min(at, len(shape))
    shape.insert(at, 0)
    x = np.zeros(shape, np.float32)
    idx = np.zeros((0,), bool) if as_mask else np.zeros(index_shape, np.int32)
    key = (slice(None),) * at + (idx,)
    ours, theirs = fnp.asarray(x)[key], jnp.asarray(x)[key]
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert fg.jit(lambda v: v[key])(x).shape == theirs.shape
    assert fg.grad(lambda v: v[key].sum())(x).shape == x.shape
    assert fg.vmap(lambda v: v[key])(np.stack([x, x])).shape == (2, *theirs.shape)


def test_a_non_empty_index_into_an_empty_axis_is_refused():
    with pytest.raises(Exception, match="out of bounds for an axis of size 0"):
        fnp.zeros((0, 3))[fnp.asarray(np.array([0], np.int32))]
    with pytest.raises(TypeError):
        jnp.zeros((0, 3))[jnp.asarray(np.array([0], np.int32))]
