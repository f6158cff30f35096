"""``HalfCauchy(scale)``: ``|X|`` for a centred Cauchy."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions._folded import Folded
from funcgrad.torch.distributions.cauchy import Cauchy
from funcgrad.torch.distributions.utils import torch


class HalfCauchy(Folded):
    """``|X|`` for ``X ~ Cauchy(0, scale)``; its mean is infinite.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.HalfCauchy(1.0)
    >>> d, d.log_prob(torch.tensor(1.0)), d.mean
    (HalfCauchy(), tensor(-1.1447), tensor(inf))
    """

    base = Cauchy
    values_as_tensors = True
    base_dist: Cauchy

    @property
    def mean(self) -> Any:
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                          device=self.scale.device)

    @property
    def variance(self) -> Any:
        return self.base_dist.variance
