"""Float floor division and C's fmod as JAX computes them: the quotient of the exact
x - fmod(x, y), corrected and rounded (floor(x / y) rounds x / y first: 1.0 // 0.1 came out
10.0 where JAX, NumPy and PyTorch give 9.0), and lax.rem with the dividend's sign on zeros
and x itself for an infinite divisor."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

pytestmark = pytest.mark.usefixtures("jax_x64")

# Normal floats and the special values (no subnormals: XLA flushes them).
_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.1, -0.1, 2.0, -2.0, 1.0, 3.0]
_floats = st.one_of(st.sampled_from(_SPECIAL),
                    st.floats(-1e6, 1e6, allow_subnormal=False).filter(
                        lambda v: v == 0 or abs(v) > 1e-300))
_pairs = st.integers(1, 12).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, n, elements=_floats), hnp.arrays(np.float64, n, elements=_floats)))


def _same(got: object, want: object) -> None:
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype
    ok = (g == w) & (np.signbit(g) == np.signbit(w)) | (np.isnan(g) & np.isnan(w))
    assert ok.all(), (g[~ok], w[~ok])


@settings(max_examples=60, deadline=None)
@given(_pairs)
def test_floor_divide_fmod_rem_as_jax(xy: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = xy
    _same(fnp.floor_divide(x, y), jnp.floor_divide(x, y))
    _same(fnp.fmod(x, y), jnp.fmod(x, y))
    _same(fg.lax.rem(x, y), jax.lax.rem(x, y))
    _same(fnp.divmod(x, y)[0], jnp.divmod(x, y)[0])
    _same(fg.jit(fnp.floor_divide)(x, y), jnp.floor_divide(x, y))


def test_reported_example() -> None:
    assert float(fnp.floor_divide(1.0, 0.1)) == float(jnp.floor_divide(1.0, 0.1)) == 9.0
    assert float(fnp.array(7.0) // 0.1) == 69.0


@settings(max_examples=30, deadline=None)
@given(st.floats(-50, 50, allow_subnormal=False), st.sampled_from([2.0, 0.5, 3.0, -1.5]))
def test_rem_derivatives_as_jax(x: float, y: float) -> None:
    want = jax.grad(lambda a, b: jax.lax.rem(a, b), argnums=(0, 1))(x, y)
    got = fg.grad(lambda a, b: fg.lax.rem(a, b), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


def test_torch_face_floor_division_as_torch() -> None:
    torch = pytest.importorskip("torch")
    import funcgrad.torch as ft

    vals = [1.0, -1.0, 7.0, 5.0, 0.3, -2.5, 1e6, 0.0, -0.0]
    for div in (0.1, -0.1, 3.0, -3.0, 0.7):
        got = np.asarray((ft.tensor(vals, dtype=ft.float64) // div).tolist())
        want = np.asarray((torch.tensor(vals, dtype=torch.float64) // div).tolist())
        # (zero quotients carry the sign of a / b in PyTorch, not JAX's)
        assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
