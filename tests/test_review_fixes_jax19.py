"""JAX-face fixes compared with JAX 0.10.2 (nineteenth side-by-side review): the carry
errors of ``scan``, ``while_loop`` and ``fori_loop`` (structure and type differences, the
carry named by the body's parameter, JAX's texts), the IndexError of a slice with traced
bounds, ``eval_shape`` and ``ShapeDtypeStruct`` of typed keys, the text of a traced key,
and ``live_arrays``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.x32


def _outcome(call: Callable[[], Any]) -> Any:
    """Whether the error is a TypeError or an IndexError (funcgrad's named errors derive
    from those JAX raises, and from others), and the message (JAX's internal ShapedArray
    class path read as funcgrad's); or the result's text."""
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        return ("raised", isinstance(e, TypeError), isinstance(e, IndexError),
                str(e).replace("jax._src.core.ShapedArray", "funcgrad.ir.ShapedArray"))
    return ("ok", repr(out))


def _same(make: Callable[[Any, Any], Callable[[], Any]]) -> None:
    assert _outcome(make(fg, fnp)) == _outcome(make(jax, jnp))


LOOPS: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    "scan_dtype": lambda j, n: lambda: j.lax.scan(
        lambda c, x: (c.astype(n.int32), x), 0.0, n.arange(5.0)),
    "scan_shape": lambda j, n: lambda: j.lax.scan(
        lambda c, x: (n.stack([c, c]), x), 0.0, n.arange(5.0)),
    "scan_shape_and_dtype": lambda j, n: lambda: j.lax.scan(
        lambda c, x: (n.stack([c, c]).astype(n.int32), x), 0.0, n.arange(5.0)),
    "scan_component": lambda j, n: lambda: j.lax.scan(
        lambda c, x: ((c[0], c[1].astype(n.int32)), x), (0.0, 1.0), n.arange(5.0)),
    "scan_two_components": lambda j, n: lambda: j.lax.scan(
        lambda carry, x: ((carry[0].astype(n.int32), n.ones(2)), x), (0.0, 1.0),
        n.arange(5.0)),
    "scan_structure": lambda j, n: lambda: j.lax.scan(
        lambda c, x: ((c, c), x), 0.0, n.arange(5.0)),
    "scan_dict_keys": lambda j, n: lambda: j.lax.scan(
        lambda c, x: ({"b": c["a"]}, x), {"a": 0.0}, n.arange(5.0)),
    "scan_list_length": lambda j, n: lambda: j.lax.scan(
        lambda c, x: ([c[0]], x), [0.0, 1.0], n.arange(5.0)),
    "scan_weak_promotes": lambda j, n: lambda: j.lax.scan(
        lambda c, x: (c + x, x), 0, n.arange(3.0))[0],
    "while_shape": lambda j, n: lambda: j.lax.while_loop(
        lambda c: c < 3, lambda c: n.stack([c, c]), 0.0),
    "while_structure": lambda j, n: lambda: j.lax.while_loop(
        lambda c: True, lambda c: (c, c), 0.0),
    "while_varargs_length": lambda j, n: lambda: j.lax.while_loop(
        lambda c: True, lambda *c: c, (0.0, 1)),
    "while_dtype_component": lambda j, n: lambda: j.lax.while_loop(
        lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1].astype(n.int32)), (0, 1.0)),
    "while_weak_ok": lambda j, n: lambda: j.lax.while_loop(
        lambda c: c < 3, lambda c: c + 1.0, 0),
    "fori_structure": lambda j, n: lambda: j.lax.fori_loop(
        0, 3, lambda i, c: (c, c), 0.0),
    "fori_dtype": lambda j, n: lambda: j.lax.fori_loop(
        0, 3, lambda i, c: c.astype(n.int32), 0.0),
    "fori_traced_dtype": lambda j, n: lambda: j.jit(lambda m: j.lax.fori_loop(
        0, m, lambda i, c: c.astype(n.int32), 0.0))(3),
    "fori_traced_structure": lambda j, n: lambda: j.jit(lambda m: j.lax.fori_loop(
        0, m, lambda i, c: (c, c), 0.0))(3),
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_loop_carry_errors_as_jax(name: str) -> None:
    _same(LOOPS[name])


SLICES: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    "start_and_stop": lambda j, n: lambda: j.jit(lambda x, i: x[i:i + 2])(n.arange(5.0), 1),
    "after_ellipsis": lambda j, n: lambda: j.jit(lambda x, i: x[..., i:3])(n.arange(5.0), 1),
    "after_newaxis": lambda j, n: lambda: j.jit(lambda x, i: x[None, i:])(n.arange(5.0), 1),
    "step": lambda j, n: lambda: j.jit(lambda x, i: x[::i])(n.arange(5.0), 2),
    "second_axis": lambda j, n: lambda: j.jit(lambda x, i: x[0, :i])(n.ones((2, 3)), 1),
    "at_set": lambda j, n: lambda: j.jit(lambda x, i: x.at[i:].set(0.0))(n.arange(5.0), 1),
    "concrete_array_bound": lambda j, n: lambda: n.arange(5.0)[n.array(1):3],
}


@pytest.mark.parametrize("name", sorted(SLICES))
def test_traced_slice_bounds_are_an_index_error_as_jax(name: str) -> None:
    _same(SLICES[name])


KEYS: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    "eval_shape_key_out": lambda j, n: lambda: j.eval_shape(lambda: j.random.key(0)),
    "eval_shape_split": lambda j, n: lambda: j.eval_shape(
        lambda k: j.random.split(k, 3), j.random.key(0)),
    "eval_shape_struct_in": lambda j, n: lambda: j.eval_shape(
        lambda k: j.random.normal(k, (2,)), j.ShapeDtypeStruct((), j.random.key(0).dtype)),
    "eval_shape_struct_batch": lambda j, n: lambda: j.eval_shape(
        lambda k: (j.random.split(k[0]), j.random.uniform(k[1])),
        j.ShapeDtypeStruct((4,), j.random.key(0).dtype)),
    "struct_of_keys": lambda j, n: lambda: j.ShapeDtypeStruct((2,), j.random.key(0).dtype),
}


@pytest.mark.parametrize("name", sorted(KEYS))
def test_key_shapes_as_jax(name: str) -> None:
    _same(KEYS[name])


@pytest.mark.parametrize("how", ["jit", "vmap"])
def test_a_traced_key_prints_as_jax(how: str, capsys: Any) -> None:
    def run(j: Any) -> str:
        def f(k: Any) -> Any:
            print(repr(k))
            return j.random.key_data(k)
        keys = j.random.split(j.random.key(0), 2)
        if how == "jit":
            j.jit(f)(keys)
        else:
            j.vmap(f)(keys)
        return capsys.readouterr().out
    assert run(fg) == run(jax)


def test_live_arrays_finds_the_arrays_alive() -> None:
    x = fnp.arange(7.0)
    found = fg.live_arrays()
    assert any(a is x for a in found)
    assert all(isinstance(a, fg.Array) for a in found)
    assert any(a is x for a in fg.live_arrays("cpu"))
    assert not any(a is x for a in fg.live_arrays("gpu"))
    ids = {id(a) for a in found}
    y = fnp.ones(3) * 2
    assert id(y) not in ids and any(a is y for a in fg.live_arrays())
    assert type(jax.live_arrays()) is type(fg.live_arrays())
    np.testing.assert_array_equal(np.asarray(x), np.arange(7.0))


def _described(out: Any) -> Any:
    """A result's leaves as (type, value, dtype, weak type): a Python number stays one."""
    def leaf(v: Any) -> Any:
        if isinstance(v, (int, float)):
            return (type(v).__name__, v)
        return ("array", np.asarray(v).tolist(), str(np.asarray(v).dtype),
                bool(getattr(v, "weak_type", False)))
    if isinstance(out, tuple):
        return tuple(_described(o) for o in out)
    return leaf(out)


UNJITTED: dict[str, Callable[[Any, Any], Any]] = {
    "scan": lambda j, n: j.lax.scan(lambda c, x: (c + x, c), 0.0, n.arange(3.0)),
    "scan_reverse": lambda j, n: j.lax.scan(lambda c, x: (c * 2 + x, x), 1, n.arange(3.0),
                                            reverse=True),
    "scan_zero_length": lambda j, n: j.lax.scan(lambda c, x: (c, x), 0.0, n.zeros(0)),
    "fori_static": lambda j, n: j.lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0),
    "fori_empty": lambda j, n: j.lax.fori_loop(2, 2, lambda i, c: c + 1.0, 5.0),
    "cond_true": lambda j, n: j.lax.cond(True, lambda x: x * 2.0, lambda x: -x, 3.0),
    "cond_array_pred": lambda j, n: j.lax.cond(n.array(False), lambda x: x * 2.0,
                                               lambda x: -x, 3.0),
    "switch": lambda j, n: j.lax.switch(5, [lambda x: x, lambda x: x * 10], 2.0),
    "while": lambda j, n: j.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0.0),
    "map": lambda j, n: j.lax.map(lambda v: v * 2, n.arange(3)),
}


