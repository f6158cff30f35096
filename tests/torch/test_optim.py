"""funcgrad.optim: SGD, Adam and AdamW against their update formulas (a float64 NumPy
reference, step by step, options drawn by hypothesis) and against torch.optim (when
torch is installed); the Optimizer base: parameter groups, zero_grad, closures,
state_dict / load_state_dict, construction errors, in-place updates and versions."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import optim

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
HYP = settings(max_examples=40, deadline=None)

SHAPES = [(3,), (2, 3)]
TORCH_DTYPE = {np.float32: ft.float32, np.float64: ft.float64}


def param(arr, dtype=np.float64):
    return ft.tensor(np.asarray(arr, dtype), requires_grad=True)


def arr(t):
    return np.asarray(t.detach().numpy(), np.float64)


def close(got, ref, dtype):
    ref = np.asarray(ref, np.float64)
    if dtype == np.float64:
        np.testing.assert_allclose(np.asarray(got, np.float64), ref, rtol=1e-10, atol=1e-12)
    else:
        scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
        np.testing.assert_allclose(np.asarray(got, np.float64), ref, rtol=1e-4,
                                   atol=2e-5 * scale)


# --------------------------------------------------------------- references (NumPy float64)


def sgd_ref(p, g, buf, *, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """torch.optim.SGD's documented update; returns (new p, new momentum buffer)."""
    g = -g if maximize else g
    if weight_decay != 0:
        g = g + weight_decay * p
    if momentum != 0:
        buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    return p - lr * g, buf


def adam_ref(p, g, st_, *, lr, betas, eps, weight_decay, amsgrad, maximize, decoupled):
    """Adam / AdamW as in torch.optim's documentation; ``st_`` is updated in place."""
    b1, b2 = betas
    g = -g if maximize else g
    st_["t"] += 1
    t = st_["t"]
    if weight_decay != 0:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    st_["m"] = b1 * st_["m"] + (1 - b1) * g
    st_["v"] = b2 * st_["v"] + (1 - b2) * g * g
    v = st_["v"]
    if amsgrad:
        st_["vmax"] = np.maximum(st_["vmax"], st_["v"])
        v = st_["vmax"]
    m_hat = st_["m"] / (1 - b1 ** t)
    v_hat = v / (1 - b2 ** t)
    return p - lr * m_hat / (np.sqrt(v_hat) + eps)


# -------------------------------------------------------------- strategies


@st.composite
def sgd_options(draw):
    nesterov = draw(st.booleans())
    if nesterov:
        momentum, dampening = draw(st.floats(0.05, 0.99)), 0.0
    else:
        momentum = draw(st.one_of(st.just(0.0), st.floats(0.0, 0.99)))
        dampening = draw(st.one_of(st.just(0.0), st.floats(0.0, 0.9)))
    return {
        "lr": draw(st.floats(1e-4, 1.0)),
        "momentum": momentum,
        "dampening": dampening,
        "weight_decay": draw(st.one_of(st.just(0.0), st.floats(0.0, 0.2))),
        "nesterov": nesterov,
        "maximize": draw(st.booleans()),
    }


@st.composite
def adam_options(draw):
    return {
        "lr": draw(st.floats(1e-4, 0.5)),
        "betas": (draw(st.floats(0.0, 0.99)), draw(st.floats(0.0, 0.9999))),
        "eps": draw(st.sampled_from([1e-8, 1e-6, 1e-3, 0.1])),
        "weight_decay": draw(st.one_of(st.just(0.0), st.floats(0.0, 0.2))),
        "amsgrad": draw(st.booleans()),
        "maximize": draw(st.booleans()),
    }


