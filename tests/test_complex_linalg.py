"""Complex linear algebra on both faces: ``funcgrad.numpy.linalg`` / ``funcgrad.scipy.linalg``
against ``jax.numpy.linalg`` / ``jax.scipy.linalg`` and ``funcgrad.torch.linalg`` against
``torch.linalg``, on complex64 and complex128 matrices drawn by hypothesis (well-conditioned:
``A = random + n I``, Hermitian positive definite ``B B^H + n I``).

Values (eigenvector and singular-vector phases included: LAPACK's on all sides) and dtypes
are compared with the originals; derivatives in complex128 with central finite differences
(real and imaginary parts as separate real inputs), forward (jvp) and reverse (grad), and
with JAX's gradients (JAX's convention: ``d/dx - i d/dy`` of a real loss) and PyTorch's
``.grad`` (its conjugate). Losses of eigenvectors and singular vectors are invariant under
their phases (``|v|^2``), where the derivatives are defined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.scipy.linalg as fsl


@pytest.fixture(autouse=True)
def _x64() -> Any:
    fg.config.update("jax_enable_x64", True)
    yield
    fg.config.update("jax_enable_x64", False)


def _jax() -> tuple[Any, Any, Any]:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jsl = pytest.importorskip("jax.scipy.linalg")
    jax.config.update("jax_enable_x64", True)
    return jax, jnp, jsl


def _cplx(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _general(rng: np.random.Generator, n: int) -> np.ndarray:
    return _cplx(rng, n, n) + n * np.eye(n)


def _hpd(rng: np.random.Generator, n: int) -> np.ndarray:
    b = _cplx(rng, n, n)
    return b @ b.conj().T + n * np.eye(n)


def _tall(rng: np.random.Generator, n: int) -> np.ndarray:
    return _cplx(rng, n + 2, n) + np.eye(n + 2, n) * n


def _wide(rng: np.random.Generator, n: int) -> np.ndarray:
    return _cplx(rng, n, n + 2) + np.eye(n, n + 2) * n


# name: (program on a (linalg, scipy.linalg) pair giving a tuple of outputs, matrix maker,
# phase-invariant loss wanted)
JAX_CASES: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], bool]] = {
    "det": (lambda L, S, a: (L.det(a),), _general, False),
    "slogdet": (lambda L, S, a: tuple(L.slogdet(a)), _general, False),
    "inv": (lambda L, S, a: (L.inv(a),), _general, False),
    "solve": (lambda L, S, a: (L.solve(a, a[..., ::-1, :1] * 2 + 1j),), _general, False),
    "cholesky": (lambda L, S, a: (L.cholesky(a),), _hpd, False),
    "cholesky[upper]": (lambda L, S, a: (L.cholesky(a, upper=True),), _hpd, False),
    "eigh": (lambda L, S, a: tuple(L.eigh(a)), _hpd, True),
    "eigvalsh": (lambda L, S, a: (L.eigvalsh(a),), _hpd, False),
    "svd": (lambda L, S, a: tuple(L.svd(a, full_matrices=False)), _general, True),
    "svd[tall]": (lambda L, S, a: tuple(L.svd(a, full_matrices=False)), _tall, True),
    "svd[wide]": (lambda L, S, a: tuple(L.svd(a, full_matrices=False)), _wide, True),
    "svdvals": (lambda L, S, a: (L.svd(a, compute_uv=False),), _general, False),
    "qr": (lambda L, S, a: tuple(L.qr(a)), _general, False),
    "qr[tall]": (lambda L, S, a: tuple(L.qr(a)), _tall, False),
    "qr[wide]": (lambda L, S, a: tuple(L.qr(a)), _wide, False),
    "pinv": (lambda L, S, a: (L.pinv(a),), _tall, False),
    "expm": (lambda L, S, a: (S.expm(a / a.shape[-1]),), _general, False),
    "expm[squarings]": (lambda L, S, a: (S.expm(2 * a),), _general, False),
    "lu_factor": (lambda L, S, a: (S.lu_factor(a)[0],), _general, False),
    "lu_solve[trans=2]": (lambda L, S, a: (S.lu_solve(S.lu_factor(a), a[:, 0], trans=2),),
                          _general, False),
    "cho_solve": (lambda L, S, a: (S.cho_solve(S.cho_factor(a), a[:, :1] + 1j),), _hpd,
                  False),
    "solve_triangular[C]": (lambda L, S, a: (S.solve_triangular(a, a[:, :2], trans="C",
                                                                lower=True),),
                            _general, False),
}


def _loss(outs: tuple[Any, ...], weights: list[np.ndarray], phase_free: bool,
          xp: Any) -> Any:
    """A real loss of the outputs: sum(w |o|^2) for vectors with a free phase, else also
    sum(real(w o) + imag(w o))."""
    total = 0.0
    for o, w in zip(outs, weights):
        total = total + xp.sum(w.real * xp.abs(o) ** 2)
        if not phase_free:
            prod = w * o
            total = total + xp.sum(xp.real(prod) + 0.3 * xp.imag(prod))
    return total


def _fd_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6
             ) -> np.ndarray:
    """d f / d re(x) - i d f / d im(x) (JAX's convention), by central differences."""
    g = np.zeros(x.shape, complex)
    for idx in np.ndindex(x.shape):
        for unit, sign in ((1.0, 1.0), (1j, -1j)):
            e = np.zeros(x.shape, complex)
            e[idx] = unit * eps
            g[idx] += sign * (f(x + e) - f(x - e)) / (2 * eps)
    return g


_cases = st.sampled_from(sorted(JAX_CASES))
_seeds = st.integers(0, 2**32 - 1)
_sizes = st.integers(1, 4)


def _jax_setup(name: str, seed: int, n: int) -> Any:
    jax, jnp, jsl = _jax()
    fn, make, phase_free = JAX_CASES[name]
    if make is _hpd:
        # Derivatives along Hermitian directions only (the factorizations read one
        # triangle; jax.scipy's cholesky differentiates the other one differently,
        # docs/sharp_bits.md): the programs see (x + x^H) / 2.
        plain = fn

        def fn(L: Any, S: Any, x: Any) -> Any:  # noqa: N803
            return plain(L, S, (x + x.conj().swapaxes(-1, -2)) / 2)

    rng = np.random.default_rng(seed)
    a = make(rng, n)
    ref = fn(jnp.linalg, jsl, jnp.asarray(a))
    weights = [_cplx(rng, *np.shape(o)) for o in ref]
    return jax, jnp, jsl, fn, a, weights, phase_free


@settings(max_examples=30, deadline=None)
@given(_cases, _seeds, _sizes, st.sampled_from(["complex64", "complex128"]))
def test_values_and_dtypes_match_jax(name: str, seed: int, n: int, dtype: str) -> None:
    jax, jnp, jsl = _jax()
    fn, make, _ = JAX_CASES[name]
    a = make(np.random.default_rng(seed), n).astype(dtype)
    got = fn(fnp.linalg, fsl, fnp.asarray(a))
    want = fn(jnp.linalg, jsl, jnp.asarray(a))
    # (expm in complex64: JAX picks a lower Pade degree by the norm, docs/sharp_bits.md)
    tol = (2e-3 if name.startswith("expm") else 2e-4) if dtype == "complex64" else 1e-10
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype, (name, g.dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


@settings(max_examples=10, deadline=None)
@given(_cases, _seeds, _sizes)
def test_grads_match_jax_and_finite_differences(name: str, seed: int, n: int) -> None:
    jax, jnp, jsl, fn, a, weights, phase_free = _jax_setup(name, seed, n)

    def mine(x: Any) -> Any:
        return _loss(fn(fnp.linalg, fsl, x), weights, phase_free, fnp)

    def theirs(x: Any) -> Any:
        return _loss(fn(jnp.linalg, jsl, x), weights, phase_free, jnp)

    got = np.asarray(fg.grad(mine)(a))
    want = np.asarray(jax.grad(theirs)(jnp.asarray(a)))
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)
    theirs_fast = jax.jit(theirs)
    fd = _fd_grad(lambda x: float(theirs_fast(jnp.asarray(x))), a)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5)


