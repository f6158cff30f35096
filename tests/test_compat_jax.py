"""Small JAX programs, written once as JAX's documentation writes them, run under real JAX
and under funcgrad (``import funcgrad as jax; import funcgrad.numpy as jnp; from funcgrad
import lax``), in JAX's default 32-bit mode.

Each program is a function of the modules ``(jax, jnp, lax)`` returning a pytree; the two
results must have the same structure and, leaf by leaf, the same dtype, the same weak type
and close values (text leaves, such as a printed jaxpr, must be equal). Skipped without
jax.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad import lax as flax
from funcgrad.testing import jax_x64_mode

# ------------------------------------------------------------------ the programs


def mlp_value_and_grad(jax: Any, jnp: Any, lax: Any) -> Any:
    """The loss of a tanh MLP and its gradient over a dict of parameters."""

    def init(sizes: list[int]) -> dict[str, Any]:
        params = {}
        for k, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
            w = np.cos(np.arange(m * n, dtype=np.float32).reshape(m, n)) / np.sqrt(m)
            params[f"layer{k}"] = {"w": jnp.asarray(w), "b": jnp.zeros(n)}
        return params

    def predict(params: dict[str, Any], x: Any) -> Any:
        for k in range(len(params) - 1):
            layer = params[f"layer{k}"]
            x = jnp.tanh(x @ layer["w"] + layer["b"])
        last = params[f"layer{len(params) - 1}"]
        return x @ last["w"] + last["b"]

    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        return jnp.mean((predict(params, x) - y) ** 2)

    params = init([3, 8, 8, 1])
    x = jnp.asarray(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    y = jnp.sin(x[:, :1])
    value, grads = jax.jit(jax.value_and_grad(loss))(params, x, y)
    # One step of gradient descent, with tree_map.
    new = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    return {"loss": value, "grads": grads, "new_loss": loss(new, x, y)}


def jvp_and_vjp(jax: Any, jnp: Any, lax: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        return jnp.sin(x) * y + jnp.exp(-x * y)

    x, y = jnp.array([0.1, 0.2, 0.3]), jnp.array([1.0, 2.0, 3.0])
    primal, tangent = jax.jvp(f, (x, y), (jnp.ones(3), jnp.zeros(3)))
    out, pullback = jax.vjp(f, x, y)
    return {"jvp": (primal, tangent), "vjp": (out, pullback(jnp.ones(3))),
            "linearize": jax.linearize(lambda x: f(x, y), x)[1](jnp.ones(3))}


def hessian_jacfwd_jacrev(jax: Any, jnp: Any, lax: Any) -> Any:
    def f(x: Any) -> Any:
        return jnp.sum(jnp.tanh(x) ** 2) + x[0] * x[1] ** 3

    def g(x: Any) -> Any:
        return jnp.stack([x[0] * x[1], jnp.sin(x[2]), jnp.sum(x ** 2)])

    x = jnp.array([0.5, -1.0, 2.0])
    return {"hessian": jax.hessian(f)(x), "jacfwd": jax.jacfwd(g)(x),
            "jacrev": jax.jacrev(g)(x), "grad_grad": jax.grad(jax.grad(jnp.tanh))(0.3)}


def per_example_gradients(jax: Any, jnp: Any, lax: Any) -> Any:
    """vmap of grad over a batch, the parameters shared (in_axes=None)."""

    def loss(w: Any, x: Any, y: Any) -> Any:
        return (jnp.dot(x, w) - y) ** 2

    w = jnp.array([0.5, -0.5])
    xs = jnp.arange(8.0).reshape(4, 2)
    ys = jnp.array([1.0, 2.0, 3.0, 4.0])
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
    return {"per_example": per_example, "mean": per_example.mean(0),
            "batched_dot": jax.vmap(jnp.dot)(xs, xs)}


def jit_static_argnums(jax: Any, jnp: Any, lax: Any) -> Any:
    @functools.partial(jax.jit, static_argnums=(1,))
    def power_sum(x: Any, n: int) -> Any:
        out = x
        for _ in range(n - 1):
            out = out * x
        return jnp.sum(out)

    @functools.partial(jax.jit, static_argnames=("mode",))
    def reduce(x: Any, mode: str) -> Any:
        return jnp.max(x) if mode == "max" else jnp.min(x)

    x = jnp.array([1.0, 2.0, 3.0])
    return [power_sum(x, 2), power_sum(x, 3), reduce(x, mode="max"), reduce(x, mode="min")]


def control_flow_cond(jax: Any, jnp: Any, lax: Any) -> Any:
    def f(x: Any) -> Any:
        return lax.cond(x > 0, lambda x: x * 2.0, lambda x: -x, x)

    return {"pos": jax.jit(f)(jnp.float32(3)), "neg": jax.jit(f)(jnp.float32(-1.5)),
            "grad": jax.grad(f)(jnp.float32(3)), "vmap": jax.vmap(f)(jnp.array([-1.0, 2.0])),
            "switch": lax.switch(1, [lambda x: x + 1, lambda x: x * 10], jnp.int32(4))}


def control_flow_loops(jax: Any, jnp: Any, lax: Any) -> Any:
    def factorial(n: Any) -> Any:
        return lax.fori_loop(1, 6, lambda i, acc: acc * i, n)

    def collatz_steps(n: Any) -> Any:
        def body(state: Any) -> Any:
            n, k = state
            return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1

        return lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))[1]

    def cumsum(xs: Any) -> Any:
        def step(carry: Any, x: Any) -> Any:
            carry = carry + x
            return carry, carry

        return lax.scan(step, jnp.float32(0), xs)

    xs = jnp.arange(5.0)
    return {"factorial": jax.jit(factorial)(jnp.int32(1)),
            "collatz": jax.jit(collatz_steps)(jnp.int32(6)),
            "scan": cumsum(xs), "scan_grad": jax.grad(lambda xs: cumsum(xs)[0])(xs),
            "fori_float": lax.fori_loop(0, 3, lambda i, x: x * 0.5, jnp.float32(8))}


def fori_loop_traced_bound(jax: Any, jnp: Any, lax: Any) -> Any:
    """The factorial of JAX's fori_loop documentation, the bound traced by jit."""

    def factorial(n: Any) -> Any:
        return lax.fori_loop(1, n + 1, lambda i, acc: acc * i, 1)

    return jax.jit(factorial)(5)


