"""The reverse-mode engine: recorded primitive applications and the one backward walk.

A forward pass under a recording trace (``funcgrad.vjp``'s, or the PyTorch face's
autograd tape) makes one :class:`Node` per primitive applied to a value that needs a
derivative. A node keeps the primitive, its params, exactly the residuals its vjp rule
reads (``Primitive.vjp_reads``; the others stand as :class:`funcgrad.core.Missing`
abstract values) and one edge per operand: ``None`` for a constant, ``(node, k)`` for
output ``k`` of another node, or a :class:`Leaf` where the differentiated inputs are.

:func:`walk` runs backward from cotangents of some edges to the leaves, in reverse
topological order, binding each rule under the current trace (so the backward pass can
itself be traced, differentiated, staged or batched). Cotangents are ``None`` while
symbolically zero; fan-out accumulates by addition. Subclasses of :class:`Node` may
replace :meth:`Node.backward` (the PyTorch face's operation nodes run an inner walk).

>>> import numpy as np
>>> import funcgrad as fg
>>> fg.grad(lambda x: (x * x).sum())(np.array([1.0, 2.0]))
Array([2., 4.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.core import EvalTrace, Missing, Primitive, _ctx, get_aval
from funcgrad.errors import NonDifferentiableError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.elementwise import convert_element_type
from funcgrad.primitives.rules import _wanted, add_tangents
from funcgrad.source_info import user_frame
from funcgrad.transforms.staged_vjp import staged_cotangents

if TYPE_CHECKING:
    from funcgrad.transforms.signatures import Signature


class Leaf:
    """Where cotangents stop: an input of the differentiated computation."""

    __slots__ = ("__weakref__",)


class Node:
    """One recorded application of a primitive (the base of every graph node)."""

    __slots__ = ("prim", "params", "primals", "outs", "parents", "rule", "in_avals",
                 "out_avals", "sig", "__weakref__")

    def __init__(self, prim: Primitive | None, params: dict[str, Any], primals: Sequence[Any],
                 outs: Sequence[Any], parents: Sequence[Edge],
                 rule: Callable[[Any], Sequence[Any]] | None = None,
                 in_avals: Sequence[ShapedArray] | None = None,
                 out_avals: Sequence[ShapedArray] | None = None) -> None:
        self.prim = prim
        self.params = params
        self.primals = tuple(primals)
        self.outs = tuple(outs)
        self.parents: tuple[Edge, ...] = tuple(parents)
        # A vjp_fwd primitive (jit, custom_vjp) hands back its own backward closure.
        self.rule = rule
        self.in_avals = tuple([get_aval(p) for p in primals]) if in_avals is None \
            else tuple(in_avals)
        self.out_avals = tuple([get_aval(o) for o in outs]) if out_avals is None \
            else tuple(out_avals)
        # The signature it was recorded with (record_signed), if any.
        self.sig: Signature | None = None

    @property
    def n_out(self) -> int:
        return len(self.out_avals)

    def backward(self, cts: Sequence[Any]) -> list[Any]:
        """Cotangents of the operands from those of the outputs (``None`` = zero)."""
        prim = self.prim
        assert prim is not None
        if self.rule is not None:
            in_cts = self.rule(list(cts) if prim.multiple_results else cts[0])
            return [None if c is None or e is None else fit_cotangent(c, a, prim)
                    for c, a, e in zip(in_cts, self.in_avals, self.parents)]
        if prim.multiple_results:
            return self._run_rule(list(cts), self.primals, self.outs)
        if type(_ctx.trace) is EvalTrace:
            staged = staged_cotangents(self, cts[0], self._run_rule)
            if staged is not None:
                return staged
        return self._run_rule(cts[0], self.primals, self.outs)

    def reads(self) -> tuple[frozenset[int], frozenset[int]]:
        """The operands and results the node's vjp rule reads (what it keeps)."""
        assert self.prim is not None
        return _normalized_reads(self.prim, len(self.in_avals), len(self.out_avals),
                                 self.parents)

    def _run_rule(self, ct: Any, primals: Sequence[Any], outs: Sequence[Any]) -> list[Any]:
        """The primitive's vjp rule on these values, its cotangents fitted to the operands."""
        prim = self.prim
        assert prim is not None and prim.vjp is not None
        # The wanted-cotangents mask, set as rules.wanting does (inlined: once per node).
        prev = _wanted.mask
        _wanted.mask = tuple([e is not None for e in self.parents])
        try:
            in_cts = prim.vjp(ct, primals, outs if prim.multiple_results else outs[0],
                              **self.params)
        finally:
            _wanted.mask = prev
        return [None if c is None or e is None else fit_cotangent(c, a, prim)
                for c, a, e in zip(in_cts, self.in_avals, self.parents)]

    def release(self) -> None:
        """Drop what backward needs (after a backward pass that does not retain it)."""
        self.primals = tuple([Missing(a) for a in self.in_avals])
        self.outs = tuple([Missing(a) for a in self.out_avals])
        self.rule = None


