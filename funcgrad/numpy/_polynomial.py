"""Polynomials as coefficient arrays (highest power first), as in ``jax.numpy``:
``polyval``, ``polyadd``/``polysub``/``polymul``/``polydiv``, ``polyder``/``polyint``,
``polyfit``, ``poly``, ``roots`` and ``vander``, written on funcgrad.numpy's differentiable
operations (``roots`` through the eigenvalues of the companion matrix).

>>> import funcgrad.numpy as fnp
>>> fnp.polyval(fnp.array([1.0, 0.0, -1.0]), 3.0).tolist()
8.0
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import ConcretizationTypeError
from funcgrad.numpy._core import check_arraylike, from_buffer, promote_args, promote_inexact
from funcgrad.numpy._setops import host_value
from funcgrad.primitives.fused_multiply_add import fma


def _complex_of(dt: Any) -> np.dtype[Any]:
    return np.result_type(dt, np.complex64)


def _static_int(v: Any, what: str) -> int:
    try:
        return operator.index(v)
    except TypeError as e:
        raise ConcretizationTypeError(f"{what} must be a static Python int, got {v!r}") from e


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803
    """The Vandermonde matrix: columns are powers of the vector ``x``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.vander(fnp.array([1, 2, 3]), 3).tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    check_arraylike("vander", x)
    x = fnp.asarray(x)
    if get_aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = get_aval(x).shape[0] if N is None else _static_int(N, "vander's N")
    if n < 0:
        raise ValueError("N must be nonnegative")
    powers = fnp.arange(n, dtype=dtypes.result_type(x))
    if not increasing:
        powers = powers[::-1]
    return fnp.power(x[:, None], powers)


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial with coefficients ``p`` at ``x`` (Horner's scheme).

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyval(fnp.array([2, 1]), fnp.array([1, 2])).tolist()
    [3, 5]
    """
    check_arraylike("polyval", p, x)
    p, x = promote_args(fnp.asarray(p), fnp.asarray(x))
    pa, xa = get_aval(p), get_aval(x)
    shape = np.broadcast_shapes(pa.shape[1:], xa.shape)
    if _on_host(p) and _on_host(x) and xa.dtype in _FMA_TYPES:
        # JAX's polyval is jitted, and XLA's CPU code fuses each step of Horner's rule,
        # y * x + p[i], into one fused multiply-add (one rounding, not two).
        pv, xv = np.asarray(p), np.broadcast_to(np.asarray(x), shape)
        yv = np.zeros(shape, xa.dtype)
        for i in range(pa.shape[0]):
            yv = fma(yv, xv, np.broadcast_to(pv[i], shape))
        return from_buffer(np.asarray(yv, xa.dtype))
    y = fnp.zeros(shape, xa.dtype)
    for i in range(pa.shape[0]):
        y = y * x + p[i]
    return fnp.astype(y, xa.dtype) if pa.shape[0] == 0 else y


_FMA_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _on_host(a: Any) -> bool:
    """A concrete value in host memory (not a tracer, not a GPU buffer)."""
    return not isinstance(a, Tracer) and type(getattr(a, "_value", a)) is np.ndarray


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyadd(fnp.array([1.0, 2.0]), fnp.array([1.0, 0.0, 0.0])).tolist()
    [1.0, 1.0, 2.0]
    """
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_args(fnp.asarray(a1), fnp.asarray(a2))
    n1, n2 = get_aval(a1).shape[0], get_aval(a2).shape[0]
    if n2 <= n1:
        return a1.at[n1 - n2:].add(a2)
    return a2.at[n2 - n1:].add(a1)


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polysub(fnp.array([3.0, 2.0]), fnp.array([1.0])).tolist()
    [3.0, 1.0]
    """
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_args(fnp.asarray(a1), fnp.asarray(a2))
    return polyadd(a1, fnp.negative(a2))


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polymul(fnp.array([1.0, 1.0]), fnp.array([1.0, -1.0])).tolist()
    [1.0, 0.0, -1.0]
    """
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_inexact(fnp.asarray(a1), fnp.asarray(a2))
    if trim_leading_zeros and (get_aval(a1).shape[0] > 1 or get_aval(a2).shape[0] > 1):
        a1, a2 = fnp.trim_zeros(a1, trim="f"), fnp.trim_zeros(a2, trim="f")
    if get_aval(a1).shape[0] == 0:
        a1 = fnp.zeros(1, get_aval(a2).dtype)
    if get_aval(a2).shape[0] == 0:
        a2 = fnp.zeros(1, get_aval(a1).dtype)
    return fnp.convolve(a1, a2, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Quotient and remainder of polynomial division.

    >>> import funcgrad.numpy as fnp
    >>> q, r = fnp.polydiv(fnp.array([1.0, 0.0, -1.0]), fnp.array([1.0, 1.0]))
    >>> q.tolist(), r.tolist()
    ([1.0, -1.0], [0.0, 0.0, 0.0])
    """
    check_arraylike("polydiv", u, v)
    u, v = promote_inexact(fnp.asarray(u), fnp.asarray(v))
    m, n = get_aval(u).shape[0] - 1, get_aval(v).shape[0] - 1
    scale = 1.0 / v[0]
    q = fnp.zeros(max(m - n + 1, 1), get_aval(u).dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        tol = float(np.sqrt(fnp.finfo(get_aval(u).dtype).eps))
        small = np.abs(np.asarray(host_value(u, "polydiv's trim_leading_zeros"))) < tol
        start = int(np.argmin(small)) if not small.all() else get_aval(u).shape[0]
        u = u[start:]
    return q, u


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyder(fnp.array([1.0, 1.0, 1.0])).tolist()
    [2.0, 1.0]
    """
    check_arraylike("polyder", p)
    m = _static_int(m, "polyder's m")
    (p,) = promote_inexact(fnp.asarray(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = get_aval(p).shape[0]
    dt = get_aval(p).dtype
    coeff = np.prod(np.arange(m, n)[None] - np.arange(m)[:, None], axis=0)
    return p[:-m] * fnp.asarray(coeff[::-1].astype(dt))


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.polyint(fnp.array([3.0, 0.0])).tolist()
    [1.5, 0.0, 0.0]
    """
    check_arraylike("polyint", p)
    m = _static_int(m, "polyint's m")
    p, k_arr = promote_inexact(fnp.asarray(p), fnp.asarray(0 if k is None else k))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k_arr = fnp.atleast_1d(k_arr)
    if get_aval(k_arr).shape[0] == 1:
        k_arr = fnp.full((m,), k_arr[0])
    if get_aval(k_arr).shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    n = get_aval(p).shape[0]
    grid = np.arange(n + m)[None] - np.arange(m)[:, None]
    coeff = np.maximum(1, grid).prod(0)[::-1].astype(get_aval(p).dtype)
    return fnp.true_divide(fnp.concatenate((p, k_arr)), coeff)


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: Any = False) -> Any:
    """Least-squares polynomial fit of degree ``deg``.

    >>> import funcgrad.numpy as fnp
    >>> [round(c, 6) for c in fnp.polyfit(fnp.array([0.0, 1.0, 2.0]),
    ...                                   fnp.array([1.0, 3.0, 5.0]), 1).tolist()]
    [2.0, 1.0]
    """
    check_arraylike("polyfit", x, y)
    x, y = fnp.asarray(x), fnp.asarray(y)
    deg = _static_int(deg, "polyfit's deg")
    order = deg + 1
    xa, ya = get_aval(x), get_aval(y)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xa.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xa.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ya.ndim < 1 or ya.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xa.shape[0] != ya.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = xa.shape[0] * float(fnp.finfo(xa.dtype).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        (wa,) = promote_inexact(fnp.asarray(w))
        if get_aval(wa).ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if get_aval(wa).shape[0] != ya.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * wa[:, None]
        rhs = rhs * (wa[:, None] if ya.ndim == 2 else wa)
    scale = fnp.sqrt(fnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = fnp.linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if get_aval(c).ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, fnp.asarray(rcond)
    if cov:
        vbase = fnp.linalg.inv(fnp.dot(lhs.T, lhs)) / fnp.outer(scale, scale)
        if cov == "unscaled":
            fac = fnp.array(1.0)
        else:
            if xa.shape[0] <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (xa.shape[0] - order)
        if ya.ndim == 1:
            return c, vbase * fnp.atleast_1d(fac)[None]
        return c, vbase[:, :, None] * fnp.atleast_1d(fac)[None, None, :]
    return c


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (or the characteristic
    polynomial of a square matrix).

    >>> import funcgrad.numpy as fnp
    >>> fnp.poly(fnp.array([1.0, 2.0])).tolist()
    [1.0, -3.0, 2.0]
    """
    check_arraylike("poly", seq_of_zeros)
    (z,) = promote_inexact(fnp.asarray(seq_of_zeros))
    z = fnp.atleast_1d(z)
    sh = get_aval(z).shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        z = fnp.linalg.eigvals(z)
    if get_aval(z).ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = get_aval(z).dtype
    if get_aval(z).shape[0] == 0:
        return fnp.ones((), dt)
    a = fnp.ones((1,), dt)
    for k in range(get_aval(z).shape[0]):
        a = fnp.convolve(a, fnp.stack([fnp.ones((), dt), -z[k]]), mode="full")
    return a


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of a polynomial: eigenvalues of its companion matrix (complex).

    >>> import funcgrad.numpy as fnp
    >>> sorted(fnp.roots(fnp.array([1.0, -3.0, 2.0])).real.tolist())
    [1.0, 2.0]
    """
    check_arraylike("roots", p)
    (p,) = promote_inexact(fnp.asarray(p))
    p = fnp.atleast_1d(p)
    if get_aval(p).ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = get_aval(p).shape[0]
    cdt = _complex_of(get_aval(p).dtype)
    if n < 2:
        return fnp.array([], dtype=cdt)
    if strip_zeros:
        host = np.asarray(host_value(
            p, "jnp.roots(); to use it under jit pass strip_zeros=False (leading zeros then "
               "give NaN roots)"))
        lead = n if (host == 0).all() else int(np.argmin(host == 0))
        return _roots_no_zeros(p[lead:])
    zero = p == 0
    lead = fnp.where(fnp.all(zero), n, fnp.argmin(zero))
    p = fnp.where(lead == n, 1.0, p)
    # roll(p, -lead) as a gather: funcgrad.numpy.roll needs a static shift.
    r = _roots_no_zeros(fnp.take(p, (fnp.arange(n) + lead) % n))
    # Roots of the shifted polynomial that come from its trailing zeros go last, as NaNs.
    r = r[fnp.argsort(r == 0, stable=True)]
    return fnp.where(fnp.arange(n - 1) < n - 1 - lead, r, complex(np.nan, np.nan))


def _roots_no_zeros(p: Any) -> Any:
    n = get_aval(p).shape[0]
    if n < 2:
        return fnp.array([], dtype=_complex_of(get_aval(p).dtype))
    a = fnp.diag(fnp.ones((n - 2,), get_aval(p).dtype), -1)
    a = a.at[0, :].set(-p[1:] / p[0])
    return fnp.linalg.eigvals(a)


__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul",
           "polysub", "polyval", "roots", "vander"]
