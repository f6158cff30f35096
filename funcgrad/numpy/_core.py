"""Input handling for funcgrad.numpy: conversion to Arrays, JAX's promotion, broadcasting, axes.

>>> import numpy as np
>>> from funcgrad.numpy._core import promote_args
>>> [a.dtype for a in promote_args(np.ones(2, np.float32), 2.0)]
[dtype('float32'), dtype('float32')]
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.conversion import (  # noqa: F401 - re-exported for the numpy layer
    asarray,
    from_buffer,
    is_array,
    register_input_converter,
    requested_dtype,
)
from funcgrad.core import get_aval
from funcgrad.errors import AxisError, DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.source_info import user_stacklevel


def typed(x: Any) -> tuple[np.dtype[Any], bool]:
    aval = get_aval(x)
    return aval.dtype, aval.weak_type


def cast(x: Any, dtype: np.dtype[Any], weak: bool = False) -> Any:
    """Convert to ``dtype``; Python scalars become 0-d Arrays (staged as literals)."""
    if type(x) is complex and np.dtype(dtype).kind != "c":
        # As JAX's conversion: the real part, with NumPy's warning.
        warnings.warn("Casting complex values to real discards the imaginary part",
                      np.exceptions.ComplexWarning, stacklevel=user_stacklevel())
        x = x.real
    if dtypes.python_scalar(x):
        if type(x) is int:
            # JAX takes a Python int as the default integer type first (2**40 overflows
            # with 64-bit mode off, even beside floats), then converts it, wrapping into a
            # narrower integer type (int8 array * 200 is -56) where NumPy 2 would raise.
            default = dtypes.canonicalize(np.int64)
            if not np.iinfo(default).min <= x <= np.iinfo(default).max:
                raise OverflowError(f"Python int {x} too large to convert to {default.name}")
            if np.dtype(dtype).kind in "iu":
                return wrap(np.asarray(x).astype(dtype), ShapedArray.make((), dtype, weak))
        return wrap(np.asarray(x, dtype=dtype), ShapedArray.make((), dtype, weak))
    aval = get_aval(x)
    if aval.dtype == dtype and aval.weak_type == weak:
        return x
    return E.convert_element_type(x, dtype, weak)


def check_arraylike(name: str, *args: Any) -> None:
    """JAX's ``check_arraylike``: a list or tuple is no array argument (JAX asks for
    ``jnp.asarray`` first), with JAX's TypeError text; ``name`` is the one JAX's message
    gives. Hot paths (reshape, take, matmul...) call it only once an ``isinstance`` test
    has found a list or tuple: the call costs more than the rest of a cheap op's checks.

    >>> check_arraylike("sort", np.ones(3), 2.0)
    >>> check_arraylike("sort", [1.0])
    Traceback (most recent call last):
    TypeError: sort requires ndarray or scalar arguments, got <class 'list'> at position 0.
    """
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} "
                            f"at position {i}.")


def check_arraylike_seq(name: str, arrays: Any) -> None:
    """:func:`check_arraylike` on the entries of a list or tuple of arrays (``arrays`` may
    also be one array, whose rows are the entries and need no check).

    >>> check_arraylike_seq("stack", [np.ones(2), [1.0, 2.0]])
    Traceback (most recent call last):
    TypeError: stack requires ndarray or scalar arguments, got <class 'list'> at position 1.
    """
    if isinstance(arrays, (list, tuple)):
        check_arraylike(name, *arrays)


def promote_args(*xs: Any, names: Sequence[str] = ()) -> list[Any]:
    """Convert the operands to their common dtype under JAX's promotion rules (``names``:
    the parameters JAX's overflow error names, ``x`` and ``y`` of a binary function)."""
    xs = tuple(asarray(x) for x in xs)
    if len(xs) == 1:
        return list(xs)  # as JAX: one operand keeps its type (a weak boolean stays weak)
    dtype, weak = dtypes.promote(*(typed(x) for x in xs))
    return _cast_all(xs, dtype, weak, names)


def promote_inexact(*xs: Any, names: Sequence[str] = ()) -> list[Any]:
    """Like :func:`promote_args`, then integers and booleans become the default float."""
    xs = tuple(asarray(x) for x in xs)
    dtype, weak = dtypes.promote(*(typed(x) for x in xs))
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float() if weak else to_inexact_dtype(dtype)
    return _cast_all(xs, dtype, weak, names)


