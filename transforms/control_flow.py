"""Structured control flow as primitives carrying jaxprs: ``cond``/``switch``,
``while_loop``, ``fori_loop`` and ``scan``.

Each body is staged to a jaxpr once; values the body closes over become explicit
operands, so every trace (eager, staging, jvp, vjp, vmap, jit) handles the
primitive through its rules. Reverse mode works through ``cond``, ``scan`` and
``fori_loop`` with a static trip count; forward mode and batching through all.

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.lax.cond(np.array(True), lambda x: x + 1.0, lambda x: x - 1.0, np.array(2.0))
Array(3., dtype=float32)
>>> fg.lax.fori_loop(0, 3, lambda i, x: x * 2.0, np.array(1.0))
Array(8., dtype=float32)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import wrap
from funcgrad.config import config
from funcgrad.conversion import asarray
from funcgrad.core import Primitive, Tracer, as_buffer, get_aval
from funcgrad.errors import (
    AxisError,
    ConcretizationTypeError,
    DTypeError,
    NonDifferentiableError,
    ShapeError,
    TreeStructureError,
    WhileLoopReverseError,
)
from funcgrad.ir import ClosedJaxpr, Jaxpr, ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import reductions as R
from funcgrad.primitives import structural as S
from funcgrad.primitives.rules import (
    add_tangents,
    all_batched,
    batch_size,
    move_to_front,
    wanted,
    with_batch,
    zeros_like_aval,
)
from funcgrad.source_info import fun_sourceinfo
from funcgrad.staging import TraceDebug, eval_jaxpr, trace_flat
from funcgrad.transforms._util import fix_unwanted, spread, take_mask
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.partial_eval import float_outputs, vjp_split
from funcgrad.transforms.vjp import vjp_flat
from funcgrad.transforms.vmap import vmap_flat
from funcgrad.tree_util import (
    PyTreeDef,
    SequenceKey,
    flatten_one_level_with_keys,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)

# --------------------------------------------------------------- staging helpers


def _open(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Closure conversion: the jaxpr's constants become leading inputs."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([*j.constvars, *j.invars], j.outvars, j.eqns), ()), \
        list(closed.consts)


def _stage(fun: Callable[..., Any], avals: Sequence[ShapedArray],
           debug: TraceDebug | None = None) -> tuple[ClosedJaxpr, list[Any], PyTreeDef]:
    """Stage ``fun(*flat) -> pytree`` on ``avals``: (open jaxpr, consts, out tree);
    ``debug`` names the user's function in tracer errors."""
    box: list[PyTreeDef] = []

    def flat(*xs: Any) -> list[Any]:
        leaves, tree = tree_flatten(fun(*xs))
        box.append(tree)
        return [asarray(x) for x in leaves]

    closed, _ = trace_flat(flat, avals, debug=debug)
    opened, consts = _open(closed)
    return opened, consts, box[0]


def _avals(xs: Sequence[Any]) -> list[ShapedArray]:
    # Weak types kept, as JAX: a Python-scalar carry stays weakly typed through the loop.
    return [get_aval(x) for x in xs]


def _unstacked(a: ShapedArray) -> ShapedArray:
    """The aval of one slice along the leading axis."""
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _promote_weak_carry(carry: list[Any], avals: list[ShapedArray],
                        outs: Sequence[ShapedArray]) -> bool:
    """JAX's rule for loop carries: a weakly typed initial value whose body result has
    another dtype takes the promoted type. True when a carry changed (restage)."""
    changed = False
    for i, (a, o) in enumerate(zip(avals, outs)):
        if a.weak_type and a.shape == o.shape and a.dtype != o.dtype:
            dt, _ = dtypes.promote((a.dtype, True), (o.dtype, o.weak_type))
            carry[i] = E.convert_element_type(carry[i], dt)
            avals[i] = get_aval(carry[i])
            changed = True
    return changed


def _leaves(tree: Any) -> tuple[list[Any], PyTreeDef]:
    leaves, t = tree_flatten(tree)
    return [_strong(asarray(x)) for x in leaves], t


def _strong(x: Any) -> Any:
    """Python scalars as weakly typed Arrays of their default dtype."""
    if dtypes.python_scalar(x):
        a = get_aval(x)
        return wrap(np.asarray(x, dtype=a.dtype), a)
    return x


