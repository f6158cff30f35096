"""``torch.signal.windows`` against real torch: every window on drawn lengths, symmetry,
parameters and both float dtypes (float64 exactly; float32 within a few ulps, as the
float32 transcendental kernels may differ in the last bits), and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch.signal import windows

_KW: dict[str, Any] = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "hamming": {}, "hann": {}, "nuttall": {},
    "exponential": {"tau": 1.7}, "gaussian": {"std": 0.8}, "kaiser": {"beta": 5.0},
    "general_hamming": {"alpha": 0.6}, "general_cosine": {"a": [0.5, 0.3, 0.2]}}


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(_KW)), M=st.integers(0, 40), sym=st.booleans(),
       double=st.booleans())
def test_windows_match_pytorch(name: str, M: int, sym: bool, double: bool) -> None:  # noqa: N803
    torch = pytest.importorskip("torch")
    from torch.signal import windows as tw

    ours = getattr(windows, name)(M, sym=sym, dtype=ft.float64 if double else ft.float32,
                                  **_KW[name]).numpy()
    theirs = getattr(tw, name)(M, sym=sym, dtype=torch.float64 if double else torch.float32,
                               **_KW[name]).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if double:
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=1e-15)
    else:
        # float32 within a few ulps: kaiser's i0 in float32 rounds differently from torch's
        # in the last bits (seen: 5.4e-7 relative at M=15).
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)


def test_values_and_errors() -> None:
    # Independent values: SciPy's definitions.
    np.testing.assert_allclose(windows.hann(5).numpy(), [0, 0.5, 1, 0.5, 0], atol=1e-7)
    np.testing.assert_allclose(windows.bartlett(4, dtype=ft.float64).numpy(),
                               [0, 2 / 3, 2 / 3, 0], atol=1e-15)
    assert windows.kaiser(1).tolist() == [1.0] and windows.hann(0).shape == (0,)
    with pytest.raises(ValueError, match="^general_cosine requires non-negative window "
                                         "length, got M=-1$"):
        windows.hann(-1)
    with pytest.raises(ValueError, match="^general_cosine expects float32 or float64 dtypes, "
                                         "got: torch.int64$"):
        windows.hann(3, dtype=ft.int64)
    with pytest.raises(ValueError, match="^Center must be None for symmetric windows$"):
        windows.exponential(3, center=1.0)
    with pytest.raises(ValueError, match="^Standard deviation must be positive"):
        windows.gaussian(3, std=0)
