"""Elementwise functions of funcgrad.numpy, with NumPy's broadcasting and promotion.

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> fnp.add(np.ones((2, 1)), np.arange(3.0)).shape
(2, 3)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.core import Primitive, Tracer, get_aval
from funcgrad.numpy._core import (
    asarray,
    broadcast_args,
    cast,
    check_arraylike,
    promote_args,
    promote_inexact,
    requested_dtype,
)
from funcgrad.primitives import elementwise as E
from funcgrad.source_info import user_stacklevel


def _doc(name: str, what: str, example: str) -> str:
    return f"{what}\n\n>>> import funcgrad.numpy as fnp\n>>> {example}\n"


def _unary(name: str, prim: Primitive, what: str, *, inexact: bool = True,
           example_out: str = "") -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        if not (_is_value(x) and dtypes.is_inexact(get_aval(x).dtype)):
            check_arraylike(name, x)
            (x,) = promote_inexact(x) if inexact else promote_args(x)
        return prim.bind(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, what, f"fnp.{name}(0.5).shape\n()")
    return fn


def _binary(name: str, prim: Primitive, what: str, *, inexact: bool = False,
            example: str = "", error_name: str = "") -> Callable[[Any, Any], Any]:
    # error_name: the name JAX's list TypeError gives, where it is not the function's own
    # (jnp.divide reports "true_divide").
    def fn(x: Any, y: Any) -> Any:
        fast = _same_type_pair(x, y)
        if fast is not None:
            return prim.bind(*fast)
        check_arraylike(error_name or name, x, y)
        x, y = promote_inexact(x, y, names="xy") if inexact else promote_args(x, y, names="xy")
        x, y = broadcast_args(x, y, where=name)
        return prim.bind(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, what, example or f"fnp.{name}(fnp.ones(3), 2.0).shape\n(3,)")
    return fn


def array_api_alias(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` under an array API spelling of its name (``acos`` for ``arccos``): in JAX
    each is a function of its own, whose list TypeError gives that spelling.

    >>> import funcgrad.numpy as fnp
    >>> array_api_alias(fnp.arccos, "acos").__name__
    'acos'
    """
    def alias(*args: Any, **kwargs: Any) -> Any:
        check_arraylike(name, *args)
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = fn.__doc__
    return alias


def _is_value(x: Any) -> bool:
    return type(x) is ArrayImpl or isinstance(x, Tracer)


def _promote_one(x: Any) -> Any:
    """One operand as JAX's ``promote_args`` gives it: an Array, a lone Python number
    becoming a weakly typed one (a Python bool a strong one), so that functions that
    return their operand unchanged (``floor(3)``, ``real(2.5)``) give Arrays as JAX."""
    (x,) = promote_args(x)
    if dtypes.python_scalar(x):
        return cast(x, dtypes.scalar_kind_dtype(x), weak=type(x) is not bool)
    return x


def _strong_if_array(out: Any) -> Any:
    """JAX's result where it compares or selects against a strongly typed NumPy constant:
    weak only for 0-d results."""
    aval = get_aval(out)
    return E.convert_element_type(out, aval.dtype) if aval.weak_type and aval.ndim else out


def _full_bool(x: Any, value: bool) -> Any:
    """JAX's ``lax.full_like(x, value, dtype=bool)``: a strong boolean of ``x``'s shape."""
    from funcgrad.numpy._creation import full_like  # noqa: PLC0415

    return full_like(x, value, dtype=np.bool_)


# Larger Python ints take the slow path, which checks them against the default integer
# type first as JAX does (2**40 beside a float array overflows with 64-bit mode off).
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _same_type_pair(x: Any, y: Any) -> tuple[Any, Any] | None:
    """The common cases that need no promotion or broadcasting: two floating point arrays
    of one dtype and shape, or a strongly typed one and a Python number (which takes its
    dtype)."""
    if _is_value(x):
        ax = get_aval(x)
        if not dtypes.is_inexact(ax.dtype):
            return None
        if type(y) is float or type(y) is int and _INT32_MIN <= y <= _INT32_MAX:
            return (x, np.asarray(y, ax.dtype)) if not ax.weak_type else None
        if _is_value(y):
            ay = get_aval(y)
            if ay.dtype == ax.dtype and ay.shape == ax.shape and ay.weak_type == ax.weak_type:
                return x, y
        return None
    if (type(x) is float or type(x) is int and _INT32_MIN <= x <= _INT32_MAX) and _is_value(y):
        ay = get_aval(y)
        if dtypes.is_inexact(ay.dtype) and not ay.weak_type:
            return np.asarray(x, ay.dtype), y
    return None


# ------------------------------------------------------------------ unary

