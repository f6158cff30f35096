"""Values and derivatives of ``clamp`` with tensor bounds and of ``copysign`` as PyTorch has
them (the functions here run on the values inside one recorded Tensor operation).

>>> import funcgrad.numpy as fnp
>>> clamp_tensors(fnp.array([-2.0, 0.5, 3.0]), fnp.array(0.0), fnp.array(1.0)).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from typing import Any

import funcgrad.numpy as fnp
from funcgrad import lax


def clamp_tensors(x: Any, lo: Any | None, hi: Any | None) -> Any:
    """PyTorch's ``clamp.Tensor``: NaN in ``x`` or a bound gives NaN; the derivative goes to
    ``x`` on ``[lo, hi]``, to ``lo`` below it (only while ``lo < hi``), to ``hi`` above it
    or wherever ``hi < lo``, and to none of them below ``lo == hi``.

    >>> import funcgrad.numpy as fnp
    >>> clamp_tensors(fnp.array([-2.0, 0.5]), None, fnp.array([1.0, 0.0])).tolist()
    [-2.0, 0.0]
    """
    lo = None if lo is None else fnp.astype(lo, x.dtype)
    hi = None if hi is None else fnp.astype(hi, x.dtype)
    # The value from constants, as PyTorch's kernel computes it (std::max then std::min:
    # the first operand on ties, so the sign of a zero follows it; a NaN anywhere is NaN).
    # The selects below only route the derivative, each to the operand PyTorch's formula
    # names.
    value = lax.stop_gradient(x)
    for bound, above in ((lo, False), (hi, True)):
        if bound is not None:
            b = lax.stop_gradient(bound)
            value = fnp.where(fnp.less(b, value) if above else fnp.less(value, b), b, value)
            value = fnp.where(fnp.isnan(b), b, value)
    out = value
    if lo is not None and hi is not None:
        inside = fnp.logical_and(fnp.greater_equal(x, lo), fnp.less_equal(x, hi))
        out = fnp.where(fnp.logical_or(fnp.greater(x, hi), fnp.less(hi, lo)), hi, out)
        out = fnp.where(fnp.logical_and(fnp.less(x, lo), fnp.less(lo, hi)), lo, out)
    elif lo is not None:
        inside = fnp.greater_equal(x, lo)
        out = fnp.where(fnp.less(x, lo), lo, out)
    else:
        inside = fnp.less_equal(x, hi)
        out = fnp.where(fnp.greater(x, hi), hi, out)
    out = fnp.where(inside, x, out)
    # Where a NaN made the value NaN the selects picked a number: subtracting the NaN
    # restores it and keeps PyTorch's derivative (x - 0 keeps the sign of a zero).
    nan = fnp.where(fnp.isnan(value), value, fnp.zeros_like(value))
    return fnp.subtract(out, nan)


def copysign(x: Any, y: Any, grad_to_y: bool) -> Any:
    """``|x|`` with the sign bit of ``y`` (``-0.0`` and negative NaNs included), with
    PyTorch's derivative ``copysign(x, y) / x`` (0 where ``x == 0``) and, when
    ``grad_to_y``, zeros for ``y`` (PyTorch's formula is ``zeros_like(other)``).

    >>> import funcgrad.numpy as fnp
    >>> copysign(fnp.array([2.0, 3.0]), fnp.array([-0.0, 1.0]), False).tolist()
    [-2.0, 3.0]
    """
    y = fnp.asarray(y, dtype=x.dtype) if isinstance(y, (int, float)) else y
    magnitude = x * fnp.sign(x) + 0  # |x| with derivative sign(x), 0 at 0; +0 clears -0.0
    out = fnp.where(fnp.signbit(y), -magnitude, magnitude)
    if not grad_to_y:
        return out
    # y reaches the result through a select that never picks it: its cotangent is zeros.
    picks_out = fnp.ones(fnp.broadcast_shapes(fnp.shape(out), fnp.shape(y)), dtype=bool)
    return fnp.where(picks_out, out, y)
