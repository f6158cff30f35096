"""funcgrad.numpy details compared with JAX 0.10.2: a Python list or tuple as the array
argument of ufuncs and reductions is a TypeError with JAX's text; ``linspace`` rounds as
JAX's (XLA's) arithmetic; ``max``/``min``/``ptp``/``nanmax``/``nanmin`` of a weakly typed
operand are strongly typed; ``jnp.fix`` is gone (JAX 0.10.2 removed it)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.numpy as fnp
from tests.numpy._compare import assert_same

jax = pytest.importorskip("jax")
jnp = jax.numpy

pytestmark = pytest.mark.usefixtures("jax_x64")

# Both modes: x32 runs funcgrad and JAX at the 32-bit default, x64 both in 64-bit mode.
MODES = [pytest.param(False, marks=pytest.mark.x32, id="x32"), pytest.param(True, id="x64")]


def _outcome(f: Any, mod: Any) -> Any:
    try:
        return f(mod), None
    except Exception as e:  # noqa: BLE001 - the error is part of the comparison
        return None, e


def _same_error(f: Any) -> None:
    theirs, t_err = _outcome(f, jnp)
    ours, o_err = _outcome(f, fnp)
    assert t_err is not None and o_err is not None, (theirs, ours)
    assert type(o_err) is type(t_err) and str(o_err) == str(t_err), (o_err, t_err)


# --- lists and tuples as array arguments -------------------------------------------------

UNARY = ["sin", "exp", "log", "sqrt", "abs", "negative", "floor", "ceil", "tanh", "isnan",
         "sign", "square", "trunc", "arccos", "expm1", "logical_not"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "power", "arctan2",
          "logaddexp", "equal", "less", "hypot", "fmod", "divmod"]
REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "ptp",
              "argmax", "argmin", "all", "any", "cumsum"]


@pytest.mark.parametrize("name", UNARY + REDUCTIONS)
@pytest.mark.parametrize("seq", [[1.0, 2.0, 3.0], (1, 2)], ids=["list", "tuple"])
def test_sequence_as_array_argument_is_a_type_error_as_jax(name, seq):
    _same_error(lambda m: getattr(m, name)(seq))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("first", [True, False])
def test_sequence_as_binary_operand_is_a_type_error_as_jax(name, first):
    args = ([1.0, 2.0], 1.0) if first else (1.0, [1.0, 2.0])
    _same_error(lambda m: getattr(m, name)(*args))


@pytest.mark.parametrize("call", [
    lambda m: m.clip([1.0, 2.0], 0.0, 1.0),
    lambda m: m.unwrap([0.0, 6.0]),
    lambda m: m.linspace([0.0, 1.0], 2.0),
    lambda m: m.linspace(0.0, (1.0, 2.0)),
], ids=["clip", "unwrap", "linspace_start", "linspace_stop"])
def test_sequence_arguments_of_composite_functions_as_jax(call):
    _same_error(call)


def test_sequences_stay_welcome_where_jax_takes_them():
    for call in (lambda m: m.array([1.0, 2.0]), lambda m: m.asarray((1, 2)),
                 lambda m: m.stack([m.ones(2), m.zeros(2)]),
                 lambda m: m.concatenate([m.ones(2), m.zeros(2)]),
                 lambda m: m.sum(m.asarray([1.0, 2.0]))):
        assert_same(call(fnp), call(jnp))


def test_arrays_are_unhashable_as_jax():
    for m in (jnp, fnp):
        with pytest.raises(TypeError, match="unhashable type"):
            hash(m.ones(1))


# --- linspace ----------------------------------------------------------------------------

@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("args", [(-1, 1, 5), (-1.0, 1.0, 7), (0.3, 1.7, 7), (15, 13, 6),
                                  (-3.5, 2.25, 9), (0.0, 1.0, 11), (2, 2, 3)])
def test_linspace_examples_round_as_jax(x64, args):
    assert_same(fnp.linspace(*args), jnp.linspace(*args), rtol=0, atol=0)
    assert_same(fnp.linspace(*args, endpoint=False), jnp.linspace(*args, endpoint=False),
                rtol=0, atol=0)


@pytest.mark.parametrize("x64", MODES)
def test_linspace_rounds_as_jax_on_nearly_all_elements(x64):
    # JAX's values come from XLA's CPU code (reciprocal of the count, fused multiply-adds),
    # whose lanes may round differently on another processor: the bulk must be JAX's to
    # the bit, all within 2 ulp.
    rng = np.random.default_rng(12)
    same = total = 0
    for _ in range(30):
        s, e = (float(v) for v in rng.normal(size=2) * 10.0 ** rng.integers(-3, 4))
        num = int(rng.choice([2, 6, 17, 33, 34, 35, 64]))
        endpoint = bool(rng.integers(2))
        ours = fnp.linspace(s, e, num, endpoint=endpoint)
        theirs = jnp.linspace(s, e, num, endpoint=endpoint)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        o, t = np.asarray(ours), np.asarray(theirs)
        ulp = np.spacing(np.maximum(np.abs(o), np.abs(t)))
        assert np.all(np.abs(o - t) <= 2 * ulp), (s, e, num, endpoint, o, t)
        same += int((o == t).sum())
        total += num
    assert same >= 0.99 * total, (same, total)


@pytest.mark.parametrize("x64", MODES)
@settings(max_examples=15, deadline=None)
@given(num=st.integers(0, 9), endpoint=st.booleans(), retstep=st.booleans(),
       dtype=st.sampled_from([None, "float32", "int32", "int8", "float16", "bool",
                              "complex64"]),
       ints=st.booleans(), axis=st.sampled_from([0, -1, 1]), arrays=st.booleans(),
       start=st.integers(-40, 40), stop=st.integers(-40, 40))
def test_linspace_dtype_shape_axis_and_step_as_jax(x64, num, endpoint, retstep, dtype, ints,
                                                   axis, arrays, start, stop):
    s: Any = start if ints else start / 4
    e: Any = stop if ints else stop / 3
    if arrays:
        s_np = np.asarray([s, s + 1], np.float32)
        e_np = np.asarray([[e], [e - 2], [e + 0.5]], np.float32)
    elif axis:
        axis = 0

    def run(m: Any) -> Any:
        a, b = (m.asarray(s_np), m.asarray(e_np)) if arrays else (s, e)
        return m.linspace(a, b, num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                          axis=axis)

    theirs, t_err = _outcome(run, jnp)
    ours, o_err = _outcome(run, fnp)
    if t_err is not None:
        assert type(o_err) is type(t_err), (o_err, t_err)
        return
    assert o_err is None, o_err
    tol = 2e-2 if dtype == "float16" else 1e-6
    for o, t in zip(ours if retstep else (ours,), theirs if retstep else (theirs,)):
        assert o.dtype == t.dtype and o.shape == t.shape, (o, t)
        assert bool(o.weak_type) == bool(t.weak_type), (o, t)
        if np.dtype(t.dtype).kind in "iub":
            # Integer outputs floor values that may sit one ulp either side of an integer.
            assert np.all(np.abs(np.asarray(o, np.int64) - np.asarray(t, np.int64)) <= 1)
        else:
            np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=tol, atol=tol,
                                       equal_nan=True)


@pytest.mark.parametrize("x64", MODES)
def test_linspace_gradient_and_jit_as_jax(x64):
    import funcgrad  # noqa: PLC0415

    g_ours = funcgrad.grad(lambda a: fnp.linspace(a, 3.0, 5).sum())(1.0)
    g_theirs = jax.grad(lambda a: jnp.linspace(a, 3.0, 5).sum())(1.0)
    assert_same(g_ours, g_theirs)
    j_ours = funcgrad.jit(lambda a: fnp.linspace(a, 3.0, 5))(0.5)
    j_theirs = jax.jit(lambda a: jnp.linspace(a, 3.0, 5))(0.5)
    assert_same(j_ours, j_theirs)


@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("name", ["logspace", "geomspace"])
def test_logspace_and_geomspace_as_jax(x64, name):
    args = (0.0, 2.0, 7) if name == "logspace" else (1.0, 1000.0, 7)
    assert_same(getattr(fnp, name)(*args), getattr(jnp, name)(*args))


# --- weak types of max/min ---------------------------------------------------------------

@pytest.mark.parametrize("x64", MODES)
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "ptp", "nanmax", "nanmin"])
@pytest.mark.parametrize("value", [0.5, 2, [0.5, 1.5]], ids=["float", "int", "weak_vector"])
def test_max_min_of_weak_operands_are_strong_as_jax(x64, name, value):
    def run(m: Any) -> Any:
        x = m.stack([m.asarray(v) * 1 for v in value]) if isinstance(value, list) else value
        return getattr(m, name)(x)

    assert_same(run(fnp), run(jnp))


@pytest.mark.parametrize("x64", MODES)
def test_logsumexp_value_of_weak_input_is_strong_as_jax(x64):
    import funcgrad  # noqa: PLC0415

    assert_same(funcgrad.nn.logsumexp(0.5), jax.nn.logsumexp(0.5))
    x_ours = fnp.stack([fnp.asarray(0.5) * 1, fnp.asarray(1.0) * 1])
    x_theirs = jnp.stack([jnp.asarray(0.5) * 1, jnp.asarray(1.0) * 1])
    assert_same(fnp.max(x_ours, keepdims=True), jnp.max(x_theirs, keepdims=True))


# --- fix ---------------------------------------------------------------------------------

def test_fix_is_gone_as_in_jax():
    assert not hasattr(jnp, "fix")
    assert not hasattr(fnp, "fix")
