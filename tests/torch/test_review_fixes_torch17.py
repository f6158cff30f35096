"""PyTorch-face fixes from a seventeenth side-by-side review, each compared with torch 2.13:
the legacy constructor ``torch.Tensor(...)`` (sizes, data in the default float dtype, its
errors), ``torch.tensor`` of a Python float into an integer dtype, ``Module.bfloat16``/
``type``/``share_memory``/``set_submodule``, overrides of ``_load_from_state_dict`` and
``_save_to_state_dict``, the optimizer's step and state-dict hooks, the target-dtype checks
of ``binary_cross_entropy`` and ``kl_div``, the nodes of unbatched 2-d/3-d pooling and of an
RNN's final state over an unsorted packed batch, and device-string parsing."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ft
from tests.torch._outcomes import outcome

torch = pytest.importorskip("torch")


def _text(x: Any) -> Any:
    """What a result prints as (tensors and sizes), or the value itself."""
    if isinstance(x, (ft.Tensor, torch.Tensor, ft.Size, torch.Size)):
        return repr(x).replace(", grad_fn=<", " <").split(" object at")[0]
    return x


def _same(call: Any) -> None:
    ours = outcome(lambda: _text(call(ft)))
    theirs = outcome(lambda: _text(call(torch)))
    assert ours == theirs


LEGACY = {
    "empty": lambda t: t.Tensor(),
    "int_list": lambda t: t.Tensor([[1, 2]]),
    "bool_list": lambda t: t.Tensor([True, False]),
    "sizes": lambda t: t.Tensor(2, 3).shape,
    "one_size": lambda t: t.Tensor(3).shape,
    "zero_size": lambda t: t.Tensor(0).shape,
    "torch_size": lambda t: t.Tensor(t.Size([2, 3])).shape,
    "tuple_data": lambda t: t.Tensor((2, 3)),
    "list_of_tensors": lambda t: t.Tensor([t.tensor(1.0), t.tensor(2.0)]),
    "float_tensor": lambda t: t.Tensor(t.tensor([1.0, 2.0])),
    "int_tensor": lambda t: t.Tensor(t.tensor([1, 2])),
    "float_scalar": lambda t: t.Tensor(2.5),
    "bool_scalar": lambda t: t.Tensor(True),
    "negative_size": lambda t: t.Tensor(-1),
    "float_size": lambda t: t.Tensor(2, 3.0),
    "dtype_after": lambda t: str(t.Tensor([1, 2]).dtype),
    "requires_grad_after": lambda t: t.Tensor([1, 2]).requires_grad_(),
}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_constructor_as_torch(name: str) -> None:
    _same(LEGACY[name])


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8", "int16"])
@pytest.mark.parametrize("value", [3.0, -3.5, 3.7, 0.0, 1e20, 200.9])
def test_tensor_of_a_python_float_into_an_integer_dtype(value: float, dtype: str) -> None:
    _same(lambda t: t.tensor(value, dtype=getattr(t, dtype)))
    _same(lambda t: t.as_tensor(value, dtype=getattr(t, dtype)))


def test_module_casts_and_share_memory() -> None:
    def run(t: Any) -> Any:
        m = t.nn.Linear(2, 2)
        out = [m.bfloat16().weight.dtype, m.type(t.float64).weight.dtype]
        out.append(m.share_memory() is m)
        return [str(x) for x in out]

    assert run(ft) == run(torch)


SET_SUBMODULE = {
    "replace": lambda t: t.nn.Sequential(t.nn.Linear(1, 1)).set_submodule("0", t.nn.ReLU()),
    "nested": lambda t: t.nn.Sequential(t.nn.Sequential(t.nn.Linear(1, 1))).set_submodule(
        "0.0", t.nn.Tanh()),
    "new_name": lambda t: t.nn.Sequential(t.nn.Linear(1, 1)).set_submodule("x", t.nn.ReLU()),
    "strict_missing": lambda t: t.nn.Sequential(t.nn.Linear(1, 1)).set_submodule(
        "x", t.nn.ReLU(), strict=True),
    "empty": lambda t: t.nn.Sequential().set_submodule("", t.nn.ReLU()),
    "not_module": lambda t: t.nn.Sequential(t.nn.Linear(1, 1)).set_submodule("0", 3),
    "parent_missing": lambda t: t.nn.Sequential().set_submodule("a.b", t.nn.ReLU()),
    "not_a_module_attr": lambda t: t.nn.Linear(1, 1).set_submodule("weight", t.nn.ReLU()),
}


@pytest.mark.parametrize("name", sorted(SET_SUBMODULE))
def test_set_submodule_as_torch(name: str) -> None:
    def run(t: Any) -> Any:
        m = SET_SUBMODULE[name](t)
        return m

    _same(run)


def _renaming(t: Any) -> Any:
    class Old(t.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = t.nn.Parameter(t.zeros(2))

        def _load_from_state_dict(self, sd: Any, prefix: str, *args: Any) -> None:
            if prefix + "weight" in sd:
                sd[prefix + "w"] = sd.pop(prefix + "weight")
            super()._load_from_state_dict(sd, prefix, *args)

    class Scaled(t.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = t.nn.Linear(1, 1)

        def _save_to_state_dict(self, dest: Any, prefix: str, keep_vars: bool) -> None:
            dest[prefix + "scale"] = t.tensor(2.0)
            super()._save_to_state_dict(dest, prefix, keep_vars)

    return Old, Scaled


def test_state_dict_method_overrides_are_honoured() -> None:
    def run(t: Any) -> Any:
        old_cls, scaled_cls = _renaming(t)
        model = t.nn.Sequential(old_cls(), scaled_cls())
        result = str(model.load_state_dict({"0.weight": t.ones(2), "1.lin.weight": t.ones(1, 1),
                                            "1.lin.bias": t.ones(1)}, strict=False))
        return result, model[0].w.tolist(), list(model.state_dict())

    assert run(ft) == run(torch)


def test_optimizer_hooks_as_torch() -> None:
    def run(t: Any) -> list[str]:
        import importlib  # noqa: PLC0415

        log: list[str] = []
        opt_mod = importlib.import_module(t.__name__ + ".optim.optimizer")
        w = t.nn.Parameter(t.ones(2))
        w.grad = t.ones(2)
        opt = t.optim.SGD([w], lr=0.5)
        h1 = opt.register_step_pre_hook(lambda o, a, k: log.append(f"pre {len(a)} {k}"))
        opt.register_step_post_hook(lambda o, a, k: log.append("post"))
        g = opt_mod.register_optimizer_step_post_hook(lambda o, a, k: log.append("global"))
        opt.step()
        h1.remove()
        g.remove()
        opt.step(closure=None)
        log.append(str(w.tolist()))
        opt.register_state_dict_pre_hook(lambda o: log.append("sd pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        sd = opt.state_dict()
        log.append(str(sorted(sd)))
        opt.register_load_state_dict_pre_hook(
            lambda o, s: log.append("load pre " + str(sorted(s))))
        opt.register_load_state_dict_post_hook(lambda o: log.append("load post"))
        opt.load_state_dict({"state": sd["state"], "param_groups": sd["param_groups"]})
        adam = t.optim.Adam([w])
        adam.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": lambda: 7.0}))
        log.append(str(adam.step()))
        return log

    assert run(ft) == run(torch)


LOSSES = {
    "bce_long": lambda t, x: t.nn.functional.binary_cross_entropy(x, t.tensor([1, 0])),
    "bce_double": lambda t, x: t.nn.functional.binary_cross_entropy(
        x, t.tensor([1.0, 0.0], dtype=t.float64)),
    "bce_bool": lambda t, x: t.nn.functional.binary_cross_entropy(x, t.tensor([True, False])),
    "bce_double_input": lambda t, x: t.nn.functional.binary_cross_entropy(
        x.double(), t.tensor([1.0, 0.0])),
    "bce_module": lambda t, x: t.nn.BCELoss()(x, t.tensor([1, 0])),
    "kl_long_target": lambda t, x: t.nn.functional.kl_div(x, t.tensor([1, 0])),
    "kl_long_input": lambda t, x: t.nn.functional.kl_div(t.tensor([1, 0]), x),
    "kl_double": lambda t, x: t.nn.functional.kl_div(x, t.tensor([1.0, 0.0], dtype=t.float64),
                                                    reduction="sum"),
    "bce_logits_sizes": lambda t, x: t.nn.functional.binary_cross_entropy_with_logits(
        t.ones(2), t.ones(3)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_dtype_checks_as_torch(name: str) -> None:
    _same(lambda t: LOSSES[name](t, t.tensor([0.3, 0.6], requires_grad=True)))


POOLS = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
         "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
         "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"]


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("size", [1, 2])
@pytest.mark.parametrize("name", POOLS)
def test_pooling_nodes_as_torch(name: str, size: int, batched: bool) -> None:
    nd = int(name[-2])
    shape = (1,) * batched + (2,) + (2,) * nd

    def run(t: Any) -> Any:
        x = t.ones(*shape, requires_grad=True)
        arg = size if "adaptive" in name else 2
        out = getattr(t.nn.functional, name)(x, arg)
        return type(out.grad_fn).__name__, tuple(out.shape)

    assert run(ft) == run(torch)


def test_rnn_states_over_an_unsorted_packed_batch_as_torch() -> None:
    def run(t: Any) -> Any:
        t.manual_seed(0)
        gru = t.nn.LSTM(4, 3, batch_first=True)
        x = t.randn(3, 5, 4)
        packed = t.nn.utils.rnn.pack_padded_sequence(x, t.tensor([2, 5, 3]), batch_first=True,
                                                     enforce_sorted=False)
        h0 = (t.zeros(1, 3, 3, requires_grad=True), t.zeros(1, 3, 3))
        _, (h, c) = gru(packed, h0)
        return type(h.grad_fn).__name__, type(c.grad_fn).__name__, np.round(
            h.detach().numpy(), 5).tolist()

    assert run(ft) == run(torch)


DEVICES = ["gpu", "cpu:x", "cpu:0:1", "cpu:-1", " cpu", "cuda:01", "CPU", "cuda:", "cpu",
           "cuda:1", "meta", "cuda"]


@pytest.mark.parametrize("text", DEVICES)
def test_device_strings_as_torch(text: str) -> None:
    _same(lambda t: repr(t.device(text)))


def test_save_of_a_legacy_constructed_tensor_round_trips() -> None:
    buf = io.BytesIO()
    ft.save(ft.Tensor([[1, 2]]), buf)
    buf.seek(0)
    loaded = ft.load(buf)
    assert loaded.dtype == ft.float32 and loaded.tolist() == [[1.0, 2.0]]
