"""``jax.flatten_util``: a pytree of arrays as one flat vector, and back.

>>> import funcgrad.numpy as jnp
>>> from funcgrad.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": jnp.ones(2), "b": 3.0})
>>> flat.tolist(), unravel(flat * 2)["w"].tolist()
([3.0, 1.0, 1.0], [2.0, 2.0])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes, lax
from funcgrad.core import get_aval
from funcgrad.numpy import result_type
from funcgrad.tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The leaves of ``pytree`` raveled and concatenated into one 1-D array (their dtypes
    promoted; float32 and empty for no leaves), and the function that splits such a vector
    back into the pytree (each leaf its shape and dtype again).

    >>> import funcgrad.numpy as jnp
    >>> flat, unravel = ravel_pytree((jnp.zeros((2, 2)), jnp.arange(2)))
    >>> flat.shape, [x.dtype.name for x in unravel(flat)]
    ((6,), ['float32', 'int32'])
    """
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef: Any, unravel_list: Callable[[Any], list[Any]], flat: Any) -> Any:
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves: list[Any]) -> tuple[Any, Callable[[Any], list[Any]]]:
    if not leaves:
        return lax.full((0,), 0, np.float32), lambda _: []
    from_dtypes = tuple(get_aval(x).dtype for x in leaves)
    # (Promoted as dtypes: a Python number counts as its default dtype, not weakly.)
    to_dtype = dtypes.canonicalize_dtype(result_type(*from_dtypes))
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    if all(dt == to_dtype for dt in from_dtypes):
        # One dtype: the unravel function keeps whatever dtype it is given (JAX's too).
        flat = lax.concatenate([lax.reshape(x, (n,)) for x, n in zip(leaves, sizes)], 0)
        return flat, functools.partial(_split, sizes, shapes, None, None)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
                            for x, n in zip(leaves, sizes)], 0)
    return flat, functools.partial(_split, sizes, shapes, from_dtypes, to_dtype)


def _split(sizes: Sequence[int], shapes: Sequence[tuple[int, ...]],
           from_dtypes: Sequence[Any] | None, to_dtype: Any, flat: Any) -> list[Any]:
    if from_dtypes is not None:
        given = get_aval(flat).dtype
        if given != to_dtype:
            raise TypeError(f"unravel function given array of dtype {given}, but expected "
                            f"dtype {to_dtype}")
    n = get_aval(flat).shape
    if len(n) != 1 or n[0] != sum(sizes):
        raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension 0 of the "
                         f"operand shape [{', '.join(map(str, n))}]")
    chunks = lax.split(flat, sizes)
    out = [lax.reshape(c, s) for c, s in zip(chunks, shapes)]
    if from_dtypes is None:
        return out
    return [_cast_back(c, dt) for c, dt in zip(out, from_dtypes)]


def _cast_back(x: Any, dtype: Any) -> Any:
    # A complex vector back into a real leaf keeps the real part, without a warning.
    if get_aval(x).dtype.kind == "c" and np.dtype(dtype).kind != "c":
        x = lax.real(x)
    return lax.convert_element_type(x, dtype)


__all__ = ["ravel_pytree"]
