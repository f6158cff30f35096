"""``Binomial(total_count=1, probs=None, logits=None)``."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import (
    expand_count_and_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    set_count_and_probs,
    torch,
)


def _clamp_by_zero(x: Any) -> Any:
    # max(x, 0) whose derivative at 0 is 1/2, as torch's.
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """Successes among ``total_count`` trials of probability ``probs`` (or log-odds
    ``logits``); ``total_count`` broadcasts with the probabilities.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Binomial(4, torch.tensor([0.25, 0.5]))
    >>> d, d.mean
    (Binomial(total_count: torch.Size([2]), probs: torch.Size([2])), tensor([1., 2.]))
    >>> d.log_prob(torch.tensor([1.0, 2.0]))
    tensor([-0.8630, -0.9808])
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    total_count: Any
    _param: Any

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        set_count_and_probs(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        new = self._get_checked_instance(Binomial, _instance)
        expand_count_and_probs(self, new, batch_shape)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Any:
        return self.total_count * self.probs

    @property
    def mode(self) -> Any:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = (self.total_count + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (self.total_count - value + 1).lgamma()
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p()
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Any:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Any:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = torch.arange(1 + total_count, dtype=self._param.dtype,
                              device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values
