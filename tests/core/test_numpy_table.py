"""One table-driven, hypothesis-driven test of every public function of funcgrad.numpy.

Each row of ``TABLE`` names a function, its NumPy reference, how to draw its
arguments (arrays and static keyword arguments) and whether it is
differentiable. The columns are separate tests parametrized over the table:

- ``test_value``: the result equals NumPy's, with NumPy's dtype, for float64,
  float32, int64 (and bool where it applies) inputs;
- ``test_weak_scalar``: NEP 50: a Python scalar operand keeps the array's dtype;
- ``test_staged``: ``eval_jaxpr(make_jaxpr(f)(*args), *args)`` equals eager
  evaluation (the stand-in for a jit column);
- ``test_grad``: ``check_grads`` to second order, forward and reverse, in float64,
  on values kept away from kinks and singularities.

``test_table_covers_every_public_function`` fails when a public name of
funcgrad.numpy has no row. Library bugs found by the table are rows (or
columns of rows) marked as strict xfails; see ``bugs=``.
"""

from __future__ import annotations

import math
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
import funcgrad.numpy as fnp
from funcgrad.testing import check_grads
from funcgrad.testing.strategies import broadcastable_shapes, shapes
from funcgrad.tree_util import tree_leaves

F64, F32, I64, I32, BOOL = (np.dtype(t) for t in ("float64", "float32", "int64", "int32", "bool"))
FLOATS = (F64, F32)
NUMERIC = (F64, F32, I64)
ALL = (F64, F32, I64, BOOL)
INTEGRAL = (I64, I32, BOOL)

# Tolerances of the value and staged columns, by result dtype.
RTOL = {F64: 1e-12, F32: 1e-5, np.dtype("float16"): 1e-2}
ATOL = {F64: 1e-12, F32: 1e-5, np.dtype("float16"): 1e-2}

SETTINGS = settings(
    max_examples=15, deadline=None, derandomize=True, database=None,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                           HealthCheck.data_too_large],
)
GRAD_SETTINGS = settings(SETTINGS, max_examples=10)

# --------------------------------------------------------------- value domains

GAP = 1e-2  # distance kept from kinks: far above check_grads' finite-difference steps


@dataclass(frozen=True)
class Domain:
    """Where an argument's values are drawn: ``[lo, hi]`` minus ``gap``-neighbourhoods of
    ``kinks`` (repeated every ``period`` when given); ``special`` adds NaN and infinities;
    ``values`` replaces all that by a small discrete set (to make ties and equality likely).
    """

    lo: float = -3.0
    hi: float = 3.0
    kinks: tuple[float, ...] = ()
    period: float = 0.0
    gap: float = GAP
    special: bool = False
    values: tuple[float, ...] = ()

    def ok(self, v: float) -> bool:
        for k in self.kinks:
            d = v - k
            if self.period:
                d = (d + self.period / 2) % self.period - self.period / 2
            if abs(d) < self.gap:
                return False
        return True

    def elements(self) -> st.SearchStrategy[float]:
        if self.values:
            return st.sampled_from(self.values)
        finite = st.floats(self.lo, self.hi, allow_nan=False, allow_infinity=False)
        finite = finite.filter(self.ok) if self.kinks else finite
        if self.special:
            return st.one_of(finite, st.sampled_from([math.nan, math.inf, -math.inf]))
        return finite


REAL = Domain()
POS = Domain(0.2, 3.0)
NONZERO = Domain(kinks=(0.0,))            # piecewise functions: abs, sign, copysign
FAR_FROM_0 = Domain(kinks=(0.0,), gap=0.2)  # singular at 0: reciprocal, cbrt, divisors
UNIT = Domain(-0.8, 0.8)                   # arcsin, arccos, arctanh
ABOVE_1 = Domain(1.2, 4.0)                 # arccosh
ABOVE_M1 = Domain(-0.8, 3.0)               # log1p
TAN = Domain(-1.3, 1.3)
OFF_INT = Domain(kinks=(0.0,), period=1.0)      # floor, ceil, trunc
OFF_HALF = Domain(kinks=(0.5,), period=1.0)     # rint, round
SPECIAL = Domain(special=True)
SMALL_INTS = Domain(values=(-2.0, -1.0, 0.0, 1.0, 2.0))


def arrays(shape: Any, dom: Domain = REAL) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, shape, elements=dom.elements())


