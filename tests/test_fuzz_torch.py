"""Differential fuzzing of the PyTorch face against real PyTorch 2.13.

Hypothesis draws a straight-line program over 1-2 float64 leaf tensors of small shapes:
2-6 ops from Tensor methods and torch functions (elementwise math kept away from kinks and
poles, binary ops against an earlier value of the same shape shifted by ``0.7 * y + 0.13``,
reductions over a drawn dim, softmax/log_softmax, shape ops, basic and advanced indexing,
``gather``/``index_select``, ``matmul``, ``where``/``masked_fill``, and in-place updates of
intermediate tensors). A program is plain data; :func:`run` builds it on either library.

Each program is checked for funcgrad.torch == torch: the output's values, dtype, shape and
``grad_fn`` name; the leaves' ``.grad`` after ``backward`` of a weighted sum; and the
second derivative (``autograd.grad`` with ``create_graph=True``, then a weighted sum of the
first gradient differentiated again). Skips without torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funcgrad.torch as ft

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-9, 1e-12
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

Op = tuple[Any, ...]

UNARY: dict[str, Callable[[Any, Any], Any]] = {  # name -> (t, x) -> y; t is the library
    "sin": lambda t, x: x.sin(),
    "cos": lambda t, x: t.cos(x),
    "tanh": lambda t, x: x.tanh(),
    "exp_tanh": lambda t, x: t.exp(t.tanh(x)),
    "log1p_abs": lambda t, x: x.abs().log1p(),
    "sqrt_abs1": lambda t, x: (x.abs() + 1.0).sqrt(),
    "sigmoid": lambda t, x: t.sigmoid(x),
    "square": lambda t, x: x.square(),
    "pow3": lambda t, x: x ** 3,
    "gelu": lambda t, x: t.nn.functional.gelu(x),
    "softplus": lambda t, x: t.nn.functional.softplus(x),
    "neg_mul": lambda t, x: -x * 2.5,
    "rsub": lambda t, x: 1.0 - x,
    "clamp": lambda t, x: x.clamp(-0.9, 0.8),
    "atan": lambda t, x: t.atan(x),
    "relu": lambda t, x: t.relu(x),
    "leaky_relu": lambda t, x: t.nn.functional.leaky_relu(x, 0.1),
    "elu": lambda t, x: t.nn.functional.elu(x),
    "silu": lambda t, x: t.nn.functional.silu(x),
    "mish": lambda t, x: t.nn.functional.mish(x),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x, -0.8, 0.9),
    "erf": lambda t, x: t.erf(x),
    "exp2_tanh": lambda t, x: t.exp2(t.tanh(x)),
    "reciprocal": lambda t, x: (x.abs() + 0.5).reciprocal(),
    "rsqrt": lambda t, x: (x.abs() + 0.5).rsqrt(),
    "log_softplus": lambda t, x: t.log(t.nn.functional.softplus(x)),
}

BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda t, x, y: x + y,
    "sub": lambda t, x, y: t.sub(x, y, alpha=0.5),
    "mul": lambda t, x, y: x * y,
    "div": lambda t, x, y: x / (y.abs() + 1.0),
    "maximum": lambda t, x, y: t.maximum(x, y),
    "atan2": lambda t, x, y: t.atan2(x, y.abs() + 0.5),
    "where": lambda t, x, y: t.where(x > y, x, y * 2.0),
    "lerp": lambda t, x, y: t.lerp(x, y, 0.3),
    "hypot": lambda t, x, y: t.hypot(x, y.abs() + 0.2),
}

REDUCE = ("sum", "mean", "amax", "logsumexp", "softmax", "log_softmax", "norm", "std",
          "cumsum", "prod", "max_values", "sort_values", "var0", "amin", "normalize")
SHAPE = ("reshape", "transpose", "unsqueeze_squeeze", "cat", "slice", "flip", "roll",
         "index_select", "gather", "advanced_index", "expand")
INPLACE = ("add_", "mul_", "masked_fill_", "setitem")


def _other(y: Any) -> Any:
    return 0.7 * y + 0.13


def apply(t: Any, op: Op, vals: list[Any]) -> Any:
    kind = op[0]
    if kind == "unary":
        return UNARY[op[1]](t, vals[op[2]])
    if kind == "binary":
        return BINARY[op[1]](t, vals[op[2]], _other(vals[op[3]]))
    if kind == "reduce":
        _, name, i, dim = op
        x = vals[i]
        if name == "softmax":
            return t.softmax(x, dim=dim)
        if name == "log_softmax":
            return t.nn.functional.log_softmax(x, dim=dim)
        if name == "norm":
            return t.linalg.vector_norm(x + 2.0, dim=dim)
        if name == "std":
            return x.std(dim=dim, keepdim=True)
        if name == "cumsum":
            return t.cumsum(x, dim=dim)
        if name == "prod":
            return (x * 0.5 + 1.0).prod(dim=dim)
        if name == "max_values":
            return x.max(dim=dim).values
        if name == "sort_values":
            return t.sort(x, dim=dim, descending=True).values
        if name == "var0":
            return x.var(dim=dim, correction=0)
        if name == "normalize":
            return t.nn.functional.normalize(x + 2.0, dim=dim)
        return getattr(x, name)(dim=dim) if name != "logsumexp" else t.logsumexp(x, dim=dim)
    if kind == "shape":
        _, name, i, arg = op
        x = vals[i]
        if name == "reshape":
            return x.reshape(-1)
        if name == "transpose":
            return x.transpose(0, -1)
        if name == "unsqueeze_squeeze":
            return x.unsqueeze(0).squeeze(0)
        if name == "cat":
            return t.cat([x, x * 2.0], dim=arg)
        if name == "slice":
            return x[..., 1:] if x.shape[-1] > 1 else x[..., :1]
        if name == "flip":
            return t.flip(x, dims=(arg,))
        if name == "roll":
            return t.roll(x, shifts=1, dims=arg)
        n = x.shape[-1] if name == "advanced_index" and arg != 0 else x.shape[arg]
        idx = t.tensor([n - 1, 0, n - 1][: max(1, min(3, n + 1))])
        if name == "index_select":
            return t.index_select(x, arg, idx)
        if name == "gather":
            shape = list(x.shape)
            shape[arg] = 2
            index = t.tensor(np.arange(int(np.prod(shape))).reshape(shape) % n)
            return t.gather(x, arg, index)
        if name == "advanced_index":
            return x[idx] if arg == 0 else x[..., idx]
        if name == "expand":
            return x.unsqueeze(0).expand(2, *x.shape) * 1.5
    if kind == "inplace":
        _, name, i = op
        y = vals[i] * 1.0  # a fresh intermediate: in-place on it is legal in both
        if name == "add_":
            y.add_(vals[i], alpha=0.5)
        elif name == "mul_":
            y.mul_(0.75)
        elif name == "masked_fill_":
            y.masked_fill_(vals[i] > 0.3, 0.25)
        else:
            y[..., 0] = 0.5
        return y
    if kind == "matmul":
        _, i = op
        x = vals[i]
        w = t.tensor(np.linspace(-1.0, 1.0, x.shape[-1] * 3).reshape(x.shape[-1], 3),
                     dtype=t.float64)
        return x @ w
    raise AssertionError(op)


def run(t: Any, prog: tuple[list[Op], list[np.ndarray]], order2: bool) -> dict[str, Any]:
    ops, inputs = prog
    leaves = [t.tensor(a, dtype=t.float64, requires_grad=True) for a in inputs]
    vals = list(leaves)
    for op in ops:
        vals.append(apply(t, op, vals))
    out = vals[-1]
    w = t.tensor(np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape)),
                 dtype=t.float64)
    result: dict[str, Any] = {"out": out.detach().numpy().copy(), "dtype": str(out.dtype),
                              "grad_fn": type(out.grad_fn).__name__ if out.grad_fn else None}
    if not order2:
        (out * w).sum().backward()
        result["grads"] = [None if x.grad is None else x.grad.numpy().copy() for x in leaves]
        return result
    firsts = t.autograd.grad((out * w).sum(), leaves, create_graph=True, allow_unused=True)
    used = [(x, g) for x, g in zip(leaves, firsts) if g is not None and g.requires_grad]
    if used:
        total = sum(((g * g).sum() for _, g in used), t.tensor(0.0, dtype=t.float64))
        seconds = t.autograd.grad(total, [x for x, _ in used], allow_unused=True)
        result["second"] = [None if s is None else s.numpy().copy() for s in seconds]
    return result


@st.composite
def programs(draw: Any) -> tuple[list[Op], list[np.ndarray]]:
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    n_in = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2 ** 31))
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-1.5, 1.5, shape) for _ in range(n_in)]
    shapes = [shape] * n_in
    ops: list[Op] = []
    for _ in range(draw(st.integers(2, 6))):
        i = draw(st.integers(0, len(shapes) - 1))
        sh = shapes[i]
        same = [j for j, s in enumerate(shapes) if s == sh]
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce", "shape",
                                     "inplace", "matmul"]))
        if kind == "unary":
            ops.append(("unary", draw(st.sampled_from(sorted(UNARY))), i))
            shapes.append(sh)
        elif kind == "binary":
            ops.append(("binary", draw(st.sampled_from(sorted(BINARY))), i,
                        draw(st.sampled_from(same))))
            shapes.append(sh)
        elif kind == "reduce" and len(sh) >= 1:
            name = draw(st.sampled_from(REDUCE))
            dim = draw(st.integers(-len(sh), len(sh) - 1))
            ops.append(("reduce", name, i, dim))
            if name in ("softmax", "log_softmax", "cumsum", "sort_values", "normalize"):
                shapes.append(sh)
            elif name == "std":
                if sh[dim] < 2:
                    ops.pop()
                    continue
                shapes.append(tuple(1 if k == dim % len(sh) else s for k, s in enumerate(sh)))
            else:
                shapes.append(tuple(s for k, s in enumerate(sh) if k != dim % len(sh)))
                if not shapes[-1]:
                    ops.pop()
                    shapes.pop()
                    continue
        elif kind == "shape":
            name = draw(st.sampled_from(SHAPE))
            arg = draw(st.integers(0, len(sh) - 1))
            ops.append(("shape", name, i, arg))
            arr = np.zeros(sh)
            shapes.append(tuple(_shape_of(name, arr, arg)))
        elif kind == "inplace":
            ops.append(("inplace", draw(st.sampled_from(INPLACE)), i))
            shapes.append(sh)
        else:
            ops.append(("matmul", i))
            shapes.append((*sh[:-1], 3))
    if not ops:
        ops.append(("unary", "sin", 0))
    return ops, inputs


def _shape_of(name: str, arr: np.ndarray, arg: int) -> tuple[int, ...]:
    n = arr.shape[-1] if name == "advanced_index" and arg != 0 else arr.shape[arg]
    k = max(1, min(3, n + 1))
    if name == "reshape":
        return (arr.size,)
    if name == "transpose":
        return np.swapaxes(arr, 0, -1).shape
    if name == "cat":
        return np.concatenate([arr, arr], axis=arg).shape
    if name == "slice":
        return arr[..., 1:].shape if arr.shape[-1] > 1 else arr[..., :1].shape
    if name in ("index_select", "advanced_index") and (name == "index_select" or arg == 0):
        return np.take(arr, np.zeros(k, int), axis=arg).shape
    if name == "advanced_index":
        return arr[..., np.zeros(k, int)].shape
    if name == "gather":
        s = list(arr.shape)
        s[arg] = 2
        return tuple(s)
    if name == "expand":
        return (2, *arr.shape)
    return arr.shape


def _close(a: Any, b: Any, what: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, what
        return
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=what)


@FUZZ
@given(prog=programs())
def test_first_order_matches_torch(prog: Any) -> None:
    ours, theirs = run(ft, prog, False), run(torch, prog, False)
    _close(ours["out"], theirs["out"], f"value of {prog[0]}")
    assert ours["dtype"] == theirs["dtype"], prog[0]
    assert ours["grad_fn"] == theirs["grad_fn"], prog[0]
    for g, h in zip(ours["grads"], theirs["grads"]):
        _close(g, h, f"grad of {prog[0]}")


@FUZZ
@given(prog=programs())
def test_second_order_matches_torch(prog: Any) -> None:
    ours, theirs = run(ft, prog, True), run(torch, prog, True)
    if ("second" in ours) != ("second" in theirs):
        # A first gradient that no longer depends on the inputs (a saturated clamp, a linear
        # map) still requires grad in PyTorch (its nodes saved the input); funcgrad's is a
        # constant. Both second derivatives are then zero, up to PyTorch's rounding (see
        # the sharp bits).
        present = ours.get("second", theirs.get("second"))
        assert all(s is None or np.allclose(s, 0.0, atol=ATOL) for s in present), prog[0]
        return
    for g, h in zip(ours.get("second", []), theirs.get("second", [])):
        if (g is None) != (h is None):  # an unused input: None on one side, zeros on the other
            assert np.allclose(g if h is None else h, 0.0, atol=ATOL), prog[0]
            continue
        _close(g, h, f"second derivative of {prog[0]}")
