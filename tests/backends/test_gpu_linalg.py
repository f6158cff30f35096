"""The matrix decompositions on "cuda" arrays: cuSOLVER/cuBLAS through CuPy, or the CuPy
emulator (tests/support/fakecupy) where CuPy finds no device.

Each decomposition primitive (cholesky, triangular_solve, lu, qr, svd, eigh, eig) is run on
a batch of matrices placed on the device: its values against NumPy/SciPy on the host, the
gradient of a scalar loss against central finite differences, ``vmap`` against a loop, and
``jit(value_and_grad)``, which must keep everything on the device (the emulator counts the
copies between host and device: none after the compile).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg
from gpu_values import host as _host

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl
from funcgrad import lax
from funcgrad.devices import get_backend

RNG = np.random.default_rng(7)
BATCH, N = 3, 4


def _cupy() -> Any:
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator (CuPy's wheel and g++ are needed)")
    import cupy  # noqa: PLC0415

    return cupy


def _on_cuda(x: Any) -> bool:
    return bool(x.device.platform == "cuda")


def _inputs() -> dict[str, np.ndarray]:
    g = RNG.standard_normal((BATCH, N, N))
    q = np.linalg.qr(RNG.standard_normal((BATCH, N, N)))[0]
    spaced = np.linspace(1.0, 2.0, N)
    return {
        "general": (q * spaced[None, None, :]) @ np.linalg.qr(g)[0].transpose(0, 2, 1),
        "spd": g @ g.transpose(0, 2, 1) / N + np.eye(N),
        "sym": (q * (spaced - 1.5)[None, None, :]) @ q.transpose(0, 2, 1),
        "lower": np.tril(g) + 3 * np.eye(N),
        "tall": RNG.standard_normal((BATCH, N + 2, N)),
        "rhs": RNG.standard_normal((BATCH, N, 2)),
    }


DATA = _inputs()
W = RNG.uniform(0.5, 1.5, (N + 2, N + 2))
_DEVICE_W: dict[str, Any] = {}


def _w(shape: tuple[int, ...]) -> np.ndarray:
    """A fixed weight of the trailing shape: sign-invariant losses of vectors use w * v**2."""
    return W[:shape[-2], :shape[-1]] if len(shape) >= 2 else W[0, :shape[-1]]


def _dw(shape: tuple[int, ...]) -> Any:
    """``_w(shape)`` on the device (user constants must be where the data is)."""
    key = str(shape[-2:])
    if key not in _DEVICE_W:
        _DEVICE_W[key] = fg.device_put(_w(shape), "cuda")
    return _DEVICE_W[key]


@pytest.fixture(autouse=True)
def _fresh_device_constants() -> None:
    _DEVICE_W.clear()  # each test places its own (the emulator is installed per test)


def _rhs() -> Any:
    if "rhs" not in _DEVICE_W:
        _DEVICE_W["rhs"] = fg.device_put(DATA["rhs"], "cuda")
    return _DEVICE_W["rhs"]


# name -> (input key, loss, NumPy/SciPy forward oracle of that loss, which part is symmetric)
def _cholesky_loss(a: Any) -> Any:
    return fnp.sum(fnp.linalg.cholesky(a) * _dw((N, N)))


def _trsolve_loss(a: Any) -> Any:
    x = fsl.solve_triangular(a, _rhs()[:a.shape[0]], lower=True)
    return fnp.sum(x * _dw((N, 2)))


def _lu_loss(a: Any) -> Any:
    lu_, _, _ = lax.linalg.lu(a)
    return fnp.sum(lu_ * _dw((N, N)))


def _qr_loss(a: Any) -> Any:
    q, r = fnp.linalg.qr(a)
    return fnp.sum(_dw(q.shape) * q ** 2) + fnp.sum(_dw(r.shape) * r ** 2)


def _svd_loss(a: Any) -> Any:
    u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    return fnp.sum(s) + fnp.sum(_dw(u.shape) * u ** 2) + fnp.sum(_dw(vh.shape) * vh ** 2)


def _eigh_loss(a: Any) -> Any:
    w, v = fnp.linalg.eigh(a)
    return fnp.sum(w * _dw((N,))) + fnp.sum(_dw(v.shape) * v ** 2)


def _eigvals_loss(a: Any) -> Any:
    w = fnp.linalg.eigvals(a)
    return fnp.sum(fnp.abs(w) ** 2)  # eigvals are unordered: a symmetric function of them


def _np_cholesky(a: np.ndarray) -> float:
    return float(np.sum(np.linalg.cholesky((a + a.transpose(0, 2, 1)) / 2) * _w((N, N))))


def _np_trsolve(a: np.ndarray) -> float:
    x = np.stack([scipy.linalg.solve_triangular(m, b, lower=True)
                  for m, b in zip(a, DATA["rhs"])])
    return float(np.sum(x * _w((N, 2))))


def _np_lu(a: np.ndarray) -> float:
    return float(sum(np.sum(scipy.linalg.lu_factor(m)[0] * _w((N, N))) for m in a))


def _np_qr(a: np.ndarray) -> float:
    q, r = np.linalg.qr(a)
    return float(np.sum(_w(q.shape) * q ** 2) + np.sum(_w(r.shape) * r ** 2))


def _np_svd(a: np.ndarray) -> float:
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return float(np.sum(s) + np.sum(_w(u.shape) * u ** 2) + np.sum(_w(vh.shape) * vh ** 2))


def _np_eigh(a: np.ndarray) -> float:
    w, v = np.linalg.eigh((a + a.transpose(0, 2, 1)) / 2)
    return float(np.sum(w * _w((N,))) + np.sum(_w(v.shape) * v ** 2))


def _np_eigvals(a: np.ndarray) -> float:
    return float(np.sum(np.abs(np.linalg.eigvals(a)) ** 2))


CASES: dict[str, tuple[str, Callable[[Any], Any], Callable[[np.ndarray], float], str]] = {
    "cholesky": ("spd", _cholesky_loss, _np_cholesky, "sym"),
    "triangular_solve": ("lower", _trsolve_loss, _np_trsolve, "lower"),
    "lu": ("general", _lu_loss, _np_lu, "any"),
    "qr": ("tall", _qr_loss, _np_qr, "any"),
    "svd": ("general", _svd_loss, _np_svd, "any"),
    "eigh": ("sym", _eigh_loss, _np_eigh, "sym"),
    "eig": ("general", _eigvals_loss, _np_eigvals, "any"),
}


def _direction(kind: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    d = rng.standard_normal(shape)
    if kind == "sym":
        return d + np.swapaxes(d, -1, -2)
    if kind == "lower":
        return np.tril(d)
    return d


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_decomposition_value_and_grad_on_device(name: str) -> None:
    _cupy()
    key, loss, oracle, kind = CASES[name]
    ah = DATA[key]
    a = fg.device_put(ah, "cuda")
    value, grad = fg.value_and_grad(loss)(a)
    assert _on_cuda(value) and _on_cuda(grad)
    np.testing.assert_allclose(float(_host(value)), oracle(ah), rtol=1e-10)
    g = _host(grad)
    rng = np.random.default_rng(3)
    for _ in range(2):
        d = _direction(kind, ah.shape, rng)
        h = 1e-6
        fd = (oracle(ah + h * d) - oracle(ah - h * d)) / (2 * h)
        np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_decomposition_vmap_on_device_matches_a_loop(name: str) -> None:
    _cupy()
    key, loss, _, _ = CASES[name]
    a = fg.device_put(DATA[key], "cuda")

    def one(m: Any) -> Any:
        return fg.grad(loss)(m[None])[0]

    got = fg.vmap(one)(a)
    assert _on_cuda(got)
    want = np.stack([_host(one(a[i])) for i in range(BATCH)])
    np.testing.assert_allclose(_host(got), want, rtol=1e-9, atol=1e-12)


@pytest.mark.gpu
def test_decomposition_forward_values_on_device() -> None:
    _cupy()
    d = {k: fg.device_put(v, "cuda") for k, v in DATA.items()}
    spd, general, tall = DATA["spd"], DATA["general"], DATA["tall"]
    np.testing.assert_allclose(_host(fnp.linalg.cholesky(d["spd"])), np.linalg.cholesky(spd),
                               rtol=1e-12)
    x = fsl.solve_triangular(d["lower"], d["rhs"], lower=True, trans=1)
    want = np.stack([scipy.linalg.solve_triangular(m, b, lower=True, trans=1)
                     for m, b in zip(DATA["lower"], DATA["rhs"])])
    np.testing.assert_allclose(_host(x), want, rtol=1e-12)
    lu_, piv, perm = lax.linalg.lu(d["general"])
    for i, m in enumerate(general):
        lu_want, piv_want = scipy.linalg.lu_factor(m)
        np.testing.assert_allclose(_host(lu_)[i], lu_want, rtol=1e-12, atol=1e-14)
        np.testing.assert_array_equal(_host(piv)[i], piv_want)
        # JAX's permutation: a[perm] == L @ U, with scipy's a == P @ L @ U
        np.testing.assert_array_equal(_host(perm)[i], np.argmax(scipy.linalg.lu(m)[0], 0))
    q, r = fnp.linalg.qr(d["tall"])
    np.testing.assert_allclose(_host(q) @ _host(r), tall, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.abs(_host(r)), np.abs(np.linalg.qr(tall)[1]), rtol=1e-10)
    np.testing.assert_allclose(_host(fnp.linalg.svd(d["general"], compute_uv=False)),
                               np.linalg.svd(general, compute_uv=False), rtol=1e-12)
    w, v = fnp.linalg.eigh(d["sym"])
    np.testing.assert_allclose(_host(w), np.linalg.eigvalsh(DATA["sym"]), atol=1e-12)
    w = fnp.linalg.eigvals(d["general"])
    assert _on_cuda(w) and w.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(_host(w)),
                               np.sort_complex(np.linalg.eigvals(general)), atol=1e-10)


@pytest.mark.gpu
def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan_on_device() -> None:
    _cupy()
    bad = np.stack([DATA["spd"][0], -DATA["spd"][1], DATA["spd"][2]])
    got = _host(fnp.linalg.cholesky(fg.device_put(bad, "cuda")))
    # as JAX: the failed matrix's factor is NaN on and below the diagonal, 0 above
    low = np.tri(got.shape[-1], dtype=bool)
    assert np.isnan(got[1][low]).all() and (got[1][~low] == 0).all()
    np.testing.assert_allclose(got[[0, 2]], np.linalg.cholesky(bad[[0, 2]]), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jitted_value_and_grad_stays_on_the_device(fake_cupy: Any, name: str) -> None:
    import fakecupy  # noqa: PLC0415 - tests/support, on the path in the test session

    key, loss, oracle, _ = CASES[name]
    a = fg.device_put(DATA[key], "cuda")
    step = fg.jit(fg.value_and_grad(loss))
    step(a)  # compile: constants go up once
    with fakecupy.counting() as c:
        value, grad = step(a)
        value, grad = step(a)
    assert (c.h2d, c.d2h, c.syncs) == (0, 0, 0), (name, c)
    assert _on_cuda(value) and _on_cuda(grad)
    np.testing.assert_allclose(float(_host(value)), oracle(DATA[key]), rtol=1e-10)
