"""``NegativeBinomial(total_count, probs=None, logits=None)``."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.gamma import Gamma
from funcgrad.torch.distributions.utils import (
    expand_count_and_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    set_count_and_probs,
    torch,
)
from funcgrad.torch.nn import functional as F


class NegativeBinomial(Distribution):
    """Successes before ``total_count`` failures in trials of success probability ``probs``
    (or log-odds ``logits``); sampled as a gamma-Poisson mixture.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.NegativeBinomial(3.0, torch.tensor([0.5]))
    >>> d.log_prob(torch.tensor([2.0])), d.mean, d.variance
    (tensor([-1.6740]), tensor([3.]), tensor([6.]))
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    total_count: Any
    _param: Any

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        set_count_and_probs(self, total_count, probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        expand_count_and_probs(self, new, batch_shape)
        return new

    @property
    def mean(self) -> Any:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Any:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Any:
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape: Any = ()) -> Any:
        with torch.no_grad():
            return torch.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_unnormalized_prob = (self.total_count * F.logsigmoid(-self.logits)
                                 + value * F.logsigmoid(self.logits))
        log_normalization = (-(self.total_count + value).lgamma() + (1.0 + value).lgamma()
                             + self.total_count.lgamma())
        log_normalization = torch.where(self.total_count + value == 0.0, 0.0,
                                        log_normalization)
        return log_unnormalized_prob - log_normalization
