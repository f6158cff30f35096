"""PyTorch's dtypes and its type promotion, for the PyTorch face.

``torch.float32`` prints as ``torch.float32`` and stands for NumPy's float32 underneath.
Promotion follows PyTorch: categories bool < integer < floating < complex, and among the
operands, tensors with dimensions outrank zero-dimensional tensors, which outrank
Python numbers; a lower-ranked operand only matters when its category is higher (then a
Python float takes the default dtype, ``torch.get_default_dtype()``).

>>> import funcgrad.torch as torch
>>> torch.float32
torch.float32
>>> torch.promote_types(torch.uint8, torch.int8)
torch.int16
>>> torch.result_type(torch.tensor([1, 2]), 2.5)
torch.float32
"""

from __future__ import annotations

import builtins
import threading
from typing import Any

import ml_dtypes
import numpy as np


class dtype:  # noqa: N801 - PyTorch's name
    """A PyTorch dtype: ``torch.float32``, ``torch.int64``, ``torch.bool``..."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize",
                 "_aliases")

    def __init__(self, name: str, np_dtype: Any) -> None:
        self.name = name
        self.np: np.dtype[Any] = np.dtype(np_dtype)
        kind = "f" if self.np == np.dtype(ml_dtypes.bfloat16) else self.np.kind
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind in "ifc"
        self.itemsize = int(self.np.itemsize)

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)

    def __reduce__(self) -> Any:
        return (_by_name, (self.name,))


float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
float16 = dtype("float16", np.float16)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16)
int8 = dtype("int8", np.int8)
int16 = dtype("int16", np.int16)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
uint16 = dtype("uint16", np.uint16)
uint32 = dtype("uint32", np.uint32)
uint64 = dtype("uint64", np.uint64)
bool = dtype("bool", np.bool_)  # noqa: A001 - PyTorch's name
complex64 = dtype("complex64", np.complex64)
complex128 = dtype("complex128", np.complex128)

ALL = (float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, uint16, uint32,
       uint64, bool, complex64, complex128)
_FROM_NP = {d.np: d for d in ALL}
_NAMES = {d.name: d for d in ALL}
# PyTorch's aliases.
ALIASES = {"float": float32, "double": float64, "half": float16, "short": int16,
           "int": int32, "long": int64, "cfloat": complex64, "cdouble": complex128}


def _by_name(name: str) -> dtype:
    return _NAMES[name]


def from_numpy(dt: Any) -> dtype:
    """The PyTorch dtype of a NumPy dtype."""
    try:
        return _FROM_NP[np.dtype(dt)]
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(dt).type.__name__}. "
                        "The only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                        "and bool.") from None


def to_torch(d: Any) -> dtype:
    """A PyTorch dtype from a dtype-like: ``torch.float32``, ``np.float32``, ``float``."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return complex128
    if isinstance(d, str):
        name = d.removeprefix("torch.")
        if name in _NAMES:
            return _NAMES[name]
        if name in ALIASES:
            return ALIASES[name]
    return from_numpy(d)


def to_numpy(d: Any) -> np.dtype[Any]:
    return to_torch(d).np


# ------------------------------------------------------------------ default dtype


class _Defaults(threading.local):
    def __init__(self) -> None:
        self.dtype = float32


_defaults = _Defaults()


def get_default_dtype() -> dtype:
    """The dtype of new floating point tensors (float32 unless changed).

    >>> import funcgrad.torch as torch
    >>> torch.get_default_dtype()
    torch.float32
    """
    return _defaults.dtype


def set_default_dtype(d: Any) -> None:
    """Make ``d`` (float32, float64, float16 or bfloat16) the default floating dtype."""
    d = to_torch(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _defaults.dtype = d


def default_complex() -> dtype:
    return complex128 if _defaults.dtype is float64 else complex64


# --------------------------------------------------------------------- promotion

_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def category(d: dtype) -> builtins.int:
    return 2 if d is bfloat16 else _CATEGORY[d.np.kind]


_WIDE_UNSIGNED = (uint16, uint32, uint64)


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's ``promote_types``: the smallest dtype both convert to safely."""
    a, b = to_torch(a), to_torch(b)
    if a is b:
        return a
    # The wide unsigned types promote only with floating point types (bool, integers and
    # complex types are refused), as PyTorch 2.13.
    if (a in _WIDE_UNSIGNED or b in _WIDE_UNSIGNED) and 2 not in (category(a), category(b)):
        raise RuntimeError(
            f"Promotion for uint16, uint32, uint64 types is not supported, attempted to "
            f"promote {_CPP_NAMES[a.name]} and {_CPP_NAMES[b.name]}")
    if a is bool:
        return b
    if b is bool:
        return a
    ca, cb = category(a), category(b)
    if {a, b} == {float16, bfloat16}:
        return float32
    if ca == 3 or cb == 3:
        real = [d.to_real() if category(d) == 3 else d for d in (a, b)]
        floats = [d for d in real if category(d) == 2]
        if not floats:
            return a if ca == 3 else b
        best = promote_types(*floats) if len(floats) == 2 else floats[0]
        c = a if ca == 3 else b
        best = promote_types(best, c.to_real()) if ca == cb == 3 else best
        return best.to_complex() if best not in (float16, bfloat16) else (
            c if ca == 3 and cb != 3 or cb == 3 and ca != 3 else complex64)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if a.np.itemsize == b.np.itemsize:  # float16 vs bfloat16 handled above
            return a
        return a if a.np.itemsize > b.np.itemsize else b
    return from_numpy(np.promote_types(a.np, b.np))


_CPP_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
              "int64": "Long", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
              "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
              "float64": "Double", "bool": "Bool", "complex64": "ComplexFloat",
              "complex128": "ComplexDouble"}


def cpp_name(dt: Any) -> str:
    """PyTorch's C++ name of a dtype, as its kernels' errors say it ("Long", "Float").

    >>> cpp_name(int64)
    'Long'
    """
    name = dt.name if isinstance(dt, dtype) else np.dtype(dt).name
    return _CPP_NAMES.get(name, name)


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """PyTorch's combine_categories: a lower-priority group matters only if its category
    is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _fold(acc: dtype | None, d: dtype) -> dtype:
    return d if acc is None else promote_types(acc, d)


def result_dtype(operands: list[tuple[dtype, builtins.int]]) -> dtype:
    """The dtype of an operation on ``(dtype, rank)`` operands; rank -1 marks a Python
    number (its dtype as PyTorch wraps it: bool, int64, float64 or complex128)."""
    dim: dtype | None = None
    zero: dtype | None = None
    wrapped: dtype | None = None
    for d, rank in operands:
        if rank < 0:
            if d.is_complex:
                d = default_complex()
            elif d.is_floating_point:
                d = _defaults.dtype
            wrapped = _fold(wrapped, d)
        elif rank == 0:
            zero = _fold(zero, d)
        else:
            dim = _fold(dim, d)
    out = _combine(dim, _combine(zero, wrapped))
    assert out is not None
    return out


def scalar_dtype(value: Any) -> dtype:
    """The dtype PyTorch gives a Python number before wrapping."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return float64
    if isinstance(value, builtins.complex):
        return complex128
    raise TypeError(f"{type(value).__name__} is not a number")
