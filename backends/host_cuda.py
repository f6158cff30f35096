"""Run CUDA kernels on the CPU: g++, a small shim header, ctypes.

The shim defines ``__global__``/``__device__`` away and runs a launch as CUDA would: every
block of the grid, and in each block every thread of ``blockDim`` (x, y and z). Kernels
without ``__syncthreads`` run their threads one after the other; kernels with it run each
thread of a block as a coroutine (``ucontext``) that yields at the barrier, so shared-memory
trees see exactly what the threads of a real block see. A barrier that some threads of a
block never reach (they exited first) is reported as an error, not hidden. It checks the
numerics of the exact kernel text that the CuPy backend launches, on machines without a GPU.

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
import re
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad.backends.cuda_codegen import Kernel
from funcgrad.backends.cuda_launch import Launch, plan_launches
from funcgrad.errors import BackendError

SHIM = r"""
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ucontext.h>
using namespace std;
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; memcpy(&d, &i, 8); return d; }
// Half precision as cuda_fp16.h/cuda_bf16.h name it: GCC's _Float16 rounds as the GPU does;
// bfloat16 is rounded to nearest even by hand.
struct __half { unsigned short x; };
struct __nv_bfloat16 { unsigned short x; };
static inline float __half2float(__half h) { _Float16 f; memcpy(&f, &h.x, 2); return (float)f; }
static inline __half fg_h(_Float16 f) { __half h; memcpy(&h.x, &f, 2); return h; }
static inline __half __float2half_rn(float v) { return fg_h((_Float16)v); }
static inline __half __double2half(double v) { return fg_h((_Float16)v); }
static inline float __bfloat162float(__nv_bfloat16 b) {
  unsigned int u = (unsigned int)b.x << 16; float f; memcpy(&f, &u, 4); return f; }
static inline __nv_bfloat16 __float2bfloat16_rn(float v) {
  unsigned int u; memcpy(&u, &v, 4); __nv_bfloat16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) { b.x = (unsigned short)((u >> 16) | 0x40u); return b; }
  u += 0x7fffu + ((u >> 16) & 1u); b.x = (unsigned short)(u >> 16); return b; }
// CUDA's device functions that C++ lacks: bit counts, and erfinv (Giles' single-precision
// approximation refined by Newton steps in double: the device's values to the last bit or
// so).
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) {
    if (y == 1.0) return HUGE_VAL;
    if (y == -1.0) return -HUGE_VAL;
    return NAN; }
  double w = -log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5; p = 2.81022636e-08; p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w; p = 0.00021858087 + p * w; p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w; p = 0.246640727 + p * w; p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0; p = -0.000200214257; p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w; p = -0.00367342844 + p * w; p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w; p = 0.00943887047 + p * w; p = 1.00167406 + p * w;
    p = 2.83297682 + p * w; }
  // Newton on erf near 0; near +-1 on log(erfc) (1 - |y| is exact there, erf(x) is not,
  // and erfc's slope changes too fast for Newton on erfc itself).
  double a = fabs(y), x = p * a, q = 1.0 - a;
  for (int k = 0; k < 4; ++k) {
    double slope = 1.1283791670955126 * exp(-x * x);
    if (a > 0.5) { double c = erfc(x); x += (log(c) - log(q)) * c / slope; }
    else x += (a - erf(x)) / slope; }
  return y < 0 ? -x : x; }
static inline float erfinvf(float y) { return (float)erfinv((double)y); }
#define __global__
#define __device__
#define __shared__ static
#define __restrict__
struct fg_dim3 { unsigned int x, y, z; };
static fg_dim3 threadIdx, blockIdx, blockDim, gridDim;
static void (*fg_body)();
static ucontext_t fg_sched;
static ucontext_t* fg_fibers;
static int* fg_state;  // 0 runnable, 1 waiting at __syncthreads, 2 exited
static unsigned int fg_cur;
static bool fg_fibered;
static inline void fg_set_thread(unsigned int t) {
  threadIdx.x = t % blockDim.x; threadIdx.y = (t / blockDim.x) % blockDim.y;
  threadIdx.z = t / (blockDim.x * blockDim.y); }
static inline void __syncthreads() {
  if (!fg_fibered) return;
  fg_state[fg_cur] = 1;
  swapcontext(&fg_fibers[fg_cur], &fg_sched); }
