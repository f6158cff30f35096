"""Reductions of funcgrad.numpy: sum, mean, var, std, max, min, prod, arg*, all, any,
logsumexp, cumsum.

>>> import funcgrad.numpy as fnp
>>> fnp.sum(fnp.ones((2, 3)), axis=1, keepdims=True).shape
(2, 1)
"""

from __future__ import annotations

import builtins
import math
from functools import partial
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.errors import ShapeError
from funcgrad.numpy._core import (
    asarray,
    canonical_axes,
    canonical_axis,
    cast,
    check_arraylike,
    from_buffer,
    promote_args,
    promote_inexact,
    requested_dtype,
    to_inexact_dtype,
)
from funcgrad.numpy._ufuncs import (
    _to_bool,
    add,
    divide,
    exp,
    isfinite,
    log,
    multiply,
    sqrt,
    square,
    subtract,
    where,
)
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import reductions as R
from funcgrad.primitives import structural as S
from funcgrad.primitives.elementwise import stop_gradient
from funcgrad.transforms.custom import custom_jvp


def _prepare(a: Any) -> Any:
    (a,) = promote_args(asarray(a))
    if dtypes.python_scalar(a):
        a = cast(a, get_aval(a).dtype)
    return a


def _keepdims(out: Any, in_ndim: int, axes: tuple[int, ...], keepdims: bool) -> Any:
    if not keepdims:
        return out
    return S.expand_dims(out, axes)


def _accumulate_dtype(dt: np.dtype[Any], dtype: Any, where: str = "sum") -> np.dtype[Any]:
    # JAX (promote_integers=True) sums small integers and booleans in the default integer.
    if dtype is not None:
        return requested_dtype(dtype, where)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < dtypes.default_int().itemsize):
        return dtypes.default_int()
    if dt.kind == "u" and dt.itemsize < dtypes.default_uint().itemsize:
        return dtypes.default_uint()
    return dt


def _masked(a: Any, where_: Any, fill: Any) -> Any:
    """``a`` with the entries outside ``where_`` replaced by ``fill`` (the identity)."""
    if where_ is None:
        return a
    return where(where_, a, fill)


def _with_initial(out: Any, initial: Any, combine: Any) -> Any:
    return out if initial is None else combine(out, initial)


def _reduce_arith(prim_fn: Any, a: Any, axis: Any, dtype: Any, keepdims: bool,
                  where_: Any, identity: Any, promote_integers: bool = True) -> Any:
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    if not promote_integers and dtype is None and aval.dtype.kind in "iu":
        dtype = aval.dtype  # JAX keeps the integer type (booleans still count in int)
    a = cast(a, _accumulate_dtype(aval.dtype, dtype))
    a = _masked(a, where_, identity)
    return _keepdims(prim_fn(a, axes), aval.ndim, axes, keepdims)


def sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,  # noqa: A001
        keepdims: bool = False, initial: Any = None, where: Any = None,
        promote_integers: bool = True) -> Any:
    """Sum over ``axis`` (all axes by default); ``where`` masks entries out.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.sum(fnp.arange(4.0)))
    6.0
    """
    _no_out(out, "sum")
    if isinstance(a, (list, tuple)):
        check_arraylike("sum", a)
    res = _reduce_arith(R.reduce_sum, a, axis, dtype, keepdims, where, 0, promote_integers)
    return _with_initial(res, initial, add)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, initial: Any = None, where: Any = None,
         promote_integers: bool = True) -> Any:
    """Product over ``axis`` (all axes by default); exact gradients with zeros.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.prod(fnp.array([2.0, 3.0])))
    6.0
    """
    _no_out(out, "prod")
    if isinstance(a, (list, tuple)):
        check_arraylike("prod", a)
    res = _reduce_arith(R.reduce_prod, a, axis, dtype, keepdims, where, 1, promote_integers)
    return _with_initial(res, initial, multiply)


