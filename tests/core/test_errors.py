"""Error classes and messages: what went wrong, where (the user's line), what to do."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors as E
from funcgrad import lax

HERE = os.path.basename(__file__)


def here() -> int:
    """The line number of the caller (put it on the same line as the failing call)."""
    return sys._getframe(1).f_lineno


def strip_locations(msg: str) -> str:
    """The message without its ``file:line (function)`` parts, so that the names of the
    test functions cannot satisfy checks of what the message says."""
    return re.sub(r"\S+:\d+ \([^)]*\)", "<loc>", msg)


def assert_located(exc: pytest.ExceptionInfo, line: int) -> str:
    """Check the user's file and line are in the message; return the rest of it."""
    msg = str(exc.value)
    assert f"{HERE}:{line}" in msg, msg
    return strip_locations(msg)


def no_cuda() -> bool:
    from funcgrad.devices import get_backend

    return not get_backend("cupy").available()


# ------------------------------------------------------------------ the class tree


@pytest.mark.parametrize(("cls", "builtin"), [
    (E.ShapeError, ValueError),
    (E.ShapeError, TypeError),  # JAX's type for mismatched shapes
    (E.DTypeError, TypeError),
    (E.IndexingError, IndexError),
    (E.ConcretizationTypeError, TypeError),
    (E.TracerBoolConversionError, E.ConcretizationTypeError),
    (E.TracerIntegerConversionError, E.ConcretizationTypeError),
    (E.GradError, TypeError),
    (E.NonScalarOutputError, E.GradError),
    (E.IntegerInputError, E.GradError),
    (E.ArgnumsError, ValueError),
    (E.ArgnumsError, E.GradError),
    (E.HasAuxError, E.GradError),
    (E.NonDifferentiableError, E.GradError),
    (E.TreeStructureError, ValueError),
    (E.DeviceError, ValueError),
    (E.BackendError, RuntimeError),
])
def test_error_classes_derive_from_builtins(cls, builtin) -> None:
    assert issubclass(cls, builtin)
    assert issubclass(cls, E.FuncgradError)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(3) + L.ones(4), lambda L: L.ones((2, 3)) @ L.ones((2, 3)),
    lambda L: L.ones(6).reshape(4, 2), lambda L: L.concatenate([L.ones((2, 3)), L.ones((2, 2))]),
])
def test_shape_mismatches_are_type_errors_as_in_jax(call) -> None:
    with pytest.raises(TypeError):
        call(fnp)
    jnp = pytest.importorskip("jax.numpy")
    with pytest.raises(TypeError):
        call(jnp)


def test_every_public_error_is_exported() -> None:
    for name in E.__all__:
        cls = getattr(E, name)
        assert issubclass(cls, E.FuncgradError)
    assert issubclass(E.UnexpectedTracerError, E.FuncgradError)


# ------------------------------------------------------------------ shape errors


# The shape errors of the numpy functions are JAX's texts (no user line in them).
def test_add_broadcast_error_names_shapes() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fnp.add(np.ones((2, 3)), np.ones(4))
    assert str(ei.value) == "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"


def test_add_broadcast_error_names_the_primitive() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fnp.add(np.ones((2, 3)), np.ones((2, 4)))
    assert str(ei.value) == "add got incompatible shapes for broadcasting: (2, 3), (2, 4)."


def test_add_broadcast_error_when_staged_and_under_grad() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fg.make_jaxpr(lambda x: x + np.ones(4))(np.ones((2, 3)))
    assert "(2, 3)" in str(ei.value) and "(4,)" in str(ei.value)

    def f(x):
        return fnp.sum(fnp.add(x, np.ones(4)))

    with pytest.raises(E.ShapeError, match="Incompatible shapes for broadcasting"):
        fg.grad(f)(np.ones((2, 3)))


def test_matmul_mismatch() -> None:
    msg = "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."
    with pytest.raises(E.ShapeError) as ei:
        fnp.matmul(np.ones((2, 3)), np.ones((4, 5)))
    assert str(ei.value) == msg
    with pytest.raises(E.ShapeError) as ei:
        fg.make_jaxpr(lambda a: a @ np.ones((4, 5)))(np.ones((2, 3)))
    assert str(ei.value) == msg
    with pytest.raises(E.ShapeError) as ei:
        fnp.matmul(np.ones(3), np.ones(4))
    assert str(ei.value) == msg


