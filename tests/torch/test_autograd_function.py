"""torch.autograd.Function (ctx, saved tensors, needs_input_grad, mark_dirty,
mark_non_differentiable, set_materialize_grads, once_differentiable, setup_context,
double backward) and gradcheck / gradgradcheck, against torch 2.13 and finite
differences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft

HYP = settings(max_examples=15, deadline=None)


def make_classes(lib):
    """The same custom Functions written against either library."""
    F = lib.autograd.Function  # noqa: N806

    class ScaledExp(F):
        @staticmethod
        def forward(ctx, x, scale):
            y = (x * scale).exp()
            ctx.save_for_backward(y)
            ctx.scale = scale
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y * ctx.scale, None

    class MulAdd(F):  # the setup_context style, two outputs
        @staticmethod
        def forward(a, b):
            return a * b, a + b

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            a, b = ctx.saved_tensors
            return g_prod * b + g_sum, g_prod * a + g_sum

    class Needs(F):
        @staticmethod
        def forward(ctx, a, b):
            ctx.flags = ctx.needs_input_grad
            return a + b

        @staticmethod
        def backward(ctx, g):
            return (g if ctx.needs_input_grad[0] else None,
                    g if ctx.needs_input_grad[1] else None)

    class SortIdx(F):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (idx,) = ctx.saved_tensors
            out = lib.zeros_like(g)
            out[idx] = g
            return out

    class AddOneInplace(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class NoMaterialize(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.seen = (g1 is None, g2 is None)
            return g1 if g1 is not None else g2

    return ScaledExp, MulAdd, Needs, SortIdx, AddOneInplace, NoMaterialize


FG = make_classes(ft)


def _torch_classes():
    torch = pytest.importorskip("torch")
    return torch, make_classes(torch)


@HYP
@given(hnp.arrays(np.float64, st.integers(1, 5), elements=st.floats(-2, 2)),
       st.floats(-1.5, 1.5))
def test_scaled_exp_matches_torch_including_double_backward(x, scale):
    torch, TC = _torch_classes()
    fx, tx = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fy, ty = FG[0].apply(fx, scale), TC[0].apply(tx, scale)
    assert type(fy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "ScaledExpBackward"
    assert repr(fy).split("grad_fn")[1] == repr(ty).split("grad_fn")[1]
    np.testing.assert_allclose(fy.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    (fg,) = ft.autograd.grad(fy.sum(), fx, create_graph=True)
    (tg,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    np.testing.assert_allclose(fg.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    # Second order: backward's own operations were recorded (g * y * scale, y = exp).
    (fgg,) = ft.autograd.grad(fg.sum(), fx)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(fgg.numpy(), tgg.numpy(), rtol=1e-12)
    np.testing.assert_allclose(fgg.numpy(), scale ** 2 * np.exp(scale * x), rtol=1e-12)


@HYP
@given(hnp.arrays(np.float64, 3, elements=st.floats(-3, 3)),
       hnp.arrays(np.float64, 3, elements=st.floats(-3, 3)))
def test_setup_context_two_outputs(a, b):
    torch, TC = _torch_classes()
    fa, fb = (ft.tensor(v, requires_grad=True) for v in (a, b))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    fp, fs = FG[1].apply(fa, fb)
    tp, ts = TC[1].apply(ta, tb)
    assert fp.grad_fn is fs.grad_fn and type(fp.grad_fn).__name__ == "MulAddBackward"
    (fp * 2 + fs ** 2).sum().backward()
    (tp * 2 + ts ** 2).sum().backward()
    np.testing.assert_allclose(fa.grad.numpy(), ta.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(fb.grad.numpy(), tb.grad.numpy(), rtol=1e-12)
    # Only one output used: the other's gradient is materialised as zeros.
    fa.grad = None
    FG[1].apply(fa, fb)[0].sum().backward()
    np.testing.assert_allclose(fa.grad.numpy(), b)


def test_needs_input_grad_and_no_recording_without_grad():
    a = ft.tensor([1.0], requires_grad=True)
    b = ft.tensor([2.0])
    y = FG[2].apply(a, b)
    assert y.grad_fn.ctx.flags == (True, False)
    assert len(y.grad_fn.next_functions) == 2
    y.backward()
    assert a.grad.tolist() == [1.0] and b.grad is None
    with ft.no_grad():
        z = FG[2].apply(a, b)
    assert z.grad_fn is None and not z.requires_grad
    assert FG[2].apply(b, b).grad_fn is None


def test_mark_non_differentiable_matches_torch():
    torch, TC = _torch_classes()
    x = np.array([3.0, 1.0, 2.0])
    fx, tx = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fv, fi = FG[3].apply(fx)
    tv, ti = TC[3].apply(tx)
    assert fi.requires_grad is ti.requires_grad is False
    assert fv.requires_grad and fi.tolist() == ti.tolist()
    (fv * ft.tensor([1.0, 2.0, 3.0], dtype=ft.float64)).sum().backward()
    (tv * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert fx.grad.tolist() == tx.grad.tolist()


def test_mark_dirty_inplace():
    torch, TC = _torch_classes()
    for lib, cls in ((ft, FG[4]), (torch, TC[4])):
        leaf = lib.tensor([1.0, 2.0], requires_grad=True)
        x = leaf * 1
        v0 = x._version
        y = cls.apply(x)
        assert y is x and x._version > v0
        assert type(y.grad_fn).__name__ == "AddOneInplaceBackward"
        assert y.tolist() == [2.0, 3.0]
        y.sum().backward()
        assert leaf.grad.tolist() == [1.0, 1.0]
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            cls.apply(lib.tensor([1.0], requires_grad=True))


def test_set_materialize_grads_false_passes_none():
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    a, b = FG[5].apply(x)
    b.sum().backward()
    assert b.grad_fn.ctx.seen == (True, False)
    assert x.grad.tolist() == [1.0, 1.0]


def test_saved_tensor_modified_in_place_raises():
    torch, _ = _torch_classes()

    class Save(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2

    x = ft.tensor([1.0], requires_grad=True)
    base = x * 1
    y = Save.apply(base)
    base.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_backward_twice_and_retain_graph():
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    y = FG[0].apply(x, 1.0).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_wrong_gradient_count_and_shape_errors_match_torch():
    torch, _ = _torch_classes()

    def make(lib, bad):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return (g, g) if bad == "count" else lib.ones(5)

        return Bad

    for bad in ("count", "shape"):
        with pytest.raises(RuntimeError) as theirs:
            make(torch, bad).apply(torch.ones(2, requires_grad=True)).sum().backward()
        with pytest.raises(RuntimeError) as ours:
            make(ft, bad).apply(ft.ones(2, requires_grad=True)).sum().backward()
        assert str(ours.value) == str(theirs.value)


def test_once_differentiable():
    from funcgrad.torch.autograd.function import once_differentiable

    class Sq(ft.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = ft.tensor([3.0], requires_grad=True)
    (g,) = ft.autograd.grad(Sq.apply(x), x)
    assert g.tolist() == [6.0]
    (g2,) = ft.autograd.grad(Sq.apply(x), x, create_graph=True)
    assert g2.tolist() == [6.0] and not g2.requires_grad  # as in PyTorch: a constant seed
    seed = ft.ones(1, requires_grad=True)
    (g3,) = ft.autograd.grad(Sq.apply(x), x, grad_outputs=seed, create_graph=True)
    assert g3.requires_grad
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        g3.backward()


def test_legacy_call_is_refused():
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        FG[0]()(ft.ones(1))


# ---------------------------------------------------------------- gradcheck


@HYP
@given(hnp.arrays(np.float64, st.integers(1, 4), elements=st.floats(-2, 2)),
       hnp.arrays(np.float64, st.integers(1, 4), elements=st.floats(-2, 2)))
def test_gradcheck_and_gradgradcheck_pass_on_correct_functions(a, b):
    fa = ft.tensor(a, requires_grad=True)
    fb = ft.tensor(b[:1], requires_grad=True)
    assert ft.autograd.gradcheck(lambda x, y: (x.tanh() * y, x.sum() * y), (fa, fb))
    assert ft.autograd.gradcheck(lambda x: FG[0].apply(x, 0.7), (fa,))
    assert ft.autograd.gradgradcheck(lambda x: FG[0].apply(x, 0.7), (fa,))
    assert ft.autograd.gradgradcheck(lambda x, y: x.sin() * y, (fa, fb))


def test_gradcheck_finds_a_wrong_backward_like_torch():
    torch, _ = _torch_classes()

    def make(lib):
        class Wrong(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3

        return Wrong

    import sys

    x = np.array([0.5, -1.0])
    with pytest.raises(sys.modules["torch.autograd.gradcheck"].GradcheckError) as theirs:
        torch.autograd.gradcheck(make(torch).apply, (torch.tensor(x, requires_grad=True),))
    with pytest.raises(ft.autograd.GradcheckError) as ours:
        ft.autograd.gradcheck(make(ft).apply, (ft.tensor(x, requires_grad=True),))
    assert str(ours.value).splitlines()[0] == str(theirs.value).splitlines()[0]
    assert isinstance(ours.value, RuntimeError)
    assert ft.autograd.gradcheck(make(ft).apply, (ft.tensor(x, requires_grad=True),),
                                 raise_exception=False) is False
    with pytest.warns(UserWarning, match="not a double precision"):
        ft.autograd.gradcheck(lambda t: t * 2, (ft.tensor([1.0], requires_grad=True),),
                              eps=1e-2, atol=1e-2)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        ft.autograd.gradcheck(lambda t: t * 2, (ft.tensor([1.0]),))


# --------------------------------------------------- autograd.functional


def _leaves(x):
    if isinstance(x, tuple):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x.detach().numpy()]


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
@HYP
@given(a=hnp.arrays(np.float64, 3, elements=st.floats(-2, 2)),
       # Away from zero: PyTorch's prod backward divides by the entries (0/0 = nan there).
       b=hnp.arrays(np.float64, 2, elements=st.floats(-2, 2).filter(lambda v: abs(v) > 0.1)))
def test_functional_matches_torch(name, a, b):
    torch = pytest.importorskip("torch")

    def pair(x, y):
        return x.sin() * y.sum(), (x * x).sum() * y

    def scalar(x, y):
        return (x.exp() * y.sum()).sum() + (x ** 2).sum() * y.prod()

    results = []
    for lib in (ft, torch):
        fn = getattr(lib.autograd.functional, name)
        x, y = lib.tensor(a), lib.tensor(b)
        vs = (lib.ones(3, dtype=lib.float64), lib.ones(2, dtype=lib.float64) * 0.5)
        if name == "jacobian":
            results.append(fn(pair, (x, y)))
        elif name == "hessian":
            results.append(fn(scalar, (x, y)))
        elif name in ("vjp", "jvp"):
            v = vs if name == "jvp" else (lib.ones(3, dtype=lib.float64), vs[1])
            results.append(fn(pair, (x, y), v))
        else:
            results.append(fn(scalar, (x, y), vs))
    ours, theirs = _leaves(results[0]), _leaves(results[1])
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)