def _count(aval_shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    return math.prod([aval_shape[i] for i in axes])


def _mean_dtype(dt: np.dtype[Any], dtype: Any) -> np.dtype[Any]:
    if dtype is not None:
        return requested_dtype(dtype, "mean")
    return to_inexact_dtype(dt)


def _var_dtype(dt: np.dtype[Any], dtype: Any, name: str) -> np.dtype[Any]:
    """The dtype var/nanvar return when ``dtype`` is asked (a complex one for complex data,
    which then holds the real variance), else the data's inexact dtype (real part taken)."""
    if dtype is None:
        return to_inexact_dtype(dt)
    want = requested_dtype(dtype, name)
    if dt.kind == "c" and want.kind != "c":
        raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                         "computing the variance of an array of complex values. The "
                         "semantics of numpy.var seem unclear in this case. Please comment "
                         "on https://github.com/jax-ml/jax/issues/2283 if this behavior is "
                         "important to you.")
    return want


def _work_dtype(dt: np.dtype[Any]) -> np.dtype[Any]:
    """16-bit floats are summed and divided in float32 and rounded once, as JAX does."""
    return np.dtype(np.float32) if dt in (np.dtype(np.float16), dtypes.bfloat16) else dt


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
         keepdims: bool = False, *, where: Any = None) -> Any:
    """Arithmetic mean over ``axis`` (of the entries ``where`` selects).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.mean(fnp.array([1.0, 2.0, 6.0])))
    3.0
    """
    _no_out(out, "mean")
    if isinstance(a, (list, tuple)):
        check_arraylike("mean", a)
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    out_dt = _mean_dtype(aval.dtype, dtype)
    work = _work_dtype(out_dt)
    total = R.reduce_sum(_masked(cast(a, work), where, 0), axes)
    if where is None:
        count: Any = float(_count(aval.shape, axes))
    else:
        mask = _broadcast_mask(where, aval.shape)
        count = R.reduce_sum(cast(mask, work), axes)
    result = divide(total, count)
    if work != out_dt:
        result = cast(result, out_dt)
    return _keepdims(result, aval.ndim, axes, keepdims)


_mean = mean


def _given_mean(a: Any, a_mean: Any, dt: np.dtype[Any], name: str) -> Any:
    """var's ``mean=``, cast to the computation dtype ``dt``, with the errors JAX's
    ``lax.sub(a, mean)`` gives (no rank broadcasting; size-1 axes and scalars do)."""
    from funcgrad.numpy._core import is_array  # noqa: PLC0415

    if not (is_array(a_mean) or isinstance(a_mean, (np.ndarray, np.generic))
            or np.isscalar(a_mean)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a_mean)} at "
                        "position 0.")
    m = asarray(a_mean)
    if get_aval(m).dtype.kind == "c" and dt.kind != "c":
        from funcgrad.numpy._ufuncs import real  # noqa: PLC0415

        m = real(m)  # astype to a real dtype keeps the real part, as JAX's
    m = cast(m, dt)
    a_shape, m_shape = get_aval(a).shape, get_aval(m).shape
    if a_shape and m_shape:
        if len(a_shape) != len(m_shape):
            ranks = ", ".join(str(r) for r in sorted({len(a_shape), len(m_shape)}))
            raise TypeError(f"sub: arrays must have the same number of dimensions, got "
                            f"{{{ranks}}}")
        if builtins.any(p != q and 1 not in (p, q) for p, q in zip(a_shape, m_shape)):
            raise TypeError(f"sub got incompatible shapes for broadcasting: {a_shape}, "
                            f"{m_shape}.")
    return m


_BOOL_DIV = ("div does not accept dtype bool at position 0. Accepted dtypes at position 0 "
             "are subtypes of integer, floating, complexfloating.")


