"""Tensor creation: ``tensor``, ``zeros``, ``ones``, ``arange``, ``randn``... with PyTorch's
dtype rules (Python floats give the default dtype, ints int64, bools bool).

>>> import funcgrad.torch as torch
>>> torch.tensor([1.5, 2.0])
tensor([1.5000, 2.0000])
>>> torch.zeros(2, 3).shape
torch.Size([2, 3])
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from funcgrad.array import ArrayImpl
from funcgrad.core import MetaBuffer, Tracer
from funcgrad.torch import _cuda_random
from funcgrad.torch import _dtypes as D
from funcgrad.torch import _memory_layout as _layout
from funcgrad.torch import _tensor as _tensor_module
from funcgrad.torch._device import (
    Size,
    as_device,
    default_device,
    engine_device,
    is_meta,
    to_device,
)
from funcgrad.torch._grad_mode import is_grad_enabled
from funcgrad.torch._random import Generator, manual_seed, rng, seed  # noqa: F401
from funcgrad.torch._tensor import (
    _CPP,
    Tensor,
    apply_op,
    check_normal_std,
    check_random_dtype,
    check_scalar_fits,
    warn_at_caller,
)

# The generator lives in _random (the Tensor module draws from it too).
_rng = rng


def _sizes(name: str, sizes: tuple[Any, ...], size: Any) -> tuple[Any, ...]:
    """The sizes of ``zeros(2, 3)``, ``zeros((2, 3))`` or ``zeros(size=(2, 3))``."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _shape_args(size: tuple[Any, ...], name: str = "empty") -> tuple[builtins.int, ...]:
    """The sizes of a factory call (``zeros(2, 3)`` or ``zeros((2, 3))``), with PyTorch's
    errors for a size that is not an integer or is negative."""
    packed = len(size) == 1 and isinstance(size[0], (tuple, list, Size))
    items = tuple(size[0]) if packed else tuple(size)
    out = []
    for i, s in enumerate(items):
        try:
            out.append(operator.index(s))
        except TypeError:
            kind = type(s).__name__
            # PyTorch's argument parser: a size sequence that starts with a non-integer is
            # refused as a whole, one that fails later "to unpack".
            if not packed and len(items) == 1:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {kind}") from None
            if i == 0:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {kind} at pos 0") from None
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{kind}\"") from None
    for s in out:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _make(arr: Any, device: Any, requires_grad: builtins.bool,
          honour_default: builtins.bool = True) -> Tensor:
    if device is None and honour_default:
        device = default_device()  # set_default_device's, as PyTorch's factory functions
    if device is not None and as_device(device).type != "cpu":
        arr = to_device(arr, device)
    return Tensor(arr, requires_grad=requires_grad)


def _on_meta(device: Any) -> builtins.bool:
    """Whether a factory given ``device`` makes a meta tensor: made without values (and
    without drawing any: the generators do not advance, as in PyTorch)."""
    return is_meta(device if device is not None else default_device())


def _gpu_index(device: Any, honour_default: builtins.bool = True) -> builtins.int | None:
    """The CUDA device a factory's result goes to (None: the CPU); ``DeviceError`` when
    that device is not usable."""
    if device is None and honour_default:
        device = default_device()
    if device is None or as_device(device).type in ("cpu", "meta"):
        return None
    from funcgrad.devices import require_device  # noqa: PLC0415

    return builtins.int(require_device(engine_device(device))[1].id)


