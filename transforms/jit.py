"""``jit``: stage a function to a jaxpr once per signature, compile it, run it.

At top level a jitted call looks its signature up in a cache (pytree structure,
abstract values incl. weak types, static arguments, backend) and runs the
compiled program. Under another transformation it binds the ``jit`` call
primitive, whose rules produce new jaxprs that are compiled in turn: the
derivative of a jitted function is a compiled forward (saving residuals) and a
compiled backward.

>>> import numpy as np
>>> import funcgrad as fg
>>> f = fg.jit(lambda x: fg.numpy.sin(x) * 2.0)
>>> f(np.zeros(2))
Array([0., 0.], dtype=float32)
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
import time
import types
import warnings
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes, monitoring
from funcgrad.array import ArrayImpl, wrap
from funcgrad.config import CHECK_VALUES, config
from funcgrad.core import (
    DEOPTIMIZED,
    EvalTrace,
    MetaBuffer,
    Primitive,
    Tracer,
    as_buffer,
    current_trace,
    get_aval,
)
from funcgrad.devices import get_backend
from funcgrad.errors import FuncgradError, NonDifferentiableError
from funcgrad.ir import ClosedJaxpr, Jaxpr, ShapedArray, ShapeDtypeStruct
from funcgrad.primitives.rules import all_batched, batch_size, wanted, zeros_like_aval
from funcgrad.staging import TraceDebug, eval_jaxpr, trace_flat
from funcgrad.transforms import signatures, staged_vjp
from funcgrad.transforms._util import take_mask
from funcgrad.transforms.jvp import jvp_flat
from funcgrad.transforms.partial_eval import float_outputs, vjp_split
from funcgrad.transforms.vmap import vmap_flat
from funcgrad.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from funcgrad.wrappers import is_wrapper, rewrap, unwrap_leaves

# ---------------------------------------------------------------- the call primitive

_executables: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Hashable, Any]] = \
    weakref.WeakKeyDictionary()


def _read(jaxpr: ClosedJaxpr, inputs: tuple[int, ...]) -> tuple[int, ...]:
    """Those of ``inputs`` that the program reads (JAX prunes the others, donated or not:
    they are neither consumed nor reported)."""
    read = {id(v) for e in jaxpr.jaxpr.eqns for v in e.inputs} | {
        id(v) for v in jaxpr.jaxpr.outvars}
    return tuple(i for i in inputs if id(jaxpr.jaxpr.invars[i]) in read)


def consumed_donations(jaxpr: ClosedJaxpr, backend: str, donate: tuple[int, ...],
                       keep_unused: bool = False) -> tuple[int, ...]:
    """The donated inputs that a call consumes (their Arrays are deleted): those JAX's
    lowering matches to an output, first by shape and dtype, then the rest by element
    count (``mlir._set_up_aliases``), whether or not funcgrad's program writes into them.
    An input the program does not use is none of them (JAX prunes it before lowering),
    unless ``keep_unused`` (``jit(keep_unused=True)`` keeps it as a parameter). None on
    CuPy, where funcgrad does not use donations."""
    if backend != "numpy":
        return ()
    ins, outs = jaxpr.in_avals, jaxpr.out_avals
    donate = donate if keep_unused else _read(jaxpr, donate)
    waiting: dict[Any, list[int]] = {}
    for i in donate:
        waiting.setdefault((ins[i].shape, ins[i].dtype), []).append(i)
    matched: set[int] = set()
    rest: dict[int, list[int]] = {}
    for j, av in enumerate(outs):
        queue = waiting.get((av.shape, av.dtype))
        if queue:
            matched.add(queue.pop(0))
        else:
            rest.setdefault(math.prod(av.shape), []).append(j)
    for i in donate:
        if i not in matched and rest.get(math.prod(ins[i].shape)):
            rest[math.prod(ins[i].shape)].pop(0)
            matched.add(i)
    return tuple(sorted(matched))


def executable(jaxpr: ClosedJaxpr, backend: str, donate: tuple[int, ...] = (),
               warn: bool = True, keep_unused: bool = False) -> Callable[..., list[Any]]:
    """The compiled program of ``jaxpr`` on ``backend`` (compiled once, then cached);
    ``donate`` lists the donated inputs (see ``jit(donate_argnums=...)``): the program may
    overwrite those a call consumes (``consumed_donations``), and ``warn`` says whether the
    others are reported (JAX's warning); with ``keep_unused`` an input the program does not
    read may be consumed or reported too (``jit(keep_unused=True)``)."""
    per = _executables.setdefault(jaxpr, {})
    key: Hashable = (backend, donate, keep_unused) if donate else backend
    exe = per.get(key)
    if exe is None:
        t0 = time.perf_counter()
        consumed = consumed_donations(jaxpr, backend, donate, keep_unused)
        if consumed:
            from funcgrad.backends.compile_python import compile_jaxpr  # noqa: PLC0415

            exe = compile_jaxpr(_inlined(jaxpr), get_backend(backend).xp, consumed)
        else:
            exe = get_backend(backend).compile(_inlined(jaxpr))
        if monitoring.listening():
            monitoring.record_event_duration_secs(monitoring.COMPILE_EVENT,
                                                  time.perf_counter() - t0)
        per[key] = exe
        unusable = [jaxpr.in_avals[i] for i in (donate if keep_unused else _read(jaxpr, donate))
                    if i not in consumed]
        if unusable and warn:
            # JAX's warning, raised once per compiled program as JAX does at compile time.
            warnings.warn("Some donated buffers were not usable: "
                          f"{', '.join(_short(a) for a in unusable)}.\nSee an explanation "
                          "at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                          stacklevel=3)
    return exe


def _short(aval: ShapedArray) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _refs(x: ArrayImpl) -> int:
    v = x._value
    return sys.getrefcount(v)


# References to the buffer of an Array that nothing else holds, as ``_refs`` counts them.
_ALONE = _refs(ArrayImpl(np.empty(1)))


def _exclusive(x: Any, held: int) -> bool:
    """Whether only ``x`` (and ``held`` other references the caller knows of) holds its
    buffer: no view of it, no other Array or NumPy name for it, its own contiguous
    writable memory. Only such a buffer is overwritten."""
    if type(x) is not ArrayImpl:
        return False
    v = x._value
    flags = v.flags
    own = (getattr(v, "base", None) is None and bool(flags.c_contiguous)
           and bool(getattr(flags, "writeable", True)))
    del v, flags
    return own and _refs(x) <= _ALONE + held


def donated_buffers(leaves: Sequence[Any], bufs: list[Any], used: Sequence[int]) -> None:
    """Make ``bufs[i]`` (``i`` in ``used``) buffers a program may overwrite: a buffer that
    is not ``leaves[i]``'s alone, or that another input also passes, is copied first, so
    user data and other arrays are never written. ``bufs`` holds the buffers of ``leaves``
    (one reference each, counted as known)."""
    ids = [id(b) for b in bufs]
    for i in used:
        if ids.count(ids[i]) > 1 or not _exclusive(leaves[i], 1):
            bufs[i] = bufs[i].copy()


def _inlined(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with the custom_jvp/custom_vjp/checkpoint calls replaced by the
    equations of their functions (their rules matter only to transformations, and a
    compiled program should not run Python functions per call)."""
    for _ in range(8):  # functions may call custom functions in turn
        if not any(e.primitive.inline_param is not None for e in closed.jaxpr.eqns):
            return closed
        def run(*args: Any, c: ClosedJaxpr = closed) -> list[Any]:
            return eval_jaxpr(c, *args, inline_calls=True)

        closed = trace_flat(run, closed.in_avals)[0]
    return closed


def _jit_impl(xp: Any, *args: Any, jaxpr: ClosedJaxpr, name: str, backend: str) -> list[Any]:
    return executable(jaxpr, _pick_backend(backend, args))(*args)


jit_p = Primitive("jit", abstract_eval=lambda *avals, jaxpr, **_: jaxpr.out_avals,
                  impl=_jit_impl, multiple_results=True)
jit_p.call_like = True
jit_p.cheap_abstract_eval = True


def _pick_backend(backend: str, args: Sequence[Any]) -> str:
    if backend != "auto":
        return backend

    def on_gpu(a: Any) -> bool:
        v = a
        while isinstance(v, Tracer):
            # the value an eager transform computes on: grad(jit(f)) of CuPy arrays runs
            # on the GPU (a staging tracer has none)
            v = getattr(v, "primal", getattr(v, "val", None))
        v = v._value if type(v) is ArrayImpl else v
        return type(v).__module__.startswith("cupy")

    return "cupy" if any(on_gpu(a) for a in args) else "numpy"


def _derived(jaxpr: ClosedJaxpr, key: Hashable, build: Callable[[], Any]) -> Any:
    """Cache a jaxpr derived from ``jaxpr`` (its jvp, split vjp, batched form)."""
    per = _executables.setdefault(jaxpr, {})
    if key not in per:
        per[key] = build()
    return per[key]


def _jit_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
             name: str, backend: str) -> Any:
    nonzero = tuple(t is not None for t in tangents)
    n = len(primals)

    def build() -> tuple[ClosedJaxpr, tuple[bool, ...]]:
        # Output tangents that are symbolically zero stay so (JAX's symbolic zeros): a
        # later rule may refuse an instantiated zero (scatter_mul's multipliers), and
        # reverse mode need not push a cotangent through them.
        out_nz: list[bool] = []

        def f(*args: Any) -> list[Any]:
            ts = iter(args[n:])
            full = [next(ts) if nz else None for nz in nonzero]
            outs, touts, _ = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, *xs), args[:n], full)
            out_nz[:] = [t is not None for t in touts]
            return [*outs, *(t for t in touts if t is not None)]

        avals = [*jaxpr.in_avals, *(a for a, nz in zip(jaxpr.in_avals, nonzero) if nz)]
        closed = trace_flat(f, avals)[0]
        return closed, tuple(out_nz)

    jvp_jaxpr, out_nonzero = _derived(jaxpr, ("jvp", nonzero), build)
    outs = jit_p.bind(*primals, *(t for t in tangents if t is not None), jaxpr=jvp_jaxpr,
                      name=f"jvp({name})", backend=backend)
    m = len(jaxpr.out_avals)
    it = iter(outs[m:])
    return outs[:m], [next(it) if nz else None for nz in out_nonzero]


