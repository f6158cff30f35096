"""Random straight-line programs for differential fuzzing of the JAX face against JAX.

A program is plain data (a :class:`Prog`: input shapes, a dtype, a tuple of op tuples, a
wrapper and a value seed), so that a failure can be written to JSON and replayed. Each op
tuple is ``(name, *params)``; ``OPS[name]`` holds how it is drawn (``draw``, from a
:class:`Drawer`: Hypothesis in the tests, a seeded NumPy generator in ``scripts/fuzz.py``)
and how it is applied to the running values (``apply(m, x, values, *params)`` with ``m``
either ``funcgrad`` or ``jax``). Every op reads the last value ``x`` (binary ops also an
earlier value, by index) and appends its result, of the program's float dtype.

Values stay away from kinks, poles and domain edges the way the op is written (``log`` of
``abs(x) + 1``, the second operand of a binary op is ``0.7 * y + 0.13`` of an earlier value,
so no op meets itself at a tie), not by steering the drawn values.
:func:`run_transforms` runs a program under every transform; ``jax.jit`` of it costs one
XLA compilation per program.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

Op = tuple[Any, ...]

# ------------------------------------------------------------------ drawing


class Drawer(Protocol):
    def integer(self, lo: int, hi: int) -> int: ...
    def choice(self, seq: Sequence[Any]) -> Any: ...
    def boolean(self) -> bool: ...


class RngDrawer:
    """Draws from a seeded NumPy generator (the fuzz script)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[int(self.rng.integers(0, len(seq)))]

    def boolean(self) -> bool:
        return bool(self.rng.random() < 0.5)


class HypothesisDrawer:
    """Draws through Hypothesis's ``draw`` (the tests: Hypothesis shrinks the program)."""

    def __init__(self, draw: Any) -> None:
        from hypothesis import strategies as st
        self.draw, self.st = draw, st

    def integer(self, lo: int, hi: int) -> int:
        return int(self.draw(self.st.integers(lo, hi)))

    def choice(self, seq: Sequence[Any]) -> Any:
        return seq[self.integer(0, len(seq) - 1)]

    def boolean(self) -> bool:
        return bool(self.draw(self.st.booleans()))


# ------------------------------------------------------------------ the program


@dataclasses.dataclass(frozen=True)
class Prog:
    """A straight-line program over ``len(in_shapes)`` inputs of ``dtype``; it returns the
    last value, through ``wrapper`` (see :data:`WRAPPERS`)."""

    in_shapes: tuple[tuple[int, ...], ...]
    ops: tuple[Op, ...]
    wrapper: str | None
    seed: int
    dtype: str = "float64"

    def to_json(self) -> dict[str, Any]:
        return {"in_shapes": [list(s) for s in self.in_shapes], "ops": _jsonable(self.ops),
                "wrapper": self.wrapper, "seed": self.seed, "dtype": self.dtype}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Prog:
        return Prog(tuple(tuple(s) for s in d["in_shapes"]),
                    tuple(_tuplify(op) for op in d["ops"]), d["wrapper"], d["seed"],
                    d.get("dtype", "float64"))


