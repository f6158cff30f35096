"""Real-valued samplers: uniform floats by JAX's mantissa trick, and the distributions
JAX derives from them (normal through erf_inv, exponential, laplace, ...).

>>> from funcgrad import random
>>> random.uniform(random.PRNGKey(0), (3,))
Array([0.947667  , 0.9785799 , 0.33229148], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.conversion import requested_dtype
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import TypePromotionError
from funcgrad.primitives.elementwise import add_p, convert_element_type_p, mul_p
from funcgrad.primitives.random_gamma import erf_inv_with
from funcgrad.random._keys import check_key, random_bits, split_data


def float_dtype(name: str, dtype: Any) -> np.dtype[Any]:
    dt = dtypes.default_float() if dtype is None else requested_dtype(dtype, None)
    if not dtypes.is_float(dt):  # bfloat16 included (its NumPy kind is "V")
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def check_all_safe_to_cast(name: str, dt: np.dtype[Any], *args: Any) -> None:
    """JAX's check that each parameter casts to ``dt`` without loss under its promotion
    rules (a Python scalar, weakly typed, always does)."""
    for arg in args:
        x = arg if dtypes.python_scalar(arg) or hasattr(arg, "dtype") else np.asarray(arg)
        if dtypes.result_type(x, dt) != dt:
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument "
                                     f"of type {jnp.asarray(arg).dtype} to {dt}")


def shape_tuple(shape: Any) -> tuple[int, ...]:
    # (a shape may come as a 1-d array of sizes, which JAX takes too)
    if isinstance(shape, Sequence) or getattr(shape, "ndim", 0) == 1:
        return tuple(int(s) for s in shape)
    return (int(shape),)


def _as(x: Any, dt: np.dtype[Any]) -> Any:
    return lax.convert_element_type(jnp.asarray(x), dt)


def uniform_data(data: Any, shape: tuple[int, ...], dt: np.dtype[Any], minval: Any = 0.0,
                 maxval: Any = 1.0) -> Any:
    """Uniform floats in [minval, maxval) from one key's data (JAX's ``_uniform``)."""
    info = np.finfo(dt)
    nbits, nmant = info.bits, info.nmant
    # As JAX: a type with under 8 mantissa bits (bfloat16) draws 8 random bits each.
    rng_bits = 8 if nmant < 8 else nbits
    raw = random_bits(data, rng_bits, shape)
    udt = np.dtype(f"uint{nbits}")
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, udt)
    # JAX keeps the top nmant bits as the mantissa of a float in [1, 2) and subtracts 1:
    # exactly the integer of those bits times 2**-nmant (both steps are exact).
    mant = lax.div(raw, np.array(1 << (rng_bits - nmant), udt))
    floats = lax.mul(lax.convert_element_type(mant, dt), np.array(2.0 ** -nmant, dt))
    lo, hi = _as(minval, dt), _as(maxval, dt)
    span = hi - lo
    for op, bound in (("mul", span), ("add", lo)):
        # JAX broadcasts the bounds to the draws' rank, then multiplies and adds with
        # lax's shape rule: a bound cannot widen the result.
        b = get_aval(bound).shape
        b = (1,) * (len(shape) - len(b)) + tuple(b)
        if len(b) != len(shape) or any(m not in (1, n) for m, n in zip(b, shape)):
            raise TypeError(f"{op} got incompatible shapes for broadcasting: {tuple(shape)}, "
                            f"{b}.")
    wide = np.float64 if info.bits == 32 else None
    if wide is not None:
        # XLA fuses float32's ``floats * span + lo`` into one multiply-add in float64: the
        # product is exact there, so one rounding of the sum and one back to float32 match.
        # The half types it computes op by op, each rounded (checked on jax 0.10.2), as the
        # branch below. (Bound directly: float64 exists here even in 32-bit mode, as inside
        # XLA's FMA.)
        def conv(x: Any, to: Any) -> Any:
            return convert_element_type_p.bind(x, new_dtype=np.dtype(to), weak_type=False)

        shape_ = np.broadcast_shapes(shape, get_aval(span).shape, get_aval(lo).shape)
        # Widened before broadcasting: a host scalar bound stays a broadcast fill, which
        # follows the key's device (a widened full-size host copy would not).
        w = [jnp.broadcast_to(conv(v, wide), shape_) for v in (floats, span, lo)]
        scaled = conv(add_p.bind(mul_p.bind(w[0], w[1]), w[2]), dt)
    else:
        scaled = floats * span + lo
    return jnp.maximum(lo, scaled)


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform random floats in ``[minval, maxval)``, bit for bit JAX's.

    >>> from funcgrad import random
    >>> random.uniform(random.PRNGKey(1), (2,), minval=-1.0, maxval=1.0)
    Array([-0.12273502,  0.06750584], dtype=float32)
    """
    data, _ = check_key("uniform", key)
    return uniform_data(data, shape_tuple(shape), float_dtype("uniform", dtype), minval,
                        maxval)


