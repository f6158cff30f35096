"""Run generated CUDA kernels on the CPU: g++, a small shim header, ctypes.

The shim defines ``__global__``/``__device__`` away and emulates the block and
thread indices with loops (one thread per block, so shared-memory trees and
``__syncthreads`` stay correct). It checks the numerics of the exact kernel
text that the CuPy backend would launch, on machines without a GPU.

>>> import numpy as np
>>> import funcgrad as fg
>>> from funcgrad.backends.cupy_backend import build_program
>>> prog = build_program(fg.make_jaxpr(lambda x: fg.numpy.exp(x) + 1.0)(np.zeros(3, np.float32)))
>>> run_on_host(prog, np.zeros(3, np.float32))[0].tolist()
[2.0, 2.0, 2.0]
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import tempfile
from typing import Any

import numpy as np

from funcgrad.backends.cuda_codegen import Kernel
from funcgrad.errors import BackendError

SHIM = r"""
#include <cmath>
#include <cstdint>
#include <cstring>
using namespace std;
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
#define __global__
#define __device__
#define __shared__ static
struct fg_dim3 { unsigned int x, y, z; };
static fg_dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline void __syncthreads() {}
"""

_CACHE_DIR = os.path.join(tempfile.gettempdir(), f"funcgrad-host-kernels-{os.getuid()}")
_loaded: dict[str, Any] = {}


def _launcher(kernel: Kernel) -> str:
    params = ", ".join(f"{t} {n}" for t, n in kernel.params)
    args = ", ".join(n for _, n in kernel.params)
    return (f'extern "C" void launch_{kernel.name}(unsigned int grid, {params}) {{\n'
            f"  gridDim.x = grid; blockDim.x = 1; threadIdx.x = 0;\n"
            f"  for (unsigned int b = 0; b < grid; ++b) {{ blockIdx.x = b; "
            f"{kernel.name}({args}); }}\n}}\n")


def compile_on_host(kernel: Kernel) -> Any:
    """Compile the kernel text with g++ into a shared library (cached by source)."""
    text = SHIM + kernel.source + _launcher(kernel)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    if digest in _loaded:
        return _loaded[digest]
    os.makedirs(_CACHE_DIR, exist_ok=True)
    lib_path = os.path.join(_CACHE_DIR, f"k_{digest}.so")
    if not os.path.exists(lib_path):
        src_path = os.path.join(_CACHE_DIR, f"k_{digest}.cpp")
        with open(src_path, "w") as f:
            f.write(text)
        res = subprocess.run(["g++", "-O1", "-std=c++14", "-shared", "-fPIC", src_path, "-o",
                              lib_path + ".tmp"], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise BackendError(f"g++ failed on kernel {kernel.name}:\n{res.stderr}")
        os.replace(lib_path + ".tmp", lib_path)
    lib = ctypes.CDLL(lib_path)
    _loaded[digest] = lib
    return lib


def launch_on_host(kernel: Kernel, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run one kernel on NumPy arrays; returns its freshly allocated outputs."""
    lib = compile_on_host(kernel)
    args: list[Any] = []
    for arr in inputs:
        arr = np.asarray(arr)
        args.append(ctypes.c_void_p(arr.ctypes.data))
        args.extend(ctypes.c_longlong(s // arr.itemsize) for s in arr.strides)
    outs = [np.empty(v.aval.shape, v.aval.dtype) for v in kernel.outputs]
    args.extend(ctypes.c_void_p(o.ctypes.data) for o in outs)
    grid = kernel.n_blocks if kernel.kind == "reduce" else 1
    getattr(lib, f"launch_{kernel.name}")(ctypes.c_uint(grid), *args)
    return outs


def run_on_host(program: Any, *args: Any) -> list[Any]:
    """Run a CuPy-backend program with its kernels on the CPU and its calls on NumPy."""
    return program.run(np, *args, launch=lambda k, ins: launch_on_host(k, ins))
