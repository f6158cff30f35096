"""torch.optim's Adafactor, Muon, swa_utils and swap_in_optimizer_params_and_state.

Trajectories (10 steps on hypothesis-drawn parameters, gradients and hyperparameters,
float32 and float64), state dicts, reprs and error messages are compared with torch
2.13; a float64 NumPy reference of Adafactor's documented algorithm and properties of
Muon's orthogonalization run without the oracle; torch.compile'd steps must equal the
eager steps bit for bit.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.torch as ft
from funcgrad.torch import nn, optim
from funcgrad.torch.optim import swa_utils
from funcgrad.torch.utils.data import DataLoader, TensorDataset

HYP = settings(max_examples=10, deadline=None)
STEPS = 10
SHAPES = [(3, 4), (5,), (2, 3, 2), (), (1, 6)]


def _values(shape, scale=2.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(-scale, scale, width=32))


def _run(lib, cls, init, grads, dtype, **kw):
    ps = [lib.tensor(a.astype(dtype), requires_grad=True) for a in init]
    opt = cls(ps, **kw)
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = lib.tensor(g.astype(dtype))
        opt.step()
    return ps, opt


def _compare_state_dicts(fsd, tsd, rtol, atol):
    assert fsd["param_groups"] == tsd["param_groups"]
    assert sorted(fsd["state"]) == sorted(tsd["state"])
    for i, tstate in tsd["state"].items():
        fstate = fsd["state"][i]
        assert list(fstate) == list(tstate)
        for k, v in tstate.items():
            assert str(fstate[k].dtype) == str(v.dtype), k
            assert tuple(fstate[k].shape) == tuple(v.shape), k
            np.testing.assert_allclose(fstate[k].numpy(), v.numpy(), rtol=rtol, atol=atol,
                                       err_msg=k)


# ------------------------------------------------------------------ Adafactor

adafactor_kw = st.fixed_dictionaries({
    "lr": st.sampled_from([1e-2, 0.1, 0.5]),
    "beta2_decay": st.sampled_from([-0.8, -0.5, 0.0]),
    "eps": st.sampled_from([(None, 1e-3), (1e-4, 1e-2), (0.0, 0.0)]),
    "d": st.sampled_from([1.0, 2.5]),
    "weight_decay": st.sampled_from([0.0, 0.1]),
    "maximize": st.booleans(),
})


@HYP
@given(data=st.data(), kw=adafactor_kw, dtype=st.sampled_from(["float32", "float64"]))
def test_adafactor_ten_steps_match_torch(data, kw, dtype):
    torch = pytest.importorskip("torch")
    shapes = data.draw(st.lists(st.sampled_from(SHAPES), min_size=1, max_size=3))
    init = [data.draw(_values(s)) for s in shapes]
    grads = [[data.draw(_values(s)) for s in shapes] for _ in range(STEPS)]
    fps, fopt = _run(ft, optim.Adafactor, init, grads, dtype, **kw)
    tps, topt = _run(torch, torch.optim.Adafactor, init, grads, dtype, **kw)
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
    for f, t in zip(fps, tps):
        assert str(f.dtype) == str(t.dtype)
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    _compare_state_dicts(fopt.state_dict(), topt.state_dict(), rtol, atol)


def _ref_adafactor(p, gs, lr, beta2_decay, eps1, eps2, d, wd):
    """Adafactor as torch.optim.Adafactor's documentation states it, in float64."""
    factored = p.ndim > 1
    row = np.zeros(p.shape[:-1] + (1,))
    col = np.zeros(p.shape[:-2] + (1,) + p.shape[-1:])
    var = np.zeros(p.shape)
    for t, g in enumerate(gs, 1):
        beta2 = 1 - t ** beta2_decay
        rho = min(lr, 1 / math.sqrt(t))
        alpha = max(eps2, np.sqrt(np.mean(p * p))) * rho
        p = p * (1 - lr * wd)
        if factored:
            row = beta2 * row + (1 - beta2) * np.mean(g * g, axis=-1, keepdims=True)
            col = beta2 * col + (1 - beta2) * np.mean(g * g, axis=-2, keepdims=True)
            v = row * col / np.maximum(np.mean(row, axis=-2, keepdims=True), eps1)
        else:
            var = beta2 * var + (1 - beta2) * g * g
            v = var
        u = g / np.maximum(np.sqrt(v), eps1)
        p = p - alpha / max(1.0, np.sqrt(np.mean(u * u)) / d) * u
    return p


