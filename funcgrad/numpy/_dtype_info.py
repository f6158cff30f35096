"""Dtype queries of funcgrad.numpy: ``finfo``, ``iinfo``, ``issubdtype``, ``isdtype``,
``can_cast``, ``broadcast_shapes`` and the abstract scalar classes (``jnp.floating``...),
plus ml_dtypes' narrow types (``int4``, ``float8_e4m3fn``...) as scalar types.

>>> import funcgrad.numpy as fnp
>>> fnp.issubdtype(fnp.bfloat16, fnp.floating), fnp.finfo(fnp.float32).bits
(True, 32)
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

from funcgrad import dtypes
from funcgrad.numpy._core import broadcast_shapes as _broadcast_shapes
from funcgrad.numpy._scalar_types import _make, _ScalarMeta, bool_

generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
character = np.character
flexible = np.flexible
object_ = np.object_
bool = bool_  # noqa: A001 - jax.numpy's name for the boolean scalar type

_NARROW_INTS = ("int1", "int2", "int4", "uint1", "uint2", "uint4")
_NARROW_FLOATS = ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                  "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                  "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")
_ML_TYPES: dict[str, Any] = {n: getattr(ml_dtypes, n) for n in
                             (*_NARROW_INTS, *_NARROW_FLOATS, "bfloat16")}

int1 = _make("int1", np.dtype(ml_dtypes.int1))
int2 = _make("int2", np.dtype(ml_dtypes.int2))
int4 = _make("int4", np.dtype(ml_dtypes.int4))
uint1 = _make("uint1", np.dtype(ml_dtypes.uint1))
uint2 = _make("uint2", np.dtype(ml_dtypes.uint2))
uint4 = _make("uint4", np.dtype(ml_dtypes.uint4))
float8_e3m4 = _make("float8_e3m4", np.dtype(ml_dtypes.float8_e3m4))
float8_e4m3 = _make("float8_e4m3", np.dtype(ml_dtypes.float8_e4m3))
float8_e4m3b11fnuz = _make("float8_e4m3b11fnuz", np.dtype(ml_dtypes.float8_e4m3b11fnuz))
float8_e4m3fn = _make("float8_e4m3fn", np.dtype(ml_dtypes.float8_e4m3fn))
float8_e4m3fnuz = _make("float8_e4m3fnuz", np.dtype(ml_dtypes.float8_e4m3fnuz))
float8_e5m2 = _make("float8_e5m2", np.dtype(ml_dtypes.float8_e5m2))
float8_e5m2fnuz = _make("float8_e5m2fnuz", np.dtype(ml_dtypes.float8_e5m2fnuz))
float8_e8m0fnu = _make("float8_e8m0fnu", np.dtype(ml_dtypes.float8_e8m0fnu))
float6_e2m3fn = _make("float6_e2m3fn", np.dtype(ml_dtypes.float6_e2m3fn))
float6_e3m2fn = _make("float6_e3m2fn", np.dtype(ml_dtypes.float6_e3m2fn))
float4_e2m1fn = _make("float4_e2m1fn", np.dtype(ml_dtypes.float4_e2m1fn))


def _to_dtype(x: Any) -> np.dtype[Any]:
    if isinstance(x, _ScalarMeta):
        return x.dtype
    if hasattr(x, "dtype") and not isinstance(x, type):
        return np.dtype(x.dtype)
    return np.dtype(x)


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating point type (ml_dtypes' ``finfo``, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.finfo(fnp.bfloat16).eps)
    0.0078125
    """
    return ml_dtypes.finfo(_to_dtype(dtype))


def iinfo(int_type: Any) -> Any:
    """Machine limits of an integer type.

    >>> import funcgrad.numpy as fnp
    >>> fnp.iinfo(fnp.int8).max
    127
    """
    return ml_dtypes.iinfo(_to_dtype(int_type))


