"""The CuPy backend's code generator, checked without a GPU, and on one when present.

(a) Random elementwise programs (unary/binary chains with broadcasting of rank-0 and
    broadcast_in_dim operands, comparisons + select, dtype conversions, integer
    floor-division/remainder, max/min) optionally ending in a sum/max/min reduction
    over random axes, in float32/float64/int32, drawn by hypothesis. For each:
    every kernel compiles with NVRTC (no GPU needed; skipped without
    ``cupy_backends``), the fusion plan evaluated with NumPy equals NumPy, and the
    exact CUDA text compiled with g++ and run on the host equals NumPy, also on
    non-contiguous (transposed, strided, reversed) inputs.
(b) The structure of fusion plans, ``jit(..., backend="cupy").lower(...).kernels()``
    without a GPU, and NVRTC errors surfacing as ``BackendError``.
(c) ``@pytest.mark.gpu`` tests that launch the real kernels through CuPy; they skip
    cleanly where ``get_backend("cupy").available()`` is False.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors as E
from funcgrad.backends.cuda_codegen import KERNEL_OPTIONS, cupy_options, nvrtc_compile
from funcgrad.backends.cupy_backend import build_program
from funcgrad.backends.fusion import run_plan_numpy
from funcgrad.devices import get_backend

HAVE_NVRTC = importlib.util.find_spec("cupy_backends") is not None
HAVE_GXX = shutil.which("g++") is not None
needs_nvrtc = pytest.mark.skipif(not HAVE_NVRTC, reason="cupy_backends (NVRTC) not installed")
needs_gxx = pytest.mark.skipif(not HAVE_GXX, reason="g++ not found (host execution of kernels)")

PROGRAMS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

def nvrtc_check(source: str) -> None:
    """Compile with NVRTC and CuPy's options (its include directories: half-precision
    kernels include cuda_fp16.h) to CUBIN; skip (not fail) where NVRTC is not installed."""
    if not HAVE_NVRTC:
        pytest.skip("cupy_backends (NVRTC) not installed")
    import fakecupy
    from fakecupy._kernels import cupy_nvrtc_options

    if fakecupy.installed():
        # the emulator hides CuPy's option builder; its RawKernel compiles with it
        ptx = nvrtc_compile(source, options=cupy_nvrtc_options(KERNEL_OPTIONS))
    else:
        ptx = nvrtc_compile(source, options=cupy_options())
    assert ptx[:4] == b"\x7fELF"


def run_host(prog: Any, *args: Any) -> list[Any]:
    from funcgrad.backends.host_cuda import run_on_host

    return run_on_host(prog, *args)


# ----------------------------------------------------------------- random programs


@dataclasses.dataclass
class Op:
    name: str
    args: tuple[int, ...]
    const: Any = None


@dataclasses.dataclass
class Program:
    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    inputs: list[np.ndarray]
    ops: list[Op]
    reduction: tuple[str, tuple[int, ...], bool] | None
    extra_output: int | None

    def __repr__(self) -> str:
        ins = ", ".join(f"{x.dtype}{list(x.shape)}{'' if x.flags.c_contiguous else '(view)'}"
                        for x in self.inputs)
        ops = "; ".join(f"v{len(self.inputs) + k}={o.name}{o.args}"
                        f"{'' if o.const is None else ' c=' + repr(o.const)}"
                        for k, o in enumerate(self.ops))
        return (f"Program({self.dtype}, shape={self.shape}, inputs=[{ins}], ops=[{ops}], "
                f"reduction={self.reduction}, extra_output={self.extra_output})")


FLOAT_UNARY = ["neg", "sin", "cos", "tanh", "exp", "log_sq1", "sqrt_abs", "square", "cube",
               "abs", "log1p_abs", "expm1", "lit_mul", "lit_add", "lit_rsub"]
FLOAT_EXACT_UNARY = ["floor", "ceil", "sign", "trunc_cast", "cmp_lit_cast"]
FLOAT_BINARY = ["add", "sub", "mul", "safe_div", "maximum", "minimum"]
INT_UNARY = ["neg", "abs", "lit_mul", "lit_add", "lit_floordiv", "lit_mod", "square"]
INT_BINARY = ["add", "sub", "mul", "floordiv", "mod", "maximum", "minimum"]
# Operands of comparisons, floor/ceil/sign and float->int casts must be exactly the same
# in NumPy and in the kernel (no transcendental rounding differences), so they only see
# "exact" values: inputs, and neg/abs/max/min/select of exact values.
EXACT_KEEPING = {"neg", "abs", "maximum", "minimum", "select"}


def _broadcast_shape(shape: tuple[int, ...], rng: np.random.Generator) -> tuple[int, ...]:
    """A shape that broadcasts to ``shape``: rank-0, dims set to 1, leading dims dropped."""
    kind = rng.choice(["full", "scalar", "ones", "suffix"])
    if kind == "full" or not shape:
        return shape
    if kind == "scalar":
        return ()
    if kind == "ones":
        return tuple(1 if rng.random() < 0.5 else s for s in shape)
    return shape[int(rng.integers(0, len(shape))):]


def _make_input(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any]
                ) -> np.ndarray:
    def fill(shp: tuple[int, ...]) -> np.ndarray:
        if dtype.kind == "i":
            return rng.integers(-20, 21, shp).astype(dtype)
        x = rng.uniform(-3.0, 3.0, shp)
        # some exact small integers and zeros: ties for comparisons, floor/ceil/sign edges
        special = rng.random(shp) < 0.2
        x[special] = rng.integers(-2, 3, shp)[special]
        return x.astype(dtype)

    layout = rng.choice(["c", "c", "T", "stride", "rev"]) if shape else "c"
    if layout == "T" and len(shape) >= 2:
        return fill(shape[::-1]).T
    if layout == "stride":
        return fill((*shape[:-1], 2 * shape[-1]))[..., ::2]
    if layout == "rev":
        return fill(shape)[::-1]
    return fill(shape)


@st.composite
def programs(draw: Any, dtypes: tuple[str, ...] = ("float32", "float64", "int32"),
             reduce: bool | None = None, reductions: tuple[str, ...] = ("sum", "max", "min")
             ) -> Program:
    """Hypothesis draws the iteration shape and a seed; the seed draws the rest (dtype,
    operand shapes and layouts, values, the op sequence), which keeps the programs varied."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    dtype = np.dtype(str(rng.choice(list(dtypes))))
    want_reduce = draw(st.booleans()) if reduce is None else reduce
    return random_program(rng, dtype, shape, want_reduce, reductions)


