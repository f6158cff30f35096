"""The emulated device array and the rules CuPy enforces at its API boundary.

A ``ndarray`` wraps a NumPy buffer that stands for device memory. What CuPy refuses, it
refuses: NumPy arrays (0-d included) as operands of functions and ufuncs, implicit
conversion to NumPy (``__array__``), operands on another device than the current one.
Every host<->device copy and every synchronisation is counted in ``STATS``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from fakecupy import _streams

GUARD = 256
GUARD_BYTE = 0xA5


@dataclasses.dataclass
class Stats:
    """What the program asked of the "device" since the last ``reset``."""

    h2d: int = 0
    h2d_bytes: int = 0  # bytes copied to the device
    d2h: int = 0
    syncs: int = 0
    launches: int = 0
    compiles: int = 0
    ops: int = 0
    null_stream_work: int = 0  # writes made on the legacy default stream

    def reset(self) -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, 0)

    def snapshot(self) -> dict[str, int]:
        return dataclasses.asdict(self)


STATS = Stats()
N_DEVICES = 1
_current = threading.local()


def current_device_id() -> int:
    return int(getattr(_current, "id", 0))


class Device:
    """``cupy.cuda.Device``: a device id, and a context that makes it current."""

    __module__ = "cupy.cuda"
    compute_capability = "90"

    def __init__(self, device: int | None = None) -> None:
        self.id = current_device_id() if device is None else int(device)
        if not 0 <= self.id < N_DEVICES:
            from fakecupy.cuda import runtime  # noqa: PLC0415

            raise runtime.CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._prev: list[int] = []

    def __enter__(self) -> Device:
        self._prev.append(current_device_id())
        _current.id = self.id
        return self

    def __exit__(self, *exc: object) -> None:
        _current.id = self._prev.pop()

    def use(self) -> None:
        _current.id = self.id

    def synchronize(self) -> None:
        STATS.syncs += 1
        _streams.device_synchronized()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


def _garbage(shape: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Fresh "device memory" as cudaMalloc gives it: not zeroed (NaN for floats, all-ones
    bytes for integers), between guard bytes that kernels must not touch."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.full(n + 2 * GUARD, GUARD_BYTE, np.uint8)
    body = raw[GUARD:GUARD + n]
    if dtype.kind in "fc":
        body.view(dtype)[...] = np.nan
    elif dtype.kind == "b":
        body[...] = 1
    else:
        body[...] = 0xFF
    return raw, body.view(dtype).reshape(shape)


def _check_operand(x: Any, where: str, stream: Any = None) -> None:
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, ndarray):
        if x._dev != current_device_id():
            raise ValueError(f"Array device must be same as the current device: array "
                             f"device = {x._dev} while current = {current_device_id()} "
                             f"({where})")
        _streams.read(x._a, where, stream)


def unwrap(x: Any, where: str) -> Any:
    """The NumPy buffer of a device array; NumPy arrays are refused as CuPy refuses them."""
    if isinstance(x, ndarray):
        _check_operand(x, where)
        return x._a
    if isinstance(x, np.ndarray):
        _check_operand(x, where)
    if isinstance(x, (list, tuple)):
        return type(x)(unwrap(e, where) for e in x)
    return x


def wrap(out: Any) -> Any:
    """NumPy results as device arrays on the current device (scalars as 0-d arrays)."""
    if isinstance(out, np.ndarray):
        return ndarray._from(out)
    if isinstance(out, np.generic):
        return ndarray._from(np.asarray(out))
    if isinstance(out, tuple):
        return tuple(wrap(o) for o in out)
    if isinstance(out, list):
        return [wrap(o) for o in out]
    return out


def call(fn: Callable[..., Any], name: str, args: tuple[Any, ...],
         kwargs: dict[str, Any]) -> Any:
    a = unwrap(args, name)
    k = {key: unwrap(v, name) for key, v in kwargs.items()}
    STATS.ops += 1
    res = wrap(fn(*a, **k))
    out = kwargs.get("out")
    for o in out if isinstance(out, tuple) else (out,):
        if isinstance(o, ndarray):
            _streams.wrote(o._a)
    return res


def _ufunc(name: str) -> Callable[..., Any]:
    from fakecupy import _module  # noqa: PLC0415

    return getattr(_module, name)  # type: ignore[no-any-return]


def _binop(name: str, reflected: bool = False) -> Callable[[ndarray, Any], Any]:
    def op(self: ndarray, other: Any) -> Any:
        if isinstance(other, np.ndarray):
            raise TypeError(f"Unsupported type {type(other)}")
        f = _ufunc(name)
        return f(other, self) if reflected else f(self, other)

    op.__name__ = f"__{'r' if reflected else ''}{name}__"
    return op


def _inplace(name: str) -> Callable[[ndarray, Any], Any]:
    def op(self: ndarray, other: Any) -> Any:
        _ufunc(name)(self, other, out=self)
        return self

    return op


def _method(name: str) -> Callable[..., Any]:
    def m(self: ndarray, *args: Any, **kwargs: Any) -> Any:
        _check_operand(self, name)
        a = unwrap(args, name)
        k = {key: unwrap(v, name) for key, v in kwargs.items()}
        STATS.ops += 1
        res = wrap(getattr(self._a, name)(*a, **k))
        if name in _IN_PLACE:
            _streams.wrote(self._a)
        return res

    m.__name__ = name
    return m


_IN_PLACE = frozenset({"put", "sort", "partition"})


class ndarray:  # noqa: N801 - CuPy's name
    """``cupy.ndarray``: a distinct type (not a NumPy subclass) holding "device" memory."""

    __module__ = "cupy"
    __array_priority__ = 100
    __slots__ = ("_a", "_dev", "_raw")

    def __init__(self, shape: Any, dtype: Any = float, order: str = "C") -> None:
        self._raw, self._a = _garbage(shape, dtype)
        self._dev = current_device_id()
        _streams.allocated(self._a)

    @classmethod
    def _from(cls, a: np.ndarray, raw: np.ndarray | None = None) -> ndarray:
        out = object.__new__(cls)
        out._a = a
        out._raw = raw
        out._dev = current_device_id()
        _streams.result(a)
        return out

    # ------------------------------------------------------------- properties
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: ndarray._from(self._a.T))
    mT = property(lambda self: ndarray._from(np.swapaxes(self._a, -1, -2)))
    real = property(lambda self: ndarray._from(self._a.real))
    imag = property(lambda self: ndarray._from(self._a.imag))

    @property
    def device(self) -> Device:
        return Device(self._dev)

    @property
    def data(self) -> Any:
        return _Pointer(int(self._a.ctypes.data), self._dev)

    # ------------------------------------------------------- host transfers
    def get(self, stream: Any = None, order: str = "C", out: Any = None,
            blocking: bool = True) -> np.ndarray:
        """Copy to the host (the explicit way): on ``stream`` (the current one by default),
        which the host then waits for."""
        _check_operand(self, "get", stream)
        STATS.d2h += 1
        STATS.syncs += 1
        _streams.host_synced(stream)
        if out is not None:
            out[...] = self._a
            return out  # type: ignore[no-any-return]
        return np.array(self._a, order=order, copy=True)

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        STATS.h2d += 1
        STATS.h2d_bytes += np.asarray(arr).nbytes
        self._a[...] = np.asarray(arr)
        _streams.wrote(self._a, stream)

    def item(self, *args: Any) -> Any:
        return self.get().item(*args)

    def tolist(self) -> Any:
        return self.get().tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def __bool__(self) -> bool:
        return bool(self.get())

    def __int__(self) -> int:
        return int(self.get())

    def __float__(self) -> float:
        return float(self.get())

    def __complex__(self) -> complex:
        return complex(self.get())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub" or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.get())

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    def __format__(self, spec: str) -> str:
        return format(self.get(), spec)

    # ------------------------------------------------- NumPy interoperation
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from fakecupy import _module  # noqa: PLC0415

        f = getattr(_module, ufunc.__name__, None)
        if f is None:
            return NotImplemented
        return getattr(f, method)(*inputs, **kwargs) if method != "__call__" else \
            f(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from fakecupy import _module  # noqa: PLC0415

        try:
            f = getattr(_module, func.__name__)
        except AttributeError:
            return NotImplemented
        return f(*args, **kwargs)

    # -------------------------------------------------------------- basics
    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[ndarray]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(len(self._a)):
            yield self[i]

    def __getitem__(self, idx: Any) -> ndarray:
        _check_operand(self, "__getitem__")
        STATS.ops += 1
        return wrap(self._a[_index(idx)])  # type: ignore[no-any-return]

    def __setitem__(self, idx: Any, value: Any) -> None:
        _check_operand(self, "__setitem__")
        STATS.ops += 1
        self._a[_index(idx)] = unwrap(value, "__setitem__")
        _streams.wrote(self._a)

    __hash__ = None  # type: ignore[assignment]

    def astype(self, dtype: Any, order: str = "K", casting: Any = None, subok: Any = None,
               copy: bool = True) -> ndarray:
        _check_operand(self, "astype")
        STATS.ops += 1
        return ndarray._from(self._a.astype(dtype, order=order, copy=copy))

    def copy(self, order: str = "C") -> ndarray:
        _check_operand(self, "copy")
        STATS.ops += 1
        return ndarray._from(self._a.copy(order=order))

    def view(self, dtype: Any = None) -> ndarray:
        return ndarray._from(self._a.view() if dtype is None else self._a.view(dtype))

    def fill(self, value: Any) -> None:
        _check_operand(value, "fill")
        _check_operand(self, "fill")
        self._a.fill(unwrap(value, "fill"))
        _streams.wrote(self._a)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, self._dev)

    for _n in ("reshape", "transpose", "swapaxes", "squeeze", "ravel", "flatten", "sum",
               "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all",
               "cumsum", "cumprod", "clip", "dot", "conj", "conjugate", "round", "nonzero",
               "sort", "argsort", "take", "repeat", "diagonal", "trace", "put", "compress",
               "choose", "partition", "argpartition", "searchsorted" , "ptp"):
        locals()[_n] = _method(_n)

    for _n in ("add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
               "power", "matmul", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
               "right_shift", "divmod"):
        _d = {"subtract": "sub", "multiply": "mul", "true_divide": "truediv",
              "floor_divide": "floordiv", "remainder": "mod", "power": "pow",
              "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
              "left_shift": "lshift", "right_shift": "rshift"}.get(_n, _n)
        locals()[f"__{_d}__"] = _binop(_n)
        locals()[f"__r{_d}__"] = _binop(_n, reflected=True)
        if _n != "divmod":
            locals()[f"__i{_d}__"] = _inplace(_n)
    for _n, _u in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                   ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")):
        locals()[f"__{_n}__"] = _binop(_u)
    del _n, _d, _u

    def __neg__(self) -> Any:
        return _ufunc("negative")(self)

    def __pos__(self) -> Any:
        return _ufunc("positive")(self)

    def __abs__(self) -> Any:
        return _ufunc("absolute")(self)

    def __invert__(self) -> Any:
        return _ufunc("invert")(self)


class _Pointer:
    __slots__ = ("device_id", "ptr")

    def __init__(self, ptr: int, device_id: int) -> None:
        self.ptr = ptr
        self.device_id = device_id


def _index(idx: Any) -> Any:
    if isinstance(idx, tuple):
        return tuple(_index(i) for i in idx)
    if isinstance(idx, ndarray):
        return idx._a
    if isinstance(idx, list):
        return [_index(i) for i in idx]
    return idx


def check_guards(arrays: list[Any], kernel: str) -> None:
    """Raise when a kernel wrote outside an array it was given (guard bytes changed)."""
    for a in arrays:
        raw = a._raw if isinstance(a, ndarray) else None
        if raw is None:
            continue
        if (raw[:GUARD] != GUARD_BYTE).any() or (raw[-GUARD:] != GUARD_BYTE).any():
            raise RuntimeError(f"kernel {kernel} wrote outside an array of shape {a.shape} "
                               f"and dtype {a.dtype} (guard bytes changed)")


@contextlib.contextmanager
def counting() -> Iterator[Stats]:
    """What the block asked of the device: the counters' increase, filled in at its end."""
    before = STATS.snapshot()
    delta = Stats()
    try:
        yield delta
    finally:
        for k, v in STATS.snapshot().items():
            setattr(delta, k, v - before[k])
