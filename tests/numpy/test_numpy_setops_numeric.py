"""funcgrad.numpy's set operations, numeric helpers (histograms, interpolation, convolution,
gradients) and index tricks against jax.numpy: values, dtypes and weak types on
hypothesis-drawn inputs, jit with ``size=`` for the data-dependent shapes, gradients against
jax.grad, and second-order numerical checks of a few derivatives in float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.testing import check_grads
from tests.numpy._compare import compare, jax_modules

# No subnormals: XLA on the CPU flushes them to zero (see test_numpy_stats.py).
FLOATS = st.floats(-10, 10, allow_nan=False, width=32, allow_subnormal=False)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4)


def floats(shape: Any, unique: bool = False) -> Any:
    return hnp.arrays(np.float64, shape, elements=FLOATS, unique=unique)


def ints(shape: Any, lo: int = -5, hi: int = 5, dtype: Any = np.int32) -> Any:
    return hnp.arrays(dtype, shape, elements=st.integers(lo, hi))


def sorted_floats(n: int) -> Any:
    return floats(n, unique=True).map(np.sort)


# (id, fn(module, *args), strategies of args, differentiable w.r.t. the first arg).
# Index lists are passed as arrays: JAX rejects Python lists where funcgrad (like NumPy)
# accepts them, a deliberate difference.
CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...], bool]] = [
    # _setops: eager (concrete) results, and size= under jit
    ("nonzero", lambda m, x: m.nonzero(x), (ints(SHAPES, -1, 1),), False),
    ("nonzero_size", lambda m, x: m.nonzero(x, size=3, fill_value=-1), (ints(5, -1, 1),),
     False),
    ("flatnonzero", lambda m, x: m.flatnonzero(x), (ints(SHAPES, -1, 1),), False),
    ("argwhere", lambda m, x: m.argwhere(x, size=4), (ints((2, 3), -1, 1),), False),
    ("compress", lambda m, c, x: m.compress(c, x, axis=0), (ints(3, 0, 1), floats((3, 2))),
     False),
    ("extract", lambda m, c, x: m.extract(c, x, size=3), (ints(4, 0, 1), floats(4)), False),
    ("unique", lambda m, x: m.unique(x), (ints(SHAPES),), False),
    ("unique_size", lambda m, x: m.unique(x, size=6, fill_value=0), (ints(5),), False),
    ("unique_all", lambda m, x: m.unique_all(x), (ints(6),), False),
    ("unique_counts", lambda m, x: m.unique_counts(x), (ints(6),), False),
    ("unique_inverse", lambda m, x: m.unique_inverse(x), (ints((2, 3)),), False),
    ("unique_axis", lambda m, x: m.unique(x, axis=0, return_counts=True),
     (ints((4, 2), 0, 1),), False),
    ("isin", lambda m, x, y: m.isin(x, y), (ints(SHAPES), ints(4)), False),
    ("union1d", lambda m, x, y: m.union1d(x, y), (ints(4), ints(3)), False),
    ("setdiff1d", lambda m, x, y: m.setdiff1d(x, y, size=4), (ints(4), ints(3)), False),
    ("intersect1d", lambda m, x, y: m.intersect1d(x, y, return_indices=True),
     (ints(4), ints(5)), False),
    ("setxor1d", lambda m, x, y: m.setxor1d(x, y), (ints(4), ints(3)), False),
    ("lexsort", lambda m, x, y: m.lexsort((x, y)), (ints(5), ints(5)), False),
    ("sort_complex", lambda m, x: m.sort_complex(x), (floats(4),), False),
    ("partition", lambda m, x: m.sort(m.partition(x, 1, axis=-1), axis=-1),
     (floats((2, 4)),), False),
    ("argpartition", lambda m, x: m.take_along_axis(x, m.argpartition(x, 1), -1)[..., 1],
     (floats((2, 4), unique=True),), False),
    ("trim_zeros", lambda m, x: m.trim_zeros(x), (ints(6, 0, 2),), False),
    # _numeric
    ("searchsorted", lambda m, a, v: m.searchsorted(a, v), (sorted_floats(5), floats(4)),
     False),
    ("searchsorted_right", lambda m, a, v: m.searchsorted(a, v, side="right"),
     (ints(5, 0, 3).map(np.sort), ints(4, 0, 3)), False),
    ("digitize", lambda m, x, b: m.digitize(x, b), (floats(5), sorted_floats(3)), False),
    ("bincount", lambda m, x: m.bincount(x, length=6), (ints(5, 0, 5),), False),
    ("bincount_w", lambda m, x, w: m.bincount(x, w, length=4), (ints(5, 0, 3), floats(5)),
     False),
    ("histogram", lambda m, x: m.histogram(x, bins=4), (floats(6),), False),
    ("histogram_range", lambda m, x: m.histogram(x, bins=3, range=(-5, 5), density=True),
     (floats(6),), False),
    ("histogram_bin_edges", lambda m, x: m.histogram_bin_edges(x, bins=5), (floats(6),), False),
    ("histogram2d", lambda m, x, y: m.histogram2d(x, y, bins=3), (floats(5), floats(5)), False),
    ("histogramdd", lambda m, x: m.histogramdd(x, bins=2), (floats((5, 3)),), False),
    ("interp", lambda m, x, xp, fp: m.interp(x, xp, fp),
     (floats(4), sorted_floats(5), floats(5)), True),
    ("interp_fp", lambda m, fp, x, xp: m.interp(x, xp, fp, left=-1.0, right=2.0),
     (floats(5), floats(4), sorted_floats(5)), True),
    ("convolve", lambda m, a, v: m.convolve(a, v), (floats(5), floats(3)), True),
    ("convolve_same", lambda m, a, v: m.convolve(a, v, mode="same"), (floats(4), floats(3)),
     True),
    ("correlate", lambda m, a, v: m.correlate(a, v, mode="full"), (floats(5), floats(2)), True),
    ("correlate_valid", lambda m, v, a: m.correlate(a, v), (floats(2), floats(5)), True),
    ("gradient", lambda m, f: m.stack(m.gradient(f)) if f.ndim > 1 else m.gradient(f),
     (floats(SHAPES.filter(lambda s: min(s) > 1)),), True),
    ("gradient_spacing", lambda m, f: m.gradient(f, 0.5, axis=0, edge_order=2),
     (floats((4, 2)),), True),
    ("trapezoid", lambda m, y: m.trapezoid(y, dx=0.5, axis=-1), (floats(SHAPES),), True),
    ("trapezoid_x", lambda m, y, x: m.trapezoid(y, x), (floats(4), sorted_floats(4)), True),
    ("unwrap", lambda m, p: m.unwrap(p), (floats(6),), True),
    ("ediff1d", lambda m, a: m.ediff1d(a, to_begin=1.0), (floats(SHAPES),), True),
    # _index_tricks
    ("ix_", lambda m, a, b: m.ix_(a, b), (ints(2, 0, 3), ints(3, 0, 3)), False),
    ("indices", lambda m: m.indices((2, 3)), (), False),
    ("indices_sparse", lambda m: m.indices((2, 3), sparse=True), (), False),
    ("diag_indices", lambda m: m.diag_indices(3, ndim=3), (), False),
    ("diag_indices_from", lambda m, x: m.diag_indices_from(x), (floats((3, 3)),), False),
    ("tril_indices", lambda m: m.tril_indices(4, k=-1, m=3), (), False),
    ("triu_indices", lambda m: m.triu_indices(3, k=1), (), False),
    ("tril_indices_from", lambda m, x: m.tril_indices_from(x, k=1), (floats((3, 4)),), False),
    ("triu_indices_from", lambda m, x: m.triu_indices_from(x), (floats((3, 3)),), False),
    ("mask_indices", lambda m: m.mask_indices(3, m.triu, 1), (), False),
    ("ravel_multi_index", lambda m, i, j: m.ravel_multi_index((i, j), (3, 4), mode="clip"),
     (ints(3, -1, 5), ints(3, -1, 5)), False),
    ("unravel_index", lambda m, i: m.unravel_index(i, (3, 4)), (ints(4, 0, 11),), False),
    ("fill_diagonal", lambda m, x: m.fill_diagonal(x, 2.0, inplace=False), (floats((3, 4)),),
     True),
    ("diagflat", lambda m, v: m.diagflat(v, k=1), (floats((2, 2)),), True),
    ("choose", lambda m, i, a, b: m.choose(i, [a, b]), (ints(4, 0, 1), floats(4), floats(4)),
     False),
    ("select", lambda m, x: m.select([x > 1, x < -1], [x, 2 * x], 0.5), (floats(SHAPES),),
     True),
    ("piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 2], [lambda v: -v, 3.0, 1.0]),
     (floats(5),), True),
    ("place", lambda m, x, c: m.place(x, c > 0, m.array([7.0, 8.0]), inplace=False),
     (floats(4), ints(4, -1, 1)), False),
    ("put", lambda m, x, i: m.put(x, i, 5.0, mode="clip", inplace=False),
     (floats((2, 3)), ints(2, 0, 8)), False),
    ("put_along_axis", lambda m, x, i: m.put_along_axis(x, i, 1.5, axis=1, inplace=False),
     (floats((2, 3)), ints((2, 1), 0, 2)), False),
    ("delete", lambda m, x: m.delete(x, np.array([0, 2]), axis=0), (floats((3, 2)),), True),
    ("delete_slice", lambda m, x: m.delete(x, slice(1, None)), (floats(SHAPES),), True),
    ("insert", lambda m, x: m.insert(x, 1, 9.0, axis=-1), (floats((2, 3)),), True),
    ("insert_list", lambda m, x, v: m.insert(x, np.array([0, 2]), v), (floats(3), floats(2)), True),
    ("append", lambda m, x, v: m.append(x, v, axis=0), (floats((2, 2)), floats((1, 2))), True),
    ("block", lambda m, a, b: m.block([[a, b], [b, a]]), (floats((2, 2)), floats((2, 2))),
     True),
]

# Data-dependent output shapes under jit, with size= (the JAX way).
JIT_CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("nonzero", lambda m, x: m.nonzero(x, size=4, fill_value=9), (ints(5, -1, 1),)),
    ("unique", lambda m, x: m.unique(x, size=5, fill_value=-1, return_counts=True),
     (ints(6),)),
    ("argwhere", lambda m, x: m.argwhere(x, size=3), (ints((2, 2), -1, 1),)),
    ("union1d", lambda m, x, y: m.union1d(x, y, size=6, fill_value=0), (ints(3), ints(3))),
    ("intersect1d", lambda m, x, y: m.intersect1d(x, y, size=3, fill_value=0),
     (ints(3), ints(3))),
]


@pytest.mark.parametrize(("fn", "spec", "diff"), [pytest.param(*c[1:], id=c[0]) for c in CASES])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_matches_jax(fn: Any, spec: Any, diff: bool, data: Any) -> None:
    args = tuple(data.draw(s) for s in spec)
    compare(fn, *args, x64=True, grad=diff)


@pytest.mark.parametrize(("fn", "spec"), [pytest.param(*c[1:], id=c[0]) for c in JIT_CASES])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_jit_with_size_matches_jax(fn: Any, spec: Any, data: Any) -> None:
    args = tuple(data.draw(s) for s in spec)
    jax, jnp = jax_modules(True)
    theirs = jax.jit(lambda *a: fn(jnp, *a))(*args)
    ours = funcgrad.jit(lambda *a: fn(fnp, *a))(*args)
    compare(lambda m, *a: ours if m is fnp else theirs, *args)


def test_nonzero_without_size_under_jit_raises() -> None:
    with pytest.raises(funcgrad.errors.ConcretizationTypeError):
        funcgrad.jit(fnp.nonzero)(np.arange(3))


# Second-order numerical checks of representative derivatives (float64, both modes).
GRAD_CASES: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("interp", lambda x, fp: fnp.interp(x, np.array([-3.0, 0.0, 4.0]), fp),
     (floats(3).map(lambda v: v / 4 + 0.01), floats(3))),
    ("convolve", lambda a, v: fnp.convolve(a, v, mode="same"), (floats(4), floats(2))),
    ("gradient", lambda f: fnp.gradient(f, axis=0), (floats((4, 2)),)),
    ("trapezoid", lambda y: fnp.trapezoid(y * y), (floats(5),)),
    ("cov", lambda x: fnp.cov(x), (floats((2, 4)),)),
    # |r| = 1 is where corrcoef clips (a kink): checked away from it.
    ("corrcoef", lambda x: fnp.corrcoef(x), (floats((2, 4), unique=True).filter(
        lambda x: abs(np.corrcoef(x)[0, 1]) < 0.95),)),
    # Order statistics change where two values cross: checked with them apart (finite
    # differences step over a gap of 1e-5 between 0 and 1e-5, a kink).
    ("quantile", lambda x: fnp.quantile(x, 0.3), (floats(5, unique=True).filter(
        lambda x: np.diff(np.sort(x)).min() > 1e-2),)),
    # (x = 8 is where an entry turns NaN: finite differences across it are NaN; a column of
    # NaNs has a NaN mean.)
    ("nanmean", lambda x: fnp.nanmean(fnp.where(x > 8, fnp.nan, x), axis=0),
     (floats((3, 2)).filter(lambda x: np.abs(np.asarray(x) - 8).min() > 1e-2
                            and bool((np.asarray(x) < 8).any(axis=0).all())),)),
]


@pytest.mark.parametrize(("fn", "spec"), [pytest.param(*c[1:], id=c[0]) for c in GRAD_CASES])
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_check_grads_order2(fn: Any, spec: Any, data: Any) -> None:
    jax_modules(True)
    args = tuple(data.draw(s) for s in spec)
    check_grads(fn, args, order=2, modes=("fwd", "rev"))
