"""funcgrad.scipy.signal, .fft, .ndimage and .integrate against jax.scipy on drawn shapes,
values and options in float64 (values, dtypes and the error type where JAX refuses), JAX's
32-bit dtypes, JAX's errors, and derivatives checked by finite differences."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
import funcgrad.scipy
from funcgrad.scipy import fft as ffft
from funcgrad.scipy import integrate as fint
from funcgrad.scipy import ndimage as fnd
from funcgrad.scipy import signal as fsig
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jsp = pytest.importorskip("jax.scipy")
pytest.importorskip("jax.scipy.signal")
pytest.importorskip("jax.scipy.fft")
pytest.importorskip("jax.scipy.ndimage")
pytest.importorskip("jax.scipy.integrate")

pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("jax_x64")]  # compared with JAX in float64

SETTINGS = settings(max_examples=12, deadline=None)


def _leaves(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


def _check_same(got: Any, want: Any, rtol: float, atol: float) -> None:
    got_l, want_l = _leaves(got), _leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        # Integer inputs give float32 on both sides (JAX's table), even in 64-bit mode.
        single = np.dtype(w.dtype).itemsize <= (8 if np.dtype(w.dtype).kind == "c" else 4)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=max(rtol, 1e-5 * single),
                                   atol=max(atol, 1e-5 * single))


def _compare(ours: Callable[..., Any], theirs: Callable[..., Any], *args: Any,
             rtol: float = 1e-9, atol: float = 1e-10, jit: bool = True) -> None:
    """Both sides give the same values, shapes and dtypes on ``args``, or both raise the
    same type. JAX runs jitted (op by op, its compilations would take the time)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = (jax.jit(theirs) if jit else theirs)(*args)
    except (ValueError, TypeError, NotImplementedError, IndexError, AttributeError) as err:
        with pytest.raises(type(err)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours(*args)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ours(*args)
    _check_same(got, want, rtol, atol)


def _data(draw: st.DrawFn, shape: tuple[int, ...], complex_: bool = False) -> np.ndarray:
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x


def _shape(ndim: int, lo: int = 1, hi: int = 6) -> st.SearchStrategy[tuple[int, ...]]:
    return st.tuples(*[st.integers(lo, hi)] * ndim)


# ---------------------------------------------------------------- convolution


@SETTINGS
@given(st.data())
def test_convolve_and_correlate(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 3))
    s1 = data.draw(_shape(ndim))
    # Mostly one input inside the other in every axis (JAX's requirement), sometimes not.
    s2 = data.draw(st.one_of(st.just(tuple(data.draw(st.integers(1, s)) for s in s1)),
                             _shape(ndim)))
    complex_ = data.draw(st.booleans())
    a = _data(data.draw, s1, complex_)
    b = _data(data.draw, s2, data.draw(st.booleans()))
    if data.draw(st.booleans()):
        a, b = b, a
    mode = data.draw(st.sampled_from(["full", "same", "valid"]))
    method = data.draw(st.sampled_from(["auto", "direct", "fft"]))
    for name in ["convolve", "correlate"]:
        _compare(lambda p, q, n=name: getattr(fsig, n)(p, q, mode=mode, method=method),
                 lambda p, q, n=name: getattr(jsp.signal, n)(p, q, mode=mode, method=method),
                 a, b)


@SETTINGS
@given(st.data())
def test_convolve2d_and_correlate2d(data: st.DataObject) -> None:
    s1 = data.draw(_shape(2))
    s2 = data.draw(st.one_of(_shape(2), st.just(s1)))
    a = _data(data.draw, s1, data.draw(st.booleans()))
    b = _data(data.draw, s2, data.draw(st.booleans()))
    mode = data.draw(st.sampled_from(["full", "same", "valid"]))
    for name in ["convolve2d", "correlate2d"]:
        _compare(lambda p, q, n=name: getattr(fsig, n)(p, q, mode=mode),
                 lambda p, q, n=name: getattr(jsp.signal, n)(p, q, mode=mode), a, b)