exp = _unary("exp", E.exp_p, "Exponential, elementwise.")
exp2 = _unary("exp2", E.exp2_p, "2**x, elementwise.")
expm1 = _unary("expm1", E.expm1_p, "exp(x) - 1, accurate near 0.")
log = _unary("log", E.log_p, "Natural logarithm, elementwise.")
log1p = _unary("log1p", E.log1p_p, "log(1 + x), accurate near 0.")
sqrt = _unary("sqrt", E.sqrt_p, "Square root, elementwise.")
cbrt = _unary("cbrt", E.cbrt_p, "Cube root, elementwise.")
sin = _unary("sin", E.sin_p, "Sine, elementwise.")
cos = _unary("cos", E.cos_p, "Cosine, elementwise.")
tan = _unary("tan", E.tan_p, "Tangent, elementwise.")
arcsin = _unary("arcsin", E.asin_p, "Inverse sine, elementwise.")
arccos = _unary("arccos", E.acos_p, "Inverse cosine, elementwise.")
arctan = _unary("arctan", E.atan_p, "Inverse tangent, elementwise.")
sinh = _unary("sinh", E.sinh_p, "Hyperbolic sine, elementwise.")
cosh = _unary("cosh", E.cosh_p, "Hyperbolic cosine, elementwise.")
tanh = _unary("tanh", E.tanh_p, "Hyperbolic tangent, elementwise.")
arcsinh = _unary("arcsinh", E.asinh_p, "Inverse hyperbolic sine, elementwise.")
arccosh = _unary("arccosh", E.acosh_p, "Inverse hyperbolic cosine, elementwise.")
arctanh = _unary("arctanh", E.atanh_p, "Inverse hyperbolic tangent, elementwise.")
negative = _unary("negative", E.neg_p, "-x, elementwise.", inexact=False)
sign = _unary("sign", E.sign_p, "Sign (-1, 0 or 1), elementwise.", inexact=False)
_absolute = _unary("absolute", E.abs_p, "|x|, elementwise.", inexact=False)
_isfinite = _unary("isfinite", E.is_finite_p, "True where finite.", inexact=False)


def absolute(x: Any) -> Any:
    """|x|, elementwise (booleans and unsigned integers are their own, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> fnp.absolute(fnp.array([-2, 3])).tolist()
    [2, 3]
    """
    if _is_value(x) and dtypes.is_inexact(get_aval(x).dtype):
        return E.abs_p.bind(x)
    check_arraylike("absolute", x)
    x = _promote_one(x)
    if get_aval(x).dtype.kind in "bu":
        return x
    return E.abs_p.bind(x)


abs = absolute  # noqa: A001 - NumPy's name


def isfinite(x: Any) -> Any:
    """True where finite (everywhere for integers and booleans, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> fnp.isfinite(fnp.array([1.0, fnp.inf])).tolist()
    [True, False]
    """
    if _is_value(x) and dtypes.is_inexact(get_aval(x).dtype):
        return _isfinite(x)
    check_arraylike("isfinite", x)
    x = _promote_one(x)
    if dtypes.is_inexact(get_aval(x).dtype):
        return _isfinite(x)
    return _full_bool(x, True)


def _float_or_same(prim: Primitive, name: str, what: str) -> Callable[[Any], Any]:
    # floor/ceil/round of integers are the integers themselves, as in NumPy.
    def fn(x: Any) -> Any:
        check_arraylike(name, x)
        x = _promote_one(x)
        if dtypes.is_integer(get_aval(x).dtype) or dtypes.is_bool(get_aval(x).dtype):
            return x
        return prim.bind(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, what, f"fnp.{name}(1.5).shape\n()")
    return fn


floor = _float_or_same(E.floor_p, "floor", "Largest integer <= x, elementwise.")
ceil = _float_or_same(E.ceil_p, "ceil", "Smallest integer >= x, elementwise.")


def rint(x: Any) -> Any:
    """Round to the nearest integer (halves to even); integers become floats, as in NumPy.

    >>> import funcgrad.numpy as fnp
    >>> fnp.rint(2.5).tolist()
    2.0
    """
    check_arraylike("rint", x)
    x = _promote_one(x)
    dt = get_aval(x).dtype
    if not dtypes.is_inexact(dt):
        # As JAX: booleans and integers become the (strong) default float.
        return E.convert_element_type(x, dtypes.default_float())
    if dt.kind == "c":
        return E.complex_(rint(E.real_p.bind(x)), rint(E.imag_p.bind(x)))
    return E.round_p.bind(x)


