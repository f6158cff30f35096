"""``Uniform(low, high)``: the half-open interval ``[low, high)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import broadcast_all, torch


class Uniform(Distribution):
    """The uniform distribution on ``[low, high)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Uniform(0.0, 4.0)
    >>> d, d.log_prob(torch.tensor(1.0)), d.variance
    (Uniform(low: 0.0, high: 4.0), tensor(-1.3863), tensor(1.3333))
    """

    has_rsample = True

    @property
    def arg_constraints(self) -> dict[str, Any]:
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @property
    def support(self) -> Any:
        return constraints.interval(self.low, self.high)

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        scalar = isinstance(low, Number) and isinstance(high, Number)
        super().__init__(() if scalar else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        new = self._get_checked_instance(Uniform, _instance)
        shape = torch.Size(batch_shape)
        new.low, new.high = self.low.expand(shape), self.high.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Any:
        return math.nan * self.high

    @property
    def stddev(self) -> Any:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Any:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        inside = self.low.le(value).type_as(self.low) * self.high.gt(value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Any) -> Any:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Any:
        return (self.high - self.low).log()
