"""The module installed as ``cupy``: CuPy's names (and only those), computed with NumPy.

A name the pinned CuPy does not have raises ``AttributeError`` as ``cupy`` would; a CuPy name
with a NumPy counterpart becomes a wrapper that moves no data between host and device
(NumPy arrays are refused, results are device arrays, full reductions give 0-d arrays);
the few CuPy-only names funcgrad uses are defined here.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from fakecupy import _api, _random, _streams
from fakecupy._array import STATS, _garbage, call, ndarray, unwrap, wrap
from fakecupy._kernels import RawKernel, RawModule
from fakecupy.cuda import make_module

cuda = make_module()
# Functions that only look at types and shapes: CuPy accepts any array-like there.
_INSPECT = {"result_type", "can_cast", "min_scalar_type", "common_type", "shape", "ndim",
            "size", "isscalar", "iscomplexobj", "isrealobj", "broadcast_shapes"}


class ufunc:  # noqa: N801 - CuPy's name
    """A CuPy ufunc: NumPy's ufunc behind CuPy's operand rules."""

    __module__ = "cupy._core._kernel"

    def __init__(self, u: np.ufunc) -> None:
        self._u = u
        self.__name__ = self.name = u.__name__
        self.nin, self.nout, self.nargs = u.nin, u.nout, u.nargs
        self.types = u.types

    def _run(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        out = kwargs.get("out")
        res = call(fn, self.name, args, kwargs)
        if isinstance(out, ndarray):
            return out
        if isinstance(out, tuple) and all(isinstance(o, ndarray) for o in out):
            return out
        return res

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._u, args, kwargs)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._u.reduce, args, kwargs)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._u.accumulate, args, kwargs)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._u.outer, args, kwargs)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        if not isinstance(a, ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        args = (indices,) if b is None else (indices, b)
        call(lambda *xs: self._u.at(unwrap(a, self.name), *xs), self.name, args, {})
        _streams.wrote(a._a)

    def __repr__(self) -> str:
        return f"<ufunc '{self.name}'>"


def _function(name: str, fn: Any) -> Any:
    def f(*args: Any, **kwargs: Any) -> Any:
        return call(fn, name, args, kwargs)

    f.__name__ = f.__qualname__ = name
    f.__module__ = "cupy"
    f.__doc__ = f"cupy.{name} (emulated with numpy.{name})"
    return f


def _to_device(host: np.ndarray) -> ndarray:
    # CuPy 14 has bfloat16 arrays (ml_dtypes' dtype); other void types it refuses.
    if (host.dtype.kind in "OUSV" and host.dtype.name != "bfloat16") or \
            host.dtype.itemsize == 0:
        raise ValueError(f"Unsupported dtype {host.dtype}")
    STATS.h2d += 1
    STATS.h2d_bytes += host.nbytes
    raw, buf = _garbage(host.shape, host.dtype)
    buf[...] = host
    return ndarray._from(buf, raw)


def _contains_device(obj: Any) -> bool:
    if isinstance(obj, ndarray):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_device(o) for o in obj)
    return False


def asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> Any:
    """Device arrays pass (converted to ``dtype`` on the device); host data is uploaded."""
    if isinstance(a, ndarray):
        unwrap(a, "asarray")
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    if _contains_device(a):
        # CuPy stacks a sequence of device arrays on the device.
        return wrap(np.asarray(unwrap(a, "asarray"), dtype))
    return _to_device(np.asarray(a, dtype, order=order))


asanyarray = asarray


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K",
          subok: bool = False, ndmin: int = 0, *, blocking: bool = False) -> Any:
    if isinstance(obj, ndarray) or _contains_device(obj):
        out = asarray(obj, dtype)
        return out.copy() if copy and out is obj else out
    return _to_device(np.array(obj, dtype, copy=True, order=order, ndmin=ndmin))


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None,
            blocking: bool = True) -> np.ndarray:
    """The explicit device->host copy (host data passes through)."""
    if isinstance(a, ndarray):
        return a.get(stream=stream, order=order, out=out)
    return np.asarray(a, order=order)


def empty(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return ndarray(shape, dtype)


def empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: Any = None,
               shape: Any = None) -> ndarray:
    if not isinstance(prototype, ndarray):
        raise TypeError(f"Unsupported type {type(prototype)}")
    return ndarray(prototype.shape if shape is None else shape,
                   prototype.dtype if dtype is None else dtype)


# cuBLAS's compute type for float32 products (cupy._core._routines_linalg): with TF32, the
# tensor cores read each operand with a 10-bit mantissa, as emulated here.
_routines_linalg = types.ModuleType("cupy._core._routines_linalg")
for _i, _n in enumerate(["TBD", "DEFAULT", "PEDANTIC", "FP16", "FP32", "FP64", "BF16", "TF32"]):
    setattr(_routines_linalg, f"COMPUTE_TYPE_{_n}", _i)
_COMPUTE_TYPES: dict[Any, int] = {}


def _set_compute_type(dtype: Any, compute_type: int) -> None:
    _COMPUTE_TYPES[np.dtype(dtype)] = int(compute_type)


def _get_compute_type(dtype: Any) -> int:
    return _COMPUTE_TYPES.get(np.dtype(dtype), 1)


_routines_linalg.set_compute_type = _set_compute_type  # type: ignore[attr-defined]
_routines_linalg.get_compute_type = _get_compute_type  # type: ignore[attr-defined]
_core = types.ModuleType("cupy._core")
_core._routines_linalg = _routines_linalg  # type: ignore[attr-defined]
_core.set_compute_type = _set_compute_type  # type: ignore[attr-defined]
_core.get_compute_type = _get_compute_type  # type: ignore[attr-defined]


def _tf32(x: np.ndarray) -> np.ndarray:
    """float32 values rounded (to nearest even) to TF32's 10-bit mantissa."""
    u = np.ascontiguousarray(x).view(np.uint32)
    r = (u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return np.where(np.isfinite(x), r.view(np.float32), x)


def _np_matmul(a: Any, b: Any, **kwargs: Any) -> Any:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == b.dtype == np.float32 and _get_compute_type(np.float32) == 7:
        a, b = _tf32(a), _tf32(b)
    return np.matmul(a, b, **kwargs)


def matmul(*args: Any, **kwargs: Any) -> Any:
    """cupy.matmul: cuBLAS, in TF32 for float32 where the compute type says so."""
    return call(_np_matmul, "matmul", args, kwargs)


def get_default_memory_pool() -> Any:
    from fakecupy.cuda import DEFAULT_MEMORY_POOL  # noqa: PLC0415

    return DEFAULT_MEMORY_POOL


def get_array_module(*args: Any) -> Any:
    import sys  # noqa: PLC0415

    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else np


def _make_attr(module: str, name: str, np_mod: Any) -> Any:
    if not _api.has(module, name):
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    if f"{module}.{name}" in _api.NUMPY_SAME:
        return getattr(np, name)
    obj = getattr(np_mod, name, None)
    if obj is None:
        raise AttributeError(f"{module}.{name} exists in CuPy but is not emulated by "
                             "tests/support/fakecupy (add it there)")
    if isinstance(obj, np.ufunc):
        return ufunc(obj)
    if isinstance(obj, type) or not callable(obj):
        return obj
    if name in _INSPECT:
        return obj
    return _function(name, obj)


def __getattr__(name: str) -> Any:
    value = _make_attr("cupy", name, np)
    globals()[name] = value
    return value


def submodule(module: str, np_mod: Any) -> types.ModuleType:
    """A CuPy submodule whose names wrap ``np_mod``'s, restricted to the snapshot."""
    mod = types.ModuleType(module)

    def getattr_(name: str) -> Any:
        value = _make_attr(module, name, np_mod)
        setattr(mod, name, value)
        return value

    mod.__getattr__ = getattr_  # type: ignore[method-assign]
    return mod


linalg = submodule("cupy.linalg", np.linalg)
fft = submodule("cupy.fft", np.fft)
random = submodule("cupy.random", np.random)
random.RandomState = _random.RandomState  # type: ignore[attr-defined]
# cupy.lib holds only stride_tricks (as_strided makes views of device memory, as NumPy's).
lib = types.ModuleType("cupy.lib")
lib.stride_tricks = submodule(  # type: ignore[attr-defined]
    "cupy.lib.stride_tricks", np.lib.stride_tricks)

__all__ = ["RawKernel", "RawModule", "array", "asarray", "asanyarray", "asnumpy", "cuda",
           "empty", "empty_like", "fft", "get_array_module", "get_default_memory_pool", "linalg",
           "matmul",
           "ndarray", "random", "ufunc"]
