"""``GeneralizedPareto(loc, scale, concentration)``."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import broadcast_all, torch


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution (exponential at ``concentration == 0``, bounded
    above for a negative one); sampled through ``icdf`` of a uniform.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.GeneralizedPareto(0.0, 1.0, 0.5)
    >>> d, d.log_prob(torch.tensor(1.0)), d.mean
    (GeneralizedPareto(loc: 0.0, scale: 1.0, concentration: 0.5), tensor(-1.2164), tensor(2.))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        shape = torch.Size(batch_shape)
        new.loc, new.scale = self.loc.expand(shape), self.scale.expand(shape)
        new.concentration = self.concentration.expand(shape)
        Distribution.__init__(new, shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe(self) -> tuple[Any, Any]:
        eq_zero = self.concentration.isclose(torch.zeros_like(self.concentration))
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration),
                                    self.concentration)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe()
        where_nonzero = -(safe_conc * z).log1p() / safe_conc
        return torch.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value: Any) -> Any:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Any) -> Any:
        return self.log_cdf(value).exp()

    def icdf(self, value: Any) -> Any:
        eq_zero, safe_conc = self._safe()
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        where_zero = self.loc - self.scale * logu
        return torch.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x: Any) -> Any:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Any:
        valid = self.concentration < 1
        safe_conc = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self) -> Any:
        valid = self.concentration < 0.5
        safe_conc = torch.where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return torch.where(valid, result, math.nan)

    def entropy(self) -> Any:
        ans = self.scale.log() + self.concentration + 1
        return ans.broadcast_to(self._batch_shape)

    @property
    def mode(self) -> Any:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            math.inf)
        return constraints.interval(lower, upper)