def _jit_vjp_fwd(primals: Sequence[Any], *, jaxpr: ClosedJaxpr, name: str, backend: str
                 ) -> Any:
    return _jit_vjp_masked(primals, take_mask(len(primals)), jaxpr, name, backend)


def _jit_vjp_masked(primals: Sequence[Any], mask: tuple[bool, ...], jaxpr: ClosedJaxpr,
                    name: str, backend: str, ct_mask: tuple[bool, ...] | None = None) -> Any:
    try:
        fwd, bwd, n_res = _derived(jaxpr, ("vjp", mask, ct_mask),
                                   lambda: vjp_split(jaxpr, mask, ct_mask))
    except NonDifferentiableError:
        if ct_mask is not None:
            raise
        # Reverse mode is refused for some output (a while_loop): whether that output's
        # cotangent is a symbolic zero is known only in the backward pass, which then
        # recomputes the forward with its residuals (JAX transposes zeros away, too).
        plain = jit_p.bind(*primals, jaxpr=jaxpr, name=name, backend=backend)

        def deferred(cts: Sequence[Any]) -> list[Any]:
            given = tuple(c is not None for c in cts)
            return _jit_vjp_masked(primals, mask, jaxpr, name, backend, given)[1](cts)

        return plain, deferred
    res_outs = jit_p.bind(*primals, jaxpr=fwd, name=f"fwd({name})", backend=backend)
    m = len(jaxpr.out_avals)
    outs, residuals = res_outs[:m], res_outs[m:]
    floats = float_outputs(jaxpr)
    if ct_mask is not None:
        floats = [fl and w for fl, w in zip(floats, ct_mask)]

    def backward(cts: Sequence[Any]) -> list[Any]:
        given = [zeros_like_aval(a.strip_weak()) if c is None else c
                 for c, a, fl in zip(cts, jaxpr.out_avals, floats) if fl]
        in_cts = jit_p.bind(*residuals, *given, jaxpr=bwd, name=f"bwd({name})",
                            backend=backend)
        return [c if m else None for c, m in zip(in_cts, mask)]

    return outs, backward