@HYP
@given(data=st.data(), shape=st.sampled_from([(3, 4), (5,), (2, 2, 3)]),
       lr=st.sampled_from([1e-2, 0.3]), wd=st.sampled_from([0.0, 0.2]),
       d=st.sampled_from([1.0, 3.0]))
def test_adafactor_matches_float64_reference(data, shape, lr, wd, d):
    p0 = data.draw(_values(shape))
    gs = [data.draw(_values(shape)) for _ in range(STEPS)]
    (p,), _ = _run(ft, optim.Adafactor, [p0], [[g] for g in gs], "float64", lr=lr,
                   weight_decay=wd, d=d, eps=(1e-6, 1e-3))
    want = _ref_adafactor(p0, gs, lr, -0.8, 1e-6, 1e-3, d, wd)
    np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-9, atol=1e-12)


def test_adafactor_state_layout_and_roundtrip():
    w = ft.zeros(2, 3, 4, requires_grad=True)
    b = ft.zeros(4, requires_grad=True)
    opt = optim.Adafactor([w, b])
    w.grad, b.grad = ft.ones(2, 3, 4), ft.ones(4)
    opt.step()
    assert {k: tuple(v.shape) for k, v in opt.state[w].items()} == {
        "step": (), "row_var": (2, 3, 1), "col_var": (2, 1, 4)}
    assert sorted(opt.state[b]) == ["step", "variance"]
    assert str(opt.state[w]["step"].dtype) == "torch.float32"
    w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    opt2 = optim.Adafactor([w2, b2], lr=0.5)
    # a deep copy: as in PyTorch, loading shares the state tensors with the dict
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    for t in (w, b, w2, b2):
        t.grad = ft.full(t.shape, -0.5)
    opt.step()
    opt2.step()
    assert np.array_equal(w.detach().numpy(), w2.detach().numpy())
    assert np.array_equal(b.detach().numpy(), b2.detach().numpy())


# ----------------------------------------------------------------------- Muon

muon_kw = st.fixed_dictionaries({
    "lr": st.sampled_from([1e-3, 0.02]),
    "weight_decay": st.sampled_from([0.0, 0.1]),
    "momentum": st.sampled_from([0.0, 0.5, 0.95]),
    "nesterov": st.booleans(),
    "ns_steps": st.sampled_from([1, 5]),
    "adjust_lr_fn": st.sampled_from([None, "original", "match_rms_adamw"]),
})


@HYP
@given(data=st.data(), kw=muon_kw, dtype=st.sampled_from(["float32", "float64"]))
def test_muon_ten_steps_match_torch(data, kw, dtype):
    torch = pytest.importorskip("torch")
    shapes = data.draw(st.lists(st.sampled_from([(3, 4), (5, 2), (4, 4), (1, 3)]),
                                min_size=1, max_size=2))
    init = [data.draw(_values(s)) for s in shapes]
    grads = [[data.draw(_values(s)) for s in shapes] for _ in range(STEPS)]
    fps, fopt = _run(ft, optim.Muon, init, grads, dtype, **kw)
    tps, topt = _run(torch, torch.optim.Muon, init, grads, dtype, **kw)
    for f, t, s in zip(fps, tps, shapes):
        assert str(f.dtype) == str(t.dtype)
        # The orthogonalization runs in bfloat16: a sum that lands on a rounding boundary
        # may round the other way (float32 summation order), one bfloat16 step (2**-8 of
        # values below 1) in an update of size lr_adjusted.
        lr_adj = kw["lr"] * max(math.sqrt(max(1, s[0] / s[1])), 0.2 * math.sqrt(max(s)))
        np.testing.assert_allclose(f.detach().numpy(), t.detach().numpy(), rtol=0,
                                   atol=STEPS * lr_adj * 2.0 ** -6)
    # The momentum buffers only see the gradients: equal to rounding.
    _compare_state_dicts(fopt.state_dict(), topt.state_dict(), 1e-6, 1e-6)


@HYP
@given(data=st.data(), shape=st.sampled_from([(2, 3), (6, 4), (8, 8), (3, 16)]),
       steps=st.sampled_from([1, 3, 5]))