def _int_var(a: Any, axes: tuple[int, ...], dt: np.dtype[Any], ddof: Any, keepdims: bool,
             where_: Any, a_mean: Any, name: str) -> Any:
    """var/nanvar with an integer (or bool) ``dtype``: as JAX, computed in that dtype (the
    mean an integer quotient, truncated), then var divides in it (NaN where nothing is
    left: a weakly typed float) and nanvar in the default float, cast back to ``dt``."""
    from funcgrad.numpy._ufuncs import greater, less_equal  # noqa: PLC0415

    trunc_div = E.div_p.lax_fn  # lax.div: integers rounded toward zero, as XLA's
    assert trunc_div is not None

    aval = get_aval(a)
    if a_mean is None and dt.kind == "b":
        raise TypeError(_BOOL_DIV)  # JAX's mean divides in the asked dtype
    a = cast(a, dt)

    def count(keep: bool) -> Any:
        if where_ is None:
            shape = tuple(1 if i in axes else d for i, d in enumerate(aval.shape)
                          if keep or i not in axes)
            from funcgrad.numpy._creation import full  # noqa: PLC0415

            return full(shape, np.asarray(_count(aval.shape, axes)).astype(dt), dt)
        return sum(_broadcast_mask(where_, aval.shape), axes, dtype=dt, keepdims=keep)

    if a_mean is None:
        m = trunc_div(sum(a, axes, dtype=dt, keepdims=True, where=where_), count(True))
    else:
        m = _given_mean(a, a_mean, dt, name)
    centered = subtract(a, m)
    if get_aval(centered).dtype.kind == "b":
        raise TypeError(_BOOL_DIV)
    squared = multiply(centered, centered)
    if name == "var":
        norm = subtract(count(keepdims), cast(np.asarray(ddof).astype(dt), dt))
        total = sum(squared, axes, dtype=dt, keepdims=keepdims, where=where_)
        return where(greater(norm, 0), trunc_div(total, norm), np.nan)
    norm = subtract(_ones_count(a, axes, keepdims, where_), ddof)
    empty = less_equal(norm, 0)
    total = where(empty, np.nan, sum(squared, axes, keepdims=keepdims, where=where_))
    res = divide(total, cast(where(empty, 1, norm), get_aval(total).dtype))
    return cast(res, dt)


def _ones_count(a: Any, axes: tuple[int, ...], keepdims: bool, where_: Any) -> Any:
    """JAX's nanvar normalizer for integer data: a sum of True (the default int)."""
    from funcgrad.numpy._creation import ones  # noqa: PLC0415

    return sum(ones(get_aval(a).shape, dtype=bool), axes, keepdims=keepdims, where=where_)


