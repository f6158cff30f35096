"""Householder QR (geqrf/orgqr/ormqr) and the extra Tensor methods of
funcgrad/torch/_tensor_more_methods.py, against PyTorch 2.13 where it is installed."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

SETTINGS = settings(max_examples=10, deadline=None)


def _pair(data: Any, dtype: str = "float64") -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    arr = np.asarray(data)
    return ft.tensor(arr, dtype=getattr(ft, dtype)), torch.tensor(arr, dtype=getattr(torch,
                                                                                       dtype))


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _raises_same(f_ours: Any, f_torch: Any) -> None:
    with pytest.raises(Exception) as theirs:
        f_torch()
    with pytest.raises(type(theirs.value)) as ours:
        f_ours()
    assert str(ours.value) == str(theirs.value)


shapes = st.tuples(st.sampled_from([(), (2,)]), st.integers(1, 5), st.integers(1, 5))


@SETTINGS
@given(shapes, st.sampled_from(["float64", "float32"]), st.integers(0, 2**31 - 1))
def test_geqrf_orgqr_match_torch(shape: Any, dtype: str, seed: int) -> None:
    batch, m, n = shape
    a = np.random.default_rng(seed).standard_normal((*batch, m, n))
    ours, theirs = _pair(a, dtype)
    tol = 1e-12 if dtype == "float64" else 2e-5
    qa, tau = ft.geqrf(ours)
    ta, ttau = theirs.geqrf()
    np.testing.assert_allclose(_np(qa), _np(ta), atol=tol * 10, rtol=tol)
    np.testing.assert_allclose(_np(tau), _np(ttau), atol=tol * 10, rtol=tol)
    assert qa.dtype is getattr(ft, dtype) and tuple(tau.shape) == tuple(ttau.shape)
    if m >= n:
        import torch

        q = ft.orgqr(qa, tau)
        np.testing.assert_allclose(_np(q), _np(torch.orgqr(ta, ttau)), atol=tol * 100)


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.booleans(), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_ormqr_values_and_grads_match_torch(m: int, n: int, p: int, left: bool,
                                            transpose: bool, seed: int) -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, n))
    c = rng.standard_normal((m, p) if left else (p, m))
    g = rng.standard_normal(c.shape)
    k = min(m, n)
    ta, ttau = torch.geqrf(torch.tensor(a))
    ours = [ft.tensor(_np(ta), requires_grad=True), ft.tensor(_np(ttau), requires_grad=True),
            ft.tensor(c, requires_grad=True)]
    theirs = [ta.clone().requires_grad_(), ttau.clone().requires_grad_(),
              torch.tensor(c, requires_grad=True)]
    assert k == ttau.shape[-1]
    out = ft.ormqr(*ours, left, transpose)
    tout = torch.ormqr(*theirs, left, transpose)
    np.testing.assert_allclose(_np(out), _np(tout), atol=1e-12)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__ == "OrmqrBackward0"
    (out * ft.tensor(g)).sum().backward()
    (tout * torch.tensor(g)).sum().backward()
    for x, y in zip(ours, theirs):
        np.testing.assert_allclose(_np(x.grad), _np(y.grad), atol=1e-10)


@SETTINGS
@given(st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_orgqr_gradient_matches_finite_differences(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = n + 1
    a0, t0 = rng.standard_normal((m, n)), rng.uniform(0.5, 1.5, n)
    w = rng.standard_normal((m, n))

    def f(a: np.ndarray, t: np.ndarray) -> float:
        return float((ft.orgqr(ft.tensor(a), ft.tensor(t)) * ft.tensor(w)).sum())

    a, t = ft.tensor(a0, requires_grad=True), ft.tensor(t0, requires_grad=True)
    out = ft.orgqr(a, t)
    assert type(out.grad_fn).__name__ == "LinalgHouseholderProductBackward0"
    (out * ft.tensor(w)).sum().backward()
    eps = 1e-6
    for arr, grad, other in ((a0, a.grad, t0), (t0, t.grad, a0)):
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            hi, lo = arr.copy(), arr.copy()
            hi[idx] += eps
            lo[idx] -= eps
            num[idx] = ((f(hi, other) - f(lo, other)) if arr is a0 else
                        (f(other, hi) - f(other, lo))) / (2 * eps)
        np.testing.assert_allclose(_np(grad), num, atol=1e-6)


def test_geqrf_complex_and_empty_match_torch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    ours, theirs = _pair(a, "complex128")
    for x, y in zip(ft.geqrf(ours), torch.geqrf(theirs)):
        np.testing.assert_allclose(_np(x), _np(y), atol=1e-12)
    q, tau = ft.geqrf(ours)
    c = rng.standard_normal((4, 2)) + 0j
    np.testing.assert_allclose(
        _np(ft.ormqr(q, tau, ft.tensor(c), True, True)),
        _np(torch.ormqr(*torch.geqrf(theirs), torch.tensor(c), True, True)), atol=1e-12)
    np.testing.assert_allclose(_np(ft.orgqr(q, tau)), _np(torch.orgqr(*torch.geqrf(theirs))),
                               atol=1e-12)
    for shape in ((0, 3), (3, 0)):
        r = ft.geqrf(ft.zeros(*shape))
        assert tuple(r.a.shape) == shape and tuple(r.tau.shape) == (0,)
    assert "geqrf(" in repr(ft.geqrf(ft.eye(2)))


def test_geqrf_backward_raises_as_torch() -> None:
    torch = pytest.importorskip("torch")
    a = ft.randn(3, 2, requires_grad=True)
    ta = torch.randn(3, 2, requires_grad=True)
    out, tout = a.geqrf(), ta.geqrf()
    assert type(out.a.grad_fn).__name__ == type(tout.a.grad_fn).__name__
    _raises_same(lambda: out.a.sum().backward(), lambda: tout.a.sum().backward())


def test_householder_errors_match_torch() -> None:
    torch = pytest.importorskip("torch")
    cases = [
        ("geqrf", [(3,)], {}), ("geqrf", [(3, 3, "int64")], {}),
        ("geqrf", [(3, 3, "float16")], {}),
        ("ormqr", [(3,), (3,), (3, 2)], {}), ("ormqr", [(3, 3), (3,), (3,)], {}),
        ("ormqr", [(4, 3), (4,), (4, 2)], {}), ("ormqr", [(4, 3), (2,), (3, 2)], {}),
        ("ormqr", [(4, 3), (2,), (2, 4)], {"left": False}),
        ("ormqr", [(4, 3), (3,), (2, 3)], {"left": False}),
        ("ormqr", [(4, 3), (1, 3), (4, 2)], {}), ("ormqr", [(2, 4, 3), (2, 3), (4, 2)], {}),
        ("ormqr", [(2, 4, 3), (3, 3), (2, 4, 2)], {}),
        ("ormqr", [(2, 4, 3), (2, 3), (3, 4, 2)], {}),
        ("ormqr", [(4, 3), (3, "float64"), (4, 2)], {}),
        ("ormqr", [(4, 3), (3,), (4, 2, "float64")], {}),
        ("ormqr", [(4, 3, "int64"), (3, "int64"), (4, 2, "int64")], {}),
        ("orgqr", [(3,), (3,)], {}), ("orgqr", [(4, 3), (4,)], {}),
        ("orgqr", [(3, 4), (3,)], {}), ("orgqr", [(4, 3), (1, 3)], {}),
        ("orgqr", [(2, 4, 3), (3, 3)], {}), ("orgqr", [(4, 3), (3, "float64")], {}),
        ("orgqr", [(4, 3, "float16"), (3, "float16")], {}),
    ]
    for name, specs, kw in cases:
        def make(mod: Any, specs: Any = specs) -> list[Any]:
            out = []
            for s in specs:
                dt = s[-1] if isinstance(s[-1], str) else "float32"
                dims = [d for d in s if not isinstance(d, str)]
                out.append(mod.ones(*dims, dtype=getattr(mod, dt)))
            return out

        _raises_same(lambda name=name, kw=kw, make=make: getattr(ft, name)(*make(ft), **kw),
                     lambda name=name, kw=kw, make=make: getattr(torch, name)(*make(torch),
                                                                              **kw))


def test_removed_methods_and_backends_raise_as_torch() -> None:
    torch = pytest.importorskip("torch")
    for name, args in (("eig", ()), ("symeig", ()), ("lstsq", (1,)), ("solve", (1,)),
                       ("reinforce", (1,)), ("xpu", ()), ("ipu", ()), ("mtia", ()),
                       ("is_coalesced", ())):
        _raises_same(lambda n=name, a=args: getattr(ft.ones(2, 2), n)(*a),
                     lambda n=name, a=args: getattr(torch.ones(2, 2), n)(*a))


def test_dense_facts_and_module_load() -> None:
    x = ft.ones(2, 3)
    assert (x.dense_dim(), x.sparse_dim(), ft.tensor(1.0).dense_dim()) == (2, 0, 0)
    assert x.to_dense() is x and x.to_dense(masked_grad=True) is x
    assert x.to_dense(ft.float64).dtype is ft.float64
    with pytest.warns(UserWarning, match="volatile was removed"):
        assert x.volatile is False
    leaf = ft.ones(2, requires_grad=True)
    assert leaf.grad_dtype is ft.float32
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf"):
        _ = (leaf * 2).grad_dtype
    p, v = ft.zeros(2), ft.tensor([1.0, 2.0])
    got = p.module_load(v)
    assert got is not p and p.tolist() == [1.0, 2.0] and got.tolist() == [1.0, 2.0]
    assert p.module_load(v, assign=True).data_ptr() == v.data_ptr()


def test_map2_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    outs = []
    for mod in (ft, torch):
        a = mod.arange(4.0)
        r = a.map2_(mod.ones(4), mod.tensor([3.0]), lambda p, q, s: p * q + s)
        outs.append((r is a, a.tolist(), a._version))
    assert outs[0] == outs[1]
    _raises_same(lambda: ft.ones(2).map2_(ft.ones(2), ft.ones(2), lambda *a: "x"),
                 lambda: torch.ones(2).map2_(torch.ones(2), torch.ones(2), lambda *a: "x"))
    _raises_same(
        lambda: ft.ones(2, requires_grad=True).map2_(ft.ones(2), ft.ones(2), lambda *a: 1.0),
        lambda: torch.ones(2, requires_grad=True).map2_(torch.ones(2), torch.ones(2),
                                                        lambda *a: 1.0))


def test_resize_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    for mod in (ft, torch):
        x = mod.arange(6.0, requires_grad=True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        assert type(y.grad_fn).__name__ == "ResizeBackward"
        (y * mod.arange(6.0).view(2, 3)).sum().backward()
        assert x.grad.tolist() == list(range(6))
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = mod.arange(6.0).resize_as(mod.ones(3, 2))
        assert z.shape == (3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(lambda: ft.arange(6.0).resize((3, 2)),
                     lambda: torch.arange(6.0).resize((3, 2)))
        _raises_same(lambda: ft.arange(6.0).resize(2, 4), lambda: torch.arange(6.0).resize(2, 4))
        plain = ft.arange(6.0)
        assert plain.resize(3, 2).data_ptr() == plain.data_ptr()


def test_set_overloads_match_torch() -> None:
    torch = pytest.importorskip("torch")
    res = []
    for mod in (ft, torch):
        src = mod.arange(6.0)
        s = mod.zeros(2)
        r = s.set_(src)
        row = [r is s, s.tolist(), s._version, src._version, s.data_ptr() == src.data_ptr()]
        s.add_(1)
        row += [src.tolist(), s._version, src._version]
        w = mod.zeros(2).set_(src, 1, (2, 2), (1, 2))
        row += [w.tolist(), w.storage_offset(), w.stride()]
        row.append(mod.zeros(2).set_(src, 2, (2,)).tolist())
        e = mod.arange(3.0)
        e.set_()
        row += [tuple(e.shape), e._version]
        row.append(mod.zeros(3).set_(mod.arange(6.0).untyped_storage(), 1, (2,)).tolist())
        n = mod.zeros(2) * mod.ones(2, requires_grad=True)
        n.set_(mod.arange(2.0))
        row.append(n.requires_grad)
        res.append(row)
    assert res[0] == res[1]
    _raises_same(lambda: ft.zeros(2).set_(ft.arange(6)),
                 lambda: torch.zeros(2).set_(torch.arange(6)))
    _raises_same(lambda: ft.zeros(2, requires_grad=True).set_(ft.arange(6.0)),
                 lambda: torch.zeros(2, requires_grad=True).set_(torch.arange(6.0)))
    n = ft.zeros(2) * ft.ones(2, requires_grad=True)
    n.set_(ft.arange(2.0))
    with pytest.raises(RuntimeError, match="derivative for set_ is not implemented"):
        n.sum().backward()


def test_storages_match_torch() -> None:
    torch = pytest.importorskip("torch")
    for mod in (ft, torch):
        x = mod.arange(6.0)[2:]
        us = x.untyped_storage()
        assert (us.nbytes(), us.size(), len(us), us.element_size()) == (24, 24, 24, 1)
        assert us.data_ptr() == x.data_ptr() - 8
        assert us.tolist()[4:8] == [0, 0, 128, 63]
    assert repr(ft.zeros(0).untyped_storage()) == repr(torch.zeros(0).untyped_storage())
    assert repr(ft.tensor([1, 2], dtype=ft.int16).untyped_storage()) == \
        repr(torch.tensor([1, 2], dtype=torch.int16).untyped_storage())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dt in ("float32", "int64", "bool", "bfloat16", "complex64", "uint16"):
            ours = ft.zeros(2, dtype=getattr(ft, dt)).storage_type()
            theirs = torch.zeros(2, dtype=getattr(torch, dt)).storage_type()
            assert repr(ours) == repr(theirs)
        t = ft.tensor([1.5, 2.5])
        st_ = t.storage()
        st_[1] = 5.0
        assert t.tolist() == [1.5, 5.0]
        assert repr(st_) == repr(torch.tensor([1.5, 5.0]).storage())
        assert (st_.size(), st_.nbytes(), st_.element_size(), st_.dtype) == (2, 8, 4, ft.float32)


def test_as_subclass_shares_tensor() -> None:
    torch = pytest.importorskip("torch")
    res = []
    for mod in (ft, torch):
        class Mine(mod.Tensor):  # type: ignore[name-defined,misc]
            pass

        x = mod.ones(3, requires_grad=True)
        y = x.as_subclass(Mine)
        z = mod.arange(3.0)
        w = z.as_subclass(Mine)
        w.add_(1)
        res.append([type(y).__name__, type(y.grad_fn).__name__, y.requires_grad, y.is_leaf,
                    y.data_ptr() == x.data_ptr(), z.tolist(), z._version, w._version])
        (y * 2).sum().backward()
        res[-1].append(x.grad.tolist())
    assert res[0] == res[1]
    _raises_same(lambda: ft.ones(1).as_subclass(int), lambda: torch.ones(1).as_subclass(int))


def test_slice_inverse_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    res = []
    for mod in (ft, torch):
        x = mod.arange(12.0).reshape(3, 4)
        r = mod.slice_inverse(x[:, ::2], x, 1, None, None, 2)
        res.append([r.tolist(), r.data_ptr() == x.data_ptr()])
        leaf = mod.ones(3, 4, requires_grad=True)
        out = mod.slice_inverse(leaf[1:3], leaf.detach(), 0, 1, 3)
        res[-1].append(type(out.grad_fn).__name__)
        (out * mod.arange(12.0).reshape(3, 4)).sum().backward()
        res[-1].append(leaf.grad.tolist())
    assert res[0] == res[1]
    _raises_same(lambda: ft.slice_inverse(ft.zeros(2, 4), ft.arange(12.0).reshape(3, 4), 0, 1, 3),
                 lambda: torch.slice_inverse(torch.zeros(2, 4),
                                             torch.arange(12.0).reshape(3, 4), 0, 1, 3))


def test_hash_tensor_matches_torch() -> None:
    torch = pytest.importorskip("torch")
    cases = [([1.5, -2.0], "float32", {}), ([3, 7, 1], "int64", {}),
             ([True, False, True], "bool", {}), ([1.5], "float16", {}), ([-1], "int8", {}),
             ([200], "uint8", {}), ([1.0], "bfloat16", {}),
             ([float("nan"), -0.0], "float32", {}),
             (np.arange(12.0).reshape(3, 4).tolist(), "float64", {"dim": 1}),
             (np.arange(12.0).reshape(3, 4).tolist(), "float32", {"dim": (0, 1),
                                                                  "keepdim": True}),
             (np.zeros((2, 3)).tolist(), "float32", {"dim": []}), (2.5, "float32", {}),
             (np.zeros((2, 0)).tolist(), "float32", {"dim": 0})]
    for data, dt, kw in cases:
        a = ft.hash_tensor(ft.tensor(data, dtype=getattr(ft, dt)), **kw)
        b = torch.hash_tensor(torch.tensor(data, dtype=getattr(torch, dt)), **kw)
        assert a.tolist() == b.tolist() and str(a.dtype) == str(b.dtype) and repr(a) == repr(b)
    for data, dt, kw in [([[0.0]] * 2, "float32", {"dim": 5}), ([1.0], "float32", {"mode": 1}),
                         ([1.0], "complex64", {}), (np.zeros((2, 0)).tolist(), "float32",
                                                    {"dim": 1}),
                         (np.zeros((2, 3)).tolist(), "float32", {"dim": (0, 0)}),
                         ([], "float32", {})]:
        _raises_same(lambda d=data, t=dt, k=kw: ft.hash_tensor(ft.tensor(d, dtype=getattr(ft, t)),
                                                               **k),
                     lambda d=data, t=dt, k=kw: torch.hash_tensor(
                         torch.tensor(d, dtype=getattr(torch, t)), **k))
