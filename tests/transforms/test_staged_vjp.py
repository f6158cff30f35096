"""Eager reverse mode on the JAX face with staged vjp rules (funcgrad.transforms.staged_vjp):
the same gradients as the eager rules, bit for bit, across x64 switches, fan-out and mixed
operand kinds, and a staged signature is reused rather than staged again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as jnp
from funcgrad.primitives import elementwise as E
from funcgrad.transforms import staged_vjp


@pytest.fixture()
def stage_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], None]]:
    def set_threshold(n: int) -> None:
        fg.clear_caches()
        monkeypatch.setattr(staged_vjp, "STAGE_AFTER", n)
    yield set_threshold
    fg.clear_caches()


def _loss(x: Any, w: Any) -> Any:
    h = jnp.tanh(x * 0.5 + w)          # a number, an array operand
    h = h * h + jnp.exp(-h) / 3.0      # fan-out of h
    return jnp.sum(h * x - jnp.sin(w) * 2.0)


SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=4),
                    elements=st.floats(-2, 2)),
       x64_first=st.booleans())
def test_staged_grads_equal_eager_across_x64_switches(x: np.ndarray, x64_first: bool,
                                                       stage_at: Callable[[int], None]
                                                       ) -> None:
    w = np.cos(x)
    g = fg.grad(_loss, argnums=(0, 1))

    def run(x64: bool) -> list[np.ndarray]:
        with fg.experimental.enable_x64(x64):
            return [np.asarray(v) for v in g(jnp.asarray(x), jnp.asarray(w))]

    order = [x64_first, not x64_first, x64_first]
    stage_at(1 << 30)
    eager = {m: run(m) for m in (True, False)}
    stage_at(1)
    for mode in order * 2:  # staged under one mode, then used or restaged under the other
        for got, want in zip(run(mode), eager[mode]):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, strict=True)


def test_a_staged_signature_is_reused(stage_at: Callable[[int], None]) -> None:
    stage_at(2)
    f = fg.grad(lambda x: jnp.sum(x * 3.0))
    x = jnp.ones(5)
    f(x)
    assert staged_vjp.staged_count(E.mul_p) == 0
    f(x)
    assert staged_vjp.staged_count(E.mul_p) == 1
    for _ in range(5):
        np.testing.assert_array_equal(np.asarray(f(x)), np.full(5, 3.0, np.float32))
    assert staged_vjp.staged_count(E.mul_p) == 1
    # Another shape is another signature.
    f(jnp.ones(6))
    f(jnp.ones(6))
    assert staged_vjp.staged_count(E.mul_p) == 2


def test_nested_transformations_keep_the_eager_rules(stage_at: Callable[[int], None]) -> None:
    stage_at(1)
    f = lambda x: jnp.sum(jnp.sin(x) * x)
    x = jnp.linspace(-1.0, 1.0, 4)
    for _ in range(3):
        h = fg.jacfwd(fg.grad(f))(x)        # backward under a jvp trace
        hj = fg.jit(fg.hessian(f))(x)       # and under staging
        xs = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
        want = np.diag(2 * np.cos(xs) - xs * np.sin(xs))
        np.testing.assert_allclose(np.asarray(h), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(hj), want, rtol=1e-5, atol=1e-6)
