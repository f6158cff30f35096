"""NumPy's names over arrays, tracers (and Tensors): ``import funcgrad.numpy as fnp``.

Broadcasting and type promotion (NumPy 2 / NEP 50) happen here, with explicit
``broadcast_in_dim`` and ``convert_element_type`` primitives, so every
primitive below stays shape- and dtype-exact.

>>> import numpy as np
>>> import funcgrad.numpy as fnp
>>> fnp.sum(fnp.exp(np.zeros(3)))
Array(3., dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from funcgrad import dtypes as _dtypes
from funcgrad.array import Array as _Array
from funcgrad.numpy import fft, linalg
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
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    astype,
    bitwise_not,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    copysign,
    cos,
    cosh,
    deg2rad,
    degrees,
    divide,
    divmod,
    equal,
    exp,
    exp2,
    expm1,
    float_power,
    floor,
    floor_divide,
    fmod,
    greater,
    greater_equal,
    hypot,
    imag,
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
    logical_not,
    mod,
    nan_to_num,
    not_equal,
    positive,
    power,
    rad2deg,
    radians,
    real,
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
# The version of the Python array API standard the namespace follows (JAX's).
__array_api_version__ = "2024.12"
from funcgrad.numpy._scalar_types import *  # noqa: F403, E402
from funcgrad.numpy._scalar_types import _ScalarMeta  # noqa: E402

ndarray = _Array


def dtype(obj: Any, align: bool = False, copy: bool = False) -> Any:  # noqa: F811
    """``numpy.dtype`` that also understands funcgrad's scalar types (``jnp.float32``).

    >>> import funcgrad.numpy as jnp
    >>> jnp.dtype("float32")
    dtype('float32')
    """
    if isinstance(obj, _ScalarMeta):
        return obj.dtype
    return _np.dtype(obj, align=align, copy=copy)


def result_type(*args: Any) -> Any:
    """The dtype JAX's promotion gives ``args`` (arrays, dtypes, Python scalars).

    >>> import numpy as np
    >>> import funcgrad.numpy as fnp
    >>> fnp.result_type(np.ones(1, np.float32), 2.0)
    dtype('float32')
    """
    return _dtypes.result_type(*args)


def promote_types(a: Any, b: Any) -> Any:
    """The dtype a binary operation casts ``a`` and ``b`` to (JAX's lattice).

    >>> import funcgrad.numpy as jnp
    >>> jnp.promote_types(jnp.int8, jnp.uint8)
    dtype('int16')
    """
    return _dtypes.promote_types(a, b)


from funcgrad.numpy import _array_methods, _dtype_info  # noqa: E402
from funcgrad.numpy._array_extras import *  # noqa: F403, E402
from funcgrad.numpy._dtype_info import *  # noqa: F403, E402
from funcgrad.numpy._index_tricks import *  # noqa: F403, E402
from funcgrad.numpy._io import *  # noqa: F403, E402
from funcgrad.numpy._numeric import *  # noqa: F403, E402
from funcgrad.numpy._polynomial import *  # noqa: F403, E402
from funcgrad.numpy._setops import *  # noqa: F403, E402
from funcgrad.numpy._statistics import *  # noqa: F403, E402
from funcgrad.numpy._ufuncs_extra import *  # noqa: F403, E402
from funcgrad.numpy._vectorize import *  # noqa: F403, E402
from funcgrad.numpy._window_functions import *  # noqa: F403, E402

# jax.numpy's ``bool`` scalar type, bound by name so that the annotations above keep
# meaning the builtin for mypy.
globals()["bool"] = _dtype_info.bool

_array_methods.install()

# The ufuncs (``jnp.add.reduce``, ``jnp.add.at``...), made of the plain functions of _ufuncs.
from funcgrad.numpy._builtin_ufuncs import (  # noqa: E402
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    subtract,
)

# Typed PRNG key arrays (``jax.random.key``) through the array functions JAX allows on
# them: funcgrad.random fills ``_key_hooks`` by name with versions that answer
# NotImplemented when no argument is a key array.
_key_hooks: dict[str, Any] = {}
# The key array types (funcgrad.random registers its own): the hooks run only when an
# argument is one, so ordinary calls pay a type check.
_key_types: set[type] = set()


def _keys_through(fn: Any, in_sequence: bool = False) -> Any:
    """``fn``, through its key hook when an argument is a key array (``in_sequence``: the
    first argument is a sequence of arrays, as stack's)."""
    import functools  # noqa: PLC0415

    name = fn.__name__

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _key_types and _has_key(args, kwargs, in_sequence):
            out = _key_hooks[name](*args, **kwargs)
            if out is not NotImplemented:
                return out
        return fn(*args, **kwargs)

    return call


def _has_key(args: tuple[Any, ...], kwargs: dict[str, Any], in_sequence: bool) -> bool:
    keys = _key_types
    for a in args:
        if type(a) in keys:
            return True
    if in_sequence and args and type(args[0]) in (list, tuple):
        for a in args[0]:
            if type(a) in keys:
                return True
    for v in kwargs.values():  # (a loop: ``any`` here is funcgrad.numpy's)
        if type(v) in keys:
            return True
    return False


(stack, concatenate, asarray, array) = (  # noqa: F811
    _keys_through(stack, True), _keys_through(concatenate, True),  # noqa: F405
    _keys_through(asarray, True), _keys_through(array, True))  # noqa: F405
(where, take, reshape, ravel, transpose, squeeze, expand_dims,
 broadcast_to, swapaxes, copy, shape, ndim, size, zeros_like, ones_like, empty_like,
 full_like) = map(  # noqa: F811
    _keys_through,
    (where, take, reshape, ravel, transpose, squeeze,  # noqa: F405
     expand_dims, broadcast_to, swapaxes, copy, shape, ndim, size,  # noqa: F405
     zeros_like, ones_like, empty_like, full_like))  # noqa: F405


def __getattr__(name: str) -> Any:
    # Names JAX 0.10.2 has removed, with the message its module gives for them.
    if name == "fix":
        raise AttributeError("jax.numpy.fix was deprecated in JAX v0.9.0, and will be "
                             "removed in JAX v0.10.0. Use jax.numpy.trunc instead.")
    raise AttributeError(f"module 'funcgrad.numpy' has no attribute {name!r}")
