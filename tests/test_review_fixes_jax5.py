"""JAX-face details compared with JAX 0.10.2: ``lax.top_k`` and ``approx_max_k``/
``approx_min_k`` return lists; ``jnp.clip`` refuses complex values with JAX's ValueError;
complex ``max``/``min``/``ptp``; ``with_sharding_constraint``'s checks; ``spence``'s
derivative; ``vmap`` axes given as registered classes."""

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


def _floats(lo, hi):
    # Normal numbers only: XLA flushes subnormals to zero.
    return st.floats(lo, hi, allow_subnormal=False)


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float64, st.integers(3, 8), elements=_floats(-5, 5)),
       k=st.integers(1, 3), name=st.sampled_from(["top_k", "approx_max_k", "approx_min_k"]))
def test_top_k_family_returns_a_list_as_jax(x, k, name):
    ours = getattr(fg.lax, name)(x, k)
    theirs = getattr(jax.lax, name)(x, k)
    assert type(ours) is type(theirs) is list
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(theirs[0]))
    if name == "top_k":
        np.testing.assert_array_equal(np.asarray(ours[1]), np.asarray(theirs[1]))
    else:
        # Approximate: which of equal elements comes back is not specified (XLA's CPU
        # k=1 reduction keeps the last, its sort the first).
        np.testing.assert_array_equal(x[np.asarray(ours[1])], np.asarray(theirs[0]))


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
@given(x=hnp.arrays(np.float64, st.integers(0, 6), elements=_floats(-4, 4)),
       lo=st.none() | _floats(-2, 0), hi=st.none() | _floats(0, 2))
def test_clip_of_real_values_still_matches_jax(x, lo, hi):
    np.testing.assert_array_equal(np.asarray(fnp.clip(x, lo, hi)),
                                  np.asarray(jnp.clip(x, lo, hi)))


# ------------------------------------------------------------------ complex max/min/ptp

def _complex_arrays(max_dims=2):
    # Drawn from a small grid, so that equal real parts (and equal elements) are common.
    parts = st.integers(-2, 2).map(float)
    return hnp.array_shapes(min_dims=1, max_dims=max_dims, max_side=4).flatmap(
        lambda shape: st.tuples(hnp.arrays(np.float64, shape, elements=parts),
                                hnp.arrays(np.float64, shape, elements=parts))
    ).map(lambda ri: ri[0] + 1j * ri[1])


@settings(max_examples=30, deadline=None)
@given(z=_complex_arrays(), name=st.sampled_from(["max", "min", "ptp"]),
       axis_seed=st.integers(0, 3), keepdims=st.booleans())
def test_complex_max_min_ptp_follow_jax_lexicographic_order(z, name, axis_seed, keepdims):
    axis = None if axis_seed == 0 else (axis_seed - 1) % z.ndim
    ours = getattr(fnp, name)(z, axis=axis, keepdims=keepdims)
    theirs = getattr(jnp, name)(z, axis=axis, keepdims=keepdims)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    staged = fg.jit(lambda v: getattr(fnp, name)(v, axis=axis, keepdims=keepdims))(z)
    np.testing.assert_array_equal(np.asarray(staged), np.asarray(theirs))


@settings(max_examples=30, deadline=None)
@given(z=_complex_arrays(max_dims=1), dz=_complex_arrays(max_dims=1),
       name=st.sampled_from(["max", "min"]))
def test_complex_max_min_derivatives_follow_jax(z, dz, name):
    dz = np.resize(dz, z.shape)
    _, ours = fg.jvp(getattr(fnp, name), (z,), (dz,))
    _, theirs = jax.jvp(getattr(jnp, name), (z,), (dz,))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12)
    w = np.linspace(0.5, 1.5, z.size) + 0.25j

    def loss(np_, v):
        return np_.abs(getattr(np_, name)(v * w)) ** 2

    np.testing.assert_allclose(np.asarray(fg.grad(lambda v: loss(fnp, v))(z.real)),
                               np.asarray(jax.grad(lambda v: loss(jnp, v))(z.real)),
                               rtol=1e-12, atol=1e-12)
    batched = fg.vmap(lambda v: getattr(fnp, name)(v))(np.stack([z, z[::-1]]))
    np.testing.assert_array_equal(np.asarray(batched), np.asarray(
        jax.vmap(getattr(jnp, name))(np.stack([z, z[::-1]]))))


# ------------------------------------------------------------------ with_sharding_constraint

