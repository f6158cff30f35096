"""More of ``jax.scipy.special`` (re-exported by ``funcgrad.scipy.special``): the Faddeeva
function ``wofz``, the hypergeometric functions ``hyp1f1`` and ``hyp2f1``, ``bessel_jn``
and the spherical harmonics ``sph_harm_y``, written as JAX writes them.

The series of ``hyp1f1``/``hyp2f1`` run elementwise until each element's term is below
the dtype's epsilon (at most 250 terms), as JAX's vectorized while loops do: one loop over
the whole array whose converged elements stop changing. Their derivatives are JAX's
series rules (``custom_jvp``), the others differentiate through their operations.

>>> from funcgrad.scipy import special
>>> round(float(special.hyp1f1(1.0, 1.0, 0.5)), 6)
1.648721
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.core import get_aval
from funcgrad.numpy._core import promote_inexact
from funcgrad.primitives import special as _sp
from funcgrad.transforms.custom import custom_jvp

__all__ = ["bessel_jn", "hyp1f1", "hyp2f1", "sph_harm_y", "wofz"]


def _c(x: Any, v: Any) -> Any:
    """``v`` as an array of ``x``'s dtype."""
    return jnp.asarray(v, dtype=get_aval(x).dtype)


def _gamma(x: Any) -> Any:
    from funcgrad.scipy.special import gamma  # noqa: PLC0415 - special re-exports this module

    return gamma(x)


def _eps(x: Any) -> float:
    return float(np.finfo(get_aval(x).dtype).eps)


def _masked_while(cond: Callable[[tuple[Any, ...]], Any],
                  body: Callable[[tuple[Any, ...]], tuple[Any, ...]],
                  init: tuple[Any, ...]) -> tuple[Any, ...]:
    """JAX's while loop vectorized over elements: ``body`` runs while any element's
    ``cond`` holds, and an element whose ``cond`` is false keeps its state."""

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        go = cond(state)
        new = body(state)
        return tuple(jnp.where(go, n, s) for n, s in zip(new, state))

    return tuple(lax.while_loop(lambda s: jnp.any(cond(s)), step, init))


# ------------------------------------------------------------------------- wofz

# Weideman (1994) N=32 rational approximation of the Faddeeva function (JAX's constants):
# w(z) = 2 polyval(c, Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz),
# for Im(z) >= 0; the lower half plane by reflection.
_WOFZ_L = 4.7568284600108841
_WOFZ_C = np.array([
    -1.3034426067909105e-12, 3.7411838373738471e-12, 8.030427700497756e-12,
    -2.1543593557490879e-11, -5.5442449963237932e-11, 1.165824698850374e-10,
    4.1537441121999766e-10, -5.2310202114920615e-10, -3.2080151339721323e-09,
    8.1248864216535907e-10, 2.3797556530014025e-08, 2.2930438438915445e-08,
    -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07,
    4.4015317312832251e-06, 6.8210319443575151e-06, -2.1409619201999998e-05,
    -0.00013075449254579421, -0.00024532980270038237, 0.00039259136070109705,
    0.0045195411053493093, 0.019006155784845501, 0.057304403529837282, 0.14060716226893755,
    0.29544451071508743, 0.54601397206393376, 0.9019254893648001, 1.3455441692345449,
    1.8256696296324815, 2.2635372999002676, 2.5722534081245696,
])


def _wofz_upper(z: Any) -> Any:
    re = lax.real(z)
    big_l = lax.complex(_c(re, _WOFZ_L), _c(re, 0.0))
    iz = lax.complex(-lax.imag(z), re)
    denom = big_l - iz
    zz = (big_l + iz) / denom
    p = jnp.polyval(jnp.asarray(_WOFZ_C, dtype=get_aval(zz).dtype), zz)
    one_over_sqrtpi = lax.complex(_c(re, 1.0 / np.sqrt(np.pi)), _c(re, 0.0))
    return 2 * p / (denom * denom) + one_over_sqrtpi / denom


@custom_jvp
def _wofz(z: Any) -> Any:
    upper = lax.imag(z) >= _c(lax.real(z), 0.0)
    w_upper = _wofz_upper(jnp.where(upper, z, -z))
    return jnp.where(upper, w_upper, 2 * jnp.exp(-(z * z)) - w_upper)


