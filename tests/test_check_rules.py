"""``funcgrad_check_rules`` mode (funcgrad/check_rules.py): every primitive's jvp rule is
checked against finite differences and its vjp rule against its jvp rule as they run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fuzz_programs import Prog, build, hypothesis_programs, inputs, transforms_for
from hypothesis import HealthCheck, given, settings

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.check_rules import RuleCheckError
from funcgrad.primitives import elementwise as E


@pytest.fixture
def checking() -> Iterator[None]:
    fg.config.update("funcgrad_check_rules", True)
    try:
        yield
    finally:
        fg.config.update("funcgrad_check_rules", False)


def test_wrong_jvp_rule_is_named(checking: None, monkeypatch: pytest.MonkeyPatch) -> None:
    good = E.sin_p.jvp

    def doubled(primals: Any, tangents: Any, **params: Any) -> Any:
        out, t = good(primals, tangents, **params)  # type: ignore[misc]
        return out, 2.0 * t

    monkeypatch.setattr(E.sin_p, "jvp", doubled)
    x = np.array([0.3, -1.2])
    with pytest.raises(RuleCheckError, match="jvp rule of primitive sin"):
        fg.jvp(fnp.sin, (x,), (np.ones(2),))


def test_wrong_vjp_rule_is_named(checking: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # a transpose rule that disagrees with the (correct) jvp rule
    def bad_fwd(primals: Any, **params: Any) -> Any:
        (x,) = primals
        return E.sin_p.bind(x), lambda ct: [3.0 * ct]

    monkeypatch.setattr(E.sin_p, "vjp_fwd", bad_fwd)
    with pytest.raises(RuleCheckError, match="vjp rule of primitive sin"):
        fg.grad(lambda a: fnp.sum(fnp.sin(a)))(np.array([0.3, -1.2]))


def test_kinks_are_not_reported(checking: None) -> None:
    # abs, maximum, floor at their kinks/jumps have no derivative to check
    x = np.array([0.0, 1.0, -2.0])
    fg.jvp(lambda a: fnp.abs(a) + fnp.maximum(a, 1.0) + fnp.floor(a), (x,), (np.ones(3),))
    fg.grad(lambda a: fnp.sum(fnp.abs(a) * fnp.sign(a)))(x)


def test_off_by_default() -> None:
    assert not fg.config.read("funcgrad_check_rules")


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hypothesis_programs(max_ops=4))
def test_library_rules_pass_on_random_programs(prog: Prog) -> None:
    """No false alarms: funcgrad's own rules, checked on fuzz programs (kinks, jumps,
    stop_gradient and custom rules included), forward and reverse."""
    f = build(fg, prog)
    args = [fnp.asarray(a) for a in inputs(prog)]
    names = transforms_for(prog)
    fg.config.update("funcgrad_check_rules", True)
    try:
        if "grad" in names:
            fg.grad(lambda *a: fnp.sum(f(*a)), argnums=tuple(range(len(args))))(*args)
        if "jvp" in names:
            fg.jvp(f, tuple(args), tuple(fnp.ones_like(a) for a in args))
    finally:
        fg.config.update("funcgrad_check_rules", False)
