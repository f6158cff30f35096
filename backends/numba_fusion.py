"""CPU fusion: the fusion planner's clusters compiled into loops with numba.

``jit`` on the NumPy backend asks the planner shared with the CUDA path
(``funcgrad.backends.fusion``) for clusters: maximal elementwise regions with
broadcasting, and reductions with their elementwise prologue. Each cluster worth it
(two or more operations, at least ``funcgrad_cpu_fusion_min_size`` elements) becomes
generated Python over scalars, compiled by numba: one pass over the data, no
full-size temporaries. Each primitive's scalar expression comes from its definition
(``Primitive.py_scalar``); a cluster with a primitive that has none, or that numba
cannot compile, stays NumPy code, as does everything without numba installed.

NumPy's SIMD loops for transcendental functions (``exp``, ``tanh``, ``sin``...) are
several times faster than the scalar libm calls a numba loop makes, so a cluster that
has them runs block by block: numba loops for the arithmetic between them, NumPy's
ufunc on the block (which stays in cache) for each of them. The results of those are
then the NumPy path's, bit for bit.

Float sums add in NumPy's pairwise order (8 accumulators over blocks of 128, halving
above), so a fused ``sum`` over trailing axes equals NumPy's on contiguous data; other
reductions add sequentially (exact for integers, max and min).

Switches: ``FUNCGRAD_CPU_FUSION=0`` in the environment or
``funcgrad.config.update("funcgrad_cpu_fusion", False)`` turn it off;
``funcgrad_cpu_fusion_min_size`` sets the size threshold. Both apply to programs
compiled afterwards.

>>> import numpy as np
>>> import funcgrad as fg
>>> cj = fg.make_jaxpr(lambda x: fg.numpy.tanh(x * 2.0) + 1.0)(np.ones(3, np.float32))
>>> src = fused_kernel_source(cj, min_size=0)
>>> src is None or "u1(" in src  # None without numba; else tanh is NumPy's, per block
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.backends.fusion import FusedStep, plan_jaxpr
from funcgrad.config import config
from funcgrad.ir import Atom, ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from funcgrad.numba_switch import enabled, numba_module

DEFAULT_MIN_SIZE = 1 << 16
"""Clusters smaller than this stay NumPy code: numba compiles a kernel in 0.1-1 s."""

BLOCK = 16384
"""Elements per block when a cluster mixes numba loops and NumPy's SIMD ufuncs."""

# NumPy runs these with SIMD code (several times faster than numba's scalar libm calls).
VECTOR_UFUNCS = frozenset({
    "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "cbrt",
    "arctan2", "power"})


_numba = numba_module


def min_size() -> int:
    """The smallest cluster (in elements of its iteration shape) that gets a kernel."""
    value = config.read("funcgrad_cpu_fusion_min_size")
    return DEFAULT_MIN_SIZE if value is None else int(value)


def _scalar_type(dtype: Any) -> str:
    return f"np.{np.dtype(dtype).name}" if np.dtype(dtype).kind != "b" else "np.bool_"


def py_expression(eqn: Eqn, args: list[str]) -> str | None:
    """The scalar Python expression of an elementwise equation (its primitive's
    ``py_scalar``), cast to its result type, or None when it has none for these dtypes."""
    code = eqn.primitive.py_scalar
    t = _scalar_type(eqn.outputs[0].aval.dtype)
    if callable(code):
        text = code(eqn, args, t)
    elif isinstance(code, str):
        text = code.format(*args, T=t)
    else:
        return None
    # numba widens small integers (int32 + int32 is int64): the cast keeps the dtype.
    return None if text is None else f"{t}({text})"


def _cpu_fusable(eqn: Eqn) -> bool:
    if eqn.primitive.fusion == "reduction":
        return isinstance(eqn.primitive.py_scalar, str)
    dummy = [f"x{i}" for i in range(len(eqn.inputs))]
    return py_expression(eqn, dummy) is not None


