"""``jax.scipy.fft``: the type-II discrete cosine transform and its inverse, in one or
several axes, computed by Makhoul's method (an FFT of the even/odd-interleaved signal,
then a quarter-sample twiddle), so they are differentiable and batchable like the FFT.

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import fft
>>> fft.dct(fnp.array([1.0, 1.0])).tolist()
[4.0, 0.0]
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.numpy import fft as _fft
from funcgrad.numpy._core import canonical_axis, is_array, promote_inexact
from funcgrad.numpy._creation import arange, asarray, zeros
from funcgrad.numpy._shape import concatenate, expand_dims, flip, roll
from funcgrad.numpy._ufuncs import exp, imag, real, sqrt
from funcgrad.primitives import structural as S
from funcgrad.primitives.elementwise import complex_ as _lax_complex
from funcgrad.primitives.elementwise import complex_dtype_of

__all__ = ["dct", "dctn", "idct", "idctn"]


def _ensure(name: str, x: Any) -> Any:
    # JAX's ensure_arraylike: lists and other sequences are refused, not converted.
    if not (is_array(x) or isinstance(x, (np.ndarray, np.generic)) or dtypes.python_scalar(x)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                        "position 0.")
    return asarray(x)


def _check(name: str, type: int, norm: str | None) -> None:  # noqa: A002
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ["backward", "ortho"]:
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _is_complex(x: Any) -> bool:
    return get_aval(x).dtype.kind == "c"


def _recombine(re: Any, im: Any) -> Any:
    return _lax_complex(re, im)


def _others(ndim: int, axis: int) -> list[int]:
    return [a for a in range(ndim) if a != axis]


def _pad_axis(x: Any, axis: int, n: int) -> Any:
    """Zero-pad (or, for a shorter ``n``, crop) ``axis`` to length ``n``."""
    aval = get_aval(x)
    zero = np.zeros((), aval.dtype)
    return S.pad(x, zero, [(0, n - aval.shape[axis] if a == axis else 0, 0)
                           for a in range(aval.ndim)])


def _nonempty(*sizes: int) -> None:
    # JAX fails on a zero-length transform axis in its slicing, with a TypeError.
    if 0 in sizes:
        raise TypeError(f"the DCT needs axes of positive length, got lengths {sizes}")


def _w4(n: int, k: Any) -> Any:
    """exp(-i pi k / (2 n)), complex in the precision of ``k``."""
    dt = complex_dtype_of(get_aval(k).dtype)
    return exp(-.5j * np.pi * asarray(k, dtype=dt) / n)


def _interleave(x: Any, axis: int) -> Any:
    """The even samples, then the odd ones reversed (Makhoul's reordering)."""
    nd = get_aval(x).ndim
    ev = tuple(slice(None, None, 2) if a == axis else slice(None) for a in range(nd))
    od = tuple(slice(1, None, 2) if a == axis else slice(None) for a in range(nd))
    return concatenate([x[ev], flip(x[od], axis)], axis)


def _deinterleave(x: Any, axis: int) -> Any:
    shape = get_aval(x).shape
    nd = len(shape)
    half = math.ceil(shape[axis] / 2)

    def along(s: slice) -> tuple[slice, ...]:
        return tuple(s if a == axis else slice(None) for a in range(nd))

    out = zeros(shape, dtype=get_aval(x).dtype)
    out = out.at[along(slice(None, None, 2))].set(x[along(slice(None, half))])
    return out.at[along(slice(1, None, 2))].set(flip(x[along(slice(half, None))], axis))


def _ortho(out: Any, axis: int) -> Any:
    aval = get_aval(out)
    n = aval.shape[axis]
    factor = np.concatenate([np.full((1,), 4), np.full((n - 1,), 2)]).astype(aval.dtype)
    factor = expand_dims(asarray(factor), _others(aval.ndim, axis))
    return out / sqrt(factor * n)


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002
        norm: str | None = None) -> Any:
    """The type-II discrete cosine transform along ``axis`` (``norm`` None or "ortho").

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.fft import dct
    >>> [round(v, 4) for v in dct(fnp.array([1.0, 2.0, 3.0]), norm="ortho").tolist()]
    [3.4641, -1.4142, 0.0]
    """
    x = _ensure("dct", x)
    _check("dct", type, norm)
    if _is_complex(x):
        return _recombine(dct(real(x), type=type, n=n, norm=norm, axis=axis),
                          dct(imag(x), type=type, n=n, norm=norm, axis=axis))
    nd = get_aval(x).ndim
    axis = canonical_axis(axis, nd)
    if n is not None:
        x = _pad_axis(x, axis, n)
    size = get_aval(x).shape[axis]
    _nonempty(size)
    spec = _fft.fft(_interleave(x, axis), axis=axis)
    k = expand_dims(arange(size, dtype=get_aval(real(spec)).dtype), _others(nd, axis))
    out = 2 * real(spec * _w4(size, k))
    if norm == "ortho":
        out = _ortho(out, axis)
    return out


