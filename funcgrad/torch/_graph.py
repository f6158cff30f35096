"""PyTorch's autograd graph on the one reverse engine (``funcgrad.transforms.reverse``).

A Tensor operation that involves a tensor requiring grad runs its computation under a
:class:`TapeTrace`: every primitive applied to a tracked value becomes an engine node
(:class:`GradFn`) keeping exactly what the primitive's vjp rule reads. An operation of
one primitive *is* that node (``MulBackward0``); an operation of several is a
:class:`OpNode` grouping them (``SoftmaxBackward0``), whose backward is an inner walk of
the same engine. ``backward()`` and ``autograd.grad`` are one more walk, with PyTorch's
hooks, ``retain_grad``, version checks, ``.grad`` accumulation and freeing.

With ``create_graph=True`` the rules run under a recording tape, their residuals lifted
back to tracked values (each residual's own graph edge), so the backward computation is
recorded too; nothing of the forward is re-run.

>>> import funcgrad.torch as torch
>>> x = torch.tensor([1.0, 2.0], requires_grad=True)
>>> y = (x * x).sum()
>>> y.grad_fn
<SumBackward0 object at ...>
>>> y.backward(); x.grad
tensor([2., 4.])
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from funcgrad import dtypes as _fdt
from funcgrad.array import ArrayImpl, wrap
from funcgrad.config import config
from funcgrad.core import (
    EvalTrace,
    MetaBuffer,
    Missing,
    PrimalTracer,
    Primitive,
    Trace,
    _ctx,
    bind_under,
    current_trace,
    get_aval,
    set_current_trace,
)
from funcgrad.ir import ShapedArray
from funcgrad.primitives.elementwise import conj, stop_gradient_p
from funcgrad.primitives.rules import place_like
from funcgrad.torch import _anomaly, _profiling
from funcgrad.torch._grad_mode import is_grad_enabled, set_grad_enabled
from funcgrad.torch._handles import RemovableHandle
from funcgrad.torch._saved_hooks import HookPair, Packed, run_pack, run_unpack
from funcgrad.transforms.reverse import (
    Edge,
    Hooks,
    Leaf,
    Node,
    record,
    walk,
)
from funcgrad.transforms.signatures import Signature, record_signed
from funcgrad.transforms.staged_vjp import staged_cotangents

if TYPE_CHECKING:
    from funcgrad.torch._tensor import Tensor


_NONE: Mapping[Any, Any] = MappingProxyType({})


def torch_ct(ct: Any, tape: Trace | None = None) -> Any:
    """PyTorch's gradient for the engine's cotangent ``ct``, or the engine's cotangent for
    PyTorch's gradient (the map is its own inverse).

    The engine's rules follow JAX: linear in the cotangent, so the gradient of a real loss
    of ``z = x + iy`` is ``dL/dx - i dL/dy``; PyTorch's is its conjugate. Both faces share
    the rules, so the PyTorch face conjugates complex values where gradients enter or leave
    the engine (seeds, ``.grad``, hooks, ``autograd.grad``, custom backward, ``torch.func``):
    ``conj(vjp(conj(g)))`` composed along a chain is ``conj(vjp(...vjp(conj(g))))``. A real
    value is returned as it is. ``tape``: the create_graph tape to record the conjugation
    on (the current trace otherwise).
    """
    if ct is None:
        return None
    aval = ct._aval if type(ct) is ArrayImpl else get_aval(ct)
    if aval.dtype.kind != "c":
        return ct
    # (complex128 must stay complex128: the JAX face's 32-bit default does not apply here)
    with X64:
        if tape is not None:
            with set_current_trace(tape):
                return conj(ct)
        return conj(ct)


class _TensorClass:
    """The Tensor class, registered by funcgrad.torch._tensor when it loads (the graph
    makes Tensors for gradients, but the Tensor module builds on the graph)."""

    cls: Any = None
    # Its in-place error description of a saved tensor (``_tensor._describe``).
    describe: Any = None


tensor_class = _TensorClass()


FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


# ------------------------------------------------------------------------- nodes


class AccumulateGrad(Leaf):
    """The graph's edge into a leaf tensor: gradients are added to ``variable.grad``."""

    __slots__ = ("variable",)
    next_functions: tuple[Any, ...] = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


