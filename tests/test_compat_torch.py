"""Small PyTorch programs, written as PyTorch's tutorials and its users write them, run under
real PyTorch and under funcgrad's PyTorch face (``import funcgrad.torch as torch``).

Each program is a function ``prog(torch)`` of the torch module that prints its results; the
two printed outputs must be the same text, character for character: tensor reprs (number
formats, dtypes, ``requires_grad``, ``grad_fn=<...Backward0>``), module reprs, values and
error messages. Random streams differ between the two, so programs that build modules set
their weights by hand. Skipped without torch.

Known bugs are ``xfail(strict=True)`` with a reason starting "bug:".
"""

from __future__ import annotations

import contextlib
import difflib
import io
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import funcgrad.torch as ftorch

# ------------------------------------------------------------------ the programs


def creation_and_printing(torch: Any) -> None:
    """Tensors as a first tutorial makes them, and how they print."""
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    print(x_data, x_data.dtype, x_data.shape)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    print(x_np)
    x_ones = torch.ones_like(x_data)
    print(f"Ones Tensor: \n {x_ones} \n")
    x_rand = torch.zeros_like(x_data, dtype=torch.float)
    print(f"Zeros Tensor: \n {x_rand} \n")
    shape = (2, 3,)
    print(torch.ones(shape), torch.zeros(shape, dtype=torch.int32))
    print(torch.arange(5), torch.arange(0, 1, 0.25), torch.linspace(0, 1, steps=5))
    print(torch.full((2, 2), 7.0), torch.eye(3, dtype=torch.float64))
    print(torch.tensor(3.5), torch.tensor(3), torch.tensor(True), torch.tensor([]))
    print(torch.tensor([True, False, True]), torch.tensor([1, -20, 100], dtype=torch.int8))
    print(torch.tensor([1, 2], dtype=torch.int16), torch.tensor([1, 2], dtype=torch.uint8),
          torch.tensor([3], dtype=torch.int32), torch.tensor([[-100, 5], [3, 40]]))
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    print(t)
    print(f"Shape of tensor: {t.shape}")
    print(f"Datatype of tensor: {t.dtype}")
    print(f"Device tensor is stored on: {t.device}")
    print(t.size(), t.size(1), t.dim(), t.numel(), t.is_leaf, t.requires_grad)
    # Float formatting across magnitudes.
    print(torch.tensor([1.0, 2.5, -3.25]))
    print(torch.tensor([1e-5, 1.0]))
    print(torch.tensor([1.0, 2000.0]))
    print(torch.tensor([123456789.0, 1.0]))
    print(torch.tensor([0.1, 100.0, 1000.5]))
    print(torch.tensor([1.0, float("nan"), float("inf"), -float("inf")]))
    print(torch.tensor([0.0, -0.0, 2.0]))
    print(torch.tensor([1e10, 1e-10]), torch.tensor(1e-8), torch.tensor(12345.678))
    print(torch.tensor([[1.5, -2.0], [1e3, 0.001]]))
    print(torch.tensor([-1.5e-5, 3.0]), torch.tensor([1e8, 1.0]), torch.tensor([1e9]))
    print(torch.tensor([0.0, 0.0]), torch.tensor([float("nan")]), torch.tensor([1e-4, 1.0]))
    print(torch.tensor([123.456, 0.001]), torch.tensor([1000.0, 1.0]), torch.tensor([1000.5, 1.5]))
    print(torch.tensor([99999.0, 100.0]), torch.logspace(0, 3, 4), torch.arange(10) ** 3)
    print(torch.full((2,), 2, dtype=torch.long), torch.full((2,), True),
          torch.full((1,), 1.5).dtype, torch.full((1,), 3).dtype)
    print(torch.tensor([0.1, 0.2], dtype=torch.float64))
    print(torch.tensor([1, 2], dtype=torch.float16), torch.tensor([1.0], dtype=torch.bfloat16))
    print(torch.arange(30) * 1.5)
    print(torch.arange(30.0, requires_grad=True) * 1.5)
    print(torch.tensor([1e5, 1e-3], requires_grad=True), torch.tensor(2.0, requires_grad=True))
    print(torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True) * 2)
    print(torch.zeros(3, dtype=torch.bool), torch.zeros(0, 2, dtype=torch.float64))
    print(torch.ones(2, 2, 1, 2))
    print(torch.arange(24.0).reshape(2, 3, 4))
    print(torch.arange(2000))
    print(torch.arange(1200.0).reshape(40, 30) / 7)
    print(repr(torch.tensor([1.0, 2.0])), str(torch.tensor(2)))
    print(torch.tensor([[1, 2, 3]]).tolist(), torch.tensor(2.5).item(), torch.tensor(7).item())
    print(torch.empty(0, 3).shape, torch.zeros(2, 0))


