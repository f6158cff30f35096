"""Split a jaxpr into the part that can run now and the part that must wait.

Given which inputs are *unknown* (e.g. the cotangents of a gradient program),
``partial_eval`` returns a *known* jaxpr (known inputs → known outputs +
residuals) and an *unknown* jaxpr (residuals + unknown inputs → the remaining
outputs). ``jit`` uses it to compile a gradient as a forward program that
saves residuals and a backward program that consumes them.

>>> import numpy as np
>>> import funcgrad as fg
>>> cj = fg.make_jaxpr(lambda x, y: (x * 2.0, fg.numpy.sin(x) * y))(1.0, 2.0)
>>> known, unknown, n_res = partial_eval(cj, [False, True])
>>> [e.primitive.name for e in known.eqns], [e.primitive.name for e in unknown.eqns]
(['mul', 'sin'], ['mul'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from funcgrad import dtypes
from funcgrad.ir import Atom, ClosedJaxpr, Jaxpr, Var


def partial_eval(closed: ClosedJaxpr, unknowns: Sequence[bool],
                 unknown_outputs: Sequence[bool] | None = None
                 ) -> tuple[ClosedJaxpr, ClosedJaxpr, int]:
    """Split ``closed`` by which inputs are unknown.

    ``unknown_outputs`` says which outputs belong to the unknown jaxpr (by
    default those that depend on an unknown input). Returns ``(known, unknown,
    number of residuals)``; the known jaxpr returns its outputs then the
    residuals, the unknown jaxpr takes the residuals then the unknown inputs.
    """
    jaxpr = closed.jaxpr
    unknown: set[Var] = {v for v, u in zip(jaxpr.invars, unknowns) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in jaxpr.eqns:
        if any(isinstance(a, Var) and a in unknown for a in eqn.inputs):
            unknown_eqns.append(eqn)
            unknown.update(eqn.outputs)
        else:
            known_eqns.append(eqn)
    if unknown_outputs is None:
        unknown_outputs = [isinstance(v, Var) and v in unknown for v in jaxpr.outvars]
    residuals: list[Var] = []
    seen: set[Var] = set()

    def need(a: Atom) -> None:
        if isinstance(a, Var) and a not in unknown and a not in seen:
            seen.add(a)
            residuals.append(a)

    for eqn in unknown_eqns:
        for a in eqn.inputs:
            need(a)
    for v, u in zip(jaxpr.outvars, unknown_outputs):
        if u:
            need(v)
    known_outs = [v for v, u in zip(jaxpr.outvars, unknown_outputs) if not u]
    known_jaxpr = Jaxpr([v for v, u in zip(jaxpr.invars, unknowns) if not u],
                        [*known_outs, *residuals], known_eqns, jaxpr.constvars)
    unknown_jaxpr = Jaxpr([*residuals, *(v for v, u in zip(jaxpr.invars, unknowns) if u)],
                          [v for v, u in zip(jaxpr.outvars, unknown_outputs) if u],
                          unknown_eqns)
    return ClosedJaxpr(known_jaxpr, closed.consts), ClosedJaxpr(unknown_jaxpr, ()), len(residuals)


def float_outputs(jaxpr: ClosedJaxpr) -> list[bool]:
    """Which outputs carry cotangents (the inexact ones)."""
    return [dtypes.is_inexact(a.dtype) for a in jaxpr.out_avals]


def vjp_split(jaxpr: ClosedJaxpr, wanted: Sequence[bool] | None = None,
              ct_wanted: Sequence[bool] | None = None) -> tuple[ClosedJaxpr, ClosedJaxpr, int]:
    """Reverse mode of ``jaxpr`` as two programs.

    forward: ``primals -> outs + residuals``; backward: ``residuals + cts -> input cts``
    (one cotangent per inexact output; zeros for inputs without a derivative). Inputs
    that ``wanted`` marks False are not differentiated (symbolic zeros: constants to the
    forward, zeros from the backward), so what only they reach is not transformed; so are
    output cotangents ``ct_wanted`` marks False (the backward takes none for them).
    """
    from funcgrad.primitives.rules import zeros_like_aval  # noqa: PLC0415
    from funcgrad.staging import eval_jaxpr, trace_flat  # noqa: PLC0415
    from funcgrad.transforms._util import fix_unwanted, spread  # noqa: PLC0415
    from funcgrad.transforms.vjp import vjp_flat  # noqa: PLC0415

    n = len(jaxpr.in_avals)
    floats = float_outputs(jaxpr)
    if ct_wanted is not None:
        floats = [fl and w for fl, w in zip(floats, ct_wanted)]
    mask = [True] * n if wanted is None else list(wanted)

    def f(*args: Any) -> list[Any]:
        fun, diff = fix_unwanted(lambda *xs: eval_jaxpr(jaxpr, *xs), args[:n], mask)
        outs, _, backward = vjp_flat(fun, diff)
        cts = iter(args[n:])
        in_cts = spread(backward([next(cts) if fl else None for fl in floats]), mask)
        return [*outs, *(zeros_like_aval(a) if c is None else c
                        for a, c in zip(jaxpr.in_avals, in_cts))]

    ct_avals = [a.strip_weak() for a, fl in zip(jaxpr.out_avals, floats) if fl]
    both = trace_flat(f, [*jaxpr.in_avals, *ct_avals])[0]
    m = len(jaxpr.out_avals)
    return partial_eval(both, [False] * n + [True] * len(ct_avals),
                        unknown_outputs=[False] * m + [True] * n)

