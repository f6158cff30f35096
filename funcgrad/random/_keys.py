"""PRNG keys: seeding, splitting, folding in data, and the raw bits of a key.

A key is threefry2x32 key data, ``uint32[..., 2]``: :func:`PRNGKey` returns that data
itself (JAX's legacy keys), :func:`key` wraps it in a typed :class:`KeyArray` whose
dtype prints ``key<fry>``. Every function takes either kind.

>>> from funcgrad import random
>>> random.PRNGKey(42)
Array([ 0, 42], dtype=uint32)
>>> random.split(random.PRNGKey(0))
Array([[1797259609, 2579123966],
       [ 928981903, 3453687069]], dtype=uint32)
"""

from __future__ import annotations

import math
import operator
import re
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import funcgrad.numpy as jnp
from funcgrad import dtypes, lax
from funcgrad.array import Array
from funcgrad.config import config
from funcgrad.conversion import requested_dtype
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import KeyReuseError
from funcgrad.ir import HasShape, ShapeDtypeStruct
from funcgrad.primitives.prng import threefry2x32
from funcgrad.tree_util import register_internal_node

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)


class KeyDType(dtypes.ExtendedDType):
    """The dtype of typed keys (threefry2x32 only): prints as JAX's ``key<fry>``."""

    name = "key<fry>"
    impl = "threefry2x32"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def from_struct(self, struct: ShapeDtypeStruct) -> Any:
        """Keys of ``struct``'s shape whose data is a shape too (``eval_shape``'s inputs)."""
        return KeyArray(ShapeDtypeStruct((*struct.shape, 2), _U32))


KEY_DTYPE = KeyDType()


class PRNGKeyArray(HasShape, Array):
    """A typed PRNG key array: the key data ``uint32[*shape, 2]`` seen as keys of ``shape``.

    A pytree leaf, as JAX's key arrays are (funcgrad's transformations stage its data), and
    a ``funcgrad.Array`` as JAX's are a ``jax.Array``; the array methods it answers are
    its own (``x.at[i].set(key)``, shape methods), the arithmetic ones JAX's errors.

    >>> from funcgrad import random
    >>> k = random.key(0)
    >>> k.shape, k.dtype
    ((), key<fry>)
    >>> random.key_data(k)
    Array([0, 0], dtype=uint32)
    """

    __slots__ = ("_data", "_consumed")
    __array_priority__ = 100
    # ``array == keys`` is answered by the keys' comparisons, with JAX's TypeError.
    _reflected_comparisons = True

    def __init__(self, data: Any) -> None:
        self._data = data
        # jax_debug_key_reuse: the call that used it up (a sampler or split), if any.
        self._consumed: Any = None

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        return tuple(get_aval(self._data).shape[:-1])

    @property
    def dtype(self) -> KeyDType:  # type: ignore[override]  # keys have no NumPy dtype
        return KEY_DTYPE

    @property
    def committed(self) -> bool:
        """Whether the key data was placed on its device by name (see ``Array.committed``)."""
        return bool(self._data.committed)

    @property
    def itemsize(self) -> int:
        return 8

    @property
    def nbytes(self) -> int:
        return 8 * self.size

    @property
    def T(self) -> KeyArray:  # noqa: N802 - NumPy's name
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx: Any) -> KeyArray:
        return KeyArray(self._data[data_index(idx)])

    @property
    def at(self) -> Any:
        """Indexed reads and ``set`` of keys, as ``x.at`` of arrays (JAX has no other
        update of keys: ``add`` and the like are its TypeError).

        >>> from funcgrad import random
        >>> ks = random.split(random.key(0), 3)
        >>> ks.at[0].set(random.key(1))[0] == random.key(1)
        Array(True, dtype=bool)
        """
        return _key_ops().KeyIndexUpdateHelper(self)

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(arr) if you wish to extract the underlying "
                        "integer array.")

    # ----------------------------------------------------------- shape methods

    def reshape(self, *shape: Any, order: str = "C") -> KeyArray:
        return _key_ops().reshape(self, shape[0] if len(shape) == 1 else shape, order)

    def ravel(self, order: str = "C") -> KeyArray:
        return self.reshape(-1, order=order)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> KeyArray:
        return _key_ops().squeeze(self, axis)

    def transpose(self, *axes: Any) -> KeyArray:
        perm: Any = axes
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            perm = axes[0]
        return _key_ops().transpose(self, perm or None)

    def swapaxes(self, axis1: int, axis2: int) -> KeyArray:
        return _key_ops().swapaxes(self, axis1, axis2)

    def copy(self) -> KeyArray:
        return KeyArray(jnp.copy(self._data))

    def astype(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Cannot call abstract method astype")

    def item(self, *args: Any) -> Any:
        raise NotImplementedError("Cannot call abstract method item")

    # ------------------------------------------------------------- operators

    def __eq__(self, other: object) -> Any:
        return _key_ops().compare(self, other, "equal", "eq")

    def __ne__(self, other: object) -> Any:
        return _key_ops().compare(self, other, "not_equal", "ne")

    def __pos__(self) -> KeyArray:
        return self

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if isinstance(self._data, Tracer):
            # The tracer's own text with its key data types as the keys' (JAX's
            # ``JitTracer(key<fry>[])``): the trailing data axis dropped.
            return re.sub(r"~?uint32\[([^\]]*)\]", lambda m: "key<fry>[" + ",".join(
                m.group(1).split(",")[:-1]) + "]", repr(self._data))
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(self._data)}"

    __str__ = __repr__


