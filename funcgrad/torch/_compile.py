"""``torch.compile``: a whole PyTorch-style step staged into one program and jitted.

``compile(fn)`` returns a function that, on a call with a new guard key (see
:mod:`funcgrad.torch._compile_state`), finds the state the call may touch (argument
Tensors, parameters and buffers of the modules it reaches, their gradients, the
optimizers' state), makes each of those Tensors hold a staging tracer, and runs ``fn``
once: the forward, ``loss.backward()`` (the reverse walk binds the vjp rules under the
staging trace), ``optimizer.step()`` and ``zero_grad()`` all become equations of one
program, whose inputs are the state before the call and whose outputs are the result
and the state after it. The Tensors get their real buffers back, and this call and every
later one with the same key run the compiled program (NumPy code on the CPU, fused CUDA
kernels on the GPU) and write the new state into the same Tensor objects.

Random numbers (dropout in training mode, ``torch.rand``, a ``torch.Generator``'s draws)
are staged as inputs of the program: each call first draws them from the generators the
eager step would use, in the same order (:mod:`funcgrad.torch._draws`), so the compiled
step draws exactly the eager step's numbers (on a GPU, by that GPU's generator).

What cannot be staged is a graph break: ``.item()``, ``bool(tensor)`` (data-dependent
Python control flow), ``print``, seeding or reading a generator's state, a draw whose
parameters the step computes, optimizer state kept as Python numbers. The reason and the user's
source line are logged (``logging.getLogger("funcgrad.torch.compile")``) and kept for
``explain``, and calls with that key run ``fn`` eagerly (the whole function: PyTorch
would split it into graphs around the break). ``fullgraph=True`` raises instead.

>>> import funcgrad.torch as torch
>>> w = torch.tensor([1.0, -2.0], requires_grad=True)
>>> opt = torch.optim.SGD([w], lr=0.1)
>>> @torch.compile
... def step(x):
...     opt.zero_grad()
...     loss = (w * x).square().sum()
...     loss.backward()
...     opt.step()
...     return loss
>>> [round(step(torch.ones(2)).item(), 4) for _ in range(3)]
[5.0, 3.2, 2.048]
>>> w
tensor([ 0.5120, -1.0240], requires_grad=True)
"""

from __future__ import annotations

import functools
import linecache
import logging
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from funcgrad.core import EvalTrace, Tracer, current_trace, get_aval, new_trace
from funcgrad.errors import ConcretizationTypeError, TracerArrayConversionError
from funcgrad.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, ShapedArray, Var
from funcgrad.source_info import _is_internal
from funcgrad.staging import eval_jaxpr
from funcgrad.torch import _draws
from funcgrad.torch._compile_state import Snapshot, State, gather, signature
from funcgrad.torch._compile_trace import CompileTrace
from funcgrad.torch._device import engine_device
from funcgrad.torch._dict_order import record_orders, reorder
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._graph import BACKWARD_RUNS, X64, GradFn, OpNode, buffer_of, name_node
from funcgrad.torch._tensor import Tensor, apply_op
from funcgrad.torch.nn.module import Module
from funcgrad.transforms.jit import _pick_backend, executable, jit_p
from funcgrad.tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["BreakReason", "CompiledFunction", "ExplainOutput", "InvalidBackend",
           "OptimizedModule", "Unsupported", "compile", "config", "explain", "reset"]

log = logging.getLogger("funcgrad.torch.compile")


class _Config:
    """``torch._dynamo.config``'s knobs that apply here."""

    # Compiled programs kept per function before new keys run eagerly (PyTorch's limit).
    cache_size_limit = 8
    # Turn every compiled function into its plain Python function (debugging).
    disable = False


config = _Config()

_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs")
_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class TorchDynamoException(RuntimeError):
    """The base of ``torch.compile``'s own errors (PyTorch's ``torch._dynamo.exc`` base)."""


class Unsupported(TorchDynamoException):
    """A graph break under ``fullgraph=True`` (PyTorch's ``torch._dynamo.exc.Unsupported``)."""


