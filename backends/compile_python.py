"""Compile a jaxpr to straight-line Python over an array module.

Each equation becomes one call of its primitive's ``impl`` with the params
bound as constants; equations whose results are never used are dropped, and
equal equations on equal inputs are computed once. The generated source can
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

from funcgrad.ir import ClosedJaxpr, Jaxpr, Literal, Var


def _live_eqns(jaxpr: Jaxpr) -> list[Any]:
    live = {v for v in jaxpr.outvars if isinstance(v, Var)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(o in live for o in eqn.outputs):
            kept.append(eqn)
            live.update(a for a in eqn.inputs if isinstance(a, Var))
    return kept[::-1]


class CompiledPython:
    """A callable made from generated Python source."""

    def __init__(self, fn: Callable[..., list[Any]], source: str) -> None:
        self.fn = fn
        self.source = source

    def __call__(self, *args: Any) -> list[Any]:
        return self.fn(*args)


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
    lines = [f"def run({', '.join(args)}):"]
    seen: dict[tuple[Any, ...], list[str]] = {}
    n = 0

    literal_names: dict[tuple[Any, ...], str] = {}

    def atom(a: Any) -> str:
        if isinstance(a, Literal):
            # One name per literal value, so equal equations on equal literals merge.
            lkey = (type(a.val), repr(a.val), str(a.aval.dtype))
            if lkey not in literal_names:
                literal_names[lkey] = f"k{len(consts)}"
                consts[literal_names[lkey]] = a.val
            return literal_names[lkey]
        return names[a]

    for k, eqn in enumerate(_live_eqns(jaxpr)):
        ins = [atom(a) for a in eqn.inputs]
        cse_key = (eqn.primitive, tuple(ins), eqn.params) if not eqn.primitive.call_like \
            else None
        if cse_key is not None and cse_key in seen:
            for v, name in zip(eqn.outputs, seen[cse_key]):
                names[v] = name
            continue
        outs = []
        for v in eqn.outputs:
            names[v] = f"v{n}"
            outs.append(f"v{n}")
            n += 1
        fn_name = f"p{k}"
        params = dict(eqn.params)
        prim = eqn.primitive
        consts[fn_name] = (lambda *a, _impl=prim.impl, _params=params:
                           _impl(xp, *a, **_params))
        target = ", ".join(outs) + ("," if len(outs) == 1 and prim.multiple_results else "")
        lines.append(f"    {target} = {fn_name}({', '.join(ins)})")
        if cse_key is not None:
            seen[cse_key] = outs
    # Outputs are always arrays (NumPy reductions can hand back NumPy scalars).
    outs = [f"asarray({atom(a)})" for a in jaxpr.outvars]
    consts["asarray"] = xp.asarray
    lines.append(f"    return [{', '.join(outs)}]")
    source = "\n".join(lines)
    namespace: dict[str, Any] = dict(consts)
    exec(compile(source, "<funcgrad-jit>", "exec"), namespace)  # noqa: S102
    return CompiledPython(namespace["run"], source)

