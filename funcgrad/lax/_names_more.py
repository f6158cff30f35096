"""More of ``jax.lax``: ``scatter_sub``, ``scatter_apply``, the convolution and window shape
helpers, ``conv_general_dilated_patches``/``_local``, ``dtype``, ``composite``,
``with_sharding_constraint`` (one device: the identity) and ``RandomAlgorithm``.

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME")
(1, 4, 8, 8)
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad import dtypes
from funcgrad.core import get_aval
from funcgrad.primitives import elementwise as el
from funcgrad.primitives import reductions as red
from funcgrad.primitives import structural as st
from funcgrad.primitives.convolution import (
    _conv_transpose_padding,
    conv_dimension_numbers,
    conv_general_dilated,
    conv_general_permutations,
    padtype_to_pads,
)
from funcgrad.primitives.elementwise import as_operand
from funcgrad.primitives.general_gather_scatter import ScatterDimensionNumbers, general_scatter
from funcgrad.primitives.precision import Precision
from funcgrad.sharding import NamedSharding, PartitionSpec, Sharding, get_mesh


class RandomAlgorithm(enum.IntEnum):
    """The bit generators XLA's ``RngBitGenerator`` names (JAX's ``lax.RandomAlgorithm``).

    >>> RandomAlgorithm.RNG_THREE_FRY.value
    1
    """

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any,
                dimension_numbers: ScatterDimensionNumbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: Any = None) -> Any:
    """XLA's Scatter subtracting ``updates`` from ``operand`` (``jax.lax.scatter_sub``).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_sub(np.zeros(3, np.float32), np.array([[0], [0], [2]]),
    ...                 np.ones(3, np.float32), dn)
    Array([-2.,  0., -1.], dtype=float32)
    """
    return general_scatter("scatter_add", operand, scatter_indices, el.neg(updates),
                           dimension_numbers, mode=mode)


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Any = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: Any = None) -> Any:
    """``operand`` with ``func`` applied at the scattered positions, once per update (a
    repeated index applies it again), as ``jax.lax.scatter_apply``.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_apply(np.ones(3, np.float32), np.array([[0], [0], [2]]),
    ...                   lambda v: v * 2, dn, update_shape=(3,))
    Array([4., 1., 2.], dtype=float32)
    """
    from funcgrad.transforms.control_flow import fori_loop  # noqa: PLC0415
    from funcgrad.transforms.vmap import vmap  # noqa: PLC0415

    shape = tuple(get_aval(operand).shape)
    it = dtypes.default_int()
    ones = st.broadcast_in_dim(np.asarray(1, it), tuple(update_shape), ())
    counts = general_scatter("scatter_add", st.broadcast_in_dim(np.asarray(0, it), shape, ()),
                             scatter_indices, ones, dimension_numbers, mode=mode)
    flat_fn = vmap(func)

    def apply(x: Any) -> Any:
        return st.reshape(flat_fn(st.reshape(x, (math.prod(shape),))), shape)

    def body(k: Any, x: Any) -> Any:
        return el.select(el.gt(counts, k), apply(x), x)

    most = red.reduce_max(counts, tuple(range(len(shape)))) if shape else counts
    return fori_loop(np.asarray(0, it), most, body, operand)


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """The shape of a convolution of operands in canonical order (NC..., OI...).

    >>> conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), "VALID")
    (2, 4, 4)
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={lhs_shape[2:]}")
    space = tuple(max((p - int(k)) // int(s) + 1, 0)
                  for p, k, s in zip(padded, rhs_shape[2:], strides))
    batch = int(lhs_shape[0]) // batch_group_count
    return (batch, int(rhs_shape[0]), *space)


def _permuted(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[p]) for p in perm)


