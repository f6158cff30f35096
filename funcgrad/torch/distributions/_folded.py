"""``|X|`` for a centred symmetric ``X`` (HalfNormal, HalfCauchy): the density doubled on
``[0, inf)``, the cdf and icdf folded, the entropy less ``log 2``."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import AbsTransform
from funcgrad.torch.distributions.utils import torch


class Folded(TransformedDistribution):
    """The distribution of ``|X|``, ``X ~ base(0, scale)``; subclasses name ``base`` and
    give the moments."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base: Any = None
    base_dist: Any
    # Values given to log_prob as numbers are made tensors first (HalfCauchy does so).
    values_as_tensors = False

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = self.base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return torch.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        if self.values_as_tensors:
            value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype,
                                    device=self.base_dist.scale.device)
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
