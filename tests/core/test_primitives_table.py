"""One table-driven, hypothesis-driven test of every primitive in funcgrad.core.PRIMITIVES.

Each row binds one primitive directly (``prim.bind(*operands, **params)``, no
funcgrad.numpy broadcasting or promotion) on drawn operands and parameters.
Columns, each a test parametrized over the table:

- ``test_impl``: the eager result equals a NumPy reference, dtype included;
- ``test_abstract_eval``: ``funcgrad.core.abstract_eval`` gives the shape and dtype
  that the impl returns;
- ``test_staged``: ``eval_jaxpr(make_jaxpr(bind))`` equals eager, and the jaxpr is
  that one equation;
- ``test_grad``: ``check_grads`` to second order, forward and reverse, in float64,
  with respect to the float operands (integer operands such as indices are fixed);
- ``test_bad_input``: fixed bad shapes/dtypes raise ShapeError/DTypeError whose
  message names the primitive and the operands' shapes, eagerly and while staging.

The call-like primitives (custom_jvp_call, custom_vjp_call, checkpoint) run user
functions and are tested with their transforms. Library bugs are strict xfails
(``bugs=``).
"""

from __future__ import annotations

import math
import re
import string
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy
from funcgrad import lax, tree_util
from funcgrad.core import PRIMITIVES, abstract_eval, get_aval
from funcgrad.errors import DTypeError, ShapeError
from funcgrad.primitives.checks import Error, FailedCheckError
from funcgrad.testing import check_grads
from funcgrad.testing.strategies import shapes
from funcgrad.transforms import staged_vjp
from funcgrad.tree_util import tree_leaves

F64, F32, I64, I32, BOOL = (np.dtype(t) for t in ("float64", "float32", "int64", "int32", "bool"))
FLOATS = (F64, F32)
NUMERIC = (F64, F32, I64, I32)
ALL = NUMERIC + (BOOL,)
INTEGRAL = (I64, I32, BOOL)
TOL = {F64: 1e-12, F32: 1e-5, np.dtype(np.complex64): 1e-5}

SETTINGS = settings(
    max_examples=15, deadline=None, derandomize=True, database=None,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.data_too_large],
)
GRAD_SETTINGS = settings(SETTINGS, max_examples=10)
CALL_LIKE = {"custom_jvp_call", "custom_vjp_call", "checkpoint"}  # at least these

# ------------------------------------------------------------ operand values

GAP = 1e-2


def floats(lo: float = -3.0, hi: float = 3.0, avoid: float | None = None, gap: float = GAP,
           period: float = 0.0) -> st.SearchStrategy[float]:
    """Floats in [lo, hi], at least ``gap`` from ``avoid`` (and its shifts by ``period``)."""
    s = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if avoid is None:
        return s

    def far(v: float) -> bool:
        d = v - avoid
        if period:
            d = (d + period / 2) % period - period / 2
        return abs(d) >= gap

    return s.filter(far)


REAL = floats()
POS = floats(0.2, 3.0)
NONZERO = floats(avoid=0.0)
FAR_FROM_0 = floats(avoid=0.0, gap=0.2)
UNIT = floats(-0.8, 0.8)
SMALL_INTS = st.sampled_from([-2.0, -1.0, 0.0, 1.0, 2.0])


def arrays(shape: Any, elements: st.SearchStrategy[float] = REAL
           ) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=elements)


def int_arrays(shape: Any, lo: int, hi: int) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.int64, shape, elements=st.integers(lo, hi))


def spread(ops: tuple[Any, ...], gap: float = GAP) -> tuple[Any, ...]:
    """Push all float64 entries of all operands ``gap`` apart (no ties)."""
    idx = [i for i, a in enumerate(ops) if a.dtype == F64]
    flat = np.concatenate([ops[i].ravel() for i in idx]) if idx else np.zeros(0)
    moved = flat.copy()
    order = np.argsort(flat, kind="stable")
    moved[order] = np.sort(flat) + gap * np.arange(flat.size)
    out, start = list(ops), 0
    for i in idx:
        out[i] = moved[start:start + ops[i].size].reshape(ops[i].shape)
        start += ops[i].size
    return tuple(out)


# ------------------------------------------------------------------ the table

Draw = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True)
class Bad:
    """Operands and params that the primitive's shape rule must reject with ``error``
    (``jax_text``: JAX's own text, which names the API and the shapes or dtypes rather than
    the primitive and the operands' types)."""

    label: str
    operands: tuple[Any, ...]
    params: Mapping[str, Any]
    error: type[Exception]
    jax_text: bool = False


def bad(label: str, *operands: Any, error: type[Exception] = ShapeError,
        jax_text: bool = False, **params: Any) -> Bad:
    return Bad(label, operands, params, error, jax_text)


@dataclass(frozen=True)
class Row:
    """``PRIMITIVES[prim].bind(*operands, **params)`` against ``ref(*operands, **params)``."""

    prim: str
    args: st.SearchStrategy[Draw]              # (operands, params); float operands float64
    ref: Callable[..., Any]
    grad: bool = True                          # check_grads w.r.t. the float64 operands
    grad_args: st.SearchStrategy[Draw] | None = None
    dtypes: tuple[np.dtype[Any], ...] = FLOATS  # float operands are cast to one of these
    distinct: bool = False
    bad: tuple[Bad, ...] = ()
    variant: str = ""
    bugs: Mapping[str, str] = field(default_factory=dict)  # column -> reason (strict xfail)

    @property
    def id(self) -> str:
        return f"{self.prim}-{self.variant}" if self.variant else self.prim

    def strategy(self, column: str) -> st.SearchStrategy[Draw]:
        s = self.grad_args if column == "grad" and self.grad_args is not None else self.args
        return s.map(lambda d: (spread(d[0]), d[1])) if self.distinct else s


def bug(row: Row, reason: str, *columns: str) -> Row:
    return Row(row.prim, row.args, row.ref, row.grad, row.grad_args, row.dtypes, row.distinct,
               row.bad, row.variant, {**row.bugs, **{c: f"bug: {reason}" for c in columns}})


def operands(*elements: st.SearchStrategy[float], rank0: bool = False
             ) -> st.SearchStrategy[Draw]:
    """Arrays of one shape; with ``rank0`` one of them may be rank 0 instead (the only
    broadcasting that elementwise primitives allow)."""
    @st.composite
    def draw_ops(draw: Any) -> Draw:
        shape = draw(shapes())
        at = draw(st.sampled_from([None, None, *range(len(elements))])) if rank0 else None
        return tuple(draw(arrays(() if i == at else shape, e))
                     for i, e in enumerate(elements)), {}

    return draw_ops()


def one_rank0(x: st.SearchStrategy[float], y: st.SearchStrategy[float]
              ) -> st.SearchStrategy[Draw]:
    """x of rank >= 1 and y of rank 0."""
    return st.tuples(arrays(shapes(min_dims=1), x), arrays((), y)).map(lambda t: (t, {}))


# ------------------------------------------------------------- elementwise

M23, M32 = np.ones((2, 3)), np.ones((3, 2))
UNARY_REFS: dict[str, tuple[Callable[..., Any], st.SearchStrategy[float]]] = {
    "exp": (np.exp, REAL), "exp2": (np.exp2, REAL), "expm1": (np.expm1, REAL),
    "log": (np.log, POS), "log1p": (np.log1p, floats(-0.8, 3.0)),
    "sin": (np.sin, REAL), "cos": (np.cos, REAL), "tan": (np.tan, floats(-1.3, 1.3)),
    "asin": (np.arcsin, UNIT), "acos": (np.arccos, UNIT), "atan": (np.arctan, REAL),
    "sinh": (np.sinh, REAL), "cosh": (np.cosh, REAL), "tanh": (np.tanh, REAL),
    "asinh": (np.arcsinh, REAL), "acosh": (np.arccosh, floats(1.2, 4.0)),
    "atanh": (np.arctanh, UNIT), "sqrt": (np.sqrt, POS),
    "rsqrt": (lambda x: 1 / np.sqrt(x), POS), "cbrt": (np.cbrt, FAR_FROM_0),
    "logistic": (lambda x: 1 / (1 + np.exp(-x)), REAL),
    "erf": (lambda x: np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype), REAL),
    "erfc": (lambda x: np.vectorize(math.erfc, otypes=[np.float64])(x).astype(x.dtype), REAL),
    "floor": (np.floor, floats(avoid=0.0, period=1.0)),
    "ceil": (np.ceil, floats(avoid=0.0, period=1.0)),
    "round": (np.rint, floats(avoid=0.5, period=1.0)),  # halves to even, like NumPy
}


def float_unary(name: str) -> Row:
    ref, elements = UNARY_REFS[name]
    return Row(name, operands(elements), ref,
               bad=(bad("int operand", np.arange(3), error=DTypeError),))


def number_unary(name: str, ref: Callable[..., Any], elements: st.SearchStrategy[float] = REAL,
                 **kw: Any) -> Row:
    return Row(name, operands(elements), ref, dtypes=NUMERIC,
               bad=(bad("bool operand", np.array([True]), error=DTypeError),), **kw)


@st.composite
def integer_pow_args(draw: Any, ys: tuple[int, ...], elements: st.SearchStrategy[float]
                     ) -> Draw:
    return (draw(arrays(shapes(), elements)),), {"y": draw(st.sampled_from(ys))}


def _integer_pow_ref(x: np.ndarray, y: int) -> np.ndarray:
    return (x ** float(y) if y < 0 else x ** y).astype(x.dtype)


def binary_bad(kinds: str = "numeric") -> tuple[Bad, ...]:
    out = (bad("unequal shapes", M23, M32),
           bad("unequal ranks", np.ones(3), np.ones((1, 3))),
           bad("unequal dtypes", np.ones(3), np.ones(3, np.float32), error=DTypeError))
    if kinds == "float":
        out += (bad("int operands", np.arange(3), np.arange(3), error=DTypeError),)
    if kinds == "integral":
        out += (bad("float operands", np.ones(3), np.ones(3), error=DTypeError),)
    return out


def binary(name: str, ref: Callable[..., Any], x: st.SearchStrategy[float] = REAL,
           y: st.SearchStrategy[float] = REAL, kinds: str = "numeric", **kw: Any) -> Row:
    kw.setdefault("dtypes", FLOATS if kinds == "float" else NUMERIC)
    return Row(name, operands(x, y, rank0=True), ref, bad=binary_bad(kinds), **kw)