def _stage_fixed(fun: Callable[..., list[Any]], avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """Stage a derived body; constants it creates stay bound in the ClosedJaxpr."""
    return trace_flat(fun, avals)[0]


def _pair_text(tree: PyTreeDef, leaves: Sequence[Any]) -> str:
    """How JAX shows a scan body's output that is no (carry, y) pair: its avals."""
    return str(tree_unflatten(tree, [get_aval(v) if hasattr(v, "dtype")
                                     or isinstance(v, (int, float, complex, bool)) else v
                                     for v in leaves]))


def _type_mismatches(tree: PyTreeDef, avals1: Sequence[ShapedArray],
                     avals2: Sequence[ShapedArray]
                     ) -> list[tuple[tuple[Any, ...], ShapedArray, ShapedArray, str]]:
    """Where two lists of avals of the pytree ``tree`` differ in dtype or shape: the path,
    both avals and JAX's words for why (a weak type is no difference)."""
    paths = [p for p, _ in tree_flatten_with_path(
        tree_unflatten(tree, [0] * tree.num_leaves))[0]]
    found = []
    for p, a, b in zip(paths, avals1, avals2):
        why = [w for w, bad in (("the dtypes do not match", a.dtype != b.dtype),
                                ("the shapes do not match", a.shape != b.shape)) if bad]
        if why:
            found.append((p, a, b, ", and ".join(why)))
    return found


def _carry_component(fun: Any) -> Callable[[tuple[Any, ...]], str]:
    """How JAX's carry messages name a part of the carry: by the body's first parameter
    (``the input carry component c[1]``), behind the path a wrapper put it at
    (``_carry_path``: fori_loop's ``loop_carry[1]``)."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (ValueError, TypeError):
        params = []
    name = params[0] if params else None
    prefix = tuple(getattr(fun, "_carry_path", ()))

    def component(p: tuple[Any, ...]) -> str:
        p = (*prefix, *p)
        if name:
            return f"the input carry component {name}{keystr(p)}" if p else \
                f"the input carry {name}"
        return f"the input carry at path {keystr(p)}" if p else "the input carry"

    return component


def _listed(diffs: list[str]) -> str:
    if len(diffs) == 1:
        return f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _check_carry(name: str, fun: Any, in_tree: PyTreeDef, in_avals: Sequence[ShapedArray],
                 out_tree: PyTreeDef, out_avals: Sequence[ShapedArray]) -> None:
    """JAX's errors for a loop body whose carry output differs from its input in structure
    or in type (shape or dtype; a weak type is no difference)."""
    component = _carry_component(fun)
    if in_tree != out_tree:
        diffs = [f"{component(p)} is a {a} but the corresponding component of the carry "
                 f"output is a {b}, so {why}"
                 for p, a, b, why in _tree_differences(
                     (), tree_unflatten(in_tree, list(in_avals)),
                     tree_unflatten(out_tree, list(out_avals)))]
        if diffs:
            raise TreeStructureError(
                f"{name} function carry input and carry output must have the same pytree "
                f"structure, but they differ:\n\n{_listed(diffs)}\nRevise the function so "
                "that the carry output has the same pytree structure as the carry input.")
        return
    diffs = [f"{component(p)} has type {_jax_type(a)} but the corresponding output carry "
             f"component has type {_jax_type(b)}, so {why}"
             for p, a, b, why in _type_mismatches(in_tree, in_avals, out_avals)]
    if diffs:
        raise TreeStructureError(
            f"{name} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{_listed(diffs)}\nRevise the function so that all output types "
            "match the corresponding input types.")


class _LeafMeta(type):
    def __repr__(cls) -> str:
        return "pytree leaf"


class _Leaf(metaclass=_LeafMeta):
    pass


def _tree_differences(path: tuple[Any, ...], t1: Any, t2: Any
                      ) -> Iterator[tuple[tuple[Any, ...], str, str, str]]:
    """JAX's ``equality_errors``: where and why two pytrees differ in structure."""
    if isinstance(t1, (_Leaf, ShapedArray)) and isinstance(t2, (_Leaf, ShapedArray)):
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    (i1, m1), (i2, m2) = flatten_one_level_with_keys(t1), flatten_one_level_with_keys(t2)
    k1, k2 = tuple(i1), tuple(i2)
    keys1, keys2 = [k for k, _ in k1], [k for k, _ in k2]
    if len(k1) != len(k2):
        try:
            diff = " ".join(repr(getattr(k, "key", k)) for k in set(keys1) ^ set(keys2))
        except TypeError:
            diff = ""
        yield (path, f"{type(t1)} with {len(k1)} child{'ren' if len(k1) > 1 else ''}",
               f"{type(t2)} with {len(k2)} child{'ren' if len(k2) > 1 else ''}",
               "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    if m1 != m2:
        yield (path, f"{type(t1)} with pytree metadata {m1}",
               f"{type(t2)} with pytree metadata {m2}", "the pytree node metadata does not match")
        return
    for k, (_, c1), (_, c2) in zip(keys1, k1, k2):
        yield from _tree_differences((*path, k), c1, c2)


def _jax_type(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(map(str, a.shape))}]"


def _check_branch_outputs(api: str, name1: str, name2: str, f1: Any, f2: Any,
                          tree1: PyTreeDef, avals1: Sequence[ShapedArray], tree2: PyTreeDef,
                          avals2: Sequence[ShapedArray]) -> None:
    """JAX's errors for branches whose outputs differ in structure or type."""
    head = f"{name1} is {fun_sourceinfo(f1)}\n{name2} is {fun_sourceinfo(f2)}\n\n"

    def at(p: tuple[Any, ...]) -> str:
        return f" at path {keystr(p)}" if p else ""

    def listing(diffs: list[str], sep: str) -> str:
        if len(diffs) == 1:
            return f"{diffs[0][0].upper()}{diffs[0][1:]}.\n" if sep == ";" else \
                f"{diffs[0]}.\n"
        if sep == ";":
            return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
        return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"

    if tree1 != tree2:
        diffs = [f"{name1} output{at(p)} is a {a} but {name2} output{at(p)} is a {b}, so {why}"
                 for p, a, b, why in _tree_differences(
                     (), tree_unflatten(tree1, [_Leaf() for _ in range(tree1.num_leaves)]),
                     tree_unflatten(tree2, [_Leaf() for _ in range(tree2.num_leaves)]))]
        if diffs:
            raise TreeStructureError(
                f"{api} branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{head}{listing(diffs, '')}\nRevise {name1} and/or {name2} so that they "
                "have the same pytree structure.")
        return
    diffs = [f"the output of {name1}{at(p)} has type {_jax_type(a1)} but the corresponding "
             f"output of {name2} has type {_jax_type(a2)}, so {why}"
             for p, a1, a2, why in _type_mismatches(tree1, avals1, avals2)]
    if diffs:
        raise TreeStructureError(
            f"{api} branches must have equal output types but they differ.\n\n{head}"
            f"{listing(diffs, ';')}\nRevise {name1} and/or {name2} so that all output types "
            "match.")


# ------------------------------------------------------------------------- cond

def _cond_abstract(index: ShapedArray, *ops: ShapedArray, branches: tuple[ClosedJaxpr, ...]
                   ) -> list[ShapedArray]:
    if index.shape != () or index.dtype.kind not in "iu":
        raise DTypeError(f"cond's index must be an integer scalar, got {index.str_short()}")
    return branches[0].out_avals


def _cond_impl(xp: Any, index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    i = min(max(int(index), 0), len(branches) - 1)
    return eval_jaxpr(branches[i], *ops)


cond_p = Primitive("cond", abstract_eval=_cond_abstract, impl=_cond_impl,
                   multiple_results=True)
cond_p.call_like = True
cond_p.cheap_abstract_eval = True


def _cond_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
              branches: tuple[ClosedJaxpr, ...]) -> Any:
    index, ops = primals[0], list(primals[1:])
    nonzero = [t is not None for t in tangents[1:]]
    n = len(ops)
    tans = [t for t in tangents[1:] if t is not None]

    def jvp_branch(br: ClosedJaxpr) -> ClosedJaxpr:
        def f(*args: Any) -> list[Any]:
            it = iter(args[n:])
            ts = [next(it) if nz else None for nz in nonzero]
            outs, touts, _ = jvp_flat(lambda *xs: eval_jaxpr(br, *xs), args[:n], ts)
            return [*outs, *(zeros_like_aval(get_aval(o)) if t is None else t
                            for o, t in zip(outs, touts))]

        return _stage_fixed(f, [*br.in_avals, *_avals(tans)])

    outs = cond_p.bind(index, *ops, *tans, branches=tuple(jvp_branch(b) for b in branches))
    m = len(branches[0].out_avals)
    return outs[:m], outs[m:]


def _cond_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
              branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    # Each backward branch recomputes its forward: no residuals cross the branch.
    index, ops = primals[0], list(primals[1:])
    n = len(ops)
    # Operands not differentiated are symbolic zeros: constants of the backward branches
    # (a while_loop only they reach is not transformed), with no cotangent out. Output
    # cotangents that are symbolic zeros are not materialised either.
    mask = [wanted(i + 1) and dtypes.is_inexact(get_aval(o).dtype) for i, o in enumerate(ops)]
    floats = [fl and c is not None for fl, c in zip(float_outputs(branches[0]), cts)]
    given = [c for c, fl in zip(cts, floats) if fl]
    if not given or not any(mask):
        return [None] * (n + 1)

    def bwd_branch(br: ClosedJaxpr) -> ClosedJaxpr:
        def f(*args: Any) -> list[Any]:
            fun, diff = fix_unwanted(lambda *xs: eval_jaxpr(br, *xs), args[:n], mask)
            _, _, backward = vjp_flat(fun, diff)
            it = iter(args[n:])
            in_cts = backward([next(it) if fl else None for fl in floats])
            return [zeros_like_aval(a) if c is None else c
                    for a, c, m in zip(br.in_avals, spread(in_cts, mask), mask) if m]

        return _stage_fixed(f, [*br.in_avals, *_avals(given)])

    in_cts = cond_p.bind(index, *ops, *given, branches=tuple(bwd_branch(b) for b in branches))
    return [None, *spread(in_cts, mask)]


def _cond_batch(args: Sequence[Any], dims: Sequence[Any], *,
                branches: tuple[ClosedJaxpr, ...]) -> Any:
    size = batch_size(args, dims)
    index, ops, op_dims = args[0], list(args[1:]), list(dims[1:])
    if dims[0] is None:
        xs = [with_batch(o, d, size) for o, d in zip(ops, op_dims)]

        def vbranch(br: ClosedJaxpr) -> ClosedJaxpr:
            return _stage_fixed(lambda *a: vmap_flat(lambda *b: eval_jaxpr(br, *b), a,
                                                      [0] * len(a), size)[0], _avals(xs))

        outs = cond_p.bind(index, *xs, branches=tuple(vbranch(b) for b in branches))
        return outs, [0] * len(outs)
    # A batched predicate: run every branch on the whole batch and select per member.
    idx = move_to_front(index, dims[0])
    idx = E.min_(E.max_(idx, 0), len(branches) - 1)  # clamped, as the unbatched cond is
    results = [vmap_flat(lambda *b, br=br: eval_jaxpr(br, *b), ops, op_dims, size)[0]
               for br in branches]
    outs = []
    for k in range(len(results[0])):
        out = results[-1][k]
        for i in range(len(branches) - 2, -1, -1):
            cand = results[i][k]
            pred = S.broadcast_in_dim(E.eq(idx, i), get_aval(cand).shape, (0,))
            out = E.select(pred, cand, out)
        outs.append(out)
    return outs, [0] * len(outs)


cond_p.jvp, cond_p.vjp, cond_p.batch = _cond_jvp, _cond_vjp, _cond_batch
cond_p.vjp_reads = "x"
cond_p.describe(lax="cond", fusion=None, cuda=None, ufunc=None, torch_method=None)


_NO_OPERAND = object()


def _operand_kw(operand: Any, operands: tuple[Any, ...]) -> tuple[Any, ...]:
    """JAX's older ``operand=`` keyword of ``cond`` and ``switch``: one operand."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError("if 'operand' keyword is passed then no positional operands can "
                        f"be passed, got operand={operand} and positional operands "
                        f"{operands}")
    return (operand,)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any,
           operand: Any = _NO_OPERAND) -> Any:
    """Apply ``branches[index](*operands)`` (index clamped to range), staged as one primitive.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.lax.switch(1, [lambda x: x, lambda x: 2.0 * x], np.array(3.0))
    Array(6., dtype=float32)
    """
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    operands = _operand_kw(operand, operands)
    if len(np.shape(index)) != 0:
        raise TypeError(f"Branch index must be scalar, got {index} of shape "
                        f"{np.shape(index)}.")
    try:
        index_dtype = dtypes.result_type(index)
    except TypeError as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if dtypes.kind(index_dtype) not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:  # (as JAX: the one branch is called)
        return branches[0](*operands)
    if config.jit_disabled and not isinstance(index, Tracer):
        # JAX's disable_jit: the chosen branch is called, as Python code
        return branches[min(max(int(index), 0), len(branches) - 1)](*operands)
    return _switch(index, branches, *operands)


def _switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any,
            is_cond: bool = False) -> Any:
    # switch without its index checks: cond passes its (any dtype) predicate here
    ops, in_tree = _leaves(operands)
    avals = _avals(ops)
    what = "cond" if is_cond else "switch"
    staged = [_stage(lambda *xs, f=f: f(*tree_unflatten(in_tree, xs)), avals,
                     TraceDebug(what, f, operands, {})) for f in branches]
    if is_cond:  # JAX compares true_fun (the second branch) with false_fun
        (fj, _, ft), (tj, _, tt) = staged
        _check_branch_outputs("cond", "true_fun", "false_fun", branches[1], branches[0],
                              tt, tj.out_avals, ft, fj.out_avals)
    for i, (jx, _, tree) in enumerate(staged[1:] if not is_cond else (), 1):
        _check_branch_outputs("switch", "branch 0", f"branch{i}", branches[0], branches[i],
                              staged[0][2], staged[0][0].out_avals, tree, jx.out_avals)
    # Values several branches close over (the same traced x) are passed once, as in JAX.
    all_consts: list[Any] = []
    slot: dict[int, int] = {}
    picks = []
    for _, consts, _ in staged:
        for c in consts:
            if id(c) not in slot:
                slot[id(c)] = len(all_consts)
                all_consts.append(c)
        picks.append([slot[id(c)] for c in consts])
    const_avals = _avals(all_consts)

    def widen(k: int, jx: ClosedJaxpr) -> ClosedJaxpr:
        mine = picks[k]
        return _stage_fixed(lambda *a: eval_jaxpr(jx, *(a[i] for i in mine),
                                                  *a[len(all_consts):]),
                            [*const_avals, *avals])

    branch_jaxprs = tuple(widen(k, jx) for k, (jx, _, _) in enumerate(staged))
    idx = asarray(index)
    if dtypes.python_scalar(idx):
        idx = np.asarray(idx, np.int32)
    if get_aval(idx).dtype.kind == "b":
        idx = E.convert_element_type(idx, np.int32)
    elif get_aval(idx).dtype != np.int32:
        idx = E.convert_element_type(idx, np.int32)
    outs = cond_p.bind(idx, *all_consts, *ops, branches=branch_jaxprs)
    return tree_unflatten(staged[0][2], outs)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any, operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as one primitive
    (JAX's older ``operand=`` keyword passes one operand).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.lax.cond(np.array(False), lambda x: x + 1.0, lambda x: x - 1.0, np.array(2.0))
    Array(1., dtype=float32)
    """
    if not (callable(true_fun) and callable(false_fun)):
        # JAX's fallback to its old, deprecated signature
        # ``cond(pred, true_operand, true_fun, false_operand, false_fun)``
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _operand_kw(operand, operands)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        raise ShapeError(f"Pred must be a scalar, got {pred} of " +
                         (f"type {type(pred)}" if isinstance(pred, Sequence)
                          else f"shape {np.shape(pred)}."))
    try:
        pred_dtype = dtypes.result_type(pred)
    except TypeError as err:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
    p = asarray(pred)
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
        p = E.ne(p, np.zeros((), get_aval(p).dtype))  # (as JAX: pred != 0)
    if config.jit_disabled and not isinstance(p, Tracer):
        # JAX's disable_jit: the chosen branch is called, as Python code
        return true_fun(*operands) if bool(p) else false_fun(*operands)
    return _switch(p, [false_fun, true_fun], *operands, is_cond=True)


# ------------------------------------------------------------------- while_loop

def _while_abstract(*args: ShapedArray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                    cond_nconsts: int, body_nconsts: int) -> list[ShapedArray]:
    return body_jaxpr.out_avals


def _while_impl(xp: Any, *args: Any, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                cond_nconsts: int, body_nconsts: int) -> list[Any]:
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    while bool(eval_jaxpr(cond_jaxpr, *cc, *carry)[0]):
        carry = eval_jaxpr(body_jaxpr, *bc, *carry)
    return carry


while_p = Primitive("while", abstract_eval=_while_abstract, impl=_while_impl,
                    multiple_results=True)
while_p.call_like = True
while_p.cheap_abstract_eval = True


def _while_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, cond_jaxpr: ClosedJaxpr,
               body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int) -> Any:
    nc, nb = cond_nconsts, body_nconsts
    cc, bc = list(primals[:nc]), list(primals[nc:nc + nb])
    carry = list(primals[nc + nb:])
    bc_t = [t for t in tangents[nc:nc + nb]]
    bc_nz = [t is not None for t in bc_t]
    # Every inexact carry gets a tangent (a zero one if need be), so the loop's types are fixed.
    carry_t = [zeros_like_aval(get_aval(c)) if t is None and dtypes.is_inexact(get_aval(c).dtype)
               else t for c, t in zip(carry, tangents[nc + nb:])]
    carry_nz = [t is not None for t in carry_t]
    nbc, ncar = len(bc), len(carry)

    def body(*args: Any) -> list[Any]:
        b_consts = list(args[:nbc])
        it = iter(args[nbc:nbc + sum(bc_nz)])
        b_ts = [next(it) if nz else None for nz in bc_nz]
        car = list(args[nbc + sum(bc_nz):nbc + sum(bc_nz) + ncar])
        it2 = iter(args[nbc + sum(bc_nz) + ncar:])
        c_ts = [next(it2) if nz else None for nz in carry_nz]
        outs, touts, _ = jvp_flat(lambda *xs: eval_jaxpr(body_jaxpr, *xs), [*b_consts, *car],
                                  [*b_ts, *c_ts])
        return [*outs, *(zeros_like_aval(get_aval(o)) if t is None else t
                        for o, t, nz in zip(outs, touts, carry_nz) if nz)]

    bc_tans = [t for t in bc_t if t is not None]
    car_tans = [t for t in carry_t if t is not None]
    body_j = _stage_fixed(body, _avals([*bc, *bc_tans, *carry, *car_tans]))
    n_extra = len(bc_tans)

    def cond_f(*args: Any) -> list[Any]:
        return eval_jaxpr(cond_jaxpr, *args[:nc], *args[nc:nc + ncar])

    cond_j = _stage_fixed(cond_f, _avals([*cc, *carry, *car_tans]))
    outs = while_p.bind(*cc, *bc, *bc_tans, *carry, *car_tans, cond_jaxpr=cond_j,
                        body_jaxpr=body_j, cond_nconsts=nc, body_nconsts=nbc + n_extra)
    it = iter(outs[ncar:])
    return outs[:ncar], [next(it) if nz else None for nz in carry_nz]


