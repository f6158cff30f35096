"""From a generated ``Kernel`` and the real arrays to launches: the layout, the grid, and
the argument list in the exact C types of the kernel's parameters.

The same launches run on a GPU (``cupy_backend``) and on the CPU's harness
(``host_cuda``), so the CPU checks the argument lists and grids a GPU receives.

* Operands of one element that are host values (a Python scalar given to ``jit``) are
  passed by value: no upload per call.
* Elementwise kernels whose operands are each C-contiguous, one element, or a contiguous
  block broadcast along the leading axes (a bias row, read at ``i % m``) or the trailing
  ones (a column, read at ``i / m``) use the ``flat`` layout, with no index decoding;
  others the ``strided`` one.
* Reductions whose axes are one run of consecutive axes and whose operands' strides
  merge over (outer, reduced, inner) use ``row`` (inner size 1: a block per output) or
  ``col`` (a thread per output, reads coalesced along the inner axes); when the outputs
  are too few to fill the GPU, the reduced range is split over ``gridDim.y`` and a second
  kernel combines the partial results. Everything else uses ``nd``.
* Index arithmetic is 32-bit when every index and offset fits.

>>> import numpy as np
>>> import funcgrad as fg
>>> from funcgrad.backends.cuda_codegen import kernel_source
>>> from funcgrad.backends.fusion import plan_jaxpr
>>> cj = fg.make_jaxpr(lambda x: fg.numpy.sum(x))(np.ones(1 << 20, np.float32))
>>> k = kernel_source(plan_jaxpr(cj).steps[0], "k")
>>> launches, _ = plan_launches(k, [np.ones(1 << 20, np.float32)], np, lambda a: False)
>>> [(launch.name, launch.grid) for launch in launches]
[('k_row_split', (1, 256)), ('k_finish', (1,))]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad.backends.cuda_codegen import (
    BLOCK,
    UNROLL,
    Kernel,
    Layout,
    compute_type,
    finish_source,
)

MAX_GRID = 65535
"""Blocks of a grid-stride launch (and of gridDim.y)."""
TARGET_BLOCKS = 1056
"""Blocks that fill a GPU (132 SMs x 8): reductions with fewer outputs split their work."""
MIN_SPLIT_WORK = 4096
"""Reduced elements a block of a split ``row`` reduction gets at least."""
MIN_THREAD_WORK = 32
"""Reduced elements a thread of a split ``col`` reduction gets at least."""
_INT32_LIMIT = 2 ** 31 - 1


@dataclass
class Launch:
    """One kernel launch: its name and text, grid, block and arguments."""

    name: str
    source: str
    grid: tuple[int, ...]
    block: tuple[int, ...]
    args: list[Any]


class _Ref:
    """A place in a cached argument list filled per call: slot ``k``'s array or value, output
    ``j``, or the partial results of a split reduction."""

    __slots__ = ("kind", "k")

    def __init__(self, kind: str, k: int = 0) -> None:
        self.kind, self.k = kind, k


_TMP = _Ref("tmp")


@dataclass
class _Plan:
    """The launches of one kernel for one argument signature, with ``_Ref`` places."""

    launches: list[Launch]
    outputs: list[tuple[tuple[int, ...], Any]]
    tmp: tuple[int, Any] | None = None


def _index(idx: str, value: int) -> Any:
    return np.int32(value) if idx == "int" else np.int64(value)


def _by_value(array: Any, dtype: Any) -> Any:
    """A one-element host value as the kernel's by-value parameter (its compute type)."""
    value = np.asarray(array).reshape(())
    want = np.float32 if compute_type(dtype) == "float" else np.dtype(dtype)
    return value.astype(want)[()]


def _iteration_strides(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int,
                       axes: tuple[int, ...], nd: int) -> list[int]:
    """An operand's strides (in elements) along the iteration axes its dims map to; 0 for
    the axes it is broadcast along."""
    out = [0] * nd
    for j, ax in enumerate(axes):
        if shape[j] != 1:
            out[ax] = strides[j] // itemsize
    return out