def _div_ref(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.floor_divide(x, y) if x.dtype.kind in "iu" else np.true_divide(x, y)


@st.composite
def off_grid_ratio(draw: Any) -> Draw:
    """x, y with x / y at least 0.05 from an integer (rem is smooth there)."""
    shape = draw(shapes())
    y = draw(arrays(shape, floats(0.5, 3.0))) * draw(arrays(shape, st.sampled_from([-1., 1.])))
    q = draw(arrays(shape, floats(avoid=0.0, period=1.0, gap=0.05)))
    return (np.asarray(q * y), np.asarray(y)), {}


@st.composite
def select_args(draw: Any) -> Draw:
    shape = draw(shapes())
    return (draw(hnp.arrays(np.bool_, shape)), draw(arrays(shape)), draw(arrays(shape))), {}


CONVERT_TO = [F64, F32, I64, I32, BOOL]


@st.composite
def convert_args(draw: Any, targets: list[np.dtype[Any]]) -> Draw:
    return (draw(arrays(shapes())),), {"new_dtype": draw(st.sampled_from(targets)),
                                       "weak_type": draw(st.booleans())}


ELEMENTWISE = [
    *(float_unary(n) for n in UNARY_REFS),
    number_unary("neg", np.negative),
    number_unary("sign", np.sign, NONZERO),
    number_unary("abs", np.abs, NONZERO),
    number_unary("is_finite", np.isfinite, st.one_of(REAL, st.sampled_from(
        [np.nan, np.inf, -np.inf])), grad=False),
    Row("integer_pow", integer_pow_args((-2, -1, 0, 1, 2, 3), FAR_FROM_0), _integer_pow_ref,
        bad=(bad("bool operand", np.array([True]), error=DTypeError, y=2),)),
    Row("integer_pow", integer_pow_args((0, 1, 2, 3), SMALL_INTS), _integer_pow_ref,
        dtypes=(I64, I32), grad=False, variant="int"),
    Row("not", operands(SMALL_INTS), np.invert, grad=False, dtypes=INTEGRAL,
        bad=(bad("float operand", np.ones(2), error=DTypeError),)),
    binary("add", np.add), binary("sub", np.subtract), binary("mul", np.multiply),
    binary("div", _div_ref, y=FAR_FROM_0),
    binary("rem", np.remainder, y=FAR_FROM_0, grad_args=off_grid_ratio()),
    binary("pow", np.power, POS, NONZERO, dtypes=FLOATS,
           grad_args=operands(POS, NONZERO)),
    Row("pow", one_rank0(POS, NONZERO), np.power, variant="rank-0-exponent"),
    Row("pow", operands(POS, st.just(0.0)), np.power, variant="zero-exponent"),
    binary("max", np.maximum, distinct=True), binary("min", np.minimum, distinct=True),
    *(Row(n, one_rank0(REAL, REAL), ref, distinct=True, variant="rank-0")
      for n, ref in (("max", np.maximum), ("min", np.minimum))),
    binary("atan2", np.arctan2, FAR_FROM_0, FAR_FROM_0, kinds="float"),
    *(binary(n, ref, SMALL_INTS, SMALL_INTS, grad=False, dtypes=ALL)
      for n, ref in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                     ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal))),
    *(binary(n, ref, SMALL_INTS, SMALL_INTS, kinds="integral", grad=False, dtypes=INTEGRAL)
      for n, ref in (("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor))),
    Row("select", select_args(), np.where, dtypes=ALL, bad=(
        bad("float predicate", np.ones(2), np.ones(2), np.ones(2), error=DTypeError),
        bad("predicate shape", np.ones(3, bool), np.ones(2), np.ones(2)),
        bad("branch dtypes", np.ones(2, bool), np.ones(2), np.ones(2, np.float32),
            error=DTypeError),
        bad("branch shapes", np.ones((2, 3), bool), M23, M32))),
    Row("convert_element_type", convert_args(CONVERT_TO),
        lambda x, new_dtype, weak_type: x.astype(new_dtype), dtypes=ALL,
        grad_args=convert_args([F64])),
    Row("stop_gradient", operands(REAL), lambda x: x, grad=False, dtypes=ALL),
]

# ---------------------------------------------------------------- reductions


def _axes(ndim: int) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(
        lambda a: tuple(sorted(a))) if ndim else st.just(())


@st.composite
def reduce_args(draw: Any, elements: st.SearchStrategy[float] = REAL) -> Draw:
    x = draw(arrays(shapes(), elements))
    return (x,), {"axes": draw(_axes(x.ndim))}


@st.composite
def axis_args(draw: Any, **extra: st.SearchStrategy[Any]) -> Draw:
    x = draw(arrays(shapes(min_dims=1)))
    return (x,), {"axis": draw(st.integers(0, x.ndim - 1)),
                  **{k: draw(v) for k, v in extra.items()}}


def reduce_bad(empty: bool = False) -> tuple[Bad, ...]:
    out = (bad("axis out of range", M23, axes=(2,)), bad("repeated axis", M23, axes=(1, 1)))
    if empty:
        out += (bad("empty axis", np.ones((0, 2)), axes=(0,)),)
    return out


def _cumsum_ref(x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _arg_ref(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x, axis, index_dtype: f(x, axis=axis).astype(index_dtype)


ARG_BAD = (bad("axis out of range", M23, axis=2, index_dtype=I64),
           bad("empty axis", np.ones((0, 2)), axis=0, index_dtype=I64))
INDEX_DTYPES = st.sampled_from([I64, I32])

REDUCTIONS = [
    Row("reduce_sum", reduce_args(), lambda x, axes: np.sum(x, axis=axes, dtype=x.dtype),
        dtypes=NUMERIC, bad=reduce_bad()),
    # Away from 0: products of many small factors make the finite differences cancel.
    Row("reduce_prod", reduce_args(FAR_FROM_0), lambda x, axes: np.prod(x, axis=axes,
                                                                      dtype=x.dtype),
        dtypes=NUMERIC, bad=reduce_bad()),
    Row("reduce_prod", reduce_args(st.sampled_from([0.0, 1.5, -2.0])),
        lambda x, axes: np.prod(x, axis=axes), variant="with-zeros"),
    Row("reduce_max", reduce_args(), lambda x, axes: np.max(x, axis=axes), dtypes=ALL,
        distinct=True, bad=reduce_bad(empty=True)),
    Row("reduce_min", reduce_args(), lambda x, axes: np.min(x, axis=axes), dtypes=ALL,
        distinct=True, bad=reduce_bad(empty=True)),
    Row("argmax", axis_args(index_dtype=INDEX_DTYPES), _arg_ref(np.argmax), grad=False,
        dtypes=ALL, bad=ARG_BAD),
    Row("argmin", axis_args(index_dtype=INDEX_DTYPES), _arg_ref(np.argmin), grad=False,
        dtypes=ALL, bad=ARG_BAD),
    Row("cumsum", axis_args(reverse=st.booleans()), _cumsum_ref, dtypes=NUMERIC,
        bad=(bad("axis out of range", M23, axis=2, reverse=False),)),
    Row("sort", axis_args(), lambda x, axis: np.sort(x, axis=axis, kind="stable"), dtypes=ALL,
        distinct=True, bad=(bad("axis out of range", M23, axis=2),)),
    Row("argsort", axis_args(), lambda x, axis: np.argsort(x, axis=axis, kind="stable"),
        grad=False, dtypes=ALL, distinct=True, bad=(bad("axis out of range", M23, axis=2),)),
]

# ---------------------------------------------------------------- structural


@st.composite
def broadcast_in_dim_args(draw: Any) -> Draw:
    shape = draw(shapes())
    dims = tuple(sorted(draw(st.lists(st.integers(0, len(shape) - 1), unique=True)))) \
        if shape else ()
    xshape = tuple(1 if draw(st.booleans()) else shape[d] for d in dims)
    return (draw(arrays(xshape)),), {"shape": shape, "broadcast_dimensions": dims}


def _bid_ref(x: np.ndarray, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]
             ) -> np.ndarray:
    new = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    return np.broadcast_to(np.expand_dims(x, new), shape)


@st.composite
def reshape_args(draw: Any) -> Draw:
    x = draw(arrays(shapes()))
    sizes = [d for d in x.shape if d != 1] + [1] * draw(st.integers(0, 2))
    new = list(draw(st.permutations(sizes)))
    if len(new) >= 2 and draw(st.booleans()):
        new[:2] = [new[0] * new[1]]
    return (x,), {"new_sizes": tuple(new)}


@st.composite
def one_operand(draw: Any, min_dims: int = 0, side: tuple[int, int] = (1, 4),
                **params: Callable[[tuple[int, ...]], st.SearchStrategy[Any]]) -> Draw:
    x = draw(arrays(shapes(min_dims=min_dims, min_side=side[0], max_side=side[1])))
    return (x,), {k: draw(f(x.shape)) for k, f in params.items()}


def _dims_of_size_1(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    ones = [i for i, d in enumerate(shape) if d == 1]
    return st.lists(st.sampled_from(ones), unique=True).map(lambda a: tuple(sorted(a))) \
        if ones else st.just(())


def _new_dims(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    return st.integers(1, 2).flatmap(lambda k: st.lists(
        st.integers(0, len(shape) + k - 1), min_size=k, max_size=k, unique=True).map(
        lambda a: tuple(sorted(a))))


def _expand_ref(x: np.ndarray, dimensions: tuple[int, ...]) -> np.ndarray:
    return np.expand_dims(x, dimensions) if dimensions else x


@st.composite
def slice_args(draw: Any, min_dims: int = 1, max_dims: int = 3) -> Draw:
    x = draw(arrays(shapes(min_dims=min_dims, max_dims=max_dims, max_side=5)))
    start, limit, strides = [], [], []
    for n in x.shape:
        lo = draw(st.integers(0, n))
        start.append(lo)
        limit.append(draw(st.integers(lo, n)))
        strides.append(draw(st.integers(1, 3)))
    return (x,), {"start_indices": tuple(start), "limit_indices": tuple(limit),
                  "strides": tuple(strides)}


def _slice_ref(x: np.ndarray, start_indices: Any, limit_indices: Any, strides: Any
               ) -> np.ndarray:
    return x[tuple(slice(*t) for t in zip(start_indices, limit_indices, strides))]


@st.composite
def concatenate_args(draw: Any) -> Draw:
    base = list(draw(shapes(min_dims=1)))
    dim = draw(st.integers(0, len(base) - 1))
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        base[dim] = draw(st.integers(0, 3))
        ops.append(draw(arrays(tuple(base))))
    return tuple(ops), {"dimension": dim}


@st.composite
def split_args(draw: Any) -> Draw:
    x = draw(arrays(shapes(min_dims=1)))
    axis = draw(st.integers(0, x.ndim - 1))
    cuts = sorted(draw(st.lists(st.integers(0, x.shape[axis]), min_size=0, max_size=3)))
    sizes = tuple(b - a for a, b in zip([0, *cuts], [*cuts, x.shape[axis]]))
    return (x,), {"sizes": sizes, "axis": axis}


def _split_ref(x: np.ndarray, sizes: tuple[int, ...], axis: int) -> list[np.ndarray]:
    return np.split(x, np.cumsum(sizes)[:-1], axis)


@st.composite
def pad_args(draw: Any, min_dims: int = 1, max_dims: int = 3) -> Draw:
    x = draw(arrays(shapes(min_dims=min_dims, max_dims=max_dims)))
    config = []
    for n in x.shape:
        interior = draw(st.integers(0, 2))
        inner = n + max(n - 1, 0) * interior
        lo = draw(st.integers(max(-2, -inner), 2))
        hi = draw(st.integers(max(-2, -inner - lo), 2))
        config.append((lo, hi, interior))
    return (x, draw(arrays(()))), {"padding_config": tuple(config)}


def _pad_ref(x: np.ndarray, v: np.ndarray, padding_config: Any) -> np.ndarray:
    """Per axis: interior padding by np.insert, then edges (negative ones crop)."""
    out = x
    for ax, (lo, hi, interior) in enumerate(padding_config):
        n = out.shape[ax]
        if interior and n > 1:
            out = np.insert(out, np.repeat(np.arange(1, n), interior), v, axis=ax)
        edge = list(out.shape)
        edge[ax] = max(lo, 0)
        before = np.full(edge, v, x.dtype)
        edge[ax] = max(hi, 0)
        out = np.concatenate([before, out, np.full(edge, v, x.dtype)], axis=ax)
        keep = range(max(-lo, 0), out.shape[ax] - max(-hi, 0))
        out = np.take(out, keep, axis=ax)
    return out


@st.composite
def iota_args(draw: Any) -> Draw:
    shape = draw(shapes(min_dims=1))
    return (), {"dtype": draw(st.sampled_from([I64, I32, F32, F64])), "shape": shape,
                "dimension": draw(st.integers(0, len(shape) - 1))}


def _iota_ref(dtype: Any, shape: tuple[int, ...], dimension: int) -> np.ndarray:
    return np.indices(shape, dtype=dtype)[dimension]


ONE = np.array(1.0)
STRUCTURAL = [
    Row("broadcast_in_dim", broadcast_in_dim_args(), _bid_ref, dtypes=ALL, bad=(
        bad("size mismatch", np.ones(3), shape=(4,), broadcast_dimensions=(0,)),
        bad("dims count", np.ones(3), shape=(2, 3), broadcast_dimensions=()),
        bad("decreasing dims", M23, shape=(3, 2, 3), broadcast_dimensions=(2, 1)))),
    Row("reshape", reshape_args(), lambda x, new_sizes: np.reshape(x, new_sizes), dtypes=ALL,
        bad=(bad("size mismatch", M23, new_sizes=(4,)),)),
    Row("transpose", one_operand(permutation=lambda s: st.permutations(range(len(s))).map(
        tuple)), lambda x, permutation: np.transpose(x, permutation), dtypes=ALL,
        bad=(bad("not a permutation", M23, permutation=(0, 0)),
             bad("wrong length", M23, permutation=(0,)))),
    Row("squeeze", one_operand(side=(1, 2), dimensions=_dims_of_size_1),
        lambda x, dimensions: np.squeeze(x, dimensions), dtypes=ALL,
        bad=(bad("axis of size 3", M23, dimensions=(1,)),
             bad("axis out of range", M23, dimensions=(2,)))),
    Row("expand_dims", one_operand(dimensions=_new_dims), _expand_ref, dtypes=ALL,
        bad=(bad("out of range", M23, dimensions=(3,)),
             bad("repeated", M23, dimensions=(0, 0)))),
    Row("slice", slice_args(), _slice_ref, dtypes=ALL, bad=(
        bad("limit past the end", M23, start_indices=(0, 0), limit_indices=(2, 4),
            strides=(1, 1)),
        bad("start after limit", M23, start_indices=(2, 0), limit_indices=(1, 3),
            strides=(1, 1)),
        bad("one start per axis", M23, start_indices=(0,), limit_indices=(2,), strides=(1,)),
        bad("zero stride", M23, start_indices=(0, 0), limit_indices=(2, 3),
            strides=(0, 1)))),
    Row("slice", slice_args(min_dims=0, max_dims=0), _slice_ref, variant="rank-0"),
    # On the host both ways (tests/backends/test_gpu_transfer.py moves between devices).
    Row("device_put", one_operand(device=lambda s: st.just("cpu:0"),
                                  source=lambda s: st.sampled_from(["cpu:0", None])),
        lambda x, device, source: np.array(x), dtypes=ALL),
    Row("rev", one_operand(dimensions=lambda s: _axes(len(s))),
        lambda x, dimensions: np.flip(x, dimensions), dtypes=ALL,
        bad=(bad("axis out of range", M23, dimensions=(2,)),)),
    Row("concatenate", concatenate_args(), lambda *xs, dimension: np.concatenate(xs, dimension),
        dtypes=ALL, bad=(
            bad("shapes differ off the axis", M23, M32, dimension=0),
            bad("ranks differ", M23, np.ones(3), dimension=0),
            bad("axis out of range", M23, M23, dimension=2),
            bad("dtypes differ", M23, M23.astype(np.float32), dimension=0, error=DTypeError))),
    Row("split", split_args(), _split_ref, dtypes=ALL, bad=(
        bad("sizes do not sum to the axis", M23, sizes=(1, 1), axis=1),
        bad("a negative size", M23, sizes=(4, -1), axis=1),
        bad("axis out of range", M23, sizes=(2,), axis=2))),
    Row("pad", pad_args(), _pad_ref, dtypes=NUMERIC, bad=(
        bad("non-scalar padding value", M23, np.ones(1), padding_config=((0, 0, 0),) * 2),
        bad("padding value dtype", M23, np.array(1, np.float32),
            padding_config=((0, 0, 0),) * 2, error=DTypeError),
        bad("config length", M23, ONE, padding_config=((0, 0, 0),)),
        bad("negative size", M23, ONE, padding_config=((-2, -1, 0), (0, 0, 0))),
        bad("negative interior", M23, ONE, padding_config=((0, 0, -1), (0, 0, 0))))),
    Row("pad", pad_args(min_dims=0, max_dims=0), _pad_ref, variant="rank-0", grad=False),
    Row("iota", iota_args(), _iota_ref, grad=False, dtypes=(F64,),
        bad=(bad("dimension out of range", dtype=I64, shape=(2, 3), dimension=2),)),
]

# ------------------------------------------------------------------ indexing


@st.composite
def gather_args(draw: Any, unique: bool = False, min_k: int = 1, max_k: int = 3,
                modes: tuple[str, ...] = ("clip", "drop")) -> Draw:
    """operand, indices of shape (*B, k) (some out of range) and, for scatters, updates of
    shape (*B, *operand.shape[k:]); ``mode`` drawn from ``modes``. With ``unique`` the
    index tuples address distinct elements."""
    op = draw(arrays(shapes(min_dims=1)))
    k = draw(st.integers(min_k, min(op.ndim, max_k)))
    batch = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    cols = [draw(int_arrays(batch, -2, n + 1)) for n in op.shape[:k]]
    idx = np.stack(cols, -1) if cols else np.zeros(batch + (0,), np.int64)
    mode = draw(st.sampled_from(modes))
    if unique:
        seen = [_landing(op.shape[:k], tuple(i), mode) for i in idx.reshape(-1, k)]
        hit = [t for t in seen if t is not None]
        if len(set(hit)) != len(hit):
            idx = idx.reshape(-1, k)[:1].reshape((1,) * len(batch) + (k,))
            batch = idx.shape[:-1]
    updates = draw(arrays(batch + op.shape[k:]))
    return (op, idx, updates), {"mode": mode}


def _landing(shape: tuple[int, ...], t: tuple[int, ...], mode: str) -> tuple[int, ...] | None:
    """Where an index tuple lands: clamped (``clip``), or None when dropped or filled."""
    if mode == "clip":
        return tuple(int(np.clip(i, 0, n - 1)) for i, n in zip(t, shape))
    if all(0 <= i < n for i, n in zip(t, shape)):
        return tuple(int(i) for i in t)
    return None


def _gather_ref(op: np.ndarray, idx: np.ndarray, mode: str, fill_value: Any = None
                ) -> np.ndarray:
    out = np.empty(idx.shape[:-1] + op.shape[idx.shape[-1]:], op.dtype)
    fill = np.nan if op.dtype.kind == "f" else (True if op.dtype.kind == "b" else
                                               np.iinfo(op.dtype).min)
    fill = fill if fill_value is None else fill_value
    for b in np.ndindex(*idx.shape[:-1]):
        t = _landing(op.shape[:idx.shape[-1]], tuple(idx[b]), mode)
        out[b] = fill if t is None else op[t]
    return out


def _scatter_ref(combine: Callable[[Any, Any], Any]) -> Callable[..., np.ndarray]:
    def ref(op: np.ndarray, idx: np.ndarray, upd: np.ndarray, mode: str, **_: Any
            ) -> np.ndarray:
        out = op.copy()
        for b in np.ndindex(*idx.shape[:-1]):
            t = _landing(op.shape[:idx.shape[-1]], tuple(idx[b]), mode)
            if t is not None:
                out[t] = combine(out[t], upd[b])
        return out

    return ref


def _gather_draw(d: Draw) -> Draw:
    (op, idx, _), kw = d
    mode = "clip" if kw["mode"] == "clip" else "fill"
    return (op, idx), {"mode": mode, "fill_value": None}


def _with_unique(d: Draw) -> Draw:
    return d[0], {**d[1], "unique_indices": True}


@st.composite
def dynamic_slice_args(draw: Any, update: bool, min_dims: int = 1, max_dims: int = 3) -> Draw:
    op = draw(arrays(shapes(min_dims=min_dims, max_dims=max_dims)))
    sizes = tuple(draw(st.integers(0, n)) for n in op.shape)
    starts = tuple(np.asarray(draw(st.integers(-2, n + 1)), draw(st.sampled_from([I64, I32])))
                   for n in op.shape)
    if update:
        return (op, draw(arrays(sizes)), *starts), {}
    return (op, *starts), {"slice_sizes": sizes}


def _clamped(shape: tuple[int, ...], sizes: tuple[int, ...], starts: Any) -> tuple[slice, ...]:
    st_ = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, shape, sizes)]
    return tuple(slice(s, s + k) for s, k in zip(st_, sizes))


def _dynamic_slice_ref(op: np.ndarray, *starts: Any, slice_sizes: Any) -> np.ndarray:
    return op[_clamped(op.shape, slice_sizes, starts)]


def _dynamic_update_slice_ref(op: np.ndarray, upd: np.ndarray, *starts: Any) -> np.ndarray:
    out = op.copy()
    out[_clamped(op.shape, upd.shape, starts)] = upd
    return out


IDX = np.array([[0], [1]])
SCATTER_BAD = (
    bad("updates shape", M23, IDX, np.ones((2, 2)), mode="drop"),
    bad("updates dtype", M23, IDX, np.ones((2, 3), np.float32), error=DTypeError, mode="drop"),
    bad("float indices", M23, IDX.astype(float), M23, error=DTypeError, mode="drop"),
)
I0 = np.array(0)
GATHER_KW = {"mode": "clip", "fill_value": None}

INDEXING = [
    Row("gather", gather_args().map(_gather_draw), _gather_ref, dtypes=ALL,
        # Finite differences need a finite fill value (NaN would poison them).
        grad_args=gather_args().map(_gather_draw).map(
            lambda d: (d[0], {**d[1], "fill_value": 0.5})),
        bad=(bad("float indices", M23, IDX.astype(float), error=DTypeError, **GATHER_KW),
             bad("index tuples too long", np.ones(3), np.zeros((2, 2), int), **GATHER_KW),
             bad("scalar indices", M23, np.array(0), **GATHER_KW))),
    Row("gather", gather_args(min_k=0, max_k=0).map(_gather_draw), _gather_ref,
            variant="empty-index-tuples", grad=False),
    Row("scatter_add", gather_args(), _scatter_ref(lambda a, b: a + b), dtypes=NUMERIC,
        bad=SCATTER_BAD),
    Row("scatter", gather_args(), _scatter_ref(lambda a, b: b), dtypes=ALL,
        bad=SCATTER_BAD),
    Row("scatter_mul", gather_args().map(lambda d: (d[0], {**d[1], "unique_indices": False})),
        _scatter_ref(lambda a, b: a * b), dtypes=NUMERIC,
        grad_args=gather_args(unique=True).map(_with_unique)),
    Row("scatter_min", gather_args(), _scatter_ref(np.minimum), dtypes=NUMERIC, distinct=True),
    Row("scatter_max", gather_args(), _scatter_ref(np.maximum), dtypes=NUMERIC, distinct=True),
    Row("dynamic_slice", dynamic_slice_args(update=False), _dynamic_slice_ref, dtypes=ALL,
        bad=(bad("one start per axis", M23, I0, slice_sizes=(1, 1)),
             bad("float start", M23, I0, np.array(0.0), slice_sizes=(1, 1), error=DTypeError),
             bad("slice too big", M23, I0, I0, slice_sizes=(3, 1)))),
    Row("dynamic_update_slice", dynamic_slice_args(update=True), _dynamic_update_slice_ref,
        dtypes=ALL, bad=(
            # JAX's TypeErrors and texts (tests/test_review_fixes_jax22.py compares them)
            bad("update too big", M23, np.ones((3, 1)), I0, I0, error=TypeError,
                jax_text=True),
            bad("update dtype", M23, np.ones((1, 1), np.float32), I0, I0, error=TypeError,
                jax_text=True),
            bad("one start per axis", M23, np.ones((1, 1)), I0))),
    Row("dynamic_update_slice", dynamic_slice_args(update=True, min_dims=0, max_dims=0),
            _dynamic_update_slice_ref, variant="rank-0"),
]

# -------------------------------------------------------------------- linalg


@st.composite
def dot_general_args(draw: Any) -> Draw:
    """Operands with batch, contracting and free axes in random positions."""
    counts = [draw(st.integers(0, 2)) for _ in range(4)]  # batch, contract, lhs/rhs free
    sizes = [[draw(st.integers(1, 3)) for _ in range(c)] for c in counts]
    batch, contract, lfree, rfree = sizes

    def place(groups: list[list[int]]) -> tuple[tuple[int, ...], list[list[int]]]:
        dims = [d for g in groups for d in g]
        perm = draw(st.permutations(range(len(dims))))
        shape = [0] * len(dims)
        for d, p in zip(dims, perm):
            shape[p] = d
        positions, start = [], 0
        for g in groups:
            positions.append([perm[start + i] for i in range(len(g))])
            start += len(g)
        return tuple(shape), positions

    lshape, (lb, lc, _) = place([batch, contract, lfree])
    rshape, (rb, rc, _) = place([batch, contract, rfree])
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    return (draw(arrays(lshape)), draw(arrays(rshape))), {"dimension_numbers": dn}


def _dot_general_ref(lhs: np.ndarray, rhs: np.ndarray, dimension_numbers: Any) -> np.ndarray:
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    lt = [next(letters) for _ in range(lhs.ndim)]
    rt = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lc + lb, rc + rb):
        rt[b] = lt[a]
    out = ([lt[a] for a in lb] + [c for i, c in enumerate(lt) if i not in lc + lb]
           + [c for i, c in enumerate(rt) if i not in rc + rb])
    spec = f"{''.join(lt)},{''.join(rt)}->{''.join(out)}"
    return np.einsum(spec, lhs, rhs).astype(np.result_type(lhs, rhs))


LINALG = [
    Row("dot_general", dot_general_args(), _dot_general_ref, dtypes=NUMERIC, bad=(
        bad("contracting sizes", M23, M32, dimension_numbers=(((1,), (1,)), ((), ()))),
        bad("batch sizes", M23, M32, dimension_numbers=(((), ()), ((0,), (0,)))),
        bad("axis out of range", M23, M32, dimension_numbers=(((2,), (0,)), ((), ()))),
        bad("dtypes", M23, M32.astype(np.float32), dimension_numbers=(((1,), (0,)), ((), ())),
            error=DTypeError))),
]


# --------------------------------------------------- matrix decompositions


@st.composite
def matrices(draw: Any, kind: str = "general", square: bool = True, **params: Any) -> Draw:
    """A batch of small matrices: "spd" (A A^T + n I), "spread" (well-separated singular
    values and eigenvalues: the vectors' derivatives are finite) or "general"."""
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=1, min_side=1, max_side=2))
    m = draw(st.integers(1, 3))
    n = m if square else draw(st.integers(1, 3))
    # Spread matrices have no zero entries: at a diagonal matrix LAPACK's eigenvector signs
    # jump under perturbation, which finite differences would see.
    x = draw(arrays((*batch, m, n), floats(0.1, 0.5) if kind == "spread" else floats(-0.5, 0.5)))
    if kind == "spd":
        x = x @ np.swapaxes(x, -1, -2) + n * np.eye(n)
    elif kind == "spread":
        x = x + np.eye(m, n) * 4.0 * np.arange(1, n + 1)
    return (x,), {k: draw(v) for k, v in params.items()}