@_wofz.defjvp
def _wofz_jvp(primals: Any, tangents: Any) -> Any:
    (z,), (g,) = primals, tangents
    ans = _wofz(z)
    re = lax.real(z)
    # w'(z) = -2 z w(z) + 2i / sqrt(pi)
    return ans, g * (-(2 * z * ans) + lax.complex(_c(re, 0.0), _c(re, 2.0 / np.sqrt(np.pi))))


def wofz(z: Any) -> Any:
    """The Faddeeva function ``exp(-z**2) erfc(-i z)`` (complex; real input is promoted).

    >>> round(float(wofz(0.0).real), 6)
    1.0
    """
    z = jnp.asarray(z)
    dt = get_aval(z).dtype
    cdt = dt if dt.kind == "c" else np.dtype(np.complex128) if dt == np.float64 else \
        dtypes.default_complex() if dt.kind in "biu" else np.dtype(np.complex64)
    return _wofz(z.astype(cdt))


# ----------------------------------------------------------------------- hyp1f1


def _real_args(name: str, *xs: Any) -> list[Any]:
    out = promote_inexact(*xs)
    if get_aval(out[0]).dtype.kind == "c":
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return list(jnp.broadcast_arrays(*out))


def _hyp1f1_serie(a: Any, b: Any, x: Any) -> Any:
    # Pearson, Olver & Porter 2014, eq. 3.2 (Taylor series).
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        serie, k, term = s
        return serie + term, k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    def cond(s: tuple[Any, ...]) -> Any:
        serie, k, term = s
        return (k < 250) & (jnp.abs(term) / jnp.abs(serie) > eps)

    return _masked_while(cond, body, (jnp.ones_like(x), jnp.ones_like(x), a / b * x))[0]


def _hyp1f1_asymptotic(a: Any, b: Any, x: Any) -> Any:
    # Pearson, Olver & Porter 2014, eq. 3.8 (large |x|, real arguments).
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        serie, k, term = s
        return serie + term, k + 1, term * ((b - a + k) * (1 - a + k) / (k + 1) / x)

    def cond(s: tuple[Any, ...]) -> Any:
        serie, k, term = s
        return (k < 250) & (jnp.abs(term) / jnp.abs(serie) > eps)

    init = (jnp.ones_like(x), jnp.ones_like(x), (b - a) * (1 - a) / x)
    serie = _masked_while(cond, body, init)[0]
    return _gamma(b) / _gamma(a) * jnp.exp(x) * x ** (a - b) * serie


def _hyp1f1_param_derivative(a: Any, b: Any, x: Any, wrt_a: bool) -> Any:
    # The series differentiated term by term (functions.wolfram.com 07.20.20.0001/2).
    eps = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        serie, k, term = s
        factor = _sp.digamma(a + k) - _sp.digamma(a) if wrt_a else \
            _sp.digamma(b) - _sp.digamma(b + k)
        return serie + term * factor, k + 1, term * ((a + k) / (b + k) * x / (k + 1))

    def cond(s: tuple[Any, ...]) -> Any:
        serie, k, term = s
        return (k < 250) & (jnp.abs(term) / jnp.abs(serie) > eps)

    return _masked_while(cond, body, (jnp.zeros_like(x), jnp.ones_like(x), a / b * x))[0]


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    result = jnp.where(jnp.abs(x) < 100, _hyp1f1_serie(a, b, x), _hyp1f1_asymptotic(a, b, x))
    # JAX's conventions: 1 for a = 0 (b = 0 too), exp(x) for a = b, inf for b = 0.
    result = jnp.where(a == 0, _c(x, 1.0), result)
    result = jnp.where((a == b) & (a != 0), jnp.exp(x), result)
    return jnp.where((b == 0) & (a != 0), _c(x, np.inf), result)


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals: Any, tangents: Any) -> Any:
    (a, b, x), (da, db, dx) = primals, tangents
    out = _hyp1f1(a, b, x)
    t = _hyp1f1_param_derivative(a, b, x, True) * da
    t = t + _hyp1f1_param_derivative(a, b, x, False) * db
    return out, t + a / b * _hyp1f1(a + 1, b + 1, x) * dx


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """The confluent hypergeometric function 1F1(a; b; x) (real arguments; 1 at a = b = 0).

    >>> round(float(hyp1f1(1.0, 2.0, 0.0)), 6)
    1.0
    """
    a, b, x = _real_args("hyp1f1", a, b, x)
    with np.errstate(all="ignore"):  # the branches not taken overflow or divide by 0
        return _hyp1f1(a, b, x)