class GradFn(Node):
    """A node of PyTorch's graph: ``grad_fn`` of the tensors an operation made."""

    __slots__ = ("op", "saved", "hooks", "retained", "freed", "shown_parents", "owned",
                 "shapes_only", "packed", "_metadata")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        prim = self.prim
        self._graph_fields(prim.torch_node if prim is not None and prim.torch_node
                           else "Unknown")

    def _graph_fields(self, op: str) -> None:
        """The fields PyTorch's graph adds to an engine node (every constructor sets them)."""
        self.op = op
        # Part of a composite operation (an OpNode's inner graph).
        self.owned = False
        # (version counter, version when saved, description) of each kept user tensor.
        self.saved: tuple[tuple[list[int], int, Callable[[], str]], ...] = ()
        # Most nodes never get hooks or retained outputs: one shared empty (read-only)
        # mapping until they do (hook_list, retain).
        self.hooks: Mapping[int, list[Callable[..., Any]]] = _NONE
        self.retained: Mapping[int, weakref.ref[Tensor]] = _NONE
        self.freed = False
        # The edges next_functions shows (PyTorch lists one per operand of the op).
        self.shown_parents: tuple[Edge, ...] | None = None
        # PyTorch's node saves no tensor: its rule reads constant masks or indices that
        # PyTorch rebuilds from shapes (tril, diagonal...), so a second backward is allowed
        # (set by the operation: apply_op's saves_tensors=False).
        self.shapes_only = False
        # Its kept values went through saved_tensors_hooks' pack_hook (see pack_saved).
        self.packed = False
        self._metadata: dict[str, Any] | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict kept with the node for the user's own use (PyTorch's ``Node.metadata``)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def name(self) -> str:
        n = _node_name(self.op)
        return "torch::autograd::" + n if n in _CPP_NAMED else n

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        shown = self.shown_parents if self.shown_parents is not None else self.parents
        return tuple(_shown(e) for e in shown)

    def __repr__(self) -> str:
        # (The C++ nodes' class names come without name()'s namespace.)
        return f"<{self.name().rsplit('::', 1)[-1]} object at {id(self):#x}>"

    def register_hook(self, hook: Callable[..., Any]) -> Any:
        """``hook(grad_inputs, grad_outputs)`` after this node's backward (PyTorch's node
        hooks); it may return new ``grad_inputs``."""
        hooks = self.hook_list(_POST)
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def register_prehook(self, hook: Callable[..., Any]) -> Any:
        """``hook(grad_outputs)`` before this node's backward; it may return new ones."""
        hooks = self.hook_list(_PRE)
        hooks.append(hook)
        return RemovableHandle(hooks, hook)

    def hook_list(self, k: int) -> list[Callable[..., Any]]:
        """The hooks on output ``k`` (-1: the node's own), to add to."""
        if self.hooks is _NONE:
            self.hooks = {}
        return cast(dict[int, list[Callable[..., Any]]], self.hooks).setdefault(k, [])

    def retain(self, k: int, t: Tensor) -> None:
        """Give output ``k``'s gradient to ``t`` during backward (``retain_grad``)."""
        if self.retained is _NONE:
            self.retained = {}
        cast(dict[int, Any], self.retained)[k] = weakref.ref(t)

    def keep_version(self, counter: list[int], what: Callable[[], str]) -> None:
        """Check at backward that the tensor of ``counter`` is still at its version now."""
        self.saved = (*self.saved, (counter, counter[0], what))

    def backward(self, cts: Sequence[Any]) -> list[Any]:
        if self.freed:
            raise RuntimeError(FREED)
        if self.packed:
            return self._backward_unpacked(cts)
        tape = _ctx.trace
        if type(tape) is not EvalTrace and isinstance(tape, TapeTrace) and tape.recording:
            # create_graph: the rule's residuals as tracked values, so it records.
            kept_p, kept_o = self.primals, self.outs
            self.primals = tuple(p if type(p) is Missing else tape.lift(p, e)
                                 for p, e in zip(kept_p, self.parents))
            self.outs = tuple(o if type(o) is Missing else tape.lift(o, (self, k))
                              for k, o in enumerate(kept_o))
            # The rule depends on the graph when it reads a tracked value (PyTorch then
            # records its result even where the derivative is zero, as for relu).
            reads_graph = any(type(p) is not Missing and e is not None
                              for p, e in zip(kept_p, self.parents)) or any(
                type(o) is not Missing for o in kept_o)
            start = len(tape.created)
            try:
                in_cts = super().backward(cts)
            finally:
                self.primals, self.outs = kept_p, kept_o
            if _anomaly.state.nan_check and not self.owned:
                _anomaly.check_nan(self, self.name(), in_cts)
            return _recorded_backward(self, tape, start, in_cts, reads_graph)
        if self.sig is not None and type(tape) is EvalTrace and len(cts) == 1:
            # A recorded one-result primitive: its staged rule without Node.backward's
            # dispatch (once per node of every backward pass).
            staged = staged_cotangents(self, cts[0], self._run_rule)
            in_cts = staged if staged is not None else \
                self._run_rule(cts[0], self.primals, self.outs)
        else:
            in_cts = Node.backward(self, cts)
        if _anomaly.state.nan_check and not self.owned:
            _anomaly.check_nan(self, self.name(), in_cts)
        return in_cts if self.owned else _reached_zeros(self, cts, in_cts)

    def _backward_unpacked(self, cts: Sequence[Any]) -> list[Any]:
        """The backward of a node whose kept values were packed: unpack_hook gives each back
        for this pass (PyTorch unpacks at every read, so a retained graph unpacks again)."""
        kept_p, kept_o = self.primals, self.outs
        self.primals = tuple(_unpacked(v) for v in kept_p)
        self.outs = tuple(_unpacked(v) for v in kept_o)
        self.packed = False
        try:
            return self.backward(cts)
        finally:
            if not self.freed:
                self.primals, self.outs = kept_p, kept_o
            self.packed = True

    def saves_nothing(self) -> bool:
        """True when the rule reads no operand or result (add, view, sum...): PyTorch
        saves no tensor for such a node, so a second backward through it is allowed. A
        constant read by a node inside a composite (mean's divisor) is the composite's own
        detail, not a tensor PyTorch's node would save."""
        # A rule of its own (a staged call's backward) keeps its residuals inside it.
        # (Plain loops: this runs for every node a backward pass frees.)
        if self.rule is None:
            owned = self.owned
            for p, e in zip(self.primals, self.parents):
                if type(p) is not Missing and not (owned and e is None
                                                   and getattr(p, "ndim", 0) == 0):
                    return self.shapes_only
            for v in self.outs:
                if type(v) is not Missing:
                    return self.shapes_only
            return True
        return self.shapes_only

    def release(self) -> None:
        if self.saves_nothing():
            return
        # Nothing reads a freed node's values (its backward raises first): dropped, no
        # placeholders made.
        self.primals = self.outs = ()
        self.rule = None
        self.freed = True


