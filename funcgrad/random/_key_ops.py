"""Typed key arrays under the array functions and operators JAX allows on them.

Shape functions (``jnp.stack``, ``concatenate``, ``where``, ``take``, ``reshape``...) act on
the key axes of the key data ``uint32[*shape, 2]``; arithmetic is JAX's ``TypeError``.

>>> import funcgrad.numpy as jnp
>>> from funcgrad import random
>>> ks = random.split(random.key(0), 3)
>>> jnp.stack([ks, ks], axis=1).shape
(3, 2)
>>> ks.reshape(1, 3)[0, 1:].shape
(2,)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes
from funcgrad.conversion import register_input_converter
from funcgrad.core import get_aval
from funcgrad.numpy._core import canonical_axis
from funcgrad.random._keys import KeyArray, data_index

_PROMOTION = "dtype=key<fry> is not a valid dtype for JAX type promotion."
_NO_DTYPE = "Cannot interpret 'key<fry>' as a data type"


def _is_key(x: Any) -> bool:
    return type(x) is KeyArray


def _all_keys(xs: Sequence[Any]) -> list[KeyArray]:
    """All of ``xs`` as key arrays, or JAX's promotion error when keys and others mix."""
    if not all(_is_key(x) for x in xs):
        raise ValueError(_PROMOTION)
    return list(xs)


def _seq_has_key(xs: Any) -> bool:
    return type(xs) in (list, tuple) and any(_is_key(x) for x in xs)


def _shape_arg(shape: Any) -> tuple[int, ...]:
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)


# ---------------------------------------------------------------- jnp functions


def stack(arrays: Any, axis: int = 0, *args: Any, **kwargs: Any) -> Any:
    if not _seq_has_key(arrays):
        return NotImplemented
    keys = _all_keys(arrays)
    ax = canonical_axis(axis, keys[0].ndim + 1)
    return KeyArray(jnp.stack([k._data for k in keys], axis=ax))


def concatenate(arrays: Any, axis: int | None = 0, *args: Any, **kwargs: Any) -> Any:
    if not _seq_has_key(arrays):
        return NotImplemented
    keys = _all_keys(arrays)
    if axis is None:
        keys = [k.reshape(-1) for k in keys]
        axis = 0
    if keys[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    ax = canonical_axis(axis, keys[0].ndim)
    return KeyArray(jnp.concatenate([k._data for k in keys], axis=ax))


def where(condition: Any, x: Any = None, y: Any = None, /, **kwargs: Any) -> Any:
    if not (_is_key(x) or _is_key(y)):
        return NotImplemented
    kx, ky = _all_keys([x, y])
    cond = jnp.asarray(condition)[..., None]
    return KeyArray(jnp.where(cond, kx._data, ky._data))


def take(a: Any, indices: Any, axis: int | None = None, *args: Any, **kwargs: Any) -> Any:
    if not _is_key(a):
        return NotImplemented
    if axis is None:
        a, axis = reshape(a, -1), 0
    ax = canonical_axis(axis, a.ndim)
    kwargs.pop("fill_value", None)
    return KeyArray(jnp.take(a._data, indices, ax, *args, **kwargs))


def reshape(a: Any, shape: Any = None, order: str = "C", **kwargs: Any) -> Any:
    if not _is_key(a):
        return NotImplemented
    shape = kwargs.get("newshape", shape)
    return KeyArray(jnp.reshape(a._data, (*_shape_arg(shape), 2), order=order))


def ravel(a: Any, order: str = "C") -> Any:
    return reshape(a, -1, order) if _is_key(a) else NotImplemented


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    if not _is_key(a):
        return NotImplemented
    nd = a.ndim
    perm = tuple(range(nd))[::-1] if axes is None else tuple(
        canonical_axis(ax, nd) for ax in axes)
    if sorted(perm) != list(range(nd)):
        raise ValueError(f"axes {tuple(axes or ())} don't match array")
    return KeyArray(jnp.transpose(a._data, (*perm, nd)))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    if not _is_key(a):
        return NotImplemented
    perm = list(range(a.ndim))
    i, j = canonical_axis(axis1, a.ndim), canonical_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def squeeze(a: Any, axis: Any = None) -> Any:
    if not _is_key(a):
        return NotImplemented
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = tuple(canonical_axis(ax, a.ndim) for ax in
                     (axis if isinstance(axis, (tuple, list)) else (axis,)))
    return KeyArray(jnp.squeeze(a._data, axes))


def expand_dims(a: Any, axis: Any) -> Any:
    if not _is_key(a):
        return NotImplemented
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = a.ndim + len(axes)
    return KeyArray(jnp.expand_dims(a._data, tuple(canonical_axis(ax, nd) for ax in axes)))


def broadcast_to(a: Any, shape: Any) -> Any:
    if not _is_key(a):
        return NotImplemented
    return KeyArray(jnp.broadcast_to(a._data, (*_shape_arg(shape), 2)))


def _as_keys(obj: Any, dtype: Any) -> Any:
    if _is_key(obj):
        if dtype is not None:
            raise ValueError(f"Cannot convert_element_type from key<fry> to "
                             f"{dtypes.canonicalize_dtype(dtype)}")
        return obj
    if type(obj) in (list, tuple) and any(_is_key(x) or _seq_has_key(x) for x in obj):
        return stack([_as_keys(x, dtype) for x in obj])
    return NotImplemented


def asarray(a: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
    return _as_keys(a, dtype)


def array(obj: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
    out = _as_keys(obj, dtype)
    return out.copy() if out is obj else out


def copy(a: Any, *args: Any, **kwargs: Any) -> Any:
    return a.copy() if _is_key(a) else NotImplemented


def shape(a: Any) -> Any:
    return a.shape if _is_key(a) else NotImplemented


def ndim(a: Any) -> Any:
    return a.ndim if _is_key(a) else NotImplemented


def size(a: Any, axis: int | None = None) -> Any:
    if not _is_key(a):
        return NotImplemented
    return a.size if axis is None else a.shape[canonical_axis(axis, a.ndim)]


def _filled_like(a: Any, fill: Any, dtype: Any, shape: Any) -> Any:
    """Keys whose data words are all ``fill`` (a key: its data), shaped as ``a`` or
    ``shape``; with a ``dtype``, an ordinary array of it, as JAX's ``*_like`` of keys."""
    if not _is_key(a):
        return NotImplemented
    key_shape = a.shape if shape is None else _shape_arg(shape)
    if dtype is not None:
        return jnp.full(key_shape, fill, dtype)
    data = fill._data if _is_key(fill) else jnp.asarray(fill, dtype=np.uint32)
    return KeyArray(jnp.broadcast_to(data, (*key_shape, 2)))


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, **kwargs: Any) -> Any:
    return _filled_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, **kwargs: Any) -> Any:
    return _filled_like(a, 1, dtype, shape)


# JAX's empty_like of keys is its zeros_like.
empty_like = zeros_like


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None,
              **kwargs: Any) -> Any:
    return _filled_like(a, fill_value, dtype, shape)


