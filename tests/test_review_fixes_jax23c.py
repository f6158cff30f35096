"""JAX-face fixes found by running programs from the JAX documentation (the quickstart,
"the sharp bits", pytrees, pseudorandom numbers, automatic vectorization, advanced
autodiff, debugging) with ``import jax, jax.numpy as jnp`` and with funcgrad in their
place, compared with JAX 0.10.2: printed output, warnings, and the errors' types and
texts (shape, axis, reshape, concatenate and dot errors, indexers, non-numeric values,
data-dependent sizes, key-array operands, Python int overflow, jax_debug_nans' line)."""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import funcgrad
import funcgrad.lax
import funcgrad.numpy
import funcgrad.random

jax = pytest.importorskip("jax")

pytestmark = pytest.mark.x32

FG = SimpleNamespace(jax=funcgrad, jnp=funcgrad.numpy, random=funcgrad.random,
                     lax=funcgrad.lax)
JX = SimpleNamespace(jax=jax, jnp=jax.numpy, random=jax.random, lax=jax.lax)


def _builtin_base(e: BaseException) -> type:
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def _run(prog: Callable[[Any], Any], lib: Any) -> tuple[str, BaseException | None, list[str]]:
    out = io.StringIO()
    err = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            with contextlib.redirect_stdout(out):
                prog(lib)
        except Exception as e:  # noqa: BLE001 - compared below
            err = e
    return out.getvalue(), err, [str(w.message) for w in caught
                                 if issubclass(w.category, UserWarning)]


def same_as_jax(prog: Callable[[Any], Any], message: bool = True) -> None:
    """``prog`` prints the same, warns the same and raises the same with both libraries
    (funcgrad's error an instance of the builtin class under JAX's, with JAX's name when
    JAX's is a class of its own, and its text unless ``message`` is False)."""
    (o_f, e_f, w_f), (o_j, e_j, w_j) = _run(prog, FG), _run(prog, JX)
    assert o_f == o_j
    assert w_f == w_j
    assert (e_f is None) == (e_j is None), (e_f, e_j)
    if e_j is not None:
        assert e_f is not None
        assert isinstance(e_f, _builtin_base(e_j)), (type(e_f), type(e_j))
        if type(e_j).__module__ != "builtins":
            assert type(e_f).__name__ == type(e_j).__name__
        if message:
            assert str(e_f) == str(e_j)


# ------------------------------------------------------------------ the sharp bits


def _in_place(m: Any) -> None:
    x = m.jnp.zeros((3, 3), dtype=m.jnp.float32)
    print(x.at[1, :].set(1.0))
    print(m.jnp.ones((5, 6)).at[::2, 3:].add(7.0))
    x[1, :] = 1.0


def _out_of_bounds(m: Any) -> None:
    print(m.jnp.arange(10)[11])
    print(m.jnp.arange(10.0).at[11].get())
    print(repr(m.jnp.arange(10.0).at[11].get(mode="fill", fill_value=m.jnp.nan)))


def _branch(x: Any) -> Any:
    if x < 3:
        return 3.0 * x ** 2
    return -4 * x


def _loop(x: Any, n: Any) -> Any:
    i = 0
    while i < n:
        i += 1
    return x + i


def _nansum(m: Any) -> None:
    def nansum(x: Any) -> Any:
        return x[~m.jnp.isnan(x)].sum()

    x = m.jnp.array([1, 2, m.jnp.nan, 3, 4])
    print(nansum(x))
    print(m.jax.jit(lambda x: m.jnp.where(~m.jnp.isnan(x), x, 0).sum())(x))
    m.jax.jit(nansum)(x)


def _debug_nans(m: Any, jit: bool) -> None:
    m.jax.config.update("jax_debug_nans", True)
    try:
        if jit:
            m.jax.jit(lambda x: m.jnp.log(x) * 2)(-1.0)
        else:
            m.jnp.divide(0.0, 0.0)
    finally:
        m.jax.config.update("jax_debug_nans", False)


def _x64_requests(m: Any) -> None:
    print(m.random.uniform(m.random.key(0), (3,), dtype=m.jnp.float64).dtype)
    print(m.jnp.array([1.0], dtype=m.jnp.float64).dtype)
    print(m.jnp.zeros(3, dtype="float64").dtype, m.jnp.arange(3, dtype=m.jnp.int64).dtype)


