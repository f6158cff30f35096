"""CUDA source for fused kernels, and its compilation with NVRTC.

``kernel_source(step, name)`` turns one ``FusedStep`` into a ``Kernel``: the equations'
C expressions, and the kernel texts built from them on demand, one per ``Layout``.
Every size is a kernel argument, never a literal, so one compiled kernel serves every
shape of a program of the same rank (and 32-bit index arithmetic is used where the sizes
allow). The layouts (``backends.cuda_launch`` picks one per launch from the real arrays):

* elementwise ``flat``: a grid-stride loop over the elements where each operand is read
  at ``[i]`` (C-contiguous), ``[i % m]`` or ``[i / m]`` (a contiguous block broadcast along
  the leading or the trailing axes), at ``[0]`` (one element) or is a by-value argument (a
  host scalar); no index decoding at all, and (short bodies) each thread loads ``UNROLL``
  elements a block apart (every warp's reads stay coalesced) before computing them;
* elementwise ``strided``: the loop index split into one index per axis, operands read
  through strides (views and broadcasts without copies);
* reduction ``row`` (the reduced elements of one output are one block's work, combined by
  a shared-memory tree) and ``col`` (one thread per output: neighbouring threads read
  neighbouring addresses when the kept axes are the inner ones); the iteration space is
  (outer, reduced, inner) with three strides per operand, and ``split`` cuts the reduced
  range over ``gridDim.y`` blocks that write partial results, combined by ``finish_source``
  (a full reduction uses the whole GPU, not one block);
* reduction ``nd``: any axes and strides, one index per axis (the general fallback).

Half precision (float16, bfloat16) is stored as ``__half``/``__nv_bfloat16`` and computed
in ``float``, every result rounded to its type as NumPy does.

>>> import numpy as np
>>> import funcgrad as fg
>>> from funcgrad.backends.fusion import plan_jaxpr
>>> cj = fg.make_jaxpr(lambda x: fg.numpy.sin(x) * 2.0)(np.ones(3, np.float32))
>>> step = plan_jaxpr(cj).steps[0]
>>> "sin(" in kernel_source(step, "k0").source
True
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from funcgrad.backends.fusion import HALF_FLOATS, FusedStep
from funcgrad.errors import BackendError
from funcgrad.ir import Atom, Literal, Var

C_TYPES = {
    "bool": "bool", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "uint8": "unsigned char", "uint16": "unsigned short",
    "uint32": "unsigned int", "uint64": "unsigned long long", "float32": "float",
    "float64": "double", "float16": "__half", "bfloat16": "__nv_bfloat16",
}
# Rounds a float (or double) result to the half type and back: what NumPy does after
# every operation on float16/bfloat16.
_ROUND = {"float16": "fg_rh", "bfloat16": "fg_rb"}
_STORE = {"float16": "fg_sth", "bfloat16": "fg_stb"}

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
template <typename T> __device__ inline T fg_ld(T v) { return v; }
"""

# Only kernels that touch half precision include the headers (NVRTC has them built in;
# the host harness defines the same names).
HALF_PREAMBLE = r"""
#ifdef __CUDACC__
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif
__device__ inline float fg_ld(__half v) { return __half2float(v); }
__device__ inline float fg_ld(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ inline float fg_rh(T v) {
  return __half2float(__float2half_rn((float)v)); }
__device__ inline float fg_rh(double v) { return __half2float(__double2half(v)); }
template <typename T> __device__ inline float fg_rb(T v) {
  return __bfloat162float(__float2bfloat16_rn((float)v)); }
__device__ inline __half fg_sth(float v) { return __float2half_rn(v); }
__device__ inline __nv_bfloat16 fg_stb(float v) { return __float2bfloat16_rn(v); }
"""