def promotion_with_scalars(torch: Any) -> None:
    """Type promotion: tensors with Python scalars, 0-dim tensors and each other."""
    i = torch.tensor([1, 2, 3])
    f = torch.tensor([1.0, 2.0, 3.0])
    d = torch.tensor([1.0, 2.0], dtype=torch.float64)
    print(i + 1, i * 2, i + 1.5, i / 2, i // 2, i % 2, i ** 2, 2 ** i)
    print(f + 1, f * 2, f / 2, 1 - f, 2 / f, f ** 0.5)
    print(d * 2.5, d + torch.tensor(1.0), d[0] + f[0])
    print((i + True).dtype, (i * 1.0).dtype, (f + d[0]).dtype, (i + f).dtype)
    b = torch.tensor([True, False])
    print(b + b, b * 3, b & torch.tensor([True, True]), ~b)
    i32 = torch.tensor([1, 2], dtype=torch.int32)
    print(i32 + 5, i32 + torch.tensor(5), i32 * torch.tensor([5]), i32 + 5.0)
    u8 = torch.tensor([250, 3], dtype=torch.uint8)
    print(u8 + 10, u8 + torch.tensor([10]))
    h = torch.tensor([1.0, 2.0], dtype=torch.float16)
    print(h + 1.0, h * torch.tensor(2.0), h + torch.tensor([2.0]))
    print(i > 1, f == 2.0, f != i, (f > 1).sum(), (f >= 2).float().mean())
    print(torch.result_type(i, 1.0), torch.promote_types(torch.int32, torch.float16))
    print(torch.tensor(3) / torch.tensor(2), torch.tensor(-7) // 2, torch.tensor(-7) % 3)
    print(torch.tensor(-7.5) // 2, torch.tensor([-7.5, 7.5]) % 2)
    print(abs(torch.tensor([-1, 2])), -i, +f, float(f[1]), int(i[2]), bool(b[0]))


def indexing_and_inplace(torch: Any) -> None:
    """Indexing, slicing and in-place updates, including through views."""
    tensor = torch.ones(4, 4)
    print(f"First row: {tensor[0]}")
    print(f"First column: {tensor[:, 0]}")
    print(f"Last column: {tensor[..., -1]}")
    tensor[:, 1] = 0
    print(tensor)
    x = torch.arange(12).reshape(3, 4)
    print(x[1], x[1, 2], x[:, 1:3], x[::2], x[-1, -1], x[x > 5], x[[0, 2]], x[[0, 2], [1, 3]])
    print(x[None].shape, x[:, None, :].shape, x[1:2, ...].shape)
    x[0, 0] = 100
    x[x > 9] = -1
    x[2] = torch.tensor([7, 8, 9, 10])
    print(x)
    y = torch.zeros(2, 3)
    y.add_(1).mul_(3)
    print(y)
    y.add_(torch.tensor([1.0, 2.0, 3.0]), alpha=2)
    print(y)
    y.sub_(1).div_(2)
    print(y)
    y.clamp_(min=2.0, max=4.0)
    print(y)
    y.zero_()
    print(y)
    y.fill_(0.5)
    y += 1
    y *= torch.tensor([[1.0], [2.0]])
    print(y)
    base = torch.arange(6.0)
    view = base.view(2, 3)
    view[0, 1] = 42.0
    row = base[3:]
    row.mul_(10)
    print(base, view)
    m = torch.tensor([1.0, 2.0, 3.0])
    m.masked_fill_(m > 1.5, 0.0)
    print(m)
    z = torch.tensor([1, 2, 3])
    z.add_(1)
    z *= 2
    print(z, z.dtype)
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        w.add_(1.0)
        w[0] = 5.0
    print(w, w.is_leaf, w.grad_fn)
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    b.add_(1)
    print(b)
    b.mul_(3)
    print(b, b.is_leaf)
    b.sum().backward()
    print(a.grad)
    c = a * 1
    c[0] = 0.0
    c[1:] = c[1:] * 2
    (c * c).sum().backward()
    print(a.grad, a, c.sum())


def backward_and_grad(torch: Any) -> None:
    """loss.backward(), .grad, accumulation and zeroing, grad_fn in reprs."""
    x = torch.ones(5)
    y = torch.zeros(3)
    w = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [0.7, -0.8, 0.9],
                      [-1.0, 1.1, 1.2], [0.3, 0.2, 0.1]], requires_grad=True)
    b = torch.tensor([0.5, -0.5, 0.25], requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    print(f"Gradient function for z = {z.grad_fn.name()}")
    print(f"Gradient function for loss = {type(loss.grad_fn).__name__}")
    print(z, loss)
    loss.backward()
    print(w.grad)
    print(b.grad)
    a = torch.tensor([2.0, 3.0], requires_grad=True)
    q = 3 * a ** 3 - a ** 2
    print(q)
    q.backward(gradient=torch.tensor([1.0, 1.0]))
    print(a.grad, 9 * a ** 2 - 2 * a == a.grad)
    s = (a * a).sum()
    s.backward()
    print(a.grad)
    a.grad.zero_()
    (a.exp() * 2).mean().backward()
    print(a.grad)
    a.grad = None
    r = a.sin().prod()
    r.backward(retain_graph=True)
    r.backward()
    print(a.grad, a.grad_fn, a.is_leaf, r.is_leaf, r.requires_grad)
    c = torch.tensor(1.5, requires_grad=True)
    out = c * c * c
    out.backward()
    print(c.grad, out)


def grad_fn_names(torch: Any) -> None:
    """The grad_fn= every common operation shows in a repr."""
    x = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    v = torch.tensor([0.5, 2.0], requires_grad=True)
    F = torch.nn.functional
    results = [x + 1, x - v, x * 2, x / 3, x / v, x ** 2, -x, x.exp(), x.abs(), x.sum(),
               x.mean(), x.max(0).values, x.min(1)[0], x[0], x[:, 1:], x[[1, 0]], x.view(4),
               x.reshape(-1), x.t(), x.T, x.transpose(0, 1), x.permute(1, 0), x.unsqueeze(0),
               x.unsqueeze(0).squeeze(), x.flatten(), x @ x, v @ v, x @ v, torch.cat([x, x]),
               torch.stack([v, v]), x.relu(), x.sigmoid(), x.tanh(), x.softmax(-1),
               x.log_softmax(1), x.clone(), x.sqrt(), x.log(), x.pow(3), torch.where(x > 0, x, v),
               x.double(), x.expand(2, 2, 2), x.square(), x.sin(), x.cos(), x.prod(),
               F.mse_loss(x, x.detach() * 2), F.cross_entropy(x, torch.tensor([0, 1])),
               F.linear(x, x, v), F.relu(v), torch.maximum(x, v), x.amax(1)]
    for r in results:
        print(r)


def no_grad_and_detach(torch: Any) -> None:
    """Turning gradient tracking off: no_grad, detach, set_grad_enabled, requires_grad_."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    z = x * 2
    print(z.requires_grad)
    with torch.no_grad():
        z = x * 2
    print(z.requires_grad, z)
    z_det = (x * 2).detach()
    print(z_det.requires_grad, z_det, z_det.is_leaf)

    @torch.no_grad()
    def doubler(t: Any) -> Any:
        return t * 2

    print(doubler(x), torch.is_grad_enabled())
    with torch.no_grad():
        print(torch.is_grad_enabled())
        with torch.enable_grad():
            y = x * 3
        print(y.requires_grad, y)
    with torch.set_grad_enabled(False):
        print((x ** 2).requires_grad)
    torch.set_grad_enabled(False)
    print((x + 1).requires_grad)
    torch.set_grad_enabled(True)
    print((x + 1).requires_grad)
    a = torch.ones(2)
    print(a.requires_grad, a.requires_grad_(), a.requires_grad, (a * 2).grad_fn.name())
    d = x.detach()
    d[0] = 10.0
    print(x, d)
    print(x.data, x.data.requires_grad, x.detach().requires_grad, x.detach().is_leaf)
    with torch.inference_mode():
        print((x * x).requires_grad)


def retain_grad_and_hooks(torch: Any) -> None:
    """Gradients of intermediate tensors: retain_grad and register_hook."""
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y ** 2
    seen = []
    h = z.register_hook(lambda g: seen.append(g.clone()))
    x.register_hook(lambda g: print("x hook", g))
    out = z.sum()
    out.backward()
    print(x.grad, y.grad, y.retains_grad, x.retains_grad, seen)
    h.remove()
    x.grad = None
    w = x * 3
    w.register_hook(lambda g: g * 100)
    w.sum().backward()
    print(x.grad)
    x.grad = None
    u = x.exp()
    u.register_hook(lambda g: print("u hook", g) or None)
    u.retain_grad()
    (u * torch.tensor([1.0, 0.0, -1.0])).sum().backward()
    print(u.grad, x.grad)
    lin = torch.nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.5, -1.0]]))
        lin.bias.fill_(0.25)
    outputs = []
    handle = lin.register_forward_hook(lambda mod, inp, out: outputs.append(out.detach()))
    lin(torch.tensor([[1.0, 2.0]]))
    handle.remove()
    lin(torch.tensor([[3.0, 4.0]]))
    print(outputs)


def higher_order_grad(torch: Any) -> None:
    """torch.autograd.grad, create_graph and second derivatives."""
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    (dy,) = torch.autograd.grad(y, x, create_graph=True)
    print(dy)
    (d2y,) = torch.autograd.grad(dy, x)
    print(d2y)
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, -1.0], requires_grad=True)
    f = (a * b).sum() + (a ** 2 * b).sum()
    ga, gb = torch.autograd.grad(f, (a, b), create_graph=True)
    print(ga, gb)
    gnorm = ga.pow(2).sum()
    gnorm.backward()
    print(a.grad, b.grad)
    c = torch.tensor([0.5, -0.5], requires_grad=True)
    g = torch.autograd.grad(c.sin().sum(), [c, a], allow_unused=True)
    print(g)
    t = torch.tensor(0.3, requires_grad=True)
    val = torch.tanh(t)
    for _ in range(3):
        (val,) = torch.autograd.grad(val, t, create_graph=True)
        print(f"{val.item():.4f}", val.requires_grad)
    out = torch.autograd.grad(c * 2, c, grad_outputs=torch.tensor([1.0, 3.0]))
    print(out)
    p = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (p ** 4).sum()
    (grad_p,) = torch.autograd.grad(loss, p, create_graph=True)
    hvp = torch.autograd.grad(grad_p, p, grad_outputs=torch.tensor([1.0, 0.0]))
    print(grad_p, hvp)


def _fixed_linear(torch: Any, layer: Any, scale: float = 0.1) -> None:
    out_f, in_f = layer.weight.shape
    w = torch.arange(out_f * in_f, dtype=layer.weight.dtype).reshape(out_f, in_f)
    with torch.no_grad():
        layer.weight.copy_(torch.cos(w) * scale)
        if layer.bias is not None:
            layer.bias.copy_(torch.linspace(-scale, scale, out_f))


def nn_layers_and_losses(torch: Any) -> None:
    """nn.Linear, nn.Sequential, ReLU, MSELoss and CrossEntropyLoss with fixed weights."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    print(model)
    for layer in (model[0], model[2]):
        _fixed_linear(torch, layer)
    print(model[0].weight)
    print(model[2].bias)
    x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0], [0.0, 0.0, 1.0, -3.0]])
    out = model(x)
    print(out)
    mse = nn.MSELoss()
    loss = mse(out, torch.zeros(3, 2))
    print(loss)
    loss.backward()
    print(model[0].weight.grad)
    print(model[2].bias.grad)
    ce = nn.CrossEntropyLoss()
    target = torch.tensor([1, 0, 1])
    l2 = ce(out, target)
    print(l2, f"{l2.item():.6f}")
    print(nn.CrossEntropyLoss(reduction="none")(out, target))
    print(nn.MSELoss(reduction="sum")(out, torch.ones(3, 2)))
    model.zero_grad()
    print(model[0].weight.grad)
    for name, param in model.named_parameters():
        print(name, param.shape, param.requires_grad)
    print(sum(p.numel() for p in model.parameters()))
    sd = model.state_dict()
    print(list(sd.keys()))
    for k, v in sd.items():
        print(k, tuple(v.shape), v.dtype, v.requires_grad)
    print(nn.Linear(3, 5, bias=False), nn.ReLU(), nn.MSELoss(), nn.Softmax(dim=1))
    print(nn.Linear(2, 2).weight.shape, nn.Linear(2, 2).bias.grad)
    print(model.load_state_dict(sd))
    p = nn.Parameter(torch.tensor([1.0, 2.0]))
    print(p)
    print(isinstance(p, torch.Tensor), p.requires_grad)


