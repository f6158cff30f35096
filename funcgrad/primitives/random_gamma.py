"""Gamma samples as one primitive (JAX's ``random_gamma_p``), and the derivative of a gamma
sample with respect to its shape parameter (``random_gamma_grad``).

``random_gamma(key_data, a, log_space=False)``: ``key_data`` is threefry key data
``uint32[*batch, 2]``, ``a`` float of shape ``(*batch, *rest)``; every key is split into
``prod(rest)`` keys and each draws one Gamma(a, 1) sample by Marsaglia and Tsang's
rejection method, exactly the per-element loops of JAX's sampler (the same keys, the
same normal and uniform draws). The samples are reparameterised: their derivative with
respect to ``a`` is the implicit one, ``dx/da = -(dP/da) / (dP/dx)`` of the regularised
incomplete gamma function ``P(a, x)`` (``random_gamma_grad``, JAX's series and continued
fraction).

>>> import numpy as np
>>> from funcgrad.primitives.random_gamma import random_gamma
>>> random_gamma(np.array([0, 0], np.uint32), np.array([1.0, 5.0], np.float32)).shape
(2,)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, NonDifferentiableError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.elementwise import div, eq, exp, mul, select
from funcgrad.primitives.prng import _threefry_impl
from funcgrad.primitives.rules import all_batched, full, same_shape_dtype
from funcgrad.primitives.xla_cpu_math import ERFINV_F32_LARGE, ERFINV_F32_SMALL, erf_inv_f32

_U32 = np.uint32

# ------------------------------------------------------------------ erf_inv



def erf_inv_with(ops: Any, x: Any) -> Any:
    """The inverse error function of ``x`` on (-1, 1), +-inf at +-1, written once for any
    array namespace ``ops`` (``where``, ``log1p``, ``sqrt``, ``abs``, ``exp``,
    ``isfinite``, ``erf``, ``erfc``): funcgrad.numpy for the traceable samplers, NumPy or
    CuPy inside this module's impl, so both draw the same normals.

    XLA's float32 polynomial (exact XLA bits on arrays: ``xla_cpu_math.erf_inv_f32``),
    which wider floats refine by Newton steps on erf/erfc.

    >>> import numpy as np, scipy.special
    >>> ops = SimpleNamespace(where=np.where, log1p=np.log1p, sqrt=np.sqrt, abs=np.abs,
    ...                       exp=np.exp, isfinite=np.isfinite, erf=scipy.special.erf,
    ...                       erfc=scipy.special.erfc)
    >>> erf_inv_with(ops, np.array([0.0, 0.5], np.float32))
    array([0.        , 0.47693628], dtype=float32)
    """
    dt = x.dtype

    def c(v: float) -> Any:
        return dt.type(v)  # a NumPy scalar: CuPy refuses 0-d NumPy arrays as operands

    w = -ops.log1p(-x * x)
    small = w < c(5.0)
    w = ops.where(small, w - c(2.5), ops.sqrt(w) - c(3.0))
    p = ops.where(small, c(ERFINV_F32_SMALL[0]), c(ERFINV_F32_LARGE[0]))
    for cs, cl in zip(ERFINV_F32_SMALL[1:], ERFINV_F32_LARGE[1:]):
        p = ops.where(small, c(cs), c(cl)) + p * w
    out = p * x
    if np.finfo(dt).bits > 32:
        a = ops.abs(x)
        y = ops.abs(out)
        two_over_sqrt_pi = c(2.0 / math.sqrt(math.pi))
        for _ in range(3):
            # erf(y) - a, through erfc where erf(y) is close to 1 (no cancellation).
            resid = ops.where(a < c(0.5), ops.erf(y) - a, (c(1.0) - a) - ops.erfc(y))
            step = resid / (two_over_sqrt_pi * ops.exp(-y * y))
            y = ops.where(ops.isfinite(step), y - step, y)
        out = ops.where(x < c(0.0), -y, y)
    inf = ops.where(x > c(0.0), c(np.inf), c(-np.inf))
    return ops.where(ops.abs(x) == c(1.0), inf, out)


def _special(xp: Any) -> Any:
    """SciPy's special functions for NumPy arrays, CuPy's for device arrays."""
    if xp is np:
        import scipy.special as sp  # noqa: PLC0415 - only when first used
    else:
        import cupyx.scipy.special as sp  # noqa: PLC0415
    return sp


def _array_ops(xp: Any) -> Any:
    sp = _special(xp)
    return SimpleNamespace(where=xp.where, log1p=xp.log1p, sqrt=xp.sqrt, abs=xp.abs,
                           exp=xp.exp, isfinite=xp.isfinite,
                           erf=lambda v: sp.erf(v).astype(v.dtype, copy=False),
                           erfc=lambda v: sp.erfc(v).astype(v.dtype, copy=False))


# ---------------------------------------------- one draw per key, on arrays


def _split(xp: Any, keys: Any, n: int) -> Any:
    """``uint32[N, n, 2]``: ``n`` new keys from each of the keys ``uint32[N, 2]``."""
    counts = xp.arange(n, dtype=_U32)[None, :]
    b1, b2 = _threefry_impl(xp, keys[:, :1], keys[:, 1:], xp.zeros_like(counts), counts)
    return xp.stack([b1, b2], axis=-1)


def _uniform(xp: Any, keys: Any, dt: np.dtype[Any], lo: Any = None) -> Any:
    """One uniform float per key on [0, 1) (on [lo, 1) with ``lo``), JAX's bits and
    arithmetic for a rank-0 draw."""
    zero = xp.zeros(keys.shape[:1], _U32)
    b1, b2 = _threefry_impl(xp, keys[:, 0], keys[:, 1], zero, zero)
    info = np.finfo(dt)
    # As JAX: a type with under 8 mantissa bits (bfloat16) draws 8 random bits.
    rng_bits = 8 if info.nmant < 8 else info.bits
    if info.bits == 64:
        raw = (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
    else:
        raw = (b1 ^ b2).astype(f"uint{rng_bits}")
    mant = raw >> raw.dtype.type(rng_bits - info.nmant)
    floats = mant.astype(dt) * dt.type(2.0 ** -info.nmant)
    if lo is None:
        return floats
    lo = dt.type(lo)
    span = dt.type(1.0) - lo
    if info.bits <= 32:
        # XLA's fused multiply-add, exact through float64 (see random.uniform).
        scaled = (floats.astype(np.float64) * np.float64(span) + np.float64(lo)).astype(dt)
    else:
        scaled = floats * span + lo
    return xp.maximum(lo, scaled)


def _normal(xp: Any, keys: Any, dt: np.dtype[Any]) -> Any:
    lo = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
    u = _uniform(xp, keys, dt, lo)
    if np.finfo(dt).bits <= 32:
        # XLA's float32 arithmetic; half types are evaluated in float32 and rounded.
        u = erf_inv_f32(xp, u.astype(np.float32)).astype(dt)
    else:
        u = erf_inv_with(_array_ops(xp), u)
    return dt.type(np.sqrt(2)) * u


def _gamma_one(xp: Any, keys: Any, alpha: Any, log_space: bool) -> Any:
    """Marsaglia-Tsang, one sample per key, all keys at once: each element runs its own
    loops (an element stops when it is accepted), as JAX's vmapped while loops do."""
    dt = alpha.dtype

    def c(v: float) -> Any:
        # NumPy scalars, not 0-d arrays: CuPy refuses NumPy arrays as operands.
        return dt.type(v)

    boost_mask = alpha >= c(1.0)
    alpha_b = xp.where(boost_mask, alpha, alpha + c(1.0))
    d = alpha_b - c(1.0 / 3.0)
    cc = c(1.0 / 3.0) / xp.sqrt(d)
    ks = _split(xp, keys, 2)
    key, subkey = ks[:, 0], ks[:, 1]
    big_x, big_v = xp.zeros_like(alpha), xp.ones_like(alpha)
    active = xp.ones(alpha.shape, bool)
    while bool(active.any()):
        idx = xp.nonzero(active)[0]
        k3 = _split(xp, key[idx], 3)
        key[idx] = k3[:, 0]
        kk, x = k3[:, 1].copy(), xp.zeros(idx.shape, dt)
        v = xp.full(idx.shape, c(-1.0))
        inner = v <= c(0.0)
        while bool(inner.any()):
            j = xp.nonzero(inner)[0]
            k2 = _split(xp, kk[j], 2)
            kk[j] = k2[:, 0]
            x[j] = _normal(xp, k2[:, 1], dt)
            v[j] = c(1.0) + x[j] * cc[idx][j]
            inner = v <= c(0.0)
        xx, vv = x * x, v * v * v
        u = _uniform(xp, k3[:, 2], dt)
        big_x[idx], big_v[idx] = xx, vv
        di = d[idx]
        active[idx] = (u >= c(1.0) - c(0.0331) * (xx * xx)) & (
            xp.log(u) >= xx * c(0.5) + di * ((c(1.0) - vv) + xp.log(vv)))
    u = _uniform(xp, subkey, dt)
    if log_space:
        log_samples = xp.log1p(-u)
        log_boost = xp.where(boost_mask | (log_samples == c(0.0)), c(0.0),
                             log_samples * (c(1.0) / alpha))
        return (xp.log(d) + xp.log(big_v)) + log_boost
    boost = xp.where(boost_mask, c(1.0), (c(1.0) - u) ** (c(1.0) / alpha))
    return (d * big_v) * boost