def round(x: Any, decimals: int = 0) -> Any:  # noqa: A001 - NumPy's name
    """Round to ``decimals`` places (halves to even, as NumPy).

    >>> import funcgrad.numpy as fnp
    >>> fnp.round(fnp.array([2.567, -0.5]), 2)
    Array([ 2.57, -0.5 ], dtype=float32)
    """
    check_arraylike("round", x)
    x = _promote_one(x)
    if get_aval(x).dtype == dtypes.bool_:
        raise ValueError("data type <class 'numpy.bool'> not inexact")
    if np.dtype(get_aval(x).dtype).kind == "c":
        # Each part rounded, as JAX rounds a complex number.
        return E.complex_(round(E.real_p.bind(x), decimals), round(E.imag_p.bind(x), decimals))
    if not dtypes.is_inexact(get_aval(x).dtype):
        if decimals >= 0:
            return x
        raise NotImplementedError("integer np.round not implemented for decimals < 0")
    if decimals == 0:
        return E.round_p.bind(x)
    dt = np.dtype(get_aval(x).dtype)
    if dt == np.float16:  # JAX rounds a half in float32 (its rescaling loses too much)
        return round(x.astype(np.float32), decimals).astype(np.float16)
    # JAX's jitted round divides by a constant, which XLA computes as a product with its
    # reciprocal (rounded in the dtype first); in bfloat16, which XLA's CPU computes in
    # float32, the quotient is float32's, rounded once.
    scale = np.asarray(10 ** decimals, dt)
    if dt == dtypes.bfloat16:
        scaled = E.round_p.bind(multiply(x, scale)).astype(np.float32)
        return E.div_p.bind(scaled, scale.astype(np.float32)).astype(dt)
    return E.mul_p.bind(E.round_p.bind(multiply(x, scale)), np.reciprocal(scale))


around = round


def trunc(x: Any) -> Any:
    """Round toward zero.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.trunc(-1.5))
    -1.0
    """
    check_arraylike("trunc", x)
    return where(less(x, 0), ceil(x), floor(x))


def positive(x: Any) -> Any:
    """+x (a copy of the value).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.positive(-1.0))
    -1.0
    """
    check_arraylike("positive", x)
    return _promote_one(x)


def square(x: Any) -> Any:
    """x*x, elementwise.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.square(3.0))
    9.0
    """
    check_arraylike("square", x)
    (x,) = promote_args(x)
    if get_aval(x).dtype.kind == "b":
        x = cast(x, np.dtype(np.int32))  # JAX squares booleans as int32 (x64 too)
    return E.integer_pow_p.bind(x, y=2)


def reciprocal(x: Any) -> Any:
    """1/x, elementwise (integers become the default float, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.reciprocal(4.0))
    0.25
    """
    check_arraylike("reciprocal", x)
    (x,) = promote_inexact(x)
    return E.integer_pow_p.bind(x, y=-1)


def isnan(x: Any) -> Any:
    """True where NaN.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.isnan(float("nan")))
    True
    """
    check_arraylike("isnan", x)
    (x,) = promote_args(x)
    return E.ne_p.bind(x, x)


def isinf(x: Any) -> Any:
    """True where +inf or -inf.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.isinf(float("inf")))
    True
    """
    check_arraylike("isinf", x)
    x = _promote_one(x)
    if not dtypes.is_inexact(get_aval(x).dtype):
        return _full_bool(x, False)
    out = logical_and(logical_not(isfinite(x)), logical_not(isnan(x)))
    return E.convert_element_type(out, np.bool_)  # strong: JAX compares with a typed inf


def logical_not(x: Any) -> Any:
    """Boolean negation.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.logical_not(0.0))
    True
    """
    check_arraylike("logical_not", x)
    return E.not_p.bind(_logical_bool(_promote_one(x)))


def invert(x: Any) -> Any:
    """Bitwise NOT (``~x``) of integers or booleans.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.invert(0))
    -1
    """
    check_arraylike("invert", x)
    (x,) = promote_args(x)
    return E.not_p.bind(x)


bitwise_not = array_api_alias(invert, "bitwise_not")


def _logical_bool(x: Any) -> Any:
    """JAX's ``_to_bool`` of the logical functions: ``x != 0`` against a NumPy constant,
    weak only for a weak 0-d ``x``."""
    if get_aval(x).dtype == dtypes.bool_:
        return x
    return _strong_if_array(not_equal(x, 0))


def _to_bool(x: Any) -> Any:
    x = asarray(x)
    if dtypes.python_scalar(x):
        return np.asarray(bool(x))
    if get_aval(x).dtype == dtypes.bool_:
        return x
    return not_equal(x, 0)


def deg2rad(x: Any) -> Any:
    """Degrees to radians.

    >>> import funcgrad.numpy as fnp
    >>> print(f"{float(fnp.deg2rad(180.0)):.4f}")
    3.1416
    """
    check_arraylike("deg2rad", x)
    return multiply(promote_inexact(x)[0], math.pi / 180.0)


radians = deg2rad


def rad2deg(x: Any) -> Any:
    """Radians to degrees.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.rad2deg(0.0))
    0.0
    """
    check_arraylike("rad2deg", x)
    return multiply(promote_inexact(x)[0], 180.0 / math.pi)


