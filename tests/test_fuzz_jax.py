"""Differential fuzzing against real JAX: small random programs, the same under both libraries.

Hypothesis draws a straight-line program over 1-2 float64 inputs of small shapes: 2-6 ops
drawn from elementwise math (kept well conditioned: bounded ``exp``, ``log1p(abs)``,
``sqrt(abs + 1)``, division by ``abs + 1``), binary ops (the second operand is an earlier
value of the same shape passed through ``0.7 * y + 0.13``, so no op ever meets itself at a
tie or a kink), reductions over a drawn axis, shape ops, indexing and ``matmul``, and
optionally a ``lax.cond`` or ``lax.fori_loop`` wrapper. A program is plain data (a
:class:`Prog` of op tuples); :func:`build` turns it into a function of ``m.numpy`` /
``m.nn`` / ``m.lax`` for ``m`` either ``funcgrad`` or ``jax``.

Each program is checked, in float64, for funcgrad == JAX (rtol 1e-9, atol 1e-12) under eval,
``jit``, ``vmap`` over an added batch axis, ``grad`` of the sum, ``jvp``, ``vjp``,
``jacfwd``, ``jacrev``, ``hessian`` of the sum and ``linearize``; and for funcgrad's own
consistency: ``jacfwd == jacrev``, ``jit == eager``, ``vmap ==`` a Python loop.

Input values come from a drawn seed (uniform on [-1.5, 1.5]), so that Hypothesis varies
programs, shapes and values without steering the values onto kinks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.testing import jax_x64_mode

RTOL, ATOL = 1e-9, 1e-12
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
# JAX's side costs one XLA compilation per program (~0.3 s); funcgrad alone is cheap.
FUZZ = settings(max_examples=32, deadline=None, suppress_health_check=_HEALTH)
FUZZ_SELF = settings(max_examples=150, deadline=None, suppress_health_check=_HEALTH)

Op = tuple[Any, ...]

# ------------------------------------------------------------------ the op tables

UNARY: dict[str, Callable[[Any, Any], Any]] = {  # name -> (m, x) -> y
    "sin": lambda m, x: m.numpy.sin(x),
    "cos": lambda m, x: m.numpy.cos(x),
    "tanh": lambda m, x: m.numpy.tanh(x),
    "exp_tanh": lambda m, x: m.numpy.exp(m.numpy.tanh(x)),
    "log1p_abs": lambda m, x: m.numpy.log1p(m.numpy.abs(x)),
    "sqrt_abs1": lambda m, x: m.numpy.sqrt(m.numpy.abs(x) + 1.0),
    "abs": lambda m, x: m.numpy.abs(x),
    "square": lambda m, x: m.numpy.square(x),
    "sigmoid": lambda m, x: m.nn.sigmoid(x),
}

BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {  # name -> (m, x, y) -> z
    "logaddexp": lambda m, x, y: m.numpy.logaddexp(x, y),
    "maximum": lambda m, x, y: m.numpy.maximum(x, y),
    "minimum": lambda m, x, y: m.numpy.minimum(x, y),
    "where_pos": lambda m, x, y: m.numpy.where(x > 0, x, y),
    "multiply": lambda m, x, y: m.numpy.multiply(x, y),
    "add": lambda m, x, y: m.numpy.add(x, y),
    "subtract": lambda m, x, y: m.numpy.subtract(x, y),
    "divide_abs1": lambda m, x, y: m.numpy.divide(x, m.numpy.abs(y) + 1.0),
}

REDUCTIONS = ("sum", "mean", "max")
SHAPE_OPS = ("reshape", "transpose", "expand_dims", "concatenate", "slice")


@dataclasses.dataclass(frozen=True)
class Prog:
    """A straight-line program: ``values`` starts as the inputs; each op reads the last value
    (and for binary ops / matmul an earlier one, by index) and appends its result; the
    program returns the last value, through ``wrapper`` (None, "cond" or "fori")."""

    in_shapes: tuple[tuple[int, ...], ...]
    ops: tuple[Op, ...]
    wrapper: str | None
    seed: int


def _other(y: Any) -> Any:
    # Distinct from every value it meets: no ties (maximum(x, x)), no exact zeros (x - x).
    return 0.7 * y + 0.13


def apply_op(m: Any, op: Op, values: list[Any]) -> Any:
    jnp = m.numpy
    x = values[-1]
    kind = op[0]
    if kind == "unary":
        return UNARY[op[1]](m, x)
    if kind == "binary":
        return BINARY[op[1]](m, x, _other(values[op[2]]))
    if kind == "reduce":
        _, name, axis, keepdims = op
        return getattr(jnp, name)(x, axis=axis, keepdims=keepdims)
    if kind == "reshape":
        return jnp.reshape(x, op[1])
    if kind == "transpose":
        return jnp.transpose(x, op[1])
    if kind == "expand_dims":
        return jnp.expand_dims(x, op[1])
    if kind == "concatenate":
        return jnp.concatenate([x, 0.5 * x - 0.25], axis=op[1])
    if kind == "slice":
        _, axis, start, stop = op
        index = (slice(None),) * axis + (slice(start, stop),)
        return x[index]
    if kind == "matmul":
        _, j, transpose = op
        y = values[j]
        return jnp.matmul(x, jnp.transpose(y) if transpose else y) / 2.0
    raise ValueError(op)


def build(m: Any, prog: Prog) -> Callable[..., Any]:
    """The program as a function of ``len(prog.in_shapes)`` arrays, over ``m``'s ops."""
    jnp, lax = m.numpy, m.lax

    def body(*args: Any) -> Any:
        values = list(args)
        for op in prog.ops:
            values.append(apply_op(m, op, values))
        return values[-1]

    if prog.wrapper is None:
        return body
    if prog.wrapper == "cond":
        def with_cond(*args: Any) -> Any:
            return lax.cond(jnp.sum(args[0]) > 0.05, body,
                            lambda *a: 0.5 * body(*a) + 1.0, *args)
        return with_cond

    def with_fori(*args: Any) -> Any:
        def step(i: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
            shift = jnp.tanh(jnp.mean(body(*carry)))
            return (0.9 * carry[0] + 0.1 * shift,) + tuple(carry[1:])
        return body(*lax.fori_loop(0, 3, step, tuple(args)))
    return with_fori


# ------------------------------------------------------------------ drawing programs


def _draw_op(draw: Any, shapes: list[tuple[int, ...]]) -> tuple[Op, tuple[int, ...]]:
    shape = shapes[-1]
    nd = len(shape)
    kinds = ["unary", "binary"] * 2  # the math ops twice as likely as each other kind
    if nd >= 1:
        kinds += ["reduce", "transpose", "concatenate", "reshape"]
        if any(d >= 2 for d in shape):
            kinds.append("slice")
    if nd <= 2:
        kinds.append("expand_dims")
    mm = [j for j, s in enumerate(shapes) if nd in (1, 2) and len(s) in (1, 2)
          and s[0] == shape[-1]]
    mm_t = [j for j, s in enumerate(shapes) if nd in (1, 2) and len(s) == 2
            and s[-1] == shape[-1]]
    if mm or mm_t:
        kinds.append("matmul")
    kind = draw(st.sampled_from(kinds))
    z = np.zeros(shape)
    if kind == "unary":
        return ("unary", draw(st.sampled_from(sorted(UNARY)))), shape
    if kind == "binary":
        same = [j for j, s in enumerate(shapes) if s == shape]
        return ("binary", draw(st.sampled_from(sorted(BINARY))), draw(st.sampled_from(same))), shape
    if kind == "reduce":
        op = ("reduce", draw(st.sampled_from(REDUCTIONS)), draw(st.integers(-nd, nd - 1)),
              draw(st.booleans()))
        return op, np.sum(z, axis=op[2], keepdims=op[3]).shape
    if kind == "transpose":
        perm = tuple(draw(st.permutations(range(nd))))
        return ("transpose", perm), np.transpose(z, perm).shape
    if kind == "concatenate":
        axis = draw(st.integers(-nd, nd - 1))
        return ("concatenate", axis), np.concatenate([z, z], axis=axis).shape
    if kind == "reshape":
        size = z.size
        divisors = [d for d in range(1, size + 1) if size % d == 0]
        rank = draw(st.integers(1, 3))
        new: list[int] = []
        left = size
        for _ in range(rank - 1):
            d = draw(st.sampled_from([d for d in divisors if left % d == 0]))
            new.append(d)
            left //= d
        new.append(left)
        if draw(st.booleans()):
            new[draw(st.integers(0, len(new) - 1))] = -1
        return ("reshape", tuple(new)), np.reshape(z, new).shape
    if kind == "slice":
        axis = draw(st.sampled_from([a for a, d in enumerate(shape) if d >= 2]))
        start = draw(st.integers(0, shape[axis] - 1))
        stop = draw(st.integers(start + 1, shape[axis]))
        return ("slice", axis, start, stop), z[(slice(None),) * axis + (slice(start, stop),)].shape
    if kind == "expand_dims":
        axis = draw(st.integers(-nd - 1, nd))
        return ("expand_dims", axis), np.expand_dims(z, axis).shape
    # matmul
    choices = [(j, False) for j in mm] + [(j, True) for j in mm_t]
    j, transpose = draw(st.sampled_from(choices))
    y = np.zeros(shapes[j])
    return ("matmul", j, transpose), np.matmul(z, y.T if transpose else y).shape


@st.composite
def programs(draw: Any) -> Prog:
    n_in = draw(st.integers(1, 2))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    shape2 = shape
    if n_in == 2 and draw(st.booleans()):  # a second input shaped for matmul
        shape2 = (shape[-1], draw(st.integers(1, 3)))
    in_shapes = (shape, shape2)[:n_in]
    shapes = list(in_shapes)
    ops = []
    for _ in range(draw(st.integers(2, 6))):
        op, out = _draw_op(draw, shapes)
        ops.append(op)
        shapes.append(tuple(out))
    wrapper = draw(st.sampled_from([None, None, "cond", "fori"]))
    return Prog(in_shapes, tuple(ops), wrapper, draw(st.integers(0, 2**32 - 1)))


def inputs(prog: Prog, batch: int | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(prog.seed + (0 if batch is None else 1))
    lead = () if batch is None else (batch,)
    return [rng.uniform(-1.5, 1.5, lead + s) for s in prog.in_shapes]


# ------------------------------------------------------------------ comparing


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in funcgrad.tree_util.tree_leaves(tree)]


def assert_close(got: Any, want: Any, what: str) -> None:
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), f"{what}: {len(g)} leaves vs {len(w)}"
    for k, (a, b) in enumerate(zip(g, w)):
        assert a.shape == b.shape, f"{what}[{k}]: shape {a.shape} vs {b.shape}"
        assert a.dtype == b.dtype == np.float64, f"{what}[{k}]: dtype {a.dtype} vs {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"{what}[{k}]")


