"""JAX-face details compared with JAX 0.10.2: ``lax.top_k`` and ``approx_max_k``/
``approx_min_k`` return lists, and ``jnp.clip`` refuses complex values with JAX's
ValueError."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(3, 8), elements=st.floats(-5, 5)),
       k=st.integers(1, 3), name=st.sampled_from(["top_k", "approx_max_k", "approx_min_k"]))
def test_top_k_family_returns_a_list_as_jax(x, k, name):
    ours = getattr(fg.lax, name)(x, k)
    theirs = getattr(jax.lax, name)(x, k)
    assert type(ours) is type(theirs) is list
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


@pytest.mark.parametrize(("arr", "lo", "hi"), [
    (np.array([1 + 2j, -1j]), None, None),
    (np.array([1 + 2j, -1j]), 0, 1),
    (np.array([1.0, 2.0]), 1j, None),
    (np.array([1.0, 2.0]), None, np.complex64(2)),
])
def test_clip_of_complex_values_raises_jax_value_error(arr, lo, hi):
    with pytest.raises(ValueError, match="Complex values have no ordering") as theirs:
        jnp.clip(arr, lo, hi)
    with pytest.raises(ValueError, match="Complex values have no ordering") as ours:
        fnp.clip(arr, lo, hi)
    assert type(ours.value) is type(theirs.value)


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(0, 6), elements=st.floats(-4, 4)),
       lo=st.none() | st.floats(-2, 0), hi=st.none() | st.floats(0, 2))
def test_clip_of_real_values_still_matches_jax(x, lo, hi):
    np.testing.assert_array_equal(np.asarray(fnp.clip(x, lo, hi)),
                                  np.asarray(jnp.clip(x, lo, hi)))