class InvalidBackend(TorchDynamoException):
    """An unknown ``backend=`` (PyTorch's ``torch._dynamo.exc.InvalidBackend``)."""


class _Break(Exception):
    """Raised inside a trace by what cannot be staged (printing, seeding a generator)."""


class BreakReason:
    """Why a call could not be staged, and where in the user's code."""

    __slots__ = ("reason", "user_stack", "source_line")

    def __init__(self, reason: str, user_stack: list[str], source_line: str) -> None:
        self.reason = reason
        self.user_stack = user_stack
        self.source_line = source_line

    @property
    def location(self) -> str:
        return self.user_stack[-1] if self.user_stack else "<unknown location>"

    def __repr__(self) -> str:
        return f"BreakReason(reason={self.reason!r}, location={self.location!r})"


class ExplainOutput:
    """What ``explain`` reports (PyTorch's ``torch._dynamo.explain`` output, loosely):
    the staged programs, how many calls broke the graph, and why."""

    def __init__(self, graphs: list[ClosedJaxpr], break_reasons: list[BreakReason]) -> None:
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.break_reasons = break_reasons
        self.graph_break_count = len(break_reasons)
        self.ops_per_graph = [[e.primitive.name for e in g.jaxpr.eqns] for g in graphs]
        self.op_count = sum(len(ops) for ops in self.ops_per_graph)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {i}:")
            lines.append(f"    Reason: {b.reason}")
            lines.append(f"    User Stack: {b.location}: {b.source_line}")
        return "\n".join(lines)

    __repr__ = __str__


# ------------------------------------------------------------------- tracing


class _Tracing(threading.local):
    depth = 0


_tracing = _Tracing()


def is_compiling() -> bool:
    """Whether a compiled function is being staged right now (``torch.compiler``)."""
    return _tracing.depth > 0


def _print_breaks(*args: Any, **kwargs: Any) -> None:
    raise _Break("print() inside the compiled function (it must print on every call)")


class _HostEffects:
    """While staging: ``print`` breaks the graph; random draws become program inputs."""

    def __init__(self, trace: CompileTrace) -> None:
        self.trace = trace
        self.draws: list[_draws.Draw] = []
        self.draw_vars: list[Var] = []

    def _record(self, draw: _draws.Draw) -> Any:
        if any(isinstance(leaf, (Tracer, Tensor)) for leaf in tree_leaves(
                (draw.args, draw.kwargs))):
            raise _Break(f"a random draw ({draw.method}) whose parameters the step computes "
                         "(draw with fixed parameters and transform the numbers instead)")
        sample = draw.trial()
        aval = ShapedArray(tuple(getattr(sample, "shape", ())),
                           np.dtype(getattr(sample, "dtype", None) or np.asarray(sample).dtype))
        staged = self.trace.new_arg(aval)
        self.draws.append(draw)
        self.draw_vars.append(staged._var)
        return staged

    def __enter__(self) -> None:
        import builtins  # noqa: PLC0415

        self.print = builtins.print
        builtins.print = _print_breaks
        self.recording = _draws.recording(self._record)
        self.recording.__enter__()
        _tracing.depth += 1

    def __exit__(self, *exc: object) -> None:
        import builtins  # noqa: PLC0415

        builtins.print = self.print
        self.recording.__exit__(None, None, None)
        _tracing.depth -= 1


def _is_break(e: BaseException) -> bool:
    if isinstance(e, (_Break, _draws.Unstageable, ConcretizationTypeError,
                      TracerArrayConversionError)):
        return True
    # Tensor.item() / tolist() / numpy() of a staged value (funcgrad.torch's words).
    return isinstance(e, RuntimeError) and "it is being traced" in str(e)


