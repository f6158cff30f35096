"""Type promotion of the JAX face against JAX's own table.

``tests/data/jax_promotion.json`` was written by ``scripts/gen_jax_promotion_table.py``
from jax.numpy (its version is recorded in the file): ``promote_types`` for every pair of
dtypes and Python types, ``result_type`` with weak types, and the dtype and weak type of
``a + b`` on real arrays, in both 64-bit modes. Where jax is installed (the ``compat``
extra) the same questions are also asked of it live.
"""

from __future__ import annotations

import json
import pathlib
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import dtypes
from funcgrad.config import enable_x64

TABLE = json.loads((pathlib.Path(__file__).parents[1] / "data" / "jax_promotion.json")
                   .read_text())
PY = {"py_bool": bool, "py_int": int, "py_float": float, "py_complex": complex}
PY_VALUES = {"py_int": 1, "py_float": 1.5, "py_complex": 1j, "py_bool": True}
WEAK = {"int*": 1, "float*": 1.5, "complex*": 1j}
MODES = [pytest.param(False, id="x32"), pytest.param(True, id="x64")]


def _dtype(name: str) -> Any:
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def _operand(name: str) -> Any:
    """The funcgrad operand a table key names (made with 64-bit mode as it is now)."""
    if name in PY:
        return PY[name]
    if name in WEAK:
        return fnp.asarray(WEAK[name])
    return fnp.ones((), _dtype(name))


def _mode(x64: bool) -> dict[str, Any]:
    return TABLE["modes"]["x64" if x64 else "x32"]


@pytest.mark.parametrize("x64", MODES)
def test_promote_types_equals_jax_for_every_pair(x64: bool) -> None:
    bad = []
    with enable_x64(x64):
        for key, want in _mode(x64)["promote_types"].items():
            a, b = key.split(",")
            got = fnp.promote_types(PY.get(a, _dtype(a) if a not in PY else None),
                                    PY.get(b, _dtype(b) if b not in PY else None))
            if str(got) != want:
                bad.append(f"{key}: {got} != {want}")
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("x64", MODES)
def test_result_type_with_weak_types_equals_jax(x64: bool) -> None:
    bad = []
    with enable_x64(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, (want, want_weak) in _mode(x64)["result_type"].items():
            a, b = key.split(",")
            got = dtypes.result_type(_operand(a), _operand(b), return_weak_type_flag=True)
            if (str(got[0]), got[1]) != (want, want_weak):
                bad.append(f"{key}: {got} != {(want, want_weak)}")
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("x64", MODES)
def test_add_of_arrays_and_scalars_equals_jax(x64: bool) -> None:
    """End to end: the dtype and weak type of ``a + b`` (the numpy layer's promotion
    inserts convert_element_type; the result carries its weak type)."""
    bad = []
    with enable_x64(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key, (want, want_weak) in _mode(x64)["add"].items():
            a, b = key.split(",")
            y = PY_VALUES[b] if b in PY_VALUES else _operand(b)
            r = fnp.add(_operand(a), y)
            if (str(r.dtype), r.weak_type) != (want, want_weak):
                bad.append(f"{key}: {(r.dtype, r.weak_type)} != {(want, want_weak)}")
    assert not bad, "\n".join(bad[:20])


@pytest.mark.x32
def test_default_32_bit_mode_as_in_jax() -> None:
    assert fnp.zeros(2).dtype == np.float32 and fnp.arange(3).dtype == np.int32
    assert fnp.asarray(np.ones(2)).dtype == np.float32  # float64 input is truncated
    x = fnp.asarray(2.0)
    assert x.dtype == np.float32 and x.weak_type
    assert (fnp.arange(3) * 2.0).dtype == np.float32
    with pytest.warns(UserWarning, match="float64 requested in zeros is not available"):
        assert fnp.zeros(2, dtype=np.float64).dtype == np.float32
    with enable_x64():
        assert fnp.zeros(2).dtype == np.float64 and fnp.arange(3).dtype == np.int64
    assert not fg.config.jax_enable_x64


@pytest.mark.x32
def test_config_update_spellings() -> None:
    try:
        fg.config.update("jax_enable_x64", True)
        assert fnp.ones(1).dtype == np.float64
        fg.config.update("enable_x64", False)
        assert fnp.ones(1).dtype == np.float32
    finally:
        fg.config.update("jax_enable_x64", False)
    with fg.experimental.enable_x64():
        assert fg.config.jax_enable_x64
    with pytest.raises(AttributeError, match="unknown config option"):
        fg.config.update("jax_no_such_flag", 1)


@pytest.mark.x32
def test_weak_scalar_keeps_the_array_dtype_in_staged_programs() -> None:
    text = str(fg.make_jaxpr(lambda x: x * 2.0 + 1)(fnp.ones(3, np.float16)))
    assert "convert_element_type" not in text and "f16[3]" in text
    text = str(fg.make_jaxpr(lambda x: x * 2.0)(fnp.arange(3)))
    assert "convert_element_type[new_dtype=float32 weak_type=True]" in text


def test_python_int_out_of_range_for_a_small_int_wraps_as_jax() -> None:
    # JAX 0.10 converts the weak int into the array's type, wrapping (NumPy 2 would raise).
    assert fnp.add(fnp.ones(2, np.uint8), 300).tolist() == [45, 45]
    assert fnp.maximum(fnp.ones(2, np.int8), 200).tolist() == [1, 1]
    jnp = pytest.importorskip("jax.numpy")
    assert np.asarray(jnp.add(jnp.ones(2, np.uint8), 300)).tolist() == [45, 45]
    assert np.asarray(jnp.maximum(jnp.ones(2, np.int8), 200)).tolist() == [1, 1]


@pytest.mark.parametrize("x64", MODES)
def test_live_against_jax(x64: bool) -> None:
    """The same table, asked of the installed jax (skips without the compat extra)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp  # noqa: PLC0415

    prev = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        with enable_x64(x64), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            names = [*_mode(x64)["promote_types"]]
            for key in names[::7]:
                a, b = key.split(",")
                ja, jb = PY.get(a, a), PY.get(b, b)
                assert str(jnp.promote_types(ja, jb)) == str(
                    fnp.promote_types(PY.get(a, _dtype(a) if a not in PY else None),
                                      PY.get(b, _dtype(b) if b not in PY else None))), key
    finally:
        jax.config.update("jax_enable_x64", prev)
