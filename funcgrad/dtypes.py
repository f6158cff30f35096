"""Dtypes, JAX's type-promotion lattice, weak types and 64-bit canonicalization.

Python scalars are *weakly typed*: they take the dtype of the array they meet as
long as their kind allows (``float32 * 2.0`` stays float32, ``int8 + 1`` stays
int8, ``int32 * 2.0`` becomes a weakly typed default float). Strong dtypes meet on
JAX's promotion lattice (``int8 + uint8 -> int16``, ``int32 + float16 -> float16``,
``bfloat16 + float16 -> float32``). With 64-bit mode off (the default, see
``funcgrad.config``), 64-bit dtypes canonicalize to their 32-bit counterparts.

The engine itself is dtype-agnostic: it computes in whatever dtype its operands
have. Canonicalization happens where values enter the JAX face.

>>> import numpy as np
>>> from funcgrad.dtypes import promote_types, result_type
>>> promote_types(np.int8, np.uint8)
dtype('int16')
>>> result_type(np.float32, 2.0)
dtype('float32')
"""

from __future__ import annotations

import functools
from typing import Any

import ml_dtypes
import numpy as np

from funcgrad.config import config
from funcgrad.errors import DTypeError
from funcgrad.wrappers import register_array_wrapper

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
try:
    np.finfo(bfloat16)
except ValueError as e:  # pragma: no cover - depends on the installed pair
    # An ml_dtypes older than the NumPy beside it (0.6 with NumPy 2.4) leaves np.finfo
    # unable to describe bfloat16, which every half-precision path reads.
    raise ImportError(
        f"funcgrad: ml_dtypes {ml_dtypes.__version__} does not support NumPy "
        f"{np.__version__} (np.finfo(bfloat16) fails: {e}); upgrade it with "
        "`pip install -U ml_dtypes`") from e
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

SUPPORTED = frozenset({
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    bfloat16, float16, float32, float64, complex64, complex128,
})

_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bfloat16": "bf16",
    "float16": "f16", "float32": "f32", "float64": "f64",
    "complex64": "c64", "complex128": "c128",
}

_TO_32 = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


# ----------------------------------------------------------------- conversion


def to_dtype(dtype: Any) -> np.dtype[Any]:
    """A supported NumPy dtype from a dtype-like, with no 64-bit canonicalization.

    Python's ``float``/``int``/``complex`` mean the 64-bit dtypes here (NumPy's view);
    :func:`canonicalize_dtype` is the JAX face's view.
    """
    if dtype is bool:
        return bool_
    try:
        dt: np.dtype[Any] = np.dtype(dtype)
    except TypeError as e:
        raise DTypeError(str(e)) from None  # NumPy's text, as JAX gives it
    if dt not in SUPPORTED:
        raise DTypeError(
            f"dtype {dt} is not supported by funcgrad; use one of bool, (u)int8..64, "
            "bfloat16, float16/32/64 or complex64/128"
        )
    return dt


@functools.lru_cache(maxsize=256)
def _canonical(x64: bool, dtype: Any) -> np.dtype[Any]:
    dt: np.dtype[Any]
    if dtype is float:
        dt = float64
    elif dtype is int:
        dt = int64
    elif dtype is complex:
        dt = complex128
    else:
        dt = to_dtype(dtype)
    return dt if x64 else _TO_32.get(dt, dt)


def canonicalize_dtype(dtype: Any) -> np.dtype[Any]:
    """The dtype the JAX face uses for ``dtype``: 64-bit ones become 32-bit unless x64 is on.

    >>> import numpy as np
    >>> canonicalize_dtype(np.float64)
    dtype('float32')
    """
    try:
        return _canonical(config.x64_enabled, dtype)
    except TypeError:  # an unhashable dtype-like
        dt = to_dtype(dtype)
        return dt if config.x64_enabled else _TO_32.get(dt, dt)


# The old name, used throughout: the JAX face's canonical form.
canonicalize = canonicalize_dtype


def default_float() -> np.dtype[Any]:
    """float64 with x64 on, else float32."""
    return float64 if config.x64_enabled else float32


def default_int() -> np.dtype[Any]:
    """int64 with x64 on, else int32."""
    return int64 if config.x64_enabled else int32


def default_uint() -> np.dtype[Any]:
    return uint64 if config.x64_enabled else uint32


def default_complex() -> np.dtype[Any]:
    """complex128 with x64 on, else complex64."""
    return complex128 if config.x64_enabled else complex64


def default_of_kind(kind: str) -> np.dtype[Any]:
    return {"b": bool_, "i": default_int(), "u": default_uint(), "f": default_float(),
            "c": default_complex()}[kind]


def short_name(dtype: np.dtype[Any]) -> str:
    """The jaxpr printer's name for a dtype: ``f32``, ``i64``, ``bool``."""
    return _SHORT.get(dtype.name, str(dtype.name))


