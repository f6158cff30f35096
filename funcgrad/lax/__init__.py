"""Low-level operations, one per primitive, shape- and dtype-exact (no broadcasting).

>>> import numpy as np
>>> from funcgrad import lax
>>> lax.add(np.ones(2), np.ones(2))
array([2., 2.])
"""

from funcgrad.primitives.elementwise import (
    add,
    convert_element_type,
    cos,
    div,
    eq,
    erf,
    erfc,
    exp,
    ge,
    gt,
    integer_pow,
    le,
    log,
    lt,
    max_,
    min_,
    mul,
    ne,
    neg,
    pow_,
    reciprocal,
    rsqrt,
    select,
    sign,
    sin,
    sqrt,
    square,
    stop_gradient,
    sub,
)
from funcgrad.primitives.indexing import (
    dynamic_slice,
    dynamic_update_slice,
    gather,
    scatter,
    scatter_add,
)
from funcgrad.primitives.linalg import dot_general
from funcgrad.primitives.reductions import (
    argmax,
    argmin,
    cumsum,
    reduce_max,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from funcgrad.primitives.structural import (
    broadcast_in_dim,
    concatenate,
    expand_dims,
    iota,
    pad,
    reshape,
    rev,
    slice_,
    squeeze,
    transpose,
)

_CONTROL_FLOW = ("cond", "switch", "while_loop", "fori_loop", "scan")


def __getattr__(name: str) -> object:
    # Control flow lives with the transformations it needs; load it on first use.
    if name in _CONTROL_FLOW:
        from funcgrad.transforms import control_flow  # noqa: PLC0415

        return getattr(control_flow, name)
    raise AttributeError(f"module 'funcgrad.lax' has no attribute {name!r}")


max = max_  # noqa: A001 - lax's name
min = min_  # noqa: A001 - lax's name
pow = pow_  # noqa: A001 - lax's name
slice = slice_  # noqa: A001 - lax's name

__all__ = [  # noqa: PLE0604 - lazy names are listed too
    *_CONTROL_FLOW,
    "add", "argmax", "argmin", "broadcast_in_dim", "concatenate", "convert_element_type", "cos",
    "cumsum", "div", "dot_general", "erf", "erfc", "dynamic_slice", "dynamic_update_slice", "eq", "exp",
    "expand_dims", "gather", "ge", "gt", "integer_pow", "iota", "le", "log", "lt", "max", "min",
    "mul", "ne", "neg", "pad", "pow", "reciprocal", "reduce_max", "reduce_min", "reduce_prod",
    "reduce_sum", "reshape", "rev", "rsqrt", "scatter", "scatter_add", "select", "sign", "sin",
    "slice", "sqrt", "square", "squeeze", "stop_gradient", "sub", "transpose",
]
