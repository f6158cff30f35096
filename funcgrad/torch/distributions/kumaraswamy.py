"""``Kumaraswamy(concentration1, concentration0)``."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import AffineTransform, PowerTransform
from funcgrad.torch.distributions.uniform import Uniform
from funcgrad.torch.distributions.utils import broadcast_all, euler_constant, torch


def _moments(a: Any, b: Any, n: int) -> Any:
    """The ``n``-th moment, ``b * B(1 + n / a, b)``."""
    arg1 = 1 + n / a
    log_value = arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()
    return b * log_value.exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``(0, 1)``: ``(1 - U ** (1 / b)) ** (1 / a)`` for a
    uniform ``U``, ``a = concentration1`` and ``b = concentration0``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Kumaraswamy(2.0, 3.0)
    >>> d, d.log_prob(torch.tensor(0.5)), d.mean
    (Kumaraswamy(concentration1: 2.0, concentration0: 3.0), tensor(0.5232), tensor(0.4571))
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(torch.full_like(self.concentration0, 0),
                            torch.full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Kumaraswamy:
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Any:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Any:
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        log_mode = torch.where((self.concentration0 < 1) | (self.concentration1 < 1),
                               math.nan, log_mode)
        return log_mode.exp()

    @property
    def variance(self) -> Any:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self) -> Any:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = (self.concentration0 + 1).digamma() + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