def test_newton_schulz_matches_torch(data, shape, steps):
    torch = pytest.importorskip("torch")
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from funcgrad.torch.optim.muon import DEFAULT_A, DEFAULT_B, DEFAULT_C, EPS
    from funcgrad.torch.optim.muon import _zeropower_via_newtonschulz as ns

    g = data.draw(_values(shape)).astype(np.float32)
    coeffs = (DEFAULT_A, DEFAULT_B, DEFAULT_C)
    ours = ns(ft.tensor(g), coeffs, steps, EPS)
    theirs = torch_ns(torch.tensor(g), coeffs, steps, EPS)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.bfloat16"
    a, b = ours.float().numpy(), theirs.float().numpy()
    # Mostly bit for bit; a boundary case may move an entry by a few bfloat16 steps. A
    # matrix of many equal entries (a random run drew one with 17 ones in 24) puts more
    # products on rounding boundaries: 71% equal there, every entry within 2**-9.
    assert np.mean(a == b) >= 0.6
    np.testing.assert_allclose(a, b, rtol=0, atol=2.0 ** -5)


@settings(max_examples=15, deadline=None)
@given(g=hnp.arrays(np.float64, st.sampled_from([(3, 5), (5, 3), (4, 4)]),
                    elements=st.floats(-3, 3, width=32)))
def test_newton_schulz_orthogonalizes(g):
    from funcgrad.torch.optim.muon import _zeropower_via_newtonschulz as ns

    if np.linalg.svd(g, compute_uv=False)[-1] < 1e-2 * max(1.0, np.abs(g).max()):
        return
    o = ns(ft.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).double().numpy()
    # Keller Jordan's iteration leaves singular values roughly in (0.5, 1.5), with the
    # singular vectors of g.
    s = np.linalg.svd(o, compute_uv=False)
    assert s.min() > 0.3 and s.max() < 1.6
    u, _, vt = np.linalg.svd(g, full_matrices=False)
    assert np.linalg.norm(o - u @ vt) < 0.6 * math.sqrt(min(g.shape))


def test_muon_state_and_lr_rules():
    w = ft.zeros(4, 2, requires_grad=True)
    opt = optim.Muon([w], lr=0.1, weight_decay=0.0, momentum=0.0)
    w.grad = ft.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    opt.step()
    assert list(opt.state[w]) == ["momentum_buffer"]
    # The update is orthogonal-ish with the gradient's support; tall matrices scale the lr
    # by sqrt(rows / cols) = sqrt(2).
    upd = -w.detach().numpy() / (0.1 * math.sqrt(2))
    assert np.all(upd[2:] == 0) and upd[0, 1] == 0 and upd[1, 0] == 0
    assert 0.5 < upd[0, 0] < 1.5 and upd[0, 0] == upd[1, 1]


# ---------------------------------------------------------- reprs and errors


def test_reprs_and_defaults_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("Adafactor", "Muon"):
        f = getattr(optim, name)([ft.zeros(2, 2, requires_grad=True)])
        t = getattr(torch.optim, name)([torch.zeros(2, 2, requires_grad=True)])
        assert repr(f) == repr(t)
        assert f.defaults == t.defaults


ERROR_CASES = [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -0.5}), ("Muon", {"weight_decay": -1.0}),
    ("Muon", {"adjust_lr_fn": "bogus"}),
]


@pytest.mark.parametrize("name,kw", ERROR_CASES)
def test_constructor_errors_match_torch(name, kw):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim, name)([torch.zeros(2, 2, requires_grad=True)], **kw)
    with pytest.raises(type(theirs.value)) as ours:
        getattr(optim, name)([ft.zeros(2, 2, requires_grad=True)], **kw)
    assert str(ours.value) == str(theirs.value)


def _step_error(lib, make):
    opt, params = make(lib)
    for p in params:
        p.grad = lib.ones_like(p)
    with pytest.raises(Exception) as info:
        opt.step()
    return info.value


def _muon_1d(lib):
    return lib.optim.Muon([lib.zeros(3, requires_grad=True)]), []


def _muon_ns_steps(lib):
    p = lib.zeros(2, 2, requires_grad=True)
    return lib.optim.Muon([p], ns_steps=100), [p]