@pytest.mark.parametrize("name", sorted(UNJITTED))
def test_control_flow_under_disable_jit_runs_python_as_jax(name: str) -> None:
    def run(j: Any, n: Any) -> Any:
        with j.disable_jit():
            try:
                return _described(UNJITTED[name](j, n))
            except Exception as e:  # noqa: BLE001 - compared between the two libraries
                return type(e).__name__, str(e)
    assert run(fg, fnp) == run(jax, jnp)


def test_disable_jit_control_flow_under_vmap_falls_back_to_the_primitives() -> None:
    def run(j: Any, n: Any) -> Any:
        with j.disable_jit():
            out = j.vmap(lambda v: j.lax.while_loop(lambda c: c < v, lambda c: c + 1.0, 0.0))(
                n.arange(4.0))
            out2 = j.vmap(lambda p, v: j.lax.cond(p, lambda: v, lambda: -v))(
                n.array([True, False]), n.array([1.0, 2.0]))
        return np.asarray(out).tolist(), np.asarray(out2).tolist()
    assert run(fg, fnp) == run(jax, jnp)


@pytest.mark.parametrize("seed", range(4))
def test_slogdet_qr_as_jax(seed: int) -> None:
    a = np.random.RandomState(seed).randn(3, 4, 4)
    ours = fnp.linalg.slogdet(a.astype(np.float32), method="qr")
    theirs = jnp.linalg.slogdet(a.astype(np.float32), method="qr")
    np.testing.assert_array_equal(np.asarray(ours.sign), np.asarray(theirs.sign))
    np.testing.assert_allclose(np.asarray(ours.logabsdet), np.asarray(theirs.logabsdet),
                               rtol=2e-5, atol=2e-5)
    g = fg.grad(lambda m: fnp.linalg.slogdet(m, method="qr")[1].sum())(a[0].astype(np.float32))
    h = jax.grad(lambda m: jnp.linalg.slogdet(m, method="qr")[1].sum())(a[0].astype(np.float32))
    np.testing.assert_allclose(np.asarray(g), np.asarray(h), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("method", ["xx", "cholesky"])
def test_slogdet_unknown_method_as_jax(method: str) -> None:
    _same(lambda j, n: lambda: n.linalg.slogdet(n.eye(2), method=method))


def test_slogdet_qr_of_complex_is_refused_as_jax() -> None:
    _same(lambda j, n: lambda: n.linalg.slogdet(n.eye(2, dtype=n.complex64), method="qr"))


@pytest.mark.parametrize("decimals", [1, 2, 3, -1, -2])
def test_bfloat16_round_with_decimals_bit_for_bit_as_jax(decimals: int) -> None:
    # Every finite bfloat16, both signs: XLA's CPU computes the quotient in float32.
    import ml_dtypes

    bits = np.arange(0, 0x7F80, dtype=np.uint16)
    x = bits.view(ml_dtypes.bfloat16)
    x = np.concatenate([x, -x])
    ours = np.asarray(fnp.round(fnp.asarray(x), decimals)).view(np.uint16)
    theirs = np.asarray(jnp.round(jnp.asarray(x), decimals)).view(np.uint16)
    np.testing.assert_array_equal(ours, theirs)


ERRORS: dict[str, Callable[[Any, Any], Callable[[], Any]]] = {
    "concretization": lambda j, n: lambda: j.jit(lambda x: int(x))(n.ones(())),
    "bool_conversion": lambda j, n: lambda: j.jit(lambda x: bool(x))(n.ones(())),
    "array_conversion": lambda j, n: lambda: j.jit(lambda x: np.asarray(x))(n.ones(2)),
    "boolean_index": lambda j, n: lambda: j.jit(lambda x: x[x > 0])(n.ones(2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_tracer_errors_derive_from_jaxs_bases(name: str) -> None:
    def bases(j: Any, n: Any) -> tuple[bool, bool]:
        try:
            ERRORS[name](j, n)()
        except Exception as e:  # noqa: BLE001 - classified below
            return (isinstance(e, j.errors.JAXTypeError), isinstance(e, j.errors.JAXIndexError))
        return (False, False)
    assert bases(fg, fnp) == bases(jax, jnp)


PRINTS: dict[str, Callable[[Any, Any], Any]] = {
    "unused_positional": lambda j, x: j.debug.print("x =", x),
    "unused_numbers": lambda j, x: j.debug.print("a", 1, 2.5),
    "unused_keyword": lambda j, x: j.debug.print("{x}", x=x, y=x),
    "one_unused_of_two": lambda j, x: j.debug.print("{}", x, x),
    "under_jit": lambda j, x: j.jit(lambda v: j.debug.print("v", v))(x),
    "first_piece_literal": lambda j, x: j.debug.print("{{}} {}", x),
    "no_arguments": lambda j, x: j.debug.print("plain {{text}}"),
    "two_call_form": lambda j, x: j.debug.print(ordered=True)("{} !", x),
    "two_call_form_with_args": lambda j, x: j.debug.print(None, x),
    "skip_check": lambda j, x: j.debug.print("v", x, skip_format_check=True),
    "placeholders_later": lambda j, x: j.debug.print("{:.1f} and {}", 0.25, x),
}


@pytest.mark.parametrize("name", sorted(PRINTS))
def test_debug_print_formats_and_checks_as_jax(name: str, capsys: Any) -> None:
    def run(j: Any, n: Any) -> Any:
        try:
            PRINTS[name](j, n.arange(2.0))
            j.effects_barrier()
            out = ("ok", capsys.readouterr().out)
        except Exception as e:  # noqa: BLE001 - compared between the two libraries
            out = (type(e).__name__, str(e))
        return out
    assert run(fg, fnp) == run(jax, jnp)


def test_debug_log_goes_through_logging_at_the_calling_line() -> None:
    import logging

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    def run(j: Any, n: Any, logger: str) -> list[tuple[Any, ...]]:
        records.clear()
        handler = Keep(level=logging.INFO)
        log = logging.getLogger(logger)
        log.addHandler(handler)
        old = log.level
        log.setLevel(logging.INFO)
        try:
            j.debug.log("x={}", n.arange(2.0))  # the line the record names
            j.jit(lambda v: j.debug.log("y={y}", y=v * 2))(n.ones(1))
            j.effects_barrier()
        finally:
            log.removeHandler(handler)
            log.setLevel(old)
        return [(r.getMessage(), r.levelno, r.pathname == __file__) for r in records]

    ours = run(fg, fnp, "funcgrad.debug")
    assert ours == run(jax, jnp, "jax._src.debugging")
    assert ours[0][0] == "x=[0. 1.]"


# ---------------------------------------------------------------- the twentieth review

WEAK: dict[str, Callable[[Any, Any], Any]] = {
    "repeat_int": lambda j, n: n.repeat(3, 2),
    "repeat_float": lambda j, n: n.repeat(3.0, 2),
    "tile": lambda j, n: n.tile(3.0, 2),
    "tile_2d": lambda j, n: n.tile(3, (2, 2)),
    "repeat_then_int8": lambda j, n: n.repeat(3, 2) + n.ones(2, n.int8),
    "reshape": lambda j, n: n.reshape(3.0, (1,)),
    "broadcast_to": lambda j, n: n.broadcast_to(3.0, (2,)),
    "expand_dims": lambda j, n: n.expand_dims(3.0, 0),
    "ravel": lambda j, n: n.ravel(3.0),
    "atleast_1d": lambda j, n: n.atleast_1d(3.0),
    "flip": lambda j, n: n.flip(3.0),
    "roll": lambda j, n: n.roll(3.0, 1),
    "hstack": lambda j, n: n.hstack([1.0, 2.0]),
    "broadcast_arrays": lambda j, n: n.broadcast_arrays(1.0, n.ones(2))[0],
    "lax_complex": lambda j, n: j.lax.complex(1.0, 2.0),
    "lax_complex_mixed": lambda j, n: j.lax.complex(n.float32(1.0), 2.0),
    "repeat_of_array": lambda j, n: n.repeat(n.array(3.0), 2),
}


@pytest.mark.parametrize("name", sorted(WEAK))
def test_python_numbers_stay_weak_as_jax(name: str) -> None:
    _same(lambda j, n: lambda: WEAK[name](j, n))


CONVERSIONS: dict[str, Callable[[Any, Any], Any]] = {
    "range": lambda j, n: n.array(range(4)),
    "asarray_range": lambda j, n: n.asarray(range(3)),
    "nested_ranges": lambda j, n: n.array([range(2), range(2)]),
    "memoryview": lambda j, n: n.array(memoryview(b"\x01\x02")),
    "none": lambda j, n: n.array(None),
    "string": lambda j, n: n.array("abc"),
    "dict": lambda j, n: n.array({1: 2}),
    "set": lambda j, n: n.asarray({1}),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_array_conversions_as_jax(name: str) -> None:
    _same(lambda j, n: lambda: CONVERSIONS[name](j, n))


@pytest.mark.parametrize("returned", ["float64", "int64", "float32"])
def test_pure_callback_results_are_canonicalized_as_jax(returned: str) -> None:
    def run(j: Any, n: Any) -> Any:
        want = n.int32 if returned != "float64" else n.float32
        f = j.jit(lambda x: j.pure_callback(lambda v: np.ones(3, returned),
                                            j.ShapeDtypeStruct((3,), want), x))
        try:
            return ("ok", repr(f(1.0)))
        except Exception as e:  # noqa: BLE001 - whether it raised is compared
            return ("raised", isinstance(e, Exception))
    assert run(fg, fnp) == run(jax, jnp)


def test_descending_sort_orders_equal_values_as_jax() -> None:
    x = np.array([0.0, -0.0, 1.0, -1.0, np.nan, 0.0, -0.0], np.float32)
    ours = np.asarray(fnp.sort(x, descending=True))
    theirs = np.asarray(jnp.sort(x, descending=True))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))
    np.testing.assert_array_equal(ours, theirs)


def test_prng_key_is_an_extended_dtype_as_jax() -> None:
    for a, b in [("prng_key", "extended"), ("extended", "prng_key"), ("extended", "extended")]:
        assert fg.dtypes.issubdtype(getattr(fg.dtypes, a), getattr(fg.dtypes, b)) == \
            jax.dtypes.issubdtype(getattr(jax.dtypes, a), getattr(jax.dtypes, b))