def _unpacked(v: Any) -> Any:
    if type(v) is not Packed:
        return v
    t = run_unpack(v.unpack, v.obj, tensor_class.cls)
    return value_of(t._data) if v.wrapped else t._data


def pack_saved(hooks: HookPair, nodes: Sequence[GradFn], tensors: Sequence[Any]) -> None:
    """Send each value the new ``nodes`` keep for backward through ``pack_hook``, keeping
    what it returns (``saved_tensors_hooks``). ``tensors``: the operation's operand and
    result Tensors, so that the hook sees the user's tensor where a kept value is one;
    an intermediate value of a composite operation is shown as a new Tensor."""
    by_buffer = {id(t._data): t for t in tensors if isinstance(t, tensor_class.cls)}

    def pack(v: Any, aval: ShapedArray, computed: bool) -> Any:
        if type(v) is Missing or type(v) is Packed:
            return v
        buf = buffer_of(v)
        t = by_buffer.get(id(buf))
        if t is None:
            if not computed:
                return v  # a constant (pow's exponent): PyTorch keeps a number, not a tensor
            t = tensor_class.cls._from_data(buf)
        return Packed(run_pack(hooks, t), hooks[1], aval, type(v) is ArrayImpl)

    for node in nodes:
        if node.saves_nothing() or node.rule is not None:
            # (A rule of its own keeps its residuals inside its closure: nothing to pack.)
            continue
        node.primals = tuple(pack(v, a, e is not None)
                             for v, a, e in zip(node.primals, node.in_avals, node.parents))
        node.outs = tuple(pack(v, a, True) for v, a in zip(node.outs, node.out_avals))
        node.packed = True
        # What backward reads is what unpack_hook gives, not the tensor: PyTorch checks no
        # version then.
        node.saved = ()


def _reached_zeros(node: Node, cts: Sequence[Any], in_cts: list[Any]) -> list[Any]:
    """The cotangents of a node's operands, with zeros where its rule gave none (a symbolic
    zero: floor, round, sign...) for an operand that requires grad: PyTorch's backward
    functions return zeros there, so a leaf reached only through them gets a zero ``.grad``,
    not None."""
    for c, e in zip(in_cts, node.parents):
        if c is None and e is not None:
            break
    else:
        return in_cts
    if len(node.in_avals) != len(in_cts):
        return in_cts  # (a composite node knows no operand types: its inner nodes did)
    out = list(in_cts)
    seen: set[Any] = set()
    for i, (c, e) in enumerate(zip(in_cts, node.parents)):
        if e is None or e in seen:
            continue
        seen.add(e)
        aval = node.in_avals[i]
        if c is None and _fdt.is_inexact(aval.dtype):
            out[i] = _zero_cotangent(aval, cts)
    return out


def _zero_cotangent(aval: ShapedArray, cts: Sequence[Any]) -> Any:
    """Zeros of ``aval`` on the device of the node's incoming cotangents."""
    ref = next((c for c in cts if c is not None), None)
    zero = np.zeros(aval.shape, aval.dtype)
    return wrap(place_like(zero, ref) if ref is not None else zero, aval)


def _shown(e: Edge) -> tuple[Any, int]:
    if e is None:
        return (None, 0)
    if type(e) is tuple:
        return e
    return (e, 0)


