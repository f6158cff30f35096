"""What a ``torch.compile``d step may read and write: its state, and the guards on it.

A training step reads and writes Tensors it never receives as arguments: the model's
parameters and buffers, their ``.grad``, the optimizer's state. :func:`gather` finds
them from the objects the function can reach (its arguments, the names its code uses
in its globals, its closure cells, bound ``self``, and functions reached that way), in
a fixed order, and :func:`signature` turns them into the cache key a compiled program
is valid for: shapes, dtypes, devices, ``requires_grad``, which gradients exist, the
identity of parameters and optimizers, training flags, optimizer hyperparameters and
the structure of the optimizer's state.

>>> import funcgrad.torch as torch
>>> lin = torch.nn.Linear(2, 1)
>>> state = gather(lambda x: lin(x), (torch.ones(3, 2),), {})
>>> [tuple(t.shape) for t in state.tensors]
[(3, 2), (1, 2), (1,)]
"""

from __future__ import annotations

import types
from collections.abc import Callable, Hashable
from typing import Any

from funcgrad.torch import _autocast
from funcgrad.torch._dtypes import get_default_dtype
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._tensor import Tensor
from funcgrad.torch.nn.module import Module
from funcgrad.torch.optim.optimizer import Optimizer
from funcgrad.tree_util import tree_flatten

# How far the search follows containers and functions it reaches (globals of helper
# functions, lists of modules...): deep enough for training scripts, bounded for speed.
_MAX_DEPTH = 3
_MAX_ITEMS = 64


class State:
    """The Tensors a call may touch, in program-input order, and where they came from."""

    __slots__ = ("tensors", "index", "modules", "optimizers", "arg_leaves", "arg_tree",
                 "arg_slots", "grad_of")

    def __init__(self) -> None:
        self.tensors: list[Tensor] = []
        self.index: dict[int, int] = {}
        self.modules: list[Module] = []
        self.optimizers: list[Optimizer] = []
        self.arg_leaves: list[Any] = []
        self.arg_tree: Any = None
        # For each argument leaf: its position in ``tensors``, or -1 (a static value).
        self.arg_slots: list[int] = []
        # For each gradient in ``tensors``: the position of its parameter.
        self.grad_of: dict[int, int] = {}

    def add(self, t: Tensor) -> int:
        i = self.index.get(id(t))
        if i is None:
            i = self.index[id(t)] = len(self.tensors)
            self.tensors.append(t)
        return i


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def gather(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> State:
    """The state of calling ``fn(*args, **kwargs)``: argument Tensors first, then the
    parameters and buffers of the modules reached, the optimizers' state, other Tensors
    reached, and last the existing gradients of all of them."""
    st = State()
    leaves, st.arg_tree = tree_flatten((args, kwargs), is_leaf=_is_tensor)
    st.arg_leaves = leaves
    roots: list[Any] = []
    seen: set[int] = set()
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            st.arg_slots.append(st.add(leaf))
        else:
            st.arg_slots.append(-1)
            _collect(leaf, roots, seen, 0)
    _collect(fn, roots, seen, 0)
    modules: list[Module] = []
    mseen: set[int] = set()
    for r in roots:
        if isinstance(r, Module):
            _walk_modules(r, modules, mseen)
    st.modules = modules
    for m in modules:
        for p in m._parameters.values():
            if p is not None:
                st.add(p)
        for b in m._buffers.values():
            if b is not None:
                st.add(b)
    for r in roots:
        if isinstance(r, Optimizer):
            st.optimizers.append(r)
            for group in r.param_groups:
                for p in group["params"]:
                    st.add(p)
            for s in r.state.values():
                for v in s.values():
                    if isinstance(v, Tensor):
                        st.add(v)
        elif isinstance(r, Tensor):
            st.add(r)
    for i in range(len(st.tensors)):
        g = st.tensors[i]._grad
        if g is not None and id(g) not in st.index:
            st.grad_of[st.add(g)] = i
    return st


def _walk_modules(m: Module, out: list[Module], seen: set[int]) -> None:
    if id(m) in seen:
        return
    seen.add(id(m))
    out.append(m)
    for child in m._modules.values():
        if child is not None:
            _walk_modules(child, out, seen)


def _code_names(code: types.CodeType, out: list[str]) -> None:
    out.extend(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)


def _collect(x: Any, roots: list[Any], seen: set[int], depth: int) -> None:
    """Append the Modules, Optimizers and Tensors reachable from ``x`` to ``roots``."""
    if id(x) in seen or depth > _MAX_DEPTH or x is None:
        return
    if isinstance(x, (Module, Optimizer, Tensor)):
        seen.add(id(x))
        roots.append(x)
        return
    if isinstance(x, (str, bytes, int, float, complex, bool, type, types.ModuleType)):
        return
    seen.add(id(x))
    if isinstance(x, types.MethodType):
        _collect(x.__self__, roots, seen, depth)
        _collect(x.__func__, roots, seen, depth)
    elif isinstance(x, types.FunctionType):
        names: list[str] = []
        _code_names(x.__code__, names)
        g = x.__globals__
        for n in names:
            v = g.get(n)
            if v is not None:
                _collect(v, roots, seen, depth + 1)
        for cell in x.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later)
                continue
            _collect(v, roots, seen, depth + 1)
        for d in x.__defaults__ or ():
            _collect(d, roots, seen, depth + 1)
    elif isinstance(x, (list, tuple)):
        for v in x[:_MAX_ITEMS]:
            _collect(v, roots, seen, depth + 1)
    elif isinstance(x, dict):
        for v in list(x.values())[:_MAX_ITEMS]:
            _collect(v, roots, seen, depth + 1)
    elif hasattr(x, "func") and callable(x):  # functools.partial
        _collect(x.func, roots, seen, depth + 1)
        _collect(getattr(x, "args", ()), roots, seen, depth + 1)


