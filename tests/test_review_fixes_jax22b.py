"""JAX-face fixes compared with JAX 0.10.2 (a broad probe sweep of user-style programs):
scalar boolean indices (``x[True]`` is a new axis of length 1, ``x[False]`` of length 0,
read and written), float and string indices refused by ``.at[...]`` updates as by
``x[...]``, ``jnp.select`` taking non-boolean conditions as their truth, ``astype`` of
complex values (nonzero to bool; JAX's DeprecationWarning to a real type), and the shape
checks of ``jax.random`` samplers (``bernoulli``/``categorical``/``randint``/
``truncated_normal`` check ``shape`` against their parameters; shapes that do not
broadcast raise ``lax.broadcast_shapes``'s text), and ``choice``'s text."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from jax_oracle import side_by_side

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    """The result's text and the warnings' types and texts, or the error's built-in types
    and message."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            warnings.simplefilter("always", np.exceptions.ComplexWarning)
            out = call()
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        # (funcgrad's texts may end with the user's line, "(at file:line (function))")
        return ("raised", isinstance(e, ValueError), isinstance(e, TypeError),
                re.sub(r" \(at [^ ]+:\d+ \([^)]*\)\)", "", str(e)))
    kinds = [(w.category.__name__, str(w.message)) for w in caught
             if issubclass(w.category, (DeprecationWarning, np.exceptions.ComplexWarning))]
    return ("ok", repr(out), kinds)


def _match(ours: Any, theirs: Any) -> None:
    """Equal outcomes; an error of ours is of each built-in type JAX's is (funcgrad's
    ShapeError is both a ValueError and a TypeError)."""
    if theirs[0] == "raised" and ours[0] == "raised":
        assert (ours[1] or not theirs[1]) and (ours[2] or not theirs[2])
        assert ours[3] == theirs[3]
    else:
        assert ours == theirs


def _same(make: Callable[[Any, Any], Callable[[], Any]], x64: bool = False) -> None:
    _match(*side_by_side(make, _outcome, x64))


def _x(n: Any) -> Any:
    return n.arange(6.0).reshape(2, 3)


def _k(j: Any) -> Any:
    return j.random.PRNGKey(0)