def is_float(dtype: np.dtype[Any]) -> bool:
    return dtype.kind == "f" or dtype == bfloat16


# JAX's dtype of the tangent (and cotangent) of an integer or boolean input.
FLOAT0 = np.dtype([("float0", np.void, 0)])


class TypedNdArray(np.ndarray):
    """A host array of float0 zeros, the tangent of an integer value: a NumPy array that
    prints as JAX's own (funcgrad Arrays have no float0).

    >>> float0_zeros(())
    TypedNdArray((b'',), dtype=void)
    """

    def __repr__(self) -> str:
        # JAX's printer (jax._src.literals.TypedNdArray.__repr__).
        prefix = "TypedNdArray("
        dtype_str = f"dtype={self.dtype.name})"
        width = int(np.get_printoptions()["linewidth"])
        if self.size == 0:
            s = f"[], shape={self.shape}"
        else:
            s = np.array2string(np.asarray(self), prefix=prefix, suffix=",",
                                separator=", ", max_line_width=width)
        last = len(s) - s.rfind("\n") + 1
        sep = " " * len(prefix) if last + len(dtype_str) + 1 > width else " "
        return f"{prefix}{s},{sep}{dtype_str}"


def float0_zeros(shape: Any) -> TypedNdArray:
    """Zeros of dtype float0 and ``shape``, as JAX gives them (a ``TypedNdArray``).

    >>> float0_zeros((2,)).shape
    (2,)
    """
    return np.zeros(shape, FLOAT0).view(TypedNdArray)


# jit stages float0 zeros (which no primitive takes) as boolean zeros of their shape.
register_array_wrapper(TypedNdArray, lambda x: np.zeros(x.shape, np.bool_),
                       lambda a: float0_zeros(np.shape(a)))