def control_flow_weak_types(jax: Any, jnp: Any, lax: Any) -> Any:
    """Control flow on Python scalars keeps their weak type (so a later bfloat16 operand
    decides the dtype)."""
    cond = lax.cond(True, lambda x: x * 2.0, lambda x: -x, 3.0)
    loop = lax.while_loop(lambda x: x < 10, lambda x: x * 2.0, 1.0)
    carry, ys = lax.scan(lambda c, x: (c * 2.0, c), 1.0, None, length=3)
    return {"cond": cond, "switch": lax.switch(1, [lambda x: -x, lambda x: x + 1.0], 4.0),
            "while": loop, "scan": (carry, ys),
            "fori": lax.fori_loop(0, 3, lambda i, x: x * 0.5, 8.0),
            "then_bf16": cond * jnp.ones(2, jnp.bfloat16)}


def at_updates(jax: Any, jnp: Any, lax: Any) -> Any:
    x = jnp.zeros(5)
    i = jnp.array([0, 2, 2, 7])
    return {
        "set": x.at[1].set(10.0), "add_repeated": x.at[i].add(1.0),
        "mul": jnp.ones(5).at[1:3].multiply(3.0), "min": jnp.arange(5.0).at[i].min(-1.0),
        "get_fill": jnp.arange(5.0).at[i].get(mode="fill", fill_value=-1.0),
        "int": jnp.arange(5).at[0].add(2),
        "jit": jax.jit(lambda x, i: x.at[i].set(5.0))(x, 3),
        "grad": jax.grad(lambda x: jnp.sum(x.at[i].add(x[0]) ** 2))(jnp.arange(5.0)),
    }