# ------------------------------------------------------------------ erf_inv


_OPS = SimpleNamespace(where=jnp.where, log1p=jnp.log1p, sqrt=jnp.sqrt, abs=jnp.abs,
                       exp=jnp.exp, isfinite=jnp.isfinite, erf=lax.erf, erfc=lax.erfc)


def erf_inv(x: Any) -> Any:
    """The inverse error function on (-1, 1), +-inf at +-1.

    float32 and narrower are XLA's CPU arithmetic bit for bit (``lax.erf_inv``); wider
    floats refine its polynomial by Newton steps on erf/erfc (the same code as the gamma
    sampler's normals, ``erf_inv_with``).

    >>> from funcgrad.random._continuous import erf_inv
    >>> import numpy as np
    >>> erf_inv(np.array([0.0, 0.5], np.float32))
    Array([0.        , 0.47693628], dtype=float32)
    """
    x = jnp.asarray(x)
    if np.dtype(x.dtype).itemsize <= 4:
        # The primitive: XLA's float32 arithmetic bit for bit (half types through float32).
        return lax.erf_inv(x)
    return erf_inv_with(_OPS, x)


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    """JAX's check: the parameters broadcast to exactly ``shape``."""
    if param_shapes:
        # Shapes that do not broadcast at all raise lax.broadcast_shapes's error, as in JAX.
        shape_ = lax.broadcast_shapes(shape, *param_shapes)
        if shape != shape_:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {shape_} for shape argument "
                             f"{shape}.")


def param_shape(x: Any) -> tuple[int, ...]:
    """The shape of a parameter: an array's or tracer's, or NumPy's for Python values."""
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))