def _reason(e: BaseException) -> str:
    text = str(e).split(". ")[0] if not isinstance(e, (_Break, _draws.Unstageable)) \
        else str(e)
    if isinstance(e, RuntimeError) and "it is being traced" in str(e):
        text = ("a Python value of a Tensor is needed (.item(), .tolist(), bool(), an `if` "
                "on a Tensor): data-dependent Python control flow")
    elif not _is_break(e):
        text = f"staging failed with {type(e).__name__}: {e}"
    return text


def _user_stack(e: BaseException) -> tuple[list[str], str]:
    """The user's frames in the traceback of ``e`` (outermost first), and the text of the
    innermost one's line."""
    frames: list[str] = []
    line = ""
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _is_internal(code.co_filename):
            frames.append(f"{code.co_filename}:{tb.tb_lineno} ({code.co_name})")
            line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
        tb = tb.tb_next
    return frames, line


# ------------------------------------------------------------------ programs


class _Program:
    """One staged and compiled call: the program and how its outputs go back."""

    __slots__ = ("closed", "backend", "exe", "writes", "vc", "grads", "opt_new", "freed_fns",
                 "result_tree", "result", "differentiable", "name", "draws", "moves",
                 "dict_orders")

    def __init__(self, closed: ClosedJaxpr, name: str) -> None:
        self.closed = closed
        self.name = name
        self.backend = "auto"
        self.exe: Callable[..., list[Any]] | None = None
        # (tensor position, output position): new data of a state tensor.
        self.writes: list[tuple[int, int]] = []
        # (tensor position, in-place updates it saw): version counter bumps.
        self.vc: list[tuple[int, int]] = []
        # (parameter position, kind, index): its .grad afterwards (None / a state tensor /
        # a new tensor of an output).
        self.grads: list[tuple[int, str, int]] = []
        # (optimizer, parameter position, key, output position): new optimizer state.
        self.opt_new: list[tuple[int, int, str, int]] = []
        self.result_tree: Any = None
        # The key order of each dict the function returned (the pytree sorts keys).
        self.dict_orders: dict[frozenset[Any], list[Any]] = {}
        # Per result leaf: ("out", k) a new Tensor, ("state", i) a state Tensor, or
        # ("static", value).
        self.result: list[tuple[str, Any]] = []
        # Results whose graph the step's backward ran through and freed: by result position,
        # PyTorch's name of the operation that made them (they come back with a freed
        # grad_fn of that name, as from the eager step).
        self.freed_fns: dict[int, str] = {}
        self.differentiable = False
        # The random draws the step makes, in order: inputs after the state's.
        self.draws: list[_draws.Draw] = []
        # By result position: the device a result was staged on, where that is not the
        # program's (a ``.cpu()`` of a value of a GPU step): it is moved there.
        self.moves: dict[int, str] = {}

    def run(self, st: State) -> Any:
        tensors = st.tensors
        out_tensors: list[Tensor] | None = None
        donated: set[int] = set()
        drawn = [d.replay() for d in self.draws]
        if self.differentiable and is_grad_enabled():
            closed, name, backend = self.closed, self.name, self._backend(tensors)
            res = apply_op("CompiledFunction",
                           lambda *vals: list(jit_p.bind(*vals, jaxpr=closed, name=name,
                                                         backend=backend)),
                           *tensors, *(Tensor._from_data(_buffer(v)) for v in drawn))
            out_tensors = list(res)
            outs = [t._data for t in out_tensors]
        else:
            exe = self.exe
            if exe is None:
                exe = self.exe = self._compile(tensors)
            bufs = [t._data for t in tensors]
            donated = _donatable(tensors, bufs, getattr(exe, "donated_used", ()))
            outs = exe(*bufs, *map(_buffer, drawn))
            del bufs
        taken = _taken(tensors)
        # Buffers the program wrote in place become the new data of their Tensors.
        taken.difference_update(donated)
        for i, k in self.writes:
            # As the design of eager in-place updates allows: the new buffer replaces the
            # old one (views taken of the old buffer before the call do not follow).
            tensors[i]._data = _owned(outs[k], taken)
        for i, n in self.vc:
            tensors[i]._vc[0] += n
        for i, kind, k in self.grads:
            p = tensors[i]
            if kind == "none":
                p._grad = None
            elif kind == "state":
                p._grad = tensors[k]
            else:
                p._grad = Tensor._from_data(_owned(outs[k], taken))
        for oi, pi, key, k in self.opt_new:
            st.optimizers[oi].state[tensors[pi]][key] = Tensor._from_data(_owned(outs[k], taken))
        leaves = []
        for j, (kind, v) in enumerate(self.result):
            if kind == "out":
                where = self.moves.get(j)
                if out_tensors is not None:
                    t = out_tensors[v]
                    leaves.append(t if where is None else t.to(where))
                    continue
                t = Tensor._from_data(_owned(outs[v], taken))
                if where is not None:
                    t = t.to(where)
                op = self.freed_fns.get(j)
                if op is not None and is_grad_enabled():
                    _attach_freed_node(t, op)
                leaves.append(t)
            elif kind == "state":
                leaves.append(tensors[v])
            else:
                leaves.append(v)
        return reorder(tree_unflatten(self.result_tree, leaves), self.dict_orders)

    def _backend(self, tensors: list[Tensor]) -> str:
        if self.backend == "auto":
            return _pick_backend("auto", [t._data for t in tensors])
        return self.backend

    def _compile(self, tensors: list[Tensor]) -> Callable[..., list[Any]]:
        if self.backend in ("eager", "aot_eager"):
            closed = self.closed

            def interpret(*bufs: Any) -> list[Any]:
                with X64:
                    return [buffer_of(o) for o in eval_jaxpr(closed, *bufs)]

            return interpret
        # The state it overwrites (parameters, gradients, optimizer state) is donated: the
        # new values may be written into the old buffers (see _donatable).
        # Compiled and run under X64, the program divides truly as the eager step does:
        # PyTorch's numbers, not the JAX face's reciprocal products (fused kernels are
        # generated now, the impls read the switch when they run).
        with X64:
            run = executable(self.closed, self._backend(tensors),
                             tuple(sorted({i for i, _ in self.writes})), warn=False)

        def compiled(*bufs: Any) -> list[Any]:
            with X64:
                return run(*bufs)

        compiled.donated_used = getattr(run, "donated_used", ())  # type: ignore[attr-defined]
        return compiled