def _jit_vjp(cts: Sequence[Any], primals: Sequence[Any], outs: Sequence[Any], *,
             jaxpr: ClosedJaxpr, name: str, backend: str) -> list[Any]:
    mask = tuple(wanted(i) for i in range(len(primals)))
    backward = _jit_vjp_masked(primals, mask, jaxpr, name, backend)[1]
    return list(backward(cts))


def _jit_batch(args: Sequence[Any], dims: Sequence[Any], *, jaxpr: ClosedJaxpr, name: str,
               backend: str) -> Any:
    size = batch_size(args, dims)
    xs = all_batched(args, dims)

    def build() -> ClosedJaxpr:
        def f(*bs: Any) -> list[Any]:
            return vmap_flat(lambda *a: eval_jaxpr(jaxpr, *a), bs, [0] * len(bs), size)[0]

        return trace_flat(f, [get_aval(x) for x in xs])[0]

    batched = _derived(jaxpr, ("batch", size, tuple(get_aval(x) for x in xs)), build)
    outs = jit_p.bind(*xs, jaxpr=batched, name=f"vmap({name})", backend=backend)
    return outs, [0] * len(outs)


jit_p.jvp = _jit_jvp
jit_p.vjp = _jit_vjp
jit_p.vjp_reads = "x"
jit_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)
jit_p.vjp_fwd = _jit_vjp_fwd
jit_p.batch = _jit_batch


# ---------------------------------------------------------------- the user API


class _OutTree:
    """The output structure of a staged function, with which leaves were wrappers."""

    __slots__ = ("tree", "kinds")

    def __init__(self, tree: PyTreeDef, kinds: tuple[type | None, ...]) -> None:
        self.tree, self.kinds = tree, kinds

    def unflatten(self, outs: list[Any]) -> Any:
        if any(k is not None for k in self.kinds):
            outs = rewrap(outs, self.kinds)
        return tree_unflatten(self.tree, outs)