def _sharding_case(mod, name):
    mesh = mod.sharding.Mesh(np.array(mod.devices()[:1]), ("x",))
    P, NS = mod.sharding.PartitionSpec, mod.sharding.NamedSharding
    return {
        "none": lambda: None, "bare_spec": P, "string": lambda: "x",
        "bad_axis": lambda: NS(mesh, P("x", "y")), "named": lambda: NS(mesh, P("x")),
        "tree": lambda: (None, NS(mesh, P())),
        "single": lambda: mod.sharding.SingleDeviceSharding(mod.devices()[0]),
    }[name]


def _outcome(f):
    try:
        out = f()
    except (ValueError, TypeError, RuntimeError) as e:
        return "raised", isinstance(e, ValueError), isinstance(e, TypeError), \
            isinstance(e, RuntimeError)
    return [np.asarray(v).tolist() for v in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("name", ["none", "bare_spec", "string", "bad_axis", "named", "tree",
                                  "single"])
def test_with_sharding_constraint_checks_shardings_as_jax(name):
    def run(mod, np_):
        x = (np_.ones(2), np_.ones(3)) if name == "tree" else np_.ones(2)
        return _outcome(lambda: mod.lax.with_sharding_constraint(
            x, _sharding_case(mod, name)()))

    assert run(fg, fnp) == run(jax, jnp)


def test_with_sharding_constraint_takes_a_spec_inside_a_mesh():
    mesh = fg.sharding.Mesh(np.array(fg.devices()[:1]), ("x",))
    with fg.set_mesh(mesh):
        out = fg.jit(lambda v: fg.lax.with_sharding_constraint(
            v * 2, fg.sharding.PartitionSpec("x")))(fnp.ones(2))
    assert out.tolist() == [2.0, 2.0]


# ------------------------------------------------------------------ spence's derivative

@settings(max_examples=20, deadline=None)
@given(x=st.one_of(st.just(1.0), _floats(0.05, 3.0)))
def test_spence_derivative_is_its_closed_form_limit_included(x):
    # JAX's derivative is 0 at x = 1 and NaN above 1 (sharp_bits): finite differences of
    # SciPy's spence are the oracle.
    scipy_special = pytest.importorskip("scipy.special")
    h = 1e-6
    fd = (scipy_special.spence(x + h) - scipy_special.spence(x - h)) / (2 * h)
    g = fg.grad(fg.scipy.special.spence)(np.float64(x))  # (the suite runs at 64 bits)
    np.testing.assert_allclose(float(g), fd, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ vmap prefixes of custom nodes

def _pair_class(tree_util):
    @tree_util.register_pytree_node_class
    class Pair:
        def __init__(self, a, b, scale):
            self.a, self.b, self.scale = a, b, scale

        def tree_flatten(self):
            return (self.a, self.b), self.scale

        @classmethod
        def tree_unflatten(cls, scale, children):
            return cls(*children, scale)

    return Pair


@settings(max_examples=15, deadline=None)
@given(a=hnp.arrays(np.float64, (3, 2), elements=_floats(-2, 2)),
       b=hnp.arrays(np.float64, (2,), elements=_floats(-2, 2)),
       scale=st.sampled_from([1.0, 2.5]), out_axis=st.sampled_from([0, 1]))
def test_vmap_axes_given_as_registered_classes_follow_jax(a, b, scale, out_axis):
    results = []
    for mod in (fg, jax):
        Pair = _pair_class(mod.tree_util)
        f = mod.vmap(lambda p, Pair=Pair: Pair(p.a * p.scale + p.b, p.b, p.scale),
                     in_axes=(Pair(0, None, scale),), out_axes=Pair(out_axis, None, scale))
        out = f(Pair(a, b, scale))
        results.append((np.asarray(out.a), np.asarray(out.b)))
    for o, t in zip(*results):
        np.testing.assert_allclose(o, t, rtol=1e-12)


def test_vmap_axes_of_a_class_with_other_metadata_are_refused_as_jax():
    for mod in (fg, jax):
        Pair = _pair_class(mod.tree_util)
        with pytest.raises(ValueError):
            mod.vmap(lambda p: p.a, in_axes=(Pair(0, None, 2.0),))(
                Pair(np.ones((2, 3)), np.ones(3), 1.0))


@pytest.mark.parametrize("implementation", ["cudnn", "foo"])
def test_dot_product_attention_implementation_errors_follow_jax(implementation):
    q = np.ones((1, 2, 1, 4), np.float32)
    with pytest.raises((RuntimeError, ValueError)) as theirs:
        jax.nn.dot_product_attention(q, q, q, implementation=implementation)
    with pytest.raises((RuntimeError, ValueError)) as ours:
        fg.nn.dot_product_attention(q, q, q, implementation=implementation)
    assert type(ours.value) is type(theirs.value)
