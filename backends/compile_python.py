"""Compile a jaxpr to straight-line Python over an array module.

Each equation becomes one call of its primitive's ``impl`` with the params
bound as constants; equations whose results are never used are dropped (unless they
have side effects: ``funcgrad.ir.has_effects``), and equal equations on equal inputs
are computed once (effectful ones excepted). The generated source can
be read with ``.source``.

>>> import numpy as np
>>> import funcgrad as fg
>>> from funcgrad.backends.compile_python import compile_jaxpr
>>> run = compile_jaxpr(fg.make_jaxpr(lambda x: x * 2.0 + 1.0)(np.ones(2)), np)
>>> run(np.ones(2))
[array([3., 3.])]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from funcgrad.ir import ClosedJaxpr, Literal, Var, has_effects, live_equations


class CompiledPython:
    """A callable made from generated Python source."""

    def __init__(self, fn: Callable[..., list[Any]], source: str) -> None:
        self.fn = fn
        self.source = source

    def __call__(self, *args: Any) -> list[Any]:
        return self.fn(*args)


_COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


def _ufunc_name(eqn: Any) -> str | None:
    """The NumPy ufunc to call directly for ``eqn`` (its primitive's ``ufunc``), when the
    call is exact for these dtypes: floating point operands (comparisons give bools)."""
    name = eqn.primitive.ufunc
    if name is None or name in ("round", "isfinite", "bitwise_and", "bitwise_or",
                                "bitwise_xor", "remainder", "power"):
        return None
    if any(a.aval.dtype.kind not in "fc" for a in (*eqn.inputs, *eqn.outputs)
           if a.aval.dtype.kind != "b" or name not in _COMPARISONS):
        return None
    return name


def compile_jaxpr(closed: ClosedJaxpr, xp: Any) -> CompiledPython:
    """Generate and compile ``def run(*invars): ...`` for ``closed`` over ``xp``."""
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

    # Pass 1: names, common subexpressions merged, one entry per emitted equation.
    emitted: list[tuple[Any, list[str], list[str]]] = []
    n = 0
    for eqn in live_equations(jaxpr):
        ins = [atom(a) for a in eqn.inputs]
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
    last_use: dict[str, int] = {}
    for k, (_, ins, _) in enumerate(emitted):
        for name in ins:
            last_use[name] = k
    for name in out_names:
        last_use[name] = len(emitted)
    owned: set[str] = set()
    shared: set[str] = set()
    lines = [f"def run({', '.join(args)}):"]
    for k, (eqn, ins, outs) in enumerate(emitted):
        prim = eqn.primitive
        ufunc = _ufunc_name(eqn)
        target = ", ".join(outs) + ("," if len(outs) == 1 and prim.multiple_results else "")
        if ufunc is None:
            # Anything else may return views of its inputs: never reuse those buffers.
            shared.update(ins)
            fn_name = f"p{k}"
            consts[fn_name] = (lambda *a, _impl=prim.impl, _params=dict(eqn.params):
                               _impl(xp, *a, **_params))
            call = f"{fn_name}({', '.join(ins)})"
            # An equation without outputs (an effect, e.g. debug_callback) is a bare call.
            lines.append(f"    {target} = {call}" if outs else f"    {call}")
            continue
        consts[f"u_{ufunc}"] = getattr(xp, ufunc)
        out_aval = eqn.outputs[0].aval
        reuse = next((name for name, a in zip(ins, eqn.inputs)
                      if name in owned and name not in shared and last_use.get(name) == k
                      and isinstance(a, Var) and a.aval.shape == out_aval.shape
                      and a.aval.dtype == out_aval.dtype and out_aval.shape != ()), None)
        extra = f", out={reuse}" if reuse is not None else ""
        lines.append(f"    {target} = u_{ufunc}({', '.join(ins)}{extra})")
        if out_aval.shape != ():
            owned.update(outs)
    # Outputs are always arrays (NumPy reductions can hand back NumPy scalars).
    consts["asarray"] = xp.asarray
    lines.append(f"    return [{', '.join(f'asarray({o})' for o in out_names)}]")
    source = "\n".join(lines)
    namespace: dict[str, Any] = dict(consts)
    exec(compile(source, "<funcgrad-jit>", "exec"), namespace)  # noqa: S102
    return CompiledPython(namespace["run"], source)