def _jsonable(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return [_jsonable(v) for v in x]
    if isinstance(x, slice):
        return {"slice": [x.start, x.stop, x.step]}
    return x


def _tuplify(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_tuplify(v) for v in x)
    if isinstance(x, dict) and "slice" in x:
        return slice(*x["slice"])
    return x


def prog_json(prog: Prog) -> str:
    return json.dumps(prog.to_json())


# ------------------------------------------------------------------ helpers used by ops


def _other(y: Any) -> Any:
    # Distinct from every value it meets: no ties (maximum(x, x)), no exact zeros (x - x).
    return 0.7 * y + 0.13


def _const(x: Any, shape: tuple[int, ...], salt: int = 0) -> np.ndarray:
    """A fixed constant in ``x``'s dtype, its entries distinct and away from zero."""
    n = int(np.prod(shape, dtype=int))
    vals = np.linspace(-1.0, 1.0, n) + 0.05 * (salt + 1) + 0.01 * np.arange(n) ** 1.5 / (n + 1)
    return np.asarray(vals.reshape(shape), dtype=x.dtype)


def _pos(m: Any, x: Any) -> Any:
    return m.numpy.abs(x) + 0.5


def _traced_index(m: Any, x: Any, n: int) -> Any:
    # An integer that depends on x's values (a tracer under jit/vmap, batched under vmap).
    return m.numpy.argmax(m.numpy.ravel(m.lax.stop_gradient(x))) % n


@dataclasses.dataclass(frozen=True)
class OpSpec:
    apply: Callable[..., Any]                     # (m, x, values, *params) -> value
    draw: Callable[[Drawer, tuple[int, ...], list[tuple[int, ...]]], Op | None]
    forward_only: bool = False                    # JAX has no reverse mode through it
    reverse_only: bool = False                    # JAX has no forward mode through it


OPS: dict[str, OpSpec] = {}


def _no_params(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op:
    return ()


def _elementwise(name: str, fn: Callable[[Any, Any], Any]) -> None:
    OPS[name] = OpSpec(lambda m, x, values: fn(m, x), _no_params)


UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "sin": lambda m, x: m.numpy.sin(x),
    "cos": lambda m, x: m.numpy.cos(x),
    "tan_tanh": lambda m, x: m.numpy.tan(m.numpy.tanh(x)),
    "tanh": lambda m, x: m.numpy.tanh(x),
    "exp_tanh": lambda m, x: m.numpy.exp(m.numpy.tanh(x)),
    "expm1_tanh": lambda m, x: m.numpy.expm1(m.numpy.tanh(x)),
    "exp2_tanh": lambda m, x: m.numpy.exp2(m.numpy.tanh(x)),
    "log_abs1": lambda m, x: m.numpy.log(m.numpy.abs(x) + 1.0),
    "log1p_abs": lambda m, x: m.numpy.log1p(m.numpy.abs(x)),
    "log2_pos": lambda m, x: m.numpy.log2(_pos(m, x)),
    "log10_pos": lambda m, x: m.numpy.log10(_pos(m, x)),
    "sqrt_abs1": lambda m, x: m.numpy.sqrt(m.numpy.abs(x) + 1.0),
    "cbrt": lambda m, x: m.numpy.cbrt(x + 3.0),
    "rsqrt_pos": lambda m, x: m.lax.rsqrt(_pos(m, x)),
    "reciprocal_pos": lambda m, x: m.numpy.reciprocal(_pos(m, x)),
    "abs": lambda m, x: m.numpy.abs(x),
    "square": lambda m, x: m.numpy.square(x),
    "negative": lambda m, x: m.numpy.negative(x),
    "positive": lambda m, x: m.numpy.positive(x),
    "sign_mul": lambda m, x: m.numpy.sign(x) * x,
    "floor": lambda m, x: m.numpy.floor(2.0 * x) + x,
    "ceil": lambda m, x: m.numpy.ceil(2.0 * x) * x,
    "round": lambda m, x: m.numpy.round(3.0 * x) + x,
    "round_decimals": lambda m, x: m.numpy.round(x, 1) * x,
    "trunc": lambda m, x: m.numpy.trunc(2.0 * x) + x,
    "rint": lambda m, x: m.numpy.rint(2.0 * x) - x,
    "arctan": lambda m, x: m.numpy.arctan(x),
    "arcsinh": lambda m, x: m.numpy.arcsinh(x),
    "arccosh_pos": lambda m, x: m.numpy.arccosh(m.numpy.abs(x) + 1.5),
    "arcsin_tanh": lambda m, x: m.numpy.arcsin(0.9 * m.numpy.tanh(x)),
    "arccos_tanh": lambda m, x: m.numpy.arccos(0.9 * m.numpy.tanh(x)),
    "arctanh_tanh": lambda m, x: m.numpy.arctanh(0.9 * m.numpy.tanh(x)),
    "sinh": lambda m, x: m.numpy.sinh(x),
    "cosh": lambda m, x: m.numpy.cosh(x),
    "sinc": lambda m, x: m.numpy.sinc(x + 0.3),
    "deg2rad": lambda m, x: m.numpy.deg2rad(x),
    "rad2deg": lambda m, x: m.numpy.rad2deg(x) / 60.0,
    "erf": lambda m, x: m.scipy.special.erf(x),
    "erfc": lambda m, x: m.scipy.special.erfc(x),
    "erf_inv": lambda m, x: m.lax.erf_inv(0.9 * m.numpy.tanh(x)),
    "gammaln_pos": lambda m, x: m.scipy.special.gammaln(_pos(m, x)),
    "digamma_pos": lambda m, x: m.scipy.special.digamma(_pos(m, x) + 0.5),
    "log_ndtr": lambda m, x: m.scipy.special.log_ndtr(x),
    "ndtr": lambda m, x: m.scipy.special.ndtr(x),
    "expit": lambda m, x: m.scipy.special.expit(x),
    "sigmoid": lambda m, x: m.nn.sigmoid(x),
    "softplus": lambda m, x: m.nn.softplus(x),
    "relu": lambda m, x: m.nn.relu(x),
    "relu6": lambda m, x: m.nn.relu6(4.0 * x),
    "silu": lambda m, x: m.nn.silu(x),
    "gelu_tanh": lambda m, x: m.nn.gelu(x),
    "gelu_erf": lambda m, x: m.nn.gelu(x, approximate=False),
    "elu": lambda m, x: m.nn.elu(x),
    "selu": lambda m, x: m.nn.selu(x),
    "celu": lambda m, x: m.nn.celu(x, 0.5),
    "leaky_relu": lambda m, x: m.nn.leaky_relu(x, 0.1),
    "log_sigmoid": lambda m, x: m.nn.log_sigmoid(x),
    "soft_sign": lambda m, x: m.nn.soft_sign(x),
    "hard_tanh": lambda m, x: m.nn.hard_tanh(1.5 * x),
    "hard_sigmoid": lambda m, x: m.nn.hard_sigmoid(3.0 * x),
    "hard_swish": lambda m, x: m.nn.hard_swish(3.0 * x),
    "mish": lambda m, x: m.nn.mish(x),
    "squareplus": lambda m, x: m.nn.squareplus(x),
    "sparse_plus": lambda m, x: m.nn.sparse_plus(x),
    "integer_pow3": lambda m, x: m.lax.integer_pow(x, 3),
    "lax_logistic": lambda m, x: m.lax.logistic(x),
    "lax_square": lambda m, x: m.lax.square(x),
    "nan_to_num": lambda m, x: m.numpy.nan_to_num(x),
    "stop_gradient_mul": lambda m, x: m.lax.stop_gradient(x) * x,
    "conj": lambda m, x: m.numpy.conj(x) * x,
    "real": lambda m, x: m.numpy.real(x) + x,
    "conj_method": lambda m, x: x.conj() - 0.5 * x,
    "pow_int": lambda m, x: x ** 3,
    "pow_float": lambda m, x: _pos(m, x) ** 1.5,
    "pow_neg": lambda m, x: _pos(m, x) ** -1,
    "rpow": lambda m, x: 2.0 ** x,
    # Python scalars on either side (weak types: the result keeps x's dtype)
    "radd_int": lambda m, x: 2 + x,
    "add_float": lambda m, x: x + 0.5,
    "rsub": lambda m, x: 1.5 - x,
    "sub_int": lambda m, x: x - 1,
    "rmul_int": lambda m, x: 3 * x,
    "mul_float": lambda m, x: x * 0.25,
    "rdiv": lambda m, x: 1.0 / (m.numpy.abs(x) + 1.0),
    "div_int": lambda m, x: x / 2,
    "mod_scalar": lambda m, x: x % 0.7,
    "rmod": lambda m, x: 0.9 % _pos(m, x),
    "floordiv_scalar": lambda m, x: (x // 0.3) * x,
    "maximum_scalar": lambda m, x: m.numpy.maximum(x, 0.1),
    "minimum_rscalar": lambda m, x: m.numpy.minimum(0.2, x),
    "where_scalar": lambda m, x: m.numpy.where(x > 0.1, x, 0.0),
    "where_rscalar": lambda m, x: m.numpy.where(x > 0.1, -1, x),
    "clip": lambda m, x: m.numpy.clip(x, -0.5, 0.8),
    "clip_upper": lambda m, x: m.numpy.clip(x, None, 0.3),
    "logaddexp_scalar": lambda m, x: m.numpy.logaddexp(0.0, 20.0 * x),
    "lax_add_scalar": lambda m, x: m.lax.add(x, 1.0),
    "lax_max_scalar": lambda m, x: m.lax.max(x, 0.2),
    "where_const_mask": lambda m, x: m.numpy.where(_const(x, tuple(x.shape)) > 0, x, 0.5 * x),
    "lax_select": lambda m, x: m.lax.select(x > 0.1, x, 2.0 * x),
    "jit_inner": lambda m, x: m.jit(lambda v: m.numpy.sin(v) * 2.0 + v)(x),
    "jit_nested": lambda m, x: m.jit(lambda v: m.jit(m.numpy.cos)(v) * v)(x),
    "checkpoint": lambda m, x: m.checkpoint(lambda v: m.numpy.sin(m.numpy.sin(v)))(x),
    "cond_op": lambda m, x: m.lax.cond(m.numpy.sum(x) > 0.05, m.numpy.sin,
                                       lambda v: 0.5 * v * v, x),
    "switch_op": lambda m, x: m.lax.switch(
        _traced_index(m, x, 3),
        [m.numpy.sin, lambda v: 0.5 * m.numpy.cos(v), lambda v: 2.0 * m.numpy.tanh(v)], x),
    "fori_op": lambda m, x: m.lax.fori_loop(
        0, 3, lambda i, c: 0.9 * c + 0.1 * m.numpy.sin(c + i), x),
    "fori_traced_trip": lambda m, x: x + m.lax.fori_loop(
        0, 2, lambda i, c: c + m.numpy.cos(c), m.lax.stop_gradient(x)),
    "while_sg": lambda m, x: x * m.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, 0.5 * c[1] + 0.1),
        (0, m.lax.stop_gradient(x)))[1],
    "custom_jvp_op": lambda m, x: _custom_jvp_softplus(m)(x),
    "custom_jvp_scaled": lambda m, x: _custom_jvp_scaled(m)(x),
}
for _name, _ufn in UNARY.items():
    _elementwise(_name, _ufn)

# JAX refuses reverse mode through while_loop and forward mode through custom_vjp
OPS["while_op"] = OpSpec(
    lambda m, x, values: m.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, 0.8 * c[1] + 0.1 * m.numpy.sin(c[1])),
        (0, x))[1],
    _no_params, forward_only=True)
OPS["custom_vjp_op"] = OpSpec(lambda m, x, values: _custom_vjp_sin(m)(x), _no_params,
                              reverse_only=True)


def _custom_jvp_softplus(m: Any) -> Any:
    jnp = m.numpy

    @m.custom_jvp
    def f(x: Any) -> Any:
        return jnp.logaddexp(x, 0.0)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return f(x), m.nn.sigmoid(x) * t
    return f


def _custom_jvp_scaled(m: Any) -> Any:
    # A rule that is not the function's derivative: both libraries must use the rule.
    jnp = m.numpy

    @m.custom_jvp
    def f(x: Any) -> Any:
        return jnp.sin(x)

    f.defjvps(lambda t, ans, x: 2.0 * jnp.cos(x) * t)
    return f


def _custom_vjp_sin(m: Any) -> Any:
    jnp = m.numpy

    @m.custom_vjp
    def f(x: Any) -> Any:
        return jnp.sin(x)

    def fwd(x: Any) -> Any:
        return jnp.sin(x), jnp.cos(x)

    def bwd(c: Any, g: Any) -> Any:
        return (3.0 * c * g,)

    f.defvjp(fwd, bwd)
    return f


BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda m, x, y: m.numpy.add(x, y),
    "subtract": lambda m, x, y: m.numpy.subtract(x, y),
    "multiply": lambda m, x, y: m.numpy.multiply(x, y),
    "divide_abs1": lambda m, x, y: m.numpy.divide(x, m.numpy.abs(y) + 1.0),
    "true_divide": lambda m, x, y: m.numpy.true_divide(y, _pos(m, x)),
    "maximum": lambda m, x, y: m.numpy.maximum(x, y),
    "minimum": lambda m, x, y: m.numpy.minimum(x, y),
    "fmax": lambda m, x, y: m.numpy.fmax(x, y),
    "fmin": lambda m, x, y: m.numpy.fmin(x, y),
    "where_pos": lambda m, x, y: m.numpy.where(x > 0, x, y),
    "where_gt": lambda m, x, y: m.numpy.where(x > y, x * y, y),
    "logaddexp": lambda m, x, y: m.numpy.logaddexp(x, y),
    "logaddexp2": lambda m, x, y: m.numpy.logaddexp2(x, y),
    "arctan2": lambda m, x, y: m.numpy.arctan2(x, y),
    "hypot": lambda m, x, y: m.numpy.hypot(x, y),
    "power_pos": lambda m, x, y: m.numpy.power(_pos(m, x), y),
    "float_power_pos": lambda m, x, y: m.numpy.float_power(_pos(m, y), x),
    "mod_pos": lambda m, x, y: m.numpy.mod(x, _pos(m, y)),
    "fmod_pos": lambda m, x, y: m.numpy.fmod(x, _pos(m, y)),
    "remainder_pos": lambda m, x, y: m.numpy.remainder(y, _pos(m, x)),
    "copysign": lambda m, x, y: m.numpy.copysign(x, y),
    "floor_divide_pos": lambda m, x, y: m.numpy.floor_divide(x, _pos(m, y)) * y,
    "xlogy": lambda m, x, y: m.scipy.special.xlogy(x, _pos(m, y)),
    "xlog1py": lambda m, x, y: m.scipy.special.xlog1py(x, m.numpy.abs(y)),
    "lax_max": lambda m, x, y: m.lax.max(*m.numpy.broadcast_arrays(x, y)),
    "lax_min": lambda m, x, y: m.lax.min(*m.numpy.broadcast_arrays(x, y)),
    "lax_select_gt": lambda m, x, y: m.lax.select(*_select_args(m, x, y)),
    "lax_pow": lambda m, x, y: m.lax.pow(*m.numpy.broadcast_arrays(_pos(m, x), y)),
    "squared_diff": lambda m, x, y: (x - y) ** 2,
    "clip_both": lambda m, x, y: m.numpy.clip(x, -m.numpy.abs(y) - 0.1, m.numpy.abs(y) + 0.1),
    "heaviside_mul": lambda m, x, y: m.numpy.heaviside(x, 0.5) * y,
    "operators": lambda m, x, y: (x + y) * x - y / (y * y + 1.0),
}


def _select_args(m: Any, x: Any, y: Any) -> tuple[Any, Any, Any]:
    x, y = m.numpy.broadcast_arrays(x, y)
    return x > y, x, y


