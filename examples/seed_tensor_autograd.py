"""The seed lesson: tensors and autograd, the PyTorch way, on funcgrad.

This file is a PyTorch program: replace the first import by ``import torch`` and
PyTorch 2.13 runs it and prints the same text, character for character
(tests/test_examples_facade.py checks both against tests/data/seed_lesson.txt).

Run: python examples/seed_tensor_autograd.py
"""

import funcgrad.torch as torch

torch.manual_seed(0)

# Tensors, their dtypes and shapes; arithmetic, matrix products, transposes, views.
a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
b = torch.ones(2, 2)
print("a + b =", a + b)
print("a @ b =", a @ b)
print("a.T =", a.T)
print("a.view(4) =", a.view(4))
print("a.reshape(1, 4) =", a.reshape(1, 4))
print("dtype:", a.dtype, "| shape:", a.shape, "| ints:", torch.tensor([1, 2]).dtype)
print("activations:", torch.relu(a - 2.5), torch.sigmoid(torch.tensor([0.0])),
      torch.tanh(torch.tensor([0.5])))
print("softmax:", torch.softmax(torch.tensor([1.0, 2.0, 3.0]), dim=0))

# A leaf tensor that asks for gradients: operations on it are recorded.
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
print("x =", x)
print("x is a leaf:", x.is_leaf, "| requires grad:", x.requires_grad)

# y is computed from x, so it is not a leaf: it knows the operation that made it.
y = x @ x.T
print("y =", y)
print("y is a leaf:", y.is_leaf, "| made by:", y.grad_fn.name())

# b = mean(relu(y) * 3) is a scalar, so b.backward() needs no argument.
z = torch.relu(y) * 3
loss = z.mean()
print("z =", z)
print("loss =", loss)
loss.backward()
print("x.grad =", x.grad)
# Only leaves keep .grad; y's gradient was used and dropped.
print("y.grad is None:", y.grad is None)

# Gradients accumulate: a second backward adds to x.grad ... until they are reset.
(x * x).sum().backward()
print("after a second backward, x.grad =", x.grad)
x.grad = None

# Ask a non-leaf to keep its gradient with retain_grad().
y = x * 2
y.retain_grad()
c = (y ** 2).sum() / 8
c.backward()
print("y.grad =", y.grad)
print("x.grad =", x.grad)

# Operations under no_grad() are not recorded; detach() cuts a tensor from the graph.
with torch.no_grad():
    w = x * 2
print("under no_grad:", w.requires_grad, "| detached:", x.detach().requires_grad)
print("formatted: {:.4f}".format(loss.item()), f"{loss:.2f}")

# A nonlinear example and a vector output's backward (a vector-Jacobian product).
v = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
(torch.tanh(v) * v ** 3).sum().backward()
print("v.grad =", v.grad)
s = v * torch.tensor([1.0, 10.0, 100.0])
s.backward(torch.tensor([1.0, 1.0, 1.0]))
print("v.grad =", v.grad)

# Training: a linear model fitted by SGD, then by Adam; the device is the GPU if there is one.
device = "cuda" if torch.cuda.is_available() else "cpu"
inputs = torch.tensor([[0.0], [1.0], [2.0], [3.0]], device=device)
targets = 2 * inputs + 1
for name, make in (("SGD", lambda p: torch.optim.SGD(p, lr=0.05)),
                   ("Adam", lambda p: torch.optim.Adam(p, lr=0.1))):
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1).to(device)
    opt = make(model.parameters())
    for _ in range(1000):
        opt.zero_grad()
        err = torch.nn.functional.mse_loss(model(inputs), targets)
        err.backward()
        opt.step()
    print(f"{name}: loss {err.item():.4f} | weight {model.weight.item():.3f} | bias "
          f"{model.bias.item():.3f} | on {model.weight.device.type}")
print("item:", loss.item(), "| float32:", x.dtype == torch.float32)
