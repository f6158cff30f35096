"""funcgrad.scipy.special: every function against jax.scipy.special and SciPy, on drawn
inputs in float64, plus JAX's derivatives (xlogy and friends at 0 included)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
from funcgrad.scipy import special as fs
from funcgrad.testing import check_grads

# No shrinking: each JAX call of a new value costs a dispatch, and a failure reads well as is.
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                    phases=(Phase.explicit, Phase.generate))


def _arr(lo: float, hi: float) -> Any:
    return (lo, hi)


# name -> (operand ranges, SciPy reference or None where SciPy differs in convention)
CASES: dict[str, tuple[tuple[tuple[float, float], ...], Any]] = {
    "erf": (((-3, 3),), ss.erf), "erfc": (((-3, 3),), ss.erfc),
    "erfinv": (((-0.95, 0.95),), ss.erfinv), "erfcx": (((-3, 10),), ss.erfcx),
    "dawsn": (((-5, 5),), ss.dawsn), "ndtr": (((-10, 10),), ss.ndtr),
    "ndtri": (((1e-6, 1 - 1e-6),), ss.ndtri), "log_ndtr": (((-40, 10),), ss.log_ndtr),
    "gammaln": (((0.1, 10),), ss.gammaln), "loggamma": (((0.1, 10),), ss.loggamma),
    "gammasgn": (((-4.5, 4.5),), ss.gammasgn), "gamma": (((-3.5, 6),), ss.gamma),
    "digamma": (((0.1, 10),), ss.digamma), "betaln": (((0.1, 5), (0.1, 5)), ss.betaln),
    "beta": (((0.1, 5), (0.1, 5)), ss.beta),
    "betainc": (((0.2, 5), (0.2, 5), (0, 1)), ss.betainc),
    "gammainc": (((0.2, 10), (0, 20)), ss.gammainc),
    "gammaincc": (((0.2, 10), (0, 20)), ss.gammaincc),
    "factorial": (((-2, 10),), lambda n: ss.factorial(n, exact=False)),
    "comb": (((0, 10), (0, 10)), lambda n, k: ss.comb(n, k, exact=False)),
    "poch": (((0.2, 5), (0.0, 4)), ss.poch), "zeta": (((1.2, 5), (0.2, 5)), ss.zeta),
    "spence": (((0, 4),), ss.spence), "exp1": (((0.05, 10),), ss.exp1),
    "expi": (((0.05, 5),), ss.expi), "i0": (((-5, 5),), ss.i0), "i0e": (((-20, 20),), ss.i0e),
    "i1": (((-5, 5),), ss.i1), "i1e": (((-20, 20),), ss.i1e),
    "logit": (((0.01, 0.99),), ss.logit), "expit": (((-10, 10),), ss.expit),
    "xlogy": (((-2, 2), (0, 3)), ss.xlogy), "xlog1py": (((-2, 2), (-1, 3)), ss.xlog1py),
    "entr": (((-1, 3),), ss.entr), "rel_entr": (((-1, 3), (-1, 3)), ss.rel_entr),
    "kl_div": (((-1, 3), (-1, 3)), ss.kl_div),
    "boxcox": (((0.1, 5), (-2, 2)), ss.boxcox), "boxcox1p": (((-0.9, 5), (-2, 2)), ss.boxcox1p),
}


def draw_operands(data: Any, ranges: tuple[tuple[float, float], ...]) -> list[np.ndarray]:
    shape = (4,)  # one shape: JAX compiles each function once
    zero_rich = st.sampled_from([0.0, 1.0, 2.0])
    out = []
    for lo, hi in ranges:
        el = st.floats(lo, hi, allow_nan=False)
        if lo <= 0 <= hi:
            el = el | zero_rich.filter(lambda v, lo=lo, hi=hi: lo <= v <= hi)
        out.append(data.draw(hnp.arrays(np.float64, shape, elements=el)))
    return out


@pytest.mark.parametrize("name", sorted(CASES))
@SETTINGS
@given(data=st.data())
def test_values_match_scipy_and_jax(name: str, data: Any) -> None:
    ranges, ref = CASES[name]
    ops = draw_operands(data, ranges)
    got = np.asarray(getattr(fs, name)(*ops))
    np.testing.assert_allclose(got, ref(*ops), rtol=1e-9, atol=1e-12, err_msg="vs SciPy")
    jax = pytest.importorskip("jax")
    import jax.scipy.special as js  # noqa: PLC0415

    with jax.enable_x64(True):
        want = np.asarray(getattr(js, name)(*ops))
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10, err_msg="vs JAX")


def test_integer_order_functions_match() -> None:
    jax = pytest.importorskip("jax")
    import jax.scipy.special as js  # noqa: PLC0415

    x = np.array([0.3, 1.7, 4.0])
    with jax.enable_x64(True):
        for n in (0, 1, 3):
            np.testing.assert_allclose(fs.polygamma(np.array(n), x), js.polygamma(n, x),
                                       rtol=1e-9)
            np.testing.assert_allclose(fs.expn(n, x), ss.expn(n, x), rtol=1e-12)
        np.testing.assert_allclose(fs.multigammaln(x + 2, 3), js.multigammaln(x + 2, 3),
                                   rtol=1e-12)
        np.testing.assert_allclose(fs.bernoulli(6), ss.bernoulli(6), atol=1e-15)
        np.testing.assert_allclose(fs.bernoulli(6), js.bernoulli(6), atol=1e-6)
        a = np.array([[1.0, 2.0, -1.0], [0.5, 0.5, 0.5]])
        b = np.array([[1.0, -1.0, 2.0], [1.0, 1.0, 1.0]])
        for kw in ({}, {"b": b}, {"axis": 1, "return_sign": True, "b": b}):
            got, want = fs.logsumexp(a, **kw), js.logsumexp(a, **kw)
            for g, w in zip(np.atleast_1d(*[got]) if not isinstance(got, tuple) else got,
                            np.atleast_1d(*[want]) if not isinstance(want, tuple) else want):
                np.testing.assert_allclose(g, w, rtol=1e-12)
        np.testing.assert_allclose(fs.softmax(a, axis=1), js.softmax(a, axis=1), rtol=1e-12)
        np.testing.assert_allclose(fs.log_softmax(a), js.log_softmax(a), rtol=1e-12)
    with pytest.raises(ValueError, match="integer"):
        fs.polygamma(1.0, x)
    with pytest.raises(NotImplementedError, match="Hurwitz"):
        fs.zeta(x)


GRAD_CASES = {
    "erf": [(-2, 2)], "erfc": [(-2, 2)], "erfinv": [(-0.9, 0.9)], "ndtr": [(-3, 3)],
    "ndtri": [(0.05, 0.95)], "log_ndtr": [(-30, 6)], "gammaln": [(0.3, 5)],
    "gamma": [(0.3, 4)], "digamma": [(0.3, 5)], "betaln": [(0.3, 4), (0.3, 4)],
    "beta": [(0.3, 4), (0.3, 4)], "logit": [(0.1, 0.9)], "expit": [(-4, 4)],
    "xlogy": [(-2, 2), (0.3, 3)], "xlog1py": [(-2, 2), (-0.7, 3)], "entr": [(0.2, 3)],
    "rel_entr": [(0.2, 3), (0.2, 3)], "kl_div": [(0.2, 3), (0.2, 3)],
    "boxcox": [(0.2, 4), (0.3, 2)], "i0": [(0.2, 3)], "i1": [(0.2, 3)], "comb": [(4, 8), (1, 3)],
    "poch": [(0.3, 3), (0.3, 3)], "erfcx": [(-2, 4)], "exp1": [(0.3, 4)],
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
@settings(SETTINGS, max_examples=3)
@given(data=st.data())
def test_derivatives_order_2(name: str, data: Any) -> None:
    ops = [data.draw(hnp.arrays(np.float64, (3,), elements=st.floats(lo, hi)))
           for lo, hi in GRAD_CASES[name]]
    check_grads(getattr(fs, name), ops, order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


def test_derivatives_at_zero_are_jaxs() -> None:
    jax = pytest.importorskip("jax")
    import jax.scipy.special as js  # noqa: PLC0415

    with jax.enable_x64(True):
        for name, args in (("xlogy", (0.0, 0.0)), ("xlogy", (0.0, 2.0)),
                           ("xlog1py", (0.0, -1.0)), ("entr", (0.0,)), ("entr", (1.0,)),
                           ("rel_entr", (0.0, 1.0)), ("kl_div", (0.5, 0.25))):
            argnums = tuple(range(len(args)))
            got = fg.grad(getattr(fs, name), argnums)(*args)
            want = jax.grad(getattr(js, name), argnums)(*args)
            np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float),
                                       err_msg=f"{name}{args}")


def test_jit_and_vmap() -> None:
    x = np.array([[0.2, 0.7], [0.4, 0.9]])
    f = lambda v: fs.gammaln(v) + fs.xlogy(v, v) + fs.ndtri(v) + fs.betainc(2.0, 3.0, v)  # noqa: E731
    np.testing.assert_allclose(fg.jit(f)(x), f(x), rtol=1e-13)
    np.testing.assert_allclose(fg.vmap(f)(x), np.stack([f(r) for r in x]), rtol=1e-13)


def test_float32_results() -> None:
    x = np.array([0.3, 1.5], np.float32)
    for name in ("gammaln", "digamma", "erf", "ndtri", "i0e", "log_ndtr"):
        out = getattr(fs, name)(x if name != "ndtri" else x / 2)
        assert out.dtype == np.float32, name
        ref = CASES[name][1](np.asarray(x if name != "ndtri" else x / 2, np.float64))
        np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-6, err_msg=name)


@given(st.floats(-300, -0.31), st.booleans())
@settings(deadline=None, max_examples=60)
def test_ndtri_far_tails_match_scipy(log10_p, upper):
    """p down to 1e-300 (float64) and 1e-30 (float32), where 2p - 1 rounds to -1."""
    p = 10.0 ** log10_p
    want = ss.ndtri(p)
    got = float(fs.ndtri(np.float64(p)))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    if upper:  # the upper tail, from the rounded 1 - p both libraries see
        np.testing.assert_allclose(float(fs.ndtri(np.float64(1 - p))), ss.ndtri(1 - p),
                                   rtol=1e-9)
    if log10_p > -30:
        np.testing.assert_allclose(float(fs.ndtri(np.float32(p))), want,
                                   rtol=2e-6)


@pytest.mark.parametrize("b", [[-1.0, -1.0], [1.0, -2.0], [1.0, 2.0], [0.0, 0.0]])
@pytest.mark.parametrize("return_sign", [False, True])
def test_logsumexp_with_negative_weights_as_jax(b, return_sign):
    """A negative weighted sum: NaN without return_sign (log of a negative number)."""
    jax = pytest.importorskip("jax")
    a = np.array([1.0, 2.0], np.float32)
    got = fs.logsumexp(a, b=np.asarray(b, np.float32), return_sign=return_sign)
    want = jax.scipy.special.logsumexp(a, b=np.asarray(b, np.float32), return_sign=return_sign)
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-6)