def _host_stream(generator: Any) -> Any:
    """The host stream a factory draws from: ``generator``'s, or the global one."""
    if generator is None:
        return _rng()
    if generator.device.type != "cpu":
        raise RuntimeError(f"Expected a 'cpu' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator._rng


def _device_stream(generator: Any, index: builtins.int) -> Any:
    """The device stream a factory draws from on GPU ``index`` (None: the device's own)."""
    return None if generator is None else generator.device_state(index)


def _made_on_gpu(index: builtins.int, make: Any, requires_grad: builtins.bool) -> Tensor:
    """A tensor of the CuPy array ``make(cupy)`` builds on device ``index`` (no host copy)."""
    import cupy  # noqa: PLC0415

    with cupy.cuda.Device(index):
        return Tensor(make(cupy), requires_grad=requires_grad)


def _visit_kinds(x: Any, kinds: set[str]) -> None:
    # A module-level recursion (a nested recursive closure would be a reference cycle made
    # at every ``torch.tensor(list)``).
    if isinstance(x, (list, tuple, builtins.range)):
        for e in x:
            _visit_kinds(e, kinds)
    elif isinstance(x, Tensor):
        kinds.add("t:" + x.dtype.name)
    elif isinstance(x, np.generic) and isinstance(x, (np.bool_, np.number)):
        # A NumPy scalar brings its own dtype, as in PyTorch (np.int32 -> int32).
        kinds.add("t:" + x.dtype.name)
    elif isinstance(x, builtins.bool):
        kinds.add("b")
    elif isinstance(x, builtins.int):
        kinds.add("i")
    elif isinstance(x, builtins.float):
        kinds.add("f")
    elif isinstance(x, builtins.complex):
        kinds.add("c")
    elif isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    else:
        raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _infer_dtype(data: Any) -> D.dtype:
    """PyTorch's dtype for nested Python data: each entry's own type (bool, int64, the
    default float or complex, a NumPy scalar's or a tensor's dtype) promoted together."""
    kinds: set[str] = set()
    _visit_kinds(data, kinds)
    if not kinds:
        return D.get_default_dtype()
    own = {"b": D.bool, "i": D.int64}
    out: D.dtype | None = None
    for k in sorted(kinds):  # the promotion is commutative: any order gives one answer
        d = (D.to_torch(k[2:]) if k.startswith("t:") else own.get(k) or (
            D.get_default_dtype() if k == "f" else D.default_complex()))
        out = d if out is None else D.promote_types(out, d)
    assert out is not None
    return out


def _to_list(x: Any, top: builtins.bool = True) -> Any:
    if isinstance(x, Tensor):
        if top:
            return x.tolist()
        # A tensor inside a sequence is read as a Python scalar (PyTorch's item()).
        if x.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return x.item()
    if isinstance(x, (list, tuple)):
        return [_to_list(e, False) for e in x]
    return x


def _checked_ints(values: Any, dt: D.dtype) -> Any:
    """Python ints as PyTorch converts them to an integer dtype (NumPy refused some): read
    as int64 first, then checked against the dtype's range, except that a negative int
    wraps into an unsigned dtype (``-7`` is 249 in uint8) when its magnitude fits."""
    if dt.np.kind not in "iu":
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    info = np.iinfo(dt.np)

    def one(v: Any) -> Any:
        if isinstance(v, list):
            return [one(e) for e in v]
        if not isinstance(v, builtins.int) or isinstance(v, builtins.bool):
            return v
        if dt.np == np.uint64:  # read as an unsigned 64-bit int
            if v < 0:
                raise OverflowError("can't convert negative int to unsigned")
            if v > info.max:
                raise OverflowError("int too big to convert")
            return v
        if not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        if info.min <= v <= info.max:
            return v
        if info.min == 0 and v < 0 and -v <= info.max:
            return v % (info.max + 1)
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")

    return one(values)


def _natural(values: Any) -> np.ndarray | None:
    """``values`` in NumPy's own dtype for them (None where it has none): float64 when
    Python floats are among them, which PyTorch checks against an integer dtype's range
    before converting."""
    try:
        return np.array(values)
    except (OverflowError, ValueError):
        return None


def _floats_to_ints(values: Any, floats: np.ndarray, dt: D.dtype) -> np.ndarray:
    """Data with Python floats converted to an integer dtype as PyTorch converts it, element
    by element: each float truncated after a check that it lies in the dtype's range (NaN
    and infinities do not), where NumPy would wrap silently; each int as
    :func:`_checked_ints` converts it (a negative int wraps into an unsigned dtype)."""
    # (np.asarray: on a 0-d input the ufunc returns a Python bool, not an array.)
    is_float = np.asarray(np.frompyfunc(lambda v: isinstance(v, (builtins.float, np.floating)),
                                        1, 1)(np.array(values, dtype=object))).astype(bool)
    if dt.np == np.uint64:
        # (Read element by element as an unsigned 64-bit int: the first bad one raises.)
        for v, flt in zip(np.array(values, dtype=object).ravel().tolist(), is_float.ravel()):
            if flt:
                raise TypeError("an integer is required")
            _checked_ints(v, dt)
    info = np.iinfo(dt.np)
    f = floats[is_float]
    # (Compared as doubles, as PyTorch does: 2.0**63 passes the int64 check.)
    if not np.all((f >= float(info.min)) & (f <= float(info.max))):
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")
    out = np.empty(floats.shape, dt.np)
    with np.errstate(invalid="ignore"):
        out[is_float] = f.astype(dt.np)
    if not is_float.all():
        ints = np.array(values, dtype=object)[~is_float].tolist()
        out[~is_float] = np.array(_checked_ints(ints, dt), dtype=dt.np)
    return out


def tensor(data: Any, dtype: Any = None, device: Any = None,
           requires_grad: builtins.bool = False, pin_memory: builtins.bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (Python floats give the default dtype,
    ints int64).

    >>> import funcgrad.torch as torch
    >>> torch.tensor([1, 2]).dtype
    torch.int64
    """
    dt = D.to_torch(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        warn_at_caller(_COPY_CONSTRUCT.format("torch.tensor"))
        arr = data._host().copy() if not isinstance(data._data, Tracer) else data._data
        if dt is None:
            dt = data.dtype
        if device is None:
            device = default_device() or data.device
    elif isinstance(data, np.ndarray):
        _check_numpy_strides(data)
        arr = data.copy()
        if dt is None:
            dt = D.from_numpy(arr.dtype)
    elif type(data) is ArrayImpl:
        arr = np.array(data)
        if dt is None:
            dt = D.from_numpy(arr.dtype)
    elif type(data).__module__.startswith("cupy"):
        arr = data.copy()
        dt = dt or D.from_numpy(arr.dtype)
    elif isinstance(data, np.generic):
        arr = np.asarray(data)
        dt = dt or D.from_numpy(arr.dtype)
    else:
        dt = dt or _infer_dtype(data)
        values = _to_list(data)
        _check_ragged(values, 0)
        raw = _natural(values) if dt.np.kind in "iu" else None
        if raw is not None and raw.dtype.kind == "f":
            arr = _floats_to_ints(values, raw, dt)
        elif raw is not None and raw.dtype == dt.np:
            arr = raw  # (ints read as int64, asked for as int64: the common case)
        else:
            try:
                arr = np.array(values, dtype=np.float64 if dt in _HALVES else dt.np)
            except OverflowError:
                arr = np.array(_checked_ints(values, dt), dtype=dt.np)
    if dt is not None and arr.dtype != dt.np:
        if dt in _HALVES and arr.dtype == np.float64:
            # PyTorch converts a double to a half type through float (rounding twice).
            arr = cast(Any, arr).astype(np.float32)
        arr = cast(Any, arr).astype(dt.np)
    if arr.dtype.kind not in "biufc" and D.from_numpy(arr.dtype) is not D.bfloat16:
        raise TypeError(f"could not make a tensor from {type(data).__name__}")
    return _make(arr, device, requires_grad)


_HALVES = (D.float16, D.bfloat16)
_COPY_CONSTRUCT = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
    "or sourceTensor.detach().clone().requires_grad_(True), rather than {}(sourceTensor).")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like :func:`tensor`, sharing memory with a NumPy array when dtype and device allow.
    A ``funcgrad.Array`` is copied (Arrays are immutable; Tensors are not).

    >>> import numpy as np
    >>> import funcgrad.torch as torch
    >>> a = np.zeros(2); t = torch.as_tensor(a); a[0] = 1.0; t
    tensor([1., 0.], dtype=torch.float64)
    """
    if device is None:
        device = default_device()
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(dtype)
        return out if device is None else out.to(device)
    if isinstance(data, np.ndarray) and (dtype is None or D.to_torch(dtype).np == data.dtype) \
            and (device is None or as_device(device).type == "cpu"):
        _check_numpy_strides(data)
        return Tensor(data)
    return tensor(data, dtype, device)


asarray = as_tensor


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with the NumPy array ``arr``."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(arr).__name__})")
    D.from_numpy(arr.dtype)  # PyTorch's TypeError for a dtype it has no tensors of
    _check_numpy_strides(arr)
    return Tensor(arr)


def _check_numpy_strides(arr: np.ndarray) -> None:
    """PyTorch refuses NumPy arrays with a negative stride (``a[::-1]``)."""
    if builtins.any(s < 0 for s in arr.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with "
            "negative strides are not currently supported. (You can probably work around "
            "this by making a copy of your array  with array.copy().) ")


def from_dlpack(ext: Any) -> Tensor:
    """A tensor sharing memory with any object that speaks DLPack (a funcgrad Array, a
    NumPy or CuPy array, a JAX or PyTorch array): no copy. Arrays of the JAX face are
    immutable; writing through the tensor changes them too (as in JAX, don't)."""
    if type(ext) is ArrayImpl:
        return Tensor(ext._value)
    if isinstance(ext, Tensor):
        return ext
    if type(ext).__module__.startswith("cupy"):
        return Tensor(ext)
    return Tensor(np.from_dlpack(ext))


def _check_ragged(values: Any, dim: builtins.int) -> None:
    """PyTorch's error for nested sequences of unequal lengths."""
    if not isinstance(values, (list, tuple)) or not values:
        return
    first = values[0]
    n = len(first) if isinstance(first, (list, tuple)) else None
    for v in values:
        m = len(v) if isinstance(v, (list, tuple)) else None
        if m != n:
            if m is None:
                raise TypeError("not a sequence")
            if n is None:
                raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an "
                                "integer")
            raise ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {m})")
        _check_ragged(v, dim + 1)