class OpNode(GradFn):
    """One PyTorch operation made of several primitives: its backward walks them."""

    __slots__ = ("inner_outputs", "inner_nodes", "stop")

    def __init__(self, op: str, parents: Sequence[Edge], inner_outputs: Sequence[Edge],
                 out_values: Sequence[Any], inner_nodes: Sequence[GradFn]) -> None:
        Node.__init__(self, None, {}, [], out_values, parents)
        self._graph_fields(op)
        self.inner_outputs = tuple(inner_outputs)
        self.inner_nodes = tuple(inner_nodes)
        for n in self.inner_nodes:
            n.owned = True
        self.stop = frozenset(e for e in parents if e is not None)
        self.outs = tuple(Missing(a) for a in self.out_avals)

    def backward(self, cts: Sequence[Any]) -> list[Any]:
        if self.freed:
            raise RuntimeError(FREED)
        tape = current_trace()
        recording = isinstance(tape, TapeTrace) and tape.recording
        start = len(cast(TapeTrace, tape).created) if recording else 0
        out = self._walk_inner(cts)
        if _anomaly.state.nan_check and not self.owned:
            _anomaly.check_nan(self, self.name(), out)
        if recording:
            return _recorded_backward(self, cast(TapeTrace, tape), start, out,
                                      any(e is not None for e in self.parents))
        return out

    def _walk_inner(self, cts: Sequence[Any]) -> list[Any]:
        at = walk(list(zip(self.inner_outputs, cts)), _CHECKS, self.stop)
        out: list[Any] = []
        seen: set[Any] = set()
        for e in self.parents:
            # An operand used twice (x * x) gets the total once.
            if e is None or e in seen:
                out.append(None)
                continue
            seen.add(e)
            ct = at.get(e)
            if ct is None:  # a symbolic zero (trunc's): PyTorch's backward gives zeros
                ct = self._zeros_for(e, cts)
            out.append(ct)
        return out

    def _zeros_for(self, e: Edge, cts: Sequence[Any]) -> Any:
        """Zeros of the type the inner nodes read operand ``e`` as (None if none does)."""
        for n in self.inner_nodes:
            for k, p in enumerate(n.parents):
                if p == e and k < len(n.in_avals) and _fdt.is_inexact(n.in_avals[k].dtype):
                    return _zero_cotangent(n.in_avals[k], cts)
        return None

    def release(self) -> None:
        if self.shapes_only:
            return
        for n in self.inner_nodes:
            n.release()
        self.freed = any(n.freed for n in self.inner_nodes)


# PyTorch's own double-backward nodes: the gradient of these ops, taken with
# create_graph=True, is one node named after the op's backward function.
_DOUBLE_BACKWARD = {
    "Tanh": "TanhBackward", "Sigmoid": "SigmoidBackward", "Relu": "ThresholdBackward",
    "Softmax": "SoftmaxBackwardData", "LogSoftmax": "LogSoftmaxBackwardData",
    "Gelu": "GeluBackward", "Softplus": "SoftplusBackward", "LeakyRelu": "LeakyReluBackward",
    "Elu": "EluBackward", "Celu": "EluBackward", "MseLoss": "MseLossBackward",
    "Hardtanh": "HardtanhBackward", "Hardswish": "HardswishBackward",
    "LogSigmoid": "LogSigmoidBackward", "Glu": "GluBackward",
}


def _recorded_backward(node: GradFn, tape: TapeTrace, start: int, in_cts: list[Any],
                       reads_graph: bool) -> list[Any]:
    """The cotangents a node's backward made under ``create_graph``, as PyTorch's graph has
    them: named as PyTorch names the backward node, and recorded even when constant if
    the rule read a tracked value (their derivative is then zero)."""
    name = _DOUBLE_BACKWARD.get(op_base(node.op))
    made = set(map(id, tape.created[start:]))
    out = []
    for ct in in_cts:
        if type(ct) is TapeTracer and ct._trace is tape:
            e = ct.edge
            if name is not None and type(e) is tuple and id(e[0]) in made:
                name_node(cast(GradFn, e[0]), name)
        elif ct is not None and reads_graph and name is not None:
            zero = OpNode(name, node.parents, [None], [ct], [])
            name_node(zero, name)
            tape.created.append(zero)
            ct = TapeTracer(tape, ct, (zero, 0))
        out.append(ct)
    return out


_classes: dict[tuple[type, str], type] = {}
# PyTorch's nodes that are not named after a derivative formula.
_UNSUFFIXED = frozenset({"CopySlices", "AccumulateGrad", "CondAutogradOpBackward",
                         "WhileLoopAutogradOpBackward", "NotImplemented", "CopyBackwards"})
# The C++ nodes with no derivative formula: ``name()`` gives their C++ class name.
_CPP_NAMED = frozenset({"CopySlices", "NotImplemented", "CopyBackwards"})


def op_base(op: str) -> str:
    """An operation's name without its overload: ``"Sum"`` of ``"Sum:1"``."""
    return op.partition(":")[0]


def _node_name(op: str) -> str:
    # "Sum:1" is PyTorch's second overload of sum (SumBackward1).
    base, _, overload = op.partition(":")
    return base if base in _UNSUFFIXED else f"{base}Backward{overload or 0}"


def _node_class(base: type, op: str) -> type:
    """The subclass of ``base`` named as PyTorch names ``op``'s node (made once)."""
    cls = _classes.get((base, op))
    if cls is None:
        cls = _classes[(base, op)] = type(_node_name(op), (base,),
                                          {"__slots__": (), "_named_after": op})
    return cls


