"""``funcgrad.nn`` activations on integer inputs, as JAX 0.10.2: the functions built on
``lax.logistic`` refuse them with JAX's TypeError, the others give JAX's dtype and weak
type (a weakly typed float where the formula meets a Python float); and the error for a
traced shape under ``jit``."""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp

pytestmark = pytest.mark.x32  # compared with JAX at its 32-bit default

NAMES = ["sigmoid", "relu", "softplus", "gelu", "silu", "swish", "log_sigmoid", "elu",
         "leaky_relu", "celu", "selu", "relu6", "hard_tanh", "hard_sigmoid", "hard_silu",
         "sparse_plus", "soft_sign", "mish", "squareplus", "glu"]


def _run(nn, jnp, name):
    x = jnp.array([-3, 1, 2, 7], dtype=jnp.int32)
    try:
        out = getattr(nn, name)(x)
    except TypeError as e:
        return ("TypeError", str(e))
    return (np.dtype(out.dtype).name, bool(getattr(out, "weak_type", False)),
            np.asarray(out).tolist())


@pytest.mark.parametrize("name", NAMES)
def test_integer_input_as_jax(name):
    jax = pytest.importorskip("jax")
    ours, theirs = _run(fg.nn, fnp, name), _run(jax.nn, jax.numpy, name)
    assert ours[:-1] == theirs[:-1] if ours[0] != "TypeError" else ours == theirs
    if ours[0] != "TypeError":
        np.testing.assert_allclose(ours[-1], theirs[-1], rtol=1e-6)


@pytest.mark.parametrize("make", [lambda n: fnp.zeros(n), lambda n: fnp.ones((n, 2)),
                                  lambda n: fnp.full((2, n), 1.0)])
def test_traced_shape_is_jaxs_type_error(make):
    with pytest.raises(TypeError, match="(?s)Shapes must be 1D sequences of concrete values "
                                        "of integer type.*static_argnums"):
        fg.jit(make)(3)


@pytest.mark.parametrize("expr", [
    "L.array([1], L.int32) + 2**40", "L.arange(3) * 3_000_000_000",
    "L.minimum(L.arange(3), 2**40)", "L.array(2**40)", "L.array(2**31)",
    "L.array([5, -5], dtype=L.uint8)", "L.asarray(300, dtype=L.uint8)", "L.array([2**40])",
    "L.array([1, 2**31])", "L.array([300], dtype=L.uint8)", "L.array([1]) + 2**31",
    "L.array([1], L.uint32) + 2**32", "L.full(2, 2**40)", "L.array([1, 2], dtype=L.int8) * 200",
    "L.array([1, 2], dtype=L.uint8) + 300", "L.array(2**31 - 1)", "L.array(-2**31)",
    "L.array([1.5]) + 2**40", "2**40 * L.array([1.5])", "L.array([1.5]) + (2**31 - 1)",
    "L.array([1.5]) * -2**31", "L.array([1.5]) - 2**31", "L.array([1.5]) * 2**64",
])
def test_python_int_ranges_as_jax(expr):
    """A Python int must fit the default integer type (int32 here) as JAX requires
    (OverflowError), then wraps into a narrower array type; creation with a dtype refuses
    out-of-range values as NumPy does."""
    jax = pytest.importorskip("jax")

    def run(L):
        try:
            out = eval(expr, {"L": L})
        except OverflowError:
            return "OverflowError"
        return np.asarray(out).tolist(), np.dtype(out.dtype).name

    assert run(fnp) == run(jax.numpy)