def _cast_all(xs: Sequence[Any], dtype: Any, weak: bool, names: Sequence[str]) -> list[Any]:
    out = []
    for i, x in enumerate(xs):
        try:
            out.append(cast(x, dtype, weak))
        except OverflowError:
            if i >= len(names):
                raise
            # JAX's text: its jnp functions are jitted, and the int is their argument.
            raise OverflowError(
                "An overflow was encountered while parsing an argument to a jitted "
                f"computation, whose argument path is {names[i]}. Got {type(x)} with value "
                f"{x}") from None
    return out


def to_inexact_dtype(dtype: Any) -> np.dtype[Any]:
    """JAX's table: bool and integers of up to 32 bits become float32, 64-bit integers the
    default float; inexact types stay.

    >>> to_inexact_dtype(np.dtype("int16")), to_inexact_dtype(np.dtype("float16"))
    (dtype('float32'), dtype('float16'))
    """
    dt = np.dtype(dtype)
    if dtypes.is_inexact(dt):
        return dt
    return np.dtype(np.float32) if dt.itemsize < 8 else dtypes.default_float()


def shape_of(x: Any) -> tuple[int, ...]:
    return () if dtypes.python_scalar(x) else tuple(get_aval(x).shape)


# The lax primitive JAX names when the operands of a binary jnp function have the same rank
# but do not broadcast ("add got incompatible shapes for broadcasting: (3,), (4,).").
_LAX_NAMES = {"subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
              "floor_divide": "div", "maximum": "max", "minimum": "min", "power": "pow",
              "float_power": "pow", "remainder": "rem", "mod": "rem", "fmod": "rem",
              "arctan2": "atan2", "logaddexp": "max", "logaddexp2": "max", "equal": "eq",
              "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
              "greater_equal": "ge", "logical_and": "and", "bitwise_and": "and",
              "logical_or": "or", "bitwise_or": "or", "logical_xor": "xor",
              "bitwise_xor": "xor", "left_shift": "shift_left",
              "right_shift": "shift_right_arithmetic"}


def broadcast_shapes(*shapes: Sequence[int], where: str = "") -> tuple[int, ...]:
    """The broadcast shape, or JAX's error: a binary function's lax primitive names
    operands of one rank, ``jnp``'s rank promotion the others."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        shapes = tuple(tuple(s) for s in shapes)
        if where and where != "broadcast_shapes" and len(shapes) == 2 \
                and len(shapes[0]) == len(shapes[1]):
            raise ShapeError(f"{_LAX_NAMES.get(where, where)} got incompatible shapes for "
                             f"broadcasting: {shapes[0]}, {shapes[1]}.") from None
        raise ShapeError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}"
                         ) from None


def broadcast_to_shape(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    xs = shape_of(x)
    if xs == shape:
        return x
    if dtypes.python_scalar(x):
        raise DTypeError("internal: cast scalars before broadcasting")
    if len(xs) > len(shape):
        raise ShapeError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={xs} shape={shape}")
    if any(d not in (1, s) for d, s in zip(xs, shape[len(shape) - len(xs):])):
        dt = get_aval(x).dtype.name
        raise ShapeError(
            f"Incompatible types for broadcasting: input type={dt}[{','.join(map(str, xs))}] "
            f"and requested type={dt}[{','.join(map(str, shape))}]")
    dims = tuple(range(len(shape) - len(xs), len(shape)))
    return S.broadcast_in_dim(x, shape, dims)


def broadcast_args(*xs: Any, keep_scalars: bool = True, where: str = "") -> list[Any]:
    """Broadcast to a common shape; rank-0 operands stay rank 0 when ``keep_scalars``."""
    shape = broadcast_shapes(*(shape_of(x) for x in xs), where=where)
    return [x if keep_scalars and shape_of(x) == () else broadcast_to_shape(x, shape)
            for x in xs]


def canonical_axis(axis: Any, ndim: int, name: str = "axis") -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {axis!r}") from None
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{name} {a} is out of bounds for array of dimension {ndim}", a, ndim)
    return a % ndim if ndim else 0


def canonical_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``None`` → every axis; an int or a sequence → sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonical_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"duplicate value in 'axis': {tuple(axis)}")
        return tuple(sorted(axes))
    return (canonical_axis(axis, ndim),)
