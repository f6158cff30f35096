"""Input handling for funcgrad.numpy: conversion to Arrays, JAX's promotion, broadcasting, axes.

>>> import numpy as np
>>> from funcgrad.numpy._core import promote_args
>>> [a.dtype for a in promote_args(np.ones(2, np.float32), 2.0)]
[dtype('float32'), dtype('float32')]
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl, wrap
from funcgrad.core import EvalTrace, Tracer, current_trace, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.source_info import user_frame

# Other array types (the PyTorch face's Tensor) register how to read them as buffers.
_input_converters: list[Callable[[Any], Any]] = []


def register_input_converter(fn: Callable[[Any], Any]) -> None:
    """``fn(x)`` returns the backend buffer behind ``x``, or ``None`` if ``x`` is not its type."""
    _input_converters.append(fn)


def is_array(x: Any) -> bool:
    return isinstance(x, (ArrayImpl, Tracer))


def requested_dtype(dtype: Any, where: str) -> np.dtype[Any]:
    """A dtype asked for explicitly, canonicalized for the x64 mode (with JAX's warning)."""
    dt = dtypes.canonicalize_dtype(dtype)
    if not dtypes.python_scalar(dtype) and dtype not in (float, int, complex, bool):
        asked = dtypes.to_dtype(dtype)
        if asked != dt:
            warnings.warn(
                f"Explicitly requested dtype {asked} requested in {where} is not available, "
                f"and will be truncated to dtype {dt}. To enable more dtypes, set the "
                "jax_enable_x64 configuration option (funcgrad.config.update("
                "'jax_enable_x64', True)) or the JAX_ENABLE_X64 shell environment variable.",
                stacklevel=3,
            )
    return dt


def from_buffer(buf: Any, weak_type: bool = False) -> ArrayImpl:
    """An Array owning ``buf`` (fresh memory nothing else refers to), canonicalized."""
    dt = dtypes.canonicalize_dtype(buf.dtype)
    if buf.dtype != dt:
        buf = buf.astype(dt)
    return wrap(buf, ShapedArray.make(tuple(buf.shape), dt, weak_type))


def _copied(buf: Any, dtype: Any = None) -> ArrayImpl:
    dt = dtypes.canonicalize_dtype(buf.dtype if dtype is None else dtype)
    xp = np if type(buf) is np.ndarray else _module_of(buf)
    return wrap(xp.array(buf, dtype=dt, copy=True), ShapedArray.make(tuple(buf.shape), dt))


def _interned(x: np.ndarray) -> ArrayImpl:
    """A copy of a NumPy array; inside a transformation, one copy per array per trace, so
    an array a traced function closes over becomes one constant however often it is used."""
    trace = current_trace()
    if type(trace) is EvalTrace:
        return _copied(x)
    cache: dict[int, tuple[Any, ArrayImpl]] = trace.__dict__.setdefault("_numpy_consts", {})
    hit = cache.get(id(x))
    if hit is None or hit[0] is not x:
        hit = cache[id(x)] = (x, _copied(x))
    return hit[1]


def _module_of(buf: Any) -> Any:
    import cupy  # noqa: PLC0415 - only for CuPy buffers

    return cupy


def asarray(x: Any, name: str = "argument") -> Any:
    """A value of the JAX face: Arrays and tracers pass, Python scalars stay (weak), NumPy
    data becomes an Array that owns a copy (in the canonical dtype)."""
    t = type(x)
    if t is ArrayImpl or isinstance(x, Tracer) or dtypes.python_scalar(x):
        return x
    if t is np.ndarray:
        if x.dtype not in dtypes.SUPPORTED:
            dtypes.to_dtype(x.dtype)
        return _interned(x)
    for conv in _input_converters:
        buf = conv(x)
        if buf is not None:
            return buf if isinstance(buf, (ArrayImpl, Tracer)) else _copied(buf)
    if t.__module__.startswith("cupy"):
        return _copied(x)
    if isinstance(x, np.generic):
        return _copied(np.asarray(x))
    if isinstance(x, (list, tuple)):
        if any(isinstance(e, (Tracer, ArrayImpl)) or not dtypes.python_scalar(e)
               and not isinstance(e, (list, tuple, np.generic, np.ndarray))
               for e in _flat_items(x)):
            from funcgrad.numpy._shape import stack  # noqa: PLC0415

            return stack([asarray(e) for e in x])
        arr = np.asarray(x)
        if arr.dtype.kind in "OUS":
            raise DTypeError(f"{name} {x!r} is not numeric (at {user_frame()})")
        return from_buffer(arr)
    if hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
        return _copied(np.asarray(x))
    raise DTypeError(
        f"{name} of type {type(x).__name__} is not an array (at {user_frame()}); pass a "
        "funcgrad Array, a NumPy array, a Python number or a list of numbers"
    )


def _flat_items(x: Any) -> list[Any]:
    out: list[Any] = []
    for e in x:
        if isinstance(e, (list, tuple)):
            out.extend(_flat_items(e))
        else:
            out.append(e)
    return out


def typed(x: Any) -> tuple[np.dtype[Any], bool]:
    aval = get_aval(x)
    return aval.dtype, aval.weak_type


def cast(x: Any, dtype: np.dtype[Any], weak: bool = False) -> Any:
    """Convert to ``dtype``; Python scalars become 0-d Arrays (staged as literals)."""
    if dtypes.python_scalar(x):
        return wrap(np.asarray(x, dtype=dtype), ShapedArray.make((), dtype, weak))
    aval = get_aval(x)
    if aval.dtype == dtype and aval.weak_type == weak:
        return x
    return E.convert_element_type(x, dtype, weak)


def promote_args(*xs: Any) -> list[Any]:
    """Convert the operands to their common dtype under JAX's promotion rules."""
    xs = tuple(asarray(x) for x in xs)
    dtype, weak = dtypes.promote(*(typed(x) for x in xs))
    return [cast(x, dtype, weak) for x in xs]


def promote_inexact(*xs: Any) -> list[Any]:
    """Like :func:`promote_args`, then integers and booleans become the default float."""
    xs = tuple(asarray(x) for x in xs)
    dtype, weak = dtypes.promote(*(typed(x) for x in xs))
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return [cast(x, dtype, weak) for x in xs]


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
        raise ShapeError(
            f"{name} {a} is out of bounds for an array of rank {ndim} (at {user_frame()})"
        )
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