class Lowered:
    """A staged and compiled jitted call: its jaxpr and its program text."""

    def __init__(self, jaxpr: ClosedJaxpr, out_tree: _OutTree, backend: str,
                 donate: tuple[int, ...] = (), keep_unused: bool = False) -> None:
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.backend = backend
        # The flat inputs donated (the program text shows the buffers written into).
        self.donate = donate
        self.keep_unused = keep_unused

    def compile(self) -> Callable[..., list[Any]]:
        return executable(self.jaxpr, self.backend, self.donate, keep_unused=self.keep_unused)

    def take_donations(self, leaves: Sequence[Any], bufs: list[Any], exe: Any) -> None:
        """Before a call of ``exe`` (this program compiled) on ``bufs``: a donated buffer
        the program writes into becomes the Array's alone (else it is copied first)."""
        donated_buffers(leaves, bufs, getattr(exe, "donated_used", ()))

    def consumed(self) -> list[int]:
        """The flat inputs a call consumes: JAX deletes their Arrays afterwards."""
        return list(consumed_donations(self.jaxpr, self.backend, self.donate,
                                       self.keep_unused))

    def as_text(self) -> str:
        """The generated program (Python source on the NumPy backend)."""
        return str(getattr(self.compile(), "source", ""))

    def kernels(self) -> Any:
        """The fusion plan and kernel sources (CuPy backend)."""
        exe = self.compile()
        plan = getattr(exe, "kernels", None)
        if plan is None:
            raise FuncgradError(f"the {self.backend} backend generates no kernels; use "
                                "jit(f, backend='cupy') for the fused-kernel plan")
        return plan() if callable(plan) else plan

    def to_dot(self) -> str:
        """Graphviz DOT text of the compiled program; on a fusing backend (cupy) each
        generated kernel is a cluster of the equations it runs (see funcgrad.visualize)."""
        from funcgrad import visualize
        plan = getattr(self.compile(), "plan", None)
        return visualize.to_dot(self.jaxpr if plan is None else plan.jaxpr, plan)


def _hashable_static(value: Any) -> Any:
    try:
        hash(value)
    except TypeError as e:
        # JAX's ValueError and message.
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(value)}, {value}. The error was:\n"
            f"TypeError: {e}\n") from None
    return _Static(value)


class _Static:
    """A static argument in a cache key, equal to another only when their types are the
    same too (JAX's ``Static``): ``f(x, 3)`` and ``f(x, 3.0)`` are traced separately."""

    __slots__ = ("val",)

    def __init__(self, val: Any) -> None:
        self.val = val

    def __hash__(self) -> int:
        return hash(self.val)

    def __eq__(self, other: object) -> bool:
        return (type(other) is _Static and type(self.val) is type(other.val)
                and bool(self.val == other.val))


def _static_positions(static_argnums: Sequence[int], nargs: int) -> set[int]:
    """The positions of the static arguments among ``nargs`` positional ones, as JAX's
    ``_ensure_inbounds``: an index past the arguments is ignored (the argument was passed
    by keyword or left to its default), a negative one counts from the end."""
    out = set()
    for i in static_argnums:
        if i >= nargs:
            continue
        if i < -nargs:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value "
                "greater than or equal to -len(args) and less than len(args), but got "
                f"value {i} for len(args) == {nargs}.")
        out.add(i % nargs)
    return out


class _Caches:
    """What a jitted function has staged and compiled: the programs by argument signature
    (``staged``), the executables of calls with only Arrays as positional arguments
    (``fast``, no flattening), and the programs of calls under a transformation with
    tracers as positional arguments (``traced``)."""

    __slots__ = ("fast", "staged", "traced", "__weakref__")

    def __init__(self) -> None:
        self.staged: dict[Hashable, tuple[ClosedJaxpr, _OutTree]] = {}
        self.fast: dict[tuple[Any, ...], tuple[Callable[..., list[Any]], _OutTree,
                                               list[ShapedArray]]] = {}
        self.traced: dict[tuple[Any, ...], tuple[ClosedJaxpr, _OutTree]] = {}


_live_caches: weakref.WeakSet[_Caches] = weakref.WeakSet()
# As in JAX, what is staged belongs to the function and the options that change staging,
# not to the object jit returns: ``jax.jit(f)(x)`` written in a loop traces once, and two
# jit objects of one function share their programs (and a global the function reads is
# baked in at its first trace, JAX's "stale global" sharp bit). Donation changes only how a
# program runs, so jit(f) and jit(f, donate_argnums=0) share too.
_by_function: weakref.WeakKeyDictionary[Any, dict[Hashable, _Caches]] = \
    weakref.WeakKeyDictionary()


def _caches_for(fun: Callable[..., Any], options: Hashable) -> _Caches:
    try:
        per_function = _by_function.setdefault(fun, {})
    except TypeError:  # not hashable, or no weak references to it: its own caches
        per_function = {}
    caches = per_function.get(options)
    if caches is None:
        caches = per_function[options] = _Caches()
        _live_caches.add(caches)
    return caches


def clear_caches() -> None:
    """Forget every staged and compiled program (each jitted function re-traces)."""
    for c in list(_live_caches):
        c.staged.clear()
        c.fast.clear()
        c.traced.clear()
    _executables.clear()
    staged_vjp.clear()
    signatures.clear_signatures()


def _drop_fast_paths() -> None:
    # The fast path is keyed on argument types only: a change of the trace context
    # (config.trace_context) sends calls back through the keyed cache.
    for c in list(_live_caches):
        c.fast.clear()
        c.traced.clear()


