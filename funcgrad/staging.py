"""Staging: trace a Python function into a ClosedJaxpr, and evaluate jaxprs.

>>> import numpy as np
>>> from funcgrad.staging import make_jaxpr
>>> import funcgrad.numpy as fnp
>>> print(make_jaxpr(lambda x: fnp.sin(x) * 2.0)(np.ones(3, np.float32)))
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = mul b 2.0:f32[]
  in (c,) }
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.config import config
from funcgrad.core import (
    Missing,
    Primitive,
    Trace,
    Tracer,
    abstract_eval,
    as_buffer,
    bind,
    get_aval,
    jax_type_text,
    leaked_tracer_error,
    new_trace,
    set_current_trace,
)
from funcgrad.errors import FuncgradError
from funcgrad.ir import (
    Atom,
    ClosedJaxpr,
    Eqn,
    Jaxpr,
    Literal,
    ShapedArray,
    ShapeDtypeStruct,
    Var,
)
from funcgrad.source_info import arg_names, fun_sourceinfo
from funcgrad.tree_util import PyTreeDef, tree_flatten, tree_unflatten


class StagingTracer(Tracer):
    """A value being staged: it stands for a jaxpr variable."""

    __slots__ = ("_var",)

    def __init__(self, trace: StagingTrace, var: Var) -> None:
        self._trace = trace
        self._var = var

    @property
    def aval(self) -> ShapedArray:
        return self._var.aval

    def __repr__(self) -> str:
        # JAX's words for a jit/make_jaxpr/scan-body tracer, which user prints show.
        return f"JitTracer({jax_type_text(self._var.aval)})"

    def _origin_msg(self) -> str:
        # JAX's DynamicJaxprTracer._origin_msg: the function being traced, and the
        # arguments this value depends on.
        trace = self._trace
        assert isinstance(trace, StagingTrace)
        dbg = trace.debug
        if dbg is None:
            return ""
        origin = f"The error occurred while tracing the function {dbg.func_src_info} for " \
                 f"{dbg.traced_for}. "
        positions = trace.input_positions(self._var)
        if positions:
            names = dbg.arg_names
            if names is None or max(positions) >= len(names):
                return ""
            picked = [names[i] for i in positions]
            if len(picked) == 1:
                which = f"the argument {picked[0]}"
            elif len(picked) == 2:
                which = f"the arguments {picked[0]} and {picked[1]}"
            else:
                which = f"the arguments {', '.join(picked[:-1])}, and {picked[-1]}"
            origin += ("This concrete value was not available in Python because it depends "
                       f"on the value{'s' if len(picked) > 1 else ''} of {which}.")
        return "\n" + origin


class TraceDebug:
    """What JAX's tracer errors say about a staged function (``jax.core.DebugInfo``):
    ``func_src_info`` (``f at file.py:12``), ``traced_for`` (``jit``, ``cond``,
    ``while_body``...) and the names of its array arguments, computed only when an error
    asks for them.

    >>> def f(x, y): return x
    >>> d = TraceDebug("jit", f, (1.0, 2.0), {})
    >>> d.func_src_info.startswith("f at "), d.arg_names
    (True, ['x', 'y'])
    """

    __slots__ = ("traced_for", "fun", "args", "kwargs", "static_argnums", "static_argnames",
                 "order", "_names")

    def __init__(self, traced_for: str, fun: Callable[..., Any], args: Sequence[Any],
                 kwargs: dict[str, Any], static_argnums: Any = (),
                 static_argnames: Any = (),
                 order: Callable[[list[str]], list[str]] | None = None) -> None:
        self.traced_for = traced_for
        self.fun = fun
        self.args = tuple(args)
        self.kwargs = kwargs
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        # The names in the order of the staged inputs, where that is not the arguments'.
        self.order = order
        self._names: list[str] | None = None

    @property
    def func_src_info(self) -> str:
        return fun_sourceinfo(self.fun)

    @property
    def arg_names(self) -> list[str] | None:
        if self._names is None:
            try:
                names = arg_names(self.fun, self.args, self.kwargs, self.static_argnums,
                                  self.static_argnames)
                self._names = names if self.order is None else self.order(names)
            except Exception:  # noqa: BLE001 - error text only; never mask the real error
                return None
        return self._names


class StagingTrace(Trace):
    """Records every primitive as an equation instead of running it.

    With ``fold_constants`` an operation none of whose inputs is staged runs
    right away under the parent trace (used by ``linearize`` to keep only the
    part of a program that depends on its inputs).
    """

    label = "staging trace (make_jaxpr/jit)"

    def __init__(self, fold_constants: bool = False) -> None:
        self.eqns: list[Eqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_ids: dict[int, Var] = {}
        # The const objects themselves, alive while staging so their ids stay unique.
        self._keep: list[Any] = []
        self.fold_constants = fold_constants
        # What the tracer errors say about the function being staged (None: nothing).
        self.debug: TraceDebug | None = None
        self.invars: list[Var] = []

    def input_positions(self, var: Var) -> list[int]:
        """The positions of the staged function's inputs that ``var`` depends on (JAX's
        ``find_progenitors``), walking the equations recorded so far backwards."""
        needed = {var}
        for eqn in reversed(self.eqns):
            if any(o in needed for o in eqn.outputs):
                needed.update(a for a in eqn.inputs if isinstance(a, Var))
        return [i for i, v in enumerate(self.invars) if v in needed]

    def new_arg(self, aval: ShapedArray) -> StagingTracer:
        return StagingTracer(self, Var(aval))

    def to_atom(self, x: Any) -> Atom:
        if isinstance(x, StagingTracer) and x._trace is self:
            return x._var
        if isinstance(x, Tracer) and not x._trace.alive:
            raise leaked_tracer_error(x, "staging (make_jaxpr/jit)")
        if type(x) is Missing:
            raise FuncgradError("internal error: a reverse-mode rule staged a value the "
                                "engine did not keep (see Primitive.vjp_reads)")
        if not isinstance(x, Tracer):
            if dtypes.python_scalar(x):
                return Literal(x, get_aval(x))
            if type(x) is ArrayImpl and not x.aval.shape and type(x._value) is np.ndarray:
                return Literal(x._value, x.aval, x)
            if isinstance(x, (np.ndarray, np.generic)) and x.ndim == 0:
                return Literal(np.asarray(x), get_aval(x))
        # Arrays, and values of enclosing transformations, become constants (kept as
        # backend buffers: compiled programs work on those).
        var = self._const_ids.get(id(x))
        if var is None:
            var = Var(get_aval(x))
            self._const_ids[id(x)] = var
            self.constvars.append(var)
            self.consts.append(as_buffer(x))
            self._keep.append(x)
        return var

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        if self.fold_constants and self.parent is not None and not any(
                isinstance(a, StagingTracer) and a._trace is self for a in args):
            with set_current_trace(self.parent):
                return prim.bind(*args, **params)
        atoms = [self.to_atom(a) for a in args]
        out_avals = abstract_eval(prim, [a.aval for a in atoms], params)
        outvars = [Var(av) for av in out_avals]
        self.eqns.append(Eqn(prim, atoms, params, outvars))
        outs = [StagingTracer(self, v) for v in outvars]
        return outs if prim.multiple_results else outs[0]


def trace_flat(fun: Callable[..., Any], in_avals: Sequence[ShapedArray],
               fold_constants: bool = False, debug: TraceDebug | None = None
               ) -> tuple[ClosedJaxpr, list[Any]]:
    """Stage ``fun(*flat_args) -> list`` on abstract inputs (``debug``: what tracer errors
    say about the user's function, whose array arguments are the flat inputs in order).

    Returns the closed jaxpr and the raw (unflattened) output list.
    """
    if config.read("jax_no_tracing"):
        raise RuntimeError(f"re-tracing function {getattr(fun, '__name__', fun)} for `jit`, "
                           "but 'no_tracing' is set")
    trace = StagingTrace(fold_constants)
    trace.debug = debug
    with new_trace(trace):
        args = [trace.new_arg(av) for av in in_avals]
        trace.invars = [a._var for a in args]
        outs = fun(*args)
        outvars = [trace.to_atom(o) for o in outs]
    jaxpr = Jaxpr([a._var for a in args], outvars, trace.eqns, trace.constvars)
    return ClosedJaxpr(jaxpr, trace.consts), outs


def aval_in_use(aval: ShapedArray) -> ShapedArray:
    """An input's abstract value at the dtypes in use (a float64 NumPy argument is float32
    in 32-bit mode), as ``jit`` sees the argument."""
    dt = dtypes.canonicalize_dtype(aval.dtype)
    return aval if dt == aval.dtype else ShapedArray(aval.shape, dt, aval.weak_type)


def stage(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any] | None = None,
          fold_constants: bool = False, debug: TraceDebug | None = None
          ) -> tuple[ClosedJaxpr, PyTreeDef]:
    """Stage ``fun(*args, **kwargs)`` (pytrees in and out) into a ClosedJaxpr and out tree."""
    kwargs = kwargs or {}
    flat_args, in_tree = tree_flatten((tuple(args), kwargs))
    in_avals = [aval_in_use(get_aval(a)) for a in flat_args]
    out_tree_box: list[PyTreeDef] = []

    def flat_fun(*flat: Any) -> list[Any]:
        a, k = tree_unflatten(in_tree, flat)
        out = fun(*a, **k)
        leaves, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        return leaves

    closed, _ = trace_flat(flat_fun, in_avals, fold_constants, debug)
    return closed, out_tree_box[0]


def make_jaxpr(fun: Callable[..., Any], static_argnums: Sequence[int] | int = (),
               axis_env: Any = None, return_shape: bool = False,
               abstracted_axes: Any = None) -> Callable[..., Any]:
    """Return a function that stages ``fun`` on example arguments and returns its jaxpr
    (and, with ``return_shape``, the outputs' ``ShapeDtypeStruct`` pytree).

    >>> import funcgrad.numpy as fnp
    >>> make_jaxpr(lambda x: fnp.sum(x))(np.ones((2, 2))).eqns[0].primitive.name
    'reduce_sum'
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def staged(*args: Any, **kwargs: Any) -> Any:
        # (JAX traces make_jaxpr's function as it does a jit's.)
        dbg = TraceDebug("jit", fun, args, kwargs, static)
        if static:
            dyn_idx = [i for i in range(len(args)) if i not in static]

            def f(*dyn: Any, **kw: Any) -> Any:
                full = list(args)
                for i, v in zip(dyn_idx, dyn):
                    full[i] = v
                return fun(*full, **kw)

            closed, out_tree = stage(f, [args[i] for i in dyn_idx], kwargs, debug=dbg)
        else:
            closed, out_tree = stage(fun, args, kwargs, debug=dbg)
        if not return_shape:
            return closed
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type) for a in closed.out_avals]
        return closed, tree_unflatten(out_tree, shapes)

    return staged


