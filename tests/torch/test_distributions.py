"""torch.distributions against PyTorch 2.13: densities, entropies, moments, KL divergences and
their gradients, reprs and validation errors; samples checked by shape, dtype, support and
6-sigma bounds on their means (funcgrad's random streams are not PyTorch's bits)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch.distributions import Categorical, Distribution, kl_divergence

torch = pytest.importorskip("torch", exc_type=ImportError)


@pytest.fixture(autouse=True)
def _torch_validates_arguments():
    """PyTorch's default (validation on), which importing torch.compile's machinery turns
    off for the whole process (torch._dynamo calls set_default_validate_args(False)): the
    comparisons need the default whatever ran before in this worker."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)

SHAPES = st.sampled_from([(), (3,), (2, 3)])


def _params(seed: int, shape: tuple[int, ...], name: str) -> dict[str, np.ndarray]:
    """Parameters of distribution ``name`` (arrays of ``shape``) and values to score."""
    r = np.random.default_rng(seed)
    if name == "Normal":
        return {"loc": r.normal(size=shape), "scale": r.uniform(0.2, 3, shape),
                "value": r.normal(size=shape) * 2}
    if name == "Uniform":
        low = r.normal(size=shape)
        high = low + r.uniform(0.5, 3, shape)
        return {"low": low, "high": high, "value": low + (high - low) * r.uniform(0, 1, shape)}
    if name in ("Bernoulli", "BernoulliLogits"):
        p = r.uniform(0.05, 0.95, shape)
        key = "probs" if name == "Bernoulli" else "logits"
        return {key: p if key == "probs" else np.log(p / (1 - p)),
                "value": (r.uniform(size=shape) < 0.5).astype(np.float64)}
    k = 4
    w = r.uniform(0.1, 2, (*shape, k))
    key = "probs" if name == "Categorical" else "logits"
    return {key: w if key == "probs" else np.log(w),
            "value": r.integers(0, k, shape)}


def _make(T: Any, name: str, params: dict[str, np.ndarray]) -> tuple[Any, list[Any], Any]:
    D = T.distributions
    args = {k: T.tensor(v, requires_grad=True) for k, v in params.items() if k != "value"}
    cls = {"BernoulliLogits": "Bernoulli", "CategoricalLogits": "Categorical"}.get(name, name)
    dist = getattr(D, cls)(**args)
    return dist, list(args.values()), T.tensor(params["value"])


NAMES = ["Normal", "Uniform", "Bernoulli", "BernoulliLogits", "Categorical", "CategoricalLogits"]
PROPS = ["mean", "variance", "stddev", "mode"]


def _close(a: Any, b: Any) -> None:
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), SHAPES, st.sampled_from(NAMES))
def test_values_and_gradients_match_torch(seed: int, shape: tuple[int, ...], name: str) -> None:
    params = _params(seed, shape, name)
    (df, pf, vf), (dt, pt, vt) = _make(ft, name, params), _make(torch, name, params)
    assert repr(df) == repr(dt)
    assert df.batch_shape == dt.batch_shape and df.event_shape == dt.event_shape
    assert df.has_rsample == dt.has_rsample
    for prop in PROPS:
        if name.startswith("Categorical") and prop == "stddev":
            continue
        _close(getattr(df, prop), getattr(dt, prop))
    if name.startswith(("Bernoulli", "Categorical")):
        _close(df.probs, dt.probs)
        _close(df.logits, dt.logits)
        _close(df.enumerate_support(), dt.enumerate_support())
    lf, lt = df.log_prob(vf), dt.log_prob(vt)
    ef, et = df.entropy(), dt.entropy()
    _close(lf, lt)
    _close(ef, et)
    if name in ("Normal", "Uniform"):
        _close(df.cdf(vf), dt.cdf(vt))
        q = np.full(shape, 0.3)
        _close(df.icdf(ft.tensor(q)), dt.icdf(torch.tensor(q)))
    gf = ft.autograd.grad((lf.sum() + ef.sum() * 0.5), pf)
    gt = torch.autograd.grad((lt.sum() + et.sum() * 0.5), pt)
    for a, b in zip(gf, gt):
        _close(a, b)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), SHAPES, st.sampled_from(NAMES))
