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

import numpy as np

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
from funcgrad.errors import DTypeError, NonDifferentiableError, ShapeError
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

    def __repr__(self) -> str:
        if self._trace.linearizing:  # type: ignore[attr-defined]
            # JAX's linearize traces with its grad tracers, and prints them so.
            return (f"GradTracer(primal={self.primal}, "
                    f"typeof(tangent)={self.aval.str_short()})")
        tangent = (f"Zero({self.aval.str_short()})" if self.tangent is None
                   else str(self.tangent))
        return f"JVPTracer(primal={self.primal}, tangent={tangent})"


class JVPTrace(Trace):
    label = "jvp trace"
    linearizing = False  # set when ``linearize`` stages the tangents

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


def jvp_flat(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
             *, linearizing: bool = False) -> tuple[list[Any], list[Any], Any]:
    """Push tangents through ``fun(*primals) -> pytree``; zero tangents stay ``None``."""
    trace = JVPTrace()
    trace.linearizing = linearizing
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

    As JAX's: an integer or boolean primal takes a ``float0`` tangent, and an integer or
    boolean output has a ``float0`` tangent.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.jvp(lambda x: x * x, (np.array(3.0),), (np.array(1.0),))
    (Array(9., dtype=float32), Array(6., dtype=float32))
    """
    return _jvp(fun, primals, tangents, has_aux, float0=True)


def jvp_values(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
               has_aux: bool = False) -> Any:
    """``jvp`` without ``float0``: tangents of integer primals are ignored whatever their
    dtype, and integer outputs get integer zeros (what ``torch.func.jvp`` and ``jacfwd``
    build on)."""
    return _jvp(fun, primals, tangents, has_aux, float0=False)


def _same_tree(primals: Any, tangents: Any) -> None:
    ta, tb = tree_flatten(primals)[1], tree_flatten(tangents)[1]
    if ta != tb:
        from funcgrad.errors import TreeStructureError  # noqa: PLC0415

        raise TreeStructureError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {ta} whereas tangents have tree structure {tb}.")


def _jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
         has_aux: bool, float0: bool) -> Any:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples, e.g. jvp(f, (x,), (t,))")
    primals = tree_map(as_leaf_array, tuple(primals))
    if float0:
        _same_tree(primals, tangents)
        check_same_structure(primals, tangents, "primals", "tangents", shapes=False)
        tangents = tuple(tree_map(_checked_tangent, primals, tuple(tangents)))
    tangents = tree_map(as_leaf_array, tuple(tangents))
    check_same_structure(primals, tangents, "primals", "tangents")
    flat_p, in_tree = tree_flatten(primals)
    flat_t, _ = tree_flatten(tangents)
    for p, t in zip(flat_p, flat_t):
        pa, ta = get_aval(p), get_aval(t)
        if dtypes.is_inexact(pa.dtype) and ta.dtype != pa.dtype:
            raise DTypeError(_dtype_mismatch(pa.dtype, ta.dtype))
    aux_box: list[Any] = []

    def flat_fun(*xs: Any) -> Any:
        out = fun(*tree_unflatten(in_tree, xs))
        out, aux = split_aux(out, has_aux, "jvp")
        aux_box.append(aux)
        return out

    outs, touts, out_tree = jvp_flat(flat_fun, flat_p, flat_t)
    touts = [_output_tangent(p, t, float0) for p, t in zip(outs, touts)]
    result = (tree_unflatten(out_tree, outs), tree_unflatten(out_tree, touts))
    if has_aux:
        return (*result, _strip(aux_box[0]))
    return result


def _dtype_mismatch(primal: Any, tangent: Any) -> str:
    expected = primal if dtypes.is_inexact(primal) else dtypes.FLOAT0
    return ("primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or "
            "in case of int/bool primal dtype the tangent dtype must be float0.Got primal dtype "
            f"{primal} and so expected tangent dtype {expected}, but got tangent dtype "
            f"{tangent} instead.")


def _checked_tangent(primal: Any, tangent: Any) -> Any:
    # JAX's rule: an integer or boolean primal's tangent is float0 (a zero that carries only
    # a shape), and a float0 tangent belongs to nothing else. The engine's symbolic zero
    # stands in for it, as integer zeros of the primal's dtype.
    pa = get_aval(primal)
    t_dtype = getattr(tangent, "dtype", None)
    t_shape = np.shape(tangent)
    if t_shape != pa.shape:
        raise ShapeError("jvp called with different primal and tangent shapes;Got primal "
                         f"shape {pa.shape} and tangent shape as {t_shape}")
    if dtypes.is_inexact(pa.dtype):
        if t_dtype == dtypes.FLOAT0:
            raise DTypeError(_dtype_mismatch(pa.dtype, t_dtype))
        return tangent
    if t_dtype != dtypes.FLOAT0:
        t_dtype = get_aval(as_leaf_array(tangent)).dtype
        raise DTypeError(_dtype_mismatch(pa.dtype, t_dtype))
    return np.zeros(pa.shape, pa.dtype)


def _output_tangent(primal: Any, tangent: Any, float0: bool) -> Any:
    aval = get_aval(primal)
    if float0 and not dtypes.is_inexact(aval.dtype):
        return dtypes.float0_zeros(aval.shape)
    if tangent is None:
        # A symbolic zero becomes an Array of the primal's aval, weak type included (JAX's
        # instantiated zero tangent): hessian(lambda x: x)(1.0) is a weak 0.
        from funcgrad.array import ArrayImpl, wrap  # noqa: PLC0415

        z = zeros_like_aval(aval)
        if isinstance(z, (ArrayImpl, Tracer)):
            return z if get_aval(z) == aval else as_primal_type(z, aval)
        return wrap(z, aval)
    return as_primal_type(tangent, aval)


def as_primal_type(t: Any, aval: Any) -> Any:
    """A tangent or cotangent with its primal's aval, weak type included (as JAX's)."""
    from funcgrad.primitives.elementwise import convert_element_type  # noqa: PLC0415

    ta = get_aval(t)
    if ta.weak_type == aval.weak_type or not dtypes.is_inexact(aval.dtype) or \
            ta.dtype != aval.dtype:
        return t
    return convert_element_type(t, aval.dtype, aval.weak_type)


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` reuses the linearization
    (with ``has_aux=True``, ``fun`` returns ``(output, aux)`` and so does linearize:
    ``(output, jvp_fn, aux)``).

    The tangent computation is staged once into a jaxpr whose constants are the
    residuals, so calling ``jvp_fn`` runs only the linear part.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> y, f_jvp = fg.linearize(fg.numpy.sin, np.array(0.0))
    >>> f_jvp(np.array(2.0))
    Array(2., dtype=float32)
    """
    out, jvp_fn, aux = _linearize(fun, primals, float0=True, has_aux=has_aux)
    return (out, jvp_fn, aux) if has_aux else (out, jvp_fn)