def _muon_coefficients(lib):
    p = lib.zeros(2, 2, requires_grad=True)
    return lib.optim.Muon([p], ns_coefficients=(1, 2)), [p]


def _muon_complex(lib):
    p = lib.zeros(2, 2, dtype=lib.complex64, requires_grad=True)
    return lib.optim.Muon([p]), [p]


def _adafactor_complex(lib):
    p = lib.zeros(2, dtype=lib.complex64, requires_grad=True)
    return lib.optim.Adafactor([p]), [p]


STEP_ERRORS = {"muon-1d": _muon_1d, "muon-ns-steps": _muon_ns_steps,
               "muon-coefficients": _muon_coefficients, "muon-complex": _muon_complex,
               "adafactor-complex": _adafactor_complex}


@pytest.mark.parametrize("case", sorted(STEP_ERRORS))
def test_step_errors_match_torch(case):
    torch = pytest.importorskip("torch")
    make = STEP_ERRORS[case]

    def error(lib):
        try:
            return _step_error(lib, make)
        except Exception as e:  # raised when building the optimizer
            return e

    theirs, ours = error(torch), error(ft)
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


# ------------------------------------------------------------- torch.compile


def _train(make_opt, compiled):
    ft.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8, bias=False), nn.Tanh(), nn.Linear(8, 3, bias=False))
    opt = make_opt(model.parameters())
    ft.manual_seed(1)
    xs = [ft.randn(6, 5) for _ in range(6)]

    def step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    run = ft.compile(step) if compiled else step
    losses = [run(x).item() for x in xs]
    state = [p.detach().numpy().copy() for p in model.parameters()]
    state += [v.numpy().copy() for s in opt.state.values() for v in s.values()]
    return losses, state, run


@pytest.mark.parametrize("make_opt", [
    lambda ps: optim.Adafactor(ps, lr=0.05, weight_decay=0.1),
    lambda ps: optim.Adafactor(ps, maximize=True, eps=(1e-4, 1e-2), d=1.5),
    lambda ps: optim.Muon(ps, lr=0.05),
    lambda ps: optim.Muon(ps, lr=0.05, nesterov=False, adjust_lr_fn="match_rms_adamw"),
], ids=["adafactor", "adafactor-options", "muon", "muon-options"])
def test_compiled_step_equals_eager_bit_for_bit(make_opt):
    eager_losses, eager_state, _ = _train(make_opt, compiled=False)
    losses, state, run = _train(make_opt, compiled=True)
    assert losses == eager_losses
    assert len(state) == len(eager_state)
    for a, b in zip(state, eager_state):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    report = run.explain()
    assert report.graph_count == 2 and report.graph_break_count == 0


# ------------------------------------------------------------------ swa_utils


def _bn_model(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                             lib.nn.Linear(4, 2))


AVG_CASES = {
    "swa": {},
    "swa-buffers": {"use_buffers": True},
    "ema-multi": {"multi_avg_fn": ("get_ema_multi_avg_fn", 0.9)},
    "swa-multi": {"multi_avg_fn": ("get_swa_multi_avg_fn",)},
    "ema-avg-fn": {"avg_fn": ("get_ema_avg_fn", 0.75), "use_buffers": True},
    "swa-avg-fn": {"avg_fn": ("get_swa_avg_fn",)},
}