@settings(max_examples=10, deadline=None)
@given(_cases, _seeds, _sizes)
def test_jvps_match_jax_and_finite_differences(name: str, seed: int, n: int) -> None:
    jax, jnp, jsl, fn, a, weights, phase_free = _jax_setup(name, seed, n)
    da = _cplx(np.random.default_rng(seed + 1), *a.shape)

    def mine(x: Any) -> Any:
        return _loss(fn(fnp.linalg, fsl, x), weights, phase_free, fnp)

    def theirs(x: Any) -> Any:
        return _loss(fn(jnp.linalg, jsl, x), weights, phase_free, jnp)

    _, got = fg.jvp(mine, (a,), (da,))
    _, want = jax.jvp(theirs, (jnp.asarray(a),), (jnp.asarray(da),))
    eps = 1e-6
    fd = (float(theirs(jnp.asarray(a + eps * da))) - float(theirs(jnp.asarray(a - eps * da)))) \
        / (2 * eps)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(float(got), fd, rtol=1e-5, atol=1e-5)


def test_det_grad_convention_is_jaxs() -> None:
    """grad of real(det(A)) is d/dx - i d/dy (the conjugate of the Wirtinger gradient
    that PyTorch reports): for A = diag(a, 1), det = a and grad = 1 at a's entry."""
    jax, jnp, _ = _jax()
    a = np.array([[1.0 + 2.0j, 0.3j], [0.2, 3.0 - 1.0j], ], complex)
    a = np.pad(a, ((0, 2), (0, 2))) + np.diag([0, 0, 2.0, 1.5j])
    for f_mine, f_theirs in ((lambda x: fnp.real(fnp.linalg.det(x)),
                              lambda x: jnp.real(jnp.linalg.det(x))),
                             (lambda x: fnp.imag(fnp.linalg.det(x)),
                              lambda x: jnp.imag(jnp.linalg.det(x)))):
        np.testing.assert_allclose(np.asarray(fg.grad(f_mine)(a)),
                                   np.asarray(jax.grad(f_theirs)(jnp.asarray(a))),
                                   rtol=1e-12, atol=1e-12)


