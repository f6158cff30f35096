"""``conv_general_dilated`` and its lax wrappers: values against a direct NumPy loop and
against jax.lax, derivatives (check_grads, order 2, forward and reverse, float64), vmap
against a Python loop, jit against eager, and the shape rule's errors.

Geometry is drawn by hypothesis: ranks 1-3, strides, paddings (negative ones too), lhs and
rhs dilations, feature and batch groups, and random dimension_numbers layouts.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import lax
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.testing import check_grads

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(SETTINGS, max_examples=10)


@pytest.fixture(autouse=True)
def _x64() -> Any:
    prev = fg.config.jax_enable_x64
    fg.config.update("jax_enable_x64", True)
    yield
    fg.config.update("jax_enable_x64", prev)


def loop_conv(lhs: np.ndarray, rhs: np.ndarray, window_strides: Any, padding: Any,
              lhs_dilation: Any, rhs_dilation: Any, dimension_numbers: Any,
              feature_group_count: int, batch_group_count: int) -> np.ndarray:
    """The convolution by its definition, one output element at a time."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x, w = np.transpose(lhs, lhs_spec), np.transpose(rhs, rhs_spec)
    n, c = x.shape[:2]
    o = w.shape[0]
    sp, k = x.shape[2:], w.shape[2:]
    g, b = feature_group_count, batch_group_count
    cg, og, nb = c // g, o // (g * b), n // b
    padded = [lo + (m - 1) * ld + 1 + hi if m else lo + hi
              for m, (lo, hi), ld in zip(sp, padding, lhs_dilation)]
    out_sp = [max(0, (p - ((kk - 1) * rd + 1)) // s + 1) if p >= (kk - 1) * rd + 1 else 0
              for p, kk, rd, s in zip(padded, k, rhs_dilation, window_strides)]

    def read(batch: int, chan: int, q: tuple[int, ...]) -> float:
        idx = []
        for qi, (lo, _), ld, m in zip(q, padding, lhs_dilation, sp):
            r = qi - lo
            if r < 0 or r % ld or r // ld >= m:
                return 0.0
            idx.append(r // ld)
        return float(x[(batch, chan, *idx)])

    out = np.zeros([nb, o, *out_sp])
    for bi, oi in itertools.product(range(nb), range(o)):
        group = oi // og
        batch = group * nb + bi if b > 1 else bi
        chans = range(group * cg, (group + 1) * cg) if g > 1 else range(c)
        for pos in np.ndindex(*out_sp):
            acc = 0.0
            for ci, kpos in itertools.product(range(len(chans)), np.ndindex(*k)):
                q = tuple(p * s + kk * rd for p, s, kk, rd in
                          zip(pos, window_strides, kpos, rhs_dilation))
                acc += read(batch, chans[ci], q) * w[(oi, ci, *kpos)]
            out[(bi, oi, *pos)] = acc
    return np.transpose(out, np.argsort(out_spec)).astype(lhs.dtype)


@st.composite
def conv_problem(draw: Any, max_nd: int = 3, small: bool = False) -> dict[str, Any]:
    nd = draw(st.integers(1, max_nd))
    kind = draw(st.sampled_from(["plain", "plain", "feature", "batch"]))
    g = draw(st.integers(2, 3)) if kind == "feature" else 1
    b = draw(st.integers(2, 3)) if kind == "batch" else 1
    n = b * draw(st.integers(1, 2))
    c = g * draw(st.integers(1, 2))
    o = g * b * draw(st.integers(1, 2))
    hi = 3 if small or nd == 3 else 5
    k = [draw(st.integers(1, 3)) for _ in range(nd)]
    sp = [draw(st.integers(1, hi)) for _ in range(nd)]
    strides = [draw(st.integers(1, 2)) for _ in range(nd)]
    ld = [draw(st.integers(1, 2)) for _ in range(nd)]
    rd = [draw(st.integers(1, 2)) for _ in range(nd)]
    pads = []
    for m, d in zip(sp, ld):
        size = (m - 1) * d + 1
        lo = draw(st.integers(-min(1, size - 1), 2))
        pads.append((lo, draw(st.integers(-min(1, size - 1 + min(lo, 0)), 2))))
    perms = [tuple(draw(st.permutations(range(nd + 2)))) for _ in range(3)]
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    lhs_c = rng.normal(size=[n, c, *sp])
    rhs_c = rng.normal(size=[o, c // g, *k])
    # perms[i][j] is the axis holding canonical axis j: invert to lay the data out.
    lhs = np.transpose(lhs_c, np.argsort(perms[0]))
    rhs = np.transpose(rhs_c, np.argsort(perms[1]))
    dn = lax.ConvDimensionNumbers(*perms)
    return {"lhs": lhs, "rhs": rhs, "params": {
        "window_strides": tuple(strides), "padding": tuple(pads), "lhs_dilation": tuple(ld),
        "rhs_dilation": tuple(rd), "dimension_numbers": dn, "feature_group_count": g,
        "batch_group_count": b}}


def _conv(lhs: Any, rhs: Any, params: dict[str, Any]) -> Any:
    return lax.conv_general_dilated(lhs, rhs, **params)


@SETTINGS
@given(p=conv_problem())
def test_matches_loop_reference(p: dict[str, Any]) -> None:
    got = _conv(p["lhs"], p["rhs"], p["params"])
    want = loop_conv(p["lhs"], p["rhs"], **p["params"])
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)


@SETTINGS
@given(p=conv_problem())
def test_matches_jax(p: dict[str, Any]) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    params = {**p["params"], "dimension_numbers": jax.lax.ConvDimensionNumbers(
        *p["params"]["dimension_numbers"])}
    want = jax.lax.conv_general_dilated(p["lhs"], p["rhs"], **params)
    got = _conv(p["lhs"], p["rhs"], p["params"])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-10)
    # The reverse rule is JAX's: the cotangents agree to rounding.
    ct = np.random.default_rng(0).normal(size=want.shape)
    _, vj = jax.vjp(lambda a, b: jax.lax.conv_general_dilated(a, b, **params),
                    p["lhs"], p["rhs"])
    _, vf = fg.vjp(lambda a, b: _conv(a, b, p["params"]), p["lhs"], p["rhs"])
    for a, b in zip(vf(ct), vj(ct)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10)


@FEW
@given(p=conv_problem(max_nd=2, small=True))
def test_check_grads_order_2(p: dict[str, Any]) -> None:
    check_grads(lambda a, b: _conv(a, b, p["params"]), (p["lhs"], p["rhs"]), order=2,
                modes=("fwd", "rev"))


@FEW
@given(p=conv_problem(max_nd=2), which=st.sampled_from(["lhs", "rhs", "both"]),
       axis=st.integers(0, 3), size=st.integers(1, 3))
def test_vmap_matches_loop(p: dict[str, Any], which: str, axis: int, size: int) -> None:
    rng = np.random.default_rng(1)
    lhs, rhs = p["lhs"], p["rhs"]
    lb = rb = None
    if which in ("lhs", "both"):
        lb = min(axis, lhs.ndim)
        lhs = np.stack([rng.normal(size=lhs.shape) for _ in range(size)], lb)
    if which in ("rhs", "both"):
        rb = min(axis, rhs.ndim)
        rhs = np.stack([rng.normal(size=rhs.shape) for _ in range(size)], rb)
    got = fg.vmap(lambda a, b: _conv(a, b, p["params"]), in_axes=(lb, rb))(lhs, rhs)
    want = np.stack([loop_conv(lhs if lb is None else np.take(lhs, i, lb),
                               rhs if rb is None else np.take(rhs, i, rb), **p["params"])
                     for i in range(size)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-10, atol=1e-10)


@FEW
@given(p=conv_problem(max_nd=2))
def test_jit_matches_eager(p: dict[str, Any]) -> None:
    f = fg.jit(lambda a, b: _conv(a, b, p["params"]))
    np.testing.assert_allclose(np.asarray(f(p["lhs"], p["rhs"])),
                               np.asarray(_conv(p["lhs"], p["rhs"], p["params"])), rtol=1e-12)
    jaxpr = str(fg.make_jaxpr(lambda a, b: _conv(a, b, p["params"]))(p["lhs"], p["rhs"]))
    assert "conv_general_dilated[" in jaxpr


def test_float32_stays_float32() -> None:
    x = np.ones((1, 2, 5), np.float32)
    w = np.ones((3, 2, 2), np.float32)
    assert lax.conv(x, w, (1,), "SAME").dtype == np.float32


# --------------------------------------------------------------- the wrappers


@pytest.mark.parametrize("padding", ["SAME", "VALID", "SAME_LOWER", [(1, 0), (0, 2)]])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_wrappers_match_jax(padding: Any, strides: tuple[int, int]) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 7, 6, 3))
    k = rng.normal(size=(3, 2, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    for f, kw in ((lax.conv_general_dilated, {"dimension_numbers": dn}),
                  (lax.conv_general_dilated, {"dimension_numbers": dn, "rhs_dilation": (2, 1)})):
        got = f(x, k, strides, padding, **kw)
        want = getattr(jax.lax, f.__name__)(x, k, strides, padding, **kw)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-10)
    xn, kn = np.moveaxis(x, 3, 1), np.transpose(k, (3, 2, 0, 1))
    np.testing.assert_allclose(np.asarray(lax.conv(xn, kn, strides, padding)),
                               np.asarray(jax.lax.conv(xn, kn, strides, padding)), rtol=1e-10,
                               atol=1e-10)
    # String padding cannot be combined with lhs dilation: then only the kernel's.
    dil = ((1, 2), None) if not isinstance(padding, str) else (None, (2, 1))
    np.testing.assert_allclose(
        np.asarray(lax.conv_with_general_padding(xn, kn, strides, padding, *dil)),
        np.asarray(jax.lax.conv_with_general_padding(xn, kn, strides, padding, *dil)),
        rtol=1e-10, atol=1e-10)
    if padding == "SAME_LOWER":
        return
    for tk, kk in ((False, k), (True, np.swapaxes(k, 2, 3))):
        got = lax.conv_transpose(x, kk, strides, padding, dimension_numbers=dn,
                                 transpose_kernel=tk)
        want = jax.lax.conv_transpose(x, kk, strides, padding, dimension_numbers=dn,
                                      transpose_kernel=tk)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("spec", [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"),
                                  ("NWHC", "OHWI", "CNHW"), ("NCWH", "IOWH", "WHCN")])
def test_conv_dimension_numbers_match_jax(spec: tuple[str, str, str]) -> None:
    jax = pytest.importorskip("jax")
    got = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), spec)
    want = jax.lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), spec)
    assert tuple(map(tuple, got)) == tuple(map(tuple, want))
    assert lax.conv_general_permutations(spec) == tuple(
        tuple(p) for p in jax.lax.conv_general_permutations(spec))