def _dct2(x: Any, axes: tuple[int, int], norm: str | None) -> Any:
    nd = get_aval(x).ndim
    a1, a2 = (canonical_axis(a, nd) for a in axes)
    n1, n2 = get_aval(x).shape[a1], get_aval(x).shape[a2]
    _nonempty(n1, n2)
    spec = _fft.fftn(_interleave(_interleave(x, a1), a2), axes=axes)
    dt = get_aval(spec).dtype
    k1 = expand_dims(arange(n1, dtype=dt), _others(nd, a1))
    k2 = expand_dims(arange(n2, dtype=dt), _others(nd, a2))
    out = _w4(n1, k1) * (_w4(n2, k2) * spec
                         + _w4(n2, -k2) * roll(flip(spec, axis=a2), shift=1, axis=a2))
    out = 2 * real(out)
    if norm == "ortho":
        return _ortho(_ortho(out, a1), a2)
    return out


def _nd_axes(x: Any, s: Any, axes: Sequence[int] | None) -> tuple[list[int] | None,
                                                                  tuple[int, ...]]:
    nd = get_aval(x).ndim
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > nd:
            raise ValueError(f"s must have at most x.ndim ({nd}) elements, got {len(s)}")
    if axes is None:
        ax = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    elif isinstance(axes, Sequence):
        ax = tuple(canonical_axis(a, nd) for a in axes)
        if len(set(ax)) != len(ax):
            raise ValueError(f"repeated axis: {ax}")
    else:
        ax = (canonical_axis(axes, nd),)
    return s, ax


def _pad_axes(x: Any, s: list[int], axes: tuple[int, ...]) -> Any:
    shape = get_aval(x).shape
    ns = dict(zip(axes, s))
    zero = np.zeros((), get_aval(x).dtype)
    return S.pad(x, zero, [(0, ns[a] - shape[a] if a in ns else 0, 0)
                           for a in range(len(shape))])


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,  # noqa: A002
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The type-II DCT over several axes (all of them by default).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.fft import dctn
    >>> dctn(fnp.ones((2, 2))).tolist()
    [[16.0, 0.0], [0.0, 0.0]]
    """
    x = _ensure("dctn", x)
    _check("dctn", type, norm)
    if _is_complex(x):
        return _recombine(dctn(real(x), type=type, s=s, norm=norm, axes=axes),
                          dctn(imag(x), type=type, s=s, norm=norm, axes=axes))
    sl, ax = _nd_axes(x, s, axes)
    if len(ax) == 1:
        return dct(x, n=sl[0] if sl is not None else None, axis=ax[0], norm=norm)
    if sl is not None:
        x = _pad_axes(x, sl, ax)
    if len(ax) == 2:
        return _dct2(x, (ax[0], ax[1]), norm)
    # Pairs of axes at a time (the 2-D transform), then a last single axis if odd.
    for i in range(0, len(ax), 2):
        x = dctn(x, axes=ax[i:i + 2], norm=norm)
    return x


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,  # noqa: A002
         norm: str | None = None) -> Any:
    """The inverse of :func:`dct` (a type-III DCT, scaled to undo ``dct`` with ``norm``).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.fft import dct, idct
    >>> idct(dct(fnp.array([1.0, 2.0, 3.0]))).round(4).tolist()
    [1.0, 2.0, 3.0]
    """
    x = _ensure("idct", x)
    _check("idct", type, norm)
    if _is_complex(x):
        return _recombine(idct(real(x), type=type, n=n, norm=norm, axis=axis),
                          idct(imag(x), type=type, n=n, norm=norm, axis=axis))
    nd = get_aval(x).ndim
    axis = canonical_axis(axis, nd)
    if n is not None:
        x = _pad_axis(x, axis, n)
    size = get_aval(x).shape[axis]
    _nonempty(size)
    (x,) = promote_inexact(x)
    if norm is None or norm == "backward":
        x = _ortho(x, axis)
    x = _ortho(x, axis)
    k = expand_dims(arange(size, dtype=get_aval(x).dtype), _others(nd, axis))
    w4 = _w4(size, k)
    x = x.astype(get_aval(w4).dtype) / w4
    x = x * 2 * size
    return _deinterleave(real(_fft.ifft(x, axis=axis)), axis)


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,  # noqa: A002
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The inverse of :func:`dctn`, one axis after another.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.fft import dctn, idctn
    >>> idctn(dctn(fnp.eye(2))).round(4).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    x = _ensure("idctn", x)
    _check("idctn", type, norm)
    if _is_complex(x):
        return _recombine(idctn(real(x), type=type, s=s, norm=norm, axes=axes),
                          idctn(imag(x), type=type, s=s, norm=norm, axes=axes))
    sl, ax = _nd_axes(x, s, axes)
    if len(ax) == 1:
        return idct(x, n=sl[0] if sl is not None else None, axis=ax[0], norm=norm)
    if sl is not None:
        x = _pad_axes(x, sl, ax)
    for a in ax:
        x = idct(x, axis=a, norm=norm)
    return x
