"""``shard_map`` and ``smap``: per-shard programs over a mesh, with collectives on its axes.

Every mesh axis has size 1 here (one device per process), so each shard is the whole
array. The function runs under one named ``vmap`` axis of size 1 per mesh axis: an input
whose spec names an axis varies over it, ``lax.psum``/``pmean``/``all_gather``/
``axis_index``/``ppermute`` over the axis act as on one participant, and an output whose
spec leaves an axis out must not vary over it (JAX's ``check_vma``), which a ``psum``
settles.

>>> import funcgrad as jax
>>> from funcgrad.sharding import PartitionSpec as P
>>> mesh = jax.make_mesh((1,), ("x",))
>>> f = jax.shard_map(lambda x: jax.lax.psum(x.sum(), "x"), mesh=mesh,
...                   in_specs=P("x"), out_specs=P())
>>> f(jax.numpy.arange(4.0))
Array(6., dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.config import config
from funcgrad.errors import ShapeError
from funcgrad.sharding import Mesh, PartitionSpec, get_mesh


class _InferType:
    def __repr__(self) -> str:
        return "Infer"


Infer = _InferType()


def _is_spec(s: Any) -> bool:
    return s is None or isinstance(s, PartitionSpec)


def _specs_for(specs: Any, tree_value: Any, what: str) -> list[PartitionSpec]:
    """One PartitionSpec per leaf of ``tree_value``, ``specs`` being a prefix of it."""
    from funcgrad.tree_util import tree_flatten, tree_leaves  # noqa: PLC0415

    spec_leaves, spec_tree = tree_flatten(specs, is_leaf=_is_spec)
    try:
        subtrees = spec_tree.flatten_up_to(tree_value)
    except (ValueError, TypeError) as e:
        raise ValueError(f"pytree structure error at shard_map {what}: the {what} "
                         f"{specs!r} is not a prefix of the values' structure: {e}") from None
    out: list[PartitionSpec] = []
    for s, sub in zip(spec_leaves, subtrees):
        out.extend([s if s is not None else PartitionSpec()] * len(tree_leaves(sub)))
    return out


def _check_names(specs: Sequence[PartitionSpec], manual: Sequence[str], what: str) -> None:
    for s in specs:
        for name in s.axis_names():
            if name not in manual:
                raise ValueError(
                    f"shard_map {what} argument must refer to an axis marked as manual "
                    f"({frozenset(manual)}), but:\n\n  {what} refers to {name!r}\n\n"
                    f"Check the {what} values passed to shard_map.")


def _check_rank(spec: PartitionSpec, shape: tuple[int, ...], fname: str, what: str,
                where: str) -> None:
    if len(spec) > len(shape):
        raise ValueError(
            f"shard_map applied to the function {fname!r} was given an {what} entry which "
            f"is too long to be compatible with the corresponding {where}:\n\n{what} is "
            f"{spec} which has length {len(spec)}, but the value has shape {list(shape)}, "
            f"which has rank {len(shape)} (and {len(shape)} < {len(spec)})")


def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any,
              in_specs: Any = Infer, mesh: Mesh | None = None,
              axis_names: Any = frozenset(), check_vma: bool = True) -> Any:
    """Map ``f`` over the shards of its inputs on ``mesh`` (or the :func:`set_mesh` one):
    ``in_specs``/``out_specs`` are PartitionSpec prefixes of the inputs/outputs. (See the
    module example.)"""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs,
                                 mesh=mesh, axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = mesh if mesh is not None else get_mesh()
        if m is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
        manual = tuple(axis_names) if axis_names else m.axis_names
        if not set(manual) <= set(m.axis_names):
            raise ValueError(f"jax.shard_map requires axis_names={frozenset(manual)} to be a "
                             f"subset of mesh.axis_names={frozenset(m.axis_names)}")
        manual = tuple(a for a in m.axis_names if a in manual)
        return _run(f, args, m, manual, in_specs, out_specs, check_vma)

    return mapped


def _run(f: Callable[..., Any], args: tuple[Any, ...], mesh: Mesh, manual: tuple[str, ...],
         in_specs: Any, out_specs: Any, check_vma: bool) -> Any:
    from funcgrad import numpy as jnp  # noqa: PLC0415
    from funcgrad.transforms.vmap import vmap  # noqa: PLC0415
    from funcgrad.tree_util import tree_flatten, tree_unflatten  # noqa: PLC0415

    fname = getattr(f, "__name__", "fun")
    if config.read("jax_remove_size_one_mesh_axis_from_type"):
        check_vma = False  # every mesh axis has size 1: none is in a value's type
    leaves, in_tree = tree_flatten(args)
    specs = ([PartitionSpec()] * len(leaves) if in_specs is Infer
             else _specs_for(in_specs, args, "in_specs"))
    if len(specs) != len(leaves):
        raise ValueError(f"shard_map in_specs give {len(specs)} specs for {len(leaves)} "
                         "inputs")
    _check_names(specs, manual, "in_specs")
    for s, x in zip(specs, leaves):
        _check_rank(s, tuple(np.shape(x)), fname, "in_specs", "input value")
    _check_names([s for s in tree_flatten(out_specs, is_leaf=_is_spec)[0]
                  if s is not None], manual, "out_specs")
    # Each shard has the whole array (axes of size 1); an input varying over k of the axes
    # gets k leading unit dims for the k named vmaps to take off.
    mentioned = [[a for a in manual if a in s.axis_names()] for s in specs]
    ins = [jnp.reshape(x, (1,) * len(ax) + tuple(np.shape(x))) if ax else x
           for x, ax in zip(leaves, mentioned)]
    out_box: list[Any] = []

    def body(*flat: Any) -> Any:
        out = f(*tree_unflatten(in_tree, list(flat)))
        out_box.append(out)
        return out

    fun: Callable[..., Any] = body
    for name in reversed(manual):
        in_axes = tuple(0 if name in ax else None for ax in mentioned)
        out_axes = 0 if not check_vma else _map_specs(out_specs, functools.partial(
            _out_axis, name))
        fun = vmap(fun, in_axes=in_axes, out_axes=out_axes, axis_name=name, axis_size=1)
    try:
        out = fun(*ins)
    except ShapeError as e:
        if "out_axes=None" not in str(e):
            raise
        raise ValueError(
            f"shard_map applied to the function {fname!r} was given out_specs which require "
            f"replication which can't be statically inferred given the mesh:\n\nThe mesh "
            f"given has shape {mesh.axis_sizes} with corresponding axis names "
            f"{mesh.axis_names}.\n\nout_specs is {out_specs} which implies that the "
            "corresponding output value is replicated across mesh axes it does not name, "
            "but the value varies over them. Reduce it with a collective (lax.psum, "
            "lax.pmean, ...) or pass check_vma=False.") from None
    out_leaves, out_tree = tree_flatten(out)
    ospecs = _specs_for(out_specs, out, "out_specs")
    res = []
    for s, o in zip(ospecs, out_leaves):
        k = len(manual) if not check_vma else len([a for a in manual if a in s.axis_names()])
        o = jnp.reshape(o, tuple(np.shape(o))[k:]) if k else o
        _check_rank(s, tuple(np.shape(o)), fname, "out_specs", "output value")
        res.append(o)
    return tree_unflatten(out_tree, res)


def _out_axis(name: str, spec: PartitionSpec) -> int | None:
    return 0 if name in spec.axis_names() else None


def _map_specs(specs: Any, fn: Callable[[PartitionSpec], Any]) -> Any:
    from funcgrad.tree_util import (  # noqa: PLC0415
        tree_flatten,
        tree_unflatten,
        treedef_is_leaf,
    )

    leaves, tree = tree_flatten(specs, is_leaf=_is_spec)
    mapped = [fn(s if s is not None else PartitionSpec()) for s in leaves]
    return mapped[0] if treedef_is_leaf(tree) else tree_unflatten(tree, mapped)


def smap(f: Callable[..., Any] | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name: str) -> Any:
    """``shard_map`` over the one mesh axis ``axis_name`` of the :func:`set_mesh` mesh,
    with ``vmap``-style ``in_axes``/``out_axes`` (an int shards that dimension, None
    replicates).

    >>> import funcgrad as jax
    >>> with jax.set_mesh(jax.make_mesh((1,), ("x",))):
    ...     jax.smap(lambda x: x * 2, in_axes=0, out_axes=0, axis_name="x")(jax.numpy.ones(2))
    Array([2., 2.], dtype=float32)
    """
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name)

    def to_spec(ax: Any) -> PartitionSpec:
        if ax is None:
            return PartitionSpec()
        if not isinstance(ax, int) or ax < 0:
            raise TypeError(f"smap axes must be non-negative ints or None, got {ax!r}")
        return PartitionSpec(*([None] * ax), axis_name)

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = get_mesh()
        if m is None:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context")
        if axis_name not in m.axis_names:
            raise ValueError(f"jax.shard_map requires axis_names={frozenset([axis_name])} to "
                             f"be a subset of mesh.axis_names={frozenset(m.axis_names)}")
        ins = Infer if in_axes is Infer else (
            tuple(to_spec(a) for a in in_axes) if isinstance(in_axes, tuple)
            else tuple(to_spec(in_axes) for _ in args))
        outs = _map_axes(out_axes, to_spec)
        return _run(f, args, m, (axis_name,), ins, outs, True)

    return mapped


def _map_axes(axes: Any, fn: Callable[[Any], PartitionSpec]) -> Any:
    if isinstance(axes, (tuple, list)):
        return type(axes)(_map_axes(a, fn) for a in axes)
    if isinstance(axes, dict):
        return {k: _map_axes(v, fn) for k, v in axes.items()}
    return fn(axes)


__all__ = ["shard_map", "smap"]