def custom_module_training(torch: Any) -> None:
    """An nn.Module subclass, as the tutorials write one, trained with SGD for a few steps."""
    nn = torch.nn

    class NeuralNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(2 * 2, 8),
                nn.ReLU(),
                nn.Linear(8, 3),
            )

        def forward(self, x: Any) -> Any:
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork()
    print(model)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            _fixed_linear(torch, m, 0.5)
    X = torch.tensor([[[0.1, 0.2], [0.3, 0.4]], [[-1.0, 0.0], [1.0, 2.0]]])
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    print(logits, pred_probab, f"Predicted class: {y_pred}")
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    y = torch.tensor([2, 0])
    model.train()
    for batch in range(3):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"loss: {loss.item():>7f}  [{batch:>5d}]")
    model.eval()
    with torch.no_grad():
        pred = model(X)
        correct = (pred.argmax(1) == y).type(torch.float).sum().item()
    print(correct, model.training, model.linear_relu_stack[0].training)
    print([n for n, _ in model.named_children()], [k for k in model.state_dict()])


def optimizers(torch: Any) -> None:
    """optim.SGD (momentum, weight decay) and optim.Adam steps on fixed weights."""
    def run(make_opt: Callable[[list[Any]], Any], steps: int = 5) -> None:
        w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        b = torch.tensor([0.1, -0.1], requires_grad=True)
        opt = make_opt([w, b])
        x = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.0, 1.0]])
        t = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        for _ in range(steps):
            opt.zero_grad()
            loss = ((x @ w + b - t) ** 2).mean()
            loss.backward()
            opt.step()
        print(f"{loss.item():.4f}")
        print(w)
        print(b)

    optim = torch.optim
    run(lambda p: optim.SGD(p, lr=0.05))
    run(lambda p: optim.SGD(p, lr=0.05, momentum=0.9))
    run(lambda p: optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01))
    run(lambda p: optim.Adam(p, lr=0.1))
    run(lambda p: optim.Adam(p, lr=0.01, betas=(0.8, 0.99), weight_decay=0.1))
    run(lambda p: optim.AdamW(p, lr=0.01))
    run(lambda p: optim.SGD([{"params": p[:1]}, {"params": p[1:], "lr": 0.5}], lr=0.01))
    w = torch.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.5)
    (w * 3).sum().backward()
    opt.step()
    print(opt.param_groups[0]["lr"], opt.param_groups[0]["momentum"], len(opt.param_groups))
    print(sorted(opt.state_dict().keys()), opt.state_dict()["param_groups"][0]["params"])
    opt.zero_grad()
    print(w.grad)


