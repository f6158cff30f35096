"""The operators and methods of ``funcgrad.Array`` (eager and traced), with JAX's signatures.

Each method is the ``funcgrad.numpy`` function of the same name; NumPy calls such as
``np.sum(x)`` that forward to ``x.sum(axis=None, out=None)`` therefore work too.

>>> import funcgrad.numpy as jnp
>>> x = jnp.arange(6.0).reshape(2, 3)
>>> x.sum(axis=0)
Array([3., 5., 7.], dtype=float32)
>>> (x.T @ x).shape
(3, 3)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad.array import Array


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise NotImplementedError(
            f"The 'out' argument to {name} is not supported: funcgrad arrays are immutable; "
            "use the returned value instead."
        )


def _forward(f: Any) -> Any:
    return lambda self, other: f(self, other)


def _reflected(f: Any) -> Any:
    return lambda self, other: f(other, self)


def _view(self: Any, dtype: Any = None, type: Any = None) -> Any:  # noqa: A002 - NumPy's
    """The same bytes read as ``dtype`` (JAX's ``Array.view``: the last axis grows or
    shrinks with the itemsize)."""
    import funcgrad.numpy as fnp  # noqa: PLC0415
    from funcgrad.conversion import requested_dtype  # noqa: PLC0415
    from funcgrad.primitives.bits import bitcast_convert_type  # noqa: PLC0415

    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dt, src = requested_dtype(dtype, "view"), np.dtype(self.dtype)
    if dt == src:
        return self
    if src == np.bool_:
        return _view(self.astype(np.uint8), dt)
    if dt == np.bool_:
        return _view(self, np.uint8).astype(np.bool_)
    if src.itemsize == dt.itemsize:
        return bitcast_convert_type(self, dt)
    if self.ndim == 0:
        raise ValueError("view() of a 0d array is only supported if the itemsize is "
                         "unchanged.")
    if (self.shape[-1] * src.itemsize) % dt.itemsize != 0:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    if src.itemsize > dt.itemsize:  # the new last axis of bitcast folds into the last one
        out = bitcast_convert_type(self, dt)
        return fnp.reshape(out, (*self.shape[:-1], -1))
    ratio = dt.itemsize // src.itemsize
    grouped = fnp.reshape(self, (*self.shape[:-1], self.shape[-1] // ratio, ratio))
    return bitcast_convert_type(grouped, dt)


def install() -> None:
    """Set the operators and methods on ``Array`` (called once by funcgrad.numpy)."""
    import funcgrad.numpy as fnp  # noqa: PLC0415 - installed after funcgrad.numpy loads
    from funcgrad.numpy import _ufuncs as U  # noqa: PLC0415 - the plain functions, not ufuncs
    from funcgrad.numpy._indexing import AtIndexer, getitem, refuse_list_index  # noqa: PLC0415

    def _getitem(self: Any, idx: Any) -> Any:
        if type(idx) is list:
            refuse_list_index(idx)
        return getitem(self, idx)

    binary = {
        "add": U.add, "sub": U.subtract, "mul": U.multiply, "truediv": fnp.divide,
        "floordiv": fnp.floor_divide, "mod": fnp.remainder, "pow": fnp.power,
        "matmul": fnp.matmul, "and": U.bitwise_and, "or": U.bitwise_or,
        "xor": U.bitwise_xor, "lshift": fnp.left_shift, "rshift": fnp.right_shift,
    }
    attrs: dict[str, Any] = {}
    for name, f in binary.items():
        attrs[f"__{name}__"] = _forward(f)
        attrs[f"__r{name}__"] = _reflected(f)
    attrs["__divmod__"] = lambda self, other: fnp.divmod(self, other)
    attrs["__rdivmod__"] = lambda self, other: fnp.divmod(other, self)
    for name, f in {"lt": fnp.less, "le": fnp.less_equal, "gt": fnp.greater,
                    "ge": fnp.greater_equal, "eq": fnp.equal, "ne": fnp.not_equal}.items():
        attrs[f"__{name}__"] = _forward(f)
    attrs.update({
        "__neg__": U.negative, "__pos__": fnp.positive, "__abs__": fnp.absolute,
        "__invert__": fnp.invert, "__getitem__": _getitem,
    })

    def sum(self: Any, axis: Any = None, dtype: Any = None, out: Any = None,  # noqa: A001
            keepdims: bool = False, initial: Any = None, where: Any = None,
            promote_integers: bool = True) -> Any:
        _no_out(out, "sum")
        return fnp.sum(self, axis, dtype, keepdims=keepdims, initial=initial, where=where)

    def prod(self: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, initial: Any = None, where: Any = None,
             promote_integers: bool = True) -> Any:
        _no_out(out, "prod")
        return fnp.prod(self, axis, dtype, keepdims=keepdims, initial=initial, where=where)

    def mean(self: Any, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, *, where: Any = None) -> Any:
        _no_out(out, "mean")
        return fnp.mean(self, axis, dtype, keepdims=keepdims, where=where)

    def var(self: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
            keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
        _no_out(out, "var")
        return fnp.var(self, axis, dtype, ddof=ddof, keepdims=keepdims, where=where,
                       correction=correction)

    def std(self: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
            keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
        _no_out(out, "std")
        return fnp.std(self, axis, dtype, ddof=ddof, keepdims=keepdims, where=where,
                       correction=correction)

    def max(self: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
            initial: Any = None, where: Any = None) -> Any:
        _no_out(out, "max")
        return fnp.max(self, axis, keepdims=keepdims, initial=initial, where=where)

    def min(self: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
            initial: Any = None, where: Any = None) -> Any:
        _no_out(out, "min")
        return fnp.min(self, axis, keepdims=keepdims, initial=initial, where=where)

    def ptp(self: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        _no_out(out, "ptp")
        return fnp.ptp(self, axis, keepdims=keepdims)

    def all(self: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
            *, where: Any = None) -> Any:
        _no_out(out, "all")
        return fnp.all(self, axis, keepdims=keepdims, where=where)

    def any(self: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
            *, where: Any = None) -> Any:
        _no_out(out, "any")
        return fnp.any(self, axis, keepdims=keepdims, where=where)

    def argmax(self: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Any:
        _no_out(out, "argmax")
        return fnp.argmax(self, axis, keepdims=bool(keepdims))

    def argmin(self: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Any:
        _no_out(out, "argmin")
        return fnp.argmin(self, axis, keepdims=bool(keepdims))

    def cumsum(self: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        _no_out(out, "cumsum")
        return fnp.cumsum(self, axis, dtype)

    def round(self: Any, decimals: int = 0, out: Any = None) -> Any:  # noqa: A001
        _no_out(out, "round")
        return fnp.round(self, decimals)

    def clip(self: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        return fnp.clip(self, min, max)

    def reshape(self: Any, *shape: Any, order: str = "C") -> Any:
        if len(shape) == 1 and getattr(shape[0], "ndim", None) == 0:
            shape = shape[0]
        elif len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return fnp.reshape(self, shape, order)

    def transpose(self: Any, *axes: Any) -> Any:
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return fnp.transpose(self, axes or None)

    def astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
        out = fnp.astype(self, dtype)
        if device is None:
            return out
        from funcgrad.conversion import from_buffer  # noqa: PLC0415
        from funcgrad.devices import put_buffer  # noqa: PLC0415

        return from_buffer(put_buffer(out._value, device), out.weak_type)

    def take(self: Any, indices: Any, axis: Any = None, out: Any = None, mode: Any = None,
             unique_indices: bool = False, indices_are_sorted: bool = False,
             fill_value: Any = None) -> Any:
        _no_out(out, "take")
        return fnp.take(self, indices, axis, mode=mode, fill_value=fill_value)

    def sort(self: Any, axis: Any = -1, *, kind: Any = None, order: Any = None,
             stable: bool = True, descending: bool = False) -> Any:
        return fnp.sort(self, axis, kind=kind, order=order, stable=stable,
                        descending=descending)

    def argsort(self: Any, axis: Any = -1, *, kind: Any = None, order: Any = None,
                stable: bool = True, descending: bool = False) -> Any:
        return fnp.argsort(self, axis, kind=kind, order=order, stable=stable,
                           descending=descending)

    def trace(self: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
              out: Any = None) -> Any:
        _no_out(out, "trace")
        return fnp.trace(self, offset, axis1, axis2, dtype)

    def dot(self: Any, b: Any, *, precision: Any = None,
            preferred_element_type: Any = None) -> Any:
        return fnp.dot(self, b, precision=precision,
                       preferred_element_type=preferred_element_type)

    def ravel(self: Any, order: str = "C") -> Any:
        return fnp.ravel(self, order)

    def squeeze(self: Any, axis: Any = None) -> Any:
        return fnp.squeeze(self, axis)

    def repeat(self: Any, repeats: Any, axis: Any = None, *,
               total_repeat_length: Any = None) -> Any:
        return fnp.repeat(self, repeats, axis, total_repeat_length=total_repeat_length)

    def copy(self: Any) -> Any:
        return fnp.array(self)

    def cumprod(self: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        _no_out(out, "cumprod")
        return fnp.cumprod(self, axis, dtype)

    def nonzero(self: Any, *, fill_value: Any = None, size: Any = None) -> Any:
        return fnp.nonzero(self, size=size, fill_value=fill_value)

    def searchsorted(self: Any, v: Any, side: str = "left", sorter: Any = None, *,
                     method: str = "scan") -> Any:
        return fnp.searchsorted(self, v, side=side, sorter=sorter, method=method)

    def compress(self: Any, condition: Any, axis: Any = None, *, out: Any = None,
                 size: Any = None, fill_value: Any = 0) -> Any:
        _no_out(out, "compress")
        return fnp.compress(condition, self, axis, size=size, fill_value=fill_value)

    def choose(self: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        _no_out(out, "choose")
        return fnp.choose(self, choices, mode=mode)

    def argpartition(self: Any, kth: int, axis: int = -1) -> Any:
        return fnp.argpartition(self, kth, axis)

    def __round__(self: Any, ndigits: int | None = None) -> Any:  # noqa: N807
        # As Python's round of a float: without ndigits, an integer (the default one).
        out = fnp.round(self, ndigits or 0)
        return out.astype(int) if ndigits is None else out

    def __array_namespace__(self: Any, *, api_version: str | None = None) -> Any:  # noqa: N807
        if api_version is not None and api_version != fnp.__array_api_version__:
            raise ValueError(f"{api_version=!r} is not available; available versions are: "
                             f"{[fnp.__array_api_version__]}")
        return fnp

    attrs.update({
        "__round__": __round__, "__array_namespace__": __array_namespace__,
        "cumprod": cumprod, "nonzero": nonzero, "searchsorted": searchsorted,
        "compress": compress, "choose": choose, "argpartition": argpartition, "view": _view,
    })

    attrs.update({
        "sum": sum, "prod": prod, "mean": mean, "var": var, "std": std, "max": max,
        "min": min, "ptp": ptp, "all": all, "any": any, "argmax": argmax, "argmin": argmin,
        "cumsum": cumsum, "round": round, "clip": clip,
        "reshape": reshape, "transpose": transpose, "astype": astype, "take": take,
        "sort": sort, "argsort": argsort, "trace": trace, "dot": dot, "ravel": ravel,
        "flatten": ravel, "squeeze": squeeze, "repeat": repeat,
        "copy": copy,
        "swapaxes": lambda self, axis1, axis2: fnp.swapaxes(self, axis1, axis2),
        "diagonal": lambda self, offset=0, axis1=0, axis2=1: fnp.diagonal(
            self, offset, axis1, axis2),
        "conj": lambda self: fnp.conjugate(self),
        "conjugate": lambda self: fnp.conjugate(self),
        "T": property(lambda self: fnp.transpose(self)),
        "mT": property(lambda self: fnp.swapaxes(self, -1, -2)),
        "real": property(lambda self: fnp.real(self)),
        "imag": property(lambda self: fnp.imag(self)),
        "at": property(lambda self: AtIndexer(self)),
        "flat": property(lambda self: fnp.ravel(self)),
    })
    for name, value in attrs.items():
        setattr(Array, name, value)
