"""``jax.numpy.fft``: discrete Fourier transforms over Arrays, differentiable and batchable.

Each transform is the ``fft`` primitive (``funcgrad.lax.fft``) on the trailing axes, with
the named axes moved there and back, the input cropped or zero-padded to ``n``/``s``, and
the ``norm`` scaling ("backward" by default, "ortho" or "forward") as NumPy and JAX.

>>> import funcgrad.numpy as fnp
>>> fnp.fft.fft(fnp.array([1.0, 0.0, 0.0, 0.0])).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.core import get_aval
from funcgrad.ir import ShapedArray
from funcgrad.numpy._core import canonical_axis, cast, check_arraylike, promote_inexact
from funcgrad.numpy._shape import _arr, moveaxis, roll
from funcgrad.numpy._ufuncs import conjugate, multiply
from funcgrad.primitives import structural as S
from funcgrad.primitives.elementwise import complex_dtype_of
from funcgrad.primitives.fft import FftType
from funcgrad.primitives.fft import fft as _lax_fft

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]


def _norm_scale(s: Sequence[int], func_name: str, norm: str | None) -> float | None:
    if norm is None or norm == "backward":
        return None
    n = float(math.prod(s))
    if norm == "ortho":
        return math.sqrt(n) if func_name.startswith("i") else 1 / math.sqrt(n)
    if norm == "forward":
        return n if func_name.startswith("i") else 1 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _prepare(func_name: str, fft_type: FftType, a: Any) -> Any:
    (a,) = promote_inexact(_arr(a))
    dt = get_aval(a).dtype
    if fft_type == FftType.RFFT:
        if dt.kind == "c":
            raise ValueError(f"jax.numpy.fft.{func_name} does not support complex input; "
                             "use fft (or take the real part first)")
        return a
    return cast(a, complex_dtype_of(dt))


def _core_nd(a: Any, fft_type: FftType, s: Sequence[int]) -> Any:
    """lax.fft over the last ``len(s)`` axes, in steps of at most 3 axes (as JAX)."""
    if len(s) <= 3:
        return _lax_fft(a, fft_type, tuple(s))
    nd = get_aval(a).ndim
    n = 2 if len(s) == 4 else 3
    src = tuple(range(nd - len(s), nd - n))
    dst = tuple(range(nd - len(s) + n, nd))
    if fft_type in (FftType.RFFT, FftType.FFT):
        a = _lax_fft(a, fft_type, tuple(s)[-n:])
        a = moveaxis(a, src, dst)
        a = _core_nd(a, FftType.FFT, s[:-n])
        return moveaxis(a, dst, src)
    a = moveaxis(a, src, dst)
    a = _core_nd(a, FftType.IFFT, s[:-n])
    a = moveaxis(a, dst, src)
    return _lax_fft(a, fft_type, tuple(s)[-n:])


def _core(func_name: str, fft_type: FftType, a: Any, s: Sequence[int] | None,
          axes: Sequence[int] | None, norm: str | None) -> Any:
    a = _prepare(func_name, fft_type, a)
    nd = get_aval(a).ndim
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError(f"jax.numpy.fft.{func_name}: the lengths s={s} must be positive")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(f"jax.numpy.fft.{func_name}: s={tuple(s)} and axes={tuple(axes)} "
                         "have different lengths")
    orig_axes = None if axes is None else tuple(canonical_axis(ax, nd) for ax in axes)
    if orig_axes is None:
        ax_list = tuple(range(nd)) if s is None else tuple(range(nd - len(s), nd))
    else:
        ax_list = orig_axes
    if len(ax_list) != len(set(ax_list)):
        raise ValueError(f"jax.numpy.fft.{func_name} does not support repeated axes. "
                         f"Got axes {tuple(ax_list)}.")
    if orig_axes is not None:
        ax_list = tuple(range(nd - len(orig_axes), nd))
        a = moveaxis(a, orig_axes, ax_list)
    shape = get_aval(a).shape
    if s is not None:
        in_s = list(shape)
        for ax, n in zip(ax_list, s):
            in_s[ax] = n
        if fft_type == FftType.IRFFT and in_s:
            in_s[-1] = in_s[-1] // 2 + 1
        # Crop to the requested lengths, then zero-pad up to them.
        crop = [min(n, m) for n, m in zip(in_s, shape)]
        if tuple(crop) != shape:
            a = S.slice_(a, (0,) * nd, crop, (1,) * nd)
        if crop != in_s:
            zero = np.zeros((), get_aval(a).dtype)
            a = S.pad(a, zero, [(0, n - m, 0) for n, m in zip(in_s, crop)])
        lengths = list(s)
    elif fft_type == FftType.IRFFT:
        lengths = [shape[ax] for ax in ax_list[:-1]]
        if ax_list:
            lengths.append(max(0, 2 * (shape[ax_list[-1]] - 1)))
    else:
        lengths = [shape[ax] for ax in ax_list]
    if any(n == 0 for n in lengths):
        # An empty axis transforms to an empty result, as in JAX.
        out = _empty_transform(a, fft_type, lengths)
    else:
        out = _core_nd(a, fft_type, lengths)
    scale = _norm_scale(lengths, func_name, norm)
    if scale is not None:
        out = multiply(out, scale)
    if orig_axes is not None:
        out = moveaxis(out, ax_list, orig_axes)
    return out


def _empty_transform(a: Any, fft_type: FftType, lengths: Sequence[int]) -> Any:
    aval = get_aval(a)
    out = list(lengths)
    if fft_type == FftType.RFFT and out:
        out[-1] = out[-1] // 2 + 1
    shape = (*aval.shape[:aval.ndim - len(out)], *out)
    dt = np.dtype(aval.dtype)
    if fft_type == FftType.IRFFT:
        dt = np.empty(0, dt).real.dtype
    elif dt.kind != "c":
        dt = complex_dtype_of(dt)
    return wrap(np.zeros(shape, dt), ShapedArray(shape, dt))


def _one_axis(func_name: str, axis: Any) -> int:
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jax.numpy.fft.{func_name} does not support multiple axes. Please "
                         f"use jax.numpy.fft.{func_name}n. Got axis = {axis!r}.")
    return int(operator.index(axis))


def _core_1d(func_name: str, fft_type: FftType, a: Any, n: int | None, axis: Any,
             norm: str | None) -> Any:
    return _core(func_name, fft_type, a, None if n is None else [n],
                 [_one_axis(func_name, axis)], norm)


def _core_2d(func_name: str, fft_type: FftType, a: Any, s: Sequence[int] | None,
             axes: Sequence[int], norm: str | None) -> Any:
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = "
                         f"{axes!r}.")
    return _core(func_name, fft_type, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.fft(fnp.ones(2)).tolist()
    [(2+0j), 0j]
    """
    check_arraylike("jax.numpy.fft.fft", a)
    return _core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`fft`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.ifft(fnp.array([2.0, 0.0])).tolist()
    [(1+0j), (1+0j)]
    """
    check_arraylike("jax.numpy.fft.ifft", a)
    return _core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a real signal: its ``n // 2 + 1`` non-negative frequencies.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.rfft(fnp.ones(4)).tolist()
    [(4+0j), 0j, 0j]
    """
    check_arraylike("jax.numpy.fft.rfft", a)
    return _core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`rfft`: a real signal of length ``n`` (``2 * (m - 1)`` by
    default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.irfft(fnp.array([4.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    check_arraylike("jax.numpy.fft.irfft", a)
    return _core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a signal with Hermitian symmetry (given by its first half): real.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.hfft(fnp.array([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    check_arraylike("conjugate", a)  # the name JAX's message gives
    conj_a = conjugate(_prepare("hfft", FftType.IRFFT, a))
    ax = _one_axis("hfft", axis)
    nn = (get_aval(conj_a).shape[ax] - 1) * 2 if n is None else n
    return multiply(_core_1d("hfft", FftType.IRFFT, conj_a, n, ax, norm), float(nn))


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of :func:`hfft`: the first half of a Hermitian spectrum.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.ihfft(fnp.ones(4)).tolist()
    [(1+0j), 0j, 0j]
    """
    arr = _prepare("ihfft", FftType.RFFT, a)
    ax = _one_axis("ihfft", axis)
    nn = get_aval(arr).shape[ax] if n is None else n
    out = _core_1d("ihfft", FftType.RFFT, arr, n, ax, norm)
    return multiply(conjugate(out), 1 / nn)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The N-dimensional transform over ``axes`` (all by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.fftn(fnp.ones((2, 2))).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    check_arraylike("jax.numpy.fft.fftn", a)
    return _core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The inverse of :func:`fftn`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.ifftn(fnp.array([[4.0, 0.0], [0.0, 0.0]])).real.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    check_arraylike("jax.numpy.fft.ifftn", a)
    return _core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The N-dimensional transform of a real signal (half of the last axis's spectrum).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.rfftn(fnp.ones((2, 4))).shape
    (2, 3)
    """
    check_arraylike("jax.numpy.fft.rfftn", a)
    return _core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """The inverse of :func:`rfftn`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.irfftn(fnp.fft.rfftn(fnp.ones((2, 4)))).tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    check_arraylike("jax.numpy.fft.irfftn", a)
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """The two-dimensional transform over ``axes``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.fft2(fnp.ones((2, 2)))[0, 0].item()
    (4+0j)
    """
    check_arraylike("jax.numpy.fft.fft2", a)
    return _core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """The inverse of :func:`fft2`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.ifft2(fnp.ones((2, 2)))[0, 0].item()
    (1+0j)
    """
    check_arraylike("jax.numpy.fft.ifft2", a)
    return _core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """The two-dimensional transform of a real signal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.rfft2(fnp.ones((2, 4))).shape
    (2, 3)
    """
    check_arraylike("jax.numpy.fft.rfft2", a)
    return _core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """The inverse of :func:`rfft2`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.irfft2(fnp.ones((2, 3))).shape
    (2, 4)
    """
    check_arraylike("jax.numpy.fft.irfft2", a)
    return _core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _freq_dtype(dtype: Any) -> np.dtype[Any]:
    if dtype is None:
        return dtypes.default_float()
    dt = dtypes.canonicalize_dtype(dtype)
    if not dtypes.is_inexact(dt):
        raise ValueError(f"the frequencies need a floating point dtype, got {dt}")
    return dt


def _check_n(name: str, n: Any) -> int:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    return int(operator.index(n))


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    n = _check_n("fftfreq", n)
    dt = _freq_dtype(dtype)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)]).astype(dt)
    return _scaled_freqs(k, n, d, dt, device)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The non-negative sample frequencies of an ``n``-point real transform.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    n = _check_n("rfftfreq", n)
    dt = _freq_dtype(dtype)
    return _scaled_freqs(np.arange(0, n // 2 + 1).astype(dt), n, d, dt, device)


def _scaled_freqs(k: np.ndarray, n: int, d: Any, dt: np.dtype[Any], device: Any) -> Any:
    if type(d) in (int, float):
        buf = (k / (d * n)).astype(dt)
        if device is not None:
            from funcgrad.devices import put_buffer  # noqa: PLC0415

            buf = put_buffer(buf, device)
        return wrap(buf, ShapedArray(tuple(buf.shape), dt))
    # An array (or traced) spacing: k / (d * n), staged, so differentiable in d.
    from funcgrad.numpy._ufuncs import divide  # noqa: PLC0415

    return cast(divide(cast(k, dt), multiply(d, float(n))), dt)


def _shift(x: Any, axes: Any, inverse: bool) -> Any:
    x = _arr(x)
    shape = get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(canonical_axis(a, len(shape)) for a in axes)
    shifts = [-(shape[a] // 2) if inverse else shape[a] // 2 for a in axes]
    return roll(x, shifts, axes) if axes else x


def fftshift(x: Any, axes: Any = None) -> Any:
    """Move the zero frequency to the centre (of ``axes``, all by default).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.fftshift(fnp.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    check_arraylike("fftshift", x)
    return _shift(x, axes, inverse=False)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of :func:`fftshift`.

    >>> import funcgrad.numpy as fnp
    >>> fnp.fft.ifftshift(fnp.array([-0.5, -0.25, 0.0, 0.25])).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    check_arraylike("ifftshift", x)
    return _shift(x, axes, inverse=True)