def data_index(idx: Any) -> tuple[Any, ...]:
    """The index of the key data (``uint32[*shape, 2]``) for index ``idx`` of the keys:
    the trailing data axis is kept whole."""
    if isinstance(idx, KeyArray):
        raise TypeError(f"JAX does not support indexing with key arrays, got {idx!r}")
    idx = idx if isinstance(idx, tuple) else (idx,)
    if any(i is Ellipsis for i in idx):
        return idx + (slice(None),)
    return idx + (Ellipsis, slice(None))


def _key_ops() -> Any:
    from funcgrad.random import _key_ops  # noqa: PLC0415

    return _key_ops


KeyArray = PRNGKeyArray

def _unflatten(_: Any, leaves: Any) -> Any:
    (data,) = leaves
    if isinstance(data, ShapeDtypeStruct):  # (eval_shape's result: the keys' shape)
        return ShapeDtypeStruct(data.shape[:-1], KEY_DTYPE)
    return KeyArray(data)


register_internal_node(KeyArray, lambda k: ([k._data], None), _unflatten)


# ------------------------------------------------------------------ checking


def _arraylike(x: Any) -> bool:
    """JAX's ``_arraylike``: arrays, tracers and scalars (not lists)."""
    return (isinstance(x, (np.ndarray, Tracer)) or hasattr(x, "_value") or
            hasattr(x, "__jax_array__") or bool(np.isscalar(x)))


