"""Automatic differentiation: jvp, vjp, grad, Jacobians, nesting, custom rules, checkpoint,
error cases, and funcgrad.testing.check_grads itself."""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors as E
from funcgrad.testing import check_grads
from funcgrad.tree_util import tree_leaves, tree_map, tree_structure

HYP = settings(max_examples=12, deadline=None)
floats = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
vec3 = st.lists(floats, min_size=3, max_size=3).map(np.array)


def close(a, b, tol=1e-8):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=tol, atol=tol)


def tree_close(a, b, tol=1e-8):
    assert tree_structure(a) == tree_structure(b), (tree_structure(a), tree_structure(b))
    for x, y in zip(tree_leaves(a), tree_leaves(b)):
        assert np.shape(x) == np.shape(y)
        close(x, y, tol)


def num_jac(f, x, eps=1e-6):
    """Central-difference Jacobian of an array function of one array: out.shape + x.shape."""
    x = np.asarray(x, np.float64)
    out = np.asarray(f(x))
    jac = np.zeros(out.shape + x.shape)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        jac[(..., *idx)] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return jac


# ------------------------------------------------------------------ jvp / vjp


def test_jvp_basic_and_pytrees() -> None:
    x = np.array([0.3, -1.2, 2.0])
    v = np.array([1.0, 0.5, -2.0])
    out, t = fg.jvp(lambda x: fnp.sin(x) * x, (x,), (v,))
    close(out, np.sin(x) * x)
    close(t, (np.cos(x) * x + np.sin(x)) * v)
    # pytree in and out
    primals = ({"a": np.array(2.0), "b": [np.array(3.0)]},)
    tangents = ({"a": np.array(1.0), "b": [np.array(10.0)]},)
    out, t = fg.jvp(lambda d: (d["a"] * d["b"][0], {"s": d["a"] ** 2}), primals, tangents)
    tree_close(out, (6.0, {"s": 4.0}))
    tree_close(t, (3.0 + 20.0, {"s": 4.0}))