def _unpermuted(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(shape[i]) for i in np.argsort(perm))


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Any) -> tuple[int, ...]:
    """The shape of ``conv_general_dilated`` with these dimension numbers (no dilation).

    >>> conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (1, 1), "SAME",
    ...                          ("NHWC", "HWIO", "NHWC"))
    (1, 8, 8, 4)
    """
    lp, rp, op = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(_permuted(lhs_shape, lp), _permuted(rhs_shape, rp), window_strides,
                           padding)
    return _unpermuted(out, op)


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Any) -> tuple[int, ...]:
    """The shape of ``conv_transpose`` with these dimension numbers.

    >>> conv_transpose_shape_tuple((1, 3, 4, 4), (2, 3, 3, 3), (2, 2), "SAME",
    ...                            ("NCHW", "OIHW", "NCHW"))
    (1, 2, 8, 8)
    """
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lt, rt = _permuted(lhs_shape, lp), _permuted(rhs_shape, rp)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rt[2:], window_strides)]
    total = [int(sum(p)) for p in padding]
    space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lt[2:], rt[2:], window_strides,
                                                              total)]
    return _unpermuted((lt[0], rt[0], *space), op)


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Sequence[Any],
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None
                              ) -> tuple[int, ...]:
    """The shape of ``reduce_window`` with explicit ``(low, high)`` padding.

    >>> reduce_window_shape_tuple((4, 6), (2, 2), (2, 2), ((0, 0), (0, 0)))
    (2, 3)
    """
    def dilate(shape: Sequence[int], d: Sequence[int]) -> list[int]:
        return [0 if n == 0 else 1 + f * (n - 1) for n, f in zip(shape, d)]

    shape = list(operand_shape) if base_dilation is None else dilate(operand_shape,
                                                                     base_dilation)
    window = list(window_dimensions) if window_dilation is None else dilate(
        window_dimensions, window_dilation)
    padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(shape, padding)]
    return tuple(max((p - int(w)) // int(s) + 1, 0)
                 for p, w, s in zip(padded, window, window_strides))


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int], padding: Any,
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Any:
    """The patches ``conv_general_dilated`` would multiply by its kernel, flattened into
    the feature dimension (channel-major: ``C * prod(filter_shape)`` features).

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> lax.conv_general_dilated_patches(np.ones((1, 2, 5, 5), np.float32), (3, 3),
    ...                                  (1, 1), "VALID").shape
    (1, 18, 3, 3)
    """
    lhs = as_operand(lhs)
    la = get_aval(lhs)
    filter_shape = tuple(int(f) for f in filter_shape)
    dn = conv_dimension_numbers(la.shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    spatial = math.prod(filter_shape)
    channels = la.shape[lhs_spec[1]]
    dt = dtypes.canonicalize_dtype(la.dtype)
    # Each spatial position of the window goes to its own output feature.
    eye = np.eye(spatial, dtype=dt)
    rhs = np.broadcast_to(eye, (channels, spatial, spatial)).reshape(
        channels * spatial, 1, *filter_shape)
    rhs = np.moveaxis(rhs, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs, np.ascontiguousarray(rhs), window_strides, padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        precision=None if precision is None else (precision, Precision.DEFAULT),
        feature_group_count=channels, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: Any, filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Any:
    """An unshared (locally connected) convolution: a kernel of its own at each output
    position. ``rhs``'s spatial axes are the output's positions, and its ``I`` axis holds
    the input channels times the receptive window (channel-major), as in JAX.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> x, w = np.ones((1, 2, 4, 4), np.float32), np.ones((3, 2 * 2 * 2, 3, 3), np.float32)
    >>> lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)).shape
    (1, 3, 3, 3)
    """
    from funcgrad.numpy import moveaxis  # noqa: PLC0415
    from funcgrad.primitives.linalg import dot_general  # noqa: PLC0415
    from funcgrad.primitives.precision import canonicalize_precision  # noqa: PLC0415

    canon = canonicalize_precision(precision)
    if canon is not None and not (isinstance(canon, tuple) and len(canon) == 2):
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    lhs = as_operand(lhs)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=None if canon is None else canon[0])
    _, rhs_spec, out_spec = conv_dimension_numbers(
        get_aval(lhs).shape, (1, 1, *(int(f) for f in filter_shape)), dimension_numbers)
    # Contract the patch features with rhs's I axis, position by position: the output's
    # spatial axes (in order) are batch axes of the product, paired with rhs's.
    out_spatial, rhs_spatial = list(out_spec[2:]), list(rhs_spec[2:])
    order = sorted(range(len(out_spatial)), key=lambda k: out_spatial[k])
    dn = (((out_spec[1],), (rhs_spec[1],)),
          (tuple(sorted(out_spatial)), tuple(rhs_spatial[k] for k in order)))
    out = dot_general(patches, rhs, dn, precision=precision)
    return moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


def dtype(x: Any) -> np.dtype[Any]:
    """The dtype of ``x`` (an array, a Python scalar, or a dtype-like), canonicalized by the
    64-bit switch, as ``jax.lax.dtype``.

    >>> import numpy as np
    >>> dtype(np.ones(2, np.int16))
    dtype('int16')
    """
    out: np.dtype[Any]
    if isinstance(x, bool):
        out = np.dtype(np.bool_)
    elif isinstance(x, int):
        out = np.dtype(np.int64)
    elif isinstance(x, float):
        out = np.dtype(np.float64)
    elif isinstance(x, complex):
        out = np.dtype(np.complex128)
    elif isinstance(x, (str, type, np.dtype)):
        out = dtypes.to_dtype(x)
    elif hasattr(x, "dtype"):
        out = np.dtype(x.dtype)
    else:
        raise TypeError(f"Cannot determine dtype of {x}")
    return dtypes.canonicalize_dtype(out)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` unchanged (a pytree) once ``shardings`` are checked as JAX checks them: one
    device has nothing to constrain.

    >>> import numpy as np
    >>> import funcgrad as jax
    >>> mesh = jax.make_mesh((1,), ("x",))
    >>> s = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x"))
    >>> with_sharding_constraint(np.arange(3), s).tolist()
    [0, 1, 2]
    """
    from funcgrad.tree_util import tree_flatten, tree_map  # noqa: PLC0415

    def check(spec: Any) -> None:
        if spec is None:
            raise ValueError("One of with_sharding_constraint arguments got sharding None "
                             "which is not allowed. Please only pass `jax.sharding.Sharding` "
                             "instances.")
        if isinstance(spec, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise RuntimeError(
                    "with_sharding_constraint requires a non-empty mesh in context if you "
                    "are passing `PartitionSpec`s to shardings. You can define a context "
                    "mesh via `funcgrad.set_mesh(mesh)`. Alternatively, provide `Sharding`s "
                    "to shardings.")
            spec = NamedSharding(mesh, spec)
        if not isinstance(spec, Sharding):
            raise TypeError("shardings leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {spec}")
        if isinstance(spec, NamedSharding):
            for names in spec.spec:
                for name in names if isinstance(names, tuple) else (names,):
                    if name is not None and name not in spec.mesh.axis_names:
                        raise ValueError(f"Resource axis: {name} of {spec.spec} is not found "
                                         f"in mesh: {tuple(spec.mesh.axis_names)}.")

    leaves, _ = tree_flatten(shardings, is_leaf=lambda s: s is None or
                             isinstance(s, (Sharding, PartitionSpec)))
    for spec in leaves:
        check(spec)
    return tree_map(lambda v: v, x)


def composite(decomposition: Callable[..., Any], name: str,
              version: int = 0) -> Callable[..., Any]:
    """``decomposition`` as a named composite (JAX's ``lax.composite``): funcgrad runs and
    differentiates the decomposition itself; keyword arguments are its attributes.

    >>> import numpy as np
    >>> from funcgrad import lax
    >>> double = lax.composite(lambda x, *, k: lax.mul(x, k), name="my.scale")
    >>> double(np.float32(2.0), k=3.0)
    Array(6., dtype=float32)
    """
    if not isinstance(name, str):
        raise TypeError(f"composite name must be a string, got {name!r}")

    @functools.wraps(decomposition)
    def _composite(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)

    return _composite


__all__ = ["RandomAlgorithm", "composite", "conv_general_dilated_local",
           "conv_general_dilated_patches",
           "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose_shape_tuple",
           "dtype", "reduce_window_shape_tuple", "scatter_apply", "scatter_sub",
           "with_sharding_constraint"]
