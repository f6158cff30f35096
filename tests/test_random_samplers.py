"""The samplers of funcgrad.random beyond uniform/normal, against JAX 0.10.2's jax.random
with the same keys, and JAX-free: distributions (scipy.stats), jit == eager, vmap over keys
== a loop, and derivatives of the reparameterised samplers.

Exact where the computation is threefry bits plus correctly rounded operations (triangular,
geometric, poisson, binomial, multinomial: counts decided by comparisons far from ties);
to a few ulps where a transcendental function of NumPy's libm stands for XLA's own
(log, pow, erf_inv's log1p), which the rejection samplers then carry through.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import random
from funcgrad.errors import NonDifferentiableError
from funcgrad.testing import check_grads, jax_x64_mode

SEEDS = st.integers(0, 2 ** 31)
SHAPES = st.sampled_from([(), (3,), (2, 2)])  # few shapes: JAX compiles each sampler per shape
FEW = settings(max_examples=2, deadline=None, derandomize=True, database=None,
               phases=(Phase.explicit, Phase.generate))
X64 = pytest.mark.parametrize("x64", [pytest.param(False, marks=pytest.mark.x32), True],
                              ids=["x32", "x64"])
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _jax() -> Any:
    return pytest.importorskip("jax")


def _same(a: Any, b: Any) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


def _close(a: Any, b: Any, f32: float = 2e-5, f64: float = 1e-11) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    tol = f32 if a.dtype == np.float32 else f64
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ------------------------------------------------------------------ vs JAX


@X64
@FEW
@given(seed=SEEDS, shape=SHAPES, p=st.floats(0.5, 3.0))
def test_transforms_match_jax(x64: bool, seed: int, shape: tuple[int, ...], p: float) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        k, jk = random.PRNGKey(seed), jax.random.PRNGKey(seed)
        for name, args in (("lognormal", (p, shape)), ("maxwell", (shape,)),
                           ("double_sided_maxwell", (0.5, p, shape)), ("pareto", (p, shape)),
                           ("rayleigh", (p, shape)), ("weibull_min", (p, 1.5, shape)),
                           ("wald", (p, shape))):
            _close(getattr(random, name)(k, *args), getattr(jax.random, name)(jk, *args))
        _same(random.triangular(k, -1.0, p - 1, 2.0, shape),
              jax.random.triangular(jk, -1.0, p - 1, 2.0, shape))
        _same(random.geometric(k, p / 4, shape), jax.random.geometric(jk, p / 4, shape))
        assert str(random.key_dtype()) == str(jax.random.key_dtype()) == "key<fry>"


@X64
@FEW
@given(seed=SEEDS, shape=SHAPES, a=st.floats(0.05, 6.0), b=st.floats(0.5, 9.0))
def test_gamma_family_matches_jax(x64: bool, seed: int, shape: tuple[int, ...], a: float,
                                  b: float) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        k, jk = random.PRNGKey(seed), jax.random.PRNGKey(seed)
        for name, args in (("gamma", (a, shape)), ("loggamma", (a, shape)),
                           ("beta", (a, b, shape)), ("chisquare", (b, shape)),
                           ("f", (b, a + 1, shape)), ("t", (b, shape)),
                           ("generalized_normal", (b, shape)), ("ball", (3, b, shape))):
            _close(getattr(random, name)(k, *args), getattr(jax.random, name)(jk, *args),
                   f32=1e-4, f64=1e-10)
        alpha = np.linspace(a, a + b, 3)
        _close(random.dirichlet(k, alpha, shape), jax.random.dirichlet(jk, alpha, shape),
               f32=1e-4, f64=1e-10)


@X64
@FEW
@given(seed=SEEDS, shape=SHAPES, lam=st.floats(0.0, 40.0), n=st.integers(0, 80),
       p=st.floats(0.0, 1.0))
def test_counts_match_jax(x64: bool, seed: int, shape: tuple[int, ...], lam: float, n: int,
                          p: float) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        k, jk = random.PRNGKey(seed), jax.random.PRNGKey(seed)
        lams = np.linspace(0.0, lam, 6)  # both Knuth (< 10) and rejection (>= 10)
        _same(random.poisson(k, lams), jax.random.poisson(jk, lams))
        _same(random.poisson(k, lam, shape), jax.random.poisson(jk, lam, shape))
        _same(random.binomial(k, float(n), p, shape), jax.random.binomial(jk, float(n), p,
                                                                          shape))
        counts = np.array([0.0, 3.0, 15.0, 70.0])  # inversion and BTRS
        _same(random.binomial(k, counts, p), jax.random.binomial(jk, counts, p))
        probs = np.array([0.1, 0.0, 0.3, 0.6])
        _same(random.multinomial(k, float(n), probs, shape=(*shape, 4)),
              jax.random.multinomial(jk, float(n), probs, shape=(*shape, 4)))


@X64
@FEW
@given(seed=SEEDS, shape=SHAPES, n=st.integers(1, 4))
def test_matrix_samplers_match_jax(x64: bool, seed: int, shape: tuple[int, ...], n: int
                                   ) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        k, jk = random.PRNGKey(seed), jax.random.PRNGKey(seed)
        a = np.random.default_rng(seed).standard_normal((n, n))
        cov, mean = a @ a.T + n * np.eye(n), np.arange(n) * 0.5
        for method in ("cholesky", "svd", "eigh"):
            _close(random.multivariate_normal(k, mean, cov, shape, method=method),
                   jax.random.multivariate_normal(jk, mean, cov, shape, method=method),
                   f32=2e-4, f64=1e-9)
        for m in (None, n + 1):
            _close(random.orthogonal(k, n, shape, m=m), jax.random.orthogonal(jk, n, shape,
                                                                              m=m),
                   f32=2e-4, f64=1e-9)


# ---------------------------------------------------------- transformations


SAMPLERS = {
    "gamma": lambda k: random.gamma(k, np.array([0.3, 2.0, 7.0])),
    "loggamma": lambda k: random.loggamma(k, 0.1, (3,)),
    "beta": lambda k: random.beta(k, 2.0, 0.5, (2,)),
    "dirichlet": lambda k: random.dirichlet(k, np.ones(3)),
    "t": lambda k: random.t(k, 3.0, (2,)),
    "poisson": lambda k: random.poisson(k, np.array([1.0, 25.0])),
    "binomial": lambda k: random.binomial(k, np.array([5.0, 200.0]), 0.3),
    "multinomial": lambda k: random.multinomial(k, 9.0, np.array([0.2, 0.8])),
    "geometric": lambda k: random.geometric(k, 0.2, (2,)),
    "wald": lambda k: random.wald(k, 1.5, (2,)),
    "mvn": lambda k: random.multivariate_normal(k, np.zeros(2), np.eye(2) * 2.0),
    "orthogonal": lambda k: random.orthogonal(k, 2),
    "ball": lambda k: random.ball(k, 2, shape=(2,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_jit_equals_eager_and_vmap_equals_loop(name: str) -> None:
    sampler = SAMPLERS[name]
    keys = random.split(random.PRNGKey(11), 3)
    eager = [np.asarray(sampler(keys[i])) for i in range(3)]
    _same(fg.jit(sampler)(keys[0]), eager[0])
    _close(fg.vmap(sampler)(keys), np.stack(eager), f32=1e-6)
    _close(fg.jit(fg.vmap(sampler))(keys), np.stack(eager), f32=1e-6)


# -------------------------------------------------------------- derivatives


@X64
@FEW
@given(seed=SEEDS, a=st.floats(0.2, 5.0), b=st.floats(0.5, 5.0))
def test_reparameterised_gradients_match_jax(x64: bool, seed: int, a: float, b: float
                                             ) -> None:
    jax = _jax()
    with jax_x64_mode(jax, x64):
        k, jk = random.PRNGKey(seed), jax.random.PRNGKey(seed)
        for name, args in (("gamma", (3,)), ("loggamma", (3,)), ("chisquare", (3,)),
                           ("t", (3,)), ("pareto", (3,)), ("rayleigh", (3,)),
                           ("lognormal", (3,)), ("wald", (3,))):
            def ours(x: Any, name: str = name, args: Any = args) -> Any:
                return fnp.sum(getattr(random, name)(k, x, *args))

            def theirs(x: Any, name: str = name, args: Any = args) -> Any:
                return jax.numpy.sum(getattr(jax.random, name)(jk, x, *args))

            _close(fg.grad(ours)(a), jax.grad(theirs)(a), f32=2e-4, f64=1e-9)
        got = fg.grad(lambda x, y: fnp.sum(random.beta(k, x, y, (2,))), (0, 1))(a, b)
        want = jax.grad(lambda x, y: jax.numpy.sum(jax.random.beta(jk, x, y, (2,))),
                        (0, 1))(a, b)
        for g, w in zip(got, want):
            _close(g, w, f32=2e-4, f64=1e-9)
        alpha = np.array([a, b, 1.0])
        _close(fg.grad(lambda x: random.dirichlet(k, x)[0])(alpha),
               jax.grad(lambda x: jax.random.dirichlet(jk, x)[0])(alpha), f32=2e-4, f64=1e-9)


@settings(max_examples=10, deadline=None, derandomize=True, database=None)
@given(a=st.floats(0.1, 8.0), q=st.floats(0.02, 0.98))
def test_gamma_derivative_is_the_quantile_derivative(a: float, q: float) -> None:
    """d/da of the Gamma(a) quantile at fixed probability, by central differences of
    scipy's inverse incomplete gamma: the implicit reparameterisation derivative."""
    sp = pytest.importorskip("scipy.special")
    x = sp.gammaincinv(a, q)
    h = 1e-6 * max(a, 1.0)
    want = (sp.gammaincinv(a + h, q) - sp.gammaincinv(a - h, q)) / (2 * h)
    got = fg.lax.random_gamma_grad(np.float64(a), np.float64(x))
    np.testing.assert_allclose(got, want, rtol=1e-5)


