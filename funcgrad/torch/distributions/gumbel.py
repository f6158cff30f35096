"""``Gumbel(loc, scale)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import AffineTransform, ExpTransform
from funcgrad.torch.distributions.uniform import Uniform
from funcgrad.torch.distributions.utils import broadcast_all, euler_constant, torch


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution: ``loc - scale * log(-log U)`` for a
    uniform ``U``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Gumbel(0.0, 1.0)
    >>> d, d.log_prob(torch.tensor(0.0)), d.mean
    (Gumbel(loc: 0.0, scale: 1.0), tensor(-1.), tensor(0.5772))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(torch.full_like(self.loc, info.tiny),
                                torch.full_like(self.loc, 1 - info.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv,
                      AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Any:
        return self.loc + self.scale * euler_constant

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Any:
        return self.stddev.pow(2)

    def entropy(self) -> Any:
        return self.scale.log() + (1 + euler_constant)
