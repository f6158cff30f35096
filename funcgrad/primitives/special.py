"""Special functions as elementwise primitives: gamma family, incomplete gamma and beta,
scaled Bessel functions, Hurwitz zeta, the inverse error function and ``nextafter``.

Values come from SciPy's special module on NumPy arrays (CuPy's on device arrays); the
derivative of the regularized incomplete gamma function with respect to its shape
parameter, and that of gamma samples, follow XLA's series and continued fraction (as JAX
computes them). Derivatives are JAX's; where JAX defines none (polygamma in its order,
betainc in ``a`` and ``b``, zeta in ``x``, ``igamma_grad_a``, ``nextafter``) asking for
one raises :class:`~funcgrad.errors.NonDifferentiableError`. ``erf`` and ``erfc`` are
defined with the other elementwise primitives and re-exported here.

>>> import numpy as np
>>> from funcgrad.primitives.special import lgamma, digamma
>>> lgamma(np.array([1.0, 3.0]))
Array([0.        , 0.69314718], dtype=float64)
>>> digamma(np.array([1.0]))
Array([-0.57721566], dtype=float64)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import NonDifferentiableError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives.elementwise import abs_p, erf, erf_p, erfc, erfc_p, log1p_p
from funcgrad.primitives.rules import (
    binary,
    elementwise_batch,
    full,
    require_kind,
    same_shape_dtype,
    unary,
    wanted,
)
from funcgrad.primitives.xla_cpu_math import erf_inv_f32


def _call(prim: Primitive, *args: Any) -> Any:
    """The primitive's lax function (Python numbers take the other operand's dtype)."""
    fn = prim.lax_fn
    assert fn is not None
    return fn(*args)

# ------------------------------------------------------------ evaluation helpers

REAL = "f"  # special functions are defined on real floats only (as in JAX)


def _scipy(xp: Any) -> Any:
    """SciPy's special module for NumPy arrays, CuPy's for device arrays."""
    if xp is np:
        import scipy.special  # noqa: PLC0415 - loaded on first use

        return scipy.special
    import cupyx.scipy.special  # noqa: PLC0415

    return cupyx.scipy.special


def _compute_dtype(dt: Any) -> Any:
    # SciPy has no half-precision loops: compute narrow floats in float32, as JAX upcasts.
    return np.float32 if np.dtype(dt).itemsize < 4 else dt


def _via_scipy(fn: str) -> Callable[..., Any]:
    """impl of an n-ary function of SciPy's special module, result in the operands' dtype."""
    def impl(xp: Any, *args: Any) -> Any:
        dt = args[0].dtype
        work = [a.astype(_compute_dtype(dt), copy=False) for a in args]
        with np.errstate(all="ignore"):
            out = getattr(_scipy(xp), fn)(*work)
        return xp.asarray(out).astype(dt, copy=False)

    return impl


def _cuda_fn(f32: str, f64: str) -> Callable[..., str]:
    """A CUDA expression calling ``f32`` on float operands and ``f64`` on doubles."""
    def expr(eqn: Any, args: Sequence[str], t: str) -> str:
        name = f32 if t == "float" else f64
        return f"{name}({', '.join(args)})"

    return expr


def _no_derivative(what: str) -> Callable[..., Any]:
    """A partial derivative that JAX does not define either: asking for it is an error."""
    def partial(*args: Any, **params: Any) -> Any:
        raise NonDifferentiableError(
            f"{what} is not defined (JAX defines none either); differentiate with respect "
            "to the other operands only, or wrap this operand in lax.stop_gradient")

    return partial


def _const(like: Any, value: float) -> Any:
    a = get_aval(like)
    return full(a.shape, value, a.dtype)


# ------------------------------------------------------------------ gamma family


def _polygamma_impl(xp: Any, m: Any, x: Any) -> Any:
    # JAX's polygamma is defined for integer orders m >= 0 only (NaN elsewhere).
    dt = x.dtype
    work = _compute_dtype(dt)
    sp = _scipy(xp)
    ok = (m == xp.floor(m)) & (m >= 0)
    n = xp.where(ok, m, 0).astype(np.int64)
    with np.errstate(all="ignore"):
        out = sp.polygamma(n, x.astype(work, copy=False))
    return xp.where(ok, out, xp.nan).astype(dt, copy=False)


def _lgamma_impl(xp: Any, x: Any) -> Any:
    # SciPy gives -inf at -inf; JAX (and the limit of log|Gamma|) +inf.
    out = _via_scipy("gammaln")(xp, x)
    return xp.where(xp.isneginf(x), xp.inf, out).astype(x.dtype, copy=False)


lgamma_p = unary("lgamma", _lgamma_impl, lambda x, ans: digamma(x),
                 cuda=_cuda_fn("lgammaf", "lgamma"))
digamma_p = unary("digamma", _via_scipy("digamma"),
                  lambda x, ans: polygamma(_const(x, 1.0), x))
polygamma_p = binary("polygamma", _polygamma_impl,
                     _no_derivative("the derivative of polygamma(m, x) with respect to m"),
                     lambda m, x, ans: polygamma(E.add(m, 1.0), x),
                     kinds=REAL, reads="x0,x1")


def lgamma(x: Any) -> Any:
    """``log|Gamma(x)|``, elementwise.

    >>> import numpy as np
    >>> lgamma(np.array([4.0]))
    Array([1.79175947], dtype=float64)
    """
    return lgamma_p.bind(x)


def digamma(x: Any) -> Any:
    """The digamma function ``psi(x) = d/dx log Gamma(x)``, elementwise.

    >>> import numpy as np
    >>> digamma(np.array([2.0]))
    Array([0.42278434], dtype=float64)
    """
    return digamma_p.bind(x)


def polygamma(m: Any, x: Any) -> Any:
    """``psi^(m)(x)``, the m-th derivative of digamma (m a whole number, as a float).

    >>> import numpy as np
    >>> polygamma(np.array([1.0]), np.array([1.0]))  # pi**2 / 6
    Array([1.644934], dtype=float32)
    """
    return _call(polygamma_p, m, x)


# ------------------------------------------------------- incomplete gamma (XLA's)

def _igamma_series(xp: Any, ax: Any, x: Any, a: Any, enabled: Any) -> Any:
    """d/da of XLA's power series of the lower regularized incomplete gamma (forward mode
    through the recurrence)."""
    eps = np.finfo(x.dtype).eps
    r, c, ans = a.copy(), xp.ones_like(a), xp.ones_like(a)
    dc_da, dans_da = xp.zeros_like(a), xp.zeros_like(a)
    enabled = enabled.copy()
    with np.errstate(all="ignore"):
        while bool(enabled.any()):
            r_n = r + 1
            dc_da_n = dc_da * (x / r_n) - (c * x) / (r_n * r_n)
            dans_da_n = dans_da + dc_da_n
            c_n = c * (x / r_n)
            ans_n = ans + c_n
            r, dc_da, dans_da, c, ans = (xp.where(enabled, new, old) for new, old in (
                (r_n, r), (dc_da_n, dc_da), (dans_da_n, dans_da), (c_n, c), (ans_n, ans)))
            enabled = enabled & (xp.abs(dc_da_n / dans_da_n) > eps)
        dlogax_da = xp.log(x) - _scipy(xp).digamma(a + 1).astype(a.dtype, copy=False)
        return ax * (ans * dlogax_da + dans_da) / a


def _igammac_continued_fraction(xp: Any, ax: Any, x: Any, a: Any, enabled: Any) -> Any:
    """d/da of XLA's continued fraction of the upper regularized incomplete gamma."""
    dt = x.dtype
    eps = dt.type(np.finfo(dt).eps)
    with np.errstate(all="ignore"):
        y = 1 - a
        z = x + y + 1
        pkm2, qkm2 = xp.ones_like(x), x.copy()
        pkm1, qkm1 = x + 1, z * x
        ans = pkm1 / qkm1
        t = xp.ones_like(x)
        dpkm2, dqkm2, dpkm1, dqkm1 = (xp.zeros_like(x), xp.zeros_like(x), xp.zeros_like(x),
                                      -x)
        dans = (dpkm1 - ans * dqkm1) / qkm1
        enabled = enabled.copy()
        c = 0
        while c < 2000 and bool(enabled.any()):
            c += 1
            y_n, z_n = y + 1, z + 2
            yc = y_n * c
            pk = pkm1 * z_n - pkm2 * yc
            qk = qkm1 * z_n - qkm2 * yc
            nz = qk != 0
            r = pk / qk
            t_n = xp.where(nz, xp.abs((ans - r) / r), 1)
            ans_n = xp.where(nz, r, ans)
            dpk = dpkm1 * z_n - pkm1 - dpkm2 * yc + pkm2 * c
            dqk = dqkm1 * z_n - qkm1 - dqkm2 * yc + qkm2 * c
            dans_n = xp.where(nz, (dpk - ans_n * dqk) / qk, dans)
            grad_change = xp.where(nz, xp.abs(dans_n - dans), 1)
            npkm2, npkm1, nqkm2, nqkm1 = pkm1, pk, qkm1, qk
            ndpkm2, ndpkm1, ndqkm2, ndqkm1 = dpkm1, dpk, dqkm1, dqk
            rescale = xp.abs(pk) > 1 / eps
            npkm2, npkm1, nqkm2, nqkm1, ndpkm2, ndpkm1, ndqkm2, ndqkm1 = (
                xp.where(rescale, v * eps, v) for v in (
                    npkm2, npkm1, nqkm2, nqkm1, ndpkm2, ndpkm1, ndqkm2, ndqkm1))
            ans, t, y, z = (xp.where(enabled, n, o) for n, o in (
                (ans_n, ans), (t_n, t), (y_n, y), (z_n, z)))
            pkm1, qkm1, pkm2, qkm2 = (xp.where(enabled, n, o) for n, o in (
                (npkm1, pkm1), (nqkm1, qkm1), (npkm2, pkm2), (nqkm2, qkm2)))
            dpkm2, dqkm2, dpkm1, dqkm1, dans = (xp.where(enabled, n, o) for n, o in (
                (ndpkm2, dpkm2), (ndqkm2, dqkm2), (ndpkm1, dpkm1), (ndqkm1, dqkm1),
                (dans_n, dans)))
            enabled = enabled & (grad_change > eps)
        dlogax_da = xp.log(x) - _scipy(xp).digamma(a).astype(dt, copy=False)
        return ax * (ans * dlogax_da + dans)


