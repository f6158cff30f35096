"""``jax.scipy.special``: special functions over funcgrad arrays, with JAX's values and
derivatives (NumPy broadcasting and promotion of the arguments, integers to the default
float).

>>> import funcgrad.numpy as jnp
>>> from funcgrad.scipy import special
>>> special.gammaln(jnp.array([1.0, 4.0]))
Array([0.       , 1.7917595], dtype=float32)
>>> special.xlogy(0.0, 0.0)
Array(0., dtype=float32, weak_type=True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad import nn as _nn
from funcgrad.core import get_aval
from funcgrad.errors import DTypeError
from funcgrad.numpy._core import promote_inexact
from funcgrad.primitives import special as _sp
from funcgrad.scipy._special_host import fresnel, owens_t, sici
from funcgrad.transforms.custom import custom_jvp


def _args(name: str, *xs: Any) -> list[Any]:
    """Promote to one inexact dtype and broadcast to one shape; complex is refused."""
    out = promote_inexact(*xs)
    if out[0].dtype.kind == "c":
        raise DTypeError(f"{name} does not support complex inputs (JAX's neither)")
    if len(out) > 1:
        out = list(jnp.broadcast_arrays(*out))
    return out


def _const(x: Any, v: float) -> Any:
    return jnp.asarray(v, dtype=jnp.asarray(x).dtype)


def _strong(x: Any) -> Any:
    """``x`` as a strongly typed Array: JAX's implementations of these functions build
    their results from constants of the argument's dtype."""
    return lax.convert_element_type(x, get_aval(x).dtype)


# ------------------------------------------------------------------ error functions


