"""Indexing primitives: gather, the scatter family, dynamic_slice, dynamic_update_slice.

``gather(operand, indices)`` with integer ``indices`` of shape ``(*B, k)`` picks
``operand[tuple(indices[b])]`` for every batch position ``b``: the result has
shape ``(*B, *operand.shape[k:])``. Its ``mode`` says what an index outside the
operand does: ``"clip"`` clamps it into range, ``"fill"`` gives ``fill_value``
(NaN for inexact dtypes, the most negative integer, ``True``) there.

The scatters (``scatter`` sets, ``scatter_add``, ``scatter_mul``, ``scatter_min``,
``scatter_max``) write ``updates`` of shape ``(*B, *operand.shape[k:])`` at those
index tuples; repeated indices combine (``scatter`` keeps the last update). Their
``mode`` is ``"clip"`` (clamp) or ``"drop"`` (updates out of range are skipped, JAX's
default). Negative indices are not wrapped here: ``funcgrad.numpy`` does that.

>>> import numpy as np
>>> from funcgrad.primitives.indexing import gather, scatter_add
>>> gather(np.arange(5.0), np.array([[3], [1]]))
Array([3., 1.], dtype=float64)
>>> scatter_add(np.zeros(3), np.array([[0], [0], [7]]), np.ones(3))
Array([2., 0., 0.], dtype=float64)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.array import ArrayImpl
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import DTypeError, NonDifferentiableError, ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives.rules import (
    all_batched,
    batch_size,
    instantiate,
    linear,
    move_to_front,
    place_like,
    with_batch,
    zeros_like,
)

GATHER_MODES = ("clip", "fill")
SCATTER_MODES = ("clip", "drop")


def _check_indices(name: str, operand: ShapedArray, indices: ShapedArray) -> int:
    if indices.dtype.kind not in "iu":
        raise DTypeError(f"{name} indices must be integers, got {indices.dtype}")
    if indices.ndim < 1:
        raise ShapeError(f"{name} indices need a last axis of index tuples, got a scalar")
    k = indices.shape[-1]
    if k > operand.ndim:
        raise ShapeError(
            f"{name} index tuples of length {k} are longer than the operand rank {operand.ndim}"
        )
    return k


def _check_mode(name: str, mode: str, modes: tuple[str, ...]) -> None:
    if mode not in modes:
        raise ValueError(f"{name} mode must be one of {modes}, got {mode!r}")


def _columns(xp: Any, operand: Any, indices: Any, clip: bool) -> tuple[Any, ...]:
    k = indices.shape[-1]
    cols = tuple(indices[..., i] for i in range(k))
    if clip:
        if xp is np:
            # Two ufunc calls: np.clip's Python wrapper costs 4 us on a small index.
            cols = tuple(np.minimum(np.maximum(c, 0), max(operand.shape[i] - 1, 0))
                         for i, c in enumerate(cols))
        else:
            cols = tuple(xp.clip(c, 0, max(operand.shape[i] - 1, 0))
                         for i, c in enumerate(cols))
    return cols


def _in_bounds(xp: Any, operand: Any, indices: Any) -> Any:
    k = indices.shape[-1]
    ok = xp.ones(indices.shape[:-1], dtype=bool)
    for i in range(k):
        c = indices[..., i]
        ok &= (c >= 0) & (c < operand.shape[i])
    return ok


def default_fill_value(dtype: np.dtype[Any]) -> Any:
    """What ``mode="fill"`` reads outside the operand: JAX's defaults."""
    if dtypes.is_inexact(dtype):
        return float("nan")
    if dtype.kind == "b":
        return True
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return int(np.iinfo(dtype).min)


# ------------------------------------------------------------------- gather


def gather(operand: Any, indices: Any, mode: str = "clip", fill_value: Any = None) -> Any:
    """``operand`` at each index tuple of ``indices`` (see the module docstring)."""
    return gather_p.bind(operand, indices_for(indices, operand), mode=mode,
                         fill_value=fill_value)


def indices_for(indices: Any, operand: Any) -> Any:
    """Host index arrays (NumPy, or the indexing code's own) go to the operand's device, as
    JAX commits them to it: ``x_gpu[np.array([2, 0])]`` gathers on the GPU. (Any host
    constant of the indexing rules is placed so, next to a value on the device.)"""
    buf = indices._value if type(indices) is ArrayImpl else indices
    if type(buf) is np.ndarray:
        placed = place_like(buf, operand)
        if placed is not buf:
            return placed
    return indices


