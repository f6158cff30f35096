"""Gradients through ``real``/``imag``/``abs`` of complex values on "cuda" arrays (CuPy, or
the CuPy emulator of tests/support/fakecupy): the backward rules' constants must be made on
the operand's device, or mixing them with device cotangents raises DeviceError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gpu_values import host as _host

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.devices import get_backend

A = np.random.default_rng(11).standard_normal((2, 3, 3))


def _np_loss(part: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], float]:
    return lambda a: float(np.sum(part(np.linalg.eigvals(a))))


# (funcgrad loss, the same loss in NumPy for finite differences); eigvals are unordered, so
# each loss is a symmetric function of them
CASES: dict[str, tuple[Callable[[Any], Any], Callable[[np.ndarray], float]]] = {
    "real": (lambda a: fnp.sum(fnp.real(fnp.linalg.eigvals(a))), _np_loss(np.real)),
    "imag": (lambda a: fnp.sum(fnp.imag(fnp.linalg.eigvals(a)) ** 2),
             _np_loss(lambda w: np.imag(w) ** 2)),
    "abs": (lambda a: fnp.sum(fnp.abs(fnp.linalg.eigvals(a))), _np_loss(np.abs)),
    "complex": (lambda a: fnp.sum(fnp.abs(fnp.real(fnp.linalg.eigvals(a)) + 2j * a[..., 0])),
                lambda a: float(np.sum(np.abs(np.real(np.linalg.eigvals(a)) + 2j * a[..., 0])))),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("jitted", [False, True])
def test_grad_of_complex_parts_stays_on_the_device(name: str, jitted: bool) -> None:
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator (CuPy's wheel and g++ are needed)")
    loss, oracle = CASES[name]
    grad_fn = fg.grad(loss)
    g = (fg.jit(grad_fn) if jitted else grad_fn)(fg.device_put(A, "cuda"))
    assert g.device.platform == "cuda"
    gh = _host(g)
    rng = np.random.default_rng(5)
    for _ in range(2):
        d = rng.standard_normal(A.shape)
        h = 1e-6
        fd = (oracle(A + h * d) - oracle(A - h * d)) / (2 * h)
        np.testing.assert_allclose(np.sum(gh * d), fd, rtol=1e-5, atol=1e-6)
