"""JAX-face fixes compared with JAX 0.10.2 (twenty-first side-by-side review): the gradient
of ``lax.reduce_precision`` (it recursed), ``lax.axis_index`` of several axis names,
``atleast_1d/2d/3d`` of several arrays, ``take_along_axis``'s default axis, ``pad`` with a
function as its mode, ``x.at[i].divide`` on integer arrays, ``split`` with a float count,
``vsplit`` of a vector, a random shape given as an array, and ``random.shuffle`` gone."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            out = ("ok", repr(call()))
        except Exception as e:  # noqa: BLE001 - compared between the two libraries
            out = ("raised", type(e).__name__, str(e).replace("funcgrad.", "jax."))
    return out, sorted(str(x.message) for x in w if x.category is FutureWarning)


def _same(make: Callable[[Any, Any], Callable[[], Any]]) -> None:
    assert _outcome(make(fg, fnp)) == _outcome(make(jax, jnp))


def _pad_with(v: Any, w: Any, iaxis: int, kw: dict[str, Any]) -> Any:
    fill = kw.get("padder", 10)
    return v.at[:w[0]].set(fill).at[v.shape[0] - w[1]:].set(fill)


CASES: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    "reduce_precision_grad": lambda j, n: lambda: j.grad(
        lambda x: j.lax.reduce_precision(x, 5, 10))(1.0),
    "reduce_precision_grad_rounds_cotangent": lambda j, n: lambda: j.grad(
        lambda x: (j.lax.reduce_precision(x, 5, 10) * n.array([1.0001, 3.14159])).sum())(
        n.array([1.0001, 3.14159])),
    "reduce_precision_grad_bf16": lambda j, n: lambda: j.grad(
        lambda x: (j.lax.reduce_precision(x, 8, 7) * n.array([1.0001, 3.14159])).sum())(
        n.array([1.0001, 3.14159])),
    "reduce_precision_jvp": lambda j, n: lambda: j.jvp(
        lambda x: j.lax.reduce_precision(x, 8, 7), (n.array([1.0001, 3.14159]),),
        (n.array([1.0001, 3.14159]),)),
    "reduce_precision_jit_grad": lambda j, n: lambda: j.jit(j.grad(
        lambda x: (j.lax.reduce_precision(x, 5, 10) ** 2).sum()))(n.array([1.0001, 3.14159])),
    "reduce_precision_vmap_grad": lambda j, n: lambda: j.vmap(j.grad(
        lambda x: j.lax.reduce_precision(x, 5, 10) * 3.3))(n.array([1.0001, 3.14159])),
    "axis_index_pair": lambda j, n: lambda: j.vmap(j.vmap(
        lambda x: j.lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")(n.ones((2, 3))),
    "axis_index_pair_reversed": lambda j, n: lambda: j.vmap(j.vmap(
        lambda x: j.lax.axis_index(("j", "i")), axis_name="j"), axis_name="i")(n.ones((2, 3))),
    "axis_index_one_in_tuple": lambda j, n: lambda: j.vmap(j.vmap(
        lambda x: j.lax.axis_index(("i",)), axis_name="j"), axis_name="i")(n.ones((2, 3))),
    "atleast_1d_many": lambda j, n: lambda: n.atleast_1d(1.0, n.ones(2)),
    "atleast_2d_many": lambda j, n: lambda: n.atleast_2d(1.0, n.ones(2), n.ones((1, 2, 3))),
    "atleast_3d_many": lambda j, n: lambda: n.atleast_3d(n.ones(2), 3),
    "atleast_1d_none": lambda j, n: lambda: n.atleast_1d(),
    "take_along_axis_default": lambda j, n: lambda: n.take_along_axis(
        n.array([[3.0, 1.0, 2.0]]), n.array([[1, 2, 0]])),
    "pad_function": lambda j, n: lambda: n.pad(n.arange(6).reshape(2, 3), 1, _pad_with,
                                                padder=100),
    "pad_function_uneven": lambda j, n: lambda: n.pad(n.arange(6.0).reshape(2, 3),
                                                       ((1, 0), (0, 2)), _pad_with),
    "pad_function_jit": lambda j, n: lambda: j.jit(lambda x: n.pad(x, 2, _pad_with))(
        n.arange(3.0)),
    "divide_int_by_number": lambda j, n: lambda: n.arange(3).at[1].divide(2),
    "divide_int8_by_float": lambda j, n: lambda: n.arange(3, dtype=n.int8).at[1].divide(
        n.array(2.5)),
    "divide_uint8_repeated": lambda j, n: lambda: n.arange(3, dtype=n.uint8).at[
        n.array([1, 1])].divide(n.array([2, 2])),
    "divide_int_jit": lambda j, n: lambda: j.jit(lambda x: x.at[1].divide(2))(n.arange(3)),
    "divide_float": lambda j, n: lambda: n.arange(3.0).at[1].divide(2),
    "split_float_count": lambda j, n: lambda: n.split(n.arange(4), 2.0),
    "array_split_float_count": lambda j, n: lambda: n.array_split(n.arange(5), 2.0),
    "vsplit_vector": lambda j, n: lambda: n.vsplit(n.arange(4), 2),
    "normal_array_shape": lambda j, n: lambda: j.random.normal(j.random.PRNGKey(7),
                                                               n.array([2])),
    "uniform_array_shape": lambda j, n: lambda: j.random.uniform(j.random.PRNGKey(7),
                                                                 np.array([2, 1])),
    "no_shuffle": lambda j, n: lambda: j.random.shuffle,
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(name):
    _same(CASES[name])


@settings(max_examples=15, deadline=None)
@given(values=st.lists(st.floats(-1e4, 1e4, width=32), min_size=1, max_size=5),
       fmt=st.sampled_from([(5, 10), (8, 7), (8, 23), (11, 52)]))
def test_reduce_precision_gradients_match_jax(values, fmt):
    x = np.asarray(values, np.float32)
    ct = np.linspace(0.3, 3.7, len(values)).astype(np.float32)

    def run(j, n):
        return np.asarray(j.grad(lambda v: (j.lax.reduce_precision(v, *fmt) * n.asarray(ct))
                                 .sum())(n.asarray(x)))

    np.testing.assert_array_equal(run(fg, fnp), run(jax, jnp))


def _key(j: Any) -> Any:
    return j.random.PRNGKey(0)


WIDE = {
    "normal": lambda j, n: lambda: j.random.normal(_key(j), (2,), dtype=n.float64),
    "uniform": lambda j, n: lambda: j.random.uniform(_key(j), (2,), dtype=n.float64),
    "randint": lambda j, n: lambda: j.random.randint(_key(j), (2,), 0, 3, dtype=n.int64),
    "bits": lambda j, n: lambda: j.random.bits(_key(j), (2,), dtype=n.uint64),
    "gamma": lambda j, n: lambda: j.random.gamma(_key(j), 2.0, (2,), dtype=n.float64),
    "scalar_type": lambda j, n: lambda: n.float64(1.0),
    "full": lambda j, n: lambda: n.full(2, 1.0, dtype="float64"),
    "cumsum": lambda j, n: lambda: n.cumsum(n.ones(2), dtype=n.float64),
    "zeros_numpy_dtype": lambda j, n: lambda: n.zeros(2, np.dtype("float64")),
    "python_float_type": lambda j, n: lambda: n.zeros(2, float),
}


@pytest.mark.parametrize("name", list(WIDE))
def test_64_bit_requests_warn_as_jax(name):
    def run(j, n):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = repr(WIDE[name](j, n)())
        return out, [str(x.message) for x in w if "Explicitly requested" in str(x.message)]

    assert run(fg, fnp) == run(jax, jnp)


ERRORS = {
    "max_where": lambda j, n: lambda: n.max(n.arange(4.0), where=n.arange(4.0) > 1),
    "unbound_psum": lambda j, n: lambda: j.vmap(lambda x: j.lax.psum(x, "k"),
                                                axis_name="i")(n.arange(4.0)),
    "while_cond_vector": lambda j, n: lambda: j.lax.while_loop(
        lambda c: c < 3, lambda c: c + 1, n.zeros(2)),
    "jvp_structure": lambda j, n: lambda: j.jvp(
        lambda d: d["a"], ({"a": 1.0, "b": 2.0},), ({"a": 1.0},)),
    "list_index_nested": lambda j, n: lambda: n.arange(4.0)[[[0, 1], [1, 2]]],
    "list_index_flat": lambda j, n: lambda: n.arange(4.0)[[0, 1]],
    "list_index_slice": lambda j, n: lambda: n.arange(4.0)[[slice(None)]],
    "searchsorted_side": lambda j, n: lambda: n.searchsorted(n.arange(4.0), 2, side="mid"),
    "take_raise": lambda j, n: lambda: n.take(n.arange(4.0), n.array([1]), mode="raise"),
    "put_inplace": lambda j, n: lambda: n.put(n.arange(4.0), n.array([1]), 2.0),
    "scan_not_pair": lambda j, n: lambda: j.lax.scan(lambda c, x: c + x, 0.0,
                                                    n.arange(4.0)),
    "scan_one_tuple": lambda j, n: lambda: j.lax.scan(lambda c, x: (c + x,), 0.0,
                                                     n.arange(4.0)),
    "uniform_bounds_shape": lambda j, n: lambda: j.random.uniform(
        _key(j), (3,), minval=n.zeros(2)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error_texts(name):
    def run(j, n):
        try:
            ERRORS[name](j, n)()
        except Exception as e:  # noqa: BLE001 - compared between the two libraries
            return isinstance(e, TypeError), isinstance(e, ValueError), \
                isinstance(e, NameError), isinstance(e, NotImplementedError), str(e)
        return None

    ours, theirs = run(fg, fnp), run(jax, jnp)
    assert ours is not None and ours[4] == theirs[4]
    # funcgrad's named errors derive from the exception JAX raises (and sometimes more)
    assert all(o or not t for o, t in zip(ours[:4], theirs[:4]))


def test_vjp_structure_error_names_the_function():
    def f(x):
        return (x, x)

    _, pullback = fg.vjp(f, fnp.ones(2))
    with pytest.raises(ValueError, match=r"(?s)unexpected tree structure.*must match the "
                       r"pytree\nstructure of the differentiated function f at .*:\d+"):
        pullback(fnp.ones(2))


def _two(x: Any, y: Any) -> Any:
    return x


NON_ARRAYS = {
    "in_dict": lambda j: j.jit(_two)(1.0, {"a": "abc"}),
    "keyword_list": lambda j: j.jit(_two)(1.0, y=["abc"]),
    "first": lambda j: j.jit(_two)("abc", 1.0),
    "object": lambda j: j.jit(_two)(object(), 1.0),
    "star_args": lambda j: j.jit(lambda *a: a[0])(1.0, "abc"),
}


@pytest.mark.parametrize("name", list(NON_ARRAYS))
def test_jit_of_a_non_array_argument_names_static_argnums(name):
    def run(j):
        try:
            NON_ARRAYS[name](j)
        except TypeError as e:
            return re.sub(r"<function (.*) at 0x[0-9a-f]+>", r"<function \1>", str(e))
        return None

    ours = run(fg)
    assert ours is not None and ours == run(jax)
