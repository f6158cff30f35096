"""``LKJCholesky(dim, concentration=1.0)``: Cholesky factors of LKJ correlation matrices."""

from __future__ import annotations

import math
from typing import Any

from funcgrad.torch._type_info import finfo
from funcgrad.torch.distributions import constraints
from funcgrad.torch.distributions.beta import Beta
from funcgrad.torch.distributions.distribution import Distribution
from funcgrad.torch.distributions.utils import broadcast_all, torch


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim x dim`` correlation
    matrices, with density proportional to ``det(L L^T) ** (concentration - 1)`` on the
    correlation matrix (``concentration == 1`` is uniform). Samples follow the onion method
    (Lewandowski, Kurowicka and Joe, 2009, section 3) as PyTorch's: ``Beta`` draws
    (funcgrad's gamma sampler) and ``randn`` directions.

    >>> import funcgrad.torch as torch
    >>> d = torch.distributions.LKJCholesky(3, torch.tensor([0.5, 2.0]))
    >>> d, d.batch_shape, d.event_shape
    (LKJCholesky(concentration: torch.Size([2])), torch.Size([2]), torch.Size([3, 3]))
    >>> d.log_prob(torch.eye(3))
    tensor([-2.5310, -0.6155])
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Any = 1.0, validate_args: bool | None = None
                 ) -> None:
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # The onion method's beta draws, vectorised over the rows (section 3.2).
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype,
                              device=self.concentration.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LKJCholesky:
        new = self._get_checked_instance(LKJCholesky, _instance)
        shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(shape)
        new._beta = self._beta.expand((*shape, self.dim))
        Distribution.__init__(new, shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = ()) -> Any:
        # The onion method, vectorised over rows and batches; only ``w`` (the factor's rows)
        # is generated, the first row being ``e_1``.
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                               device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        first_row = torch.arange(self.dim, device=y.device).unsqueeze(-1) == 0
        u_hypersphere = torch.where(first_row, 0.0, u_hypersphere)
        w = y.sqrt() * u_hypersphere
        # The diagonal, clamped for numerical stability.
        eps = finfo(w.dtype).tiny
        diag_elems = (1 - (w ** 2).sum(dim=-1)).clamp(min=eps).sqrt()
        return w + torch.diag_embed(diag_elems)

    def log_prob(self, value: Any) -> Any:
        # The correlation matrix's density is proportional to prod(L_ii ** (2 (eta - 1))),
        # and the Jacobian from Cholesky factor to correlation matrix is prod(L_ii ** (D - i)):
        # the factor's is prod(L_ii ** (2 eta - 2 + D - i)) (see Stan's functions reference).
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        # The normalization constant (page 1999 of the paper); its pi term is
        # D (D - 1) / 4 log(pi) where mvlgamma has (D - 1) (D - 2) / 4 log(pi).
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = torch.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