def random_program(rng: np.random.Generator, dtype: np.dtype[Any], shape: tuple[int, ...],
                   want_reduce: bool, reductions: tuple[str, ...]) -> Program:
    is_int = dtype.kind == "i"
    # half precision overflows at 65504 (float16): keep its values well below
    limit = 100.0 if dtype.itemsize == 2 else 1e4
    n_in = int(rng.integers(1, 4))
    shapes = [shape] + [_broadcast_shape(shape, rng) for _ in range(n_in - 1)]
    inputs = [_make_input(rng, s, dtype) for s in shapes]
    # per value: shape, magnitude bound, exact?
    vals: list[tuple[tuple[int, ...], float, bool]] = [
        (s, 20.0 if is_int else 3.0, True) for s in shapes]
    ops: list[Op] = []

    def push(op: Op, shp: tuple[int, ...], bound: float, exact: bool) -> None:
        ops.append(op)
        vals.append((shp, bound, exact))

    def pick(exact: bool = False, avoid: int | None = None) -> int:
        pool = [i for i, v in enumerate(vals) if v[2] or not exact]
        # prefer recent values (a chain rather than a fan) and distinct operands
        pool = pool[-4:]
        if avoid is not None and len(pool) > 1 and rng.random() < 0.85:
            pool = [i for i in pool if i != avoid]
        return int(rng.choice(pool))

    kinds = ["unary", "unary", "binary", "binary", "binary", "select", "cmp_cast"]
    if not is_int:
        kinds.append("exact_unary")
    for _ in range(int(rng.integers(1, 9))):
        kind = rng.choice(kinds)
        if kind == "select":
            a = pick(exact=True)
            b = pick(exact=True, avoid=a)
            c = pick()
            d = pick(avoid=c)
            shp = np.broadcast_shapes(*(vals[i][0] for i in (a, b, c, d)))
            push(Op("select", (a, b, c, d)), shp, max(vals[c][1], vals[d][1]),
                 vals[c][2] and vals[d][2])
        elif kind == "cmp_cast":
            a = pick(exact=True)
            b = pick(exact=True, avoid=a)
            cmp = str(rng.choice(["lt", "le", "gt", "ge", "eq", "ne"]))
            push(Op("cmp_cast", (a, b), cmp), np.broadcast_shapes(vals[a][0], vals[b][0]),
                 1.0, False)
        elif kind == "exact_unary":
            a = pick(exact=True)
            name = str(rng.choice(FLOAT_EXACT_UNARY))
            const = float(rng.choice([-0.5, 0.0, 1.25])) if name == "cmp_lit_cast" else None
            push(Op(name, (a,), const), vals[a][0], vals[a][1] + 1.0, False)
        elif kind == "unary":
            a = pick()
            shp, bound, exact = vals[a]
            name = str(rng.choice(INT_UNARY if is_int else FLOAT_UNARY))
            const: Any = None
            if name in ("lit_mul", "lit_add", "lit_rsub"):
                const = int(rng.choice([-3, 2, 5])) if is_int else \
                    float(rng.choice([-1.5, 0.5, 2.0, 3.0]))
            elif name in ("lit_floordiv", "lit_mod"):
                const = int(rng.choice([-3, 2, 7]))
            if name in ("exp", "expm1") and bound > 4.0:
                name = "tanh"
            if name in ("square", "cube") and bound > 30.0:
                name, const = ("lit_mod", 7) if is_int else ("tanh", None)
            new_bound = {"neg": bound, "abs": bound, "sin": 1.0, "cos": 1.0, "tanh": 1.0,
                         "exp": float(np.exp(bound)), "expm1": float(np.exp(bound)),
                         "log_sq1": 2 * np.log1p(bound) + 1, "sqrt_abs": np.sqrt(bound) + 1,
                         "log1p_abs": np.log1p(bound) + 1, "square": bound ** 2,
                         "cube": bound ** 3, "lit_floordiv": bound, "lit_mod": 7.0,
                         }.get(name, bound * 3 + 5)
            push(Op(name, (a,), const), shp, new_bound, exact and name in EXACT_KEEPING)
        else:
            a = pick()
            b = pick(avoid=a)
            name = str(rng.choice(INT_BINARY if is_int else FLOAT_BINARY))
            ba, bb = vals[a][1], vals[b][1]
            if name == "mul" and ba * bb > limit:
                name = "add"
            new_bound = {"add": ba + bb, "sub": ba + bb, "mul": ba * bb, "safe_div": ba,
                         "maximum": max(ba, bb), "minimum": max(ba, bb), "floordiv": ba,
                         "mod": bb + 3}[name]
            push(Op(name, (a, b)), np.broadcast_shapes(vals[a][0], vals[b][0]), new_bound,
                 vals[a][2] and vals[b][2] and name in EXACT_KEEPING)
        if vals[-1][1] > limit:  # keep magnitudes (and integer products) small
            i = len(vals) - 1
            if is_int:
                push(Op("lit_mod", (i,), 101), vals[i][0], 101.0, False)
            else:
                push(Op("tanh", (i,)), vals[i][0], 1.0, False)
    last = len(vals) - 1
    if vals[last][0] != shape:  # the result covers the whole iteration shape
        push(Op("add", (last, 0)), shape, vals[last][1] + vals[0][1], False)
        last += 1
    reduction = None
    if want_reduce and shape:
        kind = str(rng.choice(reductions))
        k = int(rng.integers(1, len(shape) + 1))
        axes = tuple(sorted(int(a) for a in rng.choice(len(shape), k, replace=False)))
        reduction = (kind, axes, bool(rng.random() < 0.2))
    extra = None
    if len(vals) > n_in + 1 and rng.random() < 0.25:
        extra = int(rng.integers(n_in, len(vals) - 1))  # an intermediate is also returned
    return Program(dtype, shape, inputs, ops, reduction, extra)