@SETTINGS
@given(st.data())
def test_fftconvolve_axes(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 3))
    s1 = data.draw(_shape(ndim))
    axes = data.draw(st.one_of(st.none(), st.lists(st.integers(-ndim, ndim - 1), max_size=3),
                               st.integers(-ndim, ndim - 1)))
    conv = set(range(ndim)) if axes is None else {
        a % ndim for a in ([axes] if isinstance(axes, int) else axes)}
    s2 = tuple(data.draw(st.integers(1, 6)) if i in conv else s for i, s in enumerate(s1))
    a = _data(data.draw, s1, data.draw(st.booleans()))
    b = _data(data.draw, s2)
    mode = data.draw(st.sampled_from(["full", "same", "valid"]))
    _compare(lambda p, q: fsig.fftconvolve(p, q, mode=mode, axes=axes),
             lambda p, q: jsp.signal.fftconvolve(p, q, mode=mode, axes=axes), a, b)


def test_convolve_integer_inputs_promote() -> None:
    a, b = np.arange(6).reshape(2, 3), np.array([[1, 2]])
    for name in ["convolve", "correlate", "fftconvolve", "convolve2d", "correlate2d"]:
        _compare(lambda p, q, n=name: getattr(fsig, n)(p, q),
                 lambda p, q, n=name: getattr(jsp.signal, n)(p, q), a, b, jit=False)


@SETTINGS
@given(st.data())
def test_detrend(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(_shape(ndim, hi=7))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    kind = data.draw(st.sampled_from(["linear", "constant"]))
    n = shape[axis]
    bp = data.draw(st.one_of(st.just(0), st.integers(0, n),
                             st.lists(st.integers(0, n), max_size=3)))
    x = _data(data.draw, shape, data.draw(st.booleans()))
    _compare(lambda v: fsig.detrend(v, axis=axis, type=kind, bp=bp),
             lambda v: jsp.signal.detrend(v, axis=axis, type=kind, bp=bp), x)


# ---------------------------------------------------------- spectral analysis


def _spectral_options(data: st.DataObject, n: int) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    nperseg = data.draw(st.one_of(st.none(), st.integers(1, n + 2)))
    window = data.draw(st.sampled_from(["hann", "hamming", ("tukey", 0.3), "array"]))
    if window == "array":
        window = np.random.default_rng(n).uniform(0.5, 1.0, nperseg or min(n, 4))
    opts["window"] = window
    opts["nperseg"] = nperseg
    seg = nperseg if nperseg is not None else (
        len(window) if isinstance(window, np.ndarray) else n)
    if data.draw(st.booleans()):
        opts["noverlap"] = data.draw(st.integers(0, max(seg - 1, 0)))
    if data.draw(st.booleans()):
        opts["nfft"] = seg + data.draw(st.integers(0, 3))
    opts["fs"] = data.draw(st.sampled_from([1.0, 2.5]))
    return opts


@SETTINGS
@given(st.data())
def test_welch_and_csd(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 2))
    shape = data.draw(_shape(ndim, lo=2, hi=12))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    x = _data(data.draw, shape, data.draw(st.booleans()))
    opts = _spectral_options(data, shape[axis])
    opts["detrend"] = data.draw(st.sampled_from(["constant", "linear", False]))
    opts["return_onesided"] = data.draw(st.booleans())
    opts["scaling"] = data.draw(st.sampled_from(["density", "spectrum"]))
    opts["average"] = data.draw(st.sampled_from(["mean", "median"]))
    _compare(lambda v: fsig.welch(v, axis=axis, **opts),
             lambda v: jsp.signal.welch(v, axis=axis, **opts), x, rtol=1e-8, atol=1e-10)
    yshape = list(shape)
    yshape[axis] = data.draw(st.integers(2, 12))
    y = _data(data.draw, tuple(yshape))
    _compare(lambda v, w: fsig.csd(v, w, axis=axis, **opts),
             lambda v, w: jsp.signal.csd(v, w, axis=axis, **opts), x, y, rtol=1e-8,
             atol=1e-10)


