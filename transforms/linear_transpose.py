"""``linear_transpose``: the transpose of a linear function, checked to be linear.

The function is staged once at the primals' types; every equation that reads a value
depending on the inputs must be linear in it (its vjp rule reads no such value), as JAX's
transposition requires. Floating point maps are transposed by the reverse engine at zero
primals; integer maps, whose derivatives the engine does not carry, by their matrix
(exact in integers).

>>> import numpy as np
>>> f_t = transpose_linear(lambda x: 2.0 * x, (np.ones(2, np.float32),))
>>> f_t(np.array([1.0, 3.0], np.float32))
(Array([2., 6.], dtype=float32),)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.core import get_aval
from funcgrad.errors import NonLinearError, ShapeError
from funcgrad.ir import Jaxpr, ShapedArray, Var
from funcgrad.staging import make_jaxpr
from funcgrad.transforms.reverse import _normalized_reads
from funcgrad.tree_util import tree_flatten, tree_unflatten


def _aval(x: Any) -> ShapedArray:
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"):
        # A ShapeDtypeStruct: only its type matters.
        return ShapedArray.make(tuple(x.shape), dtypes.canonicalize(x.dtype),
                                bool(getattr(x, "weak_type", False)))
    return get_aval(x)


def check_linear(jaxpr: Jaxpr) -> None:
    """Raise ``NonLinearError`` at the first equation that is not linear in the values that
    depend on the inputs (``sin(x)``, ``x * x``, ``floor(x)``), inside the bodies of
    ``scan``, ``cond`` and calls too."""
    _check(jaxpr, [True] * len(jaxpr.invars))


def _check(jaxpr: Jaxpr, marks_in: Sequence[bool]) -> list[bool]:
    """Check ``jaxpr`` whose inputs marked True depend on the inputs; which outputs do."""
    linear: set[Var] = {v for v, m in zip(jaxpr.invars, marks_in) if m}
    for eqn in jaxpr.eqns:
        marks = [isinstance(a, Var) and a in linear for a in eqn.inputs]
        if not any(marks):
            continue
        prim = eqn.primitive
        if not (prim.call_like or prim.multiple_results):
            if prim.zero_derivative or prim.vjp_reads is None:
                _refuse(eqn, "it has no transpose")
            parents: list[Any] = [True if m else None for m in marks]  # stand-in edges
            ins, outs = _normalized_reads(prim, len(eqn.inputs), len(eqn.outputs), parents)
            if outs or any(marks[i] for i in ins):
                _refuse(eqn, "it is not linear in its operands that depend on the inputs")
            linear.update(eqn.outputs)
            continue
        out_marks = _check_call(eqn, marks)
        linear.update(v for v, m in zip(eqn.outputs, out_marks) if m)
    return [isinstance(v, Var) and v in linear for v in jaxpr.outvars]


def _check_call(eqn: Any, marks: list[bool]) -> list[bool]:
    """The bodies of a higher-order equation checked; which of its outputs depend on the
    inputs (all of them where its bodies are not known here)."""
    params = eqn.params
    body = params.get("jaxpr") if "jaxpr" in params else params.get("call_jaxpr")
    body = getattr(body, "jaxpr", body)
    if eqn.primitive.name == "scan" and isinstance(body, Jaxpr):
        nc, ncar = params["num_consts"], params["num_carry"]
        carry = list(marks[nc:nc + ncar])
        while True:  # the carries that come to depend on the inputs, to a fixed point
            outs = _check(body, [*marks[:nc], *carry, *marks[nc + ncar:]])
            grown = [c or o for c, o in zip(carry, outs[:ncar])]
            if grown == carry:
                return outs
            carry = grown
    if eqn.primitive.name == "cond" and "branches" in params:
        outs_any = [False] * len(eqn.outputs)
        for br in params["branches"]:
            outs = _check(br.jaxpr, marks[1:])
            outs_any = [a or b for a, b in zip(outs_any, outs)]
        return outs_any
    if isinstance(body, Jaxpr) and len(body.invars) == len(marks):
        return _check(body, marks)
    return [True] * len(eqn.outputs)


def _refuse(eqn: Any, why: str) -> None:
    where = f" (at {eqn.source})" if eqn.source else ""
    raise NonLinearError(
        f"linear_transpose: the function is not linear: '{eqn.primitive.name}'{where} is "
        f"applied to a value that depends on the inputs and {why}. Transpose rule (for "
        f"reverse-mode differentiation) for '{eqn.primitive.name}' not implemented; "
        "use vjp for non-linear functions."
    )


def transpose_linear(fun: Callable[..., Any], primals: Sequence[Any]) -> Callable[..., Any]:
    """``fun``'s transpose at the types of ``primals`` (``jax.linear_transpose``)."""
    from funcgrad.transforms.vjp import vjp  # noqa: PLC0415 - vjp imports the engine

    flat, in_tree = tree_flatten(list(primals))
    avals = [_aval(x) for x in flat]
    zeros = [wrap(np.zeros(a.shape, a.dtype), a) for a in avals]

    def flat_fun(*xs: Any) -> Any:
        return fun(*tree_unflatten(in_tree, list(xs)))

    closed, out_shape = make_jaxpr(flat_fun, return_shape=True)(*zeros)
    check_linear(closed.jaxpr)
    out_avals = closed.out_avals
    _, out_tree = tree_flatten(out_shape)

    def checked(cts: Any) -> list[Any]:
        flat_ct, ct_tree = tree_flatten(cts)
        got = [get_aval(c) for c in flat_ct]
        if ct_tree != out_tree:
            raise ShapeError("cotangent tree does not match function output, "
                             f"expected {out_tree} but got {ct_tree}")
        if any(g.shape != a.shape or g.dtype != a.dtype for g, a in zip(got, out_avals)):
            raise ShapeError("cotangent type does not match function output, "
                             f"expected {tuple(out_avals)} but got {flat_ct}")
        return flat_ct

    if all(dtypes.is_inexact(a.dtype) for a in avals):
        _, f_vjp = vjp(fun, *tree_unflatten(in_tree, zeros))

        def transposed(*cts: Any) -> Any:
            ct = cts[0] if len(cts) == 1 else cts
            checked(ct)
            return f_vjp(ct)

        return transposed

    def by_matrix(*cts: Any) -> Any:
        flat_ct = checked(cts[0] if len(cts) == 1 else cts)
        outs = []
        for k, a in enumerate(avals):
            # Column j of input k's block: the outputs at the j-th unit input.
            cols = []
            for j in range(a.size):
                unit = [np.zeros(b.shape, b.dtype) for b in avals]
                unit[k].reshape(-1)[j] = 1
                ys, _ = tree_flatten(flat_fun(*[wrap(u, b) for u, b in zip(unit, avals)]))
                cols.append(sum((np.asarray(y) * np.asarray(c)).sum()
                                for y, c in zip(ys, flat_ct)))
            res = np.asarray(cols, dtype=a.dtype).reshape(a.shape)
            outs.append(wrap(res, a.strip_weak() if not a.weak_type else a))
        return tuple(tree_unflatten(in_tree, outs))

    return by_matrix