def _buffer(drawn: Any) -> Any:
    """A draw's result as an array (a draw of one number gives a Python number)."""
    return drawn if hasattr(drawn, "shape") else np.asarray(drawn)


def _attach_freed_node(t: Tensor, op: str) -> None:
    """Give ``t`` the grad_fn its eager step leaves it: PyTorch's node for ``op``, already
    run by the step's backward (a second backward raises PyTorch's error)."""
    node = OpNode(op, [], [], [t._data], [])
    name_node(node, op)
    node.freed = True
    t.grad_fn, t._out_index, t._requires_grad = node, 0, True


def _tensor_refs(t: Tensor) -> int:
    return sys.getrefcount(t._data)


_t = Tensor._from_data(np.empty(1))
# References to a Tensor's buffer that nothing else holds, as ``_tensor_refs`` counts them.
_ALONE = _tensor_refs(_t)
del _t


def _donatable(tensors: list[Tensor], bufs: list[Any], used: tuple[int, ...]) -> set[int]:
    """Make ``bufs[i]`` (``i`` in ``used``: state the program overwrites) safe to write:
    a buffer that anything but its Tensor holds (a view, a NumPy array from ``.numpy()``,
    a saved tensor of a live graph, another Tensor) is copied first, so nothing the user
    can see changes before the call's results are written back. The ids of the buffers
    given up, which the results may now occupy."""
    ids = [id(b) for b in bufs]
    given = set()
    for i in used:
        d = tensors[i]._data
        own = (type(d) is np.ndarray and d.base is None and d.flags.c_contiguous
               and d.flags.writeable)
        del d
        # ``bufs`` holds one reference to each buffer.
        if own and ids.count(ids[i]) == 1 and _tensor_refs(tensors[i]) <= _ALONE + 1:
            given.add(ids[i])
        else:
            bufs[i] = bufs[i].copy()
    return given