class KeyIndexUpdateHelper:
    """``keys.at``: ``keys.at[idx]`` reads or sets keys through the key data."""

    __slots__ = ("keys",)

    def __init__(self, keys: KeyArray) -> None:
        self.keys = keys

    def __getitem__(self, idx: Any) -> _KeyIndexUpdate:
        return _KeyIndexUpdate(self.keys, idx)


class _KeyIndexUpdate:
    __slots__ = ("keys", "idx")

    def __init__(self, keys: KeyArray, idx: Any) -> None:
        self.keys, self.idx = keys, idx

    def get(self, **kwargs: Any) -> KeyArray:
        return KeyArray(self.keys._data.at[data_index(self.idx)].get(**kwargs))

    def set(self, values: Any, **kwargs: Any) -> KeyArray:
        if not _is_key(values):
            raise TypeError("Cannot determine dtype of key<fry>")
        return KeyArray(self.keys._data.at[data_index(self.idx)].set(values._data, **kwargs))

    def _no_arithmetic(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(_NO_DTYPE)

    add = multiply = divide = power = min = max = apply = _no_arithmetic


jnp._key_types.add(KeyArray)
jnp._key_hooks.update(
    stack=stack, concatenate=concatenate, where=where, take=take, reshape=reshape,
    ravel=ravel, transpose=transpose, swapaxes=swapaxes, squeeze=squeeze,
    expand_dims=expand_dims, broadcast_to=broadcast_to, asarray=asarray, array=array,
    copy=copy, shape=shape, ndim=ndim, size=size, zeros_like=zeros_like,
    ones_like=ones_like, empty_like=empty_like, full_like=full_like)


# -------------------------------------------------------------------- operators


def _dtype_name(x: Any) -> str:
    if _is_key(x):
        return "key<fry>"
    if dtypes.python_scalar(x):
        return str(dtypes.canonicalize_dtype(dtypes.scalar_kind_dtype(x)))
    try:
        return str(dtypes.canonicalize_dtype(get_aval(jnp.asarray(x)).dtype))
    except Exception:  # noqa: BLE001 - not an array: Python's own TypeError follows
        return ""


def _not_accepted(name: str, a: Any, b: Any) -> TypeError:
    return TypeError(f"{name} does not accept dtypes {_dtype_name(a)}, {_dtype_name(b)}.")


def compare(k: KeyArray, other: Any, name: str, lax_name: str) -> Any:
    """``==`` / ``!=`` of key arrays: elementwise over the keys, as JAX's."""
    if not _is_key(other):
        if not _dtype_name(other):
            return NotImplemented
        raise _not_accepted(name, k, other)
    s1, s2 = k.shape, other.shape
    try:
        np.broadcast_shapes(s1, s2)
    except ValueError:
        raise TypeError(f"{lax_name} got incompatible shapes for broadcasting: {s1}, "
                        f"{s2}.") from None
    eq = jnp.all(k._data == other._data, axis=-1)
    return eq if name == "equal" else jnp.logical_not(eq)


# (dunder, JAX's name, reflected dunder's JAX name, message for two key arrays:
#  (lax name, accepted kinds) or None for "Cannot interpret").
_BINARY: dict[str, tuple[str, tuple[str, str] | None]] = {
    "add": ("add", ("add", "integer, floating, complexfloating")),
    "sub": ("subtract", ("sub", "integer, floating, complexfloating")),
    "mul": ("multiply", ("mul", "integer, floating, complexfloating")),
    "truediv": ("true_divide", None),
    "floordiv": ("floor_divide", None),
    "mod": ("remainder", None),
    "pow": ("power", None),
    "and": ("bitwise_and", ("and", "integer, bool")),
    "or": ("bitwise_or", ("or", "integer, bool")),
    "xor": ("bitwise_xor", ("xor", "integer, bool")),
    "lshift": ("left_shift", None),
    "rshift": ("right_shift", None),
}
_COMPARE = {"lt": ("less", "lt"), "le": ("less_equal", "le"), "gt": ("greater", "gt"),
            "ge": ("greater_equal", "ge")}
_UNARY = {"neg": ("neg", "integer, floating, complexfloating"),
          "abs": ("abs", "floating, complexfloating, signedinteger"),
          "invert": ("not", "integer, bool")}


def _two_keys(lax_name: str, kinds: str) -> TypeError:
    return TypeError(f"{lax_name} does not accept dtype key<fry> at position 0. Accepted "
                     f"dtypes at position 0 are subtypes of {kinds}.")


def _binary(dunder: str, name: str, both: tuple[str, str] | None) -> Any:
    def op(self: KeyArray, other: Any) -> Any:
        if not _dtype_name(other):
            return NotImplemented
        if _is_key(other) or (dunder == "pow" and type(other) is int):
            raise TypeError(_NO_DTYPE) if both is None else _two_keys(*both)
        raise _not_accepted(name, self, other)

    def rop(self: KeyArray, other: Any) -> Any:
        if not _dtype_name(other):
            return NotImplemented
        raise _not_accepted(name, other, self)

    op.__name__, rop.__name__ = f"__{dunder}__", f"__r{dunder}__"
    return op, rop


def _comparison(name: str, lax_name: str, kinds: str) -> Any:
    def op(self: KeyArray, other: Any) -> Any:
        if not _dtype_name(other):
            return NotImplemented
        if _is_key(other):
            raise _two_keys(lax_name, kinds)
        raise _not_accepted(name, self, other)

    return op


def _unary(lax_name: str, kinds: str) -> Any:
    def op(self: KeyArray) -> Any:
        raise TypeError(f"{lax_name} does not accept dtype key<fry>. Accepted dtypes are "
                        f"subtypes of {kinds}.")

    return op


_ARRAY_OPERATORS = {**{d: n for d, (n, _) in _BINARY.items()},
                    **{d: n for d, (n, _) in _COMPARE.items()}, "eq": "equal", "ne": "not_equal"}


def _from_array(self: KeyArray, dunder: str, array: Any) -> Any:
    """``array <op> keys`` (``dunder`` is the Array's operator): JAX's TypeError naming
    the operands in the order written."""
    d = dunder.strip("_")
    reflected = d.startswith("r") and d[1:] in _BINARY
    name = _ARRAY_OPERATORS.get(d[1:] if reflected else d)
    if name is None:
        return NotImplemented
    raise _not_accepted(name, *((self, array) if reflected else (array, self)))


setattr(KeyArray, "_from_array", _from_array)  # noqa: B010 - installed like the others
for _d, (_name, _both) in _BINARY.items():
    _op, _rop = _binary(_d, _name, _both)
    setattr(KeyArray, f"__{_d}__", _op)
    setattr(KeyArray, f"__r{_d}__", _rop)
for _d, (_name, _lax) in _COMPARE.items():
    setattr(KeyArray, f"__{_d}__", _comparison(_name, _lax, "integer, floating, bool"))
for _d, (_lax, _kinds) in _UNARY.items():
    setattr(KeyArray, f"__{_d}__", _unary(_lax, _kinds))


def _matmul(self: KeyArray, other: Any) -> Any:
    raise ValueError(_PROMOTION)


setattr(KeyArray, "__matmul__", _matmul)  # noqa: B010 - installed like the others
setattr(KeyArray, "__rmatmul__", _matmul)  # noqa: B010


def _no_conversion(x: Any) -> Any:
    """Key arrays where jnp functions want numbers: JAX's ``TypeError``."""
    if _is_key(x):
        raise TypeError(_NO_DTYPE)
    return None


register_input_converter(_no_conversion)
