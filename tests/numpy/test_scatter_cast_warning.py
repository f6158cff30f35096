"""``x.at[...]`` updates with values JAX's promotion would not cast safely to ``x``'s dtype
warn with JAX's FutureWarning (and still cast, as JAX does); a Python complex value on a
real array is cast with NumPy's ComplexWarning (before: a bare TypeError from NumPy); a
float16 value cast to a wider integer type raises no stray overflow warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad.numpy as fnp

DTYPES = ["bool", "int8", "int32", "uint8", "bfloat16", "float16", "float32", "complex64"]
VALUES = {
    "py_int": lambda jnp: 2,
    "py_big_int": lambda jnp: 300,
    "py_float": lambda jnp: 1.5,
    "py_complex": lambda jnp: 1 + 2j,
    "py_bool": lambda jnp: True,
    "int32": lambda jnp: jnp.int32(3),
    "float32": lambda jnp: jnp.float32(1.25),
    "float16_array": lambda jnp: jnp.ones(2, jnp.float16),
}
METHODS = ["set", "add", "max"]


def _run(jnp, dtype, value, method):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        x = jnp.zeros(4, getattr(jnp, dtype) if dtype != "bool" else bool)
        if method == "max" and dtype.startswith("complex"):
            return None
        r = getattr(x.at[np.array([0, 2])], method)(VALUES[value](jnp))
    msgs = sorted(f"{w.category.__name__}: {w.message}" for w in seen)
    return str(r.dtype), np.asarray(r).astype(np.float64 if dtype != "complex64"
                                               else np.complex128).tolist(), msgs


@pytest.mark.x32
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_warnings_and_values_match_jax(dtype, value, method):
    jax = pytest.importorskip("jax")
    if dtype == "bool" and method == "add":
        pytest.skip("bool .at[].add is a logical OR here, refused by JAX (docs/sharp_bits.md)")
    assert _run(fnp, dtype, value, method) == _run(jax.numpy, dtype, value, method)


@pytest.mark.x32
def test_known_cases_without_jax():
    with pytest.warns(FutureWarning, match="cannot safely cast value from dtype=float32 to "
                      "dtype=int32 with jax_numpy_dtype_promotion=standard"):
        r = fnp.arange(4).at[1].set(1.5)
    assert r.tolist() == [0, 1, 2, 3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fnp.zeros(3, fnp.int8).at[0].set(300).tolist() == [44, 0, 0]
        assert fnp.zeros(3, fnp.float32).at[0].set(1.1).dtype == np.float32
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        r = fnp.zeros(2, fnp.float32).at[0].set(1 + 2j)
    assert r.tolist() == [1.0, 0.0]
