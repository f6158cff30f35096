"""``jit``: compiled == eager, the trace cache, static arguments, errors for Python
control flow on traced values, the lowered program text, jit under (and over) the
other transformations, and the structured control flow of ``funcgrad.lax``
(``cond``/``switch``/``while_loop``/``fori_loop``/``scan``) on its own and under jit.

Every reference here is eager funcgrad, plain NumPy or a Python loop; nothing is
imported from other test modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import errors as E
from funcgrad import lax
from funcgrad.testing import check_grads
from funcgrad.tree_util import tree_leaves, tree_structure

FEW = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def close(a: Any, b: Any, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=tol, atol=tol)


def tree_close(a: Any, b: Any, tol: float = 1e-10) -> None:
    assert tree_structure(a) == tree_structure(b), (tree_structure(a), tree_structure(b))
    for x, y in zip(tree_leaves(a), tree_leaves(b)):
        assert np.shape(x) == np.shape(y), (np.shape(x), np.shape(y))
        assert np.asarray(x).dtype == np.asarray(y).dtype, (np.asarray(x).dtype,
                                                              np.asarray(y).dtype)
        close(x, y, tol)


RNG = np.random.default_rng(0)
A34 = RNG.standard_normal((3, 4))
B34 = RNG.standard_normal((3, 4))
V4 = RNG.standard_normal(4)
M45 = RNG.standard_normal((4, 5))
P34 = RNG.uniform(0.5, 2.0, (3, 4))
I34 = RNG.integers(-5, 6, (3, 4))
F32 = RNG.standard_normal((3, 4)).astype(np.float32)
CONST = RNG.standard_normal(4)

# ----------------------------------------------------------------- jit == eager

# (id, function, arguments): every function runs eagerly and under jit.
JIT_TABLE: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("elementwise", lambda x, y: fnp.tanh(x) * fnp.exp(-y * y) + fnp.sin(x) / (1.0 + y * y),
     (A34, B34)),
    ("log_sqrt", lambda p: fnp.log(p) + fnp.sqrt(p) - p ** 1.5, (P34,)),
    ("broadcast", lambda x, v: x * v + v[None, :] - 2.0, (A34, V4)),
    ("reductions", lambda x: (fnp.sum(x), fnp.mean(x, axis=0), fnp.max(x, axis=1),
                              fnp.min(x, axis=(0, 1)), fnp.sum(x, axis=1, keepdims=True)),
     (A34,)),
    ("argmax_cumsum", lambda x: (fnp.argmax(x, axis=1), fnp.cumsum(x, axis=0)), (A34,)),
    ("matmul", lambda x, m: fnp.tanh(x @ m) @ m.T, (A34, M45)),
    ("einsum", lambda x, y: fnp.einsum("ij,ij->i", x, y), (A34, B34)),
    ("shape_ops", lambda x: fnp.concatenate([x.T.reshape(2, 6), fnp.ones((1, 6))], axis=0),
     (A34,)),
    ("stack_split", lambda x: fnp.stack(fnp.split(x, 2, axis=1), axis=0), (A34,)),
    ("indexing", lambda x: (x[1], x[:, 1:3], x[::-1, ::2], x[np.array([2, 0])]), (A34,)),
    ("index_update", lambda x: fnp.index_add(fnp.index_update(x, (1, 2), 7.0), 0, 1.0), (A34,)),
    ("where_clip", lambda x, y: fnp.where(x > y, fnp.clip(x, -0.5, 0.5), y), (A34, B34)),
    ("pytree_in_out", lambda d: {"s": d["a"] + d["b"][0], "p": (d["a"] * d["b"][1],)},
     ({"a": A34, "b": [B34, P34]},)),
    ("closed_over_const", lambda v: fnp.dot(v, CONST) + fnp.sum(CONST * v), (V4,)),
    ("integer", lambda i: (i // 3, i % 3, i * i - 2 * i, fnp.abs(i)), (I34,)),
    ("int_float_mix", lambda i, x: i * x + 1, (I34, A34)),
    ("float32", lambda x: fnp.exp(x) * 2.0 - x, (F32,)),
    ("python_float_f64", lambda x, s: x * s + s, (A34, 2.5)),
    ("f32_times_f32_0d", lambda x, s: x * s, (F32, np.float32(3.0))),
    ("unused_input", lambda x, y: x * 2.0, (A34, B34)),
    ("input_passthrough", lambda x, y: (x, y + 1.0), (A34, B34)),
    ("literal_output", lambda x: (x + 1.0, 3.0), (A34,)),
    ("logsumexp_softmax", lambda x: x - fnp.log(fnp.sum(fnp.exp(x), axis=1, keepdims=True)),
     (A34,)),
    ("reuse_chain", lambda x: fnp.sin(fnp.cos(fnp.tanh(x * 3.0) + x) * x) - fnp.abs(x), (A34,)),
]


def _as_arrays(tree: Any) -> Any:
    return [np.asarray(x) for x in tree_leaves(tree)]


@pytest.mark.parametrize("name,f,args", JIT_TABLE, ids=[c[0] for c in JIT_TABLE])
def test_jit_equals_eager(name: str, f: Callable[..., Any], args: tuple[Any, ...]) -> None:
    expected = f(*args)
    jf = fg.jit(f)
    for _ in range(2):  # the second call is a cache hit (the fast path for arrays)
        got = jf(*args)
        assert tree_structure(got) == tree_structure(expected)
        for g, e in zip(_as_arrays(got), _as_arrays(expected)):
            assert isinstance(g, np.ndarray)
            assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape,
                                                              e.dtype)
            close(g, e)
    assert jf.trace_count == 1


@pytest.mark.parametrize("name,f,args", JIT_TABLE, ids=[c[0] for c in JIT_TABLE])
def test_eval_of_lowered_jaxpr_equals_eager(name: str, f: Callable[..., Any],
                                            args: tuple[Any, ...]) -> None:
    lowered = fg.jit(f).lower(*args)
    flat = tree_leaves(args)
    outs = fg.eval_jaxpr(lowered.jaxpr, *flat)
    for g, e in zip(outs, _as_arrays(f(*args))):
        close(g, e)


def test_jit_python_scalar_argument_that_needs_conversion() -> None:
    f = lambda x, s: x * s
    close(fg.jit(f)(F32, 2.0), f(F32, 2.0))
    close(fg.jit(f)(A34, 2), f(A34, 2))


def test_eval_jaxpr_with_python_scalar_input() -> None:
    f = lambda x, n: x * n
    cj = fg.make_jaxpr(f)(A34, 2)
    close(fg.eval_jaxpr(cj, A34, 2)[0], f(A34, 2))


def test_jit_decorator_forms_and_kwargs() -> None:
    @fg.jit
    def f(x, y, scale=1.0):
        return (x - y) * scale

    close(f(A34, B34), A34 - B34)
    close(f(A34, y=B34, scale=3.0), 3.0 * (A34 - B34))

    @fg.jit(static_argnums=1)
    def g(x, n):
        return x * n

    close(g(A34, 4), A34 * 4)
    assert f.__name__ == "f" and g.__name__ == "g"


def test_backend_numpy_explicit() -> None:
    f = fg.jit(lambda x: fnp.sin(x) + 1.0, backend="numpy")
    out = f(A34)
    assert isinstance(out, fg.Array) and type(np.asarray(out)) is np.ndarray
    close(out, np.sin(A34) + 1.0)
    lowered = f.lower(A34)
    assert lowered.backend == "numpy"
    assert callable(lowered.compile())
    with pytest.raises(E.FuncgradError, match="backend='cupy'"):
        lowered.kernels()
    # The default backend follows the inputs: NumPy arrays run on NumPy.
    assert fg.jit(lambda x: x + 1.0).lower(A34).backend == "numpy"


# ----------------------------------------------------------------- the cache


class Counted:
    """A function that counts its Python executions (i.e. its traces under jit)."""

    def __init__(self, f: Callable[..., Any]) -> None:
        self.f = f
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.f(*args, **kwargs)


def test_cache_hits_never_retrace() -> None:
    c = Counted(lambda x, y: fnp.sin(x) * y)
    f = fg.jit(c)
    for k in range(5):
        y = B34 + k
        close(f(A34, y), np.sin(A34) * y)
    assert c.calls == 1 and f.trace_count == 1
    # Same signature through a different array object, and a non-contiguous view.
    close(f(np.ascontiguousarray(A34), B34.copy()), np.sin(A34) * B34)
    assert c.calls == 1
    t = np.asarray(np.random.default_rng(1).standard_normal((4, 3))).T
    close(f(t, B34), np.sin(t) * B34)
    assert c.calls == 1 and f.trace_count == 1


def test_new_shapes_and_dtypes_retrace() -> None:
    c = Counted(lambda x: x * 2.0)
    f = fg.jit(c)
    f(np.ones(3))
    f(np.ones(3))
    assert f.trace_count == 1
    f(np.ones(4))
    assert f.trace_count == 2
    f(np.ones((3, 1)))
    assert f.trace_count == 3
    out = f(np.ones(3, np.float32))
    assert out.dtype == np.float32
    assert f.trace_count == 4
    out = f(np.ones(3, np.int32))
    assert out.dtype == np.float64
    assert f.trace_count == 5
    f(np.ones(4))  # an earlier signature: still cached
    assert f.trace_count == 5 and c.calls == 5


def test_weak_python_scalars_vs_strong_0d_arrays() -> None:
    c = Counted(lambda x, s: x * s)
    f = fg.jit(c)
    close(f(A34, 2.0), A34 * 2.0)
    # Another Python float: same (weak f64[]) signature, no re-trace, and the value is
    # an argument of the compiled program, not a baked-in constant.
    close(f(A34, 3.0), A34 * 3.0)
    assert f.trace_count == 1 and c.calls == 1
    # A strongly typed float64 0-d array is a different abstract value: re-trace.
    close(f(A34, np.array(4.0)), A34 * 4.0)
    assert f.trace_count == 2
    close(f(A34, np.array(5.0)), A34 * 5.0)
    close(f(A34, np.float64(6.0)), A34 * 6.0)
    assert f.trace_count == 2
    # Weak vs strong matters for the result type with float32 arrays.
    g = fg.jit(lambda x, s: x * s)
    assert g(F32, np.array(2.0)).dtype == np.float64
    assert g(F32, np.float32(2.0)).dtype == np.float32
    assert g.trace_count == 2


def test_static_values_retrace_only_when_changed() -> None:
    c = Counted(lambda x, n: x * n if n > 0 else -x)
    f = fg.jit(c, static_argnums=1)
    close(f(A34, 2), A34 * 2)
    close(f(A34, 2), A34 * 2)
    assert f.trace_count == 1
    close(f(A34, -1), -A34)
    assert f.trace_count == 2
    close(f(A34, 3), A34 * 3)
    assert f.trace_count == 3 and c.calls == 3
    close(f(A34, 2), A34 * 2)
    assert f.trace_count == 3


def test_pytree_structures_retrace() -> None:
    c = Counted(lambda t: sum(tree_leaves(t)))
    f = fg.jit(c)
    f([A34, B34])
    f([A34 + 1.0, B34])
    assert f.trace_count == 1
    f((A34, B34))  # tuple vs list
    assert f.trace_count == 2
    f([A34, B34, A34])  # one more leaf
    assert f.trace_count == 3
    f({"a": A34, "b": B34})
    assert f.trace_count == 4
    f({"a": A34, "c": B34})  # other keys
    assert f.trace_count == 5
    f({"a": A34, "b": B34, "z": None})  # None is an empty subtree but changes the structure
    assert f.trace_count == 6
    f({"b": B34, "a": A34})  # dict order does not matter
    assert f.trace_count == 6
    close(f({"a": A34, "b": B34}), A34 + B34)


def test_keyword_arguments_are_part_of_the_signature() -> None:
    f = fg.jit(lambda x, y=None: x if y is None else x + y)
    close(f(A34), A34)
    close(f(A34, y=B34), A34 + B34)
    assert f.trace_count == 2
    close(f(A34, y=B34 * 2.0), A34 + 2.0 * B34)
    assert f.trace_count == 2


def test_jit_objects_of_one_function_share_what_they_staged() -> None:
    # As JAX (its trace cache is keyed on the function and the staging options):
    # ``jit(f)(x)`` written inside a loop traces once.
    c = Counted(lambda x: x + 1.0)
    f, g = fg.jit(c), fg.jit(c)
    f(A34)
    g(A34)
    assert (f.trace_count, g.trace_count, c.calls) == (1, 0, 1)
    for _ in range(3):
        fg.jit(c)(A34)
    fg.jit(c, donate_argnums=0)(A34 + 0)  # donation does not change what is staged
    assert c.calls == 1
    fg.jit(c, backend="numpy")(A34)
    assert c.calls == 2  # another backend stages its own program


def test_a_global_read_at_the_first_trace_stays_baked_in_as_jax() -> None:
    jax = pytest.importorskip("jax")

    def run(jit: Any) -> list[float]:
        scale = {"g": 2.0}

        def f(x: Any) -> Any:
            return x * scale["g"]

        first = float(jit(f)(4.0))
        scale["g"] = 3.0
        return [first, float(jit(f)(5.0)), float(jit(lambda x: x * scale["g"])(5.0))]

    assert run(fg.jit) == run(jax.jit) == [8.0, 10.0, 15.0]


# ----------------------------------------------------------------- static arguments


def test_static_argnums_python_values() -> None:
    def f(x, n, mode):
        out = x
        for _ in range(n):  # Python loop on a static int
            out = fnp.sin(out)
        return out * 2.0 if mode == "double" else out

    jf = fg.jit(f, static_argnums=(1, 2))
    for n, mode in [(0, "id"), (3, "double"), (3, "id")]:
        close(jf(A34, n, mode), f(A34, n, mode))
    assert jf.trace_count == 3


def test_static_argnums_negative_and_shape_argument() -> None:
    f = fg.jit(lambda x, shape: fnp.zeros(shape) + fnp.sum(x), static_argnums=-1)
    out = f(V4, (2, 3))
    assert out.shape == (2, 3)
    close(out, np.full((2, 3), V4.sum()))
    assert f(V4, (2, 3)).shape == (2, 3) and f.trace_count == 1


def test_static_argnames() -> None:
    c = Counted(lambda x, *, k, axis: fnp.sum(x ** k, axis=axis))
    f = fg.jit(c, static_argnames=("k", "axis"))
    close(f(A34, k=2, axis=0), np.sum(A34 ** 2, axis=0))
    close(f(A34, k=2, axis=0), np.sum(A34 ** 2, axis=0))
    assert f.trace_count == 1
    close(f(A34, k=3, axis=0), np.sum(A34 ** 3, axis=0))
    close(f(A34, k=3, axis=1), np.sum(A34 ** 3, axis=1))
    assert f.trace_count == 3 and c.calls == 3
    g = fg.jit(lambda x, n=1: x * n, static_argnames="n")
    close(g(A34, n=5), A34 * 5)


def test_unhashable_static_argument_is_jax_value_error() -> None:
    f = fg.jit(lambda x, shape: fnp.zeros(shape) + x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
        f(np.array(1.0), [2, 3])
    g = fg.jit(lambda x, *, opts: x, static_argnames="opts")
    with pytest.raises(ValueError, match=r"<class 'dict'>, \{'a': 1\}.*\nTypeError: unhashable"):
        g(A34, opts={"a": 1})


# ----------------------------------------------------------------- Python control flow errors


def _assert_suggests_fixes(err: BaseException) -> None:
    # JAX's text: the function being traced for jit, the argument, the errors page.
    msg = str(err)
    assert "The error occurred while tracing the function f" in msg or \
        "The error occurred while tracing the function <lambda>" in msg, msg
    assert " for jit. This concrete value was not available in Python because it depends on " \
        "the value of the argument x." in msg, msg
    assert "\nSee https://docs.jax.dev/en/latest/errors.html#jax.errors." in msg, msg


def test_python_if_on_traced_value() -> None:
    def f(x):
        if fnp.sum(x) > 0:
            return x
        return -x

    with pytest.raises(E.TracerBoolConversionError) as info:
        fg.jit(f)(A34)
    _assert_suggests_fixes(info.value)
    assert isinstance(info.value, E.ConcretizationTypeError)
    assert "test_jit.py" in str(info.value)  # points at the user's line


def test_python_while_on_traced_value() -> None:
    def f(x):
        while x < 10.0:
            x = x * 2.0
        return x

    with pytest.raises(E.TracerBoolConversionError) as info:
        fg.jit(f)(np.array(1.0))
    _assert_suggests_fixes(info.value)


@pytest.mark.parametrize("conv,err", [(float, E.ConcretizationTypeError),
                                      (int, E.ConcretizationTypeError),
                                      (bool, E.TracerBoolConversionError)])
def test_python_conversions_on_traced_value(conv: Callable[[Any], Any],
                                            err: type[Exception]) -> None:
    with pytest.raises(err) as info:
        fg.jit(lambda x: x * conv(x))(np.array(1.5))
    _assert_suggests_fixes(info.value)
    assert isinstance(info.value, TypeError)


def test_control_flow_on_static_values_is_fine() -> None:
    def f(x, flag):
        if flag:
            return x * 2.0
        return x

    jf = fg.jit(f, static_argnums=1)
    close(jf(A34, True), A34 * 2.0)
    close(jf(A34, False), A34)
    # And on shapes, which are known while tracing.
    h = fg.jit(lambda x: x.sum() if x.shape[0] > 2 else x)
    close(h(A34), A34.sum())


# ----------------------------------------------------------------- lower / as_text


def test_lower_jaxpr() -> None:
    def f(x, y):
        return fnp.sum(fnp.sin(x) * y)

    lowered = fg.jit(f).lower(A34, B34)
    cj = lowered.jaxpr
    names = [e.primitive.name for e in cj.eqns]
    assert names == ["sin", "mul", "reduce_sum"]
    assert [a.shape for a in cj.in_avals] == [(3, 4), (3, 4)]
    assert str(cj).startswith("{ lambda")
    assert "reduce_sum[axes=(0, 1)]" in str(cj)
    close(fg.eval_jaxpr(cj, A34, B34)[0], f(A34, B34))
    close(lowered.compile()(A34, B34), f(A34, B34))
    # lower stages but does not run, and shares the cache with calls
    c = Counted(f)
    jf = fg.jit(c)
    jf.lower(A34, B34)
    jf(A34, B34)
    assert c.calls == 1


def test_as_text_dead_code_cse_and_buffer_reuse() -> None:
    def f(x, y):
        a = fnp.sin(x) * y
        b = fnp.sin(x) * y  # the same computation again: computed once
        _dead = fnp.exp(x) * 3.0  # never used: dropped
        return fnp.tanh(a + b) * 2.0 + 1.0

    lowered = fg.jit(f).lower(A34, B34)
    jaxpr_names = [e.primitive.name for e in lowered.jaxpr.eqns]
    assert jaxpr_names.count("sin") == 2 and "exp" in jaxpr_names  # the jaxpr keeps both
    text = lowered.as_text()
    assert text.startswith("def run(")
    assert "exp" not in text, text  # dead code removed
    assert text.count("sin(") == 1, text  # CSE: sin(x) * y computed once
    assert text.count("multiply(") == 2, text  # (sin(x) * y) once, then * 2.0
    assert "out=" in text, text  # buffers reused in place
    assert "return [" in text
    close(fg.jit(f)(A34, B34), f(A34, B34))


def test_buffer_reuse_never_clobbers_inputs_or_live_values() -> None:
    def f(x):
        a = fnp.exp(x)
        b = a + 1.0  # may write into a? no: a is still needed below
        c = b * 2.0  # may write into b (b is dead after this)
        return a, c, x

    x = A34.copy()
    lowered = fg.jit(f).lower(x)
    text = lowered.as_text()
    assert "out=a0" not in text, text  # never into an argument
    a, c, xo = fg.jit(f)(x)
    close(a, np.exp(A34))
    close(c, (np.exp(A34) + 1.0) * 2.0)
    close(xo, A34)
    np.testing.assert_array_equal(x, A34)  # the caller's array is untouched
    assert not np.shares_memory(a, c)


def test_as_text_of_views_is_safe() -> None:
    # transpose/reshape return views: their buffers must not be written through out=.
    def f(x):
        t = x.T
        u = fnp.exp(t)
        return u + 1.0, t

    u1, t = fg.jit(f)(A34)
    close(u1, np.exp(A34.T) + 1.0)
    close(t, A34.T)


# ----------------------------------------------------------------- jit under transforms


def scalar_f(x):
    return fnp.sum(fnp.sin(x) * x ** 2 + fnp.exp(-x) * fnp.tanh(x))


def vec_f(x):
    return fnp.sin(x) * fnp.roll(x, 1) + x ** 3


X3 = np.array([0.3, -0.7, 1.1])
XB = RNG.standard_normal((5, 3))


def test_grad_of_jit() -> None:
    jf = fg.jit(scalar_f)
    close(fg.grad(jf)(X3), fg.grad(scalar_f)(X3))
    v, g = fg.value_and_grad(jf)(X3)
    close(v, scalar_f(X3))
    close(g, fg.grad(scalar_f)(X3))
    check_grads(jf, (X3,), order=2)


def test_grad_of_jit_with_argnums_and_pytrees() -> None:
    def loss(params, x):
        w, b = params["w"], params["b"]
        return fnp.sum(fnp.tanh(x @ w + b) ** 2)

    params = {"w": M45, "b": RNG.standard_normal(5)}
    expected = fg.grad(loss)(params, A34)
    got = fg.grad(fg.jit(loss))(params, A34)
    tree_close(got, expected, 1e-9)
    gx = fg.grad(fg.jit(loss), argnums=1)(params, A34)
    close(gx, fg.grad(loss, argnums=1)(params, A34), 1e-9)


def test_grad_of_jit_with_integer_and_static_inputs() -> None:
    def f(x, i, n):
        return fnp.sum(x * i) ** n

    jf = fg.jit(f, static_argnums=2)
    i = np.array([1, 2, 3])
    close(fg.grad(jf)(X3, i, 2), fg.grad(f)(X3, i, 2))


def test_vmap_of_jit() -> None:
    jf = fg.jit(vec_f)
    close(fg.vmap(jf)(XB), np.stack([vec_f(x) for x in XB]))
    close(fg.vmap(jf, in_axes=1, out_axes=1)(XB.T), np.stack([vec_f(x) for x in XB], 1))
    g = fg.jit(lambda x, y: x * y + fnp.sum(x))
    close(fg.vmap(g, in_axes=(0, None))(XB, X3), np.stack([x * X3 + x.sum() for x in XB]))


def test_jit_of_grad_and_of_vmap_of_grad() -> None:
    g = fg.grad(scalar_f)
    close(fg.jit(g)(X3), g(X3))
    vg = fg.vmap(g)
    close(fg.jit(vg)(XB), np.stack([g(x) for x in XB]))
    close(fg.jit(fg.vmap(fg.grad(fg.jit(scalar_f))))(XB), np.stack([g(x) for x in XB]))


def test_jacobians_and_hessian_of_jit() -> None:
    jf = fg.jit(vec_f)
    close(fg.jacfwd(jf)(X3), fg.jacfwd(vec_f)(X3))
    close(fg.jacrev(jf)(X3), fg.jacfwd(vec_f)(X3))
    close(fg.hessian(fg.jit(scalar_f))(X3), fg.hessian(scalar_f)(X3))
    close(fg.jit(fg.hessian(scalar_f))(X3), fg.hessian(scalar_f)(X3))


def test_jvp_of_jit() -> None:
    jf = fg.jit(vec_f)
    t = np.array([1.0, -0.5, 2.0])
    out, tout = fg.jvp(jf, (X3,), (t,))
    eout, etout = fg.jvp(vec_f, (X3,), (t,))
    close(out, eout)
    close(tout, etout)
    check_grads(jf, (X3,), order=2, modes=("fwd",))


def test_grad_of_grad_of_jit() -> None:
    jf = fg.jit(lambda x: fnp.sum(fnp.sin(x) ** 3))
    gg = fg.grad(lambda x: fnp.sum(fg.grad(jf)(x)))
    close(gg(X3), fg.grad(lambda x: fnp.sum(fg.grad(lambda y: fnp.sum(fnp.sin(y) ** 3))(x)))
          (X3))


def _jit_eqns(cj: Any) -> list[Any]:
    return [e for e in cj.eqns if e.primitive.name == "jit"]


def test_make_jaxpr_of_grad_of_jit_shows_compiled_forward_and_backward() -> None:
    def f(x):
        return fnp.sum(fnp.sin(x) * x)

    cj = fg.make_jaxpr(fg.grad(fg.jit(f)))(X3)
    jits = _jit_eqns(cj)
    assert [e.params["name"] for e in jits] == ["fwd(f)", "bwd(f)"]
    text = str(cj)
    assert "jit[" in text and "name='fwd(f)'" in text and "name='bwd(f)'" in text
    fwd, bwd = jits
    # The forward saves residuals for the backward, which takes them and the cotangent.
    assert len(fwd.outputs) > 1
    assert any(v in bwd.inputs for v in fwd.outputs[1:])
    # Everything in between is the plumbing of grad, not the function's own work.
    outer = [e.primitive.name for e in cj.eqns if e.primitive.name != "jit"]
    assert "sin" not in outer and "cos" not in outer
    close(fg.eval_jaxpr(cj, X3)[0], np.cos(X3) * X3 + np.sin(X3))


def test_make_jaxpr_of_jvp_and_vmap_of_jit() -> None:
    def h(x):
        return fnp.sin(x) * 2.0

    cj = fg.make_jaxpr(lambda x, t: fg.jvp(fg.jit(h), (x,), (t,)))(X3, X3)
    assert [e.params["name"] for e in _jit_eqns(cj)] == ["jvp(h)"]
    cj = fg.make_jaxpr(fg.vmap(fg.jit(h)))(XB)
    assert [e.params["name"] for e in _jit_eqns(cj)] == ["vmap(h)"]
    cj = fg.make_jaxpr(fg.jit(h))(X3)
    (e,) = _jit_eqns(cj)
    assert e.params["name"] == "h" and e.params["backend"] == "numpy"
    assert [q.primitive.name for q in e.params["jaxpr"].eqns] == ["sin", "mul"]


def test_jit_closing_over_a_concrete_array_under_grad() -> None:
    w = np.array([1.0, 2.0, 3.0])
    jf = fg.jit(lambda x: fnp.sum(fnp.sin(x) * w))
    close(fg.grad(jf)(X3), np.cos(X3) * w)


def test_jit_closing_over_outer_tracer_under_grad() -> None:
    def outer(a):
        @fg.jit
        def inner(y):
            return fnp.sum(fnp.sin(a * y))

        return inner(X3)

    close(fg.grad(outer)(np.array(0.5)), np.sum(np.cos(0.5 * X3) * X3))


def test_jit_closing_over_outer_tracer_under_jvp_and_vmap() -> None:
    def outer(a):
        return fg.jit(lambda y: fnp.sum(a * y))(X3)

    _, t = fg.jvp(outer, (np.array(0.5),), (np.array(1.0),))
    close(t, X3.sum())
    close(fg.vmap(outer)(np.array([0.5, 2.0])), np.array([0.5, 2.0]) * X3.sum())


def test_jit_closing_over_outer_tracer_under_jit() -> None:
    @fg.jit
    def outer(a):
        return fg.jit(lambda y: fnp.sum(fnp.sin(a * y)))(X3)

    close(outer(np.array(0.5)), np.sum(np.sin(0.5 * X3)))


def test_nested_jit_with_explicit_arguments() -> None:
    inner = fg.jit(lambda a, y: fnp.sum(fnp.sin(a * y)))
    outer = fg.jit(lambda a: inner(a, X3) * 2.0)
    close(outer(np.array(0.5)), 2.0 * np.sum(np.sin(0.5 * X3)))
    close(fg.grad(outer)(np.array(0.5)), 2.0 * np.sum(np.cos(0.5 * X3) * X3))
    names = [e.params["name"] for e in _jit_eqns(outer.lower(np.array(0.5)).jaxpr)]
    assert names == ["<lambda>"]


# ----------------------------------------------------------------- control flow under jit


def _cond_fn(x, p):
    return lax.cond(p > 0, lambda v: fnp.sin(v) * p, lambda v: fnp.cos(v) - p, x)


def _scan_fn(x):
    carry, ys = lax.scan(lambda c, xi: (c * xi + fnp.sin(c), c * c), np.array(0.5), x)
    return carry + fnp.sum(ys)


def _fori_fn(x):
    return lax.fori_loop(0, 4, lambda i, v: fnp.sin(v) * x + i, x)


def _while_fn(x):
    return lax.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 0.9 + fnp.sin(s[1])),
                          (0, x))[1]


@pytest.mark.parametrize("p", [0.5, -0.5])
def test_cond_under_jit(p: float) -> None:
    jf = fg.jit(_cond_fn)
    close(jf(X3, p), _cond_fn(X3, p))
    close(jf(X3, np.array(p)), _cond_fn(X3, p))
    close(fg.grad(lambda x: fnp.sum(jf(x, p)))(X3),
          fg.grad(lambda x: fnp.sum(_cond_fn(x, p)))(X3))
    check_grads(lambda x: jf(x, p), (X3,), order=2)


def test_scan_fori_under_jit_and_reverse_mode() -> None:
    for f in (_scan_fn, _fori_fn):
        jf = fg.jit(f)
        close(jf(X3), f(X3))
        check_grads(jf, (X3,), order=2)
        close(fg.grad(lambda x, f=f: fnp.sum(fg.jit(f)(x)))(X3),
              fg.grad(lambda x, f=f: fnp.sum(f(x)))(X3))
        close(fg.jit(fg.grad(lambda x, f=f: fnp.sum(f(x))))(X3),
              fg.grad(lambda x, f=f: fnp.sum(f(x)))(X3))


def test_while_loop_under_jit_forward_mode() -> None:
    jf = fg.jit(_while_fn)
    close(jf(X3), _while_fn(X3))
    check_grads(jf, (X3,), order=2, modes=("fwd",))
    close(fg.jacfwd(jf)(X3), fg.jacfwd(_while_fn)(X3))
    with pytest.raises(E.NonDifferentiableError, match="fori_loop"):
        fg.grad(lambda x: fnp.sum(jf(x)))(X3)


def test_fori_loop_with_traced_bounds_under_jit() -> None:
    f = fg.jit(lambda x, n: lax.fori_loop(0, n, lambda i, v: v * x, x))
    n3 = np.array(3)
    close(f(X3, n3), X3 ** 4)
    close(f(X3, np.array(2)), X3 ** 3)
    assert f.trace_count == 1
    assert any(e.primitive.name == "while" for e in f.lower(X3, n3).jaxpr.eqns)
    _, t = fg.jvp(lambda x: f(x, n3), (X3,), (np.ones(3),))
    close(t, 4 * X3 ** 3)
    # Traced bounds make it a while_loop: no reverse mode.
    with pytest.raises(E.NonDifferentiableError, match="while_loop"):
        fg.grad(lambda x: fnp.sum(f(x, n3)))(X3)


def test_vmap_of_jit_of_control_flow() -> None:
    ps = np.array([0.5, -0.2, 1.0])
    got = fg.vmap(fg.jit(_cond_fn), in_axes=(None, 0))(X3, ps)
    close(got, np.stack([_cond_fn(X3, p) for p in ps]))
    close(fg.vmap(fg.jit(_scan_fn))(XB), np.stack([_scan_fn(x) for x in XB]))
    close(fg.jit(fg.vmap(_while_fn))(XB), np.stack([_while_fn(x) for x in XB]))


# ----------------------------------------------------------------- cond / switch


def py_cond(p, t, f, *ops):
    return t(*ops) if p else f(*ops)


@FEW
@given(st.floats(-2, 2), st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_cond_values(p: float, xs: list[float]) -> None:
    x = np.array(xs)
    t = lambda v, q: (fnp.sin(v) * q, q + 1.0)
    f = lambda v, q: (v * v - q, q * 2.0)
    got = lax.cond(p > 0, t, f, x, np.array(p))
    ref = py_cond(p > 0, t, f, x, np.array(p))
    tree_close(got, ref)
    # a Python bool / NumPy bool / 0-d int predicate
    tree_close(lax.cond(bool(p > 0), t, f, x, np.array(p)), ref)
    tree_close(lax.cond(np.int32(p > 0), t, f, x, np.array(p)), ref)


def test_cond_pytrees_and_closures() -> None:
    w = np.array([2.0, 3.0, 4.0])
    out = lax.cond(True, lambda d: {"a": d["x"] * w, "b": (d["x"],)},
                   lambda d: {"a": d["x"], "b": (-d["x"],)}, {"x": X3})
    tree_close(out, {"a": X3 * w, "b": (X3,)})
    # no operands at all
    close(lax.cond(False, lambda: np.array(1.0), lambda: np.array(2.0)), 2.0)


def test_switch_values_and_clamping() -> None:
    branches = [lambda v: v, lambda v: 2.0 * v, lambda v: fnp.sin(v)]
    for i in range(3):
        close(lax.switch(i, branches, X3), branches[i](X3))
        close(lax.switch(np.array(i), branches, X3), branches[i](X3))
    close(lax.switch(7, branches, X3), branches[2](X3))  # clamped to the last
    close(lax.switch(-3, branches, X3), branches[0](X3))  # clamped to the first
    jf = fg.jit(lambda i, x: lax.switch(i, branches, x))
    for i in (-1, 0, 1, 2, 5):
        close(jf(np.array(i), X3), branches[min(max(i, 0), 2)](X3))
    assert jf.trace_count == 1
    with pytest.raises(ValueError):
        lax.switch(0, [], X3)


@pytest.mark.parametrize("p", [0.7, -0.7])
def test_cond_derivatives(p: float) -> None:
    f = lambda x, y: _cond_fn(x * y, p)
    check_grads(f, (X3, np.array([1.5, 0.5, -1.0])), order=2)
    # the predicate depends on the differentiated input: derivative of the taken branch
    g = lambda x: lax.cond(fnp.sum(x) > 0, lambda v: v ** 3, lambda v: fnp.exp(v), x)
    for x in (X3, -X3 - 1.0):
        check_grads(g, (x,), order=2)


def test_switch_derivatives() -> None:
    branches = [lambda v: v ** 2, lambda v: fnp.sin(v) * v, lambda v: fnp.exp(-v)]
    for i in range(3):
        check_grads(lambda x, i=i: lax.switch(i, branches, x), (X3,), order=2)
        close(fg.grad(lambda x, i=i: fnp.sum(lax.switch(i, branches, x)))(X3),
              fg.grad(lambda x, i=i: fnp.sum(branches[i](x)))(X3))


def test_cond_and_switch_batched_predicates() -> None:
    ps = np.array([0.5, -0.2, 1.0, -3.0])
    xs = RNG.standard_normal((4, 3))
    close(fg.vmap(_cond_fn)(xs, ps), np.stack([_cond_fn(x, p) for x, p in zip(xs, ps)]))
    close(fg.vmap(_cond_fn, in_axes=(None, 0))(X3, ps),
          np.stack([_cond_fn(X3, p) for p in ps]))
    close(fg.vmap(_cond_fn, in_axes=(0, None))(xs, 0.3),
          np.stack([_cond_fn(x, 0.3) for x in xs]))
    branches = [lambda v: v, lambda v: 2.0 * v, lambda v: -v]
    idx = np.array([2, 0, 1, 5])
    close(fg.vmap(lambda i, x: lax.switch(i, branches, x))(idx, xs),
          np.stack([branches[min(i, 2)](x) for i, x in zip(idx, xs)]))
    # derivatives of the batched form
    close(fg.vmap(fg.grad(lambda x, p: fnp.sum(_cond_fn(x, p))))(xs, ps),
          np.stack([fg.grad(lambda x, p=p: fnp.sum(_cond_fn(x, p)))(x) for x, p in zip(xs, ps)]))


def test_cond_errors() -> None:
    with pytest.raises(E.TreeStructureError, match="structure"):
        lax.cond(True, lambda x: x, lambda x: (x, x), X3)
    with pytest.raises(E.TreeStructureError, match=r"float64\[3\].*float64\[2\]"):
        lax.cond(True, lambda x: x, lambda x: x[:2], X3)
    with pytest.raises(E.TreeStructureError):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.float32), X3)
    with pytest.raises(E.TreeStructureError):
        lax.switch(0, [lambda x: x, lambda x: {"a": x}], X3)
    with pytest.raises(E.ShapeError, match="Pred must be a scalar"):
        lax.cond(np.array([True, False]), lambda x: x, lambda x: x, X3)


# ----------------------------------------------------------------- while_loop


def py_while(cond_fun, body_fun, val):
    while cond_fun(val):
        val = body_fun(val)
    return val


@FEW
@given(st.floats(0.1, 3.0), st.integers(0, 6))
def test_while_loop_values(x0: float, limit: int) -> None:
    cond_fun = lambda s: s[0] < limit
    body_fun = lambda s: (s[0] + 1, s[1] * 1.5 + 0.25)
    got = lax.while_loop(cond_fun, body_fun, (0, np.array(x0)))
    ref = py_while(lambda s: s[0] < limit, lambda s: (s[0] + 1, s[1] * 1.5 + 0.25), (0, x0))
    assert int(got[0]) == ref[0]
    close(got[1], ref[1])
    close(fg.jit(lambda v: lax.while_loop(cond_fun, body_fun, (0, v)))(np.array(x0))[1],
          ref[1])


def test_while_loop_value_dependent_trip_count() -> None:
    # Newton iteration for sqrt(a) until converged: the trip count depends on the data.
    def sqrt_newton(a):
        def body(s):
            x, _ = s
            new = 0.5 * (x + a / x)
            return new, fnp.abs(new - x)

        return lax.while_loop(lambda s: s[1] > 1e-12, body, (a, np.array(1.0)))[0]

    for a in (2.0, 9.0, 0.3):
        close(sqrt_newton(np.array(a)), np.sqrt(a))
        close(fg.jit(sqrt_newton)(np.array(a)), np.sqrt(a))


def test_while_loop_forward_mode() -> None:
    f = lambda x: lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, fnp.sin(s[1]) * x),
                                 (0, x))[1]

    def ref(x):
        v = x
        for _ in range(4):
            v = fnp.sin(v) * x
        return v

    check_grads(f, (X3,), order=2, modes=("fwd",))
    close(fg.jacfwd(f)(X3), fg.jacfwd(ref)(X3))
    close(fg.jvp(f, (X3,), (np.ones(3),))[1], fg.jvp(ref, (X3,), (np.ones(3),))[1])


def test_while_loop_reverse_mode_is_an_error() -> None:
    f = lambda x: fnp.sum(lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * x),
                                         (0, x))[1])
    with pytest.raises(E.NonDifferentiableError) as info:
        fg.grad(f)(X3)
    msg = str(info.value)
    assert "while_loop" in msg and ("fori_loop" in msg or "scan" in msg)
    with pytest.raises(E.NonDifferentiableError):
        fg.vjp(f, X3)[1](np.array(1.0))


def test_while_loop_batched_carries_and_predicates() -> None:
    # each member runs a different number of steps
    starts = np.array([0, 2, 5, 9])
    xs = RNG.standard_normal((4, 3))

    def f(k, x):
        return lax.while_loop(lambda s: s[0] < 6, lambda s: (s[0] + 1, s[1] * 1.1 + 0.1),
                              (k, x))

    got_k, got_x = fg.vmap(f)(starts, xs)
    refs = [py_while(lambda s: s[0] < 6, lambda s: (s[0] + 1, s[1] * 1.1 + 0.1), (int(k), x))
            for k, x in zip(starts, xs)]
    np.testing.assert_array_equal(got_k, [r[0] for r in refs])
    close(got_x, np.stack([r[1] for r in refs]))
    # batched limit closed over (a batched cond constant), unbatched carry
    limits = np.array([1, 3, 0])
    g = lambda n: lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 2.0),
                                 (0, np.array(1.0)))[1]
    close(fg.vmap(g)(limits), 2.0 ** limits)
    # forward mode of the batched loop
    close(fg.vmap(fg.jacfwd(lambda x: f(2, x)[1]))(xs),
          np.stack([fg.jacfwd(lambda x: f(2, x)[1])(x) for x in xs]))


def test_while_loop_errors() -> None:
    with pytest.raises(E.DTypeError, match="boolean scalar"):
        lax.while_loop(lambda v: v, lambda v: v + 1.0, X3)
    with pytest.raises(E.DTypeError, match="boolean scalar"):
        lax.while_loop(lambda v: fnp.sum(v), lambda v: v + 1.0, X3)
    with pytest.raises(E.TreeStructureError):
        lax.while_loop(lambda v: v[0] < 3, lambda v: (v[0] + 1,), (0, X3))
    with pytest.raises(E.TreeStructureError, match="types"):
        lax.while_loop(lambda v: fnp.sum(v) < 3, lambda v: v.astype(np.float32), X3)


# ----------------------------------------------------------------- fori_loop


@FEW
@given(st.integers(-2, 4), st.integers(-2, 6))
def test_fori_loop_values(lo: int, hi: int) -> None:
    body = lambda i, v: v * 1.5 + i
    val = np.array([0.5, -1.0])
    ref = val
    for i in range(lo, hi):
        ref = body(i, ref)
    close(lax.fori_loop(lo, hi, body, val), ref)
    close(fg.jit(lambda v: lax.fori_loop(lo, hi, body, v))(val), ref)
    close(fg.jit(lambda a, b, v: lax.fori_loop(a, b, body, v))(np.array(lo), np.array(hi), val),
          ref)


def test_fori_loop_derivatives() -> None:
    f = lambda x, y: lax.fori_loop(0, 3, lambda i, v: fnp.sin(v) * y + x * i, x)
    args = (X3, np.array([0.4, 1.2, -0.8]))
    check_grads(f, args, order=2)
    g = fg.grad(lambda x: fnp.sum(lax.fori_loop(0, 3, lambda i, v: v * x, np.ones(3))))
    close(g(X3), 3 * X3 ** 2)


def test_fori_loop_batched() -> None:
    xs = RNG.standard_normal((4, 3))
    f = lambda x: lax.fori_loop(0, 3, lambda i, v: v * x + i, x)
    close(fg.vmap(f)(xs), np.stack([f(x) for x in xs]))
    close(fg.vmap(fg.grad(lambda x: fnp.sum(f(x))))(xs),
          np.stack([fg.grad(lambda x: fnp.sum(f(x)))(x) for x in xs]))


# ----------------------------------------------------------------- scan


def py_scan(f, init, xs, reverse=False):
    carry, ys = init, []
    order = range(len(xs) - 1, -1, -1) if reverse else range(len(xs))
    for i in order:
        carry, y = f(carry, xs[i])
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, np.stack(ys)


@FEW
@given(st.integers(1, 5), st.booleans())
def test_scan_values(n: int, reverse: bool) -> None:
    xs = np.linspace(-1.0, 2.0, n * 2).reshape(n, 2)
    f = lambda c, x: (c * 0.5 + fnp.sin(x), c * x)
    carry, ys = lax.scan(f, np.zeros(2), xs, reverse=reverse)
    rc, rys = py_scan(f, np.zeros(2), xs, reverse)
    close(carry, rc)
    close(ys, rys)
    jc, jys = fg.jit(lambda xs: lax.scan(f, np.zeros(2), xs, reverse=reverse))(xs)
    close(jc, rc)
    close(jys, rys)


def test_scan_pytrees_length_and_none_xs() -> None:
    carry, ys = lax.scan(lambda c, _: (c * 2.0, c), np.array(1.0), None, length=4)
    close(carry, 16.0)
    close(ys, [1.0, 2.0, 4.0, 8.0])

    def f(c, x):
        a, b = c
        return (a + x["u"], b * x["v"]), {"s": a * b, "t": (x["u"],)}

    xs = {"u": np.arange(3.0), "v": np.array([1.0, 2.0, 3.0])}
    (a, b), ys = lax.scan(f, (np.array(0.0), np.array(1.0)), xs)
    close(a, 3.0)
    close(b, 6.0)
    close(ys["s"], [0.0, 0.0, 2.0])
    close(ys["t"][0], np.arange(3.0))


def test_scan_derivatives() -> None:
    w = np.array([0.3, -0.2, 0.5])

    def rnn(h0, xs, w):
        def cell(h, x):
            h = fnp.tanh(h * w + x)
            return h, fnp.sum(h * h)

        h, ys = lax.scan(cell, h0, xs)
        return fnp.sum(h) + fnp.sum(ys)

    xs = RNG.standard_normal((4, 3))
    check_grads(rnn, (X3, xs, w), order=2)
    check_grads(lambda xs: lax.scan(lambda c, x: (c * x, c + x), np.array(1.0), xs,
                                    reverse=True), (np.array([0.5, -1.5, 2.0]),), order=2)
    # grad of a scan matches grad of the Python loop
    def loop(h0, xs, w):
        h, tot = h0, 0.0
        for x in xs:
            h = fnp.tanh(h * w + x)
            tot = tot + fnp.sum(h * h)
        return fnp.sum(h) + tot

    for k in range(3):
        close(fg.grad(rnn, argnums=k)(X3, xs, w), fg.grad(loop, argnums=k)(X3, xs, w), 1e-9)


def test_scan_batched() -> None:
    xss = RNG.standard_normal((3, 4, 2))
    inits = RNG.standard_normal((3, 2))
    f = lambda c, x: (c * 0.9 + x, fnp.sum(c * x))
    got_c, got_y = fg.vmap(lambda c, xs: lax.scan(f, c, xs))(inits, xss)
    refs = [py_scan(f, c, xs) for c, xs in zip(inits, xss)]
    close(got_c, np.stack([r[0] for r in refs]))
    close(got_y, np.stack([r[1] for r in refs]))
    # batch axis of xs not leading, carry unbatched
    got_c, got_y = fg.vmap(lambda xs: lax.scan(f, np.zeros(2), xs), in_axes=1)(
        np.moveaxis(xss, 0, 1))
    refs = [py_scan(f, np.zeros(2), xs) for xs in xss]
    close(got_c, np.stack([r[0] for r in refs]))
    close(got_y, np.stack([r[1] for r in refs]))


def test_scan_errors() -> None:
    with pytest.raises(E.TreeStructureError, match="types"):
        lax.scan(lambda c, x: (c.astype(np.float32), c), np.array(0.0), np.arange(3.0))
    with pytest.raises(E.TreeStructureError, match="structure"):
        lax.scan(lambda c, x: ((c,), c), np.array(0.0), np.arange(3.0))
    with pytest.raises(E.TreeStructureError, match="pair"):
        lax.scan(lambda c, x: c, np.array(0.0), np.arange(3.0))
    with pytest.raises(E.ShapeError, match="different leading axis sizes: 3, 4"):
        lax.scan(lambda c, x: (c, c), np.array(0.0), (np.arange(3.0), np.arange(4.0)))
    with pytest.raises(E.ShapeError):
        lax.scan(lambda c, x: (c, c), np.array(0.0), np.array(1.0))


def test_compiled_programs_inline_custom_rules() -> None:
    """custom_jvp/custom_vjp/checkpoint calls are compiled as their functions' equations:
    a compiled call runs no Python function of the user per call."""
    from funcgrad.transforms.jit import _inlined  # noqa: PLC0415

    @fg.custom_jvp
    def softplus(x):  # type: ignore[no-untyped-def]
        return fnp.logaddexp(x, 0.0)

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] / (1 + fnp.exp(-p[0]))))
    f = fg.jit(lambda x: fg.checkpoint(lambda y: softplus(y) * 2)(x))
    closed = f.lower(fnp.ones(3)).jaxpr
    assert any(e.primitive.inline_param for e in closed.jaxpr.eqns)
    flat = _inlined(closed)
    assert not any(e.primitive.inline_param for e in flat.jaxpr.eqns)
    x = fnp.array([-1.0, 0.5, 3.0])
    np.testing.assert_allclose(np.asarray(f(x)), 2 * np.logaddexp(np.asarray(x), 0.0),
                               rtol=1e-6)
    g = fg.jit(fg.grad(lambda x: fnp.sum(softplus(x))))
    np.testing.assert_allclose(np.asarray(g(x)), 1 / (1 + np.exp(-np.asarray(x))), rtol=1e-6)


def test_disable_jit_runs_functions_eagerly() -> None:
    calls = []

    def f(x):  # type: ignore[no-untyped-def]
        calls.append(1)
        return x * 2 if float(x) > 0 else -x  # Python control flow on the value

    jf = fg.jit(f)
    with fg.disable_jit():
        assert float(jf(3.0)) == 6.0
        assert float(jf(-3.0)) == 3.0
    assert len(calls) == 2
    fg.config.update("jax_disable_jit", True)
    try:
        assert float(jf(1.0)) == 2.0
    finally:
        fg.config.update("jax_disable_jit", False)
    assert len(calls) == 3
    with pytest.raises(fg.errors.ConcretizationTypeError):
        jf(1.0)  # staged again: float() of a tracer


def test_debug_nans_names_the_operation_eager_and_under_jit() -> None:
    fg.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            fnp.log(fnp.array([-1.0]))
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in sqrt"):
            fg.jit(lambda x: fnp.sqrt(x) * 2)(fnp.array([-1.0]))
        assert float(fg.jit(lambda x: fnp.sqrt(x))(4.0)) == 2.0
    finally:
        fg.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(fnp.log(fnp.array([-1.0])))).all()
    fg.config.update("jax_debug_infs", True)
    try:
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
            fnp.divide(fnp.array([1.0]), 0.0)
    finally:
        fg.config.update("jax_debug_infs", False)


def test_calls_under_a_transformation_reuse_the_staged_program() -> None:
    """A jitted function called with tracers (inside grad, vmap...) is staged once per
    signature of abstract values: shape, dtype, weak type, which arguments are None, and
    the 64-bit mode."""
    f = fg.jit(lambda x, w: x * x if w is None else x * w)
    x = np.array([1.0, -2.0, 3.0], np.float32)
    g = fg.grad(lambda x, w: f(x, w).sum())
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(g(x, None)), 2 * x)
    assert f.trace_count == 1
    np.testing.assert_allclose(np.asarray(fg.grad(lambda x: f(x, 2.0 * x).sum())(x)), 4 * x)
    assert f.trace_count == 2  # a second argument, not None
    np.testing.assert_allclose(np.asarray(g(x[:2], None)), 2 * x[:2])
    assert f.trace_count == 3  # another shape
    assert float(fg.grad(lambda s: f(s, None))(3.0)) == 6.0
    assert f.trace_count == 4  # a weak-typed scalar
    np.testing.assert_allclose(np.asarray(fg.vmap(lambda r: f(r, None))(x)), x * x)
    assert f.trace_count == 5  # per example: rank 0, not weak
    with fg.experimental.enable_x64():
        out = fg.grad(lambda x: f(x, None).sum())(x.astype(np.float64))
        assert out.dtype == np.float64
    assert f.trace_count == 6


def test_lower_compile_call_returns_the_output_pytree_as_jax() -> None:
    f = fg.jit(lambda x: (x, {"a": x + 1}))
    compiled = f.lower(fnp.ones(2)).compile()
    out = compiled(fnp.ones(2))
    assert isinstance(out, tuple) and set(out[1]) == {"a"}
    assert isinstance(out[1]["a"], fg.Array) and out[1]["a"].tolist() == [2.0, 2.0]
    assert isinstance(compiled.as_text(), str)
    jax = pytest.importorskip("jax")
    theirs = jax.jit(lambda x: (x, {"a": x + 1})).lower(jax.numpy.ones(2)).compile()(
        jax.numpy.ones(2))
    assert fg.tree_util.tree_structure(out) == fg.tree_util.tree_structure(
        jax.tree_util.tree_map(np.asarray, theirs))
