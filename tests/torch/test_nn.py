"""funcgrad.nn as a PyTorch user sees it: Module mechanics (registration, names, state
dicts, modes, hooks, reprs), Linear and init, and every activation and loss: values and
gradients against hand-derived NumPy formulas in float64 and, when PyTorch is installed,
against torch on the same inputs.

Known bugs are ``xfail(strict=True)`` with a reason starting "bug:".
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import funcgrad as fg
import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F
from funcgrad.lax import erf, erfc
from funcgrad.torch import nn
from funcgrad.torch.nn import init

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)


def close(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if isinstance(a, ft.Tensor) else a
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def rng(seed=0):
    return np.random.default_rng(seed)


def t64(a, requires_grad=True):
    return ft.tensor(np.asarray(a, np.float64), requires_grad=requires_grad)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(ft.ones(1))
        self.body = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        self.head = nn.Linear(2, 1, bias=False)
        self.register_buffer("count", ft.zeros(1))
        self.register_buffer("cache", ft.zeros(2), persistent=False)

    def forward(self, x):
        return self.head(self.body(x)) * self.scale


# ================================================================ Parameter


def test_parameter_is_a_leaf_tensor_requiring_grad():
    p = nn.Parameter(ft.tensor([1.0, 2.0]))
    assert isinstance(p, ft.Tensor) and p.is_leaf and p.requires_grad
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    q = nn.Parameter(ft.tensor([1.0, 2.0]), requires_grad=False)
    assert repr(q) == "Parameter containing:\ntensor([1., 2.])"
    out = p * 2
    assert type(out) is ft.Tensor and out.grad_fn is not None
    out.sum().backward()
    close(p.grad, [2.0, 2.0])


def test_parameter_shares_data_and_accepts_arrays():
    t = ft.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert np.shares_memory(p.data.numpy(), t.numpy())
    a = np.array([3.0, 4.0], np.float32)
    assert np.shares_memory(nn.Parameter(a).data.numpy(), a)
    assert nn.Parameter().shape == (0,)
    with pytest.raises(RuntimeError):
        nn.Parameter(ft.tensor([1, 2]))  # integers cannot require grad


def test_parameter_deepcopy():
    lin = nn.Linear(2, 2)
    lin2 = copy.deepcopy(lin)
    assert isinstance(lin2.weight, nn.Parameter) and lin2.weight is not lin.weight
    close(lin2.weight, lin.weight.detach().numpy())
    with ft.no_grad():
        lin2.weight.add_(1.0)
    assert not np.allclose(lin2.weight.detach().numpy(), lin.weight.detach().numpy())


# ============================================================ registration


def test_registration_by_assignment():
    net = Net()
    assert set(net._parameters) == {"scale"}
    assert set(net._modules) == {"body", "head"}
    assert set(net._buffers) == {"count", "cache"}
    assert net.head.bias is None
    # Reassigning a plain attribute, deleting members.
    net.note = 3
    assert net.note == 3 and "note" not in net._parameters
    del net.head
    assert "head" not in net._modules
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'head'"):
        _ = net.head


def test_assignment_errors_are_pytorchs():
    lin = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter "
                       r"'weight' \(torch.nn.Parameter or None expected\)"):
        lin.weight = ft.zeros(3, 2)
    lin.bias = None
    assert lin.bias is None and "bias" in lin._parameters
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'foo'"):
        _ = lin.foo
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        lin.register_buffer("weight", ft.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        lin.register_parameter("a.b", None)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ft.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_named_parameters_order_and_dotted_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "body.0.weight", "body.0.bias", "body.2.weight",
                     "body.2.bias", "head.weight"]
    assert [p for p in net.parameters()] == [p for _, p in net.named_parameters()]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_parameters(prefix="m")][1] == "m.body.0.weight"
    assert [n for n, _ in net.named_buffers()] == ["count", "cache"]
    assert len(list(net.buffers())) == 2


@needs_torch
def test_named_parameters_order_matches_torch():
    class Net(torch.nn.Module):  # noqa: F811 - the same name, for the same repr
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(1))
            self.body = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),
                                            torch.nn.Linear(3, 2))
            self.head = torch.nn.Linear(2, 1, bias=False)
            self.register_buffer("count", torch.zeros(1))
            self.register_buffer("cache", torch.zeros(2), persistent=False)

    tnet, net = Net(), globals()["Net"]()
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    assert list(net.state_dict()) == list(tnet.state_dict())
    assert [n for n, _ in net.named_modules()] == [n for n, _ in tnet.named_modules()]
    assert repr(net) == repr(tnet)


def test_shared_parameters_appear_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, nn.ReLU(), a)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_children_and_modules():
    net = Net()
    assert [n for n, _ in net.named_children()] == ["body", "head"]
    assert list(net.children()) == [net.body, net.head]
    assert [n for n, _ in net.named_modules()] == ["", "body", "body.0", "body.1", "body.2",
                                                   "head"]
    assert list(net.modules())[0] is net
    assert net.get_submodule("body.2") is net.body[2]
    assert net.get_parameter("body.2.bias") is net.body[2].bias
    assert net.get_buffer("count") is net.count
    with pytest.raises(AttributeError):
        net.get_submodule("body.7")


# ============================================================== state dict


def test_state_dict_keys_values_and_round_trip():
    ft.manual_seed(0)
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["scale", "count", "body.0.weight", "body.0.bias", "body.2.weight",
                        "body.2.bias", "head.weight"]  # own members first, then children
    assert not any(v.requires_grad for v in sd.values())
    # detached, sharing data
    assert np.shares_memory(sd["body.0.weight"].numpy(), net.body[0].weight.data.numpy())
    assert net.state_dict(keep_vars=True)["scale"] is net.scale

    x = ft.randn(5, 4)
    ft.manual_seed(1)
    other = Net()
    assert not np.allclose(other(x).detach().numpy(), net(x).detach().numpy())
    result = other.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    close(other(x), net(x).detach().numpy(), rtol=0, atol=0)
    # The load copies: changing the source afterwards does not change the target.
    with ft.no_grad():
        net.body[0].weight.add_(1.0)
    assert not np.allclose(other.body[0].weight.detach().numpy(),
                           net.body[0].weight.detach().numpy())


def test_load_state_dict_accepts_arrays_and_keeps_parameter_objects():
    lin = nn.Linear(2, 3)
    w = lin.weight
    lin.load_state_dict({"weight": np.ones((3, 2)), "bias": [0.0, 1.0, 2.0]})
    assert lin.weight is w and lin.weight.dtype == ft.float32
    close(lin.weight, np.ones((3, 2)))
    close(lin.bias, [0.0, 1.0, 2.0])
    lin.load_state_dict({"weight": ft.zeros(3, 2), "bias": ft.zeros(3)}, assign=True)
    assert lin.weight is not w and isinstance(lin.weight, nn.Parameter)


def test_load_state_dict_errors_are_pytorchs():
    lin = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as err:
        lin.load_state_dict({"weight": ft.zeros(3, 2), "foo": ft.zeros(1)})
    assert str(err.value) == ('Error(s) in loading state_dict for Linear:\n\tMissing key(s) in '
                              'state_dict: "bias". \n\tUnexpected key(s) in state_dict: "foo". ')
    with pytest.raises(RuntimeError) as err:
        lin.load_state_dict({"weight": ft.zeros(3, 3), "bias": ft.zeros(3)})
    assert str(err.value) == (
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
        "param with shape torch.Size([3, 3]) from checkpoint, the shape in current model "
        "is torch.Size([3, 2]).")
    res = lin.load_state_dict({"weight": ft.zeros(3, 2), "foo": ft.zeros(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["foo"]
    assert repr(res) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['foo'])"
    close(lin.weight, np.zeros((3, 2)))
    with pytest.raises(RuntimeError, match="size mismatch"):  # even when not strict
        lin.load_state_dict({"weight": ft.zeros(2, 2)}, strict=False)


@needs_torch
def test_load_state_dict_error_text_matches_torch():
    tlin = torch.nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as terr:
        tlin.load_state_dict({"weight": torch.zeros(3, 2), "foo": torch.zeros(1)})
    with pytest.raises(RuntimeError) as err:
        nn.Linear(2, 3).load_state_dict({"weight": ft.zeros(3, 2), "foo": ft.zeros(1)})
    assert str(err.value) == str(terr.value)


def test_non_persistent_buffer_is_not_saved_but_moves_with_to():
    net = Net()
    assert "cache" not in net.state_dict()
    net.double()
    assert net.cache.dtype == ft.float64 and net.count.dtype == ft.float64


# ==================================================================== modes


def test_train_eval_propagate():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(0.5)))
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    net.train(False)
    assert not net[1][0].training
    with pytest.raises(ValueError):
        net.train("yes")


def test_zero_grad():
    lin = nn.Linear(3, 2)
    lin(ft.ones(4, 3)).sum().backward()
    assert lin.weight.grad is not None
    g = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is g  # zeroed in place
    close(lin.weight.grad, np.zeros((2, 3)))
    close(lin.bias.grad, np.zeros(2))
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_requires_grad_and_apply():
    net = Net()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Sequential", "Linear", "Net"]

    def init_weights(m):
        if isinstance(m, nn.Linear):
            init.constant_(m.weight, 0.5)

    net.requires_grad_(True).apply(init_weights)
    close(net.head.weight, np.full((1, 2), 0.5))


def test_to_dtype_keeps_parameter_objects():
    lin = nn.Linear(2, 2)
    w = lin.weight
    lin(ft.ones(1, 2)).sum().backward()
    assert lin.to(ft.float64) is lin
    assert lin.weight is w and w.dtype == ft.float64 and w.grad.dtype == ft.float64
    assert isinstance(lin.weight, nn.Parameter) and w.requires_grad
    assert lin(ft.ones(1, 2, dtype=ft.float64)).dtype == ft.float64
    lin.float()
    assert w.dtype == ft.float32
    lin.to("cpu")
    assert str(w.device) == "cpu"
    with pytest.raises(TypeError, match="floating point"):
        lin.to(ft.int64)


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    h2 = lin.register_forward_hook(lambda m, args, out: out * 0)
    out = lin(ft.ones(1, 2))
    assert calls == ["pre"]
    close(out, np.zeros((1, 2)))
    h1.remove()
    h2.remove()
    lin(ft.ones(1, 2))
    assert calls == ["pre"]
    assert not np.allclose(lin(ft.ones(1, 2)).detach().numpy(), 0)
    with lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,)):
        close(lin(ft.ones(1, 2)), lin.bias.detach().numpy()[None])


def test_missing_forward():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


# ==================================================================== repr


def test_reprs():
    seq = nn.Sequential(nn.Linear(64, 32), nn.ReLU())
    assert repr(seq) == ("Sequential(\n  (0): Linear(in_features=64, out_features=32, "
                         "bias=True)\n  (1): ReLU()\n)")
    assert repr(Net()) == (
        "Net(\n"
        "  (body): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=3, bias=True)\n"
        "    (1): ReLU()\n"
        "    (2): Linear(in_features=3, out_features=2, bias=True)\n"
        "  )\n"
        "  (head): Linear(in_features=2, out_features=1, bias=False)\n"
        ")")
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert [repr(m) for m in (nn.GELU(), nn.GELU("tanh"), nn.Softmax(dim=1), nn.LogSoftmax(),
                              nn.Dropout(0.2), nn.Flatten(), nn.Identity(), nn.ReLU(True),
                              nn.MSELoss(), nn.CrossEntropyLoss(), nn.Sigmoid())] == [
        "GELU(approximate='none')", "GELU(approximate='tanh')", "Softmax(dim=1)",
        "LogSoftmax(dim=None)", "Dropout(p=0.2, inplace=False)",
        "Flatten(start_dim=1, end_dim=-1)", "Identity()", "ReLU(inplace=True)", "MSELoss()",
        "CrossEntropyLoss()", "Sigmoid()"]


@needs_torch
def test_reprs_match_torch():
    def build(m):
        return m.Sequential(
            m.Linear(64, 32), m.ReLU(), m.GELU(), m.GELU(approximate="tanh"), m.Tanh(),
            m.Sigmoid(), m.Softmax(dim=1), m.LogSoftmax(dim=-1), m.Dropout(0.25), m.Flatten(),
            m.Identity(), m.MSELoss(), m.L1Loss(), m.CrossEntropyLoss(), m.NLLLoss(),
            m.BCEWithLogitsLoss(), m.ModuleList([m.Linear(2, 2), m.Linear(2, 2), m.ReLU()]),
            m.Sequential(m.Linear(3, 1, bias=False)))

    assert repr(build(nn)) == repr(build(torch.nn))


# ============================================================== containers


def test_sequential_indexing_len_iteration():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and list(seq) == [a, b, c]
    assert seq[0] is a and seq[-1] is c
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert [n for n, _ in sub.named_children()] == ["1", "2"]  # PyTorch keeps the keys
    with pytest.raises(IndexError):
        seq[3]
    x = ft.randn(4, 2)
    close(seq(x), c(b(a(x))).detach().numpy(), rtol=0, atol=0)
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and isinstance(seq[3], nn.Sigmoid)
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[0]
    assert len(seq) == 3 and [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    named = nn.Sequential({"fc": nn.Linear(1, 1), "act": nn.ReLU()})
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers.insert(0, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Identity", "Linear", "Linear", "Linear",
                                                  "ReLU", "Tanh"]
    assert isinstance(layers[-1], nn.Tanh) and len(layers[1:3]) == 2
    layers += [nn.Sigmoid()]
    assert len(layers) == 7
    del layers[0]
    assert isinstance(layers[0], nn.Linear)
    assert [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    with pytest.raises(TypeError):
        layers.extend(nn.ReLU())


def test_identity_and_flatten():
    x = ft.randn(2, 3, 4)
    assert nn.Identity(54, unused="x")(x) is x
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)


# =========================================================== Linear and init


def test_linear_init_bounds_statistics_and_dtype():
    ft.manual_seed(0)
    lin = nn.Linear(256, 512)
    w = lin.weight.detach().numpy()
    b = lin.bias.detach().numpy()
    bound = 1 / math.sqrt(256)
    assert w.shape == (512, 256) and b.shape == (512,)
    assert w.dtype == np.float32 and b.dtype == np.float32
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.99 * bound
    assert abs(w.mean()) < 4 * bound / math.sqrt(3 * w.size)
    assert abs(w.var() / (bound ** 2 / 3) - 1) < 0.02
    assert lin.weight.is_leaf and lin.weight.requires_grad and lin.weight.grad is None
    assert nn.Linear(2, 2, dtype=ft.float64).weight.dtype == ft.float64


def test_linear_reproducible_with_manual_seed():
    ft.manual_seed(123)
    a = nn.Linear(5, 4)
    ft.manual_seed(123)
    b = nn.Linear(5, 4)
    c = nn.Linear(5, 4)
    close(a.weight, b.weight.detach().numpy(), rtol=0, atol=0)
    close(a.bias, b.bias.detach().numpy(), rtol=0, atol=0)
    assert not np.allclose(c.weight.detach().numpy(), b.weight.detach().numpy())


def test_linear_forward_and_gradients():
    lin = nn.Linear(3, 2).double()
    x = rng().standard_normal((5, 3))
    xt = t64(x)
    out = lin(xt)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    close(out, x @ w.T + b)
    assert out.grad_fn.name() == "AddmmBackward0"
    g = rng(1).standard_normal((5, 2))
    out.backward(ft.tensor(g))
    close(lin.weight.grad, g.T @ x)
    close(lin.bias.grad, g.sum(0))
    close(xt.grad, g @ w)
    assert nn.Linear(3, 2, bias=False)(ft.ones(1, 3)).grad_fn.name() == "MmBackward0"
    assert lin(t64(x[0])).shape == (2,)  # unbatched input


def test_init_functions():
    w = ft.empty(30, 20)
    fan_in, fan_out = init.calculate_fan_in_and_fan_out(w)
    assert (fan_in, fan_out) == (20, 30)
    assert init.calculate_fan_in_and_fan_out(ft.empty(8, 4, 3, 3)) == (36, 72)
    assert init._calculate_fan_in_and_fan_out is init.calculate_fan_in_and_fan_out
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.calculate_fan_in_and_fan_out(ft.empty(3))
    ft.manual_seed(0)
    assert init.xavier_uniform_(w) is w
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / 50)
    init.kaiming_uniform_(w, nonlinearity="relu")
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / 20)
    init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / 30)
    init.uniform_(w, -0.1, 0.2)
    assert w.numpy().min() >= -0.1 and w.numpy().max() <= 0.2
    big = ft.empty(200, 200)
    init.normal_(big, 1.0, 2.0)
    assert abs(big.numpy().mean() - 1) < 0.05 and abs(big.numpy().std() - 2) < 0.05
    init.xavier_normal_(big)
    assert abs(big.numpy().std() - math.sqrt(2 / 400)) < 0.003
    init.kaiming_normal_(big)
    assert abs(big.numpy().std() - math.sqrt(2 / 200)) < 0.003
    close(init.zeros_(w), np.zeros((30, 20)))
    close(init.ones_(w), np.ones((30, 20)))
    close(init.constant_(w, 0.25), np.full((30, 20), 0.25))
    assert math.isclose(init.calculate_gain("leaky_relu", math.sqrt(5)), math.sqrt(1 / 3))
    assert init.calculate_gain("tanh") == 5 / 3 and init.calculate_gain("sigmoid") == 1
    with pytest.raises(ValueError):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="Mode"):
        init.kaiming_uniform_(w, mode="fan_avg")


def test_init_on_parameter_records_nothing():
    lin = nn.Linear(3, 3)
    init.normal_(lin.weight)
    assert lin.weight.is_leaf and lin.weight.grad_fn is None and lin.weight.requires_grad


# ============================================================== activations

X = np.array([-30.0, -5.0, -2.5, -1.0, -0.3, 0.0, 0.2, 1.0, 2.0, 3.5, 6.0, 40.0])


def _phi(x):
    return np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _gelu_tanh_np(x):
    c = math.sqrt(2 / math.pi)
    u = c * (x + 0.044715 * x ** 3)
    th = np.tanh(u)
    value = 0.5 * x * (1 + th)
    deriv = 0.5 * (1 + th) + 0.5 * x * (1 - th ** 2) * c * (1 + 3 * 0.044715 * x ** 2)
    return value, deriv


def _sig(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))),
                    np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


ELEMENTWISE = {
    # name: (funcgrad function, value(x), derivative(x))
    "relu": (F.relu, lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(float)),
    "tanh": (F.tanh, np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "sigmoid": (F.sigmoid, _sig, lambda x: _sig(x) * _sig(-x)),
    "gelu": (F.gelu, lambda x: 0.5 * x * _erfc(-x / math.sqrt(2)),
             lambda x: 0.5 * _erfc(-x / math.sqrt(2)) + x * _phi(x)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda x: _gelu_tanh_np(x)[0],
                  lambda x: _gelu_tanh_np(x)[1]),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_activation_values_and_gradients(name):
    fn, value, deriv = ELEMENTWISE[name]
    x = t64(X)
    y = fn(x)
    assert y.dtype == ft.float64 and y.shape == x.shape
    close(y, value(X), rtol=1e-13, atol=1e-15)
    g = rng().standard_normal(X.shape)
    y.backward(ft.tensor(g))
    close(x.grad, g * deriv(X), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_activation_modules_and_float32(name):
    module = {"relu": nn.ReLU(), "tanh": nn.Tanh(), "sigmoid": nn.Sigmoid(), "gelu": nn.GELU(),
              "gelu_tanh": nn.GELU("tanh")}[name]
    x = ft.tensor(X.astype(np.float32), requires_grad=True)
    y = module(x)
    assert y.dtype == ft.float32
    close(y, ELEMENTWISE[name][1](X), rtol=2e-6, atol=1e-7)
    grad_name = {"gelu_tanh": "Gelu"}.get(name, name.capitalize())
    assert y.grad_fn.name() == f"{grad_name}Backward0"
    # NumPy arrays are taken as tensors (funcgrad's extension: PyTorch refuses them) ...
    out = ELEMENTWISE[name][0](X)
    assert isinstance(out, ft.Tensor) and out.dtype == ft.float64
    close(out, ELEMENTWISE[name][1](X), rtol=1e-13, atol=1e-15)
    # ... and funcgrad Arrays stay Arrays: the same code serves the functional world.
    with fg.enable_x64():
        arr = ELEMENTWISE[name][0](fg.numpy.asarray(X))
        assert isinstance(arr, fg.Array) and not isinstance(arr, ft.Tensor)
        close(arr, ELEMENTWISE[name][1](X), rtol=1e-13, atol=1e-15)


def test_relu_edge_cases_match_pytorch_semantics():
    x = t64([0.0, np.nan, -np.inf, np.inf])
    y = F.relu(x)
    np.testing.assert_array_equal(y.detach().numpy(), [0.0, np.nan, 0.0, np.inf])
    y.sum().backward()
    assert x.grad.numpy()[0] == 0.0  # the derivative at 0 is 0, as in PyTorch
    inp = ft.tensor([-1.0, 2.0])
    assert F.relu(inp, inplace=True) is inp
    close(inp, [0.0, 2.0])


def test_sigmoid_and_gelu_extremes():
    x = t64([-800.0, -40.0, 40.0, 800.0])
    s = F.sigmoid(x)
    close(s, [0.0, math.exp(-40) / (1 + math.exp(-40)), 1.0, 1.0], rtol=1e-14, atol=0)
    s.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    xg = t64([-40.0, -10.0, 10.0, 40.0])
    yg = F.gelu(xg)
    xs = xg.detach().numpy()
    close(yg, 0.5 * xs * _erfc(-xs / math.sqrt(2)), rtol=1e-13, atol=1e-300)
    assert yg.detach().numpy()[1] < 0  # x * Phi(x) keeps its precision for negative x
    yg.sum().backward()
    close(xg.grad, [0.0, 0.0, 1.0, 1.0], atol=1e-20)
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(xg, approximate="fast")


def test_erf_accuracy_and_derivative():
    xs = np.concatenate([np.linspace(-7, 7, 4001), [2.0, -2.0, 1e-300, 0.0, 30.0, -30.0]])
    np.testing.assert_allclose(erf(xs), _erf(xs), rtol=0, atol=2e-15)
    big = np.linspace(2, 25, 500)
    np.testing.assert_allclose(erfc(big), np.vectorize(math.erfc)(big), rtol=1e-12)
    np.testing.assert_allclose(erfc(-big), 2 - np.vectorize(math.erfc)(big), rtol=1e-15)
    d = fg.vmap(fg.grad(erf))(xs)
    np.testing.assert_allclose(d, 2 / math.sqrt(math.pi) * np.exp(-xs ** 2), rtol=1e-11,
                               atol=1e-16)
    assert erf(np.array([np.inf, -np.inf])).tolist() == [1.0, -1.0]
    assert np.isnan(erf(np.array(np.nan)))
    assert erf(np.ones(2, np.float32)).dtype == np.float32


def test_softmax_and_log_softmax():
    x = rng().standard_normal((3, 4, 5)) * 3
    for dim in (0, 1, -1):
        e = np.exp(x - x.max(dim, keepdims=True))
        sm = e / e.sum(dim, keepdims=True)
        xt = t64(x)
        y = F.softmax(xt, dim=dim)
        close(y, sm, rtol=1e-13)
        assert y.grad_fn.name() == "SoftmaxBackward0"
        g = rng(1).standard_normal(x.shape)
        y.backward(ft.tensor(g))
        close(xt.grad, sm * (g - (g * sm).sum(dim, keepdims=True)), rtol=1e-11, atol=1e-14)

        xt = t64(x)
        y = nn.LogSoftmax(dim=dim)(xt)
        close(y, np.log(sm), rtol=1e-13)
        assert y.grad_fn.name() == "LogSoftmaxBackward0"
        y.backward(ft.tensor(g))
        close(xt.grad, g - sm * g.sum(dim, keepdims=True), rtol=1e-11, atol=1e-14)
    # Large logits neither overflow nor lose the log.
    close(F.log_softmax(t64([[1000.0, 0.0]]), dim=1), [[0.0, -1000.0]])
    close(F.softmax(t64([[1000.0, 0.0]]), dim=1, dtype=ft.float32), [[1.0, 0.0]])


def test_softmax_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(ft.ones(2, 3))
    close(y, np.full((2, 3), 1 / 3), rtol=1e-6)
    with pytest.warns(UserWarning):
        assert nn.Softmax()(ft.ones(3)).shape == (3,)


# ================================================================== dropout


def test_dropout_training_masks_and_scales():
    ft.manual_seed(0)
    p = 0.3
    x = ft.ones(200_000, requires_grad=True)
    y = F.dropout(x, p=p)
    out = y.detach().numpy()
    kept = out != 0
    assert abs((~kept).mean() - p) < 0.005
    close(out[kept], np.full(kept.sum(), 1 / (1 - p)), rtol=1e-6)
    y.sum().backward()
    close(x.grad, out, rtol=0, atol=0)  # the gradient is the same mask, same scale


def test_dropout_eval_identity_reproducibility_and_edges():
    x = ft.randn(10, 10)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    close(F.dropout(x, 1.0), np.zeros((10, 10)))
    drop = nn.Dropout(0.5)
    ft.manual_seed(7)
    a = drop(x).numpy()
    ft.manual_seed(7)
    b = drop(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(drop(x).numpy(), a)
    drop.eval()
    assert drop(x) is x
    model = nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.9))
    model.eval()
    np.testing.assert_array_equal(model(x).detach().numpy(), model[0](x).detach().numpy())
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1"):
            F.dropout(x, bad)
        with pytest.raises(ValueError, match="between 0 and 1"):
            nn.Dropout(bad)
    y = ft.ones(1000)
    ft.manual_seed(1)
    assert F.dropout(y, 0.5, inplace=True) is y
    assert set(np.unique(y.numpy())) == {0.0, 2.0}
    assert F.dropout(ft.ones(4, dtype=ft.float64), 0.5).dtype == ft.float64


# ==================================================================== losses

N, C = 6, 4


def _data(seed=0):
    r = rng(seed)
    x = r.standard_normal((N, C)) * 2
    t = r.integers(0, C, N)
    w = r.uniform(0.5, 2.0, C)
    return x, t, w


def _log_softmax_np(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def _reduce_np(v, reduction):
    return {"mean": v.mean(), "sum": v.sum(), "none": v}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_l1_loss(reduction):
    r = rng()
    x, t = r.standard_normal((3, 5)), r.standard_normal((3, 5))
    g = r.standard_normal((3, 5)) if reduction == "none" else 1.0
    scale = 1 / x.size if reduction == "mean" else 1.0
    for fn, module, value, deriv in [
        (F.mse_loss, nn.MSELoss, (x - t) ** 2, 2 * (x - t)),
        (F.l1_loss, nn.L1Loss, np.abs(x - t), np.sign(x - t)),
    ]:
        for call in (lambda a, b, fn=fn: fn(a, b, reduction=reduction),
                     lambda a, b, module=module: module(reduction=reduction)(a, b)):
            xt, tt = t64(x), t64(t)
            loss = call(xt, tt)
            close(loss, _reduce_np(value, reduction), rtol=1e-13)
            loss.backward(ft.tensor(g) if reduction == "none" else None)
            close(xt.grad, g * deriv * scale, rtol=1e-13)
            close(tt.grad, -g * deriv * scale, rtol=1e-13)
    assert F.mse_loss(t64(x), t64(t)).grad_fn.name() == "MseLossBackward0"


def test_loss_reduction_validation_and_legacy_args():
    x = ft.ones(3)
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.warns(UserWarning, match="reduction='sum'"):
        close(F.mse_loss(x, x * 3, size_average=False), 12.0)
    with pytest.warns(UserWarning, match="broadcasting"):
        F.mse_loss(ft.ones(3, 1), ft.ones(3))


def _nll_np(logp, t, w, ignore_index, reduction):
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    wt = (w[safe] if w is not None else np.ones(len(t))) * valid
    losses = -logp[np.arange(len(t)), safe] * wt
    grad = np.zeros_like(logp)
    denom = wt.sum() if reduction == "mean" else 1.0
    grad[np.arange(len(t)), safe] = -wt / denom
    if reduction == "none":
        return losses, grad
    return (losses.sum() / denom), grad


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [False, True])
def test_nll_loss(reduction, weighted, ignore):
    x, t, w = _data()
    logp = _log_softmax_np(x)
    w = w if weighted else None
    ignore_index = -100
    if ignore:
        ignore_index = 2
        t[:2] = 2
    value, grad = _nll_np(logp, t, w, ignore_index, reduction)
    xt = t64(logp)
    loss = F.nll_loss(xt, ft.tensor(t), weight=None if w is None else ft.tensor(w),
                      ignore_index=ignore_index, reduction=reduction)
    close(loss, value, rtol=1e-13)
    g = rng(3).standard_normal(N) if reduction == "none" else 1.0
    loss.backward(ft.tensor(g) if reduction == "none" else None)
    close(xt.grad, grad * (np.asarray(g)[:, None] if reduction == "none" else 1.0),
          rtol=1e-13)
    module = nn.NLLLoss(weight=None if w is None else ft.tensor(w),
                        ignore_index=ignore_index, reduction=reduction)
    close(module(t64(logp), ft.tensor(t)), value, rtol=1e-13)
    assert loss.grad_fn.name() == "NllLossBackward0"


def _ce_np(x, t, w, reduction, eps=0.0, ignore_index=-100):
    logp = _log_softmax_np(x)
    p = np.exp(logp)
    n, c = x.shape
    w_ = np.ones(c) if w is None else w
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    wt = w_[safe] * valid
    onehot = np.eye(c)[safe]
    nll = -(logp * onehot).sum(1) * wt
    dnll = (p - onehot) * wt[:, None]
    smooth = -(logp * w_).sum(1) * valid
    dsmooth = (w_.sum() * p - w_) * valid[:, None]
    value = (1 - eps) * nll + eps / c * smooth
    grad = (1 - eps) * dnll + eps / c * dsmooth
    if reduction == "mean":
        return value.sum() / wt.sum(), grad / wt.sum()
    if reduction == "sum":
        return value.sum(), grad
    return value, grad


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weighted, eps):
    x, t, w = _data(1)
    w = w if weighted else None
    t[0] = -100  # ignored (the default ignore_index)
    value, grad = _ce_np(x, t, w, reduction, eps)
    xt = t64(x)
    loss = nn.CrossEntropyLoss(weight=None if w is None else ft.tensor(w), reduction=reduction,
                               label_smoothing=eps)(xt, ft.tensor(t))
    close(loss, value, rtol=1e-13)
    g = rng(4).standard_normal(N) if reduction == "none" else None
    loss.backward(None if g is None else ft.tensor(g))
    close(xt.grad, grad * (1.0 if g is None else g[:, None]), rtol=1e-12, atol=1e-15)
    if eps == 0.0:
        assert loss.grad_fn.name() == "NllLossBackward0"


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 9), c=st.integers(1, 7), seed=st.integers(0, 2**16),
       reduction=st.sampled_from(["mean", "sum", "none"]),
       dtype=st.sampled_from([np.float32, np.float64]), scale=st.sampled_from([1.0, 30.0]))
def test_cross_entropy_with_no_target_ignored(n, c, seed, reduction, dtype, scale):
    """No target is ignore_index (the common case, read on the host): the loss skips the
    masking, with the same values and gradients, bit for bit, as the masked program (an
    empty batch too: NaN mean, +0.0 sum)."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal((n, c)) * scale).astype(dtype)
    t = r.integers(0, c, n)
    xt = ft.tensor(x, requires_grad=True)
    loss = F.cross_entropy(xt, ft.tensor(t), reduction=reduction)
    g = r.standard_normal(n).astype(dtype) if reduction == "none" else None
    loss.backward(None if g is None else ft.tensor(g))
    value, grad = _ce_np(x.astype(np.float64), t, None, reduction)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    close(loss, value, rtol=tol, atol=tol)
    close(xt.grad, grad * (1.0 if g is None else g[:, None]), rtol=tol, atol=tol)
    assert loss.grad_fn.name() == "NllLossBackward0" and loss.dtype == xt.dtype
    masked = F._ce_by_index_jit(-100, reduction, 0.0, c, True)
    y = ft.tensor(x, requires_grad=True)
    ref = ft.nn.functional._op("NllLoss", masked, y, ft.tensor(t), None)
    ref.backward(None if g is None else ft.tensor(g))
    # bit for bit, signed zeros and the empty batch's NaN mean included
    assert loss.detach().numpy().tobytes() == ref.detach().numpy().tobytes()
    assert xt.grad.numpy().tobytes() == y.grad.numpy().tobytes()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_cross_entropy_probabilities(reduction, weighted, eps):
    x, _, w = _data(2)
    r = rng(5)
    probs = r.dirichlet(np.ones(C), N)
    w = w if weighted else None
    w_ = np.ones(C) if w is None else w
    tgt = probs * (1 - eps) + eps / C
    logp = _log_softmax_np(x)
    value = -(logp * tgt * w_).sum(1)
    grad = -(tgt * w_) + (tgt * w_).sum(1, keepdims=True) * np.exp(logp)
    if reduction == "mean":
        value, grad = value.mean(), grad / N
    elif reduction == "sum":
        value = value.sum()
    xt = t64(x)
    loss = F.cross_entropy(xt, ft.tensor(probs), weight=None if w is None else ft.tensor(w),
                           reduction=reduction, label_smoothing=eps)
    close(loss, value, rtol=1e-13)
    g = r.standard_normal(N) if reduction == "none" else None
    loss.backward(None if g is None else ft.tensor(g))
    close(xt.grad, grad * (1.0 if g is None else g[:, None]), rtol=1e-12, atol=1e-15)


