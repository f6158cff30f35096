"""Reductions (sum, max, min, prod, argmax, argmin) and cumulative sums.

>>> import numpy as np
>>> from funcgrad.primitives.reductions import reduce_sum
>>> reduce_sum(np.ones((2, 3)), (1,))
Array([3., 3.], dtype=float64)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.config import config
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import structural as S
from funcgrad.primitives.rules import full, linear, require_kind, shifted_axes_batch


def _check_axes(x: ShapedArray, axes: tuple[int, ...]) -> None:
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"axes {axes} are not distinct axes of a rank-{x.ndim} operand")


def _reduced_shape(x: ShapedArray, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _keep_dims_back(y: Any, in_shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(len(in_shape)) if i not in axes)
    return S.broadcast_in_dim(y, in_shape, kept)


def _reduce_abstract(kinds: str, name: str) -> Any:
    def rule(x: ShapedArray, *, axes: tuple[int, ...]) -> ShapedArray:
        _check_axes(x, axes)
        require_kind(name, x, kinds, "numeric")
        if name == "reduce_sum" and x.dtype.name in ("float16", "bfloat16") and \
                config.read("jax_allow_f16_reductions") is False and \
                any(x.shape[a] != 1 for a in axes):
            raise ValueError(f"reduce_sum on operand {x.str_short()} is not allowed when "
                             "jax_allow_f16_reductions=False.")
        if name in ("reduce_max", "reduce_min") and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"{name} over an empty axis has no identity; the axis has size 0")
        return ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type)

    return rule


def reduce_sum(x: Any, axes: Sequence[int]) -> Any:
    axes = tuple(sorted(int(a) for a in axes))
    return x if not axes else reduce_sum_p.bind(x, axes=axes)


def reduce_max(x: Any, axes: Sequence[int]) -> Any:
    return reduce_max_p.bind(x, axes=tuple(sorted(int(a) for a in axes)))


def reduce_min(x: Any, axes: Sequence[int]) -> Any:
    return reduce_min_p.bind(x, axes=tuple(sorted(int(a) for a in axes)))


def reduce_prod(x: Any, axes: Sequence[int]) -> Any:
    return reduce_prod_p.bind(x, axes=tuple(sorted(int(a) for a in axes)))


def _reduce_impl(np_name: str, ufunc: Any, typed: bool) -> Any:
    """``xp.<np_name>(x, axis=axes)`` (with ``dtype=x.dtype`` when ``typed``); on NumPy the
    ufunc's ``reduce`` that it calls, without NumPy's Python wrapper (1 us, not 2)."""
    def impl(xp: Any, x: Any, axes: tuple[int, ...]) -> Any:
        if typed and x.dtype in _HALF:
            # Summed in float32 and rounded once, as XLA and PyTorch do: a running sum
            # kept in bfloat16 stops growing (4096 squares of N(0, 9) summed to 17792
            # instead of 37120).
            acc = ufunc.reduce(x, axis=axes, dtype=np.float32) if xp is np else \
                getattr(xp, np_name)(x, axis=axes, dtype=np.float32)
            return acc.astype(x.dtype)
        if xp is np:
            return ufunc.reduce(x, axis=axes, dtype=x.dtype) if typed else \
                ufunc.reduce(x, axis=axes)
        fn = getattr(xp, np_name)
        return fn(x, axis=axes, dtype=x.dtype) if typed else fn(x, axis=axes)
    return impl


# The 16-bit floats, whose sums accumulate in float32.
_HALF = frozenset({np.dtype(np.float16), np.dtype(dtypes.bfloat16)})


reduce_sum_p = Primitive(
    "reduce_sum", abstract_eval=_reduce_abstract("biufc", "reduce_sum"),
    impl=_reduce_impl("sum", np.add, True),
)
linear(reduce_sum_p, lambda ct, primals, ans, axes: [
    _keep_dims_back(ct, get_aval(primals[0]).shape, axes)])


def _complex_fold(xp: Any, x: Any, axes: tuple[int, ...], greater: bool) -> Any:
    """XLA's reduce_max/reduce_min of complex numbers on the CPU: a left fold
    ``acc = pick(acc, x)`` from the identity (-inf+0j for max) over the reduced elements in
    row-major order, and the element itself when there is one. (XLA splits reductions of more
    than 32 elements into a tree, which this does not copy: with NaNs there the result may
    differ.) Without NaNs the fold is the last extreme element, or the identity when it is
    beyond them all, computed at once."""
    kept = [i for i in range(x.ndim) if i not in axes]
    n = math.prod(x.shape[a] for a in axes)
    rows = xp.reshape(xp.transpose(x, (*kept, *axes)), (*(x.shape[i] for i in kept), n))
    if n == 1:
        return rows[..., 0]
    init = xp.full(rows.shape[:-1], -np.inf if greater else np.inf, x.dtype)
    if bool(xp.isnan(rows).any()):
        acc = init
        for k in range(n):
            acc = E.complex_pick(xp, acc, rows[..., k], greater)
        return acc
    re, im = xp.real(rows), xp.imag(rows)
    best_re = xp.max(re, axis=-1) if greater else xp.min(re, axis=-1)
    on = re == best_re[..., None]
    far = -np.inf if greater else np.inf
    masked = xp.where(on, im, far)
    best_im = xp.max(masked, axis=-1) if greater else xp.min(masked, axis=-1)
    hit = on & (im == best_im[..., None])
    last = n - 1 - xp.argmax(hit[..., ::-1], axis=-1)
    best = xp.take_along_axis(rows, last[..., None], axis=-1)[..., 0]
    return E.complex_pick(xp, init, best, greater)


def _chooser(name: str, np_name: str) -> Primitive:
    real_impl = _reduce_impl(np_name, getattr(np, f"{np_name}imum"), False)

    def impl(xp: Any, x: Any, axes: tuple[int, ...]) -> Any:
        if x.dtype.kind == "c":
            return _complex_fold(xp, x, axes, np_name == "max")
        return real_impl(xp, x, axes)

    prim = Primitive(name, abstract_eval=_reduce_abstract("biufc", name), impl=impl)

    def location_weights(x: Any, ans: Any, axes: tuple[int, ...]) -> Any:
        # Ties share the derivative equally, as in JAX.
        aval = get_aval(x)
        hit = E.eq(x, _keep_dims_back(ans, aval.shape, axes))
        ind = E.select(hit, full(aval.shape, 1, aval.dtype), full(aval.shape, 0, aval.dtype))
        counts = _keep_dims_back(reduce_sum(ind, axes), aval.shape, axes)
        return E.div(ind, counts)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axes: tuple[int, ...]) -> Any:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if t is None:
            return ans, None
        return ans, reduce_sum(E.mul(t, location_weights(x, ans, axes)), axes)

    def vjp(ct: Any, primals: Sequence[Any], ans: Any, *, axes: tuple[int, ...]) -> list[Any]:
        x = primals[0]
        shape = get_aval(x).shape
        return [E.mul(_keep_dims_back(ct, shape, axes), location_weights(x, ans, axes))]

    prim.jvp, prim.vjp = jvp, vjp
    prim.vjp_reads = "x0,y0"
    return prim


reduce_max_p = _chooser("reduce_max", "max")
reduce_min_p = _chooser("reduce_min", "min")
reduce_sum_p.batch = shifted_axes_batch(reduce_sum_p, "axes")
reduce_max_p.batch = shifted_axes_batch(reduce_max_p, "axes")
reduce_min_p.batch = shifted_axes_batch(reduce_min_p, "axes")

reduce_prod_p = Primitive(
    "reduce_prod", abstract_eval=_reduce_abstract("biufc", "reduce_prod"),
    impl=_reduce_impl("prod", np.multiply, True),
)


def _to_rows(x: Any, axes: tuple[int, ...]) -> tuple[Any, tuple[int, ...], tuple[int, ...]]:
    """``x`` as (reduced elements, kept elements), with what is needed to undo it."""
    shape = get_aval(x).shape
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    perm = axes + kept
    n = math.prod([shape[a] for a in axes])
    m = math.prod([shape[k] for k in kept])
    return S.reshape(S.transpose(x, perm), (n, m)), perm, tuple(shape[p] for p in perm)


def _from_rows(rows: Any, perm: tuple[int, ...], permuted_shape: tuple[int, ...]) -> Any:
    back = S.reshape(rows, permuted_shape)
    return S.transpose(back, tuple(int(i) for i in np.argsort(perm)))


def _halves(x: Any, pad: float = 1.0) -> tuple[Any, Any, bool]:
    """Pairs of rows (even, odd); an odd count is padded with a row of ``pad``."""
    n, m = get_aval(x).shape
    odd = n % 2 == 1
    if odd:
        x = S.concatenate([x, full((1, m), pad, get_aval(x).dtype)], 0)
        n += 1
    a = S.slice_(x, (0, 0), (n - 1, m), (2, 1))
    b = S.slice_(x, (1, 0), (n, m), (2, 1))
    return a, b, odd


def _interleave(ca: Any, cb: Any, odd: bool) -> Any:
    k, m = get_aval(ca).shape
    both = S.concatenate([S.expand_dims(ca, (1,)), S.expand_dims(cb, (1,))], 1)
    rows = S.reshape(both, (2 * k, m))
    return S.slice_(rows, (0, 0), (2 * k - 1, m)) if odd else rows


# The product's derivatives go through a tree of pairwise multiplications, so they are
# exact at zeros to every order (dividing the product by an element is not).

def _prod_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axes: tuple[int, ...]
              ) -> Any:
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if t is None:
        return ans, None
    v, _, _ = _to_rows(x, axes)
    dv, _, _ = _to_rows(t, axes)
    while get_aval(v).shape[0] > 1:
        a, b, _ = _halves(v)
        da, db, _ = _halves(dv, 0.0)
        v, dv = E.mul(a, b), E.add(E.mul(da, b), E.mul(a, db))
    if get_aval(v).shape[0] == 0:
        return ans, E.mul(ans, 0.0)
    return ans, S.reshape(dv, get_aval(ans).shape)


def _prod_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, axes: tuple[int, ...]
              ) -> list[Any]:
    x = primals[0]
    v, perm, pshape = _to_rows(x, axes)
    if get_aval(v).shape[0] == 0:
        return [E.mul(x, 0.0)]
    levels = []
    while get_aval(v).shape[0] > 1:
        a, b, odd = _halves(v)
        levels.append((a, b, odd))
        v = E.mul(a, b)
    c = S.reshape(ct, (1, get_aval(v).shape[1]))
    for a, b, odd in reversed(levels):
        c = _interleave(E.mul(c, b), E.mul(c, a), odd)
    return [_from_rows(c, perm, pshape)]


reduce_prod_p.jvp, reduce_prod_p.vjp = _prod_jvp, _prod_vjp
reduce_prod_p.vjp_reads = "x0"
reduce_prod_p.batch = shifted_axes_batch(reduce_prod_p, "axes")

# ---------------------------------------------------------- argmax / argmin


def _arg_abstract(name: str) -> Any:
    def rule(x: ShapedArray, *, axis: int, index_dtype: np.dtype[Any]) -> ShapedArray:
        if x.dtype.kind == "c":
            # JAX's arg-reductions compare with gt/lt, which have no complex order.
            op = "gt" if name == "argmax" else "lt"
            raise DTypeError(f"{op} does not accept dtype {x.dtype.name} at position 0. "
                             "Accepted dtypes at position 0 are subtypes of integer, "
                             "floating, bool.")
        return _arg_shape(x, axis=axis, index_dtype=index_dtype)

    return rule


def _arg_shape(x: ShapedArray, *, axis: int, index_dtype: np.dtype[Any]) -> ShapedArray:
    _check_axes(x, (axis,))
    if x.shape[axis] == 0:
        raise ShapeError(f"arg-reduction over axis {axis} of size 0 has no answer")
    return ShapedArray(_reduced_shape(x, (axis,)), index_dtype)


def _arg_prim(name: str, np_name: str) -> Primitive:
    prim = Primitive(
        name, abstract_eval=_arg_abstract(name),
        impl=lambda xp, x, axis, index_dtype: getattr(xp, np_name)(x, axis=axis).astype(
            index_dtype),
    )
    # Indices are piecewise constant: no tangent, no cotangent for the operand.
    prim.jvp = lambda primals, tangents, **p: (prim.bind(primals[0], **p), None)
    prim.vjp = lambda ct, primals, ans, **p: [None]
    prim.vjp_reads = ""
    prim.batch = shifted_axes_batch(prim, "axis")
    return prim


argmax_p = _arg_prim("argmax", "argmax")
argmin_p = _arg_prim("argmin", "argmin")


def argmax(x: Any, axis: int, index_dtype: Any = dtypes.int64) -> Any:
    return argmax_p.bind(x, axis=int(axis), index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x: Any, axis: int, index_dtype: Any = dtypes.int64) -> Any:
    return argmin_p.bind(x, axis=int(axis), index_dtype=dtypes.canonicalize(index_dtype))


# ------------------------------------------------------------------- cumsum


def cumsum(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """The running sum along ``axis`` (from the end with ``reverse``): ``lax.cumsum``.

    >>> import funcgrad.numpy as jnp
    >>> cumsum(jnp.arange(4), reverse=True)
    Array([6, 6, 5, 3], dtype=int32)
    """
    return cumsum_p.bind(operand, axis=int(axis), reverse=bool(reverse))


def _cumsum_abstract(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
    _check_axes(x, (axis,))
    require_kind("cumsum", x, "biufc", "numeric")
    return x


# XLA's CPU cumsum is a reduce_window, which its ReduceWindowRewriter turns into rows of 16.
_XLA_SCAN_BASE = 16


def _window_sums(x: np.ndarray, reverse: bool) -> np.ndarray:
    """The running sums along axis 0 (of length <= 16) as XLA's reduce_window adds them:
    each window ``x[:i+1]`` (``x[i:]`` when ``reverse``) in index order, every addition
    rounded to the dtype (halves too). Axis 0 is the outer one, so each addition is one
    contiguous block operation."""
    acc = x.copy()
    n = x.shape[0]
    if not reverse:
        for k in range(1, n):
            np.add(acc[k - 1:k], x[k:k + 1], out=acc[k:k + 1])
        return acc
    for k in range(1, n):  # acc[i] = x[i] + ... + x[i + k], added left to right
        np.add(acc[:n - k], x[k:], out=acc[:n - k])
    return acc


def _xla_cumsum(x: np.ndarray, reverse: bool) -> np.ndarray:
    """XLA's CPU cumsum along axis 1 of ``x`` (pre, n, post), bit for bit: rows of 16
    summed in order (see :func:`_window_sums`), the rows' totals scanned the same way, and
    each row's sums offset by the total of the rows before it (after it when ``reverse``)."""
    pre, n, post = x.shape
    b = _XLA_SCAN_BASE
    rows = -(-n // b) if n > b else 1
    width = b if n > b else n
    if rows * width != n:
        x = np.concatenate([x, np.zeros((pre, rows * width - n, post), x.dtype)], axis=1)
    # (width, pre, rows, post): the position within a row outermost, so the window sums
    # are block additions.
    cols = np.ascontiguousarray(np.moveaxis(x.reshape((pre, rows, width, post)), 2, 0))
    inner = _window_sums(cols, reverse)
    if rows > 1:
        totals = _xla_cumsum(np.ascontiguousarray(inner[0 if reverse else -1]), reverse)
        if reverse:
            np.add(totals[None, :, 1:], inner[:, :, :-1], out=inner[:, :, :-1])
        else:
            np.add(totals[None, :, :-1], inner[:, :, 1:], out=inner[:, :, 1:])
    out = np.moveaxis(inner, 0, 2).reshape((pre, rows * width, post))
    return out[:, :n] if rows * width != n else out


def _cumsum_impl(xp: Any, x: Any, *, axis: int, reverse: bool) -> Any:
    if x.dtype.kind in "biu" or xp is not np:
        # Integers are exact in any order; on a GPU, XLA's own GPU scan has another order,
        # and a library scan is the fast one (halves accumulate in float32 there).
        acc = np.dtype(np.float32) if x.dtype in _HALF else x.dtype
        if reverse:
            out = xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis, dtype=acc), axis)
        else:
            out = xp.cumsum(x, axis=axis, dtype=acc)
        return out if acc == x.dtype else out.astype(x.dtype)
    # Floats on the CPU in XLA's order (unlike reduce_sum, halves are not accumulated in
    # float32), each window's sum starting from 0 (so -0.0 becomes 0.0).
    shape, axis = x.shape, axis % x.ndim
    x3 = (x + np.zeros((), x.dtype)).reshape(
        (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])))
    return np.ascontiguousarray(_xla_cumsum(x3, reverse)).reshape(shape)


