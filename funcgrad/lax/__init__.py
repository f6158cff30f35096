"""``jax.lax``: one function per primitive, shape- and dtype-exact (no broadcasting or
promotion; a Python number takes the other operand's dtype), the ``*_p`` primitives
themselves, and structured control flow.

Each function is the one its primitive's definition carries (``Primitive.lax_fn``):
adding a primitive adds its lax function.

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.add(np.ones(2), np.ones(2))  # NumPy's float64 is float32 unless x64 is on
Array([2., 2.], dtype=float32)
>>> lax.tanh(np.zeros(1, np.float32))
Array([0.], dtype=float32)
"""

from collections.abc import Sequence
from typing import Any

from funcgrad.core import PRIMITIVES as _PRIMITIVES
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
    import builtins  # noqa: PLC0415

    from funcgrad.core import get_aval  # noqa: PLC0415

    shape = get_aval(operand).shape
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    n = shape[axis]
    # the module's ``slice`` and ``max`` are lax's: the builtins work on Python ints
    s, e, st = builtins.slice(start_index, limit_index, stride).indices(n)
    start[axis], limit[axis], strides[axis] = s, builtins.max(e, s), st
    return globals()["slice"](operand, start, limit, strides)


__all__ += ["slice_in_dim"]

from funcgrad.primitives.fft import FftType  # noqa: E402 - the fft primitive's enum

__all__ += ["FftType"]

from funcgrad.primitives.sorting import sort_key_val  # noqa: E402 - composite of sort

__all__ += ["sort_key_val"]

from funcgrad.lax._reduce_window import reduce_window  # noqa: E402
from funcgrad.primitives.convolution import (  # noqa: E402 - wrappers of the primitives
    ConvDimensionNumbers,
    ConvGeneralDilatedDimensionNumbers,
    conv,
    conv_dimension_numbers,
    conv_general_permutations,
    conv_transpose,
    conv_with_general_padding,
    padtype_to_pads,
)

__all__ += ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "conv",
            "conv_dimension_numbers", "conv_general_permutations", "conv_transpose",
            "conv_with_general_padding", "padtype_to_pads", "reduce_window"]


from funcgrad.lax._parallel import (  # noqa: E402 - after the primitive functions
    all_gather,
    all_to_all,
    axis_index,
    axis_size,
    pmax,
    pmean,
    pmin,
    ppermute,
    pshuffle,
    psum,
    psum_scatter,
)

__all__ += ["all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin",
            "ppermute",
            "pshuffle", "psum", "psum_scatter"]

from funcgrad.lax._more import (  # noqa: E402
    approx_max_k,
    approx_min_k,
    batch_matmul,
    broadcast,
    broadcast_like,
    broadcast_shapes,
    broadcast_to_rank,
    broadcasted_iota,
    clamp,
    collapse,
    dot,
    dynamic_index_in_dim,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim,
    empty,
    full,
    full_like,
    index_in_dim,
    index_take,
    mulhi,
    optimization_barrier,
    platform_dependent,
    ragged_dot,
    reduce,
    reduce_and,
    reduce_or,
    reduce_precision,
    reduce_xor,
    select_n,
    split,
    stack,
    tile,
    unstack,
)
from funcgrad.scans import (  # noqa: E402 - compositions of the primitives
    associative_scan,
    cumlogsumexp,
    cummax,
    cummin,
    cumprod,
)

__all__ += ["associative_scan", "cumlogsumexp", "cummax", "cummin", "cumprod",
            "approx_max_k", "approx_min_k", "batch_matmul", "broadcast", "broadcast_like",
            "broadcast_shapes", "broadcast_to_rank", "broadcasted_iota", "clamp", "collapse",
            "dot", "dynamic_index_in_dim", "dynamic_slice_in_dim", "dynamic_update_index_in_dim",
            "dynamic_update_slice_in_dim", "empty", "full", "full_like", "index_in_dim",
            "index_take", "mulhi", "optimization_barrier", "platform_dependent", "ragged_dot",
            "reduce", "reduce_and", "reduce_or", "reduce_precision", "reduce_xor", "select_n",
            "split", "stack", "tile", "unstack"]

from funcgrad.lax._solvers import custom_root  # noqa: E402
from funcgrad.lax._solvers import linear_solve_p as _linear_solve_p  # noqa: E402

# The primitive's lax function (its NumPy operands canonicalized, as every lax function's).
custom_linear_solve = _linear_solve_p.lax_fn

__all__ += ["custom_linear_solve", "custom_root", "linear_solve_p"]
linear_solve_p = _PRIMITIVES["linear_solve"]


def __getattr__(name: str) -> Any:
    # Control flow lives with the transformations it needs; load it on first use.
    if name in _CONTROL_FLOW:
        from funcgrad.transforms import control_flow  # noqa: PLC0415

        return getattr(control_flow, "map_" if name == "map" else name)
    if name in ("cond_p", "while_p", "scan_p"):
        from funcgrad.transforms import control_flow  # noqa: PLC0415

        return getattr(control_flow, name)
    if name == "pvary":  # removed from JAX, with this message
        raise AttributeError("jax.lax.pvary was deprecated in JAX v0.8.2 and removed in JAX "
                             "v0.10.0; use `jax.lax.pcast(..., to='varying')")
    raise AttributeError(f"module 'funcgrad.lax' has no attribute {name!r}")

from funcgrad.lax import linalg  # noqa: E402 - jax.lax.linalg, after the primitives
from funcgrad.lax._names_more import (  # noqa: E402 - compositions of the primitives
    RandomAlgorithm,
    composite,
    conv_general_dilated_local,
    conv_general_dilated_patches,
    conv_general_shape_tuple,
    conv_shape_tuple,
    conv_transpose_shape_tuple,
    dtype,
    reduce_window_shape_tuple,
    scatter_apply,
    scatter_sub,
    with_sharding_constraint,
)
from funcgrad.primitives.elementwise import RoundingMethod  # noqa: E402 - lax.round's enum
from funcgrad.primitives.general_gather_scatter import (  # noqa: E402
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from funcgrad.primitives.precision import (  # noqa: E402 - precision= of the products
    AccuracyMode,
    DotAlgorithm,
    DotAlgorithmPreset,
    Precision,
    PrecisionLike,
    Tolerance,
)

# The dimension numbers of dot_general: ((lhs_contract, rhs_contract), (lhs_batch,
# rhs_batch)); a type, as JAX's lax.DotDimensionNumbers.
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]

__all__ += ["AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers",
            "GatherDimensionNumbers", "GatherScatterMode", "Precision", "PrecisionLike",
            "RandomAlgorithm", "RoundingMethod", "ScatterDimensionNumbers", "Tolerance",
            "composite", "conv_general_dilated_patches", "conv_general_shape_tuple",
            "conv_shape_tuple", "conv_transpose_shape_tuple", "dtype",
            "reduce_window_shape_tuple", "scatter_apply", "scatter_sub",
            "with_sharding_constraint"]
