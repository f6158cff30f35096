"""``Normal(loc, scale)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import broadcast_all, torch


class Normal(ExponentialFamily):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Normal(torch.tensor([0.0, 1.0]), 2.0)
    >>> d
    Normal(loc: torch.Size([2]), scale: torch.Size([2]))
    >>> d.log_prob(torch.tensor([0.0, 0.0]))
    tensor([-1.6121, -1.7371])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        new = self._get_checked_instance(Normal, _instance)
        shape = torch.Size(batch_shape)
        new.loc, new.scale = self.loc.expand(shape), self.scale.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal()
                               / math.sqrt(2)).erf())

    def icdf(self, value: Any) -> Any:
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Any:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, *natural_params: Any) -> Any:
        x, y = natural_params
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
