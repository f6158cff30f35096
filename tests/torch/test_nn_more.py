"""torch.nn beyond the basic layers: containers (ModuleDict, ParameterList,
ParameterDict, Container), Upsample*, Fold/Unfold, MaxUnpool, LPPool, FractionalMaxPool,
Bilinear, CTCLoss, the margin losses, and the Lazy modules -- against PyTorch 2.13."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft
from funcgrad.torch import nn

torch = pytest.importorskip("torch")

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def both(spec: str) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = eval(spec, {"nn": nn, "torch": ft})  # noqa: S307
        theirs = eval(spec, {"nn": torch.nn, "torch": torch})  # noqa: S307
    return ours, theirs


REPRS = [
    "nn.Upsample(scale_factor=2)", "nn.Upsample(size=(3, 4), mode='bilinear')",
    "nn.Upsample(scale_factor=(2, 3), mode='nearest')", "nn.UpsamplingNearest2d(size=5)",
    "nn.UpsamplingBilinear2d(scale_factor=2)", "nn.Fold((3, 4), 2)",
    "nn.Fold(output_size=5, kernel_size=(2, 3), dilation=2, padding=1, stride=2)",
    "nn.Unfold(2, padding=1)", "nn.MaxUnpool1d(3, stride=2, padding=1)", "nn.MaxUnpool2d(2)",
    "nn.MaxUnpool3d((1, 2, 2))", "nn.LPPool1d(1.5, 3, 2)", "nn.LPPool2d(2, 3)",
    "nn.LPPool3d(2, (1, 2, 2), ceil_mode=True)", "nn.FractionalMaxPool2d(3, output_ratio=0.5)",
    "nn.FractionalMaxPool3d(2, output_size=3)", "nn.Bilinear(2, 3, 4)",
    "nn.Bilinear(2, 3, 4, bias=False)", "nn.CTCLoss()", "nn.CTCLoss(blank=2, reduction='sum')",
    "nn.MultiLabelMarginLoss()", "nn.TripletMarginWithDistanceLoss()",
    "nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1))",
    "nn.NLLLoss2d()", "nn.ModuleDict({'lin': nn.Linear(2, 3), 'act': nn.ReLU()})",
    "nn.ModuleDict()", "nn.ParameterList()", "nn.ParameterDict()",
    "nn.ParameterList([nn.Parameter(torch.ones(2, 3)), torch.zeros(3, dtype=torch.float64)])",
    "nn.ParameterDict({'w': torch.ones(2, 2), 'b': torch.zeros(2)})",
    "nn.ParameterDict({'x': nn.Parameter(torch.ones(2))})", "nn.Container(a=nn.ReLU())",
    "nn.LazyLinear(3)", "nn.LazyLinear(3, bias=False)", "nn.LazyConv1d(4, 3)",
    "nn.LazyConv2d(4, 3, stride=2, padding=1)", "nn.LazyConv3d(2, 1, groups=1)",
    "nn.LazyConvTranspose1d(4, 3)", "nn.LazyConvTranspose2d(4, 3, stride=2)",
    "nn.LazyConvTranspose3d(2, 2)", "nn.LazyBatchNorm1d()", "nn.LazyBatchNorm2d(affine=False)",
    "nn.LazyBatchNorm3d(momentum=None)", "nn.LazyInstanceNorm1d()",
    "nn.LazyInstanceNorm2d(track_running_stats=False)", "nn.LazyInstanceNorm3d()",
    "nn.UninitializedParameter()", "nn.UninitializedBuffer()",
    "nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.Upsample(scale_factor=2))",
]


@pytest.mark.parametrize("spec", REPRS)
def test_reprs_match_torch(spec: str) -> None:
    ours, theirs = both(spec)
    assert repr(ours) == repr(theirs)


def test_containers_register_and_behave_as_torchs() -> None:
    ours, theirs = both("nn.ModuleDict([('a', nn.Linear(2, 2)), ('b', nn.Tanh())])")
    for md in (ours, theirs):
        md["c"] = type(md["a"])(2, 1)
        del md["b"]
        md.update({"d": type(md["c"])(1, 1)})
    assert list(ours) == list(theirs) == ["a", "c", "d"]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "a" in ours and len(ours) == 3 and ours.pop("d") is not None
    with pytest.raises(TypeError, match="is not a Module subclass"):
        ours["x"] = 3
    with pytest.raises(TypeError, match="should be Iterable; isint"):
        nn.ModuleDict([1])

    ours, theirs = both("nn.ParameterList([torch.ones(2), nn.Parameter(torch.zeros(3))])")
    for pl in (ours, theirs):
        pl.append(type(pl[0])(pl[0].data.clone()))
        pl.extend([type(pl[0])(pl[0].data.clone())])
        pl.append(5)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["0", "1", "2", "3"]
    assert isinstance(ours[0], nn.Parameter) and ours[0].requires_grad
    assert len(ours[1:3]) == 2 and len(list(ours.parameters())) == 4

    ours, theirs = both("nn.ParameterDict({'w': torch.ones(2), 'b': torch.zeros(1)})")
    for pd in (ours, theirs):
        pd["c"] = type(pd["w"])(pd["w"].data.clone())
        pd.setdefault("d", None)
    assert repr(ours) == repr(theirs)
    assert list(ours.keys()) == list(theirs.keys())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert "w" in ours and ours.get("zz", 7) == 7
    merged = ours | nn.ParameterDict({"e": ft.ones(1)})
    assert list(merged) == [*ours.keys(), "e"]
    with pytest.raises(TypeError, match="not a string"):
        ours[1]


def test_container_warns_deprecated() -> None:
    with pytest.warns(UserWarning, match="nn.Container` is deprecated"):
        nn.Container(a=nn.ReLU())


@pytest.mark.parametrize(("spec", "shape"), [
    ("nn.LazyLinear(3)", (2, 5)), ("nn.LazyConv1d(4, 3)", (2, 3, 7)),
    ("nn.LazyConv2d(4, 3, padding=1)", (3, 6, 6)), ("nn.LazyConv3d(2, 2)", (1, 2, 3, 3, 3)),
    ("nn.LazyConvTranspose1d(4, 3, stride=2)", (2, 3, 4)),
    ("nn.LazyConvTranspose2d(2, 3, groups=1)", (1, 2, 3, 3)),
    ("nn.LazyConvTranspose3d(2, 2)", (1, 1, 2, 2, 2)), ("nn.LazyBatchNorm1d()", (4, 3)),
    ("nn.LazyBatchNorm2d()", (2, 3, 2, 2)), ("nn.LazyBatchNorm3d()", (2, 2, 2, 2, 2)),
    ("nn.LazyInstanceNorm1d()", (2, 3, 5)), ("nn.LazyInstanceNorm2d()", (2, 3, 4, 4)),
    ("nn.LazyInstanceNorm3d(affine=False)", (1, 2, 3, 3, 3)),
])
def test_lazy_modules_become_their_layer(spec: str, shape: tuple[int, ...]) -> None:
    ours, theirs = both(spec)
    assert ours.has_uninitialized_params()
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    out_f, out_t = ours(ft.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__
    assert repr(ours) == repr(theirs)
    assert tuple(out_f.shape) == tuple(out_t.shape)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert all(type(p) is nn.Parameter for p in ours.parameters())
    # Same parameters -> same output: the layer it became computes as PyTorch's.
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in ours.state_dict().items()})
    np.testing.assert_allclose(ours(ft.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_lazy_linear_dtype_and_uninitialized_errors() -> None:
    layer = nn.LazyLinear(2, dtype=ft.float64)
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
        layer.weight.shape  # noqa: B018
    layer(ft.ones(1, 3, dtype=ft.float64))
    assert layer.weight.dtype == ft.float64 and tuple(layer.weight.shape) == (2, 3)
    bound = 1 / np.sqrt(3)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    p = nn.UninitializedParameter()
    p.materialize((2, 2))
    assert type(p) is nn.Parameter and p.requires_grad


@SETTINGS
@given(seed=st.integers(0, 99), mode=st.sampled_from(["nearest", "bilinear", "bicubic"]),
       scale=st.sampled_from([2.0, 1.5, 0.5]))
def test_upsample_modules_match_torch(seed: int, mode: str, scale: float) -> None:
    x = np.random.default_rng(seed).normal(size=(1, 2, 4, 6))
    for spec in (f"nn.Upsample(scale_factor={scale}, mode='{mode}')",
                 f"nn.UpsamplingNearest2d(scale_factor={scale})",
                 f"nn.UpsamplingBilinear2d(scale_factor={scale})"):
        ours, theirs = both(spec)
        np.testing.assert_allclose(ours(ft.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(),
                                   rtol=1e-10, atol=1e-10)


def test_pooling_modules_match_torch() -> None:
    x = np.abs(np.random.default_rng(1).normal(size=(2, 3, 6, 6))) + 0.1
    for spec in ("nn.LPPool2d(2, 3)", "nn.LPPool2d(1.5, 2, stride=1)",
                 "nn.Unfold(2, stride=2)", "nn.Fold((3, 3), 2)"):
        ours, theirs = both(spec)
        arg = x if "Fold(" not in spec else x.reshape(2, 12, 9)[:, :12, :4]
        np.testing.assert_allclose(ours(ft.tensor(arg)).numpy(),
                                   theirs(torch.tensor(arg)).numpy(), rtol=1e-10, atol=1e-10)
    pool_t = torch.nn.MaxPool2d(2, return_indices=True)
    out, idx = pool_t(torch.tensor(x))
    unpool_f, unpool_t = both("nn.MaxUnpool2d(2)")
    np.testing.assert_array_equal(
        unpool_f(ft.tensor(out.numpy()), ft.tensor(idx.numpy())).numpy(),
        unpool_t(out, idx).numpy())
    frac_f, frac_t = both("nn.FractionalMaxPool2d(2, output_ratio=(0.5, 0.5), "
                          "_random_samples=torch.full((2, 3, 2), 0.3, dtype=torch.float64))")
    assert list(frac_f.state_dict()) == list(frac_t.state_dict())
    np.testing.assert_array_equal(frac_f(ft.tensor(x)).numpy(), frac_t(torch.tensor(x)).numpy())
    for bad in ("nn.FractionalMaxPool2d(2)", "nn.FractionalMaxPool2d(2, output_ratio=1.5)",
                "nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)"):
        with pytest.raises(ValueError) as theirs_err:  # noqa: PT011
            eval(bad, {"nn": torch.nn, "torch": torch})  # noqa: S307
        with pytest.raises(ValueError) as ours_err:  # noqa: PT011
            eval(bad, {"nn": nn, "torch": ft})  # noqa: S307
        assert str(ours_err.value) == str(theirs_err.value)


def test_bilinear_module_init_and_gradients() -> None:
    ft.manual_seed(0)
    layer = nn.Bilinear(3, 2, 4)
    bound = 1 / np.sqrt(3)
    assert tuple(layer.weight.shape) == (4, 3, 2) and tuple(layer.bias.shape) == (4,)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    assert np.abs(layer.bias.detach().numpy()).max() <= bound
    theirs = torch.nn.Bilinear(3, 2, 4).double()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy(), dtype=torch.float64)
                            for k, v in layer.state_dict().items()})
    layer = layer.double()
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out_f, out_t = layer(ft.tensor(a), ft.tensor(b)), theirs(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(out_f.detach().numpy(), out_t.detach().numpy(), rtol=1e-12)
    assert type(out_f.grad_fn).__name__ == type(out_t.grad_fn).__name__
    out_f.sum().backward()
    out_t.sum().backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), theirs.weight.grad.numpy(),
                               rtol=1e-12)


def test_loss_modules_match_torch() -> None:
    rng = np.random.default_rng(3)
    lp = np.log(rng.dirichlet(np.ones(4), size=(6, 2)))
    targets, il, tl = np.array([[1, 2, 2], [3, 1, 0]]), np.array([6, 5]), np.array([3, 2])
    for spec in ("nn.CTCLoss()", "nn.CTCLoss(reduction='sum', zero_infinity=True)"):
        ours, theirs = both(spec)
        np.testing.assert_allclose(
            ours(ft.tensor(lp), ft.tensor(targets), ft.tensor(il), ft.tensor(tl)).numpy(),
            theirs(torch.tensor(lp), torch.tensor(targets), torch.tensor(il),
                   torch.tensor(tl)).numpy(), rtol=1e-10)
    x, t = rng.normal(size=(3, 4)), np.array([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]])
    ours, theirs = both("nn.MultiLabelMarginLoss(reduction='sum')")
    np.testing.assert_allclose(ours(ft.tensor(x), ft.tensor(t)).numpy(),
                               theirs(torch.tensor(x), torch.tensor(t)).numpy(), rtol=1e-12)
    a, p, n = (rng.normal(size=(3, 4)) for _ in range(3))
    ours, theirs = both("nn.TripletMarginWithDistanceLoss(swap=True)")
    np.testing.assert_allclose(ours(*map(ft.tensor, (a, p, n))).numpy(),
                               theirs(*map(torch.tensor, (a, p, n))).numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=0)
    logp, y = np.log(rng.dirichlet(np.ones(3), size=(2, 2, 2))).transpose(0, 3, 1, 2), \
        rng.integers(0, 3, (2, 2, 2))
    ours, theirs = both("nn.NLLLoss2d()")
    np.testing.assert_allclose(ours(ft.tensor(logp), ft.tensor(y)).numpy(),
                               theirs(torch.tensor(logp), torch.tensor(y)).numpy(), rtol=1e-12)


def test_containers_move_with_module_to() -> None:
    model = nn.ModuleDict({"enc": nn.Linear(2, 2)})
    params = nn.ParameterList([ft.ones(2)])
    model.double()
    params.double()
    assert model["enc"].weight.dtype == ft.float64
    assert params[0].dtype == ft.float64