def evaluate(prog: Program, xp: Any, *args: Any) -> list[Any]:
    """Run ``prog`` with ``xp`` = numpy (the reference) or funcgrad.numpy (to trace it)."""
    dt = prog.dtype
    vals = list(args)
    for op in prog.ops:
        a = [vals[i] for i in op.args]
        c = op.const
        n = op.name
        if n == "neg":
            r = -a[0]
        elif n in ("sin", "cos", "tanh", "exp", "expm1", "floor", "ceil", "sign", "abs"):
            r = getattr(xp, {"abs": "abs"}.get(n, n))(a[0])
        elif n == "log_sq1":
            r = xp.log(a[0] * a[0] + 1.0)
        elif n == "sqrt_abs":
            r = xp.sqrt(xp.abs(a[0]))
        elif n == "log1p_abs":
            r = xp.log1p(xp.abs(a[0]))
        elif n == "square":
            r = a[0] ** 2
        elif n == "cube":
            r = a[0] ** 3
        elif n == "lit_mul":
            r = a[0] * c
        elif n == "lit_add":
            r = a[0] + c
        elif n == "lit_rsub":
            r = c - a[0]
        elif n == "lit_floordiv":
            r = a[0] // c
        elif n == "lit_mod":
            r = a[0] % c
        elif n == "trunc_cast":
            r = xp.astype(xp.astype(a[0], np.int32), dt)
        elif n == "cmp_lit_cast":
            r = xp.astype(a[0] > c, dt)
        elif n == "cmp_cast":
            r = xp.astype(getattr(xp, {"lt": "less", "le": "less_equal", "gt": "greater",
                                       "ge": "greater_equal", "eq": "equal",
                                       "ne": "not_equal"}[c])(a[0], a[1]), dt)
        elif n == "select":
            r = xp.where(a[0] < a[1], a[2], a[3])
        elif n == "add":
            r = a[0] + a[1]
        elif n == "sub":
            r = a[0] - a[1]
        elif n == "mul":
            r = a[0] * a[1]
        elif n == "safe_div":
            r = a[0] / (a[1] * a[1] + 1.0)
        elif n in ("floordiv", "mod"):
            d = xp.where(a[1] == 0, 3, a[1])
            r = a[0] // d if n == "floordiv" else a[0] % d
        elif n == "maximum":
            r = xp.maximum(a[0], a[1])
        elif n == "minimum":
            r = xp.minimum(a[0], a[1])
        else:
            raise AssertionError(n)
        vals.append(r)
    out = vals[-1]
    if prog.reduction is not None:
        kind, axes, keepdims = prog.reduction
        out = getattr(xp, kind)(out, axis=axes, keepdims=keepdims)
    outs = [out]
    if prog.extra_output is not None:
        outs.append(vals[prog.extra_output])
    return outs