def _literal(value: Any, dtype: Any) -> str:
    v = np.asarray(value, dtype).item()
    if isinstance(v, bool):
        return "True" if v else "False"
    t = _scalar_type(dtype)
    if isinstance(v, float):
        if math.isnan(v):
            return f"{t}(np.nan)"
        if math.isinf(v):
            return f"{t}({'-' if v < 0 else ''}np.inf)"
        return f"{t}({v!r})"
    return f"{t}({int(v)})"


class FusedCall:
    """The stand-in primitive of a fused cluster's equation: ``impl`` runs the kernel."""

    # What the code generators ask of an equation's primitive: a plain call, no ufunc.
    multiple_results = True
    call_like = False
    effectful = False
    ufunc = None
    fusion = None
    inline_param = None
    lowering = None
    # Its results are new memory (or a dying buffer handed over with ``outs=``), never a
    # view of an operand.
    fresh_results = True

    def __init__(self, name: str, run: Callable[..., list[Any]], source: str,
                 aliasable: dict[int, tuple[int, ...]] | None = None) -> None:
        self.name = name
        self.run = run
        self.source = source
        # Per output, the inputs whose buffer it may be written into (``outs=``): read at
        # the same element only, before it is written (one loop, no blocks).
        self.aliasable = aliasable or {}

    def impl(self, xp: Any, *args: Any, outs: Any = None) -> list[Any]:
        return self.run(*args) if outs is None else self.run(*args, outs=outs)

    def __repr__(self) -> str:
        return self.name


_KERNELS: dict[str, Callable[..., list[Any]] | None] = {}
"""Compiled kernels by their generated source (None: numba could not compile it)."""

STATS = {"compiled": 0, "reused": 0, "failed": 0}


def _signature(numba: Any, kinds: list[tuple[str, Any, int]]) -> tuple[Any, ...]:
    out = []
    for kind, dtype, ndim in kinds:
        t = numba.from_dtype(np.dtype(dtype))
        if kind == "int":
            out.append(numba.int64)
        elif kind == "scalar":
            out.append(t)
        else:
            out.append(numba.types.Array(t, ndim, "C"))
    return tuple(out)


def _schedule(eqns: list[Eqn], vector: set[int]) -> list[tuple[str, list[Eqn]]]:
    """Order a cluster's equations as alternating numba segments and NumPy ufunc calls,
    running every ready scalar equation before the next ufunc (fewer segments)."""
    produced = {v for e in eqns for v in e.outputs}
    done: set[Var] = set()
    remaining = list(range(len(eqns)))
    plan: list[tuple[str, list[Eqn]]] = []

    def ready(e: Eqn) -> bool:
        return all(not isinstance(a, Var) or a not in produced or a in done
                   for a in e.inputs)

    while remaining:
        seg: list[Eqn] = []
        progress = True
        while progress:
            progress = False
            for k in list(remaining):
                if k not in vector and ready(eqns[k]):
                    seg.append(eqns[k])
                    done.update(eqns[k].outputs)
                    remaining.remove(k)
                    progress = True
        if seg:
            plan.append(("numba", seg))
        for k in remaining:
            if k in vector and ready(eqns[k]):
                plan.append(("ufunc", [eqns[k]]))
                done.update(eqns[k].outputs)
                remaining.remove(k)
                break
    return plan