def _gather_abstract(operand: ShapedArray, indices: ShapedArray, *, mode: str,
                     fill_value: Any) -> ShapedArray:
    _check_mode("gather", mode, GATHER_MODES)
    k = _check_indices("gather", operand, indices)
    if mode == "clip" and any(operand.shape[i] == 0 for i in range(k)) and indices.size:
        raise ShapeError(f"gather from an empty axis of shape {operand.shape}")
    return ShapedArray(indices.shape[:-1] + operand.shape[k:], operand.dtype, operand.weak_type)


def _gather_impl(xp: Any, op: Any, idx: Any, *, mode: str, fill_value: Any) -> Any:
    if idx.shape[-1] == 0:
        # Empty index tuples pick the whole operand for every batch position.
        return xp.array(xp.broadcast_to(op, idx.shape[:-1] + op.shape))
    if xp is np and idx.shape[-1] == 1 and op.shape[0]:
        # One index column: NumPy's take clips in C (0.4 us; fancy indexing after a clip
        # is 3 us, the fill mode's masks more).
        c = idx[..., 0]
        out = op.take(c, axis=0, mode="clip")
        if mode == "clip":
            return out
        ok = (c >= 0) & (c < op.shape[0])
        fill = default_fill_value(op.dtype) if fill_value is None else fill_value
        return np.where(ok.reshape(ok.shape + (1,) * (out.ndim - ok.ndim)), out,
                        np.asarray(fill, dtype=op.dtype))
    if mode == "clip":
        return op[_columns(xp, op, idx, clip=True)]
    ok = _in_bounds(xp, op, idx)
    safe = xp.where(ok[..., None], idx, 0)
    if any(n == 0 for n in op.shape[:idx.shape[-1]]):
        out = xp.zeros(idx.shape[:-1] + op.shape[idx.shape[-1]:], op.dtype)
    else:
        out = op[_columns(xp, op, safe, clip=False)]
    fill = default_fill_value(op.dtype) if fill_value is None else fill_value
    mask = ok.reshape(ok.shape + (1,) * (out.ndim - ok.ndim))
    # The fill as a scalar of op's dtype: a 0-d array would be a host-to-device copy.
    return xp.where(mask, out, op.dtype.type(fill))


def _gather_transpose(ct: Any, primals: Sequence[Any], ans: Any, *, mode: str,
                      fill_value: Any) -> list[Any]:
    # Filled entries are constants: their cotangent is dropped with the index.
    smode = "clip" if mode == "clip" else "drop"
    return [scatter_add(zeros_like(primals[0]), primals[1], ct, mode=smode), None]


def _gather_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    ans = gather_p.bind(*primals, **params)
    if tangents[0] is None:
        return ans, None
    return ans, gather(tangents[0], primals[1], params["mode"], 0)


gather_p = Primitive("gather", abstract_eval=_gather_abstract, impl=_gather_impl)
gather_p.jvp = _gather_jvp
gather_p.vjp = _gather_transpose
gather_p.vjp_reads = "x1"

# ------------------------------------------------------------------- scatters


def _scatter_abstract(name: str) -> Any:
    def rule(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *, mode: str,
             **_: Any) -> ShapedArray:
        _check_mode(name, mode, SCATTER_MODES)
        k = _check_indices(name, operand, indices)
        want = indices.shape[:-1] + operand.shape[k:]
        if updates.shape != want:
            raise ShapeError(
                f"{name} updates of shape {updates.shape} do not fit: indices {indices.shape} "
                f"into operand {operand.shape} need updates of shape {want}"
            )
        if updates.dtype != operand.dtype:
            raise DTypeError(f"{name} updates dtype {updates.dtype} differs from operand "
                             f"dtype {operand.dtype}")
        return operand

    return rule


def _targets(xp: Any, op: Any, idx: Any, upd: Any, mode: str) -> tuple[Any, Any]:
    """The index columns and updates that land (out-of-range ones dropped or clamped)."""
    if mode == "clip":
        return _columns(xp, op, idx, clip=True), upd
    ok = _in_bounds(xp, op, idx)
    return _columns(xp, op, idx[ok], clip=False), upd[ok]


def _ufunc_at(ufunc: str) -> Callable[..., Any]:
    def impl(xp: Any, op: Any, idx: Any, upd: Any, *, mode: str, **_: Any) -> Any:
        out = xp.array(op, copy=True)
        if idx.shape[-1] == 0:
            # Empty index tuples address the whole operand for every batch position.
            for u in upd.reshape((-1, *op.shape)):
                getattr(xp, ufunc).at(out, (), u) if xp is np else _cupy_at(
                    xp, ufunc, out, (), u)
            return out
        where, vals = _targets(xp, op, idx, upd, mode)
        if xp is np and _grouped_at(getattr(np, ufunc), out, where, vals):
            pass
        elif xp is np:
            getattr(np, ufunc).at(out, where, vals)
        else:
            _cupy_at(xp, ufunc, out, where, vals)
        return out

    return impl


