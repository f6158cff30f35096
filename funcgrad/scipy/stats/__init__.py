"""``jax.scipy.stats``: log densities, densities, CDFs and quantiles of common
distributions over funcgrad arrays, differentiable in their arguments.

>>> from funcgrad.scipy import stats
>>> float(stats.norm.cdf(0.0))
0.5
"""

from funcgrad.scipy.stats import (
    bernoulli,
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    laplace,
    logistic,
    norm,
    poisson,
    t,
    uniform,
)

__all__ = ["bernoulli", "beta", "cauchy", "chi2", "expon", "gamma", "laplace", "logistic",
           "norm", "poisson", "t", "uniform"]