def test_kl_divergence_and_gradients_match_torch(seed: int, shape: tuple[int, ...],
                                                 name: str) -> None:
    p1, p2 = _params(seed, shape, name), _params(seed + 1, shape, name)
    (pf, af, _), (qf, bf, _) = _make(ft, name, p1), _make(ft, name, p2)
    (pt, at, _), (qt, bt, _) = _make(torch, name, p1), _make(torch, name, p2)
    kf, kt = kl_divergence(pf, qf), torch.distributions.kl_divergence(pt, qt)
    _close(kf, kt)
    _close(kl_divergence(pf, pf), torch.distributions.kl_divergence(pt, pt))
    if np.isfinite(kt.detach().numpy()).all():
        for a, b in zip(ft.autograd.grad(kf.sum(), af + bf),
                        torch.autograd.grad(kt.sum(), at + bt)):
            _close(a, b)


def _edge_cases(T: Any) -> list[Callable[[], Any]]:
    D = T.distributions
    return [
        lambda: D.Normal(T.zeros(2), T.ones(2)), lambda: D.Normal(0.0, 1.0),
        lambda: D.Categorical(probs=T.ones(3)), lambda: D.Categorical(logits=T.ones(3)),
        lambda: D.Bernoulli(probs=T.tensor(0.3)), lambda: D.Bernoulli(logits=T.tensor([0.3])),
        lambda: D.Uniform(0.0, 1.0), lambda: D.Normal(0.0, -1.0),
        lambda: D.Normal(T.zeros(2), T.tensor([1.0, 0.0])),
        lambda: D.Normal(0.0, 1.0).log_prob(T.tensor(float("nan"))),
        lambda: D.Uniform(0.0, 1.0).log_prob(T.tensor(2.0)),
        lambda: D.Bernoulli(probs=0.3).log_prob(T.tensor(0.5)), lambda: D.Bernoulli(),
        lambda: D.Bernoulli(0.2, 0.1), lambda: D.Categorical(T.tensor([1.0, -1.0])),
        lambda: D.Categorical(T.tensor(1.0)), lambda: D.Categorical(logits=T.tensor(1.0)),
        lambda: D.Uniform(1.0, 0.0),
        lambda: D.kl_divergence(D.Categorical(T.ones(2)), D.Normal(0.0, 1.0)),
        lambda: D.Normal(0.0, 1.0).log_prob(3),
        lambda: D.Normal(T.zeros(2), 1.0).log_prob(T.zeros(3)),
        lambda: D.Categorical(logits=T.ones(3)).log_prob(T.tensor(3)),
        lambda: D.Uniform(T.tensor([0.0, 1.0]), T.tensor([1.0, 0.5])),
        lambda: D.Bernoulli(probs=T.tensor([0.5, 1.5])),
        lambda: D.Categorical(logits=T.tensor([0.0, float("nan")])),
        lambda: D.Uniform(0.0, 1.0).log_prob(T.tensor([0.5, 1.0])),
        lambda: D.Bernoulli(T.tensor([0.5, 0.7])).mode, lambda: D.Bernoulli(0.5).mode,
        lambda: D.Uniform(0.0, 1.0).support, lambda: D.Uniform(0.0, 1.0).mode,
        lambda: D.Categorical(T.ones(2, 3)).mean, lambda: D.Categorical(T.ones(2, 3)).support,
        lambda: D.Categorical(T.ones(2, 3)).sample((4,)).shape,
        lambda: D.Normal(T.zeros(2), 1.0).expand((3, 2)),
        lambda: D.Categorical(T.ones(3)).expand((2,)).sample().shape,
        lambda: D.Bernoulli(T.tensor([0.25])).expand((2, 1)).log_prob(T.ones(2, 1)),
        lambda: D.Uniform(0.0, 1.0).expand((2,)).entropy(),
        lambda: D.Bernoulli(T.tensor([0.0, 1.0])).entropy(),
        lambda: D.Categorical(T.tensor([0.0, 1.0])).entropy(),
        lambda: D.kl_divergence(D.Bernoulli(T.tensor([0.0, 1.0, 0.5])),
                                D.Bernoulli(T.tensor([1.0, 0.0, 0.2]))),
        lambda: D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(0.5, 2.0)),
        lambda: D.kl_divergence(D.Uniform(0.0, 1.0), D.Uniform(-1.0, 2.0)),
        lambda: D.kl_divergence(D.Categorical(T.tensor([0.0, 1.0])),
                                D.Categorical(T.tensor([1.0, 0.0]))),
        lambda: D.Normal(0.0, -1.0, validate_args=False).scale,
        lambda: D.Uniform(0.0, 1.0, validate_args=False).log_prob(T.tensor(2.0)),
        lambda: D.Normal(T.tensor(0.0, dtype=T.float64), 1.0).entropy(),
        lambda: D.Normal(T.zeros(1), 1.0).perplexity(),
        lambda: D.Normal(0.0, 1.0).rsample((2, 3)).shape,
        lambda: D.Distribution(validate_args=False).mean,
        lambda: D.Distribution(validate_args=False).mode,
        lambda: D.Distribution(validate_args=False).log_prob(T.zeros(1)),
        lambda: D.Bernoulli(0.5).rsample(),
        lambda: D.constraints.simplex,
    ]


