"""Elementwise primitives: math, comparisons, logic, select and dtype conversion.

>>> import numpy as np
>>> from funcgrad.primitives.elementwise import mul
>>> mul(np.array([2.0]), 3.0)
Array([6.], dtype=float64)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import PRIMITIVES, Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import (
    FLOAT,
    INTEGRAL,
    NUMBER,
    binary,
    elementwise_batch,
    full,
    instantiate,
    linear,
    same_shape_dtype,
    unary,
)

# ------------------------------------------------------------ wrappers


def _scalar_to(x: Any, like: Any, broadcast: bool = False) -> Any:
    """A Python scalar beside an array takes the array's dtype (and shape if asked)."""
    if dtypes.python_scalar(x):
        aval = get_aval(like)
        return full(aval.shape if broadcast else (), x, aval.dtype)
    return x


def _bin(prim: Primitive, x: Any, y: Any) -> Any:
    return prim.bind(_scalar_to(x, y), _scalar_to(y, x))


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
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=bool(weak_type))


def _recip(x: Any) -> Any:
    return integer_pow_p.bind(x, y=-1)


# ------------------------------------------------------- unary primitives

neg_p = unary("neg", "negative", kinds=NUMBER, cuda="(-{0})", torch="neg")
linear(neg_p, lambda ct, primals, ans: [neg(ct)])

sign_p = unary("sign", "sign", kinds=NUMBER, zero_derivative=True, cuda="fg_sign({0})",
               torch="sign")
floor_p = unary("floor", "floor", zero_derivative=True, cuda="floor({0})", torch="floor")
ceil_p = unary("ceil", "ceil", zero_derivative=True, cuda="ceil({0})", torch="ceil")
round_p = unary("round", "round", zero_derivative=True, cuda="rint({0})", torch="round")
is_finite_p = unary("is_finite", "isfinite", kinds=NUMBER, result_dtype=dtypes.bool_,
                    zero_derivative=True, torch="isfinite",
                    cuda=lambda eqn, args, t: "true" if _kind(eqn) in "biu" else
                    f"isfinite({args[0]})")
not_p = unary("not", lambda xp, x: xp.invert(x), kinds=INTEGRAL, zero_derivative=True,
              lax="bitwise_not", torch="bitwise_not",
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
rsqrt_p = unary("rsqrt", lambda xp, x: 1 / xp.sqrt(x),
                lambda x, ans: mul(div(ans, x), -0.5), reads="x,y",
                cuda="(({T})1 / sqrt({0}))", torch="rsqrt")
cbrt_p = unary("cbrt", "cbrt", lambda x, ans: div(ans, mul(x, 3.0)), reads="x,y",
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
                   cuda="fg_logistic({0})", torch="sigmoid")


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
              lambda x, ans: mul(exp(neg(square(x))), _TWO_OVER_SQRT_PI),
              cuda="erf({0})", torch="erf")
erfc_p = unary("erfc", _special("erfc"),
               lambda x, ans: mul(exp(neg(square(x))), -_TWO_OVER_SQRT_PI),
               cuda="erfc({0})", torch="erfc")


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


def _integer_pow_impl(xp: Any, x: Any, *, y: int) -> Any:
    if y == 2:
        return x * x
    if y < 0 and x.dtype.kind in "iu":
        raise ValueError("integers to negative integer powers are not allowed")
    return xp.power(x, y) if y >= 0 else xp.power(x, float(y)).astype(x.dtype)


def _integer_pow_deriv(x: Any, ans: Any, *, y: int) -> Any:
    if y == 0:
        return full(get_aval(x).shape, 0, get_aval(x).dtype)
    if y == 1:
        return full(get_aval(x).shape, 1, get_aval(x).dtype)
    if y == 2:
        return mul(x, 2.0)
    return mul(integer_pow(x, y - 1), float(y))


integer_pow_p = unary("integer_pow", _integer_pow_impl, _integer_pow_deriv, kinds=NUMBER,
                      cuda=lambda eqn, args, t: _ipow_cuda(int(eqn.params["y"]), args[0], t))


integer_pow_p.lax_fn = lambda x, y: integer_pow(x, y)


def _ipow_cuda(y: int, a: str, t: str) -> str:
    return f"fg_ipow<{t}>({a}, {y}LL)" if y >= 0 else f"(({t})1 / fg_ipow<{t}>({a}, {-y}LL))"

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
               cuda=lambda eqn, args, t: f"fg_floordiv({args[0]}, {args[1]})"
               if _kind(eqn) in "iu" else f"({args[0]} / {args[1]})")


def _div_impl(xp: Any, x: Any, y: Any) -> Any:
    # Integer division floors, as NumPy's // does; floats divide truly.
    if x.dtype.kind in "iub":
        return xp.floor_divide(x, y)
    return xp.true_divide(x, y)


