"""Module hooks against PyTorch 2.13: full backward hooks and pre-hooks (seen gradients,
replaced gradients, the no-input-grad case, errors, node names) and forward hooks with
``with_kwargs``, ``prepend`` and ``always_call``, on drawn inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft


def _torch():
    return pytest.importorskip("torch", exc_type=ImportError)


def _run(L, x, w, scale, input_grad):
    lin = L.nn.Linear(3, 2, dtype=L.float64)
    with L.no_grad():
        lin.weight.copy_(L.tensor(w))
        lin.bias.fill_(0.5)
    log = []

    def full(m, gi, go):
        log.append(("full", [None if g is None else g.tolist() for g in gi],
                    [g.tolist() for g in go]))
        return tuple(None if g is None else g * scale for g in gi) if input_grad else None

    def pre(m, go):
        log.append(("pre", [g.tolist() for g in go]))
        return (go[0] * scale,)

    lin.register_full_backward_hook(full)
    lin.register_full_backward_pre_hook(pre)
    xt = L.tensor(x, requires_grad=input_grad)
    y = lin(xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (y * L.tensor(np.arange(float(y.numel())).reshape(tuple(y.shape)))).sum().backward()
    return (type(y.grad_fn).__name__, log, None if xt.grad is None else xt.grad.tolist(),
            lin.weight.grad.tolist())


@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.just(3)),
                  elements=st.floats(-2, 2)),
       hnp.arrays(np.float64, (2, 3), elements=st.floats(-1, 1)),
       st.sampled_from([1.0, 2.0, -0.5]), st.booleans())
@settings(deadline=None, max_examples=25)
def test_full_backward_hooks_as_torch(x, w, scale, input_grad):
    torch = _torch()
    ours, theirs = _run(ft, x, w, scale, input_grad), _run(torch, x, w, scale, input_grad)
    assert ours[0] == theirs[0]
    assert len(ours[1]) == len(theirs[1])
    for a, b in zip(ours[1], theirs[1], strict=True):
        assert a[0] == b[0]
        for u, v in zip(a[1:], b[1:], strict=True):
            for p, q in zip(u, v, strict=True):
                assert (p is None) == (q is None)
                if p is not None:
                    np.testing.assert_allclose(p, q, rtol=1e-12)
    for a, b in zip(ours[2:], theirs[2:], strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_hook_errors_and_the_no_input_grad_warning_as_torch():
    torch = _torch()

    def run(L):
        lin = L.nn.Linear(2, 1)
        got = []
        h = lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        try:
            lin(L.ones(1, 2, requires_grad=True)).sum().backward()
        except RuntimeError as e:
            got.append(str(e))
        h.remove()
        h = lin.register_full_backward_hook(lambda m, gi, go: (L.ones(1, 2),))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                lin(L.ones(1, 2)).sum().backward()
            except RuntimeError as e:
                got.append(str(e))
        got += [str(m.message) for m in w if "Full backward hook" in str(m.message)]
        return got

    assert run(ft) == run(torch)


def test_forward_hooks_with_kwargs_prepend_and_always_call_as_torch():
    torch = _torch()

    def run(L):
        m = L.nn.Linear(2, 2)
        with L.no_grad():
            m.weight.fill_(1.0)
            m.bias.fill_(0.25)
        seen = []
        m.register_forward_pre_hook(lambda mod, a, k: ((a[0] * 2,), k), with_kwargs=True)
        m.register_forward_hook(lambda mod, a, k, o: o + 1, with_kwargs=True)
        m.register_forward_hook(lambda mod, a, o: o * 3, prepend=True)
        m.register_forward_hook(lambda mod, a, o: seen.append(o is None), always_call=True)
        out = m(L.ones(1, 2)).tolist()
        try:
            m(L.ones(1, 5))
        except RuntimeError:
            seen.append("raised")
        return out, seen

    assert run(ft) == run(torch)


def test_node_hooks_and_prehooks_as_torch():
    """``grad_fn.register_hook(hook(grad_inputs, grad_outputs))`` and
    ``register_prehook(hook(grad_outputs))`` run, see and may replace gradients."""
    torch = _torch()

    def run(L):
        got = []
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: got.append(
            ([None if g is None else g.tolist() for g in gi], [g.tolist() for g in go])))
        y.sum().backward()
        got += [x.grad.tolist(), w.grad.tolist()]
        x.grad = w.grad = None
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[1]))
        y.sum().backward()
        got += [x.grad.tolist(), w.grad.tolist()]
        x.grad = None
        y = x * 2
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        y.sum().backward()
        got.append(x.grad.tolist())
        x.grad = None
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 5,)).remove()
        y.sum().backward()
        got.append(x.grad.tolist())
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0]))
        try:
            y.sum().backward()
        except RuntimeError as e:
            got.append(str(e))
        return got

    assert run(ft) == run(torch)