def _owned(buf: Any, taken: set[int]) -> Any:
    """``buf`` as memory of its own for a Tensor: a compiled program may return an input,
    one buffer twice, or views of one buffer."""
    base = getattr(buf, "base", None)
    root = id(buf if base is None else base)
    if root in taken:
        buf = buf.copy()
        root = id(buf)
    taken.add(root)
    return buf


def _taken(tensors: list[Tensor]) -> set[int]:
    """The memory the state Tensors hold now (outputs must not share it)."""
    out = set()
    for t in tensors:
        d = t._data
        base = getattr(d, "base", None)
        out.add(id(d if base is None else base))
    return out


def _stage(fn: Callable[..., Any], st: State, args: tuple[Any, ...],
           kwargs: dict[str, Any], name: str) -> _Program:
    """Run ``fn`` once on staged state; build the program. The state is put back."""
    snap = Snapshot(st)
    gpu = _gpu_of(st)
    trace = CompileTrace("cpu" if gpu is None else f"cuda:{gpu}")
    effects = _HostEffects(trace)
    try:
        with effects, X64, new_trace(trace):
            ins = [trace.new_arg(get_aval(t._data)) for t in st.tensors]
            invars: list[Var] = [a._var for a in ins]
            for t, a in zip(st.tensors, ins):
                where = engine_device(t.device)
                if where != trace.device:
                    trace.devices[a._var] = where
                t._data = a
            runs = BACKWARD_RUNS[0]
            out = fn(*args, **kwargs)
            prog = _outputs(trace, st, snap, invars, effects.draw_vars, out, name,
                            BACKWARD_RUNS[0] != runs)
    finally:
        snap.restore()
    prog.draws = effects.draws
    return prog


def _gpu_of(st: State) -> int | None:
    """The GPU the step's state lives on (its draws are made there), or None."""
    for t in st.tensors:
        d = t._data
        if type(d).__module__.startswith("cupy"):
            return int(d.device.id)
    return None