def params_shape(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """``shape`` checked against the parameters' shapes, or their broadcast if None."""
    shapes = [param_shape(p) for p in params]
    if shape is None:
        return lax.broadcast_shapes(*shapes) if shapes else ()
    out = shape_tuple(shape)
    check_shape(name, out, *shapes)
    return out


# ------------------------------------------------------------------ samplers


def _normal_data(data: Any, shape: tuple[int, ...], dt: np.dtype[Any]) -> Any:
    lo = np.nextafter(np.array(-1.0, dt), np.array(0.0, dt))
    u = uniform_data(data, shape, dt, lo, 1.0)
    return np.array(np.sqrt(2), dt) * erf_inv(u)


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal samples: ``sqrt(2) * erf_inv(u)`` of JAX's uniform ``u`` on
    ``(-1, 1)`` (the uniform bits are JAX's; erf_inv agrees with XLA's to a few ulps).

    >>> from funcgrad import random
    >>> random.normal(random.PRNGKey(0), (2,)).shape
    (2,)
    """
    data, _ = check_key("normal", key)
    dt = dtypes.default_float() if dtype is None else requested_dtype(dtype, None)
    if dt.kind == "c":
        real = np.dtype(np.finfo(dt).dtype)
        k_re, k_im = split_data(data, (2,))[0], split_data(data, (2,))[1]
        re = _normal_data(k_re, shape_tuple(shape), real).astype(dt)
        im = _normal_data(k_im, shape_tuple(shape), real).astype(dt)
        return (re + 1j * im) / np.array(np.sqrt(2), dt)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, "
                         f"got {dt}")
    return _normal_data(data, shape_tuple(shape), dt)


def _next_toward(x: Any, direction: float, dt: np.dtype[Any]) -> Any:
    """``nextafter(x, direction)``: exact for concrete bounds, one relative epsilon for
    traced ones (funcgrad has no nextafter primitive)."""
    if not isinstance(x, Tracer):
        arr = np.asarray(x, dtype=dt)
        return np.nextafter(arr, np.array(direction, dt))
    info = np.finfo(dt)
    step = jnp.maximum(jnp.abs(x) * np.array(info.epsneg, dt), np.array(info.smallest_subnormal,
                                                                      dt))
    return x + step if direction > 0 else x - step


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Normal samples truncated to ``(lower, upper)``, by inverting the CDF as JAX does.

    >>> from funcgrad import random
    >>> x = random.truncated_normal(random.PRNGKey(0), -1.0, 1.0, (100,))
    >>> bool((abs(x) < 1).all())
    True
    """
    data, _ = check_key("truncated_normal", key)
    dt = float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = lax.broadcast_shapes(param_shape(lower), param_shape(upper))
    else:
        check_shape("truncated_normal", shape_tuple(shape), param_shape(lower),
                    param_shape(upper))
    sqrt2 = np.array(np.sqrt(2), dt)
    lower = _as(lower, dt)
    upper = _as(upper, dt)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = uniform_data(data, shape_tuple(shape), dt, a, b)
    out = sqrt2 * erf_inv(u)
    lo = _next_toward(lax.stop_gradient(lower), np.inf, dt)
    hi = _next_toward(lax.stop_gradient(upper), -np.inf, dt)
    return jnp.clip(out, lo, hi)


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Exponential(1) samples, ``-log1p(-u)``.

    >>> from funcgrad import random
    >>> bool((random.exponential(random.PRNGKey(0), (5,)) >= 0).all())
    True
    """
    data, _ = check_key("exponential", key)
    u = uniform_data(data, shape_tuple(shape), float_dtype("exponential", dtype))
    return -jnp.log1p(-u)


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Laplace(0, 1) samples, ``sign(u) * log1p(-|u|)`` for ``u`` uniform on (-1, 1).

    >>> from funcgrad import random
    >>> random.laplace(random.PRNGKey(0), (2, 2)).shape
    (2, 2)
    """
    data, _ = check_key("laplace", key)
    dt = float_dtype("laplace", dtype)
    u = uniform_data(data, shape_tuple(shape), dt, -1.0 + np.finfo(dt).epsneg, 1.0)
    return jnp.sign(u) * jnp.log1p(-jnp.abs(u))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Logistic samples, ``log(u) - log1p(-u)``.

    >>> from funcgrad import random
    >>> random.logistic(random.PRNGKey(0), (3,)).dtype
    dtype('float32')
    """
    data, _ = check_key("logistic", key)
    dt = float_dtype("logistic", dtype)
    x = uniform_data(data, shape_tuple(shape), dt, np.finfo(dt).tiny, 1.0)
    return jnp.log(x) - jnp.log1p(-x)


def gumbel_data(data: Any, shape: tuple[int, ...], dt: np.dtype[Any], mode: str | None
                ) -> Any:
    info = np.finfo(dt)
    mode = mode or "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    if mode == "low":
        u = uniform_data(data, shape, dt, info.tiny, 1.0)
        return -jnp.log(-jnp.log(u))
    both = uniform_data(data, (2, *shape), dt)
    high, low = both[0], both[1]
    x = jnp.where(high >= np.array(0.5, dt), high,
                  high + np.array(2.0 ** -info.nmant, dt) * low + np.array(info.tiny, dt))
    return -jnp.log(-jnp.log1p(-x))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None
           ) -> Any:
    """Gumbel samples, ``-log(-log(u))`` (``mode='high'``: more bits near 0).

    >>> from funcgrad import random
    >>> random.gumbel(random.PRNGKey(0), (4,)).shape
    (4,)
    """
    data, _ = check_key("gumbel", key)
    return gumbel_data(data, shape_tuple(shape), float_dtype("gumbel", dtype), mode)


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Cauchy samples, ``tan(pi * (u - 1/2))``.

    >>> from funcgrad import random
    >>> random.cauchy(random.PRNGKey(0), (2,)).shape
    (2,)
    """
    data, _ = check_key("cauchy", key)
    dt = float_dtype("cauchy", dtype)
    u = uniform_data(data, shape_tuple(shape), dt, np.finfo(dt).eps, 1.0)
    return jnp.tan(np.array(np.pi, dt) * (u - np.array(0.5, dt)))
