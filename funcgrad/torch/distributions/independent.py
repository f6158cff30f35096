"""``Independent(base_distribution, reinterpreted_batch_ndims)``."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import sum_rightmost, torch


class Independent(Distribution):
    """Reinterprets the rightmost ``reinterpreted_batch_ndims`` batch dimensions of a
    distribution as event dimensions (so ``log_prob`` sums over them).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(3), 1.0), 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(torch.zeros(3))
    (torch.Size([]), torch.Size([3]), tensor(-2.7568))
    """

    arg_constraints: dict[str, Any] = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        if reinterpreted_batch_ndims > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {reinterpreted_batch_ndims} vs {len(base_distribution.batch_shape)}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Independent:
        new = self._get_checked_instance(Independent, _instance)
        shape = torch.Size(batch_shape)
        new.base_dist = self.base_dist.expand(
            shape + self.event_shape[:self.reinterpreted_batch_ndims])
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:  # type: ignore[override]
        if self.reinterpreted_batch_ndims > 0:
            return False
        return self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> Any:
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self) -> Any:
        return self.base_dist.mean

    @property
    def mode(self) -> Any:
        return self.base_dist.mode

    @property
    def variance(self) -> Any:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Any:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Any) -> Any:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Any:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Any:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