def test_jvp_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="tuples"):
        fg.jvp(fnp.sin, np.ones(2), np.ones(2))
    with pytest.raises(E.ShapeError):
        fg.jvp(fnp.sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(E.TreeStructureError):
        fg.jvp(lambda a, b: a * b, (np.ones(2), np.ones(2)), (np.ones(2),))
    with pytest.raises(E.DTypeError):
        fg.jvp(fnp.sin, (np.ones(2),), (np.ones(2, np.float32),))


def test_vjp_basic_and_pytrees() -> None:
    y, f_vjp = fg.vjp(lambda a, b: a * b, np.array(2.0), np.array(5.0))
    close(y, 10.0)
    ga, gb = f_vjp(np.array(1.0))
    close(ga, 5.0)
    close(gb, 2.0)
    x = {"w": np.array([1.0, 2.0]), "b": np.array(0.5)}
    out, f_vjp = fg.vjp(lambda p: {"y": p["w"] * p["b"], "z": fnp.sum(p["w"])}, x)
    (ct,) = f_vjp({"y": np.array([1.0, 1.0]), "z": np.array(2.0)})
    tree_close(ct, {"w": np.array([2.5, 2.5]), "b": np.array(3.0)})


def test_vjp_fn_rejects_wrong_cotangents() -> None:
    _, f_vjp = fg.vjp(lambda x: (x * 2.0, x * 3.0), np.ones(2))
    with pytest.raises(E.TreeStructureError, match="structure"):
        f_vjp(np.ones(2))
    with pytest.raises(E.TreeStructureError):
        f_vjp([np.ones(2), np.ones(2)])
    with pytest.raises(E.ShapeError, match=r"got float64\[3\], but expected float64\[2\]"):
        f_vjp((np.ones(3), np.ones(2)))
    (g,) = f_vjp((np.ones(2), np.ones(2)))
    close(g, [5.0, 5.0])


def test_vjp_fn_can_be_called_twice() -> None:
    _, f_vjp = fg.vjp(lambda x: fnp.sin(x) * x, np.array([0.5, 1.0]))
    a = f_vjp(np.array([1.0, 0.0]))[0]
    b = f_vjp(np.array([0.0, 1.0]))[0]
    x = np.array([0.5, 1.0])
    close(a + b, np.cos(x) * x + np.sin(x))


def test_integer_outputs_get_no_derivative() -> None:
    out, t = fg.jvp(lambda x: (x * 2.0, fnp.argmax(x)), (np.array([1.0, 3.0]),),
                    (np.ones(2),))
    assert int(out[1]) == 1
    assert not np.any(t[1])


# ------------------------------------------------------------------ grad / value_and_grad


def test_grad_and_value_and_grad_argnums() -> None:
    f = lambda x, y: x * y ** 2  # noqa: E731
    close(fg.grad(f)(2.0, 3.0), 9.0)
    close(fg.grad(f, argnums=1)(2.0, 3.0), 12.0)
    close(fg.grad(f, argnums=-1)(2.0, 3.0), 12.0)
    gx, gy = fg.grad(f, argnums=(0, 1))(2.0, 3.0)
    close(gx, 9.0)
    close(gy, 12.0)
    (g1,) = fg.grad(f, argnums=(1,))(2.0, 3.0)
    close(g1, 12.0)
    v, (gx, gy) = fg.value_and_grad(f, argnums=(0, 1))(2.0, 3.0)
    close(v, 18.0)
    close(gx, 9.0)
    close(gy, 12.0)
    close(fg.grad(lambda x, y=2.0: x * y)(3.0, y=4.0), 4.0)


def test_grad_over_pytree_argument() -> None:
    params = {"w": np.array([1.0, -2.0]), "b": (np.array(0.5),)}

    def loss(p, x):
        return fnp.sum((p["w"] * x + p["b"][0]) ** 2)

    x = np.array([3.0, 1.0])
    g = fg.grad(loss)(params, x)
    r = params["w"] * x + 0.5
    tree_close(g, {"w": 2 * r * x, "b": (np.array(2 * r.sum()),)})
    assert fg.grad(loss)(params, x)["w"].dtype == np.float64


def test_grad_keeps_float32() -> None:
    g = fg.grad(lambda x: fnp.sum(x ** 2))(np.ones(2, np.float32))
    assert g.dtype == np.float32


def test_has_aux() -> None:
    def f(x):
        return fnp.sum(x ** 2), {"n": 3}

    g, aux = fg.grad(f, has_aux=True)(np.array([1.0, 2.0]))
    close(g, [2.0, 4.0])
    assert aux == {"n": 3}
    (v, aux), g = fg.value_and_grad(f, has_aux=True)(np.array([1.0, 2.0]))
    close(v, 5.0)
    assert aux == {"n": 3}
    out, t, aux = fg.jvp(lambda x: (x * 2.0, x * 5.0), (3.0,), (1.0,), has_aux=True)
    close(out, 6.0)
    close(t, 2.0)
    close(aux, 15.0)


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp", "jacrev"])
def test_has_aux_returns_concrete_aux(transform) -> None:
    f = lambda x: (fnp.sum(x * 2.0), x * 5.0)  # noqa: E731
    x = np.array([1.0, 3.0])
    if transform == "grad":
        aux = fg.grad(f, has_aux=True)(x)[1]
    elif transform == "value_and_grad":
        aux = fg.value_and_grad(f, has_aux=True)(x)[0][1]
    elif transform == "vjp":
        aux = fg.vjp(f, x, has_aux=True)[2]
    else:
        aux = fg.jacrev(f, has_aux=True)(x)[1]
    assert isinstance(aux, fg.Array) and not isinstance(aux, fg.core.Tracer)
    close(aux + 1.0, [6.0, 16.0])


def test_grad_error_cases() -> None:
    with pytest.raises(E.NonScalarOutputError, match=r"shape: \(3,\)"):
        fg.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(E.NonScalarOutputError):
        fg.grad(lambda x: (x, x))(1.0)
    with pytest.raises(E.NonScalarOutputError, match="floating"):
        fg.grad(lambda x: fnp.sum(x > 0))(np.ones(3))
    with pytest.raises(E.IntegerInputError, match="int64"):
        fg.grad(lambda x: x * 2.0)(3)
    with pytest.raises(E.IntegerInputError):
        fg.grad(lambda x: fnp.sum(x * 2.0))(np.arange(3))
    with pytest.raises(E.IntegerInputError):
        fg.grad(lambda x, y: x * y, argnums=1)(2.0, 3)
    with pytest.raises(E.IntegerInputError):
        fg.jacrev(lambda x: x * 2.0)(np.arange(3))
    with pytest.raises(E.ArgnumsError, match="requires at least 2 positional arguments"):
        fg.grad(lambda x: x * 2.0, argnums=1)(3.0)
    with pytest.raises(E.ArgnumsError):
        fg.grad(lambda x, y: x * y, argnums=(0, 2))(3.0, 4.0)
    with pytest.raises(E.ArgnumsError):
        fg.grad(lambda x, y: x * y, argnums=-3)(3.0, 4.0)
    with pytest.raises(E.ArgnumsError, match="integers"):
        fg.grad(lambda x, y: x * y, argnums="a")(3.0, 4.0)
    with pytest.raises(E.ArgnumsError):
        fg.jacfwd(lambda x: x, argnums=1)(np.ones(2))
    with pytest.raises(E.HasAuxError, match="pair"):
        fg.grad(lambda x: x * 2.0, has_aux=True)(3.0)
    with pytest.raises(E.HasAuxError, match="length 3"):
        fg.grad(lambda x: (x * 2.0, 1, 2), has_aux=True)(3.0)
    # an int argument left out of argnums is fine
    close(fg.grad(lambda x, n: x * n)(2.0, 3), 3.0)


# ------------------------------------------------------------------ Jacobians


def _g(d):
    return {"s": d["a"] * d["b"][0], "t": (fnp.sum(d["a"] ** 2),)}


G_IN = {"a": np.array([1.0, 2.0]), "b": [np.array(3.0)]}
G_JAC = {  # hand-derived: out structure of in structure, blocks out.shape + in.shape
    "s": {"a": np.diag([3.0, 3.0]), "b": [np.array([1.0, 2.0])]},
    "t": ({"a": np.array([2.0, 4.0]), "b": [np.array(0.0)]},),
}


@pytest.mark.parametrize("jac", [fg.jacfwd, fg.jacrev])
def test_jacobian_over_pytrees_hand_derived(jac) -> None:
    tree_close(jac(_g)(G_IN), G_JAC)


@pytest.mark.parametrize("jac", [fg.jacfwd, fg.jacrev])
def test_jacobian_argnums(jac) -> None:
    f = lambda x, y: x * y + fnp.sum(x)  # noqa: E731
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    jx, jy = jac(f, argnums=(0, 1))(x, y)
    close(jx, np.diag(y) + 1.0)
    close(jy, np.diag(x))
    close(jac(f, argnums=1)(x, y), np.diag(x))


@pytest.mark.parametrize("jac", [fg.jacfwd, fg.jacrev])
def test_jacobian_matrix_input_against_finite_differences(jac) -> None:
    f = lambda m: fnp.tanh(m @ m.T)[0] * fnp.sum(fnp.sin(m), axis=0)[:2]  # noqa: E731
    m = np.array([[0.2, -0.5, 0.9], [1.1, 0.3, -0.7]])
    j = jac(f)(m)
    assert j.shape == (2, 2, 3)
    close(j, num_jac(f, m), tol=1e-6)


@pytest.mark.parametrize("jac", [fg.jacfwd, fg.jacrev])
def test_jacobian_scalar_in_scalar_out(jac) -> None:
    close(jac(fnp.sin)(0.3), math.cos(0.3))
    assert np.shape(jac(fnp.sin)(np.array(0.3))) == ()


def test_hessian_hand_derived_and_pytree() -> None:
    close(fg.hessian(lambda x: fnp.sum(x ** 3))(np.array([1.0, 2.0])), np.diag([6.0, 12.0]))
    f = lambda x, y: fnp.sum(x * y * x)  # noqa: E731
    x, y = np.ones(2), np.full(2, 3.0)
    hxx, hxy = fg.hessian(f, argnums=(0, 1))(x, y)[0]
    close(hxx, np.diag(2 * y))
    close(hxy, np.diag(2 * x))
    h = fg.hessian(lambda d: d["u"] ** 2 * d["v"])({"u": np.array(2.0), "v": np.array(5.0)})
    tree_close(h, {"u": {"u": 10.0, "v": 4.0}, "v": {"u": 4.0, "v": 0.0}})


@HYP
@given(vec3)
def test_hessian_forms_agree(x) -> None:
    f = lambda x: fnp.sum(fnp.sin(x) ** 2 * x[::-1]) + x[0] * x[1] ** 2  # noqa: E731
    h = fg.hessian(f)(x)
    close(h, fg.jacfwd(fg.jacrev(f))(x))
    close(h, fg.jacrev(fg.jacfwd(f))(x))
    close(h, fg.jacrev(fg.jacrev(f))(x))
    close(h, fg.jacfwd(fg.jacfwd(f))(x))
    close(h, h.T)
    close(h, num_jac(fg.grad(f), x), tol=1e-5)


def test_hessian_of_prod_away_from_zero() -> None:
    x = np.array([2.0, 3.0, 5.0])
    close(fg.grad(fnp.prod)(x), [15.0, 10.0, 6.0])
    close(fg.hessian(fnp.prod)(x), [[0.0, 5.0, 3.0], [5.0, 0.0, 2.0], [3.0, 2.0, 0.0]])
    close(fg.grad(fnp.prod)(np.array([0.0, 3.0])), [3.0, 0.0])


@pytest.mark.parametrize("jac", ["hessian", "jacrev_jacrev", "jacfwd_jacfwd"])
def test_hessian_of_prod_at_zero(jac) -> None:
    h = {"hessian": fg.hessian(fnp.prod),
         "jacrev_jacrev": fg.jacrev(fg.jacrev(fnp.prod)),
         "jacfwd_jacfwd": fg.jacfwd(fg.jacfwd(fnp.prod))}[jac]
    close(h(np.zeros(2)), [[0.0, 1.0], [1.0, 0.0]])


# ------------------------------------------------------------------ higher order


@HYP
@given(floats)
def test_third_derivative_of_polynomial(x) -> None:
    f = lambda x: 3.0 * x ** 5 - 2.0 * x ** 3 + x - 7.0  # noqa: E731
    close(fg.grad(f)(x), 15 * x ** 4 - 6 * x ** 2 + 1)
    close(fg.grad(fg.grad(f))(x), 60 * x ** 3 - 12 * x)
    close(fg.grad(fg.grad(fg.grad(f)))(x), 180 * x ** 2 - 12)
    close(fg.grad(fg.grad(fg.grad(fg.grad(f))))(x), 360 * x)


@HYP
@given(floats)
def test_derivatives_of_sin_cycle(x) -> None:
    d = fnp.sin
    expected = [math.cos(x), -math.sin(x), -math.cos(x), math.sin(x)]
    for want in expected:
        d = fg.grad(d)
        close(d(x), want)


@HYP
@given(floats)
def test_mixed_mode_third_derivative(x) -> None:
    f = lambda x: fnp.exp(0.5 * x) * fnp.sin(x)  # noqa: E731
    d1 = lambda x: fg.jvp(f, (x,), (1.0,))[1]  # noqa: E731
    d2 = fg.grad(d1)
    d3 = lambda x: fg.jvp(d2, (x,), (1.0,))[1]  # noqa: E731
    close(d3(x), fg.grad(fg.grad(fg.grad(f)))(x))
    # closed form: e^{x/2} ((1/8 - 3/4 * 1) sin x + (3/4 - 1) cos x) ... by finite differences
    h = 1e-4
    fd = (fg.grad(fg.grad(f))(x + h) - fg.grad(fg.grad(f))(x - h)) / (2 * h)
    close(d3(x), fd, tol=1e-6)


@HYP
@given(vec3, vec3)
def test_hessian_vector_products_in_every_mode(x, v) -> None:
    f = lambda x: fnp.sum(fnp.sin(x) ** 2 * x) + fnp.sum(x) ** 2  # noqa: E731
    hv = fg.hessian(f)(x) @ v
    close(fg.jvp(fg.grad(f), (x,), (v,))[1], hv)  # forward over reverse
    close(fg.grad(lambda x: fg.jvp(f, (x,), (v,))[1])(x), hv)  # reverse over forward
    close(fg.vjp(lambda x: fg.jvp(f, (x,), (v,))[1], x)[1](1.0)[0], hv)  # vjp of jvp
    close(fg.jvp(lambda x: fg.vjp(f, x)[1](1.0)[0], (x,), (v,))[1], hv)  # jvp of vjp
    close(fg.vjp(lambda x: fg.vjp(f, x)[1](1.0)[0], x)[1](v)[0], hv)  # vjp of vjp
    close(fg.linearize(fg.grad(f), x)[1](v), hv)


# ------------------------------------------------------------ closures, perturbation confusion


def test_perturbation_confusion() -> None:
    close(fg.grad(lambda x: fg.grad(lambda y: x * y)(1.0))(1.0), 1.0)
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1
    close(fg.grad(lambda x: x * fg.grad(lambda y: x + y)(1.0))(1.0), 1.0)
    # d/dx [x * d/dy (x * y)] = d/dx [x^2] = 2x
    close(fg.grad(lambda x: x * fg.grad(lambda y: x * y)(2.0))(3.0), 6.0)
    # forward mode versions
    close(fg.jvp(lambda x: x * fg.jvp(lambda y: x + y, (1.0,), (1.0,))[1],
                 (1.0,), (1.0,))[1], 1.0)
    close(fg.jvp(lambda x: fg.jvp(lambda y: x * y, (2.0,), (1.0,))[1],
                 (3.0,), (1.0,))[1], 1.0)
    # mixed
    close(fg.grad(lambda x: x * fg.jvp(lambda y: x + y, (1.0,), (1.0,))[1])(1.0), 1.0)
    close(fg.jvp(lambda x: x * fg.grad(lambda y: x + y)(1.0), (1.0,), (1.0,))[1], 1.0)


def test_closures_over_outer_tracers() -> None:
    # d/da of grad_y (a y^2) at y=3 = d/da (6a) = 6
    out, t = fg.jvp(lambda a: fg.grad(lambda y: a * y ** 2)(3.0), (2.0,), (1.0,))
    close(out, 12.0)
    close(t, 6.0)
    close(fg.grad(lambda a: fg.jvp(lambda y: a * y ** 2, (3.0,), (1.0,))[1])(2.0), 6.0)
    # staged closure: make_jaxpr over a, grad over y
    cj = fg.make_jaxpr(lambda a: fg.grad(lambda y: a * y ** 2)(3.0))(2.0)
    close(fg.eval_jaxpr(cj, np.asarray(5.0))[0], 30.0)
    # grad through a closure over an outer grad tracer, nested three deep
    f = lambda x: fg.grad(lambda y: fg.grad(lambda z: x * y * z)(1.0))(1.0)  # noqa: E731
    close(fg.grad(f)(4.0), 1.0)


# ------------------------------------------------------------------ linearize, stop_gradient


@HYP
@given(vec3, vec3)
def test_linearize_equals_jvp(x, v) -> None:
    f = lambda x: fnp.sin(x) * fnp.exp(x[0]) + x ** 2  # noqa: E731
    y, f_jvp = fg.linearize(f, x)
    y2, t2 = fg.jvp(f, (x,), (v,))
    close(y, y2)
    close(f_jvp(v), t2)
    close(f_jvp(2.0 * v), 2.0 * t2)  # linear


def test_linearize_pytrees_and_errors() -> None:
    y, f_jvp = fg.linearize(lambda d: d["a"] * d["b"], {"a": np.array(2.0), "b": np.array(3.0)})
    close(y, 6.0)
    close(f_jvp({"a": np.array(1.0), "b": np.array(0.0)}), 3.0)
    close(f_jvp({"a": np.array(0.0), "b": np.array(1.0)}), 2.0)
    with pytest.raises(E.TreeStructureError):
        f_jvp([np.array(1.0), np.array(0.0)])
    _, f2 = fg.linearize(lambda a, b: a * b, 2.0, 3.0)
    close(f2(1.0, 0.0), 3.0)


def test_stop_gradient() -> None:
    close(fg.grad(lambda x: x * fg.lax.stop_gradient(x))(3.0), 3.0)
    close(fg.grad(lambda x: x * fg.lax.stop_gradient(x * x))(3.0), 9.0)
    close(fg.jvp(lambda x: fg.lax.stop_gradient(x) * x, (3.0,), (1.0,))[1], 3.0)
    tree = fg.lax.stop_gradient({"a": np.ones(2), "b": (2.0,)})
    assert tree_structure(tree) == tree_structure({"a": 0, "b": (0,)})
    close(fg.grad(lambda x: fnp.sum(fg.lax.stop_gradient({"w": x})["w"]) + x[0])(np.ones(2)),
          [1.0, 0.0])
    close(fg.hessian(lambda x: x ** 2 * fg.lax.stop_gradient(x))(2.0), 4.0)


# ------------------------------------------------------------------ custom_jvp


@fg.custom_jvp
def log1pexp(x):
    return fnp.log(1.0 + fnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + fnp.exp(x)))


