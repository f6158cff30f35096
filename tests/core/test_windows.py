"""Window reductions (``reduce_window_sum/max/min``) and the selections behind max/min
derivatives: values against a direct NumPy loop and against jax.lax, check_grads (order 2,
forward and reverse, float64), the first-maximum rule for ties, vmap against a loop, jit
against eager, and ``lax.reduce_window``'s monoid detection and errors.
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
from funcgrad.testing import check_grads

SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(SETTINGS, max_examples=10)
REDUCERS = {"sum": (lax.add, 0.0, np.sum), "max": (lax.max, -np.inf, np.max),
            "min": (lax.min, np.inf, np.min)}


@pytest.fixture(autouse=True)
def _x64() -> Any:
    prev = fg.config.jax_enable_x64
    fg.config.update("jax_enable_x64", True)
    yield
    fg.config.update("jax_enable_x64", prev)


def loop_reduce(x: np.ndarray, kind: str, window_dimensions: Any, window_strides: Any,
                padding: Any, base_dilation: Any, window_dilation: Any) -> np.ndarray:
    """Each window by its definition: the operand's elements it covers, reduced."""
    _, init, reduce = REDUCERS[kind]
    padded = [lo + (n - 1) * b + 1 + hi for n, (lo, hi), b in zip(x.shape, padding,
                                                                   base_dilation)]
    eff = [(w - 1) * d + 1 for w, d in zip(window_dimensions, window_dilation)]
    out = [max(0, (p - e) // s + 1) if p >= e else 0
           for p, e, s in zip(padded, eff, window_strides)]
    res = np.full(out, init)
    for pos in np.ndindex(*out):
        vals = [init]
        for off in np.ndindex(*window_dimensions):
            idx = []
            for p, o, s, d, (lo, _), b, n in zip(pos, off, window_strides, window_dilation,
                                                 padding, base_dilation, x.shape):
                r = p * s + o * d - lo
                if r < 0 or r % b or r // b >= n:
                    break
                idx.append(r // b)
            else:
                vals.append(x[tuple(idx)])
        res[pos] = reduce(vals)
    return res.astype(x.dtype)


@st.composite
def window_problem(draw: Any, dilations: bool = True, max_rank: int = 3) -> dict[str, Any]:
    rank = draw(st.integers(1, max_rank))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    win = [draw(st.integers(1, 3)) for _ in range(rank)]
    params = {
        "window_dimensions": tuple(win),
        "window_strides": tuple(draw(st.integers(1, 3)) for _ in range(rank)),
        "padding": tuple((draw(st.integers(0, w - 1)), draw(st.integers(0, w - 1)))
                         for w in win),
        "base_dilation": tuple(draw(st.integers(1, 2)) if dilations else 1
                               for _ in range(rank)),
        "window_dilation": tuple(draw(st.integers(1, 2)) if dilations else 1
                                 for _ in range(rank)),
    }
    x = np.random.default_rng(draw(st.integers(0, 2 ** 16))).normal(size=shape)
    return {"x": x, "params": params}


def run(kind: str, x: Any, params: dict[str, Any]) -> Any:
    computation, init, _ = REDUCERS[kind]
    return lax.reduce_window(x, init, computation, **params)


@SETTINGS
@given(p=window_problem(), kind=st.sampled_from(sorted(REDUCERS)))
def test_matches_loop_reference(p: dict[str, Any], kind: str) -> None:
    got = run(kind, p["x"], p["params"])
    want = loop_reduce(p["x"], kind, **p["params"])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)


@SETTINGS
@given(p=window_problem(), kind=st.sampled_from(sorted(REDUCERS)),
       init=st.sampled_from([None, 0.5, -2.0]))
def test_matches_jax(p: dict[str, Any], kind: str, init: Any) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    computation, identity, _ = REDUCERS[kind]
    init = identity if init is None else init
    jfn = {"sum": jax.lax.add, "max": jax.lax.max, "min": jax.lax.min}[kind]
    want = jax.lax.reduce_window(p["x"], init, jfn, **p["params"])
    got = lax.reduce_window(p["x"], init, computation, **p["params"])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)
    if init != identity or want.size == 0:
        return
    t = np.random.default_rng(0).normal(size=p["x"].shape)
    f_j = lambda v: jax.lax.reduce_window(v, init, jfn, **p["params"])  # noqa: E731
    f_f = lambda v: lax.reduce_window(v, init, computation, **p["params"])  # noqa: E731
    np.testing.assert_allclose(np.asarray(fg.jvp(f_f, (p["x"],), (t,))[1]),
                               np.asarray(jax.jvp(f_j, (p["x"],), (t,))[1]), rtol=1e-12)
    # JAX has no reverse rule for max/min windows with window dilation.
    if kind == "sum" or all(d == 1 for d in p["params"]["window_dilation"]):
        ct = np.random.default_rng(1).normal(size=want.shape)
        np.testing.assert_allclose(np.asarray(fg.vjp(f_f, p["x"])[1](ct)[0]),
                                   np.asarray(jax.vjp(f_j, p["x"])[1](ct)[0]), rtol=1e-12)


@FEW
@given(p=window_problem(dilations=False, max_rank=2), kind=st.sampled_from(sorted(REDUCERS)))
def test_check_grads_order_2(p: dict[str, Any], kind: str) -> None:
    check_grads(lambda v: run(kind, v, p["params"]), (p["x"],), order=2, modes=("fwd", "rev"))


