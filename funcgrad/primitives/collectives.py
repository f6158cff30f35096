"""Collectives over a named axis: ``psum``, ``pmax``, ``pmin``, ``axis_index``,
``all_gather``, ``psum_scatter``, ``ppermute`` and ``all_to_all``.

A collective names a mapped axis: ``vmap(..., axis_name="i")`` inside one process, or
``pmap(..., axis_name="i")`` whose members are the processes of a multi-process run.
The vmap trace that maps the axis carries a collective out with the primitive's
``axis_rule`` (a sum over the batch dimension, for psum); every other trace applies it
member by member. When the axis is the processes', the primitive's impl moves the data
through the run's communicator (``funcgrad.processes``). Outside any such map the name
is unbound, and the collective raises JAX's ``NameError``.

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.vmap(lambda x: x / jax.lax.psum(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
Array([0.25, 0.75], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes, processes
from funcgrad.array import wrap
from funcgrad.core import Primitive, get_aval
from funcgrad.errors import ShapeError
from funcgrad.ir import ShapedArray
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import reductions as R
from funcgrad.primitives import structural as S
from funcgrad.primitives.rules import default_typed, move_to_front

Perm = tuple[tuple[int, int], ...]


def _names(axis_name: Any) -> tuple[Any, ...]:
    return axis_name if isinstance(axis_name, tuple) else (axis_name,)


def _index_dtype() -> Any:
    return dtypes.canonicalize_dtype("int32")


# ------------------------------------------------------------- across the processes


def _process_impl(name: str) -> Callable[..., Any]:
    """The impl of a collective: across the processes when its axis names them (pmap),
    else JAX's NameError for an unbound axis name."""
    def impl(xp: Any, *args: Any, axis_name: Any, **params: Any) -> Any:
        names = _names(axis_name)
        unbound = [n for n in names if not processes.is_process_axis(n)]
        if unbound:
            raise NameError(f"Found an unbound axis name: {unbound[0]}. To fix this, please "
                            f"call {name} under `jax.shard_map`.")
        comm = processes.communicator()
        if comm is None or comm.size == 1:
            return _ONE_MEMBER[name](xp, *args, **params)
        return _ACROSS[name](comm, xp, *args, **params)

    impl.__name__ = f"_{name}_impl"
    return impl


def _gather_across(comm: Any, xp: Any, x: Any, *, all_gather_dimension: int,
                   axis_size: int, tiled: bool) -> Any:
    g = xp.moveaxis(comm.allgather(x), 0, all_gather_dimension)
    if not tiled:
        return g
    shape = list(x.shape)
    shape[all_gather_dimension] *= axis_size
    return g.reshape(shape)