def _elementwise_source(step: FusedStep) -> tuple[
        str, dict[str, list[tuple[str, Any, int]]], dict[str, Any],
        dict[int, tuple[int, ...]]] | None:
    """(source, {segment: argument kinds}, extra names, the inputs each output may be
    written into) of an elementwise cluster."""
    shape, size, nd = step.shape, math.prod(step.shape), len(step.shape)
    eqns = [e for e in step.eqns if e not in _broadcast_eqns(step)]
    in_pos = {v: k for k, v in enumerate(step.inputs)}

    def operand(a: Atom) -> tuple[Atom, tuple[int, ...] | None]:
        """What is read for ``a``: itself, or a broadcast's operand and its dimensions."""
        if isinstance(a, Var) and a in step.broadcasts:
            src, dims = step.broadcasts[a]
            return src, tuple(dims)
        return a, None

    # Which equations run as NumPy ufuncs per block: float SIMD functions whose operands
    # are whole values (not broadcasts, which only the loops read).
    vector: set[int] = set()
    for k, e in enumerate(eqns):
        if e.primitive.ufunc in VECTOR_UFUNCS and e.outputs[0].aval.dtype.kind == "f" and \
                e.outputs[0].aval.dtype == e.inputs[0].aval.dtype and \
                all(operand(a)[1] is None and (isinstance(a, Literal) or a.aval.ndim in (0, nd))
                    for a in e.inputs):
            vector.add(k)
    plan = _schedule(eqns, vector)
    blocked = any(kind == "ufunc" for kind, _ in plan)
    read_broadcast = {id(src) for src, _ in step.broadcasts.values()}
    alias_ins = tuple(k for k, v in enumerate(step.inputs)
                      if v.aval.shape == shape and id(v) not in read_broadcast)
    aliasable = {k: tuple(i for i in alias_ins if step.inputs[i].aval.dtype == v.aval.dtype)
                 for k, v in enumerate(step.outputs)} if len(plan) == 1 and not blocked else {}
    # Values that live across steps: cluster outputs (full arrays) and block buffers.
    step_of: dict[Var, int] = {}
    for q, (_, seq) in enumerate(plan):
        for e in seq:
            for v in e.outputs:
                step_of[v] = q
    crossing: set[Var] = set()
    for q, (_, seq) in enumerate(plan):
        for e in seq:
            for a in e.inputs:
                src, _dims = operand(a)
                for w in (a, src):
                    if isinstance(w, Var) and w in step_of and step_of[w] != q:
                        crossing.add(w)
    outputs = list(step.outputs)
    if any(v in step.broadcasts for v in outputs):
        return None  # a materialised broadcast: left to NumPy
    out_name = {v: f"o{k}" for k, v in enumerate(outputs)}
    buf_name: dict[Var, str] = {}
    for v in sorted(crossing - set(outputs), key=lambda v: step_of[v]):
        buf_name[v] = f"b{len(buf_name)}"

    driver = [f"def run({''.join(f'a{k}, ' for k in range(len(step.inputs)))}outs=None):"]
    driver.extend(_input_lines(step, shape))
    for k, (v, name) in enumerate(out_name.items()):
        # Allocated in its own shape, flattened for the loops: the result owns its memory
        # (not a view), so a later donation of it can be written in place.
        alloc = f"np.empty({v.aval.shape!r}, {_scalar_type(v.aval.dtype)})"
        if aliasable.get(k):
            alloc = f"{alloc} if outs is None or outs[{k}] is None else outs[{k}]"
        driver.append(f"    {name}_whole = {alloc}")
        driver.append(f"    {name} = {name}_whole.reshape(-1)")
    # One block covers a cluster of up to BLOCK elements: its loops and ufuncs then take
    # the whole flat arrays (no slice per operand and call, a few us in a loop body).
    whole = not blocked or size <= BLOCK
    for v, name in buf_name.items():
        driver.append(f"    {name} = np.empty({size if whole else BLOCK}, "
                      f"{_scalar_type(v.aval.dtype)})")
    if not whole:
        driver.append(f"    for s in range(0, {size}, {BLOCK}):")
        driver.append(f"        e = min(s + {BLOCK}, {size})")
        driver.append("        n = e - s")
        ind = "        "
    else:
        driver.append(f"    s, e, n = 0, {size}, {size}")
        ind = "    "

    def flat(v: Var) -> str:
        """The block slice of a whole value the driver holds (input, output, buffer)."""
        if v in in_pos:
            return f"f{in_pos[v]}" if whole else f"f{in_pos[v]}[s:e]"
        if v in out_name:
            return out_name[v] if whole else f"{out_name[v]}[s:e]"
        return buf_name[v] if whole else f"{buf_name[v]}[:n]"

    funcs: list[str] = []
    sigs: dict[str, list[tuple[str, Any, int]]] = {}
    names: dict[str, Any] = {}
    for q, (kind, seq) in enumerate(plan):
        if kind == "ufunc":
            e = seq[0]
            args = []
            for a in e.inputs:
                if isinstance(a, Literal):
                    lit = f"k{len(names)}"
                    names[lit] = np.asarray(a.val, a.aval.dtype)[()]
                    args.append(lit)
                elif a.aval.ndim == 0:
                    args.append(f"s{in_pos[a]}" if a in in_pos else "None")
                else:
                    args.append(flat(a))
            if "None" in args:
                return None
            names[f"u{q}"] = getattr(np, e.primitive.ufunc)
            driver.append(f"{ind}u{q}({', '.join(args)}, out={flat(e.outputs[0])})")
            continue
        seg = _Segment(shape, in_pos, flat)
        try:
            for e in seq:
                args = [seg.read(*operand(a)) for a in e.inputs]
                expr = py_expression(e, args)
                if expr is None:
                    return None
                seg.assign(e.outputs[0], expr)
        except _Unsupported:
            return None
        for e in seq:
            v = e.outputs[0]
            if v in out_name or v in buf_name:
                seg.write(v)
        fname = f"seg{q}"
        funcs.append(seg.source(fname))
        sigs[fname] = [("int", None, 0), ("int", None, 0)] + [
            (kind, dt, ndim) for _, kind, dt, ndim in seg.params]
        driver.append(f"{ind}{fname}(s, n{''.join(', ' + p[0] for p in seg.params)})")
    driver.append("    return [" + ", ".join(f"{out_name[v]}_whole" for v in outputs) + "]")
    return ("\n\n".join(funcs) + "\n\n" + "\n".join(driver) + "\n", sigs, names,
            {k: v for k, v in aliasable.items() if v})