def _per_matrix(fn: Callable[..., Any], *xs: np.ndarray) -> list[np.ndarray]:
    batch = xs[0].shape[:-2]
    outs = [fn(*(x[i] for x in xs)) for i in np.ndindex(batch)]
    return [np.stack([o[j] for o in outs]).reshape(batch + np.shape(outs[0][j]))
            for j in range(len(outs[0]))]


def _cholesky_ref(x: np.ndarray) -> np.ndarray:
    import scipy.linalg  # noqa: PLC0415

    return _per_matrix(lambda a: [scipy.linalg.cholesky(a, lower=True)], x)[0].astype(x.dtype)


def _trsolve_ref(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool,
                 transpose_a: bool, conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = np.where(np.eye(n, dtype=bool), 1, t)
    t = np.swapaxes(t, -1, -2) if transpose_a else t
    if left_side:
        return np.linalg.solve(t, b).astype(b.dtype)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)),
                       -1, -2).astype(b.dtype)


@st.composite
def trsolve_args(draw: Any) -> Draw:
    (a,), _ = draw(matrices())
    a = a + 3 * np.eye(a.shape[-1])
    left = draw(st.booleans())
    k = draw(st.integers(1, 2))
    shape = (*a.shape[:-1], k) if left else (*a.shape[:-2], k, a.shape[-1])
    flags = {f: draw(st.booleans()) for f in ("lower", "transpose_a", "unit_diagonal")}
    return (a, draw(arrays(shape))), {"left_side": left, "conjugate_a": False, **flags}