def _grad_schedule(seed, n_steps, dtype):
    """Per step, per parameter: a gradient array, or None (about one in five)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_steps):
        row = []
        for shape in SHAPES:
            g = rng.standard_normal(shape).astype(dtype)
            row.append(None if rng.random() < 0.2 else g)
        out.append(row)
    return out


def _init_params(seed, dtype):
    rng = np.random.default_rng(seed + 1)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


# --------------------------------------------------------- formulas, step by step


@HYP
@given(opts=sgd_options(), dtype=st.sampled_from([np.float32, np.float64]),
       n_steps=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_sgd_matches_formula(opts, dtype, n_steps, seed):
    init = _init_params(seed, dtype)
    ps = [param(a, dtype) for a in init]
    opt = optim.SGD(ps, **opts)
    refs = [a.astype(np.float64) for a in init]
    bufs = [None] * len(ps)
    for grads in _grad_schedule(seed, n_steps, dtype):
        for i, (p, g) in enumerate(zip(ps, grads)):
            p.grad = None if g is None else ft.tensor(g)
            if g is not None:
                refs[i], bufs[i] = sgd_ref(refs[i], g.astype(np.float64), bufs[i], **opts)
        assert opt.step() is None
        for i, p in enumerate(ps):
            assert p.dtype == TORCH_DTYPE[dtype] and p.is_leaf and p.requires_grad
            close(arr(p), refs[i], dtype)
            if opts["momentum"] != 0 and bufs[i] is not None:
                close(arr(opt.state[p]["momentum_buffer"]), bufs[i], dtype)
    if opts["momentum"] == 0:
        assert len(opt.state) == 0


@HYP
@given(opts=adam_options(), decoupled=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]), n_steps=st.integers(1, 6),
       seed=st.integers(0, 2**16))
def test_adam_and_adamw_match_formula(opts, decoupled, dtype, n_steps, seed):
    init = _init_params(seed, dtype)
    ps = [param(a, dtype) for a in init]
    opt = optim.AdamW(ps, **opts) if decoupled else optim.Adam(ps, **opts)
    refs = [a.astype(np.float64) for a in init]
    states = [{"t": 0, "m": np.zeros(s), "v": np.zeros(s), "vmax": np.zeros(s)}
              for s in SHAPES]
    for grads in _grad_schedule(seed, n_steps, dtype):
        for i, (p, g) in enumerate(zip(ps, grads)):
            p.grad = None if g is None else ft.tensor(g)
            if g is not None:
                refs[i] = adam_ref(refs[i], g.astype(np.float64), states[i], **opts,
                                   decoupled=decoupled)
        opt.step()
        for i, p in enumerate(ps):
            assert p.dtype == TORCH_DTYPE[dtype] and p.is_leaf
            close(arr(p), refs[i], dtype)
            if states[i]["t"] == 0:
                assert p not in opt.state
                continue
            s = opt.state[p]
            assert s["step"].item() == states[i]["t"]
            close(arr(s["exp_avg"]), states[i]["m"], dtype)
            close(arr(s["exp_avg_sq"]), states[i]["v"], dtype)
            assert ("max_exp_avg_sq" in s) == opts["amsgrad"]
            assert s["exp_avg"].dtype == TORCH_DTYPE[dtype]


def test_adam_vs_adamw_weight_decay_differ():
    """Adam puts weight decay into the gradient (so it is normalised away on the first
    step), AdamW decays the weights directly."""
    a, b = param([2.0]), param([2.0])
    oa = optim.Adam([a], lr=0.1, weight_decay=1.0)
    ob = optim.AdamW([b], lr=0.1, weight_decay=1.0)
    a.grad, b.grad = ft.tensor(np.zeros(1)), ft.tensor(np.zeros(1))
    oa.step()
    ob.step()
    np.testing.assert_allclose(arr(a), [1.9], rtol=1e-9)        # g = wd * p = 2 -> unit step
    np.testing.assert_allclose(arr(b), [2.0 * 0.9], rtol=1e-12)  # p * (1 - lr * wd)


def test_amsgrad_uses_running_max():
    p = param([0.0])
    opt = optim.Adam([p], lr=0.1, betas=(0.0, 0.5), amsgrad=True)
    for g in [10.0, 0.1]:
        p.grad = ft.tensor(np.array([g]))
        opt.step()
    s = opt.state[p]
    # v = 0.5 * 50 + 0.5 * 0.01 = 25.005 (after 100 * 0.5 = 50); the max keeps 50.
    np.testing.assert_allclose(arr(s["exp_avg_sq"]), [25.005], rtol=1e-12)
    np.testing.assert_allclose(arr(s["max_exp_avg_sq"]), [50.0], rtol=1e-12)


# ----------------------------------------------------------- against torch.optim

TORCH_CASES = [
    ("SGD", {"lr": 0.05}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.02, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.01, "maximize": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True, "betas": (0.3, 0.9)}),
]


def _quadratic(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((16, 5)), rng.standard_normal((16, 3)),
            rng.standard_normal((5, 3)), rng.standard_normal(3))


def _run_pair(name, kwargs, dtype, n_steps=20, groups=None):
    """Run funcgrad and torch side by side on the same least-squares problem."""
    X, Y, W0, b0 = (a.astype(dtype) for a in _quadratic())
    W, b = param(W0, dtype), param(b0, dtype)
    tW = torch.tensor(W0, requires_grad=True)
    tb = torch.tensor(b0, requires_grad=True)
    if groups is None:
        fparams, tparams = [W, b], [tW, tb]
    else:
        fparams = [{"params": [W], **groups[0]}, {"params": [b], **groups[1]}]
        tparams = [{"params": [tW], **groups[0]}, {"params": [tb], **groups[1]}]
    fo = getattr(optim, name)(fparams, **kwargs)
    to = getattr(torch.optim, name)(tparams, **kwargs)
    fX, fY, tX, tY = ft.tensor(X), ft.tensor(Y), torch.tensor(X), torch.tensor(Y)
    for _ in range(n_steps):
        fo.zero_grad()
        floss = ((fX @ W + b - fY) ** 2).mean()
        floss.backward()
        fo.step()
        to.zero_grad()
        tloss = ((tX @ tW + tb - tY) ** 2).mean()
        tloss.backward()
        to.step()
        close(floss.item(), tloss.item(), dtype)
    return (W, b, fo), (tW, tb, to)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("name", "kwargs"), TORCH_CASES)
def test_against_torch_20_steps(name, kwargs, dtype):
    (W, b, fo), (tW, tb, to) = _run_pair(name, kwargs, dtype)
    close(arr(W), tW.detach().numpy(), dtype)
    close(arr(b), tb.detach().numpy(), dtype)
    fsd, tsd = fo.state_dict(), to.state_dict()
    assert fsd["state"].keys() == tsd["state"].keys()
    for k, fstate in fsd["state"].items():
        assert fstate.keys() == tsd["state"][k].keys()
        for key, v in fstate.items():
            close(arr(v), tsd["state"][k][key].detach().numpy(), dtype)
    for fg_group, t_group in zip(fsd["param_groups"], tsd["param_groups"]):
        assert fg_group["params"] == t_group["params"]
        for key, v in fg_group.items():
            assert key in t_group
            assert t_group[key] == (list(v) if isinstance(t_group[key], list) else v)


@needs_torch
@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_param_groups_against_torch(name):
    groups = [{"lr": 0.1}, {"lr": 0.01, "weight_decay": 0.2}]
    kwargs = {"lr": 0.5, "momentum": 0.9} if name == "SGD" else {"lr": 0.5}
    (W, b, fo), (tW, tb, to) = _run_pair(name, kwargs, np.float64, 10, groups)
    close(arr(W), tW.detach().numpy(), np.float64)
    close(arr(b), tb.detach().numpy(), np.float64)
    assert [g["lr"] for g in fo.param_groups] == [0.1, 0.01]


@needs_torch
def test_load_torch_state_dict_and_continue():
    """A torch state dict, its tensors turned into funcgrad Tensors, loads and continues
    exactly as torch does."""
    (W, b, fo), (tW, tb, to) = _run_pair("Adam", {"lr": 0.05, "amsgrad": True}, np.float64,
                                         n_steps=5)
    tsd = to.state_dict()
    converted = {
        "state": {k: {key: ft.tensor(v.detach().numpy()) for key, v in s.items()}
                  for k, s in tsd["state"].items()},
        "param_groups": copy.deepcopy(tsd["param_groups"]),
    }
    W2 = param(tW.detach().numpy())
    b2 = param(tb.detach().numpy())
    fo2 = optim.Adam([W2, b2], lr=1.0)   # lr and amsgrad come from the loaded groups
    fo2.load_state_dict(converted)
    assert fo2.param_groups[0]["lr"] == 0.05 and fo2.param_groups[0]["amsgrad"]
    X, Y, _, _ = _quadratic()
    for _ in range(5):
        fo2.zero_grad()
        ((ft.tensor(X) @ W2 + b2 - ft.tensor(Y)) ** 2).mean().backward()
        fo2.step()
        to.zero_grad()
        ((torch.tensor(X) @ tW + tb - torch.tensor(Y)) ** 2).mean().backward()
        to.step()
    close(arr(W2), tW.detach().numpy(), np.float64)
    close(arr(b2), tb.detach().numpy(), np.float64)


@needs_torch
def test_construction_errors_match_torch():
    cases = [
        ("SGD", {"lr": -1.0}), ("SGD", {"momentum": -0.5}), ("SGD", {"weight_decay": -1.0}),
        ("SGD", {"nesterov": True}), ("SGD", {"nesterov": True, "momentum": 0.9,
                                               "dampening": 0.1}),
        ("Adam", {"lr": -1.0}), ("Adam", {"eps": -1.0}), ("Adam", {"betas": (1.0, 0.9)}),
        ("Adam", {"betas": (0.9, -0.1)}), ("Adam", {"weight_decay": -0.1}),
        ("AdamW", {"betas": (0.9, 1.0)}),
    ]
    for name, kwargs in cases:
        with pytest.raises(ValueError) as tinfo:
            getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
        with pytest.raises(ValueError) as finfo:
            getattr(optim, name)([ft.zeros(2, requires_grad=True)], **kwargs)
        assert str(finfo.value) == str(tinfo.value), (name, kwargs)


# ------------------------------------------------------------------ construction


def test_construction_errors():
    w = ft.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {w}}], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([np.zeros(2)], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero"):
        optim.SGD([w], nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([w], momentum=0.9, dampening=0.5, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.AdamW([w], lr=-0.1)
    with pytest.raises(ValueError, match="didn't specify a value of required"):
        optim.SGD([w], lr=optim.required)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([w, w], lr=0.1)


def test_leaf_without_requires_grad_and_retained_nonleaf_are_accepted():
    """As PyTorch: a leaf that does not require grad is accepted (it never gets a
    gradient, so it is never updated); a non-leaf that retains its grad is accepted."""
    frozen = ft.ones(2)
    w = ft.ones(2, requires_grad=True)
    h = w * 2
    h.retain_grad()
    opt = optim.SGD([frozen, h], lr=0.1)
    opt.step()
    assert arr(frozen).tolist() == [1.0, 1.0]


def test_defaults_and_options():
    w = ft.zeros(2, requires_grad=True)
    assert optim.SGD([w]).defaults == {"lr": 1e-3, "momentum": 0, "dampening": 0,
                                      "weight_decay": 0, "nesterov": False, "maximize": False,
                                      "foreach": None, "differentiable": False, "fused": None}
    with pytest.raises(ValueError, match="differentiable=True is not supported"):
        optim.SGD([w], differentiable=True)
    g = optim.Adam([w]).param_groups[0]
    assert (g["lr"], g["betas"], g["eps"], g["weight_decay"], g["amsgrad"],
            g["decoupled_weight_decay"]) == (1e-3, (0.9, 0.999), 1e-8, 0, False, False)
    g = optim.AdamW([w]).param_groups[0]
    assert (g["weight_decay"], g["decoupled_weight_decay"]) == (1e-2, True)
    assert isinstance(optim.AdamW([w]), optim.Adam)
    assert isinstance(optim.SGD([w]), optim.Optimizer)
    text = repr(optim.SGD([w], lr=0.1))
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1\n" in text


# -------------------------------------------------------------- parameter groups


def test_param_groups_have_their_own_lr_and_options():
    a, b, c = param([1.0, 1.0]), param([1.0]), param([2.0])
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.01, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[0]["momentum"] == 0 and opt.param_groups[1]["momentum"] == 0.5
    assert opt.param_groups[1]["params"] == [b] or opt.param_groups[1]["params"][0] is b
    opt.add_param_group({"params": [c], "lr": 1.0})
    assert opt.param_groups[2]["dampening"] == 0
    for _ in range(2):
        for p in (a, b, c):
            p.grad = ft.tensor(np.ones(p.shape))
        opt.step()
    np.testing.assert_allclose(arr(a), [0.8, 0.8])
    np.testing.assert_allclose(arr(b), [1.0 - 0.01 - 0.01 * 1.5])   # momentum 0.5
    np.testing.assert_allclose(arr(c), [0.0])
    assert "momentum_buffer" in opt.state[b] and a not in opt.state
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([a])


def test_named_parameters():
    a, b = param([1.0]), param([2.0])
    opt = optim.SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [param([0.0])]})


def test_lr_change_in_group_takes_effect():
    w = param([1.0])
    opt = optim.SGD([w], lr=0.1)
    w.grad = ft.tensor(np.ones(1))
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    np.testing.assert_allclose(arr(w), [0.5])


# ---------------------------------------------------------- zero_grad and closure


def test_zero_grad_set_to_none():
    a, b = param([1.0, 2.0]), param([3.0])
    opt = optim.SGD([a, b], lr=0.1)
    (a * b).sum().backward()
    assert a.grad is not None and b.grad is not None
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    opt.zero_grad()   # no gradients: nothing to do
    (a * a).sum().backward()
    opt.step()        # b has no gradient: skipped
    np.testing.assert_allclose(arr(b), [3.0])
    np.testing.assert_allclose(arr(a), [0.8, 1.6])


def test_zero_grad_in_place():
    a = param([1.0, 2.0, 3.0])
    opt = optim.SGD([a], lr=0.1)
    a.grad = ft.tensor(np.array([np.inf, np.nan, 5.0]))
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g
    assert arr(a.grad).tolist() == [0.0, 0.0, 0.0]
    (a * a).sum().backward()    # accumulates onto the zeros
    np.testing.assert_allclose(arr(a.grad), [2.0, 4.0, 6.0])


def test_zero_grad_in_place_detaches_a_grad_with_history():
    a = param([1.0, 2.0])
    opt = optim.SGD([a], lr=0.1)
    (a * a * a).sum().backward(create_graph=True)
    assert a.grad.grad_fn is not None
    opt.zero_grad(set_to_none=False)
    assert a.grad.grad_fn is None and not a.grad.requires_grad
    assert arr(a.grad).tolist() == [0.0, 0.0]


def test_step_with_closure_returns_its_loss():
    w = param([3.0])
    opt = optim.SGD([w], lr=0.25)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = ((w - 1.0) ** 2).sum()
        loss.backward()
        return loss

    with ft.no_grad():            # the closure still records: step enables grad for it
        loss = opt.step(closure)
    assert len(calls) == 1 and loss.item() == 4.0
    np.testing.assert_allclose(arr(w), [2.0])
    loss = optim.Adam([w], lr=0.1).step(closure)
    assert loss.item() == 1.0


# ------------------------------------------------------------------- state dicts


def _train(opt, params, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        for p in params:
            p.grad = ft.tensor(rng.standard_normal(p.shape), dtype=p.dtype)
        opt.step()


@pytest.mark.parametrize(("cls", "kwargs"), [
    (optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    (optim.Adam, {"lr": 0.1, "amsgrad": True}),
    (optim.AdamW, {"lr": 0.1}),
])
def test_state_dict_round_trip(cls, kwargs):
    ps = [param(np.ones(3)), param(np.ones((2, 2)))]
    opt = cls([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}], **kwargs)
    _train(opt, ps, 3)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 1]
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.05
    saved = copy.deepcopy(sd)

    clones = [param(arr(p)) for p in ps]
    opt2 = cls([{"params": clones[:1]}, {"params": clones[1:]}], lr=1.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[1]["lr"] == 0.05 and opt2.param_groups[1]["params"][0] is clones[1]
    assert opt2.state[clones[0]].keys() == opt.state[ps[0]].keys()
    # as in PyTorch, the loaded state is `saved`'s own tensors (their dtypes already fit)
    for k, q in zip(sorted(saved["state"]), clones):
        assert all(opt2.state[q][kk] is v for kk, v in saved["state"][k].items())
    _train(opt, ps, 3, seed=1)
    _train(opt2, clones, 3, seed=1)
    for p, q in zip(ps, clones):
        np.testing.assert_array_equal(arr(p), arr(q))


def test_load_state_dict_casts_to_param_dtype_and_validates():
    w64 = param(np.ones(3))
    opt = optim.Adam([w64], lr=0.1)
    _train(opt, [w64], 2)
    sd = opt.state_dict()
    w32 = param(np.ones(3), np.float32)
    opt32 = optim.Adam([w32], lr=0.1)
    opt32.load_state_dict(sd)
    s = opt32.state[w32]
    assert s["exp_avg"].dtype == ft.float32 and s["exp_avg_sq"].dtype == ft.float32
    assert s["step"].dtype == ft.float32 and s["step"].item() == 2.0
    _train(opt32, [w32], 1)
    assert w32.dtype == ft.float32
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.Adam([{"params": [param([1.0])]}, {"params": [param([1.0])]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.Adam([param([1.0]), param([1.0])]).load_state_dict(sd)


# ------------------------------------------------------ in-place semantics, dtypes


def test_step_updates_in_place_and_bumps_version():
    buf = np.array([1.0, 2.0])
    w = ft.from_numpy(buf).requires_grad_()
    data = w._data
    opt = optim.SGD([w], lr=0.5)
    v0 = w._version
    (w * w).sum().backward()
    opt.step()
    assert w._data is data and buf.tolist() == [0.0, 0.0]  # same memory
    assert w._version > v0
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_backward_after_step_sees_modified_parameter(cls):
    """As in PyTorch: a graph that saved a parameter can't backward after step()."""
    w = param([1.0, 2.0])
    opt = cls([w], lr=0.1)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize(("cls", "kwargs"), [
    (optim.SGD, {"lr": 0.5, "momentum": 0.9}),
    (optim.AdamW, {"lr": 0.1, "weight_decay": 0.5, "amsgrad": True}),
])
def test_read_only_parameter_array(cls, kwargs):
    """A parameter whose array is read-only is updated like any other (as ``copy_``
    does, its array is replaced); the result equals that of a writable parameter."""
    ro = np.array([1.0, 2.0])
    ro.flags.writeable = False
    w, ref = ft.from_numpy(ro).requires_grad_(), param([1.0, 2.0])
    opts = [cls([w], **kwargs), cls([ref], **kwargs)]
    v0 = w._version
    for _ in range(2):
        for p, opt in zip((w, ref), opts):
            p.grad = ft.tensor(np.array([1.0, -3.0]))
            opt.step()
    np.testing.assert_array_equal(arr(w), arr(ref))
    assert w._version > v0 and ro.tolist() == [1.0, 2.0]


