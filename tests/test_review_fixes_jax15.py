"""JAX-face fixes compared with JAX 0.10.2: floating ``cumsum``/``cumprod``/``cumlogsumexp``
add and multiply in XLA's CPU order (a reduce_window rewritten into rows of 16), halves
rounded at every step, while derivatives stay those of the associative scan; integer
``x // 0`` is XLA's (-1 unsigned, -2 or -1 signed), booleans divide, take remainders and
powers as the default integer; ``arange`` computes ``start + step * iota`` as JAX does
(and wraps integers, refuses booleans and non-scalars with JAX's errors)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the error is part of the comparison
        return "error", type(e).__name__ if not isinstance(e, ValueError) else "ValueError", \
            str(e)
    return str(out.dtype), bool(out.weak_type), np.asarray(out).tobytes()


def _bits(x: Any) -> bytes:
    return np.asarray(x).tobytes()


# ------------------------------------------------------------------ cumulative sums


def _xla_cumsum_reference(x: np.ndarray, reverse: bool) -> np.ndarray:
    """Rows of 16, each window added left to right in x's dtype; rows' totals scanned the
    same way and added in (a plain-Python restatement of the fix, for 1-D x)."""
    n, b = len(x), 16

    def window(row: np.ndarray) -> np.ndarray:
        out = np.empty_like(row)
        for i in range(len(row)):
            acc = row.dtype.type(0)
            for v in (row[i:] if reverse else row[:i + 1]):
                acc = row.dtype.type(acc + v)
            out[i] = acc
        return out

    if n <= b:
        return window(x)
    rows = -(-n // b)
    tiles = np.concatenate([x, np.zeros(rows * b - n, x.dtype)]).reshape(rows, b)
    inner = np.stack([window(r) for r in tiles])
    totals = _xla_cumsum_reference(inner[:, 0 if reverse else -1].copy(), reverse)
    if reverse:
        inner[:-1] = totals[1:, None] + inner[:-1]
    else:
        inner[1:] = totals[:-1, None] + inner[1:]
    return inner.reshape(-1)[:n]


def test_cumsum_of_floats_in_xla_order() -> None:
    x = np.linspace(0.1, 3.3, 37, dtype=np.float32)
    want = np.asarray(jnp.cumsum(x))
    got = fnp.cumsum(x)
    assert _bits(got) == _bits(want)
    assert _bits(got) == _bits(_xla_cumsum_reference(x, False))
    assert _bits(got) != _bits(np.cumsum(x))  # NumPy's sequential sum rounds otherwise


def test_half_cumsum_rounds_every_addition() -> None:
    x = np.array([2048.0] + [1.0] * 7, np.float16)
    assert fnp.cumsum(x).tolist() == [2048.0] * 8  # float32 accumulation gave 2056 at the end
    assert fg.lax.cumsum(x, reverse=True).tolist() == [2048.0, 7, 6, 5, 4, 3, 2, 1]
    assert _bits(fnp.cumsum(x)) == _bits(jnp.cumsum(x))
    b = np.full(40, 0.1, jnp.bfloat16)
    assert _bits(fnp.cumsum(b)) == _bits(jnp.cumsum(b))


def test_cumsum_of_negative_zeros_starts_from_zero() -> None:
    x = np.array([-0.0, -0.0], np.float32)
    assert _bits(fnp.cumsum(x)) == _bits(jnp.cumsum(x)) == _bits(np.zeros(2, np.float32))


_finite32 = st.floats(-1e4, 1e4, width=32, allow_subnormal=False).filter(
    lambda v: v == 0 or abs(v) > 1e-3)


@settings(max_examples=30, deadline=None)
@given(st.lists(_finite32, min_size=1, max_size=300), st.booleans(),
       st.sampled_from(["float32", "float16", "bfloat16", "complex64"]))
def test_cumsum_matches_xla_bit_for_bit(xs: list[float], reverse: bool, dt: str) -> None:
    x = np.asarray(xs, np.float32)
    x = (x + 0.5j * x[::-1]).astype(np.complex64) if dt == "complex64" else \
        x.astype(jnp.dtype(dt))
    want = np.asarray(jax.lax.cumsum(jnp.asarray(x), 0, reverse=reverse))
    assert _bits(fg.lax.cumsum(fnp.asarray(x), 0, reverse=reverse)) == _bits(want)
    if dt == "float32":
        assert _bits(fg.lax.cumsum(fnp.asarray(x), 0, reverse=reverse)) == _bits(
            _xla_cumsum_reference(x, reverse))


@pytest.mark.parametrize("shape,axis", [((3, 50), 1), ((50, 3), 0), ((2, 70, 2), 1)])
def test_cumsum_along_an_axis_and_jitted(shape: tuple[int, ...], axis: int) -> None:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    want = np.asarray(jnp.cumsum(x, axis))
    assert _bits(fnp.cumsum(x, axis)) == _bits(want)
    assert _bits(fg.jit(lambda v: fnp.cumsum(v, axis))(x)) == _bits(want)


def test_cumsum_derivative_unchanged() -> None:
    x = np.linspace(0.0, 1.0, 40, dtype=np.float32)
    w = np.arange(40.0, dtype=np.float32)
    ours = fg.grad(lambda v: fnp.sum(fnp.cumsum(v) * w))(x)
    theirs = jax.grad(lambda v: jnp.sum(jnp.cumsum(v) * w))(x)
    assert _bits(ours) == _bits(theirs)
    np.testing.assert_allclose(np.asarray(ours), np.cumsum(w[::-1])[::-1], rtol=1e-6)


# ---------------------------------------------------------- cumulative products


@pytest.mark.parametrize("n", [5, 16, 17, 40, 300])
def test_cumprod_values_in_xla_order(n: int) -> None:
    x = (1 + 0.05 * np.random.default_rng(n).standard_normal(n)).astype(np.float32)
    for ours, theirs in [(fnp.cumprod(x), jnp.cumprod(x)),
                         (fg.lax.cumprod(x, reverse=True), jax.lax.cumprod(x, reverse=True)),
                         (fg.jit(fnp.cumprod)(x), jax.jit(jnp.cumprod)(x)),
                         (fnp.nancumprod(x), jnp.nancumprod(x))]:
        assert ours.dtype == theirs.dtype
        assert _bits(ours) == _bits(theirs)


def test_diffusion_schedule_alpha_bar() -> None:
    betas = fnp.linspace(1e-4, 0.02, 1000)
    ours = fnp.cumprod(1 - betas)
    theirs = jnp.cumprod(1 - jnp.linspace(1e-4, 0.02, 1000))
    assert _bits(ours) == _bits(theirs)
    np.testing.assert_allclose(np.asarray(ours), np.cumprod(1 - np.linspace(1e-4, 0.02, 1000)),
                               rtol=1e-4)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_cumprod(dt: str) -> None:
    x = (1 + 0.05 * np.random.default_rng(1).standard_normal(40)).astype(jnp.dtype(dt))
    assert _bits(fnp.cumprod(x)) == _bits(jnp.cumprod(x))


def test_cumprod_2d_and_vmap() -> None:
    x = (1 + 0.05 * np.random.default_rng(2).standard_normal((3, 40))).astype(np.float32)
    assert _bits(fnp.cumprod(x, axis=1)) == _bits(jnp.cumprod(x, axis=1))
    assert _bits(fg.lax.cumprod(x.T, axis=0)) == _bits(jax.lax.cumprod(x.T, axis=0))
    assert _bits(fg.vmap(fnp.cumprod)(x)) == _bits(jax.vmap(jnp.cumprod)(x))


def test_cumprod_derivative_is_the_associative_scans() -> None:
    x = (1 + 0.05 * np.random.default_rng(3).standard_normal(17)).astype(np.float32)
    ours = fg.jvp(fnp.cumprod, (x,), (np.ones_like(x),))
    theirs = jax.jvp(jnp.cumprod, (x,), (jnp.ones_like(x),))
    assert _bits(ours[0]) == _bits(theirs[0])  # JAX's jvp recomputes the values by the scan
    np.testing.assert_allclose(np.asarray(ours[1]), np.asarray(theirs[1]), rtol=1e-6)
    x64 = x.astype(np.float64)
    with fg.enable_x64(True):
        g = fg.grad(lambda v: fnp.sum(fnp.cumprod(v) ** 2))(x64)
        eps = 1e-6
        fd = [(np.sum(np.cumprod(x64 + eps * e) ** 2) - np.sum(np.cumprod(x64 - eps * e) ** 2))
              / (2 * eps) for e in np.eye(17)]
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6)


def test_cumprod_of_integers_and_weak_types() -> None:
    for call in [lambda m: m.numpy.cumprod(m.numpy.arange(1, 30)),
                 lambda m: m.numpy.cumprod(2.0),
                 lambda m: m.lax.cumprod(m.numpy.zeros((3, 0)), axis=1),
                 lambda m: m.lax.cumlogsumexp(m.numpy.array([-np.inf, 1.0, -np.inf]))]:
        assert _outcome(partial(call, fg)) == _outcome(partial(call, jax))


# ---------------------------------------------------------------- integer division


_DIVISIONS: list[Callable[[Any], Any]] = [
    lambda m: m.numpy.array([-7, 7, 0, -2**31, 5]) // m.numpy.zeros(5, int),
    lambda m: m.numpy.array([7, 0, 255], m.numpy.uint8) // m.numpy.zeros(3, m.numpy.uint8),
    lambda m: m.numpy.array([-7, 7, -128], m.numpy.int8) // m.numpy.array([0, 0, -1],
                                                                            m.numpy.int8),
    lambda m: m.numpy.floor_divide(3, 0),
    lambda m: m.numpy.array([5, 0, -3]) // 0,
    lambda m: 5 // m.numpy.array([0, 2], m.numpy.uint8),
    lambda m: m.jit(lambda a, b: a // b)(m.numpy.arange(-2, 3), m.numpy.zeros(5, int)),
    lambda m: m.vmap(lambda a, b: a // b)(m.numpy.arange(-2, 3), m.numpy.zeros(5, int)),
    lambda m: m.numpy.divmod(m.numpy.arange(-3, 3), 0)[0],
    lambda m: m.numpy.array([True, False]) // m.numpy.array([True, True]),
    lambda m: m.numpy.array([True]) // m.numpy.array([False]),
    lambda m: m.numpy.array([True, False]) // 2,
    lambda m: m.numpy.array([True, False]) % m.numpy.array([True, True]),
    lambda m: m.numpy.divmod(m.numpy.array([True, False]), m.numpy.array([True, True]))[1],
    lambda m: m.numpy.array([True, False]) ** 2,
    lambda m: m.numpy.array([-7, 7]) % 3,
]


@pytest.mark.parametrize("k", range(len(_DIVISIONS)))
def test_integer_division_as_jax(k: int) -> None:
    assert _outcome(lambda: _DIVISIONS[k](fg)) == _outcome(lambda: _DIVISIONS[k](jax))


def test_integer_division_by_zero_values() -> None:
    assert (fnp.array([-7, 7, 0]) // 0).tolist() == [-2, -2, -1]
    assert (fnp.array([7], fnp.uint8) // fnp.uint8(0)).tolist() == [255]
    assert (fnp.array([-7, 7]) // fnp.array([2, -2])).tolist() == [-4, -4]
    assert (fnp.array([True, False]) // fnp.array([True, True])).dtype == np.int32


# --------------------------------------------------------------------------- arange


_ARANGES: list[Callable[[Any], Any]] = [
    lambda m: m.numpy.arange(0, 1, 0.1),
    lambda m: m.numpy.arange(0.3, 7.1, 0.7),
    lambda m: m.numpy.arange(-3.3, 5.5, 0.37, dtype=m.numpy.float32),
    lambda m: m.numpy.arange(0.1, 100.0, 1.3),
    lambda m: m.numpy.arange(0, 2, 0.1, dtype=m.numpy.float16),
    lambda m: m.numpy.arange(0, 2, 0.3, dtype=m.numpy.bfloat16),
    lambda m: m.numpy.arange(1.5, 9.7),
    lambda m: m.numpy.arange(0.5, 5, 1.5, dtype=m.numpy.int32),
    lambda m: m.numpy.arange(-2, 3, dtype=m.numpy.uint8),
    lambda m: m.numpy.arange(-1.5, 2, dtype=m.numpy.uint8),
    lambda m: m.numpy.arange(2**31, 2**31 + 3, dtype=m.numpy.uint32),
    lambda m: m.numpy.arange(250, 260, dtype=m.numpy.uint8),
    lambda m: m.numpy.arange(10, 0, -3),
    lambda m: m.numpy.arange(3.0),
    lambda m: m.numpy.arange(1, 4, dtype=m.numpy.complex64),
    lambda m: m.numpy.arange(True),
    lambda m: m.numpy.arange(m.numpy.array([3])),
    lambda m: m.jit(lambda: m.numpy.arange(0, 1, 0.1))(),
]


@pytest.mark.parametrize("k", range(len(_ARANGES)))
def test_arange_as_jax(k: int) -> None:
    assert _outcome(lambda: _ARANGES[k](fg)) == _outcome(lambda: _ARANGES[k](jax))


def test_arange_is_start_plus_step_times_iota() -> None:
    got = np.asarray(fnp.arange(0, 1, 0.1))
    step = np.float32(0.1)
    want = np.float32(0) + step * np.arange(10, dtype=np.float32)
    assert got.tobytes() == want.tobytes()
    # NumPy's float64 values rounded to float32 differ (0.3 is one float32 above)
    assert got.tobytes() != np.arange(0, 1, 0.1).astype(np.float32).tobytes()
    assert fnp.arange(-2, 3, dtype=fnp.uint8).tolist() == [254, 255, 0, 1, 2]


def test_arange_in_x64() -> None:
    with fg.enable_x64(True):
        jax.config.update("jax_enable_x64", True)
        try:
            for call in [lambda m: m.numpy.arange(1e6, 1e6 + 30, 1.1),
                         lambda m: m.numpy.arange(0, 2, 0.1, dtype=m.numpy.float16),
                         lambda m: m.numpy.arange(0.5, 5, 1.5, dtype=m.numpy.int32)]:
                assert _outcome(partial(call, fg)) == _outcome(partial(call, jax))
        finally:
            jax.config.update("jax_enable_x64", False)


# ----------------------------------------------------------------------- error texts


_ERRORS: list[Callable[[Any], Any]] = [
    lambda m: m.numpy.einsum("ij,jk", m.numpy.ones((2, 3)), m.numpy.ones((4, 2))),
    lambda m: m.numpy.einsum("ij,jk->q", m.numpy.ones((2, 3)), m.numpy.ones((3, 2))),
    lambda m: m.numpy.einsum("i,i", m.numpy.arange(3.0), 2.0),
    lambda m: m.numpy.einsum("...i,ij", m.numpy.ones((2, 3)), m.numpy.ones((2, 2))),
    lambda m: m.lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] + b[1]),
                                     (m.numpy.ones(8), m.numpy.ones(4))),
]


@pytest.mark.parametrize("k", range(len(_ERRORS)))
def test_errors_as_jax(k: int) -> None:
    ours, theirs = _outcome(partial(_ERRORS[k], fg)), _outcome(partial(_ERRORS[k], jax))
    assert ours[0] == "error"
    assert ours == theirs


# ------------------------------------------------------------- solve_triangular


def _tri() -> tuple[np.ndarray, np.ndarray]:
    low = np.tril(np.arange(1.0, 10.0, dtype=np.float32).reshape(3, 3)) + np.eye(3,
                                                                              dtype=np.float32)
    return low, np.stack([low, 2 * low, low])


_SOLVES: list[Callable[[Any], Any]] = [
    lambda m: m.scipy.linalg.solve_triangular(_tri()[1], np.arange(6.0).reshape(3, 2),
                                              lower=True),
    lambda m: m.scipy.linalg.solve_triangular(_tri()[1], np.arange(3.0), lower=True),
    lambda m: m.scipy.linalg.solve_triangular(_tri()[1], np.arange(18.0).reshape(3, 3, 2),
                                              lower=True),
    lambda m: m.scipy.linalg.solve_triangular(_tri()[0], np.arange(5.0), lower=True),
    lambda m: m.scipy.linalg.solve_triangular(_tri()[0], np.ones((5, 2)), lower=True),
    lambda m: m.scipy.linalg.solve_triangular(_tri()[0], np.ones(3), trans=3),
    lambda m: m.numpy.vectorize(lambda a, b: a @ b, signature="(n,m),(m)->(n)")(
        np.ones((2, 3)), np.ones(4)),
    lambda m: m.numpy.vectorize(lambda a, b: a @ b, signature="(n,m),(m)->(n)")(
        np.ones(3), np.ones(3)),
    lambda m: m.numpy.vectorize(lambda a, b: a @ b, signature="(n,m),(m)->(n)")(
        np.ones((4, 2, 3)), np.ones((5, 3))),
]


@pytest.mark.parametrize("k", range(len(_SOLVES)))
def test_solve_triangular_broadcasts_as_jax(k: int) -> None:
    ours, theirs = _outcome(partial(_SOLVES[k], fg)), _outcome(partial(_SOLVES[k], jax))
    if ours[0] == "error":
        assert ours == theirs
    else:  # the dtypes and weak types; the values to rounding (LAPACK's and XLA's solvers)
        assert ours[:2] == theirs[:2]
        np.testing.assert_allclose(np.frombuffer(ours[2], np.float32),
                                   np.frombuffer(theirs[2], np.float32), rtol=1e-5)


def test_solve_triangular_batch_of_matrices_with_one_b() -> None:
    low, batch = _tri()
    b = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    x = np.asarray(fg.scipy.linalg.solve_triangular(batch, b, lower=True))
    assert x.shape == (3, 3, 2)
    np.testing.assert_allclose(batch @ x, np.broadcast_to(b, (3, 3, 2)), atol=1e-5)


def test_batched_vector_solve_warns_as_jax() -> None:
    _, batch = _tri()
    with pytest.warns(FutureWarning, match="batched 1D solves with b.ndim > 1"):
        x = fg.scipy.linalg.solve_triangular(batch, np.ones((3, 3), np.float32), lower=True)
    assert x.shape == (3, 3)


# ----------------------------------------------------------------------- polyval


def test_polyval_fuses_multiply_adds_as_xla() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    p = rng.standard_normal(5).astype(np.float32)
    got = np.asarray(fnp.polyval(p, x))
    assert got.tobytes() == np.asarray(jnp.polyval(p, x)).tobytes()
    # Horner's rule with exact products rounded once per step
    y = np.zeros(1000)
    for c in p.astype(np.float64):
        y = (y.astype(np.float32).astype(np.float64) * x + c).astype(np.float32)
    np.testing.assert_allclose(got, y, rtol=1e-6, atol=1e-6)


_POLYVALS: list[Callable[[Any], Any]] = [
    lambda m: m.numpy.polyval(np.arange(12.0, dtype=np.float32).reshape(4, 3) / 7,
                              np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)),
    lambda m: m.numpy.polyval(m.numpy.array([1, 2, 3]), m.numpy.array([2, 3])),
    lambda m: m.numpy.polyval(m.numpy.array([1.5, -2.0, 0.3]), 0.7),
    lambda m: m.numpy.polyval(m.numpy.zeros(0), m.numpy.ones(3)),
    lambda m: m.numpy.polyval(m.numpy.array([1 + 1j, 2.0]), m.numpy.array([0.5j, 1.0])),
    lambda m: m.grad(lambda x: m.numpy.polyval(m.numpy.array([1.5, -2.0, 0.3]), x))(0.3),
]


@pytest.mark.parametrize("k", range(len(_POLYVALS)))
def test_polyval_as_jax(k: int) -> None:
    assert _outcome(partial(_POLYVALS[k], fg)) == _outcome(partial(_POLYVALS[k], jax))


def test_polyval_float64() -> None:
    rng = np.random.default_rng(1)
    x, p = rng.standard_normal(500), rng.standard_normal(6)
    with fg.enable_x64(True):
        jax.config.update("jax_enable_x64", True)
        try:
            assert _bits(fnp.polyval(p, x)) == _bits(jnp.polyval(p, x))
        finally:
            jax.config.update("jax_enable_x64", False)