class _Segment:
    """One numba loop ``for j in range(n)`` over a block: its parameters (what the driver
    passes), the loads at the top of the body, the scalar code and the stores."""

    def __init__(self, shape: tuple[int, ...], in_pos: dict[Var, int],
                 flat: Callable[[Var], str], index: str = "j") -> None:
        self.shape = shape
        self.index = index
        self.in_pos = in_pos
        self.flat = flat
        self.params: list[tuple[str, str, Any, int]] = []  # (driver expr, kind, dtype, ndim)
        self._param_names: dict[str, str] = {}
        self.loads: dict[str, str] = {}  # expression -> local name
        self.local: dict[Var, str] = {}
        self.body: list[str] = []
        self.need_index = False

    def param(self, driver_expr: str, kind: str, dtype: Any, ndim: int) -> str:
        if driver_expr not in self._param_names:
            self._param_names[driver_expr] = f"p{len(self.params)}"
            self.params.append((driver_expr, kind, dtype, ndim))
        return self._param_names[driver_expr]

    def read(self, src: Atom, dims: tuple[int, ...] | None) -> str:
        """The scalar for ``src`` at this element (read through ``dims`` if broadcast)."""
        if isinstance(src, Literal):
            return _literal(src.val, src.aval.dtype)
        if dims is None and src in self.local:
            return self.local[src]
        if src.aval.ndim == 0:
            if src not in self.in_pos:
                raise _Unsupported  # a rank-0 value computed in the cluster
            return self.param(f"s{self.in_pos[src]}", "scalar", src.aval.dtype, 0)
        if dims is None:
            expr = f"{self.param(self.flat(src), 'array', src.aval.dtype, 1)}[{self.index}]"
        else:
            if src not in self.in_pos:
                raise _Unsupported  # a broadcast of a value computed in the cluster
            arr = self.param(f"a{self.in_pos[src]}", "array", src.aval.dtype, src.aval.ndim)
            expr = _decoded(arr, src, dims, self.shape)
            self.need_index = True
        if expr not in self.loads:
            self.loads[expr] = f"r{len(self.loads)}"
        return self.loads[expr]

    def assign(self, v: Var, expr: str) -> None:
        self.local[v] = f"v{len(self.body)}"
        self.body.append(f"{self.local[v]} = {expr}")

    def write(self, v: Var) -> None:
        arr = self.param(self.flat(v), "array", v.aval.dtype, 1)
        self.body.append(f"{arr}[{self.index}] = {self.local[v]}")

    def arguments(self) -> str:
        return "".join(", " + p for p in self._param_names.values())

    def lines(self, start: str) -> list[str]:
        """The body for the element at flat index ``start`` of the iteration shape."""
        lines = []
        if self.need_index:
            lines.append(f"t = {start}")
            for d in reversed(range(len(self.shape))):
                lines.append(f"i{d} = t % {self.shape[d]}")
                lines.append(f"t //= {self.shape[d]}")
        lines += [f"{name_} = {expr}" for expr, name_ in self.loads.items()]
        return lines + self.body

    def source(self, name: str) -> str:
        return "\n".join([f"def {name}(s, n{self.arguments()}):", "    for j in range(n):"]
                         + [f"        {line}" for line in self.lines("s + j")])


