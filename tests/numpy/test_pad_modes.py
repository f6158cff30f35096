"""``jnp.pad`` in every mode NumPy has (JAX's), against ``numpy.pad`` on drawn arrays, widths
and options: per-side constants, odd reflections, edge statistics over ``stat_length``,
linear ramps to ``end_values``; float and integer dtypes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad.numpy as fnp

pytestmark = pytest.mark.x32

MODES = ["constant", "edge", "reflect", "symmetric", "wrap", "linear_ramp", "maximum",
         "minimum", "mean", "median"]


@st.composite
def _case(draw):
    dtype = draw(st.sampled_from([np.float32, np.int32]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4))
    a = draw(hnp.arrays(dtype, shape, elements=st.integers(-20, 20)))
    widths = tuple((draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in shape)
    mode = draw(st.sampled_from(MODES))
    kw = {}
    if mode == "constant" and draw(st.booleans()):
        kw["constant_values"] = tuple((draw(st.integers(-9, 9)), draw(st.integers(-9, 9)))
                                      for _ in shape)
    if mode in ("reflect", "symmetric") and draw(st.booleans()):
        kw["reflect_type"] = "odd"
    if mode == "linear_ramp":
        kw["end_values"] = (draw(st.integers(-9, 9)), draw(st.integers(-9, 9)))
    if mode in ("maximum", "minimum", "mean", "median") and draw(st.booleans()):
        kw["stat_length"] = draw(st.integers(1, 4))
    return a, widths, mode, kw


@given(_case())
@settings(deadline=None, max_examples=120)
def test_pad_matches_numpy(case):
    a, widths, mode, kw = case
    got = fnp.pad(fnp.asarray(a), widths, mode=mode, **kw)
    want = np.pad(a, widths, mode=mode, **kw)
    assert np.dtype(got.dtype) == want.dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)


def test_unknown_mode_and_keywords():
    with pytest.raises(ValueError, match="Unimplemented padding mode 'bogus'"):
        fnp.pad(fnp.ones(2), 1, mode="bogus")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        fnp.pad(fnp.ones(2), 1, mode="edge", stat_length=1)
