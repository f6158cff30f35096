"""``VonMises(loc, concentration)``: the circular normal."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import broadcast_all, lazy_property, torch

# torch's polynomial approximations of log I0 and log I1 (Abramowitz and Stegun 9.8.1-9.8.4),
# evaluated in the same order so the densities round as PyTorch's do.
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
                  0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _eval_poly(y: Any, coef: list[float]) -> Any:
    coef = list(coef)
    result: Any = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


def _log_modified_bessel_fn(x: Any, order: int = 0) -> Any:
    """``log(I_order(x))`` for ``x > 0`` and ``order`` 0 or 1 (torch's approximation).

    >>> import funcgrad.torch as torch
    >>> _log_modified_bessel_fn(torch.tensor([1.0, 5.0]))
    tensor([0.2359, 3.3047])
    """
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    y = y * y
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    y = 3.75 / x
    large = x - 0.5 * x.log() + _eval_poly(y, _COEF_LARGE[order]).log()
    return torch.where(x < 3.75, small, large)


def _rejection_sample(loc: Any, concentration: Any, proposal_r: Any, x: Any) -> Any:
    """Best and Fisher's rejection sampler, drawing ``rand`` triples in float64 until every
    entry has been accepted, as torch's loop does: after ``manual_seed`` the same draws and
    acceptances as PyTorch's, and the same values but where torch's vectorised float64
    ``sqrt`` rounds differently in the proposal's (cancelling, for small concentrations)
    parameter."""
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not bool(done.all()):
        u = torch.rand((3, *x.shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises distribution on the circle, with mean angle ``loc`` and concentration
    ``concentration``; angles are read modulo ``2 pi`` and samples lie in ``[-pi, pi)``.
    Its mean and variance are the circular ones. Sampling (no ``rsample``) runs in float64.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.VonMises(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 4.0]))
    >>> d, d.log_prob(torch.tensor([0.5, 0.5])), d.variance
    (VonMises(loc: torch.Size([2]), concentration: torch.Size([2])), \
tensor([-1.1962, -0.7525]), tensor([0.5536, 0.1365]))
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None
                 ) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args=validate_args)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * torch.cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self) -> Any:
        return self.loc.to(torch.float64)

    @lazy_property
    def _concentration(self) -> Any:
        return self.concentration.to(torch.float64)

    @lazy_property
    def _proposal_r(self) -> Any:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        # The second order Taylor expansion around 0, for small concentrations.
        return torch.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = ()) -> Any:
        """Best and Fisher's (1979) rejection sampler, in double precision (single precision
        hangs for concentrations near 1e-4, as PyTorch notes)."""
        with torch.no_grad():
            shape = self._extended_shape(sample_shape)
            x = torch.zeros(shape, dtype=torch.float64, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        # torch rebuilds the distribution (its base expand is not implemented), keeping only
        # an explicitly given validate_args.
        validate_args = self.__dict__.get("_validate_args")
        return type(self)(self.loc.expand(batch_shape),
                          self.concentration.expand(batch_shape), validate_args=validate_args)

    @property
    def mean(self) -> Any:
        """The circular mean."""
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @lazy_property
    def variance(self) -> Any:
        """The circular variance, ``1 - I1(k) / I0(k)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
