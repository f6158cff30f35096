"""Run-time checks of the derivative rules (``config.update("funcgrad_check_rules", True)``).

With the option on, every primitive that ``jvp`` or ``vjp``/``grad`` differentiates on
concrete values (not under ``jit``/``vmap`` staging) is checked where it runs:

- its jvp rule against central finite differences along a random direction (skipped where
  two step sizes or the one-sided differences disagree: a kink, a jump or a pole, where no
  derivative exists; and for primitives whose derivative is a rule by design:
  ``stop_gradient``, custom rules, and control flow or ``jit``, which may contain them);
- its vjp rule against its jvp rule: ``<u, J v> == <J^T u, v>`` for random ``u``, ``v``.

A disagreement raises :class:`RuleCheckError` naming the primitive and the user's line. It
costs a few evaluations of the primitive per use, so it is a debugging mode, off by default.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.config.update("funcgrad_check_rules", True)
>>> round(float(fg.grad(fg.numpy.sin)(np.array(0.5))), 4)  # sin's rules agree: no error
0.8776
>>> fg.config.update("funcgrad_check_rules", False)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.array import wrap
from funcgrad.core import Primitive, Tracer, get_aval
from funcgrad.errors import FuncgradError, NonDifferentiableError
from funcgrad.source_info import user_frame

__all__ = ["RuleCheckError", "check_primitive"]


class RuleCheckError(FuncgradError, AssertionError):
    """A primitive's jvp rule disagrees with finite differences, or its vjp rule with its
    jvp rule (raised only in ``funcgrad_check_rules`` mode)."""


_active = threading.local()

# funcgrad.transforms.jvp's ``jvp`` and funcgrad.transforms.vjp's ``vjp``, registered by
# those modules as they load (they call this one: it does not import them).
DIFFERENTIATORS: dict[str, Callable[..., Any]] = {}

# (step, relative tolerance) per float width: central differences are accurate to ~eps^2
# in the step, and to ~unit roundoff / step in the rounding.
_FD = {8: (1e-6, 1e-5), 4: (1e-2, 2e-2)}


def check_primitive(prim: Primitive, primals: Sequence[Any], params: dict[str, Any]) -> None:
    """Check ``prim``'s derivative rules at ``primals`` (concrete values only); raise
    :class:`RuleCheckError` where they disagree."""
    if getattr(_active, "on", False) or any(isinstance(p, Tracer) for p in primals):
        return  # the check's own differentiation, or staged values without numbers
    xs = [np.asarray(p) for p in primals]
    diff = [k for k, x in enumerate(xs) if x.dtype.kind == "f" and x.dtype.itemsize in _FD]
    if not diff:
        return
    _active.on = True
    try:
        _check(prim, xs, diff, params)
    finally:
        _active.on = False


def _check(prim: Primitive, xs: list[np.ndarray], diff: list[int],
           params: dict[str, Any]) -> None:
    from funcgrad.tree_util import tree_leaves  # noqa: PLC0415

    jvp, vjp = DIFFERENTIATORS["jvp"], DIFFERENTIATORS["vjp"]

    def f(*d: Any) -> Any:
        args: list[Any] = list(xs)
        for k, v in zip(diff, d):
            args[k] = v
        # As Arrays, as a user's program passes them: a call primitive (custom_jvp) runs
        # the user's function on them, which may use Array methods (x.at[...]).
        return prim.bind(*[wrap(a, get_aval(a)) if type(a) is np.ndarray else a
                           for a in args], **params)

    rng = np.random.default_rng(0)
    dargs = [xs[k] for k in diff]
    ts = [rng.standard_normal(a.shape).astype(a.dtype) for a in dargs]
    try:
        out, t_out = jvp(f, tuple(dargs), tuple(ts))
    except NonDifferentiableError:  # no forward mode (custom_vjp): nothing to compare
        return
    outs = [np.asarray(o) for o in tree_leaves(out)]
    touts = [np.asarray(t) for t in tree_leaves(t_out)]
    step, rtol = _FD[min(a.dtype.itemsize for a in dargs)]

    def differences(h: float) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        plus = tree_leaves(f(*[a + h * t for a, t in zip(dargs, ts)]))
        minus = tree_leaves(f(*[a - h * t for a, t in zip(dargs, ts)]))
        res = []
        for p, m, o in zip(plus, minus, outs):
            p, m, o = (np.asarray(v, np.float64) for v in (p, m, o))
            res.append(((p - m) / (2 * h), (p - o) / h, (o - m) / h))
        return res

    with np.errstate(all="ignore"):
        coarse, fine = differences(step), differences(step / 4)
    if _rule_defined(prim, params):
        coarse = []  # its derivative is a rule by design: only jvp-vs-vjp is checked
    for k, (o, t, (d, fwd, bwd), (d2, _, _)) in enumerate(zip(outs, touts, coarse, fine)):
        if o.dtype.kind != "f" or t.shape != o.shape:
            continue
        scale = 1.0 + float(np.max(np.abs(d), initial=0.0))
        # Where the one-sided differences or two step sizes disagree, there is a kink, a
        # jump or a pole (abs at 0, floor at an integer): no derivative to check.
        smooth = (np.isfinite(d) & np.isfinite(d2) & (np.abs(d - d2) <= rtol * scale)
                  & (np.abs(fwd - bwd) <= 10 * rtol * scale))
        err = np.abs(t.astype(np.float64) - d) > rtol * scale
        if np.any(smooth & err):
            raise RuleCheckError(
                f"check_rules: the jvp rule of primitive {prim.name} disagrees with finite "
                f"differences (output {k}: rule {t[smooth & err][:3]}, differences "
                f"{d[smooth & err][:3]}) at {user_frame()}"
            )
    if prim.vjp is None and prim.vjp_fwd is None:
        return
    try:
        out_v, pullback = vjp(f, *dargs)
        leaves_v = tree_leaves(out_v)
        cts = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) for o in leaves_v]
        in_cts = pullback(_unflatten_like(out_v, cts))
    except NonDifferentiableError:  # no reverse mode (while_loop): nothing to compare
        return
    lhs = sum(float(np.vdot(u, t)) for u, t in zip(cts, touts)
              if np.asarray(u).dtype.kind == "f")
    rhs = sum(float(np.vdot(np.asarray(c, np.float64), v)) for c, v in zip(in_cts, ts)
              if c is not None)
    if not np.isfinite(lhs) or not np.isfinite(rhs):
        return
    if abs(lhs - rhs) > rtol * (1.0 + abs(lhs) + abs(rhs)):
        raise RuleCheckError(
            f"check_rules: the vjp rule of primitive {prim.name} disagrees with its jvp rule "
            f"(<u, J v> = {lhs:.6g}, <J^T u, v> = {rhs:.6g}) at {user_frame()}"
        )


# Primitives whose derivative is not the function's by design (stop_gradient, user rules),
# and those that run a program (control flow, jit): theirs may contain such primitives.
_RULE_DEFINED = {"stop_gradient", "custom_jvp_call", "custom_vjp_call", "custom_gradient"}


def _rule_defined(prim: Primitive, params: dict[str, Any]) -> bool:
    return prim.name in _RULE_DEFINED or getattr(prim, "call_like", False) or any(
        hasattr(v, "eqns") or hasattr(v, "jaxpr")
        or isinstance(v, (tuple, list)) and any(hasattr(u, "eqns") or hasattr(u, "jaxpr")
                                                for u in v)
        for v in params.values())


def _unflatten_like(tree: Any, leaves: list[Any]) -> Any:
    from funcgrad.tree_util import tree_structure, tree_unflatten  # noqa: PLC0415

    return tree_unflatten(tree_structure(tree), leaves)
