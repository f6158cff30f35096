"""PyTorch-face fixes from a side-by-side review, each compared with torch 2.13: half
precision gradient clipping and norms, linalg on float16/bfloat16, ctc_loss's gradient,
state-dict metadata, vmap randomness, in-place writes PyTorch refuses, binary cross-entropy's
range check, functional_call's keys and SparseAdam."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_oracle import outcome as _outcome
from torch_oracle import same_error as _same_error

torch = pytest.importorskip("torch")

import funcgrad.torch as ft  # noqa: E402
import funcgrad.torch.nn.functional as ff  # noqa: E402

tf = torch.nn.functional


def _np(t):
    return np.asarray(t.detach().float().numpy() if hasattr(t, "detach") else t)


# ----------------------------------------------------------- 1. half gradient clipping

_HALF = {"float16": (ft.float16, torch.float16), "bfloat16": (ft.bfloat16, torch.bfloat16)}


@settings(max_examples=20, deadline=None)
@given(vals=st.lists(st.floats(-600, 600, width=16), min_size=1, max_size=6),
       dt=st.sampled_from(sorted(_HALF)), max_norm=st.sampled_from([0.5, 1.0, 1e4]),
       norm_type=st.sampled_from([1.0, 2.0, 3.0, float("inf")]))
def test_clip_grad_norm_half_accumulates_in_float32(vals, dt, max_norm, norm_type):
    fdt, tdt = _HALF[dt]
    res = []
    for lib, d in ((ft, fdt), (torch, tdt)):
        p = lib.nn.Parameter(lib.ones(len(vals), dtype=d))
        p.grad = lib.tensor(vals, dtype=d)
        n = lib.nn.utils.clip_grad_norm_([p], max_norm, norm_type=norm_type)
        res.append((n, p.grad, lib.linalg.vector_norm(lib.tensor(vals, dtype=d), norm_type)))
    for a, b in zip(*res):
        assert a.dtype.is_floating_point and str(a.dtype) == str(b.dtype)
        np.testing.assert_array_equal(_np(a), _np(b))


def test_clip_grads_with_norm_and_value_half():
    out = []
    for lib in (ft, torch):
        p = lib.nn.Parameter(lib.ones(2, dtype=lib.float16))
        p.grad = lib.tensor([300.0, 400.0], dtype=lib.float16)
        q = lib.nn.Parameter(lib.ones(2))
        q.grad = lib.tensor([300.0, 400.0])
        total = lib.nn.utils.get_total_norm([p.grad, q.grad])
        lib.nn.utils.clip_grads_with_norm_([p, q], 1.0, total)
        a, b = p.grad.clone(), q.grad.clone()
        lib.nn.utils.clip_grad_value_([p], 0.5)
        out.append((total, a, b, p.grad))
    for a, b in zip(*out):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_array_equal(_np(a), _np(b))


# --------------------------------------------------------------- 2. linalg in half


def _linalg_cases(lib, dt):
    L = lib.linalg
    A = lib.tensor([[3.0, 4.0], [1.0, 2.0]], dtype=dt)
    S = lib.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=dt)
    b = lib.tensor([1.0, 2.0], dtype=dt)
    return {
        "det": lambda: L.det(A), "torch.det": lambda: lib.det(A), "Tensor.det": lambda: A.det(),
        "inv": lambda: L.inv(A), "inverse": lambda: lib.inverse(A),
        "inv_ex": lambda: L.inv_ex(A),
        "solve": lambda: L.solve(A, b), "solve_ex": lambda: L.solve_ex(A, b),
        "slogdet": lambda: L.slogdet(A), "torch.slogdet": lambda: lib.slogdet(A),
        "logdet": lambda: lib.logdet(A), "lu": lambda: L.lu(A), "lu_factor": lambda: L.lu_factor(A),
        "lu_factor_ex": lambda: L.lu_factor_ex(A),
        "lu_solve": lambda: L.lu_solve(A, lib.tensor([1, 2], dtype=lib.int32), b[:, None]),
        "cholesky": lambda: L.cholesky(S), "cholesky_ex": lambda: L.cholesky_ex(S),
        "cholesky_inverse": lambda: lib.cholesky_inverse(S),
        "cholesky_solve": lambda: lib.cholesky_solve(b[:, None], S),
        "qr": lambda: L.qr(A), "svd": lambda: L.svd(A), "torch.svd": lambda: lib.svd(A),
        "svdvals": lambda: L.svdvals(A), "eigh": lambda: L.eigh(S),
        "eigvalsh": lambda: L.eigvalsh(S),
        "eig": lambda: L.eig(A), "eigvals": lambda: L.eigvals(A), "pinv": lambda: L.pinv(A),
        "pinverse": lambda: lib.pinverse(A), "pinv_1d": lambda: L.pinv(b),
        "lstsq": lambda: L.lstsq(A, b[:, None]), "matrix_rank": lambda: L.matrix_rank(A),
        "matrix_rank_h": lambda: L.matrix_rank(lib.ones(2, 3, dtype=dt), hermitian=True),
        "norm2": lambda: L.matrix_norm(A, 2), "norm_nuc": lambda: L.norm(A, "nuc"),
        "Tensor.norm_nuc": lambda: A.norm(p="nuc"), "cond": lambda: L.cond(A),
        "cond1": lambda: L.cond(A, 1), "matrix_power-1": lambda: L.matrix_power(A, -1),
        "tensorinv": lambda: L.tensorinv(A, 1), "tensorsolve": lambda: L.tensorsolve(A, b),
        "solve_triangular": lambda: L.solve_triangular(A, b[:, None], upper=True),
        "triangular_solve": lambda: lib.triangular_solve(b[:, None], A),
        "ldl_factor": lambda: L.ldl_factor(S), "vander": lambda: L.vander(b),
        "qr_bad_mode": lambda: L.qr(A, mode="bad"), "eigh_bad_uplo": lambda: L.eigh(S, UPLO="X"),
        "solve_mixed": lambda: L.solve(A, b.float()),
        "lstsq_mixed": lambda: L.lstsq(A, b[:, None].float()),
        "det_nonsquare": lambda: L.det(lib.ones(2, 3, dtype=dt)),
    }


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("dt", sorted(_HALF))
@pytest.mark.parametrize("name", sorted(_linalg_cases(ft, ft.float16)))
def test_linalg_half_raises_pytorch_errors(name, dt):
    fdt, tdt = _HALF[dt]
    _same_error(_linalg_cases(ft, fdt)[name], _linalg_cases(torch, tdt)[name])


@pytest.mark.parametrize("dt", sorted(_HALF))
def test_linalg_half_values_pytorch_computes(dt):
    fdt, tdt = _HALF[dt]
    for name, f in (("fro", lambda L, A: L.matrix_norm(A)),
                    ("one", lambda L, A: L.matrix_norm(A, 1)),
                    ("multi_dot", lambda L, A: L.multi_dot([A, A])),
                    ("power", lambda L, A: L.matrix_power(A, 3))):
        a = f(ft.linalg, ft.tensor([[3.0, 4.0], [1.0, 2.0]], dtype=fdt))
        b = f(torch.linalg, torch.tensor([[3.0, 4.0], [1.0, 2.0]], dtype=tdt))
        assert str(a.dtype) == str(b.dtype), name
        np.testing.assert_array_equal(_np(a), _np(b))


@settings(max_examples=10, deadline=None)
@given(vals=st.lists(st.floats(-1, 1, width=16), min_size=4, max_size=4))
def test_matrix_exp_half_is_float32_rounded(vals):
    # A documented difference (docs/sharp_bits.md): PyTorch's half kernel gives garbage;
    # funcgrad gives PyTorch's float32 result rounded to the half dtype.
    m = np.asarray(vals, np.float32).reshape(2, 2)
    mine = ft.linalg.matrix_exp(ft.tensor(m).half())
    ref = torch.linalg.matrix_exp(torch.tensor(m).half().float()).half()
    assert mine.dtype == ft.float16
    np.testing.assert_allclose(_np(mine), _np(ref), rtol=2e-3, atol=2e-3)


# --------------------------------------------------------------- 3. ctc_loss gradient


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 16), reduction=st.sampled_from(["sum", "mean", "none"]),
       scale=st.sampled_from([0.3, 1.0, 2.0]), zero_inf=st.booleans())
def test_ctc_loss_gradient_is_pytorchs(seed, reduction, scale, zero_inf):
    rng = np.random.default_rng(seed)
    T, N, C = 6, 2, 4
    # Not normalised (scale != 1): PyTorch's gradient is exp(lp) - posterior.
    lp = (np.log(rng.dirichlet(np.ones(C), size=(T, N))) * scale).astype(np.float32)
    targets = rng.integers(1, C, size=(N, 3))
    in_len, tgt_len = [6, 5], [3, int(rng.integers(1, 4))]
    out = []
    for lib, fn in ((ft, ff), (torch, tf)):
        x = lib.tensor(lp, requires_grad=True)
        loss = fn.ctc_loss(x, lib.tensor(targets), lib.tensor(in_len), lib.tensor(tgt_len),
                           reduction=reduction, zero_infinity=zero_inf)
        loss.sum().backward()
        out.append((loss, x.grad))
    np.testing.assert_allclose(_np(out[0][0]), _np(out[1][0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(out[0][1]), _np(out[1][1]), rtol=1e-4, atol=1e-5)


def test_ctc_loss_review_repro():
    grads = []
    for lib, fn in ((ft, ff), (torch, tf)):
        lp = lib.log(lib.full((6, 2, 4), 0.25)).requires_grad_()
        fn.ctc_loss(lp, lib.tensor([[1, 2, 1], [3, 3, 0]]), lib.tensor([6, 5]),
                    lib.tensor([3, 2]), reduction="sum").backward()
        grads.append(_np(lp.grad))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-6)


# ----------------------------------------------------------- 4. state-dict metadata


def _bn_net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Sequential(nn.BatchNorm2d(3)))


def test_state_dict_metadata_and_num_batches_tracked():
    mine, theirs = _bn_net(ft), _bn_net(torch)
    assert mine.state_dict()._metadata == theirs.state_dict()._metadata
    assert mine.state_dict(prefix="p.")._metadata == theirs.state_dict(prefix="p.")._metadata
    assert mine[1].state_dict()._metadata == theirs[1].state_dict()._metadata

    def without(m, key, version=None):
        sd = m.state_dict()
        del sd[key]
        if version is not None:
            sd._metadata["1"]["version"] = version
        return sd

    for key in ("1.num_batches_tracked", "2.0.num_batches_tracked"):
        _same_error(lambda key=key: mine.load_state_dict(without(mine, key)),
                    lambda key=key: theirs.load_state_dict(without(theirs, key)))
        a = mine.load_state_dict(without(mine, key), strict=False)
        b = theirs.load_state_dict(without(theirs, key), strict=False)
        assert (a.missing_keys, a.unexpected_keys) == (b.missing_keys, b.unexpected_keys)
    # An old checkpoint (version 1, or no metadata) loads without the counter, as PyTorch.
    for m in (mine, theirs):
        assert str(m.load_state_dict(without(m, "1.num_batches_tracked", 1))) == \
            "<All keys matched successfully>"
        assert str(m.load_state_dict(dict(without(m, "1.num_batches_tracked")))) == \
            "<All keys matched successfully>"


def test_state_dict_metadata_survives_save_load():
    m = _bn_net(ft)
    buf = io.BytesIO()
    ft.save(m.state_dict(), buf)
    buf.seek(0)
    sd = ft.load(buf)
    assert sd._metadata == _bn_net(torch).state_dict()._metadata
    del sd["2.0.num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key.*"2.0.num_batches_tracked"'):
        m.load_state_dict(sd)


# ---------------------------------------------------------------- 5. vmap randomness


def _random_fns(lib):
    return {
        "rand": lambda x: x + lib.rand(1), "randn": lambda x: x + lib.randn(()),
        "rand_like": lambda x: lib.rand_like(x),
        "dropout": lambda x: lib.nn.functional.dropout(x, 0.5),
        "bernoulli": lambda x: lib.bernoulli(x * 0 + 0.5),
        "normal_": lambda x: x.clone().normal_(),
        "randint": lambda x: x + lib.randint(0, 5, (1,)),
        "module_init": lambda x: lib.nn.Linear(2, 2)(x),
    }


@pytest.mark.parametrize("name", sorted(_random_fns(ft)))
def test_vmap_randomness_error_mode(name):
    _same_error(lambda: ft.func.vmap(_random_fns(ft)[name])(ft.ones(3, 2)),
                lambda: torch.func.vmap(_random_fns(torch)[name])(torch.ones(3, 2)))
    _same_error(lambda: ft.func.jacfwd(_random_fns(ft)[name])(ft.ones(2)),
                lambda: torch.func.jacfwd(_random_fns(torch)[name])(torch.ones(2)))


@pytest.mark.parametrize("name", ["rand", "randn", "rand_like", "dropout", "normal_"])
def test_vmap_randomness_same_and_different(name):
    for lib in (ft, torch):
        f = _random_fns(lib)[name]
        same = lib.func.vmap(f, randomness="same")(lib.ones(8, 16))
        diff = lib.func.vmap(f, randomness="different")(lib.ones(8, 16))
        assert tuple(same.shape) == tuple(diff.shape)
        assert bool((same == same[0]).all())
        assert not bool((diff == diff[0]).all())


def test_vmap_randomness_nested_and_jacfwd():
    for lib in (ft, torch):
        vm = lib.func.vmap

        def noisy(x, lib=lib):
            return x + lib.rand(())

        inner_same = vm(vm(noisy, randomness="same"), randomness="different")(lib.zeros(3, 4))
        assert bool((inner_same == inner_same[:, :1]).all())
        assert inner_same.unique().numel() == 3
        both = vm(vm(noisy, randomness="different"), randomness="different")(lib.zeros(3, 4))
        assert both.unique().numel() == 12
        j = lib.func.jacfwd(lambda x, lib=lib: x * lib.rand(()), randomness="same")(lib.ones(3))
        assert bool((j.diagonal() == j[0, 0]).all())
    _same_error(lambda: ft.func.vmap(lambda x: x, randomness="foo"),
                lambda: torch.func.vmap(lambda x: x, randomness="foo"))
    _same_error(lambda: ft.func.jacfwd(lambda x: x, randomness="foo")(ft.ones(2)),
                lambda: torch.func.jacfwd(lambda x: x, randomness="foo")(torch.ones(2)))


def _named(x):
    return 1


@pytest.mark.parametrize("fn", [lambda x: 3.0, lambda x: None, lambda x: (x, 3), _named,
                                lambda x: {"a": x, "b": True}])
def test_vmap_outputs_must_be_tensors(fn):
    _same_error(lambda: ft.func.vmap(fn)(ft.ones(2)), lambda: torch.func.vmap(fn)(torch.ones(2)))


def test_vmap_non_tensor_outputs_with_out_dims_none():
    a = ft.func.vmap(lambda x: (x, 3), out_dims=(0, None))(ft.ones(2))
    b = torch.func.vmap(lambda x: (x, 3), out_dims=(0, None))(torch.ones(2))
    assert a[1] == b[1] and _np(a[0]).tolist() == _np(b[0]).tolist()


# ------------------------------------------------------- 6. in-place writes refused


def _inplace_cases(lib):
    def grad_input():
        return lib.ones(4, 2, requires_grad=True) * 1

    return {
        "unbind": lambda: grad_input().unbind(0)[1].mul_(2),
        "split": lambda: grad_input().split(2)[0].add_(1),
        "chunk": lambda: grad_input().chunk(2, 1)[1].add_(1),
        "split_sizes": lambda: lib.split(grad_input(), [1, 3])[1].add_(1),
        "split_leaf": lambda: lib.ones(4, requires_grad=True).split(2)[0].add_(1),
        "split_setitem": lambda: grad_input().split(2)[0].__setitem__(0, 5.0),
        "split_view": lambda: grad_input().split(2)[1].view(4).add_(1),
        "split_slice": lambda: grad_input().unbind(0)[1][1:].mul_(2),
        "expand_add": lambda: lib.ones(3).expand(2, 3).add_(1),
        "expand_copy": lambda: lib.ones(3).expand(2, 3).copy_(lib.zeros(2, 3)),
        "expand_relu": lambda: lib.ones(3).expand(2, 3).relu_(),
        "expand_t": lambda: lib.ones(3).expand(2, 3).t().mul_(2),
        "expand_normal": lambda: lib.ones(3).expand(2, 3).normal_(),
        "expand_setitem_all": lambda: lib.ones(3).expand(2, 3).__setitem__(slice(None), 2.0),
        "broadcast_to": lambda: lib.broadcast_to(lib.ones(3), (2, 3)).sub_(1),
    }


@pytest.mark.parametrize("name", sorted(_inplace_cases(ft)))
def test_inplace_writes_pytorch_refuses(name):
    _same_error(_inplace_cases(ft)[name], _inplace_cases(torch)[name])


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_inplace_writes_pytorch_allows():
    def cases(lib):
        def g():
            return lib.ones(4, requires_grad=True) * 1
        return [
            lambda: lib.ones(3).expand(2, 3).fill_(2.0),
            lambda: lib.ones(3).expand(2, 3).zero_(),
            lambda: lib.ones(3).expand(2, 3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 0.0),
            lambda: lib.ones(3).expand(2, 3).index_fill_(0, lib.tensor([0]), 2.0),
            lambda: lib.ones(3).expand(2, 3).__setitem__((0, 1), 2.0),
            lambda: lib.ones(1, 3).expand(1, 3).add_(1),
            lambda: lib.ones(4).split(2)[0].add_(1),
            lambda: g().unsafe_split(2)[0].add_(1),
            lambda: g().tensor_split(2)[0].add_(1),
            lambda: g().split(2)[0].detach().add_(1),
        ]
    for mine, theirs in zip(cases(ft), cases(torch)):
        a, b = _outcome(mine), _outcome(theirs)
        assert a[0] == b[0] == "ok", (a, b)


# --------------------------------------------------------- 7. binary cross-entropy


@settings(max_examples=30, deadline=None)
@given(x=st.lists(st.floats(-0.5, 1.5, width=32) | st.just(float("nan")), min_size=1,
                  max_size=4),
       t=st.lists(st.floats(-0.5, 1.5, width=32), min_size=4, max_size=4))
def test_binary_cross_entropy_range_check(x, t):
    t = t[:len(x)]
    a = _outcome(lambda: ff.binary_cross_entropy(ft.tensor(x), ft.tensor(t)))
    b = _outcome(lambda: tf.binary_cross_entropy(torch.tensor(x), torch.tensor(t)))
    assert a[0] == b[0]
    if a[0] == "ok":
        np.testing.assert_allclose(_np(a[1]), _np(b[1]), rtol=1e-5)
    else:
        assert a[1] == b[1]


def test_bce_module_checks_too():
    _same_error(lambda: ft.nn.BCELoss()(ft.tensor([1.5]), ft.tensor([1.0])),
                lambda: torch.nn.BCELoss()(torch.tensor([1.5]), torch.tensor([1.0])))


# ------------------------------------------------------------- 8. functional_call keys


def test_functional_call_keys():
    torch.manual_seed(0)
    lin_t = torch.nn.Linear(2, 3)
    lin_f = ft.nn.Linear(2, 3)
    lin_f.load_state_dict({k: ft.tensor(v.detach().numpy()) for k, v in lin_t.state_dict().items()})
    w = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    a = ft.func.functional_call(lin_f, {"weight": ft.tensor(w), "bogus": ft.ones(1)},
                                (ft.ones(1, 2),))
    b = torch.func.functional_call(lin_t, {"weight": torch.tensor(w), "bogus": torch.ones(1)},
                                   (torch.ones(1, 2),))
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6)
    assert not hasattr(lin_f, "bogus")
    for dicts in ({"weight": 1, "bias": 2, "bogus": 3}, {"weight": 1},
                  {"weight": 1, "x.y": 2, "bogus": 3}):
        _same_error(
            lambda d=dicts: ft.func.functional_call(lin_f, {k: ft.ones(1) for k in d},
                                                    (ft.ones(1, 2),), strict=True),
            lambda d=dicts: torch.func.functional_call(lin_t, {k: torch.ones(1) for k in d},
                                                       (torch.ones(1, 2),), strict=True))
    seq_f, seq_t = ft.nn.Sequential(ft.nn.Linear(2, 2)), torch.nn.Sequential(torch.nn.Linear(2, 2))
    _same_error(lambda: ft.func.functional_call(seq_f, {"1.weight": ft.ones(1)}, (ft.ones(1, 2),)),
                lambda: torch.func.functional_call(seq_t, {"1.weight": torch.ones(1)},
                                                   (torch.ones(1, 2),)))
    _same_error(
        lambda: ft.func.functional_call(lin_f, ({"weight": ft.ones(3, 2)},
                                                {"weight": ft.ones(3, 2)}), (ft.ones(1, 2),)),
        lambda: torch.func.functional_call(lin_t, ({"weight": torch.ones(3, 2)},
                                                   {"weight": torch.ones(3, 2)}),
                                           (torch.ones(1, 2),)))


# --------------------------------------------------------------------- 9. SparseAdam


def test_sparse_adam():
    def make(lib, **kw):
        return lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(3))], **kw)

    assert make(ft, lr=0.1).defaults == make(torch, lr=0.1).defaults
    assert repr(make(ft, lr=0.1)) == repr(make(torch, lr=0.1))
    for kw in ({"lr": -1}, {"lr": 0.0}, {"eps": 0.0}, {"betas": (1.0, 0.9)},
               {"betas": (0.9, -0.1)}):
        _same_error(lambda kw=kw: make(ft, **kw), lambda kw=kw: make(torch, **kw))

    def step(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = lib.optim.SparseAdam([p])
        assert opt.step() is None  # no gradient: nothing to do
        p.grad = lib.ones(3)
        return opt.step()

    _same_error(lambda: step(ft), lambda: step(torch))
