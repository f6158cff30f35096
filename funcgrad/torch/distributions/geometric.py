"""``Geometric(probs=None, logits=None)``: failures before the first success."""

from __future__ import annotations

from numbers import Number
from typing import Any

from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
    torch,
)
from funcgrad.torch.nn import functional as F


class Geometric(Distribution):
    """The number of failures ``0, 1, ...`` before the first success of trials with success
    probability ``probs`` (in ``(0, 1]``) or log-odds ``logits``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Geometric(torch.tensor([0.5, 0.25]))
    >>> d.log_prob(torch.tensor([1.0, 0.0])), d.mean
    (tensor([-1.3863, -1.3863]), tensor([1., 3.]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        super().__init__(() if isinstance(given, Number) else given.size(),
                         validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value.detach().reshape(-1)[~valid.reshape(-1)]}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        new = self._get_checked_instance(Geometric, _instance)
        shape = torch.Size(batch_shape)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(shape))
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Any:
        return torch.zeros_like(self.probs)

    @property
    def variance(self) -> Any:
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self) -> Any:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Any:
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
            u = u * (1 - tiny) + tiny
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # A certain success scores 0 failures as log(1): torch zeroes those probabilities
        # by a masked write, here a where with the same values and gradients.
        probs = torch.where((probs == 1) & (value == 0), 0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Any:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs
