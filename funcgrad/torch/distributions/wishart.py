"""``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from funcgrad.torch import linalg
from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.chi2 import Chi2
from funcgrad.torch.distributions.exp_family import ExponentialFamily
from funcgrad.torch.distributions.multivariate_normal import _precision_to_scale_tril
from funcgrad.torch.distributions.utils import lazy_property, torch, vec_to_tril_matrix

_log_2 = math.log(2)


def _mvdigamma(x: Any, p: int) -> Any:
    """The multivariate digamma function, ``sum_i digamma(x - i / 2)`` for ``i < p``.

    >>> import funcgrad.torch as torch
    >>> _mvdigamma(torch.tensor([2.0]), 2)
    tensor([0.4593])
    """
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    offsets = torch.arange(p, dtype=x.dtype, device=x.device).div(2)
    return (x.unsqueeze(-1) - offsets.expand((*x.shape, -1))).digamma().sum(-1)


def _clamp_above_eps(x: Any) -> Any:
    return x.clamp(min=finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """The Wishart distribution over ``p x p`` positive definite matrices with ``df`` degrees
    of freedom (``df > p - 1``) and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the lower Cholesky factor every computation
    uses). Samples follow Bartlett's decomposition; as PyTorch 2.13's, ``rsample`` warns
    "Singular sample detected." and redraws (its test flags the valid samples).

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.Wishart(torch.tensor(3.0), covariance_matrix=torch.eye(2))
    >>> d
    Wishart(covariance_matrix: torch.Size([2, 2]), df: 3.0)
    >>> d.log_prob(torch.eye(2)), d.entropy(), d.mean
    (tensor(-3.5310), tensor(5.5310), tensor([[3., 0.],
            [0., 3.]]))
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, Any]:
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, (int, float, bool)):
            batch_shape = torch.Size(param.shape[:-2])
            self.df = torch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = torch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(*batch_shape, -1, -1)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(*batch_shape, -1, -1)
        else:
            self.precision_matrix = param.expand(*batch_shape, -1, -1)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        # Bartlett's decomposition draws the diagonal from Chi2(df - i), i < p.
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df: Any, batch_shape: Any) -> Chi2:
        tril = self._unbroadcasted_scale_tril
        offsets = torch.arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(df.unsqueeze(-1) - offsets.expand(*batch_shape, -1))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        shape = torch.Size(batch_shape)
        cov_shape = shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(shape)
        new._batch_dims = [-(x + 1) for x in range(len(shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self.event_shape
        new._dist_chi2 = new._chi2(new.df, shape)
        ExponentialFamily.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self) -> Any:
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self) -> Any:
        factor = self._unbroadcasted_scale_tril
        return torch.matmul(factor, factor.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self) -> Any:
        tril = self._unbroadcasted_scale_tril
        identity = torch.eye(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return torch.cholesky_solve(identity, tril).expand(
            self._batch_shape + self._event_shape)

    @property
    def mean(self) -> Any:
        return self.df.view(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def mode(self) -> Any:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = torch.where(factor <= 0, math.nan, factor)
        return factor.view(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self) -> Any:
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self.df.view(*self._batch_shape, 1, 1) * (
            v.pow(2) + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Any = ()) -> Any:
        p = self._event_shape[-1]
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        below = torch.randn((*sample_shape, *self._batch_shape, p * (p - 1) // 2),
                            dtype=diag.dtype, device=diag.device)
        noise = diag.diag_embed(dim1=-2, dim2=-1) + vec_to_tril_matrix(below, diag=-1)
        chol = torch.matmul(self._unbroadcasted_scale_tril, noise)
        return torch.matmul(chol, chol.mT)

    def _flags(self, sample: Any, invert: bool = False) -> np.ndarray:
        """torch's per-sample flags: the support check (or its negation), reduced over the
        batch by ``amax``."""
        flags = self.support.check(sample).detach().cpu().numpy()
        flags = ~flags if invert else flags
        if self._batch_shape:
            flags = flags.max(axis=tuple(self._batch_dims))
        return np.asarray(flags, dtype=bool)

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Any:
        """Bartlett's decomposition from ``Chi2`` (funcgrad's gamma sampler) and ``randn``
        draws. PyTorch 2.13's singular-sample correction flags the samples that pass the
        positive-definite check, so it warns and redraws them (up to ``max_try_correction``
        rounds, 10 by default); this one does the same."""
        if max_try_correction is None:
            max_try_correction = 10
        shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(shape)
        flags = self._flags(sample)
        if flags.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            extra = sample.dim() - len(shape)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling((int(flags.sum()),))
                # sample[flags] = sample_new, as a gather and a where (gradients flow).
                flat = flags.reshape(-1)
                index = np.maximum(np.cumsum(flat) - 1, 0)
                gathered = sample_new[torch.tensor(index, dtype=torch.long,
                                                   device=sample.device)]
                mask = torch.tensor(flags, device=sample.device).reshape(
                    *flags.shape, *([1] * extra))
                sample = torch.where(mask, gathered.reshape(sample.shape), sample)
                flat = flat.copy()
                flat[flat] = self._flags(sample_new, invert=True)
                flags = flat.reshape(flags.shape)
                if not flags.any():
                    break
        return sample

    def log_prob(self, value: Any) -> Any:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - torch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - torch.cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self) -> Any:
        nu = self.df
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + torch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
                + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Any, ...]:
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, *natural_params: Any) -> Any:
        x, y = natural_params
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + torch.mvlgamma(y + (p + 1) / 2, p=p))
