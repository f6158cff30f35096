"""JAX-face fixes compared with JAX 0.10.2 (control flow and custom derivatives): scan
bodies whose output is any two-child node (a list, a dict, a namedtuple), scan's
``unroll`` and callable checks, fori_loop's weakly typed index with static bounds,
while_loop's forwarded carries (moved to body constants, so reverse mode passes them by),
fori_loop's ``unroll`` with traced bounds and its bounds' types, cond's numeric
predicates (``pred != 0``) and old five-argument form, switch with one branch and
``operand=``, lax.map's ``batch_size`` (JAX's batches and remainder), linearize's
``has_aux``,
associative_scan's and select_n's errors, custom_jvp/custom_vjp rule errors, traced
non-differentiable arguments (passed on by custom_jvp, refused by custom_vjp), keyword
arguments and defaults, and jvp's dtype-mismatch text."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.config import enable_x64

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

pytestmark = pytest.mark.x32

P = namedtuple("P", "a b")


def _libs() -> list[tuple[Any, Any]]:
    return [(jax, jnp), (fg, fnp)]


def _leaf(x: Any) -> tuple[Any, ...]:
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        weak = getattr(getattr(x, "aval", None), "weak_type", None)
        return ("array", np.asarray(x).tolist(), str(x.dtype), weak)
    return ("py", type(x).__name__, x)


def _summary(lib: Any, out: Any) -> tuple[Any, ...]:
    leaves, tree = lib.tree_util.tree_flatten(out)
    # The structure as JAX prints it (node types and arity), funcgrad's PyTreeDef likewise.
    return str(tree).replace("PyTreeDef", ""), [_leaf(v) for v in leaves]


def _compare(prog: Callable[[Any, Any], Any]) -> None:
    results = []
    for lib, np_ in _libs():
        try:
            results.append(("ok", _summary(lib, prog(lib, np_))))
        except Exception as e:  # noqa: BLE001 - compared below
            results.append(("err", e))
    (kind_j, want), (kind_f, got) = results
    assert kind_f == kind_j, (got, want)
    if kind_j == "err":
        # funcgrad's named errors derive from the builtin class under JAX's error
        builtin = next(c for c in type(want).__mro__ if c.__module__ == "builtins")
        assert isinstance(got, builtin), (got, want)
        assert str(got) == str(want)
    else:
        assert got == want


def _rule_jvp(lib: Any, tangent: Callable[[Any], Any]) -> Any:
    @lib.custom_jvp
    def f(x: Any) -> Any:
        return x * 2

    @f.defjvp
    def f_jvp(p: Any, t: Any) -> Any:
        return tangent(f(p[0])), t[0]

    return lib.jvp(f, (1.0,), (1.0,))


def _vjp_fwd(lib: Any, fwd: Callable[..., Any]) -> Any:
    @lib.custom_vjp
    def g(x: Any) -> Any:
        return x * 2

    g.defvjp(lambda x: fwd(g(x)), lambda r, ct: (ct,))
    return lib.grad(g)(1.0)


def _nondiff_vjp(lib: Any) -> Any:
    @partial(lib.custom_vjp, nondiff_argnums=(1,))
    def g(x: Any, n: int) -> Any:
        return x ** n

    g.defvjp(lambda x, n: (g(x, n), x), lambda n, x, ct: (ct * n * x ** (n - 1),))
    return (lib.vmap(lib.grad(g), in_axes=(0, None))(lib.numpy.arange(3.0), 2),
            lib.jit(lib.grad(g), static_argnums=1)(2.0, 3))


def _nondiff_jvp(lib: Any) -> Any:
    @partial(lib.custom_jvp, nondiff_argnums=(1,))
    def f(x: Any, n: Any) -> Any:
        return x * n

    @f.defjvp
    def f_jvp(n: Any, p: Any, t: Any) -> Any:
        return f(p[0], n), t[0] * n

    return f


def _nondiff_vjp_fn(lib: Any) -> Any:
    @partial(lib.custom_vjp, nondiff_argnums=(1,))
    def g(x: Any, n: Any) -> Any:
        return x * n

    g.defvjp(lambda x, n: (g(x, n), x), lambda n, x, ct: (ct * n,))
    return g


def _defaults(lib: Any, kind: str) -> Any:
    if kind == "jvp":
        f = lib.custom_jvp(lambda x, y=2.0: x * y)
        f.defjvp(lambda p, t: (f(*p), t[0] * p[1] + t[1] * p[0]))
        return f
    g = lib.custom_vjp(lambda x, y=2.0: x * y)
    g.defvjp(lambda x, y: (g(x, y), (x, y)), lambda r, ct: (ct * r[1], ct * r[0]))
    return g


def _tangent(lib: Any, tangent: Callable[[Any], Any]) -> Any:
    f = lib.custom_jvp(lambda x: x * 2)
    f.defjvp(lambda p, t: (f(p[0]), tangent(p)))
    return lib.jvp(f, (lib.numpy.ones(2),), (lib.numpy.ones(2),))


def _linearized(lib: Any, f: Callable[..., Any], *primals: Any) -> Any:
    y, f_jvp, aux = lib.linearize(f, *primals, has_aux=True)
    return y, f_jvp(*[1.0] * len(primals)), aux


CASES: dict[str, Callable[[Any, Any], Any]] = {
    # scan: any node of two children is the (carry, y) pair, and the result is that node
    "scan_list_pair": lambda L, np_: L.lax.scan(lambda c, x: [c + x, x], 0.0, np_.arange(4.0)),
    "scan_dict_pair": lambda L, np_: L.lax.scan(lambda c, x: {"a": c + x, "b": x * c}, 0.0,
                                                np_.arange(4.0)),
    "scan_namedtuple_pair": lambda L, np_: L.lax.scan(lambda c, x: P(c * 2, x), 1.0,
                                                      np_.arange(3.0)),
    "scan_not_pair_leaf": lambda L, np_: L.lax.scan(lambda c, x: c, 0.0, np_.arange(3.0)),
    "scan_not_pair_triple": lambda L, np_: L.lax.scan(lambda c, x: (c, x, x), 0.0,
                                                      np_.arange(3.0)),
    "scan_not_pair_nested": lambda L, np_: L.lax.scan(lambda c, x: ((c, x),), 0.0,
                                                      np_.arange(3.0)),
    "scan_not_pair_none": lambda L, np_: L.lax.scan(lambda c, x: None, 0.0, np_.arange(3.0)),
    "scan_not_callable": lambda L, np_: L.lax.scan(3, 0, None, length=4),
    "scan_unroll_negative": lambda L, np_: L.lax.scan(lambda c, x: (c + x, c), 0.0,
                                                      np_.arange(4.0), unroll=-1),
    "scan_unroll_float": lambda L, np_: L.lax.scan(lambda c, x: (c + x, c), 0.0,
                                                   np_.arange(4.0), unroll=1.5),
    "scan_unroll_str": lambda L, np_: L.lax.scan(lambda c, x: (c + x, c), 0.0,
                                                 np_.arange(4.0), unroll="a"),
    "scan_unroll_true": lambda L, np_: L.lax.scan(lambda c, x: (c + x, c), 0.0,
                                                  np_.arange(4.0), unroll=True),
    "fori_unroll_negative": lambda L, np_: L.lax.fori_loop(0, 3, lambda i, c: c + i, 0.0,
                                                           unroll=-1),
    # fori_loop with static bounds: the index is a weakly typed default int
    "fori_array_bounds_weak": lambda L, np_: L.lax.fori_loop(
        np_.int32(0), np_.int32(3), lambda i, c: c + i, 0),
    "fori_int8_bound_index": lambda L, np_: L.lax.fori_loop(
        np_.int8(0), 3, lambda i, c: c + i, 0),
    "fori_int8_carry_mismatch": lambda L, np_: L.lax.fori_loop(
        np_.int8(0), 3, lambda i, c: i, np_.int8(0)),
    "fori_numpy_bounds": lambda L, np_: L.lax.fori_loop(np.int64(0), np.int64(3),
                                                        lambda i, c: c + i, 0),
    "fori_traced_unroll": lambda L, np_: L.jit(lambda n: L.lax.fori_loop(
        0, n, lambda i, c: c + i, 0, unroll=2))(3),
    # traced bounds of one dtype are kept (a Python int lower bound stays weak)
    "fori_traced_weak_lower": lambda L, np_: L.vmap(lambda n: L.lax.fori_loop(
        0, n, lambda i, c: c + i, 0))(np_.arange(4)),
    "fori_traced_int8_upper": lambda L, np_: L.jit(lambda n: L.lax.fori_loop(
        0, n.astype(np_.int8), lambda i, c: (c[0] + i, i), (0, np_.int8(0))))(3),
    # linearize(has_aux=)
    "linearize_has_aux": lambda L, np_: _linearized(L, lambda x: (
        L.lax.cond(x > 0, lambda v: v * 3.0, lambda v: -v, x), {"a": x * 2, "n": 3}), 1.0),
    "linearize_has_aux_two_args": lambda L, np_: _linearized(L, lambda x, z: (x * z, x),
                                                             1.0, 2.0),
    # while_loop
    "while_not_callable": lambda L, np_: L.lax.while_loop(3, lambda c: c, 0),
    "while_cond_pytree": lambda L, np_: L.lax.while_loop(lambda c: (c < 3,), lambda c: c + 1, 0),
    "while_forwarded_python_value": lambda L, np_: L.lax.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1]), (0, 2.0)),
    "while_forwarded_grad": lambda L, np_: L.grad(lambda x: L.lax.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * c[2], c[2]), (0, 1.0, x))[2])(2.0),
    "while_forwarded_vmap": lambda L, np_: L.vmap(lambda n, x: L.lax.while_loop(
        lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * c[2], c[2]), (0, 1.0, x)))(
        np_.arange(3), np_.array([1.0, 2.0, 3.0])),
    "while_grad_error": lambda L, np_: L.grad(lambda x: L.lax.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * c[2], c[2]), (0, 1.0, x))[1])(2.0),
    "fori_traced_grad_error": lambda L, np_: L.jit(L.grad(
        lambda x, n: L.lax.fori_loop(0, n, lambda i, c: c * x, 1.0)))(2.0, 3),
    # cond / switch
    "cond_float_pred": lambda L, np_: [L.lax.cond(p, lambda: 1, lambda: 2)
                                       for p in (0.5, -1, 3, 0, -0.0, np_.int8(-2))],
    "cond_float_pred_jit": lambda L, np_: [L.jit(lambda p: L.lax.cond(p, lambda: 1, lambda: 2))(p)
                                           for p in (0.5, -1, 0.0)],
    "cond_none_pred": lambda L, np_: L.lax.cond(None, lambda: 1.0, lambda: 2.0),
    "cond_list_pred": lambda L, np_: L.lax.cond([True], lambda: 1.0, lambda: 2.0),
    "cond_complex_pred": lambda L, np_: L.lax.cond(np_.array(1 + 1j), lambda: 1.0, lambda: 2.0),
    "cond_not_callable": lambda L, np_: L.lax.cond(True, 1, lambda: 2.0),
    "cond_old_signature": lambda L, np_: L.lax.cond(True, 1.0, lambda x: x + 1, 2.0, lambda x: x),
    "switch_one_branch": lambda L, np_: L.lax.switch(3, [lambda x: x + 1], 1.0),
    "switch_operand_kw": lambda L, np_: L.lax.switch(1, [lambda x: x, lambda x: x + 1],
                                                     operand=2.0),
    "switch_operand_kw_and_positional": lambda L, np_: L.lax.switch(
        1, [lambda x: x, lambda x: x + 1], 1.0, operand=2.0),
    # lax.map(batch_size=)
    "map_batch_remainder": lambda L, np_: L.lax.map(lambda x: x.sum(),
                                                    np_.arange(10.0).reshape(5, 2), batch_size=2),
    "map_batch_all": lambda L, np_: L.lax.map(lambda x: 1.0, np_.arange(3.0), batch_size=0),
    "map_batch_larger": lambda L, np_: L.lax.map(lambda x: x * 2, np_.arange(5.0),
                                                 batch_size=10),
    "map_batch_grad": lambda L, np_: L.grad(lambda x: L.lax.map(
        lambda v: v * v * 3.0, x, batch_size=2).sum())(np_.arange(3.0)),
    # associative_scan
    "assoc_not_callable": lambda L, np_: L.lax.associative_scan(3, np_.arange(3.0)),
    "assoc_axis_out_of_bounds": lambda L, np_: L.lax.associative_scan(
        L.lax.add, np_.arange(6.0).reshape(2, 3), axis=2),
    "assoc_negative_axis_reverse": lambda L, np_: L.lax.associative_scan(
        L.lax.add, np_.arange(6.0).reshape(2, 3), axis=-1, reverse=True),
    "assoc_negative_axis": lambda L, np_: L.lax.associative_scan(
        L.lax.add, np_.arange(6.0).reshape(2, 3), axis=-1),
    "assoc_too_few_leaves": lambda L, np_: L.lax.associative_scan(
        lambda a, b: a[0] + b[0], (np_.arange(4.0), np_.arange(1.0, 5.0))),
    "assoc_too_many_leaves": lambda L, np_: L.lax.associative_scan(
        lambda a, b: (a[0] + b[0], a[1] * b[1], a[0]), (np_.arange(4.0), np_.arange(1.0, 5.0))),
    "assoc_list_for_tuple": lambda L, np_: L.lax.associative_scan(
        lambda a, b: [a[0] + b[0], a[1] * b[1]], (np_.arange(4.0), np_.arange(1.0, 5.0))),
    # select_n
    "select_n_float_which": lambda L, np_: L.lax.select_n(np_.array([1.0, 0.0]), np_.ones(2),
                                                          np_.zeros(2)),
    "select_n_which_shape": lambda L, np_: L.lax.select_n(np_.array([True]), np_.ones(2),
                                                          np_.zeros(2)),
    "select_n_bool_three": lambda L, np_: L.lax.select_n(np_.array([True, False]), np_.ones(2),
                                                         np_.zeros(2), np_.ones(2)),
    "select_n_shape_before_dtype": lambda L, np_: L.lax.select_n(
        np_.array([True]), np_.ones(2), np_.zeros(2, np_.int32)),
    # custom derivatives
    "custom_jvp_no_rule": lambda L, np_: L.jvp(L.custom_jvp(lambda x: x), (1.0,), (1.0,)),
    "custom_vjp_no_rule": lambda L, np_: L.grad(L.custom_vjp(lambda x: x))(1.0),
    "custom_jvp_tree_mismatch": lambda L, np_: _rule_jvp(L, lambda y: (y, 1.0)),
    "custom_vjp_fwd_not_pair": lambda L, np_: _vjp_fwd(L, lambda y: y),
    "custom_vjp_nondiff_vmap_jit": lambda L, np_: _nondiff_vjp(L),
    "custom_jvp_traced_nondiff_grad": lambda L, np_: L.grad(lambda x: _nondiff_jvp(L)(x, x))(2.0),
    "custom_jvp_traced_nondiff_vmap": lambda L, np_: L.vmap(L.grad(_nondiff_jvp(L)))(
        np_.arange(2.0), np_.arange(2.0)),
    "custom_jvp_traced_nondiff_jit": lambda L, np_: L.jit(L.grad(_nondiff_jvp(L)))(2.0, 3.0),
    "custom_vjp_traced_nondiff": lambda L, np_: L.grad(lambda x: _nondiff_vjp_fn(L)(x, x))(2.0),
    "custom_vjp_traced_nondiff_vmap": lambda L, np_: L.vmap(_nondiff_vjp_fn(L))(
        np_.arange(2.0), np_.arange(2.0)),
    "custom_jvp_defaults": lambda L, np_: L.grad(_defaults(L, "jvp"))(1.5),
    "custom_jvp_kwarg": lambda L, np_: L.grad(lambda x: _defaults(L, "jvp")(x, y=3.0))(1.5),
    "custom_vjp_kwarg_only": lambda L, np_: L.grad(lambda x: _defaults(L, "vjp")(x=x))(1.5),
    "custom_vjp_unknown_kwarg": lambda L, np_: _defaults(L, "vjp")(1.0, z=1.0),
    "custom_jvp_too_many_args": lambda L, np_: _defaults(L, "jvp")(1.0, 2.0, 3.0),
    "custom_jvp_tangent_dtype": lambda L, np_: _tangent(L, lambda p: np_.ones(2, np_.float16)),
    "custom_jvp_tangent_shape": lambda L, np_: _tangent(L, lambda p: np_.ones(3)),
    "custom_vjp_forward_mode": lambda L, np_: L.jvp(_defaults(L, "vjp"), (1.0,), (1.0,)),
    "jvp_int_tangent": lambda L, np_: L.jvp(lambda x, n: x * n, (2.0, 3), (1.0, 0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_jax(name: str) -> None:
    _compare(CASES[name])


def test_custom_jvp_rule_not_pair() -> None:
    def run(lib: Any) -> Any:
        @lib.custom_jvp
        def f(x: Any) -> Any:
            return x * 2

        @f.defjvp
        def f_jvp(p: Any, t: Any) -> Any:
            return t[0]

        return lib.jvp(f, (1.0,), (1.0,))

    with pytest.raises(TypeError) as theirs:
        run(jax)
    with pytest.raises(TypeError) as ours:
        run(fg)
    # (JAX shows the tracer it got; the text up to there is the same)
    head = "Custom JVP rule f_jvp for function f must produce a pair"
    assert str(theirs.value).startswith(head)
    assert str(ours.value).startswith(head)


def test_while_forwarded_carry_gradient_numerically() -> None:
    # The forwarded carry is read by the body: its gradient (of the other carry's result
    # in forward mode, and of its own value in reverse mode) against finite differences.
    def loop(x: Any) -> Any:
        return fg.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * fnp.sin(c[2]),
                                                                c[2]), (0, 1.0, x))

    with enable_x64(True):
        x = np.float64(0.7)
        eps = 1e-6
        fd = (loop(x + eps)[1] - loop(x - eps)[1]) / (2 * eps)
        tangent = fg.jvp(lambda v: loop(v)[1], (x,), (np.float64(1.0),))[1]
        np.testing.assert_allclose(np.asarray(tangent), 4 * np.sin(x) ** 3 * np.cos(x),
                                   rtol=1e-9)
        np.testing.assert_allclose(np.asarray(fd), 4 * np.sin(x) ** 3 * np.cos(x), rtol=1e-6)
        assert float(fg.grad(lambda v: loop(v)[2] * 3.0)(x)) == 3.0


@pytest.mark.parametrize("body", [
    lambda c, y: (c * y, c),  # the carry times an xs element: both depend on the input
    lambda c, y: (c + y * y, c),
])
def test_linear_transpose_refuses_a_nonlinear_scan(body: Callable[..., Any]) -> None:
    # JAX fails transposing it (an AssertionError); funcgrad refuses it as the loop-free
    # nonlinear functions, where it is staged.
    from funcgrad.errors import NonLinearError

    with pytest.raises(NonLinearError, match="'mul'"):
        fg.linear_transpose(lambda x: fg.lax.scan(body, 1.0, x)[0], fnp.ones(3))


def test_linear_transpose_of_a_linear_scan_and_cond() -> None:
    def f(lib: Any, x: Any) -> Any:
        ys = lib.lax.scan(lambda c, y: (c + 2.0 * y, c * 3.0), 0.0, x)
        return ys, lib.lax.cond(True, lambda v: 2.0 * v, lambda v: -v, x)

    x = np.ones(3, np.float32)
    ct = ((np.float32(1.0), np.array([1.0, 2.0, 3.0], np.float32)),
          np.array([1.0, -1.0, 2.0], np.float32))
    ours = fg.linear_transpose(lambda v: f(fg, v), x)(ct)
    theirs = jax.linear_transpose(lambda v: f(jax, v), x)(ct)
    np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(theirs[0]), rtol=1e-6)