def assert_matches(got: Any, ref: Any, dtype: np.dtype[Any], what: str, prog: Program) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, (what, got.shape, ref.shape, prog)
    assert got.dtype == ref.dtype, (what, got.dtype, ref.dtype, prog)
    if ref.dtype.kind in "iub":
        np.testing.assert_array_equal(got, ref, err_msg=f"{what}: {prog!r}")
        return
    # Half precision: NumPy sums float16 in float16, kernels accumulate in float (as XLA
    # and PyTorch on GPUs); every other result is rounded the same way.
    tol = {"float32": 2e-4, "float16": 1e-2, "bfloat16": 4e-2}.get(ref.dtype.name, 1e-10)
    scale = 1.0 + (float(np.max(np.abs(ref))) if ref.size else 0.0)
    if prog.reduction is not None:
        scale *= max(1.0, float(np.sqrt(np.prod(prog.shape))))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * scale, err_msg=f"{what}: {prog!r}")


def check_program(prog: Program, host: bool = True) -> Any:
    args = prog.inputs
    ref = evaluate(prog, np, *args)
    eager = evaluate(prog, fnp, *args)
    for e, r in zip(eager, ref):
        assert_matches(e, r, prog.dtype, "eager funcgrad vs NumPy", prog)
    cj = fg.make_jaxpr(lambda *xs: evaluate(prog, fnp, *xs))(*args)
    compiled = build_program(cj)
    for k in compiled.kernels():
        nvrtc_check(k["source"])
    for g, r in zip(run_plan_numpy(compiled.plan, *args), ref):
        assert_matches(g, r, prog.dtype, "fusion plan on NumPy", prog)
    if host and HAVE_GXX:
        for g, r in zip(run_host(compiled, *args), ref):
            assert_matches(g, r, prog.dtype, "kernels on the host (g++)", prog)
    return compiled


