"""``Dirichlet(concentration)``: distributions over the probability simplex."""

from __future__ import annotations

from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.utils import dirichlet_draws, gamma_surrogate, torch
from funcgrad.torch.nn import functional as F


def sample_dirichlet(concentration: Any, generator: Any = None) -> Any:
    """One Dirichlet draw per row of ``concentration`` (last dimension the categories):
    PyTorch's (``torch._sample_dirichlet``: gamma draws in double, normalised by ATen's
    row sums, clamped into ``[tiny, 1)``), differentiable in ``concentration``.

    The derivative is the chain rule through the normalisation of the implicit gamma
    derivatives: with ``s`` the zero surrogates of the log-draws, ``y0 * (1 + s - <y0,
    s>)`` has value ``y0`` and the softmax's Jacobian.

    >>> import funcgrad.torch as torch
    >>> y = sample_dirichlet(torch.ones(2, 3))
    >>> y.shape, torch.allclose(y.sum(-1), torch.ones(2))
    (torch.Size([2, 3]), True)
    """
    y, gammas = dirichlet_draws(concentration, generator)
    dtype, device = concentration.dtype, concentration.device
    value = torch.tensor(y, dtype=dtype, device=device)
    surrogate = gamma_surrogate(concentration, gammas)
    if surrogate is None:
        return value
    y64 = torch.tensor(y, dtype=torch.float64, device=device)
    tangent = 1 + surrogate - (y64 * surrogate).sum(-1, keepdim=True)
    return value * tangent.to(dtype)


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