def _transforms(m: Any, f: Callable[..., Any], args: list[np.ndarray],
                batched: list[np.ndarray], tangents: list[np.ndarray],
                cot: np.ndarray, hess: bool) -> dict[str, Any]:
    """Every transform of ``f`` under library ``m``, as a dict name -> pytree of arrays."""
    jnp = m.numpy
    args = [jnp.asarray(a) for a in args]
    argnums = tuple(range(len(args)))
    total = lambda *a: jnp.sum(f(*a))
    out: dict[str, Any] = {"eval": f(*args), "jit": m.jit(f)(*args),
                           "vmap": m.vmap(f)(*[jnp.asarray(b) for b in batched])}
    out["grad"] = m.grad(total, argnums=argnums)(*args)
    out["jvp"] = m.jvp(f, tuple(args), tuple(jnp.asarray(t) for t in tangents))
    primal, pullback = m.vjp(f, *args)
    out["vjp"] = (primal, pullback(jnp.asarray(cot)))
    out["jacfwd"] = m.jacfwd(f, argnums=argnums)(*args)
    out["jacrev"] = m.jacrev(f, argnums=argnums)(*args)
    if hess:
        out["hessian"] = m.hessian(lambda x: total(x, *args[1:]))(args[0])
    primal, f_jvp = m.linearize(f, *args)
    out["linearize"] = (primal, f_jvp(*[jnp.asarray(t) for t in tangents]))
    return out


