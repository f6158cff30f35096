"""JAX-face fixes compared with JAX 0.10.2 (eighteenth side-by-side review): Array operators
defer to the other operand (``NotImplemented``) as JAX's do, and refuse a list or tuple
beside ``+``/``*`` with JAX's error; ``round()`` of an Array and ``__array_namespace__``;
the ``__jax_array__`` protocol; ``jnp.array`` of Python numbers straight into the asked
dtype (an in-range ``uint32`` list, no double rounding into ``float16``); ``z ** 2`` of a
Python complex under ``jvp``/``grad``; ``fori_loop``'s bound types, ``random.split``'s
count and ``vjp``'s cotangent dtypes refused as JAX refuses them; a transformed function
returning a non-array is a ``TypeError``."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from jax_oracle import raised, same_message

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad.config import enable_x64

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        return ("raised", type(e).__mro__[[c.__module__ for c in type(e).__mro__].index(
            "builtins")].__name__, str(e).replace("jaxlib._jax.", ""))
    if isinstance(out, (str, bool, tuple)):
        return out
    return ("array", np.asarray(out).tolist(), str(np.asarray(out).dtype),
            bool(getattr(out, "weak_type", False)))


class _Reflecting:
    """An operand whose reflected operators answer (a unit type, a lazy expression...)."""

    def __radd__(self, other: Any) -> Any:
        return ("radd", type(other).__name__.replace("DynamicJaxprTracer", "tracer"))

    __rsub__ = __rmul__ = __rtruediv__ = __rfloordiv__ = __rmod__ = __rpow__ = __radd__
    __rmatmul__ = __rand__ = __ror__ = __rxor__ = __rlshift__ = __rrshift__ = __radd__
    __rdivmod__ = __radd__

    def __eq__(self, other: Any) -> Any:
        return "eq"

    __hash__ = object.__hash__


_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
        "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
        ">>": operator.rshift, "<": operator.lt, "==": operator.eq, "!=": operator.ne,
        "divmod": divmod}
_OTHERS = {"list": [1, 2], "tuple": (1, 2), "dict": {1: 2}, "set": {1}, "none": None,
           "str": "a"}


@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("other", sorted(_OTHERS))
@pytest.mark.parametrize("side", ["left", "right"])
def test_operators_with_foreign_operands_as_jax(op: str, other: str, side: str) -> None:
    def run(n: Any) -> Any:
        x = n.ones(2, n.int32)
        o = _OTHERS[other]
        return _OPS[op](x, o) if side == "left" else _OPS[op](o, x)

    assert _outcome(lambda: run(fnp)) == _outcome(lambda: run(jnp))


@pytest.mark.parametrize("op", sorted(set(_OPS) - {"<"}))
def test_reflected_operators_of_other_types_answer(op: str) -> None:
    got = _OPS[op](fnp.ones(2, fnp.int32), _Reflecting())
    if op not in ("==", "!="):
        assert got == ("radd", "ArrayImpl")
    assert _OPS[op](jnp.ones(2, jnp.int32), _Reflecting()) == got
    traced = fg.jit(lambda x: (_OPS[op](x, _Reflecting()), x)[1])
    traced(fnp.ones(2, fnp.int32))  # the tracer defers too (no error while tracing)


def test_sequence_repetition_by_an_integer_array() -> None:
    assert "ab" * fnp.int32(2) == "ab" * jnp.int32(2) == "abab"
    assert _outcome(lambda: "ab" * fnp.ones(2, fnp.int32)) == \
        _outcome(lambda: "ab" * jnp.ones(2, jnp.int32))


@pytest.mark.parametrize("ndigits", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("value", [2.567, 2.5, 3.5, -1.25, 1234.5, 0.35, 7.77])
def test_round_of_an_array_as_jax(value: float, ndigits: int | None) -> None:
    # (round with digits multiplies by the reciprocal of 10**ndigits, as XLA computes
    # JAX's jitted division by that constant)
    def run(n: Any) -> Any:
        return round(n.float32(value), ndigits) if ndigits is not None else \
            round(n.asarray(value))

    assert _outcome(lambda: run(fnp)) == _outcome(lambda: run(jnp))


def test_array_namespace() -> None:
    assert fnp.ones(2).__array_namespace__() is fnp
    assert fnp.__array_api_version__ == jnp.__array_api_version__
    same_message(lambda: fnp.ones(2).__array_namespace__(api_version="2021.12"),
                 lambda: jnp.ones(2).__array_namespace__(api_version="2021.12"))


def test_jax_array_protocol() -> None:
    class Wrapped:
        def __init__(self, n: Any) -> None:
            self.n = n

        def __jax_array__(self) -> Any:
            return self.n.asarray([1.0, 2.0])

    for call in (lambda n: n.asarray(Wrapped(n)), lambda n: n.ones(2) + Wrapped(n),
                 lambda n: Wrapped(n).__jax_array__() * 3, lambda n: n.sin(Wrapped(n))):
        assert _outcome(lambda c=call: c(fnp)) == _outcome(lambda c=call: c(jnp))


ARRAYS = {
    "uint32_max": lambda n: n.array([0, 4294967295], n.uint32),
    "uint32_asarray": lambda n: n.asarray([3000000000], dtype=n.uint32),
    "float16_once": lambda n: n.array([1 + 2 ** -11 + 2 ** -30], n.float16),
    "bfloat16_once": lambda n: n.array([1 + 2 ** -8 + 2 ** -30, 0.1], n.bfloat16),
    "big_int_to_float": lambda n: n.array([2 ** 40], n.float32),
    "floats_to_int": lambda n: n.array([3.7, -2.5], n.int32),
    "nested_mixed": lambda n: n.array([[1, 2.5], [True, 4]], n.int8),
    "uint8_overflow": lambda n: n.array([300], n.uint8),
    "int32_overflow": lambda n: n.array([2 ** 31], n.int32),
    "negative_unsigned": lambda n: n.array([-1], n.uint32),
    "complex_to_real": lambda n: n.array([1 + 2j], n.float32),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_arrays_of_python_numbers_with_a_dtype_as_jax(name: str) -> None:
    assert _outcome(lambda: ARRAYS[name](fnp)) == _outcome(lambda: ARRAYS[name](jnp))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("decimals", [1, 2, 3, -1, -2])
def test_rounding_to_decimals_bit_for_bit(dtype: str, decimals: int) -> None:
    x = np.random.default_rng(decimals + 2).uniform(-1000, 1000, 500).astype(dtype)
    np.testing.assert_array_equal(np.asarray(fnp.round(fnp.asarray(x), decimals)),
                                  np.asarray(jnp.round(jnp.asarray(x), decimals)))


@pytest.mark.parametrize("power", [2, 3])
@pytest.mark.parametrize("z", [1 + 1j, -0.5 + 2j, 3.0 + 0j])
def test_derivatives_of_integer_powers_of_a_python_complex(z: complex, power: int) -> None:
    def grad(m: Any) -> Any:
        return m.grad(lambda w: w ** power, holomorphic=True)(z)

    def jvp(m: Any) -> Any:
        return m.jvp(lambda w: w ** power, (z,), (1 + 0j,))[1]

    for call in (grad, jvp):
        ours, theirs = _outcome(lambda c=call: c(fg)), _outcome(lambda c=call: c(jax))
        assert ours[0] == "array" and ours[2:] == theirs[2:]
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


FORI = {
    "float_lower": lambda m: m.lax.fori_loop(0.0, 3, lambda i, c: c, 0),
    "float_upper": lambda m: m.lax.fori_loop(0, 3.0, lambda i, c: c, 0),
    "int_and_uint": lambda m: m.lax.fori_loop(m.numpy.uint32(0), 3, lambda i, c: c, 0),
    "two_strong_ints": lambda m: m.lax.fori_loop(m.numpy.int16(0), m.numpy.int32(3),
                                                 lambda i, c: c, 0),
    "weak_and_strong": lambda m: m.lax.fori_loop(0, m.numpy.int32(3),
                                                 lambda i, c: c + i, m.numpy.int32(0)),
    "floats": lambda m: m.lax.fori_loop(0.0, 3.0, lambda i, c: c + i, 0.0),
    "not_callable": lambda m: m.lax.fori_loop(0, 3, None, 0),
}


@pytest.mark.parametrize("name", sorted(FORI))
def test_fori_loop_bound_types_as_jax(name: str) -> None:
    assert _outcome(lambda: FORI[name](fg)) == _outcome(lambda: FORI[name](jax))


@pytest.mark.parametrize("num", [2.5, 2.0, "2", (2, 1.5), 3, (2, 2)])
def test_split_counts_as_jax(num: Any) -> None:
    def run(m: Any) -> Any:
        return m.random.split(m.random.PRNGKey(0), num)

    assert _outcome(lambda: run(fg)) == _outcome(lambda: run(jax))


COTANGENTS = {
    "int": lambda n: n.ones(2, n.int32),
    "float16": lambda n: n.ones(2, n.float16),
    "float32": lambda n: n.ones(2, n.float32),
    "numpy_float64": lambda n: np.ones(2),
    "wrong_shape": lambda n: n.ones(3),
}


@pytest.mark.parametrize("name", sorted(COTANGENTS))
@pytest.mark.parametrize("x64", [False, True])
def test_vjp_cotangent_types_as_jax(name: str, x64: bool) -> None:
    def run(m: Any, n: Any) -> Any:
        return m.vjp(lambda x: x * 2, n.ones(2, n.float32))[1](COTANGENTS[name](n))[0]

    with enable_x64(x64), jax.enable_x64(x64):
        assert _outcome(lambda: run(fg, fnp)) == _outcome(lambda: run(jax, jnp))


@pytest.mark.parametrize("where", ["jit", "grad", "make_jaxpr", "eval_shape", "vmap"])
def test_a_non_array_result_is_a_type_error(where: str) -> None:
    def run(m: Any) -> Any:
        f = (lambda x: "string") if where != "grad" else (lambda x: "string")
        return getattr(m, where)(f)(1.0 if where != "vmap" else m.numpy.ones(2))

    ours, _ = raised(lambda: run(fg))
    theirs, _ = raised(lambda: run(jax))
    assert isinstance(ours, TypeError) and isinstance(theirs, TypeError)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_rsqrt_rounds_once_as_jax(dtype: str) -> None:
    # Every positive normal value of the dtype (XLA flushes subnormals; funcgrad does not).
    import ml_dtypes  # noqa: PLC0415

    dt = np.dtype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype)
    top = 0x7F80 if dtype == "bfloat16" else 0x7C00
    x = np.arange(top, dtype=np.uint16).view(dt)
    x = x[x.astype(np.float32) >= float(ml_dtypes.finfo(dt).tiny)]
    ours = np.asarray(fg.lax.rsqrt(fnp.asarray(x))).astype(np.float32)
    theirs = np.asarray(jax.lax.rsqrt(jnp.asarray(x))).astype(np.float32)
    np.testing.assert_array_equal(ours, theirs)


def test_at_helpers_print_as_jax() -> None:
    for idx in (0, slice(1, None), (Ellipsis, 0)):
        assert repr(fnp.ones(2).at[idx]) == repr(jnp.ones(2).at[idx])
    assert repr(fnp.arange(3).at) == repr(jnp.arange(3).at)