static void fg_fiber_main() { fg_body(); fg_state[fg_cur] = 2; }
static const size_t FG_STACK = 64 * 1024;
// Runs one block; returns 0, or 1 when a barrier was not reached by every thread.
static int fg_block(unsigned int n, char* stacks) {
  if (!fg_fibered) {
    for (unsigned int t = 0; t < n; ++t) { fg_set_thread(t); fg_body(); }
    return 0; }
  for (unsigned int t = 0; t < n; ++t) {
    getcontext(&fg_fibers[t]);
    fg_fibers[t].uc_stack.ss_sp = stacks + (size_t)t * FG_STACK;
    fg_fibers[t].uc_stack.ss_size = FG_STACK;
    fg_fibers[t].uc_link = &fg_sched;
    makecontext(&fg_fibers[t], fg_fiber_main, 0);
    fg_state[t] = 0; }
  for (;;) {
    for (unsigned int t = 0; t < n; ++t) {
      if (fg_state[t] != 0) continue;
      fg_cur = t; fg_set_thread(t);
      swapcontext(&fg_sched, &fg_fibers[t]); }
    unsigned int waiting = 0, exited = 0;
    for (unsigned int t = 0; t < n; ++t) {
      waiting += fg_state[t] == 1; exited += fg_state[t] == 2; }
    if (waiting == 0) return 0;
    if (exited != 0) return 1;
    for (unsigned int t = 0; t < n; ++t) fg_state[t] = 0; } }
static int fg_grid(unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                   unsigned int by, unsigned int bz, bool fibered) {
  gridDim.x = gx; gridDim.y = gy; gridDim.z = gz;
  blockDim.x = bx; blockDim.y = by; blockDim.z = bz;
  unsigned int n = bx * by * bz;
  fg_fibered = fibered;
  char* stacks = 0;
  if (fibered) {
    stacks = (char*)malloc((size_t)n * FG_STACK);
    fg_fibers = (ucontext_t*)malloc(n * sizeof(ucontext_t));
    fg_state = (int*)malloc(n * sizeof(int)); }
  int err = 0;
  for (unsigned int z = 0; z < gz && !err; ++z)
    for (unsigned int y = 0; y < gy && !err; ++y)
      for (unsigned int x = 0; x < gx && !err; ++x) {
        blockIdx.x = x; blockIdx.y = y; blockIdx.z = z;
        err = fg_block(n, stacks); }
  if (fibered) { free(stacks); free(fg_fibers); free(fg_state); }
  return err; }
"""

_SIGNATURE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')


def kernel_params(source: str, name: str) -> list[tuple[str, str]]:
    """The (C type, name) pairs of ``extern "C" __global__ void name(...)`` in ``source``.

    >>> kernel_params('extern "C" __global__ void k(const float* x, int n) {}', "k")
    [('const float*', 'x'), ('int', 'n')]
    """
    for m in _SIGNATURE.finditer(source):
        if m.group(1) != name:
            continue
        params = []
        for p in m.group(2).split(","):
            p = p.strip()
            if not p:
                continue
            pm = re.match(r"(.*?[\s*&])(\w+)$", p)
            if pm is None:
                raise BackendError(f"cannot read parameter {p!r} of kernel {name}")
            params.append((" ".join(pm.group(1).split()), pm.group(2)))
        return params
    raise BackendError(f'no extern "C" __global__ function {name!r} in the kernel source')


def _cache_dir() -> str:
    """A private per-user directory (0700, owned by us): a library planted by someone else
    in a shared temp dir must never be loaded."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(base, "funcgrad", "host-kernels")
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise BackendError(f"the host-kernel cache {path} is not a private directory owned by "
                           "this user (mode 0700); remove it and retry")
    return path


_loaded: dict[str, Any] = {}


def _entry(name: str, params: Sequence[tuple[str, str]], fibered: bool) -> str:
    """A C entry point taking the argument pointers as cuLaunchKernel's ``kernelParams``."""
    unpack = ", ".join(f"*({t.replace('__restrict__', '').strip()}*)fg_args[{i}]"
                       for i, (t, _) in enumerate(params))
    return (f"static void** fg_args;\nstatic void fg_call() {{ {name}({unpack}); }}\n"
            f'extern "C" int fg_launch(unsigned int gx, unsigned int gy, unsigned int gz, '
            f"unsigned int bx, unsigned int by, unsigned int bz, void** args) {{\n"
            f"  fg_args = args; fg_body = fg_call;\n"
            f"  return fg_grid(gx, gy, gz, bx, by, bz, {'true' if fibered else 'false'});\n}}\n")