def _outputs(trace: CompileTrace, st: State, snap: Snapshot, invars: list[Var],
             draw_vars: list[Var], out: Any, name: str, backward_inside: bool) -> _Program:
    """The program of a staged step (inputs: the state, then the random draws);
    ``backward_inside``: a backward pass ran in it (its results then come back detached,
    even where ``zero_grad()`` at the end left no gradient changed)."""
    outs: list[Any] = []

    def output(value: Any) -> int:
        if isinstance(value, Tracer) and value._trace is not trace:
            raise _Break("a value of another transformation (torch.func...) was stored in "
                         "the step's state")
        outs.append(trace.to_atom(value))
        return len(outs) - 1

    writes, vcs, grads, opt_new = [], [], [], []
    for i, (t, _, vc, grad, grad_fn, _, requires_grad) in enumerate(snap.tensors):
        if t.grad_fn is not None and t.grad_fn is not grad_fn:
            raise _Break("a Tensor kept by the step (a parameter, buffer or argument) was "
                         "changed in place by an operation recorded for autograd")
        if t._requires_grad != requires_grad:
            raise _Break("requires_grad of a parameter or argument changed inside the step")
        if trace.to_atom(t._data) is not invars[i]:
            writes.append((i, output(t._data)))
        if t._vc[0] != vc:
            vcs.append((i, t._vc[0] - vc))
        g = t._grad
        if g is grad:
            continue
        backward_inside = True
        if g is None:
            grads.append((i, "none", -1))
        elif id(g) in st.index:
            grads.append((i, "state", st.index[id(g)]))
        else:
            if g.grad_fn is not None:
                raise _Break("a gradient attached to the graph (create_graph=True)")
            grads.append((i, "new", output(g._data)))
    changed = snap.changed_groups()
    if changed:
        raise _Break(f"the optimizer's options {changed} changed inside the step (an lr "
                     "scheduler): step it outside the compiled function")
    for oi, (o, saved) in enumerate(snap.opt_states):
        before = {id(p): items for p, _, items in saved}
        for p, s in o.state.items():
            items = before.get(id(p), {})
            for key, v in s.items():
                old = items.get(key, _MISSING)
                if v is old:
                    continue
                if not isinstance(v, Tensor) or id(p) not in st.index:
                    raise _Break(f"{type(o).__name__} keeps '{key}' as a Python value that "
                                 "step() updates (host state)")
                opt_new.append((oi, st.index[id(p)], key, output(v._data)))
    for m, params, bufs in snap.module_stores:
        if any(params.get(k) is not v for k, v in m._parameters.items()) or any(
                bufs.get(k) is not v for k, v in m._buffers.items()):
            raise _Break(f"{type(m).__name__}.forward replaced a parameter or buffer object "
                         "(assign into it in place instead)")
    leaves, tree = tree_flatten(out, is_leaf=lambda x: isinstance(x, Tensor))
    result: list[tuple[str, Any]] = []
    wants_grad = False
    freed_fns: dict[int, str] = {}
    moves: dict[int, str] = {}
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            if id(leaf) in st.index and leaf is st.tensors[st.index[id(leaf)]]:
                result.append(("state", st.index[id(leaf)]))
            else:
                wants_grad = wants_grad or leaf._requires_grad
                fn = leaf.grad_fn
                if isinstance(fn, GradFn) and fn.freed:
                    # The step's backward ran through (and freed) its graph.
                    freed_fns[len(result)] = fn.op
                where = engine_device(leaf.device)
                if where != trace.device:
                    moves[len(result)] = where
                result.append(("out", output(leaf._data)))
        elif isinstance(leaf, Tracer):
            raise _Break("the function returned a raw traced array; return Tensors")
        else:
            result.append(("static", leaf))
    closed = ClosedJaxpr(_exact_simplified(Jaxpr(invars + draw_vars, outs, trace.eqns,
                                                 trace.constvars)), trace.consts)
    prog = _Program(closed, name)
    prog.writes, prog.vc, prog.grads, prog.opt_new = writes, vcs, grads, opt_new
    prog.result_tree, prog.result = tree, result
    record_orders(out, prog.dict_orders)
    prog.freed_fns = freed_fns
    prog.moves = moves
    prog.differentiable = wants_grad and not backward_inside and is_grad_enabled()
    return prog


def _exact_simplified(jaxpr: Jaxpr) -> Jaxpr:
    """``jaxpr`` without the operations that change no value: ``x * 1.0`` (what
    ``(1 - dampening) * grad`` stages to) and a transpose undoing a transpose (from the
    backward of a linear layer). Results stay bit for bit those of the eager step."""
    sub: dict[Var, Any] = {}
    made_by: dict[Var, Eqn] = {}
    eqns = []
    for e in jaxpr.eqns:
        ins = [sub.get(a, a) if isinstance(a, Var) else a for a in e.inputs]
        out = e.outputs[0] if len(e.outputs) == 1 else None
        name = e.primitive.name
        if out is not None and name == "mul":
            for i in (0, 1):
                one, x = ins[i], ins[1 - i]
                if isinstance(one, Literal) and not isinstance(x, Literal) and \
                        x.aval.shape == out.aval.shape and x.aval.dtype == out.aval.dtype \
                        and np.ndim(one.val) == 0 and one.val == 1:
                    sub[out] = x
                    break
            if out in sub:
                continue
        if out is not None and name == "transpose" and isinstance(ins[0], Var):
            inner = made_by.get(ins[0])
            if inner is not None and inner.primitive.name == "transpose" and all(
                    inner.params["permutation"][p] == i
                    for i, p in enumerate(e.params["permutation"])):
                sub[out] = inner.inputs[0]
                continue
        e = Eqn(e.primitive, ins, e.params, e.outputs, e.source)
        for o in e.outputs:
            made_by[o] = e
        eqns.append(e)
    outvars = [sub.get(a, a) if isinstance(a, Var) else a for a in jaxpr.outvars]
    return Jaxpr(jaxpr.invars, outvars, eqns, jaxpr.constvars)


