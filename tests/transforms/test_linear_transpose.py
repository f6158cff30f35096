"""jax.linear_transpose against JAX 0.10.2 on linear maps of many kinds (drawn cotangents),
integer maps, and JAX's refusal of functions that are not linear."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax
from funcgrad.errors import NonLinearError

jax = pytest.importorskip("jax")
pytestmark = pytest.mark.x32  # both libraries at JAX's default, 32-bit
jnp, jlax = jax.numpy, jax.lax

C = np.arange(12.0).reshape(3, 4) / 7


def _maps(J, L, N):  # noqa: N803 - the library's module names
    return {
        "sum": lambda x: x.sum(0), "mean": lambda x: x.mean(),
        "reshape": lambda x: x.reshape(4, 3), "T": lambda x: x.T,
        "slice": lambda x: x[1:, ::2], "take": lambda x: x[N.array([0, 2, 2])],
        "concat": lambda x: N.concatenate([x, 2 * x]), "pad": lambda x: N.pad(x, 1),
        "cumsum": lambda x: N.cumsum(x, 1), "matmul": lambda x: x @ C.T,
        "einsum": lambda x: N.einsum("ij,ij->i", x, C), "fft": lambda x: N.fft.fft(x).real,
        "dynamic_update_slice": lambda x: L.dynamic_update_slice(N.zeros((5, 5)), x, (1, 0)),
        "where": lambda x: N.where(C > 0.5, x, 0.0), "at_add": lambda x: x.at[0].add(x[1]),
        "roll": lambda x: N.roll(x, 1), "broadcast": lambda x: N.broadcast_to(x, (2, 3, 4)),
        "div": lambda x: -x / 3.0 - x, "triu": lambda x: N.triu(x), "trace": lambda x: N.trace(x),
        "avg_pool": lambda x: L.reduce_window(x, 0.0, L.add, (2, 2), (1, 1), "VALID"),
        "scatter_add": lambda x: N.zeros(6).at[N.array([0, 0, 5])].add(x[0, :3]),
        "jit": lambda x: J.jit(lambda y: 2 * y)(x),
        "scan": lambda x: L.scan(lambda c, r: (c + r, 2 * c), N.zeros(4), x)[1],
        "cond": lambda x: L.cond(True, lambda y: y * 2, lambda y: -y, x),
        "vmap": lambda x: J.vmap(lambda r: r * C[0])(x),
    }


NAMES = list(_maps(fg, flax, fnp))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_transpose_as_jax(name, seed):
    x = np.ones((3, 4), np.float32)
    f_ours, f_jax = _maps(fg, flax, fnp)[name], _maps(jax, jlax, jnp)[name]
    out = jax.eval_shape(f_jax, x)
    ct = np.random.default_rng(seed).normal(size=out.shape).astype(np.float32)
    want = jax.linear_transpose(f_jax, x)(ct)
    got = fg.linear_transpose(f_ours, x)(ct)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=2e-5, atol=2e-5)
    assert got[0].dtype == want[0].dtype


@pytest.mark.parametrize(("make", "ct"), [
    (lambda N, x: x * 2, [3, -1, 2, 5]), (lambda N, x: x.sum() * 3 - x[0], 7),
    (lambda N, x: N.cumsum(x)[::-1], [3, -1, 2, 5]), (lambda N, x: x[1:] - x[:-1], [4, 0, -9]),
])
def test_integer_maps_are_exact_as_jax(make, ct):
    def f_jax(x):
        return make(jnp, x)

    def f(x):
        return make(fnp, x)

    x = fnp.arange(4)
    (got,) = fg.linear_transpose(f, x)(fnp.asarray(ct))
    # The transpose of the map's matrix M (column j: f at the j-th unit vector).
    m = np.stack([np.asarray(f(fnp.asarray(np.eye(4, dtype=np.int32)[j]))).reshape(-1)
                  for j in range(4)], axis=1)
    np.testing.assert_array_equal(np.asarray(got), m.T @ np.asarray(ct).reshape(-1))
    want = jax.linear_transpose(f_jax, jnp.arange(4))(jnp.asarray(ct))
    assert got.dtype == want[0].dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want[0]))


@pytest.mark.parametrize("f", [fnp.sin, lambda x: x * x, fnp.abs, lambda x: x.max(),
                               lambda x: x ** 2, lambda x: fnp.floor(x)])
def test_non_linear_functions_are_refused_as_jax(f):
    with pytest.raises(NotImplementedError, match="not linear"):
        fg.linear_transpose(f, 1.0)(1.0)
    with pytest.raises(NonLinearError):
        fg.linear_transpose(f, 1.0)


def test_cotangent_of_the_wrong_shape():
    f_t = fg.linear_transpose(lambda x: x * 2, 1.0)
    with pytest.raises(TypeError, match="cotangent type does not match function output"):
        f_t(fnp.ones(2))
