"""Differences from PyTorch 2.13 found by review, each compared with PyTorch itself:
einsum's, integer pow's, where's, arange's and MultiheadAttention's mask errors (type and
text), integer powers by negative integer tensors, the samplers' orders under a seeded
generator, gradient accumulation into an existing ``.grad`` (0-d included, in place) and
strided windows over Fortran-ordered storage (``set_``, ``as_strided``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad.torch as ft

torch = pytest.importorskip("torch", exc_type=ImportError)


def outcome(fn, lib):
    """What ``fn(lib)`` gives: its value as a list (with its dtype), or its error."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return (type(e).__name__, str(e))
    if isinstance(out, (ft.Tensor, torch.Tensor)):
        return ("ok", out.tolist(), str(out.dtype).replace("funcgrad.", ""))
    return ("ok", out)


def same(fn):
    assert outcome(fn, ft) == outcome(fn, torch)


# ------------------------------------------------------------------ einsum

EINSUM = [
    ("ij,jk->ik", [(2, 3), (4, 2)]), ("ij,jk", [(2, 3)]), ("ij->ij", [(2, 3), (2,)]),
    ("i1->i", [(2,)]), ("ij->k", [(2, 3)]), ("ij->ii", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 3, 2)]), ("...ij,...jk->...ik", [(2, 2, 3), (1, 3, 2)]),
    ("ij,jk->ik", [(2, 3), (3,)]), ("i,i", [(2,), (3,)]), ("ii", [(2, 3)]), ("i->i->i", [(2,)]),
    ("i.j", [(2, 2)]), ("ij", [(2,)]), ("...i,i", [(2, 3), (2,)]), ("i,j->", [(2,), (3,)]),
    ("bij,bjk->bik", [(2, 2, 3), (3, 3, 4)]), ("ii,i", [(2, 3), (4,)]), ("i,ii", [(4,), (2, 3)]),
    ("i,ii", [(2,), (2, 3)]), ("ij,ji", [(1, 3), (2, 2)]), ("...ij", [(2,)]),
    ("...ijk,ij", [(2,), (2, 2)]), ("...i,...i", [(5, 2, 3), (4, 3)]),
    ("...i,...i", [(2, 3), (1, 4, 3)]), ("i...->...i...", [(2, 3)]), ("i...->i.", [(2, 3)]),
    ("i..->i", [(2, 3)]), ("i.....", [(2, 3)]), ("i...j...", [(2, 3)]), ("i->I", [(2,)]),
    ("i->,", [(2,)]), ("i -> i", [(2,)]), ("ij,jk->ik", [(2, 0), (3, 2)]), ("ii->i", [(0, 3)]),
    ("i j,jk->ik", [(2, 3), (4, 2)]), ("ij,jk-", [(2, 3), (3, 2)]), ("ij->k", [(2,)]),
    ("i1,j->k", [(2,)]), ("ij,jk->k1", [(2, 3), (4, 2)]), ("ij,jk->kk", [(2, 3), (4, 2)]),
    ("ij...,kj...->ik", [(2, 1, 5), (3, 2, 4)]), ("i...i", [(2, 4, 3)]), ("i\u03bb", [(2, 2)]),
    ("ij,jk->ik", [(2, 1), (3, 2)]), ("ab,bc->ca", [(2, 3), (3, 4)]),
    # three operands: PyTorch's own checks (opt_einsum, when installed, has its own)
    ("i,i,i", [(1,), (3,), (2,)]), ("...i,...i,...i", [(2, 4, 3), (1, 3), (5, 1, 3)]),
]


@pytest.fixture
def native_einsum():
    enabled = torch.backends.opt_einsum.enabled
    torch.backends.opt_einsum.enabled = False
    yield
    torch.backends.opt_einsum.enabled = enabled


@pytest.mark.parametrize(("equation", "shapes"), EINSUM)
def test_einsum_errors_as_torch(equation, shapes, native_einsum):
    same(lambda L: L.einsum(equation, *[L.arange(float(np.prod(s))).reshape(s)
                                        for s in shapes]))