def _default_dtype_for(value: Any, dtype: Any) -> D.dtype:
    if dtype is not None:
        return D.to_torch(dtype)
    if isinstance(value, builtins.bool):
        return D.bool
    if isinstance(value, (builtins.int, np.integer)):
        return D.int64  # a NumPy integer is read as a Python int (others as a float)
    if isinstance(value, builtins.complex):
        return D.default_complex()
    return D.get_default_dtype()


def _filled(value: Any, size: tuple[Any, ...], dtype: Any, device: Any,
            requires_grad: builtins.bool, name: str) -> Tensor:
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    return _full(_shape_args(size, name), value, dt, device, requires_grad)


def _full(shape: tuple[builtins.int, ...], value: Any, dt: D.dtype, device: Any,
          requires_grad: builtins.bool) -> Tensor:
    if _on_meta(device):
        return _make(MetaBuffer(shape, dt.np), device, requires_grad)
    if type(value) is builtins.int and value < 0 and dt.np.kind == "u":
        value %= 1 << (8 * dt.np.itemsize)  # (C++'s wrap, which PyTorch's check allows)
    if type(value) is builtins.complex and dt.np.kind != "c":
        # (checked already: a real dtype takes no imaginary part; a bool, any nonzero one)
        value = builtins.bool(value) if dt is D.bool else value.real
    index = _gpu_index(device)
    if index is not None and dt is not D.bfloat16:
        # Filled on the device (CuPy's bfloat16 fill is not relied on: that one is uploaded).
        return _made_on_gpu(index, lambda cp: cp.full(shape, value, dt.np), requires_grad)
    with np.errstate(over="ignore"):  # (a float beyond a half type's range is inf there)
        filled = np.full(shape, value, dt.np)
    return _make(filled, device, requires_grad)


_F = TypeVar("_F", bound=Callable[..., Any])