config.on_change.append(_drop_fast_paths)


class JitFunction:
    """The callable ``jit`` returns; ``.lower(*args)`` exposes the staged program."""

    def __init__(self, fun: Callable[..., Any], static_argnums: Sequence[int],
                 static_argnames: Sequence[str], backend: str | None,
                 donate_argnums: Sequence[int] = (), donate_argnames: Sequence[str] = (),
                 keep_unused: bool = False) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        self._donate_given = tuple(donate_argnums)
        self.donate_argnums, self.donate_argnames = _both_ways(fun, self._donate_given,
                                                               tuple(donate_argnames))
        self.backend = backend or "auto"
        # JAX's keep_unused: observable here only through donation (an unused donated input
        # is consumed, or reported as unusable, instead of being pruned).
        self.keep_unused = keep_unused
        caches = _caches_for(fun, (self.static_argnums, self.static_argnames, self.backend))
        self._cache, self._fast, self._traced = caches.staged, caches.fast, caches.traced
        self._fast_ok = not (static_argnums or static_argnames or donate_argnums
                             or donate_argnames)
        self.trace_count = 0

    def _split(self, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[list[Any], PyTreeDef, tuple[Any, ...], Callable[..., Any]]:
        nargs = len(args)
        static_pos = _static_positions(self.static_argnums, nargs)
        statics = tuple((i, _hashable_static(args[i])) for i in sorted(static_pos))
        statics_kw = tuple(sorted((k, _hashable_static(v)) for k, v in kwargs.items()
                                  if k in self.static_argnames))
        dyn_args = [a for i, a in enumerate(args) if i not in static_pos]
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs), is_leaf=is_wrapper)
        # Tensors (and other registered wrappers) are staged as the arrays they hold.
        leaves, kinds = unwrap_leaves(leaves)
        fun = self.fun

        def flat_fun(*flat: Any) -> Any:
            d_args, d_kwargs = tree_unflatten(in_tree, rewrap(flat, kinds))
            it = iter(d_args)
            full = [args[i] if i in static_pos else next(it) for i in range(nargs)]
            return fun(*full, **d_kwargs, **{k: v.val for k, v in statics_kw})

        return leaves, in_tree, (statics, statics_kw, kinds), flat_fun

    def _as_argument(self, asarray: Callable[[Any], Any], x: Any, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Any:
        """An argument leaf as an array, or JAX's TypeError naming where it was passed."""
        try:
            return asarray(x)
        except TypeError as e:
            raise TypeError(
                f"Error interpreting argument to {self.fun!r} as an abstract array. The "
                f"problematic value is of type {type(x)} and was passed to the function at "
                f"path {self._leaf_path(args, kwargs, x)}.\nThis typically means that a "
                "jit-wrapped function was called with a non-array argument, and this argument "
                "was not marked as static using the static_argnums or static_argnames "
                "parameters of jax.jit.") from e

    def _leaf_path(self, args: tuple[Any, ...], kwargs: dict[str, Any], leaf: Any) -> str:
        """Where ``leaf`` sits among the arguments, as JAX names it (``y['a']``,
        ``args[1]``): the parameter, then the key path inside it."""
        from funcgrad.tree_util import keystr, tree_flatten_with_path  # noqa: PLC0415

        try:
            params = list(inspect.signature(self.fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        fixed = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")
        named = [(fixed[i] if i < len(fixed) else f"{star}[{i - len(fixed)}]", a)
                 for i, a in enumerate(args)] + list(kwargs.items())
        for name, value in named:
            for path, x in tree_flatten_with_path(value, is_leaf=is_wrapper)[0]:
                if x is leaf:
                    return name + keystr(path)
        return "<unknown>"

    def _staged(self, args: tuple[Any, ...], kwargs: dict[str, Any], abstract_ok: bool = False
                ) -> tuple[ClosedJaxpr, _OutTree, list[Any], str]:
        from funcgrad.conversion import asarray  # noqa: PLC0415

        leaves, in_tree, statics, flat_fun = self._split(args, kwargs)
        # ``lower`` also takes ShapeDtypeStructs: only the abstract values are needed.
        leaves = [x if abstract_ok and type(x) is ShapeDtypeStruct else
                  self._as_argument(asarray, x, args, kwargs) for x in leaves]
        avals = tuple(ShapedArray(x.shape, x.dtype, x.weak_type)
                      if type(x) is ShapeDtypeStruct else get_aval(x) for x in leaves)
        backend = _pick_backend(self.backend, leaves)
        key = (in_tree, avals, statics, backend, config.trace_context())
        hit = self._cache.get(key)
        if hit is None:
            self.trace_count += 1
            out_box: list[Any] = []

            def traced(*flat: Any) -> list[Any]:
                out_leaves, out_tree = tree_flatten(flat_fun(*flat), is_leaf=is_wrapper)
                out_leaves, out_kinds = unwrap_leaves(out_leaves)
                out_box.append(_OutTree(out_tree, out_kinds))
                return out_leaves

            if config.read("jax_no_tracing"):
                raise RuntimeError(f"re-tracing function {_name(self.fun)} for `jit`, but "
                                   "'no_tracing' is set")
            t0 = time.perf_counter()
            closed, _ = trace_flat(traced, avals, debug=TraceDebug(
                "jit", self.fun, args, kwargs, self.static_argnums, self.static_argnames))
            if monitoring.listening():
                monitoring.record_event_duration_secs(monitoring.TRACE_EVENT,
                                                      time.perf_counter() - t0)
            hit = (closed, out_box[0])
            if not any(isinstance(c, Tracer) for c in closed.consts):
                # Tracers captured from an enclosing transformation die with it: never cache.
                self._cache[key] = hit
        return hit[0], hit[1], leaves, backend

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if config.jit_disabled:
            return self.fun(*args, **kwargs)
        if CHECK_VALUES:
            return self._checked_call(args, kwargs)
        key = _array_signature(args) if self._fast_ok and not kwargs else None
        if key is not None and config.open_regions:
            key = None  # a face's region is open: the keyed path reads its state
        if key is not None and isinstance(current_trace(), EvalTrace):
            hit = self._fast.get(key)
            if hit is not None:
                exe, tree, out_avals = hit
                # A NumPy argument an output may share memory with is copied: the results
                # must not alias the caller's arrays (the others are only read).
                alias = getattr(exe, "aliasing_inputs", None)
                outs = exe(*[a._value if type(a) is ArrayImpl else
                             a.copy() if alias is None or i in alias else a
                             for i, a in enumerate(args)])
                return tree.unflatten([wrap(o, av) for o, av in zip(outs, out_avals)])
        traced = _traced_signature(args) if self._fast_ok and not kwargs and key is None \
            else None
        if traced is not None:
            leaves = [a for a in args if a is not None]
            backend = _pick_backend(self.backend, leaves)
            tkey = (traced, backend, config.trace_context())
            staged = self._traced.get(tkey)
            if staged is None:
                closed, out_tree, leaves, backend = self._staged(args, kwargs)
                if not any(isinstance(c, Tracer) for c in closed.consts):
                    self._traced[tkey] = (closed, out_tree)
            else:
                closed, out_tree = staged
        else:
            closed, out_tree, leaves, backend = self._staged(args, kwargs)
        if any(isinstance(c, Tracer) for c in closed.consts):
            # The function closes over values of an enclosing transformation: they become
            # explicit inputs of the call, so that transformation sees them.
            opened = _closure_converted(closed)
            outs = jit_p.bind(*closed.consts, *leaves, jaxpr=opened, name=_name(self.fun),
                              backend=backend)
        elif isinstance(current_trace(), EvalTrace) and not any(
                isinstance(x, Tracer) or type(as_buffer(x)) is MetaBuffer for x in leaves):
            # (Meta buffers go through the call primitive: results from its shape rule.)
            if self.donate_argnums or self.donate_argnames:
                return out_tree.unflatten(self._donating_call(closed, backend, args, kwargs,
                                                              leaves))
            exe = executable(closed, backend)
            if key is not None:
                self._fast[key] = (exe, out_tree, closed.out_avals)
            outs = exe(*(np.asarray(x, get_aval(x).dtype) if dtypes.python_scalar(x)
                         else as_buffer(x) for x in leaves))
            outs = [wrap(o, av) for o, av in zip(outs, closed.out_avals)]
        else:
            outs = jit_p.bind(*leaves, jaxpr=closed, name=_name(self.fun), backend=backend)
        return out_tree.unflatten(outs)

    def _donated_leaves(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                        ) -> tuple[int, ...]:
        """The flat input positions of the donated arguments (as JAX's: an argument passed
        by position is donated when its index is in donate_argnums, a negative index never
        matching, and one passed by keyword when its name is in donate_argnames)."""
        nargs = len(args)
        pos = {i for i in self.donate_argnums if 0 <= i < nargs}
        static_pos = _static_positions(self.static_argnums, nargs)
        flat: list[int] = []
        n = 0

        def count(a: Any, donated: bool) -> None:
            nonlocal n
            k = len(tree_flatten(a, is_leaf=is_wrapper)[0])
            if donated:
                flat.extend(range(n, n + k))
            n += k

        for i, a in enumerate(args):
            if i not in static_pos:
                count(a, i in pos)
        for name in sorted(k for k in kwargs if k not in self.static_argnames):
            count(kwargs[name], name in self.donate_argnames)
        return tuple(flat)

    def _donating_call(self, closed: ClosedJaxpr, backend: str, args: tuple[Any, ...],
                       kwargs: dict[str, Any], leaves: list[Any]) -> list[Any]:
        """Run with the donated inputs' buffers given to the program, then delete those
        Arrays (as JAX: a donated Array that the program used cannot be used again)."""
        donate = self._donated_leaves(args, kwargs)
        exe = executable(closed, backend, donate, keep_unused=self.keep_unused)
        used = getattr(exe, "donated_used", ())
        bufs = [np.asarray(x, get_aval(x).dtype) if dtypes.python_scalar(x) else as_buffer(x)
                for x in leaves]
        donated_buffers(leaves, bufs, used)
        outs = exe(*bufs)
        del bufs
        for i in consumed_donations(closed, backend, donate, self.keep_unused):
            if isinstance(leaves[i], ArrayImpl):
                leaves[i].delete()
        return [wrap(o, av) for o, av in zip(outs, closed.out_avals)]

    def _checked_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """jax_debug_nans/infs: a bad value in the outputs re-runs the function op by op,
        so the error names the operation that made it (as JAX's de-optimized rerun)."""
        from funcgrad.config import CHECK_VALUES as checks  # noqa: PLC0415

        if "noexec" in checks and isinstance(current_trace(), EvalTrace):
            raise RuntimeError(f"funcgrad tried to execute function jit({_name(self.fun)}), "
                               "but the no_execution config option is set")
        saved = list(checks)
        checks.clear()
        try:
            out = self(*args, **kwargs)
        finally:
            checks[:] = saved
        for leaf in tree_flatten(out)[0]:
            if isinstance(leaf, ArrayImpl) and dtypes.is_inexact(leaf.dtype):
                v = leaf._value
                xp = np if type(v) is np.ndarray else get_backend("cupy").xp
                bad = ("nan" in checks and bool(xp.isnan(v).any())) or (
                    "inf" in checks and bool(xp.isinf(v).any()))
                if bad:
                    print(DEOPTIMIZED)
                    with config._no_jit_scope(True):
                        self.fun(*args, **kwargs)
        return out

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        """As a method (``@jit`` in a class body): bound to the instance, which becomes the
        first argument (mark it static with ``static_argnums=0`` if it is no array)."""
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        """Stage for these arguments: a ``stages.Traced`` (``.jaxpr``, ``.lower()``)."""
        from funcgrad.transforms.stages import Traced  # noqa: PLC0415

        return Traced(self, args, kwargs)

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' shapes and dtypes for these arguments (a ``ShapeDtypeStruct``
        pytree), found by staging; nothing runs."""
        closed, out_tree, _, _ = self._staged(args, kwargs, abstract_ok=True)
        return out_tree.unflatten([ShapeDtypeStruct(a.shape, a.dtype, a.weak_type)
                                   for a in closed.out_avals])

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """Stage for these arguments without running: ``.jaxpr``, ``.as_text()``, and
        ``.compile()``, which takes and returns what the jitted function does."""
        return self.trace(*args, **kwargs).lower()

    def lower_program(self, *args: Any, **kwargs: Any) -> Lowered:
        """The staged program itself (what ``stages.Lowered`` wraps)."""
        closed, out_tree, _, backend = self._staged(args, kwargs, abstract_ok=True)
        donate = self._donated_leaves(args, kwargs) if self.donate_argnums or \
            self.donate_argnames else ()
        return Lowered(closed, out_tree, backend, donate, self.keep_unused)


def _closure_converted(closed: ClosedJaxpr) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr([*j.constvars, *j.invars], j.outvars, j.eqns), ())


def _array_signature(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The abstract values of the arguments when every one is a concrete Array or a NumPy
    array of a canonical dtype (one the current 64-bit mode keeps), else None."""
    # Plain tuples: hashed and compared in C on every call.
    sig = []
    for a in args:
        t = type(a)
        if t is ArrayImpl:
            if type(a._value) is MetaBuffer:
                return None  # no data to run the executable on
            av = a._aval
            sig.append((av.shape, av.dtype, av.weak_type))
        elif t is np.ndarray and a.dtype in dtypes.SUPPORTED and \
                dtypes.canonicalize_dtype(a.dtype) == a.dtype:
            sig.append((a.shape, a.dtype, False))
        else:
            return None
    return tuple(sig)


def _traced_signature(args: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The abstract values of the arguments when each is a tracer or None (a call inside
    a transformation, as the PyTorch face's recorded operations make), else None."""
    sig: list[ShapedArray | None] = []
    for a in args:
        if a is None:
            sig.append(None)
        elif isinstance(a, Tracer):
            sig.append(a.aval)
        else:
            return None
    return tuple(sig)


def _name(fun: Callable[..., Any]) -> str:
    return getattr(fun, "__name__", "fun")


def _check_argnames(fun: Callable[..., Any], names: Sequence[str], what: str) -> None:
    """As JAX: names that ``fun`` does not take are an error (unless it takes ``**kwargs``),
    and so are the names of positional-only parameters."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return
    positional_only = {p.name for p in params if p.kind in (
        inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)} & set(names)
    if positional_only:
        raise ValueError(f"Jitted function has invalid argnames {positional_only} in {what}. "
                         "These are positional-only")
    valid = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   inspect.Parameter.KEYWORD_ONLY)}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    invalid = set(names) - valid
    if invalid:
        raise ValueError(f"Jitted function has invalid argnames {invalid} in {what}. "
                         "Function does not take these args.")


def _check_argnums(fun: Callable[..., Any], nums: Sequence[int], what: str) -> None:
    """As JAX (when ``jit`` is applied): indices past ``fun``'s positional parameters are an
    error, unless it takes ``*args``."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return
    n = sum(p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                       inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params)
    if nums and (-min(nums) > n or max(nums) >= n):
        raise ValueError(f"Jitted function has {what}={tuple(nums)}, but only accepts {n} "
                         "positional arguments.")


def _both_ways(fun: Callable[..., Any], nums: tuple[int, ...], names: tuple[str, ...]
               ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Donated arguments by position and by name (as JAX: an argument donated by name is
    donated when passed by position too, and the other way round)."""
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return nums, names
    by_name = {p.name: i for i, p in enumerate(params)}
    all_nums = {*nums, *(by_name[n] for n in names if n in by_name)}
    all_names = {*names, *(params[i].name for i in nums if 0 <= i < len(params)
                           and params[i].kind is not inspect.Parameter.POSITIONAL_ONLY)}
    return tuple(sorted(all_nums)), tuple(sorted(all_names))


def _infer_argnums_and_argnames(fun: Callable[..., Any], nums: int | Sequence[int] | None,
                                 names: str | Sequence[str] | None
                                 ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """JAX's ``infer_argnums_and_argnames``: given only positions, the names of those
    positional-or-keyword parameters are added, and the other way round (so an argument
    is static, or donated, however it is passed); given both, neither is inferred."""
    num_t = None if nums is None else (nums,) if isinstance(nums, int) else tuple(nums)
    name_t = None if names is None else _names(names)
    if num_t is None and name_t is None:
        return (), ()
    if num_t is not None and name_t is not None:
        return num_t, name_t
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return num_t or (), name_t or ()
    kw = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if num_t is None:
        assert name_t is not None
        return tuple(i for i, p in enumerate(params) if p.kind is kw and p.name in name_t), \
            name_t
    return num_t, tuple(p.name for i, p in enumerate(params) if p.kind is kw and i in num_t)


def _names(x: str | Sequence[str] | None) -> tuple[str, ...]:
    return () if x is None else (x,) if isinstance(x, str) else tuple(x)


def jit(fun: Callable[..., Any] | None = None,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None, backend: str | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Sequence[str] | None = None, keep_unused: bool = False,
        inline: bool = False, device: Any = None) -> Any:
    """Compile ``fun``: staged once per input signature, then run as a compiled program.

    ``static_argnums``/``static_argnames`` name arguments that are Python values
    (hashable; a new value, or one of another type, re-traces); as in JAX, given one of the
    two the other is inferred from ``fun``'s signature (an argument is static whether passed
    by position or by keyword), and positions or names ``fun`` does not take are a
    ValueError. ``backend`` is ``"numpy"``, ``"cupy"`` or None to follow the inputs.
    ``donate_argnums``/``donate_argnames`` name arguments whose buffers the caller gives
    up: the program may write its results into them, and such an Array is deleted after
    the call (using it raises RuntimeError, as in JAX; a donation that no result can use
    warns and deletes nothing). A buffer that is not the Array's alone (a view, shared
    with NumPy data or another Array) is copied first: user data is never written.
    ``keep_unused=True`` keeps an argument the function does not use as a parameter of the
    program, which JAX otherwise prunes: observable only with donation (such an argument,
    donated, is then consumed or reported as unusable, as in JAX); like JAX, any value is
    accepted (its truth counts). ``inline`` and ``device`` are accepted for JAX
    compatibility and change nothing here (a jitted call is compiled as a whole).
    Decorating a method binds ``self`` like any function.

    >>> import numpy as np
    >>> import funcgrad as fg
    >>> @fg.jit
    ... def f(x, y):
    ...     return fg.numpy.dot(x, y) + 1.0
    >>> f(np.ones(3), np.ones(3))
    Array(4., dtype=float32)
    """
    del inline, device
    donated = _names(donate_argnames)
    donated_nums = () if donate_argnums is None else (donate_argnums,) \
        if isinstance(donate_argnums, int) else tuple(donate_argnums)

    def make(f: Callable[..., Any]) -> JitFunction:
        nums, names = _infer_argnums_and_argnames(f, static_argnums, static_argnames)
        _check_argnums(f, nums, "static_argnums")
        _check_argnames(f, names, "static_argnames")
        _check_argnums(f, donated_nums, "donate_argnums")
        _check_argnames(f, donated, "donate_argnames")
        jf = JitFunction(f, nums, names, backend, donated_nums, donated,
                         keep_unused=bool(keep_unused))
        both = set(names) & set(jf.donate_argnames)
        if both:
            raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                             f"names {both} appear in both static_argnames and "
                             "donate_argnames")
        return jf

    if fun is None:
        return make
    return make(fun)


__all__ = ["JitFunction", "Lowered", "clear_caches", "jit", "jit_p"]


