"""Index construction and index-based edits of funcgrad.numpy: ``s_``/``index_exp``,
``r_``/``c_``, ``mgrid``/``ogrid``, ``ix_``, ``indices``, the ``*_indices`` families,
``ravel_multi_index``/``unravel_index``, ``fill_diagonal``, ``diagflat``, ``choose``,
``select``, ``piecewise``, ``place``, ``put``, ``put_along_axis``, ``insert``, ``delete``,
``append`` and ``block``. Edits return new arrays (JAX's arrays are immutable).

>>> import funcgrad.numpy as fnp
>>> fnp.r_[fnp.array([1, 2]), 3].tolist()
[1, 2, 3]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Tracer, get_aval
from funcgrad.numpy._core import (
    asarray,
    canonical_axis,
    cast,
    check_arraylike,
    is_array,
    promote_args,
)
from funcgrad.numpy._creation import arange, array, linspace, ones, zeros
from funcgrad.numpy._indexing import take, take_along_axis
from funcgrad.numpy._linalg import diag
from funcgrad.numpy._setops import host_value, nonzero
from funcgrad.numpy._shape import (
    atleast_1d,
    broadcast_arrays,
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    stack,
)
from funcgrad.numpy._ufuncs import (
    add,
    clip,
    floor_divide,
    less,
    multiply,
    remainder,
    where,
)

s_ = np.s_
index_exp = np.index_exp


class _Concatenator:
    """``r_``/``c_``: concatenation by index syntax (slices become ``arange``/``linspace``)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int) -> None:
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        parts = []
        for item in items:
            if isinstance(item, str):
                vals = [int(v) for v in item.split(",")]
                if len(vals) > 3 or not vals:
                    raise ValueError(f"could not understand directive {item!r}")
                axis = vals[0]
                if len(vals) > 1:
                    ndmin = vals[1]
                if len(vals) > 2:
                    trans1d = vals[2]
                continue
            if isinstance(item, slice):
                step = item.step if item.step is not None else 1
                start = item.start if item.start is not None else 0
                if isinstance(step, complex):
                    arr = linspace(start, item.stop, int(abs(step)))
                else:
                    arr = arange(start, item.stop, step)
            else:
                arr = asarray(array(item) if isinstance(item, (list, tuple)) else item)
            nd = get_aval(arr).ndim
            if nd < ndmin:
                shape = get_aval(arr).shape
                extra = ndmin - nd
                if trans1d == -1 or nd == 0:
                    arr = reshape(arr, (*shape, *([1] * extra)) if nd else (1,) * ndmin)
                    if nd and trans1d == -1:
                        arr = reshape(arr, (*([1] * extra), *shape))
                        arr = moveaxis(arr, -1, trans1d) if nd == 1 else arr
                else:
                    arr = reshape(arr, (*([1] * extra), *shape))
                    arr = moveaxis(arr, extra - 1 + nd, trans1d) if nd == 1 else arr
            parts.append(atleast_1d(arr))
        parts = list(promote_args(*parts)) if parts else parts
        return concatenate(parts, axis=axis)


class _RClass(_Concatenator):
    """Row-wise concatenation by index syntax: ``r_[a, 0:3, b]``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.r_[0:3, 5].tolist()
    [0, 1, 2, 5]
    """

    def __init__(self) -> None:
        super().__init__(0, 1, -1)


class _CClass(_Concatenator):
    """Column stacking by index syntax: ``c_[a, b]`` puts 1-d inputs side by side.

    >>> import funcgrad.numpy as fnp
    >>> fnp.c_[fnp.array([1, 2]), fnp.array([3, 4])].tolist()
    [[1, 3], [2, 4]]
    """

    def __init__(self) -> None:
        super().__init__(-1, 2, 0)


r_ = _RClass()
c_ = _CClass()


class _Grid:
    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        keys = key if isinstance(key, tuple) else (key,)
        axes = []
        for k in keys:
            step = k.step if k.step is not None else 1
            start = k.start if k.start is not None else 0
            if isinstance(step, complex):
                axes.append(linspace(start, k.stop, int(abs(step))))
            else:
                axes.append(arange(start, k.stop, step))
        axes = list(promote_args(*axes))
        n = len(axes)
        shaped = [reshape(a, tuple(-1 if i == j else 1 for j in range(n)))
                  for i, a in enumerate(axes)]
        if not isinstance(key, tuple):
            return axes[0]
        if self.sparse:
            return shaped
        return stack(broadcast_arrays(*shaped), axis=0)


