"""Complex numbers end to end: values against NumPy and JAX, derivatives against finite
differences in the complex plane (real and imaginary parts perturbed separately) and against
JAX's grad/jvp/vjp/jacfwd/jacrev, holomorphic or not, and JAX's error texts.

JAX's convention, which funcgrad follows: the vjp of a map is its transpose under the real
bilinear pairing <a, b> = Re(sum(a * b)) (no conjugation), so grad of a real function of
z = x + iy is df/dx - i df/dy.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.errors import DTypeError, GradError
from funcgrad.testing import jax_x64_mode
from funcgrad.testing.strategies import shapes
from funcgrad.tree_util import tree_leaves

SETTINGS = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FEW = settings(SETTINGS, max_examples=5)


def _jax() -> Any:
    return pytest.importorskip("jax")


# ------------------------------------------------------------------- values


def cvals(lo: float = 0.0, hi: float = 3.0, away_from_cut: bool = False
          ) -> st.SearchStrategy[complex]:
    """Complex numbers with lo <= |z| <= hi; ``away_from_cut``: not within 0.1 of the
    negative real axis (the branch cut of log, sqrt and powers)."""
    s = st.complex_numbers(min_magnitude=lo, max_magnitude=hi, allow_nan=False,
                           allow_infinity=False)
    if away_from_cut:
        s = s.filter(lambda z: z.real > 0 or abs(z.imag) > 0.1)
    return s


def carrays(shape: Any = None, elements: st.SearchStrategy[complex] | None = None
            ) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.complex128, shape if shape is not None else shapes(),
                      elements=elements if elements is not None else cvals())


UNARY = {
    # name: (funcgrad.numpy fn, numpy fn, elements)
    "negative": (fnp.negative, np.negative, cvals()),
    "exp": (fnp.exp, np.exp, cvals()),
    "log": (fnp.log, np.log, cvals(0.2, 3.0, away_from_cut=True)),
    "sin": (fnp.sin, np.sin, cvals()),
    "cos": (fnp.cos, np.cos, cvals()),
    "tan": (fnp.tan, np.tan, cvals(0.0, 1.2)),
    "sinh": (fnp.sinh, np.sinh, cvals()),
    "cosh": (fnp.cosh, np.cosh, cvals()),
    "tanh": (fnp.tanh, np.tanh, cvals(0.0, 1.2)),
    "sqrt": (fnp.sqrt, np.sqrt, cvals(0.2, 3.0, away_from_cut=True)),
    "square": (fnp.square, np.square, cvals()),
    "reciprocal": (fnp.reciprocal, np.reciprocal, cvals(0.2, 3.0)),
    "abs": (fnp.abs, np.abs, cvals()),
    "sign": (fnp.sign, np.sign, cvals(0.2, 3.0)),
    "real": (fnp.real, np.real, cvals()),
    "imag": (fnp.imag, np.imag, cvals()),
    "conj": (fnp.conj, np.conj, cvals()),
    "angle": (fnp.angle, np.angle, cvals(0.2, 3.0, away_from_cut=True)),
}
BINARY = {
    "add": (fnp.add, np.add), "subtract": (fnp.subtract, np.subtract),
    "multiply": (fnp.multiply, np.multiply), "divide": (fnp.divide, np.divide),
}


def _same(actual: Any, expected: Any, tol: float = 1e-12) -> None:
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype), f"{a.dtype}{a.shape} != {e.dtype}{e.shape}"
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@SETTINGS
@given(data=st.data())
def test_unary_values_match_numpy(name: str, dtype: Any, data: Any) -> None:
    fn, ref, elements = UNARY[name]
    x = data.draw(carrays(elements=elements)).astype(dtype)
    tol = 1e-12 if dtype == np.complex128 else 2e-5
    with np.errstate(all="ignore"):
        _same(fn(x), ref(x), tol)
        _same(fg.jit(fn)(x), ref(x), tol)


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_values_match_numpy(name: str, data: Any) -> None:
    fn, ref = BINARY[name]
    shape = data.draw(shapes())
    x = data.draw(carrays(shape))
    y = data.draw(carrays(shape, cvals(0.2, 3.0)))
    _same(fn(x, y), ref(x, y))
    z = data.draw(cvals(0.2, 3.0))
    _same(fn(x, z), ref(x, np.complex128(z)))  # a weak Python complex keeps x's dtype


@SETTINGS
@given(data=st.data())
def test_power_matches_numpy(data: Any) -> None:
    x = data.draw(carrays(elements=cvals(0.2, 2.0, away_from_cut=True)))
    y = data.draw(carrays(x.shape, cvals(0.0, 2.0)))
    _same(fnp.power(x, y), np.power(x, y), 1e-10)
    _same(fnp.power(x, 3), np.power(x, 3), 1e-10)


@SETTINGS
@given(data=st.data())
def test_lax_complex_real_imag_conj(data: Any) -> None:
    shape = data.draw(shapes())
    re = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3)))
    im = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3)))
    z = lax.complex(re, im)
    _same(z, re + 1j * im)
    _same(lax.real(z), re)
    _same(lax.imag(z), im)
    _same(lax.conj(z), re - 1j * im)
    _same(lax.conj(re), re.astype(np.complex128))  # lax.conj of a real operand is complex
    _same(lax.abs(z), np.abs(re + 1j * im))
    _same(lax.complex(re.astype(np.float32), np.float32(2.0)),
          (re + 2j).astype(np.complex64), 1e-6)


def test_complex_keeps_infinite_parts() -> None:
    z = lax.complex(np.array([1.0]), np.array([np.inf]))
    assert np.asarray(z)[0].real == 1.0 and np.isinf(np.asarray(z)[0].imag)


@FEW
@given(data=st.data())
def test_vdot_var_std_abs_match_numpy(data: Any) -> None:
    x = data.draw(carrays(shapes(min_dims=1)))
    y = data.draw(carrays(x.shape))
    _same(fnp.vdot(x, y), np.vdot(x, y), 1e-10)
    _same(fnp.var(x), np.var(x), 1e-10)
    _same(fnp.std(x), np.std(x), 1e-10)
    _same(fnp.abs(x), np.abs(x))
    if x.ndim > 1:
        _same(fnp.var(x, axis=0, ddof=1) if x.shape[0] > 1 else fnp.var(x, axis=0),
              np.var(x, axis=0, ddof=1) if x.shape[0] > 1 else np.var(x, axis=0), 1e-10)


def test_angle_and_parts_of_real_inputs_match_jax() -> None:
    jax = _jax()
    jnp = jax.numpy
    with jax_x64_mode(jax, True):
        for v in (2.0, -2.0, np.array([1.0, -1.0]), np.array([1, -3]), 1j, np.array([1 - 1j])):
            for f, g in ((fnp.angle, jnp.angle), (fnp.real, jnp.real), (fnp.imag, jnp.imag),
                         (fnp.conj, jnp.conj)):
                _same(f(v), g(v))
        _same(fnp.angle(1 + 1j, deg=True), jnp.angle(1 + 1j, deg=True))


@pytest.mark.x32
def test_python_complex_scalars_follow_jax_promotion() -> None:
    jax = _jax()
    jnp = jax.numpy
    with jax_x64_mode(jax, False):
        cases = [np.ones(2, np.float32), np.ones(2, np.int32), np.ones(2, np.float16),
                 np.ones(2, np.complex64), 2.0, 3]
        for x in cases:
            a, b = fnp.multiply(x, 1j), jnp.multiply(x, 1j)
            assert (a.dtype, a.weak_type) == (b.dtype, b.weak_type), x
            np.testing.assert_allclose(a, b)
        a, b = fnp.asarray(1j), jnp.asarray(1j)
        assert (a.dtype, a.weak_type) == (b.dtype, b.weak_type)


def test_lax_refuses_a_complex_scalar_beside_a_real_array() -> None:
    # As JAX's lax: a Python number is an operand of its default dtype, never promoted.
    with pytest.raises(DTypeError, match="got float64, complex128"):
        lax.mul(np.ones(2), 1j)
    with pytest.raises(DTypeError, match="got complex128, float64"):
        lax.mul(np.ones(2, np.complex128), 2.0)
    _same(lax.mul(np.ones(2, np.complex128), 2.0 + 0j), np.full(2, 2 + 0j))


def test_converting_complex_to_real_takes_the_real_part_and_warns() -> None:
    z = fnp.array([1 + 2j, -3 - 1j])
    # As JAX: lax's conversion warns as NumPy does, astype with its own deprecation text.
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        r = lax.convert_element_type(z, np.float32)
    _same(r, np.array([1.0, -3.0], np.float32))
    with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes"):
        r = z.astype(np.float32)
    _same(r, np.array([1.0, -3.0], np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = fg.grad(lambda v: fnp.sum(v.astype(np.float64) ** 2))(z)
    _same(g, 2 * np.real(np.asarray(z)).astype(np.complex128))


def test_bad_dtypes_are_refused() -> None:
    with pytest.raises(DTypeError, match="real"):
        lax.real(np.ones(2))
    with pytest.raises(DTypeError, match="imag"):
        lax.imag(np.ones(2))
    with pytest.raises(DTypeError, match="complex"):
        lax.complex(np.ones(2, np.complex128), np.ones(2, np.complex128))
    with pytest.raises(DTypeError, match="floor"):
        lax.floor(np.ones(2, np.complex128))
    with pytest.raises(DTypeError, match="lt"):
        lax.lt(np.ones(2, np.complex128), np.ones(2, np.complex128))


# ------------------------------------------------- derivatives in the complex plane


def _pair(a: Any, b: Any) -> float:
    """Re(sum(a * b)) over the leaves: the real bilinear pairing JAX transposes under."""
    return float(sum(np.real(np.sum(np.asarray(x) * np.asarray(y)))
                     for x, y in zip(tree_leaves(a), tree_leaves(b))))


def _direction(rng: np.random.Generator, x: Any, part: str) -> np.ndarray:
    """A random tangent for ``x``: along the real parts or (complex x) the imaginary ones."""
    x = np.asarray(x)
    v = rng.standard_normal(x.shape)
    if x.dtype.kind != "c":
        return v.astype(x.dtype)
    return (v if part == "re" else 1j * v).astype(x.dtype)


def _fd(f: Callable[..., Any], args: tuple[Any, ...], vs: list[np.ndarray], eps: float
        ) -> list[np.ndarray]:
    plus = f(*[a + eps * v for a, v in zip(args, vs)])
    minus = f(*[a - eps * v for a, v in zip(args, vs)])
    return [(np.asarray(p) - np.asarray(m)) / (2 * eps)
            for p, m in zip(tree_leaves(plus), tree_leaves(minus))]


def check_complex_derivatives(f: Callable[..., Any], args: tuple[Any, ...], order: int = 2,
                              eps: float = 1e-6, tol: float = 1e-6, seed: int = 0) -> None:
    """jvp against central differences along the real and the imaginary parts, and vjp
    against them through the pairing; to ``order`` by checking the derivative functions."""
    rng = np.random.default_rng(seed)
    args = tuple(np.asarray(a) for a in args)
    for part in ("re", "im"):
        vs = [_direction(rng, a, part) for a in args]
        _, t_out = fg.jvp(f, args, tuple(vs))
        fd = _fd(f, args, vs, eps)
        for t, d in zip(tree_leaves(t_out), fd):
            np.testing.assert_allclose(np.asarray(t), d, rtol=tol, atol=tol,
                                       err_msg=f"jvp along the {part} parts")
        out, f_vjp = fg.vjp(f, *args)
        us = [_direction(rng, o, part) for o in tree_leaves(out)]
        u = fg.tree_util.tree_unflatten(fg.tree_util.tree_structure(out), us)
        cts = f_vjp(u)
        lhs, rhs = _pair(cts, vs), _pair(us, fd)
        assert abs(lhs - rhs) <= tol * max(1.0, abs(rhs)), (part, lhs, rhs)
    if order > 1:
        v = tuple(_direction(rng, a, "re") + _direction(rng, a, "im") for a in args)
        check_complex_derivatives(lambda *a: fg.jvp(f, a, v)[1], args, order - 1, eps, tol,
                                  seed + 1)
        out = f(*args)
        u = fg.tree_util.tree_map(lambda o: _direction(rng, o, "re") + _direction(rng, o, "im"),
                                  out)
        check_complex_derivatives(lambda *a: fg.vjp(f, *a)[1](u), args, order - 1, eps, tol,
                                  seed + 2)


HOLOMORPHIC = ["negative", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sqrt",
               "square", "reciprocal"]
NON_HOLOMORPHIC = ["abs", "real", "imag", "conj", "angle"]


@pytest.mark.parametrize("name", HOLOMORPHIC + NON_HOLOMORPHIC)
@FEW
@given(data=st.data())
def test_unary_derivatives_match_finite_differences(name: str, data: Any) -> None:
    fn, _, elements = UNARY[name]
    if name in ("abs", "angle"):
        elements = cvals(0.3, 3.0, away_from_cut=name == "angle")  # smooth away from 0
    x = data.draw(carrays(shapes(max_dims=2), elements))
    check_complex_derivatives(fn, (x,))


@pytest.mark.parametrize("name", sorted(BINARY))
@FEW
@given(data=st.data())
def test_binary_derivatives_match_finite_differences(name: str, data: Any) -> None:
    fn, _ = BINARY[name]
    x = data.draw(carrays(shapes(max_dims=2)))
    y = data.draw(carrays(x.shape, cvals(0.3, 3.0)))
    check_complex_derivatives(fn, (x, y))


@FEW
@given(data=st.data())
def test_mixed_derivatives_match_finite_differences(data: Any) -> None:
    """Real <-> complex crossings: lax.complex, power, var, vdot, a real loss."""
    shape = data.draw(shapes(min_dims=1, max_dims=2))
    re = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2)))
    im = data.draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2)))
    z = data.draw(carrays(shape, cvals(0.3, 2.0, away_from_cut=True)))
    check_complex_derivatives(lax.complex, (re, im))
    check_complex_derivatives(lambda a, b: fnp.power(a, b), (z, z * 0.5))
    check_complex_derivatives(fnp.var, (z,))
    check_complex_derivatives(fnp.vdot, (z, z[::-1] if z.ndim else z))
    check_complex_derivatives(lambda a: fnp.sum(fnp.abs(fnp.exp(a) * a) ** 2), (z,))
    check_complex_derivatives(lambda a, b: fnp.real(a * fnp.conj(b)), (z, re + 0j))


# --------------------------------------------------------------- against JAX


def _both(jax: Any) -> list[tuple[Any, Any]]:
    return [(fg, fnp), (jax, jax.numpy)]


FUNCS: dict[str, Callable[[Any], Callable[..., Any]]] = {
    # builders taking a numpy module (funcgrad's or JAX's)
    "real_loss": lambda np_: lambda z: np_.sum(np_.abs(np_.sin(z) * z) ** 2),
    "real_part": lambda np_: lambda z: np_.sum(np_.real(np_.exp(z) * np_.conj(z))),
    "angle": lambda np_: lambda z: np_.sum(np_.angle(z * z)),
    "var": lambda np_: lambda z: np_.var(z),
    "vdot": lambda np_: lambda z: np_.real(np_.vdot(z, np_.cos(z))),
}
HOLO: dict[str, Callable[[Any], Callable[..., Any]]] = {
    "poly": lambda np_: lambda z: np_.sum(z ** 3 - 2 * z),
    "exp_log": lambda np_: lambda z: np_.sum(np_.exp(z) * np_.log(z)),
    "tanh_sqrt": lambda np_: lambda z: np_.sum(np_.tanh(z) / np_.sqrt(z)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
@FEW
@given(z=carrays(hnp.array_shapes(max_dims=1, min_side=1, max_side=3),
                 cvals(0.3, 2.0, away_from_cut=True)))
def test_grad_of_real_functions_matches_jax(name: str, z: np.ndarray) -> None:
    jax = _jax()
    with jax_x64_mode(jax, True):
        (ours, jours), (theirs, jtheirs) = _both(jax)
        f, g = FUNCS[name](jours), FUNCS[name](jtheirs)
        _same(ours.grad(f)(z), theirs.grad(g)(z), 1e-9)
        _same(ours.jacrev(f)(z), theirs.jacrev(g)(z), 1e-9)
        x = np.abs(z.real) + 0.5  # real inputs, away from the origin (atan2's singularity)
        _same(ours.hessian(f)(x), theirs.hessian(g)(x), 1e-8)


@pytest.mark.parametrize("name", sorted(HOLO))
@FEW
@given(z=carrays(hnp.array_shapes(max_dims=1, min_side=1, max_side=3),
                 cvals(0.3, 2.0, away_from_cut=True)))
def test_holomorphic_derivatives_match_jax(name: str, z: np.ndarray) -> None:
    jax = _jax()
    with jax_x64_mode(jax, True):
        (ours, jours), (theirs, jtheirs) = _both(jax)
        f, g = HOLO[name](jours), HOLO[name](jtheirs)
        _same(ours.grad(f, holomorphic=True)(z), theirs.grad(g, holomorphic=True)(z), 1e-9)

        def elementwise(np_: Any) -> Callable[..., Any]:
            return lambda v: np_.exp(v) * v ** 2

        for jac in ("jacfwd", "jacrev"):
            _same(getattr(ours, jac)(elementwise(jours), holomorphic=True)(z),
                  getattr(theirs, jac)(elementwise(jtheirs), holomorphic=True)(z), 1e-9)
        _same(ours.hessian(f, holomorphic=True)(z), theirs.hessian(g, holomorphic=True)(z),
              1e-8)
        t = z[::-1].copy()
        a = ours.jvp(elementwise(jours), (z,), (t,))
        b = theirs.jvp(elementwise(jtheirs), (z,), (t,))
        for x, y in zip(a, b):
            _same(x, y, 1e-9)
        out, pull = ours.vjp(elementwise(jours), z)
        out2, pull2 = theirs.vjp(elementwise(jtheirs), z)
        _same(pull(t)[0], pull2(t)[0], 1e-9)


@FEW
@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=1, min_side=1, max_side=3),
                    elements=st.floats(-2, 2)))
def test_real_to_complex_jacobians_match_jax(x: np.ndarray) -> None:
    jax = _jax()
    with jax_x64_mode(jax, True):
        (ours, jours), (theirs, jtheirs) = _both(jax)
        _same(ours.jacfwd(lambda v: jours.exp(1j * v))(x),
              theirs.jacfwd(lambda v: jtheirs.exp(1j * v))(x), 1e-12)
        _same(ours.grad(lambda v: jours.abs(jours.sum(jours.exp(1j * v) * v)))(x),
              theirs.grad(lambda v: jtheirs.abs(jtheirs.sum(jtheirs.exp(1j * v) * v)))(x),
              1e-10)


def test_abs_derivative_at_zero_matches_jax() -> None:
    jax = _jax()
    with jax_x64_mode(jax, True):
        z = np.array([0j, 1 + 1j])
        _same(fg.grad(lambda v: fnp.sum(fnp.abs(v)))(z),
              jax.grad(lambda v: jax.numpy.sum(jax.numpy.abs(v)))(z))


def _error(f: Callable[[], Any]) -> BaseException:
    with pytest.raises(TypeError) as info:
        f()
    return info.value


ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "grad-complex-output": lambda m, np_: m.grad(lambda v: np_.sum(v * v))(
        np.array([1 + 1j])),
    "grad-holomorphic-real-input": lambda m, np_: m.grad(lambda v: np_.sum(v * v),
                                                         holomorphic=True)(np.array([1.0])),
    "grad-holomorphic-real-output": lambda m, np_: m.grad(lambda v: np_.sum(np_.abs(v)),
                                                          holomorphic=True)(np.array([1j])),
    "jacfwd-holomorphic-real-input": lambda m, np_: m.jacfwd(lambda v: v,
                                                             holomorphic=True)(np.ones(2)),
    "jacfwd-complex-input": lambda m, np_: m.jacfwd(lambda v: v * v)(np.ones(2) + 0j),
    "jacfwd-holomorphic-real-output": lambda m, np_: m.jacfwd(np_.abs, holomorphic=True)(
        np.ones(2) + 1j),
    "jacrev-complex-output": lambda m, np_: m.jacrev(lambda v: v * v)(np.ones(2) + 0j),
    "jacrev-holomorphic-real-input": lambda m, np_: m.jacrev(lambda v: v,
                                                             holomorphic=True)(np.ones(2)),
    "jacrev-holomorphic-real-output": lambda m, np_: m.jacrev(np_.abs, holomorphic=True)(
        np.ones(2) + 1j),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_error_texts_match_jax(case: str) -> None:
    jax = _jax()
    with jax_x64_mode(jax, True):
        ours = _error(lambda: ERRORS[case](fg, fnp))
        theirs = _error(lambda: ERRORS[case](jax, jax.numpy))
    assert isinstance(ours, GradError)
    assert str(ours) == str(theirs)


# ------------------------------------------------------- transforms and backends


@pytest.mark.parametrize("name", ["exp", "abs", "real", "imag", "conj", "angle", "sqrt"])
@FEW
@given(data=st.data())
def test_vmap_and_jit_match_eager(name: str, data: Any) -> None:
    fn, _, elements = UNARY[name]
    x = data.draw(carrays(shapes(min_dims=1), elements))
    eager = fn(x)
    _same(fg.jit(fn)(x), eager)
    _same(fg.vmap(fn)(x), np.stack([np.asarray(fn(r)) for r in x]))
    _same(fg.vmap(lax.complex, in_axes=(0, None))(np.real(x), np.float64(2.0)),
          np.real(x) + 2j)
    def loss(v: Any) -> Any:
        return fnp.sum(fnp.real(fn(v) * v))

    _same(fg.vmap(fg.grad(loss))(x), np.stack([np.asarray(fg.grad(loss)(r)) for r in x]))


def test_jaxpr_prints_like_jax() -> None:
    text = str(fg.make_jaxpr(lambda z: lax.abs(lax.conj(z)))(np.ones(2, np.complex128)))
    assert "conj[input_dtype=complex128] a" in text
    assert "f64[2] = abs" in text


def test_fusion_planner_leaves_complex_to_the_array_module() -> None:
    """The CUDA generator has no complex types: complex equations are never fused."""
    from funcgrad.backends.fusion import FusedStep, plan_jaxpr

    closed = fg.make_jaxpr(lambda z, x: fnp.exp(z) * 2.0 + fnp.real(z) * x + x * x)(
        np.ones(3, np.complex128), np.ones(3))
    plan = plan_jaxpr(closed)
    for step in plan.steps:
        if isinstance(step, FusedStep):
            for eqn in step.eqns:
                assert all(v.aval.dtype.kind != "c" for v in (*eqn.inputs, *eqn.outputs)), eqn
    assert any(isinstance(s, FusedStep) for s in plan.steps)  # the real part still fuses