@FEW
@given(p=window_problem(max_rank=2), kind=st.sampled_from(sorted(REDUCERS)))
def test_dilated_sum_check_grads(p: dict[str, Any], kind: str) -> None:
    # Dilations are linear bookkeeping for sum; for max/min every window of this problem
    # covers an element (padding < window), so derivatives exist there too.
    if kind != "sum" and any(b > 1 for b in p["params"]["base_dilation"]):
        return
    check_grads(lambda v: run(kind, v, p["params"]), (p["x"],), order=2, modes=("fwd", "rev"))


def test_max_gradient_goes_to_the_first_maximum() -> None:
    x = np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 3.0]])
    g = fg.grad(lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1),
                                            "VALID").sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    g = fg.grad(lambda v: lax.reduce_window(v, np.inf, lax.min, (1, 3), (1, 1),
                                            "VALID").sum())(-x)
    np.testing.assert_array_equal(np.asarray(g), [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    _, t = fg.jvp(lambda v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1), "VALID"),
                  (x,), (np.arange(6.0).reshape(2, 3),))
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 1.0]])


def test_selections_are_each_others_transpose() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 6))
    args = ("ge", (2, 3), (2, 1), [(1, 0), (0, 2)], None, (1, 2))
    t, s = rng.normal(size=x.shape), rng.normal(size=np.shape(
        lax.select_and_gather_add(x, x, *args)))
    lhs = np.sum(np.asarray(lax.select_and_gather_add(t, x, *args)) * s)
    rhs = np.sum(t * np.asarray(lax.select_and_scatter_add(s, x, *args)))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


@FEW
@given(p=window_problem(max_rank=2), kind=st.sampled_from(sorted(REDUCERS)),
       axis=st.integers(0, 2), size=st.integers(1, 3))
def test_vmap_matches_loop(p: dict[str, Any], kind: str, axis: int, size: int) -> None:
    rng = np.random.default_rng(2)
    ax = min(axis, p["x"].ndim)
    xs = np.stack([rng.normal(size=p["x"].shape) for _ in range(size)], ax)
    got = fg.vmap(lambda v: run(kind, v, p["params"]), in_axes=ax)(xs)
    want = np.stack([loop_reduce(np.take(xs, i, ax), kind, **p["params"])
                     for i in range(size)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    ct = rng.normal(size=want.shape)
    got_ct = fg.vmap(lambda v, c: fg.vjp(lambda u: run(kind, u, p["params"]), v)[1](c)[0],
                     in_axes=(ax, 0))(xs, ct)
    want_ct = np.stack([np.asarray(fg.vjp(lambda u: run(kind, u, p["params"]),
                                          np.take(xs, i, ax))[1](ct[i])[0])
                        for i in range(size)])
    np.testing.assert_allclose(np.asarray(got_ct), want_ct, rtol=1e-12)


@FEW
@given(p=window_problem(max_rank=2), kind=st.sampled_from(sorted(REDUCERS)))
def test_jit_matches_eager(p: dict[str, Any], kind: str) -> None:
    f = lambda v: run(kind, v, p["params"])  # noqa: E731
    np.testing.assert_array_equal(np.asarray(fg.jit(f)(p["x"])), np.asarray(f(p["x"])))
    g = fg.grad(lambda v: f(v).sum())
    np.testing.assert_allclose(np.asarray(fg.jit(g)(p["x"])), np.asarray(g(p["x"])))


def test_integer_and_float32_operands() -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 1), "SAME")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), loop_reduce(x, "max", (2, 2), (1, 1),
                                                              [(0, 1), (0, 1)], (1, 1), (1, 1)))
    y = lax.reduce_window(x.astype(np.float32), 0.0, lax.add, (2, 2), (2, 2), "VALID")
    assert y.dtype == np.float32


def test_reduce_window_of_any_function_and_its_errors() -> None:
    # Any monoid, pytrees of operands and a traced init_value work, as in JAX; the argument
    # checks raise JAX's TypeErrors.
    x = np.arange(1.0, 10.0).reshape(3, 3)
    products = np.array([[x[i:i + 2, j:j + 2].prod() for j in range(2)] for i in range(2)])
    np.testing.assert_allclose(lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "VALID"),
                               products)
    sums, prods = lax.reduce_window((x, x), (0.0, 1.0),
                                    lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2), (1, 1),
                                    "VALID")
    np.testing.assert_allclose(prods, products)
    np.testing.assert_allclose(sums, [[12, 16], [24, 28]])
    np.testing.assert_allclose(fg.jit(lambda v, i: lax.reduce_window(
        v, i, lax.add, (2, 2), (1, 1), "VALID"))(x, 1.0), [[13, 17], [25, 29]])
    with pytest.raises(TypeError, match=r"inconsistent window_strides and window_dimensions: "
                       r"got window_strides \(1,\)"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1,), "VALID")
    with pytest.raises(TypeError, match="must have every element be strictly positive"):
        lax.reduce_window(x, 0.0, lax.max, (0, 2), (1, 1), "VALID")


def test_primitives_print_in_jaxprs() -> None:
    x = np.ones((4, 4))
    text = str(fg.make_jaxpr(fg.grad(lambda v: lax.reduce_window(
        v, -np.inf, lax.max, (2, 2), (2, 2), "VALID").sum()))(x))
    assert "reduce_window_max[" in text and "select_and_scatter_add[" in text
    assert all(name in dir(lax) for name in itertools.chain(
        ("reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p"),
        ("select_and_gather_add_p", "select_and_scatter_add_p")))
