"""``Laplace(loc, scale)``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import broadcast_all, finfo_eps_min, torch


class Laplace(Distribution):
    """The Laplace (double exponential) distribution centred at ``loc`` with ``scale``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Laplace(0.0, 2.0)
    >>> d, d.log_prob(torch.tensor(1.0)), d.variance
    (Laplace(loc: 0.0, scale: 2.0), tensor(-1.8863), tensor(8.))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, Number) and isinstance(scale, Number)
        super().__init__(() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        new = self._get_checked_instance(Laplace, _instance)
        shape = torch.Size(batch_shape)
        new.loc, new.scale = self.loc.expand(shape), self.scale.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Any:
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = finfo_eps_min(self.loc.dtype)[0]
        # Uniform on [eps - 1, 1), as torch draws it, so log1p(-|u|) stays finite.
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) \
            + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (
            -(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value: Any) -> Any:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Any:
        return 1 + (2 * self.scale).log()
