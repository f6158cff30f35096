"""funcgrad.scipy.stats: every function against jax.scipy.stats and scipy.stats in
float64, with derivatives checked by finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.stats as sst

from funcgrad.scipy import stats as fst
from funcgrad.testing import check_grads

X = np.array([-2.5, -0.3, 0.0, 0.4, 1.2, 3.0])
P = np.array([0.01, 0.2, 0.5, 0.7, 0.9, 0.999])
U = np.array([0.05, 0.2, 0.5, 0.6, 0.9, 0.95])
K = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 7.0])

# (distribution, function, args); extra args are scipy's shape parameters
CASES: list[tuple[str, str, tuple[Any, ...]]] = [
    *(("norm", f, (X, 0.3, 1.7)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                             "logsf")),
    ("norm", "ppf", (P, 0.3, 1.7)), ("norm", "isf", (P, 0.3, 1.7)),
    *(("logistic", f, (X, 0.3, 1.7)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                                 "logsf")),
    ("logistic", "ppf", (P, 0.3, 1.7)), ("logistic", "isf", (P, 0.3, 1.7)),
    *(("expon", f, (X, -1.0, 2.0)) for f in ("logpdf", "pdf", "cdf", "sf", "logsf")),
    ("expon", "ppf", (P, -1.0, 2.0)),
    *(("laplace", f, (X, 0.3, 1.7)) for f in ("logpdf", "pdf", "cdf")),
    *(("cauchy", f, (X, 0.3, 1.7)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                               "logsf")),
    ("cauchy", "ppf", (P, 0.3, 1.7)), ("cauchy", "isf", (P, 0.3, 1.7)),
    *(("uniform", f, (X, -1.0, 2.5)) for f in ("logpdf", "pdf", "cdf")),
    ("uniform", "ppf", (P, -1.0, 2.5)),
    *(("t", f, (X, 3.5, 0.3, 1.7)) for f in ("logpdf", "pdf")),
    *(("gamma", f, (X + 3, 2.5, 0.5, 1.5)) for f in ("logpdf", "pdf", "cdf", "logcdf",
                                                       "sf", "logsf")),
    *(("chi2", f, (X + 3, 3.0, 0.5, 1.5)) for f in ("logpdf", "pdf", "cdf", "logcdf",
                                                      "sf", "logsf")),
    *(("beta", f, (U, 2.5, 1.5)) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf",
                                             "logsf")),
    *(("poisson", f, (K, 2.5)) for f in ("logpmf", "pmf", "cdf")),
    *(("bernoulli", f, (np.array([0.0, 1.0, 2.0, -1.0, 0.0, 1.0]), 0.3))
       for f in ("logpmf", "pmf", "cdf")),
    ("bernoulli", "ppf", (P, 0.3)),
]


@pytest.mark.parametrize("dist,fn,args", CASES, ids=[f"{d}.{f}" for d, f, _ in CASES])
def test_matches_scipy_and_jax(dist: str, fn: str, args: tuple[Any, ...]) -> None:
    got = np.asarray(getattr(getattr(fst, dist), fn)(*args))
    want = getattr(getattr(sst, dist), fn)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg="vs scipy.stats")
    jax = pytest.importorskip("jax")
    import jax.scipy.stats as jst  # noqa: PLC0415

    jfn = getattr(getattr(jst, dist), fn, None)
    if jfn is None:
        return  # a function SciPy has and JAX lacks: SciPy is the reference
    with jax.enable_x64(True):
        jwant = np.asarray(jfn(*args))
    np.testing.assert_allclose(got, jwant, rtol=1e-8, atol=1e-11, err_msg="vs JAX")


GRADS = [
    ("norm", "logpdf", (X, 0.3, 1.7)), ("norm", "cdf", (X, 0.3, 1.7)),
    ("norm", "logcdf", (X, 0.3, 1.7)), ("norm", "ppf", (U, 0.3, 1.7)),
    ("logistic", "logpdf", (X, 0.3, 1.7)), ("t", "logpdf", (X, 3.5, 0.3, 1.7)),
    ("gamma", "logpdf", (X + 3.2, 2.5, 0.5, 1.5)), ("gamma", "cdf", (X + 3.2, 2.5, 0.5, 1.5)),
    ("beta", "logpdf", (U, 2.5, 1.5)), ("cauchy", "logpdf", (X, 0.3, 1.7)),
    ("laplace", "logpdf", (X + 0.05, 0.3, 1.7)), ("poisson", "logpmf", (K, 2.5)),
]


@pytest.mark.parametrize("dist,fn,args", GRADS, ids=[f"{d}.{f}" for d, f, _ in GRADS])
def test_derivatives(dist: str, fn: str, args: tuple[Any, ...]) -> None:
    f = getattr(getattr(fst, dist), fn)
    ops = [np.asarray(a, np.float64) for a in args]
    # integer-valued arguments (counts) and the gamma-family shapes only to first order
    order = 1 if dist in ("gamma", "poisson") else 2
    diff = [1] if dist == "poisson" else list(range(len(ops)))
    if dist == "gamma" and fn == "cdf":
        diff = [0]

    def g(*xs: Any) -> Any:
        full = list(ops)
        for i, x in zip(diff, xs):
            full[i] = x
        return f(*full)

    check_grads(g, [ops[i] for i in diff], order=order, modes=("fwd", "rev"), atol=1e-4,
                rtol=1e-4)
