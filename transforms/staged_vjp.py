"""Eager backward without binding: a vjp rule staged once per signature, then called on
NumPy buffers.

Reverse mode runs each node's vjp rule eagerly. On small arrays the NumPy work is a
fraction of a microsecond and the cost is the engine's: every primitive the rule binds
goes through the trace, the shape-rule cache, the impl and the Array wrap. A backward pass
applies the same few rules to the same few signatures (a training step repeats every node
of the last one), so once a signature has come back often enough its rule is traced
into a jaxpr and compiled to straight-line NumPy code (:func:`compile_jaxpr`, without
CPU fusion or rewrites: the same impl calls eager evaluation makes, in the same order, so
the cotangents are the same bit for bit). It is the same rule, staged: there is no second
set of derivatives.

A signature is the primitive, its params, the operands' and the cotangent's avals, which
operands need a cotangent and the x64 mode. Rules that cannot be staged (a
value-dependent branch, an unhashable param) keep running eagerly.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import config
from funcgrad.array import ArrayImpl, wrap
from funcgrad.backends.compile_python import compile_jaxpr
from funcgrad.config import CHECK_VALUES
from funcgrad.core import Missing, canonical_aval
from funcgrad.ir import ShapedArray
from funcgrad.staging import trace_flat

# Uses of a signature before its rule is staged: staging costs a few hundred microseconds,
# an eager rule a few microseconds more than a staged one.
STAGE_AFTER = 8
_MAX_PLANS = 4096

RunRule = Callable[[Any, Sequence[Any], Sequence[Any]], list[Any]]


class _Plan:
    """A rule compiled for one signature: what it reads and where its results go."""

    __slots__ = ("fn", "kept_in", "kept_out", "where", "avals", "keyed")

    def __init__(self, fn: Callable[..., list[Any]], kept_in: tuple[int, ...],
                 kept_out: tuple[int, ...], where: tuple[int, ...],
                 avals: tuple[ShapedArray, ...], keyed: tuple[ShapedArray, ...]) -> None:
        self.fn = fn
        self.kept_in = kept_in
        self.kept_out = kept_out
        self.where = where  # the operand each result is the cotangent of
        self.avals = avals
        self.keyed = keyed  # the avals whose identities are in the key


_UNSTAGEABLE = object()
_plans: dict[Any, Any] = {}


def staged_cotangents(node: Any, ct: Any, run_rule: RunRule) -> list[Any] | None:
    """The cotangents of ``node``'s operands from the cotangent ``ct`` of its one output,
    by the staged rule of its signature; None when the eager rule must run (not staged yet,
    not stageable, not NumPy values). ``run_rule(ct, primals, outs)`` is the eager rule
    (with the wanted mask set and the cotangents fitted), traced to stage it."""
    if type(ct) is not ArrayImpl or CHECK_VALUES:
        return None
    ctv = ct._value
    if type(ctv) is not np.ndarray:
        return None
    cfg = config.config
    stack = cfg._local.x64  # config.x64_enabled, read without the property (once per node)
    x64 = stack[-1] if stack else cfg._x64
    sig = node.sig
    ct_aval = ct._aval
    if sig is not None and (sig.x64 is None or sig.x64 == x64) and (
            ct_aval is sig.out_avals[0] or ct_aval == sig.out_avals[0]):
        # The node's signature holds its staged rule: no key to build.
        plan = sig.staged
        if type(plan) is not _Plan:
            plan = sig.staged = _counted(plan, node, ct_aval, run_rule)
            sig.x64 = x64
            if type(plan) is not _Plan:
                return None
    else:
        # A plan keeps its avals alive, so an identity in its key is never reused.
        ct_aval = canonical_aval(ct_aval)
        key = identity_key(node.prim, [ct_aval, *[canonical_aval(a) for a in node.in_avals]],
                           [x64, *[e is not None for e in node.parents]], node.params)
        if key is None:
            return None
        plan = _plans.get(key)
        if type(plan) is not _Plan:
            if len(_plans) >= _MAX_PLANS:
                _plans.clear()
            plan = _plans[key] = _counted(plan, node, ct_aval, run_rule)
            if type(plan) is not _Plan:
                return None
    args = [ctv]
    for group, idx in ((node.primals, plan.kept_in), (node.outs, plan.kept_out)):
        for i in idx:
            v = group[i]
            if type(v) is ArrayImpl:
                v = v._value
            if type(v) is not np.ndarray:
                return None  # freed, a scalar, or on a device: the eager rule decides
            args.append(v)
    res = plan.fn(*args)
    out: list[Any] = [None] * len(node.parents)
    for i, buf, aval in zip(plan.where, res, plan.avals):
        # (A cotangent passed on as it is gets the canonical aval, found by identity next.)
        out[i] = ct if buf is ctv and ct._aval is aval else wrap(buf, aval)
    return out


def identity_key(prim: Any, avals: Sequence[ShapedArray], flags: Sequence[bool],
                 params: dict[str, Any]) -> tuple[Any, ...] | None:
    """A cache key for ``prim`` on canonical ``avals`` (core.canonical_aval), with ``flags``
    and ``params``; None where a param cannot be hashed. Canonical avals are keyed by
    identity (cheaper to hash than their values: this runs once per node), weak ones (not
    interned) by value: whoever caches under the key keeps the avals alive."""
    key: tuple[Any, ...] = (prim, *[(a.shape, a.dtype) if a.weak_type else id(a)
                                    for a in avals], *flags)
    if params:
        try:
            key = (*key, *params.items())
            hash(key)
        except TypeError:
            return None
    return key


def _counted(state: Any, node: Any, ct_aval: ShapedArray, run_rule: RunRule) -> Any:
    """One more use of a signature whose rule is not staged (``state``: its uses so far,
    None for none): the new count, or the staged rule once it is used often enough."""
    if state is _UNSTAGEABLE:
        return state
    seen = 1 if state is None else state + 1
    return seen if seen < STAGE_AFTER else _stage(node, ct_aval, run_rule)


def _stage(node: Any, ct_aval: ShapedArray, run_rule: RunRule) -> Any:
    reads_in, reads_out = node.reads()
    kept_in, kept_out = tuple(sorted(reads_in)), tuple(sorted(reads_out))
    in_avals = [ct_aval, *(node.in_avals[i] for i in kept_in),
                *(node.out_avals[k] for k in kept_out)]
    where: list[int] = []

    def rule(ct: Any, *kept: Any) -> list[Any]:
        primals: list[Any] = [Missing(a) for a in node.in_avals]
        outs: list[Any] = [Missing(a) for a in node.out_avals]
        for i, v in zip(kept_in, kept):
            primals[i] = v
        for k, v in zip(kept_out, kept[len(kept_in):]):
            outs[k] = v
        cts = run_rule(ct, primals, outs)
        where.extend(i for i, c in enumerate(cts) if c is not None)
        return [c for c in cts if c is not None]

    try:
        closed, _ = trace_flat(rule, in_avals)
        fn = compile_jaxpr(closed, np, fusion_threshold=sys.maxsize, rewrite=False)
    except Exception:  # noqa: BLE001 - a rule that cannot be traced keeps running eagerly
        return _UNSTAGEABLE
    # Canonical avals: the next node's signature recognises its cotangent by identity.
    avals = tuple(canonical_aval(v.aval) for v in closed.jaxpr.outvars)
    _staged[node.prim.name] = _staged.get(node.prim.name, 0) + 1
    keyed = (canonical_aval(ct_aval), *[canonical_aval(a) for a in node.in_avals])
    return _Plan(fn.fn, kept_in, kept_out, tuple(where), avals, keyed)


def staged_count(prim: Any) -> int:
    """How many rules of ``prim`` were staged since the last :func:`clear`."""
    return _staged.get(prim.name, 0)


_staged: dict[str, int] = {}


def clear() -> None:
    """Forget the staged rules keyed here (``funcgrad.clear_caches`` also drops the
    signatures that hold the others)."""
    _plans.clear()
    _staged.clear()
