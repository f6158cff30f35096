"""funcgrad.numpy.linalg against NumPy (values) and JAX (values and gradients)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import ShapeError
from funcgrad.testing import check_grads

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
B = RNG.standard_normal((2, 3, 2))
V = RNG.standard_normal(3)
SPD = A @ np.swapaxes(A, -1, -2) + np.eye(3)
TALL = RNG.standard_normal((4, 3))

# name -> (call with a linalg module, operands); each is compared on values with NumPy's and
# JAX's linalg and on the gradient of sum(out**2) with JAX's.
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "solve": (lambda L, a, b: L.solve(a, b), (A, B)),
    "solve[vector]": (lambda L, a, v: L.solve(a[0], v), (A, V)),
    "inv": (lambda L, a: L.inv(a), (A,)),
    "det": (lambda L, a: L.det(a), (A,)),
    "slogdet": (lambda L, a: L.slogdet(a)[1], (A,)),
    "slogdet[sign]": (lambda L, a: L.slogdet(-a)[0], (A,)),
    "cholesky": (lambda L, a: L.cholesky(a), (SPD,)),
    "eigh": (lambda L, a: L.eigh(a)[0], (SPD,)),
    "eigvalsh": (lambda L, a: L.eigvalsh(a), (SPD,)),
    "svdvals": (lambda L, a: L.svdvals(a), (A,)),
    "svd": (lambda L, a: L.svd(a, compute_uv=False), (TALL,)),
    "qr[r]": (lambda L, a: abs(L.qr(a, mode="r")), (TALL,)),
    "pinv": (lambda L, a: L.pinv(a), (TALL,)),
    "lstsq": (lambda L, a, b: L.lstsq(a, b[0, :, 0].repeat(2)[:4])[0], (TALL, B)),
    "matrix_power": (lambda L, a: L.matrix_power(a, 3), (A,)),
    "matrix_power[-2]": (lambda L, a: L.matrix_power(a, -2), (A,)),
    "cond": (lambda L, a: L.cond(a), (A,)),
    "cond[1]": (lambda L, a: L.cond(a, 1), (A,)),
    "norm[2]": (lambda L, a: L.norm(a, 2, axis=(-2, -1)), (A,)),
    "norm[nuc]": (lambda L, a: L.norm(a[0], "nuc"), (A,)),
    "matrix_norm": (lambda L, a: L.matrix_norm(a, ord=-2), (A,)),
    "vector_norm": (lambda L, a: L.vector_norm(a, axis=(0, 2), ord=3), (A,)),
    "tensorinv": (lambda L, a: L.tensorinv(a[0].reshape(3, 3), ind=1), (A,)),
    "tensorsolve": (lambda L, a, b: L.tensorsolve(a[0], b[0, :, 0]), (A, B)),
    "multi_dot": (lambda L, a, t: L.multi_dot([t, a[0], a[1], V]), (A, TALL)),
    "cross": (lambda L, a, b: L.cross(a, b[..., :1] * np.ones(3), axis=-1), (A, B)),
    "outer": (lambda L, v: L.outer(v, v), (V,)),
    "vecdot": (lambda L, a: L.vecdot(a, V), (A,)),
    "matmul": (lambda L, a, b: L.matmul(a, b), (A, B)),
    "matrix_transpose": (lambda L, a: L.matrix_transpose(a), (B,)),
    "trace": (lambda L, a: L.trace(a, offset=1), (A,)),
    "diagonal": (lambda L, a: L.diagonal(a), (A,)),
    "tensordot": (lambda L, a, b: L.tensordot(a, b[0], axes=1), (A, B)),
}
NO_NUMPY = {"solve", "qr[r]", "lstsq", "cross", "outer", "vecdot", "matrix_transpose",
            "trace", "diagonal", "tensordot", "matrix_norm", "vector_norm", "svdvals"}


@pytest.fixture(autouse=True)
def _x64() -> Any:
    fg.config.update("jax_enable_x64", True)
    yield
    fg.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_numpy(name: str) -> None:
    if name in NO_NUMPY:
        pytest.skip("NumPy spells it differently (array API or numpy 2 broadcasting)")
    fn, ops = CASES[name]
    np.testing.assert_allclose(np.asarray(fn(fnp.linalg, *ops)), fn(np.linalg, *ops),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_grads_match_jax(name: str) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    fn, ops = CASES[name]
    np.testing.assert_allclose(np.asarray(fn(fnp.linalg, *ops)),
                               np.asarray(fn(jnp.linalg, *ops)), rtol=1e-10, atol=1e-10)
    argnums = tuple(range(len(ops)))
    got = fg.grad(lambda *xs: fnp.sum(fn(fnp.linalg, *xs) ** 2), argnums)(*ops)
    want = jax.grad(lambda *xs: jnp.sum(fn(jnp.linalg, *xs) ** 2), argnums)(*ops)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-9)


@settings(max_examples=4, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**16), st.integers(1, 3), st.sampled_from([(), (2,)]))
def test_check_grads_second_order(seed: int, n: int, batch: tuple[int, ...]) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)) + 3 * np.eye(n)
    b = rng.standard_normal((*batch, n, 2))
    check_grads(lambda x, y: fnp.linalg.solve(x, y), (a, b), order=2)
    check_grads(lambda x: fnp.linalg.slogdet(x)[1], (a,), order=2)
    check_grads(fnp.linalg.det, (a,), order=2)
    check_grads(fnp.linalg.pinv, (a[..., :, :1],), order=1)


def test_singular_matrix_slogdet_is_minus_inf_with_sign_zero() -> None:
    s, logdet = fnp.linalg.slogdet(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert float(s) == 0.0 and float(logdet) == -np.inf
    assert int(fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]]))) == 1


def test_named_results_and_jit() -> None:
    res = fg.jit(fnp.linalg.eigh)(SPD)
    assert isinstance(res, fnp.linalg.EighResult)
    np.testing.assert_allclose(np.asarray(res.eigenvalues), np.linalg.eigvalsh(SPD), rtol=1e-12)
    u, s, vh = fnp.linalg.svd(TALL, full_matrices=False)
    np.testing.assert_allclose(np.asarray((u * s) @ vh), TALL, atol=1e-12)


def test_errors() -> None:
    with pytest.raises(ShapeError, match=r"inv must have shape \[\.\.\., n, n\]"):
        fnp.linalg.inv(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="inconsistent size for core dimension 'm'"):
        fnp.linalg.solve(np.eye(3), np.ones((2, 3)))
    with pytest.raises(ValueError, match="mode"):
        fnp.linalg.qr(np.eye(2), mode="bogus")
    with pytest.raises(ShapeError, match="3-vectors"):
        fnp.linalg.cross(np.ones(2), np.ones(2))