def _scatter_across(comm: Any, xp: Any, x: Any, *, scatter_dimension: int, axis_size: int,
                    tiled: bool) -> Any:
    d = scatter_dimension
    if tiled:
        shape = list(x.shape)
        shape[d:d + 1] = [axis_size, x.shape[d] // axis_size]
        x = x.reshape(shape)
    # With the block axis in front, the rest keeps its order: a tiled block's rows land
    # back at ``d``.
    return comm.reduce_scatter(xp.ascontiguousarray(xp.moveaxis(x, d, 0)), "sum")


def _alltoall_across(comm: Any, xp: Any, x: Any, *, split_axis: int, concat_axis: int,
                     axis_size: int) -> Any:
    # Row r of the split axis goes to process r; the rows received stack at concat_axis.
    got = comm.alltoall(xp.ascontiguousarray(xp.moveaxis(x, split_axis, 0)))
    return xp.moveaxis(got, 0, concat_axis)


_ACROSS: dict[str, Callable[..., Any]] = {
    "psum": lambda comm, xp, x: comm.allreduce(x, "sum"),
    "pmax": lambda comm, xp, x: comm.allreduce(x, "max"),
    "pmin": lambda comm, xp, x: comm.allreduce(x, "min"),
    "axis_index": lambda comm, xp: xp.asarray(comm.rank, _index_dtype()),
    "all_gather": _gather_across,
    "psum_scatter": _scatter_across,
    "ppermute": lambda comm, xp, x, *, perm: comm.permute(x, perm),
    "all_to_all": _alltoall_across,
}

# A process axis of one member (pmap in a single process).
_ONE_MEMBER: dict[str, Callable[..., Any]] = {
    "psum": lambda xp, x: x, "pmax": lambda xp, x: x, "pmin": lambda xp, x: x,
    "axis_index": lambda xp: xp.zeros((), _index_dtype()),
    "all_gather": lambda xp, x, *, all_gather_dimension, axis_size, tiled:
        x if tiled else xp.expand_dims(x, all_gather_dimension),
    "psum_scatter": lambda xp, x, *, scatter_dimension, axis_size, tiled:
        x if tiled else xp.squeeze(x, scatter_dimension),
    "ppermute": lambda xp, x, *, perm: x if (0, 0) in perm else xp.zeros_like(x),
    "all_to_all": lambda xp, x, *, split_axis, concat_axis, axis_size:
        xp.moveaxis(x, split_axis, concat_axis),
}


# ------------------------------------------------------------- the primitives


def _member_batch(prim_ref: Callable[[], Primitive], shift: str | None) -> Callable[..., Any]:
    """Batch rule for another axis's trace: apply the collective to every member at once,
    with the batch axis moved to the front (``shift`` names the param that counts axes)."""
    def batch(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        x = move_to_front(args[0], dims[0])
        if shift is not None:
            params = {**params, shift: params[shift] + 1}
        return prim_ref().bind(x, **params), 0

    return batch


def _reduce_rule(reduce: Callable[[Any, tuple[int, ...]], Any], unbatched: Callable[
        [Any, int], Any]) -> Callable[..., Any]:
    """The rule of a reducing collective for the trace that maps its axis: reduce over the
    batch dimension (the result is the same for every member: unbatched)."""
    def rule(x: Any, bdim: int | None, size: int, **_: Any) -> tuple[Any, None]:
        if bdim is None:
            return unbatched(x, size), None
        return reduce(x, (bdim,)), None

    return rule


def _collective(name: str, rule: Callable[..., Any], linear: bool) -> Primitive:
    prim = Primitive(name, abstract_eval=lambda x, *, axis_name: x, impl=_process_impl(name))
    prim.axis_rule = rule  # type: ignore[attr-defined]
    prim.batch = _member_batch(lambda: prim, None)
    if linear:
        prim.jvp = lambda primals, tangents, *, axis_name: (
            prim.bind(primals[0], axis_name=axis_name),
            None if tangents[0] is None else prim.bind(tangents[0], axis_name=axis_name))
        # psum's transpose is psum (JAX's definition): grad of a psum-ed loss sums cotangents.
        prim.vjp = lambda ct, primals, ans, *, axis_name: [prim.bind(ct, axis_name=axis_name)]
        prim.vjp_reads = ""
    else:
        def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis_name: Any) -> Any:
            x, t = primals[0], tangents[0]
            ans = prim.bind(x, axis_name=axis_name)
            if t is None:
                return ans, None
            # The tangent of the members that reach the extreme, split evenly on ties.
            hit = E.convert_element_type(E.eq(x, ans), get_aval(x).dtype)
            count = psum_p.bind(hit, axis_name=axis_name)
            return ans, E.div(psum_p.bind(E.mul(t, hit), axis_name=axis_name), count)

        def vjp(ct: Any, primals: Sequence[Any], ans: Any, *, axis_name: Any) -> list[Any]:
            x = primals[0]
            hit = E.convert_element_type(E.eq(x, ans), get_aval(x).dtype)
            count = psum_p.bind(hit, axis_name=axis_name)
            return [E.div(E.mul(psum_p.bind(ct, axis_name=axis_name), hit), count)]

        prim.jvp, prim.vjp = jvp, vjp
        prim.vjp_reads = "x,y"
    prim.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)
    return prim