def _avg_kwargs(lib, spec):
    out = {}
    for k, v in spec.items():
        if isinstance(v, tuple):
            out[k] = getattr(lib.optim.swa_utils, v[0])(*v[1:])
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("case", sorted(AVG_CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_averaged_model_matches_torch(case, dtype):
    torch = pytest.importorskip("torch")
    ft.manual_seed(0)
    start = _bn_model(ft)
    first = [t.detach().numpy().copy() for t in [*start.parameters(), *start.buffers()]]
    trajectories = []
    for lib in (ft, torch):
        model = _bn_model(lib).to(getattr(lib, dtype))
        with lib.no_grad():                            # same starting values in both
            for t, a in zip([*model.parameters(), *model.buffers()], first):
                t.copy_(lib.tensor(a))
        avg = lib.optim.swa_utils.AveragedModel(model, **_avg_kwargs(lib, AVG_CASES[case]))
        rng = np.random.default_rng(len(case))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(5):
            x = lib.tensor(rng.standard_normal((8, 3)).astype(dtype))
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
            avg.update_parameters(model)
        trajectories.append(avg)
    ours, theirs = trajectories
    assert ours.n_averaged.item() == theirs.n_averaged.item() == 5
    assert str(ours.n_averaged.dtype) == str(theirs.n_averaged.dtype) == "torch.int64"
    fsd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(fsd) == list(tsd)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for k in tsd:
        assert str(fsd[k].dtype) == str(tsd[k].dtype), k
        np.testing.assert_allclose(fsd[k].numpy(), tsd[k].numpy(), rtol=rtol, atol=rtol, err_msg=k)


def test_averaged_model_is_a_deep_copy():
    model = nn.Linear(2, 2)
    avg = swa_utils.AveragedModel(model)
    assert avg.module is not model and avg.module.weight is not model.weight
    assert np.array_equal(avg.module.weight.detach().numpy(), model.weight.detach().numpy())
    with ft.no_grad():
        model.weight.fill_(3.0)
    assert not np.all(avg.module.weight.detach().numpy() == 3.0)
    assert [n for n, _ in avg.named_buffers()] == ["n_averaged"]
    assert [n for n, _ in avg.named_parameters()] == ["module.weight", "module.bias"]
    x = ft.ones(1, 2)
    assert np.array_equal(avg(x).detach().numpy(), avg.module(x).detach().numpy())
    avg.update_parameters(model)                       # the first call copies
    assert np.all(avg.module.weight.detach().numpy() == 3.0)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(model, avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


def test_decay_errors_match_torch():
    torch = pytest.importorskip("torch")
    for name in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
        with pytest.raises(ValueError) as theirs:
            getattr(torch.optim.swa_utils, name)(1.5)
        with pytest.raises(ValueError) as ours:
            getattr(swa_utils, name)(1.5)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_trajectory_matches_torch(strategy, anneal_epochs):
    torch = pytest.importorskip("torch")
    lrs = []
    for lib in (ft, torch):
        opt = lib.optim.SGD([{"params": [lib.zeros(1, requires_grad=True)]},
                             {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.3}], lr=1.0)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.2], anneal_epochs=anneal_epochs,
                                          anneal_strategy=strategy)
        got = [sched.get_last_lr()]
        for i in range(8):
            opt.step()
            sched.step()
            if i == 3:                                 # chainable: another change in between
                for g in opt.param_groups:
                    g["lr"] *= 0.5
            got.append(sched.get_last_lr())
        lrs.append(got)
        assert opt.param_groups[1]["swa_lr"] == 0.2
    np.testing.assert_allclose(np.array(lrs[0]), np.array(lrs[1]), rtol=1e-14, atol=1e-15)


def test_swalr_state_dict_and_errors_match_torch():
    torch = pytest.importorskip("torch")
    for kw in ({"anneal_strategy": "exp"}, {"anneal_epochs": -1}, {"anneal_epochs": 2.0},
               {"swa_lr": [0.1, 0.2]}):
        args = {"swa_lr": 0.1, **kw}
        with pytest.raises(ValueError) as theirs:
            torch.optim.swa_utils.SWALR(torch.optim.SGD([torch.zeros(1)], lr=1.0), **args)
        with pytest.raises(ValueError) as ours:
            swa_utils.SWALR(optim.SGD([ft.zeros(1)], lr=1.0), **args)
        assert str(ours.value) == str(theirs.value)
    opt = optim.SGD([ft.zeros(1, requires_grad=True)], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="linear", anneal_epochs=3)
    sd = sched.state_dict()
    assert "optimizer" not in sd and "anneal_func" not in sd and sd["_anneal_strategy"] == "linear"
    other = swa_utils.SWALR(optim.SGD([ft.zeros(1, requires_grad=True)], lr=1.0), swa_lr=0.1)
    other.load_state_dict(copy.deepcopy(sd))
    assert other.anneal_func(0.25) == 0.25 and other.anneal_epochs == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.get_lr()
    assert any("get_last_lr()" in str(w.message) for w in caught)


@pytest.mark.parametrize("as_tuple", [False, True])
def test_update_bn_matches_torch(as_tuple):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    xs = rng.standard_normal((20, 3)).astype(np.float32) * 2 + 1
    ys = rng.standard_normal((20, 2)).astype(np.float32)
    init = None
    buffers = []
    for lib, loader_cls, ds_cls in ((torch, torch.utils.data.DataLoader,
                                     torch.utils.data.TensorDataset),
                                    (ft, DataLoader, TensorDataset)):
        lib.manual_seed(0)
        model = lib.nn.Sequential(_bn_model(lib), lib.nn.BatchNorm1d(2, momentum=0.3))
        if init is None:
            init = [t.detach().numpy().copy() for t in model.parameters()]
        with lib.no_grad():
            for t, a in zip(model.parameters(), init):
                t.copy_(lib.tensor(a))
        model.eval()
        tensors = (lib.tensor(xs), lib.tensor(ys)) if as_tuple else (lib.tensor(xs),)
        loader = loader_cls(ds_cls(*tensors), batch_size=6)
        if not as_tuple:
            loader = [batch[0] for batch in loader]    # plain Tensor batches
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training
        bns = [m for m in model.modules() if isinstance(m, lib.nn.BatchNorm1d)]
        assert [m.momentum for m in bns] == [0.1, 0.3]
        buffers.append([b.detach().numpy().copy() for b in model.buffers()])
    theirs, ours = buffers
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_update_bn_without_batchnorm_does_nothing():
    model = nn.Linear(2, 2)
    model.eval()
    swa_utils.update_bn([object()], model)             # the loader is never read
    assert not model.training


# ------------------------------------------------------- swap_in_optimizer...


def test_swap_in_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w0, b0, g0 = (rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (2,), (3, 2)))
    out = []
    for lib in (ft, torch):
        w, b = lib.tensor(w0, requires_grad=True), lib.tensor(b0, requires_grad=True)
        opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
        w.grad, b.grad = lib.tensor(g0), lib.tensor(b0)
        opt.step()
        live = opt.state_dict()
        sd = {"state": {k: {n: v.clone() for n, v in s.items()} for k, s in
                        live["state"].items()},
              "param_groups": [dict(g, lr=0.01) for g in live["param_groups"]]}
        pw, pb = lib.tensor(w0 * 2, requires_grad=True), lib.tensor(b0 * 2, requires_grad=True)
        pw.grad, pb.grad = lib.tensor(g0 * 3), lib.tensor(b0 * 3)
        with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": pw, "b": pb}, sd):
            assert opt.param_groups[0]["params"][0] is pw
            opt.step()
        assert opt.param_groups[0]["params"][0] is w and opt.param_groups[0]["lr"] == 0.1
        out.append([w.detach().numpy(), pw.detach().numpy(), pb.detach().numpy(),
                    sd["state"][0]["exp_avg"].numpy(), sd["state"][1]["step"].numpy(),
                    opt.state[w]["step"].numpy()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_swap_in_errors_match_torch():
    torch = pytest.importorskip("torch")

    def err(lib, fresh, sd_fn):
        w = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        if not fresh:
            w.grad = lib.ones(2)
            opt.step()
        with pytest.raises(RuntimeError) as info:
            with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": w}, sd_fn(opt)):
                pass
        return str(info.value)

    cases = [
        (True, lambda o: o.state_dict()),
        (False, lambda o: [1]),
        (False, lambda o: {"state": [], "param_groups": []}),
        (False, lambda o: {"state": {0: 1}, "param_groups": []}),
        (False, lambda o: {"state": {}, "param_groups": ()}),
        (False, lambda o: {"state": {}, "param_groups": []}),
        (False, lambda o: {"state": {}, "param_groups": [{"params": [0, 1]}]}),
        (False, lambda o: {"state": {}, "param_groups": [{"params": ["a"]}]}),
        (False, lambda o: {"state": {}, "param_groups": [{"params": [0], "lr": 1.0}]}),
        (False, lambda o: {"state": {5: {}}, "param_groups": o.state_dict()["param_groups"]}),
    ]
    for fresh, sd_fn in cases:
        assert err(ft, fresh, sd_fn) == err(torch, fresh, sd_fn)


def test_public_names():
    for name in ("Adafactor", "Muon", "swa_utils", "swap_in_optimizer_params_and_state"):
        assert name in optim.__all__ and hasattr(optim, name)
    assert sorted(swa_utils.__all__) == sorted([
        "AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
        "get_ema_avg_fn", "get_swa_avg_fn"])