def test_einsum_error_is_runtime_error():
    with pytest.raises(RuntimeError, match="subscript j has size 4 for operand 1 which does "
                                           "not broadcast with previously seen size 3"):
        ft.einsum("ij,jk->ik", ft.ones(2, 3), ft.ones(4, 2))


# ------------------------------------------------------------------ pow

POW = [
    lambda L: L.tensor([2, 3]) ** -1, lambda L: L.pow(L.tensor([2, 3]), -2),
    lambda L: L.tensor([2, 3]).pow_(-1), lambda L: L.tensor([2], dtype=L.uint8) ** -1,
    lambda L: L.tensor([True]) ** -1, lambda L: L.tensor(2) ** -1,
    lambda L: L.tensor([], dtype=L.int64) ** -1, lambda L: L.tensor([2]) ** -1.0,
    lambda L: L.tensor([2, 1, -1, -1, 0]) ** L.tensor(-1),
    lambda L: L.tensor([2, 1, -1, -1]) ** L.tensor([-2, -3, -2, -3]),
    lambda L: L.tensor([0]) ** L.tensor([-1]), lambda L: 2 ** L.tensor([-1, 1]),
    lambda L: (-1) ** L.tensor([-1, -2, 3]), lambda L: L.pow(2, L.tensor([-1, 1])),
    lambda L: L.tensor([2], dtype=L.int8) ** L.tensor([-1]),
    lambda L: L.tensor([1, 2], dtype=L.uint8) ** L.tensor([-1, 3], dtype=L.int8),
    lambda L: L.tensor([2, 1, -1]).pow_(L.tensor([-1, -1, -3])),
    lambda L: L.tensor([2, 3]) ** L.tensor([2, 0]), lambda L: L.tensor([2]) ** 0,
    lambda L: L.tensor([2.0, 3.0]) ** L.tensor([-1, 2]),
    lambda L: L.float_power(L.tensor([2]), -1),
]


@pytest.mark.parametrize("fn", POW)
def test_integer_pow_as_torch(fn):
    same(fn)


# ------------------------------------------------------------------ where


WHERE = [
    (lambda L: L.int8, 300), (lambda L: L.int8, 128), (lambda L: L.int8, -129),
    (lambda L: L.int8, -128), (lambda L: L.uint8, -1), (lambda L: L.uint8, -255),
    (lambda L: L.uint8, -256), (lambda L: L.uint8, 256), (lambda L: L.uint8, 255),
    (lambda L: L.int16, 40000), (lambda L: L.int32, 2 ** 31), (lambda L: L.int64, 2 ** 63),
    (lambda L: L.int64, 2 ** 64), (lambda L: L.bool, 300), (lambda L: L.int8, 1000.0),
]


@pytest.mark.parametrize(("dtype", "value"), WHERE)
def test_where_scalar_conversion_as_torch(dtype, value):
    cond = [True, False]
    same(lambda L: L.where(L.tensor(cond), L.tensor([1, 2], dtype=dtype(L)), value))
    same(lambda L: L.where(L.tensor(cond), value, L.tensor([1, 2], dtype=dtype(L))))
    same(lambda L: L.tensor([1, 2], dtype=dtype(L)).where(L.tensor(cond), value))


@pytest.mark.parametrize("fn", [
    lambda L: L.tensor([1], dtype=L.int8) + 300, lambda L: L.tensor([1], dtype=L.int8) * 300,
    lambda L: L.tensor([44], dtype=L.int8) == 300, lambda L: L.tensor([1], dtype=L.uint8) - 257,
])
def test_out_of_range_number_wraps_as_torch(fn):
    same(fn)


# ------------------------------------------------------------------ arange / range


@pytest.mark.parametrize("dtype", ["bool", "float16", "bfloat16", "uint16", "uint32",
                                   "uint64", "complex64", "complex128", "int8"])
