"""PyTorch-face fixes from a fifteenth side-by-side review (language models, attention,
losses, sampling grids, scatter reductions, module hooks), each compared with torch 2.13
where it is importable (independent expected values otherwise): RNN inter-layer and
attention dropout masks drawn over the layer output's own layout, the attention weights
``MultiheadAttention`` returns after its dropout, ``reshape`` of a tensor no view can give
(``UnsafeViewBackward0`` over ``CloneBackward0``), ``linear`` of a strided batch
(``AddBackward0``), ``nll_loss``/``cross_entropy`` nodes from 3 dims, half-type label
smoothing, ``affine_grid``'s node saving nothing, ``unfold`` of an empty batch and of a
1-D/2-D input, ``scatter_reduce("prod")`` gradients with repeated indices, the deprecated
``scatter(reduce=)`` warning, ``sort(stable=)``'s node, the private state-dict hook API and
``rrelu``'s training draws."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as FF

try:
    import torch
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch (the oracle) is not installed")


def _np(t):
    return np.asarray(t.detach().float().cpu().numpy() if hasattr(t, "detach") else t)


def _same(a, b):
    assert str(a.dtype) == str(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(_np(a), _np(b))


def _close(a, b, rtol=1e-5, atol=1e-6):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


# ------------------------------------------- 1. RNN / attention dropout masks (layouts)

@needs_torch
@pytest.mark.parametrize("mode", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("shape", [(4, 7, 6), (2, 2, 2), (3, 5, 6)])
def test_rnn_dropout_masks_as_torch(mode, batch_first, shape):
    b, t, h = shape
    outs = []
    for L in (ft, torch):
        L.manual_seed(1)
        rnn = getattr(L.nn, mode)(h, h, num_layers=3, batch_first=batch_first, dropout=0.3)
        x = L.randn(b, t, h) if batch_first else L.randn(t, b, h)
        y, _ = rnn(x)
        outs.append((y, L.rand(3)))
    _close(outs[0][0], outs[1][0])
    _same(outs[0][1], outs[1][1])


@needs_torch
@pytest.mark.parametrize("p", [0.1, 0.5])
@pytest.mark.parametrize("average", [True, False])
def test_mha_weights_after_dropout_as_torch(p, average):
    res = []
    for L in (ft, torch):
        L.manual_seed(0)
        mha = L.nn.MultiheadAttention(8, 2, batch_first=True, dropout=p)
        x = L.randn(3, 5, 8, requires_grad=True)
        mask = L.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
        a, w = mha(x, x, x, key_padding_mask=mask, average_attn_weights=average)
        (a.pow(2).sum() + w.pow(2).sum()).backward()
        res.append((a, w, x.grad, mha.in_proj_weight.grad))
    for ours, theirs in zip(*res):
        _close(ours, theirs, rtol=1e-4, atol=1e-5)


def test_mha_weights_after_dropout_sum_below_one():
    # Dropped weights no longer sum to 1 along a row (PyTorch returns them so).
    ft.manual_seed(0)
    mha = ft.nn.MultiheadAttention(4, 1, dropout=0.5)
    x = ft.randn(6, 1, 4)
    _, w = mha(x, x, x)
    sums = _np(w).sum(-1)
    assert not np.allclose(sums, 1.0)
    mha.eval()
    _, w = mha(x, x, x)
    np.testing.assert_allclose(_np(w).sum(-1), 1.0, rtol=1e-6)


@needs_torch
def test_sdpa_dropout_as_torch():
    res = []
    for L in (ft, torch):
        L.manual_seed(0)
        q = L.randn(2, 2, 5, 5, requires_grad=True)
        # The query's layout must not decide the order of the mask's draws.
        qt = q.transpose(-1, -2)
        o = L.nn.functional.scaled_dot_product_attention(qt, qt * 2, qt * 3, dropout_p=0.3)
        o.pow(2).sum().backward()
        res.append((o, q.grad))
    for ours, theirs in zip(*res):
        _close(ours, theirs, rtol=1e-4, atol=1e-5)


# ----------------------------------------- 2. reshape copies, linear of a strided batch

_RESHAPES = {
    "t_flat": lambda z: z.t().reshape(-1),
    "t_flatten": lambda z: z.t().flatten(),
    "free": lambda z: ft.reshape(z.t(), (6,)) if isinstance(z, ft.Tensor) else
    torch.reshape(z.t(), (6,)),
    "view_ok": lambda z: z.reshape(3, 2),
    "slice": lambda z: z[:, :2].reshape(4),
}

_EXPECTED = {"t_flat": ("UnsafeViewBackward0", False),
             "t_flatten": ("UnsafeViewBackward0", False),
             "free": ("UnsafeViewBackward0", False),
             "view_ok": ("ViewBackward0", True),
             "slice": ("UnsafeViewBackward0", False)}


@pytest.mark.parametrize("name", sorted(_RESHAPES))
def test_reshape_nodes(name):
    x = ft.arange(6.0).reshape(2, 3).requires_grad_()
    z = x * 1
    y = _RESHAPES[name](z)
    node, is_view = _EXPECTED[name]
    assert y.grad_fn.name() == node
    assert (y._base is not None) == is_view
    if not is_view:
        assert y.grad_fn.next_functions[0][0].name() == "CloneBackward0"
    y.mul_(2)
    y.sum().backward()
    want = np.array([[2.0, 2, 0], [2, 2, 0]]) if name == "slice" else np.full((2, 3), 2.0)
    np.testing.assert_array_equal(_np(x.grad), want)


def test_reshape_copy_does_not_write_through():
    x = ft.arange(6.0).reshape(2, 3)
    y = x.t().reshape(-1)
    y[0] = 100
    assert _np(x)[0, 0] == 0
    assert y.is_contiguous()


@needs_torch
@pytest.mark.parametrize("make", [lambda x: x.transpose(0, 1), lambda x: x[:, :2],
                                  lambda x: x.transpose(0, 1).unsqueeze(0), lambda x: x,
                                  lambda x: x[0]])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_node_of_strided_batches_as_torch(make, bias):
    res = []
    for L in (ft, torch):
        L.manual_seed(0)
        lin = L.nn.Linear(3, 2, bias=bias)
        x = L.randn(4, 5, 3, requires_grad=True)
        y = lin(make(x))
        (y * L.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        res.append((y.grad_fn.name(), y, x.grad, lin.weight.grad))
    assert res[0][0] == res[1][0]
    for ours, theirs in zip(res[0][1:], res[1][1:]):
        _close(ours, theirs)


def test_gru_batch_first_linear_head_node():
    gru = ft.nn.GRU(3, 3, batch_first=True)
    y, _ = gru(ft.randn(4, 5, 3))
    assert not y.is_contiguous()
    assert ft.nn.Linear(3, 2)(y).grad_fn.name() == "AddBackward0"
    assert ft.nn.Linear(3, 2)(y.contiguous()).grad_fn.name() == "ViewBackward0"


# ------------------------------------------------------------ 3. nll_loss nodes, smoothing

@pytest.mark.parametrize("shp,tshp", [((2, 4), (2,)), ((2, 4, 3), (2, 3)),
                                      ((2, 4, 3, 2), (2, 3, 2)),
                                      ((2, 4, 3, 2, 2), (2, 3, 2, 2)), ((4,), ())])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_nodes(shp, tshp, reduction):
    x = ft.randn(*shp, requires_grad=True)
    t = ft.randint(0, 4, tshp)
    if len(shp) <= 2:
        want = "NllLossBackward0"
    elif len(shp) != 4 and reduction == "none":
        want = "ViewBackward0"
    else:
        want = "NllLoss2DBackward0"
    assert FF.cross_entropy(x, t, reduction=reduction).grad_fn.name() == want
    lp = x.log_softmax(1 if len(shp) > 1 else 0)
    assert FF.nll_loss(lp, t, reduction=reduction).grad_fn.name() == want
    assert FF.cross_entropy(x, t, reduction=reduction, label_smoothing=0.1).grad_fn.name() \
        == "AddBackward0"


@needs_torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_half_label_smoothing_as_torch(dtype, reduction, weighted, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((7, 5)).astype(np.float32)
    t = np.array([1, 2, 3, 0, -100, 4, 4])
    w = np.array([1.0, 2.0, 0.5, 1.5, 0.75], np.float32)
    res = []
    for L in (ft, torch):
        d = getattr(L, dtype)
        res.append(L.nn.functional.cross_entropy(
            L.tensor(x).to(d), L.tensor(t), weight=L.tensor(w).to(d) if weighted else None,
            reduction=reduction, label_smoothing=0.3))
    _same(res[0], res[1])


# ----------------------------------------------------------- 4. affine_grid, unfold

def test_affine_grid_allows_a_second_backward():
    theta = ft.tensor([[[0.9, 0.1, 0.05], [-0.1, 1.1, 0.0]]], requires_grad=True)
    x = ft.randn(1, 2, 3, 4)
    grid = FF.affine_grid(theta, (1, 2, 3, 4), align_corners=False)
    g1, = ft.autograd.grad(FF.grid_sample(x, grid, align_corners=False).sum(), theta)
    g2, = ft.autograd.grad(FF.grid_sample(x, grid, align_corners=False).sum(), theta)
    np.testing.assert_array_equal(_np(g1), _np(g2))


def test_unfold_of_an_empty_batch():
    assert tuple(FF.unfold(ft.randn(0, 3, 4, 4), 2).shape) == (0, 12, 9)
    assert tuple(FF.unfold(ft.randn(0, 3, 4, 4), (2, 3), padding=1).shape) == (0, 18, 20)


@pytest.mark.parametrize("shape,msg", [
    ((5,), "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    ((3, 5), "Dimension out of range (expected to be in range of [-2, 1], but got 2)")])
def test_unfold_of_low_rank_inputs(shape, msg):
    with pytest.raises(IndexError) as e:
        FF.unfold(ft.randn(*shape), 2)
    assert str(e.value) == msg


# ----------------------------------------------------------- 5. scatter_reduce / scatter

@needs_torch
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("with_zero", [False, True])
def test_scatter_reduce_prod_grad_as_torch(include_self, dim, with_zero):
    rng = np.random.default_rng(3)
    src = rng.uniform(0.5, 2.0, (4, 6)).astype(np.float64)
    if with_zero:
        src[1, 2] = 0.0
    base = rng.uniform(0.5, 2.0, (4, 6))
    index = rng.integers(0, 3, (4, 6)) if dim == 1 else rng.integers(0, 4, (4, 6))
    res = []
    for L in (ft, torch):
        s = L.tensor(src, requires_grad=True)
        b = L.tensor(base, requires_grad=True)
        out = b.scatter_reduce(dim, L.tensor(index), s, "prod", include_self=include_self)
        gs, gb = L.autograd.grad((out * L.arange(24.0, dtype=L.float64).reshape(4, 6)).sum(),
                                 (s, b))
        res.append((out, gs, gb))
    for ours, theirs in zip(*res):
        _close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_scatter_reduce_prod_grad_independent():
    src = ft.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    index = ft.tensor([0, 1, 0, 1, 2, 1])
    out = ft.ones(4).scatter_reduce(0, index, src, "prod")
    g, = ft.autograd.grad(out.sum(), src)
    # d/dsrc_i of the product of its group: the product of the group's other factors.
    np.testing.assert_allclose(_np(g), [3.0, 24.0, 1.0, 12.0, 1.0, 8.0])


def test_scatter_reduce_argument_deprecated_once():
    from funcgrad.torch import _tensor

    _tensor._WARNED_ONCE.discard(
        next((m for m in _tensor._WARNED_ONCE if m.startswith("The reduce argument")), ""))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ft.zeros(3).scatter(0, ft.tensor([0, 0]), 2.0, reduce="multiply")
        assert not w  # a number src is not deprecated
        out = ft.zeros(3).scatter_(0, ft.tensor([0, 0]), ft.tensor([1.0, 2.0]), reduce="add")
        ft.zeros(3).scatter(0, ft.tensor([0, 0]), ft.tensor([1.0, 2.0]), reduce="multiply")
    assert len(w) == 1 and w[0].category is UserWarning
    assert str(w[0].message).startswith(
        "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
        "removed in a future PyTorch release. Use torch.scatter_reduce instead")
    assert w[0].filename == __file__
    np.testing.assert_array_equal(_np(out), [3.0, 0.0, 0.0])


# ------------------------------------------------------------------- 6. sort(stable=)

@pytest.mark.parametrize("call,node", [
    (lambda x: ft.sort(x), "SortBackward0"),
    (lambda x: ft.sort(x, stable=True), "SortBackward1"),
    (lambda x: ft.sort(x, stable=False), "SortBackward1"),
    (lambda x: ft.sort(x, stable=None), "SortBackward1"),
    (lambda x: x.sort(0, True), "SortBackward0"),
    (lambda x: x.sort(descending=True, stable=True), "SortBackward1"),
])
def test_sort_nodes(call, node):
    x = ft.tensor([3.0, 1.0, 2.0, 1.0], requires_grad=True)
    out = call(x)
    assert out.values.grad_fn.name() == node
    out.values.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.ones(4))


def test_sort_stable_none_keeps_values():
    x = ft.tensor([2, 1, 2, 1, 0])
    np.testing.assert_array_equal(_np(ft.sort(x, stable=True).indices), [4, 1, 3, 0, 2])
    np.testing.assert_array_equal(_np(ft.sort(x, stable=None).values), [0, 1, 1, 2, 2])


# ----------------------------------------------------- 7. the private state-dict hooks

def test_private_state_dict_hook_may_return_a_dict():
    lin = ft.nn.Linear(2, 2)

    def post(module, sd, prefix, meta):
        new = dict(sd)
        new[prefix + "extra"] = ft.tensor(1.0)
        return new

    h = lin._register_state_dict_hook(post)
    assert list(lin.state_dict()) == ["weight", "bias", "extra"]
    h.remove()
    assert list(lin.state_dict()) == ["weight", "bias"]

    def public(module, sd, prefix, meta):
        return sd

    lin.register_state_dict_post_hook(public)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        lin.state_dict()
    with pytest.raises(RuntimeError, match="Cannot register the same function"):
        lin._register_state_dict_hook(public)


@pytest.mark.parametrize("with_module", [False, True])
def test_private_load_state_dict_pre_hook(with_module):
    lin = ft.nn.Linear(2, 2)
    seen = []

    def hook(*args):
        seen.append(len(args))
        sd, prefix = args[-7], args[-6]
        sd.pop(prefix + "extra", None)

    lin._register_load_state_dict_pre_hook(hook, with_module=with_module)
    sd = dict(ft.nn.Linear(2, 2).state_dict())
    sd["extra"] = ft.zeros(1)
    result = lin.load_state_dict(sd)
    assert seen == [8 if with_module else 7]
    assert result.missing_keys == [] and result.unexpected_keys == []


# ------------------------------------------------------------------ 8. rrelu's draws

@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", ["functional", "inplace", "module", "transposed"])
def test_rrelu_training_draws_as_torch(dtype, how):
    res = []
    for L in (ft, torch):
        L.manual_seed(2)
        x = L.randn(5, 4, dtype=getattr(L, dtype))
        x[0, 0] = 0.0
        if how == "functional":
            y = L.nn.functional.rrelu(x, training=True)
        elif how == "inplace":
            y = x.clone()
            L.nn.functional.rrelu_(y, training=True)
        elif how == "module":
            y = L.nn.RReLU(0.1, 0.3).train()(x)
        else:
            y = L.nn.functional.rrelu(x.t(), 0.2, 0.7, training=True)
        res.append((y, L.rand(2)))
    _same(res[0][0], res[1][0])
    _same(res[0][1], res[1][1])


def test_rrelu_draws_only_for_non_positive_entries():
    ft.manual_seed(5)
    x = ft.tensor([1.0, -1.0, 2.0, -2.0])
    y = FF.rrelu(x, 0.1, 0.3, training=True)
    after = ft.rand(1)
    ft.manual_seed(5)
    x2 = ft.tensor([-1.0, -2.0])
    y2 = FF.rrelu(x2, 0.1, 0.3, training=True)
    # The same two slopes, and the stream at the same place afterwards.
    np.testing.assert_array_equal(_np(y)[[1, 3]], _np(y2))
    np.testing.assert_array_equal(_np(y)[[0, 2]], [1.0, 2.0])
    np.testing.assert_array_equal(_np(after), _np(ft.rand(1)))


# ------------------------------------------------------------------ 9. argument errors

_ERRORS = {
    "index_select_inner": (lambda L: L.ones(2, 3).index_select(1, L.tensor([0, 3])),
                           RuntimeError, "INDICES element is out of DATA bounds, id=3 "
                                         "axis_dim=3"),
    "index_select_inner_neg": (lambda L: L.ones(2, 3, 4).index_select(1, L.tensor([-1])),
                               RuntimeError, "INDICES element is out of DATA bounds, id=-1 "
                                             "axis_dim=3"),
    "index_select_outer": (lambda L: L.ones(2, 3).index_select(0, L.tensor([2])),
                           IndexError, "index out of range in self"),
    "gather_float": (lambda L: L.gather(L.ones(2, 2), 1, L.tensor([[0.0]])),
                     RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    "scatter_float": (lambda L: L.ones(2, 2).scatter(1, L.tensor([[0.0]]), 1.0),
                      RuntimeError, "scatter(): Expected dtype int32/int64 for index"),
    "scatter_add_float": (lambda L: L.ones(2, 2).scatter_add(1, L.tensor([[0.0]]),
                                                             L.ones(1, 1)),
                          RuntimeError, "scatter(): Expected dtype int32/int64 for index"),
    "arange_sign": (lambda L: L.arange(0, 10, -1), RuntimeError,
                    "upper bound and lower bound inconsistent with step sign"),
    "arange_sign_float": (lambda L: L.arange(0.0, 1.0, -0.5), RuntimeError,
                          "upper bound and lower bound inconsistent with step sign"),
    "arange_zero": (lambda L: L.arange(0, 10, 0), RuntimeError, "step must be nonzero"),
    "arange_nan_step": (lambda L: L.arange(0, 10, float("nan")), RuntimeError,
                        "step must be nonzero"),
    "arange_inf": (lambda L: L.arange(0.0, float("inf")), RuntimeError,
                   "unsupported range: 0 -> inf"),
    "arange_nan": (lambda L: L.arange(float("nan"), 1.0), RuntimeError,
                   "unsupported range: nan -> 1"),
    "view_two_inferred": (lambda L: L.ones(2, 2).view(-1, -1), RuntimeError,
                          "only one dimension can be inferred"),
    "reshape_two_inferred": (lambda L: L.ones(2, 2).reshape(-1, -1), RuntimeError,
                             "only one dimension can be inferred"),
    "view_negative": (lambda L: L.ones(2, 2).view(-2, 2), RuntimeError,
                      "invalid shape dimension -2 at index 0 of shape [-2, 2]"),
    "fill_vector": (lambda L: L.zeros(2).fill_(L.ones(2)), RuntimeError,
                    "fill_ only supports 0-dimension value tensor but got tensor with 1 "
                    "dimensions."),
    "unflatten_sizes": (lambda L: L.ones(2, 3).unflatten(1, (2, 2)), RuntimeError,
                        "unflatten: Provided sizes [2, 2] don't multiply up to the size of "
                        "dim 1 (3) in the input tensor"),
    "unflatten_inferred": (lambda L: L.ones(2, 3).unflatten(-1, (-1, 2)), RuntimeError,
                           "unflatten: Provided sizes [-1, 2] don't multiply up to the size of "
                           "dim 1 (3) in the input tensor"),
    "unflatten_empty": (lambda L: L.ones(2, 6).unflatten(1, ()), RuntimeError,
                        "unflatten: sizes must be non-empty"),
    "unflatten_dim": (lambda L: L.ones(2, 6).unflatten(3, (2, 3)), IndexError,
                      "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_argument_errors(name):
    call, kind, text = _ERRORS[name]
    with pytest.raises(kind) as e:
        call(ft)
    assert str(e.value) == text
    if torch is not None:
        with pytest.raises(kind) as e:
            call(torch)
        assert str(e.value) == text


@pytest.mark.parametrize("call,want", [
    (lambda L: L.arange(5, 5, -1), []),
    (lambda L: L.arange(3, 0, -1), [3, 2, 1]),
    (lambda L: L.ones(2, 6).unflatten(1, (-1, 2)).shape, [2, 3, 2]),
    (lambda L: L.ones(2, 6).unflatten(-1, (3, 2)).shape, [2, 3, 2]),
    (lambda L: L.zeros(2).fill_(L.tensor(3.0)), [3.0, 3.0]),
    (lambda L: L.ones(2, 2).gather(1, L.tensor([[1]], dtype=L.int32)), [[1.0]]),
])
def test_valid_arguments_still_work(call, want):
    got = call(ft)
    np.testing.assert_array_equal(np.asarray(list(got) if not hasattr(got, "numpy")
                                             else got.numpy()), np.asarray(want))


# ------------------------------------------------------ 10. Sequential / ModuleList ops

def _names(seq):
    return [(k, type(m).__name__) for k, m in seq._modules.items()]


def test_sequential_arithmetic():
    nn = ft.nn
    a, b = nn.Sequential(nn.ReLU(), nn.Tanh()), nn.Sequential(nn.GELU())
    assert _names(a + b) == [("0", "ReLU"), ("1", "Tanh"), ("2", "GELU")]
    assert _names(a * 2) == [("0", "ReLU"), ("1", "Tanh"), ("2", "ReLU"), ("3", "Tanh")]
    assert _names(2 * b) == [("0", "GELU"), ("1", "GELU")]
    assert (a * 2)[2] is a[0]
    c = nn.Sequential(nn.ReLU())
    c += b
    assert _names(c) == [("0", "ReLU"), ("1", "GELU")]
    c *= 2
    assert _names(c) == [("0", "ReLU"), ("1", "GELU"), ("2", "ReLU"), ("3", "GELU")]
    assert type(c.pop(1)).__name__ == "GELU"
    assert _names(c) == [("0", "ReLU"), ("1", "ReLU"), ("2", "GELU")]
    assert _names(c.pop(slice(0, 2))) == [("0", "ReLU"), ("1", "ReLU")]
    assert _names(c) == [("0", "GELU")]
    assert _names(nn.Sequential().extend([nn.ReLU(), nn.Tanh()])) == [("0", "ReLU"),
                                                                      ("1", "Tanh")]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential"):
        a + [nn.ReLU()]
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0 for"):
        a * 0
    with pytest.raises(TypeError, match="unsupported operand type"):
        a * 1.5


def test_module_list_add_and_pop():
    nn = ft.nn
    l1 = nn.ModuleList([nn.ReLU()])
    both = l1 + [nn.Tanh()]
    assert isinstance(both, nn.ModuleList) and _names(both) == [("0", "ReLU"), ("1", "Tanh")]
    assert type(l1.pop(0)).__name__ == "ReLU" and len(l1) == 0


# --------------------------------------------- 11. reshape / view / ravel node names

@pytest.mark.parametrize("call,nodes", [
    # (contiguous input, transposed input, strided slice)
    (lambda t: t.ravel(), ("ViewBackward0", "ViewBackward0", "ViewBackward0")),
    (lambda t: t.reshape(-1), ("ViewBackward0", "UnsafeViewBackward0",
                               "UnsafeViewBackward0")),
    (lambda t: t.reshape(3, 1, 2) if t.shape[0] == 3 else t.reshape(2, 1, -1),
     ("ViewBackward0", "ReshapeAliasBackward0", "ReshapeAliasBackward0")),
    (lambda t: t.unflatten(0, (1, t.shape[0])), ("ViewBackward0", "ViewBackward0",
                                                 "ViewBackward0")),
])
def test_reshape_family_nodes(call, nodes):
    d = ft.randn(2, 3, requires_grad=True)
    for inp, want in zip((d, d.t(), d[:, ::2]), nodes):
        out = call(inp)
        assert out.grad_fn.name() == want
        assert (out._base is not None) == (want != "UnsafeViewBackward0")
        out.sum().backward()
    np.testing.assert_array_equal(_np(d.grad), [[3.0, 2.0, 3.0], [3.0, 2.0, 3.0]])


def test_view_checks_sizes_before_strides():
    t = ft.randn(4, 6)[:, :3]
    with pytest.raises(RuntimeError, match=r"shape '\[24\]' is invalid for input of size 12"):
        t.view(24)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(12)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view_as(ft.zeros(12))


# ------------------------------------- 12. padding and transposed-convolution messages

_PAD_TEXT = ("Padding size {} is not supported for {}D input tensor.\n"
             "Supported combinations for non-constant padding:\n"
             "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
             "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
             "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


@pytest.mark.parametrize("shape,pad,mode", [((1, 2, 5, 5), (3, 3), "reflect"),
                                            ((5,), (1, 1), "reflect"),
                                            ((1, 1, 2, 2, 2), (1, 1, 1, 1), "replicate")])
def test_pad_size_errors(shape, pad, mode):
    with pytest.raises(NotImplementedError) as e:
        FF.pad(ft.ones(*shape), pad, mode=mode)
    assert str(e.value) == _PAD_TEXT.format(len(pad), len(shape))


@pytest.mark.parametrize("size,text", [
    ([12, 12], "requested an output size of [12, 12], but valid sizes range from [13, 13] to "
               "[14, 14] (for an input of torch.Size([5, 5]))"),
    ([15, 15], "requested an output size of [15, 15], but valid sizes range from [13, 13] to "
               "[14, 14] (for an input of torch.Size([5, 5]))"),
    ([1, 2, 3], "ConvTranspose2D: for 4D input, output_size must have 2 or 4 elements (got 3)"),
])
def test_conv_transpose_output_size_errors(size, text):
    ct = ft.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, dilation=3)
    with pytest.raises(ValueError) as e:
        ct(ft.ones(1, 2, 5, 5), output_size=size)
    assert str(e.value) == text
    assert tuple(ct(ft.ones(1, 2, 5, 5), output_size=(1, 3, 14, 14)).shape) == (1, 3, 14, 14)


def test_same_padding_copy_warning_once():
    from funcgrad.torch import _tensor

    text = ("Using padding='same' with even kernel lengths and odd dilation may require a "
            "zero-padded copy of the input be created")
    _tensor._WARNED_ONCE.difference_update(
        [m for m in _tensor._WARNED_ONCE if m.startswith(text)])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ft.nn.Conv2d(2, 2, 3, padding="same")(ft.ones(1, 2, 4, 4))  # symmetric: no warning
        assert not w
        conv = ft.nn.Conv2d(2, 2, 2, padding="same")
        assert tuple(conv(ft.ones(1, 2, 4, 4)).shape) == (1, 2, 4, 4)
        conv(ft.ones(1, 2, 4, 4))
    assert len(w) == 1 and str(w[0].message).startswith(text)
    assert w[0].filename == __file__


# ------------------------------------------------------------------- 13. window functions

@needs_torch
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_as_torch(name, dtype, periodic):
    for n in [0, 1, 2, 3, 4, 5, 8, 16, 33, 100, 400]:
        ours = getattr(ft, name)(n, periodic, dtype=getattr(ft, dtype))
        theirs = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
        if dtype == "float32":
            # PyTorch's float32 cos is SLEEF's (within an ulp of the rounded value).
            np.testing.assert_allclose(_np(ours), _np(theirs), rtol=0, atol=2.5e-7)
        else:
            _same(ours, theirs)


def test_window_formulas_independent():
    # hann(4, periodic=False) = 0.5 - 0.5 cos(2 pi n / 3): [0, 0.75, 0.75, 0]
    np.testing.assert_allclose(_np(ft.hann_window(4, False, dtype=ft.float64)),
                               [0.0, 0.75, 0.75, 0.0], atol=1e-15)
    np.testing.assert_allclose(_np(ft.hamming_window(5, False, 0.6, 0.4, dtype=ft.float64)),
                               [0.2, 0.6, 1.0, 0.6, 0.2], atol=1e-15)
    np.testing.assert_array_equal(_np(ft.bartlett_window(5, False)), [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(_np(ft.blackman_window(3, False, dtype=ft.float64)),
                               [0.0, 1.0, 0.0], atol=1e-15)


# ------------------------------------------- 14. activations at NaN, inf and far negatives

_SPECIAL = [float("nan"), 0.0, float("inf"), -float("inf"), -1e-30, 1e-30, -0.5, 0.5, -3.0,
            3.0, 20.0, -20.0, 1.0, -2.0]

_ACTS = {
    "hardtanh": lambda F, x: F.hardtanh(x),
    "relu6": lambda F, x: F.relu6(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0),
    "elu": lambda F, x: F.elu(x),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.7),
    "softshrink": lambda F, x: F.softshrink(x, 0.3),
    "hardshrink": lambda F, x: F.hardshrink(x, 0.3),
}


@pytest.mark.parametrize("name", sorted(_ACTS))
def test_activation_special_values_independent(name):
    # Values and derivatives a kernel written as PyTorch's ``x <= lo ? ... : x`` gives:
    # NaN passes through with derivative 1 (the scale for selu); the far negative tail of
    # the ELU family keeps its derivative exp(x) (no cancellation through expm1 + 1).
    x = ft.tensor(_SPECIAL, dtype=ft.float32, requires_grad=True)
    y = _ACTS[name](FF, x)
    g, = ft.autograd.grad(y.sum(), x)
    yv, gv = _np(y), _np(g)
    assert np.isnan(yv[0])
    scale = {"selu": 1.0507009873554805}.get(name, 1.0)
    # (hardsigmoid's derivative is 1/6 strictly inside (-3, 3) only: 0 at NaN)
    np.testing.assert_allclose(gv[0], 0.0 if name == "hardsigmoid" else scale, rtol=1e-6)
    if name in ("elu", "selu", "celu"):
        alpha = {"elu": 1.0, "selu": 1.6732632423543772, "celu": 0.7}[name]
        far = _SPECIAL.index(-20.0)
        want = scale * alpha * np.exp(-20.0 / (0.7 if name == "celu" else 1.0)) / \
            (0.7 if name == "celu" else 1.0)
        np.testing.assert_allclose(gv[far], want, rtol=1e-5)
        inf = _SPECIAL.index(float("inf"))
        assert yv[inf] == np.inf


@needs_torch
@pytest.mark.parametrize("name", sorted(_ACTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_special_values_as_torch(name, dtype):
    res = []
    for L in (ft, torch):
        # Fewer than one vector of elements: PyTorch's scalar kernel computes them all.
        x = L.tensor(_SPECIAL[:3] + [-1e-30, -2.0], dtype=getattr(L, dtype), requires_grad=True)
        y = _ACTS[name](L.nn.functional, x)
        g, = L.autograd.grad(y.sum(), x)
        res.append((_np(y).astype(np.float64), _np(g).astype(np.float64)))
    for ours, theirs in zip(*res):
        np.testing.assert_allclose(ours, theirs, rtol=2e-7, equal_nan=True)


def test_hardsigmoid_values_are_exact():
    x = ft.tensor([-1.0, 0.5, -2.5, 2.9], dtype=ft.float64)
    np.testing.assert_array_equal(FF.hardsigmoid(x).numpy(),
                                  (np.array([-1.0, 0.5, -2.5, 2.9]) + 3.0) / 6.0)
    x32 = ft.tensor([-1.0, 0.5], requires_grad=True)
    y = FF.hardsigmoid(x32)
    np.testing.assert_array_equal(_np(y), (np.float32([-1.0, 0.5]) + np.float32(3)) /
                                  np.float32(6))
    g, = ft.autograd.grad(y.sum(), x32)
    np.testing.assert_array_equal(_np(g), np.float32(1) / np.float32(6))


def test_tensor_of_ranges():
    assert ft.tensor(range(3)).tolist() == [0, 1, 2] and ft.tensor(range(3)).dtype is ft.int64
    assert ft.tensor([range(2), range(2, 4)]).tolist() == [[0, 1], [2, 3]]
    assert ft.tensor(range(3), dtype=ft.float32).tolist() == [0.0, 1.0, 2.0]
    assert tuple(ft.tensor([range(0)]).shape) == (1, 0)


# ------------------------------------------------------------- 15. a module's extra state

class _Counter(ft.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = ft.nn.Linear(2, 2)
        self.steps = 0

    def get_extra_state(self):
        return {"steps": self.steps}

    def set_extra_state(self, state):
        self.steps = state["steps"]


def test_extra_state_round_trip():
    m = _Counter()
    m.steps = 5
    sd = m.state_dict()
    # The root's own entries come before its submodules', as PyTorch's.
    assert list(sd) == ["_extra_state", "inner.weight", "inner.bias"]
    assert sd["_extra_state"] == {"steps": 5}
    outer = ft.nn.Sequential(m)
    assert "0._extra_state" in outer.state_dict()
    m2 = _Counter()
    assert str(m2.load_state_dict(sd)) == "<All keys matched successfully>"
    assert m2.steps == 5
    del sd["_extra_state"]
    result = m2.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        m2.load_state_dict(sd)
    plain = ft.nn.Linear(2, 2)
    extra = dict(plain.state_dict())
    extra["_extra_state"] = 1
    assert plain.load_state_dict(extra, strict=False).unexpected_keys == ["_extra_state"]
    with pytest.raises(RuntimeError, match="should never be called"):
        plain.get_extra_state()


@needs_torch
@pytest.mark.parametrize("shape,fmt", [((1, 1, 3, 3, 3), "channels_last_3d"),
                                       ((2, 1, 3, 3), "channels_last"),
                                       ((1, 1, 4, 5), "channels_last")])
def test_randn_like_of_a_row_major_channels_last_layout(shape, fmt):
    res = []
    for L in (ft, torch):
        x = L.zeros(shape)
        L.manual_seed(3268)
        out = L.randn_like(x, memory_format=getattr(L, fmt))
        res.append((out.stride(), out))
    assert res[0][0] == res[1][0]
    _same(res[0][1], res[1][1])


def test_repeat_interleave_of_counts_only():
    assert ft.repeat_interleave(ft.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    assert ft.repeat_interleave(ft.tensor([0, 3])).tolist() == [1, 1, 1]
    assert ft.repeat_interleave(ft.tensor([], dtype=ft.int64)).tolist() == []
    for bad in (ft.tensor(2), ft.tensor([[1]])):
        with pytest.raises(RuntimeError, match="repeat_interleave only accept 1D vector"):
            ft.repeat_interleave(bad)
    with pytest.raises(NotImplementedError, match="repeat_interleave_cpu"):
        ft.repeat_interleave(ft.tensor([1.5]))


_NUMPY_SCALAR_DATA = {
    "int32s": lambda: [np.int32(1), np.int32(2)],
    "int_and_int32": lambda: [1, np.int32(2)],
    "float64": lambda: [np.float64(1.5)],
    "float16_and_float": lambda: [np.float16(1.5), 2.0],
    "int8_and_float32": lambda: [np.int8(1), np.float32(2)],
    "uint8": lambda: [np.uint8(3)],
    "nested": lambda: [[np.int32(1)], [np.int64(2)]],
    "int32_and_bool": lambda: [np.int32(1), True],
    "complex64": lambda: [np.complex64(1j)],
    "scalar_int32": lambda: np.int32(5),
    "int32_tensor_and_int": lambda: "tensor_int32",
}

_NUMPY_SCALAR_WANT = {"int32s": "int32", "int_and_int32": "int64", "float64": "float64",
                      "float16_and_float": "float32", "int8_and_float32": "float32",
                      "uint8": "uint8", "nested": "int64", "int32_and_bool": "int32",
                      "complex64": "complex64", "scalar_int32": "int32",
                      "int32_tensor_and_int": "int64"}


@pytest.mark.parametrize("name", sorted(_NUMPY_SCALAR_DATA))
def test_tensor_dtype_of_numpy_scalars(name):
    data = _NUMPY_SCALAR_DATA[name]()
    libs = [ft] + ([torch] if torch is not None else [])
    for L in libs:
        d = [L.tensor(1, dtype=L.int32), 2] if data == "tensor_int32" else data
        assert str(L.tensor(d).dtype) == "torch." + _NUMPY_SCALAR_WANT[name]


def test_full_of_numpy_integers():
    assert ft.full((1,), np.int32(2)).dtype is ft.int64
    assert ft.full((1,), np.float16(2)).dtype is ft.float32
    assert ft.full((1,), np.bool_(True)).dtype is ft.float32


@pytest.mark.parametrize("make", [lambda a: ft.from_numpy(a[:, ::-1]),
                                  lambda a: ft.tensor(a[::-1]),
                                  lambda a: ft.as_tensor(a[::-1]),
                                  lambda a: ft.as_tensor(a[::-1], dtype=ft.float64),
                                  lambda a: ft.asarray(a[:, ::-1])])
def test_negative_numpy_strides_refused(make):
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is "
                                         "negative"):
        make(np.ones((2, 3), np.float32))
    assert tuple(ft.tensor(np.ones((0, 3))[::-1]).shape) == (0, 3)


@pytest.mark.parametrize("index,node,shape", [
    (lambda L: L.tensor(1), "SelectBackward0", (4,)),
    (lambda L: (L.tensor(1), 2), "SelectBackward0", ()),
    (lambda L: (slice(None), L.tensor(1)), "SelectBackward0", (3,)),
    (lambda L: (Ellipsis, L.tensor(-1)), "SelectBackward0", (3,)),
    (lambda L: (L.tensor(1), [0, 1]), "IndexBackward0", (2,)),
    (lambda L: L.tensor([1]), "IndexBackward0", (1, 4)),
])
def test_zero_dim_integer_tensor_index_is_a_select(index, node, shape):
    x = ft.arange(12.0).reshape(3, 4).requires_grad_()
    out = x[index(ft)]
    assert out.grad_fn.name() == node and tuple(out.shape) == shape
    if torch is not None:
        t = torch.arange(12.0).reshape(3, 4).requires_grad_()
        theirs = t[index(torch)]
        assert theirs.grad_fn.name() == node
        np.testing.assert_array_equal(_np(out), _np(theirs))
    y = ft.zeros(2, 3)
    v = y[ft.tensor(1)]
    v[0] = 100.0
    assert _np(y)[1, 0] == 100.0 and v._base is y


# ------------------------------------------------------------ 16. loss argument errors

_LOSS_ERRORS = {
    "margin_ranking": (lambda L: L.nn.functional.margin_ranking_loss(
        L.ones(2), L.ones(3), L.ones(2)),
        "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
        "dimension 0"),
    "triplet": (lambda L: L.nn.functional.triplet_margin_loss(
        L.ones(2, 3), L.ones(2, 3), L.ones(2, 4)),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton "
        "dimension 1"),
    "poisson_nll": (lambda L: L.nn.functional.poisson_nll_loss(L.ones(2), L.ones(3)),
                    "The size of tensor a (3) must match the size of tensor b (2) at "
                    "non-singleton dimension 0"),
    "huber_delta": (lambda L: L.nn.functional.huber_loss(L.ones(2), L.ones(2), delta=0.0),
                    "huber_loss does not support non-positive values for delta."),
    "bce_logits_long": (lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        L.ones(2), L.tensor([1, 0])),
        "result type Float can't be cast to the desired output type Long"),
    "ctc_input_lengths": (lambda L: L.nn.functional.ctc_loss(
        L.zeros(5, 2, 4).log_softmax(2), L.tensor([[1, 2], [1, 1]]), L.tensor([5, 6]),
        L.tensor([2, 2])),
        "Expected input_lengths to have value at most 5, but got value 6 (while checking "
        "arguments for ctc_loss_allocate_outputs)"),
    "ctc_concatenated": (lambda L: L.nn.functional.ctc_loss(
        L.zeros(5, 2, 4).log_softmax(2), L.tensor([1, 2, 1]), L.tensor([5, 5]),
        L.tensor([2, 2])),
        "Expected tensor to have size 4 at dimension 0, but got size 3 for argument #2 "
        "'targets' (while checking arguments for ctc_loss_allocate_outputs)"),
}


@pytest.mark.parametrize("name", sorted(_LOSS_ERRORS))
def test_loss_errors_as_torch(name):
    call, text = _LOSS_ERRORS[name]
    for L in [ft] + ([torch] if torch is not None else []):
        with pytest.raises(RuntimeError) as e:
            call(L)
        assert str(e.value) == text


@pytest.mark.parametrize("call", [
    lambda: FF.softmax(ft.ones(3)),
    lambda: FF.log_softmax(ft.ones(2, 3)),
    lambda: FF.kl_div(ft.zeros(3), ft.ones(3) / 3),
])
def test_python_warnings_point_at_the_caller(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
    assert len(w) == 1 and w[0].filename == __file__


def test_init_helpers_as_torch():
    init = ft.nn.init
    assert init.calculate_gain("conv2d") == 1 and isinstance(init.calculate_gain("linear"), int)
    assert isinstance(init.calculate_gain("sigmoid"), int)
    assert init._calculate_correct_fan(ft.empty(4, 3), "fan_out") == 4
    assert init._calculate_correct_fan(ft.empty(4, 3, 2), "FAN_IN") == 6
    with pytest.raises(ValueError) as e:
        init.kaiming_uniform_(ft.empty(2, 2), mode="foo")
    assert str(e.value) == "Mode foo not supported, please use one of ['fan_in', 'fan_out']"
    if torch is not None:
        ft.manual_seed(0)
        torch.manual_seed(0)
        _same(init.kaiming_uniform_(ft.empty(3, 4), mode="FAN_OUT"),
              torch.nn.init.kaiming_uniform_(torch.empty(3, 4), mode="FAN_OUT"))
