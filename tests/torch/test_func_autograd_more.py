"""torch.func's ``stack_module_state`` (model ensembling), ``linearize``, ``functionalize``,
``replace_all_batch_norm_modules_``, ``debug_unwrap``; torch.autograd's ``Variable``,
``variable``, ``grad_mode`` and ``set_multithreading_enabled``. Values, derivatives (finite
differences in float64 on drawn inputs) and errors against PyTorch where installed.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest
from finite_differences import central_grad as fd_grad
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import nn
from funcgrad.torch.autograd import Variable


def arr(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def close(a, b, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(arr(a), np.float64), np.asarray(arr(b), np.float64),
                               rtol=rtol, atol=atol)


def raises_like(oracle_call, ours_call):
    """Both raise the same exception type with the same text."""
    with pytest.raises(Exception) as want:
        oracle_call()
    with pytest.raises(type(want.value)) as got:
        ours_call()
    assert str(got.value) == str(want.value)


# ----------------------------------------------------------------- stack_module_state


def mlp_pair(torch, n_models, seed=0):
    """The same small MLPs in PyTorch and in funcgrad (weights copied over)."""
    torch.manual_seed(seed)

    def build(m):
        return m.Sequential(m.Linear(6, 8), m.ReLU(), m.Linear(8, 3))

    tms = [build(torch.nn) for _ in range(n_models)]
    fms = []
    for tm in tms:
        fm = build(nn)
        fm.load_state_dict({k: ft.tensor(v.numpy()) for k, v in tm.state_dict().items()})
        fms.append(fm)
    return tms, fms


def test_stack_module_state_ensembling_tutorial():
    torch = pytest.importorskip("torch")
    tms, fms = mlp_pair(torch, 4)
    tp, tb = torch.func.stack_module_state(tms)
    fp, fb = ft.func.stack_module_state(fms)
    assert list(fp) == list(tp) and fb == tb == {}
    for k in tp:
        close(fp[k], tp[k])
        assert fp[k].is_leaf and fp[k].requires_grad and fp[k].grad_fn is None
        assert tuple(fp[k].shape) == tuple(tp[k].shape)
    rng = np.random.default_rng(0)
    minibatches = rng.standard_normal((4, 5, 6)).astype(np.float32)
    minibatch = minibatches[0]

    # The tutorial's base model is a copy moved to 'meta' (its values are never read).
    t_base = copy.deepcopy(tms[0]).to("meta")
    f_base = copy.deepcopy(fms[0]).to("meta")

    def t_fmodel(params, buffers, x):
        return torch.func.functional_call(t_base, (params, buffers), (x,))

    def f_fmodel(params, buffers, x):
        return ft.func.functional_call(f_base, (params, buffers), (x,))

    t1 = torch.vmap(t_fmodel)(tp, tb, torch.from_numpy(minibatches))
    f1 = ft.vmap(f_fmodel)(fp, fb, ft.tensor(minibatches))
    close(f1, t1, rtol=1e-5, atol=1e-6)
    close(f1, ft.stack([m(ft.tensor(x)) for m, x in zip(fms, minibatches)]), 1e-5, 1e-6)
    t2 = torch.vmap(t_fmodel, in_dims=(0, 0, None))(tp, tb, torch.from_numpy(minibatch))
    f2 = ft.vmap(f_fmodel, in_dims=(0, 0, None))(fp, fb, ft.tensor(minibatch))
    close(f2, t2, rtol=1e-5, atol=1e-6)
    assert tuple(f2.shape) == (4, 5, 3)

    # Ensemble gradients: grad over the stacked parameters, vmapped.
    def t_loss(p, b, x):
        return t_fmodel(p, b, x).square().sum()

    def f_loss(p, b, x):
        return f_fmodel(p, b, x).square().sum()

    tg = torch.vmap(torch.func.grad(t_loss), in_dims=(0, 0, None))(
        tp, tb, torch.from_numpy(minibatch))
    fg = ft.vmap(ft.func.grad(f_loss), in_dims=(0, 0, None))(fp, fb, ft.tensor(minibatch))
    for k in tg:
        close(fg[k], tg[k], rtol=1e-4, atol=1e-5)


def test_stack_module_state_buffers_and_errors():
    torch = pytest.importorskip("torch")
    tms = [torch.nn.BatchNorm1d(3) for _ in range(3)]
    fms = [nn.BatchNorm1d(3) for _ in range(3)]
    for i, (tm, fm) in enumerate(zip(tms, fms)):
        tm.running_mean.fill_(i)
        fm.running_mean.fill_(i)
    tp, tb = torch.func.stack_module_state(tms)
    fp, fb = ft.func.stack_module_state(fms)
    assert list(fb) == list(tb)
    for k in tb:
        close(fb[k], tb[k])
        assert fb[k].requires_grad is False and str(fb[k].dtype) == str(tb[k].dtype)
    raises_like(lambda: torch.func.stack_module_state([]),
                lambda: ft.func.stack_module_state([]))
    raises_like(lambda: torch.func.stack_module_state([tms[0], tms[1].eval()]),
                lambda: ft.func.stack_module_state([fms[0], fms[1].eval()]))
    raises_like(lambda: torch.func.stack_module_state([torch.nn.Linear(3, 3), tms[0]]),
                lambda: ft.func.stack_module_state([nn.Linear(3, 3), fms[0]]))
    tms[2].weight.requires_grad_(False)
    fms[2].weight.requires_grad_(False)
    raises_like(lambda: torch.func.stack_module_state(tms),
                lambda: ft.func.stack_module_state(fms))


# ----------------------------------------------------------------------- linearize


shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def lin_fn(m):
    return lambda x, y: (m.sin(x) * y.exp() + x * x, (x * y).sum())


@settings(max_examples=12, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_linearize_against_finite_differences(shape, seed):
    rng = np.random.default_rng(seed)
    x, y, tx, ty = (rng.standard_normal(shape) for _ in range(4))
    f = lin_fn(ft)
    out, jvp_fn = ft.func.linearize(f, ft.tensor(x), ft.tensor(y))
    close(out[0], np.sin(x) * np.exp(y) + x * x)
    j0, j1 = jvp_fn(ft.tensor(tx), ft.tensor(ty))
    assert j0.dtype == ft.float64
    eps = 1e-6

    def at(s):
        return f(ft.tensor(x + s * tx), ft.tensor(y + s * ty))

    (p0, p1), (m0, m1) = at(eps), at(-eps)
    close(j0, (arr(p0) - arr(m0)) / (2 * eps), rtol=1e-5, atol=1e-6)
    close(j1, (arr(p1) - arr(m1)) / (2 * eps), rtol=1e-5, atol=1e-6)
    torch = pytest.importorskip("torch")
    _, t_jvp = torch.func.linearize(lin_fn(torch), torch.from_numpy(x), torch.from_numpy(y))
    t0, t1 = t_jvp(torch.from_numpy(tx), torch.from_numpy(ty))
    close(j0, t0, rtol=1e-10, atol=1e-12)
    close(j1, t1, rtol=1e-10, atol=1e-12)


def test_linearize_repr_and_errors():
    torch = pytest.importorskip("torch")
    t_out, t_jvp = torch.func.linearize(torch.sin, torch.zeros(3, 3))
    f_out, f_jvp = ft.func.linearize(ft.sin, ft.zeros(3, 3))
    assert repr(f_jvp(ft.ones(3, 3))) == repr(t_jvp(torch.ones(3, 3)))
    assert repr(f_out) == repr(t_out)
    raises_like(lambda: t_jvp(torch.ones(2, 3)), lambda: f_jvp(ft.ones(2, 3)))
    raises_like(lambda: t_jvp(torch.ones(3, 3, dtype=torch.float64)),
                lambda: f_jvp(ft.ones(3, 3, dtype=ft.float64)))
    with pytest.raises(RuntimeError, match="same argspec as the primals"):
        f_jvp(ft.ones(3, 3), ft.ones(3, 3))


# -------------------------------------------------------------------- functionalize


def through_view(a):
    b = a + 1
    c = b.view(-1)
    c.add_(1)
    return b


def setitem_then_inplace(a):
    b = a.clone()
    b[0] = b[1] * 3
    b.sin_()
    return (b * a).sum()


def many_views(a):
    b = a * 2
    r0, r1 = b[0], b.narrow(0, 1, 1).squeeze(0)
    r0.mul_(r1.clone())
    t = b.t()
    t[1].add_(5)
    c = b.reshape(-1)
    c[2:4] = a[1, :2] ** 2
    return (b * b).sum() + r0.sum() * t.sum()


FUNCS = [through_view, setitem_then_inplace, many_views]


def scalar(fn):
    return lambda a: fn(a).sum()


@pytest.mark.parametrize("fn", FUNCS)
def test_functionalize_under_transforms_matches_torch(fn):
    torch = pytest.importorskip("torch")
    x = np.arange(6.0).reshape(2, 3) / 3 + 0.5
    fz = ft.func.functionalize(fn)
    eager = fn(torch.from_numpy(x))
    close(fz(ft.tensor(x)), eager, rtol=1e-12)
    # Oracle: PyTorch's own transforms of fn (its functionalize has no derivative for
    # the copy that setitem becomes under grad).
    xb = np.stack([x, x * 0.5 - 1])
    close(ft.func.vmap(fz)(ft.tensor(xb)), torch.func.vmap(fn)(torch.from_numpy(xb)), 1e-12)
    close(ft.func.vmap(fz)(ft.tensor(xb)), [arr(fn(ft.tensor(v))) for v in xb], 1e-12)
    want = torch.func.grad(scalar(fn))(torch.from_numpy(x))
    close(ft.func.grad(scalar(fz))(ft.tensor(x)), want, rtol=1e-10)
    close(ft.func.jacrev(fz)(ft.tensor(x)), torch.func.jacrev(fn)(torch.from_numpy(x)), 1e-10)
    close(ft.func.jacfwd(fz)(ft.tensor(x)), torch.func.jacfwd(fn)(torch.from_numpy(x)), 1e-10)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), which=st.integers(0, len(FUNCS) - 1))
def test_functionalize_grad_against_finite_differences(seed, which):
    fn = FUNCS[which]
    x = np.random.default_rng(seed).uniform(-1, 1, (2, 3))
    g = ft.func.grad(scalar(ft.func.functionalize(fn)))(ft.tensor(x))
    want = fd_grad(lambda v: float(arr(scalar(fn)(ft.tensor(v)))), x)
    close(g, want, rtol=1e-5, atol=1e-6)


def test_functionalize_input_mutation_outputs_and_errors():
    torch = pytest.importorskip("torch")

    def mutate_input(a):
        a.view(-1).mul_(2)
        return a

    for m, x in ((torch, torch.arange(4.0)), (ft, ft.arange(4.0))):
        y = m.func.functionalize(mutate_input)(x)
        assert y is not x
        close(x, [0.0, 2.0, 4.0, 6.0])
        close(y, x)
        x.add_(1)  # the output does not alias the input
        close(y, [0.0, 2.0, 4.0, 6.0])
        v = m.func.functionalize(lambda a: a.view(-1), remove="mutations_and_views")(x)
        x.add_(1)
        close(v, [1.0, 3.0, 5.0, 7.0])
    raises_like(lambda: torch.func.functionalize(mutate_input, remove="views"),
                lambda: ft.func.functionalize(mutate_input, remove="views"))
    # A write through an expanded view overlaps itself, as PyTorch says.
    raises_like(lambda: torch.func.vmap(lambda a: a.expand(2, 3).add_(1))(torch.ones(2, 3)),
                lambda: ft.func.vmap(ft.func.functionalize(
                    lambda a: a.expand(2, 3).add_(1)))(ft.ones(2, 3)))


# --------------------------------------------------- batch norm, debug_unwrap


def test_replace_all_batch_norm_modules_matches_torch():
    torch = pytest.importorskip("torch")

    def build(m):
        return m.Sequential(m.Linear(3, 3), m.BatchNorm1d(3),
                            m.Sequential(m.BatchNorm2d(3, track_running_stats=False)))

    t_root, f_root = build(torch.nn), build(nn)
    assert torch.func.replace_all_batch_norm_modules_(t_root) is t_root
    assert ft.func.replace_all_batch_norm_modules_(f_root) is f_root
    for (tn, tm), (fn, fm) in zip(t_root.named_modules(), f_root.named_modules()):
        assert tn == fn
        for attr in ("running_mean", "running_var", "num_batches_tracked",
                     "track_running_stats"):
            assert (getattr(fm, attr, "-") is None) == (getattr(tm, attr, "-") is None)
            if attr == "track_running_stats" and hasattr(tm, attr):
                assert fm.track_running_stats is tm.track_running_stats
    assert list(f_root.state_dict()) == list(t_root.state_dict())
    # It now normalizes by batch statistics even in eval mode.
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    close(f_root[1].eval()(ft.tensor(x)), t_root[1].eval()(torch.from_numpy(x)).detach(),
          rtol=1e-5, atol=1e-6)


def test_debug_unwrap_matches_torch():
    torch = pytest.importorskip("torch")
    seen = {}

    def probe(m, tag):
        def f(x):
            seen[tag] = (tuple(m.func.debug_unwrap(x).shape),
                         tuple(m.func.debug_unwrap(x, recurse=False).shape),
                         tuple(m.func.debug_unwrap(x.sum(0) * 2).shape))
            return (x * x).sum()
        return f

    for m in (torch, ft):
        t = m.ones(3, 4)
        m.func.vmap(probe(m, m.__name__ + "v"), in_dims=1)(t)
        m.func.grad(probe(m, m.__name__ + "g"))(t)
        m.func.vmap(m.func.grad(probe(m, m.__name__ + "vg")))(t)
        assert m.func.debug_unwrap(t) is t
    for tag in ("v", "g", "vg"):
        assert seen["funcgrad.torch" + tag] == seen["torch" + tag], tag
    out = ft.func.jvp(lambda x: ft.func.debug_unwrap(x) * 1, (ft.ones(2),), (ft.ones(2),))
    assert repr(out) == repr(torch.func.jvp(lambda x: torch.func.debug_unwrap(x) * 1,
                                            (torch.ones(2),), (torch.ones(2),)))
    raises_like(lambda: torch.func.debug_unwrap(3), lambda: ft.func.debug_unwrap(3))


# --------------------------------------------------------------------- autograd


def test_variable_is_a_tensor_as_in_torch():
    torch = pytest.importorskip("torch")
    for m, V in ((torch, torch.autograd.Variable), (ft, Variable)):
        t = m.ones(2)
        v = V(t)
        assert type(v) is m.Tensor and v is not t and v.is_leaf and not v.requires_grad
        v[0] = 5.0
        assert t[0].item() == 5.0  # shares memory
        w = V(t, requires_grad=True)
        assert w.requires_grad and w.is_leaf and not t.requires_grad
        y = V(w * 3)
        assert y.grad_fn is None and y.is_leaf
        assert isinstance(t, V) and not isinstance(3, V) and not issubclass(m.Tensor, V)
        assert tuple(V().shape) == (0,) and V().dtype == m.float32
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            V(t, volatile=True)
        assert "volatile was removed" in str(rec[0].message)
    assert repr(Variable(ft.ones(2), requires_grad=True)) == repr(
        torch.autograd.Variable(torch.ones(2), requires_grad=True))
    raises_like(lambda: torch.autograd.Variable([1.0]), lambda: Variable([1.0]))
    raises_like(lambda: torch.autograd.Variable(torch.ones(2, dtype=torch.int32), True),
                lambda: Variable(ft.ones(2, dtype=ft.int32), True))
    raises_like(lambda: torch.autograd.Variable(torch.ones(2), True, False, "x"),
                lambda: Variable(ft.ones(2), True, False, "x"))
    raises_like(lambda: torch.autograd.variable(1), lambda: ft.autograd.variable(1))
    assert ft.autograd.variable.Variable is Variable


def test_grad_mode_module_and_multithreading_switch():
    torch = pytest.importorskip("torch")
    from funcgrad.torch.autograd.grad_mode import _is_multithreading_enabled

    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                 "set_multithreading_enabled"):
        assert hasattr(ft.autograd.grad_mode, name), name
    assert ft.autograd.grad_mode.no_grad is ft.no_grad
    with ft.autograd.grad_mode.set_grad_enabled(False):
        assert not ft.is_grad_enabled()
    assert ft.is_grad_enabled()

    for m, query in ((torch, torch._C._is_multithreading_enabled),
                     (ft, _is_multithreading_enabled)):
        switch = m.autograd.set_multithreading_enabled(False)
        assert query() is False  # takes effect when made
        with switch:
            assert query() is False
        assert query() is True

        @m.autograd.set_multithreading_enabled(False)
        def inside(query=query):
            return query()

        seen = (query(), inside(), query())
        m.autograd.set_multithreading_enabled(True)
        assert seen == (False, False, False)  # PyTorch's decorator does not reset
        assert query() is True
    x = ft.tensor([1.0, 2.0], requires_grad=True)
    with ft.autograd.set_multithreading_enabled(False):
        (x * x).sum().backward()
    close(x.grad, [2.0, 4.0])
    raises_like(lambda: torch.autograd.set_multithreading_enabled(),
                lambda: ft.autograd.set_multithreading_enabled())


def _ensemble_step(lib: Any, seed: int, members: int) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    models = [lib.nn.Linear(3, 2, dtype=lib.float64) for _ in range(members)]
    with lib.no_grad():
        for m in models:
            m.weight.copy_(lib.tensor(rng.standard_normal((2, 3))))
            m.bias.copy_(lib.tensor(rng.standard_normal(2)))
    params, buffers = lib.func.stack_module_state(models)
    base = copy.deepcopy(models[0])

    def fmodel(p: Any, b: Any, x: Any) -> Any:
        return lib.func.functional_call(base, (p, b), (x,))

    x = lib.tensor(rng.standard_normal((5, 3)))
    out = lib.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    (out.tanh() ** 2).sum().backward()
    return out.detach().numpy(), params["weight"].grad.numpy(), params["bias"].grad.numpy()


@settings(max_examples=5, deadline=None, database=None)
@given(seed=st.integers(0, 2 ** 16), members=st.integers(1, 4))
def test_a_vmapped_ensemble_backpropagates_to_its_stacked_parameters(seed: int,
                                                                    members: int) -> None:
    """torch.func transforms compose with autograd: ``backward()`` through a vmapped
    ensemble reaches the stacked parameters (it gave no grad_fn)."""
    torch = pytest.importorskip("torch")
    for got, want in zip(_ensemble_step(ft, seed, members), _ensemble_step(torch, seed, members)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_backward_through_torch_func_grad_matches_torch() -> None:
    torch = pytest.importorskip("torch")

    def run(lib: Any) -> tuple[Any, Any]:
        w = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        h = lib.func.grad(lambda v: (v.sin() * v).sum())(w)
        (h ** 2).sum().backward()
        return h.detach().numpy(), w.grad.numpy()

    for got, want in zip(run(ft), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _vmap_writes(lib: Any, data: np.ndarray, case: str) -> list[Any]:
    x = lib.tensor(data)
    if case == "add_to_input":
        out = lib.func.vmap(lambda v: v.add_(1))(x)
        return [x, out]
    if case == "per_example_accumulator":
        acc = lib.zeros(data.shape[0], dtype=lib.float64)

        def f(v: Any, a: Any) -> Any:
            a.add_(v.sum())
            return v * 2
        out = lib.func.vmap(f)(x, acc)
        return [acc, out]
    if case == "mapped_over_axis_1":
        lib.func.vmap(lambda v: v.mul_(2), in_dims=1)(x)
        return [x]
    if case == "unmapped_argument":
        acc = lib.zeros(data.shape[1:], dtype=lib.float64)

        def g(v: Any, a: Any) -> Any:
            a.add_(1.0)
            return v
        lib.func.vmap(g, in_dims=(0, None))(x, acc)
        return [acc]
    try:
        lib.func.vmap(lambda v, a: a.add_(v), in_dims=(0, None))(
            x, lib.zeros(data.shape[1:], dtype=lib.float64))
    except RuntimeError as e:
        return [str(e)]
    return []


@settings(max_examples=5, deadline=None, database=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), seed=st.integers(0, 99))
@pytest.mark.parametrize("case", ["add_to_input", "per_example_accumulator",
                                  "mapped_over_axis_1", "unmapped_argument",
                                  "per_example_into_unmapped"])
def test_vmap_writes_in_place_updates_back_into_the_arguments(case: str, rows: int, cols: int,
                                                               seed: int) -> None:
    """As PyTorch's vmap: an argument changed in place inside the mapped function is
    changed for the caller (it was left as it was: a silent difference)."""
    torch = pytest.importorskip("torch")
    data = np.random.default_rng(seed).standard_normal((rows, cols))
    ours, theirs = _vmap_writes(ft, data, case), _vmap_writes(torch, data, case)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