@settings(max_examples=8, deadline=None, derandomize=True, database=None)
@given(seed=SEEDS, s=st.floats(0.5, 2.0))
def test_transform_gradients_numerically(seed: int, s: float) -> None:
    with jax_x64_mode(fg, True):
        k = random.PRNGKey(seed)
        for fn in (lambda x: random.lognormal(k, x, (3,)),
                   lambda x: random.pareto(k, x, (3,)),
                   lambda x: random.rayleigh(k, x, (3,)),
                   lambda x: random.weibull_min(k, x, 1.0 + x, (3,)),
                   lambda x: random.wald(k, x, (3,)),
                   lambda x: random.double_sided_maxwell(k, x, 2 * x, (3,)),
                   lambda x: random.multivariate_normal(k, fnp.ones(2) * x,
                                                        fnp.eye(2) * (1 + x))):
            check_grads(fn, (np.float64(s),), order=2, modes=("fwd", "rev"))


def test_second_derivative_of_gamma_is_refused() -> None:
    k = random.PRNGKey(0)
    g = fg.grad(lambda a: random.gamma(k, a))
    assert np.isfinite(float(g(2.0)))
    with pytest.raises(NonDifferentiableError, match="random_gamma_grad"):
        fg.grad(g)(2.0)


# ------------------------------------------------------------- distributions


