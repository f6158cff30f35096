"""Sparse COO tensors against PyTorch 2.13: values, reprs, gradients, optimizer steps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad.torch as ftorch

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@st.composite
def coo(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    nnz = draw(st.integers(0, 6))
    idx = np.array([[draw(st.integers(0, rows - 1)) for _ in range(nnz)],
                    [draw(st.integers(0, cols - 1)) for _ in range(nnz)]], np.int64)
    # (nonzero: the sign of a zero product of duplicates is not PyTorch's, see sharp_bits)
    vals = np.array([draw(st.integers(1, 9)) * draw(st.sampled_from([-1, 1]))
                     for _ in range(nnz)], np.float32) / 4
    return idx.reshape(2, nnz), vals, (rows, cols)


def both(idx: np.ndarray, vals: np.ndarray, size: tuple[int, ...]) -> tuple[object, object]:
    return (ftorch.sparse_coo_tensor(ftorch.tensor(idx), ftorch.tensor(vals), size),
            torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), size))


@settings(max_examples=15, deadline=None)
@given(coo(), coo())
def test_values_reprs_and_arithmetic(a: tuple, b: tuple) -> None:
    fs, ts = both(*a)
    assert repr(fs) == repr(ts)
    assert repr(fs.coalesce()) == repr(ts.coalesce())
    assert fs.is_coalesced() == ts.is_coalesced() and fs._nnz() == ts._nnz()
    np.testing.assert_array_equal(fs.to_dense().numpy(), ts.to_dense().numpy())
    assert repr(fs * 2) == repr(ts * 2) and repr(-fs) == repr(-ts)
    assert repr(fs * fs) == repr(ts * ts)
    if a[2] == b[2]:
        fb, tb = both(*b)
        assert repr(fs + fb) == repr(ts + tb)
        assert repr(fs * fb) == repr(ts * tb)
    d = np.arange(a[2][1] * 2, dtype=np.float32).reshape(a[2][1], 2)
    np.testing.assert_allclose(ftorch.sparse.mm(fs, ftorch.tensor(d)).numpy(),
                               torch.sparse.mm(ts, torch.tensor(d)).numpy(), rtol=1e-6)
    np.testing.assert_allclose((fs @ ftorch.tensor(d)).numpy(),
                               (ts @ torch.tensor(d)).numpy(), rtol=1e-6)
    for dim in (0, 1):
        assert repr(ftorch.sparse.sum(fs, dim)) == repr(torch.sparse.sum(ts, dim))
    np.testing.assert_allclose(ftorch.sparse.sum(fs).numpy(), torch.sparse.sum(ts).numpy())
    dense = np.ones(a[2], np.float32)
    np.testing.assert_array_equal((ftorch.tensor(dense) + fs).numpy(),
                                  (torch.tensor(dense) + ts).numpy())
    assert repr(ftorch.tensor(a[1]).reshape(-1, 1)) if a[1].size else True
    fd, td = ftorch.tensor(dense * 3), torch.tensor(dense * 3)
    assert repr(fd.to_sparse()) == repr(td.to_sparse())


@settings(max_examples=10, deadline=None)
@given(coo())
def test_gradients(a: tuple) -> None:
    idx, vals, size = a
    fv = ftorch.tensor(vals, requires_grad=True)
    tv = torch.tensor(vals, requires_grad=True)
    fs = ftorch.sparse_coo_tensor(ftorch.tensor(idx), fv, size)
    ts = torch.sparse_coo_tensor(torch.tensor(idx), tv, size)
    assert repr(fs) == repr(ts)
    w = np.linspace(-1, 1, size[1] * 3, dtype=np.float32).reshape(size[1], 3)
    fw, tw = ftorch.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    (ftorch.sparse.mm(fs, fw).pow(2).sum() + fs.coalesce().to_dense().sum()).backward()
    (torch.sparse.mm(ts, tw).pow(2).sum() + ts.coalesce().to_dense().sum()).backward()
    np.testing.assert_allclose(fv.grad.numpy(), tv.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fw.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    # A sparse leaf's gradient: sparse, with the leaf's coalesced pattern.
    fl, tl = both(idx, vals, size)
    fl.requires_grad_()
    tl.requires_grad_()
    ftorch.sparse.mm(fl, ftorch.tensor(w)).sum().backward()
    torch.sparse.mm(tl, torch.tensor(w)).sum().backward()
    assert repr(fl.grad) == repr(tl.grad)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.sampled_from([None, 0, 3]))
def test_embedding_sparse_grad(rows: list[int], pad: int | None) -> None:
    grads = []
    for lib in (ftorch, torch):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(6, 3, sparse=True, padding_idx=pad)
        idx = lib.tensor(rows)
        emb(idx).pow(2).sum().backward()
        grads.append(repr(emb.weight.grad))
    assert grads[0] == grads[1]


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=6), st.sampled_from([None, 0, 3]),
       st.sampled_from(["sum", "mean"]))
def test_embedding_bag_sparse_grad(rows: list[int], pad: int | None, mode: str) -> None:
    grads = []
    for lib in (ftorch, torch):
        lib.manual_seed(0)
        bag = lib.nn.EmbeddingBag(6, 3, sparse=True, padding_idx=pad, mode=mode)
        offsets = lib.tensor([0, len(rows) // 2])
        bag(lib.tensor(rows), offsets).pow(2).sum().backward()
        grads.append(repr(bag.weight.grad))
    assert grads[0] == grads[1]


@pytest.mark.parametrize(("name", "kw"), [("SparseAdam", {"lr": 0.05, "maximize": True}),
                                          ("SGD", {"lr": 0.1, "momentum": 0.9,
                                                   "nesterov": True}),
                                          ("Adagrad", {"lr": 0.1}),
                                          ("Adagrad", {"lr": 0.1, "lr_decay": 0.01,
                                                       "initial_accumulator_value": 0.1}),
                                          ("SGD", {"lr": 0.1}),
                                          ("SGD", {"lr": 0.1, "momentum": 0.9})])
def test_optimizer_trajectories(name: str, kw: dict) -> None:
    out = []
    for lib in (ftorch, torch):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(6, 3, sparse=True)
        opt = getattr(lib.optim, name)([emb.weight], **kw)
        for k in range(3):
            opt.zero_grad()
            ix = lib.tensor([[1, 2, 1], [4, 1, 0]]) if k % 2 == 0 else lib.tensor([3, 3])
            emb(ix).pow(2).sum().backward()
            opt.step()
        out.append(emb.weight.detach().numpy().copy())
    if name == "SGD":
        np.testing.assert_array_equal(out[0], out[1])
    else:
        # PyTorch's vectorized float32 sqrt is not always correctly rounded (sharp_bits):
        # SparseAdam and Adagrad agree to the last bits.
        np.testing.assert_array_max_ulp(out[0], out[1], maxulp=4)


def test_errors() -> None:
    fs, ts = both(np.array([[0, 1, 1], [2, 0, 0]]), np.array([1, 2, 3], np.float32), (2, 3))
    for f in (lambda s: s.indices(), lambda s: s.values(), lambda s: s + 1,
              lambda s: s.reshape(6), lambda s: s.numpy(), lambda s: s.contiguous()):
        with pytest.raises(Exception) as te:
            f(ts)
        with pytest.raises(type(te.value)) as fe:
            f(fs)
        assert str(fe.value) == str(te.value)
    with pytest.raises(NotImplementedError, match="Could not run 'aten::view' with arguments "
                       "from the 'SparseCPU' backend"):
        fs.view(6)
    for lib in (ftorch, torch):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        emb(lib.tensor([1])).sum().backward()
        with pytest.raises(RuntimeError, match="Adam does not support sparse gradients, "
                           "please consider SparseAdam instead"):
            lib.optim.Adam(emb.parameters()).step()
        with pytest.raises(NotImplementedError, match="Could not run "
                           "'aten::linalg_vector_norm' with arguments from the 'SparseCPU'"):
            lib.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
        opt = lib.optim.SGD(emb.parameters(), lr=0.1)
        opt.zero_grad(set_to_none=False)
        assert emb.weight.grad._nnz() == 0 and emb.weight.grad.is_sparse
        w = lib.nn.Parameter(lib.ones(2))
        w.grad = lib.ones(2)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            lib.optim.SparseAdam([w]).step()


# Expressions evaluated with both libraries (``lib``): reprs (values, errors) must agree.
_S = "lib.sparse_coo_tensor([[0, 1, 1], [2, 0, 0]], [3., 4., 5.], (2, 3))"
_H = "lib.sparse_coo_tensor([[0, 2, 0]], [[1., 2.], [3., 4.], [5., 6.]], (3, 2))"
_D = "lib.arange(6.).reshape(3, 2)"
_EXPRESSIONS = [
    f"{_S}.t()", f"{_S}.T", f"{_S}.permute(1, 0)", f"{_S}.unsqueeze(0)", f"{_S}.unsqueeze(2)",
    f"{_S}[1]", f"{_S}.select(1, 0)", f"{_S}.sqrt()", f"{_S}.pow(-1)", f"{_S}.double()",
    f"{_S}.norm()", f"{_S}.sum()", f"{_S} / 2", f"{_S} - {_S}", f"{_S}.coalesce().indices()",
    f"lib.ones(2, 3) * {_S}", f"lib.ones(2, 3) + {_S}", f"lib.ones(2, 3).sparse_mask({_S})",
    f"lib.sparse.softmax({_S}, 1)", f"lib.sparse.log_softmax({_S}, 0)",
    f"lib.sparse.sum({_S}, 1)", f"lib.hspmm({_S}, {_D})", f"lib.smm({_S}, {_D})",
    f"lib.addmm(lib.ones(2, 2), {_S}, {_D}, beta=2, alpha=3)",
    f"lib.sparse.addmm(lib.ones(2, 2), {_S}, {_D})", f"lib.mm(lib.ones(4, 2), {_S})",
    f"{_S} @ lib.ones(3)", f"{_H}", f"{_H}.coalesce()", f"{_H}.to_dense()",
    f"lib.sparse.sum({_H}, 1)", f"lib.sparse.sum({_H}, 0)", f"{_D}.to_sparse(1)",
    "lib.tensor(3.).to_sparse()", "lib.tensor([[0, 2], [0, 0]]).to_sparse()",
    "lib.tensor([[0., 1.5]], dtype=lib.float64).to_sparse()",
    "lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.long), lib.zeros(0, 3))",
    # errors
    f"{_S}.view(6)", f"{_S}.reshape(6)", f"{_S} + 1", f"{_S}.contiguous()", f"{_S}.nbytes",
    f"{_S}.to_dense(lib.float64)", f"{_S}.pow(0)", f"{_H}.t()", f"{_H}.transpose(0, 1)",
    f"{_S} / lib.ones(2, 3)", f"{_S} + {_H}", f"{_S} * {_H}", f"{_D}.to_sparse(3)",
    f"lib.sparse.mm({_S}, {_D}.double())",
    "lib.sparse_coo_tensor([[0, -1]], [1., 2.], (3,), check_invariants=True)",
    "lib.sparse_coo_tensor([[0, 5]], [1., 2.], (3,), check_invariants=True)",
    "lib.sparse_coo_tensor([[0, 1]], [1., 2., 3.], (3,))",
    "lib.sparse_coo_tensor([0, 1], [1., 2.], (3,))",
    "lib.sparse_coo_tensor([[0, 1]], 5., (3,))",
    "lib.sparse_coo_tensor([[0, 1]], [1, 2], (3,)).requires_grad_()",
]


def _outcome(lib: object, expr: str) -> str:
    try:
        out = eval(expr, {"lib": lib})  # noqa: S307 - the test's own expressions
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return f"{type(e).__name__}: {str(e)[:300]}"
    return repr(out)


@pytest.mark.parametrize("expr", _EXPRESSIONS)
def test_expressions_as_torch(expr: str) -> None:
    assert _outcome(ftorch, expr) == _outcome(torch, expr)


def test_node_names_and_gradients() -> None:
    outs = []
    for lib in (ftorch, torch):
        v = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        s = lib.sparse_coo_tensor([[0, 1, 1], [1, 0, 0]], v, (2, 2))
        d = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        results = [s.to_dense(), lib.sparse.mm(s, d), s @ d, lib.addmm(d, s, d), d @ s,
                   lib.sparse.sum(s, 0), lib.sparse.softmax(s, 1), s.t(), s - s,
                   lib.hspmm(s, d), s.coalesce(), d.to_sparse()]
        names = [r.grad_fn.name() for r in results]
        loss = (lib.sparse.softmax(s, 1).to_dense() * d).sum() + \
            lib.sparse.sum(s.coalesce(), 1).to_dense().pow(2).sum() + (d @ s).pow(2).sum()
        loss.backward()
        outs.append((names, v.grad.numpy().copy(), d.grad.numpy().copy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)
    np.testing.assert_allclose(outs[0][2], outs[1][2], rtol=1e-6)


_C = "lib.tensor([[0., 2., 0.], [3., 0., 4.]]).to_sparse_csr()"
_CSR_EXPRESSIONS = [
    _C, f"{_C}.crow_indices()", f"{_C}.col_indices()", f"{_C}.values()", f"{_C}.to_dense()",
    f"{_C}.to_sparse()", f"{_C} * 2", f"{_C} + {_C}", f"{_C}.sum()", f"{_C}.layout",
    f"({_C}.is_sparse, {_C}.is_sparse_csr)", f"{_C} @ lib.ones(3, 2)",
    f"lib.addmm(lib.ones(2, 1), {_C}, lib.ones(3, 1))", f"lib.matmul({_C}, lib.ones(3))",
    "lib.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1, 2, 3])",
    "lib.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1., 2, 3], (2, 4), dtype=lib.float64)",
    "lib.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1., 2, 3], requires_grad=True)",
    "lib.zeros(2, 2).to_sparse_csr()", "lib.tensor([[0., 1.]]).to_sparse(layout=lib.sparse_csr)",
    f"{_S}.to_sparse_csr()", f"{_C}.indices()", f"{_C}.is_coalesced()", f"{_C}.view(6)",
    f"{_C}.sqrt()", f"-{_C}", f"{_C}.abs()", f"{_C}.pow(2)", f"{_C}.detach()",
]


@pytest.mark.parametrize("expr", _CSR_EXPRESSIONS)
def test_csr_as_torch(expr: str) -> None:
    assert _outcome(ftorch, expr) == _outcome(torch, expr)


@settings(max_examples=10, deadline=None)
@given(coo())
def test_csr_gradients(a: tuple) -> None:
    idx, vals, size = a
    dense = np.zeros(size, np.float32)
    np.add.at(dense, tuple(idx), vals)
    w = np.linspace(-1, 1, size[1] * 2, dtype=np.float32).reshape(size[1], 2)
    grads = []
    for lib in (ftorch, torch):
        c = lib.tensor(dense).to_sparse_csr()
        v = c.values().detach().clone().requires_grad_()
        c = lib.sparse_csr_tensor(c.crow_indices(), c.col_indices(), v, size)
        assert repr(c) if lib is ftorch else True
        (c @ lib.tensor(w)).pow(2).sum().backward()
        grads.append((repr(c.detach()), v.grad.numpy().copy()))
    assert grads[0][0] == grads[1][0]
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-5, atol=1e-6)