def _while_vjp(*args: Any, **params: Any) -> list[Any]:
    raise WhileLoopReverseError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop.")


def _while_batch(args: Sequence[Any], dims: Sequence[Any], *, cond_jaxpr: ClosedJaxpr,
                 body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int) -> Any:
    size = batch_size(args, dims)
    xs = all_batched(args, dims)
    nc, nb = cond_nconsts, body_nconsts
    ncar = len(xs) - nc - nb
    # Members stop at different steps: loop while any continues; finished ones keep values.

    def pred(*a: Any) -> Any:
        return vmap_flat(lambda *b: eval_jaxpr(cond_jaxpr, *b), a, [0] * len(a), size)[0][0]

    def cond_f(*a: Any) -> list[Any]:
        return [R.reduce_max(pred(*a), (0,))]

    def body_f(*a: Any) -> list[Any]:
        ccs, bcs, car = a[:nc], a[nc:nc + nb], a[nc + nb:]
        keep_going = pred(*ccs, *car)
        new = vmap_flat(lambda *b: eval_jaxpr(body_jaxpr, *b), [*bcs, *car],
                        [0] * (nb + ncar), size)[0]
        return [E.select(S.broadcast_in_dim(keep_going, get_aval(o).shape, (0,)), n, o)
                for n, o in zip(new, car)]

    avals = _avals(xs)
    cond_j = _stage_fixed(cond_f, [*avals[:nc], *avals[nc + nb:]])
    body_j = _stage_fixed(body_f, avals)
    # The batched body takes the cond consts too (to mask finished members).
    outs = while_p.bind(*xs[:nc], *xs[:nc], *xs[nc:], cond_jaxpr=cond_j, body_jaxpr=body_j,
                        cond_nconsts=nc, body_nconsts=nc + nb)
    return outs, [0] * len(outs)


