"""The optimizers step complex parameters as PyTorch does: through ``torch.view_as_real``,
each real and imaginary part an independent real number (RMSprop, Adagrad, Adamax, NAdam,
RAdam, Adadelta and Rprop, as Adam; LBFGS on the flattened real view), their state complex
Tensors of the parameter's shape. Each program runs on real torch and on funcgrad.torch
with the same drawn values; the expected numbers are torch's. Also: ``foreach=True``,
non-contiguous and 0-d parameters, real and complex parameters in one group, a
``torch.compile``d step, and the optimizers that refuse complex parameters (``fused=True``,
Adafactor, Muon, SparseAdam) with torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402

_C = 0.3 - 0.7j  # a complex constant with both parts nonzero

_parts = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
_z = st.tuples(_parts, _parts).map(lambda p: complex(*p)).filter(lambda z: abs(z) > 0.1)
_mat = st.lists(_z, min_size=4, max_size=4)


def _np(x):
    return np.asarray(x.detach().resolve_conj().cpu().numpy())


def _same(mine, theirs, rtol=1e-12, atol=1e-12):
    """funcgrad's result equals torch's: nested lists / dicts of tensors and numbers, dtypes
    and shapes included."""
    if isinstance(theirs, dict):
        assert isinstance(mine, dict) and list(mine) == list(theirs), (mine, theirs)
        for k in theirs:
            _same(mine[k], theirs[k], rtol, atol)
        return
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs), (mine, theirs)
        for a, b in zip(mine, theirs):
            _same(a, b, rtol, atol)
        return
    if not isinstance(theirs, torch.Tensor):
        assert mine == pytest.approx(theirs, rel=rtol, abs=atol)
        return
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(mine), _np(theirs), rtol=rtol, atol=atol)


def _both(program, *values, **tol):
    _same(program(ft, *values), program(torch, *values), **tol)


def _loss(p):
    return ((p * _C).abs() ** 2 + p.imag * p.real).sum() + ((p.real - 0.3) ** 4).sum()


CASES = [
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.02, "alpha": 0.9, "momentum": 0.5, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.1,
                 "initial_accumulator_value": 0.5, "maximize": True}),
    ("Adamax", {"lr": 0.1}),
    ("Adamax", {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.1}),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True,
               "maximize": True}),
    ("RAdam", {"lr": 0.1}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adadelta", {"lr": 1.0}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Rprop", {"lr": 0.1}),
    ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1, "amsgrad": True, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 2, "weight_decay": 0.1}),
]
_IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]

# Eight steps: RAdam's rectified (adaptive) update starts at step 6 with beta2 = 0.999.
_STEPS = 8


def _train(m, name, kw, vals, steps=_STEPS, dtype="complex128"):
    p = m.nn.Parameter(m.tensor(vals, dtype=getattr(m, dtype)).reshape(2, 2))
    opt = getattr(m.optim, name)([p], **kw)
    for _ in range(steps):
        opt.zero_grad()
        _loss(p).backward()
        opt.step()
    return p, opt


@pytest.mark.parametrize("name,kw", CASES, ids=_IDS)
@settings(max_examples=5, deadline=None)
@given(vals=_mat)
def test_complex_parameter_steps_as_torch(name, kw, vals):
    def program(m, vals):
        p, opt = _train(m, name, kw, vals)
        return [p.detach(), dict(opt.state[p])]

    # SGD with momentum on the quartic term diverges from |p| ~ 2 (a drawn [1j, 1j, 1j,
    # -2-0.75j] reaches 4.7e16 in eight steps): each step multiplies the rounding of
    # ``x ** 4``'s last bit, so torch and funcgrad agree to ~1e-11 there.
    _both(program, vals, **({"rtol": 1e-9} if name == "SGD" else {}))


@pytest.mark.parametrize("name,kw", CASES, ids=_IDS)
def test_complex_state_dict_as_torch(name, kw):
    """The state of a complex parameter: torch's keys, and complex Tensors of the
    parameter's shape (the step counters real scalars)."""
    def program(m):
        p, opt = _train(m, name, kw, [1 + 1j, 2 - 0.5j, 0.3j, -1], steps=2)
        sd = opt.state_dict()
        return [{k: [tuple(v.shape), str(v.dtype).split(".")[-1]] for k, v in s.items()
                 if isinstance(v, torch.Tensor if m is torch else ft.Tensor)}
                for s in sd["state"].values()]

    assert program(ft) == program(torch)