class _Unsupported(Exception):
    """A read the generated loops do not handle (the cluster stays NumPy code)."""


def _decoded(arr: str, operand: Var, dims: tuple[int, ...], shape: tuple[int, ...]) -> str:
    idx = ["0" if operand.aval.shape[j] == 1 and shape[ax] != 1 else f"i{ax}"
           for j, ax in enumerate(dims)]
    return f"{arr}[{', '.join(idx)}]"


def _broadcast_eqns(step: FusedStep) -> set[Eqn]:
    return {e for e in step.eqns if e.outputs and e.outputs[0] in step.broadcasts}


def _reduction_source(step: FusedStep) -> tuple[str, dict[str, list[tuple[str, Any, int]]],
                                                 dict[str, Any]] | None:
    """A reduction with its elementwise prologue: one loop per output element, summing
    floats in NumPy's pairwise order."""
    red = step.reduction
    assert red is not None
    shape, nd = step.shape, len(step.shape)
    axes = tuple(sorted(red.params["axes"]))
    if axes != tuple(range(nd - len(axes), nd)):
        return None  # reduced axes not trailing: NumPy's order is not one loop's
    n_red = math.prod(shape[nd - len(axes):])
    n_out = math.prod(shape[:nd - len(axes)])
    if n_red == 0 or n_out == 0:
        return None
    eqns = [e for e in step.eqns if e not in _broadcast_eqns(step)]
    if any(e.primitive.ufunc in VECTOR_UFUNCS for e in eqns):
        return None  # scalar libm calls would lose to NumPy's SIMD loops
    in_pos = {v: k for k, v in enumerate(step.inputs)}
    seg = _Segment(shape, in_pos, lambda v: f"f{in_pos[v]}", index="g")

    def operand(a: Atom) -> tuple[Atom, tuple[int, ...] | None]:
        if isinstance(a, Var) and a in step.broadcasts:
            src, dims = step.broadcasts[a]
            return src, tuple(dims)
        return a, None

    try:
        for e in eqns:
            expr = py_expression(e, [seg.read(*operand(a)) for a in e.inputs])
            if expr is None:
                return None
            seg.assign(e.outputs[0], expr)
        value = seg.read(*operand(red.inputs[0]))
    except _Unsupported:
        return None
    out = red.outputs[0]
    t = _scalar_type(out.aval.dtype)
    combine = f"{t}({red.primitive.py_scalar.format('acc', 'val(g' + seg.arguments() + ')')})"
    args = seg.arguments()
    funcs = ["def val(g" + args + "):\n" + "".join(f"    {line}\n" for line in seg.lines("g"))
             + f"    return {value}"]
    if red.primitive.name == "reduce_sum" and out.aval.dtype.kind == "f":
        funcs.append(_PAIRWISE.format(T=t, args=args))
        first = f"{t}(0) + pw(o * {n_red}, {n_red}{args})"
    else:
        funcs.append(f"def seq(base, n{args}):\n    acc = val(base{args})\n"
                     f"    for g in range(base + 1, base + n):\n        acc = {combine}\n"
                     "    return acc")
        first = f"seq(o * {n_red}, {n_red}{args})"
    funcs.append(f"def red({args[2:]}):\n    out = np.empty({n_out}, {t})\n"
                 f"    for o in range({n_out}):\n        out[o] = {first}\n    return out")
    driver = [f"def run({', '.join(f'a{k}' for k in range(len(step.inputs)))}):"]
    driver.extend(_input_lines(step, shape))
    driver.append(f"    return [red({', '.join(p[0] for p in seg.params)})"
                  f".reshape({out.aval.shape!r})]")
    sigs: dict[str, list[tuple[str, Any, int]] | None] = {"val": None, "pw": None, "seq": None}
    sigs["red"] = [(kind, dt, ndim) for _, kind, dt, ndim in seg.params]
    return "\n\n".join(funcs) + "\n\n" + "\n".join(driver) + "\n", sigs, {}  # type: ignore[return-value]


# NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src), over val(g).
_PAIRWISE = """def pw(base, n{args}):
    if n < 8:
        res = {T}(0)
        for g in range(base, base + n):
            res += val(g{args})
        return res
    if n <= 128:
        r0 = val(base{args})
        r1 = val(base + 1{args})
        r2 = val(base + 2{args})
        r3 = val(base + 3{args})
        r4 = val(base + 4{args})
        r5 = val(base + 5{args})
        r6 = val(base + 6{args})
        r7 = val(base + 7{args})
        i = 8
        while i < n - n % 8:
            g = base + i
            r0 += val(g{args})
            r1 += val(g + 1{args})
            r2 += val(g + 2{args})
            r3 += val(g + 3{args})
            r4 += val(g + 4{args})
            r5 += val(g + 5{args})
            r6 += val(g + 6{args})
            r7 += val(g + 7{args})
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += val(base + i{args})
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return pw(base, n2{args}) + pw(base + n2, n - n2{args})"""

OPTIONS = {"cache": False, "fastmath": False, "nogil": True, "error_model": "numpy",
           "boundscheck": False}
"""numba's compile options: IEEE arithmetic, NumPy's integer division by zero (0)."""


def _compile(source: str, sigs: dict[str, Any], names: dict[str, Any]
             ) -> Callable[..., list[Any]] | None:
    numba = _numba()
    namespace: dict[str, Any] = {"np": np, "math": math, **names}
    exec(compile(source, "<funcgrad-cpu-fusion>", "exec"), namespace)  # noqa: S102
    try:
        # Helpers first (compiled with their callers), then the entry loops, compiled now
        # for C-contiguous arrays so that a failure is seen here, not at run time.
        for fname, kinds in sigs.items():
            if kinds is None and fname in namespace:
                namespace[fname] = numba.njit(**OPTIONS)(namespace[fname])
        for fname, kinds in sigs.items():
            if kinds is not None:
                namespace[fname] = numba.njit(_signature(numba, kinds), **OPTIONS)(
                    namespace[fname])
    except Exception:  # noqa: BLE001 - any numba failure means: run the NumPy code
        return None
    # Named as a funcgrad module once compiled (numba resolves names through ``__name__``):
    # NumPy's warnings raised in the driver are then attributed to funcgrad.
    namespace["__name__"] = "funcgrad.backends.generated"
    run: Callable[..., list[Any]] = namespace["run"]
    return run