def is_inexact(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "fc" or dtype == bfloat16


def is_integer(dtype: np.dtype[Any]) -> bool:
    return dtype.kind in "iu"


def is_bool(dtype: np.dtype[Any]) -> bool:
    return dtype.kind == "b"


def kind(dtype: np.dtype[Any]) -> str:
    """NumPy's kind letter, with bfloat16 counted as a float ("f")."""
    return "f" if dtype == bfloat16 else dtype.kind


def python_scalar(value: Any) -> bool:
    """True for Python bool/int/float/complex (not NumPy scalars)."""
    return type(value) in (bool, int, float, complex)


def scalar_kind_dtype(value: Any) -> np.dtype[Any]:
    """The dtype a Python scalar has when it stands alone (canonical for the JAX face)."""
    t = type(value)
    if t is bool:
        return bool_
    if t is int:
        return default_int()
    if t is float:
        return default_float()
    if t is complex:
        return default_complex()
    raise DTypeError(f"{t.__name__} {value!r} is not a number funcgrad can use")


# ------------------------------------------------------------ the lattice

# Weak types are lattice nodes of their own: a Python int, float or complex.
_I_WEAK, _F_WEAK, _C_WEAK = "int*", "float*", "complex*"
_WEAK_KIND = {"i": _I_WEAK, "u": _I_WEAK, "f": _F_WEAK, "c": _C_WEAK}
_WEAK_DEFAULT = {_I_WEAK: int64, _F_WEAK: float64, _C_WEAK: complex128}


def _lattice(x64: bool) -> dict[Any, list[Any]]:
    """JAX's promotion lattice: each type and the types just above it."""
    up: dict[Any, list[Any]] = {
        bool_: [_I_WEAK],
        _I_WEAK: [uint8, int8],
        uint8: [int16, uint16],
        uint16: [int32, uint32],
        uint32: [int64, uint64] if x64 else [int32, uint64],
        uint64: [_F_WEAK],
        int8: [int16],
        int16: [int32],
        int32: [int64],
        int64: [_F_WEAK],
        _F_WEAK: [bfloat16, float16, _C_WEAK],
        bfloat16: [float32],
        float16: [float32],
        float32: [float64, complex64],
        float64: [complex128],
        _C_WEAK: [complex64],
        complex64: [complex128],
        complex128: [],
    }
    return up


@functools.lru_cache(maxsize=2)
def _upper_sets(x64: bool) -> dict[Any, frozenset[Any]]:
    up = _lattice(x64)
    closure: dict[Any, frozenset[Any]] = {}

    def above(t: Any) -> frozenset[Any]:
        if t not in closure:
            s = {t}
            for u in up[t]:
                s |= above(u)
            closure[t] = frozenset(s)
        return closure[t]

    for t in up:
        above(t)
    return closure


@functools.lru_cache(maxsize=4096)
def _least_upper_bound(x64: bool, *types: Any) -> Any:
    ups = _upper_sets(x64)
    common = functools.reduce(lambda a, b: a & b, (ups[t] for t in types))
    # The least element: the one every other common upper bound lies above.
    for c in common:
        if all(o in ups[c] for o in common):
            return c
    raise DTypeError(f"no common dtype for {types}")  # not reachable on this lattice


def _node(dtype: np.dtype[Any], weak: bool) -> Any:
    if weak and dtype != bool_:
        return _WEAK_KIND["f" if dtype == bfloat16 else dtype.kind]
    return dtype


def _from_node(node: Any) -> np.dtype[Any]:
    return _WEAK_DEFAULT[node] if isinstance(node, str) else node


def lattice_result(*typed: tuple[np.dtype[Any], bool]) -> tuple[np.dtype[Any], bool]:
    """``(dtype, weak)`` of an operation on ``(dtype, weak)`` operands, before the
    weak result takes its default dtype (JAX's ``lattice_result_type``)."""
    if not typed:
        raise DTypeError("type promotion needs at least one operand")
    x64 = config.x64_enabled
    if len(typed) == 1:
        dt, weak = typed[0]
    else:
        dts = {d for d, _ in typed}
        if len(dts) == 1 and not all(w for _, w in typed):
            dt, weak = typed[0][0], False
        elif all(w for _, w in typed):
            dt, weak = _from_node(_least_upper_bound(x64, *dts)), True
        else:
            node = _least_upper_bound(x64, *{_node(d, w) for d, w in typed})
            dt, weak = _from_node(node), isinstance(node, str)
    return dt, weak and dt != bool_


def promote(*typed: tuple[np.dtype[Any], bool]) -> tuple[np.dtype[Any], bool]:
    """Result ``(dtype, weak)`` of an operation on ``(dtype, weak)`` operands.

    A weak result takes the default dtype of its kind (x64-aware), as JAX's
    ``result_type`` does.

    >>> import numpy as np
    >>> promote((np.dtype("float32"), False), (np.dtype("float64"), True))
    (dtype('float32'), False)
    """
    dt, weak = lattice_result(*typed)
    if weak:
        dt = default_of_kind(kind(dt))
    return dt, weak


def _typed_of(x: Any, canonical: bool = True) -> tuple[np.dtype[Any], bool]:
    if not canonical and not python_scalar(x) and not any(x is t for t in (float, int, complex)):
        return to_dtype(x if isinstance(x, (type, str, np.dtype)) else
                        getattr(x, "dtype", x)), False
    if python_scalar(x):
        return _python_type_node(type(x))
    if x is float or x is int or x is complex or x is bool:
        return _python_type_node(x)
    aval = getattr(x, "aval", None)
    if aval is not None:
        return canonicalize_dtype(aval.dtype), aval.weak_type
    dt = getattr(x, "dtype", None)
    if dt is not None and not isinstance(x, type):
        return canonicalize_dtype(dt), False
    return canonicalize_dtype(x), False


def _python_type_node(t: type) -> tuple[np.dtype[Any], bool]:
    return {bool: (bool_, False), int: (int64, True), float: (float64, True),
            complex: (complex128, True)}[t]


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype JAX's promotion gives ``args`` (arrays, dtypes or Python scalars/types).

    >>> import numpy as np
    >>> result_type(np.int32, 1.0, return_weak_type_flag=True)
    (dtype('float32'), True)
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    dt, weak = promote(*(_typed_of(a) for a in args))
    return (dt, weak) if return_weak_type_flag else dt


def promote_types(a: Any, b: Any) -> np.dtype[Any]:
    """The dtype a binary operation casts ``a`` and ``b`` to (Python types are weak).

    >>> import numpy as np
    >>> promote_types(np.float16, float)
    dtype('float16')
    """
    ta, tb = _typed_of(a, canonical=False), _typed_of(b, canonical=False)
    node = _least_upper_bound(config.x64_enabled, _node(*ta), _node(*tb))
    return _from_node(node)


def is_weakly_typed(x: Any) -> bool:
    """Whether ``x`` (a Python scalar or an array) is weakly typed."""
    if python_scalar(x):
        return type(x) is not bool
    aval = getattr(x, "aval", None)
    return bool(aval is not None and aval.weak_type)


class extended:  # noqa: N801 - JAX's name
    """The abstract type of JAX's extended dtypes (typed keys are the ones here)."""


class prng_key(extended):  # noqa: N801 - JAX's name
    """The abstract type of typed PRNG key dtypes (``issubdtype(key.dtype, prng_key)``)."""


class ExtendedDType:
    """The base of extended dtype objects (a typed key's ``key<fry>``): ``issubdtype``
    recognises them here, below the modules that define them."""

    name = "extended"

    def from_struct(self, struct: Any) -> Any:
        """A value standing for arrays of this dtype of ``struct``'s shape, whose data are
        shapes too (``eval_shape``'s inputs); a dtype that has none refuses."""
        raise TypeError(f"eval_shape takes no ShapeDtypeStruct of dtype {self.name}")
