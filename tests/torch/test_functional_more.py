"""torch.nn.functional beyond the layers' own: interpolate/upsample, fold/unfold,
max_unpool, lp_pool, fractional_max_pool, bilinear, ctc_loss, multilabel_margin_loss,
triplet_margin_with_distance_loss, pdist, gumbel_softmax, conv_tbc, the in-place
activations and the override helpers -- against PyTorch 2.13."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F
from funcgrad.testing import check_grads

torch = pytest.importorskip("torch")
TF = torch.nn.functional

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def close(a: Any, b: Any, tol: float = 1e-10) -> None:
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy()
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def run_both(fn_ft: Any, fn_t: Any, arrays: list[np.ndarray], node: str | None = None,
             tol: float = 1e-10) -> None:
    """Outputs, node name, and every input's gradient for a random cotangent."""
    ours = [ft.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_f, out_t = fn_ft(*ours), fn_t(*theirs)
    close(out_f, out_t, tol)
    if node is not None:
        assert type(out_t.grad_fn).__name__ == node
        assert type(out_f.grad_fn).__name__ == node
    ct = np.random.default_rng(0).normal(size=tuple(out_t.shape))
    out_f.backward(ft.tensor(ct))
    out_t.backward(torch.tensor(ct))
    for a, b in zip(ours, theirs):
        close(a.grad, b.grad, tol)


def same_error(fn_ft: Any, fn_t: Any) -> None:
    with pytest.raises(Exception) as theirs:  # noqa: PT011 - whatever PyTorch raises
        fn_t()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ft()
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------ interpolate

RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
NODE = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact",
        "linear": "UpsampleLinear", "bilinear": "UpsampleBilinear",
        "bicubic": "UpsampleBicubic", "trilinear": "UpsampleTrilinear"}


@st.composite
def resize_case(draw: Any) -> dict[str, Any]:
    mode = draw(st.sampled_from(["nearest", "nearest-exact", "linear", "bilinear", "bicubic",
                                 "trilinear", "area"]))
    rank = RANK.get(mode) or draw(st.integers(3, 5))
    spatial = [draw(st.integers(1, 6)) for _ in range(rank - 2)]
    kw: dict[str, Any] = {"mode": mode}
    if draw(st.booleans()):
        kw["size"] = [draw(st.integers(1, 9)) for _ in spatial]
    else:
        kw["scale_factor"] = draw(st.sampled_from([0.5, 0.75, 1.0, 1.1, 1.5, 2.0, 2.5, 3.0]))
        assume(all(int(n * kw["scale_factor"]) > 0 for n in spatial))
        if draw(st.booleans()):
            kw["recompute_scale_factor"] = True
    if mode in RANK and draw(st.booleans()):
        kw["align_corners"] = draw(st.booleans())
    return {"shape": [2, 3, *spatial], "kw": kw, "seed": draw(st.integers(0, 99))}


@SETTINGS
@given(case=resize_case())
def test_interpolate_matches_torch(case: dict[str, Any]) -> None:
    x = np.random.default_rng(case["seed"]).normal(size=case["shape"])
    kw = case["kw"]
    nd = len(case["shape"]) - 2
    node = None if kw["mode"] == "area" else f"{NODE[kw['mode']]}{nd}DBackward0"
    run_both(lambda a: F.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), [x], node)


@SETTINGS
@given(mode=st.sampled_from(["bilinear", "bicubic"]), align=st.booleans(),
       size=st.tuples(st.integers(1, 9), st.integers(2, 9)), seed=st.integers(0, 99))
def test_antialias_matches_torch(mode: str, align: bool, size: tuple[int, int],
                                 seed: int) -> None:
    x = np.random.default_rng(seed).normal(size=(1, 2, 7, 5))
    kw = {"size": size, "mode": mode, "align_corners": align, "antialias": True}
    node = f"{NODE[mode]}2DAaBackward0"
    run_both(lambda a: F.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), [x], node)