def test_reshape_to_wrong_size() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fnp.reshape(np.ones((2, 3)), (4,))
    assert str(ei.value) == "cannot reshape array of shape (2, 3) (size 6) into shape (4,) (size 4)"
    with pytest.raises(E.ShapeError, match=r"into shape \(4, 2\) \(size 8\)"):
        fg.make_jaxpr(lambda x: x.reshape(4, 2))(np.ones((2, 3)))


def test_lax_reshape_names_primitive_and_avals() -> None:
    with pytest.raises(E.ShapeError) as ei:
        line = here(); lax.reshape(np.ones((2, 3)), (4,))  # noqa: E702
    msg = assert_located(ei, line)
    assert "reshape on (f64[2,3])" in msg and "(4,)" in msg


def test_dot_general_bad_dims() -> None:
    dims = (((1,), (0,)), ((), ()))
    with pytest.raises(E.ShapeError) as ei:
        line = here(); lax.dot_general(np.ones((2, 3)), np.ones((4, 5)), dims)  # noqa: E702
    msg = assert_located(ei, line)
    assert "dot_general on (f64[2,3], f64[4,5])" in msg
    with pytest.raises(E.ShapeError) as ei:
        line = here(); fg.make_jaxpr(lambda a, b: lax.dot_general(a, b, dims))(np.ones((2, 3)), np.ones((4, 5)))  # noqa: E501, E702
    assert_located(ei, line)


def test_concatenate_rank_mismatch() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fnp.concatenate([np.ones((2, 3)), np.ones(3)])
    assert str(ei.value) == ("Cannot concatenate arrays with different numbers of dimensions: "
                             "got (2, 3), (3,).")


def test_concatenate_error_names_the_function() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fnp.concatenate([np.ones((2, 3)), np.ones(3)])
    assert "concatenate" in strip_locations(str(ei.value))


def test_lax_primitives_do_not_broadcast_or_promote() -> None:
    with pytest.raises(E.ShapeError) as ei:
        line = here(); lax.add(np.ones(2), np.ones(3))  # noqa: E702
    msg = assert_located(ei, line)
    assert "add on (f64[2], f64[3])" in msg
    assert "funcgrad.numpy" in msg  # says what to use instead
    # Mixed dtypes: JAX's text (raised by the lax function the user called, so the
    # traceback ends at the user's line).
    with pytest.raises(E.DTypeError, match=r"^lax.add requires arguments to have the same "
                       r"dtypes, got float32, float64. \(Tip: jnp.add is a similar function"):
        lax.add(np.ones(2, np.float32), np.ones(2))


def test_axis_out_of_bounds() -> None:
    with pytest.raises(E.ShapeError) as ei:
        fnp.sum(np.ones((2, 3)), axis=5)
    assert str(ei.value) == "axis 5 is out of bounds for array of dimension 2"


# ------------------------------------------------------------------ dtype errors


def test_lax_sin_on_ints() -> None:
    with pytest.raises(E.DTypeError) as ei:
        line = here(); lax.sin(np.ones(3, np.int32))  # noqa: E702
    msg = assert_located(ei, line)
    assert "sin on (i32[3])" in msg and "int32" in msg
    with pytest.raises(E.DTypeError) as ei:
        fg.make_jaxpr(lax.exp)(np.ones(3, np.int64))
    assert "exp" in strip_locations(str(ei.value))


def test_non_array_arguments() -> None:
    with pytest.raises(E.DTypeError) as ei:
        line = here(); fnp.sin("abc")  # noqa: E702
    msg = assert_located(ei, line)
    assert "str" in msg
    with pytest.raises(E.DTypeError):
        fnp.add(object(), 1.0)
    with pytest.raises(E.DTypeError, match="not supported"):
        fg.dtypes.canonicalize(np.dtype("datetime64[s]"))


# ------------------------------------------------------------------ leaked tracers

LEAK_MSG_PARTS = ("has already finished", "escaped", "Return the value from the function")


