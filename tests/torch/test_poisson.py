"""``torch.poisson``: draws whose means and variances are the rates (a statistical check
on drawn rates), PyTorch's dtype, errors and zero derivative."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft


@settings(max_examples=20, deadline=None, derandomize=True, database=None)
@given(st.floats(0.0, 50.0), st.sampled_from(["float32", "float64"]))
def test_draws_have_the_rate_as_mean_and_variance(rate: float, dtype: str) -> None:
    n = 20000
    g = ft.Generator().manual_seed(1)
    x = ft.poisson(ft.full((n,), rate, dtype=getattr(ft, dtype)), generator=g)
    assert x.dtype is getattr(ft, dtype) and x.shape == (n,)
    v = x.numpy().astype(np.float64)
    assert np.all(v == np.round(v)) and np.all(v >= 0)
    # Five standard errors: the mean's is sqrt(rate / n).
    assert abs(v.mean() - rate) <= 5 * np.sqrt(max(rate, 1e-3) / n) + 1e-9
    if rate > 0.5:
        assert abs(v.var() / rate - 1) < 0.1


def test_errors_and_gradient_match_torch() -> None:
    torch = pytest.importorskip("torch")

    def probe(L: Any) -> list[Any]:
        out: list[Any] = []
        for bad in (lambda: L.poisson(L.tensor([1, 2])), lambda: L.poisson(L.tensor([-1.0])),
                    lambda: L.poisson(L.tensor([float("nan")]))):
            try:
                bad()
            except Exception as e:  # noqa: BLE001 - the exception is compared
                out.append((type(e).__name__, str(e)))
        x = L.tensor([3.0, 0.5], requires_grad=True)
        y = L.poisson(x)
        (y * 2).sum().backward()
        out += [y.grad_fn.name(), x.grad.tolist(), str(L.poisson(L.zeros(2)).dtype)]
        return out

    assert probe(ft) == probe(torch)