def polynomial_fit(torch: Any) -> None:
    """'Learning PyTorch with Examples': fit y = sin(x) with a cubic, by hand and with nn."""
    dtype = torch.float
    x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
    y = torch.sin(x)
    a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
    b = torch.tensor(-0.2, dtype=dtype, requires_grad=True)
    c = torch.tensor(0.3, dtype=dtype, requires_grad=True)
    d = torch.tensor(-0.1, dtype=dtype, requires_grad=True)
    learning_rate = 1e-3
    for t in range(50):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).mean()
        if t % 10 == 9:
            print(t, f"{loss.item():.6f}")
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(f"Result: y = {a.item():.4f} + {b.item():.4f} x + {c.item():.4f} x^2 "
          f"+ {d.item():.4f} x^3")
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    print(xx.shape, xx.dtype)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[0.5, 0.2, -0.05]]))
        model[0].bias.fill_(0.3)
    loss_fn = torch.nn.MSELoss(reduction="mean")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for t in range(50):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 10 == 9:
            print(t, f"{loss.item():.6f}")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear_layer = model[0]
    print(f"Result: y = {linear_layer.bias.item():.4f} + {linear_layer.weight[:, 0].item():.4f} x"
          f" + {linear_layer.weight[:, 1].item():.4f} x^2 + "
          f"{linear_layer.weight[:, 2].item():.4f} x^3")