degrees = rad2deg


def log2(x: Any) -> Any:
    """Base-2 logarithm.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.log2(8.0))
    3.0
    """
    check_arraylike("log2", x)
    (x,) = promote_inexact(x)
    # As JAX: a strong log(2) of the real dtype (the result is never weak), and complex
    # divided part by part (so log2(0j) is -inf+0j, not -inf+nanj).
    dt = get_aval(x).dtype
    ln2 = log(np.array(2.0, dtype=np.finfo(dt).dtype))
    r = log(x)
    if dt.kind == "c":
        return E.complex_(divide(E.real_p.bind(r), ln2), divide(E.imag_p.bind(r), ln2))
    return divide(r, ln2)


def log10(x: Any) -> Any:
    """Base-10 logarithm.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.log10(100.0))
    2.0
    """
    check_arraylike("log10", x)
    (x,) = promote_inexact(x)
    # JAX multiplies by 1/log(10) rounded to the real dtype (not a division by log(10)),
    # part by part for complex: the last bit, and geomspace's rounding, follow from that.
    dt = get_aval(x).dtype
    one_over_log10 = np.array(0.4342944819032518, dtype=np.finfo(dt).dtype)
    r = log(x)
    if dt.kind == "c":
        return E.complex_(multiply(E.real_p.bind(r), one_over_log10),
                          multiply(E.imag_p.bind(r), one_over_log10))
    return multiply(r, one_over_log10)


def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), with sinc(0) = 1.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.sinc(0.0))
    1.0
    """
    check_arraylike("sinc", x)
    (x,) = promote_inexact(x)
    pix = multiply(x, math.pi)
    # Near 0 a Taylor polynomial (smooth to every order) replaces sin(t)/t.
    small = less(absolute(pix), 1e-3)
    safe = where(small, 1.0, pix)
    t2 = square(pix)
    taylor = add(subtract(1.0, divide(t2, 6.0)), divide(square(t2), 120.0))
    return where(small, taylor, divide(sin(safe), safe))


# ----------------------------------------------------------------- binary

add = _binary("add", E.add_p, "x + y with broadcasting.")
subtract = _binary("subtract", E.sub_p, "x - y with broadcasting.")
multiply = _binary("multiply", E.mul_p, "x * y with broadcasting.")
divide = _binary("divide", E.div_p, "True division x / y (integers give the default float).",
                 inexact=True, error_name="true_divide")


def true_divide(x1: Any, x2: Any, /) -> Any:
    """Alias of ``divide`` (its own function, named ``true_divide``, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.true_divide(3, 2))
    1.5
    """
    return divide(x1, x2)


floor_divide_int = _binary("floor_divide", E.div_p, "Floor division x // y.")
_remainder = _binary("remainder", E.rem_p, "Remainder with the sign of the divisor (a zero: the\n"
                      "dividend's, as JAX's).")


def remainder(x: Any, y: Any) -> Any:
    """Remainder with the sign of the divisor (a zero: the dividend's, as JAX's); booleans
    count as the default integer.

    >>> import funcgrad.numpy as fnp
    >>> fnp.remainder(fnp.array([-7, 7]), 3).tolist()
    [2, 1]
    """
    check_arraylike("remainder", x, y)
    return _remainder(*_numeric(*promote_args(x, y)))


mod = remainder
maximum = _binary("maximum", E.max_p, "Elementwise maximum (ties split the gradient).")
minimum = _binary("minimum", E.min_p, "Elementwise minimum (ties split the gradient).")
arctan2 = _binary("arctan2", E.atan2_p, "Angle of the point (x2, x1): atan2(x1, x2).",
                  inexact=True)
equal = _binary("equal", E.eq_p, "x == y, elementwise.")
not_equal = _binary("not_equal", E.ne_p, "x != y, elementwise.")
less = _binary("less", E.lt_p, "x < y, elementwise.")
less_equal = _binary("less_equal", E.le_p, "x <= y, elementwise.")
greater = _binary("greater", E.gt_p, "x > y, elementwise.")
greater_equal = _binary("greater_equal", E.ge_p, "x >= y, elementwise.")


def _is_complex(v: Any) -> bool:
    t = type(v)
    if t is float or t is int or t is bool:
        return False
    if t is complex:
        return True
    return bool(get_aval(v if _is_value(v) else asarray(v)).dtype.kind == "c")


def _lexicographic(base: Callable[[Any, Any], Any], strict: Primitive,
                   inclusive: Primitive) -> Callable[[Any, Any], Any]:
    """Order comparisons of complex numbers as JAX orders them: by real part, then by
    imaginary part."""
    def fn(x: Any, y: Any) -> Any:
        if not (_is_complex(x) or _is_complex(y)):
            return base(x, y)
        x, y = promote_args(x, y)
        x, y = broadcast_args(x, y, where=base.__name__)
        xr, xi, yr, yi = (E.real_p.bind(x), E.imag_p.bind(x), E.real_p.bind(y),
                          E.imag_p.bind(y))
        tie = E.and_p.bind(E.eq_p.bind(xr, yr), inclusive.bind(xi, yi))
        return E.or_p.bind(strict.bind(xr, yr), tie)

    fn.__name__ = fn.__qualname__ = base.__name__
    fn.__doc__ = base.__doc__
    return fn


less = _lexicographic(less, E.lt_p, E.lt_p)
less_equal = _lexicographic(less_equal, E.lt_p, E.le_p)
greater = _lexicographic(greater, E.gt_p, E.gt_p)
greater_equal = _lexicographic(greater_equal, E.gt_p, E.ge_p)


def _complex_extremum(base: Callable[[Any, Any], Any],
                      better: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """maximum/minimum of complex numbers in JAX's lexicographic order."""
    def fn(x: Any, y: Any) -> Any:
        if not (_is_complex(x) or _is_complex(y)):
            return base(x, y)
        x, y = promote_args(x, y)
        x, y = broadcast_args(x, y, where=base.__name__)
        return E.select(better(x, y), x, y)

    fn.__name__ = fn.__qualname__ = base.__name__
    fn.__doc__ = base.__doc__
    return fn


