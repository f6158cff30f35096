"""The Tensor facade's autograd engine: graph nodes, ``backward`` and ``autograd.grad``.

A node is one Tensor operation. It keeps the reverse-mode record of that
operation made by ``funcgrad.transforms.vjp`` (so the derivative formulas are the
primitives' own vjp rules), the edges to its inputs' nodes, and the version
numbers of the tensors its backward needs.

>>> import funcgrad as fg
>>> x = fg.tensor([1.0, 2.0], requires_grad=True)
>>> (g,) = fg.autograd.grad((x * x).sum(), [x])
>>> g
tensor([2., 4.])
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from funcgrad.grad_mode import set_grad_enabled

if TYPE_CHECKING:
    from funcgrad.tensor import Tensor


class AccumulateGrad:
    """The graph's edge into a leaf tensor: gradients are added to ``variable.grad``."""

    __slots__ = ("variable", "__weakref__")
    next_functions: tuple[Any, ...] = ()

    def name(self) -> str:
        return "funcgrad::autograd::AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


class Node:
    """The backward of one Tensor operation (``grad_fn`` of its outputs)."""

    __slots__ = ("op", "fn", "inputs", "edges", "backward_fn", "saved", "n_outputs",
                 "out_avals", "retained", "hooks", "constant_inputs", "__weakref__")

    def __init__(self, op: str, fn: Callable[..., Any], inputs: list[Tensor],
                 backward_fn: Callable[[Sequence[Any]], list[Any]],
                 saved: list[tuple[list[int], int, Any]], out_avals: list[Any]) -> None:
        self.op = op
        self.fn = fn
        self.inputs: list[Tensor] | None = inputs
        self.edges = tuple(_edge(t) for t in inputs)
        self.backward_fn: Callable[[Sequence[Any]], list[Any]] | None = backward_fn
        self.saved = saved
        self.n_outputs = len(out_avals)
        self.out_avals = out_avals
        self.retained: dict[int, weakref.ref[Tensor]] = {}
        self.hooks: dict[int, list[Callable[[Any], Any]]] = {}
        # Positions (among the tensor inputs) of those that need no gradient.
        self.constant_inputs: tuple[int, ...] = ()

    def name(self) -> str:
        return f"{self.op}Backward0"

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """One edge per tensor input, ``(None, 0)`` for inputs that need no gradient."""
        if not self.constant_inputs:
            return self.edges
        edges = iter(self.edges)
        n = len(self.edges) + len(self.constant_inputs)
        return tuple((None, 0) if i in self.constant_inputs else next(edges) for i in range(n))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def release(self) -> None:
        self.backward_fn = None
        self.inputs = None
        self.fn = _freed


_node_classes: dict[str, type[Node]] = {}


def node_class(op: str) -> type[Node]:
    """A Node subclass named like PyTorch's (``MulBackward0``), one per operation."""
    cls = _node_classes.get(op)
    if cls is None:
        cls = _node_classes[op] = type(f"{op}Backward0", (Node,), {"__slots__": ()})
    return cls


def _freed(*args: Any) -> Any:
    raise RuntimeError("internal: a freed graph node was called")


def _edge(t: Tensor) -> tuple[Any, int]:
    if t.grad_fn is not None:
        return (t.grad_fn, t._out_index)
    return (t._accumulator(), 0)


_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _check_saved(node: Node) -> None:
    for counter, expected, what in node.saved:
        if counter[0] != expected:
            what = what() if callable(what) else what
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{what}], is at version {counter[0]}; expected version "
                f"{expected} instead. Hint: do the in-place operation on a copy (.clone()), or "
                "after backward()."
            )


