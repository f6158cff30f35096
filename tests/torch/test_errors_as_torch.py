"""Inputs PyTorch refuses are refused with its error type and text (found by running
realistic programs on both): non-scalar ``torch.func.grad``, ``bmm`` sizes, class-index
target dtypes, non-bool masks, subtraction with bools."""

from __future__ import annotations

import pytest

import funcgrad.torch as ft

CASES = [
    "L.func.grad(lambda x: x ** 2)(L.tensor([1.0, 2.0]))",
    "L.func.grad(lambda x: ((x ** 2).sum(0, keepdim=True), x), has_aux=True)(L.tensor([1.0]))",
    "L.func.grad_and_value(lambda x: x * 2)(L.tensor([1.0, 2.0]))",
    "L.bmm(L.ones(2, 3, 4), L.ones(3, 4, 5))", "L.bmm(L.ones(2, 3, 4), L.ones(2, 5, 5))",
    "L.bmm(L.ones(2, 3), L.ones(2, 3, 4))", "L.bmm(L.ones(2, 3, 4), L.ones(2, 3))",
    "F.nll_loss(L.ones(2, 3), L.tensor([0, 1], dtype=L.int32))",
    "F.nll_loss(L.ones(2, 3), L.tensor([0, 1], dtype=L.int16))",
    "F.nll_loss(L.ones(2, 3), L.tensor([0, 1], dtype=L.uint8))",
    "F.cross_entropy(L.ones(2, 3), L.tensor([0, 1], dtype=L.int32))",
    "F.cross_entropy(L.ones(2, 3), L.tensor([0, 1], dtype=L.int8))",
    "L.ones(3).masked_fill(L.tensor([1, 0, 1]), 0.0)",
    "L.ones(3).masked_fill(L.tensor([1, 0, 1], dtype=L.uint8), 0.0)",
    "L.ones(3).masked_fill_(L.tensor([1.0, 0.0, 1.0]), 0.0)",
    "L.tensor([1]) - L.tensor([True])", "L.tensor([True]) - L.tensor([True])",
    "L.tensor([1.0]) - True", "L.tensor([True]) - 1", "L.sub(L.tensor([1]), L.tensor([True]))",
    "L.tensor([1]).sub_(L.tensor([True]))", "L.rsub(L.tensor([True]), L.tensor([1]))",
    "L.tensor([1]) - L.tensor([True]).float()",
    # class weights of the wrong size (they gave NaN or a broadcasting error)
    "F.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(2))",
    "F.nll_loss(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(2))",
    "F.cross_entropy(L.ones(2, 3), L.ones(2, 3) / 3, weight=L.ones(2))",
    "F.nll_loss(L.ones(2, 3), L.tensor([0, 1, 2]), weight=L.ones(2))",  # which check first
    "F.nll_loss(L.ones(2, 3), L.tensor([0, 5]), weight=L.ones(2))",
    "F.cross_entropy(L.ones(2, 3), L.tensor([0, 1, 2]), weight=L.ones(2))",
    "F.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), label_smoothing=-0.1)",
    "F.cross_entropy(L.ones(2, 3), L.tensor([0, 1]), label_smoothing=1.5)",
    "L.tensor(1.0).squeeze(0)", "L.tensor(1.0).squeeze(-1)", "L.tensor(1.0).squeeze(1)",
    "L.ones(2, 1).squeeze(2)", "L.zeros(4).index_copy_(0, L.tensor(1), L.tensor([5.0]))",
    "L.zeros(4).index_add(0, L.tensor(1), L.tensor([5.0]))",
    # factory sizes
    "L.zeros(2.0)", "L.zeros(2, 3.0)", "L.ones((2, 3.0))", "L.randn(2, 3.5)", "L.rand(2.0)",
    "L.full((2.0,), 1.0)", "L.ones((3.0,))", "L.zeros(2, -3)", "L.full((2, -1), 1.0)",
    "L.ones(4, -1)", "L.empty(-2)", "L.randn(4, -1)", "L.nn.Linear(8, 3.0)",
]


@pytest.mark.parametrize("expr", CASES)
def test_refused_as_torch(expr):
    torch = pytest.importorskip("torch", exc_type=ImportError)

    def run(L):
        try:
            out = eval(expr, {"L": L, "F": L.nn.functional})
            return ("ok", out.tolist() if hasattr(out, "tolist") else
                    type(out).__name__)
        except Exception as e:  # noqa: BLE001 - the error is the result compared
            return (type(e).__name__, str(e))

    assert run(ft) == run(torch)


def test_every_target_ignored_gives_nan_loss_and_zero_gradients_as_torch():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    for fn in ("cross_entropy", "nll_loss"):
        got = []
        for L in (ft, torch):
            x = L.tensor([[0.5, -1.0], [1.0, 2.0]], requires_grad=True)
            loss = getattr(L.nn.functional, fn)(x, L.tensor([-100, -100]))
            loss.backward()
            got.append((str(loss.item()), x.grad.tolist()))
        assert got[0] == got[1]