def test_interpolate_float32_and_nearest_ties() -> None:
    x = np.random.default_rng(1).normal(size=(1, 1, 7, 3)).astype(np.float32)
    for kw in ({"scale_factor": 1.7}, {"size": (10, 5)},
               {"size": (4, 2), "mode": "bilinear"}, {"scale_factor": 0.6, "mode": "bicubic"}):
        ours, theirs = F.interpolate(ft.tensor(x), **kw), TF.interpolate(torch.tensor(x), **kw)
        assert ours.dtype == ft.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [
    {"size": 3, "scale_factor": 2}, {}, {"size": 3, "mode": "nearest", "align_corners": True},
    {"size": (3, 3)}, {"scale_factor": (2, 2)}, {"size": 3, "recompute_scale_factor": True},
    {"size": 3, "mode": "bilinear"}, {"size": 3, "mode": "trilinear"},
    {"size": 3, "mode": "linear", "antialias": True}, {"scale_factor": 0.1},
    {"size": 3, "mode": "cubic"},
])
def test_interpolate_errors_are_torchs(kw: dict[str, Any]) -> None:
    x = np.zeros((1, 1, 4))
    same_error(lambda: F.interpolate(ft.tensor(x), **kw),
               lambda: TF.interpolate(torch.tensor(x), **kw))


def test_upsample_aliases_warn_and_match() -> None:
    x = np.arange(8.0).reshape(1, 2, 2, 2)
    for name in ("upsample", "upsample_nearest", "upsample_bilinear"):
        with pytest.warns(UserWarning, match="deprecated"):
            ours = getattr(F, name)(ft.tensor(x), scale_factor=2)
        with pytest.warns(UserWarning):
            theirs = getattr(TF, name)(torch.tensor(x), scale_factor=2)
        close(ours, theirs)


def test_interpolate_second_derivatives() -> None:
    x = np.random.default_rng(2).normal(size=(1, 1, 3, 4))
    for kw in ({"size": (5, 2), "mode": "bicubic"}, {"scale_factor": 2, "mode": "nearest"}):
        check_grads(lambda a, kw=kw: F.interpolate(a, **kw), (x,), order=2)


# ---------------------------------------------------------------- fold / unfold


@st.composite
def block_case(draw: Any) -> dict[str, Any]:
    k = [draw(st.integers(1, 3)) for _ in range(2)]
    d = [draw(st.integers(1, 2)) for _ in range(2)]
    p = [draw(st.integers(0, 1)) for _ in range(2)]
    s = [draw(st.integers(1, 2)) for _ in range(2)]
    hw = [draw(st.integers(dd * (kk - 1) + 1 - 2 * pp if dd * (kk - 1) + 1 > 2 * pp else 1, 6))
          for kk, dd, pp in zip(k, d, p)]
    batch = draw(st.sampled_from([(), (2,)]))
    return {"k": k, "d": d, "p": p, "s": s, "hw": hw, "batch": batch,
            "seed": draw(st.integers(0, 99))}


@SETTINGS
@given(case=block_case())
def test_unfold_and_fold_match_torch(case: dict[str, Any]) -> None:
    rng = np.random.default_rng(case["seed"])
    args = (case["k"], case["d"], case["p"], case["s"])
    x = rng.normal(size=(*case["batch"], 3, *case["hw"]))
    blocks = [(n + 2 * p - d * (k - 1) - 1) // s + 1
              for n, k, d, p, s in zip(case["hw"], *args)]
    assume(min(blocks) >= 1)
    run_both(lambda a: F.unfold(a, *args), lambda a: TF.unfold(a, *args), [x],
             "Im2ColBackward0")
    cols = rng.normal(size=(*case["batch"], 3 * case["k"][0] * case["k"][1],
                            blocks[0] * blocks[1]))
    run_both(lambda a: F.fold(a, case["hw"], *args), lambda a: TF.fold(a, case["hw"], *args),
             [cols], "Col2ImBackward0")