def test_custom_jvp_numerically_stable_log1pexp() -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        naive = fg.grad(lambda x: fnp.log(1.0 + fnp.exp(x)))(1000.0)
        assert np.isnan(naive)
        close(fg.grad(log1pexp)(1000.0), 1.0)
        close(fg.grad(lambda x: fnp.sum(log1pexp(x)))(np.array([0.0, 1000.0])), [0.5, 1.0])
        close(fg.jvp(log1pexp, (1000.0,), (2.0,))[1], 2.0)
    close(fg.grad(log1pexp)(0.0), 0.5)
    close(fg.grad(fg.grad(log1pexp))(0.0), 0.25)
    close(log1pexp(0.0), math.log(2.0))


def test_custom_jvp_rule_is_used_by_every_mode() -> None:
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 3.0 * t[0]))  # deliberately not cos
    x = np.array([0.2, 0.7])
    close(fg.jvp(f, (x,), (np.ones(2),))[1], [3.0, 3.0])
    close(fg.grad(lambda x: fnp.sum(f(x)))(x), [3.0, 3.0])
    close(fg.jacrev(f)(x), 3.0 * np.eye(2))
    close(fg.jacfwd(f)(x), 3.0 * np.eye(2))
    close(f(x), np.sin(x))


def test_custom_jvp_pytrees_and_missing_rule() -> None:
    @fg.custom_jvp
    def f(d):
        return {"p": d["x"] * d["y"]}

    @f.defjvp
    def f_jvp(primals, tangents):
        (d,), (t,) = primals, tangents
        return f(d), {"p": 10.0 * t["x"] + 100.0 * t["y"]}

    g = fg.grad(lambda d: f(d)["p"])({"x": np.array(1.0), "y": np.array(2.0)})
    tree_close(g, {"x": 10.0, "y": 100.0})

    @fg.custom_jvp
    def no_rule(x):
        return x

    with pytest.raises(E.NonDifferentiableError, match="defjvp"):
        no_rule(1.0)


