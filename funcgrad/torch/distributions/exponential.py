"""``Exponential(rate)``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import broadcast_all, torch


class Exponential(ExponentialFamily):
    """The exponential distribution with ``rate`` (one over the mean).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Exponential(torch.tensor([1.0, 2.0]))
    >>> d.log_prob(torch.tensor([1.0, 1.0])), d.mean
    (tensor([-1.0000, -1.3069]), tensor([1.0000, 0.5000]))
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, Number) else self.rate.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        new = self._get_checked_instance(Exponential, _instance)
        shape = torch.Size(batch_shape)
        new.rate = self.rate.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Any:
        return torch.zeros_like(self.rate)

    @property
    def stddev(self) -> Any:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Any:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        draws = torch.empty(shape, dtype=self.rate.dtype, device=self.rate.device)
        return draws.exponential_() / self.rate

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Any) -> Any:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Any:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (-self.rate,)

    def _log_normalizer(self, *natural_params: Any) -> Any:
        return -(-natural_params[0]).log()
