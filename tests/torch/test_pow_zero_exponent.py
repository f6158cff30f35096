"""``x ** y`` where the exponent is 0: PyTorch gives the base a zero gradient there, where
the engine's (JAX's) rule gives nan at a zero base; number and tensor exponents, against
torch 2.13 on drawn values. (Second order at a zero base is a sharp bit: see below.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

values = st.lists(st.sampled_from([0.0, -1.5, 2.0, 0.5, 3.0]), min_size=1, max_size=4)


def _grads(L, x, y):
    a = L.tensor(x, dtype=L.float64, requires_grad=True)
    b = y if not isinstance(y, list) else L.tensor((y * len(x))[:len(x)], dtype=L.float64,
                                                   requires_grad=True)
    out = (a ** b).sum()
    (g,) = L.autograd.grad(out, a, create_graph=True)
    gg = None
    if g.requires_grad:
        (gg,) = L.autograd.grad(g.sum(), a)
    return out.detach().numpy(), g.detach().numpy(), g.requires_grad, gg


@given(x=values, y=st.one_of(st.sampled_from([0, 0.0, 2, 0.5, 3.0]),
                             st.lists(st.sampled_from([0.0, 2.0, 0.5, 3.0]), min_size=1,
                                      max_size=4)))
@settings(max_examples=40, deadline=None)
def test_pow_gradients_where_the_exponent_is_zero_as_torch(x, y):
    ours, theirs = _grads(ft, x, y), _grads(torch, x, y)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, equal_nan=True)
    assert ours[2] == theirs[2]
    # (Second order at a zero base with a tensor exponent: PyTorch's double backward gives
    # nan where the exponent is 0, funcgrad 0; a sharp bit.)
    if ours[3] is not None and not (isinstance(y, list) and 0.0 in x):
        np.testing.assert_allclose(ours[3].numpy(), theirs[3].numpy(), rtol=1e-12,
                                   equal_nan=True)


def _bits(t):
    v = t.detach().numpy()
    return v.tolist(), np.signbit(v[~np.isnan(v)]).tolist()  # (a NaN's sign is not kept)


@given(x=st.lists(st.sampled_from([0.0, -0.0, -np.inf, np.inf, -1.0, 4.0, 0.25]),
                  min_size=1, max_size=5),
       e=st.sampled_from([0.5, -0.5, 2.0, 1.5]),
       dtype=st.sampled_from(["float32", "float64"]),
       form=st.sampled_from(["op", "method", "inplace", "tensor"]))
@settings(max_examples=40, deadline=None)
def test_half_exponents_at_signed_zeros_and_infinities_as_torch(x, e, dtype, form):
    # PyTorch takes a number exponent 0.5 / -0.5 as sqrt / rsqrt ((-0.) ** 0.5 is -0,
    # (-inf) ** 0.5 NaN) and a tensor exponent as C's pow (+0 and +inf).
    res = []
    for L in (torch, ft):
        a = L.tensor(x, dtype=getattr(L, dtype))
        if form == "op":
            y = a ** e
        elif form == "method":
            y = L.pow(a, e)
        elif form == "inplace":
            y = a.clone().pow_(e)
        else:
            y = a ** L.full_like(a, e)
        res.append(_bits(y))
    assert str(res[1]) == str(res[0])
