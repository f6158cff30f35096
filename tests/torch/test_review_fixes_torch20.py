"""PyTorch-face fixes from a twentieth side-by-side review, each compared with torch 2.13:
``torch.nn.modules.<submodule>`` paths (``batchnorm._BatchNorm``, ``loss._Loss``,
``utils._pair``) and ``torch.nn.common_types``; ``torch.serialization.safe_globals`` and
whole models saved by PyTorch loaded here; uint8 index tensors read as (deprecated) masks;
``repeat``, ``index_put_``, ``masked_scatter``, ``scatter_reduce("max")``, ``clamp()``,
``allclose`` checks; the RNN cells' state checks; linalg's singular-matrix and integer-input
errors, ``cholesky_ex``'s partial factor."""

from __future__ import annotations

import io
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome, same_outcome, shown

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------ torch.nn.modules paths

SUBMODULES = ["activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv",
              "distance", "dropout", "flatten", "fold", "instancenorm", "lazy", "linear",
              "loss", "module", "normalization", "padding", "pixelshuffle", "pooling", "rnn",
              "sparse", "transformer", "upsampling"]


@pytest.mark.parametrize("sub", SUBMODULES)
def test_each_submodule_has_pytorchs_classes(sub):
    import importlib
    import inspect

    theirs = importlib.import_module(f"torch.nn.modules.{sub}")
    ours = getattr(ft.nn.modules, sub)
    names = [n for n, o in vars(theirs).items()
             if inspect.isclass(o) and o.__module__ == theirs.__name__
             and n not in ("BackwardHookFunction", "_ConvTransposeMixin", "_LazyProtocol",
                           "_WrappedHook", "_CircularPadNd", "_ConstantPadNd",
                           "_ReflectionPadNd", "_ReplicationPadNd")]
    assert names
    for n in names:
        cls = getattr(ours, n)
        assert isinstance(cls, type), n
        public = getattr(ft.nn, n, None)
        if public is not None:
            assert cls is public, n


def test_the_private_bases_users_subclass_and_check():
    nn = ft.nn
    assert isinstance(nn.BatchNorm2d(3), nn.modules.batchnorm._BatchNorm)
    assert isinstance(nn.SyncBatchNorm(3), nn.modules.batchnorm._BatchNorm)
    assert isinstance(nn.Conv2d(1, 1, 1), nn.modules.conv._ConvNd)
    assert issubclass(nn.CrossEntropyLoss, nn.modules.loss._WeightedLoss)

    class MyLoss(nn.modules.loss._Loss):
        def forward(self, a, b):
            return ((a - b) ** 2).mean() if self.reduction == "mean" else (a - b) ** 2

    assert MyLoss(reduction="none")(ft.ones(2), ft.zeros(2)).tolist() == [1.0, 1.0]
    from torch.nn.modules.utils import _pair as their_pair

    from funcgrad.torch.nn.modules.batchnorm import _BatchNorm  # noqa: F401
    from funcgrad.torch.nn.modules.utils import _pair, consume_prefix_in_state_dict_if_present

    assert _pair(3) == their_pair(3) and _pair((1, 2)) == their_pair((1, 2))
    sd, theirs = {"module.w": 1, "b": 2}, {"module.w": 1, "b": 2}
    consume_prefix_in_state_dict_if_present(sd, "module.")
    torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(theirs, "module.")
    assert sd == theirs
    assert ft.nn.modules.Conv2d is ft.nn.Conv2d


def test_common_types_are_pytorchs_aliases():
    import typing

    from torch.nn import common_types as theirs

    from funcgrad.torch.nn import common_types as ours

    names = [n for n in vars(theirs) if n.startswith(("_size", "_ratio", "_scalar", "_tensor",
                                                      "_maybe"))]
    assert names and all(hasattr(ours, n) for n in names)
    for name in ("_size_1_t", "_size_2_t", "_size_3_t", "_size_any_t", "_ratio_2_t"):
        assert typing.get_args(getattr(ours, name)) == typing.get_args(getattr(theirs, name))


