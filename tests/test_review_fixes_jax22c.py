"""JAX-face fixes compared with JAX 0.10.2: the texts of the tracer-concretization errors
(TracerBoolConversionError, TracerIntegerConversionError, ConcretizationTypeError,
TracerArrayConversionError, and the TypeError of a shape built from a traced value) are
JAX's, provenance lines included (the function being traced, for what, and the arguments
the value depends on; where a vmap tracer was made), under jit, make_jaxpr, vmap, grad and
the staged bodies of cond, switch, while_loop, scan and fori_loop."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad as fg

jax = pytest.importorskip("jax")

pytestmark = pytest.mark.x32


def _bool(x: Any) -> Any:
    return x if x > 0 else -x


def _int(x: Any) -> Any:
    return int(x)


def _range(n: Any) -> Any:
    total = 0
    for i in range(n):
        total += i
    return total


# Each case builds the same program from either library (so the traced functions are the
# same Python functions, at the same lines, in both).
CASES: dict[str, Callable[[Any], Any]] = {
    "jit_bool_lambda": lambda lib: lib.jit(lambda x: x if x > 0 else -x)(1.0),
    "jit_bool": lambda lib: lib.jit(_bool)(1.0),
    "jit_bool_second_arg": lambda lib: lib.jit(lambda x, y: x if y > 0 else -x)(1.0, 2.0),
    "jit_bool_static": lambda lib: lib.jit(lambda x, y: x if y > 0 else -x,
                                           static_argnums=0)(1.0, 2.0),
    "jit_bool_pytree": lambda lib: lib.jit(lambda d: d["a"] > 0 and 1)({"a": 1.0}),
    "jit_bool_two_args": lambda lib: lib.jit(lambda x, y: (x + y) > 0 and 1)(1.0, 2.0),
    "jit_bool_three_args": lambda lib: lib.jit(
        lambda x, y, z: (x + y + z) > 0 and 1)(1.0, 2.0, 3.0),
    "jit_bool_star": lambda lib: lib.jit(lambda *a: a[1] > 0 and 1)(1.0, 2.0),
    "jit_bool_keyword": lambda lib: lib.jit(lambda x, y=1.0: y > 0 and 1)(1.0, y=2.0),
    "jit_bool_vector": lambda lib: lib.jit(_bool)(lib.numpy.ones(3)),
    "jit_bool_empty": lambda lib: lib.jit(lambda x: bool(x))(lib.numpy.ones(0)),
    "jit_zeros": lambda lib: lib.jit(lambda n: lib.numpy.zeros(n))(3),
    "jit_ones_tuple": lambda lib: lib.jit(lambda n: lib.numpy.ones((n,)))(3),
    "jit_full": lambda lib: lib.jit(lambda n: lib.numpy.full((2, n), 1.0))(3),
    "jit_reshape": lambda lib: lib.jit(lambda x, n: x.reshape(n, 1))(lib.numpy.ones(3), 3),
    "jit_range": lambda lib: lib.jit(_range)(3),
    "jit_index": lambda lib: lib.jit(lambda x, i: x[[1, 2][i]])(lib.numpy.ones(3), 1),
    "jit_index_float": lambda lib: lib.jit(lambda x: [1, 2][x])(1.0),
    "jit_int": lambda lib: lib.jit(_int)(3.0),
    "jit_int_vector": lambda lib: lib.jit(_int)(lib.numpy.ones(2)),
    "jit_float_keyword": lambda lib: lib.jit(lambda x: float(x))(x=1.0),
    "jit_complex": lambda lib: lib.jit(lambda x: complex(x))(1.0),
    "jit_item": lambda lib: lib.jit(lambda x: x.item())(1.0),
    "jit_tolist": lambda lib: lib.jit(lambda x: x.tolist())(lib.numpy.ones(2)),
    "jit_asarray": lambda lib: lib.jit(lambda x: np.asarray(x))(lib.numpy.ones(3)),
    "jit_np_sin": lambda lib: lib.jit(lambda x: np.sin(x))(lib.numpy.ones(2)),
    "jit_nested": lambda lib: lib.jit(lambda x: lib.jit(_bool)(x * 2))(1.0),
    "make_jaxpr": lambda lib: lib.make_jaxpr(_bool)(1.0),
    "grad_asarray": lambda lib: lib.grad(lambda x: np.asarray(x).sum())(1.0),
    "vmap_bool": lambda lib: lib.vmap(_bool)(lib.numpy.ones(3)),
    "vmap_int": lambda lib: lib.vmap(_int)(lib.numpy.ones(3)),
    "vmap_asarray": lambda lib: lib.vmap(lambda x: np.asarray(x))(lib.numpy.ones(3)),
    "cond_bool": lambda lib: lib.lax.cond(True, _bool, _bool, 1.0),
    "cond_int": lambda lib: lib.lax.cond(True, _int, _int, 1.0),
    "switch_bool": lambda lib: lib.lax.switch(0, [_bool, _bool], 1.0),
    "while_body": lambda lib: lib.lax.while_loop(lambda c: c < 3, _bool, 1.0),
    "while_cond": lambda lib: lib.lax.while_loop(lambda c: bool(c < 3), lambda c: c + 1, 1.0),
    "scan_body": lambda lib: lib.lax.scan(lambda c, x: (c if x > 0 else c, x), 0.0,
                                          lib.numpy.ones(3)),
    "fori_body": lambda lib: lib.lax.fori_loop(0, 3, lambda i, c: c if c > 0 else c, 1.0),
}


def _outcome(lib: Any, name: str) -> tuple[Any, ...]:
    try:
        out = CASES[name](lib)
    except Exception as e:  # noqa: BLE001 - compared between the two libraries
        # (a vmap tracer's text names its object id)
        return (type(e).__name__, isinstance(e, TypeError), isinstance(e, ValueError),
                re.sub(r"object id \d+", "object id N", str(e)))
    return ("ok", repr(out))


@pytest.mark.parametrize("name", sorted(CASES))
def test_tracer_error_texts_as_jax(name: str) -> None:
    assert _outcome(fg, name) == _outcome(jax, name)


def test_origin_lines_name_the_function_and_argument() -> None:
    with pytest.raises(fg.errors.TracerBoolConversionError) as info:
        fg.jit(_bool)(1.0)
    text = str(info.value).split("\n")
    assert text[0] == "Attempted boolean conversion of traced array with shape bool[]."
    assert text[1] == (
        f"The error occurred while tracing the function _bool at {__file__}:"
        f"{_bool.__code__.co_firstlineno} for jit. This concrete value was not available in "
        "Python because it depends on the value of the argument x.")
    assert text[2] == ("See https://docs.jax.dev/en/latest/errors.html"
                       "#jax.errors.TracerBoolConversionError")
