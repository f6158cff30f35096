"""Elementwise primitives: math, comparisons, logic, select and dtype conversion.

>>> import numpy as np
>>> from funcgrad.primitives.elementwise import mul
>>> mul(np.array([2.0]), 3.0)
Array([6.], dtype=float64)
"""

from __future__ import annotations

import enum
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from funcgrad import dtypes
from funcgrad.config import config
from funcgrad.core import PRIMITIVES, Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import (
    FLOAT,
    INTEGRAL,
    NUMBER,
    binary,
    default_typed,
    elementwise_batch,
    full,
    instantiate,
    later,
    linear,
    place_like,
    require_kind,
    same_shape_dtype,
    scalar_as,
    unary,
    unbroadcast,
)

# ------------------------------------------------------------ wrappers


def _scalar_to(x: Any, like: Any, broadcast: bool = False) -> Any:
    """A Python scalar beside an array takes the array's dtype (and shape if asked)."""
    if dtypes.python_scalar(x):
        aval = get_aval(like)
        return scalar_as(x, aval.dtype, aval.shape if broadcast else ())
    return x


def _bin(prim: Primitive, x: Any, y: Any) -> Any:
    if type(x) in _NUMBERS and type(y) in _NUMBERS:
        # Two Python numbers (a rule on a Python primal): the one of the higher kind
        # becomes a weakly typed array of its default dtype, and the other follows it.
        if _NUMBERS.index(type(x)) >= _NUMBERS.index(type(y)):
            x = default_typed(x)
        else:
            y = default_typed(y)
    if type(x) in _NUMBERS or type(y) in _NUMBERS:
        return prim.bind(_scalar_to(x, y), _scalar_to(y, x))
    return prim.bind(x, y)


_NUMBERS = (bool, int, float, complex)


def add(x: Any, y: Any) -> Any:
    return _bin(add_p, x, y)


def sub(x: Any, y: Any) -> Any:
    return _bin(sub_p, x, y)


def mul(x: Any, y: Any) -> Any:
    return _bin(mul_p, x, y)


def div(x: Any, y: Any) -> Any:
    return _bin(div_p, x, y)


def max_(x: Any, y: Any) -> Any:
    return _bin(max_p, x, y)


def min_(x: Any, y: Any) -> Any:
    return _bin(min_p, x, y)


def pow_(x: Any, y: Any) -> Any:
    return _bin(pow_p, x, y)


def eq(x: Any, y: Any) -> Any:
    return _bin(eq_p, x, y)


def ne(x: Any, y: Any) -> Any:
    return _bin(ne_p, x, y)


def lt(x: Any, y: Any) -> Any:
    return _bin(lt_p, x, y)


def le(x: Any, y: Any) -> Any:
    return _bin(le_p, x, y)


def gt(x: Any, y: Any) -> Any:
    return _bin(gt_p, x, y)


def ge(x: Any, y: Any) -> Any:
    return _bin(ge_p, x, y)


def neg(x: Any) -> Any:
    return neg_p.bind(x)


def exp(x: Any) -> Any:
    return exp_p.bind(x)


def log(x: Any) -> Any:
    return log_p.bind(x)


def sin(x: Any) -> Any:
    return sin_p.bind(x)


def cos(x: Any) -> Any:
    return cos_p.bind(x)


def sqrt(x: Any) -> Any:
    return sqrt_p.bind(x)


def rsqrt(x: Any) -> Any:
    return rsqrt_p.bind(x)


def sign(x: Any) -> Any:
    return sign_p.bind(x)


def square(x: Any) -> Any:
    return integer_pow_p.bind(x, y=2)


def reciprocal(x: Any) -> Any:
    return integer_pow_p.bind(x, y=-1)