def _gamma_impl(xp: Any, key: Any, a: Any, *, log_space: bool) -> Any:
    with np.errstate(all="ignore"):  # rejected proposals may take logs of 0 or negatives
        batch = key.shape[:-1]
        per_key = math.prod(a.shape[len(batch):])
        keys = _split(xp, xp.reshape(key, (-1, 2)), per_key).reshape(-1, 2)
        flat = xp.reshape(a, (-1,))
        out = _gamma_one(xp, keys, flat, log_space) if flat.size else flat
        return xp.reshape(xp.asarray(out, dtype=a.dtype), a.shape)


def _gamma_abstract(key: ShapedArray, a: ShapedArray, *, log_space: bool) -> ShapedArray:
    if key.dtype != np.uint32 or key.shape[-1:] != (2,):
        raise DTypeError(f"random_gamma needs threefry key data uint32[..., 2], got "
                         f"{key.str_short()}")
    if not dtypes.is_float(a.dtype):
        raise DTypeError(f"random_gamma's shape parameter must be floating, got {a.dtype}")
    batch = key.shape[:-1]
    if a.shape[:len(batch)] != batch:
        raise ShapeError(f"the key batch shape {batch} must lead the shape {a.shape} of a")
    return a


random_gamma_p = Primitive("random_gamma", abstract_eval=_gamma_abstract, impl=_gamma_impl)


