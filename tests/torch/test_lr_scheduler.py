"""torch.optim.lr_scheduler: every scheduler's lr sequence over 40 steps (and momentum
where it cycles it) against torch 2.13's, closed forms vs NumPy formulas, state_dict
round trips, step(epoch), and the constructor errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import optim
from funcgrad.torch.optim import lr_scheduler as fls

HYP = settings(max_examples=8, deadline=None)
STEPS = 40


def _opt(lib, opt_name="SGD", n_groups=2, **kw):
    params = [{"params": [lib.zeros(1, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(n_groups)]
    mod = lib.optim
    if opt_name == "SGD":
        return mod.SGD(params, lr=0.1, momentum=0.9, **kw)
    return getattr(mod, opt_name)(params, lr=0.1, **kw)


SCHEDULERS = {
    "StepLR": lambda m, o: m.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 9, 9, 20], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=9, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(
        o, T_0=4, T_mult=2, eta_min=0.01),
    "CosineAnnealingWarmRestarts1": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=6),
    "LambdaLR": lambda m, o: m.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (1 + e)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=12),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.4, total_iters=6),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=15, power=2.0),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=STEPS + 4),
    "OneCycleLR3": lambda m, o: m.OneCycleLR(o, max_lr=1.0, epochs=4, steps_per_epoch=11,
                                             three_phase=True, anneal_strategy="linear"),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5),
    "CyclicLR2": lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                         step_size_down=6, mode="triangular2"),
    "CyclicLRexp": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                           mode="exp_range", gamma=0.97),
    "SequentialLR": lambda m, o: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.ExponentialLR(o, gamma=0.9),
            m.StepLR(o, 4)], milestones=[5, 17]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, factor=0.5, total_iters=4), m.ExponentialLR(o, gamma=0.9)]),
}


def _run(lib, name, opt_name="SGD"):
    opt = _opt(lib, opt_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
        lrs, moms = [sched.get_last_lr()], []
        for _ in range(STEPS):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
            moms.append([g.get("momentum", g.get("betas", (None,))[0])
                         for g in opt.param_groups])
    return lrs, moms, sched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_lr_sequence_matches_torch(name):
    torch = pytest.importorskip("torch")
    ours, our_moms, _ = _run(ft, name)
    theirs, their_moms, _ = _run(torch, name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.array(our_moms, float), np.array(their_moms, float), rtol=1e-13)


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR"])
def test_beta1_is_cycled_for_adam(name):
    torch = pytest.importorskip("torch")
    ours, our_moms, _ = _run(ft, name, "Adam")
    theirs, their_moms, _ = _run(torch, name, "Adam")
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    np.testing.assert_allclose(np.array(our_moms, float), np.array(their_moms, float), rtol=1e-13)


@HYP
@given(metrics=st.lists(st.floats(0.0, 10.0), min_size=30, max_size=30),
       mode=st.sampled_from(["min", "max"]), threshold_mode=st.sampled_from(["rel", "abs"]),
       patience=st.integers(0, 3), cooldown=st.integers(0, 2))
def test_reduce_on_plateau_matches_torch(metrics, mode, threshold_mode, patience, cooldown):
    torch = pytest.importorskip("torch")

    def run(lib):
        opt = _opt(lib)
        s = lib.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode=mode, factor=0.5, patience=patience, threshold=0.05,
            threshold_mode=threshold_mode, cooldown=cooldown, min_lr=[0.0, 0.02])
        out = []
        for v in metrics:
            s.step(v)
            out.append(s.get_last_lr())
        return out, s.num_bad_epochs, s.best

    assert run(ft) == run(torch)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_roundtrip_resumes(name):
    lrs, _, sched = _run(ft, name)
    opt2 = _opt(ft)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched2 = SCHEDULERS[name](fls, opt2)
        sd = sched.state_dict()
        assert "optimizer" not in sd
        sched2.load_state_dict(sd)
        opt2.load_state_dict(sched.optimizer.state_dict())
        for _ in range(3):
            sched.optimizer.step()
            sched.step()
            opt2.step()
            sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr()


@HYP
@given(epoch=st.integers(0, 60))
def test_closed_forms(epoch):
    base = [0.1, 0.2]
    cases = [
        (lambda o: fls.StepLR(o, 7, 0.5), lambda b: b * 0.5 ** (epoch // 7)),
        (lambda o: fls.MultiStepLR(o, [3, 9, 20], 0.3),
         lambda b: b * 0.3 ** sum(epoch >= m for m in (3, 9, 20))),
        (lambda o: fls.ExponentialLR(o, 0.93), lambda b: b * 0.93 ** epoch),
        (lambda o: fls.CosineAnnealingLR(o, 9, 0.001),
         lambda b: 0.001 + (b - 0.001) * (1 + math.cos(math.pi * epoch / 9)) / 2),
        (lambda o: fls.LinearLR(o, 0.2, 0.9, 12),
         lambda b: b * (0.2 + 0.7 * min(12, epoch) / 12)),
        (lambda o: fls.ConstantLR(o, 0.4, 6), lambda b: b * (0.4 if epoch < 6 else 1.0)),
        (lambda o: fls.PolynomialLR(o, 15, 2.0), lambda b: b * (1 - min(15, epoch) / 15) ** 2),
    ]
    for make, formula in cases:
        opt = _opt(ft)
        sched = make(opt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step(epoch)
        np.testing.assert_allclose(sched.get_last_lr(), [formula(b) for b in base], rtol=1e-12)


def test_warm_restarts_with_epoch_matches_formula():
    opt = _opt(ft)
    sched = fls.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
    for epoch, (t_cur, t_i) in [(1, (1, 3)), (4, (1, 6)), (9, (0, 12)), (10.5, (1.5, 12))]:
        sched.step(epoch)
        want = [b * (1 + math.cos(math.pi * t_cur / t_i)) / 2 for b in (0.1, 0.2)]
        np.testing.assert_allclose(sched.get_last_lr(), want, rtol=1e-12)


def test_warning_when_scheduler_steps_before_optimizer():
    opt = _opt(ft)
    sched = fls.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()


@pytest.mark.parametrize("make", [
    lambda m, o: m.ConstantLR(o, factor=2.0),
    lambda m, o: m.LinearLR(o, start_factor=0.0),
    lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda m, o: m.OneCycleLR(o, max_lr=1.0),
    lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="x"),
    lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="nope"),
    lambda m, o: m.ReduceLROnPlateau(o, factor=1.0),
    lambda m, o: m.ReduceLROnPlateau(o, mode="middle"),
    lambda m, o: m.SequentialLR(o, [m.StepLR(o, 2)], milestones=[3]),
    lambda m, o: m.LambdaLR(o, [lambda e: 1.0]),
])
def test_constructor_errors_match_torch(make):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        make(torch.optim.lr_scheduler, _opt(torch))
    with pytest.raises(ValueError) as ours:
        make(fls, _opt(ft))
    assert str(ours.value) == str(theirs.value)


def test_not_an_optimizer():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        fls.StepLR([], 2)
    assert optim.lr_scheduler is fls