def test_issue_repro_rmsprop():
    """The report's repro: three RMSprop steps from fixed values."""
    def program(m):
        p = m.nn.Parameter(m.tensor([[1 + 1j, 2 - 0.5j], [0.3j, -1]], dtype=m.complex128))
        opt = m.optim.RMSprop([p], lr=0.01)
        for _ in range(3):
            opt.zero_grad()
            ((p * _C).abs() ** 2 + p.imag * p.real).sum().backward()
            opt.step()
        return p.detach()

    theirs = program(torch)
    assert abs(complex(theirs[0, 0]) - (0.7799822726 + 0.7799822726j)) < 1e-9
    _same(program(ft), theirs)


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] not in ("SGD", "ASGD")],
                         ids=[i for i, c in zip(_IDS, CASES) if c[0] not in ("SGD", "ASGD")])
def test_foreach_complex_parameter_as_torch_foreach(name, kw):
    """``foreach=True`` (PyTorch's multi-tensor kernels, which view complex parameters as
    real the same way); several parameters in one group, one of them real."""
    def program(m):
        p = m.nn.Parameter(m.tensor([[1 + 1j, 2 - 0.5j], [0.3j, -1]], dtype=m.complex128))
        q = m.nn.Parameter(m.tensor([0.5, -1.5, 2.0], dtype=m.complex128))
        r = m.nn.Parameter(m.tensor([0.25, -0.75], dtype=m.float64))
        opt = getattr(m.optim, name)([p, q, r], foreach=True, **kw)
        for _ in range(_STEPS):
            opt.zero_grad()
            (_loss(p) + _loss(q) * 0.5 + (r ** 4).sum() + (q[:2].imag * r).sum()).backward()
            opt.step()
        return [p.detach(), q.detach(), r.detach(), [dict(opt.state[t]) for t in (p, q, r)]]

    _both(program)


@pytest.mark.parametrize("name,kw", [CASES[1], CASES[5], CASES[7], CASES[9], CASES[13],
                                     CASES[15], CASES[17]],
                         ids=["RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
                              "Rprop"])
def test_transposed_and_scalar_complex_parameters(name, kw):
    """A non-contiguous (transposed) complex parameter and a 0-d one: the state follows
    the parameter's memory."""
    kw = dict(kw, lr=kw["lr"] / 4)  # the scaled loss is steeper: no divergence

    def program(m):
        p = m.nn.Parameter(m.tensor([[1 + 1j, 2j, 0.5 - 2j], [0.5, -1 - 1j, 1.5j]],
                                    dtype=m.complex128).t())
        s = m.nn.Parameter(m.tensor(0.7 - 1.1j, dtype=m.complex128))
        opt = getattr(m.optim, name)([p, s], **kw)
        for _ in range(_STEPS):
            opt.zero_grad()
            (_loss(p * m.tensor([1.0, 2.0], dtype=m.float64)) + _loss(s)).backward()
            opt.step()
        return [p.detach(), s.detach(), dict(opt.state[p]), dict(opt.state[s])]

    _both(program)


@pytest.mark.parametrize("name,kw", [CASES[1], CASES[5], CASES[7], CASES[9], CASES[13],
                                     CASES[15], CASES[17]],
                         ids=["RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta",
                              "Rprop"])
