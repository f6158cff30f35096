"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: covariance
``cov_factor @ cov_factor.mT + diag(cov_diag)``."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import linalg
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from funcgrad.torch.distributions.utils import lazy_property, torch


def _add_identity(k: Any) -> Any:
    n = k.shape[-1]
    return k + torch.eye(n, dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(w: Any, d: Any) -> Any:
    """Cholesky factor of ``I + W^T D^-1 W``."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    return linalg.cholesky(_add_identity(torch.matmul(wt_dinv, w)))


def _batch_lowrank_logdet(w: Any, d: Any, capacitance_tril: Any) -> Any:
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + d.log().sum(-1))


def _batch_lowrank_mahalanobis(w: Any, d: Any, x: Any, capacitance_tril: Any) -> Any:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    wt_dinv = w.mT / d.unsqueeze(-2)
    wt_dinv_x = _batch_mv(wt_dinv, x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """A multivariate normal whose covariance is low rank plus diagonal; densities cost
    ``O(n m^2)`` through the capacitance matrix rather than ``O(n^3)``.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.LowRankMultivariateNormal(
    ...     torch.zeros(2), torch.tensor([[1.0], [0.0]]), torch.ones(2))
    >>> d, d.log_prob(torch.zeros(2)), d.variance
    (LowRankMultivariateNormal(loc: torch.Size([2]), cov_factor: torch.Size([2, 1]), \
cov_diag: torch.Size([2])), tensor(-2.1845), tensor([2., 1.]))
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError("cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = torch.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        shape = torch.Size(batch_shape)
        loc_shape = shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @lazy_property
    def variance(self) -> Any:
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Any:
        cov_diag_sqrt_unsqueeze = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / cov_diag_sqrt_unsqueeze
        k = _add_identity(torch.matmul(dinvsqrt_w, dinvsqrt_w.mT))
        scale_tril = cov_diag_sqrt_unsqueeze * linalg.cholesky(k)
        return scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Any:
        covariance_matrix = (torch.matmul(self._unbroadcasted_cov_factor,
                                          self._unbroadcasted_cov_factor.mT)
                             + self._unbroadcasted_cov_diag.diag_embed())
        return covariance_matrix.expand(self._batch_shape + self._event_shape
                                        + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Any:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a: Any = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision_matrix = self._unbroadcasted_cov_diag.reciprocal().diag_embed() - a.mT @ a
        return precision_matrix.expand(self._batch_shape + self._event_shape
                                       + self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        w_shape = shape[:-1] + self.cov_factor.shape[-1:]
        eps_w = torch.randn(w_shape, dtype=self.loc.dtype, device=self.loc.device)
        eps_d = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, diff,
                                       self._capacitance_tril)
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self) -> Any:
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
