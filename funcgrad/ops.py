"""``jax.ops``: segment reductions (``segment_sum``, ``segment_max``, ``segment_min``,
``segment_prod``), differentiable and usable under jit/vmap.

Rows of ``data`` are combined by their ``segment_ids``; ids outside
``[0, num_segments)`` are dropped, and empty segments hold the reduction's identity
(0, -inf/min, +inf/max, 1), as in JAX.

>>> import funcgrad.numpy as jnp
>>> from funcgrad import ops
>>> ops.segment_sum(jnp.array([1.0, 2.0, 3.0]), jnp.array([0, 0, 2]), num_segments=3)
Array([3., 0., 3.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import Tracer
from funcgrad.errors import ConcretizationTypeError, DTypeError


def _segments(data: Any, segment_ids: Any, num_segments: int | None, identity: Any,
              method: str, mode: Any) -> Any:
    import funcgrad.numpy as jnp  # noqa: PLC0415

    data = jnp.asarray(data)
    if method in ("add", "multiply") and data.dtype == np.bool_:
        op = "add" if method == "add" else "mul"
        raise DTypeError(f"{op} does not accept dtype bool at position 0. Accepted dtypes at "
                         "position 0 are subtypes of integer, floating, complexfloating.")
    ids = jnp.asarray(segment_ids)
    if num_segments is None:
        if isinstance(segment_ids, Tracer) or isinstance(ids, Tracer):
            raise ConcretizationTypeError(
                "segment reductions under jit need num_segments= (the output size must be "
                "known when the function is traced)")
        num_segments = int(np.max(np.asarray(ids))) + 1 if ids.size else 0
    if not dtypes.is_inexact(data.dtype) and identity in (-np.inf, np.inf):
        info = np.iinfo(data.dtype) if data.dtype != np.bool_ else None
        identity = (info.min if identity < 0 else info.max) if info else identity > 0
    out = jnp.full((num_segments, *data.shape[1:]), identity, data.dtype)
    # Negative ids are dropped too (not counted from the end, as Python indexing would).
    ids = jnp.where(ids < 0, num_segments, ids)
    return getattr(out.at[ids], method)(data, mode="drop" if mode is None else mode)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The sum of the rows of ``data`` in each segment (see the module docstring)."""
    return _segments(data, segment_ids, num_segments, 0, "add", mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None) -> Any:
    """The product of the rows of ``data`` in each segment.

    >>> import funcgrad.numpy as jnp
    >>> from funcgrad import ops
    >>> ops.segment_prod(jnp.array([2.0, 3.0, 4.0]), jnp.array([1, 1, 0]), 2)
    Array([4., 6.], dtype=float32)
    """
    return _segments(data, segment_ids, num_segments, 1, "multiply", mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The maximum of the rows of ``data`` in each segment (-inf where empty).

    >>> import funcgrad.numpy as jnp
    >>> from funcgrad import ops
    >>> ops.segment_max(jnp.array([2.0, 3.0]), jnp.array([1, 1]), 2)
    Array([-inf,   3.], dtype=float32)
    """
    return _segments(data, segment_ids, num_segments, -np.inf, "max", mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The minimum of the rows of ``data`` in each segment (+inf where empty).

    >>> import funcgrad.numpy as jnp
    >>> from funcgrad import ops
    >>> ops.segment_min(jnp.array([2.0, 3.0]), jnp.array([0, 0]), 1)
    Array([2.], dtype=float32)
    """
    return _segments(data, segment_ids, num_segments, np.inf, "min", mode)


__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