rem_p = binary("rem", "remainder", lambda x, y, a: full(get_aval(x).shape, 1,
                                                        get_aval(x).dtype),
               lambda x, y, a: neg(floor_p.bind(div(x, y))), reads="x0,x1",
               cuda="fg_mod({0}, {1})", torch="remainder")


def _safe_log(x: Any) -> Any:
    zero = eq(x, 0.0)
    return select(zero, 0.0, log(select(zero, 1.0, x)))


pow_p = binary(
    "pow", "power",
    lambda x, y, a: _pow_dx(x, y),
    lambda x, y, a: mul(_safe_log(x), a),
    reads="x0,x1,y0",
    torch="pow",
    cuda=lambda eqn, args, t: f"fg_ipow<{t}>({args[0]}, (long long){args[1]})"
    if _kind(eqn) in "iu" else f"pow({args[0]}, {args[1]})",
)


def _pow_dx(x: Any, y: Any) -> Any:
    # d/dx x**y = y * x**(y-1). Only at x == 0 with y == 0 is that 0 * inf; guard exactly
    # there, so the expression stays smooth in y (its own derivatives are right).
    shape = get_aval(mul(x, y)).shape if get_aval(x).shape != get_aval(y).shape else \
        get_aval(x).shape
    bad = and_p.bind(_full_shape(eq(x, 0.0), shape), _full_shape(eq(y, 0.0), shape))
    safe_x = select(bad, 1.0, _full_shape(x, shape))
    return select(bad, 0.0, mul(y, pow_(safe_x, sub(y, 1.0))))


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
        strict = _indicator(cmp(x, y), ans)
        tie = _indicator(eq(x, y), ans)
        return add(strict, mul(tie, 0.5))

    return partial


max_p = binary("max", "maximum", _chooser_partial(gt),
               lambda x, y, a: _chooser_partial(gt)(y, x, a), kinds="biuf", reads="x0,x1,y0",
               cuda="fg_max({0}, {1})", torch="maximum")
min_p = binary("min", "minimum", _chooser_partial(lt),
               lambda x, y, a: _chooser_partial(lt)(y, x, a), kinds="biuf", reads="x0,x1,y0",
               cuda="fg_min({0}, {1})", torch="minimum")
atan2_p = binary(
    "atan2", "arctan2",
    lambda x, y, a: div(y, add(square(x), square(y))),
    lambda x, y, a: neg(div(x, add(square(x), square(y)))),
    kinds=FLOAT,
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


select_p = Primitive("select", abstract_eval=_select_abstract,
                     impl=lambda xp, p, t, f: xp.where(p, t, f))
select_p.describe(lax="select", fusion="elementwise", cuda="({0} ? {1} : {2})", ufunc=None,
                  torch_method=None, torch_node="Where", lax_fn=lambda p, t, f: select(p, t, f))


def _select_transpose(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    pred = primals[0]
    zeros = full(get_aval(ct).shape, 0, get_aval(ct).dtype)
    return [None, select(pred, ct, zeros), select(pred, zeros, ct)]


linear(select_p, _select_transpose, linear_args=(1, 2))
select_p.batch = elementwise_batch(select_p, rank0_broadcasts=False)

# ------------------------------------------------------------ stop_gradient

stop_gradient_p = Primitive("stop_gradient", abstract_eval=lambda x: x, impl=lambda xp, x: x)
stop_gradient_p.describe(lax="stop_gradient", fusion="elementwise", cuda="{0}", ufunc=None,
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
    return x.astype(new_dtype)


convert_element_type_p = Primitive("convert_element_type", abstract_eval=_convert_abstract,
                                   impl=_convert_impl)
convert_element_type_p.describe(
    lax="convert_element_type", fusion="elementwise", ufunc=None, torch_method=None,
    torch_node="ToCopy", lax_fn=lambda x, new_dtype, weak_type=False: convert_element_type(
        x, new_dtype, weak_type),
    cuda=lambda eqn, args, t: f"(({t})({args[0]} != 0))" if eqn.outputs[0].aval.dtype.kind == "b"
    else f"(({t}){args[0]})")


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
    return [convert_element_type(ct, aval.dtype, aval.weak_type)]


convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.vjp = _convert_vjp
convert_element_type_p.vjp_reads = ""
convert_element_type_p.batch = lambda args, dims, **p: (
    convert_element_type_p.bind(args[0], **p), dims[0])

__all__ = [n for n in dir() if n.endswith("_p")] + [
    "add", "sub", "mul", "div", "max_", "min_", "pow_", "eq", "ne", "lt", "le", "gt", "ge",
    "neg", "exp", "log", "sin", "cos", "sqrt", "rsqrt", "sign", "square", "reciprocal",
    "erf", "erfc",
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