def test_custom_jvp_nondiff_argnums_keeps_argument_order() -> None:
    @partial(fg.custom_jvp, nondiff_argnums=(1,))
    def p(x, n):
        return x ** n

    p.defjvp(lambda n, primals, tangents: (p(primals[0], n),
                                           n * primals[0] ** (n - 1) * tangents[0]))
    close(p(2.0, 3), 8.0)


def test_custom_jvp_nondiff_argnums_jax_convention() -> None:
    @partial(fg.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 7.0 * t

    close(app(fnp.sin, 1.0), math.sin(1.0))
    close(fg.grad(lambda x: app(fnp.sin, x))(1.0), 7.0)


# ------------------------------------------------------------------ custom_vjp


@fg.custom_vjp
def clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (fnp.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_gradient_clipping() -> None:
    close(clip_gradient(2.0), 2.0)
    close(fg.grad(lambda x: clip_gradient(x) * 10.0)(2.0), 1.0)
    close(fg.grad(lambda x: clip_gradient(x) * 0.5)(2.0), 0.5)
    close(fg.grad(lambda x: clip_gradient(x) * -10.0)(2.0), -1.0)
    close(fg.grad(lambda x: 3.0 * clip_gradient(x * 10.0))(2.0), 10.0)
    close(fg.jacrev(lambda x: clip_gradient(x) * 10.0)(np.array(2.0)), 1.0)


def test_custom_vjp_with_residuals_and_pytrees() -> None:
    @fg.custom_vjp
    def f(d):
        return fnp.sin(d["a"]) * d["b"]

    def fwd(d):
        return f(d), (fnp.cos(d["a"]), d["b"], fnp.sin(d["a"]))

    def bwd(res, g):
        cos_a, b, sin_a = res
        return ({"a": 100.0 * g * cos_a * b, "b": g * sin_a},)

    f.defvjp(fwd, bwd)
    d = {"a": np.array(0.3), "b": np.array(2.0)}
    g = fg.grad(f)(d)
    tree_close(g, {"a": 100.0 * math.cos(0.3) * 2.0, "b": math.sin(0.3)})


@pytest.mark.parametrize(("bwd", "match"), [
    (lambda r, g: g, "tuple"),
    (lambda r, g: (g, g), "same container \\(pytree\\) structure"),  # JAX's text
])
def test_custom_vjp_bwd_wrong_structure(bwd, match) -> None:
    @fg.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (f(x), None), bwd)
    with pytest.raises(E.TreeStructureError, match=match):
        fg.grad(f)(1.0)


def test_custom_vjp_bwd_may_return_a_list_of_the_right_length() -> None:
    @fg.custom_vjp
    def f(x):
        return x * 2.0

    f.defvjp(lambda x: (f(x), None), lambda r, g: [g * 3.0])  # accepted by JAX too
    assert float(fg.grad(f)(1.0)) == 3.0


def test_custom_vjp_bwd_wrong_leaf_structure() -> None:
    @fg.custom_vjp
    def f(d):
        return fnp.sum(d["a"]) * 2.0

    f.defvjp(lambda d: (f(d), None), lambda r, g: ([g],))
    with pytest.raises(E.TreeStructureError, match="structure"):
        fg.grad(f)({"a": np.ones(2)})


def test_custom_vjp_forward_mode_is_an_error() -> None:
    with pytest.raises(E.NonDifferentiableError, match="custom_vjp"):
        fg.jvp(clip_gradient, (2.0,), (1.0,))
    with pytest.raises(E.NonDifferentiableError):
        fg.jacfwd(clip_gradient)(np.ones(2))
    # forward over reverse differentiates the bwd rule itself (d/dx clip(2x) = 2 or 0)
    h = fg.hessian(lambda x: fnp.sum(clip_gradient(x) ** 2))(np.array([0.1, 2.0]))
    close(h, [[2.0, 0.0], [0.0, 0.0]])

    @fg.custom_vjp
    def no_rule(x):
        return x

    with pytest.raises(E.NonDifferentiableError, match="defvjp"):
        no_rule(1.0)


def test_custom_vjp_nondiff_argnums_keeps_argument_order() -> None:
    @partial(fg.custom_vjp, nondiff_argnums=(1,))
    def f(x, n):
        return x - n

    seen = []

    def fwd(x, n):
        seen.append((float(x), float(n)))
        return f(x, n), None

    f.defvjp(fwd, lambda n, res, g: (2.0 * g,))
    close(f(5.0, 1.0), 4.0)
    close(fg.grad(f)(5.0, 1.0), 2.0)
    assert seen == [(5.0, 1.0)]


# ------------------------------------------------------------------ checkpoint


def _count(cj, name):
    return sum(1 for e in cj.eqns if e.primitive.name == name)


def test_checkpoint_same_gradient_and_recomputes() -> None:
    f = lambda x: fnp.sum(fnp.sin(x) * 3.0)  # noqa: E731  sin appears only in the forward
    x = np.array([0.1, 0.5, 0.9])
    close(fg.grad(fg.checkpoint(f))(x), fg.grad(f)(x))
    close(fg.grad(fg.remat(f))(x), 3.0 * np.cos(x))
    plain = fg.make_jaxpr(fg.grad(f))(x)
    ckpt = fg.make_jaxpr(fg.grad(fg.checkpoint(f)))(x)
    assert _count(plain, "sin") == 1
    assert _count(ckpt, "sin") == 2  # recomputed in the backward pass
    assert _count(plain, "cos") == _count(ckpt, "cos") == 1
    assert _count(ckpt, "mul") > _count(plain, "mul")
    close(fg.eval_jaxpr(ckpt, x)[0], 3.0 * np.cos(x))


def test_checkpoint_nested_and_forward_mode() -> None:
    f = lambda x: fnp.sin(fnp.cos(x))  # noqa: E731
    close(fg.grad(fg.grad(fg.checkpoint(f)))(1.0), fg.grad(fg.grad(f))(1.0))
    out, t = fg.jvp(fg.checkpoint(f), (1.0,), (2.0,))
    close(out, math.sin(math.cos(1.0)))
    close(t, -2.0 * math.cos(math.cos(1.0)) * math.sin(1.0))
    g = fg.checkpoint(lambda d: (d["a"] * d["b"], d["a"]))
    ga = fg.grad(lambda a: g({"a": a, "b": np.array(3.0)})[0])(2.0)
    close(ga, 3.0)


_CALL_PRIMS = {"custom_jvp_call", "custom_vjp_call", "checkpoint", "pjit", "xla_call",
               "jit", "call", "closed_call", "remat"}


def _eqn_names(cj):
    names = []
    for e in cj.eqns:
        names.append(e.primitive.name)
        for v in e.params.values():
            if isinstance(v, (fg.ClosedJaxpr, fg.Jaxpr)):
                names.append("<sub-jaxpr>")
    return names


@pytest.mark.parametrize("f", [
    lambda x: fnp.sum(fnp.tanh(x @ x.T) * x[:, :1]),
    lambda x: fnp.max(fnp.cumsum(x, axis=1) ** 2) + fnp.mean(x[1:, ::2]),
    lambda x: fnp.logsumexp(fnp.concatenate([x, -x], axis=0)),
])
def test_make_jaxpr_of_grad_is_one_flat_jaxpr(f) -> None:
    x = np.arange(6.0).reshape(2, 3) / 7.0
    cj = fg.make_jaxpr(fg.grad(f))(x)
    names = _eqn_names(cj)
    assert not set(names) & (_CALL_PRIMS | {"<sub-jaxpr>"}), names
    assert cj.out_avals == [fg.ir.ShapedArray((2, 3), np.float64)]
    close(fg.eval_jaxpr(cj, x)[0], fg.grad(f)(x))


# ------------------------------------------------------------------ derivative bugs


@pytest.mark.parametrize("fn", [fnp.maximum, fnp.minimum])
def test_grad_of_maximum_with_scalar(fn) -> None:
    x = np.array([-1.0, 0.5, 2.0])
    want = (x > 0).astype(float) if fn is fnp.maximum else (x < 0).astype(float)
    close(fg.grad(lambda x: fnp.sum(fn(x, 0.0)))(x), want)


def test_jvp_of_maximum_rank0_differentiated() -> None:
    x = np.array([-1.0, 0.5, 2.0])
    _, t = fg.jvp(lambda c: fnp.maximum(c, x), (np.array(1.0),), (np.array(1.0),))
    close(t, [1.0, 1.0, 0.0])


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_derivative_of_float_power(mode) -> None:
    x = np.array([0.5, 1.0, 2.0])
    if mode == "grad":
        got = fg.grad(lambda x: fnp.sum(x ** 2.5))(x)
    else:
        got = fg.jvp(lambda x: x ** 2.5, (x,), (np.ones(3),))[1]
    close(got, 2.5 * x ** 1.5)


def test_maximum_of_equal_shapes_and_where_relu_work() -> None:
    x = np.array([-1.0, 0.5, 2.0])
    close(fg.grad(lambda x: fnp.sum(fnp.maximum(x, np.zeros(3))))(x), [0.0, 1.0, 1.0])
    close(fg.grad(lambda x: fnp.sum(fnp.where(x > 0, x, 0.0)))(x), [0.0, 1.0, 1.0])
    close(fg.grad(lambda x: fnp.sum(fnp.power(2.0, x)))(x), np.log(2.0) * 2.0 ** x)
    close(fg.grad(lambda x: fnp.sum(x ** 3))(x), 3 * x ** 2)


# ------------------------------------------------------------------ check_grads


CHECKED = {
    "sin*x": (lambda x: fnp.sin(x) * x, (np.array([0.3, 1.2]),)),
    "matmul": (lambda a, b: fnp.tanh(a @ b), (np.array([[0.1, 0.2], [0.3, -0.4]]),
                                              np.array([[1.0], [-0.5]]))),
    "pytree": (lambda d: {"y": d["a"] * fnp.exp(d["b"])},
               ({"a": np.array([1.0, 2.0]), "b": np.array(0.3)},)),
    "reduce": (lambda x: fnp.logsumexp(x, axis=0), (np.array([[0.1, 0.5], [2.0, -1.0]]),)),
    "custom_jvp": (lambda x: log1pexp(x) * 2.0, (np.array([-1.0, 0.5, 3.0]),)),
    "index": (lambda x: x[np.array([0, 2, 2])] * x[1], (np.array([0.5, -1.0, 2.0]),)),
}


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_check_grads_passes_on_correct_functions(name) -> None:
    f, args = CHECKED[name]
    check_grads(f, args, order=2)


def test_check_grads_rev_only_for_custom_vjp() -> None:
    @fg.custom_vjp
    def f(x):
        return fnp.sin(x)

    f.defvjp(lambda x: (f(x), fnp.cos(x)), lambda c, g: (g * c,))
    check_grads(f, (np.array([0.2, 0.9]),), order=1, modes=("rev",))


@HYP
@given(vec3)
def test_check_grads_on_drawn_inputs(x) -> None:
    check_grads(lambda x: fnp.sin(x) * fnp.cos(x[::-1]) + x ** 3, (x,), order=2)


@fg.custom_jvp
def _wrong_sin(x):
    return fnp.sin(x)


_wrong_sin.defjvp(lambda p, t: (_wrong_sin(p[0]), 2.0 * t[0]))  # should be cos(x) * t


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev")])
def test_check_grads_fails_on_a_wrong_custom_rule(modes) -> None:
    with pytest.raises(AssertionError, match="differs"):
        check_grads(_wrong_sin, (np.array([0.3, 1.0]),), order=1, modes=modes)


def test_check_grads_fails_on_wrong_second_order_only() -> None:
    # first derivative right, second derivative wrong: the rule's tangent is computed
    # with stop_gradient, so its own derivative is missing.
    @fg.custom_jvp
    def f(x):
        return fnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), fg.lax.stop_gradient(fnp.cos(p[0])) * t[0]))
    x = (np.array([0.3, 1.0]),)
    check_grads(f, x, order=1)
    with pytest.raises(AssertionError):
        check_grads(f, x, order=2)