@SETTINGS
@given(st.data())
def test_stft_and_istft(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 2))
    shape = data.draw(_shape(ndim, lo=2, hi=12))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    x = _data(data.draw, shape, data.draw(st.booleans()))
    opts = _spectral_options(data, shape[axis])
    if opts["nperseg"] is None:
        opts["nperseg"] = 256
    opts["boundary"] = data.draw(st.sampled_from(["zeros", "even", "odd", "constant", None]))
    opts["padded"] = data.draw(st.booleans())
    opts["return_onesided"] = data.draw(st.booleans())
    _compare(lambda v: fsig.stft(v, axis=axis, **opts),
             lambda v: jsp.signal.stft(v, axis=axis, **opts), x, rtol=1e-8, atol=1e-10)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z = np.asarray(fsig.stft(x, axis=-1, **opts)[2])
    except ValueError:
        return
    iopts = {k: v for k, v in opts.items() if k in ("fs", "window", "noverlap", "nfft")}
    iopts["nperseg"] = data.draw(st.sampled_from([None, min(opts["nperseg"], shape[-1])]))
    iopts["input_onesided"] = data.draw(st.booleans())
    iopts["boundary"] = data.draw(st.booleans())
    if z.ndim >= 3 and data.draw(st.booleans()):
        z = np.moveaxis(z, -1, 0)
        iopts["time_axis"] = 0
    _compare(lambda v: fsig.istft(v, **iopts), lambda v: jsp.signal.istft(v, **iopts), z,
             rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------ fft (DCT)


@SETTINGS
@given(st.data())
def test_dct_and_idct(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(_shape(ndim))
    x = _data(data.draw, shape, data.draw(st.booleans()))
    if data.draw(st.booleans()):
        x = np.round(3 * x.real).astype(np.int32)
    axis = data.draw(st.integers(-ndim, ndim - 1))
    n = data.draw(st.one_of(st.none(), st.integers(1, 7)))
    norm = data.draw(st.sampled_from([None, "backward", "ortho"]))
    for name in ["dct", "idct"]:
        _compare(lambda v, k=name: getattr(ffft, k)(v, n=n, axis=axis, norm=norm),
                 lambda v, k=name: getattr(jsp.fft, k)(v, n=n, axis=axis, norm=norm), x)


@SETTINGS
@given(st.data())
def test_dctn_and_idctn(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 4))
    shape = data.draw(_shape(ndim, hi=4))
    x = _data(data.draw, shape, data.draw(st.booleans()))
    axes = data.draw(st.one_of(st.none(), st.permutations(range(ndim)).map(
        lambda p: tuple(p[:data.draw(st.integers(1, ndim))]))))
    naxes = ndim if axes is None else len(axes)
    s = data.draw(st.one_of(st.none(), st.lists(st.integers(1, 5), min_size=naxes,
                                                max_size=naxes)))
    norm = data.draw(st.sampled_from([None, "ortho"]))
    for name in ["dctn", "idctn"]:
        _compare(lambda v, k=name: getattr(ffft, k)(v, s=s, axes=axes, norm=norm),
                 lambda v, k=name: getattr(jsp.fft, k)(v, s=s, axes=axes, norm=norm), x)


# ------------------------------------------------------------ ndimage, integrate


@SETTINGS
@given(st.data())
def test_map_coordinates(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(_shape(ndim, hi=5))
    x = _data(data.draw, shape)
    if data.draw(st.booleans()):
        x = np.round(5 * x).astype(np.int32)
    npts = data.draw(st.integers(1, 6))
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    coords = [rng.uniform(-2.5, s + 1.5, npts) for s in shape]
    if data.draw(st.booleans()):
        # Grid points and half-way points exercise the rounding and the edges.
        coords = [np.round(2 * c) / 2 for c in coords]
    order = data.draw(st.sampled_from([0, 1]))
    mode = data.draw(st.sampled_from(["constant", "nearest", "mirror", "wrap", "reflect"]))
    cval = data.draw(st.sampled_from([0.0, -1.5, 2.0]))
    _compare(lambda v, c: fnd.map_coordinates(v, c, order, mode=mode, cval=cval),
             lambda v, c: jsp.ndimage.map_coordinates(v, c, order, mode=mode, cval=cval),
             x, coords)


@SETTINGS
@given(st.data())
def test_trapezoid(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 3))
    shape = data.draw(_shape(ndim))
    axis = data.draw(st.integers(-ndim, ndim - 1))
    y = _data(data.draw, shape)
    kind = data.draw(st.sampled_from(["none", "1d", "nd", "dx", "dx-array"]))
    kw: dict[str, Any] = {}
    if kind == "1d":
        kw["x"] = np.sort(_data(data.draw, (shape[axis],)))
    elif kind == "nd":
        kw["x"] = _data(data.draw, shape)
    elif kind == "dx":
        kw["dx"] = 0.5
    elif kind == "dx-array":
        dshape = [1] * ndim
        dshape[axis] = data.draw(st.sampled_from([1, max(shape[axis] - 1, 1)]))
        kw["dx"] = _data(data.draw, tuple(dshape))
    _compare(lambda v, k: fint.trapezoid(v, axis=axis, **k),
             lambda v, k: jsp.integrate.trapezoid(v, axis=axis, **k), y, kw)


# --------------------------------------------------------------------- errors

A2 = np.ones((3, 3))
ERRORS: dict[str, Callable[[Any], Any]] = {
    "convolve-method": lambda m: m.signal.convolve(np.ones(3), np.ones(2), method="x"),
    "convolve-mode": lambda m: m.signal.convolve(np.ones(3), np.ones(2), mode="x"),
    "convolve-rank": lambda m: m.signal.convolve(np.ones(3), A2),
    "convolve-empty": lambda m: m.signal.convolve(np.ones(0), np.ones(2)),
    "convolve-list": lambda m: m.signal.convolve([1.0, 2.0], np.ones(2)),
    "fftconvolve-list": lambda m: m.signal.fftconvolve([1.0, 2.0], np.ones(2)),
    "fftconvolve-mode": lambda m: m.signal.fftconvolve(np.ones(3), np.ones(2), mode="x"),
    "fftconvolve-valid": lambda m: m.signal.fftconvolve(np.ones((3, 1)), np.ones((1, 3)),
                                                        mode="valid"),
    "fftconvolve-mapped": lambda m: m.signal.fftconvolve(A2, np.ones((2, 2)), axes=0),
    "convolve2d-boundary": lambda m: m.signal.convolve2d(A2, A2, boundary="wrap"),
    "convolve2d-fill": lambda m: m.signal.convolve2d(A2, A2, fillvalue=1.0),
    "convolve2d-rank": lambda m: m.signal.convolve2d(np.ones(3), np.ones(3)),
    "correlate2d-boundary": lambda m: m.signal.correlate2d(A2, A2, boundary="symm"),
    "correlate2d-rank": lambda m: m.signal.correlate2d(np.ones(3), np.ones(3)),
    "detrend-type": lambda m: m.signal.detrend(np.ones(4), type="quadratic"),
    "detrend-bp": lambda m: m.signal.detrend(np.ones(4), bp=[5]),
    "detrend-overwrite": lambda m: m.signal.detrend(np.ones(4), overwrite_data=True),
    "welch-average": lambda m: m.signal.welch(np.ones(8), nperseg=4, average="mode"),
    "welch-scaling": lambda m: m.signal.welch(np.ones(8), nperseg=4, scaling="x"),
    "welch-nperseg": lambda m: m.signal.welch(np.ones(8), nperseg=0),
    "welch-noverlap": lambda m: m.signal.welch(np.ones(8), nperseg=4, noverlap=4),
    "welch-nfft": lambda m: m.signal.welch(np.ones(8), nperseg=4, nfft=3),
    "welch-window-2d": lambda m: m.signal.welch(np.ones(8), window=np.ones((2, 2))),
    "welch-window-long": lambda m: m.signal.welch(np.ones(3), window=np.ones(4)),
    "welch-window-nperseg": lambda m: m.signal.welch(np.ones(8), window=np.ones(4),
                                                     nperseg=3),
    "welch-detrend": lambda m: m.signal.welch(np.ones(8), nperseg=4, detrend=True),
    "welch-list": lambda m: m.signal.welch([1.0] * 8),
    "csd-rank": lambda m: m.signal.csd(np.ones(8), A2),
    "csd-broadcast": lambda m: m.signal.csd(np.ones((2, 8)), np.ones((3, 8))),
    "stft-boundary": lambda m: m.signal.stft(np.ones(8), nperseg=4, boundary="x"),
    "istft-1d": lambda m: m.signal.istft(np.ones(4)),
    "istft-axes": lambda m: m.signal.istft(A2, time_axis=0, freq_axis=0),
    "istft-nfft": lambda m: m.signal.istft(A2, nperseg=4, nfft=3),
    "istft-noverlap": lambda m: m.signal.istft(A2, nperseg=4, noverlap=4),
    "istft-window": lambda m: m.signal.istft(A2, window=np.ones(3)),
    "istft-list": lambda m: m.signal.istft([[1.0, 2.0], [3.0, 4.0]]),
    "dct-type": lambda m: m.fft.dct(np.ones(4), type=3),
    "dct-norm": lambda m: m.fft.dct(np.ones(4), norm="forward"),
    "dctn-s": lambda m: m.fft.dctn(np.ones(4), s=(2, 2)),
    "idctn-axes": lambda m: m.fft.idctn(A2, axes=(0, 0)),
    "idct-type": lambda m: m.fft.idct(np.ones(4), type=1),
    "dct-list": lambda m: m.fft.dct([1.0, 2.0]),
    "map-coordinates-order": lambda m: m.ndimage.map_coordinates(A2, [A2, A2], order=3),
    "map-coordinates-mode": lambda m: m.ndimage.map_coordinates(A2, [A2, A2], 1, "grid-wrap"),
    "map-coordinates-len": lambda m: m.ndimage.map_coordinates(A2, [A2], order=1),
    "trapezoid-list": lambda m: m.integrate.trapezoid([1.0, 2.0]),
    "trapezoid-empty": lambda m: m.integrate.trapezoid(np.ones(0)),
    "dct-zero-length": lambda m: m.fft.dct(np.ones((2, 0))),
    "idctn-zero-length": lambda m: m.fft.idctn(A2, s=(2, 0)),
    # np.r_ turns an empty (or float) bp into float breakpoints, which JAX cannot use.
    "detrend-empty-bp": lambda m: m.signal.detrend(np.ones(4), bp=[]),
    "istft-one-frequency": lambda m: m.signal.istft(np.ones((1, 3)), nperseg=1,
                                                    boundary=False),
}

R3 = np.random.default_rng(3).standard_normal((3, 16))
# Corners where JAX's answer is its own (kept as it is): the empty cross spectrum's shape,
# the callable detrend seeing the segment axis last, lists where JAX jits its arguments.
EDGES: dict[str, Callable[[Any], Any]] = {
    "csd-empty": lambda m: m.signal.csd(np.ones((2, 0)), np.ones((2, 0))),
    "welch-empty": lambda m: m.signal.welch(np.ones((2, 0))),
    "welch-one-segment": lambda m: m.signal.welch(R3, nperseg=16),
    "welch-callable-detrend": lambda m: m.signal.welch(R3.T, nperseg=8, axis=0,
                                                       detrend=lambda d: d[..., :1] * d),
    "csd-broadcast": lambda m: m.signal.csd(R3[:1], R3, nperseg=8),
    "welch-fs-array": lambda m: m.signal.welch(R3, fs=np.float64(3.0), nperseg=8),
    "stft-nperseg-1": lambda m: m.signal.stft(R3, nperseg=1, noverlap=0),
    "stft-int": lambda m: m.signal.stft(np.arange(12), nperseg=4),
    "map-coordinates-list": lambda m: m.ndimage.map_coordinates([[1, 2], [3, 4]],
                                                                [[0.5], [0.2]], 1, cval=1),
    "map-coordinates-int-coords": lambda m: m.ndimage.map_coordinates(
        np.arange(6.0), [np.array([1, 7, -1])], 1),
    "fftconvolve-scalars": lambda m: m.signal.fftconvolve(2.0, 3.0),
    "fftconvolve-no-axes": lambda m: m.signal.fftconvolve(R3, R3, axes=()),
    "fftconvolve-repeated-axes": lambda m: m.signal.fftconvolve(R3, R3[:1], axes=(0, 0)),
    "dctn-int-s": lambda m: m.fft.dctn(R3, s=5),
    "dct-zero-batch": lambda m: m.fft.dct(np.ones((0, 3))),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_cases_match_jax(name: str) -> None:
    _compare(lambda: EDGES[name](funcgrad.scipy), lambda: EDGES[name](jsp), jit=False)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name: str) -> None:
    _compare(lambda: ERRORS[name](funcgrad.scipy), lambda: ERRORS[name](jsp), jit=False)
    with pytest.raises(Exception), warnings.catch_warnings():  # noqa: B017, PT011
        warnings.simplefilter("ignore")
        ERRORS[name](funcgrad.scipy)


def test_complex_input_warns_and_goes_two_sided() -> None:
    x = np.arange(8.0) + 1j
    with pytest.warns(UserWarning, match="complex"):
        f, _ = fsig.welch(x, nperseg=4)
    assert f.shape == (4,)
    with pytest.warns(UserWarning, match="nperseg"):
        fsig.welch(np.ones(4), nperseg=8)


def test_submodules_import_like_jax() -> None:
    import funcgrad.scipy.signal as by_import  # noqa: PLC0415

    assert by_import is funcgrad.scipy.signal
    for mod in ["signal", "fft", "ndimage", "integrate"]:
        ours, theirs = getattr(funcgrad.scipy, mod), getattr(jsp, mod)
        public = {n for n in dir(theirs) if not n.startswith("_")}
        assert public <= set(dir(ours)), public - set(dir(ours))
        assert set(ours.__all__) == public


# -------------------------------------------------------------------- 32-bit


CALLS32: dict[str, Callable[[Any, Any], Any]] = {
    "convolve": lambda m, np_: m.signal.convolve(np_.arange(5.0), np_.ones(2)),
    "convolve-int": lambda m, np_: m.signal.convolve(np_.arange(5), np_.ones(2, "int32")),
    "fftconvolve": lambda m, np_: m.signal.fftconvolve(np_.arange(5.0), np_.ones(3)),
    "correlate2d": lambda m, np_: m.signal.correlate2d(np_.ones((3, 3)), np_.ones((2, 2))),
    "detrend-int": lambda m, np_: m.signal.detrend(np_.arange(6)),
    "welch": lambda m, np_: m.signal.welch(np_.arange(16.0), nperseg=8),
    "csd": lambda m, np_: m.signal.csd(np_.arange(16.0), np_.ones(16), nperseg=8),
    "stft": lambda m, np_: m.signal.stft(np_.arange(16.0), nperseg=8),
    "istft": lambda m, np_: m.signal.istft(np_.ones((5, 4), "complex64")),
    "istft-int": lambda m, np_: m.signal.istft(np_.ones((5, 4), "int32")),
    "dct": lambda m, np_: m.fft.dct(np_.arange(4.0)),
    "dct-int": lambda m, np_: m.fft.dct(np_.arange(4)),
    "idctn": lambda m, np_: m.fft.idctn(np_.ones((3, 4))),
    "map_coordinates": lambda m, np_: m.ndimage.map_coordinates(
        np_.arange(6.0), [np_.array([0.5, 2.5])], order=1),
    "map_coordinates-int": lambda m, np_: m.ndimage.map_coordinates(
        np_.arange(6), [np_.array([0.5, 2.5])], order=1, mode="wrap"),
    "trapezoid": lambda m, np_: m.integrate.trapezoid(np_.arange(4.0), dx=0.5),
    "trapezoid-int": lambda m, np_: m.integrate.trapezoid(np_.arange(4)),
}


@pytest.mark.x32
@pytest.mark.parametrize("name", sorted(CALLS32))
def test_x32_dtypes_match_jax(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _leaves(CALLS32[name](funcgrad.scipy, fnp))
        want = _leaves(jax.jit(lambda: CALLS32[name](jsp, jnp))())
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert funcgrad.dtypes.is_weakly_typed(g) == w.weak_type
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


# ----------------------------------------------------------------- gradients

RNG = np.random.default_rng(0)
X = RNG.standard_normal(10)
K = RNG.standard_normal(3)
M = RNG.standard_normal((4, 3))
C = [np.array([0.3, 1.7, 2.2]), np.array([0.6, 0.1, 1.4])]

GRADS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "convolve": (lambda a, b: fsig.convolve(a, b, mode="same"), (X, K)),
    "correlate-fft": (lambda a, b: fsig.correlate(a, b, method="fft"), (X, K)),
    "fftconvolve-axes": (lambda a, b: fsig.fftconvolve(a, b, axes=1), (M, M[:, :2])),
    "convolve2d": (lambda a, b: fsig.convolve2d(a, b), (M, M[:2, :2])),
    "correlate2d": (lambda a, b: fsig.correlate2d(a, b, mode="valid"), (M, M[:2, :2])),
    "detrend": (lambda x: fsig.detrend(x, bp=[4]), (X,)),
    "welch": (lambda x: fsig.welch(x, nperseg=4, average="median")[1], (X,)),
    "csd": (lambda x, y: fsig.csd(x, y, nperseg=4)[1], (X, X[::-1])),
    "stft": (lambda x: fsig.stft(x, nperseg=4)[2], (X,)),
    "istft": (lambda x: fsig.istft(fsig.stft(x, nperseg=4)[2], nperseg=4)[1], (X,)),
    "dct": (lambda x: ffft.dct(x, norm="ortho", n=12), (X,)),
    "idct": (lambda x: ffft.idct(x), (X,)),
    "dctn": (lambda x: ffft.dctn(x), (M,)),
    "idctn": (lambda x: ffft.idctn(x, norm="ortho"), (M,)),
    "map_coordinates": (lambda x, c0, c1: fnd.map_coordinates(x, [c0, c1], 1, "mirror"),
                        (M, *C)),
    "trapezoid": (lambda y, x: fint.trapezoid(y, x, axis=0), (M, M.cumsum(0) ** 2)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads(name: str) -> None:
    fn, args = GRADS[name]
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


def test_jit_and_vmap() -> None:
    def f(x: Any) -> Any:
        return fsig.welch(x, nperseg=4)[1] + ffft.dct(x[:3])[0]

    xs = RNG.standard_normal((3, 10))
    want = np.stack([np.asarray(f(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(funcgrad.jit(funcgrad.vmap(f))(xs)), want,
                               rtol=1e-10)
    np.testing.assert_allclose(np.asarray(funcgrad.vmap(f)(xs)), want, rtol=1e-10)
