"""The CPU threefry kernels (numba loop, NumPy blocks) against the array-module rounds of
``funcgrad.primitives.prng`` and the Threefry-2x32 known-answer vector, with broadcast
operands as ``vmap`` over keys makes them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad.primitives import _threefry_cpu as T
from funcgrad.primitives import prng

U32 = st.integers(0, 2 ** 32 - 1)


def _reference(k1: np.ndarray, k2: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> list:
    with np.errstate(over="ignore"):
        return prng._threefry_rounds(np, k1, k2, x1, x2)


def _both_paths(*ops: np.ndarray) -> list[list[np.ndarray]]:
    saved, saved_min = T._kernel, T.MIN_SIZE
    try:
        T.MIN_SIZE = 0
        out = [T.threefry_numpy(*ops)]          # numba where installed
        T._kernel = False
        out.append(T.threefry_numpy(*ops))      # NumPy blocks
    finally:
        T._kernel, T.MIN_SIZE = saved, saved_min
    return out


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 40000), seed=st.integers(0, 2 ** 32 - 1),
       which=st.lists(st.booleans(), min_size=4, max_size=4))
def test_kernels_equal_the_rounds(n: int, seed: int, which: list[bool]) -> None:
    rng = np.random.default_rng(seed)
    # Each operand is either a full array or a broadcast scalar.
    ops = [rng.integers(0, 2 ** 32, n if full else (), dtype=np.uint32) for full in which]
    want = _reference(*ops)
    for got in _both_paths(*ops):
        for g, w in zip(got, want, strict=True):
            assert g.dtype == np.uint32 and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


def test_known_answer_and_shapes() -> None:
    u = np.uint32
    for got in _both_paths(u(0x13198A2E), u(0x03707344), np.full((2, 3), 0x243F6A88, u),
                           np.full((2, 3), 0x85A308D3, u)):
        assert got[0].shape == (2, 3)
        assert (got[0] == 0xC4923A9C).all() and (got[1] == 0x483DF7A0).all()
    # a (2, 1) key column against a (1, 3) count row: materialised broadcasting
    k = np.array([[1], [2]], u)
    x = np.array([[5, 6, 7]], u)
    for got in _both_paths(k, u(9), x, u(0)):
        np.testing.assert_array_equal(got[0], _reference(k, u(9), x, u(0))[0])
