"""funcgrad.image against jax.image: resize and scale_and_translate over every method, with
and without antialiasing, on drawn shapes; dtypes; errors; derivatives (numerically, and
with respect to the scale and translation against JAX's); jit and vmap."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import image
from funcgrad.testing import check_grads

jax = pytest.importorskip("jax")
jimage = pytest.importorskip("jax.image")

SETTINGS = settings(max_examples=15, deadline=None)
METHODS = ["nearest", "linear", "bilinear", "trilinear", "cubic", "bicubic", "tricubic",
           "lanczos3", "lanczos5", "area", "cubic-pytorch"]
sizes = st.integers(1, 7)


def _close(a: Any, b: Any, tol: float = 2e-5) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.x32
@SETTINGS
@given(method=st.sampled_from(METHODS), antialias=st.booleans(),
       shape=st.tuples(st.integers(1, 2), sizes, sizes), out=st.tuples(sizes, sizes),
       dtype=st.sampled_from([np.float32, np.float16, np.int32]), seed=st.integers(0, 99))
def test_resize_matches_jax(method: str, antialias: bool, shape: tuple[int, ...],
                            out: tuple[int, int], dtype: Any, seed: int) -> None:
    x = (np.random.default_rng(seed).normal(size=shape) * 4).astype(dtype)
    want = jimage.resize(x, (shape[0], *out), method, antialias=antialias)
    got = image.resize(x, (shape[0], *out), method, antialias=antialias)
    _close(got, want, 2e-2 if dtype == np.float16 else 2e-5)


@pytest.mark.x32
@settings(max_examples=6, deadline=None)  # JAX compiles each op per new shape: slow
@given(method=st.sampled_from([m for m in METHODS if m != "nearest"]),
       antialias=st.booleans(), shape=st.tuples(sizes, sizes), out=st.tuples(sizes, sizes),
       scale=st.tuples(st.floats(0.3, 3.0), st.floats(0.3, 3.0)),
       shift=st.tuples(st.floats(-2.0, 2.0), st.floats(-2.0, 2.0)), seed=st.integers(0, 99))
def test_scale_and_translate_matches_jax(method: str, antialias: bool,
                                         shape: tuple[int, int], out: tuple[int, int],
                                         scale: tuple[float, float],
                                         shift: tuple[float, float], seed: int) -> None:
    x = np.random.default_rng(seed).normal(size=(2, *shape)).astype(np.float32)
    s, t = np.array(scale, np.float32), np.array(shift, np.float32)
    want = jimage.scale_and_translate(x, (2, *out), (1, 2), s, t, method, antialias)
    got = image.scale_and_translate(x, (2, *out), (1, 2), s, t, method, antialias)
    _close(got, want, 1e-4)


@pytest.mark.x32
@settings(max_examples=4, deadline=None)
@given(method=st.sampled_from(["linear", "cubic", "lanczos3", "lanczos5"]),
       scale=st.tuples(st.floats(0.4, 2.5), st.floats(0.4, 2.5)),
       shift=st.tuples(st.floats(-1.0, 1.0), st.floats(-1.0, 1.0)), seed=st.integers(0, 99))
def test_gradient_in_scale_and_translation_matches_jax(method: str,
                                                       scale: tuple[float, float],
                                                       shift: tuple[float, float],
                                                       seed: int) -> None:
    x = np.random.default_rng(seed).normal(size=(5, 6)).astype(np.float32)

    def loss(mod: Any) -> Any:
        return lambda s, t: (mod.scale_and_translate(x, (4, 7), (0, 1), s, t, method)
                             ** 2).sum()

    s, t = np.array(scale, np.float32), np.array(shift, np.float32)
    want = jax.grad(loss(jimage), (0, 1))(s, t)
    got = fg.grad(loss(image), (0, 1))(s, t)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-3, atol=2e-3)


@settings(max_examples=8, deadline=None)
@given(method=st.sampled_from([m for m in METHODS if m != "nearest"]),
       antialias=st.booleans(), shape=st.tuples(sizes, sizes), out=st.tuples(sizes, sizes),
       seed=st.integers(0, 99))
def test_grads_in_the_image(method: str, antialias: bool, shape: tuple[int, int],
                            out: tuple[int, int], seed: int) -> None:
    x = np.random.default_rng(seed).normal(size=shape)
    check_grads(lambda v: fg.numpy.sin(image.resize(v, out, method, antialias)), (x,),
                order=2)


def test_grads_in_scale_numerically() -> None:
    x = np.random.default_rng(0).normal(size=(6,))
    check_grads(lambda s, t: image.scale_and_translate(x, (5,), (0,), s, t, "lanczos3"),
                (np.array([0.83]), np.array([0.31])), order=2)


@pytest.mark.x32
def test_jit_and_vmap() -> None:
    x = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)
    want = jax.vmap(lambda im: jimage.resize(im, (7, 2), "cubic"))(x)
    _close(fg.vmap(lambda im: image.resize(im, (7, 2), "cubic"))(x), want)
    _close(fg.jit(lambda im: image.resize(im, (3, 7, 2), "cubic"))(x), want)
    s = np.array([[1.5, 0.7], [0.9, 1.1], [2.0, 0.5]], np.float32)
    want = jax.vmap(lambda sc: jimage.scale_and_translate(x[0], (4, 5), (0, 1), sc,
                                                          np.zeros(2, np.float32),
                                                          "linear"))(s)
    got = fg.vmap(lambda sc: image.scale_and_translate(x[0], (4, 5), (0, 1), sc,
                                                       np.zeros(2, np.float32), "linear"))(s)
    _close(got, want)


def test_methods_and_errors_as_jax() -> None:
    assert image.ResizeMethod.from_string("bilinear") is image.ResizeMethod.LINEAR
    assert [m.name for m in image.ResizeMethod] == [m.name for m in jimage.ResizeMethod]
    x = np.ones((2, 2), np.float32)
    for call in (lambda m: m.resize(x, (3,), "linear"),
                 lambda m: m.resize(x, (3, 3), "bogus"),
                 lambda m: m.scale_and_translate(x, (3, 3), (0, 1), np.ones(2), np.zeros(2),
                                                 "nearest")):
        with pytest.raises(ValueError) as want:
            call(jimage)
        with pytest.raises(ValueError) as got:
            call(image)
        assert str(got.value).split(";")[0] == str(want.value).split(";")[0]
    _close(image.resize(x, (3, 3), image.ResizeMethod.LANCZOS3, precision="highest"),
           jimage.resize(x, (3, 3), jimage.ResizeMethod.LANCZOS3, precision="highest"))