def _lu_ref(x: np.ndarray) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415

    def one(a: np.ndarray) -> list[np.ndarray]:
        p, low, up = scipy.linalg.lu(a)   # a = p @ low @ up
        m, n = a.shape
        k = min(m, n)
        packed = np.zeros(a.shape)
        packed[:, :k] += np.tril(low, -1)
        packed[:k, :] += np.triu(up)
        perm = np.argmax(p, axis=0)       # a[perm] = low @ up
        rows, piv = list(range(m)), []    # the row swaps that produce perm
        for i in range(k):
            j = rows.index(perm[i])
            piv.append(j)
            rows[i], rows[j] = rows[j], rows[i]
        return [packed, np.asarray(piv, np.int32), perm.astype(np.int32)]

    out = _per_matrix(one, x)
    return [out[0].astype(x.dtype), out[1], out[2]]


def _qr_ref(x: np.ndarray, full_matrices: bool) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415

    mode = "full" if full_matrices else "economic"
    return [o.astype(x.dtype) for o in _per_matrix(
        lambda a: scipy.linalg.qr(a, mode=mode), x)]


def _svd_ref(x: np.ndarray, full_matrices: bool, compute_uv: bool) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415

    if not compute_uv:
        return [_per_matrix(lambda a: [scipy.linalg.svdvals(a)], x)[0].astype(x.dtype)]
    u, s, vt = _per_matrix(lambda a: scipy.linalg.svd(a, full_matrices, lapack_driver="gesdd"),
                           x)
    return [o.astype(x.dtype) for o in (s, u, vt)]


def _eigh_ref(x: np.ndarray, lower: bool) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415

    w, v = _per_matrix(lambda a: scipy.linalg.eigh(a, lower=lower, driver="evd"), x)
    return [v.astype(x.dtype), w.astype(x.dtype)]


def _eig_ref(x: np.ndarray, compute_left_eigenvectors: bool,
             compute_right_eigenvectors: bool) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415

    cdt = np.result_type(x.dtype, np.complex64)
    w, vl, vr = _per_matrix(lambda a: scipy.linalg.eig(a, left=True, right=True), x)
    vl = vl / np.linalg.norm(vl, axis=-2, keepdims=True)
    outs = [w] + [vl] * compute_left_eigenvectors + [vr] * compute_right_eigenvectors
    return [o.astype(cdt) for o in outs]


def _schur_ref(x: np.ndarray, compute_schur_vectors: bool) -> list[np.ndarray]:
    import scipy.linalg  # noqa: PLC0415

    t, z = _per_matrix(lambda a: scipy.linalg.schur(a, output="real"), x)
    return [t.astype(x.dtype), z.astype(x.dtype)][:1 + compute_schur_vectors]