def _times_size(x: Any, n: int) -> Any:
    """An unmapped operand's psum: ``n`` times it, keeping its weak type (a Python
    number's psum stays weakly typed, as JAX's)."""
    if dtypes.python_scalar(x):
        x = default_typed(x)
    aval = get_aval(x)
    return E.mul(x, wrap(np.asarray(n, aval.dtype), ShapedArray((), aval.dtype, True)))


psum_p = _collective("psum", _reduce_rule(R.reduce_sum, _times_size), True)
pmax_p = _collective("pmax", _reduce_rule(R.reduce_max, lambda x, n: x), False)
pmin_p = _collective("pmin", _reduce_rule(R.reduce_min, lambda x, n: x), False)


def _axis_index_rule(x: Any, bdim: int | None, size: int, **_: Any) -> tuple[Any, int]:
    # Member k of the mapped axis sees k.
    return S.iota(_index_dtype(), (size,), 0), 0


axis_index_p = Primitive("axis_index",
                         abstract_eval=lambda *, axis_name: ShapedArray((), _index_dtype()),
                         impl=_process_impl("axis_index"))
axis_index_p.axis_rule = _axis_index_rule  # type: ignore[attr-defined]
axis_index_p.jvp = lambda primals, tangents, *, axis_name: (
    axis_index_p.bind(axis_name=axis_name), None)
axis_index_p.vjp = lambda ct, primals, ans, *, axis_name: []
axis_index_p.vjp_reads = ""
# Under another axis's map it is the same for every member: unbatched.
axis_index_p.batch = lambda args, dims, *, axis_name: (axis_index_p.bind(axis_name=axis_name),
                                                       None)
axis_index_p.zero_derivative = True
axis_index_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None)


def _linear(prim: Primitive, transpose: Callable[..., Any]) -> None:
    prim.jvp = lambda primals, tangents, **params: (
        prim.bind(primals[0], **params),
        None if tangents[0] is None else prim.bind(tangents[0], **params))
    prim.vjp = lambda ct, primals, ans, **params: [transpose(ct, **params)]
    prim.vjp_reads = ""


# all_gather: every member gets all members' x, stacked (or concatenated: tiled) at a dim.

def _gather_abstract(x: ShapedArray, *, axis_name: Any, all_gather_dimension: int,
                     axis_size: int, tiled: bool) -> ShapedArray:
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _gather_rule(x: Any, bdim: int | None, size: int, *, all_gather_dimension: int,
                 tiled: bool, **_: Any) -> tuple[Any, None]:
    aval = get_aval(x)
    d = all_gather_dimension
    if bdim is None:
        # Every member holds the same x: the gathered stack repeats it.
        shape = list(aval.shape)
        shape.insert(d, size)
        out = S.broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i != d])
    else:
        perm = [i for i in range(aval.ndim) if i != bdim]
        perm.insert(d, bdim)
        out = S.transpose(x, perm)
    if tiled:
        shape = list(get_aval(out).shape)
        shape[d:d + 2] = [shape[d] * shape[d + 1]]
        out = S.reshape(out, shape)
    return out, None


all_gather_p = Primitive("all_gather", abstract_eval=_gather_abstract,
                         impl=_process_impl("all_gather"))
all_gather_p.axis_rule = _gather_rule  # type: ignore[attr-defined]
all_gather_p.batch = _member_batch(lambda: all_gather_p, "all_gather_dimension")
all_gather_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None,
                      torch_node="AllGather")


# psum_scatter: the sum over the members, member i keeping block i of a dim.

