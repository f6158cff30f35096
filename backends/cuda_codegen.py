"""CUDA source for fused kernels, and its compilation with NVRTC.

``kernel_source(step, name)`` writes one ``extern "C" __global__`` function for a
``FusedStep``: a grid-stride loop over the iteration shape for elementwise
kernels, or one block per output element with a shared-memory tree for
reductions (the elementwise prologue is evaluated inside the reduction loop).
Inputs are read through strides passed as arguments (non-contiguous and
broadcast operands need no copies); outputs are written contiguously.

>>> import numpy as np
>>> import funcgrad as fg
>>> from funcgrad.backends.fusion import plan_jaxpr
>>> cj = fg.make_jaxpr(lambda x: fg.numpy.sin(x) * 2.0)(np.ones(3, np.float32))
>>> step = plan_jaxpr(cj).steps[0]
>>> "sin(" in kernel_source(step, "k0").source
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad.backends.fusion import FusedStep
from funcgrad.errors import BackendError
from funcgrad.ir import Atom, Literal, Var

C_TYPES = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long", "float32": "float",
    "float64": "double",
}

PREAMBLE = r"""
template <typename T> __device__ inline T fg_floordiv(T a, T b) {
  if (b == 0) return 0;  // NumPy and CuPy give 0 for integer division by zero
  T q = a / b; if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1; return q; }
__device__ inline float fg_floordiv(float a, float b) { return floorf(a / b); }
__device__ inline double fg_floordiv(double a, double b) { return floor(a / b); }
template <typename T> __device__ inline T fg_mod(T a, T b) {
  if (b == 0) return 0;
  T r = a % b; if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }
