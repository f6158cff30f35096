"""``jax.lax``: one function per primitive, shape- and dtype-exact (no broadcasting or
promotion; a Python number takes the other operand's dtype), the ``*_p`` primitives
themselves, and structured control flow.

Each function is the one its primitive's definition carries (``Primitive.lax_fn``):
adding a primitive adds its lax function.

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.add(np.ones(2), np.ones(2))
Array([2., 2.], dtype=float64)
>>> lax.tanh(np.zeros(1, np.float32))
Array([0.], dtype=float32)
"""

from typing import Any

from funcgrad.core import PRIMITIVES as _PRIMITIVES
from funcgrad.primitives import collectives as _collectives
from funcgrad.primitives import elementwise as _elementwise  # noqa: F401 - registers
from funcgrad.primitives import indexing as _indexing  # noqa: F401
from funcgrad.primitives import linalg as _linalg  # noqa: F401
from funcgrad.primitives import reductions as _reductions  # noqa: F401
from funcgrad.primitives import structural as _structural  # noqa: F401
from funcgrad.primitives.elementwise import reciprocal, square

_CONTROL_FLOW = ("cond", "switch", "while_loop", "fori_loop", "scan", "map")
_LATE = {"cond", "while_loop", "scan"}  # defined with the transforms (loaded on first use)


def _export() -> list[str]:
    g = globals()
    names = []
    for prim in list(_PRIMITIVES.values()):
        if prim.lax and prim.lax_fn is not None and prim.lax not in _LATE:
            g[prim.lax] = prim.lax_fn
            names.append(prim.lax)
        g[f"{prim.name}_p"] = prim
        names.append(f"{prim.name}_p")
    return names


__all__ = [*_CONTROL_FLOW, *_export(), "reciprocal", "square"]  # noqa: PLE0604


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """``operand`` sliced along one axis (the others whole)."""
    from funcgrad.core import get_aval  # noqa: PLC0415

    shape = get_aval(operand).shape
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    n = shape[axis]
    s, e, st = slice(start_index, limit_index, stride).indices(n)
    start[axis], limit[axis], strides[axis] = s, max(e, s), st
    return globals()["slice"](operand, start, limit, strides)


__all__ += ["slice_in_dim"]


def _tree_collective(prim: Any, x: Any, axis_name: Any) -> Any:
    from funcgrad.conversion import asarray  # noqa: PLC0415
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    return tree_map(lambda v: prim.bind(asarray(v), axis_name=axis_name), x)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` over the members of the named mapped axis (a pytree of arrays).

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(jnp.arange(3.0))
    Array([3., 3., 3.], dtype=float32)
    """
    if axis_index_groups is not None:
        raise NotImplementedError("psum's axis_index_groups is not supported by funcgrad")
    return _tree_collective(_collectives.psum_p, x, axis_name)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over the members of the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: jax.lax.pmean(v, "i"), axis_name="i")(jnp.arange(3.0))
    Array([1., 1., 1.], dtype=float32)
    """
    from funcgrad.tree_util import tree_map  # noqa: PLC0415

    n = psum(1, axis_name, axis_index_groups=axis_index_groups)
    return tree_map(lambda s: s / n, psum(x, axis_name, axis_index_groups=axis_index_groups))


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The maximum of ``x`` over the members of the named mapped axis."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmax's axis_index_groups is not supported by funcgrad")
    return _tree_collective(_collectives.pmax_p, x, axis_name)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The minimum of ``x`` over the members of the named mapped axis."""
    if axis_index_groups is not None:
        raise NotImplementedError("pmin's axis_index_groups is not supported by funcgrad")
    return _tree_collective(_collectives.pmin_p, x, axis_name)


def axis_index(axis_name: Any) -> Any:
    """This member's index along the named mapped axis.

    >>> import funcgrad as jax
    >>> import funcgrad.numpy as jnp
    >>> jax.vmap(lambda v: v * jax.lax.axis_index("i"), axis_name="i")(jnp.ones(3))
    Array([0., 1., 2.], dtype=float32)
    """
    return _collectives.axis_index_p.bind(axis_name=axis_name)


__all__ += ["axis_index", "pmax", "pmean", "pmin", "psum"]


def __getattr__(name: str) -> Any:
    # Control flow lives with the transformations it needs; load it on first use.
    if name in _CONTROL_FLOW:
        from funcgrad.transforms import control_flow  # noqa: PLC0415

        return getattr(control_flow, "map_" if name == "map" else name)
    if name in ("cond_p", "while_p", "scan_p"):
        from funcgrad.transforms import control_flow  # noqa: PLC0415

        return getattr(control_flow, name)
    raise AttributeError(f"module 'funcgrad.lax' has no attribute {name!r}")