def random_gamma(key: Any, a: Any, log_space: bool = False) -> Any:
    """Gamma(a, 1) samples (their logs with ``log_space``) from threefry key data whose
    batch shape leads ``a``'s shape."""
    return random_gamma_p.bind(key, a, log_space=bool(log_space))


# ------------------------------------------------------------ random_gamma_grad


def _igamma_series(xp: Any, x: Any, a: Any, enabled: Any, eps: float) -> tuple[Any, Any]:
    r, cc, ans = a.copy(), xp.ones_like(a), xp.ones_like(a)
    dc_da, dans_da = xp.zeros_like(a), xp.zeros_like(a)
    enabled = enabled.copy()
    while bool(enabled.any()):
        r_n = r + 1
        dc_n = dc_da * (x / r_n) - (cc * x) / (r_n * r_n)
        dans_n = dans_da + dc_n
        c_n = cc * (x / r_n)
        ans_n = ans + c_n
        r, dc_da = xp.where(enabled, r_n, r), xp.where(enabled, dc_n, dc_da)
        dans_da, cc = xp.where(enabled, dans_n, dans_da), xp.where(enabled, c_n, cc)
        ans = xp.where(enabled, ans_n, ans)
        enabled = enabled & (xp.abs(dc_n / dans_n) > eps)
    return ans, dans_da


