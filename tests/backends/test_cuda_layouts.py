"""Launch layouts of the generated CUDA kernels (backends/cuda_launch.py), run on the CPU's
harness with the grids and arguments a GPU gets, and under the CuPy emulator.

* which layout a launch takes (flat, strided, by-value scalars; row, col, nd; split
  reductions and their finishing kernel; 32- or 64-bit index arithmetic);
* every layout gives NumPy's numbers, for shapes that split, empty axes, NaN, integers,
  views and broadcasts;
* sizes are arguments: a new shape of the same rank compiles nothing, and a Python
  scalar given to ``jit`` is passed by value (no upload).
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.backends import cuda_launch
from funcgrad.backends.cuda_launch import plan_launches
from funcgrad.backends.cupy_backend import build_program

pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or importlib.util.find_spec("cupy_backends") is None,
    reason="needs g++ (host harness) and cupy_backends (NVRTC)")


def _kernel(f: Callable[..., Any], *args: Any) -> Any:
    """The one kernel of ``f``'s program, and its inputs among ``args``."""
    cj = fg.make_jaxpr(f)(*args)
    prog = build_program(cj)
    (k,) = [s for s in prog.steps if not hasattr(s, "eqn")]
    given = dict(zip(cj.jaxpr.invars, args))
    return k, [np.asarray(given[v]) for v in k.inputs]


def _names(f: Callable[..., Any], *args: Any) -> list[tuple[str, tuple[int, ...]]]:
    k, inputs = _kernel(f, *args)
    launches, _ = plan_launches(k, inputs, np, lambda a: np.ndim(a) == 0)
    return [(launch.name.split("_", 3)[-1], launch.grid) for launch in launches]


def _host(f: Callable[..., Any], *args: Any) -> list[Any]:
    from funcgrad.backends.host_cuda import run_on_host

    return run_on_host(build_program(fg.make_jaxpr(f)(*args)), *args)


RNG = np.random.default_rng(0)
F32 = RNG.standard_normal((6, 7)).astype(np.float32)


def test_layout_choice() -> None:
    add = lambda a, b: a * b + 1.0
    assert _names(add, F32, F32) == [("flat", (1,))]
    assert _names(add, F32, F32.T.copy().T) == [("strided", (1,))]    # Fortran order
    assert _names(add, F32, np.float32(2.0)) == [("flat", (1,))]       # by value
    assert _names(add, F32, F32[0]) == [("flat", (1,))]                # a broadcast row
    assert _names(add, F32, F32[:, :1]) == [("strided", (1,))]         # a strided column
    assert _names(add, F32, F32[:, :1].copy()) == [("flat", (1,))]     # a column
    k, inputs = _kernel(add, F32, np.float32(2.0))
    launches, _ = plan_launches(k, inputs, np, lambda a: np.ndim(a) == 0)
    (pos,) = [i for i, a in enumerate(launches[0].args) if type(a) is np.float32]
    assert f"float in{pos}" in launches[0].source and launches[0].args[pos] == 2.0

    big = np.ones((3, 100_000), np.float32)
    assert _names(lambda a: fnp.sum(a, axis=1), big) == [("row_split", (3, 24)),
                                                         ("finish", (3,))]
    assert _names(lambda a: fnp.sum(a, axis=1), F32) == [("row", (6,))]
    assert _names(lambda a: fnp.sum(a, axis=0), big.T) == [("col_split", (1, 1053)),
                                                           ("finish", (3,))]
    assert _names(lambda a: fnp.sum(a, axis=0), F32) == [("col", (1,))]
    assert _names(lambda a: fnp.sum(a), big) == [("row_split", (1, 73)), ("finish", (1,))]
    cube = np.ones((3, 4, 5), np.float32)
    assert _names(lambda a: fnp.sum(a, axis=(0, 2)), cube) == [("nd", (4,))]
    assert _names(lambda a: fnp.sum(a, axis=1), cube) == [("col", (1,))]
    assert _names(lambda a: fnp.sum(a), cube.transpose(2, 0, 1)) == [("nd", (1,))]
    many = np.ones((4096, 64), np.float32)
    assert _names(lambda a: fnp.max(a, axis=1), many) == [("row", (4096,))]


def test_index_width() -> None:
    k, inputs = _kernel(lambda a: a + 1.0, F32)
    (launch,), _ = plan_launches(k, inputs, np, lambda a: False)
    assert "int i = " in launch.source and isinstance(launch.args[-1], np.int32)


FLAT_BODIES = {
    # cheap: each thread loads 4 elements before computing them
    4: lambda a, b, c: (fnp.sin(a) * 2.0 + b.astype(np.float32) * c, b * b),
    # costly (many math-library calls): one element per thread and turn
    1: lambda a, b, c: (fnp.tanh(fnp.exp(a) * fnp.cos(a) + fnp.sin(a * c)), fnp.exp(b)),
}


