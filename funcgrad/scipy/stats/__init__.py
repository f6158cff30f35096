"""``jax.scipy.stats``: log densities, densities, CDFs and quantiles of common
distributions over funcgrad arrays, differentiable in their arguments.

>>> from funcgrad.scipy import stats
>>> float(stats.norm.cdf(0.0))
0.5
"""

from funcgrad.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from funcgrad.scipy.stats._core import mode, rankdata, sem
from funcgrad.scipy.stats._kde import gaussian_kde

__all__ = [
    "bernoulli",
    "beta",
    "betabinom",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "gaussian_kde",
    "gennorm",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "mode",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "norm",
    "pareto",
    "poisson",
    "rankdata",
    "sem",
    "t",
    "truncnorm",
    "uniform",
    "vonmises",
    "wrapcauchy",
]