def _grouped_at(ufunc: Any, out: Any, where: tuple[Any, ...], vals: Any) -> bool:
    """``ufunc.at(out, where, vals)`` for index columns that address whole slices of at
    least 16 elements of ``out``: the updates sorted by target, each run of repeats
    combined by ``ufunc.reduceat``, then applied in one fancy-indexed pass (ufunc.at pays
    per addressed element: 0.6 ms for 256 rows of 256, 6x this). Repeated float updates
    add in another association than ufunc.at's (rounding: XLA leaves that order
    unspecified too). False where it does not apply.
    """
    k = len(where)
    if not k or math.prod(out.shape[k:]) < 16 or where[0].size < 2:
        return False
    flat = (np.ravel_multi_index(where, out.shape[:k]) if k > 1 else where[0]).reshape(-1)
    rows = vals.reshape((flat.size, *out.shape[k:]))
    order = np.argsort(flat, kind="stable")
    ordered = flat[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    targets = np.unravel_index(ordered[starts], out.shape[:k]) if k > 1 else (ordered[starts],)
    combined = rows[order]
    if starts.size != flat.size:  # repeats: each run combined first
        combined = ufunc.reduceat(combined, starts, axis=0)
    out[targets] = ufunc(out[targets], combined)
    return True


def _cupy_at(xp: Any, ufunc: str, out: Any, where: Any, vals: Any) -> None:
    import cupyx  # noqa: PLC0415 - only with CuPy arrays

    fn = {"add": "scatter_add", "maximum": "scatter_max", "minimum": "scatter_min"}.get(ufunc)
    if fn is not None:
        getattr(cupyx, fn)(out, where, vals)
        return
    getattr(xp, ufunc).at(out, where, vals)


def _scatter_impl(xp: Any, op: Any, idx: Any, upd: Any, *, mode: str, **_: Any) -> Any:
    out = xp.array(op, copy=True)
    if idx.shape[-1] == 0:
        n = math.prod(idx.shape[:-1])
        return out if n == 0 else xp.array(upd.reshape((n, *op.shape))[-1], copy=True)
    where, vals = _targets(xp, op, idx, upd, mode)
    if xp is not np and vals.shape[0] > 1:
        # CuPy does not say which of repeated indices wins: keep the last, as NumPy does.
        # (the targets may be an n-d grid of them, as vmap makes: one flat list)
        lead = xp.broadcast_shapes(*(c.shape for c in where))
        where = tuple(xp.broadcast_to(c, lead).reshape(-1) for c in where)
        vals = xp.broadcast_to(vals, (*lead, *vals.shape[len(lead):])).reshape(
            (-1, *vals.shape[len(lead):]))
        flat = xp.ravel_multi_index(where, op.shape[:len(where)])
        last = xp.full(math.prod(op.shape[:len(where)]), -1, dtype=np.int64)
        import cupyx  # noqa: PLC0415

        cupyx.scatter_max(last, flat, xp.arange(flat.shape[0]))
        keep = last[flat] == xp.arange(flat.shape[0])
        where, vals = tuple(c[keep] for c in where), vals[keep]
    out[where] = vals
    return out


def _scatter_prim(name: str, impl: Callable[..., Any]) -> Primitive:
    return Primitive(name, abstract_eval=_scatter_abstract(name), impl=impl)


scatter_add_p = _scatter_prim("scatter_add", _ufunc_at("add"))
scatter_p = _scatter_prim("scatter", _scatter_impl)
scatter_mul_p = _scatter_prim("scatter_mul", _ufunc_at("multiply"))
scatter_min_p = _scatter_prim("scatter_min", _ufunc_at("minimum"))
scatter_max_p = _scatter_prim("scatter_max", _ufunc_at("maximum"))


def scatter_add(operand: Any, indices: Any, updates: Any, mode: str = "drop") -> Any:
    """``operand`` with ``updates`` added at ``indices`` (repeated indices accumulate)."""
    return scatter_add_p.bind(operand, indices_for(indices, operand), updates, mode=mode)


def scatter(operand: Any, indices: Any, updates: Any, mode: str = "drop") -> Any:
    """``operand`` with ``updates`` written at ``indices`` (the last repeated one wins)."""
    return scatter_p.bind(operand, indices_for(indices, operand), updates, mode=mode)


def scatter_mul(operand: Any, indices: Any, updates: Any, mode: str = "drop",
                unique_indices: bool = False) -> Any:
    """``operand`` multiplied by ``updates`` at ``indices`` (once per occurrence)."""
    return scatter_mul_p.bind(operand, indices_for(indices, operand), updates, mode=mode,
                              unique_indices=bool(unique_indices))


def scatter_min(operand: Any, indices: Any, updates: Any, mode: str = "drop") -> Any:
    """``operand`` with ``min(operand, updates)`` at ``indices``."""
    return scatter_min_p.bind(operand, indices_for(indices, operand), updates, mode=mode)


def scatter_max(operand: Any, indices: Any, updates: Any, mode: str = "drop") -> Any:
    """``operand`` with ``max(operand, updates)`` at ``indices``."""
    return scatter_max_p.bind(operand, indices_for(indices, operand), updates, mode=mode)


def full_like_index(x: Any, value: int) -> Any:
    """An integer array shaped like ``x`` (its dtype too) holding ``value``."""
    from funcgrad.primitives.rules import full  # noqa: PLC0415

    a = get_aval(x)
    return full(a.shape, value, a.dtype)


def _read_mode(mode: str) -> str:
    """The gather that reads back what a scatter of ``mode`` addressed."""
    return "clip" if mode == "clip" else "fill"


def _regather(x: Any, idx: Any, mode: str) -> Any:
    return gather(x, idx, _read_mode(mode), 0)


def _linear_scatter_jvp(scatter_fn: Callable[..., Any]) -> Callable[..., Any]:
    """The jvp of a scatter that is linear in (operand, updates) together: the same scatter
    of the tangents."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, mode: str) -> Any:
        op, idx, upd = primals
        ans = scatter_fn(op, idx, upd, mode)
        t_op, _, t_upd = tangents
        if t_op is None and t_upd is None:
            return ans, None
        return ans, scatter_fn(instantiate(t_op, get_aval(op)), idx,
                               instantiate(t_upd, get_aval(upd)), mode)

    return jvp


# scatter_add is linear in (operand, updates) together.
_scatter_add_jvp = _linear_scatter_jvp(scatter_add)


def _scatter_add_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, mode: str) -> list[Any]:
    return [ct, None, _regather(ct, primals[1], mode)]


scatter_add_p.jvp, scatter_add_p.vjp = _scatter_add_jvp, _scatter_add_vjp
scatter_add_p.vjp_reads = "x1"


# scatter (set) is linear in (operand, updates) too; only the winning update of a
# repeated index reaches the output, so only it gets a cotangent.
_scatter_jvp = _linear_scatter_jvp(scatter)


def _winners(op_aval: ShapedArray, idx: Any, mode: str) -> Any:
    """True for each index tuple whose update is the one that lands (the last repeat)."""
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives.rules import full  # noqa: PLC0415

    ia = get_aval(idx)
    # The rule's own constants go where the indices are (a GPU's, eagerly).
    ids = indices_for(_flat_ids(ia.shape[:-1]), idx)
    board = indices_for(full(op_aval.shape[:ia.shape[-1]], -1, get_aval(ids).dtype), idx)
    landed = scatter(board, idx, ids, mode)
    return E.eq(gather(landed, idx, _read_mode(mode), -1), ids)


def _flat_ids(shape: tuple[int, ...]) -> Any:
    from funcgrad.primitives.structural import iota, reshape  # noqa: PLC0415

    n = math.prod(shape)
    return reshape(iota(np.dtype(np.int64), (n,), 0), shape)


def _mask_rows(x: Any, rows: Any) -> Any:
    """``x`` with the update rows where ``rows`` is False set to zero."""
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives.structural import broadcast_in_dim  # noqa: PLC0415

    xa, ra = get_aval(x), get_aval(rows)
    mask = broadcast_in_dim(rows, xa.shape, tuple(range(ra.ndim)))
    return E.select(mask, x, zeros_like(x))


def _scatter_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, mode: str) -> list[Any]:
    op, idx, upd = primals
    ct_op = scatter(ct, idx, zeros_like(upd), mode)
    ct_upd = _mask_rows(_regather(ct, idx, mode), _winners(get_aval(op), idx, mode))
    return [ct_op, None, ct_upd]


scatter_p.jvp, scatter_p.vjp = _scatter_jvp, _scatter_vjp
scatter_p.vjp_reads = "x1"


# scatter_mul: out[p] = operand[p] * prod(updates at p).
def _scatter_mul_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, mode: str,
                     unique_indices: bool) -> Any:
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415

    op, idx, upd = primals
    ans = scatter_mul(op, idx, upd, mode, unique_indices)
    t_op, _, t_upd = tangents
    out = None
    if t_op is not None:
        out = scatter_mul(t_op, idx, upd, mode, unique_indices)
    if t_upd is not None:
        _need_unique(unique_indices)
        part = scatter_add(zeros_like(op), idx, E.mul(_regather(op, idx, mode), t_upd), mode)
        out = part if out is None else E.add(out, part)
    return ans, out


def _scatter_mul_vjp(ct: Any, primals: Sequence[Any], ans: Any, *, mode: str,
                     unique_indices: bool) -> list[Any]:
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives.rules import wanted  # noqa: PLC0415

    op, idx, upd = primals
    ct_op = scatter_mul(ct, idx, upd, mode, unique_indices)
    ct_upd = None
    if dtypes.is_inexact(get_aval(upd).dtype) and wanted(2):
        _need_unique(unique_indices)
        ct_upd = _regather(E.mul(ct, op), idx, mode)
    return [ct_op, None, ct_upd]


def _need_unique(unique_indices: bool) -> None:
    if not unique_indices:
        raise NonDifferentiableError(
            "the derivative of a scatter-multiply (x.at[idx].multiply(v)) with respect to "
            "the multipliers v is only defined here for unique indices, as in JAX: pass "
            "unique_indices=True when idx has no repeats, or differentiate with respect to x "
            "only (stop_gradient(v))"
        )


scatter_mul_p.jvp, scatter_mul_p.vjp = _scatter_mul_jvp, _scatter_mul_vjp
scatter_mul_p.vjp_reads = "x"


# scatter_min/max: the derivative goes to whichever of the operand and the updates
# reached the extreme, split evenly on ties (JAX's rule).
def _extremal_coefficients(op: Any, idx: Any, upd: Any, ans: Any, mode: str
                           ) -> tuple[Any, Any]:
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives.rules import full  # noqa: PLC0415

    oa, ua = get_aval(op), get_aval(upd)
    dt = oa.dtype
    upd_won = E.eq(upd, _regather(ans, idx, mode))
    op_won = E.eq(op, ans)
    one_u, zero_u = full(ua.shape, 1, dt), full(ua.shape, 0, dt)
    n_upd = scatter_add(full(oa.shape, 0, dt), idx, E.select(upd_won, one_u, zero_u), mode)
    one_o, zero_o = full(oa.shape, 1, dt), full(oa.shape, 0, dt)
    n_win = E.add(n_upd, E.select(op_won, one_o, zero_o))
    op_coef = E.select(op_won, E.div(one_o, E.max_(n_win, one_o)), zero_o)
    upd_share = _regather(E.div(one_o, E.max_(n_win, one_o)), idx, mode)
    upd_coef = E.select(upd_won, upd_share, zero_u)
    return op_coef, upd_coef


def _extremal_rules(prim: Primitive, bind: Callable[..., Any]) -> None:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, mode: str) -> Any:
        from funcgrad.primitives import elementwise as E  # noqa: PLC0415

        op, idx, upd = primals
        ans = bind(op, idx, upd, mode)
        t_op, _, t_upd = tangents
        if t_op is None and t_upd is None:
            return ans, None
        op_coef, upd_coef = _extremal_coefficients(op, idx, upd, ans, mode)
        out = None
        if t_op is not None:
            out = E.mul(t_op, op_coef)
        if t_upd is not None:
            part = scatter_add(zeros_like(op), idx, E.mul(t_upd, upd_coef), mode)
            out = part if out is None else E.add(out, part)
        return ans, out

    def vjp(ct: Any, primals: Sequence[Any], ans: Any, *, mode: str) -> list[Any]:
        from funcgrad.primitives import elementwise as E  # noqa: PLC0415

        op, idx, upd = primals
        op_coef, upd_coef = _extremal_coefficients(op, idx, upd, ans, mode)
        return [E.mul(ct, op_coef), None, E.mul(_regather(ct, idx, mode), upd_coef)]

    prim.jvp, prim.vjp = jvp, vjp
    prim.vjp_reads = "x,y"


_extremal_rules(scatter_min_p, scatter_min)
_extremal_rules(scatter_max_p, scatter_max)

# ------------------------------------------------------------ dynamic slices


def _clamped_starts(operand_shape: Sequence[int], sizes: Sequence[int], starts: Sequence[Any]
                    ) -> tuple[int, ...]:
    return tuple(min(max(int(s), 0), n - k) for s, n, k in zip(starts, operand_shape, sizes))


def _check_starts(name: str, operand: ShapedArray, starts: Sequence[ShapedArray]) -> None:
    if len(starts) != operand.ndim:
        raise ShapeError(f"{name} needs {operand.ndim} start indices, got {len(starts)}")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise DTypeError(f"{name} start indices must be integer scalars, got {s.str_short()}")


def _wrap_negative(starts: Sequence[Any], shape: Sequence[int]) -> list[Any]:
    """JAX's ``allow_negative_indices``: a negative start counts from the end (once)."""
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415

    out: list[Any] = []
    for s, n in zip(starts, shape):
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            out.append(s + n if s < 0 else s)
            continue
        a = get_aval(s)
        if a.dtype.kind == "i" and a.shape == ():
            s = E.select(E.lt(s, np.zeros((), a.dtype)), E.add(s, np.asarray(n, a.dtype)), s)
        out.append(s)
    return out


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool = True) -> Any:
    """``operand[s0:s0+k0, ...]`` with traced starts (a negative one counts from the end,
    then clamped to stay in bounds, as JAX's).

    >>> import numpy as np
    >>> dynamic_slice(np.arange(4.0, dtype=np.float32), [-1], [1])
    Array([3.], dtype=float32)
    """
    shape = get_aval(operand).shape
    if len(start_indices) != len(shape):
        raise ShapeError("Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    err = _slice_size_error(shape, slice_sizes)
    if err is not None:
        raise err
    if allow_negative_indices:
        start_indices = _wrap_negative(start_indices, shape)
    return dynamic_slice_p.bind(operand, *start_indices,
                                slice_sizes=tuple(int(k) for k in slice_sizes))


def _slice_size_error(shape: tuple[int, ...], slice_sizes: Sequence[int]) -> ShapeError | None:
    """JAX's error for slice sizes below zero or above the operand's (None when they fit
    or have another length)."""
    sizes = tuple(slice_sizes)
    if len(sizes) == len(shape) and any(k < 0 for k in sizes):
        return ShapeError("slice slice_sizes must be greater than or equal to zero, got "
                          f"slice_sizes of {sizes}.")
    if len(sizes) == len(shape) and any(k > n for k, n in zip(sizes, shape)):
        return ShapeError("slice slice_sizes must be less than or equal to operand shape, got "
                          f"slice_sizes {sizes} for operand shape {tuple(shape)}.")
    return None


def _ds_abstract(operand: ShapedArray, *starts: ShapedArray, slice_sizes: tuple[int, ...]
                 ) -> ShapedArray:
    _check_starts("dynamic_slice", operand, starts)
    # Bound directly, the primitive's error names it and its operands (core.abstract_eval);
    # lax.dynamic_slice raises JAX's text as it is before binding.
    err = _slice_size_error(operand.shape, slice_sizes)
    if err is not None:
        raise err
    if len(slice_sizes) != operand.ndim:
        raise ShapeError(f"slice_sizes {slice_sizes} do not fit operand shape {operand.shape}")
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _ds_impl(xp: Any, operand: Any, *starts: Any, slice_sizes: tuple[int, ...]) -> Any:
    st = _clamped_starts(operand.shape, slice_sizes, starts)
    return operand[tuple(slice(s, s + k) for s, k in zip(st, slice_sizes))]


dynamic_slice_p = Primitive("dynamic_slice", abstract_eval=_ds_abstract, impl=_ds_impl)
linear(dynamic_slice_p, lambda ct, primals, ans, slice_sizes: [
    dynamic_update_slice(zeros_like(primals[0]), ct, primals[1:], allow_negative_indices=False),
    *([None] * (len(primals) - 1))])


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool = True) -> Any:
    """``operand`` with ``update`` written at ``start_indices`` (a negative one counts from
    the end, then clamped to stay in bounds, as JAX's).

    >>> import numpy as np
    >>> dynamic_update_slice(np.zeros(3, np.float32), np.ones(1, np.float32), [-1])
    Array([0., 0., 1.], dtype=float32)
    """
    if allow_negative_indices:
        start_indices = _wrap_negative(start_indices, get_aval(operand).shape)
    return dynamic_update_slice_p.bind(operand, update, *start_indices)