def test_cross_entropy_shapes_and_errors():
    x, t, _ = _data(3)
    # Unbatched input (C,) with a scalar target.
    close(F.cross_entropy(t64(x[0]), ft.tensor(t[0])), _ce_np(x[:1], t[:1], None, "mean")[0])
    # Extra dimensions: (N, C, d) against (N, d).
    x3 = rng(6).standard_normal((2, C, 3))
    t3 = rng(7).integers(0, C, (2, 3))
    flat_x = np.moveaxis(x3, 1, -1).reshape(-1, C)
    close(F.cross_entropy(t64(x3), ft.tensor(t3)), _ce_np(flat_x, t3.reshape(-1), None,
                                                          "mean")[0], rtol=1e-13)
    assert F.cross_entropy(t64(x3), ft.tensor(t3), reduction="none").shape == (2, 3)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(t64(x), ft.tensor(np.full(N, 7)))
    with pytest.raises(RuntimeError, match="label_smoothing"):  # PyTorch 2.13: RuntimeError
        F.cross_entropy(t64(x), ft.tensor(t), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not "
                                           "supported"):
        F.cross_entropy(t64(x), ft.tensor(np.ones((N, C + 1))))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got "
                                           "Double"):
        F.cross_entropy(t64(x), ft.tensor(np.ones(N)))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(\d+\) to match target "
                                         r"batch_size \(\d+\)\."):
        F.cross_entropy(t64(x), ft.tensor(np.zeros(N + 1, np.int64)))
    with pytest.raises(RuntimeError, match="target dtype to be Long or Byte, but got Double"):
        F.nll_loss(t64(x), ft.tensor(t.astype(np.float64)))
    # float32 logits stay float32.
    assert F.cross_entropy(ft.tensor(x.astype(np.float32)), ft.tensor(t)).dtype == ft.float32


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("with_pos_weight", [False, True])
@pytest.mark.parametrize("with_weight", [False, True])
def test_bce_with_logits(reduction, with_pos_weight, with_weight):
    r = rng(8)
    x = r.standard_normal((5, 3)) * 4
    x[0] = [0.0, 50.0, -50.0]
    t = r.uniform(0, 1, (5, 3))
    t[1] = [0.0, 1.0, 1.0]
    pw = r.uniform(0.5, 3, 3) if with_pos_weight else np.ones(3)
    w = r.uniform(0.5, 2, (5, 3)) if with_weight else np.ones((5, 3))
    softplus_neg = np.logaddexp(0, -x)  # -log(sigmoid(x))
    lw = 1 + (pw - 1) * t
    value = ((1 - t) * x + lw * softplus_neg) * w
    deriv = ((1 - t) - lw * _sig(-x)) * w
    g = r.standard_normal((5, 3)) if reduction == "none" else 1.0
    if reduction == "mean":
        deriv = deriv / x.size
    xt = t64(x)
    loss = nn.BCEWithLogitsLoss(weight=ft.tensor(w) if with_weight else None,
                                reduction=reduction,
                                pos_weight=ft.tensor(pw) if with_pos_weight else None)(
        xt, t64(t, requires_grad=False))
    close(loss, _reduce_np(value, reduction), rtol=1e-13)
    loss.backward(ft.tensor(g) if reduction == "none" else None)
    close(xt.grad, g * deriv, rtol=1e-12, atol=1e-15)
    assert loss.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"


