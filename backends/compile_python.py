"""Compile a jaxpr to straight-line Python over an array module.

Each equation becomes one call of its primitive's ``impl`` with the params
bound as constants; equations whose results are never used are dropped (unless they
have side effects: ``funcgrad.ir.has_effects``), and equal equations on equal inputs
are computed once (effectful ones excepted). The generated source can
be read with ``.source``.

Control flow compiles too: the jaxprs of ``cond``/``switch`` branches, ``while`` and
``scan`` bodies and nested ``jit`` calls are compiled by this same function (once per
jaxpr object, see :func:`subprogram`), and the generated code calls them directly from a
Python ``if``/``while``/``for``, so a loop runs no interpreter between its steps.

>>> import numpy as np
>>> import funcgrad as fg
>>> from funcgrad.backends.compile_python import compile_jaxpr
>>> run = compile_jaxpr(fg.make_jaxpr(lambda x: x * 2.0 + 1.0)(np.ones(2)), np)
>>> run(np.ones(2))
[array([3., 3.])]
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Collection, Sequence
from typing import Any

from funcgrad.ir import (
    Atom,
    ClosedJaxpr,
    Eqn,
    Jaxpr,
    Literal,
    ShapedArray,
    Var,
    has_effects,
    live_equations,
    use_counts,
)


class CompiledPython:
    """A callable made from generated Python source. ``source`` lists the program, then
    the programs of its bodies and branches (``# s3: body of while``), which its code
    calls by those names. ``donated_used`` lists the donated inputs the program writes
    into (or returns as they are): their caller must give it buffers nobody else sees."""

    def __init__(self, fn: Callable[..., list[Any]], source: str,
                 bodies: dict[str, tuple[str, CompiledPython]] | None = None,
                 donated_used: tuple[int, ...] = (),
                 aliasing_inputs: tuple[int, ...] | None = None) -> None:
        self.fn = fn
        self.donated_used = donated_used
        # The inputs an output may share memory with (None: any of them).
        self.aliasing_inputs = aliasing_inputs
        self.bodies = dict(bodies or {})
        self.source: str = "\n\n".join([source, *(f"# {name}: {what}\n{body.source}"
                                                  for name, (what, body) in self.bodies.items())])

    def __call__(self, *args: Any) -> list[Any]:
        return self.fn(*args)


# Primitives whose impl always returns new memory (never a view of an operand).
_FRESH_RESULTS = frozenset({"dot_general"})

_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def _ufunc_name(eqn: Any) -> str | None:
    """The NumPy ufunc to call directly for ``eqn`` (see :func:`exact_ufunc`)."""
    return exact_ufunc(eqn.primitive, [a.aval for a in (*eqn.inputs, *eqn.outputs)])


def exact_ufunc(prim: Any, avals: Sequence[ShapedArray]) -> str | None:
    """The NumPy ufunc to call instead of ``prim``'s impl (its ``ufunc``) on operands and
    results of ``avals``, when the call is exact for these dtypes: floating point operands
    (comparisons give bools). Also the eager fast paths' (funcgrad.transforms.reverse)."""
    name = prim.ufunc
    if name is None or name in ("round", "isfinite", "bitwise_and", "bitwise_or",
                                "bitwise_xor", "remainder", "power"):
        return None
    if any(a.dtype.kind not in "fc" for a in avals
           if a.dtype.kind != "b" or name not in _COMPARISONS):
        return None
    if name in ("maximum", "minimum") and any(a.dtype.kind == "c" for a in avals):
        return None  # XLA's complex max/min: no NaN propagation (the primitive's impl)
    return name


def compile_jaxpr(closed: ClosedJaxpr, xp: Any, donate: Collection[int] = (),
                  fusion_threshold: int | None = None, rewrite: bool = True) -> CompiledPython:
    """Generate and compile ``def run(*invars): ...`` for ``closed`` over ``xp``.

    ``donate`` lists inputs whose buffers the program may overwrite: an elementwise
    result of the same shape and dtype is written into such an input at its last use
    (``jit(donate_argnums=...)``, which hands over buffers only funcgrad holds).
    ``fusion_threshold``: the smallest cluster CPU fusion compiles (default: the
    ``funcgrad_cpu_fusion_min_size`` setting). ``rewrite=False`` keeps the equations as they
    are (no matrix product rewrites, no fusion): the impl calls eager evaluation makes."""
    if rewrite:
        closed = transposed_products(hoisted_accumulations(closed))
    if rewrite and getattr(xp, "__name__", None) == "numpy":
        # CPU fusion (numba, when installed): fused clusters become calls of compiled loops.
        from funcgrad.backends.numba_fusion import fuse_jaxpr  # noqa: PLC0415

        closed = fuse_jaxpr(closed, fusion_threshold)
    jaxpr = closed.jaxpr
    names: dict[Var, str] = {}
    consts: dict[str, Any] = {"xp": xp}
    for i, (v, c) in enumerate(zip(jaxpr.constvars, closed.consts)):
        names[v] = f"c{i}"
        consts[f"c{i}"] = c
    args = []
    for i, v in enumerate(jaxpr.invars):
        names[v] = f"a{i}"
        args.append(f"a{i}")
    seen: dict[tuple[Any, ...], list[str]] = {}
    bodies: dict[str, tuple[str, CompiledPython]] = {}
    literal_names: dict[tuple[Any, ...], str] = {}

    def atom(a: Any) -> str:
        if isinstance(a, Literal):
            # One name per literal value, so equal equations on equal literals merge.
            lkey = (type(a.val), repr(a.val), str(a.aval.dtype))
            if lkey not in literal_names:
                literal_names[lkey] = f"k{len(consts)}"
                # Typed as the jaxpr says: a Python 2.0 stands for a float32 0-d array.
                consts[literal_names[lkey]] = xp.asarray(a.val, dtype=a.aval.dtype)
            return literal_names[lkey]
        return names[a]

    # Pass 1: names, common subexpressions merged, equations of constants evaluated now
    # (folded), one entry per emitted equation.
    emitted: list[tuple[Any, list[str], list[str]]] = []
    n = 0
    program_outs = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in live_equations(jaxpr):
        ins = [atom(a) for a in eqn.inputs]
        folded = _fold(eqn, ins, consts, xp, program_outs)
        if folded is not None:
            for v, value in zip(eqn.outputs, folded):
                names[v] = f"f{n}"
                consts[f"f{n}"] = value
                n += 1
            continue
        cse_key = (eqn.primitive, tuple(ins), eqn.params) \
            if not eqn.primitive.call_like and not has_effects(eqn) else None
        if cse_key is not None and cse_key in seen:
            for v, name in zip(eqn.outputs, seen[cse_key]):
                names[v] = name
            continue
        outs = []
        for v in eqn.outputs:
            names[v] = f"v{n}"
            outs.append(f"v{n}")
            n += 1
        if cse_key is not None:
            seen[cse_key] = outs
        emitted.append((eqn, ins, outs))
    out_names = [atom(a) for a in jaxpr.outvars]

    # Pass 2: where a fresh buffer dies at a ufunc of its shape and dtype, write into it.
    # A buffer dies when no name that may alias it (a view some other operation made of
    # it) is used later.
    last_use: dict[str, int] = {}
    for k, (_, ins, _) in enumerate(emitted):
        for name in ins:
            last_use[name] = k
    for name in out_names:
        last_use[name] = len(emitted)
    # Names that hold a buffer the program may write: name -> that buffer's first name.
    root: dict[str, str] = {f"a{i}": f"a{i}" for i in donate}
    # Per buffer, every name that may alias it; per name, the buffers it may alias.
    aliases: dict[str, list[str]] = {r: [r] for r in root}
    roots_of: dict[str, set[str]] = {r: {r} for r in root}
    shared: set[str] = set()
    written: set[int] = set()

    def may_alias(ins: Sequence[str], outs: Sequence[str]) -> None:
        union = set().union(*(roots_of.get(i, ()) for i in ins))
        for o in outs:
            roots_of[o] = union
            for r in union:
                aliases[r].append(o)

    def dead_after(name: str, k: int) -> bool:
        return all(last_use.get(m, -1) <= k for m in aliases[root[name]])
    lines = [f"def run({', '.join(args)}):"]
    for k, (eqn, ins, outs) in enumerate(emitted):
        prim = eqn.primitive
        ufunc = _ufunc_name(eqn)
        target = ", ".join(outs) + ("," if len(outs) == 1 and prim.multiple_results else "")
        if prim.lowering is not None and not prim.lowering(**eqn.params):
            continue
        emit = _STRUCTURED.get(prim.name)
        if emit is not None:
            block = emit(eqn, ins, outs, xp, consts, bodies, f"s{k}", last_use)
            # Its results may be its operands (a loop that ran no step): never reuse either.
            shared.update(ins)
            shared.update(outs)
            may_alias(ins, outs)
            lines.extend(f"    {line}" for line in block)
            continue
        if ufunc is None:
            # Anything else may return views of its inputs: those buffers live on in them.
            into = _fused_targets(eqn, ins, outs, root, shared, dead_after, k)
            if into:
                # A fused kernel writing an output into a dying buffer of an input.
                for m, name in into.items():
                    r = root[name]
                    if r[0] == "a":
                        written.add(int(r[1:]))
                    root[outs[m]] = r
                    roots_of[outs[m]] = {r}
                    aliases[r].append(outs[m])
            elif prim.name not in _FRESH_RESULTS:
                may_alias(ins, outs)
            if has_effects(eqn) or "callback" in prim.name:
                shared.update(ins)  # a callback may keep what it is given
            fn_name = f"p{k}"
            # A partial calls the impl from C: no Python frame per equation.
            consts[fn_name] = functools.partial(prim.impl, xp, **eqn.params)
            targets = ", ".join(into.get(m, "None") for m in range(len(outs)))
            extra = f", outs=({targets},)" if into else ""
            call = f"{fn_name}({', '.join(ins)}{extra})"
            # An equation without outputs (an effect, e.g. debug_callback) is a bare call.
            lines.append(f"    {target} = {call}" if outs else f"    {call}")
            continue
        consts[f"u_{ufunc}"] = getattr(xp, ufunc)
        out_aval = eqn.outputs[0].aval
        fits = [name for name, a in zip(ins, eqn.inputs)
                if name in root and name not in shared and dead_after(name, k)
                and isinstance(a, Var) and a.aval.shape == out_aval.shape
                and a.aval.dtype == out_aval.dtype and out_aval.shape != ()]
        # A donated buffer first: using it is what the caller gave it up for.
        reuse = next((name for name in fits if root[name][0] == "a"),
                     fits[0] if fits else None)
        extra = f", out={reuse}" if reuse is not None else ""
        if reuse is not None:
            r = root[reuse]
            if r[0] == "a":
                written.add(int(r[1:]))
            for o in outs:
                root[o] = r
                roots_of[o] = {r}
                aliases[r].append(o)
        elif out_aval.shape != () and len(outs) == 1:
            root[outs[0]] = outs[0]
            aliases[outs[0]] = [outs[0]]
            roots_of[outs[0]] = {outs[0]}
        lines.append(f"    {target} = u_{ufunc}({', '.join(ins)}{extra})")
    # Outputs are always arrays (NumPy reductions can hand back NumPy scalars).
    consts["asarray"] = xp.asarray
    lines.append(f"    return [{', '.join(f'asarray({o})' for o in out_names)}]")
    source = "\n".join(lines)
    # Named as a funcgrad module: warnings raised in it are attributed to funcgrad.
    namespace: dict[str, Any] = {**consts, "__name__": "funcgrad.backends.generated"}
    exec(compile(source, "<funcgrad-jit>", "exec"), namespace)  # noqa: S102
    # The code never calls itself: taking ``run`` out of its own globals leaves no cycle
    # (function -> globals -> function), so a dropped program is freed without the gc.
    run = namespace.pop("run")
    # A donated input returned as it is hands its buffer to the output, as JAX aliases it.
    returned = {int(o[1:]) for o in out_names if o[0] == "a"}
    used = tuple(sorted(i for i in donate if i in written or i in returned))
    return CompiledPython(run, source, bodies, used,
                          _aliasing_inputs(emitted, len(args), out_names))


def _aliasing_inputs(emitted: Sequence[tuple[Any, list[str], list[str]]], n_in: int,
                     out_names: Sequence[str]) -> tuple[int, ...]:
    """The inputs whose memory an output may share: through operations that can return
    views of their operands (a ufunc's or a matrix product's result is new memory). A
    caller that must not let results alias its arrays copies only those."""
    of: dict[str, set[int]] = {f"a{i}": {i} for i in range(n_in)}
    for eqn, ins, outs in emitted:
        src = set().union(*(of.get(i, ()) for i in ins))
        if not src or eqn.primitive.name in _FRESH_RESULTS or getattr(
                eqn.primitive, "fresh_results", False) or (
                _ufunc_name(eqn) is not None and eqn.primitive.name not in _STRUCTURED):
            continue
        for o in outs:
            of[o] = src
    return tuple(sorted(set().union(*(of.get(o, ()) for o in out_names))))


def _fused_targets(eqn: Eqn, ins: Sequence[str], outs: Sequence[str], root: dict[str, str],
                   shared: Collection[str], dead_after: Callable[[str, int], bool], k: int
                   ) -> dict[int, str]:
    """For a fused CPU kernel (``aliasable``: per output, the inputs it may overwrite):
    which outputs to write into which input buffers that die here."""
    into: dict[int, str] = {}
    for m, candidates in getattr(eqn.primitive, "aliasable", {}).items():
        for i in candidates:
            name = ins[i]
            if isinstance(eqn.inputs[i], Var) and name in root and name not in shared \
                    and name not in into.values() and ins.count(name) == 1 \
                    and dead_after(name, k):
                into[m] = name
                break
    return into


# ------------------------------------------------------------------ control flow

_subprograms: weakref.WeakKeyDictionary[ClosedJaxpr, dict[str, CompiledPython]] = \
    weakref.WeakKeyDictionary()


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with its custom_jvp/custom_vjp/checkpoint calls replaced by the equations
    of their functions: their rules matter only to transformations, and a compiled body
    should not run a Python function on every step."""
    for _ in range(8):  # functions may call custom functions in turn
        if not any(e.primitive.inline_param is not None for e in closed.jaxpr.eqns):
            return closed
        from funcgrad.staging import eval_jaxpr, trace_flat  # noqa: PLC0415 - no cycle

        def run(*args: Any, c: ClosedJaxpr = closed) -> list[Any]:
            return eval_jaxpr(c, *args, inline_calls=True)

        closed = trace_flat(run, closed.in_avals)[0]
    return closed


def transposed_products(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with each ``transpose`` of a ``dot_general`` result (its only use) that
    swaps the product's two groups of free axes replaced by the product of the operands
    taken the other way round, which has that layout itself.

    Reverse mode through ``x @ w.T`` transposes the cotangent of ``w.T`` back: as a
    transposed view that the next elementwise kernel (an optimizer's update) must copy
    (1.6 MB per step for a 784 x 512 weight) or read with strides.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> cj = fg.make_jaxpr(lambda a, b: (a @ b).T)(np.ones((2, 3)), np.ones((3, 4)))
    >>> [e.primitive.name for e in transposed_products(cj).jaxpr.eqns]
    ['dot_general']
    """
    jaxpr = closed.jaxpr
    uses = use_counts(jaxpr.eqns)
    outs = {v for v in jaxpr.outvars if isinstance(v, Var)}
    product = {e.outputs[0]: e for e in jaxpr.eqns if e.primitive.name == "dot_general"}
    swapped: dict[Eqn, Eqn] = {}
    dropped: set[Eqn] = set()
    for e in jaxpr.eqns:
        src = e.inputs[0] if e.primitive.name == "transpose" else None
        if not isinstance(src, Var) or src not in product or uses.get(src) != 1 or \
                src in outs:
            continue
        d = product[src]
        (lc, rc), (lb, rb) = d.params["dimension_numbers"]
        nb = len(lb)
        nl = d.inputs[0].aval.ndim - len(lc) - nb
        nr = d.inputs[1].aval.ndim - len(rc) - nb
        perm = (*range(nb), *range(nb + nl, nb + nl + nr), *range(nb, nb + nl))
        if tuple(e.params["permutation"]) != perm:
            continue
        swapped[d] = Eqn(d.primitive, (d.inputs[1], d.inputs[0]),
                         {"dimension_numbers": ((rc, lc), (rb, lb))}, e.outputs, d.source)
        dropped.add(e)  # the transpose: its output is the swapped product's
    if not swapped:
        return closed
    eqns = [swapped.get(e, e) for e in jaxpr.eqns if e not in dropped]
    return ClosedJaxpr(Jaxpr(jaxpr.invars, jaxpr.outvars, eqns, jaxpr.constvars),
                       closed.consts)


def hoisted_accumulations(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with each scan carry that only sums a matrix product per step
    (``acc + dot(p_t, q_t)``, ``p_t`` and ``q_t`` per-step values) computed after the loop
    instead, as ONE product of the stacked ``p`` and ``q`` contracting the step axis too.

    Reverse mode through a scan accumulates a weight's cotangent that way (an RNN's
    ``dW += h_t.T @ dz_t``): 32 products of 32 rows and an add per step cost more than one
    product of 1024 rows (BLAS runs small ones at half speed). The sum's order changes
    (one BLAS contraction instead of step by step), as XLA's own loop rewrites may.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> def f(w, xs, ys):
    ...     return fg.lax.scan(lambda a, xy: (a + xy[0].T @ xy[1], None), w, (xs, ys))[0]
    >>> cj = fg.make_jaxpr(f)(np.zeros((3, 4)), np.ones((5, 2, 3)), np.ones((5, 2, 4)))
    >>> [e.primitive.name for e in hoisted_accumulations(cj).jaxpr.eqns]
    ['scan', 'dot_general', 'add']
    """
    jaxpr = closed.jaxpr
    eqns: list[Eqn] = []
    for e in jaxpr.eqns:
        rewritten = _hoisted_scan(e) if e.primitive.name == "scan" else None
        eqns.extend(rewritten if rewritten is not None else [e])
    if len(eqns) == len(jaxpr.eqns):
        return closed
    return ClosedJaxpr(Jaxpr(jaxpr.invars, jaxpr.outvars, eqns, jaxpr.constvars),
                       closed.consts)


def _hoisted_scan(e: Eqn) -> list[Eqn] | None:
    """The equations replacing the scan ``e`` by :func:`hoisted_accumulations`, or None."""
    p = e.params
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    body = p["jaxpr"].jaxpr
    if length < 2 or any(has_effects(b) for b in body.eqns):
        return None
    carry_in, xs_in = body.invars[nc:nc + ncar], body.invars[nc + ncar:]
    fixed = set(body.invars[:nc + ncar])
    uses = use_counts(body.eqns, body.outvars)
    producer = {v: b for b in body.eqns for v in b.outputs}
    found: dict[int, tuple[Eqn, Eqn]] = {}
    for k in range(ncar):
        acc, out = carry_in[k], body.outvars[k]
        add = producer.get(out) if isinstance(out, Var) else None
        if add is None or add.primitive.name != "add" or uses.get(acc) != 1 or \
                uses.get(out) != 1 or acc not in add.inputs:
            continue
        term = add.inputs[1] if add.inputs[0] is acc else add.inputs[0]
        dot = producer.get(term) if isinstance(term, Var) else None
        if dot is None or dot.primitive.name != "dot_general" or uses.get(term) != 1:
            continue
        (_, _), (lb, _) = dot.params["dimension_numbers"]
        if lb or term.aval.dtype != out.aval.dtype or term.aval.shape != out.aval.shape or \
                any(not isinstance(a, Var) or a in fixed for a in dot.inputs):
            continue
        found[k] = (add, dot)
    if not found:
        return None
    dropped = {b for pair in found.values() for b in pair}
    # The products' operands leave the loop stacked: as the xs they are, as ys the body
    # already returns, or as new ys.
    ys_out = list(body.outvars[ncar:])
    stacked_of: dict[Var, Atom] = {v: e.inputs[nc + ncar + j] for j, v in enumerate(xs_in)}
    new_ys: list[Var] = []
    new_outer: list[Var] = []
    outer_ys = list(e.outputs[ncar:])
    for _add, dot in found.values():
        for a in dot.inputs:
            assert isinstance(a, Var)
            if a in stacked_of:
                continue
            if a in ys_out:
                stacked_of[a] = outer_ys[ys_out.index(a)]
                continue
            new_ys.append(a)
            new_outer.append(Var(ShapedArray((length, *a.aval.shape), a.aval.dtype,
                                             a.aval.weak_type)))
            stacked_of[a] = new_outer[-1]
    keep = [k for k in range(ncar) if k not in found]
    new_body = Jaxpr([*body.invars[:nc], *(carry_in[k] for k in keep), *xs_in],
                     [*(body.outvars[k] for k in keep), *ys_out, *new_ys],
                     [b for b in body.eqns if b not in dropped], body.constvars)
    params = dict(p)
    params.update(jaxpr=ClosedJaxpr(new_body, p["jaxpr"].consts), num_carry=len(keep))
    scan = Eqn(e.primitive, [*e.inputs[:nc], *(e.inputs[nc + k] for k in keep),
                             *e.inputs[nc + ncar:]], params,
               [*(e.outputs[k] for k in keep), *outer_ys, *new_outer], e.source)
    after: list[Eqn] = []
    for k, (add, dot) in found.items():
        (lc, rc), _ = dot.params["dimension_numbers"]
        dims = (((0, *(c + 1 for c in lc)), (0, *(c + 1 for c in rc))), ((), ()))
        total = Var(dot.outputs[0].aval)
        after.append(Eqn(dot.primitive, [stacked_of[a] for a in dot.inputs],  # type: ignore[index]
                         {**dict(dot.params), "dimension_numbers": dims}, [total], dot.source))
        after.append(Eqn(add.primitive, [e.inputs[nc + k], total], add.params,
                         [e.outputs[k]], add.source))
    return [scan, *after]


_FOLD_BYTES = 1 << 16


def _fold(eqn: Eqn, ins: Sequence[str], consts: dict[str, Any], xp: Any,
          returned: Collection[Any]) -> list[Any] | None:
    """The results of ``eqn`` computed once, at compile time, when all its operands are
    constants (literals, closed-over arrays, folded results): a gradient's seeds and zeros
    (``broadcast_in_dim 1.0``), masks and index arithmetic on constants. Not for results the
    program returns (a caller may own and write them), effects, calls, or results that would
    hold more than 64 KiB (a broadcast view holds its operand only); None where not folded."""
    prim = eqn.primitive
    if getattr(xp, "__name__", None) != "numpy" or prim.call_like or has_effects(eqn) or \
            prim.impl is None or "callback" in prim.name or \
            getattr(prim, "places_result", False) or \
            any(v in returned for v in eqn.outputs) or not all(i in consts for i in ins):
        return None
    try:
        out = prim.impl(xp, *(consts[i] for i in ins), **eqn.params)
    except Exception:  # noqa: BLE001 - evaluated as the program runs, errors included
        return None
    outs = list(out) if prim.multiple_results else [out]
    for o in outs:
        if not isinstance(o, xp.ndarray) or (o.nbytes > _FOLD_BYTES and 0 not in o.strides):
            return None
    # Shared by every call: like the closed-over constants, never a buffer the program
    # writes (only fresh results are). Left writable: numba's fused kernels are compiled
    # for writable arrays.
    return outs


LOOP_BODY_FUSION_SIZE = 4096
"""Loop bodies (scan, while) run once per step: clusters from this many elements get a CPU
kernel there (an LSTM step's 32 x 128 gates), its compile time spread over the steps."""


def subprogram(closed: ClosedJaxpr, xp: Any, loop: bool = False) -> CompiledPython:
    """The compiled program of a body, branch or nested call over ``xp``, compiled once per
    jaxpr object (bodies are shared by every program that holds the same jaxpr).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> body = fg.make_jaxpr(lambda x: x * 3.0)(np.ones(2))
    >>> subprogram(body, np)(np.ones(2)), subprogram(body, np) is subprogram(body, np)
    ([array([3., 3.])], True)
    """
    per = _subprograms.setdefault(closed, {})
    key = getattr(xp, "__name__", type(xp).__name__) + (" loop" if loop else "")
    prog = per.get(key)
    if prog is None:
        threshold = None
        if loop:
            from funcgrad.backends.numba_fusion import min_size  # noqa: PLC0415

            threshold = min(min_size(), LOOP_BODY_FUSION_SIZE)
        prog = per[key] = compile_jaxpr(inline_calls(closed), xp,
                                         fusion_threshold=threshold)
    return prog


def _targets(names: Sequence[str]) -> str:
    """An assignment target that unpacks a list of ``len(names)`` values."""
    return ", ".join(names) + "," if names else "()"


def _assign(outs: Sequence[str], call: str) -> list[str]:
    return [f"{_targets(outs)} = {call}" if outs else call]


# Each emitter returns the lines of ``eqn`` (indented relative to the function body), binds
# what they call in ``consts`` under names starting with ``key`` and lists the programs in
# ``bodies``.
_Bodies = dict[str, tuple[str, CompiledPython]]
_Emitter = Callable[[Eqn, list[str], list[str], Any, dict[str, Any], _Bodies, str,
                     Collection[str]], list[str]]


def _laid_out(body: Jaxpr, names: Sequence[str], xp: Any, consts: dict[str, Any],
              key: str) -> list[str]:
    """Lines that lay out, once before a loop, the loop-invariant operands (the body's
    first ``len(names)`` inputs) as the body's equations read them fastest
    (``Primitive.loop_invariant_layout``: e.g. the weight of an RNN step's matrix
    product), bound to ``{key}bl{j}``. Only where every use that cares agrees."""
    if getattr(xp, "__name__", None) != "numpy":
        return []
    wanted: dict[int, Any] = {}
    refused: set[int] = set()
    position = {v: j for j, v in enumerate(body.invars[:len(names)])}
    for eqn in body.eqns:
        for a in eqn.inputs:
            j = position.get(a) if isinstance(a, Var) else None
            if j is None or j in refused:
                continue
            rule = eqn.primitive.loop_invariant_layout
            lay = rule(eqn, a) if rule is not None else None
            if lay is None:
                continue
            if wanted.setdefault(j, lay) is not lay:
                refused.add(j)
    lines = []
    for j, lay in wanted.items():
        if j not in refused:
            consts[f"{key}lay{j}"] = lay
            lines.append(f"{key}bl{j} = {key}lay{j}({names[j]})")
    return lines


def _emit_cond(eqn: Eqn, ins: list[str], outs: list[str], xp: Any, consts: dict[str, Any],
               bodies: _Bodies, key: str, used: Collection[str]) -> list[str]:
    branches = [subprogram(b, xp) for b in eqn.params["branches"]]
    consts[key] = tuple(b.fn for b in branches)
    bodies.update((f"{key}[{j}]", (f"branch {j} of cond", b)) for j, b in enumerate(branches))
    # The index clamped into range, as cond's impl does.
    pick = f"{key}[min(max(int({ins[0]}), 0), {len(branches) - 1})]"
    return _assign(outs, f"{pick}({', '.join(ins[1:])})")


def _emit_while(eqn: Eqn, ins: list[str], outs: list[str], xp: Any, consts: dict[str, Any],
                bodies: _Bodies, key: str, used: Collection[str]) -> list[str]:
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    for name, what, jx in ((f"{key}c", "cond of while", p["cond_jaxpr"]),
                           (f"{key}b", "body of while", p["body_jaxpr"])):
        bodies[name] = (what, subprogram(jx, xp, loop=True))
        consts[name] = bodies[name][1].fn
    cc, bc, init = ins[:nc], ins[nc:nc + nb], ins[nc + nb:]
    lines = _laid_out(p["body_jaxpr"].jaxpr, bc, xp, consts, f"{key}b")
    bc = [f"{key}bl{j}" if any(line.startswith(f"{key}bl{j} ") for line in lines) else b
          for j, b in enumerate(bc)]
    lines += [f"{_targets(outs)} = {_targets(init)}"] if outs else []
    lines.append(f"while {key}c({', '.join([*cc, *outs])})[0]:")
    lines.extend(f"    {line}" for line in _assign(outs, f"{key}b({', '.join([*bc, *outs])})"))
    return lines


def _emit_scan(eqn: Eqn, ins: list[str], outs: list[str], xp: Any, consts: dict[str, Any],
               bodies: _Bodies, key: str, used: Collection[str]) -> list[str]:
    p = eqn.params
    nc, ncar, length = p["num_consts"], p["num_carry"], p["length"]
    bodies[key] = ("body of scan", subprogram(p["jaxpr"], xp, loop=True))
    consts[key] = bodies[key][1].fn
    consts["empty"] = xp.empty
    body_consts, init, xs = ins[:nc], ins[nc:nc + ncar], ins[nc + ncar:]
    carry, ys = outs[:ncar], outs[ncar:]
    i = f"{key}i"
    lines = _laid_out(p["jaxpr"].jaxpr, body_consts, xp, consts, key) if length > 1 else []
    body_consts = [f"{key}bl{j}" if any(line.startswith(f"{key}bl{j} ") for line in lines)
                   else b for j, b in enumerate(body_consts)]
    lines += [f"{_targets(carry)} = {_targets(init)}"] if carry else []
    step_ys = []
    for j, (y, aval) in enumerate(zip(ys, p["jaxpr"].out_avals[ncar:])):
        if y not in used:  # a dead stacked output (e.g. the cotangent of integer xs)
            step_ys.append("_")
            continue
        # Each step writes its slice into one preallocated stack, as xp.stack would copy it.
        consts[f"{key}t{j}"] = aval.dtype
        lines.append(f"{y} = empty({(length, *aval.shape)!r}, {key}t{j})")
        step_ys.append(f"{key}y{j}")
    order = f"range({length - 1}, -1, -1)" if p["reverse"] else f"range({length})"
    lines.append(f"for {i} in {order}:")
    args = [*body_consts, *carry, *(f"{x}[{i}]" for x in xs)]
    lines.extend(f"    {line}" for line in _assign([*carry, *step_ys],
                                                   f"{key}({', '.join(args)})"))
    lines.extend(f"    {y}[{i}] = {t}" for y, t in zip(ys, step_ys) if t != "_")
    return lines


def _emit_call(eqn: Eqn, ins: list[str], outs: list[str], xp: Any, consts: dict[str, Any],
               bodies: _Bodies, key: str, used: Collection[str]) -> list[str]:
    # A jit nested in a staged program runs as part of it, on its device: staging pinned
    # the nested call to the host backend, its operands being tracers without a device.
    bodies[key] = (f"jit {eqn.params.get('name', '')}".rstrip(), subprogram(
        eqn.params["jaxpr"], xp))
    consts[key] = bodies[key][1].fn
    return _assign(outs, f"{key}({', '.join(ins)})")


def _emit_device_put(eqn: Eqn, ins: list[str], outs: list[str], xp: Any,
                     consts: dict[str, Any], bodies: _Bodies, key: str,
                     used: Collection[str]) -> list[str]:
    # A program runs on one device: a transfer inside it is the identity.
    return [f"{outs[0]} = {ins[0]}"] if outs else []


_STRUCTURED: dict[str, _Emitter] = {"cond": _emit_cond, "while": _emit_while,
                                    "scan": _emit_scan, "jit": _emit_call,
                                    "device_put": _emit_device_put}