def _dus_abstract(operand: ShapedArray, update: ShapedArray, *starts: ShapedArray
                  ) -> ShapedArray:
    # JAX's checks, texts and order (shapes, then dtypes).
    if update.ndim != operand.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {operand.shape}.")
    _check_starts("dynamic_update_slice", operand, starts)
    if any(u > n for u, n in zip(update.shape, operand.shape)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {operand.shape}.")
    if update.dtype != operand.dtype:
        raise TypeError("lax.dynamic_update_slice requires arguments to have the same dtypes, "
                        f"got {operand.dtype}, {update.dtype}.")
    return operand


def _dus_impl(xp: Any, operand: Any, update: Any, *starts: Any) -> Any:
    st = _clamped_starts(operand.shape, update.shape, starts)
    out = xp.array(operand, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(st, update.shape))] = update
    return out


dynamic_update_slice_p = Primitive("dynamic_update_slice", abstract_eval=_dus_abstract,
                                   impl=_dus_impl)


def _dus_transpose(ct: Any, primals: Sequence[Any], ans: Any) -> list[Any]:
    update = primals[1]
    starts = primals[2:]
    ct_operand = dynamic_update_slice(ct, zeros_like(update), starts,
                                      allow_negative_indices=False)
    ct_update = dynamic_slice(ct, starts, get_aval(update).shape, allow_negative_indices=False)
    return [ct_operand, ct_update, *([None] * len(starts))]