def signed_node(op: str, sig: Signature, primals: Sequence[Any], outs: Sequence[Any],
                parents: Sequence[Edge], operands: Sequence[Any]) -> GradFn:
    """:func:`new_node` and :func:`name_node` in one, for a caller that holds the
    operation's signature and its raw buffers (the PyTorch face's one-primitive ops);
    ``operands``: the Tensors (or others) the buffers came from, whose versions a kept
    tracked operand's check reads."""
    node: GradFn = GradFn.__new__(_node_class(GradFn, op))
    node._graph_fields(op)
    record_signed(sig, primals, outs, parents, node, wrap)
    for i in sig.keep_in:
        if parents[i] is not None:
            t = operands[i]
            node.keep_version(t._vc, tensor_class.describe(t))
    if _anomaly.state.enabled:
        _anomaly.record(node)
    return node


def name_node(node: GradFn, op: str) -> None:
    """Give ``node`` PyTorch's name for the operation: ``op`` and a class named
    ``{op}Backward0`` (``type(y.grad_fn).__name__`` is what PyTorch prints)."""
    node.op = op
    base = type(node)
    node.__class__ = _node_class(base.__mro__[1] if "_named_after" in base.__dict__ else base,
                                 op)
    if _anomaly.state.enabled:
        _anomaly.record(node)


class _SavedChecks(Hooks):
    def run(self, node: Node, cts: list[Any]) -> list[Any]:
        if isinstance(node, GradFn):
            check_saved(node)
        return node.backward(cts)


_CHECKS = _SavedChecks()


def check_saved(node: GradFn) -> None:
    if node.freed:
        raise RuntimeError(FREED)
    for counter, expected, what in node.saved:
        if counter[0] != expected:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: {what()} is at version {counter[0]}; expected version "
                f"{expected} instead. Hint: enable anomaly detection to find the operation "
                "that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."
            )


# The keys of a node's own hooks in its hook lists (tensor hooks use the output's index).
_POST, _PRE = -1, -2




# ------------------------------------------------------------------ the recording


class TapeTracer(PrimalTracer):
    """A tracked value inside one Tensor operation: its value, graph edge, version info."""

    __slots__ = ("edge", "vc", "describe")

    def __init__(self, trace: TapeTrace, primal: Any, edge: Edge,
                 vc: list[int] | None = None, describe: Callable[[], str] | None = None
                 ) -> None:
        self._trace = trace
        self.primal = primal
        self.edge = edge
        self.vc = vc
        self.describe = describe


class TapeTrace(Trace):
    """Records the primitives of one Tensor operation (or of a backward pass with
    ``create_graph=True``) into PyTorch's graph."""

    label = "PyTorch autograd recording"

    def __init__(self, parent: Trace, recording: bool = True,
                 names_nodes: bool = False) -> None:
        self.parent = parent
        self.recording = recording
        # create_graph's tape names each node it records (a Tensor operation's tape leaves
        # that to the operation, which knows PyTorch's name).
        self.names_nodes = names_nodes
        self.created: list[GradFn] = []

    def lift(self, value: Any, edge: Edge, vc: list[int] | None = None,
             describe: Callable[[], str] | None = None) -> Any:
        if edge is None and vc is None:
            return value
        return TapeTracer(self, value, edge, vc, describe)

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        primals: list[Any] = []
        parents: list[Edge] = []
        tracked = False
        for a in args:
            if type(a) is TapeTracer and a._trace is self:
                primals.append(a.primal)
                parents.append(a.edge)
                tracked = tracked or a.edge is not None
            else:
                primals.append(a)
                parents.append(None)
        parent: Trace = self.parent  # type: ignore[assignment]
        if not (tracked and self.recording) or prim is stop_gradient_p:
            # (What stop_gradient returns is a constant: nothing computed from it inside
            # the operation needs a node.)
            return bind_under(parent, prim, primals, params)
        rule = None
        if prim.vjp_fwd is not None:
            with set_current_trace(parent):
                out, rule = prim.vjp_fwd(primals, **params)
        else:
            out = bind_under(parent, prim, primals, params)
        outs = list(out) if prim.multiple_results else [out]
        node = new_node(prim, params, primals, outs, parents, [
            (a.vc, a.describe) if type(a) is TapeTracer and a.vc is not None else None
            for a in args], rule)
        self.created.append(node)
        if self.names_nodes:
            name_node(node, node.op)
        wrapped = [TapeTracer(self, o, (node, k)) if _fdt.is_inexact(a.dtype) else o
                   for k, (o, a) in enumerate(zip(outs, node.out_avals))]
        return wrapped if prim.multiple_results else wrapped[0]


def _anonymous() -> str:
    return "[a tensor]"


