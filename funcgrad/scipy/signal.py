"""``jax.scipy.signal``: convolution and correlation (direct, on ``lax.conv_general_dilated``,
or through the FFT), detrending, and the windowed-FFT spectral estimates (``stft``,
``istft``, ``csd``, ``welch``), all differentiable and batchable.

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import signal
>>> signal.convolve(fnp.array([1.0, 2.0, 3.0]), fnp.array([0.0, 1.0, 0.5])).tolist()
[0.0, 1.0, 2.5, 4.0, 1.5]
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.numpy import fft as _fft
from funcgrad.numpy._core import canonical_axis, cast, is_array, promote_inexact
from funcgrad.primitives.convolution import conv_general_dilated
from funcgrad.primitives.elementwise import complex_dtype_of
from funcgrad.primitives.structural import expand_dims

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

ModeString = Literal["full", "same", "valid"]


# ------------------------------------------------------------------ helpers


def _arraylike(x: Any) -> bool:
    return is_array(x) or isinstance(x, (np.ndarray, np.generic)) or dtypes.python_scalar(x)


def _check_arraylike(name: str, *xs: Any) -> None:
    # JAX refuses lists and other sequences where it wants arrays, rather than converting.
    for pos, x in enumerate(xs):
        if not _arraylike(x):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                            f"position {pos}.")


def _to_complex_dtype(dtype: Any) -> np.dtype[Any]:
    """JAX's ``to_complex_dtype``: up to 32-bit integers and floats give complex64."""
    dt = np.dtype(dtype)
    if dt.kind in "biu":
        dt = np.dtype(np.float64 if dt.itemsize == 8 else np.float32)
    return complex_dtype_of(dt)


def _promote_complex(x: Any) -> Any:
    aval = get_aval(x)
    return cast(x, dtypes.canonicalize(_to_complex_dtype(aval.dtype)), aval.weak_type)


def _iscomplex(x: Any) -> bool:
    return x is not None and fnp.iscomplexobj(x)


def _greater(x: Any, y: float) -> Any:
    """``x > y``, ordering complex numbers by real part, then imaginary part (as JAX)."""
    if not fnp.iscomplexobj(x):
        return x > y
    re, im = fnp.real(x), fnp.imag(x)
    return fnp.where(re == y, im > 0, re > y)


def _index_tuple(axes: Any) -> tuple[int, ...]:
    try:
        return (operator.index(axes),)
    except TypeError:
        return tuple(operator.index(a) for a in axes)


# -------------------------------------------------------------- convolution


def fftconvolve(in1: Any, in2: Any, mode: ModeString = "full",
                axes: Sequence[int] | None = None) -> Any:
    """The N-dimensional convolution of ``in1`` and ``in2`` computed with FFTs; ``axes``
    limits the convolution to some axes (the others, of equal sizes, are batch axes).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import fftconvolve
    >>> fftconvolve(fnp.array([1.0, 2.0, 3.0]), fnp.array([1.0, 1.0])).round(4).tolist()
    [1.0, 3.0, 5.0, 3.0]
    """
    _check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_inexact(in1, in2)
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    nd = len(s1)
    if axes is None:
        conv_axes = tuple(range(nd))
    else:
        axes = _index_tuple(axes)
        axes = tuple(canonical_axis(ax, nd) for ax in axes)
        mapped = set(range(nd)) - set(axes)
        if any(s1[i] != s2[i] for i in mapped):
            raise ValueError(f"mapped axes must have same shape; got in1.shape={s1} "
                             f"in2.shape={s2} axes={axes}")
        conv_axes = tuple(sorted(set(axes)))
    return _fftconvolve(in1, in2, mode, conv_axes)


def _fftconvolve(in1: Any, in2: Any, mode: str, axes: tuple[int, ...]) -> Any:
    """The convolution over ``axes``; the other axes have equal sizes and map pointwise."""
    sh1 = [get_aval(in1).shape[a] for a in axes]
    sh2 = [get_aval(in2).shape[a] for a in axes]
    full_shape = [a + b - 1 for a, b in zip(sh1, sh2)]
    if mode == "valid":
        no_swap = all(a >= b for a, b in zip(sh1, sh2))
        swap = all(a <= b for a, b in zip(sh1, sh2))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as "
                             "large as the other in every dimension.")
        if swap:
            in1, in2, sh1, sh2 = in2, in1, sh2, sh1
    if all(a == 1 or b == 1 for a, b in zip(sh1, sh2)):
        conv = in1 * in2
    else:
        if fnp.iscomplexobj(in1):
            fwd, inv = _fft.fftn, _fft.ifftn
        else:
            fwd, inv = _fft.rfftn, _fft.irfftn
        conv = inv(fwd(in1, full_shape, axes) * fwd(in2, full_shape, axes), full_shape, axes)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = sh1
    else:
        out_shape = [a - b + 1 for a, b in zip(sh1, sh2)]
    index = [slice(None)] * get_aval(conv).ndim
    for ax, full, out in zip(axes, full_shape, out_shape):
        start = (full - out) // 2
        index[ax] = slice(start, start + out)
    return conv[tuple(index)]


