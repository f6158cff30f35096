"""Reverse mode: ``vjp``, ``grad`` and ``value_and_grad``.

The forward pass records, for each primitive applied to a traced value, what
its vjp rule needs (inputs, outputs, params) on a tape. The backward pass walks
the tape in reverse under the trace current at call time, binding the rules
there, so the backward computation can itself be traced, differentiated,
staged or batched. Cotangents are ``None`` while they are symbolically zero;
fan-out accumulates by addition.

>>> import numpy as np
>>> import funcgrad as fg
>>> out, f_vjp = fg.vjp(lambda x: x * 3.0, np.array(2.0))
>>> f_vjp(np.array(1.0))
(array(3.),)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import (
    PrimalTracer,
    Primitive,
    Trace,
    get_aval,
    new_trace,
    set_current_trace,
)
from funcgrad.errors import DTypeError, NonDifferentiableError, NonScalarOutputError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.elementwise import convert_element_type
from funcgrad.primitives.rules import add_tangents, full, zeros_like_aval
from funcgrad.source_info import user_frame
from funcgrad.transforms._util import (
    as_leaf_array,
    check_differentiable,
    normalize_argnums,
    split_aux,
)
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten


class VJPTracer(PrimalTracer):
    __slots__ = ("slot",)

    def __init__(self, trace: VJPTrace, primal: Any, slot: int) -> None:
        self._trace = trace
        self.primal = primal
        self.slot = slot


class _Entry:
    """One recorded application: enough to run its vjp rule later."""

    __slots__ = ("prim", "params", "primals", "outs", "in_slots", "out_slots", "backward")

    def __init__(self, prim: Primitive, params: dict[str, Any], primals: list[Any],
                 outs: list[Any], in_slots: list[int | None], out_slots: list[int | None],
                 backward: Callable[[Any], Sequence[Any]] | None) -> None:
        self.prim, self.params = prim, params
        self.primals, self.outs = primals, outs
        self.in_slots, self.out_slots = in_slots, out_slots
        self.backward = backward


class VJPTrace(Trace):
    label = "vjp/grad trace"

    def __init__(self) -> None:
        self.tape: list[_Entry] = []
        self.n_slots = 0

    def new_tracer(self, primal: Any) -> VJPTracer:
        self.n_slots += 1
        return VJPTracer(self, primal, self.n_slots - 1)

    def lift(self, x: Any) -> tuple[Any, int | None]:
        if isinstance(x, VJPTracer) and x._trace is self:
            return x.primal, x.slot
        return x, None

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        primals, slots = [], []
        for a in args:
            p, s = self.lift(a)
            primals.append(p)
            slots.append(s)
        with set_current_trace(self.parent):  # type: ignore[arg-type]
            if all(s is None for s in slots):
                return prim.bind(*primals, **params)
            backward = None
            vjp_fwd = getattr(prim, "vjp_fwd", None)
            if vjp_fwd is not None:
                out, backward = vjp_fwd(primals, **params)
            elif prim.vjp is not None:
                out = prim.bind(*primals, **params)
            else:
                raise NonDifferentiableError(
                    f"primitive {prim.name} has no reverse-mode (vjp) rule, so it cannot be "
                    f"differentiated in reverse mode (at {user_frame()})"
                )
        outs = list(out) if prim.multiple_results else [out]
        wrapped: list[Any] = []
        out_slots: list[int | None] = []
        for o in outs:
            if dtypes.is_inexact(get_aval(o).dtype):
                t = self.new_tracer(o)
                wrapped.append(t)
                out_slots.append(t.slot)
            else:
                # Integer and boolean results carry no derivative.
                wrapped.append(o)
                out_slots.append(None)
        self.tape.append(_Entry(prim, params, primals, outs, slots, out_slots, backward))
        return wrapped if prim.multiple_results else wrapped[0]


def _fit_cotangent(ct: Any, aval: ShapedArray, prim: Primitive) -> Any:
    ct_aval = get_aval(ct)
    if ct_aval.shape != aval.shape:
        raise ShapeError(
            f"internal error: the vjp rule of {prim.name} produced a cotangent of shape "
            f"{ct_aval.shape} for an input of shape {aval.shape}"
        )
    if ct_aval.dtype != aval.dtype:
        ct = convert_element_type(ct, aval.dtype)
    if isinstance(ct, np.generic):
        ct = np.asarray(ct)
    return ct


def backward_pass(trace: VJPTrace, out_slots: Sequence[int | None], out_cts: Sequence[Any]
                  ) -> dict[int, Any]:
    """Cotangents of every slot reachable from the outputs (rules bound under the current
    trace)."""
    env: dict[int, Any] = {}
    for s, c in zip(out_slots, out_cts):
        if s is not None and c is not None:
            env[s] = add_tangents(env.get(s), c)
    for entry in reversed(trace.tape):
        cts = [env.pop(s, None) if s is not None else None for s in entry.out_slots]
        if all(c is None for c in cts):
            continue
        prim = entry.prim
        if entry.backward is not None:
            in_cts = entry.backward(cts if prim.multiple_results else cts[0])
        elif prim.multiple_results:
            in_cts = prim.vjp(cts, entry.primals, entry.outs, **entry.params)  # type: ignore
        else:
            in_cts = prim.vjp(cts[0], entry.primals, entry.outs[0],  # type: ignore
                              **entry.params)
        for s, c, p in zip(entry.in_slots, in_cts, entry.primals):
            if s is None or c is None:
                continue
            env[s] = add_tangents(env.get(s), _fit_cotangent(c, get_aval(p), prim))
    return env


def vjp_flat(fun: Callable[..., Any], primals: Sequence[Any]
             ) -> tuple[list[Any], Any, Callable[[Sequence[Any]], list[Any]]]:
    """Run ``fun(*primals) -> pytree`` recording a tape.

    Returns the flat outputs, their tree, and ``backward(flat_cts) -> flat input cts``
    (``None`` for symbolic zeros).
    """
    trace = VJPTrace()
    with new_trace(trace):
        ins = [trace.new_tracer(p) for p in primals]
        out = fun(*ins)
        leaves, out_tree = tree_flatten(out)
        lifted = [trace.lift(x) for x in leaves]
    outs = [p for p, _ in lifted]
    out_slots = [s for _, s in lifted]
    in_slots = [t.slot for t in ins]

    def backward(cts: Sequence[Any]) -> list[Any]:
        env = backward_pass(trace, out_slots, cts)
        return [env.get(s) for s in in_slots]

    return outs, out_tree, backward


def _check_cotangents(outs: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
    fitted: list[Any] = []
    for o, c in zip(outs, cts):
        if c is None:
            fitted.append(None)
            continue
        c = as_leaf_array(c)
        oa, ca = get_aval(o), get_aval(c)
        if oa.shape != ca.shape:
            raise ShapeError(
                f"cotangent of shape {ca.shape} given for an output of shape {oa.shape}; "
                "pass one cotangent per output, shaped like it"
            )
        if not dtypes.is_inexact(oa.dtype):
            fitted.append(None)
            continue
        if dtypes.python_scalar(c):
            c = full((), c, oa.dtype)
        elif ca.dtype != oa.dtype:
            if not dtypes.is_inexact(ca.dtype) and not dtypes.is_integer(ca.dtype):
                raise DTypeError(f"cotangent dtype {ca.dtype} does not fit output dtype "
                                 f"{oa.dtype}")
            c = convert_element_type(c, oa.dtype)
        fitted.append(c)
    return fitted


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False,
        where: str = "vjp") -> Any:
    """``(fun(*primals), vjp_fn)``; ``vjp_fn(ct)`` returns one cotangent per primal.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> y, f_vjp = fg.vjp(lambda a, b: a * b, np.array(2.0), np.array(5.0))
    >>> f_vjp(np.array(1.0))
    (array(5.), array(2.))
    """
    primals = tree_map(as_leaf_array, primals)
    flat_p, in_tree = tree_flatten(primals)
    aux_box: list[Any] = []

    def flat_fun(*xs: Any) -> Any:
        out, aux = split_aux(fun(*tree_unflatten(in_tree, xs)), has_aux, where)
        aux_box.append(aux)
        return out

    outs, out_tree, backward = vjp_flat(flat_fun, flat_p)

    def vjp_fn(ct: Any) -> tuple[Any, ...]:
        flat_ct, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            from funcgrad.errors import TreeStructureError  # noqa: PLC0415

            raise TreeStructureError(
                f"the cotangent has structure {ct_tree} but the function's output has "
                f"structure {out_tree}; pass a cotangent shaped like the output"
            )
        in_cts = backward(_check_cotangents(outs, flat_ct))
        filled = [zeros_like_aval(get_aval(p)) if c is None else c
                  for p, c in zip(flat_p, in_cts)]
        return tuple(tree_unflatten(in_tree, filled))

    out = tree_unflatten(out_tree, outs)
    # The trace has finished: aux values computed on it are plain values again.
    return (out, vjp_fn, _strip(aux_box[0])) if has_aux else (out, vjp_fn)


def _strip(tree: Any) -> Any:
    def leaf(x: Any) -> Any:
        while isinstance(x, VJPTracer) and not x._trace.alive:
            x = x.primal
        return x

    return tree_map(leaf, tree)


def _check_scalar_output(out: Any, where: str) -> Any:
    leaves, tree = tree_flatten(out)
    if len(leaves) != 1 or tree.node_type is not None:
        raise NonScalarOutputError(
            f"{where} needs a function that returns one scalar, but it returned {tree} "
            "(use has_aux=True to return extra values, or vjp/jacrev for other outputs)"
        )
    aval = get_aval(leaves[0])
    if aval.shape != ():
        raise NonScalarOutputError(
            f"{where} needs a scalar output, but the function returned an array of shape "
            f"{aval.shape}. Reduce it (e.g. funcgrad.numpy.sum), or use funcgrad.vjp / "
            "funcgrad.jacrev for vector outputs."
        )
    if not dtypes.is_float(aval.dtype):
        raise NonScalarOutputError(
            f"{where} needs a real floating point output, got dtype {aval.dtype}"
        )
    return leaves[0]


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` (``((value, aux), gradient)``
    with ``has_aux``).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.value_and_grad(lambda x: x ** 2)(np.array(3.0))
    (array(9.), array(6.))
    """
    where = "grad"

    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        nums, single = normalize_argnums(argnums, len(args))
        dyn = [tree_map(as_leaf_array, args[i]) for i in nums]
        check_differentiable(tree_flatten(dyn)[0], where)

        def f(*dyn_args: Any) -> Any:
            full_args = list(args)
            for i, v in zip(nums, dyn_args):
                full_args[i] = v
            return fun(*full_args, **kwargs)

        if has_aux:
            out, f_vjp, aux = vjp(f, *dyn, has_aux=True, where=where)
        else:
            out, f_vjp = vjp(f, *dyn)
        scalar = _check_scalar_output(out, where)
        one = full((), 1.0, get_aval(scalar).dtype)
        grads = f_vjp(tree_unflatten(tree_flatten(out)[1], [one]))
        g = grads[0] if single else grads
        return ((out, aux), g) if has_aux else (out, g)

    return vg


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to ``argnums``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.grad(lambda x: fg.numpy.sum(x ** 3))(np.array([1.0, 2.0]))
    array([ 3., 12.])
    """
    vg = value_and_grad(fun, argnums, has_aux)

    @functools.wraps(fun)
    def g(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), gr = vg(*args, **kwargs)
            return gr, aux
        return vg(*args, **kwargs)[1]

    return g
