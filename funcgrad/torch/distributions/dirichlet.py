"""``Dirichlet(concentration)``: distributions over the probability simplex."""

from __future__ import annotations

from typing import Any

from funcgrad.torch._gamma_draws import sample_dirichlet
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import torch
from funcgrad.torch.nn import functional as F


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with ``concentration`` (last dimension the categories).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
    >>> d, d.mean
    (Dirichlet(concentration: torch.Size([3])), tensor([0.1667, 0.3333, 0.5000]))
    >>> d.log_prob(torch.tensor([0.2, 0.3, 0.5]))
    tensor(1.5041)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(shape + self.event_shape)
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        return sample_dirichlet(self.concentration.expand(shape))

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return ((self.concentration - 1.0).xlogy(value).sum(-1)
                + self.concentration.sum(-1).lgamma() - self.concentration.lgamma().sum(-1))

    @property
    def mean(self) -> Any:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Any:
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        # All concentrations below 1: the density peaks at a vertex, the (first) largest
        # entry of the 0/0 row, as torch's masked write picks it.
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = F.one_hot(mode.argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return torch.where(mask, vertex, mode)

    @property
    def variance(self) -> Any:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self) -> Any:
        k = self.concentration.size(-1)
        a0 = self.concentration.sum(-1)
        return (self.concentration.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((self.concentration - 1.0) * self.concentration.digamma()).sum(-1))

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return (self.concentration,)

    def _log_normalizer(self, *natural_params: Any) -> Any:
        x = natural_params[0]
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