_MISSING = object()
_EAGER = object()


# ------------------------------------------------------------------ the API


class CompiledFunction:
    """What ``torch.compile(fn)`` returns: call it as ``fn``; ``explain()`` reports the
    staged programs and graph breaks so far."""

    def __init__(self, fn: Callable[..., Any], *, fullgraph: bool = False,
                 dynamic: bool | None = None, backend: str = "inductor",
                 mode: str | None = None, explain: bool = False) -> None:
        functools.update_wrapper(self, fn)
        self._orig_fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.mode = mode
        self._explain = explain
        self._cache: dict[Hashable, Any] = {}
        self._breaks: list[BreakReason] = []
        self._graphs: list[ClosedJaxpr] = []
        self._warned_limit = False
        self.compile_times: list[float] = []
        _live.add(self)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self._orig_fn
        if config.disable or _tracing.depth or not isinstance(current_trace(), EvalTrace):
            # Inside another compiled function's staging, or under torch.func: inline.
            return fn(*args, **kwargs)
        st = gather(fn, args, kwargs)
        if any(isinstance(t._data, Tracer) for t in st.tensors):
            return fn(*args, **kwargs)
        key = signature(st)
        prog = self._cache.get(key)
        if prog is None:
            if len(self._cache) >= config.cache_size_limit:
                if not self._warned_limit:
                    self._warned_limit = True
                    warnings.warn(
                        f"torch.compile: {_name(fn)} was recompiled "
                        f"{config.cache_size_limit} times (cache_size_limit); new guard "
                        "failures now run eagerly. Guards are on shapes, dtypes, "
                        "requires_grad, training mode, optimizer options and parameter "
                        "identity.", UserWarning, stacklevel=2)
                return fn(*args, **kwargs)
            return self._first_call(st, key, args, kwargs)
        if prog is _EAGER:
            return fn(*args, **kwargs)
        return prog.run(st)

    def _first_call(self, st: State, key: Hashable, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Any:
        fn = self._orig_fn
        start = time.perf_counter()
        try:
            prog = _stage(fn, st, args, kwargs, _name(fn))
        except Exception as e:  # noqa: BLE001 - every failure to stage is a graph break
            known = _is_break(e)
            if self.fullgraph:
                frames, line = _user_stack(e)
                where = frames[-1] if frames else "<unknown location>"
                raise Unsupported(f"graph break in {_name(fn)} at {where}: `{line}`: "
                                  f"{_reason(e)} (fullgraph=True)") from e
            result = fn(*args, **kwargs) if not known else None
            # Staging failed on something eager Python also rejects: the user's error.
            self._record_break(e)
            self._cache[key] = _EAGER
            return fn(*args, **kwargs) if known else result
        prog.backend = "auto" if self.backend in ("inductor", "cudagraphs") else self.backend
        self._graphs.append(prog.closed)
        self._cache[key] = prog
        self.compile_times.append(time.perf_counter() - start)
        return prog.run(st)

    def _record_break(self, e: BaseException) -> None:
        frames, line = _user_stack(e)
        b = BreakReason(_reason(e), frames, line)
        self._breaks.append(b)
        level = logging.WARNING if self._explain else logging.INFO
        log.log(level, "graph break in %s at %s: `%s`: %s; this call runs eagerly",
                _name(self._orig_fn), b.location, line, b.reason)

    def explain(self) -> ExplainOutput:
        """The programs staged and the graph breaks met so far."""
        return ExplainOutput(list(self._graphs), list(self._breaks))

    def reset(self) -> None:
        self._cache.clear()
        self._graphs.clear()
        self._breaks.clear()
        self._warned_limit = False


_live: weakref.WeakSet[CompiledFunction] = weakref.WeakSet()


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or type(fn).__name__


def reset() -> None:
    """Forget every compiled program (``torch.compiler.reset()``)."""
    for f in list(_live):
        f.reset()


class OptimizedModule(Module):
    """What ``torch.compile(module)`` returns: a Module whose forward is compiled; the
    original is ``_orig_mod`` (parameters, state_dict keys and attributes go through it)."""

    def __init__(self, mod: Module, compiled: CompiledFunction) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled_call", compiled)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)


def _check_options(backend: Any, mode: str | None, options: Any) -> None:
    if callable(backend):
        raise InvalidBackend(
            "a callable backend receives a torch.fx GraphModule, which funcgrad does not "
            f"build; use one of {list(_BACKENDS)}")
    if backend not in _BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see "
                             f"`torch._dynamo.list_backends()` for available backends.")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(_MODES)}")


