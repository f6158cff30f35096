"""funcgrad.numpy.fft and lax.fft: values against NumPy and JAX, derivatives against finite
differences (complex operands perturbed along their real and imaginary parts) and against
JAX's vjp (the real transforms' transposes are the subtle ones), vmap against a loop, jit
against eager, and JAX's errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.config import enable_x64
from funcgrad.testing import jax_x64_mode
from funcgrad.tree_util import tree_leaves

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
FEW = settings(SETTINGS, max_examples=4)
ORACLE = settings(SETTINGS, max_examples=2)  # JAX compiles every new shape: keep them few

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2"]
REAL_INPUT = {"rfft", "ihfft", "rfftn", "rfft2"}
NORMS = [None, "backward", "ortho", "forward"]


def _jax() -> Any:
    return pytest.importorskip("jax")


def _same(actual: Any, expected: Any, tol: float = 1e-10) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype), f"{a.dtype}{a.shape} != {e.dtype}{e.shape}"
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


def _operand(data: Any, name: str, shape: tuple[int, ...]) -> np.ndarray:
    x = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2)), label="re")
    if name in REAL_INPUT:
        return x
    y = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2)), label="im")
    return x + 1j * y


@st.composite
def one_d_call(draw: Any, name: str) -> tuple[dict[str, Any], tuple[int, ...]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=5))
    kw: dict[str, Any] = {"axis": draw(st.integers(-len(shape), len(shape) - 1)),
                          "norm": draw(st.sampled_from(NORMS))}
    if draw(st.booleans()):
        kw["n"] = draw(st.integers(1, 7))
    return kw, shape


@st.composite
def n_d_call(draw: Any, name: str) -> tuple[dict[str, Any], tuple[int, ...]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=2, max_side=4))
    kw: dict[str, Any] = {"norm": draw(st.sampled_from(NORMS))}
    two = name.endswith("2")
    if two and len(shape) < 2:
        shape = (2, *shape)
    if two or draw(st.booleans()):
        k = 2 if two else draw(st.integers(1, min(3, len(shape))))
        axes = draw(st.permutations(range(len(shape)))).copy()[:k]
        kw["axes"] = tuple(a - len(shape) if draw(st.booleans()) else a for a in axes)
        if draw(st.booleans()):
            kw["s"] = tuple(draw(st.integers(1, 5)) for _ in range(k))
    elif draw(st.booleans()):
        kw["s"] = tuple(draw(st.integers(1, 5)) for _ in range(min(3, len(shape))))
    return kw, shape


def _call(name: str) -> Any:
    return one_d_call(name) if name in ONE_D else n_d_call(name)


# ------------------------------------------------------------------- values


@pytest.mark.parametrize("name", ONE_D + N_D + TWO_D)
@SETTINGS
@given(data=st.data())
def test_values_match_numpy(name: str, data: Any) -> None:
    kw, shape = data.draw(_call(name))
    x = _operand(data, name, shape)
    np_kw = dict(kw)
    if "s" in kw and "axes" not in kw:  # NumPy 2 deprecates s without axes: same meaning
        np_kw["axes"] = tuple(range(x.ndim - len(kw["s"]), x.ndim))
    expected = getattr(np.fft, name)(x, **np_kw)
    out = getattr(fnp.fft, name)(x, **kw)
    _same(out, expected)
    _same(fg.jit(lambda v: getattr(fnp.fft, name)(v, **kw))(x), expected)


@pytest.mark.parametrize("name", ONE_D + N_D + TWO_D)
@ORACLE
@given(data=st.data())
def test_values_and_dtypes_match_jax_in_32_bits(name: str, data: Any) -> None:
    jax = _jax()
    kw, shape = data.draw(_call(name))
    x = _operand(data, name, shape).astype(np.float32 if name in REAL_INPUT else np.complex64)
    with enable_x64(False), jax_x64_mode(jax, False):
        ours = getattr(fnp.fft, name)(x, **kw)
        theirs = getattr(jax.numpy.fft, name)(x, **kw)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies_and_shifts_match_numpy(n: int, d: float) -> None:
    _same(fnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), 1e-15)
    _same(fnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), 1e-15)
    x = np.arange(n * 3.0).reshape(n, 3)
    for axes in (None, 0, (1,), (0, 1)):
        _same(fnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes), 0)
        _same(fnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes), 0)


def test_frequencies_match_jax_dtypes_and_traced_spacing() -> None:
    jax = _jax()
    with enable_x64(False), jax_x64_mode(jax, False):
        for f in ("fftfreq", "rfftfreq"):
            a, b = getattr(fnp.fft, f)(6, 0.5), getattr(jax.numpy.fft, f)(6, 0.5)
            assert a.dtype == b.dtype
            np.testing.assert_allclose(np.asarray(a), np.asarray(b))
    g = fg.grad(lambda d: fnp.sum(fnp.fft.fftfreq(4, d) ** 2))(0.5)
    np.testing.assert_allclose(g, jax.grad(lambda d: jax.numpy.sum(
        jax.numpy.fft.fftfreq(4, d) ** 2))(0.5), rtol=1e-6)


def test_lax_fft_takes_names_and_enums_and_prints_like_jax() -> None:
    x = np.arange(8.0)
    _same(lax.fft(x, "rfft", (8,)), np.fft.rfft(x))
    _same(lax.fft(x, lax.FftType.FFT, (8,)), np.fft.fft(x))  # a real operand is made complex
    _same(lax.fft(np.fft.rfft(x), 3, [8]), x)
    text = str(fg.make_jaxpr(lambda v: lax.fft(v, "rfft", (8,)))(x))
    assert "c128[5] = fft[fft_lengths=(8,) fft_type=2] a" in text


def test_errors_match_jax() -> None:
    jax = _jax()
    jnp = jax.numpy
    z = np.ones((2, 3), np.complex128)
    cases: list[Callable[[Any], Any]] = [
        lambda m: m.fft.fft(z, norm="sideways"),
        lambda m: m.fft.fftn(z, axes=(0, 0)),
        lambda m: m.fft.fft(z, axis=(0, 1)),
        lambda m: m.fft.fft2(z, axes=(0,)),
        lambda m: m.fft.fftfreq([3]),
    ]
    for case in cases:
        with pytest.raises(ValueError) as ours:
            case(fnp)
        with pytest.raises(ValueError) as theirs:
            case(jnp)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="complex"):
        fnp.fft.rfft(z)
    with pytest.raises(ValueError, match="positive"):
        fnp.fft.fft(z, n=0)


# -------------------------------------------------------------- derivatives


def _pair(a: Any, b: Any) -> float:
    """Re(sum(a * b)): the pairing under which JAX's vjp is the transpose of its jvp."""
    return float(sum(np.real(np.sum(np.asarray(x) * np.asarray(y)))
                     for x, y in zip(tree_leaves(a), tree_leaves(b))))


