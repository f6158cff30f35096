"""``jax.lax``'s collectives over a named mapped axis (``vmap(axis_name=)`` or ``pmap``).

Each maps over a pytree of arrays. ``axis_index_groups`` splits the axis into groups
that reduce separately (every member in exactly one group, groups of one size).

>>> import funcgrad as jax
>>> import funcgrad.numpy as jnp
>>> jax.vmap(lambda v: jax.lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]),
...          axis_name="i")(jnp.arange(4.0))
Array([1., 1., 5., 5.], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes, processes
from funcgrad.core import get_aval
from funcgrad.primitives import collectives as C
from funcgrad.tree_util import tree_map


def _arr(v: Any) -> Any:
    from funcgrad.conversion import asarray  # noqa: PLC0415

    return asarray(v)


def _groups_matrix(groups: Sequence[Sequence[int]], size: int) -> np.ndarray:
    """The (size, size) 0/1 matrix of "same group", after checking ``groups``."""
    members = sorted(int(i) for g in groups for i in g)
    if members != list(range(size)):
        raise ValueError(f"axis_index_groups {groups!r} must hold every member 0..{size - 1} "
                         f"of the axis exactly once")
    if len({len(g) for g in groups}) != 1:
        raise ValueError(f"axis_index_groups {groups!r} must all have the same size")
    m = np.zeros((size, size), np.float64)
    for g in groups:
        for i in g:
            m[int(i), [int(j) for j in g]] = 1.0
    return m


def _grouped(x: Any, axis_name: Any, groups: Sequence[Sequence[int]], kind: str) -> Any:
    """A reduction within groups: gather every member, keep this member's group."""
    import funcgrad.numpy as jnp  # noqa: PLC0415

    size = processes.axis_size(axis_name)
    same = jnp.asarray(_groups_matrix(groups, size))[C.axis_index_p.bind(axis_name=axis_name)]
    x = _arr(x)
    aval = get_aval(x)
    gathered = all_gather(x, axis_name)
    mask = jnp.reshape(same, (size,) + (1,) * aval.ndim)
    if kind == "sum":
        return jnp.sum(jnp.where(mask > 0, gathered, jnp.zeros_like(gathered)), axis=0)
    fill = -jnp.inf if kind == "max" else jnp.inf
    if not dtypes.is_inexact(aval.dtype):
        info = np.iinfo(aval.dtype)
        fill = info.min if kind == "max" else info.max
    pick = jnp.max if kind == "max" else jnp.min
    return pick(jnp.where(mask > 0, gathered, jnp.full_like(gathered, fill)), axis=0)


