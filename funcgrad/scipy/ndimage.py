"""``jax.scipy.ndimage``: interpolation of an array at arbitrary coordinates.

>>> import funcgrad.numpy as fnp
>>> from funcgrad.scipy import ndimage
>>> ndimage.map_coordinates(fnp.array([0.0, 10.0]), [fnp.array([0.25])], order=1).tolist()
[2.5]
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.numpy._creation import asarray
from funcgrad.numpy._ufuncs import absolute, clip, floor, floor_divide, where
from funcgrad.primitives.elementwise import round_ as _round

__all__ = ["map_coordinates"]


def _mirror(index: Any, size: int) -> Any:
    # A triangular wave of period 2 (size - 1) in integers: |x - round(x)| scaled.
    s = size - 1
    return absolute((index + s) % (2 * s) - s)


def _reflect(index: Any, size: int) -> Any:
    # Reflection about the half-sample edges is the mirror of the doubled grid.
    return floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _is_int(x: Any) -> bool:
    return get_aval(x).dtype.kind in "iu"


def _round_half_away(a: Any) -> Any:
    return a if _is_int(a) else _round(a)


def _nearest(coordinate: Any) -> list[tuple[Any, Any]]:
    index = _round_half_away(coordinate).astype(np.int32)
    return [(index, get_aval(coordinate).dtype.type(1))]


def _linear(coordinate: Any) -> list[tuple[Any, Any]]:
    lower = floor(coordinate)
    upper_weight = coordinate - lower
    lower_weight = 1 - upper_weight
    index = lower.astype(np.int32)
    return [(index, lower_weight), (index + 1, upper_weight)]


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,  # noqa: A002
                    mode: str = "constant", cval: Any = 0.0) -> Any:
    """Interpolate ``input`` at ``coordinates`` (one array per axis) by nearest-neighbour
    (``order=0``) or linear (``order=1``) interpolation. ``mode`` is one of "constant",
    "nearest", "mirror", "wrap" and "reflect", read as SciPy documents them ("wrap" and
    "constant" are SciPy's "grid-wrap" and "grid-constant"), as JAX does.

    >>> import funcgrad.numpy as fnp
    >>> from funcgrad.scipy.ndimage import map_coordinates
    >>> x = fnp.arange(12.0).reshape(3, 4)
    >>> map_coordinates(x, [fnp.array([0.5, 1.5]), fnp.array([1.5, 2.5])], order=1)
    Array([3.5, 8.5], dtype=float32)
    """
    arr = asarray(input)
    coords = [asarray(c) for c in coordinates]
    dt = get_aval(arr).dtype
    fill = asarray(cval, dtype=dt)
    shape = get_aval(arr).shape
    if len(coordinates) != len(shape):
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {len(shape)}")
    fixer = _INDEX_FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_INDEX_FIXERS)}.")
    if order == 0:
        nodes = _nearest
    elif order == 1:
        nodes = _linear
    else:
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for coordinate, size in zip(coords, shape):
        per_axis.append([
            (fixer(index, size),
             ((index >= 0) & (index < size)) if mode == "constant" else None, weight)
            for index, weight in nodes(coordinate)])

    outputs = []
    for items in itertools.product(*per_axis):
        indices, valids, weights = zip(*items)
        contribution = arr[tuple(indices)]
        if mode == "constant":
            contribution = where(functools.reduce(operator.and_, valids), contribution, fill)
        outputs.append(functools.reduce(operator.mul, weights) * contribution)
    result = functools.reduce(operator.add, outputs)
    if dtypes.is_integer(dt):
        result = _round_half_away(result)
    return asarray(result).astype(dt)