cumsum_p = Primitive("cumsum", abstract_eval=_cumsum_abstract, impl=_cumsum_impl)
linear(cumsum_p, lambda ct, primals, ans, axis, reverse: [cumsum(ct, axis, not reverse)])
cumsum_p.batch = shifted_axes_batch(cumsum_p, "axis")


__all__ = [
    "reduce_sum", "reduce_sum_p", "reduce_max", "reduce_max_p", "reduce_min", "reduce_min_p",
    "reduce_prod", "reduce_prod_p", "argmax", "argmax_p", "argmin", "argmin_p", "cumsum",
    "cumsum_p",
]


# -------------------------------------------------------------- sort / argsort


def _sort_abstract(x: ShapedArray, *, axis: int) -> ShapedArray:
    _check_axes(x, (axis,))
    require_kind("sort", x, "biufc", "numeric")
    return x


def _argsort_abstract(x: ShapedArray, *, axis: int) -> ShapedArray:
    _check_axes(x, (axis,))
    require_kind("argsort", x, "biufc", "numeric")
    return ShapedArray(x.shape, dtypes.int64)


def _argsort_impl(xp: Any, x: Any, axis: int) -> Any:
    if x.dtype.kind != "c":
        return xp.argsort(x, axis=axis, kind="stable").astype(np.int64)
    # JAX's (lax.sort's) order of complex numbers: by real part, then imaginary part, each
    # with NaN last; NumPy's complex order puts any NaN last instead. Two stable passes.
    first = xp.argsort(xp.imag(x), axis=axis, kind="stable")
    re = xp.take_along_axis(xp.real(x), first, axis=axis)
    second = xp.argsort(re, axis=axis, kind="stable")
    return xp.take_along_axis(first, second, axis=axis).astype(np.int64)