BLOCK = 256
"""Threads per block of every generated kernel."""
UNROLL = 4
"""Elements each thread of a ``flat`` kernel loads before it computes any of them..."""
UNROLL_MAX_COST = 16
"""...when its body costs at most this much (an equation 1, a math-library call such as
``sin`` or ``exp`` 4 more). Cheap bodies are bound by memory bandwidth, where more loads in
flight pay; costly ones by arithmetic, where unrolling only multiplies the code NVRTC
compiles (its time grows with the unrolled length: an 8-op chain with three
transcendentals compiles in about 80 ms unrolled, 40 ms not)."""
# Calls that compile to a few instructions (rounding, loads, comparisons, casts).
_CHEAP_CALLS = frozenset({
    "fg_ld", "fg_rh", "fg_rb", "fg_sth", "fg_stb", "fg_max", "fg_min", "fg_sign", "fabs",
    "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite", "copysign",
    "__int_as_float", "__longlong_as_double", "__half2float", "__bfloat162float"})
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")


def is_half(dtype: Any) -> bool:
    return np.dtype(dtype).name in HALF_FLOATS


def storage_type(dtype: Any) -> str:
    """The C type of an array element of ``dtype`` in memory."""
    name = np.dtype(dtype).name
    if name not in C_TYPES:
        raise BackendError(f"dtype {name} has no CUDA kernel type")
    return C_TYPES[name]


def compute_type(dtype: Any) -> str:
    """The C type values of ``dtype`` are computed in (``float`` for half precision)."""
    return "float" if is_half(dtype) else storage_type(dtype)