Edge = Union[tuple[Node, int], Leaf, None]  # noqa: UP007 - a runtime alias on Python 3.10


_READS: dict[tuple[Any, ...], tuple[frozenset[int], frozenset[int]]] = {}


def _normalized_reads(prim: Primitive, n_in: int, n_out: int,
                      parents: Sequence[Edge] = ()) -> tuple[frozenset[int], frozenset[int]]:
    # Recorded once per op: parsed once per (primitive, arity, which operands are tracked).
    mask = tuple([e is not None for e in parents]) if prim.vjp_reads_for is not None else ()
    key = (prim, prim.vjp_reads, n_in, n_out, mask)
    hit = _READS.get(key)
    if hit is None:
        hit = _READS[key] = _parse_reads(prim, n_in, n_out, parents)
    return hit


def _parse_reads(prim: Primitive, n_in: int, n_out: int,
                 parents: Sequence[Edge]) -> tuple[frozenset[int], frozenset[int]]:
    reads = prim.vjp_reads
    if prim.vjp_reads_for is not None and parents:
        reads = ",".join(r for r, e in zip(prim.vjp_reads_for, parents) if e is not None)
    if reads is None:
        raise NonDifferentiableError(
            f"primitive {prim.name} does not say which values its vjp rule reads "
            "(Primitive.vjp_reads), so it cannot be recorded for reverse mode"
        )
    if callable(reads):
        ins, outs = reads(n_in, n_out)
        return frozenset(ins), frozenset(outs)
    ins_set: set[int] = set()
    outs_set: set[int] = set()
    for tok in reads.replace(" ", "").split(","):
        if not tok:
            continue
        which, rest = tok[0], tok[1:]
        target, n = (ins_set, n_in) if which == "x" else (outs_set, n_out)
        target.update(range(n) if rest == "" else [int(rest)])
    return frozenset(ins_set), frozenset(outs_set)


def record(prim: Primitive, params: dict[str, Any], primals: Sequence[Any],
           outs: Sequence[Any], parents: Sequence[Edge],
           rule: Callable[[Any], Sequence[Any]] | None = None,
           node_type: type[Node] = Node, in_avals: Sequence[ShapedArray] | None = None,
           out_avals: Sequence[ShapedArray] | None = None,
           wrap_kept: Callable[[Any, ShapedArray], Any] | None = None) -> Node:
    """A node for one application of ``prim``, keeping only what its vjp rule reads
    (``in_avals``/``out_avals``: the operands' and results' avals, if the caller has them;
    ``wrap_kept``: makes a kept operand or result a value from a raw buffer, for callers
    that hold buffers and wrap only what is kept)."""
    if rule is not None:
        kept_in: frozenset[int] = frozenset()
        kept_out: frozenset[int] = frozenset()
    else:
        if prim.vjp is None:
            raise NonDifferentiableError(
                f"primitive {prim.name} has no reverse-mode (vjp) rule, so it cannot be "
                f"differentiated in reverse mode (at {user_frame()})"
            )
        kept_in, kept_out = _normalized_reads(prim, len(primals), len(outs), parents)
    if in_avals is None:
        in_avals = [get_aval(p) for p in primals]
    if out_avals is None:
        out_avals = [get_aval(o) for o in outs]
    if wrap_kept is not None:
        ps = [wrap_kept(p, a) if i in kept_in else Missing(a)
              for i, (p, a) in enumerate(zip(primals, in_avals))]
        os = [wrap_kept(o, a) if i in kept_out else Missing(a)
              for i, (o, a) in enumerate(zip(outs, out_avals))]
    else:
        ps = [p if i in kept_in else Missing(a)
              for i, (p, a) in enumerate(zip(primals, in_avals))]
        os = [o if i in kept_out else Missing(a)
              for i, (o, a) in enumerate(zip(outs, out_avals))]
    return node_type(prim, params, ps, os, parents, rule, in_avals, out_avals)