@PROGRAMS
@given(programs(reduce=False))
def test_random_elementwise_programs(prog: Program) -> None:
    compiled = check_program(prog)
    # Elementwise work over the iteration shape only ever happens inside kernels.
    for step in compiled.plan.steps:
        if step.kind == "call":
            assert step.eqn.primitive.name not in ("sin", "exp", "add", "mul", "select")


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(dtypes=("float16", "bfloat16")))
def test_random_half_precision_programs(prog: Program) -> None:
    """float16/bfloat16 kernels compute in float and round each result as NumPy does."""
    compiled = check_program(prog)
    # Half-precision arithmetic runs in kernels; structural steps (a keepdims reshape of a
    # reduction's result) may stay calls.
    assert all(s.kind != "call" or s.eqn.primitive.fusion != "elementwise"
               for s in compiled.plan.steps), compiled.plan.steps


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(reduce=True))
def test_random_reductions_with_prologues(prog: Program) -> None:
    compiled = check_program(prog)
    kinds = [s.kind for s in compiled.plan.steps]
    if prog.shape:
        assert "reduce" in kinds, (kinds, prog)


@needs_gxx
def test_host_execution_of_views_of_one_program() -> None:
    # The same program on contiguous, transposed, strided and reversed inputs.
    f = lambda x, y: fnp.tanh(x * y) + fnp.maximum(x, 0.5) * fnp.exp(-y * y)
    base = np.random.default_rng(1).standard_normal((5, 8))
    variants = [base[:, :4], base[:, :4].copy(), base.T[:4, :5].T.copy(), base[:, ::2],
                base[::-1, 1::2], np.asfortranarray(base[:, :4])]
    y = np.random.default_rng(2).standard_normal((5, 4))
    prog = build_program(fg.make_jaxpr(f)(variants[0], y))
    for x in variants:
        for yy in (y, np.asfortranarray(y), y[::-1][::-1]):
            np.testing.assert_allclose(run_host(prog, x, yy)[0], f(x, yy), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------- plan structure


def _plan(f: Callable[..., Any], *args: Any) -> Any:
    return build_program(fg.make_jaxpr(f)(*args))


X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
V = np.random.default_rng(1).standard_normal(4).astype(np.float32)
S = np.float32(0.7)


def test_elementwise_chain_is_one_kernel() -> None:
    f = lambda x, y: fnp.tanh(x * y + 1.0) * 2.0 - fnp.exp(-x) / (y * y + 1.0) + fnp.sin(x)
    prog = _plan(f, X, X + 1.0)
    assert [s.kind for s in prog.plan.steps] == ["elementwise"]
    (k,) = prog.kernels()
    assert k["kind"] == "elementwise"
    assert k["outputs"] == ["f32[3,4]"]
    assert sorted(k["inputs"]) == ["f32[3,4]", "f32[3,4]"]
    assert 'extern "C" __global__ void' in k["source"]
    nvrtc_check(k["source"])


def test_broadcast_operands_are_read_not_materialised() -> None:
    # rank-0 input, a vector broadcast along rows and a Python literal: still one kernel
    f = lambda x, v, s: fnp.tanh(x * v + s) * 2.0 - x
    prog = _plan(f, X, V, S)
    assert [s.kind for s in prog.plan.steps] == ["elementwise"]
    (k,) = prog.kernels()
    assert sorted(k["inputs"]) == sorted(["f32[3,4]", "f32[4]", "f32[]"])
    assert k["outputs"] == ["f32[3,4]"]
    nvrtc_check(k["source"])
    if HAVE_GXX:
        np.testing.assert_allclose(run_host(prog, X, V, S)[0], f(X, V, S), rtol=1e-5, atol=1e-6)


def test_interleaved_smaller_shape_does_not_split_a_region() -> None:
    # y*y+1 on f32[4] sits between f32[3,4] equations in program order: the f32[3,4]
    # region is still one kernel (its intermediates never go through memory).
    f = lambda x, y: fnp.tanh(x * y + 1.0) - fnp.exp(-x) / (y * y + 1.0)
    prog = _plan(f, X, V)
    full = [s for s in prog.plan.steps if s.kind == "elementwise" and s.shape == (3, 4)]
    assert len(full) == 1, [(s.kind, getattr(s, "shape", None)) for s in prog.plan.steps]
    assert len(prog.kernels()) == 2
    for k in prog.kernels():
        nvrtc_check(k["source"])
    np.testing.assert_allclose(run_plan_numpy(prog.plan, X, V)[0], f(X, V), rtol=1e-6)
    if HAVE_GXX:
        np.testing.assert_allclose(run_host(prog, X, V)[0], f(X, V), rtol=1e-5, atol=1e-6)


def test_kernel_order_respects_data_dependencies() -> None:
    # a region that is kept open while other work runs must still run after its producers
    # and before its consumers
    def f(x, v):
        a = fnp.exp(x) * 2.0            # f32[3,4] region, part 1
        s = fnp.sum(a, axis=0)          # consumes part 1: the region must be closed here
        w = v * v + s                   # f32[4]
        b = a + w                       # f32[3,4] again, depends on the reduction
        return fnp.tanh(b) - x, s

    prog = _plan(f, X, V)
    ref = f(X, V)
    for got in (run_plan_numpy(prog.plan, X, V), run_host(prog, X, V) if HAVE_GXX else ref):
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)


