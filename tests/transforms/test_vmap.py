"""``vmap`` against a Python loop: every primitive, every funcgrad.numpy function, and
compositions with the other transformations.

The reference for ``vmap(f, in_axes, out_axes)(*args)`` is always the same loop:
slice every batched operand at its in axis, call ``f`` eagerly on each batch
member, ``np.stack`` the results and move the stacked axis to ``out_axes``.
Shapes, batch sizes, which operands are batched and at which (possibly
negative) axis, out axes and values are drawn by hypothesis.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import pathlib
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad as fg
import funcgrad.numpy as fnp
from funcgrad import lax
from funcgrad.core import PRIMITIVES
from funcgrad.errors import ConcretizationTypeError, ShapeError
from funcgrad.primitives.collectives import COLLECTIVE_NAMES
from funcgrad.transforms import control_flow  # noqa: F401 - registers cond, while, scan
from funcgrad.tree_util import tree_flatten

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=10, deadline=None,
               suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------ operands


@dataclasses.dataclass(frozen=True)
class Arg:
    """One operand of a case, described per batch member: its shape and how to fill it.

    ``kind``: "f" normal floats, "p" in [0.5, 2], "u" in (-0.9, 0.9), "g" in [1.1, 3],
    "d" small integers as floats (ties), "b" booleans, "i" small integers, or a
    callable ``(rng, shape) -> array``.
    """

    shape: tuple[int, ...]
    kind: Any = "f"
    dtype: Any = None


def _fill(rng: np.random.Generator, arg: Arg) -> np.ndarray:
    shape, kind = tuple(arg.shape), arg.kind
    if callable(kind):
        out = np.asarray(kind(rng, shape))
    elif kind == "f":
        out = rng.standard_normal(shape)
    elif kind == "p":
        out = rng.uniform(0.5, 2.0, shape)
    elif kind == "u":
        out = rng.uniform(-0.9, 0.9, shape)
    elif kind == "g":
        out = rng.uniform(1.1, 3.0, shape)
    elif kind == "d":
        out = rng.integers(-2, 3, shape).astype(np.float64)
    elif kind == "b":
        out = rng.random(shape) < 0.5
    elif kind == "i":
        out = rng.integers(-4, 5, shape)
    else:
        raise ValueError(kind)
    out = np.asarray(out)
    return out.astype(arg.dtype) if arg.dtype is not None else out


def ints(lo: int, hi: int) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    """Integers in [lo, hi)."""
    return lambda rng, shape: rng.integers(lo, hi, shape)


def with_nonfinite(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape)
    special = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0]), shape)
    return np.where(rng.random(shape) < 0.3, special, x)


# -------------------------------------------------------- the loop reference


def _loop(fn: Callable[..., Any], vals: list[Any], axes: list[int | None], size: int
          ) -> tuple[list[list[np.ndarray]], Any]:
    """Per-member leaves of ``fn`` called on the slices of ``vals``."""
    per_member, tree = [], None
    for b in range(size):
        # np.asarray: a 0-d slice stays an array (see test_eager_primitives_accept_numpy_scalars)
        sl = [v if ax is None else np.asarray(np.take(v, b, axis=ax)) for v, ax in zip(vals, axes)]
        leaves, tree = tree_flatten(fn(*sl))
        per_member.append([np.asarray(x) for x in leaves])
    return per_member, tree


def _assert_same(got: Any, want: np.ndarray, what: str) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, loop gives {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, loop gives {want.dtype}"
    if want.dtype.kind in "fc":
        tol = 1e-5 if want.dtype.itemsize <= 4 else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check_vmap(draw: Callable[..., Any], fn: Callable[..., Any], args: list[Arg],
               batched: tuple[bool, ...] | None = None, size: int | None = None) -> None:
    """vmap(fn) over drawn in_axes/out_axes/batch size == loop + np.stack.

    ``batched`` fixes which operands carry the batch axis (else drawn per operand);
    with none batched, ``axis_size`` gives the size.
    """
    size = size if size is not None else draw(st.integers(1, 3), label="batch size")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    axes: list[int | None] = []
    vals: list[Any] = []
    for i, arg in enumerate(args):
        is_b = batched[i] if batched is not None else draw(st.booleans(), label=f"batch {i}")
        r = len(arg.shape)
        if is_b:
            ax = draw(st.integers(-(r + 1), r), label=f"in axis {i}")
            vals.append(np.stack([_fill(rng, arg) for _ in range(size)], axis=ax))
        else:
            ax = None
            vals.append(_fill(rng, arg))
        axes.append(ax)
    per_member, tree = _loop(fn, vals, axes, size)
    ranks = [m.ndim for m in per_member[0]]
    out_leaf_axes = [draw(st.integers(-(r + 1), r), label=f"out axis {j}")
                     for j, r in enumerate(ranks)]
    if len(ranks) == 1 and tree.num_leaves == 1 and tree.node_type is None:
        out_axes: Any = out_leaf_axes[0]
    else:
        out_axes = fg.tree_util.tree_unflatten(tree, out_leaf_axes)
    kwargs = {} if any(a is not None for a in axes) else {"axis_size": size}
    with np.errstate(all="ignore"):
        got = fg.vmap(fn, in_axes=tuple(axes), out_axes=out_axes, **kwargs)(*vals)
    got_leaves, got_tree = tree_flatten(got)
    assert got_tree == tree, f"output structure {got_tree}, loop gives {tree}"
    for j, (g, ax) in enumerate(zip(got_leaves, out_leaf_axes)):
        want = np.moveaxis(np.stack([m[j] for m in per_member]), 0, ax)
        _assert_same(g, want, f"output leaf {j} (in_axes={tuple(axes)}, out_axes={out_axes})")


# ===================================================== part a: every primitive


class EmptyOk:
    """A ``draw`` whose cases may also draw zero-size axes (``_shape`` reads ``min_side``)."""

    min_side = 0

    def __init__(self, draw: Callable[..., Any]) -> None:
        self.draw = draw

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.draw(*args, **kwargs)


def _shape(draw: Any, lo: int = 0, hi: int = 3, side: int = 3, nonempty: bool = False
           ) -> tuple[int, ...]:
    min_side = 1 if nonempty else getattr(draw, "min_side", 1)
    return draw(hnp.array_shapes(min_dims=lo, max_dims=hi, min_side=min_side, max_side=side))


def _subset(draw: Any, n: int) -> tuple[int, ...]:
    return tuple(i for i in range(n) if draw(st.booleans()))


Case = Callable[[Any], tuple[Callable[..., Any], list[Arg]]]
PRIM_CASES: dict[str, Case] = {}


def _unary_case(name: str, kind: str = "f", **params: Any) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        return (lambda x: PRIMITIVES[name].bind(x, **params)), [Arg(_shape(draw), kind)]

    return case


for _name, _kind in {
    "neg": "f", "sign": "f", "floor": "f", "ceil": "f", "round": "f", "exp": "f",
    "exp2": "f", "expm1": "f", "sin": "f", "cos": "f", "tan": "u", "atan": "f", "sinh": "f",
    "cosh": "f", "tanh": "f", "asinh": "f", "cbrt": "f", "abs": "f", "logistic": "f",
    "erf": "f", "erfc": "f",
    "stop_gradient": "f", "log": "p", "log1p": "p", "sqrt": "p", "rsqrt": "p", "asin": "u",
    "acos": "u", "atanh": "u", "acosh": "g", "is_finite": with_nonfinite,
}.items():
    PRIM_CASES[_name] = _unary_case(_name, _kind)


def _not(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    kind = draw(st.sampled_from(["b", "i"]))
    return (lambda x: PRIMITIVES["not"].bind(x)), [Arg(_shape(draw), kind)]


def _integer_pow(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    y = draw(st.integers(-2, 3))
    return (lambda x: PRIMITIVES["integer_pow"].bind(x, y=y)), [Arg(_shape(draw), "p")]


def _convert(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    dt = np.dtype(draw(st.sampled_from(["float32", "int32", "int64", "bool"])))
    return (lambda x: PRIMITIVES["convert_element_type"].bind(x, new_dtype=dt,
                                                              weak_type=False),
            [Arg(_shape(draw), "d")])


PRIM_CASES["not"] = _not
PRIM_CASES["integer_pow"] = _integer_pow
PRIM_CASES["convert_element_type"] = _convert


def _threefry(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    words = [Arg(shape, ints(0, 2 ** 32), np.uint32) for _ in range(4)]
    return (lambda *a: PRIMITIVES["threefry2x32"].bind(*a)), words


PRIM_CASES["threefry2x32"] = _threefry


def _random_gamma(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    log_space = draw(st.booleans())
    return ((lambda k, a: PRIMITIVES["random_gamma"].bind(k, a, log_space=log_space)),
            [Arg((2,), ints(0, 2 ** 32), np.uint32), Arg(_shape(draw), "p")])


def _random_gamma_grad(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    return (lambda a, x: PRIMITIVES["random_gamma_grad"].bind(a, x)), [Arg(shape, "p"),
                                                                      Arg(shape, "g")]


PRIM_CASES["random_gamma"] = _random_gamma
PRIM_CASES["random_gamma_grad"] = _random_gamma_grad


# Binary elementwise: equal shapes or a rank-0 side (lax primitives do not broadcast).
_BINARY = {
    "add": ("f", "f"), "sub": ("f", "f"), "mul": ("f", "f"), "div": ("f", "p"),
    "rem": ("f", "p"), "pow": ("p", "f"), "max": ("d", "d"), "min": ("d", "d"),
    "atan2": ("f", "f"), "eq": ("d", "d"), "ne": ("d", "d"), "lt": ("d", "d"),
    "le": ("d", "d"), "gt": ("d", "d"), "ge": ("d", "d"), "and": ("b", "b"),
    "or": ("i", "i"), "xor": ("b", "b"),
}


def _binary_case(name: str, kinds: tuple[str, str], mode: str | None = None) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw, lo=1)
        m = mode or draw(st.sampled_from(["same", "x0", "y0", "both0"]))
        sx = () if m in ("x0", "both0") else shape
        sy = () if m in ("y0", "both0") else shape
        kx, ky = kinds
        if name in ("and", "or", "xor"):
            kx = ky = draw(st.sampled_from(["b", "i"]))
        return (lambda x, y: PRIMITIVES[name].bind(x, y)), [Arg(sx, kx), Arg(sy, ky)]

    return case


for _name, _kinds in _BINARY.items():
    PRIM_CASES[_name] = _binary_case(_name, _kinds)


def _select(draw: Any, mode: str | None = None) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, lo=1)
    m = mode or draw(st.sampled_from(["same", "false0", "pred_true0", "all0"]))
    sp = st_ = sf = shape
    if m == "false0":
        sf = ()
    elif m == "pred_true0":
        sp = st_ = ()
    elif m == "all0":
        sp = st_ = sf = ()
    return (lambda p, t, f: PRIMITIVES["select"].bind(p, t, f)), [Arg(sp, "b"), Arg(st_, "f"),
                                                                   Arg(sf, "f")]


PRIM_CASES["select"] = _select


# Special functions, bits, top_k (funcgrad/primitives/special.py, bits.py, sorting.py).
def _whole(lo: int, hi: int) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    """Whole numbers in [lo, hi) as floats (polygamma's order)."""
    return lambda rng, shape: rng.integers(lo, hi, shape).astype(np.float64)


for _name, _kind in {"lgamma": "p", "digamma": "p", "erf_inv": "u", "bessel_i0e": "f",
                     "bessel_i1e": "f", "population_count": "i", "clz": "i", "erfcx": "f",
                     "dawsn": "f", "exp1": "p", "expi": "p", "spence": "p"}.items():
    PRIM_CASES[_name] = _unary_case(_name, _kind)
for _name, _kinds in {"polygamma": (_whole(0, 3), "p"), "igamma": ("p", "p"),
                      "igammac": ("p", "p"), "igamma_grad_a": ("p", "p"),
                      "zeta": ("g", "p"), "nextafter": ("f", "f"),
                      "expn": (_whole(0, 4), "p"),
                      "shift_left": ("i", ints(-1, 70)),
                      "shift_right_logical": ("i", ints(-1, 70)),
                      "shift_right_arithmetic": ("i", ints(-1, 70))}.items():
    PRIM_CASES[_name] = _binary_case(_name, _kinds)


def _betainc(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    unit = lambda rng, s: rng.uniform(0.05, 0.95, s)  # noqa: E731
    return (lambda a, b, x: PRIMITIVES["regularized_incomplete_beta"].bind(a, b, x)), [
        Arg(shape, "p"), Arg(shape, "p"), Arg(shape, unit)]


def _bitcast(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    new = np.dtype(draw(st.sampled_from(["int64", "float32", "uint8"])))
    return (lambda x: PRIMITIVES["bitcast_convert_type"].bind(x, new_dtype=new)), [
        Arg(_shape(draw))]


def _top_k(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, lo=1)
    axis = draw(st.integers(0, len(shape) - 1))
    k = draw(st.integers(0, shape[axis]))
    return (lambda x: PRIMITIVES["top_k"].bind(x, k=k, axis=axis)), [Arg(shape, "d")]


PRIM_CASES["regularized_incomplete_beta"] = _betainc
PRIM_CASES["bitcast_convert_type"] = _bitcast
PRIM_CASES["top_k"] = _top_k


def _reduction(name: str) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw, nonempty=name in ("reduce_max", "reduce_min"))
        axes = _subset(draw, len(shape))
        if name in ("reduce_max", "reduce_min") and not axes and shape:
            axes = (0,)
        return (lambda x: PRIMITIVES[name].bind(x, axes=axes)), [Arg(shape, "d")]

    return case


for _name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
    PRIM_CASES[_name] = _reduction(_name)


def _arg_reduction(name: str) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw, lo=1, nonempty=True)
        axis = draw(st.integers(0, len(shape) - 1))
        dt = np.dtype(draw(st.sampled_from(["int32", "int64"])))
        return (lambda x: PRIMITIVES[name].bind(x, axis=axis, index_dtype=dt)), [
            Arg(shape, "d")]

    return case


PRIM_CASES["argmax"] = _arg_reduction("argmax")
PRIM_CASES["argmin"] = _arg_reduction("argmin")


def _cumsum(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, lo=1)
    axis = draw(st.integers(0, len(shape) - 1))
    reverse = draw(st.booleans())
    return (lambda x: PRIMITIVES["cumsum"].bind(x, axis=axis, reverse=reverse)), [Arg(shape)]


PRIM_CASES["cumsum"] = _cumsum


def _sorting(name: str) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw, lo=1)
        axis = draw(st.integers(0, len(shape) - 1))
        return (lambda x: PRIMITIVES[name].bind(x, axis=axis)), [Arg(shape)]

    return case