def _into_out(fn: _F) -> _F:
    """A factory taking PyTorch's ``out=``: made in ``out``'s dtype (unless ``dtype`` names
    it, which must then match), written into ``out`` (resized silently, as PyTorch's
    factories resize) and ``out`` returned.

    >>> import funcgrad.torch as torch
    >>> o = torch.empty(0, dtype=torch.int64)
    >>> torch.ones(2, out=o) is o, o
    (True, tensor([1, 1]))
    """
    @functools.wraps(fn)
    def run(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        from funcgrad.torch._functions import write_out  # noqa: PLC0415

        dtype = kwargs.get("dtype")
        if dtype is not None and D.to_torch(dtype) is not out.dtype:
            raise RuntimeError(f"dtype {_CPP[D.to_torch(dtype).name]} does not match dtype "
                               f"of out parameter ({_CPP[out.dtype.name]})")
        kwargs["dtype"] = out.dtype
        if out.numel() != 0:
            out.resize_(0)  # PyTorch's factories resize out without the warning
        return write_out(fn.__name__, out, fn(*args, **kwargs), (args, kwargs))

    return cast(_F, run)


@_into_out
def zeros(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: builtins.bool = False, out: Any = None) -> Tensor:
    """Zeros (the default dtype unless ``dtype`` is given)."""
    return _filled(0, _sizes("zeros", sizes, size), dtype, device, requires_grad, "zeros")


@_into_out
def ones(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: builtins.bool = False, out: Any = None) -> Tensor:
    """Ones (the default dtype unless ``dtype`` is given)."""
    return _filled(1, _sizes("ones", sizes, size), dtype, device, requires_grad, "ones")


@_into_out
def empty(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: builtins.bool = False, out: Any = None) -> Tensor:
    """A tensor of the given size (zero-filled: no uninitialised memory is exposed)."""
    return _filled(0, _sizes("empty", sizes, size), dtype, device, requires_grad, "empty")


@_into_out
def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: builtins.bool = False, out: Any = None) -> Tensor:
    """``size`` filled with ``fill_value`` (its dtype inferred from the value)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = _default_dtype_for(fill_value, dtype)
    check_scalar_fits(fill_value, dt)
    return _full(_shape_args((size,), "full"), fill_value, dt, device, requires_grad)


def _like(t: Any, dtype: Any, device: Any) -> tuple[tuple[builtins.int, ...], Any, Any]:
    t = t if isinstance(t, Tensor) else tensor(t)
    return tuple(t.shape), dtype or t.dtype, device if device is not None else t.device


def _like_strides(t: Any, memory_format: Any) -> tuple[builtins.int, ...] | None:
    """The strides PyTorch gives a ``*_like(t, memory_format=...)`` result (None:
    row-major): by default ``t``'s layout (see ``_memory_layout.kept_strides``)."""
    shape = tuple(t.shape) if isinstance(t, Tensor) else np.shape(t)
    if not isinstance(t, Tensor) or type(t._data) is not np.ndarray:
        _layout.format_strides(shape, memory_format)  # the rank check, on any input
        return None
    return _layout.kept_strides(shape, cast(Any, t).stride(), memory_format)


def _row_major(shape: tuple[builtins.int, ...], strides: tuple[builtins.int, ...]
               ) -> builtins.bool:
    """PyTorch's ``is_contiguous`` of these strides (size-1 axes are skipped): a
    channels-last layout of one channel is row-major."""
    expected = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if st != expected:
                return False
            expected *= n
    return True


def _relaid(out: Tensor, strides: tuple[builtins.int, ...] | None) -> Tensor:
    """``out`` (a new tensor) rewritten with ``strides``; a device buffer keeps its own."""
    if strides is not None and type(out._data) is np.ndarray:
        out._data = _layout.laid_out(out._data, strides)
    return out