def weak_type_promotion(jax: Any, jnp: Any, lax: Any) -> Any:
    i8 = jnp.ones(2, jnp.int8)
    return {
        "int_times_float": jnp.arange(3) * 2.0, "float32": jnp.float32(2),
        "int32": jnp.int32(3), "asarray_float": jnp.asarray(1.5), "asarray_int": jnp.asarray(2),
        "weak_plus_weak": jnp.asarray(2) + 1, "weak_int_plus_float": jnp.asarray(2) + 1.5,
        "int8_plus_python": i8 + 3, "int8_plus_int32": i8 + jnp.int32(3),
        "bf16_times_python": jnp.ones(2, jnp.bfloat16) * 2.5,
        "f16_plus_f32": jnp.ones(2, jnp.float16) + jnp.float32(1),
        "uint8_plus_int8": jnp.uint8(1) + jnp.int8(1), "bool_plus_int": jnp.array(True) + 1,
        "true_divide": jnp.arange(4) / 2, "floor_divide": jnp.arange(4) // 2,
        "mean_of_ints": jnp.mean(jnp.arange(4)), "sum_of_bools": jnp.sum(jnp.array([True] * 3)),
        "zeros": jnp.zeros(2), "full": jnp.full(2, 3), "full_like": jnp.full_like(i8, 1.5),
        "arange_float": jnp.arange(0.0, 1.0, 0.25), "linspace": jnp.linspace(0, 1, 5),
        "where": jnp.where(jnp.arange(3) > 0, 1.0, 0),
        "jit_of_python": jax.jit(lambda x: x * 2)(3.0),
        "grad_of_python": jax.grad(lambda x: x * x)(3.0),
        "astype": jnp.asarray(1.5).astype(jnp.float32),
    }


def _jaxpr(closed: Any) -> str:
    """A printed jaxpr with its layout normalized: JAX puts a short jaxpr on one line and
    funcgrad always breaks lines (its printer's pinned format, tests/core/test_printer.py),
    and JAX's equations carry a sharding annotation (out_sharding=None) that funcgrad has no
    notion of. Everything else (variables, types, primitives, params, literals) must agree."""
    text = re.sub(r"\s+", " ", str(closed)).strip()
    text = re.sub(r"\[out_sharding=None\]", "", text)
    return re.sub(r" out_sharding=None(?=[\] ])", "", text)


