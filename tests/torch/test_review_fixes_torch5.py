"""PyTorch-face fixes from a fifth side-by-side review, each compared with torch 2.13:
empty dimensions and dtypes in sort, topk, kthvalue, cummax/cummin, logcumsumexp,
masked_select, softmax/log_softmax/softmin and chunk; in-place unary functions of integer
and bool tensors (erf_, ceil_, sign_, ...); scatter_reduce on integers; the graph and the
derivative of cdist, pdist, vector norms and pairwise_distance at p=0, at zero distances
and at ties; xlogy with a number on either side; xlogy's and i0's derivative at 0."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import outcome as _outcome

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402


def _np(t):
    return np.asarray(t.detach().numpy())


def _close(a, b, rtol=1e-5, atol=1e-6):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is None and b is None
        return
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _same(mine, theirs, **tol):
    """Both give the same error (type and message), or results that agree."""
    a, b = _outcome(mine), _outcome(theirs)
    assert a[0] == b[0], (a, b)
    if a[0] == "ok":
        _close(a[1], b[1], **tol)
    else:
        assert a[1] == b[1]


def _grads(lib, f, values, dtype="float64"):
    ts = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in values]
    out = f(lib, *ts)
    assert out.grad_fn is not None
    out.sum().backward()
    return [out, *[t.grad for t in ts]], type(out.grad_fn).__name__


# ------------------------------------------------- 1. empty dims and dtypes: sort & co.

_DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]
_shapes = st.lists(st.integers(0, 3), min_size=1, max_size=3)


def _zero_or_draw(lib, shape, dt, seed):
    vals = np.random.default_rng(seed).integers(-2, 3, size=shape)
    t = lib.tensor(vals.tolist() if vals.size else np.zeros(shape).tolist())
    return t.reshape(shape).to(getattr(lib, dt))


_REDUCERS = {
    "sort": lambda L, x, d: L.sort(x, d),
    "sort_desc": lambda L, x, d: x.sort(dim=d, descending=True, stable=True),
    "argsort": lambda L, x, d: L.argsort(x, dim=d, stable=True),
    "msort": lambda L, x, d: L.msort(x),
    "topk0": lambda L, x, d: L.topk(x, 0, d),
    "cummax": lambda L, x, d: L.cummax(x, d),
    "cummin": lambda L, x, d: x.cummin(d),
    "logcumsumexp": lambda L, x, d: L.logcumsumexp(x, d),
    "softmax": lambda L, x, d: L.softmax(x, d),
    "softmax_f64": lambda L, x, d: x.softmax(d, dtype=L.float64),
    "log_softmax": lambda L, x, d: x.log_softmax(d),
    "F.softmax": lambda L, x, d: L.nn.functional.softmax(x, d),
    "F.log_softmax": lambda L, x, d: L.nn.functional.log_softmax(x, d),
    "F.softmin": lambda L, x, d: L.nn.functional.softmin(x, d),
    "F.softmin_f64": lambda L, x, d: L.nn.functional.softmin(x, d, dtype=L.float64),
    "special.softmax": lambda L, x, d: L.special.softmax(x, d),
    "special.log_softmax": lambda L, x, d: L.special.log_softmax(x, d),
    "chunk2": lambda L, x, d: x.chunk(2, d),
    "chunk3": lambda L, x, d: L.chunk(x, 3, d),
    "masked_select": lambda L, x, d: L.masked_select(x, x != 0),
}


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(_REDUCERS)), shape=_shapes, dt=st.sampled_from(_DTYPES),
       data=st.data(), seed=st.integers(0, 2**16))
def test_dims_and_dtypes_as_torch(name, shape, dt, data, seed):
    if dt == "float16" and "cum" in name and name != "cummax":
        dt = "float32"  # (float16 logcumsumexp rounds differently)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    f = _REDUCERS[name]
    _same(lambda: f(ft, _zero_or_draw(ft, shape, dt, seed), d),
          lambda: f(torch, _zero_or_draw(torch, shape, dt, seed), d), rtol=2e-3, atol=1e-3)


_DIFFERENTIABLE = ["sort", "cummax", "cummin", "logcumsumexp", "softmax", "log_softmax",
                   "F.softmin", "chunk2", "chunk3", "masked_select"]


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(_DIFFERENTIABLE),
       shape=_shapes.filter(lambda s: 0 in s), data=st.data())
def test_empty_dims_backward_as_torch(name, shape, data):
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    f = _REDUCERS[name]

    def run(lib):
        x = lib.zeros(shape, dtype=lib.float64, requires_grad=True)
        out = f(lib, x, d)
        outs = out if isinstance(out, tuple) else (out,)
        lib.autograd.backward([o for o in outs if o.dtype == lib.float64],
                              [lib.ones_like(o) for o in outs if o.dtype == lib.float64])
        return x.grad

    _same(lambda: run(ft), lambda: run(torch))


# -------------------------------------------- 2. scatter_reduce on integer tensors

@settings(max_examples=80, deadline=None)
@given(reduce=st.sampled_from(["amax", "amin", "sum", "prod", "mean"]),
       include_self=st.booleans(), dt=st.sampled_from(["int64", "int32", "uint8", "bool",
                                                        "float32"]),
       n=st.integers(1, 5), m=st.integers(0, 6), seed=st.integers(0, 2**16))
def test_scatter_reduce_integers_as_torch(reduce, include_self, dt, n, m, seed):
    rng = np.random.default_rng(seed)
    base, src = rng.integers(-9, 10, size=n), rng.integers(-9, 10, size=m)
    if dt in ("uint8", "bool"):
        base, src = abs(base) % (2 if dt == "bool" else 256), abs(src) % (2 if dt == "bool"
                                                                          else 256)
    index = rng.integers(0, n, size=m)

    def run(lib):
        t = getattr(lib, dt)
        return lib.tensor(base.tolist(), dtype=t).scatter_reduce(
            0, lib.tensor(index.tolist(), dtype=lib.int64), lib.tensor(src.tolist(), dtype=t),
            reduce, include_self=include_self)

    _same(lambda: run(ft), lambda: run(torch))


# ------------------------------- 3. unary functions of integer and bool tensors, in place

_UNARY = ["erf", "erfc", "erfinv", "ceil", "floor", "round", "trunc", "frac", "fix", "sign",
          "sgn", "abs", "neg", "exp", "expm1", "log1p", "sqrt", "rsqrt", "sigmoid", "sin",
          "tanh", "reciprocal", "lgamma", "digamma", "i0", "sinc", "deg2rad", "logit",
          "square", "relu", "arcsinh", "nan_to_num"]


@settings(max_examples=150, deadline=None)
@given(fn=st.sampled_from(_UNARY), dt=st.sampled_from(["int64", "int32", "int16", "uint8",
                                                       "bool"]),
       inplace=st.booleans(), vals=st.lists(st.integers(0, 4), min_size=0, max_size=4))
def test_unary_integer_and_bool_tensors_as_torch(fn, dt, inplace, vals):
    def run(lib):
        x = lib.tensor(vals, dtype=lib.int64).to(getattr(lib, dt))
        if not inplace:
            return getattr(lib, fn)(x) if hasattr(lib, fn) else getattr(x, fn)()
        out = getattr(x, fn + "_")()
        assert out is x
        return x

    _same(lambda: run(ft), lambda: run(torch), rtol=1e-5, atol=1e-5)


def test_inplace_integer_results_raise_the_cast_error():
    for name in ("xlogy_", "true_divide_", "float_power_"):
        _same(lambda n=name: getattr(ft.tensor([1, 2]), n)(2),
              lambda n=name: getattr(torch.tensor([1, 2]), n)(2))


# --------------------------------------------------- 4. distances and norms, p = 0 & co.

_P = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, math.inf]
_small = st.lists(st.integers(-1, 1), min_size=1, max_size=3)


@settings(max_examples=80, deadline=None)
@given(p=st.sampled_from(_P), r1=st.integers(1, 3), r2=st.integers(1, 3), m=st.integers(0, 3),
       seed=st.integers(0, 2**16), dt=st.sampled_from(["float64", "float32"]))
def test_cdist_and_pdist_graph_and_gradient_as_torch(p, r1, r2, m, seed, dt):
    # Small integers: many zero distances and ties, where the kernels' rules matter.
    rng = np.random.default_rng(seed)
    x1, x2 = rng.integers(-1, 2, size=(r1, m)).tolist(), rng.integers(-1, 2, size=(r2, m)).tolist()
    if m == 0:
        x1, x2 = [[] for _ in range(r1)], [[] for _ in range(r2)]
    got, node = _grads(ft, lambda L, a, b: L.cdist(a, b, p=p), [x1, x2], dt)
    want, tnode = _grads(torch, lambda L, a, b: L.cdist(a, b, p=p), [x1, x2], dt)
    assert node == tnode
    _close(got, want, rtol=1e-4, atol=1e-5)
    if r1 > 1:
        got, node = _grads(ft, lambda L, a: L.pdist(a, p=p), [x1], dt)
        want, tnode = _grads(torch, lambda L, a: L.pdist(a, p=p), [x1], dt)
        assert node == tnode
        _close(got, want, rtol=1e-4, atol=1e-5)


@settings(max_examples=60, deadline=None)
@given(p=st.sampled_from([*_P, -1.0, -0.5, -math.inf]), rows=st.lists(_small, min_size=1,
                                                                     max_size=3),
       fn=st.sampled_from(["vector_norm", "norm", "dist"]))
def test_vector_norm_gradient_at_zeros_and_ties_as_torch(p, rows, fn):
    width = min(len(r) for r in rows)
    x = [r[:width] for r in rows]
    y = [[v // 2 for v in r] for r in x]
    if fn == "dist" and p == 0:
        return  # PyTorch's DistBackward0 fails there (an undefined gradient)
    calls = {"vector_norm": lambda L, a: L.linalg.vector_norm(a, ord=p, dim=-1),
             "norm": lambda L, a: a.norm(p=p),
             "dist": lambda L, a: L.dist(a, L.tensor(y, dtype=L.float64), p=p)}
    got, node = _grads(ft, calls[fn], [x])
    want, tnode = _grads(torch, calls[fn], [x])
    assert node == tnode
    if p == 0 and want[1] is None:
        # PyTorch's norm backward leaves an undefined gradient at p=0; funcgrad records
        # the node with a zero derivative.
        assert not _np(got[1]).any()
        got[1] = None
    _close(got, want)


def test_pairwise_distance_p0_counts_as_torch():
    got, node = _grads(ft, lambda L, a, b: L.nn.functional.pairwise_distance(a, b, p=0),
                       [[[0.0, 1.0], [2.0, 2.0]], [[0.0, 1.0], [1.0, 3.0]]])
    want, tnode = _grads(torch, lambda L, a, b: L.nn.functional.pairwise_distance(a, b, p=0),
                         [[[0.0, 1.0], [2.0, 2.0]], [[0.0, 1.0], [1.0, 3.0]]])
    assert node == tnode == "NormBackward1"
    _close(got[0], want[0])


def test_cdist_nan_as_torch_kernels():
    for p in (0.0, 1.0, 2.0, math.inf):
        _same(lambda p=p: ft.cdist(ft.tensor([[math.nan, 1.0]]), ft.tensor([[0.0, 1.0]]), p=p),
              lambda p=p: torch.cdist(torch.tensor([[math.nan, 1.0]]),
                                      torch.tensor([[0.0, 1.0]]), p=p))


# ---------------------------------------------------- 5. xlogy and i0 at 0

_vals = st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5, -1.0, math.inf, math.nan])


@settings(max_examples=60, deadline=None)
@given(x=st.lists(_vals, min_size=1, max_size=4), data=st.data(),
       fn=st.sampled_from(["xlogy", "special.xlogy", "special.xlog1py", "method"]))
def test_xlogy_derivatives_as_torch(x, data, fn):
    y = data.draw(st.lists(_vals, min_size=len(x), max_size=len(x)))
    f = {"xlogy": lambda L, a, b: L.xlogy(a, b),
         "special.xlogy": lambda L, a, b: L.special.xlogy(a, b),
         "special.xlog1py": lambda L, a, b: L.special.xlog1py(a, b),
         "method": lambda L, a, b: a.xlogy(b)}[fn]
    got, node = _grads(ft, f, [x, y])
    want, tnode = _grads(torch, f, [x, y])
    assert node == tnode
    _close(got, want)


@settings(max_examples=30, deadline=None)
@given(x=st.lists(_vals, min_size=1, max_size=3), number=st.sampled_from([0.0, 2.0, 0.5]),
       first=st.booleans())
def test_xlogy_with_a_number_as_torch(x, number, first):
    def f(L, a):
        return L.xlogy(number, a) if first else L.xlogy(a, number)

    got, node = _grads(ft, f, [x])
    want, tnode = _grads(torch, f, [x])
    assert node == tnode
    _close(got, want)
    _same(lambda: ft.xlogy(1.0, 2.0), lambda: torch.xlogy(1.0, 2.0))


@settings(max_examples=30, deadline=None)
@given(x=st.lists(st.sampled_from([0.0, -0.0, 1e-3, -0.5, 2.0]), min_size=1, max_size=4),
       fn=st.sampled_from(["i0", "special.i0", "special.i0e", "special.i1"]))
def test_i0_family_derivative_at_zero_as_torch(x, fn):
    def f(L, a):
        return getattr(L.special, fn.split(".")[-1])(a) if "." in fn else L.i0(a)

    got, node = _grads(ft, f, [x])
    want, tnode = _grads(torch, f, [x])
    assert node == tnode
    _close(got, want, rtol=1e-12, atol=1e-14)