def _casts_and_promotion(m: Any) -> None:
    jnp = m.jnp
    print(repr(jnp.arange(254.0, 258.0).astype("uint8")))
    print(repr(jnp.array([-1.5, 300.0, jnp.nan, jnp.inf]).astype("int8")))
    print(repr(jnp.array([1, 2], dtype="int8") + jnp.array([1], dtype="uint8")))
    print(repr(jnp.int8(1) + 1.0), repr(jnp.array(1, dtype=jnp.bfloat16) * 2.0))
    print(repr(jnp.array([3]) / 2), repr(jnp.array([3]) // 2))
    print(repr(jnp.array(255, dtype="uint8") + 1))


SHARP_BITS: dict[str, Callable[[Any], Any]] = {
    "in_place_update": _in_place,
    "out_of_bounds": _out_of_bounds,
    "non_array_input": lambda m: m.jnp.sum([1, 2, 3]),
    "grad_python_branch": lambda m: print(m.jax.grad(_branch)(2.0), m.jax.grad(_branch)(4.0)),
    "jit_python_branch": lambda m: m.jax.jit(_branch)(2.0),
    "jit_python_loop": lambda m: m.jax.jit(_loop)(10, 20),
    "static_argnames": lambda m: print(m.jax.jit(_loop, static_argnames=["n"])(10, n=20)),
    "static_argnums": lambda m: print(m.jax.jit(
        lambda n, v: m.jnp.ones((n,)) * v, static_argnums=(0,))(5, 4)),
    "traced_shape": lambda m: m.jax.jit(lambda n, v: m.jnp.ones((n,)) * v)(10, 4),
    "tracer_print": lambda m: m.jax.jit(lambda x: print(x) or print(x.reshape((2, 3))))(
        m.jnp.ones((6,))),
    "nansum": _nansum,
    "debug_nans_eager": partial(_debug_nans, jit=False),
    "debug_nans_jit": partial(_debug_nans, jit=True),
    "x64_requests": _x64_requests,
    "casts_and_promotion": _casts_and_promotion,
    "grad_of_int": lambda m: m.jax.grad(lambda x: x * 2)(3),
    "grad_nonscalar": lambda m: m.jax.grad(lambda x: x * 2)(m.jnp.ones(2)),
}


@pytest.mark.parametrize("name", sorted(SHARP_BITS))
def test_sharp_bits_programs(name: str) -> None:
    # jax_debug_nans: funcgrad's message also names the user's line (docs/sharp_bits.md)
    same_as_jax(SHARP_BITS[name], message="debug_nans" not in name)


def test_debug_nans_messages_start_as_jax() -> None:
    for jit in (False, True):
        e_f, e_j = _run(partial(_debug_nans, jit=jit), FG)[1], _run(
            partial(_debug_nans, jit=jit), JX)[1]
        assert str(e_f).startswith(str(e_j) + " (at ")


# ------------------------------------------------------------------ error texts

ERRORS: dict[str, Callable[[Any], Any]] = {
    "float_index": lambda m: m.jnp.arange(3)[1.0],
    "float_array_index": lambda m: m.jnp.arange(3)[m.jnp.array([1.0])],
    "traced_float_index": lambda m: m.jax.jit(lambda x, i: x[i])(m.jnp.arange(3), 1.0),
    "too_many_indices": lambda m: m.jnp.ones((2, 3))[0, 0, 1],
    "index_empty_axis": lambda m: m.jnp.ones((2, 0))[:, 1],
    "add_same_rank": lambda m: m.jnp.ones(3) + m.jnp.ones(4),
    "lax_names": lambda m: [print(_err(partial(getattr(m.jnp, n), m.jnp.ones(3), m.jnp.ones(4))))
                            for n in ("subtract", "multiply", "divide", "maximum", "power",
                                      "remainder", "arctan2", "equal", "less", "logaddexp")],
    "multiply_ranks": lambda m: m.jnp.multiply(m.jnp.ones((2, 3)), m.jnp.ones(4)),
    "broadcast_shapes": lambda m: m.jnp.broadcast_shapes((3,), (4,)),
    "broadcast_arrays": lambda m: m.jnp.broadcast_arrays(m.jnp.ones(3), m.jnp.ones(4)),
    "where_three": lambda m: m.jnp.where(m.jnp.ones(3) > 0, m.jnp.ones(4), 0.0),
    "broadcast_to": lambda m: m.jnp.broadcast_to(m.jnp.ones((2, 1, 3)), (2, 5, 4)),
    "broadcast_to_fewer": lambda m: m.jnp.broadcast_to(m.jnp.ones((2, 3)), (3,)),
    "axis_out_of_bounds": lambda m: [print(_err(f)) for f in (
        lambda: m.jnp.sum(m.jnp.ones(3), axis=2), lambda: m.jnp.sum(m.jnp.ones(3), axis=-2),
        lambda: m.jnp.cumsum(m.jnp.ones(3), axis=1), lambda: m.jnp.sort(m.jnp.ones(3), axis=2),
        lambda: m.jnp.moveaxis(m.jnp.ones((2, 3)), 0, 3),
        lambda: m.jnp.expand_dims(m.jnp.ones(3), 3))],
    "duplicate_axis": lambda m: m.jnp.max(m.jnp.ones((2, 3)), axis=(1, -1)),
    "expand_dims_repeated": lambda m: m.jnp.expand_dims(m.jnp.ones(3), (0, 0)),
    "reshape_size": lambda m: m.jnp.ones(6).reshape(4, 2),
    "reshape_minus_one": lambda m: m.jnp.ones(6).reshape(-1, 4),
    "reshape_two_unknown": lambda m: m.jnp.ones(6).reshape(-1, -1),
    "concatenate_ranks": lambda m: m.jnp.concatenate([m.jnp.ones(3), m.jnp.ones((2, 3))]),
    "concatenate_shapes": lambda m: m.jnp.concatenate([m.jnp.ones((2, 2)), m.jnp.ones((2, 3))]),
    "matmul": lambda m: m.jnp.ones((2, 3)) @ m.jnp.ones((2, 3)),
    "matmul_vector": lambda m: m.jnp.ones(3) @ m.jnp.ones((2, 3)),
    "dot": lambda m: m.jnp.dot(m.jnp.ones(3), m.jnp.ones(4)),
    "transpose": lambda m: m.jnp.transpose(m.jnp.ones((2, 3)), (0, 0)),
    "string_value": lambda m: [print(_err(partial(m.jnp.array, v))) for v in (
        ["a"], ["a", "b"], [[1.0], "a"], "ab", {"a": 1})],
    "bad_dtype": lambda m: m.jnp.ones(3).astype("foo"),
    "nonzero_traced": lambda m: m.jax.jit(lambda x: m.jnp.nonzero(x))(m.jnp.ones(3)),
    "where_one_arg_traced": lambda m: m.jax.jit(lambda x: m.jnp.where(x > 0))(m.jnp.ones(3)),
    "arange_traced": lambda m: m.jax.jit(lambda n: m.jnp.arange(n))(3),
    "arange_traced_start": lambda m: m.jax.jit(lambda n: m.jnp.arange(n, 10))(3),
    "arange_under_grad": lambda m: print(m.jax.grad(
        lambda x: m.jnp.arange(1, x, 0.5).sum() * x)(3.0)),
    "bincount_traced": lambda m: m.jax.jit(lambda x: m.jnp.bincount(x))(m.jnp.ones(3, int)),
    "union1d_traced": lambda m: m.jax.jit(lambda x: m.jnp.union1d(x, x))(m.jnp.ones(3)),
    "key_operands": lambda m: [print(_err(f)) for f in (
        lambda: m.jnp.ones(2) - m.random.key(0), lambda: m.jnp.ones(2) * m.random.key(0),
        lambda: 1 + m.random.key(0), lambda: m.jnp.ones(2, int) + m.random.key(0),
        lambda: m.jnp.ones(2) == m.random.key(0), lambda: m.jnp.ones(2) < m.random.key(0),
        lambda: m.jnp.ones(2) ** m.random.key(0), lambda: m.jnp.ones(2, int) & m.random.key(0),
        lambda: m.random.key(0) + 1)],
    "int_overflow": lambda m: [print(_err(f)) for f in (
        lambda: m.jnp.arange(3) * 2 ** 31, lambda: 2 ** 31 * m.jnp.arange(3),
        lambda: m.jnp.add(m.jnp.arange(3), 2 ** 31), lambda: m.jnp.arange(3) == 2 ** 40,
        lambda: m.jnp.arange(3, dtype=m.jnp.uint32) + 2 ** 32,
        lambda: m.jnp.arange(3) + (-2 ** 31 - 1),
        lambda: m.jax.jit(lambda x: x + 2 ** 31)(m.jnp.arange(3)))],
    "pure_callback_vmap": lambda m: m.jax.vmap(lambda x: m.jax.pure_callback(
        np.sin, m.jax.ShapeDtypeStruct(x.shape, x.dtype), x))(m.jnp.arange(3.0)),
}


def _err(f: Callable[[], Any]) -> str:
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the text is compared
        return str(e)
    return "no error"


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_texts(name: str) -> None:
    same_as_jax(ERRORS[name])


def test_error_classes_are_jaxs_builtins() -> None:
    m = FG
    for f, cls in ((lambda: m.jnp.ones(3) + m.jnp.ones(4), TypeError),
                   (lambda: m.jnp.sum(m.jnp.ones(3), axis=2), ValueError),
                   (lambda: m.jnp.ones(6).reshape(4, 2), TypeError),
                   (lambda: m.jnp.ones(3)[1.0], TypeError),
                   (lambda: m.jnp.ones(3).astype("foo"), TypeError),
                   (lambda: m.jnp.ones(2) - m.random.key(0), TypeError)):
        with pytest.raises(cls):
            f()


# ------------------------------------------------------------------ printed jaxprs


def test_variable_names_after_z_are_jaxs() -> None:
    def f(m: Any) -> None:
        def g(x: Any) -> Any:
            for _ in range(30):
                x = x + 1.0
            return x

        print(m.jax.make_jaxpr(g)(1.0))

    same_as_jax(f)


# ------------------------------------------------------------------ tutorials


def _pytrees(m: Any) -> None:
    tree_util = m.jax.tree_util
    trees = [(1, (2, 3), ()), [1, {"k1": 2, "k2": (3, 4)}, 5], {"a": 2, "b": (2, 3)},
             m.jnp.array([1, 2, 3])]
    for t in trees:
        print(repr(t), tree_util.tree_leaves(t))
    lol = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
    print(m.jax.tree.map(lambda x: x * 2, lol), m.jax.tree.structure(lol))
    print(m.jax.tree.map(lambda *xs: list(xs), *[dict(t=1, obs=3), dict(t=2, obs=4)]))
    flat, _ = tree_util.tree_flatten_with_path([1, {"k1": 2, "k2": (3, 4)}])
    for path, value in flat:
        print(tree_util.keystr(path), repr(path), value)
    td = m.jax.tree.structure({"a": [1, 2], "b": (3, None)})
    print(td, td.num_leaves, td.num_nodes, td.children())
    m.jax.tree.map(lambda x, y: x + y, [1, 2], [1, 2, 3])


def _random(m: Any) -> None:
    random = m.random
    key = random.key(42)
    print(key, random.normal(key), random.normal(key))
    for i in range(2):
        key, subkey = random.split(key)
        print(f"draw {i}: {random.normal(subkey)}")
    print(random.uniform(random.key(1701), (3,)))
    print(repr(random.PRNGKey(0)), random.split(random.PRNGKey(0)))


def _convolve(m: Any) -> None:
    def convolve(x: Any, w: Any) -> Any:
        return m.jnp.array([m.jnp.dot(x[i - 1:i + 2], w) for i in range(1, len(x) - 1)])

    x, w = m.jnp.arange(5), m.jnp.array([2.0, 3.0, 4.0])
    xs, ws = m.jnp.stack([x, x]), m.jnp.stack([w, w])
    print(convolve(x, w), m.jax.vmap(convolve)(xs, ws))
    print(m.jax.vmap(convolve, in_axes=[0, None])(xs, w))
    m.jax.vmap(lambda x, y: x + y)(m.jnp.ones(3), m.jnp.ones(4))


def _autodiff(m: Any) -> None:
    print(m.jax.grad(lambda x: m.jnp.sum(m.lax.stop_gradient(x) ** 2 + x))(
        m.jnp.array([1.0, 2.0])))
    (v, aux), g = m.jax.value_and_grad(
        lambda x: (m.jnp.sum(x ** 2), {"aux": x * 2}), has_aux=True)(m.jnp.ones(2))
    print(v, aux, g)
    print(m.jax.grad(lambda z: z ** 2, holomorphic=True)(3.0 + 4j))


def _arrays(m: Any) -> None:
    x = m.jnp.ones(3).block_until_ready()
    print(repr(x.addressable_data(0)), x.addressable_data(0) is x)
    print(x.is_fully_addressable, x.is_fully_replicated, isinstance(x, m.jax.Array))


TUTORIALS = {"arrays": _arrays, "pytrees": _pytrees, "random": _random, "vmap_convolve": _convolve,
             "autodiff": _autodiff}


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_tutorial_programs(name: str) -> None:
    same_as_jax(TUTORIALS[name])