# ----------------------------------------------------------------------- hyp2f1


def _hyp2f1_terminal(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    # a or b a non-positive integer: the series stops (Pearson et al. 2014, eq. 4.1). The
    # one of larger magnitude (but below |c| if c is a non-positive integer) bounds it.
    eps = _eps(x) * 50
    ib = jnp.round(b)
    mask = (b < a) & (jnp.abs(b - ib) < eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = jnp.where(mask, b, a), jnp.where(mask, a, b)
    a = jnp.abs(a)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        serie, term, i = s
        term = term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return serie + term, term, i + 1

    def cond(s: tuple[Any, ...]) -> Any:
        # fori_loop(1, a + 1): elements this branch will not give stop at once.
        return active & (s[2] < a + 1)

    one = jnp.ones_like(x)
    return _masked_while(cond, body, (one, one, one))[0]


def _hyp2f1_serie(a: Any, b: Any, c: Any, x: Any) -> Any:
    # The Taylor series (Pearson et al. 2014, eq. 4.1).
    rtol = _eps(x)

    def body(s: tuple[Any, ...]) -> tuple[Any, ...]:
        serie, k, term = s
        return serie + term, k + 1, term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)

    def cond(s: tuple[Any, ...]) -> Any:
        serie, k, term = s
        return (k < 250) & (jnp.abs(term) > rtol * jnp.abs(serie))

    return _masked_while(cond, body, (jnp.zeros_like(x), jnp.ones_like(x),
                                      jnp.ones_like(x)))[0]


def _hyp2f1_digamma_transform(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    # x near 1 with c - a - b an integer: AMS55 15.3.10-15.3.12.
    rtol = _eps(x)
    zero = jnp.zeros_like(x)
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1 = jnp.where(rd >= 0, d, zero)
    d2 = jnp.where(rd >= 0, zero, d)
    ard = jnp.where(rd >= 0, rd, -rd).astype(np.int32)
    ax = jnp.log(s)
    dg = _sp.digamma
    y = dg(_c(x, 1.0)) + dg(1.0 + e) - dg(a + d1) - dg(b + d1) - ax
    y = y / _gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / _gamma(e + 2.0)

    def body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        p, q, t, y = st
        r = dg(1.0 + t) + dg(1.0 + t + e) - dg(a + t + d1) - dg(b + t + d1) - ax
        q = p * r
        y = y + q
        p = p * (s * (a + t + d1) / (t + 1.0))
        p = p * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y

    def cond(st: tuple[Any, ...]) -> Any:
        _, q, t, y = st
        return active & (t < 250) & (jnp.abs(q) >= rtol * jnp.abs(y))

    p, _, _, y = _masked_while(cond, body, (p, y, jnp.ones_like(x), y))

    # compute_sum: the finite sum of |round(d)| - 1 terms.
    def for_body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        i, p1, t1, y1 = st
        r = 1.0 - e + t1
        p1 = p1 * (s * (a + t1 + d2) * (b + t1 + d2) / r)
        t1 = t1 + 1.0
        p1 = p1 / t1
        return i + 1, p1, t1, y1 + p1

    ones = jnp.ones_like(x)
    _, _, _, y1 = _masked_while(lambda st: active & (st[0] < ard), for_body,
                                (jnp.ones_like(ard), ones, zero, ones))
    gc = _gamma(c)
    y1 = y1 * (_gamma(e) * gc / (_gamma(a + d1) * _gamma(b + d1)))
    ys = y * (gc / (_gamma(a + d2) * _gamma(b + d2)))
    ys = jnp.where((ard & 1) != 0, -ys, ys)
    q = s ** rd
    summed = jnp.where(rd > 0, ys * q + y1, ys + y1 * q)
    return jnp.where(rd == 0, y * gc / (_gamma(a) * _gamma(b)), summed)


def _hyp2f1_terminal_or_serie(a: Any, b: Any, c: Any, x: Any, active: Any) -> Any:
    # Pearson et al. 2014, section 4.6.1: which of the three the arguments need.
    eps = _eps(x) * 50
    d = c - a - b
    neg_int_a = (a <= 0) & (jnp.abs(a - jnp.round(a)) < eps)
    neg_int_b = (b <= 0) & (jnp.abs(b - jnp.round(b)) < eps)
    neg_int = neg_int_a | neg_int_b
    index = jnp.where((x > 0.9) & ~neg_int, jnp.where(jnp.abs(d - jnp.round(d)) >= eps, 0, 1),
                      jnp.where(neg_int, 2, 0))
    return lax.select_n(index, _hyp2f1_serie(a, b, c, x),
                        _hyp2f1_digamma_transform(a, b, c, x, active & (index == 1)),
                        _hyp2f1_terminal(a, b, c, x, active & (index == 2)))


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = _eps(x) * 50
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    idd = jnp.round(d)
    w = jnp.where
    index = w((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,
              w((c == 0) | ((c < 0) & (c % 1 == 0)), 1,
                w((d <= -1) & ~((jnp.abs(d - idd) >= eps) & (s < 0)), 2,
                  w((d <= 0) & (x == 1), 1,
                    w((x < 1) & (b == c), 3,
                      w((x < 1) & (a == c), 4,
                        w(x > 1, 1, w(x == 1, 5, 6))))))))
    return lax.select_n(index, jnp.ones_like(x), jnp.full_like(x, np.inf),
                        s ** d * _hyp2f1_terminal_or_serie(ca, cb, c, x, index == 2),
                        s ** (-a), s ** (-b),
                        _gamma(c) * _gamma(d) / (_gamma(ca) * _gamma(cb)),
                        _hyp2f1_terminal_or_serie(a, b, c, x, index == 6))


def _hyp2f1_param_derivative(a: Any, b: Any, c: Any, x: Any, which: int) -> Any:
    # The series differentiated term by term (functions.wolfram.com 07.23.20.0001-3).
    eps = _eps(x)
    dg = _sp.digamma

    def body(st: tuple[Any, ...]) -> tuple[Any, ...]:
        serie, k, term = st
        factor = (dg(a + k) - dg(a), dg(b + k) - dg(b), dg(c) - dg(c + k))[which]
        return (serie + term * factor, k + 1,
                term * ((a + k) * (b + k) / (c + k) / (k + 1) * x))

    def cond(st: tuple[Any, ...]) -> Any:
        serie, k, term = st
        return (k < 250) & (jnp.abs(term) / jnp.abs(serie) > eps)

    return _masked_while(cond, body, (jnp.zeros_like(x), jnp.ones_like(x),
                                      a * b / c * x))[0]


@_hyp2f1.defjvp
def _hyp2f1_jvp(primals: Any, tangents: Any) -> Any:
    (a, b, c, x), dots = primals, tangents
    out = _hyp2f1(a, b, c, x)
    t = sum((_hyp2f1_param_derivative(a, b, c, x, i) * dots[i] for i in range(3)),
            start=jnp.zeros_like(x))
    return out, t + a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * dots[3]


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The Gauss hypergeometric function 2F1(a, b; c; x) (real arguments).

    >>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 6)
    1.386294
    """
    a, b, c, x = _real_args("hyp2f1", a, b, c, x)
    with np.errstate(all="ignore"):  # the branches not taken overflow or divide by 0
        return _hyp2f1(a, b, c, x)


# ------------------------------------------------------------------- bessel_jn


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """``J_0(z) .. J_v(z)`` (shape ``(v + 1, *z.shape)``) by Miller's backward recurrence
    from order ``n_iter`` (Zhang & Jin 1996), for real ``z``. As JAX's, the recurrence
    overflows float32 for small ``z`` and the default ``n_iter`` (NaN): lower ``n_iter``.

    >>> [round(float(j), 6) for j in bessel_jn(1.0, v=1, n_iter=20)]
    [0.765198, 0.440051]
    """
    (z,) = promote_inexact(jnp.asarray(z))
    if get_aval(z).dtype.kind == "c":
        raise ValueError("complex input not supported.")
    v = operator.index(v)
    n_iter = int(n_iter)
    f0, f1 = jnp.zeros_like(z), jnp.full_like(z, 1e-16)
    bs = jnp.zeros_like(z)
    vals = []
    for k in range(n_iter, -1, -1):
        f = 2.0 * (_c(z, k) + 1.0) * f1 / z - f0
        if k % 2 == 0:
            bs = bs + 2.0 * f
        f0, f1 = f1, f
        vals.append(f)
    vals.reverse()      # vals[k]: the recurrence at order k
    return jnp.stack(vals[:v + 1]) / (bs - vals[0])


# ------------------------------------------------------------------ sph_harm_y


def _legendre_masks(l_max: int, dt: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray]:
    """JAX's recurrence coefficients of the normalized associated Legendre functions, as
    (i, m, l) masks: step i fills degree l = i + m."""
    m_mat, l_mat = np.meshgrid(np.arange(l_max + 1, dtype=dt), np.arange(l_max + 1, dtype=dt),
                               indexing="ij")
    with np.errstate(all="ignore"):
        c0, c1 = l_mat * l_mat, m_mat * m_mat
        c2, c3 = dt.type(2.0) * l_mat, (l_mat - dt.type(1.0)) * (l_mat - dt.type(1.0))
        d0 = np.sqrt((dt.type(4.0) * c0 - dt.type(1.0)) / (c0 - c1))
        d1 = np.sqrt(((c2 + dt.type(1.0)) * (c3 - c1)) / ((c2 - dt.type(3.0)) * (c0 - c1)))
    d0m = np.where(np.triu(np.ones((l_max + 1,) * 2, bool), 1), d0, 0).astype(dt)
    d1m = np.where(np.triu(np.ones((l_max + 1,) * 2, bool), 2), d1, 0).astype(dt)
    i, j, k = np.ogrid[:l_max + 1, :l_max + 1, :l_max + 1]
    mask = (i + j - k == 0).astype(dt)
    return d0m[None] * mask, d1m[None] * mask


def _normalized_legendre(l_max: int, x: Any) -> Any:
    """(m, l, point) values of the normalized associated Legendre functions at ``x``
    (JAX's ``_gen_associated_legendre(..., is_normalized=True)``)."""
    dt = get_aval(x).dtype
    nx = get_aval(x).shape[0]
    a_idx = jnp.arange(1, l_max + 1, dtype=dt)
    b_idx = jnp.arange(l_max, dtype=dt)
    initial = 0.5 / jnp.sqrt(np.pi)
    f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
    f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, nx)), axis=0)
    p_diag = initial * (f_a[:, None] * y)                       # p(l, l), l >= 1
    p = jnp.zeros((l_max + 1, l_max + 1, nx), dtype=dt)
    p = p.at[0, 0].set(initial)
    idx = np.arange(1, l_max + 1)
    p = p.at[idx, idx].set(p_diag)
    low = np.arange(l_max)
    p = p.at[low, low + 1].set((f_b[:, None] * x[None, :]) * p[low, low])
    d0, d1 = _legendre_masks(l_max, dt)
    for i in range(2, l_max + 1):
        h = d0[i][:, :, None] * (jnp.roll(p, 1, axis=1) * x) - \
            d1[i][:, :, None] * jnp.roll(p, 2, axis=1)
        p = p + h
    return p


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonics ``Y_n^m(theta, phi)`` (``theta`` the colatitude, ``phi`` the
    longitude), complex, at 1-D ``n``, ``m``; ``n_max`` (static) bounds ``n``.

    >>> import funcgrad.numpy as jnp
    >>> v = sph_harm_y(jnp.array([0]), jnp.array([0]), jnp.array([0.3]), jnp.array([0.1]))
    >>> round(float(v.real[0]), 6)
    0.282095
    """
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if np.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(np.asarray(n))
    n_max = int(n_max)
    n, m = jnp.asarray(n), jnp.asarray(m)
    theta, phi = jnp.asarray(theta), jnp.asarray(phi)
    cos_colatitude = jnp.cos(theta)
    legendre = _normalized_legendre(n_max, cos_colatitude)
    count = get_aval(n).shape[0]
    legendre_val = legendre.at[jnp.abs(m), n, jnp.arange(count)].get(mode="clip")
    angle = jnp.abs(m) * phi
    vandermonde = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(legendre_val * jnp.real(vandermonde),
                            legendre_val * jnp.imag(vandermonde))
    return jnp.where(m < 0, (-1.0) ** jnp.abs(m) * jnp.conjugate(harmonics), harmonics)

