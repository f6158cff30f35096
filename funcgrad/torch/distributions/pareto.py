"""``Pareto(scale, alpha)``."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.exponential import Exponential
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import AffineTransform, ExpTransform
from funcgrad.torch.distributions.utils import broadcast_all


class Pareto(TransformedDistribution):
    """The Pareto type-I distribution: ``scale * exp(E)`` for ``E ~ Exponential(alpha)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Pareto(1.0, 3.0)
    >>> d, d.log_prob(torch.tensor(2.0)), d.mean
    (Pareto(alpha: 3.0, scale: 1.0), tensor(-1.6740), tensor(1.5000))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Pareto:
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Any:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Any:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