def spread(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Push all float64 entries of all arguments at least GAP apart (no ties anywhere)."""
    floats = [i for i, a in enumerate(args) if a.dtype == F64]
    flat = np.concatenate([args[i].ravel() for i in floats]) if floats else np.zeros(0)
    order = np.argsort(flat, kind="stable")
    moved = flat.copy()
    moved[order] = np.sort(flat) + GAP * np.arange(flat.size)
    out, start = list(args), 0
    for i in floats:
        n = args[i].size
        out[i] = moved[start:start + n].reshape(args[i].shape)
        start += n
    return tuple(out)


# ------------------------------------------------------------------ the table

Draw = tuple[tuple[Any, ...], dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One row: ``fn(*arrays, **static)`` against ``ref(*arrays, **static)``."""

    name: str                                  # the funcgrad.numpy name under test
    args: st.SearchStrategy[Draw]              # (arrays, static kwargs)
    ref: Callable[..., Any] | None = None      # default: numpy.<name>
    fn: Callable[..., Any] | None = None       # default: funcgrad.numpy.<name>
    grad: bool = True
    grad_args: st.SearchStrategy[Draw] | None = None  # default: args
    dtypes: tuple[np.dtype[Any], ...] = NUMERIC
    distinct: bool = False                     # no ties between any two float entries
    scalar: Any = None                         # a Python scalar for the NEP 50 column
    variant: str = ""
    bugs: Mapping[str, str] = field(default_factory=dict)  # column -> reason (strict xfail)
    scalar_at: tuple[int, ...] = ()            # argument positions for it (default: all)

    @property
    def id(self) -> str:
        return f"{self.name}-{self.variant}" if self.variant else self.name

    @property
    def fnp_fn(self) -> Callable[..., Any]:
        return self.fn if self.fn is not None else getattr(fnp, self.name)

    @property
    def np_fn(self) -> Callable[..., Any]:
        return self.ref if self.ref is not None else getattr(np, self.name)

    def strategy(self, column: str) -> st.SearchStrategy[Draw]:
        s = self.grad_args if column == "grad" and self.grad_args is not None else self.args
        return s.map(lambda d: (spread(d[0]), d[1])) if self.distinct else s


def no_static(args: st.SearchStrategy[tuple[Any, ...]]) -> st.SearchStrategy[Draw]:
    return args.map(lambda a: (tuple(a), {}))


def elementwise(*doms: Domain) -> st.SearchStrategy[Draw]:
    """Float arrays of mutually broadcastable shapes, one per domain."""
    if len(doms) == 1:
        return no_static(st.tuples(arrays(shapes(), doms[0])))
    return no_static(broadcastable_shapes(len(doms)).flatmap(
        lambda ss: st.tuples(*(arrays(s, d) for s, d in zip(ss, doms)))))


def same_shape(*doms: Domain) -> st.SearchStrategy[Draw]:
    """Float arrays of one shape, one per domain."""
    return no_static(shapes().flatmap(lambda s: st.tuples(*(arrays(s, d) for d in doms))))


def with_rank0(dom_x: Domain = REAL, dom_y: Domain = REAL) -> st.SearchStrategy[Draw]:
    """x of rank >= 1 and a rank-0 y (funcgrad.numpy does not broadcast rank-0 operands)."""
    return no_static(st.tuples(arrays(shapes(min_dims=1), dom_x), arrays((), dom_y)))


def unary(name: str, dom: Domain = REAL, **kw: Any) -> Case:
    return Case(name, elementwise(dom), **kw)


def _float_power_jax(x: Any, y: Any) -> Any:
    # JAX's float_power is power in the promoted inexact type (float32 stays float32;
    # integers of up to 32 bits go to float32), not NumPy's always-float64
    dt = np.result_type(x, y)
    if dt.kind not in "fc":
        dt = np.dtype(np.float32 if dt.itemsize < 8 else np.float64)
    return np.power(np.asarray(x, dt), np.asarray(y, dt))


def _mean_jax(a: Any, **kw: Any) -> Any:
    # JAX averages bool and integers of up to 32 bits in float32 (NumPy: float64)
    dt = np.asarray(a).dtype
    if dt.kind not in "fc":
        return np.mean(a, **kw).astype(np.float32 if dt.itemsize < 8 else np.float64)
    return np.mean(a, **kw)


def _jax_floor_divide(x: Any, y: Any) -> Any:
    """NumPy's ``//`` with JAX's integer quotients by zero (NumPy gives 0): XLA's quotient is
    all ones, which JAX's flooring turns into -2 for a signed nonzero dividend, -1 for 0,
    and the largest value for unsigned types."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.floor_divide(x, y)
    if q.dtype.kind not in "iu":
        return q
    at_zero = np.full_like(q, np.iinfo(q.dtype).max) if q.dtype.kind == "u" else \
        np.where(np.asarray(x) != 0, -2, -1).astype(q.dtype)
    return np.where(np.asarray(y) == 0, at_zero, q)


def binary(name: str, dom_x: Domain = REAL, dom_y: Domain = REAL, **kw: Any) -> Case:
    return Case(name, elementwise(dom_x, dom_y), **kw)


def alias(name: str, of: Case) -> Case:
    """The same row for another name of the same function (e.g. ``amax`` for ``max``)."""
    ref = of.ref if of.ref is not None else getattr(np, of.name)
    fn = of.fn if of.fn is not None else getattr(fnp, name)
    return Case(name, of.args, ref, fn, of.grad, of.grad_args, of.dtypes, of.distinct,
                of.scalar, of.variant, of.bugs, of.scalar_at)


def bug(case: Case, reason: str, *columns: str) -> Case:
    """``case`` with ``columns`` marked as strict xfails for the library bug ``reason``."""
    return Case(case.name, case.args, case.ref, case.fn, case.grad, case.grad_args,
                case.dtypes, case.distinct, case.scalar, case.variant,
                {**case.bugs, **{c: f"bug: {reason}" for c in columns}}, case.scalar_at)


def axes(ndim: int, kind: str = "multi") -> st.SearchStrategy[Any]:
    """Valid ``axis`` values: "multi" (None, int, tuple), "single_or_none", "single"."""
    options: list[st.SearchStrategy[Any]] = []
    if kind != "single":
        options.append(st.none())
    if ndim:
        options.append(st.integers(-ndim, ndim - 1))
    if kind == "multi":
        options.append(st.lists(st.integers(-ndim, ndim - 1), unique_by=lambda a: a % ndim,
                                max_size=ndim).map(tuple) if ndim else st.just(()))
    return st.one_of(options)


@st.composite
def reduction(draw: Any, dom: Domain = REAL, axis: str = "multi", keepdims: bool = True,
              min_side: int = 1, min_dims: int = 0, extra: Mapping[str, Any] = {}) -> Draw:
    shape = draw(shapes(min_dims=min_dims, min_side=min_side))
    x = draw(arrays(shape, dom))
    kw = {"axis": draw(axes(len(shape), axis))}
    if keepdims:
        kw["keepdims"] = draw(st.booleans())
    kw.update({k: draw(v) for k, v in extra.items()})
    return (x,), kw


def reduce_case(name: str, dom: Domain = REAL, **kw: Any) -> Case:
    opts = {k: kw.pop(k) for k in ("axis", "keepdims", "extra") if k in kw}
    return Case(name, reduction(dom, **opts), **kw)


# ------------------------------------------------------- elementwise functions


@st.composite
def off_grid_ratio(draw: Any) -> Draw:
    """x, y (same shape) with x / y at least 0.05 from an integer: floor_divide and
    remainder are smooth there, with finite-difference steps far from the jumps."""
    shape = draw(shapes())
    y = draw(arrays(shape, Domain(0.5, 3.0))) * draw(arrays(shape, Domain(values=(-1.0, 1.0))))
    q = draw(arrays(shape, Domain(kinks=(0.0,), period=1.0, gap=0.05)))
    return (np.asarray(q * y), y), {}


@st.composite
def rounding(draw: Any) -> Draw:
    decimals = draw(st.integers(0, 2))
    scale = 10.0 ** decimals
    x = draw(arrays(shapes(), Domain(kinks=(0.5,), period=1.0, gap=0.1))) / scale
    return (np.asarray(x),), {"decimals": decimals}


@st.composite
def where_args(draw: Any) -> Draw:
    sc, sx, sy = draw(broadcastable_shapes(3))
    return (draw(hnp.arrays(np.bool_, sc)), draw(arrays(sx)), draw(arrays(sy))), {}


@st.composite
def clip_static_bounds(draw: Any) -> Draw:
    x = draw(arrays(shapes()))
    lo = draw(st.one_of(st.none(), st.floats(-2.0, 0.0)))
    hi = draw(st.one_of(st.none() if lo is not None else st.nothing(), st.floats(0.5, 2.0)))
    return (x,), {"min": lo, "max": hi}


def _off_bounds(d: Draw) -> Draw:
    """Move x off the (drawn) clip bounds, where clip has kinks."""
    (x,), kw = d
    for b in (kw["min"], kw["max"]):
        if b is not None:
            x = np.where(np.abs(x - b) < GAP, b + 2 * GAP, x)
    return (x,), kw


@st.composite
def astype_args(draw: Any, targets: tuple[Any, ...]) -> Draw:
    return (draw(arrays(shapes())),), {"dtype": draw(st.sampled_from(targets))}


ELEMENTWISE = [
    unary("exp"), unary("exp2"), unary("expm1"),
    unary("log", POS), unary("log1p", ABOVE_M1), unary("log2", POS), unary("log10", POS),
    unary("sqrt", POS), unary("cbrt", FAR_FROM_0),
    unary("sin"), unary("cos"), unary("tan", TAN),
    unary("arcsin", UNIT), unary("arccos", UNIT), unary("arctan"),
    unary("sinh"), unary("cosh"), unary("tanh"),
    unary("arcsinh"), unary("arccosh", ABOVE_1), unary("arctanh", UNIT),
    unary("deg2rad"), unary("radians"), unary("rad2deg"), unary("degrees"),
    unary("sinc", FAR_FROM_0),
    Case("sinc", elementwise(Domain(values=(0.0,))), variant="at-0"),
    # Further from 0 than the other singular functions: near 0.2 the slope (25) makes the
    # finite-difference check's cancellation exceed its tolerance.
    unary("reciprocal", Domain(kinks=(0.0,), gap=0.5), dtypes=FLOATS),
    # JAX promotes integers to the default float (NumPy keeps them: 1/2 is 0).
    unary("reciprocal", Domain(values=(-3.0, -2.0, -1.0, 1.0, 2.0, 3.0)), dtypes=(I64,),
          grad=False, variant="int", ref=lambda x: np.reciprocal(x.astype(np.float64))),
    unary("square"),
    unary("negative"), unary("positive"),
    unary("absolute", NONZERO), unary("abs", NONZERO), unary("sign", NONZERO),
    unary("floor", OFF_INT), unary("ceil", OFF_INT), unary("trunc", OFF_INT),
    unary("rint", OFF_HALF, dtypes=FLOATS),
    unary("rint", SMALL_INTS, dtypes=(I64,), grad=False, variant="int"),
    Case("round", rounding(), dtypes=FLOATS),
    Case("around", rounding(), ref=np.around, dtypes=FLOATS),
    Case("round", elementwise(SMALL_INTS).map(lambda d: (d[0], {"decimals": 1})),
             dtypes=(I64,), grad=False, variant="int"),
    unary("isfinite", SPECIAL, grad=False), unary("isnan", SPECIAL, grad=False),
    unary("isinf", SPECIAL, grad=False),
    unary("nan_to_num", SPECIAL, grad_args=elementwise(REAL)),
    unary("logical_not", SMALL_INTS, grad=False, dtypes=ALL),
    unary("invert", SMALL_INTS, grad=False, dtypes=INTEGRAL),
    unary("bitwise_not", SMALL_INTS, grad=False, dtypes=INTEGRAL),
    binary("add", scalar=2.0), binary("subtract", scalar=2.0),
    binary("multiply", scalar=2.0),
    binary("divide", REAL, FAR_FROM_0, scalar=2.0),
    binary("true_divide", REAL, FAR_FROM_0, scalar=2.0),
    binary("floor_divide", REAL, FAR_FROM_0, grad_args=off_grid_ratio(), scalar=2.0,
           ref=_jax_floor_divide),
    binary("remainder", REAL, FAR_FROM_0, grad_args=off_grid_ratio(), scalar=2.0),
    binary("mod", REAL, FAR_FROM_0, grad_args=off_grid_ratio(), scalar=2.0),
    binary("power", POS, NONZERO, dtypes=FLOATS, scalar=2.0),
    Case("power", with_rank0(POS, NONZERO), variant="rank-0-exponent", dtypes=FLOATS),
    Case("power", same_shape(POS, Domain(values=(0.0,))), variant="zero-exponent"),
    # A Python int base: JAX (not NumPy) takes a concrete rank-0 integer exponent as
    # integer_pow's and promotes the base alone (the default integer, weakly typed).
    binary("power", SMALL_INTS, Domain(values=(0.0, 1.0, 2.0, 3.0)), dtypes=(I64, I32),
           grad=False, variant="int", scalar=3, scalar_at=(1,)),
    binary("float_power", POS, NONZERO, scalar=0.5, ref=_float_power_jax),
    binary("maximum", distinct=True, scalar=0.5), binary("minimum", distinct=True, scalar=0.5),
    # Rank-0 operands stay unbroadcast down to the primitives (relu = maximum(x, 0.0)).
    *(Case(n, with_rank0(), distinct=True, variant="rank-0")
      for n in ("maximum", "minimum", "logaddexp")),
    binary("arctan2", FAR_FROM_0, FAR_FROM_0, scalar=2.0),
    binary("hypot", FAR_FROM_0, FAR_FROM_0, scalar=2.0),
    binary("logaddexp", distinct=True, scalar=2.0),
    binary("logaddexp2", distinct=True, scalar=2.0),
    Case("logaddexp", elementwise(REAL).map(lambda d: ((d[0][0], d[0][0]), {})),
             variant="tie"),
    binary("copysign", NONZERO, NONZERO, scalar=-2.0),
    binary("divmod", REAL, FAR_FROM_0, grad_args=off_grid_ratio(), scalar=2.0,
           ref=lambda x, y: (_jax_floor_divide(x, y), np.remainder(x, y))),
    binary("fmod", REAL, FAR_FROM_0, grad_args=off_grid_ratio(), scalar=2.0),
    unary("conjugate"), unary("conj"), unary("real"), unary("imag", grad=False),
    # As JAX: integers and real rank-0 operands give the default float (complex operands:
    # tests/core/test_complex.py).
    # (Widened before NumPy's angle, not after: JAX computes in float64, so a negative
    # float32 scalar gives float64's pi, not float32's pi widened.)
    unary("angle", FAR_FROM_0, ref=lambda x: np.angle(
        np.asarray(x, np.float64) if np.ndim(x) == 0 or np.asarray(x).dtype.kind in "iub"
        else x)),
    *(binary(n, SMALL_INTS, SMALL_INTS, grad=False, dtypes=ALL, scalar=1)
      for n in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "logical_xor")),
    *(binary(n, SMALL_INTS, SMALL_INTS, grad=False, dtypes=INTEGRAL, scalar=3)
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor")),
    Case("where", where_args(), scalar=2.0, scalar_at=(1, 2)),
    Case("clip", elementwise(REAL, Domain(-2.0, 0.0), Domain(0.5, 2.0)), distinct=True,
         scalar=1.0, scalar_at=(1, 2)),
    Case("clip", clip_static_bounds(), variant="static-bounds",
         grad_args=clip_static_bounds().map(_off_bounds)),
    # (dtype is positional-only in NumPy's astype and JAX's: the table passes it by name)
    Case("astype", astype_args(("float32", np.float64, np.int64, "int32", bool, float)),
         ref=lambda x, dtype: x.astype(dtype), fn=lambda x, dtype: fnp.astype(x, dtype),
         grad_args=astype_args((np.float64, "float64", float))),
]

# ---------------------------------------------------------------- reductions


def _logsumexp_ref(a: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@st.composite
def average_args(draw: Any) -> Draw:
    shape = draw(shapes(min_dims=1))
    x, w = draw(arrays(shape)), draw(arrays(shape, POS))
    return (x, w), {"axis": draw(axes(len(shape), "single_or_none"))}


def _average(x: Any, w: Any, axis: Any) -> Any:
    return fnp.average(x, axis=axis, weights=w)


def _np_average(x: Any, w: Any, axis: Any) -> Any:
    return np.average(x, axis=axis, weights=w)


DDOF = {"ddof": st.integers(0, 1)}
# Reduce over >= 2 values at least 0.3 apart, so that var stays well above 0 (std's higher
# derivatives blow up as var -> 0, and so would the finite-difference error).
SPREAD_OUT = reduction(min_side=2, min_dims=1, axis="single_or_none", extra=DDOF).map(
    lambda d: ((d[0][0] + 0.3 * np.arange(d[0][0].size).reshape(d[0][0].shape),), d[1]))
std_case = reduce_case("std", extra=DDOF, grad_args=SPREAD_OUT)
max_case = reduce_case("max", distinct=True, dtypes=ALL)
min_case = reduce_case("min", distinct=True, dtypes=ALL)

REDUCTIONS = [
    reduce_case("sum", dtypes=ALL + (I32,)), reduce_case("prod", dtypes=ALL + (I32,)),
    Case("prod", no_static(st.tuples(hnp.arrays(np.float64, st.integers(2, 4),
                                                elements=Domain(values=(0.0, 1.5, -2.0))
                                                .elements()))),
         variant="with-zeros"),
    reduce_case("mean", dtypes=ALL, ref=_mean_jax),
    reduce_case("var", extra=DDOF, grad_args=SPREAD_OUT),
    std_case,
    max_case, alias("amax", max_case), min_case, alias("amin", min_case),
    reduce_case("ptp", distinct=True),
    reduce_case("argmax", axis="single_or_none", grad=False, distinct=True),
    reduce_case("argmin", axis="single_or_none", grad=False, distinct=True),
    reduce_case("all", SMALL_INTS, grad=False, dtypes=ALL),
    reduce_case("any", SMALL_INTS, grad=False, dtypes=ALL),
    reduce_case("count_nonzero", SMALL_INTS, grad=False, dtypes=ALL),
    reduce_case("logsumexp", ref=_logsumexp_ref),
    # JAX's cumsum keeps an integer dtype (NumPy widens it to the platform integer).
    reduce_case("cumsum", axis="single_or_none", keepdims=False, dtypes=ALL + (I32,),
                ref=lambda a, axis=None: np.cumsum(
                    a, axis=axis, dtype=a.dtype if a.dtype.kind in "iu" else None)),
    reduce_case("sort", axis="single_or_none", keepdims=False, distinct=True, dtypes=ALL,
                ref=lambda a, axis=-1: np.sort(a, axis=axis, kind="stable")),
    reduce_case("argsort", axis="single_or_none", keepdims=False, distinct=True, grad=False,
                dtypes=ALL, ref=lambda a, axis=-1: np.argsort(a, axis=axis, kind="stable")),
    reduce_case("average", axis="single_or_none", keepdims=False),
    Case("average", average_args(), ref=_np_average, fn=_average, variant="weights",
         dtypes=FLOATS),
]

# ---------------------------------------------------------- shape functions


def prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


@st.composite
def reshape_args(draw: Any) -> Draw:
    shape = draw(shapes())
    factors = draw(st.permutations(prime_factors(int(np.prod(shape)))))
    new: list[int] = []
    for f in factors:
        if new and draw(st.booleans()):
            new[-1] *= f
        else:
            new.append(f)
    for _ in range(draw(st.integers(0, 2))):
        new.insert(draw(st.integers(0, len(new))), 1)
    if new and draw(st.booleans()):
        new[draw(st.integers(0, len(new) - 1))] = -1
    return (draw(arrays(shape)),), {"newshape": tuple(new)}


@st.composite
def one_array(draw: Any, min_dims: int = 0, max_dims: int = 3, dom: Domain = REAL,
              side: tuple[int, int] = (1, 4), **statics: Callable[[tuple[int, ...]], Any]
              ) -> Draw:
    """One array; each static kwarg is drawn from ``statics[name](shape)``."""
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=side[0],
                        max_side=side[1]))
    return (draw(arrays(shape, dom)),), {k: draw(f(shape)) for k, f in statics.items()}


def _expand_axes(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    nd = len(shape)
    one = st.integers(-(nd + 1), nd)
    many = st.integers(1, 2).flatmap(lambda k: st.lists(
        st.integers(-(nd + k), nd + k - 1), min_size=k, max_size=k,
        unique_by=lambda a: a % (nd + k)).map(tuple))
    return st.one_of(one, many)


def _squeeze_axes(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    ones = [i for i, d in enumerate(shape) if d == 1]
    opts: list[st.SearchStrategy[Any]] = [st.none()]
    if ones:
        opts += [st.sampled_from(ones), st.lists(st.sampled_from(ones), unique=True)
                 .map(tuple)]
    return st.one_of(opts)


squeeze_args = st.lists(st.sampled_from([1, 1, 2, 3]), max_size=4).flatmap(
    lambda s: st.tuples(arrays(tuple(s)), _squeeze_axes(tuple(s)))).map(
    lambda t: ((t[0],), {"axis": t[1]}))


def _perm(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.permutations(range(len(shape))).map(tuple))


def _axis(shape: tuple[int, ...]) -> st.SearchStrategy[int]:
    return st.integers(-len(shape), len(shape) - 1)


@st.composite
def moveaxis_args(draw: Any) -> Draw:
    (x,), _ = draw(one_array(min_dims=1))
    nd = x.ndim
    k = draw(st.integers(1, nd))
    source = list(draw(st.permutations(range(nd)))[:k])
    destination = list(draw(st.permutations(range(-nd, 0)))[:k])
    if k == 1 and draw(st.booleans()):
        return (x,), {"source": source[0], "destination": destination[0]}
    return (x,), {"source": source, "destination": destination}


@st.composite
def broadcast_to_args(draw: Any) -> Draw:
    target = draw(shapes())
    keep = draw(st.integers(0, len(target)))
    src = tuple(1 if draw(st.booleans()) else d for d in target[len(target) - keep:])
    return (draw(arrays(src)),), {"shape": target}


@st.composite
def joinable(draw: Any, n: tuple[int, int] = (1, 3), nd: tuple[int, int] = (1, 3),
             axis: int = 0, vary: bool = True) -> Draw:
    """``k`` arrays of one rank whose shapes agree except (if ``vary``) along ``axis``."""
    k = draw(st.integers(*n))
    base = list(draw(shapes(min_dims=nd[0], max_dims=nd[1])))
    out = []
    for _ in range(k):
        s = list(base)
        if vary and base:
            s[axis] = draw(st.integers(1, 3))
        out.append(draw(arrays(tuple(s))))
    return tuple(out), {}


@st.composite
def concatenate_args(draw: Any) -> Draw:
    if draw(st.booleans()):
        k = draw(st.integers(1, 3))
        return tuple(draw(arrays(shapes())) for _ in range(k)), {"axis": None}
    nd = draw(st.integers(1, 3))
    axis = draw(st.integers(-nd, nd - 1))
    arrs, _ = draw(joinable(nd=(nd, nd), axis=axis))
    return arrs, {"axis": axis}


@st.composite
def stack_args(draw: Any) -> Draw:
    arrs, _ = draw(joinable(nd=(0, 3), vary=False))
    nd = arrs[0].ndim
    return arrs, {"axis": draw(st.integers(-(nd + 1), nd))}


def listed(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f(list_of_arrays, **kw)`` as a function of the arrays themselves."""
    return lambda *xs, **kw: f(list(xs), **kw)


@st.composite
def stacking(draw: Any, low_rank: tuple[int, ...], axis: int) -> Draw:
    """Arguments of hstack/vstack/dstack/column_stack: low-rank arrays of one shape, or
    higher-rank arrays that differ along ``axis``."""
    if draw(st.booleans()):
        nd = draw(st.sampled_from(low_rank))
        return draw(joinable(nd=(nd, nd), vary=False))
    return draw(joinable(nd=(max(low_rank) + 1, 3), axis=axis))


@st.composite
def split_args(draw: Any, even: bool) -> Draw:
    shape = draw(shapes(min_dims=1, max_side=6))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    if even:
        sections = st.sampled_from([d for d in range(1, n + 1) if n % d == 0])
    else:
        sections = st.integers(1, n + 2)
    points = st.lists(st.integers(-n - 1, n + 1), max_size=3)
    return (draw(arrays(shape)),), {"indices_or_sections": draw(st.one_of(sections, points)),
                                    "axis": axis}


def _pad_width(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    w = st.integers(0, 2)
    per_axis = [st.tuples(*[st.tuples(w, w) for _ in shape])] if shape else []
    return st.one_of(w, st.tuples(w, w), *per_axis)


@st.composite
def pad_args(draw: Any, min_dims: int = 1, max_dims: int = 3) -> Draw:
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims))
    kw: dict[str, Any] = {"pad_width": draw(_pad_width(shape))}
    if draw(st.booleans()):
        kw["mode"] = "constant"
        kw["constant_values"] = draw(st.floats(-2.0, 2.0))
    else:
        kw["mode"] = "edge"
    return (draw(arrays(shape)),), kw