def func_transforms(torch: Any) -> None:
    """torch.func: grad, grad of grad, vmap, per-sample gradients, jacrev, functional_call."""
    from_func = torch.func
    x = torch.tensor(0.5)
    print(from_func.grad(torch.sin)(x), from_func.grad(from_func.grad(torch.sin))(x))

    def loss(w: Any, xb: Any, yb: Any) -> Any:
        return ((xb @ w - yb) ** 2).mean()

    w = torch.tensor([1.0, -1.0])
    xs = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    ys = torch.tensor([1.0, 0.0, 2.0])
    print(from_func.grad(loss)(w, xs, ys))
    print(from_func.grad(loss, argnums=(0, 1))(w, xs, ys))
    per_sample = from_func.vmap(from_func.grad(loss), in_dims=(None, 0, 0))
    print(per_sample(w, xs.unsqueeze(1), ys.unsqueeze(1)))
    print(from_func.vmap(torch.dot)(xs, xs), from_func.vmap(lambda r: r.sum() * 2)(xs))
    print(from_func.vmap(torch.outer, in_dims=(0, None))(xs, w).shape)
    value, g = from_func.grad_and_value(lambda t: (t ** 3).sum())(w)
    print(value, g)
    print(from_func.jacrev(lambda t: t.sin() * t)(w))
    print(from_func.hessian(lambda t: (t ** 3).sum())(w))
    model = torch.nn.Linear(2, 1)
    params = {"weight": torch.tensor([[2.0, 3.0]]), "bias": torch.tensor([1.0])}
    print(from_func.functional_call(model, params, (xs,)))


def reductions(torch: Any) -> None:
    """sum, mean, max(dim), argmax, softmax, log_softmax and friends."""
    x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    print(x.sum(), x.sum(0), x.sum(dim=1, keepdim=True), torch.sum(x, (0, 1)))
    print(x.mean(), x.mean(0), torch.mean(x, dim=-1, keepdim=True))
    print(x.max(), x.min(), x.argmax(), x.argmin(), torch.argmax(x, dim=1))
    values, indices = torch.max(x, 0)
    print(values, indices, x.max(dim=1).values, x.max(dim=1).indices)
    mins = x.min(1, keepdim=True)
    print(mins.values, mins.indices, mins[0], len(mins))
    print(torch.softmax(x, dim=1))
    print(torch.log_softmax(x, dim=0))
    print(torch.nn.functional.softmax(x, dim=-1).sum(-1))
    print(x.std(), x.var(0), x.prod(1), x.cumsum(1), x.norm(), torch.logsumexp(x, 1))
    s, order = x.sort(dim=1, descending=True)
    print(s, order, torch.topk(x, 2).values, torch.topk(x, 2).indices)
    print(x.amax(1), x.amin(1), x.amax(), x.all(), (x > 2).any(1), (x > 2).sum(),
          x.count_nonzero())
    i = torch.tensor([[1, 2], [3, 4]])
    print(i.sum(), i.sum().dtype, i.float().mean(), i.prod(), i.max(0)[0], i.cumsum(0))
    b = torch.tensor([True, False, True])
    print(b.sum(), b.all(), b.any())


def shape_ops(torch: Any) -> None:
    """reshape, view, permute, transpose, cat, stack, unsqueeze and friends."""
    x = torch.arange(6.0)
    print(x.reshape(2, 3), x.view(3, 2), x.view(-1, 2).shape, x.reshape(1, -1))
    y = x.reshape(2, 3)
    print(y.permute(1, 0), y.transpose(0, 1), y.t(), y.T, y.is_contiguous(),
          y.t().contiguous().is_contiguous(), y.t().reshape(6))
    print(torch.cat([y, y]), torch.cat((y, y), dim=1), torch.stack([x, x]).shape,
          torch.stack([y, y], dim=2).shape)
    print(x.unsqueeze(0).shape, x.unsqueeze(-1).shape, x[:, None].shape,
          torch.zeros(1, 3, 1).squeeze().shape, torch.zeros(1, 3, 1).squeeze(0).shape)
    z = torch.arange(24).reshape(2, 3, 4)
    print(z.permute(2, 0, 1).shape, z.flatten().shape, z.flatten(1).shape, z.view(6, -1).shape)
    print(z.transpose(-1, -2).shape, z.mT.shape, z.size(-1), len(z))
    print(torch.chunk(x, 3), x.split(4), torch.split(x, [1, 5]))
    print(x.unsqueeze(1).expand(6, 2).shape, y.repeat(2, 1).shape, x.flip(0), x.roll(1))
    print(torch.hstack([x, x]).shape, torch.vstack([x, x]).shape, y.unbind(0))
    a, b = y
    print(a, b)
    print([row.tolist() for row in y], list(x.shape), tuple(z.shape), z.shape == (2, 3, 4))
    print(torch.Size([2, 3]), z.shape[1:], z.shape.numel(), torch.zeros(z.shape[0], 2).shape)


def float64_program(torch: Any) -> None:
    """A program in double precision, via dtype= (and one in the default float32)."""
    x = torch.linspace(0, 1, 5, dtype=torch.float64)
    w = torch.tensor([0.5, -1.5], dtype=torch.float64, requires_grad=True)
    y = w[0] * x + w[1] * x ** 2
    loss = (y - torch.ones(5, dtype=torch.float64)).pow(2).sum()
    loss.backward()
    print(x, y, loss, w.grad, sep="\n")
    print(torch.exp(torch.tensor([1.0], dtype=torch.float64)), torch.tensor(1 / 3,
                                                                          dtype=torch.double))
    print(f"{loss.item():.15f}", x.dtype, (x + 1).dtype, (x.float() + 1).dtype, x.double().dtype)
    print(x.to(torch.float32), torch.zeros(2, dtype=torch.float64) + 1e-9)
    print(torch.tensor([1, 2]).to(torch.float64), torch.arange(3, dtype=torch.float64) / 3)
    lin = torch.nn.Linear(2, 1).double()
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0]]))
        lin.bias.fill_(0.5)
    out = lin(torch.tensor([[1.0, 1.0]], dtype=torch.float64))
    print(out, lin.weight.dtype)