def test_padtype_to_pads_matches_jax() -> None:
    jax = pytest.importorskip("jax")
    for n, w, s in itertools.product(range(1, 7), range(1, 4), range(1, 4)):
        for kind in ("SAME", "VALID", "SAME_LOWER"):
            assert lax.padtype_to_pads((n,), (w,), (s,), kind) == [
                tuple(p) for p in jax.lax.padtype_to_pads((n,), (w,), (s,), kind)]


def test_dimension_number_errors() -> None:
    with pytest.raises(TypeError, match="must contain the characters 'N' and 'C'"):
        lax.conv_dimension_numbers((1, 1, 1), (1, 1, 1), ("NWH", "OIW", "NCW"))
    with pytest.raises(TypeError, match="same set of spatial characters"):
        lax.conv_dimension_numbers((1, 1, 1), (1, 1, 1), ("NCW", "OIH", "NCW"))
    with pytest.raises(TypeError, match="ndim to be equal"):
        lax.conv(np.ones((1, 2, 5)), np.ones((2, 2, 2, 2)), (1,), "VALID")
    with pytest.raises(TypeError, match="length 3"):
        lax.conv_dimension_numbers((1, 1, 1), (1, 1, 1), ("NCW", "OIW"))
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), "SAME",
                                 lhs_dilation=(2,))
    with pytest.raises(ValueError, match="Unknown padding"):
        lax.conv(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), "FULL")