def new_node(prim: Primitive, params: dict[str, Any], primals: Sequence[Any],
             outs: Sequence[Any], parents: Sequence[Edge],
             versions: Sequence[tuple[list[int], Callable[[], str] | None] | None],
             rule: Callable[[Any], Sequence[Any]] | None = None,
             in_avals: Sequence[ShapedArray] | None = None,
             out_avals: Sequence[ShapedArray] | None = None,
             wrap_kept: Callable[[Any, ShapedArray], Any] | None = None) -> GradFn:
    """The graph node of one primitive applied to tracked values: what its vjp rule reads,
    and the version of each user tensor it keeps (``versions``: the tensor's counter and
    description, or the Tensor to describe, per operand; None for values that are not user
    tensors), so that an in-place change before backward is caught."""
    node: GradFn = record(prim, params, primals, outs, parents, rule,  # type: ignore[assignment]
                          GradFn, in_avals, out_avals, wrap_kept)
    for v, p in zip(versions, node.primals):
        if v is not None and type(p) is not Missing:
            what = v[1]
            if isinstance(what, tensor_class.cls):
                # described only now that it is kept (most operands of a chain are not)
                what = tensor_class.describe(what)
            node.keep_version(v[0], what or _anonymous)
    return node


class _X64:
    """64-bit dtypes stay 64-bit inside PyTorch-face operations (the JAX face's x64 switch
    does not apply to this face), and floats divide truly (as PyTorch's kernels do; the JAX
    face multiplies by the reciprocal of a broadcast divisor, as XLA does)."""

    __slots__ = ()

    def __enter__(self) -> None:
        config._local.x64.append(True)
        config._local.true_division.append(True)

    def __exit__(self, *exc: object) -> None:
        config._local.x64.pop()
        config._local.true_division.pop()


X64 = _X64()


# ------------------------------------------------------------------ backward


class TorchHooks(Hooks):
    """PyTorch's behaviour during a walk: tensor hooks, retain_grad, captures for
    ``autograd.grad``, saved-tensor checks and freeing."""

    def __init__(self, retain_graph: bool, create_graph: bool,
                 capture: dict[tuple[int, int], int] | None) -> None:
        self.retain = retain_graph
        self.create = create_graph
        self.capture = capture
        self.captured: dict[int, Any] = {}
        self.current: GradFn | None = None  # the node whose backward runs (anomaly mode)
        self.deferred: list[GradFn] = []

    def run(self, node: Node, cts: list[Any]) -> list[Any]:
        if not isinstance(node, GradFn):
            return node.backward(cts)
        if self.capture is not None or node.hooks or node.retained:
            cts = [None if c is None else self._output(node, k, c) for k, c in enumerate(cts)]
            if _PRE in node.hooks:
                cts = self._node_hooks(node, _PRE, cts, None)
        if node.freed or node.saved:
            check_saved(node)
        self.current = node
        if _profiling.state.recorder is not None:
            in_cts = _profiled(node.name(), node.backward, cts)
        else:
            in_cts = node.backward(cts)
        if _POST in node.hooks:
            in_cts = self._node_hooks(node, _POST, in_cts, cts)
        if not self.retain:
            if node.owned or isinstance(node, OpNode):
                # A graph made with create_graph can reach a composite's inner nodes both
                # through the composite and directly: free them when the walk is over.
                self.deferred.append(node)
            else:
                node.release()
        return in_cts

    def _node_hooks(self, node: GradFn, which: int, grads: list[Any],
                    outputs: list[Any] | None) -> list[Any]:
        """Run the node's pre-hooks (``hook(grad_outputs)``) or hooks
        (``hook(grad_inputs, grad_outputs)``); each may replace what it was given."""
        Tensor = tensor_class.cls  # noqa: N806

        def wrap(cts: Sequence[Any]) -> tuple[Any, ...]:
            return tuple(None if c is None else
                         Tensor._wrap_grad(torch_ct(c), detach=not self.create) for c in cts)

        shown = wrap(grads)
        for hook in list(node.hooks[which]):
            out = hook(shown) if outputs is None else hook(shown, wrap(outputs))
            if out is None:
                continue
            out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if len(out) != len(shown):
                what = "grad_outputs" if outputs is None else "grad_inputs"
                raise RuntimeError(f"hook '{getattr(hook, '__name__', 'hook')}' has returned "
                                   f"an incorrect number of values (got {len(out)}, but "
                                   f"expected {len(shown)}) for {what}")
            if any(a is None and b is not None for a, b in zip(shown, out, strict=True)):
                raise RuntimeError("can't replace a None gradient with a non-None value")
            shown = out
        return [None if g is None else torch_ct(g._value_for_backward()) for g in shown]

    def _output(self, node: GradFn, k: int, ct: Any) -> Any:
        """Tensor hooks, retain_grad and autograd.grad's captures see output ``k``'s total
        cotangent (a hook may replace it)."""
        Tensor = tensor_class.cls  # noqa: N806

        for hook in node.hooks.get(k, ()):
            out = hook(Tensor._wrap_grad(torch_ct(ct)))
            if out is not None:
                ct = torch_ct(out._value_for_backward())
        ref = node.retained.get(k)
        kept = ref() if ref is not None else None
        if kept is not None:
            g = Tensor._wrap_grad(torch_ct(ct), detach=not self.create)
            kept.grad = g if kept.grad is None else kept.grad + g
        if self.capture is not None:
            i = self.capture.get((id(node), k))
            if i is not None:
                self.captured[i] = ct
        return ct

    def finish(self) -> None:
        for node in self.deferred:
            node.release()
        self.deferred.clear()