def _broadcastable(s: tuple[int, ...], t: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(s, t)
    except ValueError:
        return False
    return True


def _draw_partner(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    partners = [j for j, s in enumerate(shapes) if _broadcastable(shape, s)
                and int(np.prod(np.broadcast_shapes(shape, s))) <= 64
                and len(np.broadcast_shapes(shape, s)) <= 4]
    if not partners:
        return None
    return (d.choice(partners),)


def _binary(fn: Callable[[Any, Any, Any], Any]) -> OpSpec:
    return OpSpec(lambda m, x, values, j: fn(m, x, _other(values[j])), _draw_partner)


for _name, _bfn in BINARY.items():
    OPS[_name] = _binary(_bfn)

# ------------------------------------------------------------------ reductions


def _draw_axis(d: Drawer, nd: int) -> Any:
    kind = d.integer(0, 3)
    if kind == 0 or nd == 0:
        return None
    if kind == 3 and nd >= 2:
        a, b = sorted(d.choice([(i, j) for i in range(nd) for j in range(nd) if i < j]))
        return (a - nd if d.boolean() else a, b)
    return d.integer(-nd, nd - 1)


def _reduce_draw(min_count: int = 1) -> Callable[..., Op | None]:
    def draw(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
        axis = _draw_axis(d, len(shape))
        axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
        if int(np.prod([shape[a] for a in axes], dtype=int)) < min_count:
            return None
        return (axis, d.boolean())
    return draw


def _axis_param(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, (list, tuple)) else axis


REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": lambda m, x, a, k: m.numpy.sum(x, axis=a, keepdims=k),
    "mean": lambda m, x, a, k: m.numpy.mean(x, axis=a, keepdims=k),
    "max": lambda m, x, a, k: m.numpy.max(x, axis=a, keepdims=k),
    "min": lambda m, x, a, k: m.numpy.min(x, axis=a, keepdims=k),
    "amax": lambda m, x, a, k: m.numpy.amax(x, axis=a, keepdims=k),
    "prod": lambda m, x, a, k: m.numpy.prod(0.5 * x + 1.0, axis=a, keepdims=k),
    "var": lambda m, x, a, k: m.numpy.var(x, axis=a, keepdims=k),
    "std": lambda m, x, a, k: m.numpy.std(x, axis=a, keepdims=k),
    "logsumexp": lambda m, x, a, k: m.scipy.special.logsumexp(x, axis=a, keepdims=k),
    "nn_logsumexp": lambda m, x, a, k: m.nn.logsumexp(x, axis=a, keepdims=k),
    "nansum": lambda m, x, a, k: m.numpy.nansum(x, axis=a, keepdims=k),
    "nanmean": lambda m, x, a, k: m.numpy.nanmean(x, axis=a, keepdims=k),
    "ptp": lambda m, x, a, k: m.numpy.ptp(x, axis=a, keepdims=k),
    "median": lambda m, x, a, k: m.numpy.median(x, axis=a, keepdims=k),
    "sum_method": lambda m, x, a, k: x.sum(axis=a, keepdims=k),
    "mean_method": lambda m, x, a, k: x.mean(axis=a, keepdims=k),
    "max_method": lambda m, x, a, k: x.max(axis=a, keepdims=k),
    "var_method": lambda m, x, a, k: x.var(axis=a, keepdims=k),
    "std_method": lambda m, x, a, k: x.std(axis=a, keepdims=k),
    "prod_method": lambda m, x, a, k: (x * 0.3 + 1.0).prod(axis=a, keepdims=k),
    "min_method": lambda m, x, a, k: x.min(axis=a, keepdims=k),
    "argmax_scale": lambda m, x, a, k: x / (1.0 + m.numpy.argmax(x, axis=a, keepdims=True))
    if not isinstance(a, tuple) else x,
    "argmin_scale": lambda m, x, a, k: x * (m.numpy.argmin(x, axis=a) + 2)
    if not isinstance(a, tuple) and (a is None or k) else x,
}
for _name, _rfn in REDUCTIONS.items():
    OPS[_name] = OpSpec(lambda m, x, values, a, k, _fn=_rfn: _fn(m, x, _axis_param(a), k),
                        _reduce_draw())
OPS["var_ddof1"] = OpSpec(
    lambda m, x, values, a, k: m.numpy.var(x, axis=_axis_param(a), keepdims=k, ddof=1),
    _reduce_draw(2))
OPS["std_ddof1"] = OpSpec(
    lambda m, x, values, a, k: m.numpy.std(x, axis=_axis_param(a), keepdims=k, ddof=1),
    _reduce_draw(2))
OPS["norm"] = OpSpec(
    lambda m, x, values, a, k: m.numpy.linalg.norm(x + 2.0, axis=_axis_param(a), keepdims=k),
    lambda d, s, ss: (d.integer(-len(s), len(s) - 1), d.boolean()) if s else None)


def _draw_one_axis(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    return (d.integer(-len(shape), len(shape) - 1),) if shape else None


AXIS_OPS: dict[str, Callable[[Any, Any, int], Any]] = {
    "cumsum": lambda m, x, a: m.numpy.cumsum(x, axis=a),
    "cumprod": lambda m, x, a: m.numpy.cumprod(0.5 * x + 1.0, axis=a),
    "lax_cumsum_rev": lambda m, x, a: m.lax.cumsum(x, axis=a % x.ndim, reverse=True),
    "sort": lambda m, x, a: m.numpy.sort(x, axis=a),
    "sort_desc": lambda m, x, a: -m.numpy.sort(-x, axis=a),
    "argsort_take": lambda m, x, a: m.numpy.take_along_axis(
        x, m.numpy.argsort(x, axis=a), axis=a),
    "argmax_take": lambda m, x, a: m.numpy.take_along_axis(
        x, m.numpy.argmax(x, axis=a, keepdims=True), axis=a),
    "diff": lambda m, x, a: m.numpy.diff(x, axis=a) if x.shape[a] > 1 else x,
    "softmax": lambda m, x, a: m.nn.softmax(x, axis=a),
    "log_softmax": lambda m, x, a: m.nn.log_softmax(x, axis=a),
    "standardize": lambda m, x, a: m.nn.standardize(x, axis=a) if x.shape[a] > 1 else x,
    "flip_axis": lambda m, x, a: m.numpy.flip(x, axis=a),
    "roll_axis": lambda m, x, a: m.numpy.roll(x, 1, axis=a),
    "roll_neg": lambda m, x, a: m.numpy.roll(x, -2, axis=a),
    "expand_dims": lambda m, x, a: m.numpy.expand_dims(x, a),
    "concatenate": lambda m, x, a: m.numpy.concatenate([x, 0.5 * x - 0.25], axis=a),
    "stack": lambda m, x, a: m.numpy.stack([x, x * 2.0], axis=a),
    "repeat": lambda m, x, a: m.numpy.repeat(x, 2, axis=a),
    "repeat_array": lambda m, x, a: m.numpy.repeat(
        x, np.arange(1, x.shape[a] + 1) % 3, axis=a,
        total_repeat_length=int(np.sum(np.arange(1, x.shape[a] + 1) % 3))),
    "split_swap": lambda m, x, a: m.numpy.concatenate(
        m.numpy.split(x, [1], axis=a)[::-1], axis=a),
    "array_split_first": lambda m, x, a: m.numpy.array_split(x, 2, axis=a)[0],
    "swapaxes_last": lambda m, x, a: m.numpy.swapaxes(x, a, -1),
    "moveaxis_first": lambda m, x, a: m.numpy.moveaxis(x, a, 0),
    "take_clip": lambda m, x, a: m.numpy.take(
        x, np.array([0, -1, x.shape[a] + 1, 1]), axis=a, mode="clip"),
    "take_wrap": lambda m, x, a: m.numpy.take(
        x, np.array([2, -1, x.shape[a] + 1, 0, 2]), axis=a, mode="wrap"),
    "take_repeated": lambda m, x, a: m.numpy.take(
        x, np.array([0, 0, x.shape[a] - 1]), axis=a),
    "int_array_index": lambda m, x, a: x[(slice(None),) * (a % x.ndim)
                                         + (np.array([x.shape[a] - 1, 0, -1, 0]),)],
    "int_index": lambda m, x, a: x[(slice(None),) * (a % x.ndim) + (-1,)],
    "take_along_axis": lambda m, x, a: m.numpy.take_along_axis(
        x, np.asarray(np.arange(x.size).reshape(x.shape) * 7 % x.shape[a]), axis=a),
    "dynamic_slice_in_dim": lambda m, x, a: m.lax.dynamic_slice_in_dim(
        x, _traced_index(m, x, x.shape[a]), max(1, x.shape[a] - 1), axis=a % x.ndim),
    "slice_in_dim": lambda m, x, a: m.lax.slice_in_dim(x, 0, x.shape[a], 2, axis=a % x.ndim),
    "scan_axis": lambda m, x, a: _scan_over(m, m.numpy.moveaxis(x, a, 0)),
    "scan_reverse": lambda m, x, a: _scan_over(m, m.numpy.moveaxis(x, a, 0), reverse=True),
    "vmap_inner": lambda m, x, a: m.vmap(lambda r: r * m.numpy.sum(m.numpy.sin(r)),
                                         in_axes=a % x.ndim)(x),
}
for _name, _afn in AXIS_OPS.items():
    OPS[_name] = OpSpec(lambda m, x, values, a, _fn=_afn: _fn(m, x, a), _draw_one_axis)
# expand_dims may also insert after the last axis
OPS["expand_dims"] = OpSpec(lambda m, x, values, a: m.numpy.expand_dims(x, a),
                            lambda d, s, ss: (d.integer(-len(s) - 1, len(s)),))
OPS["stack"] = OpSpec(lambda m, x, values, a: m.numpy.stack([x, x * 2.0], axis=a),
                      lambda d, s, ss: (d.integer(-len(s) - 1, len(s)),))


def _scan_over(m: Any, xs: Any, reverse: bool = False) -> Any:
    def step(c: Any, xi: Any) -> tuple[Any, Any]:
        c = 0.8 * c + m.numpy.sin(xi)
        return c, c * xi
    carry, ys = m.lax.scan(step, m.numpy.zeros_like(xs[0]), xs, reverse=reverse)
    return ys + carry


def _scan_no_xs(m: Any, x: Any) -> Any:
    carry, ys = m.lax.scan(lambda c, _: (m.numpy.tanh(c) + 0.3, c * 2.0), x, None, length=3)
    return carry + ys.sum(axis=0)


OPS["scan_length"] = OpSpec(lambda m, x, values: _scan_no_xs(m, x), _no_params)

# ------------------------------------------------------------------ shape ops


def _draw_reshape(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op:
    size = int(np.prod(shape, dtype=int))
    divisors = [k for k in range(1, size + 1) if size % k == 0]
    new: list[int] = []
    left = size
    for _ in range(d.integer(0, 2)):
        k = d.choice([k for k in divisors if left % k == 0])
        new.append(k)
        left //= k
    new.append(left)
    if d.boolean():
        new[d.integer(0, len(new) - 1)] = -1
    return (tuple(new),)


def _draw_perm(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    if len(shape) < 2:
        return None
    perm = list(range(len(shape)))
    for i in range(len(perm) - 1, 0, -1):
        j = d.integer(0, i)
        perm[i], perm[j] = perm[j], perm[i]
    return (tuple(perm),)


def _draw_slice(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    if not shape:
        return None
    axis = d.integer(0, len(shape) - 1)
    n = shape[axis]
    step = d.choice([1, 2, -1, -2])
    start = d.choice([None, d.integer(-n, n - 1)])
    stop = d.choice([None, d.integer(-n - 1, n)])
    if len(range(n)[slice(start, stop, step)]) == 0:
        return None
    return (axis, start, stop, step)


def _draw_squeeze(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    ones = [a for a, n in enumerate(shape) if n == 1]
    if not ones:
        return None
    return (d.choice([None, d.choice(ones), d.choice(ones) - len(shape)]),)


def _draw_pad(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    if not shape:
        return None
    mode = d.choice(["constant", "edge", "reflect", "symmetric", "wrap", "constant_value"])
    limit = 1 if mode in ("reflect", "wrap") else 2
    widths = tuple((d.integer(0, min(limit, n - (mode == "reflect"))),
                    d.integer(0, min(limit, n - (mode == "reflect")))) for n in shape)
    return (mode, widths)


def _pad(m: Any, x: Any, mode: str, widths: Any) -> Any:
    widths = tuple(tuple(w) for w in widths)
    if mode == "constant_value":
        return m.numpy.pad(x, widths, constant_values=0.75)
    return m.numpy.pad(x, widths, mode=mode)


def _draw_tile(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    reps = tuple(d.integer(1, 2) for _ in range(d.integer(1, max(1, len(shape)) + 1)))
    return (reps,)


def _draw_broadcast(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op:
    new = tuple(d.integer(1, 3) if n == 1 else n for n in shape)
    return ((d.integer(1, 2),) * d.integer(0, 1) + new,)


def _slice(x: Any, axis: int, start: Any, stop: Any, step: Any) -> Any:
    return x[(slice(None),) * axis + (slice(start, stop, step),)]


SHAPE_OPS: dict[str, OpSpec] = {
    "reshape": OpSpec(lambda m, x, values, new: m.numpy.reshape(x, new), _draw_reshape),
    "reshape_method": OpSpec(lambda m, x, values, new: x.reshape(new), _draw_reshape),
    "transpose": OpSpec(lambda m, x, values, p: m.numpy.transpose(x, p), _draw_perm),
    "transpose_method": OpSpec(lambda m, x, values, p: x.transpose(p), _draw_perm),
    "T": OpSpec(lambda m, x, values: x.T, _no_params),
    "ravel": OpSpec(lambda m, x, values: m.numpy.ravel(x), _no_params),
    "squeeze": OpSpec(lambda m, x, values, a: m.numpy.squeeze(x, a), _draw_squeeze),
    "broadcast_to": OpSpec(lambda m, x, values, s: m.numpy.broadcast_to(x, s), _draw_broadcast),
    "slice": OpSpec(lambda m, x, values, *p: _slice(x, *p), _draw_slice),
    "flip_all": OpSpec(lambda m, x, values: m.numpy.flip(x), _no_params),
    "roll_flat": OpSpec(lambda m, x, values: m.numpy.roll(x, 2), _no_params),
    "tile": OpSpec(lambda m, x, values, r: m.numpy.tile(x, r), _draw_tile),
    "pad": OpSpec(lambda m, x, values, mode, w: _pad(m, x, mode, w), _draw_pad),
    "atleast_2d": OpSpec(lambda m, x, values: m.numpy.atleast_2d(x), _no_params),
    "atleast_3d": OpSpec(lambda m, x, values: m.numpy.atleast_3d(x), _no_params),
    "newaxis_index": OpSpec(lambda m, x, values: x[..., None, :] if x.ndim else x[None],
                            _no_params),
    "ellipsis_reverse": OpSpec(lambda m, x, values: x[..., ::-1] if x.ndim else x, _no_params),
    "tril": OpSpec(lambda m, x, values: m.numpy.tril(x),
                   lambda d, s, ss: () if len(s) >= 2 else None),
    "triu": OpSpec(lambda m, x, values: m.numpy.triu(x, 1),
                   lambda d, s, ss: () if len(s) >= 2 else None),
    "diagonal": OpSpec(lambda m, x, values: m.numpy.diagonal(x),
                       lambda d, s, ss: () if len(s) >= 2 else None),
    "trace": OpSpec(lambda m, x, values: m.numpy.trace(x),
                    lambda d, s, ss: () if len(s) >= 2 else None),
    "diag": OpSpec(lambda m, x, values: m.numpy.diag(x),
                   lambda d, s, ss: () if len(s) == 1 else None),
    "bool_mask": OpSpec(lambda m, x, values: x[_const(x, tuple(x.shape), 3) > -0.2],
                        lambda d, s, ss: () if s else None),
    "bool_mask_axis0": OpSpec(
        lambda m, x, values: x[np.arange(x.shape[0]) % 2 == 0],
        lambda d, s, ss: () if s else None),
    "multi_array_index": OpSpec(
        lambda m, x, values: x[np.array([0, x.shape[0] - 1, 0]), np.array([[x.shape[1] - 1], [0]])],
        lambda d, s, ss: () if len(s) >= 2 else None),
    "traced_int_index": OpSpec(lambda m, x, values: x[_traced_index(m, x, x.shape[0])] * 2.0,
                               lambda d, s, ss: () if s else None),
    "table_index": OpSpec(
        lambda m, x, values: x * m.numpy.asarray(_const(x, (4,) + tuple(x.shape), 5))[
            _traced_index(m, x, 4)], _no_params),
}
OPS.update(SHAPE_OPS)

# ------------------------------------------------------------------ dynamic slices


def _draw_dyn(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    if not shape:
        return None
    sizes = tuple(d.integer(1, n) for n in shape)
    starts = tuple(d.choice([("int", d.integer(-1, n)), ("traced", 0)]) for n in shape)
    return (starts, sizes)


def _starts(m: Any, x: Any, starts: Any) -> list[Any]:
    return [v if kind == "int" else _traced_index(m, x, n)
            for (kind, v), n in zip(starts, x.shape)]


OPS["dynamic_slice"] = OpSpec(
    lambda m, x, values, starts, sizes: m.lax.dynamic_slice(x, _starts(m, x, starts), sizes),
    _draw_dyn)
OPS["dynamic_update_slice"] = OpSpec(
    lambda m, x, values, starts, sizes: m.lax.dynamic_update_slice(
        x, 2.0 * m.numpy.sin(x[tuple(slice(0, k) for k in sizes)]), _starts(m, x, starts)),
    _draw_dyn)

# ------------------------------------------------------------------ .at updates


def _draw_at(method: str) -> Callable[..., Op | None]:
    def draw(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
        if not shape:
            return None
        n = shape[0]
        kind = d.choice(["array", "slice", "tuple", "scalar_index"])
        modes = [None, "clip", "drop", "promise_in_bounds"] if method != "get" else [
            None, "clip", "fill", "promise_in_bounds"]
        mode = d.choice(modes)
        if kind == "array":
            k = d.integer(1, 4)
            lo, hi = (-n, n + 1) if mode in ("clip", "drop", "fill") else (-n, n - 1)
            idx = [d.integer(lo, hi) for _ in range(k)]
            if method == "set":  # repeated indices in set: JAX's order is unspecified
                idx = list(dict.fromkeys(i % n if -n <= i < n else i for i in idx))
            return (method, "array", tuple(idx), mode, d.boolean())
        if kind == "slice":
            start = d.integer(0, n - 1)
            return (method, "slice", (start, None, d.choice([1, -1, 2])), mode, d.boolean())
        if kind == "tuple" and len(shape) >= 2:
            return (method, "tuple", (d.integer(-n, n - 1), d.integer(0, shape[1] - 1)), mode,
                    d.boolean())
        return (method, "scalar_index", d.integer(-n, n - 1), mode, d.boolean())
    return draw


def _at_index(kind: str, idx: Any) -> Any:
    if kind == "array":
        return np.asarray(idx)
    if kind == "slice":
        return slice(*idx)
    if kind == "tuple":
        return tuple(idx)
    return idx


def _at(m: Any, x: Any, method: str, kind: str, idx: Any, mode: Any, scalar: bool) -> Any:
    index = _at_index(kind, idx)
    ref = x.at[index]
    kwargs: dict[str, Any] = {} if mode is None else {"mode": mode}
    if method == "get":
        if mode == "fill":
            kwargs["fill_value"] = 0.5
        return ref.get(**kwargs)
    shape = np.shape(np.zeros(tuple(x.shape))[index]) if mode is None or kind != "array" else (
        np.shape(np.zeros(tuple(x.shape))[np.clip(index, -x.shape[0], x.shape[0] - 1)]))
    if scalar:
        v: Any = 0.6
    else:
        # x-dependent, distinct per occurrence (no ties between repeated min/max updates)
        v = 0.7 * m.numpy.sin(x.ravel()[0]) + _const(x, shape, 7)
    return getattr(ref, method)(v, **kwargs)


for _method in ("set", "add", "multiply", "min", "max", "get"):
    OPS[f"at_{_method}"] = OpSpec(lambda m, x, values, *p: _at(m, x, *p), _draw_at(_method))

# ------------------------------------------------------------------ matmul family


def _draw_k(d: Drawer, shape: tuple[int, ...], shapes: list[tuple[int, ...]]) -> Op | None:
    return (d.integer(1, 3),) if shape else None


def _draw_matmul_partner(d: Drawer, shape: tuple[int, ...],
                         shapes: list[tuple[int, ...]]) -> Op | None:
    nd = len(shape)
    if nd not in (1, 2):
        return None
    choices = [(j, False) for j, s in enumerate(shapes) if len(s) in (1, 2) and s[0] == shape[-1]]
    choices += [(j, True) for j, s in enumerate(shapes) if len(s) == 2 and s[-1] == shape[-1]]
    return d.choice(choices) if choices else None


def _matmul_partner(m: Any, x: Any, values: list[Any], j: int, transpose: bool) -> Any:
    y = values[j]
    return m.numpy.matmul(x, m.numpy.transpose(y) if transpose else y) / 2.0


MATMUL: dict[str, OpSpec] = {
    "matmul_partner": OpSpec(_matmul_partner, _draw_matmul_partner),
    "matmul_const": OpSpec(lambda m, x, values, k: x @ _const(x, (x.shape[-1], k)), _draw_k),
    "rmatmul_const": OpSpec(
        lambda m, x, values, k: _const(x, (k, x.shape[-2] if x.ndim >= 2 else x.shape[0])) @ x,
        _draw_k),
    "matmul_self": OpSpec(lambda m, x, values: m.numpy.matmul(x, m.numpy.swapaxes(x, -1, -2)),
                          lambda d, s, ss: () if len(s) >= 2 else None),
    "dot_const": OpSpec(lambda m, x, values, k: m.numpy.dot(x, _const(x, (x.shape[-1], k))),
                        _draw_k),
    "dot_scalar": OpSpec(lambda m, x, values: m.numpy.dot(x, 1.5), _no_params),
    "tensordot": OpSpec(
        lambda m, x, values, k: m.numpy.tensordot(x, _const(x, (x.shape[0], k)), axes=([0], [0])),
        _draw_k),
    "tensordot_int": OpSpec(
        lambda m, x, values, k: m.numpy.tensordot(_const(x, (k,) + x.shape[:1]), x, axes=1),
        _draw_k),
    "einsum_last": OpSpec(
        lambda m, x, values, k: m.numpy.einsum("...i,ij->...j", x, _const(x, (x.shape[-1], k))),
        _draw_k),
    "einsum_self": OpSpec(lambda m, x, values: m.numpy.einsum("...i,...i->...", x, x + 0.5),
                          lambda d, s, ss: () if s else None),
    "einsum_outer": OpSpec(
        lambda m, x, values: m.numpy.einsum("i,j->ij", x.ravel()[:4], x.ravel()[-3:]),
        _no_params),
    "einsum_transpose_sum": OpSpec(lambda m, x, values: m.numpy.einsum("ij->j", x),
                                   lambda d, s, ss: () if len(s) == 2 else None),
    "einsum_batch": OpSpec(
        lambda m, x, values: m.numpy.einsum("bij,bkj->bik", x, m.numpy.sin(x)),
        lambda d, s, ss: () if len(s) == 3 else None),
    "outer": OpSpec(lambda m, x, values: m.numpy.outer(x, _const(x, (2,))), _no_params),
    "inner": OpSpec(lambda m, x, values: m.numpy.inner(x, _const(x, x.shape[-1:])),
                    lambda d, s, ss: () if s else None),
    "vdot": OpSpec(lambda m, x, values: m.numpy.vdot(x, _const(x, x.shape)), _no_params),
    "kron": OpSpec(lambda m, x, values, k: m.numpy.kron(x, _const(x, (k,) * ((x.ndim % 2) + 1))),
                   lambda d, s, ss: (d.integer(1, 2),)),
    "dot_general": OpSpec(
        lambda m, x, values, k: m.lax.dot_general(
            x, _const(x, (k, x.shape[-1])), (((x.ndim - 1,), (1,)), ((), ()))), _draw_k),
    "linalg_matmul_vec": OpSpec(
        lambda m, x, values: m.numpy.matmul(x, _const(x, x.shape[-1:])),
        lambda d, s, ss: () if s else None),
}
OPS.update(MATMUL)


# ------------------------------------------------------------------ building and drawing


def apply_op(m: Any, op: Op, values: list[Any]) -> Any:
    return OPS[op[0]].apply(m, values[-1], values, *op[1:])


WRAPPERS = (None, None, None, "cond", "switch", "fori", "scan", "jit", "custom_jvp",
            "custom_vjp", "while", "checkpoint")
FORWARD_ONLY_WRAPPERS = {"while"}
REVERSE_ONLY_WRAPPERS = {"custom_vjp"}


def build(m: Any, prog: Prog) -> Callable[..., Any]:
    """The program as a function of ``len(prog.in_shapes)`` arrays, over ``m``'s ops."""
    jnp, lax = m.numpy, m.lax

    def body(*args: Any) -> Any:
        values = list(args)
        for op in prog.ops:
            values.append(apply_op(m, op, values))
        return values[-1]

    w = prog.wrapper
    if w is None:
        return body
    if w == "cond":
        return lambda *args: lax.cond(jnp.sum(args[0]) > 0.05, body,
                                      lambda *a: 0.5 * body(*a) + 1.0, *args)
    if w == "switch":
        return lambda *args: lax.switch(_traced_index(m, args[0], 3),
                                        [body, lambda *a: 0.5 * body(*a) + 1.0,
                                         lambda *a: jnp.sin(body(*a))], *args)
    if w == "jit":
        return m.jit(body)
    if w == "checkpoint":
        return m.checkpoint(body)

    def shift(*carry: Any) -> Any:
        return jnp.tanh(jnp.mean(body(*carry)))

    if w == "fori":
        def with_fori(*args: Any) -> Any:
            def step(i: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
                return (0.9 * carry[0] + 0.1 * shift(*carry),) + tuple(carry[1:])
            return body(*lax.fori_loop(0, 3, step, tuple(args)))
        return with_fori
    if w == "while":
        def with_while(*args: Any) -> Any:
            def step(c: tuple[Any, ...]) -> tuple[Any, ...]:
                i, carry = c
                return i + 1, (0.9 * carry[0] + 0.1 * shift(*carry),) + tuple(carry[1:])
            return body(*lax.while_loop(lambda c: c[0] < 2, step, (0, tuple(args)))[1])
        return with_while
    if w == "scan":
        def with_scan(*args: Any) -> Any:
            def step(carry: tuple[Any, ...], s: Any) -> tuple[tuple[Any, ...], Any]:
                new = (0.9 * carry[0] + s * shift(*carry),) + tuple(carry[1:])
                return new, jnp.sum(body(*new))
            carry, ys = lax.scan(step, tuple(args), np.asarray([0.1, -0.2], dtype=args[0].dtype))
            return body(*carry) + jnp.sum(ys)
        return with_scan
    if w == "custom_jvp":
        f = m.custom_jvp(body)

        @f.defjvp
        def rule(primals: Any, tangents: Any) -> Any:
            return m.jvp(body, primals, tangents)
        return f
    if w == "custom_vjp":
        g = m.custom_vjp(body)
        g.defvjp(lambda *a: (body(*a), a), lambda res, ct: m.vjp(body, *res)[1](ct))
        return g
    raise ValueError(f"unknown wrapper {w!r}")


def out_shape(prog: Prog, shapes: list[tuple[int, ...]], op: Op) -> tuple[int, ...] | None:
    """The shape ``op`` gives after values of ``shapes`` (None when it is not a valid op):
    funcgrad's ``eval_shape``, JAX's where funcgrad's raises (a finding, kept)."""
    zs = [np.zeros(s, dtype=prog.dtype) for s in shapes]
    import funcgrad
    try:
        return tuple(funcgrad.eval_shape(lambda *v: apply_op(funcgrad, op, list(v)), *zs).shape)
    except Exception:
        pass
    try:
        import jax
    except ImportError:
        return None
    try:
        from funcgrad.testing import jax_x64_mode
        with jax_x64_mode(jax, True):
            return tuple(jax.eval_shape(lambda *v: apply_op(jax, op, list(v)), *zs).shape)
    except Exception:
        return None


def draw_program(d: Drawer, names: Sequence[str] | None = None, max_ops: int = 6,
                 dtypes: Sequence[str] = ("float64", "float64", "float64", "float32")) -> Prog:
    """A random program; ``names`` restricts the op kinds."""
    pool = sorted(OPS) if names is None else list(names)
    n_in = d.integer(1, 3)
    shape = tuple(d.integer(1, 3) for _ in range(d.integer(0, 3)))
    in_shapes = [shape]
    for _ in range(n_in - 1):  # broadcastable partners: drop leading dims or set some to 1
        s = list(shape[d.integer(0, len(shape)):])
        in_shapes.append(tuple(1 if d.integer(0, 3) == 0 else k for k in s))
    dtype = d.choice(list(dtypes))
    proto = Prog(tuple(in_shapes), (), None, 0, dtype)
    shapes = list(in_shapes)
    ops: list[Op] = []
    for _ in range(d.integer(1, max_ops)):
        name = d.choice(pool)
        params = OPS[name].draw(d, shapes[-1], shapes)
        if params is None:
            continue
        op = (name, *params)
        shape_out = out_shape(proto, shapes, op)
        if shape_out is None or int(np.prod(shape_out, dtype=int)) > 64 or len(shape_out) > 4 \
                or int(np.prod(shape_out, dtype=int)) == 0:
            continue
        ops.append(op)
        shapes.append(shape_out)
    if not ops:
        ops.append(("sin",))
    wrapper = d.choice(list(WRAPPERS))
    return Prog(tuple(in_shapes), tuple(ops), wrapper, d.integer(0, 2**31 - 1), dtype)


def hypothesis_programs(names: Sequence[str] | None = None, max_ops: int = 5) -> Any:
    """A Hypothesis strategy of programs."""
    from hypothesis import strategies as st

    @st.composite
    def programs(draw: Any) -> Prog:
        return draw_program(HypothesisDrawer(draw), names, max_ops)
    return programs()


# ------------------------------------------------------------------ running


def inputs(prog: Prog, batch: int | None = None) -> list[np.ndarray]:
    rng = np.random.default_rng(prog.seed + (0 if batch is None else 1))
    lead = () if batch is None else (batch,)
    return [rng.uniform(-1.5, 1.5, lead + s).astype(prog.dtype) for s in prog.in_shapes]


def _flags(prog: Prog) -> tuple[bool, bool]:
    fwd = prog.wrapper in FORWARD_ONLY_WRAPPERS or any(OPS[op[0]].forward_only for op in prog.ops)
    rev = prog.wrapper in REVERSE_ONLY_WRAPPERS or any(OPS[op[0]].reverse_only for op in prog.ops)
    return fwd, rev


TRANSFORMS = ("eval", "jit", "vmap", "grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian",
              "linearize", "jit_grad", "grad_jit", "vmap_grad", "jvp_grad")
_REVERSE = {"grad", "vjp", "jacrev", "hessian", "jit_grad", "grad_jit", "vmap_grad", "jvp_grad"}
_FORWARD = {"jvp", "jacfwd", "hessian", "linearize", "jvp_grad"}


_LOOP_OPS = {"fori_op", "fori_traced_trip", "while_sg", "while_op", "scan_axis", "scan_reverse",
             "scan_length"}


def _has_loop(prog: Prog) -> bool:
    return prog.wrapper in ("scan", "fori", "while") or any(op[0] in _LOOP_OPS for op in prog.ops)


def transforms_for(prog: Prog) -> list[str]:
    fwd_only, rev_only = _flags(prog)
    names = [t for t in TRANSFORMS if not (fwd_only and t in _REVERSE)
             and not (rev_only and t in _FORWARD)]
    if any(op[0] == "custom_jvp_scaled" for op in prog.ops) and _has_loop(prog):
        # A rule that is not the function's derivative, differentiated twice inside a loop:
        # JAX mixes the primal's own derivative in (its value then differs from the same
        # program without the loop); funcgrad uses the rule throughout. Reported as a
        # deliberate difference.
        names = [t for t in names if t not in ("hessian", "jvp_grad")]
    if prog.in_shapes and int(np.prod(prog.in_shapes[0], dtype=int)) > 6:
        names = [t for t in names if t not in ("hessian", "jvp_grad")]
    return names


def case(prog: Prog) -> dict[str, Any]:
    """The arrays a program is checked on: inputs, a batch, tangents, a cotangent."""
    import funcgrad
    args = inputs(prog)
    rng = np.random.default_rng(prog.seed + 2)
    tangents = [rng.uniform(-1.0, 1.0, a.shape).astype(prog.dtype) for a in args]
    shape = funcgrad.eval_shape(build(funcgrad, prog), *args).shape
    return {"args": args, "batched": inputs(prog, batch=2), "tangents": tangents,
            "cot": rng.uniform(-1.0, 1.0, shape).astype(prog.dtype)}


def one_transform(m: Any, f: Callable[..., Any], name: str, c: dict[str, Any]) -> Any:
    """Transform ``name`` of ``f`` under library ``m`` on the case's arrays."""
    jnp = m.numpy
    args = [jnp.asarray(a) for a in c["args"]]
    argnums = tuple(range(len(args)))

    def total(*a: Any) -> Any:
        return jnp.sum(f(*a))
    if name == "eval":
        return f(*args)
    if name == "jit":
        return m.jit(f)(*args)
    if name == "vmap":
        return m.vmap(f)(*[jnp.asarray(b) for b in c["batched"]])
    if name == "grad":
        return m.grad(total, argnums=argnums)(*args)
    if name == "jit_grad":
        return m.jit(m.grad(total, argnums=argnums))(*args)
    if name == "grad_jit":
        return m.grad(m.jit(total), argnums=argnums)(*args)
    if name == "vmap_grad":
        return m.vmap(m.grad(total, argnums=argnums))(*[jnp.asarray(b) for b in c["batched"]])
    tangents = tuple(jnp.asarray(t) for t in c["tangents"])
    if name == "jvp":
        return m.jvp(f, tuple(args), tangents)
    if name == "vjp":
        primal, pullback = m.vjp(f, *args)
        return primal, pullback(jnp.asarray(c["cot"]))
    if name == "jacfwd":
        return m.jacfwd(f, argnums=argnums)(*args)
    if name == "jacrev":
        return m.jacrev(f, argnums=argnums)(*args)
    rest = args[1:]
    if name == "hessian":
        return m.hessian(lambda x: total(x, *rest))(args[0])
    if name == "jvp_grad":
        return m.jvp(m.grad(lambda x: total(x, *rest)), (args[0],), (tangents[0],))
    if name == "linearize":
        primal, f_jvp = m.linearize(f, *args)
        return primal, f_jvp(*tangents)
    raise ValueError(name)


def leaves(tree: Any) -> list[np.ndarray]:
    import funcgrad
    return [np.asarray(x) for x in funcgrad.tree_util.tree_leaves(tree)]


def compare(got: Any, want: Any, dtype: str) -> str | None:
    """None when ``got`` matches ``want`` (shapes, dtypes exactly; values at the dtype's
    tolerance), else what differs."""
    g, w = leaves(got), leaves(want)
    if len(g) != len(w):
        return f"{len(g)} leaves vs {len(w)}"
    rtol, atol = (1e-9, 1e-12) if dtype == "float64" else (2e-4, 2e-5)
    for k, (a, b) in enumerate(zip(g, w)):
        if a.shape != b.shape:
            return f"leaf {k}: shape {a.shape} vs {b.shape}"
        if a.dtype != b.dtype:
            return f"leaf {k}: dtype {a.dtype} vs {b.dtype}"
        scale = 1.0 + (float(np.max(np.abs(b[np.isfinite(b)]))) if np.isfinite(b).any() else 0)
        try:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale)
        except AssertionError as e:
            return f"leaf {k}: values differ:{str(e).splitlines()[-1]}"
    return None


def run_funcgrad(prog: Prog, c: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """Each transform's result, or the exception it raised."""
    import funcgrad
    f = build(funcgrad, prog)
    out: dict[str, Any] = {}
    for name in names:
        try:
            out[name] = one_transform(funcgrad, f, name, c)
        except Exception as e:  # a finding: JAX computed this transform
            out[name] = e
    return out


def run_jax(prog: Prog, c: dict[str, Any], names: Sequence[str], eager: bool = False
            ) -> dict[str, Any]:
    """JAX's results, all transforms in one compilation (raises where JAX refuses); with
    ``eager``, op by op."""
    import jax

    from funcgrad.testing import jax_x64_mode
    with jax_x64_mode(jax, True):
        def everything(case_: dict[str, Any]) -> dict[str, Any]:
            f = build(jax, prog)
            return {n: one_transform(jax, f, n, case_) for n in names}
        if eager:
            with jax.disable_jit():
                return jax.device_get(everything(c))
        return jax.device_get(jax.jit(everything)(c))


def _nan_differences_only(got: Any, want: Any) -> bool:
    """The values differ only where one side is NaN (same shapes)."""
    for a, b in zip(leaves(got), leaves(want)):
        if a.shape != b.shape:
            return False
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
        differ = ~np.isclose(a64, b64, rtol=1e-6, atol=1e-9, equal_nan=True)
        if (differ & ~(np.isnan(a64) | np.isnan(b64))).any():
            return False
    return True


def _jax_eager_agrees(prog: Prog, c: dict[str, Any], name: str, got: Any) -> bool:
    """Where a NaN meets a zero (0 * NaN), XLA's compiled program may simplify differently
    from JAX's op-by-op run (jit(grad(f)) [0, nan] where grad(f) gives [nan, nan]): such a
    difference (a docs/sharp_bits.md row) is no finding when funcgrad agrees with JAX op
    by op (jit disabled)."""
    try:
        ref = run_jax(prog, c, [name], eager=True)[name]
    except Exception:
        return False
    return compare(got, ref, prog.dtype) is None


def _rounding_only(prog: Prog, c: dict[str, Any], name: str, got: Any, want: Any) -> bool:
    """A float32 difference that is rounding: funcgrad's float32 result is about as close to
    JAX's float64 result on the same inputs as JAX's own float32 result is (the oracle of
    float32 vs float64 agreement; e.g. a derivative that is 0 exactly, which JAX's float32
    gives as 1e-4 noise)."""
    prog64 = Prog(prog.in_shapes, prog.ops, prog.wrapper, prog.seed, "float64")
    c64 = {k: [np.asarray(a, np.float64) for a in v] if isinstance(v, list)
           else np.asarray(v, np.float64) for k, v in c.items()}
    try:
        ref = run_jax(prog64, c64, [name])[name]
    except Exception:
        return False
    g, w, r = leaves(got), leaves(want), leaves(ref)
    if not len(g) == len(w) == len(r):
        return False
    for a, b, t in zip(g, w, r):
        if a.shape != t.shape or not np.isfinite(t).all():
            return False
        t = np.asarray(t, np.float64)
        err_got = float(np.max(np.abs(np.asarray(a, np.float64) - t), initial=0.0))
        err_want = float(np.max(np.abs(np.asarray(b, np.float64) - t), initial=0.0))
        scale = 1.0 + float(np.max(np.abs(t), initial=0.0))
        if not err_got <= 2.0 * err_want + 2e-5 * scale:
            return False
    return True


def check(prog: Prog, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Mismatches of funcgrad against JAX for ``prog``: one dict per failing transform.
    Raises ``JaxRefused`` where JAX itself cannot run the program."""
    names = transforms_for(prog) if names is None else names
    c = case(prog)
    try:
        want = run_jax(prog, c, names)
    except Exception as e:
        raise JaxRefused(f"{type(e).__name__}: {e}") from e
    got = run_funcgrad(prog, c, names)
    bad = []
    for name in names:
        g = got[name]
        if isinstance(g, Exception):
            bad.append({"transform": name, "error": f"{type(g).__name__}: {g}"[:2000],
                        "want": _to_list(want[name])})
            continue
        why = compare(g, want[name], prog.dtype)
        if why is not None and prog.dtype == "float32" and "values differ" in why and \
                _rounding_only(prog, c, name, g, want[name]):
            why = None
        if why is not None and "values differ" in why and _jax_eager_agrees(prog, c, name, g):
            # JAX's compiled program disagrees with JAX op by op, funcgrad with neither
            # (XLA's simplifier at 0 * NaN, a sharp_bits row; XLA's in-place
            # dynamic_update_slice that reads its own overwritten operand: program 6629 of
            # seed 0, a JAX bug): JAX's op-by-op result is the oracle then.
            why = None
        if why is not None:
            bad.append({"transform": name, "error": why[:2000], "got": _to_list(g),
                        "want": _to_list(want[name])})
    return bad


def _jax_inf_scatter_extreme_clip(prog: Prog, bad: dict[str, Any]) -> bool:
    # JAX's derivative of x.at[i].min/max(v, mode="clip") with indices clipped onto the
    # same element is inf (finite differences: finite; funcgrad's).
    def clipped(op: Op) -> bool:
        return op[0] in ("at_min", "at_max") and op[2] == "array" and op[4] == "clip"

    def finite(leaves_: Any) -> bool:
        return all(np.isfinite(v) for leaf in leaves_ for v in leaf["values"])

    if not any(clipped(op) for op in prog.ops) or "got" not in bad or not finite(bad["got"]):
        return False
    # inf; or, where the clipped updates tie with the operand, a finite value other than
    # the derivative (program 7998 of seed 0: min(x, 0.6) with x > 0.6 is the constant
    # 0.6, derivative 0 in funcgrad, -0.197 in JAX)
    return not finite(bad["want"]) or bad.get("transform") not in ("eval", "jit", "vmap")


def _erf_inv_second_order_tail(prog: Prog, bad: dict[str, Any]) -> bool:
    # Second derivatives through erf_inv are steep near +-1, where XLA's erf_inv polynomial
    # keeps only its absolute accuracy: tiny Hessian entries (1e-11 of a 0.03 leaf) differ
    # relatively (program 5983 of seed 0: exact -1.5262e-11, funcgrad -1.5345e-11, JAX
    # -1.6990e-11, by mpmath). Equal to 1e-9 of the leaf's scale.
    if not any(op[0] == "erf_inv" for op in prog.ops) or \
            bad.get("transform") not in ("hessian", "jvp_grad") or "got" not in bad:
        return False
    for g, w in zip(bad["got"], bad["want"]):
        gv, wv = np.asarray(g["values"], float), np.asarray(w["values"], float)
        scale = float(np.max(np.abs(wv), initial=0.0))
        if gv.shape != wv.shape or not np.allclose(gv, wv, rtol=1e-6, atol=1e-9 * scale):
            return False
    return True


def _std_at_zero_spread(prog: Prog, bad: dict[str, Any]) -> bool:
    # std's derivative where all elements are equal is 0/0: funcgrad gives NaN; JAX's
    # depends on rounding (program 2417 of seed 0: op by op [0, nan], compiled
    # [-5.1e-17, -1.4e-17]).
    if "got" not in bad:
        return False
    return nan_where_std_spread_is_zero(
        prog, [(g["values"], w["values"]) for g, w in zip(bad["got"], bad["want"])])


def nan_where_std_spread_is_zero(prog: Prog, pairs: Any) -> bool:
    """Whether a program with std gives NaN (in the first of each pair of values) exactly
    where the other gives 0: std's derivative at zero spread, 0/0."""
    if not any(op[0].startswith("std") for op in prog.ops):
        return False
    for g, w in pairs:
        gv, wv = np.asarray(g, float), np.asarray(w, float)
        if gv.shape != wv.shape:
            return False
        differ = ~np.isclose(gv, wv, rtol=1e-6, atol=1e-9, equal_nan=True)
        if not (np.isnan(gv[differ]).all() and (np.abs(wv[differ]) < 1e-12).all()):
            return False
    return True


# Mismatches skipped (and counted) by the tests and the script: (why, predicate). Rows of
# docs/sharp_bits.md, and open bugs reported to the lead (marked OPEN).
SKIPS: list[tuple[str, Callable[[Prog, dict[str, Any]], bool]]] = [
    ("sharp bits: the derivative of x.at[idx].min/max(v, mode='clip') with out-of-range "
     "indices is inf (or another value than finite differences give) in JAX, what finite "
     "differences say in funcgrad",
     _jax_inf_scatter_extreme_clip),
    ("sharp bits: second derivatives through erf_inv near +-1 (XLA's polynomial keeps "
     "absolute, not relative, accuracy there; funcgrad's are closer to the exact value)",
     _erf_inv_second_order_tail),
    ("sharp bits: the derivative of std where all elements are equal is NaN (0/0); JAX's "
     "depends on rounding", _std_at_zero_spread),
]


def skip_reason(prog: Prog, bad: dict[str, Any]) -> str | None:
    for why, pred in SKIPS:
        if pred(prog, bad):
            return why
    return None


class JaxRefused(Exception):
    """JAX raised on the program: not a valid program (a generator gap), skipped."""


def _to_list(tree: Any) -> Any:
    return [{"shape": list(a.shape), "dtype": str(a.dtype), "values": a.ravel().tolist()[:64]}
            for a in leaves(tree)]