BROADCASTS = [  # (iteration shape, operand shape, read)
    ((5, 7), (7,), "m"), ((5, 7), (5, 1), "d"), ((2, 3, 4), (3, 4), "m"),
    ((2, 3, 4), (4,), "m"), ((2, 3, 4), (2, 3, 1), "d"), ((2, 3, 4), (2, 1, 1), "d"),
    ((3, 1, 4), (1, 4), "m"), ((300, 17), (17,), "m"), ((300, 17), (300, 1), "d"),
]


@pytest.mark.parametrize("wide", [False, True], ids=["int32", "int64"])
@pytest.mark.parametrize("shape,bshape,read", BROADCASTS)
def test_flat_broadcast_reads(shape: tuple[int, ...], bshape: tuple[int, ...], read: str,
                              wide: bool, monkeypatch: Any) -> None:
    """A bias row (read at i % m) and a column (at i / m) keep the flat layout, over a
    grid-stride loop of many turns, in 32- and 64-bit index arithmetic."""
    monkeypatch.setattr(cuda_launch, "MAX_GRID", 2)
    if wide:
        monkeypatch.setattr(cuda_launch, "_INT32_LIMIT", 0)
    x = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(bshape).astype(np.float32)
    f = lambda a, c: (a * c + 1.0, c - a)
    k, inputs = _kernel(f, x, b)
    (launch,), _ = plan_launches(k, inputs, np, lambda a: False)
    assert "_flat" in launch.name and f"in1_{read}" in launch.source
    if not wide:  # the text as CuPy would compile it (CUBIN for sm_90)
        from funcgrad.backends.cuda_codegen import cupy_options, nvrtc_compile

        assert nvrtc_compile(launch.source, options=cupy_options())
    got = _host(f, x, b)
    for g, w in zip(got, f(x, b)):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6)


@pytest.mark.parametrize("unroll", sorted(FLAT_BODIES))
@pytest.mark.parametrize("max_grid", [65535, 2], ids=["one_pass", "grid_stride"])
@pytest.mark.parametrize("n", [1, 255, 1023, 1024, 1025, 4099])
def test_flat_unrolled_elementwise(n: int, max_grid: int, unroll: int,
                                   monkeypatch: Any) -> None:
    """Every element of a flat kernel is computed once, whatever the size is against a
    thread's unrolled group and the grid (2 blocks: many turns of the grid-stride loop)."""
    monkeypatch.setattr(cuda_launch, "MAX_GRID", max_grid)
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float16)
    one = np.ones((1,), np.float32)
    f = FLAT_BODIES[unroll]
    k, inputs = _kernel(f, x, y, one)
    (launch,), _ = plan_launches(k, inputs, np, lambda a: False)
    assert k.unroll == unroll and "_flat" in launch.name
    assert launch.grid[0] == min(-(-n // (256 * unroll)), max_grid)
    got = _host(f, x, y, one)
    want = f(x, y, one)
    np.testing.assert_allclose(got[0], np.asarray(want[0]), rtol=1e-5, atol=1e-6)
    # float16 results: the host's libm and NumPy's may round a transcendental one half-ulp
    # apart
    np.testing.assert_allclose(got[1].astype(np.float32), np.asarray(want[1], np.float32),
                               rtol=2 ** -10)


def test_flat_kernel_issues_its_loads_before_its_stores() -> None:
    """In the PTX NVRTC makes, a cheap flat kernel loads each thread's group before it
    stores any of it (a plain grid-stride loop, unrolled by the compiler, alternates a load
    and a store: one load in flight per thread)."""
    import re

    from funcgrad.backends.cuda_codegen import UNROLL, nvrtc_compile

    k, _ = _kernel(lambda a, b: a * b + 1.0, F32, F32)
    flat = k.default_layouts()[0]
    ptx = nvrtc_compile(k.source_for(flat)).decode()
    order = re.findall(r"\b(ld|st)\.global", ptx)
    assert order[:2 * UNROLL] == ["ld"] * (2 * UNROLL) and "st" in order


def _reference(kind: str, x: np.ndarray, axis: Any) -> np.ndarray:
    return getattr(np, kind)(x.astype(np.float64) if x.dtype.kind == "f" else x, axis=axis)


REDUCTIONS = [
    ((3, 20_000), 1), ((20_000, 3), 0), ((50_000,), None), ((4, 3000, 3), 1),
    ((6, 5, 7), (0, 2)), ((2, 9000), None), ((0, 5), 0), ((5, 0), 1), ((7, 1, 1), 0),
    ((1, 9000, 1), 1),
]


@pytest.mark.parametrize("wide", [False, True], ids=["int32", "int64"])
@pytest.mark.parametrize("shape,axis,kind", [
    (shape, axis, kind) for shape, axis in REDUCTIONS for kind in ("sum", "max", "min")
    # max/min of an empty axis is an error before any kernel runs
    if kind == "sum" or 0 not in shape])
def test_reductions_on_the_host_harness(shape: tuple[int, ...], axis: Any, kind: str,
                                        wide: bool, monkeypatch: Any) -> None:
    if wide:  # every index in 64-bit arithmetic, as for arrays past 2**31 elements
        monkeypatch.setattr(cuda_launch, "_INT32_LIMIT", 0)
    for dtype in (np.float32, np.int32):
        x = RNG.uniform(-1, 1, shape).astype(np.float32) if dtype == np.float32 else \
            RNG.integers(-50, 50, shape).astype(np.int32)
        f = lambda a: getattr(fnp, kind)(a * 2 + 1, axis=axis)
        (got,) = _host(f, x)
        ref = _reference(kind, x * 2 + 1, axis)
        assert got.shape == ref.shape and got.dtype == f(x).dtype
        if dtype == np.int32:
            np.testing.assert_array_equal(got, ref)
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * max(1, x.size) ** 0.5)


def test_split_reductions_propagate_nan_and_views() -> None:
    x = RNG.standard_normal((3, 30_000)).astype(np.float32)
    x[1, 17_000] = np.nan
    for kind in ("sum", "max", "min"):
        (got,) = _host(lambda a, k=kind: getattr(fnp, k)(a, axis=1), x)
        assert np.isnan(got[1]) and not np.isnan(got[0]) and not np.isnan(got[2])
    # a reversed view and a broadcast operand in the prologue: strides merge per group
    v = RNG.standard_normal(3).astype(np.float32)
    y = x[::-1, :20_000]
    (got,) = _host(lambda a, b: fnp.sum(fnp.nan_to_num(a) - b[:, None], axis=1), y, v)
    np.testing.assert_allclose(got, (np.nan_to_num(y) - v[:, None]).sum(1, dtype=np.float64),
                               rtol=1e-4, atol=1e-2)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 40), min_size=1, max_size=3),
       data=st.data())
