"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch import linalg
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import lazy_property, torch


def _batch_mv(bmat: Any, bvec: Any) -> Any:
    return torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL: Any, bx: Any) -> Any:  # noqa: N803 - torch's names
    """``x^T (L L^T)^-1 x`` for a batch of factors ``bL`` broadcastable to ``bx``'s batch,
    solving once per factor (torch's reshaping, so the sums run in torch's order).

    >>> import funcgrad.torch as torch
    >>> _batch_mahalanobis(2 * torch.eye(2), torch.tensor([[2.0, 0.0], [2.0, 2.0]]))
    tensor([1., 2.])
    """
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bx_batch_dims = len(bx_batch_shape)
    bl_batch_dims = bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bl_batch_dims
    old_batch_dims = outer_batch_dims + bl_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bl_batch_dims
    # Split each of bx's batch sizes that bL repeats into (repeats, bL's size).
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for sl, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (sx // sl, sl)
    bx = bx.reshape(*bx_new_shape, n)
    permute_dims = (list(range(outer_batch_dims))
                    + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2))
                    + [new_batch_dims])
    bx = bx.permute(permute_dims)
    flat_l = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_l.size(0), n)
    flat_x_swap = flat_x.permute(1, 2, 0)
    m_swap = linalg.solve_triangular(flat_l, flat_x_swap, upper=False).pow(2).sum(-2)
    permuted_m = m_swap.t().reshape(bx.shape[:-1])
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bl_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    return permuted_m.permute(permute_inv_dims).reshape(bx_batch_shape)


def _precision_to_scale_tril(P: Any) -> Any:  # noqa: N803 - torch's names
    # The Cholesky factor of the flipped precision gives the covariance's factor without
    # inverting the precision first.
    lf = linalg.cholesky(P.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).transpose(-2, -1)
    eye = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(l_inv, eye, upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the lower Cholesky factor every computation
    uses).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    >>> d
    MultivariateNormal(loc: torch.Size([2]), covariance_matrix: torch.Size([2, 2]))
    >>> d.log_prob(torch.zeros(2)), d.entropy()
    (tensor(-1.8379), tensor(2.8379))
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = torch.broadcast_shapes(scale_tril.shape[:-2], loc.shape[:-1])
            self.scale_tril = scale_tril.expand(*batch_shape, -1, -1)
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = torch.broadcast_shapes(covariance_matrix.shape[:-2], loc.shape[:-1])
            self.covariance_matrix = covariance_matrix.expand(*batch_shape, -1, -1)
        else:
            if precision_matrix.dim() < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, "
                                 "with optional leading batch dimensions")
            batch_shape = torch.broadcast_shapes(precision_matrix.shape[:-2], loc.shape[:-1])
            self.precision_matrix = precision_matrix.expand(*batch_shape, -1, -1)
        self.loc = loc.expand(*batch_shape, -1)
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._get_checked_instance(MultivariateNormal, _instance)
        shape = torch.Size(batch_shape)
        cov_shape = shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Any:
        return self._unbroadcasted_scale_tril.expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Any:
        factor = self._unbroadcasted_scale_tril
        return torch.matmul(factor, factor.mT).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Any:
        return self._unbroadcasted_scale_tril.cholesky_inverse().expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self) -> Any:
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