maximum = _complex_extremum(maximum, greater)
minimum = _complex_extremum(minimum, less)

bitwise_and = _binary("bitwise_and", E.and_p, "Bitwise AND of integers/booleans.",
                      example="fnp.bitwise_and(fnp.arange(4), 1).tolist()\n[0, 1, 0, 1]")
bitwise_or = _binary("bitwise_or", E.or_p, "Bitwise OR of integers/booleans.",
                     example="fnp.bitwise_or(fnp.arange(4), 1).tolist()\n[1, 1, 3, 3]")
bitwise_xor = _binary("bitwise_xor", E.xor_p, "Bitwise XOR of integers/booleans.",
                      example="fnp.bitwise_xor(fnp.arange(4), 1).tolist()\n[1, 0, 3, 2]")


def floor_divide(x: Any, y: Any) -> Any:
    """x // y (floors, like Python).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.floor_divide(-7.0, 2.0))
    -4.0
    """
    check_arraylike("floor_divide", x, y)
    x, y = promote_args(x, y)
    if dtypes.is_inexact(get_aval(x).dtype):
        return _float_floor_divide(x, y)
    x, y = _numeric(x, y)
    out = floor_divide_int(x, y)
    # x // 0 as JAX's: XLA's quotient by zero is all ones (-1), which JAX's floor then
    # lowers to -2 for a signed x other than 0 (NumPy gives 0). From out: its weak type.
    ones = subtract(multiply(out, 0), 1)
    at_zero = ones if get_aval(out).dtype.kind == "u" else where(
        not_equal(x, 0), subtract(ones, 1), ones)
    return where(equal(y, 0), at_zero, out)


def _numeric(*args: Any) -> tuple[Any, ...]:
    """Booleans (promoted together) as the default integer: JAX's promote_args_numeric,
    which its integer division, remainder and power apply (``True // True`` is 1)."""
    if all(get_aval(a).dtype == dtypes.bool_ for a in args):
        # (int32 with 64-bit mode on too: JAX's to_numeric_dtype.)
        return tuple(cast(a, np.dtype(np.int32), get_aval(a).weak_type) for a in args)
    return args


def _float_floor_divide(x: Any, y: Any) -> Any:
    # JAX's (CPython's float_divmod): the exact x - fmod(x, y) divided, one less where
    # fmod's sign is not the divisor's, rounded. floor(x / y) is not the same: x / y
    # rounds first (1.0 // 0.1 is 9, but x / y is 10.0).
    mod = _c_fmod(x, y)
    div = divide(where(equal(y, 0), x, subtract(x, mod)), y)
    off = logical_and(not_equal(mod, 0), not_equal(sign(y), sign(mod)))
    return E.round_(where(off, subtract(div, 1), div))


def _c_fmod(x: Any, y: Any) -> Any:
    """C's fmod of operands of one dtype, exactly (lax.rem, after broadcasting)."""
    fmod_fn = E.rem_p.lax_fn
    assert fmod_fn is not None
    return fmod_fn(*broadcast_args(x, y, where="fmod"))


def _concrete_int_exponent(y: Any) -> Any:
    """A concrete integer scalar exponent (Python bool or int, NumPy integer scalar, 0-d
    integer NumPy array or Array) as a Python int, as JAX's ``operator.index`` test reads
    it; anything else unchanged."""
    if isinstance(y, bool | np.integer):
        return int(y)
    if isinstance(y, (ArrayImpl, np.ndarray)) and y.ndim == 0 and y.dtype.kind in "iu":
        return int(y)
    return y