def _hessenberg_ref(x: np.ndarray) -> list[np.ndarray]:
    from scipy.linalg import lapack  # noqa: PLC0415

    n = x.shape[-1]

    def one(a: np.ndarray) -> list[np.ndarray]:
        h, tau, _ = lapack.get_lapack_funcs("gehrd", (a,))(a, lo=0, hi=n - 1)
        return [h, tau[:n - 1]]

    h, tau = _per_matrix(one, x)
    return [h.astype(x.dtype), tau.astype(x.dtype)]


SQUARE_BAD = (bad("not square", M23), bad("rank 1", np.ones(3)),
              bad("integers", np.eye(2, dtype=np.int64), error=DTypeError))
DECOMPOSITIONS = [
    Row("cholesky", matrices("spd"), _cholesky_ref, bad=SQUARE_BAD),
    Row("triangular_solve", trsolve_args(), _trsolve_ref, bad=(
        bad("b rows", np.eye(2), M32, left_side=True, lower=True, transpose_a=False,
            conjugate_a=False, unit_diagonal=False),
        bad("batch axes", np.ones((2, 2, 2)), np.ones((3, 2, 2)), left_side=True, lower=True,
            transpose_a=False, conjugate_a=False, unit_diagonal=False),
        bad("dtypes", np.eye(2), np.ones((2, 2), np.float32), error=DTypeError, left_side=True,
            lower=True, transpose_a=False, conjugate_a=False, unit_diagonal=False))),
    # Row swaps make the factors piecewise smooth: derivatives are checked on spread
    # matrices (a dominant diagonal keeps the pivots where they are).
    Row("lu", matrices(square=False), _lu_ref, grad_args=matrices("spread", square=False),
        bad=(bad("rank 1", np.ones(3)),
             bad("integers", np.eye(2, dtype=np.int64), error=DTypeError))),
    Row("qr", matrices(square=False, full_matrices=st.booleans()), _qr_ref,
        grad_args=matrices("spread", square=False, full_matrices=st.just(False)),
        bad=(bad("rank 1", np.ones(3), full_matrices=True),)),
    Row("svd", matrices("spread", square=False, full_matrices=st.booleans(),
                        compute_uv=st.booleans()), _svd_ref,
        grad_args=matrices("spread", square=False, full_matrices=st.just(False),
                           compute_uv=st.booleans()),
        bad=(bad("rank 1", np.ones(3), full_matrices=True, compute_uv=True),)),
    Row("eigh", matrices("spread", lower=st.booleans()), _eigh_ref,
        bad=tuple(bad(b.label, *b.operands, error=b.error, lower=True) for b in SQUARE_BAD)),
    # As in JAX, eig has first derivatives of its eigenvalues only (no second order: it goes
    # through the eigenvectors); tests/numpy/test_numpy_poly_eig.py checks them against JAX.
    Row("eig", matrices("spread", compute_left_eigenvectors=st.booleans(),
                        compute_right_eigenvectors=st.booleans()), _eig_ref, grad=False,
        bad=tuple(bad(b.label, *b.operands, error=b.error, compute_left_eigenvectors=False,
                      compute_right_eigenvectors=True) for b in SQUARE_BAD)),
    # As in JAX, schur and hessenberg have no derivatives (the error is checked against
    # JAX's in tests/test_scipy_linalg_special_more.py).
    Row("schur", matrices(compute_schur_vectors=st.booleans()), _schur_ref, grad=False,
        bad=tuple(bad(b.label, *b.operands, error=b.error, compute_schur_vectors=True)
                  for b in SQUARE_BAD)),
    Row("hessenberg", matrices(), _hessenberg_ref, grad=False, bad=SQUARE_BAD),
]


# ------------------------------------------------------------------- prng


def _threefry_ref(k1: Any, k2: Any, x1: Any, x2: Any) -> list[np.ndarray]:
    """Threefry-2x32 (20 rounds) on Python integers, one element at a time."""
    m = 0xFFFFFFFF
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    shape = np.broadcast_shapes(*(np.shape(a) for a in (k1, k2, x1, x2)))
    outs = [np.zeros(shape, np.uint32), np.zeros(shape, np.uint32)]
    for idx in np.ndindex(shape):
        a, b, c, d = (int(np.broadcast_to(v, shape)[idx]) for v in (k1, k2, x1, x2))
        ks = [a, b, a ^ b ^ 0x1BD11BDA]
        x = [(c + ks[0]) & m, (d + ks[1]) & m]
        for i in range(5):
            for r in rot[i % 2]:
                x[0] = (x[0] + x[1]) & m
                x[1] = x[0] ^ (((x[1] << r) | (x[1] >> (32 - r))) & m)
            x[0] = (x[0] + ks[(i + 1) % 3]) & m
            x[1] = (x[1] + ks[(i + 2) % 3] + i + 1) & m
        outs[0][idx], outs[1][idx] = x
    return outs


@st.composite
def threefry_args(draw: Any) -> Draw:
    shape = draw(shapes())
    words = hnp.arrays(np.uint32, shape, elements=st.integers(0, 2 ** 32 - 1))
    return tuple(draw(words) for _ in range(4)), {}


def _jax_gamma_ref(key: Any, a: np.ndarray, log_space: bool) -> np.ndarray:
    jax = pytest.importorskip("jax")
    from funcgrad.testing import jax_x64_mode  # noqa: PLC0415

    with jax_x64_mode(jax, True):
        sampler = jax.random.loggamma if log_space else jax.random.gamma
        return np.asarray(sampler(jax.random.wrap_key_data(key), a, dtype=a.dtype))