def test_vmap_and_jit_of_complex_factorizations() -> None:
    _, jnp, _ = _jax()
    rng = np.random.default_rng(0)
    hs = np.stack([_hpd(rng, 3) for _ in range(5)])
    got = fg.jit(fg.vmap(lambda h: fnp.linalg.eigh(h).eigenvalues))(hs)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jnp.linalg.eigvalsh(hs)),
                               rtol=1e-10)
    got_c = fg.vmap(fnp.linalg.cholesky)(hs)
    np.testing.assert_allclose(np.asarray(got_c), np.asarray(jnp.linalg.cholesky(hs)),
                               rtol=1e-10)


# ------------------------------------------------------------------ the torch face


def _torch() -> Any:
    return pytest.importorskip("torch")


TORCH_CASES: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray], bool]] = {
    "det": (lambda T, a: (T.linalg.det(a),), _general, False),
    "det[method]": (lambda T, a: (a.det(),), _general, False),
    "slogdet": (lambda T, a: tuple(T.linalg.slogdet(a)), _general, False),
    "inv": (lambda T, a: (T.linalg.inv(a),), _general, False),
    "inverse": (lambda T, a: (T.inverse(a),), _general, False),
    "solve": (lambda T, a: (T.linalg.solve(a, a[..., :2] * 2 + 1j),), _general, False),
    "solve[left=False]": (lambda T, a: (T.linalg.solve(a, a[:2] + 1, left=False),), _general,
                          False),
    "cholesky": (lambda T, a: (T.linalg.cholesky(a),), _hpd, False),
    "cholesky[upper]": (lambda T, a: (T.linalg.cholesky(a, upper=True),), _hpd, False),
    "eigh": (lambda T, a: tuple(T.linalg.eigh(a)), _hpd, True),
    "eigvalsh": (lambda T, a: (T.linalg.eigvalsh(a),), _hpd, False),
    "svd": (lambda T, a: tuple(T.linalg.svd(a, full_matrices=False)), _general, True),
    "svd[tall]": (lambda T, a: tuple(T.linalg.svd(a, full_matrices=False)), _tall, True),
    "svd[wide]": (lambda T, a: tuple(T.linalg.svd(a, full_matrices=False)), _wide, True),
    "torch.svd": (lambda T, a: tuple(T.svd(a)), _tall, True),
    "svdvals": (lambda T, a: (T.linalg.svdvals(a),), _general, False),
    "qr": (lambda T, a: tuple(T.linalg.qr(a)), _general, False),
    "qr[tall]": (lambda T, a: tuple(T.linalg.qr(a)), _tall, False),
    "qr[wide]": (lambda T, a: tuple(T.linalg.qr(a)), _wide, False),
    "matrix_exp": (lambda T, a: (T.linalg.matrix_exp(a / a.shape[-1]),), _general, False),
    "torch.matrix_exp": (lambda T, a: (T.matrix_exp(2 * a),), _general, False),
    "pinv": (lambda T, a: (T.linalg.pinv(a),), _tall, False),
    "lu_solve[adjoint]": (lambda T, a: (T.linalg.lu_solve(
        *T.linalg.lu_factor(a), a[:, :2], adjoint=True),), _general, False),
    "solve_triangular": (lambda T, a: (T.linalg.solve_triangular(a, a[:, :2] + 1j,
                                                                 upper=True),),
                         _general, False),
}


