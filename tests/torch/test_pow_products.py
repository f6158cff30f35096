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


def _pow_then_write(L: object, p: object, hit_exponent: bool) -> str:
    x = L.tensor([1.0, 3.0, 4.0], requires_grad=not hit_exponent)  # type: ignore[attr-defined]
    e = L.tensor([2.0, 1.5, 0.5], requires_grad=hit_exponent)  # type: ignore[attr-defined]
    y = x ** (e if p == "tensor" else p)
    y.mul_(10)
    try:
        y.sum().backward()
    except RuntimeError as err:
        return str(err).split(" is at version")[0]
    return repr((x.grad, e.grad))


@pytest.mark.parametrize("hit_exponent", [False, True])
@pytest.mark.parametrize("p", [2, 2.0, 3, 1.5, -1.5, "tensor"])
def test_changing_a_power_in_place_is_refused_only_where_torch_refuses(p: object,
                                                                       hit_exponent: bool
                                                                       ) -> None:
    # The base's derivative reads the operands, the exponent's the result (PyTorch's
    # pow_backward / pow_backward_exponent): only the second is refused after y.mul_(10).
    if hit_exponent and p != "tensor":
        pytest.skip("a number exponent has no gradient")
    assert _pow_then_write(ft, p, hit_exponent) == _pow_then_write(torch, p, hit_exponent)