def _literal(value: Any, dtype: Any) -> str:
    t = compute_type(dtype)
    arr = np.asarray(value)
    v = (arr.astype(np.float64) if is_half(dtype) else arr).item()
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
    over the operands (``{0}``...) and the result type (``{T}``) or a function of them.
    A half-precision result is computed in float and rounded to its type."""
    prim = eqn.primitive
    dtype = eqn.outputs[0].aval.dtype
    t = compute_type(dtype)
    code = prim.cuda
    if callable(code):
        expr = code(eqn, args, t)
    elif isinstance(code, str):
        expr = code.format(*args, T=t)
    else:
        raise BackendError(f"no CUDA expression for primitive {prim.name}")
    if is_half(dtype):
        return f"{_ROUND[np.dtype(dtype).name]}({expr})"
    return f"(({t}){expr})"


def _store(value: str, dtype: Any) -> str:
    return f"{_STORE[np.dtype(dtype).name]}({value})" if is_half(dtype) else value


# Where a flat loop reads an operand: contiguous, a broadcast row, a broadcast column.
_FLAT_INDEX = {"c": "i", "m": "i % in{k}_m", "d": "i / in{k}_d"}


@dataclass(frozen=True)
class Layout:
    """How one launch reads its operands, per read slot: ``c`` at ``[i]``, ``m`` at
    ``[i % m]`` and ``d`` at ``[i / m]`` (broadcast rows and columns, ``m`` an argument),
    ``0`` at ``[0]``, ``v`` a by-value argument, ``s`` through strides; ``mode`` (``flat``,
    ``strided``, ``row``, ``col``, ``nd``), the index type, and whether a reduction is
    split into partial results."""

    mode: str
    reads: tuple[str, ...]
    idx: str = "long long"
    split: bool = False


@dataclass
class Kernel:
    """A fused step ready for code generation. ``slots`` are its reads: (input, the axes of
    the iteration shape its dims map to); one input read through two different broadcasts
    is two slots. ``source_for(layout)`` gives (and caches) the text of one variant."""

    name: str
    kind: str
    shape: tuple[int, ...]
    inputs: list[Var]
    outputs: list[Var]
    slots: list[tuple[Var, tuple[int, ...]]]
    body: list[tuple[str, str, str]]        # (compute type, name, expression)
    results: list[tuple[str, Any]]          # (value expression, dtype) per output
    reduction: Any = None
    half: bool = False
    _sources: dict[Layout, str] = field(default_factory=dict)
    # Launch plans by the shapes and strides of the operands (``cuda_launch``).
    launch_plans: dict[Any, Any] = field(default_factory=dict)

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(self.reduction.params["axes"]) if self.reduction is not None else ()

    @functools.cached_property
    def unroll(self) -> int:
        """Elements per thread and turn of a ``flat`` kernel's loop."""
        cost = sum(1 + 4 * sum(name not in _CHEAP_CALLS for name in _CALL.findall(expr))
                   for _, _, expr in self.body)
        return UNROLL if cost <= UNROLL_MAX_COST else 1

    def kernel_name(self, layout: Layout) -> str:
        return f"{self.name}_{layout.mode}{'_split' if layout.split else ''}"

    def default_layouts(self) -> list[Layout]:
        """The variants shown by ``source``: the contiguous and the general one."""
        n = len(self.slots)
        if self.reduction is None:
            return [Layout("flat", tuple("v" if not v.aval.shape else "c"
                                         for v, _ in self.slots)),
                    Layout("strided", ("s",) * n)]
        return [Layout("row", ("s",) * n), Layout("col", ("s",) * n, split=True),
                Layout("nd", ("s",) * n)]

    @property
    def source(self) -> str:
        """The preamble and the main variants (each a kernel of its own name)."""
        texts = [self.source_for(lay, preamble=False) for lay in self.default_layouts()]
        return self.preamble + "".join(texts)

    @property
    def preamble(self) -> str:
        return PREAMBLE + (HALF_PREAMBLE if self.half else "")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "source": self.source,
                "inputs": [v.aval.str_short() for v in self.inputs],
                "outputs": [v.aval.str_short() for v in self.outputs]}

    def params_for(self, layout: Layout) -> list[tuple[str, str]]:
        """The (C type, name) of each parameter of a variant, in launch order."""
        idx, params = layout.idx, []
        for k, ((v, _), read) in enumerate(zip(self.slots, layout.reads)):
            if read == "v":
                params.append((compute_type(v.aval.dtype), f"in{k}"))
                continue
            params.append((f"const {storage_type(v.aval.dtype)}* __restrict__", f"in{k}"))
            if read in ("m", "d"):
                params.append((idx, f"in{k}_{read}"))
            if read == "s":
                n_strides = 3 if layout.mode in ("row", "col") else len(self.shape)
                params.extend((idx, f"in{k}_s{d}") for d in range(n_strides))
        if self.reduction is None:
            params.extend((f"{storage_type(d)}* __restrict__", f"out{j}")
                          for j, (_, d) in enumerate(self.results))
            params.append((idx, "n"))
            if layout.mode == "strided":
                params.extend((idx, f"n{d}") for d in range(len(self.shape)))
            return params
        out_dtype = self.results[0][1]
        acc = compute_type(out_dtype)
        params.append((f"{acc if layout.split else storage_type(out_dtype)}* __restrict__",
                       "out0"))
        if layout.mode == "nd":
            params.extend((idx, f"n{d}") for d in range(len(self.shape)))
            params.extend([(idx, "n_out"), (idx, "n_red")])
        else:
            params.extend((idx, n) for n in ("n_outer", "n_red", "n_inner", "chunk"))
        return params

    def source_for(self, layout: Layout, preamble: bool = True) -> str:
        text = self._sources.get(layout)
        if text is None:
            text = self._sources[layout] = (self._elementwise(layout)
                                            if self.reduction is None else
                                            self._reduce(layout))
        return self.preamble + text if preamble else text

    # ------------------------------------------------------------------ generation

    def _read(self, k: int, layout: Layout, loaded: str | None = None) -> str:
        """The expression reading slot ``k`` at the current position (``i``, the i<d>, or
        ``oo``/``r``/``ii``); with ``loaded`` (an index expression), a contiguous slot is
        the register that element of a thread's unrolled group was loaded into."""
        read = layout.reads[k]
        if read == "v":
            return f"in{k}"
        if read == "0":
            return f"fg_ld(in{k}[0])"
        if read in _FLAT_INDEX:
            return f"fg_ld(in{k}[{_FLAT_INDEX[read].format(k=k)}])" if loaded is None \
                else f"ld{k}[{loaded}]"
        if layout.mode in ("row", "col"):
            return f"fg_ld(in{k}[oo * in{k}_s0 + r * in{k}_s1 + ii * in{k}_s2])"
        terms = " + ".join(f"i{d} * in{k}_s{d}" for d in range(len(self.shape)))
        return f"fg_ld(in{k}[{terms or '0'}])"

    def _body(self, layout: Layout, indent: str, loaded: str | None = None) -> str:
        return "".join(f"{indent}{t} {name} = {self._value(expr, layout, loaded)};\n"
                       for t, name, expr in self.body)

    def _value(self, expr: str, layout: Layout, loaded: str | None = None) -> str:
        """``expr`` with its slot placeholders (``@k@``) replaced by their reads."""
        for k in range(len(self.slots)):
            expr = expr.replace(f"@{k}@", self._read(k, layout, loaded))
        return expr

    def _decode(self, var: str, dims: list[int], indent: str, idx: str) -> str:
        """Lines that split linear index ``var`` over ``dims`` into i<d> (sizes n<d>)."""
        if not dims:
            return ""
        lines = [f"{idx} {var}_rest = {var};"]
        for d in reversed(dims):
            lines.append(f"{idx} i{d} = {var}_rest % n{d}; {var}_rest /= n{d};")
        lines.append(f"(void){var}_rest;")
        return "".join(f"{indent}{line}\n" for line in lines)

    def _signature(self, layout: Layout) -> str:
        params = ", ".join(f"{t} {n}" for t, n in self.params_for(layout))
        return f'extern "C" __global__ void {self.kernel_name(layout)}({params}) {{\n'

    def _elementwise(self, layout: Layout) -> str:
        if layout.mode == "flat":
            return self._flat(layout)
        idx = layout.idx
        decode = self._decode("i", list(range(len(self.shape))), "    ", idx) \
            if layout.mode == "strided" else ""
        writes = "".join(f"    out{j}[i] = {_store(self._value(e, layout), d)};\n"
                         for j, (e, d) in enumerate(self.results))
        return (self._signature(layout)
                + f"  for ({idx} i = blockIdx.x * ({idx})blockDim.x + threadIdx.x; i < n; "
                f"i += ({idx})blockDim.x * gridDim.x) {{\n"
                + decode + self._body(layout, "    ") + writes + "  }\n}\n")

    def _flat(self, layout: Layout) -> str:
        """Each thread takes ``unroll`` elements a block apart (every warp's accesses stay
        coalesced) and loads them all before computing any: that many loads per operand in
        flight per thread, which memory bandwidth needs."""
        idx, u = layout.idx, self.unroll
        step = f"({idx})blockDim.x"
        loads, slots = [], []
        for k, ((v, _), read) in enumerate(zip(self.slots, layout.reads)):
            if read in _FLAT_INDEX:
                t, at = compute_type(v.aval.dtype), _FLAT_INDEX[read].format(k=k)
                loads.append(f"    {t} ld{k}[{u}];\n")
                slots.append(f"      ld{k}[j] = i < n ? ({t})fg_ld(in{k}[{at}]) : ({t})0;\n")
        writes = "".join(f"      out{r}[i] = {_store(self._value(e, layout, 'j'), d)};\n"
                         for r, (e, d) in enumerate(self.results))
        return (self._signature(layout)
                + f"  for ({idx} b = blockIdx.x * ({step} * {u}) + threadIdx.x; b < n; "
                f"b += {step} * gridDim.x * {u}) {{\n"
                + "".join(loads)
                + f"    #pragma unroll\n    for (int j = 0; j < {u}; ++j) {{\n"
                f"      {idx} i = b + j * {step};\n" + "".join(slots) + "    }\n"
                + f"    #pragma unroll\n    for (int j = 0; j < {u}; ++j) {{\n"
                f"      {idx} i = b + j * {step};\n      if (i >= n) break;\n"
                + self._body(layout, "      ", "j") + writes + "    }\n  }\n}\n")

    def _reduce(self, layout: Layout) -> str:
        red = self.reduction
        idx = layout.idx
        value_expr, out_dtype = self.results[0]
        acc_t = compute_type(out_dtype)
        init = _identity(red.primitive.cuda["identity"], out_dtype, acc_t)
        combine = red.primitive.cuda["combine"]
        body = self._body(layout, "      ")
        value = self._value(value_expr, layout)
        result = "acc" if layout.split else _store("acc", out_dtype)
        where = "blockIdx.y * n_outer * n_inner + o" if layout.split else "o"
        # Every layout: [head] for (o ...) { [prelude] acc = init; for (r ...) { [decode]
        # body; combine } [end] }. ``span`` is the reduced range [r0, r1) of this block's
        # part (all of it unless split).
        span = (f"  {idx} r0 = blockIdx.y * chunk;\n"
                f"  {idx} r1 = r0 + chunk < n_red ? r0 + chunk : n_red;\n")
        shared = f"  __shared__ {acc_t} sdata[{BLOCK}];\n"
        tree = _tree(combine, where, "sdata[0]" if layout.split else
                     _store("sdata[0]", out_dtype))
        decode = ""
        if layout.mode == "col":  # a thread per output
            head = f"  {idx} n_out = n_outer * n_inner;\n" + span
            o_loop = (f"{idx} o = blockIdx.x * ({idx})blockDim.x + threadIdx.x; o < n_out; "
                      f"o += ({idx})blockDim.x * gridDim.x")
            prelude = f"    {idx} oo = o / n_inner; {idx} ii = o - oo * n_inner;\n"
            r_loop = f"{idx} r = r0; r < r1; ++r"
            end = f"    out0[{where}] = {result};\n  }}\n}}\n"
        elif layout.mode == "row":  # a block per output
            head, prelude, end = shared + span, f"    {idx} oo = o; const {idx} ii = 0;\n", tree
            o_loop = f"{idx} o = blockIdx.x; o < n_outer; o += gridDim.x"
            r_loop = f"{idx} r = r0 + threadIdx.x; r < r1; r += blockDim.x"
        else:  # nd: a block per output, every index decoded
            kept = [d for d in range(len(self.shape)) if d not in self.axes]
            head, prelude, end = shared, "", tree
            o_loop = f"{idx} o = blockIdx.x; o < n_out; o += gridDim.x"
            r_loop = f"{idx} r = threadIdx.x; r < n_red; r += blockDim.x"
            decode = (self._decode("o", kept, "      ", idx)
                      + self._decode("r", list(self.axes), "      ", idx))
        return (self._signature(layout) + head + f"  for ({o_loop}) {{\n" + prelude
                + f"    {acc_t} acc = {init};\n    for ({r_loop}) {{\n" + decode + body
                + f"      acc = {combine.format(a='acc', b=value)};\n    }}\n" + end)