while_p.jvp, while_p.vjp, while_p.batch = _while_jvp, _while_vjp, _while_batch
while_p.vjp_reads = "x"
while_p.describe(lax="while_loop", fusion=None, cuda=None, ufunc=None, torch_method=None)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)`` as one primitive.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.lax.while_loop(lambda v: v < 10, lambda v: v * 2, np.array(1))
    Array(16, dtype=int32)
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
    if config.jit_disabled:
        # JAX's disable_jit: a Python loop over Arrays, unless a transformation traces the
        # loop value (its test cannot be decided in Python): then the primitive.
        try:
            val = tree_map(lambda v: _strong(asarray(v)), init_val)
            while cond_fun(val):
                val = tree_map(lambda v: _strong(asarray(v)), body_fun(val))
            return val
        except ConcretizationTypeError:
            pass
    carry, tree = _leaves(init_val)
    strong = list(carry)
    avals = _avals(carry)
    body_dbg = TraceDebug("while_body", body_fun, (init_val,), {})
    body_j, body_c, body_tree = _stage(lambda *xs: body_fun(tree_unflatten(tree, xs)), avals,
                                       body_dbg)
    if body_tree == tree and _promote_weak_carry(carry, avals, body_j.out_avals):
        body_j, body_c, body_tree = _stage(lambda *xs: body_fun(tree_unflatten(tree, xs)),
                                           avals, body_dbg)
    _check_carry("while_loop body", body_fun, tree, avals, body_tree, body_j.out_avals)
    cond_j, cond_c, cond_tree = _stage(lambda *xs: cond_fun(tree_unflatten(tree, xs)), avals,
                                       TraceDebug("while_cond", cond_fun, (init_val,), {}))
    out_av = cond_j.out_avals
    if cond_tree.num_nodes != 1 or len(out_av) != 1:
        raise DTypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
    if len(out_av) != 1 or out_av[0].shape != () or out_av[0].dtype != dtypes.bool_:
        raise DTypeError("cond_fun must return a boolean scalar, but got output type(s) "
                         f"[{', '.join(map(repr, out_av))}].")
    # As JAX: a carry the body forwards unchanged and the test does not read becomes a
    # body constant (so a vmapped loop does not batch it and reverse mode can pass it by),
    # and the result is the caller's own value.
    nb, ncc, bj, cj = len(body_c), len(cond_c), body_j.jaxpr, cond_j.jaxpr
    read_by_cond = {a for e in cj.eqns for a in e.inputs} | set(cj.outvars)
    move = [bj.outvars[i] is bj.invars[nb + i] and cj.invars[ncc + i] not in read_by_cond
            for i in range(len(carry))]
    if not any(move):
        outs = while_p.bind(*cond_c, *body_c, *carry, cond_jaxpr=cond_j, body_jaxpr=body_j,
                            cond_nconsts=ncc, body_nconsts=nb)
        return tree_unflatten(tree, outs)
    moved = [c for c, m in zip(carry, move) if m]
    kept = [c for c, m in zip(carry, move) if not m]

    def merged(mv: Sequence[Any], kp: Sequence[Any]) -> list[Any]:
        it_m, it_k = iter(mv), iter(kp)
        return [next(it_m) if m else next(it_k) for m in move]

    def body_moved(*a: Any) -> list[Any]:
        mv, bc, kp = a[:len(moved)], a[len(moved):len(moved) + nb], a[len(moved) + nb:]
        outs = eval_jaxpr(body_j, *bc, *merged(mv, kp))
        return [o for o, m in zip(outs, move) if not m]

    def cond_moved(*a: Any) -> list[Any]:  # (the moved carries are not read)
        return eval_jaxpr(cond_j, *a[:ncc], *merged([None] * len(moved), a[ncc:]))

    kept_avals = [a for a, m in zip(avals, move) if not m]
    body_m = _stage_fixed(body_moved, [*[a for a, m in zip(avals, move) if m],
                                       *_avals(body_c), *kept_avals])
    cond_m = _stage_fixed(cond_moved, [*_avals(cond_c), *kept_avals])
    outs = while_p.bind(*cond_c, *moved, *body_c, *kept, cond_jaxpr=cond_m,
                        body_jaxpr=body_m, cond_nconsts=ncc, body_nconsts=len(moved) + nb)
    given = tree_flatten(init_val)[0]
    as_given = [given[i] if carry[i] is strong[i] else carry[i] for i in range(len(carry))]
    return tree_unflatten(tree, merged([v for v, m in zip(as_given, move) if m], outs))