def test_prologue_and_sum_is_one_reduce_kernel() -> None:
    for axis in (None, 0, 1, (0, 1)):
        f = lambda x, axis=axis: fnp.sum(fnp.exp(x) * 2.0 + x, axis=axis)
        prog = _plan(f, X)
        assert [s.kind for s in prog.plan.steps] == ["reduce"], axis
        (k,) = prog.kernels()
        assert k["kind"] == "reduce" and "exp(" in k["source"] and "__shared__" in k["source"]
        nvrtc_check(k["source"])
        np.testing.assert_allclose(run_plan_numpy(prog.plan, X)[0], f(X), rtol=1e-5)
        if HAVE_GXX:
            np.testing.assert_allclose(run_host(prog, X)[0], f(X), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["max", "min"])
def test_prologue_and_max_min_is_one_reduce_kernel(kind: str) -> None:
    f = lambda x: getattr(fnp, kind)(fnp.sin(x) * x, axis=1)
    prog = _plan(f, X)
    assert [s.kind for s in prog.plan.steps] == ["reduce"]
    assert prog.plan.steps[0].reduction.primitive.name == f"reduce_{kind}"
    np.testing.assert_allclose(run_plan_numpy(prog.plan, X)[0], f(X), rtol=1e-6)
    if HAVE_GXX:
        np.testing.assert_allclose(run_host(prog, X)[0], f(X), rtol=1e-5, atol=1e-6)
    # integer max/min reductions start from the integer limits and compile
    xi = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    prog = _plan(lambda x: getattr(fnp, kind)(x * 3 - 1, axis=0), xi)
    for k in prog.kernels():
        nvrtc_check(k["source"])
    if HAVE_GXX:
        np.testing.assert_array_equal(run_host(prog, xi)[0],
                                      getattr(np, kind)(xi * 3 - 1, axis=0))


