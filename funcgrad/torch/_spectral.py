"""``torch.stft`` and ``torch.istft``: short-time Fourier transforms built from Tensor
operations (frames gathered by index, windowed, ``fft.rfft``/``fft.fft``; the inverse by
overlap-add divided by the summed squared window), so both are differentiable and run on
either device.

>>> import funcgrad.torch as torch
>>> x = torch.arange(8.0)
>>> s = torch.stft(x, 4, window=torch.hann_window(4), return_complex=True)
>>> s.shape, s.dtype
(torch.Size([3, 9]), torch.complex64)
>>> torch.istft(s, 4, window=torch.hann_window(4), length=8)
tensor([0., 1., 2., 3., 4., 5., 6., 7.])
"""

from __future__ import annotations

import warnings
from typing import Any

from funcgrad.torch import _creation, _functions, _tensor_math
from funcgrad.torch import fft as _fft
from funcgrad.torch.nn import functional as _F

# Typed loosely: Tensor's operators and methods are attached at run time.
arange: Any = _creation.arange
ones: Any = _creation.ones
zeros: Any = _creation.zeros
cat: Any = _functions.cat
view_as_real: Any = _tensor_math.FUNCTIONS["view_as_real"]
fft: Any = _fft
F: Any = _F


def _where(shape: tuple[int, ...], dtype: Any, n_fft: int, hop: int, win: int, window: Any,
           normalized: bool, onesided: Any, return_complex: Any) -> str:
    """PyTorch's description of an stft call (the signal's shape after centering), the
    prefix of its argument errors."""
    kind = {"float32": "FloatTensor", "float64": "DoubleTensor",
            "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}.get(
                dtype.name, "Tensor")
    w = "None" if window is None else f"torch.{kind}{{{list(window.shape)}}}"
    return (f"stft(torch.{kind}{list(shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, normalized={int(bool(normalized))}, "
            f"onesided={'None' if onesided is None else int(bool(onesided))}, "
            f"return_complex={'None' if return_complex is None else int(return_complex)}, "
            "align_to_window=None) : ")


def _padded_window(window: Any, n_fft: int, win: int, like: Any) -> Any:

    real = like.real.dtype if like.dtype.is_complex else like.dtype
    w = ones(win, dtype=real, device=like.device) if window is None else window
    if win == n_fft:
        return w
    left = (n_fft - win) // 2
    parts = [zeros(left, dtype=w.dtype, device=w.device), w,
             zeros(n_fft - win - left, dtype=w.dtype, device=w.device)]

    return cat(parts)


def stft(input: Any, n_fft: int, hop_length: int | None = None,  # noqa: A002
         win_length: int | None = None, window: Any = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Any:
    """The short-time Fourier transform of a 1-D signal or a batch of them: ``(freq,
    frames)`` per signal, complex (``return_complex=True``) or as real pairs."""

    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if return_complex is None and not input.dtype.is_complex and not (
            window is not None and window.dtype.is_complex):
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which "
                      "is known to cause spectral leakage. Other windows such as "
                      "torch.hann_window or torch.hamming_window are recommended to reduce "
                      "spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    x = input
    shape = (*x.shape[:-1], x.shape[-1] + (2 * (n_fft // 2) if center else 0))
    where = _where(shape, x.dtype, n_fft, hop, win, window, normalized, onesided,
                   return_complex)
    if x.dim() not in (1, 2):
        raise RuntimeError(where + "expected a 1D or 2D tensor")
    if center:
        x = F.pad(x.view(-1, 1, x.shape[-1]), (n_fft // 2, n_fft // 2),
                  mode=pad_mode).view(*input.shape[:-1], -1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(where + f"expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where + f"expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(where + f"expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(where + f"expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size "
                           f"{list(window.shape)}")
    w = _padded_window(window, n_fft, win, x)
    frames = 1 + (length - n_fft) // hop
    idx = arange(frames, device=x.device)[:, None] * hop + arange(n_fft, device=x.device)
    seg = x[..., idx] * w  # (..., frames, n_fft)
    complex_in = x.dtype.is_complex or w.dtype.is_complex
    sided = (not complex_in) if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = fft.rfft(seg, dim=-1, norm=norm) if sided else fft.fft(seg, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    if return_complex or (return_complex is None and complex_in):
        return spec
    return view_as_real(spec)


def istft(input: Any, n_fft: int, hop_length: int | None = None,  # noqa: A002
          win_length: int | None = None, window: Any = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Any:
    """The inverse of :func:`stft` (complex input ``(freq, frames)`` per signal):
    overlap-add of the inverse transforms, divided by the summed squared window."""

    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    sided = (input.shape[-2] != n_fft) if onesided is None else onesided
    spec = input.transpose(-1, -2)  # (..., frames, freq)
    norm = "ortho" if normalized else "backward"
    seg = fft.irfft(spec, n=n_fft, dim=-1, norm=norm) if sided and not return_complex else \
        fft.ifft(spec, n=n_fft, dim=-1, norm=norm)
    if not return_complex and seg.dtype.is_complex:
        seg = seg.real
    w = _padded_window(window, n_fft, win, seg.real if seg.dtype.is_complex else seg)
    frames = spec.shape[-2]
    total = n_fft + hop * (frames - 1)
    idx = (arange(frames, device=seg.device)[:, None] * hop
           + arange(n_fft, device=seg.device)).reshape(-1)
    batch = tuple(seg.shape[:-2])
    flat = (seg * w).reshape(*batch, frames * n_fft)
    y = zeros(*batch, total, dtype=flat.dtype, device=flat.device).index_add(-1, idx, flat)
    env = zeros(total, dtype=w.dtype, device=w.device).index_add(
        0, idx, (w * w).repeat(frames))
    start = n_fft // 2 if center else 0
    end = total if length is None else min(total, start + length)
    if length is None and center:
        end = total - n_fft // 2
    y, env = y[..., start:end], env[start:end]
    if bool((env.abs() < 1e-11).any()):
        raise RuntimeError("istft(...) window overlap add min: "
                           f"{float(env.abs().min()):g}")
    y = y / env
    if length is not None and y.shape[-1] < length:

        y = F.pad(y, (0, length - y.shape[-1]))
    return y