def _pow_int_int(x: Any, y: Any) -> Any:
    """JAX's integer power of integer exponents: binary exponentiation over the exponent's
    six low bits (read as unsigned), into a strongly typed accumulator. So ``2 ** -1`` is
    ``2 ** 63`` wrapped (0 in int32), ``1 ** -1`` is 1, ``0 ** -1`` is 0 and ``0 ** 0``
    is 1, as in JAX."""
    from funcgrad.primitives import bits as B  # noqa: PLC0415

    dt = get_aval(x).dtype
    zero, one = np.asarray(0, dt), np.asarray(1, dt)
    x, y = cast(x, dt), cast(y, dt)
    acc = where(logical_and(equal(x, zero), not_equal(y, zero)), zero, one)
    for _ in range(6):  # anything more would overflow for any base above 1
        acc = where(not_equal(bitwise_and(y, one), zero), multiply(acc, x), acc)
        x = multiply(x, x)
        y = B.shift_right_logical(y, one)
    return acc


def power(x: Any, y: Any) -> Any:
    """x ** y with broadcasting; small integer exponents use repeated multiplication.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.power(2.0, 3))
    8.0
    """
    check_arraylike("power", x, y)
    if type(y) is not int and type(y) is not float:
        y = _concrete_int_exponent(y)
    if type(y) is int:
        (x,) = _numeric(*promote_args(x))
        return E.integer_pow_p.bind(x, y=y)
    xp, yp = _numeric(*promote_args(x, y, names="xy"))
    xa = get_aval(xp)
    if xa.dtype.kind in "iu":
        return _pow_int_int(*broadcast_args(xp, yp, keep_scalars=False, where="power"))
    if get_aval(y).dtype.kind in "iu" and dtypes.is_inexact(get_aval(x).dtype):
        # JAX: lax.pow of the unpromoted operands, so the derivative at a zero exponent
        # is 0 (not NaN) where the base is 0.
        return E._lax_pow(*broadcast_args(x, y, where="power"))
    return E.pow_p.bind(*broadcast_args(xp, yp, where="power"))


def float_power(x: Any, y: Any) -> Any:
    """x ** y in the inexact type the arguments promote to (JAX's rule, not NumPy's
    always-float64: float32 arguments give float32).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.float_power(2, 0.5)) > 1.41
    True
    """
    check_arraylike("float_power", x, y)
    return power(*promote_inexact(x, y))


def fmod(x: Any, y: Any) -> Any:
    """The remainder of division with the sign of the dividend (C's fmod).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.fmod(-7.0, 2.0))
    -1.0
    """
    check_arraylike("fmod", x, y)
    x, y = promote_args(x, y)
    if dtypes.is_inexact(get_aval(x).dtype):
        return _c_fmod(x, y)
    if get_aval(x).dtype == dtypes.bool_:
        # As JAX: booleans skip its integer guard against a zero divisor, and XLA's
        # remainder by zero is the dividend (fmod(True, False) is 1).
        x, y = _numeric(x, y)
        return where(equal(y, 0), x, fmod(x, where(equal(y, 0), 1, y)))
    r = remainder(x, y)
    wrong_side = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(x, 0)))
    return where(wrong_side, subtract(r, y), r)


def divmod(x: Any, y: Any) -> tuple[Any, Any]:  # noqa: A001 - NumPy's name
    """``(x // y, x % y)``.

    >>> import funcgrad.numpy as fnp
    >>> [float(v) for v in fnp.divmod(7.0, 2.0)]
    [3.0, 1.0]
    """
    check_arraylike("divmod", x, y)
    return floor_divide(x, y), remainder(x, y)


def conjugate(x: Any) -> Any:
    """The complex conjugate (the value itself for real arrays).

    >>> import funcgrad.numpy as fnp
    >>> fnp.conjugate(fnp.array([1 + 2j])).tolist()
    [(1-2j)]
    """
    check_arraylike("conjugate", x)
    x = _promote_one(x)
    return E.conj(x) if get_aval(x).dtype.kind == "c" else x


conj = conjugate


def real(x: Any) -> Any:
    """The real part (the value itself for real arrays).

    >>> import funcgrad.numpy as fnp
    >>> fnp.real(fnp.array([1 + 2j])).tolist()
    [1.0]
    """
    check_arraylike("real", x)
    x = _promote_one(x)
    return E.real(x) if get_aval(x).dtype.kind == "c" else x


