"""Primitives, ``bind``, traces and tracers.

Every operation goes through :func:`bind`, which hands it to the current trace.
The current trace lives in a thread-local context and is the eager
``EvalTrace`` unless a transformation is running. A transformation's trace
computes on the values of its *parent* trace by binding under that parent, so
transformations nest in any order.

>>> import numpy as np
>>> from funcgrad.primitives import add_p
>>> add_p.bind(np.ones(2), np.ones(2))
array([2., 2.])
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.errors import (
    ConcretizationTypeError,
    DeviceError,
    DTypeError,
    FuncgradError,
    ShapeError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from funcgrad.ir import ShapedArray
from funcgrad.source_info import user_frame

# --------------------------------------------------------------- primitives


class Primitive:
    """A named operation and its rules, all registered where it is defined.

    ``abstract_eval(*avals, **params)`` gives the output aval(s);
    ``impl(xp, *arrays, **params)`` computes with the array module ``xp``;
    ``jvp``, ``vjp`` and ``batch`` are the transform rules (see
    ``funcgrad.primitives.rules`` for their signatures).
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
        # Optional reverse-mode hook: vjp_fwd(primals, **params) -> (out, backward(ct)).
        self.vjp_fwd: Callable[..., Any] | None = None
        PRIMITIVES[name] = self

    def bind(self, *args: Any, **params: Any) -> Any:
        return bind(self, *args, **params)

    def __repr__(self) -> str:
        return self.name


PRIMITIVES: dict[str, Primitive] = {}


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``prim`` to ``args`` under the current trace."""
    return current_trace().process_primitive(prim, args, params)


def abstract_eval(prim: Primitive, avals: Sequence[ShapedArray], params: dict[str, Any]
                  ) -> list[ShapedArray]:
    """Run ``prim``'s shape rule, turning a failure into an error at the user's line."""
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
    """The array module of the (non-tracer) arguments: NumPy unless any is a CuPy array."""
    xp: Any = np
    for a in args:
        mod = type(a).__module__
        if mod.startswith("cupy"):
            import cupy  # noqa: PLC0415 - only when CuPy arrays exist

            xp = cupy
    if xp is not np:
        _check_one_device(args)
    return xp


def _check_one_device(args: Sequence[Any]) -> None:
    places = []
    for i, a in enumerate(args):
        if type(a).__module__.startswith("cupy"):
            places.append(f"argument {i}: cuda:{a.device.id}")
        elif isinstance(a, np.ndarray) and a.ndim > 0:
            places.append(f"argument {i}: cpu")
    devs = {p.split(": ")[1] for p in places}
    if len(devs) > 1:
        raise DeviceError(
            "arrays on different devices in one operation (" + "; ".join(places) + ") "
            f"at {user_frame()}; move them with funcgrad.device_put(x, device) first"
        )


_PY_SCALARS = (bool, int, float, complex)


class EvalTrace(Trace):
    """The eager trace: run each primitive's ``impl`` right away."""

    label = "eager evaluation"

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        if not prim.multiple_results and not prim.call_like and all(
                type(a) is np.ndarray for a in args):
            # The common case, NumPy arrays only: no conversions, no device checks.
            (out_aval,) = abstract_eval(prim, [get_aval(a) for a in args], params)
            out = prim.impl(np, *args, **params)
            if type(out) is not np.ndarray or out.dtype != out_aval.dtype:
                out = _as_array(np, out, out_aval)
            return out
        for a in args:
            if isinstance(a, Tracer):
                raise leaked_tracer_error(a, f"primitive {prim.name}")
        if any(type(a) in _PY_SCALARS for a in args):
            # impls work on arrays: a Python number becomes one of its default dtype.
            args = [np.asarray(a, dtype=get_aval(a).dtype) if type(a) in _PY_SCALARS else a
                    for a in args]
        if prim.call_like:
            return prim.impl(backend_xp(args), *args, **params)
        avals = [get_aval(a) for a in args]
        out_avals = abstract_eval(prim, avals, params)
        xp = backend_xp(args)
        out = prim.impl(xp, *args, **params)
        outs = out if prim.multiple_results else (out,)
        fixed = [_as_array(xp, o, av) for o, av in zip(outs, out_avals)]
        return fixed if prim.multiple_results else fixed[0]


def _as_array(xp: Any, value: Any, aval: ShapedArray) -> Any:
    if type(value) is not xp.ndarray:
        value = xp.asarray(value)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    return value


# ------------------------------------------------------------------ tracers


class Tracer:
    """A value of some trace. Operators dispatch to ``funcgrad.numpy``."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    # NumPy defers binary operators to our reflected methods.
    __array_ufunc__ = None

    _trace: Trace

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError(f"{type(self).__name__} must define aval")

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return self.aval.ndim

    @property
    def size(self) -> int:
        return self.aval.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, idx: Any) -> Any:
        from funcgrad.numpy._indexing import getitem  # noqa: PLC0415

        return getitem(self, idx)

    def concrete_value(self) -> Any:
        """The concrete array behind this tracer, or ``None`` when it is abstract."""
        return None

    def _concrete(self, what: str, err: type[ConcretizationTypeError]) -> Any:
        val = self.concrete_value()
        if val is None:
            raise err(
                f"{what} of a traced value {self.aval.str_short()} at {user_frame()}: "
                f"under {self._trace.describe()} the value is abstract (only its shape and "
                "dtype are known), so Python control flow cannot depend on it. Mark the "
                "argument static with jit(f, static_argnums=...), or use "
                "funcgrad.lax.cond / funcgrad.lax.while_loop / funcgrad.numpy.where."
            )
        return val

    def __bool__(self) -> bool:
        return bool(self._concrete("bool() (an `if`, `while`, `and` or `or`)",
                                   TracerBoolConversionError))

    def __float__(self) -> float:
        return float(self._concrete("float()", ConcretizationTypeError))

    def __int__(self) -> int:
        return int(self._concrete("int()", TracerIntegerConversionError))

    def __complex__(self) -> complex:
        return complex(self._concrete("complex()", ConcretizationTypeError))

    def __index__(self) -> int:
        return int(self._concrete("use as a Python index", TracerIntegerConversionError))

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        val = self._concrete("conversion to a NumPy array", ConcretizationTypeError)
        return np.asarray(val, dtype=dtype)

    def item(self) -> Any:
        return self._concrete(".item()", ConcretizationTypeError).item()

    def tolist(self) -> Any:
        return self._concrete(".tolist()", ConcretizationTypeError).tolist()

    def __hash__(self) -> int:
        raise TypeError("traced values are unhashable, as NumPy arrays are")

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


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
    """The abstract value of a tracer, an array or a Python scalar."""
    if type(x) is np.ndarray and x.dtype in _SUPPORTED_DTYPES:
        return ShapedArray.make(x.shape, x.dtype)
    if isinstance(x, Tracer):
        return x.aval
    if dtypes.python_scalar(x):
        return ShapedArray((), dtypes.scalar_kind_dtype(x), weak_type=True)
    dt = getattr(x, "dtype", None)
    shape = getattr(x, "shape", None)
    if dt is not None and shape is not None:
        return ShapedArray(shape, dtypes.canonicalize(dt))
    if isinstance(x, (np.generic,)):
        return ShapedArray((), dtypes.canonicalize(x.dtype))
    raise FuncgradError(
        f"{type(x).__name__} is not an array type funcgrad understands "
        f"(at {user_frame()}); pass a NumPy array, a Python number or a funcgrad value"
    )


_SUPPORTED_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128))


def is_concrete(x: Any) -> bool:
    return not isinstance(x, Tracer)


_ctx = _Context()
