"""``funcgrad.Array``: the one array type of the JAX face, eager and traced alike.

``Array`` is the base class; concrete values are ``ArrayImpl`` (a NumPy or CuPy
buffer plus its abstract value, weak type included) and the values of running
transformations are tracers (``funcgrad.core.Tracer``), which derive from
``Array`` too, so ``isinstance(x, funcgrad.Array)`` holds inside ``grad``,
``vmap`` and ``jit``. Arrays are immutable: updates go through
``x.at[idx].set(v)`` and friends. Operators and methods (``x + y``, ``x.sum()``,
``x.reshape``...) are installed by ``funcgrad.numpy`` when it loads.

>>> import funcgrad.numpy as jnp
>>> x = jnp.arange(3.0)
>>> x
Array([0., 1., 2.], dtype=float32)
>>> x.at[1].set(7.0)
Array([0., 7., 2.], dtype=float32)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any, Literal, cast

import numpy as np

from funcgrad.ir import ShapedArray


class Array:
    """The array type of the JAX face (``funcgrad.Array``); see the module docstring."""

    __slots__ = ()
    # NumPy's binary operators defer to ours (``np_array + x`` gives an Array).
    __array_priority__ = 100
    # Arrays whose own (reflected) comparisons and operators answer ``x == a`` and
    # ``x + a`` (typed key arrays, with JAX's TypeError).
    _reflected_comparisons = False

    def _from_array(self, dunder: str, array: Array) -> Any:
        """``array <dunder> self`` for those arrays: their answer (or error)."""
        return NotImplemented

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The comparisons funcgrad.numpy installs on Array, screened as JAX screens them;
        # set here on each concrete class (eager arrays and tracers alike) because the
        # installed operators replace anything defined on Array itself.
        for name in _DEFERRING:
            if name not in cls.__dict__:
                setattr(cls, name, _defer_unrecognized(name))

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError(f"{type(self).__name__} must define aval")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def itemsize(self) -> int:
        return int(self.aval.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return self.aval.size * int(self.aval.dtype.itemsize)

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (cast(Any, self)[i] for i in range(self.aval.shape[0]))

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(
            "JAX arrays are immutable and do not support in-place item assignment. Instead "
            "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
        )

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    # Methods and operators (``__add__``, ``sum``, ``reshape``, ``at``...) are set on this
    # class by funcgrad.numpy._array_methods: the core cannot import funcgrad.numpy.


# Converters of other array types funcgrad's operations take as operands (the PyTorch face's
# Tensor): ``fn(x)`` gives the buffer behind ``x`` or None. Filled through
# funcgrad.conversion.register_input_converter; the operators accept those types too.
input_converters: list[Callable[[Any], Any]] = []

_COMPARISONS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
               "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
               "lshift": "<<", "rshift": ">>", "divmod": "divmod"}
_DEFERRING = _COMPARISONS + tuple(f"__{n}__" for n in _ARITHMETIC) + tuple(
    f"__r{n}__" for n in _ARITHMETIC)


def _defer_unrecognized(name: str) -> Any:
    """``Array.<name>`` for arrays and scalars (and objects with ``__jax_array__``); for any
    other object NotImplemented, so that object's own (reflected) operator answers, or
    Python falls back as with JAX's arrays (``x == "a"`` is False, ``x < None`` and
    ``x - None`` TypeErrors). As JAX: ``==``/``!=`` with a dict, list, set or tuple, and
    ``+``/``*`` with a list or tuple (which would concatenate or repeat it) are TypeErrors."""
    reflected = name.startswith("__r") and name[3:-2] in _ARITHMETIC
    opchar = "==" if name in ("__eq__", "__ne__") else _ARITHMETIC.get(
        name[3:-2] if reflected else name[2:-2], "")
    rejected: tuple[type, ...] = (dict, list, set, tuple) if opchar == "==" else (
        (list, tuple) if opchar in ("+", "*") else ())

    def op(self: Array, other: Any) -> Any:
        convert = getattr(other, "__jax_array__", None)
        if convert is not None:
            other = convert()
        if isinstance(other, Array) and other._reflected_comparisons:
            return other._from_array(name, self)  # (JAX's error, operands in order)
        if isinstance(other, (int, float, complex, np.generic, np.ndarray, Array)) or type(
                other).__module__.startswith("cupy") or any(  # (a device buffer)
                conv(other) is not None for conv in input_converters):
            return getattr(Array, name)(self, other)
        if type(other) in rejected:
            a, b = (other, self) if reflected else (self, other)
            raise TypeError(f"unsupported operand type(s) for {opchar}: "
                            f"{type(a).__name__!r} and {type(b).__name__!r}")
        return NotImplemented

    op.__name__ = name
    return op


class ArrayImpl(Array):
    """A concrete array: a backend buffer (never mutated) and its abstract value."""

    # ``_committed`` is set only on arrays placed on a device by name (see ``committed``).
    __slots__ = ("_value", "_aval", "_committed", "__weakref__")

    _value: Any
    _aval: ShapedArray
    _committed: bool

    def __init__(self, value: Any, aval: ShapedArray | None = None) -> None:
        self._value = value
        self._aval = aval if aval is not None else ShapedArray.make(
            tuple(value.shape), value.dtype)

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    # -------------------------------------------------------------- conversion

    def _host(self) -> np.ndarray:
        v = self._value
        return v if type(v) is np.ndarray else v.get()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self._host()
        if copy:
            return np.array(v, dtype=dtype, copy=True)
        out = np.asarray(v, dtype=dtype)
        if out is self._value:
            out = _read_only_view(out)
        return out

    def __bool__(self) -> bool:
        return bool(self._value)

    def _check_scalar(self) -> None:
        if self._aval.shape:
            raise TypeError("Only scalar arrays can be converted to Python scalars; got "
                            f"arr.ndim={len(self._aval.shape)}")

    def __float__(self) -> float:
        self._check_scalar()
        return float(self._value)

    def __int__(self) -> int:
        self._check_scalar()
        return int(self._value)

    def __complex__(self) -> complex:
        self._check_scalar()
        return complex(self._value)

    def __index__(self) -> int:
        if self._aval.shape or self._aval.dtype.kind not in "iu":
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return operator.index(self._host().item())

    def item(self, *args: Any) -> Any:
        """The value of a one-element array as a Python scalar.

        >>> import funcgrad.numpy as jnp
        >>> jnp.float32(2.5).item()
        2.5
        """
        return self._host().item(*args)

    def tolist(self) -> Any:
        """Nested Python lists of Python scalars."""
        return self._host().tolist()

    def tobytes(self, order: Literal["K", "A", "C", "F"] = "C") -> bytes:
        return self._host().tobytes(order)

    def __format__(self, spec: str) -> str:
        v = self._host()
        if v.ndim == 0:
            # As JAX: a 0-d Array formats as the Python scalar it holds.
            return format(v.item(), spec)
        if not spec:
            return str(self)
        return format(v, spec)

    def __repr__(self) -> str:
        prefix = "Array("
        dtype_str = f"dtype={self.aval.dtype.name}" + (
            ", weak_type=True" if self.aval.weak_type else "")
        width = np.get_printoptions()["linewidth"]
        if self.aval.size == 0:
            body = f"[], shape={self.aval.shape}"
        else:
            body = np.array2string(self._host(), prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=width)
        last = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last + len(dtype_str) + 2 > width else " "
        return f"{prefix}{body},{sep}{dtype_str})"

    def __str__(self) -> str:
        return str(self._host())

    def __reduce__(self) -> Any:
        return (_rebuild, (self._host(), self.aval.weak_type))

    def __copy__(self) -> ArrayImpl:
        return self

    def __deepcopy__(self, memo: Any) -> ArrayImpl:
        return self

    # ------------------------------------------------------------ placement

    @property
    def device(self) -> Any:
        """The device the buffer lives on."""
        from funcgrad.devices import device_of  # noqa: PLC0415

        return device_of(self._value)

    def devices(self) -> set[Any]:
        """The set of devices holding this array (one)."""
        return {self.device}

    @property
    def committed(self) -> bool:
        """Whether the array was placed on its device by name (``device_put(x, device)``, a
        sharding) or computed from such an array, as JAX's: computations may not move it.

        >>> import funcgrad as jax
        >>> import funcgrad.numpy as jnp
        >>> jnp.ones(2).committed, jax.device_put(jnp.ones(2), jax.devices()[0]).committed
        (False, True)
        """
        try:
            return bool(self._committed)
        except AttributeError:  # the hot path's ``wrap`` leaves the slot unset: not committed
            return False

    def addressable_data(self, index: int) -> ArrayImpl:
        """The data of the ``index``-th addressable shard: the whole array (one device)."""
        return ArrayImpl(self._value, self._aval)

    def block_until_ready(self) -> ArrayImpl:
        """Wait until the value is computed (CuPy work is asynchronous) and return it."""
        v = self._value
        if type(v) is not np.ndarray:
            import cupy  # noqa: PLC0415 - only when CuPy buffers exist

            # The whole device: the value may come from another stream than the current one.
            with cupy.cuda.Device(v.device.id):
                cupy.cuda.runtime.deviceSynchronize()
        return self

    def copy_to_host_async(self) -> None:
        """Start copying to the host (a no-op for host arrays)."""

    def is_deleted(self) -> bool:
        """Whether the buffer was given up (``delete()``, or donated to a ``jit`` call).

        >>> import funcgrad.numpy as jnp
        >>> x = jnp.ones(2)
        >>> x.delete()
        >>> x.is_deleted()
        True
        """
        return False

    def delete(self) -> None:
        """Give up the buffer, as JAX: any later use of the array raises RuntimeError."""
        del self._value
        # The class, not a flag, says "deleted": reads of ``_value`` on live arrays stay
        # plain slot reads, and on a deleted one they reach DeletedArray.__getattr__.
        self.__class__ = DeletedArray

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def sharding(self) -> Any:
        """Where the data lives: a ``SingleDeviceSharding`` of its device."""
        from funcgrad.sharding import sharding_of  # noqa: PLC0415

        return sharding_of(self)

    @property
    def addressable_shards(self) -> list[Any]:
        """The shards on this process's devices (one: the whole array)."""
        from funcgrad.sharding import shards_of  # noqa: PLC0415

        return shards_of(self)

    def unsafe_buffer_pointer(self) -> int:
        v = self._value
        return int(v.ctypes.data) if type(v) is np.ndarray else int(v.data.ptr)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        v = self._value
        if type(v) is np.ndarray:
            # Exported read-only (DLPack 1.0's flag), as JAX does: the consumer may not write.
            v = v.view()
            v.flags.writeable = False
        return v.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._value.__dlpack_device__()