def test_check_grads_rejects_unknown_modes() -> None:
    with pytest.raises(ValueError, match="modes"):
        check_grads(fnp.sin, (np.array([0.3]),), modes=("sideways",))


def test_dtypes_of_gradients_follow_inputs() -> None:
    x32 = np.array([0.5, 1.0], np.float32)
    assert fg.grad(lambda x: fnp.sum(fnp.sin(x)))(x32).dtype == np.float32
    assert fg.jacrev(fnp.sin)(x32).dtype == np.float32
    assert fg.jacfwd(fnp.sin)(x32).dtype == np.float32
    g = tree_map(lambda a: a.dtype, fg.grad(lambda d: d["a"] * d["b"])(
        {"a": np.float32(1.0), "b": np.array(2.0)}))
    assert g == {"a": np.float32, "b": np.float64}


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_custom_rules_keep_the_weak_type_of_python_numbers(kind: str) -> None:
    """``f(2.0)`` computes in a weak float32, as JAX: a bfloat16 operand later decides."""
    if kind == "jvp":
        f = fg.custom_jvp(lambda x: x * 2)
        f.defjvps(lambda t, ans, x: t * 2)
    else:
        f = fg.custom_vjp(lambda x: x * 2)
        f.defvjp(lambda x: (x * 2, None), lambda r, ct: (ct * 2,))
    bf16 = fnp.ones(2, fnp.bfloat16)
    assert (f(2.0) * bf16).dtype == fnp.bfloat16
    assert (fg.grad(f)(2.0) * bf16).dtype == fnp.bfloat16
    if kind == "jvp":
        assert (fg.jacfwd(f)(2.0) * bf16).dtype == fnp.bfloat16
        assert (fg.jvp(f, (2.0,), (1.0,))[0] * bf16).dtype == fnp.bfloat16
