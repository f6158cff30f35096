"""Control flow compiled by jit: ``cond``/``switch``, ``while_loop``, ``fori_loop``, ``scan``
and ``map`` bodies are generated code on the NumPy backend (called from a Python loop, no
interpreter) and fused kernels driven from the host on the CuPy backend (run here on the
CuPy emulator, tests/support/fakecupy).

The eager path (each body interpreted primitive by primitive) is the reference: the
compiled program runs the same NumPy calls in the same order, so the results are equal
bit for bit. Derivatives are checked against finite differences, and JAX is the oracle
for the loop forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from gpu_values import host as _host
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import EvalTrace
from funcgrad.devices import get_backend
from funcgrad.testing import check_grads

FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@fg.custom_jvp
def _softplus(x: Any) -> Any:
    return fnp.log1p(fnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return _softplus(x), t / (1.0 + fnp.exp(-x))


def _nested(x: Any) -> Any:
    """fori_loop over a cond whose branches scan, one of them through a nested jit."""
    inner = fg.jit(lambda a, b: fnp.sin(a) * 0.5 + b)

    def step(i: Any, v: Any) -> Any:
        def scanned(w: Any) -> Any:
            return lax.scan(lambda c, r: (inner(c, r), c * r), w[0], w)[1]

        return lax.cond(i % 2 == 0, scanned, lambda w: fnp.tanh(w) + w, v)

    return lax.fori_loop(0, 3, step, x)


# Each form maps an array of rank >= 1 to an array of the same dtype.
FORMS: dict[str, Callable[[Any], Any]] = {
    "cond": lambda x: lax.cond(fnp.sum(x) > 0, lambda v: fnp.sin(v) * 2.0,
                               lambda v: fnp.cos(v) - v, x),
    "switch": lambda x: lax.switch(fnp.argmax(fnp.ravel(x)) % 4 - 1,  # -1 clamps to 0
                                   [lambda v: v * 3.0, lambda v: fnp.exp(-v * v),
                                    lambda v: fnp.abs(v) + 1.0], x),
    "while": lambda x: lax.while_loop(
        lambda s: (s[0] < 6) & (fnp.max(fnp.abs(s[1])) < 50.0),
        lambda s: (s[0] + 1, s[1] * 1.5 + 0.25), (0, x))[1],
    "fori": lambda x: lax.fori_loop(0, 7, lambda i, v: fnp.sin(v + i) * 0.5 + v * 0.75, x),
    "fori_traced_bounds": lambda x: lax.fori_loop(
        0, fnp.sum(x > 0), lambda i, v: fnp.cos(v) + i, x),
    "scan": lambda x: lax.scan(lambda c, r: (c * 0.5 + r, fnp.tanh(c + r)), x[0], x)[1],
    "scan_reverse_carry": lambda x: lax.scan(lambda c, r: (c * r + 1.0, c), x[0], x,
                                             reverse=True)[0],
    "scan_length_no_xs": lambda x: lax.scan(lambda c, _: (c * 1.1 - 0.2, c * c), x, None,
                                            length=4)[1],
    "map": lambda x: lax.map(lambda r: fnp.exp(-r * r) + fnp.sum(r), x),
    "custom_jvp_in_body": lambda x: lax.fori_loop(0, 4, lambda i, v: _softplus(v) - 0.5, x),
    "nested": _nested,
}

# Forms with a derivative in reverse mode (a static trip count).
DIFFERENTIABLE = ("cond", "switch", "fori", "scan", "scan_reverse_carry", "scan_length_no_xs",
                  "map", "custom_jvp_in_body", "nested")

arrays = st.sampled_from([np.float32, np.float64]).flatmap(
    lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                          elements=st.floats(-2.0, 2.0, width=32)))


@pytest.fixture
def interpreted() -> Iterator[list[str]]:
    """The primitives the eager interpreter runs (EvalTrace.process_primitive), by name."""
    seen: list[str] = []
    original = EvalTrace.process_primitive

    def counting(self: Any, prim: Any, args: Any, params: Any) -> Any:
        seen.append(prim.name)
        return original(self, prim, args, params)

    EvalTrace.process_primitive = counting  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        EvalTrace.process_primitive = original  # type: ignore[method-assign]


def _bits(a: Any) -> np.ndarray:
    return np.asarray(a)


# ------------------------------------------------------------ values, bit for bit

@pytest.mark.parametrize("name", sorted(FORMS))
@FEW
@given(x=arrays)
def test_jit_matches_eager_bit_for_bit(name: str, x: np.ndarray) -> None:
    f = FORMS[name]
    want = _bits(f(x))
    got = _bits(fg.jit(f)(x))
    assert got.dtype == want.dtype == x.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_scan_of_no_steps_and_dead_stacked_outputs() -> None:
    x = np.arange(6.0).reshape(3, 2)
    empty = fg.jit(lambda v: lax.scan(lambda c, r: (c + r, c * r), v[0], v[:0]))(x)
    np.testing.assert_array_equal(empty[0], x[0])
    assert np.asarray(empty[1]).shape == (0, 2)
    # Only the carry is used: the stacked ys of the body are never built.
    f = fg.jit(lambda v: lax.scan(lambda c, r: (c + r, fnp.sin(c)), v[0], v)[0])
    np.testing.assert_array_equal(f(x), x[0] + x.sum(0))
    assert "empty(" not in f.lower(x).as_text()


# ---------------------------------------------------- no interpreter in a jitted call

@pytest.mark.parametrize("name", sorted(FORMS))
def test_no_primitive_is_interpreted_in_a_jitted_call(name: str,
                                                      interpreted: list[str]) -> None:
    x = np.linspace(-1.0, 1.5, 6).reshape(2, 3)
    jf = fg.jit(FORMS[name])
    want = _bits(FORMS[name](x))  # eager: every body equation goes through the interpreter
    assert interpreted
    jf(x)  # stages and compiles
    interpreted.clear()
    np.testing.assert_array_equal(_bits(jf(x)), want)
    assert interpreted == []


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_jitted_gradients_run_no_interpreter(name: str, interpreted: list[str]) -> None:
    x = np.linspace(-1.0, 1.5, 6).reshape(2, 3)
    loss = lambda v: fnp.sum(FORMS[name](v))  # noqa: E731
    g = fg.jit(fg.grad(loss))
    g(x)
    interpreted.clear()
    g(x)
    assert interpreted == []
    # grad of a jitted function: a compiled forward and a compiled backward, nothing else.
    g = fg.grad(fg.jit(loss))
    g(x)
    interpreted.clear()
    g(x)
    assert interpreted == ["jit", "jit"]
    batched = fg.vmap(fg.jit(loss))
    batched(np.stack([x, x]))
    interpreted.clear()
    batched(np.stack([x, x]))
    assert interpreted == ["jit"]


def test_generated_source_calls_compiled_bodies() -> None:
    x = np.ones(4, np.float32)
    text = fg.jit(lambda v: lax.fori_loop(0, 100, lambda i, w: fnp.sin(w) * 0.5 + w, v)
                  ).lower(x).as_text()
    main, body = text.split("# ", 1)
    assert re.search(r"for (s\d+i) in range\(100\):\n        v\d+, = (s\d+)\(v\d+, c\d+\[\1\]\)",
                     main)
    assert body.startswith(re.search(r"= (s\d+)\(", main).group(1) + ": body of scan")
    # The body is straight-line ufunc calls: sin, multiply, add.
    calls = re.findall(r"= (\w+)\(", body)
    assert calls == ["u_sin", "u_multiply", "u_add"]

    text = fg.jit(FORMS["while"]).lower(np.ones(3)).as_text()
    assert re.search(r"while (s\d+)c\(.*\)\[0\]:\n +v\d+, v\d+, = \1b\(", text)
    assert re.search(r"# s\d+c: cond of while\n", text)
    assert re.search(r"# s\d+b: body of while\n", text)
    text = fg.jit(FORMS["switch"]).lower(np.ones(3)).as_text()
    assert re.search(r"s\d+\[min\(max\(int\(v\d+\), 0\), 2\)\]\(", text)
    assert len(re.findall(r"# s\d+\[\d\]: branch \d of cond\n", text)) == 3
    text = fg.jit(_nested).lower(np.ones(3)).as_text()
    assert "body of scan" in text and "branch 1 of cond" in text and "jit <lambda>" in text


def test_bodies_are_compiled_once_per_jaxpr() -> None:
    from funcgrad.backends import compile_python

    x = np.ones(3)
    f = fg.jit(FORMS["fori"])
    closed = f.lower(x).jaxpr
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    f(x)
    prog = compile_python.subprogram(eqn.params["jaxpr"], np)
    assert compile_python.subprogram(eqn.params["jaxpr"], np) is prog
    assert "u_sin" in prog.source


# ------------------------------------------------------------------------ effects

def test_effects_in_bodies_run_in_order() -> None:
    def run(seen: list[Any]) -> Callable[[Any], Any]:
        def note(tag: str, v: Any) -> None:
            fg.debug.callback(lambda a, t=tag: seen.append((t, int(a))), v)

        def f(x: Any) -> Any:
            def body(i: Any, v: Any) -> Any:
                note("fori", i)
                return v + 1.0

            v = lax.fori_loop(0, 3, body, x)

            def wbody(s: Any) -> Any:
                note("while", s[0])
                return s[0] + 1, s[1] * 2.0

            v = lax.while_loop(lambda s: s[0] < 2, wbody, (0, v))[1]

            def sbody(c: Any, r: Any) -> Any:
                note("scan", r)
                return c, c

            lax.scan(sbody, 0.0, fnp.arange(3), reverse=True)
            return lax.cond(v[0] > 0, lambda w: (note("cond", 1), w)[1],
                            lambda w: (note("cond", 0), w)[1], v)
        return f

    want = [("fori", 0), ("fori", 1), ("fori", 2), ("while", 0), ("while", 1),
            ("scan", 2), ("scan", 1), ("scan", 0), ("cond", 1)]
    eager: list[Any] = []
    run(eager)(np.ones(2))
    assert eager == want
    jitted: list[Any] = []
    jf = fg.jit(run(jitted))
    jf(np.ones(2))
    jf(np.ones(2))
    assert jitted == want + want


# ------------------------------------------------------------ derivatives and vmap

@pytest.mark.parametrize("name", DIFFERENTIABLE)
@FEW
@given(x=arrays)
def test_jit_of_grad_matches_eager_grad(name: str, x: np.ndarray) -> None:
    loss = lambda v: fnp.sum(FORMS[name](v))  # noqa: E731
    want = _bits(fg.grad(loss)(x))
    got = _bits(fg.jit(fg.grad(loss))(x))
    assert got.dtype == x.dtype
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["fori", "scan", "cond", "nested", "custom_jvp_in_body"])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=hnp.arrays(np.float64, st.integers(2, 3).map(lambda n: (n,)),
                    elements=st.floats(0.1, 1.5)))  # cond's predicate (sum > 0) holds nearby
def test_jitted_loops_derivatives_against_finite_differences(name: str, x: np.ndarray
                                                             ) -> None:
    check_grads(fg.jit(FORMS[name]), (x,), order=2, modes=("fwd", "rev"))


def test_forward_mode_through_a_jitted_while_loop() -> None:
    x = np.array([0.3, -0.2, 0.1])
    check_grads(fg.jit(FORMS["while"]), (x,), order=2, modes=("fwd",))


@pytest.mark.parametrize("name", ["fori", "while", "scan", "switch", "fori_traced_bounds"])
@FEW
@given(xb=hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 4)),
                     elements=st.floats(-2.0, 2.0)))
def test_vmap_of_jitted_loops(name: str, xb: np.ndarray) -> None:
    f = FORMS[name]
    # Each member alone as a (1, n) array (the forms scan over the leading axis).
    want = np.stack([_bits(f(row[None]))[0] for row in xb])
    per_row = lambda r: f(r[None])[0]  # noqa: E731
    for batched in (fg.vmap(fg.jit(per_row)), fg.jit(fg.vmap(per_row))):
        np.testing.assert_allclose(_bits(batched(xb)), want, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- JAX oracle

@pytest.mark.parametrize("form", ["fori", "while", "scan", "cond"])
def test_jitted_loops_match_jax(form: str) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.linspace(-1.0, 1.2, 6, dtype=np.float32).reshape(2, 3)

    def program(np_mod: Any, lax_mod: Any) -> Callable[[Any], Any]:
        if form == "fori":
            return lambda v: lax_mod.fori_loop(0, 20, lambda i, w: np_mod.sin(w) * 0.9 + 0.1, v)
        if form == "while":
            return lambda v: lax_mod.while_loop(lambda s: np_mod.sum(s) < 40.0,
                                                lambda s: s * 1.3 + 0.5, v)
        if form == "scan":
            return lambda v: lax_mod.scan(lambda c, r: (c * 0.5 + r, np_mod.tanh(c)), v[0], v,
                                          reverse=True)[1]
        return lambda v: lax_mod.cond(np_mod.sum(v) > 0, np_mod.exp, np_mod.cos, v)

    got = _bits(fg.jit(program(fnp, lax))(x))
    want = np.asarray(jax.jit(program(jnp, jax.lax))(x))
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


# ------------------------------------------------------------------ scan arguments

def test_unroll_is_accepted_and_checked_as_jax_does() -> None:
    x = np.arange(4.0)
    f = lambda c, r: (c + r, c)  # noqa: E731
    for unroll in (1, 3, True, False, 0):
        np.testing.assert_array_equal(lax.scan(f, 0.0, x, unroll=unroll)[1], [0, 0, 1, 3])
    assert float(lax.fori_loop(0, 3, lambda i, v: v * 2.0, 1.0, unroll=2)) == 8.0
    with pytest.raises(ValueError, match="non-negative"):
        lax.scan(f, 0.0, x, unroll=-1)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        lax.fori_loop(0, 3, lambda i, v: v, 1.0, unroll=1.5)  # (JAX 0.10.2's text)


# ------------------------------------------------------------- CuPy (the emulator)

@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FORMS))
def test_gpu_compiled_control_flow(name: str) -> None:
    if not get_backend("cupy").available():
        pytest.skip("no CUDA device and no emulator")
    xh = np.linspace(-1.0, 1.5, 6).reshape(2, 3)
    f = FORMS[name]
    got = fg.jit(f, backend="cupy")(fg.device_put(xh, "cuda"))
    assert got.device.platform == "cuda"
    np.testing.assert_allclose(_host(got), _bits(fg.jit(f)(xh)), rtol=1e-12, atol=1e-14)
    if name in DIFFERENTIABLE:
        g = fg.grad(lambda v: fnp.sum(f(v)))
        np.testing.assert_allclose(_host(fg.jit(g, backend="cupy")(fg.device_put(xh, "cuda"))),
                                   _bits(fg.jit(g)(xh)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["fori", "scan", "grad_fori", "while"])
def test_gpu_loops_read_back_only_the_loop_test(fake_cupy: Any, name: str,
                                                interpreted: list[str]) -> None:
    import fakecupy

    xh = np.linspace(-0.5, 0.5, 6).reshape(2, 3)
    f = {"fori": FORMS["fori"], "scan": FORMS["scan"], "while": FORMS["while"],
         "grad_fori": fg.grad(lambda v: fnp.sum(FORMS["fori"](v)))}[name]
    jf = fg.jit(f, backend="cupy")
    x = fg.device_put(xh, "cuda")
    jf(x)  # compiles the kernels
    interpreted.clear()
    with fakecupy.counting() as c:
        got = jf(x)
    assert interpreted == []
    assert c.launches > 0 and c.compiles == 0 and c.h2d == 0
    if name == "while":
        # One predicate read per test: the body runs while s[0] < 6 (the values stay small).
        assert c.d2h == c.syncs == 7
    else:
        assert c.d2h == c.syncs == 0
    np.testing.assert_allclose(_host(got), _bits(fg.jit(f)(xh)), rtol=1e-12, atol=1e-14)


def test_cupy_plan_fuses_each_body_into_kernels() -> None:
    # Planning and code generation need no GPU.
    f = fg.jit(lambda v: lax.fori_loop(0, 10, lambda i, w: fnp.sin(w) * 0.5 + w, fnp.exp(v)),
               backend="cupy")
    kernels = f.lower(np.ones(4)).kernels()
    outer = [k for k in kernels if "body" not in k]
    body = [k for k in kernels if k.get("body", "").endswith("scan body")]
    assert len(outer) == 1 and "exp(" in outer[0]["source"]
    # sin, multiply and add: one elementwise kernel per step.
    assert len(body) == 1 and body[0]["kind"] == "elementwise"
    assert "sin(" in body[0]["source"] and "sin(" not in outer[0]["source"]
    nested = fg.jit(_nested, backend="cupy").lower(np.ones((2, 3))).kernels()
    assert any(k.get("body", "").count(" / ") == 2 for k in nested)  # fori / cond / scan
