"""sici, fresnel and owens_t (funcgrad/scipy/_special_host.py): values against JAX and
SciPy on drawn float64 inputs, derivatives against finite differences to second order
(forward and reverse) and against JAX's rules, jit against eager, vmap against a loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import DTypeError
from funcgrad.scipy import special as fs
from funcgrad.testing import check_grads

SETTINGS = settings(max_examples=6, deadline=None, derandomize=True, database=None,
                    phases=(Phase.explicit, Phase.generate))


def _floats(lo: float, hi: float, n: int = 5) -> Any:
    # Away from 0: Ci and its derivative are singular there.
    return hnp.arrays(np.float64, (n,), elements=st.floats(lo, hi)).filter(
        lambda a: bool(np.all(np.abs(a) > 0.05)))


# name -> (function of x alone, SciPy's values, the derivatives JAX's rules give)
UNARY = {
    "si": (lambda x: fs.sici(x)[0], lambda x: ss.sici(x)[0], lambda x: np.sin(x) / x),
    "ci": (lambda x: fs.sici(x)[1], lambda x: np.real(ss.sici(x + 0j)[1]),
           lambda x: np.cos(x) / x),
    "fresnel_s": (lambda x: fs.fresnel(x)[0], lambda x: ss.fresnel(x)[0],
                  lambda x: np.sin(np.pi * x * x / 2)),
    "fresnel_c": (lambda x: fs.fresnel(x)[1], lambda x: ss.fresnel(x)[1],
                  lambda x: np.cos(np.pi * x * x / 2)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(x=_floats(-2.5, 2.5))  # fresnel oscillates faster further out: finite differences blur
def test_values_and_derivatives(name: str, x: np.ndarray) -> None:
    f, ref, deriv = UNARY[name]
    np.testing.assert_allclose(np.asarray(f(x)), ref(x), rtol=1e-12, atol=1e-14)
    g = fg.vmap(fg.grad(f))(x)
    np.testing.assert_allclose(np.asarray(g), deriv(x), rtol=1e-12, atol=1e-14)
    check_grads(lambda v: fnp.sum(f(v)), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_jit_and_vmap_agree_with_eager(name: str) -> None:
    f = UNARY[name][0]
    x = np.linspace(-3.0, 4.0, 7) + 0.01
    eager = np.asarray(f(x))
    np.testing.assert_array_equal(np.asarray(fg.jit(f)(x)), eager)
    np.testing.assert_array_equal(np.asarray(fg.vmap(f)(x)), eager)
    np.testing.assert_array_equal(np.asarray(fg.vmap(f)(x.reshape(7, 1))).ravel(), eager)


@SETTINGS
@given(h=_floats(-3.0, 3.0), a=_floats(-2.0, 2.0))
def test_owens_t(h: np.ndarray, a: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(fs.owens_t(h, a)), ss.owens_t(h, a), rtol=1e-10,
                               atol=1e-14)
    check_grads(lambda u, v: fnp.sum(fs.owens_t(u, v)), (h, a), order=2,
                modes=("fwd", "rev"))
    np.testing.assert_allclose(np.asarray(fg.jit(fs.owens_t)(h, a)), ss.owens_t(h, a),
                               rtol=1e-10, atol=1e-14)


def test_against_jax() -> None:
    jax = pytest.importorskip("jax")
    import jax.scipy.special as js  # noqa: PLC0415

    with jax.enable_x64(True):
        x = np.array([-2.5, -0.3, 0.4, 1.0, 7.0])
        h, a = np.array([-1.0, 0.2, 0.3, 2.0, 0.0]), np.array([0.5, -1.5, 0.7, 3.0, 1.0])
        for ours, theirs in ((fs.sici, js.sici), (fs.fresnel, js.fresnel)):
            for i in range(2):
                np.testing.assert_allclose(np.asarray(ours(x)[i]),
                                           np.asarray(theirs(x)[i]), rtol=1e-7)
                gj = jax.vmap(jax.grad(lambda v, t=theirs, i=i: t(v)[i]))(x)
                gf = fg.vmap(fg.grad(lambda v, o=ours, i=i: o(v)[i]))(x)
                np.testing.assert_allclose(np.asarray(gf), np.asarray(gj), rtol=1e-10,
                                           atol=1e-13)
        np.testing.assert_allclose(np.asarray(fs.owens_t(h, a)), np.asarray(js.owens_t(h, a)),
                                   rtol=1e-7, atol=1e-12)
        for k in (0, 1):
            gj = jax.vmap(jax.grad(js.owens_t, argnums=k))(h, a)
            gf = fg.vmap(fg.grad(fs.owens_t, argnums=k))(h, a)
            np.testing.assert_allclose(np.asarray(gf), np.asarray(gj), rtol=1e-7, atol=1e-12)


def test_derivatives_at_zero_follow_jax() -> None:
    assert float(fg.grad(lambda x: fs.sici(x)[0])(0.0)) == 1.0
    assert float(fg.grad(lambda x: fs.sici(x)[1])(0.0)) == np.inf
    assert float(fs.sici(0.0)[1]) == -np.inf


def test_complex_input_is_refused() -> None:
    with pytest.raises(DTypeError, match="complex"):
        fs.sici(np.array([1.0 + 1j]))
