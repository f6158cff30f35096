"""``Beta(concentration1, concentration0)``: a two-category Dirichlet, first category."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.dirichlet import Dirichlet
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import broadcast_all, torch


class Beta(ExponentialFamily):
    """The beta distribution on ``[0, 1]`` with ``concentration1`` (alpha) and
    ``concentration0`` (beta). Its repr names no parameters, as torch's (they live in a
    Dirichlet).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Beta(2.0, 3.0)
    >>> d, d.mean, d.log_prob(torch.tensor(0.5))
    (Beta(), tensor(0.4000), tensor(0.4055))
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        if isinstance(concentration1, (int, float)) and isinstance(concentration0, (int, float)):
            both = torch.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = torch.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        new = self._get_checked_instance(Beta, _instance)
        shape = torch.Size(batch_shape)
        new._dirichlet = self._dirichlet.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Any:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Any:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Any:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(torch.stack([value, 1.0 - value], -1))

    def entropy(self) -> Any:
        return self._dirichlet.entropy()

    @property
    def concentration1(self) -> Any:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Any:
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, *natural_params: Any) -> Any:
        x, y = natural_params
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