def _igammac_fraction(xp: Any, x: Any, a: Any, enabled: Any, eps: float
                      ) -> tuple[Any, Any]:
    y = 1 - a
    z = x + y + 1
    pkm2, qkm2 = xp.ones_like(x), x.copy()
    pkm1, qkm1 = x + 1, z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = (xp.zeros_like(x), xp.zeros_like(x), xp.zeros_like(x), -x)
    dans_da = (dpkm1 - ans * dqkm1) / qkm1
    enabled = enabled.copy()
    count = 0
    while count < 2000 and bool(enabled.any()):
        count += 1
        y_n, z_n = y + 1, z + 2
        yc = y_n * count
        pk = pkm1 * z_n - pkm2 * yc
        qk = qkm1 * z_n - qkm2 * yc
        nonzero = qk != 0
        r = pk / qk
        ans_n = xp.where(nonzero, r, ans)
        dpk = dpkm1 * z_n - pkm1 - dpkm2 * yc + pkm2 * count
        dqk = dqkm1 * z_n - qkm1 - dqkm2 * yc + qkm2 * count
        dans_n = xp.where(nonzero, (dpk - ans_n * dqk) / qk, dans_da)
        grad_cond = xp.where(nonzero, xp.abs(dans_n - dans_da), 1)
        rescale = xp.abs(pk) > 1 / eps
        s = xp.where(rescale, eps, 1).astype(x.dtype)
        new = (pkm1 * s, pk * s, qkm1 * s, qk * s, dpkm1 * s, dpk * s, dqkm1 * s, dqk * s)
        old = (pkm2, pkm1, qkm2, qkm1, dpkm2, dpkm1, dqkm2, dqkm1)
        (pkm2, pkm1, qkm2, qkm1, dpkm2, dpkm1, dqkm2, dqkm1) = (
            xp.where(enabled, n, o) for n, o in zip(new, old))
        y, z = xp.where(enabled, y_n, y), xp.where(enabled, z_n, z)
        ans, dans_da = xp.where(enabled, ans_n, ans), xp.where(enabled, dans_n, dans_da)
        enabled = enabled & (grad_cond > eps)
    return ans, dans_da


def _gamma_grad_impl(xp: Any, a: Any, x: Any) -> Any:
    sp = _special(xp)
    dt = a.dtype
    eps = float(np.finfo(dt).eps)
    with np.errstate(all="ignore"):
        is_nan = xp.isnan(a) | xp.isnan(x)
        x_is_zero = x == 0
        domain_error = (x < 0) | (a <= 0)
        use_igammac = (x > 1) & (x > a)
        log_ax = a * xp.log(x) - x - sp.gammaln(a).astype(dt)
        underflow = log_ax < -np.log(np.finfo(dt).max)
        enabled = ~(x_is_zero | domain_error | underflow | is_nan)
        ans_s, dans_s = _igamma_series(xp, x, a, enabled & ~use_igammac, eps)
        dlogax_s = xp.log(x) - sp.digamma(a + 1).astype(dt)
        series = -(dans_s + ans_s * dlogax_s) * x / a
        ans_c, dans_c = _igammac_fraction(xp, x, a, enabled & use_igammac, eps)
        dlogax_c = xp.log(x) - sp.digamma(a).astype(dt)
        fraction = -(dans_c + ans_c * dlogax_c) * x
        out = xp.where(use_igammac, -fraction, series)
        out = xp.where(x_is_zero, 0, out)
        out = xp.where(domain_error | is_nan, np.nan, out)
    return xp.asarray(out, dtype=dt)


