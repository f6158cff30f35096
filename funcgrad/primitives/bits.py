"""Bit-level primitives on integers: shifts (XLA's semantics for every shift amount),
population count, count of leading zeros, and ``bitcast_convert_type``.

A shift by an amount outside ``[0, bits)`` (read as unsigned, so negative amounts are out
of range too) gives 0, or the sign fill for an arithmetic right shift, as XLA defines it
(C leaves it undefined). All of them are piecewise constant: their derivatives are zero.

>>> import numpy as np
>>> from funcgrad.primitives.bits import shift_left, population_count
>>> shift_left(np.array([1, 1], np.int32), np.array([3, 40], np.int32))
Array([8, 0], dtype=int32)
>>> population_count(np.array([7, -1], np.int8))
Array([3, 8], dtype=int8)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Primitive
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import binary, move_to_front, unary

INT = "iu"
_UNSIGNED_C = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int",
               8: "unsigned long long"}
_SIGNED_C = {1: "signed char", 2: "short", 4: "int", 8: "long long"}


def _width(eqn: Any) -> int:
    return int(eqn.inputs[0].aval.dtype.itemsize)


def _unsigned(dt: Any) -> Any:
    return np.dtype(f"u{np.dtype(dt).itemsize}")


def _signed(dt: Any) -> Any:
    return np.dtype(f"i{np.dtype(dt).itemsize}")


def _amount(xp: Any, y: Any, bits: int) -> tuple[Any, Any]:
    """The shift amount read as unsigned, whether it is in range, and a safe amount."""
    u = y.view(_unsigned(y.dtype))
    ok = u < bits
    return ok, xp.where(ok, u, 0).astype(_unsigned(y.dtype))


def _shift_left_impl(xp: Any, x: Any, y: Any) -> Any:
    bits = x.dtype.itemsize * 8
    ok, s = _amount(xp, y, bits)
    ux = x.view(_unsigned(x.dtype))
    return xp.where(ok, ux << s, 0).astype(_unsigned(x.dtype)).view(x.dtype)


def _shift_right_logical_impl(xp: Any, x: Any, y: Any) -> Any:
    bits = x.dtype.itemsize * 8
    ok, s = _amount(xp, y, bits)
    ux = x.view(_unsigned(x.dtype))
    return xp.where(ok, ux >> s, 0).astype(_unsigned(x.dtype)).view(x.dtype)


def _shift_right_arithmetic_impl(xp: Any, x: Any, y: Any) -> Any:
    bits = x.dtype.itemsize * 8
    ok, s = _amount(xp, y, bits)
    sx = x.view(_signed(x.dtype))
    s = xp.where(ok, s, bits - 1).astype(_signed(x.dtype))
    return (sx >> s).astype(_signed(x.dtype)).view(x.dtype)


def _shift_cuda(kind: str) -> Callable[..., str]:
    def expr(eqn: Any, args: Sequence[str], t: str) -> str:
        w = _width(eqn)
        u, s, bits = _UNSIGNED_C[w], _SIGNED_C[w], 8 * w
        x, y = args
        amount = f"(({u})({y}))"
        if kind == "left":
            return f"({amount} < {bits} ? ({t})(({u})({x}) << {amount}) : ({t})0)"
        if kind == "logical":
            return f"({amount} < {bits} ? ({t})(({u})({x}) >> {amount}) : ({t})0)"
        return f"(({t})(({s})({x}) >> ({amount} < {bits} ? {amount} : ({u}){bits - 1})))"

    return expr


shift_left_p = binary("shift_left", _shift_left_impl, kinds=INT, zero_derivative=True,
                      cuda=_shift_cuda("left"))
shift_right_logical_p = binary("shift_right_logical", _shift_right_logical_impl, kinds=INT,
                               zero_derivative=True, cuda=_shift_cuda("logical"))
shift_right_arithmetic_p = binary("shift_right_arithmetic", _shift_right_arithmetic_impl,
                                  kinds=INT, zero_derivative=True,
                                  cuda=_shift_cuda("arithmetic"),
                                  torch=None)


def _popcount_impl(xp: Any, x: Any) -> Any:
    u = x.view(_unsigned(x.dtype))
    count = xp.zeros(x.shape, _unsigned(x.dtype))
    for i in range(x.dtype.itemsize * 8):
        count += (u >> _unsigned(x.dtype).type(i)) & _unsigned(x.dtype).type(1)
    return count.astype(x.dtype)


def _clz_impl(xp: Any, x: Any) -> Any:
    bits = x.dtype.itemsize * 8
    u = x.view(_unsigned(x.dtype))
    one = _unsigned(x.dtype).type(1)
    # The position of the highest set bit, found from the top; bits where none is set.
    count = xp.full(x.shape, bits, np.int64)
    for i in range(bits):
        hit = ((u >> _unsigned(x.dtype).type(i)) & one) != 0
        count = xp.where(hit, bits - 1 - i, count)
    return count.astype(x.dtype)


def _popc_cuda(eqn: Any, args: Sequence[str], t: str) -> str:
    w = _width(eqn)
    if w == 8:
        return f"(({t})__popcll((unsigned long long)({args[0]})))"
    return f"(({t})__popc((unsigned int)(({_UNSIGNED_C[w]})({args[0]}))))"


def _clz_cuda(eqn: Any, args: Sequence[str], t: str) -> str:
    w = _width(eqn)
    if w == 8:
        return f"(({t})__clzll((long long)({args[0]})))"
    return f"(({t})(__clz((int)(({_UNSIGNED_C[w]})({args[0]}))) - {32 - 8 * w}))"


population_count_p = unary("population_count", _popcount_impl, kinds=INT,
                           zero_derivative=True, cuda=_popc_cuda)
clz_p = unary("clz", _clz_impl, kinds=INT, zero_derivative=True, cuda=_clz_cuda)


def shift_left(x: Any, y: Any) -> Any:
    """``x << y`` elementwise; 0 where ``y`` is outside ``[0, bits)``.

    >>> import numpy as np
    >>> shift_left(np.array([3], np.uint8), np.array([7], np.uint8))
    Array([128], dtype=uint8)
    """
    return _call(shift_left_p, x, y)


def shift_right_logical(x: Any, y: Any) -> Any:
    """``x >> y`` filling with zeros (the bits read as unsigned).

    >>> import numpy as np
    >>> shift_right_logical(np.array([-8], np.int8), np.array([1], np.int8))
    Array([124], dtype=int8)
    """
    return _call(shift_right_logical_p, x, y)


def shift_right_arithmetic(x: Any, y: Any) -> Any:
    """``x >> y`` filling with the sign bit.

    >>> import numpy as np
    >>> shift_right_arithmetic(np.array([-8], np.int8), np.array([1], np.int8))
    Array([-4], dtype=int8)
    """
    return _call(shift_right_arithmetic_p, x, y)


def population_count(x: Any) -> Any:
    """The number of set bits of each element.

    >>> import numpy as np
    >>> population_count(np.array([255], np.uint8))
    Array([8], dtype=uint8)
    """
    return population_count_p.bind(x)


def clz(x: Any) -> Any:
    """The number of leading zero bits of each element.

    >>> import numpy as np
    >>> clz(np.array([1, 0], np.int32))
    Array([31, 32], dtype=int32)
    """
    return clz_p.bind(x)



def _call(prim: Primitive, *args: Any) -> Any:
    """The primitive's lax function (Python numbers take the other operand's dtype)."""
    fn = prim.lax_fn
    assert fn is not None
    return fn(*args)

# ----------------------------------------------------------- bitcast_convert_type


def _bitcast_abstract(x: ShapedArray, *, new_dtype: Any) -> ShapedArray:
    new = np.dtype(new_dtype)
    if dtypes.bool_ in (x.dtype, new):
        raise DTypeError("bitcast_convert_type does not convert from or to bool; compare "
                         "with 0 (x != 0) or convert_element_type instead")
    old_size, new_size = x.dtype.itemsize, new.itemsize
    if old_size == new_size:
        return ShapedArray(x.shape, new)
    if old_size > new_size:
        # A wider element becomes a trailing axis of narrower ones.
        return ShapedArray((*x.shape, old_size // new_size), new)
    ratio = new_size // old_size
    if not x.shape or x.shape[-1] != ratio:
        raise ShapeError(
            f"bitcast_convert_type from {x.dtype} to {new} needs a last axis of size "
            f"{ratio} (the {ratio} narrow elements of each wide one), got shape {x.shape}")
    return ShapedArray(x.shape[:-1], new)


def _bitcast_impl(xp: Any, x: Any, *, new_dtype: Any) -> Any:
    new = np.dtype(new_dtype)
    if not x.flags.c_contiguous:
        x = x.copy()
    if x.dtype.itemsize == new.itemsize:
        return x.view(new)
    if x.dtype.itemsize > new.itemsize:
        return x.reshape((*x.shape, 1)).view(new)
    return x.view(new).reshape(x.shape[:-1])


bitcast_convert_type_p = Primitive("bitcast_convert_type", abstract_eval=_bitcast_abstract,
                                   impl=_bitcast_impl)
bitcast_convert_type_p.jvp = lambda primals, tangents, **p: (
    bitcast_convert_type_p.bind(primals[0], **p), None)
bitcast_convert_type_p.vjp = lambda ct, primals, ans, **p: [None]
bitcast_convert_type_p.vjp_reads = ""
bitcast_convert_type_p.zero_derivative = True
# Only trailing axes change, so the batch axis goes first and stays there.
bitcast_convert_type_p.batch = lambda args, dims, **p: (
    bitcast_convert_type_p.bind(move_to_front(args[0], dims[0]), **p), 0)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """The bits of ``operand`` read as ``new_dtype`` (a narrower type adds a trailing axis,
    a wider one consumes it).

    >>> import numpy as np
    >>> bitcast_convert_type(np.array([1.0], np.float32), np.int32)
    Array([1065353216], dtype=int32)
    """
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize(new_dtype))


bitcast_convert_type_p.describe(lax="bitcast_convert_type", fusion=None, cuda=None,
                                ufunc=None, torch_method=None, torch_node="View",
                                lax_fn=bitcast_convert_type)
shift_left_p.torch_node = "BitwiseLeftShift"
shift_right_arithmetic_p.torch_node = "BitwiseRightShift"

__all__ = [
    "shift_left", "shift_left_p", "shift_right_logical", "shift_right_logical_p",
    "shift_right_arithmetic", "shift_right_arithmetic_p", "population_count",
    "population_count_p", "clz", "clz_p", "bitcast_convert_type", "bitcast_convert_type_p",
]