@pytest.mark.parametrize("i", range(len(_edge_cases(ft))))
def test_reprs_results_and_errors_match_torch(i: int) -> None:
    def outcome(T: Any) -> str:
        try:
            result = _edge_cases(T)[i]()
        except Exception as e:  # noqa: BLE001 - the comparison is the point
            return f"{type(e).__name__}: {e}".replace("funcgrad.torch", "torch")
        return f"ok: {result!r}".replace("funcgrad.torch", "torch")

    assert outcome(ft) == outcome(torch)


def test_validate_args_default_can_be_switched() -> None:
    assert Distribution._validate_args is True
    Distribution.set_default_validate_args(False)
    try:
        assert ft.distributions.Normal(0.0, -1.0).scale.item() == -1.0
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="GreaterThan"):
        ft.distributions.Normal(0.0, -1.0)


def _check_mean(x: np.ndarray, mean: float, var: float) -> None:
    assert abs(x.mean() - mean) <= 6 * math.sqrt(var / x.size) + 1e-12


def test_samples_shapes_dtypes_support_and_means() -> None:
    D = ft.distributions
    n = 4000
    d = D.Normal(ft.tensor([0.0, 3.0]), ft.tensor([1.0, 0.5]))
    s = d.sample((n,))
    assert s.shape == ft.Size([n, 2]) and s.dtype == ft.float32 and not s.requires_grad
    _check_mean(s.numpy()[:, 0], 0.0, 1.0)
    _check_mean(s.numpy()[:, 1], 3.0, 0.25)
    u = D.Uniform(ft.tensor(-1.0, dtype=ft.float64), 3.0).sample((n,)).numpy()
    assert u.dtype == np.float64 and ((u >= -1) & (u < 3)).all()
    _check_mean(u, 1.0, 16 / 12)
    b = D.Bernoulli(probs=ft.tensor([0.2, 0.9])).sample((n,))
    assert b.dtype == ft.float32 and set(np.unique(b.numpy())) <= {0.0, 1.0}
    _check_mean(b.numpy()[:, 0], 0.2, 0.16)
    _check_mean(b.numpy()[:, 1], 0.9, 0.09)
    c = Categorical(probs=ft.tensor([[0.1, 0.2, 0.7], [1.0, 0.0, 0.0]])).sample((n, 1))
    assert c.shape == ft.Size([n, 1, 2]) and c.dtype == ft.int64
    cn = c.numpy()
    assert set(np.unique(cn)) <= {0, 1, 2} and (cn[..., 1] == 0).all()
    _check_mean(cn[..., 0].ravel(), 1.6, 0.2 + 2.8 - 1.6 ** 2)


def test_rsample_carries_gradients() -> None:
    loc = ft.tensor([0.5, -1.0], requires_grad=True)
    scale = ft.tensor([2.0, 0.5], requires_grad=True)
    x = ft.distributions.Normal(loc, scale).rsample((3000,))
    assert x.requires_grad
    gl, gs = ft.autograd.grad(x.sum(), (loc, scale))
    np.testing.assert_allclose(gl.numpy(), [3000.0, 3000.0])
    eps = ((x - loc) / scale).detach()
    np.testing.assert_allclose(gs.numpy(), eps.sum(0).numpy(), rtol=1e-5, atol=1e-3)
    low = ft.tensor(1.0, requires_grad=True)
    high = ft.tensor(4.0, requires_grad=True)
    y = ft.distributions.Uniform(low, high).rsample((3000,))
    assert ((y.detach().numpy() >= 1) & (y.detach().numpy() < 4)).all()
    g_low, g_high = ft.autograd.grad(y.sum(), (low, high))
    assert g_low.item() + g_high.item() == pytest.approx(3000.0)
    _check_mean((y.detach().numpy() - 1) / 3, 0.5, 1 / 12)
