"""Reverse mode: ``vjp``, ``grad`` and ``value_and_grad``.

The forward pass records a graph node per primitive applied to a traced value,
keeping what its vjp rule reads; the backward pass is the reverse engine's one walk
(``funcgrad.transforms.reverse``), run under the trace current at call time, so the
backward computation can itself be traced, differentiated, staged or batched.

>>> import numpy as np
>>> import funcgrad as fg
>>> out, f_vjp = fg.vjp(lambda x: x * 3.0, np.array(2.0))
>>> f_vjp(np.array(1.0))
(Array(3., dtype=float32),)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import check_rules, dtypes
from funcgrad.array import ArrayImpl, wrap
from funcgrad.config import config
from funcgrad.core import (
    EvalTrace,
    PrimalTracer,
    Primitive,
    Trace,
    bind_under,
    canonical_aval,
    get_aval,
    ndarray_aval,
    new_trace,
    set_current_trace,
)
from funcgrad.errors import (
    ConcretizationTypeError,
    DTypeError,
    NonDifferentiableError,
    NonScalarOutputError,
    ShapeError,
)
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import full, gpu_of, place_like, place_on, zeros_like_aval
from funcgrad.source_info import fun_sourceinfo, user_frame
from funcgrad.transforms._util import (
    as_leaf_array,
    check_input_dtypes,
    check_output_kind,
    normalize_argnums,
    offering_mask,
    split_aux,
)
from funcgrad.transforms.jvp import as_primal_type
from funcgrad.transforms.reverse import (
    Edge,
    Leaf,
    Node,
    record,
    walk,
)
from funcgrad.transforms.signatures import record_signed, signature
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten


class VJPTracer(PrimalTracer):
    """A value of a vjp trace: its primal and the graph edge it came from."""

    __slots__ = ("edge",)

    def __init__(self, trace: VJPTrace, primal: Any, edge: Edge) -> None:
        self._trace = trace
        self.primal = primal
        self.edge = edge

    def __repr__(self) -> str:
        return f"GradTracer(primal={self.primal}, typeof(tangent)={self.aval.str_short()})"

    # JAX's grad tracers: ``item()`` (and ``int()``, ``bool()``) read the value, but
    # ``float()`` and ``tolist()`` are its ConcretizationTypeError.
    def item(self, *args: Any) -> Any:
        return np.asarray(self._concrete(".item()", ConcretizationTypeError)).item(*args)

    def __float__(self) -> float:
        raise ConcretizationTypeError(
            f"{_ABSTRACT}{_jax_shape(self)}\nThe problem arose with the `float` function. If "
            "trying to convert the data type of a value, try using `x.astype(float)` or "
            f"`jnp.array(x, float)` instead.\n\n{_SEE}")

    def tolist(self) -> Any:
        raise ConcretizationTypeError(
            f"{_ABSTRACT}{_jax_shape(self)}\nThe tolist() method was called on "
            f"{_jax_shape(self)}.\n\n{_SEE}")


_ABSTRACT = "Abstract tracer value encountered where concrete value is expected: "
_SEE = "See https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError"


def _jax_shape(x: Any) -> str:
    """JAX's words for a tracer's type: ``traced array with shape float32[2,3]``."""
    aval = x.aval
    return f"traced array with shape {aval.dtype.name}[{','.join(map(str, aval.shape))}]"


class VJPTrace(Trace):
    """Records a :class:`funcgrad.transforms.reverse.Node` per primitive applied to a
    value that depends on the inputs."""

    label = "vjp/grad trace"

    def lift(self, x: Any) -> tuple[Any, Edge]:
        if isinstance(x, VJPTracer) and x._trace is self:
            return x.primal, x.edge
        return x, None

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        primals: list[Any] = []
        parents: list[Edge] = []
        tracked = False
        for a in args:
            if type(a) is VJPTracer and a._trace is self:
                primals.append(a.primal)
                parents.append(a.edge)
                tracked = True
            else:
                primals.append(a)
                parents.append(None)
        parent: Trace = self.parent  # type: ignore[assignment]
        if not tracked or prim.zero_derivative:
            return bind_under(parent, prim, primals, params)
        if type(parent) is EvalTrace and not prim.multiple_results and prim.vjp_fwd is None \
                and prim.vjp is not None and not prim.call_like and not config.check_rules:
            # Eagerly: the impl on the operands' buffers, with the signature's avals (its
            # shape rule ran once), and the node recorded with that signature.
            eager = _eager_operands(primals)
            sig = None if eager is None else signature(
                prim, params, eager[1], [e is not None for e in parents])
            if sig is not None:
                out = wrap(sig.impl(eager[0])[0], sig.out_avals[0])  # type: ignore[index]
                node = record_signed(sig, primals, (out,), parents, Node.__new__(Node),
                                     _as_is)
                return VJPTracer(self, out, (node, 0)) if sig.inexact_out[0] else out
        return self._general(prim, primals, parents, params)

    def _general(self, prim: Primitive, primals: list[Any], parents: list[Edge],
                 params: dict[str, Any]) -> Any:
        parent: Trace = self.parent  # type: ignore[assignment]
        rule = None
        vjp_fwd = prim.vjp_fwd
        if vjp_fwd is not None:
            # Untracked operands are symbolic zeros: the rule need not differentiate
            # them (a loop that only they reach is not transformed).
            with set_current_trace(parent), offering_mask(tuple([e is not None
                                                                 for e in parents])):
                out, rule = vjp_fwd(primals, **params)
        elif prim.vjp is not None:
            out = bind_under(parent, prim, primals, params)
        else:
            raise NonDifferentiableError(
                f"primitive {prim.name} has no reverse-mode (vjp) rule, so it cannot be "
                f"differentiated in reverse mode (at {user_frame()})"
            )
        if config.check_rules:
            check_rules.check_primitive(prim, primals, params)
        outs = list(out) if prim.multiple_results else [out]
        node = record(prim, params, primals, outs, parents, rule)
        wrapped = [VJPTracer(self, o, (node, k)) if dtypes.is_inexact(a.dtype) else o
                   for k, (o, a) in enumerate(zip(outs, node.out_avals))]
        return wrapped if prim.multiple_results else wrapped[0]


def _eager_operands(primals: Sequence[Any]) -> tuple[list[Any], list[ShapedArray]] | None:
    """The NumPy buffers and canonical avals of eagerly computed operands (Arrays, buffers
    or numbers, as the eager trace takes them); None for anything else."""
    bufs: list[Any] = []
    avals: list[ShapedArray] = []
    for p in primals:
        t = type(p)
        if t is ArrayImpl:
            v = p._value
            if type(v) is not np.ndarray:
                return None
            bufs.append(v)
            avals.append(canonical_aval(p._aval))
        elif t is np.ndarray:
            bufs.append(p)
            avals.append(ndarray_aval(p))
        elif t is float or t is int or t is bool:
            av = get_aval(p)
            bufs.append(np.asarray(p, dtype=av.dtype))
            avals.append(av)
        else:
            return None
    return bufs, avals


def _as_is(value: Any, aval: ShapedArray) -> Any:
    return value


def vjp_flat(fun: Callable[..., Any], primals: Sequence[Any]
             ) -> tuple[list[Any], Any, Callable[[Sequence[Any]], list[Any]]]:
    """Run ``fun(*primals) -> pytree`` recording its graph.

    Returns the flat outputs, their tree, and ``backward(flat_cts) -> flat input cts``
    (``None`` for symbolic zeros).
    """
    trace = VJPTrace()
    with new_trace(trace):
        leaves_in = [Leaf() for _ in primals]
        ins = [VJPTracer(trace, p, leaf) for p, leaf in zip(primals, leaves_in)]
        out = fun(*ins)
        leaves, out_tree = tree_flatten(out)
        lifted = [trace.lift(x) for x in leaves]
    outs = [p for p, _ in lifted]
    out_edges = [e for _, e in lifted]

    def backward(cts: Sequence[Any]) -> list[Any]:
        at = walk(list(zip(out_edges, cts)))
        return [at.get(leaf) for leaf in leaves_in]

    return outs, out_tree, backward


def _jax_type(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def _vjp_type_error(got: ShapedArray, want: ShapedArray) -> ShapeError:
    return ShapeError(
        "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
        f"{_jax_type(got)}, but expected {_jax_type(want)} because the corresponding output "
        f"of the differentiated function had JAX type {_jax_type(want)}")


def _check_cotangents(out_avals: Sequence[ShapedArray], cts: Sequence[Any]) -> list[Any]:
    fitted: list[Any] = []
    for oa, c in zip(out_avals, cts):
        if c is None:
            fitted.append(None)
            continue
        if getattr(c, "dtype", None) == dtypes.FLOAT0:
            # JAX's cotangent of an integer or boolean output: a zero with only a shape.
            if np.shape(c) != oa.shape or dtypes.is_inexact(oa.dtype):
                raise DTypeError(f"a float0 cotangent of shape {np.shape(c)} was given for an "
                                 f"output {oa.dtype}{list(oa.shape)}; float0 cotangents are "
                                 "for integer and boolean outputs of that shape")
            fitted.append(None)
            continue
        c = as_leaf_array(c)
        ca = get_aval(c)
        if oa.shape != ca.shape:
            raise _vjp_type_error(ca, oa)
        if not dtypes.is_inexact(oa.dtype):
            fitted.append(None)
            continue
        if ca.dtype != oa.dtype:
            # As JAX: the cotangent has the output's dtype exactly (a Python number has
            # the default float's, float32 unless 64-bit mode is on).
            raise _vjp_type_error(ca, oa)
        if dtypes.python_scalar(c):
            c = full((), c, oa.dtype)
        fitted.append(c)
    return fitted


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False,
        where: str = "vjp") -> Any:
    """``(fun(*primals), vjp_fn)``; ``vjp_fn(ct)`` returns one cotangent per primal.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> y, f_vjp = fg.vjp(lambda a, b: a * b, np.array(2.0), np.array(5.0))
    >>> f_vjp(np.array(1.0))
    (Array(5., dtype=float32), Array(2., dtype=float32))
    """
    primals = tree_map(as_leaf_array, primals)
    flat_p, in_tree = tree_flatten(primals)
    aux_box: list[Any] = []

    def flat_fun(*xs: Any) -> Any:
        out, aux = split_aux(fun(*tree_unflatten(in_tree, xs)), has_aux, where)
        aux_box.append(aux)
        return out

    outs, out_tree, backward = vjp_flat(flat_fun, flat_p)
    # vjp_fn keeps the avals, not the values: the inputs and outputs are the caller's to
    # free (what backward needs is in the graph).
    out_avals = [get_aval(o) for o in outs]
    in_avals = [get_aval(p) for p in flat_p]
    in_gpus = [gpu_of(p) for p in flat_p]  # where zero cotangents are made

    def vjp_fn(ct: Any) -> tuple[Any, ...]:
        flat_ct, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            from funcgrad.errors import TreeStructureError  # noqa: PLC0415

            raise TreeStructureError(
                "unexpected tree structure.\n\nThe argument to a VJP function returned by "
                "`jax.vjp` must match the pytree\nstructure of the differentiated function "
                f"{fun_sourceinfo(fun)}.\n\nBut the tree structures differ: the argument has "
                f"structure {ct_tree}, the function's output {out_tree}.")
        in_cts = backward(_check_cotangents(out_avals, flat_ct))
        # Each cotangent has its primal's aval, weak type included (as JAX's).
        filled = [dtypes.float0_zeros(a.shape) if not dtypes.is_inexact(a.dtype)
                  else as_primal_type(c, a) if c is not None else _zeros_array(a)
                  if g is None else wrap(place_on(np.broadcast_to(np.zeros((), a.dtype),
                                                                  a.shape), g), a)
                  for a, c, g in zip(in_avals, in_cts, in_gpus)]
        return tuple(tree_unflatten(in_tree, filled))

    out = tree_unflatten(out_tree, outs)
    # The trace has finished: aux values computed on it are plain values again.
    return (out, vjp_fn, _strip(aux_box[0])) if has_aux else (out, vjp_fn)


def _zeros_array(aval: ShapedArray) -> Any:
    # A disconnected input's cotangent: an Array (weak type included), as JAX's, where
    # ``full`` gives a bare NumPy array on the host.
    z = zeros_like_aval(aval)
    return wrap(z, aval) if isinstance(z, np.ndarray) else z


def _strip(tree: Any) -> Any:
    def leaf(x: Any) -> Any:
        while isinstance(x, VJPTracer) and not x._trace.alive:
            x = x.primal
        return x

    return tree_map(leaf, tree)


def _check_scalar_output(out: Any, where: str, holomorphic: bool = False) -> Any:
    leaves, tree = tree_flatten(out)
    if len(leaves) != 1 or tree.node_type is not None:
        raise NonScalarOutputError(
            f"Gradient only defined for scalar-output functions. Output was {out!r}.")
    aval = get_aval(leaves[0])
    if aval.shape != ():
        raise NonScalarOutputError(
            f"Gradient only defined for scalar-output functions. Output had shape: "
            f"{aval.shape}.")
    if holomorphic or aval.dtype.kind == "c":
        check_output_kind(aval.dtype, where, holomorphic)
    elif not dtypes.is_float(aval.dtype):
        raise NonScalarOutputError(
            f"{where} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}. For differentiation of functions "
            "with integer outputs, use jax.vjp directly.")
    return leaves[0]


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> Callable[..., Any]:
    """A function returning ``(fun(*args), gradient)`` (``((value, aux), gradient)``
    with ``has_aux``).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.value_and_grad(lambda x: x ** 2)(np.array(3.0))
    (Array(9., dtype=float32), Array(6., dtype=float32))
    """
    where = "grad"

    @functools.wraps(fun)
    def vg(*args: Any, **kwargs: Any) -> Any:
        nums, single = normalize_argnums(argnums, len(args))
        dyn = [tree_map(as_leaf_array, args[i]) for i in nums]
        # allow_int: integer inputs get float0 zeros (from vjp), as in JAX.
        check_input_dtypes(tree_flatten(dyn)[0], where, holomorphic=holomorphic,
                           allow_int=allow_int)

        def f(*dyn_args: Any) -> Any:
            full_args = list(args)
            for i, v in zip(nums, dyn_args):
                full_args[i] = v
            return fun(*full_args, **kwargs)

        if has_aux:
            out, f_vjp, aux = vjp(f, *dyn, has_aux=True, where=where)
        else:
            out, f_vjp = vjp(f, *dyn)
        scalar = _check_scalar_output(out, where, holomorphic)
        sa = get_aval(scalar)
        # The seed has the output's type, weak included, so the gradient has the input's.
        # Made where the output lives: a host seed would keep the backward pass's scalar
        # arithmetic on the host, and a host array meets device ones in an error.
        one = wrap(place_like(np.ones((), sa.dtype), scalar), sa)
        grads = f_vjp(tree_unflatten(tree_flatten(out)[1], [one]))
        g = grads[0] if single else grads
        return ((out, aux), g) if has_aux else (out, g)

    return vg


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to ``argnums`` (of a complex one,
    f'(z), with ``holomorphic=True``).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.grad(lambda x: fg.numpy.sum(x ** 3))(np.array([1.0, 2.0]))
    Array([ 3., 12.], dtype=float32)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), gr = vg(*args, **kwargs)
            return gr, aux
        return vg(*args, **kwargs)[1]

    return g

check_rules.DIFFERENTIATORS["vjp"] = vjp
