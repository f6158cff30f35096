"""Turning user data into values of the JAX face: Arrays that own their memory, in the
canonical dtypes (``jax_enable_x64``), with no aliasing of the caller's NumPy arrays.

>>> import numpy as np
>>> from funcgrad.conversion import asarray
>>> a = np.ones(2)
>>> x = asarray(a); a[0] = 5.0
>>> x
Array([1., 1.], dtype=float32)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl, input_converters, wrap
from funcgrad.core import EvalTrace, Tracer, current_trace, get_aval
from funcgrad.errors import DTypeError
from funcgrad.ir import ShapedArray
from funcgrad.source_info import user_frame, user_stacklevel

# Other array types (the PyTorch face's Tensor) register how to read them as buffers.
_input_converters = input_converters


def register_input_converter(fn: Callable[[Any], Any]) -> None:
    """``fn(x)`` returns the backend buffer behind ``x``, or ``None`` if ``x`` is not its type."""
    _input_converters.append(fn)


def is_array(x: Any) -> bool:
    return isinstance(x, (ArrayImpl, Tracer))


def requested_dtype(dtype: Any, where: str | None) -> np.dtype[Any]:
    """A dtype asked for explicitly, canonicalized for the x64 mode (with JAX's warning,
    which names ``where`` when given, as JAX's functions do; its samplers do not)."""
    dt = dtypes.canonicalize_dtype(dtype)
    # (identity, not ==: NumPy's float64 dtype equals Python's float, which asks for the
    # default type without a warning)
    if not dtypes.python_scalar(dtype) and not any(dtype is t for t in (float, int, complex,
                                                                        bool)):
        asked = dtypes.to_dtype(dtype)
        if asked != dt:
            warnings.warn(
                f"Explicitly requested dtype {asked}"
                f"{'' if where is None else ' requested in ' + where} is not available, "
                f"and will be truncated to dtype {dt}. To enable more dtypes, set the "
                "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
                "variable. See https://github.com/jax-ml/jax#current-gotchas for more.",
                stacklevel=user_stacklevel(),
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
    if hasattr(x, "__jax_array__"):
        # As JAX: jnp.array/asarray and the operators convert such an object, other
        # functions do not.
        raise ValueError("Triggering __jax_array__() during abstractification is no longer "
                         "supported. To avoid this error, either explicitly convert your "
                         "object using jax.numpy.array(), or register your object as a "
                         "pytree.")
    for conv in _input_converters:
        buf = conv(x)
        if buf is not None:
            return buf if isinstance(buf, (ArrayImpl, Tracer)) else _copied(buf)
    if t.__module__.startswith("cupy"):
        return _copied(x)
    if isinstance(x, np.generic):
        return _copied(np.asarray(x))
    if isinstance(x, (list, tuple)):
        leaves = _flat_items(x)
        typed = False  # a NumPy scalar or array among the leaves: JAX's promotion decides
        for e in leaves:
            if not dtypes.python_scalar(e):
                if not isinstance(e, (np.generic, np.ndarray)):
                    return _stacked([asarray(e) for e in x], leaves)
                typed = True
        if not typed and not any(type(e) in (float, complex) for e in leaves) and any(
                type(e) is int and not -2**63 <= e < 2**63 for e in leaves):
            # JAX reads a list of Python ints as int64 first (NumPy's error beyond it).
            raise OverflowError("Python int too large to convert to C long")
        arr = _typed_list(x, leaves) if typed else np.asarray(x)
        if arr.dtype.kind == "O" and any(type(e) in (float, complex) for e in leaves):
            # Python ints beyond 64 bits beside floats: floats, as JAX reads [2**70, 1.0].
            kind = np.complex128 if any(type(e) is complex for e in leaves) else np.float64
            arr = np.asarray(x, dtype=kind)
        if arr.dtype.kind in "OUS":
            raise DTypeError(f"{name} {x!r} is not numeric (at {user_frame()})")
        if arr.dtype.kind in "iu":
            check_int_range(arr, dtypes.canonicalize(arr.dtype))
        return from_buffer(arr)
    if hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
        return _copied(np.asarray(x))
    raise DTypeError(
        f"{name} of type {type(x).__name__} is not an array (at {user_frame()}); pass a "
        "funcgrad Array, a NumPy array, a Python number or a list of numbers"
    )


def check_int_range(values: Any, dtype: Any) -> None:
    """Python integers out of ``dtype``'s range are NumPy's (and JAX's) OverflowError, not
    wrapped: ``jnp.array([2**40])`` with 64-bit mode off, ``jnp.array([300], jnp.uint8)``."""
    dt = np.dtype(dtype)
    if dt.kind not in "iu":
        return
    info = np.iinfo(dt)
    arr = np.asarray(values)
    if arr.size == 0 or arr.dtype.kind not in "iuO":
        return
    bad = arr[(arr < info.min) | (arr > info.max)]
    if bad.size:
        first = int(bad.flat[0])
        np.asarray(first, dtype=dt)  # NumPy's own error (beyond 64 bits: "C long")
        raise OverflowError(f"Python integer {first} out of bounds for {dt.name}")


def _flat_items(x: Any) -> list[Any]:
    out: list[Any] = []
    for e in x:
        if isinstance(e, (list, tuple)):
            out.extend(_flat_items(e))
        else:
            out.append(e)
    return out




def _leaf_dtype(leaves: list[Any]) -> np.dtype[Any]:
    """JAX's dtype for an array made of a list's ``leaves``: their promotion (Python
    scalars weakly typed, NumPy scalars and arrays not), canonicalized; strong."""
    return dtypes.canonicalize_dtype(dtypes.promote(*map(_leaf_typed, leaves))[0])


def _leaf_typed(e: Any) -> tuple[np.dtype[Any], bool]:
    if dtypes.python_scalar(e):
        return dtypes._python_type_node(type(e))
    if isinstance(e, (np.generic, np.ndarray)):
        return dtypes.to_dtype(e.dtype), False
    aval = get_aval(e if isinstance(e, (ArrayImpl, Tracer)) else asarray(e))
    return aval.dtype, aval.weak_type


def _typed_list(x: Any, leaves: list[Any]) -> Any:
    """A NumPy array of a (nested) list holding NumPy scalars or arrays, in JAX's dtype:
    ``[np.int8(1), 2]`` is int8 (a Python integer out of its range NumPy's OverflowError).
    """
    try:
        dt = _leaf_dtype(leaves)
    except (DTypeError, TypeError, ValueError):
        return np.asarray(x)  # strings and other non-numbers: the caller's error
    return np.asarray(x, dtype=dt)


def _stacked(items: list[Any], leaves: list[Any]) -> Any:
    """Stack values (tracers among them) along a new leading axis, in the (strong) dtype
    JAX gives an array of the list's ``leaves``."""
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives import structural as S  # noqa: PLC0415

    dt, weak = _leaf_dtype(leaves), False
    shapes = {get_aval(i).shape for i in items}
    if len(shapes) != 1:
        from funcgrad.errors import ShapeError  # noqa: PLC0415

        raise ShapeError(f"all the input arrays must have the same shape, got "
                         f"{sorted(shapes)} (at {user_frame()})")
    parts = []
    for i in items:
        if dtypes.python_scalar(i):
            i = wrap(np.asarray(i, dt), ShapedArray.make((), dt, weak))
        i = E.convert_element_type(i, dt, weak)
        parts.append(S.expand_dims(i, (0,)))
    return S.concatenate(parts, 0)