def _broadcast_mask(where_: Any, shape: tuple[int, ...]) -> Any:
    from funcgrad.numpy._core import broadcast_to_shape  # noqa: PLC0415

    return broadcast_to_shape(_to_bool(where_), shape)


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: Any = None) -> Any:
    """Variance over ``axis`` with ``ddof`` (or ``correction``) delta degrees of freedom.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.var(fnp.array([1.0, 3.0])))
    1.0
    """
    _no_out(out, "var")
    if isinstance(a, (list, tuple)):
        check_arraylike("var", a)
    if correction is not None:
        ddof = correction
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    out_dt = _var_dtype(aval.dtype, dtype, "var")
    if not dtypes.is_inexact(out_dt):
        return _int_var(a, axes, out_dt, ddof, keepdims, where, mean, "var")
    a = cast(a, _work_dtype(out_dt))
    centered = subtract(a, _mean(a, axes, keepdims=True, where=where) if mean is None
                        else _given_mean(a, mean, _work_dtype(out_dt), "var"))
    if get_aval(centered).dtype.kind == "c":
        # |z - mean|^2, a real variance (as NumPy and JAX), not the square of z - mean.
        from funcgrad.numpy._ufuncs import imag, real  # noqa: PLC0415

        squared = add(square(real(centered)), square(imag(centered)))
    else:
        squared = square(centered)
    total = R.reduce_sum(_masked(squared, where, 0), axes)
    if where is None:
        n: Any = float(_count(aval.shape, axes) - ddof)
    else:
        n = subtract(R.reduce_sum(cast(_broadcast_mask(where, aval.shape),
                                       get_aval(squared).dtype), axes), float(ddof))
    result = divide(total, n)
    if not (isinstance(n, float) and n > 0):
        # No degrees of freedom (ddof >= count, or nothing reduced): NaN, as in JAX.
        from funcgrad.numpy._ufuncs import greater  # noqa: PLC0415
        from funcgrad.numpy._ufuncs import where as _where

        result = _where(greater(n, 0.0), result, np.nan)
    if (dtype is not None and out_dt.kind in "fc") or _work_dtype(out_dt) != out_dt:
        result = cast(result, out_dt)
    return _keepdims(result, aval.ndim, axes, keepdims)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, mean: Any = None,
        correction: Any = None) -> Any:
    """Standard deviation over ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.std(fnp.array([1.0, 3.0])))
    1.0
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("std", a)
    if dtype is not None:
        want = requested_dtype(dtype, "std")
        if not dtypes.is_inexact(want):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {want}")
    return sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                    correction=correction))


def _chooser(prim_fn: Any, name: str, a: Any, axis: Any, keepdims: bool, initial: Any,
             where_: Any, combine: Any) -> Any:
    a = _prepare(a)
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    if where_ is not None and initial is None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if builtins.any(aval.shape[i] == 0 for i in axes) and initial is None:
        raise ValueError(f"zero-size array to reduction operation {name} which has no "
                         "identity")
    if where_ is not None:
        a = _masked(a, where_, cast(initial, aval.dtype))
    if builtins.any(aval.shape[i] == 0 for i in axes):
        from funcgrad.numpy._creation import full  # noqa: PLC0415

        shape = tuple(1 if i in axes else d for i, d in enumerate(aval.shape)
                      if keepdims or i not in axes)
        return full(shape, initial, aval.dtype)
    if aval.dtype.kind == "c":
        out = _complex_extreme(a, axes, prim_fn is R.reduce_max)
    else:
        out = prim_fn(a, axes)
    out = _keepdims(out, aval.ndim, axes, keepdims)
    out = _with_initial(out, None if initial is None else cast(initial, aval.dtype), combine)
    # JAX's max/min are strongly typed even of a weak operand (lax.reduce with a strong
    # initial value): jnp.max(0.5) is a float32, and so are gradients through it.
    return cast(out, aval.dtype) if aval.weak_type else out


def _lexicographic_extreme(a: Any, axes: tuple[int, ...], largest: bool) -> Any:
    # Complex numbers in JAX's (XLA's) order: by real part, then by imaginary part.
    red = R.reduce_max if largest else R.reduce_min
    shape = get_aval(a).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    re, im = E.real_p.bind(a), E.imag_p.bind(a)
    best_re = red(re, axes)
    on_best = E.eq(re, S.broadcast_in_dim(best_re, shape, kept))
    beyond = np.array(-np.inf if largest else np.inf, get_aval(im).dtype)
    best_im = red(where(on_best, im, beyond), axes)
    return E.complex_p.bind(best_re, best_im)


@partial(custom_jvp, nondiff_argnums=(1, 2))
def _complex_extreme(a: Any, axes: tuple[int, ...], largest: bool) -> Any:
    return _lexicographic_extreme(a, axes, largest)


@_complex_extreme.defjvp
def _complex_extreme_jvp(axes: tuple[int, ...], largest: bool, primals: Any,
                         tangents: Any) -> Any:
    # As reduce_max's rule (and JAX's): the elements equal to the answer share its tangent.
    (x,), (t,) = primals, tangents
    ans = _lexicographic_extreme(x, axes, largest)
    shape = get_aval(x).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    hit = cast(E.eq(x, S.broadcast_in_dim(ans, shape, kept)), get_aval(x).dtype)
    share = divide(R.reduce_sum(multiply(t, hit), axes), R.reduce_sum(hit, axes))
    return ans, share


def max(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Maximum over ``axis``; ties share the gradient equally.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.max(fnp.array([1.0, 5.0, 2.0])))
    5.0
    """
    _no_out(out, "max")
    if isinstance(a, (list, tuple)):
        check_arraylike("max", a)
    from funcgrad.numpy._ufuncs import maximum  # noqa: PLC0415

    return _chooser(R.reduce_max, "max", a, axis, keepdims, initial, where, maximum)


