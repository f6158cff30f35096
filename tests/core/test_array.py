"""``funcgrad.Array``: one type for concrete values and tracers, immutable, printed as JAX
prints it, and closed to NumPy inside transformations.

* ``isinstance(t, funcgrad.Array)`` holds for the values seen inside grad, vjp, jvp,
  vmap, jit and their compositions;
* no aliasing in either direction: an Array made from a NumPy array (by ``asarray``,
  ``array``, as an argument of ``jit``/``grad`` or a constant closed over by ``jit``) does
  not see later writes to it, and the NumPy view of an Array cannot write to it;
* ``repr``/``str``/``format`` give JAX's text (checked against jax when installed, in
  JAX's default 32-bit mode);
* a NumPy ufunc, or a NumPy function that converts its argument, called on a tracer raises
  TracerArrayConversionError naming the user's line; one that calls a method of its
  argument (``np.sum``, ``np.reshape``...; as with JAX, whose tracers have no
  ``__array_function__``) stays traced; ``np_array + tracer`` defers to funcgrad.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.errors import TracerArrayConversionError
from funcgrad.testing import jax_x64_mode

HERE = os.path.basename(__file__)

# ------------------------------------------------------------------ transformations


def _under(name: str, f: Callable[[Any], Any], x: Any) -> Any:
    """Run ``f`` on (the traced version of) ``x`` under the transformation ``name``; for
    vmap, ``x`` is the batch. Returns what the transformation returns."""
    if name == "grad":
        return fg.grad(lambda t: fnp.sum(f(t)))(x)
    if name == "vjp":
        out, pullback = fg.vjp(f, x)
        return pullback(fnp.ones_like(out))[0]
    if name == "jvp":
        return fg.jvp(f, (x,), (fnp.ones_like(x),))[1]
    if name == "vmap":
        return fg.vmap(f)(x)
    if name == "jit":
        return fg.jit(f)(x)
    if name == "jit_of_grad":
        return fg.jit(fg.grad(lambda t: fnp.sum(f(t))))(x)
    if name == "vmap_of_grad":
        return fg.vmap(fg.grad(lambda t: fnp.sum(f(t))))(x)
    if name == "jacfwd":
        return fg.jacfwd(f)(x)
    if name == "hessian":
        return fg.hessian(lambda t: fnp.sum(f(t)))(x)
    raise AssertionError(name)


TRANSFORMS = ["grad", "vjp", "jvp", "vmap", "jit", "jit_of_grad", "vmap_of_grad", "jacfwd",
              "hessian"]


def _operand(name: str) -> Any:
    """A float operand: a batch of vectors for vmap, a vector otherwise."""
    x = fnp.asarray(np.linspace(0.5, 1.5, 3))
    return fnp.stack([x, 2 * x]) if name.startswith("vmap") else x


@pytest.mark.parametrize("name", TRANSFORMS)
def test_tracers_are_arrays(name: str) -> None:
    seen: list[Any] = []

    def f(t: Any) -> Any:
        seen.append((isinstance(t, fg.Array), type(t).__name__))
        y = t * 2.0
        seen.append((isinstance(y, fg.Array), type(y).__name__))
        return fnp.sin(y)

    _under(name, f, _operand(name))
    assert seen and all(ok for ok, _ in seen), seen
    # The values inside are tracers, not the concrete ArrayImpl.
    assert any(kind != "ArrayImpl" for _, kind in seen), seen


def test_concrete_arrays_are_arrays() -> None:
    for x in (fnp.arange(3), fnp.float32(2), fnp.asarray(1.5), fnp.zeros((2, 0)),
              fg.jit(lambda t: t + 1)(fnp.ones(2)), fg.grad(lambda t: t * t)(1.0)):
        assert isinstance(x, fg.Array)
    assert not isinstance(np.ones(2), fg.Array)


# ------------------------------------------------------------------ immutability


def test_setitem_raises_type_error_pointing_to_at() -> None:
    x = fnp.arange(3.0)
    with pytest.raises(TypeError, match=r"\.at\[") as err:
        x[0] = 1.0
    assert "immutable" in str(err.value)
    with pytest.raises(TypeError, match=r"\.at\["):
        x[1:] = fnp.zeros(2)
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


@pytest.mark.parametrize("name", ["grad", "vmap", "jit", "jvp"])
def test_setitem_on_a_tracer_raises_type_error(name: str) -> None:
    def f(t: Any) -> Any:
        t[0] = 1.0
        return t

    with pytest.raises(TypeError, match=r"\.at\["):
        _under(name, f, _operand(name))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("make", ["asarray", "array"])
def test_array_from_numpy_does_not_see_later_writes(make: str, dtype: Any) -> None:
    a = np.arange(4).astype(dtype)
    x = getattr(fnp, make)(a)
    a[0] = 100
    a[1:] *= 3
    np.testing.assert_array_equal(np.asarray(x), np.arange(4))


def test_jit_arguments_and_results_do_not_alias_numpy_inputs() -> None:
    a = np.arange(3.0)
    identity = fg.jit(lambda t: t)
    r = identity(a)
    doubled = fg.jit(lambda t: t * 2)(a)
    a[0] = 100.0
    np.testing.assert_array_equal(np.asarray(r), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(doubled), [0.0, 2.0, 4.0])
    # A later call sees the new value: arguments are read at each call.
    np.testing.assert_array_equal(np.asarray(identity(a)), [100.0, 1.0, 2.0])


def test_grad_results_do_not_alias_numpy_inputs() -> None:
    a = np.arange(3.0)
    g = fg.grad(lambda t: fnp.sum(t))(a)
    g2 = fg.grad(lambda t: fnp.sum(t * t))(a)
    a[:] = -7.0
    np.testing.assert_array_equal(np.asarray(g), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(g2), [0.0, 2.0, 4.0])


def test_constant_closed_over_by_jit_is_captured_at_trace_time() -> None:
    """As in JAX: the constant's value at the first (tracing) call is kept; the result
    already returned never changes."""
    a = np.arange(3.0)
    f = fg.jit(lambda t: t + a)
    r1 = f(1.0)
    a[0] = 100.0
    np.testing.assert_array_equal(np.asarray(r1), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(f(1.0)), [1.0, 2.0, 3.0])


def test_numpy_view_of_an_array_is_read_only() -> None:
    for x in (fnp.asarray(np.arange(3.0)), fnp.arange(3.0), fg.jit(lambda t: t * 1)(
            fnp.arange(3.0)), fg.grad(lambda t: fnp.sum(t * t))(fnp.arange(3.0) / 2)):
        n = np.asarray(x)
        assert not n.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            n[0] = 42.0
        with pytest.raises(ValueError, match="read-only"):
            n += 1
        np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_numpy_view_cannot_be_made_writable() -> None:
    x = fnp.arange(3.0)
    n = np.asarray(x)
    with pytest.raises(ValueError, match="WRITEABLE"):
        n.flags.writeable = True
    with contextlib.suppress(ValueError):
        n[0] = 42.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_dlpack_export_cannot_write_to_the_array() -> None:
    x = fnp.arange(3.0)
    d = np.from_dlpack(x)
    with contextlib.suppress(ValueError):
        d[0] = 42.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_numpy_copy_is_writable_and_independent() -> None:
    x = fnp.arange(3.0)
    for c in (np.array(x), np.array(x, copy=True), np.asarray(x).copy()):
        assert c.flags.writeable
        c[0] = 42.0
        assert c[0] == 42.0
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])


def test_updates_return_new_arrays() -> None:
    x = fnp.arange(3.0)
    y = x.at[0].set(5.0)
    assert y is not x
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(y), [5.0, 1.0, 2.0])


# ------------------------------------------------------------------ methods


def test_item() -> None:
    assert fnp.float32(2.5).item() == 2.5 and type(fnp.float32(2.5).item()) is float
    assert fnp.arange(3)[1].item() == 1 and type(fnp.arange(3)[1].item()) is int
    assert fnp.array(True).item() is True
    assert fnp.arange(6).reshape(2, 3).item(4) == 4
    assert fnp.arange(6).reshape(2, 3).item((1, 0)) == 3
    with pytest.raises(ValueError):
        fnp.arange(3).item()


def test_tolist() -> None:
    assert fnp.arange(4.0).reshape(2, 2).tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert fnp.asarray(3).tolist() == 3
    assert fnp.array([True, False]).tolist() == [True, False]
    assert fnp.zeros((0, 2)).tolist() == []
    assert all(type(v) is int for v in fnp.arange(3).tolist())


def test_astype() -> None:
    x = fnp.arange(4.0) - 1.5
    y = x.astype(fnp.int32)
    assert isinstance(y, fg.Array) and y.dtype == np.int32
    assert y.tolist() == [-1, 0, 0, 1]
    assert x.astype(bool).tolist() == [True, True, True, True]
    assert x.astype("float32").dtype == np.float32
    assert x.dtype == np.float64  # x itself is unchanged
    assert fg.grad(lambda t: fnp.sum(t.astype(fnp.float32) ** 2))(x).dtype == np.float64


def test_block_until_ready_and_devices() -> None:
    x = fnp.arange(3.0)
    assert x.block_until_ready() is x
    assert fg.block_until_ready(x) is x
    dev = x.device
    assert x.devices() == {dev}
    assert dev in fg.devices()
    y = fg.jit(lambda t: t * 2)(x)
    assert y.block_until_ready() is y and y.device == dev


def test_hash_raises_type_error() -> None:
    for x in (fnp.arange(3), fnp.float32(1), fnp.asarray(2)):
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)
        with pytest.raises(TypeError, match="unhashable"):
            {x: 1}  # noqa: B018

    def f(t: Any) -> Any:
        with pytest.raises(TypeError, match="unhashable"):
            hash(t)
        return t

    fg.jit(f)(fnp.ones(2))
    fg.grad(lambda t: fnp.sum(f(t)))(fnp.ones(2))


def test_len_and_iteration() -> None:
    x = fnp.arange(6.0).reshape(3, 2)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, fg.Array) and r.shape == (2,) for r in rows)
    assert [r.tolist() for r in rows] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert [e.item() for e in fnp.arange(3)] == [0, 1, 2]
    assert len(fnp.zeros((0, 3))) == 0 and list(fnp.zeros((0, 3))) == []
    s = fnp.float32(1)
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(TypeError):
        iter(s)


def test_len_and_iteration_of_tracers() -> None:
    def f(t: Any) -> Any:
        assert len(t) == 3
        return fnp.stack([2.0 * e for e in t])

    x = fnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(fg.jit(f)(x)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(fg.grad(lambda t: fnp.sum(f(t)))(x)), [2.0] * 3)
    np.testing.assert_array_equal(np.asarray(fg.vmap(f)(fnp.ones((2, 3)))), np.full((2, 3), 2))


def test_shape_dtype_properties() -> None:
    x = fnp.zeros((2, 3), fnp.float32)
    assert (x.shape, x.ndim, x.size, x.dtype, x.itemsize, x.nbytes) == (
        (2, 3), 2, 6, np.float32, 4, 24)
    assert fnp.asarray(1.5).weak_type and not x.weak_type


# ------------------------------------------------------------------ printing (vs JAX)


@contextlib.contextmanager
def _jax_x32() -> Iterator[Any]:
    jax = pytest.importorskip("jax")
    with jax_x64_mode(jax, False):
        import jax.numpy as jjnp

        yield jjnp


# Each entry builds the same array in either jax.numpy or funcgrad.numpy (``m``), from the
# same NumPy data: only the printing is compared.
PRINT_TABLE: dict[str, Callable[[Any], Any]] = {
    "float32": lambda m: m.asarray(np.array([1.0, 2.5, -3.0], np.float32)),
    "float32_exact": lambda m: m.asarray(np.array([1.0, 2.0], np.float32)),
    "int32": lambda m: m.asarray(np.arange(5, dtype=np.int32)),
    "bool": lambda m: m.asarray(np.array([True, False, True])),
    "weak_float": lambda m: m.asarray(1.5),
    "weak_int": lambda m: m.asarray(3),
    "weak_product": lambda m: m.arange(3) * 2.0,
    "weak_sum": lambda m: m.asarray(2) + 1,
    "scalar_float32": lambda m: m.float32(2),
    "scalar_int32": lambda m: m.int32(-7),
    "scalar_bool": lambda m: m.asarray(np.bool_(True)),
    "zero_d": lambda m: m.asarray(np.float32(0.1)),
    "negative_zero": lambda m: m.asarray(np.float32(-0.0)),
    "empty": lambda m: m.zeros((0,)),
    "empty_2d_int": lambda m: m.zeros((2, 0), m.int32),
    "2d": lambda m: m.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3)),
    "3d": lambda m: m.ones((2, 2, 2)),
    "long_wraps": lambda m: m.asarray(np.arange(100.0, dtype=np.float32)),
    "long_fractions": lambda m: m.asarray(np.linspace(0, 1, 30).astype(np.float32)),
    "long_int": lambda m: m.asarray(np.arange(1000, dtype=np.int32)),
    "summarized": lambda m: m.asarray(np.arange(2000.0, dtype=np.float32)),
    "big_2d": lambda m: m.asarray(np.arange(200.0, dtype=np.float32).reshape(20, 10)),
    "specials": lambda m: m.asarray(np.array([np.nan, np.inf, -np.inf, 1e10], np.float32)),
    "small_and_large": lambda m: m.asarray(np.array([1e-8, 1.0], np.float32)),
    "float16": lambda m: m.asarray(np.array([1, 2.5], np.float16)),
    "bfloat16": lambda m: m.array([1.5, 2], m.bfloat16),
    "uint8": lambda m: m.asarray(np.array([1, 255], np.uint8)),
    "complex64": lambda m: m.asarray(np.array([1 + 2j, 3j], np.complex64)),
    "int_long_line": lambda m: m.asarray(np.arange(10**6, 10**6 + 20, dtype=np.int32)),
}

FORMATTERS: dict[str, Callable[[Any], str]] = {
    "repr": repr, "str": str, "format": format, "f-string": lambda a: f"{a}",
    "format_empty_spec": lambda a: format(a, ""),
    # A format spec on a 0-d number (what JAX forwards to the scalar).
    "format_spec": lambda a: format(a, ".3f") if a.ndim == 0 and a.dtype.kind in "fiu" else "",
}

# format(x) / f"{x}" of a 0-d Array formats the Python scalar, as JAX:
# format(jnp.asarray(np.float32(0.1))) is "0.10000000149011612".
PRINT_PARAMS = [pytest.param(name, how, id=f"{name}-{how}")
                for name in PRINT_TABLE for how in FORMATTERS]


@pytest.mark.x32
@pytest.mark.parametrize("name,how", PRINT_PARAMS)
def test_printing_equals_jax(name: str, how: str) -> None:
    with _jax_x32() as jjnp:
        j = PRINT_TABLE[name](jjnp)
        want = FORMATTERS[how](j)
        want_type = (j.dtype, j.weak_type)
    f = PRINT_TABLE[name](fnp)
    assert (f.dtype, f.weak_type) == want_type
    assert FORMATTERS[how](f) == want


@pytest.mark.x32
def test_printing_without_jax() -> None:
    """The same text, spelled out, so the check stands where jax is not installed."""
    assert repr(fnp.arange(3.0)) == "Array([0., 1., 2.], dtype=float32)"
    assert repr(fnp.asarray(1.5)) == "Array(1.5, dtype=float32, weak_type=True)"
    assert repr(fnp.arange(3) * 2.0) == "Array([0., 2., 4.], dtype=float32, weak_type=True)"
    assert repr(fnp.float32(2)) == "Array(2., dtype=float32)"
    assert repr(fnp.array([True, False])) == "Array([ True, False], dtype=bool)"
    assert repr(fnp.zeros((2, 0), fnp.int32)) == "Array([], shape=(2, 0), dtype=int32)"
    assert repr(fnp.arange(4).reshape(2, 2)) == "Array([[0, 1],\n       [2, 3]], dtype=int32)"
    assert str(fnp.arange(3.0)) == "[0. 1. 2.]"
    assert f"{fnp.float32(2.5):.2f}" == "2.50"
    text = repr(fnp.arange(30.0))
    assert text.startswith("Array([ 0.,  1.,") and text.endswith("dtype=float32)")
    assert all(len(line) <= 75 for line in text.splitlines())


# ------------------------------------------------------------------ NumPy on tracers

# One lambda a line: the error must name this file and that line. Each takes a float
# vector tracer ``t`` (shape (3,)).
UFUNCS: list[Callable[[Any], Any]] = [
    lambda t: np.sin(t),
    lambda t: np.cos(t),
    lambda t: np.tan(t),
    lambda t: np.exp(t),
    lambda t: np.log(t),
    lambda t: np.sqrt(t),
    lambda t: np.tanh(t),
    lambda t: np.abs(t),
    lambda t: np.negative(t),
    lambda t: np.square(t),
    lambda t: np.floor(t),
    lambda t: np.sign(t),
    lambda t: np.log1p(t),
    lambda t: np.expm1(t),
    lambda t: np.reciprocal(t),
    lambda t: np.isnan(t),
    lambda t: np.add(np.ones(3), t),
    lambda t: np.add(t, 1.0),
    lambda t: np.subtract(np.ones(3), t),
    lambda t: np.multiply(t, np.ones(3)),
    lambda t: np.divide(np.ones(3), t),
    lambda t: np.power(t, 2.0),
    lambda t: np.maximum(np.zeros(3), t),
    lambda t: np.minimum(t, t),
    lambda t: np.greater(t, 0.5),
    lambda t: np.arctan2(t, np.ones(3)),
    lambda t: np.hypot(np.ones(3), t),
    lambda t: np.matmul(np.ones(3), t),
]

ARRAY_FUNCTIONS: list[Callable[[Any], Any]] = [
    lambda t: np.concatenate([t, t]),
    lambda t: np.concatenate([np.ones(3), t]),
    lambda t: np.stack([t, t]),
    lambda t: np.where(t > 1.0, t, 0.0),
    lambda t: np.where(np.ones(3) > 0, t, 0.0),
    lambda t: np.dot(t, t),
    lambda t: np.dot(np.ones(3), t),
    lambda t: np.linalg.norm(t),
    lambda t: np.asarray(t),
    lambda t: np.array(t),
    lambda t: np.asarray(t, dtype=np.float64),
    lambda t: np.clip(t, 0.0, 1.0),
    lambda t: np.sort(t),
    lambda t: np.outer(t, t),
    lambda t: np.einsum("i,i->", t, t),
    lambda t: np.tensordot(t, t, 1),
    lambda t: np.expand_dims(t, 0),
    lambda t: np.tile(t, 2),
    lambda t: np.diff(t),
    lambda t: np.allclose(t, t),
    lambda t: np.copy(t),
    lambda t: np.ravel(t),
    lambda t: np.atleast_2d(t),
    lambda t: np.linspace(t, 2 * t, 3),
    lambda t: np.interp(0.5, np.arange(3.0), t),
    lambda t: np.polyval(t, 2.0),
    lambda t: np.histogram(t),
    lambda t: np.unique(t),
]

# NumPy functions that call the argument's method (``_wrapfunc``/``_wrapreduction``) or
# only index it: on a tracer they give a traced funcgrad Array, as JAX's do.
METHOD_FUNCTIONS: list[Callable[[Any], Any]] = [
    lambda t: np.sum(t),
    lambda t: np.mean(t),
    lambda t: np.std(t),
    lambda t: np.var(t),
    lambda t: np.max(t),
    lambda t: np.argmax(t),
    lambda t: np.prod(t),
    lambda t: np.cumsum(t),
    lambda t: np.reshape(t, (3, 1)),
    lambda t: np.transpose(t),
    lambda t: np.flip(t),
    lambda t: np.round(t),
]

NUMPY_CASES = [pytest.param(f, id=f"ufunc{i}") for i, f in enumerate(UFUNCS)] + [
    pytest.param(f, id=f"function{i}") for i, f in enumerate(ARRAY_FUNCTIONS)]


@pytest.mark.parametrize("name", ["grad", "jit", "vmap", "jvp"])
@pytest.mark.parametrize("fn", NUMPY_CASES)
def test_numpy_on_a_tracer_raises_jax_text(fn: Callable[[Any], Any], name: str) -> None:
    x = _operand(name)
    with pytest.raises(TracerArrayConversionError) as err:
        _under(name, fn, x)
    text = str(err.value)
    # JAX's text: what was called on which tracer, then (jit, vmap) where it came from.
    assert text.startswith("The numpy.ndarray conversion method __array__() was called on "
                           "traced array with shape "), text
    assert text.endswith("\nSee https://docs.jax.dev/en/latest/errors.html"
                         "#jax.errors.TracerArrayConversionError"), text
    if name in ("jit", "vmap"):
        assert HERE in text, text


def test_the_tables_are_broad() -> None:
    assert len(UFUNCS) >= 20 and len(ARRAY_FUNCTIONS) >= 20
    assert all(isinstance(getattr(np, f.__code__.co_names[1], None), np.ufunc)
               for f in UFUNCS), "every UFUNCS entry calls a NumPy ufunc"


@pytest.mark.parametrize("fn", [pytest.param(UFUNCS[0], id="ufunc"),
                                pytest.param(ARRAY_FUNCTIONS[0], id="function")])
def test_numpy_on_a_tracer_raises_in_nested_transformations(fn: Callable[[Any], Any]) -> None:
    for name in ("jit_of_grad", "vmap_of_grad", "jacfwd", "hessian", "vjp"):
        with pytest.raises(TracerArrayConversionError,
                           match=r"^The numpy\.ndarray conversion method __array__\(\)"):
            _under(name, fn, _operand(name))


@pytest.mark.parametrize("name", ["grad", "jit", "vmap", "jvp"])
@pytest.mark.parametrize("fn", METHOD_FUNCTIONS)
def test_numpy_functions_calling_methods_stay_traced(fn: Callable[[Any], Any],
                                                     name: str) -> None:
    seen: list[Any] = []

    def f(t: Any) -> Any:
        out = fn(t)
        seen.append(out)
        return fnp.sum(out * 1.0)

    x = _operand(name)
    got = _under(name, f, x)
    assert seen and all(isinstance(o, fg.Array) for o in seen)
    assert isinstance(got, fg.Array)
    if name == "jit":
        np.testing.assert_allclose(np.asarray(got), np.sum(fn(np.asarray(x)) * 1.0),
                                   rtol=1e-6)


def test_numpy_on_concrete_arrays_works() -> None:
    """Outside transformations NumPy converts an Array (a copy, or a read-only view)."""
    x = fnp.arange(1.0, 4.0)
    for fn in UFUNCS + ARRAY_FUNCTIONS + METHOD_FUNCTIONS:
        fn(x)
    assert np.sum(x) == 6.0
    assert isinstance(np.sin(x), np.ndarray)


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, t: a + t, "mul": lambda a, t: a * t, "sub": lambda a, t: a - t,
    "truediv": lambda a, t: a / t, "pow": lambda a, t: a ** t, "matmul": lambda a, t: a @ t,
    "lt": lambda a, t: a < t, "eq": lambda a, t: a == t,
}


@pytest.mark.parametrize("op", list(OPERATORS))
@pytest.mark.parametrize("name", ["grad", "jit", "vmap", "jvp"])
def test_numpy_array_operator_tracer_defers_to_funcgrad(name: str, op: str) -> None:
    a = np.array([1.0, 2.0, 3.0])
    x = _operand(name)
    fn = OPERATORS[op]
    seen: list[Any] = []

    def f(t: Any) -> Any:
        out = fn(a, t)
        seen.append(out)
        return fnp.where(out, 1.0, 0.0) if out.dtype == bool else out

    got = _under(name, f, x)
    assert seen and all(isinstance(o, fg.Array) and not isinstance(o, np.ndarray)
                        for o in seen)
    assert isinstance(got, fg.Array)
    # On a concrete Array the operator defers to funcgrad too.
    direct = fn(a, fnp.asarray([0.5, 1.0, 1.5]))
    assert isinstance(direct, fg.Array)
    np.testing.assert_allclose(np.asarray(direct), fn(a, np.array([0.5, 1.0, 1.5])))
    # The values, against NumPy (per batch member for vmap).
    xs = np.asarray(x)
    if name in ("jit", "vmap"):
        want = np.stack([fn(a, r) for r in xs]) if name == "vmap" else fn(a, xs)
        np.testing.assert_allclose(np.asarray(got), want.astype(np.float64))


def test_numpy_array_operator_tracer_derivatives() -> None:
    a = np.array([1.0, 2.0, 3.0])
    x = fnp.asarray([0.5, 1.0, 1.5])
    np.testing.assert_allclose(np.asarray(fg.grad(lambda t: fnp.sum(a * t))(x)), a)
    np.testing.assert_allclose(np.asarray(fg.grad(lambda t: fnp.sum(a + t * t))(x)),
                               2 * np.asarray(x))
    _, tangent = fg.jvp(lambda t: a * t + a, (x,), (fnp.ones(3),))
    np.testing.assert_allclose(np.asarray(tangent), a)
    np.testing.assert_allclose(
        np.asarray(fg.vmap(lambda t: a * t)(fnp.ones((2, 3)))), np.stack([a, a]))
