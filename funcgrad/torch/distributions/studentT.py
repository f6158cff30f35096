"""``StudentT(df, loc=0, scale=1)``."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.chi2 import Chi2
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import broadcast_all, torch


class StudentT(Distribution):
    """Student's t-distribution with ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``; samples are ``loc + scale * X / sqrt(Z / df)`` for a standard normal ``X`` and
    ``Z ~ Chi2(df)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.StudentT(torch.tensor([1.0, 3.0]))
    >>> d, d.log_prob(torch.tensor([0.0, 0.0])), d.variance
    (StudentT(df: torch.Size([2]), loc: torch.Size([2]), scale: torch.Size([2])), \
tensor([-1.1447, -1.0009]), tensor([nan, 3.]))
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._get_checked_instance(StudentT, _instance)
        shape = torch.Size(batch_shape)
        new.df, new.loc = self.df.expand(shape), self.loc.expand(shape)
        new.scale = self.scale.expand(shape)
        new._chi2 = self._chi2.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return torch.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        big = self.df > 2
        safe_df = torch.where(big, self.df, 3.0)
        var = torch.where(big, self.scale.pow(2) * safe_df / (safe_df - 2), math.inf)
        var = torch.where(self.df <= 1, math.nan, var)
        return var.to(self.df.dtype)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        x = torch.randn(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * (z / self.df).rsqrt())

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self) -> Any:
        lbeta = ((0.5 * self.df).lgamma() + math.lgamma(0.5)
                 - (0.5 * (self.df + 1)).lgamma())
        return (self.scale.log()
                + 0.5 * (self.df + 1) * ((0.5 * (self.df + 1)).digamma()
                                         - (0.5 * self.df).digamma())
                + 0.5 * self.df.log() + lbeta)