def check_key_data(data: Any) -> None:
    """JAX's checks of raw key data (``uint32[..., 2]``), with its messages."""
    if not all(hasattr(data, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {data}")
    if data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={data.ndim}")
    if tuple(data.shape[-1:]) != (2,):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with (2,); got shape={tuple(data.shape)} for impl={IMPL!r}")
    if data.dtype != _U32:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={data.dtype}")


def check_key(name: str, key: Any, allow_batched: bool = False) -> tuple[Any, bool]:
    """The key data ``uint32[..., 2]`` of ``key`` and whether ``key`` was typed."""
    if isinstance(key, KeyArray):
        data, typed = key._data, True
        if config.read("jax_debug_key_reuse") and name not in _NOT_CONSUMING and \
                not isinstance(data, Tracer):
            entry = _entry_frame()
            if key._consumed is not None and key._consumed is not entry:
                raise KeyReuseError(f"Previously-consumed key passed to {name} at index 0")
            key._consumed = entry
    elif _arraylike(key):
        check_key_data(key)
        data = key if isinstance(key, Tracer) or hasattr(key, "_value") else jnp.asarray(key)
        _legacy_key_used()
        # JAX's enable_custom_prng: raw keys in, typed keys out.
        typed = bool(config.read("jax_enable_custom_prng"))
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and get_aval(data).ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{np.shape(key)} != (). Use jax.vmap for batching.")
    return data, typed


# Functions that read a key without using up its randomness (JAX's key-reuse rules).
_NOT_CONSUMING = frozenset({"fold_in", "key_data", "key_impl", "clone", "wrap_key_data"})

_LEGACY_MSG = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')


def _entry_frame() -> Any:
    """The frame of the random function the user called (a sampler may split or reuse its
    own key inside that one call: the key is consumed by the call, not by each use)."""
    f: Any = sys._getframe(2)
    entry = None
    while f is not None and str(f.f_globals.get("__name__", "")).startswith("funcgrad.random"):
        entry, f = f, f.f_back
    return entry


def _legacy_key_used() -> None:
    mode = config.read("jax_legacy_prng_key")
    if mode == "error":
        raise ValueError(_LEGACY_MSG)
    if mode == "warn":
        warnings.warn(_LEGACY_MSG, stacklevel=4)
    elif config.read("jax_enable_custom_prng"):
        warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                      "Assuming valid threefry2x32 key for now.", FutureWarning, stacklevel=4)


def _rewrap(data: Any, typed: bool) -> Any:
    return KeyArray(data) if typed else data


# ------------------------------------------------------------------- seeding


def _seed_data(seed: Any, name: str = "key") -> Any:
    if isinstance(seed, KeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not isinstance(seed, Tracer) else get_aval(seed).ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    if isinstance(seed, bool) or (not isinstance(seed, int) and
                                  get_aval(seed).dtype.kind not in "iu"):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        # JAX goes through int64 (OverflowError beyond), then the default integer type.
        seed = np.int64(seed).astype(dtypes.canonicalize_dtype(np.int64))
    if not isinstance(seed, Tracer) and not hasattr(seed, "_trace"):
        arr = np.asarray(seed)
        arr = arr.astype(dtypes.canonicalize_dtype(arr.dtype))
        v = int(arr) % (1 << (8 * arr.dtype.itemsize))
        hi = v >> 32 if arr.dtype.itemsize == 8 else 0
        return jnp.asarray(np.array([hi, v & 0xFFFFFFFF], dtype=_U32))
    dt = get_aval(seed).dtype
    lo = lax.convert_element_type(seed, _U32)
    if dt.itemsize == 8:
        hi = lax.convert_element_type(
            lax.div(lax.convert_element_type(seed, _U64), np.array(1 << 32, _U64)), _U32)
    else:
        hi = jnp.zeros((), _U32)
    return jnp.stack([hi, lo])


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:  # noqa: N802 - JAX's name
    """A legacy PRNG key: the raw ``uint32[2]`` threefry2x32 key data of an integer seed.

    A 64-bit seed gives its high and low 32-bit words; a 32-bit one ``[0, seed]``
    (negative seeds as their two's complement, as JAX does).

    >>> from funcgrad import random
    >>> random.PRNGKey(-1)
    Array([         0, 4294967295], dtype=uint32)
    """
    resolve_impl(impl)
    data = _seed_data(seed, "PRNGKey")
    return KeyArray(data) if config.read("jax_enable_custom_prng") else data


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed PRNG key (dtype ``key<fry>``, shape ``()``) of an integer seed.

    >>> from funcgrad import random
    >>> random.key(1)
    Array((), dtype=key<fry>) overlaying:
    [0 1]
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    resolve_impl(impl)
    return KeyArray(_seed_data(seed, "key"))


def key_data(keys: Any) -> Any:
    """The ``uint32[..., 2]`` data under a key array (raw keys are returned as they are).

    >>> from funcgrad import random
    >>> random.key_data(random.key(7))
    Array([0, 7], dtype=uint32)
    """
    data, _ = check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> KeyArray:
    """A typed key array over ``uint32[..., 2]`` key data.

    >>> from funcgrad import random
    >>> random.wrap_key_data(random.PRNGKey(3)).shape
    ()
    """
    resolve_impl(impl)
    check_key_data(key_bits_array)
    return KeyArray(jnp.asarray(key_bits_array))


def key_impl(keys: Any) -> str:
    """The name of the PRNG implementation of ``keys``: always ``'threefry2x32'``.

    >>> from funcgrad import random
    >>> random.key_impl(random.key(0))
    'threefry2x32'
    """
    check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def key_dtype(impl_spec: Any = None) -> KeyDType:
    """The dtype of typed keys of a PRNG implementation (only threefry2x32 exists).

    >>> from funcgrad import random
    >>> random.key_dtype()
    key<fry>
    """
    resolve_impl(impl_spec)
    return KEY_DTYPE


# ------------------------------------------------------------- hashing counts


def iota_hi_lo(shape: Sequence[int]) -> tuple[Any, Any]:
    """The counts ``0 .. prod(shape) - 1`` laid out in ``shape``, as (high, low) words."""
    n = math.prod(shape)
    if n < (1 << 32):
        lo = lax.reshape(lax.iota(_U32, n), tuple(shape)) if shape else np.zeros((), _U32)
        return jnp.zeros(tuple(shape), _U32), lo
    counts = np.arange(n, dtype=np.uint64).reshape(tuple(shape))
    return jnp.asarray((counts >> 32).astype(_U32)), jnp.asarray(counts.astype(_U32))


def _device_counts(buf: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """``iota_hi_lo(shape)`` made on the GPU of the buffer ``buf`` (nothing uploaded)."""
    from funcgrad.array import wrap  # noqa: PLC0415
    from funcgrad.core import backend_xp  # noqa: PLC0415
    from funcgrad.ir import ShapedArray  # noqa: PLC0415

    xp = backend_xp([buf])
    n = math.prod(shape)
    with xp.cuda.Device(buf.device.id):
        if n < (1 << 32):
            hi, lo = xp.zeros(shape, _U32), xp.arange(n, dtype=_U32).reshape(shape)
        else:
            counts = xp.arange(n, dtype=np.uint64).reshape(shape)
            hi, lo = (counts >> 32).astype(_U32), counts.astype(_U32)
    aval = ShapedArray(shape, np.dtype(_U32))
    return wrap(hi, aval), wrap(lo, aval)


def _hash_counts(data: Any, shape: Sequence[int]) -> list[Any]:
    buf = getattr(data, "_value", None)
    if buf is not None and type(buf) is not np.ndarray and not isinstance(data, Tracer):
        # An eager key on a GPU: the counts are made where the key is (under jit the
        # compiled program makes them).
        hi, lo = _device_counts(buf, tuple(int(s) for s in shape))
    else:
        hi, lo = iota_hi_lo(shape)
    return threefry2x32(data[0], data[1], hi, lo)


def split_data(data: Any, shape: Sequence[int]) -> Any:
    """Key data of ``shape`` new keys from one key's data."""
    b1, b2 = _hash_counts(data, shape)
    return jnp.stack([b1, b2], axis=len(shape))


def random_bits(data: Any, bit_width: int, shape: Sequence[int]) -> Any:
    """Uniform ``uint{bit_width}`` bits of ``shape`` from one key's data (JAX's
    partitionable threefry scheme, its default)."""
    shape = tuple(int(s) for s in shape)
    b1, b2 = _hash_counts(data, shape)
    if bit_width == 64:
        hi = lax.convert_element_type(b1, _U64)
        lo = lax.convert_element_type(b2, _U64)
        return lax.bitwise_or(lax.mul(hi, np.array(1 << 32, _U64)), lo)
    x = lax.bitwise_xor(b1, b2)
    if bit_width == 32:
        return x
    return lax.convert_element_type(x, np.dtype(f"uint{bit_width}"))


def _shape_of(num: Any) -> tuple[int, ...]:
    # operator.index: a float count is JAX's TypeError, not truncated.
    return tuple(operator.index(n) for n in num) if isinstance(num, Sequence) else (
        operator.index(num),)


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (or a shape of them) from one key, stacked on a leading axis.

    >>> from funcgrad import random
    >>> random.split(random.PRNGKey(1), 3).shape
    (3, 2)
    """
    data, typed = check_key("split", key)
    return _rewrap(split_data(data, _shape_of(num)), typed)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data`` (hashed in).

    >>> from funcgrad import random
    >>> random.fold_in(random.PRNGKey(0), 1)
    Array([ 928981903, 3453687069], dtype=uint32)
    """
    kdata, typed = check_key("fold_in", key)
    if np.ndim(data) if not isinstance(data, Tracer) else get_aval(data).ndim:
        # (JAX's message, its missing space included.)
        raise TypeError("fold_in accepts a scalar, but was given an array ofshape "
                        f"{np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, KeyArray):
        raise ValueError("Cannot convert_element_type from key<fry> to uint32")
    # JAX's jnp.asarray(data, dtype='uint32'): Python ints out of uint32's range
    # (-1, 2**32) are an OverflowError; arrays convert (int32 -1 is 2**32 - 1).
    msg = jnp.asarray(data, dtype=_U32)
    o1, o2 = threefry2x32(kdata[0], kdata[1], np.zeros((), _U32), msg)
    return _rewrap(jnp.stack([o1, o2]), typed)


def clone(key: Any) -> Any:
    """The same key (JAX's ``clone`` matters for its stateful key checks only).

    >>> from funcgrad import random
    >>> random.clone(random.PRNGKey(2))
    Array([0, 2], dtype=uint32)
    """
    return key


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (``uint32`` by default, ``uint64`` with x64).

    >>> from funcgrad import random
    >>> random.bits(random.PRNGKey(0), (3,))
    Array([4070199207, 4202968722, 1427181096], dtype=uint32)
    """
    data, _ = check_key("bits", key)
    dt = dtypes.default_uint() if dtype is None else requested_dtype(dtype, None)
    if dt.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    return random_bits(data, dt.itemsize * 8, _shape_of(shape) if shape != () else ())


# ------------------------------------------------------------ implementations


def threefry_seed(seed: Any) -> Any:
    return _seed_data(seed)


def threefry_split(key: Any, shape: Sequence[int]) -> Any:
    return split_data(key, shape)


def threefry_random_bits(key: Any, bit_width: int, shape: Sequence[int]) -> Any:
    return random_bits(key, bit_width, shape)


def threefry_fold_in(key: Any, data: Any) -> Any:
    return _rewrap(fold_in(key, data), False)


class PRNGImpl(NamedTuple):
    """A PRNG implementation as JAX describes one (its repr shows in JAX's errors)."""

    key_shape: tuple[int, ...]
    seed: Any
    split: Any
    random_bits: Any
    fold_in: Any
    name: str
    tag: str


IMPL = PRNGImpl((2,), threefry_seed, threefry_split, threefry_random_bits, threefry_fold_in,
                "threefry2x32", "fry")

# JAX's implementations, in its order; funcgrad has threefry2x32 only.
_PRNG_NAMES = ("philox2x32", "philox4x32", "threefry2x32", "rbg", "unsafe_rbg", "threefry4x32")


def resolve_impl(impl: Any) -> PRNGImpl:
    """The implementation named by ``impl`` (JAX's ``resolve_prng_impl``): threefry2x32,
    the only one funcgrad has; JAX's others are a ``ValueError`` naming them.

    >>> resolve_impl(None).name
    'threefry2x32'
    """
    if impl is None or impl is IMPL or isinstance(impl, KeyDType):
        return IMPL
    if type(impl) is str:
        if impl == IMPL.name:
            return IMPL
        if impl in _PRNG_NAMES:
            raise ValueError(
                f"the {impl!r} PRNG implementation is not supported by funcgrad, which has "
                "threefry2x32 only (JAX's 'rbg' and 'unsafe_rbg' use XLA's "
                "rng_bit_generator, whose bits funcgrad cannot reproduce); use "
                "impl='threefry2x32' (the default)")
        names = ", ".join(f'"{n}"' for n in _PRNG_NAMES)
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
                         f"{names}?")
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")
