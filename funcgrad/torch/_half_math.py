"""Half-precision (float16, bfloat16) math as PyTorch's CPU kernels do it: computed in
float32 and rounded once (used by ``Tensor`` methods and ``torch.nn.functional``).

>>> import numpy as np, ml_dtypes
>>> in_float32(lambda x: x * 3)(np.ones(1, ml_dtypes.bfloat16)).dtype
dtype(bfloat16)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

import funcgrad.numpy as fnp
from funcgrad.transforms.custom import custom_jvp

__all__ = ["half_dtype", "in_float32", "in_float32_at_result", "log_softmax",
           "log_softmax_tangent", "rounded_to", "softmax", "softmax_tangent"]

_HALF = (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16))
_F32 = np.dtype(np.float32)


def half_dtype(x: Any) -> Any:
    """``x``'s dtype when it is float16 or bfloat16, else None."""
    d = getattr(x, "dtype", None)
    return d if d is not None and d in _HALF else None


_half_dtype = half_dtype


def rounded_to(v: Any, half: Any) -> Any:
    """A float32 ``v`` with the value it has rounded to ``half`` and ``v``'s own derivative
    (no rounding of the cotangent): a statistic PyTorch's kernel stores in the half type
    and then reads back."""
    from funcgrad.lax import stop_gradient  # noqa: PLC0415

    return v + stop_gradient(fnp.astype(fnp.astype(v, half), _F32) - v)


def in_float32(impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` computed in float32 for float16/bfloat16 arguments, each float32 result
    rounded once to the half type.

    PyTorch's CPU kernels for the half types (activations, softmax, normalizations, the
    fused losses, attention) load each element as float, compute in float and round once
    on store; their backward kernels do the same. Computed step by step in the half type a
    composite loses bits at every step (gelu's tanh form: 100% off for x < -3). The casts'
    own derivatives give the backward the same shape: the cotangent widened exactly, the
    gradient rounded once. Arguments of other dtypes (float32, float64, integer indices)
    call ``impl`` unchanged, with no cast added.

    >>> import numpy as np, ml_dtypes
    >>> in_float32(lambda x: x + 1)(np.ones(1, ml_dtypes.bfloat16)).tolist()
    [2.0]
    """
    @functools.wraps(impl)
    def run(*args: Any) -> Any:
        half = next((d for d in map(_half_dtype, args) if d is not None), None)
        if half is None:
            return impl(*args)
        from funcgrad.tree_util import tree_map  # noqa: PLC0415

        out = impl(*(fnp.astype(a, _F32) if _half_dtype(a) is not None else a
                     for a in args))
        return tree_map(lambda o: fnp.astype(o, half)
                        if getattr(o, "dtype", None) == _F32 else o, out)

    return run


def in_float32_at_result(impl: Callable[[Any], Any],
                         tangent: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """As :func:`in_float32` for a one-argument ``impl`` whose PyTorch backward kernel reads
    the op's rounded *result* (softmax, log_softmax, sigmoid, tanh): the derivative is
    ``tangent(y, dx)``, linear in ``dx``, with ``y`` the half result widened to float32.

    Differentiating the float32 computation instead would evaluate the derivative at the
    unrounded result; where it cancels (softmax's ``dx - sum(y * dx)``) that is many ulps
    from PyTorch. A custom JVP (not VJP) keeps forward mode working; its transpose widens
    the cotangent, applies ``tangent``'s transpose in float32 and rounds once."""
    @custom_jvp
    def half(x: Any) -> Any:
        return fnp.astype(impl(fnp.astype(x, _F32)), x.dtype)

    def jvp(primals: Any, tangents: Any) -> Any:
        (x,), (dx,) = primals, tangents
        y = half(x)
        return y, fnp.astype(tangent(fnp.astype(y, _F32), fnp.astype(dx, _F32)), x.dtype)

    half.defjvp(jvp)

    @functools.wraps(impl)
    def run(x: Any) -> Any:
        return impl(x) if _half_dtype(x) is None else half(x)

    return run


def softmax_tangent(dim: int) -> Callable[[Any, Any], Any]:
    """softmax's derivative at its result ``y``, applied to ``dx``."""
    return lambda y, dx: y * (dx - fnp.sum(y * dx, axis=dim, keepdims=True))


def log_softmax_tangent(dim: int) -> Callable[[Any, Any], Any]:
    """log_softmax's derivative at its result ``y``, applied to ``dx``."""
    return lambda y, dx: dx - fnp.sum(fnp.exp(y) * dx, axis=dim, keepdims=True)


# One wrapped function per dim, made once: every softmax call (a hot path) reuses it
# instead of building a custom_jvp.
@functools.cache
def softmax(dim: int) -> Callable[[Any], Any]:
    """``softmax`` along ``dim``, a half input's in float32 with the derivative at the
    rounded result (other dtypes: funcgrad.nn.softmax itself)."""
    from funcgrad import nn  # noqa: PLC0415

    return in_float32_at_result(lambda v: nn.softmax(v, axis=dim), softmax_tangent(dim))


@functools.cache
def log_softmax(dim: int) -> Callable[[Any], Any]:
    """``log_softmax`` along ``dim``, as :func:`softmax`."""
    from funcgrad import nn  # noqa: PLC0415

    return in_float32_at_result(lambda v: nn.log_softmax(v, axis=dim),
                                log_softmax_tangent(dim))
