"""funcgrad.scipy.stats, the families beyond tests/test_scipy_stats.py (binom, geom,
nbinom, betabinom, multinomial, dirichlet, multivariate_normal, truncnorm, vonmises,
pareto, gennorm, wrapcauchy, gumbel_l, gumbel_r) and mode, rankdata, sem: each against
jax.scipy.stats on drawn shapes and values in float64 (edge and out-of-support values
included), against scipy.stats inside the support, JAX's 32-bit dtypes and weak types,
JAX's errors, and derivatives checked by finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as sst
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.scipy import stats as fst
from funcgrad.testing import check_grads

# funcgrad computes log(0), 0/0 and overflow silently as JAX does, through a warnings filter
# it installs on import; pytest resets the filters for each test, so NumPy's
# RuntimeWarnings from those would only clutter the report here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SETTINGS = settings(max_examples=8, deadline=None)
# The multivariate families' shapes vary more, and each new one costs JAX a compilation.
FEW = settings(max_examples=5, deadline=None)


def _floats(lo: float, hi: float, *edges: float) -> st.SearchStrategy[float]:
    body = st.floats(lo, hi, allow_subnormal=False)
    return st.one_of(body, st.sampled_from(edges)) if edges else body


def _ints(lo: int, hi: int, *extra: float) -> st.SearchStrategy[float]:
    body = st.integers(lo, hi).map(float)
    return st.one_of(body, st.sampled_from(extra)) if extra else body


# Each argument's values: inside the support mostly, with the boundary and a few values
# outside it, where JAX answers -inf, 0 or NaN.
KINDS: dict[str, st.SearchStrategy[float]] = {
    "x": _floats(-4.0, 4.0, 0.0),
    "count": _ints(-2, 9, 1.5),
    "n": _ints(0, 8),
    "iloc": _ints(-2, 2),
    "prob": _floats(0.0, 1.0, 0.0, 1.0),
    "shape": _floats(0.2, 5.0, 0.0, -1.0),
    "pos": _floats(0.2, 5.0),
    "loc": _floats(-2.0, 2.0),
    "scale": _floats(0.2, 3.0),
    "gscale": _floats(0.2, 3.0, -1.0),
    "q": _floats(0.0, 1.0, -0.1, 0.0, 1.0, 1.1),
    "angle": _floats(-1.0, 7.5, 0.0, 2 * np.pi),
    "c": _floats(0.0, 1.0, -0.2, 0.0, 1.0, 1.2),
    "kappa": _floats(0.1, 60.0, 0.0, -1.0),
    "ta": _floats(-4.0, 2.0, -np.inf),
    "tb": _floats(-2.0, 4.0, np.inf),
    "beta": _floats(0.3, 5.0),
}

# (distribution, functions, argument kinds)
FAMILIES: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("binom", ("logpmf", "pmf"), ("count", "n", "prob", "iloc")),
    ("geom", ("logpmf", "pmf"), ("count", "prob", "iloc")),
    ("nbinom", ("logpmf", "pmf"), ("count", "pos", "prob", "iloc")),
    ("betabinom", ("logpmf", "pmf"), ("count", "n", "shape", "shape", "iloc")),
    ("pareto", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), ("x", "pos", "loc", "scale")),
    ("pareto", ("ppf",), ("q", "pos", "loc", "scale")),
    ("gennorm", ("logpdf", "pdf", "cdf"), ("x", "beta")),
    ("vonmises", ("logpdf", "pdf"), ("angle", "kappa")),
    ("wrapcauchy", ("logpdf", "pdf"), ("angle", "c")),
    ("truncnorm", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"),
     ("x", "ta", "tb", "loc", "scale")),
    *((g, ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), ("x", "loc", "gscale"))
      for g in ("gumbel_l", "gumbel_r")),
    *((g, ("ppf",), ("q", "loc", "gscale")) for g in ("gumbel_l", "gumbel_r")),
]
CASES = [(d, f, kinds) for d, fns, kinds in FAMILIES for f in fns]

# Operand shapes that all broadcast to FULL. JAX is handed the operands already broadcast
# to FULL, with its jit off: its compilations are per shape and per function, and would
# dominate the run otherwise; on elementwise functions the values are the same.
SHAPES = [(), (3,), (2, 1), (2, 3)]
FULL = (2, 3)


def _jax() -> Any:
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax.scipy.stats")  # loads the reference functions as jax.scipy.stats
    return jax


def _weak(x: Any) -> bool:
    return bool(x.aval.weak_type)


@st.composite
def _operands(draw: Any, kinds: tuple[str, ...]) -> list[Any]:
    out: list[Any] = []
    for kind in kinds:
        shape = draw(st.sampled_from(SHAPES))
        vals = draw(st.lists(KINDS[kind], min_size=int(np.prod(shape)),
                             max_size=int(np.prod(shape))))
        out.append(np.asarray(vals, np.float64).reshape(shape))
    return out


@pytest.mark.parametrize("dist,fn,kinds", CASES, ids=[f"{d}.{f}" for d, f, _ in CASES])
@SETTINGS
@given(data=st.data())
def test_matches_jax_float64(dist: str, fn: str, kinds: tuple[str, ...], data: Any) -> None:
    jax = _jax()
    ops = data.draw(_operands(kinds))
    got = getattr(getattr(fst, dist), fn)(*ops)
    assert got.dtype == np.float64
    assert got.shape == np.broadcast_shapes(*(o.shape for o in ops))
    with jax.enable_x64(True), jax.disable_jit():
        want = getattr(getattr(jax.scipy.stats, dist), fn)(
            *(np.broadcast_to(o, FULL) for o in ops))
        assert want.dtype == np.float64
        want = np.asarray(want)
    # JAX's betaln loses about six digits in float64 (funcgrad's keeps SciPy's accuracy);
    # test_matches_scipy holds betabinom to SciPy tightly.
    rtol, atol = (1e-5, 1e-8) if dist == "betabinom" else (1e-9, 1e-11)
    np.testing.assert_allclose(np.broadcast_to(np.asarray(got), FULL), want, rtol=rtol,
                               atol=atol)


X = np.array([-2.5, -0.3, 0.0, 0.4, 1.2, 3.0])
P = np.array([0.01, 0.2, 0.5, 0.7, 0.9, 0.999])
K = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 7.0])
ANGLE = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 6.2])

# Inside the support, where SciPy's parametrization is the same as JAX's.
SCIPY: list[tuple[str, str, tuple[Any, ...]]] = [
    *(("binom", f, (K, 7.0, 0.35)) for f in ("logpmf", "pmf")),
    *(("binom", f, (K, 9.0, 0.6, 1.0)) for f in ("logpmf", "pmf")),
    *(("geom", f, (K + 1, 0.35)) for f in ("logpmf", "pmf")),
    *(("nbinom", f, (K, 3.5, 0.4)) for f in ("logpmf", "pmf")),
    *(("betabinom", f, (K, 7.0, 2.5, 1.5)) for f in ("logpmf", "pmf")),
    *(("pareto", f, (X + 4.0, 2.5, 0.3, 1.2)) for f in ("logpdf", "pdf", "cdf", "logcdf",
                                                          "sf", "logsf")),
    ("pareto", "ppf", (P, 2.5, 0.3, 1.2)),
    *(("gennorm", f, (X, 1.7)) for f in ("logpdf", "pdf", "cdf")),
    *(("vonmises", f, (ANGLE, 2.5)) for f in ("logpdf", "pdf")),
    *(("wrapcauchy", f, (ANGLE, 0.4)) for f in ("logpdf", "pdf")),
    *(("truncnorm", f, (X, -1.5, 2.5, 0.3, 1.2)) for f in ("logpdf", "pdf", "cdf", "logcdf",
                                                             "sf", "logsf")),
    *((g, f, (X, 0.3, 1.7)) for g in ("gumbel_l", "gumbel_r")
      for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")),
    *((g, "ppf", (P, 0.3, 1.7)) for g in ("gumbel_l", "gumbel_r")),
]


@pytest.mark.parametrize("dist,fn,args", SCIPY, ids=[f"{d}.{f}" for d, f, _ in SCIPY])
def test_matches_scipy(dist: str, fn: str, args: tuple[Any, ...]) -> None:
    got = np.asarray(getattr(getattr(fst, dist), fn)(*args))
    want = getattr(getattr(sst, dist), fn)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


# ------------------------------------------------------------ multivariate families


@st.composite
def _simplex_points(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    k = draw(st.integers(2, 3))
    batch = draw(st.sampled_from([(), (3,)]))
    raw = np.asarray(draw(st.lists(_floats(0.05, 3.0), min_size=k * int(np.prod(batch)),
                                   max_size=k * int(np.prod(batch)))))
    x = raw.reshape((k, *batch))
    x = x / x.sum(0)
    how = draw(st.sampled_from(["full", "implied", "off"]))
    if how == "implied":
        x = x[:-1]
    elif how == "off":
        x = x.copy()
        x[0] += 0.1
    alpha = np.asarray(draw(st.lists(_floats(0.3, 4.0, 1.0), min_size=k, max_size=k)))
    return x, alpha


@FEW
@given(case=_simplex_points())
def test_dirichlet_matches_jax(case: tuple[np.ndarray, np.ndarray]) -> None:
    jax = _jax()
    x, alpha = case
    with jax.enable_x64(True), jax.disable_jit():
        for fn in ("logpdf", "pdf"):
            want = np.asarray(getattr(jax.scipy.stats.dirichlet, fn)(x, alpha))
            got = np.asarray(getattr(fst.dirichlet, fn)(x, alpha))
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)


@st.composite
def _counts(draw: Any) -> tuple[np.ndarray, int, np.ndarray]:
    k = draw(st.integers(2, 3))
    batch = draw(st.sampled_from([(), (2,)]))
    size = k * int(np.prod(batch))
    x = np.asarray(draw(st.lists(st.integers(0, 4), min_size=size, max_size=size)))
    x = x.reshape((*batch, k))
    n = int(x.sum()) + draw(st.sampled_from([0, 0, 1]))
    raw = np.asarray(draw(st.lists(_floats(0.05, 2.0, 0.0), min_size=k, max_size=k))) + 1e-3
    return x, n, raw / raw.sum()


@FEW
@given(case=_counts())
def test_multinomial_matches_jax(case: tuple[np.ndarray, int, np.ndarray]) -> None:
    jax = _jax()
    x, n, p = case
    with jax.enable_x64(True), jax.disable_jit():
        for fn in ("logpmf", "pmf"):
            want = np.asarray(getattr(jax.scipy.stats.multinomial, fn)(x, n, p))
            got = np.asarray(getattr(fst.multinomial, fn)(x, n, p))
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    if x.ndim == 1 and n == x.sum():
        np.testing.assert_allclose(np.asarray(fst.multinomial.logpmf(x, n, p)),
                                   sst.multinomial.logpmf(x, n, p), rtol=1e-9)


@st.composite
def _gaussians(draw: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    d = draw(st.integers(1, 2))
    batch = draw(st.sampled_from([(), (2,)]))
    vals = st.lists(_floats(-2.0, 2.0), min_size=d, max_size=d)
    x = np.asarray([draw(vals) for _ in range(int(np.prod(batch)))]).reshape((*batch, d))
    mean = np.asarray(draw(vals))
    kind = draw(st.sampled_from(["matrix", "scalar", "univariate"]))
    if kind == "univariate":
        return x[..., 0], mean[0], draw(_floats(0.3, 3.0))
    if kind == "scalar":
        return x, mean, draw(_floats(0.3, 3.0))
    a = np.asarray(draw(st.lists(_floats(-1.0, 1.0), min_size=d * d, max_size=d * d)))
    a = a.reshape(d, d)
    return x, mean, a @ a.T + 0.5 * np.eye(d)


@FEW
@given(case=_gaussians())
def test_multivariate_normal_matches_jax(case: tuple[np.ndarray, np.ndarray, Any]) -> None:
    jax = _jax()
    x, mean, cov = case
    with jax.enable_x64(True), jax.disable_jit():
        for fn in ("logpdf", "pdf"):
            want = np.asarray(getattr(jax.scipy.stats.multivariate_normal, fn)(x, mean, cov))
            got = np.asarray(getattr(fst.multivariate_normal, fn)(x, mean, cov))
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(np.asarray(fst.multivariate_normal.logpdf(x, mean, cov)),
                               sst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-9)


# ------------------------------------------------------------ mode, rankdata, sem


@st.composite
def _samples(draw: Any) -> tuple[np.ndarray, int | None]:
    shape = draw(st.sampled_from([(5,), (3, 4)]))
    size = int(np.prod(shape))
    # Few distinct values, so ties are common.
    vals = draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, 3.0, -1.0]), min_size=size,
                         max_size=size))
    a = np.asarray(vals).reshape(shape)
    if draw(st.booleans()):
        a = a.astype(np.int64)
    return a, draw(st.sampled_from([None, 0, -1]))


@FEW
@given(case=_samples(), method=st.sampled_from(["average", "min", "max", "dense", "ordinal"]))
def test_summary_statistics_match_jax(case: tuple[np.ndarray, int | None], method: str) -> None:
    jax = _jax()
    a, axis = case
    jst = jax.scipy.stats
    with jax.enable_x64(True):
        pairs = [
            (fst.rankdata(a, method, axis=axis), jst.rankdata(a, method, axis=axis)),
            (fst.sem(a, axis=axis), jst.sem(a, axis=axis)),
            (fst.sem(a, axis=axis, ddof=0, keepdims=True),
             jst.sem(a, axis=axis, ddof=0, keepdims=True)),
            *zip(fst.mode(a, axis=axis), jst.mode(a, axis=axis)),
            *zip(fst.mode(a, axis=axis, keepdims=True), jst.mode(a, axis=axis, keepdims=True)),
        ]
        for got, want in pairs:
            assert (got.dtype, got.shape) == (want.dtype, want.shape)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(fst.rankdata(a, method, axis=axis)),
                               sst.rankdata(a, method, axis=axis))
    np.testing.assert_allclose(np.asarray(fst.sem(a, axis=axis)), sst.sem(a, axis=axis),
                               rtol=1e-12)


def test_summary_statistics_edges() -> None:
    assert np.isnan(np.asarray(fst.rankdata(np.array([1.0, np.nan, 0.0])))).all()
    m = fst.mode(np.zeros((0, 3)))
    assert np.isnan(np.asarray(m.mode)).all() and (np.asarray(m.count) == 0).all()
    np.testing.assert_allclose(
        np.asarray(fst.sem(np.array([1.0, np.nan, 3.0, 4.0]), nan_policy="omit")),
        sst.sem(np.array([1.0, np.nan, 3.0, 4.0]), nan_policy="omit"), rtol=1e-12)
    ranks = funcgrad.jit(lambda a: fst.rankdata(a, "average"))(fnp.array([3.0, 1.0, 3.0]))
    assert np.asarray(ranks).tolist() == [2.5, 1.0, 2.5]
    check_grads(lambda a: fst.sem(a, axis=1), [np.array([[0.5, 1.5, -2.0], [3.0, 0.1, 0.7]])],
                order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------ 32-bit dtypes and weak types

X32_ARGS: dict[str, tuple[Any, ...]] = {
    "binom": (2, 5, 0.3), "geom": (2, 0.3), "nbinom": (2, 3, 0.3),
    "betabinom": (2, 5, 2.0, 3.0), "pareto": (2.0, 1.5), "gennorm": (0.5, 1.5),
    "vonmises": (0.5, 1.5), "wrapcauchy": (0.5, 0.5), "truncnorm": (0.5, -1.0, 2.0),
    "gumbel_l": (0.5,), "gumbel_r": (0.5,),
}
X32 = [(d, f) for d, fns, _ in FAMILIES for f in fns]


@pytest.mark.x32
@pytest.mark.parametrize("dist,fn", X32, ids=[f"{d}.{f}" for d, f in X32])
def test_matches_jax_float32(dist: str, fn: str) -> None:
    jax = _jax()
    args = X32_ARGS[dist]
    if fn == "ppf":
        args = (0.3, *args[1:])
    as_f32 = tuple(np.full((2,), a, np.float32) if i == 0 else a for i, a in enumerate(args))
    arg_sets = [args, as_f32]
    if dist != "truncnorm":  # JAX's log_ndtr refuses float16 (funcgrad's computes it)
        arg_sets.append((np.float16(args[0]), *args[1:]))
    for ops in arg_sets:
        got = getattr(getattr(fst, dist), fn)(*ops)
        with jax.disable_jit():
            want = getattr(getattr(jax.scipy.stats, dist), fn)(*ops)
        assert (got.dtype, _weak(got), got.shape) == (want.dtype, _weak(want), want.shape)
        tol = 2e-3 if got.dtype == np.float16 else 2e-5
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                                   rtol=tol, atol=tol)


@pytest.mark.x32
def test_multivariate_float32() -> None:
    jax = _jax()
    jst = jax.scipy.stats
    cases = [
        (jst.dirichlet.logpdf, fst.dirichlet.logpdf,
         (np.array([0.2, 0.3, 0.5], np.float32), np.array([1.0, 2.0, 3.0]))),
        (jst.multinomial.logpmf, fst.multinomial.logpmf,
         (np.array([1, 2, 0]), 3, np.array([0.2, 0.3, 0.5], np.float32))),
        (jst.multinomial.pmf, fst.multinomial.pmf, (np.array([1, 2]), 3, np.array([0.5, 0.5]))),
        (jst.multivariate_normal.logpdf, fst.multivariate_normal.logpdf, (0.5, 0.2, 1.5)),
        (jst.multivariate_normal.logpdf, fst.multivariate_normal.logpdf,
         (np.ones((2, 2), np.float32), np.zeros(2, np.float32), np.eye(2, dtype=np.float32))),
    ]
    for jf, ff, ops in cases:
        got, want = ff(*ops), jf(*ops)
        assert (got.dtype, _weak(got), got.shape) == (want.dtype, _weak(want), want.shape)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5)


# ------------------------------------------------------------ errors

ERRORS: list[tuple[Any, tuple[Any, ...], type[Exception], str]] = [
    (fst.binom.logpmf, ([1.0], 4, 0.3), TypeError,
     "binom.logpmf requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (fst.truncnorm.sf, (0.0, -1.0, [1.0]), TypeError,
     "truncnorm.logsf requires ndarray or scalar arguments, got <class 'list'> at position 2."),
    (fst.gumbel_r.logsf, (0.5, [1.0]), TypeError, "gumbel_r.logsf requires ndarray"),
    (fst.dirichlet.logpdf, ([0.2, 0.8], np.ones(2)), TypeError,
     "Cannot determine dtype of [0.2, 0.8]"),
    (fst.dirichlet.logpdf, (np.ones((2, 2)), np.ones((2, 2))), ValueError,
     "`alpha` must be one-dimensional; got alpha.shape=(2, 2)"),
    (fst.dirichlet.logpdf, (np.ones(4), np.ones(2)), ValueError,
     "`x` must have either the same number of entries as `alpha` or one entry fewer; "
     "got x.shape=(4,), alpha.shape=(2,)"),
    (fst.multinomial.logpmf, (np.array([1.0, 2.0]), 3, np.array([0.5, 0.5])), ValueError,
     "x and n must be of integer type; got x.dtype=float64, n.dtype=float64"),
    (fst.multinomial.logpmf, ([1, 2], 3, np.array([0.5, 0.5])), TypeError,
     "multinomial.logpmf requires ndarray or scalar arguments, got <class 'list'> at "
     "position 0."),
    (fst.multivariate_normal.logpdf, (np.ones(2), np.ones(2), np.ones((3, 3))), ValueError,
     "multivariate_normal.logpdf got incompatible shapes"),
    (fst.multivariate_normal.logpdf, (np.ones(2), np.ones(2), np.eye(2), True),
     NotImplementedError, "allow_singular argument of multivariate_normal.logpdf"),
    (fst.rankdata, (np.ones(3), "foo"), ValueError, "unknown method 'foo'"),
    (fst.rankdata, ([1, 2],), TypeError, "rankdata requires ndarray or scalar arguments"),
    (fst.mode, (np.ones(3), 0, "bad"), ValueError, "Illegal nan_policy value 'bad'"),
    (fst.mode, (np.ones(3), 0, "omit"), NotImplementedError,
     "Logic for `nan_policy` of omit is not implemented"),
    (fst.sem, (np.ones(3), 0, 1, "raise"), ValueError, "raise is not supported"),
]


@pytest.mark.parametrize("fn,args,exc,msg", ERRORS,
                         ids=[f"{f.__module__.rsplit('.', 1)[-1].lstrip('_')}.{f.__name__}-{i}"
                              for i, (f, *_) in enumerate(ERRORS)])
def test_errors_as_jax(fn: Any, args: tuple[Any, ...], exc: type[Exception], msg: str) -> None:
    with pytest.raises(exc) as info:
        fn(*args)
    assert str(info.value).startswith(msg)


# ------------------------------------------------------------ transforms and derivatives


def test_jit_and_vmap_agree_with_eager() -> None:
    x = fnp.array([[0.1, 0.7], [1.5, 2.0]])
    cases: list[tuple[Any, tuple[Any, ...]]] = [
        (fst.truncnorm.logcdf, (x, -0.5, 1.8)), (fst.betabinom.logpmf, (x, 3.0, 2.0, 1.5)),
        (fst.gumbel_r.logsf, (x, 0.2, 1.5)), (fst.gennorm.cdf, (x, 1.5)),
    ]
    for f, args in cases:
        eager = np.asarray(f(*args))
        axes = (0,) + (None,) * (len(args) - 1)
        np.testing.assert_allclose(np.asarray(funcgrad.jit(f)(*args)), eager, rtol=1e-12)
        np.testing.assert_allclose(np.asarray(funcgrad.vmap(f, in_axes=axes)(*args)), eager,
                                   rtol=1e-12)
    mvn = fnp.array([[1.0, 0.2], [-0.5, 0.3], [0.0, 2.0]])
    cov = fnp.array([[2.0, 0.5], [0.5, 1.0]])
    batched = funcgrad.vmap(fst.multivariate_normal.logpdf, in_axes=(0, None, None))
    np.testing.assert_allclose(np.asarray(batched(mvn, fnp.zeros(2), cov)),
                               np.asarray(fst.multivariate_normal.logpdf(mvn, fnp.zeros(2), cov)),
                               rtol=1e-12)


XI = np.array([-1.2, -0.3, 0.4, 1.3])
Q = np.array([0.1, 0.4, 0.6, 0.85])
KI = np.array([0.0, 1.0, 2.0, 4.0])
AI = np.array([0.3, 1.1, 2.4, 5.0])

# (name, function, operands, which operands to differentiate)
GRADS: list[tuple[str, Any, tuple[Any, ...], tuple[int, ...]]] = [
    ("binom.logpmf", fst.binom.logpmf, (KI, 6.0, 0.35), (2,)),
    ("geom.logpmf", fst.geom.logpmf, (KI + 1, 0.35), (1,)),
    ("nbinom.logpmf", fst.nbinom.logpmf, (KI, 2.5, 0.4), (1, 2)),
    ("betabinom.logpmf", fst.betabinom.logpmf, (KI, 6.0, 2.5, 1.5), (2, 3)),
    ("pareto.logpdf", fst.pareto.logpdf, (XI + 3.0, 2.5, 0.3, 1.2), (0, 1, 2, 3)),
    ("pareto.logcdf", fst.pareto.logcdf, (XI + 3.0, 2.5, 0.3, 1.2), (0, 1, 2, 3)),
    ("pareto.ppf", fst.pareto.ppf, (Q, 2.5, 0.3, 1.2), (0, 1, 2, 3)),
    ("gennorm.logpdf", fst.gennorm.logpdf, (XI, 1.7), (0, 1)),
    ("gennorm.cdf", fst.gennorm.cdf, (XI, 1.7), (0,)),
    ("vonmises.logpdf", fst.vonmises.logpdf, (XI, 2.5), (0, 1)),
    ("wrapcauchy.logpdf", fst.wrapcauchy.logpdf, (AI, 0.4), (0, 1)),
    ("truncnorm.logpdf", fst.truncnorm.logpdf, (XI, -1.5, 2.5, 0.3, 1.2), (0, 1, 2, 3, 4)),
    ("truncnorm.logcdf", fst.truncnorm.logcdf, (XI, -1.5, 2.5, 0.3, 1.2), (0, 1, 2, 3, 4)),
    ("truncnorm.logsf", fst.truncnorm.logsf, (XI, -1.5, 2.5, 0.3, 1.2), (0, 1, 2)),
    *((f"{g}.{f}", getattr(getattr(fst, g), f), (XI, 0.3, 1.7), (0, 1, 2))
      for g in ("gumbel_l", "gumbel_r") for f in ("logpdf", "logcdf", "logsf")),
    *((f"{g}.ppf", getattr(fst, g).ppf, (Q, 0.3, 1.7), (0, 1, 2))
      for g in ("gumbel_l", "gumbel_r")),
    ("dirichlet.logpdf", fst.dirichlet.logpdf,
     (np.array([[0.2, 0.5], [0.3, 0.1]]), np.array([1.5, 2.0, 3.0])), (0, 1)),
    ("multinomial.logpmf", fst.multinomial.logpmf,
     (np.array([1, 2, 0]), 3, np.array([0.2, 0.3, 0.5])), (2,)),
    ("multivariate_normal.logpdf", fst.multivariate_normal.logpdf,
     (np.array([[0.5, 0.3], [1.0, -2.0]]), np.array([0.2, 0.1]), 1.5), (0, 1, 2)),
]


@pytest.mark.parametrize("name,f,ops,diff", GRADS, ids=[g[0] for g in GRADS])
def test_derivatives(name: str, f: Any, ops: tuple[Any, ...], diff: tuple[int, ...]) -> None:
    ops = tuple(np.asarray(a, np.float64) if i in diff else a for i, a in enumerate(ops))

    def g(*xs: Any) -> Any:
        full = list(ops)
        for i, x in zip(diff, xs):
            full[i] = x
        return f(*full)

    check_grads(g, [ops[i] for i in diff], order=2, modes=("fwd", "rev"), atol=1e-4,
                rtol=1e-4)


def test_multivariate_normal_derivative_in_the_covariance() -> None:
    # Through a factor: finite differences of a non-symmetric perturbation of cov itself
    # would see only the triangle the Cholesky factorization reads.
    x = np.array([[0.5, 0.3], [1.0, -2.0]])

    def f(x: Any, mean: Any, factor: Any) -> Any:
        cov = factor @ factor.T + 0.5 * fnp.eye(2)
        return fst.multivariate_normal.logpdf(x, mean, cov)

    check_grads(f, [x, np.array([0.2, 0.1]), np.array([[1.0, 0.0], [0.3, 0.8]])], order=2,
                modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)