def zeros_like(t: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False, memory_format: Any = None,
               layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    strides = _like_strides(t, memory_format)
    shp, dt, dev = _like(t, dtype, device)
    return _relaid(zeros(shp, dtype=dt, device=dev, requires_grad=requires_grad), strides)


def ones_like(t: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False, memory_format: Any = None,
              layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    strides = _like_strides(t, memory_format)
    shp, dt, dev = _like(t, dtype, device)
    return _relaid(ones(shp, dtype=dt, device=dev, requires_grad=requires_grad), strides)


def empty_like(t: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False, memory_format: Any = None,
               layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad,
                      memory_format=memory_format)


def full_like(t: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False, memory_format: Any = None,
              layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    strides = _like_strides(t, memory_format)
    shp, dt, dev = _like(t, dtype, device)
    return _relaid(full(shp, fill_value, dtype=dt, device=dev, requires_grad=requires_grad),
                   strides)


def _drawn_like(draw: Any, t: Any, device: Any, memory_format: Any,
                requires_grad: builtins.bool) -> Tensor:
    """``draw(shape)`` (a Tensor of fresh samples) shaped as ``t`` in the layout of
    ``memory_format``: PyTorch's generators fill memory front to back, so a channels-last
    result holds the samples a row-major one would, in another order."""
    strides = _like_strides(t, memory_format)
    shape = tuple(t.shape) if isinstance(t, Tensor) else np.shape(t)
    if strides is None or as_device(device).type != "cpu":
        out = draw(shape)
    else:
        out = Tensor._from_data(_layout.drawn_in_layout(lambda s: draw(s)._data, shape,
                                                        strides))
    return out.requires_grad_() if requires_grad else out


def randn_like(t: Any, *, generator: Any = None, dtype: Any = None, device: Any = None,
               requires_grad: builtins.bool = False, memory_format: Any = None,
               layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    shp, dt, dev = _like(t, dtype, device)
    strides = _like_strides(t, memory_format)
    if as_device(dev).type == "cpu" and strides is not None and \
            not _row_major(tuple(shp), strides):
        # Not row-major: PyTorch's normal_ kernel draws element by element (its Box-Muller
        # fill is for contiguous tensors), in memory order.
        npdt = D.to_torch(dt).np
        return _drawn_like(lambda s: Tensor._from_data(_host_stream(generator).torch_normal(
            s, npdt, 0.0, 1.0, False)), t, dev, memory_format, requires_grad)
    return _drawn_like(lambda s: randn(s, dtype=dt, device=dev, generator=generator), t,
                       dev, memory_format, requires_grad)


def rand_like(t: Any, *, generator: Any = None, dtype: Any = None, device: Any = None,
              requires_grad: builtins.bool = False, memory_format: Any = None,
              layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    _, dt, dev = _like(t, dtype, device)
    return _drawn_like(lambda s: rand(s, dtype=dt, device=dev, generator=generator), t,
                       dev, memory_format, requires_grad)


def randint_like(*args: Any, low: Any = None, high: Any = None, input: Any = None,  # noqa: A002
                 dtype: Any = None, device: Any = None, generator: Any = None,
                 requires_grad: builtins.bool = False, memory_format: Any = None,
                 layout: Any = None, pin_memory: builtins.bool = False) -> Tensor:
    """Random integers shaped as ``input``: ``randint_like(input, high)`` or
    ``randint_like(input, low, high)`` (positional or keyword, as PyTorch parses them)."""
    named = {"input": input, "low": low, "high": high}
    bound = _bind_overload(args, named, ("input", "high"), ("input", "low", "high"),
                           "randint_like", _RANDINT_LIKE_SIGS)
    _, dt, dev = _like(bound["input"], dtype, device)
    return _drawn_like(lambda s: randint(bound.get("low", 0), bound["high"], s, dtype=dt,
                                         device=dev, generator=generator),
                       bound["input"], dev, memory_format, requires_grad)


_RANDINT_LIKE_SIGS = (
    " * (Tensor input, int high, *, torch.Generator generator, torch.memory_format "
    "memory_format = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    " * (Tensor input, int low, int high, *, torch.Generator generator, torch.memory_format "
    "memory_format = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)")
_RANDINT_SIGS = (
    " * (int high, tuple of ints size, *, torch.Generator generator, Tensor out = None, "
    "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)\n"
    " * (int low, int high, tuple of ints size, *, torch.Generator generator, Tensor out = "
    "None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False)")


def _is_int_arg(v: Any) -> builtins.bool:
    if isinstance(v, Tensor):
        return v.ndim == 0 and not v.dtype.is_floating_point and not v.dtype.is_complex
    if isinstance(v, (builtins.float, np.floating, builtins.complex)):
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


def _as_int(v: Any) -> builtins.int:
    return builtins.int(v) if isinstance(v, Tensor) else operator.index(v)


def _is_size_arg(v: Any) -> builtins.bool:
    return isinstance(v, (tuple, list, Size)) and builtins.all(_is_int_arg(d) for d in v)


def _bind_overload(args: tuple[Any, ...], named: dict[str, Any],
                   *overloads_and_msg: Any) -> dict[str, Any]:
    """Bind ``args`` and the keywords in ``named`` (None: not given) to the first of the
    overloads (tuples of parameter names) whose parameters all get a value of the right
    kind (``size`` a sequence of ints, ``input`` a tensor, the others ints), as PyTorch's
    argument parser does; a TypeError in PyTorch's words when none fits."""
    *overloads, fname, sigs = overloads_and_msg
    for names in overloads:
        if len(args) > len(names) or builtins.any(
                v is not None and k not in names for k, v in named.items()):
            continue
        bound = dict(zip(names, args))
        if builtins.any(named.get(k) is not None for k in bound):
            continue
        bound.update({k: v for k, v in named.items() if v is not None})
        if set(bound) != set(names):
            continue
        if builtins.all(_is_size_arg(v) if k == "size" else
                        isinstance(v, Tensor) if k == "input" else _is_int_arg(v)
                        for k, v in bound.items()):
            return bound
    if len(args) == 2 and fname == "randint" and named.get("size") is None \
            and builtins.all(_is_int_arg(a) for a in args):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(args[1]).__name__}")
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                              for k, v in named.items() if v is not None]
    raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                    f"({', '.join(got)}), but expected one "
                    f"of:\n{sigs}\n")


# The dtypes PyTorch's arange and range kernels are not compiled for.
_NO_RANGE_KERNEL = frozenset({"bool", "uint16", "uint32", "uint64", "complex64",
                              "complex128"})


def _no_range_kernel(name: str, dt: D.dtype, device: Any) -> None:
    dev = device if device is not None else default_device()
    where = "cuda" if dev is not None and as_device(dev).type == "cuda" else "cpu"
    raise NotImplementedError(f'"{name}_{where}" not implemented for \'{_CPP[dt.name]}\'')


def _check_range_args(start: builtins.float, end: builtins.float, step: builtins.float
                      ) -> None:
    """PyTorch's checks of ``arange``'s bounds and step."""
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


@_into_out
def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """Values in ``[start, end)``; the default float dtype if any bound is a float, else
    int64."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    is_float = builtins.any(isinstance(v, builtins.float) for v in vals)
    dt = D.to_torch(dtype) if dtype is not None else (
        D.get_default_dtype() if is_float else D.int64)
    if dt.name in _NO_RANGE_KERNEL:
        _no_range_kernel("arange", dt, device)
    _check_range_args(*(builtins.float(v) for v in vals))
    arr = np.arange(*vals, dtype=np.float64 if is_float else None).astype(dt.np)
    return _make(arr, device, requires_grad)


@_into_out
def linspace(start: Any, end: Any, steps: builtins.int, *, dtype: Any = None,
             device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end``."""
    _check_steps(steps)
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    return _make(_linspace(start, end, steps, dt.np), device, requires_grad)


def _check_steps(steps: Any) -> None:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


def _linspace(start: Any, end: Any, steps: builtins.int, dt: np.dtype[Any]) -> np.ndarray:
    """PyTorch's CPU kernel, in the result's precision: the first half steps up from
    ``start``, the second half down from ``end``, each value one fused multiply-add (so
    ``linspace(-1, 1, 11)[5]`` is -1.49e-08 in float32, as PyTorch prints it)."""
    if dt.kind != "f" or steps < 2:
        return np.linspace(start, end, steps).astype(dt)
    op = dt
    s, e = np.asarray(start, dt), np.asarray(end, dt)
    step = (e - s) / np.asarray(steps - 1, op)
    idx = np.arange(steps)
    half = steps // 2
    n = np.where(idx < half, idx, steps - idx - 1)
    base = np.where(idx < half, s, e)
    sign = np.where(idx < half, 1.0, -1.0)
    if op.itemsize < 8 or steps > 1 << 14:
        # float64 holds the exact product of a float32 step and an index: one rounding.
        out = base.astype(np.float64) + sign * step.astype(np.float64) * n
        return out.astype(dt)
    from fractions import Fraction  # noqa: PLC0415 - exact fma for float64

    fs, fb = Fraction(float(step)), [Fraction(float(b)) for b in base]
    return np.array([float(b + int(sg) * fs * int(k)) for b, sg, k in zip(fb, sign, n)], dt)


@_into_out
def logspace(start: Any, end: Any, steps: builtins.int, base: builtins.float = 10.0, *,
             dtype: Any = None, device: Any = None,
             requires_grad: builtins.bool = False) -> Tensor:
    _check_steps(steps)
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    return _make(np.logspace(start, end, steps, base=base).astype(dt.np), device,
                 requires_grad)


@_into_out
def eye(n: builtins.int, m: builtins.int | None = None, *, dtype: Any = None,
        device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """The identity matrix."""
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    return _make(np.eye(n, m, dtype=dt.np), device, requires_grad)


@_into_out
def randn(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: builtins.bool = False, generator: Any = None) -> Tensor:
    """Standard normal samples."""
    size = _sizes("randn", sizes, size)
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    check_random_dtype("normal_kernel_cpu", dt)
    if _on_meta(device):
        return _make(MetaBuffer(_shape_args(size, "randn"), dt.np), device, requires_grad)
    index = _gpu_index(device)
    if index is not None:  # drawn on the device by its generator
        return Tensor(_cuda_random.normal(_shape_args(size, "randn"), dt.np, index,
                                          _device_stream(generator, index)),
                      requires_grad=requires_grad)
    # PyTorch's normal_ kernel on a fresh (contiguous) tensor of the dtype.
    arr = _host_stream(generator).torch_normal(_shape_args(size, "randn"), dt.np)
    return _make(arr, device, requires_grad)


@_into_out
def rand(*sizes: Any, size: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: builtins.bool = False, generator: Any = None) -> Tensor:
    """Uniform samples in [0, 1)."""
    size = _sizes("rand", sizes, size)
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    check_random_dtype("check_uniform_bounds", dt)
    if _on_meta(device):
        return _make(MetaBuffer(_shape_args(size, "rand"), dt.np), device, requires_grad)
    index = _gpu_index(device)
    if index is not None:  # drawn on the device by its generator
        return Tensor(_cuda_random.uniform(_shape_args(size, "rand"), dt.np, index,
                                           _device_stream(generator, index)),
                      requires_grad=requires_grad)
    arr = _host_stream(generator).torch_uniform(_shape_args(size, "rand"), dt.np)
    return _make(arr, device, requires_grad)


def randint(*args: Any, low: Any = None, high: Any = None, size: Any = None,
            dtype: Any = None, device: Any = None, generator: Any = None,
            requires_grad: builtins.bool = False, layout: Any = None,
            pin_memory: builtins.bool = False) -> Tensor:
    """Random integers in ``[low, high)`` (int64): ``randint(high, size)`` or
    ``randint(low, high, size)``, positional or keyword, as PyTorch parses them."""
    named = {"low": low, "high": high, "size": size}
    bound = _bind_overload(args, named, ("high", "size"), ("low", "high", "size"),
                           "randint", _RANDINT_SIGS)
    low, high, size = _as_int(bound.get("low", 0)), _as_int(bound["high"]), bound["size"]
    dt = D.to_torch(dtype) if dtype is not None else D.int64
    if not low < high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    index = _gpu_index(device)
    if index is not None:  # drawn on the device by its generator
        return Tensor(_cuda_random.integers(builtins.int(low), builtins.int(high),
                                            _shape_args(tuple(size)), dt.np, index,
                                            _device_stream(generator, index)))
    # PyTorch's random_(low, high) kernel: low + word % (high - low).
    arr = _host_stream(generator).torch_random(_shape_args(tuple(size)), dt.np,
                                               builtins.int(low), builtins.int(high))
    return _make(arr, device, False)


@_into_out
def randperm(n: builtins.int, *, generator: Any = None, dtype: Any = None,
             device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """A random permutation of ``0..n-1`` (int64); with a seeded ``generator``, PyTorch's
    permutation for that seed."""
    dt = D.to_torch(dtype) if dtype is not None else D.int64
    perm = _host_stream(generator).torch_randperm(builtins.int(n))
    return _make(perm.astype(dt.np), device, requires_grad)


def normal(mean: Any, std: Any = 1.0, size: Sequence[builtins.int] | None = None, *,
           generator: Any = None, dtype: Any = None, device: Any = None,
           requires_grad: builtins.bool = False) -> Tensor:
    """Samples from normal distributions with the given means and standard deviations."""
    check_normal_std(std)
    dt = D.to_torch(dtype) if dtype is not None else mean.dtype if isinstance(mean, Tensor) \
        else D.get_default_dtype()
    like = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    if device is None and like is not None:
        device = like.device
    index = _gpu_index(device, honour_default=False)
    if index is not None:
        # On the device: mean + std * z, z from its generator (no host round trip).
        m = mean._data if isinstance(mean, Tensor) else mean
        sd = std._data if isinstance(std, Tensor) else std
        shape = tuple(size) if size is not None else \
            np.broadcast_shapes(tuple(getattr(m, "shape", ())), tuple(getattr(sd, "shape", ())))
        z = _cuda_random.normal(tuple(shape), dt.np, index, _device_stream(generator, index))
        return Tensor((z * sd + m).astype(dt.np), requires_grad=requires_grad)
    m = mean._host() if isinstance(mean, Tensor) else mean
    s = std._host() if isinstance(std, Tensor) else std
    shape = tuple(size) if size is not None else np.broadcast(m, s).shape
    stream = _host_stream(generator)
    if np.ndim(m) == 0 and np.ndim(s) == 0:
        arr = stream.torch_normal(shape, dt.np, builtins.float(m), builtins.float(s))
    elif np.ndim(s) == 0:  # PyTorch: normal_(0, std), then add mean (in the dtype)
        arr = stream.torch_normal(shape, dt.np, 0.0, builtins.float(s)) + \
            np.asarray(m).astype(dt.np)
    else:  # PyTorch: normal_(0, 1), then mul std, add mean (in the dtype)
        arr = stream.torch_normal(shape, dt.np) * np.asarray(s).astype(dt.np) + \
            np.asarray(m).astype(dt.np)
    return _make(np.asarray(arr).astype(dt.np), device, requires_grad, honour_default=False)


def bernoulli(input: Tensor, p: Any = None, *, generator: Any = None,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """0/1 samples with probabilities ``input`` (or the float ``p``), drawn from
    ``generator``'s stream as ``Tensor.bernoulli`` draws them."""
    if not isinstance(input, Tensor):
        raise TypeError('bernoulli() missing 1 required positional arguments: "input"')
    probs: Any = input  # (Tensor's sampling methods are attached at import)
    got = probs.bernoulli(p, generator=generator) if p is not None or generator is not None \
        else _bernoulli_default(input)
    if out is None:
        return cast(Tensor, got)
    from funcgrad.torch._grad_mode import no_grad  # noqa: PLC0415

    dest: Any = out
    with no_grad():
        dest.resize_(got.shape).copy_(got)
    return out


def _bernoulli_default(p: Tensor) -> Tensor:
    index = _gpu_index(p.device, honour_default=False)
    if index is not None:  # drawn on p's device by its generator
        u = _cuda_random.uniform(tuple(p.shape), np.float64, index)
        return Tensor((u < p._data).astype(p.dtype.np))
    # PyTorch: u < p per element, u a double uniform for double p, a float one otherwise
    # (drawn alone, so that p may be a value a compiled step computes).
    u = _rng().torch_uniform(tuple(p.shape), np.float64 if p.dtype.np == np.float64
                             else np.float32)
    return Tensor((u < p._data).astype(p.dtype.np))


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson samples with rates ``input`` (same dtype and device; no gradient flows).

    >>> import funcgrad.torch as torch
    >>> torch.poisson(torch.zeros(3))
    tensor([0., 0., 0.])
    """
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for '
                                  f"'{_CPP_NAMES.get(input.dtype.name, input.dtype.name)}'")
    rates = np.asarray(input._host(), np.float64)
    if np.any(rates < 0) or np.any(np.isnan(rates)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = generator._rng if generator is not None else _rng()
    # PyTorch's CPU kernel (sample_poisson) on its stream, element by element.
    draws = Tensor(np.asarray(g.torch_poisson(rates, input.dtype.np))).to(input.device)
    if not (input.requires_grad and is_grad_enabled()):
        return draws
    # PyTorch records the draw (PoissonBackward0) with a zero derivative.
    from funcgrad import lax  # noqa: PLC0415

    return cast(Tensor, apply_op("Poisson", lambda r, d: (r - lax.stop_gradient(r)) * 0 + d,
                                 input, draws))


_CPP_NAMES = D._CPP_NAMES


def multinomial(probs: Tensor, num_samples: builtins.int,
                replacement: builtins.bool = False, *, generator: Any = None) -> Tensor:
    """Indices drawn from the rows of ``probs`` (unnormalised weights), with PyTorch's
    algorithm: the same seed gives PyTorch's indices."""
    p = np.asarray(probs._host())
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not replacement and num_samples > p.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(p.reshape(-1, p.shape[-1]).sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    out = _host_stream(generator).torch_multinomial(p,
                                                    builtins.int(num_samples),
                                                    builtins.bool(replacement))
    return Tensor(np.asarray(out).astype(np.int64)).to(probs.device)




_RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its "
    "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, which "
    "produces values in [start, end).")


def range(start: Any = 0, end: Any = None, step: Any = 1, *, out: Any = None,  # noqa: A001
          dtype: Any = None, layout: Any = None, device: Any = None,
          requires_grad: builtins.bool = False) -> Tensor:
    """Deprecated: the values ``start, start + step, ...`` up to ``end`` INCLUSIVE, in the
    default float dtype whatever the bounds' types (use ``arange``).

    >>> import warnings, funcgrad.torch as torch
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     torch.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    import math  # noqa: PLC0415
    import warnings  # noqa: PLC0415

    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(_RANGE_DEPRECATED, UserWarning, stacklevel=2)
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    lo, hi, st = (builtins.float(v) for v in vals)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"unsupported range: {vals[0]} -> {vals[1]}")
    if st == 0:
        raise RuntimeError("step must be nonzero")
    if (st > 0 and hi < lo) or (st < 0 and hi > lo):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    if dt.name in _NO_RANGE_KERNEL:
        _no_range_kernel("range", dt, device)
    n = builtins.int((hi - lo) / st) + 1
    if dt.is_floating_point:
        arr = (lo + np.arange(n, dtype=np.float64) * st).astype(dt.np)
    else:
        i0, i1 = builtins.int(vals[0]), builtins.int(vals[2])
        arr = (i0 + np.arange(n, dtype=np.int64) * i1).astype(dt.np)
    return _make(arr, device, requires_grad)


_warned_readonly_buffer = [False]


def frombuffer(buffer: Any, *, dtype: Any, count: builtins.int = -1,
               offset: builtins.int = 0, requires_grad: builtins.bool = False) -> Tensor:
    """A 1-D tensor over the memory of an object that exposes the buffer protocol
    (``bytearray``, ``array.array``, ``memoryview``...): writes through the tensor change
    the buffer. ``count`` elements (-1: all) from byte ``offset``.

    >>> import array, funcgrad.torch as torch
    >>> a = array.array("i", [1, 2, 3])
    >>> t = torch.frombuffer(a, dtype=torch.int32); t[0] = 7; a[0]
    7
    """
    dt = D.to_torch(dtype)
    view = memoryview(buffer)
    length = view.nbytes
    size = dt.np.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset "
                             f"({offset} bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and not _warned_readonly_buffer[0]:
        import warnings  # noqa: PLC0415

        _warned_readonly_buffer[0] = True
        warnings.warn(
            "The given buffer is not writable, and PyTorch does not support non-writable "
            "tensors. This means you can write to the underlying (supposedly non-writable) "
            "buffer using the tensor. You may want to copy the buffer to protect its data or "
            "make it writable before converting it to a tensor. This type of warning will be "
            "suppressed for the rest of this program.", UserWarning, stacklevel=2)
    arr = np.frombuffer(view.cast("B"), dtype=dt.np, count=count, offset=offset)
    return Tensor(arr, requires_grad=requires_grad)


def empty_strided(size: Sequence[builtins.int], stride: Sequence[builtins.int], *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False,
                  pin_memory: builtins.bool = False) -> Tensor:
    """A tensor of shape ``size`` laid out with ``stride`` (in elements) over fresh memory
    (zero-filled in funcgrad; PyTorch leaves it uninitialised).

    >>> import funcgrad.torch as torch
    >>> torch.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    shape, steps = tuple(builtins.int(s) for s in size), tuple(builtins.int(s) for s in stride)
    if len(shape) != len(steps):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match "
                           f"dimensionality of strides ({len(steps)})")
    dt = D.to_torch(dtype) if dtype is not None else D.get_default_dtype()
    extent = 0 if 0 in shape else 1 + builtins.sum((n - 1) * s for n, s in zip(shape, steps))
    storage = np.zeros(extent, dt.np)
    item = storage.itemsize
    arr = np.lib.stride_tricks.as_strided(storage, shape, tuple(s * item for s in steps))
    if (device is None and default_device() is not None) or \
            (device is not None and as_device(device).type != "cpu"):
        return _make(np.ascontiguousarray(arr), device, requires_grad)
    return Tensor(arr, requires_grad=requires_grad)


def _legacy_data(args: tuple[Any, ...]) -> Any:
    """The buffer of PyTorch's legacy constructor ``torch.Tensor(...)``: sizes give a tensor
    of that shape (zeros where PyTorch leaves memory uninitialized), data is converted to
    the default floating dtype, a Tensor is shared as it is."""
    default = D.get_default_dtype().np
    if not args:
        return np.zeros((0,), default)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        return first._data
    sizes = tuple(first) if len(args) == 1 and isinstance(first, Size) else args
    if all(isinstance(d, (builtins.int, np.integer)) and not isinstance(d, builtins.bool)
           for d in sizes):
        for d in sizes:
            if d < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {d}: "
                                   f"{list(sizes)}")
        return np.zeros(tuple(builtins.int(d) for d in sizes), default)
    if len(args) > 1:
        bad = next(i for i, d in enumerate(args) if not isinstance(d, (builtins.int,
                                                                      np.integer)))
        raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {bad + 1} "
                        f"with error \"type must be tuple of ints,but got "
                        f"{type(args[bad]).__name__}\"")
    if isinstance(first, (builtins.float, builtins.bool, builtins.complex, np.generic)):
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__})")
    return tensor(first, dtype=D.get_default_dtype())._data


_tensor_module.legacy_data = _legacy_data