def _direction(rng: np.random.Generator, x: Any, part: str) -> np.ndarray:
    x = np.asarray(x)
    v = rng.standard_normal(x.shape)
    return (v if part == "re" or x.dtype.kind != "c" else 1j * v).astype(x.dtype)


def check_derivatives(f: Callable[[Any], Any], x: np.ndarray, order: int = 2,
                      eps: float = 1e-6, tol: float = 1e-6, seed: int = 0) -> None:
    """jvp against central differences along the real and imaginary parts of ``x``; vjp
    through the pairing; to ``order`` by checking the derivative functions themselves."""
    rng = np.random.default_rng(seed)
    for part in ("re", "im"):
        v = _direction(rng, x, part)
        _, t = fg.jvp(f, (x,), (v,))
        fd = (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)
        np.testing.assert_allclose(np.asarray(t), fd, rtol=tol, atol=tol,
                                   err_msg=f"jvp along the {part} parts")
        out, pull = fg.vjp(f, x)
        u = _direction(rng, out, part)
        lhs, rhs = _pair(pull(u)[0], v), _pair(u, fd)
        assert abs(lhs - rhs) <= tol * max(1.0, abs(rhs)), (part, lhs, rhs)
    if order > 1:
        v = _direction(rng, x, "re") + _direction(rng, x, "im")
        check_derivatives(lambda a: fg.jvp(f, (a,), (v,))[1], x, order - 1, eps, tol, seed + 1)
        u = _direction(rng, f(x), "re") + _direction(rng, f(x), "im")
        check_derivatives(lambda a: fg.vjp(f, a)[1](u)[0], x, order - 1, eps, tol, seed + 2)


