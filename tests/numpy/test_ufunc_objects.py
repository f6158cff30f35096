"""``jnp.add``, ``jnp.multiply``, ... as ufunc objects: ``reduce`` (axis, keepdims,
initial, where, dtype), ``accumulate``, ``reduceat``, ``outer`` and ``at``, against JAX on
drawn arrays of each dtype kind."""

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
pytestmark = pytest.mark.x32

NAMES = ["add", "multiply", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or",
         "bitwise_xor", "logical_and", "logical_or", "logical_xor", "logaddexp", "logaddexp2"]
DTYPES = [np.int32, np.uint8, np.float32, np.bool_]


def _outcome(f):
    try:
        r = np.asarray(f())
    except (TypeError, ValueError, NotImplementedError) as e:
        return ("error", TypeError if isinstance(e, TypeError) else type(e))
    return ("ok", r.dtype, r.shape, r)


def _same(ours, theirs):
    assert ours[:2] == theirs[:2]
    if ours[0] == "ok":
        assert ours[2] == theirs[2]
        if ours[1].kind == "f":
            np.testing.assert_allclose(ours[3], theirs[3], rtol=2e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(ours[3], theirs[3])


def _arrays(dtype):
    if dtype == np.bool_:
        elements = st.booleans()
    elif dtype == np.float32:
        # (XLA's CPU flushes subnormals to zero: logical ops on them differ; a sharp bit)
        elements = st.floats(-4, 4, width=32, allow_subnormal=False)
    else:
        elements = st.integers(0 if dtype == np.uint8 else -9, 9)
    return hnp.arrays(dtype, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                      elements=elements)


@pytest.mark.parametrize("name", NAMES)
def test_attributes_and_repr_as_jax(name):
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    assert repr(ours) == repr(theirs)
    assert (ours.nin, ours.nout, ours.nargs, ours.identity, ours.__name__) == \
        (theirs.nin, theirs.nout, theirs.nargs, theirs.identity, theirs.__name__)
    assert ours == getattr(fnp, name) and hash(ours) == hash(getattr(fnp, name))


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
@settings(max_examples=12, deadline=None)
def test_reduce_accumulate_outer_as_jax(name, data, dtype):
    x = data.draw(_arrays(dtype))
    axis = data.draw(st.sampled_from([None, 0, -1]))
    keepdims = data.draw(st.booleans())
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    for call in (lambda u: u.reduce(x, axis=axis, keepdims=keepdims),
                 lambda u: u.accumulate(x, axis=0),
                 lambda u: u.outer(x.ravel()[:3], x.ravel()[-2:])):
        _same(_outcome(lambda c=call: c(ours)), _outcome(lambda c=call: c(theirs)))
    if name not in {"logaddexp", "logaddexp2"} and x.size:
        # (JAX's logaddexp.reduce fails on initial=; funcgrad's takes it.)
        mask = data.draw(hnp.arrays(np.bool_, x.shape[-1:]))
        _same(_outcome(lambda: ours.reduce(x, axis=-1, where=mask, initial=1)),
              _outcome(lambda: theirs.reduce(x, axis=-1, where=mask, initial=1)))
        _same(_outcome(lambda: ours.reduce(x, axis=-1, where=mask)),
              _outcome(lambda: theirs.reduce(x, axis=-1, where=mask)))


@pytest.mark.parametrize("name", NAMES)
@given(data=st.data(), dtype=st.sampled_from(DTYPES))
@settings(max_examples=6, deadline=None)  # per ufunc: JAX compiles each drawn shape
def test_at_and_reduceat_as_jax(name, data, dtype):
    x = data.draw(_arrays(dtype).filter(lambda a: a.ndim == 2 and a.size))
    rows = data.draw(hnp.arrays(np.int32, st.integers(1, 4), elements=st.integers(
        -x.shape[0], x.shape[0] - 1)))
    cols = data.draw(hnp.arrays(np.int32, rows.shape, elements=st.integers(0, x.shape[1] - 1)))
    b = x.ravel()[0]
    ours, theirs = getattr(fnp, name), getattr(jnp, name)
    for idx in ((rows, cols), rows):  # (JAX's jit-wrapped at refuses slices)
        _same(_outcome(lambda i=idx: ours.at(x, i, b, inplace=False)),
              _outcome(lambda i=idx: theirs.at(x, i, b, inplace=False)))
    starts = np.sort(data.draw(hnp.arrays(np.int32, st.integers(1, 3),
                                          elements=st.integers(0, x.shape[1] - 1))))
    mine, jaxs = _outcome(lambda: ours.reduceat(x, starts, axis=1)), \
        _outcome(lambda: theirs.reduceat(x, starts, axis=1))
    _same(mine, jaxs)


def test_at_needs_inplace_false_and_fast_paths_are_the_reductions():
    with pytest.raises(NotImplementedError, match="inplace=False"):
        fnp.add.at(fnp.zeros(3), 0, 1.0)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(fnp.add.reduce(x, axis=(0, 1)), jnp.add.reduce(x, axis=(0, 1)))
    with pytest.raises(NotImplementedError):
        fnp.add(x, x, out=x)


def test_ufunc_methods_under_grad_and_jit():
    x = np.array([0.5, -1.0, 2.0])

    def f(v):
        return fnp.multiply.reduce(v) + fnp.logaddexp.reduce(v) + \
            fnp.add.at(v, np.array([0, 0]), v[1], inplace=False).sum()

    def g(v):
        return jnp.multiply.reduce(v) + jnp.logaddexp.reduce(v) + \
            jnp.add.at(v, np.array([0, 0]), v[1], inplace=False).sum()

    np.testing.assert_allclose(fg.grad(f)(x), jax.grad(g)(x), rtol=1e-6)
    np.testing.assert_allclose(fg.jit(f)(x), jax.jit(g)(x), rtol=1e-6)
