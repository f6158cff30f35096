"""funcgrad.nn.initializers against jax.nn.initializers, in both x64 modes, and JAX-free
checks (statistics, dtypes, shapes, errors).

The uniform-based initializers (and zeros/ones/constant) are compared bit for bit; the
normal-based ones go through erf_inv, which agrees with XLA's to a few ulps, so they are
compared with rtol 1e-6 (float32) / 1e-12 (float64).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import random
from funcgrad.nn import initializers as fi
from funcgrad.testing import jax_x64_mode

X64 = pytest.mark.parametrize("x64", [pytest.param(False, marks=pytest.mark.x32), True],
                              ids=["x32", "x64"])
SHAPES = [(5, 7), (3, 3, 16, 32)]  # dense and conv (HWIO) kernels; 3-D ones in EXTRA

# name -> builder taking the initializers module (JAX's or funcgrad's)
Build = Callable[[Any], Any]
EXACT: dict[str, Build] = {
    "zeros": lambda m: m.zeros,
    "ones": lambda m: m.ones,
    "constant": lambda m: m.constant(-0.3),
    "uniform": lambda m: m.uniform(),
    "uniform_scale": lambda m: m.uniform(7.5),
    "glorot_uniform": lambda m: m.glorot_uniform(),
    "xavier_uniform": lambda m: m.xavier_uniform(),
    "he_uniform": lambda m: m.he_uniform(),
    "kaiming_uniform": lambda m: m.kaiming_uniform(),
    "lecun_uniform": lambda m: m.lecun_uniform(),
    "vs_fan_out_uniform": lambda m: m.variance_scaling(0.7, "fan_out", "uniform"),
    "vs_geo_uniform": lambda m: m.variance_scaling(1.3, "fan_geo_avg", "uniform"),
    "vs_axes_uniform": lambda m: m.variance_scaling(
        1.0, "fan_avg", "uniform", in_axis=(0, 1), out_axis=-1, batch_axis=-2),
}
CLOSE: dict[str, Build] = {
    "normal": lambda m: m.normal(),
    "normal_std": lambda m: m.normal(3.0),
    "truncated_normal": lambda m: m.truncated_normal(),
    "truncated_normal_bounds": lambda m: m.truncated_normal(2.0, lower=-1.0, upper=1.5),
    "glorot_normal": lambda m: m.glorot_normal(),
    "xavier_normal": lambda m: m.xavier_normal(),
    "he_normal": lambda m: m.he_normal(),
    "kaiming_normal": lambda m: m.kaiming_normal(),
    "lecun_normal": lambda m: m.lecun_normal(),
    "vs_fan_in_normal": lambda m: m.variance_scaling(2.0, "fan_in", "normal"),
    "vs_axes_tn": lambda m: m.variance_scaling(
        0.5, "fan_out", "truncated_normal", in_axis=0, out_axis=(-1,)),
}


# The dtype- and key-specific cases, checked in x64 mode: (builder, shape, dtype, typed key)
EXTRA: dict[str, tuple[Build, tuple[int, ...], Any, bool]] = {
    "f32_glorot_uniform": (EXACT["glorot_uniform"], (4, 6), np.float32, False),
    "f32_constant": (EXACT["constant"], (4, 6), np.float32, False),
    "f32_he_normal": (CLOSE["he_normal"], (4, 6), np.float32, False),
    "builder_dtype": (lambda m: m.lecun_uniform(dtype=np.float32), (4, 6), None, False),
    "typed_key": (EXACT["he_uniform"], (8, 5), None, True),
    "conv1d_glorot_uniform": (EXACT["glorot_uniform"], (2, 4, 6), None, False),
    "conv1d_he_normal": (CLOSE["he_normal"], (2, 4, 6), None, False),
    "one_dim": (lambda m: m.variance_scaling(1.0, "fan_in", "uniform", in_axis=0, out_axis=0),
                (5,), None, False),
    **{f"c128_{d}": ((lambda m, d=d: m.variance_scaling(1.0, "fan_avg", d)), (6, 4),
                     np.complex128, False)
       for d in ("uniform", "truncated_normal")},
}


def _jax() -> Any:
    return pytest.importorskip("jax")


def _cases(x64: bool) -> dict[tuple[str, tuple[int, ...]], tuple[Build, Any, bool]]:
    cases = {(n, s): (b, None, False) for table in (EXACT, CLOSE) for n, b in table.items()
             for s in SHAPES}
    if x64:
        cases.update({(n, s): (b, d, t) for n, (b, s, d, t) in EXTRA.items()})
    return cases


@functools.cache
def _oracle(x64: bool) -> dict[tuple[str, tuple[int, ...]], np.ndarray]:
    """Every case's JAX value, from one jitted program per mode (one compile, not one per
    op and shape: eager JAX compiles each op for each new shape, which is slow). All cases
    use key 0, so XLA shares the samples of a shape between the initializers."""
    jax = _jax()
    cases = _cases(x64)

    def run() -> dict[str, Any]:
        out = {}
        for i, ((_, shape), (build, dtype, typed)) in enumerate(cases.items()):
            key = jax.random.key(0) if typed else jax.random.PRNGKey(0)
            out[str(i)] = build(jax.nn.initializers)(key, shape, dtype)
        return out

    with jax_x64_mode(jax, x64):
        got = jax.jit(run)()
        return {c: np.asarray(got[str(i)]) for i, c in enumerate(cases)}


def _both(name: str, shape: tuple[int, ...], x64: bool) -> tuple[np.ndarray, np.ndarray]:
    want = _oracle(x64)[(name, shape)]
    build, dtype, typed = _cases(x64)[(name, shape)]
    key = random.key(0) if typed else random.PRNGKey(0)
    return np.asarray(build(fi)(key, shape, dtype)), want


def _tol(dt: np.dtype) -> float:
    return 1e-6 if np.finfo(dt).bits <= 32 else 1e-12


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = _tol(got.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * float(np.abs(want).max()))


@X64
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(EXACT))
def test_uniform_based_bit_for_bit(name: str, shape: tuple[int, ...], x64: bool) -> None:
    got, want = _both(name, shape, x64)
    assert got.dtype == want.dtype == (np.float64 if x64 else np.float32)
    np.testing.assert_array_equal(got, want)


@X64
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(CLOSE))
def test_normal_based_close(name: str, shape: tuple[int, ...], x64: bool) -> None:
    got, want = _both(name, shape, x64)
    assert got.dtype == want.dtype == (np.float64 if x64 else np.float32)
    _close(got, want)


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_dtypes_keys_and_axes(name: str) -> None:
    """Explicit float32 in x64 mode, a builder's default dtype, typed keys, a 1-D kernel
    with explicit axes (receptive field 1/5, so fan_in 1, as in JAX), complex dtypes."""
    build, shape, dtype, _ = EXTRA[name]
    got, want = _both(name, shape, True)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)
    if name.startswith("c128") or "normal" in name:
        _close(got, want)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kwargs", [
    {"scale": 1.0, "mode": "fan_sum", "distribution": "uniform"},
    {"scale": 1.0, "mode": "fan_in", "distribution": "cauchy"},
], ids=["mode", "distribution"])
def test_bad_mode_or_distribution_raise_on_call(kwargs: dict[str, Any]) -> None:
    init = fi.variance_scaling(**kwargs)  # builds fine, as in JAX
    with pytest.raises(ValueError, match="invalid"):
        init(random.PRNGKey(0), (3, 4))
    jax = _jax()
    with pytest.raises(ValueError, match="invalid"):
        jax.nn.initializers.variance_scaling(**kwargs)(jax.random.PRNGKey(0), (3, 4))


def test_one_dimensional_shape_needs_in_axis() -> None:
    with pytest.raises(ValueError, match="in_axis"):
        fi.glorot_uniform()(random.PRNGKey(0), (5,))
    x = fi.variance_scaling(1.0, "fan_in", "uniform", in_axis=0, out_axis=0)(
        random.PRNGKey(0), (5,))
    assert x.shape == (5,) and float(np.abs(np.asarray(x)).max()) <= np.sqrt(3)


# -------------------------------------------------------------- JAX-free


def test_fans() -> None:
    assert fi._compute_fans((4, 6)) == (4.0, 6.0)
    assert fi._compute_fans((3, 3, 16, 32)) == (144.0, 288.0)
    assert fi._compute_fans((2, 3, 4, 5), in_axis=(0, 1), out_axis=-1, batch_axis=-2) == (
        6.0, 5.0)


@pytest.mark.parametrize(("build", "variance"), [
    (fi.he_normal(), 2 / 400),
    (fi.he_uniform(), 2 / 400),
    (fi.glorot_normal(), 2 / (400 + 300)),
    (fi.lecun_uniform(), 1 / 400),
    (fi.variance_scaling(3.0, "fan_out", "normal"), 3 / 300),
    (fi.variance_scaling(1.0, "fan_geo_avg", "uniform"), 1 / np.sqrt(400 * 300)),
    (fi.normal(0.5), 0.25),
    (fi.uniform(2.0), 4 / 12),
], ids=["he_normal", "he_uniform", "glorot_normal", "lecun_uniform", "vs_normal", "vs_geo",
        "normal", "uniform"])
def test_sample_variance(build: Any, variance: float) -> None:
    x = np.asarray(build(random.PRNGKey(7), (400, 300)))
    assert x.shape == (400, 300) and x.dtype == np.float64
    np.testing.assert_allclose(x.var(), variance, rtol=0.02)


def test_truncation_bounds() -> None:
    x = np.asarray(fi.truncated_normal(2.0, lower=-1.0, upper=0.5)(random.PRNGKey(0), (1000,)))
    assert x.min() > -2.0 and x.max() < 1.0
    std = np.sqrt(1 / 50) / 0.87962566103423978
    y = np.asarray(fi.lecun_normal()(random.PRNGKey(0), (50, 40)))
    assert np.abs(y).max() < 2 * std


@pytest.mark.x32
def test_default_dtypes_x32() -> None:
    key = random.PRNGKey(0)
    for init in [fi.zeros, fi.ones, fi.constant(2), fi.uniform(), fi.normal(), fi.he_normal()]:
        assert init(key, (2, 3)).dtype == np.float32
    assert fi.glorot_uniform()(key, (2, 3), np.float64).dtype == np.float32


def test_default_dtypes_x64_and_shapes() -> None:
    key = random.PRNGKey(0)
    assert fi.he_uniform()(key, (2, 3)).dtype == np.float64
    assert fi.constant(2, np.float32)(key, (2,)).dtype == np.float32
    assert fi.he_uniform()(key, [3, 3, 2, 4]).shape == (3, 3, 2, 4)
    np.testing.assert_array_equal(np.asarray(fi.constant(2.5)(key, (2, 2))), np.full((2, 2), 2.5))


def test_initializer_protocol_and_names() -> None:
    for name in fi.__all__:
        assert hasattr(fi, name)
    assert isinstance(fi.zeros, fi.Initializer)
    assert isinstance(fi.he_normal(), fi.Initializer)
    assert fi.xavier_uniform is fi.glorot_uniform and fi.kaiming_normal is fi.he_normal
    with pytest.raises(NotImplementedError):
        fi.zeros(random.PRNGKey(0), (2,), out_sharding=object())


@pytest.mark.parametrize("shape,axis", [((2, 3), -1), ((3, 2), -1), ((4, 3, 2), -1),
                                        ((2, 3, 4), 0), ((3, 3), 0), ((0, 3), -1)])
@pytest.mark.x32
def test_orthogonal_matches_jax(shape, axis):
    jax = pytest.importorskip("jax")
    ours = np.asarray(fg.nn.initializers.orthogonal(2.0, axis)(fg.random.key(42), shape))
    theirs = np.asarray(jax.nn.initializers.orthogonal(2.0, axis)(jax.random.key(42), shape))
    np.testing.assert_allclose(ours, theirs, atol=2e-6)


@pytest.mark.parametrize("shape", [(3, 2, 2), (3, 3, 2, 3), (3, 3, 3, 2, 2), (2, 3, 2)])
@pytest.mark.x32
def test_delta_orthogonal_matches_jax(shape):
    jax = pytest.importorskip("jax")
    got = []
    for L in (fg, jax):
        try:
            got.append(np.asarray(L.nn.initializers.delta_orthogonal()(L.random.key(1), shape)))
        except ValueError as e:
            got.append(str(e))
    if isinstance(got[0], str):
        assert got[0] == got[1]
    else:
        np.testing.assert_allclose(got[0], got[1], atol=2e-6)