class _MGrid(_Grid):
    """Dense coordinate grids by index syntax: ``mgrid[0:2, 0:3]`` has shape (2, 2, 3).

    >>> import funcgrad.numpy as fnp
    >>> fnp.mgrid[0:2, 0:3].shape
    (2, 2, 3)
    """

    def __init__(self) -> None:
        super().__init__(False)


class _OGrid(_Grid):
    """Open (broadcastable) coordinate grids by index syntax.

    >>> import funcgrad.numpy as fnp
    >>> [g.shape for g in fnp.ogrid[0:2, 0:3]]
    [(2, 1), (1, 3)]
    """

    def __init__(self) -> None:
        super().__init__(True)


mgrid = _MGrid()
ogrid = _OGrid()


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-d sequences (for cross-product indexing).

    >>> import funcgrad.numpy as fnp
    >>> [a.shape for a in fnp.ix_(fnp.array([0, 1]), fnp.array([2, 3, 4]))]
    [(2, 1), (1, 3)]
    """
    check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if get_aval(a).ndim != 1:
            raise ValueError(f"Arguments to ix_ must be 1-dimensional, got shape "
                             f"{get_aval(a).shape}")
        if get_aval(a).dtype == dtypes.bool_:
            raise TypeError("Boolean arguments to ix_ are not supported")
        out.append(reshape(a, tuple(-1 if j == i else 1 for j in range(n))))
    return tuple(out)


def indices(dimensions: Any, dtype: Any = None, sparse: bool = False) -> Any:
    """Grids of the indices of an array of shape ``dimensions``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.indices((2, 2)).tolist()
    [[[0, 0], [1, 1]], [[0, 1], [0, 1]]]
    """
    dims = tuple(int(d) for d in dimensions)
    dt = dtypes.default_int() if dtype is None else np.dtype(getattr(dtype, "dtype", dtype))
    n = len(dims)
    grids = [reshape(arange(d, dtype=dt), tuple(-1 if i == j else 1 for j in range(n)))
             for i, d in enumerate(dims)]
    if sparse:
        return tuple(grids)
    if not grids:
        return zeros((0,), dt)
    return stack(broadcast_arrays(*grids), axis=0)


def _pair(rows: Any, cols: Any) -> tuple[Any, Any]:
    it = dtypes.default_int()
    return asarray(rows.astype(it)), asarray(cols.astype(it))


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Indices of the main diagonal of an ``ndim``-dimensional ``(n, ..., n)`` array.

    >>> import funcgrad.numpy as fnp
    >>> [i.tolist() for i in fnp.diag_indices(2)]
    [[0, 1], [0, 1]]
    """
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (arange(n, dtype=dtypes.default_int()),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """``diag_indices`` for a square array ``arr``.

    >>> import funcgrad.numpy as fnp
    >>> len(fnp.diag_indices_from(fnp.ones((3, 3))))
    2
    """
    check_arraylike("diag_indices_from", arr)
    shape = get_aval(asarray(arr)).shape
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array.

    >>> import funcgrad.numpy as fnp
    >>> [i.tolist() for i in fnp.tril_indices(2)]
    [[0, 1, 1], [0, 0, 1]]
    """
    return _pair(*np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array.

    >>> import funcgrad.numpy as fnp
    >>> [i.tolist() for i in fnp.triu_indices(2)]
    [[0, 0, 1], [0, 1, 1]]
    """
    return _pair(*np.triu_indices(n, k, m))


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``tril_indices`` for the shape of 2-d ``arr``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.tril_indices_from(fnp.ones((2, 3)))[1].tolist()
    [0, 0, 1]
    """
    check_arraylike("tril_indices_from", arr)
    shape = get_aval(asarray(arr)).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """``triu_indices`` for the shape of 2-d ``arr``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.triu_indices_from(fnp.ones((2, 3)))[1].tolist()
    [0, 1, 2, 1, 2]
    """
    check_arraylike("triu_indices_from", arr)
    shape = get_aval(asarray(arr)).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(shape[0], k, shape[1])


def mask_indices(n: int, mask_func: Any, k: int = 0, *, size: int | None = None) -> Any:
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``triu``).

    >>> import funcgrad.numpy as fnp
    >>> [i.tolist() for i in fnp.mask_indices(2, fnp.triu)]
    [[0, 0, 1], [0, 1, 1]]
    """
    return nonzero(mask_func(ones((n, n)), k), size=size)


def ravel_multi_index(multi_index: Any, dims: Any, mode: str = "raise",
                      order: str = "C") -> Any:
    """Flat indices of the coordinates ``multi_index`` in an array of shape ``dims``
    (``mode``: "raise" checks concrete indices, "clip" and "wrap" fix them up).

    >>> import funcgrad.numpy as fnp
    >>> fnp.ravel_multi_index((fnp.array([1, 0]), fnp.array([2, 1])), (2, 3)).tolist()
    [5, 1]
    """
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError("order must be one of 'C' or 'F'")
    idx = list(promote_args(*multi_index))
    for i in idx:
        if get_aval(i).dtype.kind not in "iu":
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            if isinstance(i, Tracer) and i.concrete_value() is None:
                raise ValueError("The error occurred because ravel_multi_index was jit-"
                                 "compiled with mode='raise'. Use mode='wrap' or "
                                 "mode='clip' instead.")
            h = host_value(i, "ravel_multi_index")
            if h.size and (h.min() < 0 or h.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [remainder(i, d) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = dims if order == "C" else dims[::-1]
    order_idx = idx if order == "C" else idx[::-1]
    out: Any = cast(asarray(0), get_aval(idx[0]).dtype) if idx else asarray(0)
    for i, d in zip(order_idx, order_dims):
        out = add(multiply(out, d), i)
    return out


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """Coordinates in an array of ``shape`` of the flat ``indices`` (out-of-range indices
    are clipped, as in JAX).

    >>> import funcgrad.numpy as fnp
    >>> [c.tolist() for c in fnp.unravel_index(fnp.array([5, 1]), (2, 3))]
    [[1, 0], [2, 1]]
    """
    check_arraylike("unravel_index", indices)
    (idx,) = promote_args(indices)
    if get_aval(idx).dtype.kind not in "iu":
        raise TypeError("only int indices permitted")
    shape = tuple(int(s) for s in shape)
    total = int(np.prod(shape))
    idx = clip(where(less(idx, 0), add(idx, total), idx), 0, max(total - 1, 0))
    out = []
    stride = total
    for d in shape:
        stride //= d if d else 1
        out.append(remainder(floor_divide(idx, stride), d) if d else idx)
    return tuple(out)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with its main diagonal set to ``val`` (pass ``inplace=False``: JAX
    arrays are immutable).

    >>> import funcgrad.numpy as fnp
    >>> fnp.fill_diagonal(fnp.zeros((2, 2)), 1.0, inplace=False).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    if inplace:
        raise ValueError("fill_diagonal: JAX arrays are immutable; pass "
                                  "inplace=False to get the filled copy")
    a = asarray(a)
    shape = get_aval(a).shape
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(shape)
    if len(shape) == 2 and wrap and shape[0] > shape[1] + 1:
        step = shape[1] + 1
        flat_idx = np.arange(0, shape[0] * shape[1], step)
    else:
        flat_idx = np.ravel_multi_index((np.arange(n),) * len(shape), shape)
    flat = ravel(a)
    v = ravel(cast(asarray(val), get_aval(a).dtype))
    nv = get_aval(v).shape[0]
    vals = take(v, asarray(np.arange(flat_idx.size) % max(nv, 1)))
    return reshape(flat.at[asarray(flat_idx)].set(vals), shape)


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-d array with the flattened ``v`` on its ``k``-th diagonal.

    >>> import funcgrad.numpy as fnp
    >>> fnp.diagflat(fnp.array([[1, 2]])).tolist()
    [[1, 0], [0, 2]]
    """
    check_arraylike("diagflat", v)
    return diag(ravel(asarray(v)), k)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """Entries of ``choices[a]`` elementwise (``mode``: "raise", "wrap" or "clip").

    >>> import funcgrad.numpy as fnp
    >>> fnp.choose(fnp.array([0, 1, 0]), [fnp.zeros(3), fnp.ones(3)]).tolist()
    [0.0, 1.0, 0.0]
    """
    if out is not None:
        raise ValueError("The 'out' argument to choose is not supported.")
    check_arraylike("choose", a, *choices)
    a = asarray(a)
    n = len(choices)
    if mode == "raise":
        if not (isinstance(a, Tracer) and a.concrete_value() is None):
            h = host_value(a, "choose")
            if h.size and (h.min() < 0 or h.max() >= n):
                raise ValueError("invalid entry in choice array")
        else:
            raise ValueError("The error occurred because choose was jit-compiled with "
                             "mode='raise'. Use mode='wrap' or mode='clip' instead.")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrs = broadcast_arrays(a, *promote_args(*choices))
    idx, picks = arrs[0], stack(list(arrs[1:]), axis=0)
    return take_along_axis(picks, expand_dims(idx, 0), axis=0)[0]


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Any:
    """For each element, the entry of the first choice whose condition holds (else
    ``default``).

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.arange(4)
    >>> fnp.select([x < 1, x > 2], [x, -x], 9).tolist()
    [0, 9, 9, -3]
    """
    check_arraylike("select", *condlist, *choicelist, default)
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} "
                         f"vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    choices = promote_args(default, *choicelist)
    out = choices[0]
    for cond, choice in zip(reversed(condlist), reversed(choices[1:])):
        c = asarray(cond)
        if get_aval(c).dtype != dtypes.bool_:  # (JAX casts the conditions, as NumPy's truth)
            c = c.astype(dtypes.bool_)
        out = where(c, choice, out)
    return out


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> Any:
    """``funclist[i](x)`` where ``condlist[i]`` holds (a final extra function or value is the
    default); every function is evaluated on the whole array, as in JAX.

    >>> import funcgrad.numpy as fnp
    >>> x = fnp.array([-1.0, 2.0])
    >>> fnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 10]).tolist()
    [1.0, 20.0]
    """
    check_arraylike("piecewise", x)
    x = asarray(x)
    conds = [asarray(c) for c in (condlist if isinstance(condlist, (list, tuple)) else
                                  [condlist])]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        default = funclist[-1]
        funcs = list(funclist[:-1])
    elif nf == nc:
        default = 0
        funcs = list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    dt = get_aval(x).dtype

    def value(f: Any) -> Any:
        v = f(x, *args, **kw) if callable(f) else f
        return cast(asarray(v), dt) if dtypes.python_scalar(v) or not hasattr(v, "shape") \
            else cast(v, dt)

    out = value(default)
    out = add(multiply(x, 0), out) if get_aval(out).shape != get_aval(x).shape else out
    for c, f in zip(conds, funcs):
        out = where(c, value(f), out)
    return out


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """A copy of ``arr`` with the entries where ``mask`` holds replaced by ``vals`` (in
    order, repeated as needed); pass ``inplace=False``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.place(fnp.zeros(4), fnp.array([1, 0, 1, 1]), fnp.array([7.0, 8.0]),
    ...           inplace=False).tolist()
    [7.0, 0.0, 8.0, 7.0]
    """
    check_arraylike("place", arr, mask, vals)
    if inplace:
        raise ValueError("place: JAX arrays are immutable; pass inplace=False to "
                                  "get the updated copy")
    arr = asarray(arr)
    flat = ravel(arr)
    m = ravel(asarray(mask))
    v = ravel(cast(asarray(vals), get_aval(arr).dtype))
    n, nv = get_aval(m).shape[0], get_aval(v).shape[0]
    if nv == 0:
        raise ValueError("place: cannot place from an empty vals array")
    # As JAX: the k-th masked position gets vals[k % len(vals)]; positions are padded to the
    # full length with n (out of bounds, dropped), so the mask may be traced.
    pos = nonzero(m, size=n, fill_value=n)[0]
    new = take(v, asarray(np.arange(n) % nv))
    return reshape(flat.at[pos].set(new, mode="drop"), get_aval(arr).shape)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """A copy of ``a`` with flat positions ``ind`` set to ``v`` (pass ``inplace=False``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.put(fnp.zeros(3), fnp.array([2]), 5.0, inplace=False).tolist()
    [0.0, 0.0, 5.0]
    """
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    a = asarray(a)
    flat = ravel(a)
    n = get_aval(flat).shape[0]
    idx = ravel(asarray(ind))
    vals = ravel(cast(asarray(v), get_aval(a).dtype))
    ni = get_aval(idx).shape[0]
    nv = get_aval(vals).shape[0]
    if nv != ni and ni:
        vals = take(vals, asarray(np.arange(ni) % max(nv, 1)))
    if mode in (None, "fill", "drop"):
        out = flat.at[idx].set(vals, mode="drop")
    elif mode == "clip":
        out = flat.at[clip(idx, 0, n - 1)].set(vals)
    elif mode == "wrap":
        out = flat.at[remainder(idx, n)].set(vals)
    elif mode == "raise":
        raise ValueError("The 'raise' mode to put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    return reshape(out, get_aval(a).shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, *,
                   inplace: bool = True, mode: str | None = None) -> Any:
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse
    of ``take_along_axis``; pass ``inplace=False``).

    >>> import funcgrad.numpy as fnp
    >>> fnp.put_along_axis(fnp.zeros((1, 3)), fnp.array([[1]]), 4.0, axis=1,
    ...                    inplace=False).tolist()
    [[0.0, 4.0, 0.0]]
    """
    if inplace:
        raise ValueError("put_along_axis: JAX arrays are immutable; pass "
                                  "inplace=False to get the updated copy")
    arr = asarray(arr)
    if axis is None:
        return reshape(put_along_axis(ravel(arr), ravel(asarray(indices)), values, 0,
                                      inplace=False, mode=mode), get_aval(arr).shape)
    shape = get_aval(arr).shape
    ax = canonical_axis(axis, len(shape))
    idx = asarray(indices)
    ishape = get_aval(idx).shape
    if len(ishape) != len(shape):
        raise ValueError("indices and arr must have the same number of dimensions")
    ishape = tuple(s if i == ax else max(s, t) for i, (s, t) in enumerate(zip(ishape, shape)))
    grids = []
    for d in range(len(shape)):
        if d == ax:
            i = where(less(idx, 0), add(idx, shape[ax]), idx)
            grids.append(add(multiply(i, 0), i) if get_aval(i).shape == ishape else
                         broadcast_arrays(i, zeros(ishape, get_aval(i).dtype))[0])
        else:
            g = reshape(arange(shape[d]), tuple(-1 if j == d else 1 for j in
                                                range(len(shape))))
            grids.append(broadcast_arrays(g, zeros(ishape, get_aval(g).dtype))[0])
    vals = cast(asarray(values), get_aval(arr).dtype)
    vals = broadcast_arrays(vals, zeros(ishape, get_aval(vals).dtype))[0]
    return arr.at[tuple(grids)].set(vals, mode=mode)


def _check_arraylike(name: str, *xs: Any) -> None:
    """JAX's TypeError for an argument that is neither an array nor a scalar (a list)."""
    for pos, x in enumerate(xs):
        if not (is_array(x) or isinstance(x, (np.ndarray, np.generic)) or np.isscalar(x)):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                            f"position {pos}.")


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries ``obj`` (an int, slice or index array) along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.delete(fnp.arange(4), fnp.array([0, 2])).tolist()
    [1, 3]
    """
    _check_arraylike("delete", arr)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, get_aval(a).ndim)
    n = get_aval(a).shape[ax]
    try:
        # An integer, or an integer array of rank 0 (not of size 1), is a static position.
        static = operator.index(obj) if not getattr(obj, "ndim", 0) else None
    except TypeError:
        static = None
    if static is not None:
        # JAX checks a static integer as it checks an axis, with that (ValueError) message.
        if not -n <= static < n:
            raise ValueError(f"axis {static} is out of bounds for array of dimension {n}")
        pos = np.asarray(static)
    elif isinstance(obj, slice):
        pos = np.arange(n)[obj]
    else:
        _check_arraylike("delete", a, obj)
        pos = host_value(asarray(obj), "delete")
        if pos.dtype == bool:
            if pos.shape != (n,):
                raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                                 "one-dimensional with length matching specified axis.")
            pos = np.nonzero(pos)[0]
        elif pos.dtype.kind not in "iu":
            raise ValueError("np.delete(arr, obj): got "
                             f"obj.dtype={np.dtype(getattr(obj, 'dtype', pos.dtype))}; must "
                             "be integer or bool.")
        # NumPy's own check (JAX deletes through a NumPy mask), with its IndexError.
        bad = pos[(pos < -n) | (pos >= n)]
        if bad.size:
            raise IndexError(f"index {bad.ravel()[0]} is out of bounds for axis 0 with "
                             f"size {n}")
    keep = np.setdiff1d(np.arange(n), np.asarray(pos) % max(n, 1))
    return take(a, asarray(keep.astype(dtypes.default_int())), axis=ax)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the positions ``obj`` along ``axis``.

    >>> import funcgrad.numpy as fnp
    >>> fnp.insert(fnp.array([1, 2, 3]), 1, 9).tolist()
    [1, 9, 2, 3]
    """
    _check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, get_aval(a).ndim)
    n = get_aval(a).shape[ax]
    if isinstance(obj, slice):
        idx = np.arange(*obj.indices(n))
    else:
        idx = np.asarray(obj) if isinstance(obj, (int, np.integer)) else \
            host_value(asarray(obj), "insert")
        if idx.ndim > 1:
            raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or "
                             f"a scalar; got {obj}")
        if idx.dtype.kind not in "iu":
            if idx.size or is_array(obj):
                raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
            idx = idx.astype(np.int64)
    vals = array(values, ndmin=get_aval(a).ndim, dtype=get_aval(a).dtype, copy=False)
    # JAX's rules: one index (a scalar, or an array of one) inserts every value along the
    # axis at that place (a scalar's values are laid along the axis from their first axis);
    # indices past either end are clipped to it, negative ones count from the end.
    if idx.size == 1:
        if idx.ndim == 0:
            vals = moveaxis(vals, 0, ax)
        idx = np.full(get_aval(vals).shape[ax], idx.ravel()[0])
    n_insert = np.broadcast_shapes(idx.shape, (get_aval(vals).shape[ax],))[0]
    idx = np.clip(np.where(idx < 0, idx + n, idx), 0, n).astype(np.int64)
    idx = np.broadcast_to(idx, (n_insert,))
    # The inserted slices land in the order of their (stably sorted) indices, each before
    # the original entry at that index.
    values_ind = np.empty(n_insert, np.int64)
    values_ind[np.argsort(idx, kind="stable")] = np.sort(idx, kind="stable") + \
        np.arange(n_insert)
    arr_mask = np.ones(n + n_insert, bool)
    arr_mask[values_ind] = False
    order = np.empty(n + n_insert, np.int64)
    order[arr_mask] = np.arange(n)
    order[values_ind] = n + np.arange(n_insert)
    vshape = list(get_aval(a).shape)
    vshape[ax] = n_insert
    # JAX scatters the values, and a scatter into an empty slice is skipped without
    # checking that the values broadcast to it.
    fill = zeros(tuple(vshape), get_aval(vals).dtype) if 0 in vshape else \
        broadcast_to(vals, tuple(vshape))
    both = concatenate([a, fill], axis=ax)
    return take(both, asarray(order.astype(dtypes.default_int())), axis=ax)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None).

    >>> import funcgrad.numpy as fnp
    >>> fnp.append(fnp.array([1, 2]), 3).tolist()
    [1, 2, 3]
    """
    # JAX's message names the function that meets the list: ravel, or concatenate.
    if axis is None:
        check_arraylike("ravel", arr)
        check_arraylike("ravel", values)
    else:
        check_arraylike("concatenate", arr, values)
    a, v = promote_args(arr, values)
    if axis is None:
        return concatenate([ravel(a), ravel(v)])
    return concatenate([a, v], axis=axis)


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (innermost lists join along the last
    axis).

    >>> import funcgrad.numpy as fnp
    >>> fnp.block([[fnp.ones((1, 1)), fnp.zeros((1, 2))]]).tolist()
    [[1.0, 0.0, 0.0]]
    """
    if isinstance(arrays, tuple):
        raise TypeError("block: arrays is a tuple; only lists can be used to arrange "
                        "blocks, and block does not allow implicit conversion from tuple")

    def depth(x: Any) -> int:
        if isinstance(x, list):
            if not x:
                raise ValueError("block: lists cannot be empty")
            ds = {depth(e) for e in x}
            if len(ds) != 1:
                raise ValueError("block: list depths are mismatched")
            return 1 + ds.pop()
        return 0

    d = depth(arrays)
    leaves: list[Any] = []

    def collect(x: Any) -> None:
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves.append(asarray(x))

    collect(arrays)
    nd = max(d, *(get_aval(x).ndim for x in leaves))
    promoted = iter(promote_args(*leaves))

    def build(x: Any, level: int) -> Any:
        if isinstance(x, list):
            parts = [build(e, level + 1) for e in x]
            return concatenate(parts, axis=-(d - level))
        arr = next(promoted)
        k = get_aval(arr).ndim
        return reshape(arr, (1,) * (nd - k) + get_aval(arr).shape) if k < nd else arr

    return build(arrays, 0)


__all__ = [
    "append", "block", "c_", "choose", "delete", "diag_indices", "diag_indices_from",
    "diagflat", "fill_diagonal", "index_exp", "indices", "insert", "ix_", "mask_indices",
    "mgrid", "ogrid", "piecewise", "place", "put", "put_along_axis", "r_",
    "ravel_multi_index", "s_", "select", "tril_indices", "tril_indices_from", "triu_indices",
    "triu_indices_from", "unravel_index",
]