def _igamma_grad_a_impl(xp: Any, a: Any, x: Any) -> Any:
    """d igamma(a, x) / da, as XLA computes it."""
    dt = a.dtype
    work = _compute_dtype(dt)
    a, x = xp.broadcast_arrays(a.astype(work), x.astype(work))
    with np.errstate(all="ignore"):
        is_nan = xp.isnan(a) | xp.isnan(x)
        x_is_zero = x == 0
        domain_error = (x < 0) | (a <= 0)
        use_igammac = (x > 1) & (x > a)
        log_ax = a * xp.log(x) - x - _scipy(xp).gammaln(a).astype(work, copy=False)
        underflow = log_ax < -np.log(np.finfo(work).max)
        ax = xp.exp(log_ax)
        enabled = ~(x_is_zero | domain_error | underflow | is_nan)
        out = xp.where(
            use_igammac,
            -_igammac_continued_fraction(xp, ax, x, a, enabled & use_igammac),
            _igamma_series(xp, ax, x, a, enabled & ~use_igammac))
        out = xp.where(x_is_zero, 0, out)
        out = xp.where(domain_error | is_nan, xp.nan, out)
    return xp.asarray(out).astype(dt, copy=False)


def _igamma_dx(a: Any, x: Any, ans: Any) -> Any:
    # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a)
    return E.exp(E.sub(E.mul(E.sub(a, 1.0), E.log(x)), E.add(x, lgamma(a))))