def _reducer(prim: Any, kind: str) -> Callable[..., Any]:
    def reduce(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
        if axis_index_groups is not None:
            return tree_map(lambda v: _grouped(v, axis_name, axis_index_groups, kind), x)
        return tree_map(lambda v: prim.bind(_arr(v), axis_name=axis_name), x)

    return reduce


_psum = _reducer(C.psum_p, "sum")
_pmax = _reducer(C.pmax_p, "max")
_pmin = _reducer(C.pmin_p, "min")


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` over the members of the named mapped axis (a pytree of arrays).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.arange(3.0))
    Array([3., 3., 3.], dtype=float32)
    """
    return _psum(x, axis_name, axis_index_groups=axis_index_groups)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over the members of the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.pmean(v, "i"), axis_name="i")(jnp.arange(3.0))
    Array([1., 1., 1.], dtype=float32)
    """
    n = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_map(lambda s: s / n, psum(x, axis_name, axis_index_groups=axis_index_groups))


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of ``x`` over the members of the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.pmax(v, "i"), axis_name="i")(jnp.array([1.0, 4.0]))
    Array([4., 4.], dtype=float32)
    """
    return _pmax(x, axis_name, axis_index_groups=axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of ``x`` over the members of the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.pmin(v, "i"), axis_name="i")(jnp.array([1.0, 4.0]))
    Array([1., 1.], dtype=float32)
    """
    return _pmin(x, axis_name, axis_index_groups=axis_index_groups)


def axis_index(axis_name: Any) -> Any:
    """This member's index along the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: v * jax.lax.axis_index("i"), axis_name="i")(jnp.ones(3))
    Array([0., 1., 2.], dtype=float32)
    """
    if isinstance(axis_name, (tuple, list)):
        # The position in the axes flattened in order (the last name varies fastest).
        index: Any = 0
        for name in axis_name:
            index = index * axis_size(name) + C.axis_index_p.bind(axis_name=name)
        return index
    return C.axis_index_p.bind(axis_name=axis_name)


def axis_size(axis_name: Any) -> int:
    """The number of members of the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: v * jax.lax.axis_size("i"), axis_name="i")(jnp.ones(2))
    Array([2., 2.], dtype=float32)
    """
    return processes.axis_size(axis_name)


def _one_axis(axis_name: Any, what: str) -> Any:
    if isinstance(axis_name, tuple):
        if len(axis_name) != 1:
            raise ValueError(f"{what} over several axis names {axis_name!r} is not supported "
                             f"by funcgrad; nest one call per axis")
        return axis_name[0]
    return axis_name


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every member gets all members' ``x``, stacked along a new axis ``axis`` (or
    concatenated along ``axis`` when ``tiled``).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.all_gather(v, "i"), axis_name="i")(jnp.arange(2.0))
    Array([[0., 1.],
           [0., 1.]], dtype=float32)
    """
    name = _one_axis(axis_name, "all_gather")
    if axis_index_groups is not None:
        raise ValueError("all_gather's axis_index_groups is not supported by funcgrad; "
                         "gather the whole axis and select with lax.axis_index")
    size = processes.axis_size(name)

    def one(v: Any) -> Any:
        v = _arr(v)
        ndim = get_aval(v).ndim
        nd = ndim + (0 if tiled else 1)
        d = axis + nd if axis < 0 else axis
        if not 0 <= d < nd:
            raise ValueError(f"all_gather axis {axis} is out of range for a rank-{ndim} "
                             f"operand")
        return C.all_gather_p.bind(v, axis_name=name, all_gather_dimension=d,
                                   axis_size=size, tiled=tiled)

    return tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """The sum over the members, member ``i`` keeping block ``i`` of ``scatter_dimension``
    (whose size is the axis size, or a multiple of it when ``tiled``).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.psum_scatter(v, "i"), axis_name="i")(jnp.ones((2, 2)))
    Array([2., 2.], dtype=float32)
    """
    name = _one_axis(axis_name, "psum_scatter")
    if axis_index_groups is not None:
        raise ValueError("psum_scatter's axis_index_groups is not supported by funcgrad")
    size = processes.axis_size(name)

    def one(v: Any) -> Any:
        v = _arr(v)
        ndim = get_aval(v).ndim
        d = scatter_dimension + ndim if scatter_dimension < 0 else scatter_dimension
        return C.psum_scatter_p.bind(v, axis_name=name, scatter_dimension=d, axis_size=size,
                                     tiled=tiled)

    return tree_map(one, x)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Member ``dst`` gets member ``src``'s ``x`` for each pair of ``perm``; members that
    receive nothing get zeros.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]),
    ...          axis_name="i")(jnp.arange(3.0))
    Array([2., 0., 1.], dtype=float32)
    """
    name = _one_axis(axis_name, "ppermute")
    pairs = C.check_perm(perm, processes.axis_size(name))
    return tree_map(lambda v: C.ppermute_p.bind(_arr(v), axis_name=name, perm=pairs), x)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Member ``i``'s block ``j`` along ``split_axis`` goes to member ``j``, which gets the
    blocks of all members stacked along a new ``concat_axis`` (concatenated along
    ``concat_axis`` when ``tiled``).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.all_to_all(v, "i", 0, 0), axis_name="i")(
    ...     jnp.arange(4.0).reshape(2, 2))
    Array([[0., 2.],
           [1., 3.]], dtype=float32)
    """
    name = _one_axis(axis_name, "all_to_all")
    if axis_index_groups is not None:
        raise ValueError("all_to_all's axis_index_groups is not supported by funcgrad")
    n = processes.axis_size(name)

    def one(v: Any) -> Any:
        import funcgrad.numpy as jnp  # noqa: PLC0415

        v = _arr(v)
        shape = list(get_aval(v).shape)
        nd = len(shape)
        s = split_axis + nd if split_axis < 0 else split_axis
        c = concat_axis + nd if concat_axis < 0 else concat_axis
        if not tiled:
            return C.all_to_all_p.bind(v, axis_name=name, split_axis=s, concat_axis=c,
                                       axis_size=n)
        if shape[s] % n:
            raise ValueError(f"all_to_all(tiled=True): split_axis {s} of size {shape[s]} "
                             f"does not divide among {n} members")
        blocks = shape[:s] + [n, shape[s] // n] + shape[s + 1:]
        out = C.all_to_all_p.bind(jnp.reshape(v, blocks), axis_name=name, split_axis=s,
                                  concat_axis=c, axis_size=n)
        merged = list(get_aval(out).shape)
        merged[c:c + 2] = [merged[c] * merged[c + 1]]
        return jnp.reshape(out, merged)

    return tree_map(one, x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Member ``i`` gets member ``perm[i]``'s ``x`` (a permutation of the whole axis).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.pshuffle(v, "i", [1, 0]), axis_name="i")(jnp.arange(2.0))
    Array([1., 0.], dtype=float32)
    """
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle perm must be a permutation of 0..n-1, got {list(perm)}")
    return ppermute(x, axis_name, [(int(s), i) for i, s in enumerate(perm)])


__all__ = ["all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin",
           "ppermute",
           "pshuffle", "psum", "psum_scatter"]