def _sort_impl(xp: Any, x: Any, axis: int) -> Any:
    if x.dtype.kind != "c":
        return xp.sort(x, axis=axis, kind="stable")
    return xp.take_along_axis(x, _argsort_impl(xp, x, axis), axis=axis)


sort_p = Primitive("sort", abstract_eval=_sort_abstract, impl=_sort_impl)
argsort_p = Primitive("argsort", abstract_eval=_argsort_abstract, impl=_argsort_impl)


def sort(x: Any, axis: int = -1) -> Any:
    return sort_p.bind(x, axis=int(axis) % max(get_aval(x).ndim, 1))


def argsort(x: Any, axis: int = -1) -> Any:
    return argsort_p.bind(x, axis=int(axis) % max(get_aval(x).ndim, 1))


def lax_sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1
             ) -> Any:
    """``jax.lax.sort``: one array sorted along ``dimension``, or a sequence of arrays of one
    shape permuted together by the lexicographic order of the first ``num_keys`` (a stable
    sort; differentiable in every operand).

    >>> import numpy as np
    >>> lax_sort((np.array([2, 1, 2, 1]), np.array([4.0, 3.0, 2.0, 1.0])), num_keys=2)
    (Array([1, 1, 2, 2], dtype=int64), Array([1., 3., 2., 4.], dtype=float64))
    """
    if not isinstance(operand, (tuple, list)):
        if num_keys != 1:
            raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
        return sort(operand, dimension)
    ops = list(operand)
    if not 1 <= num_keys <= len(ops):
        raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(ops)}")
    shapes = [get_aval(o).shape for o in ops]
    if any(sh != shapes[0] for sh in shapes):
        raise TypeError("Arguments to sort must have equal shapes, got: "
                        + " ".join(str(sh) for sh in shapes))
    axis = int(dimension) % max(len(shapes[0]), 1)
    # Stable sorts by the last key first, then each earlier one: the lexicographic order.
    perm = None
    for key in reversed(ops[:num_keys]):
        k = key if perm is None else _take_along(key, perm, axis)
        order = argsort(k, axis)
        perm = order if perm is None else _take_along(perm, order, axis)
    return tuple(_take_along(o, perm, axis) for o in ops)


