"""The NumPy kernels' fast paths give exactly what their general paths (and NumPy) give:
the branch-free ``select`` for large 4-byte arrays, max-pool selections on tiling windows,
and both im2col layouts of the convolution (against a direct NumPy reference)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad.primitives import convolution as C
from funcgrad.primitives import elementwise as E
from funcgrad.primitives import windows as W


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.float16])
@pytest.mark.parametrize("size", [10, 70_000])
def test_select_equals_numpy_where_bit_for_bit(dtype, size):
    rng = np.random.default_rng(size)
    t = (rng.standard_normal(size) * 10).astype(dtype)
    f = (rng.standard_normal(size) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f":
        t[:4] = [np.nan, np.inf, -0.0, -np.inf]
        f[:4] = [-0.0, np.nan, 1.0, 0.0]
    p = rng.random(size) < 0.5
    got = E._select_impl(np, p, t, f)
    want = np.where(p, t, f)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.dtype.itemsize}"),
                                  want.view(f"u{want.dtype.itemsize}"))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.int64])
@pytest.mark.parametrize("zero", ["+0", "-0", "one"])
@pytest.mark.parametrize("side", ["on_true", "on_false"])
def test_select_against_a_broadcast_constant_equals_numpy_where(dtype, zero, side):
    """relu's select and the rules' zeros: one side a stride-0 broadcast (+0.0 takes the
    one-AND path; -0.0 and other values must not)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((90, 100)) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f":
        x[0, :5] = [np.nan, np.inf, -0.0, -np.inf, 0.0]
    value = {"+0": 0.0, "-0": -0.0, "one": 1.0}[zero]
    c = np.broadcast_to(np.asarray(value).astype(dtype), x.shape)
    p = rng.random(x.shape) < 0.5
    t, f = (c, x) if side == "on_true" else (x, c)
    got = E._select_impl(np, p, t, f)
    want = np.where(p, t, f)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{got.dtype.itemsize}"),
                                  want.view(f"u{want.dtype.itemsize}"))


def test_select_with_strided_operands():
    rng = np.random.default_rng(1)
    t = rng.standard_normal((400, 400)).astype(np.float32)[:, ::2]
    f = rng.standard_normal((200, 400)).astype(np.float32).T
    p = (rng.random((400, 200)) < 0.3)
    np.testing.assert_array_equal(E._select_impl(np, p, t, f), np.where(p, t, f))


def _general(fn):
    def run(*args, **kwargs):
        saved = W._tiling
        W._tiling = lambda *a: None
        try:
            return fn(*args, **kwargs)
        finally:
            W._tiling = saved
    return run


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_pool_selections_on_tiling_windows_match_the_general_path(data):
    nd = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=nd, max_size=nd)))
    win = tuple(data.draw(st.integers(1, n)) for n in shape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    # Small integers: ties are frequent, and the first extreme must win.
    x = rng.integers(-2, 3, shape).astype(np.float64)
    if data.draw(st.booleans()):
        x.flat[rng.integers(0, x.size)] = np.nan
    params = {"window_dimensions": win, "window_strides": win,
              "padding": tuple((0, 0) for _ in win), "base_dilation": (1,) * nd,
              "window_dilation": (1,) * nd}
    out = W._out_shape(x.shape, **params)
    s = rng.standard_normal(out)
    t = rng.standard_normal(shape)
    if data.draw(st.booleans()):
        # A non-finite source value must land only where it is picked.
        s.flat[rng.integers(0, s.size)] = data.draw(st.sampled_from([np.inf, np.nan]))
    if data.draw(st.booleans()):
        x = x.astype(np.int32) if not np.isnan(x).any() else x
    for sel in ("ge", "le"):
        np.testing.assert_array_equal(W._sas_impl(np, s, x, select_prim=sel, **params),
                                      _general(W._sas_impl)(np, s, x, select_prim=sel,
                                                            **params))
        np.testing.assert_array_equal(W._sga_impl(np, t, x, select_prim=sel, **params),
                                      _general(W._sga_impl)(np, t, x, select_prim=sel,
                                                            **params))


def _direct_conv(x, w, stride, pad, groups):
    """Cross-correlation by loops over the kernel taps (NumPy only)."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), pad[0], pad[1]))
    oh = (xp.shape[2] - kh) // stride[0] + 1
    ow = (xp.shape[3] - kw) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + stride[0] * oh:stride[0], j:j + stride[1] * ow:stride[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                          w[g * og:(g + 1) * og, :, i, j])
    return out


@pytest.mark.parametrize("threshold", [0, 10**9])
@settings(max_examples=25, deadline=None)
@given(st.data())
def test_both_convolution_layouts_match_a_direct_reference(threshold, data):
    groups = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 3))
    cg, og = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    h, wd = data.draw(st.integers(3, 12)), data.draw(st.integers(3, 12))
    kh, kw = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    stride = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2)))
    pad = ((data.draw(st.integers(0, 2)),) * 2, (data.draw(st.integers(0, 2)),) * 2)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    x = rng.standard_normal((n, cg * groups, h, wd))
    w = rng.standard_normal((og * groups, cg, kh, kw))
    saved = C._ROWS_LAYOUT_MIN_POSITIONS
    C._ROWS_LAYOUT_MIN_POSITIONS = threshold
    try:
        got = C._conv_canonical(np, x, w, stride, pad, (1, 1), (1, 1), groups, 1)
    finally:
        C._ROWS_LAYOUT_MIN_POSITIONS = saved
    np.testing.assert_allclose(got, _direct_conv(x, w, stride, pad, groups), rtol=1e-10,
                               atol=1e-10)


@pytest.mark.parametrize("threshold", [0, 10**9])
def test_both_layouts_with_batch_groups(threshold):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 6, 5))
    w = rng.standard_normal((6, 3, 2, 2))
    saved = C._ROWS_LAYOUT_MIN_POSITIONS
    try:
        C._ROWS_LAYOUT_MIN_POSITIONS = threshold
        got = C._conv_canonical(np, x, w, (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 2)
        C._ROWS_LAYOUT_MIN_POSITIONS = 10**9 if threshold == 0 else 0
        other = C._conv_canonical(np, x, w, (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 2)
    finally:
        C._ROWS_LAYOUT_MIN_POSITIONS = saved
    # XLA's batch_group_count: output batch = N / groups, so each output image combines
    # one image from each batch group.
    want = np.stack([np.concatenate([_direct_conv(x[b * 2 + i:b * 2 + i + 1],
                                                  w[b * 3:(b + 1) * 3], (1, 1),
                                                  ((0, 0), (0, 0)), 1)[0]
                                     for b in range(2)], axis=0) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(other, got, rtol=1e-10)