PRIM_CASES["sort"] = _sorting("sort")
PRIM_CASES["argsort"] = _sorting("argsort")


def _broadcast_in_dim(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, hi=2)
    extra = draw(st.integers(0, 2))
    out_rank = len(shape) + extra
    dims = tuple(sorted(draw(st.permutations(range(out_rank)))[:len(shape)]))
    out = [draw(st.integers(1, 3)) for _ in range(out_rank)]
    for i, d in enumerate(dims):
        out[d] = shape[i] if shape[i] != 1 else draw(st.integers(1, 3))
    out_shape = tuple(out)
    return (lambda x: PRIMITIVES["broadcast_in_dim"].bind(
        x, shape=out_shape, broadcast_dimensions=dims)), [Arg(shape)]


def _reshape(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    n = math.prod(shape)
    options = [(n,), shape[::-1], (1, *shape), (*shape, 1)]
    if n % 2 == 0:
        options.append((2, n // 2))
    new = tuple(draw(st.sampled_from(options)))
    return (lambda x: PRIMITIVES["reshape"].bind(x, new_sizes=new)), [Arg(shape)]


def _transpose(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    perm = tuple(draw(st.permutations(range(len(shape)))))
    return (lambda x: PRIMITIVES["transpose"].bind(x, permutation=perm)), [Arg(shape)]


def _squeeze(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = list(_shape(draw, hi=2))
    for _ in range(draw(st.integers(1, 2))):
        shape.insert(draw(st.integers(0, len(shape))), 1)
    ones = [i for i, s in enumerate(shape) if s == 1]
    dims = tuple(i for i in ones if draw(st.booleans())) or (ones[0],)
    return (lambda x: PRIMITIVES["squeeze"].bind(x, dimensions=dims)), [Arg(tuple(shape))]


def _expand_dims(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    k = draw(st.integers(1, 2))
    dims = tuple(sorted(draw(st.permutations(range(len(shape) + k)))[:k]))
    return (lambda x: PRIMITIVES["expand_dims"].bind(x, dimensions=dims)), [Arg(shape)]


def _slice(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, side=4)
    lo, hi, stride = [], [], []
    for n in shape:
        a = draw(st.integers(0, n))
        lo.append(a)
        hi.append(draw(st.integers(a, n)))
        stride.append(draw(st.integers(1, 2)))
    start, limit, strides = tuple(lo), tuple(hi), tuple(stride)
    return (lambda x: PRIMITIVES["slice"].bind(x, start_indices=start, limit_indices=limit,
                                               strides=strides)), [Arg(shape)]


def _rev(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, lo=1)
    dims = _subset(draw, len(shape)) or (0,)
    return (lambda x: PRIMITIVES["rev"].bind(x, dimensions=dims)), [Arg(shape)]


def _device_put(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    return (lambda x: PRIMITIVES["device_put"].bind(x, device="cpu:0", source=None)), \
        [Arg(shape)]


def _concatenate(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, lo=1)
    dim = draw(st.integers(0, len(shape) - 1))
    n = draw(st.integers(2, 3))
    args = []
    for _ in range(n):
        s = list(shape)
        s[dim] = draw(st.integers(1, 3))
        args.append(Arg(tuple(s)))
    return (lambda *xs: PRIMITIVES["concatenate"].bind(*xs, dimension=dim)), args


def _split(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, lo=1)
    axis = draw(st.integers(0, len(shape) - 1))
    cut = draw(st.integers(0, shape[axis]))
    sizes = (cut, shape[axis] - cut)
    return (lambda x: PRIMITIVES["split"].bind(x, sizes=sizes, axis=axis)), [Arg(shape)]


def _pad_config(draw: Any, shape: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    config = []
    for n in shape:
        interior = draw(st.integers(0, 2))
        inner = n + max(0, n - 1) * interior
        lo = draw(st.integers(-min(1, inner), 2))
        hi = draw(st.integers(-min(1, inner + lo), 2))
        config.append((lo, hi, interior))
    return tuple(config)


def _pad(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, hi=2)
    config = _pad_config(draw, shape)
    return (lambda x, v: lax.pad(x, v, config)), [Arg(shape), Arg(())]


def _iota(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    # iota has no operands: under vmap it is never batched; it must still mix with
    # batched values (its batch rule is never consulted).
    shape = _shape(draw, lo=1)
    dim = draw(st.integers(0, len(shape) - 1))
    return (lambda x: x + lax.broadcasted_iota(np.float64, shape, dim)), [Arg(shape)]


for _name, _case in {
    "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "transpose": _transpose,
    "squeeze": _squeeze, "expand_dims": _expand_dims, "slice": _slice, "rev": _rev,
    "concatenate": _concatenate, "split": _split, "pad": _pad, "iota": _iota,
    "device_put": _device_put,
}.items():
    PRIM_CASES[_name] = _case


def _index_gen(op_shape: tuple[int, ...], k: int) -> Callable[..., np.ndarray]:
    """Index tuples (last axis of length k) in range for the first k axes of op_shape."""
    def gen(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if k == 0:
            return np.zeros(shape, np.int64)
        cols = [rng.integers(0, op_shape[c], shape[:-1]) for c in range(k)]
        return np.stack(cols, axis=-1).reshape(shape).astype(np.int64)

    return gen


def _unique_index_gen(op_shape: tuple[int, ...], k: int) -> Callable[..., np.ndarray]:
    """Index tuples without repeats (scatter's winner among duplicates is unspecified)."""
    def gen(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        n = math.prod(shape[:-1])
        flat = rng.permutation(math.prod(op_shape[:k]))[:n]
        return np.stack(np.unravel_index(flat, op_shape[:k]), axis=-1).reshape(shape)

    return gen


def _gather(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    op = _shape(draw, lo=1)
    k = draw(st.integers(0, len(op)))  # k = 0: empty index tuples pick the whole operand
    op = tuple(max(n, 1) if i < k else n for i, n in enumerate(op))  # indexed axes non-empty
    ib = _shape(draw, hi=2)
    return lax.gather, [Arg(op), Arg((*ib, k), _index_gen(op, k))]


_SCATTER_PARAMS: dict[str, dict[str, Any]] = {
    "scatter_mul": {"mode": "drop", "unique_indices": False},
}
SCATTERS = ["scatter_add", "scatter", "scatter_mul", "scatter_min", "scatter_max"]


def _scatter(name: str) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        op = _shape(draw, lo=1)
        k = draw(st.integers(1, len(op)))  # k = 0: see test_scatter_with_empty_index_tuples
        op = tuple(max(n, 1) if i < k else n for i, n in enumerate(op))
        room = math.prod(op[:k])
        ib = _shape(draw, hi=2)
        if name == "scatter":
            while math.prod(ib) > room:
                ib = ib[1:] if len(ib) > 1 else (room,)
            gen = _unique_index_gen(op, k)
        else:
            gen = _index_gen(op, k)
        params = _SCATTER_PARAMS.get(name, {"mode": "drop"})
        fn = lambda o, i, u: PRIMITIVES[name].bind(o, i, u, **params)  # noqa: E731
        return fn, [Arg(op), Arg((*ib, k), gen), Arg((*ib, *op[k:]))]

    return case


def _start_args(draw: Any, op: tuple[int, ...]) -> list[Arg]:
    """Rank-0 integer start operands, partly out of range (they are clamped)."""
    return [Arg((), ints(-2, n + 2), draw(st.sampled_from([np.int32, np.int64])))
            for n in op]


def _dynamic_slice(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    op = _shape(draw)
    sizes = tuple(draw(st.integers(0, n)) for n in op)
    return (lambda o, *s: lax.dynamic_slice(o, s, sizes)), [Arg(op), *_start_args(draw, op)]


def _dynamic_update_slice(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    op = _shape(draw)
    upd = tuple(draw(st.integers(0, n)) for n in op)
    return (lambda o, u, *s: lax.dynamic_update_slice(o, u, s)), [
        Arg(op), Arg(upd), *_start_args(draw, op)]


def _dot_general(draw: Any, n_batch: int | None = None) -> tuple[Callable[..., Any], list[Arg]]:
    nb = draw(st.integers(0, 1)) if n_batch is None else n_batch
    nc = draw(st.integers(0, 2))
    nlf, nrf = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    size = lambda: draw(st.integers(1, 3))  # noqa: E731
    b_sizes = [size() for _ in range(nb)]
    c_sizes = [size() for _ in range(nc)]
    lhs_axes = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [
        ("f", size()) for _ in range(nlf)]
    rhs_axes = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [
        ("f", size()) for _ in range(nrf)]
    lhs_axes = draw(st.permutations(lhs_axes))
    rhs_axes = draw(st.permutations(rhs_axes))

    def shape_of(axes: list[tuple[str, int]]) -> tuple[int, ...]:
        return tuple(b_sizes[i] if t == "b" else c_sizes[i] if t == "c" else i
                     for t, i in axes)

    def where(axes: list[tuple[str, int]], tag: str, n: int) -> tuple[int, ...]:
        return tuple(axes.index((tag, i)) for i in range(n))

    dn = ((where(lhs_axes, "c", nc), where(rhs_axes, "c", nc)),
          (where(lhs_axes, "b", nb), where(rhs_axes, "b", nb)))
    return (lambda a, b: lax.dot_general(a, b, dn)), [Arg(shape_of(lhs_axes)),
                                                      Arg(shape_of(rhs_axes))]


# Convolution and window reductions (funcgrad/primitives/convolution.py, windows.py).


def _conv_general_dilated(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    nd = draw(st.integers(1, 2))
    g, b = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    n, c, o = 2 * b, 2 * g, 2 * g * b
    k = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    sp = tuple(draw(st.integers(2, 4)) for _ in range(nd))
    perms = [tuple(draw(st.permutations(range(nd + 2)))) for _ in range(3)]
    lhs_shape = tuple(np.take((n, c, *sp), np.argsort(perms[0])))
    rhs_shape = tuple(np.take((o, c // g, *k), np.argsort(perms[1])))
    kw = {"window_strides": (draw(st.integers(1, 2)),) * nd,
          "padding": ((draw(st.integers(-1, 1)), 1),) * nd, "lhs_dilation": (1,) * nd,
          "rhs_dilation": (draw(st.integers(1, 2)),) * nd,
          "dimension_numbers": lax.ConvDimensionNumbers(*perms), "feature_group_count": g,
          "batch_group_count": b}
    return (lambda x, w: PRIMITIVES["conv_general_dilated"].bind(x, w, **kw)), [
        Arg(lhs_shape), Arg(rhs_shape)]


def _window_params(draw: Any, rank: int) -> dict[str, Any]:
    win = tuple(draw(st.integers(1, 2)) for _ in range(rank))
    return {"window_dimensions": win,
            "window_strides": tuple(draw(st.integers(1, 2)) for _ in range(rank)),
            "padding": tuple((draw(st.integers(0, w - 1)), 0) for w in win),
            "base_dilation": tuple(draw(st.integers(1, 2)) for _ in range(rank)),
            "window_dilation": tuple(draw(st.integers(1, 2)) for _ in range(rank))}


def _reduce_window(name: str) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw, 1, 3, nonempty=True)
        kw = _window_params(draw, len(shape))
        return (lambda x: PRIMITIVES[name].bind(x, **kw)), [Arg(shape)]

    return case


def _selection(name: str) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw, 1, 3, nonempty=True)
        kw = {**_window_params(draw, len(shape)),
              "select_prim": draw(st.sampled_from(["ge", "le"]))}
        out = fg.eval_shape(lambda x: PRIMITIVES["reduce_window_max"].bind(
            x, **{k: v for k, v in kw.items() if k != "select_prim"}),
            np.zeros(shape)).shape
        first = shape if name == "select_and_gather_add" else out
        return (lambda a, x: PRIMITIVES[name].bind(a, x, **kw)), [Arg(first), Arg(shape)]

    return case


PRIM_CASES["conv_general_dilated"] = _conv_general_dilated
for _name in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    PRIM_CASES[_name] = _reduce_window(_name)
for _name in ("select_and_gather_add", "select_and_scatter_add"):
    PRIM_CASES[_name] = _selection(_name)


for _name, _case in {
    "gather": _gather, **{n: _scatter(n) for n in SCATTERS},
    "dynamic_slice": _dynamic_slice, "dynamic_update_slice": _dynamic_update_slice,
    "dot_general": _dot_general,
}.items():
    PRIM_CASES[_name] = _case


# Matrix decompositions: well-conditioned matrices (SPD for cholesky, dominant diagonal for
# triangular solves and LU, so that pivots and signs are the same per member and batched).


def _spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def _dominant(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape) + 4 * np.eye(*shape[-2:])


def _decomposition(name: str, kind: Any, square: bool, **params: Any) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        m = draw(st.integers(1, 3))
        n = m if square else draw(st.integers(1, 3))
        drawn = {k: draw(v) for k, v in params.items()}
        return (lambda x: PRIMITIVES[name].bind(x, **drawn)), [Arg((m, n), kind)]

    return case


def _triangular_solve(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    n, k = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    flags = {f: draw(st.booleans()) for f in ("left_side", "lower", "transpose_a",
                                               "unit_diagonal")}
    b = (n, k) if flags["left_side"] else (k, n)
    return (lambda a, x: lax.triangular_solve(a, x, conjugate_a=False, **flags)), [
        Arg((n, n), _dominant), Arg(b)]


PRIM_CASES["cholesky"] = _decomposition("cholesky", _spd, True)
PRIM_CASES["triangular_solve"] = _triangular_solve
PRIM_CASES["lu"] = _decomposition("lu", _dominant, False)
PRIM_CASES["qr"] = _decomposition("qr", "f", False, full_matrices=st.booleans())
PRIM_CASES["svd"] = _decomposition("svd", "f", False, full_matrices=st.booleans(),
                                   compute_uv=st.booleans())
PRIM_CASES["eigh"] = _decomposition("eigh", "f", True, lower=st.booleans())
PRIM_CASES["eig"] = _decomposition("eig", "f", True, compute_left_eigenvectors=st.booleans(),
                                   compute_right_eigenvectors=st.booleans())
PRIM_CASES["schur"] = _decomposition("schur", "f", True,
                                     compute_schur_vectors=st.booleans())
PRIM_CASES["hessenberg"] = _decomposition("hessenberg", "f", True)



# Complex numbers and fft (funcgrad/primitives/elementwise.py, fft.py).
def _complex_fill(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


for _name in ("real", "imag"):
    PRIM_CASES[_name] = _unary_case(_name, _complex_fill)
PRIM_CASES["conj"] = _unary_case("conj", _complex_fill, input_dtype=np.dtype("complex128"))


def _complex(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    y_shape = () if draw(st.booleans()) else shape  # a rank-0 operand may broadcast
    return (lambda x, y: PRIMITIVES["complex"].bind(x, y)), [Arg(shape), Arg(y_shape)]


def _fft(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    from funcgrad.primitives.fft import FftType  # noqa: PLC0415

    typ = FftType(draw(st.integers(0, 3)))
    lengths = tuple(draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 2))))
    lead = _shape(draw, 0, 1, nonempty=True)
    if typ == FftType.IRFFT:
        arg = Arg(lead + lengths[:-1] + (lengths[-1] // 2 + 1,), _complex_fill)
    else:
        arg = Arg(lead + lengths, "f" if typ == FftType.RFFT else _complex_fill)
    return (lambda x: PRIMITIVES["fft"].bind(x, fft_type=typ, fft_lengths=lengths)), [arg]


PRIM_CASES["complex"] = _complex
PRIM_CASES["fft"] = _fft


# Call-like primitives, reached through the public wrappers. Two outputs each, so
# out_axes is drawn as a tuple.


def _custom_jvp_fn() -> Callable[..., Any]:
    @fg.custom_jvp
    def f(x, y):
        return fnp.sin(x) * y, x - y

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), (fnp.cos(x) * y * tx + fnp.sin(x) * ty, tx - ty)

    return f


def _custom_vjp_fn() -> Callable[..., Any]:
    @fg.custom_vjp
    def f(x, y):
        return fnp.sin(x) * y, x - y

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, cts):
        x, y = res
        a, b = cts
        return fnp.cos(x) * y * a + b, fnp.sin(x) * a - b

    f.defvjp(fwd, bwd)
    return f


def _call_case(make: Callable[[], Callable[..., Any]]) -> Case:
    def case(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
        shape = _shape(draw)
        return make(), [Arg(shape), Arg(shape)]

    return case


PRIM_CASES["custom_jvp_call"] = _call_case(_custom_jvp_fn)
PRIM_CASES["custom_vjp_call"] = _call_case(_custom_vjp_fn)
PRIM_CASES["checkpoint"] = _call_case(
    lambda: fg.checkpoint(lambda x, y: (fnp.sin(x) * y, x - y)))
PRIM_CASES["custom_vmap_call"] = _call_case(  # its rule is the loop, run by lax.map
    lambda: fg.custom_batching.sequential_vmap(lambda x, y: (fnp.sin(x) * y, x - y)))
PRIM_CASES["linear_solve"] = _call_case(lambda: lambda x, y: lax.custom_linear_solve(
    lambda v: v * (2.0 + x * x), y, lambda mv, r: r / (2.0 + x * x), symmetric=True))
PRIM_CASES["jit"] = _call_case(lambda: fg.jit(lambda x, y: (fnp.sin(x) * y, x - y)))


# Control flow (funcgrad.lax.cond/switch, while_loop, fori_loop, scan): predicates, trip
# counts and loop constants may each be batched.


def _cond(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw)
    if draw(st.booleans()):
        def fn(p, x, y):
            return fg.lax.cond(p, lambda a, b: (fnp.sin(a) * b, a),
                               lambda a, b: (a - b, b * 2.0), x, y)

        return fn, [Arg((), "b"), Arg(shape), Arg(shape)]

    def fn_switch(i, x, y):
        return fg.lax.switch(i, [lambda a, b: (a * b, a), lambda a, b: (a - b, b),
                                 lambda a, b: (fnp.cos(a), b + 1.0)], x, y)

    # Indices past the end are clamped; negative ones: see test_switch_negative_index.
    return fn_switch, [Arg((), ints(0, 5)), Arg(shape), Arg(shape)]


def _while(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, hi=2)
    if draw(st.booleans()):
        def fn(x, n, c):  # trip count (n) and body constant (c) may be batched
            def cond_fun(state):
                i, v = state
                return (i < n) & (fnp.sum(v) < 20.0)  # a data-dependent stop as well

            init = (np.asarray(0, np.int64), x)
            return fg.lax.while_loop(cond_fun, lambda st_: (st_[0] + 1, st_[1] * c + 0.5), init)

        return fn, [Arg(shape), Arg((), ints(0, 5)), Arg((), "p")]

    def fn_fori(lo, hi, x):  # traced bounds: fori_loop stages a while loop
        return fg.lax.fori_loop(lo, hi, lambda i, v: v * 1.5 + fnp.astype(i, np.float64), x)

    return fn_fori, [Arg((), ints(-1, 2)), Arg((), ints(0, 4)), Arg(shape)]


def _scan(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    shape = _shape(draw, hi=2)
    length = draw(st.integers(0, 3))
    reverse = draw(st.booleans())
    if draw(st.booleans()):
        def fn(c0, xs, w):
            return fg.lax.scan(lambda c, x: (c * w + x, fnp.sin(c) * x), c0, xs,
                               reverse=reverse)

        return fn, [Arg(shape), Arg((length, *shape)), Arg(shape)]

    def fn_fori(x, w):  # Python int bounds: fori_loop stages a scan
        return fg.lax.fori_loop(0, max(length, 1), lambda i, v: fnp.tanh(v * w) + i, x)

    return fn_fori, [Arg(shape), Arg(shape)]


def _debug_callback(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    def fn(x):
        fg.debug.callback(lambda v: None, x)
        return fnp.sin(x)

    return fn, [Arg(_shape(draw))]


def _pure_callback(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    method = draw(st.sampled_from(["sequential", "expand_dims", "broadcast_all"]))

    def fn(x, y):
        return fg.pure_callback(lambda a, b: np.sin(np.asarray(a)) * np.asarray(b),
                                fg.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                vmap_method=method)

    shape = _shape(draw)
    return fn, [Arg(shape), Arg(shape)]


def _io_callback(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    def fn(x, y):
        return fg.experimental.io_callback(
            lambda a, b: np.sin(np.asarray(a)) * np.asarray(b),
            fg.ShapeDtypeStruct(x.shape, x.dtype), x, y)

    shape = _shape(draw)
    return fn, [Arg(shape), Arg(shape)]


def _check(draw: Any) -> tuple[Callable[..., Any], list[Arg]]:
    from funcgrad.experimental import checkify  # noqa: PLC0415

    def inner(v):
        checkify.check(fnp.sum(v) > 0, "sum of {} not positive", v)
        return fnp.sin(v)

    def fn(x):
        # A check that passes (batched, then raised eagerly one member at a time) and a
        # debug check that does nothing; the checkified inner call gives its error's arrays
        # (not the codes: each trace numbers its checks anew).
        checkify.check(fnp.logical_not(fnp.any(fnp.isnan(x))), "nan in {}", x)
        checkify.debug_check(fnp.sum(x) > 0, "ignored {}", x)
        err, out = checkify.checkify(inner, errors=checkify.all_checks)(x)
        effects = err.effects()
        return out, [err._pred[e] for e in effects], [err._payload[e] for e in effects]

    return fn, [Arg(_shape(draw))]


PRIM_CASES["check"] = _check
PRIM_CASES["debug_callback"] = _debug_callback
PRIM_CASES["pure_callback"] = _pure_callback
PRIM_CASES["io_callback"] = _io_callback
PRIM_CASES["cond"] = _cond
PRIM_CASES["while"] = _while
PRIM_CASES["scan"] = _scan


def _binds(fn: Callable[..., Any], args: list[Arg]) -> set[str]:
    """Names of the primitives ``fn`` binds on one batch member (through make_jaxpr)."""
    rng = np.random.default_rng(0)
    jaxpr = fg.make_jaxpr(fn)(*[_fill(rng, a) for a in args])
    return {e.primitive.name for e in jaxpr.jaxpr.eqns}


# Collectives run only inside a map naming their axis: tests/transforms/test_collectives.py
# checks them (named and other axes, nested maps, jit/cond/loops inside) against JAX.
NAMED_AXIS = set(COLLECTIVE_NAMES)


def test_every_primitive_has_a_batching_case() -> None:
    assert set(PRIM_CASES) | NAMED_AXIS == set(PRIMITIVES), (
        f"primitives without a vmap case: "
        f"{sorted(set(PRIMITIVES) - set(PRIM_CASES) - NAMED_AXIS)}; "
        f"cases for unknown primitives: {sorted(set(PRIM_CASES) - set(PRIMITIVES))}")
    for name, prim in PRIMITIVES.items():
        # iota takes no operands, so vmap never needs its batch rule.
        assert prim.batch is not None or name == "iota", f"{name} has no batch rule"


@pytest.mark.parametrize("name", sorted(PRIM_CASES))
def test_case_binds_its_primitive(name: str) -> None:
    """Each case really exercises the primitive it is named after."""
    @given(st.data())
    @settings(max_examples=1, deadline=None)
    def one(data: Any) -> None:
        fn, args = PRIM_CASES[name](data.draw)
        assert name in _binds(fn, args)

    one()


@pytest.mark.parametrize("name", sorted(PRIM_CASES))
@SETTINGS
@given(data=st.data())
def test_primitive_vmap_matches_loop(name: str, data: Any) -> None:
    fn, args = PRIM_CASES[name](data.draw)
    check_vmap(data.draw, fn, args)


@pytest.mark.parametrize("name", sorted(PRIM_CASES))
@FEW
@given(data=st.data())
def test_primitive_vmap_matches_loop_with_empty_axes(name: str, data: Any) -> None:
    fn, args = PRIM_CASES[name](EmptyOk(data.draw))
    check_vmap(data.draw, fn, args)


# ---------------------------------------------------------------- hard cases

_PATTERNS_2 = [(True, False), (False, True), (True, True)]
_PATTERNS_3 = [p for p in ((a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)) if any(p)]


@pytest.mark.parametrize("batched", _PATTERNS_2, ids=["operand", "indices", "both"])
@FEW
@given(data=st.data())
def test_gather_batched_operand_indices_both(batched: tuple[bool, ...], data: Any) -> None:
    fn, args = _gather(data.draw)
    check_vmap(data.draw, fn, args, batched)


@pytest.mark.parametrize("name", ["scatter_add", "scatter"])
@pytest.mark.parametrize("batched", _PATTERNS_3, ids=lambda p: "".join("ofu"[i] if b else "-"
                                                                       for i, b in enumerate(p)))
@FEW
@given(data=st.data())
def test_scatter_every_combination(name: str, batched: tuple[int, ...], data: Any) -> None:
    fn, args = _scatter(name)(data.draw)
    check_vmap(data.draw, fn, args, tuple(map(bool, batched)))


@pytest.mark.parametrize("batched_starts", ["none", "some", "all"])
@pytest.mark.parametrize("batched_operand", [True, False])
@FEW
@given(data=st.data())
def test_dynamic_slice_batched_starts(batched_starts: str, batched_operand: bool,
                                      data: Any) -> None:
    fn, args = _dynamic_slice(data.draw)
    n = len(args) - 1
    if batched_starts == "some" and n < 2:
        return
    starts = {"none": [False] * n, "all": [True] * n,
              "some": [i % 2 == 0 for i in range(n)]}[batched_starts]
    if not batched_operand and not any(starts):
        starts = [True] * n
    if not any([batched_operand, *starts]):
        return
    check_vmap(data.draw, fn, args, (batched_operand, *starts))


@pytest.mark.parametrize("batched_starts", ["none", "some", "all"])
@pytest.mark.parametrize("batched_operands", [(True, False), (False, True), (True, True),
                                              (False, False)], ids=["op", "upd", "both", "none"])
@FEW
@given(data=st.data())
def test_dynamic_update_slice_batched_starts(batched_starts: str,
                                             batched_operands: tuple[bool, bool],
                                             data: Any) -> None:
    fn, args = _dynamic_update_slice(data.draw)
    n = len(args) - 2
    starts = {"none": [False] * n, "all": [True] * n,
              "some": [i % 2 == 0 for i in range(n)]}[batched_starts]
    if not any([*batched_operands, *starts]):
        return
    check_vmap(data.draw, fn, args, (*batched_operands, *starts))


@pytest.mark.parametrize("n_batch", [0, 1], ids=["no-batch-dims", "existing-batch-dim"])
@pytest.mark.parametrize("batched", _PATTERNS_2, ids=["lhs", "rhs", "both"])
@FEW
@given(data=st.data())
def test_dot_general_lhs_rhs_both(n_batch: int, batched: tuple[bool, ...], data: Any) -> None:
    fn, args = _dot_general(data.draw, n_batch)
    check_vmap(data.draw, fn, args, batched)


@pytest.mark.parametrize("batched", _PATTERNS_2, ids=["operand", "value", "both"])
@FEW
@given(data=st.data())
def test_pad_batched_padding_value(batched: tuple[bool, ...], data: Any) -> None:
    fn, args = _pad(data.draw)
    check_vmap(data.draw, fn, args, batched)


@pytest.mark.parametrize("batched", [p for p in _PATTERNS_3 if not p[2]] + [(1, 1, 1)],
                         ids=lambda p: "".join("ptf"[i] if b else "-" for i, b in enumerate(p)))
@FEW
@given(data=st.data())
def test_select_with_rank0_unbatched_operand(batched: tuple[int, ...], data: Any) -> None:
    fn, args = _select(data.draw, mode="false0")
    check_vmap(data.draw, fn, args, tuple(map(bool, batched)))


@pytest.mark.parametrize("name", sorted(_BINARY))
@pytest.mark.parametrize("mode", ["x0", "y0"])
@FEW
@given(data=st.data())
def test_binary_rank0_batched_vs_shaped_unbatched(name: str, mode: str, data: Any) -> None:
    fn, args = _binary_case(name, _BINARY[name], mode)(data.draw)
    batched = (True, False) if mode == "x0" else (False, True)
    check_vmap(data.draw, fn, args, batched)


# ============================================== part b: the funcgrad.numpy column

F23, F3, F0 = Arg((2, 3)), Arg((3,)), Arg(())


def _perm_prefix(n: int, k: int) -> Callable[..., np.ndarray]:
    return lambda rng, shape: rng.permutation(n)[:k].reshape(shape)


_UNARY_NP = {
    "abs": "f", "absolute": "f", "arccos": "u", "arccosh": "g", "arcsin": "u", "arcsinh": "f",
    "arctan": "f", "arctanh": "u", "around": "f", "cbrt": "f", "ceil": "f", "cos": "f",
    "cosh": "f", "deg2rad": "f", "degrees": "f", "exp": "f", "exp2": "f", "expm1": "f",
    "floor": "f", "isfinite": with_nonfinite, "isinf": with_nonfinite,
    "isnan": with_nonfinite, "log": "p", "log10": "p", "log1p": "p", "log2": "p",
    "nan_to_num": with_nonfinite, "negative": "f", "positive": "f", "rad2deg": "f",
    "radians": "f", "reciprocal": "p", "rint": "f", "round": "f", "sign": "d", "sin": "f",
    "sinc": "d", "sinh": "f", "sqrt": "p", "square": "f", "tan": "u", "tanh": "f",
    "trunc": "f", "logical_not": "b", "invert": "i", "bitwise_not": "b",
}
_BINARY_NP = {
    "add": "ff", "subtract": "ff", "multiply": "ff", "divide": "fp", "true_divide": "fp",
    "floor_divide": "fp", "remainder": "fp", "mod": "fp", "power": "pf", "float_power": "pf",
    "maximum": "dd", "minimum": "dd", "arctan2": "ff", "hypot": "ff", "logaddexp": "ff",
    "logaddexp2": "ff", "copysign": "fd", "equal": "dd", "not_equal": "dd", "less": "dd",
    "less_equal": "dd", "greater": "dd", "greater_equal": "dd", "bitwise_and": "ii",
    "bitwise_or": "ii", "bitwise_xor": "ii", "logical_and": "bb", "logical_or": "bb",
    "logical_xor": "bb",
}

NP_CASES: list[tuple[str, Callable[..., Any], list[Arg]]] = []
for _name, _kind in _UNARY_NP.items():
    NP_CASES.append((_name, getattr(fnp, _name), [Arg((2, 3), _kind)]))
for _name, (_kx, _ky) in _BINARY_NP.items():
    # Broadcasting on top of the batch axis: (2, 3) with (3,).
    NP_CASES.append((_name, getattr(fnp, _name), [Arg((2, 3), _kx), Arg((3,), _ky)]))
NP_CASES += [
    ("add[rank0 with shaped]", fnp.add, [F0, F23]),
    ("multiply[python scalar]", lambda x: fnp.multiply(x, 2.5), [F23]),
    ("power[int exponent]", lambda x: fnp.power(x, 3), [F23]),
    ("floor_divide[int]", fnp.floor_divide, [Arg((2, 3), "i"), Arg((3,), ints(1, 4))]),
    ("remainder[int]", fnp.remainder, [Arg((2, 3), "i"), Arg((3,), ints(1, 4))]),
    ("round[decimals]", lambda x: fnp.round(x, 2), [F23]),
    ("where", fnp.where, [Arg((2, 3), "b"), F23, F0]),
    ("where[scalar branch]", lambda c, x: fnp.where(c, x, 0.0), [Arg((3,), "b"), F23]),
    ("clip", fnp.clip, [F23, Arg((), lambda r, s: -0.5 - r.random(s)), Arg((3,), "p")]),
    ("clip[constants]", lambda x: fnp.clip(x, -0.5, 0.5), [F23]),
    ("astype", lambda x: fnp.astype(x, np.int32), [Arg((2, 3), "d")]),
    # reductions
    ("sum", fnp.sum, [F23]),
    ("sum[axis=1]", lambda x: fnp.sum(x, axis=1), [F23]),
    ("sum[axis=(0, 2), keepdims]", lambda x: fnp.sum(x, axis=(0, 2), keepdims=True),
     [Arg((2, 3, 2))]),
    ("prod[axis=0]", lambda x: fnp.prod(x, axis=0), [F23]),
    ("mean[axis=-1]", lambda x: fnp.mean(x, axis=-1), [F23]),
    ("var[ddof=1]", lambda x: fnp.var(x, axis=1, ddof=1), [F23]),
    ("std", fnp.std, [F23]),
    ("max[axis=1]", lambda x: fnp.max(x, axis=1), [Arg((2, 3), "d")]),
    ("min", fnp.min, [Arg((2, 3), "d")]),
    ("amax[axis=0, keepdims]", lambda x: fnp.amax(x, axis=0, keepdims=True), [F23]),
    ("amin[axis=-1]", lambda x: fnp.amin(x, axis=-1), [F23]),
    ("ptp[axis=1]", lambda x: fnp.ptp(x, axis=1), [F23]),
    ("argmax[axis=1]", lambda x: fnp.argmax(x, axis=1), [Arg((2, 3), "d")]),
    ("argmax", fnp.argmax, [F23]),
    ("argmin[axis=0]", lambda x: fnp.argmin(x, axis=0), [Arg((2, 3), "d")]),
    ("all[axis=1]", lambda x: fnp.all(x, axis=1), [Arg((2, 3), "b")]),
    ("any", fnp.any, [Arg((2, 3), "b")]),
    ("count_nonzero[axis=0]", lambda x: fnp.count_nonzero(x, axis=0), [Arg((2, 3), "i")]),
    ("logsumexp[axis=1]", lambda x: fnp.logsumexp(x, axis=1), [F23]),
    ("cumsum[axis=1]", lambda x: fnp.cumsum(x, axis=1), [F23]),
    ("cumsum", fnp.cumsum, [F23]),
    ("sort", fnp.sort, [F23]),
    ("sort[axis=0]", lambda x: fnp.sort(x, axis=0), [F23]),
    ("argsort", fnp.argsort, [F23]),
    ("average[weights]", lambda x, w: fnp.average(x, axis=1, weights=w),
     [F23, Arg((2, 3), "p")]),
    # shape manipulation
    ("reshape", lambda x: fnp.reshape(x, (3, 2)), [F23]),
    ("reshape[-1]", lambda x: fnp.reshape(x, (-1,)), [F23]),
    ("ravel", fnp.ravel, [F23]),
    ("transpose", fnp.transpose, [Arg((2, 3, 2))]),
    ("transpose[axes]", lambda x: fnp.transpose(x, (1, 0, 2)), [Arg((2, 3, 2))]),
    ("swapaxes", lambda x: fnp.swapaxes(x, 0, -1), [Arg((2, 3, 2))]),
    ("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), [Arg((2, 3, 2))]),
    ("squeeze[axis]", lambda x: fnp.squeeze(x, axis=1), [Arg((2, 1, 3))]),
    ("squeeze", fnp.squeeze, [Arg((1, 3, 1))]),
    ("expand_dims", lambda x: fnp.expand_dims(x, -1), [F23]),
    ("broadcast_to", lambda x: fnp.broadcast_to(x, (2, 3)), [F3]),
    ("broadcast_arrays", fnp.broadcast_arrays, [Arg((2, 1)), F3]),
    ("atleast_1d", fnp.atleast_1d, [F0]),
    ("atleast_2d", fnp.atleast_2d, [F3]),
    ("atleast_3d", fnp.atleast_3d, [F23]),
    ("flip[axis=1]", lambda x: fnp.flip(x, axis=1), [F23]),
    ("flip", fnp.flip, [F23]),
    ("fliplr", fnp.fliplr, [F23]),
    ("flipud", fnp.flipud, [F23]),
    ("roll[axis=1]", lambda x: fnp.roll(x, 1, axis=1), [F23]),
    ("roll", lambda x: fnp.roll(x, -2), [F23]),
    ("concatenate[axis=1]", lambda x, y: fnp.concatenate([x, y], axis=1), [F23, Arg((2, 2))]),
    ("concatenate[axis=None]", lambda x, y: fnp.concatenate([x, y], axis=None), [F23, F3]),
    ("stack[axis=-1]", lambda x, y: fnp.stack([x, y], axis=-1), [F23, F23]),
    ("hstack", lambda x, y: fnp.hstack([x, y]), [F3, Arg((2,))]),
    ("vstack", lambda x, y: fnp.vstack([x, y]), [F23, F3]),
    ("row_stack", lambda x, y: fnp.row_stack([x, y]), [F23, F3]),
    ("dstack", lambda x, y: fnp.dstack([x, y]), [F23, F23]),
    ("column_stack", lambda x, y: fnp.column_stack([x, y]), [F3, Arg((3, 2))]),
    ("split", lambda x: fnp.split(x, 2), [Arg((4, 3))]),
    ("array_split[axis=1]", lambda x: fnp.array_split(x, 2, axis=1), [F23]),
    ("tile", lambda x: fnp.tile(x, (2, 1)), [F23]),
    ("repeat[axis=1]", lambda x: fnp.repeat(x, 2, axis=1), [F23]),
    ("repeat", lambda x: fnp.repeat(x, 2), [F23]),
    ("pad[traced constant]", lambda x, v: fnp.pad(x, ((1, 0), (0, 2)), constant_values=v),
     [F23, F0]),
    ("pad[edge]", lambda x: fnp.pad(x, 1, mode="edge"), [F23]),
    ("diff", fnp.diff, [Arg((2, 4))]),
    ("diff[n=2, axis=0]", lambda x: fnp.diff(x, n=2, axis=0), [Arg((4, 2))]),
    # products and matrix helpers
    ("matmul", fnp.matmul, [F23, Arg((3, 4))]),
    ("matmul[vector @ matrix]", fnp.matmul, [F3, Arg((3, 4))]),
    ("matmul[broadcast batch]", fnp.matmul, [Arg((2, 2, 3)), Arg((1, 3, 4))]),
    ("matmul[matrix @ stack]", fnp.matmul, [F23, Arg((2, 3, 2))]),
    ("dot", fnp.dot, [F23, F3]),
    ("dot[scalar]", fnp.dot, [F0, F23]),
    ("vdot", fnp.vdot, [F23, F23]),
    ("inner", fnp.inner, [F23, Arg((4, 3))]),
    ("outer", fnp.outer, [F3, Arg((2,))]),
    ("tensordot", lambda a, b: fnp.tensordot(a, b, axes=1), [F23, Arg((3, 2))]),
    ("tensordot[pairs]", lambda a, b: fnp.tensordot(a, b, axes=([0], [1])), [F23, Arg((4, 2))]),
    ("einsum[ij,jk->ik]", lambda a, b: fnp.einsum("ij,jk->ik", a, b), [F23, Arg((3, 4))]),
    ("einsum[ii->i]", lambda a: fnp.einsum("ii->i", a), [Arg((3, 3))]),
    ("einsum[...i,i->...]", lambda a, b: fnp.einsum("...i,i->...", a, b), [F23, F3]),
    ("diagonal", fnp.diagonal, [Arg((3, 3))]),
    ("diagonal[offset]", lambda a: fnp.diagonal(a, offset=1), [Arg((3, 4))]),
    ("trace", fnp.trace, [Arg((3, 3))]),
    ("diag[vector]", fnp.diag, [F3]),
    ("diag[matrix, k=1]", lambda a: fnp.diag(a, k=1), [Arg((3, 3))]),
    ("tril", fnp.tril, [Arg((3, 3))]),
    ("triu[k=-1]", lambda a: fnp.triu(a, k=-1), [Arg((3, 4))]),
    ("kron", fnp.kron, [Arg((2, 2)), F23]),
    # indexing, with traced (batched or not) indices and values
    ("getitem[basic]", lambda x: fnp.getitem(x, (slice(1, None), slice(None, None, -1))),
     [Arg((3, 3))]),
    ("getitem[int, newaxis]", lambda x: x[None, ..., 1], [F23]),
    ("getitem[traced index]", fnp.getitem, [Arg((4, 2)), Arg((3,), ints(-4, 4))]),
    ("getitem[traced index, axis 1]", lambda x, i: fnp.getitem(x, (slice(None), i)),
     [F23, Arg((2,), ints(0, 3))]),
    ("getitem[two traced indices]", lambda x, i, j: fnp.getitem(x, (i, j)),
     [F23, Arg((2,), ints(0, 2)), Arg((2,), ints(0, 3))]),
    ("take", lambda x, i: fnp.take(x, i, axis=1), [F23, Arg((4,), ints(0, 3))]),
    ("take[flat]", fnp.take, [F23, Arg((2, 2), ints(0, 6))]),
    ("take_along_axis", lambda x, i: fnp.take_along_axis(x, i, axis=1),
     [F23, Arg((2, 2), ints(0, 3))]),
    ("index_update", fnp.index_update, [Arg((5,)), Arg((2,), _perm_prefix(5, 2)), F0]),
    ("index_update[slice]", lambda x, v: fnp.index_update(x, (slice(None), 1), v),
     [F23, Arg((2,))]),
    ("index_add", fnp.index_add, [Arg((4,)), Arg((3,), ints(0, 4)), F3]),
    ("at[].set", lambda x, i, v: fnp.at(x)[i].set(v),
     [Arg((4, 2)), Arg((2,), _perm_prefix(4, 2)), Arg((2,))]),
    ("at[].add", lambda x, v: fnp.at(x)[1:].add(v), [F23, F3]),
    ("at[].multiply", lambda x, v: fnp.at(x)[0].multiply(v), [F23, F0]),
    ("at[].get", lambda x, i: fnp.at(x)[i].get(), [F3, Arg((), ints(0, 3))]),
    # creation, shape queries and conversion, each through a representative call
    ("zeros", lambda x: x + fnp.zeros(x.shape), [F23]),
    ("ones", lambda x: x * fnp.ones((2, 3)), [F23]),
    ("empty", lambda x: x + fnp.empty(3), [F23]),
    ("full[traced fill]", lambda v: fnp.full((2, 3), v), [F0]),
    ("full_like[traced fill]", lambda x, v: fnp.full_like(x, v), [F23, F0]),
    ("zeros_like", lambda x: x + fnp.zeros_like(x), [F23]),
    ("ones_like", lambda x: x * fnp.ones_like(x), [F23]),
    ("empty_like", lambda x: x + fnp.empty_like(x), [F23]),
    ("arange", lambda x: x * fnp.arange(3), [F23]),
    ("linspace[traced ends]", lambda a, b: fnp.linspace(a, b, 4), [F0, F0]),
    ("eye", lambda x: fnp.eye(3) @ x, [Arg((3, 2))]),
    ("identity", lambda x: x @ fnp.identity(3), [F23]),
    ("tri", lambda x: fnp.tri(3) * x, [Arg((3, 3))]),
    ("meshgrid", fnp.meshgrid, [F3, Arg((2,))]),
    ("array[of tracers]", lambda x, y: fnp.array([x, y]), [F3, F3]),
    ("array", lambda x: fnp.array(x, dtype=np.float32), [F23]),
    ("asarray", fnp.asarray, [F23]),
    ("copy", fnp.copy, [F23]),
    ("cast", lambda x: fnp.cast(x, np.dtype(np.float32)), [F23]),
    ("promote_args", lambda x, y: fnp.promote_args(x, y),
     [Arg((2, 3), "f", np.float32), Arg((3,), "i")]),
    ("get_aval", lambda x: fnp.reshape(x, fnp.get_aval(x).shape[::-1]), [F23]),
    ("shape", lambda x: x + fnp.zeros(fnp.shape(x)), [F23]),
    ("ndim", lambda x: x * fnp.ndim(x), [F23]),
    ("size", lambda x: fnp.reshape(x, (fnp.size(x),)), [F23]),
    ("result_type", lambda x: fnp.astype(x, fnp.result_type(x, np.float32(1.0))),
     [Arg((2, 3), "f", np.float32)]),
    ("promote_types", lambda x: fnp.astype(x, fnp.promote_types(x.dtype, np.float32)),
     [Arg((2, 3), "f", np.float32)]),
    ("dtype", lambda x: fnp.astype(x, fnp.dtype("float32")), [F23]),
    ("conj", fnp.conj, [F23]),
    ("conjugate", fnp.conjugate, [F23]),
    ("real", fnp.real, [F23]),
    ("imag", lambda x: fnp.imag(x) + x, [F23]),
    ("angle", fnp.angle, [Arg((2, 3), _complex_fill)]),
    ("divmod", lambda x, y: fnp.divmod(x, y), [F23, Arg((2, 3), "p")]),
    ("fmod", fnp.fmod, [F23, Arg((2, 3), "p")]),
]


# jax.numpy's remaining names (issue 11): statistics, elementwise extras, set operations
# (size= where the result's length depends on values), numeric helpers, index tricks,
# polynomials, windows, vectorize/ufunc and the array extras, each through one call.
_UNARY_NP_EXTRA = {
    "acos": "u", "acosh": "g", "asin": "u", "asinh": "f", "atan": "f", "atanh": "u",
    "fabs": "f", "i0": "f", "signbit": "d", "spacing": "f", "isposinf": with_nonfinite,
    "isneginf": with_nonfinite, "iscomplex": "f", "isreal": "f", "bitwise_invert": "i",
    "bitwise_count": "i", "nancumsum": with_nonfinite, "nancumprod": with_nonfinite,
    "cumprod": "f", "sort_complex": "f", "unwrap": "f", "ediff1d": "f",
}
_BINARY_NP_EXTRA = {
    "atan2": "ff", "pow": "pf", "fmax": "dd", "fmin": "dd", "nextafter": "ff",
    "heaviside": "df", "isclose": "dd",
}
for _name, _kind in _UNARY_NP_EXTRA.items():
    NP_CASES.append((_name, getattr(fnp, _name), [Arg((2, 3), _kind)]))
for _name, (_kx, _ky) in _BINARY_NP_EXTRA.items():
    NP_CASES.append((_name, getattr(fnp, _name), [Arg((2, 3), _kx), Arg((3,), _ky)]))
_I23, _SORTED3 = Arg((2, 3), "i"), Arg((3,), lambda r, s: np.sort(r.standard_normal(s)))
def _under_printoptions(x: Any) -> Any:
    with fnp.printoptions(precision=3):
        return x * 2.0


# Files for the readers' rows (a read is a constant of the traced function).
_IO_DIR = pathlib.Path(tempfile.mkdtemp())
_ONES_FILE, _ONES_NPY = str(_IO_DIR / "ones.bin"), str(_IO_DIR / "ones.npy")
np.ones(3).tofile(_ONES_FILE)
np.save(_ONES_NPY, np.ones(3))
NP_CASES += [
    ("gcd", fnp.gcd, [_I23, Arg((3,), "i")]),
    ("lcm", fnp.lcm, [_I23, Arg((3,), "i")]),
    ("left_shift", fnp.left_shift, [_I23, Arg((3,), ints(0, 4))]),
    ("bitwise_left_shift", fnp.bitwise_left_shift, [_I23, Arg((3,), ints(0, 4))]),
    ("right_shift", fnp.right_shift, [_I23, Arg((3,), ints(0, 4))]),
    ("bitwise_right_shift", fnp.bitwise_right_shift, [_I23, Arg((3,), ints(0, 4))]),
    ("ldexp", fnp.ldexp, [F23, Arg((3,), "i")]),
    ("frexp", fnp.frexp, [F23]),
    ("modf", fnp.modf, [F23]),
    ("allclose", fnp.allclose, [Arg((2, 3), "d"), Arg((3,), "d")]),
    ("array_equal", fnp.array_equal, [Arg((2, 3), "d"), Arg((2, 3), "d")]),
    ("array_equiv", fnp.array_equiv, [Arg((2, 3), "d"), Arg((3,), "d")]),
    ("concat", lambda x, y: fnp.concat([x, y], axis=1), [F23, Arg((2, 2))]),
    ("permute_dims", lambda x: fnp.permute_dims(x, (2, 0, 1)), [Arg((2, 3, 2))]),
    ("cumulative_sum", lambda x: fnp.cumulative_sum(x, axis=1, include_initial=True), [F23]),
    ("cumulative_prod", lambda x: fnp.cumulative_prod(x, axis=0), [F23]),
    ("nansum", lambda x: fnp.nansum(x, axis=1), [Arg((2, 3), with_nonfinite)]),
    ("nanprod", fnp.nanprod, [Arg((2, 3), with_nonfinite)]),
    ("nanmax", lambda x: fnp.nanmax(x, axis=0), [Arg((2, 3), with_nonfinite)]),
    ("nanmin", fnp.nanmin, [Arg((2, 3), with_nonfinite)]),
    ("nanargmax", lambda x: fnp.nanargmax(x, axis=1), [F23]),
    ("nanargmin", fnp.nanargmin, [F23]),
    ("nanmean", lambda x: fnp.nanmean(x, axis=0), [Arg((2, 3), with_nonfinite)]),
    ("nanvar", lambda x: fnp.nanvar(x, axis=1, ddof=1), [Arg((2, 3), with_nonfinite)]),
    ("nanstd", fnp.nanstd, [Arg((2, 3), with_nonfinite)]),
    ("median", lambda x: fnp.median(x, axis=1), [F23]),
    ("nanmedian", fnp.nanmedian, [Arg((2, 3), with_nonfinite)]),
    ("quantile", lambda x, q: fnp.quantile(x, q, axis=0), [F23, Arg((), "u")]),
    ("nanquantile", lambda x: fnp.nanquantile(x, 0.3, axis=1), [Arg((2, 3), with_nonfinite)]),
    ("percentile", lambda x: fnp.percentile(x, 40.0), [F23]),
    ("nanpercentile", lambda x: fnp.nanpercentile(x, 70.0, axis=0),
     [Arg((2, 3), with_nonfinite)]),
    ("cov", fnp.cov, [Arg((2, 4))]),
    ("corrcoef", fnp.corrcoef, [Arg((2, 4))]),
    # set operations: static sizes under vmap
    ("nonzero", lambda x: fnp.nonzero(x, size=3, fill_value=-1), [Arg((4,), "b")]),
    ("flatnonzero", lambda x: fnp.flatnonzero(x, size=3), [Arg((2, 2), "b")]),
    ("argwhere", lambda x: fnp.argwhere(x, size=2), [Arg((2, 2), "b")]),
    ("compress", lambda c, x: fnp.compress(c, x, size=2, axis=0), [Arg((3,), "b"), F3]),
    ("extract", lambda c, x: fnp.extract(c, x, size=2), [Arg((3,), "b"), F3]),
    ("unique", lambda x: fnp.unique(x, size=4, fill_value=0), [Arg((4,), "i")]),
    ("unique_values", lambda x: fnp.unique_values(x, size=3), [Arg((4,), "i")]),
    ("unique_counts", lambda x: fnp.unique_counts(x, size=3), [Arg((4,), "i")]),
    ("unique_inverse", lambda x: fnp.unique_inverse(x, size=3), [Arg((4,), "i")]),
    ("unique_all", lambda x: fnp.unique_all(x, size=3), [Arg((4,), "i")]),
    ("isin", fnp.isin, [_I23, Arg((4,), "i")]),
    ("union1d", lambda x, y: fnp.union1d(x, y, size=5), [Arg((3,), "i"), Arg((2,), "i")]),
    ("setdiff1d", lambda x, y: fnp.setdiff1d(x, y, size=3), [Arg((3,), "i"), Arg((2,), "i")]),
    ("intersect1d", lambda x, y: fnp.intersect1d(x, y, size=2),
     [Arg((3,), "i"), Arg((2,), "i")]),
    ("setxor1d", lambda x, y: fnp.setxor1d(x, y, size=5), [Arg((3,), "i"), Arg((2,), "i")]),
    ("lexsort", lambda x, y: fnp.lexsort((x, y)), [Arg((4,), "i"), Arg((4,), "i")]),
    ("partition", lambda x: fnp.sort(fnp.partition(x, 1)), [F23]),
    ("argpartition", lambda x: fnp.argpartition(x, 0)[..., 0], [Arg((2, 3), "f")]),
    ("sort_complex[complex]", fnp.sort_complex, [Arg((3,), _complex_fill)]),
    # trim_zeros' length depends on the values (not batchable, in JAX neither): a constant.
    ("trim_zeros", lambda x: x + fnp.sum(fnp.trim_zeros(np.array([0.0, 1.0, 2.0, 0.0]))),
     [F23]),
    # numeric helpers
    ("searchsorted", fnp.searchsorted, [_SORTED3, F23]),
    ("digitize", fnp.digitize, [F23, _SORTED3]),
    ("bincount", lambda x: fnp.bincount(x, length=5), [Arg((4,), ints(0, 5))]),
    ("histogram", lambda x: fnp.histogram(x, bins=3, range=(-2.0, 2.0)), [Arg((5,))]),
    ("histogram_bin_edges", lambda x: fnp.histogram_bin_edges(x, bins=3), [Arg((5,))]),
    ("histogram2d", lambda x, y: fnp.histogram2d(x, y, bins=2, range=((-2, 2), (-2, 2))),
     [Arg((4,)), Arg((4,))]),
    ("histogramdd", lambda x: fnp.histogramdd(x, bins=2, range=((-2, 2), (-2, 2))),
     [Arg((4, 2))]),
    ("interp", fnp.interp, [F23, _SORTED3, F3]),
    ("convolve", fnp.convolve, [Arg((4,)), Arg((2,))]),
    ("correlate", lambda a, v: fnp.correlate(a, v, mode="same"), [Arg((4,)), Arg((2,))]),
    ("gradient", lambda x: fnp.gradient(x, axis=1), [F23]),
    ("trapezoid", lambda y: fnp.trapezoid(y, dx=0.5), [F23]),
    # index tricks
    ("ix_", lambda i, j: fnp.ix_(i, j), [Arg((2,), ints(0, 3)), Arg((3,), ints(0, 3))]),
    ("indices", lambda x: x + fnp.indices((2, 3))[0], [F23]),
    ("diag_indices", lambda x: x[fnp.diag_indices(3)], [Arg((3, 3))]),
    ("diag_indices_from", lambda x: x[fnp.diag_indices_from(x)], [Arg((3, 3))]),
    ("tril_indices", lambda x: x[fnp.tril_indices(3)], [Arg((3, 3))]),
    ("triu_indices", lambda x: x[fnp.triu_indices(3, 1)], [Arg((3, 3))]),
    ("tril_indices_from", lambda x: x[fnp.tril_indices_from(x)], [Arg((3, 3))]),
    ("triu_indices_from", lambda x: x[fnp.triu_indices_from(x)], [Arg((3, 3))]),
    ("mask_indices", lambda x: x[fnp.mask_indices(3, fnp.triu)], [Arg((3, 3))]),
    ("ravel_multi_index", lambda i, j: fnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
     [Arg((2,), ints(0, 3)), Arg((2,), ints(0, 4))]),
    ("unravel_index", lambda i: fnp.unravel_index(i, (3, 4)), [Arg((2,), ints(0, 12))]),
    ("fill_diagonal", lambda x, v: fnp.fill_diagonal(x, v, inplace=False), [Arg((3, 3)), F0]),
    ("diagflat", fnp.diagflat, [F3]),
    ("choose", lambda i, a, b: fnp.choose(i, [a, b], mode="clip"),
     [Arg((3,), ints(0, 2)), F3, F3]),
    ("select", lambda x: fnp.select([x > 0.5, x < -0.5], [x, 2 * x], 0.0), [F23]),
    ("piecewise", lambda x: fnp.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * v]), [F23]),
    ("place", lambda x, c: fnp.place(x, c, fnp.array([7.0]), inplace=False),
     [F3, Arg((3,), "b")]),
    ("put", lambda x, i, v: fnp.put(x, i, v, inplace=False), [F23, Arg((2,), ints(0, 6)), F0]),
    ("put_along_axis", lambda x, i: fnp.put_along_axis(x, i, 1.5, axis=1, inplace=False),
     [F23, Arg((2, 1), ints(0, 3))]),
    ("delete", lambda x: fnp.delete(x, 1, axis=1), [F23]),
    ("insert", lambda x, v: fnp.insert(x, 1, v, axis=1), [F23, F0]),
    ("append", lambda x, v: fnp.append(x, v), [F23, F3]),
    ("block", lambda a, b: fnp.block([[a, b]]), [F23, Arg((2, 2))]),
    # polynomials and windows
    ("polyval", fnp.polyval, [F3, F23]),
    ("polyadd", fnp.polyadd, [F3, Arg((2,))]),
    ("polysub", fnp.polysub, [Arg((2,)), F3]),
    ("polymul", fnp.polymul, [F3, Arg((2,))]),
    ("polydiv", fnp.polydiv, [F3, Arg((2,), "p")]),
    ("polyder", fnp.polyder, [F3]),
    ("polyint", lambda p: fnp.polyint(p, k=1.0), [F3]),
    ("polyfit", lambda y: fnp.polyfit(np.arange(4.0), y, 1), [Arg((4,))]),
    ("poly", fnp.poly, [F3]),
    ("roots", lambda p: fnp.sort_complex(fnp.roots(p, strip_zeros=False)), [Arg((3,), "g")]),
    ("vander", lambda x: fnp.vander(x, 3), [F3]),
    ("bartlett", lambda x: x * fnp.bartlett(3), [F3]),
    ("blackman", lambda x: x * fnp.blackman(3), [F3]),
    ("hamming", lambda x: x * fnp.hamming(3), [F3]),
    ("hanning", lambda x: x * fnp.hanning(3), [F3]),
    ("kaiser", lambda b: fnp.kaiser(4, b), [Arg((), "p")]),
    # vectorize and ufuncs
    ("vectorize", fnp.vectorize(lambda a, b: fnp.sum(a * b), signature="(n),(n)->()"),
     [F23, F3]),
    ("frompyfunc", lambda x: fnp.frompyfunc(lambda a, b: a * b - a, 2, 1).reduce(x), [F23]),
    ("ufunc", lambda x, y: fnp.ufunc(lambda a, b: a - b, 2, 1).outer(x, y), [F3, Arg((2,))]),
    # array extras
    ("hsplit", lambda x: fnp.hsplit(x, [1]), [F23]),
    ("vsplit", lambda x: fnp.vsplit(x, 2), [F23]),
    ("dsplit", lambda x: fnp.dsplit(x, [1]), [Arg((2, 1, 3))]),
    ("resize", lambda x: fnp.resize(x, (4, 2)), [F23]),
    ("rollaxis", lambda x: fnp.rollaxis(x, 2), [Arg((2, 3, 2))]),
    ("rot90", fnp.rot90, [F23]),
    ("unstack", lambda x: fnp.unstack(x, axis=1), [F23]),
    ("matrix_transpose", fnp.matrix_transpose, [F23]),
    ("matvec", fnp.matvec, [F23, F3]),
    ("vecmat", fnp.vecmat, [Arg((2,)), F23]),
    ("vecdot", fnp.vecdot, [F23, F3]),
    ("cross", fnp.cross, [F23, F3]),
    ("apply_along_axis", lambda x: fnp.apply_along_axis(fnp.cumsum, 1, x), [F23]),
    ("apply_over_axes", lambda x: fnp.apply_over_axes(fnp.sum, x, [1]), [F23]),
    ("fromfunction", lambda x: x + fnp.fromfunction(lambda i, j: i - j, (2, 3)), [F23]),
    ("logspace", lambda a, b: fnp.logspace(a, b, 3), [Arg((), "u"), Arg((), "u")]),
    ("geomspace", lambda a: fnp.geomspace(a, 4.0, 3), [Arg((), "p")]),
    ("packbits", lambda x: fnp.packbits(x, axis=-1), [Arg((2, 9), "b")]),
    ("unpackbits", lambda x: fnp.unpackbits(x), [Arg((2,), ints(0, 256), np.uint8)]),
    # dtype and type queries, conversion and I/O: through a representative call
    ("isscalar", lambda x: x * fnp.isscalar(x), [F23]),
    ("iterable", lambda x: x * fnp.iterable(x), [F23]),
    ("iscomplexobj", lambda x: x * fnp.iscomplexobj(x), [F23]),
    ("isrealobj", lambda x: x * fnp.isrealobj(x), [F23]),
    ("isdtype", lambda x: x * fnp.isdtype(x.dtype, "real floating"), [F23]),
    ("issubdtype", lambda x: x * fnp.issubdtype(x.dtype, fnp.floating), [F23]),
    ("can_cast", lambda x: x * fnp.can_cast(x.dtype, np.float64), [F23]),
    ("broadcast_shapes", lambda x: x + fnp.zeros(fnp.broadcast_shapes(x.shape, (1, 3))),
     [F23]),
    ("einsum_path", lambda a, b: fnp.einsum("ij,jk->ik", a, b) * len(
        fnp.einsum_path("ij,jk->ik", a, b)[0]), [F23, Arg((3, 2))]),
    ("frombuffer", lambda x: x + fnp.frombuffer(np.ones(3).tobytes()), [F23]),
    ("fromstring", lambda x: x + fnp.fromstring("1 2 3", sep=" "), [F23]),
    ("fromiter", lambda x: x + fnp.fromiter(range(3), float), [F23]),
    ("fromfile", lambda x: x + fnp.fromfile(_ONES_FILE), [F23]),
    ("load", lambda x: x + fnp.load(_ONES_NPY), [F23]),
    ("array_repr", lambda x: x * len(fnp.array_repr(np.ones(2))), [F23]),
    ("array_str", lambda x: x * len(fnp.array_str(np.ones(2))), [F23]),
    ("get_printoptions", lambda x: x * fnp.get_printoptions()["precision"], [F23]),
    ("set_printoptions", lambda x: x * (fnp.set_printoptions(precision=8) is None), [F23]),
    ("printoptions", lambda x: _under_printoptions(x), [F23]),
    ("save", lambda x: x * (fnp.save(str(_IO_DIR / "s.npy"), np.ones(2)) is None), [F23]),
    ("savez", lambda x: x * (fnp.savez(str(_IO_DIR / "s.npz"), a=np.ones(2)) is None), [F23]),
    ("finfo", lambda x: x * fnp.finfo(x.dtype).eps, [F23]),
    ("iinfo", lambda x: x + fnp.iinfo(np.int8).max, [F23]),
]


# Helpers that funcgrad.numpy may or may not expose as public names; their cases run only
# while they are public.
_OPTIONAL = {"cast", "promote_args", "get_aval"}
NP_CASES = [c for c in NP_CASES
            if c[0].split("[")[0] not in _OPTIONAL or hasattr(fnp, c[0].split("[")[0])]


# Imports of outside memory, not computations (from_dlpack is tested in tests/test_dlpack.py).
_NOT_COMPUTATIONS = {"from_dlpack"}


def _public_functions() -> set[str]:
    return {n for n in dir(fnp) if not n.startswith("_") and n not in _NOT_COMPUTATIONS
            and callable(getattr(fnp, n)) and not inspect.isclass(getattr(fnp, n))
            and not inspect.ismodule(getattr(fnp, n))}


def test_numpy_column_covers_every_public_function() -> None:
    covered = {case_id.split("[")[0] for case_id, _, _ in NP_CASES}
    missing = _public_functions() - covered
    assert not missing, f"funcgrad.numpy functions without a vmap case: {sorted(missing)}"
    ids = [case_id for case_id, _, _ in NP_CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case_id,fn,args", NP_CASES, ids=[c[0] for c in NP_CASES])
@FEW
@given(data=st.data())
def test_numpy_vmap_matches_loop(case_id: str, fn: Callable[..., Any], args: list[Arg],
                                 data: Any) -> None:
    check_vmap(data.draw, fn, args)


def test_python_scalar_output_is_broadcast() -> None:
    x = np.ones((3, 2))
    np.testing.assert_array_equal(fg.vmap(lambda v: fnp.ndim(v))(x), np.full(3, 1))
    np.testing.assert_array_equal(fg.vmap(lambda v: 2.5, out_axes=0)(x), np.full(3, 2.5))
    np.testing.assert_array_equal(fg.vmap(lambda v: (v, 1.0), out_axes=(0, 0))(x)[1],
                                  np.ones(3))


# ===================================================== part c: composition


def _logistic_loss(w: Any, x: Any, y: Any) -> Any:
    return fnp.log1p(fnp.exp(-y * fnp.dot(x, w)))


def _mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    h = fnp.tanh(x @ params["w1"] + params["b1"])
    return fnp.sum((h @ params["w2"] + params["b2"] - y) ** 2)


def _mlp_params(rng: np.random.Generator, d: int, h: int, k: int) -> dict[str, np.ndarray]:
    return {"w1": rng.standard_normal((d, h)) / np.sqrt(d), "b1": 0.1 * rng.standard_normal(h),
            "w2": rng.standard_normal((h, k)) / np.sqrt(h), "b2": np.zeros(k)}


def _tree_allclose(a: Any, b: Any, rtol: float = 1e-9, atol: float = 1e-11) -> None:
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert np.shape(x) == np.shape(y)
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


def _stack_trees(trees: list[Any]) -> Any:
    return fg.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *trees)


@FEW
@given(n=st.integers(1, 6), d=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_per_example_grads_logistic_regression(n: int, d: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, w = rng.standard_normal((n, d)), rng.standard_normal(d)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    per_example = fg.vmap(fg.grad(_logistic_loss), in_axes=(None, 0, 0))(w, x, y)
    loop = np.stack([fg.grad(_logistic_loss)(w, x[i], y[i]) for i in range(n)])
    _tree_allclose(per_example, loop)
    closed_form = (-y / (1.0 + np.exp(y * (x @ w))))[:, None] * x
    np.testing.assert_allclose(per_example, closed_form, rtol=1e-9, atol=1e-12)


@FEW
@given(n=st.integers(1, 5), seed=st.integers(0, 2**32 - 1), x_axis=st.sampled_from([0, 1, -1]))
def test_per_example_grads_mlp(n: int, seed: int, x_axis: int) -> None:
    rng = np.random.default_rng(seed)
    params = _mlp_params(rng, 3, 4, 2)
    x, y = rng.standard_normal((n, 3)), rng.standard_normal((n, 2))
    xs = np.moveaxis(x, 0, x_axis)
    per_example = fg.vmap(fg.grad(_mlp_loss), in_axes=(None, x_axis, 0))(params, xs, y)
    loop = _stack_trees([fg.grad(_mlp_loss)(params, x[i], y[i]) for i in range(n)])
    _tree_allclose(per_example, loop)
    # value_and_grad, and the sum of per-example gradients is the batch gradient.
    vals, grads = fg.vmap(fg.value_and_grad(_mlp_loss), in_axes=(None, 0, 0))(params, x, y)
    np.testing.assert_allclose(vals, [float(_mlp_loss(params, x[i], y[i])) for i in range(n)],
                               rtol=1e-10)
    batch_grad = fg.grad(lambda p: fnp.sum(fg.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, x, y)))(
        params)
    _tree_allclose(fg.tree_util.tree_map(lambda g: np.sum(g, axis=0), grads), batch_grad)


def test_grad_of_vmap_and_grad_wrt_batched_argument() -> None:
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal(3)
    y = np.sign(rng.standard_normal(5))

    def total(w_, x_):
        return fnp.sum(fg.vmap(_logistic_loss, in_axes=(None, 0, 0))(w_, x_, y))

    gw, gx = fg.grad(total, argnums=(0, 1))(w, x)
    loop_w = sum(fg.grad(_logistic_loss)(w, x[i], y[i]) for i in range(5))
    loop_x = np.stack([fg.grad(_logistic_loss, argnums=1)(w, x[i], y[i]) for i in range(5)])
    np.testing.assert_allclose(gw, loop_w, rtol=1e-10)
    np.testing.assert_allclose(gx, loop_x, rtol=1e-10)
    # Second order through vmap: the Hessian of the total loss.
    h = fg.hessian(total)(w, x)
    h_loop = sum(fg.hessian(_logistic_loss)(w, x[i], y[i]) for i in range(5))
    np.testing.assert_allclose(h, h_loop, rtol=1e-9, atol=1e-12)


@FEW
@given(inner_a=st.sampled_from([0, 1, -1]), outer_a=st.sampled_from([0, 1, 2, -1]),
       outer_b=st.sampled_from([None, 0, 2, -3]), out_inner=st.sampled_from([0, 1, -1]),
       out_outer=st.sampled_from([0, 1, 2, -2]), seed=st.integers(0, 2**32 - 1))
def test_vmap_of_vmap_with_different_in_axes(inner_a: int, outer_a: int, outer_b: int | None,
                                             out_inner: int, out_outer: int, seed: int) -> None:
    rng = np.random.default_rng(seed)

    def f(u, v):  # one (4,) row of each
        return fnp.sin(u) * v + fnp.sum(u * v)

    inner = fg.vmap(f, in_axes=(inner_a, 0), out_axes=out_inner)
    # Outer batch 2, inner batch 3: a's members are (3, 4) with the inner axis at inner_a.
    a_members = [np.moveaxis(rng.standard_normal((3, 4)), 0, inner_a) for _ in range(2)]
    a = np.stack(a_members, axis=outer_a)
    b0 = rng.standard_normal((3, 4))
    b = b0 if outer_b is None else np.stack([b0, 2.0 * b0], axis=outer_b)
    got = fg.vmap(inner, in_axes=(outer_a, outer_b), out_axes=out_outer)(a, b)
    rows = []
    for i in range(2):
        ai = np.take(a, i, axis=outer_a)
        bi = b if outer_b is None else np.take(b, i, axis=outer_b)
        cols = [np.asarray(f(np.take(ai, j, axis=inner_a), bi[j])) for j in range(3)]
        rows.append(np.moveaxis(np.stack(cols), 0, out_inner))
    want = np.moveaxis(np.stack(rows), 0, out_outer)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_vmap_of_jvp_and_jvp_of_vmap() -> None:
    rng = np.random.default_rng(2)
    x, t = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def f(v):
        return fnp.tanh(v) * fnp.sum(v ** 2)

    primal, tangent = fg.vmap(lambda a, b: fg.jvp(f, (a,), (b,)))(x, t)
    loop = [fg.jvp(f, (x[i],), (t[i],)) for i in range(4)]
    np.testing.assert_allclose(primal, np.stack([p for p, _ in loop]), rtol=1e-10)
    np.testing.assert_allclose(tangent, np.stack([d for _, d in loop]), rtol=1e-10)
    # The same tangent along one shared direction (in_axes None for it), out_axes=1.
    shared = fg.vmap(lambda a, b: fg.jvp(f, (a,), (b,))[1], in_axes=(0, None), out_axes=1)(
        x, t[0])
    want = np.stack([fg.jvp(f, (x[i],), (t[0],))[1] for i in range(4)], axis=1)
    np.testing.assert_allclose(shared, want, rtol=1e-10)
    _, tan2 = fg.jvp(fg.vmap(f), (x,), (t,))
    np.testing.assert_allclose(tan2, np.stack([d for _, d in loop]), rtol=1e-10)


def test_vmap_of_jacobians_and_their_agreement() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3))

    def f(v):
        return fnp.sin(v) * fnp.sum(v ** 3) + v[::-1]

    jr = fg.vmap(fg.jacrev(f))(x)
    jf = fg.vmap(fg.jacfwd(f))(x)
    loop = np.stack([fg.jacrev(f)(x[i]) for i in range(4)])
    assert jr.shape == (4, 3, 3)
    np.testing.assert_allclose(jr, loop, rtol=1e-10)
    np.testing.assert_allclose(jf, loop, rtol=1e-10)
    # jacfwd and jacrev of the vmapped function are block diagonal in the batch.
    full = fg.jacrev(fg.vmap(f))(x)
    assert full.shape == (4, 3, 4, 3)
    np.testing.assert_allclose(np.einsum("iaib->iab", full), loop, rtol=1e-10)
    np.testing.assert_allclose(fg.jacfwd(fg.vmap(f))(x), full, rtol=1e-10)

    def g(v):
        return fnp.sum(fnp.tanh(v) * v ** 2)

    hs = fg.vmap(fg.hessian(g), in_axes=1, out_axes=-1)(x.T)
    h_loop = np.stack([fg.hessian(g)(x[i]) for i in range(4)], axis=-1)
    np.testing.assert_allclose(hs, h_loop, rtol=1e-9)
    jj = np.stack([fg.jacfwd(fg.jacrev(g))(x[i]) for i in range(4)], axis=-1)
    rr = np.stack([fg.jacrev(fg.jacrev(g))(x[i]) for i in range(4)], axis=-1)
    np.testing.assert_allclose(hs, jj, rtol=1e-9)
    np.testing.assert_allclose(hs, rr, rtol=1e-9)


def test_vmap_grad_through_custom_rules_checkpoint_and_jit() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((3, 2)), rng.standard_normal(2)
    for name, make in [("custom_jvp", _custom_jvp_fn), ("custom_vjp", _custom_vjp_fn),
                       ("checkpoint", lambda: fg.checkpoint(
                           lambda a, b: (fnp.sin(a) * b, a - b))),
                       ("jit", lambda: fg.jit(lambda a, b: (fnp.sin(a) * b, a - b)))]:
        f = make()

        def loss(a, b, f=f):
            u, v = f(a, b)
            return fnp.sum(u) + fnp.sum(v ** 2)

        got = fg.vmap(fg.grad(loss, argnums=(0, 1)), in_axes=(0, None))(x, y)
        want = [fg.grad(loss, argnums=(0, 1))(x[i], y) for i in range(3)]
        _tree_allclose(got, _stack_trees(want))
        expected_a = np.cos(x) * y + 2 * (x - y)
        np.testing.assert_allclose(got[0], expected_a, rtol=1e-10, err_msg=name)


def test_jit_of_vmap_and_vmap_of_jit() -> None:
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))

    def f(v, m):
        return fnp.tanh(v @ m) + fnp.sum(v)

    loop = np.stack([f(x[i], w) for i in range(5)])
    np.testing.assert_allclose(fg.jit(fg.vmap(f, in_axes=(0, None)))(x, w), loop, rtol=1e-12)
    np.testing.assert_allclose(fg.vmap(fg.jit(f), in_axes=(-1, None), out_axes=-1)(x.T, w),
                               loop.T, rtol=1e-12)
    g = fg.jit(fg.vmap(fg.grad(lambda v, m: fnp.sum(f(v, m))), in_axes=(0, None)))(x, w)
    np.testing.assert_allclose(
        g, np.stack([fg.grad(lambda v: fnp.sum(f(v, w)))(x[i]) for i in range(5)]), rtol=1e-12)


def _eqns(closed: Any) -> list[Any]:
    return list(closed.jaxpr.eqns)


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (2, 0), (1, -1)])
def test_batched_matmul_stages_one_dot_general_with_batch_dim(in_axes: tuple[Any, ...]) -> None:
    def per_example(a, b):
        return a @ b

    counts = []
    for size in (2, 9, 33):
        a = np.ones((size, 3, 5)) if in_axes[0] is not None else np.ones((3, 5))
        b = np.ones((size, 5, 4)) if in_axes[1] is not None else np.ones((5, 4))
        if in_axes[0] not in (None, 0):
            a = np.moveaxis(a, 0, in_axes[0])
        if in_axes[1] not in (None, 0):
            b = np.moveaxis(b, 0, in_axes[1])
        closed = fg.make_jaxpr(fg.vmap(per_example, in_axes=in_axes))(a, b)
        dots = [e for e in _eqns(closed) if e.primitive.name == "dot_general"]
        assert len(dots) == 1, str(closed)
        (_, _), (lb, rb) = dots[0].params["dimension_numbers"]
        text = str(closed)
        assert text.count("dot_general") == 1
        if in_axes[0] is not None and in_axes[1] is not None:
            assert len(lb) == len(rb) == 1, text  # the vmapped axis is a dot batch dim
            assert "((0,), (0,))" in text or f"(({lb[0]},), ({rb[0]},))" in text
        assert closed.out_avals[0].shape == (size, 3, 4)
        counts.append(len(_eqns(closed)))
    assert len(set(counts)) == 1, f"equation count grows with the batch size: {counts}"


def test_per_example_grad_jaxpr_has_no_loop() -> None:
    counts = []
    for n in (2, 17):
        x, y, w = np.ones((n, 4)), np.ones(n), np.ones(4)
        closed = fg.make_jaxpr(fg.vmap(fg.grad(_logistic_loss), in_axes=(None, 0, 0)))(w, x, y)
        counts.append(len(_eqns(closed)))
        assert closed.out_avals[0].shape == (n, 4)
    assert counts[0] == counts[1]


def test_in_axes_and_out_axes_as_pytrees() -> None:
    rng = np.random.default_rng(5)
    a, b, c = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((4, 3))

    def f(d, t):
        return {"sum": d["a"] + d["b"], "prod": t[0] * t[1]}, fnp.sum(d["a"])

    out, total = fg.vmap(f, in_axes=({"a": 0, "b": None}, (1, None)),
                         out_axes=({"sum": 1, "prod": -1}, 0))({"a": a, "b": b}, (c, b))
    np.testing.assert_allclose(out["sum"], (a + b).T)
    np.testing.assert_allclose(out["prod"], (c.T * b).T)
    np.testing.assert_allclose(total, a.sum(1))
    # A prefix: one spec for a whole dict argument; a tuple per positional argument.
    got = fg.vmap(lambda d: d["a"] * d["b"], in_axes=(0,))({"a": a, "b": a})
    np.testing.assert_allclose(got, a * a)
    # Negative axes in and out.
    got = fg.vmap(lambda u, v: u * v, in_axes=(-1, -2), out_axes=-1)(c, a)
    np.testing.assert_allclose(got, np.stack([c[:, i] * a[i] for i in range(3)], axis=-1))
    # out_axes=None for an output that does not depend on the batch.
    u, v = fg.vmap(lambda x, w: (x * 2, w + 1), in_axes=(0, None), out_axes=(0, None))(a, b)
    np.testing.assert_allclose(u, a * 2)
    np.testing.assert_allclose(v, b + 1)


def test_tracer_methods_under_vmap() -> None:
    """Indexing and .at on the batched value itself (a tracer), as users write it."""
    rng = np.random.default_rng(6)
    x, v, i = rng.standard_normal((3, 4, 2)), rng.standard_normal(3), np.array([0, 3, -1])
    got = fg.vmap(lambda a, b, k: (a.at[1, 0].set(b), a[k], a[:, k % 2].sum(), a.T @ a))(x, v, i)
    for n in range(3):
        want = (fnp.at(x[n])[1, 0].set(v[n]), x[n][i[n]], x[n][:, i[n] % 2].sum(), x[n].T @ x[n])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g[n], w, rtol=1e-12)


def test_axis_size_with_all_none_in_axes() -> None:
    b = np.arange(3.0)
    out = fg.vmap(lambda v: v * 2.0, in_axes=None, axis_size=4)(b)
    np.testing.assert_array_equal(out, np.tile(b * 2.0, (4, 1)))
    out = fg.vmap(lambda u, v: u + v, in_axes=(None, None), axis_size=2, out_axes=1)(b, 1.0)
    np.testing.assert_array_equal(out, np.stack([b + 1.0] * 2, axis=1))
    # axis_size agreeing with the mapped size is accepted.
    np.testing.assert_array_equal(fg.vmap(lambda v: v, axis_size=3)(b), b)


@pytest.mark.parametrize("call", [
    pytest.param(lambda: fg.vmap(lambda a, b: a + b)(np.ones((3, 2)), np.ones((4, 2))),
                 id="mismatched-batch-sizes"),
    pytest.param(lambda: fg.vmap(lambda a, b: a + b, in_axes=(0, 1))(np.ones((3, 2)),
                                                                       np.ones((2, 2))),
                 id="mismatched-sizes-at-different-axes"),
    pytest.param(lambda: fg.vmap(lambda a: a, in_axes=2)(np.ones((3, 2))), id="in-axis-too-big"),
    pytest.param(lambda: fg.vmap(lambda a: a, in_axes=-3)(np.ones((3, 2))),
                 id="in-axis-too-negative"),
    pytest.param(lambda: fg.vmap(lambda a: a)(np.float64(1.0)), id="in-axis-of-a-scalar"),
    pytest.param(lambda: fg.vmap(lambda a: a, out_axes=2)(np.ones((3, 2))),
                 id="out-axis-too-big"),
    pytest.param(lambda: fg.vmap(lambda a: a, out_axes=-3)(np.ones((3, 2))),
                 id="out-axis-too-negative"),
    pytest.param(lambda: fg.vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3)),
                 id="in-axes-too-short"),
    pytest.param(lambda: fg.vmap(lambda a: a, in_axes=(0, 0))(np.ones(3)),
                 id="in-axes-too-long"),
    pytest.param(lambda: fg.vmap(lambda d: d[0], in_axes=((0, 0),))((np.ones(3),)),
                 id="in-axes-tree-mismatch"),
    pytest.param(lambda: fg.vmap(lambda d: d, in_axes=([0],))((np.ones(3),)),
                 id="in-axes-list-for-tuple"),
    pytest.param(lambda: fg.vmap(lambda a: a, in_axes=None)(np.ones(3)),
                 id="all-none-without-axis-size"),
    pytest.param(lambda: fg.vmap(lambda a: a, in_axes=(None,))(np.ones(3)),
                 id="all-none-tuple-without-axis-size"),
    pytest.param(lambda: fg.vmap(lambda a: a, axis_size=2)(np.ones(3)),
                 id="axis-size-disagrees"),
    pytest.param(lambda: fg.vmap(lambda a: a, out_axes=None)(np.ones(3)),
                 id="out-axes-none-for-a-batched-output"),
])
def test_vmap_errors(call: Callable[[], Any]) -> None:
    with pytest.raises(ShapeError):
        call()


def test_python_control_flow_on_a_batched_value_raises() -> None:
    def f(v):
        if fnp.sum(v) > 0:
            return v
        return -v

    with pytest.raises(ConcretizationTypeError, match="vmap"):
        fg.vmap(f)(np.ones((3, 2)))
    with pytest.raises(ConcretizationTypeError):
        fg.vmap(lambda v: bool(v))(np.ones(3))
    with pytest.raises(ConcretizationTypeError):
        fg.vmap(lambda v: float(v))(np.ones(3))
    # An unbatched value stays concrete inside vmap.
    out = fg.vmap(lambda v, c: v * (2.0 if c > 0 else 3.0), in_axes=(0, None))(
        np.ones(2), np.float64(1.0))
    np.testing.assert_array_equal(out, [2.0, 2.0])


def test_keyword_arguments_are_mapped_over_axis_0() -> None:
    x = np.arange(6.0).reshape(3, 2)
    out = fg.vmap(lambda a, scale: a * scale)(x, scale=np.arange(3.0)[:, None] + 1)
    np.testing.assert_array_equal(out, x * (np.arange(3.0)[:, None] + 1))



def test_dict_in_axes_with_other_keys_is_an_error() -> None:
    with pytest.raises(ShapeError):
        fg.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": np.ones(3)})


def test_pad_of_rank0_operand_vmap_matches_loop() -> None:
    x, v = np.arange(3.0), np.array([7.0, 8.0, 9.0])
    got = fg.vmap(lambda a, b: lax.pad(a, b, ()))(x, v)
    want = np.stack([lax.pad(np.asarray(x[i]), np.asarray(v[i]), ()) for i in range(3)])
    np.testing.assert_array_equal(got, want)


def test_eager_primitives_accept_numpy_scalars() -> None:
    # What a loop over np.take slices of a 1-D batch hands to a per-example function.
    x = np.arange(3.0)
    got = fg.vmap(lambda a: lax.dynamic_update_slice(a, a * 2.0, ()))(x)
    want = np.stack([lax.dynamic_update_slice(x[i], x[i] * 2.0, ()) for i in range(3)])
    np.testing.assert_array_equal(got, want)


def test_gather_with_empty_index_tuples() -> None:
    op, idx = np.arange(6.0).reshape(2, 3), np.zeros((5, 4, 0), np.int64)
    out = fg.vmap(lax.gather, in_axes=(None, 0))(op, idx)
    assert out.shape == (5, 4, 2, 3)
    np.testing.assert_array_equal(out, np.broadcast_to(op, (5, 4, 2, 3)))


@pytest.mark.parametrize("name", SCATTERS)
def test_scatter_with_empty_index_tuples(name: str) -> None:
    op = np.arange(6.0).reshape(3, 2)  # batch of 3, operand (2,) per member
    # Two index tuples, both empty, with equal updates (so no winner needs choosing).
    idx, upd = np.zeros((2, 0), np.int64), np.array([[10.0, 20.0], [10.0, 20.0]])
    fn = lambda o: PRIMITIVES[name].bind(o, idx, upd,  # noqa: E731
                                         **_SCATTER_PARAMS.get(name, {"mode": "drop"}))
    got = fg.vmap(fn)(op)
    np.testing.assert_array_equal(got, np.stack([fn(op[i]) for i in range(3)]))


def test_switch_negative_index() -> None:
    branches = [lambda v: v * 0.0, lambda v: v + 1.0, lambda v: v + 2.0]
    x, idx = np.array(10.0), np.array([-1, 0, 1, 2, 3], np.int32)
    got = fg.vmap(lambda i: fg.lax.switch(i, branches, x))(idx)
    want = np.stack([fg.lax.switch(i, branches, x) for i in idx])  # [0, 0, 11, 12, 12]
    np.testing.assert_array_equal(got, want)