def _topo_order(roots: Sequence[Any]) -> tuple[list[Node], dict[Node, int]]:
    """Nodes reachable from ``roots`` and how many edges point to each."""
    deps: dict[Node, int] = {}
    seen: set[int] = set()
    order: list[Node] = []
    stack = [r for r in roots if isinstance(r, Node)]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        order.append(node)
        for nxt, _ in node.edges:
            if isinstance(nxt, Node):
                deps[nxt] = deps.get(nxt, 0) + 1
                if id(nxt) not in seen:
                    stack.append(nxt)
    return order, deps


def _add(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def run_backward(roots: Sequence[Tensor], root_grads: Sequence[Any], retain_graph: bool,
                 create_graph: bool, capture: Sequence[Tensor] | None = None
                 ) -> list[Any] | None:
    """Propagate gradients from ``roots``; into ``.grad`` or, with ``capture``, returned."""
    from funcgrad.tensor import Tensor  # noqa: PLC0415

    captured: dict[tuple[int, int], Any] = {}
    targets: dict[tuple[int, int], int] = {}
    if capture is not None:
        for i, t in enumerate(capture):
            node, idx = _edge(t)
            targets[(id(node), idx)] = i
            if node.__class__ is AccumulateGrad:
                targets[(id(node), idx)] = i
    buffers: dict[Node, list[Any]] = {}
    leaf_roots = []
    for r, g in zip(roots, root_grads):
        g = g if create_graph else _unwrap(g)
        if r.grad_fn is None:
            leaf_roots.append((r, g))
            continue
        buf = buffers.setdefault(r.grad_fn, [None] * r.grad_fn.n_outputs)
        buf[r._out_index] = _add(buf[r._out_index], g)
    order, deps = _topo_order([r.grad_fn for r in roots])
    ready = [n for n in order if deps.get(n, 0) == 0]

    # A leaf's gradient is complete only when every path has arrived: its hooks run
    # once, on the total, after the pass.
    pending: dict[AccumulateGrad, Any] = {}

    def deliver_leaf(acc: AccumulateGrad, g: Any) -> None:
        key = (id(acc), 0)
        if capture is not None:
            if key in targets:
                captured[key] = _add(captured.get(key), g)
            return
        pending[acc] = _add(pending.get(acc), g)

    def accumulate_leaf(acc: AccumulateGrad, g: Any) -> None:
        leaf = acc.variable
        for hook in leaf._hooks:
            out = hook(_wrap(g, create_graph))
            if out is not None:
                g = out.data if isinstance(out, Tensor) and not create_graph else out
        gt = _wrap(g, create_graph)
        if leaf.grad is None:
            # A fresh, C-ordered gradient (a matmul's backward can hand back F order).
            leaf.grad = gt if create_graph else Tensor._from_data(
                np.array(gt.data, copy=True, order="C") if isinstance(gt.data, np.ndarray)
                else gt.data)
        else:
            leaf.grad = leaf.grad + gt if create_graph else Tensor._from_data(
                leaf.grad.data + gt.data)

    for r, g in leaf_roots:
        deliver_leaf(r._accumulator(), g)

    with set_grad_enabled(create_graph):
        while ready:
            node = ready.pop()
            cts = buffers.pop(node, [None] * node.n_outputs)
            for k in range(node.n_outputs):
                if cts[k] is None:
                    continue
                for hook in node.hooks.get(k, []):
                    out = hook(_wrap(cts[k], create_graph))
                    if out is not None:
                        cts[k] = out if create_graph else _unwrap(out)
                ref = node.retained.get(k)
                kept = ref() if ref is not None else None
                if kept is not None:
                    new = _wrap(cts[k], create_graph) if create_graph else \
                        Tensor._from_data(_unwrap(cts[k]))
                    old: Any = kept.grad
                    kept.grad = new if old is None else (
                        old + new if create_graph else Tensor._from_data(old.data + new.data))
                key = (id(node), k)
                if key in targets:
                    captured[key] = _add(captured.get(key), cts[k])
            if all(c is None for c in cts):
                in_cts: list[Any] = [None] * len(node.edges)
            else:
                if node.backward_fn is None:
                    raise RuntimeError(_FREED)
                _check_saved(node)
                in_cts = _node_backward(node, cts, create_graph)
                if not retain_graph:
                    node.release()
            for (nxt, idx), g in zip(node.edges, in_cts):
                if isinstance(nxt, Node):
                    if g is not None:
                        buf = buffers.setdefault(nxt, [None] * nxt.n_outputs)
                        buf[idx] = _add(buf[idx], g)
                    deps[nxt] -= 1
                    if deps[nxt] == 0:
                        ready.append(nxt)
                elif g is not None:
                    deliver_leaf(nxt, g)
        for acc, g in pending.items():
            accumulate_leaf(acc, g)
    if capture is None:
        return None
    out = []
    for t in capture:
        node, idx = _edge(t)
        out.append(captured.get((id(node), idx)))
    return out


def _node_backward(node: Node, cts: list[Any], create_graph: bool) -> list[Any]:
    if not create_graph:
        filled = [c if c is not None or not _inexact(a) else np.zeros(a.shape, a.dtype)
                  for c, a in zip(cts, node.out_avals)]
        return node.backward_fn(filled)  # type: ignore[misc]
    # Higher order: redo the operation and its vjp as recorded Tensor operations.
    from funcgrad.tensor import Tensor, apply_op  # noqa: PLC0415
    from funcgrad.transforms.vjp import vjp_flat  # noqa: PLC0415

    inputs = node.inputs or []
    n = len(inputs)
    fn = node.fn
    ct_tensors = [c if isinstance(c, Tensor) else Tensor._from_data(
        np.zeros(a.shape, a.dtype) if c is None else c) for c, a in zip(cts, node.out_avals)]

    def vjp_of(*args: Any) -> list[Any]:
        _, _, backward = vjp_flat(fn, list(args[:n]))
        res = backward(list(args[n:]))
        return [np.zeros(np.shape(a.data), a.dtype) if r is None else r
                for r, a in zip(res, inputs)]

    return list(apply_op(f"{node.op}Backward", vjp_of, *inputs, *ct_tensors))


def _inexact(aval: Any) -> bool:
    return np.dtype(aval.dtype).kind in "fc"


def _wrap(g: Any, create_graph: bool) -> Any:
    from funcgrad.tensor import Tensor  # noqa: PLC0415

    return g if isinstance(g, Tensor) else Tensor._from_data(g)


def _unwrap(g: Any) -> Any:
    from funcgrad.tensor import Tensor  # noqa: PLC0415

    return g.data if isinstance(g, Tensor) else g


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool = False) -> tuple[Any, ...]:
    """Gradients of ``outputs`` with respect to ``inputs`` (returned, not accumulated).

    >>> import funcgrad as fg
    >>> x = fg.tensor(3.0, requires_grad=True)
    >>> (dx,) = fg.autograd.grad(x ** 3, x, create_graph=True)
    >>> fg.autograd.grad(dx, x)
    (tensor(18.),)
    """
    from funcgrad.tensor import Tensor, _root_grads  # noqa: PLC0415

    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    gs = _root_grads(outs, grad_outputs)
    retain = create_graph if retain_graph is None else retain_graph
    res = run_backward(outs, gs, retain, create_graph, capture=ins)
    assert res is not None
    result: list[Any] = []
    for i, r in enumerate(res):
        if r is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
        else:
            result.append(r if isinstance(r, Tensor) else Tensor._from_data(r))
    return tuple(result)


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False) -> None:
    """``sum(tensors).backward()``-like: accumulate gradients of ``tensors`` into leaves.

    >>> import funcgrad as fg
    >>> x = fg.tensor([1.0], requires_grad=True)
    >>> fg.autograd.backward([x * 3])
    >>> x.grad
    tensor([3.])
    """
    from funcgrad.tensor import Tensor, _root_grads  # noqa: PLC0415

    outs = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    gs = _root_grads(outs, grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    run_backward(outs, gs, retain, create_graph)