def kernel_source(step: FusedStep, name: str) -> Kernel:
    """The kernel of one fused step (its texts are generated per layout on demand)."""
    shape = step.shape
    nd = len(shape)
    slots: list[tuple[Var, tuple[int, ...]]] = []
    names: dict[Var, str] = {}
    body: list[tuple[str, str, str]] = []

    def slot(v: Var, axes: tuple[int, ...]) -> str:
        key = (v, axes)
        if key not in slots:
            slots.append(key)
        return f"@{slots.index(key)}@"

    def atom(a: Atom) -> str:
        if isinstance(a, Literal):
            return _literal(a.val, a.aval.dtype)
        if a in names:
            return names[a]
        if a in step.broadcasts:
            operand, dims = step.broadcasts[a]
            if isinstance(operand, Literal):
                return _literal(operand.val, operand.aval.dtype)
            if operand in names:  # a rank-0 value the kernel computes itself
                return names[operand]
            return slot(operand, tuple(dims))
        return slot(a, () if a.aval.ndim == 0 else tuple(range(nd)))

    for j, eqn in enumerate(step.eqns):
        if eqn.primitive.name == "broadcast_in_dim":
            continue
        v = eqn.outputs[0]
        expr = _expression(eqn, [atom(a) for a in eqn.inputs])
        names[v] = f"v{j}"
        body.append((compute_type(v.aval.dtype), f"v{j}", expr))
    red = step.reduction
    if red is None:
        outputs = list(step.outputs)
        results = [(atom(v), v.aval.dtype) for v in outputs]
    else:
        outputs = [red.outputs[0]]
        results = [(atom(red.inputs[0]), red.outputs[0].aval.dtype)]
    # The step's inputs the kernel reads (each has one slot or more), in the step's order.
    used = {v for v, _ in slots}
    inputs = [v for v in step.inputs if v in used]
    dtypes = [v.aval.dtype for v in (*inputs, *outputs)] + \
        [a.aval.dtype for e in step.eqns for a in (*e.inputs, *e.outputs)]
    return Kernel(name, "reduce" if red is not None else "elementwise", shape, inputs,
                  outputs, slots, body, results, red, any(is_half(d) for d in dtypes))


