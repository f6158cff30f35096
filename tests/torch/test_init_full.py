"""torch.nn.init (all 26 names) against PyTorch 2.13: fans, gains, deterministic fills,
distributions' bounds and moments, errors, deprecated aliases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

REF = [ln.strip() for ln in open("/work/main/tests/data/reference/torch_nn_init_names.txt")
       if ln.strip() and not ln.startswith("#")]


def test_all_names() -> None:
    assert sorted(set(REF) - set(dir(ft.nn.init))) == []


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=2, max_size=4))
def test_fans_and_bounds(shape: list[int]) -> None:
    w = ft.empty(*shape)
    tw = torch.empty(*shape)
    assert ft.nn.init._calculate_fan_in_and_fan_out(w) == \
        torch.nn.init._calculate_fan_in_and_fan_out(tw)
    fan_in, fan_out = ft.nn.init._calculate_fan_in_and_fan_out(w)
    b = math.sqrt(6.0 / (fan_in + fan_out))
    assert float(ft.nn.init.xavier_uniform_(w).abs().max()) <= b + 1e-6
    kb = math.sqrt(3.0) * ft.nn.init.calculate_gain("relu") / math.sqrt(fan_in)
    assert float(ft.nn.init.kaiming_uniform_(w, nonlinearity="relu").abs().max()) <= kb + 1e-6


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (4, 2, 3)])
def test_orthogonal(shape: tuple[int, ...]) -> None:
    w = ft.nn.init.orthogonal_(ft.empty(*shape), gain=2.0).reshape(shape[0], -1)
    small = w @ w.T if shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(small.numpy(), 4 * np.eye(small.shape[0]), atol=1e-5)


def test_deterministic_fills_match_torch() -> None:
    for shape in [(2, 3), (3, 2)]:
        np.testing.assert_array_equal(ft.nn.init.eye_(ft.empty(*shape)).numpy(),
                                      torch.nn.init.eye_(torch.empty(*shape)).numpy())
    for shape, groups in [((2, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 3, 1, 3, 3), 1)]:
        np.testing.assert_array_equal(
            ft.nn.init.dirac_(ft.empty(*shape), groups).numpy(),
            torch.nn.init.dirac_(torch.empty(*shape), groups).numpy())
    np.testing.assert_array_equal(ft.nn.init.constant_(ft.empty(2), 0.5).numpy(),
                                  torch.nn.init.constant_(torch.empty(2), 0.5).numpy())
    for name in ("relu", "tanh", "selu", "sigmoid", "conv2d"):
        assert ft.nn.init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    assert ft.nn.init.calculate_gain("leaky_relu", 0.2) == \
        torch.nn.init.calculate_gain("leaky_relu", 0.2)


def test_distributions() -> None:
    _ = ft.manual_seed(0)
    w = ft.nn.init.trunc_normal_(ft.empty(20000), mean=0.5, std=1.0, a=-1.0, b=1.0)
    assert float(w.min()) >= -1.0 and float(w.max()) <= 1.0
    tw = torch.nn.init.trunc_normal_(torch.empty(200000), mean=0.5, std=1.0, a=-1.0, b=1.0)
    assert abs(float(w.mean()) - float(tw.mean())) < 0.03
    s = ft.nn.init.sparse_(ft.empty(10, 4), sparsity=0.3)
    assert [int((s[:, c] == 0).sum()) for c in range(4)] == [3, 3, 3, 3]
    g = ft.Generator().manual_seed(3)
    a = ft.nn.init.normal_(ft.empty(5), generator=g)
    g.manual_seed(3)
    assert ft.equal(a, ft.nn.init.normal_(ft.empty(5), generator=g))


def test_errors_and_deprecated() -> None:
    for fn in ("eye_", "sparse_"):
        args = (0.1,) if fn == "sparse_" else ()
        with pytest.raises(ValueError) as ef:
            getattr(ft.nn.init, fn)(ft.empty(2, 2, 2), *args)
        with pytest.raises(ValueError) as et:
            getattr(torch.nn.init, fn)(torch.empty(2, 2, 2), *args)
        assert str(ef.value) == str(et.value)
    with pytest.raises(ValueError, match="Fan in and fan out"):
        ft.nn.init.xavier_uniform_(ft.empty(3))
    with pytest.warns(FutureWarning, match="deprecated in favor of `nn.init.uniform_`"):
        ft.nn.init.uniform(ft.empty(2))
