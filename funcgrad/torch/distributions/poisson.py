"""``Poisson(rate)``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import broadcast_all, torch


class Poisson(ExponentialFamily):
    """Counts ``0, 1, 2, ...`` with mean ``rate``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Poisson(torch.tensor([1.0, 4.0]))
    >>> d.log_prob(torch.tensor([0.0, 2.0])), d.mode
    (tensor([-1.0000, -1.9206]), tensor([1., 4.]))
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, Number) else self.rate.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        new = self._get_checked_instance(Poisson, _instance)
        shape = torch.Size(batch_shape)
        new.rate = self.rate.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.rate

    @property
    def mode(self) -> Any:
        return self.rate.floor()

    @property
    def variance(self) -> Any:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.rate.log(),)

    def _log_normalizer(self, *natural_params: Any) -> Any:
        return natural_params[0].exp()