def _scatter_abstract(x: ShapedArray, *, axis_name: Any, scatter_dimension: int,
                      axis_size: int, tiled: bool) -> ShapedArray:
    d = scatter_dimension
    if not 0 <= d < x.ndim:
        raise ShapeError(f"psum_scatter: scatter_dimension {d} is not an axis of a rank-"
                         f"{x.ndim} operand")
    shape = list(x.shape)
    if tiled:
        if shape[d] % axis_size:
            raise ShapeError(f"psum_scatter(tiled=True): dimension {d} of size {shape[d]} "
                             f"does not divide among {axis_size} members")
        shape[d] //= axis_size
    else:
        if shape[d] != axis_size:
            raise ShapeError(f"psum_scatter: dimension {d} has size {shape[d]}, but the axis "
                             f"has {axis_size} members; give tiled=True to split it in blocks")
        del shape[d]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _scatter_rule(x: Any, bdim: int | None, size: int, *, scatter_dimension: int,
                  tiled: bool, **_: Any) -> tuple[Any, int]:
    aval = get_aval(x)
    member = aval if bdim is None else ShapedArray(
        aval.shape[:bdim] + aval.shape[bdim + 1:], aval.dtype, aval.weak_type)
    _scatter_abstract(member, axis_name=None, scatter_dimension=scatter_dimension,
                      axis_size=size, tiled=tiled)  # the member's shape must split
    total = E.mul(x, size) if bdim is None else R.reduce_sum(x, (bdim,))
    d = scatter_dimension
    if tiled:
        shape = list(get_aval(total).shape)
        shape[d:d + 1] = [size, shape[d] // size]
        total = S.reshape(total, shape)
    return total, d


psum_scatter_p = Primitive("psum_scatter", abstract_eval=_scatter_abstract,
                           impl=_process_impl("psum_scatter"))
psum_scatter_p.axis_rule = _scatter_rule  # type: ignore[attr-defined]
psum_scatter_p.batch = _member_batch(lambda: psum_scatter_p, "scatter_dimension")
_linear(psum_scatter_p, lambda ct, *, axis_name, scatter_dimension, axis_size, tiled:
        all_gather_p.bind(ct, axis_name=axis_name, all_gather_dimension=scatter_dimension,
                          axis_size=axis_size, tiled=tiled))
psum_scatter_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None,
                        torch_node="ReduceScatter")
# all_gather and psum_scatter transpose to each other.
_linear(all_gather_p, lambda ct, *, axis_name, all_gather_dimension, axis_size, tiled:
        psum_scatter_p.bind(ct, axis_name=axis_name, scatter_dimension=all_gather_dimension,
                            axis_size=axis_size, tiled=tiled))


# ppermute: member dst gets member src's x for each (src, dst) pair; the others get zeros.

def _ppermute_rule(x: Any, bdim: int | None, size: int, *, perm: Perm, **_: Any
                   ) -> tuple[Any, int]:
    if bdim is None:
        aval = get_aval(x)
        x = S.broadcast_in_dim(x, (size, *aval.shape), tuple(range(1, aval.ndim + 1)))
    else:
        x = move_to_front(x, bdim)
    aval = get_aval(x)
    source = dict((dst, src) for src, dst in perm)
    rows = []
    for dst in range(size):
        if dst in source:
            src = source[dst]
            rows.append(S.slice_(x, (src,) + (0,) * (aval.ndim - 1),
                                 (src + 1,) + aval.shape[1:]))
        else:
            rows.append(S.zeros((1, *aval.shape[1:]), aval.dtype))
    return S.concatenate(rows, 0), 0


ppermute_p = Primitive("ppermute", abstract_eval=lambda x, *, axis_name, perm: x,
                       impl=_process_impl("ppermute"))
ppermute_p.axis_rule = _ppermute_rule  # type: ignore[attr-defined]
ppermute_p.batch = _member_batch(lambda: ppermute_p, None)
_linear(ppermute_p, lambda ct, *, axis_name, perm: ppermute_p.bind(
    ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm)))