def _convolve_nd(in1: Any, in2: Any, mode: str, *, precision: Any) -> Any:
    if mode not in ["full", "same", "valid"]:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = promote_inexact(in1, in2)
    sh1, sh2 = get_aval(in1).shape, get_aval(in2).shape
    no_swap = all(a >= b for a, b in zip(sh1, sh2))
    swap = all(a <= b for a, b in zip(sh1, sh2))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = sh2
    if swap:
        in1, in2 = in2, in1
    shape = get_aval(in2).shape
    in2 = fnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    strides = tuple(1 for _ in shape)
    out = conv_general_dilated(in1[None, None], in2[None, None], strides, padding,
                               precision=precision)
    return out[0, 0]


def convolve(in1: Any, in2: Any, mode: ModeString = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """The N-dimensional convolution of ``in1`` and ``in2`` ("direct" and "auto" use a
    direct convolution, "fft" :func:`fftconvolve`).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import convolve
    >>> convolve(fnp.array([1.0, 2.0, 3.0]), fnp.array([1.0, 1.0]), mode="same").tolist()
    [1.0, 3.0, 5.0]
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def convolve2d(in1: Any, in2: Any, mode: ModeString = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    """The two-dimensional convolution of ``in1`` and ``in2`` (zero fill only).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import convolve2d
    >>> convolve2d(fnp.eye(2), fnp.ones((1, 1))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1: Any, in2: Any, mode: ModeString = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """The N-dimensional cross-correlation of ``in1`` and ``in2``: the convolution with
    ``in2`` conjugated and reversed.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import correlate
    >>> correlate(fnp.array([1.0, 2.0, 3.0]), fnp.array([0.0, 1.0])).tolist()
    [1.0, 2.0, 3.0, 0.0]
    """
    return convolve(in1, fnp.flip(in2.conj()), mode, precision=precision, method=method)


def correlate2d(in1: Any, in2: Any, mode: ModeString = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """The two-dimensional cross-correlation of ``in1`` and ``in2`` (zero fill only).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import correlate2d
    >>> correlate2d(fnp.ones((2, 2)), fnp.ones((1, 1)), mode="valid").tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same_shape = all(a == b for a, b in zip(in1.shape, in2.shape))
    # SciPy's orientation of the result depends on which input is larger, so the cases
    # below reverse and conjugate exactly where JAX (following SciPy) does.
    if mode == "same":
        return fnp.flip(_convolve_nd(fnp.flip(in1), in2.conj(), mode, precision=precision))
    if mode == "valid":
        if swap and not same_shape:
            return _convolve_nd(fnp.flip(in2), in1.conj(), mode, precision=precision)
        return fnp.flip(_convolve_nd(fnp.flip(in1), in2.conj(), mode, precision=precision))
    if swap:
        return _convolve_nd(fnp.flip(in2), in1.conj(), mode, precision=precision).conj()
    return fnp.flip(_convolve_nd(fnp.flip(in1), in2.conj(), mode, precision=precision))


# ---------------------------------------------------------------- detrending


def detrend(data: Any, axis: int = -1, type: str = "linear",  # noqa: A002
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Any:
    """``data`` less its mean ("constant") or its least-squares line ("linear"; one line
    per piece between the breakpoints ``bp``) along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import detrend
    >>> [round(v, 3) for v in detrend(fnp.array([1.0, 2.0, 3.0, 5.0])).tolist()]
    [0.2, -0.1, -0.4, 0.3]
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (arr,) = promote_inexact(fnp.asarray(data))
    if type == "constant":
        return arr - arr.mean(axis, keepdims=True)
    n = get_aval(arr).shape[axis]
    # The breakpoints are static: NumPy on the host, as JAX does.
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    arr = fnp.moveaxis(arr, axis, 0)
    shape = get_aval(arr).shape
    arr = arr.reshape(n, -1)
    dt = get_aval(arr).dtype
    for m in range(len(bps) - 1):
        npts_raw = bps[m + 1] - bps[m]
        if bps.dtype.kind not in "iu":
            # np.r_ makes the breakpoints floats when ``bp`` is empty or holds floats;
            # JAX then fails to build its design matrix of that (float) length.
            raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                            f"got ({npts_raw!r},).")
        npts = int(npts_raw)
        # The design matrix is a constant, so its pseudo-inverse is too: the least-squares
        # fit is a fixed linear map of the data (JAX's lstsq, without differentiating an
        # SVD of a constant).
        design = np.stack([np.ones(npts), np.arange(1, npts + 1) / npts], axis=1)
        pinv = np.linalg.pinv(design)
        sl = slice(int(bps[m]), int(bps[m + 1]))
        coef = fnp.matmul(fnp.asarray(pinv.astype(dt)), arr[sl])
        arr = arr.at[sl].add(-fnp.matmul(fnp.asarray(design.astype(dt)), coef))
    return fnp.moveaxis(arr.reshape(shape), 0, axis)


# ------------------------------------------------------------ spectral analysis


def _fft_helper(x: Any, win: Any, detrend_func: Callable[[Any], Any], nperseg: int,
                noverlap: int, nfft: int | None, sides: str) -> Any:
    """The windowed FFTs of the overlapping segments along the last axis:
    ``(..., segments, frequencies)``."""
    if get_aval(x).dtype.kind == "i":
        x = x.astype(get_aval(win).dtype)
    length = get_aval(x).shape[-1]
    if nperseg == 1 and noverlap == 0:
        segs = x[..., None]
    else:
        starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
        segs = x[..., starts[:, None] + np.arange(nperseg)[None, :]]
    segs = detrend_func(segs)
    if fnp.iscomplexobj(win):
        segs = _promote_complex(segs)
    nbatch = get_aval(x).ndim - 1
    segs = win.reshape((1,) * nbatch + (1, nperseg)) * segs
    if sides == "twosided":
        return _fft.fft(segs, n=nfft)
    return _fft.rfft(fnp.real(segs), n=nfft)


def _odd_ext(x: Any, n: int, axis: int = -1) -> Any:
    """Extend ``x`` by ``n`` points at each end by odd symmetry about the end points."""
    if n < 1:
        return x
    size = get_aval(x).shape[axis]
    if n > size - 1:
        raise ValueError(f"The extension length n ({n}) is too big. "
                         f"It must not exceed x.shape[axis]-1, which is {size - 1}.")

    def take(start: int | None, stop: int | None) -> Any:
        index = [slice(None)] * get_aval(x).ndim
        index[axis] = slice(start, stop)
        return x[tuple(index)]

    left_end, right_end = take(0, 1), take(-1, None)
    left_ext = fnp.flip(take(1, n + 1), axis=axis)
    right_ext = fnp.flip(take(-(n + 1), -1), axis=axis)
    return fnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _pad_by(mode: str, **kwargs: Any) -> Callable[..., Any]:
    def pad(x: Any, n: int, axis: int = -1) -> Any:
        width = [(0, 0)] * get_aval(x).ndim
        width[axis] = (n, n)
        return fnp.pad(x, width, mode, **kwargs)
    return pad


_BOUNDARY: dict[str | None, Callable[..., Any]] = {
    "even": _pad_by("reflect"),
    "odd": _odd_ext,
    "constant": _pad_by("edge"),
    "zeros": _pad_by("constant", constant_values=0.0),
    None: lambda x, *args, **kwargs: x,
}


def _hann(n: int) -> Any:
    if n == 1:
        return fnp.array([1.0])
    return fnp.sin(fnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _triage_segments(window: Any, nperseg: int | None, input_length: int,
                     dtype: Any) -> tuple[Any, int]:
    """The window as an array and the segment length it implies (JAX's rules)."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}", stacklevel=4)
            n = input_length
        if isinstance(window, str) and window == "hann":
            win = _hann(n)
        else:
            from scipy.signal import get_window  # noqa: PLC0415 - only for named windows

            win = get_window(window, n)
        return fnp.array(win, dtype=dtype), n
    win = fnp.asarray(window, dtype=dtype)
    size = get_aval(win).size
    n = size if nperseg is None else int(nperseg)
    if get_aval(win).ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < size:
        raise ValueError("window is longer than input signal")
    if n != size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _tuple_delete(t: tuple[int, ...], idx: int) -> tuple[int, ...]:
    return t[:idx] + t[idx + 1:]


def _spectral_helper(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann",
                     nperseg: int | None = None, noverlap: int | None = None,
                     nfft: int | None = None, detrend_type: Any = "constant",
                     return_onesided: bool = True, scaling: str = "density",
                     axis: int = -1, mode: str = "psd", boundary: str | None = None,
                     padded: bool = False) -> tuple[Any, Any, Any]:
    """Frequencies, segment times and windowed spectra (of ``x``, or the cross spectrum
    of ``x`` and ``y``) with the frequency axis at ``axis`` and segments last."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARY:
        raise ValueError(f"Unknown boundary option '{boundary}', "
                         f"must be one of: {list(_BOUNDARY.keys())}")
    # ``x.ndim`` before any check, as JAX (a list fails here, with AttributeError).
    axis = canonical_axis(operator.index(axis), x.ndim)
    if y is None:
        _check_arraylike("spectral_helper", x)
        (x,) = promote_inexact(x)
        yarr = x
        outershape = _tuple_delete(get_aval(x).shape, axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        _check_arraylike("spectral_helper", x, y)
        x, yarr = promote_inexact(x, y)
        if get_aval(x).ndim != get_aval(yarr).ndim:
            # The braces are literal in JAX's message too.
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = tuple(np.broadcast_shapes(_tuple_delete(get_aval(x).shape, axis),
                                                   _tuple_delete(get_aval(yarr).shape, axis)))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    xdt = get_aval(x).dtype
    result_dtype = dtypes.canonicalize(_to_complex_dtype(xdt))
    freq_dtype = np.finfo(result_dtype).dtype

    nperseg_int = 0
    if nperseg is not None:
        nperseg_int = int(nperseg)
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = _triage_segments(window, nperseg if nperseg is None else nperseg_int,
                                        get_aval(x).shape[axis], xdt)
    noverlap_int = nperseg_int // 2 if noverlap is None else int(noverlap)
    nfft_int = nperseg_int if nfft is None else int(nfft)

    if y is None:
        if get_aval(x).size == 0:
            shape = get_aval(x).shape
            return (fnp.zeros(shape, freq_dtype), fnp.zeros(shape, freq_dtype),
                    fnp.zeros(shape, result_dtype))
    elif get_aval(x).size == 0 or get_aval(yarr).size == 0:
        n = min(get_aval(x).shape[axis], get_aval(yarr).shape[axis])
        # JAX passes tuple_insert its index and value swapped: ``axis`` goes in at ``n``.
        shape = outershape[:n] + (axis,) + outershape[n:]
        return (fnp.zeros(shape, freq_dtype), fnp.zeros(shape, freq_dtype),
                fnp.zeros(shape, result_dtype))

    x = fnp.moveaxis(x, axis, -1)
    if y is not None and get_aval(yarr).ndim > 1:
        yarr = fnp.moveaxis(yarr, axis, -1)

    # Zero-pad the shorter of x and y to the other's length.
    if y is not None and get_aval(x).shape[-1] != get_aval(yarr).shape[-1]:
        nx, ny = get_aval(x).shape[-1], get_aval(yarr).shape[-1]
        if nx < ny:
            fill = fnp.zeros((*get_aval(x).shape[:-1], ny - nx), get_aval(x).dtype)
            x = fnp.concatenate((x, fill), -1)
        else:
            fill = fnp.zeros((*get_aval(yarr).shape[:-1], nx - ny), get_aval(x).dtype)
            yarr = fnp.concatenate((yarr, fill), -1)

    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if boundary is not None:
        ext = _BOUNDARY[boundary]
        x = ext(x, nperseg_int // 2, axis=-1)
        if y is not None:
            yarr = ext(yarr, nperseg_int // 2, axis=-1)

    if padded:
        # Zero-pad to a whole number of segments.
        nadd = (-(get_aval(x).shape[-1] - nperseg_int) % nstep) % nperseg_int
        xdt = get_aval(x).dtype
        x = fnp.concatenate((x, fnp.zeros((*get_aval(x).shape[:-1], nadd), xdt)), axis=-1)
        if y is not None:
            fill = fnp.zeros((*get_aval(yarr).shape[:-1], nadd), xdt)
            yarr = fnp.concatenate((yarr, fill), axis=-1)

    detrend_func: Callable[[Any], Any]
    if isinstance(detrend_type, str):
        detrend_func = partial(detrend, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        user_detrend = detrend_type
        if axis != -1:
            # As JAX: ``axis`` is non-negative here, so the user's function always sees
            # the segments with that axis moved last.
            def detrend_func(d: Any) -> Any:
                d = fnp.moveaxis(d, axis, -1)
                d = user_detrend(d)
                return fnp.moveaxis(d, -1, axis)
        else:
            detrend_func = user_detrend
    elif not detrend_type:
        def detrend_func(d: Any) -> Any:
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = fnp.sqrt(scale)
    scale = _promote_complex(fnp.asarray(scale))

    if return_onesided:
        sides = "onesided"
        if _iscomplex(x) or _iscomplex(y):
            sides = "twosided"
            warnings.warn("Input data is complex, switching to return_onesided=False",
                          stacklevel=3)
    else:
        sides = "twosided"
    if sides == "twosided":
        freqs = _fft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        freqs = _fft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)

    result = _fft_helper(x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)
    if y is not None:
        result_y = _fft_helper(yarr, win, detrend_func, nperseg_int, noverlap_int, nfft_int,
                               sides)
        result = fnp.conjugate(result) * result_y
    elif mode == "psd":
        result = fnp.conjugate(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        end = None if nfft_int % 2 else -1
        result = result.at[..., 1:end].multiply(2)

    time = fnp.arange(nperseg_int / 2, get_aval(x).shape[-1] - nperseg_int / 2 + 1,
                      nperseg_int - noverlap_int, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg_int / 2) / fs

    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = fnp.real(result)
    result = fnp.moveaxis(result, -1, axis)
    return freqs, time, result


def stft(x: Any, fs: Any = 1.0, window: str = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: bool = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform of ``x``: frequencies, segment times, and the
    spectrum with frequencies at ``axis`` and segments last.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import stft
    >>> f, t, z = stft(fnp.ones(8), nperseg=4)
    >>> f.shape, t.shape, z.shape
    ((3,), (5,), (3, 5))
    """
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling="spectrum", axis=axis, mode="stft",
                            boundary=boundary, padded=padded)


def csd(x: Any, y: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """The cross power spectral density of ``x`` and ``y`` by Welch's method (the mean or
    median of the segments' cross spectra).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import csd
    >>> f, p = csd(fnp.arange(8.0), fnp.ones(8), nperseg=4)
    >>> f.shape, p.dtype
    ((3,), dtype('complex64'))
    """
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j
    aval = get_aval(pxy)
    if aval.ndim >= 2 and aval.size > 0:
        if aval.shape[-1] > 1:
            if average == "median":
                n = aval.shape[-1]
                ii_2 = fnp.arange(2.0, n, 2)
                bias = (1 + fnp.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)).astype(aval.dtype)
                if fnp.iscomplexobj(pxy):
                    pxy = (fnp.median(fnp.real(pxy), axis=-1)
                           + 1j * fnp.median(fnp.imag(pxy), axis=-1))
                else:
                    pxy = fnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = fnp.reshape(pxy, aval.shape[:-1])
    return freqs, pxy


def welch(x: Any, fs: Any = 1.0, window: str = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: str = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """The power spectral density of ``x`` by Welch's method.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import welch
    >>> f, p = welch(fnp.array([1.0, -1.0] * 4), nperseg=4)
    >>> f.tolist(), [round(v, 3) for v in p.tolist()]
    ([0.0, 0.25, 0.5], [0.0, 1.333, 2.667])
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, fnp.real(pxx)


def _overlap_and_add(x: Any, step_size: int) -> Any:
    """Sum the frames ``(..., frames, frame_length)``, each shifted ``step_size`` further
    than the one before, into one signal ``(..., step * (frames - 1) + frame_length)``."""
    step_size = int(step_size)
    shape = get_aval(x).shape
    if len(shape) < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, segment_len = shape
    batch = math.prod(batch_shape)
    x = x.reshape((batch, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size
    # Each frame cut into steps; padding every step row by a frame's worth of zeros and
    # reading the rows one element shorter shifts frame k by k steps (TensorFlow's trick).
    padded_len = nstep_per_segment * step_size
    x = fnp.pad(x, ((0, 0), (0, 0), (0, padded_len - segment_len)))
    x = x.reshape((batch, nframes, nstep_per_segment, step_size))
    x = x.transpose((0, 2, 1, 3))
    x = fnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shrunken = get_aval(x).shape[2] - 1
    x = x.reshape((batch, -1))
    x = x[:, :(nstep_per_segment * shrunken * step_size)]
    x = x.reshape((batch, nstep_per_segment, shrunken * step_size))
    x = x.sum(axis=1)[:, :output_size]
    return x.reshape((*batch_shape, -1))


def istft(Zxx: Any, fs: Any = 1.0, window: str = "hann",  # noqa: N803
          nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, input_onesided: bool = True, boundary: bool = True,
          time_axis: int = -1, freq_axis: int = -2) -> tuple[Any, Any]:
    """The inverse short-time Fourier transform (windowed overlap-add): times and signal.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.signal import istft, stft
    >>> _, _, z = stft(fnp.arange(8.0), nperseg=4)
    >>> [round(v, 3) for v in istft(z, nperseg=4)[1].tolist()]
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    if not _arraylike(Zxx):
        raise TypeError(f"istft requires ndarray or scalar arguments, got {type(Zxx)} at "
                        "position 0.")
    Zxx = fnp.asarray(Zxx)  # noqa: N806
    nd = get_aval(Zxx).ndim
    if nd < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonical_axis(freq_axis, nd)
    time_axis = canonical_axis(time_axis, nd)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = fnp.asarray(Zxx, dtype=_to_complex_dtype(get_aval(Zxx).dtype))  # noqa: N806
    nfreq = get_aval(Zxx).shape[freq_axis]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    # ``or``, as JAX: a zero nperseg or noverlap means the default.
    nperseg_int = int(nperseg or n_default)
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1  # odd nperseg, no FFT padding
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg "
                         f"({nperseg_int}).")
    noverlap_int = int(noverlap or nperseg_int // 2)
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != nd - 1 or freq_axis != nd - 2:
        outer = tuple(i for i in range(nd) if i not in {time_axis, freq_axis})
        Zxx = fnp.transpose(Zxx, (*outer, freq_axis, time_axis))  # noqa: N806

    # (..., frame_length, frames); the user's nfft (not the inferred one), as JAX.
    zshape = get_aval(Zxx).shape
    if input_onesided and nfft is None and zshape[-2] == 1:
        # JAX's irfft of one frequency is an empty signal (n = 2 * (1 - 1)).
        real_dt = np.finfo(get_aval(Zxx).dtype).dtype
        xsubs = fnp.zeros((*zshape[:-2], 0, zshape[-1]), real_dt)
    else:
        inverse = _fft.irfft if input_onesided else _fft.ifft
        xsubs = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]
    xdt = get_aval(xsubs).dtype
    if isinstance(window, str) and window == "hann":
        win = _hann(nperseg_int).astype(xdt)
    elif isinstance(window, (str, tuple)):
        from scipy.signal import get_window  # noqa: PLC0415 - only for named windows

        win = fnp.array(get_window(window, nperseg_int), dtype=xdt)
    else:
        win = fnp.asarray(window)
        if len(get_aval(win).shape) != 1:
            raise ValueError("window must be 1-D")
        if get_aval(win).shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs = xsubs * win.sum()  # undoes the "spectrum" scaling of stft

    nds = get_aval(xsubs).ndim
    win = expand_dims(win, (*range(nds - 2), nds - 1))
    x = _overlap_and_add((xsubs * win).swapaxes(-2, -1), nstep)
    win_squared = fnp.repeat(win * win, get_aval(xsubs).shape[-1], axis=-1)
    norm = _overlap_and_add(win_squared.swapaxes(-2, -1), nstep)

    if boundary:
        # Python's slice [h:-h], as JAX: empty when nperseg is 1.
        half = nperseg_int // 2
        x = x[..., half:-half]
        norm = norm[..., half:-half]
    x = x / fnp.where(_greater(norm, 1e-10), norm, 1.0)

    if get_aval(x).ndim > 1 and time_axis != nd - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = fnp.moveaxis(x, -1, time_axis)

    # The length of the first axis, not the time axis, as JAX.
    time = fnp.arange(get_aval(x).shape[0], dtype=np.finfo(get_aval(x).dtype).dtype) / fs
    return time, x
