"""``LogNormal(loc, scale)``: ``exp`` of a normal."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.normal import Normal
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import ExpTransform


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``. Its repr names no parameters, as torch's
    (they live on the base normal).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.LogNormal(0.0, 1.0)
    >>> d, d.log_prob(torch.tensor(1.0)), d.mean
    (LogNormal(), tensor(-0.9189), tensor(1.6487))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True
    base_dist: Normal

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogNormal:
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> Any:
        return self.base_dist.loc

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mean(self) -> Any:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Any:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Any:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self) -> Any:
        return self.base_dist.entropy() + self.loc
