"""Forward mode: ``jvp`` and ``linearize``.

A JVP tracer carries a primal (a value of the parent trace) and a tangent, or
``None`` for a symbolic zero tangent that costs nothing.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.jvp(fg.numpy.sin, (np.array(0.0),), (np.array(1.0),))
(Array(0., dtype=float32), Array(1., dtype=float32))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from funcgrad import check_rules, dtypes
from funcgrad.config import config
from funcgrad.core import (
    PrimalTracer,
    Primitive,
    Trace,
    Tracer,
    get_aval,
    new_trace,
    set_current_trace,
)
from funcgrad.errors import NonDifferentiableError
from funcgrad.primitives.rules import zeros_like_aval
from funcgrad.source_info import user_frame
from funcgrad.staging import trace_flat
from funcgrad.transforms._util import (
    as_leaf_array,
    check_same_structure,
    split_aux,
)
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent


class JVPTrace(Trace):
    label = "jvp trace"

    def lift(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, None

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        primals, tangents = zip(*(self.lift(a) for a in args)) if args else ((), ())
        with set_current_trace(self.parent):  # type: ignore[arg-type]
            if all(t is None for t in tangents):
                return prim.bind(*primals, **params)
            if prim.jvp is None:
                raise NonDifferentiableError(
                    f"primitive {prim.name} has no forward-mode (jvp) rule, so it cannot be "
                    f"differentiated in forward mode (at {user_frame()}); use reverse mode "
                    "(grad/vjp) or stop_gradient on its inputs"
                )
            p_out, t_out = prim.jvp(list(primals), list(tangents), **params)
            if config.check_rules:
                check_rules.check_primitive(prim, primals, params)
        if prim.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(p_out, t_out)]
        return JVPTracer(self, p_out, t_out)


def _tangent_for(primal: Any, tangent: Any) -> Any:
    if tangent is None:
        return None
    if not dtypes.is_inexact(get_aval(primal).dtype):
        return None
    return tangent


def jvp_flat(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]
             ) -> tuple[list[Any], list[Any], Any]:
    """Push tangents through ``fun(*primals) -> pytree``; zero tangents stay ``None``."""
    trace = JVPTrace()
    with new_trace(trace):
        ins = [JVPTracer(trace, p, _tangent_for(p, t)) for p, t in zip(primals, tangents)]
        out = fun(*ins)
        leaves, out_tree = tree_flatten(out)
        pairs = [trace.lift(x) for x in leaves]
    return [p for p, _ in pairs], [t for _, t in pairs], out_tree


def _strip(trace_outs: Any) -> Any:
    return tree_map(lambda x: x.primal if isinstance(x, JVPTracer) else x, trace_outs)


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> Any:
    """Forward-mode derivative: ``(fun(*primals), J @ tangents)``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.jvp(lambda x: x * x, (np.array(3.0),), (np.array(1.0),))
    (Array(9., dtype=float32), Array(6., dtype=float32))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples, e.g. jvp(f, (x,), (t,))")
    primals = tree_map(as_leaf_array, tuple(primals))
    tangents = tree_map(as_leaf_array, tuple(tangents))
    check_same_structure(primals, tangents, "primals", "tangents")
    flat_p, in_tree = tree_flatten(primals)
    flat_t, _ = tree_flatten(tangents)
    for p, t in zip(flat_p, flat_t):
        pa, ta = get_aval(p), get_aval(t)
        if dtypes.is_inexact(pa.dtype) and ta.dtype != pa.dtype:
            from funcgrad.errors import DTypeError  # noqa: PLC0415

            raise DTypeError(f"tangent dtype {ta.dtype} does not match primal dtype {pa.dtype}")
    aux_box: list[Any] = []

    def flat_fun(*xs: Any) -> Any:
        out = fun(*tree_unflatten(in_tree, xs))
        out, aux = split_aux(out, has_aux, "jvp")
        aux_box.append(aux)
        return out

    outs, touts, out_tree = jvp_flat(flat_fun, flat_p, flat_t)
    touts = [zeros_like_aval(get_aval(p)) if t is None else as_primal_type(t, get_aval(p))
             for p, t in zip(outs, touts)]
    result = (tree_unflatten(out_tree, outs), tree_unflatten(out_tree, touts))
    if has_aux:
        return (*result, _strip(aux_box[0]))
    return result


def as_primal_type(t: Any, aval: Any) -> Any:
    """A tangent or cotangent with its primal's aval, weak type included (as JAX's)."""
    from funcgrad.primitives.elementwise import convert_element_type  # noqa: PLC0415

    ta = get_aval(t)
    if ta.weak_type == aval.weak_type or not dtypes.is_inexact(aval.dtype) or \
            ta.dtype != aval.dtype:
        return t
    return convert_element_type(t, aval.dtype, aval.weak_type)


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(fun(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` reuses the linearization.

    The tangent computation is staged once into a jaxpr whose constants are the
    residuals, so calling ``jvp_fn`` runs only the linear part.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> y, f_jvp = fg.linearize(fg.numpy.sin, np.array(0.0))
    >>> f_jvp(np.array(2.0))
    Array(2., dtype=float32)
    """
    primals = tree_map(as_leaf_array, primals)
    flat_p, in_tree = tree_flatten(primals)
    box: list[Any] = []

    def tangent_fn(*flat_t: Any) -> list[Any]:
        outs, touts, out_tree = jvp_flat(lambda *xs: fun(*tree_unflatten(in_tree, xs)),
                                         flat_p, flat_t)
        box.append((outs, out_tree))
        return [zeros_like_aval(get_aval(p)) if t is None else t for p, t in zip(outs, touts)]

    in_avals = [get_aval(p).strip_weak() for p in flat_p]
    closed, _ = trace_flat(tangent_fn, in_avals, fold_constants=True)
    outs, out_tree = box[0]
    if any(isinstance(o, Tracer) for o in outs):
        # A rule that binds one primitive for primal and tangent together (cond, loops,
        # jit) leaves the primal staged with the tangent: compute it on its own.
        outs = tree_flatten(fun(*tree_unflatten(in_tree, flat_p)))[0]

    def jvp_fn(*tangents: Any) -> Any:
        from funcgrad.staging import eval_jaxpr  # noqa: PLC0415

        flat_t, t_tree = tree_flatten(tree_map(as_leaf_array, tangents))
        if t_tree != in_tree:
            from funcgrad.errors import TreeStructureError  # noqa: PLC0415

            raise TreeStructureError(f"tangents have structure {t_tree}, expected {in_tree}")
        return tree_unflatten(out_tree, eval_jaxpr(closed, *flat_t))

    return tree_unflatten(out_tree, outs), jvp_fn

check_rules.DIFFERENTIATORS["jvp"] = jvp