def linearize_values(fun: Callable[..., Any], *primals: Any
                     ) -> tuple[Any, Callable[..., Any]]:
    """``linearize`` without ``float0`` (as ``jvp_values``)."""
    return _linearize(fun, primals, float0=False)[:2]


def _linearized_tangent(primal: Any, tangent: Any) -> Any:
    pa = get_aval(primal)
    ta = get_aval(as_leaf_array(tangent)) if getattr(tangent, "dtype", None) != \
        dtypes.FLOAT0 else None
    if ta is not None and dtypes.is_inexact(pa.dtype) and ta.dtype == pa.dtype and \
            ta.shape == pa.shape:
        return tangent
    if ta is None and not dtypes.is_inexact(pa.dtype) and np.shape(tangent) == pa.shape:
        return np.zeros(pa.shape, pa.dtype)
    got = f"{dtypes.FLOAT0}{list(np.shape(tangent))}" if ta is None else \
        f"{ta.dtype}{list(ta.shape)}"
    expected = pa.dtype if dtypes.is_inexact(pa.dtype) else dtypes.FLOAT0
    raise ShapeError("linearized function called on tangent values inconsistent with the "
                     f"original primal values: got tangent {got} for primal "
                     f"{pa.dtype}{list(pa.shape)} but expected {expected}{list(pa.shape)}")


def _linearize(fun: Callable[..., Any], primals: tuple[Any, ...], float0: bool,
               has_aux: bool = False) -> tuple[Any, Callable[..., Any], Any]:
    primals = tree_map(as_leaf_array, primals)
    flat_p, in_tree = tree_flatten(primals)
    box: list[Any] = []
    aux_box: list[Any] = []

    def main(*xs: Any) -> Any:
        out, aux = split_aux(fun(*tree_unflatten(in_tree, xs)), has_aux, "linearize")
        aux_box.append(aux)
        return out

    def tangent_fn(*flat_t: Any) -> list[Any]:
        outs, touts, out_tree = jvp_flat(main, flat_p, flat_t, linearizing=True)
        box.append((outs, out_tree))
        return [zeros_like_aval(get_aval(p)) if t is None else t for p, t in zip(outs, touts)]

    in_avals = [get_aval(p).strip_weak() for p in flat_p]
    closed, _ = trace_flat(tangent_fn, in_avals, fold_constants=True)
    outs, out_tree = box[0]
    aux = _strip(aux_box[0])
    if any(isinstance(o, Tracer) for o in [*outs, *tree_flatten(aux)[0]]):
        # A rule that binds one primitive for primal and tangent together (cond, loops,
        # jit) leaves the primal staged with the tangent: compute it on its own.
        from funcgrad.array import wrap  # noqa: PLC0415

        # (Python numbers as the weakly typed Arrays the traced call saw)
        args = [wrap(np.asarray(p, get_aval(p).dtype), get_aval(p))
                if dtypes.python_scalar(p) else p for p in flat_p]
        out, aux = split_aux(fun(*tree_unflatten(in_tree, args)), has_aux, "linearize")
        outs = tree_flatten(out)[0]

    def jvp_fn(*tangents: Any) -> Any:
        from funcgrad.staging import eval_jaxpr  # noqa: PLC0415

        flat_t, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            from funcgrad.errors import TreeStructureError  # noqa: PLC0415

            raise TreeStructureError(f"tangents have structure {t_tree}, expected {in_tree}")
        if float0:
            flat_t = [_linearized_tangent(p, t) for p, t in zip(flat_p, flat_t)]
        flat_t = [as_leaf_array(t) for t in flat_t]
        t_outs = eval_jaxpr(closed, *flat_t)
        if float0:
            t_outs = [_output_tangent(p, t, True) for p, t in zip(outs, t_outs)]
        return tree_unflatten(out_tree, t_outs)

    return tree_unflatten(out_tree, outs), jvp_fn, aux

check_rules.DIFFERENTIATORS["jvp"] = jvp_values
