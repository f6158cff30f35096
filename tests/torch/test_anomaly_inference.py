"""Anomaly detection (``torch.autograd.detect_anomaly``) and inference tensors
(``torch.inference_mode``), checked against PyTorch 2.13: each program runs on both faces
and what it prints (values, flags, error types and texts) must agree.
"""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import _anomaly


def _torch():
    return pytest.importorskip("torch", exc_type=ImportError)


def _outcome(fn):
    """What a program does: its value, or its error's type and text."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome being compared
        return ("raised", type(e).__name__, str(e))
    if hasattr(out, "detach"):
        # As text: NaN compares equal to NaN there.
        return ("value", repr(np.asarray(out.detach().numpy()).tolist()))
    return ("value", out)


def _floats(text):
    return np.array([float(v) for v in text.strip("[]").split(",")])


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    _anomaly.set_anomaly_enabled(False, True)


# ----------------------------------------------------------------- anomaly mode


def _nan_programs(m):
    class Half(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 0.5

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    def sqrt_at_zero():
        x = m.tensor([0.0, 1.0], requires_grad=True)
        (m.sqrt(x) * 0).sum().backward()
        return x.grad

    def div_zero_by_zero():
        a = m.tensor([0.0], requires_grad=True)
        b = m.tensor([0.0], requires_grad=True)
        (a / b).sum().backward()
        return a.grad

    def custom_function():
        a = m.ones(2, requires_grad=True)
        Half.apply(a).sum().backward()
        return a.grad

    def composite_op():
        x = m.tensor([[0.0, float("inf")]], requires_grad=True)
        m.nn.functional.softmax(x, dim=1).sum().backward()
        return x.grad

    def fine():
        x = m.tensor([1.0, 4.0], requires_grad=True)
        (m.sqrt(x) * 3).sum().backward()
        return x.grad

    return [sqrt_at_zero, div_zero_by_zero, custom_function, composite_op, fine]


@pytest.mark.parametrize("check_nan", [True, False])
@pytest.mark.parametrize("k", range(5))
def test_nan_in_backward_raises_as_pytorch(k, check_nan):
    torch = _torch()
    got, want = [], []
    for m, out in ((ft, got), (torch, want)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly(check_nan=check_nan):
                out.append(_outcome(_nan_programs(m)[k]))
            # Outside the mode nothing is checked.
            out.append(_outcome(_nan_programs(m)[k]))
    assert got == want


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.0, 4.0), min_size=1, max_size=5), st.floats(-2.0, 2.0))
def test_nan_check_agrees_with_pytorch_on_drawn_values(xs, c):
    """sqrt'(0) * 0 is NaN; elsewhere the gradient is finite: the error comes exactly when
    PyTorch's does, and the gradients agree when it does not."""
    torch = _torch()
    results = []
    for m in (ft, torch):
        def prog(m=m):
            x = m.tensor(xs, dtype=m.float64, requires_grad=True)
            (m.sqrt(x) * c).sum().backward()
            return x.grad
        with m.autograd.set_detect_anomaly(True):
            results.append(_outcome(prog))
    got, want = results
    if want[0] == "value":
        assert got[0] == "value"
        np.testing.assert_allclose(_floats(got[1]), _floats(want[1]), rtol=1e-12)
    else:
        assert got == want


def test_failed_backward_warns_with_the_forward_traceback():
    x = ft.tensor([0.0, 1.0], requires_grad=True)
    with ft.autograd.set_detect_anomaly(True):
        y = ft.sqrt(x) * 0  # the line the warning names
        with pytest.warns(UserWarning) as rec, pytest.raises(RuntimeError):
            y.sum().backward()
    texts = [str(w.message) for w in rec]
    (text,) = [t for t in texts if t.startswith("Error detected in SqrtBackward0.")]
    assert "Traceback of forward call that caused the error:" in text
    assert "test_anomaly_inference.py" in text
    assert "y = ft.sqrt(x) * 0  # the line the warning names" in text
    # funcgrad's own frames are left out: the user's lines are what the trace is for.
    assert "funcgrad/torch" not in text


