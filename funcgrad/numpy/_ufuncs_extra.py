"""More elementwise functions of funcgrad.numpy: the array-API aliases (``acos``, ``pow``,
``concat``...), shifts, ``fmax``/``fmin``, ``gcd``/``lcm``, ``frexp``/``ldexp``/``modf``,
``spacing``, ``signbit``, ``i0`` and the comparisons ``isclose``/``allclose``/
``array_equal``, following jax.numpy's definitions.

>>> import funcgrad.numpy as fnp
>>> fnp.fmax(fnp.array([1.0, fnp.nan]), 0.5).tolist()
[1.0, 0.5]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import DTypeError
from funcgrad.numpy._core import (
    asarray,
    broadcast_args,
    cast,
    check_arraylike,
    check_arraylike_seq,
    promote_args,
    promote_inexact,
)
from funcgrad.numpy._reductions import all as _all
from funcgrad.numpy._shape import concatenate, transpose
from funcgrad.numpy._ufuncs import (
    _full_bool,
    _promote_one,
    _strong_if_array,
    abs,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    array_api_alias,
    bitwise_and,
    bitwise_or,
    ceil,
    copysign,
    equal,
    exp,
    exp2,
    floor,
    floor_divide,
    greater,
    greater_equal,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    logical_and,
    logical_or,
    multiply,
    not_equal,
    power,
    remainder,
    subtract,
    where,
)
from funcgrad.primitives import bits as B
from funcgrad.primitives import elementwise as E
from funcgrad.primitives.special import bessel_i0e
from funcgrad.primitives.special import nextafter as _nextafter

acos, acosh, asin, asinh = (array_api_alias(f, n) for f, n in (
    (arccos, "acos"), (arccosh, "acosh"), (arcsin, "asin"), (arcsinh, "asinh")))
atan, atan2, atanh = (array_api_alias(f, n) for f, n in (
    (arctan, "atan"), (arctan2, "atan2"), (arctanh, "atanh")))
pow = power  # noqa: A001 - the array API's name
bitwise_invert = array_api_alias(invert, "bitwise_invert")
euler_gamma = np.euler_gamma
ComplexWarning = np.exceptions.ComplexWarning


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    """The array API's ``concatenate``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.concat([fnp.ones(2), fnp.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    check_arraylike_seq("concat", arrays)
    return concatenate(arrays, axis=axis)


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    """The array API's ``transpose`` (``axes`` is required).

    >>> import funcgrad.numpy as fnp
    >>> fnp.permute_dims(fnp.ones((2, 3)), (1, 0)).shape
    (3, 2)
    """
    check_arraylike("permute_dims", a)
    return transpose(a, axes)


def _integers(name: str, *xs: Any) -> list[Any]:
    out = promote_args(*xs)
    dt = get_aval(out[0]).dtype
    if dt.kind not in "iub":
        raise DTypeError(f"{name} needs integer or boolean operands, got {dt}")
    return out


def _integers_numeric(name: str, *xs: Any) -> list[Any]:
    """JAX's ``promote_args_numeric`` for the shifts and ``bitwise_count``: booleans become
    int32 (with 64-bit mode on too)."""
    out = _integers(name, *xs)
    if get_aval(out[0]).dtype.kind == "b":
        out = [cast(v, np.dtype(np.int32), get_aval(v).weak_type) for v in out]
    return out


def left_shift(x1: Any, x2: Any, /) -> Any:
    """``x1 << x2`` (bits shifted out are lost; shifts past the width give 0).

    >>> import funcgrad.numpy as fnp
    >>> fnp.left_shift(fnp.array([1, 3]), 2).tolist()
    [4, 12]
    """
    check_arraylike("left_shift", x1, x2)
    x1, x2 = broadcast_args(*_integers_numeric("left_shift", x1, x2))
    return B.shift_left(x1, x2)


def right_shift(x1: Any, x2: Any, /) -> Any:
    """``x1 >> x2``: arithmetic for signed integers, logical for unsigned ones.

    >>> import funcgrad.numpy as fnp
    >>> fnp.right_shift(fnp.array([-8, 8]), 2).tolist()
    [-2, 2]
    """
    check_arraylike("right_shift", x1, x2)
    x1, x2 = broadcast_args(*_integers_numeric("right_shift", x1, x2))
    if get_aval(x1).dtype.kind == "u":
        return B.shift_right_logical(x1, x2)
    return B.shift_right_arithmetic(x1, x2)


bitwise_left_shift = array_api_alias(left_shift, "bitwise_left_shift")
bitwise_right_shift = right_shift