__device__ inline float fg_mod(float a, float b) {
  float r = fmodf(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }
__device__ inline double fg_mod(double a, double b) {
  double r = fmod(a, b); if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }
template <typename T> __device__ inline T fg_max(T a, T b) { return (a != a || a > b) ? a : b; }
template <typename T> __device__ inline T fg_min(T a, T b) { return (a != a || a < b) ? a : b; }
template <typename T> __device__ inline T fg_sign(T a) { return (T)((a > 0) - (a < 0)); }
template <typename T> __device__ inline T fg_logistic(T a) {
  T e = exp(-fabs(a)); return a >= 0 ? (T)1 / ((T)1 + e) : e / ((T)1 + e); }
template <typename T> __device__ inline T fg_ipow(T a, long long n) {
  T r = 1; while (n > 0) { if (n & 1) r *= a; a *= a; n >>= 1; } return r; }
"""



def _ctype(dtype: Any) -> str:
    name = np.dtype(dtype).name
    if name not in C_TYPES:
        raise BackendError(f"dtype {name} has no CUDA kernel type")
    return C_TYPES[name]


def _literal(value: Any, dtype: Any) -> str:
    t = _ctype(dtype)
    v = np.asarray(value).item()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            # Bit patterns: NVRTC has no INFINITY/NAN macros without headers.
            bits = np.asarray(v, np.float64 if t == "double" else np.float32).view(
                np.uint64 if t == "double" else np.uint32).item()
            if t == "double":
                return f"__longlong_as_double((long long){bits:#x}ULL)"
            return f"(({t})__int_as_float((int){bits:#x}U))"
        return f"(({t}){v!r})"
    return f"(({t}){int(v)}LL)"


def _expression(eqn: Any, args: list[str]) -> str:
    """The C expression of one elementwise equation: its primitive's ``cuda``, a template
    over the operands (``{0}``...) and the result type (``{T}``) or a function of them."""
    prim = eqn.primitive
    t = _ctype(eqn.outputs[0].aval.dtype)
    code = prim.cuda
    if callable(code):
        return f"(({t}){code(eqn, args, t)})"
    if not isinstance(code, str):
        raise BackendError(f"no CUDA expression for primitive {prim.name}")
    return f"(({t}){code.format(*args, T=t)})"


@dataclass
class Kernel:
    """A generated kernel: its name, source, argument order and launch shape."""

    name: str
    source: str
    params: list[tuple[str, str]]
    inputs: list[Var]
    outputs: list[Var]
    kind: str
    n_threads_total: int
    n_blocks: int

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "source": self.source,
                "inputs": [v.aval.str_short() for v in self.inputs],
                "outputs": [v.aval.str_short() for v in self.outputs]}


REDUCE_BLOCK = 256


def kernel_source(step: FusedStep, name: str) -> Kernel:
    """The CUDA source of one fused step."""
    shape = step.shape
    nd = len(shape)
    typed: list[tuple[str, str]] = []
    for k, v in enumerate(step.inputs):
        typed.append((f"const {_ctype(v.aval.dtype)}* __restrict__", f"in{k}"))
        typed.extend(("long long", f"in{k}_s{d}") for d in range(v.aval.ndim))
    outs = [step.reduction.outputs[0]] if step.reduction is not None else step.outputs
    for k, v in enumerate(outs):
        typed.append((f"{_ctype(v.aval.dtype)}* __restrict__", f"out{k}"))
    params = [f"{t} {n}" for t, n in typed]
    idx = [f"i{d}" for d in range(nd)]
    input_pos = {v: k for k, v in enumerate(step.inputs)}

    def read_input(v: Var, axes: tuple[int, ...]) -> str:
        k = input_pos[v]
        terms = [f"{idx[ax]} * in{k}_s{j}" for j, ax in enumerate(axes)
                 if v.aval.shape[j] != 1]
        return f"in{k}[{' + '.join(terms) if terms else '0'}]"

    body: list[str] = []
    names: dict[Var, str] = {}

    def atom(a: Atom) -> str:
        if isinstance(a, Literal):
            return _literal(a.val, a.aval.dtype)
        if a in names:
            return names[a]
        if a in step.broadcasts:
            operand, dims = step.broadcasts[a]
            if isinstance(operand, Literal):
                return _literal(operand.val, operand.aval.dtype)
            return read_input(operand, dims)
        if a.aval.ndim == 0:
            return read_input(a, ())
        return read_input(a, tuple(range(nd)))

    for j, eqn in enumerate(step.eqns):
        if eqn.primitive.name == "broadcast_in_dim":
            continue
        v = eqn.outputs[0]
        expr = _expression(eqn, [atom(a) for a in eqn.inputs])
        names[v] = f"v{j}"
        body.append(f"    {_ctype(v.aval.dtype)} v{j} = {expr};")

    size = math.prod(shape)
    if step.reduction is None:
        writes = [f"    out{k}[i] = {atom(v)};" for k, v in enumerate(step.outputs)]
        decode = _decode("i", shape, list(range(nd)))
        src = (f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
               f"  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
               f"i < {size}LL; i += (long long)blockDim.x * gridDim.x) {{\n"
               + "".join(f"    {line}\n" for line in decode) + "\n".join(body + writes)
               + "\n  }\n}\n")
        return Kernel(name, PREAMBLE + src, typed, list(step.inputs), list(step.outputs),
                      "elementwise", size, 0)
    red = step.reduction
    axes = tuple(red.params["axes"])
    kept = [d for d in range(nd) if d not in axes]
    n_out = math.prod([shape[d] for d in kept])
    n_red = math.prod([shape[d] for d in axes])
    x = red.inputs[0]
    acc_t = _ctype(red.outputs[0].aval.dtype)
    # The reduction's definition gives its combiner and the identity it starts from.
    init = _identity(red.primitive.cuda["identity"], red.outputs[0].aval.dtype, acc_t)
    combine = red.primitive.cuda["combine"]
    value = atom(x)
    src = (
        f'extern "C" __global__ void {name}({", ".join(params)}) {{\n'
        f"  __shared__ {acc_t} sdata[{REDUCE_BLOCK}];\n"
        f"  for (long long o = blockIdx.x; o < {n_out}LL; o += gridDim.x) {{\n"
        f"    {acc_t} acc = {init};\n"
        f"    for (long long r = threadIdx.x; r < {n_red}LL; r += blockDim.x) {{\n"
        + "".join(f"      {line}\n" for line in _decode("o", shape, kept))
        + "".join(f"      {line}\n" for line in _decode("r", shape, list(axes)))
        + "\n".join("  " + b for b in body)
        + f"\n      acc = {combine.format(a='acc', b=value)};\n    }}\n"
        f"    sdata[threadIdx.x] = acc;\n    __syncthreads();\n"
        f"    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {{\n"
        f"      if (threadIdx.x < s) sdata[threadIdx.x] = "
        f"{combine.format(a='sdata[threadIdx.x]', b='sdata[threadIdx.x + s]')};\n"
        f"      __syncthreads();\n    }}\n"
        f"    if (threadIdx.x == 0) out0[o] = sdata[0];\n    __syncthreads();\n  }}\n}}\n"
    )
    return Kernel(name, PREAMBLE + src, typed, list(step.inputs), [red.outputs[0]], "reduce",
                  n_red, n_out)


def _identity(which: str, dtype: Any, acc_t: str) -> str:
    dtype = np.dtype(dtype)
    if which == "zero":
        return f"({acc_t})0"
    sign = -1 if which == "lowest" else 1
    if dtype.kind == "f":
        return _literal(sign * np.inf, dtype)
    info = np.iinfo(dtype)
    return f"({acc_t}){info.min if sign < 0 else info.max}LL"


def _decode(var: str, shape: tuple[int, ...], dims: list[int]) -> list[str]:
    """Lines that split linear index ``var`` over ``dims`` of ``shape`` into i<d>."""
    if not dims:
        return []
    lines = [f"long long {var}_rest = {var};"]
    for d in reversed(dims):
        lines.append(f"long long i{d} = {var}_rest % {shape[d]}LL; {var}_rest /= {shape[d]}LL;")
    lines.append(f"(void){var}_rest;")
    return lines


def launch_shape(kernel: Kernel) -> tuple[tuple[int], tuple[int]]:
    """The (grid, block) of a kernel's launch: one output element per block for reductions
    (the block's threads share the reduced axis), a grid-stride loop for elementwise ones."""
    if kernel.kind == "reduce":
        return (min(max(kernel.n_blocks, 1), 65535),), (REDUCE_BLOCK,)
    return (min(max(-(-kernel.n_threads_total // 256), 1), 65535),), (256,)


KERNEL_OPTIONS = ("--std=c++14",)
"""What the backend passes to ``cupy.RawKernel``; CuPy adds the rest (``cupy_options``)."""


def cupy_options(options: tuple[str, ...] = KERNEL_OPTIONS, arch: str = "90") -> tuple[str, ...]:
    """The NVRTC options CuPy uses for ``RawKernel(..., options=options)``: its include
    directories around ``options``, ``-ftz=true``, ``-arch=sm_<arch>`` (CUBIN) and
    ``--device-as-default-execution-space`` (cupy/cuda/compiler.py)."""
    try:
        from cupy._core.core import assemble_cupy_compiler_options  # noqa: PLC0415
    except ImportError as e:
        raise BackendError(f"CuPy is not installed: pip install 'funcgrad[cuda]' ({e})") \
            from None
    return (*assemble_cupy_compiler_options(tuple(options)), "-ftz=true", f"-arch=sm_{arch}",
            "--device-as-default-execution-space")


def nvrtc_compile(source: str, name: str = "kernel.cu", arch: str = "compute_90",
                  options: tuple[str, ...] | None = None) -> bytes:
    """Compile with NVRTC (no GPU needed); a failure raises BackendError with the log.

    With the default ``options`` it returns PTX for ``arch``; with CuPy's full option tuple
    (``cupy_options()``, whose ``-arch=sm_XX`` asks for machine code) it returns the CUBIN
    that CuPy would load.
    """
    try:
        from cupy_backends.cuda.libs import nvrtc  # noqa: PLC0415
    except ImportError as e:
        raise BackendError(f"NVRTC is not available: pip install 'funcgrad[cuda]' ({e})") \
            from None
    opts = [f"-arch={arch}", *KERNEL_OPTIONS] if options is None else list(options)
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        nvrtc.compileProgram(prog, opts)
        out: bytes = (nvrtc.getCUBIN(prog) if any(o.startswith("-arch=sm_") for o in opts)
                      else nvrtc.getPTX(prog))
    except nvrtc.NVRTCError as e:
        log = nvrtc.getProgramLog(prog)
        raise BackendError(f"NVRTC failed to compile {name}: {e}\n{log}") from None
    finally:
        nvrtc.destroyProgram(prog)
    return out