def _attempt(f: Callable[[], Any]) -> None:
    """Run ``f`` and print what a user sees: the exception's type and message."""
    try:
        f()
    except Exception as e:  # noqa: BLE001 - printed, as a user would
        print(type(e).__name__, "|", e)
    else:
        print("no error")


def autograd_error_messages(torch: Any) -> None:
    """Common autograd and tensor mistakes: the exception type and PyTorch's message."""
    a = torch.ones(2, 3)
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    _attempt(lambda: a.view(4, 2))
    _attempt(lambda: torch.zeros(2).view(3))
    _attempt(lambda: a[5])
    _attempt(lambda: a[0, 5])
    _attempt(lambda: a.item())
    _attempt(lambda: bool(torch.ones(2)))
    _attempt(lambda: (x * 2).backward())
    _attempt(lambda: x.numpy())
    _attempt(lambda: x.add_(1))
    _attempt(lambda: torch.ones(2).sum().backward())
    _attempt(lambda: torch.tensor([1, 2], requires_grad=True))
    _attempt(lambda: torch.tensor([1, 2]).mean())
    _attempt(lambda: torch.ones(2).grad.zero_())

    def twice() -> None:
        y = (x * x).sum()
        y.backward()
        y.backward()

    def under_no_grad() -> None:
        with torch.no_grad():
            y = (x * 2).sum()
        y.backward()

    _attempt(twice)
    _attempt(under_no_grad)
    _attempt(lambda: torch.autograd.grad((x * 2).sum(), torch.ones(2, requires_grad=True)))
    _attempt(lambda: torch.nn.CrossEntropyLoss()(torch.ones(2, 3), torch.tensor([0, 3])))
    _attempt(lambda: torch.nn.MSELoss()(torch.ones(2), torch.ones(2, dtype=torch.int64)))
    _attempt(lambda: torch.optim.SGD([torch.ones(1, requires_grad=True)]))
    _attempt(lambda: torch.optim.SGD([torch.ones(1)], lr=0.1))
    _attempt(lambda: torch.optim.SGD([], lr=0.1))
    _attempt(lambda: torch.tensor([1, 2]) / 0)


def numpy_bridge(torch: Any) -> None:
    """'Bridge with NumPy': tensors and arrays that share their memory, and ones that copy."""
    t = torch.ones(5)
    print(f"t: {t}")
    n = t.numpy()
    print(f"n: {n}")
    t.add_(1)
    print(f"t: {t}")
    print(f"n: {n}")
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    print(f"t: {t}")
    print(f"n: {n}")
    copied = torch.tensor(n)
    n[0] = 100
    print(copied, t)
    print(torch.tensor(np.arange(3.0)), torch.as_tensor(np.float32([1, 2])),
          torch.tensor(np.int32(3)), torch.tensor([1.0, 2.0]).numpy().dtype,
          torch.arange(3).numpy())


def random_seeded(torch: Any) -> None:
    """Random tensors, printed only through what does not depend on PyTorch's stream."""
    torch.manual_seed(0)
    a = torch.rand(3)
    torch.manual_seed(0)
    b = torch.rand(3)
    print(torch.equal(a, b), a.shape, a.dtype, torch.randn(2, 3).shape,
          torch.randint(0, 10, (4,)).dtype)
    print(torch.randperm(6).sort().values, ((torch.rand(1000) >= 0) & (torch.rand(1000) < 1)).all())
    print(torch.randint(3, 4, (2, 2)), torch.randn(3, dtype=torch.float64).dtype,
          torch.rand_like(a).shape, torch.normal(torch.zeros(3), 0.0))
    drop = torch.nn.Dropout(p=0.5)
    drop.eval()
    print(drop(torch.ones(4)), drop, torch.nn.Dropout(0.0)(torch.ones(3)))


def module_containers(torch: Any) -> None:
    """ModuleList, parameters and buffers of a custom Module, module reprs, requires_grad_."""
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(2)])
            self.act = nn.Tanh()
            self.scale = nn.Parameter(torch.ones(1))
            self.register_buffer("steps", torch.zeros(1))

        def forward(self, x: Any) -> Any:
            for layer in self.layers:
                x = self.act(layer(x))
            return x * self.scale

    net = Net()
    print(net)
    print([n for n, _ in net.named_parameters()], list(net.state_dict().keys()),
          [n for n, _ in net.named_buffers()])
    print(nn.Sequential(nn.Flatten(), nn.Linear(4, 2), nn.GELU(), nn.Dropout(0.2), nn.Sigmoid(),
                        nn.LogSoftmax(dim=1), nn.Identity()))
    print(nn.L1Loss(), nn.NLLLoss(), nn.BCEWithLogitsLoss(), nn.Softmax(dim=-1),
          nn.CrossEntropyLoss(label_smoothing=0.1), nn.Flatten(0, 1), nn.GELU(approximate="tanh"))
    for layer in net.layers:
        with torch.no_grad():
            layer.weight.copy_(torch.tensor([[0.5, -0.5], [1.0, 2.0]]))
            layer.bias.fill_(0.1)
    x = torch.tensor([[1.0, -1.0]])
    y = net(x)
    print(y)
    y.sum().backward()
    print(net.scale.grad, net.layers[0].weight.grad)
    print(sum(p.numel() for p in net.parameters() if p.requires_grad))
    net.requires_grad_(False)
    print(net(x).requires_grad, net.layers[1], len(net.layers))
    print(net.training, net.eval().training, net.train().training)