def compile(model: Any = None, *, fullgraph: bool = False,  # noqa: A001 - torch's name
            dynamic: bool | None = None, backend: Any = "inductor", mode: str | None = None,
            options: dict[str, Any] | None = None, disable: bool = False,
            explain: bool = False) -> Any:
    """Stage and jit ``model`` (a function or a Module): forward, ``backward()``,
    ``optimizer.step()`` and ``zero_grad()`` run as one compiled program.

    Guards (shapes, dtypes, ``requires_grad``, training mode, parameter identity,
    optimizer options) pick a compiled program; a new key recompiles, up to
    ``config.cache_size_limit`` programs. A graph break runs the call eagerly and is
    logged to ``logging.getLogger("funcgrad.torch.compile")`` (at WARNING with
    ``explain=True``; see ``.explain()``); ``fullgraph=True`` raises ``Unsupported``.
    ``backend``: "inductor" (jit: NumPy on the CPU, fused CUDA kernels on the GPU),
    "eager"/"aot_eager" (the staged program interpreted). ``dynamic`` and ``mode`` are
    accepted; shapes are always specialised. Used with no model, returns a decorator.

    >>> import funcgrad.torch as torch
    >>> f = torch.compile(lambda x: (x * 2).sum())
    >>> f(torch.ones(3))
    tensor(6.)
    """
    _check_options(backend, mode, options)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options,
                                 disable=disable, explain=explain)
    if disable:
        return model
    if not callable(model):
        raise RuntimeError(f"torch.compile expects a callable or a Module, got "
                           f"{type(model).__name__}")
    compiled = CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic,
                                backend=backend, mode=mode, explain=explain)
    if isinstance(model, Module):
        return OptimizedModule(model, compiled)
    return compiled


def compile_module_in_place(module: Module, *args: Any, **kwargs: Any) -> None:
    """``module.compile()``: later calls of ``module`` run its forward compiled."""
    forward = type(module).forward.__get__(module)
    object.__setattr__(module, "forward", compile(forward, *args, **kwargs))


def _module_compile(self: Module, *args: Any, **kwargs: Any) -> None:
    """Compile this module's forward in place with ``torch.compile(**kwargs)``: later
    calls run it as a staged, jitted program (PyTorch's ``Module.compile``)."""
    compile_module_in_place(self, *args, **kwargs)


# nn.Module's ``compile`` method, attached here (compiling builds on nn, not the reverse).
Module.compile = _module_compile  # type: ignore[attr-defined]


def explain(fn: Callable[..., Any]) -> Callable[..., ExplainOutput]:
    """``torch._dynamo.explain(fn)(*args)``: run ``fn`` compiled once and report the
    programs staged and the graph breaks (with reasons and user source lines).

    >>> import funcgrad.torch as torch
    >>> def f(x):
    ...     if x.sum() > 0:
    ...         return x * 2
    ...     return x
    >>> out = explain(f)(torch.ones(2))
    >>> out.graph_count, out.graph_break_count
    (0, 1)
    """
    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        compiled = CompiledFunction(fn)
        compiled(*args, **kwargs)
        return compiled.explain()

    return run