@pytest.mark.parametrize("case", ["reduce_max", "reduce_min", "inf_literal", "nan_literal"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_infinite_and_nan_constants_compile_with_nvrtc(case: str, dtype: Any) -> None:
    # float max/min reductions start from -inf/+inf; NVRTC has no INFINITY/NAN macros
    x = X.astype(dtype)
    if case == "inf_literal":
        f = lambda x: fnp.where(x > 0, x, -np.inf)
    elif case == "nan_literal":
        f = lambda x: fnp.where(x > 0, x, np.nan)
    else:
        f = lambda x: getattr(fnp, case[7:])(x * 2.0, axis=1)
    prog = _plan(f, x)
    for k in prog.kernels():
        nvrtc_check(k["source"])
    if HAVE_GXX:
        np.testing.assert_array_equal(run_host(prog, x)[0], f(x))


def test_dot_general_stays_a_call() -> None:
    m = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    b = np.random.default_rng(4).standard_normal(5).astype(np.float32)
    f = lambda x, m, b: fnp.tanh(fnp.sin(x) @ m + b)
    prog = _plan(f, X, m, b)
    kinds = [(s.kind, s.eqn.primitive.name if s.kind == "call" else None)
             for s in prog.plan.steps]
    assert kinds == [("elementwise", None), ("call", "dot_general"), ("elementwise", None)]
    for k in prog.kernels():
        nvrtc_check(k["source"])
    np.testing.assert_allclose(run_plan_numpy(prog.plan, X, m, b)[0], f(X, m, b), rtol=1e-5,
                               atol=1e-6)
    if HAVE_GXX:
        np.testing.assert_allclose(run_host(prog, X, m, b)[0], f(X, m, b), rtol=1e-5,
                                   atol=1e-6)


def test_value_used_by_reduction_and_outside_is_kept() -> None:
    def f(x):
        e = fnp.exp(x) * 2.0
        return fnp.sum(e, axis=1), e + 1.0, e

    prog = _plan(f, X)
    ref = f(X)
    # e is written by a kernel (it is needed outside the reduction), not fused away
    producer = prog.plan.steps[0]
    assert producer.kind == "elementwise" and len(producer.outputs) >= 1
    for got in (run_plan_numpy(prog.plan, X), run_host(prog, X) if HAVE_GXX else ref):
        assert len(got) == 3
        for g, r in zip(got, ref):
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5)
    for k in prog.kernels():
        nvrtc_check(k["source"])

    # an intermediate of the prologue used elsewhere: the reduction must not swallow it
    def g(x):
        a = fnp.sin(x)
        return fnp.max(a * x, axis=0), a

    prog = _plan(g, X)
    for got in (run_plan_numpy(prog.plan, X), run_host(prog, X) if HAVE_GXX else g(X)):
        for gg, r in zip(got, g(X)):
            np.testing.assert_allclose(gg, r, rtol=1e-5, atol=1e-6)


def test_reduction_of_reduction_and_broadcast_back() -> None:
    f = lambda x: x - fnp.max(x, axis=1, keepdims=True) + fnp.sum(x * x)
    prog = _plan(f, X)
    np.testing.assert_allclose(run_plan_numpy(prog.plan, X)[0], f(X), rtol=1e-5, atol=1e-6)
    if HAVE_GXX:
        np.testing.assert_allclose(run_host(prog, X)[0], f(X), rtol=1e-5, atol=1e-5)


def test_bool_and_mixed_dtype_kernels() -> None:
    mask = np.array([[True, False, True, False]] * 3)
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    f = lambda m, x, i: (fnp.where(m, x, -x) * fnp.astype(i, np.float32),
                         fnp.logical_and(m, x > 0))
    prog = _plan(f, mask, X, xi)
    for k in prog.kernels():
        nvrtc_check(k["source"])
    ref = f(mask, X, xi)
    for got in (run_plan_numpy(prog.plan, mask, X, xi),
                run_host(prog, mask, X, xi) if HAVE_GXX else ref):
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-6)
        np.testing.assert_array_equal(got[1], ref[1])
        assert np.asarray(got[1]).dtype == np.bool_


def test_jit_cupy_lower_kernels_without_gpu() -> None:
    f = lambda x: fnp.sum(fnp.tanh(x) * 3.0, axis=0)
    lowered = fg.jit(f, backend="cupy").lower(X)
    assert lowered.backend == "cupy"
    kernels = lowered.kernels()
    assert isinstance(kernels, list) and len(kernels) == 1
    k = kernels[0]
    assert set(k) >= {"name", "kind", "source", "inputs", "outputs"}
    assert k["kind"] == "reduce" and k["inputs"] == ["f32[3,4]"] and k["outputs"] == ["f32[4]"]
    assert k["name"] in k["source"]
    assert "__global__" in lowered.as_text()
    nvrtc_check(k["source"])


def test_nvrtc_error_is_a_backend_error_with_the_log() -> None:
    if not HAVE_NVRTC:
        pytest.skip("cupy_backends (NVRTC) not installed")
    bad = ('extern "C" __global__ void broken(float* x) {\n'
           "  x[0] = not_declared_anywhere + 1.0f;\n}\n")
    with pytest.raises(E.BackendError) as info:
        nvrtc_compile(bad, name="broken.cu")
    msg = str(info.value)
    assert "broken.cu" in msg and "not_declared_anywhere" in msg
    assert "undefined" in msg
    assert isinstance(info.value, RuntimeError)
    # and a good kernel compiles to PTX
    ptx = nvrtc_compile('extern "C" __global__ void ok(float* x) { x[threadIdx.x] *= 2.0f; }')
    assert b".entry ok" in ptx


