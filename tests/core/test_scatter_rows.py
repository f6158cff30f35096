"""Scatters of whole rows (the transpose of a row gather: an LU's permutation, an
embedding's lookup): the grouped update (sorted, repeats combined by reduceat, one
fancy-indexed pass) equals a loop over the updates, repeats combining once per occurrence
(sums and products up to rounding)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from funcgrad.primitives import indexing as I

COMBINE = {"scatter_add": np.add, "scatter_mul": np.multiply, "scatter_min": np.minimum,
           "scatter_max": np.maximum}


@st.composite
def row_scatters(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, str]:
    rows = draw(st.integers(1, 6))
    width = draw(st.sampled_from([16, 17, 40]))  # slices long enough for the fast path
    lead = draw(st.sampled_from([(), (2,)]))
    op = np.asarray(draw(st.lists(st.floats(-3, 3, allow_subnormal=False),
                                  min_size=rows * width * (2 if lead else 1),
                                  max_size=rows * width * (2 if lead else 1))))
    op = op.reshape((rows, *lead, width))
    distinct = draw(st.booleans())
    if distinct:
        idx = np.asarray(draw(st.permutations(range(rows))))[:draw(st.integers(1, rows))]
    else:
        idx = np.asarray(draw(st.lists(st.integers(-2, rows + 1), min_size=2, max_size=8)))
    upd = np.asarray(draw(st.lists(st.floats(-3, 3, allow_subnormal=False),
                                   min_size=idx.size * op[0].size,
                                   max_size=idx.size * op[0].size)))
    upd = upd.reshape((idx.size, *op.shape[1:]))
    return op, idx[:, None], upd, draw(st.sampled_from(["clip", "drop"])), \
        draw(st.sampled_from(sorted(COMBINE)))


def _reference(op: np.ndarray, idx: np.ndarray, upd: np.ndarray, mode: str,
               combine: Any) -> np.ndarray:
    out = op.copy()
    for i, u in zip(idx[:, 0], upd):
        if mode == "clip":
            i = min(max(i, 0), op.shape[0] - 1)
        elif not 0 <= i < op.shape[0]:
            continue
        out[i] = combine(out[i], u)
    return out


@given(row_scatters())
def test_row_scatter_matches_a_loop(case: tuple[Any, ...]) -> None:
    op, idx, upd, mode, name = case
    prim = getattr(I, f"{name}_p")
    got = prim.impl(np, op, idx, upd, mode=mode)
    want = _reference(op, idx, upd, mode, COMBINE[name])
    if name in ("scatter_min", "scatter_max"):
        np.testing.assert_array_equal(got, want)
    else:  # repeats combine in another association: rounding only
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(op, case[0])  # the operand is not written


def test_row_scatters_take_the_grouped_update() -> None:
    out = np.zeros((4, 16))
    assert I._grouped_at(np.add, out, (np.array([2, 0, 2]),), np.ones((3, 16)))
    np.testing.assert_array_equal(out[:, 0], [1, 0, 2, 0])
    assert not I._grouped_at(np.add, np.zeros((4, 3)), (np.array([2, 0]),), np.ones((2, 3)))