def erf(x: Any) -> Any:
    """The error function.

    >>> round(float(erf(0.5)), 6)
    0.5205
    """
    (x,) = _args("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """``1 - erf(x)``, accurate where it is small.

    >>> float(erfc(0.0))
    1.0
    """
    (x,) = _args("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse of :func:`erf` on (-1, 1).

    >>> float(erfinv(0.0))
    0.0
    """
    (x,) = _args("erfinv", x)
    return _sp.erf_inv(x)


def erfcx(x: Any) -> Any:
    """``exp(x**2) * erfc(x)``.

    >>> float(erfcx(0.0))
    1.0
    """
    (x,) = _args("erfcx", x)
    return _strong(_sp.erfcx(x))


def dawsn(x: Any) -> Any:
    """Dawson's integral.

    >>> float(dawsn(0.0))
    0.0
    """
    (x,) = _args("dawsn", x)
    return _strong(_sp.dawsn(x))


def ndtr(x: Any) -> Any:
    """The standard normal CDF.

    >>> float(ndtr(0.0))
    0.5
    """
    (x,) = _args("ndtr", x)
    # erfc keeps the relative precision of the lower tail.
    return _const(x, 0.5) * lax.erfc(x * _const(x, -math.sqrt(0.5)))


@custom_jvp
def _ndtri(p: Any) -> Any:
    # Solved in the lower tail q = min(p, 1 - p): a start (erf_inv in the middle; for
    # q < 0.01, where 2q - 1 rounds to -1 in float32, Abramowitz and Stegun's 26.2.23 from
    # sqrt(-2 log q)), then Newton steps on log ndtr(x) = log q, accurate far into the tail
    # (p = 1e-30 in float32).
    one, half = _const(p, 1.0), _const(p, 0.5)
    upper = p > half
    q = jnp.where(upper, one - p, p)
    safe = jnp.where((q > 0) & (q < half), q, half)
    t = jnp.sqrt(_const(p, -2.0) * jnp.log(jnp.minimum(safe, _const(p, 0.01))))
    tail = -(t - (_const(p, 2.515517) + _const(p, 0.802853) * t + _const(p, 0.010328) * t * t)
             / (one + _const(p, 1.432788) * t + _const(p, 0.189269) * t * t
                + _const(p, 0.001308) * t * t * t))
    middle = _const(p, math.sqrt(2.0)) * _sp.erf_inv(_const(p, 2.0) * safe - one)
    x = jnp.where(safe < _const(p, 0.01), tail, middle)
    log_q = jnp.log(safe)
    for _ in range(3):
        lx = log_ndtr(x)
        log_pdf = -half * x * x - _const(x, 0.5 * math.log(2 * math.pi))
        x = x - (lx - log_q) * jnp.exp(lx - log_pdf)
    x = jnp.where(q == half, _const(p, 0.0), x)
    x = jnp.where(q == 0, _const(p, -np.inf), x)
    x = jnp.where((p < 0) | (p > 1) | jnp.isnan(p), _const(p, np.nan), x)
    return jnp.where(upper, -x, x)


@_ndtri.defjvp
def _ndtri_jvp(primals: Any, tangents: Any) -> Any:
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    # dx/dp = 1 / pdf(x)
    return x, t * jnp.exp(0.5 * x * x + _const(x, 0.5 * math.log(2 * math.pi)))


def ndtri(p: Any) -> Any:
    """The inverse of :func:`ndtr` (the standard normal quantile).

    >>> float(ndtri(0.5))
    0.0
    """
    # JAX takes float32/float64 only (no promotion): integers and half types are a
    # TypeError there, with this text.
    if isinstance(p, (list, tuple)):
        raise TypeError(f"Cannot determine dtype of {p}")
    dtype = dtypes.canonicalize(np.dtype(p.dtype) if hasattr(p, "dtype")
                                else np.asarray(p).dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported "
                        "types.")
    (p,) = _args("ndtri", p)
    return _ndtri(p)


def _log_ndtr_asymptotic_series(x: Any, series_order: int) -> Any:
    x2 = x * x
    even, odd = jnp.zeros_like(x), jnp.zeros_like(x)
    xpow = jnp.ones_like(x)
    for n in range(1, series_order + 1):
        xpow = xpow * x2
        y = _const(x, float(np.prod(np.arange(2 * n - 1, 0, -2)))) / xpow
        if n % 2:
            odd = odd + y
        else:
            even = even + y
    return _const(x, 1.0) + even - odd


def _log_ndtr_value(x: Any, series_order: int) -> Any:
    # JAX's three ranges: log1p(-ndtr(-x)) ~ -ndtr(-x) above, log(ndtr) in the middle,
    # the asymptotic series of the lower tail below.
    lower, upper = (-20.0, 8.0) if x.dtype == np.float64 else (-10.0, 5.0)
    lo, up = _const(x, lower), _const(x, upper)
    lower_x = jnp.minimum(x, lo)
    log_lower = (-0.5 * lower_x * lower_x - jnp.log(-lower_x)
                 - _const(x, 0.5 * math.log(2 * math.pi))
                 + jnp.log(_log_ndtr_asymptotic_series(lower_x, series_order)))
    return jnp.where(x > up, -ndtr(-x),
                     jnp.where(x > lo, jnp.log(ndtr(jnp.maximum(x, lo))), log_lower))


@custom_jvp
def _log_ndtr3(x: Any) -> Any:
    return _log_ndtr_value(x, 3)


@_log_ndtr3.defjvp
def _log_ndtr3_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    ans = _log_ndtr3(x)
    log_pdf = -0.5 * x * x - _const(x, 0.5 * math.log(2 * math.pi))
    return ans, t * jnp.exp(log_pdf - ans)


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails.

    >>> round(float(log_ndtr(0.0)), 6)
    -0.693147
    """
    (x,) = _args("log_ndtr", x)
    if not 0 <= series_order <= 30:
        raise ValueError(f"series_order must be in [0, 30], got {series_order}")
    if series_order == 3:
        return _log_ndtr3(x)
    return _log_ndtr_value(x, int(series_order))


# --------------------------------------------------------------------- gamma family


def gammaln(x: Any) -> Any:
    """``log|Gamma(x)|``.

    >>> float(gammaln(1.0))
    0.0
    """
    (x,) = _args("gammaln", x)
    return _sp.lgamma(x)


def loggamma(x: Any) -> Any:
    """The principal branch of ``log Gamma(x)``: for real ``x``, ``gammaln`` where
    x > 0 and NaN elsewhere, as JAX and SciPy (complex inputs are not supported).

    >>> float(loggamma(1.0))
    0.0
    """
    (x,) = _args("loggamma", x)
    # JAX tests x > 0, not the sign of Gamma: loggamma(-1.5) is NaN though Gamma(-1.5) > 0.
    return jnp.where(x > 0, _sp.lgamma(x), np.nan)  # (a Python NaN: x's weak type stays)


def gammasgn(x: Any) -> Any:
    """The sign of the gamma function (NaN at its poles).

    >>> float(gammasgn(-0.5))
    -1.0
    """
    (x,) = _args("gammasgn", x)
    floor_x = jnp.floor(x)
    neg = x < 0
    nan = (neg & (x == floor_x)) | jnp.isnan(x)
    negative_zero = (x == 0) & (jnp.copysign(_const(x, 1.0), x) < 0)
    minus = (neg & (jnp.remainder(floor_x, 2.0) != 0)) | negative_zero
    return jnp.where(nan, _const(x, np.nan), jnp.where(minus, _const(x, -1.0),
                                                        _const(x, 1.0)))


def gamma(x: Any) -> Any:
    """The gamma function.

    >>> float(gamma(5.0))
    24.0
    """
    (x,) = _args("gamma", x)
    return gammasgn(x) * jnp.exp(_sp.lgamma(x))


def digamma(x: Any) -> Any:
    """``d/dx log Gamma(x)``.

    >>> round(float(digamma(1.0)), 5)
    -0.57722
    """
    (x,) = _args("digamma", x)
    return _sp.digamma(x)


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of :func:`digamma` (``n`` of an integer type).

    >>> import funcgrad.numpy as jnp
    >>> round(float(polygamma(jnp.array(1), 1.0)), 5)
    1.64493
    """
    n_dtype = np.asarray(n).dtype if isinstance(n, (int, float)) else get_aval(n).dtype
    if n_dtype.kind not in "iu":
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{n_dtype}.")
    n, x = _args("polygamma", n, x)
    return _sp.polygamma(n, x)


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``.

    >>> float(betaln(1.0, 1.0))
    0.0
    """
    a, b = _args("betaln", a, b)
    return _sp.lgamma(a) + _sp.lgamma(b) - _sp.lgamma(a + b)


def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    >>> round(float(beta(2.0, 3.0)), 6)
    0.083333
    """
    a, b = _args("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * jnp.exp(betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)``.

    >>> float(betainc(2.0, 3.0, 0.5))
    0.6875
    """
    a, b, x = _args("betainc", a, b, x)
    return _sp.betainc(a, b, x)


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)``.

    >>> round(float(gammainc(1.0, 2.0)), 6)
    0.864665
    """
    a, x = _args("gammainc", a, x)
    return _sp.igamma(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    >>> round(float(gammaincc(1.0, 2.0)), 6)
    0.135335
    """
    a, x = _args("gammaincc", a, x)
    return _sp.igammac(a, x)


def factorial(n: Any, exact: bool = False) -> Any:
    """``n!`` as ``Gamma(n + 1)`` (0 for negative n).

    >>> float(factorial(4))
    24.0
    """
    if exact:
        raise ValueError("factorial with exact=True is not supported (JAX's neither): "
                         "use math.factorial on Python integers")
    (n,) = _args("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(_sp.lgamma(n + 1.0)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:  # noqa: N803 - SciPy's name
    """The number of combinations of N things taken k at a time.

    >>> round(float(comb(5.0, 2.0)), 4)
    10.0
    """
    N, k = _args("comb", N, k)  # noqa: N806
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_n, safe_k = jnp.where(cond, N, 0.0), jnp.where(cond, k, 0.0)
    out = jnp.exp(_sp.lgamma(safe_n + 1.0) - _sp.lgamma(safe_k + 1.0)
                  - _sp.lgamma(safe_n + 1.0 - safe_k))
    return jnp.where(cond, out, 0.0)


def poch(z: Any, m: Any) -> Any:
    """The rising factorial ``Gamma(z + m) / Gamma(z)``.

    >>> round(float(poch(2.0, 3.0)), 4)
    24.0
    """
    z, m = _args("poch", z, m)
    return gamma(z + m) / gamma(z)


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension ``d``.

    >>> round(float(multigammaln(2.0, 1)), 6)
    0.0
    """
    d = int(d)
    (a,) = _args("multigammaln", a)
    const = _const(a, 0.25 * d * (d - 1) * math.log(math.pi))
    total = jnp.zeros_like(a)
    for j in range(d):
        total = total + _sp.lgamma(a - _const(a, j / 2))
    return total + const


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``sum_n (n + q) ** -x`` (``q`` is required, as in JAX).

    >>> round(float(zeta(2.0, 1.0)), 6)
    1.644934
    """
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz "
            "Zeta function.")
    x, q = _args("zeta", x, q)
    return _sp.zeta(x, q)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0 .. B_n`` (``B_1 = -1/2``).

    >>> bernoulli(2).tolist()
    [1.0, -0.5, 0.1666666716337204]
    """
    import scipy.special  # noqa: PLC0415 - a table of constants, made on the host

    n = int(n)
    if n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n}")
    return jnp.asarray(np.asarray(scipy.special.bernoulli(n)))


def spence(x: Any) -> Any:
    """Spence's function, ``integral of log(t) / (1 - t) from 1 to x`` (x >= 0).

    >>> float(spence(1.0))
    0.0
    """
    (x,) = _args("spence", x)
    return _strong(_sp.spence(x))


def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x)``.

    >>> round(float(exp1(1.0)), 6)
    0.219384
    """
    (x,) = _args("exp1", x)
    return _strong(_sp.exp1(x))


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)``.

    >>> round(float(expi(1.0)), 5)
    1.89512
    """
    (x,) = _args("expi", x)
    return _strong(_sp.expi(x))


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x)``.

    >>> round(float(expn(1, 1.0)), 6)
    0.219384
    """
    n, x = _args("expn", n, x)
    return _strong(_sp.expn(n, x))


# ----------------------------------------------------------------------- Bessel


def i0e(x: Any) -> Any:
    """``exp(-|x|) I0(x)``.

    >>> float(i0e(0.0))
    1.0
    """
    (x,) = _args("i0e", x)
    return _sp.bessel_i0e(x)


def i1e(x: Any) -> Any:
    """``exp(-|x|) I1(x)``.

    >>> float(i1e(0.0))
    0.0
    """
    (x,) = _args("i1e", x)
    return _sp.bessel_i1e(x)


def i0(x: Any) -> Any:
    """The modified Bessel function of order 0.

    >>> float(i0(0.0))
    1.0
    """
    (x,) = _args("i0", x)
    return jnp.exp(jnp.abs(x)) * _sp.bessel_i0e(x)


def i1(x: Any) -> Any:
    """The modified Bessel function of order 1.

    >>> float(i1(0.0))
    0.0
    """
    (x,) = _args("i1", x)
    return jnp.exp(jnp.abs(x)) * _sp.bessel_i1e(x)


# ------------------------------------------------- logistic, entropies, xlogy family


@custom_jvp
def _logit(x: Any) -> Any:
    # A Python 1.0 (not a constant of x's dtype) keeps a weakly typed x weak, as in JAX.
    return jnp.log(x / (1.0 - x))


@_logit.defjvp
def _logit_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _logit(x), t / (x * (1.0 - x))


def logit(x: Any) -> Any:
    """``log(x / (1 - x))``, the inverse of :func:`expit`.

    >>> float(logit(0.5))
    0.0
    """
    (x,) = _args("logit", x)
    return _logit(x)


def expit(x: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``.

    >>> float(expit(0.0))
    0.5
    """
    (x,) = _args("expit", x)
    return lax.logistic(x)


@custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    # 0 where x == 0 (even for y == 0), NaN in y still shows (SciPy's convention).
    return jnp.where((x != 0) | jnp.isnan(y), x * jnp.log(y), jnp.zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * jnp.log(y) + ty * x / y


@custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    return jnp.where((x != 0) | jnp.isnan(y), x * jnp.log1p(y), jnp.zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * jnp.log1p(y) + ty * x / (_const(y, 1.0) + y)


@custom_jvp
def _xlogx(x: Any) -> Any:
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (jnp.log(x) + _const(x, 1.0))


def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (derivatives as JAX's).

    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    x, y = _args("xlogy", x, y)
    return _xlogy(x, y)


def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0``.

    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    x, y = _args("xlog1py", x, y)
    return _xlog1py(x, y)


def entr(x: Any) -> Any:
    """``-x log x`` (0 at 0, -inf below).

    >>> float(entr(1.0))
    -0.0
    """
    (x,) = _args("entr", x)
    return jnp.where(x < 0, -np.inf, -_xlogx(x))


def rel_entr(p: Any, q: Any) -> Any:
    """``p log(p / q)`` for p, q > 0; 0 at p == 0 <= q; inf elsewhere.

    >>> float(rel_entr(1.0, 1.0))
    0.0
    """
    p, q = _args("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p = jnp.where(both, p, 1.0)
    safe_q = jnp.where(both, q, 1.0)
    val = _xlogx(safe_p) - _xlogy(safe_p, safe_q)
    return jnp.where(both, val, jnp.where(one_zero, 0.0, np.inf))


def kl_div(p: Any, q: Any) -> Any:
    """``p log(p / q) - p + q`` (the terms of the KL divergence).

    >>> float(kl_div(1.0, 1.0))
    0.0
    """
    p, q = _args("kl_div", p, q)
    return rel_entr(p, q) - p + q


def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log x`` at 0).

    >>> float(boxcox(1.0, 2.0))
    0.0
    """
    x, lmbda = _args("boxcox", x, lmbda)
    is_zero = lmbda == 0
    safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    return jnp.where(is_zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transform of ``1 + x``.

    >>> float(boxcox1p(0.0, 2.0))
    0.0
    """
    x, lmbda = _args("boxcox1p", x, lmbda)
    is_zero = lmbda == 0
    safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    return jnp.where(is_zero, log1p_x, jnp.expm1(safe * log1p_x) / safe)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis`` without overflow (with its sign if asked).

    >>> round(float(logsumexp(jnp.array([0.0, 0.0]))), 4)
    0.6931
    """
    return _nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                         where=where)


def softmax(x: Any, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``.

    >>> softmax(jnp.array([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    return _nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``x - logsumexp(x)`` along ``axis``.

    >>> round(float(log_softmax(jnp.array([0.0, 0.0]))[0]), 4)
    -0.6931
    """
    return _nn.log_softmax(x, axis=axis)


# Defined there (this module is near its size limit); they read gamma from here lazily.
from funcgrad.scipy._special_more import (  # noqa: E402
    bessel_jn,
    hyp1f1,
    hyp2f1,
    sph_harm_y,
    wofz,
)

__all__ = [
    "bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
    "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit",
    "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn",
    "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax",
    "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch",
    "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py",
    "xlogy", "zeta",
]


def __dir__() -> list[str]:
    """What ``dir()`` lists, as JAX's module: the public names and the module's own
    attributes, not the imports and helpers this file uses."""
    return sorted({*__all__, *(n for n in globals() if n in _MODULE_ATTRS)})


_MODULE_ATTRS = frozenset({"__builtins__", "__cached__", "__doc__", "__file__", "__loader__",
                           "__name__", "__package__", "__spec__"})