def fit_cotangent(ct: Any, aval: ShapedArray, prim: Primitive | None) -> Any:
    """A cotangent given the operand's dtype; a wrong shape is a rule bug, reported."""
    if type(ct) is ArrayImpl:
        ct_aval = ct._aval
        if ct_aval.shape == aval.shape and ct_aval.dtype == aval.dtype:
            return ct
    else:
        ct_aval = get_aval(ct)
    if ct_aval.shape != aval.shape:
        name = prim.name if prim is not None else "an operation"
        raise ShapeError(
            f"internal error: the vjp rule of {name} produced a cotangent of shape "
            f"{ct_aval.shape} for an operand of shape {aval.shape}"
        )
    if ct_aval.dtype != aval.dtype and dtypes.is_inexact(aval.dtype):
        ct = convert_element_type(ct, aval.dtype)
    if isinstance(ct, np.generic):
        ct = np.asarray(ct)
    return ct


class Hooks:
    """What a caller may do during a walk (the PyTorch face's hooks, saved-value checks and
    freeing): :meth:`run` runs a node's backward, once per node that receives a cotangent."""

    def run(self, node: Node, cts: list[Any]) -> list[Any]:
        """The operands' cotangents of ``node`` from its outputs' (None: zero)."""
        return node.backward(cts)


def _order(roots: Sequence[Node], stop: frozenset[Any]) -> dict[Node, int]:
    """How many edges point at each node reachable from ``roots`` (not past ``stop``)."""
    deps: dict[Node, int] = {}
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        deps.setdefault(node, 0)
        for e in node.parents:
            if type(e) is tuple and e not in stop:
                nxt = e[0]
                deps[nxt] = deps.get(nxt, 0) + 1
                if id(nxt) not in seen:
                    stack.append(nxt)
    return deps


def _all_none(values: Sequence[Any]) -> bool:
    for v in values:  # noqa: SIM110 - a loop: all() of a generator costs more per node
        if v is not None:
            return False
    return True


def walk(seeds: Sequence[tuple[Edge, Any]], hooks: Hooks | None = None,
         stop: frozenset[Any] = frozenset()) -> dict[Any, Any]:
    """Propagate cotangents from ``seeds`` (edge, cotangent) back to the leaves.

    Edges in ``stop`` are treated as leaves: their cotangent is returned, not pushed
    further. Returns the total cotangent reaching each leaf (or stop edge); those no
    path reaches are absent.
    """
    buffers: dict[Node, list[Any]] = {}
    at_leaves: dict[Any, Any] = {}
    for e, c in seeds:
        if c is None or e is None:
            continue
        if type(e) is tuple and e not in stop:
            buf = buffers.setdefault(e[0], [None] * e[0].n_out)
            buf[e[1]] = add_tangents(buf[e[1]], c)
        else:
            at_leaves[e] = add_tangents(at_leaves.get(e), c)
    deps = _order(list(buffers), stop)
    ready = [n for n in buffers if deps.get(n, 0) == 0]
    run = hooks.run if hooks is not None else None
    stops = bool(stop)
    # The loop runs once per node of the graph: the edge bookkeeping is written out here.
    while ready:
        node = ready.pop()
        cts = buffers.pop(node, None)
        in_cts = None
        if cts is not None and (cts[0] is not None if len(cts) == 1 else not _all_none(cts)):
            in_cts = run(node, cts) if run is not None else node.backward(cts)
        for i, e in enumerate(node.parents):
            if e is None:
                continue
            c = None if in_cts is None else in_cts[i]
            if type(e) is tuple and not (stops and e in stop):
                nxt, k = e
                if c is not None:
                    got = buffers.get(nxt)
                    if got is None:
                        got = buffers[nxt] = [None] * len(nxt.out_avals)
                    buf = got
                    prev = buf[k]
                    buf[k] = c if prev is None else add_tangents(prev, c)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    ready.append(nxt)
            elif c is not None:
                at_leaves[e] = add_tangents(at_leaves.get(e), c)
    return at_leaves