def imag(x: Any) -> Any:
    """The imaginary part (zeros for real arrays).

    >>> import funcgrad.numpy as fnp
    >>> fnp.imag(fnp.array([1 + 2j])).tolist()
    [2.0]
    """
    check_arraylike("imag", x)
    from funcgrad.numpy._creation import zeros_like  # noqa: PLC0415

    (x,) = promote_args(x)
    return E.imag(x) if get_aval(x).dtype.kind == "c" else zeros_like(x)


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of complex numbers, in radians (degrees with ``deg``); 0 or pi for
    real ones.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.angle(1j, deg=True))
    90.0
    """
    check_arraylike("angle", z)
    (z,) = promote_args(z)
    re, im = real(z), imag(z)
    dt = get_aval(re).dtype
    if not dtypes.is_inexact(dt) or (dtypes.is_float(get_aval(z).dtype)
                                     and get_aval(z).ndim == 0):
        # As JAX: integers, and real scalars, give the default float type.
        dt = dtypes.default_float()
        re, im = cast(re, dt), cast(im, dt)
    out = E.atan2_p.bind(im, re)
    return multiply(out, 180.0 / np.pi) if deg else out


def _logical(name: str, prim: Primitive) -> Callable[[Any, Any], Any]:
    def fn(x: Any, y: Any) -> Any:
        check_arraylike(name, x, y)
        # As JAX: promoted first, then each made boolean (weak operands give a weak result).
        x, y = promote_args(x, y)
        x, y = broadcast_args(_logical_bool(_promote_one(x)), _logical_bool(_promote_one(y)))
        return prim.bind(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = _doc(name, f"Elementwise logical {name[8:].upper()} of truth values.",
                      f"fnp.{name}(fnp.array([True]), fnp.array([True])).dtype\ndtype('bool')")
    return fn


logical_and = _logical("logical_and", E.and_p)
logical_or = _logical("logical_or", E.or_p)
logical_xor = _logical("logical_xor", E.xor_p)


def hypot(x: Any, y: Any) -> Any:
    """sqrt(x**2 + y**2), elementwise.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.hypot(3.0, 4.0))
    5.0
    """
    check_arraylike("hypot", x, y)
    # As JAX: the larger magnitude times sqrt(1 + ratio^2) (no overflow), and at the
    # origin the derivative splits evenly between the two (0.5 each), not NaN.
    x, y = promote_inexact(x, y)
    x, y = absolute(x), absolute(y)
    hi, lo = maximum(x, y), minimum(x, y)
    zero = equal(hi, 0)
    safe = where(zero, 1, hi)
    out = where(zero, hi, multiply(hi, sqrt(add(1, square(divide(lo, safe))))))
    inf = logical_or(logical_and(isinf(x), greater(x, 0)), logical_and(isinf(y), greater(y, 0)))
    out = where(inf, np.inf, out)
    aval = get_aval(out)
    # As JAX: its infinity is a strong NumPy constant, which keeps a weak type only for
    # scalar results (weak arrays of one or more axes give strong results).
    return E.convert_element_type(out, aval.dtype) if aval.weak_type and aval.ndim else out


def logaddexp(x: Any, y: Any) -> Any:
    """log(exp(x) + exp(y)) without overflow or cancellation (``logaddexp(0, -40)`` is
    4.2e-18, not 0).

    >>> import funcgrad.numpy as fnp
    >>> print(f"{float(fnp.logaddexp(0.0, 0.0)):.4f}")
    0.6931
    """
    check_arraylike("logaddexp", x, y)
    x, y = promote_inexact(x, y)
    x, y = broadcast_args(x, y, where="logaddexp")
    return _logaddexp_e(x, y)


def _log_add(x: Any, y: Any, base2: bool) -> Any:
    """log_b(b^x + b^y) as m + log1p_b(expm1_b(x - m) + b^(y - m)) with x the larger
    (per element), m = max held constant for differentiation: exact when the terms are far
    apart (``logaddexp(0, -40)`` is 4.2e-18), and every derivative is that of
    log(b^x + b^y) (the shift cancels)."""
    from funcgrad.primitives.elementwise import stop_gradient  # noqa: PLC0415

    m = stop_gradient(maximum(x, y))
    m = where(isfinite(m), m, 0.0)
    ln2 = math.log(2.0)

    def tail(big: Any, small: Any) -> Any:
        if base2:
            # 2^t - 1 = expm1(t ln 2); log2(1 + u) = log1p(u) / ln 2.
            u = add(expm1(multiply(subtract(big, m), ln2)), exp2(subtract(small, m)))
            return divide(log1p(u), ln2)
        return log1p(add(expm1(subtract(big, m)), exp(subtract(small, m))))

    out = add(m, where(greater_equal(x, y), tail(x, y), tail(y, x)))
    both_inf = logical_and(equal(x, y), logical_not(isfinite(x)))
    return where(both_inf, x, out)


def _logaddexp_e(x: Any, y: Any) -> Any:
    return _log_add(x, y, False)


def _logaddexp_2(x: Any, y: Any) -> Any:
    return _log_add(x, y, True)


def logaddexp2(x: Any, y: Any) -> Any:
    """log2(2**x + 2**y) without overflow or cancellation.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.logaddexp2(1.0, 1.0))
    2.0
    """
    check_arraylike("logaddexp2", x, y)
    x, y = promote_inexact(x, y)
    x, y = broadcast_args(x, y, where="logaddexp2")
    return _strong_if_array(_logaddexp_2(x, y))


def copysign(x: Any, y: Any) -> Any:
    """|x| with the sign of y.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.copysign(2.0, -1.0))
    -2.0
    """
    check_arraylike("copysign", x, y)
    from funcgrad.numpy._ufuncs_extra import signbit  # noqa: PLC0415 - it imports this module

    x, y = promote_inexact(x, y)
    # The sign bit, as NumPy and JAX read it: -0.0 and negative NaNs count as negative.
    return where(signbit(y), negative(absolute(x)), absolute(x))


# ------------------------------------------------------------ where / clip


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """``x`` where ``condition`` else ``y``, with broadcasting; with ``condition`` alone, the
    indices of its non-zeros (``nonzero``: under ``jit`` give a static ``size=``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.where(fnp.array([True, False]), 1.0, 2.0).tolist()
    [1.0, 2.0]
    >>> fnp.where(fnp.array([0, 3, 0, 5]) > 0, size=3, fill_value=-1)
    (Array([ 1,  3, -1], dtype=int32),)
    """
    if x is None and y is None:
        from funcgrad.numpy._setops import nonzero  # noqa: PLC0415

        check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    # JAX names the first argument that is missing or a list.
    for position, v in enumerate((condition, x, y)):
        if v is None:
            raise TypeError("where requires ndarray or scalar arguments, got <class "
                            f"'NoneType'> at position {position}.")
        if isinstance(v, (list, tuple)):
            check_arraylike("where", condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value arguments cannot be used in three-term where "
                         "function.")
    cond = _to_bool(condition)
    x, y = promote_args(x, y)
    cond, x, y = broadcast_args(cond, x, y, keep_scalars=False)
    return E.select_p.bind(cond, x, y)


def clip(arr: Any = None, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Limit values to ``[min, max]`` (either may be None), JAX's signature.

    >>> import funcgrad.numpy as fnp
    >>> fnp.clip(fnp.array([-2.0, 0.5, 3.0]), min=-1, max=1).tolist()
    [-1.0, 0.5, 1.0]
    """
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    out = _promote_one(arr)
    if any(v is not None and get_aval(asarray(v)).dtype.kind == "c" for v in (out, min, max)):
        # As JAX: complex numbers have no order to clip by (maximum's lexicographic order
        # would silently mix real and imaginary parts).
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the real "
                         "or imaginary components via funcgrad.numpy.real/imag respectively.")
    # JAX takes maximum(min, arr) and minimum(max, ...): a list bound is at position 0.
    check_arraylike("maximum", min)
    check_arraylike("minimum", max)
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


