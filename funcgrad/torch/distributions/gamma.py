"""``Gamma(concentration, rate)``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from funcgrad.torch._gamma_draws import standard_gamma
from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import broadcast_all, torch


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Gamma(torch.tensor([1.0, 3.0]), 2.0)
    >>> d.log_prob(torch.tensor([1.0, 1.0])), d.mean
    (tensor([-1.3069, -0.6137]), tensor([0.5000, 1.5000]))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None
                 ) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(() if scalar else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(shape)
        new.rate = self.rate.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # torch clamps the result outside the graph; a where keeps the same values and
        # gradients without writing into a tensor autograd saved.
        tiny = finfo(value.dtype).tiny
        return torch.where(value.detach() < tiny, value - value.detach() + tiny, value)

    def log_prob(self, value: Any) -> Any:
        value = value.to(self.rate.dtype) if isinstance(value, torch.Tensor) else \
            torch.tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value)
                - self.rate * value - self.concentration.lgamma())

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration.igamma(self.rate * value)

    def entropy(self) -> Any:
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, *natural_params: Any) -> Any:
        x, y = natural_params
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()