# Backward passes started so far (torch.compile tells a step that ran backward inside).
BACKWARD_RUNS = [0]
# The callbacks queued during each running backward pass (innermost last).
_QUEUED: list[list[Callable[[], Any]]] = []


def queue_callback(callback: Callable[[], Any]) -> None:
    """Run ``callback()`` when the running backward pass is over, its ``.grad`` written
    (PyTorch's ``Variable._execution_engine.queue_callback``)."""
    if not _QUEUED:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _QUEUED[-1].append(callback)


def _run_queued(queued: list[Callable[[], Any]]) -> None:
    # (A callback may queue more.)
    while queued:
        queued.pop(0)()


def run_backward(roots: Sequence[Tensor], grads: Sequence[Any], retain_graph: bool,
                 create_graph: bool, inputs: Sequence[Tensor] | None = None
                 ) -> list[Any] | None:
    """Backpropagate from ``roots``; into ``.grad`` of leaves, or, with ``inputs``
    (``autograd.grad``), return the gradients of those tensors."""
    Tensor = tensor_class.cls  # noqa: N806

    BACKWARD_RUNS[0] += 1
    capture: dict[tuple[int, int], int] | None = None
    leaf_targets: dict[int, int] = {}
    if inputs is not None:
        capture = {}
        for i, t in enumerate(inputs):
            e = t._edge()
            if type(e) is tuple:
                capture[(id(e[0]), e[1])] = i
            elif e is not None:
                leaf_targets[id(e)] = i
    hooks = TorchHooks(retain_graph, create_graph, capture)
    parent = current_trace()
    tape = TapeTrace(parent, recording=True, names_nodes=True) if create_graph else None
    seeds = []
    for r, g in zip(roots, grads):
        ct = g._value_for_backward() if isinstance(g, Tensor) else g
        if tape is not None and isinstance(g, Tensor) and g.requires_grad:
            ct = tape.lift(ct, g._edge())
        seeds.append((r._edge(), torch_ct(ct, tape)))
    queued: list[Callable[[], Any]] = []
    _QUEUED.append(queued)
    try:
        return _backward_pass(seeds, hooks, tape, inputs, leaf_targets, queued)
    finally:
        _QUEUED.remove(queued)


def _backward_pass(seeds: list[tuple[Edge, Any]], hooks: TorchHooks, tape: TapeTrace | None,
                   inputs: Sequence[Tensor] | None, leaf_targets: dict[int, int],
                   queued: list[Callable[[], Any]]) -> list[Any] | None:
    create_graph = tape is not None
    with set_grad_enabled(create_graph), X64:
        try:
            if tape is not None:
                with set_current_trace(tape):
                    at = walk(seeds, hooks)
            else:
                at = walk(seeds, hooks)
        except Exception:
            if _anomaly.state.enabled and hooks.current is not None:
                # PyTorch's warning: the node that failed and where its forward ran.
                node = hooks.current
                _anomaly.warn_failed(node.name(), node)
            raise
        finally:
            hooks.finish()
    if inputs is not None:
        out: list[Any] = [None] * len(inputs)
        hooked: dict[int, Any] = {}
        for leaf, ct in at.items():
            target = leaf_targets.get(id(leaf))
            if target is not None:
                out[target] = ct
                if isinstance(leaf, AccumulateGrad) and leaf.variable._hooks:
                    hooked[target] = leaf.variable
        for i, ct in hooks.captured.items():
            out[i] = ct
        grads = [None if c is None else _as_grad(torch_ct(c, tape), tape) for c in out]
        for i, variable in hooked.items():
            # A leaf's tensor hooks run on the gradient autograd.grad returns for it too.
            grads[i] = _leaf_hooks(variable, grads[i])
        _run_queued(queued)
        return grads
    while at:
        # Popped, so that a cotangent nothing else holds can become the .grad as it is.
        leaf, ct = at.popitem()
        if isinstance(leaf, AccumulateGrad):
            if _profiling.state.recorder is not None:
                _profiled(leaf.name(), functools.partial(_accumulate, leaf.variable, tape=tape),
                          ct)
            else:
                _accumulate(leaf.variable, ct, tape)
        del ct
    _run_queued(queued)
    return None


def _profiled(name: str, run: Callable[[Any], Any], cts: Any) -> Any:
    """A backward node's work inside the profiler's ranges, named as PyTorch's engine
    names them."""
    outer = _profiling.begin("autograd::engine::evaluate_function: " + name, "autograd")
    inner = _profiling.begin(name, "autograd")
    try:
        return run(cts)
    finally:
        _profiling.end(inner)
        _profiling.end(outer)


