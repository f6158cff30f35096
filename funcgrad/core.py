"""Primitives, ``bind``, traces and tracers.

Every operation goes through :func:`bind`, which hands it to the current trace.
The current trace lives in a thread-local context and is the eager
``EvalTrace`` unless a transformation is running. A transformation's trace
computes on the values of its *parent* trace by binding under that parent, so
transformations nest in any order.

>>> import numpy as np
>>> from funcgrad.primitives import add_p
>>> add_p.bind(np.ones(2), np.ones(2))
Array([2., 2.], dtype=float64)
"""

from __future__ import annotations

import functools
import math
import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import _ON_FIRST_COMMIT, Array, ArrayImpl, commit, wrap
from funcgrad.config import CHECK_LEAKS, CHECK_VALUES
from funcgrad.errors import (
    ConcretizationTypeError,
    DeviceError,
    DTypeError,
    FuncgradError,
    JAXTypeError,
    ShapeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from funcgrad.ir import HasShape, ShapedArray
from funcgrad.source_info import user_frame

# --------------------------------------------------------------- primitives


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


# What a primitive definition has not said yet (the completeness test fails on it).
UNSET: Any = _Unset()


class Primitive:
    """A named operation and everything its consumers need, all given where it is defined.

    ``abstract_eval(*avals, **params)`` gives the output aval(s);
    ``impl(xp, *arrays, **params)`` computes with the array module ``xp``;
    ``jvp``, ``vjp`` and ``batch`` are the transform rules (see
    ``funcgrad.primitives.rules`` for their signatures), ``vjp_reads`` what the
    vjp rule reads. For the backends and the faces: ``lax`` (the name of its
    ``funcgrad.lax`` function, None for the call primitives behind ``custom_jvp``
    and friends), ``fusion`` ("elementwise", "reduction" or None), ``cuda`` (the
    CUDA C expression of an elementwise primitive: a template over ``{0}``, ``{1}``
    and ``{T}``, or ``f(eqn, args, ctype) -> str``; None if not fusable), ``ufunc``
    (the NumPy ufunc the CPU code generator may call directly, or None),
    ``torch_node`` (PyTorch's node name) and ``torch_method`` (the Tensor method
    that is this primitive alone, or None). ``py_scalar`` is the CPU fusion's scalar
    Python expression (numba-compiled): a template over ``{0}``... and ``{T}`` (the NumPy
    scalar type of the result), or ``f(eqn, args, T) -> str | None``; for a reduction its
    combiner of ``{0}`` and ``{1}``; None: not fused on the CPU.
    """

    def __init__(
        self,
        name: str,
        *,
        abstract_eval: Callable[..., Any],
        impl: Callable[..., Any],
        jvp: Callable[..., Any] | None = None,
        vjp: Callable[..., Any] | None = None,
        batch: Callable[..., Any] | None = None,
        multiple_results: bool = False,
    ) -> None:
        self.name = name
        self.abstract_eval = abstract_eval
        self.impl = impl
        self.jvp = jvp
        self.vjp = vjp
        self.batch = batch
        self.multiple_results = multiple_results
        # Call-like primitives (custom rules, checkpoint, jit) run Python functions whose
        # own operations check themselves, so eager evaluation skips abstract_eval.
        self.call_like = False
        # Call-like primitives whose abstract_eval is cheap (it reads a jaxpr param): eager
        # evaluation uses it to give outputs their exact avals, weak types included.
        self.cheap_abstract_eval = False
        # Optional reverse-mode hook: vjp_fwd(primals, **params) -> (out, backward(ct)).
        self.vjp_fwd: Callable[..., Any] | None = None
        # Which operands ("x0", "x" for all) and outputs ("y0", "y") the vjp rule reads:
        # the reverse engine keeps only those (the rest stand as Missing avals). A string
        # of comma-separated tokens, or a callable (n_inputs, n_outputs) -> (ins, outs).
        self.vjp_reads: str | Callable[[int, int], tuple[Any, Any]] | None = None
        # Finer, optional: for each operand, what its cotangent alone reads (same tokens),
        # so an operand that needs no cotangent keeps no residual (PyTorch's MulBackward0
        # of ``x * c`` saves only ``c``: changing ``x`` in place afterwards is harmless).
        self.vjp_reads_for: tuple[str, ...] | None = None
        # Every derivative is zero (comparisons, stop_gradient, floor, ...): reverse mode
        # need not record it, so what follows it sees a constant (JAX's symbolic zero).
        self.zero_derivative = False
        # The primitive has a side effect (a host callback that prints or records): compiled
        # programs always run it, in program order, even when it has no used outputs, and
        # never merge two of its equations (no dead-code elimination, no CSE).
        self.effectful = False
        # A call primitive whose parameter of this name is the Python function it runs
        # (custom_jvp, custom_vjp, checkpoint): compiled programs call the function's
        # equations inline instead of the function.
        self.inline_param: str | None = None
        # The PyTorch face's node name for this primitive alone ("Mul" -> MulBackward0);
        # Tensor operations name their own nodes, this names what create_graph records.
        self.torch_node = "".join(w.capitalize() for w in name.split("_"))
        self.lax: str | None = UNSET
        # The funcgrad.lax function itself (set with the primitive's wrapper).
        self._lax_fn: Callable[..., Any] | None = None
        self.fusion: str | None = UNSET
        self.cuda: str | Callable[..., str] | None = UNSET
        self.ufunc: str | None = UNSET
        self.torch_method: str | None = UNSET
        self.py_scalar: str | Callable[..., str | None] | None = None
        # The impl returns its result on the device its params name, not on its operands'
        # backend (device_put): eager evaluation keeps the buffer where it is.
        self.places_result = False
        # Optional, for the NumPy code generator: ``f(eqn, var)`` -> a function that lays
        # out the operand ``var`` (invariant in a loop) as ``eqn``'s impl reads it fastest,
        # applied once before the loop; None where layout does not matter.
        self.loop_invariant_layout: Callable[[Any, Any], Callable[[Any], Any] | None] | \
            None = None
        # Optional, for every backend: ``f(**params) -> bool``, asked once per equation when a
        # program is compiled. False: the equation (which has no outputs) compiles to
        # nothing; raising refuses the program, as JAX's lowering errors do.
        self.lowering: Callable[..., bool] | None = None
        PRIMITIVES[name] = self

    @property
    def lax_fn(self) -> Callable[..., Any] | None:
        """The ``funcgrad.lax`` function (NumPy operands canonicalized, as JAX's are)."""
        return self._lax_fn

    @lax_fn.setter
    def lax_fn(self, fn: Callable[..., Any] | None) -> None:
        self._lax_fn = None if fn is None else _canonical_operands(fn)

    def describe(self, *, lax: str | None = UNSET, fusion: str | None = UNSET,
                 cuda: Any = UNSET, ufunc: str | None = UNSET, torch_node: str = UNSET,
                 torch_method: str | None = UNSET, lax_fn: Any = UNSET,
                 py_scalar: Any = UNSET) -> Primitive:
        """Set what the backends and faces need to know (see the class docstring)."""
        for key, value in (("lax", lax), ("fusion", fusion), ("cuda", cuda), ("ufunc", ufunc),
                           ("torch_node", torch_node), ("torch_method", torch_method),
                           ("lax_fn", lax_fn), ("py_scalar", py_scalar)):
            if value is not UNSET:
                setattr(self, key, value)
        return self

    def bind(self, *args: Any, **params: Any) -> Any:
        # bind() inlined: this runs once per operation.
        return _ctx.trace.process_primitive(self, args, params)

    def __repr__(self) -> str:
        return self.name


PRIMITIVES: dict[str, Primitive] = {}


def _canonical(a: Any) -> Any:
    if type(a) is np.ndarray or isinstance(a, np.generic):
        dt = dtypes.canonicalize_dtype(a.dtype)
        return a if dt == a.dtype else np.asarray(a, dt)
    if type(a) in (list, tuple) and any(type(x) is np.ndarray or isinstance(x, np.generic)
                                        for x in a):
        return type(a)(_canonical(x) for x in a)
    return a


def _canonical_operands(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its NumPy operands in the JAX face's dtypes (float64 arrays are float32
    unless x64 is on), as JAX puts NumPy values on a device before a primitive sees them."""
    if getattr(fn, "__wrapped_lax__", False):
        return fn

    @functools.wraps(fn)
    def lax_function(*args: Any, **kwargs: Any) -> Any:
        return fn(*(_canonical(a) for a in args), **kwargs)

    lax_function.__wrapped_lax__ = True  # type: ignore[attr-defined]
    return lax_function


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``prim`` to ``args`` under the current trace."""
    return _ctx.trace.process_primitive(prim, args, params)


_AVALS_SEEN: dict[tuple[Any, ...], tuple[ShapedArray, ...]] = {}


def abstract_eval(prim: Primitive, avals: Sequence[ShapedArray], params: dict[str, Any]
                  ) -> Sequence[ShapedArray]:
    """Run ``prim``'s shape rule, turning a failure into an error at the user's line.

    Shape rules depend only on the operands' avals and the params, and eager code applies
    the same few signatures over and over: a rule runs once per signature (a dict lookup
    after that costs a fraction of running it).
    """
    if prim.call_like:
        return _run_abstract_eval(prim, avals, params)
    try:
        key = (prim, *avals, *params.items()) if params else (prim, *avals)
        hit = _AVALS_SEEN.get(key)
    except TypeError:  # a param that cannot be hashed (an array): run the rule
        return _run_abstract_eval(prim, avals, params)
    if hit is None:
        hit = tuple(_run_abstract_eval(prim, avals, params))
        if len(_AVALS_SEEN) >= _AVALS_SEEN_MAX:
            _AVALS_SEEN.clear()
        _AVALS_SEEN[key] = hit
    return hit


_AVALS_SEEN_MAX = 100_000


def _run_abstract_eval(prim: Primitive, avals: Sequence[ShapedArray], params: dict[str, Any]
                       ) -> list[ShapedArray]:
    try:
        out = prim.abstract_eval(*avals, **params)
    except (ShapeError, DTypeError) as e:
        if getattr(e, "_located", False):
            raise
        shapes = ", ".join(a.str_short() for a in avals)
        err = type(e)(f"{prim.name} on ({shapes}) at {user_frame()}: {e}")
        setattr(err, "_located", True)  # noqa: B010 - marks errors already located
        raise err from None
    return list(out) if prim.multiple_results else [out]


# ------------------------------------------------------------------ traces


class Trace:
    """One level of a transformation; subclasses say how to process primitives."""

    parent: Trace | None = None
    alive: bool = True
    label: str = "trace"

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define process_primitive")

    def describe(self) -> str:
        return f"{self.label} (created at {getattr(self, 'created_at', '?')})"


class _Context(threading.local):
    def __init__(self) -> None:
        self.trace: Trace = EvalTrace()


def current_trace() -> Trace:
    return _ctx.trace


class set_current_trace:  # noqa: N801 - used like a function: ``with set_current_trace(t):``
    """Make ``trace`` current inside the block (a plain class: it runs once per primitive)."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def __enter__(self) -> None:
        self.prev = _ctx.trace
        _ctx.trace = self.trace

    def __exit__(self, *exc: object) -> None:
        _ctx.trace = self.prev


def bind_under(trace: Trace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
               ) -> Any:
    """``prim.bind(*args, **params)`` with ``trace`` current: how a transformation computes
    on the values of its parent trace (``with set_current_trace(trace): prim.bind(...)``,
    in one call: it runs once per primitive of every transformed operation)."""
    ctx = _ctx
    prev = ctx.trace
    ctx.trace = trace
    try:
        return trace.process_primitive(prim, args, params)
    finally:
        ctx.trace = prev


class new_trace:  # noqa: N801 - used like a function: ``with new_trace(t):``
    """Run a transformation's body under ``trace`` (whose parent is the current trace)."""

    __slots__ = ("trace", "prev")

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def __enter__(self) -> Trace:
        trace = self.trace
        self.prev = trace.parent = _ctx.trace
        trace.created_at = user_frame()  # type: ignore[attr-defined]
        _ctx.trace = trace
        return trace

    def __exit__(self, *exc: object) -> None:
        _ctx.trace = self.prev
        self.trace.alive = False
        if CHECK_LEAKS and exc[0] is None:
            from funcgrad.leak_check import check_leaks  # noqa: PLC0415 - only when on

            check_leaks(self.trace, Tracer)


def leaked_tracer_error(tracer: Tracer, where: str) -> UnexpectedTracerError:
    trace = tracer._trace
    state = "has already finished" if not trace.alive else "is not active here"
    return UnexpectedTracerError(
        f"{where} received a tracer {tracer.aval.str_short()} from a "
        f"{trace.describe()} that {state}, at {user_frame()}. A value computed inside "
        "a transformed function (grad, jvp, vmap, jit, ...) escaped it, e.g. through "
        "a global, a closure or a list kept outside. Return the value from the "
        "function instead, or keep using it inside the transformation."
    )


def backend_xp(args: Sequence[Any]) -> Any:
    """The array module of the (non-tracer) buffers: NumPy unless any is a CuPy array."""
    for a in args:
        if type(a).__module__.startswith("cupy"):
            import cupy  # noqa: PLC0415 - only when CuPy arrays exist

            return cupy
    return np


def _check_one_device(args: Sequence[Any]) -> None:
    """Device buffers of one operation must share their GPU (host data follows them)."""
    places = [f"argument {i}: cuda:{a.device.id}" for i, a in enumerate(args)
              if type(a).__module__.startswith("cupy")]
    devs = {p.split(": ")[1] for p in places}
    if len(devs) > 1:
        raise DeviceError(
            "arrays on different devices in one operation (" + "; ".join(places) + ") "
            f"at {user_frame()}; move them with funcgrad.device_put(x, device) first"
        )


def _constant_fill(a: np.ndarray) -> bool:
    """A host array with no data of its own: one element at most, or one broadcast (all
    strides zero, as ``full`` and the seeds and zeros of derivatives make them)."""
    return a.size <= 1 or not any(a.strides)


def follow_device(xp: Any, a: np.ndarray) -> Any:
    """Host data ``a`` as an array of ``xp``, the device of the other operands (CuPy refuses
    NumPy arrays, even 0-d ones), as JAX moves uncommitted data: a constant fill becomes a
    shared device scalar (or a broadcast of one), anything else is uploaded."""
    if not _constant_fill(a):
        if a.size > 1 and 0 in a.strides:
            # A broadcast (a host table met a device operand of a larger shape, as one_hot's
            # classes do): upload the table once and broadcast it on the device.
            base = a[tuple(slice(0, 1) if st == 0 else slice(None) for st in a.strides)]
            return xp.broadcast_to(xp.asarray(np.ascontiguousarray(base)), a.shape)
        return xp.asarray(a)
    if a.size == 0:
        return xp.zeros(a.shape, a.dtype)
    one = device_scalar(xp, a.reshape(-1)[:1].reshape(()))
    return one if a.ndim == 0 else xp.broadcast_to(one, a.shape)


# 0-d device copies of host scalars, by (device, stream, dtype, bits): eager code that
# multiplies by 2.0 or adds an epsilon on every step uploads each value once, not once per
# operation. One copy per stream: the upload is queued on the current stream, so only work
# queued after it on that same stream may read it (no synchronisation needed).
_DEVICE_SCALARS: dict[tuple[Any, ...], Any] = {}
_SHARED_PTRS: set[int] = set()


def device_scalar(xp: Any, host: np.ndarray) -> Any:
    """The 0-d host array ``host`` as a 0-d array of ``xp`` (a device module), uploaded
    once per stream and then shared by every operation that takes it as an operand."""
    key = (xp.cuda.runtime.getDevice(), xp.cuda.get_current_stream().ptr, host.dtype,
           host.tobytes())
    hit = _DEVICE_SCALARS.get(key)
    if hit is None:
        if len(_DEVICE_SCALARS) >= 4096:
            _DEVICE_SCALARS.clear()
            _SHARED_PTRS.clear()
        hit = _DEVICE_SCALARS[key] = xp.asarray(host)
        _SHARED_PTRS.add(hit.data.ptr)
    return hit


def _device_operands(xp: Any, bufs: list[Any], avals: Sequence[ShapedArray]) -> list[Any]:
    """The host data among ``bufs`` (arrays, Python scalars) on the device of ``xp``."""
    out = []
    for b, av in zip(bufs, avals):
        if isinstance(b, np.ndarray):
            b = follow_device(xp, b)
        elif type(b) in _PY_SCALARS:
            b = device_scalar(xp, np.asarray(b, dtype=av.dtype))
        out.append(b)
    return out


def _unshared(out: Any) -> Any:
    """Results that are (views of) a shared device scalar, copied: a result may be written
    in place later (the PyTorch face's ``add_``), and the shared copy must never change."""
    for o in out if isinstance(out, list) else (out,):
        if type(o) is ArrayImpl and type(o._value).__module__.startswith("cupy") and \
                o._value.data.ptr in _SHARED_PTRS:
            o._value = o._value.copy()
    return out


_PY_SCALARS = (bool, int, float, complex)


class EvalTrace(Trace):
    """The eager trace: run each primitive's ``impl`` right away.

    Arguments are Arrays, raw backend buffers (the engine's own constants, and the
    PyTorch face's tensors) or Python scalars; results are ``ArrayImpl`` whose abstract
    value is the primitive's ``abstract_eval``. The impl must produce exactly that
    dtype and shape: nothing is cast here (a mismatch is an internal error).
    """

    label = "eager evaluation"

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        bufs = list(args)
        avals = []
        scalars = on_device = False
        for i, a in enumerate(args):
            t = type(a)
            if t is ArrayImpl:
                bufs[i] = v = a._value
                avals.append(a._aval)
                if type(v) is not np.ndarray and not isinstance(v, np.ndarray):
                    on_device = True
            elif t is np.ndarray:
                avals.append(ndarray_aval(a))
            elif t in _PY_SCALARS:
                scalars = True
                avals.append(get_aval(a))
            elif isinstance(a, Tracer):
                raise leaked_tracer_error(a, f"primitive {prim.name}")
            elif t is Missing:
                raise missing_value_error(prim)
            else:
                avals.append(get_aval(a))
                if t.__module__.startswith("cupy") or t is MetaBuffer:
                    on_device = True
                elif isinstance(a, np.generic):
                    bufs[i] = np.asarray(a)
        if on_device and MetaBuffer in map(type, bufs):
            return meta_results(prim, avals, params)
        xp = backend_xp(bufs) if on_device else np  # (a subclass of ndarray is host data)
        if xp is not np:
            # Host data (NumPy arrays, arrays made without a device, the tables of
            # funcgrad's own functions) goes where the device operands are, as JAX moves
            # it. (The PyTorch face refuses a CPU tensor with a CUDA one before this.)
            _check_one_device(bufs)
            bufs = _device_operands(xp, bufs, avals)
            if prim.call_like:
                return _unshared(self._call(prim, xp, args, bufs, avals, params))
            return _unshared(apply_impl(prim, xp, bufs, avals, params))
        if scalars:
            # impls work on arrays: a Python number becomes one of its (weak) dtype.
            bufs = [np.asarray(b, dtype=av.dtype) if type(b) in _PY_SCALARS else b
                    for b, av in zip(bufs, avals)]
        if prim.call_like:
            return self._call(prim, np, args, bufs, avals, params)
        return apply_impl(prim, np, bufs, avals, params)

    @staticmethod
    def _call(prim: Primitive, xp: Any, args: Sequence[Any], bufs: list[Any],
              avals: Sequence[ShapedArray], params: dict[str, Any]) -> Any:
        if not prim.cheap_abstract_eval:
            # The body runs user code: Arrays keep their types (weak ones included).
            bufs = [a if type(a) is ArrayImpl else b for a, b in zip(args, bufs)]
        return _wrap_call_outputs(prim, xp, bufs, avals, params)


_EVAL_PROCESS = EvalTrace.process_primitive


def _process_committing(self: EvalTrace, prim: Primitive, args: Sequence[Any],
                        params: dict[str, Any]) -> Any:
    """The eager trace once some array was committed to a device (``device_put`` with a
    device): results computed from a committed operand are committed too, as JAX's. Until
    then the eager trace runs without this check."""
    out = _EVAL_PROCESS(self, prim, args, params)
    if any(type(a) is ArrayImpl and a.committed for a in args):
        commit(out)
    return out


def _start_committing() -> None:
    EvalTrace.process_primitive = _process_committing  # type: ignore[method-assign]


_ON_FIRST_COMMIT.append(_start_committing)


def apply_impl(prim: Primitive, xp: Any, bufs: Sequence[Any], avals: Sequence[ShapedArray],
               params: dict[str, Any]) -> Any:
    """``prim``'s impl on backend buffers of the given avals, its results wrapped as Arrays
    of the avals its shape rule gives (the eager trace's work once its operands are
    buffers; also used directly by callers that already hold buffers and avals)."""
    out_avals = abstract_eval(prim, avals, params)
    out = prim.impl(xp, *bufs, **params)
    if not prim.multiple_results:
        return _wrap_exact(prim, xp, out, out_avals[0])
    return [_wrap_exact(prim, xp, o, av) for o, av in zip(out, out_avals)]


def ndarray_aval(a: np.ndarray) -> ShapedArray:
    """The aval of a NumPy buffer (one aval object per shape and dtype)."""
    # One aval object per (shape, dtype): the shape-rule cache then compares by identity.
    key = (a.shape, a.dtype)
    aval = _NDARRAY_AVALS.get(key)
    if aval is None:
        dt = a.dtype
        if dt not in dtypes.SUPPORTED:
            dt = dtypes.to_dtype(dt)
        aval = _intern(key, ShapedArray.make(a.shape, dt))
    return aval


_NDARRAY_AVALS: dict[tuple[Any, ...], ShapedArray] = {}


def _intern(key: tuple[Any, ...], aval: ShapedArray) -> ShapedArray:
    if len(_NDARRAY_AVALS) >= 10_000:
        _NDARRAY_AVALS.clear()
    _NDARRAY_AVALS[key] = aval
    return aval


def canonical_aval(aval: ShapedArray) -> ShapedArray:
    """The one aval object :func:`ndarray_aval` gives for this shape and dtype (``aval``
    itself when weakly typed): caches keyed by aval identity then hit."""
    if aval.weak_type:
        return aval
    key = (aval.shape, aval.dtype)
    hit = _NDARRAY_AVALS.get(key)
    return hit if hit is not None else _intern(key, aval)


def _wrap_exact(prim: Primitive, xp: Any, out: Any, aval: ShapedArray) -> ArrayImpl:
    return wrap(_checked(prim, xp, out, aval), aval)


def _checked(prim: Primitive, xp: Any, out: Any, aval: ShapedArray) -> Any:
    if type(out) is not xp.ndarray and not prim.places_result:
        out = xp.asarray(out)
    if out.dtype != aval.dtype or out.shape != aval.shape:
        raise FuncgradError(
            f"internal error: the impl of primitive {prim.name} returned "
            f"{out.dtype}{list(out.shape)} where its abstract_eval says {aval.str_short()}"
        )
    if CHECK_VALUES:
        check_values(prim.name, xp, out)
    return out


def impl_buffers(prim: Primitive, xp: Any, bufs: Sequence[Any], avals: Sequence[ShapedArray],
                 params: dict[str, Any]) -> tuple[list[Any], Sequence[ShapedArray]]:
    """:func:`apply_impl` without the Arrays: the results as backend buffers (checked
    against the shape rule) and their avals, for callers that wrap buffers their own way."""
    out_avals = abstract_eval(prim, avals, params)
    return impl_checked(prim, xp, bufs, out_avals, params), out_avals


def impl_checked(prim: Primitive, xp: Any, bufs: Sequence[Any],
                 out_avals: Sequence[ShapedArray], params: dict[str, Any]) -> list[Any]:
    """``prim``'s impl on buffers whose results' avals the caller knows (its shape rule
    already ran): the results as buffers, checked against those avals."""
    out = prim.impl(xp, *bufs, **params)
    if not prim.multiple_results:
        return [_checked(prim, xp, out, out_avals[0])]
    return [_checked(prim, xp, o, av) for o, av in zip(out, out_avals)]


def check_values(where: str, xp: Any, out: Any) -> None:
    """jax_debug_nans / jax_debug_infs: JAX's FloatingPointError for a bad result;
    jax_no_execution: no result at all."""
    if "noexec" in CHECK_VALUES:
        raise RuntimeError(f"funcgrad tried to execute {where}, but the no_execution config "
                           "option is set")
    if not dtypes.is_inexact(out.dtype):
        return
    # The message names the primitive and the user's line that applied it; JAX's line on
    # stdout comes first (an eager operation is a jitted program there).
    if "nan" in CHECK_VALUES and bool(xp.isnan(out).any()):
        print(DEOPTIMIZED)
        raise FloatingPointError(f"invalid value (nan) encountered in {where} "
                                 f"(at {user_frame()})")
    if "inf" in CHECK_VALUES and bool(xp.isinf(out).any()):
        print(DEOPTIMIZED)
        raise FloatingPointError(f"invalid value (inf) encountered in {where} "
                                 f"(at {user_frame()})")


# What JAX prints when jax_debug_nans/jax_debug_infs finds a bad output of a program (for
# infinities too), before it runs the program op by op.
DEOPTIMIZED = ("Invalid nan value encountered in the output of a jax.jit function. Calling "
               "the de-optimized version.")


def _wrap_call_outputs(prim: Primitive, xp: Any, bufs: Sequence[Any],
                       avals: Sequence[ShapedArray], params: dict[str, Any]) -> Any:
    """Call-like primitives (custom rules, control flow, jit) run Python code whose results
    are mostly Arrays already; raw buffers among them are wrapped."""
    outs = prim.impl(xp, *bufs, **params)
    seq = outs if prim.multiple_results else [outs]
    want = abstract_eval(prim, avals, params) if prim.cheap_abstract_eval else None
    fixed = []
    for k, o in enumerate(seq):
        if type(o) is not ArrayImpl:
            if isinstance(o, Tracer):
                raise leaked_tracer_error(o, f"primitive {prim.name}")
            av = want[k] if want is not None else get_aval(o)
            o = wrap(xp.asarray(o, dtype=av.dtype), av)
        elif want is not None and o._aval.weak_type != want[k].weak_type:
            # The body ran on raw buffers (strong); the staged types say weak or not.
            o = wrap(o._value, want[k])
        fixed.append(o)
    return fixed if prim.multiple_results else fixed[0]


class MetaBuffer(HasShape):
    """A buffer with a shape and a dtype but no data: PyTorch's ``meta`` device.

    An operation with one among its operands computes no values: its results are
    MetaBuffers of the avals the primitives' shape rules give, so any program of
    primitives (derivative rules included) runs on them without touching data.

    >>> import numpy as np
    >>> from funcgrad.primitives import add_p
    >>> add_p.bind(MetaBuffer((2, 3), np.float32), np.ones((2, 3), np.float32))._value
    MetaBuffer(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "strides")
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    strides: tuple[int, ...]

    def __init__(self, shape: Sequence[int], dtype: Any,
                 strides: Sequence[int] | None = None) -> None:
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        if strides is None:
            # Row-major byte strides, as NumPy gives a new array.
            acc, out = self.dtype.itemsize, []
            for n in reversed(self.shape):
                out.append(acc)
                acc *= max(n, 1)
            strides = out[::-1]
        self.strides = tuple(int(s) for s in strides)

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise FuncgradError("a meta buffer has no data to read (it holds only a shape and "
                            "a dtype)")

    def get(self) -> np.ndarray:
        return self.__array__()

    def copy(self) -> MetaBuffer:
        return MetaBuffer(self.shape, self.dtype)

    def astype(self, dtype: Any) -> MetaBuffer:
        return MetaBuffer(self.shape, dtype)

    def __repr__(self) -> str:
        return f"MetaBuffer(shape={self.shape}, dtype={self.dtype})"


def meta_results(prim: Primitive, avals: Sequence[ShapedArray], params: dict[str, Any]
                 ) -> Any:
    """``prim`` on operands of these avals, one at least a :class:`MetaBuffer`: Arrays
    holding MetaBuffers of the shapes and dtypes its shape rule gives.

    >>> from funcgrad.primitives import sin_p
    >>> meta_results(sin_p, [ShapedArray((2,), np.dtype("float32"))], {})._value
    MetaBuffer(shape=(2,), dtype=float32)
    """
    outs = [wrap(MetaBuffer(av.shape, av.dtype), av)
            for av in abstract_eval(prim, avals, params)]
    return outs if prim.multiple_results else outs[0]


class Missing:
    """A value the reverse engine did not keep, standing as its abstract value.

    A vjp rule may read its shape and dtype (``get_aval``); computing with it is an
    internal error: the primitive's ``vjp_reads`` forgot it.
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Missing({self.aval.str_short()})"


def missing_value_error(prim: Primitive) -> FuncgradError:
    return FuncgradError(
        f"internal error: a reverse-mode rule computed with a value the engine did not keep "
        f"(in primitive {prim.name}); the vjp_reads of the primitive being differentiated "
        "must list it"
    )


def as_buffer(x: Any) -> Any:
    """The backend buffer behind an Array (other values are returned as they are)."""
    return x._value if type(x) is ArrayImpl else x


# ------------------------------------------------------------------ tracers

# Where JAX's error texts point (``See .../errors.html#jax.errors.<Name>``).
_ERRORS_PAGE = "https://docs.jax.dev/en/latest/errors.html"


class Tracer(Array):
    """A value of some trace; an ``Array`` to the user. Operators and methods come from
    ``funcgrad.numpy`` (installed on ``Array``)."""

    __slots__ = ("_trace",)
    # NumPy defers binary operators (``np_array * tracer``) to our reflected methods.
    __array_priority__ = 1000

    _trace: Trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError(f"{type(self).__name__} must define aval")

    def concrete_value(self) -> Any:
        """The concrete array behind this tracer, or ``None`` when it is abstract."""
        return None

    def _error_repr(self) -> str:
        """JAX's words for this tracer in its errors: ``traced array with shape f32[]``
        written ``float32[]``."""
        aval = self.aval
        return f"traced array with shape {aval.dtype.name}[{','.join(map(str, aval.shape))}]"

    def _origin_msg(self) -> str:
        """JAX's provenance lines for an error about this tracer (which function was being
        traced, which arguments the value depends on); empty when there are none."""
        return ""

    def _abstract_error(self, err: type[JAXTypeError], context: str = "") -> JAXTypeError:
        """JAX's text for a concrete value asked of this (abstract) tracer, by error type:
        boolean conversion, ``__index__``, or the general ConcretizationTypeError whose
        ``context`` names what asked (the ``int`` function, the ``item()`` method)."""
        if err is TracerBoolConversionError:
            msg = f"Attempted boolean conversion of {self._error_repr()}.{self._origin_msg()}"
        elif err is TracerIntegerConversionError:
            msg = f"The __index__() method was called on {self._error_repr()}" \
                  f"{self._origin_msg()}"
        elif err is TracerArrayConversionError:
            msg = ("The numpy.ndarray conversion method __array__() was called on "
                   f"{self._error_repr()}{self._origin_msg()}")
        else:
            msg = ("Abstract tracer value encountered where concrete value is expected: "
                   f"{self._error_repr()}\n{context}{self._origin_msg()}\n")
        return err(f"{msg}\nSee {_ERRORS_PAGE}#jax.errors.{err.__name__}")

    # JAX's errors for placement questions: a traced value has no placement to ask about.
    @property
    def committed(self) -> bool:
        raise self._abstract_error(
            ConcretizationTypeError, f"The 'committed' attribute is not available on "
            f"{self._error_repr()}.{self._origin_msg()}")

    @property
    def addressable_shards(self) -> Any:
        raise self._abstract_error(
            ConcretizationTypeError, f"The 'addressable_shards' attribute is not available on "
            f"{self._error_repr()}.{self._origin_msg()}")

    @property
    def is_fully_addressable(self) -> bool:
        raise self._abstract_error(
            ConcretizationTypeError, f"The is_fully_addressable property was called on "
            f"{self._error_repr()}.{self._origin_msg()}")

    @property
    def sharding(self) -> Any:
        raise AttributeError(f"The 'sharding' attribute is not available on "
                             f"{self._error_repr()}. To query sharding information on "
                             "tracers, use `jax.typeof(x)`.")

    def _concrete(self, context: str, err: type[JAXTypeError]) -> Any:
        """The concrete value behind this tracer, or JAX's error of type ``err`` (see
        :meth:`_abstract_error`; ``context`` is that of a ConcretizationTypeError)."""
        val = self.concrete_value()
        if val is None:
            raise self._abstract_error(err, context)
        return as_buffer(val)

    def __bool__(self) -> bool:
        val = self.concrete_value()
        if val is not None:
            return bool(as_buffer(val))
        size = math.prod(self.aval.shape)
        if size == 0:
            raise ValueError("The truth value of an empty array is ambiguous. Use "
                             "`array.size > 0` to check that an array is not empty.")
        if size > 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        raise self._abstract_error(TracerBoolConversionError)

    def _scalar_conversion(self, fun: type) -> Any:
        val = self.concrete_value()
        if val is not None:
            return as_buffer(val)
        ndim = len(self.aval.shape)
        if ndim > 0:
            raise TypeError("Only scalar arrays can be converted to Python scalars; "
                            f"got arr.ndim={ndim}")
        name = fun.__name__
        raise self._abstract_error(
            ConcretizationTypeError,
            f"The problem arose with the `{name}` function. If trying to convert the data "
            f"type of a value, try using `x.astype({name})` or `jnp.array(x, {name})` "
            "instead.")

    def __float__(self) -> float:
        return float(self._scalar_conversion(float))

    def __int__(self) -> int:
        # JAX's int() raises the general error; __index__ the integer-conversion one.
        return int(self._scalar_conversion(int))

    def __complex__(self) -> complex:
        return complex(self._scalar_conversion(complex))

    def __index__(self) -> int:
        val = self.concrete_value()
        if val is not None:
            return operator.index(as_buffer(val))
        aval = self.aval
        if aval.shape != () or np.dtype(aval.dtype).kind not in "iu":
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        raise self._abstract_error(TracerIntegerConversionError)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        # Even a tracer with a known value refuses: NumPy would compute without the
        # transformation and silently drop its derivative (or batch axis).
        raise self._abstract_error(TracerArrayConversionError)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        # JAX's tracers have no __array_function__; this one does what NumPy does without
        # it (kept for subclasses that extend it): run NumPy's own implementation. Functions
        # that delegate to a method of a non-ndarray argument (np.sum, np.reshape,
        # np.argmax... through ``_wrapfunc``/``_wrapreduction``) call the tracer's method and
        # stay traced, as do np.shape/np.ndim/np.size; the rest convert with __array__ and
        # raise JAX's TracerArrayConversionError.
        return func._implementation(*args, **kwargs)

    def item(self) -> Any:
        val = self._concrete("This occurred in the item() method of jax.Array",
                             ConcretizationTypeError)
        # (A Python scalar as it is: a Python float's jvp primal.)
        return val.item() if hasattr(val, "item") else val

    def tolist(self) -> Any:
        val = self._concrete(f"The tolist() method was called on {self._error_repr()}."
                             f"{self._origin_msg()}", ConcretizationTypeError)
        return val.tolist() if hasattr(val, "tolist") else val

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


def jax_type_text(aval: ShapedArray) -> str:
    """An aval as JAX's tracer reprs write it: ``~float32[]`` (weak), ``uint8[2,3]``.

    >>> from funcgrad.ir import ShapedArray
    >>> jax_type_text(ShapedArray((2, 3), np.dtype(np.uint8)))
    'uint8[2,3]'
    """
    weak = "~" if aval.weak_type else ""
    return f"{weak}{np.dtype(aval.dtype).name}[{','.join(map(str, aval.shape))}]"


class PrimalTracer(Tracer):
    """A tracer that carries a value of its parent trace (jvp and vjp tracers)."""

    __slots__ = ("primal",)

    primal: Any

    @property
    def aval(self) -> ShapedArray:
        return get_aval(self.primal)

    def concrete_value(self) -> Any:
        p = self.primal
        return p.concrete_value() if isinstance(p, Tracer) else p


# ------------------------------------------------------------- abstract values


def get_aval(x: Any) -> ShapedArray:
    """The abstract value of an Array, a tracer, a buffer or a Python scalar."""
    t = type(x)
    if t is ArrayImpl:
        aval: ShapedArray = x._aval  # (a typed local, not cast(): this runs per operand)
        return aval
    if t is np.ndarray:
        return ndarray_aval(x)
    if isinstance(x, Tracer):
        return x.aval
    if t in _PY_SCALARS:
        return ShapedArray.make((), dtypes.scalar_kind_dtype(x), t is not bool)
    if t is Missing:
        missing: ShapedArray = x.aval
        return missing
    dt = getattr(x, "dtype", None)
    shape = getattr(x, "shape", None)
    if dt is not None and shape is not None:
        return ShapedArray(shape, dtypes.to_dtype(dt))
    # A TypeError, as JAX's "... is not a valid JAX type".
    raise DTypeError(
        f"{type(x).__name__} is not an array type funcgrad understands "
        f"(at {user_frame()}); pass a funcgrad Array, a NumPy array or a Python number"
    )


def is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer)


_ctx = _Context()