# ------------------------------------------------------------------------- scan

def _scan_abstract(*args: ShapedArray, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                   length: int, reverse: bool) -> list[ShapedArray]:
    outs = jaxpr.out_avals
    carry = outs[:num_carry]
    ys = [ShapedArray((length, *a.shape), a.dtype, a.weak_type) for a in outs[num_carry:]]
    return [*carry, *ys]


def _scan_impl(xp: Any, *args: Any, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
               length: int, reverse: bool) -> list[Any]:
    consts = args[:num_consts]
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    ys: list[list[Any]] = []
    order = range(length - 1, -1, -1) if reverse else range(length)
    for i in order:
        outs = eval_jaxpr(jaxpr, *consts, *carry, *(x[i] for x in xs))
        carry = outs[:num_carry]
        ys.append(outs[num_carry:])
    if reverse:
        ys.reverse()
    n_y = len(jaxpr.out_avals) - num_carry
    y_avals = jaxpr.out_avals[num_carry:]
    def buf(v: Any) -> Any:
        # a y computed from host constants alone (the loop index...) joins a device stack
        b = as_buffer(v)
        return xp.asarray(b) if xp is not np and type(b) is np.ndarray else b

    stacked = [xp.stack([buf(y[k]) for y in ys]) if ys else
               xp.zeros((0, *y_avals[k].shape), y_avals[k].dtype) for k in range(n_y)]
    return [*carry, *stacked]


scan_p = Primitive("scan", abstract_eval=_scan_abstract, impl=_scan_impl,
                   multiple_results=True)
scan_p.call_like = True
scan_p.cheap_abstract_eval = True


def _scan_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
              num_consts: int, num_carry: int, length: int, reverse: bool) -> Any:
    nc, ncar = num_consts, num_carry
    # Fixed point of which tangents are nonzero: inexact carries always get one.
    tans = list(tangents)
    for k in range(nc, nc + ncar):
        if tans[k] is None and dtypes.is_inexact(get_aval(primals[k]).dtype):
            tans[k] = zeros_like_aval(get_aval(primals[k]))
    nz = [t is not None for t in tans]
    n = len(primals)
    y_floats = [dtypes.is_inexact(a.dtype) for a in jaxpr.out_avals[ncar:]]

    def body(*args: Any) -> list[Any]:
        ps = list(args[:n])
        it = iter(args[n:])
        ts = [next(it) if z else None for z in nz]
        outs, touts, _ = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, *xs), ps, ts)
        carry_t = [zeros_like_aval(get_aval(o)) if t is None else t
                   for o, t, z in zip(outs[:ncar], touts[:ncar], nz[nc:nc + ncar]) if z]
        y_t = [zeros_like_aval(get_aval(o)) if t is None else t
               for o, t, fl in zip(outs[ncar:], touts[ncar:], y_floats) if fl]
        return [*outs[:ncar], *carry_t, *outs[ncar:], *y_t]

    # Reorder operands as consts, carries, xs with their tangents next to each group.
    groups = [(0, nc), (nc, nc + ncar), (nc + ncar, n)]
    ordered_p, ordered_t = [], []
    for lo, hi in groups:
        ordered_p.append(list(primals[lo:hi]))
        ordered_t.append([t for t, z in zip(tans[lo:hi], nz[lo:hi]) if z])
    x_avals = [_unstacked(get_aval(x)) for x in primals[nc + ncar:]]
    xt_avals = [_unstacked(get_aval(t)) for t in ordered_t[2]]

    def body_grouped(*args: Any) -> list[Any]:
        sizes = [len(ordered_p[0]), len(ordered_t[0]), len(ordered_p[1]), len(ordered_t[1]),
                 len(ordered_p[2]), len(ordered_t[2])]
        offs = np.cumsum([0, *sizes])
        parts = [list(args[offs[i]:offs[i + 1]]) for i in range(6)]
        return body(*parts[0], *parts[2], *parts[4], *parts[1], *parts[3], *parts[5])

    avals = [*_avals(ordered_p[0]), *_avals(ordered_t[0]), *_avals(ordered_p[1]),
             *_avals(ordered_t[1]), *x_avals, *xt_avals]
    body_j = _stage_fixed(body_grouped, avals)
    n_ct = len(ordered_t[1])
    outs = scan_p.bind(*ordered_p[0], *ordered_t[0], *ordered_p[1], *ordered_t[1],
                       *ordered_p[2], *ordered_t[2], jaxpr=body_j,
                       num_consts=len(ordered_p[0]) + len(ordered_t[0]),
                       num_carry=ncar + n_ct, length=length, reverse=reverse)
    carry, carry_t = outs[:ncar], outs[ncar:ncar + n_ct]
    rest = outs[ncar + n_ct:]
    n_y = len(jaxpr.out_avals) - ncar
    ys, ys_t = rest[:n_y], rest[n_y:]
    it_c, it_y = iter(carry_t), iter(ys_t)
    carry_tans = [next(it_c) if z else None for z in nz[nc:nc + ncar]]
    y_tans = [next(it_y) if fl else None for fl in y_floats]
    return [*carry, *ys], [*carry_tans, *y_tans]


