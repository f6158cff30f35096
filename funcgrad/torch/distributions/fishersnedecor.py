"""``FisherSnedecor(df1, df2)``: the F-distribution."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.gamma import Gamma
from funcgrad.torch.distributions.utils import broadcast_all, torch


class FisherSnedecor(Distribution):
    """The F-distribution: the ratio of two scaled chi-squared draws with ``df1`` and ``df2``
    degrees of freedom.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.FisherSnedecor(4.0, 6.0)
    >>> d, d.log_prob(torch.tensor(1.0)), d.mean
    (FisherSnedecor(df1: 4.0, df2: 6.0), tensor(-0.8802), tensor(1.5000))
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._get_checked_instance(FisherSnedecor, _instance)
        shape = torch.Size(batch_shape)
        new.df1, new.df2 = self.df1.expand(shape), self.df2.expand(shape)
        new._gamma1, new._gamma2 = self._gamma1.expand(shape), self._gamma2.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        df2 = torch.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Any:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return torch.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Any:
        df2 = torch.where(self.df2 <= 4, math.nan, self.df2)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
