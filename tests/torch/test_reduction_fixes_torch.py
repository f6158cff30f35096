"""Reductions, median/mode, var/std, einsum/vander dtypes and tensor() int conversion
compared with real PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch", exc_type=ImportError)

NAN = math.nan


def _same(a, b):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))


def _both(fn, *args, **kwargs):
    out = []
    for lib in (torch, ft):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(fn(lib, *args, **kwargs))
    return out


# 1. dtype= of sum and prod ---------------------------------------------------------

@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "uint8", "float16", "float64"])
@pytest.mark.parametrize("form", ["method", "function"])
@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_sum_prod_dtype(dt, form, op, dim):
    data = [[1.0, 2.0, 7.0], [3.0, 4.0, 100.0]]

    def run(lib):
        x = lib.tensor(data)
        kw = {"dtype": getattr(lib, dt)}
        args = () if dim is None else (dim,)
        if form == "method":
            return getattr(x, op)(*args, **kw)
        return getattr(lib, op)(x, *args, **kw)

    _same(*_both(run))


@given(st.lists(st.integers(-100, 100), min_size=1, max_size=8),
       st.sampled_from(["int8", "uint8", "int16", "int32"]))
@settings(max_examples=30, deadline=None)
def test_sum_prod_dtype_wraps(values, dt):
    for op in ("sum", "prod"):
        _same(*_both(lambda lib, op=op: getattr(lib.tensor(values), op)(dtype=getattr(lib, dt))))


# 2. dim=[] / dim=() reduce everything -----------------------------------------------

@pytest.mark.parametrize("expr", [
    "x.sum(dim=[])", "x.sum(())", "x.sum([], keepdim=True)", "x.mean(dim=[])",
    "x.mean((), keepdim=True)", "x.nansum([])", "x.amax(dim=[])", "x.amin(())",
    "x.var([])", "x.std(dim=())", "x.count_nonzero(dim=())", "x.norm(dim=[])",
    "lib.linalg.vector_norm(x, dim=[])", "lib.nanmean(x, [])", "x.any(dim=())",
    "x.all(())",
])
def test_empty_dim_list(expr):
    def run(lib):
        x = lib.tensor([[1.0, 2.0, 0.0], [4.0, 5.0, 6.0]])
        return eval(expr, {"lib": lib, "x": x})

    _same(*_both(run))


def test_empty_dim_list_pairs():
    for name in ("var_mean", "std_mean"):
        a, b = _both(lambda lib, name=name: getattr(lib, name)(lib.ones(2, 3), []))
        _same(a[0], b[0])
        _same(a[1], b[1])


def test_empty_dim_list_grad():
    for op in ("sum", "mean"):
        outs = []
        for lib in (torch, ft):
            x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            y = getattr(x, op)(dim=[])
            y.backward()
            outs.append((y.detach(), x.grad, type(y.grad_fn).__name__))
        _same(outs[0][0], outs[1][0])
        _same(outs[0][1], outs[1][1])
        assert outs[0][2] == outs[1][2]


# 3./4. median and mode ---------------------------------------------------------------

# Rows of at most 16: beyond that, which of many tied middle values median's index names
# differs from PyTorch's selection (sharp_bits); the values agree at any length.
_row = st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, NAN]), min_size=1, max_size=16)


@given(st.lists(_row, min_size=1, max_size=3).filter(lambda r: len({len(x) for x in r}) == 1))
@settings(max_examples=60, deadline=None)
def test_median_mode_along_dim_with_nan(rows):
    for op in ("median", "mode"):
        for dim in (0, 1, -1):
            a, b = _both(lambda lib, op=op, dim=dim: getattr(lib, op)(lib.tensor(rows), dim))
            _same(a.values, b.values)
            _same(a.indices, b.indices)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=60))
@settings(max_examples=40, deadline=None)
def test_mode_int_indices(values):
    a, b = _both(lambda lib: lib.mode(lib.tensor(values)))
    _same(a.values, b.values)
    _same(a.indices, b.indices)


@pytest.mark.parametrize("values", [[1.0, NAN, 3.0], [1.0, NAN, NAN, 3.0], [NAN, 1.0, NAN],
                                    [2.0, NAN, 1.0, NAN, 1.0], [NAN, NAN]])
def test_median_mode_nan_examples(values):
    for op in ("median", "mode"):
        a, b = _both(lambda lib, op=op: getattr(lib, op)(lib.tensor(values), 0))
        _same(a.values, b.values)
        _same(a.indices, b.indices)
    _same(*_both(lambda lib: lib.median(lib.tensor(values))))


@pytest.mark.parametrize("dt", ["int64", "int32", "int16", "int8", "uint8", "float16",
                                "float64"])
@pytest.mark.parametrize("values", [[3, 1, 2], [3, 1, 2, 4], [5], []])
def test_median_keeps_dtype(dt, values):
    _same(*_both(lambda lib: lib.median(lib.tensor(values, dtype=getattr(lib, dt)))))


def test_median_bool_refused():
    for dim in (None, 0):
        with pytest.raises(RuntimeError) as want:
            torch.tensor([True]).median(*(() if dim is None else (dim,)))
        with pytest.raises(RuntimeError) as got:
            ft.tensor([True]).median(*(() if dim is None else (dim,)))
        assert str(got.value) == str(want.value)


# 5. var/std with no degrees of freedom ---------------------------------------------

@pytest.mark.parametrize("shape", [(0,), (0, 3), (1,), (2,), (2, 2), (3,)])
@pytest.mark.parametrize("correction", [0, 1, 2, 3, -1, 2.5])
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_var_std_no_dof(shape, correction, dim):
    data = np.arange(math.prod(shape), dtype=np.float64).reshape(shape) ** 2
    for op in ("var", "std"):
        a, b = _both(lambda lib, op=op: getattr(lib.tensor(data), op)(dim, correction=correction))
        assert a.dtype == torch.float64 and str(b.dtype) == "torch.float64"
        np.testing.assert_allclose(np.asarray(b.tolist()), np.asarray(a.tolist()),
                                   rtol=1e-12)


def test_var_no_dof_warns():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        ft.zeros(0, 3).std(correction=2)


# 6. einsum and vander widen integers -----------------------------------------------

@pytest.mark.parametrize("eq,shapes", [
    ("ii", [(2, 2)]), ("ii->i", [(2, 2)]), ("ij->ji", [(2, 2)]), ("ij->", [(2, 2)]),
    ("ij->i", [(2, 3)]), ("ij,jk", [(2, 3), (3, 2)]), ("ij,jk->", [(2, 3), (3, 2)]),
    ("ij,ij->ij", [(2, 2), (2, 2)]), ("i,i", [(3,), (3,)]), ("i,j", [(2,), (3,)]),
    ("ij,j", [(2, 3), (3,)]), ("...ij->...", [(2, 2, 3)]),
])
@pytest.mark.parametrize("dt", ["int32", "int8", "float32"])
def test_einsum_dtype(eq, shapes, dt):
    arrays = [np.arange(math.prod(s)).reshape(s) % 5 for s in shapes]
    _same(*_both(lambda lib: lib.einsum(
        eq, *[lib.tensor(a.tolist(), dtype=getattr(lib, dt)) for a in arrays])))


@pytest.mark.parametrize("dt", ["int32", "int8", "uint8", "bool", "int64", "float16"])
def test_vander_dtype(dt):
    _same(*_both(lambda lib: lib.vander(lib.tensor([1, 2, 0], dtype=getattr(lib, dt)), 4)))


# 7. tensor()/as_tensor() of Python ints ----------------------------------------------

_INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
               "bool", "float16"]


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return str(r.dtype), r.tolist()


@pytest.mark.parametrize("dt", _INT_DTYPES)
@pytest.mark.parametrize("make", ["tensor", "as_tensor"])
@pytest.mark.parametrize("values", [
    [-7, 7], [300], [-129], [-255], [-256], [-300], [2 ** 31], [2 ** 32 + 5],
    [2 ** 63 - 1], [2 ** 63], [-2 ** 63 - 1], [2 ** 64], [2 ** 64 - 1], [[-1, 2], [3, -4]],
])
def test_tensor_int_conversion(dt, make, values):
    want = _outcome(lambda: getattr(torch, make)(values, dtype=getattr(torch, dt)))
    got = _outcome(lambda: getattr(ft, make)(values, dtype=getattr(ft, dt)))
    assert got == want


@given(st.lists(st.integers(-2 ** 16, 2 ** 16), min_size=1, max_size=5),
       st.sampled_from(["uint8", "int8", "int16", "uint16", "int32"]))
@settings(max_examples=60, deadline=None)
def test_tensor_int_conversion_drawn(values, dt):
    want = _outcome(lambda: torch.tensor(values, dtype=getattr(torch, dt)))
    got = _outcome(lambda: ft.tensor(values, dtype=getattr(ft, dt)))
    assert got == want
