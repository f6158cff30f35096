"""Dtypes and NumPy 2 (NEP 50) type promotion with weakly typed scalars.

Python scalars are *weak*: they take the dtype of the array they meet as long
as the kind allows (``float32 * 2.0`` stays float32, ``int8 + 1`` stays int8,
``int32 * 2.0`` becomes float64 because the kind must rise to float).

>>> import numpy as np
>>> from funcgrad.dtypes import promote
>>> promote((np.dtype("float32"), False), (np.dtype("float64"), True))
(dtype('float32'), False)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.errors import DTypeError

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

# funcgrad.numpy follows NumPy's defaults; the Tensor facade picks float32.
default_float = float64
default_int = int64
default_complex = complex128

_SUPPORTED = {
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, float32, float64, complex64, complex128,
}

_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}


def canonicalize(dtype: Any) -> np.dtype[Any]:
    """Turn a dtype-like (``"float32"``, ``np.float32``, ``float``) into a supported dtype."""
    if dtype is float:
        return default_float
    if dtype is int:
        return default_int
    if dtype is bool:
        return bool_
    if dtype is complex:
        return default_complex
    try:
        dt: np.dtype[Any] = np.dtype(dtype)
    except TypeError as e:
        raise DTypeError(f"{dtype!r} is not a dtype funcgrad understands: {e}") from None
    if dt not in _SUPPORTED:
        raise DTypeError(
            f"dtype {dt} is not supported by funcgrad; use one of bool, (u)int8..64, "
            "float16/32/64 or complex64/128"
        )
    return dt


def short_name(dtype: np.dtype[Any]) -> str:
    """The jaxpr printer's name for a dtype: ``f32``, ``i64``, ``bool``."""
    return _SHORT.get(dtype.name, str(dtype.name))


def is_float(dtype: np.dtype[Any]) -> bool:
    return dtype.kind == "f"


def is_inexact(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "fc"


def is_integer(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "iu"


def is_bool(dtype: np.dtype[Any]) -> bool:
    return dtype.kind == "b"


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def scalar_kind_dtype(value: Any) -> np.dtype[Any]:
    """The default dtype of a Python scalar, before weak promotion."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return default_int
    if isinstance(value, float):
        return default_float
    if isinstance(value, complex):
        return default_complex
    raise DTypeError(f"{type(value).__name__} {value!r} is not a number funcgrad can use")


def promote(*typed: tuple[np.dtype[Any], bool]) -> tuple[np.dtype[Any], bool]:
    """Result dtype and weakness of an operation on ``(dtype, weak)`` operands (NEP 50).

    Strong operands promote with NumPy's table; weak ones only raise the kind
    (bool < int < float < complex) and then take the default dtype of that kind
    at the precision of the strong operand when it has one.
    """
    if not typed:
        raise DTypeError("promote() needs at least one operand")
    strong = [d for d, w in typed if not w]
    weak = [d for d, w in typed if w]
    if not strong:
        return np.result_type(*weak), True
    result = np.result_type(*strong) if len(strong) > 1 else strong[0]
    for w in weak:
        if _KIND_RANK[w.kind] <= _KIND_RANK[result.kind] or w.kind == "b":
            continue
        if w.kind == "f":
            result = default_float if result.kind in "biu" else result
        elif w.kind == "c":
            result = (
                complex64 if result in (float32, float16, complex64) else default_complex
            )
        elif w.kind in "iu":
            result = default_int
    return result, False


def python_scalar(value: Any) -> bool:
    """True for Python bool/int/float/complex (not NumPy scalars)."""
    return type(value) in (bool, int, float, complex)