def _depends(jaxpr: ClosedJaxpr, inputs: Sequence[bool]) -> list[bool]:
    """Which outputs of ``jaxpr`` may depend on the inputs marked True (conservative)."""
    j = jaxpr.jaxpr
    reached = {v for v, m in zip(j.invars, inputs) if m}
    for eqn in j.eqns:
        if any(a in reached for a in eqn.inputs if not hasattr(a, "arg")):
            reached.update(eqn.outputs)
    return [not hasattr(v, "arg") and v in reached for v in j.outvars]


def _scan_body_mask(jaxpr: ClosedJaxpr, mask: Sequence[bool], nc: int, ncar: int
                    ) -> tuple[bool, ...]:
    """Which body inputs are differentiated: the operands the caller differentiates, and
    the carries the body makes depend on them (a fixed point)."""
    body = list(mask)
    floats = [dtypes.is_inexact(a.dtype) for a in jaxpr.in_avals]
    while True:
        dep = _depends(jaxpr, body)[:ncar]
        new = [b or (d and fl) for b, d, fl in zip(body[nc:nc + ncar], dep,
                                                   floats[nc:nc + ncar])]
        if new == body[nc:nc + ncar]:
            return tuple(body)
        body[nc:nc + ncar] = new


def _scan_vjp_fwd(primals: Sequence[Any], *, jaxpr: ClosedJaxpr, num_consts: int,
                  num_carry: int, length: int, reverse: bool) -> Any:
    return _scan_vjp_masked(primals, take_mask(len(primals)), jaxpr, num_consts, num_carry,
                            length, reverse)


def _scan_ct_mask(jaxpr: ClosedJaxpr, body_mask: Sequence[bool], nc: int, ncar: int,
                  given: Sequence[bool]) -> list[bool]:
    """Which body outputs get a cotangent that is not a symbolic zero: the outputs given
    one, and the carries through which the body passes one back (a fixed point)."""
    floats = float_outputs(jaxpr)
    ct = [fl and g for fl, g in zip(floats, given)]
    n_in = len(jaxpr.in_avals)
    deps = [_depends(jaxpr, [i == k for i in range(n_in)]) for k in range(nc, nc + ncar)]
    while True:
        new = [c or (body_mask[nc + j] and floats[j]
                     and any(d and o for d, o in zip(deps[j], ct)))
               for j, c in enumerate(ct[:ncar])]
        if new == ct[:ncar]:
            return ct
        ct[:ncar] = new


def _hoist_const_residuals(fwd: ClosedJaxpr, nc: int, n_out: int
                           ) -> tuple[ClosedJaxpr, list[int | None]]:
    """``fwd`` without the residuals that are its constants themselves (a weight the step
    multiplies by), and for each residual the constant it is (None: stacked per step).
    Those cross to the backward once, as its constants, instead of one copy per step."""
    j = fwd.jaxpr
    hoist = [next((k for k in range(nc) if j.invars[k] is v), None) for v in j.outvars[n_out:]]
    if all(k is None for k in hoist):
        return fwd, hoist
    kept = [v for v, k in zip(j.outvars[n_out:], hoist) if k is None]
    return ClosedJaxpr(Jaxpr(j.invars, [*j.outvars[:n_out], *kept], j.eqns, j.constvars),
                       fwd.consts), hoist


def _scan_vjp_masked(primals: Sequence[Any], mask: tuple[bool, ...], jaxpr: ClosedJaxpr,
                     num_consts: int, num_carry: int, length: int, reverse: bool,
                     ct_given: tuple[bool, ...] | None = None) -> Any:
    nc, ncar = num_consts, num_carry
    # Operands not differentiated (nor reached from those that are, through the carry)
    # are symbolic zeros: constants of the body's reverse mode.
    body_mask = _scan_body_mask(jaxpr, mask, nc, ncar)
    floats = float_outputs(jaxpr) if ct_given is None else \
        _scan_ct_mask(jaxpr, body_mask, nc, ncar, ct_given)
    try:
        fwd, bwd, n_res = vjp_split(jaxpr, body_mask, floats)
    except NonDifferentiableError:
        if ct_given is not None:
            raise
        # Refused for some output (a while_loop in the body): whether its cotangent is a
        # symbolic zero is known in the backward pass, which then recomputes the forward.
        plain = scan_p.bind(*primals, jaxpr=jaxpr, num_consts=nc, num_carry=ncar,
                            length=length, reverse=reverse)

        def deferred(cts: Sequence[Any]) -> list[Any]:
            given = tuple(c is not None for c in cts)
            return _scan_vjp_masked(primals, mask, jaxpr, nc, ncar, length, reverse,
                                    given)[1](cts)

        return plain, deferred
    n_out = len(jaxpr.out_avals)
    fwd, hoist = _hoist_const_residuals(fwd, nc, n_out)
    # Forward: the body's residuals leave each step as extra ys.
    res_outs = scan_p.bind(*primals, jaxpr=fwd, num_consts=nc, num_carry=ncar, length=length,
                           reverse=reverse)
    outs, residuals = res_outs[:n_out], res_outs[n_out:]
    consts = primals[:nc]
    hoisted = [primals[k] for k in hoist if k is not None]
    nh = len(hoisted)

    def backward(cts: Sequence[Any]) -> list[Any]:
        given = [zeros_like_aval(a.strip_weak()) if c is None else c
                 for c, a, fl in zip(cts, res_out_avals(), floats) if fl]
        carry_fl = floats[:ncar]
        n_cc = sum(carry_fl)
        ct_carry, ct_ys = given[:n_cc], given[n_cc:]
        const_acc = [zeros_like_aval(get_aval(c).strip_weak()) for c in consts]
        n_in = len(jaxpr.in_avals)

        def step(*args: Any) -> list[Any]:
            held, args = iter(args[:nh]), args[nh:]
            acc = args[:nc]
            cc = args[nc:nc + n_cc]
            stacked = iter(args[nc + n_cc:nc + n_cc + n_res - nh])
            res = [next(stacked) if k is None else next(held) for k in hoist]
            cy = args[nc + n_cc + n_res - nh:]
            in_cts = eval_jaxpr(bwd, *res, *cc, *cy)
            new_acc = [add_tangents(a, c) for a, c in zip(acc, in_cts[:nc])]
            ct_carry_in = [c for c, fl in zip(in_cts[nc:nc + ncar], carry_fl) if fl]
            return [*new_acc, *ct_carry_in, *in_cts[nc + ncar:n_in]]

        res_avals = [_unstacked(get_aval(r)) for r in residuals]
        cy_avals = [_unstacked(get_aval(c)) for c in ct_ys]
        step_j = _stage_fixed(step, [*_avals(hoisted), *_avals(const_acc), *_avals(ct_carry),
                                     *res_avals, *cy_avals])
        outs_b = scan_p.bind(*hoisted, *const_acc, *ct_carry, *residuals, *ct_ys,
                             jaxpr=step_j, num_consts=nh, num_carry=nc + n_cc, length=length,
                             reverse=not reverse)
        ct_consts = outs_b[:nc]
        ct_init = iter(outs_b[nc:nc + n_cc])
        ct_xs = outs_b[nc + n_cc:]
        ct_init_full = [next(ct_init) if fl else None for fl in carry_fl]
        return [c if m else None for c, m in zip([*ct_consts, *ct_init_full, *ct_xs], mask)]

    def res_out_avals() -> list[ShapedArray]:
        return [get_aval(o) for o in outs]

    return outs, backward


