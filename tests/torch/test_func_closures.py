"""``torch.func`` transforms of functions that close over parameters: the results carry
the outer graph to those parameters, as in PyTorch (a gradient penalty built with
``vmap(grad(...))`` of a module trains the module's weights); checked against torch on
drawn inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft


def _run(L, w, b, x, kind):
    lin = L.nn.Linear(3, 1, dtype=L.float64)
    with L.no_grad():
        lin.weight.copy_(L.tensor(w))
        lin.bias.fill_(b)
    xt = L.tensor(x)
    if kind == "penalty":
        gx = L.func.vmap(L.func.grad(lambda xi: L.tanh(lin(xi)).sum()))(xt)
        loss = lin(xt).sum() + (gx.norm(dim=1) - 1).pow(2).mean()
    elif kind == "jacrev":
        loss = L.func.jacrev(lambda xx: (lin(xx) ** 3).sum())(xt).sum()
    elif kind == "hessian":
        loss = L.func.hessian(lambda xx: (lin(xx) ** 3).sum())(xt[0]).sum()
    else:  # grad_and_value, closure and argument both requiring grad
        xt.requires_grad_(True)
        g, v = L.func.grad_and_value(lambda xi: L.sin(lin(xi)).sum())(xt)
        loss = g.pow(2).sum() + v
    loss.backward()
    out = [loss.item(), lin.weight.grad.numpy().tolist(), lin.bias.grad.numpy().tolist()]
    if xt.requires_grad:
        out.append(xt.grad.numpy().tolist())
    return out


@given(hnp.arrays(np.float64, (1, 3), elements=st.floats(-1, 1)), st.floats(-1, 1),
       hnp.arrays(np.float64, (2, 3), elements=st.floats(-2, 2)),
       st.sampled_from(["penalty", "jacrev", "hessian", "grad_and_value"]))
@settings(deadline=None, max_examples=30)
def test_closed_over_parameters_get_gradients_as_torch(w, b, x, kind):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    ours, theirs = _run(ft, w, b, x, kind), _run(torch, w, b, x, kind)
    for a, c in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-9, atol=1e-12)


def test_no_graph_under_no_grad_and_parameters_untouched():
    lin = ft.nn.Linear(3, 1)
    w = lin.weight
    with ft.no_grad():
        g = ft.func.grad(lambda xi: lin(xi).sum())(ft.ones(3))
    assert not g.requires_grad and lin.weight is w and w.requires_grad
    g = ft.func.grad(lambda xi: ft.tanh(lin(xi)).sum())(ft.ones(3))
    assert g.requires_grad and lin.weight is w and w.requires_grad and w.grad_fn is None
