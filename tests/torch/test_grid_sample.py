"""``F.affine_grid`` and ``F.grid_sample``: values and gradients (input and grid) against
PyTorch 2.13 on drawn inputs, every mode, padding mode and ``align_corners``; gradients
also against central finite differences (float64). PyTorch's checks skip cleanly
without it."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F


def _torch():
    return pytest.importorskip("torch", exc_type=ImportError)


CASES2D = list(itertools.product(["bilinear", "nearest", "bicubic"],
                                 ["zeros", "border", "reflection"], [False, True]))
CASES3D = list(itertools.product(["bilinear", "nearest"], ["zeros", "border", "reflection"],
                                 [False, True]))


def _draw(seed, spatial, out_spatial, n=2, c=2, scale=1.3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c, *spatial))
    # Points inside and outside [-1, 1], so that the padding modes matter.
    g = rng.uniform(-scale, scale, (n, *out_spatial, len(spatial)))
    return x, g


def _both(x, g, mode, padding, align):
    torch = _torch()
    out = []
    for m, fn in ((ft, F.grid_sample), (torch, torch.nn.functional.grid_sample)):
        xi = m.tensor(x, requires_grad=True)
        gi = m.tensor(g, requires_grad=True)
        y = fn(xi, gi, mode=mode, padding_mode=padding, align_corners=align)
        w = m.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        out.append((y.detach().numpy(), xi.grad.numpy(), gi.grad.numpy(),
                    type(y.grad_fn).__name__))
    return out


@pytest.mark.parametrize("mode,padding,align", CASES2D)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31), h=st.integers(1, 5), w=st.integers(1, 5),
       ho=st.integers(1, 4), wo=st.integers(1, 4))
def test_grid_sample_2d_matches_pytorch(mode, padding, align, seed, h, w, ho, wo):
    x, g = _draw(seed, (h, w), (ho, wo))
    (y, gx, gg, name), (ty, tgx, tgg, tname) = _both(x, g, mode, padding, align)
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, tgx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg, tgg, rtol=1e-9, atol=1e-10)
    assert name == tname


@pytest.mark.parametrize("mode,padding,align", CASES3D)
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**31), d=st.integers(1, 3), h=st.integers(1, 3),
       w=st.integers(1, 3))
def test_grid_sample_3d_matches_pytorch(mode, padding, align, seed, d, h, w):
    x, g = _draw(seed, (d, h, w), (2, 2, 3))
    (y, gx, gg, name), (ty, tgx, tgg, tname) = _both(x, g, mode, padding, align)
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, tgx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gg, tgg, rtol=1e-9, atol=1e-10)
    assert name == tname


def _numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        hi, lo = a.copy(), a.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


@pytest.mark.parametrize("mode,padding,align",
                         [c for c in CASES2D if c[0] != "nearest"])
@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_grid_sample_gradients_match_finite_differences(mode, padding, align, seed):
    x, g = _draw(seed, (3, 4), (2, 3), n=1, c=1, scale=0.9)
    wts = np.cos(np.arange(6.0)).reshape(1, 1, 2, 3)

    def f(xa, ga):
        y = F.grid_sample(ft.tensor(xa), ft.tensor(ga), mode=mode, padding_mode=padding,
                          align_corners=align)
        return float((y.numpy() * wts).sum())

    xt, gt = ft.tensor(x, requires_grad=True), ft.tensor(g, requires_grad=True)
    y = F.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=align)
    (y * ft.tensor(wts)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), _numeric_grad(lambda a: f(a, g), x),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gt.grad.numpy(), _numeric_grad(lambda a: f(x, a), g),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 1, 1, 3], [1, 2, 3, 2, 4]])
@pytest.mark.parametrize("align", [False, True])
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31))
def test_affine_grid_matches_pytorch(size, align, seed):
    torch = _torch()
    k = len(size) - 2
    theta = np.random.default_rng(seed).standard_normal((size[0], k, k + 1))
    outs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unit-size grid warning, on both faces
        for m, fn in ((ft, F.affine_grid), (torch, torch.nn.functional.affine_grid)):
            th = m.tensor(theta, requires_grad=True)
            grid = fn(th, size, align_corners=align)
            w = m.tensor(np.sin(np.arange(grid.numel())).reshape(tuple(grid.shape)))
            (grid * w).sum().backward()
            outs.append((grid.detach().numpy(), th.grad.numpy(), type(grid.grad_fn).__name__))
    (g, gt, n), (tg, tgt, tn) = outs
    np.testing.assert_allclose(g, tg, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gt, tgt, rtol=1e-12, atol=1e-12)
    assert n == tn


def test_spatial_transformer_round_trip_is_the_identity():
    img = ft.tensor(np.random.default_rng(0).standard_normal((2, 3, 5, 6)))
    theta = ft.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    grid = F.affine_grid(theta, list(img.shape), align_corners=False)
    out = F.grid_sample(img, grid, align_corners=False)
    np.testing.assert_allclose(out.numpy(), img.numpy(), atol=1e-12)


def _errors(m, fn_sample, fn_grid):
    x = m.ones(2, 3, 4, 5)
    calls = [
        lambda: fn_sample(x, m.zeros(1, 2, 2, 2), align_corners=False),
        lambda: fn_sample(x, m.zeros(2, 2, 2, 3), align_corners=False),
        lambda: fn_sample(x, m.zeros(2, 2, 2, 2).double(), align_corners=False),
        lambda: fn_sample(x, m.zeros(2, 2, 2), align_corners=False),
        lambda: fn_sample(m.ones(1, 1, 2, 2, 2), m.zeros(1, 1, 1, 1, 3), mode="bicubic",
                          align_corners=False),
        lambda: fn_sample(x, m.zeros(2, 2, 2, 2), mode="area", align_corners=False),
        lambda: fn_sample(x, m.zeros(2, 2, 2, 2), padding_mode="wrap", align_corners=False),
        lambda: fn_grid(m.zeros(1, 2, 3), [1, 1, 2, 2, 2], align_corners=False),
        lambda: fn_grid(m.zeros(1, 2, 3, dtype=m.int64), [1, 1, 2, 2], align_corners=False),
        lambda: fn_grid(m.zeros(1, 2, 3), [1, 1, 2], align_corners=False),
        lambda: fn_grid(m.zeros(1, 2, 3), [1, 0, 2, 2], align_corners=False),
    ]
    out = []
    for c in calls:
        try:
            c()
            out.append(None)
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            out.append((type(e).__name__, str(e)))
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        fn_sample(x, m.zeros(2, 1, 1, 2))
    return out


def test_errors_as_pytorch():
    torch = _torch()
    got = _errors(ft, F.grid_sample, F.affine_grid)
    want = _errors(torch, torch.nn.functional.grid_sample, torch.nn.functional.affine_grid)
    assert got == want
