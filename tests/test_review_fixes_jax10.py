"""The order of complex numbers, as JAX 0.10.2 (XLA on the CPU) has it: ``lax.max``/``min``
(by real part, then imaginary part, no NaN propagation), ``reduce_max``/``reduce_min`` (a
left fold from the identity), ``cummax``/``cummin`` (XLA's tiled scan), ``sort``/``argsort``
(lexicographic, NaN last in each part), ``argmax``/``argmin`` refusing complex input, and
the derivatives through them, compared with real JAX."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax

jax = pytest.importorskip("jax")
jnp = jax.numpy
jlax = jax.lax

pytestmark = pytest.mark.usefixtures("jax_x64")

_PARTS = [0.0, -0.0, 1.0, 2.0, -1.0, np.nan, np.inf, -np.inf]


@st.composite
def _complex_arrays(draw, max_dims=3, max_side=5, nan=True, min_side=1):
    dtype = draw(st.sampled_from([np.complex64, np.complex128]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=max_dims, min_side=min_side,
                                  max_side=max_side))
    parts = _PARTS if nan else [p for p in _PARTS if not np.isnan(p)]
    re = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from(parts)))
    im = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from(parts)))
    out = np.empty(shape, dtype)
    out.real, out.imag = re, im
    return out


def _same(ours, theirs):
    """Same dtype, and bit for bit the same parts (NaN matching NaN, signs of zeros)."""
    a, b = np.asarray(ours), np.asarray(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    for f in (np.real, np.imag):
        np.testing.assert_array_equal(f(a), f(b))
        np.testing.assert_array_equal(np.signbit(f(a)), np.signbit(f(b)))


@settings(max_examples=40, deadline=None)
@given(x=_complex_arrays(), data=st.data())
def test_lax_max_min_of_complex_as_jax(x, data):
    y = data.draw(_complex_arrays().filter(lambda a: True).map(
        lambda a: np.resize(a, x.shape).astype(x.dtype)))
    for name in ("max", "min"):
        _same(getattr(flax, name)(x, y), getattr(jlax, name)(x, y))
        _same(getattr(fnp, name + "imum")(x, y), getattr(jnp, name + "imum")(x, y))


@settings(max_examples=40, deadline=None)
@given(x=_complex_arrays(max_side=4), data=st.data())
def test_reduce_max_min_of_complex_as_jax(x, data):
    # Up to 32 reduced elements: XLA splits longer reductions into a tree.
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, x.ndim - 1), min_size=1))))
    for name in ("reduce_max", "reduce_min"):
        _same(getattr(flax, name)(x, axes), getattr(jlax, name)(x, axes))
        _same(fg.jit(lambda v, n=name: getattr(flax, n)(v, axes))(x),
              getattr(jlax, name)(x, axes))


def test_reduce_max_of_single_complex_as_jax():
    x = np.array([complex(np.inf, 1.0)], np.complex64)  # one element: itself, not the fold
    _same(flax.reduce_min(x, (0,)), jlax.reduce_min(x, (0,)))
    x = np.array([complex(-np.inf, -1.0), complex(-np.inf, -2.0)], np.complex64)
    _same(flax.reduce_max(x, (0,)), jlax.reduce_max(x, (0,)))  # the identity, -inf+0j


@settings(max_examples=40, deadline=None)
@given(x=_complex_arrays(max_dims=2, max_side=40), reverse=st.booleans(), data=st.data())
def test_cummax_cummin_of_complex_as_jax(x, reverse, data):
    axis = data.draw(st.integers(0, x.ndim - 1))
    for name in ("cummax", "cummin"):
        _same(getattr(flax, name)(x, axis=axis, reverse=reverse),
              getattr(jlax, name)(x, axis=axis, reverse=reverse))


def test_long_cummax_of_complex_as_jax():
    rng = np.random.default_rng(0)
    for n in (17, 100, 300):
        x = np.empty((2, n), np.complex64)
        x.real, x.imag = rng.choice(_PARTS, (2, n)), rng.choice(_PARTS, (2, n))
        for name in ("cummax", "cummin"):
            for reverse in (False, True):
                _same(getattr(flax, name)(x, axis=1, reverse=reverse),
                      getattr(jlax, name)(x, axis=1, reverse=reverse))


@settings(max_examples=40, deadline=None)
@given(x=_complex_arrays(max_dims=2, max_side=6))
def test_sort_argsort_of_complex_as_jax(x):
    _same(flax.sort(x), jlax.sort(x))
    _same(flax.sort(x, dimension=0), jlax.sort(x, dimension=0))
    _same(fnp.sort(x, axis=0), jnp.sort(x, axis=0))
    np.testing.assert_array_equal(fnp.argsort(x), jnp.argsort(x))
    keys, vals = flax.sort((x, np.arange(x.size).reshape(x.shape)), num_keys=1)
    jkeys, jvals = jlax.sort((x, jnp.arange(x.size).reshape(x.shape)), num_keys=1)
    _same(keys, jkeys)
    np.testing.assert_array_equal(vals, jvals)


def test_sort_of_complex_example():
    x = np.array([3, complex(np.nan, 0), complex(2, -1), complex(0, np.nan), 1 + 2j,
                  complex(np.nan, np.nan)], np.complex64)
    _same(flax.sort(x), jlax.sort(x))
    _same(flax.sort(x), np.array([complex(0, np.nan), 1 + 2j, 2 - 1j, 3,
                                  complex(np.nan, 0), complex(np.nan, np.nan)], np.complex64))


def test_argmax_argmin_refuse_complex_as_jax():
    x = np.array([1 + 2j, 3 + 0j], np.complex64)
    for ours, theirs in ((lambda: flax.argmax(x, 0, np.int32),
                          lambda: jlax.argmax(x, 0, jnp.int32)),
                         (lambda: flax.argmin(x, 0, np.int32),
                          lambda: jlax.argmin(x, 0, jnp.int32)),
                         (lambda: fnp.argmax(x), lambda: jnp.argmax(x))):
        with pytest.raises(TypeError) as theirs_err:
            theirs()
        with pytest.raises(TypeError) as ours_err:
            ours()
        assert str(theirs_err.value).split("\n")[0] in str(ours_err.value)


# ------------------------------------------------------------------------ derivatives


def _grads(fun_f, fun_j, z):
    return (np.asarray(fg.grad(fun_f)(z)), np.asarray(jax.grad(fun_j)(z)))


@settings(max_examples=12, deadline=None)
@given(x=_complex_arrays(max_dims=1, max_side=8, nan=False), data=st.data())
def test_derivatives_of_complex_max_min_as_jax(x, data):
    x = x.astype(np.complex128)
    w = np.arange(1, x.size + 1, dtype=np.float64)
    y = x[::-1].copy()
    cases = [
        (lambda z: fnp.real(flax.max(z, y) * w).sum(),
         lambda z: jnp.real(jlax.max(z, y) * w).sum()),
        (lambda z: fnp.imag(flax.min(z, z[::-1])).sum(),
         lambda z: jnp.imag(jlax.min(z, z[::-1])).sum()),
        (lambda z: fnp.real(flax.reduce_max(z, (0,))),
         lambda z: jnp.real(jlax.reduce_max(z, (0,)))),
        (lambda z: fnp.imag(flax.reduce_min(z, (0,))),
         lambda z: jnp.imag(jlax.reduce_min(z, (0,)))),
        (lambda z: fnp.real(flax.cummax(z) * w).sum(),
         lambda z: jnp.real(jlax.cummax(z) * w).sum()),
        (lambda z: fnp.imag(flax.cummin(z, reverse=True) * w).sum(),
         lambda z: jnp.imag(jlax.cummin(z, reverse=True) * w).sum()),
        (lambda z: fnp.real(flax.sort(z) * w).sum(),
         lambda z: jnp.real(jlax.sort(z) * w).sum()),
    ]
    for f, j in cases:
        ours, theirs = _grads(f, j, x)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


def test_derivative_of_complex_max_matches_finite_differences():
    # Distinct finite values: the real part of the maximum is locally a coordinate.
    z = np.array([1 + 2j, 3 + 0j, 4 + 1j, 2 + 5j])

    def f(v):
        return fnp.real(flax.reduce_max(v, (0,)) + flax.cummax(v).sum()
                        + (flax.sort(v) * np.arange(4)).sum())

    g = np.asarray(fg.grad(f)(z))
    eps = 1e-6
    for i in range(z.size):
        for unit, part in ((1.0, np.real), (1j, np.imag)):
            dz = np.zeros_like(z)
            dz[i] = unit * eps
            fd = (float(f(z + dz)) - float(f(z - dz))) / (2 * eps)
            # JAX's convention: grad = df/dx - i df/dy.
            assert abs(fd - (part(g[i]) if unit == 1.0 else -part(g[i]))) < 1e-6