def finish_source(kernel: Kernel, idx: str) -> tuple[str, str]:
    """(name, text) of the kernel that combines a split reduction's partial results: one
    block per output, ``parts`` partials per output at ``p[y * n_out + o]``."""
    red = kernel.reduction
    out_dtype = kernel.results[0][1]
    acc_t = compute_type(out_dtype)
    combine = red.primitive.cuda["combine"]
    init = _identity(red.primitive.cuda["identity"], out_dtype, acc_t)
    name = f"{kernel.name}_finish"
    text = (f'extern "C" __global__ void {name}(const {acc_t}* __restrict__ p, '
            f"{storage_type(out_dtype)}* __restrict__ out0, {idx} n_out, {idx} parts) {{\n"
            f"  __shared__ {acc_t} sdata[{BLOCK}];\n"
            f"  for ({idx} o = blockIdx.x; o < n_out; o += gridDim.x) {{\n"
            f"    {acc_t} acc = {init};\n"
            f"    for ({idx} y = threadIdx.x; y < parts; y += blockDim.x) "
            f"acc = {combine.format(a='acc', b='p[y * n_out + o]')};\n"
            + _tree(combine, "o", _store("sdata[0]", out_dtype)))
    return name, kernel.preamble + text


def _tree(combine: str, where: str, result: str) -> str:
    """The end of a block-per-output reduction: the threads' ``acc`` combined by a
    shared-memory tree, ``result`` (of ``sdata[0]``) written to ``out0[where]``."""
    return (f"    sdata[threadIdx.x] = acc;\n    __syncthreads();\n"
            f"    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {{\n"
            f"      if (threadIdx.x < s) sdata[threadIdx.x] = "
            f"{combine.format(a='sdata[threadIdx.x]', b='sdata[threadIdx.x + s]')};\n"
            f"      __syncthreads();\n    }}\n"
            f"    if (threadIdx.x == 0) out0[{where}] = {result};\n"
            f"    __syncthreads();\n  }}\n}}\n")


def _identity(which: str, dtype: Any, acc_t: str) -> str:
    dtype = np.dtype(dtype)
    if which == "zero":
        return f"({acc_t})0"
    sign = -1 if which == "lowest" else 1
    if dtype.kind == "f" or is_half(dtype):
        return _literal(sign * np.inf, np.float32 if is_half(dtype) else dtype)
    info = np.iinfo(dtype)
    return f"({acc_t}){info.min if sign < 0 else info.max}LL"


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
