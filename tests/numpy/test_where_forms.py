"""``jnp.where``'s one-argument form (``nonzero``, with ``size=``/``fill_value=`` under
``jit``) and its argument errors, against JAX 0.10.2."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as jnp


@given(hnp.arrays(np.int32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                  elements=st.integers(-1, 1)), st.integers(0, 6), st.integers(-2, 2))
@settings(deadline=None, max_examples=40)
def test_one_argument_where_is_nonzero(a, size, fill):
    want = np.nonzero(a)
    got = jnp.where(jnp.asarray(a))
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    sized = fg.jit(lambda c: jnp.where(c, size=size, fill_value=fill))(jnp.asarray(a))
    for g, w in zip(sized, want, strict=True):
        expect = list(w[:size]) + [fill] * max(0, size - len(w))
        assert g.tolist() == expect
    jax = pytest.importorskip("jax")
    theirs = jax.numpy.where(a, size=size, fill_value=fill)
    assert [np.asarray(t).tolist() for t in theirs] == [g.tolist() for g in sized]


@pytest.mark.parametrize("call", [
    lambda L, c: L.where(c, 1.0), lambda L, c: L.where(c, None, 1.0),
    lambda L, c: L.where(c, 1.0, 2.0, size=3),
])
def test_where_argument_errors_as_jax(call):
    jax = pytest.importorskip("jax")
    c = np.array([0, 3, 0, 5]) > 0
    errors = []
    for L in (jnp, jax.numpy):
        with pytest.raises((TypeError, ValueError)) as info:
            call(L, c)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]