# ------------------------------------------------------------------ serialization

def _model(t: Any) -> Any:
    nn = t.nn
    t.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Linear(3, 4),
                         nn.LayerNorm(4), nn.Dropout(0.3))


def test_safe_globals_context_manager_and_pytorchs_path_in_the_refusal():
    def run(t):
        b = io.BytesIO()
        t.save(_model(t), b)
        b.seek(0)
        refused = outcome(lambda: t.load(b))
        b.seek(0)
        nn = t.nn
        with t.serialization.safe_globals([nn.Sequential, nn.Linear, nn.BatchNorm1d, nn.ReLU,
                                           nn.LayerNorm, nn.Dropout, set]):
            loaded = repr(t.load(b))
            inside = len(t.serialization.get_safe_globals())
        return refused, loaded, inside - len(t.serialization.get_safe_globals())

    ours, theirs = run(ft), run(torch)
    assert ours == theirs
    assert "GLOBAL torch.nn.modules.container.Sequential" in ours[0][1]


def test_a_model_pytorch_saved_whole_loads_and_runs(tmp_path):
    path = tmp_path / "m.pt"
    model = _model(torch).eval()
    model[1].running_mean += 0.5
    torch.save(model, path)
    x = np.random.default_rng(0).standard_normal((5, 2)).astype(np.float32)
    expected = model(torch.tensor(x)).detach().numpy()
    ours = ft.load(path, weights_only=False)
    assert isinstance(ours, ft.nn.Sequential) and isinstance(ours[1], ft.nn.BatchNorm1d)
    assert repr(ours) == repr(model)
    np.testing.assert_allclose(ours(ft.tensor(x)).detach().numpy(), expected, rtol=1e-6,
                               atol=1e-6)
    assert list(ours.state_dict()) == list(model.state_dict())
    # hooks registered after loading run (the hook bookkeeping PyTorch pickled is mapped)
    seen = []
    ours[0].register_forward_hook(lambda m, a, kw, out: seen.append(1), with_kwargs=True)
    ours(ft.tensor(x))
    assert seen == [1]


def test_a_slice_is_no_weights_only_global():
    def run(t):
        b = io.BytesIO()
        t.save({"s": slice(1, 2)}, b)
        b.seek(0)
        return outcome(lambda: t.load(b), lambda e: type(e).__name__)

    assert run(ft) == run(torch) == ("UnpicklingError", "UnpicklingError")


def test_forgetting_super_init_names_the_module():
    def run(t):
        class M(t.nn.Module):
            def __init__(self):
                self.l = t.nn.Linear(1, 1)

        return outcome(M)

    assert run(ft) == run(torch)


# ------------------------------------------------------------------ uint8 masks

def _warned(t: Any, fn: Any) -> Any:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = outcome(lambda: shown(fn(t)))
    return out, sorted({str(x.message) for x in w})


def _set(idx: Any, value: Any) -> Any:
    def run(t):
        x = t.arange(8.0).reshape(4, 2)
        x[idx(t)] = value(t)
        return x
    return run


U8 = lambda t: t.tensor([1, 0, 1, 1], dtype=t.uint8)  # noqa: E731
BYTE_MASKS = {
    "get": lambda t: t.arange(8.0).reshape(4, 2)[U8(t)],
    "get_with_int": lambda t: t.arange(8.0).reshape(4, 2)[U8(t), 1],
    "get_2d_mask": lambda t: t.arange(8.0).reshape(4, 2)[
        t.tensor([[1, 0], [1, 1], [0, 0], [1, 0]], dtype=t.uint8)],
    "set_tensor": _set(U8, lambda t: t.tensor([7.0, 8.0])),
    "set_number": _set(U8, lambda t: 5.0),
    "set_0d": _set(U8, lambda t: t.tensor(5.0)),
    "index_put": lambda t: t.arange(4.0).index_put_((U8(t),), t.tensor([7.0, 8.0, 9.0])),
    "index_put_acc": lambda t: t.arange(4.0).index_put_((U8(t),), t.tensor([7.0, 8.0, 9.0]),
                                                        accumulate=True),
    "index_put_0d": lambda t: t.arange(4.0).index_put((U8(t),), t.tensor(9.0)),
    "grad": lambda t: _grad_through_mask(t),
}