@pytest.mark.parametrize("transform", ["grad", "jvp", "make_jaxpr", "vjp", "jacrev"])
def test_leaked_tracer_used_after_transform(transform) -> None:
    leaked = []

    def f(x):
        leaked.append(x)
        return fnp.sum(x * 2.0)

    x = np.ones(2)
    if transform == "grad":
        fg.grad(f)(x)
    elif transform == "jvp":
        fg.jvp(f, (x,), (x,))
    elif transform == "make_jaxpr":
        fg.make_jaxpr(f)(x)
    elif transform == "vjp":
        fg.vjp(f, x)
    else:
        fg.jacrev(f)(x)
    tracer = leaked[-1]
    with pytest.raises(E.UnexpectedTracerError) as ei:
        line = here(); tracer + 1.0  # noqa: E702, B018
    msg = assert_located(ei, line)
    for part in LEAK_MSG_PARTS:
        assert part in msg, msg
    assert "f64[2]" in msg
    with pytest.raises(E.UnexpectedTracerError):
        fnp.sin(tracer)
    # and inside a later, unrelated transformation
    with pytest.raises(E.UnexpectedTracerError):
        fg.make_jaxpr(lambda y: y * tracer)(np.ones(2))
    with pytest.raises(E.UnexpectedTracerError):
        fg.grad(lambda y: fnp.sum(y * tracer))(np.ones(2))


def test_leaked_tracer_message_says_where_the_transform_ran() -> None:
    leaked = []
    line = here(); fg.grad(lambda x: leaked.append(x) or x * 2.0)(1.0)  # noqa: E702
    with pytest.raises(E.UnexpectedTracerError) as ei:
        leaked[0] * 3.0  # noqa: B018
    msg = str(ei.value)
    assert "vjp/grad" in msg
    assert f"created at {__file__}:{line}" in msg, msg
    assert "contextlib" not in msg


def test_leaked_tracer_from_make_jaxpr_names_staging() -> None:
    leaked = []
    fg.make_jaxpr(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(E.UnexpectedTracerError, match="staging"):
        fnp.exp(leaked[0])


# ------------------------------------------------------------------ concretization


def test_if_on_staged_value() -> None:
    def f(x):
        if x > 0:  # the offending line
            return x
        return -x

    # JAX's text names the function being traced (its first line) and the argument.
    line = f.__code__.co_firstlineno
    with pytest.raises(E.TracerBoolConversionError) as ei:
        fg.make_jaxpr(f)(1.0)
    msg = assert_located(ei, line)
    assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].")
    assert "depends on the value of the argument x." in msg
    assert isinstance(ei.value, TypeError)


@pytest.mark.parametrize("body", [
    lambda x: bool(x),
    lambda x: (x > 0) and x,
    lambda x: x if x else x,
    lambda x: [i for i in range(3) if x > i],
])
def test_bool_conversions_on_staged_values(body) -> None:
    with pytest.raises(E.TracerBoolConversionError,
                       match=r"^Attempted boolean conversion of traced array with shape "
                             r"\w+\[\]\.\nThe error occurred while tracing"):
        fg.make_jaxpr(body)(1.0)


def test_float_int_item_array_on_staged_values() -> None:
    with pytest.raises(E.ConcretizationTypeError) as ei:
        line = here(); fg.make_jaxpr(lambda x: float(x))(1.0)  # noqa: E702
    msg = assert_located(ei, line)
    assert "The problem arose with the `float` function." in msg
    with pytest.raises(E.ConcretizationTypeError) as ei:  # JAX's class for int()
        line = here(); fg.make_jaxpr(lambda x: int(x))(1.0)  # noqa: E702
    msg = assert_located(ei, line)
    assert "The problem arose with the `int` function." in msg
    with pytest.raises(E.ConcretizationTypeError, match=r"the item\(\) method of jax\.Array"):
        fg.make_jaxpr(lambda x: x.item())(1.0)
    with pytest.raises(E.TracerArrayConversionError, match=r"__array__\(\) was called"):
        fg.make_jaxpr(lambda x: np.asarray(x))(np.ones(2))
    with pytest.raises(E.TracerIntegerConversionError):
        fg.make_jaxpr(lambda x, n: x * range(n)[0])(1.0, 3)


