"""What the profiler records while it runs (``torch.profiler.profile``): one timed range per
call of a PyTorch-face operator (a Tensor method, a ``torch`` or ``torch.nn.functional``
function), per backward node and per ``record_function`` block, nested as they ran.

The operators are wrapped only while a profiler records or a forward-AD level is open
(:func:`install`, :func:`release`; ``forward_ad`` hands each call its tangents through
``state.forward``); ``funcgrad.torch.autograd.profiler_util`` turns the ranges into
PyTorch's event lists and tables.
"""

from __future__ import annotations

import functools
import threading
import time
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any


class Range:
    """One timed range: its name, start and end (ns), the ranges that ran inside it."""

    __slots__ = ("name", "start_ns", "end_ns", "children", "parent", "shapes", "thread",
                 "kind", "nbytes")

    def __init__(self, name: str, parent: Range | None, shapes: list[list[int]],
                 kind: str) -> None:
        self.name = name
        self.parent = parent
        self.children: list[Range] = []
        self.shapes = shapes
        self.thread = threading.get_ident()
        # "op", "user" (record_function) or "autograd" (a backward node).
        self.kind = kind
        self.nbytes = 0  # bytes of the Tensors the operation returned
        self.start_ns = time.perf_counter_ns()
        self.end_ns = self.start_ns


class Recorder:
    """The ranges of one profiling session, in the order they started."""

    def __init__(self, record_shapes: bool, profile_memory: bool) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.ranges: list[Range] = []
        self.open: list[Range] = []
        self.origin_ns = time.perf_counter_ns()

    def begin(self, name: str, args: Sequence[Any] = (), kind: str = "op") -> Range:
        shapes = [_shape(a) for a in args] if self.record_shapes else []
        r = Range(name, self.open[-1] if self.open else None, shapes, kind)
        if r.parent is not None:
            r.parent.children.append(r)
        self.ranges.append(r)
        self.open.append(r)
        return r

    def end(self, r: Range, result: Any = None) -> None:
        r.end_ns = time.perf_counter_ns()
        if self.profile_memory and result is not None:
            r.nbytes = _nbytes(result)
        # (Ranges end in the reverse order they began; an exception unwinds several.)
        while self.open and self.open[-1] is not r:
            self.open.pop()
        if self.open:
            self.open.pop()


class _State:
    recorder: Recorder | None = None
    # forward_ad's handler of an operator call while a dual level is open:
    # ``forward(name, fn, args, kwargs)`` (it runs the call through run_timed).
    forward: Callable[[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any] | None \
        = None


state = _State()


def _shape(a: Any) -> list[int]:
    s = getattr(a, "shape", None)
    if s is None or isinstance(a, (int, float, complex, bool)):
        return []
    return [int(d) for d in s]


def _nbytes(result: Any) -> int:
    if isinstance(result, (list, tuple)):
        return sum(_nbytes(r) for r in result)
    data = getattr(result, "_data", None)
    return int(getattr(data, "nbytes", 0) or 0)


# Python operator methods and the ATen operators PyTorch's profiler names for them.
_DUNDER_OPS = {
    "add": "add", "radd": "add", "iadd": "add_", "sub": "sub", "rsub": "rsub",
    "isub": "sub_", "mul": "mul", "rmul": "mul", "imul": "mul_", "truediv": "div",
    "rtruediv": "reciprocal", "itruediv": "div_", "floordiv": "floor_divide",
    "rfloordiv": "floor_divide", "mod": "remainder", "rmod": "remainder", "pow": "pow",
    "rpow": "pow", "ipow": "pow_", "matmul": "matmul", "rmatmul": "matmul", "neg": "neg",
    "abs": "abs", "invert": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or",
    "xor": "bitwise_xor", "lshift": "__lshift__", "rshift": "__rshift__", "lt": "lt",
    "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne", "getitem": "index",
    "setitem": "index_put_"}

# Names of the PyTorch face that are not operators (metadata, hooks, conversions, global
# switches): PyTorch's profiler records no ATen operator for them.
_NOT_OPS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset",
    "is_contiguous", "is_floating_point", "is_complex", "is_signed", "data_ptr",
    "element_size", "get_device", "type", "tolist", "numpy", "register_hook",
    "register_post_accumulate_grad_hook", "retain_grad", "requires_grad_", "backward",
    "is_set_to", "is_shared", "is_pinned", "untyped_storage", "storage", "dim_order",
    "has_names", "is_inference", "share_memory_", "manual_seed", "seed", "initial_seed",
    "compile", "save", "load", "typename", "result_type", "promote_types", "can_cast",
    "broadcast_shapes", "vmap", "cond", "no_grad", "enable_grad",
    "inference_mode", "chunk_sizes", "nbytes", "itemsize"})