linear(dynamic_update_slice_p, _dus_transpose, linear_args=(0, 1))

# ------------------------------------------------------------------ batching


def _with_batch_index(idx: Any) -> Any:
    """Prefix each index tuple of a (B, ..., k) index array with its batch position."""
    from funcgrad.primitives.elementwise import convert_element_type  # noqa: PLC0415
    from funcgrad.primitives.structural import concatenate, iota  # noqa: PLC0415

    aval = get_aval(idx)
    b = iota(aval.dtype, (*aval.shape[:-1], 1), 0)
    if get_aval(b).dtype != aval.dtype:
        # iota follows the x64 setting; an int64 NumPy index array does not.
        idx = convert_element_type(idx, get_aval(b).dtype)
    return concatenate([b, idx], aval.ndim - 1)


def _gather_batch(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
    from funcgrad.primitives.structural import transpose  # noqa: PLC0415

    op, idx = args
    od, idd = dims
    if idd is None:
        op = move_to_front(op, od)
        k = get_aval(idx).shape[-1]
        perm = (*range(1, k + 1), 0, *range(k + 1, get_aval(op).ndim))
        return gather_p.bind(transpose(op, perm), idx, **params), get_aval(idx).ndim - 1
    if od is None:
        return gather_p.bind(op, move_to_front(idx, idd), **params), 0
    op, idx = move_to_front(op, od), move_to_front(idx, idd)
    return gather_p.bind(op, _with_batch_index(idx), **params), 0


def _scatter_batch(prim: Primitive) -> Any:
    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        op, idx, upd = all_batched(args, dims)
        return prim.bind(op, _with_batch_index(idx), upd, **params), 0

    return rule


gather_p.batch = _gather_batch
for _p in (scatter_add_p, scatter_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    _p.batch = _scatter_batch(_p)


def _window_indices(starts: Sequence[Any], operand_shape: Sequence[int],
                    sizes: Sequence[int]) -> Any:
    """(B, *sizes, 1 + rank) indices of per-member windows starting at (B,) ``starts``."""
    from funcgrad.primitives import elementwise as E  # noqa: PLC0415
    from funcgrad.primitives.structural import broadcast_in_dim, concatenate, iota  # noqa: PLC0415

    size = get_aval(starts[0]).shape[0]
    grid = (size, *sizes)
    cols = [iota(np.int64, (*grid, 1), 0)]
    for d, (s, n, k) in enumerate(zip(starts, operand_shape, sizes)):
        s = E.convert_element_type(s, np.int64)
        s = E.min_(E.max_(s, 0), n - k)
        pos = E.add(broadcast_in_dim(s, (*grid, 1), (0,)), iota(np.int64, (*grid, 1), d + 1))
        cols.append(pos)
    return concatenate(cols, len(grid))


def _ds_batch(args: Sequence[Any], dims: Sequence[int | None], *,
              slice_sizes: tuple[int, ...]) -> Any:
    size = batch_size(args, dims)
    op = with_batch(args[0], dims[0], size)
    starts = args[1:]
    if all(d is None for d in dims[1:]):
        zero = np.zeros((), get_aval(starts[0]).dtype if starts else np.int64)
        return dynamic_slice(op, (zero, *starts), (size, *slice_sizes),
                             allow_negative_indices=False), 0
    starts_b = [with_batch(s, d, size) for s, d in zip(starts, dims[1:])]
    idx = _window_indices(starts_b, get_aval(op).shape[1:], slice_sizes)
    return gather(op, idx, "clip"), 0


def _dus_batch(args: Sequence[Any], dims: Sequence[int | None]) -> Any:
    size = batch_size(args, dims)
    op = with_batch(args[0], dims[0], size)
    upd = with_batch(args[1], dims[1], size)
    starts = args[2:]
    if all(d is None for d in dims[2:]):
        zero = np.zeros((), get_aval(starts[0]).dtype if starts else np.int64)
        return dynamic_update_slice(op, upd, (zero, *starts), allow_negative_indices=False), 0
    starts_b = [with_batch(s, d, size) for s, d in zip(starts, dims[2:])]
    idx = _window_indices(starts_b, get_aval(op).shape[1:], get_aval(upd).shape[1:])
    return scatter(op, idx, upd, "clip"), 0


dynamic_slice_p.batch = _ds_batch
dynamic_update_slice_p.batch = _dus_batch


def _short_mode(mode: Any, default: str) -> str:
    """funcgrad's short-form mode for a JAX mode (a string or a GatherScatterMode)."""
    name = getattr(mode, "name", mode)
    if name is None:
        return default
    return {"CLIP": "clip", "PROMISE_IN_BOUNDS": "clip" if default == "clip" else "drop",
            "FILL_OR_DROP": "fill" if default == "clip" else "drop"}.get(name, name)


def lax_gather(operand: Any, start_indices: Any, dimension_numbers: Any = None,
               slice_sizes: Any = None, *, unique_indices: bool = False,
               indices_are_sorted: bool = False, mode: Any = None,
               fill_value: Any = None) -> Any:
    """``jax.lax.gather`` (XLA's Gather, with a ``GatherDimensionNumbers``), or with no
    dimension numbers funcgrad's short form: ``operand`` at each index tuple of
    ``start_indices`` (its third and fourth positional arguments are then ``mode`` and
    ``fill_value``).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.gather(np.arange(5, dtype=np.float32), np.array([[3], [1]]))
    Array([3., 1.], dtype=float32)
    """
    if dimension_numbers is None or isinstance(dimension_numbers, str):
        if isinstance(dimension_numbers, str):
            mode, fill_value = dimension_numbers, slice_sizes if fill_value is None \
                else fill_value
        return gather(operand, start_indices, _short_mode(mode, "clip"), fill_value)
    from funcgrad.primitives.general_gather_scatter import general_gather  # noqa: PLC0415

    return general_gather(operand, start_indices, dimension_numbers, slice_sizes, mode=mode,
                          fill_value=fill_value)


def _lax_scatter(name: str, short: Callable[..., Any]) -> Callable[..., Any]:
    def lax_scatter(operand: Any, scatter_indices: Any, updates: Any,
                    dimension_numbers: Any = None, *, indices_are_sorted: bool = False,
                    unique_indices: bool = False, mode: Any = None) -> Any:
        if dimension_numbers is None or isinstance(dimension_numbers, str):
            if isinstance(dimension_numbers, str):
                mode = dimension_numbers
            extra = {"unique_indices": unique_indices} if name == "scatter_mul" else {}
            return short(operand, scatter_indices, updates, _short_mode(mode, "drop"),
                         **extra)
        from funcgrad.primitives.general_gather_scatter import (  # noqa: PLC0415
            general_scatter,
        )

        return general_scatter(name, operand, scatter_indices, updates, dimension_numbers,
                               mode=mode)

    lax_scatter.__name__ = lax_scatter.__qualname__ = name
    lax_scatter.__doc__ = (
        f"``jax.lax.{name}`` (XLA's Scatter, with a ``ScatterDimensionNumbers``), or with no "
        "dimension numbers funcgrad's short form: ``updates`` combined into ``operand`` at "
        "the index tuples of ``scatter_indices`` (a fourth positional argument is then "
        "``mode``).")
    return lax_scatter


for _p, _node, _fn in ((gather_p, "Gather", lax_gather),
                       (scatter_p, "Scatter", _lax_scatter("scatter", scatter)),
                       (scatter_add_p, "ScatterAdd", _lax_scatter("scatter_add", scatter_add)),
                       (scatter_mul_p, "ScatterMul", _lax_scatter("scatter_mul", scatter_mul)),
                       (scatter_min_p, "ScatterReduce", _lax_scatter("scatter_min", scatter_min)),
                       (scatter_max_p, "ScatterReduce", _lax_scatter("scatter_max", scatter_max)),
                       (dynamic_slice_p, "Slice", dynamic_slice),
                       (dynamic_update_slice_p, "SliceScatter", dynamic_update_slice)):
    _p.describe(lax=_p.name, fusion=None, cuda=None, ufunc=None, torch_method=None,
                torch_node=_node, lax_fn=_fn)

__all__ = [
    "gather", "gather_p", "scatter_add", "scatter_add_p", "scatter", "scatter_p",
    "scatter_mul", "scatter_mul_p", "scatter_min", "scatter_min_p", "scatter_max",
    "scatter_max_p", "default_fill_value", "full_like_index",
    "dynamic_slice", "dynamic_slice_p", "dynamic_update_slice", "dynamic_update_slice_p",
]