def test_elementwise_layouts_agree(shape: list[int], data: Any) -> None:
    """Every elementwise layout (flat, strided, by value; 32/64-bit) gives NumPy's result
    on contiguous, transposed, sliced and broadcast operands."""
    shape_t = tuple(shape)
    x = RNG.standard_normal(shape_t)
    view = data.draw(st.sampled_from(["c", "T", "slice", "row", "scalar"]))
    if view == "T":
        y = RNG.standard_normal(shape_t[::-1]).T
    elif view == "slice":
        y = RNG.standard_normal((*shape_t[:-1], 2 * shape_t[-1]))[..., ::2]
    elif view == "row":
        y = RNG.standard_normal(shape_t[-1:])
    elif view == "scalar":
        y = np.float64(RNG.standard_normal())
    else:
        y = RNG.standard_normal(shape_t)
    f = lambda a, b: fnp.tanh(a * b) - b
    (got,) = _host(f, x, y)
    np.testing.assert_allclose(got, np.tanh(x * y) - y, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------- under the emulator


@pytest.mark.gpu
def test_a_new_shape_of_the_same_rank_compiles_nothing() -> None:
    import fakecupy

    f = fg.jit(lambda a, b: fnp.sum(fnp.exp(a) * b, axis=1) + 1.0, backend="cupy")
    first = [fg.device_put(RNG.standard_normal((4, 50)).astype(np.float32), "cuda")] * 2
    f(*first)
    for shape in [(9, 3), (2, 700), (31, 31)]:
        a = RNG.standard_normal(shape).astype(np.float32)
        with fakecupy.counting() as c:
            got = f(fg.device_put(a, "cuda"), fg.device_put(a, "cuda"))
        assert c.compiles == 0, shape
        terms = np.exp(a.astype(np.float64)) * a
        # float32 sums of terms of both signs: the error scales with the terms' magnitude
        np.testing.assert_allclose(np.asarray(fg.device_get(got)), terms.sum(1) + 1.0,
                                   rtol=1e-5, atol=1e-6 * np.abs(terms).sum(1).max())


@pytest.mark.gpu
def test_python_scalars_are_passed_by_value() -> None:
    import fakecupy

    f = fg.jit(lambda a, s: a * s + s, backend="cupy")
    x = fg.device_put(np.arange(6.0, dtype=np.float32), "cuda")
    f(x, 2.0)
    with fakecupy.counting() as c:
        got = f(x, 3.5)
    assert c.h2d == 0 and c.launches == 1, (c.h2d, c.launches)
    np.testing.assert_array_equal(np.asarray(fg.device_get(got)),
                                  np.arange(6.0, dtype=np.float32) * 3.5 + 3.5)


@pytest.mark.gpu
def test_a_full_reduction_uses_many_blocks() -> None:
    import fakecupy

    x = RNG.standard_normal(1 << 18).astype(np.float32)
    f = fg.jit(lambda a: fnp.sum(a * a), backend="cupy")
    xd = fg.device_put(x, "cuda")
    f(xd)
    with fakecupy.counting() as c:
        got = f(xd)
    assert c.launches == 2 and c.d2h == 0 and c.syncs == 0
    np.testing.assert_allclose(float(fg.device_get(got)), float((x.astype(np.float64) ** 2)
                                                               .sum()), rtol=1e-5)
