"""``Categorical(probs=None, logits=None)``: indices ``0 .. K-1`` of the last dimension."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import (
    finfo_eps_min,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    torch,
)


class Categorical(Distribution):
    """A choice among ``K`` categories; ``probs`` are normalized over the last dimension and
    ``logits`` stored as normalized log-probabilities.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Categorical(probs=torch.tensor([1.0, 1.0, 2.0]))
    >>> d
    Categorical(probs: torch.Size([3]))
    >>> d.probs, d.log_prob(torch.tensor(2))
    (tensor([0.2500, 0.2500, 0.5000]), tensor(-0.6931))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch = self._param.size()[:-1] if self._param.dim() > 1 else ()
        super().__init__(batch, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        shape = torch.Size(batch_shape)
        param_shape = torch.Size((*shape, self._num_events))
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(param_shape))
                new._param = getattr(new, name)
        new._num_events = self._num_events
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self) -> Any:
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Any:
        return self._param.size()

    @property
    def mean(self) -> Any:
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                          device=self.probs.device)

    @property
    def mode(self) -> Any:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Any:
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                          device=self.probs.device)

    def sample(self, sample_shape: Any = ()) -> Any:
        sample_shape = torch.Size(sample_shape)
        with torch.no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            draws = torch.multinomial(probs_2d, sample_shape.numel(), True).T
            return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Any:
        logits = self.logits.clamp(min=finfo_eps_min(self.logits.dtype)[1])
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Any:
        values = torch.arange(self._num_events, dtype=torch.long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1, *self._batch_shape)) if expand else values
