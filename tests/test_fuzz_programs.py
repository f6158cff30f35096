"""Differential fuzzing of whole programs: eager, jit, eval_jaxpr(make_jaxpr), vmap, jvp
and vjp must agree.

Hypothesis draws the input shapes (1-3 float64 inputs of mutually broadcastable shapes)
and a seed; the seed draws a small random DAG of ``funcgrad.numpy`` operations over them
(elementwise math made domain-safe, e.g. ``log(x*x + 1)``, broadcasting binary
operations, reductions, shape operations, indexing) and the input values. Each program
is checked for:

- eager == ``jit`` == ``eval_jaxpr(make_jaxpr(f))``;
- ``vmap`` over a random axis of a random subset of the inputs == a Python loop;
- the ``jvp`` tangent == central finite differences along a random direction;
- ``vjp`` consistent with ``jvp``: ``<vjp(u), v> == <u, jvp(v)>``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp

FUZZ = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# name -> function over funcgrad.numpy. All are smooth on the values they see
# (or piecewise smooth with ties of probability zero), so finite differences apply.
UNARY: dict[str, Callable[[Any], Any]] = {
    "sin": fnp.sin,
    "cos": fnp.cos,
    "tanh": fnp.tanh,
    "exp_tanh": lambda x: fnp.exp(fnp.tanh(x)),
    "log_sq1": lambda x: fnp.log(x * x + 1.0),
    "sqrt_sq1": lambda x: fnp.sqrt(x * x + 1.0),
    "square": lambda x: x ** 2,
    "cube_scaled": lambda x: 0.1 * x ** 3,
    "neg_affine": lambda x: 1.5 - 0.5 * x,
    "logistic": lambda x: 1.0 / (1.0 + fnp.exp(-x)),
    "arctan": fnp.arctan,
    "softplus": lambda x: fnp.log1p(fnp.exp(-fnp.abs(x))) + fnp.maximum(x, 0.0),
    "abs_sq": lambda x: fnp.abs(x) * x,
    "clip_soft": lambda x: fnp.clip(x, -5.0, 5.0),
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "safe_div": lambda x, y: x / (y * y + 1.0),
    "maximum": fnp.maximum,
    "minimum": fnp.minimum,
    "hypot_like": lambda x, y: fnp.sqrt(x * x + y * y + 1.0),
    "atan2_safe": lambda x, y: fnp.arctan2(x, y * y + 1.0),
}
# shape-changing operations, applied by _apply_shape_op with a parameter drawn per shape
SHAPE_OPS = ["sum", "mean", "max", "logsumexp", "transpose", "reverse", "slice", "cumsum",
             "reshape_flat", "concat_self", "expand_sum", "take"]


@dataclasses.dataclass
class Node:
    op: str
    args: tuple[int, ...]
    param: Any = None


@dataclasses.dataclass
class Prog:
    shapes: list[tuple[int, ...]]
    nodes: list[Node]
    outputs: tuple[int, ...]
    seed: int

    def __repr__(self) -> str:
        body = "; ".join(f"v{len(self.shapes) + k} = {n.op}{n.args}"
                         f"{'' if n.param is None else f'[{n.param}]'}"
                         for k, n in enumerate(self.nodes))
        return f"Prog(inputs={self.shapes}, {body}, outputs={self.outputs}, seed={self.seed})"


def _apply_shape_op(name: str, x: Any, param: Any) -> Any:
    if name == "sum":
        return fnp.sum(x, axis=param[0], keepdims=param[1])
    if name == "mean":
        return fnp.mean(x, axis=param[0], keepdims=param[1])
    if name == "max":
        return fnp.max(x, axis=param[0], keepdims=param[1])
    if name == "logsumexp":
        m = fnp.max(x, axis=param[0], keepdims=True)
        s = fnp.log(fnp.sum(fnp.exp(x - fg.lax.stop_gradient(m)), axis=param[0], keepdims=True))
        out = s + fg.lax.stop_gradient(m)
        return out if param[1] else fnp.squeeze(out, axis=param[0])
    if name == "transpose":
        return fnp.transpose(x, param)
    if name == "reverse":
        return fnp.flip(x, axis=param)
    if name == "slice":
        axis, start = param
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(start, None)
        return x[tuple(idx)]
    if name == "cumsum":
        return fnp.cumsum(x, axis=param)
    if name == "reshape_flat":
        return fnp.reshape(x, (-1,))
    if name == "concat_self":
        return fnp.concatenate([x, 2.0 * x], axis=param)
    if name == "expand_sum":
        return fnp.expand_dims(x, param) + 0.5
    if name == "take":
        axis, index = param
        return fnp.take(x, np.asarray(index), axis=axis)
    raise AssertionError(name)


def _shape_op_param(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    nd = len(shape)
    if name in ("sum", "mean", "max", "logsumexp"):
        if nd == 0:
            return None
        return int(rng.integers(-nd, nd)), bool(rng.random() < 0.5)
    if name == "transpose":
        return tuple(int(i) for i in rng.permutation(nd)) if nd >= 2 else None
    if name in ("reverse", "cumsum", "concat_self"):
        return int(rng.integers(0, nd)) if nd else None
    if name == "slice":
        if nd == 0:
            return None
        axis = int(rng.integers(0, nd))
        return (axis, int(rng.integers(0, shape[axis]))) if shape[axis] > 1 else None
    if name == "reshape_flat":
        return 0 if nd >= 2 else None
    if name == "expand_sum":
        return int(rng.integers(0, nd + 1))
    if name == "take":
        if nd == 0:
            return None
        axis = int(rng.integers(0, nd))
        return axis, [int(i) for i in rng.integers(0, shape[axis], 3)]
    raise AssertionError(name)


def _out_shape(name: str, shape: tuple[int, ...], param: Any) -> tuple[int, ...]:
    dummy = np.zeros(shape)
    return tuple(np.shape(_apply_shape_op(name, dummy, param)))


def random_prog(shapes: list[tuple[int, ...]], seed: int) -> Prog:
    rng = np.random.default_rng(seed)
    vals: list[tuple[int, ...]] = list(shapes)
    nodes: list[Node] = []
    for _ in range(int(rng.integers(2, 9))):
        kind = rng.choice(["unary", "binary", "binary", "shape"])
        recent = list(range(len(vals)))[-5:]
        a = int(rng.choice(recent))
        if kind == "binary":
            partners = [i for i in range(len(vals)) if i != a and _compatible(vals[a], vals[i])]
            if partners:
                b = int(rng.choice(partners[-5:]))
                name = str(rng.choice(list(BINARY)))
                nodes.append(Node(name, (a, b)))
                vals.append(tuple(np.broadcast_shapes(vals[a], vals[b])))
                continue
            kind = "unary"
        if kind == "shape":
            name = str(rng.choice(SHAPE_OPS))
            param = _shape_op_param(name, vals[a], rng)
            if param is not None:
                out = _out_shape(name, vals[a], param)
                if 0 < int(np.prod(out)) <= 200 and len(out) <= 4:
                    nodes.append(Node(name, (a,), param))
                    vals.append(out)
                    continue
        name = str(rng.choice(list(UNARY)))
        nodes.append(Node(name, (a,)))
        vals.append(vals[a])
    n = len(vals)
    outputs = (n - 1,) if rng.random() < 0.6 else (n - 1, int(rng.integers(len(shapes), n)))
    return Prog(list(shapes), nodes, outputs, seed)


def _compatible(s: tuple[int, ...], t: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(s, t)
    except ValueError:
        return False
    return True


def run_prog(prog: Prog, *args: Any) -> tuple[Any, ...]:
    vals = list(args)
    for node in prog.nodes:
        xs = [vals[i] for i in node.args]
        if node.op in UNARY:
            vals.append(UNARY[node.op](xs[0]))
        elif node.op in BINARY:
            vals.append(BINARY[node.op](xs[0], xs[1]))
        else:
            vals.append(_apply_shape_op(node.op, xs[0], node.param))
    return tuple(vals[i] for i in prog.outputs)


def close(a: Any, b: Any, tol: float, what: str, prog: Prog) -> None:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert a.shape == b.shape, (what, a.shape, b.shape, prog)
    scale = 1.0 + (float(np.max(np.abs(b))) if b.size else 0.0)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, err_msg=f"{what}: {prog!r}")


def _vdot(xs: Any, ys: Any) -> float:
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64))
                     for x, y in zip(xs, ys)))


@st.composite
def fuzz_cases(draw: Any) -> tuple[Prog, list[np.ndarray], np.random.Generator]:
    n_in = draw(st.integers(1, 3))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n_in, min_dims=0, max_dims=3,
                                                    min_side=1, max_side=4)).input_shapes
    seed = draw(st.integers(0, 2 ** 32 - 1))
    prog = random_prog([tuple(s) for s in shapes], seed)
    rng = np.random.default_rng(seed + 1)
    args = [rng.uniform(-2.0, 2.0, s) for s in prog.shapes]
    return prog, args, rng


@FUZZ
@given(fuzz_cases())
def test_random_programs_agree_across_transforms(case: Any) -> None:
    prog, args, rng = case
    f = lambda *xs: run_prog(prog, *xs)

    # eager == jit == eval_jaxpr(make_jaxpr)
    eager = f(*args)
    jitted = fg.jit(f)(*args)
    cj = fg.make_jaxpr(f)(*args)
    evaluated = fg.eval_jaxpr(cj, *args)
    assert len(jitted) == len(eager) == len(evaluated)
    for e, j, v in zip(eager, jitted, evaluated):
        assert np.shape(j) == np.shape(e) and np.asarray(j).dtype == np.float64
        close(j, e, 1e-12, "jit vs eager", prog)
        close(v, e, 1e-12, "eval_jaxpr(make_jaxpr) vs eager", prog)

    # vmap over a random axis of a random non-empty subset of the inputs == a loop
    size = 3
    batched = [bool(rng.random() < 0.6) for _ in args]
    if not any(batched):
        batched[int(rng.integers(0, len(args)))] = True
    in_axes, bargs = [], []
    for x, b in zip(args, batched):
        if not b:
            in_axes.append(None)
            bargs.append(x)
            continue
        ax = int(rng.integers(-(x.ndim + 1), x.ndim + 1))
        stacked = np.stack([x + 0.1 * k * rng.standard_normal(x.shape) for k in range(size)],
                           axis=ax)
        in_axes.append(ax)
        bargs.append(stacked)
    got = fg.vmap(f, in_axes=tuple(in_axes))(*bargs)
    per = [f(*[np.take(x, k, axis=ax) if ax is not None else x
               for x, ax in zip(bargs, in_axes)]) for k in range(size)]
    for i in range(len(eager)):
        close(got[i], np.stack([p[i] for p in per]), 1e-12, f"vmap in_axes={in_axes}", prog)
    # ... and vmap under jit is the same program again
    got_j = fg.jit(fg.vmap(f, in_axes=tuple(in_axes)))(*bargs)
    for g, gj in zip(got, got_j):
        close(gj, g, 1e-12, "jit(vmap) vs vmap", prog)

    # jvp tangent == central finite differences
    tangents = [rng.standard_normal(x.shape) for x in args]
    out, tan = fg.jvp(f, tuple(args), tuple(tangents))
    for o, e in zip(out, eager):
        close(o, e, 1e-12, "jvp primal vs eager", prog)
    eps = 1e-6
    plus = f(*[x + eps * t for x, t in zip(args, tangents)])
    minus = f(*[x - eps * t for x, t in zip(args, tangents)])
    for i, t in enumerate(tan):
        fd = (np.asarray(plus[i]) - np.asarray(minus[i])) / (2 * eps)
        close(t, fd, 2e-5, f"jvp vs finite differences (output {i})", prog)

    # vjp consistent with jvp: <vjp(u), v> == <u, jvp(v)>
    out_v, f_vjp = fg.vjp(f, *args)
    cotangents = tuple(rng.standard_normal(np.shape(o)) for o in out_v)
    in_cts = f_vjp(cotangents)
    lhs = _vdot(in_cts, tangents)
    rhs = _vdot(cotangents, tan)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1 + abs(rhs)),
                               err_msg=f"<vjp(u), v> vs <u, jvp(v)>: {prog!r}")
    for c, x in zip(in_cts, args):
        assert np.shape(c) == x.shape


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fuzz_cases())
def test_random_programs_grad_under_jit(case: Any) -> None:
    # the compiled derivative (jit of grad, and grad of jit) equals the eager one
    prog, args, _ = case

    def loss(*xs: Any) -> Any:
        return sum(fnp.sum(fnp.sin(o)) for o in run_prog(prog, *xs))

    argnums = tuple(range(len(args)))
    eager = fg.grad(loss, argnums=argnums)(*args)
    for got, what in ((fg.jit(fg.grad(loss, argnums=argnums))(*args), "jit(grad)"),
                      (fg.grad(fg.jit(loss), argnums=argnums)(*args), "grad(jit)")):
        for g, e in zip(got, eager):
            close(g, e, 1e-10, what, prog)
