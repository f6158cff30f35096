"""``OneHotCategorical(probs=None, logits=None)``: a Categorical whose samples are one-hot."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.categorical import Categorical
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import torch
from funcgrad.torch.nn import functional as F


class OneHotCategorical(Distribution):
    """A choice among ``K`` categories coded as a one-hot vector of length ``K``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.OneHotCategorical(torch.tensor([1.0, 3.0]))
    >>> d, d.event_shape, d.log_prob(torch.tensor([0.0, 1.0]))
    (OneHotCategorical(), torch.Size([2]), tensor(-0.2877))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = self._get_checked_instance(OneHotCategorical, _instance)
        shape = torch.Size(batch_shape)
        new._categorical = self._categorical.expand(shape)
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self) -> Any:
        return self._categorical._param

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def mean(self) -> Any:
        return self._categorical.probs

    @property
    def mode(self) -> Any:
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self) -> Any:
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self) -> Any:
        return self._categorical.param_shape

    def sample(self, sample_shape: Any = ()) -> Any:
        indices = self._categorical.sample(torch.Size(sample_shape))
        return F.one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self) -> Any:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Any:
        n = self.event_shape[0]
        values = torch.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n, *self.batch_shape, n)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` whose ``rsample`` passes gradients straight through to
    ``probs`` (the sample's value plus ``probs - probs.detach()``).

    >>> import funcgrad.torch as torch
    >>> p = torch.tensor([0.2, 0.8], requires_grad=True)
    >>> s = torch.distributions.OneHotCategoricalStraightThrough(p).rsample()
    >>> s.sum().item(), s.requires_grad
    (1.0, True)
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Any:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