def misc_tensor_api(torch: Any) -> None:
    """Devices, formatting, iteration, comparisons and dtype objects."""
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    print(x.to("cpu"), torch.device("cpu"), x.cpu().device, x.device.type)
    print(f"{x.sum()}", f"{x.sum():.2f}", format(x[0, 0].item(), ".3f"), x.sum().item() == 10)
    print(torch.matmul(torch.ones(2, 3, 4), torch.ones(4, 5)).shape,
          torch.bmm(torch.ones(2, 1, 3), torch.ones(2, 3, 1)))
    print(torch.allclose(x, x + 1e-9), torch.equal(x, x), torch.is_tensor(x), x.type(),
          x.long().type())
    print(torch.where(x > 2, x, torch.zeros(1)), torch.masked_select(x, x > 1))
    print(torch.tensor([1.5]) * torch.tensor([[2.0], [3.0]]))
    for row in x:
        print(row)
    print(list(torch.tensor([1, 2])), [float(v) for v in torch.tensor([0.5])], x.new_zeros(2),
          x.new_ones(1, 2), x.new_full((2,), 3))
    print(x.element_size(), x.nelement(), torch.numel(x), x.ndim, x.ndimension())
    print(x.float().dtype is torch.float32, x.dtype == torch.float, torch.float == torch.float32,
          x.is_floating_point(), torch.long, torch.int, repr(torch.float64), str(torch.int64))


# ---------------------------------------------------------------- programs that show bugs


def grad_fn_overload_names(torch: Any) -> None:
    """grad_fn names that carry PyTorch's overload number, or a name of their own."""
    x = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    print(1 - x, 2 / x, 2 ** x)
    print(x.sum(0), x.mean(1), x.max(), x.unsqueeze(0).squeeze(0), x.clamp(min=0))
    print(x[0].norm())
    y = x * 1
    y[0] = 0.0
    print(y)
    t = torch.tensor(0.3, requires_grad=True)
    (d,) = torch.autograd.grad(torch.tanh(t), t, create_graph=True)
    print(d)


def reduction_return_types(torch: Any) -> None:
    """Printing the (values, indices) pairs that max/min/sort/topk return."""
    x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    print(x.max(dim=1))
    print(torch.min(x, 1, keepdim=True))
    print(x.sort(dim=1, descending=True))
    print(torch.topk(x, 2))
    print(type(x.max(0)).__name__)


def amax_amin_dim0(torch: Any) -> None:
    """amax/amin over dimension 0."""
    x = torch.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    print(x.amax(0), x.amin(0), torch.amax(x, dim=0), x.amax(dim=(0, 1)))


def clone_copies(torch: Any) -> None:
    """clone() makes a copy: changing it leaves the original alone."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    e = x.detach().clone()
    e.add_(1)
    print(x, e)
    y = torch.tensor([1.0, 2.0])
    z = y.clone()
    z[0] = 10.0
    print(y, z)
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c = a.clone()
    c[0] = 0.0
    c[1:] = c[1:] * 2
    (c * c).sum().backward()
    print(a.grad, a, c.sum())


def contiguity(torch: Any) -> None:
    """Transposed tensors are not contiguous, and view() refuses them."""
    y = torch.arange(6.0).reshape(2, 3)
    print(y.is_contiguous(), y.t().is_contiguous(), y.t().contiguous().is_contiguous())
    _attempt(lambda: y.t().view(6))


def printing_edge_cases(torch: Any) -> None:
    """Empty tensors of a non-default dtype, and complex tensors."""
    print(torch.tensor([], dtype=torch.int64), torch.zeros(0, dtype=torch.float64))
    print(torch.tensor([1 + 2j, -0.5j]), torch.tensor([1.0, 2.0], dtype=torch.complex128))


def linspace_values(torch: Any) -> None:
    """linspace in float32 computes from both ends, as PyTorch's kernel does."""
    print(torch.linspace(-1, 1, 11))


def default_dtype_float64(torch: Any) -> None:
    """torch.set_default_dtype(torch.float64) and what it changes."""
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        print(torch.tensor([1.0, 2.5]), torch.tensor([1.0], dtype=torch.float32),
              torch.ones(2).dtype, torch.arange(3.0), torch.tensor(1) / 2)
        print(torch.nn.Linear(2, 2).weight.dtype)
    finally:
        torch.set_default_dtype(prev)
    print(torch.get_default_dtype())


def optimizer_repr(torch: Any) -> None:
    """print(optimizer)."""
    w = torch.tensor([1.0], requires_grad=True)
    print(torch.optim.SGD([w], lr=0.1, momentum=0.9))
    print(torch.optim.Adam([w]))


def shape_error_messages(torch: Any) -> None:
    """Shape mistakes: PyTorch raises RuntimeError/IndexError with its own messages."""
    a = torch.ones(2, 3)
    _attempt(lambda: a @ a)
    _attempt(lambda: torch.mm(a, a))
    _attempt(lambda: torch.nn.Linear(3, 2)(torch.ones(2, 4)))
    _attempt(lambda: a @ torch.ones(2))
    _attempt(lambda: torch.dot(torch.ones(3), torch.ones(4)))
    _attempt(lambda: a + torch.ones(4))
    _attempt(lambda: torch.cat([a, torch.ones(2, 2)]))
    _attempt(lambda: torch.stack([a, torch.ones(3, 2)]))
    _attempt(lambda: a.permute(0))
    _attempt(lambda: a.sum(2))
    _attempt(lambda: torch.arange(3).float().mean(dim=3))
    _attempt(lambda: a.unsqueeze(3))
    _attempt(lambda: torch.ones(3).reshape(2, -1))
    _attempt(lambda: torch.zeros(2, 2)[torch.tensor([True, False, True])])