def _scan_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
              jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: int,
              reverse: bool) -> list[Any]:
    mask = tuple(wanted(i) for i in range(len(primals)))
    backward = _scan_vjp_masked(primals, mask, jaxpr, num_consts, num_carry, length,
                                reverse)[1]
    return list(backward(cts))


def _scan_batch(args: Sequence[Any], dims: Sequence[Any], *, jaxpr: ClosedJaxpr,
                num_consts: int, num_carry: int, length: int, reverse: bool) -> Any:
    size = batch_size(args, dims)
    nc, ncar = num_consts, num_carry
    consts = [with_batch(a, d, size) for a, d in zip(args[:nc], dims[:nc])]
    carry = [with_batch(a, d, size) for a, d in zip(args[nc:nc + ncar], dims[nc:nc + ncar])]
    # xs keep the scanned axis first and the batch axis second.
    xs = [_batch_second(a, d, size) for a, d in zip(args[nc + ncar:], dims[nc + ncar:])]
    n_in = len(args)

    def body(*a: Any) -> list[Any]:
        return vmap_flat(lambda *b: eval_jaxpr(jaxpr, *b), a, [0] * n_in, size)[0]

    x_avals = [_unstacked(get_aval(x)) for x in xs]
    body_j = _stage_fixed(body, [*_avals(consts), *_avals(carry), *x_avals])
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=body_j, num_consts=nc, num_carry=ncar,
                       length=length, reverse=reverse)
    return outs, [0] * ncar + [1] * (len(outs) - ncar)


def _batch_second(x: Any, d: int | None, size: int) -> Any:
    shape = get_aval(x).shape
    if d is None:
        return S.broadcast_in_dim(x, (shape[0], size, *shape[1:]),
                                  (0, *range(2, len(shape) + 1)))
    x = move_to_front(x, d)
    nd = len(shape)
    return S.transpose(x, (1, 0, *range(2, nd)))


scan_p.jvp, scan_p.vjp, scan_p.batch = _scan_jvp, _scan_vjp, _scan_batch
scan_p.vjp_reads = "x"
scan_p.describe(lax="scan", fusion=None, cuda=None, ufunc=None, torch_method=None)
scan_p.vjp_fwd = _scan_vjp_fwd


def _python_scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, x_leaves: list[Any],
                 x_tree: PyTreeDef, n: int, reverse: bool) -> tuple[Any, Any]:
    """JAX's scan under disable_jit: a Python loop, the ys stacked at the end."""
    if n == 0:
        raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                         "the output type is unknown.")
    carry, ys = init, []
    for i in (reversed(range(n)) if reverse else range(n)):
        carry, y = f(carry, tree_unflatten(x_tree, [x[i] for x in x_leaves]))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, tree_map(lambda *vs: S.concatenate(
        [S.expand_dims(_strong(asarray(v)), (0,)) for v in vs], 0), *ys)


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None,
         length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1, _split_transpose: bool = False) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``. Differentiable in both modes. ``unroll`` is checked
    as JAX checks it and changes nothing: a jitted loop calls its compiled body per step;
    so does JAX's experimental ``_split_transpose`` (a memory layout of its transpose).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.lax.scan(lambda c, x: (c + x, c * x), np.array(0.0), np.arange(4.0))
    (Array(6., dtype=float32), Array([0., 0., 2., 9.], dtype=float32))
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    carry, c_tree = _leaves(init)
    x_leaves, x_tree = _leaves(xs)
    if any(get_aval(x).ndim == 0 for x in x_leaves):
        bare = ", ".join(str(x) for x in tree_flatten(xs)[0] if not hasattr(x, "shape"))
        if not bare:
            # JAX reads the leading axis of a 0-d array's empty shape: its IndexError.
            raise AxisError("tuple index out of range", 0, 0)
        raise ShapeError(f"scan got value with no leading axis to scan over: {bare}.")
    sizes = [get_aval(x).shape[0] for x in x_leaves]
    if length is not None:
        n = int(length)
        if any(s != n for s in sizes):
            raise ShapeError(f"scan got `length` argument of {n} which disagrees with "
                             f"leading axis sizes {sizes}.")
    elif len(set(sizes)) > 1:
        raise ShapeError("scan got values with different leading axis sizes: "
                         f"{', '.join(str(s) for s in sizes)}.")
    elif not sizes:
        raise ShapeError("scan got no values to scan over and `length` not provided.")
    else:
        n = sizes[0]
    _check_unroll(unroll)
    if config.jit_disabled:
        return _python_scan(f, init, x_leaves, x_tree, n, bool(reverse))
    c_avals = _avals(carry)
    x_avals = [_unstacked(get_aval(x)) for x in x_leaves]
    box: list[PyTreeDef] = []

    def body(*a: Any) -> Any:
        c = tree_unflatten(c_tree, a[:len(carry)])
        x = tree_unflatten(x_tree, a[len(carry):])
        # As JAX: any node of two children is the (carry, y) pair, and the result is
        # that node over (final carry, stacked ys): a list, a dict or a namedtuple too.
        out_leaves, out_tree = tree_flatten(f(c, x))
        kids = out_tree.children
        if len(kids) != 2:
            raise TreeStructureError("scan body output must be a pair, got "
                                     f"{_pair_text(out_tree, out_leaves)}.")
        new_c_tree = kids[0]
        new_c_leaves = out_leaves[:new_c_tree.num_leaves]
        if new_c_tree != c_tree:
            _check_carry("scan body", f, c_tree, c_avals, new_c_tree,
                         [get_aval(v) for v in new_c_leaves])
        box.append(out_tree)
        return out_leaves

    scan_dbg = getattr(f, "_trace_debug", None) or TraceDebug("scan", f, (init, xs), {})
    body_j, consts, _ = _stage(body, [*c_avals, *x_avals], scan_dbg)
    if _promote_weak_carry(carry, c_avals, body_j.out_avals[:len(carry)]):
        box.clear()
        body_j, consts, _ = _stage(body, [*c_avals, *x_avals], scan_dbg)
    _check_carry("scan body", f, c_tree, c_avals, c_tree, body_j.out_avals[:len(carry)])
    outs = scan_p.bind(*consts, *carry, *x_leaves, jaxpr=body_j, num_consts=len(consts),
                       num_carry=len(carry), length=n, reverse=bool(reverse))
    # As JAX's scan: a carry the body passes through untouched comes back as the caller's
    # own object (a Python 2.0 stays 2.0); the others are the loop's Arrays.
    j, given = body_j.jaxpr, tree_flatten(init)[0]
    c_out = [given[i] if j.outvars[i] is j.invars[len(consts) + i] else o
             for i, o in enumerate(outs[:len(carry)])]
    return tree_unflatten(box[0], [*c_out, *outs[len(carry):]])