def test_bce_with_logits_is_stable_and_checks_shapes():
    x = t64([1000.0, -1000.0, 1000.0, -1000.0])
    t = ft.tensor([1.0, 0.0, 0.0, 1.0], dtype=ft.float64)
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    close(loss, [0.0, 0.0, 1000.0, 1000.0])
    loss.sum().backward()
    close(x.grad, [0.0, 0.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(ft.ones(3), ft.ones(2))


def test_one_hot():
    oh = F.one_hot(ft.tensor([0, 2, 1]))
    assert oh.dtype == ft.int64 and oh.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert F.one_hot(ft.tensor([[1]]), num_classes=4).shape == (1, 1, 4)
    with pytest.raises(RuntimeError, match="LongTensor"):
        F.one_hot(ft.tensor([1.0]))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        F.one_hot(ft.tensor([3]), 3)


def test_functional_accepts_arrays_and_tracers():
    x, t, _ = _data()
    value = F.cross_entropy(x, t)
    assert isinstance(value, ft.Tensor) and value.shape == ()
    close(value, _ce_np(x, t, None, "mean")[0], rtol=1e-13)
    g = fg.grad(lambda a: F.cross_entropy(a, t))(x)
    close(g, _ce_np(x, t, None, "mean")[1], rtol=1e-12)
    per_row = fg.vmap(lambda a, b: F.cross_entropy(a, b))(x, t)
    close(per_row, _ce_np(x, t, None, "none")[0], rtol=1e-13)
    jitted = fg.jit(lambda a: F.gelu(F.linear(a, np.ones((2, C)))).sum())
    close(jitted(x), F.gelu(x @ np.ones((C, 2))).sum(), rtol=1e-13)


def test_mlp_trains_on_a_toy_problem():
    ft.manual_seed(0)
    r = rng(0)
    x = r.standard_normal((64, 2)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int64)
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    loss_fn = nn.CrossEntropyLoss()
    xt, yt = ft.tensor(x), ft.tensor(y)
    first = None
    for _ in range(200):
        model.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        first = first if first is not None else loss.item()
        with ft.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * 0.5)
    assert loss.item() < 0.3 * first


# ============================================================ against torch

TORCH_CASES = {
    "relu": (lambda m, x: m.relu(x), X),
    "tanh": (lambda m, x: m.tanh(x), X),
    "sigmoid": (lambda m, x: m.sigmoid(x), X),
    "gelu": (lambda m, x: m.gelu(x), X),
    "gelu_tanh": (lambda m, x: m.gelu(x, approximate="tanh"), X),
    "softmax": (lambda m, x: m.softmax(x, dim=1), X[:12].reshape(3, 4)),
    "log_softmax": (lambda m, x: m.log_softmax(x, dim=0), X[:12].reshape(3, 4)),
    "linear": (lambda m, x: m.linear(x, x[:2] * 0.5, x[0, :2] * 0.1), X[:12].reshape(3, 4)),
}


def _torch_lib(framework):
    return torch.nn.functional if framework == "torch" else F


@needs_torch
@pytest.mark.parametrize("name", sorted(TORCH_CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_activations_against_torch(name, dtype):
    fn, x = TORCH_CASES[name]
    x = x.astype(dtype)
    g = rng().standard_normal(np.shape(fn(F, x))).astype(dtype)
    xt = torch.tensor(x, requires_grad=True)
    yt = fn(torch.nn.functional, xt)
    yt.backward(torch.tensor(g))
    xf = ft.tensor(x, requires_grad=True)
    yf = fn(F, xf)
    yf.backward(ft.tensor(g))
    assert yf.dtype == getattr(ft, dtype)
    # float32: to float32 precision (both round; near cancellations they round differently)
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == "float64" else dict(rtol=2e-6, atol=1e-6)
    close(yf, yt.detach().numpy(), **tol)
    close(xf.grad, xt.grad.numpy(), **tol)
    assert yf.grad_fn.name() == yt.grad_fn.name()


def _torch_loss_cases():
    x, t, w = _data(9)
    t2 = t.copy()
    t2[1] = 3
    probs = rng(10).dirichlet(np.ones(C), N)
    r = rng(11)
    xb = r.standard_normal((N, C)) * 3
    tb = r.uniform(0, 1, (N, C))
    pw = r.uniform(0.5, 2, C)
    reg_t = r.standard_normal((N, C))
    cases = []
    for red in ("mean", "sum", "none"):
        cases += [
            (f"mse-{red}", "mse_loss", x, reg_t, dict(reduction=red)),
            (f"l1-{red}", "l1_loss", x, reg_t, dict(reduction=red)),
            (f"nll-{red}", "nll_loss", x, t, dict(reduction=red)),
            (f"nll-w-ign-{red}", "nll_loss", x, t2, dict(reduction=red, weight=w,
                                                          ignore_index=3)),
            (f"ce-{red}", "cross_entropy", x, t, dict(reduction=red)),
            (f"ce-w-ls-ign-{red}", "cross_entropy", x, t2,
             dict(reduction=red, weight=w, label_smoothing=0.15, ignore_index=3)),
            (f"ce-probs-{red}", "cross_entropy", x, probs, dict(reduction=red)),
            (f"ce-probs-w-ls-{red}", "cross_entropy", x, probs,
             dict(reduction=red, weight=w, label_smoothing=0.1)),
            (f"bce-{red}", "binary_cross_entropy_with_logits", xb, tb, dict(reduction=red)),
            (f"bce-pw-w-{red}", "binary_cross_entropy_with_logits", xb, tb,
             dict(reduction=red, pos_weight=pw, weight=tb + 0.5)),
        ]
    return cases


LOSS_CASES = _torch_loss_cases()


@needs_torch
@pytest.mark.parametrize("case", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_losses_against_torch(case):
    _, fname, x, t, kwargs = case
    outs = {}
    for framework, make in (("torch", torch.tensor), ("funcgrad", ft.tensor)):
        xt = make(x, requires_grad=True)
        kw = {k: make(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        loss = getattr(_torch_lib(framework), fname)(xt, make(t), **kw)
        g = np.linspace(-1, 1, int(np.prod(loss.shape))).reshape(tuple(loss.shape))
        loss.backward(make(g))
        outs[framework] = (loss.detach().numpy(), xt.grad.numpy())
    close(outs["funcgrad"][0], outs["torch"][0], rtol=1e-12, atol=1e-14)
    close(outs["funcgrad"][1], outs["torch"][1], rtol=1e-12, atol=1e-14)


@needs_torch
def test_linear_init_distribution_matches_torch_bounds():
    torch.manual_seed(0)
    tl = torch.nn.Linear(100, 50)
    fl = nn.Linear(100, 50)
    for a, b in ((tl.weight, fl.weight), (tl.bias, fl.bias)):
        ta, fb = a.detach().numpy(), b.detach().numpy()
        assert ta.shape == fb.shape and ta.dtype == fb.dtype
        assert np.abs(fb).max() <= 0.1 and np.abs(ta).max() <= 0.1
        assert abs(ta.std() - fb.std()) < 0.01


def test_no_warnings_in_normal_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Softmax(dim=1))
        model(ft.randn(2, 3)).sum().backward()


@needs_torch
@pytest.mark.parametrize("kwargs", [{}, {"weight": True, "label_smoothing": 0.2,
                                         "ignore_index": 1}, {"reduction": "none"},
                                    {"weight": True, "reduction": "sum"}], ids=str)
@pytest.mark.parametrize("probabilities", [False, True])
def test_cross_entropy_with_extra_dims_against_torch(kwargs, probabilities):
    r = rng(12)
    x = r.standard_normal((3, 4, 2, 5))
    if probabilities:
        if "ignore_index" in kwargs:
            pytest.skip("ignore_index is for class-index targets")
        t = r.dirichlet(np.ones(4), (3, 2, 5)).transpose(0, 3, 1, 2).copy()
    else:
        t = r.integers(0, 4, (3, 2, 5))
    w = r.uniform(0.5, 2, 4)
    outs = []
    for make, lib in ((torch.tensor, torch.nn.functional), (ft.tensor, F)):
        kw = dict(kwargs)
        if kw.pop("weight", False):
            kw["weight"] = make(w)
        xt = make(x, requires_grad=True)
        loss = lib.cross_entropy(xt, make(t), **kw)
        loss.sum().backward()
        outs.append((loss.detach().numpy(), xt.grad.numpy()))
    close(outs[1][0], outs[0][0], rtol=1e-12, atol=1e-14)
    close(outs[1][1], outs[0][1], rtol=1e-12, atol=1e-14)