def eval_jaxpr(closed_jaxpr: ClosedJaxpr | Jaxpr, *args: Any, consts: Sequence[Any] = (),
               inline_calls: bool = False,
               apply: Callable[[Eqn, list[Any]], list[Any]] | None = None) -> list[Any]:
    """Evaluate a jaxpr on ``args`` under the current trace (so it composes with transforms).
    ``apply(eqn, operands) -> outputs``, where given, evaluates each equation instead of
    binding its primitive (an interpreter that adds work around some equations).

    >>> import funcgrad.numpy as fnp
    >>> cj = make_jaxpr(lambda x: x + 1.0)(fnp.zeros(2))
    >>> eval_jaxpr(cj, fnp.ones(2))
    [Array([2., 2.], dtype=float32)]
    """
    if isinstance(closed_jaxpr, ClosedJaxpr):
        jaxpr, consts = closed_jaxpr.jaxpr, closed_jaxpr.consts
    else:
        jaxpr = closed_jaxpr
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"the jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    env: dict[Var, Any] = {}

    def read(a: Atom) -> Any:
        return a.arg if isinstance(a, Literal) else env[a]

    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    for v, x in zip(jaxpr.invars, args):
        env[v] = x
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        ins = [read(a) for a in eqn.inputs]
        if apply is not None:
            outs = apply(eqn, ins)
        elif inline_calls and prim.inline_param is not None:
            # The call's own function, run here (under a staging trace: its equations).
            outs = list(eqn.params[prim.inline_param](*ins))
        else:
            out = bind(prim, *ins, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
        for v, o in zip(eqn.outputs, outs):
            env[v] = o
    return [read(a) for a in jaxpr.outvars]