def _case(prog: Prog) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                               np.ndarray, bool]:
    args = inputs(prog)
    batched = inputs(prog, batch=2)
    rng = np.random.default_rng(prog.seed + 2)
    tangents = [rng.uniform(-1.0, 1.0, a.shape) for a in args]
    out_shape = np.shape(build(funcgrad, prog)(*[fnp.asarray(a) for a in args]))
    cot = rng.uniform(-1.0, 1.0, out_shape)
    hess = args[0].size <= 6
    return args, batched, tangents, cot, hess


# ------------------------------------------------------------------ the tests


@FUZZ_SELF
@given(programs())
def test_self_consistent(prog: Prog) -> None:
    """funcgrad alone: jit == eager, vmap == a Python loop, jacfwd == jacrev."""
    f = build(funcgrad, prog)
    args = [fnp.asarray(a) for a in inputs(prog)]
    batched = [fnp.asarray(b) for b in inputs(prog, batch=2)]
    argnums = tuple(range(len(args)))
    assert_close(funcgrad.jit(f)(*args), f(*args), "jit vs eager")
    loop = fnp.stack([f(*[b[k] for b in batched]) for k in range(2)])
    assert_close(funcgrad.vmap(f)(*batched), loop, "vmap vs loop")
    assert_close(funcgrad.jacfwd(f, argnums=argnums)(*args),
                 funcgrad.jacrev(f, argnums=argnums)(*args), "jacfwd vs jacrev")


@FUZZ
@given(programs())
def test_matches_jax(prog: Prog) -> None:
    """funcgrad == JAX, program by program, under every transform."""
    jax = pytest.importorskip("jax")
    args, batched, tangents, cot, hess = _case(prog)
    got = _transforms(funcgrad, build(funcgrad, prog), args, batched, tangents, cot, hess)
    with jax_x64_mode(jax, True):
        # One XLA compilation for all of JAX's transforms of the program keeps this fast.
        oracle = jax.jit(lambda *a: _transforms(jax, build(jax, prog), *a, hess))
        want = oracle(args, batched, tangents, cot)
    assert got.keys() == want.keys()
    for name in got:
        assert_close(got[name], want[name], f"{name} of {prog}")


# ------------------------------------------------------------------ fixed programs


def test_build_same_under_both_wrappers() -> None:
    """A fixed program under each wrapper (a smoke test of :func:`build`, JAX-free)."""
    ops = (("unary", "sin"), ("binary", "maximum", 0), ("reduce", "sum", 0, True))
    for wrapper in (None, "cond", "fori"):
        prog = Prog(((3,),), ops, wrapper, 0)
        y = build(funcgrad, prog)(fnp.asarray(inputs(prog)[0]))
        assert np.shape(y) == (1,)