def _static(v: Any) -> Hashable:
    """A hashable stand-in for a Python value the staged program was specialised on."""
    if isinstance(v, Tensor):
        return ("tensor", id(v))
    try:
        hash(v)
    except TypeError:
        return ("unhashable", type(v).__name__, repr(v))
    return (type(v), v)


def signature(st: State) -> Hashable:
    """The guard key: a compiled program is reused only for calls with an equal key."""
    arg_pos = {i for i in st.arg_slots if i >= 0}
    sig: list[Any] = []
    for i, t in enumerate(st.tensors):
        d = t._data
        owner = -1 if i in arg_pos or i in st.grad_of else id(t)
        sig.append((owner, type(d), d.shape, d.dtype, t._requires_grad, t._grad is None,
                    t.grad_fn is None))
    statics = tuple(_static(v) for v, s in zip(st.arg_leaves, st.arg_slots) if s < 0)
    opts = tuple(
        (id(o), tuple(tuple((k, _static(v)) for k, v in g.items() if k != "params")
                      for g in o.param_groups),
         tuple((st.index.get(id(p), -1), tuple(s)) for p, s in o.state.items()))
        for o in st.optimizers)
    training = tuple(m.training for m in st.modules)
    return (st.arg_tree, tuple(st.arg_slots), statics, tuple(sig), training, opts,
            is_grad_enabled(), get_default_dtype(), _autocast.autocast_key())


class Snapshot:
    """The Python-side state of the Tensors and optimizers before a trace, to put back."""

    __slots__ = ("tensors", "opt_states", "groups", "module_stores")

    def __init__(self, st: State) -> None:
        self.tensors = [(t, t._data, t._vc[0], t._grad, t.grad_fn, t._out_index,
                         t._requires_grad) for t in st.tensors]
        self.opt_states = [(o, [(p, s, dict(s)) for p, s in o.state.items()])
                           for o in st.optimizers]
        self.groups = [(g, dict(g)) for o in st.optimizers for g in o.param_groups]
        self.module_stores = [(m, dict(m._parameters), dict(m._buffers))
                              for m in st.modules]

    def changed_groups(self) -> list[str]:
        """The optimizer options (``lr``...) that changed since the snapshot."""
        return [k for g, items in self.groups for k, v in g.items()
                if k != "params" and (k not in items or items[k] is not v)]

    def restore(self) -> None:
        for t, data, vc, grad, grad_fn, out_index, requires_grad in self.tensors:
            t._data = data
            t._vc[0] = vc
            t._grad = grad
            t.grad_fn = grad_fn
            t._out_index = out_index
            t._requires_grad = requires_grad
        for o, saved in self.opt_states:
            o.state.clear()
            for p, s, items in saved:
                s.clear()
                s.update(items)
                o.state[p] = s
        for g, items in self.groups:
            g.clear()
            g.update(items)
        for m, params, bufs in self.module_stores:
            m._parameters.clear()
            m._parameters.update(params)
            m._buffers.clear()
            m._buffers.update(bufs)


__all__ = ["Snapshot", "State", "gather", "signature"]