def _category(t: Any) -> Any:
    """The NumPy abstract class an ml_dtypes type belongs to, or ``None``."""
    name = getattr(t, "__name__", "")
    if name in _NARROW_INTS:
        return np.unsignedinteger if name.startswith("u") else np.signedinteger
    if name in _ML_TYPES:
        return np.floating
    return None


def _as_type(x: Any) -> Any:
    if isinstance(x, _ScalarMeta):
        return x.dtype.type
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return _to_dtype(x).type


def issubdtype(arg1: Any, arg2: Any) -> builtins.bool:
    """Whether ``arg1`` is a sub-type of ``arg2`` in NumPy's type tree (ml_dtypes' types
    included: ``bfloat16`` is a ``floating``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.issubdtype(fnp.int32, fnp.integer), fnp.issubdtype(fnp.float32, fnp.integer)
    (True, False)
    """
    abstract_key = arg2 is dtypes.prng_key or arg2 is dtypes.extended
    if isinstance(arg1, dtypes.ExtendedDType):  # a typed key's dtype
        return abstract_key or isinstance(arg2, dtypes.ExtendedDType)
    if isinstance(arg1, type) and issubclass(arg1, dtypes.extended):
        # the abstract classes themselves: prng_key is an extended type
        return isinstance(arg2, type) and issubclass(arg1, arg2)
    if abstract_key or isinstance(arg2, dtypes.ExtendedDType):
        return False
    t1 = _as_type(arg1)
    t2 = arg2 if isinstance(arg2, type) and issubclass(arg2, np.generic) and \
        arg2 in (np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
                 np.inexact, np.floating, np.complexfloating, np.character,
                 np.flexible) else _as_type(arg2)
    cat1 = _category(t1)
    if cat1 is not None:
        return builtins.bool(t1 == t2 or (isinstance(t2, type) and issubclass(cat1, t2)))
    if _category(t2) is not None:
        return False
    return builtins.bool(np.issubdtype(t1, t2))


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: issubdtype(d, np.signedinteger),
    "unsigned integer": lambda d: issubdtype(d, np.unsignedinteger),
    "integral": lambda d: issubdtype(d, np.integer),
    "real floating": lambda d: issubdtype(d, np.floating),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind != "b" and (issubdtype(d, np.number)
                                            or _category(d.type) is not None),
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """The array API's dtype-kind test: ``kind`` is a dtype, a kind name ("bool",
    "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
    "numeric") or a tuple of them.

    >>> import funcgrad.numpy as fnp
    >>> fnp.isdtype(fnp.float32, "real floating"), fnp.isdtype(fnp.int8, ("bool", "integral"))
    (True, True)
    """
    d = _to_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized {k=!r}; expected one of {sorted(_KINDS)}")
            if _KINDS[k](d):
                return True
        elif _to_dtype(k) == d:
            return True
    return False


def can_cast(from_: Any, to: Any, casting: Any = "safe") -> builtins.bool:
    """Whether ``from_`` converts to ``to`` under NumPy's ``casting`` rule.

    >>> import funcgrad.numpy as fnp
    >>> fnp.can_cast(fnp.int8, fnp.int32), fnp.can_cast(fnp.int32, fnp.float32)
    (True, False)
    """
    return builtins.bool(np.can_cast(_to_dtype(from_), _to_dtype(to), casting))


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to.

    >>> import funcgrad.numpy as fnp
    >>> fnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return _broadcast_shapes(*[(s,) if isinstance(s, int) else tuple(s) for s in shapes],
                             where="broadcast_shapes")


__all__ = [
    "broadcast_shapes", "can_cast", "character", "complexfloating", "finfo",
    "flexible", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
    "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "floating", "generic", "iinfo", "inexact", "int1",
    "int2", "int4", "integer", "isdtype", "issubdtype", "number", "object_", "signedinteger",
    "uint1", "uint2", "uint4", "unsignedinteger",
]
