"""``RawKernel`` and ``RawModule``: compiled by the real NVRTC as CuPy compiles them, run on
the CPU by funcgrad's host harness with the launch's real grid and block.

Before running, a launch is checked as the GPU would (or should) check it: the grid and
block limits, the number of arguments against the kernel's C signature, and each argument
against its parameter (a device array for a pointer of the same element type, a scalar of
exactly the parameter's C type: CuPy passes a Python ``int`` as ``long long`` and a Python
``float`` as ``double``, whatever the kernel expects). After it, the guard bytes around
every array argument must be intact. Its array arguments are reads on the current stream,
and those it changed are writes there (``_streams``).
"""

from __future__ import annotations

import ctypes
from typing import Any

import ml_dtypes
import numpy as np

from fakecupy import _streams
from fakecupy._array import STATS, check_guards, ndarray
from funcgrad.backends.cuda_codegen import nvrtc_compile
from funcgrad.backends.host_cuda import c_argument, kernel_params, launch_source_on_host

# Filled by ``install`` (from the real CuPy, before it is hidden): (prefix, suffix) around
# the user's options in CuPy's NVRTC option tuple.
CUPY_OPTION_PARTS: tuple[tuple[str, ...], tuple[str, ...]] | None = None

C_SCALARS = {
    "bool": np.bool_, "char": np.int8, "signed char": np.int8, "unsigned char": np.uint8,
    "short": np.int16, "unsigned short": np.uint16, "int": np.int32, "unsigned int": np.uint32,
    "long": np.int64, "long long": np.int64, "unsigned long long": np.uint64,
    "size_t": np.uint64, "float": np.float32, "double": np.float64, "__half": np.float16,
    "half": np.float16, "__nv_bfloat16": ml_dtypes.bfloat16,
}


MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2 ** 31 - 1, 65535, 65535)

_compiled: dict[tuple[str, str, tuple[str, ...]], bytes] = {}


def cupy_nvrtc_options(options: tuple[str, ...]) -> tuple[str, ...]:
    if CUPY_OPTION_PARTS is None:
        raise RuntimeError("fakecupy is not installed (install() computes CuPy's options)")
    pre, post = CUPY_OPTION_PARTS
    return (*pre, *options, *post)


def _base_type(c_type: str) -> str:
    words = [w for w in c_type.replace("*", " ").split() if w not in ("const", "__restrict__",
                                                                         "volatile")]
    return " ".join(words)


