"""The ``fft`` primitive: discrete Fourier transforms over the trailing axes (JAX's lax.fft).

``fft_type`` is one of :class:`FftType` (FFT, IFFT: complex to complex; RFFT: real to the
non-negative frequencies of its spectrum; IRFFT: back) and ``fft_lengths`` the sizes of the
transformed trailing axes (of the real signal for RFFT/IRFFT). The impl is NumPy's (or
CuPy's) ``fft`` module; derivatives follow JAX (the transform is linear; its transposes
are FFTs, with the doubling mask for the half spectrum of the real transforms).

>>> import numpy as np
>>> from funcgrad.primitives.fft import fft
>>> fft(np.array([1.0, 0.0, 0.0, 0.0]), "rfft", (4,))
Array([1.+0.j, 1.+0.j, 1.+0.j], dtype=complex128)
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.elementwise import (
    complex_dtype_of,
    conj,
    convert_element_type,
    mul,
    real_dtype_of,
)
from funcgrad.primitives.rules import linear, move_to_front


class FftType(enum.IntEnum):
    """The kinds of transform (JAX's ``lax.FftType``; jaxprs print the number)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft_type_of(value: Any) -> FftType:
    """A :class:`FftType` from itself, its number or its (case-insensitive) name."""
    if isinstance(value, str):
        try:
            return FftType[value.upper()]
        except KeyError:
            pass
    elif isinstance(value, (int, np.integer)) and 0 <= int(value) <= 3:
        return FftType(int(value))
    raise ValueError(f"fft_type must be one of 'fft', 'ifft', 'rfft', 'irfft' (or an FftType), "
                     f"got {value!r}")


def _abstract_eval(x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
                   ) -> ShapedArray:
    fft_type = fft_type_of(fft_type)
    k = len(fft_lengths)
    if not 1 <= k <= 3 or k > x.ndim:
        raise ShapeError(f"fft transforms 1 to 3 trailing axes of its operand, got "
                         f"fft_lengths={fft_lengths} for an operand of rank {x.ndim}")
    if any(n < 1 for n in fft_lengths):
        raise ShapeError(f"fft_lengths must be positive, got {fft_lengths}")
    lead, tail = x.shape[:-k], x.shape[-k:]
    if fft_type == FftType.RFFT:
        if x.dtype.kind != "f":
            raise DTypeError(f"RFFT needs a real floating point operand, got {x.dtype}")
        if tail != fft_lengths:
            raise ShapeError(f"RFFT of trailing axes {tail} with fft_lengths={fft_lengths}: "
                             "they must be equal")
        shape = (*lead, *fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        return ShapedArray(shape, complex_dtype_of(x.dtype), False)
    if x.dtype.kind != "c":
        raise DTypeError(f"{fft_type.name} needs a complex operand, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        want = (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        if tail != want:
            raise ShapeError(f"IRFFT with fft_lengths={fft_lengths} needs trailing axes {want} "
                             f"(the last one n // 2 + 1), got {tail}")
        return ShapedArray((*lead, *fft_lengths), real_dtype_of(x.dtype), False)
    if tail != fft_lengths:
        raise ShapeError(f"{fft_type.name} of trailing axes {tail} with "
                         f"fft_lengths={fft_lengths}: they must be equal")
    # As JAX: the result is strongly typed, whatever the operand's weak type.
    return ShapedArray(x.shape, x.dtype, False) if x.weak_type else x


def _impl(xp: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> Any:
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        out, dt = xp.fft.fftn(x, axes=axes), x.dtype
    elif fft_type == FftType.IFFT:
        out, dt = xp.fft.ifftn(x, axes=axes), x.dtype
    elif fft_type == FftType.RFFT:
        out, dt = xp.fft.rfftn(x, axes=axes), complex_dtype_of(x.dtype)
    else:
        out, dt = xp.fft.irfftn(x, s=fft_lengths, axes=axes), real_dtype_of(x.dtype)
    return out.astype(dt, copy=False)


fft_p = Primitive("fft", abstract_eval=_abstract_eval, impl=_impl)


def fft(x: Any, fft_type: Any, fft_lengths: Sequence[int]) -> Any:
    """The discrete Fourier transform of the trailing ``len(fft_lengths)`` axes of ``x``
    (JAX's ``lax.fft``; ``fft_type`` an :class:`FftType` or its name).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.fft(np.ones(4, np.complex64), "fft", (4,))
    Array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    typ = fft_type_of(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    dt = get_aval(x).dtype
    # As JAX: the operand is made inexact (RFFT) or complex (the others) first.
    if typ == FftType.RFFT:
        if dt.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if not dtypes.is_inexact(dt):
            x = convert_element_type(x, dtypes.default_float())
    elif dt.kind != "c":
        real_dt = dt if dtypes.is_inexact(dt) else dtypes.default_float()
        x = convert_element_type(x, complex_dtype_of(real_dt))
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)


def _half_spectrum_mask(m: int, n: int) -> np.ndarray:
    """2 for the frequencies strictly between 0 and Nyquist of an ``n``-point real
    transform's ``m = n // 2 + 1``, which stand for themselves and their mirror; else 1."""
    mask = np.full(m, 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    return mask


def _rfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    # The transpose of IRFFT (below) is conj(mask / N * RFFT(.)), and conj and a real scale
    # are their own transposes, so RFFT's transpose is IRFFT(conj(ct) * N / mask): one real
    # transform of N points (JAX pads ct and runs a complex FFT, twice the work).
    aval = get_aval(ct)
    weights = (math.prod(fft_lengths) / _half_spectrum_mask(aval.shape[-1], fft_lengths[-1]))
    scaled = mul(conj(ct), _along_last(weights.astype(aval.dtype), aval.shape))
    return fft_p.bind(scaled, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)


def _irfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    # IRFFT reads each frequency strictly between 0 and Nyquist twice (it and its mirror),
    # so the transpose is RFFT with those doubled, scaled by 1/N, conjugated as JAX does.
    x = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    aval = get_aval(x)
    mask = _half_spectrum_mask(aval.shape[-1], fft_lengths[-1])
    scaled = (mask / math.prod(fft_lengths)).astype(aval.dtype)
    return conj(mul(x, _along_last(scaled, aval.shape)))


def _along_last(v: np.ndarray, shape: tuple[int, ...]) -> Any:
    """The vector ``v`` broadcast along the last axis of ``shape``."""
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    return broadcast_in_dim(v, shape, (len(shape) - 1,))


def _transpose(ct: Any, primals: Sequence[Any], ans: Any, *, fft_type: FftType,
               fft_lengths: tuple[int, ...]) -> list[Any]:
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


linear(fft_p, _transpose)


def _batch(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
    # The transform reads the trailing axes only: a leading batch axis rides along.
    return fft_p.bind(move_to_front(args[0], dims[0]), **params), 0


fft_p.batch = _batch
fft_p.describe(lax="fft", fusion=None, cuda=None, ufunc=None, torch_method=None,
               torch_node="FftC2C", lax_fn=fft)

__all__ = ["FftType", "fft", "fft_p", "fft_type_of"]
