"""``torch.signal.windows``: SciPy-style window functions, computed as PyTorch computes
them (a ``linspace`` of the window's positions, then the window's formula).

>>> from funcgrad.torch.signal import windows
>>> windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from funcgrad.torch import _creation
from funcgrad.torch import _dtypes as D
from funcgrad.torch._tensor_storage import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checked(name: str, M: int, dtype: Any, layout: Any) -> Any:  # noqa: N803
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    dtype = D.get_default_dtype() if dtype is None else dtype
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype: Any, device: Any, requires_grad: bool) -> Any:  # noqa: N803
    """The window of length 0 or 1 (None for longer ones)."""
    if M == 0:
        return _creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return _creation.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _positions(start: Any, end: Any, M: int, dtype: Any, device: Any,  # noqa: N803
               requires_grad: bool) -> Any:
    return _creation.linspace(start, end, M, dtype=dtype, device=device,
                              requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0,  # noqa: N803
                sym: bool = True, dtype: Any = None, layout: Any = None, device: Any = None,
                requires_grad: bool = False) -> Any:
    """``exp(-|n - center| / tau)``."""
    dtype = _checked("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / tau
    k = _positions(-center * scale, (-center + (M - 1)) * scale, M, dtype, device,
                   requires_grad)
    return (-k.abs()).exp()


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
           device: Any = None, requires_grad: bool = False) -> Any:
    """A half period of a sine."""
    dtype = _checked("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _positions(0.5 * step, (0.5 + (M - 1)) * step, M, dtype, device,
                      requires_grad).sin()


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,  # noqa: N803
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
    """``exp(-n^2 / (2 std^2))`` around the window's center."""
    dtype = _checked("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _positions(start * scale, (start + (M - 1)) * scale, M, dtype, device, requires_grad)
    return (-(k ** 2)).exp()


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,  # noqa: N803
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
    """``I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta)``."""
    dtype = _checked("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    b: Any = _creation.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / (M if not sym else M - 1)
    end = b.minimum(-b + (M - 1) * step)
    k = _positions(-b, end, M, dtype, device, requires_grad)
    return (b * b - k.pow(2)).sqrt().i0() / b.i0()


def general_cosine(M: int, *, a: Iterable[float], sym: bool = True,  # noqa: N803
                   dtype: Any = None, layout: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Any:
    """``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checked("general_cosine", M, dtype, layout)
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _positions(0, (M - 1) * step, M, dtype, device, requires_grad)
    coef: Any = _creation.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                            device=device, requires_grad=requires_grad)
    i: Any = _creation.arange(coef.shape[0], dtype=coef.dtype, device=coef.device,
                         requires_grad=coef.requires_grad)
    return (coef.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True,  # noqa: N803
                    dtype: Any = None, layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Any:
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
            device: Any = None, requires_grad: bool = False) -> Any:
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
         device: Any = None, requires_grad: bool = False) -> Any:
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
             device: Any = None, requires_grad: bool = False) -> Any:
    """The Blackman window (cosine terms 0.42, 0.5, 0.08)."""
    dtype = _checked("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
            device: Any = None, requires_grad: bool = False) -> Any:
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,  # noqa: N803
             device: Any = None, requires_grad: bool = False) -> Any:
    """The triangular window reaching zero at both ends."""
    dtype = _checked("bartlett", M, dtype, layout)
    small = _trivial(M, dtype, device, requires_grad)
    if small is not None:
        return small
    step = 2 / (M if not sym else M - 1)
    return 1 - _positions(-1, -1 + (M - 1) * step, M, dtype, device, requires_grad).abs()
