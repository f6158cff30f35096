"""``HalfNormal(scale)``: ``|X|`` for a centred normal."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions._folded import Folded
from funcgrad.torch.distributions.normal import Normal


class HalfNormal(Folded):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.HalfNormal(torch.tensor([1.0, 2.0]))
    >>> d, d.log_prob(torch.tensor([1.0, 1.0])), d.mean
    (HalfNormal(), tensor([-0.7258, -1.0439]), tensor([0.7979, 1.5958]))
    """

    base = Normal
    base_dist: Normal

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Any:
        return self.scale.pow(2) * (1 - 2 / math.pi)