def _merged(strides: list[int], shape: tuple[int, ...], dims: Sequence[int]) -> int | None:
    """The one stride that walks ``dims`` (in C order) as a single run, or None when they do
    not merge (e.g. a transposed pair, or a broadcast axis next to a real one)."""
    live = [d for d in dims if shape[d] != 1]
    for d, e in zip(live, live[1:]):
        if strides[d] != strides[e] * shape[e]:
            return None
    return strides[live[-1]] if live else 0


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> int:
    """One past the furthest element offset of an array (in elements)."""
    return 1 + sum(abs(s // itemsize) * (n - 1) for s, n in zip(strides, shape))


def _fits32(*values: int) -> bool:
    # The grid-stride increment (of an unrolled flat loop, the largest) must not overflow.
    return all(v + BLOCK * MAX_GRID * UNROLL < _INT32_LIMIT for v in values)


def plan_launches(kernel: Kernel, inputs: Sequence[Any], xp: Any,
                  by_value: Callable[[Any], bool],
                  to_device: Callable[[Any], Any] | None = None
                  ) -> tuple[list[Launch], list[Any]]:
    """The launches that run ``kernel`` on ``inputs`` (one per ``kernel.inputs``) and the
    output arrays they fill (made with ``xp``). ``by_value(a)`` says whether a
    one-element operand is passed by value; ``to_device`` places the others. The layout,
    grids and argument lists are worked out once per shapes and strides."""
    values = dict(zip(kernel.inputs, inputs))
    slot_values: list[Any] = []
    key: list[Any] = []
    for v, _ in kernel.slots:
        a = values[v]
        if getattr(a, "size", 1) == 1 and by_value(a):
            slot_values.append(_by_value(a, v.aval.dtype))
            key.append(None)
            continue
        if to_device is not None:
            a = to_device(a)
        slot_values.append(a)
        key.append((a.shape, a.strides))
    plan = kernel.launch_plans.get(tuple(key))
    if plan is None:
        plan = kernel.launch_plans[tuple(key)] = _make_plan(kernel, key)
    outs = [xp.empty(shape, dtype) for shape, dtype in plan.outputs]
    tmp = xp.empty((plan.tmp[0],), plan.tmp[1]) if plan.tmp is not None else None

    def fill(a: Any) -> Any:
        if type(a) is not _Ref:
            return a
        return slot_values[a.k] if a.kind == "slot" else outs[a.k] if a.kind == "out" else tmp

    return [Launch(launch.name, launch.source, launch.grid, launch.block,
                   [fill(a) for a in launch.args]) for launch in plan.launches], outs


def _make_plan(kernel: Kernel, key: list[Any]) -> _Plan:
    nd = len(kernel.shape)
    reads: list[str] = []
    strides: list[list[int]] = []
    extents: list[int] = []
    for (v, axes), sig in zip(kernel.slots, key):
        if sig is None:
            reads.append("v")
            strides.append([])
            continue
        shape, st = sig
        itemsize = v.aval.dtype.itemsize
        size1 = math.prod(shape) == 1
        reads.append("0" if size1 else "s")
        strides.append([] if size1 else _iteration_strides(shape, st, itemsize, axes, nd))
        if not size1:
            extents.append(_extent(shape, st, itemsize))
    if kernel.reduction is None:
        return _elementwise(kernel, reads, strides, extents)
    return _reduce(kernel, reads, strides, extents)


def _flat_read(s: list[int], shape: tuple[int, ...]) -> tuple[str, int] | None:
    """How a flat loop reads an operand of iteration strides ``s`` (in elements): ``("c",
    0)`` at ``[i]``; ``("m", m)`` at ``[i % m]`` when it is contiguous over the trailing
    axes and broadcast over the others (a bias row); ``("d", m)`` at ``[i / m]`` when it is
    contiguous over the leading axes and broadcast over the trailing ``m`` elements (a
    column); None when it needs strides."""
    nd = len(shape)
    live = [d for d in range(nd) if shape[d] != 1]
    for p in range(nd + 1):
        # trailing block [p, nd): contiguous in itself; leading block: broadcast
        tail = math.prod(shape[p:])
        if all(s[d] == 0 for d in live if d < p) and \
                all(s[d] == math.prod(shape[d + 1:]) for d in live if d >= p):
            return ("c", 0) if all(s[d] != 0 for d in live) else ("m", tail)
        # leading block [0, p): contiguous over itself; trailing block: broadcast
        if all(s[d] == 0 for d in live if d >= p) and \
                all(s[d] == math.prod(shape[d + 1:p]) for d in live if d < p):
            return ("d", tail)
    return None


def _elementwise(kernel: Kernel, reads: list[str], strides: list[list[int]],
                 extents: list[int]) -> _Plan:
    shape = kernel.shape
    outputs = [(v.aval.shape, v.aval.dtype) for v in kernel.outputs]
    n = math.prod(shape)
    if n == 0:
        return _Plan([], outputs)
    maybe = [_flat_read(s, shape) if r == "s" else (r, 0) for r, s in zip(reads, strides)]
    flat_reads = [f for f in maybe if f is not None]
    flat = len(flat_reads) == len(reads)
    grid = min(-(-n // (BLOCK * (kernel.unroll if flat else 1))), MAX_GRID)
    idx = "int" if _fits32(n, *extents) else "long long"
    layout = Layout("flat", tuple(f[0] for f in flat_reads), idx) if flat \
        else Layout("strided", tuple(reads), idx)
    args: list[Any] = []
    for k, (r, s) in enumerate(zip(reads, strides)):
        args.append(_Ref("slot", k))
        if flat and flat_reads[k][0] in ("m", "d"):
            args.append(_index(idx, flat_reads[k][1]))
        elif r == "s" and not flat:
            args.extend(_index(idx, x) for x in s)
    args.extend(_Ref("out", j) for j in range(len(outputs)))
    args.append(_index(idx, n))
    if not flat:
        args.extend(_index(idx, d) for d in shape)
    return _Plan([Launch(kernel.kernel_name(layout), kernel.source_for(layout), (grid,),
                         (BLOCK,), args)], outputs)


def _reduce(kernel: Kernel, reads: list[str], strides: list[list[int]],
            extents: list[int]) -> _Plan:
    shape, nd, axes = kernel.shape, len(kernel.shape), sorted(kernel.axes)
    out_var = kernel.outputs[0]
    outputs = [(out_var.aval.shape, out_var.aval.dtype)]
    n_out = math.prod(out_var.aval.shape)
    if n_out == 0:
        return _Plan([], outputs)
    n_red = math.prod(shape[a] for a in axes)
    idx = "int" if _fits32(n_out * max(n_red, 1), *extents) else "long long"
    groups = None
    if not axes or axes == list(range(axes[0], axes[-1] + 1)):
        first = axes[0] if axes else nd
        last = axes[-1] + 1 if axes else nd
        groups = (range(first), axes, range(last, nd))
    merged: list[list[int]] = []
    if groups is not None:
        for s, r in zip(strides, reads):
            m = [_merged(s, shape, g) for g in groups] if r == "s" else []
            kept = [x for x in m if x is not None]
            if len(kept) != len(m):
                groups = None
                break
            merged.append(kept)
    if groups is None:
        layout = Layout("nd", tuple(reads), idx)
        args: list[Any] = []
        for k, (r, s) in enumerate(zip(reads, strides)):
            args.append(_Ref("slot", k))
            if r == "s":
                args.extend(_index(idx, x) for x in s)
        args.append(_Ref("out", 0))
        args.extend(_index(idx, d) for d in shape)
        args.extend([_index(idx, n_out), _index(idx, n_red)])
        return _Plan([Launch(kernel.kernel_name(layout), kernel.source_for(layout),
                             (min(n_out, MAX_GRID),), (BLOCK,), args)], outputs)
    n_outer = math.prod(shape[d] for d in groups[0])
    n_inner = math.prod(shape[d] for d in groups[2])
    mode = "row" if n_inner == 1 else "col"
    blocks = n_outer if mode == "row" else -(-n_out // BLOCK)
    parts = 1
    if blocks < TARGET_BLOCKS // 2:
        work = MIN_SPLIT_WORK if mode == "row" else MIN_THREAD_WORK
        parts = max(1, min(-(-TARGET_BLOCKS // blocks), n_red // work, MAX_GRID))
    chunk = -(-n_red // parts) if parts > 1 else max(n_red, 1)
    parts = -(-n_red // chunk) if n_red else 1
    split = parts > 1
    layout = Layout(mode, tuple(reads), idx, split)
    args = []
    for k, (r, group_strides) in enumerate(zip(reads, merged)):
        args.append(_Ref("slot", k))
        if r == "s":
            args.extend(_index(idx, x) for x in group_strides)
    args.extend([_TMP if split else _Ref("out", 0),
                 *(_index(idx, x) for x in (n_outer, n_red, n_inner, chunk))])
    grid = (min(blocks, MAX_GRID), parts) if split else (min(blocks, MAX_GRID),)
    launches = [Launch(kernel.kernel_name(layout), kernel.source_for(layout), grid, (BLOCK,),
                       args)]
    if not split:
        return _Plan(launches, outputs)
    name, text = finish_source(kernel, idx)
    launches.append(Launch(name, text, (min(n_out, MAX_GRID),), (BLOCK,),
                           [_TMP, _Ref("out", 0), _index(idx, n_out), _index(idx, parts)]))
    acc_dtype = np.dtype(np.float32) if compute_type(out_var.aval.dtype) == "float" else \
        out_var.aval.dtype
    return _Plan(launches, outputs, (parts * n_out, acc_dtype))


__all__ = ["Launch", "plan_launches"]
