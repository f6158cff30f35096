"""Indexed writes (``scatter``, ``index_put``, ``x[i] = v``, ``index_copy``, ``put``) with
PyTorch's derivative.

Where an index repeats, only one of the written values lands. The engine's scatter rule
(JAX's) gives the output's gradient to that value alone; PyTorch's backward gathers the
gradient at every index, so each repeated value receives it too. ``write`` keeps the
engine's forward value and gives the derivative PyTorch's shape: the input's gradient is
zero where anything was written, and the values' gradient is the output's gradient read
at their indices.

>>> import numpy as np
>>> import funcgrad
>>> import funcgrad.numpy as fnp
>>> i = np.array([0, 0])
>>> f = lambda v: write(fnp.zeros(3), v, lambda x, v, i: x.at[i].set(v),
...                     lambda x, v, i: x.at[i].add(v), i).sum()
>>> funcgrad.grad(f)(fnp.array([1.0, 2.0])).tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.numpy as fnp
from funcgrad.core import Tracer
from funcgrad.transforms.custom import custom_jvp

Update = Callable[..., Any]


def write(x: Any, v: Any, put: Update, add: Update, *index: Any) -> Any:
    """``put(x, v, *index)`` (``v`` written at the positions ``index`` names in ``x``),
    differentiated as PyTorch differentiates the write; ``add(z, v, *index)`` adds ``v``
    at the same positions of ``z``. (The index operands are passed, not closed over: under
    a recording they are tracers.)

    >>> import funcgrad.numpy as fnp
    >>> write(fnp.zeros(2), 5.0, lambda x, v: x.at[1].set(v),
    ...       lambda x, v: x.at[1].add(v)).tolist()
    [0.0, 5.0]
    """
    if not isinstance(v, Tracer) or not np.issubdtype(np.dtype(fnp.result_type(x)),
                                                      np.inexact):
        # The input's derivative alone is the engine's already: zero where written.
        return put(x, v, *index)
    # Zeros made like ``x`` are on its device (a CuPy array's, under the GPU backend).
    base = fnp.zeros_like(x)

    # The written values on zeros, with the derivative that reads the output's gradient at
    # every index. ``x`` is no operand of it, so the node keeps no reference to ``x``'s
    # values (nor does PyTorch's: changing ``x`` in place afterwards is allowed).
    @custom_jvp
    def values(v: Any, base: Any, *index: Any) -> Any:
        return put(base, v, *index)

    @values.defjvp
    def _values_jvp(primals: Any, tangents: Any) -> Any:
        (v, base, *index), (dv, *_) = primals, tangents
        return values(v, base, *index), add(base, fnp.astype(dv, base.dtype), *index)

    written = put(fnp.zeros_like(x, dtype=bool), True, *index)
    return fnp.where(written, values(v, base, *index), x)