def compile_source_on_host(source: str, name: str) -> Any:
    """Compile one kernel of ``source`` with g++ into a shared library (cached by text)."""
    params = kernel_params(source, name)
    text = SHIM + source + _entry(name, params, "__syncthreads" in source)
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    if digest in _loaded:
        return _loaded[digest]
    cache = _cache_dir()
    lib_path = os.path.join(cache, f"k_{digest}.so")
    if not os.path.exists(lib_path):
        fd, src_path = tempfile.mkstemp(suffix=".cpp", dir=cache)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        fd, tmp_lib = tempfile.mkstemp(suffix=".so", dir=cache)
        os.close(fd)
        try:
            res = subprocess.run(["g++", "-O1", "-std=c++14", "-shared", "-fPIC", src_path,
                                  "-o", tmp_lib], capture_output=True, text=True, check=False)
            if res.returncode != 0:
                raise BackendError(f"g++ failed on kernel {name}:\n{res.stderr}")
            os.replace(tmp_lib, lib_path)
        finally:
            os.unlink(src_path)
            if os.path.exists(tmp_lib):
                os.unlink(tmp_lib)
    lib = ctypes.CDLL(lib_path)
    lib.fg_launch.restype = ctypes.c_int
    _loaded[digest] = lib
    return lib


def launch_source_on_host(source: str, name: str, grid: Sequence[int], block: Sequence[int],
                          args: Sequence[Any]) -> None:
    """Launch ``name`` over ``grid`` x ``block`` with ``args``: ctypes values, one per
    parameter, in the C types of the signature (pointers as ``c_void_p``)."""
    lib = compile_source_on_host(source, name)
    g = (*grid, 1, 1, 1)[:3]
    b = (*block, 1, 1, 1)[:3]
    ptrs = (ctypes.c_void_p * max(len(args), 1))(
        *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
    err = lib.fg_launch(*(ctypes.c_uint(int(v)) for v in (*g, *b)), ptrs)
    if err:
        raise BackendError(f"kernel {name}: a __syncthreads() was not reached by every "
                           "thread of a block (some had exited): undefined on a GPU")



C_SCALARS = {np.dtype(k): v for k, v in (
    (np.bool_, ctypes.c_bool), (np.int8, ctypes.c_int8), (np.uint8, ctypes.c_uint8),
    (np.int16, ctypes.c_int16), (np.uint16, ctypes.c_uint16), (np.int32, ctypes.c_int32),
    (np.uint32, ctypes.c_uint32), (np.int64, ctypes.c_int64), (np.uint64, ctypes.c_uint64),
    (np.float32, ctypes.c_float), (np.float64, ctypes.c_double),
    (np.float16, ctypes.c_uint16))}
"""The ctypes of a by-value kernel argument, by NumPy dtype (float16 as its bits)."""


def c_argument(value: Any) -> Any:
    """A launch argument as ctypes: an array as the address of its first element, a NumPy
    scalar as its C type."""
    if isinstance(value, np.ndarray):
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, np.generic) and value.dtype in C_SCALARS:
        bits = value.view(np.uint16) if value.dtype == np.float16 else value
        return C_SCALARS[value.dtype](bits.item())
    raise BackendError(f"cannot pass {type(value).__name__} {value!r} to a kernel")


def run_launch(launch: Launch) -> None:
    launch_source_on_host(launch.source, launch.name, launch.grid, launch.block,
                          [c_argument(a) for a in launch.args])


def launch_on_host(kernel: Kernel, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run one kernel on NumPy arrays with the layouts, grids and arguments a GPU launch
    gets (0-d operands by value, as host scalars are)."""
    launches, outs = plan_launches(kernel, [np.asarray(a) for a in inputs], np,
                                   lambda a: np.ndim(a) == 0)
    for launch in launches:
        run_launch(launch)
    return outs


def run_on_host(program: Any, *args: Any) -> list[Any]:
    """Run a CuPy-backend program with its kernels on the CPU and its calls on NumPy."""
    return program.run(np, *args, launch=lambda k, ins: launch_on_host(k, ins))