def integer_pow(x: Any, y: int) -> Any:
    return integer_pow_p.bind(x, y=int(y))


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` else ``on_false`` (equal shapes, no broadcasting)."""
    on_true = _scalar_to(on_true, on_false, broadcast=True)
    on_false = _scalar_to(on_false, on_true, broadcast=True)
    return select_p.bind(pred, on_true, on_false)


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    dt = dtypes.canonicalize(new_dtype)
    aval = get_aval(x)
    if aval.dtype == dt and aval.weak_type == weak_type:
        return x
    if aval.dtype.kind == "c" and dt.kind != "c":
        # As JAX: the real part is converted (warning that the imaginary part is dropped).
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=2)
        x = real_p.bind(x)
        if get_aval(x).dtype == dt and aval.weak_type == weak_type:
            return x
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=bool(weak_type))


def _recip(x: Any) -> Any:
    return integer_pow_p.bind(x, y=-1)


# ------------------------------------------------------- unary primitives

neg_p = unary("neg", "negative", kinds=NUMBER, cuda="(-{0})", torch="neg")
linear(neg_p, lambda ct, primals, ans: [neg(ct)])

sign_p = unary("sign", "sign", kinds=NUMBER, zero_derivative=True, cuda="fg_sign({0})",
               torch="sign")
floor_p = unary("floor", "floor", kinds="f", zero_derivative=True, cuda="floor({0})", torch="floor")
ceil_p = unary("ceil", "ceil", kinds="f", zero_derivative=True, cuda="ceil({0})", torch="ceil")
round_p = unary("round", "round", kinds="f", zero_derivative=True, cuda="rint({0})", torch="round",
                py="np.rint({0})")
is_finite_p = unary("is_finite", "isfinite", kinds=NUMBER, result_dtype=dtypes.bool_,
                    zero_derivative=True, torch="isfinite",
                    cuda=lambda eqn, args, t: "true" if _kind(eqn) in "biu" else
                    f"isfinite({args[0]})")
not_p = unary("not", lambda xp, x: xp.invert(x), kinds=INTEGRAL, zero_derivative=True,
              lax="bitwise_not", torch="bitwise_not", py="np.invert({0})",
              cuda=lambda eqn, args, t: f"(!{args[0]})" if _kind(eqn) == "b" else f"(~{args[0]})")

exp_p = unary("exp", "exp", lambda x, ans: ans, reads="y", cuda="exp({0})", torch="exp")
exp2_p = unary("exp2", "exp2", lambda x, ans: mul(ans, math.log(2.0)), reads="y",
               cuda="exp2({0})", torch="exp2")
log_p = unary("log", "log", lambda x, ans: _recip(x), cuda="log({0})", torch="log")
log1p_p = unary("log1p", "log1p", lambda x, ans: _recip(add(x, 1.0)),
                cuda="log1p({0})", torch="log1p")
expm1_p = unary("expm1", "expm1", lambda x, ans: add(ans, 1.0), reads="y",
                cuda="expm1({0})", torch="expm1")
sin_p = unary("sin", "sin", lambda x, ans: cos(x), cuda="sin({0})", torch="sin")
cos_p = unary("cos", "cos", lambda x, ans: neg(sin(x)), cuda="cos({0})", torch="cos")
tan_p = unary("tan", "tan", lambda x, ans: add(square(ans), 1.0), reads="y",
              cuda="tan({0})", torch="tan")
asin_p = unary("asin", "arcsin", lambda x, ans: rsqrt(sub(1.0, square(x))),
               cuda="asin({0})", torch="asin")
acos_p = unary("acos", "arccos", lambda x, ans: neg(rsqrt(sub(1.0, square(x)))),
               cuda="acos({0})", torch="acos")
atan_p = unary("atan", "arctan", lambda x, ans: _recip(add(square(x), 1.0)),
               cuda="atan({0})", torch="atan")
sinh_p = unary("sinh", "sinh", lambda x, ans: PRIMITIVES["cosh"].bind(x),
               cuda="sinh({0})", torch="sinh")
cosh_p = unary("cosh", "cosh", lambda x, ans: PRIMITIVES["sinh"].bind(x),
               cuda="cosh({0})", torch="cosh")
tanh_p = unary("tanh", "tanh", lambda x, ans: sub(1.0, square(ans)), reads="y",
               cuda="tanh({0})", torch="tanh")
asinh_p = unary("asinh", "arcsinh", lambda x, ans: rsqrt(add(square(x), 1.0)),
                cuda="asinh({0})", torch="asinh")
acosh_p = unary("acosh", "arccosh",
                lambda x, ans: rsqrt(mul(sub(x, 1.0), add(x, 1.0))),
                cuda="acosh({0})", torch="acosh")
atanh_p = unary("atanh", "arctanh", lambda x, ans: _recip(sub(1.0, square(x))),
                cuda="atanh({0})", torch="atanh")
sqrt_p = unary("sqrt", "sqrt", lambda x, ans: div(full(get_aval(ans).shape, 0.5,
                                                       get_aval(ans).dtype), ans), reads="y",
                                                       cuda="sqrt({0})", torch="sqrt")
def _rsqrt_impl(xp: Any, x: Any) -> Any:
    if x.dtype.itemsize == 2 and x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        # A half computed in float32 and rounded once, as XLA and PyTorch round it (a
        # rounded sqrt then a rounded division is off by one step on a quarter of inputs).
        return (1 / xp.sqrt(x.astype(np.float32))).astype(x.dtype)
    return 1 / xp.sqrt(x)


rsqrt_p = unary("rsqrt", _rsqrt_impl,
                lambda x, ans: mul(div(ans, x), -0.5), reads="x,y",
                cuda="(({T})1 / sqrt({0}))", torch="rsqrt", py="({T}(1) / np.sqrt({0}))")
cbrt_p = unary("cbrt", "cbrt", lambda x, ans: div(ans, mul(x, 3.0)), kinds="f", reads="x,y",
               cuda="cbrt({0})", torch=None)
def _abs_slope(x: Any) -> Any:
    # JAX's derivative of |x|: +1 for x >= 0 (so 1 at 0), -1 below.
    a = get_aval(x)
    one = full(a.shape, 1, a.dtype)
    return select(ge(x, 0.0), one, neg(one))


abs_p = unary("abs", "abs", lambda x, ans: _abs_slope(x), kinds=NUMBER, torch="abs",
              cuda=lambda eqn, args, t: f"fabs({args[0]})" if _kind(eqn) == "f" else
              f"({args[0]} < 0 ? -{args[0]} : {args[0]})")
logistic_p = unary("logistic", lambda xp, x: _logistic(xp, x),
                   lambda x, ans: mul(ans, sub(1.0, ans)), reads="y",
                   cuda="fg_logistic({0})", torch="sigmoid",
                   py="(({T}(1) if {0} >= 0 else np.exp(-np.abs({0}))) / "
                      "({T}(1) + np.exp(-np.abs({0}))))")

class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties (JAX's ``lax.RoundingMethod``): ``AWAY_FROM_ZERO``
    (lax.round's default) or ``TO_NEAREST_EVEN`` (``round_p``, NumPy's ``rint``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round_(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """``jax.lax.round``: to the nearest integer, ties away from zero unless
    ``rounding_method`` is ``RoundingMethod.TO_NEAREST_EVEN`` (round_p's own rule).

    >>> import numpy as np
    >>> round_(np.array([0.5, 2.5, -0.5], np.float32)).tolist()
    [1.0, 3.0, -1.0]
    """
    method = RoundingMethod(rounding_method)
    dt = dtypes.canonicalize_dtype(get_aval(x).dtype)
    if not dtypes.is_float(dt):
        raise DTypeError(f"round does not accept dtype {dt}. Accepted dtypes are subtypes of "
                         "floating.")
    if method is RoundingMethod.TO_NEAREST_EVEN:
        return round_p.bind(x)
    finite = is_finite_p.bind(x)
    xf = select(finite, x, 0.0)  # inf and NaN pass through, untouched by the arithmetic
    a = abs_p.bind(xf)
    whole = floor_p.bind(a)  # a - whole is exact: the fraction decides the tie
    r = select(ge(sub(a, whole), 0.5), add(whole, 1.0), whole)
    out = select(lt(xf, 0.0), neg(r), r)
    # A result of zero keeps x's sign (-0.3 and -0.0 give -0.0), as XLA's round does.
    out = select(finite, select(eq(r, 0.0), mul(xf, 0.0), out), x)
    # The constants above are strong: a weakly typed x gives a weak result, as in JAX.
    return convert_element_type(out, dt, weak_type=True) if get_aval(x).weak_type else out


round_p.lax_fn = round_


def _special(fn: str) -> Any:
    """An elementwise function of SciPy's special module (CuPy's for device arrays)."""
    def impl(xp: Any, x: Any) -> Any:
        if xp is np:
            import scipy.special  # noqa: PLC0415 - only when first used

            return getattr(scipy.special, fn)(x).astype(x.dtype, copy=False)
        import cupyx.scipy.special  # noqa: PLC0415

        return getattr(cupyx.scipy.special, fn)(x).astype(x.dtype, copy=False)

    return impl


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
erf_p = unary("erf", _special("erf"),
              lambda x, ans: mul(exp(neg(square(x))), _TWO_OVER_SQRT_PI), kinds="f",
              cuda="erf({0})", torch="erf", py="math.erf({0})")
erfc_p = unary("erfc", _special("erfc"),
               lambda x, ans: mul(exp(neg(square(x))), -_TWO_OVER_SQRT_PI), kinds="f",
               cuda="erfc({0})", torch="erfc", py="math.erfc({0})")


def erf(x: Any) -> Any:
    return erf_p.bind(x)


def erfc(x: Any) -> Any:
    return erfc_p.bind(x)


def _kind(eqn: Any) -> str:
    """The dtype kind of an equation's first operand (CUDA expressions depend on it)."""
    return str(eqn.inputs[0].aval.dtype.kind)


def _logistic(xp: Any, x: Any) -> Any:
    # With e = exp(-|x|) <= 1 nothing overflows, and the tail for negative x keeps its
    # relative precision (1 - something tiny would round to 0).
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def power_by_squaring(x: Any, n: int, mul_: Callable[[Any, Any], Any]) -> Any:
    """``x ** n`` (n >= 1) by squaring with the product ``mul_``, in XLA's order (JAX's
    lowering of integer_pow; matrix powers too): ``x ** 3`` is ``x * (x * x)``, ``x ** 4``
    is ``(x * x) * (x * x)``.

    >>> power_by_squaring(3, 5, lambda a, b: a * b)
    243
    """
    acc = None
    while n:
        if n & 1:
            acc = x if acc is None else mul_(acc, x)
        n >>= 1
        if n:
            x = mul_(x, x)
    return acc


def _integer_pow_impl(xp: Any, x: Any, *, y: int) -> Any:
    # JAX's values bit for bit: products by squaring (not libm's pow, which rounds once),
    # a negative power the reciprocal of the positive one.
    if y < 0 and x.dtype.kind in "iu":
        raise DTypeError("Integers cannot be raised to negative powers")
    if y == 0:
        return xp.ones_like(x)
    if y in (1, -1):
        return x.copy() if y == 1 else xp.true_divide(xp.ones((), x.dtype), x)
    fresh: set[int] = set()  # products made here, which may be overwritten

    def mul_(a: Any, b: Any) -> Any:
        # In place into a product of our own (not the input, not the other operand when
        # they are one array): a high power allocates once, not once per product.
        out = a if id(a) in fresh and a is not b and np.ndim(a) else None
        r = xp.multiply(a, b, out=out)
        fresh.add(id(r))
        return r

    out = power_by_squaring(x, abs(y), mul_)
    if y > 0:
        return out
    mine = id(out) in fresh and np.ndim(out)  # (a 0-d product is a NumPy scalar)
    return xp.true_divide(xp.ones((), x.dtype), out, out=out if mine else None)


def _integer_pow_deriv(x: Any, ans: Any, *, y: int) -> Any:
    if y == 0:
        return full(get_aval(x).shape, 0, get_aval(x).dtype)
    if y == 1:
        return full(get_aval(x).shape, 1, get_aval(x).dtype)
    if y == 2:
        return mul(x, 2.0)
    return mul(integer_pow(x, y - 1), float(y))


integer_pow_p = unary("integer_pow", _integer_pow_impl, _integer_pow_deriv, kinds=NUMBER,
                      cuda=lambda eqn, args, t: _ipow_cuda(int(eqn.params["y"]), args[0], t),
                      py=lambda eqn, args, t: _ipow_py(int(eqn.params["y"]), args[0], t, eqn))


integer_pow_p.lax_fn = lambda x, y: integer_pow(x, y)
_integer_pow_kinds = integer_pow_p.abstract_eval


def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    # Refused when staged too (jit), with JAX's TypeError.
    if y < 0 and x.dtype.kind in "iu":
        shape = ",".join(str(d) for d in x.shape)
        raise DTypeError(f"Integers cannot be raised to negative powers, got "
                         f"integer_pow({x.dtype.name}[{shape}], {y})")
    return cast(ShapedArray, _integer_pow_kinds(x, y=y))


integer_pow_p.abstract_eval = _integer_pow_abstract


def _ipow_cuda(y: int, a: str, t: str) -> str:
    return f"fg_ipow<{t}>({a}, {y}LL)" if y >= 0 else f"(({t})1 / fg_ipow<{t}>({a}, {-y}LL))"


def _ipow_py(y: int, a: str, t: str, eqn: Any) -> str | None:
    # As the impl: the products by squaring (the compiler shares the repeated squares).
    if y < 0 and _kind(eqn) in "iu":
        return None
    if y == 0:
        return f"{t}(1)"  # (a scalar expression: numba's loop body, element by element)
    out = power_by_squaring(a, abs(y), lambda p, q: f"({p} * {q})")
    return out if y > 0 else f"({t}(1) / {out})"

# ------------------------------------------------------ binary primitives

add_p = binary("add", "add", transpose=lambda ct: [ct, ct], kinds="biufc", cuda="({0} + {1})",
               torch="add")
sub_p = binary("sub", "subtract", transpose=lambda ct: [ct, neg(ct)], cuda="({0} - {1})",
               torch="sub")
mul_p = binary("mul", "multiply", lambda x, y, a: y, lambda x, y, a: x, kinds="biufc",
               reads="x0,x1", reads_for=("x1", "x0"), cuda="({0} * {1})", torch="mul")
# d/dy (x / y) = -x / y^2, from the operands (as PyTorch keeps them), not the output.
div_p = binary("div", lambda xp, x, y: _div_impl(xp, x, y),
               lambda x, y, a: _recip(y), lambda x, y, a: neg(div(div(x, y), y)),
               reads="x0,x1", reads_for=("x1", "x0,x1"), torch="div",
               py=lambda eqn, args, t: f"np.floor_divide({args[0]}, {args[1]})"
               if _kind(eqn) in "iub" else _float_div(eqn, args, t, f"{t}(1)"),
               cuda=lambda eqn, args, t: f"fg_floordiv({args[0]}, {args[1]})"
               if _kind(eqn) in "iu" else _float_div(eqn, args, t, f"(({t})1)"))


def _float_div(eqn: Any, args: list[str], t: str, one: str) -> str:
    """A fused kernel's quotient: by a 0-d divisor of a larger result, the product with
    its reciprocal (as XLA computes it, see :func:`broadcast_divisor`)."""
    if _kind(eqn) == "f" and eqn.inputs[1].aval.ndim == 0 and \
            math.prod(eqn.outputs[0].aval.shape) > 1 and not config._local.true_division:
        return f"({args[0]} * ({one} / {args[1]}))"
    return f"({args[0]} / {args[1]})"


def _div_impl(xp: Any, x: Any, y: Any) -> Any:
    # Integer division floors, as NumPy's // does; floats divide truly, except by a
    # broadcast divisor (below).
    if x.dtype.kind in "iub":
        return xp.floor_divide(x, y)
    if x.dtype.kind == "f" and not config._local.true_division:
        repeated = broadcast_divisor(x, y)
        if repeated is not None:
            return xp.multiply(x, xp.reciprocal(repeated))
    return xp.true_divide(x, y)


def broadcast_divisor(x: Any, y: Any) -> Any:
    """The distinct values of ``y`` when ``y`` is a broadcast (a 0-d divisor of a larger
    ``x``, or a view with stride 0 along an axis longer than 1), else None.

    XLA, JAX's compiler, rewrites ``a / broadcast(b)`` as ``a * broadcast(1 / b)``: one
    reciprocal per distinct value. The product rounds twice, so about a third of the
    quotients differ from true division in the last bit; JAX's ``x / 3.0``, ``x / row``
    and ``mean`` (a sum over the count) give those numbers, and so does funcgrad's JAX
    face. PyTorch divides truly: its face's operations run with
    ``config._local.true_division`` set.

    >>> import numpy as np
    >>> broadcast_divisor(np.ones(3), np.broadcast_to(np.float64(2.0), (3,))).shape
    (1,)
    """
    if y.ndim == 0:
        # (XLA reads a broadcast to one element as a reshape: that quotient is true.)
        return y if x.size > 1 else None
    if y.size == 0:
        return None  # (NumPy gives an empty array stride 0 on every axis)
    strides = getattr(y, "strides", None)
    if strides is None or not any(s == 0 and n > 1 for s, n in zip(strides, y.shape)):
        return None
    return y[tuple(slice(0, 1) if s == 0 else slice(None) for s in strides)]


def _rem_impl(xp: Any, x: Any, y: Any) -> Any:
    # The floor remainder (the divisor's sign), whose zeros keep the dividend's sign, as
    # JAX's jnp.remainder, PyTorch's % and the CUDA kernel's fg_mod (C's fmod underneath)
    # give them; NumPy's take the divisor's.
    r = xp.remainder(x, y)
    if r.dtype.kind in "iub":
        return r
    return xp.where(r == 0, xp.copysign(r, x), r)


def _rem_scalar(eqn: Any, args: list[str], t: str) -> str:
    a, b = args
    if _kind(eqn) in "iub":
        return f"np.remainder({a}, {b})"
    return (f"(np.copysign(np.remainder({a}, {b}), {a}) if np.remainder({a}, {b}) == 0 "
            f"else np.remainder({a}, {b}))")


rem_p = binary("rem", _rem_impl, lambda x, y, a: full(get_aval(x).shape, 1,
                                                      get_aval(x).dtype),
               lambda x, y, a: neg(floor_p.bind(div(x, y))), kinds="iuf", reads="x0,x1",
               cuda="fg_mod({0}, {1})", torch="remainder", py=_rem_scalar)


def _truncating(name: str, fix: Callable[[Any, Any], Any], doc: str) -> Callable[..., Any]:
    """``lax.div``/``lax.rem`` as XLA computes them (rounding toward zero; by zero: -1 and
    the dividend), from the flooring primitives NumPy's ``//`` and ``%`` are."""
    def lax_fn(x: Any, y: Any) -> Any:
        from funcgrad.primitives.rules import _scalars_as_operand  # noqa: PLC0415
        from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

        x, y = _scalars_as_operand(x, y, name)
        # The fix-ups select elementwise: a rank-0 side spread over the other's shape.
        sx, sy = get_aval(x).shape, get_aval(y).shape
        if sx != sy:
            x, y = (broadcast_in_dim(x, sy, ()), y) if not sx else (x, broadcast_in_dim(y, sx, ()))
        return fix(x, y)

    lax_fn.__name__ = lax_fn.__qualname__ = name
    lax_fn.__module__ = "funcgrad.lax"
    lax_fn.__doc__ = doc
    return lax_fn


def _may_be_zero(y: Any) -> bool:
    """False when ``y`` is a host constant with no zero (the by-zero fix-up is skipped, so
    constant divisors add no work: random bit manipulation divides so)."""
    from funcgrad.array import ArrayImpl  # noqa: PLC0415

    v = y._value if type(y) is ArrayImpl else y
    return not (isinstance(v, (np.ndarray, np.generic)) and bool(np.all(v != 0)))


def _flag(pred: Any, dtype: Any) -> Any:
    """A boolean as 0/1 of ``dtype`` (arithmetic instead of a select: no full-size
    constants, which a GPU would have to receive)."""
    return convert_element_type(pred, dtype)


def _trunc_div(x: Any, y: Any) -> Any:
    q = div_p.bind(x, y)
    dt = get_aval(q).dtype
    if dt.kind not in "iu":
        return q
    zero = np.zeros((), dt)
    if dt.kind == "i":
        # Floor division is one below truncation when the signs differ and it is inexact.
        r = rem_p.bind(x, y)
        inexact = and_p.bind(ne(r, zero), ne(lt(x, zero), lt(y, zero)))
        q = add(q, _flag(inexact, dt))
    if _may_be_zero(y):
        # XLA's x / 0 has all bits set (-1); NumPy's floor division gives 0.
        q = sub(q, _flag(eq(y, zero), dt))
    return q


def _trunc_rem(x: Any, y: Any) -> Any:
    r = rem_p.bind(x, y)
    dt = get_aval(r).dtype
    if dtypes.kind(dt) in "if":
        zero = np.zeros((), dt)
        # Floor modulo has the divisor's sign; C's fmod (XLA's rem) the dividend's.
        wrong = and_p.bind(ne(r, zero), ne(lt(r, zero), lt(x, zero)))
        if dt.kind == "i":
            r = sub(r, mul(y, _flag(wrong, dt)))
        else:
            r = select(wrong, sub(r, y), r)
            # That adjustment rounds (rem(-1e-3, 1) came out -0.0009999871); C's fmod is
            # exact, and so is the floor remainder of the magnitudes (nothing to adjust),
            # given the dividend's sign: the exact value, with the derivatives above.
            exact = rem_p.bind(abs_p.bind(x), abs_p.bind(y))
            exact = select(lt(x, zero), neg(exact), exact)
            sg = stop_gradient_p.bind
            value = add(r, sg(sub(exact, r)))
            # A zero has the dividend's sign (fmod(-0., y) and fmod(-2., 2.) are -0.), which
            # r + (0 - r) loses: -(-r + r) is -0. with r's derivative.
            negative = lt(atan2_p.bind(x, np.full((), -1, dt)), zero)  # -0. included
            value = select(and_p.bind(eq(exact, zero), negative),
                           neg(add(neg(r), sg(r))), value)
            # An infinite divisor: fmod(x, inf) is x, which no correction reaches from the
            # floor remainder inf.
            r = select(is_finite_p.bind(r), value, exact)
    if dt.kind in "iu" and _may_be_zero(y):
        # XLA's x % 0 is x; NumPy's is 0.
        r = add(r, mul(x, _flag(eq(y, np.zeros((), dt)), dt)))
    return r


rem_p.lax_fn = _truncating("rem", _trunc_rem, (
    "Remainder of x / y rounded toward zero (C's fmod: the sign of the dividend), as "
    "``jax.lax.rem``.\n\n>>> import funcgrad.numpy as fnp\n>>> from funcgrad import lax\n"
    ">>> lax.rem(fnp.array([-7, 7]), fnp.array([3, -3])).tolist()\n[-1, 1]\n"))
div_p.lax_fn = _truncating("div", _trunc_div, (
    "x / y; integers round toward zero, as ``jax.lax.div``.\n\n"
    ">>> import funcgrad.numpy as fnp\n>>> from funcgrad import lax\n"
    ">>> lax.div(fnp.array([-7, 7]), fnp.array([2, 2])).tolist()\n[-3, 3]\n"))


def _safe_log(x: Any) -> Any:
    zero = eq(x, 0.0)
    return select(zero, 0.0, log(select(zero, 1.0, x)))


def _pow_impl(xp: Any, x: Any, y: Any) -> Any:
    out = xp.power(x, y)
    if xp is np and dtypes.is_float(out.dtype):
        # NumPy computes x ** 0.5 as sqrt(x): -0 and -inf give -0 and NaN where C's pow
        # (XLA's, CUDA's and numba's, so jitted code's too) gives +0 and +inf.
        half = np.equal(y, 0.5)
        if half.any():
            fixed = np.where(half & ((x == 0) | (x == -np.inf)), np.abs(x), out)
            return fixed if isinstance(out, np.ndarray) else fixed[()]
    return out


pow_p = binary(
    "pow", _pow_impl,
    lambda x, y, a: _pow_dx(x, y),
    lambda x, y, a: mul(_safe_log(x), a),
    # The base's derivative reads the operands only, the exponent's the result too (as
    # PyTorch's pow_backward and pow_backward_exponent save them).
    reads="x0,x1,y0", reads_for=("x0,x1", "x0,y0"),
    torch="pow",
    # NumPy refuses negative integer powers of integers: only floats fuse on the CPU.
    py=lambda eqn, args, t: f"np.power({args[0]}, {args[1]})" if _kind(eqn) == "f" else None,
    cuda=lambda eqn, args, t: f"fg_ipow<{t}>({args[0]}, (long long){args[1]})"
    if _kind(eqn) in "iu" else f"pow({args[0]}, {args[1]})",
)


def _lax_pow(x: Any, y: Any) -> Any:
    """x ** y elementwise, as ``jax.lax.pow``: a float or complex base, and an exponent of
    the base's dtype or of an integer dtype (converted as XLA converts it; its derivative
    to the base is exactly 0 where the exponent is 0).

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad import lax
    >>> lax.pow(fnp.array([2.0, -3.0]), fnp.array([3, 2])).tolist()
    [8.0, 9.0]
    """
    from funcgrad.primitives.rules import _scalars_as_operand  # noqa: PLC0415

    y_weak = dtypes.python_scalar(y) or get_aval(y).weak_type
    if type(y) is int and not dtypes.python_scalar(x):
        y = np.int32(y)  # JAX keeps a Python int exponent an integer (weakly typed int32)
    x, y = _scalars_as_operand(x, y)
    xa, ya = get_aval(x), get_aval(y)
    if not dtypes.is_inexact(xa.dtype):
        raise DTypeError(f"pow does not accept dtype {xa.dtype} at position 0. Accepted dtypes "
                         "at position 0 are subtypes of floating, complexfloating.")
    if ya.dtype.kind not in "iu":
        if ya.dtype != xa.dtype:
            raise DTypeError(
                "the first argument to pow must have an inexact dtype (float or complex), and "
                "the second argument must have an inexact or integer dtype, and two inexact "
                f"dtypes must match, but got {xa.dtype} and {ya.dtype} respectively.")
        return pow_p.bind(x, y)
    shape = np.broadcast_shapes(xa.shape, ya.shape)
    x, y = _full_shape(x, shape), _full_shape(y, shape)
    # JAX's rule: where the exponent is 0 the result is 1 and its derivative 0; the base is
    # masked there too, so 0 ** -1 in the unused branch adds no NaN to the gradient.
    at_zero = eq(y, np.zeros((), ya.dtype))
    one = full(shape, 1, xa.dtype)
    base = select(at_zero, one, x)
    out = select(at_zero, one, pow_p.bind(base, convert_element_type(y, xa.dtype)))
    return convert_element_type(out, xa.dtype, weak_type=xa.weak_type and y_weak)


pow_p.lax_fn = _lax_pow


def _pow_dx(x: Any, y: Any) -> Any:
    # d/dx x**y = y * x**(y-1), unguarded as JAX's rule: 0 * inf = nan at x == 0 == y
    # (and at x == 0 for y == 1 in the second derivative).
    return mul(y, pow_(x, sub(y, 1.0)))


def _indicator(mask: Any, like: Any) -> Any:
    """1.0 where ``mask`` else 0.0, shaped and typed like ``like`` (the result)."""
    aval = get_aval(like)
    one = full(aval.shape, 1.0, aval.dtype)
    zero = full(aval.shape, 0.0, aval.dtype)
    return select(_full_shape(mask, aval.shape), one, zero)


def _full_shape(x: Any, shape: tuple[int, ...]) -> Any:
    """Broadcast a rank-0 operand of a binary primitive to the result's shape."""
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    return broadcast_in_dim(x, shape, ()) if get_aval(x).shape != shape else x


def _chooser_partial(cmp: Any) -> Any:
    # JAX's rule for max/min: the derivative goes to the chosen operand, half each on ties.
    def partial(x: Any, y: Any, ans: Any) -> Any:
        if get_aval(x).dtype.kind == "c":
            # Complex numbers have no gt/lt: JAX's own form, [x == ans] / (1 + [y == ans]).
            return div(_indicator(eq(x, ans), ans),
                       add(_indicator(eq(y, ans), ans), 1.0))
        strict = _indicator(cmp(x, y), ans)
        tie = _indicator(eq(x, y), ans)
        return add(strict, mul(tie, 0.5))

    return partial


def complex_pick(xp: Any, x: Any, y: Any, greater: bool) -> Any:
    """JAX's (XLA's) max (``greater``) or min of complex numbers: ``x`` where it is beyond
    ``y`` by real part, ties by imaginary part, else ``y`` (so ``y`` when either has a NaN
    in a compared part: no NaN propagation, unlike NumPy's maximum)."""
    xr, yr, xi, yi = xp.real(x), xp.real(y), xp.imag(x), xp.imag(y)
    first = xp.where(xr == yr, xi > yi, xr > yr) if greater else \
        xp.where(xr == yr, xi < yi, xr < yr)
    return xp.where(first, x, y).astype(np.result_type(x, y), copy=False)


def _chooser_impl(np_name: str, greater: bool) -> Callable[..., Any]:
    def impl(xp: Any, x: Any, y: Any) -> Any:
        if x.dtype.kind == "c":
            return complex_pick(xp, x, y, greater)
        return getattr(xp, np_name)(x, y)

    return impl


# The impl is a function (NumPy's maximum propagates NaN through complex numbers, where
# XLA's does not); the ufunc stays named for the real fast paths (exact_ufunc refuses it
# on complex operands).
max_p = binary("max", _chooser_impl("maximum", True), _chooser_partial(gt),
               lambda x, y, a: _chooser_partial(gt)(y, x, a), kinds="biufc",
               reads="x0,x1,y0", cuda="fg_max({0}, {1})", torch="maximum",
               py="np.maximum({0}, {1})")
max_p.ufunc = "maximum"
min_p = binary("min", _chooser_impl("minimum", False), _chooser_partial(lt),
               lambda x, y, a: _chooser_partial(lt)(y, x, a), kinds="biufc",
               reads="x0,x1,y0", cuda="fg_min({0}, {1})", torch="minimum",
               py="np.minimum({0}, {1})")
min_p.ufunc = "minimum"
atan2_p = binary(
    "atan2", "arctan2",
    lambda x, y, a: div(y, add(square(x), square(y))),
    lambda x, y, a: neg(div(x, add(square(x), square(y)))),
    kinds="f",
    reads="x0,x1",
    cuda="atan2({0}, {1})",
    torch="atan2",
)

eq_p = binary("eq", "equal", result_dtype=dtypes.bool_, kinds="biufc", zero_derivative=True,
              cuda="({0} == {1})", torch="eq")
ne_p = binary("ne", "not_equal", result_dtype=dtypes.bool_, kinds="biufc",
              zero_derivative=True,
              cuda="({0} != {1})", torch="ne")
lt_p = binary("lt", "less", result_dtype=dtypes.bool_, kinds="biuf", zero_derivative=True,
              cuda="({0} < {1})", torch="lt")
le_p = binary("le", "less_equal", result_dtype=dtypes.bool_, kinds="biuf",
              zero_derivative=True,
              cuda="({0} <= {1})", torch="le")
gt_p = binary("gt", "greater", result_dtype=dtypes.bool_, kinds="biuf", zero_derivative=True,
              cuda="({0} > {1})", torch="gt")
ge_p = binary("ge", "greater_equal", result_dtype=dtypes.bool_, kinds="biuf",
              zero_derivative=True,
              cuda="({0} >= {1})", torch="ge")
and_p = binary("and", "bitwise_and", kinds=INTEGRAL, zero_derivative=True,
              lax="bitwise_and", torch="bitwise_and",
              cuda=lambda eqn, args, t: f"({args[0]} && {args[1]})" if _kind(eqn) == "b"
              else f"({args[0]} & {args[1]})")
or_p = binary("or", "bitwise_or", kinds=INTEGRAL, zero_derivative=True,
              lax="bitwise_or", torch="bitwise_or",
              cuda=lambda eqn, args, t: f"({args[0]} || {args[1]})" if _kind(eqn) == "b"
              else f"({args[0]} | {args[1]})")
xor_p = binary("xor", "bitwise_xor", kinds=INTEGRAL, zero_derivative=True,
              lax="bitwise_xor", torch="bitwise_xor",
              cuda=lambda eqn, args, t: f"({args[0]} != {args[1]})" if _kind(eqn) == "b"
              else f"({args[0]} ^ {args[1]})")

# ------------------------------------------------------------------ select


def _select_abstract(pred: ShapedArray, on_true: ShapedArray, on_false: ShapedArray
                     ) -> ShapedArray:
    if pred.dtype != dtypes.bool_:
        raise DTypeError(f"the predicate must be boolean, got {pred.dtype}")
    if pred.shape != on_true.shape:
        raise ShapeError(
            f"predicate shape {pred.shape} differs from operand shape {on_true.shape}"
        )
    return same_shape_dtype("select", on_true, on_false)


def _select_impl(xp: Any, p: Any, t: Any, f: Any) -> Any:
    if (type(t) is np.ndarray and type(f) is np.ndarray and type(p) is np.ndarray
            and t.size >= 8192 and t.dtype.itemsize in (4, 8) and t.dtype == f.dtype
            and t.shape == f.shape == p.shape):
        # NumPy's where branches per element: on a mask with no pattern (relu's) it runs
        # 2x (32K elements) to 6x (256K) slower than this branch-free bitwise select
        # (exact: the bits are copied).
        it = np.int32 if t.dtype.itemsize == 4 else np.int64
        if _zero_broadcast(t):
            # relu and the rules' zeros: one side is +0.0 everywhere, its bits all clear,
            # so one mask and one AND make the result (3 passes instead of 6).
            m = p.astype(it)
            np.subtract(m, 1, out=m)
            return np.bitwise_and(f.view(it), m, out=m).view(t.dtype)
        if _zero_broadcast(f):
            m = p.astype(it)
            np.negative(m, out=m)
            return np.bitwise_and(t.view(it), m, out=m).view(t.dtype)
        m = p.astype(it)
        np.negative(m, out=m)
        out = np.bitwise_and(t.view(it), m)
        np.invert(m, out=m)
        np.bitwise_and(f.view(it), m, out=m)
        np.bitwise_or(out, m, out=out)
        return out.view(t.dtype)
    return xp.where(p, t, f)


def _zero_broadcast(a: np.ndarray) -> bool:
    """Whether ``a`` is one +0.0 seen everywhere (a stride-0 broadcast, as ``full`` makes)."""
    if a.ndim == 0 or any(a.strides):
        return False
    v = a[(0,) * a.ndim]
    return bool(v == 0) and not bool(np.signbit(v))


select_p = Primitive("select", abstract_eval=_select_abstract, impl=_select_impl)
select_p.describe(lax="select", fusion="elementwise", cuda="({0} ? {1} : {2})", ufunc=None,
                  py_scalar="({1} if {0} else {2})",
                  torch_method=None, torch_node="Where", lax_fn=lambda p, t, f: _lax_select(
                      p, t, f))


def _lax_select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``lax.select``: JAX's checks and errors, and a scalar predicate chooses whole
    operands (broadcast here; the primitive takes equal shapes)."""
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415 - a cycle

    on_true = _scalar_to(on_true, on_false)
    on_false = _scalar_to(on_false, on_true)
    pa, ta, fa = get_aval(pred), get_aval(on_true), get_aval(on_false)
    if pa.dtype.kind not in "biu":
        raise DTypeError(f"select `which` must be boolean or integer type, got {pa.dtype}.")
    if ta.shape != fa.shape:
        raise ShapeError(f"select cases must have the same shapes, got "
                         f"[{fa.shape}, {ta.shape}].")
    if ta.dtype != fa.dtype:
        raise DTypeError(
            f"lax.select requires arguments to have the same dtypes, got {fa.dtype}, "
            f"{ta.dtype}. (Tip: jnp.where is a similar function that does automatic type "
            "promotion on inputs).")
    if pa.shape not in ((), ta.shape):
        raise ShapeError(f"select `which` must be scalar or have the same shape as cases, "
                         f"got `which` shape {pa.shape} but case shape {ta.shape}.")
    if pa.shape != ta.shape:
        pred = broadcast_in_dim(pred, ta.shape, ())
    return select_p.bind(pred, on_true, on_false)


def _select_transpose(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    pred = primals[0]
    zeros = full(get_aval(ct).shape, 0, get_aval(ct).dtype)
    return [None, select(pred, ct, zeros), select(pred, zeros, ct)]


linear(select_p, _select_transpose, linear_args=(1, 2))
select_p.batch = elementwise_batch(select_p, rank0_broadcasts=False)

# ------------------------------------------------------------ stop_gradient

stop_gradient_p = Primitive("stop_gradient", abstract_eval=lambda x: x, impl=lambda xp, x: x)
stop_gradient_p.describe(lax="stop_gradient", fusion="elementwise", cuda="{0}", ufunc=None,
                         py_scalar="{0}",
                         torch_method=None, lax_fn=lambda x: stop_gradient(x))
stop_gradient_p.jvp = lambda primals, tangents: (stop_gradient_p.bind(primals[0]), None)
stop_gradient_p.vjp = lambda ct, primals, ans: [None]
stop_gradient_p.batch = lambda args, dims: (stop_gradient_p.bind(args[0]), dims[0])
stop_gradient_p.vjp_reads = ""
stop_gradient_p.zero_derivative = True


def stop_gradient(x: Any) -> Any:
    """``x`` (an array or any pytree of them), which derivatives treat as a constant.

    >>> import funcgrad as fg
    >>> fg.grad(lambda x: x * fg.lax.stop_gradient(x))(3.0)
    Array(3., dtype=float32, weak_type=True)
    """
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    if type(x) in (list, tuple, dict) or x is None:
        return tree_map(stop_gradient_p.bind, x)
    return stop_gradient_p.bind(x)


# -------------------------------------------------------- dtype conversion


def _convert_abstract(x: ShapedArray, *, new_dtype: np.dtype[Any], weak_type: bool
                      ) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(xp: Any, x: Any, *, new_dtype: np.dtype[Any], weak_type: bool) -> Any:
    dst = np.dtype(new_dtype)
    if x.dtype.kind == "c" and dst.kind != "c":
        x = x.real  # the real part, without NumPy's ComplexWarning
    if dst.kind in "iu" and x.dtype.kind not in "iub":
        return _saturate(xp, x, dst)
    return x.astype(dst)


def _convert_scalar(src: np.dtype[Any], dst: np.dtype[Any], arg: str, t: str) -> str:
    if dst.kind == "b":
        return f"({arg} != 0)"
    if dst.kind not in "iu" or src.kind in "iub":
        return f"{t}({arg})"
    info = np.iinfo(dst)  # saturating, as _saturate (a scalar cast is undefined out of range)
    return (f"({t}(0) if {arg} != {arg} else {t}({info.max}) if {arg} >= {float(info.max)!r} "
            f"else {t}({info.min}) if {arg} <= {float(info.min)!r} else {t}({arg}))")


def _convert_cuda(src: np.dtype[Any], dst: np.dtype[Any], arg: str, t: str) -> str:
    if dst.kind == "b":
        return f"(({t})({arg} != 0))"
    if dst.kind not in "iu" or src.kind in "iub":
        return f"(({t}){arg})"
    # Spelled out, not left to the conversion instruction: the same text runs in the host
    # harness, whose C cast is undefined out of range.
    info = np.iinfo(dst)
    v = f"(({'double' if src.itemsize == 8 else 'float'}){arg})"
    suffix = "ULL" if dst.kind == "u" else "LL"
    lo = "0ULL" if dst.kind == "u" else f"({info.min + 1}LL - 1)"
    return (f"({v} != {v} ? ({t})0 : {v} >= {float(info.max)!r} ? ({t}){info.max}{suffix} : "
            f"{v} <= {float(info.min)!r} ? ({t}){lo} : ({t}){v})")


def _saturate(xp: Any, x: Any, dst: np.dtype[Any]) -> Any:
    """Float to integer as XLA (and a GPU's conversion instruction): out-of-range values
    clamp to the integer range and NaN gives 0, where a C cast is undefined (NumPy on x86
    wraps: uint8 of 300.7 gave 44, int32 of 1e10 gave -2**31)."""
    info = np.iinfo(dst)
    hi, lo, zero = dst.type(info.max), dst.type(info.min), dst.type(0)
    # (A bound beyond a half-precision type's range is inf there: NumPy's overflow warning
    # on converting it says nothing to the user, and the comparison is still right.)
    with np.errstate(invalid="ignore", over="ignore"):
        out = x.astype(dst)
        # The bounds compare in x's type: float(info.max) rounds up to the first value out
        # of range (2**31 for int32 in float32), and info.min is a power of two (or 0).
        out = xp.where(x >= float(info.max), hi, out)
        out = xp.where(x <= float(info.min), lo, out)
    return xp.where(xp.isnan(x), zero, out)


convert_element_type_p = Primitive("convert_element_type", abstract_eval=_convert_abstract,
                                   impl=_convert_impl)
convert_element_type_p.describe(
    lax="convert_element_type", fusion="elementwise", ufunc=None, torch_method=None,
    torch_node="ToCopy", lax_fn=lambda x, new_dtype, weak_type=False: convert_element_type(
        x, new_dtype, weak_type),
    cuda=lambda eqn, args, t: _convert_cuda(eqn.inputs[0].aval.dtype,
                                            eqn.outputs[0].aval.dtype, args[0], t),
    py_scalar=lambda eqn, args, t: _convert_scalar(eqn.inputs[0].aval.dtype,
                                                   eqn.outputs[0].aval.dtype, args[0], t))


def _convert_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                 new_dtype: np.dtype[Any], weak_type: bool) -> Any:
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    src = get_aval(x).dtype
    if t is None or not (dtypes.is_inexact(src) and dtypes.is_inexact(new_dtype)):
        return ans, None
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, new_dtype: np.dtype[Any],
                 weak_type: bool) -> list[Any]:
    aval = get_aval(primals[0])
    if not (dtypes.is_inexact(aval.dtype) and dtypes.is_inexact(new_dtype)):
        return [None]
    if get_aval(ct).dtype.kind == "c" and aval.dtype.kind != "c":
        ct = real_p.bind(ct)  # the transpose of making a real value complex
    return [convert_element_type(ct, aval.dtype, aval.weak_type)]


convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.vjp = _convert_vjp
convert_element_type_p.vjp_reads = ""
convert_element_type_p.batch = lambda args, dims, **p: (
    convert_element_type_p.bind(args[0], **p), dims[0])

# ---------------------------------------------------------- complex numbers
# JAX's conventions: real, imag, conj and complex are linear over the reals, and the
# transpose of a linear map is taken without conjugation, so grad of a real function of
# complex inputs is df/dx - i df/dy (the conjugate of the Wirtinger gradient 2 df/dz*).


def real_dtype_of(dtype: Any) -> np.dtype[Any]:
    """The real dtype of a complex one's parts (float32 for complex64).

    >>> real_dtype_of(np.complex64)
    dtype('float32')
    """
    dt = np.dtype(dtype)
    return np.dtype(np.finfo(dt).dtype) if dt.kind == "c" else dt


def complex_dtype_of(dtype: Any) -> np.dtype[Any]:
    """The complex dtype with parts of ``dtype`` (complex64 up to float32).

    >>> complex_dtype_of(np.float64)
    dtype('complex128')
    """
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return dt
    return dtypes.complex128 if dt.itemsize > 4 else dtypes.complex64


def _part_abstract(name: str) -> Any:
    def abstract_eval(x: ShapedArray) -> ShapedArray:
        require_kind(name, x, "c", "complex")
        return ShapedArray(x.shape, real_dtype_of(x.dtype), x.weak_type)

    return abstract_eval


def real(x: Any) -> Any:
    """The real part of a complex array (a real array of its parts' dtype).

    >>> real(np.array([1 + 2j]))
    Array([1.], dtype=float64)
    """
    return real_p.bind(x)


def imag(x: Any) -> Any:
    """The imaginary part of a complex array (a real array of its parts' dtype).

    >>> imag(np.array([1 + 2j]))
    Array([2.], dtype=float64)
    """
    return imag_p.bind(x)


def conj(x: Any) -> Any:
    """The complex conjugate; a real operand gives a complex result, as lax.conj.

    >>> conj(np.array([1 + 2j]))
    Array([1.-2.j], dtype=complex128)
    """
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


def complex_(x: Any, y: Any) -> Any:
    """``x + i y`` from two real arrays of one dtype (lax.complex).

    >>> complex_(np.array([1.0]), np.array([2.0]))
    Array([1.+2.j], dtype=complex128)
    """
    return complex_p.bind(*_scalar_pair(x, y))


def _scalar_pair(x: Any, y: Any) -> tuple[Any, Any]:
    if dtypes.python_scalar(x) and dtypes.python_scalar(y):
        # Two Python numbers: weakly typed parts, so the result is weak too (as JAX's).
        dt = dtypes.default_float()
        return (convert_element_type(full((), x, dt), dt, True),
                convert_element_type(full((), y, dt), dt, True))
    return _scalar_to(x, y), _scalar_to(y, x)


# A part of the buffer would be a view; copies keep results independent of their operand
# (the NumPy backend writes into dead buffers).
real_p = Primitive("real", abstract_eval=_part_abstract("real"),
                   impl=lambda xp, x: x.real.copy())
imag_p = Primitive("imag", abstract_eval=_part_abstract("imag"),
                   impl=lambda xp, x: x.imag.copy())
linear(real_p, lambda ct, primals, ans: [complex_(ct, full(get_aval(ct).shape, 0,
                                                            get_aval(ct).dtype))])
linear(imag_p, lambda ct, primals, ans: [complex_(full(get_aval(ct).shape, 0,
                                                        get_aval(ct).dtype), neg(ct))])


def _conj_abstract(x: ShapedArray, *, input_dtype: Any) -> ShapedArray:
    require_kind("conj", x, FLOAT, "floating point or complex")
    return ShapedArray(x.shape, complex_dtype_of(x.dtype), x.weak_type)


def _conj_impl(xp: Any, x: Any, *, input_dtype: Any) -> Any:
    return xp.conj(x).astype(complex_dtype_of(x.dtype), copy=False)


conj_p = Primitive("conj", abstract_eval=_conj_abstract, impl=_conj_impl)
linear(conj_p, lambda ct, primals, ans, *, input_dtype: [
    conj(ct) if np.dtype(input_dtype).kind == "c" else real(ct)])


def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    out = same_shape_dtype("complex", x, y)
    require_kind("complex", x, "f", "real floating point")
    return ShapedArray(out.shape, complex_dtype_of(out.dtype), out.weak_type)


def _complex_impl(xp: Any, x: Any, y: Any) -> Any:
    shape = x.shape if x.ndim else y.shape
    if len(shape) and _host_fill(x) and _host_fill(y):
        # Two host fills (a seed and a zero in real's or imag's transpose): the result stays
        # one, so that it follows the device of the arrays it meets next (core's
        # follow_device) instead of being a host array that a GPU operand refuses.
        one = np.empty((), complex_dtype_of(x.dtype))
        one.real, one.imag = x.reshape(-1)[0], y.reshape(-1)[0]
        return np.broadcast_to(one, shape)
    # Part by part: x + 1j * y would turn an infinite y into a NaN real part.
    out = xp.empty(shape, complex_dtype_of(x.dtype))
    out.real[...] = x  # the parts are views (NumPy, CuPy); CuPy's emulator has no setters
    out.imag[...] = y
    return out


def _host_fill(a: Any) -> bool:
    """A host scalar or a host array of one repeated value (all strides zero)."""
    return isinstance(a, np.ndarray) and a.size > 0 and not any(a.strides)


def _complex_transpose(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    x, y = primals
    return [unbroadcast(real(ct), get_aval(x)), unbroadcast(neg(imag(ct)), get_aval(y))]


complex_p = Primitive("complex", abstract_eval=_complex_abstract, impl=_complex_impl)
linear(complex_p, _complex_transpose, linear_args=(0, 1))

for _p, _fn in ((real_p, real), (imag_p, imag), (conj_p, lambda x: conj(x)),
                (complex_p, complex_)):
    # No Tensor method: the torch face does not support complex tensors yet.
    _p.describe(lax=_p.name, fusion=None, cuda=None, ufunc=None, lax_fn=_fn, torch_method=None)
for _p in (real_p, imag_p, conj_p):
    _p.batch = lambda args, dims, _p=_p, **params: (_p.bind(args[0], **params), dims[0])
complex_p.batch = elementwise_batch(complex_p)
real_p.torch_node, imag_p.torch_node, conj_p.torch_node = "Real", "Imag", "Conj"
complex_p.torch_node = "Complex"


def _conj_unit(x: Any) -> Any:
    """conj(x) / |x| (0 where x is 0): d|x| = real(dx * conj(x) / |x|)."""
    a = abs_p.bind(x)
    zero = eq(a, 0.0)
    return div(conj(x), convert_element_type(select(zero, 1.0, a), get_aval(x).dtype))


# The real rules that unary() made, which the complex case wraps.
_abs_real_abstract: Callable[..., Any] = abs_p.abstract_eval
_abs_real_jvp: Callable[..., Any] = cast(Callable[..., Any], abs_p.jvp)
_abs_real_vjp: Callable[..., Any] = cast(Callable[..., Any], abs_p.vjp)


def _abs_abstract(x: ShapedArray) -> ShapedArray:
    if x.dtype.kind == "c":
        return ShapedArray(x.shape, real_dtype_of(x.dtype), x.weak_type)
    return _abs_real_abstract(x)


def _abs_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> Any:
    (x,), (t,) = primals, tangents
    if get_aval(x).dtype.kind != "c":
        return _abs_real_jvp(primals, tangents)
    ans = abs_p.bind(x)
    return ans, None if t is None else real(mul(t, _conj_unit(x)))


def _abs_vjp(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    x = primals[0]
    if get_aval(x).dtype.kind != "c":
        return _abs_real_vjp(ct, primals, ans)
    host = getattr(ct, "_value", ct)
    if isinstance(host, np.ndarray):
        # a host seed made complex would be a host array that a GPU x refuses
        ct = place_like(host, x)
    return [mul(convert_element_type(ct, get_aval(x).dtype), _conj_unit(x))]


abs_p.abstract_eval, abs_p.jvp, abs_p.vjp = _abs_abstract, _abs_jvp, _abs_vjp

# The rule makers (funcgrad.primitives.rules, imported above) call these two.
later.mul, later.add = mul, add


__all__ = [n for n in dir() if n.endswith("_p")] + [
    "add", "sub", "mul", "div", "max_", "min_", "pow_", "eq", "ne", "lt", "le", "gt", "ge",
    "neg", "exp", "log", "sin", "cos", "sqrt", "rsqrt", "sign", "square", "reciprocal",
    "erf", "erfc", "real", "imag", "conj", "complex_", "real_dtype_of", "complex_dtype_of",
    "integer_pow", "select", "convert_element_type", "instantiate", "stop_gradient",
]

# PyTorch's node names where they are not the CamelCase of the primitive's name.
log1p_p.torch_node = "Log1P"
logistic_p.torch_node = "Sigmoid"
integer_pow_p.torch_node = "Pow"
not_p.torch_node = "BitwiseNot"
and_p.torch_node, or_p.torch_node, xor_p.torch_node = "BitwiseAnd", "BitwiseOr", "BitwiseXor"
rem_p.torch_node = "Remainder"
max_p.torch_node, min_p.torch_node = "Maximum", "Minimum"
is_finite_p.torch_node = "Isfinite"


def as_operand(x: Any) -> Any:
    """``x`` as an operand: Python scalars keep their weak type, NumPy arrays and funcgrad
    arrays pass through."""
    if dtypes.python_scalar(x):
        dt, weak = dtypes.result_type(x, return_weak_type_flag=True)
        return convert_element_type(np.asarray(x, dt), dt, weak_type=weak)
    if isinstance(x, (np.ndarray, np.generic)):
        # As the primitives would: NumPy's 64-bit dtypes become 32-bit ones in 32-bit mode,
        # so constants made from the operand's dtype agree with what the primitives see.
        dt = dtypes.canonicalize_dtype(x.dtype)
        return x if dt == x.dtype else convert_element_type(np.asarray(x), dt)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"lax functions take arrays, not {type(x).__name__}s; wrap the value "
                        "in funcgrad.numpy.asarray first")
    return x
