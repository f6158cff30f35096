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
           "linear", "log_softmax_tangent", "normalization", "pow_scalar", "round_trip",
           "rounded_to", "softmax", "softmax_tangent"]

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


def in_float32_at_result(impl: Callable[..., Any], tangent: Callable[[Any, Any], Any],
                         with_half: bool = False) -> Callable[[Any], Any]:
    """As :func:`in_float32` for a one-argument ``impl`` whose PyTorch backward kernel reads
    the op's rounded *result* (softmax, log_softmax, sigmoid, tanh): the derivative is
    ``tangent(y, dx)``, linear in ``dx``, with ``y`` the half result widened to float32.

    Differentiating the float32 computation instead would evaluate the derivative at the
    unrounded result; where it cancels (softmax's ``dx - sum(y * dx)``) that is many ulps
    from PyTorch. A custom JVP (not VJP) keeps forward mode working; its transpose widens
    the cotangent, applies ``tangent``'s transpose in float32 and rounds once.
    ``with_half``: the half-typed forward is ``impl(x32, half_dtype)`` (a kernel that
    stores an intermediate in the half type), other dtypes' ``impl(x, None)``."""
    @custom_jvp
    def half(x: Any) -> Any:
        x32 = fnp.astype(x, _F32)
        return fnp.astype(impl(x32, x.dtype) if with_half else impl(x32), x.dtype)

    def jvp(primals: Any, tangents: Any) -> Any:
        (x,), (dx,) = primals, tangents
        y = half(x)
        return y, fnp.astype(tangent(fnp.astype(y, _F32), fnp.astype(dx, _F32)), x.dtype)

    half.defjvp(jvp)

    @functools.wraps(impl)
    def run(x: Any) -> Any:
        if _half_dtype(x) is None:
            return impl(x, None) if with_half else impl(x)
        return half(x)

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
    """``log_softmax`` along ``dim``, as :func:`softmax`. PyTorch's half kernel stores the
    sum of the exponentials, and then its logarithm, in the half type: the result is
    ``(x - max) - half(log(half(sum(exp(x - max)))))`` computed in float32, rounded once
    more."""
    from funcgrad import nn  # noqa: PLC0415

    def impl(v: Any, half: Any) -> Any:
        if half is None:
            return nn.log_softmax(v, axis=dim)
        if np.shape(v)[dim] == 0:
            return v
        # (No guard for infinite maxima: a row of -inf, or with +inf, is NaN in PyTorch.)
        shifted = v - fnp.max(v, axis=dim, keepdims=True)
        total = fnp.sum(fnp.exp(shifted), axis=dim, keepdims=True)
        return shifted - _stored(fnp.log(_stored(total, half)), half)

    return in_float32_at_result(impl, log_softmax_tangent(dim), with_half=True)


def _stored(v: Any, half: Any) -> Any:
    """A float32 value stored in the half type and read back."""
    return fnp.astype(fnp.astype(v, half), _F32)


def normalization(group: Callable[[Any], Any], ungroup: Callable[[Any], Any],
                  axes: tuple[int, ...], eps: float,
                  affine: Callable[[Any, Any, Any], Any]) -> Callable[..., Any]:
    """A layer/group normalization of a half input ``x`` with optional ``w``/``b``, as
    PyTorch's CPU kernels compute it: mean and 1/std over ``axes`` of ``group(x)`` in
    float32, ``affine(ungroup(normalized), w, b)`` in float32, rounded once.

    Their backward kernels read the statistics as stored, in the half type (unless ``w``
    or ``b`` is float32: then PyTorch stores them in float32), and compute in float32
    ``dx = rstd * (g - mean(g) - x_hat * mean(x_hat * g))``, ``g = dy * w``, with ``x_hat``
    from those rounded statistics (PyTorch's ``a * dy * w + b * x + c``),
    ``dw = sum(dy * x_hat)`` and ``db = sum(dy)``, each rounded once. Differentiating the
    float32 forward instead evaluates the derivative at the unrounded statistics: many
    ulps off on the small elements of ``dx``. The rule is a custom JVP, linear in the
    tangents, so forward mode works too."""
    def stats(x32: Any) -> tuple[Any, Any, Any]:
        g = group(x32)
        mean = fnp.mean(g, axis=axes, keepdims=True)
        var = fnp.mean(fnp.square(g - mean), axis=axes, keepdims=True)
        return g, mean, 1.0 / fnp.sqrt(var + eps)

    def run(x: Any, w: Any, b: Any) -> Any:
        half = x.dtype
        present = (w is not None, b is not None)
        keep_f32 = any(p is not None and getattr(p, "dtype", None) == _F32 for p in (w, b))

        def unpack(params: Any) -> list[Any]:
            it = iter(params)
            return [fnp.astype(next(it), _F32) if has else None for has in present]

        @custom_jvp
        def norm(x: Any, *params: Any) -> Any:
            w32, b32 = unpack(params)
            g, mean, rstd = stats(fnp.astype(x, _F32))
            return fnp.astype(affine(ungroup((g - mean) * rstd), w32, b32), half)

        def jvp(primals: Any, tangents: Any) -> Any:
            (x, *params), (tx, *tparams) = primals, tangents
            (w32, _), (tw32, tb32) = unpack(params), unpack(tparams)
            g, mean, rstd = stats(fnp.astype(x, _F32))
            if not keep_f32:
                mean = fnp.astype(fnp.astype(mean, half), _F32)
                rstd = fnp.astype(fnp.astype(rstd, half), _F32)
            x_hat = g * rstd - rstd * mean
            tg = group(fnp.astype(tx, _F32))
            dn = rstd * (tg - fnp.mean(tg, axis=axes, keepdims=True)
                         - x_hat * fnp.mean(x_hat * tg, axis=axes, keepdims=True))
            t = affine(ungroup(dn), w32, None)
            if tw32 is not None:
                t = t + affine(ungroup(x_hat), tw32, None)
            if tb32 is not None:
                t = affine(t, None, tb32)
            return norm(x, *params), fnp.astype(t, half)

        norm.defjvp(jvp)
        return norm(x, *(p for p in (w, b) if p is not None))

    return run


