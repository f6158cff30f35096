"""Fused multiply-adds (``a * b + c`` rounded once) on NumPy/CuPy, which have none: XLA's
and PyTorch's CPU kernels are compiled with FMA contraction, and their bits depend on it.

>>> float(fma(np.float64(0.1), np.float64(10.0), np.float64(-1.0)))
5.551115123125783e-17
"""

from __future__ import annotations

from typing import Any

import numpy as np

_F32 = np.float32
_F64 = np.float64


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def fma32(xp: Any, a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` on float32 values with one rounding (the product is exact in float64;
    a float64 sum that lands halfway between two floats is rounded to odd first, so the
    second rounding is the one a fused multiply-add makes).

    >>> float(fma32(np, np.float32(0.1), np.float32(10), np.float32(-1)))
    1.4901161193847656e-08
    """
    return fma32_wide(xp, xp.asarray(a, _F32), xp.asarray(b, _F32).astype(_F64),
                xp.asarray(c, _F32).astype(_F64))


def fma32_wide(xp: Any, a: Any, b: Any, c: Any) -> Any:
    """:func:`fma32` where ``b`` (and ``c``) are already float64 arrays or scalars holding
    float32 values: a loop's invariant operand is converted once."""
    s = xp.multiply(a, b, dtype=_F64)
    s += c
    bits = s.view(np.int64)
    # 29 dropped bits 100...0: a float32 halfway point, maybe reached by the float64
    # rounding; rounded to odd first where the exact sum is not on it (and float32's
    # subnormal range, where fewer bits are kept).
    risky = ((bits & 0x1FFFFFFF) == 0x10000000) | (xp.abs(s) < 2.0 ** -125)
    if bool(risky.any()):
        # (Few elements: the exact sum is rebuilt there only.)
        shape = s.shape
        idx = xp.nonzero(risky.reshape(-1))[0]
        a_, b_ = (xp.broadcast_to(xp.asarray(v), shape).reshape(-1)[idx] for v in (a, b))
        p = xp.multiply(a_, b_, dtype=_F64)
        c_ = xp.broadcast_to(xp.asarray(c, _F64), shape).reshape(-1)[idx]
        hit, err = _two_sum(p, c_)
        hb = hit.view(np.int64)
        step = xp.where((err > 0) == (hit > 0), 1, -1)
        odd = (err != 0) & ((hb & 1) == 0) & xp.isfinite(hit) & (hit != 0)
        flat = s.reshape(-1).copy()
        flat[idx] = xp.where(odd, hb + step, hb).view(_F64)
        s = flat.reshape(shape)
    return s.astype(_F32)


def _split(a: Any) -> tuple[Any, Any]:
    t = 134217729.0 * a  # Veltkamp: 2**27 + 1 splits a double into two 26-bit halves
    hi = t - (t - a)
    return hi, a - hi


def _round_odd(s: Any, err: Any) -> Any:
    """``s`` (the rounded sum) nudged one ulp toward ``err`` when inexact and even: the
    sticky bit that lets a second rounding land where one rounding would."""
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0) & np.isfinite(s) & (s != 0)
    step = np.where((err > 0) == (s > 0), 1, -1)
    return np.where(fix, bits + step, bits).view(_F64)


def fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` in float64 with one rounding (error-free product and sums; rare 1-ulp
    misses under cancellation). Non-finite results, and operands too large to split, take
    the plain expression.

    >>> float(fma64(np.float64(0.1), 10.0, -1.0))
    5.551115123125783e-17
    """
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    p = a * b
    with np.errstate(all="ignore"):
        ah, al = _split(a)
        bh, bl = _split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl  # p + e == a * b exactly
        s, t = _two_sum(p, c)
        u, v = _two_sum(t, e)
        out = s + _round_odd(u, v)
        ok = np.isfinite(out) & (np.abs(a) < 1e300) & (np.abs(b) < 1e300)
        return np.where(ok, out, p + c)


def fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """``a * b + c`` rounded once in ``c``'s float type (NumPy): float64 and float32 exactly,
    narrower types through float64."""
    dt = np.asarray(c).dtype
    if dt == _F64:
        return fma64(a, b, c)
    if dt == _F32:
        return np.asarray(fma32(np, a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    return (a.astype(_F64) * b.astype(_F64) + c.astype(_F64)).astype(dt)