def _incomplete_gamma(fn: str) -> Callable[..., Any]:
    def impl(xp: Any, a: Any, x: Any) -> Any:
        out = _via_scipy(fn)(xp, a, x)
        # XLA's series meet inf * 0 at an infinite shape: NaN there, where SciPy has a limit.
        return xp.where(xp.isinf(a), xp.nan, out).astype(a.dtype, copy=False)

    return impl


igamma_p = binary("igamma", _incomplete_gamma("gammainc"),
                  lambda a, x, ans: igamma_grad_a(a, x), _igamma_dx,
                  kinds=REAL, reads="x0,x1")
igammac_p = binary("igammac", _incomplete_gamma("gammaincc"),
                   lambda a, x, ans: E.neg(igamma_grad_a(a, x)),
                   lambda a, x, ans: E.neg(_igamma_dx(a, x, ans)),
                   kinds=REAL, reads="x0,x1")
igamma_grad_a_p = binary(
    "igamma_grad_a", _igamma_grad_a_impl,
    _no_derivative("the derivative of igamma_grad_a"),
    _no_derivative("the derivative of igamma_grad_a"), kinds=REAL, reads="x0,x1")
def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)``, elementwise.

    >>> import numpy as np
    >>> igamma(np.array([1.0]), np.array([2.0]))  # 1 - exp(-2)
    Array([0.86466473], dtype=float32)
    """
    return _call(igamma_p, a, x)


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    >>> import numpy as np
    >>> igammac(np.array([1.0]), np.array([2.0]))  # exp(-2)
    Array([0.13533528], dtype=float32)
    """
    return _call(igammac_p, a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """``d/da P(a, x)``, the derivative of :func:`igamma` in its shape parameter.

    >>> import numpy as np
    >>> igamma_grad_a(np.array([1.0]), np.array([1.0]))
    Array([-0.43172967], dtype=float32)
    """
    return _call(igamma_grad_a_p, a, x)


# ------------------------------------------------------------ incomplete beta


def _ternary_abstract(name: str) -> Callable[..., ShapedArray]:
    def abstract_eval(a: ShapedArray, b: ShapedArray, x: ShapedArray) -> ShapedArray:
        out = same_shape_dtype(name, a, b, x)
        require_kind(name, a, REAL, "real floating point")
        return out

    return abstract_eval


regularized_incomplete_beta_p = Primitive(
    "regularized_incomplete_beta",
    abstract_eval=_ternary_abstract("regularized_incomplete_beta"),
    impl=_via_scipy("betainc"))


def _betainc_dx(a: Any, b: Any, x: Any) -> Any:
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
    lbeta = E.sub(E.add(lgamma(a), lgamma(b)), lgamma(E.add(a, b)))
    return E.exp(E.sub(E.add(E.mul(E.sub(b, 1.0), log1p_p.bind(E.neg(x))),
                             E.mul(E.sub(a, 1.0), E.log(x))), lbeta))


_BETAINC_AB = _no_derivative("the derivative of betainc(a, b, x) with respect to a and b")


def _spread(t: Any, shape: tuple[int, ...]) -> Any:
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    return broadcast_in_dim(t, shape, ()) if get_aval(t).shape != shape else t


def _betainc_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    a, b, x = primals
    ta, tb, tx = tangents
    ans = regularized_incomplete_beta_p.bind(a, b, x)
    if ta is not None or tb is not None:
        _BETAINC_AB()
    if tx is None:
        return ans, None
    return ans, _spread(E.mul(tx, _betainc_dx(a, b, x)), get_aval(ans).shape)


def _betainc_vjp(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    from funcgrad.primitives.rules import unbroadcast  # noqa: PLC0415

    a, b, x = primals
    if wanted(0) or wanted(1):
        _BETAINC_AB()
    return [None, None, unbroadcast(E.mul(ct, _betainc_dx(a, b, x)), get_aval(x))]


regularized_incomplete_beta_p.jvp = _betainc_jvp
regularized_incomplete_beta_p.vjp = _betainc_vjp
regularized_incomplete_beta_p.vjp_reads = "x0,x1,x2"
regularized_incomplete_beta_p.batch = elementwise_batch(regularized_incomplete_beta_p)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function ``I_x(a, b)``, elementwise.

    >>> import numpy as np
    >>> betainc(np.array([2.0]), np.array([3.0]), np.array([0.5]))
    Array([0.6875], dtype=float64)
    """
    like = next((v for v in (a, b, x) if not dtypes.python_scalar(v)), None)
    if like is not None:
        dt = get_aval(like).dtype
        a, b, x = (full((), v, dt) if dtypes.python_scalar(v) else v for v in (a, b, x))
    return regularized_incomplete_beta_p.bind(a, b, x)


regularized_incomplete_beta_p.describe(lax="betainc", fusion=None, cuda=None, ufunc=None,
                                       torch_method=None, torch_node="Betainc",
                                       lax_fn=betainc)

# ---------------------------------------------------------------- Bessel, zeta


def _i1e_deriv(x: Any, y: Any) -> Any:
    # JAX's rule: i0e(x) - y (sign(x) + 1/x), and 1/2 where |x| is within eps of 0.
    tiny = np.finfo(get_aval(x).dtype).eps
    not_tiny = E.gt(abs_p.bind(x), tiny)
    safe_x = E.select(not_tiny, x, _const(x, float(tiny)))
    d = E.sub(bessel_i0e(safe_x), E.mul(y, E.add(E.sign(safe_x), E.reciprocal(safe_x))))
    return E.select(not_tiny, d, _const(x, 0.5))


bessel_i0e_p = unary("bessel_i0e", _via_scipy("i0e"),
                     lambda x, ans: E.sub(bessel_i1e(x), E.mul(E.sign(x), ans)), reads="x,y")
bessel_i1e_p = unary("bessel_i1e", _via_scipy("i1e"), lambda x, ans: _i1e_deriv(x, ans),
                     reads="x,y")


def bessel_i0e(x: Any) -> Any:
    """``exp(-|x|) I0(x)``, the exponentially scaled modified Bessel function of order 0.

    >>> import numpy as np
    >>> bessel_i0e(np.array([0.0]))
    Array([1.], dtype=float64)
    """
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: Any) -> Any:
    """``exp(-|x|) I1(x)``, the exponentially scaled modified Bessel function of order 1.

    >>> import numpy as np
    >>> bessel_i1e(np.array([0.0]))
    Array([0.], dtype=float64)
    """
    return bessel_i1e_p.bind(x)


zeta_p = binary("zeta", _via_scipy("zeta"),
                _no_derivative("the derivative of zeta(x, q) with respect to x"),
                lambda x, q, ans: E.neg(E.mul(x, zeta(E.add(x, 1.0), q))),
                kinds=REAL, reads="x0,x1")


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function ``sum_n (n + q) ** -x``, elementwise.

    >>> import numpy as np
    >>> zeta(np.array([2.0]), np.array([1.0]))  # pi**2 / 6
    Array([1.644934], dtype=float32)
    """
    return _call(zeta_p, x, q)


# ------------------------------------------------------------- inverse erf, nextafter

_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2


def _erf_inv_impl(xp: Any, x: Any) -> Any:
    # float32 and narrower: XLA's CPU arithmetic bit for bit (jax.random.normal's bits).
    if x.dtype.itemsize <= 4:
        return erf_inv_f32(xp, x.astype(np.float32, copy=False)).astype(x.dtype, copy=False)
    return _via_scipy("erfinv")(xp, x)


erf_inv_p = unary("erf_inv", _erf_inv_impl,
                  lambda x, ans: E.mul(E.exp(E.square(ans)), _SQRT_PI_OVER_2), reads="y",
                  cuda=_cuda_fn("erfinvf", "erfinv"))


def erf_inv(x: Any) -> Any:
    """The inverse error function, elementwise (``erf(erf_inv(x)) == x`` on (-1, 1)).

    >>> import numpy as np
    >>> erf_inv(np.array([0.0, 0.5]))
    Array([0.        , 0.47693628], dtype=float64)
    """
    return erf_inv_p.bind(x)


nextafter_p = binary("nextafter", "nextafter",
                     _no_derivative("the derivative of nextafter"),
                     _no_derivative("the derivative of nextafter"),
                     kinds=REAL, reads="x0,x1", cuda=_cuda_fn("nextafterf", "nextafter"))


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable float after ``x1`` in the direction of ``x2``.

    >>> import numpy as np
    >>> nextafter(np.array([1.0]), np.array([2.0])) - 1.0
    Array([1.1920929e-07], dtype=float32)
    """
    return _call(nextafter_p, x1, x2)


# ------------------------------------ scaled erfc, Dawson, exponential integrals, Spence
# jax.scipy.special computes these with series written in lax ops; here they are SciPy's
# values with their closed-form derivatives.

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
erfcx_p = unary("erfcx", _via_scipy("erfcx"),
                lambda x, ans: E.sub(E.mul(E.mul(x, ans), 2.0), _TWO_OVER_SQRT_PI),
                reads="x,y")
dawsn_p = unary("dawsn", _via_scipy("dawsn"),
                lambda x, ans: E.sub(1.0, E.mul(E.mul(x, ans), 2.0)), reads="x,y")
exp1_p = unary("exp1", _via_scipy("exp1"), lambda x, ans: E.neg(E.div(E.exp(E.neg(x)), x)))
expi_p = unary("expi", _via_scipy("expi"), lambda x, ans: E.div(E.exp(x), x))
# SciPy's spence(z) is the integral of log(t) / (1 - t) from 1 to z.
spence_p = unary("spence", _via_scipy("spence"), lambda x, ans: _spence_deriv(x))


def _spence_deriv(x: Any) -> Any:
    # log(x) / (1 - x) is 0/0 at x = 1, where its limit is -1; the division runs on a safe
    # stand-in there so that reverse mode does not carry 0/0 either.
    at_one = E.eq(x, _const(x, 1.0))
    safe_x = E.select(at_one, _const(x, 0.5), x)
    return E.select(at_one, _const(x, -1.0), E.div(E.log(safe_x), E.sub(1.0, safe_x)))


def _expn_impl(xp: Any, n: Any, x: Any) -> Any:
    dt = x.dtype
    ok = n == xp.floor(n)
    k = xp.where(ok, n, 0).astype(np.int64)
    with np.errstate(all="ignore"):
        out = _scipy(xp).expn(k, x.astype(_compute_dtype(dt), copy=False))
    return xp.where(ok, out, xp.nan).astype(dt, copy=False)


expn_p = binary("expn", _expn_impl,
                _no_derivative("the derivative of expn(n, x) with respect to n"),
                lambda n, x, ans: E.neg(expn(E.sub(n, 1.0), x)),
                kinds=REAL, reads="x0,x1")


def erfcx(x: Any) -> Any:
    """``exp(x**2) * erfc(x)`` without overflow.

    >>> import numpy as np
    >>> erfcx(np.array([0.0]))
    Array([1.], dtype=float64)
    """
    return erfcx_p.bind(x)


def dawsn(x: Any) -> Any:
    """Dawson's integral ``exp(-x**2) * integral of exp(t**2) from 0 to x``.

    >>> import numpy as np
    >>> dawsn(np.array([0.0]))
    Array([0.], dtype=float64)
    """
    return dawsn_p.bind(x)


def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x)``.

    >>> import numpy as np
    >>> exp1(np.array([1.0]))
    Array([0.21938393], dtype=float64)
    """
    return exp1_p.bind(x)


def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)``.

    >>> import numpy as np
    >>> expi(np.array([1.0]))
    Array([1.89511782], dtype=float64)
    """
    return expi_p.bind(x)


def spence(x: Any) -> Any:
    """Spence's function (SciPy's convention: the dilogarithm of ``1 - x``).

    >>> import numpy as np
    >>> spence(np.array([1.0]))
    Array([0.], dtype=float64)
    """
    return spence_p.bind(x)


def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x)`` (n a whole number, as a float).

    >>> import numpy as np
    >>> expn(np.array([1.0]), np.array([1.0]))
    Array([0.21938394], dtype=float32)
    """
    return _call(expn_p, n, x)


# PyTorch's node names for the ones it has (torch.special.* and Tensor methods).
lgamma_p.torch_node, digamma_p.torch_node = "Lgamma", "Digamma"
polygamma_p.torch_node, erf_inv_p.torch_node = "Polygamma", "Erfinv"
bessel_i0e_p.torch_node, bessel_i1e_p.torch_node = "SpecialI0E", "SpecialI1E"
erfcx_p.torch_node = "SpecialErfcx"
zeta_p.torch_node, nextafter_p.torch_node = "SpecialZeta", "Nextafter"

__all__ = [
    "lgamma", "lgamma_p", "digamma", "digamma_p", "polygamma", "polygamma_p",
    "igamma", "igamma_p", "igammac", "igammac_p", "igamma_grad_a", "igamma_grad_a_p",
    "betainc", "regularized_incomplete_beta_p",
    "bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p", "zeta", "zeta_p",
    "erf_inv", "erf_inv_p", "nextafter", "nextafter_p", "erf", "erf_p", "erfc", "erfc_p",
    "erfcx", "erfcx_p", "dawsn", "dawsn_p", "exp1", "exp1_p", "expi", "expi_p",
    "spence", "spence_p", "expn", "expn_p",
]