def _grad_through_mask(t: Any) -> Any:
    x = t.arange(4.0, requires_grad=True)
    return t.autograd.grad(x[U8(t)].sum(), x)


@pytest.mark.parametrize("name", list(BYTE_MASKS))
def test_uint8_index_tensors_are_masks(name):
    assert _warned(ft, BYTE_MASKS[name]) == _warned(torch, BYTE_MASKS[name])


# ------------------------------------------------------------------ tensor checks

CHECKS = {
    "repeat_fewer_dims": lambda t: t.ones(2, 2).repeat(2),
    "repeat_nothing": lambda t: t.ones(2, 2).repeat(),
    "repeat_more_dims": lambda t: t.ones(2).repeat(2, 2),
    "index_put_long_source": lambda t: t.zeros(3).index_put_(
        (t.tensor([0]),), t.tensor([1], dtype=t.long)),
    "index_put_double_0d": lambda t: t.zeros(3).index_put(
        (t.tensor([0]),), t.tensor(1.0, dtype=t.float64)),
    "masked_scatter_short": lambda t: t.zeros(2, 3).masked_scatter(
        t.tensor([[True, False, True], [False, True, False]]), t.arange(2.0)),
    "masked_scatter_long_mask": lambda t: t.zeros(2, 3).masked_scatter(
        t.tensor([[1, 0, 1], [0, 1, 0]]), t.arange(10.0)),
    "masked_scatter_dtype": lambda t: t.zeros(2, 3).masked_scatter(
        t.tensor([[True, False, True], [False, True, False]]), t.arange(10)),
    "masked_scatter_ok": lambda t: t.zeros(2, 3).masked_scatter(
        t.tensor([[True, False, True], [False, True, False]]), t.arange(10.0)),
    "clamp_nothing": lambda t: t.ones(2).clamp(),
    "clamp_fn_nothing": lambda t: t.clamp(t.ones(2)),
    "clamp_inplace_nothing": lambda t: t.ones(2).clamp_(),
    "clip_nothing": lambda t: t.ones(2).clip(),
    "clamp_min_only": lambda t: t.tensor([-1.0, 2.0]).clamp(min=0),
    "allclose_dtypes": lambda t: t.allclose(t.ones(2), t.ones(2, dtype=t.float64)),
    "allclose_method_dtypes": lambda t: t.ones(2).allclose(t.ones(2, dtype=t.int64)),
    "isclose_dtypes": lambda t: t.isclose(t.ones(2), t.ones(2, dtype=t.float64)),
    "allclose_same": lambda t: t.allclose(t.ones(2), t.ones(2) + 1e-9),
    "dot_dtypes": lambda t: t.dot(t.ones(2), t.ones(2, dtype=t.float64)),
    "vdot_dtypes": lambda t: t.vdot(t.ones(2), t.ones(2, dtype=t.float64)),
    "inner_dtypes": lambda t: t.inner(t.ones(2), t.ones(2, dtype=t.float64)),
    "histc_long": lambda t: t.histc(t.tensor([1, 2]), bins=2),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_tensor_checks(name):
    same_outcome(CHECKS[name])


@pytest.mark.parametrize("reduce", ["max", "min"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_old_names_compute_without_a_derivative(reduce, include_self):
    def run(t):
        x = t.zeros(3, requires_grad=True)
        s = t.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
        y = x.scatter_reduce(0, t.tensor([0, 1, 0, 1, 2, 1]), s, reduce=reduce,
                             include_self=include_self)
        return shown(y), type(y.grad_fn).__name__, outcome(lambda: y.sum().backward())

    assert run(ft) == run(torch)


# ------------------------------------------------------------------ RNN cells

def _cell(kind: str, x_shape: tuple, states: tuple) -> Any:
    def run(t):
        t.manual_seed(0)
        cell = getattr(t.nn, kind)(3, 2)
        hx = tuple(t.ones(s) for s in states)
        out = cell(t.ones(x_shape), hx if kind == "LSTMCell" else hx[0])
        return tuple(o.shape for o in out) if isinstance(out, tuple) else out.shape
    return run


CELLS = [
    ("RNNCell", (2, 3), ((3, 2),)), ("RNNCell", (2, 3), ((2, 3),)),
    ("RNNCell", (3,), ((1, 2),)), ("RNNCell", (3,), ((2,),)),
    ("GRUCell", (2, 3), ((3, 2),)), ("GRUCell", (2, 3), ((2, 3),)),
    ("LSTMCell", (2, 3), ((3, 2), (2, 2))), ("LSTMCell", (2, 3), ((2, 2), (3, 2))),
    ("LSTMCell", (2, 3), ((2, 3), (2, 3))), ("LSTMCell", (2, 3), ((2, 2), (2, 2))),
]


@pytest.mark.parametrize("kind,x_shape,states", CELLS)
def test_rnn_cell_state_checks(kind, x_shape, states):
    same_outcome(_cell(kind, x_shape, states))


def test_lstm_with_projections_warns_once_as_pytorch():
    script = """
import sys, warnings
warnings.simplefilter("always")
import {mod} as t
m = t.nn.LSTM(3, 4, proj_size=2)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    m(t.ones(1, 2, 3)); m(t.ones(1, 2, 3))
    t.nn.LSTM(3, 4, proj_size=2).double()(t.ones(1, 2, 3, dtype=t.float64))
print(sorted(str(x.message) for x in w))
"""
    outs = [subprocess.run([sys.executable, "-c", script.format(mod=m)], capture_output=True,
                           text=True, check=True).stdout for m in ("funcgrad.torch", "torch")]
    assert outs[0] == outs[1] and "oneDNN" in outs[0]


# ------------------------------------------------------------------ linalg

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
LINALG = {
    "solve_singular": lambda t: t.linalg.solve(t.tensor(SINGULAR), t.tensor([[1.0], [2.0]])),
    "solve_singular_batch": lambda t: t.linalg.solve(
        t.stack([t.eye(2), t.tensor(SINGULAR)]), t.tensor([[1.0], [2.0]])),
    "solve_vector_shapes": lambda t: t.linalg.solve(t.eye(2), t.ones(3)),
    "lu_factor_zero": lambda t: t.linalg.lu_factor(t.zeros(2, 2)),
    "lu_factor_batch": lambda t: t.linalg.lu_factor(t.stack([t.eye(2), t.tensor(SINGULAR)])),
    "inv_singular": lambda t: t.linalg.inv(t.tensor(SINGULAR)),
    "lstsq_driver": lambda t: t.linalg.lstsq(t.eye(2), t.ones(2, 1), driver="foo"),
    "cholesky_ex_first": lambda t: t.linalg.cholesky_ex(-t.eye(2)),
    "cholesky_ex_second": lambda t: t.linalg.cholesky_ex(t.tensor([[4.0, 2.0], [2.0, -3.0]])),
    "cholesky_ex_batch": lambda t: t.linalg.cholesky_ex(
        t.stack([t.eye(3) * 4, t.tensor([[4.0, 2, 0], [2, 5, 1], [0, 1, -7]])])),
    "cholesky_ex_upper": lambda t: t.linalg.cholesky_ex(
        t.tensor([[4.0, 2.0], [2.0, -3.0]], dtype=t.float64), upper=True),
}


def _on_long(name: str) -> Any:
    return lambda t: getattr(t.linalg, name)(t.eye(2, dtype=t.long))


for _f in ("eigh", "eigvalsh", "eig", "eigvals", "svd", "svdvals", "qr", "inv", "det",
           "cholesky", "pinv", "matrix_rank", "norm", "lu_factor", "lu", "cond"):
    LINALG[f"int_{_f}"] = _on_long(_f)


@pytest.mark.parametrize("name", list(LINALG))
def test_linalg_errors_and_partial_factors(name):
    same_outcome(LINALG[name])