class DeletedArray(ArrayImpl):
    """An ``ArrayImpl`` whose buffer was deleted or donated: its shape and dtype remain,
    every use of its value raises JAX's RuntimeError."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name == "_value":
            raise RuntimeError(f"Array has been deleted with shape={_short(self._aval)}.")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def is_deleted(self) -> bool:
        return True

    def delete(self) -> None:
        """Deleting twice is allowed (as in JAX)."""

    def __repr__(self) -> str:
        return repr(self._value)  # raises, as JAX's repr of a deleted array


def _short(aval: ShapedArray) -> str:
    """``float32[3]``: how JAX names an array's type in messages."""
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _read_only_view(v: np.ndarray) -> np.ndarray:
    """A view of an Array's buffer that nobody can make writable again (its base is a
    read-only memoryview, not the buffer), so no one outside changes an Array through NumPy."""
    try:
        out = np.asarray(memoryview(cast(Any, v)).toreadonly())
    except (ValueError, TypeError, BufferError):
        out = None  # dtypes the buffer protocol cannot spell (bfloat16 ...)
    if out is None or out.dtype != v.dtype:
        out = v.view()
        out.flags.writeable = False
    return out


def _rebuild(value: np.ndarray, weak_type: bool) -> ArrayImpl:
    return ArrayImpl(value, ShapedArray(value.shape, value.dtype, weak_type))


def commit(arrays: Any) -> None:
    """Mark the ArrayImpls among ``arrays`` (one, or a list) committed to their device; from
    then on the eager trace also marks what it computes from committed operands."""
    for a in arrays if isinstance(arrays, (list, tuple)) else (arrays,):
        if type(a) is ArrayImpl:
            a._committed = True
    if not _COMMITTING[0]:
        _COMMITTING[0] = True
        for hook in _ON_FIRST_COMMIT:
            hook()


_COMMITTING = [False]
_ON_FIRST_COMMIT: list[Any] = []  # (the core's eager trace registers its switch here)


def wrap(value: Any, aval: ShapedArray) -> ArrayImpl:
    """An ArrayImpl from a buffer and its (already computed) abstract value: the hot path."""
    out = ArrayImpl.__new__(ArrayImpl)
    out._value = value
    out._aval = aval
    return out