def _take_along(x: Any, idx: Any, axis: int) -> Any:
    """``x`` read at in-range indices ``idx`` along ``axis`` (other axes matched)."""
    from funcgrad.primitives.indexing import gather  # noqa: PLC0415
    from funcgrad.primitives.structural import concatenate, iota  # noqa: PLC0415

    a = get_aval(idx)
    iotas = {d: iota(a.dtype, a.shape, d) for d in range(a.ndim) if d != axis}
    if iotas:
        # argsort gives int64 even in 32-bit mode, where iota gives int32: one dtype.
        idx = E.convert_element_type(idx, get_aval(next(iter(iotas.values()))).dtype)
    cols = [idx if d == axis else iotas[d] for d in range(a.ndim)]
    grid = concatenate([S.expand_dims(c, (a.ndim,)) for c in cols], a.ndim)
    return gather(x, grid, "clip")


def _sort_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int) -> Any:
    (x,), (t,) = primals, tangents
    out = sort_p.bind(x, axis=axis)
    if t is None:
        return out, None
    # Sorting permutes: the tangent follows the same permutation.
    return out, _take_along(t, argsort_p.bind(x, axis=axis), axis)


def _sort_vjp(ct: Any, primals: Sequence[Any], out: Any, *, axis: int) -> list[Any]:
    perm = argsort_p.bind(primals[0], axis=axis)
    return [_take_along(ct, argsort_p.bind(perm, axis=axis), axis)]