@pytest.mark.parametrize("call", [
    ("unfold", (1, 2, 3, 4), (5,)), ("unfold", (1, 2, 3, 4), ((2, 2), 1, 0, 0)),
    ("fold", (1, 5, 6), ((3, 4), 2)), ("fold", (1, 4, 7), ((3, 4), 2)),
    ("fold", (1, 1, 4, 7), ((3, 4), 2)), ("unfold", (1, 1, 1, 3, 4), (2,)),
])
def test_fold_errors_are_torchs(call: tuple[str, tuple[int, ...], tuple[Any, ...]]) -> None:
    name, shp, args = call
    x = np.zeros(shp)
    same_error(lambda: getattr(F, name)(ft.tensor(x), *args),
               lambda: getattr(TF, name)(torch.tensor(x), *args))


def test_fold_unfold_second_derivatives() -> None:
    x = np.random.default_rng(3).normal(size=(1, 2, 3, 3))
    check_grads(lambda a: F.unfold(a, 2, padding=1) ** 2, (x,), order=2)
    cols = np.random.default_rng(4).normal(size=(1, 8, 4))
    check_grads(lambda a: F.fold(a, (3, 3), 2) ** 2, (cols,), order=2)


# ------------------------------------------------------------------- pooling


@SETTINGS
@given(nd=st.integers(1, 3), k=st.integers(1, 3), s=st.integers(1, 2),
       batched=st.booleans(), sized=st.booleans(), seed=st.integers(0, 99))