def test_python_control_flow_works_under_grad_and_jvp() -> None:
    def f(x):
        if x > 0:
            return x ** 3
        return -x

    assert float(fg.grad(f)(2.0)) == 12.0
    assert float(fg.grad(f)(-2.0)) == -1.0
    assert float(fg.grad(fg.grad(f))(2.0)) == 12.0
    out, t = fg.jvp(f, (2.0,), (1.0,))
    assert (float(out), float(t)) == (8.0, 12.0)
    assert float(fg.hessian(f)(2.0)) == 12.0
    # int() of a concrete primal works; float() under grad is refused, as in JAX
    assert float(fg.grad(lambda x: x * int(x))(3.0)) == 3.0
    with pytest.raises(E.ConcretizationTypeError):
        fg.grad(lambda x: x * float(x))(3.0)
    assert float(fg.jvp(lambda x: x * int(x), (3.0,), (1.0,))[1]) == 3.0


def test_python_control_flow_under_make_jaxpr_of_grad_fails() -> None:
    with pytest.raises(E.TracerBoolConversionError):
        fg.make_jaxpr(fg.grad(lambda x: x if x > 0 else -x))(1.0)


def test_static_argnums_is_the_fix() -> None:
    def f(x, n):
        if n > 1:
            return x * n
        return x

    cj = fg.make_jaxpr(f, static_argnums=1)(np.ones(2), 3)
    assert [e.primitive.name for e in cj.eqns] == ["mul"]


# ------------------------------------------------------------------ indexing


def test_out_of_bounds_int_index_clamps_as_in_jax() -> None:
    # JAX clamps reads out of range (docs/sharp_bits.md); only an empty axis has no
    # element to clamp to.
    x = fnp.arange(3.0)
    assert float(x[5]) == 2.0 and float(x[-5]) == 0.0
    assert float(fg.jit(lambda v: v[5])(x)) == 2.0
    np.testing.assert_array_equal(fg.grad(lambda v: v[5])(x), [0.0, 0.0, 1.0])
    with pytest.raises(E.IndexingError) as ei:
        fg.make_jaxpr(lambda v: v[0])(np.ones(0))
    assert str(ei.value) == "index is out of bounds for axis 0 with size 0"
    with pytest.raises(IndexError):  # also catchable as the builtin
        fg.make_jaxpr(lambda v: v[1, 0])(np.ones((2, 0)))


def test_too_many_indices() -> None:
    with pytest.raises(E.IndexingError) as ei:
        fg.make_jaxpr(lambda x: x[0, 1])(np.ones(3))
    assert str(ei.value) == "Too many indices: array is 1-dimensional, but 2 were indexed"


def test_bad_index_kinds() -> None:
    with pytest.raises(E.IndexTypeError, match="integer or boolean type"):
        fg.make_jaxpr(lambda x: x[1.5])(np.ones(3))
    with pytest.raises(ValueError, match="indices must have an integer type"):  # JAX's
        fg.make_jaxpr(lambda x: fnp.take(x, np.array([1.0]), axis=1))(np.ones((2, 3)))


def test_traced_integer_index_is_allowed() -> None:
    cj = fg.make_jaxpr(lambda x, i: x[i])(np.arange(3.0), 1)
    assert fg.eval_jaxpr(cj, np.arange(3.0), np.int64(2))[0] == 2.0


# ------------------------------------------------------------------ devices


@pytest.mark.skipif(not no_cuda(), reason="a CUDA device is available here")
def test_device_put_cuda_without_gpu() -> None:
    with pytest.raises(E.DeviceError) as ei:
        fg.device_put(np.ones(3), "cuda")
    msg = str(ei.value)
    assert "cuda:0" in msg and "not available" in msg and "'cpu'" in msg


@pytest.mark.parametrize("device", ["tpu", "cuda:x", "gpu:-1", "", "CPU"])
def test_bad_device_strings(device) -> None:
    with pytest.raises(E.DeviceError, match="unknown device"):
        fg.device_put(np.ones(3), device)


def test_bad_device_objects() -> None:
    with pytest.raises(E.DeviceError, match="cpu:1"):
        fg.device_put(np.ones(3), "cpu:1")
    with pytest.raises(E.DeviceError):
        fg.device_put(np.ones(3), 3)
    with pytest.raises(E.BackendError, match="unknown backend"):
        from funcgrad.devices import get_backend

        get_backend("tpu")