CASES: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    # 1. Scalar boolean indices.
    "get_true": lambda j, n: lambda: _x(n)[True],
    "get_false": lambda j, n: lambda: _x(n)[False],
    "get_int_true": lambda j, n: lambda: _x(n)[0, True],
    "get_ellipsis_true": lambda j, n: lambda: _x(n)[..., True],
    "get_array_true": lambda j, n: lambda: _x(n)[n.array(True)],
    "get_true_array": lambda j, n: lambda: _x(n)[True, n.array([0, 1])],
    "get_slice_true_int": lambda j, n: lambda: _x(n)[:, True, 1],
    "get_false_int": lambda j, n: lambda: _x(n)[False, 1],
    "get_true_jit": lambda j, n: lambda: j.jit(lambda v: v[True])(_x(n)),
    "set_true": lambda j, n: lambda: _x(n).at[True].set(-1.0),
    "set_false": lambda j, n: lambda: _x(n).at[False].set(-1.0),
    "add_int_true": lambda j, n: lambda: _x(n).at[1, True].add(n.ones((1, 3))),
    "set_traced_int_true": lambda j, n: lambda: j.jit(lambda v, i: v.at[i, True].set(5.0))(
        _x(n), 1),
    "get_traced_int_true": lambda j, n: lambda: j.jit(lambda v, i: v[i, True])(_x(n), 1),
    "grad_true": lambda j, n: lambda: j.grad(lambda v: (v[True] ** 2).sum())(_x(n)),
    "get_fill_true": lambda j, n: lambda: _x(n).at[True].get(mode="fill"),
    # 2. Float and string indices in .at[].
    "at_set_float": lambda j, n: lambda: _x(n).at[1.0].set(0.0),
    "at_get_float": lambda j, n: lambda: _x(n).at[1.0].get(),
    "at_add_float_array": lambda j, n: lambda: _x(n).at[np.array([1.0])].add(0.0),
    "at_set_float_second": lambda j, n: lambda: _x(n).at[0, 1.5].set(0.0),
    "at_set_string": lambda j, n: lambda: _x(n).at["a"].set(0.0),
    "at_set_float_jit": lambda j, n: lambda: j.jit(lambda v: v.at[1.0].set(0.0))(_x(n)),
    "at_get_fill_float": lambda j, n: lambda: _x(n).at[1.0].get(mode="fill"),
    # 3. select's conditions.
    "select_int_cond": lambda j, n: lambda: n.select([n.array([1, 0])], [n.array([1, 2])]),
    "select_float_cond": lambda j, n: lambda: n.select([n.array([1.0, n.nan, 0.0])],
                                                       [n.array([1, 2, 3])], 7.0),
    "select_mixed_conds": lambda j, n: lambda: n.select(
        [n.array([0, 2]), n.array([True, True])], [n.array([1, 2]), n.array([3, 4])]),
    # 4. astype of complex values.
    "astype_complex_bool": lambda j, n: lambda: n.array([1j, 0, 2]).astype(bool),
    "astype_complex_bool_fn": lambda j, n: lambda: n.astype(n.array([1j, 0]), n.bool_),
    "astype_complex_bool_jit": lambda j, n: lambda: j.jit(lambda v: v.astype(bool))(
        n.array([1j, 0, 2])),
    "astype_complex_float": lambda j, n: lambda: n.array([1 + 2j, -3j]).astype(n.float32),
    "astype_complex_int": lambda j, n: lambda: n.astype(n.array([1 + 2j, 2.5j]), n.int32),
    "convert_complex_float": lambda j, n: lambda: j.lax.convert_element_type(
        n.array([1 + 2j]), n.float32),
    "astype_complex_grad": lambda j, n: lambda: j.grad(
        lambda v: v.astype(n.float32).sum())(n.array([1 + 1j, 2j])),
    # 5. jax.random's shape checks.
    "bernoulli_shape_mismatch": lambda j, n: lambda: j.random.bernoulli(
        _k(j), n.full((3, 2), 0.5), (2,)),
    "bernoulli_no_broadcast": lambda j, n: lambda: j.random.bernoulli(
        _k(j), n.array([0.1, 0.9]), (3,)),
    "bernoulli_broadcast_ok": lambda j, n: lambda: j.random.bernoulli(
        _k(j), n.array([0.1, 0.9]), (3, 2)).shape,
    "gamma_no_broadcast": lambda j, n: lambda: j.random.gamma(_k(j), n.ones(2), (3,)),
    "gamma_no_broadcast_2d": lambda j, n: lambda: j.random.gamma(_k(j), n.ones(2), (2, 3)),
    "truncated_normal_no_broadcast": lambda j, n: lambda: j.random.truncated_normal(
        _k(j), n.zeros(2), 1.0, (3,)),
    "truncated_normal_mismatch": lambda j, n: lambda: j.random.truncated_normal(
        _k(j), n.zeros((3, 2)), 1.0, (2,)),
    "truncated_normal_no_shape": lambda j, n: lambda: j.random.truncated_normal(
        _k(j), n.zeros(2), n.ones(3)),
    "categorical_no_broadcast": lambda j, n: lambda: j.random.categorical(
        _k(j), n.zeros((2, 3)), shape=(3,)),
    "binomial_no_broadcast": lambda j, n: lambda: j.random.binomial(
        _k(j), n.ones(2) * 3, 0.5, (3,)),
    "randint_no_broadcast": lambda j, n: lambda: j.random.randint(
        _k(j), (3,), n.zeros(2, int), 5),
    "randint_mismatch": lambda j, n: lambda: j.random.randint(
        _k(j), (2,), n.zeros((3, 2), int), 5),
    "t_no_broadcast": lambda j, n: lambda: j.random.t(_k(j), n.ones(2) * 3, (3,)),
    "choice_shape_int": lambda j, n: lambda: j.random.choice(_k(j), 3, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str) -> None:
    _same(CASES[name])


X64 = ["get_true", "set_traced_int_true", "at_set_float", "select_float_cond",
       "astype_complex_bool", "astype_complex_int", "randint_no_broadcast",
       "bernoulli_shape_mismatch"]


@pytest.mark.parametrize("name", X64)
def test_matches_jax_x64(name: str) -> None:
    _same(CASES[name], x64=True)


def test_categorical_shape_mismatch_raises() -> None:
    """JAX's check (its text prints the broadcast of NumPy integers, ours of ints)."""
    with pytest.raises(ValueError, match="categorical parameter shapes must be broadcast"):
        fg.random.categorical(fg.random.PRNGKey(0), fnp.zeros((4, 2, 3)), shape=(2,))
    with pytest.raises(ValueError, match="categorical parameter shapes must be broadcast"):
        jax.random.categorical(jax.random.PRNGKey(0), jnp.zeros((4, 2, 3)), shape=(2,))


def test_scalar_bool_index_matches_numpy() -> None:
    """Without JAX's help: NumPy's own answers for scalar boolean indices."""
    x = np.arange(6.0).reshape(2, 3)
    for idx in [True, False, (0, True), (Ellipsis, True), (True, np.array([0, 1])),
                (slice(None), True, 1), (True, True), (np.array([1, 0]), True)]:
        np.testing.assert_array_equal(np.asarray(fnp.asarray(x)[idx]), x[idx])
        y = x.copy()
        y[idx] = -1.0
        np.testing.assert_array_equal(np.asarray(fnp.asarray(x).at[idx].set(-1.0)), y)