def min(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Minimum over ``axis``; ties share the gradient equally.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.min(fnp.array([1.0, 5.0, 2.0])))
    1.0
    """
    _no_out(out, "min")
    if isinstance(a, (list, tuple)):
        check_arraylike("min", a)
    from funcgrad.numpy._ufuncs import minimum  # noqa: PLC0415

    return _chooser(R.reduce_min, "min", a, axis, keepdims, initial, where, minimum)


amax, amin = max, min


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Peak to peak: max - min over ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.ptp(fnp.array([1.0, 5.0, 2.0])))
    4.0
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("ptp", a)
    _no_out(out, "ptp")
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise NotImplementedError(
            f"The 'out' argument to funcgrad.numpy.{name} is not supported: arrays are "
            "immutable; use the returned value instead."
        )


def _arg(prim_fn: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    a = _prepare(a)
    aval = get_aval(a)
    if axis is None:
        flat = S.reshape(a, (aval.size,))
        out = prim_fn(flat, 0)
        return S.reshape(out, (1,) * aval.ndim) if keepdims else out
    ax = canonical_axis(axis, aval.ndim)
    out = prim_fn(a, ax)
    return S.expand_dims(out, (ax,)) if keepdims else out


def argmax(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Any:
    """Index of the maximum (first on ties), over the flattened array by default.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.argmax(fnp.array([1.0, 5.0, 2.0])))
    1
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("argmax", a)
    _no_out(out, "argmax")
    _no_complex_order(a, "gt")
    return _arg(R.argmax, a, axis, bool(keepdims))