def test_max_unpool_matches_torch(nd: int, k: int, s: int, batched: bool, sized: bool,
                                  seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = [*([2] if batched else []), 2, *rng.integers(k, k + 3, nd).tolist()]
    x = rng.normal(size=shape)
    out_t, idx_t = getattr(TF, f"max_pool{nd}d")(torch.tensor(x), k, s, return_indices=True)
    out_size = shape[-nd:] if sized else None
    try:
        getattr(TF, f"max_unpool{nd}d")(out_t, idx_t, k, s, output_size=out_size)
    except RuntimeError:
        # Indices past the default output (the pooled input was larger): PyTorch refuses
        # them, and funcgrad too.
        with pytest.raises(RuntimeError, match="Found an invalid max index"):
            getattr(F, f"max_unpool{nd}d")(ft.tensor(out_t.numpy()), ft.tensor(idx_t.numpy()),
                                           k, s, output_size=out_size)
        return
    idx_f = ft.tensor(idx_t.numpy())
    node = "SqueezeBackward1" if nd == 1 else f"MaxUnpool{nd}DBackward0"
    run_both(lambda a: getattr(F, f"max_unpool{nd}d")(a, idx_f, k, s, output_size=out_size),
             lambda a: getattr(TF, f"max_unpool{nd}d")(a, idx_t, k, s, output_size=out_size),
             [out_t.numpy()], node if batched or nd != 2 else None)


def test_max_unpool_output_size_errors() -> None:
    out, idx = TF.max_pool2d(torch.arange(16.0).reshape(1, 1, 4, 4), 2, return_indices=True)
    for size in ([9, 9], [1, 2, 3]):
        same_error(lambda size=size: F.max_unpool2d(ft.tensor(out.numpy()),
                                                   ft.tensor(idx.numpy()), 2, output_size=size),
                   lambda size=size: TF.max_unpool2d(out, idx, 2, output_size=size))


@SETTINGS
@given(nd=st.integers(1, 3), p=st.sampled_from([1.0, 2.0, 3.0, 1.5]), k=st.integers(1, 3),
       stride=st.sampled_from([None, 1, 2]), ceil=st.booleans(), seed=st.integers(0, 99))
def test_lp_pool_matches_torch(nd: int, p: float, k: int, stride: Any, ceil: bool,
                               seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.abs(rng.normal(size=[2, 2, *rng.integers(k, k + 3, nd).tolist()])) + 0.1
    name = f"lp_pool{nd}d"
    run_both(lambda a: getattr(F, name)(a, p, k, stride, ceil),
             lambda a: getattr(TF, name)(a, p, k, stride, ceil), [x], "PowBackward0")


@SETTINGS
@given(nd=st.integers(2, 3), k=st.integers(1, 2), seed=st.integers(0, 99),
       dtype=st.sampled_from([np.float32, np.float64]), batched=st.booleans())
def test_fractional_max_pool_matches_torch(nd: int, k: int, seed: int, dtype: Any,
                                           batched: bool) -> None:
    rng = np.random.default_rng(seed)
    spatial = rng.integers(k + 2, 7, nd).tolist()
    out = [int(rng.integers(1, n - k + (2 if nd == 2 else 1))) for n in spatial]
    x = rng.normal(size=[*([2] if batched else []), 3, *spatial]).astype(dtype)
    samples = rng.random((2 if batched else 1, 3, nd)).astype(dtype)
    name = f"fractional_max_pool{nd}d"
    ours = getattr(F, name)(ft.tensor(x, requires_grad=True), k, output_size=out,
                            return_indices=True, _random_samples=ft.tensor(samples))
    theirs = getattr(TF, name)(torch.tensor(x, requires_grad=True), k, output_size=out,
                               return_indices=True, _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(ours[0].detach().numpy(), theirs[0].detach().numpy())
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    assert type(ours[0].grad_fn).__name__ == type(theirs[0].grad_fn).__name__


def test_fractional_max_pool_errors_are_torchs() -> None:
    for call in (lambda m: m.fractional_max_pool2d(m_t(m, (1, 1, 4, 4)), 3, output_size=3),
                 lambda m: m.fractional_max_pool2d(m_t(m, (1, 1, 4, 4)), 2),
                 lambda m: m.fractional_max_pool3d(m_t(m, (1, 1, 4, 4, 4)), 2, output_size=3)):
        same_error(lambda call=call: call(F), lambda call=call: call(TF))


def m_t(module: Any, shape: tuple[int, ...]) -> Any:
    lib = ft if module is F else torch
    return lib.zeros(shape)


# ---------------------------------------------------------------- bilinear, pdist


@SETTINGS
@given(lead=st.sampled_from([(3,), (2, 3), ()]), n1=st.integers(1, 3), n2=st.integers(1, 3),
       out=st.integers(1, 3), bias=st.booleans(), seed=st.integers(0, 99))
def test_bilinear_matches_torch(lead: tuple[int, ...], n1: int, n2: int, out: int,
                                bias: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=(*lead, n1)), rng.normal(size=(*lead, n2)),
              rng.normal(size=(out, n1, n2))]
    if bias:
        arrays.append(rng.normal(size=(out,)))
    run_both(F.bilinear, TF.bilinear, arrays, "AddBackward0" if bias else "ViewBackward0")


@SETTINGS
@given(n=st.integers(2, 5), m=st.integers(1, 4), p=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
       seed=st.integers(0, 99))
def test_pdist_matches_torch(n: int, m: int, p: float, seed: int) -> None:
    x = np.random.default_rng(seed).normal(size=(n, m))
    run_both(lambda a: F.pdist(a, p), lambda a: TF.pdist(a, p), [x], "PdistBackward0")


def test_pdist_zero_distance_gradient_and_second_order() -> None:
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]])
    run_both(F.pdist, TF.pdist, [x])
    check_grads(lambda a: F.pdist(a), (np.random.default_rng(4).normal(size=(3, 2)),),
                order=2)


# -------------------------------------------------------------------- CTC loss


