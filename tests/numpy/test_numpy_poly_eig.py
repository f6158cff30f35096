"""funcgrad.numpy's polynomials, eig/eigvals, window functions, vectorize/ufunc and the
array extras (splits, rotations, vector products, spacing, bit packing, I/O) against
jax.numpy: values, dtypes and weak types on hypothesis-drawn inputs, gradients against
jax.grad, and second-order numerical checks of a few derivatives in float64."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.errors import NonDifferentiableError
from funcgrad.testing import check_grads
from tests.numpy._compare import compare, jax_modules

FLOATS = st.floats(-3, 3, allow_nan=False, width=32, allow_subnormal=False)
SHAPES = hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3)


def floats(shape: Any, dtype: Any = np.float64) -> Any:
    return hnp.arrays(dtype, shape, elements=FLOATS)


def ints(shape: Any, lo: int = -4, hi: int = 4, dtype: Any = np.int32) -> Any:
    return hnp.arrays(dtype, shape, elements=st.integers(lo, hi))


def lead(n: int) -> Any:
    """Polynomial coefficients with a leading coefficient away from zero."""
    return floats(n).map(lambda p: np.concatenate([[p[0] + (4.0 if p[0] >= 0 else -4.0)],
                                                   p[1:]]))


def _sorted_complex(w: Any, m: Any) -> Any:
    # Eigenvalues come unordered from LAPACK: compare them in one canonical order (real
    # parts rounded, so that last-bit differences between the two cannot swap a pair).
    return w[m.lexsort((m.imag(w), m.round(m.real(w), 6)))]


def _separated(w: np.ndarray) -> bool:
    d = np.abs(w[:, None] - w[None, :]) + np.eye(len(w)) * 9
    return bool(d.min() > 0.3)


def matrices(n: int, dtype: Any = np.float64) -> Any:
    """Square matrices with well-separated eigenvalues (their derivatives are finite)."""
    return floats((n, n), dtype).filter(lambda a: _separated(np.linalg.eigvals(a)))


def distinct_roots(n: int) -> Any:
    """Coefficients of a polynomial with ``n`` well-separated real roots, scaled by 2."""
    return floats(n).filter(_separated).map(lambda r: 2.0 * np.poly(r))


def _joined(m: Any, parts: Any) -> Any:
    return m.concatenate([m.ravel(p) for p in parts])


def _window(name: str) -> Callable[..., Any]:
    return lambda m, n: getattr(m, name)(int(n))


def _rot90(k: int) -> Callable[..., Any]:
    return lambda m, x: m.rot90(x, k, axes=(1, 0))


CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...], bool]] = [
    ("polyval", lambda m, p, x: m.polyval(p, x), (floats(4), floats(3)), True),
    ("polyval_x", lambda m, x, p: m.polyval(p, x), (floats(3), floats(4)), True),
    ("polyval_int", lambda m, p, x: m.polyval(p, x), (ints(3), ints(2)), False),
    ("polyadd", lambda m, a, b: m.polyadd(a, b), (floats(3), floats(2)), True),
    ("polysub", lambda m, a, b: m.polysub(a, b), (floats(2), floats(4)), True),
    ("polysub_int", lambda m, a, b: m.polysub(a, b), (ints(2), ints(3)), False),
    ("polymul", lambda m, a, b: m.polymul(a, b), (floats(3), floats(2)), True),
    ("polydiv", lambda m, u, v: m.concatenate(m.polydiv(u, v)), (floats(4), lead(2)), True),
    ("polyder", lambda m, p: m.polyder(p, 2), (floats(4),), True),
    ("polyint", lambda m, p: m.polyint(p, m=2, k=1.5), (floats(3),), True),
    ("polyint_int", lambda m, p: m.polyint(p), (ints(3),), False),
    ("polyfit", lambda m, y: m.polyfit(np.arange(5.0), y, 2), (floats(5),), True),
    ("polyfit_w", lambda m, y, w: m.polyfit(np.arange(4.0), y, 1, w=w + 4.0),
     (floats((4, 2)), floats(4)), True),
    ("poly", lambda m, z: m.poly(z), (floats(3),), True),
    ("roots", lambda m, p: _sorted_complex(m.roots(p), m), (lead(4),), False),
    ("roots_grad", lambda m, p: m.sum(m.roots(p) ** 2), (distinct_roots(3),), True),
    # Not at 0: JAX's d/dx x**0.0 there is NaN, funcgrad's is 0 (a documented difference).
    ("vander", lambda m, x: m.vander(x, 3), (floats(4).filter(lambda x: x.all()),), True),
    ("vander_inc", lambda m, x: m.vander(x, increasing=True), (ints(3),), False),
    ("eigvals", lambda m, a: _sorted_complex(m.linalg.eigvals(a), m), (matrices(3),), False),
    ("eigvals_grad", lambda m, a: m.sum(m.linalg.eigvals(a) ** 3), (matrices(3),), True),
    ("eigvals32", lambda m, a: _sorted_complex(m.linalg.eigvals(a), m),
     (matrices(2, np.float32),), False),
    ("eig_values", lambda m, a: _sorted_complex(m.linalg.eig(a)[0], m), (matrices(2),),
     False),
    # windows
    *[(w, _window(w), (st.integers(0, 6),), False)
      for w in ("bartlett", "blackman", "hamming", "hanning")],
    ("kaiser", lambda m, b: m.kaiser(5, b), (floats(()),), True),
    # vectorize / ufunc
    ("vectorize", lambda m, a, b: m.vectorize(lambda x, y: m.sum(x * y),
                                              signature="(n),(n)->()")(a, b),
     (floats((2, 3)), floats(3)), True),
    ("vectorize_mat", lambda m, a, b: m.vectorize(m.matmul, signature="(n,k),(k)->(n)")(a, b),
     (floats((2, 2, 3)), floats((1, 3))), True),
    ("ufunc_reduce", lambda m, x: m.frompyfunc(lambda a, b: a * b + 1.0, 2, 1).reduce(x),
     (floats((3, 2)),), True),
    ("ufunc_accumulate", lambda m, x: m.ufunc(lambda a, b: a - b, 2, 1).accumulate(x, axis=1),
     (floats((2, 3)),), True),
    ("ufunc_outer", lambda m, x, y: m.ufunc(lambda a, b: a * b - a, 2, 1).outer(x, y),
     (floats(2), floats(3)), True),
    ("ufunc_at", lambda m, x, i: m.ufunc(lambda a, b: a + 2 * b, 2, 1).at(
        x, i, 1.5, inplace=False), (floats(4), ints(3, 0, 3)), False),
    # shapes and products
    # Lists of results are joined (ravelled) so that their gradients compare too.
    ("hsplit", lambda m, x: _joined(m, m.hsplit(x, [1])), (floats(SHAPES),), True),
    ("vsplit", lambda m, x: _joined(m, m.vsplit(x, [1])), (floats(SHAPES),), True),
    ("dsplit", lambda m, x: _joined(m, m.dsplit(x, [1])), (floats((2, 2, 3)),), True),
    ("resize", lambda m, x: m.resize(x, (2, 5)), (floats(SHAPES),), True),
    ("rollaxis", lambda m, x: m.rollaxis(x, -1, 0), (floats(SHAPES),), True),
    *[(f"rot90_{k}", _rot90(k), (floats(SHAPES),), True) for k in range(4)],
    ("unstack", lambda m, x: _joined(m, m.unstack(x, axis=1)), (floats(SHAPES),), True),
    ("matrix_transpose", lambda m, x: m.matrix_transpose(x), (floats(SHAPES),), True),
    ("matvec", lambda m, a, v: m.matvec(a, v), (floats((2, 2, 3)), floats(3)), True),
    ("vecmat", lambda m, v, a: m.vecmat(v, a), (floats((2, 3)), floats((3, 2))), True),
    ("vecdot", lambda m, a, b: m.vecdot(a, b), (floats((2, 3)), floats(3)), True),
    ("cross", lambda m, a, b: m.cross(a, b), (floats((2, 3)), floats(3)), True),
    ("cross_2", lambda m, a, b: m.cross(a, b), (floats((2, 2)), floats((2, 3))), True),
    ("cross_axis", lambda m, a, b: m.cross(a, b, axis=0), (floats((3, 2)), floats((3, 2))),
     True),
    ("apply_along_axis", lambda m, x: m.apply_along_axis(lambda v: v * m.sum(v), 1, x),
     (floats(SHAPES),), True),
    ("apply_over_axes", lambda m, x: m.apply_over_axes(m.sum, x, [0, -1]), (floats(SHAPES),),
     True),
    ("fromfunction", lambda m: m.fromfunction(lambda i, j: i * 2 + j, (2, 3), dtype=int), (),
     False),
    ("logspace", lambda m, a, b: m.logspace(a, b, 4), (floats(()), floats(())), True),
    ("logspace_base", lambda m, a: m.logspace(0, a, 3, base=2.0, endpoint=False, axis=-1),
     (floats(2),), True),
    ("logspace_int", lambda m: m.logspace(0, 3, 4, dtype=int), (), False),
    ("geomspace", lambda m, a: m.geomspace(a + 4.0, 100.0, 5), (floats(()),), True),
    ("geomspace_neg", lambda m: m.geomspace(-1, -1000, 4), (), False),
    ("packbits", lambda m, x: m.packbits(x, axis=-1), (ints((2, 11), 0, 1),), False),
    ("packbits_little", lambda m, x: m.packbits(x, bitorder="little"), (ints(5, -1, 1),),
     False),
    ("unpackbits", lambda m, x: m.unpackbits(x, axis=0, count=10),
     (ints((2, 2), 0, 255, np.uint8),), False),
    ("frombuffer", lambda m, x: m.frombuffer(x.tobytes(), np.float32), (floats(3),), False),
    ("fromstring", lambda m: m.fromstring("1 2 3", dtype=np.int32, sep=" "), (), False),
]

# Where only the values (not JAX's weak types) can be compared.
STRONG = {"logspace_int", "fromfunction"}


@pytest.mark.parametrize(("name", "fn", "spec", "diff"),
                         [pytest.param(c[0], *c[1:], id=c[0]) for c in CASES])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_matches_jax(name: str, fn: Any, spec: Any, diff: bool, data: Any) -> None:
    args = tuple(data.draw(s) for s in spec)
    tol = None if name.endswith("32") else 1e-7  # float32: compare's default by dtype
    compare(fn, *args, x64=True, grad=diff, weak=name not in STRONG, rtol=tol, atol=tol)


@settings(max_examples=3, deadline=None)
@given(a=st.tuples(matrices(3), matrices(3)).map(np.stack))
def test_eigvals_batched_and_jitted(a: np.ndarray) -> None:
    jax, jnp = jax_modules(True)

    def loss(m: Any) -> Callable[..., Any]:
        return lambda x: m.sum(m.real(m.linalg.eigvals(x)) ** 3 + m.imag(m.linalg.eigvals(x)))

    want = jax.vmap(jax.grad(loss(jnp)))(a)
    np.testing.assert_allclose(funcgrad.vmap(funcgrad.grad(loss(fnp)))(a), want, rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(funcgrad.jit(funcgrad.grad(loss(fnp)))(a), want, rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_allclose(funcgrad.jacfwd(loss(fnp))(a), jax.jacfwd(loss(jnp))(a),
                               rtol=1e-6, atol=1e-6)


def test_eig_vectors_and_second_order_are_not_differentiable() -> None:
    jax_modules(True)
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(NonDifferentiableError, match="eigenvectors"):
        funcgrad.grad(lambda x: fnp.sum(fnp.real(fnp.linalg.eig(x)[1])))(a)
    with pytest.raises(NonDifferentiableError, match="eigenvectors"):
        funcgrad.jvp(lambda x: fnp.linalg.eig(x), (a,), (a,))
    # As in JAX, the eigenvalues' derivative goes through the eigenvectors: no hessian.
    with pytest.raises(NonDifferentiableError):
        funcgrad.hessian(lambda x: fnp.sum(fnp.real(fnp.linalg.eigvals(x))))(a)


def test_eig_vectors_diagonalize() -> None:
    jax_modules(True)
    a = np.array([[0.0, -2.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 1.0]])
    w, v = fnp.linalg.eig(a)
    np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)


def test_roots_needs_strip_zeros_false_under_jit() -> None:
    jax_modules(True)
    with pytest.raises(funcgrad.errors.ConcretizationTypeError):
        funcgrad.jit(fnp.roots)(np.array([1.0, 2.0]))
    out = funcgrad.jit(lambda p: fnp.roots(p, strip_zeros=False))(np.array([0.0, 1.0, -2.0]))
    assert np.isnan(np.asarray(out)[-1])


def test_save_load_round_trip() -> None:
    jax_modules(True)
    buf = io.BytesIO()
    fnp.save(buf, fnp.arange(3.0))
    buf.seek(0)
    out = fnp.load(buf)
    assert isinstance(out, funcgrad.Array)
    np.testing.assert_array_equal(out, np.arange(3.0))


def test_ufunc_errors() -> None:
    unary = fnp.ufunc(fnp.sin, 1, 1)
    with pytest.raises(ValueError, match="binary"):
        unary.reduce(fnp.ones(3))
    with pytest.raises(NotImplementedError, match="immutable"):  # (JAX's error and text)
        fnp.ufunc(fnp.add, 2, 1).at(fnp.ones(3), 0, 1.0, inplace=True)


GRAD_CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("polyval", lambda p, x: fnp.polyval(p, x), (floats(3), floats(2))),
    ("polyfit", lambda y: fnp.polyfit(np.arange(4.0), y, 1), (floats(4),)),
    ("polydiv", lambda u, v: fnp.polydiv(u, v)[0], (floats(3), lead(2))),
    ("cross", lambda a, b: fnp.cross(a, b), (floats(3), floats(3))),
    ("geomspace", lambda a: fnp.geomspace(a + 4.0, 9.0, 3), (floats(()),)),
    ("vectorize", lambda a: fnp.vectorize(lambda v: fnp.sum(v * v), signature="(n)->()")(a),
     (floats((2, 3)),)),
]


@pytest.mark.parametrize(("fn", "spec"), [pytest.param(*c[1:], id=c[0]) for c in GRAD_CASES])
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_check_grads_order2(fn: Any, spec: Any, data: Any) -> None:
    jax_modules(True)
    check_grads(fn, tuple(data.draw(s) for s in spec), order=2, modes=("fwd", "rev"))


def test_eigvals_check_grads_order1() -> None:
    jax_modules(True)
    a = np.array([[1.0, 2.0, 0.5], [-1.0, 0.3, 2.0], [0.2, 0.1, -1.5]])
    check_grads(lambda x: fnp.real(fnp.linalg.eigvals(x)) ** 2, (a,), order=1)