def argmin(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Any:
    """Index of the minimum (first on ties), over the flattened array by default.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.argmin(fnp.array([1.0, 5.0, 2.0])))
    0
    """
    if isinstance(a, (list, tuple)):
        check_arraylike("argmin", a)
    _no_out(out, "argmin")
    _no_complex_order(a, "lt")
    return _arg(R.argmin, a, axis, bool(keepdims))


def _no_complex_order(a: Any, op: str) -> None:
    """JAX's TypeError for argmax/argmin of complex numbers: its comparison (``op``) has no
    complex order, though its max/min reductions do."""
    dt = get_aval(_prepare(a)).dtype
    if dt.kind == "c":
        raise TypeError(f"{op} does not accept dtype {dt} at position 0. Accepted dtypes at "
                        "position 0 are subtypes of integer, floating, bool.")


def _logical_reduce(prim_fn: Any, a: Any, axis: Any, keepdims: bool, where_: Any,
                    empty: bool) -> Any:
    b = _masked(_to_bool(a), where_, empty)
    aval = get_aval(b)
    if aval.weak_type:
        b = E.convert_element_type(b, np.bool_)  # JAX's any/all are strongly typed
    axes = canonical_axes(axis, aval.ndim)
    if any_empty(aval.shape, axes):
        return _empty_logical(aval.shape, axes, keepdims, empty)
    return _keepdims(prim_fn(b, axes), aval.ndim, axes, keepdims)


def all(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        *, where: Any = None) -> Any:
    """True where every element along ``axis`` is true.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.all(fnp.array([1.0, 0.0])))
    False
    """
    _no_out(out, "all")
    if isinstance(a, (list, tuple)):
        check_arraylike("all", a)
    return _logical_reduce(R.reduce_min, a, axis, keepdims, where, True)


def any(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,  # noqa: A001
        *, where: Any = None) -> Any:
    """True where some element along ``axis`` is true.

    >>> import funcgrad.numpy as fnp
    >>> bool(fnp.any(fnp.array([1.0, 0.0])))
    True
    """
    _no_out(out, "any")
    if isinstance(a, (list, tuple)):
        check_arraylike("any", a)
    return _logical_reduce(R.reduce_max, a, axis, keepdims, where, False)


def any_empty(shape: tuple[int, ...], axes: tuple[int, ...]) -> bool:
    return 0 in [shape[i] for i in axes]


def _empty_logical(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool,
                   value: bool) -> Any:
    out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape) if keepdims or
                      i not in axes)
    return from_buffer(np.full(out_shape, value))


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Number of non-zero elements along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> int(fnp.count_nonzero(fnp.array([1.0, 0.0, 3.0])))
    2
    """
    check_arraylike("count_nonzero", a)
    return sum(_to_bool(a), axis=axis, keepdims=keepdims)


def logsumexp(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """log(sum(exp(a))) over ``axis``, computed without overflow.

    >>> import funcgrad.numpy as fnp
    >>> round(float(fnp.logsumexp(fnp.array([0.0, 0.0]))), 4)
    0.6931
    """
    a = _prepare(a)
    if not dtypes.is_inexact(get_aval(a).dtype):
        a = cast(a, to_inexact_dtype(get_aval(a).dtype))
    aval = get_aval(a)
    axes = canonical_axes(axis, aval.ndim)
    kept = tuple(i for i in range(aval.ndim) if i not in axes)
    # The shift is the real parts' max (complex numbers have no order), 0 where it is not
    # finite; an empty axis has no max (JAX's initial=-inf), so its shift is 0 too, of the
    # reduced shape: the sum of no terms then gives log(0) = -inf.
    re = E.real_p.bind(a) if aval.dtype.kind == "c" else a
    if aval.size:
        amax = stop_gradient(R.reduce_max(re, axes))
    else:
        amax = from_buffer(np.zeros(tuple(aval.shape[i] for i in kept), get_aval(re).dtype))
    amax = where(isfinite(amax), amax, 0.0)
    shifted = subtract(a, S.broadcast_in_dim(cast(amax, aval.dtype), aval.shape, kept))
    total = R.reduce_sum(exp(shifted), axes)
    out = log(total)
    out = add(out, cast(amax, get_aval(out).dtype))
    return _keepdims(out, aval.ndim, axes, keepdims)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum along ``axis`` (of the flattened array when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.cumsum(fnp.array([1.0, 2.0, 3.0])).tolist()
    [1.0, 3.0, 6.0]
    """
    _no_out(out, "cumsum")
    if isinstance(a, (list, tuple)):
        check_arraylike("cumsum", a)
    a = _prepare(a)
    aval = get_aval(a)
    if axis is None:
        a = S.reshape(a, (aval.size,))
        axis = 0
    ax = canonical_axis(axis, get_aval(a).ndim)
    # Unlike sum, JAX's cumsum keeps small integer dtypes (promote_integers=False); only
    # booleans accumulate in the default integer.
    keep = dtype is None and aval.dtype.kind in "iu"
    a = cast(a, aval.dtype if keep else _accumulate_dtype(aval.dtype, dtype, "cumsum"))
    return R.cumsum(a, ax)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Weighted average along ``axis`` (the plain mean without weights); ``weights`` have
    ``a``'s shape, or the shape of ``a`` along ``axis``; with ``returned``, also the sum of
    the weights (broadcast to the average's shape).

    >>> import funcgrad.numpy as fnp
    >>> float(fnp.average(fnp.array([1.0, 3.0]), weights=fnp.array([3.0, 1.0])))
    1.5
    >>> fnp.average(fnp.ones((2, 3)), axis=1, weights=fnp.array([1.0, 2.0, 3.0]))
    Array([1., 1.], dtype=float32)
    """
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        total = get_aval(a).size // builtins.max(get_aval(avg).size, 1)
        wsum = from_buffer(np.full(get_aval(avg).shape, total, get_aval(avg).dtype))
        return (avg, wsum) if returned else avg
    a, w = promote_inexact(a, weights)
    shape, wshape = get_aval(a).shape, get_aval(w).shape
    if shape != wshape:
        if axis is None:
            raise ShapeError("Axis must be specified when shapes of a and weights differ.")
        axes = tuple(canonical_axis(ax, len(shape))
                     for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if wshape != tuple(shape[ax] for ax in axes):
            raise ShapeError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        # The weights' axes in a's order, then broadcast over a's other axes.
        order = sorted(range(len(axes)), key=lambda k: axes[k])
        w = S.transpose(w, order)
        w = S.broadcast_in_dim(w, shape, tuple(sorted(axes)))
    wsum = sum(w, axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis, keepdims=keepdims), wsum)
    if returned:
        return avg, S.broadcast_in_dim(wsum, get_aval(avg).shape,
                                       tuple(range(get_aval(avg).ndim)))
    return avg


def _along_axis(a: Any, axis: Any) -> tuple[Any, int]:
    """The operand and a non-negative axis; ``axis=None`` means the flattened array."""
    a = _prepare(a)
    if axis is None:
        a, axis = S.reshape(a, (get_aval(a).size,)), 0
    return a, canonical_axis(axis, get_aval(a).ndim)


def _check_sort_args(name: str, kind: Any, order: Any) -> None:
    """JAX's TypeErrors for NumPy's ``kind=`` and ``order=`` (only ``stable=`` says how to
    sort)."""
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def _check_stable(stable: Any) -> None:
    """JAX's TypeError for ``stable=None`` (what ``np.argsort`` passes to an array's
    method; JAX's lowering of the sort takes only a bool): NumPy then falls back to
    converting the array."""
    if stable is None:
        raise TypeError("get(): incompatible function arguments. The following argument "
                        "types are supported:\n    1. get(value: bool, context: "
                        "_mlir.ir.Context | None = None) -> "
                        "jaxlib.mlir._mlir_libs._mlir.ir.BoolAttr\n\nInvoked with types: "
                        "NoneType")


def sort(a: Any, axis: Any = -1, *, kind: Any = None, order: Any = None, stable: bool = True,
         descending: bool = False) -> Any:
    """Sorted copy along ``axis`` (of the flattened array when ``axis`` is None); stable,
    and differentiable (the derivative follows the sorting permutation).

    >>> import funcgrad.numpy as fnp
    >>> fnp.sort(fnp.array([3.0, 1.0, 2.0])).tolist()
    [1.0, 2.0, 3.0]
    """
    check_arraylike("sort", a)
    _check_sort_args("sort", kind, order)
    _check_stable(stable)
    x, ax = _along_axis(a, axis)
    if get_aval(x).dtype.kind == "c":
        from funcgrad.numpy._indexing import take_along_axis  # noqa: PLC0415

        return take_along_axis(x, argsort(x, ax, descending=descending), ax)
    if descending:  # (JAX's: the ascending sort reversed, so equal values such as 0. and
        # -0. come in reverse order)
        return S.rev(R.sort(x, ax), (ax,))
    return R.sort(x, ax)


def _complex_argsort(x: Any, ax: int, descending: bool) -> Any:
    """JAX's order of complex numbers: by real part, ties by imaginary part (two stable
    passes, the secondary key first)."""
    from funcgrad.numpy._indexing import take_along_axis  # noqa: PLC0415

    first = argsort(E.imag_p.bind(x), ax, descending=descending)
    second = argsort(take_along_axis(E.real_p.bind(x), first, ax), ax, descending=descending)
    return take_along_axis(first, second, ax)


def argsort(a: Any, axis: Any = -1, *, kind: Any = None, order: Any = None,
            stable: bool = True, descending: bool = False) -> Any:
    """Indices that sort ``a`` along ``axis`` (stable; flattened when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.argsort(fnp.array([3.0, 1.0, 2.0])).tolist()
    [1, 2, 0]
    """
    check_arraylike("argsort", a)
    _check_sort_args("argsort", kind, order)
    _check_stable(stable)
    x, ax = _along_axis(a, axis)
    if get_aval(x).dtype.kind == "c":
        return _complex_argsort(x, ax, descending)
    if descending:
        # Stable descending: sort the reversed array, then map positions back.
        n = get_aval(x).shape[ax]
        out = subtract(n - 1, S.rev(R.argsort(S.rev(x, (ax,)), ax), (ax,)))
    else:
        out = R.argsort(x, ax)
    # The primitive gives int64; JAX's indices are the default integer (int32 without x64).
    return cast(out, dtypes.default_int())