def bitwise_count(x: Any, /) -> Any:
    """The number of 1 bits in ``|x|``, as uint8 (NumPy's convention).

    >>> import funcgrad.numpy as fnp
    >>> fnp.bitwise_count(fnp.array([7, -1])).tolist()
    [3, 1]
    """
    check_arraylike("bitwise_count", x)
    (x,) = _integers_numeric("bitwise_count", x)
    return cast(B.population_count(abs(x)), dtypes.uint8)


def _real_inexact(name: str, *xs: Any) -> list[Any]:
    out = promote_inexact(*xs)
    if get_aval(out[0]).dtype.kind == "c":
        raise DTypeError(f"{name} does not support complex inputs")
    return out


def fabs(x: Any, /) -> Any:
    """Absolute value as a float (complex inputs are refused, as in NumPy).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fabs(fnp.array([-2, 3])).tolist()
    [2.0, 3.0]
    """
    check_arraylike("fabs", x)
    (x,) = _real_inexact("fabs", x)
    return abs(x)


def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum that ignores NaN (NaN only where both are NaN).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fmax(fnp.array([fnp.nan, 1.0]), fnp.array([2.0, fnp.nan])).tolist()
    [2.0, 1.0]
    """
    check_arraylike("greater", x1, x2)  # JAX's message names its comparison
    x1, x2 = broadcast_args(*promote_args(x1, x2), keep_scalars=False)
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum that ignores NaN (NaN only where both are NaN).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fmin(fnp.array([fnp.nan, 1.0]), fnp.array([2.0, fnp.nan])).tolist()
    [2.0, 1.0]
    """
    check_arraylike("less", x1, x2)  # JAX's message names its comparison
    x1, x2 = broadcast_args(*promote_args(x1, x2), keep_scalars=False)
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def _euclid(x1: Any, x2: Any) -> Any:
    from funcgrad.transforms.control_flow import while_loop  # noqa: PLC0415 - loads late

    def cond(c: Any) -> Any:
        return _any_nonzero(c[1])

    def body(c: Any) -> Any:
        a, b = c
        nz = not_equal(b, 0)
        safe = where(nz, b, 1)
        return where(nz, b, a), where(nz, remainder(a, safe), 0)

    return while_loop(cond, body, (x1, x2))[0]


def _any_nonzero(x: Any) -> Any:
    from funcgrad.numpy._reductions import any as _any  # noqa: PLC0415

    return _any(not_equal(x, 0))


def gcd(x1: Any, x2: Any) -> Any:
    """Greatest common divisor of ``|x1|`` and ``|x2|`` (a loop of Euclid's steps).

    >>> import funcgrad.numpy as fnp
    >>> fnp.gcd(fnp.array([12, 7]), 18).tolist()
    [6, 1]
    """
    check_arraylike("gcd", x1, x2)
    x1, x2 = broadcast_args(*_integers("gcd", x1, x2), keep_scalars=False)
    if get_aval(x1).dtype.kind == "b":
        raise DTypeError("gcd needs integers, got bool")
    return _euclid(abs(x1), abs(x2))


def lcm(x1: Any, x2: Any) -> Any:
    """Least common multiple of ``|x1|`` and ``|x2|`` (0 where either is 0).

    >>> import funcgrad.numpy as fnp
    >>> fnp.lcm(fnp.array([4, 0]), 6).tolist()
    [12, 0]
    """
    check_arraylike("lcm", x1, x2)
    x1, x2 = broadcast_args(*_integers("lcm", x1, x2), keep_scalars=False)
    if get_aval(x1).dtype.kind == "b":
        raise DTypeError("lcm needs integers, got bool")
    d = gcd(x1, x2)
    zero = equal(d, 0)
    return where(zero, 0, abs(multiply(x1, floor_divide(x2, where(zero, 1, d)))))


def heaviside(x1: Any, x2: Any, /) -> Any:
    """Step function: 0 below zero, 1 above, ``x2`` at zero.

    >>> import funcgrad.numpy as fnp
    >>> fnp.heaviside(fnp.array([-1.0, 0.0, 2.0]), 0.5).tolist()
    [0.0, 0.5, 1.0]
    """
    check_arraylike("heaviside", x1, x2)
    x1, x2 = broadcast_args(*promote_inexact(x1, x2), keep_scalars=False)
    out = where(less(x1, 0), 0, where(greater(x1, 0), 1, where(isnan(x1), x1, x2)))
    # As JAX: its 0 and 1 are strong NumPy constants, leaving only 0-d results weak.
    return _strong_if_array(out)