def _check_unroll(unroll: Any) -> None:
    """JAX's checks of ``unroll`` and their errors (Python's own for a float or a string)."""
    from funcgrad.errors import ConcretizationTypeError  # noqa: PLC0415

    if isinstance(unroll, Tracer):
        raise unroll._abstract_error(
            ConcretizationTypeError,
            "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, (float, np.floating)):
        raise TypeError(f"'{type(unroll).__name__}' object cannot be interpreted as an integer")
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")


def _check_bounds(lower: Any, upper: Any) -> None:
    """JAX's rule: the bounds have one type, except that a weakly typed signed integer (a
    Python int) takes the other bound's signed integer type."""
    lo, hi = get_aval(lower), get_aval(upper)
    if lo.dtype == hi.dtype:
        return
    if lo.dtype.kind == "i" and hi.dtype.kind == "i" and lo.weak_type != hi.weak_type:
        return
    raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                    f"{lo.dtype.name} and {hi.dtype.name}")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any],
              init_val: Any, *, unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With Python int bounds it is a ``scan`` (differentiable in reverse mode);
    with traced bounds a ``while_loop``.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.grad(lambda x: fg.lax.fori_loop(0, 3, lambda i, v: v * x, 1.0))(np.array(2.0))
    Array(12., dtype=float32)
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    _check_bounds(lower, upper)
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer) and \
            np.ndim(lower) == 0 and np.ndim(upper) == 0:
        if unroll is not None:
            _check_unroll(unroll)
        lo, hi = int(lower), int(upper)
        # As JAX: the index counts from the Python int ``int(lower)``, whatever the bounds'
        # dtype, so it is a weakly typed default int.
        idt = dtypes.result_type(lo)
        steps = np.arange(lo, max(lo, hi), dtype=idt)
        idx = wrap(steps, ShapedArray(steps.shape, steps.dtype, True))

        if config.jit_disabled and not len(steps):
            return init_val  # (JAX's: its Python scan refuses zero steps)

        def step(loop_carry: Any, i: Any) -> tuple[Any, None]:
            return body_fun(i, loop_carry), None

        # (JAX's message names the value loop_carry[1]: its scan carries the counter too.)
        step._carry_path = (SequenceKey(1),)  # type: ignore[attr-defined]
        # Tracer errors name body_fun's arguments, as JAX's (the scan stages the carry
        # before the index).
        step._trace_debug = TraceDebug(  # type: ignore[attr-defined]
            "fori_loop", body_fun, (0, init_val), {}, order=lambda n: [*n[1:], *n[:1]])

        # A scan over the indices (JAX carries a counter instead): the index is no
        # per-step kernel on a GPU.
        return scan(step, init_val, idx)[0]
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                         "statically known.")
    # As JAX: the index has the bounds' promoted integer type (int32 unless x64).
    # As JAX: bounds of one dtype are kept as they are (a Python int stays weakly typed);
    # otherwise the weakly typed one takes the other's dtype.
    lo_a, hi_a = _strong(asarray(lower)), _strong(asarray(upper))
    lo_t, hi_t = get_aval(lo_a), get_aval(hi_a)
    if lo_t.dtype != hi_t.dtype:
        idt = hi_t.dtype if lo_t.weak_type else lo_t.dtype
        lo_a = E.convert_element_type(lo_a, idt) if lo_t.dtype != idt else lo_a
        hi_a = E.convert_element_type(hi_a, idt) if hi_t.dtype != idt else hi_a

    def cond_fun(state: Any) -> Any:
        return E.lt(state[0], state[1])

    def body(loop_carry: Any) -> Any:
        i, u, v = loop_carry
        return (E.add(i, 1), u, body_fun(i, v))

    return while_loop(cond_fun, body, (lo_a, hi_a, init_val))[2]





def map_(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked: a scan with
    no carry (``batch_size`` maps ``vmap(f)`` over chunks of that many slices).

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> fg.lax.map(lambda x: x * 2.0, np.arange(3.0))
    Array([0., 2., 4.], dtype=float32)
    """
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    from funcgrad.transforms.vmap import vmap  # noqa: PLC0415

    # As JAX: a scan of ``vmap(f)`` over the batches that fill up (none with
    # ``batch_size=0``), then ``vmap(f)`` of the rest.
    leaves, tree = tree_flatten(xs)
    if not leaves:
        return scan(lambda c, x: (c, vmap(f)(x)), (), xs)[1]
    n = get_aval(leaves[0]).shape[0]
    num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    batch_elems = num_batches * batch_size
    if num_batches == 0:
        return vmap(f)(tree_unflatten(tree, [asarray(x)[batch_elems:] for x in leaves]))
    batched, rest = [], []
    for x in leaves:
        x = asarray(x)
        batched.append(x[:batch_elems].reshape(num_batches, batch_size, *get_aval(x).shape[1:]))
        if remainder:
            rest.append(x[batch_elems:])
    ys = scan(lambda c, x: (c, vmap(f)(x)), (), tree_unflatten(tree, batched))[1]
    if not remainder:
        return tree_map(lambda y: y.reshape(-1, *get_aval(y).shape[2:]), ys)
    rest_ys = vmap(f)(tree_unflatten(tree, rest))
    return tree_map(lambda a, b: S.concatenate([a.reshape(-1, *get_aval(a).shape[2:]), b], 0),
                    ys, rest_ys)