def dtype_error_messages(torch: Any) -> None:
    """Mixing dtypes and converting values: PyTorch refuses, with these messages."""
    lin = torch.nn.Linear(3, 2)
    _attempt(lambda: lin(torch.ones(2, 3, dtype=torch.float64)))
    _attempt(lambda: lin(torch.tensor([[1, 2, 3]])))
    _attempt(lambda: torch.tensor([1.0]) @ torch.tensor([1.0], dtype=torch.float64))
    _attempt(lambda: torch.tensor([1, -20, 300], dtype=torch.int8))
    _attempt(lambda: torch.tensor([[1, 2], [3]]))
    _attempt(lambda: float(torch.ones(2)))
    _attempt(lambda: torch.tensor([1, 2]) // 0)
    _attempt(lambda: torch.optim.SGD(torch.ones(1, requires_grad=True), lr=0.1))


def loss_target_errors(torch: Any) -> None:
    """CrossEntropyLoss with targets of the wrong dtype or shape."""
    ce = torch.nn.CrossEntropyLoss()
    logits = torch.ones(2, 3)
    _attempt(lambda: ce(logits, torch.tensor([0.0, 1.0])))
    _attempt(lambda: ce(logits, torch.tensor([[0], [1]])))
    _attempt(lambda: ce(logits, torch.tensor([0, 1, 2])))


def inplace_version_error(torch: Any) -> None:
    """Changing in place a tensor that backward needs: PyTorch's version-counter message."""
    def modified(op: str) -> None:
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp() if op == "exp" else torch.sigmoid(x)
        y.add_(1)
        y.sum().backward()

    _attempt(lambda: modified("exp"))
    _attempt(lambda: modified("sigmoid"))


def rounding_shifts_and_where(torch: Any) -> None:
    """div's rounding modes (integers stay integers), shift operators, where with the
    condition alone, sort's stable flag, normal's keywords."""
    a = torch.tensor([[7.0, -7.0, 0.5], [-2.5, 9.0, -1.0]])
    b = torch.tensor([[2, -3, 4], [5, -6, 7]])
    for mode in ("floor", "trunc", None):
        print(torch.div(a, 2, rounding_mode=mode), a.div(-3, rounding_mode=mode))
        print(torch.div(b, 3, rounding_mode=mode) if mode else b.div(3))
        print(torch.div(-b, torch.tensor(4), rounding_mode=mode))
    c = b.clone()
    c.div_(2, rounding_mode="floor")
    print(c)
    _attempt(lambda: torch.div(a, 2, rounding_mode="round"))
    i = torch.tensor([1, 2, -8, 5])
    print(i << 1, i >> 1, 1 << torch.tensor([0, 3]), i << torch.tensor([2, 0, 1, 3]))
    print(torch.where(a > 0), torch.where(torch.tensor([0, 3, 0, 1])))
    print(torch.sort(torch.tensor([2, 1, 2, 1, 0]), stable=True))
    print(torch.argsort(torch.tensor([[3, 1, 3], [0, 0, 1]]), dim=1, stable=True,
                        descending=True))
    n = torch.normal(0.0, 1.0, (2, 3), dtype=torch.float64, requires_grad=True)
    print(n.shape, n.dtype, n.requires_grad)


def _bug(program: Callable[[Any], None], reason: str) -> Any:
    return pytest.param(program, marks=pytest.mark.xfail(strict=True, reason="bug: " + reason))


PROGRAMS: list[Any] = [
    creation_and_printing,
    promotion_with_scalars,
    indexing_and_inplace,
    numpy_bridge,
    backward_and_grad,
    grad_fn_names,
    no_grad_and_detach,
    retain_grad_and_hooks,
    higher_order_grad,
    nn_layers_and_losses,
    module_containers,
    custom_module_training,
    optimizers,
    polynomial_fit,
    func_transforms,
    reductions,
    shape_ops,
    float64_program,
    random_seeded,
    misc_tensor_api,
    autograd_error_messages,
    grad_fn_overload_names,
    reduction_return_types,
    amax_amin_dim0,
    clone_copies,
    contiguity,
    printing_edge_cases,
    linspace_values,
    default_dtype_float64,
    optimizer_repr,
    shape_error_messages,
    dtype_error_messages,
    loss_target_errors,
    inplace_version_error,
    rounding_shifts_and_where,
]

# ------------------------------------------------------------------ comparing


def _run(program: Callable[[Any], None], torch_module: Any) -> str:
    buf = io.StringIO()
    prev = torch_module.is_grad_enabled()
    try:
        with contextlib.redirect_stdout(buf):
            program(torch_module)
    finally:
        torch_module.set_grad_enabled(prev)
    return buf.getvalue()


PARAMS = [pytest.param(*p.values, id=p.values[0].__name__, marks=p.marks)
          if hasattr(p, "values") else pytest.param(p, id=p.__name__) for p in PROGRAMS]
PASSING = [p for p in PROGRAMS if not hasattr(p, "values")]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("program", PARAMS)
def test_program_prints_as_pytorch(program: Callable[[Any], None]) -> None:
    torch = pytest.importorskip("torch", exc_type=ImportError)
    want = _run(program, torch)
    got = _run(program, ftorch)
    if got != want:
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "pytorch", "funcgrad",
                                    lineterm="", n=1)
        pytest.fail("printed output differs:\n" + "\n".join(diff), pytrace=False)


def test_at_least_fifteen_passing_programs() -> None:
    assert len(PASSING) >= 15
