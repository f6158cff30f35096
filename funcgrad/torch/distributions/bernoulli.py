"""``Bernoulli(probs=None, logits=None)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    torch,
)
from funcgrad.torch.nn import functional as F


class Bernoulli(ExponentialFamily):
    """0/1 outcomes with probability ``probs`` of a 1 (or log-odds ``logits``).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Bernoulli(probs=torch.tensor([0.25, 0.5]))
    >>> d.log_prob(torch.tensor([1.0, 0.0])), d.entropy()
    (tensor([-1.3863, -0.6931]), tensor([0.5623, 0.6931]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        scalar = isinstance(probs if probs is not None else logits, Number)
        super().__init__(() if scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        shape = torch.Size(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(shape))
                new._param = getattr(new, name)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @property
    def mean(self) -> Any:
        return self.probs

    @property
    def mode(self) -> Any:
        # torch.where rather than a masked write, which funcgrad rejects on 0-d tensors.
        mode = (self.probs >= 0.5).to(self.probs)
        return torch.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self) -> Any:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Any:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Any:
        values = torch.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.probs.logit(),)

    def _log_normalizer(self, *natural_params: Any) -> Any:
        return natural_params[0].exp().log1p()