def test_load_state_dict_with_plain_number_step():
    """Old PyTorch checkpoints keep Adam's ``step`` as a number: it becomes a Tensor."""
    w, ref = param([1.0, 2.0]), param([1.0, 2.0])
    opt, ref_opt = optim.Adam([w], lr=0.1), optim.Adam([ref], lr=0.1)
    _train(ref_opt, [ref], 2)
    sd = copy.deepcopy(ref_opt.state_dict())
    sd["state"][0]["step"] = 2
    w.data = ref.data.clone()
    opt.load_state_dict(sd)
    assert isinstance(opt.state[w]["step"], ft.Tensor)
    _train(opt, [w], 1, seed=5)
    _train(ref_opt, [ref], 1, seed=5)
    np.testing.assert_array_equal(arr(w), arr(ref))
    assert opt.state[w]["step"].item() == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW])
def test_dtype_is_kept(cls, dtype):
    w = param(np.ones((2, 3)), dtype)
    opt = cls([w], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    assert w.dtype == TORCH_DTYPE[dtype] and w.data.numpy().dtype == dtype
    for v in opt.state[w].values() if opt.state else []:
        if v.ndim:
            assert v.dtype == TORCH_DTYPE[dtype]


def test_tensor_lr():
    w = param([1.0])
    w.grad = ft.tensor(np.ones(1))
    optim.SGD([w], lr=ft.tensor(0.25)).step()
    np.testing.assert_allclose(arr(w), [0.75])


def test_training_converges():
    """Adam and SGD drive a least-squares problem to its solution."""
    X, Y, W0, b0 = _quadratic(3)
    Xa = np.hstack([X, np.ones((len(X), 1))])
    sol = np.linalg.lstsq(Xa, Y, rcond=None)[0]
    for cls, kwargs, n in [(optim.Adam, {"lr": 0.05}, 400),
                           (optim.SGD, {"lr": 0.1, "momentum": 0.9}, 300)]:
        W, b = param(W0), param(b0)
        opt = cls([W, b], **kwargs)
        fX, fY = ft.tensor(X), ft.tensor(Y)
        for _ in range(n):
            opt.zero_grad()
            ((fX @ W + b - fY) ** 2).mean().backward()
            opt.step()
        np.testing.assert_allclose(arr(W), sol[:-1], atol=1e-3)
        np.testing.assert_allclose(arr(b), sol[-1], atol=1e-3)


@pytest.mark.parametrize(("cls", "kwargs"), [
    (optim.SGD, {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1, "maximize": True}),
    (optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    (optim.Adam, {"lr": 0.1, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
    (optim.AdamW, {"lr": 0.1, "betas": (0.2, 0.9)}),
])
def test_gradient_is_left_alone_and_layout_does_not_matter(cls, kwargs):
    """step() never writes into p.grad, and an F-ordered gradient (as a matmul's
    backward leaves) gives exactly the result of a C-ordered one."""
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((4, 3))
    a, b = param(p0), param(p0)
    oa, ob = cls([a], **kwargs), cls([b], **kwargs)
    for _ in range(3):
        g = rng.standard_normal((4, 3))
        a.grad = ft.Tensor(np.ascontiguousarray(g))
        b.grad = ft.Tensor(np.asfortranarray(g))
        oa.step()
        ob.step()
        assert arr(a.grad).tolist() == g.tolist() and arr(b.grad).tolist() == g.tolist()
    np.testing.assert_array_equal(arr(a), arr(b))
    assert a.data.numpy().flags.c_contiguous and b.data.numpy().flags.c_contiguous
