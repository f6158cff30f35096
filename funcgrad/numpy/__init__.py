"""NumPy's names over arrays, tracers (and Tensors): ``import funcgrad.numpy as fnp``.

Broadcasting and type promotion (NumPy 2 / NEP 50) happen here, with explicit
``broadcast_in_dim`` and ``convert_element_type`` primitives, so every
primitive below stays shape- and dtype-exact.

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> fnp.sum(fnp.exp(np.zeros(3)))
array(3.)
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from funcgrad import dtypes as _dtypes
from funcgrad.core import Tracer as _Tracer
from funcgrad.numpy import linalg
from funcgrad.numpy._creation import *  # noqa: F403
from funcgrad.numpy._creation import array, asarray, copy
from funcgrad.numpy._indexing import (
    AtIndexer,
    at,
    getitem,
    index_add,
    index_update,
    take,
    take_along_axis,
)
from funcgrad.numpy._linalg import (
    diag,
    diagonal,
    dot,
    einsum,
    inner,
    kron,
    matmul,
    outer,
    tensordot,
    trace,
    tril,
    triu,
    vdot,
)
from funcgrad.numpy._reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    argsort,
    average,
    count_nonzero,
    cumsum,
    logsumexp,
    max,
    mean,
    min,
    prod,
    ptp,
    sort,
    std,
    sum,
    var,
)
from funcgrad.numpy._shape import (
    array_split,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_to,
    column_stack,
    concatenate,
    diff,
    dstack,
    expand_dims,
    flip,
    fliplr,
    flipud,
    hstack,
    moveaxis,
    ndim,
    pad,
    ravel,
    repeat,
    reshape,
    roll,
    row_stack,
    shape,
    size,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    vstack,
)
from funcgrad.numpy._ufuncs import (
    abs,
    absolute,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    astype,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    copysign,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    equal,
    exp,
    exp2,
    expm1,
    fix,
    float_power,
    floor,
    floor_divide,
    greater,
    greater_equal,
    hypot,
    invert,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    nan_to_num,
    negative,
    not_equal,
    positive,
    power,
    rad2deg,
    radians,
    reciprocal,
    remainder,
    rint,
    round,
    sign,
    sin,
    sinc,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
bool_ = _dtypes.bool_
int8, int16, int32, int64 = _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64
uint8, uint16, uint32, uint64 = _dtypes.uint8, _dtypes.uint16, _dtypes.uint32, _dtypes.uint64
float16, float32, float64 = _dtypes.float16, _dtypes.float32, _dtypes.float64
complex64, complex128 = _dtypes.complex64, _dtypes.complex128
ndarray = _np.ndarray
dtype = _np.dtype


def result_type(*args: Any) -> Any:
    """The dtype an operation on ``args`` would produce (NEP 50 rules).

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.result_type(np.ones(1, np.float32), 2.0)
    dtype('float32')
    """
    from funcgrad.numpy._core import asarray as _as  # noqa: PLC0415
    from funcgrad.numpy._core import typed  # noqa: PLC0415

    def entry(a: Any) -> Any:
        if isinstance(a, (_np.dtype, str)) or (isinstance(a, type) and a not in (int, float,
                                                                                 complex, bool)):
            return _dtypes.canonicalize(a), False
        return typed(_as(a))

    return _dtypes.promote(*(entry(a) for a in args))[0]


# ---------------------------------------------------------------- tracer methods


def _swap(f: Any) -> Any:
    return lambda self, other: f(other, self)


def _method(f: Any) -> Any:
    return lambda self, *args, **kwargs: f(self, *args, **kwargs)


def _install_array_methods(cls: type) -> None:
    """Give ``cls`` (tracers, and the Tensor facade) NumPy's operators and methods."""
    ops = {
        "__add__": add, "__sub__": subtract, "__mul__": multiply, "__truediv__": divide,
        "__floordiv__": floor_divide, "__mod__": remainder, "__pow__": power,
        "__matmul__": matmul, "__and__": bitwise_and, "__or__": bitwise_or,
        "__xor__": bitwise_xor, "__lt__": less, "__le__": less_equal, "__gt__": greater,
        "__ge__": greater_equal, "__eq__": equal, "__ne__": not_equal,
    }
    def reshape_method(self: Any, *dims: Any, order: str = "C") -> Any:
        if len(dims) == 1 and not isinstance(dims[0], (int, _np.integer)):
            dims = tuple(dims[0])
        return reshape(self, dims, order)

    def transpose_method(self: Any, *axes: Any) -> Any:
        if len(axes) == 1 and not isinstance(axes[0], (int, _np.integer)):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return transpose(self, axes or None)

    methods: dict[str, Any] = {
        "__neg__": negative, "__pos__": positive, "__abs__": absolute, "__invert__": invert,
        "__getitem__": getitem, "sum": sum, "mean": mean, "var": var, "std": std, "max": max,
        "min": min, "prod": prod, "argmax": argmax, "argmin": argmin, "all": all, "any": any,
        "cumsum": cumsum, "ravel": ravel, "flatten": ravel, "squeeze": squeeze,
        "swapaxes": swapaxes, "clip": clip, "dot": dot, "round": round, "astype": astype,
        "take": take, "conj": positive, "diagonal": diagonal, "trace": trace,
    }
    attrs: dict[str, Any] = {name: _method(f) for name, f in {**ops, **methods}.items()}
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
                 "or", "xor"):
        attrs[f"__r{name}__"] = _swap(ops[f"__{name}__"])
    attrs.update(
        reshape=reshape_method,
        transpose=transpose_method,
        T=property(lambda self: transpose(self)),
        mT=property(lambda self: swapaxes(self, -1, -2)),
        at=property(lambda self: AtIndexer(self)),
    )
    for name, value in attrs.items():
        setattr(cls, name, value)


_install_array_methods(_Tracer)


def _wrap_public_functions() -> None:
    from funcgrad.numpy._dispatch import tensor_aware  # noqa: PLC0415

    g = globals()
    skip = {"result_type", "shape", "ndim", "size", "at", "getitem"}
    for name, value in list(g.items()):
        if name.startswith("_") or name in skip or not callable(value) or isinstance(value, type):
            continue
        if getattr(value, "__module__", "").startswith("funcgrad.numpy"):
            g[name] = tensor_aware(value)


_wrap_public_functions()