@st.composite
def ctc_case(draw: Any) -> dict[str, Any]:
    t, n, c = draw(st.integers(1, 7)), draw(st.integers(1, 3)), draw(st.integers(2, 4))
    blank = draw(st.integers(0, c - 1))
    smax = draw(st.integers(0, 4))
    labels = [i for i in range(c) if i != blank]
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    return {"x": rng.normal(size=(t, n, c)), "blank": blank,
            "targets": rng.choice(labels, (n, max(smax, 1))),
            "target_lengths": rng.integers(0, smax + 1, n),
            "input_lengths": rng.integers(0, t + 1, n) if draw(st.booleans())
            else np.full(n, t),
            "concat": draw(st.booleans()),
            "reduction": draw(st.sampled_from(["none", "mean", "sum"])),
            "zero_infinity": draw(st.booleans())}


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(case=ctc_case())
def test_ctc_loss_matches_torch(case: dict[str, Any]) -> None:
    tg, tl = case["targets"], case["target_lengths"]
    if case["concat"]:
        tg = np.concatenate([tg[i, :tl[i]] for i in range(len(tl))])
    opts = (case["blank"], case["reduction"], case["zero_infinity"])
    x_f = ft.tensor(case["x"], requires_grad=True)
    x_t = torch.tensor(case["x"], requires_grad=True)
    ours = F.ctc_loss(x_f.log_softmax(2), ft.tensor(tg), ft.tensor(case["input_lengths"]),
                      ft.tensor(tl), *opts)
    theirs = TF.ctc_loss(x_t.log_softmax(2), torch.tensor(tg),
                         torch.tensor(case["input_lengths"]), torch.tensor(tl), *opts)
    close(ours, theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    if np.isfinite(theirs.detach().numpy()).all():
        ours.sum().backward()
        theirs.sum().backward()
        close(x_f.grad, x_t.grad)


def test_ctc_loss_unbatched_and_names() -> None:
    lp = np.log(np.full((4, 3), 1 / 3))
    for red, node in (("mean", "MeanBackward0"), ("sum", "SumBackward0"),
                      ("none", "SqueezeBackward1")):
        ours = F.ctc_loss(ft.tensor(lp, requires_grad=True), ft.tensor([1, 2]), 4, 2,
                          reduction=red)
        theirs = TF.ctc_loss(torch.tensor(lp, requires_grad=True), torch.tensor([1, 2]),
                             torch.tensor(4), torch.tensor(2), reduction=red)
        close(ours, theirs)
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__ == node


def test_ctc_loss_second_derivatives() -> None:
    x = np.random.default_rng(5).normal(size=(4, 1, 3))
    check_grads(lambda a: F.ctc_loss(F.log_softmax(a, 2), np.array([[1, 2]]), [4], [2]),
                (x,), order=2)


# --------------------------------------------------------------- margin losses


@SETTINGS
@given(n=st.integers(1, 3), c=st.integers(1, 5), batched=st.booleans(),
       red=st.sampled_from(["none", "mean", "sum"]), seed=st.integers(0, 99))
def test_multilabel_margin_loss_matches_torch(n: int, c: int, batched: bool, red: str,
                                              seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, c) if batched else (c,))
    t = rng.integers(-1, c, size=x.shape)
    t_f, t_t = ft.tensor(t), torch.tensor(t)
    run_both(lambda a: F.multilabel_margin_loss(a, t_f, reduction=red),
             lambda a: TF.multilabel_margin_loss(a, t_t, reduction=red), [x],
             "MultilabelMarginLossBackward0")


@SETTINGS
@given(swap=st.booleans(), red=st.sampled_from(["none", "mean", "sum"]),
       custom=st.booleans(), seed=st.integers(0, 99))
def test_triplet_margin_with_distance_matches_torch(swap: bool, red: str, custom: bool,
                                                    seed: int) -> None:
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=(4, 3)) for _ in range(3)]

    def dist(a: Any, b: Any) -> Any:
        return (a - b).abs().sum(-1)

    kw = {"swap": swap, "reduction": red, "margin": 0.7}
    run_both(lambda *v: F.triplet_margin_with_distance_loss(
                 *v, distance_function=dist if custom else None, **kw),
             lambda *v: TF.triplet_margin_with_distance_loss(
                 *v, distance_function=dist if custom else None, **kw), arrays)


