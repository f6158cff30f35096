"""jit's rewrite of ``transpose(dot_general(a, b))`` into ``dot_general(b, a)``
(backends/compile_python.transposed_products): same values, taken only where the
permutation is the product's swap and the product has no other use."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import lax
from funcgrad.backends.compile_python import transposed_products


@st.composite
def products(draw: Any) -> tuple[np.ndarray, np.ndarray, Any, tuple[int, ...]]:
    nb, nl, nr, nc = (draw(st.integers(0, 1)), draw(st.integers(0, 2)),
                      draw(st.integers(0, 2)), draw(st.integers(1, 2)))
    size = st.integers(1, 3)
    batch = [draw(size) for _ in range(nb)]
    contract = [draw(size) for _ in range(nc)]
    a = np.random.default_rng(draw(st.integers(0, 99))).standard_normal(
        (*batch, *[draw(size) for _ in range(nl)], *contract))
    b = np.random.default_rng(draw(st.integers(0, 99))).standard_normal(
        (*batch, *contract, *[draw(size) for _ in range(nr)]))
    dn = ((tuple(range(nb + nl, nb + nl + nc)), tuple(range(nb, nb + nc))),
          (tuple(range(nb)), tuple(range(nb))))
    perm = tuple(draw(st.permutations(range(nb + nl + nr))))
    return a, b, dn, perm


@settings(max_examples=60, deadline=None)
@given(products())
def test_jit_of_a_transposed_product_equals_eager(case: Any) -> None:
    a, b, dn, perm = case
    fg.config.update("jax_enable_x64", True)
    try:
        def f(x: Any, y: Any) -> Any:
            return lax.transpose(lax.dot_general(x, y, dn), perm)

        np.testing.assert_allclose(np.asarray(fg.jit(f)(a, b)), np.asarray(f(a, b)),
                                   rtol=1e-12, atol=1e-12)
    finally:
        fg.config.update("jax_enable_x64", False)


def test_only_the_swap_with_a_single_use_is_rewritten() -> None:
    a, b = np.ones((2, 3)), np.ones((3, 4))
    swap = fg.make_jaxpr(lambda x, y: (x @ y).T)(a, b)
    assert [e.primitive.name for e in transposed_products(swap).jaxpr.eqns] == ["dot_general"]
    def twice(x: Any, y: Any) -> Any:
        p = x @ y
        return p.T, p  # the product is used twice: it must stay

    kept = fg.make_jaxpr(twice)(a, b)
    names = [e.primitive.name for e in transposed_products(kept).jaxpr.eqns]
    assert "transpose" in names
