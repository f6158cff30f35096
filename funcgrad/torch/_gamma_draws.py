"""Gamma and Dirichlet draws as PyTorch's CPU kernels make them (``torch._standard_gamma``,
``torch._sample_dirichlet``: ATen's samplers replayed on PyTorch's stream), differentiable
in the concentration by implicit reparameterization. Shared by the functions and by the
distributions built on them (Gamma, Beta, Dirichlet, Chi2, StudentT...).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from funcgrad.torch import _grad_mode
from funcgrad.torch._creation import tensor
from funcgrad.torch._dtypes import float64
from funcgrad.torch._random import rng


def _stream(generator: Any = None) -> Any:
    """The stream to draw from: ``generator``'s, else the default one."""
    return generator._rng if generator is not None else rng()


def standard_gamma_draws(concentration: Any, generator: Any = None) -> np.ndarray:
    """Gamma(concentration, 1) draws as ``torch._standard_gamma`` makes them (PyTorch's
    CPU kernel on PyTorch's stream, clamped to the dtype's smallest normal), as NumPy of
    ``concentration``'s dtype.

    >>> import funcgrad.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> standard_gamma_draws(torch.tensor([0.5, 2.0], dtype=torch.float64)).tolist()
    [0.0007893582063475732, 0.6315406048880828]
    """
    a = np.asarray(concentration.detach().cpu().numpy())
    return np.asarray(_stream(generator).torch_standard_gamma(a, a.dtype))


def dirichlet_draws(concentration: Any, generator: Any = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``torch._sample_dirichlet``'s draws (of ``concentration``'s dtype) and the float64
    gamma draws they normalise."""
    a = np.asarray(concentration.detach().cpu().numpy())
    y, g = _stream(generator).torch_dirichlet(a, a.dtype)
    return np.asarray(y), np.asarray(g)


def gamma_surrogate(concentration: Any, draws: np.ndarray) -> Any:
    """A float64 tensor that is zero but carries the derivative of the log of the gamma
    ``draws`` in ``concentration`` (``None`` when none is recorded): the implicit one,
    ``d log x / da = -(dP/da) / (x p(x))`` for the regularized incomplete gamma function
    ``P(a, x)`` (``igamma``), as the surrogate ``(P.detach() - P) / (x p(x))``.

    >>> import funcgrad.torch as torch
    >>> c = torch.tensor([2.0, 3.0], requires_grad=True)
    >>> s = gamma_surrogate(c, np.array([1.5, 2.5]))
    >>> s.shape, s.detach().abs().sum().item()
    (torch.Size([2]), 0.0)
    """
    if not (concentration.requires_grad and _grad_mode.is_grad_enabled()):
        return None
    a = concentration.detach().cpu().numpy().astype(np.float64)
    # Logs below float64's smallest normal would make igamma's derivative 0/0.
    log_x = np.maximum(np.log(np.asarray(draws, np.float64)),
                       math.log(np.finfo(np.float64).tiny))
    x = np.exp(log_x)
    log_xpdf = a * log_x - x - special.gammaln(a)
    xpdf = np.maximum(np.exp(log_xpdf), np.finfo(np.float64).tiny)
    p = concentration.to(float64).igamma(tensor(x, dtype=float64,
                                                             device=concentration.device))
    return (p.detach() - p) / tensor(xpdf, dtype=float64,
                                           device=concentration.device)


def standard_gamma(concentration: Any, generator: Any = None) -> Any:
    """Gamma(concentration, 1) draws of ``concentration``'s shape and dtype: PyTorch's
    (``torch._standard_gamma``'s CPU kernel on its stream, clamped to the dtype's smallest
    normal), differentiable in ``concentration`` (implicit reparameterization).

    >>> import funcgrad.torch as torch
    >>> x = standard_gamma(torch.tensor([1.0, 5.0], requires_grad=True))
    >>> x.shape, bool((x > 0).all()), x.requires_grad
    (torch.Size([2]), True, True)
    """
    x = standard_gamma_draws(concentration, generator)
    value = tensor(x, dtype=concentration.dtype, device=concentration.device)
    surrogate = gamma_surrogate(concentration, x)
    if surrogate is None:
        return value
    return value * (1 + surrogate).to(concentration.dtype)


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
    value = tensor(y, dtype=dtype, device=device)
    surrogate = gamma_surrogate(concentration, gammas)
    if surrogate is None:
        return value
    y64 = tensor(y, dtype=float64, device=device)
    tangent = 1 + surrogate - (y64 * surrogate).sum(-1, keepdim=True)
    return value * tangent.to(dtype)