def test_error_in_custom_backward_warns_and_propagates():
    torch = _torch()

    def run(m):
        class Boom(m.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

            @staticmethod
            def backward(ctx, g):
                raise ValueError("boom")

        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with m.autograd.detect_anomaly():
                a = m.ones(2, requires_grad=True)
                out = _outcome(lambda: Boom.apply(a).sum().backward())
        return out, [str(w.message).split(".")[0] for w in rec if w.category is UserWarning]

    assert run(ft) == run(torch)


def test_node_made_outside_the_mode_has_no_forward_information():
    torch = _torch()
    texts = []
    for m in (ft, torch):
        x = m.tensor([0.0], requires_grad=True)
        y = (m.sqrt(x) * 0).sum()
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            with m.autograd.set_detect_anomaly(True):
                with pytest.raises(RuntimeError):
                    y.backward()
        # (NumPy's own RuntimeWarnings for 1/0 are not the subject here.)
        texts.append([str(w.message).split(" (Triggered")[0] for w in rec
                      if w.category is UserWarning])
    assert texts[0] == texts[1]


def test_detect_anomaly_warns_and_restores_flags():
    torch = _torch()
    seen = []
    for m in (ft, torch):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled") as rec:
            ctx = m.autograd.detect_anomaly(check_nan=False)
        flags = [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        with ctx:
            flags += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
            with m.autograd.set_detect_anomaly(False):
                flags += [m.is_anomaly_enabled()]
            flags += [m.is_anomaly_enabled()]
        flags += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        m.autograd.set_detect_anomaly(True, check_nan=False)  # a plain call sets the mode
        flags += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()]
        m.set_anomaly_enabled(False)
        flags += [m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled(),
                  str(rec[0].message)]
        seen.append(flags)
    assert seen[0] == seen[1]


def test_nothing_is_recorded_while_the_mode_is_off():
    gc.collect()  # nodes of earlier tests waiting in cycles leave the weak map now, not below
    before = len(_anomaly._stacks)
    x = ft.ones(3, requires_grad=True)
    y = (x.exp() * 2).sum()
    assert len(_anomaly._stacks) == before
    with ft.autograd.set_detect_anomaly(True):
        z = (x.exp() * 2).sum()
        assert len(_anomaly._stacks) > before
    y.backward()
    z.backward()


# ------------------------------------------------------------- inference tensors


def _inference_programs(m):
    """Each program returns a list of outcomes."""
    def flags():
        n = m.ones(3)
        with m.inference_mode():
            x = m.ones(3)
            y = n * 2
            v = n.view(3)
            w = m.ones(3, requires_grad=True)
            inside = [x.is_inference(), y.is_inference(), v.is_inference(),
                      m.is_inference_mode_enabled(), m.is_grad_enabled(), w.requires_grad,
                      w.is_inference(), (w * 2).requires_grad, x.view(3).is_inference()]
            with m.inference_mode(False):
                inside += [m.ones(1).is_inference(), m.is_inference_mode_enabled(),
                           m.is_grad_enabled()]
        outside = [x.is_inference(), (x * 2).is_inference(), x.view(3).is_inference(),
                   x.detach().is_inference(), x.clone().is_inference(),
                   m.exp(x).is_inference(), m.is_inference(x), m.is_inference_mode_enabled()]
        return inside + outside

    def errors():
        with m.inference_mode():
            x = m.ones(3)
        p = m.ones(3, requires_grad=True)
        return [
            _outcome(lambda: (x * p).sum()),
            _outcome(lambda: (x + p).sum().requires_grad),
            _outcome(lambda: m.mm(x.view(1, 3), p.view(3, 1))),
            _outcome(lambda: (x.clone() * p).sum()),
            _outcome(lambda: m.nn.functional.linear(x, m.ones(2, 3, requires_grad=True))),
            _outcome(lambda: x.add_(1)),
            _outcome(lambda: x.mul_(2)),
            _outcome(lambda: x.__setitem__(0, 5.0)),
            _outcome(lambda: x._version),
            _outcome(lambda: x.requires_grad_()),
            _outcome(lambda: setattr(x, "requires_grad", True)),
            _outcome(lambda: m.relu(x + p).sum().backward()),
        ]

    def inplace_inside():
        with m.inference_mode():
            x = m.zeros(3)
            x.add_(1)
        n = m.zeros(2)
        with m.inference_mode():
            n.add_(1)
        return [x.tolist(), n.tolist(), n._version, n.is_inference()]

    def decorators():
        @m.inference_mode()
        def f():
            return m.ones(2).is_inference()

        @m.inference_mode
        def g():
            return m.ones(2).is_inference()

        @m.inference_mode(mode=False)
        def h():
            return m.ones(2).is_inference(), m.is_grad_enabled()

        with m.no_grad(), m.inference_mode(False):
            k = m.is_grad_enabled()
        return [f(), g(), h(), k, f.__name__]

    def module_eval():
        m.manual_seed(0)
        lin = m.nn.Linear(3, 2)
        with m.inference_mode():
            out = lin(m.ones(1, 3))
        return [out.is_inference(), out.requires_grad, out.grad_fn is None]

    return [flags, errors, inplace_inside, decorators, module_eval]


@pytest.mark.parametrize("k", range(5))
def test_inference_tensors_as_pytorch(k):
    torch = _torch()
    got = _inference_programs(ft)[k]()
    want = _inference_programs(torch)[k]()
    assert got == want


def test_enable_grad_inside_inference_mode_records_nothing():
    w = ft.ones(2, requires_grad=True)
    with ft.inference_mode(), ft.enable_grad():
        assert ft.is_grad_enabled()
        y = w * 2
    assert not y.requires_grad and y.grad_fn is None and y.is_inference()


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=2, max_size=6))
def test_inference_values_match_no_grad(xs):
    """Inference mode changes what is recorded, never the numbers."""
    ft.manual_seed(1)
    net = ft.nn.Sequential(ft.nn.Linear(len(xs), 4), ft.nn.Tanh(), ft.nn.Linear(4, 1))
    x = ft.tensor([xs], dtype=ft.float64).float()
    with ft.inference_mode():
        a = net(x)
    with ft.no_grad():
        b = net(x)
    assert a.is_inference() and not b.is_inference()
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_grad_mode_decorators_on_generators_as_torch():
    """The decorated generator's body runs under the mode at each resumption; the caller's
    mode is back in between."""
    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        @L.no_grad()
        def gen(x):
            yield x * 2
            yield L.is_grad_enabled()

        first, flag = list(gen(L.ones(1, requires_grad=True)))
        g = gen(L.ones(1, requires_grad=True))
        next(g)
        between = L.is_grad_enabled()

        @L.inference_mode()
        def gen2():
            yield L.is_inference_mode_enabled()

        return first.requires_grad, flag, between, list(gen2()), L.is_inference_mode_enabled()

    assert run(ft) == run(torch)
