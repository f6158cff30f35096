"""JAX-face fixes compared with JAX 0.10.2 (fifteenth side-by-side review): ``lax.scan``'s
length errors, the non-square-matrix errors of ``jnp.linalg``, ``vmap``'s argument errors
(inconsistent sizes named by argument, axes out of range), ``linear_transpose``'s cotangent
checks, ``grad``'s argnums and output-dtype errors, ``jnp.power`` with a concrete integer
scalar exponent (an Array or NumPy scalar too) and with an integer-array exponent of a float
base, ``ldexp``'s error type, ``true_divide``'s name, the weak types of ``jax.scipy.stats``
functions of integer arrays, scalar conversions of Arrays, ``reshape(order="F")``,
``Array.view``/``nonzero``/``cumprod``/``searchsorted``/``compress``/``choose``/
``argpartition``, ``astype(copy=, device=)``, creation-shape errors, and the argument errors
of ``random.normal`` and ``random.permutation``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from jax_oracle import raised, same_message

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax as flax

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


_error, _same_error = raised, same_message


def _error_as_jax(f: Callable[[Any, Any], Any]) -> None:
    _same_error(lambda: f(fg, fnp), lambda: f(jax, jnp))


def _value(x: Any) -> tuple[str, bool, tuple[int, ...], bytes]:
    return str(x.dtype), bool(x.weak_type), tuple(x.shape), np.asarray(x).tobytes()


# ----------------------------------------------------------------- scan length errors

SCAN_ERRORS = {
    "length_disagrees": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0, n.arange(3), length=4),
    "sizes_differ": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0,
                                            (n.arange(3), n.arange(4))),
    "both": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0, (n.arange(3), n.arange(4)),
                                    length=3),
    "no_values": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0, None),
    "empty_list": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0, []),
    "python_scalar": lambda m, n: m.lax.scan(lambda c, x: (c, x), 0, [n.arange(3), 1.0]),
}


@pytest.mark.parametrize("name", sorted(SCAN_ERRORS))
def test_scan_length_errors_as_jax(name: str) -> None:
    _error_as_jax(SCAN_ERRORS[name])


def test_scan_length_still_works() -> None:
    c, ys = flax.scan(lambda c, x: (c + 1, c * 2), 0, None, length=4)
    assert int(c) == 4 and np.asarray(ys).tolist() == [0, 2, 4, 6]


# ----------------------------------------------------------------- linalg shape errors

LINALG_ERRORS = {
    "inv": lambda n, a: n.linalg.inv(a),
    "det": lambda n, a: n.linalg.det(a),
    "slogdet": lambda n, a: n.linalg.slogdet(a),
    "eig": lambda n, a: n.linalg.eig(a),
    "eigvals": lambda n, a: n.linalg.eigvals(a),
    "matrix_power": lambda n, a: n.linalg.matrix_power(a, 2),
    "cond": lambda n, a: n.linalg.cond(a),
    "tensorinv": lambda n, a: n.linalg.tensorinv(a, 1),
    "solve": lambda n, a: n.linalg.solve(a, n.ones(3)),
}


@pytest.mark.parametrize("name", sorted(LINALG_ERRORS))
@pytest.mark.parametrize("shape", [(3, 2), (3,)])
def test_linalg_shape_errors_as_jax(name: str, shape: tuple[int, ...]) -> None:
    if name == "solve" and len(shape) == 2:
        pytest.skip("JAX's text there is np.vectorize's")
    if name == "cond" and len(shape) == 2:
        pytest.skip("a rectangular matrix has a 2-norm condition number")
    f = LINALG_ERRORS[name]
    _same_error(lambda: f(fnp, fnp.ones(shape)), lambda: f(jnp, jnp.ones(shape)))


def test_matrix_power_exponent_error_as_jax() -> None:
    def f(n: Any) -> Any:
        return n.linalg.matrix_power(n.eye(2), 1.5)

    with pytest.raises(TypeError) as ours:
        f(fnp)
    with pytest.raises(TypeError) as theirs:
        f(jnp)
    assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------- vmap errors


def _rest(x: Any, *rest: Any) -> Any:
    return x


VMAP_ERRORS = {
    "two_sizes": lambda m, n: m.vmap(lambda a, b: a)(n.ones(3), n.ones((2, 3))),
    "keyword": lambda m, n: m.vmap(lambda a, b: a)(n.ones(3), b=n.ones((2, 3))),
    "star_args": lambda m, n: m.vmap(_rest)(n.ones(3), {"k": n.ones(2), "j": n.ones(3)},
                                            n.ones(2)),
    "axis_size": lambda m, n: m.vmap(lambda x, y: x, axis_size=4)(n.ones(3), n.ones(3)),
    "in_axis_range": lambda m, n: m.vmap(lambda x: x, in_axes=2)(n.ones((3, 4))),
    "in_axis_negative": lambda m, n: m.vmap(lambda x: x, in_axes=-3)(n.ones((3, 4))),
    "scalar": lambda m, n: m.vmap(lambda x: x)(1.0),
    "out_axis_range": lambda m, n: m.vmap(lambda x: x, out_axes=2)(n.ones(3)),
    "all_none": lambda m, n: m.vmap(lambda x: x, in_axes=(None,))(n.ones(3)),
    "no_args": lambda m, n: m.vmap(lambda: 1.0)(),
    "in_axes_length": lambda m, n: m.vmap(lambda x, y: x, in_axes=(0,))(n.ones(3),
                                                                         n.ones(3)),
}


@pytest.mark.parametrize("name", sorted(VMAP_ERRORS))
def test_vmap_errors_as_jax(name: str) -> None:
    _error_as_jax(VMAP_ERRORS[name])


def test_vmap_in_axes_of_a_float_is_a_type_error_as_jax() -> None:
    def f(m: Any, n: Any) -> Any:
        return m.vmap(lambda x: x, in_axes=1.5)(n.ones(3))

    with pytest.raises(TypeError) as ours:
        f(fg, fnp)
    with pytest.raises(TypeError) as theirs:
        f(jax, jnp)
    assert str(ours.value) == str(theirs.value)


def test_vmap_size_message_example() -> None:
    with pytest.raises(ValueError) as info:
        fg.vmap(lambda a, b: a + b)(fnp.ones(3), fnp.ones(4))
    assert str(info.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument a of type float32[3];\n"
        "  * one axis had size 4: axis 0 of argument b of type float32[4]")


# ----------------------------------------------------------------- linear_transpose


LT_ERRORS = {
    "shape": lambda m, n: m.linear_transpose(lambda x: x * 2, n.ones(3))(n.ones(2)),
    "tuple": lambda m, n: m.linear_transpose(lambda x: x * 2, n.ones(3))((n.ones(3),)),
    "list": lambda m, n: m.linear_transpose(lambda x: x * 2, n.ones(3))([n.ones(3)]),
    "dtype": lambda m, n: m.linear_transpose(lambda x: x * 2, n.ones(3))(
        n.ones(3, n.int32)),
    "pair": lambda m, n: m.linear_transpose(lambda x, y: (x, y), 1.0, 2.0)((1.0,)),
}


@pytest.mark.parametrize("name", sorted(LT_ERRORS))
def test_linear_transpose_cotangent_errors_as_jax(name: str) -> None:
    f = LT_ERRORS[name]
    with pytest.raises(TypeError) as ours:
        f(fg, fnp)
    with pytest.raises(TypeError) as theirs:
        f(jax, jnp)
    assert str(ours.value) == str(theirs.value)


# ----------------------------------------------------------------- power


def _bases(n: Any) -> list[Any]:
    return [3, n.int8(3), n.ones(2, n.int8) * 3, n.float16(3), n.asarray(3.0),
            n.ones(2) * 1.5, 2.0, n.array([True, False])]


def _exponents(n: Any) -> list[Any]:
    return [n.uint8(2), n.int32(2), np.int64(2), np.array(2), True, n.array([2]),
            n.array(2, n.uint32), np.uint8(3), n.array(True), np.array([2]), n.arange(2)]


@pytest.mark.parametrize("i", range(8))
@pytest.mark.parametrize("j", range(11))
def test_power_dtypes_and_values_as_jax(i: int, j: int) -> None:
    def outcome(n: Any) -> Any:
        try:
            a, b = _bases(n)[i], _exponents(n)[j]
            return _value(n.power(a, b)), _value(a ** b if not isinstance(a, float) else
                                                 n.asarray(a) ** b)
        except Exception as e:  # noqa: BLE001 - compared
            return type(e).__name__

    assert outcome(fnp) == outcome(jnp)


def test_power_of_weak_float_by_integer_array_is_strong() -> None:
    # JAX: lax.pow of the unpromoted operands; the result is weak only when both are.
    r = fnp.power(2.0, fnp.arange(3))
    assert r.dtype == np.float32 and not r.weak_type
    assert np.asarray(r).tolist() == [1.0, 2.0, 4.0]
    assert not flax.pow(fnp.asarray(2.0), fnp.arange(3)).weak_type
    assert flax.pow(fnp.asarray(2.0), 3).weak_type


@pytest.mark.parametrize(("m", "n"), [(fg, fnp), (jax, jnp)], ids=["funcgrad", "jax"])
def test_power_by_integer_exponents_differentiates_at_zero_as_jax(m: Any, n: Any) -> None:
    assert float(m.grad(lambda x: n.power(x, n.array(0)))(0.0)) == 0.0
    assert float(m.grad(lambda x: n.power(x, n.array([0, 1, 2])).sum())(0.0)) == 1.0
    assert float(m.jit(m.grad(lambda x, k: n.power(x, k)))(0.0, 0)) == 0.0


def test_traced_integer_power_is_strong_as_jax() -> None:
    for m, n in ((fg, fnp), (jax, jnp)):
        r = m.jit(n.power)(2, 3)
        assert (str(r.dtype), bool(r.weak_type), int(r)) == ("int32", False, 8)
        b = n.power(n.array([True, False]), n.array(True))
        assert (str(b.dtype), bool(b.weak_type), np.asarray(b).tolist()) == \
            ("int32", False, [1, 0])


def test_power_by_concrete_integer_scalar_keeps_the_base_dtype() -> None:
    # JAX: a concrete integer scalar exponent takes the integer_pow path.
    r = fnp.power(fnp.ones(2, fnp.int8) * 3, fnp.int32(2))
    assert r.dtype == np.int8 and np.asarray(r).tolist() == [9, 9]
    r = fnp.power(3, fnp.uint8(2))
    assert r.dtype == np.int32 and r.weak_type and int(r) == 9
    assert float(fg.grad(lambda x: x ** fnp.int32(2))(3.0)) == 6.0


# ----------------------------------------------------------------- small API points


def test_ldexp_of_float_exponent_is_a_value_error_as_jax() -> None:
    _same_error(lambda: fnp.ldexp(fnp.int32(3), 2.0), lambda: jnp.ldexp(jnp.int32(3), 2.0))


def test_true_divide_is_its_own_function_as_jax() -> None:
    assert fnp.true_divide.__name__ == jnp.true_divide.__name__ == "true_divide"
    r = fnp.true_divide(fnp.int8(3), 2)
    assert (str(r.dtype), float(r)) == ("float32", 1.5)


# ----------------------------------------------------------------- scipy.stats weak types

STATS = [
    ("bernoulli", "logpmf", 2), ("bernoulli", "pmf", 2), ("bernoulli", "cdf", 2),
    ("bernoulli", "ppf", 2), ("poisson", "logpmf", 2), ("poisson", "cdf", 2),
    ("beta", "logpdf", 3), ("beta", "cdf", 3), ("beta", "sf", 3), ("beta", "logsf", 3),
    ("gamma", "logpdf", 2), ("gamma", "cdf", 2), ("gamma", "sf", 2), ("gamma", "logsf", 2),
    ("t", "logpdf", 2), ("chi2", "logpdf", 2), ("chi2", "cdf", 2), ("chi2", "sf", 2),
    ("chi2", "logsf", 2), ("geom", "logpmf", 2), ("nbinom", "logpmf", 3),
    ("betabinom", "logpmf", 4), ("pareto", "logpdf", 2), ("pareto", "cdf", 2),
    ("pareto", "logsf", 2), ("pareto", "ppf", 2), ("norm", "logpdf", 1),
]


@pytest.mark.parametrize(("dist", "fn", "nargs"), STATS)
def test_stats_weak_types_as_jax(dist: str, fn: str, nargs: int) -> None:
    import jax.scipy.stats as jstats

    import funcgrad.scipy.stats as fstats

    def outcome(stats: Any, n: Any) -> list[Any]:
        f = getattr(getattr(stats, dist), fn)
        rest = (0.7,) * (nargs - 1)
        cases = [(0.5, *rest), (n.arange(2), *rest), (n.asarray(0.5), *(2,) * (nargs - 1)),
                 (n.arange(2.0), *(2,) * (nargs - 1))]
        out = []
        for args in cases:
            r = f(*args)
            out.append((str(r.dtype), bool(r.weak_type)))
        return out

    assert outcome(fstats, fnp) == outcome(jstats, jnp)


def test_stats_values_unchanged() -> None:
    import jax.scipy.stats as jstats

    import funcgrad.scipy.stats as fstats

    k = np.array([0.0, 1.0, 2.0, 3.0])
    for dist, fn, args in [("gamma", "sf", (k, 2.0)), ("chi2", "sf", (k, 3.0)),
                           ("chi2", "logsf", (k, 3.0)), ("poisson", "logpmf", (k, 2.0)),
                           ("pareto", "ppf", (np.array([0.1, 0.5]), 3.0)),
                           ("beta", "cdf", (np.array([-0.5, 0.3, 1.5]), 2.0, 3.0))]:
        ours = np.asarray(getattr(getattr(fstats, dist), fn)(*args))
        theirs = np.asarray(getattr(getattr(jstats, dist), fn)(*args))
        np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)


# ----------------------------------------------------------------- grad argument errors

GRAD_ERRORS = {
    "int_output": lambda m, n: m.grad(lambda x: x.astype(n.int32))(1.0),
    "int_output_value_and_grad": lambda m, n: m.value_and_grad(
        lambda x: x.astype(n.int32))(1.0),
    "argnums_past_the_end": lambda m, n: m.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0),
    "argnums_tuple": lambda m, n: m.value_and_grad(lambda x, y: x * y,
                                                   argnums=(0, 2))(1.0, 2.0),
    "jacrev_argnums": lambda m, n: m.jacrev(lambda x, y: x * y, argnums=(0, 2))(1.0, 2.0),
    "jacfwd_argnums": lambda m, n: m.jacfwd(lambda x, y: x * y, argnums=2)(1.0, 2.0),
    "hessian_argnums": lambda m, n: m.hessian(lambda x, y: x * y, argnums=-3)(1.0, 2.0),
}


@pytest.mark.parametrize("name", sorted(GRAD_ERRORS))
def test_grad_argument_errors_as_jax(name: str) -> None:
    _error_as_jax(GRAD_ERRORS[name])


def test_negative_argnums_still_work() -> None:
    assert float(fg.grad(lambda x, y: x * y, argnums=-1)(2.0, 3.0)) == 2.0
    assert float(fg.jacrev(lambda x, y: x * y, argnums=-2)(2.0, 3.0)) == 3.0


# ----------------------------------------------------------------- Array methods and conversions

ARRAY_ERRORS = {
    "int_of_matrix": lambda m, n: int(n.array([[3]])),
    "float_of_vector": lambda m, n: float(n.ones(1)),
    "complex_of_vector": lambda m, n: complex(n.ones(2)),
    "index_of_float": lambda m, n: [0, 1][n.float32(1)],
    "index_of_vector": lambda m, n: [0, 1][n.array([1])],
    "index_of_bool": lambda m, n: range(3)[n.array(True)],
    "string_index": lambda m, n: n.ones(3)["a"],
    "view_0d": lambda m, n: n.int32(1).view("int16"),
    "view_last_axis": lambda m, n: n.arange(3, dtype=n.int8).view(n.int16),
    "reshape_order_a": lambda m, n: n.ones(4).reshape(2, 2, order="A"),
    "reshape_order_x": lambda m, n: n.reshape(n.ones(4), (2, 2), order="X"),
}


@pytest.mark.parametrize("name", sorted(ARRAY_ERRORS))
def test_array_conversion_errors_as_jax(name: str) -> None:
    _error_as_jax(ARRAY_ERRORS[name])


def test_scalar_conversions_still_work() -> None:
    assert int(fnp.int32(3)) == 3 and float(fnp.float32(2.5)) == 2.5
    assert complex(fnp.asarray(1.0)) == 1 + 0j and [0, 1, 2][fnp.int32(2)] == 2
    assert fnp.arange(5)[fnp.int32(3)].tolist() == 3


ARRAY_METHODS = {
    "reshape_f": lambda n, x: x.reshape(3, 2, order="F"),
    "reshape_f_fn": lambda n, x: n.reshape(x, (-1,), order="F"),
    "cumprod": lambda n, x: (x + 1).cumprod(axis=1),
    "nonzero": lambda n, x: x.nonzero(size=7, fill_value=-1),
    "searchsorted": lambda n, x: x.ravel().searchsorted(n.array([2.5, 0.0]), side="right"),
    "compress": lambda n, x: x.compress(n.array([True, False, True]), axis=1),
    "choose": lambda n, x: n.array([0, 1, 0]).choose([x[0], x[1]]),
    "argpartition": lambda n, x: n.sort(x.argpartition(1, axis=1)[:, :1], axis=1),
    "view_int16": lambda n, x: n.arange(4, dtype=n.int8).view(n.int16),
    "view_uint8": lambda n, x: n.arange(3, dtype=n.int16).view(n.uint8),
    "view_bool": lambda n, x: n.arange(3, dtype=n.int8).view(bool),
    "view_from_bool": lambda n, x: n.array([True, False]).view(n.uint8),
    "view_same": lambda n, x: x.view(n.int32),
    "view_2d": lambda n, x: x.view(n.float16),
}


@pytest.mark.parametrize("name", sorted(ARRAY_METHODS))
def test_array_methods_as_jax(name: str) -> None:
    f = ARRAY_METHODS[name]
    ours = f(fnp, fnp.arange(6.0).reshape(2, 3))
    theirs = f(jnp, jnp.arange(6.0).reshape(2, 3))
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs),
                    strict=True):
        assert _value(a) == _value(b)


# ----------------------------------------------------------------- random argument errors

RANDOM_ERRORS = {
    "normal_int_dtype": lambda m, n: m.random.normal(m.random.key(0), (2,), dtype=n.int32),
    "permutation_axis": lambda m, n: m.random.permutation(m.random.key(0), n.ones((2, 3)),
                                                          axis=2),
    "permutation_negative_axis": lambda m, n: m.random.permutation(
        m.random.key(0), n.ones((2, 3)), axis=-3),
    "permutation_independent_axis": lambda m, n: m.random.permutation(
        m.random.key(0), n.ones((2, 3)), axis=2, independent=True),
}


@pytest.mark.parametrize("name", sorted(RANDOM_ERRORS))
def test_random_argument_errors_as_jax(name: str) -> None:
    _error_as_jax(RANDOM_ERRORS[name])


def test_permutation_negative_axis_in_range_as_jax() -> None:
    ours = fg.random.permutation(fg.random.key(3), fnp.arange(12).reshape(3, 4), axis=-1)
    theirs = jax.random.permutation(jax.random.key(3), jnp.arange(12).reshape(3, 4), axis=-1)
    assert _value(ours) == _value(theirs)


# ----------------------------------------------------------------- creation shapes and astype

CREATION_ERRORS = {
    "negative": lambda m, n: n.zeros((2, -1)),
    "float_shape": lambda m, n: n.zeros(2.5),
    "float_in_tuple": lambda m, n: n.ones((2, 2.0)),
    "ones_like_list": lambda m, n: n.ones_like([1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(CREATION_ERRORS))
def test_creation_errors_as_jax(name: str) -> None:
    _error_as_jax(CREATION_ERRORS[name])


def test_astype_takes_copy_and_device_as_jax() -> None:
    ours = fnp.astype(fnp.arange(3), fnp.float16, copy=True)
    theirs = jnp.astype(jnp.arange(3), jnp.float16, copy=True)
    assert _value(ours) == _value(theirs)
    moved = fnp.astype(fnp.arange(3), fnp.float32, device=fg.devices("cpu")[0])
    assert moved.dtype == np.float32 and moved.tolist() == [0.0, 1.0, 2.0]
    assert fnp.zeros(np.int64(2)).shape == (2,) and fnp.ones((fnp.int32(2), 3)).shape == (2, 3)


# ----------------------------------------------------------------- jnp argument errors

NUMPY_ERRORS = {
    "einsum_count": lambda m, n: n.einsum("ij,jk", n.ones((2, 3))),
    "matmul_scalar_right": lambda m, n: n.ones((2, 3)) @ n.ones(()),
    "matmul_scalar_left": lambda m, n: n.matmul(n.ones(()), n.ones(2)),
    "stack_shapes": lambda m, n: n.stack([n.ones(2), n.ones(3), n.ones(2)]),
    "split_unequal": lambda m, n: n.split(n.ones(7), 3),
    "squeeze_size": lambda m, n: n.squeeze(n.ones((2, 3, 1)), (0, 2)),
    "vector_norm_fro": lambda m, n: n.linalg.norm(n.ones(3), ord="fro"),
    "vector_norm_nuc": lambda m, n: n.linalg.norm(n.ones((2, 3)), ord="nuc", axis=0),
    "take_float": lambda m, n: n.take(n.ones(3), n.ones(2)),
    "take_along_axis_float": lambda m, n: n.take_along_axis(n.ones((2, 3)), n.ones((2, 3)),
                                                            axis=1),
}


@pytest.mark.parametrize("name", sorted(NUMPY_ERRORS))
def test_numpy_argument_errors_as_jax(name: str) -> None:
    _error_as_jax(NUMPY_ERRORS[name])


def test_checkpoint_policy_aliases_as_jax() -> None:
    ours, theirs = fg.checkpoint_policies, jax.checkpoint_policies
    assert sorted(n for n in dir(ours) if not n.startswith("_")) == \
        sorted(n for n in dir(theirs) if not n.startswith("_"))
    assert ours.checkpoint_dots is ours.dots_saveable
    assert ours.checkpoint_dots_with_no_batch_dims is ours.dots_with_no_batch_dims_saveable

    def f(x: Any, m: Any) -> Any:
        return m.tanh(m.sin(x) @ m.sin(x).T).sum()

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 5
    g = fg.grad(fg.checkpoint(lambda x: f(x, fnp),
                              policy=ours.checkpoint_dots_with_no_batch_dims))(x)
    want = jax.grad(lambda x: f(x, jnp))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=1e-5)
