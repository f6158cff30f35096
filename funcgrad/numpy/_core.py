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
from funcgrad.source_info import user_frame, user_stacklevel


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


def promote_args(*xs: Any) -> list[Any]:
    """Convert the operands to their common dtype under JAX's promotion rules."""
    xs = tuple(asarray(x) for x in xs)
    if len(xs) == 1:
        return list(xs)  # as JAX: one operand keeps its type (a weak boolean stays weak)
    dtype, weak = dtypes.promote(*(typed(x) for x in xs))
    return [cast(x, dtype, weak) for x in xs]


def promote_inexact(*xs: Any) -> list[Any]:
    """Like :func:`promote_args`, then integers and booleans become the default float."""
    xs = tuple(asarray(x) for x in xs)
    dtype, weak = dtypes.promote(*(typed(x) for x in xs))
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float() if weak else to_inexact_dtype(dtype)
    return [cast(x, dtype, weak) for x in xs]


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


def broadcast_shapes(*shapes: Sequence[int], where: str = "") -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(
            f"{where + ': ' if where else ''}shapes {[tuple(s) for s in shapes]} cannot be "
            f"broadcast together (at {user_frame()})"
        ) from None


def broadcast_to_shape(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    xs = shape_of(x)
    if xs == shape:
        return x
    if dtypes.python_scalar(x):
        raise DTypeError("internal: cast scalars before broadcasting")
    if len(xs) > len(shape) or broadcast_shapes(xs, shape) != shape:
        raise ShapeError(f"cannot broadcast shape {xs} to {shape} (at {user_frame()})")
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
            f"{name} {a} is out of bounds for an array of rank {ndim} (at {user_frame()})",
            a, ndim)
    return a % ndim if ndim else 0


def canonical_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """``None`` → every axis; an int or a sequence → sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonical_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ShapeError(f"repeated axis in {axis} (at {user_frame()})")
        return tuple(sorted(axes))
    return (canonical_axis(axis, ndim),)