def _roll(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    nd = len(shape)
    single = st.tuples(st.integers(-5, 5), st.none() if not nd else st.one_of(
        st.none(), st.integers(-nd, nd - 1)))
    multi = st.integers(1, max(nd, 1)).flatmap(lambda k: st.tuples(
        st.lists(st.integers(-5, 5), min_size=k, max_size=k).map(tuple),
        st.lists(st.integers(-nd, nd - 1), min_size=k, max_size=k).map(tuple)))
    return st.one_of(single, multi) if nd else single


@st.composite
def roll_args(draw: Any) -> Draw:
    (x,), _ = draw(one_array())
    shift, axis = draw(_roll(x.shape))
    return (x,), {"shift": shift, "axis": axis}


def _reps(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(0, 2), st.lists(st.integers(0, 2), min_size=1, max_size=3)
                     .map(tuple))


def _positional(name: str, *keys: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """(funcgrad, numpy) callables that pass static kwargs ``keys`` positionally."""
    def make(mod: Any) -> Callable[..., Any]:
        def f(*arrays: Any, **kw: Any) -> Any:
            return getattr(mod, name)(*arrays, *(kw[k] for k in keys))

        return f

    return make(fnp), make(np)


def positional(name: str, args: st.SearchStrategy[Draw], *keys: str, **kw: Any) -> Case:
    f, r = _positional(name, *keys)
    return Case(name, args, ref=r, fn=f, **kw)


SHAPE = [
    positional("reshape", reshape_args(), "newshape"),
    Case("ravel", one_array()),
    Case("transpose", one_array(axes=_perm)),
    positional("swapaxes", one_array(min_dims=1, axis1=_axis, axis2=_axis), "axis1", "axis2"),
    positional("moveaxis", moveaxis_args(), "source", "destination"),
    Case("squeeze", squeeze_args),
    positional("expand_dims", one_array(axis=_expand_axes), "axis"),
    positional("broadcast_to", broadcast_to_args(), "shape"),
    Case("broadcast_arrays", no_static(st.integers(1, 3).flatmap(
        lambda k: broadcastable_shapes(k)).flatmap(
        lambda ss: st.tuples(*(arrays(s) for s in ss))))),
    Case("atleast_1d", one_array(max_dims=4)), Case("atleast_2d", one_array(max_dims=4)),
    Case("atleast_3d", one_array(max_dims=4)),
    Case("flip", one_array(axis=lambda s: axes(len(s)))),
    Case("fliplr", one_array(min_dims=2)), Case("flipud", one_array(min_dims=1)),
    Case("roll", roll_args()),
    Case("concatenate", concatenate_args(), ref=listed(np.concatenate),
         fn=listed(fnp.concatenate)),
    Case("stack", stack_args(), ref=listed(np.stack), fn=listed(fnp.stack)),
    Case("hstack", stacking((0, 1), 1), ref=listed(np.hstack), fn=listed(fnp.hstack)),
    Case("vstack", stacking((0, 1), 0), ref=listed(np.vstack), fn=listed(fnp.vstack)),
    Case("row_stack", stacking((0, 1), 0), ref=listed(np.vstack), fn=listed(fnp.row_stack)),
    Case("dstack", stacking((0, 1, 2), 2), ref=listed(np.dstack), fn=listed(fnp.dstack)),
    Case("column_stack", stacking((1,), 1), ref=listed(np.column_stack),
         fn=listed(fnp.column_stack)),
    positional("split", split_args(even=True), "indices_or_sections", "axis"),
    positional("array_split", split_args(even=False), "indices_or_sections", "axis"),
    positional("tile", one_array(reps=_reps), "reps"),
    Case("repeat", one_array(repeats=lambda s: st.integers(0, 3),
                             axis=lambda s: axes(len(s), "single_or_none"))),
    Case("pad", pad_args()),
    Case("pad", pad_args(min_dims=0, max_dims=0), variant="rank-0", grad=False),
    Case("diff", one_array(min_dims=1, n=lambda s: st.integers(0, min(s)), axis=_axis)),
    Case("diff", one_array(min_dims=1, n=lambda s: st.integers(max(s) + 1, max(s) + 2),
                               axis=_axis), variant="n-beyond", grad=False),
    Case("shape", one_array(), grad=False, dtypes=ALL),
    Case("ndim", one_array(), grad=False, dtypes=ALL),
    Case("size", one_array(axis=lambda s: axes(len(s), "single_or_none")), grad=False,
         dtypes=ALL),
]

# --------------------------------------------------------- products and linalg


@st.composite
def matmul_args(draw: Any) -> Draw:
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    ba, bb = draw(broadcastable_shapes(2, max_dims=2, max_side=3))
    a = (k,) if draw(st.booleans()) else ba + (m, k)
    b = (k,) if draw(st.booleans()) else bb + (k, n)
    return (draw(arrays(a)), draw(arrays(b))), {}


@st.composite
def dot_args(draw: Any) -> Draw:
    k = draw(st.integers(1, 3))
    if draw(st.integers(0, 4)) == 0:
        return (draw(arrays(())), draw(arrays(shapes()))), {}
    a = draw(shapes(min_dims=0, max_dims=2, max_side=3)) + (k,)
    b = draw(st.sampled_from([(k,), (k, 2), (3, k, 2)]))
    return (draw(arrays(a)), draw(arrays(b))), {}


@st.composite
def inner_args(draw: Any) -> Draw:
    k = draw(st.integers(1, 3))
    sa, sb = (draw(shapes(min_dims=0, max_dims=2, max_side=3)) for _ in range(2))
    return (draw(arrays(sa + (k,))), draw(arrays(sb + (k,)))), {}


@st.composite
def vdot_args(draw: Any) -> Draw:
    a = draw(arrays(shapes(min_dims=1)))
    return (a, draw(arrays(a.shape[::-1]))), {}


@st.composite
def tensordot_args(draw: Any) -> Draw:
    contracted = draw(st.lists(st.integers(1, 3), max_size=2))
    fa, fb = (list(draw(shapes(min_dims=0, max_dims=2, max_side=3))) for _ in range(2))
    k = len(contracted)
    if draw(st.booleans()):
        sa, sb = fa + contracted, contracted + fb
        return (draw(arrays(tuple(sa))), draw(arrays(tuple(sb)))), {"axes": k}
    pa = draw(st.permutations(range(len(fa) + k)))
    pb = draw(st.permutations(range(len(fb) + k)))
    sa, sb = [0] * len(pa), [0] * len(pb)
    for dims, perm, out in ((fa + contracted, pa, sa), (contracted + fb, pb, sb)):
        for d, p in zip(dims, perm):
            out[p] = d
    xa = [pa[len(fa) + i] for i in range(k)]
    xb = [pb[i] - (len(pb) if draw(st.booleans()) else 0) for i in range(k)]
    return (draw(arrays(tuple(sa))), draw(arrays(tuple(sb)))), {"axes": (xa, xb)}


EINSUM_SPECS = (
    "ij,jk->ik", "ij,ij->", "ii", "ii->i", "bij,bjk->bik", "i,j->ij", "...ij,...jk->...ik",
    "ij->ji", "ijk->", "ij,j", "i,i", "ijk,ikl->jl", "ij,jk,kl->il", "i...->...", "ba,ca->bc",
    "ij,jk", "...i,...i->...",
)


@st.composite
def einsum_args(draw: Any) -> Draw:
    spec = draw(st.sampled_from(EINSUM_SPECS))
    size = {c: draw(st.integers(1, 3)) for c in sorted(set(spec)) if c.isalpha()}
    ell = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    ops = []
    for term in spec.split("->")[0].split(","):
        before, _, after = term.partition("...")
        shape = tuple(size[c] for c in before) + (ell if "..." in term else ()) + tuple(
            size[c] for c in after)
        ops.append(draw(arrays(shape)))
    return tuple(ops), {"spec": spec}


def _einsum(mod: Any) -> Callable[..., Any]:
    return lambda *ops, spec: mod.einsum(spec, *ops)


def _two_axes(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, int]]:
    nd = len(shape)
    return st.permutations(range(nd)).map(lambda p: (p[0], p[1] - nd))


def _offsets(rows: int, cols: int, beyond: bool) -> st.SearchStrategy[int]:
    """Diagonal offsets within [-rows, cols] (the last ones give empty diagonals), or
    beyond that range."""
    if beyond:
        return st.one_of(st.integers(cols + 1, cols + 3), st.integers(-rows - 3, -rows - 1))
    return st.integers(-rows, cols)


@st.composite
def diagonal_args(draw: Any, beyond: bool = False) -> Draw:
    shape = draw(shapes(min_dims=2, max_dims=3))
    a1, a2 = draw(_two_axes(shape))
    return (draw(arrays(shape)),), {"offset": draw(_offsets(shape[a1], shape[a2], beyond)),
                                    "axis1": a1, "axis2": a2}


@st.composite
def diag_args(draw: Any, beyond: bool = False) -> Draw:
    shape = draw(shapes(min_dims=2 if beyond else 1, max_dims=2))
    rows, cols = shape if len(shape) == 2 else (4, 4)
    return (draw(arrays(shape)),), {"k": draw(_offsets(rows, cols, beyond))}


@st.composite
def kron_args(draw: Any) -> Draw:
    nd = draw(st.integers(1, 2))
    return (draw(arrays(shapes(nd, nd, max_side=3))),
            draw(arrays(shapes(nd, nd, max_side=3)))), {}


K = {"k": lambda s: st.integers(-2, 2)}

LINALG = [
    Case("matmul", matmul_args()), Case("dot", dot_args()), Case("inner", inner_args()),
    Case("vdot", vdot_args()), Case("outer", no_static(st.tuples(arrays(shapes()),
                                                                  arrays(shapes())))),
    Case("tensordot", tensordot_args()),
    Case("einsum", einsum_args(), ref=_einsum(np), fn=_einsum(fnp)),
    Case("diagonal", diagonal_args()), Case("trace", diagonal_args()), Case("diag", diag_args()),
    *(Case(n, args, variant="offset-beyond", grad=False)
      for n, args in (("diagonal", diagonal_args(beyond=True)),
                      ("trace", diagonal_args(beyond=True)), ("diag", diag_args(beyond=True)))),
    Case("tril", one_array(min_dims=2, **K)), Case("triu", one_array(min_dims=2, **K)),
    Case("kron", kron_args()),
]

# ------------------------------------------------------------------- indexing

SLICES = st.builds(slice, st.none() | st.integers(-6, 6), st.none() | st.integers(-6, 6),
                       st.none() | st.integers(-3, 3).filter(bool))


@st.composite
def advanced_index(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A tuple mixing slices, ints and integer arrays (at least one), with the arrays'
    shapes broadcasting together; the arrays may be adjacent or not, and ``None`` or
    ``...`` may appear."""
    kinds = [draw(st.sampled_from(["slice", "int", "array"])) for _ in shape]
    kinds[draw(st.integers(0, len(shape) - 1))] = "array"
    n_arrays = kinds.count("array")
    bshapes = iter(draw(hnp.mutually_broadcastable_shapes(
        num_shapes=n_arrays, max_dims=2, max_side=3)).input_shapes)
    entries: list[Any] = []
    for kind, n in zip(kinds, shape):
        if kind == "slice":
            entries.append(draw(SLICES))
        elif kind == "int":
            entries.append(draw(st.integers(-n, n - 1)))
        else:
            idx = draw(hnp.arrays(np.int64, next(bshapes), elements=st.integers(-n, n - 1)))
            entries.append(idx.tolist() if idx.ndim == 1 and draw(st.booleans()) else idx)
    # Drop trailing full slices (fewer indices than axes), or write them as an Ellipsis.
    while entries and isinstance(entries[-1], slice) and entries[-1] == slice(None):
        entries.pop()
    if draw(st.booleans()):
        entries.insert(draw(st.integers(0, len(entries))), None)
    if draw(st.booleans()) and not any(e is Ellipsis for e in entries):
        entries.insert(draw(st.integers(0, len(entries))), Ellipsis)
    return tuple(entries)


@st.composite
def mask_index(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A boolean mask over one or two consecutive axes, with slices or ints around it."""
    start = draw(st.integers(0, len(shape) - 1))
    width = draw(st.integers(1, min(2, len(shape) - start)))
    mask = draw(hnp.arrays(np.bool_, shape[start:start + width]))
    before = [draw(SLICES) for _ in range(start)]
    after = [draw(st.one_of(SLICES, st.just(0))) for _ in shape[start + width:]]
    return (*before, mask, *after)


def index_exprs(shape: tuple[int, ...]) -> st.SearchStrategy[Any]:
    basic = hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True)
    if not shape:
        return basic
    return st.one_of(basic, advanced_index(shape), mask_index(shape))


@st.composite
def getitem_args(draw: Any) -> Draw:
    x = draw(arrays(shapes()))
    return (x,), {"idx": draw(index_exprs(x.shape))}


def _selected(shape: tuple[int, ...], idx: Any) -> np.ndarray:
    return np.arange(int(np.prod(shape))).reshape(shape)[idx]


@st.composite
def update_args(draw: Any, unique: bool, op: st.SearchStrategy[str] | None = None) -> Draw:
    """x, the values and the index of an indexed update; values broadcast to x[idx]."""
    x = draw(arrays(shapes()))
    idx = draw(index_exprs(x.shape))
    picked = _selected(x.shape, idx)
    if unique and np.unique(picked).size != picked.size:
        idx = tuple(e for e in (idx if isinstance(idx, tuple) else (idx,))
                    if isinstance(e, slice) or e is None or e is Ellipsis)
        picked = _selected(x.shape, idx)
    target = picked.shape
    vshape = draw(st.sampled_from([target, (), target[len(target) // 2:],
                                   tuple(1 if d == 2 else d for d in target)]))
    kw: dict[str, Any] = {"idx": idx}
    if op is not None:
        kw["op"] = draw(op)
    return (x, draw(arrays(vshape))), kw


def _np_update(x: np.ndarray, v: np.ndarray, idx: Any) -> np.ndarray:
    out = x.copy()
    out[idx] = v
    return out


def _np_add(x: np.ndarray, v: np.ndarray, idx: Any) -> np.ndarray:
    out = x.copy()
    np.add.at(out, idx, np.broadcast_to(v, out[idx].shape))
    return out


def _np_at(x: np.ndarray, v: np.ndarray, idx: Any, op: str) -> Any:
    if op == "get":
        return x[idx]
    if op == "multiply":
        out = x.copy()
        out[idx] = x[idx] * v
        return out
    return {"set": _np_update, "add": _np_add}[op](x, v, idx)


def _at(x: Any, v: Any, idx: Any, op: str, at: Callable[[Any], Any] = fnp.at) -> Any:
    ref = at(x)[idx]
    if op == "get":
        return ref.get()
    # The rows draw indices without repeats: say so, as JAX asks for the multipliers'
    # derivative.
    return ref.multiply(v, unique_indices=True) if op == "multiply" else getattr(ref, op)(v)


def on_tracer(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` run with its (float) array arguments as tracers of a vjp trace, so that
    ``x[idx]`` and ``x.at`` are the Tracer's own methods even in eager tests."""
    return lambda *args, **kw: funcgrad.vjp(lambda *a: f(*a, **kw), *args)[0]


@st.composite
def take_args(draw: Any) -> Draw:
    x = draw(arrays(shapes(min_dims=1)))
    axis = draw(axes(x.ndim, "single_or_none"))
    n = x.size if axis is None else x.shape[axis]
    idx = draw(hnp.arrays(np.int64, shapes(min_dims=0, max_dims=2),
                          elements=st.integers(-n, n - 1)))
    return (x,), {"indices": idx, "axis": axis}


@st.composite
def take_along_axis_args(draw: Any) -> Draw:
    x = draw(arrays(shapes(min_dims=1)))
    axis = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    ishape = list(x.shape)
    ishape[axis] = draw(st.integers(1, 4))
    idx = draw(hnp.arrays(np.int64, tuple(ishape), elements=st.integers(-n, n - 1)))
    return (x,), {"indices": idx, "axis": axis}


AT_OPS = st.sampled_from(["get", "set", "add", "multiply"])

INDEXING = [
    Case("getitem", getitem_args(), ref=lambda x, idx: x[idx]),
    Case("Tracer.__getitem__", getitem_args(), ref=lambda x, idx: x[idx],
         fn=on_tracer(lambda x, idx: x[idx]), dtypes=FLOATS),
    Case("index_update", update_args(unique=True), ref=_np_update,
         fn=lambda x, v, idx: fnp.index_update(x, idx, v)),
    Case("index_add", update_args(unique=False), ref=_np_add,
         fn=lambda x, v, idx: fnp.index_add(x, idx, v)),
    Case("at", update_args(unique=True, op=AT_OPS), ref=_np_at, fn=_at),
    Case("Tracer.at", update_args(unique=True, op=AT_OPS), ref=_np_at, dtypes=FLOATS,
         fn=on_tracer(lambda x, v, idx, op: _at(x, v, idx, op, at=lambda t: t.at))),
    Case("take", take_args()),
    Case("take_along_axis", take_along_axis_args()),
]

# ------------------------------------------------------------------- creation

DTYPE_ARG = st.sampled_from([None, "float32", np.int64, bool, float])
SHAPE_ARG = st.one_of(st.integers(0, 4), shapes(min_dims=0, min_side=0))


def static(**kw: st.SearchStrategy[Any]) -> st.SearchStrategy[Draw]:
    return st.fixed_dictionaries(kw).map(lambda d: ((), d))


def scalar_array(dom: Domain = REAL) -> st.SearchStrategy[np.ndarray]:
    return arrays((), dom)


@st.composite
def arange_kw(draw: Any) -> Draw:
    if draw(st.booleans()):
        start, stop = draw(st.integers(-3, 3)), draw(st.integers(-3, 6))
        step = draw(st.sampled_from([None, 1, 2, -1]))
    else:
        start, stop = draw(st.floats(-3, 3)), draw(st.floats(-3, 6))
        step = draw(st.sampled_from([0.5, 1.5, -0.75]))
    dtype = draw(st.sampled_from([None, "float32", np.float64]))
    return (), {"start": start, "stop": stop, "step": step, "dtype": dtype}


@st.composite
def linspace_args(draw: Any, dtypes: tuple[Any, ...]) -> Draw:
    return (draw(scalar_array()), draw(scalar_array())), {
        "num": draw(st.integers(0, 5)), "endpoint": draw(st.booleans()),
        "dtype": draw(st.sampled_from(dtypes))}


@st.composite
def like_args(draw: Any, fill: bool = False) -> Draw:
    args = (draw(arrays(shapes())),) + ((draw(scalar_array()),) if fill else ())
    return args, {"dtype": draw(DTYPE_ARG), "shape": draw(st.none() | shapes(min_dims=1))}


@st.composite
def full_args(draw: Any, dtypes: Any = DTYPE_ARG) -> Draw:
    return (draw(scalar_array()),), {"shape": draw(SHAPE_ARG), "dtype": draw(dtypes)}


def _full(mod: Any) -> Callable[..., Any]:
    return lambda fill, shape, dtype: mod.full(shape, fill, dtype)


def _full_like(mod: Any) -> Callable[..., Any]:
    return lambda a, fill, dtype, shape: mod.full_like(a, fill, dtype, shape=shape)


def _linspace(mod: Any) -> Callable[..., Any]:
    return lambda a, b, **kw: mod.linspace(a, b, **kw)


@st.composite
def meshgrid_args(draw: Any) -> Draw:
    k = draw(st.integers(1, 3))
    return (tuple(draw(arrays(shapes(1, 1))) for _ in range(k)),
            {"indexing": draw(st.sampled_from(["xy", "ij"]))})


@st.composite
def array_list_args(draw: Any) -> Draw:
    shape = draw(shapes(max_dims=2))
    return tuple(draw(arrays(shape)) for _ in range(draw(st.integers(1, 3)))), {}


EYE_KW = {"N": st.integers(0, 4), "M": st.none() | st.integers(0, 4), "k": st.integers(-2, 2),
          "dtype": DTYPE_ARG}


@st.composite
def result_type_args(draw: Any) -> Draw:
    dts = st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.int32, np.int8,
                           np.uint8, np.bool_])
    arrs = tuple(np.ones(2, draw(dts)) for _ in range(draw(st.integers(1, 3))))
    return arrs, {"scalars": draw(st.sampled_from([(), (2.0,), (1,), (True,), (1j,)]))}


def _jax_numpy() -> Any:
    """jax.numpy (64-bit mode, as the suite runs), the reference for dtype rules."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp  # noqa: PLC0415

    return jnp


@st.composite
def promote_types_args(draw: Any) -> Draw:
    dts = st.sampled_from([np.float64, np.float32, np.float16, np.int64, np.int32, np.int8,
                           np.uint8, np.uint32, np.bool_, int, float, complex])
    return (draw(dts), draw(dts)), {}


CREATION = [
    Case("zeros", static(shape=SHAPE_ARG, dtype=DTYPE_ARG), grad=False),
    Case("ones", static(shape=SHAPE_ARG, dtype=DTYPE_ARG), grad=False),
    Case("empty", static(shape=SHAPE_ARG, dtype=DTYPE_ARG), ref=np.zeros, grad=False),
    Case("full", full_args(), ref=_full(np), fn=_full(fnp),
         grad_args=full_args(st.just(None))),
    Case("zeros_like", like_args(), grad=False), Case("ones_like", like_args(), grad=False),
    Case("empty_like", like_args(), ref=np.zeros_like, grad=False),
    Case("full_like", like_args(fill=True), ref=_full_like(np), fn=_full_like(fnp),
         grad_args=like_args(fill=True).map(lambda d: (d[0], {**d[1], "dtype": None}))),
    Case("arange", arange_kw(), grad=False),
    Case("linspace", linspace_args((None,)), ref=_linspace(np), fn=_linspace(fnp),
         dtypes=FLOATS),
    Case("linspace", linspace_args(("float32",)), ref=_linspace(np), fn=_linspace(fnp),
             variant="dtype", grad=False, dtypes=(F64,)),
    Case("linspace", linspace_args((None,)), ref=_linspace(np), fn=_linspace(fnp),
             variant="int", grad=False, dtypes=(I64,)),
    Case("eye", static(**EYE_KW), grad=False),
    Case("identity", static(n=st.integers(0, 4), dtype=DTYPE_ARG), grad=False),
    # (JAX's tri defaults to float32 even with 64-bit mode on, unlike eye and ones)
    Case("tri", static(**EYE_KW), grad=False,
         ref=lambda N, M=None, k=0, dtype=None: np.tri(N, M, k, np.float32 if dtype is None
                                                       else dtype)),
    Case("meshgrid", meshgrid_args()),
    Case("array", one_array(dtype=lambda s: st.sampled_from([None, np.float64])),
         dtypes=ALL),
    Case("array", one_array(dtype=lambda s: DTYPE_ARG), variant="dtype", grad=False),
    Case("array", array_list_args(), ref=listed(np.array), fn=listed(fnp.array),
         variant="list"),
    Case("asarray", one_array(dtype=lambda s: st.just(None)), dtypes=ALL),
    Case("asarray", one_array(dtype=lambda s: st.sampled_from(["float32", np.int64])),
             variant="dtype", grad=False, dtypes=(F64,)),
    Case("copy", one_array(), dtypes=ALL),
    # JAX's promotion lattice differs from NumPy's: jax.numpy is the reference.
    Case("result_type", result_type_args(), grad=False, dtypes=(F64,),
         ref=lambda *a, scalars: _jax_numpy().result_type(*a, *scalars),
         fn=lambda *a, scalars: fnp.result_type(*a, *scalars)),
    Case("promote_types", promote_types_args(), grad=False, dtypes=(F64,),
         ref=lambda a, b: _jax_numpy().promote_types(a, b),
         fn=lambda a, b: fnp.promote_types(a, b)),
    Case("dtype", static(obj=st.sampled_from(["float32", np.int8, float, fnp.bfloat16,
                                              fnp.float16])), grad=False,
         ref=lambda obj: np.dtype(obj)),
]

TABLE: list[Case] = ELEMENTWISE + REDUCTIONS + SHAPE + LINALG + INDEXING + CREATION

# Rows whose result is not an array (nothing to stage).
NOT_STAGED = {n: "returns a dtype, not an array" for n in ("result_type", "promote_types", "dtype")}

# Public names of funcgrad.numpy that are not functions over arrays.
NOT_FUNCTIONS = {
    **{n: "dtype object" for n in (
        "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128", "ndarray", "bfloat16",
        "cdouble", "complex_", "csingle", "double", "float_", "half", "int_", "single",
        "uint")},
    **{n: "constant" for n in ("pi", "e", "inf", "nan", "newaxis")},
    "AtIndexer": "the class behind at(x)[idx]; tested through the 'at' and 'Tracer.at' rows",
    **{n: "typing names of the module itself, not NumPy functions" for n in (
        "Any", "annotations")},
    "linalg": "a submodule; funcgrad.numpy.linalg.norm is tested in tests/core/test_linalg.py",
    "fft": "a submodule; funcgrad.numpy.fft is tested in tests/core/test_fft.py",
    "from_dlpack": "shares memory rather than computing: tested in tests/test_dlpack.py",
}
PSEUDO_NAMES = {"Tracer.__getitem__", "Tracer.at"}


def public_names() -> set[str]:
    return {n for n in dir(fnp) if not n.startswith("_")}


def _tested_in_tests_numpy() -> set[str]:
    """Public names that the comparison files of tests/numpy check against jax.numpy
    (values, dtypes, gradients) or the vmap column of tests/transforms/test_vmap.py runs,
    and the names that are not functions (classes, dtype types, constants, the index-trick
    objects ``r_``/``mgrid``/...)."""
    import inspect  # noqa: PLC0415
    import pathlib  # noqa: PLC0415
    import re  # noqa: PLC0415

    folder = pathlib.Path(__file__).resolve().parents[1] / "numpy"
    text = "".join(p.read_text() for p in folder.glob("*.py")) + (
        folder.parent / "transforms" / "test_vmap.py").read_text()
    out = set()
    for n in public_names():
        obj = getattr(fnp, n)
        if inspect.isclass(obj) or not callable(obj) or re.search(
                r"[\"'.]" + re.escape(n) + r"\b", text):
            out.add(n)
    return out


def test_table_covers_every_public_function() -> None:
    table_names = {c.name for c in TABLE}
    missing = sorted(public_names() - table_names - set(NOT_FUNCTIONS)
                     - _tested_in_tests_numpy())
    assert not missing, f"funcgrad.numpy functions without a row in TABLE: {missing}"
    unknown = sorted(table_names - public_names() - PSEUDO_NAMES)
    assert not unknown, f"TABLE rows for names funcgrad.numpy does not have: {unknown}"
    stale = sorted(set(NOT_FUNCTIONS) - public_names())
    assert not stale, f"NOT_FUNCTIONS lists names funcgrad.numpy does not have: {stale}"
    for n, why in NOT_FUNCTIONS.items():
        if why == "dtype object":
            assert isinstance(getattr(fnp, n), (np.dtype, type)), n
            if n != "ndarray":
                assert np.dtype(getattr(fnp, n)).name, n
        if why == "constant":
            assert getattr(fnp, n) is None or isinstance(getattr(fnp, n), float), n


def test_table_ids_are_unique() -> None:
    ids = [c.id for c in TABLE]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


# -------------------------------------------------------------------- helpers


def params(column: str) -> list[Any]:
    out = []
    for c in TABLE:
        if (column == "grad" and not c.grad) or (column == "scalar" and c.scalar is None) or (
                column == "staged" and c.name in NOT_STAGED):
            continue
        marks = [pytest.mark.xfail(strict=True, reason=c.bugs[column])] if column in c.bugs \
            else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


def cast(a: Any, dtype: np.dtype[Any]) -> Any:
    """A drawn float64 argument in ``dtype`` (integers rounded, bools as ``a > 0``);
    other arguments (indices, masks) are left alone."""
    if not isinstance(a, np.ndarray) or a.dtype != F64:
        return a
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if dtype.kind == "b":
            return np.asarray(a > 0)
        if dtype.kind in "iu":
            return np.asarray(np.nan_to_num(np.round(a)), dtype=dtype)
        return np.asarray(a, dtype=dtype)


def quiet(f: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kw)


def assert_same(actual: Any, expected: Any, what: str = "") -> None:
    """Leaf by leaf: equal shapes and dtypes, values equal (integers, booleans) or
    close (floats, by dtype)."""
    a_leaves, e_leaves = tree_leaves(actual), tree_leaves(expected)
    assert len(a_leaves) == len(e_leaves), f"{what}{len(a_leaves)} vs {len(e_leaves)} results"
    for a, e in zip(a_leaves, e_leaves):
        if isinstance(e, np.dtype) or isinstance(e, type):
            assert np.dtype(a) == np.dtype(e), f"{what}dtype {a} != {e}"
            continue
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, f"{what}shape {a.shape} != {e.shape}"
        assert a.dtype == e.dtype, f"{what}dtype {a.dtype} != NumPy's {e.dtype}"
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(a, e, rtol=RTOL.get(e.dtype, 1e-12),
                                       atol=ATOL.get(e.dtype, 1e-12), err_msg=what)
        else:
            np.testing.assert_array_equal(a, e, err_msg=what)


def split_float_args(args: tuple[Any, ...], kw: Mapping[str, Any], f: Callable[..., Any]
                     ) -> tuple[Callable[..., Any], list[Any]]:
    """``f`` as a function of its float64 array arguments only (the others closed over)."""
    pos = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == F64]

    def g(*floats: Any) -> Any:
        full = list(args)
        for i, x in zip(pos, floats):
            full[i] = x
        return f(*full, **kw)

    return g, [args[i] for i in pos]


# -------------------------------------------------------------------- columns


def run(case: Case, column: str, body: Callable[[st.DataObject], None],
        base: settings = SETTINGS) -> None:
    """Run ``body(data)`` under hypothesis; rows known to fail (strict xfails) skip the
    shrinking phase, which would only spend time minimising a known bug."""
    if column in case.bugs:
        base = settings(base, phases=(Phase.explicit, Phase.generate))
    given(data=st.data())(base(body))()


@pytest.mark.parametrize("case", params("value"))
def test_value(case: Case) -> None:
    run(case, "value", lambda data: check_value(case, data))


def check_value(case: Case, data: st.DataObject) -> None:
    args, kw = data.draw(case.strategy("value"), label="args")
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    args = tuple(cast(a, dtype) for a in args)
    expected = quiet(case.np_fn, *args, **kw)
    actual = quiet(case.fnp_fn, *args, **kw)
    assert_same(actual, expected)


@pytest.mark.parametrize("case", params("scalar"))
def test_weak_scalar(case: Case) -> None:
    """NEP 50: ``f(float32_array, 2.0)`` is float32, ``f(int32_array, 3)`` is int32..."""
    run(case, "scalar", lambda data: check_weak_scalar(case, data))


def check_weak_scalar(case: Case, data: st.DataObject) -> None:
    args, kw = data.draw(case.strategy("value"), label="args")
    dtype = data.draw(st.sampled_from([d for d in (F32, I32, np.dtype("float16"))
                                       if d.kind in "".join(t.kind for t in case.dtypes)]),
                      label="dtype")
    pos = data.draw(st.sampled_from(case.scalar_at or [
        i for i, a in enumerate(args) if a.dtype == F64]), label="scalar position")
    args = [cast(a, dtype) for a in args]
    args[pos] = case.scalar
    assert_same(quiet(case.fnp_fn, *args, **kw), quiet(case.np_fn, *args, **kw))


@pytest.mark.parametrize("case", params("staged"))
def test_staged(case: Case) -> None:
    run(case, "staged", lambda data: check_staged(case, data))


def check_staged(case: Case, data: st.DataObject) -> None:
    args, kw = data.draw(case.strategy("value"), label="args")
    dtype = data.draw(st.sampled_from(case.dtypes), label="dtype")
    args = tuple(cast(a, dtype) for a in args)

    def f(*a: Any) -> Any:
        return case.fnp_fn(*a, **kw)

    eager = quiet(f, *args)
    closed = funcgrad.make_jaxpr(f)(*args)
    staged = quiet(funcgrad.eval_jaxpr, closed, *args)
    assert_same(staged, tree_leaves(eager), what=f"{closed}\n")


@pytest.mark.parametrize("case", params("grad"))
def test_grad(case: Case) -> None:
    run(case, "grad", lambda data: check_grad(case, data), GRAD_SETTINGS)


def check_grad(case: Case, data: st.DataObject) -> None:
    args, kw = data.draw(case.strategy("grad"), label="args")
    f, floats = split_float_args(args, kw, case.fnp_fn)
    assert floats, "a differentiable row needs float64 arguments"
    check_grads(f, floats, order=2, modes=("fwd", "rev"))


# ------------------------------------------------- indexing: fixed examples

X345 = np.arange(60.0).reshape(3, 4, 5) / 7.0
I2 = np.array([2, 0])
NAMED_INDICES = {
    "int": 1, "negative-int": -1, "int-tuple": (2, -1, 0),
    "slice": slice(1, 3), "negative-step": (slice(None, None, -1), slice(3, 0, -2)),
    "empty-slice": slice(2, 1), "out-of-range-slice": slice(-10, 10, 2),
    "none": (None, 0, None), "ellipsis": (Ellipsis, 1), "ellipsis-none": (1, ..., None),
    "int-array": I2, "list-in-tuple": ([0, 2, 2],), "2d-int-array": np.array([[0, 1], [2, 0]]),
    "adjacent-advanced": (slice(None), I2, np.array([1, 4])),
    "non-adjacent-advanced": (I2, slice(None), np.array([1, 4])),
    "int-and-array-non-adjacent": (0, slice(None), I2),
    "int-and-array-adjacent": (slice(None), 1, I2),
    "broadcast-advanced": (np.array([[0], [2]]), slice(1, 3), np.array([0, 4, 1])),
    "mask": X345 > 4.0, "row-mask": np.array([True, False, True]),
    "mask-after-slice": (slice(None), np.array([True, False, True, True])),
    "mask-then-int": (np.array([False, True, True]), slice(None), 3),
    "advanced-with-none": (None, I2, slice(None), I2),
}


@pytest.mark.parametrize("idx", NAMED_INDICES.values(), ids=NAMED_INDICES.keys())
def test_getitem_examples(idx: Any) -> None:
    expected = X345[idx]
    assert_same(fnp.getitem(X345, idx), expected)
    assert_same(on_tracer(lambda x: x[idx])(X345), expected)
    closed = funcgrad.make_jaxpr(lambda x: x[idx])(X345)
    assert_same(funcgrad.eval_jaxpr(closed, X345), [expected])
    check_grads(lambda x: x[idx], (X345,), order=2)


@pytest.mark.parametrize("idx", NAMED_INDICES.values(), ids=NAMED_INDICES.keys())
def test_index_add_and_update_examples(idx: Any) -> None:
    v = np.linspace(-1.0, 1.0, X345[idx].size).reshape(X345[idx].shape)
    assert_same(fnp.index_add(X345, idx, v), _np_add(X345, v, idx))
    assert_same(on_tracer(lambda x, u: x.at[idx].add(u))(X345, v), _np_add(X345, v, idx))
    if np.unique(_selected(X345.shape, idx)).size == X345[idx].size:
        assert_same(fnp.index_update(X345, idx, v), _np_update(X345, v, idx))
        assert_same(on_tracer(lambda x, u: x.at[idx].set(u))(X345, v),
                    _np_update(X345, v, idx))


def test_at_inside_grad() -> None:
    """Inside grad the argument is a tracer with ``.at``; gradients flow to x and v."""
    x, v = np.arange(5.0), np.array([10.0, 20.0])
    idx = np.array([1, 1])

    def loss(x: Any, v: Any) -> Any:
        return fnp.sum(x.at[idx].add(v) ** 2)

    gx, gv = funcgrad.grad(loss, argnums=(0, 1))(x, v)
    y = _np_add(x, v, idx)
    np.testing.assert_allclose(gx, 2 * y)
    np.testing.assert_allclose(gv, 2 * y[idx])
    gset = funcgrad.grad(lambda x: fnp.sum(x.at[2].set(7.0) * x))(x)
    np.testing.assert_allclose(gset, np.where(np.arange(5) == 2, 7.0, 2 * x))
