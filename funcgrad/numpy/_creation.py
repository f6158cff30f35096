"""Array creation in funcgrad.numpy (results are Arrays in the canonical dtypes).

>>> import funcgrad.numpy as fnp
>>> fnp.linspace(0.0, 1.0, 3).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import Array, ArrayImpl
from funcgrad.conversion import _flat_items, check_int_range
from funcgrad.core import Tracer, get_aval
from funcgrad.errors import DTypeError
from funcgrad.ir import ShapedArray
from funcgrad.numpy._core import asarray as _asarray
from funcgrad.numpy._core import cast, check_arraylike, from_buffer, requested_dtype
from funcgrad.primitives.fused_multiply_add import fma


def _float0(dtype: Any) -> bool:
    """``dtype`` is float0, the tangent type of integers: JAX's creation functions then
    give a NumPy array of it (funcgrad arrays have no float0)."""
    return dtype is not None and isinstance(dtype, (np.dtype, type, str)) and \
        np.dtype(dtype) == dtypes.FLOAT0


def _dt(dtype: Any, where: str, default: Any = None) -> Any:
    return requested_dtype(dtype, where) if dtype is not None else default


def _on_device(use_default: bool = True, constant: bool = False) -> Any:
    """Give a creation function JAX's ``device=`` keyword; without it the result goes to
    ``jax_default_device`` when that is set (``funcgrad.default_device(...)``), as JAX
    places uncommitted arrays (``*_like`` functions keep their operand's device).
    ``constant``: the function's host results hold one value, made on the device instead
    of copied there."""
    def wrap(fn: Any) -> Any:
        @functools.wraps(fn)
        def create(*args: Any, device: Any = None, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            if device is None and use_default:
                from funcgrad.config import config  # noqa: PLC0415

                device = config.read("jax_default_device")
            if device is None or type(out) is not ArrayImpl or _staging():
                return out
            return _put(out, device, constant)

        return create

    return wrap


def _put(out: Any, device: Any, constant: bool) -> Any:
    """The Array ``out`` on ``device`` (itself when it is there)."""
    from funcgrad.devices import device_of, require_device  # noqa: PLC0415

    backend, target = require_device(device)
    buf = out._value
    here = device_of(buf)
    if (here.platform, here.id) == (target.platform, target.id):
        return out
    # One value repeated: what ``constant`` functions make, or a broadcast of one element.
    if type(buf) is np.ndarray and (constant or (buf.size and not any(buf.strides))):
        made = backend.full(buf.shape, buf.reshape(-1)[0] if buf.size else 0, buf.dtype, target)
    else:
        made = backend.device_put(buf, target)
    return from_buffer(made, out.weak_type)


def _staging() -> bool:
    """Whether a program is being staged (jit): its constants stay on the host and the
    program places them on its own device."""
    from funcgrad.core import current_trace  # noqa: PLC0415
    from funcgrad.staging import StagingTrace  # noqa: PLC0415

    t: Any = current_trace()
    while t is not None:
        if isinstance(t, StagingTrace):
            return True
        t = t.parent
    return False


def _shape(shape: Any) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, (int, np.integer, float, Tracer)) or \
        getattr(shape, "ndim", None) == 0 else tuple(shape)
    if any(isinstance(d, Tracer) for d in dims):
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {dims}.\nIf using `jit`, try using `static_argnums` or "
                        "applying `jit` to smaller subfunctions."
                        + "".join(d._origin_msg() for d in dims if isinstance(d, Tracer)))
    try:
        out = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {dims}.") from None
    if any(d < 0 for d in out):
        raise TypeError("broadcast_in_dim shape must have every element be nonnegative, got "
                        f"{out}.")
    return out


@_on_device()
def array(obj: Any, dtype: Any = None, copy: bool = True, order: str | None = "K",
          ndmin: int = 0) -> Any:
    """An Array from data (a traced value stays traced); Python scalars give weakly typed
    arrays, as in JAX; ``ndmin`` leading axes of length 1 are added as needed.

    >>> import funcgrad.numpy as fnp
    >>> fnp.array([[1, 2]]).dtype
    dtype('int32')
    >>> fnp.array([1, 2], ndmin=3).shape
    (1, 1, 2)
    """
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    out = _array(obj, dtype)
    nd = get_aval(out).ndim
    if ndmin > nd:
        from funcgrad.primitives.structural import expand_dims  # noqa: PLC0415

        out = expand_dims(out, tuple(range(ndmin - nd)))
    return out


def _sequences_as_lists(obj: Any) -> Any:
    """``range`` and ``memoryview`` (inside lists too) as the data they hold, as JAX reads
    them."""
    if isinstance(obj, range):
        return list(obj)
    if isinstance(obj, memoryview):
        return np.asarray(obj)
    if isinstance(obj, (list, tuple)) and any(isinstance(e, (range, memoryview, list, tuple))
                                              for e in obj):
        return type(obj)(_sequences_as_lists(e) for e in obj)
    return obj


def _array(obj: Any, dtype: Any) -> Any:
    convert = getattr(obj, "__jax_array__", None)
    if convert is not None:  # JAX's protocol for array-like objects
        obj = convert()
    if obj is None:
        raise ValueError("None is not a valid value for jnp.array")
    obj = _sequences_as_lists(obj)
    if dtype is not None and isinstance(obj, (list, tuple)):
        leaves = _flat_items(obj)
        if leaves and all(dtypes.python_scalar(e) for e in leaves):
            # Python numbers go straight to the asked type, as JAX converts them: no range
            # check against the default integer, no double rounding through float32.
            dt = requested_dtype(dtype, "array")
            if all(type(e) is int for e in leaves):
                check_int_range(np.asarray(obj), dt)
            return from_buffer(np.asarray(obj, dtype=dt))
    try:
        x = _asarray(obj)
    except DTypeError:
        if hasattr(obj, "shape"):
            raise
        if isinstance(obj, (list, tuple)):
            # (the first leaf that is no number: a string among numbers...)
            bad = [e for e in _flat_items(obj) if isinstance(e, (str, bytes, dict))]
            if not bad:
                raise
            obj = bad[0]
        # (JAX's text for an object that is no array: a string, a dict, an iterator...)
        raise DTypeError(f"Value '{obj}' with dtype {np.asarray(obj).dtype} is not a valid JAX "
                         "array type. Only arrays of numeric types are supported by "
                         "JAX.") from None
    if dtypes.python_scalar(x):
        dt = _dt(dtype, "array", dtypes.scalar_kind_dtype(x))
        if type(x) is int:
            if dtype is not None:
                check_int_range(x, dt)
                if dt.kind in "iubfc" or dt == dtypes.bfloat16:
                    # In range of the asked type (jnp.uint32(2**31 + 5), jnp.float32(2**70)):
                    # no detour through the default integer type, as in JAX.
                    return from_buffer(np.asarray(x, dtype=dt))
            elif not np.iinfo(dt).min <= x <= np.iinfo(dt).max:
                raise OverflowError(f"Python int {x} too large to convert to {dt.name}")
        return cast(x, dt, weak=dtype is None and type(x) is not bool)
    if dtype is not None:
        return cast(x, requested_dtype(dtype, "array"))
    return x


@_on_device()
def asarray(obj: Any, dtype: Any = None) -> Any:
    """Like :func:`array` (Arrays are immutable, so nothing needs copying twice).

    >>> import funcgrad.numpy as fnp
    >>> fnp.asarray(1.5)
    Array(1.5, dtype=float32, weak_type=True)
    """
    return array(obj, dtype, copy=False)


@_on_device(constant=True)
def zeros(shape: Any, dtype: Any = None) -> Any:
    """Zeros of ``shape`` (the default float unless ``dtype`` is given).

    >>> import funcgrad.numpy as fnp
    >>> fnp.zeros((2,)).tolist()
    [0.0, 0.0]
    """
    if _float0(dtype):
        return dtypes.float0_zeros(_shape(shape))
    return from_buffer(np.zeros(_shape(shape), dtype=_dt(dtype, "zeros",
                                                          dtypes.default_float())))


@_on_device(constant=True)
def ones(shape: Any, dtype: Any = None) -> Any:
    """Ones of ``shape``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ones(2).tolist()
    [1.0, 1.0]
    """
    if _float0(dtype):
        return dtypes.float0_zeros(_shape(shape))
    return from_buffer(np.ones(_shape(shape), dtype=_dt(dtype, "ones", dtypes.default_float())))


@_on_device(constant=True)
def empty(shape: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` (zero-filled: funcgrad never exposes uninitialised memory).

    >>> import funcgrad.numpy as fnp
    >>> fnp.empty(2).shape
    (2,)
    """
    if _float0(dtype):
        return dtypes.float0_zeros(_shape(shape))
    return zeros(shape, dtype)


@_on_device()
def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """``shape`` filled with ``fill_value`` (which may be traced).

    >>> import funcgrad.numpy as fnp
    >>> fnp.full(2, 7.0).tolist()
    [7.0, 7.0]
    """
    check_arraylike("full", fill_value)
    if _float0(dtype):
        return dtypes.float0_zeros(_shape(shape))
    from funcgrad.numpy._shape import broadcast_to  # noqa: PLC0415

    if type(fill_value) is int:
        dt = dtypes.canonicalize(np.int64) if dtype is None else requested_dtype(dtype, "full")
        v = _int_fill(fill_value, dt, dtype is None)
    else:
        v = array(fill_value, None if dtype is None else requested_dtype(dtype, "full"))
    return broadcast_to(v, _shape(shape))


def _int_fill(value: int, dtype: np.dtype[Any], weak: bool) -> Any:
    """A Python int fill value of ``full``/``full_like`` in ``dtype`` as JAX's ``lax.full``
    converts it: through NumPy's integer (wrapping into a narrower integer type:
    ``full(2, 2**40, jnp.int32)`` is zeros), any size for a float, complex or bool type;
    NumPy's OverflowError beyond 64 bits for an integer type."""
    return from_buffer(np.asarray(value).astype(dtype), weak_type=weak)


def _like(a: Any, dtype: Any, shape: Any, where: str) -> tuple[tuple[int, ...], Any, bool]:
    aval = get_aval(_asarray(a))
    shp = aval.shape if shape is None else _shape(shape)
    if dtype is not None:
        return shp, requested_dtype(dtype, where), False
    return shp, aval.dtype, aval.weak_type


@_on_device(use_default=False, constant=True)
def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.zeros_like(fnp.ones(2)).tolist()
    [0.0, 0.0]
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("zeros_like", a)
    if _float0(dtype):
        return dtypes.float0_zeros(np.shape(a) if shape is None else _shape(shape))
    shp, dt, weak = _like(a, dtype, shape, "zeros_like")
    return _placed_like(a, from_buffer(np.zeros(shp, dt), weak))


@_on_device(use_default=False, constant=True)
def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Ones with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.ones_like(fnp.zeros(2)).tolist()
    [1.0, 1.0]
    """
    check_arraylike("ones_like", a)
    if _float0(dtype):
        return dtypes.float0_zeros(np.shape(a) if shape is None else _shape(shape))
    shp, dt, weak = _like(a, dtype, shape, "ones_like")
    return _placed_like(a, from_buffer(np.ones(shp, dt), weak))


@_on_device(use_default=False, constant=True)
def empty_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Zeros with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.empty_like(fnp.ones(2)).shape
    (2,)
    """
    check_arraylike("ones_like", a)  # the name JAX's message gives
    if _float0(dtype):
        return dtypes.float0_zeros(np.shape(a) if shape is None else _shape(shape))
    return zeros_like(a, dtype, shape)


@_on_device(use_default=False)
def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """``fill_value`` with the shape and dtype of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.full_like(fnp.ones(2), 3.0).tolist()
    [3.0, 3.0]
    """
    check_arraylike("full_like", a, fill_value)
    if _float0(dtype):
        return dtypes.float0_zeros(np.shape(a) if shape is None else _shape(shape))
    from funcgrad.numpy._shape import broadcast_to  # noqa: PLC0415

    shp, dt, weak = _like(a, dtype, shape, "full_like")
    v = _int_fill(fill_value, dt, weak) if type(fill_value) is int else _asarray(fill_value)
    return _placed_like(a, broadcast_to(cast(v, dt, weak), shp), constant=False)


def _placed_like(a: Any, out: Any, constant: bool = True) -> Any:
    """``out`` on the device of ``a`` (as JAX's ``*_like`` place their result); made there
    when it holds one value (``constant``, or a broadcast of one element)."""
    if type(a) is not ArrayImpl or type(a._value) is np.ndarray or \
            type(out) is not ArrayImpl or type(out._value) is not np.ndarray:
        return out
    from funcgrad.devices import device_of  # noqa: PLC0415

    return _put(out, device_of(a._value), constant)


@_on_device()
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in ``[start, stop)``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.arange(3).tolist()
    [0, 1, 2]
    """
    start_name = "stop" if stop is None and step is None else "start"
    for name, v in ((start_name, start), ("stop", stop), ("step", step)):
        if isinstance(v, Tracer) and v.concrete_value() is None:
            from funcgrad.errors import ConcretizationTypeError  # noqa: PLC0415

            raise v._abstract_error(ConcretizationTypeError,
                                    f"It arose in the jnp.arange argument '{name}'")
    # Known values under grad/jvp are bounds as in JAX (the result has no derivative).
    start, stop, step = (v.concrete_value() if isinstance(v, Tracer) else v
                         for v in (start, stop, step))
    for name, v in ((start_name, start), ("stop", stop), ("step", step)):
        if v is not None and np.ndim(v) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
    dt = _dt(dtype, "arange") or dtypes.canonicalize(dtypes.result_type(
        *(v for v in (start, stop, step) if v is not None)))
    if dt == dtypes.bool_:  # JAX's arange is an iota
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    start, stop, step = (v.item() if isinstance(v, ArrayImpl) else v
                         for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    if step is None and start == 0:
        return from_buffer(np.arange(max(0, int(np.ceil(stop))), dtype=dt))
    # JAX's arithmetic (not NumPy's): start + step * iota, rounded op by op in the dtype
    # (float32 for the half floats' steps), start and step converted as lax converts
    # (the NumPy impl, so that this stays a constant under jit).
    from funcgrad.primitives.elementwise import _convert_impl  # noqa: PLC0415

    half = step is not None and dtypes.kind(dt) == "f" and np.finfo(dt).bits < 32
    work = np.dtype(np.float32) if half else dt
    size = max(0, int(np.ceil(stop - start if step is None else (stop - start) / step)))
    iota = np.arange(size).astype(work)

    def conv(v: Any) -> Any:  # integers into an integer dtype wrap around, as in JAX
        if isinstance(v, (int, np.integer)) and work.kind in "iu":
            return np.array(v).astype(work)
        src = np.asarray(v)
        return _convert_impl(np, src.astype(dtypes.canonicalize(src.dtype)), new_dtype=work,
                             weak_type=False)

    with np.errstate(all="ignore"):
        if step is not None:
            iota = iota * conv(step)
        vals = conv(start) + iota
    return from_buffer(_convert_impl(np, vals, new_dtype=dt, weak_type=False) if half else vals)


# Rows up to this many computed values round their second element differently (XLA's CPU
# loop for them, measured against JAX 0.10.2).
_LINSPACE_PEELED = 33


@_on_device()
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.linspace(0, 1, 2).tolist()
    [0.0, 1.0]
    """
    from funcgrad.numpy._core import (  # noqa: PLC0415
        broadcast_shapes,
        shape_of,
        to_inexact_dtype,
        typed,
    )
    from funcgrad.numpy._shape import (  # noqa: PLC0415
        broadcast_to,
        concatenate,
        expand_dims,
        reshape,
    )
    from funcgrad.numpy._ufuncs import add, floor, multiply, subtract  # noqa: PLC0415

    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    # JAX's arithmetic, step for step (jax/_src/numpy/array_creation.py:_linspace), so
    # that float32 values round as JAX's: start * (1 - t) + stop * t with
    # t = iota(div) / div, then stop itself appended when ``endpoint``.
    s, e = _asarray(start), _asarray(stop)
    if dtype is None:
        want = to_inexact_dtype(dtypes.promote(typed(s), typed(e))[0])
    else:
        want = requested_dtype(dtype, "linspace")
    comp = to_inexact_dtype(want)
    s, e = cast(s, comp), cast(e, comp)
    bounds = list(broadcast_shapes(shape_of(s), shape_of(e)))
    bs, be = broadcast_to(s, tuple(bounds)), broadcast_to(e, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    bounds.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        # XLA multiplies by the reciprocal of ``div`` (JAX's source divides).
        delta = multiply(subtract(e, s),
                         from_buffer(np.asarray(1, comp) / np.asarray(div, comp)))
        iota_shape = [1] * len(bounds)
        iota_shape[axis] = div
        real = np.finfo(comp).dtype
        # XLA rewrites the division by ``div`` into a product with its reciprocal and
        # reassociates stop * (iota * r) into iota * (stop * r); the CPU backend then
        # fuses that product into the sum (one rounding), which _fma reproduces.
        r = np.asarray(1, real) / np.asarray(div, real)
        iota = np.arange(div, dtype=real).reshape(iota_shape)
        one_minus_t = (1 - iota * r).astype(comp)
        iota, r = iota.astype(comp), r.astype(comp)
        s_b, e_b = reshape(bs, bounds), reshape(be, bounds)
        if isinstance(s_b, Tracer) or isinstance(e_b, Tracer) or comp.kind == "c":
            out = add(multiply(s_b, from_buffer(one_minus_t)),
                      multiply(from_buffer(iota), multiply(e_b, from_buffer(r))))
        else:
            sv, ev = np.asarray(s_b), np.asarray(e_b)
            with np.errstate(all="ignore"):
                er = (ev * r).astype(comp)
                vals = fma(iota, er, (sv * one_minus_t).astype(comp))
                if 1 < div <= _LINSPACE_PEELED:
                    # The second element (iota 1, so iota * er is er) of a short row comes
                    # out of XLA's CPU code with the other product fused:
                    # start * (1 - r) + er.
                    sel = tuple(slice(1, 2) if i == axis else slice(None)
                                for i in range(vals.ndim))
                    vals[sel] = fma(np.broadcast_to(sv, vals[sel].shape), one_minus_t[sel],
                                     np.broadcast_to(er, vals[sel].shape))
            out = from_buffer(np.asarray(vals, comp))
        if endpoint:
            out = concatenate([out, expand_dims(be, axis)], axis)
    elif num == 1:
        delta = (from_buffer(np.asarray(np.nan, comp)) if endpoint
                 else cast(subtract(e, s), comp))
        out = reshape(bs, bounds)
    else:
        delta = from_buffer(np.asarray(np.nan, comp))
        empty_shape = list(bounds)
        empty_shape[axis] = 0
        out = from_buffer(np.zeros(empty_shape, want))
    if want.kind in "iu" and np.dtype(get_aval(out).dtype).kind == "f":
        out = floor(out)  # JAX floors toward an integer dtype (-0.67 -> -1)
    out = cast(out, want)
    return (out, delta) if retstep else out


@_on_device()
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    """Ones on the k-th diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    check_arraylike("eye", k)
    return from_buffer(np.eye(N, M, k, dtype=_dt(dtype, "eye", dtypes.default_float())))


@_on_device()
def identity(n: int, dtype: Any = None) -> Any:
    """The n-by-n identity.

    >>> import funcgrad.numpy as fnp
    >>> fnp.identity(1).tolist()
    [[1.0]]
    """
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    """Ones at and below the k-th diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tri(2).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    # JAX's default is float32 even in 64-bit mode.
    return from_buffer(np.tri(N, M, k, dtype=_dt(dtype, "tri", np.float32)))


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> list[Any]:
    """Coordinate matrices from coordinate vectors (``sparse=True``: each only along its
    own axis, ready to broadcast).

    >>> import funcgrad.numpy as fnp
    >>> [g.shape for g in fnp.meshgrid(fnp.arange(2), fnp.arange(3))]
    [(3, 2), (3, 2)]
    >>> [g.shape for g in fnp.meshgrid(fnp.arange(2), fnp.arange(3), sparse=True)]
    [(1, 2), (3, 1)]
    """
    check_arraylike("meshgrid", *xi)
    from funcgrad.numpy._shape import broadcast_to, reshape  # noqa: PLC0415

    arrs = [_asarray(x) for x in xi]
    n = len(arrs)
    sizes = [get_aval(a).size for a in arrs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrs):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        shp = [1] * n
        shp[pos] = get_aval(a).size
        out.append(reshape(a, shp) if sparse else broadcast_to(reshape(a, shp), sizes))
    return out


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An Array over the memory of ``x`` (any object that speaks DLPack: a NumPy, CuPy or
    PyTorch array, a ``funcgrad.torch`` Tensor), without a copy unless ``copy=True`` or the
    dtype must change (float64 with 64-bit mode off). As in JAX, the Array then shares
    memory with ``x``: do not change ``x`` afterwards, or copy.

    >>> import numpy as np
    >>> import funcgrad.numpy as jnp
    >>> jnp.from_dlpack(np.arange(3, dtype=np.float32))
    Array([0., 1., 2.], dtype=float32)
    """
    from funcgrad.array import wrap  # noqa: PLC0415

    if isinstance(x, Array) and not isinstance(x, Tracer):
        return x
    dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
    if dev == 2:  # kDLCUDA
        import cupy  # noqa: PLC0415

        buf = cupy.from_dlpack(x)
        buf = buf.copy() if copy else buf
    else:
        buf = np.from_dlpack(x, copy=copy)
    dt = dtypes.canonicalize_dtype(buf.dtype)
    if dt != buf.dtype:
        buf = buf.astype(dt)
    if device is not None:
        from funcgrad.devices import put_buffer  # noqa: PLC0415

        buf = put_buffer(buf, device)
    return wrap(buf, ShapedArray(tuple(buf.shape), dt))


def copy(a: Any) -> Any:
    """A copy of ``a``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.copy(fnp.ones(1)).tolist()
    [1.0]
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("copy", a)
    return array(a)


__all__ = [
    "array", "asarray", "copy", "empty", "empty_like", "eye", "full", "full_like",
    "identity", "linspace", "meshgrid", "ones", "ones_like", "tri", "zeros", "zeros_like",
    "arange", "from_dlpack",
]