def linear(forward: Callable[[Any, Any], Any],
           tangent: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """A linear map ``forward(x, half)`` of a half ``x`` (pooling's window sums and
    divisors) computed in float32 and rounded once; its derivative ``tangent(dx, half)``,
    in float32 too and rounded once.

    ``tangent`` rounds to ``half`` (:func:`round_trip`) where PyTorch's backward kernel
    stores an intermediate in the half type (average pooling's ``grad / divisor``, its sums
    into the gradient buffer): its transpose, the gradient, rounds at the same points (a
    cast's transpose is the opposite cast)."""
    def run(x: Any) -> Any:
        half = x.dtype

        @custom_jvp
        def f(x: Any) -> Any:
            return fnp.astype(forward(fnp.astype(x, _F32), half), half)

        def jvp(primals: Any, tangents: Any) -> Any:
            t = tangent(fnp.astype(tangents[0], _F32), half)
            return f(primals[0]), fnp.astype(t, half)

        f.defjvp(jvp)
        return f(x)

    return run


def round_trip(v: Any, half: Any) -> Any:
    """A float32 ``v`` rounded to ``half`` and widened back."""
    return fnp.astype(fnp.astype(v, half), _F32)


def pow_scalar(p: float) -> Callable[[Any], Any]:
    """``x ** p`` of a half ``x`` as PyTorch's CPU kernel: the exponent rounded to the half
    type, the power computed in float32 and rounded once; its backward PyTorch's
    ``grad * (p * x.pow(p - 1))``, each of the three operations rounding to the half
    type."""
    @custom_jvp
    def f(x: Any) -> Any:
        e = np.float32(np.asarray(p, x.dtype))
        return fnp.astype(fnp.power(fnp.astype(x, _F32), e), x.dtype)

    def jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        half = x.dtype
        x32 = fnp.astype(x, _F32)
        e = np.float32(np.asarray(p - 1, half))
        scale = round_trip(np.float32(p) * round_trip(fnp.power(x32, e), half), half)
        return f(x), fnp.astype(fnp.astype(t, _F32) * scale, half)

    f.defjvp(jvp)
    return f


# PyTorch's CPU nll_loss sums a half batch in the half type by a cascade: a partial sum per
# level, level j + 1 taking level j's sum (and restarting it) after every element whose
# index is a multiple of 16 ** (j + 1), index 0 included; the top level never passes on.
_CASCADE_STEP = 16
_CASCADE_LEVELS = 8


def cascade_sum(values: Any, half: Any, keep: Any = None) -> Any:
    """The sum of a 1-D float32 array of ``half``-representable values as PyTorch's half
    nll_loss adds its batch (see above), each addition rounded to ``half``; the derivative
    is the plain sum's. The value is float32, representable in ``half``. ``keep`` (a host
    boolean array): the elements the kernel visits, the others skipped outright (they pass
    nothing up either); None: all.

    >>> import numpy as np
    >>> float(cascade_sum(np.array([1.0, 2048.0, 1.0], np.float32), np.float16))  # not 2050
    2048.0
    """
    def add(a: Any, b: Any) -> Any:
        return _stored(a + b, half)

    values = fnp.asarray(values, _F32)
    n = int(np.shape(values)[0])
    tags = np.arange(n) if keep is None else np.flatnonzero(np.asarray(keep))
    items = values if keep is None else fnp.take(values, tags)
    partial = []  # what each level holds at the end
    for level in range(_CASCADE_LEVELS):
        k = len(tags)
        if level == _CASCADE_LEVELS - 1:
            bounds = np.zeros(0, np.int64)  # the top level passes nothing on
        else:
            bounds = np.flatnonzero(tags % _CASCADE_STEP ** (level + 1) == 0)
        # Groups end at each bound; what follows the last one stays at this level.
        starts = np.concatenate([[0], bounds[:-1] + 1]).astype(np.int64)
        groups = [(int(a), int(b) + 1) for a, b in zip(starts, bounds)]
        rest = (int(bounds[-1]) + 1 if len(bounds) else 0, k)
        sums = _group_sums(items, groups + ([rest] if rest[1] > rest[0] else []), add)
        partial.append(sums[-1] if rest[1] > rest[0] else None)
        if not groups:
            break
        items = sums[:len(groups)] if rest[1] > rest[0] else sums
        tags = tags[bounds]
    total = None
    for p in partial:
        if p is not None:
            total = p if total is None else add(total, p)
    if total is None:
        return fnp.sum(values)
    from funcgrad.lax import stop_gradient  # noqa: PLC0415

    plain = fnp.sum(values)
    return plain + stop_gradient(total - plain)


def _group_sums(items: Any, groups: list[tuple[int, int]], add: Any) -> Any:
    """Each ``[start, stop)`` run of ``items`` summed left to right by ``add``: the runs
    side by side, padded with zeros to the longest (adding 0 changes nothing)."""
    if not groups:
        return items[:0]
    width = max(b - a for a, b in groups)
    index = np.full((len(groups), width), -1, np.int64)
    for r, (a, b) in enumerate(groups):
        index[r, :b - a] = np.arange(a, b)
    padded = fnp.where(index >= 0, fnp.take(items, np.maximum(index, 0)), 0.0)
    acc = padded[:, 0]
    for i in range(1, width):
        acc = add(acc, padded[:, i])
    return acc
