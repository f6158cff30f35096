"""``InverseGamma(concentration, rate)``: ``1 / X`` for a gamma ``X``."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.gamma import Gamma
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import PowerTransform
from funcgrad.torch.distributions.utils import torch


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.InverseGamma(3.0, 2.0)
    >>> d, d.log_prob(torch.tensor(1.0)), d.mean
    (InverseGamma(), tensor(-0.6137), tensor(1.))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    base_dist: Gamma

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None
                 ) -> None:
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def concentration(self) -> Any:
        return self.base_dist.concentration

    @property
    def rate(self) -> Any:
        return self.base_dist.rate

    @property
    def mean(self) -> Any:
        result = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Any:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Any:
        result = self.rate.square() / ((self.concentration - 1).square()
                                       * (self.concentration - 2))
        return torch.where(self.concentration > 2, result, math.inf)

    def entropy(self) -> Any:
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())