def test_arange_and_range_dtypes_as_torch(dtype):
    same(lambda L: L.arange(12, dtype=getattr(L, dtype)))
    same(lambda L: L.arange(0.5, 3, dtype=getattr(L, dtype)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.range is deprecated
        same(lambda L: L.range(0, 2, dtype=getattr(L, dtype)))


# ------------------------------------------------------------------ MultiheadAttention


def _mha_case(L, kw, q=(4, 2, 8), k=(4, 2, 8), v=None, **call):
    rng = np.random.default_rng(0)
    m = L.nn.MultiheadAttention(8, 2, **kw)
    args = [L.tensor(rng.standard_normal(s), dtype=L.float32) for s in (q, k, v or k)]
    out, w = m(*args, **{n: L.tensor(a.astype(np.float32) if a.dtype == np.float64 else a)
                         if isinstance(a, np.ndarray) else a for n, a in call.items()})
    return [tuple(out.shape), None if w is None else tuple(w.shape)]


MHA = [
    ({"add_bias_kv": True, "add_zero_attn": True}, {}, {"attn_mask": np.zeros((4, 6), bool)}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {}, {"attn_mask": np.zeros((4, 4), bool)}),
    ({"add_bias_kv": True}, {}, {"attn_mask": np.zeros((4, 5))}),
    ({}, {}, {"attn_mask": np.zeros((4, 5))}), ({}, {}, {"attn_mask": np.zeros((4, 4, 4))}),
    ({}, {}, {"attn_mask": np.zeros((3, 4, 4))}), ({}, {}, {"attn_mask": np.zeros((4, 4, 5))}),
    ({}, {}, {"attn_mask": np.zeros((1, 4, 4, 4))}), ({}, {}, {"attn_mask": np.zeros(4)}),
    ({}, {}, {"attn_mask": np.zeros((4, 4), np.int64)}),
    ({}, {}, {"key_padding_mask": np.zeros((2, 4), np.int64)}),
    ({}, {}, {"key_padding_mask": np.zeros((2, 5), bool)}),
    ({}, {}, {"key_padding_mask": np.zeros((3, 4), bool)}),
    ({}, {}, {"key_padding_mask": np.zeros((2, 4, 1), bool)}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {},
     {"key_padding_mask": np.zeros((2, 4), bool)}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {},
     {"key_padding_mask": np.zeros((2, 6), bool)}),
    ({"add_bias_kv": True, "add_zero_attn": True}, {},
     {"key_padding_mask": np.zeros((2, 4), bool), "attn_mask": np.zeros((4, 4), bool)}),
    ({}, {"q": (4, 8), "k": (4, 8)}, {"attn_mask": np.zeros((2, 4, 5))}),
    ({}, {"q": (4, 8), "k": (4, 8)}, {"attn_mask": np.zeros((2, 4, 4))}),
    ({}, {"q": (4, 8), "k": (4, 8)}, {"attn_mask": np.zeros((4, 5))}),
    ({}, {"q": (4, 8), "k": (4, 8)}, {"key_padding_mask": np.zeros((1, 4), bool)}),
    ({}, {"q": (4, 8), "k": (4, 8)}, {"key_padding_mask": np.zeros(5, bool)}),
    ({}, {"q": (4, 8), "k": (4, 2, 8)}, {}), ({}, {"v": (5, 2, 8)}, {}),
    ({"kdim": 4, "vdim": 8}, {"k": (4, 2, 4), "v": (5, 2, 8)}, {}),
    ({}, {}, {"attn_mask": np.zeros((4, 5)), "is_causal": True, "need_weights": False}),
    ({}, {}, {"is_causal": True}),
]


@pytest.mark.parametrize(("kw", "shapes", "call"), MHA)
def test_multihead_attention_mask_checks_as_torch(kw, shapes, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(lambda L: _mha_case(L, kw, **shapes, **call))


@pytest.mark.parametrize("kw", [{}, {"add_bias_kv": True, "add_zero_attn": True},
                                {"add_zero_attn": True}])
def test_multihead_attention_causal_hint_values_as_torch(kw):
    # With is_causal, no padding mask and need_weights=False PyTorch attends causally over
    # the whole source (added bias and zero keys included), whatever the mask says.
    rng = np.random.default_rng(1)
    tm = torch.nn.MultiheadAttention(8, 2, **kw).double()
    fm = ft.nn.MultiheadAttention(8, 2, **kw).double()
    fm.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = rng.standard_normal((4, 2, 8))
    mask = np.triu(np.ones((4, 4), bool), 1)
    got = fm(*[ft.tensor(x)] * 3, attn_mask=ft.tensor(mask), is_causal=True,
             need_weights=False)[0]
    want = tm(*[torch.tensor(x)] * 3, attn_mask=torch.tensor(mask), is_causal=True,
              need_weights=False)[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-12)


# ------------------------------------------------------------------ samplers


def _sampled(L, make):
    from importlib import import_module

    data = import_module(L.__name__ + ".utils.data")
    g = L.Generator().manual_seed(3)
    s = make(data, g)
    return [list(s), list(s)]  # two epochs: the stream goes on


@pytest.mark.parametrize("make", [
    lambda D, g: D.SubsetRandomSampler([1, 3, 5, 7], generator=g),
    lambda D, g: D.SubsetRandomSampler(list(range(40)), generator=g),
    lambda D, g: D.RandomSampler(range(5), generator=g),
    lambda D, g: D.RandomSampler(range(5), num_samples=12, generator=g),
    lambda D, g: D.RandomSampler(range(5), num_samples=3, generator=g),
    lambda D, g: D.RandomSampler(range(7), replacement=True, num_samples=70, generator=g),
    lambda D, g: D.RandomSampler(range(3), replacement=True, generator=g),
    lambda D, g: D.WeightedRandomSampler([0.1, 0.2, 0.3, 0.4], 6, generator=g),
    lambda D, g: D.WeightedRandomSampler([1.0, 5.0, 0.0, 0.5, 3.0], 50, generator=g),
    lambda D, g: D.BatchSampler(D.SubsetRandomSampler([1, 3, 5, 7, 9], generator=g), 2, False),
])
def test_samplers_follow_a_seeded_generator_as_torch(make):
    assert _sampled(ft, make) == _sampled(torch, make)


def test_subset_random_sampler_with_tensor_indices_as_torch():
    def run(L):
        g = L.Generator().manual_seed(3)
        return [int(i) for i in L.utils.data.SubsetRandomSampler(L.tensor([10, 20, 30]),
                                                                 generator=g)]
    assert run(ft) == run(torch)


@pytest.mark.parametrize(("make", "values"), [
    (lambda D: D.SubsetRandomSampler([1, 3, 5, 7]), {1, 3, 5, 7}),
    (lambda D: D.RandomSampler(range(6)), set(range(6))),
    (lambda D: D.RandomSampler(range(6), replacement=True, num_samples=40), set(range(6))),
    (lambda D: D.WeightedRandomSampler([0.0, 1.0, 2.0], 2, replacement=False), {1, 2}),
])
def test_samplers_under_manual_seed_are_reproducible(make, values):
    # funcgrad's global stream is not PyTorch's: the same seed gives the same draws, of
    # the values and length PyTorch's give, not PyTorch's order.
    ft.manual_seed(5)
    first = list(make(ft.utils.data))
    ft.manual_seed(5)
    assert list(make(ft.utils.data)) == first
    torch.manual_seed(5)
    want = list(make(torch.utils.data))
    assert len(first) == len(want) and set(first) <= values and set(want) <= values


# ------------------------------------------------------------------ gradient accumulation


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_accumulated_grad_is_a_tensor_added_in_place_as_torch(shape):
    def run(L):
        w = L.ones(shape, requires_grad=True)
        (w * 3).sum().backward()
        first = w.grad
        (w * 3).sum().backward()
        (w * w).sum().backward()
        return (first is w.grad, w.grad.numpy().tolist(), tuple(w.grad.shape),
                first.tolist(), w.grad._version > 0)
    assert run(ft)[:4] == run(torch)[:4]


def test_zero_d_grad_after_repeated_backward_as_torch():
    def run(L):
        w = L.tensor(2.0, requires_grad=True)
        (w * 3).backward()
        (w * 3).backward()
        return w.grad.numpy().tolist(), w.grad.dim(), float(w.grad + 1)
    assert run(ft) == run(torch)


@pytest.mark.parametrize("shape", [(), (3,)])
def test_accumulated_grad_with_create_graph_as_torch(shape):
    def run(L):
        w = L.full(shape, 2.0, requires_grad=True)
        (w ** 3).sum().backward(create_graph=True)
        g1 = w.grad
        (w ** 3).sum().backward(create_graph=True)
        g = w.grad
        (gg,) = L.autograd.grad(g.sum(), w)
        return (g1 is g, g.requires_grad, g.detach().numpy().tolist(), gg.tolist(),
                g.grad_fn is not None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note on create_graph and .grad
        assert run(ft) == run(torch)


# ------------------------------------------------------------------ Fortran-ordered storage


def _fortran(L):
    return L.from_numpy(np.asfortranarray(np.arange(12.0).reshape(4, 3)))


WINDOWS = [
    lambda L: L.empty(0, dtype=L.float64).set_(_fortran(L)),
    lambda L: L.empty(0, dtype=L.float64).set_(_fortran(L).t()),
    lambda L: L.empty(0, dtype=L.float64).set_(_fortran(L).untyped_storage(), 4, (3,), (2,)),
    lambda L: L.empty(0, dtype=L.float64).set_(_fortran(L).untyped_storage(), 1, (2, 2)),
    lambda L: _fortran(L).as_strided((2, 2), (1, 4), 2),
    lambda L: _fortran(L).t().as_strided((3,), (4,), 1),
    lambda L: _fortran(L)[1:].as_strided((2, 2), (4, 1)),
    lambda L: L.empty(0, dtype=L.float64).set_(
        L.geqrf(L.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0], [1.0, 0.0, 1.0]],
                         dtype=L.float64).t())[0].t().contiguous().t()),
]


@pytest.mark.parametrize("fn", WINDOWS)
def test_windows_over_fortran_storage_as_torch(fn):
    def run(L):
        x = fn(L)
        return [round(v, 9) for v in x.reshape(-1).tolist()], tuple(x.shape), x.stride()
    assert run(ft) == run(torch)


def test_set_to_fortran_storage_shares_memory_as_torch():
    def run(L):
        q = _fortran(L)
        x = L.empty(0, dtype=L.float64).set_(q)
        x[1, 0] = -1.0
        y = L.empty(0, dtype=L.float64).set_(q.untyped_storage(), 4, (3,), (2,))
        y.add_(100.0)
        return q.tolist(), x.tolist()
    assert run(ft) == run(torch)


@pytest.mark.parametrize("expr", [
    "t.masked_fill(t > 1, 300)", "t.clone().fill_(300)", "t.clamp(0, 300)",
    "t.clamp(-300, 5)", "t.masked_fill(t > 1, -1.5)", "t.clamp(max=1000)",
    "t.clone().masked_fill_(t > 0, 127)", "T.tensor([1, 2], dtype=T.uint8).fill_(-1)",
    "T.tensor([1, 2], dtype=T.uint8).fill_(-256)", "t.clamp_min(-129)",
])
def test_python_ints_written_into_integer_tensors_are_checked_as_torch(expr):
    def run(T):
        t = T.tensor([1, 2], dtype=T.int8)
        try:
            return eval(expr, {"T": T, "t": t}).tolist()
        except RuntimeError as e:
            return str(e)

    assert run(ft) == run(torch)
