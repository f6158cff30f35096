"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``: ``orthogonal``,
``weight_norm`` and ``spectral_norm``, each registered with
``torch.nn.utils.parametrize.register_parametrization``.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> from funcgrad.torch.nn.utils import parametrizations
>>> lin = parametrizations.weight_norm(nn.Linear(3, 2))
>>> lin
ParametrizedLinear(
  in_features=3, out_features=2, bias=True
  (parametrizations): ModuleDict(
    (weight): ParametrizationList(
      (0): _WeightNorm()
    )
  )
)
>>> [(k, tuple(v.shape)) for k, v in lin.state_dict().items()]
[('bias', (2,)), ('parametrizations.weight.original0', (2, 1)), \
('parametrizations.weight.original1', (2, 3))]
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

from funcgrad.torch import linalg
from funcgrad.torch._creation import eye, randn, zeros_like
from funcgrad.torch._functions import allclose, cat
from funcgrad.torch._grad_mode import no_grad
from funcgrad.torch._householder import geqrf
from funcgrad.torch._tensor import Tensor
from funcgrad.torch._type_info import finfo
from funcgrad.torch.nn.module import Module
from funcgrad.torch.nn.normalization import normalize
from funcgrad.torch.nn.utils import parametrize
from funcgrad.torch.nn.utils.weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _is_orthogonal(q: Any) -> bool:
    n, k = q.size(-2), q.size(-1)
    identity = eye(k, dtype=q.dtype, device=q.device)
    # A tolerance that grows with n, as round-off in Q^H Q does.
    eps = 10.0 * n * finfo(q.dtype).eps
    return bool(allclose(q.mH @ q, identity, atol=eps))


def _make_orthogonal(a: Any) -> Any:
    """The Q of A's QR decomposition with R's diagonal made positive (unique for a
    full-rank A)."""
    x: Any
    x, tau = geqrf(a)
    q = linalg.householder_product(x, tau)
    q *= x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Any

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Any) -> Any:  # noqa: N803 - PyTorch's name
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        # Here n >= k: X is tall (or square).
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                # Embed X into a square skew-symmetric matrix.
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)],
                              dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                Id: Any = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id.add(A, alpha=-0.5), Id.add(A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            # The diagonal of X carries the sign of each reflector's column.
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)

        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @no_grad()
    def right_inverse(self, Q: Any) -> Any:  # noqa: N803 - PyTorch's name
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n

        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            # The Householder map applied to geqrf's reflectors gives Q back, once the
            # diagonal holds the sign of each column (a zero tau flips that sign).
            A: Any
            A, tau = geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            # Complete Q to an orthogonal square matrix with random columns.
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -Id is what the maps send to the first k columns of the identity, so
        # forward(-Id) = base[..., :k]: the (orthogonalised) Q.
        neg_Id: Any = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Make ``module.<name>`` an orthogonal (or unitary) matrix, or batch of them, through
    ``"matrix_exp"``, ``"cayley"`` or ``"householder"`` (default: ``matrix_exp`` for a
    square or complex matrix, ``householder`` otherwise). A tall or wide matrix gets
    orthonormal columns or rows.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrizations
    >>> lin = parametrizations.orthogonal(nn.Linear(4, 3))
    >>> bool(allclose(lin.weight @ lin.weight.T, eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.size(-2) == weight.size(-1)
                          or weight.is_complex() else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        if dim is None:
            dim = -1
        self.dim = dim

    def forward(self, weight_g: Any, weight_v: Any) -> Any:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        weight_g = _norm_except_dim(weight, 2, self.dim)
        weight_v = weight
        return weight_g, weight_v


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into a magnitude ``original0`` (the norm over every dim but
    ``dim``; ``dim=None``: the whole norm) and a direction ``original1``, and compute it as
    ``original1 * original0 / ||original1||``.

    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrizations
    >>> lin = parametrizations.weight_norm(nn.Linear(4, 3))
    >>> lin.parametrizations.weight.original0.shape
    torch.Size([3, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    _u: Any
    _v: Any

    def __init__(self, weight: Any, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            # A vector is only normalized; a matrix needs the power method's vectors.
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            # Start from a good estimate of the top singular vectors.
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Any) -> Any:
        if weight.ndim <= 1:
            raise AssertionError("Expected weight to have more than 1 dimension, got "
                                 f"{weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat: Any, n_power_iterations: int) -> None:
        # u and v are updated in place (PyTorch's ``out=``), so the buffers a state dict or
        # an earlier ``module._u`` refers to see the new values.
        for _ in range(n_power_iterations):
            self._u = normalize(weight_mat.mv(self._v), dim=0, eps=self.eps,
                                out=self._u)
            self._v = normalize(weight_mat.H.mv(self._u), dim=0, eps=self.eps,
                                out=self._v)

    def forward(self, weight: Any) -> Any:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # Clones, so a later in-place power step does not change what backward saved.
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.vdot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated with
    ``n_power_iterations`` steps of the power method per training-mode access (vectors in
    the buffers ``_u`` and ``_v``; ``dim`` defaults to 1 for ConvTranspose, else 0).

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn as nn
    >>> from funcgrad.torch.nn.utils import parametrizations
    >>> _ = torch.manual_seed(0)  # (some draws need more than 20 iterations for 3 digits)
    >>> lin = parametrizations.spectral_norm(nn.Linear(4, 3))
    >>> sorted(name for name, _ in lin.named_buffers())
    ['parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    >>> for _ in range(20):
    ...     _ = lin.weight
    >>> round(float(linalg.matrix_norm(lin.weight.detach(), ord=2)), 3)
    1.0
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from funcgrad.torch.nn.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