_NOT_OP_PREFIXES = ("set_", "get_", "is_", "use_", "are_", "_")


def aten_name(name: str) -> str:
    """PyTorch's profiler name for the PyTorch face's function or method ``name``."""
    if name.startswith("__") and name.endswith("__"):
        return "aten::" + _DUNDER_OPS.get(name[2:-2], name)
    return "aten::" + name


def timed_names(names: Iterable[str]) -> list[str]:
    """Of ``names``, those that are operators, and the operator methods."""
    out = [n for n in names if n not in _NOT_OPS and not n.startswith(_NOT_OP_PREFIXES)]
    return out + [f"__{d}__" for d in _DUNDER_OPS if f"__{d}__" in names]


# (owner, attribute names, ATen name prefix): the classes and modules whose operators are
# timed while a profiler records (the PyTorch face fills it when it loads: Tensor, torch,
# torch.nn.functional, torch.linalg ("linalg_"), torch.fft, torch.special). They are
# wrapped only then, so nothing is paid otherwise.
TIMED: list[tuple[Any, list[str], str]] = []
_wrapped: list[tuple[Any, str, Any]] = []


def run_timed(name: str, fn: Callable[..., Any], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
    """``fn(*args, **kwargs)`` in a range named ``name`` if a profiler records."""
    rec = state.recorder
    if rec is None or (rec.open and rec.open[-1].name == name):
        # (torch.exp(t) is t.exp(): one operator, one range)
        return fn(*args, **kwargs)
    r = rec.begin(name, args)
    result = None
    try:
        result = fn(*args, **kwargs)
        return result
    finally:
        rec.end(r, result)


def _timer(name: str, fn: Callable[..., Any], prefix: str = "") -> Callable[..., Any]:
    aten = aten_name(prefix + name)

    @functools.wraps(fn)
    def timed_call(*args: Any, **kwargs: Any) -> Any:
        forward = state.forward
        if forward is not None:
            return forward(aten, fn, args, kwargs)
        return run_timed(aten, fn, args, kwargs)

    timed_call.__profiled__ = True  # type: ignore[attr-defined]
    return timed_call


def install() -> None:
    """Wrap every operator of :data:`TIMED` (undone by :func:`release`): each call is timed
    while a profiler records, and carries tangents while a forward-AD level is open."""
    if _wrapped:
        return
    for owner, names, prefix in TIMED:
        is_class = isinstance(owner, type)
        for name in names:
            fn = owner.__dict__.get(name) if is_class else getattr(owner, name, None)
            if not isinstance(fn, types.FunctionType) or getattr(fn, "__profiled__", False):
                continue  # (classes, properties, static methods: not operators)
            _wrapped.append((owner, name, fn))
            setattr(owner, name, _timer(name, fn, prefix))


def release() -> None:
    """Unwrap the operators once neither a profiler nor forward AD needs them."""
    if state.recorder is not None or state.forward is not None:
        return
    while _wrapped:
        owner, name, fn = _wrapped.pop()
        setattr(owner, name, fn)


def begin(name: str, kind: str) -> Range | None:
    """A range around something that is not a Tensor operation (a backward node, a
    ``record_function`` block), if a profiler records."""
    rec = state.recorder
    return rec.begin(name, (), kind) if rec is not None else None


def end(r: Range | None) -> None:
    rec = state.recorder
    if r is not None and rec is not None:
        rec.end(r)