def _ks(sample: Any, cdf: Any, *args: Any) -> None:
    stats = pytest.importorskip("scipy.stats")
    assert stats.kstest(np.asarray(sample, np.float64), cdf, args=args).pvalue > 1e-3


def test_distributions() -> None:
    stats = pytest.importorskip("scipy.stats")
    k, n = random.PRNGKey(2024), (3000,)
    _ks(random.gamma(k, 0.7, n), stats.gamma(0.7).cdf)
    _ks(np.exp(random.loggamma(k, 0.05, n)), stats.gamma(0.05).cdf)
    _ks(random.beta(k, 2.0, 0.5, n), stats.beta(2.0, 0.5).cdf)
    _ks(random.chisquare(k, 3.0, n), stats.chi2(3.0).cdf)
    _ks(random.f(k, 4.0, 7.0, n), stats.f(4.0, 7.0).cdf)
    _ks(random.t(k, 3.0, n), stats.t(3.0).cdf)
    _ks(random.lognormal(k, 0.5, n), stats.lognorm(0.5).cdf)
    _ks(random.pareto(k, 3.0, n), stats.pareto(3.0).cdf)
    _ks(random.rayleigh(k, 2.0, n), stats.rayleigh(scale=2.0).cdf)
    _ks(random.weibull_min(k, 2.0, 1.5, n), stats.weibull_min(1.5, scale=2.0).cdf)
    _ks(random.wald(k, 1.5, n), stats.invgauss(1.5).cdf)
    _ks(random.triangular(k, 0.0, 0.3, 1.0, n), stats.triang(0.3).cdf)
    _ks(random.maxwell(k, n), stats.maxwell.cdf)
    _ks(random.generalized_normal(k, 1.5, n), stats.gennorm(1.5).cdf)
    d = np.asarray(random.dirichlet(k, np.array([1.0, 2.0, 3.0]), n))
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    _ks(d[:, 0], stats.beta(1.0, 5.0).cdf)
    pois = np.asarray(random.poisson(k, np.array([3.0] * 3000 + [30.0] * 3000)))
    for part, lam in ((pois[:3000], 3.0), (pois[3000:], 30.0)):
        assert abs(part.mean() - lam) < 4 * np.sqrt(lam / 3000)
        assert abs(part.var() / lam - 1) < 0.1
    for cnt, p in ((8.0, 0.3), (400.0, 0.7)):
        b = np.asarray(random.binomial(k, cnt, p, n))
        assert ((b >= 0) & (b <= cnt)).all() and (b == np.round(b)).all()
        assert abs(b.mean() - cnt * p) < 4 * np.sqrt(cnt * p * (1 - p) / 3000)
    geo = np.asarray(random.geometric(k, 0.25, n))
    assert geo.min() >= 1 and abs(geo.mean() - 4.0) < 0.25
    m = np.asarray(random.multinomial(k, 12.0, np.array([0.5, 0.25, 0.25]), shape=(3000, 3)))
    assert (m.sum(-1) == 12).all() and np.allclose(m.mean(0), [6, 3, 3], atol=0.15)
    x = np.asarray(random.multivariate_normal(k, np.array([1.0, -1.0]),
                                              np.array([[2.0, 0.6], [0.6, 1.0]]), n))
    np.testing.assert_allclose(np.cov(x.T), [[2.0, 0.6], [0.6, 1.0]], atol=0.12)
    q = np.asarray(random.orthogonal(k, 4, (50,)))
    np.testing.assert_allclose(q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4),
                                                                          (50, 4, 4)),
                               atol=1e-5)
    r = np.asarray(random.ball(k, 3, 1.0, (3000,)))
    assert (np.abs(r).sum(-1) <= 1).all()


# ------------------------------------------------------------------- errors


def test_errors() -> None:
    k = random.PRNGKey(0)
    with pytest.raises(ValueError, match="alpha.ndim >= 1"):
        random.dirichlet(k, 1.0)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.gamma(k, np.ones((3, 2)), (2,))
    # Shapes that do not broadcast at all: lax.broadcast_shapes's error, as in JAX.
    with pytest.raises(ValueError,
                       match=r"Incompatible shapes for broadcasting: shapes=\[\(2,\), \(3,\)\]"):
        random.gamma(k, np.ones(3), (2,))
    with pytest.raises(ValueError, match="float dtype"):
        random.beta(k, 1.0, 1.0, (2,), dtype="int32")
    with pytest.raises(ValueError, match="int dtype"):
        random.poisson(k, 1.0, (2,), dtype="float32")
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match=r"cov.shape == \(..., n, n\)"):
        random.multivariate_normal(k, np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="single key"):
        random.gamma(random.split(k), 1.0)
    with pytest.raises(ValueError, match="threefry2x32"):
        random.key_dtype("rbg")