# ------------------------------------------------- in-place, gumbel, tbc, helpers

INPLACE = [("relu_", ()), ("elu_", (0.5,)), ("selu_", ()), ("celu_", (0.7,)),
           ("hardtanh_", (-0.5, 0.5)), ("leaky_relu_", (0.2,)), ("threshold_", (0.1, 2.0)),
           ("rrelu_", ())]


@pytest.mark.parametrize(("name", "args"), INPLACE)
def test_inplace_activations_match_torch(name: str, args: tuple[Any, ...]) -> None:
    x = np.array([-1.5, -0.2, 0.0, 0.3, 2.0])
    a_f = ft.tensor(x, requires_grad=True)
    a_t = torch.tensor(x, requires_grad=True)
    y_f, y_t = a_f.clone(), a_t.clone()
    r_f = getattr(F, name)(y_f, *args)
    getattr(TF, name)(y_t, *args)
    assert r_f is y_f
    close(y_f, y_t)
    assert type(y_f.grad_fn).__name__ == type(y_t.grad_fn).__name__
    y_f.sum().backward()
    y_t.sum().backward()
    # PyTorch's in-place celu backward rounds 1/alpha differently (float32): a few ulps.
    close(a_f.grad, a_t.grad, 1e-7 if name == "celu_" else 1e-10)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_is_a_distribution(hard: bool) -> None:
    ft.manual_seed(0)
    logits = ft.tensor([[0.0, 1.0, 5.0]] * 400, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5, hard=hard)
    assert type(y.grad_fn).__name__ == ("AddBackward0" if hard else "SoftmaxBackward0")
    np.testing.assert_allclose(y.detach().numpy().sum(1), 1.0, rtol=1e-6)
    # The Gumbel-max trick: argmax frequencies follow softmax(logits).
    freq = np.bincount(y.detach().numpy().argmax(1), minlength=3) / 400
    expect = np.exp([0.0, 1.0, 5.0]) / np.exp([0.0, 1.0, 5.0]).sum()
    np.testing.assert_allclose(freq, expect, atol=0.05)
    if hard:
        assert set(np.unique(y.detach().numpy())) <= {0.0, 1.0}


@SETTINGS
@given(t=st.integers(2, 5), k=st.integers(1, 2), pad=st.integers(0, 1),
       seed=st.integers(0, 99))
def test_conv_tbc_matches_torch(t: int, k: int, pad: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=(t, 2, 3)), rng.normal(size=(k, 3, 4)), rng.normal(size=(4,))]
    run_both(lambda x, w, b: F.conv_tbc(x, w, b, pad), lambda x, w, b: TF.conv_tbc(x, w, b, pad),
             arrays, "ConvTbcBackward0")


def test_override_helpers_and_typing_names() -> None:
    x = ft.ones(2)
    assert not F.has_torch_function((x, 1))
    assert not F.has_torch_function_unary(x)
    assert not F.has_torch_function_variadic(x, x)
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    assert F.DType is TF.DType and F.TYPE_CHECKING is False

    class Wrapped:
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            return ("handled", func.__name__)

    assert F.has_torch_function((Wrapped(),))
    assert F.handle_torch_function(F.relu, (Wrapped(),), Wrapped()) == ("handled", "relu")

    class Refuses:
        @classmethod
        def __torch_function__(cls, *a: Any, **k: Any) -> Any:
            return NotImplemented

    with pytest.raises(TypeError, match="no implementation found"):
        F.handle_torch_function(F.relu, (Refuses(),), Refuses())
    pick = F.boolean_dispatch("flag", 1, False, lambda x, flag: "yes",
                              lambda x, flag=False: "no")
    assert (pick(1), pick(1, True), pick(1, flag=True)) == ("no", "yes", "yes")
    F.assert_int_or_pair(3, "k", "{} bad")
    with pytest.raises(AssertionError, match="k bad"):
        F.assert_int_or_pair((1, 2, 3), "k", "{} bad")