def _jax_gamma_grad_ref(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    jax = pytest.importorskip("jax")
    from funcgrad.testing import jax_x64_mode  # noqa: PLC0415

    with jax_x64_mode(jax, True):
        # jit caches the compiled kernel per shape; bound eagerly, JAX compiles every call.
        return np.asarray(jax.jit(jax.lax.random_gamma_grad)(a, x))


U32 = np.ones(2, np.uint32)
GAMMA_SHAPES = st.sampled_from([(), (5,), (2, 3)])
PRNG = [
    Row("threefry2x32", threefry_args(), _threefry_ref, grad=False, dtypes=(F64,), bad=(
        bad("shapes", U32, U32, U32, np.ones(3, np.uint32)),
        bad("dtypes", U32, U32, U32, np.ones(2, np.int32), error=DTypeError))),
    # random_gamma draws by rejection and random_gamma_grad sums a series: JAX is the
    # reference (its gamma's derivative is first order only, so no check_grads here;
    # tests/test_random_samplers.py checks the first derivative).
    # JAX compiles its sampler and random_gamma_grad once per shape and dtype: three fixed
    # shapes keep those compiles (not the draws) from dominating the table's time.
    Row("random_gamma", st.builds(lambda k, a, log: ((k, a), {"log_space": log}),
                                  hnp.arrays(np.uint32, 2), GAMMA_SHAPES.flatmap(
                                      lambda s: arrays(s, POS)), st.booleans()),
        lambda k, a, log_space: _jax_gamma_ref(k, a, log_space), grad=False, bad=(
            bad("key dtype", np.ones(2, np.int32), np.ones(3), log_space=False,
                error=DTypeError),
            bad("key batch", np.ones((2, 2), np.uint32), np.ones(3), log_space=False))),
    Row("random_gamma_grad", GAMMA_SHAPES.flatmap(lambda s: st.tuples(arrays(s, POS),
                                                                      arrays(s, POS))).map(
            lambda ax: (ax, {})), lambda a, x: _jax_gamma_grad_ref(a, x),
        grad=False, bad=(bad("shapes", np.ones(2), np.ones(3)),
                         bad("dtypes", np.ones(2, np.int32), np.ones(2, np.int32),
                             error=DTypeError))),
]


def _host_sin(x: np.ndarray) -> np.ndarray:
    return np.sin(x)


def _ignore(*args: Any) -> None:
    return None


def _pure_args(d: Draw) -> Draw:
    (x,), _ = d
    return (x,), {"callback": _host_sin, "result_avals": (get_aval(x),),
                  "vmap_method": None}


def _io_args(d: Draw) -> Draw:
    (x,), _ = d
    return (x,), {"callback": _host_sin, "result_avals": (get_aval(x),), "ordered": False}


def _check_args(d: Draw) -> Draw:
    # A debug check (jit compiles it to nothing) whose error did not happen; the eager
    # raise and the functionalization are tested in tests/test_checkify.py.
    (x,), _ = d
    err = Error.new(FailedCheckError(None, "x={}", x), np.asarray(False), 1)
    return (np.asarray(False), np.asarray(1, np.int32), x), {"err_tree": err.treedef(),
                                                              "debug": True}


CALLBACKS = [
    Row("check", operands(REAL).map(_check_args), lambda *ops, **_: [], grad=False),
    Row("debug_callback", operands(REAL, REAL).map(lambda d: (d[0], {"callback": _ignore})),
        lambda *ops, callback: [], grad=False),
    Row("pure_callback", operands(REAL).map(_pure_args),
        lambda x, **_: [np.sin(x)], grad=False, dtypes=(F64,)),
    Row("io_callback", operands(REAL).map(_io_args),
        lambda x, **_: [np.sin(x)], grad=False, dtypes=(F64,)),
]

TABLE: list[Row] = (ELEMENTWISE + REDUCTIONS + STRUCTURAL + INDEXING + LINALG
                    + DECOMPOSITIONS + PRNG
                    + CALLBACKS)

# ------------------------------------------- special functions, bits and top_k
# (funcgrad/primitives/special.py, bits.py, sorting.py). References are SciPy's and
# Python's; derivatives JAX does not define in every operand (polygamma, igamma*, zeta,
# betainc, nextafter) are checked in tests/core/test_special.py.


def _scipy_ref(name: str) -> Callable[..., Any]:
    def ref(*ops: np.ndarray) -> np.ndarray:
        import scipy.special  # noqa: PLC0415

        return np.asarray(getattr(scipy.special, name)(*ops)).astype(ops[0].dtype)

    return ref


def _polygamma_ref(m: np.ndarray, x: np.ndarray) -> np.ndarray:
    import scipy.special  # noqa: PLC0415

    return np.asarray(scipy.special.polygamma(m.astype(int), x)).astype(x.dtype)


def _bits_ref(op: Callable[[int, int, int], int]) -> Callable[..., np.ndarray]:
    """An integer bit operation on Python ints of the operands' width (two's complement)."""
    def ref(*ops: np.ndarray) -> np.ndarray:
        dt = ops[0].dtype
        bits = dt.itemsize * 8
        out = [op(*(int(v) % (1 << bits) for v in vals), bits) % (1 << bits)
               for vals in zip(*(o.ravel() for o in ops))]
        unsigned = np.array(out, dtype=f"u{dt.itemsize}").reshape(ops[0].shape)
        return unsigned.view(dt)

    return ref


def _sra(x: int, y: int, bits: int) -> int:
    signed = x - (1 << bits) if x >> (bits - 1) else x
    return signed >> min(y, bits - 1)


def _igamma_grad_a_ref(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(30):
        def p(s: Any, xi: float) -> Any:
            return mpmath.gammainc(s, 0, float(xi), regularized=True)

        d = [float(mpmath.diff(lambda s, xi=xi: p(s, xi), float(ai)))
             for ai, xi in zip(a.ravel(), x.ravel())]
    return np.array(d, dtype=a.dtype).reshape(a.shape)


def _expn_ref(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    import scipy.special  # noqa: PLC0415

    return np.asarray(scipy.special.expn(n.astype(int), x)).astype(x.dtype)


SHIFT_X = st.sampled_from([-9.0, -3.0, -1.0, 0.0, 1.0, 5.0, 100.0])
SHIFT_Y = st.sampled_from([-1.0, 0.0, 1.0, 3.0, 7.0, 31.0, 40.0, 63.0, 64.0, 70.0])
INTS = (I64, I32)


@st.composite
def top_k_args(draw: Any) -> Draw:
    x = draw(arrays(shapes(min_dims=1), SMALL_INTS | REAL))
    axis = draw(st.integers(0, x.ndim - 1))
    return (x,), {"k": draw(st.integers(0, x.shape[axis])), "axis": axis}


def _top_k_ref(x: np.ndarray, k: int, axis: int) -> list[np.ndarray]:
    order = np.argsort(-x.astype(np.float64), axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]


@st.composite
def bitcast_args(draw: Any, widen: bool) -> Draw:
    shape = draw(shapes())
    if widen:
        return (draw(arrays((*shape, 2))),), {"new_dtype": F64}
    return (draw(arrays(shape)),), {"new_dtype": draw(st.sampled_from(
        [np.dtype(t) for t in ("int64", "uint64", "float32", "int32", "uint16", "int8")]))}


def _bitcast_ref(x: np.ndarray, new_dtype: Any) -> np.ndarray:
    if x.dtype.itemsize >= new_dtype.itemsize:
        return np.ascontiguousarray(x)[..., None].view(new_dtype).reshape(
            *x.shape, x.dtype.itemsize // new_dtype.itemsize).squeeze(
            axis=-1 if x.dtype.itemsize == new_dtype.itemsize else ())
    return np.ascontiguousarray(x).view(new_dtype)[..., 0]


SPECIAL_ROWS = [
    Row("lgamma", operands(floats(-2.9, 3.0, avoid=0.0, period=1.0, gap=0.05)),
        lambda x: np.vectorize(math.lgamma, otypes=[np.float64])(x).astype(x.dtype),
        bad=(bad("int operand", np.arange(3), error=DTypeError),)),
    Row("digamma", operands(POS), _scipy_ref("psi")),
    Row("erf_inv", operands(UNIT), _scipy_ref("erfinv")),
    Row("bessel_i0e", operands(FAR_FROM_0), _scipy_ref("i0e")),
    Row("bessel_i1e", operands(FAR_FROM_0), _scipy_ref("i1e")),
    Row("polygamma", operands(st.sampled_from([0.0, 1.0, 2.0, 3.0]), POS), _polygamma_ref,
        grad=False, bad=binary_bad("float")),
    *(Row(n, operands(POS, POS), _scipy_ref(ref), grad=False, bad=binary_bad("float"))
      for n, ref in (("igamma", "gammainc"), ("igammac", "gammaincc"))),
    Row("igamma_grad_a", operands(floats(0.5, 3.0), POS), _igamma_grad_a_ref, grad=False,
        dtypes=(F64,)),
    Row("regularized_incomplete_beta", operands(POS, POS, floats(0.05, 0.95)),
        _scipy_ref("betainc"), grad=False,
        bad=(bad("unequal shapes", M23, M23, M32),
             bad("int operands", np.arange(3), np.arange(3), np.arange(3),
                 error=DTypeError))),
    Row("zeta", operands(floats(1.2, 4.0), POS), _scipy_ref("zeta"), grad=False),
    Row("erfcx", operands(REAL), _scipy_ref("erfcx")),
    Row("dawsn", operands(REAL), _scipy_ref("dawsn")),
    Row("exp1", operands(POS), _scipy_ref("exp1")),
    Row("expi", operands(FAR_FROM_0), _scipy_ref("expi")),
    Row("spence", operands(floats(0.2, 3.0, avoid=1.0, gap=0.05)), _scipy_ref("spence")),
    Row("expn", operands(st.sampled_from([0.0, 1.0, 2.0, 3.0]), POS), _expn_ref, grad=False),
    Row("nextafter", operands(REAL, REAL), np.nextafter, grad=False, dtypes=FLOATS,
        bad=binary_bad("float")),
    Row("shift_left", operands(SHIFT_X, SHIFT_Y), _bits_ref(
        lambda x, y, b: x << y if y < b else 0), grad=False, dtypes=INTS,
        bad=binary_bad("integral")[:-1] + (bad("float operands", np.ones(3), np.ones(3),
                                                error=DTypeError),)),
    Row("shift_right_logical", operands(SHIFT_X, SHIFT_Y), _bits_ref(
        lambda x, y, b: x >> y if y < b else 0), grad=False, dtypes=INTS),
    Row("shift_right_arithmetic", operands(SHIFT_X, SHIFT_Y), _bits_ref(_sra), grad=False,
        dtypes=INTS),
    Row("population_count", operands(SHIFT_X), _bits_ref(lambda x, b: bin(x).count("1")),
        grad=False, dtypes=INTS, bad=(bad("float operand", np.ones(2), error=DTypeError),)),
    Row("clz", operands(SHIFT_X), _bits_ref(lambda x, b: b - x.bit_length()), grad=False,
        dtypes=INTS),
    Row("bitcast_convert_type", bitcast_args(False), _bitcast_ref, grad=False, dtypes=(F64,),
        bad=(bad("widening needs the last axis", np.ones(3, np.float32),
                 new_dtype=np.dtype("float64")),)),
    Row("bitcast_convert_type", bitcast_args(True), _bitcast_ref, grad=False,
        dtypes=(F32,), variant="widen"),
    Row("top_k", top_k_args(), _top_k_ref, dtypes=NUMERIC,
        grad_args=top_k_args().map(lambda d: (spread(d[0]), d[1])),
        bad=(bad("k too large", np.ones(3), k=4, axis=0),)),
]
TABLE += SPECIAL_ROWS

# ------------------------------------------------------ complex numbers and fft
# (funcgrad/primitives/elementwise.py, fft.py). Their derivatives, with complex operands or
# results, are checked in the complex plane in tests/core/test_complex.py and test_fft.py.

C128 = np.dtype("complex128")


def complex_arrays(shape: Any) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(C128, shape, elements=st.complex_numbers(
        max_magnitude=3.0, allow_nan=False, allow_infinity=False))


def complex_operand(**params: Any) -> st.SearchStrategy[Draw]:
    return st.tuples(complex_arrays(shapes())).map(lambda t: (t, dict(params)))


@st.composite
def fft_args(draw: Any, fft_type: int) -> Draw:
    lengths = tuple(draw(st.integers(1, 5)) for _ in range(draw(st.integers(1, 3))))
    lead = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    if fft_type == 2:
        x = draw(arrays(lead + lengths))
    elif fft_type == 3:
        x = draw(complex_arrays(lead + lengths[:-1] + (lengths[-1] // 2 + 1,)))
    else:
        x = draw(complex_arrays(lead + lengths))
    from funcgrad.primitives.fft import FftType  # noqa: PLC0415

    return (x,), {"fft_type": FftType(fft_type), "fft_lengths": lengths}


def _fft_ref(x: np.ndarray, fft_type: int, fft_lengths: tuple[int, ...]) -> np.ndarray:
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    fn = {0: np.fft.fftn, 1: np.fft.ifftn, 2: np.fft.rfftn}.get(int(fft_type))
    if fn is None:
        return np.fft.irfftn(x, s=fft_lengths, axes=axes)
    return fn(x, axes=axes).astype(C128)


C23 = np.ones((2, 3), C128)
COMPLEX_FFT_ROWS = [
    Row("real", complex_operand(), np.real, grad=False, dtypes=(F64,),
        bad=(bad("float operand", M23, error=DTypeError),)),
    Row("imag", complex_operand(), np.imag, grad=False, dtypes=(F64,),
        bad=(bad("float operand", M23, error=DTypeError),)),
    Row("conj", complex_operand(input_dtype=C128), lambda x, input_dtype: np.conj(x),
        grad=False, dtypes=(F64,),
        bad=(bad("int operand", np.arange(3), error=DTypeError, input_dtype=I64),)),
    Row("conj", operands(REAL).map(lambda d: (d[0], {"input_dtype": F64})),
        lambda x, input_dtype: x.astype(C128), grad=False, dtypes=(F64,), variant="real"),
    Row("complex", operands(REAL, REAL, rank0=True),
        lambda x, y: (x + 1j * y).astype(np.result_type(x.dtype, np.complex64)), grad=False,
        bad=binary_bad("float") + (bad("complex operands", C23, C23, error=DTypeError),)),
    *(Row("fft", fft_args(t), _fft_ref, grad=False, dtypes=(F64,), variant=name, bad=bads)
      for t, name, bads in (
          (0, "FFT", (bad("float operand", M23, error=DTypeError, fft_type=0,
                          fft_lengths=(3,)),
                      bad("lengths", C23, fft_type=0, fft_lengths=(4,)),
                      bad("too many axes", C23, fft_type=0, fft_lengths=(1, 2, 3)))),
          (1, "IFFT", ()),
          (2, "RFFT", (bad("complex operand", C23, error=DTypeError, fft_type=2,
                           fft_lengths=(3,)),)),
          (3, "IRFFT", (bad("half-spectrum length", C23, fft_type=3, fft_lengths=(3,)),)))),
]
TABLE += COMPLEX_FFT_ROWS


# ------------------------------------------- convolution and window reductions
# (funcgrad/primitives/convolution.py, windows.py; more in tests/core/test_convolution.py
# and tests/core/test_windows.py)


@st.composite
def conv_args(draw: Any) -> Draw:
    nd = draw(st.integers(1, 2))
    g, b = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    n, c, o = b * draw(st.integers(1, 2)), g * draw(st.integers(1, 2)), g * b
    k = [draw(st.integers(1, 2)) for _ in range(nd)]
    sp = [draw(st.integers(2, 4)) for _ in range(nd)]
    perms = [tuple(draw(st.permutations(range(nd + 2)))) for _ in range(3)]
    lhs = np.transpose(draw(arrays(tuple([n, c, *sp]))), np.argsort(perms[0]))
    rhs = np.transpose(draw(arrays(tuple([o, c // g, *k]))), np.argsort(perms[1]))
    params = {"window_strides": tuple(draw(st.integers(1, 2)) for _ in range(nd)),
              "padding": tuple((draw(st.integers(-1, 1)), draw(st.integers(0, 1)))
                               for _ in range(nd)),
              "lhs_dilation": tuple(draw(st.integers(1, 2)) for _ in range(nd)),
              "rhs_dilation": tuple(draw(st.integers(1, 2)) for _ in range(nd)),
              "dimension_numbers": lax.ConvDimensionNumbers(*perms),
              "feature_group_count": g, "batch_group_count": b}
    return (lhs, rhs), params


def _conv_ref(lhs: np.ndarray, rhs: np.ndarray, *, window_strides: Any, padding: Any,
              lhs_dilation: Any, rhs_dilation: Any, dimension_numbers: Any,
              feature_group_count: int, batch_group_count: int) -> np.ndarray:
    """Spread and pad the input, then one einsum per kernel position."""
    ls, rs, os_ = dimension_numbers
    x, w = np.transpose(lhs, ls).astype(F64), np.transpose(rhs, rs).astype(F64)
    (n, c), o, k, g, b = x.shape[:2], w.shape[0], w.shape[2:], feature_group_count, \
        batch_group_count
    spread = np.zeros((n, c, *((m - 1) * d + 1 for m, d in zip(x.shape[2:], lhs_dilation))))
    spread[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    big = np.pad(spread, [(0, 0)] * 2 + [(max(lo, 0), max(hi, 0)) for lo, hi in padding])
    xp = big[(slice(None),) * 2 + tuple(slice(max(-lo, 0), big.shape[2 + i] - max(-hi, 0))
                                        for i, (lo, hi) in enumerate(padding))]
    out_sp = [max(0, (m - (kk - 1) * r - 1) // s + 1) for m, kk, r, s in
              zip(xp.shape[2:], k, rhs_dilation, window_strides)]
    xg = xp.reshape(b, n // b, g, c // g, *xp.shape[2:]).swapaxes(1, 2).reshape(
        b * g, n // b, c // g, *xp.shape[2:])
    wg = w.reshape(b * g, o // (b * g), c // g, *k)
    out = np.zeros((b * g, n // b, o // (b * g), *out_sp))
    for kpos in np.ndindex(*k):
        sl = tuple(slice(kp * r, kp * r + (m - 1) * s + 1, s) for kp, r, m, s in
                   zip(kpos, rhs_dilation, out_sp, window_strides))
        out += np.einsum("gnc...,goc->gno...", xg[(slice(None),) * 3 + sl],
                         wg[(Ellipsis, *kpos)])
    out = out.swapaxes(0, 1).reshape(n // b, o, *out_sp)
    return np.transpose(out, np.argsort(os_)).astype(lhs.dtype)


@st.composite
def window_args(draw: Any, dilated: bool = True, n_ops: int = 1) -> Draw:
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    win = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    params = {"window_dimensions": win,
              "window_strides": tuple(draw(st.integers(1, 2)) for _ in range(rank)),
              "padding": tuple((draw(st.integers(0, w - 1)), draw(st.integers(0, w - 1)))
                               for w in win),
              "base_dilation": tuple(draw(st.integers(1, 2)) if dilated else 1
                                     for _ in range(rank)),
              "window_dilation": tuple(draw(st.integers(1, 2)) if dilated else 1
                                       for _ in range(rank))}
    x = draw(arrays(shape))
    if n_ops == 1:
        return (x,), params
    out = tuple(np.shape(_window_members(shape, **params)[0])[:-1])
    first = draw(arrays(shape if n_ops == 2 else out))
    return (first, x), params


def _window_members(shape: tuple[int, ...], window_dimensions: Any, window_strides: Any,
                    padding: Any, base_dilation: Any, window_dilation: Any
                    ) -> tuple[np.ndarray, np.ndarray]:
    """For each window (row-major) the flat operand index of each place, and whether the
    place holds an operand element (not padding or a dilation hole)."""
    axes = []
    for n, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        size = lo + (n - 1) * bd + 1 + hi
        out = max(0, (size - (w - 1) * wd - 1) // s + 1)
        r = np.arange(out)[:, None] * s + np.arange(w)[None, :] * wd - lo
        axes.append((r // bd, (r >= 0) & (r % bd == 0) & (r // bd < n)))
    outs = [a[0].shape[0] for a in axes]
    idx = np.zeros((*outs, *window_dimensions), dtype=np.int64)
    ok = np.ones_like(idx, dtype=bool)
    rank = len(shape)
    for i, (src, valid) in enumerate(axes):
        view = [1] * (2 * rank)
        view[i], view[rank + i] = src.shape
        idx = idx * shape[i] + np.clip(src, 0, shape[i] - 1).reshape(view)
        ok = ok & valid.reshape(view)
    k = math.prod(window_dimensions)
    return idx.reshape(*outs, k), ok.reshape(*outs, k)


def _reduce_window_ref(kind: str) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, **params: Any) -> np.ndarray:
        idx, ok = _window_members(x.shape, **params)
        lo, hi = ((np.iinfo(x.dtype).min, np.iinfo(x.dtype).max) if x.dtype.kind in "iu"
                  else (-np.inf, np.inf))
        init = {"sum": 0, "max": lo, "min": hi}[kind]
        vals = np.where(ok, x.ravel()[idx] if x.size else x.dtype.type(0), init)
        return getattr(np, kind)(vals, axis=-1, initial=init).astype(x.dtype)

    return ref


def _selected_place(x: np.ndarray, select_prim: str, params: Any
                    ) -> tuple[np.ndarray, np.ndarray]:
    idx, ok = _window_members(x.shape, **params)
    sign = 1.0 if select_prim == "ge" else -1.0
    vals = np.where(ok, sign * x.ravel()[idx].astype(F64), -np.inf)
    pick = np.argmax(vals, axis=-1)[..., None]  # the first extreme of each window
    return (np.take_along_axis(idx, pick, -1)[..., 0],
            np.take_along_axis(ok, pick, -1)[..., 0])


def _sga_ref(t: np.ndarray, x: np.ndarray, *, select_prim: str, **params: Any) -> np.ndarray:
    where, ok = _selected_place(x, select_prim, params)
    return np.where(ok, t.ravel()[where], 0).astype(t.dtype)


def _sas_ref(s: np.ndarray, x: np.ndarray, *, select_prim: str, **params: Any) -> np.ndarray:
    where, ok = _selected_place(x, select_prim, params)
    out = np.zeros(x.size, dtype=F64)
    np.add.at(out, where[ok], s[ok])
    return out.reshape(x.shape).astype(s.dtype)


def _with_select(prim: str) -> Callable[[Draw], Draw]:
    return lambda d: (d[0], {**d[1], "select_prim": prim})


_W1 = {"window_dimensions": (2,), "window_strides": (1,), "padding": ((0, 0),),
       "base_dilation": (1,), "window_dilation": (1,)}
WINDOW_ROWS = [
    Row("conv_general_dilated", conv_args(), _conv_ref, bad=(
        bad("feature sizes", np.ones((1, 4, 5)), np.ones((2, 3, 2)), window_strides=(1,),
            padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
            dimension_numbers=lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)),
            feature_group_count=1, batch_group_count=1),
        bad("dtypes", np.ones((1, 2, 5)), np.ones((2, 2, 2), np.float32), window_strides=(1,),
            padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
            dimension_numbers=lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)),
            feature_group_count=1, batch_group_count=1, error=DTypeError))),
    Row("reduce_window_sum", window_args(), _reduce_window_ref("sum"), dtypes=NUMERIC, bad=(
        bad("params rank", np.ones((2, 3)), error=TypeError, jax_text=True, **_W1),)),
    *(Row(f"reduce_window_{k}", window_args(), _reduce_window_ref(k), dtypes=NUMERIC,
          distinct=True, grad_args=window_args(dilated=False), bad=(
              bad("params rank", np.ones((2, 3)), error=TypeError, jax_text=True,
                  **_W1),)) for k in ("max", "min")),
    *(Row("select_and_gather_add", window_args(n_ops=2).map(_with_select(sp)), _sga_ref,
          distinct=True, variant=sp, bad=(
              bad("shapes", np.ones(3), np.ones(4), select_prim=sp, **_W1),))
      for sp in ("ge", "le")),
    *(Row("select_and_scatter_add", window_args(n_ops=3).map(_with_select(sp)), _sas_ref,
          distinct=True, variant=sp, bad=(
              bad("source shape", np.ones(2), np.ones(4), select_prim=sp, **_W1),))
      for sp in ("ge", "le")),
]
TABLE += WINDOW_ROWS


def test_table_covers_every_primitive() -> None:
    """Every primitive has a row, except the call-like ones (custom rules, checkpoint,
    jit, control flow), which run user functions and are tested with their transforms."""
    call_like = {n for n, p in PRIMITIVES.items() if p.call_like}
    assert CALL_LIKE <= call_like
    # Collectives act only inside a map that names their axis (an unbound name raises):
    # tests/transforms/test_collectives.py checks them under vmap, against JAX.
    from funcgrad.primitives.collectives import COLLECTIVE_NAMES

    named_axis = set(COLLECTIVE_NAMES)
    missing = sorted(set(PRIMITIVES) - call_like - named_axis - {r.prim for r in TABLE})
    assert not missing, f"primitives without a row in TABLE: {missing}"
    unknown = sorted({r.prim for r in TABLE} - set(PRIMITIVES))
    assert not unknown, f"TABLE rows for unknown primitives: {unknown}"
    ids = [r.id for r in TABLE]
    assert len(ids) == len(set(ids))


# -------------------------------------------------------------------- helpers


def params(column: str) -> list[Any]:
    out = []
    for r in TABLE:
        if column == "grad" and not r.grad:
            continue
        marks = [pytest.mark.xfail(strict=True, reason=r.bugs[column])] if column in r.bugs \
            else []
        out.append(pytest.param(r, id=r.id, marks=marks))
    return out


def cast(a: Any, dtype: np.dtype[Any]) -> Any:
    """A drawn float64 operand in ``dtype`` (integers rounded, booleans ``a > 0``)."""
    if a.dtype != F64:
        return a
    if dtype.kind == "b":
        return np.asarray(a > 0)
    if dtype.kind in "iu":
        return quiet(np.asarray, np.nan_to_num(np.round(a)), dtype=dtype)
    return np.asarray(a, dtype=dtype)


def quiet(f: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``f(*args, **kw)`` without NumPy's warnings (integer division by zero...)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kw)


def bind(row: Row, *ops: Any, **params: Any) -> Any:
    return quiet(PRIMITIVES[row.prim].bind, *ops, **params)


def assert_same(actual: Any, expected: Any, what: str = "") -> None:
    a_leaves, e_leaves = tree_leaves(actual), tree_leaves(expected)
    assert len(a_leaves) == len(e_leaves)
    for a, e in zip(a_leaves, e_leaves):
        assert isinstance(a, funcgrad.Array), f"{what}result {a!r} is not a funcgrad Array"
        a, e = np.asarray(a), np.asarray(e)
        assert (a.shape, a.dtype) == (e.shape, e.dtype), \
            f"{what}{a.dtype}{list(a.shape)} != reference {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "fc":
            tol = TOL.get(e.dtype, 1e-12)
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol, err_msg=what)
        else:
            np.testing.assert_array_equal(a, e, err_msg=what)


def draw_operands(row: Row, data: st.DataObject, column: str = "impl") -> Draw:
    ops, kw = data.draw(row.strategy(column), label="operands, params")
    if column == "grad":
        return ops, kw
    dtype = data.draw(st.sampled_from(row.dtypes), label="dtype")
    return tuple(cast(o, dtype) for o in ops), kw


def run(row: Row, column: str, body: Callable[[st.DataObject], None],
        base: settings = SETTINGS) -> None:
    """``body(data)`` under hypothesis; known bugs (strict xfails) skip shrinking."""
    if column in row.bugs:
        base = settings(base, phases=(Phase.explicit, Phase.generate))
    given(data=st.data())(base(body))()


# -------------------------------------------------------------------- columns


@pytest.mark.parametrize("row", params("impl"))
def test_impl(row: Row) -> None:
    def body(data: st.DataObject) -> None:
        ops, kw = draw_operands(row, data)
        assert_same(bind(row, *ops, **kw), quiet(row.ref, *ops, **kw))

    run(row, "impl", body)


@pytest.mark.parametrize("row", params("abstract_eval"))
def test_abstract_eval(row: Row) -> None:
    prim = PRIMITIVES[row.prim]

    def body(data: st.DataObject) -> None:
        ops, kw = draw_operands(row, data)
        avals = abstract_eval(prim, [get_aval(o) for o in ops], kw)
        outs = bind(row, *ops, **kw)
        outs = outs if prim.multiple_results else [outs]
        assert [(a.shape, a.dtype) for a in avals] == [(o.shape, o.dtype) for o in outs]

    run(row, "abstract_eval", body)


HALF = (np.dtype(funcgrad.numpy.bfloat16), np.dtype(np.float16))


@pytest.mark.parametrize("row", [p for p in params("half") if F32 in p.values[0].dtypes])
def test_half_precision(row: Row) -> None:
    """On bfloat16 and float16 operands each primitive either gives the dtype its
    abstract_eval promises, eagerly and jitted, or refuses the dtype with a named error
    (never an internal error: NumPy's bfloat16 matmul, for one, returns float32)."""
    prim = PRIMITIVES[row.prim]

    def body(data: st.DataObject) -> None:
        ops, kw = data.draw(row.strategy("impl"), label="operands, params")
        for dtype in HALF:
            half = tuple(cast(o, dtype) for o in ops)
            try:
                avals = abstract_eval(prim, [get_aval(o) for o in half], kw)
            except (DTypeError, ShapeError):
                continue
            for f in (lambda *a: bind(row, *a, **kw),
                      funcgrad.jit(lambda *a: bind(row, *a, **kw))):
                outs = f(*half)
                outs = outs if prim.multiple_results else [outs]
                assert [(a.shape, a.dtype) for a in avals] == \
                    [(o.shape, o.dtype) for o in outs], dtype

    run(row, "half", body)


@pytest.mark.parametrize("row", params("staged"))
def test_staged(row: Row) -> None:
    def body(data: st.DataObject) -> None:
        ops, kw = draw_operands(row, data)
        closed = funcgrad.make_jaxpr(lambda *a: bind(row, *a, **kw))(*ops)
        assert [e.primitive.name for e in closed.eqns] == [row.prim], str(closed)
        staged = quiet(funcgrad.eval_jaxpr, closed, *ops)
        assert_same(staged, tree_leaves(bind(row, *ops, **kw)), what=f"{closed}\n")

    run(row, "staged", body)


@pytest.mark.parametrize("row", params("grad"))
def test_grad(row: Row) -> None:
    def body(data: st.DataObject) -> None:
        ops, kw = draw_operands(row, data, "grad")
        diff = [i for i, o in enumerate(ops) if o.dtype == F64]

        def f(*floats: Any) -> Any:
            full = list(ops)
            for i, x in zip(diff, floats):
                full[i] = x
            return PRIMITIVES[row.prim].bind(*full, **kw)

        check_grads(f, [ops[i] for i in diff], order=2, modes=("fwd", "rev"))

    run(row, "grad", body, GRAD_SETTINGS)


@pytest.mark.parametrize("row", params("grad"))
def test_staged_vjp(row: Row, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eager backward stages a rule once its signature comes back often
    (funcgrad.transforms.staged_vjp): the staged rule gives the eager rule's cotangents bit
    for bit, with respect to each float operand alone and to all of them."""
    prim = PRIMITIVES[row.prim]

    def body(data: st.DataObject) -> None:
        ops, kw = draw_operands(row, data, "grad")
        diff = [i for i, o in enumerate(ops) if o.dtype == F64]
        subsets = [[i] for i in diff] + ([diff] if len(diff) > 1 else [])
        for dtype in (F64, F32):
            ops_d = tuple(np.asarray(o, dtype) if o.dtype == F64 else o for o in ops)
            for which in subsets:
                def f(*floats: Any, which: list[int] = which, ops_d: Any = ops_d) -> Any:
                    full = list(ops_d)
                    for i, x in zip(which, floats):
                        full[i] = x
                    return prim.bind(*full, **kw)

                primals = [ops_d[i] for i in which]
                funcgrad.clear_caches()  # signatures and rules staged by earlier examples
                out, pull = quiet(funcgrad.vjp, f, *primals)
                ct = tree_util.tree_map(
                    lambda o: np.asarray(data.draw(arrays(np.shape(o)), label="ct"),
                                         np.asarray(o).dtype), out)
                monkeypatch.setattr(staged_vjp, "STAGE_AFTER", 1 << 30)
                eager = quiet(pull, ct)
                monkeypatch.setattr(staged_vjp, "STAGE_AFTER", 1)
                staged = quiet(pull, ct)
                for e, s in zip(tree_leaves(eager), tree_leaves(staged)):
                    e, s = np.asarray(e), np.asarray(s)
                    assert (s.dtype, s.shape) == (e.dtype, e.shape)
                    np.testing.assert_array_equal(s, e, strict=True)
                # (Zero-derivative primitives record no node; several results: eager.)
                assert staged_vjp.staged_count(prim) > 0 or prim.zero_derivative or \
                    prim.multiple_results, "the rule was not staged"

    run(row, "grad", body, GRAD_SETTINGS)


BAD_CASES = [pytest.param(r, b, id=f"{r.id}-{b.label}") for r in TABLE for b in r.bad]


@pytest.mark.parametrize("row,case", BAD_CASES)
def test_bad_input(row: Row, case: Bad) -> None:
    """The shape rule rejects the operands, with the primitive and the shapes in the
    message, both eagerly and while staging."""
    prim = PRIMITIVES[row.prim]
    for run_it in (lambda: prim.bind(*case.operands, **case.params),
                   lambda: funcgrad.make_jaxpr(lambda *a: prim.bind(*a, **case.params))(
                       *case.operands)):
        with pytest.raises(case.error) as info:
            run_it()
        msg = str(info.value)
        if case.jax_text:
            continue  # compared with JAX's in tests/test_review_fixes_jax22.py
        assert re.search(rf"\b{re.escape(row.prim)}\b", msg), msg
        for o in case.operands:
            assert get_aval(o).str_short() in msg, msg


# ------------------------------------------- rules stated by the design notes


@pytest.mark.parametrize("reduce,x,expected", [
    (lax.reduce_max, [-1.0, 3.0, 3.0, -1.0], [0.0, 0.5, 0.5, 0.0]),
    (lax.reduce_min, [-1.0, 3.0, -1.0, 2.0, -1.0], [1 / 3, 0.0, 1 / 3, 0.0, 1 / 3]),
], ids=["reduce_max", "reduce_min"])
def test_reduce_max_min_split_ties_equally(reduce: Any, x: list[float], expected: list[float]
                                           ) -> None:
    x_ = np.array(x)
    np.testing.assert_allclose(funcgrad.grad(lambda v: reduce(v, (0,)))(x_), expected)
    t = np.arange(x_.size, dtype=float)
    _, t_out = funcgrad.jvp(lambda v: reduce(v, (0,)), (x_,), (t,))
    np.testing.assert_allclose(t_out, np.dot(expected, t))


@pytest.mark.parametrize("op", [lax.max, lax.min], ids=["max", "min"])
def test_max_min_split_ties_equally(op: Any) -> None:
    x = np.array([1.0, 2.0, 3.0])
    gx, gy = funcgrad.grad(lambda a, b: lax.reduce_sum(op(a, b), (0,)), argnums=(0, 1))(
        x, np.array([1.0, 0.0, 5.0]))
    expected_x = [0.5, 1.0, 0.0] if op is lax.max else [0.5, 0.0, 1.0]
    np.testing.assert_allclose(gx, expected_x)
    np.testing.assert_allclose(gy, 1.0 - np.array(expected_x))


@pytest.mark.parametrize("x,expected", [
    ([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]), ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0]),
    ([2.0, 4.0, 3.0], [12.0, 6.0, 8.0]),
])
def test_reduce_prod_gradient_is_exact_with_zeros(x: list[float], expected: list[float]
                                                  ) -> None:
    g = funcgrad.grad(lambda v: lax.reduce_prod(v, (0,)))(np.array(x))
    np.testing.assert_array_equal(g, expected)


def test_integer_div_rounds_toward_zero() -> None:
    x, y = np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])
    np.testing.assert_array_equal(lax.div(x, y), [3, -3, -3, 3])  # toward zero, as XLA
    np.testing.assert_allclose(lax.div(x.astype(float), y.astype(float)), x / y)


def test_stop_gradient_has_zero_derivatives() -> None:
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(funcgrad.grad(
        lambda v: lax.reduce_sum(lax.mul(lax.stop_gradient(v), v), (0,)))(x), x)
    _, t = funcgrad.jvp(lax.stop_gradient, (x,), (np.ones(2),))
    assert not np.any(t)