def make_jaxpr_text(jax: Any, jnp: Any, lax: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        return jnp.sum(jnp.sin(x) * y + 2.0)

    x = jnp.ones(3)
    return {
        "f": _jaxpr(jax.make_jaxpr(f)(x, x)),
        "grad_shape": jax.eval_shape(jax.grad(f), x, x).shape,
        "scalar": _jaxpr(jax.make_jaxpr(lambda a: a * 2.0 + 1)(jnp.float32(1))),
        "weak": _jaxpr(jax.make_jaxpr(lambda a: jnp.exp(a))(1.0)),
    }


def custom_jvp_log1pexp(jax: Any, jnp: Any, lax: Any) -> Any:
    """JAX's custom_jvp tutorial: a numerically stable derivative of log(1 + exp(x))."""

    @jax.custom_jvp
    def log1pexp(x: Any) -> Any:
        return jnp.log(1.0 + jnp.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (x_dot,) = primals, tangents
        return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * x_dot

    xs = jnp.array([0.0, 10.0, 100.0])
    return {"value": log1pexp(jnp.float32(3)), "grad": jax.grad(log1pexp)(100.0),
            "vmap_grad": jax.vmap(jax.grad(log1pexp))(xs), "jit": jax.jit(log1pexp)(xs)}


def custom_jvp_weak_type(jax: Any, jnp: Any, lax: Any) -> Any:
    """A custom_jvp function of a Python scalar returns a weak-typed value."""

    @jax.custom_jvp
    def log1pexp(x: Any) -> Any:
        return jnp.log(1.0 + jnp.exp(x))

    log1pexp.defjvp(lambda primals, tangents: (log1pexp(primals[0]), tangents[0]))
    value = log1pexp(jnp.asarray(3.0))
    return {"value": value, "then_bf16": value * jnp.ones(2, jnp.bfloat16)}


def grad_options(jax: Any, jnp: Any, lax: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        z = x * y + jnp.sin(x)
        return jnp.sum(z), {"z": z, "count": jnp.size(z)}

    x, y = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    g, aux = jax.grad(f, argnums=(0, 1), has_aux=True)(x, y)
    (v, aux2), gy = jax.value_and_grad(f, argnums=1, has_aux=True)(x, y)
    return {"g": g, "aux": aux, "v": v, "aux2": aux2, "gy": gy,
            "stop_gradient": jax.grad(lambda x: x * lax.stop_gradient(x))(2.0)}


def nn_and_reductions(jax: Any, jnp: Any, lax: Any) -> Any:
    x = jnp.array([[1.0, -2.0, 3.0], [0.5, 0.0, -0.5]])
    return {
        "relu": jax.nn.relu(x), "softmax": jax.nn.softmax(x, axis=-1),
        "sigmoid": jax.nn.sigmoid(x), "logsumexp": jax.nn.logsumexp(x, axis=1),
        "argmax": jnp.argmax(x, axis=1), "cumsum": jnp.cumsum(x, axis=0),
        "norm": jnp.linalg.norm(x), "einsum": jnp.einsum("ij,kj->ik", x, x),
        "grad_softmax": jax.grad(lambda x: jax.nn.softmax(x)[0])(x[0]),
    }


def pytrees(jax: Any, jnp: Any, lax: Any) -> Any:
    tree = {"a": [jnp.ones(2), (jnp.zeros(1), 3.0)], "b": None, "c": jnp.arange(3)}
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    doubled = jax.tree_util.tree_map(lambda t: t * 2, tree)
    return {"leaves": leaves, "n": treedef.num_leaves, "doubled": doubled,
            "unflatten": jax.tree_util.tree_unflatten(treedef, [x + 1 for x in leaves]),
            "jit_tree": jax.jit(lambda t: jax.tree_util.tree_map(lambda u: u + 1, t))(tree)}


PROGRAMS = [mlp_value_and_grad, jvp_and_vjp, hessian_jacfwd_jacrev, per_example_gradients,
            jit_static_argnums, control_flow_cond, control_flow_loops, at_updates,
            weak_type_promotion, make_jaxpr_text, custom_jvp_log1pexp, grad_options,
            nn_and_reductions, pytrees,
            fori_loop_traced_bound, control_flow_weak_types, custom_jvp_weak_type]

# ------------------------------------------------------------------ comparing


@contextlib.contextmanager
def _real_jax_x32() -> Iterator[tuple[Any, Any, Any]]:
    jax = pytest.importorskip("jax")
    with jax_x64_mode(jax, False):
        import jax.numpy as jjnp
        from jax import lax as jlax

        yield jax, jjnp, jlax


def _leaves(tree: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, leaf) pairs of nested dicts (sorted keys), lists and tuples; None is a leaf."""
    if isinstance(tree, dict):
        out = [(f"{path}{{}}", sorted(tree))]
        for k in sorted(tree):
            out += _leaves(tree[k], f"{path}[{k!r}]")
        return out
    if isinstance(tree, (list, tuple)):
        out = [(f"{path}<{type(tree).__name__}>", len(tree))]
        for k, t in enumerate(tree):
            out += _leaves(t, f"{path}[{k}]")
        return out
    return [(path, tree)]


def _describe(leaf: Any) -> Any:
    """What must agree exactly: the kind of leaf, and for arrays dtype, weak type, shape."""
    if isinstance(leaf, (str, int, bool, type(None))) and not hasattr(leaf, "dtype"):
        return (type(leaf).__name__, leaf)
    if isinstance(leaf, float):
        return ("float",)
    return ("array", str(np.dtype(leaf.dtype)), bool(getattr(leaf, "weak_type", False)),
            tuple(leaf.shape))


def _compare(got: Any, want: Any) -> list[str]:
    g, w = _leaves(got), _leaves(want)
    if [p for p, _ in g] != [p for p, _ in w]:
        return [f"structure: {[p for p, _ in g]} != {[p for p, _ in w]}"]
    bad = []
    for (path, a), (_, b) in zip(g, w):
        if path.endswith(("{}", ">")):
            if a != b:
                bad.append(f"{path}: {a} != {b}")
            continue
        da, db = _describe(a), _describe(b)
        if da != db:
            bad.append(f"{path}: {da} != {db}")
            continue
        if da[0] in ("array", "float"):
            x, y = np.asarray(a, np.float64 if da[0] == "float" else None), np.asarray(b)
            if x.dtype.kind == "V" or str(x.dtype) == "bfloat16":
                x, y = x.astype(np.float32), y.astype(np.float32)
            if not np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True):
                bad.append(f"{path}: {x!r} != {y!r}")
    return bad


PARAMS = [pytest.param(*p.values, id=p.values[0].__name__, marks=p.marks)
          if hasattr(p, "values") else pytest.param(p, id=p.__name__) for p in PROGRAMS]


@pytest.mark.x32
# exp(100.0) overflows float32 in custom_jvp_log1pexp, as in JAX's tutorial.
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("program", PARAMS)
def test_program_matches_jax(program: Callable[[Any, Any, Any], Any]) -> None:
    with _real_jax_x32() as (jax, jjnp, jlax):
        want = program(jax, jjnp, jlax)
    got = program(funcgrad, fnp, flax)
    bad = _compare(got, want)
    assert not bad, "\n".join(bad)


def test_at_least_a_dozen_programs() -> None:
    assert len(PROGRAMS) >= 12