def i0(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 0: ``exp(|x|) * i0e(x)``.

    >>> import funcgrad.numpy as fnp
    >>> round(float(fnp.i0(0.0)), 6)
    1.0
    """
    check_arraylike("i0", x)
    (x,) = _real_inexact("i0", x)
    # |x| as x * sign(x): its slope at 0 is 0, so i0'(0) = i1(0) = 0 as in JAX.
    return multiply(exp(multiply(x, E.sign(x))), bessel_i0e(x))


def _posneg_inf(x: Any, sign: float) -> Any:
    x = _promote_one(x)
    dt = get_aval(x).dtype
    if dt.kind == "c":
        raise DTypeError("isposinf/isneginf are not well defined for complex types")
    # (Strongly typed, as JAX's comparison with a typed infinity.)
    if dtypes.kind(dt) != "f":
        return _full_bool(x, False)
    return equal(x, np.asarray(sign * np.inf, dt))


def isposinf(x: Any, /, out: Any = None) -> Any:
    """True where ``+inf``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.isposinf(fnp.array([fnp.inf, -fnp.inf])).tolist()
    [True, False]
    """
    check_arraylike("isposinf", x)
    return _posneg_inf(x, 1.0)


def isneginf(x: Any, /, out: Any = None) -> Any:
    """True where ``-inf``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.isneginf(fnp.array([fnp.inf, -fnp.inf])).tolist()
    [False, True]
    """
    check_arraylike("isneginf", x)
    return _posneg_inf(x, -1.0)


_INT_OF_WIDTH: dict[int, Any] = {16: dtypes.int16, 32: dtypes.int32, 64: dtypes.int64}


def signbit(x: Any, /) -> Any:
    """True where the sign bit is set (so also for ``-0.0`` and negative NaNs).

    >>> import funcgrad.numpy as fnp
    >>> fnp.signbit(fnp.array([-0.0, 1.0, -2.0])).tolist()
    [True, False, True]
    """
    check_arraylike("signbit", x)
    x = _promote_one(x)
    dt = get_aval(x).dtype
    if dt.kind in "iu":
        # (Strong, as JAX's comparison with a typed zero.)
        return E.convert_element_type(less(x, np.asarray(0, dt)), np.bool_)
    if dt.kind == "b":
        return _full_bool(x, False)
    if dtypes.kind(dt) != "f":
        raise DTypeError(f"signbit is not well defined for {dt}")
    bits = B.bitcast_convert_type(x, _INT_OF_WIDTH[dt.itemsize * 8])
    return less(bits, 0)


def _finfo_bits(dt: np.dtype[Any]) -> tuple[int, int, int, float]:
    info = np.finfo(dt) if dt != dtypes.bfloat16 else _ml_finfo(dt)
    return int(info.nmant), int(info.nexp), int(info.minexp), float(info.tiny)


def _ml_finfo(dt: np.dtype[Any]) -> Any:
    import ml_dtypes  # noqa: PLC0415

    return ml_dtypes.finfo(dt)


def frexp(x: Any, /) -> tuple[Any, Any]:
    """Mantissa in ``[0.5, 1)`` and int32 exponent with ``x == m * 2**e``.

    >>> import funcgrad.numpy as fnp
    >>> m, e = fnp.frexp(fnp.array([8.0, 0.0]))
    >>> m.tolist(), e.tolist()
    ([0.5, 0.0], [4, 0])
    """
    check_arraylike("frexp", x)
    (x,) = _real_inexact("frexp", x)
    dt = get_aval(x).dtype
    nmant, nexp, minexp, tiny = _finfo_bits(dt)
    int_t = _INT_OF_WIDTH[dt.itemsize * 8]
    sub = less(abs(x), tiny)
    # Subnormals are scaled into the normal range first, as in JAX's _normalize_float.
    scaled = where(sub, multiply(x, float(1 << nmant)), x)
    x1 = B.bitcast_convert_type(E.stop_gradient(scaled), int_t)
    x2 = where(sub, np.asarray(-nmant, int_t), np.asarray(0, int_t))
    mask = (1 << nexp) - 1
    bias = 1 - minexp
    expo = bitwise_and(B.shift_right_arithmetic(x1, np.asarray(nmant, int_t)),
                        np.asarray(mask, int_t))
    x2 = add(x2, subtract(expo, np.asarray(bias - 1, int_t)))
    x1 = bitwise_and(x1, np.asarray(~(mask << nmant), int_t))
    x1 = bitwise_or(x1, np.asarray((bias - 1) << nmant, int_t))
    m = B.bitcast_convert_type(x1, dt)
    special = logical_or(logical_or(isinf(x), isnan(x)), equal(x, 0))
    e = cast(where(special, 0, x2), dtypes.int32)
    # The mantissa's derivative is x' * 2**-e (JAX's custom jvp); e is piecewise constant.
    # 2**-e overflows float32 for subnormal x (0 * inf = NaN), so it is applied in two halves.
    half = cast(E.neg(B.shift_right_arithmetic(e, np.asarray(1, np.int32))), dt)
    rest = cast(E.neg(subtract(e, B.shift_right_arithmetic(e, np.asarray(1, np.int32)))), dt)
    dx = multiply(multiply(subtract(x, E.stop_gradient(x)), E.stop_gradient(exp2(half))),
                  E.stop_gradient(exp2(rest)))
    m = add(E.stop_gradient(m), dx)
    return where(special, x, m), e


def ldexp(x1: Any, x2: Any, /) -> Any:
    """``x1 * 2**x2`` for integer ``x2`` (without overflow for small ``x1``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.ldexp(fnp.array([0.5, 3.0]), 2).tolist()
    [2.0, 12.0]
    """
    check_arraylike("ldexp", x1, x2)
    a1, a2 = asarray(x1), asarray(x2)
    d1 = dtypes.result_type(a1)
    d2 = dtypes.result_type(a2)
    if d1.kind == "c" or d2.kind in "fc":
        raise ValueError(f"ldexp not supported for input types {(d1, d2)}")  # JAX's type
    (a1,) = promote_inexact(a1)
    dt = get_aval(a1).dtype
    m, e = frexp(a1)
    e = cast(add(cast(e, get_aval(asarray(cast(a2, d2))).dtype), cast(a2, d2)), dt)
    m, e = broadcast_args(m, e, keep_scalars=False)
    m = where(greater(e, 0), multiply(m, 2.0), m)
    e = where(greater(e, 0), subtract(e, 1.0), e)
    out = multiply(m, exp2(e))
    a1b = broadcast_args(a1, out, keep_scalars=False)[0]
    return where(logical_or(isinf(a1b), equal(a1b, 0)), a1b, out)


def modf(x: Any, /, out: Any = None) -> tuple[Any, Any]:
    """Fractional and integral parts, both with the sign of ``x``.

    >>> import funcgrad.numpy as fnp
    >>> f, w = fnp.modf(fnp.array([-1.5, 2.25]))
    >>> f.tolist(), w.tolist()
    ([-0.5, 0.25], [-1.0, 2.0])
    """
    check_arraylike("modf", x)
    (x,) = promote_inexact(x)
    whole = where(greater_equal(x, 0), floor(x), ceil(x))
    return subtract(x, whole), whole


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable float after ``x1`` towards ``x2``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nextafter(fnp.float32(1.0), 2.0)) > 1.0
    True
    """
    check_arraylike("nextafter", x1, x2)
    x1, x2 = broadcast_args(*promote_inexact(x1, x2), keep_scalars=False)
    return _nextafter(x1, x2)


def spacing(x: Any, /) -> Any:
    """The distance from ``x`` to the next float away from zero (NumPy's ``spacing``).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.spacing(fnp.float32(1.0)))
    1.1920928955078125e-07
    """
    check_arraylike("spacing", x)
    (x,) = _real_inexact("spacing", x)
    dt = get_aval(x).dtype
    inf = np.asarray(np.inf, dt)
    if dt == dtypes.float16:
        return subtract(_nextafter(x, add(multiply(x, 0), inf)), x)
    result = subtract(_nextafter(x, copysign(inf, x)), x)
    smallest = (np.finfo(dt).smallest_subnormal if dt != dtypes.bfloat16
                else _ml_finfo(dt).smallest_subnormal)
    return where(equal(result, 0), copysign(np.asarray(smallest, dt), x), result)


def iscomplex(x: Any) -> Any:
    """True where the imaginary part is nonzero.

    >>> import funcgrad.numpy as fnp
    >>> fnp.iscomplex(fnp.array([1 + 1j, 2 + 0j])).tolist()
    [True, False]
    """
    return _real_part_test(not_equal, x)


def isreal(x: Any) -> Any:
    """True where the imaginary part is zero.

    >>> import funcgrad.numpy as fnp
    >>> fnp.isreal(fnp.array([1 + 1j, 2 + 0j])).tolist()
    [False, True]
    """
    return _real_part_test(equal, x)


def _real_part_test(compare: Any, x: Any) -> Any:
    # As JAX: lax.ne/eq of the imaginary part against a constant of its dtype, strong where
    # that part is (a boolean's imaginary part is a strong boolean), else weak only in 0-d.
    i = imag(x)
    aval = get_aval(i)
    out = compare(i, np.asarray(0, aval.dtype) if not aval.weak_type else 0)
    return _strong_if_array(out)


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (its values are not looked at).

    >>> import funcgrad.numpy as fnp
    >>> fnp.iscomplexobj(fnp.array([1.0 + 0j])), fnp.iscomplexobj(1.0)
    (True, False)
    """
    if x is None:
        return False
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.asarray(x).dtype
    return bool(np.dtype(dt).kind == "c")


def isrealobj(x: Any) -> bool:
    """Whether ``x`` does not have a complex dtype.

    >>> import funcgrad.numpy as fnp
    >>> fnp.isrealobj(fnp.ones(2))
    True
    """
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """True for Python/NumPy scalars and for rank-0 arrays (JAX's convention).

    >>> import funcgrad.numpy as fnp
    >>> fnp.isscalar(1.0), fnp.isscalar(fnp.array(2.0)), fnp.isscalar(fnp.ones(2))
    (True, True, False)
    """
    if hasattr(element, "__jax_array__"):
        element = element.__jax_array__()
    if dtypes.python_scalar(element) or np.isscalar(element):
        return not isinstance(element, (str, bytes))
    if isinstance(element, (np.ndarray, Tracer, ArrayImpl)):
        return get_aval(element).ndim == 0
    return False


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works (rank-0 arrays are not iterable).

    >>> import funcgrad.numpy as fnp
    >>> fnp.iterable([1, 2]), fnp.iterable(2)
    (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: bool = False) -> Any:
    """``|a - b| <= atol + rtol * |b|`` elementwise, with infinities equal to themselves.

    >>> import funcgrad.numpy as fnp
    >>> fnp.isclose(fnp.array([1.0, 2.0]), fnp.array([1.0 + 1e-9, 2.1])).tolist()
    [True, False]
    """
    check_arraylike("isclose", a, b)
    # JAX's formula, in the inexact type (integers are compared with their tolerances).
    a, b = promote_inexact(a, b)
    dt = get_aval(a).dtype
    a, b = broadcast_args(a, b, keep_scalars=False)
    real_t = np.dtype(np.finfo(dt).dtype) if dt.kind == "c" else dt
    rtol_ = cast(asarray(rtol), real_t) if not isinstance(rtol, (int, float)) else \
        np.asarray(rtol, real_t)
    atol_ = cast(asarray(atol), real_t) if not isinstance(atol, (int, float)) else \
        np.asarray(atol, real_t)
    in_range = less_equal(abs(subtract(a, b)), add(atol_, multiply(rtol_, abs(b))))
    out = logical_or(equal(a, b), logical_and(isfinite(b), in_range))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: bool = False) -> Any:
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`).

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.allclose(fnp.ones(3), 1.0))
    True
    """
    check_arraylike("allclose", a, b)
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """True when the shapes match and every element is equal.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.array_equal(fnp.ones(2), fnp.ones(2))), bool(fnp.array_equal(fnp.ones(2), 1))
    (True, False)
    """
    a1, a2 = asarray(a1), asarray(a2)
    if get_aval(a1).shape != get_aval(a2).shape:
        return asarray(np.asarray(False))
    a1, a2 = promote_args(a1, a2)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return _all(eq)


def array_equiv(a1: Any, a2: Any) -> Any:
    """True when ``a1`` and ``a2`` broadcast together and are equal everywhere.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.array_equiv(fnp.ones((2, 2)), fnp.ones(2)))
    True
    """
    a1, a2 = promote_args(a1, a2)
    try:
        np.broadcast_shapes(get_aval(a1).shape, get_aval(a2).shape)
    except ValueError:
        return asarray(np.asarray(False))
    return _all(equal(a1, a2))



__all__ = [
    "ComplexWarning", "acos", "acosh", "allclose", "array_equal", "array_equiv", "asin",
    "asinh", "atan", "atan2", "atanh", "bitwise_count", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift", "concat", "euler_gamma", "fabs", "fmax", "fmin", "frexp", "gcd",
    "heaviside", "i0", "iscomplex", "iscomplexobj", "isclose", "isneginf", "isposinf",
    "isreal", "isrealobj", "isscalar", "iterable", "lcm", "ldexp", "left_shift", "modf",
    "nextafter", "permute_dims", "pow", "right_shift", "signbit", "spacing",
]
