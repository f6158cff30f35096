"""jit's two rewrites of ``scan`` loops (backends/compile_python):

- ``hoisted_accumulations``: a carry that only sums a matrix product of per-step values
  (``acc + p_t @ q_t``) becomes one product of the stacked values after the loop;
- ``_laid_out``: a loop-invariant matrix operand of a step's product is laid out once
  before the loop as the product reads it fastest.

Both must leave every value as eager evaluation (step by step) gives it, up to the order
of a float sum, and the accumulation rewrite must apply only where the carry is nothing
but that sum."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
from funcgrad import lax
from funcgrad.backends.compile_python import compile_jaxpr, hoisted_accumulations


def _x64() -> Any:
    fg.config.update("jax_enable_x64", True)
    return lambda: fg.config.update("jax_enable_x64", False)


def _arrays(draw: Any, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return [rng.standard_normal(s) for s in shapes]


def _reference_sum(w: np.ndarray, xs: np.ndarray, ys: np.ndarray, lc: int, rc: int,
                   reverse: bool) -> np.ndarray:
    acc = w.copy()
    steps = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for t in steps:
        a = xs[t] if lc == 1 else xs[t].T
        b = ys[t] if rc == 0 else ys[t].T
        acc = acc + a @ b
    return acc


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_accumulated_products_equal_the_step_by_step_sum(data: Any) -> None:
    steps, m, k, n = (data.draw(st.integers(2, 6)) for _ in range(4))
    lc, rc = data.draw(st.integers(0, 1)), data.draw(st.integers(0, 1))
    reverse = data.draw(st.booleans())
    computed = data.draw(st.booleans())  # the product's operand computed in the body
    xs_shape = (steps, m, k) if lc == 1 else (steps, k, m)
    ys_shape = (steps, k, n) if rc == 0 else (steps, n, k)
    w, xs, ys = _arrays(data.draw, (m, n), xs_shape, ys_shape)
    restore = _x64()
    try:
        def f(w: Any, xs: Any, ys: Any) -> Any:
            def body(acc: Any, xy: Any) -> Any:
                x, y = xy
                if computed:
                    y = fg.numpy.tanh(y) * 2.0
                dn = (((lc,), (rc,)), ((), ()))
                return acc + lax.dot_general(x, y, dn), y.sum()
            return lax.scan(body, w, (xs, ys), reverse=reverse)

        closed = fg.make_jaxpr(f)(w, xs, ys)
        names = [e.primitive.name for e in hoisted_accumulations(closed).jaxpr.eqns]
        assert names == ["scan", "dot_general", "add"]
        acc, sums = fg.jit(f)(w, xs, ys)
        used = np.tanh(ys) * 2.0 if computed else ys
        np.testing.assert_allclose(np.asarray(acc),
                                   _reference_sum(w, xs, used, lc, rc, reverse),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(np.asarray(sums), used.sum(axis=(1, 2)), rtol=1e-12)
    finally:
        restore()


def test_a_carry_read_by_the_step_is_not_rewritten() -> None:
    w, xs = np.zeros((3, 3)), np.ones((4, 3, 3))

    def reads_acc(w: Any, xs: Any) -> Any:
        # the accumulator is also read (acc * 0.5): the sum is not a plain running total
        return lax.scan(lambda a, x: (a * 0.5 + x @ x, None), w, xs)[0]

    def product_used_twice(w: Any, xs: Any) -> Any:
        def body(a: Any, x: Any) -> Any:
            p = x @ x
            return a + p, p
        return lax.scan(body, w, xs)

    def product_of_a_carry(w: Any, xs: Any) -> Any:
        return lax.scan(lambda c, x: ((c[0] + c[1] @ x, c[1]), None), (w, w + 1.0), xs)[0]

    for f in (reads_acc, product_used_twice, product_of_a_carry):
        closed = fg.make_jaxpr(f)(w, xs)
        assert hoisted_accumulations(closed) is closed, f.__name__
        want = f(w, xs)
        got = fg.jit(f)(w, xs)
        for a, b in zip(fg.tree_util.tree_leaves(got), fg.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_a_recurrent_weight_gradient_is_one_product_after_the_loop() -> None:
    """Reverse mode through an RNN: the weight's cotangent leaves the backward loop."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 5)) * 0.3
    xs = rng.standard_normal((7, 2, 5))

    def loss(w: Any) -> Any:
        h, _ = lax.scan(lambda h, x: (fg.numpy.tanh(h @ w + x), None), np.zeros((2, 5)), xs)
        return (h ** 2).sum()

    restore = _x64()
    try:
        grad = fg.jit(fg.grad(loss))
        got = np.asarray(grad(w))
        eps = 1e-6
        fd = np.zeros_like(w)
        for i in np.ndindex(*w.shape):
            d = np.zeros_like(w)
            d[i] = eps
            fd[i] = (float(loss(w + d)) - float(loss(w - d))) / (2 * eps)
        np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
        # the backward scan no longer carries the weight's cotangent
        closed = fg.make_jaxpr(fg.grad(loss))(w)
        scans = [e for e in hoisted_accumulations(closed).jaxpr.eqns
                 if e.primitive.name == "scan"]
        before = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
        assert sum(e.params["num_carry"] for e in scans) < \
            sum(e.params["num_carry"] for e in before)
    finally:
        restore()


def test_a_loop_invariant_weight_is_laid_out_once_before_the_loop() -> None:
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 6)).astype(np.float32)  # used as h @ w.T: Fortran-ordered
    xs = rng.standard_normal((5, 3, 6)).astype(np.float32)

    def f(w: Any, xs: Any) -> Any:
        wt = w.T
        return lax.scan(lambda h, x: (fg.numpy.tanh(h @ wt + x), None),
                        np.zeros((3, 6), np.float32), xs)[0]

    prog = compile_jaxpr(fg.make_jaxpr(f)(w, xs), np)
    assert "lay0(" in prog.source
    seen: list[Any] = []
    body = next(iter(prog.bodies.values()))[1]
    inner = body.fn

    def spy(*args: Any) -> Any:
        seen.append(args[0])
        return inner(*args)

    prog.fn.__globals__[next(k for k, v in prog.fn.__globals__.items() if v is inner)] = spy
    got = prog(w, xs)[0]
    assert seen and all(a.flags.c_contiguous for a in seen)
    h = np.zeros((3, 6), np.float32)
    for x in xs:
        h = np.tanh(h @ w.T + x)
    np.testing.assert_allclose(got, h, rtol=1e-5, atol=1e-6)