@pytest.mark.parametrize("lhs,rhs,kw,err,match", [
    ((1, 4, 5), (2, 3, 2), {}, ShapeError, "must equal the rhs input feature dimension size"),
    ((1, 4, 5), (3, 2, 2), {"feature_group_count": 2}, ShapeError, "not a multiple"),
    ((3, 2, 5), (2, 2, 2), {"batch_group_count": 2}, ShapeError, "does not divide the lhs"),
    ((1, 2, 5), (2, 2, 2), {"padding": [(-4, -3)]}, ShapeError, "larger than the dilated"),
    ((1, 2, 5), (2, 2, 2), {"window_strides": (0,)}, ShapeError, "must be positive"),
])
def test_shape_rule_errors(lhs: Any, rhs: Any, kw: dict[str, Any], err: type, match: str
                           ) -> None:
    args = {"window_strides": (1,), "padding": [(0, 0)], **kw}
    with pytest.raises(err, match=match) as info:
        lax.conv_general_dilated(np.ones(lhs), np.ones(rhs), **args)
    assert "conv_general_dilated" in str(info.value)


def test_dtype_mismatch_is_a_dtype_error() -> None:
    with pytest.raises(DTypeError, match="different dtypes"):
        lax.conv(np.ones((1, 1, 3)), np.ones((1, 1, 2), np.float32), (1,), "VALID")
