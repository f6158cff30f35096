"""Signatures: what one application of a primitive is, computed once per primitive, params,
operand avals and tracked mask, for the eager recording of both faces.

A :class:`Signature` holds the shape rule's result, which operands and results the vjp rule
reads, shared placeholders for the others, the ufunc that is the impl where there is one, and
the rule staged for eager backward (:mod:`funcgrad.transforms.staged_vjp`). A caller holding
NumPy buffers looks it up (:func:`signature`), runs the impl (:meth:`Signature.impl`) and
records the node (:func:`record_signed`) without running the shape rule, parsing
``vjp_reads`` or binding through a trace.

>>> import numpy as np
>>> from funcgrad.core import ndarray_aval
>>> from funcgrad.primitives.elementwise import mul_p
>>> x = np.ones(3, np.float32)
>>> sig = signature(mul_p, {}, [ndarray_aval(x), ndarray_aval(x)], [True, False])
>>> sig.out_avals, sig.keep_in
((ShapedArray(float32[3]),), (1,))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.backends.compile_python import exact_ufunc
from funcgrad.config import CHECK_VALUES
from funcgrad.core import Missing, Primitive, abstract_eval, canonical_aval, impl_checked
from funcgrad.ir import ShapedArray
from funcgrad.transforms.reverse import Edge, Leaf, Node, _normalized_reads
from funcgrad.transforms.staged_vjp import identity_key


class Signature:
    """What one application of a primitive is, known from its operands' avals, its params
    and which operands are tracked (computed once per signature, :func:`signature`): its
    results' avals, which operands and results its vjp rule reads, and the rule staged for
    eager backward (:mod:`funcgrad.transforms.staged_vjp`) once it has come back often."""

    __slots__ = ("prim", "params", "in_avals", "out_avals", "keep_in", "keep_out",
                 "missing_in", "missing_out", "inexact_out", "exact", "ufunc", "staged",
                 "x64")

    def __init__(self, prim: Primitive, params: dict[str, Any],
                 in_avals: tuple[ShapedArray, ...], out_avals: tuple[ShapedArray, ...],
                 keep_in: tuple[int, ...], keep_out: tuple[int, ...]) -> None:
        self.prim = prim
        self.params = params
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.keep_in = keep_in  # the operands and results the vjp rule reads
        self.keep_out = keep_out
        # What a node keeps of the others: placeholders, immutable, shared by its nodes.
        self.missing_in = tuple([Missing(a) for a in in_avals])
        self.missing_out = tuple([Missing(a) for a in out_avals])
        self.inexact_out = tuple([dtypes.is_inexact(a.dtype) for a in out_avals])
        # The NumPy ufunc that is the impl for these dtypes (called directly once the impl
        # has been checked against the shape rule on this signature), if there is one.
        name = None if prim.multiple_results or params else \
            exact_ufunc(prim, (*in_avals, *out_avals))
        self.exact: Callable[..., Any] | None = None if name is None else getattr(np, name)
        self.ufunc: Callable[..., Any] | None = None
        self.staged: Any = None  # uses so far, then the staged rule (or why not)
        self.x64: bool | None = None

    def impl(self, bufs: Sequence[Any]) -> list[Any]:
        """The primitive's impl on NumPy buffers of this signature: the results' buffers.
        Where the impl is a ufunc, it is called directly once the impl's results have
        been checked against the shape rule on this signature (they cannot change)."""
        uf = self.ufunc
        if uf is not None and not CHECK_VALUES:
            out = uf(*bufs)
            return [out if type(out) is np.ndarray else np.asarray(out)]
        outs = impl_checked(self.prim, np, bufs, self.out_avals, self.params)
        self.ufunc = self.exact
        return outs


_SIGNATURES: dict[tuple[Any, ...], Signature] = {}
_TRACKED = Leaf()  # stands for "a tracked operand" where only the pattern matters


def signature(prim: Primitive, params: dict[str, Any], in_avals: Sequence[ShapedArray],
              tracked: Sequence[bool]) -> Signature | None:
    """The signature of ``prim`` applied to operands of ``in_avals`` (canonical ones,
    :func:`funcgrad.core.canonical_aval`) of which ``tracked`` need cotangents (None:
    params that cannot key a cache). Its shape rule runs here the
    first time, so a bad operand raises its error as eager evaluation does."""
    # A signature keeps its avals alive, so an identity in its key is never reused.
    key = identity_key(prim, in_avals, tracked, params)
    if key is None:
        return None
    sig = _SIGNATURES.get(key)
    if sig is None:
        if prim.vjp is None or prim.vjp_reads is None and prim.vjp_reads_for is None:
            return None  # record() says why it cannot be recorded
        out_avals = tuple([canonical_aval(a) for a in abstract_eval(prim, in_avals, params)])
        mask: list[Edge] = [_TRACKED if t else None for t in tracked]
        kept_in, kept_out = _normalized_reads(prim, len(in_avals), len(out_avals), mask)
        sig = Signature(prim, params, tuple(in_avals), out_avals, tuple(sorted(kept_in)),
                        tuple(sorted(kept_out)))
        if len(_SIGNATURES) >= 10_000:
            _SIGNATURES.clear()
        _SIGNATURES[key] = sig
    return sig


def clear_signatures() -> None:
    """Forget every signature (and the rules staged on them: ``funcgrad.clear_caches``)."""
    _SIGNATURES.clear()


def record_signed(sig: Signature, primals: Sequence[Any], outs: Sequence[Any],
                  parents: Sequence[Edge], node: Node,
                  wrap_kept: Callable[[Any, ShapedArray], Any]) -> Node:
    """:func:`record` for a caller that holds the signature and raw buffers: ``node`` (made
    with ``__new__``, its own fields set by the caller) gets the kept values, wrapped."""
    in_avals, out_avals = sig.in_avals, sig.out_avals
    node.prim = sig.prim
    node.params = sig.params
    node.primals = _kept(primals, in_avals, sig.keep_in, sig.missing_in, wrap_kept)
    node.outs = _kept(outs, out_avals, sig.keep_out, sig.missing_out, wrap_kept)
    node.parents = tuple(parents)
    node.rule = None
    node.in_avals = in_avals
    node.out_avals = out_avals
    node.sig = sig
    return node


def _kept(values: Sequence[Any], avals: Sequence[ShapedArray], keep: tuple[int, ...],
          missing: tuple[Missing, ...], wrap_kept: Callable[[Any, ShapedArray], Any]
          ) -> tuple[Any, ...]:
    """The values at ``keep``, wrapped; the shared placeholders elsewhere."""
    if not keep:
        return missing
    kept: list[Any] = list(missing)
    for i in keep:
        kept[i] = wrap_kept(values[i], avals[i])
    return tuple(kept)
