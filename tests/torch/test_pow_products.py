"""``x ** 3`` and ``x ** -2`` as PyTorch's CPU kernel computes them (``x * x * x`` and
``1 / (x * x)``, not libm's pow) in float32, float64 and bfloat16, with their gradients;
float16 goes through pow in float, rounded once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from tests.torch._outcomes import values

torch = pytest.importorskip("torch")


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-40, 40, width=32), min_size=1, max_size=64),
       st.sampled_from([2, 3, -2, -1, 3.0, -2.0]),
       st.sampled_from(["float32", "float64", "bfloat16", "float16"]))
def test_small_integer_powers_match_torch_bit_for_bit(xs: list[float], n: float,
                                                      dt: str) -> None:
    def run(L: object) -> tuple[np.ndarray, np.ndarray]:
        t = L.tensor(np.asarray(xs, np.float32)).to(getattr(L, dt))  # type: ignore[attr-defined]
        t.requires_grad_()
        y = t ** n
        (g,) = L.autograd.grad(y.sum(), t)  # type: ignore[attr-defined]
        return values(y.float()), values(g.float())

    (ours, gours), (theirs, gtheirs) = run(ft), run(torch)
    np.testing.assert_array_equal(ours, theirs)
    if n in (2, 3, 3.0) or dt == "float16":
        # (The derivative of a negative power is n * pow(x, n - 1), libm's pow in
        # PyTorch: the last bit can differ.)
        np.testing.assert_array_equal(gours, gtheirs)