sort_p.jvp, sort_p.vjp = _sort_jvp, _sort_vjp
sort_p.vjp_reads = "x0"
sort_p.batch = shifted_axes_batch(sort_p, "axis")
argsort_p.jvp = lambda primals, tangents, axis: (argsort_p.bind(primals[0], axis=axis), None)
argsort_p.vjp = lambda ct, primals, ans, axis: [None]
argsort_p.vjp_reads = ""
argsort_p.batch = shifted_axes_batch(argsort_p, "axis")

__all__ += ["sort", "sort_p", "argsort", "argsort_p", "lax_sort"]

# Sum, max and min fuse with an elementwise prologue into one CUDA kernel: their combiner
# and the identity it starts from ("zero", "lowest" or "highest" of the dtype).
reduce_sum_p.describe(lax="reduce_sum", fusion="reduction", ufunc=None, torch_method=None,
                      torch_node="Sum", cuda={"combine": "{a} + {b}", "identity": "zero"},
                      py_scalar="({0} + {1})",
                      lax_fn=reduce_sum)
reduce_max_p.describe(lax="reduce_max", fusion="reduction", ufunc=None, torch_method=None,
                      torch_node="Amax",
                      cuda={"combine": "fg_max({a}, {b})", "identity": "lowest"},
                      py_scalar="np.maximum({0}, {1})",
                      lax_fn=reduce_max)
reduce_min_p.describe(lax="reduce_min", fusion="reduction", ufunc=None, torch_method=None,
                      torch_node="Amin",
                      cuda={"combine": "fg_min({a}, {b})", "identity": "highest"},
                      py_scalar="np.minimum({0}, {1})",
                      lax_fn=reduce_min)
for _p, _node, _fn in ((reduce_prod_p, "Prod", reduce_prod), (argmax_p, "Argmax", argmax),
                       (argmin_p, "Argmin", argmin), (cumsum_p, "Cumsum", cumsum),
                       (sort_p, "Sort", lax_sort), (argsort_p, "Sort", argsort)):
    _p.describe(lax=_p.name, fusion=None, cuda=None, ufunc=None, torch_method=None,
                torch_node=_node, lax_fn=_fn)
