"""``LogisticNormal(loc, scale)``: a normal pushed onto the simplex by stick breaking."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.normal import Normal
from funcgrad.torch.distributions.transformed_distribution import TransformedDistribution
from funcgrad.torch.distributions.transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(X)`` for ``X ~ Normal(loc, scale)`` over the last
    dimension (a ``K - 1`` vector gives a ``K``-simplex).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.LogisticNormal(torch.zeros(2), torch.ones(2))
    >>> d, d.event_shape, d.log_prob(torch.ones(3) / 3)
    (LogisticNormal(), torch.Size([3]), tensor(1.4580))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogisticNormal:
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def loc(self) -> Any:
        return self.base_dist.base_dist.loc  # type: ignore[attr-defined]

    @property
    def scale(self) -> Any:
        return self.base_dist.base_dist.scale  # type: ignore[attr-defined]
