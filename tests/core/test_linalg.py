"""funcgrad.numpy.linalg.norm against numpy.linalg.norm, and its derivatives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.numpy as fnp
from funcgrad.testing import check_grads
from funcgrad.testing.strategies import distinct_arrays

CASES: list[tuple[int, dict[str, Any]]] = [
    (1, {}), (1, {"ord": 1}), (1, {"ord": np.inf}), (1, {"ord": -np.inf}), (1, {"ord": 3}),
    (2, {}), (2, {"ord": "fro"}), (2, {"ord": 1}), (2, {"ord": -1}), (2, {"ord": np.inf}),
    (2, {"axis": 1}), (2, {"axis": 0, "ord": 1}), (2, {"axis": -1, "keepdims": True}),
    (3, {}), (3, {"axis": (0, 2)}), (3, {"axis": 1, "ord": 4}),
]


@pytest.mark.parametrize("ndim,kw", CASES, ids=[f"{n}d-{k}" for n, k in CASES])
@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=st.data())
def test_norm_matches_numpy_and_differentiates(ndim: int, kw: dict[str, Any], data: Any) -> None:
    shape = data.draw(st.tuples(*[st.integers(1, 4)] * ndim))
    # Distinct, nonzero entries keep max/min/abs away from their kinks.
    x = data.draw(distinct_arrays(shape, 0.2, 3.0, min_gap=0.05))
    x = x * data.draw(st.sampled_from([1.0, -1.0]))
    got = fnp.linalg.norm(x, **kw)
    want = np.linalg.norm(x, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.shape(got) == np.shape(want)
    check_grads(lambda a: fnp.linalg.norm(a, **kw), (x,), order=2)


def test_norm_errors() -> None:
    # The spectral norm (ord=2) is the largest singular value now that svd is a primitive.
    np.testing.assert_allclose(float(fnp.linalg.norm(np.ones((2, 2)), 2)),
                               np.linalg.norm(np.ones((2, 2)), 2))
    with pytest.raises(ValueError, match=r"Improper number of axes for norm: axis=\(0, 1, 2\)"):
        fnp.linalg.norm(np.ones((2, 2, 2)), 1)
