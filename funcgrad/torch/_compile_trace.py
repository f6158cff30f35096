"""The staging trace of ``torch.compile``: values that can be written in place.

PyTorch-style code writes into arrays: the optimizers update their state with NumPy's
in-place operators and ``out=`` (``buf *= momentum``, ``np.subtract(g, d, out=m)``).
Under ``torch.compile`` a Tensor's ``_data`` is a :class:`CompileTracer`, a staging
tracer that behaves as a writable NumPy array: an in-place update stages the new value
and points the same tracer object at it. Whoever holds the object (a Tensor, an
optimizer's state) sees the new value, as with a NumPy buffer, and the staged program
stays a pure function from the values before the step to the values after it.

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> from funcgrad.core import new_trace
>>> from funcgrad.ir import ShapedArray
>>> trace = CompileTrace()
>>> with new_trace(trace):
...     m = trace.new_arg(ShapedArray((2,), np.dtype(np.float32)))
...     alias = m
...     m *= 0.5
...     _ = np.add(m, 1.0, out=m)
>>> alias is m, [e.primitive.name for e in trace.eqns]
(True, ['mul', 'add'])
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import funcgrad.numpy as fnp
from funcgrad.core import Primitive
from funcgrad.errors import TracerArrayConversionError
from funcgrad.ir import ShapedArray, Var
from funcgrad.staging import StagingTrace, StagingTracer


class _Flags:
    """What NumPy-style code asks of a buffer before writing into it."""

    __slots__ = ()
    writeable = True
    c_contiguous = True
    f_contiguous = False
    aligned = True
    owndata = True


_FLAGS = _Flags()


def _inplace(op: Callable[[Any, Any], Any]) -> Callable[[CompileTracer, Any], CompileTracer]:
    def method(self: CompileTracer, other: Any) -> CompileTracer:
        self._assign(op(self, other))
        return self

    method.__name__ = f"__i{op.__name__.strip('_')}__"
    return method


class CompileTracer(StagingTracer):
    """A staged value with NumPy's buffer semantics (in-place updates, ``out=``)."""

    __slots__ = ()
    __array_priority__ = 1000
    flags = _FLAGS

    def _assign(self, value: Any) -> None:
        """Make this object stand for ``value`` (cast and broadcast as NumPy writes)."""
        av = self.aval
        if getattr(value, "dtype", None) != av.dtype:
            value = fnp.astype(value, av.dtype)
        if tuple(getattr(value, "shape", ())) != av.shape:
            value = fnp.broadcast_to(value, av.shape)
        self._var = self._trace.to_atom(value)  # type: ignore[attr-defined]

    def copy(self, order: str = "K") -> CompileTracer:
        # A new object for the same value: writing into the copy leaves this one alone.
        return CompileTracer(self._trace, self._var)  # type: ignore[arg-type]

    __iadd__ = _inplace(operator.add)
    __isub__ = _inplace(operator.sub)
    __imul__ = _inplace(operator.mul)
    __itruediv__ = _inplace(operator.truediv)
    __ifloordiv__ = _inplace(operator.floordiv)
    __imod__ = _inplace(operator.mod)
    __ipow__ = _inplace(operator.pow)
    __iand__ = _inplace(operator.and_)
    __ior__ = _inplace(operator.or_)
    __ixor__ = _inplace(operator.xor)
    __imatmul__ = _inplace(operator.matmul)

    def __setitem__(self, idx: Any, value: Any) -> None:
        self._assign(fnp.index_update(self, idx, value))

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = getattr(fnp, ufunc.__name__, None)
        if method != "__call__" or fn is None:
            raise TracerArrayConversionError(
                f"numpy.{ufunc.__name__}.{method} on a value staged by torch.compile has no "
                "funcgrad.numpy equivalent")
        out = kwargs.pop("out", None)
        kwargs.pop("casting", None)
        return _finish(self, fn(*inputs, **kwargs), out)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = getattr(func, "__name__", str(func))
        fn = getattr(fnp, name, None)
        if fn is None:
            return super().__array_function__(func, types, args, kwargs)
        out = kwargs.pop("out", None)
        return _finish(self, fn(*args, **kwargs), out)


def _finish(like: CompileTracer, result: Any, out: Any) -> Any:
    """A NumPy call's result as a writable staged value; written into ``out`` if given."""
    trace: CompileTrace = like._trace  # type: ignore[assignment]
    if out is not None:
        target = out[0] if isinstance(out, tuple) else out
        if not isinstance(target, CompileTracer):
            raise TracerArrayConversionError(
                "a value staged by torch.compile was written into a NumPy array "
                "(out=); that array is not part of the compiled program")
        target._assign(result)
        return target
    if isinstance(result, (tuple, list)):
        return type(result)(trace.lift(r) for r in result)
    return trace.lift(result)


class CompileTrace(StagingTrace):
    """A staging trace whose values are :class:`CompileTracer` objects.

    It knows the device each staged value stands for (``Tensor.device`` of a staged Tensor
    reads it): ``device``, where the step's program runs, unless the value came from a
    ``.to()`` / ``.cpu()`` / ``.cuda()`` (a ``device_put``) or from operands that did. A
    compiled program runs on one device; results staged on another are moved there after
    the call."""

    label = "torch.compile staging"

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.device = device
        # Values staged on another device than ``device``.
        self.devices: dict[Var, str] = {}

    def device_of(self, value: StagingTracer) -> str:
        """The engine's name of the device ``value`` stands for (``"cpu"``, ``"cuda:0"``)."""
        return self.devices.get(value._var, self.device)

    def new_arg(self, aval: ShapedArray) -> CompileTracer:
        return CompileTracer(self, Var(aval))

    def lift(self, value: Any) -> Any:
        """A value of this trace as a writable staged value (constants become inputs of
        the program's constant table)."""
        if type(value) is CompileTracer and value._trace is self:
            return value
        if isinstance(value, StagingTracer) and value._trace is self:
            return CompileTracer(self, value._var)
        if not hasattr(value, "shape"):
            return value
        return CompileTracer(self, self.to_atom(value))  # type: ignore[arg-type]

    def process_primitive(self, prim: Primitive, args: Sequence[Any],
                          params: dict[str, Any]) -> Any:
        out = super().process_primitive(prim, args, params)
        outs = out if prim.multiple_results else [out]
        placed = params["device"] if prim.name == "device_put" else next(
            (self.devices[a._var] for a in args if isinstance(a, StagingTracer)
             and a._trace is self and a._var in self.devices), None)
        if placed is not None and placed != self.device:
            for o in outs:
                self.devices[o._var] = placed
        if prim.multiple_results:
            return [CompileTracer(self, o._var) for o in out]
        return CompileTracer(self, out._var)


__all__ = ["CompileTrace", "CompileTracer"]