# ----------------------------------------------------------------- on a GPU


def _cupy_or_skip() -> Any:
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device (get_backend('cupy').available() is False)")
    import cupy

    return cupy


GPU_CASES: list[tuple[str, Callable[..., Any]]] = [
    ("chain", lambda x, y: fnp.tanh(x * y + 1.0) * 2.0 - fnp.exp(-x) / (y * y + 1.0)),
    ("broadcast", lambda x, y: x * y[0] + fnp.sin(y[:, :1])),
    ("sum_prologue", lambda x, y: fnp.sum(fnp.exp(x) * y, axis=1)),
    ("sum_all", lambda x, y: fnp.sum(x * y)),
    ("matmul", lambda x, y: fnp.tanh(x @ y.T) + 1.0),
    ("where", lambda x, y: fnp.where(x > y, x, y * 2.0)),
]


@pytest.mark.gpu
@pytest.mark.parametrize("name,f", GPU_CASES, ids=[c[0] for c in GPU_CASES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_jit_cupy_matches_numpy(name: str, f: Callable[..., Any], dtype: str) -> None:
    cp = _cupy_or_skip()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 257)).astype(dtype)  # more than one block of work
    y = rng.standard_normal((300, 257)).astype(dtype)
    jf = fg.jit(f, backend="cupy")
    got = jf(cp.asarray(x), cp.asarray(y))
    assert got.device.platform == "cuda"
    tol = 1e-4 if dtype == "float32" else 1e-10
    ref = f(x, y)
    np.testing.assert_allclose(cp.asnumpy(got), ref, rtol=tol,
                               atol=tol * (1 + float(np.max(np.abs(ref)))) * 20)
    # non-contiguous device inputs
    xt = cp.asarray(np.ascontiguousarray(x.T)).T
    np.testing.assert_allclose(cp.asnumpy(jf(xt, cp.asarray(y))), ref, rtol=tol,
                               atol=tol * (1 + float(np.max(np.abs(ref)))) * 20)


@pytest.mark.gpu
@pytest.mark.parametrize("shape,axis", [((1000,), 0), ((64, 1000), 1), ((1000, 64), 0),
                                        ((7, 300, 5), (0, 2))])
def test_gpu_reductions_large(shape: tuple[int, ...], axis: Any) -> None:
    cp = _cupy_or_skip()
    x = np.random.default_rng(1).standard_normal(shape)
    f = lambda x: fnp.sum(fnp.sin(x) * 2.0 + x, axis=axis)
    np.testing.assert_allclose(cp.asnumpy(fg.jit(f, backend="cupy")(cp.asarray(x))), f(x),
                               rtol=1e-10, atol=1e-9)
    xi = np.random.default_rng(2).integers(-50, 50, shape).astype(np.int32)
    g = lambda x: fnp.max(x * 3 - 1, axis=axis)
    np.testing.assert_array_equal(cp.asnumpy(fg.jit(g, backend="cupy")(cp.asarray(xi))), g(xi))


@pytest.mark.gpu
def test_gpu_float_max_reduction() -> None:
    cp = _cupy_or_skip()
    x = np.random.default_rng(1).standard_normal((64, 1000))
    f = lambda x: fnp.max(fnp.sin(x) * 2.0, axis=1)
    np.testing.assert_allclose(cp.asnumpy(fg.jit(f, backend="cupy")(cp.asarray(x))), f(x))


@pytest.mark.gpu
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(programs())
def test_gpu_random_programs(prog: Program) -> None:
    cp = _cupy_or_skip()
    ref = evaluate(prog, np, *prog.inputs)
    jf = fg.jit(lambda *xs: evaluate(prog, fnp, *xs), backend="cupy")
    got = jf(*(cp.asarray(x) for x in prog.inputs))
    for g, r in zip(got, ref):
        # the device may contract a*b+c into an FMA: a little more slack than the host check
        g = cp.asnumpy(g)
        if np.asarray(r).dtype.kind == "f":
            tol = 1e-3 if np.asarray(r).dtype == np.float32 else 1e-9
            scale = 1.0 + float(np.max(np.abs(r))) if np.size(r) else 1.0
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol * scale * 10,
                                       err_msg=repr(prog))
        else:
            np.testing.assert_array_equal(g, r, err_msg=repr(prog))