def nan_to_num(x: Any, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """Replace NaN and infinities by finite numbers.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.nan_to_num(float("nan")))
    0.0
    """
    check_arraylike("nan_to_num", x)
    x = _promote_one(x)
    dt = get_aval(x).dtype
    if not dtypes.is_inexact(dt):
        return x
    info = np.finfo(dt)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    # The replacements take x's dtype (a float64 or a list of them leaves float32 x float32),
    # as in JAX.
    out = where(isnan(x), cast(asarray(nan), dt), x)
    out = where(equal(out, np.inf), cast(asarray(posinf), dt), out)
    return where(equal(out, -np.inf), cast(asarray(neginf), dt), out)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (``copy`` changes nothing: arrays are immutable; on
    ``device`` when given).

    >>> import funcgrad.numpy as fnp
    >>> fnp.astype(fnp.array([1.7]), "int32").dtype
    dtype('int32')
    """
    check_arraylike("astype", x)
    x = asarray(x)
    if device is not None:
        return x.astype(dtype, device=device)
    dt = requested_dtype(dtype, "astype")
    if dtypes.python_scalar(x):
        return cast(x, dt)
    if get_aval(x).dtype.kind == "c" and dt.kind != "c":
        if dt.kind == "b":
            # Nonzero, as JAX's astype (the real part alone would drop 1j).
            return E.ne(x, 0)
        # JAX's own deprecation warning here, not the ComplexWarning of a conversion.
        warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                      "Please first use jnp.real or jnp.imag to take the real/imaginary "
                      "component of your input.", DeprecationWarning,
                      stacklevel=user_stacklevel())
        x = E.real_p.bind(x)
    return E.convert_element_type(x, dt)