@pytest.mark.parametrize("name", ONE_D + N_D + TWO_D)
@FEW
@given(data=st.data())
def test_derivatives_match_finite_differences(name: str, data: Any) -> None:
    kw, shape = data.draw(_call(name))
    x = _operand(data, name, shape)
    check_derivatives(lambda v: getattr(fnp.fft, name)(v, **kw), x)


@pytest.mark.parametrize("name", ONE_D + ["rfftn", "irfftn"])
@ORACLE
@given(data=st.data())
def test_vjp_and_grad_match_jax(name: str, data: Any) -> None:
    jax = _jax()
    kw, shape = data.draw(_call(name))
    x = _operand(data, name, shape)
    with jax_x64_mode(jax, True):
        out, pull = fg.vjp(lambda v: getattr(fnp.fft, name)(v, **kw), x)
        out2, pull2 = jax.vjp(lambda v: getattr(jax.numpy.fft, name)(v, **kw), x)
        rng = np.random.default_rng(0)
        u = _direction(rng, out, "re") + _direction(rng, out, "im")
        _same(out, out2)
        _same(pull(u)[0], pull2(u)[0])
        if name in REAL_INPUT:
            def loss(np_: Any) -> Callable[[Any], Any]:
                return lambda v: np_.sum(np_.abs(getattr(np_.fft, name)(v, **kw)) ** 2)

            _same(fg.grad(loss(fnp))(x), jax.grad(loss(jax.numpy))(x), 1e-8)


@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_real_transform_transposes_match_jax(n: int) -> None:
    """rfft's transpose (pad, FFT, real part) and irfft's (the doubling mask) against JAX,
    over several transformed axes."""
    jax = _jax()
    rng = np.random.default_rng(n)
    with jax_x64_mode(jax, True):
        for lengths in ((n,), (3, n), (2, 2, n)):
            x = rng.standard_normal((2, *lengths))
            spec = np.fft.rfftn(x, axes=range(1, x.ndim))
            u = rng.standard_normal(spec.shape) + 1j * rng.standard_normal(spec.shape)
            for typ, arg, ct in (("rfft", x, u), ("irfft", spec, x)):
                ours = fg.vjp(lambda v, t=typ, n=lengths: lax.fft(v, t, n), arg)[1](ct)[0]
                theirs = jax.vjp(lambda v, t=typ, n=lengths: jax.lax.fft(v, t, n), arg)[1](ct)[0]
                _same(ours, theirs)


# --------------------------------------------------------------- transforms


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "irfftn", "hfft"])
@FEW
@given(data=st.data())
def test_vmap_matches_loop(name: str, data: Any) -> None:
    kw, shape = data.draw(_call(name))
    x = _operand(data, name, (3, *shape))
    axis = data.draw(st.integers(0, len(shape)))
    xb = np.moveaxis(x, 0, axis)

    def f(v: Any) -> Any:
        return getattr(fnp.fft, name)(v, **kw)

    _same(fg.vmap(f, in_axes=axis)(xb), np.stack([np.asarray(f(r)) for r in x]))
    g = fg.vmap(fg.grad(lambda v: fnp.sum(fnp.abs(f(v)) ** 2)), in_axes=axis)(xb)
    _same(g, np.stack([np.asarray(fg.grad(lambda v: fnp.sum(fnp.abs(f(v)) ** 2))(r))
                       for r in x]))


def test_jit_of_gradient_matches_eager() -> None:
    x = np.random.default_rng(0).standard_normal(16)

    def loss(v: Any) -> Any:
        return fnp.sum(fnp.abs(fnp.fft.rfft(v) * fnp.arange(9.0)) ** 2)

    _same(fg.jit(fg.grad(loss))(x), fg.grad(loss)(x))
    _same(fg.jit(fg.hessian(loss))(x), fg.hessian(loss)(x))
