"""More torch.distributions families against PyTorch 2.13 (Exponential, Laplace, Gamma, Beta,
Dirichlet, Poisson, Binomial, Geometric, OneHotCategorical, MultivariateNormal, Independent,
LogNormal, TransformedDistribution and its transforms): densities, entropies, moments,
cdf/icdf, KL divergences and their gradients, reprs and validation errors; samples checked
by shape, dtype, support and 6-sigma bounds on their means (funcgrad's random streams are
not PyTorch's bits)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

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
K = 3  # categories / event size of the vector families


def _spd(r: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    a = r.normal(size=(*shape, K, K))
    return a @ np.swapaxes(a, -1, -2) + 0.5 * np.eye(K)


def _params(seed: int, shape: tuple[int, ...], name: str) -> dict[str, Any]:
    """Parameters of family ``name`` (arrays of ``shape``, plus the event) and a value."""
    r = np.random.default_rng(seed)
    pos = lambda lo=0.3, hi=3.0: r.uniform(lo, hi, shape)  # noqa: E731
    if name == "Exponential":
        return {"rate": pos(), "value": r.exponential(size=shape)}
    if name in ("Laplace", "LogNormal"):
        value = r.laplace(size=shape) if name == "Laplace" else r.lognormal(size=shape)
        return {"loc": r.normal(size=shape), "scale": pos(), "value": value}
    if name == "Gamma":
        return {"concentration": pos(0.5, 4), "rate": pos(), "value": r.gamma(2.0, size=shape)}
    if name == "Beta":
        return {"concentration1": pos(0.5, 4), "concentration0": pos(0.5, 4),
                "value": r.uniform(0.05, 0.95, shape)}
    if name == "Dirichlet":
        return {"concentration": r.uniform(0.5, 4, (*shape, K)),
                "value": r.dirichlet(np.ones(K), shape) if shape else r.dirichlet(np.ones(K))}
    if name == "Poisson":
        return {"rate": pos(0.5, 6), "value": r.poisson(2.0, shape).astype(np.float64)}
    if name in ("Binomial", "BinomialLogits"):
        p = r.uniform(0.1, 0.9, shape)
        key = "probs" if name == "Binomial" else "logits"
        return {"total_count": np.full(shape, 6.0), key: p if key == "probs" else
                np.log(p / (1 - p)), "value": r.integers(0, 7, shape).astype(np.float64)}
    if name in ("Geometric", "GeometricLogits"):
        p = r.uniform(0.1, 0.9, shape)
        key = "probs" if name == "Geometric" else "logits"
        return {key: p if key == "probs" else np.log(p / (1 - p)),
                "value": r.geometric(0.4, shape).astype(np.float64) - 1}
    if name in ("OneHotCategorical", "OneHotCategoricalLogits"):
        w = r.uniform(0.1, 2, (*shape, K))
        key = "probs" if name == "OneHotCategorical" else "logits"
        return {key: w if key == "probs" else np.log(w),
                "value": np.eye(K)[r.integers(0, K, shape)]}
    if name.startswith("MultivariateNormal"):
        cov = _spd(r, shape)
        mat = {"MultivariateNormal": cov, "MultivariateNormalTril": np.linalg.cholesky(cov),
               "MultivariateNormalPrecision": np.linalg.inv(cov)}[name]
        return {"loc": r.normal(size=(*shape, K)), "matrix": mat,
                "value": r.normal(size=(*shape, K))}
    if name == "Independent":
        return {"loc": r.normal(size=(*shape, K)), "scale": r.uniform(0.3, 3, (*shape, K)),
                "value": r.normal(size=(*shape, K))}
    assert name == "Transformed"
    return {"loc": r.normal(size=shape), "scale": pos(), "shift": r.normal(size=shape),
            "factor": pos(), "value": r.uniform(0.05, 0.95, shape)}


def _build(T: Any, name: str, a: dict[str, Any]) -> Any:
    D = T.distributions
    if name.startswith("MultivariateNormal"):
        key = {"MultivariateNormal": "covariance_matrix", "MultivariateNormalTril": "scale_tril",
               "MultivariateNormalPrecision": "precision_matrix"}[name]
        return D.MultivariateNormal(a["loc"], **{key: a["matrix"]})
    if name == "Independent":
        return D.Independent(D.Normal(a["loc"], a["scale"]), 1)
    if name == "Transformed":
        parts = [D.transforms.AffineTransform(a["shift"], a["factor"]),
                 D.transforms.SigmoidTransform()]
        return D.TransformedDistribution(D.Normal(a["loc"], a["scale"]), parts)
    cls = name.removesuffix("Logits")
    return getattr(D, cls)(**a)


def _make(T: Any, name: str, params: dict[str, Any]) -> tuple[Any, list[Any], Any]:
    args = {k: T.tensor(v, requires_grad=k != "total_count") for k, v in params.items()
            if k != "value"}
    dist = _build(T, name, args)
    return dist, [v for k, v in args.items() if k != "total_count"], T.tensor(params["value"])


NAMES = ["Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "Poisson", "Binomial",
         "BinomialLogits", "Geometric", "GeometricLogits", "OneHotCategorical",
         "OneHotCategoricalLogits", "MultivariateNormal", "MultivariateNormalTril",
         "MultivariateNormalPrecision", "Independent", "LogNormal", "Transformed"]
VECTOR = ("Dirichlet", "OneHotCategorical", "MultivariateNormal", "Independent")


def _close(a: Any, b: Any, rtol: float = 1e-10, atol: float = 1e-11) -> None:
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except NotImplementedError as e:
        return e


def _same(a: Any, b: Any, rtol: float = 1e-10) -> bool:
    """Both raised NotImplementedError, or both gave close tensors; whether a value came."""
    if isinstance(b, NotImplementedError):
        assert isinstance(a, NotImplementedError), a
        return False
    _close(a, b, rtol)
    return True


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), SHAPES, st.sampled_from(NAMES))
def test_values_and_gradients_match_torch(seed: int, shape: tuple[int, ...], name: str) -> None:
    if name in ("Independent",) and not shape:
        shape = (2,)
    params = _params(seed, shape, name)
    (df, pf, vf), (dt, pt, vt) = _make(ft, name, params), _make(torch, name, params)
    assert repr(df) == repr(dt)
    assert df.batch_shape == dt.batch_shape and df.event_shape == dt.event_shape
    assert df.has_rsample == dt.has_rsample
    assert repr(df.support) == repr(dt.support)
    for prop in ("mean", "variance", "stddev", "mode"):
        _same(_try(lambda p=prop: getattr(df, p)), _try(lambda p=prop: getattr(dt, p)))
    for prop in ("probs", "logits", "concentration1", "concentration0", "loc", "scale",
                 "scale_tril", "covariance_matrix", "precision_matrix"):
        if hasattr(dt, prop) and not isinstance(dt, torch.distributions.Independent):
            _close(getattr(df, prop), getattr(dt, prop), 1e-9)
    if dt.has_enumerate_support:
        _close(df.enumerate_support(), dt.enumerate_support())
    lf, lt = df.log_prob(vf), dt.log_prob(vt)
    _close(lf, lt, 1e-9)
    total_f, total_t = lf.sum(), lt.sum()
    ef, et = _try(df.entropy), _try(dt.entropy)
    if _same(ef, et, 1e-9):
        total_f, total_t = total_f + 0.5 * ef.sum(), total_t + 0.5 * et.sum()
    cf, ct = _try(lambda: df.cdf(vf)), _try(lambda: dt.cdf(vt))
    if _same(cf, ct, 1e-9) and name != "Gamma":  # torch has no igamma derivative in a
        total_f, total_t = total_f + cf.sum(), total_t + ct.sum()
        q = np.full(shape, 0.3)
        _same(_try(lambda: df.icdf(ft.tensor(q))), _try(lambda: dt.icdf(torch.tensor(q))), 1e-9)
    gf = ft.autograd.grad(total_f, pf, allow_unused=True)
    gt = torch.autograd.grad(total_t, pt, allow_unused=True)
    for a, b in zip(gf, gt):
        assert (a is None) == (b is None)
        if b is not None:
            _close(a, b, 1e-8, 1e-9)
    big = (4, *df.batch_shape)
    ef_, et_ = df.expand(big), dt.expand(big)
    assert repr(ef_) == repr(et_) and ef_.batch_shape == et_.batch_shape
    _close(ef_.log_prob(vf), et_.log_prob(vt), 1e-9)
    s = df.sample((2,))
    assert tuple(s.shape) == tuple(dt.sample((2,)).shape) and str(s.dtype) == str(vt.dtype)


KL_SAME = ["Exponential", "Laplace", "Gamma", "Beta", "Dirichlet", "Poisson", "Binomial",
           "Geometric", "OneHotCategorical", "MultivariateNormal", "MultivariateNormalTril",
           "Independent", "LogNormal"]
KL_CROSS = [("Bernoulli", "Poisson"), ("Beta", "Exponential"), ("Beta", "Gamma"),
            ("Beta", "Normal"), ("Beta", "Uniform"), ("Exponential", "Gamma"),
            ("Exponential", "Normal"), ("Exponential", "Beta"), ("Gamma", "Exponential"),
            ("Gamma", "Normal"), ("Gamma", "Uniform"), ("Laplace", "Normal"),
            ("Laplace", "Gamma"), ("Normal", "Laplace"), ("Normal", "Gamma"),
            ("Poisson", "Binomial"), ("Uniform", "Beta"), ("Uniform", "Exponential"),
            ("Uniform", "Gamma"), ("Uniform", "Normal"), ("Normal", "Normal")]


def _simple(seed: int, shape: tuple[int, ...], name: str) -> dict[str, Any]:
    r = np.random.default_rng(seed)
    if name == "Normal":
        return {"loc": r.normal(size=shape), "scale": r.uniform(0.3, 3, shape), "value": 0}
    if name == "Uniform":
        low = r.uniform(0.05, 0.4, shape) if seed % 2 else r.normal(size=shape)
        return {"low": low, "high": low + r.uniform(0.1, 0.5, shape), "value": 0}
    if name == "Bernoulli":
        return {"probs": r.uniform(0.1, 0.9, shape), "value": 0}
    return _params(seed, shape, name)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), SHAPES, st.sampled_from(KL_SAME + KL_CROSS))
def test_kl_divergence_and_gradients_match_torch(seed: int, shape: tuple[int, ...],
                                                 pair: Any) -> None:
    name_p, name_q = (pair, pair) if isinstance(pair, str) else pair
    if name_p == "Independent" and not shape:
        shape = (2,)
    (pf, af, _), (pt, at, _) = (_make(T, name_p, _simple(seed, shape, name_p))
                                for T in (ft, torch))
    (qf, bf, _), (qt, bt, _) = (_make(T, name_q, _simple(seed + 1, shape, name_q))
                                for T in (ft, torch))
    kf, kt = ft.distributions.kl_divergence(pf, qf), torch.distributions.kl_divergence(pt, qt)
    _close(kf, kt, 1e-9)
    if name_p == name_q:
        _close(ft.distributions.kl_divergence(pf, pf), torch.distributions.kl_divergence(pt, pt))
    if np.isfinite(kt.detach().numpy()).all():
        gf = ft.autograd.grad(kf.sum(), af + bf, allow_unused=True)
        gt = torch.autograd.grad(kt.sum(), at + bt, allow_unused=True)
        for a, b in zip(gf, gt):
            assert (a is None) == (b is None)
            if b is not None:
                _close(a, b, 1e-8, 1e-9)


def _edge_cases(T: Any) -> list[Callable[[], Any]]:
    D = T.distributions
    Tr = D.transforms
    mvn = lambda **kw: D.MultivariateNormal(T.zeros(2), **kw)  # noqa: E731
    return [
        lambda: D.Exponential(-1.0), lambda: D.Exponential(T.tensor([1.0, 0.0])),
        lambda: D.Exponential(2.0).log_prob(T.tensor(-1.0)),
        lambda: D.Exponential(T.tensor([2.0])).icdf(T.tensor([0.5])),
        lambda: D.Laplace(0.0, -1.0), lambda: D.Laplace(0.0, 1.0).support,
        lambda: D.Gamma(1.0, 0.0), lambda: D.Gamma(T.tensor([0.5]), 1.0).mode,
        lambda: D.Gamma(2.0, 1.0).log_prob(3), lambda: D.Gamma(2.0, 1.0).support,
        lambda: D.Gamma(2.0, 3.0).cdf(T.tensor(1.0)),
        lambda: D.Beta(0.0, 1.0), lambda: D.Beta(2.0, 3.0).concentration1,
        lambda: D.Beta(T.tensor([0.5, 2.0]), T.tensor([0.5, 3.0])).mode,
        lambda: D.Beta(2.0, 3.0).log_prob(T.tensor(1.5)),
        lambda: D.Dirichlet(T.tensor(1.0)), lambda: D.Dirichlet(T.tensor([1.0, -1.0])),
        lambda: D.Dirichlet(T.tensor([[0.5, 0.7, 0.2], [2.0, 3.0, 1.0]])).mode,
        lambda: D.Dirichlet(T.ones(3)).log_prob(T.tensor([0.5, 0.5, 0.5])),
        lambda: D.Dirichlet(T.ones(2, 3)).expand((4, 2)),
        lambda: D.Poisson(-1.0), lambda: D.Poisson(2.0).log_prob(T.tensor(0.5)),
        lambda: D.Poisson(2.0).entropy(), lambda: D.Poisson(T.tensor([0.0, 2.5])).mode,
        lambda: D.Poisson(0.0).log_prob(T.tensor(0.0)),
        lambda: D.Binomial(5, T.tensor(0.3)), lambda: D.Binomial(5, T.tensor(0.3)).support,
        lambda: D.Binomial(5, T.tensor(0.3)).log_prob(T.tensor(6.0)),
        lambda: D.Binomial(T.tensor([5.0, 6.0]), T.tensor(0.3)).entropy(),
        lambda: D.Binomial(T.tensor([5.0, 6.0]), T.tensor(0.3)).enumerate_support(),
        lambda: D.Binomial(T.tensor(2.5), T.tensor(0.3)),
        lambda: D.Binomial(3, T.tensor(0.3), T.tensor(0.1)), lambda: D.Binomial(3),
        lambda: D.Binomial(4, T.tensor([0.0, 1.0])).entropy(),
        lambda: D.Binomial(T.tensor([3.0, 4.0]), T.tensor([0.5, 1.0])).mode,
        lambda: D.Geometric(0.0), lambda: D.Geometric(T.tensor([0.5, 0.0])),
        lambda: D.Geometric(1.5), lambda: D.Geometric(0.3),
        lambda: D.Geometric(T.tensor([1.0, 0.5])).log_prob(T.tensor([0.0, 1.0])),
        lambda: D.Geometric(0.3).log_prob(T.tensor(-1.0)),
        lambda: D.OneHotCategorical(T.ones(3)),
        lambda: D.OneHotCategorical(T.ones(3)).log_prob(T.tensor([1.0, 1.0, 0.0])),
        lambda: D.OneHotCategorical(T.ones(2, 3)).enumerate_support().shape,
        lambda: D.OneHotCategorical(T.tensor([1.0, 3.0, 2.0])).mode,
        lambda: D.OneHotCategorical(T.ones(3)).support,
        lambda: D.MultivariateNormal(T.tensor(0.0), T.eye(1)), lambda: mvn(),
        lambda: mvn(covariance_matrix=T.eye(2), scale_tril=T.eye(2)),
        lambda: mvn(covariance_matrix=T.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda: mvn(covariance_matrix=T.tensor([[1.0, 0.5], [0.0, 1.0]])),
        lambda: mvn(scale_tril=T.tensor([[1.0, 0.5], [0.0, 1.0]])),
        lambda: mvn(scale_tril=T.tensor([[1.0, 0.0], [0.5, -1.0]])),
        lambda: mvn(scale_tril=T.ones(2)), lambda: mvn(precision_matrix=T.ones(2)),
        lambda: mvn(covariance_matrix=T.ones(2)),
        lambda: mvn(scale_tril=T.eye(2).expand(3, 2, 2)),
        lambda: mvn(precision_matrix=T.tensor([[2.0, 0.5], [0.5, 1.0]])).covariance_matrix,
        lambda: mvn(scale_tril=T.tensor([[2.0, 0.0], [0.5, 1.0]])).precision_matrix,
        lambda: mvn(covariance_matrix=T.eye(2)).log_prob(T.zeros(3)),
        lambda: mvn(covariance_matrix=T.eye(2)).support,
        lambda: D.MultivariateNormal(T.zeros(3, 2), T.eye(2)).entropy(),
        lambda: D.MultivariateNormal(T.zeros(2), T.eye(2)).log_prob(T.zeros(4, 1, 2)),
        lambda: D.Independent(D.Normal(0.0, 1.0), 1),
        lambda: D.Independent(D.Normal(T.zeros(2, 3), 1.0), 2),
        lambda: D.Independent(D.Normal(T.zeros(2, 3), 1.0), 1).support,
        lambda: D.Independent(D.Bernoulli(T.ones(2) / 2), 1).has_enumerate_support,
        lambda: D.Independent(D.Bernoulli(T.ones(2) / 2), 1).enumerate_support(),
        lambda: D.Independent(D.Normal(T.zeros(2), 1.0), 1).log_prob(T.tensor([0.0, math.nan])),
        lambda: D.Independent(D.Normal(T.zeros(2), 1.0), 0).expand((3, 2)),
        lambda: D.LogNormal(0.0, 1.0), lambda: D.LogNormal(0.0, -1.0),
        lambda: D.LogNormal(0.0, 1.0).log_prob(T.tensor(-1.0)),
        lambda: D.LogNormal(T.zeros(2), 1.0).expand((3, 2)).mean,
        lambda: D.LogNormal(0.0, 1.0).cdf(T.tensor(2.0)),
        lambda: D.LogNormal(0.0, 1.0).icdf(T.tensor(0.25)),
        lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
        lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), [1]),
        lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), Tr.ExpTransform()).support,
        lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), []).support,
        lambda: D.TransformedDistribution(
            D.Normal(0.0, 1.0), [Tr.AffineTransform(0.0, -2.0)]).cdf(T.tensor(1.0)),
        lambda: D.TransformedDistribution(
            D.Normal(T.zeros(3), 1.0), Tr.AffineTransform(0.0, T.ones(3), event_dim=1)
        ).log_prob(T.ones(3)),
        lambda: D.TransformedDistribution(
            D.Normal(T.zeros(3), 1.0), Tr.AffineTransform(0.0, T.ones(3), event_dim=1)
        ).event_shape,
        lambda: D.TransformedDistribution(
            D.Normal(0.0, 1.0), Tr.AffineTransform(T.zeros(2), 1.0)).batch_shape,
        lambda: D.TransformedDistribution(
            D.Normal(0.0, 1.0), Tr.TanhTransform()).log_prob(T.tensor(0.5)),
        lambda: Tr.ComposeTransform([Tr.ExpTransform(), Tr.AffineTransform(1.0, 2.0)]),
        lambda: Tr.ComposeTransform([Tr.ExpTransform(), Tr.AffineTransform(1.0, 2.0)]).inv,
        lambda: Tr.ComposeTransform([Tr.ExpTransform(), Tr.AffineTransform(1.0, -2.0)]).sign,
        lambda: Tr.ComposeTransform([Tr.ExpTransform(), Tr.SigmoidTransform()]).codomain,
        lambda: Tr.ComposeTransform([Tr.ExpTransform()]).inv(T.tensor(2.0)),
        lambda: Tr.ExpTransform().inv, lambda: Tr.ExpTransform().inv.domain,
        lambda: Tr.ExpTransform().inv.inv, lambda: Tr.ExpTransform() == Tr.ExpTransform(),
        lambda: Tr.AffineTransform(1.0, 2.0) == Tr.AffineTransform(1.0, 2.0),
        lambda: Tr.AffineTransform(T.ones(2), 2.0) == Tr.AffineTransform(1.0, 2.0),
        lambda: Tr.AffineTransform(0.0, T.tensor([2.0, -1.0])).sign,
        lambda: Tr.AffineTransform(0.0, 2.0, event_dim=1).log_abs_det_jacobian(
            T.ones(2, 3), T.ones(2, 3)),
        lambda: Tr.AffineTransform(0.0, 2.0, event_dim=1).domain,
        lambda: Tr.SigmoidTransform().inv(T.tensor([0.0, 0.5, 1.0])),
        lambda: Tr.SigmoidTransform()(T.tensor([-200.0, 0.0, 200.0])),
        lambda: Tr.TanhTransform().inv(T.tensor([-0.5, 0.5])),
        lambda: Tr.TanhTransform().log_abs_det_jacobian(T.tensor([-30.0, 1.0]), None),
        lambda: Tr.SoftplusTransform().inv(T.tensor([0.5, 3.0])),
        lambda: Tr.IndependentTransform(Tr.ExpTransform(), 1),
        lambda: Tr.IndependentTransform(Tr.ExpTransform(), 1).codomain,
        lambda: Tr.ExpTransform().event_dim, lambda: Tr.ExpTransform(cache_size=2),
        lambda: Tr.ExpTransform().sign, lambda: Tr.Transform().sign,
        lambda: hash(Tr.ExpTransform()), lambda: hash(Tr.AffineTransform(0.0, 1.0)),
        lambda: Tr.identity_transform, lambda: Tr.identity_transform(T.ones(2)),
        lambda: D.constraints.independent(D.constraints.positive, 1),
        lambda: D.constraints.independent(D.constraints.real, 1).check(T.ones(2, 3)),
        lambda: D.constraints.lower_cholesky, lambda: D.constraints.positive_definite,
        lambda: D.constraints.positive_definite.check(T.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda: D.constraints.one_hot.check(T.tensor([[0.0, 1.0], [1.0, 1.0]])),
        lambda: D.constraints.nonnegative_integer, lambda: D.constraints.greater_than_eq(1.0),
        lambda: D.constraints.dependent.is_discrete, lambda: D.constraints.dependent(),
        lambda: D.constraints.is_dependent(D.Binomial.support),
        lambda: D.Binomial.support.is_discrete,
        lambda: D.MultivariateNormal.arg_constraints,
        lambda: D.kl_divergence(D.Binomial(2, T.tensor(0.3)), D.Binomial(3, T.tensor(0.3))),
        lambda: D.kl_divergence(D.Binomial(T.tensor([3.0, 2.0]), T.tensor(0.3)),
                                D.Binomial(2, T.tensor(0.6))),
        lambda: D.kl_divergence(mvn(covariance_matrix=T.eye(2)),
                                D.MultivariateNormal(T.zeros(3), T.eye(3))),
        lambda: D.kl_divergence(D.Beta(2.0, 3.0), D.Dirichlet(T.ones(2))),
        lambda: D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(0.5)),
        lambda: D.kl_divergence(D.Independent(D.Normal(T.zeros(2, 2), 1.0), 1),
                                D.Independent(D.Normal(T.zeros(2, 2), 1.0), 2)),
        lambda: D.kl_divergence(D.LogNormal(0.0, 1.0), D.LogNormal(1.0, 2.0)),
        lambda: D.kl_divergence(
            D.TransformedDistribution(D.Normal(0.0, 1.0), Tr.ExpTransform()),
            D.TransformedDistribution(D.Normal(0.0, 1.0), Tr.SigmoidTransform())),
        lambda: D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)),
        lambda: D.kl_divergence(D.Bernoulli(0.3), D.Bernoulli(0.6)),
        lambda: D.kl_divergence(D.Uniform(0.2, 0.5), D.Beta(2.0, 3.0)),
        lambda: D.kl_divergence(D.Uniform(-0.2, 0.5), D.Beta(2.0, 3.0)),
        lambda: D.kl_divergence(D.Uniform(-0.2, 0.5), D.Exponential(1.0)),
        lambda: D.kl_divergence(D.Beta(2.0, 3.0), D.Uniform(0.0, 2.0)),
        lambda: D.kl_divergence(D.Beta(2.0, 3.0), D.Uniform(0.5, 2.0)),
        lambda: D.kl_divergence(D.Geometric(T.tensor([0.3, 1.0])),
                                D.Geometric(T.tensor([0.5, 0.5]))),
        lambda: D.Exponential(2.0).entropy(), lambda: D.Normal(0.0, 2.0).perplexity(),
        lambda: isinstance(D.Beta(1.0, 1.0), D.ExponentialFamily),
        lambda: isinstance(D.Normal(1.0, 1.0), D.ExponentialFamily),
        lambda: D.ExponentialFamily.entropy(D.Gamma(T.tensor(2.0), T.tensor(3.0))),
        lambda: D.ExponentialFamily.entropy(D.Normal(T.tensor(2.0), T.tensor(3.0))),
        lambda: D.ExponentialFamily.entropy(D.Bernoulli(T.tensor([0.2, 0.6]))),
        lambda: D.ExponentialFamily.entropy(D.Dirichlet(T.tensor([2.0, 3.0]))),
        lambda: D.Exponential(T.tensor(2.0, dtype=T.float64)).rsample((2,)).dtype,
        lambda: D.Gamma(T.tensor([2.0]), 1.0).rsample((3, 2)).shape,
        lambda: D.Poisson(T.tensor([2.0])).rsample(), lambda: D.Poisson(2.0).has_rsample,
        lambda: D.Binomial(3, T.tensor(0.5)).has_enumerate_support,
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


def _check_mean(x: np.ndarray, mean: float, var: float) -> None:
    assert abs(x.mean() - mean) <= 6 * math.sqrt(var / x.size) + 1e-12


def test_samples_shapes_dtypes_support_and_means() -> None:
    D = ft.distributions
    ft.manual_seed(0)
    n = 4000
    cases: list[tuple[Any, float, float]] = [
        (D.Exponential(ft.tensor(2.0)), 0.5, 0.25),
        (D.Laplace(ft.tensor(1.0), 2.0), 1.0, 8.0),
        (D.Gamma(ft.tensor(3.0), 2.0), 1.5, 0.75),
        (D.Gamma(ft.tensor(0.05), 1.0), 0.05, 0.05),
        (D.Beta(ft.tensor(2.0), 3.0), 0.4, 0.04),
        (D.Beta(ft.tensor(0.1), 0.2), 1 / 3, 2 / 9 / 1.3),
        (D.Poisson(ft.tensor(3.5)), 3.5, 3.5),
        (D.Binomial(10, ft.tensor(0.3)), 3.0, 2.1),
        (D.Geometric(ft.tensor(0.25)), 3.0, 12.0),
        (D.LogNormal(ft.tensor(0.0), 0.5), math.exp(0.125), math.expm1(0.25) * math.exp(0.25)),
    ]
    for d, mean, var in cases:
        s = d.sample((n,))
        assert s.shape == ft.Size([n]) and s.dtype == ft.float32 and not s.requires_grad
        assert bool(d.support.check(s).all()), d
        _check_mean(s.numpy().astype(np.float64), mean, var)
    x64 = D.Gamma(ft.tensor([1.0, 4.0], dtype=ft.float64), 1.0).rsample((n,))
    assert x64.dtype == ft.float64 and x64.shape == ft.Size([n, 2])
    _check_mean(x64.numpy()[:, 1], 4.0, 4.0)
    conc = ft.tensor([[0.5, 1.0, 2.5], [0.05, 0.05, 0.05]])
    dirichlet = D.Dirichlet(conc).sample((n,))
    assert dirichlet.shape == ft.Size([n, 2, 3])
    assert bool(D.constraints.simplex.check(dirichlet).all())
    _check_mean(dirichlet.numpy()[:, 0, 2], 0.625, 0.625 * 0.375 / 5)
    onehot = D.OneHotCategorical(ft.tensor([0.2, 0.3, 0.5])).sample((n,))
    assert onehot.dtype == ft.float32 and bool(D.constraints.one_hot.check(onehot).all())
    _check_mean(onehot.numpy()[:, 2], 0.5, 0.25)
    cov = ft.tensor([[2.0, 0.6], [0.6, 1.0]])
    mvn = D.MultivariateNormal(ft.tensor([1.0, -1.0]), cov).rsample((n,))
    assert mvn.shape == ft.Size([n, 2])
    _check_mean(mvn.numpy()[:, 0], 1.0, 2.0)
    _check_mean((mvn.numpy()[:, 0] - 1) * (mvn.numpy()[:, 1] + 1), 0.6, 2.0 + 0.36)
    ind = D.Independent(D.Laplace(ft.zeros(2, 3), 1.0), 1).sample((5,))
    assert ind.shape == ft.Size([5, 2, 3])
    td = D.TransformedDistribution(D.Normal(ft.zeros(2), 1.0),
                                   [D.transforms.TanhTransform()]).sample((n,))
    assert bool(((td > -1) & (td < 1)).all())
    _check_mean(td.numpy()[:, 0], 0.0, 1.0)


def test_seeded_samples_repeat() -> None:
    D = ft.distributions
    draws = []
    for _ in range(2):
        ft.manual_seed(123)
        draws.append([D.Gamma(ft.tensor([2.0]), 1.0).sample((3,)),
                      D.Dirichlet(ft.ones(3)).sample(), D.Laplace(0.0, 1.0).sample((2,)),
                      D.Exponential(1.0).sample((2,)), D.Geometric(0.5).sample((2,))])
    for a, b in zip(*draws):
        assert ft.equal(a, b)


def test_reparameterized_gradients_are_unbiased() -> None:
    D = ft.distributions
    ft.manual_seed(1)
    n = 20000
    # d/da E[x] for Gamma(a, b) is 1/b; for Beta(a, b) d/da E[x] = b / (a + b)^2.
    a = ft.tensor([0.3, 2.0, 7.0], requires_grad=True)
    rate = ft.tensor([1.0, 2.0, 0.5], requires_grad=True)
    x = D.Gamma(a, rate).rsample((n,))
    ga, gr = ft.autograd.grad(x.mean(0).sum(), (a, rate))
    np.testing.assert_allclose(ga.numpy(), 1 / rate.detach().numpy(), rtol=0.08)
    np.testing.assert_allclose(gr.numpy(), -(a / rate ** 2).detach().numpy(), rtol=0.08)
    c1 = ft.tensor(2.0, requires_grad=True)
    c0 = ft.tensor(3.0, requires_grad=True)
    g1, g0 = ft.autograd.grad(D.Beta(c1, c0).rsample((n,)).mean(), (c1, c0))
    assert g1.item() == pytest.approx(3 / 25, rel=0.1)
    assert g0.item() == pytest.approx(-2 / 25, rel=0.1)
    conc = ft.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (gc,) = ft.autograd.grad(D.Dirichlet(conc).rsample((n,))[:, 0].mean(), conc)
    np.testing.assert_allclose(gc.numpy(), [5 / 36, -1 / 36, -1 / 36], rtol=0.1, atol=2e-3)
    loc = ft.tensor([0.5, -1.0], requires_grad=True)
    tril = ft.tensor([[1.0, 0.0], [0.5, 2.0]], requires_grad=True)
    y = D.MultivariateNormal(loc, scale_tril=tril).rsample((100,))
    gl, gt = ft.autograd.grad(y.sum(), (loc, tril))
    np.testing.assert_allclose(gl.numpy(), [100.0, 100.0])
    eps = ((y - loc).detach() @ ft.linalg.inv(tril.detach()).T).sum(0)
    np.testing.assert_allclose(gt.numpy(), np.outer([1, 1], eps.numpy()), rtol=1e-4,
                               atol=1e-3)
    for d in (D.Exponential(ft.tensor(2.0, requires_grad=True)),
              D.Laplace(ft.tensor(0.0), ft.tensor(1.0, requires_grad=True)),
              D.LogNormal(ft.tensor(0.0), ft.tensor(1.0, requires_grad=True))):
        assert d.rsample((3,)).requires_grad and not d.sample((3,)).requires_grad
