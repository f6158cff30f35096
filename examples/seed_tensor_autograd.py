"""Autograd with Tensors, the PyTorch way: leaves, non-leaves, .grad and backward().

The same lesson runs unchanged on PyTorch (replace the import by
``import torch as fg``) and prints the same text; tests/test_examples_facade.py
checks that line by line.

Run: python examples/seed_tensor_autograd.py
"""

import funcgrad as fg

# A leaf tensor that asks for gradients: operations on it are recorded.
x = fg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
print("x =", x)
print("x is a leaf:", x.is_leaf, "| requires grad:", x.requires_grad)

# y is computed from x, so it is not a leaf: it knows the operation that made it.
y = x * 2
print("y =", y)
print("y is a leaf:", y.is_leaf, "| made by:", y.grad_fn.name())

# b = mean(y * y + 3) is a scalar, so b.backward() needs no argument.
z = y * y + 3
b = z.mean()
print("z =", z)
print("b =", b)

b.backward()
# db/dx = d/dx mean(4 x^2 + 3) = 8 x / 4 = 2 x
print("x.grad =", x.grad)
# Only leaves keep .grad; y's gradient was used and dropped.
print("y.grad is None:", y.grad is None)

# Gradients accumulate: a second backward adds to x.grad ...
(x * x).sum().backward()
print("after a second backward, x.grad =", x.grad)
# ... until they are reset.
x.grad = None

# Ask a non-leaf to keep its gradient with retain_grad().
y = x * 2
y.retain_grad()
c = (y ** 2).sum() / 8
c.backward()
print("y.grad =", y.grad)
print("x.grad =", x.grad)

# Operations under no_grad() are not recorded; detach() cuts a tensor from the graph.
with fg.no_grad():
    w = x * 2
print("under no_grad:", w.requires_grad, "| detached:", x.detach().requires_grad)

# A nonlinear example: d/dx sum(tanh(x) * x^3) = (1 - tanh(x)^2) x^3 + 3 x^2 tanh(x)
v = fg.tensor([0.5, -1.0, 2.0], requires_grad=True)
(fg.tanh(v) * v ** 3).sum().backward()
print("v.grad =", v.grad)

# The gradient of a vector output needs the vector to multiply the Jacobian with.
s = v * fg.tensor([1.0, 10.0, 100.0])
s.backward(fg.tensor([1.0, 1.0, 1.0]))
print("v.grad =", v.grad)
print("item:", b.item(), "| shape:", tuple(x.shape), "| float32:", x.dtype == fg.float32)