def test_complex64_parameter(name, kw):
    """complex64: the parts are float32, as torch's real view (float32 rounding: a
    looser tolerance)."""
    def program(m):
        p, opt = _train(m, name, kw, [1 + 1j, 2 - 0.5j, 0.3j, -1], steps=4,
                        dtype="complex64")
        return [p.detach(), dict(opt.state[p])]

    _both(program, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@settings(max_examples=4, deadline=None)
@given(vals=_mat)
def test_lbfgs_complex_parameters(line_search_fn, vals):
    """LBFGS flattens a complex parameter's real view: the direction, history and
    gradients are real vectors of twice its size."""
    def program(m, vals):
        p = m.nn.Parameter(m.tensor(vals, dtype=m.complex128).reshape(2, 2))
        q = m.nn.Parameter(m.tensor([0.5, -0.25], dtype=m.float64))
        opt = m.optim.LBFGS([p, q], lr=0.5, max_iter=6, history_size=3,
                            line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = _loss(p) + (q ** 4).sum() + (q[0] * p[0, 0]).real
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(2)]
        st = opt.state[p]
        return [p.detach(), q.detach(), losses,
                {k: st[k] for k in ("d", "prev_flat_grad", "old_dirs", "old_stps",
                                    "func_evals", "n_iter")}]

    _both(program, vals, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name,kw", [CASES[18], CASES[0]], ids=["Adam", "RMSprop"])
def test_compiled_step_of_a_complex_parameter(name, kw):
    """Under ``torch.compile`` the real-view update is staged too (Adam's step stages
    without a graph break)."""
    p = ft.nn.Parameter(ft.tensor([[1 + 1j, 2 - 0.5j], [0.3j, -1]], dtype=ft.complex128))
    opt = getattr(ft.optim, name)([p], **kw)

    @ft.compile
    def step():
        opt.zero_grad()
        loss = _loss(p)
        loss.backward()
        opt.step()
        return loss

    for _ in range(4):
        step()
    _, theirs = _train(torch, name, kw, [1 + 1j, 2 - 0.5j, 0.3j, -1], steps=4)
    q = theirs.param_groups[0]["params"][0]
    _same([p.detach(), dict(opt.state[p])], [q.detach(), dict(theirs.state[q])])


@pytest.mark.parametrize("name,kw", [
    ("Adam", {"fused": True}), ("AdamW", {"fused": True}), ("SGD", {"fused": True}),
    ("Adagrad", {"fused": True}), ("Adafactor", {}), ("Muon", {}), ("SparseAdam", {}),
])
def test_refusals_of_complex_parameters(name, kw):
    def error(m):
        try:
            p = m.nn.Parameter(m.tensor([[1 + 1j, 2j], [1, 1]], dtype=m.complex128))
            opt = getattr(m.optim, name)([p], **kw)
            p.grad = m.ones_like(p)
            opt.step()
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            return e
        return None

    theirs, mine = error(torch), error(ft)
    assert theirs is not None
    assert type(mine) is type(theirs)
    assert str(mine) == str(theirs)


@pytest.mark.parametrize("name,kw", [CASES[1], CASES[5], CASES[10], CASES[17]],
                         ids=["RMSprop", "Adagrad", "NAdam", "Rprop"])
def test_state_dict_from_torch_loads_and_continues(name, kw):
    """torch's state dict of a complex parameter, loaded into funcgrad's optimizer: the
    steps go on as torch's."""
    vals = [1 + 1j, 2 - 0.5j, 0.3j, -1]
    tp, topt = _train(torch, name, kw, vals, steps=3)
    fp = ft.nn.Parameter(ft.tensor(tp.detach().numpy()))
    fopt = getattr(ft.optim, name)([fp], **kw)
    sd = topt.state_dict()
    fopt.load_state_dict({
        "state": {k: {n: ft.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v
                      for n, v in s.items()} for k, s in sd["state"].items()},
        "param_groups": sd["param_groups"]})
    for p, opt in ((tp, topt), (fp, fopt)):
        for _ in range(3):
            opt.zero_grad()
            _loss(p).backward()
            opt.step()
    _same([fp.detach(), dict(fopt.state[fp])], [tp.detach(), dict(topt.state[tp])])