def _torch_loss(T: Any, outs: tuple[Any, ...], weights: list[np.ndarray],
                phase_free: bool) -> Any:
    total = 0.0
    for o, w in zip(outs, weights):
        wt = T.tensor(w)
        total = total + (wt.real * o.abs() ** 2).sum()
        if not phase_free:
            prod = wt * o
            total = total + (prod.real + 0.3 * prod.imag).sum()
    return total


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(TORCH_CASES)), _seeds, _sizes,
       st.sampled_from(["complex64", "complex128"]))
def test_torch_values_and_dtypes_match(name: str, seed: int, n: int, dtype: str) -> None:
    torch = _torch()
    import funcgrad.torch as ft

    fn, make, _ = TORCH_CASES[name]
    a = make(np.random.default_rng(seed), n).astype(dtype)
    want = fn(torch, torch.tensor(a))
    got = fn(ft, ft.tensor(a))
    tol = (2e-3 if "matrix_exp" in name else 2e-4) if dtype == "complex64" else 1e-10
    for k, (g, w) in enumerate(zip(got, want)):
        assert str(g.dtype) == str(w.dtype), (name, g.dtype, w.dtype)
        mine, theirs = np.asarray(g.detach()), w.detach().resolve_conj().numpy()
        if name == "eigh" and k == 1:
            # PyTorch's heevd (MKL) and NumPy's LAPACK may give a column another unit
            # phase (docs/sharp_bits.md): compare the columns up to it.
            inner = np.sum(mine.conj() * theirs, axis=-2, keepdims=True)
            mine = mine * inner / np.abs(inner)
        np.testing.assert_allclose(mine, theirs, rtol=tol, atol=tol)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(sorted(TORCH_CASES)), _seeds, _sizes)
def test_torch_grads_match_torch_and_finite_differences(name: str, seed: int, n: int
                                                         ) -> None:
    torch = _torch()
    import funcgrad.torch as ft

    fn, make, phase_free = TORCH_CASES[name]
    rng = np.random.default_rng(seed)
    a = make(rng, n)
    ref = fn(torch, torch.tensor(a))
    weights = [_cplx(rng, *tuple(o.shape)) for o in ref]

    def run(T: Any) -> np.ndarray:
        x = T.tensor(a, requires_grad=True)
        _torch_loss(T, fn(T, x), weights, phase_free).backward()
        return np.asarray(x.grad.detach().resolve_conj() if T is torch else x.grad)

    got, want = run(ft), run(torch)
    if name.startswith("cholesky"):
        # PyTorch's complex cholesky gradient adds an anti-Hermitian part
        # L^-H (i/2 Im diag(L^H gL)) L^-1 (zero along Hermitian directions, the only ones
        # its input takes); funcgrad's is Hermitian (docs/sharp_bits.md): the Hermitian
        # parts agree.
        def herm(g: np.ndarray) -> np.ndarray:
            return (g + g.conj().T) / 2

        np.testing.assert_allclose(got, herm(got), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got, herm(want), rtol=1e-7, atol=1e-8)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)

    def value(x: np.ndarray) -> float:
        if make is _hpd:  # PyTorch reads one triangle; its gradient is the Hermitian one
            x = (x + x.conj().T) / 2
        with torch.no_grad():
            return float(_torch_loss(torch, fn(torch, torch.tensor(x)), weights, phase_free))

    # PyTorch's .grad is the conjugate of JAX's: d/dx + i d/dy
    np.testing.assert_allclose(got, np.conj(_fd_grad(value, a)), rtol=1e-5, atol=1e-5)
