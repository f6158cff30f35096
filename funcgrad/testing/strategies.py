"""Hypothesis strategies for shapes and arrays (needs ``hypothesis``, the ``test`` extra).

>>> from hypothesis import given
>>> from funcgrad.testing.strategies import arrays, shapes
>>> @given(arrays(shapes(max_dims=2)))
... def test_finite(x):
...     assert (abs(x) <= 3).all()
>>> test_finite()
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


def shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
           ) -> st.SearchStrategy[tuple[int, ...]]:
    """Array shapes."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def arrays(shape: Any, dtype: Any = np.float64, low: float = -3.0, high: float = 3.0
           ) -> st.SearchStrategy[np.ndarray]:
    """Float arrays of ``shape`` (a shape or a strategy) with values in ``[low, high]``.

    Values are kept away from exact ties so that finite differences of
    piecewise functions (max, abs, sort) stay meaningful.
    """
    dt = np.dtype(dtype)
    elements: st.SearchStrategy[Any]
    if dt.kind in "iu":
        elements = st.integers(int(low), int(high))
    elif dt.kind == "b":
        elements = st.booleans()
    else:
        elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=64
                             if dt == np.float64 else 32)
    return hnp.arrays(dt, shape, elements=elements)


def broadcastable_shapes(num: int = 2, max_dims: int = 3, max_side: int = 4
                         ) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    """``num`` shapes that broadcast together."""
    return hnp.mutually_broadcastable_shapes(num_shapes=num, max_dims=max_dims,
                                             max_side=max_side).map(lambda r: r.input_shapes)


def distinct_arrays(shape: Any, low: float = -3.0, high: float = 3.0, min_gap: float = 1e-2
                    ) -> st.SearchStrategy[np.ndarray]:
    """Float64 arrays whose entries differ pairwise by at least ``min_gap``."""
    def fix(a: np.ndarray) -> np.ndarray:
        flat = a.reshape(-1)
        order = np.argsort(flat, kind="stable")
        spread = flat.copy()
        spread[order] = np.sort(flat) + min_gap * np.arange(flat.size)
        return spread.reshape(a.shape)

    return arrays(shape, np.float64, low, high).map(fix)