ppermute_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None,
                    torch_node="Ppermute")


# all_to_all: member i's block j along split_axis goes to member j, which stacks the blocks
# it receives (in member order) along a new concat_axis.

def _a2a_abstract(x: ShapedArray, *, axis_name: Any, split_axis: int, concat_axis: int,
                  axis_size: int) -> ShapedArray:
    if not 0 <= split_axis < x.ndim:
        raise ShapeError(f"all_to_all: split_axis {split_axis} is not an axis of a rank-"
                         f"{x.ndim} operand")
    if x.shape[split_axis] != axis_size:
        raise ShapeError(f"all_to_all: split_axis {split_axis} has size "
                         f"{x.shape[split_axis]}, but the axis has {axis_size} members; give "
                         f"tiled=True to split it in blocks")
    shape = list(x.shape)
    del shape[split_axis]
    if not 0 <= concat_axis <= len(shape):
        raise ShapeError(f"all_to_all: concat_axis {concat_axis} is out of range")
    shape.insert(concat_axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _a2a_rule(x: Any, bdim: int | None, size: int, *, split_axis: int, concat_axis: int,
              **_: Any) -> tuple[Any, int]:
    aval = get_aval(x)
    if bdim is None:
        x = S.broadcast_in_dim(x, (size, *aval.shape), tuple(range(1, aval.ndim + 1)))
    else:
        x = move_to_front(x, bdim)
    _a2a_abstract(ShapedArray(get_aval(x).shape[1:], aval.dtype), axis_name=None,
                  split_axis=split_axis, concat_axis=concat_axis, axis_size=size)
    nd = get_aval(x).ndim
    # Axes (member j, split i, rest): member i's result holds j at concat_axis.
    order = [split_axis + 1, 0] + [a for a in range(1, nd) if a != split_axis + 1]
    y = S.transpose(x, order)
    rest = list(range(2, nd))
    rest.insert(concat_axis, 1)
    return S.transpose(y, [0, *rest]), 0


all_to_all_p = Primitive("all_to_all", abstract_eval=_a2a_abstract,
                         impl=_process_impl("all_to_all"))
all_to_all_p.axis_rule = _a2a_rule  # type: ignore[attr-defined]


def _a2a_member_batch(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
    x = move_to_front(args[0], dims[0])
    params = {**params, "split_axis": params["split_axis"] + 1,
              "concat_axis": params["concat_axis"] + 1}
    return all_to_all_p.bind(x, **params), 0


all_to_all_p.batch = _a2a_member_batch
# Its transpose sends every block back: split and concat axes swap.
_linear(all_to_all_p, lambda ct, *, axis_name, split_axis, concat_axis, axis_size:
        all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                          concat_axis=split_axis, axis_size=axis_size))
all_to_all_p.describe(lax=None, fusion=None, cuda=None, ufunc=None, torch_method=None,
                      torch_node="AllToAll")


def check_perm(perm: Any, size: int) -> Perm:
    """``perm`` as a tuple of (source, destination) pairs of members of an axis of
    ``size``, checked (JAX's ValueError for repeats or members out of range)."""
    pairs = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {pairs}")
    bad = [p for p in pairs if not (0 <= p[0] < size and 0 <= p[1] < size)]
    if bad:
        raise ValueError(f"ppermute pairs {bad} name members outside the axis of size {size}")
    return pairs


COLLECTIVES = (psum_p, pmax_p, pmin_p, axis_index_p, all_gather_p, psum_scatter_p,
               ppermute_p, all_to_all_p)
COLLECTIVE_NAMES = frozenset(p.name for p in COLLECTIVES)

__all__ = ["COLLECTIVES", "COLLECTIVE_NAMES", "all_gather_p", "all_to_all_p", "axis_index_p",
           "check_perm",
           "pmax_p", "pmin_p", "ppermute_p", "psum_p", "psum_scatter_p"]
