"""funcgrad.func: a module's parameters as a pytree of arrays (``params_of``) and the
module as a function of them (``functional_call``), under ``fg.grad``, ``fg.vmap``,
``fg.jit`` and ``fg.make_jaxpr``; per-example gradients against a loop of Tensor
``backward``; Tensor operations on Tensors whose data are tracers.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.numpy as fnp
import funcgrad.torch as ft
import funcgrad.torch.nn.functional as F
from funcgrad.torch import nn
from funcgrad.torch.func import buffers_of, functional_call, params_of

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None


def close(a, b, rtol=1e-6, atol=1e-7):
    a = a.detach().numpy() if isinstance(a, ft.Tensor) else a
    b = b.detach().numpy() if isinstance(b, ft.Tensor) else b
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                               rtol=rtol, atol=atol)


def mlp(seed=0, act=None):
    ft.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8), act or nn.Tanh(), nn.Linear(8, 3))


def data(n=7, seed=0):
    r = np.random.default_rng(seed)
    return r.standard_normal((n, 5)).astype(np.float32), r.integers(0, 3, n)


# ================================================================ params_of


def test_params_of_is_a_detached_copy():
    model = mlp()
    params = params_of(model)
    assert list(params) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert all(type(v) is np.ndarray and v.dtype == np.float32 for v in params.values())
    close(params["0.weight"], model[0].weight)
    params["0.weight"][...] = 0
    assert np.abs(model[0].weight.detach().numpy()).max() > 0
    assert buffers_of(nn.Linear(2, 2)) == {}


# ========================================================== functional_call


def test_arrays_in_arrays_out_and_module_restored():
    model = mlp()
    x, _ = data()
    params = {k: v * 2 for k, v in params_of(model).items()}
    originals = [p for p in model.parameters()]
    out = functional_call(model, params, (x,))
    assert isinstance(out, fg.Array) and out.shape == (7, 3)
    w1, b1, w2, b2 = params.values()
    close(out, np.tanh(x @ w1.T + b1) @ w2.T + b2, rtol=1e-5)
    assert [p for p in model.parameters()] == originals  # the module's own are back
    assert all(type(p) is nn.Parameter for p in model.parameters())
    # A single argument need not be a tuple; kwargs pass through.
    close(functional_call(model, params, x), out)
    close(functional_call(model, params, (), {"input": x}), out)


def test_partial_dicts_strict_and_unknown_names():
    model = mlp()
    x, _ = data()
    zero_head = {"2.weight": np.zeros((3, 8), np.float32)}
    out = functional_call(model, zero_head, (x,))
    close(out, np.broadcast_to(model[2].bias.detach().numpy(), (7, 3)))
    # PyTorch's texts; an unknown name is set as a temporary attribute (strict=False).
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): '0.bias', '0.weight', "
                                           "'2.bias'"):
        functional_call(model, zero_head, (x,), strict=True)
    close(functional_call(model, {"2.wieght": np.zeros((3, 8))}, (x,)), model(ft.tensor(x)))
    # Several dicts, as in torch.func; a name may appear only once.
    p = params_of(model)
    first = {k: v for k, v in p.items() if k.startswith("0.")}
    second = {k: v for k, v in p.items() if k.startswith("2.")}
    close(functional_call(model, (first, second), (x,)), model(ft.tensor(x)))
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(model, (p, p), (x,))


def test_restored_after_an_exception():
    model = mlp()
    w = model[0].weight
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
        functional_call(model, {"0.weight": np.zeros((8, 4), np.float32)}, (data()[0],))
    assert model[0].weight is w


def test_buffers_and_tied_weights():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("scale", ft.tensor(1.0))

        def forward(self, x):
            return self.lin(x) * self.scale

    m = Scaled()
    x = np.ones((1, 2), np.float32)
    close(functional_call(m, {"scale": np.float32(3.0)}, (x,)),
          3 * m(ft.tensor(x)).detach().numpy())

    seq = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    seq[1].weight = seq[0].weight  # one Parameter under two names
    seq[1].bias = seq[0].bias
    w = {"0.weight": np.eye(2, dtype=np.float32), "0.bias": np.zeros(2, np.float32)}
    close(functional_call(seq, w, (x,)), x)  # "1.weight" follows "0.weight"
    untied = functional_call(seq, w, (x,), tie_weights=False)
    close(untied, seq[1](ft.tensor(x)))
    assert not np.allclose(untied, x)


def test_tensors_in_tensors_out_with_backward():
    model = mlp()
    x, y = data()
    params = {k: ft.tensor(v, requires_grad=True) for k, v in params_of(model).items()}
    loss = F.cross_entropy(functional_call(model, params, (ft.tensor(x),)), ft.tensor(y))
    assert isinstance(loss, ft.Tensor) and loss.grad_fn is not None
    loss.backward()
    model.zero_grad()
    F.cross_entropy(model(ft.tensor(x)), ft.tensor(y)).backward()
    for name, p in model.named_parameters():
        close(params[name].grad, p.grad)


# ============================================================ transforms


def loss_fn(model):
    def f(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x,)), y)

    return f


def test_grad_matches_tensor_backward():
    model = mlp(act=nn.GELU())
    x, y = data()
    grads = fg.grad(loss_fn(model))(params_of(model), x, y)
    model.zero_grad()
    F.cross_entropy(model(ft.tensor(x)), ft.tensor(y)).backward()
    for name, p in model.named_parameters():
        assert grads[name].dtype == np.float32
        close(grads[name], p.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("act", ["tanh", "relu", "gelu"])
def test_per_example_gradients_vmap_of_grad_vs_loop(act):
    model = mlp(act={"tanh": nn.Tanh(), "relu": nn.ReLU(), "gelu": nn.GELU()}[act])
    x, y = data(9, seed=1)

    def per_example(params, xi, yi):
        # One example: (5,) -> logits (3,), a scalar target.
        return F.cross_entropy(functional_call(model, params, (xi,)), yi)

    grads = fg.vmap(fg.grad(per_example), in_axes=(None, 0, 0))(params_of(model), x, y)
    assert grads["0.weight"].shape == (9, 8, 5)
    for i in range(len(x)):
        model.zero_grad()
        F.cross_entropy(model(ft.tensor(x[i:i + 1])), ft.tensor(y[i:i + 1])).backward()
        for name, p in model.named_parameters():
            close(grads[name][i], p.grad, rtol=1e-5, atol=1e-6)


def test_per_example_gradients_of_a_linear_model_in_float64():
    ft.manual_seed(3)
    model = nn.Linear(4, 1).double()
    r = np.random.default_rng(3)
    x, y = r.standard_normal((6, 4)), r.standard_normal((6, 1))

    def sq(params, xi, yi):
        return F.mse_loss(functional_call(model, params, (xi,)), yi)

    grads = fg.vmap(fg.grad(sq), in_axes=(None, 0, 0))(params_of(model), x, y)
    w, b = model.weight.detach().numpy(), model.bias.detach().numpy()
    resid = x @ w.T + b - y  # (6, 1): d/dw (r^2) = 2 r x, d/db = 2 r
    close(grads["weight"], 2 * resid[:, :, None] * x[:, None, :], rtol=1e-12, atol=1e-14)
    close(grads["bias"], 2 * resid, rtol=1e-12, atol=1e-14)


def test_jit_and_value_and_grad():
    model = mlp()
    x, y = data()
    f = loss_fn(model)
    params = params_of(model)
    close(fg.jit(f)(params, x, y), f(params, x, y))
    value, grads = fg.value_and_grad(f)(params, x, y)
    jv, jg = fg.jit(fg.value_and_grad(f))(params, x, y)
    close(jv, value)
    for k in grads:
        close(jg[k], grads[k], rtol=1e-5, atol=1e-7)


def test_a_training_loop_in_the_functional_world():
    model = mlp()
    x, _ = data(32, seed=2)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)
    params = params_of(model)
    step = fg.jit(fg.value_and_grad(loss_fn(model)))
    first = None
    for _ in range(60):
        loss, grads = step(params, x, y)
        first = float(loss) if first is None else first
        params = fg.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)
    assert float(loss) < 0.5 * first
    model.load_state_dict(params)  # put the trained values back into the module
    close(F.cross_entropy(model(ft.tensor(x)), ft.tensor(y)), loss_fn(model)(params, x, y),
          rtol=1e-6)


def test_make_jaxpr_shows_the_facade_computation():
    model = mlp(act=nn.ReLU())
    x, _ = data()
    params = params_of(model)
    jaxpr = fg.make_jaxpr(lambda p, xb: functional_call(model, p, (xb,)))(params, x)
    text = str(jaxpr)
    assert text.count("dot_general") == 2
    assert "transpose[permutation=(1, 0)]" in text
    assert "select" in text  # ReLU as where(x <= 0, 0, x)
    assert "f32[8,5]" in text and "f32[7,5]" in text and "f32[7,3]" in text
    out = fg.eval_jaxpr(jaxpr, *fg.tree_util.tree_leaves(params), x)
    close(out[0] if isinstance(out, (list, tuple)) else out, model(ft.tensor(x)))


def test_dropout_in_train_mode_under_grad():
    ft.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 16), nn.Dropout(0.5), nn.Linear(16, 1))
    x, _ = data()
    params = params_of(model)

    def f(p):
        return fnp.sum(functional_call(model, p, (x,)))

    ft.manual_seed(42)
    g = fg.grad(f)(params)
    ft.manual_seed(42)
    model(ft.tensor(x)).sum().backward()
    for name, p in model.named_parameters():
        close(g[name], p.grad, rtol=1e-5, atol=1e-6)
    model.eval()
    e1 = functional_call(model, params, (x,))
    close(e1, model(ft.tensor(x)))


# ============================================== Tensors whose data are tracers


def test_tensor_operations_on_traced_data():
    def f(w, x):
        wt, xt = ft.Tensor(w), ft.Tensor(x)
        h = (xt @ wt.T).relu()
        h = h.reshape(-1).unsqueeze(0).flatten() * 2 + wt.sum()
        h = F.softmax(h.view(1, -1), dim=1)[0, :3]
        assert h.shape == (3,) and h.ndim == 1 and h.dtype == ft.float64
        return h.sum()._data  # the tracer inside

    w = np.linspace(-1, 1, 12).reshape(3, 4)
    x = np.linspace(0, 1, 8).reshape(2, 4)
    g = fg.grad(f)(w, x)
    assert g.shape == (3, 4) and np.all(np.isfinite(g))
    gv = fg.vmap(fg.grad(f), in_axes=(None, 0))(w, np.stack([x, 2 * x]))
    close(gv[0], g, rtol=1e-12)
    assert "dot_general" in str(fg.make_jaxpr(f)(w, x))


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_functional_call_matches_torch_func():
    from torch.func import functional_call as t_call
    from torch.func import grad as t_grad
    from torch.func import vmap as t_vmap

    model = mlp(act=nn.GELU())
    tmodel = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.GELU(), torch.nn.Linear(8, 3))
    params = params_of(model)
    x, y = data()

    def t_loss(p, xi, yi):
        return torch.nn.functional.cross_entropy(t_call(tmodel, p, (xi,)), yi)

    tp = {k: torch.tensor(v) for k, v in params.items()}
    t_grads = t_vmap(t_grad(t_loss), in_dims=(None, 0, 0))(tp, torch.tensor(x),
                                                           torch.tensor(y))
    grads = fg.vmap(fg.grad(loss_fn(model)), in_axes=(None, 0, 0))(params, x, y)
    for k in params:
        close(grads[k], t_grads[k].numpy(), rtol=1e-4, atol=1e-6)
