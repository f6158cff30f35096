"""JAX's scalar types: ``jnp.float32`` is a dtype-like *and* a constructor.

``jnp.float32(2)`` makes an Array, ``x.astype(jnp.float32)`` and ``dtype=jnp.float32``
name the dtype, ``np.dtype(jnp.float32)`` is float32 and ``jnp.float32 == np.float32``.

>>> import funcgrad.numpy as jnp
>>> jnp.float32(2)
Array(2., dtype=float32)
>>> jnp.dtype(jnp.int8)
dtype('int8')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes


class _ScalarMeta(type):
    dtype: np.dtype[Any]

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: object) -> bool:
        return other is cls or other is cls.dtype.type or (
            isinstance(other, np.dtype) and other == cls.dtype)

    def __ne__(cls, other: object) -> bool:
        return not cls.__eq__(other)

    def __call__(cls, x: Any) -> Any:
        from funcgrad.conversion import requested_dtype  # noqa: PLC0415
        from funcgrad.numpy._creation import array  # noqa: PLC0415

        return array(x, dtype=requested_dtype(cls.dtype, "asarray"))

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)


def _make(name: str, dt: np.dtype[Any]) -> Any:
    return _ScalarMeta(name, (object,), {"dtype": dt, "__module__": "funcgrad.numpy",
                                         "__doc__": f"The {dt.name} scalar type."})


bool_ = _make("bool", dtypes.bool_)  # JAX names the class `bool`
int8 = _make("int8", dtypes.int8)
int16 = _make("int16", dtypes.int16)
int32 = _make("int32", dtypes.int32)
int64 = _make("int64", dtypes.int64)
uint8 = _make("uint8", dtypes.uint8)
uint16 = _make("uint16", dtypes.uint16)
uint32 = _make("uint32", dtypes.uint32)
uint64 = _make("uint64", dtypes.uint64)
bfloat16 = _make("bfloat16", dtypes.bfloat16)
float16 = _make("float16", dtypes.float16)
float32 = _make("float32", dtypes.float32)
float64 = _make("float64", dtypes.float64)
complex64 = _make("complex64", dtypes.complex64)
complex128 = _make("complex128", dtypes.complex128)
# JAX's aliases for the 64-bit defaults (which canonicalize with x64 off).
float_ = float64
int_ = int64
uint = uint64
complex_ = complex128
single, double = float32, float64
csingle, cdouble = complex64, complex128
half = float16

__all__ = [
    "bfloat16", "bool_", "cdouble", "complex128", "complex64", "complex_", "csingle", "double",
    "float16", "float32", "float64", "float_", "half", "int16", "int32", "int64", "int8",
    "int_", "single", "uint", "uint16", "uint32", "uint64", "uint8",
]
