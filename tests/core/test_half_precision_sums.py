"""Sums and means of float16/bfloat16 arrays (and the torch face's cumulative sums)
accumulate in float32 and round once, as XLA and PyTorch do (a running sum kept in
bfloat16 stops growing: 4096 squares of N(0, 9) once summed to 17792 instead of 37120)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad import torch as ft

SETTINGS = settings(max_examples=10, deadline=None, database=None)
HALVES = {"bfloat16": dtypes.bfloat16, "float16": np.dtype(np.float16)}


def _data(n: int, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n) * 3).astype(np.float32)


@SETTINGS
@given(n=st.integers(1, 5000), seed=st.integers(0, 2 ** 16))
@pytest.mark.parametrize("half", sorted(HALVES))
def test_half_sums_are_rounded_float32_sums(half: str, n: int, seed: int) -> None:
    dt = HALVES[half]
    x = _data(n, seed).astype(dt)
    squares = (x.astype(np.float32) * x.astype(np.float32)).astype(dt)
    exact = squares.astype(np.float64)
    # (jnp.cumsum of halves rounds each addition, in XLA's rows of 16, as JAX's does:
    # tests/test_review_fixes_jax15.py compares it with JAX bit for bit.)
    for got, want in [(fnp.sum(fnp.asarray(squares)), exact.sum()),
                      (fnp.mean(fnp.asarray(squares)), exact.mean()),
                      (ft.tensor(squares).sum().item(), exact.sum()),
                      (ft.tensor(squares).cumsum(0)[-1].item(), exact.sum())]:
        # One rounding to the half type (8 or 11 bits) of a float32-accurate sum.
        assert abs(float(got) - want) <= 2.0 ** (-7 if half == "bfloat16" else -10) * want


@SETTINGS
@given(n=st.integers(1, 5000), seed=st.integers(0, 2 ** 16))
def test_bfloat16_reductions_match_torch_and_jax(n: int, seed: int) -> None:
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    x = _data(n, seed)
    ours, theirs = ft.tensor(x).bfloat16(), torch.tensor(x).bfloat16()
    pairs: list[tuple[Any, Any]] = [
        (ours.sum(), theirs.sum()), ((ours * ours).sum(), (theirs * theirs).sum()),
        (ours.mean(), theirs.mean()), (ours.cumsum(0), theirs.cumsum(0)),
        (ours.var(), theirs.var())]
    for a, b in pairs:
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())
    j_ours, j_theirs = fnp.asarray(x).astype(fnp.bfloat16), jnp.asarray(x).astype(jnp.bfloat16)
    for a, b in [(fnp.sum(j_ours * j_ours), jnp.sum(j_theirs * j_theirs)),
                 (fnp.mean(j_ours * j_ours), jnp.mean(j_theirs * j_theirs)),
                 (fnp.var(j_ours), jnp.var(j_theirs))]:
        np.testing.assert_array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))
