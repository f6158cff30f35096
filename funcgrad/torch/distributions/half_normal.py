"""``HalfNormal(scale)``: ``|X|`` for a centred normal."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.normal import Normal
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import AbsTransform
from funcgrad.torch.distributions.utils import torch


class HalfNormal(TransformedDistribution):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.HalfNormal(torch.tensor([1.0, 2.0]))
    >>> d, d.log_prob(torch.tensor([1.0, 1.0])), d.mean
    (HalfNormal(), tensor([-0.7258, -1.0439]), tensor([0.7979, 1.5958]))
    """

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_dist: Normal

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Any:
        return torch.zeros_like(self.scale)

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - math.log(2)