def _input_lines(step: FusedStep, shape: tuple[int, ...]) -> list[str]:
    """The driver's lines that ready its inputs: 0-d ones as scalars (``s{k}``), the others
    contiguous, and flat views (``f{k}``) of those of the cluster's full shape."""
    lines = []
    read_broadcast = {id(src) for src, _ in step.broadcasts.values()}
    for k, v in enumerate(step.inputs):
        if v.aval.ndim == 0:
            lines.append(f"    s{k} = a{k}[()]")
        elif v.aval.shape == shape and id(v) not in read_broadcast:
            # One call: a view when the input is contiguous, else a C-ordered copy.
            lines.append(f"    f{k} = a{k}.ravel()")
        else:
            lines.append(f"    a{k} = np.ascontiguousarray(a{k})")
            if v.aval.shape == shape:
                lines.append(f"    f{k} = a{k}.reshape(-1)")
    return lines


def _operation_count(step: FusedStep) -> int:
    return len(step.eqns) - len(step.broadcasts) + (step.reduction is not None)


def kernel_for(step: FusedStep, threshold: int = 0) -> FusedCall | None:
    """The compiled kernel of one planned cluster, or None where it stays NumPy code (too
    small, a single operation, or something the generated loops or numba do not handle)."""
    size = math.prod(step.shape)
    if size == 0 or size < threshold or _operation_count(step) < 2 or not step.shape:
        return None
    if _operation_count(step) - sum(e.primitive.ufunc in VECTOR_UFUNCS for e in step.eqns) < 2:
        # At most one operation the loop itself would compute: NumPy's own passes (SIMD for
        # the transcendental ones) are as fast without a kernel (softmax's x - max, exp).
        return None
    aliasable: dict[int, tuple[int, ...]] = {}
    if step.reduction is not None:
        made = _reduction_source(step)
    else:
        elementwise = _elementwise_source(step)
        made = None if elementwise is None else elementwise[:3]
        aliasable = {} if elementwise is None else elementwise[3]
    if made is None:
        return None
    source, sigs, names = made
    key = source + repr(sorted((k, repr(v)) for k, v in names.items()))
    if key in _KERNELS:
        STATS["reused"] += 1
        run = _KERNELS[key]
    else:
        run = _compile(source, sigs, names)
        _KERNELS[key] = run
        STATS["compiled" if run is not None else "failed"] += 1
    return None if run is None else FusedCall(f"cpu_fused_{step.kind}", run, source,
                                              aliasable)


def fuse_jaxpr(closed: ClosedJaxpr, threshold: int | None = None) -> ClosedJaxpr:
    """``closed`` with each cluster worth compiling replaced by one equation that calls its
    numba kernel (``closed`` itself when none is, or when CPU fusion is off)."""
    if not enabled():
        return closed
    limit = min_size() if threshold is None else threshold
    plan = plan_jaxpr(closed, _cpu_fusable)
    eqns: list[Eqn] = []
    fused = False
    for step in plan.steps:
        if not isinstance(step, FusedStep):
            eqns.append(step.eqn)
            continue
        call = kernel_for(step, limit)
        if call is None:
            eqns.extend(step.eqns)
            if step.reduction is not None:
                eqns.append(step.reduction)
            continue
        outs = [step.reduction.outputs[0]] if step.reduction is not None else step.outputs
        eqns.append(Eqn(call, step.inputs, {}, outs))
        fused = True
    if not fused:
        return closed
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.invars, j.outvars, eqns, j.constvars), closed.consts)


def fused_kernel_source(closed: ClosedJaxpr, min_size: int | None = None) -> str | None:
    """The generated source of the CPU kernels of ``closed`` (None: nothing is fused).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> cj = fg.make_jaxpr(lambda x: x * 2.0 + 1.0)(np.ones(3, np.float32))
    >>> src = fused_kernel_source(cj, min_size=0)
    >>> src is None or "def seg0" in src
    True
    """
    sources = [e.primitive.source for e in fuse_jaxpr(closed, min_size).eqns
               if isinstance(e.primitive, FusedCall)]
    return "\n\n".join(sources) if sources else None


__all__ = ["FusedCall", "enabled", "fuse_jaxpr", "fused_kernel_source", "kernel_for",
           "min_size", "py_expression"]