def _gamma_grad_abstract(a: ShapedArray, x: ShapedArray) -> ShapedArray:
    out = same_shape_dtype("random_gamma_grad", a, x)
    if not dtypes.is_float(out.dtype):
        raise DTypeError(f"random_gamma_grad needs floating operands, got {out.dtype}")
    return ShapedArray(out.shape, out.dtype)


random_gamma_grad_p = Primitive("random_gamma_grad", abstract_eval=_gamma_grad_abstract,
                                impl=_gamma_grad_impl)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """``d x / d a`` for a Gamma(a, 1) sample ``x`` held at fixed quantile (elementwise)."""
    return random_gamma_grad_p.bind(a, x)


def _not_differentiable(*args: Any, **params: Any) -> Any:
    # JAX differentiates its series forward only; a second derivative of a gamma sample
    # needs d2P/da2, which neither library provides in closed form.
    raise NonDifferentiableError(
        "random_gamma_grad (the derivative of a gamma sample with respect to its shape "
        "parameter) is not differentiable in funcgrad: take first derivatives of gamma "
        "samples only, or wrap the parameter in lax.stop_gradient")


random_gamma_grad_p.jvp = _not_differentiable
random_gamma_grad_p.vjp = _not_differentiable
random_gamma_grad_p.vjp_reads = "x"


def _gamma_grad_batch(args: Sequence[Any], dims: Sequence[int | None]) -> Any:
    return random_gamma_grad_p.bind(*all_batched(args, dims)), 0


random_gamma_grad_p.batch = _gamma_grad_batch
random_gamma_grad_p.describe(lax="random_gamma_grad", fusion=None, cuda=None, ufunc=None,
                             torch_method=None, lax_fn=random_gamma_grad)


# ------------------------------------------------------- random_gamma's rules


def _sample_derivative(ans: Any, a: Any, log_space: bool) -> Any:
    """``d sample / d a`` (of the log-sample with ``log_space``), JAX's ``_gamma_grad``."""
    if not log_space:
        return random_gamma_grad(a, ans)
    aval = get_aval(ans)
    samples = exp(ans)
    # exp of a very negative log-sample underflows to 0: use the smallest normal instead.
    tiny = full(aval.shape, np.finfo(aval.dtype).tiny, aval.dtype)
    samples = select(eq(samples, full(aval.shape, 0, aval.dtype)), tiny, samples)
    return div(random_gamma_grad(a, samples), samples)


def _gamma_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, log_space: bool) -> Any:
    key, a = primals
    ans = random_gamma_p.bind(key, a, log_space=log_space)
    if tangents[1] is None:
        return ans, None
    return ans, mul(tangents[1], _sample_derivative(ans, a, log_space))


def _gamma_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, log_space: bool) -> list[Any]:
    return [None, mul(ct, _sample_derivative(ans, primals[1], log_space))]


def _gamma_batch(args: Sequence[Any], dims: Sequence[int | None], *, log_space: bool
                 ) -> Any:
    return random_gamma_p.bind(*all_batched(args, dims), log_space=log_space), 0


random_gamma_p.jvp, random_gamma_p.vjp = _gamma_jvp, _gamma_vjp
random_gamma_p.vjp_reads = "x1,y"
random_gamma_p.batch = _gamma_batch
random_gamma_p.describe(lax="random_gamma", fusion=None, cuda=None, ufunc=None,
                        torch_method=None, lax_fn=random_gamma)

__all__ = ["random_gamma", "random_gamma_grad", "random_gamma_grad_p", "random_gamma_p"]