def _as_grad(ct: Any, tape: TapeTrace | None) -> Tensor:
    Tensor = tensor_class.cls  # noqa: N806

    if tape is not None and type(ct) is TapeTracer and ct._trace is tape:
        return Tensor._from_tracer(ct, tape)
    return Tensor._wrap_grad(ct)


def _leaf_hooks(leaf: Tensor, g: Any) -> Any:
    for hook in leaf._hooks:
        if type(hook) is PostAccumulateHook:
            continue
        out = hook(g)
        if out is not None:
            g = out
    return g


def _accumulate(leaf: Tensor, ct: Any, tape: TapeTrace | None) -> None:
    Tensor = tensor_class.cls  # noqa: N806

    if tape is None and leaf.grad is None and not leaf._hooks and _stealable(ct):
        # PyTorch's AccumulateGrad steals a new gradient nothing else refers to instead
        # of copying it (a 784 x 512 weight's: 1.6 MB less at the peak of backward).
        buf = buffer_of(ct)
        buf.flags.writeable = True
        if buf.dtype.kind == "c":
            # (the buffer is the gradient's alone: conjugated where it lies)
            np.conjugate(buf, out=buf)
        leaf.grad = Tensor._from_data(buf)
        return
    g = _leaf_hooks(leaf, _as_grad(torch_ct(ct, tape), tape))
    if leaf.grad is None:
        if tape is not None and g.grad_fn is not None:
            # PyTorch's AccumulateGrad, recording, copies the gradient into a new tensor of
            # the leaf's layout: new_empty_strided(...).copy_(grad) (CopyBackwards).
            with set_grad_enabled(True):
                g = g.new_empty(tuple(g.shape)).copy_(g)
        # A fresh, C-ordered gradient that nothing else aliases.
        leaf.grad = g if tape is not None else Tensor._from_data(_fresh(g._data))
    elif tape is not None:
        leaf.grad = cast(Any, leaf.grad) + g
    elif cast(Any, leaf.grad).is_sparse:
        # (a sparse gradient, Embedding(sparse=True)'s, met by a strided one: a strided sum)
        leaf.grad = g + leaf.grad
    else:
        old, new = leaf.grad, g._data
        buf = old._data
        if type(buf) is np.ndarray and buf.flags.writeable and type(new) is np.ndarray \
                and buf.shape == new.shape and buf.dtype == new.dtype \
                and old.grad_fn is None and not old._requires_grad:
            # PyTorch's AccumulateGrad adds into the existing .grad in place: a reference
            # taken to it earlier sees the sum, and no new buffer is allocated.
            buf += new
            old._vc[0] += 1
        else:
            total = buf + new
            # 0-d operands give a NumPy scalar, which a Tensor must not hold.
            leaf.grad = Tensor._from_data(np.asarray(total) if isinstance(total, np.generic)
                                          else total)
    for hook in leaf._hooks:
        if type(hook) is PostAccumulateHook:
            hook.fn(leaf)


class PostAccumulateHook:
    """A leaf's hook that runs after its ``.grad`` is updated (it gets the leaf itself);
    kept in the leaf's hook list, marked by this type."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], None]) -> None:
        self.fn = fn


def _stealable(ct: Any) -> bool:
    """Whether ``ct`` (the caller's only reference, popped from the walk's results) is a
    C-ordered NumPy buffer that owns its memory and that no other object refers to: the
    value a vjp rule just computed, not an operand, a seed, a cached constant or a
    cotangent shared with another leaf."""
    # References expected: run_backward's local, _accumulate's and this function's
    # parameters, getrefcount's own argument (and ``buf`` below for a bare buffer).
    if type(ct) is ArrayImpl:
        if sys.getrefcount(ct) > 4:
            return False
        buf = ct._value
        expected = 3  # the ArrayImpl's field, ``buf``, getrefcount's argument
    else:
        buf, expected = ct, 5
    # (An engine value is read-only; a buffer it owns alone may be made writable again.)
    return type(buf) is np.ndarray and buf.flags.c_contiguous and buf.flags.owndata and \
        sys.getrefcount(buf) <= expected


def _fresh(buf: Any) -> Any:
    import numpy as np  # noqa: PLC0415

    if type(buf) is np.ndarray:
        return np.array(buf, copy=True, order="C")
    return buf.copy()


# ------------------------------------------------------------------ one operation


def value_of(buf: Any) -> Any:
    """A Tensor's buffer as an engine value (an Array view of it, or a tracer)."""
    if type(buf).__module__.startswith("numpy") or type(buf).__module__.startswith("cupy") \
            or type(buf) is MetaBuffer:
        return wrap(buf, ShapedArray.make(tuple(buf.shape), buf.dtype))
    return buf


def buffer_of(value: Any) -> Any:
    return value._value if type(value) is ArrayImpl else value


__all__ = ["AccumulateGrad", "GradFn", "OpNode", "TapeTrace", "TapeTracer", "X64",
           "is_grad_enabled", "name_node", "new_node", "run_backward", "signed_node",
           "torch_ct"]