class RawKernel:
    """``cupy.RawKernel(code, name, options=())``; compiled at the first launch."""

    __module__ = "cupy"

    def __init__(self, code: str, name: str, options: tuple[str, ...] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False,
                 enable_cooperative_groups: bool = False, jitify: bool = False) -> None:
        self.code = code
        self.name = name
        self.options = tuple(options)
        self.params = kernel_params(code, name)
        self.cubin: bytes | None = None

    def compile(self, log_stream: Any = None) -> None:
        """Compile with NVRTC, CuPy's options and ``-arch=sm_90`` (CUBIN), once per text."""
        if self.cubin is not None:
            return
        opts = cupy_nvrtc_options(self.options)
        key = (self.code, self.name, opts)
        if key not in _compiled:
            STATS.compiles += 1
            _compiled[key] = nvrtc_compile(self.code, f"{self.name}.cu", options=opts)
        self.cubin = _compiled[key]

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...],
                 *, shared_mem: int = 0, enable_cooperative_groups: bool = False) -> None:
        from fakecupy.cuda import driver  # noqa: PLC0415

        grid, block = _dims(grid, "grid"), _dims(block, "block")
        if any(b > m for b, m in zip(block, MAX_BLOCK)) or \
                int(np.prod(block)) > MAX_THREADS_PER_BLOCK or \
                any(g > m for g, m in zip(grid, MAX_GRID)):
            raise driver.CUDADriverError(f"CUDA_ERROR_INVALID_VALUE: launch of {self.name} "
                                         f"with grid {grid} and block {block} exceeds the "
                                         "device limits")
        if not isinstance(args, tuple):
            raise TypeError(f"args must be a tuple, got {type(args).__name__}")
        if len(args) != len(self.params):
            raise TypeError(f"kernel {self.name} takes {len(self.params)} arguments "
                            f"({', '.join(t for t, _ in self.params)}), got {len(args)}")
        self.compile()
        c_args = [self._marshal(i, a) for i, a in enumerate(args)]
        arrays = [a for a in args if isinstance(a, ndarray)]
        for a in arrays:
            _streams.read(a._a, f"kernel {self.name}")
        before = [a._a.tobytes() for a in arrays]
        STATS.launches += 1
        launch_source_on_host(self.code, self.name, grid, block, c_args)
        check_guards(arrays, self.name)
        for a, b in zip(arrays, before):
            if a._a.tobytes() != b:
                _streams.wrote(a._a)

    def _marshal(self, i: int, a: Any) -> Any:
        c_type, pname = self.params[i]
        where = f"argument {i} ({c_type} {pname}) of kernel {self.name}"
        if isinstance(a, np.ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        if "*" in c_type:
            if not isinstance(a, ndarray):
                raise TypeError(f"{where} is a pointer; got {type(a).__name__}")
            want = C_SCALARS.get(_base_type(c_type))
            if want is not None and np.dtype(want) != a.dtype:
                raise TypeError(f"{where} points to {_base_type(c_type)} but the array is "
                                f"{a.dtype}")
            return ctypes.c_void_p(a._a.ctypes.data)
        if isinstance(a, ndarray):
            raise TypeError(f"{where} is a scalar; got a device array")
        # CuPy's conversion of Python scalars to C (cupy/_core/_scalar.pyx).
        value = {bool: np.bool_, int: np.int64, float: np.float64}.get(type(a), lambda v: v)(a)
        if not isinstance(value, np.generic):
            raise TypeError(f"Unsupported type {type(a)}")
        want = C_SCALARS.get(_base_type(c_type))
        if want is None or np.dtype(want) != value.dtype:
            raise TypeError(f"{where} is {c_type} but CuPy would pass {value.dtype} "
                            f"({type(a).__name__} {a!r}): wrong size or type")
        return c_argument(value)

    @property
    def attributes(self) -> dict[str, int]:
        return {"max_threads_per_block": MAX_THREADS_PER_BLOCK}


class RawModule:
    """``cupy.RawModule(code=...)``: ``get_function(name)`` gives a ``RawKernel``."""

    __module__ = "cupy"

    def __init__(self, *, code: str, options: tuple[str, ...] = (), backend: str = "nvrtc",
                 name_expressions: Any = None, jitify: bool = False) -> None:
        self.code = code
        self.options = tuple(options)

    def get_function(self, name: str) -> RawKernel:
        return RawKernel(self.code, name, self.options)

    def compile(self, log_stream: Any = None) -> None:
        opts = cupy_nvrtc_options(self.options)
        key = (self.code, "", opts)
        if key not in _compiled:
            STATS.compiles += 1
            _compiled[key] = nvrtc_compile(self.code, "module.cu", options=opts)


def _dims(d: Any, what: str) -> tuple[int, int, int]:
    t = (d,) if isinstance(d, int) else tuple(d)
    if not 1 <= len(t) <= 3 or any(not isinstance(v, (int, np.integer)) for v in t):
        raise TypeError(f"{what} must be a tuple of 1 to 3 ints, got {d!r}")
    if any(int(v) < 1 for v in t):
        from fakecupy.cuda import driver  # noqa: PLC0415

        raise driver.CUDADriverError(f"CUDA_ERROR_INVALID_VALUE: {what} {d!r} has a zero "
                                     "or negative size")
    full = (*map(int, t), 1, 1)[:3]
    return (full[0], full[1], full[2])
