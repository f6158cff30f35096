"""Channel-wise and SELU-preserving dropout, as PyTorch's: ``Dropout1d/2d/3d``,
``AlphaDropout``, ``FeatureAlphaDropout`` and their functional forms (re-exported by
``nn.functional``; elementwise ``Dropout``/``F.dropout`` live in ``modules``/``functional``).

Masks are drawn from funcgrad's global generator (``torch.manual_seed``): the same
distribution as PyTorch's, not the same bits.

>>> import funcgrad.torch as torch
>>> import funcgrad.torch.nn as nn
>>> _ = torch.manual_seed(0)
>>> out = nn.Dropout2d(p=0.5)(torch.ones(2, 8, 3, 3))
>>> sorted(set(out.sum(dim=(2, 3)).flatten().tolist())) # whole channels kept or dropped
[0.0, 18.0]
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn._apply import data, keep_mask, on_device_of, op, shape
from funcgrad.torch.nn.module import Module

__all__ = [
    "AlphaDropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
]

# SELU's scale * alpha: the value alpha dropout sets dropped units to (before the affine fix).
_SELU_NEG = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_noise(input: Any, mask_shape: tuple[int, ...], p: float,  # noqa: A002
                 alpha: bool, inplace: bool) -> Any:
    """``x * mask / (1 - p)`` (or alpha dropout's affine form) with a Bernoulli mask of
    ``mask_shape`` broadcast over the input: PyTorch's ``_dropout_impl``."""
    dt = data(input).dtype if isinstance(input, Tensor) else np.float32
    shift_d: Any = None
    if p == 1.0:
        scale_d = shift_d = on_device_of(np.zeros(mask_shape, dt), input)
    else:
        # Drawn where the input lives (a GPU's generator for a CUDA tensor).
        keep = keep_mask(mask_shape, p, input)
        if alpha:
            a = 1.0 / np.sqrt((_SELU_NEG * _SELU_NEG * p + 1) * (1 - p))
            scale_d = (keep * a).astype(dt)
            shift_d = ((keep - 1.0) * (_SELU_NEG * a) + _SELU_NEG * a * p).astype(dt)
        else:
            scale_d = (keep * (1.0 / (1.0 - p))).astype(dt)
    if inplace:
        if not isinstance(input, Tensor):
            raise TypeError("dropout(inplace=True) needs a Tensor")
        input.mul_(Tensor(scale_d))
        return input.add_(Tensor(shift_d)) if alpha else input
    if alpha:
        return op("Add", lambda x: x * scale_d + shift_d, input)
    return op("Mul", lambda x: x * scale_d, input)


def _feature(input: Any, p: float, training: bool, inplace: bool,  # noqa: A002
             alpha: bool) -> Any:
    _check_p(p)
    shp = shape(input)
    if not training or p == 0.0 or 0 in shp:
        return input
    if len(shp) < 2:
        raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input, "
                           f"but got {len(shp)}")
    return _apply_noise(input, shp[:2] + (1,) * (len(shp) - 2), p, alpha, inplace)


def _unbatched(input: Any, p: float, training: bool, inplace: bool,  # noqa: A002
               batched: bool) -> Any:
    if batched:
        return _feature(input, p, training, inplace, False)
    if not training or p == 0.0:
        return input
    shp = shape(input)
    return _apply_noise(input, shp[:1] + (1,) * (len(shp) - 1), p, False, inplace)


def dropout1d(input: Any, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Any:
    """Zero whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> F.dropout1d(torch.ones(2, 3), training=False)
    tensor([[1., 1., 1.],
            [1., 1., 1.]])
    """
    _check_p(p)
    ndim = len(shape(input))
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _unbatched(input, p, training, inplace, ndim == 3)


def dropout2d(input: Any, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Any:
    """Zero whole channels of an ``(N, C, H, W)`` input with probability ``p`` (a 3-D input
    is read as ``(N, C, L)``, with PyTorch's warning)."""
    _check_p(p)
    ndim = len(shape(input))
    if ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {ndim}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature(input, p, training, inplace, False)


def dropout3d(input: Any, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Any:
    """Zero whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    _check_p(p)
    ndim = len(shape(input))
    if ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {ndim}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            "and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _unbatched(input, p, training, inplace, ndim == 5)


def alpha_dropout(input: Any, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Any:
    """Dropout that keeps a SELU network's zero mean and unit variance: dropped units are
    set to SELU's negative saturation, then an affine map restores the moments.

    >>> import funcgrad.torch as torch
    >>> import funcgrad.torch.nn.functional as F
    >>> _ = torch.manual_seed(0)
    >>> y = F.alpha_dropout(torch.randn(20000), 0.2, training=True)
    >>> abs(round(y.mean().item(), 1)), round(y.std().item(), 1)
    (0.0, 1.0)
    """
    _check_p(p)
    shp = shape(input)
    if not training or p == 0.0 or 0 in shp:
        return input
    return _apply_noise(input, shp, p, True, inplace)


def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Any:
    """Alpha dropout of whole channels (axis 1)."""
    return _feature(input, p, training, inplace, True)


# ------------------------------------------------------------------------ modules


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Channel-wise dropout of ``(N, C, L)`` or ``(C, L)`` inputs."""

    def forward(self, input: Any) -> Any:  # noqa: A002
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Channel-wise dropout of ``(N, C, H, W)`` inputs.

    >>> import funcgrad.torch.nn as nn
    >>> nn.Dropout2d(0.2)
    Dropout2d(p=0.2, inplace=False)
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Channel-wise dropout of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    def forward(self, input: Any) -> Any:  # noqa: A002
        return dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Alpha dropout (for SELU networks), elementwise."""

    def forward(self, input: Any) -> Any:  # noqa: A002
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input: Any) -> Any:  # noqa: A002
        return feature_alpha_dropout(input, self.p, self.training)
