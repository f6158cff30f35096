"""``jvp``, ``linearize``, ``vjp`` and ``jacrev`` with integer and boolean values, as JAX's:
an integer primal takes a ``float0`` tangent (anything else is JAX's TypeError), an integer
output has a ``float0`` tangent and takes a ``float0`` cotangent, a float primal refuses a
``float0`` or differently typed tangent, and ``jacrev`` refuses integer outputs. Compared
with JAX 0.10.2 at 64 bits; ``torch.func.jvp`` keeps PyTorch's rules."""

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

F0 = fg.dtypes.float0


def _same_tangent(ours, theirs):
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape
    if t.dtype == jax.dtypes.float0:
        assert o.dtype == F0
    else:
        assert o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=4),
                    elements=st.floats(-3, 3, allow_subnormal=False)),  # (XLA: FTZ)
       n=st.integers(-5, 5), idt=st.sampled_from([np.int32, np.int64, np.bool_]))
def test_integer_primals_take_float0_and_integer_outputs_give_float0(x, n, idt):
    ni = np.full(x.shape, n, idt)
    t = np.cos(x)

    def f(np_, a, k):
        return (np_.sin(a) * k, k * 2, a > 0)

    ours = fg.jvp(lambda a, k: f(fnp, a, k), (x, ni), (t, np.zeros(x.shape, F0)))
    theirs = jax.jvp(lambda a, k: f(jnp, a, k), (x, ni),
                     (t, np.zeros(x.shape, jax.dtypes.float0)))
    for o, th in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(np.asarray(o), np.asarray(th), rtol=1e-12)
    for o, th in zip(ours[1], theirs[1]):
        _same_tangent(o, th)


@settings(max_examples=15, deadline=None)
@given(x=st.floats(-3, 3), n=st.integers(-4, 4))
def test_linearize_takes_and_gives_float0(x, n):
    def f(np_, a, k):
        return np_.exp(a) * k, k + 1

    _, ours = fg.linearize(lambda a, k: f(fnp, a, k), x, n)
    _, theirs = jax.linearize(lambda a, k: f(jnp, a, k), x, n)
    for o, th in zip(ours(1.5, np.zeros((), F0)), theirs(1.5, np.zeros((), jax.dtypes.float0))):
        _same_tangent(o, th)
    with pytest.raises(ValueError):
        theirs(1.5, 0)
    with pytest.raises(ValueError, match="linearized function"):
        ours(1.5, 0)


@pytest.mark.parametrize(("primal", "tangent"), [
    (np.ones(2, np.int32), np.ones(2, np.int32)),       # int tangent for an int primal
    (np.ones(2, np.int32), np.ones(2, np.float32)),
    (np.ones(2, np.float32), np.zeros(2, F0)),          # float0 for a float primal
    (np.ones(2, np.float32), np.ones(2, np.float16)),
    (np.ones(2, np.complex64), np.ones(2, np.float32)),
    (1.0, 1),
    (1, 1.0),
])
def test_mismatched_tangent_dtypes_raise_jax_type_error(primal, tangent):
    with pytest.raises(TypeError) as theirs:
        jax.jvp(lambda a: a * 2, (primal,), (tangent,))
    with pytest.raises(TypeError, match="tangent dtype") as ours:
        fg.jvp(lambda a: a * 2, (primal,), (tangent,))
    assert "must be float0" in str(theirs.value) and "must be float0" in str(ours.value)


@pytest.mark.parametrize("tangent", [np.ones(3, np.float32), np.zeros(3, F0)])
def test_shape_mismatch_is_a_value_error(tangent):
    primal = np.ones(2, np.float32) if tangent.dtype != F0 else np.ones(2, np.int32)
    with pytest.raises(ValueError):
        jax.jvp(lambda a: a * 2, (primal,), (tangent,))
    with pytest.raises(ValueError, match="shapes"):
        fg.jvp(lambda a: a * 2, (primal,), (tangent,))


def test_torch_func_jvp_keeps_pytorch_rules():
    from funcgrad import torch

    out, t = torch.func.jvp(lambda a: (a * 2).sum(), (torch.ones(3),), (torch.ones(3),))
    assert float(t) == 6.0
    assert type(t) is torch.Tensor


@settings(max_examples=15, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=3),
                    elements=st.floats(-3, 3, allow_subnormal=False)),
       ct_kind=st.sampled_from(["float0", "int", "python"]))
def test_vjp_takes_float0_cotangents_for_integer_outputs(x, ct_kind):
    def f(np_, a):
        return a * 2.0, np_.round(a).astype(int), a > 0

    def ct(mod, shape):
        if ct_kind == "float0":
            return np.zeros(shape, mod.dtypes.float0)
        return np.zeros(shape, np.int32) if ct_kind == "int" else 0

    (_, f_ours), (_, f_theirs) = fg.vjp(lambda a: f(fnp, a), x), \
        jax.vjp(lambda a: f(jnp, a), x)
    u = np.cos(x)
    if ct_kind == "python" and x.ndim:
        # A Python 0 for a non-scalar output: JAX refuses the shape, so does funcgrad.
        with pytest.raises(ValueError):
            f_theirs((u, ct(jax, x.shape), ct(jax, x.shape)))
        with pytest.raises(ValueError):
            f_ours((u, ct(fg, x.shape), ct(fg, x.shape)))
        return
    (ours,) = f_ours((u, ct(fg, x.shape), ct(fg, x.shape)))
    (theirs,) = f_theirs((u, ct(jax, x.shape), ct(jax, x.shape)))
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12)


@pytest.mark.parametrize("out", ["int", "bool", "complex"])
def test_jacrev_refuses_non_float_outputs_as_jax(out):
    def f(np_, a):
        return {"int": lambda: a.astype(int), "bool": lambda: a > 0,
                "complex": lambda: a * (1 + 1j)}[out]()

    with pytest.raises(TypeError, match="jacrev requires real-valued outputs") as theirs:
        jax.jacrev(lambda a: f(jnp, a))(np.arange(2.0))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs") as ours:
        fg.jacrev(lambda a: f(fnp, a))(np.arange(2.0))
    assert str(theirs.value).split(",")[0] == str(ours.value).split(",")[0]
